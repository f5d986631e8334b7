#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "testns.h"
#include "testsock.h"
#include "agent/agent_conf.h"
#include "agent/ops.h"
#include "agent/probe.h"

struct test_result {
	int calls;
	int err;
	double rtt_us;
	double done_ms;
};

static double test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void test_done(int err, double rtt_us, void *arg)
{
	struct test_result *r = arg;

	r->calls++;
	r->err = err;
	r->rtt_us = rtt_us;
	r->done_ms = test_now_ms();
}

/* A TCP socket on 127.0.0.1 with a kernel-chosen port, listening or
 * merely bound (then a SYN gets an RST). */
static int test_socket(int do_listen, uint16_t *port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    (do_listen && listen(fd, 8) < 0) ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

/* Runs one probe to its end; returns the milliseconds it took. */
static double test_run(struct event_base *base, const char *dst, uint16_t port,
		       const char *ifname, unsigned timeout_ms,
		       struct test_result *r)
{
	double t0 = test_now_ms();
	struct probe *p;

	memset(r, 0, sizeof(*r));
	p = probe_start(base, dst, port, ifname, timeout_ms, test_done, r);
	if (!p) {
		r->err = -errno;
		return -1;
	}
	/* Never from inside probe_start. */
	if (r->calls)
		return -1;
	event_base_dispatch(base);
	return r->done_ms - t0;
}

/* What probe_route_get must say for dst; NULL or -1: not checked. */
struct route_want {
	const char *dst;
	int rc;
	const char *kind, *ifname, *source, *gateway;
	int linkdown;
};

/* 1 if the route to w->dst is as wanted; otherwise 0, and both on stderr
 * (usable from cmocka and from a namespace child alike). */
static int test_route_is(const struct route_want *w)
{
	struct probe_route r;
	int rc = probe_route_get(w->dst, &r);

#define ROUTE_DIFFERS(field) (w->field && strcmp(r.field, w->field))
	if (rc == w->rc && !ROUTE_DIFFERS(kind) && !ROUTE_DIFFERS(ifname) &&
	    !ROUTE_DIFFERS(source) && !ROUTE_DIFFERS(gateway) &&
	    (w->linkdown < 0 || r.linkdown == w->linkdown))
		return 1;
#undef ROUTE_DIFFERS
	fprintf(stderr,
		"route to %s: %d %s dev '%s' src '%s' via '%s' linkdown %d; "
		"want %d %s dev '%s' src '%s' via '%s' linkdown %d\n",
		w->dst, rc, r.kind, r.ifname, r.source, r.gateway, r.linkdown,
		w->rc, w->kind, w->ifname ? w->ifname : "*",
		w->source ? w->source : "*", w->gateway ? w->gateway : "*",
		w->linkdown);
	return 0;
}

static void test_route_local(void **state)
{
	static const struct route_want lo = {"127.0.0.1", 0,  "local", "lo",
					     "127.0.0.1", "", 0};

	(void)state;
	assert_true(test_route_is(&lo));
}

static void test_route_bad_address(void **state)
{
	static const char *bad[] = {"",		  "1.2.3",     "256.0.0.1",
				    "::1",	  "localhost", "10.0.0.1 ",
				    "10.0.0.1/24"};
	struct probe_route r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&r, 'x', sizeof(r));
		assert_int_equal(probe_route_get(bad[i], &r), -EINVAL);
		assert_string_equal(r.kind, "");
	}
	assert_int_equal(probe_route_get(NULL, &r), -EINVAL);
	assert_int_equal(probe_route_get("127.0.0.1", NULL), -EINVAL);
}

/* One probe per case, each to its end in the loop. A listening port and a
 * closed one (whose RST proves the path) are reachable; connect() refuses
 * a broadcast or multicast peer at once (ENETUNREACH), and that answer
 * still comes from the loop. */
