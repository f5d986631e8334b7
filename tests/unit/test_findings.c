/* findings: the rules on the field notes' figures and variations. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "findings.h"

static const char *const edge_names[] = {"n1-n2", "n2-n4", "n4-n3", "n3-n1",
					 "n1-n4"};
static const char *const dir_names[][2] = {
	{"n1->n2", "n2->n1"}, {"n2->n4", "n4->n2"}, {"n4->n3", "n3->n4"},
	{"n3->n1", "n1->n3"}, {"n1->n4", "n4->n1"},
};

/* The default survey_streams ladder. */
static const struct findings_ladder ladder148 = {{1, 4, 8}, 3, NULL};

/* Edge i with only the 8-stream figure, the same both ways, on a 200G
 * port. */
static struct findings_edge findings_test_edge(unsigned i, double g8)
{
	struct findings_edge e;

	memset(&e, 0, sizeof(e));
	e.name = edge_names[i];
	e.dir_name[0] = dir_names[i][0];
	e.dir_name[1] = dir_names[i][1];
	for (int d = 0; d < 2; d++) {
		e.gbps[d][0] = -1.0;
		e.gbps[d][1] = -1.0;
		e.gbps[d][2] = g8;
	}
	e.nominal_gbps = 200.0;
	return e;
}

/* Edges 0..3 with these 8-stream figures. */
static void findings_test_four(struct findings_edge e[4], const double g8[4])
{
	for (unsigned i = 0; i < 4; i++)
		e[i] = findings_test_edge(i, g8[i]);
}

/* The rules on n edges, room for max findings, must say exactly one, with
 * this code (NULL: any); the finding, for the caller's further checks. */
static const struct finding *findings_test_one(const struct findings_ladder *l,
					       const struct findings_edge *e,
					       unsigned n, unsigned max,
					       const char *code)
{
	static struct finding f[8];

	assert_true(max <= 8);
	assert_int_equal(findings_compute(l, e, n, f, max), 1);
	if (code)
		assert_string_equal(f[0].code, code);
	return &f[0];
}

/* The field notes: 105.2, 95.6, 99.9, 110.7 Gbps at 8 streams against
 * 200G: one uniform ceiling, nothing degraded. */
static void test_field_notes_ceiling(void **state)
{
	const double g8[] = {105.2, 95.6, 99.9, 110.7};
	struct findings_edge e[4];
	const struct finding *f;
	struct finding none[8];

	(void)state;
	findings_test_four(e, g8);
	f = findings_test_one(&ladder148, e, 4, 8, "uniform_ceiling");
	assert_string_equal(f->level, "warn");
	assert_string_equal(
		f->text,
		"every edge tops out at 51% of its 200 Gbps nominal (102.6 "
		"Gbps median, spread 16%): a uniform ceiling - a link-layer or "
		"host limit, not a bad cable; check the host link (PCIe), "
		"PFC/ECN, and unused NIC halves");

	/* The reverse directions a little faster: still the lower counts. */
	for (unsigned i = 0; i < 4; i++)
		e[i].gbps[1][2] = g8[i] + 5.0;
	f = findings_test_one(&ladder148, e, 4, 8, "uniform_ceiling");
	assert_non_null(strstr(f->text, "51% of its 200 Gbps"));

	/* Nominal unknown: "well under nominal" cannot be said. */
	for (unsigned i = 0; i < 4; i++)
		e[i].nominal_gbps = 0.0;
	assert_int_equal(findings_compute(&ladder148, e, 4, none, 8), 0);
}

/* The same edges near nominal: no ceiling to report. */
static void test_near_nominal(void **state)
{
	const double g8[] = {185.0, 190.0, 180.0, 192.0};
	struct findings_edge e[4];
	struct finding f[8];

	(void)state;
	findings_test_four(e, g8);
	assert_int_equal(findings_compute(&ladder148, e, 4, f, 8), 0);
}

/* One edge at half the others' rate: named as degraded, and the spread
 * rules out a uniform ceiling. */
static void test_degraded(void **state)
{
	const double g8[] = {105.2, 52.0, 99.9, 110.7};
	struct findings_edge e[4];
	const struct finding *one;
	struct finding f[8];
	unsigned n;

	(void)state;
	findings_test_four(e, g8);
	one = findings_test_one(&ladder148, e, 4, 8, "degraded_edge");
	assert_string_equal(one->level, "warn");
	assert_string_equal(one->text,
			    "edge n2-n4 tops out at 52.0 Gbps with 8 streams, "
			    "49% of the other edges' median 105.2 Gbps: a "
			    "degraded edge; check its cable, both ports and "
			    "both hosts");

	/* Two edges only: no "others" to compare against. */
	n = findings_compute(&ladder148, &e[1], 2, f, 8);
	assert_int_equal(n, 0);

	/* 75% of the others: within bounds. */
	e[1] = findings_test_edge(1, 0.75 * 105.2);
	n = findings_compute(&ladder148, e, 4, f, 8);
	for (unsigned i = 0; i < n; i++)
		assert_string_not_equal(f[i].code, "degraded_edge");
}

