/* The RDMA test driver (rdmatest.c) end to end with scripted agents: the
 * real driver, the real node table, and the call double of testcall.h,
 * through which each test answers (or does not) every RdmaSetup and
 * RdmaControl the way an agent can: endpoint, result, Error, silence
 * until the deadline, a lost session, a late or duplicate reply. Every
 * case checks the one callback, the report, and that no call of the
 * driver outlives it. Then the rules in front of it (survey_lookup.c):
 * which ports, which nodes can run a test; and the whole way from a
 * ringctl request on the control socket to its TestReport. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "coordinator/control.h"
#include "coordinator/coord_conf.h"
#include "coordinator/manual_tests.h"
#include "frame.h"
#include "coordinator/nodes.h"
#include "coordinator/rdmatest.h"
#include "coordinator/survey.h"
#include "testcall.h"
#include "testlimits.h"

#define SETUP RING__ENVELOPE__BODY_RDMA_SETUP
#define CONTROL RING__ENVELOPE__BODY_RDMA_CONTROL
#define DEADLINE "no answer before the test deadline"
#define LOST "agent session lost during the test"

struct fx {
	struct nodes *table;
	struct tc tc;
	struct rdmatest *t;
	unsigned n_cb;
	Ring__TestReport *rep; /* a deep copy of the one report */
	uint64_t t0;
	Ring__TestParams params;
	Ring__RdmaParams rdma;
	uint32_t sizes[20];
};

static void fx_done(const Ring__TestReport *rep, void *arg)
{
	struct fx *f = arg;

	f->n_cb++;
	if (f->rep)
		fail_msg("a second report: '%s'", rep->error);
	f->rep = frame_copy(&rep->base);
	assert_non_null(f->rep);
	f->t = NULL; /* the driver frees itself when we return */
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	static const char *const names[] = {"n1", "n2"};

	assert_non_null(f);
	f->table = nodes_new();
	assert_non_null(f->table);
	for (int i = 0; i < 2; i++) {
		struct node *n = nodes_get(f->table, names[i], 8);

		assert_non_null(n);
		nodes_mark_up(n, f, "192.168.0.1", "test", 1);
	}
	tc_init(&f->tc, f->table);
	ring__test_params__init(&f->params);
	ring__rdma_params__init(&f->rdma);
	f->params.kind = RING__TEST_KIND__TEST_RDMA_BW;
	f->params.duration_ms = 2000;
	f->params.warmup_ms = 500;
	f->params.rdma = &f->rdma;
	f->rdma.qps = 4;
	f->rdma.size = 65536;
	f->rdma.b_gid_set = 1;
	f->rdma.b_gid_index = 3;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f->rep)
		ring__test_report__free_unpacked(f->rep, NULL);
	tc_release(&f->tc);
	nodes_free(f->table);
	free(f);
	return 0;
}

/* ------------------------------------------------------------ agents */

static void fx_start(struct fx *f, int adjacent)
{
	struct rdmatest_spec sp = {
		.a = "n1",
		.a_if = "r1b",
		.a_dev = "rxe1",
		.b = "n2",
		.b_if = "r2a",
		.b_dev = "",
		.adjacent = adjacent,
		.params = &f->params,
	};

	f->t0 = clock_now_ms();
	f->t = rdmatest_start(&f->tc.ci, &sp, fx_done, f);
	assert_non_null(f->t);
}

/* idx 0: A's (n1) endpoint, 1: B's (n2). gid_type NULL for "RoCE v2". */
static void fx_endpoint(struct fx *f, struct tc_call *c, int idx,
			const char *gid_type, const char *ipv4, int deliver)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__RdmaEndpoint ep = RING__RDMA_ENDPOINT__INIT;
	uint32_t qpn[2] = {100u + (unsigned)idx, 200u + (unsigned)idx};
	char gid[64];

	snprintf(gid, sizeof(gid), "::ffff:%s",
		 ipv4  ? ipv4
		 : idx ? "10.9.1.2"
		       : "10.9.1.1");
	ep.device = idx ? "rxe2" : "rxe1";
	ep.port = 1;
	ep.gid_index = 3;
	ep.gid = ipv4 && !*ipv4 ? "fe80::2" : gid;
	ep.gid_type = (char *)(gid_type ? gid_type : "RoCE v2");
	ep.netdev = idx ? "r2a" : "r1b";
	ep.ipv4 = (char *)(ipv4 ? ipv4 : idx ? "10.9.1.2" : "10.9.1.1");
	ep.prefix = 24;
	ep.qpn = qpn;
	ep.n_qpn = 2;
	ep.rkey = 0x1234u + (unsigned)idx;
	ep.addr = 0x7f0000000000ull + (unsigned)idx;
	ep.length = 65536;
	env.body_case = RING__ENVELOPE__BODY_RDMA_ENDPOINT;
	env.rdma_endpoint = &ep;
	assert_int_equal(tc_reply(&f->tc, c, &env), deliver);
}

static void fx_result(struct fx *f, struct tc_call *c, double gbps,
		      const char *error, Ring__ErrorCode code)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__TestResult r = RING__TEST_RESULT__INIT;
	Ring__LatResult lat = RING__LAT_RESULT__INIT, *latp = &lat;

	r.gbps_sent = gbps;
	r.error = (char *)(error ? error : "");
	r.error_code = code;
	r.method = "rdma";
	if (f->params.kind == RING__TEST_KIND__TEST_RDMA_LAT && !error) {
		lat.size = 64;
		lat.n = 1000;
		lat.p50_us = 3.25;
		r.lat = &latp;
		r.n_lat = 1;
	}
	env.body_case = RING__ENVELOPE__BODY_TEST_RESULT;
	env.test_result = &r;
	assert_int_equal(tc_reply(&f->tc, c, &env), 1);
}

/* A's "no data-plane path" result with what the agent knows of it. */
static void fx_result_no_path(struct fx *f, struct tc_call *c,
			      const char *error, const char *detail)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__TestResult r = RING__TEST_RESULT__INIT;

	r.error = (char *)error;
	r.error_code = RING__ERROR_CODE__ERROR_NOT_ADJACENT;
	r.method = "rdma";
	r.path_detail = (char *)detail;
	env.body_case = RING__ENVELOPE__BODY_TEST_RESULT;
	env.test_result = &r;
	assert_int_equal(tc_reply(&f->tc, c, &env), 1);
}

static struct tc_call *fx_setup(struct fx *f, const char *node)
{
	return tc_get(&f->tc, node, SETUP, 1);
}

static const Ring__RdmaControl *fx_ctl(const struct tc_call *c)
{
	return c->req->rdma_control;
}

/* The nth RdmaControl of action to node; NULL if none. */
static struct tc_call *fx_find_ctl(struct fx *f, const char *node,
				   Ring__RdmaAction action, unsigned nth)
{
	for (unsigned k = 1;; k++) {
		struct tc_call *c = tc_find(&f->tc, node, CONTROL, k);

		if (!c)
			return NULL;
		if (fx_ctl(c)->action == action && --nth == 0)
			return c;
	}
}

static unsigned fx_n_ctl(struct fx *f, const char *node,
			 Ring__RdmaAction action)
{
	unsigned n = 0;

	while (fx_find_ctl(f, node, action, n + 1))
		n++;
	return n;
}