static void test_probe_outcomes(void **state)
{
	static const struct {
		const char *what, *dst;
		int sock; /* -1: none, port 9; 0: bound only; 1: listening */
		const char *ifname;
		int err;
	} cases[] = {
		{"listening", "127.0.0.1", 1, NULL, 0},
		/* "" means no device binding, like NULL. */
		{"listening, no device", "127.0.0.1", 1, "", 0},
		{"closed port", "127.0.0.1", 0, NULL, 0},
		{"broadcast", "255.255.255.255", -1, NULL, -ENETUNREACH},
		{"multicast", "224.0.0.1", -1, NULL, -ENETUNREACH},
	};
	struct event_base *base = event_base_new();

	(void)state;
	assert_non_null(base);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint16_t port = 9;
		int fd = cases[i].sock < 0 ? -1
					   : test_socket(cases[i].sock, &port);
		struct test_result r;

		print_message("    %s\n", cases[i].what);
		assert_true(cases[i].sock < 0 || fd >= 0);
		assert_true(test_run(base, cases[i].dst, port, cases[i].ifname,
				     1000, &r) >= 0);
		assert_int_equal(r.calls, 1);
		assert_int_equal(r.err, cases[i].err);
		if (cases[i].err)
			assert_true(r.rtt_us == 0);
		else
			assert_true(r.rtt_us > 0 && r.rtt_us < 1e6);
		if (fd >= 0)
			close(fd);
	}
	event_base_free(base);
}

static void test_probe_bad_args(void **state)
{
	struct event_base *base = event_base_new();
	struct test_result r = {0};

	(void)state;
	assert_non_null(base);
	errno = 0;
	assert_null(
		probe_start(base, "10.0.0.300", 9, NULL, 100, test_done, &r));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(probe_start(base, "::1", 9, NULL, 100, test_done, &r));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(probe_start(base, "127.0.0.1", 9, NULL, 100, NULL, &r));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(
		probe_start(NULL, "127.0.0.1", 9, NULL, 100, test_done, &r));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(probe_start(base, "127.0.0.1", 9, "ringnosuchdev0", 100,
				test_done, &r));
	/* Unprivileged on kernels before 5.7: EPERM. */
	assert_true(errno == ENODEV || (geteuid() != 0 && errno == EPERM));
	errno = 0;
	assert_null(probe_start(base, "127.0.0.1", 9,
				"a-name-longer-than-ifnamsiz", 100, test_done,
				&r));
	assert_int_equal(errno, ENODEV);
	assert_int_equal(event_base_loop(base, EVLOOP_NONBLOCK), 1);
	assert_int_equal(r.calls, 0);
	event_base_free(base);
}

/* Cancelled before the loop ran: no callback, nothing left behind
 * (ASan and valgrind see the frees), for a pending connect and for an
 * already decided one. */
static void test_probe_cancel(void **state)
{
	struct event_base *base = event_base_new();
	struct test_result r = {0};
	struct probe *a, *b;
	uint16_t port;
	int fd = test_socket(1, &port);

	(void)state;
	assert_non_null(base);
	assert_true(fd >= 0);
	a = probe_start(base, "127.0.0.1", port, NULL, 1000, test_done, &r);
	b = probe_start(base, "255.255.255.255", 9, NULL, 1000, test_done, &r);
	assert_non_null(a);
	assert_non_null(b);
	probe_cancel(a);
	probe_cancel(b);
	probe_cancel(NULL);
	/* No events left: the loop returns at once. */
	assert_int_equal(event_base_dispatch(base), 1);
	assert_int_equal(r.calls, 0);
	close(fd);
	event_base_free(base);
}

struct test_chain {
	struct event_base *base;
	uint16_t port;
	int calls;
	int errs[2];
};

static void test_chain_done(int err, double rtt_us, void *arg)
{
	struct test_chain *c = arg;

	(void)rtt_us;
	c->errs[c->calls++] = err;
	if (c->calls == 1)
		assert_non_null(probe_start(c->base, "127.0.0.1", c->port, NULL,
					    1000, test_chain_done, c));
}

/* A callback may start the next probe. */
static void test_probe_chain(void **state)
{
	struct test_chain c = {.base = event_base_new()};
	int fd = test_socket(1, &c.port);

	(void)state;
	assert_non_null(c.base);
	assert_true(fd >= 0);
	assert_non_null(probe_start(c.base, "127.0.0.1", c.port, NULL, 1000,
				    test_chain_done, &c));
	event_base_dispatch(c.base);
	assert_int_equal(c.calls, 2);
	assert_int_equal(c.errs[0], 0);
	assert_int_equal(c.errs[1], 0);
	close(fd);
	event_base_free(c.base);
}

/* The namespace part runs in a child: cmocka's asserts would unwind into
 * the child's copy of the runner, so it reports by exit code instead. */
static void test_cancel_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	probe_cancel(arg);
}

