/* The verbs engine's pure parts: parameters, memory sizing and the
 * operator-facing error texts, plus set-up failures on a host whatever RDMA
 * it has. The data path itself runs against soft-RoCE in tests/rdma/. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/ops.h"
#include "testsock.h"
#include "agent/verbs.h"

static struct verbs_params bw(enum verbs_op op)
{
	struct verbs_params p;

	memset(&p, 0, sizeof(p));
	p.kind = VERBS_BW;
	p.op = op;
	verbs_params_defaults(&p);
	return p;
}

static void test_defaults(void **state)
{
	struct verbs_params w = bw(VERBS_WRITE), r = bw(VERBS_READ), l;
	char why[256];

	(void)state;
	assert_int_equal(w.qps, 4);
	assert_int_equal(w.size, 1u << 20);
	assert_int_equal(r.size, 4u << 20); /* READ needs larger messages */
	assert_int_equal(w.tx_depth % w.cq_mod, 0);
	assert_int_equal(w.duration_ms, 5000);
	assert_int_equal(verbs_params_check(&w, why, sizeof(why)), 0);
	assert_int_equal(verbs_params_check(&r, why, sizeof(why)), 0);
	assert_int_equal(verbs_params_memory(&w), 4ull << 20);
	memset(&l, 0, sizeof(l));
	l.kind = VERBS_LAT;
	l.n_sizes = 3;
	l.sizes[0] = 2, l.sizes[1] = 4096, l.sizes[2] = 65536;
	verbs_params_defaults(&l);
	assert_int_equal(l.qps, 1);
	assert_int_equal(l.lat_iterations, 1000);
	assert_int_equal(verbs_params_check(&l, why, sizeof(why)), 0);
	/* receive area and send area of the largest size */
	assert_int_equal(verbs_params_memory(&l), 2 * 65536);
}

static void expect_bad(const struct verbs_params *p, const char *word)
{
	char why[256] = "";

	assert_int_equal(verbs_params_check(p, why, sizeof(why)), -1);
	if (!strstr(why, word))
		fail_msg("'%s' does not mention '%s'", why, word);
}

static void test_bad_params(void **state)
{
	struct verbs_params p = bw(VERBS_WRITE), q;

	(void)state;
	q = p, q.qps = 0, expect_bad(&q, "qps");
	q = p, q.qps = VERBS_MAX_QPS + 1, expect_bad(&q, "qps");
	q = p, q.size = VERBS_MAX_BW_MSG + 1, expect_bad(&q, "size");
	q = p, q.cq_mod = 3, expect_bad(&q, "moderation");
	q = p, q.tx_depth = VERBS_MAX_TX_DEPTH + 1, expect_bad(&q, "depth");
	q = p, q.post_list = 65, expect_bad(&q, "post list");
	q = p, q.mtu = 1500, expect_bad(&q, "mtu");
	q = p, q.duration_ms = TESTLIMITS_SAMPLE_DURATION_MIN_MS - 1,
	expect_bad(&q, "duration");
	q = p, q.kind = (enum verbs_kind)7, expect_bad(&q, "kind");
	q = p, q.op = (enum verbs_op)9, expect_bad(&q, "operation");
	memset(&q, 0, sizeof(q));
	q.kind = VERBS_LAT;
	verbs_params_defaults(&q);
	expect_bad(&q, "sizes");
	q.n_sizes = 2, q.sizes[0] = 64, q.sizes[1] = 64;
	expect_bad(&q, "twice");
	q.sizes[1] = VERBS_MAX_LAT_MSG + 1;
	expect_bad(&q, "size");
}

static void endpoints(struct verbs_endpoint *l, struct verbs_endpoint *r)
{
	memset(l, 0, sizeof(*l));
	memset(r, 0, sizeof(*r));
	strcpy(l->device, "rxe1");
	l->port = 1;
	strcpy(l->netdev, "r1b");
	strcpy(l->gid_str, "::ffff:10.9.1.1");
	strcpy(r->gid_str, "::ffff:10.9.3.2");
	strcpy(r->ipv4, "10.9.3.2");
}

/* path_detail from a procfs tree: the neighbour entry and the route the
 * kernel has for the peer's address, or that it has none. */
