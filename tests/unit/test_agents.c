/* agents: sessions over a socketpair (the real session code; the TLS
 * identity is given): Hello checks, validation on arrival, one accepted
 * outcome per call, timeouts and lost sessions, the caps on pending
 * connections. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "coordinator/agents.h"
#include "frame.h"
#include "log.h"
#include "testsock.h"

struct fixture {
	struct testsock_coord c;
	struct agents *agents;
	const struct call_iface *calls;
};

struct outcome {
	int interims, finals, err;
	Ring__Envelope__BodyCase last;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	testsock_coord_open(&f->c, "test_agents");
	snprintf(f->c.conf.listen_host, sizeof(f->c.conf.listen_host),
		 "127.0.0.1");
	f->c.conf.listen_port = 0;
	f->agents = agents_new(f->c.base, NULL, &f->c.conf, f->c.nodes);
	assert_non_null(f->agents);
	f->calls = agents_calls(f->agents);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	agents_free(f->agents);
	testsock_coord_close(&f->c);
	free(f);
	return 0;
}

static void spin(struct fixture *f)
{
	testsock_spin(f->c.base);
}

/* A session for identity from addr; returns the agent's end. */
static int attach(struct fixture *f, const char *addr, const char *identity)
{
	int sv[2];
	struct bufferevent *bev;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	evutil_make_socket_nonblocking(sv[0]);
	bev = bufferevent_socket_new(f->c.base, sv[0], BEV_OPT_CLOSE_ON_FREE);
	assert_non_null(bev);
	if (agents_attach(f->agents, bev, addr, identity) < 0) {
		close(sv[1]);
		return -1;
	}
	return sv[1];
}

/* The next frame from the coordinator, after letting it run. */
static Ring__Envelope *next_msg(struct fixture *f, int fd)
{
	Ring__Envelope *env = NULL;

	spin(f);
	assert_int_equal(frame_read_fd(fd, FRAME_MAX_DEFAULT, 1000, &env), 0);
	return env;
}

static void hello(struct fixture *f, int fd, const char *node,
		  Ring__Envelope__BodyCase expect)
{
	Ring__Hello h = RING__HELLO__INIT;
	Ring__Envelope *env;

	h.node = (char *)node;
	h.agent_version = "test";
	testsock_send(fd, 1, RING__ENVELOPE__BODY_HELLO, &h);
	env = next_msg(f, fd);
	assert_int_equal(env->body_case, expect);
	frame_free(env);
}

/* A session for identity that says Hello as node, and its end. */
static void hello_once(struct fixture *f, const char *identity,
		       const char *node, Ring__Envelope__BodyCase expect)
{
	int fd = attach(f, "192.0.2.1", identity);

	hello(f, fd, node, expect);
	close(fd);
}

static void on_reply(const Ring__Envelope *env, int err, void *arg)
{
	struct outcome *o = arg;

	if (env && env->body_case == RING__ENVELOPE__BODY_TEST_LISTEN_REPLY) {
		o->interims++;
		return;
	}
	o->finals++;
	o->err = err;
	o->last = env ? env->body_case : RING__ENVELOPE__BODY__NOT_SET;
}

static uint64_t start_test_call(struct fixture *f, int fd, struct outcome *o,
				unsigned timeout_ms)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__TestListenRequest lis = RING__TEST_LISTEN_REQUEST__INIT;
	Ring__Envelope *got;
	uint64_t id;

	req.body_case = RING__ENVELOPE__BODY_TEST_LISTEN_REQUEST;
	req.test_listen_request = &lis;
	assert_non_null(call_start(f->calls, "n1", &req, timeout_ms,
				   RING__ENVELOPE__BODY_TEST_LISTEN_REPLY,
				   RING__ENVELOPE__BODY_TEST_RESULT, on_reply,
				   o));
	id = req.request_id;
	got = next_msg(f, fd);
	assert_int_equal(got->body_case,
			 RING__ENVELOPE__BODY_TEST_LISTEN_REQUEST);
	assert_true(got->request_id == id);
	frame_free(got);
	return id;
}

