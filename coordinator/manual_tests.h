/* The operator's tests (ringctl test, test allreduce), started for the
 * control socket: one TCP or RDMA test between two nodes, or a ring
 * all-reduce, each holding its slot (test_slots.h) while it runs, so
 * that no survey or re-check starts meanwhile and none of them starts
 * while one runs. Endpoints come from the survey's lookups (survey.h). */
#ifndef RING_MANUAL_TESTS_H
#define RING_MANUAL_TESTS_H

#include "allreduce_coord.h"
#include "ring.pb-c.h"
#include "survey.h"
#include "test_slots.h"

/* What keeps an operator's TCP or RDMA test from starting now:
 * TEST_SLOT_SURVEY (a survey or re-check measures), TEST_SLOT_ALLREDUCE,
 * or TEST_SLOT_KINDS when nothing does. */
enum test_slot manual_test_blocker(const struct survey *sv);

/* One TCP test: B listens on b_addr, A connects from a_if. The callback
 * gets the assembled report (valid during the call). NULL with errno
 * EBUSY while a survey, a re-check or an all-reduce runs, ENOTCONN (B not
 * connected). */
struct survey_test *manual_tcp_test_start(struct survey *sv, const char *a,
					  const char *a_if, const char *b,
					  const char *b_addr,
					  const Ring__TestParams *p,
					  survey_test_cb cb, void *arg);
/* One RDMA test (TEST_RDMA_BW or TEST_RDMA_LAT, a requests) over the
 * ports of survey_rdma_endpoints, as manual_tcp_test_start. */
struct survey_test *manual_rdma_test_start(struct survey *sv, const char *a,
					   const char *b,
					   const struct survey_rdma_ends *e,
					   const Ring__TestParams *p,
					   survey_test_cb cb, void *arg);
/* Stop either (NULL: nothing); no callback. */
void manual_test_cancel(struct survey_test *t);

/* A ring all-reduce (allreduce_coord.h): EBUSY while a survey, a
 * re-check or another test runs. Cancel it with manual_allreduce_cancel
 * (no callback). */
struct survey_allreduce;
struct survey_allreduce *
manual_allreduce_start(struct survey *sv, const struct allreduce_coord_plan *p,
		       allreduce_coord_cb cb, void *arg);
void manual_allreduce_cancel(struct survey_allreduce *a);

#endif
