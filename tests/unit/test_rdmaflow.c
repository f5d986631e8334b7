/* The coordinator's RDMA test sequence (rdmatest_start) against scripted
 * agents: this file defines agents_call, agents_call_cancel and
 * coord_now_ms, so the linker takes these instead of the real session
 * code, and every request is recorded and answered by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agents.h"
#include "coord.h"
#include "rdmatest.h"

struct fake_call {
	int live;
	char node[64];
	Ring__Envelope__BodyCase type;
	int requester;	      /* RdmaSetup */
	Ring__RdmaAction act; /* RdmaControl */
	unsigned timeout_ms;
	unsigned deadline_ms;
	agents_reply_cb cb;
	void *arg;
};

static struct fake_call calls[32];
static int n_calls;
static const char *down_node; /* agents_call fails for it */

struct agents_call *agents_call(struct agents *a, const char *node,
				Ring__Envelope *req, unsigned timeout_ms,
				agents_reply_cb cb, void *arg)
{
	struct fake_call *c;

	(void)a;
	if ((down_node && !strcmp(node, down_node)) || n_calls == 32) {
		errno = ENOTCONN;
		return NULL;
	}
	c = &calls[n_calls++];
	memset(c, 0, sizeof(*c));
	c->live = 1;
	snprintf(c->node, sizeof(c->node), "%s", node);
	c->type = req->body_case;
	if (req->body_case == RING__ENVELOPE__BODY_RDMA_SETUP) {
		c->requester = req->rdma_setup->requester;
		c->deadline_ms = req->rdma_setup->deadline_ms;
	} else if (req->body_case == RING__ENVELOPE__BODY_RDMA_CONTROL) {
		c->act = req->rdma_control->action;
	}
	c->timeout_ms = timeout_ms;
	c->cb = cb;
	c->arg = arg;
	return (struct agents_call *)c;
}

void agents_call_cancel(struct agents_call *c)
{
	if (c)
		((struct fake_call *)c)->live = 0;
}

uint64_t coord_now_ms(void)
{
	return 42;
}

/* ---- answers ---- */

static void deliver(int i, Ring__Envelope *env, int err)
{
	struct fake_call *c = &calls[i];

	assert_true(c->live);
	if (!env) {
		/* As the session code does: the call is gone first. */
		c->live = 0;
		c->cb(NULL, err, c->arg);
		return;
	}
	if (!c->cb(env, err, c->arg))
		c->live = 0;
}

static void answer_endpoint(int i, const char *type, const char *ipv4)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__RdmaEndpoint ep = RING__RDMA_ENDPOINT__INIT;

	ep.device = "rxe0";
	ep.port = 1;
	ep.gid = "::ffff:10.9.1.1";
	ep.gid_type = (char *)type;
	ep.netdev = "eth1";
	ep.ipv4 = (char *)ipv4;
	ep.prefix = 24;
	env.body_case = RING__ENVELOPE__BODY_RDMA_ENDPOINT;
	env.rdma_endpoint = &ep;
	deliver(i, &env, 0);
}

static void answer_ack(int i)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__Ack ack = RING__ACK__INIT;

	env.body_case = RING__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	deliver(i, &env, 0);
}

static void answer_error(int i, const char *text)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__Error e = RING__ERROR__INIT;

	e.code = RING__ERROR_CODE__ERROR_INTERNAL;
	e.text = (char *)text;
	env.body_case = RING__ENVELOPE__BODY_ERROR;
	env.error = &e;
	deliver(i, &env, 0);
}

static void answer_result(int i, double gbps, const char *error)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__TestResult r = RING__TEST_RESULT__INIT;

	r.gbps_sent = gbps;
	r.error = (char *)error;
	r.method = "rdma";
	env.body_case = RING__ENVELOPE__BODY_TEST_RESULT;
	env.test_result = &r;
	deliver(i, &env, 0);
}

/* ---- the report ---- */

static struct {
	int n;
	char error[512];
	double ab, ba;
	int has_a, has_b;
	char method[16], a[16], b[16];
} got;

