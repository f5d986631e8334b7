/* ringctl's test arguments: `test KIND A B [options]` into a
 * TestParams, with the limits and defaults of testlimits.h. */
#include "testargs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reason.h"
#include "size.h"
#include "testlimits.h"

static int testargs_seconds_ms(const char *s, uint32_t *ms, double max)
{
	char *end;
	double v = strtod(s, &end);

	/* Negated: NaN passes no comparison. */
	if (end == s || *end || !(v >= 0 && v <= max))
		return -1;
	*ms = (uint32_t)(v * 1000 + 0.5);
	return 0;
}

static int testargs_count(const char *s, uint64_t lo, uint64_t hi,
			  uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int testargs_count32(const char *s, uint32_t lo, uint32_t hi,
			    uint32_t *out)
{
	uint64_t v;

	if (testargs_count(s, lo, hi, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* "64,4096,1M": 1..TESTLIMITS_LAT_SIZES_MAX sizes of 1..max bytes, each
 * once, in the one size grammar (size.h). */
static int testargs_sizes(const char *val, uint64_t max, struct testargs *t,
			  char *err, size_t len)
{
	uint64_t v[TESTLIMITS_LAT_SIZES_MAX];
	size_t n;

	if (size_parse_list(val, 1, max, v, TESTLIMITS_LAT_SIZES_MAX, &n, err,
			    len) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		t->sizes[i] = (uint32_t)v[i];
	t->params.n_sizes = n;
	return 0;
}

/* Latency round trips per size (TCP and RDMA alike), a tenth of it
 * untimed first. */
static int testargs_lat_iterations(Ring__TestParams *p, const char *val,
				   char *err, size_t len)
{
	if (testargs_count32(val, 1, TESTLIMITS_LAT_ITERATIONS_MAX,
			     &p->iterations) < 0)
		return reason_fail(err, len, "--iterations: '%s' is not 1..%u",
				   val, TESTLIMITS_LAT_ITERATIONS_MAX);
	p->lat_warmup = p->iterations / 10;
	return 0;
}

static int testargs_window(Ring__TestParams *p, const char *opt,
			   const char *val, char *err, size_t len)
{
	if (!strcmp(opt, "--duration")) {
		if (testargs_seconds_ms(val, &p->duration_ms,
					TESTLIMITS_DURATION_MAX_MS / 1000.0) <
			    0 ||
		    p->duration_ms < TESTLIMITS_DURATION_MIN_MS)
			return reason_fail(
				err, len,
				"--duration: '%s' is not %g..%u seconds", val,
				TESTLIMITS_DURATION_MIN_MS / 1000.0,
				TESTLIMITS_DURATION_MAX_MS / 1000);
	} else if (testargs_seconds_ms(val, &p->warmup_ms,
				       TESTLIMITS_WARMUP_MAX_MS / 1000.0) < 0) {
		return reason_fail(err, len,
				   "--warmup: '%s' is not 0..%u seconds", val,
				   TESTLIMITS_WARMUP_MAX_MS / 1000);
	}
	return 0;
}

static int testargs_lat_sizes(struct testargs *t, const char *val, uint32_t max,
			      char *err, size_t len)
{
	char why[200];

	if (testargs_sizes(val, max, t, why, sizeof(why)) < 0)
		return reason_fail(err, len, "--sizes: %s", why);
	return 0;
}

/* The TCP options. */
static int testargs_tcp_option(struct testargs *t, int bw, const char *opt,
			       const char *val, char *err, size_t len)
{
	Ring__TestParams *p = &t->params;

	if (bw && !strcmp(opt, "--streams")) {
		if (testargs_count32(val, 1, TESTLIMITS_STREAMS_MAX,
				     &p->streams) < 0)
			return reason_fail(err, len,
					   "--streams: '%s' is not 1..%d", val,
					   TESTLIMITS_STREAMS_MAX);
	} else if (bw &&
		   (!strcmp(opt, "--duration") || !strcmp(opt, "--warmup"))) {
		return testargs_window(p, opt, val, err, len);
	} else if (bw && !strcmp(opt, "--direction")) {
		if (!strcmp(val, "a-to-b"))
			p->direction = RING__DIRECTION__DIR_A_TO_B;
		else if (!strcmp(val, "b-to-a"))
			p->direction = RING__DIRECTION__DIR_B_TO_A;
		else if (!strcmp(val, "both"))
			p->direction = RING__DIRECTION__DIR_BOTH;
		else
			return reason_fail(err, len,
					   "--direction: '%s' is not a-to-b, "
					   "b-to-a or both",
					   val);
	} else if (!bw && !strcmp(opt, "--iterations")) {
		return testargs_lat_iterations(p, val, err, len);
	} else if (!bw && !strcmp(opt, "--sizes")) {
		return testargs_lat_sizes(t, val, TESTLIMITS_TCP_LAT_SIZE_MAX,
					  err, len);
	} else {
		return reason_fail(err, len, "unknown test option '%s'", opt);
	}
	return 0;
}

static int testargs_gid(const char *opt, const char *val,
			protobuf_c_boolean *set, uint32_t *idx, char *err,
			size_t len)
{
	if (testargs_count32(val, 0, TESTLIMITS_GID_INDEX_MAX, idx) < 0)
		return reason_fail(err, len,
				   "%s: '%s' is not a GID index 0..%d", opt,
				   val, TESTLIMITS_GID_INDEX_MAX);
	*set = 1;
	return 0;
}

/* --NAME N in 1..max into *out. */
static int testargs_count_opt(const char *opt, const char *val, uint32_t max,
			      uint32_t *out, char *err, size_t len)
{
	if (testargs_count32(val, 1, max, out) < 0)
		return reason_fail(err, len, "%s: '%s' is not 1..%u", opt, val,
				   max);
	return 0;
}

static int testargs_rdma_bw_option(struct testargs *t, const char *opt,
				   const char *val, char *err, size_t len)
{
	Ring__RdmaParams *r = &t->rdma;
	uint64_t v;

	if (!strcmp(opt, "--qps"))
		return testargs_count_opt(opt, val, TESTLIMITS_RDMA_QPS_MAX,
					  &r->qps, err, len);
	if (!strcmp(opt, "--size")) {
		char why[200];

		if (size_parse(val, 1, TESTLIMITS_RDMA_SIZE_MAX, &v, why,
			       sizeof(why)) < 0)
			return reason_fail(err, len, "--size: %s", why);
		r->size = (uint32_t)v;
		return 0;
	}
	if (!strcmp(opt, "--duration") || !strcmp(opt, "--warmup"))
		return testargs_window(&t->params, opt, val, err, len);
	if (!strcmp(opt, "--iterations")) {
		if (testargs_count(val, 1, TESTLIMITS_RDMA_ITERATIONS_MAX,
				   &r->iterations) < 0)
			return reason_fail(
				err, len,
				"--iterations: '%s' is not 1..%llu messages "
				"per QP",
				val, TESTLIMITS_RDMA_ITERATIONS_MAX);
		return 0;
	}
	if (!strcmp(opt, "--tx-depth"))
		return testargs_count_opt(opt, val,
					  TESTLIMITS_RDMA_TX_DEPTH_MAX,
					  &r->tx_depth, err, len);
	if (!strcmp(opt, "--cq-mod"))
		return testargs_count_opt(opt, val,
					  TESTLIMITS_RDMA_TX_DEPTH_MAX,
					  &r->cq_mod, err, len);
	if (!strcmp(opt, "--post-list"))
		return testargs_count_opt(opt, val,
					  TESTLIMITS_RDMA_POST_LIST_MAX,
					  &r->post_list, err, len);
	if (!strcmp(opt, "--mtu")) {
		if (testargs_count32(val, 256, 4096, &r->mtu) < 0 ||
		    (r->mtu & (r->mtu - 1)))
			return reason_fail(err, len,
					   "--mtu: '%s' is not 256, 512, 1024, "
					   "2048 or 4096",
					   val);
		return 0;
	}
	return reason_fail(err, len, "unknown rdma-bw option '%s'", opt);
}

static int testargs_rdma_option(struct testargs *t, int bw, const char *opt,
				const char *val, char *err, size_t len)
{
	Ring__RdmaParams *r = &t->rdma;

	if (!strcmp(opt, "--op")) {
		if (!strcmp(val, "write"))
			r->op = RING__RDMA_OP__RDMA_OP_WRITE;
		else if (!strcmp(val, "read"))
			r->op = RING__RDMA_OP__RDMA_OP_READ;
		else
			return reason_fail(err, len,
					   "--op: '%s' is not write or read",
					   val);
		return 0;
	}
	if (!strcmp(opt, "--gid-a"))
		return testargs_gid(opt, val, &r->a_gid_set, &r->a_gid_index,
				    err, len);
	if (!strcmp(opt, "--gid-b"))
		return testargs_gid(opt, val, &r->b_gid_set, &r->b_gid_index,
				    err, len);
	/* NCCL_IB_TC / NCCL_IB_SL: the lossless class a job will use. */
	if (!strcmp(opt, "--tc")) {
		if (testargs_count32(val, 0, TESTLIMITS_RDMA_TC_MAX,
				     &r->traffic_class) < 0)
			return reason_fail(err, len,
					   "--tc: '%s' is not a traffic class "
					   "0..%d",
					   val, TESTLIMITS_RDMA_TC_MAX);
		return 0;
	}
	if (!strcmp(opt, "--sl")) {
		if (testargs_count32(val, 0, TESTLIMITS_RDMA_SL_MAX,
				     &r->service_level) < 0)
			return reason_fail(err, len,
					   "--sl: '%s' is not a service level "
					   "0..%d",
					   val, TESTLIMITS_RDMA_SL_MAX);
		return 0;
	}
	/* NCCL_IB_TIMEOUT: a longer wait before a retransmission. */
	if (!strcmp(opt, "--ack-timeout")) {
		if (testargs_count32(val, TESTLIMITS_RDMA_ACK_TIMEOUT_MIN,
				     TESTLIMITS_RDMA_ACK_TIMEOUT_MAX,
				     &r->ack_timeout) < 0)
			return reason_fail(err, len,
					   "--ack-timeout: '%s' is not an "
					   "exponent %d..%d",
					   val, TESTLIMITS_RDMA_ACK_TIMEOUT_MIN,
					   TESTLIMITS_RDMA_ACK_TIMEOUT_MAX);
		return 0;
	}
	if (bw)
		return testargs_rdma_bw_option(t, opt, val, err, len);
	if (!strcmp(opt, "--sizes"))
		return testargs_lat_sizes(t, val, TESTLIMITS_RDMA_LAT_SIZE_MAX,
					  err, len);
	if (!strcmp(opt, "--iterations"))
		return testargs_lat_iterations(&t->params, val, err, len);
	return reason_fail(err, len, "unknown rdma-lat option '%s'", opt);
}

int testargs_parse(int argc, char **argv, struct testargs *t, char *err,
		   size_t errlen)
{
	Ring__TestParams *p = &t->params;
	const char *kind = argc > 0 ? argv[0] : "";
	int bw = !strcmp(kind, "bw") || !strcmp(kind, "rdma-bw");
	int rdma = !strncmp(kind, "rdma-", 5), op_given = 0;
	char why[256];

	memset(t, 0, sizeof(*t));
	ring__test_params__init(p);
	ring__rdma_params__init(&t->rdma);
	if (argc < 3 || (strcmp(kind, "bw") && strcmp(kind, "lat") &&
			 strcmp(kind, "rdma-bw") && strcmp(kind, "rdma-lat")))
		return reason_fail(err, errlen,
				   "test needs 'bw A B', 'lat A B', "
				   "'rdma-bw A B' or 'rdma-lat A B'");
	t->a = argv[1];
	t->b = argv[2];
	if (bw) {
		p->kind = rdma ? RING__TEST_KIND__TEST_RDMA_BW
			       : RING__TEST_KIND__TEST_TCP_BW;
		p->streams = rdma ? 0 : TESTLIMITS_STREAMS_DEFAULT;
		p->duration_ms = TESTLIMITS_DURATION_DEFAULT_MS;
		p->warmup_ms = TESTLIMITS_WARMUP_DEFAULT_MS;
	} else {
		p->kind = rdma ? RING__TEST_KIND__TEST_RDMA_LAT
			       : RING__TEST_KIND__TEST_TCP_LAT;
		memcpy(t->sizes, testlimits_lat_sizes_default,
		       sizeof(testlimits_lat_sizes_default));
		p->n_sizes = TESTLIMITS_LAT_SIZES_DEFAULT_N;
		p->iterations = TESTLIMITS_LAT_ITERATIONS_DEFAULT;
		p->lat_warmup = TESTLIMITS_LAT_ITERATIONS_DEFAULT / 10;
	}
	p->sizes = t->sizes;
	if (rdma)
		p->rdma = &t->rdma;
	for (int i = 3; i < argc; i += 2) {
		const char *opt = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strncmp(opt, "--", 2))
			return reason_fail(err, errlen,
					   "'%s' is an unexpected argument: "
					   "test %s takes two nodes A B, then "
					   "--options",
					   opt, kind);
		if (!val)
			return reason_fail(err, errlen,
					   "option '%s' needs a value", opt);
		if (rdma ? testargs_rdma_option(t, bw, opt, val, err, errlen)
			 : testargs_tcp_option(t, bw, opt, val, err, errlen))
			return -1;
		op_given |= !strcmp(opt, "--op");
	}
	if (rdma && !op_given)
		return reason_fail(err, errlen,
				   "%s needs --op write or --op read", kind);
	/* What the options cannot say alone (an odd --streams with
	 * --direction both, a --cq-mod that does not divide the tx depth,
	 * an RDMA latency size given twice), in the agent's words. */
	if (testlimits_check(p, why, sizeof(why)) < 0)
		return reason_fail(err, errlen, "%s", why);
	return 0;
}
