/* The verbs engine's parameters: defaults, the check that names a bad
 * value, and the memory a test registers (the bottom of the engine's call
 * graph). See verbs_int.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs_int.h"

void verbs_params_defaults(struct verbs_params *p)
{
	if (!p->qps)
		p->qps = p->kind == VERBS_LAT ? 1 : TESTLIMITS_RDMA_QPS_DEFAULT;
	if (!p->size)
		p->size = p->op == VERBS_READ
				  ? TESTLIMITS_RDMA_SIZE_DEFAULT_READ
				  : TESTLIMITS_RDMA_SIZE_DEFAULT_WRITE;
	if (!p->tx_depth)
		p->tx_depth = p->kind == VERBS_LAT
				      ? TESTLIMITS_RDMA_LAT_TX_DEPTH
				      : TESTLIMITS_RDMA_TX_DEPTH_DEFAULT;
	/* A default moderation is clipped to the depth, a given one must
	 * divide it (as testlimits_check judges a request). */
	if (!p->cq_mod)
		p->cq_mod = TESTLIMITS_RDMA_CQ_MOD_DEFAULT < p->tx_depth
				    ? TESTLIMITS_RDMA_CQ_MOD_DEFAULT
				    : p->tx_depth;
	if (!p->post_list)
		p->post_list = TESTLIMITS_RDMA_POST_LIST_DEFAULT;
	if (!p->duration_ms && !p->iterations)
		p->duration_ms = TESTLIMITS_DURATION_DEFAULT_MS;
	if (!p->lat_iterations)
		p->lat_iterations = TESTLIMITS_LAT_ITERATIONS_DEFAULT;
}

int verbs_params_check(const struct verbs_params *p, char *why, size_t len)
{
	if (p->kind != VERBS_BW && p->kind != VERBS_LAT) {
		snprintf(why, len, "unknown RDMA test kind %d", (int)p->kind);
		return -1;
	}
	if (p->op != VERBS_WRITE && p->op != VERBS_READ) {
		snprintf(why, len, "unknown RDMA operation %d", (int)p->op);
		return -1;
	}
	if (p->mtu && p->mtu != 256 && p->mtu != 512 && p->mtu != 1024 &&
	    p->mtu != 2048 && p->mtu != 4096) {
		snprintf(why, len, "mtu %u: use 256, 512, 1024, 2048 or 4096",
			 p->mtu);
		return -1;
	}
	if (p->kind == VERBS_LAT) {
		if (p->n_sizes < 1 || p->n_sizes > VERBS_MAX_SIZES) {
			snprintf(why, len, "latency needs 1..%d sizes",
				 VERBS_MAX_SIZES);
			return -1;
		}
		for (unsigned i = 0; i < p->n_sizes; i++) {
			if (p->sizes[i] < 1 ||
			    p->sizes[i] > VERBS_MAX_LAT_MSG) {
				snprintf(why, len,
					 "latency size %u out of range "
					 "(1..%u bytes)",
					 p->sizes[i], VERBS_MAX_LAT_MSG);
				return -1;
			}
			/* The ping-pong polls a message's last byte: a size
			 * twice would find the old value there. */
			for (unsigned j = 0; j < i; j++)
				if (p->sizes[j] == p->sizes[i]) {
					snprintf(why, len,
						 "latency size %u given twice",
						 p->sizes[i]);
					return -1;
				}
		}
		if (p->lat_iterations < 1 ||
		    p->lat_iterations > TESTLIMITS_LAT_ITERATIONS_MAX ||
		    p->lat_warmup > TESTLIMITS_LAT_WARMUP_MAX) {
			snprintf(why, len,
				 "latency iterations 1..%u, warm-up 0..%u",
				 TESTLIMITS_LAT_ITERATIONS_MAX,
				 TESTLIMITS_LAT_WARMUP_MAX);
			return -1;
		}
		return 0;
	}
	if (p->qps < 1 || p->qps > VERBS_MAX_QPS) {
		snprintf(why, len, "qps %u out of range (1..%d)", p->qps,
			 VERBS_MAX_QPS);
		return -1;
	}
	if (p->size < 1 || p->size > VERBS_MAX_BW_MSG) {
		snprintf(why, len, "size %u out of range (1..%u bytes)",
			 p->size, VERBS_MAX_BW_MSG);
		return -1;
	}
	if (p->tx_depth < 1 || p->tx_depth > VERBS_MAX_TX_DEPTH) {
		snprintf(why, len, "tx depth %u out of range (1..%d)",
			 p->tx_depth, VERBS_MAX_TX_DEPTH);
		return -1;
	}
	if (p->cq_mod < 1 || p->cq_mod > p->tx_depth ||
	    p->tx_depth % p->cq_mod) {
		snprintf(why, len,
			 "cq moderation %u must divide the tx depth %u",
			 p->cq_mod, p->tx_depth);
		return -1;
	}
	if (p->post_list < 1 || p->post_list > VERBS_MAX_POST_LIST) {
		snprintf(why, len, "post list %u out of range (1..%d)",
			 p->post_list, VERBS_MAX_POST_LIST);
		return -1;
	}
	if (p->iterations > TESTLIMITS_RDMA_ITERATIONS_MAX) {
		snprintf(why, len, "iterations out of range (0..%llu)",
			 TESTLIMITS_RDMA_ITERATIONS_MAX);
		return -1;
	}
	if (!p->iterations &&
	    (p->duration_ms < TESTLIMITS_SAMPLE_DURATION_MIN_MS ||
	     p->duration_ms > TESTLIMITS_DURATION_MAX_MS ||
	     p->warmup_ms > TESTLIMITS_WARMUP_MAX_MS)) {
		snprintf(why, len, "duration %u ms..%u s and warm-up 0..%u s",
			 TESTLIMITS_SAMPLE_DURATION_MIN_MS,
			 TESTLIMITS_DURATION_MAX_MS / 1000,
			 TESTLIMITS_WARMUP_MAX_MS / 1000);
		return -1;
	}
	return 0;
}

uint64_t verbs_params_memory(const struct verbs_params *p)
{
	uint32_t max = 0;

	if (p->kind == VERBS_BW)
		return (uint64_t)p->qps * p->size;
	for (unsigned i = 0; i < p->n_sizes && i < VERBS_MAX_SIZES; i++)
		if (p->sizes[i] > max)
			max = p->sizes[i];
	/* receive area, then send area */
	return 2 * (uint64_t)max;
}