static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_path_detail(void **state)
{
	char root[] = "/tmp/test_verbs_procXXXXXX", path[512], out[400];
	struct verbs_endpoint l, r;

	(void)state;
	endpoints(&l, &r);
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/proc", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/proc/net", root);
	assert_int_equal(mkdir(path, 0700), 0);
	/* A twin answered for the peer's address: the MAC is the evidence. */
	write_file(root, "proc/net/arp",
		   "IP address       HW type     Flags       HW address      "
		   "      Mask     Device\n"
		   "10.9.3.2         0x1         0x2         02:00:0a:09:03:62 "
		   "    *        r1b\n"
		   "10.9.3.9         0x1         0x0         00:00:00:00:00:00 "
		   "    *        r1a\n");
	/* 10.9.3.0/24 on r1b, the default via the management gateway
	 * 192.168.0.1; the kernel prints network-order words in host
	 * (little-endian) hex: 10.9.3.0 is "0003090A". */
	write_file(root, "proc/net/route",
		   "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\t"
		   "Metric\tMask\t\tMTU\tWindow\tIRTT\n"
		   "mgmt0\t00000000\t0100A8C0\t0003\t0\t0\t0\t00000000\t0"
		   "\t0\t0\n"
		   "r1b\t0003090A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0"
		   "\t0\t0\n");
	assert_int_equal(verbs_path_detail(&l, &r, root, out, sizeof(out)), 0);
	assert_string_equal(
		out, "local function rxe1 port 1, its GID ::ffff:10.9.1.1 "
		     "on netdev r1b; peer GID ::ffff:10.9.3.2; the "
		     "kernel resolved 10.9.3.2 to MAC 02:00:0a:09:03:62 "
		     "on r1b; route to 10.9.3.2: on link, dev r1b");
	/* An unanswered ARP, and a peer off every data subnet: the route
	 * is the management gateway's (the diagonal of the reference cluster). */
	strcpy(r.ipv4, "10.9.3.9");
	assert_int_equal(verbs_path_detail(&l, &r, root, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "the kernel's neighbour entry for "
				    "10.9.3.9 on r1a is incomplete"));
	strcpy(r.ipv4, "10.9.7.2");
	assert_int_equal(verbs_path_detail(&l, &r, root, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "; no neighbour entry for 10.9.7.2; "
				    "route to 10.9.7.2 via 192.168.0.1 dev "
				    "mgmt0"));
	/* No procfs there: said, not guessed. */
	snprintf(path, sizeof(path), "%s/none", root);
	assert_int_equal(verbs_path_detail(&l, &r, path, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "(neighbour table unreadable)"));
	assert_non_null(strstr(out, "(route table unreadable)"));
	/* A short buffer stays terminated. */
	assert_int_equal(verbs_path_detail(&l, &r, root, out, 20), 0);
	assert_int_equal(strlen(out), 19);
	snprintf(path, sizeof(path), "%s/proc/net/arp", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/net/route", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/net", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/proc", root);
	rmdir(path);
	rmdir(root);
}

/* The texts for a failed work completion (wc) or a failed move to RTR, and
 * whether they are typed as not adjacent (ERROR_NOT_ADJACENT on the
 * wire): each has all of has[] and none of lacks. */
static void test_explain(void **state)
{
	static const struct {
		const char *what;
		int rtr, status; /* rtr: status is an errno */
		unsigned messages;
		const char *peer;
		int not_adjacent;
		const char *has[4], *lacks;
	} cases[] = {
		/* Never worked: the rank-order failure of docs/REFERENCE.md. */
		{"retry, never worked",
		 0,
		 IBV_WC_RETRY_EXC_ERR,
		 0,
		 "n3",
		 1,
		 {"transport retry exceeded", "r1b", "::ffff:10.9.3.2",
		  "no data-plane path"},
		 /* Only the coordinator knows adjacency. */
		 "not ring neighbours"},
		/* Worked, then stopped: the peer went away, not the
		 * topology. */
		{"retry after 120",
		 0,
		 IBV_WC_RETRY_EXC_ERR,
		 120,
		 "n2",
		 0,
		 {"after 120 messages", "n2 stopped answering"},
		 "not ring neighbours"},
		{"remote access",
		 0,
		 IBV_WC_REM_ACCESS_ERR,
		 0,
		 "n2",
		 0,
		 {"remote access"},
		 NULL},
		{"RTR timed out",
		 1,
		 ETIMEDOUT,
		 0,
		 "n3",
		 1,
		 {"ibv_modify_qp(RTR)", "no data-plane path", "rxe1 port 1"},
		 "not ring neighbours"},
		{"RTR invalid",
		 1,
		 EINVAL,
		 0,
		 "n3",
		 0,
		 {NULL},
		 "not ring neighbours"},
	};
	struct verbs_endpoint l, r;
	char out[400];

	(void)state;
	endpoints(&l, &r);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		print_message("    %s\n", cases[i].what);
		if (cases[i].rtr)
			rc = verbs_explain_rtr(cases[i].status, &l, &r,
					       cases[i].peer, out, sizeof(out));
		else
			rc = verbs_explain_wc(
				(enum ibv_wc_status)cases[i].status,
				cases[i].messages, &l, &r, cases[i].peer, out,
				sizeof(out));
		assert_int_equal(rc, cases[i].not_adjacent);
		for (size_t k = 0; k < 4 && cases[i].has[k]; k++)
			if (!strstr(out, cases[i].has[k]))
				fail_msg("%s: '%s' lacks '%s'", cases[i].what,
					 out, cases[i].has[k]);
		if (cases[i].lacks && strstr(out, cases[i].lacks))
			fail_msg("%s: '%s' has '%s'", cases[i].what, out,
				 cases[i].lacks);
	}
}

