/* Test parameter limits, defaults and their validation (see testlimits.h). */
#include "testlimits.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "reason.h"
#include "size.h"

const uint32_t testlimits_lat_sizes_default[TESTLIMITS_LAT_SIZES_DEFAULT_N] = {
	64, 4096, 10240, 20480, 40960};

const char *testlimits_format_size(uint64_t v, char *buf, size_t len)
{
	return size_format(v, buf, len);
}

static int testlimits_window(uint32_t duration_ms, uint32_t warmup_ms,
			     uint32_t min_ms, char *why, size_t len)
{
	if (duration_ms < min_ms || duration_ms > TESTLIMITS_DURATION_MAX_MS)
		return reason_fail(
			why, len, "duration %u ms out of range %u ms..%u s",
			duration_ms, min_ms, TESTLIMITS_DURATION_MAX_MS / 1000);
	if (warmup_ms > TESTLIMITS_WARMUP_MAX_MS)
		return reason_fail(why, len,
				   "warm-up %u ms out of range 0..%u s",
				   warmup_ms, TESTLIMITS_WARMUP_MAX_MS / 1000);
	return 0;
}

/* Sizes 1..max; the RDMA ping-pong polls a message's last byte, so there
 * a size given twice would find the old value and is refused. */
static int testlimits_lat(const Ring__TestParams *p, uint32_t max, int distinct,
			  char *why, size_t len)
{
	uint32_t iterations = p->iterations;

	if (p->n_sizes < 1 || p->n_sizes > TESTLIMITS_LAT_SIZES_MAX)
		return reason_fail(why, len,
				   "%zu latency sizes, expected 1..%d",
				   p->n_sizes, TESTLIMITS_LAT_SIZES_MAX);
	for (size_t i = 0; i < p->n_sizes; i++) {
		if (p->sizes[i] < 1 || p->sizes[i] > max)
			return reason_fail(why, len,
					   "latency size %u bytes out of range "
					   "1..%u",
					   p->sizes[i], max);
		for (size_t j = 0; distinct && j < i; j++)
			if (p->sizes[j] == p->sizes[i])
				return reason_fail(
					why, len, "latency size %u given twice",
					p->sizes[i]);
	}
	/* The RDMA agent takes 0 for its default; TCP needs a count. */
	if (distinct && !iterations)
		iterations = TESTLIMITS_LAT_ITERATIONS_DEFAULT;
	if (iterations < 1 || iterations > TESTLIMITS_LAT_ITERATIONS_MAX)
		return reason_fail(why, len, "iterations %u out of range 1..%u",
				   p->iterations,
				   TESTLIMITS_LAT_ITERATIONS_MAX);
	if (p->lat_warmup > TESTLIMITS_LAT_WARMUP_MAX)
		return reason_fail(why, len,
				   "latency warm-up %u out of range 0..%u",
				   p->lat_warmup, TESTLIMITS_LAT_WARMUP_MAX);
	return 0;
}

