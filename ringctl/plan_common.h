/* The inputs and arithmetic of `ringctl plan` that its modes share
 * (plan.c, plan_tp.c, plan_weights.c): sizes, parameter counts, bytes per
 * parameter, and the figures of a model over n nodes. */
#ifndef RING_CTL_PLAN_COMMON_H
#define RING_CTL_PLAN_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* The largest size plan takes: 2^60 bytes (1 EiB), far past any ring. */
#define PLAN_BYTES_MAX (1ull << 60)
/* Parameters: at most 10^15. */
#define PLAN_PARAMS_MAX 1000000000000000ull
/* Bytes per parameter: more than 0, at most 64, at most 6 decimals. */
#define PLAN_BPP_MAX 64
/* Without --bytes-per-param: bf16, 2 bytes, nothing for overhead. */
#define PLAN_BPP_DEFAULT 2

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

#endif
