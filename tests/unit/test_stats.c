/* stats: nearest-rank percentiles, mean, min, max on known arrays. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

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

static void test_one_to_hundred(void **state)
{
	double *v = stats_test_seq(100);
	struct stats_summary s;

	(void)state;
	assert_int_equal(stats_summarize(v, 100, &s), 0);
	assert_int_equal(s.n, 100);
	assert_true(s.min == 1.0);
	assert_true(s.max == 100.0);
	assert_true(s.mean == 50.5);
	assert_true(s.p50 == 50.0);
	assert_true(s.p99 == 99.0);
	/* ceil(0.999 * 100) = 100 */
	assert_true(s.p999 == 100.0);
	for (size_t i = 0; i < 100; i++)
		assert_true(v[i] == (double)(i + 1));
	free(v);
}

static void test_one_to_thousand(void **state)
{
	double *v = stats_test_seq(1000);
	struct stats_summary s;

	(void)state;
	assert_int_equal(stats_summarize(v, 1000, &s), 0);
	assert_true(s.min == 1.0);
	assert_true(s.max == 1000.0);
	assert_true(s.mean == 500.5);
	assert_true(s.p50 == 500.0);
	assert_true(s.p99 == 990.0);
	/* 99.9 * 1000 / 100 is not exactly 999 in binary; the rank is. */
	assert_true(s.p999 == 999.0);
	assert_true(stats_percentile_sorted(v, 1000, 0.1) == 1.0);
	assert_true(stats_percentile_sorted(v, 1000, 0.15) == 2.0);
	assert_true(stats_percentile_sorted(v, 1000, 25.0) == 250.0);
	assert_true(stats_percentile_sorted(v, 1000, 100.0) == 1000.0);
	free(v);
}

static void test_single(void **state)
{
	double v[1] = {42.5};
	struct stats_summary s;

	(void)state;
	assert_int_equal(stats_summarize(v, 1, &s), 0);
	assert_int_equal(s.n, 1);
	assert_true(s.min == 42.5 && s.max == 42.5 && s.mean == 42.5);
	assert_true(s.p50 == 42.5 && s.p99 == 42.5 && s.p999 == 42.5);
}

static void test_duplicates(void **state)
{
	double v[] = {5, 1, 5, 5, 1, 9, 5, 5, 5, 1};
	struct stats_summary s;

	(void)state;
	/* sorted: 1 1 1 5 5 5 5 5 5 9 */
	assert_int_equal(stats_summarize(v, 10, &s), 0);
	assert_true(s.min == 1.0);
	assert_true(s.max == 9.0);
	assert_true(s.mean == 4.2);
	assert_true(s.p50 == 5.0);
	assert_true(s.p99 == 9.0);
	assert_true(s.p999 == 9.0);
	assert_true(stats_percentile_sorted(v, 10, 30.0) == 1.0);
	assert_true(stats_percentile_sorted(v, 10, 31.0) == 5.0);
	assert_true(stats_percentile_sorted(v, 10, 90.0) == 5.0);
}

/* Two samples: the median is the lower one (nearest rank, no
 * interpolation). */
static void test_two(void **state)
{
	double v[] = {20.0, 10.0};
	struct stats_summary s;

	(void)state;
	assert_int_equal(stats_summarize(v, 2, &s), 0);
	assert_true(s.p50 == 10.0);
	assert_true(s.p99 == 20.0);
	assert_true(s.mean == 15.0);
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
		cmocka_unit_test(test_one_to_hundred),
		cmocka_unit_test(test_one_to_thousand),
		cmocka_unit_test(test_single),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_two),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
