#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl/plan.h"
#include "ringctl/plan_tp.h"
#include "testwriter.h"

/* ringctl plan --layers L --token-ms T: options, the nearest size, the
 * choice of figure, and the reference cluster's arithmetic (40 layers x 36.4 us
 * = 1.456 ms per token = 8.2% of 17.76 ms). */

static int parse(struct plan_opts *o, char *err, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;

	va_start(ap, err);
	for (char *a; (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	err[0] = '\0';
	return plan_cmd_parse(argc, argv, o, err, 512);
}

static void test_parse(void **state)
{
	struct plan_opts *o = calloc(1, sizeof(*o));
	char err[512];

	(void)state;
	assert_non_null(o);
	assert_int_equal(
		parse(o, err, "--layers", "40", "--token-ms", "17.76", NULL),
		0);
	assert_int_equal(o->layers, 40);
	assert_float_equal(o->token_ms, 17.76, 1e-12);
	assert_int_equal(o->ar_bytes, PLAN_TP_BYTES_DEFAULT);
	assert_null(o->ar_bytes_text);
	assert_int_equal(parse(o, err, "--layers=100000", "--token-ms=1e3",
			       "--allreduce-bytes", "20KiB", "--nodes", "n1,n2",
			       NULL),
			 0);
	assert_int_equal(o->layers, 100000);
	assert_float_equal(o->token_ms, 1000, 1e-12);
	assert_int_equal(o->ar_bytes, 20480);
	assert_int_equal(o->n_nodes, 2);

	/* Layers: a whole number 1..100000, nothing else. */
	static const char *const bad_l[] = {"0",   "100001", "-1", "+4",
					    "4x",  "0x10",   " 4", "",
					    "1e2", "4.0"};
	for (size_t i = 0; i < sizeof(bad_l) / sizeof(bad_l[0]); i++) {
		assert_int_equal(parse(o, err, "--layers", bad_l[i],
				       "--token-ms", "17.76", NULL),
				 -1);
		assert_non_null(strstr(err, "--layers: '"));
		assert_non_null(strstr(err, "from 1 to 100000"));
		assert_null(strchr(err, '\n'));
	}
	/* T: more than 0, finite, at most an hour. */
	static const char *const bad_t[] = {
		"0", "-1", "nan", "inf", "0x1", "1e99", "17ms", "", "3600001"};
	for (size_t i = 0; i < sizeof(bad_t) / sizeof(bad_t[0]); i++) {
		assert_int_equal(parse(o, err, "--layers", "40", "--token-ms",
				       bad_t[i], NULL),
				 -1);
		assert_non_null(strstr(err, "--token-ms: '"));
		assert_non_null(strstr(err, "more than 0"));
	}
	assert_int_equal(parse(o, err, "--layers", "40", NULL), -1);
	assert_non_null(strstr(err, "needs --token-ms"));
	assert_int_equal(parse(o, err, "--token-ms", "17.76", NULL), -1);
	assert_non_null(strstr(err, "go with --layers"));
	assert_int_equal(parse(o, err, "--allreduce-bytes", "10K", NULL), -1);
	assert_non_null(strstr(err, "go with --layers"));
	assert_int_equal(parse(o, err, "--layers", "40", "--token-ms", "17.76",
			       "--allreduce-bytes", "0", NULL),
			 -1);
	assert_non_null(strstr(err, "more than 0 and at most 16 GiB"));
	assert_int_equal(parse(o, err, "--layers", "40", "--token-ms", "17.76",
			       "--allreduce-bytes", "17GiB", NULL),
			 -1);
	assert_int_equal(parse(o, err, "--layers", "40", "--token-ms", "17.76",
			       "--allreduce-bytes", "10kb", NULL),
			 -1);
	assert_non_null(strstr(err, "bits"));
	assert_int_equal(parse(o, err, "--layers", "40", "--token-ms", "17.76",
			       "--model-bytes", "800GB", NULL),
			 -1);
	assert_non_null(strstr(err, "on its own"));
	assert_int_equal(parse(o, err, "--layers", "40", "--layers", "41",
			       "--token-ms", "17.76", NULL),
			 -1);
	assert_non_null(strstr(err, "twice"));
	assert_int_equal(parse(o, err, "--layers", NULL), -1);
	assert_non_null(strstr(err, "needs a value"));
	free(o);
}

static void test_nearest(void **state)
{
	static const uint64_t lad[] = {64, 4096, 10240, 20480, 40960};
	static const uint64_t ar[] = {1 << 20, 2 << 20, 4 << 20};
	static const uint64_t tie[] = {4096, 16384};
	double r;

	(void)state;
	assert_int_equal(plan_tp_nearest(lad, 5, 10240, &r), 2);
	assert_float_equal(r, 1, 1e-12);
	/* 10 KB (10^4): still 10240. */
	assert_int_equal(plan_tp_nearest(lad, 5, 10000, &r), 2);
	/* By ratio: 14000 is 1.37x 10240 and 1.46x short of 20480. */
	assert_int_equal(plan_tp_nearest(lad, 5, 14000, &r), 2);
	assert_int_equal(plan_tp_nearest(lad, 5, 15000, &r), 3);
	/* By difference 6000 would pick 4096; by ratio (2.4x) 20480 (1.4x)
	 * is nearer to 14336... and 2048 goes to 4096, not 64. */
	assert_int_equal(plan_tp_nearest(lad, 5, 2048, &r), 1);
	assert_float_equal(r, 2, 1e-12);
	assert_int_equal(plan_tp_nearest(lad, 5, 1, &r), 0);
	assert_int_equal(plan_tp_nearest(lad, 5, 1ull << 30, &r), 4);
	/* A tie goes to the larger size. */
	assert_int_equal(plan_tp_nearest(tie, 2, 8192, &r), 1);
	/* The all-reduce's default ladder is far from 10 KiB. */
	assert_int_equal(plan_tp_nearest(ar, 3, 10240, &r), 0);
	assert_float_equal(r, 102.4, 1e-9);
	assert_int_equal(plan_tp_nearest(lad, 0, 10240, &r), -1);
}

/* The reference cluster's ring n1-n2-n4-n3 with a TCP latency ladder per edge
 * (half round trip p50, us) at 64, 4096, 10240, 20480, 40960 bytes. */
static const char *const ring_names[4] = {"n1", "n2", "n4", "n3"};
static Ring__Edge edges[4];
static Ring__Edge *edgep[4];
static Ring__LatResult lat[4][5], *latp[4][5];
static Ring__Rank rank[4], *rankp[4];
static Ring__Topology topo = RING__TOPOLOGY__INIT;

static void ring_set(double base_us)
{
	static const uint32_t sizes[5] = {64, 4096, 10240, 20480, 40960};
	static const double step[5] = {-5, 0, 4.9, 9.6, 12.1};

	for (int i = 0; i < 4; i++) {
		ring__edge__init(&edges[i]);
		edges[i].a = (char *)ring_names[i];
		edges[i].b = (char *)ring_names[(i + 1) % 4];
		for (int k = 0; k < 5; k++) {
			ring__lat_result__init(&lat[i][k]);
			lat[i][k].size = sizes[k];
			/* n2-n4 is the slowest by 1 us. */
			lat[i][k].p50_us = base_us + step[k] - (i == 1 ? 0 : 1);
			latp[i][k] = &lat[i][k];
		}
		edges[i].latency = latp[i];
		edges[i].n_latency = 5;
		edges[i].measured_ms = 1700000000000ull;
		edgep[i] = &edges[i];
		ring__rank__init(&rank[i]);
		rank[i].rank = (uint32_t)i;
		rank[i].node = (char *)ring_names[i];
		rankp[i] = &rank[i];
	}
	topo.kind = "ring";
	topo.edges = edgep;
	topo.n_edges = 4;
	topo.ranks = rankp;
	topo.n_ranks = 4;
	topo.surveyed_ms = 1700000000000ull;
}

/* The coordinator's last all-reduce over n ranks: the reference cluster's
 * small-message figures, or the default ladder's 1..4 MiB. */
static Ring__AllreduceReport rep;
static Ring__AllreduceReport *repp[1];
static Ring__AllreduceSize ars[4], *arsp[4];
static Ring__AllreduceLastReply last = RING__ALLREDUCE_LAST_REPLY__INIT;

static void ar_set(size_t n, int large)
{
	static const uint64_t small_sizes[4] = {4096, 10240, 20480, 40960};
	static const double small_us[4] = {31.5, 36.4, 41.1, 43.6};

	ring__allreduce_report__init(&rep);
	rep.order = (char **)ring_names;
	rep.n_order = n;
	rep.method = "tcp";
	for (int i = 0; i < 4; i++) {
		ring__allreduce_size__init(&ars[i]);
		ars[i].size = large ? (1ull << 20) << i : small_sizes[i];
		ars[i].time_us = large ? 150.0 * (1 << i) : small_us[i];
		ars[i].verified = 1;
		arsp[i] = &ars[i];
	}
	rep.sizes = arsp;
	rep.n_sizes = 4;
	rep.started_ms = 1700000300000ull;
	rep.finished_ms = 1700000301000ull;
	repp[0] = &rep;
	last.reports = repp;
	last.n_reports = 1;
}

static char *render(const struct plan_opts *o,
		    const Ring__AllreduceLastReply *ar, int *rc)
{
	struct plan_tp_result *res = calloc(1, sizeof(*res));
	struct testwriter t;
	struct writer *w;
	char err[256];

	assert_non_null(res);
	assert_int_equal(plan_tp_compute(&topo, ar, o, res, err, sizeof(err)),
			 0);
	w = testwriter_open(&t, WRITER_JSON);
	*rc = plan_tp_render(w, &topo, o, res, 1700000400000ull);
	free(res);
	return testwriter_close(&t);
}

static struct plan_opts *opts(const char *layers, const char *token_ms,
			      const char *bytes, const char *nodes)
{
	struct plan_opts *o = calloc(1, sizeof(*o));
	char *argv[8], err[512];
	int argc = 0;

	assert_non_null(o);
	argv[argc++] = "--layers";
	argv[argc++] = (char *)layers;
	argv[argc++] = "--token-ms";
	argv[argc++] = (char *)token_ms;
	if (bytes) {
		argv[argc++] = "--allreduce-bytes";
		argv[argc++] = (char *)bytes;
	}
	if (nodes) {
		argv[argc++] = "--nodes";
		argv[argc++] = (char *)nodes;
	}
	if (plan_cmd_parse(argc, argv, o, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return o;
}

/* The reference cluster's figure from the edges' latency: 36.4 us at 10 KiB on the
 * slowest edge, a lower bound. */
static void test_field_notes_latency(void **state)
{
	struct plan_opts *o = opts("40", "17.76", NULL, NULL);
	char *out;
	int rc;

	(void)state;
	ring_set(31.5); /* 10240 bytes: 36.4 us on n2-n4, 35.4 elsewhere */
	out = render(o, NULL, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"source\": \"edge latency\""));
	assert_non_null(strstr(out, "\"per_layer_us_measured\": 36.4"));
	assert_non_null(strstr(out, "\"per_token_ms_computed\": 1.456"));
	assert_non_null(strstr(out, "\"share_pct_computed\": 8.2"));
	assert_non_null(strstr(out, "\"figure_bytes\": 10240"));
	assert_non_null(strstr(out, "on n2-n4"));
	assert_non_null(
		strstr(out, "\"measured_at\": \"2023-11-14T22:13:20Z\""));
	assert_non_null(strstr(out, "\"age_s\": 400"));
	assert_non_null(strstr(out, "40 layers x 36.4 us = 1.456 ms of "
				    "all-reduce per token, 8.2% of 17.76 ms"));
	assert_non_null(strstr(out, "a lower bound"));
	assert_non_null(strstr(out, "--sizes 10KiB"));
	assert_non_null(strstr(out, "the ring waits on its slowest"));
	free(out);

	/* 20 KiB per layer: 41.1 us. */
	free(o);
	o = opts("40", "17.76", "20KiB", NULL);
	out = render(o, NULL, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"per_layer_us_measured\": 41.1"));
	assert_non_null(strstr(out, "\"per_token_ms_computed\": 1.644"));
	free(out);
	free(o);
}

/* An all-reduce over as many ranks measured near the size is preferred
 * to the edges' latency, and says so. */
static void test_allreduce_preferred(void **state)
{
	struct plan_opts *o = opts("40", "17.76", "10KB", NULL);
	char *out;
	int rc;

	(void)state;
	ring_set(10); /* edges at about 14 us: not what is used */
	ar_set(4, 0);
	out = render(o, &last, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"source\": \"allreduce\""));
	assert_non_null(strstr(out, "\"per_layer_us_measured\": 36.4"));
	assert_non_null(strstr(out, "\"per_token_ms_computed\": 1.456"));
	assert_non_null(strstr(out, "\"share_pct_computed\": 8.2"));
	assert_non_null(strstr(out, "ring all-reduce of 10240 bytes over 4 "
				    "ranks (n1,n2,n4,n3)"));
	assert_non_null(
		strstr(out, "\"measured_at\": \"2023-11-14T22:18:20Z\""));
	assert_non_null(strstr(out, "an all-reduce over as many ranks was "
				    "measured near this size"));
	assert_null(strstr(out, "lower bound"));
	assert_null(strstr(out, "not the same nodes"));
	free(out);

	/* As many ranks over other nodes: used, and said. */
	free(o);
	o = opts("40", "17.76", "10KB", "n1,n2,n4,n5");
	topo.edges[0]->b = "n5"; /* n1-n5: the survey knows n5 */
	out = render(o, &last, &rc);
	topo.edges[0]->b = "n2";
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"source\": \"allreduce\""));
	assert_non_null(strstr(out, "the all-reduce ran over n1,n2,n4,n3: as "
				    "many ranks, not the same nodes"));
	free(out);
	free(o);
	o = opts("40", "17.76", "10KB", NULL);

	/* Over another number of ranks: not this ring's figure. */
	ar_set(2, 0);
	out = render(o, &last, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"source\": \"edge latency\""));
	assert_null(strstr(out, "\"figure\": \"allreduce\""));
	free(out);

	/* Only at 1 MiB and up (the default ladder): more than 2x from
	 * 10 KiB, so the edges' latency is used and the run is listed. */
	ar_set(4, 1);
	out = render(o, &last, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"source\": \"edge latency\""));
	assert_non_null(strstr(out, "more than 2x away"));
	free(out);

	/* No edge figure at all: the far all-reduce, with the ratio. */
	for (int i = 0; i < 4; i++)
		edges[i].n_latency = 0;
	out = render(o, &last, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"source\": \"allreduce\""));
	assert_non_null(strstr(out, "40 layers x 150.0 us = 6.000 ms"));
	assert_non_null(strstr(out, "\"share_pct_computed\": 33.8"));
	assert_non_null(strstr(out, "is 104.9x the layer's 10000 bytes"));
	free(out);
	free(o);
}

