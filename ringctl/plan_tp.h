/* `ringctl plan --layers L --token-ms T [--allreduce-bytes B]`: the
 * tensor-parallel tax. Each layer of a tensor-parallel model ends in one
 * all-reduce of B bytes across the ranks; per token that is L all-reduces,
 * and their time against the measured time per token T is the share that
 * communication takes. The per-layer figure is measured: the
 * coordinator's last all-reduce over the same number of ranks (ringctl
 * test allreduce) at the size nearest B, else the slowest ring edge's
 * latency at the size nearest B from the last survey (a lower bound: a
 * ring all-reduce takes 2(n-1) steps). The reference cluster (docs/REFERENCE.md): 40 x 36.4 us =
 * 1.456 ms per token = 8.2% of 17.76 ms. */
#ifndef RING_CTL_PLAN_TP_H
#define RING_CTL_PLAN_TP_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "ring.pb-c.h"
#include "writer.h"

#define PLAN_TP_LAYERS_MAX 100000
/* An hour per token: past any model. */
#define PLAN_TP_TOKEN_MS_MAX 3600000.0
/* Without --allreduce-bytes: the reference cluster's one layer's all-reduce,
 * 10 KiB (ringd's latency ladder measures 10240 bytes by default). */
#define PLAN_TP_BYTES_DEFAULT 10240ull
#define PLAN_TP_BYTES_MAX (16ull << 30)
/* An all-reduce figure is used when its size is within this factor of B;
 * a run of 1 MiB and up (the default ladder) says little about 10 KiB,
 * where fixed overhead dominates, so the edges' latency is used then. */
#define PLAN_TP_NEAR_RATIO 2.0
#define PLAN_TP_MAX_FIGURES (PLAN_MAX_NODES + 1)

/* --layers, --token-ms, --allreduce-bytes of o (plan_cmd_parse found
 * them): 0, or -1 with a one-line reason in err. */
int plan_tp_parse(struct plan_opts *o, char *err, size_t len);

/* The index in v of the size nearest want by ratio (10K is nearer 20K
 * than 4K), a tie to the larger; -1 when n is 0. *ratio: the larger of
 * the two over the smaller (>= 1). */
int plan_tp_nearest(const uint64_t *v, size_t n, uint64_t want, double *ratio);

enum plan_tp_kind { PLAN_TP_ALLREDUCE = 1, PLAN_TP_LATENCY };

/* One measured figure that could stand for a layer's all-reduce. */
struct plan_tp_figure {
	enum plan_tp_kind kind;
	const Ring__AllreduceReport *ar; /* PLAN_TP_ALLREDUCE */
	const Ring__Edge *edge;		 /* PLAN_TP_LATENCY */
	int rdma;			 /* the edge's RDMA WRITE ladder */
	uint64_t size;			 /* measured size nearest B */
	double ratio;			 /* that size against B, >= 1 */
	double us;			 /* measured: all-reduce time, or p50 */
	uint64_t measured_ms;		 /* when */
	const char *not_used;		 /* why not, or NULL (the one used) */
};

struct plan_tp_result {
	const char *nodes[PLAN_MAX_NODES]; /* the ranks, in order */
	size_t n_nodes;
	int from; /* PLAN_FROM_NODES or PLAN_FROM_RING */
	struct plan_tp_figure fig[PLAN_TP_MAX_FIGURES];
	size_t n_fig;
	int used;			/* index in fig, -1: no figure */
	double per_token_ms, share_pct; /* computed */
	/* With the edges' latency: the steps between consecutive ranks
	 * (and the closing one) that have no figure, "n3-n1, ..." */
	size_t n_missing;
	char missing[512];
};

/* The ranks (--nodes, else the published order) and the figures, and
 * which one is used: the all-reduce over as many ranks when its size is
 * within PLAN_TP_NEAR_RATIO of B, else the slowest edge's latency, else
 * the all-reduce at any size. reports: the coordinator's last runs (NULL:
 * none). 0, or -1 with why (no rank order, a --nodes name the survey does
 * not know): nothing could be checked. */
int plan_tp_compute(const Ring__Topology *t,
		    const Ring__AllreduceLastReply *reports,
		    const struct plan_opts *o, struct plan_tp_result *res,
		    char *err, size_t len);

/* The tax into w; the exit status: 0 computed, 1 no measured figure, or
 * the edges' latency is used and a step between ranks has none. */
int plan_tp_render(struct writer *w, const Ring__Topology *t,
		   const struct plan_opts *o, const struct plan_tp_result *res,
		   uint64_t now_ms);

/* Ask the coordinator for the topology and its last all-reduce results;
 * print. 2 when it cannot answer or there is no survey. */
int plan_tp_run(const char *sock, int timeout_ms, enum writer_format fmt,
		const struct plan_opts *o);

#endif