/* Both ports' active MTU decide; --mtu only lowers it. */
static void test_path_mtu(void **state)
{
	(void)state;
	assert_int_equal(verbs_path_mtu(4096, 1024, 0), 1024);
	assert_int_equal(verbs_path_mtu(1024, 4096, 0), 1024);
	assert_int_equal(verbs_path_mtu(4096, 4096, 0), 4096);
	assert_int_equal(verbs_path_mtu(4096, 1024, 512), 512);
	assert_int_equal(verbs_path_mtu(4096, 1024, 2048), 1024);
	assert_int_equal(verbs_path_mtu(2048, 2048, 2048), 2048);
}

static void never_cb(struct verbs_test *t, int err, const char *why, void *arg)
{
	(void)t, (void)err, (void)why, (void)arg;
	fail_msg("connected callback without a connect");
}

static void never_done(struct verbs_test *t, const struct engine_result *r,
		       void *arg)
{
	(void)t, (void)r, (void)arg;
	fail_msg("done callback without a test");
}

/* Whatever RDMA this host has, a device that does not exist, a device the
 * configuration excludes and an interface that does not exist are refused
 * with a reason, and nothing is left behind. */
static void test_setup_refusals(void **state)
{
	struct event_base *base = event_base_new();
	struct verbs_params p = bw(VERBS_WRITE);
	struct verbs_endpoint local;
	struct agent_conf conf;
	struct verbs_setup s = {0};
	char why[320];

	(void)state;
	agent_conf_defaults(&conf);
	s.requester = 1;
	s.peer = "n2";
	s.deadline_ms = 10000;
	s.conf = &conf;
	s.device = "nosuchdev9";
	assert_null(verbs_setup(base, &s, &p, &local, never_cb, never_done,
				NULL, why, sizeof(why)));
	assert_true(strstr(why, "nosuchdev9") || strstr(why, "no RDMA"));
	s.device = "";
	s.interface = "nosuchif9";
	assert_null(verbs_setup(base, &s, &p, &local, never_cb, never_done,
				NULL, why, sizeof(why)));
	assert_true(strstr(why, "nosuchif9") || strstr(why, "no RDMA"));
	s.interface = "";
	strcpy(conf.rdma_globs[0], "nothing-matches-*");
	conf.n_rdma_globs = 1;
	assert_null(verbs_setup(base, &s, &p, &local, never_cb, never_done,
				NULL, why, sizeof(why)));
	assert_true(why[0] != '\0');
	p.qps = 0; /* invalid after defaults would fix it: check first */
	p.cq_mod = 5;
	assert_null(verbs_setup(base, &s, &p, &local, never_cb, never_done,
				NULL, why, sizeof(why)));
	assert_non_null(strstr(why, "moderation"));
	event_base_free(base);
}

/* ---- what concurrent requests may hold (ops) ---------------------------- */

/* An RdmaSetup for a bandwidth test of qps x size bytes. */
static void rdma_setup(struct testsock_agent *a, uint8_t id, unsigned qps,
		       unsigned size)
{
	Ring__RdmaSetup rs = RING__RDMA_SETUP__INIT;
	Ring__TestParams tp = RING__TEST_PARAMS__INIT;
	Ring__RdmaParams rp = RING__RDMA_PARAMS__INIT;
	uint8_t test_id[16];

	memset(test_id, id, sizeof(test_id));
	rp.qps = qps;
	rp.size = size;
	tp.kind = RING__TEST_KIND__TEST_RDMA_BW;
	tp.direction = RING__DIRECTION__DIR_A_TO_B;
	tp.duration_ms = 1000;
	tp.rdma = &rp;
	rs.params = &tp;
	rs.test_id.data = test_id;
	rs.test_id.len = sizeof(test_id);
	rs.requester = 1;
	rs.device = "nosuchdev9";
	rs.peer = "n2";
	rs.deadline_ms = 5000;
	testsock_agent_handle(a, id, RING__ENVELOPE__BODY_RDMA_SETUP, &rs);
	assert_int_equal(a->s.n, 1);
}