/* --nodes: the ranks and their edges only. */
static void test_nodes(void **state)
{
	struct plan_opts *o = opts("40", "17.76", NULL, "n1,n2");
	struct plan_tp_result *res = calloc(1, sizeof(*res));
	char err[256], *out;
	int rc;

	(void)state;
	assert_non_null(res);
	ring_set(31.5);
	ar_set(4, 0);
	assert_int_equal(
		plan_tp_compute(&topo, &last, o, res, err, sizeof(err)), 0);
	assert_int_equal(res->n_nodes, 2);
	assert_int_equal(res->n_fig, 1); /* n1-n2; the 4-rank run is not */
	assert_ptr_equal(res->fig[0].edge, &edges[0]);
	assert_float_equal(res->fig[0].us, 35.4, 1e-9);
	out = render(o, &last, &rc);
	assert_non_null(strstr(out, "--nodes n1,n2 --sizes 10KiB"));
	free(out);
	free(o);

	o = opts("40", "17.76", NULL, "n1,n9");
	assert_int_equal(
		plan_tp_compute(&topo, &last, o, res, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no node 'n9'"));
	free(o);
	o = opts("40", "17.76", NULL, "n1");
	assert_int_equal(
		plan_tp_compute(&topo, &last, o, res, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "at least 2 nodes"));
	free(o);

	/* No rank order (a switch): nothing to plan on without --nodes. */
	o = opts("40", "17.76", NULL, NULL);
	topo.n_ranks = 0;
	topo.kind = "switch";
	assert_int_equal(
		plan_tp_compute(&topo, &last, o, res, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no rank order (the data plane is a "
				    "switch)"));
	free(o);
	free(res);
}

/* The latency used and a step without a figure (n3-n1, the closing
 * one): the estimate is given, the step named, exit 1. */
static void test_step_missing(void **state)
{
	struct plan_opts *o = opts("40", "17.76", NULL, NULL);
	char *out;
	int rc;

	(void)state;
	ring_set(31.5);
	edges[3].n_latency = 0;
	out = render(o, NULL, &rc);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "\"per_token_ms_computed\": 1.456"));
	assert_non_null(strstr(out, "no latency figure for n3-n1"));
	free(out);
	/* An all-reduce over the ranks makes the edges moot. */
	ar_set(4, 0);
	out = render(o, &last, &rc);
	assert_int_equal(rc, 0);
	assert_null(strstr(out, "no latency figure"));
	free(out);
	/* Two ranks: one step, no closing one. */
	free(o);
	o = opts("40", "17.76", NULL, "n1,n2");
	out = render(o, NULL, &rc);
	assert_int_equal(rc, 0);
	assert_null(strstr(out, "no latency figure"));
	free(out);
	free(o);
}

/* No figure at all: exit 1, the verdict says what to run. */
static void test_missing(void **state)
{
	struct plan_opts *o = opts("40", "17.76", NULL, NULL);
	char *out;
	int rc;

	(void)state;
	ring_set(31.5);
	for (int i = 0; i < 4; i++)
		edges[i].n_latency = 0;
	out = render(o, NULL, &rc);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "\"verdict\": \"no measured figure"));
	assert_non_null(strstr(out, "ringctl test allreduce"));
	assert_non_null(strstr(out, "\"per_token_ms_computed\": null"));
	free(out);
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_field_notes_latency),
		cmocka_unit_test(test_allreduce_preferred),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_step_missing),
		cmocka_unit_test(test_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
