/* Who may run beside whom on the cables (test_slots.h). */
#include "test_slots.h"

#include <errno.h>

/* excludes[k][h]: kind k cannot start while kind h is held. */
static const int excludes[TEST_SLOT_KINDS][TEST_SLOT_KINDS] = {
	[TEST_SLOT_SURVEY] = {1, 1, 1},
	[TEST_SLOT_TEST] = {[TEST_SLOT_SURVEY] = 1, [TEST_SLOT_ALLREDUCE] = 1},
	[TEST_SLOT_ALLREDUCE] = {1, 1, 1},
};

enum test_slot test_slots_blocker(const struct test_slots *s,
				  enum test_slot kind)
{
	for (int h = 0; h < TEST_SLOT_KINDS; h++)
		if (excludes[kind][h] && s->held[h])
			return (enum test_slot)h;
	return TEST_SLOT_KINDS;
}

int test_slots_take(struct test_slots *s, enum test_slot kind)
{
	if (test_slots_blocker(s, kind) != TEST_SLOT_KINDS) {
		errno = EBUSY;
		return -1;
	}
	s->held[kind]++;
	return 0;
}

void test_slots_give(struct test_slots *s, enum test_slot kind)
{
	if (s->held[kind])
		s->held[kind]--;
}

unsigned test_slots_held(const struct test_slots *s, enum test_slot kind)
{
	return s->held[kind];
}

int test_slots_manual(const struct test_slots *s)
{
	return s->held[TEST_SLOT_TEST] || s->held[TEST_SLOT_ALLREDUCE];
}
