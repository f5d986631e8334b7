/* stats: nearest-rank percentiles, mean, min, max on known arrays. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* 1..n, shuffled so that stats_summarize has to sort. */
static double *stats_test_seq(size_t n)
{
	double *v = malloc(n * sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = (double)(i + 1);
	srand(7);
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)rand() % (i + 1);
		double t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
	return v;
}

static const double stats_single[] = {42.5};
/* sorted: 1 1 1 5 5 5 5 5 5 9 */
static const double stats_dup[] = {5, 1, 5, 5, 1, 9, 5, 5, 5, 1};
static const double stats_two[] = {20.0, 10.0};

/* A percentile of the array stats_summarize sorted in place. */
struct stats_pct {
	double p, want;
};

static const struct stats_pct stats_pct_1000[] = {
	{0.1, 1.0}, {0.15, 2.0}, {25.0, 250.0}, {100.0, 1000.0}};
static const struct stats_pct stats_pct_dup[] = {
	{30.0, 1.0}, {31.0, 5.0}, {90.0, 5.0}};

/* want: min, max, mean, p50, p99, p999. v NULL: 1..n shuffled. */
struct stats_case {
	const char *name;
	const double *v;
	size_t n;
	double want[6];
	const struct stats_pct *pct;
	size_t n_pct;
};

static const struct stats_case stats_cases[] = {
	/* ceil(0.999 * 100) = 100 */
	{"1..100", NULL, 100, {1, 100, 50.5, 50, 99, 100}, NULL, 0},
	/* 99.9 * 1000 / 100 is not exactly 999 in binary; the rank is. */
	{"1..1000",
	 NULL,
	 1000,
	 {1, 1000, 500.5, 500, 990, 999},
	 stats_pct_1000,
	 4},
	{"single",
	 stats_single,
	 1,
	 {42.5, 42.5, 42.5, 42.5, 42.5, 42.5},
	 NULL,
	 0},
	{"duplicates", stats_dup, 10, {1, 9, 4.2, 5, 9, 9}, stats_pct_dup, 3},
	/* Two samples: the median is the lower one (nearest rank, no
	 * interpolation). */
	{"two", stats_two, 2, {10, 20, 15, 10, 20, 20}, NULL, 0},
};

static void stats_check(const char *name, const char *what, double got,
			double want)
{
	if (got != want)
		print_error("case '%s': %s is %g, want %g\n", name, what, got,
			    want);
	assert_true(got == want);
}

static void test_summaries(void **state)
{
	static const char *const what[6] = {"min", "max", "mean",
					    "p50", "p99", "p999"};

	(void)state;
	for (size_t i = 0; i < sizeof(stats_cases) / sizeof(stats_cases[0]);
	     i++) {
		const struct stats_case *c = &stats_cases[i];
		struct stats_summary s;
		double *v;

		v = c->v ? malloc(c->n * sizeof(*v)) : stats_test_seq(c->n);
		assert_non_null(v);
		if (c->v)
			memcpy(v, c->v, c->n * sizeof(*v));
		assert_int_equal(stats_summarize(v, c->n, &s), 0);
		assert_int_equal(s.n, c->n);
		double got[6] = {s.min, s.max, s.mean, s.p50, s.p99, s.p999};

		for (size_t j = 0; j < 6; j++)
			stats_check(c->name, what[j], got[j], c->want[j]);
		for (size_t j = 0; j < c->n_pct; j++)
			stats_check(
				c->name, "percentile",
				stats_percentile_sorted(v, c->n, c->pct[j].p),
				c->pct[j].want);
		/* Sorted in place. */
		for (size_t j = 0; !c->v && j < c->n; j++)
			stats_check(c->name, "v[j]", v[j], (double)(j + 1));
		free(v);
	}
}

static void test_empty(void **state)
{
	double v[1] = {0};
	struct stats_summary s;

	(void)state;
	errno = 0;
	assert_int_equal(stats_summarize(v, 0, &s), -1);
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summaries),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
