#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl/client.h"
#include "ringctl/error_report.h"
#include "ringctl/render.h"
#include "ringctl/ring_arg.h"
#include "ringctl/rings.h"
#include "testwriter.h"

/* ringctl on a site of several rings (issue 24): three rings of four
 * under one coordinator, pod-a healthy, pod-b a ring whose cable n5-n6 is
 * cut (a line now, its order no longer valid), pod-c with one degraded
 * edge; status's table of rings and the details of the two with
 * problems, the machine formats' rings, ranks refused without --ring,
 * --ring's parsing and the requests it goes into. */

#define NR 3
#define NN 12

struct site {
	Ring__StatusReply st;
	Ring__Topology top;
	Ring__RingView ring[NR];
	Ring__RingView *ringp[NR];
	char *nodes[NR][4];
	char *members[NR][4];
	char names[NN][16];
	Ring__Edge edge[NN];
	Ring__Edge *edgep[NN];
	uint32_t ladder[1];
	double gbps[NN][1];
	Ring__Alert alert[3];
	Ring__Alert *alertp[3];
	Ring__NodeStatus node[NN];
	Ring__NodeStatus *nodep[NN];
	Ring__Rank rank[NR][4];
	Ring__Rank *rankp[NR][4];
	char *down[1];
};

static const char *const ids[NR] = {"pod-a", "pod-b", "pod-c"};

static void site_alert(Ring__Alert *a, const char *rule, const char *ring,
		       const char *subject, Ring__Severity sev, const char *msg)
{
	ring__alert__init(a);
	a->rule = (char *)rule;
	a->ring = (char *)ring;
	a->subject = (char *)subject;
	a->severity = sev;
	a->firing = 1;
	a->message = (char *)msg;
	a->first_seen_ms = 1765000000000ull;
}

static int site_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int site_setup(void **state)
{
	struct site *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	ring__status_reply__init(&s->st);
	ring__topology__init(&s->top);
	s->st.coordinator = "mgmt";
	s->st.version = "0.1.0";
	s->st.now_ms = 1765000100000ull;
	s->st.survey_state = "done";
	s->st.health = "critical";
	s->st.health_cause = "cable_down";
	s->st.health_subject = "n5-n6";
	s->st.health_text = "cable n5-n6 is down";
	s->top.kind = "rings";
	s->top.live_kind = "rings";
	s->top.order_invalid = "several rings: name one (--ring ID)";
	s->top.surveyed_ms = 1765000000000ull;
	s->ladder[0] = 8;
	for (int i = 0; i < NN; i++) {
		snprintf(s->names[i], sizeof(s->names[i]), "n%u",
			 (unsigned)(i + 1) % 100);
		ring__node_status__init(&s->node[i]);
		s->node[i].node = s->names[i];
		s->node[i].state = "up";
		s->node[i].expected = 1;
		s->nodep[i] = &s->node[i];
	}
	/* Each ring of four: edges k-(k+1) around it. */
	for (int r = 0; r < NR; r++) {
		Ring__RingView *v = &s->ring[r];

		ring__ring_view__init(v);
		v->id = (char *)ids[r];
		v->kind = "ring";
		v->live_kind = "ring";
		v->order_valid = 1;
		v->health = "healthy";
		v->surveyed_ms = 1765000000000ull;
		for (int k = 0; k < 4; k++) {
			int e = 4 * r + k;
			Ring__Edge *ed = &s->edge[e];
			Ring__Rank *rk = &s->rank[r][k];

			s->nodes[r][k] = s->names[e];
			ring__edge__init(ed);
			ed->a = s->names[4 * r + k];
			ed->b = s->names[4 * r + (k + 1) % 4];
			ed->n_ladder = 1;
			ed->ladder = s->ladder;
			s->gbps[e][0] = 1.9;
			ed->n_gbps_a_to_b = ed->n_gbps_b_to_a = 1;
			ed->gbps_a_to_b = ed->gbps_b_to_a = s->gbps[e];
			ed->nominal_gbps = 2;
			ed->measured_ms = 1765000000000ull;
			s->edgep[e] = ed;
			ring__rank__init(rk);
			rk->rank = (uint32_t)k;
			rk->node = s->names[e];
			rk->mgmt_address = "10.0.0.1";
			rk->next_gid_index = rk->prev_gid_index = -1;
			s->rankp[r][k] = rk;
		}
		v->n_nodes = v->n_order = 4;
		v->order = s->nodes[r];
		/* Members ascending by name (RingView.nodes): n10 < n9. */
		memcpy(s->members[r], s->nodes[r], sizeof(s->members[r]));
		qsort(s->members[r], 4, sizeof(s->members[r][0]), site_cmp);
		v->nodes = s->members[r];
		v->n_ranks = 4;
		v->ranks = s->rankp[r];
		v->slowest_edge = r == 2 ? "n9-n10" : r ? "n5-n6" : "n1-n2";
		v->slowest_gbps = r == 2 ? 0.4 : 1.9;
		s->ringp[r] = v;
	}
	s->gbps[8][0] = 0.4;
	/* pod-b: cable n5-n6 cut since the survey. */
	s->down[0] = "n5-n6";
	s->ring[1].live_kind = "line";
	s->ring[1].live_gap = "n5-n6";
	s->ring[1].order_valid = 0;
	s->ring[1].order_invalid = "cable n5-n6 is down";
	s->ring[1].n_live_cables_down = 1;
	s->ring[1].live_cables_down = s->down;
	s->ring[1].health = "critical";
	s->ring[1].health_cause = "cable_down";
	s->ring[1].health_subject = "n5-n6";
	s->ring[1].health_text = "cable n5-n6 is down";
	s->ring[1].n_alerts = 1;
	/* pod-c: n9-n10 at a fifth of the others. */
	s->ring[2].health = "degraded";
	s->ring[2].health_cause = "edge_slow";
	s->ring[2].health_subject = "n9-n10";
	s->ring[2].health_text = "edge n9-n10 at 0.4 Gbps, 21% of the median";
	s->ring[2].n_alerts = 1;
	site_alert(&s->alert[0], "cable_down", "pod-b", "n5-n6",
		   RING__SEVERITY__SEVERITY_CRITICAL, "cable n5-n6 is down");
	site_alert(&s->alert[1], "edge_slow", "pod-c", "n9-n10",
		   RING__SEVERITY__SEVERITY_WARNING,
		   "edge n9-n10 at 0.4 Gbps, 21% of the median");
	site_alert(&s->alert[2], "store_failing", "", "coordinator",
		   RING__SEVERITY__SEVERITY_WARNING, "the store is failing");
	for (int i = 0; i < 3; i++)
		s->alertp[i] = &s->alert[i];
	s->st.n_alerts = 3;
	s->st.alerts = s->alertp;
	s->top.n_edges = NN;
	s->top.edges = s->edgep;
	s->top.n_rings = NR;
	s->top.rings = s->ringp;
	s->st.topology = &s->top;
	s->st.n_nodes = NN;
	s->st.nodes = s->nodep;
	s->st.n_expected = s->st.n_connected = NN;
	*state = s;
	return 0;
}

