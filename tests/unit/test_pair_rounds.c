/* pair_rounds: rounds of disjoint pairs (greedy, in the order given) and the
 * circle method for all pairs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/pair_rounds.h"

/* No node twice in a round; every round index below the count. */
static void sched_test_check(const unsigned (*pairs)[2], unsigned n_pairs,
			     unsigned n_nodes, const unsigned *round_of,
			     int rounds)
{
	unsigned char *seen;

	assert_true(rounds >= 0);
	seen = calloc((size_t)n_nodes * (unsigned)(rounds ? rounds : 1), 1);
	assert_non_null(seen);
	for (unsigned i = 0; i < n_pairs; i++) {
		assert_true(round_of[i] < (unsigned)rounds);
		for (int k = 0; k < 2; k++) {
			size_t at = (size_t)round_of[i] * n_nodes + pairs[i][k];

			assert_int_equal(seen[at], 0);
			seen[at] = 1;
		}
	}
	free(seen);
}

/* A ring of n nodes, edges in cycle order; n = 2 is one cable. */
static int sched_test_ring(unsigned n)
{
	unsigned n_pairs = n == 2 ? 1 : n;
	unsigned(*pairs)[2] = calloc(n_pairs, sizeof(*pairs));
	unsigned *round_of = calloc(n_pairs, sizeof(*round_of));
	int rounds;

	assert_non_null(pairs);
	assert_non_null(round_of);
	for (unsigned i = 0; i < n_pairs; i++) {
		pairs[i][0] = i;
		pairs[i][1] = (i + 1) % n;
	}
	rounds = pair_rounds_rounds((const unsigned(*)[2])pairs, n_pairs, n,
				    round_of);
	sched_test_check((const unsigned(*)[2])pairs, n_pairs, n, round_of,
			 rounds);
	free(pairs);
	free(round_of);
	return rounds;
}

static void test_ring_counts(void **state)
{
	(void)state;
	assert_int_equal(sched_test_ring(2), 1);
	assert_int_equal(sched_test_ring(3), 3);
	assert_int_equal(sched_test_ring(4), 2);
	assert_int_equal(sched_test_ring(5), 3);
	assert_int_equal(sched_test_ring(8), 2);
	assert_int_equal(sched_test_ring(16), 2);
	assert_int_equal(sched_test_ring(17), 3);
	assert_int_equal(sched_test_ring(1000), 2);
	assert_int_equal(sched_test_ring(1001), 3);
}

/* The reference cluster's ring 1-2-4-3 as node indices 0-1-3-2, in cycle order. */
static void test_field_notes_ring(void **state)
{
	const unsigned pairs[4][2] = {{0, 1}, {1, 3}, {3, 2}, {2, 0}};
	unsigned round_of[4];

	(void)state;
	assert_int_equal(pair_rounds_rounds(pairs, 4, 4, round_of), 2);
	assert_int_equal(round_of[0], 0);
	assert_int_equal(round_of[1], 1);
	assert_int_equal(round_of[2], 0);
	assert_int_equal(round_of[3], 1);
	sched_test_check(pairs, 4, 4, round_of, 2);
}

/* Greedy on an arbitrary graph (a star): still disjoint rounds. */
static void test_star(void **state)
{
	const unsigned pairs[5][2] = {{0, 1}, {0, 2}, {0, 3}, {4, 0}, {1, 2}};
	unsigned round_of[5];
	int rounds;

	(void)state;
	rounds = pair_rounds_rounds(pairs, 5, 5, round_of);
	assert_int_equal(rounds, 4);
	sched_test_check(pairs, 5, 5, round_of, rounds);
	assert_int_equal(round_of[4], 2);
}

static void test_rounds_errors(void **state)
{
	const unsigned self[1][2] = {{1, 1}};
	const unsigned out_of_range[1][2] = {{0, 4}};
	unsigned round_of[1];

	(void)state;
	assert_int_equal(pair_rounds_rounds(self, 0, 4, round_of), 0);
	errno = 0;
	assert_int_equal(pair_rounds_rounds(self, 1, 4, round_of), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(pair_rounds_rounds(out_of_range, 1, 4, round_of), -1);
	assert_int_equal(errno, EINVAL);
}

/* Every pair of n nodes exactly once, disjoint rounds, n-1 / n rounds. */
static void sched_test_circle(unsigned n)
{
	unsigned total = n * (n - 1) / 2;
	unsigned(*pairs)[2] = calloc(total + 1, sizeof(*pairs));
	unsigned *round_of = calloc(total + 1, sizeof(*round_of));
	unsigned char *met = calloc((size_t)n * n, 1);
	int rounds;

	assert_non_null(pairs);
	assert_non_null(round_of);
	assert_non_null(met);
	rounds = pair_rounds_circle(n, pairs, round_of, total);
	assert_int_equal(rounds, n % 2 ? n : n - 1);
	sched_test_check((const unsigned(*)[2])pairs, total, n, round_of,
			 rounds);
	for (unsigned i = 0; i < total; i++) {
		unsigned a = pairs[i][0], b = pairs[i][1];

		assert_true(a < b && b < n);
		assert_int_equal(met[a * n + b], 0);
		met[a * n + b] = 1;
	}
	for (unsigned a = 0; a < n; a++)
		for (unsigned b = a + 1; b < n; b++)
			assert_int_equal(met[a * n + b], 1);
	/* Even n: every node plays in every round. */
	if (n % 2 == 0) {
		unsigned *per_round =
			calloc((unsigned)rounds, sizeof(unsigned));

		assert_non_null(per_round);
		for (unsigned i = 0; i < total; i++)
			per_round[round_of[i]]++;
		for (int r = 0; r < rounds; r++)
			assert_int_equal(per_round[r], n / 2);
		free(per_round);
	}
	free(met);
	free(pairs);
	free(round_of);
}

static void test_circle(void **state)
{
	(void)state;
	for (unsigned n = 2; n <= 17; n++)
		sched_test_circle(n);
	sched_test_circle(100);
	sched_test_circle(101);
}

static void test_circle_limits(void **state)
{
	unsigned pairs[6][2], round_of[6];

	(void)state;
	assert_int_equal(pair_rounds_circle(0, pairs, round_of, 6), 0);
	assert_int_equal(pair_rounds_circle(1, pairs, round_of, 6), 0);
	errno = 0;
	assert_int_equal(pair_rounds_circle(4, pairs, round_of, 5), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(pair_rounds_circle(4, pairs, round_of, 6), 3);
	errno = 0;
	assert_int_equal(pair_rounds_circle(100000, pairs, round_of, 6), -1);
	assert_int_equal(errno, ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_counts),
		cmocka_unit_test(test_field_notes_ring),
		cmocka_unit_test(test_star),
		cmocka_unit_test(test_rounds_errors),
		cmocka_unit_test(test_circle),
		cmocka_unit_test(test_circle_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