static struct tc_call *fx_connect(struct fx *f, const char *node)
{
	struct tc_call *c =
		fx_find_ctl(f, node, RING__RDMA_ACTION__RDMA_CONNECT, 1);

	if (!c)
		fail_msg("no CONNECT to %s", node);
	return c;
}

static unsigned fx_stops(struct fx *f, const char *node)
{
	return fx_n_ctl(f, node, RING__RDMA_ACTION__RDMA_STOP);
}

/* Start, and B's endpoint in: A's setup is out. */
static void fx_start_b(struct fx *f, int adjacent)
{
	fx_start(f, adjacent);
	fx_endpoint(f, fx_setup(f, "n2"), 1, NULL, NULL, 1);
}

/* Both endpoints in, B's as given (NULL: the usual): B's CONNECT is
 * out. */
static void fx_endpoints_with(struct fx *f, const char *b_gid_type,
			      const char *b_ipv4)
{
	fx_endpoint(f, fx_setup(f, "n2"), 1, b_gid_type, b_ipv4, 1);
	fx_endpoint(f, fx_setup(f, "n1"), 0, NULL, NULL, 1);
}

static void fx_start_ab(struct fx *f, int adjacent)
{
	fx_start(f, adjacent);
	fx_endpoints_with(f, NULL, NULL);
}

/* Up to a running test: both endpoints in, both sides connected. */
static void fx_run(struct fx *f)
{
	fx_endpoints_with(f, NULL, NULL);
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n2")), 1);
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n1")), 1);
}

/* An agent refuses node's setup with an Error. */
static void fx_refuse(struct fx *f, const char *node, Ring__ErrorCode code,
		      const char *text)
{
	assert_int_equal(tc_error(&f->tc, fx_setup(f, node), code, text), 1);
}

static void expect_stops(struct fx *f, unsigned n1, unsigned n2)
{
	assert_int_equal(fx_stops(f, "n1"), n1);
	assert_int_equal(fx_stops(f, "n2"), n2);
}

/* The agents' side of an ending test: a STOP is acknowledged and the
 * stopped side's setup call gets its TestResult; a CONNECT still open is
 * refused. Until nothing moves. */
static void fx_agents_wind_down(struct fx *f)
{
	int moved = 1;

	while (moved) {
		moved = 0;
		for (struct tc_call *c = f->tc.calls; c && !moved;
		     c = c->next) {
			if (c->state != TC_PENDING)
				continue;
			if (c->req->body_case == SETUP) {
				if (!fx_stops(f, c->node))
					continue;
				fx_result(f, c, 0, "stopped", 0);
			} else if (fx_ctl(c)->action ==
				   RING__RDMA_ACTION__RDMA_STOP) {
				assert_int_equal(tc_ack(&f->tc, c), 1);
			} else {
				assert_int_equal(
					tc_error(
						&f->tc, c,
						RING__ERROR_CODE__ERROR_INTERNAL,
						"no such test"),
					1);
			}
			moved = 1;
		}
	}
}

/* Every call still pending is a STOP. */
static void expect_only_stops_pending(struct fx *f)
{
	for (struct tc_call *c = f->tc.calls; c; c = c->next) {
		if (c->state != TC_PENDING)
			continue;
		assert_int_equal(c->req->body_case, CONTROL);
		assert_int_equal(fx_ctl(c)->action,
				 RING__RDMA_ACTION__RDMA_STOP);
	}
}

/* The test is over: one report, and nothing of the driver's is pending
 * but the STOPs nobody waits for, which may be answered (or not) after
 * the driver is gone. */
static void fx_over(struct fx *f)
{
	assert_int_equal(f->n_cb, 1);
	assert_null(f->t);
	assert_non_null(f->rep);
	expect_only_stops_pending(f);
	/* Their replies touch nothing freed (ASan would say). */
	for (struct tc_call *c = f->tc.calls; c; c = c->next)
		if (c->state == TC_PENDING) {
			if (c->seq % 2)
				tc_error(&f->tc, c,
					 RING__ERROR_CODE__ERROR_INTERNAL,
					 "no such test");
			else
				tc_fail(c, -ETIMEDOUT);
		}
	assert_int_equal(tc_pending(&f->tc), 0);
	assert_int_equal(f->n_cb, 1);
}

static void expect_error(struct fx *f, const char *error, Ring__ErrorCode code)
{
	assert_non_null(f->rep);
	assert_string_equal(f->rep->error, error);
	assert_int_equal(f->rep->error_code, code);
	assert_string_equal(f->rep->method, "rdma");
	assert_string_equal(f->rep->a, "n1");
	assert_string_equal(f->rep->b, "n2");
}

/* A's result (gbps), then B's: one report without an error. */
static void fx_finish_ok(struct fx *f, double gbps)
{
	fx_result(f, fx_setup(f, "n1"), gbps, NULL, 0);
	fx_result(f, fx_setup(f, "n2"), 0, NULL, 0);
	fx_over(f);
	expect_error(f, "", 0);
}

/* The agents end what they were told to stop: one report. */
static void fx_wind_down_over(struct fx *f)
{
	fx_agents_wind_down(f);
	fx_over(f);
}

/* The side that did not fail was stopped once, the report waits for its
 * result, then keeps the first error. */
static void fx_other_stopped(struct fx *f, const char *other, const char *error)
{
	assert_int_equal(fx_stops(f, other), 1);
	assert_int_equal(f->n_cb, 0);
	fx_result(f, fx_setup(f, other), 0, "stopped", 0);
	fx_over(f);
	expect_error(f, error, 0);
}

static void same_id(const ProtobufCBinaryData *x, const ProtobufCBinaryData *y)
{
	assert_int_equal(x->len, 16);
	assert_int_equal(y->len, 16);
	assert_memory_equal(x->data, y->data, 16);
}

/* Ready for another test in the same case: both nodes up, no calls. */
static void fx_reset(struct fx *f)
{
	if (f->rep)
		ring__test_report__free_unpacked(f->rep, NULL);
	f->rep = NULL;
	f->n_cb = 0;
	tc_release(&f->tc);
	tc_init(&f->tc, f->table);
	nodes_mark_up(nodes_find(f->table, "n1"), f, "192.168.0.1", "test", 3);
	nodes_mark_up(nodes_find(f->table, "n2"), f, "192.168.0.2", "test", 3);
}

/* ------------------------------------------------------------ success */

/* A side's RdmaSetup as the driver sent it. */
static void expect_setup(const Ring__RdmaSetup *s, int requester,
			 const char *ifname, const char *dev, const char *peer,
			 int gid_set)
{
	assert_int_equal(!!s->requester, requester);
	assert_string_equal(s->interface, ifname);
	assert_string_equal(s->device, dev);
	assert_string_equal(s->peer, peer);
	assert_int_equal(!!s->gid_set, gid_set);
}

/* RDMA WRITE bandwidth: every request as the agents get it, in order, and
 * the report field by field. */