static int site_teardown(void **state)
{
	free(*state);
	return 0;
}

static char *status_text(const Ring__StatusReply *st, enum writer_format fmt,
			 int verbose)
{
	struct testwriter t;

	render_status(testwriter_open(&t, fmt), st, verbose);
	return testwriter_close(&t);
}

static void assert_narrow(const char *out)
{
	for (const char *line = out; *line; line = strchr(line, '\n') + 1)
		if ((size_t)(strchr(line, '\n') - line) > 100)
			fail_msg("wider than 100 columns: %.*s",
				 (int)(strchr(line, '\n') - line), line);
}

/* The line of out that starts with prefix (after its indent), or NULL. */
static const char *line_of(const char *out, const char *prefix)
{
	for (const char *l = out; *l; l = strchr(l, '\n') + 1) {
		const char *p = l;

		while (*p == ' ')
			p++;
		if (!strncmp(p, prefix, strlen(prefix)))
			return l;
	}
	return NULL;
}

static void test_status_table(void **state)
{
	struct site *s = *state;
	char *out = status_text(&s->st, WRITER_PLAIN, 0);
	const char *l;

	if (getenv("TEST_PEEK"))
		fputs(out, stderr);

	assert_narrow(out);
	/* A line per ring: id, class, health, nodes, slowest, Gbps, alerts. */
	l = line_of(out, "RING ");
	assert_non_null(l);
	assert_non_null(strstr(l, "CLASS"));
	assert_non_null(strstr(l, "SLOWEST EDGE"));
	l = line_of(out, "pod-a ");
	assert_non_null(l);
	assert_non_null(strstr(l, "healthy"));
	assert_non_null(strstr(l, "1.90"));
	l = line_of(out, "pod-b ");
	assert_non_null(l);
	assert_non_null(strstr(l, "ring, now line"));
	assert_non_null(strstr(l, "critical"));
	l = line_of(out, "pod-c ");
	assert_non_null(l);
	assert_non_null(strstr(l, "degraded"));
	assert_non_null(strstr(l, "0.40"));
	/* Details for the two with problems, none for pod-a. */
	assert_null(line_of(out, "ring pod-a:"));
	l = line_of(out, "ring pod-b:");
	assert_non_null(l);
	assert_non_null(strstr(l, "order_invalid: cable n5-n6 is down"));
	assert_non_null(strstr(l, "picture: n5 "));
	assert_non_null(strstr(l, "cable_down"));
	l = line_of(out, "ring pod-c:");
	assert_non_null(l);
	assert_non_null(strstr(l, "edge_slow"));
	assert_non_null(strstr(l, "=0.40="));
	/* Above: the site's own alert only; each ring's sits under it. */
	l = strstr(out, "store_failing");
	assert_non_null(l);
	assert_true(l < line_of(out, "RING "));
	assert_true(strstr(out, "cable_down:") > line_of(out, "ring pod-b:"));
	/* The node table goes to -v, in one line. */
	assert_null(line_of(out, "NODE "));
	l = line_of(out, "nodes: 12, listed by 'ringctl status -v'");
	assert_non_null(l);
	free(out);
	/* Only rings' alerts fire: no "alerts: (none)" above them. */
	s->st.n_alerts = 2;
	out = status_text(&s->st, WRITER_PLAIN, 0);
	assert_null(strstr(out, "\nalerts:"));
	assert_non_null(strstr(out, "    - critical cable_down:"));
	free(out);
	/* -v: every ring in detail, and the node table. */
	out = status_text(&s->st, WRITER_PLAIN, 1);
	assert_non_null(line_of(out, "ring pod-a:"));
	assert_non_null(line_of(out, "NODE "));
	free(out);
}