static void test_hello_checks(void **state)
{
	struct fixture *f = *state;
	Ring__Heartbeat hb = RING__HEARTBEAT__INIT;
	Ring__Envelope *env;
	int fd;

	/* Nothing before Hello. */
	fd = attach(f, "192.0.2.1", "n1");
	testsock_send(fd, 0, RING__ENVELOPE__BODY_HEARTBEAT, &hb);
	env = next_msg(f, fd);
	assert_int_equal(env->body_case, RING__ENVELOPE__BODY_ERROR);
	assert_int_equal(env->error->code, RING__ERROR_CODE__ERROR_PROTOCOL);
	frame_free(env);
	close(fd);
	/* A name the certificate does not prove, an invalid one. */
	hello_once(f, "n1", "n2", RING__ENVELOPE__BODY_ERROR);
	hello_once(f, "n1", "n1;reboot", RING__ENVELOPE__BODY_ERROR);
	spin(f);
	assert_null(nodes_find(f->c.nodes, "n2"));
	/* The real one. */
	fd = attach(f, "192.0.2.1", "n1");
	hello(f, fd, "n1", RING__ENVELOPE__BODY_HELLO_ACK);
	assert_int_equal(agents_active(f->agents), 1);
	assert_int_equal(agents_pending(f->agents), 0);
	assert_int_equal(nodes_find(f->c.nodes, "n1")->state, NODE_UP);
	close(fd);
	spin(f);
	assert_int_equal(agents_active(f->agents), 0);
	assert_int_equal(nodes_find(f->c.nodes, "n1")->state, NODE_DOWN);
}

static void test_membership(void **state)
{
	struct fixture *f = *state;

	f->c.conf.expect = calloc(1, sizeof(*f->c.conf.expect));
	snprintf(f->c.conf.expect[0], sizeof(f->c.conf.expect[0]), "n1");
	f->c.conf.n_expect = 1;
	hello_once(f, "n9", "n9", RING__ENVELOPE__BODY_ERROR);
	hello_once(f, "n1", "n1", RING__ENVELOPE__BODY_HELLO_ACK);
	spin(f);
	assert_null(nodes_find(f->c.nodes, "n9"));
}

static void test_inventory_validated(void **state)
{
	struct fixture *f = *state;
	Ring__Inventory inv = RING__INVENTORY__INIT;
	Ring__NetInterface ifs[300], *p[300];
	Ring__Envelope *env;
	int fd = attach(f, "192.0.2.1", "n1");

	hello(f, fd, "n1", RING__ENVELOPE__BODY_HELLO_ACK);
	/* Each with a MAC: an interface of a name alone (6 bytes on the
	 * wire) unpacks ~40 times larger and meets the unpack bound first
	 * (a malformed frame); this test is about the count. */
	for (int i = 0; i < 300; i++) {
		ring__net_interface__init(&ifs[i]);
		ifs[i].name = "eth0";
		ifs[i].mac = "02:00:00:00:00:01";
		p[i] = &ifs[i];
	}
	/* Over the limit: refused, nothing stored. */
	inv.n_interfaces = 300;
	inv.interfaces = p;
	testsock_send(fd, 0, RING__ENVELOPE__BODY_INVENTORY, &inv);
	env = next_msg(f, fd);
	assert_int_equal(env->body_case, RING__ENVELOPE__BODY_ERROR);
	assert_int_equal(env->error->code, RING__ERROR_CODE__ERROR_BAD_REQUEST);
	assert_non_null(strstr(env->error->text, "300 interfaces (max 256)"));
	frame_free(env);
	assert_null(nodes_find(f->c.nodes, "n1")->inventory);
	/* Valid, claiming another node and none: stored as n1 both times. */
	inv.n_interfaces = 1;
	inv.node = "n2";
	testsock_send(fd, 0, RING__ENVELOPE__BODY_INVENTORY, &inv);
	spin(f);
	assert_string_equal(nodes_find(f->c.nodes, "n1")->inventory->node,
			    "n1");
	inv.node = (char *)protobuf_c_empty_string;
	testsock_send(fd, 0, RING__ENVELOPE__BODY_INVENTORY, &inv);
	spin(f);
	assert_string_equal(nodes_find(f->c.nodes, "n1")->inventory->node,
			    "n1");
	close(fd);
	spin(f);
}

