/* testlimits: a request judged as the agent judges it,
 * and the RDMA teardown deadline. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/tcptest.h"
#include "testlimits.h"
#include "agent/verbs.h"

static void test_deadline(void **state)
{
	Ring__TestParams p = RING__TEST_PARAMS__INIT;
	Ring__RdmaParams r = RING__RDMA_PARAMS__INIT;
	uint32_t sizes[5] = {64, 4096, 10240, 20480, 40960};

	(void)state;
	p.kind = RING__TEST_KIND__TEST_RDMA_BW;
	p.duration_ms = 5000;
	p.warmup_ms = 1000;
	p.rdma = &r;
	assert_int_equal(testlimits_rdma_deadline_ms(&p), 16000);
	/* NCCL's ACK timeout: 7 tries of 4.29 s more, to see a dead path. */
	r.ack_timeout = TESTLIMITS_RDMA_ACK_TIMEOUT_NCCL;
	assert_int_equal(testlimits_rdma_deadline_ms(&p), 16000 + 7 * 4295);
	r.ack_timeout = 0;
	/* Counted messages: 1e6 x 4 QPs x 64K at 1 Gbit/s. */
	r.iterations = 1000000;
	assert_int_equal(testlimits_rdma_deadline_ms(&p),
			 16000 + 1000000ull * 4 * 65536 * 8 / 1000000);
	r.iterations = TESTLIMITS_RDMA_ITERATIONS_MAX;
	r.size = TESTLIMITS_RDMA_SIZE_MAX;
	r.qps = TESTLIMITS_RDMA_QPS_MAX;
	assert_int_equal(testlimits_rdma_deadline_ms(&p),
			 TESTLIMITS_RDMA_DEADLINE_MAX_MS);
	p.kind = RING__TEST_KIND__TEST_RDMA_LAT;
	p.duration_ms = p.warmup_ms = 0;
	p.sizes = sizes;
	p.n_sizes = 5;
	p.iterations = 1000;
	p.lat_warmup = 100;
	assert_int_equal(testlimits_rdma_deadline_ms(&p), 10000 + 5 * 1100);
}

/* A request with these fields, all others zero (the agent's defaults). */
#define PARAMS(...)                                                            \
	((Ring__TestParams){                                                   \
		PROTOBUF_C_MESSAGE_INIT(&ring__test_params__descriptor),       \
		__VA_ARGS__})

static void expect(const Ring__TestParams *p, const char *want)
{
	char why[256] = "";

	if (!want) {
		if (testlimits_check(p, why, sizeof(why)) != 0)
			fail_msg("refused: %s", why);
		return;
	}
	assert_int_equal(testlimits_check(p, why, sizeof(why)), -1);
	if (!strstr(why, want))
		fail_msg("'%s' does not say '%s'", why, want);
}

