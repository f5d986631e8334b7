/* ringctl check: the reference cluster's pre-launch checklist as commands. Each
 * compares what a launcher will use (a rank order, a rendezvous address)
 * with the last survey, and says which figures were measured (when) and
 * which were computed from them. Exit: CHECK_OK, CHECK_PROBLEMS,
 * CHECK_CANNOT (could not check). */
#ifndef RING_CHECK_H
#define RING_CHECK_H

#include <netinet/in.h>
#include <stddef.h>

#include "check_hosts.h"
#include "ring.pb-c.h"
#include "writer.h"

#define CHECK_OK 0
#define CHECK_PROBLEMS 1
#define CHECK_CANNOT 2

/* The reference cluster's two failures, as the launchers print them. */
#define CHECK_RANKS_ERROR "ibv_modify_qp failed with 110 Connection timed out"
/* The rendezvous failure with this cluster's counts: joined, world size
 * (the reference cluster printed 3/4, docs/REFERENCE.md). */
#define CHECK_RDZV_ERROR_FMT                                                   \
	"Timed out waiting for clients, %zu/%zu clients joined"

enum check_addr_kind {
	CHECK_ADDR_UNKNOWN, /* no node ringd knows has it */
	CHECK_ADDR_MGMT,
	CHECK_ADDR_DATA,
	CHECK_ADDR_NAME, /* a node's name that gave no known address here */
};

/* Where a host lands. Pointers point into the status reply. */
struct check_addr {
	enum check_addr_kind kind;
	const char *node;      /* whose address, or the node named */
	const char *peer;      /* data: the other end of its cable */
	const char *interface; /* data: node's interface on that cable */
	char address[INET6_ADDRSTRLEN];
	int resolved; /* check_resolve: addresses the host gave here, 0 none */
};

/* A numeric address against the nodes' management addresses and the
 * surveyed cables' data addresses. */
void check_match_address(const Ring__StatusReply *st, const char *addr,
			 struct check_addr *out);
/* host as a launcher resolves it (getaddrinfo on this host, so
 * /etc/hosts applies), matched with check_match_address; a node name
 * that resolves to nothing known maps to that node (CHECK_ADDR_NAME).
 * how gets the addresses it gave, space-separated ("" when it does not
 * resolve: out->resolved is 0). 0, or -1 with out->kind
 * CHECK_ADDR_UNKNOWN. */
int check_resolve(const Ring__StatusReply *st, const char *host,
		  struct check_addr *out, char *how, size_t howlen);
/* The index of an edge (a cable) of t between a and b, or -1. */
int check_edge(const Ring__Topology *t, const char *a, const char *b);
/* nodes[0..n-1] (names, in launcher order) into the measured order:
 * corrected[k] is the index in nodes of the k-th rank, rank 0 kept,
 * the direction the file's second host suggests. 0, or -1 (err) when a
 * node is not in t's order or appears twice. */
int check_ranks_corrected(const Ring__Topology *t, const char *const *nodes,
			  size_t n, size_t *corrected, char *err,
			  size_t errlen);
/* The checks, rendered in fmt on out; CHECK_OK, CHECK_PROBLEMS or
 * CHECK_CANNOT (why on stderr, nothing on out). */
int check_ranks_report(FILE *out, enum writer_format fmt,
		       const struct check_hosts *h, const char *name,
		       const Ring__StatusReply *st);
/* rr: rank 0's host name as every node resolves it (ResolveReply), or
 * NULL to check it on this host only. */
int check_rendezvous_report(FILE *out, enum writer_format fmt, const char *arg,
			    const Ring__StatusReply *st,
			    const Ring__ResolveReply *rr);

#endif