/* All RDMA tests of an agent share rdma_max_total_memory: a test that
 * does not fit is refused before any device is opened, with both figures;
 * a failed set-up gives back what it reserved. (Several tests holding the
 * budget at once need a device: tests/rdma.) */
static void test_ops_rdma_budget(void **state)
{
	struct testsock_agent a;

	(void)state;
	assert_int_equal(testsock_agent_open(&a, NULL), 0);
	a.conf.rdma_max_total_memory = 64ull << 20;
	rdma_setup(&a, 1, 2, 64u << 20);
	assert_int_equal(a.s.type, RING__ENVELOPE__BODY_ERROR);
	assert_non_null(strstr(a.s.text, "needs 128 MiB"));
	assert_non_null(strstr(a.s.text, "hold 0 MiB of the 64 MiB"));
	assert_non_null(strstr(a.s.text, "rdma_max_total_memory"));
	/* Fits: refused by the device, twice (nothing stays reserved). */
	for (uint8_t i = 2; i < 4; i++) {
		rdma_setup(&a, i, 1, 64u << 20);
		assert_int_equal(a.s.type, RING__ENVELOPE__BODY_ERROR);
		assert_null(strstr(a.s.text, "busy"));
		assert_true(strstr(a.s.text, "nosuchdev9") ||
			    strstr(a.s.text, "no RDMA"));
	}
	assert_int_equal(ops_running(a.o), 0);
	/* The default: twice rdma_max_memory. */
	a.conf.rdma_max_total_memory = 0;
	a.conf.rdma_max_memory = 16ull << 20;
	rdma_setup(&a, 5, 3, 16u << 20);
	assert_non_null(strstr(a.s.text, "of the 32 MiB"));
	testsock_agent_close(&a);
}

static void tcp_listen(struct testsock_agent *a, uint64_t id)
{
	Ring__TestListenRequest lr = RING__TEST_LISTEN_REQUEST__INIT;
	Ring__TestParams tp = RING__TEST_PARAMS__INIT;
	uint8_t token[16] = "0123456789abcdef";

	tp.kind = RING__TEST_KIND__TEST_TCP_BW;
	tp.streams = 1;
	tp.duration_ms = 1000;
	lr.params = &tp;
	lr.bind_address = "127.0.0.1";
	lr.token.data = token;
	lr.token.len = sizeof(token);
	lr.accept_timeout_ms = 5000;
	testsock_agent_handle(a, id, RING__ENVELOPE__BODY_TEST_LISTEN_REQUEST,
			      &lr);
	assert_int_equal(a->s.n, 1);
}

/* TCP listeners, TCP runs and RDMA tests together: at most OPS_MAX_TESTS;
 * the next is refused at once, and nothing was started for it. */
static void test_ops_tests_cap(void **state)
{
	struct testsock_agent a;

	(void)state;
	assert_int_equal(testsock_agent_open(&a, NULL), 0);
	for (unsigned i = 0; i < OPS_MAX_TESTS; i++) {
		tcp_listen(&a, i + 1);
		assert_int_equal(a.s.type,
				 RING__ENVELOPE__BODY_TEST_LISTEN_REPLY);
	}
	assert_int_equal(ops_running(a.o), OPS_MAX_TESTS);
	tcp_listen(&a, 10);
	assert_int_equal(a.s.type, RING__ENVELOPE__BODY_ERROR);
	assert_non_null(strstr(a.s.text, "busy: 8 tests in flight"));
	rdma_setup(&a, 11, 1, 1u << 20);
	assert_int_equal(a.s.type, RING__ENVELOPE__BODY_ERROR);
	assert_non_null(strstr(a.s.text, "busy: 8 tests in flight"));
	assert_int_equal(ops_running(a.o), OPS_MAX_TESTS);
	/* Cancelled (the session went away): room again. */
	ops_cancel_all(a.o);
	tcp_listen(&a, 12);
	assert_int_equal(a.s.type, RING__ENVELOPE__BODY_TEST_LISTEN_REPLY);
	ops_free(a.o);
	a.o = NULL;
	/* Freed listeners finish in the loop once their threads are done. */
	event_base_dispatch(a.base);
	testsock_agent_close(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_path_detail),
		cmocka_unit_test(test_path_mtu),
		cmocka_unit_test(test_setup_refusals),
		cmocka_unit_test(test_ops_rdma_budget),
		cmocka_unit_test(test_ops_tests_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