static int testlimits_rdma(const Ring__TestParams *p, uint32_t min_ms,
			   char *why, size_t len)
{
	static const Ring__RdmaParams none = RING__RDMA_PARAMS__INIT;
	const Ring__RdmaParams *r = p->rdma ? p->rdma : &none;
	int lat = p->kind == RING__TEST_KIND__TEST_RDMA_LAT;
	uint32_t tx_depth, cq_mod;

	if (r->op != RING__RDMA_OP__RDMA_OP_WRITE &&
	    r->op != RING__RDMA_OP__RDMA_OP_READ)
		return reason_fail(why, len, "unknown RDMA operation %d",
				   (int)r->op);
	if (r->mtu && r->mtu != 256 && r->mtu != 512 && r->mtu != 1024 &&
	    r->mtu != 2048 && r->mtu != 4096)
		return reason_fail(why, len,
				   "mtu %u: use 256, 512, 1024, 2048 or 4096",
				   r->mtu);
	if ((r->a_gid_set && r->a_gid_index > TESTLIMITS_GID_INDEX_MAX) ||
	    (r->b_gid_set && r->b_gid_index > TESTLIMITS_GID_INDEX_MAX))
		return reason_fail(
			why, len, "GID index %u out of range 0..%d",
			r->a_gid_set && r->a_gid_index >
						TESTLIMITS_GID_INDEX_MAX
				? r->a_gid_index
				: r->b_gid_index,
			TESTLIMITS_GID_INDEX_MAX);
	if (r->traffic_class > TESTLIMITS_RDMA_TC_MAX)
		return reason_fail(why, len,
				   "traffic class %u out of range 0..%d",
				   r->traffic_class, TESTLIMITS_RDMA_TC_MAX);
	if (r->service_level > TESTLIMITS_RDMA_SL_MAX)
		return reason_fail(why, len,
				   "service level %u out of range 0..%d",
				   r->service_level, TESTLIMITS_RDMA_SL_MAX);
	if (r->ack_timeout &&
	    (r->ack_timeout < TESTLIMITS_RDMA_ACK_TIMEOUT_MIN ||
	     r->ack_timeout > TESTLIMITS_RDMA_ACK_TIMEOUT_MAX))
		return reason_fail(
			why, len, "ACK timeout %u out of range %d..%d",
			r->ack_timeout, TESTLIMITS_RDMA_ACK_TIMEOUT_MIN,
			TESTLIMITS_RDMA_ACK_TIMEOUT_MAX);
	if (lat)
		return testlimits_lat(p, TESTLIMITS_RDMA_LAT_SIZE_MAX, 1, why,
				      len);
	if (r->qps > TESTLIMITS_RDMA_QPS_MAX)
		return reason_fail(why, len, "qps %u out of range (1..%d)",
				   r->qps, TESTLIMITS_RDMA_QPS_MAX);
	if (r->size > TESTLIMITS_RDMA_SIZE_MAX)
		return reason_fail(why, len,
				   "size %u out of range (1..%u bytes)",
				   r->size, TESTLIMITS_RDMA_SIZE_MAX);
	if (r->tx_depth > TESTLIMITS_RDMA_TX_DEPTH_MAX)
		return reason_fail(why, len, "tx depth %u out of range (1..%d)",
				   r->tx_depth, TESTLIMITS_RDMA_TX_DEPTH_MAX);
	/* As the agent fills them in: a default cq moderation is clipped to
	 * the tx depth, a given one must divide it. */
	tx_depth = r->tx_depth ? r->tx_depth : TESTLIMITS_RDMA_TX_DEPTH_DEFAULT;
	cq_mod = r->cq_mod ? r->cq_mod : TESTLIMITS_RDMA_CQ_MOD_DEFAULT;
	if (!r->cq_mod && cq_mod > tx_depth)
		cq_mod = tx_depth;
	if (cq_mod > tx_depth || tx_depth % cq_mod)
		return reason_fail(
			why, len,
			"cq moderation %u must divide the tx depth %u", cq_mod,
			tx_depth);
	if (r->post_list > TESTLIMITS_RDMA_POST_LIST_MAX)
		return reason_fail(why, len,
				   "post list %u out of range (1..%d)",
				   r->post_list, TESTLIMITS_RDMA_POST_LIST_MAX);
	if (r->iterations > TESTLIMITS_RDMA_ITERATIONS_MAX)
		return reason_fail(why, len,
				   "iterations out of range (0..%llu)",
				   TESTLIMITS_RDMA_ITERATIONS_MAX);
	if (r->iterations)
		return 0;
	return testlimits_window(p->duration_ms
					 ? p->duration_ms
					 : TESTLIMITS_DURATION_DEFAULT_MS,
				 p->warmup_ms, min_ms, why, len);
}

static int testlimits_check_min(const Ring__TestParams *p, uint32_t min_ms,
				char *why, size_t len)
{
	if (!p)
		return reason_fail(why, len, "missing test parameters");
	switch (p->kind) {
	case RING__TEST_KIND__TEST_TCP_BW:
		if (p->streams < 1 || p->streams > TESTLIMITS_STREAMS_MAX)
			return reason_fail(why, len,
					   "streams %u out of range 1..%d",
					   p->streams, TESTLIMITS_STREAMS_MAX);
		if (p->direction != RING__DIRECTION__DIR_A_TO_B &&
		    p->direction != RING__DIRECTION__DIR_B_TO_A &&
		    p->direction != RING__DIRECTION__DIR_BOTH)
			return reason_fail(why, len, "unknown direction %d",
					   (int)p->direction);
		if (p->direction == RING__DIRECTION__DIR_BOTH && p->streams % 2)
			return reason_fail(
				why, len,
				"direction both needs an even number "
				"of streams (>= 2), not %u",
				p->streams);
		return testlimits_window(p->duration_ms, p->warmup_ms, min_ms,
					 why, len);
	case RING__TEST_KIND__TEST_TCP_LAT:
		return testlimits_lat(p, TESTLIMITS_TCP_LAT_SIZE_MAX, 0, why,
				      len);
	case RING__TEST_KIND__TEST_RDMA_BW:
	case RING__TEST_KIND__TEST_RDMA_LAT:
		return testlimits_rdma(p, min_ms, why, len);
	default:
		return reason_fail(why, len, "unsupported test kind %d",
				   (int)p->kind);
	}
}