/* Long ids and many rings: still 100 columns. */
static void test_status_width(void **state)
{
	struct site *s = *state;
	static const char *const long_ids[NR] = {
		"rack-17-pod-alpha-switchless-ring-of-four-gb10-nodes-aaaaaaa",
		"b", "rack-17-pod-gamma"};
	char *out;

	for (int r = 0; r < NR; r++)
		s->ring[r].id = (char *)long_ids[r];
	s->ring[2].slowest_edge =
		"rack17-node-0009-very-long-name-rack17-node-0010-very-long";
	out = status_text(&s->st, WRITER_PLAIN, 0);
	assert_narrow(out);
	assert_non_null(strstr(out, long_ids[0]));
	free(out);
	out = status_text(&s->st, WRITER_PLAIN, 1);
	assert_narrow(out);
	free(out);
}

static void test_status_json(void **state)
{
	struct site *s = *state;
	char *out = status_text(&s->st, WRITER_JSON, 0);
	const char *p;

	/* Every ring and its fields, in the topology. */
	p = strstr(out, "\"rings\": [");
	assert_non_null(p);
	assert_non_null(strstr(p, "\"id\": \"pod-a\""));
	assert_non_null(strstr(p, "\"id\": \"pod-c\""));
	assert_non_null(strstr(p, "\"slowest_gbps\": 0.4"));
	assert_non_null(strstr(p, "\"live_cables_down\": [\n"));
	assert_non_null(
		strstr(p, "\"order_invalid\": \"cable n5-n6 is down\""));
	assert_non_null(strstr(p, "\"alerts_firing\": 1"));
	assert_non_null(strstr(p, "\"ranks\": ["));
	/* Alerts name their ring; the node table stays whole. */
	assert_non_null(strstr(out, "\"ring\": \"pod-b\""));
	assert_non_null(strstr(out, "\"node\": \"n12\""));
	assert_non_null(strstr(out, "\"kind\": \"rings\""));
	free(out);
	out = status_text(&s->st, WRITER_KEYVALUE, 0);
	assert_non_null(strstr(out, "topology.rings.pod-b.live_kind=line\n"));
	assert_non_null(
		strstr(out, "topology.rings.pod-c.slowest_edge=n9-n10\n"));
	free(out);
}

