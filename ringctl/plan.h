/* `ringctl plan`: does a model fit in the ring's memory? Each node's
 * usable memory is its MemAvailable (measured by its agent, received with
 * its latest heartbeat) less a per-node reservation; the ring's total, the
 * nodes needed and the gap or headroom are computed from those. Units are
 * spelled out everywhere: GB = 10^9 bytes, GiB = 2^30 bytes. */
#ifndef RING_CTL_PLAN_H
#define RING_CTL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "ring.pb-c.h"
#include "writer.h"

#define PLAN_MAX_NODES 256
/* The largest size plan takes: 2^60 bytes (1 EiB), far past any ring. */
#define PLAN_BYTES_MAX (1ull << 60)
/* Parameters: at most 10^15. */
#define PLAN_PARAMS_MAX 1000000000000000ull
/* Bytes per parameter: more than 0, at most 64, at most 6 decimals. */
#define PLAN_BPP_MAX 64
/* Without --bytes-per-param: bf16, 2 bytes, nothing for overhead. */
#define PLAN_BPP_DEFAULT 2

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

/* A size in the one grammar (common/size.h: 1K is 1024, 800GB is 8e11),
 * 0 to PLAN_BYTES_MAX. 0, or -1 with why in err. */
int plan_parse_size(const char *s, uint64_t *bytes, char *err, size_t len);
/* A parameter count: a number with no suffix or K, M, B (billion) or T,
 * e.g. 744B, 1.6T, 70e9; whole, 1 to PLAN_PARAMS_MAX. */
int plan_parse_params(const char *s, uint64_t *n, char *err, size_t len);
/* Bytes per parameter as num / den exactly (2.03 is 203 / 100). */
int plan_parse_bpp(const char *s, uint64_t *num, uint64_t *den, char *err,
		   size_t len);
/* ceil(params * num / den) into *bytes; -1 past PLAN_BYTES_MAX. */
int plan_model_bytes(uint64_t params, uint64_t num, uint64_t den,
		     uint64_t *bytes);
/* ceil(model / per_node); 0 when per_node is 0 (no count will do). */
uint64_t plan_nodes_needed(uint64_t model, uint64_t per_node);

/* The computed figures for a model over n nodes of usable[i] bytes, the
 * nodes taken as alike: each counts as holding what the smallest holds,
 * the model split evenly. */
struct plan_figures {
	size_t n;
	size_t smallest_at;		    /* index of the smallest node */
	uint64_t smallest, total, capacity; /* capacity = n x smallest */
	uint64_t needed;		    /* 0: no node has room */
	int holds;			    /* model <= capacity */
	uint64_t short_bytes, headroom_bytes;
};
void plan_compute(uint64_t model, const uint64_t *usable, size_t n,
		  struct plan_figures *f);

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
