/* ringctl's test arguments: `test KIND A B [options]` into a
 * TestParams, with the limits and defaults of testlimits.h. */
#include "testargs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlimits.h"

static int testargs_complain(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int testargs_complain(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int testargs_seconds_ms(const char *s, uint32_t *ms, double max)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < 0 || v > max)
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

/* "64,4096,1M": up to 16 sizes of 1..max bytes. */
static int testargs_sizes(const char *val, int suffixes, uint64_t max,
			  struct testargs *t)
{
	char tmp[256], *save = NULL, *tok;

	if (strlen(val) >= sizeof(tmp))
		return -1;
	snprintf(tmp, sizeof(tmp), "%s", val);
	t->params.n_sizes = 0;
	for (tok = strtok_r(tmp, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (t->params.n_sizes == TESTLIMITS_LAT_SIZES_MAX ||
		    (suffixes ? testlimits_parse_size(tok, 1, max, &v)
			      : testargs_count(tok, 1, max, &v)) < 0)
			return -1;
		t->sizes[t->params.n_sizes++] = (uint32_t)v;
	}
	return t->params.n_sizes ? 0 : -1;
}

/* Latency round trips per size (TCP and RDMA alike), a tenth of it
 * untimed first. */
static int testargs_lat_iterations(Ring__TestParams *p, const char *val,
				   char *err, size_t len)
{
	if (testargs_count32(val, 10, 1000000, &p->iterations) < 0)
		return testargs_complain(
			err, len, "--iterations: '%s' is not 10..1000000", val);
	p->lat_warmup = p->iterations / 10;
	return 0;
}

/* The TCP options, messages as ringctl always gave them. */
static int testargs_tcp_option(struct testargs *t, int bw, const char *opt,
			       const char *val, char *err, size_t len)
{
	Ring__TestParams *p = &t->params;

	if (bw && !strcmp(opt, "--streams")) {
		if (testargs_count32(val, 1, 64, &p->streams) < 0)
			return testargs_complain(
				err, len, "--streams: '%s' is not 1..64", val);
	} else if (bw && !strcmp(opt, "--duration")) {
		if (testargs_seconds_ms(val, &p->duration_ms, 600) < 0 ||
		    p->duration_ms < 100)
			return testargs_complain(
				err, len,
				"--duration: '%s' is not 0.1..600 seconds",
				val);
	} else if (bw && !strcmp(opt, "--warmup")) {
		if (testargs_seconds_ms(val, &p->warmup_ms, 60) < 0)
			return testargs_complain(
				err, len, "--warmup: '%s' is not 0..60 seconds",
				val);
	} else if (bw && !strcmp(opt, "--direction")) {
		if (!strcmp(val, "a-to-b"))
			p->direction = RING__DIRECTION__DIR_A_TO_B;
		else if (!strcmp(val, "b-to-a"))
			p->direction = RING__DIRECTION__DIR_B_TO_A;
		else if (!strcmp(val, "both"))
			p->direction = RING__DIRECTION__DIR_BOTH;
		else
			return testargs_complain(
				err, len,
				"--direction: '%s' is not a-to-b, "
				"b-to-a or both",
				val);
	} else if (!bw && !strcmp(opt, "--iterations")) {
		return testargs_lat_iterations(p, val, err, len);
	} else if (!bw && !strcmp(opt, "--sizes")) {
		if (testargs_sizes(val, 0, 1048576, t) < 0)
			return testargs_complain(
				err, len,
				"--sizes: '%s' is not a list of up "
				"to 16 sizes of 1..1048576 bytes",
				val);
	} else {
		return testargs_complain(err, len, "unknown test option '%s'",
					 opt);
	}
	return 0;
}

static int testargs_gid(const char *opt, const char *val,
			protobuf_c_boolean *set, uint32_t *idx, char *err,
			size_t len)
{
	if (testargs_count32(val, 0, 1023, idx) < 0)
		return testargs_complain(err, len,
					 "%s: '%s' is not a GID index 0..1023",
					 opt, val);
	*set = 1;
	return 0;
}

static int testargs_rdma_option(struct testargs *t, int bw, const char *opt,
				const char *val, char *err, size_t len)
{
	Ring__TestParams *p = &t->params;
	Ring__RdmaParams *r = &t->rdma;
	uint64_t v;

	if (!strcmp(opt, "--op")) {
		if (!strcmp(val, "write"))
			r->op = RING__RDMA_OP__RDMA_OP_WRITE;
		else if (!strcmp(val, "read"))
			r->op = RING__RDMA_OP__RDMA_OP_READ;
		else
			return testargs_complain(
				err, len, "--op: '%s' is not write or read",
				val);
	} else if (!strcmp(opt, "--gid-a")) {
		return testargs_gid(opt, val, &r->a_gid_set, &r->a_gid_index,
				    err, len);
	} else if (!strcmp(opt, "--gid-b")) {
		return testargs_gid(opt, val, &r->b_gid_set, &r->b_gid_index,
				    err, len);
	} else if (!bw && !strcmp(opt, "--sizes")) {
		if (testargs_sizes(val, 1, 16u << 20, t) < 0)
			return testargs_complain(
				err, len,
				"--sizes: '%s' is not a list of up to 16 sizes "
				"of 1 byte..16M (K and M suffixes accepted)",
				val);
	} else if (!bw && !strcmp(opt, "--iterations")) {
		return testargs_lat_iterations(p, val, err, len);
	} else if (!bw) {
		return testargs_complain(err, len,
					 "unknown rdma-lat option '%s'", opt);
	} else if (!strcmp(opt, "--qps")) {
		if (testargs_count32(val, 1, 64, &r->qps) < 0)
			return testargs_complain(
				err, len, "--qps: '%s' is not 1..64", val);
	} else if (!strcmp(opt, "--size")) {
		if (testlimits_parse_size(val, 1, 1u << 30, &v) < 0)
			return testargs_complain(
				err, len,
				"--size: '%s' is not a size of 1 "
				"byte..1G (K and M suffixes "
				"accepted)",
				val);
		r->size = (uint32_t)v;
	} else if (!strcmp(opt, "--duration")) {
		if (testargs_seconds_ms(val, &p->duration_ms, 600) < 0 ||
		    p->duration_ms < 100)
			return testargs_complain(
				err, len,
				"--duration: '%s' is not 0.1..600 seconds",
				val);
	} else if (!strcmp(opt, "--warmup")) {
		if (testargs_seconds_ms(val, &p->warmup_ms, 60) < 0)
			return testargs_complain(
				err, len, "--warmup: '%s' is not 0..60 seconds",
				val);
	} else if (!strcmp(opt, "--iterations")) {
		if (testargs_count(val, 1, 1000000000, &r->iterations) < 0)
			return testargs_complain(
				err, len,
				"--iterations: '%s' is not 1..1000000000 "
				"messages per QP",
				val);
	} else if (!strcmp(opt, "--tx-depth")) {
		if (testargs_count32(val, 1, 16384, &r->tx_depth) < 0)
			return testargs_complain(
				err, len, "--tx-depth: '%s' is not 1..16384",
				val);
	} else if (!strcmp(opt, "--cq-mod")) {
		if (testargs_count32(val, 1, 1024, &r->cq_mod) < 0)
			return testargs_complain(
				err, len, "--cq-mod: '%s' is not 1..1024", val);
	} else if (!strcmp(opt, "--post-list")) {
		if (testargs_count32(val, 1, 1024, &r->post_list) < 0)
			return testargs_complain(
				err, len, "--post-list: '%s' is not 1..1024",
				val);
	} else if (!strcmp(opt, "--mtu")) {
		if (testargs_count32(val, 256, 4096, &r->mtu) < 0 ||
		    (r->mtu & (r->mtu - 1)))
			return testargs_complain(
				err, len,
				"--mtu: '%s' is not 256, 512, 1024, "
				"2048 or 4096",
				val);
	} else {
		return testargs_complain(err, len,
					 "unknown rdma-bw option '%s'", opt);
	}
	return 0;
}

int testargs_parse(int argc, char **argv, struct testargs *t, char *err,
		   size_t errlen)
{
	static const uint32_t lat_sizes[] = {64, 4096, 10240, 20480, 40960};
	Ring__TestParams *p = &t->params;
	const char *kind = argc > 0 ? argv[0] : "";
	int bw = !strcmp(kind, "bw") || !strcmp(kind, "rdma-bw");
	int rdma = !strncmp(kind, "rdma-", 5), op_given = 0;

	memset(t, 0, sizeof(*t));
	ring__test_params__init(p);
	ring__rdma_params__init(&t->rdma);
	if (argc < 3 || (strcmp(kind, "bw") && strcmp(kind, "lat") &&
			 strcmp(kind, "rdma-bw") && strcmp(kind, "rdma-lat")))
		return testargs_complain(err, errlen,
					 "test needs 'bw A B', 'lat A B', "
					 "'rdma-bw A B' or 'rdma-lat A B'");
	t->a = argv[1];
	t->b = argv[2];
	if (bw) {
		p->kind = rdma ? RING__TEST_KIND__TEST_RDMA_BW
			       : RING__TEST_KIND__TEST_TCP_BW;
		p->streams = rdma ? 0 : 8;
		p->duration_ms = 5000;
		p->warmup_ms = 1000;
	} else {
		p->kind = rdma ? RING__TEST_KIND__TEST_RDMA_LAT
			       : RING__TEST_KIND__TEST_TCP_LAT;
		memcpy(t->sizes, lat_sizes, sizeof(lat_sizes));
		p->n_sizes = sizeof(lat_sizes) / sizeof(lat_sizes[0]);
		p->iterations = 1000;
		p->lat_warmup = 100;
	}
	p->sizes = t->sizes;
	if (rdma)
		p->rdma = &t->rdma;
	for (int i = 3; i < argc; i += 2) {
		const char *opt = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val)
			return testargs_complain(
				err, errlen, "option '%s' needs a value", opt);
		if (rdma ? testargs_rdma_option(t, bw, opt, val, err, errlen)
			 : testargs_tcp_option(t, bw, opt, val, err, errlen))
			return -1;
		op_given |= !strcmp(opt, "--op");
	}
	if (rdma && !op_given)
		return testargs_complain(
			err, errlen, "%s needs --op write or --op read", kind);
	if (rdma && t->rdma.tx_depth &&
	    (t->rdma.cq_mod > t->rdma.tx_depth ||
	     t->rdma.post_list > t->rdma.tx_depth))
		return testargs_complain(
			err, errlen,
			"--cq-mod and --post-list must not exceed "
			"--tx-depth");
	if (!rdma && bw && p->direction == RING__DIRECTION__DIR_BOTH &&
	    (p->streams < 2 || p->streams % 2))
		return testargs_complain(
			err, errlen,
			"--direction both needs an even --streams");
	return 0;
}