static void on_report(const Ring__TestReport *rep, void *arg)
{
	(void)arg;
	got.n++;
	snprintf(got.error, sizeof(got.error), "%s", rep->error);
	got.ab = rep->gbps_a_to_b;
	got.ba = rep->gbps_b_to_a;
	got.has_a = rep->a_side != NULL;
	got.has_b = rep->b_side != NULL;
	snprintf(got.method, sizeof(got.method), "%s", rep->method);
	snprintf(got.a, sizeof(got.a), "%s", rep->a);
	snprintf(got.b, sizeof(got.b), "%s", rep->b);
}

static Ring__TestParams params;
static Ring__RdmaParams rparams;

static struct rdmatest *start(Ring__RdmaOp op, int adjacent)
{
	struct rdmatest_spec sp = {
		.a = "n1",
		.a_if = "eth1",
		.a_dev = "rxe0",
		.b = "n2",
		.b_if = "eth2",
		.b_dev = "",
		.adjacent = adjacent,
		.params = &params,
	};

	memset(calls, 0, sizeof(calls));
	n_calls = 0;
	down_node = NULL;
	memset(&got, 0, sizeof(got));
	ring__test_params__init(&params);
	ring__rdma_params__init(&rparams);
	params.kind = RING__TEST_KIND__TEST_RDMA_BW;
	params.duration_ms = 2000;
	params.rdma = &rparams;
	rparams.op = op;
	return rdmatest_start(NULL, &sp, on_report, NULL);
}

static void assert_call(int i, const char *node, Ring__Envelope__BodyCase type)
{
	assert_true(i < n_calls);
	assert_string_equal(calls[i].node, node);
	assert_int_equal(calls[i].type, type);
}

#define SETUP RING__ENVELOPE__BODY_RDMA_SETUP
#define CONTROL RING__ENVELOPE__BODY_RDMA_CONTROL

/* Only calls[from..] that are RdmaControl STOP, to these nodes. */
static int stops_to(int from, const char *node)
{
	int k = 0;

	for (int i = from; i < n_calls; i++)
		k += calls[i].type == CONTROL &&
		     calls[i].act == RING__RDMA_ACTION__RDMA_STOP &&
		     !strcmp(calls[i].node, node);
	return k;
}

static void test_write_in_order(void **state)
{
	(void)state;
	assert_non_null(start(RING__RDMA_OP__RDMA_OP_WRITE, 1));
	/* B (target) first, with the agent's deadline and ours beyond. */
	assert_int_equal(n_calls, 1);
	assert_call(0, "n2", SETUP);
	assert_false(calls[0].requester);
	assert_int_equal(calls[0].deadline_ms, 12000);
	assert_int_equal(calls[0].timeout_ms, 17000);
	answer_endpoint(0, "RoCE v2", "10.9.1.2");
	assert_true(calls[0].live); /* B's result comes on it later */
	assert_int_equal(n_calls, 2);
	assert_call(1, "n1", SETUP);
	assert_true(calls[1].requester);
	answer_endpoint(1, "RoCE v2", "10.9.1.1");
	/* GIDs agree: connect B, and A only once B has acked. */
	assert_int_equal(n_calls, 3);
	assert_call(2, "n2", CONTROL);
	assert_int_equal(calls[2].act, RING__RDMA_ACTION__RDMA_CONNECT);
	answer_ack(2);
	assert_int_equal(n_calls, 4);
	assert_call(3, "n1", CONTROL);
	assert_int_equal(calls[3].act, RING__RDMA_ACTION__RDMA_CONNECT);
	answer_ack(3);
	assert_int_equal(n_calls, 4);
	/* A's result: stop B; the report waits for B's result. */
	answer_result(1, 93.5, "");
	assert_int_equal(n_calls, 5);
	assert_int_equal(stops_to(4, "n2"), 1);
	assert_int_equal(got.n, 0);
	answer_ack(4);
	answer_result(0, 0, "");
	assert_int_equal(got.n, 1);
	assert_string_equal(got.error, "");
	assert_string_equal(got.method, "rdma");
	assert_string_equal(got.a, "n1");
	assert_true(got.ab > 93.4 && got.ab < 93.6);
	assert_true(got.ba == 0);
	assert_true(got.has_a && got.has_b);
}