static int test_ns_routes(void)
{
	static const struct route_want want[] = {
		{"10.77.0.2", 0, "direct", "vA", "10.77.0.1", "", 0},
		{"10.66.0.5", 0, "gateway", "vA", "10.77.0.1", "10.77.0.2", 0},
		{"10.77.0.1", 0, "local", "lo", NULL, NULL, -1},
		/* No default route in the fresh namespace. */
		{"10.55.0.1", -ENETUNREACH, "unreachable", "", NULL, NULL, -1},
		/* Reject routes: the kernel's -EINVAL, -EACCES and
		 * -EHOSTUNREACH all come back as "unreachable",
		 * -EHOSTUNREACH. */
		{"10.44.0.1", -EHOSTUNREACH, "unreachable", NULL, NULL, NULL,
		 -1},
		{"10.45.0.1", -EHOSTUNREACH, "unreachable", NULL, NULL, NULL,
		 -1},
		{"10.46.0.1", -EHOSTUNREACH, "unreachable", NULL, NULL, NULL,
		 -1},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		NS_CHECK(test_route_is(&want[i]));
	return 0;
}

static int test_ns_probes(struct event_base *base)
{
	struct test_result r;
	struct probe *p;
	struct event *timer;
	struct timeval tv = {.tv_usec = 50 * 1000};
	double ms, t0;
	uint16_t port;
	int fd = test_socket(1, &port);

	NS_CHECK(fd >= 0);
	/* Bound to lo, the right device for 127.0.0.1. */
	NS_CHECK(test_run(base, "127.0.0.1", port, "lo", 1000, &r) >= 0);
	NS_CHECK(r.calls == 1 && r.err == 0 && r.rtt_us > 0);
	close(fd);

	/* The gateway 10.77.0.2 never answers (vB has no address). */
	ms = test_run(base, "10.66.0.5", 9, NULL, 300, &r);
	NS_CHECK(r.calls == 1);
	NS_CHECK(r.err == -ETIMEDOUT);
	NS_CHECK(ms >= 250 && ms < 2000);
	ms = test_run(base, "10.77.0.2", 9, "vA", 300, &r);
	NS_CHECK(r.calls == 1);
	NS_CHECK(r.err == -ETIMEDOUT);
	NS_CHECK(ms >= 250 && ms < 2000);

	/* Cancelled while connecting: the loop ends when the timer has
   * run, long before the probe's own 5 s timeout. */
	memset(&r, 0, sizeof(r));
	p = probe_start(base, "10.66.0.5", 9, NULL, 5000, test_done, &r);
	NS_CHECK(p);
	timer = evtimer_new(base, test_cancel_timer, p);
	NS_CHECK(timer && evtimer_add(timer, &tv) == 0);
	t0 = test_now_ms();
	event_base_dispatch(base);
	NS_CHECK(r.calls == 0);
	NS_CHECK(test_now_ms() - t0 < 1000);
	event_free(timer);
	return 0;
}

static int test_ns_linkdown(struct event_base *base)
{
	static const struct route_want vb_down[] = {
		{"10.77.0.2", 0, "direct", "vA", NULL, NULL, 1},
		{"10.66.0.5", 0, "gateway", NULL, NULL, NULL, 1},
	};
	struct probe_route r;
	struct test_result t;
	int i;

	if (testns_sh("ip link set vB down"))
		return 1;
	/* Carrier loss reaches the FIB through linkwatch: allow it 2 s. */
	for (i = 0; i < 40; i++) {
		NS_CHECK(probe_route_get("10.77.0.2", &r) == 0);
		if (r.linkdown)
			break;
		usleep(50 * 1000);
	}
	NS_CHECK(test_route_is(&vb_down[0]));
	NS_CHECK(test_route_is(&vb_down[1]));

	/* Bound to a device that is down: connect() fails at once with
   * ENETUNREACH, reported through the loop. */
	NS_CHECK(test_run(base, "10.77.0.2", 9, "vB", 300, &t) >= 0);
	NS_CHECK(t.calls == 1);
	NS_CHECK(t.err == -ENETUNREACH);
	return 0;
}

/* ---- what a probe request may target (ops) ------------------------------ */

static void test_target_check(void **state)
{
	static const struct {
		const char *dst;
		int scoped;
		const char *why; /* NULL: allowed */
	} cases[] = {
		{"10.89.1.2", 0, NULL},
		{"192.0.2.1", 0, NULL},
		{"169.254.3.4", 1, NULL},
		{"169.254.3.4", 0, "link-local"},
		{"127.0.0.1", 0, "loopback"},
		{"127.1.2.3", 1, "loopback"},
		{"0.0.0.0", 0, "unspecified"},
		{"224.0.0.1", 0, "multicast"},
		{"239.255.255.250", 1, "multicast"},
		{"255.255.255.255", 0, "broadcast"},
		{"240.0.0.1", 0, "reserved"},
		{"::1", 0, "IPv6"},
		{"fe80::1", 1, "IPv6"},
		{"n2", 0, "bad address"},
		{"", 0, "bad address"},
	};
	char why[160];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = probe_target_check(cases[i].dst, cases[i].scoped, why,
					    sizeof(why));

		if (!cases[i].why) {
			assert_int_equal(rc, 0);
			continue;
		}
		assert_int_equal(rc, -1);
		if (!strstr(why, cases[i].why))
			fail_msg("%s: \"%s\" lacks \"%s\"", cases[i].dst, why,
				 cases[i].why);
	}
	assert_int_equal(probe_target_check(NULL, 0, why, sizeof(why)), -1);
}