static void test_write_bw(void **state)
{
	struct fx *f = *state;
	const Ring__RdmaSetup *sb, *sa;
	const Ring__RdmaControl *cb, *ca;
	struct tc_call *b, *a;
	unsigned deadline;

	fx_start(f, 1);
	/* B (target) first, and only B. */
	assert_int_equal(f->tc.n_calls, 1);
	b = fx_setup(f, "n2");
	sb = b->req->rdma_setup;
	expect_setup(sb, 0, "r2a", "", "n1", 1);
	assert_int_equal(sb->gid_index, 3);
	assert_int_equal(sb->params->kind, RING__TEST_KIND__TEST_RDMA_BW);
	assert_int_equal(sb->params->rdma->qps, 4);
	assert_int_equal(sb->params->rdma->size, 65536);
	deadline = testlimits_rdma_deadline_ms(&f->params);
	assert_int_equal(sb->deadline_ms, deadline);
	/* Our call outlives the agent's own deadline. */
	assert_true(b->timeout_ms > deadline);
	assert_int_equal(b->interim, RING__ENVELOPE__BODY_RDMA_ENDPOINT);
	assert_int_equal(b->final, RING__ENVELOPE__BODY_TEST_RESULT);

	/* B's endpoint: now A (requester). */
	fx_endpoint(f, b, 1, NULL, NULL, 1);
	assert_int_equal(f->tc.n_calls, 2);
	a = fx_setup(f, "n1");
	sa = a->req->rdma_setup;
	expect_setup(sa, 1, "r1b", "rxe1", "n2", 0);
	assert_int_equal(sa->deadline_ms, deadline);
	same_id(&sa->test_id, &sb->test_id);

	/* A's endpoint: B is connected first, with A's endpoint. */
	fx_endpoint(f, a, 0, NULL, NULL, 1);
	assert_int_equal(f->tc.n_calls, 3);
	cb = fx_ctl(fx_connect(f, "n2"));
	same_id(&cb->test_id, &sb->test_id);
	assert_non_null(cb->peer);
	assert_string_equal(cb->peer->device, "rxe1");
	assert_int_equal(cb->peer->n_qpn, 2);
	assert_int_equal(cb->peer->qpn[0], 100);
	assert_int_equal(cb->peer->rkey, 0x1234);
	assert_true(fx_connect(f, "n2")->timeout_ms > 0);
	assert_int_equal(fx_connect(f, "n2")->final, RING__ENVELOPE__BODY_ACK);

	/* B at RTS: A is connected with B's endpoint, and runs. */
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n2")), 1);
	assert_int_equal(f->tc.n_calls, 4);
	ca = fx_ctl(fx_connect(f, "n1"));
	same_id(&ca->test_id, &sb->test_id);
	assert_string_equal(ca->peer->device, "rxe2");
	assert_int_equal(ca->peer->qpn[1], 201);
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n1")), 1);
	assert_int_equal(f->tc.n_calls, 4);
	assert_int_equal(f->n_cb, 0);

	/* A's result: B is stopped, and the report waits for B's. */
	fx_result(f, a, 93.5, NULL, 0);
	assert_int_equal(fx_stops(f, "n2"), 1);
	assert_int_equal(fx_stops(f, "n1"), 0);
	same_id(&fx_ctl(fx_find_ctl(f, "n2", RING__RDMA_ACTION__RDMA_STOP, 1))
			 ->test_id,
		&sb->test_id);
	assert_int_equal(f->n_cb, 0);
	fx_result(f, b, 0, NULL, 0);
	fx_over(f);

	expect_error(f, "", 0);
	assert_string_equal(f->rep->a_interface, "r1b");
	assert_string_equal(f->rep->b_address, "10.9.1.2");
	assert_int_equal(f->rep->params->kind, RING__TEST_KIND__TEST_RDMA_BW);
	assert_int_equal(f->rep->params->direction,
			 RING__DIRECTION__DIR_A_TO_B);
	assert_int_equal(f->rep->params->duration_ms, 2000);
	assert_int_equal(f->rep->params->rdma->op,
			 RING__RDMA_OP__RDMA_OP_WRITE);
	assert_int_equal(f->rep->params->rdma->qps, 4);
	assert_non_null(f->rep->a_side);
	assert_non_null(f->rep->b_side);
	assert_true(f->rep->a_side->gbps_sent == 93.5);
	assert_string_equal(f->rep->b_side->error, "");
	assert_true(f->rep->gbps_a_to_b == 93.5);
	assert_true(f->rep->gbps_b_to_a == 0);
	assert_true(f->rep->finished_ms >= f->t0 &&
		    f->rep->finished_ms <= clock_now_ms());
	assert_int_equal(f->tc.dropped, 0);
}

/* RDMA READ: the data came from B, so A's count is B -> A; a B without an
 * IPv4-mapped GID is named by its GID. */
static void test_read_bw(void **state)
{
	struct fx *f = *state;

	f->rdma.op = RING__RDMA_OP__RDMA_OP_READ;
	fx_start(f, -1);
	fx_endpoints_with(f, NULL, "");
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n2")), 1);
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n1")), 1);
	fx_finish_ok(f, 41.0);
	assert_string_equal(f->rep->b_address, "fe80::2");
	assert_int_equal(f->rep->params->rdma->op, RING__RDMA_OP__RDMA_OP_READ);
	assert_true(f->rep->gbps_b_to_a == 41.0);
	assert_true(f->rep->gbps_a_to_b == 0);
}

/* Latency: A's per-size results in a_side, no bandwidth figures; more
 * sizes than a test takes are cut to 16; a direction B -> A is A -> B (A
 * is the requester). */
static void test_lat(void **state)
{
	struct fx *f = *state;

	f->params.kind = RING__TEST_KIND__TEST_RDMA_LAT;
	f->params.direction = RING__DIRECTION__DIR_B_TO_A;
	f->params.iterations = 1000;
	for (uint32_t i = 0; i < 20; i++)
		f->sizes[i] = 64u << i;
	f->params.sizes = f->sizes;
	f->params.n_sizes = 20;
	fx_start(f, 1);
	assert_int_equal(fx_setup(f, "n2")->req->rdma_setup->params->n_sizes,
			 16);
	fx_run(f);
	fx_finish_ok(f, 7.0);
	assert_int_equal(f->rep->params->kind, RING__TEST_KIND__TEST_RDMA_LAT);
	assert_int_equal(f->rep->params->direction,
			 RING__DIRECTION__DIR_A_TO_B);
	assert_int_equal(f->rep->params->n_sizes, 16);
	assert_int_equal(f->rep->params->sizes[15], 64u << 15);
	assert_int_equal(f->rep->params->iterations, 1000);
	assert_int_equal(f->rep->a_side->n_lat, 1);
	assert_int_equal(f->rep->a_side->lat[0]->size, 64);
	assert_true(f->rep->a_side->lat[0]->p50_us == 3.25);
	assert_true(f->rep->gbps_a_to_b == 0);
	assert_true(f->rep->gbps_b_to_a == 0);
}

/* ------------------------------------------------------------ refusals */

/* B refuses its setup: the report at once, A never asked, nothing to
 * stop; B's address falls back to its interface. */