static void test_read_counts_b_to_a(void **state)
{
	(void)state;
	assert_non_null(start(RING__RDMA_OP__RDMA_OP_READ, 1));
	answer_endpoint(0, "RoCE v2", "10.9.1.2");
	answer_endpoint(1, "RoCE v2", "10.9.1.1");
	answer_ack(2);
	answer_ack(3);
	answer_result(1, 40.0, "");
	answer_result(0, 0, "");
	assert_int_equal(got.n, 1);
	assert_true(got.ab == 0);
	assert_true(got.ba > 39.9 && got.ba < 40.1);
}

static void test_gid_type_mismatch_stops_both(void **state)
{
	(void)state;
	assert_non_null(start(RING__RDMA_OP__RDMA_OP_WRITE, 0));
	answer_endpoint(0, "RoCE v1", "");
	answer_endpoint(1, "RoCE v2", "10.9.1.1");
	/* No CONNECT: a STOP to each side. */
	assert_int_equal(n_calls, 4);
	assert_int_equal(stops_to(2, "n1"), 1);
	assert_int_equal(stops_to(2, "n2"), 1);
	answer_result(1, 0, "");
	assert_int_equal(got.n, 0);
	answer_result(0, 0, "");
	assert_int_equal(got.n, 1);
	assert_non_null(strstr(got.error, "GID type mismatch: n1 uses index 0 "
					  "(RoCE v2 ::ffff:10.9.1.1 on eth1)"));
}

static void test_subnet_mismatch_only_between_neighbours(void **state)
{
	(void)state;
	/* Neighbours: refused. */
	assert_non_null(start(RING__RDMA_OP__RDMA_OP_WRITE, 1));
	answer_endpoint(0, "RoCE v2", "10.9.2.2");
	answer_endpoint(1, "RoCE v2", "10.9.1.1");
	assert_int_equal(stops_to(2, "n1") + stops_to(2, "n2"), 2);
	answer_result(1, 0, "");
	answer_result(0, 0, "");
	assert_non_null(strstr(got.error, "GID subnet mismatch"));
	/* A diagonal: it runs (and fails on its own). */
	assert_non_null(start(RING__RDMA_OP__RDMA_OP_WRITE, 0));
	answer_endpoint(0, "RoCE v2", "10.9.2.2");
	answer_endpoint(1, "RoCE v2", "10.9.1.1");
	assert_call(2, "n2", CONTROL);
	assert_int_equal(calls[2].act, RING__RDMA_ACTION__RDMA_CONNECT);
	answer_ack(2);
	answer_ack(3);
	answer_result(1, 0,
		      "rdma: transport retry exceeded: n1 and n2 are not "
		      "ring neighbours");
	assert_int_equal(stops_to(4, "n2"), 1);
	answer_result(0, 0, "");
	assert_string_equal(got.error, "n1: rdma: transport retry exceeded: "
				       "n1 and n2 are not ring neighbours");
}

static void test_a_setup_error_stops_b(void **state)
{
	(void)state;
	assert_non_null(start(RING__RDMA_OP__RDMA_OP_WRITE, 1));
	answer_endpoint(0, "RoCE v2", "10.9.1.2");
	answer_error(1, "rdma: memlock limit 64 KiB is too low");
	assert_int_equal(stops_to(2, "n2"), 1);
	assert_int_equal(got.n, 0);
	answer_result(0, 0, "stopped");
	assert_int_equal(got.n, 1);
	/* The first failure is the one reported. */
	assert_string_equal(got.error,
			    "n1: rdma: memlock limit 64 KiB is too low");
	assert_false(got.has_a);
	assert_true(got.has_b);
}

