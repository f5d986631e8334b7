/* The operator's tests and their slots (manual_tests.h). */
#include "manual_tests.h"

#include <errno.h>
#include <stdlib.h>

#include "survey_int.h"
#include "test_slots.h"

enum test_slot manual_test_blocker(const struct survey *sv)
{
	return test_slots_blocker(&sv->slots, TEST_SLOT_TEST);
}

struct survey_test *manual_tcp_test_start(struct survey *sv, const char *a,
					  const char *a_if, const char *b,
					  const char *b_addr,
					  const Ring__TestParams *p,
					  survey_test_cb cb, void *arg)
{
	struct survey_test *t;

	/* No node in two tests at once: not while a survey runs. */
	if (test_slots_take(&sv->slots, TEST_SLOT_TEST) < 0)
		return NULL;
	t = sv_test_start(sv, a, a_if, b, b_addr, p, cb, arg, 1);
	if (!t) {
		int err = errno;

		test_slots_give(&sv->slots, TEST_SLOT_TEST);
		errno = err;
	}
	return t;
}

struct survey_test *manual_rdma_test_start(struct survey *sv, const char *a,
					   const char *b,
					   const struct survey_rdma_ends *e,
					   const Ring__TestParams *p,
					   survey_test_cb cb, void *arg)
{
	struct rdmatest_spec sp = {
		.a = a,
		.a_if = e->a_if,
		.a_dev = e->a_dev,
		.b = b,
		.b_if = e->b_if,
		.b_dev = e->b_dev,
		.adjacent = e->adjacent,
		.params = p,
	};
	struct survey_test *t;

	if (test_slots_take(&sv->slots, TEST_SLOT_TEST) < 0)
		return NULL;
	t = sv_rdma_start(sv, &sp, cb, arg, 1);
	if (!t) {
		int err = errno;

		test_slots_give(&sv->slots, TEST_SLOT_TEST);
		errno = err;
	}
	return t;
}

void manual_test_cancel(struct survey_test *t)
{
	sv_test_cancel(t);
}

/* A ring all-reduce as a manual test: no survey or re-check starts while
 * it runs, and it does not start while one does (or while another test
 * runs: its figures would share the cables). */
struct survey_allreduce {
	struct survey *sv;
	struct allreduce_coord *job;
	allreduce_coord_cb cb;
	void *arg;
};

static void manual_ar_done(const Ring__AllreduceReport *rep, void *arg)
{
	struct survey_allreduce *a = arg;

	test_slots_give(&a->sv->slots, TEST_SLOT_ALLREDUCE);
	a->cb(rep, a->arg);
	free(a);
}

struct survey_allreduce *
manual_allreduce_start(struct survey *sv, const struct allreduce_coord_plan *p,
		       allreduce_coord_cb cb, void *arg)
{
	struct survey_allreduce *a;

	if (test_slots_take(&sv->slots, TEST_SLOT_ALLREDUCE) < 0)
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a) {
		test_slots_give(&sv->slots, TEST_SLOT_ALLREDUCE);
		return NULL;
	}
	a->sv = sv;
	a->cb = cb;
	a->arg = arg;
	a->job = allreduce_coord_start(sv->calls, p, manual_ar_done, a);
	if (!a->job) {
		int err = errno;

		test_slots_give(&sv->slots, TEST_SLOT_ALLREDUCE);
		free(a);
		errno = err;
		return NULL;
	}
	return a;
}

void manual_allreduce_cancel(struct survey_allreduce *a)
{
	if (!a)
		return;
	allreduce_coord_cancel(a->job);
	test_slots_give(&a->sv->slots, TEST_SLOT_ALLREDUCE);
	free(a);
}