static void test_b_refuses_setup(void **state)
{
	struct fx *f = *state;

	fx_start(f, 1);
	fx_refuse(f, "n2", RING__ERROR_CODE__ERROR_INTERNAL,
		  "rxe2: no such device");
	fx_over(f);
	expect_error(f, "n2: rxe2: no such device", 0);
	assert_int_equal(tc_count(&f->tc, "n1", SETUP), 0);
	assert_int_equal(tc_count(&f->tc, NULL, CONTROL), 0);
	assert_string_equal(f->rep->b_address, "r2a");
	assert_null(f->rep->a_side);
	assert_null(f->rep->b_side);
	assert_true(f->rep->gbps_a_to_b == 0);
}

/* A refuses its setup after B's endpoint: B is stopped, and the report
 * waits for B's result but keeps A's error (the first). */
static void test_a_refuses_setup(void **state)
{
	struct fx *f = *state;

	fx_start_b(f, 1);
	fx_refuse(f, "n1", RING__ERROR_CODE__ERROR_BAD_REQUEST,
		  "busy with another test");
	assert_int_equal(fx_stops(f, "n1"), 0);
	fx_other_stopped(f, "n2", "n1: busy with another test");
	assert_int_equal(tc_count(&f->tc, NULL, CONTROL), 1); /* the STOP */
	assert_null(f->rep->a_side);
	assert_non_null(f->rep->b_side);
	assert_string_equal(f->rep->b_side->error, "stopped");
	assert_string_equal(f->rep->b_address, "10.9.1.2");
}

/* B ends with an Error while A's setup is out (the other order of the
 * two): A is stopped; A's endpoint, arriving after that STOP, does not
 * connect A, and A's result ends the test with B's error. */
static void test_b_fails_while_a_sets_up(void **state)
{
	struct fx *f = *state;

	fx_start_b(f, 1);
	fx_refuse(f, "n2", RING__ERROR_CODE__ERROR_INTERNAL,
		  "QP creation failed");
	expect_stops(f, 1, 0);
	assert_int_equal(f->n_cb, 0);
	/* The late interim: A had answered before it read the STOP. */
	fx_endpoint(f, fx_setup(f, "n1"), 0, NULL, NULL, 1);
	assert_int_equal(fx_n_ctl(f, "n1", RING__RDMA_ACTION__RDMA_CONNECT), 0);
	/* Nor is B, whose side has ended: no next step once an error is
	 * recorded. */
	assert_int_equal(fx_n_ctl(f, "n2", RING__RDMA_ACTION__RDMA_CONNECT), 0);
	fx_wind_down_over(f);
	expect_error(f, "n2: QP creation failed", 0);
	assert_string_equal(f->rep->a_side->error, "stopped");
	assert_null(f->rep->b_side);
}

/* ------------------------------------------------------------ interim */

/* No endpoint at all: B's setup ends with a TestResult that carries the
 * error; then the same for A after B's endpoint. */
static void test_interim_missing(void **state)
{
	struct fx *f = *state;

	fx_start(f, 1);
	fx_result(f, fx_setup(f, "n2"), 0, "no GID at index 3",
		  RING__ERROR_CODE__ERROR_INTERNAL);
	fx_over(f);
	expect_error(f, "n2: no GID at index 3", 0);
	assert_int_equal(tc_count(&f->tc, "n1", SETUP), 0);
	assert_non_null(f->rep->b_side);
	assert_string_equal(f->rep->b_side->error, "no GID at index 3");

	fx_reset(f);
	fx_start_b(f, 1);
	fx_result(f, fx_setup(f, "n1"), 0, "no RDMA device on r1b", 0);
	assert_int_equal(fx_stops(f, "n2"), 1);
	fx_wind_down_over(f);
	expect_error(f, "n1: no RDMA device on r1b", 0);
	assert_int_equal(tc_count(&f->tc, NULL, SETUP), 2);
}

/* A duplicate endpoint (the call layer drops it) starts nothing twice:
 * one A setup, one CONNECT each, one report. */
static void test_interim_duplicate(void **state)
{
	struct fx *f = *state;

	fx_start_b(f, 1);
	fx_endpoint(f, fx_setup(f, "n2"), 1, NULL, NULL, 0);
	assert_int_equal(tc_count(&f->tc, "n1", SETUP), 1);
	fx_endpoint(f, fx_setup(f, "n1"), 0, NULL, NULL, 1);
	fx_endpoint(f, fx_setup(f, "n1"), 0, NULL, NULL, 0);
	assert_int_equal(fx_n_ctl(f, "n2", RING__RDMA_ACTION__RDMA_CONNECT), 1);
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n2")), 1);
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n2")), 0);
	assert_int_equal(fx_n_ctl(f, "n1", RING__RDMA_ACTION__RDMA_CONNECT), 1);
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n1")), 1);
	fx_finish_ok(f, 12.0);
	assert_int_equal(f->tc.dropped, 3); /* fx_over drops nothing */
	assert_true(f->rep->gbps_a_to_b == 12.0);
	assert_int_equal(tc_count(&f->tc, NULL, SETUP), 2);
	assert_int_equal(tc_count(&f->tc, NULL, CONTROL), 3);
}

/* B's endpoint after its call timed out: the report is already out (B
 * told to stop, in case it holds the test), the endpoint is dropped and
 * starts nothing. */
static void test_interim_late(void **state)
{
	struct fx *f = *state;

	fx_start(f, 1);
	tc_fail(fx_setup(f, "n2"), -ETIMEDOUT);
	assert_int_equal(fx_stops(f, "n2"), 1);
	fx_over(f);
	expect_error(f, "n2: " DEADLINE, 0);
	fx_endpoint(f, fx_setup(f, "n2"), 1, NULL, NULL, 0);
	assert_int_equal(tc_count(&f->tc, "n1", SETUP), 0);
	assert_int_equal(f->n_cb, 1);
}

/* ------------------------------------------------------------ failures */

enum step {
	ST_B_SETUP,   /* before B's endpoint */
	ST_A_SETUP,   /* before A's endpoint */
	ST_B_CONNECT, /* B's CONNECT unanswered */
	ST_A_CONNECT, /* A's CONNECT unanswered */
	ST_A_RESULT,  /* A running, its result never comes */
	ST_B_RESULT,  /* A done, B's result after the STOP never comes */
	ST_N
};

/* Drive a test up to step s; return the call that is then waiting. */
static struct tc_call *fx_to_step(struct fx *f, enum step s)
{
	if (s == ST_B_SETUP) {
		fx_start(f, 1);
		return fx_setup(f, "n2");
	}
	fx_start_b(f, 1);
	if (s == ST_A_SETUP)
		return fx_setup(f, "n1");
	fx_endpoint(f, fx_setup(f, "n1"), 0, NULL, NULL, 1);
	if (s == ST_B_CONNECT)
		return fx_connect(f, "n2");
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n2")), 1);
	if (s == ST_A_CONNECT)
		return fx_connect(f, "n1");
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n1")), 1);
	if (s == ST_A_RESULT)
		return fx_setup(f, "n1");
	fx_result(f, fx_setup(f, "n1"), 50.0, NULL, 0);
	return fx_setup(f, "n2");
}

static const char *const step_node[ST_N] = {"n2", "n1", "n2", "n1", "n1", "n2"};

/* What the report says when step s ends with why. */
static void step_error(enum step s, const char *why, char *buf, size_t len)
{
	int ctl = s == ST_B_CONNECT || s == ST_A_CONNECT;

	snprintf(buf, len, "%s: %s%s", step_node[s], ctl ? "connect: " : "",
		 why);
}