/* The field notes' ladder: 40.0 / 102.3 / 110.9 Gbps for 1 / 4 / 8
 * streams on one edge. */
static void test_saturation(void **state)
{
	struct findings_edge e;
	struct finding none[4];

	(void)state;
	e = findings_test_edge(0, 110.9);
	e.gbps[0][0] = 40.0;
	e.gbps[0][1] = 102.3;
	e.gbps[1][2] = -1.0;
	assert_string_equal(
		findings_test_one(&ladder148, &e, 1, 4, "saturation")->text,
		"1 stream reaches 36% of 8 streams (median over 1 "
		"edge); use at least 4 channels: 4 streams reach "
		"92%");

	/* 4 streams short of 90%: 8 channels. */
	e.gbps[0][1] = 90.0;
	assert_non_null(
		strstr(findings_test_one(&ladder148, &e, 1, 4, NULL)->text,
		       "use at least 8 channels"));

	/* 4 streams not measured: 8 channels, no 4-stream figure. */
	e.gbps[0][1] = -1.0;
	assert_string_equal(findings_test_one(&ladder148, &e, 1, 4, NULL)->text,
			    "1 stream reaches 36% of 8 streams (median over 1 "
			    "edge); use at least 8 channels");

	/* 1 stream at 85% of 8: nothing to say. */
	e.gbps[0][0] = 0.85 * 110.9;
	assert_int_equal(findings_compute(&ladder148, &e, 1, none, 4), 0);
}

/* The ladder on four edges, both directions: median over edges, next to
 * the field notes' ceiling. */
static void test_saturation_many(void **state)
{
	const double g8[] = {105.2, 95.6, 99.9, 110.7};
	const double r1[] = {0.30, 0.36, 0.40, 0.50};
	struct findings_edge e[4];
	struct finding f[8];
	unsigned n;

	(void)state;
	for (unsigned i = 0; i < 4; i++) {
		e[i] = findings_test_edge(i, g8[i]);
		for (int d = 0; d < 2; d++) {
			e[i].gbps[d][0] = r1[i] * g8[i];
			e[i].gbps[d][1] = 0.95 * g8[i];
		}
	}
	n = findings_compute(&ladder148, e, 4, f, 8);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].code, "uniform_ceiling");
	assert_string_equal(f[1].code, "saturation");
	assert_string_equal(f[1].text,
			    "1 stream reaches 38% of 8 streams (median over 4 "
			    "edges); use at least 4 channels: 4 streams reach "
			    "95%");
	/* Room for one: the first. */
	assert_int_equal(findings_compute(&ladder148, e, 4, f, 1), 1);
	assert_string_equal(f[0].code, "uniform_ceiling");
	assert_int_equal(findings_compute(&ladder148, e, 4, f, 0), 0);
}

static void test_asymmetric(void **state)
{
	const struct finding *one;
	struct findings_edge e;
	struct finding f[4];

	(void)state;
	e = findings_test_edge(0, 110.0);
	e.gbps[1][2] = 60.0;
	one = findings_test_one(&ladder148, &e, 1, 4, "asymmetric");
	assert_string_equal(one->level, "warn");
	assert_string_equal(one->text,
			    "edge n1-n2 is asymmetric: n1->n2 110.0 Gbps, "
			    "n2->n1 60.0 Gbps with 8 streams (the slower "
			    "direction 45% below the faster); check both ends' "
			    "port settings and PFC/ECN");

	/* 15% apart: within bounds. */
	e.gbps[1][2] = 0.85 * 110.0;
	assert_int_equal(findings_compute(&ladder148, &e, 1, f, 4), 0);
	/* One direction unmeasured: no verdict. */
	e.gbps[1][2] = -1.0;
	assert_int_equal(findings_compute(&ladder148, &e, 1, f, 4), 0);
}

/* Any ladder: the largest count is the top figure, the smallest the
 * base, the counts between advise. 2 16: no count between, so the top. */
