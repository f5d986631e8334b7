/* The verbs engine's pure parts: parameters, memory sizing and the
 * operator-facing error texts, plus set-up failures on a host whatever RDMA
 * it has. The data path itself runs against soft-RoCE in tests/rdma/. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "verbs.h"

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
	q = p, q.duration_ms = 10, expect_bad(&q, "duration");
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
	strcpy(l->netdev, "r1b");
	strcpy(l->gid_str, "::ffff:10.9.1.1");
	strcpy(r->gid_str, "::ffff:10.9.3.2");
}

static void test_explain(void **state)
{
	struct verbs_endpoint l, r;
	char out[400];

	(void)state;
	endpoints(&l, &r);
	/* Never worked: the rank-order failure of the field notes. */
	verbs_explain_wc(IBV_WC_RETRY_EXC_ERR, 0, &l, &r, "n3", out,
			 sizeof(out));
	assert_non_null(strstr(out, "transport retry exceeded"));
	assert_non_null(strstr(out, "r1b"));
	assert_non_null(strstr(out, "::ffff:10.9.3.2"));
	assert_non_null(strstr(out, "not ring neighbours"));
	/* Worked, then stopped: the peer went away, not the topology. */
	verbs_explain_wc(IBV_WC_RETRY_EXC_ERR, 120, &l, &r, "n2", out,
			 sizeof(out));
	assert_non_null(strstr(out, "after 120 messages"));
	assert_non_null(strstr(out, "n2 stopped answering"));
	assert_null(strstr(out, "not ring neighbours"));
	verbs_explain_wc(IBV_WC_REM_ACCESS_ERR, 0, &l, &r, "n2", out,
			 sizeof(out));
	assert_non_null(strstr(out, "remote access"));
	verbs_explain_rtr(ETIMEDOUT, &l, &r, "n3", out, sizeof(out));
	assert_non_null(strstr(out, "ibv_modify_qp(RTR)"));
	assert_non_null(strstr(out, "not ring neighbours"));
	verbs_explain_rtr(EINVAL, &l, &r, "n3", out, sizeof(out));
	assert_null(strstr(out, "not ring neighbours"));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_setup_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