int testlimits_check(const Ring__TestParams *p, char *why, size_t len)
{
	return testlimits_check_min(p, TESTLIMITS_DURATION_MIN_MS, why, len);
}

int testlimits_check_agent(const Ring__TestParams *p, char *why, size_t len)
{
	return testlimits_check_min(p, TESTLIMITS_SAMPLE_DURATION_MIN_MS, why,
				    len);
}

unsigned testlimits_rdma_deadline_ms(const Ring__TestParams *p)
{
	const Ring__RdmaParams *r = p->rdma;
	uint64_t ms = 10000 + (uint64_t)p->warmup_ms + p->duration_ms;

	if (p->kind == RING__TEST_KIND__TEST_RDMA_LAT) {
		/* 1 ms a round trip: generous, soft-RoCE in an emulated VM
		 * is slow; agent defaults (0) get a flat 20 s. */
		uint64_t n = p->n_sizes ? p->n_sizes
					: TESTLIMITS_LAT_SIZES_DEFAULT_N;

		ms += p->iterations
			      ? n * ((uint64_t)p->iterations + p->lat_warmup)
			      : 20000;
	} else if (r && r->iterations) {
		/* Counted messages: time them at 1 Gbit/s (1e6 bits/ms). */
		uint64_t qps = r->qps ? r->qps : TESTLIMITS_RDMA_QPS_DEFAULT;
		uint64_t size = r->size ? r->size : 65536;

		ms += r->iterations * qps * size * 8 / 1000000;
	}
	/* A longer ACK timeout: room for the agent to see a dead path as
	 * such (7 tries of 4.096 us * 2^n) before the deadline does. */
	if (r && r->ack_timeout > TESTLIMITS_RDMA_ACK_TIMEOUT_DEFAULT &&
	    r->ack_timeout <= TESTLIMITS_RDMA_ACK_TIMEOUT_MAX)
		ms += 7 * ((4096ull << r->ack_timeout) / 1000000 + 1);
	return ms > TESTLIMITS_RDMA_DEADLINE_MAX_MS
		       ? TESTLIMITS_RDMA_DEADLINE_MAX_MS
		       : (unsigned)ms;
}

int testlimits_read_check(const Ring__ReadTestRequest *r, uint64_t *bytes,
			  unsigned *ms, char *why, size_t len)
{
	if (!r->path || r->path[0] != '/' || strlen(r->path) > 4095) {
		snprintf(why, len,
			 "read test: the path must be absolute (at most 4095 "
			 "bytes)");
		return -1;
	}
	if (r->max_bytes > TESTLIMITS_READ_BYTES_MAX) {
		snprintf(why, len,
			 "read test: max_bytes %llu is more than 64 GiB",
			 (unsigned long long)r->max_bytes);
		return -1;
	}
	if (r->max_ms > TESTLIMITS_READ_MS_MAX) {
		snprintf(why, len, "read test: max_ms %u is more than %u",
			 r->max_ms, TESTLIMITS_READ_MS_MAX);
		return -1;
	}
	if (r->n_nodes > TESTLIMITS_READ_NODES_MAX) {
		snprintf(why, len, "read test: at most %d nodes",
			 TESTLIMITS_READ_NODES_MAX);
		return -1;
	}
	*bytes = r->max_bytes ? r->max_bytes : TESTLIMITS_READ_BYTES_DEFAULT;
	*ms = r->max_ms ? r->max_ms : TESTLIMITS_READ_MS_DEFAULT;
	return 0;
}