static void test_ladder_2_16(void **state)
{
	const struct findings_ladder ladder = {{2, 16}, 2, NULL};
	const double g16[] = {105.2, 95.6, 99.9, 110.7};
	struct findings_edge e[4];
	struct finding f[8];
	unsigned n;

	(void)state;
	for (unsigned i = 0; i < 4; i++) {
		e[i] = findings_test_edge(i, -1.0);
		for (int d = 0; d < 2; d++) {
			e[i].gbps[d][0] = 0.5 * g16[i];
			e[i].gbps[d][1] = g16[i];
		}
	}
	n = findings_compute(&ladder, e, 4, f, 8);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].code, "uniform_ceiling");
	assert_non_null(strstr(f[0].text, "51% of its 200 Gbps"));
	assert_string_equal(f[1].code, "saturation");
	assert_string_equal(f[1].text,
			    "2 streams reach 50% of 16 streams (median over 4 "
			    "edges); use at least 16 channels");
	/* The top's figures name their count. */
	e[1].gbps[0][1] = e[1].gbps[1][1] = 52.0;
	n = findings_compute(&ladder, e, 4, f, 8);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].code, "degraded_edge");
	assert_string_equal(f[0].text,
			    "edge n2-n4 tops out at 52.0 Gbps with 16 "
			    "streams, 49% of the other edges' median 105.2 "
			    "Gbps: a degraded edge; check its cable, both "
			    "ports and both hosts");
}

/* 1 2 4 8: every count between is reported, the first that is close to
 * the top is advised; the ladder's order does not matter. */
static void test_ladder_1_2_4_8(void **state)
{
	const struct findings_ladder up = {{1, 2, 4, 8}, 4, NULL};
	const struct findings_ladder down = {{8, 4, 2, 1}, 4, NULL};
	struct findings_edge e, r;
	struct finding f[4];

	(void)state;
	e = findings_test_edge(0, -1.0);
	for (int d = 0; d < 2; d++) {
		e.gbps[d][0] = 40.0;
		e.gbps[d][1] = 70.0;
		e.gbps[d][2] = 102.3;
		e.gbps[d][3] = 110.9;
	}
	assert_string_equal(
		findings_test_one(&up, &e, 1, 4, "saturation")->text,
		"1 stream reaches 36% of 8 streams (median over 1 "
		"edge); use at least 4 channels: 2 streams reach "
		"63%, 4 streams reach 92%");
	/* The same figures in the reverse ladder order. */
	r = e;
	for (int d = 0; d < 2; d++)
		for (int s = 0; s < 4; s++)
			r.gbps[d][s] = e.gbps[d][3 - s];
	assert_non_null(strstr(findings_test_one(&down, &r, 1, 4, NULL)->text,
			       "use at least 4 channels: 2 "
			       "streams reach 63%, 4 streams "
			       "reach 92%"));
	/* 2 streams are enough already. */
	e.gbps[0][1] = e.gbps[1][1] = 105.0;
	assert_non_null(strstr(findings_test_one(&up, &e, 1, 4, NULL)->text,
			       "use at least 2 channels: 2 "
			       "streams reach 95%, 4 streams "
			       "reach 92%"));
	/* One count, or a count missing: no saturation, the rest stands. */
	{
		const struct findings_ladder one = {{4}, 1, "4 RDMA QPs"};
		struct findings_edge q = findings_test_edge(0, -1.0);

		q.gbps[0][0] = 110.0;
		q.gbps[1][0] = 60.0;
		assert_non_null(strstr(
			findings_test_one(&one, &q, 1, 4, "asymmetric")->text,
			"with 4 RDMA QPs"));
	}
	/* A ladder the rules cannot take. */
	{
		const struct findings_ladder none = {{0}, 0, NULL};

		assert_int_equal(findings_compute(&none, &e, 1, f, 4), 0);
		assert_int_equal(findings_compute(NULL, &e, 1, f, 4), 0);
	}
}

static void test_empty(void **state)
{
	struct findings_edge e[4];
	struct finding f[4];

	(void)state;
	assert_int_equal(findings_compute(&ladder148, NULL, 0, f, 4), 0);
	assert_int_equal(findings_compute(&ladder148, e, 0, f, 4), 0);
	/* Nothing measured anywhere. */
	for (unsigned i = 0; i < 4; i++)
		e[i] = findings_test_edge(i, -1.0);
	assert_int_equal(findings_compute(&ladder148, e, 4, f, 4), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_notes_ceiling),
		cmocka_unit_test(test_near_nominal),
		cmocka_unit_test(test_degraded),
		cmocka_unit_test(test_saturation),
		cmocka_unit_test(test_saturation_many),
		cmocka_unit_test(test_asymmetric),
		cmocka_unit_test(test_ladder_2_16),
		cmocka_unit_test(test_ladder_1_2_4_8),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