/* A ProbeRequest to a's ops instance, what it sent back cleared first. */
static void test_ops_probe(struct testsock_agent *a, uint64_t id,
			   const char *dst, const char *ifname,
			   unsigned timeout_ms)
{
	Ring__ProbeRequest pr = RING__PROBE_REQUEST__INIT;

	pr.peer_address = (char *)dst;
	pr.local_interface = (char *)ifname;
	pr.port = 7420;
	pr.timeout_ms = timeout_ms;
	testsock_agent_handle(a, id, RING__ENVELOPE__BODY_PROBE_REQUEST, &pr);
}

/* Targets that are no unicast data address are refused at once with an
 * Error, and nothing is left running. */
static void test_ops_probe_refusals(void **state)
{
	static const char *const bad[][3] = {
		{"127.0.0.1", "", "loopback"},
		{"224.0.0.5", "", "multicast"},
		{"255.255.255.255", "", "broadcast"},
		{"0.0.0.0", "", "unspecified"},
		{"::1", "", "IPv6"},
		{"169.254.0.9", "", "link-local"},
		{"not-an-address", "", "bad address"},
		{"10.89.1.2", "lo", "not a data interface"},
	};
	struct testsock_agent a;

	(void)state;
	assert_int_equal(testsock_agent_open(&a, NULL), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		test_ops_probe(&a, i + 1, bad[i][0], bad[i][1], 300);
		assert_int_equal(a.s.n, 1);
		assert_int_equal(a.s.type, RING__ENVELOPE__BODY_ERROR);
		if (!strstr(a.s.text, bad[i][2]))
			fail_msg("%s: \"%s\" lacks \"%s\"", bad[i][0], a.s.text,
				 bad[i][2]);
		assert_int_equal(ops_running(a.o), 0);
	}
	testsock_agent_close(&a);
}

/* The route decides: a probe is sent only through a data port (the one
 * named, if any); otherwise the reply reports the route with no connect
 * (answered before the loop runs: probe_start always reports from it).
 * Probes in flight are capped. Runs in the namespace of test_ns_child. */
