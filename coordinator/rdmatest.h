/* RDMA (verbs) tests between two agents. No agent listens for RDMA: the
 * coordinator carries each side's endpoint (QP numbers, GID, rkey) to the
 * other over the authenticated sessions. B (target) is set up first, then
 * A (requester); their GIDs must agree; B is connected, then A, which runs
 * the test; when A's result is in, B is stopped. Whatever fails, every
 * side already set up is stopped, so no agent keeps QPs or pinned memory.
 * Also the pure rules that the survey, the control socket and ringctl
 * share: which port of a node can run RDMA, GID agreement. */
#ifndef RING_RDMATEST_H
#define RING_RDMATEST_H

#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "ring.pb-c.h"

/* The Hello capability of an agent that runs RDMA tests (the agent says
 * "rdma_test", like "tcp_test"; "rdma-test", the name first planned, is
 * accepted too). */
#define RDMATEST_CAP "rdma_test"

struct node;

/* The RDMA device with an ACTIVE port whose netdev is ifname. 0 with its
 * name in dev, or -1 with the reason in why ("no RDMA device", "mlx5_0
 * port 1 is DOWN"). */
int rdmatest_active_port(const Ring__Inventory *inv, const char *ifname,
			 char *dev, size_t dev_len, char *why, size_t why_len);
/* The first data (non-management) interface that has an active RDMA port.
 * 0, or -1 when there is none. */
int rdmatest_first_port(const Ring__Inventory *inv, char *ifname, size_t if_len,
			char *dev, size_t dev_len);
/* 1 if the node is up and its agent announced RDMATEST_CAP. */
int rdmatest_node_capable(const struct node *n);

/* Do the two endpoints' GIDs agree? Types must match; on ring neighbours
 * (adjacent 1) IPv4-mapped GIDs must share a subnet (a cable's two ports
 * do, so a difference means a wrong GID pick). A pair that is not
 * adjacent runs anyway: its failure is the diagnosis. 0, or -1 with the
 * operator's message in why. */
int rdmatest_gid_check(const char *a, const Ring__RdmaEndpoint *ea,
		       const char *b, const Ring__RdmaEndpoint *eb,
		       int adjacent, char *why, size_t why_len);

struct rdmatest_spec {
	const char *a, *a_if, *a_dev; /* requester; a_dev "" = agent picks */
	const char *b, *b_if, *b_dev; /* target (and responder) */
	int adjacent;		      /* 1 neighbours, 0 not, -1 unknown */
	const Ring__TestParams *params;
};

struct rdmatest;
/* The assembled report (valid during the call); the test is freed after
 * the callback returns. */
typedef void (*rdmatest_cb)(const Ring__TestReport *rep, void *arg);

/* Start: B's RdmaSetup is sent now. NULL with errno (ENOTCONN when B is
 * not up). */
struct rdmatest *rdmatest_start(const struct call_iface *ci,
				const struct rdmatest_spec *s, rdmatest_cb cb,
				void *arg);
/* Stop every side that was set up, forget the test; no callback. */
void rdmatest_cancel(struct rdmatest *t);

#endif
