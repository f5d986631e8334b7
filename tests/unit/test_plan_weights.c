#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl/plan.h"
#include "ringctl/plan_weights.h"
#include "testwriter.h"

/* ringctl plan --weights: options, the best edge into a node, and the
 * comparison on the reference cluster's figures (local NVMe 9.6-9.9 GB/s, one
 * ring edge about 6.9 GB/s one way). */

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
	assert_int_equal(parse(o, err, "--weights", "/srv/m", NULL), 0);
	assert_string_equal(o->weights, "/srv/m");
	assert_int_equal(o->max_bytes, 0);
	assert_int_equal(parse(o, err, "--weights=/srv/m", "--max-bytes",
			       "1GiB", "--nodes", "n1,n2", NULL),
			 0);
	assert_int_equal(o->max_bytes, 1ull << 30);
	assert_int_equal(o->n_nodes, 2);
	assert_int_equal(parse(o, err, "--weights", "srv/m", NULL), -1);
	assert_non_null(strstr(err, "absolute"));
	assert_int_equal(parse(o, err, "--max-bytes", "1G", NULL), -1);
	assert_non_null(strstr(err, "goes with --weights"));
	assert_int_equal(
		parse(o, err, "--weights", "/a", "--max-bytes", "65GiB", NULL),
		-1);
	assert_non_null(strstr(err, "64 GiB"));
	assert_int_equal(
		parse(o, err, "--weights", "/a", "--max-bytes", "0", NULL), -1);
	assert_int_equal(
		parse(o, err, "--weights", "/a", "--weights", "/b", NULL), -1);
	assert_non_null(strstr(err, "twice"));
	assert_int_equal(parse(o, err, "--weights", NULL), -1);
	assert_non_null(strstr(err, "needs a value"));
	assert_int_equal(
		parse(o, err, "--weights", "/a", "--params", "7B", NULL), -1);
	free(o);
}

/* A 4-node ring n1-n2-n4-n3; edge figures in Gbps. */
static Ring__Edge edges[4];
static Ring__Edge *edgep[4];
static double ladder[4][2][3];
static Ring__Topology topo = RING__TOPOLOGY__INIT;

static void ring_set(double gbps)
{
	static const char *const ab[4][2] = {
		{"n1", "n2"}, {"n2", "n4"}, {"n4", "n3"}, {"n3", "n1"}};

	for (int i = 0; i < 4; i++) {
		ring__edge__init(&edges[i]);
		edges[i].a = (char *)ab[i][0];
		edges[i].b = (char *)ab[i][1];
		/* the 1/4/8-stream ladder: the best step counts */
		ladder[i][0][0] = gbps * 0.36;
		ladder[i][0][1] = gbps * 0.92;
		ladder[i][0][2] = gbps;
		ladder[i][1][0] = -1; /* not measured */
		ladder[i][1][1] = gbps * 0.9;
		ladder[i][1][2] = gbps * 0.99;
		edges[i].gbps_a_to_b = ladder[i][0];
		edges[i].n_gbps_a_to_b = 3;
		edges[i].gbps_b_to_a = ladder[i][1];
		edges[i].n_gbps_b_to_a = 3;
		edges[i].rdma_write_gbps_a_to_b = -1;
		edges[i].rdma_write_gbps_b_to_a = -1;
		edges[i].measured_ms = 1700000000000ull;
		edgep[i] = &edges[i];
	}
	topo.edges = edgep;
	topo.n_edges = 4;
}

static void test_edge_in(void **state)
{
	const Ring__Edge *e;

	(void)state;
	ring_set(55.2);
	/* n2 is B of n1-n2 (in: a_to_b, 55.2) and A of n2-n4 (in: b_to_a,
	 * 54.6): the best is 55.2 over n1-n2. */
	assert_float_equal(plan_weights_edge_in(&topo, "n2", &e), 55.2, 1e-9);
	assert_ptr_equal(e, &edges[0]);
	/* RDMA WRITE into n4 over n4-n3 beats TCP. */
	edges[2].rdma_write_gbps_b_to_a = 80;
	assert_float_equal(plan_weights_edge_in(&topo, "n4", &e), 80, 1e-9);
	assert_ptr_equal(e, &edges[2]);
	/* A node with no edge. */
	assert_true(plan_weights_edge_in(&topo, "n9", &e) < 0);
	assert_null(e);
	assert_true(plan_weights_edge_in(NULL, "n1", &e) < 0);
}

static Ring__ReadTestResult res[4], *resp[4];

static void reads_set(double gbs)
{
	static const char *const names[4] = {"n1", "n2", "n4", "n3"};

	for (int i = 0; i < 4; i++) {
		ring__read_test_result__init(&res[i]);
		res[i].node = (char *)names[i];
		res[i].path = "/srv/m";
		res[i].bytes = 4ull << 30;
		res[i].seconds = (double)res[i].bytes / (gbs * 1e9);
		res[i].direct = 1;
		res[i].files = 3;
		res[i].filesystem = "ext4";
		res[i].device = "259:1";
		res[i].measured_ms = 1700000100000ull;
		resp[i] = &res[i];
	}
}

static char *render(int *rc)
{
	Ring__ReadTestResult all = RING__READ_TEST_RESULT__INIT;
	struct testwriter t;
	struct writer *w = testwriter_open(&t, WRITER_JSON);

	all.path = "/srv/m";
	all.nodes = resp;
	all.n_nodes = 4;
	*rc = plan_weights_render(w, &topo, &all);
	return testwriter_close(&t);
}

static void test_render_field_notes(void **state)
{
	char *out;
	int rc;

	(void)state;
	ring_set(55.2); /* 6.9 GB/s one way */
	reads_set(9.8);
	out = render(&rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, PLAN_WEIGHTS_DISK_WINS));
	assert_non_null(strstr(out, "\"edge_gbytes_per_s_computed\": 6.9"));
	assert_non_null(strstr(out, "\"disk_gbytes_per_s_computed\": 9.8"));
	assert_non_null(
		strstr(out, "\"disk_measured_at\": \"2023-11-14T22:15:00Z\""));
	assert_non_null(strstr(out, "\"faster\": \"disk\""));
	free(out);

	/* The other way: a 200 Gbps edge (25 GB/s) beats a 9.8 GB/s disk. */
	ring_set(200);
	out = render(&rc);
	assert_int_equal(rc, 0);
	assert_null(strstr(out, PLAN_WEIGHTS_DISK_WINS));
	assert_non_null(strstr(out, "a neighbour feeds weights faster"));
	free(out);

	/* One node refused: not every node compared, exit 2. */
	ring_set(55.2);
	res[3].error = "read test: read tests are off on this node: "
		       "agent.conf has no read_path";
	res[3].bytes = 0;
	res[3].seconds = 0;
	out = render(&rc);
	assert_int_equal(rc, 2);
	assert_null(strstr(out, PLAN_WEIGHTS_DISK_WINS));
	assert_non_null(strstr(out, "no read_path"));
	free(out);

	/* Without a survey's edge into n3. */
	reads_set(9.8);
	topo.n_edges = 2; /* n1-n2, n2-n4: nothing reaches n3 */
	out = render(&rc);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(out, "no measured edge"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_edge_in),
		cmocka_unit_test(test_render_field_notes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