static void test_check_tcp(void **state)
{
	Ring__TestParams p, q;
	uint32_t sizes[TESTLIMITS_LAT_SIZES_MAX + 1];

	(void)state;
	expect(NULL, "missing test parameters");
/* The valid request p with one field changed. */
#define TQ(field, val, want)                                                   \
	do {                                                                   \
		q = p;                                                         \
		q.field = (val);                                               \
		expect(&q, (want));                                            \
	} while (0)
	p = PARAMS(.kind = RING__TEST_KIND__TEST_TCP_BW,
		   .streams = TESTLIMITS_STREAMS_DEFAULT,
		   .duration_ms = TESTLIMITS_DURATION_DEFAULT_MS,
		   .warmup_ms = TESTLIMITS_WARMUP_DEFAULT_MS);
	expect(&p, NULL);
	TQ(streams, 0, "streams 0 out of range 1..64");
	TQ(streams, TESTLIMITS_STREAMS_MAX + 1, "streams");
	TQ(streams, TESTLIMITS_STREAMS_MAX, NULL);
	q = p, q.direction = RING__DIRECTION__DIR_BOTH, q.streams = 3;
	expect(&q, "direction both needs an even number of streams");
	q.streams = 2, expect(&q, NULL);
	TQ(direction, 7, "unknown direction 7");
	TQ(duration_ms, TESTLIMITS_DURATION_MIN_MS - 1,
	   "duration 99 ms out of range 100 ms..600 s");
	TQ(duration_ms, TESTLIMITS_DURATION_MAX_MS, NULL);
	TQ(duration_ms, TESTLIMITS_DURATION_MAX_MS + 1, "duration");
	TQ(warmup_ms, TESTLIMITS_WARMUP_MAX_MS + 1,
	   "warm-up 60001 ms out of range 0..60 s");
	/* Agents take the coordinator's short samples; users get 100 ms. */
	{
		char why[256];

		q = p;
		q.duration_ms = TESTLIMITS_SAMPLE_DURATION_MIN_MS;
		expect(&q, "duration 10 ms out of range 100 ms..600 s");
		assert_int_equal(testlimits_check_agent(&q, why, sizeof(why)),
				 0);
		q.duration_ms--;
		assert_int_equal(testlimits_check_agent(&q, why, sizeof(why)),
				 -1);
		assert_non_null(
			strstr(why, "duration 9 ms out of range 10 ms"));
		q.kind = RING__TEST_KIND__TEST_RDMA_BW;
		q.streams = 0;
		q.duration_ms = TESTLIMITS_SAMPLE_DURATION_MIN_MS;
		assert_int_equal(testlimits_check_agent(&q, why, sizeof(why)),
				 0);
		expect(&q, "duration 10 ms out of range 100 ms");
	}

	memset(sizes, 0, sizeof(sizes));
	memcpy(sizes, testlimits_lat_sizes_default,
	       sizeof(testlimits_lat_sizes_default));
	p = PARAMS(.kind = RING__TEST_KIND__TEST_TCP_LAT, .sizes = sizes,
		   .n_sizes = TESTLIMITS_LAT_SIZES_DEFAULT_N,
		   .iterations = TESTLIMITS_LAT_ITERATIONS_DEFAULT);
	expect(&p, NULL);
	TQ(n_sizes, 0, "0 latency sizes, expected 1..16");
	TQ(n_sizes, TESTLIMITS_LAT_SIZES_MAX + 1, "17 latency sizes");
	TQ(iterations, 0, "iterations 0 out of range");
	TQ(iterations, TESTLIMITS_LAT_ITERATIONS_MAX + 1,
	   "iterations 1000001 out of range 1..1000000");
	TQ(lat_warmup, TESTLIMITS_LAT_WARMUP_MAX + 1, "latency warm-up");
	sizes[1] = TESTLIMITS_TCP_LAT_SIZE_MAX + 1;
	expect(&p, "latency size 1048577 bytes out of range 1..1048576");
	/* TCP may repeat a size; RDMA may not (below). */
	sizes[1] = sizes[0];
	expect(&p, NULL);
	p.kind = 99;
	expect(&p, "unsupported test kind 99");
#undef TQ
}

