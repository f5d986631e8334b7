/* The ring all-reduce (ringctl test allreduce), driven from the
 * coordinator: the plan (which rank talks to which over which cable,
 * from the last survey's edges) and the job (AllreduceSetup to every rank,
 * their endpoints, START with each rank's next endpoint, the results, a
 * STOP to every rank still running when one fails). Agents are reached
 * through the call interface only.
 *
 * Only neighbours can be ranks next to each other: a sub-ring of n nodes
 * of a ring of N > n closes with a step from its last node to its first,
 * which no cable joins unless n = 2 (one cable, used both ways). So
 * --nodes takes 2 neighbours or the whole ring; the reference cluster (docs/REFERENCE.md) compared
 * exactly those (2 nodes over one cable against the 4-node ring). */
#ifndef RING_COORD_ALLREDUCE_H
#define RING_COORD_ALLREDUCE_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#include "arlimits.h"
#include "call.h"
#include "ring.pb-c.h"

struct allreduce_coord_rank {
	char node[64];
	char listen_if[IFNAMSIZ], listen_addr[64]; /* facing the previous */
	char prev_addr[64];			   /* the previous's end */
	char next_if[IFNAMSIZ];			   /* facing the next */
	/* RDMA WRITE on the step from the previous rank / to the next one:
	 * the RDMA device and GID index the survey used on that side. */
	int prev_rdma, next_rdma;
	char prev_dev[64], next_dev[64];
	int prev_gid, next_gid; /* -1: the agent chooses */
};

struct allreduce_coord_plan {
	unsigned n;
	struct allreduce_coord_rank ranks[ARLIMITS_RANKS_MAX];
	const char *source; /* "published", "nodes", "order" */
	uint64_t sizes[ARLIMITS_SIZES_MAX];
	unsigned n_sizes;
	uint32_t iterations, warmup, step_ms;
	const char *transport; /* "auto", "tcp", "rdma" */
};

/* The plan for req over the last survey's topology t. 0; or -1 with the
 * reason and *not_adjacent set when a step joins two nodes that no
 * published edge joins (the rank-order failure: every such step named). */
int allreduce_coord_plan(const Ring__Topology *t,
			 const Ring__AllreduceRequest *req,
			 struct allreduce_coord_plan *p, int *not_adjacent,
			 char *why, size_t len);

/* How the plan's steps move their chunks: steps[i] (step i -> i+1) gets
 * "rdma" or "tcp"; the whole is "rdma", "tcp" or "rdma+tcp". */
const char *allreduce_coord_method(const struct allreduce_coord_plan *p,
				   char **steps);

/* busbw from algbw for n ranks: nccl-tests' definition for all-reduce
 * (doc/PERFORMANCE.md there): busbw = algbw * 2(n-1)/n. */
double allreduce_coord_busbw(double algbw, unsigned n);

/* cur against old, two successful runs over different numbers of ranks:
 * the bus bandwidth at the largest size both measured, and the ratio
 * (more ranks over fewer); within 10% the reference cluster's conclusion that a
 * longer ring adds memory, not all-reduce bandwidth. 0 with the text, or
 * -1 when they cannot be compared. */
int allreduce_coord_compare(const Ring__AllreduceReport *old,
			    const Ring__AllreduceReport *cur, char *out,
			    size_t len);

struct allreduce_coord;
/* The report (valid during the call); the job is freed after. */
typedef void (*allreduce_coord_cb)(const Ring__AllreduceReport *rep, void *arg);
/* Setups go out now. NULL with errno (ENOTCONN: a rank's node is not up). */
struct allreduce_coord *
allreduce_coord_start(const struct call_iface *ci,
		      const struct allreduce_coord_plan *p,
		      allreduce_coord_cb cb, void *arg);
/* STOP every rank still running, forget the job; no callback. */
void allreduce_coord_cancel(struct allreduce_coord *j);
/* The report of a plan that never ran (a refused order), for the same
 * output as a run's. */
void allreduce_coord_refused(const struct allreduce_coord_plan *p,
			     const char *error, Ring__ErrorCode code,
			     allreduce_coord_cb cb, void *arg);

#endif