static int test_ns_ops(struct event_base *base)
{
	struct testsock_agent a;
	struct testsock_sent *s = &a.s;

	if (testns_sh("ip link add mg0 type veth peer name mg1") ||
	    testns_sh("ip addr add 10.99.0.1/24 dev mg0") ||
	    testns_sh("ip link set mg0 up") ||
	    testns_sh("ip link set mg1 up") ||
	    testns_sh("ip route add default via 10.99.0.254 dev mg0"))
		return 1;
	NS_CHECK(testsock_agent_open(&a, base) == 0);
	ops_set_mgmt_interface(a.o, "mg0");

	/* A diagonal: the route is the management gateway. */
	test_ops_probe(&a, 1, "10.55.0.1", "", 300);
	NS_CHECK(s->n == 1 && s->type == RING__ENVELOPE__BODY_PROBE_REPLY);
	NS_CHECK(!strcmp(s->route_kind, "gateway") &&
		 !strcmp(s->route_if, "mg0") && !s->reachable);
	NS_CHECK(strstr(s->text, "not probed") && strstr(s->text, "mg0"));
	NS_CHECK(ops_running(a.o) == 0);
	/* Never through the management interface, even when asked. */
	test_ops_probe(&a, 2, "10.77.0.2", "mg0", 300);
	NS_CHECK(s->n == 1 && s->type == RING__ENVELOPE__BODY_ERROR);
	NS_CHECK(strstr(s->text, "not a data interface"));
	/* The route leaves by vA, not by the data port named. */
	NS_CHECK(testns_sh("ip link add vC type veth peer name vD") == 0);
	test_ops_probe(&a, 3, "10.77.0.2", "vC", 300);
	NS_CHECK(s->n == 1 && s->type == RING__ENVELOPE__BODY_PROBE_REPLY);
	NS_CHECK(strstr(s->text, "not probed") && strstr(s->text, "vC"));
	NS_CHECK(ops_running(a.o) == 0);
	/* An address of this node; a subnet broadcast. */
	test_ops_probe(&a, 4, "10.77.0.1", "", 300);
	NS_CHECK(s->n == 1 && strstr(s->text, "this node"));
	test_ops_probe(&a, 5, "10.77.0.3", "vA", 300);
	NS_CHECK(s->n == 1 && s->type == RING__ENVELOPE__BODY_ERROR &&
		 strstr(s->text, "broadcast"));
	/* Through the data port: sent, answered from the loop (vB has no
	 * address: unanswered). */
	test_ops_probe(&a, 6, "10.77.0.2", "vA", 200);
	NS_CHECK(s->n == 0 && ops_running(a.o) == 1);
	event_base_dispatch(base);
	NS_CHECK(s->n == 1 && s->type == RING__ENVELOPE__BODY_PROBE_REPLY);
	NS_CHECK(!strcmp(s->route_kind, "direct") &&
		 !strcmp(s->route_if, "vA"));
	NS_CHECK(!s->reachable && ops_running(a.o) == 0);
	/* A gateway through a data port is the data plane too. */
	test_ops_probe(&a, 7, "10.66.0.5", "", 200);
	NS_CHECK(s->n == 0 && ops_running(a.o) == 1);
	ops_cancel_all(a.o);
	/* At most OPS_MAX_PROBES in flight; the next is told so at once. */
	for (unsigned i = 0; i < OPS_MAX_PROBES; i++) {
		test_ops_probe(&a, 100 + i, "10.77.0.2", "vA", 5000);
		NS_CHECK(s->n == 0);
	}
	NS_CHECK(ops_running(a.o) == OPS_MAX_PROBES);
	test_ops_probe(&a, 999, "10.77.0.2", "vA", 5000);
	NS_CHECK(s->n == 1 && s->type == RING__ENVELOPE__BODY_ERROR);
	NS_CHECK(strstr(s->text, "busy") && strstr(s->text, "64"));
	NS_CHECK(ops_running(a.o) == OPS_MAX_PROBES);
	testsock_agent_close(&a);
	return testns_sh("ip route del default") || testns_sh("ip link del vC");
}

/* Real routes in a private network namespace: a veth pair vA/vB with
 * 10.77.0.1/30 on vA only, a route 10.66.0.0/24 via 10.77.0.2. */
static int test_ns_child(void)
{
	struct event_base *base;
	int rc;

	if (unshare(CLONE_NEWNET) < 0)
		return 77;
	if (testns_sh("ip link set lo up") ||
	    testns_sh("ip link add vA type veth peer name vB") ||
	    testns_sh("ip addr add 10.77.0.1/30 dev vA") ||
	    testns_sh("ip link set vA up") || testns_sh("ip link set vB up") ||
	    testns_sh("ip route add 10.66.0.0/24 via 10.77.0.2 dev vA") ||
	    testns_sh("ip route add blackhole 10.44.0.0/24") ||
	    testns_sh("ip route add prohibit 10.45.0.0/24") ||
	    testns_sh("ip route add unreachable 10.46.0.0/24"))
		return 1;
	base = event_base_new();
	NS_CHECK(base);
	rc = test_ns_routes();
	if (!rc)
		rc = test_ns_probes(base);
	if (!rc)
		rc = test_ns_ops(base);
	if (!rc)
		rc = test_ns_linkdown(base);
	event_base_free(base);
	return rc;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_local),
		cmocka_unit_test(test_route_bad_address),
		cmocka_unit_test(test_probe_outcomes),
		cmocka_unit_test(test_probe_bad_args),
		cmocka_unit_test(test_probe_cancel),
		cmocka_unit_test(test_probe_chain),
		cmocka_unit_test(test_target_check),
		cmocka_unit_test(test_ops_probe_refusals),
		TESTNS_UNIT_TEST(test_ns_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
