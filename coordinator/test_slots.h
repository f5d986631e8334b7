/* Who may put traffic on the ring's cables at the same time: the one
 * place that says it, taken by the survey (and its re-checks), the
 * operator's tests and the all-reduce alike, instead of each keeping its
 * own count. A survey or a re-check runs alone (its figures would share
 * the cables); an operator's TCP or RDMA test runs beside other operator
 * tests, never beside a survey; an all-reduce runs alone. Plain state, no
 * event loop; every take is given back exactly once. */
#ifndef RING_TEST_SLOTS_H
#define RING_TEST_SLOTS_H

enum test_slot {
	TEST_SLOT_SURVEY,    /* a survey or a re-check */
	TEST_SLOT_TEST,	     /* an operator's TCP or RDMA test */
	TEST_SLOT_ALLREDUCE, /* a ring all-reduce */
	TEST_SLOT_KINDS
};

struct test_slots {
	unsigned held[TEST_SLOT_KINDS];
};

/* 0 taken, or -1 with errno EBUSY when what holds a slot now excludes
 * kind. */
int test_slots_take(struct test_slots *s, enum test_slot kind);
/* The kind held now that keeps kind from starting (the first in enum
 * order), or TEST_SLOT_KINDS when kind may start. */
enum test_slot test_slots_blocker(const struct test_slots *s,
				  enum test_slot kind);
void test_slots_give(struct test_slots *s, enum test_slot kind);
/* How many of kind are held. */
unsigned test_slots_held(const struct test_slots *s, enum test_slot kind);
/* 1 when an operator's test or an all-reduce holds a slot. */
int test_slots_manual(const struct test_slots *s);

#endif