/* No answer before the deadline at each step: one report naming the
 * node and the step; every side that was set up is stopped and winds
 * down; the side that timed out is told to stop too (it may still hold
 * the test). */
static void test_timeout_each_step(void **state)
{
	struct fx *f = *state;
	char want[256];

	for (int s = 0; s < ST_N; s++) {
		struct tc_call *c = fx_to_step(f, (enum step)s);

		tc_fail(c, -ETIMEDOUT);
		fx_wind_down_over(f);
		step_error((enum step)s, DEADLINE, want, sizeof(want));
		expect_error(f, want, 0);
		/* B always set up and stopped; A stopped whenever set up. */
		expect_stops(f, s == ST_B_SETUP || s == ST_B_RESULT ? 0 : 1, 1);
		if (s == ST_B_RESULT) {
			/* A's measurement survives B's silence. */
			assert_true(f->rep->a_side->gbps_sent == 50.0);
			assert_true(f->rep->gbps_a_to_b == 50.0);
		}
		fx_reset(f);
	}
}

/* A node's session is lost at each step: its calls fail, the other side
 * is stopped, one report. */
static void test_node_down_each_step(void **state)
{
	struct fx *f = *state;
	char want[256];

	for (int s = 0; s < ST_N; s++) {
		enum step st = (enum step)s;
		const char *other = !strcmp(step_node[s], "n1") ? "n2" : "n1";
		int other_set_up = st != ST_B_SETUP;

		fx_to_step(f, st);
		tc_node_down(&f->tc, step_node[s]);
		fx_wind_down_over(f);
		if (st == ST_B_CONNECT || st == ST_A_CONNECT)
			/* The setup call fails first: the side's own
			 * error, not its CONNECT's. */
			snprintf(want, sizeof(want), "%s: %s", step_node[s],
				 LOST);
		else
			step_error(st, LOST, want, sizeof(want));
		expect_error(f, want, 0);
		if (st != ST_B_RESULT && other_set_up)
			assert_int_equal(fx_stops(f, other), 1);
		/* No STOP reached the node that is gone. */
		assert_int_equal(fx_stops(f, step_node[s]),
				 st == ST_B_RESULT ? 1 : 0);
		fx_reset(f);
	}
}

/* B not up: no test, no call, no callback. A not up when B's endpoint
 * comes: B is stopped, the report says so. */
static void test_node_not_up(void **state)
{
	struct fx *f = *state;
	struct rdmatest_spec sp = {.a = "n1",
				   .a_if = "r1b",
				   .a_dev = "",
				   .b = "n2",
				   .b_if = "r2a",
				   .b_dev = "",
				   .adjacent = 1,
				   .params = &f->params};

	nodes_mark_down(nodes_find(f->table, "n2"), "gone", 2);
	errno = 0;
	assert_null(rdmatest_start(&f->tc.ci, &sp, fx_done, f));
	assert_int_equal(errno, ENOTCONN);
	assert_int_equal(f->tc.n_calls, 0);
	assert_int_equal(f->n_cb, 0);
	sp.b = "n9"; /* not in the table at all */
	assert_null(rdmatest_start(&f->tc.ci, &sp, fx_done, f));
	assert_int_equal(errno, ENOTCONN);

	fx_reset(f);
	nodes_mark_down(nodes_find(f->table, "n1"), "gone", 2);
	fx_start_b(f, 1);
	assert_int_equal(tc_count(&f->tc, "n1", SETUP), 0);
	assert_int_equal(fx_stops(f, "n2"), 1);
	fx_wind_down_over(f);
	expect_error(f, "n1: not connected", 0);
	assert_non_null(f->rep->b_side);
}

/* Sending B's CONNECT loses B's session inside the send: B's setup call
 * fails while the driver is still in its own callback. It must neither
 * finish twice nor early, and still stop A. */
static void test_session_lost_inside_send(void **state)
{
	struct fx *f = *state;

	fx_start_b(f, 1);
	f->tc.lose = "n2";
	fx_endpoint(f, fx_setup(f, "n1"), 0, NULL, NULL, 1);
	assert_int_equal(fx_n_ctl(f, "n2", RING__RDMA_ACTION__RDMA_CONNECT), 0);
	fx_other_stopped(f, "n1", "n2: " LOST);

	/* The same when A's session goes with A's CONNECT. */
	fx_reset(f);
	fx_start_ab(f, 1);
	f->tc.lose = "n1";
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n2")), 1);
	fx_other_stopped(f, "n2", "n1: " LOST);

	/* The STOP after A's result loses B: both sides end inside the
	 * driver's own callback, which must finish once, after it. */
	fx_reset(f);
	fx_start(f, 1);
	fx_run(f);
	f->tc.lose = "n2";
	fx_result(f, fx_setup(f, "n1"), 30.0, NULL, 0);
	assert_int_equal(fx_stops(f, "n2"), 0);
	fx_over(f);
	expect_error(f, "n2: " LOST, 0);
	assert_true(f->rep->gbps_a_to_b == 30.0);
	assert_null(f->rep->b_side);
}

/* ------------------------------------------------------------ codes */

#define NO_PATH                                                                \
	"transport retry exceeded before the first completion: no "            \
	"data-plane path from rxe1 port 1 (GID ::ffff:10.9.1.1 on r1b) to n2 " \
	"(::ffff:10.9.1.2)"
#define DETAIL                                                                 \
	"local function rxe1 port 1, its GID ::ffff:10.9.1.1 on netdev r1b; "  \
	"peer GID ::ffff:10.9.1.2; the kernel resolved 10.9.1.2 to MAC "       \
	"02:00:0a:09:01:62 on r1b; route to 10.9.1.2: on link, dev r1b"
#define BETWEEN_NEIGHBOURS                                                     \
	"; between neighbours a wrong function or ARP flux fails this way: "   \
	"check that each address is on the function facing the peer and, "     \
	"with twins on one subnet, net.ipv4.conf arp_ignore=1 and "            \
	"arp_announce=2"

/* "No data-plane path" keeps its code in the report, from A's result or
 * from a refused CONNECT; other codes are text only; the first error
 * wins, code and text. The words are the coordinator's: "not ring
 * neighbours" only when no published edge joins the pair; between
 * neighbours (or when no survey says) both ends, the agent's facts and
 * what fails this way (a wrong function, ARP flux). */
