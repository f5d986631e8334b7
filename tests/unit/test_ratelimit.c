/* ratelimit: one line per key per interval, the repeats counted into the
 * next line, a bounded table whose oldest key makes room. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>

#include "ratelimit.h"

static void test_one_key(void **state)
{
	struct ratelimit r;
	unsigned held = 99;

	(void)state;
	ratelimit_init(&r, 10000);
	/* An agent retrying every 300 ms for 25 s: three lines. */
	assert_true(ratelimit_ok(&r, "10.0.0.2", 1000, &held));
	assert_int_equal(held, 0);
	for (uint64_t t = 1300; t < 11000; t += 300)
		assert_false(ratelimit_ok(&r, "10.0.0.2", t, &held));
	assert_true(ratelimit_ok(&r, "10.0.0.2", 11000, &held));
	assert_int_equal(held, 33);
	assert_false(ratelimit_ok(&r, "10.0.0.2", 20999, &held));
	assert_true(ratelimit_ok(&r, "10.0.0.2", 21000, &held));
	assert_int_equal(held, 1);
}

static void test_keys_apart_and_bounded(void **state)
{
	struct ratelimit r;
	unsigned held;
	char key[32];

	(void)state;
	ratelimit_init(&r, 10000);
	assert_true(ratelimit_ok(&r, "a", 1, &held));
	assert_true(ratelimit_ok(&r, "b", 2, &held));
	assert_false(ratelimit_ok(&r, "a", 3, &held));
	assert_false(ratelimit_ok(&r, "b", 4, &held));
	/* A flood of new keys: each said once, the table never grows; the
	 * oldest ("a") makes room first, so it is said again. */
	for (int i = 0; i < RATELIMIT_SLOTS - 1; i++) {
		snprintf(key, sizeof(key), "x%d", i);
		assert_true(ratelimit_ok(&r, key, 10 + (uint64_t)i, &held));
	}
	assert_true(ratelimit_ok(&r, "a", 100, &held));
	assert_int_equal(held, 0);
	assert_false(ratelimit_ok(&r, "x30", 101, &held));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_key),
		cmocka_unit_test(test_keys_apart_and_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