static void test_b_setup_error_asks_nobody_else(void **state)
{
	(void)state;
	assert_non_null(start(RING__RDMA_OP__RDMA_OP_WRITE, 1));
	answer_error(0, "rdma: no RDMA device bound to eth2");
	assert_int_equal(n_calls, 1);
	assert_int_equal(got.n, 1);
	assert_string_equal(got.error,
			    "n2: rdma: no RDMA device bound to eth2");
}

static void test_connect_refused_stops_both(void **state)
{
	(void)state;
	assert_non_null(start(RING__RDMA_OP__RDMA_OP_WRITE, 1));
	answer_endpoint(0, "RoCE v2", "10.9.1.2");
	answer_endpoint(1, "RoCE v2", "10.9.1.1");
	answer_error(2, "rdma: modify QP to RTR: Invalid argument");
	assert_int_equal(stops_to(3, "n1"), 1);
	assert_int_equal(stops_to(3, "n2"), 1);
	answer_result(1, 0, "");
	answer_result(0, 0, "");
	assert_int_equal(got.n, 1);
	assert_string_equal(got.error,
			    "n2: rdma: modify QP to RTR: Invalid argument");
}

static void test_a_timeout_and_lost_session(void **state)
{
	(void)state;
	assert_non_null(start(RING__RDMA_OP__RDMA_OP_WRITE, 1));
	answer_endpoint(0, "RoCE v2", "10.9.1.2");
	answer_endpoint(1, "RoCE v2", "10.9.1.1");
	answer_ack(2);
	answer_ack(3);
	/* A never answers: it is told to stop all the same, and so is B. */
	deliver(1, NULL, -ETIMEDOUT);
	assert_int_equal(stops_to(4, "n1"), 1);
	assert_int_equal(stops_to(4, "n2"), 1);
	/* B's session ends before its result. */
	deliver(0, NULL, -ECONNRESET);
	assert_int_equal(got.n, 1);
	assert_string_equal(got.error,
			    "n1: no answer before the test deadline");
}

static void test_a_not_connected(void **state)
{
	(void)state;
	assert_non_null(start(RING__RDMA_OP__RDMA_OP_WRITE, 1));
	down_node = "n1";
	answer_endpoint(0, "RoCE v2", "10.9.1.2");
	assert_int_equal(stops_to(1, "n2"), 1);
	answer_result(0, 0, "");
	assert_int_equal(got.n, 1);
	assert_string_equal(got.error, "n1: not connected");
}

static void test_cancel_stops_what_was_set_up(void **state)
{
	struct rdmatest *t;

	(void)state;
	t = start(RING__RDMA_OP__RDMA_OP_WRITE, 1);
	assert_non_null(t);
	answer_endpoint(0, "RoCE v2", "10.9.1.2");
	rdmatest_cancel(t);
	assert_false(calls[0].live);
	assert_false(calls[1].live);
	/* Both were asked to set up: both are told to stop. */
	assert_int_equal(stops_to(2, "n2"), 1);
	assert_int_equal(stops_to(2, "n1"), 1);
	assert_int_equal(got.n, 0);
	/* B not up: nothing starts, nothing to report. */
	memset(calls, 0, sizeof(calls));
	n_calls = 0;
	down_node = "n2";
	{
		struct rdmatest_spec sp = {"n1",   "eth1", "", "n2",
					   "eth2", "",	   1,  &params};

		errno = 0;
		assert_null(rdmatest_start(NULL, &sp, on_report, NULL));
		assert_int_equal(errno, ENOTCONN);
	}
	down_node = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_in_order),
		cmocka_unit_test(test_read_counts_b_to_a),
		cmocka_unit_test(test_gid_type_mismatch_stops_both),
		cmocka_unit_test(test_subnet_mismatch_only_between_neighbours),
		cmocka_unit_test(test_a_setup_error_stops_b),
		cmocka_unit_test(test_b_setup_error_asks_nobody_else),
		cmocka_unit_test(test_connect_refused_stops_both),
		cmocka_unit_test(test_a_timeout_and_lost_session),
		cmocka_unit_test(test_a_not_connected),
		cmocka_unit_test(test_cancel_stops_what_was_set_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