static void test_not_adjacent_code(void **state)
{
	struct fx *f = *state;

	fx_start(f, 0);
	fx_run(f);
	fx_result_no_path(f, fx_setup(f, "n1"), NO_PATH, DETAIL);
	fx_result(f, fx_setup(f, "n2"), 0, NULL, 0);
	fx_over(f);
	expect_error(
		f,
		"n1 and n2 are not ring neighbours (no published edge "
		"joins them): no data-plane path between them; n1: " NO_PATH,
		RING__ERROR_CODE__ERROR_NOT_ADJACENT);

	fx_reset(f);
	fx_start_ab(f, 0);
	assert_int_equal(tc_error(&f->tc, fx_connect(f, "n2"),
				  RING__ERROR_CODE__ERROR_NOT_ADJACENT,
				  "no path to n1"),
			 1);
	fx_wind_down_over(f);
	expect_error(f,
		     "n1 and n2 are not ring neighbours (no published edge "
		     "joins them): no data-plane path between them; n2: no "
		     "path to n1",
		     RING__ERROR_CODE__ERROR_NOT_ADJACENT);

	/* Neighbours: never "not ring neighbours"; both functions and
	 * netdevs, the neighbour MAC the kernel resolved. */
	fx_reset(f);
	fx_start(f, 1);
	fx_run(f);
	fx_result_no_path(f, fx_setup(f, "n1"), NO_PATH, DETAIL);
	fx_result(f, fx_setup(f, "n2"), 0, NULL, 0);
	fx_over(f);
	expect_error(f,
		     "no RDMA path from n1 rxe1 port 1 (netdev r1b) to n2 rxe2 "
		     "port 1 (netdev r2a) although they are neighbours (an "
		     "edge joins them): n1: " NO_PATH
		     "; " DETAIL BETWEEN_NEIGHBOURS,
		     RING__ERROR_CODE__ERROR_NOT_ADJACENT);

	/* No survey yet: not said either way. */
	fx_reset(f);
	fx_start(f, -1);
	fx_run(f);
	fx_result_no_path(f, fx_setup(f, "n1"), NO_PATH, "");
	fx_result(f, fx_setup(f, "n2"), 0, NULL, 0);
	fx_over(f);
	expect_error(f,
		     "no RDMA path from n1 rxe1 port 1 (netdev r1b) to n2 rxe2 "
		     "port 1 (netdev r2a) although no survey has said whether "
		     "they are neighbours: n1: " NO_PATH BETWEEN_NEIGHBOURS,
		     RING__ERROR_CODE__ERROR_NOT_ADJACENT);

	/* Another code first: its text, no code, whatever follows. */
	fx_reset(f);
	fx_start(f, 0);
	fx_run(f);
	fx_result(f, fx_setup(f, "n1"), 0, "CQ overrun",
		  RING__ERROR_CODE__ERROR_INTERNAL);
	fx_result(f, fx_setup(f, "n2"), 0, "no path",
		  RING__ERROR_CODE__ERROR_NOT_ADJACENT);
	fx_over(f);
	expect_error(f, "n1: CQ overrun", 0);
}

/* The GIDs the agents picked disagree: no CONNECT, both sides stopped,
 * the rules' message. A subnet difference is refused between neighbours
 * only: across a diagonal the test runs. */
static void test_gid_mismatch(void **state)
{
	struct fx *f = *state;

	fx_start(f, 0);
	fx_endpoints_with(f, "RoCE v1", NULL);
	assert_int_equal(tc_count(&f->tc, NULL, CONTROL), 2);
	expect_stops(f, 1, 1);
	fx_wind_down_over(f);
	assert_non_null(strstr(f->rep->error, "GID type mismatch: n1 uses "
					      "index 3"));
	assert_non_null(strstr(f->rep->error, "--gid-a/--gid-b"));
	assert_int_equal(f->rep->error_code, 0);

	fx_reset(f);
	fx_start(f, 1);
	fx_endpoints_with(f, NULL, "10.9.2.2");
	assert_int_equal(fx_n_ctl(f, "n2", RING__RDMA_ACTION__RDMA_CONNECT), 0);
	expect_stops(f, 1, 1);
	fx_wind_down_over(f);
	assert_non_null(strstr(f->rep->error, "GID subnet mismatch"));

	fx_reset(f);
	fx_start(f, 0);
	fx_endpoints_with(f, NULL, "10.9.2.2");
	assert_int_equal(fx_n_ctl(f, "n2", RING__RDMA_ACTION__RDMA_CONNECT), 1);
	assert_int_equal(fx_stops(f, "n2"), 0);
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n2")), 1);
	assert_int_equal(tc_ack(&f->tc, fx_connect(f, "n1")), 1);
	fx_finish_ok(f, 9.0);
}

/* ------------------------------------------------------------ cancel */

/* Cancelled at each step: no callback, the driver's calls cancelled, a
 * STOP to every side that holds the test, and those STOPs answerable
 * after the driver is gone. */
static void test_cancel(void **state)
{
	struct fx *f = *state;

	rdmatest_cancel(NULL);
	for (int s = 0; s < ST_N; s++) {
		enum step st = (enum step)s;

		fx_to_step(f, st);
		assert_non_null(f->t);
		rdmatest_cancel(f->t);
		f->t = NULL;
		assert_int_equal(f->n_cb, 0);
		/* One STOP per side at most: B stopped after A's result
		 * gets no second one. */
		expect_stops(f, st == ST_B_SETUP || st == ST_B_RESULT ? 0 : 1,
			     1);
		expect_only_stops_pending(f);
		for (struct tc_call *c = f->tc.calls; c; c = c->next)
			if (c->state == TC_PENDING)
				assert_int_equal(tc_ack(&f->tc, c), 1);
		/* The agents' results find no call. */
		for (struct tc_call *c = f->tc.calls; c; c = c->next)
			if (c->req->body_case == SETUP)
				assert_int_equal(
					tc_error(
						&f->tc, c,
						RING__ERROR_CODE__ERROR_INTERNAL,
						"stopped"),
					0);
		assert_int_equal(f->n_cb, 0);
		fx_reset(f);
	}
}

/* ------------------------------------------------------------ rules */

/* An inventory: mgmt0 (management) with an active RDMA port, each data
 * interface of ifs with the port state given (NULL: no RDMA device). */
static Ring__Inventory *inv_new(const char *const *ifs, const char *const *st,
				unsigned n)
{
	Ring__Inventory inv = RING__INVENTORY__INIT;
	Ring__NetInterface nif[4], *nifp[4];
	Ring__Ipv4Address ip[4], *ipp[4];
	Ring__RdmaDevice dev[4], *devp[4];
	Ring__RdmaPort port[4], *portp[4];
	char addr[4][32], dname[4][16];
	unsigned nd = 0;

	assert_true(n < 4);
	for (unsigned k = 0; k <= n; k++) {
		ring__net_interface__init(&nif[k]);
		ring__ipv4_address__init(&ip[k]);
		snprintf(addr[k], sizeof(addr[k]), "10.9.%u.1", k);
		ip[k].address = addr[k];
		ip[k].prefix = 24;
		ipp[k] = &ip[k];
		nif[k].ipv4 = &ipp[k];
		nif[k].n_ipv4 = 1;
		nif[k].name = (char *)(k ? ifs[k - 1] : "mgmt0");
		nifp[k] = &nif[k];
		if (k && !st[k - 1])
			continue;
		ring__rdma_port__init(&port[nd]);
		port[nd].port = 1;
		port[nd].state = (char *)(k ? st[k - 1] : "ACTIVE");
		port[nd].netdev = nif[k].name;
		portp[nd] = &port[nd];
		ring__rdma_device__init(&dev[nd]);
		snprintf(dname[nd], sizeof(dname[nd]), "rxe%u", k);
		dev[nd].name = dname[nd];
		dev[nd].ports = &portp[nd];
		dev[nd].n_ports = 1;
		devp[nd] = &dev[nd];
		nd++;
	}
	nif[0].management = 1;
	inv.interfaces = nifp;
	inv.n_interfaces = n + 1;
	inv.rdma_devices = devp;
	inv.n_rdma_devices = nd;
	return frame_copy(&inv.base);
}

