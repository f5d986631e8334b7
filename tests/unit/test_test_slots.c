/* test_slots: who may run beside whom on the cables. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "coordinator/test_slots.h"

/* A survey runs alone, and nothing starts beside it. */
static void test_survey_alone(void **state)
{
	struct test_slots s = {0};

	(void)state;
	assert_int_equal(test_slots_take(&s, TEST_SLOT_SURVEY), 0);
	for (int k = 0; k < TEST_SLOT_KINDS; k++) {
		errno = 0;
		assert_int_equal(test_slots_take(&s, (enum test_slot)k), -1);
		assert_int_equal(errno, EBUSY);
		assert_int_equal(test_slots_blocker(&s, (enum test_slot)k),
				 TEST_SLOT_SURVEY);
	}
	test_slots_give(&s, TEST_SLOT_SURVEY);
	assert_int_equal(test_slots_blocker(&s, TEST_SLOT_SURVEY),
			 TEST_SLOT_KINDS);
}

/* Operator tests run side by side; no survey or all-reduce beside them;
 * the last one given back frees the cables. */
static void test_tests_side_by_side(void **state)
{
	struct test_slots s = {0};

	(void)state;
	assert_int_equal(test_slots_take(&s, TEST_SLOT_TEST), 0);
	assert_int_equal(test_slots_take(&s, TEST_SLOT_TEST), 0);
	assert_int_equal(test_slots_held(&s, TEST_SLOT_TEST), 2);
	assert_true(test_slots_manual(&s));
	assert_int_equal(test_slots_take(&s, TEST_SLOT_SURVEY), -1);
	assert_int_equal(test_slots_take(&s, TEST_SLOT_ALLREDUCE), -1);
	test_slots_give(&s, TEST_SLOT_TEST);
	assert_int_equal(test_slots_take(&s, TEST_SLOT_SURVEY), -1);
	test_slots_give(&s, TEST_SLOT_TEST);
	assert_false(test_slots_manual(&s));
	assert_int_equal(test_slots_take(&s, TEST_SLOT_SURVEY), 0);
}

/* An all-reduce runs alone: an operator's test waits for it and is told
 * why. A give without a take changes nothing. */
static void test_allreduce_alone(void **state)
{
	struct test_slots s = {0};

	(void)state;
	test_slots_give(&s, TEST_SLOT_ALLREDUCE);
	assert_int_equal(test_slots_held(&s, TEST_SLOT_ALLREDUCE), 0);
	assert_int_equal(test_slots_take(&s, TEST_SLOT_ALLREDUCE), 0);
	assert_int_equal(test_slots_blocker(&s, TEST_SLOT_TEST),
			 TEST_SLOT_ALLREDUCE);
	assert_int_equal(test_slots_take(&s, TEST_SLOT_TEST), -1);
	assert_int_equal(test_slots_take(&s, TEST_SLOT_ALLREDUCE), -1);
	assert_true(test_slots_manual(&s));
	test_slots_give(&s, TEST_SLOT_ALLREDUCE);
	assert_int_equal(test_slots_take(&s, TEST_SLOT_TEST), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_survey_alone),
		cmocka_unit_test(test_tests_side_by_side),
		cmocka_unit_test(test_allreduce_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
