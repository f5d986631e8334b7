/* `ringctl plan`: does a model fit in the ring's memory? Each node's
 * usable memory is its MemAvailable (measured by its agent, received with
 * its latest heartbeat) less a per-node reservation; the ring's total, the
 * nodes needed and the gap or headroom are computed from those. Units are
 * spelled out everywhere: GB = 10^9 bytes, GiB = 2^30 bytes. */
#ifndef RING_CTL_PLAN_H
#define RING_CTL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "plan_common.h"
#include "ring.pb-c.h"
#include "writer.h"

#define PLAN_MAX_NODES 256
struct plan_opts {
	uint64_t model_bytes;	   /* given, or params x bytes per param */
	uint64_t params;	   /* 0: --model-bytes was given */
	uint64_t bpp_num, bpp_den; /* bytes per parameter = num / den */
	int bpp_default;	   /* no --bytes-per-param: PLAN_BPP_DEFAULT */
	const char *model_text, *params_text, *bpp_text, *reserve_text;
	uint64_t reserve_bytes;		   /* per node; 0 by default */
	const char *nodes[PLAN_MAX_NODES]; /* --nodes, in order */
	size_t n_nodes;
	char nodes_buf[4096]; /* the --nodes words, split at commas */
	/* --weights PATH: shard or not (plan_weights.h) instead of a model
	 * size; --max-bytes SIZE bounds each node's read (0: the agents'
	 * default, 4 GiB). */
	const char *weights;
	const char *max_bytes_text;
	uint64_t max_bytes;
	/* --layers L --token-ms T [--allreduce-bytes B]: the tensor-parallel
	 * tax (plan_tp.h) instead of a model size. */
	const char *layers_text, *token_ms_text, *ar_bytes_text;
	uint32_t layers;
	double token_ms;
	uint64_t ar_bytes;
};

/* plan's options. 0, or -1 with why in err. */
int plan_cmd_parse(int argc, char **argv, struct plan_opts *o, char *err,
		   size_t len);

/* The nodes planned on: --nodes, else the published rank order, else the
 * connected nodes. st[i] is NULL for a ring node the coordinator no longer
 * lists. */
struct plan_sel {
	const char *name[PLAN_MAX_NODES];
	const Ring__NodeStatus *st[PLAN_MAX_NODES];
	size_t n;
	int from; /* PLAN_FROM_* */
};
enum { PLAN_FROM_NODES, PLAN_FROM_RING, PLAN_FROM_CONNECTED };
/* 0, or -1 with why in err (a --nodes name the coordinator does not list,
 * no node at all): nothing can be checked. */
int plan_select(const Ring__StatusReply *r, const struct plan_opts *o,
		struct plan_sel *sel, char *err, size_t len);
/* The plan into w; the exit status: 0 the nodes hold the model, 1 they do
 * not or a node has no current figure, 2 no node has one. */
int plan_render(struct writer *w, const Ring__StatusReply *r,
		const struct plan_opts *o, const struct plan_sel *sel);

/* Ask the coordinator for its status and print the plan; the exit
 * status as plan_render's, 2 when the coordinator cannot answer. */
int plan_cmd_run(const char *sock, int timeout_ms, enum writer_format fmt,
		 const struct plan_opts *o);

#endif