/* Before any survey (adjacent -1) each node's first data interface with
 * an active port, never the management one; a node with none, or whose
 * agent does not run RDMA tests, is refused with the reason. */
static void test_rules_endpoints(void **state)
{
	struct fx *f = *state;
	struct event_base *base = event_base_new();
	struct coord_conf conf;
	struct survey *sv;
	struct survey_rdma_ends e;
	char why[512];
	char *caps[] = {"inventory", "tcp_test", "rdma_test"};
	char *old[] = {"inventory", "tcp_test"};
	static const char *const ifs1[] = {"p1", "p2"},
				 *const st1[] = {"DOWN", "4: ACTIVE"},
				 *const ifs3[] = {"p1"},
				 *const st3[] = {"DOWN"}, *const st4[] = {NULL};
	struct node *n1 = nodes_find(f->table, "n1"),
		    *n2 = nodes_find(f->table, "n2"),
		    *n3 = nodes_get(f->table, "n3", 8),
		    *n4 = nodes_get(f->table, "n4", 8);

	assert_non_null(base);
	coord_conf_defaults(&conf);
	sv = survey_new(base, &conf, f->table, &f->tc.ci);
	assert_non_null(sv);
	nodes_set_inventory(n1, inv_new(ifs1, st1, 2));
	nodes_set_inventory(n2, inv_new(ifs1, st1, 2));
	nodes_set_inventory(n3, inv_new(ifs3, st3, 1));
	nodes_set_inventory(n4, inv_new(ifs3, st4, 1));
	for (int i = 0; i < 2; i++)
		nodes_set_capabilities(i ? n2 : n1, caps, 3);
	nodes_mark_up(n3, f, "192.168.0.3", "test", 1);
	nodes_set_capabilities(n3, caps, 3);
	nodes_mark_up(n4, f, "192.168.0.4", "test", 1);
	nodes_set_capabilities(n4, caps, 3);

	assert_int_equal(
		survey_rdma_endpoints(sv, "n1", "n2", &e, why, sizeof(why)), 0);
	assert_int_equal(e.adjacent, -1);
	assert_string_equal(e.a_if, "p2");
	assert_string_equal(e.a_dev, "rxe2");
	assert_string_equal(e.b_if, "p2");
	assert_string_equal(e.b_dev, "rxe2");

	/* Only a DOWN port; no RDMA device at all. */
	assert_int_equal(
		survey_rdma_endpoints(sv, "n1", "n3", &e, why, sizeof(why)),
		-1);
	assert_string_equal(why, "n3: no data interface has an active RDMA "
				 "port");
	assert_int_equal(
		survey_rdma_endpoints(sv, "n4", "n1", &e, why, sizeof(why)),
		-1);
	assert_string_equal(why, "n4: no data interface has an active RDMA "
				 "port");
	/* An agent without the capability; a node that is down. */
	nodes_set_capabilities(n2, old, 2);
	assert_int_equal(
		survey_rdma_endpoints(sv, "n1", "n2", &e, why, sizeof(why)),
		-1);
	assert_string_equal(why, "n2: its agent (version test) does not "
				 "offer RDMA tests (no 'rdma_test' "
				 "capability)");
	nodes_set_capabilities(n2, caps, 3);
	nodes_mark_down(n1, "gone", 2);
	assert_int_equal(
		survey_rdma_endpoints(sv, "n1", "n2", &e, why, sizeof(why)),
		-1);
	assert_non_null(strstr(why, "n1: its agent"));
	assert_int_equal(
		survey_rdma_endpoints(sv, "n1", "n9", &e, why, sizeof(why)),
		-1);
	assert_string_equal(why, "unknown node");
	/* Nothing was asked of any agent. */
	assert_int_equal(f->tc.n_calls, 0);

	/* Through the survey: the test it starts uses those ports. */
	nodes_mark_up(n1, f, "192.168.0.1", "test", 3);
	nodes_set_capabilities(n1, caps, 3);
	assert_int_equal(
		survey_rdma_endpoints(sv, "n1", "n2", &e, why, sizeof(why)), 0);
	assert_non_null(manual_rdma_test_start(sv, "n1", "n2", &e, &f->params,
					       fx_done, f));
	assert_string_equal(fx_setup(f, "n2")->req->rdma_setup->interface,
			    "p2");
	assert_string_equal(fx_setup(f, "n2")->req->rdma_setup->device, "rxe2");
	/* One test per node against surveys. */
	assert_int_equal(survey_start(sv, "test"), -1);
	assert_int_equal(errno, EBUSY);
	fx_run(f);
	assert_string_equal(fx_setup(f, "n1")->req->rdma_setup->interface,
			    "p2");
	fx_result(f, fx_setup(f, "n1"), 20.0, NULL, 0);
	fx_result(f, fx_setup(f, "n2"), 0, NULL, 0);
	fx_over(f);
	expect_error(f, "", 0);
	assert_string_equal(f->rep->a_interface, "p2");
	survey_free(sv);
	event_base_free(base);
	coord_conf_free(&conf);
}

/* ------------------------------------------------------------ control */

struct cfx {
	struct coord_conf conf;
	char dir[64];
	struct event_base *base;
	struct survey *sv;
	struct control *ctl;
	int fd;
};

static void cfx_spin(struct cfx *c)
{
	for (int i = 0; i < 8; i++)
		event_base_loop(c->base, EVLOOP_NONBLOCK);
}

/* The fixture's n1 and n2 as agents with an active RDMA port on p2, and
 * a ringctl client connected to a real control socket. Skips the test
 * unless root: test requests are root's (SO_PEERCRED). */
static void cfx_open(struct fx *f, struct cfx *c)
{
	static const char *const ifs[] = {"p1", "p2"}, *const st[] = {NULL,
								      "ACTIVE"};
	char *caps[] = {"inventory", "tcp_test", "rdma_test"};
	struct sockaddr_un sun = {.sun_family = AF_UNIX};

	if (geteuid() != 0)
		skip();
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < 2; i++) {
		struct node *n = nodes_find(f->table, i ? "n2" : "n1");

		nodes_set_inventory(n, inv_new(ifs, st, 2));
		nodes_set_capabilities(n, caps, 3);
	}
	snprintf(c->dir, sizeof(c->dir), "/tmp/test_rdmaflow.XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	coord_conf_defaults(&c->conf);
	snprintf(c->conf.control_socket, sizeof(c->conf.control_socket),
		 "%s/c.sock", c->dir);
	snprintf(c->conf.control_group, sizeof(c->conf.control_group), "root");
	c->base = event_base_new();
	assert_non_null(c->base);
	c->sv = survey_new(c->base, &c->conf, f->table, &f->tc.ci);
	assert_non_null(c->sv);
	c->ctl = control_new(c->base, &c->conf, f->table, c->sv);
	assert_non_null(c->ctl);
	c->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(c->fd >= 0);
	memcpy(sun.sun_path, c->conf.control_socket,
	       strlen(c->conf.control_socket) + 1);
	assert_int_equal(connect(c->fd, (struct sockaddr *)&sun, sizeof(sun)),
			 0);
	cfx_spin(c);
}