static void test_check_rdma(void **state)
{
	Ring__TestParams p, q;
	Ring__RdmaParams r = RING__RDMA_PARAMS__INIT, s;
	uint32_t sizes[2] = {64, 4096};

	(void)state;
	p = PARAMS(.kind = RING__TEST_KIND__TEST_RDMA_BW,
		   .duration_ms = TESTLIMITS_DURATION_DEFAULT_MS, .rdma = &r);
	/* Zero fields are the agent's defaults, and fine. */
	expect(&p, NULL);
	q = p, q.rdma = NULL, expect(&q, NULL);
	q = p, q.duration_ms = 0, expect(&q, NULL);
#define RD(field, val, want)                                                   \
	do {                                                                   \
		s = r;                                                         \
		s.field = (val);                                               \
		q = p;                                                         \
		q.rdma = &s;                                                   \
		expect(&q, (want));                                            \
	} while (0)
	RD(op, 5, "unknown RDMA operation 5");
	RD(qps, TESTLIMITS_RDMA_QPS_MAX, NULL);
	RD(qps, TESTLIMITS_RDMA_QPS_MAX + 1, "qps 65 out of range (1..64)");
	RD(size, TESTLIMITS_RDMA_SIZE_MAX, NULL);
	RD(size, TESTLIMITS_RDMA_SIZE_MAX + 1, "size 67108865 out of range");
	RD(tx_depth, TESTLIMITS_RDMA_TX_DEPTH_MAX, NULL);
	RD(tx_depth, TESTLIMITS_RDMA_TX_DEPTH_MAX + 1,
	   "tx depth 8193 out of range (1..8192)");
	/* A default moderation (16) is clipped to a smaller depth... */
	RD(tx_depth, 8, NULL);
	/* ... a given one must divide the depth (default 128). */
	RD(cq_mod, 3, "cq moderation 3 must divide the tx depth 128");
	RD(cq_mod, 256, "cq moderation 256 must divide the tx depth 128");
	RD(cq_mod, 32, NULL);
	RD(post_list, TESTLIMITS_RDMA_POST_LIST_MAX, NULL);
	RD(post_list, TESTLIMITS_RDMA_POST_LIST_MAX + 1,
	   "post list 65 out of range (1..64)");
	RD(iterations, TESTLIMITS_RDMA_ITERATIONS_MAX, NULL);
	RD(iterations, TESTLIMITS_RDMA_ITERATIONS_MAX + 1,
	   "iterations out of range (0..100000000)");
	RD(mtu, 1024, NULL);
	RD(mtu, 1500, "mtu 1500: use 256, 512, 1024, 2048 or 4096");
	/* NCCL_IB_TC / NCCL_IB_SL: ibv_ah_attr's 8 and 4 bits. */
	RD(traffic_class, TESTLIMITS_RDMA_TC_MAX, NULL);
	RD(traffic_class, TESTLIMITS_RDMA_TC_MAX + 1,
	   "traffic class 256 out of range 0..255");
	RD(service_level, TESTLIMITS_RDMA_SL_MAX, NULL);
	RD(service_level, TESTLIMITS_RDMA_SL_MAX + 1,
	   "service level 16 out of range 0..15");
	/* NCCL_IB_TIMEOUT: 0 is the agent's default, else 8..24. */
	RD(ack_timeout, 0, NULL);
	RD(ack_timeout, TESTLIMITS_RDMA_ACK_TIMEOUT_NCCL, NULL);
	RD(ack_timeout, 7, "ACK timeout 7 out of range 8..24");
	RD(ack_timeout, 25, "ACK timeout 25 out of range 8..24");
	s = r, s.a_gid_set = 1, s.a_gid_index = TESTLIMITS_GID_INDEX_MAX;
	q = p, q.rdma = &s, expect(&q, NULL);
	s.b_gid_set = 1, s.b_gid_index = TESTLIMITS_GID_INDEX_MAX + 1;
	expect(&q, "GID index 256 out of range 0..255");
	/* Unset, an index is not looked at. */
	s = r, s.a_gid_index = 9999, q = p, q.rdma = &s, expect(&q, NULL);
	q = p, q.duration_ms = TESTLIMITS_DURATION_MAX_MS + 1;
	expect(&q, "duration 600001 ms out of range 100 ms..600 s");
	/* Counted messages: no window to judge. */
	s = r, s.iterations = 10, q = p, q.rdma = &s;
	q.duration_ms = TESTLIMITS_DURATION_MAX_MS + 1, expect(&q, NULL);

	p = PARAMS(.kind = RING__TEST_KIND__TEST_RDMA_LAT, .rdma = &r,
		   .sizes = sizes, .n_sizes = 2);
	/* Iterations 0: the agent's default. */
	expect(&p, NULL);
	sizes[1] = TESTLIMITS_RDMA_LAT_SIZE_MAX;
	expect(&p, NULL);
	sizes[1] = TESTLIMITS_RDMA_LAT_SIZE_MAX + 1;
	expect(&p, "latency size 8388609 bytes out of range 1..8388608");
	sizes[1] = 64;
	expect(&p, "latency size 64 given twice");
	sizes[1] = 4096;
	p.iterations = TESTLIMITS_LAT_ITERATIONS_MAX + 1;
	expect(&p, "iterations 1000001 out of range");
	/* Bandwidth knobs are not judged for latency. */
	p.iterations = 10;
	s = r, s.qps = 999, p.rdma = &s, expect(&p, NULL);
#undef RD
}

/* The agent's engines take what testlimits passes: the request checks and
 * the engines' own checks agree at every limit. */
static void test_engines_agree(void **state)
{
	struct verbs_params v = {.kind = VERBS_BW, .op = VERBS_WRITE};
	struct tcptest_params t = {.kind = TCPTEST_BW,
				   .streams = TESTLIMITS_STREAMS_MAX,
				   .duration_ms = TESTLIMITS_DURATION_MAX_MS,
				   .warmup_ms = TESTLIMITS_WARMUP_MAX_MS};
	char why[256];

	(void)state;
	v.qps = TESTLIMITS_RDMA_QPS_MAX;
	v.size = TESTLIMITS_RDMA_SIZE_MAX;
	v.tx_depth = TESTLIMITS_RDMA_TX_DEPTH_MAX;
	v.post_list = TESTLIMITS_RDMA_POST_LIST_MAX;
	v.iterations = TESTLIMITS_RDMA_ITERATIONS_MAX;
	verbs_params_defaults(&v);
	assert_int_equal(verbs_params_check(&v, why, sizeof(why)), 0);
	v.tx_depth++;
	assert_int_equal(verbs_params_check(&v, why, sizeof(why)), -1);
	assert_int_equal(tcptest_params_check(&t, why, sizeof(why)), 0);
	t.duration_ms++;
	assert_int_equal(tcptest_params_check(&t, why, sizeof(why)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_check_tcp),
		cmocka_unit_test(test_check_rdma),
		cmocka_unit_test(test_engines_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
