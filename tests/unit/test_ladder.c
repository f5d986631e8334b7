/* ladder: the saturation rule shared by the findings and check nccl-env,
 * on the reference cluster's ladder and its variations. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "ladder.h"

static const uint32_t l148[] = {1, 4, 8};

/* The reference cluster (docs/REFERENCE.md): one edge, 1 / 4 / 8 TCP streams at 40.0 / 102.3 /
 * 110.9 Gbps, one direction measured. */
static const double fn_a[] = {40.0, 102.3, 110.9};

static void test_field_notes(void **state)
{
	struct ladder_edge e = {{fn_a, NULL}, {3, 0}};
	struct ladder_sat s;

	(void)state;
	assert_int_equal(ladder_saturation(l148, 3, &e, 1, &s), 0);
	assert_int_equal(s.base, 0);
	assert_int_equal(s.top, 2);
	assert_true(s.saturates);
	assert_int_equal(s.first.streams, 1);
	assert_int_equal(s.first.edges, 1);
	assert_true(fabs(s.first.ratio - 40.0 / 110.9) < 1e-12);
	/* 4 streams reach 92%: enough, so 4 channels. */
	assert_int_equal(s.n_mid, 1);
	assert_int_equal(s.mid[0].streams, 4);
	assert_true(fabs(s.mid[0].ratio - 102.3 / 110.9) < 1e-12);
	assert_int_equal(s.advised.streams, 4);
	assert_true(fabs(s.advised.ratio - 102.3 / 110.9) < 1e-12);
}

static void test_advice(void **state)
{
	double a[3] = {40.0, 90.0, 110.9};
	struct ladder_edge e = {{a, NULL}, {3, 0}};
	struct ladder_sat s;

	(void)state;
	/* 4 streams at 81%: short of 90%, so the top count, ratio 1. */
	assert_int_equal(ladder_saturation(l148, 3, &e, 1, &s), 0);
	assert_true(s.saturates);
	assert_int_equal(s.n_mid, 1);
	assert_int_equal(s.advised.streams, 8);
	assert_true(s.advised.ratio == 1.0);
	assert_int_equal(s.advised.edges, 1);
	/* 4 streams not measured (NaN and < 0 alike): left out, the top. */
	a[1] = NAN;
	assert_int_equal(ladder_saturation(l148, 3, &e, 1, &s), 0);
	assert_int_equal(s.n_mid, 0);
	assert_int_equal(s.advised.streams, 8);
	a[1] = -1.0;
	assert_int_equal(ladder_saturation(l148, 3, &e, 1, &s), 0);
	assert_int_equal(s.n_mid, 0);
	/* 1 stream at 80% exactly: not saturating; the smallest count is
	 * advised, with its own ratio. */
	a[0] = 0.80 * 110.9;
	a[1] = 100.0;
	assert_int_equal(ladder_saturation(l148, 3, &e, 1, &s), 0);
	assert_false(s.saturates);
	assert_int_equal(s.advised.streams, 1);
	assert_true(fabs(s.advised.ratio - 0.80) < 1e-12);
}

/* Four edges, both directions, the ladder in any order: the median over
 * edges (the middle two of four averaged) of the mean over directions. */
static void test_median(void **state)
{
	static const uint32_t l[] = {8, 2, 1, 4};
	/* Steps as l: 8, 2, 1, 4 streams. */
	double g[4][2][4];
	const double r1[] = {0.30, 0.36, 0.40, 0.50};
	struct ladder_edge e[4];
	struct ladder_sat s;

	(void)state;
	for (int i = 0; i < 4; i++) {
		for (int d = 0; d < 2; d++) {
			g[i][d][0] = 100.0;
			g[i][d][1] = 85.0;
			g[i][d][2] = 100.0 * r1[i];
			g[i][d][3] = 95.0;
			e[i].gbps[d] = g[i][d];
			e[i].n[d] = 4;
		}
	}
	/* Edge 3's reverse direction at 1 stream: 0.30, mean 0.40. */
	g[3][1][2] = 30.0;
	assert_int_equal(ladder_saturation(l, 4, e, 4, &s), 0);
	assert_int_equal(s.top, 0);
	assert_int_equal(s.base, 2);
	assert_int_equal(s.first.edges, 4);
	/* Sorted 0.30 0.36 0.40 0.40: (0.36 + 0.40) / 2. */
	assert_true(fabs(s.first.ratio - 0.38) < 1e-12);
	/* Between, smallest first: 2 (85%) then 4 (95%): 4 advised. */
	assert_int_equal(s.n_mid, 2);
	assert_int_equal(s.mid[0].streams, 2);
	assert_int_equal(s.mid[1].streams, 4);
	assert_int_equal(s.advised.streams, 4);
	/* A short array: a step past n[d] is not measured. Edges 0-2 lose
	 * the 4-stream step both ways; edge 3 keeps it. */
	for (int i = 0; i < 3; i++)
		e[i].n[0] = e[i].n[1] = 3;
	assert_int_equal(ladder_saturation(l, 4, e, 4, &s), 0);
	assert_int_equal(s.mid[1].edges, 1);
	/* A top figure of 0 says nothing about that direction. */
	for (int i = 0; i < 4; i++)
		g[i][0][0] = g[i][1][0] = 0.0;
	assert_int_equal(ladder_saturation(l, 4, e, 4, &s), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_nothing_to_judge(void **state)
{
	static const uint32_t one[] = {8, 8};
	static const uint32_t nine[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
	double a[9] = {40.0, 102.3, 110.9, 1, 1, 1, 1, 1, 1};
	struct ladder_edge e = {{a, a}, {9, 9}};
	struct ladder_sat s;

	(void)state;
	/* One count, however many steps. */
	assert_int_equal(ladder_saturation(one, 2, &e, 1, &s), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ladder_saturation(l148, 1, &e, 1, &s), -1);
	/* More steps than the rule takes. */
	assert_int_equal(ladder_saturation(nine, 9, &e, 1, &s), -1);
	/* No edges, or none with both figures. */
	assert_int_equal(ladder_saturation(l148, 3, &e, 0, &s), -1);
	assert_int_equal(ladder_saturation(l148, 3, NULL, 1, &s), -1);
	a[2] = -1.0;
	assert_int_equal(ladder_saturation(l148, 3, &e, 1, &s), -1);
	e.n[0] = e.n[1] = 2; /* the top step is past the arrays */
	a[2] = 110.9;
	assert_int_equal(ladder_saturation(l148, 3, &e, 1, &s), -1);
	/* Duplicate counts: one figure per count, listed once. */
	{
		static const uint32_t dup[] = {1, 4, 4, 8};
		double b[4] = {40.0, 102.3, 50.0, 110.9};
		struct ladder_edge f = {{b, NULL}, {4, 0}};

		assert_int_equal(ladder_saturation(dup, 4, &f, 1, &s), 0);
		assert_int_equal(s.n_mid, 1);
		assert_int_equal(s.mid[0].streams, 4);
		assert_int_equal(s.advised.streams, 4);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_notes),
		cmocka_unit_test(test_advice),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_nothing_to_judge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