static void cfx_close(struct cfx *c)
{
	close(c->fd);
	cfx_spin(c);
	control_free(c->ctl);
	survey_free(c->sv);
	event_base_free(c->base);
	coord_conf_free(&c->conf);
	rmdir(c->dir);
}

static void cfx_send(struct cfx *c, Ring__TestParams *p)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__TestRequest tr = RING__TEST_REQUEST__INIT;

	tr.a = "n1";
	tr.b = "n2";
	tr.params = p;
	req.request_id = 7;
	req.body_case = RING__ENVELOPE__BODY_TEST_REQUEST;
	req.test_request = &tr;
	assert_int_equal(frame_write_fd(c->fd, &req, 1000), 0);
	cfx_spin(c);
}

/* The one reply to the last request. */
static Ring__Envelope *cfx_reply(struct cfx *c)
{
	Ring__Envelope *rep = NULL;

	cfx_spin(c);
	assert_int_equal(frame_read_fd(c->fd, FRAME_MAX_DEFAULT, 1000, &rep),
			 0);
	assert_true(rep->request_id == 7);
	return rep;
}

static void cfx_refused(struct cfx *c, Ring__TestParams *p, const char *text)
{
	Ring__Envelope *rep;

	cfx_send(c, p);
	rep = cfx_reply(c);
	assert_int_equal(rep->body_case, RING__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->error->code, RING__ERROR_CODE__ERROR_BAD_REQUEST);
	if (!strstr(rep->error->text, text))
		fail_msg("'%s' not in '%s'", text, rep->error->text);
	frame_free(rep);
}

/* Bad parameters are refused with the agents' own words before any agent
 * is asked; a node that is down or has no RDMA port too. */
static void test_control_refusals(void **state)
{
	struct fx *f = *state;
	struct cfx c;
	Ring__Envelope *rep;

	cfx_open(f, &c);
	f->params.direction = RING__DIRECTION__DIR_B_TO_A;
	cfx_refused(&c, &f->params, "RDMA tests run with A as the requester");
	f->params.direction = RING__DIRECTION__DIR_A_TO_B;
	f->rdma.qps = 65;
	cfx_refused(&c, &f->params, "qps 65 out of range (1..64)");
	f->rdma.qps = 4;
	f->params.duration_ms = 10;
	cfx_refused(&c, &f->params, "duration");
	f->params.duration_ms = 2000;
	nodes_set_inventory(nodes_find(f->table, "n2"), NULL);
	cfx_refused(&c, &f->params,
		    "n2: no data interface has an active RDMA port");
	nodes_mark_down(nodes_find(f->table, "n2"), "gone", 2);
	cfx_send(&c, &f->params);
	rep = cfx_reply(&c);
	assert_int_equal(rep->body_case, RING__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->error->code, RING__ERROR_CODE__ERROR_NOT_FOUND);
	assert_string_equal(rep->error->text, "n2 is not up");
	frame_free(rep);
	assert_int_equal(f->tc.n_calls, 0);
	cfx_close(&c);
}

/* A request runs the test on the ports the rules pick and gets the
 * driver's report; an agent's NOT_ADJACENT reaches ringctl with its code
 * and the driver's words (no second hint from control). */
static void test_control_report(void **state)
{
	struct fx *f = *state;
	struct cfx c;
	Ring__Envelope *rep;

	cfx_open(f, &c);
	cfx_send(&c, &f->params);
	assert_string_equal(fx_setup(f, "n2")->req->rdma_setup->interface,
			    "p2");
	fx_run(f);
	fx_result(f, fx_setup(f, "n1"), 77.0, NULL, 0);
	fx_result(f, fx_setup(f, "n2"), 0, NULL, 0);
	rep = cfx_reply(&c);
	assert_int_equal(rep->body_case, RING__ENVELOPE__BODY_TEST_REPORT);
	assert_string_equal(rep->test_report->error, "");
	assert_string_equal(rep->test_report->method, "rdma");
	assert_string_equal(rep->test_report->a_interface, "p2");
	assert_true(rep->test_report->gbps_a_to_b == 77.0);
	frame_free(rep);
	/* Only B's STOP is out; its Ack comes after the report. */
	assert_int_equal(tc_pending(&f->tc), 1);
	assert_int_equal(
		tc_ack(&f->tc,
		       fx_find_ctl(f, "n2", RING__RDMA_ACTION__RDMA_STOP, 1)),
		1);

	cfx_send(&c, &f->params);
	assert_non_null(tc_find(&f->tc, "n2", SETUP, 2));
	fx_endpoint(f, tc_get(&f->tc, "n2", SETUP, 2), 1, NULL, NULL, 1);
	fx_endpoint(f, tc_get(&f->tc, "n1", SETUP, 2), 0, NULL, NULL, 1);
	assert_int_equal(
		tc_ack(&f->tc, fx_find_ctl(f, "n2",
					   RING__RDMA_ACTION__RDMA_CONNECT, 2)),
		1);
	assert_int_equal(
		tc_ack(&f->tc, fx_find_ctl(f, "n1",
					   RING__RDMA_ACTION__RDMA_CONNECT, 2)),
		1);
	fx_result_no_path(f, tc_get(&f->tc, "n1", SETUP, 2), NO_PATH, DETAIL);
	fx_result(f, tc_get(&f->tc, "n2", SETUP, 2), 0, NULL, 0);
	rep = cfx_reply(&c);
	assert_int_equal(rep->body_case, RING__ENVELOPE__BODY_TEST_REPORT);
	assert_string_equal(
		rep->test_report->error,
		"no RDMA path from n1 rxe1 port 1 (netdev r1b) to n2 rxe2 port "
		"1 (netdev r2a) although no survey has said whether they are "
		"neighbours: n1: " NO_PATH "; " DETAIL BETWEEN_NEIGHBOURS);
	assert_null(strstr(rep->test_report->error, "ranks must follow"));
	assert_int_equal(rep->test_report->error_code,
			 RING__ERROR_CODE__ERROR_NOT_ADJACENT);
	frame_free(rep);
	assert_int_equal(tc_pending(&f->tc), 1);
	tc_fail(fx_find_ctl(f, "n2", RING__RDMA_ACTION__RDMA_STOP, 2),
		-ETIMEDOUT);
	cfx_close(&c);
	/* fx_done was not the callback: nothing for the fixture to free. */
	assert_int_equal(f->n_cb, 0);
}

int main(void)
{
#define T(x) cmocka_unit_test_setup_teardown(x, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_write_bw),
		T(test_read_bw),
		T(test_lat),
		T(test_b_refuses_setup),
		T(test_a_refuses_setup),
		T(test_b_fails_while_a_sets_up),
		T(test_interim_missing),
		T(test_interim_duplicate),
		T(test_interim_late),
		T(test_timeout_each_step),
		T(test_node_down_each_step),
		T(test_node_not_up),
		T(test_session_lost_inside_send),
		T(test_not_adjacent_code),
		T(test_gid_mismatch),
		T(test_cancel),
		T(test_rules_endpoints),
		T(test_control_refusals),
		T(test_control_report),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