static void test_one_outcome_per_call(void **state)
{
	struct fixture *f = *state;
	int fd = attach(f, "192.0.2.1", "n1");
	struct outcome o = {0};
	uint64_t id;
	Ring__TestListenReply lr = RING__TEST_LISTEN_REPLY__INIT;
	Ring__TestResult res = RING__TEST_RESULT__INIT;
	Ring__ProbeReply pr = RING__PROBE_REPLY__INIT;

	hello(f, fd, "n1", RING__ENVELOPE__BODY_HELLO_ACK);
	id = start_test_call(f, fd, &o, 60000);
	/* Twice each, a type the call does not take, and an id never
	 * used: one interim, one final, nothing else. */
	testsock_send(fd, id, RING__ENVELOPE__BODY_TEST_LISTEN_REPLY, &lr);
	testsock_send(fd, id, RING__ENVELOPE__BODY_TEST_LISTEN_REPLY, &lr);
	testsock_send(fd, id, RING__ENVELOPE__BODY_PROBE_REPLY, &pr);
	spin(f);
	assert_int_equal(o.interims, 1);
	assert_int_equal(o.finals, 0);
	testsock_send(fd, id, RING__ENVELOPE__BODY_TEST_RESULT, &res);
	testsock_send(fd, id, RING__ENVELOPE__BODY_TEST_RESULT, &res);
	testsock_send(fd, id + 100, RING__ENVELOPE__BODY_TEST_RESULT, &res);
	spin(f);
	assert_int_equal(o.interims, 1);
	assert_int_equal(o.finals, 1);
	assert_int_equal(o.last, RING__ENVELOPE__BODY_TEST_RESULT);
	/* The session is still there and served. */
	assert_int_equal(agents_active(f->agents), 1);
	close(fd);
	spin(f);
}

static void test_timeout_and_lost_session(void **state)
{
	struct fixture *f = *state;
	struct outcome slow = {0}, cut = {0};
	Ring__TestResult res = RING__TEST_RESULT__INIT;
	int fd = attach(f, "192.0.2.1", "n1");
	uint64_t id;

	hello(f, fd, "n1", RING__ENVELOPE__BODY_HELLO_ACK);
	id = start_test_call(f, fd, &slow, 50);
	for (int i = 0; i < 200 && !slow.finals; i++) {
		usleep(5000);
		spin(f);
	}
	assert_int_equal(slow.finals, 1);
	assert_int_equal(slow.err, -ETIMEDOUT);
	/* The late answer finds nothing. */
	testsock_send(fd, id, RING__ENVELOPE__BODY_TEST_RESULT, &res);
	spin(f);
	assert_int_equal(slow.finals, 1);
	start_test_call(f, fd, &cut, 60000);
	close(fd);
	spin(f);
	assert_int_equal(cut.finals, 1);
	assert_int_equal(cut.err, -ECONNRESET);
}

static void test_pending_caps(void **state)
{
	struct fixture *f = *state;
	int fds[AGENTS_MAX_PENDING + 1], n = 0;
	char addr[32];

	for (int i = 0; i < AGENTS_MAX_PENDING_PER_SOURCE; i++)
		assert_true((fds[n++] = attach(f, "192.0.2.7", "x")) >= 0);
	/* One more from the same address: refused at once. */
	assert_int_equal(attach(f, "192.0.2.7", "x"), -1);
	/* Distinct addresses fill the total; past it the oldest makes
	 * room and the count stays at the cap. */
	for (int i = n; i <= AGENTS_MAX_PENDING; i++) {
		snprintf(addr, sizeof(addr), "198.51.%d.%d", i / 200, i % 200);
		assert_true((fds[n++] = attach(f, addr, "x")) >= 0);
	}
	assert_int_equal(agents_pending(f->agents), AGENTS_MAX_PENDING);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	spin(f);
	assert_int_equal(agents_pending(f->agents), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hello_checks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_membership, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_inventory_validated, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_one_outcome_per_call,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_and_lost_session,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_caps, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