/* A site of one ring prints as before: rings[0] changes no plain line. */
static void test_one_ring_unchanged(void **state)
{
	struct site *s = *state;
	char *with, *without;

	s->top = (Ring__Topology)RING__TOPOLOGY__INIT;
	s->top.kind = "ring";
	s->top.n_order = 4;
	s->top.order = s->nodes[0];
	s->top.n_ranks = 4;
	s->top.ranks = s->rankp[0];
	s->top.n_edges = 4;
	s->top.edges = s->edgep;
	s->top.surveyed_ms = 1765000000000ull;
	s->st.n_alerts = 0;
	s->st.n_nodes = 4;
	s->st.health = "healthy";
	s->st.health_cause = "";
	s->top.n_rings = 0;
	for (int v = 0; v < 2; v++) {
		without = status_text(&s->st, WRITER_PLAIN, v);
		s->top.n_rings = 1;
		s->top.rings = s->ringp;
		with = status_text(&s->st, WRITER_PLAIN, v);
		s->top.n_rings = 0;
		assert_string_equal(with, without);
		assert_non_null(line_of(with, "NODE "));
		assert_null(line_of(with, "RING "));
		free(with);
		free(without);
	}
}

static void test_ranks_required(void **state)
{
	struct site *s = *state;
	struct testwriter tw;
	char *out;

	error_report_setup(testwriter_stream(&tw));
	error_report_set_format(WRITER_PLAIN);
	error_report_command(NULL, NULL);
	assert_int_equal(rings_required(&s->top, "ranks", 1), 1);
	error_report_set_format(WRITER_JSON);
	assert_int_equal(rings_required(&s->top, "check ranks", 2), 2);
	error_report_setup(stderr);
	error_report_set_format(WRITER_PLAIN);
	out = testwriter_close(&tw);
	if (getenv("TEST_PEEK"))
		fputs(out, stderr);
	assert_non_null(strstr(
		out, "ringctl: ranks needs one ring: this site has 3 rings; "
		     "name one with --ring ID: pod-a (ring, 4 nodes), pod-b "
		     "(ring, 4 nodes), pod-c (ring, 4 nodes)\n"));
	assert_non_null(strstr(out, "\"code\": \"ring_required\""));
	assert_non_null(strstr(out, "\"value\": \"pod-a,pod-b,pod-c\""));
	assert_non_null(strstr(out, "\"fix\": \"--ring ID\""));
	assert_non_null(strstr(out, "{\"error\": "));
	free(out);
	assert_true(rings_several(&s->top));
	s->top.n_rings = 1;
	assert_false(rings_several(&s->top));
	assert_false(rings_several(NULL));
	assert_false(rings_has_problem(&s->ring[0]));
	assert_true(rings_has_problem(&s->ring[1]));
	assert_true(rings_has_problem(&s->ring[2]));
}

/* Hundreds of pods: the error lists the first ones, and says how many
 * more. */
static void test_ranks_required_many(void **state)
{
	struct site *s = *state;
	Ring__RingView *many[40];
	struct testwriter tw;
	char *out;

	for (int i = 0; i < 40; i++)
		many[i] = &s->ring[i % NR];
	s->top.n_rings = 40;
	s->top.rings = many;
	error_report_setup(testwriter_stream(&tw));
	error_report_set_format(WRITER_PLAIN);
	rings_required(&s->top, "ranks", 1);
	error_report_setup(stderr);
	out = testwriter_close(&tw);
	assert_non_null(
		strstr(out, " and 20 more ('ringctl status' lists them)\n"));
	free(out);
}

static void test_ring_arg(void **state)
{
	char *argv[8];
	const char *got[RING_ARG_MAX];
	char err[256];
	size_t n;
	int argc;

	(void)state;
	assert_true(ring_arg_valid("pod-a"));
	assert_true(ring_arg_valid("ring-n1"));
	assert_true(ring_arg_valid("A.b_9"));
	assert_false(ring_arg_valid(""));
	assert_false(ring_arg_valid("-x"));
	assert_false(ring_arg_valid(".x"));
	assert_false(ring_arg_valid("a b"));
	assert_false(ring_arg_valid("a/b"));
	assert_false(ring_arg_valid(
		"0123456789012345678901234567890123456789012345678901234567890123"));
	assert_true(ring_arg_valid(
		"012345678901234567890123456789012345678901234567890123456789012"));

	/* Taken out wherever it stands, the rest kept in order. */
	argc = 4;
	argv[0] = "n1-n2";
	argv[1] = "--ring";
	argv[2] = "pod-a";
	argv[3] = "--since";
	assert_int_equal(
		ring_arg_take(&argc, argv, got, 1, &n, err, sizeof(err)), 0);
	assert_int_equal(argc, 2);
	assert_int_equal(n, 1);
	assert_string_equal(got[0], "pod-a");
	assert_string_equal(argv[0], "n1-n2");
	assert_string_equal(argv[1], "--since");
	argc = 1;
	argv[0] = "--ring=pod-b";
	assert_int_equal(
		ring_arg_take(&argc, argv, got, 1, &n, err, sizeof(err)), 0);
	assert_int_equal(argc, 0);
	assert_string_equal(got[0], "pod-b");

	/* Errors name the value. */
	argc = 1;
	argv[0] = "--ring";
	assert_int_equal(
		ring_arg_take(&argc, argv, got, 1, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--ring needs a ring ID"));
	argc = 2;
	argv[0] = "--ring";
	argv[1] = "pod a;rm";
	assert_int_equal(
		ring_arg_take(&argc, argv, got, 1, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'pod a;rm' is not a ring id"));
	argc = 2;
	argv[0] = "--ring=";
	argv[1] = "x";
	assert_int_equal(
		ring_arg_take(&argc, argv, got, 1, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'' is not a ring id"));
	argc = 4;
	argv[0] = "--ring";
	argv[1] = "pod-a";
	argv[2] = "--ring";
	argv[3] = "pod-b";
	assert_int_equal(
		ring_arg_take(&argc, argv, got, 1, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "one ring here, not also 'pod-b'"));
	/* survey's: several, each once. */
	argc = 4;
	assert_int_equal(ring_arg_take(&argc, argv, got, RING_ARG_MAX, &n, err,
				       sizeof(err)),
			 0);
	assert_int_equal(n, 2);
	assert_string_equal(got[1], "pod-b");
	argc = 4;
	argv[0] = "--ring";
	argv[1] = "pod-a";
	argv[2] = "--ring=pod-a";
	argv[3] = "--wait";
	assert_int_equal(ring_arg_take(&argc, argv, got, RING_ARG_MAX, &n, err,
				       sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "'pod-a' named twice"));
}

/* --ring goes into every request that has a ring field, never over one
 * the caller set, and nowhere without --ring. */
static void test_requests_stamped(void **state)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	Ring__RanksRequest rr = RING__RANKS_REQUEST__INIT;
	Ring__HistoryRequest hr = RING__HISTORY_REQUEST__INIT;
	Ring__WatchRequest wr = RING__WATCH_REQUEST__INIT;
	Ring__AllreduceRequest ar = RING__ALLREDUCE_REQUEST__INIT;
	Ring__InventoryRequest ir = RING__INVENTORY_REQUEST__INIT;

	(void)state;
	req.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	req.status_request = &sr;
	client_stamp_ring(&req);
	assert_string_equal(sr.ring, "");
	client_set_ring("pod-c");
	client_stamp_ring(&req);
	assert_string_equal(sr.ring, "pod-c");
	req.body_case = RING__ENVELOPE__BODY_RANKS_REQUEST;
	req.ranks_request = &rr;
	client_stamp_ring(&req);
	assert_string_equal(rr.ring, "pod-c");
	req.body_case = RING__ENVELOPE__BODY_HISTORY_REQUEST;
	req.history_request = &hr;
	client_stamp_ring(&req);
	assert_string_equal(hr.ring, "pod-c");
	req.body_case = RING__ENVELOPE__BODY_WATCH_REQUEST;
	req.watch_request = &wr;
	client_stamp_ring(&req);
	assert_string_equal(wr.ring, "pod-c");
	req.body_case = RING__ENVELOPE__BODY_ALLREDUCE_REQUEST;
	req.allreduce_request = &ar;
	ar.ring = "pod-a";
	client_stamp_ring(&req);
	assert_string_equal(ar.ring, "pod-a");
	req.body_case = RING__ENVELOPE__BODY_INVENTORY_REQUEST;
	req.inventory_request = &ir;
	client_stamp_ring(&req);
	client_set_ring(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_status_table, site_setup,
						site_teardown),
		cmocka_unit_test_setup_teardown(test_status_width, site_setup,
						site_teardown),
		cmocka_unit_test_setup_teardown(test_status_json, site_setup,
						site_teardown),
		cmocka_unit_test_setup_teardown(test_one_ring_unchanged,
						site_setup, site_teardown),
		cmocka_unit_test_setup_teardown(test_ranks_required, site_setup,
						site_teardown),
		cmocka_unit_test_setup_teardown(test_ranks_required_many,
						site_setup, site_teardown),
		cmocka_unit_test(test_ring_arg),
		cmocka_unit_test(test_requests_stamped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
