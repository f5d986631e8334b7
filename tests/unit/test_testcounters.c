/* testcounters and counters_eval: the counters around a test read from the
 * fixture trees tests/fixtures/counters/{before,after} (mkcounters.sh)
 * through a link switched between the two reads: what moved, in order
 * (evidence, then volume), a counter that went back (left out), files that
 * are no counters, an interface that is not there, the bound on moved
 * counters; the ethtool name filter; and the coordinator's side: an
 * edge's counters over its tests, findings (loss, congestion, pause
 * rates against the threshold, link flaps) and the arrival checks. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sched.h>
#include <sys/mount.h>

#include "coordinator/counters_eval.h"
#include "agent/testcounters.h"
#include "testns.h"
#include "testutil.h"
#include "coordinator/validate.h"

struct fixture {
	char dir[64];	       /* temporary */
	char root[PATH_MAX];   /* dir/root: a link to before or after */
	char before[PATH_MAX]; /* the fixture's trees */
	char after[PATH_MAX];
};

static int setup(void **state)
{
	const char *fx = getenv("RING_FIXTURES");
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || !fx)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/ring-tcount-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->root, sizeof(f->root), "%s/root", f->dir);
	snprintf(f->before, sizeof(f->before), "%s/counters/before", fx);
	snprintf(f->after, sizeof(f->after), "%s/counters/after", fx);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	testutil_rm_tree(f->dir);
	free(f);
	return 0;
}

/* The root now stands for the tree at target. */
static void point(const struct fixture *f, const char *target)
{
	unlink(f->root);
	assert_int_equal(symlink(target, f->root), 0);
}

static const Ring__CounterDelta *find(const Ring__TestResult *r,
				      const char *source, const char *name)
{
	for (size_t i = 0; i < r->n_counters; i++)
		if (!strcmp(r->counters[i]->source, source) &&
		    !strcmp(r->counters[i]->name, name))
			return r->counters[i];
	return NULL;
}

static uint64_t moved(const Ring__TestResult *r, const char *source,
		      const char *name)
{
	const Ring__CounterDelta *d = find(r, source, name);

	return d ? d->delta : 0;
}

static void test_mlx5_port(void **state)
{
	struct fixture *f = *state;
	Ring__TestResult r = RING__TEST_RESULT__INIT;
	struct tcount *c;

	point(f, f->before);
	c = tcount_begin(f->root, "enp1s0f0np0", NULL, NULL, "rocep1s0f0", 1);
	assert_non_null(c);
	point(f, f->after);
	tcount_end(c, &r);
	assert_string_equal(r.counters_error, "");
	assert_int_equal(r.n_counters, 11);
	assert_int_equal(moved(&r, "netdev", "rx_dropped"), 4);
	assert_int_equal(moved(&r, "netdev", "rx_crc_errors"), 2);
	assert_int_equal(moved(&r, "netdev", "carrier_changes"), 2);
	assert_int_equal(moved(&r, "netdev", "carrier_down_count"), 1);
	assert_int_equal(moved(&r, "rdma", "port_rcv_errors"), 1);
	assert_int_equal(moved(&r, "hw", "out_of_sequence"), 12);
	assert_int_equal(moved(&r, "hw", "local_ack_timeout_err"), 2);
	assert_int_equal(moved(&r, "hw", "np_cnp_sent"), 40);
	assert_int_equal(moved(&r, "hw", "rp_cnp_handled"), 38);
	assert_int_equal(moved(&r, "hw", "np_ecn_marked_roce_packets"), 41);
	/* Volume last: the words counter as it is (not x4: a count). */
	assert_string_equal(r.counters[10]->name, "port_xmit_data");
	assert_int_equal(r.counters[10]->delta, 2500000000ull);
	/* Back from 10 to 3: a reset, not a count. Never read: bytes,
	 * lifespan (a setting), a file that is not a number. */
	assert_null(find(&r, "netdev", "rx_errors"));
	assert_null(find(&r, "netdev", "rx_bytes"));
	assert_null(find(&r, "hw", "lifespan"));
	assert_null(find(&r, "hw", "unreadable"));
	assert_null(find(&r, "netdev", "rx_missed_errors"));
	for (size_t i = 0; i < r.n_counters; i++) {
		const Ring__CounterDelta *d = r.counters[i];
		int rdma =
			!strcmp(d->source, "rdma") || !strcmp(d->source, "hw");

		assert_string_equal(d->interface, "enp1s0f0np0");
		assert_string_equal(d->rdma_device, rdma ? "rocep1s0f0" : "");
		assert_int_equal(d->rdma_port, rdma ? 1 : 0);
		assert_true(d->span_s >= 0 && d->span_s < 60);
		assert_string_equal(d->node, "");
	}
	/* What the agent sends passes the coordinator's checks. */
	{
		char why[200];

		assert_int_equal(validate_message(&r.base, why, sizeof(why)),
				 0);
	}
	tcount_free(c);
}

static void test_soft_roce(void **state)
{
	struct fixture *f = *state;
	Ring__TestResult r = RING__TEST_RESULT__INIT;
	struct tcount *c;

	point(f, f->before);
	c = tcount_begin(f->root, "veth0", NULL, NULL, "rxe0", 1);
	assert_non_null(c);
	point(f, f->after);
	tcount_end(c, &r);
	/* rxe has no counters/ directory: not an error. */
	assert_string_equal(r.counters_error, "");
	assert_int_equal(r.n_counters, 4);
	assert_string_equal(r.counters[0]->name, "duplicate_request");
	assert_int_equal(r.counters[0]->delta, 3);
	assert_int_equal(moved(&r, "hw", "sent_pkts"), 5000);
	assert_int_equal(moved(&r, "hw", "rcvd_pkts"), 2000);
	assert_int_equal(moved(&r, "hw", "ack_deferred"), 8);
	tcount_free(c);
}

static void test_not_there(void **state)
{
	struct fixture *f = *state;
	Ring__TestResult r = RING__TEST_RESULT__INIT;
	struct tcount *c;

	point(f, f->before);
	c = tcount_begin(f->root, "nope0", NULL, NULL, NULL, 0);
	assert_non_null(c);
	tcount_end(c, &r);
	assert_int_equal(r.n_counters, 0);
	assert_string_equal(r.counters_error, "nope0: no statistics in sysfs");
	tcount_free(c);
	/* B's bind address that no interface here holds. */
	ring__test_result__init(&r);
	c = tcount_begin(f->root, "", "192.0.2.77", NULL, NULL, 0);
	assert_non_null(c);
	tcount_end(c, &r);
	assert_int_equal(r.n_counters, 0);
	assert_string_equal(r.counters_error,
			    "no interface known for this test's address");
	tcount_free(c);
}

static void mkdirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	assert_int_equal(mkdir(buf, 0755), 0);
}

static void put(const char *dir, const char *file, unsigned v)
{
	char path[PATH_MAX + 64];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "%u\n", v);
	assert_int_equal(fclose(fp), 0);
}

/* 200 error counters move: 128 reported, the rest said. */
static void test_bound(void **state)
{
	struct fixture *f = *state;
	Ring__TestResult r = RING__TEST_RESULT__INIT;
	char t[2][PATH_MAX], hw[PATH_MAX], name[32], want[128];
	struct tcount *c;

	for (int k = 0; k < 2; k++) {
		snprintf(t[k], sizeof(t[k]), "%s/t%d", f->dir, k);
		snprintf(hw, sizeof(hw),
			 "%s/sys/class/infiniband/dev0/ports/1/hw_counters",
			 t[k]);
		mkdirs(hw);
		for (int i = 0; i < 200; i++) {
			snprintf(name, sizeof(name), "c%03d_err", i);
			put(hw, name, (unsigned)k);
		}
	}
	point(f, t[0]);
	c = tcount_begin(f->root, NULL, NULL, NULL, "dev0", 1);
	point(f, t[1]);
	tcount_end(c, &r);
	assert_int_equal(r.n_counters, TCOUNT_MAX_DELTAS);
	snprintf(want, sizeof(want),
		 "%d more moved counters left out (at most %d)",
		 200 - TCOUNT_MAX_DELTAS, TCOUNT_MAX_DELTAS);
	assert_string_equal(r.counters_error, want);
	tcount_free(c);
}

static void test_ethtool_names(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(tcount_ethtool_name("rx_pause_ctrl_phy", out, 64), 1);
	assert_string_equal(out, "rx_pause_ctrl_phy");
	assert_int_equal(tcount_ethtool_name("rx3_wqe_err", out, 64), 1);
	assert_string_equal(out, "rx*_wqe_err");
	assert_int_equal(tcount_ethtool_name("tx12_dropped", out, 64), 1);
	assert_string_equal(out, "tx*_dropped");
	assert_int_equal(tcount_ethtool_name("rx_queue_0_drops", out, 64), 1);
	assert_string_equal(out, "rx_queue_*_drops");
	/* Priorities and lanes are not queues. */
	assert_int_equal(tcount_ethtool_name("rx_prio3_pause", out, 64), 1);
	assert_string_equal(out, "rx_prio3_pause");
	assert_int_equal(tcount_ethtool_name("rx_err_lane_0_phy", out, 64), 1);
	assert_string_equal(out, "rx_err_lane_0_phy");
	assert_int_equal(tcount_ethtool_name("rx_discards_phy", out, 64), 1);
	assert_int_equal(tcount_ethtool_name("rx_out_of_buffer", out, 64), 1);
	assert_int_equal(tcount_ethtool_name("rx_corrected_bits_phy", out, 64),
			 1);
	assert_int_equal(tcount_ethtool_name("link_down_events_phy", out, 64),
			 1);
	assert_int_equal(tcount_ethtool_name("rx_ecn_mark", out, 64), 1);
	/* Volume and the rest: not kept. */
	assert_int_equal(tcount_ethtool_name("rx_bytes", out, 64), 0);
	assert_int_equal(
		tcount_ethtool_name("rx_vport_unicast_packets", out, 64), 0);
	assert_int_equal(tcount_ethtool_name("ch3_events", out, 64), 0);
	assert_int_equal(tcount_is_volume("hw", "sent_pkts"), 1);
	assert_int_equal(tcount_is_volume("rdma", "port_xmit_data"), 1);
	assert_int_equal(tcount_is_volume("ethtool", "rx_pause_ctrl_phy"), 0);
	assert_int_equal(tcount_is_volume("hw", "out_of_sequence"), 0);
	assert_int_equal(tcount_is_volume("hw", "np_ecn_marked_roce_packets"),
			 0);
	assert_int_equal(tcount_is_volume("netdev", "tx_dropped"), 0);
}

/* ---- the coordinator's side ---- */

static Ring__CounterDelta cd(const char *ifname, const char *dev,
			     const char *source, const char *name,
			     uint64_t delta, double span)
{
	Ring__CounterDelta d = RING__COUNTER_DELTA__INIT;

	d.interface = (char *)ifname;
	d.rdma_device = (char *)dev;
	d.rdma_port = *dev ? 1 : 0;
	d.source = (char *)source;
	d.name = (char *)name;
	d.delta = delta;
	d.span_s = span;
	return d;
}

static const struct finding *with_code(const struct finding *f, unsigned n,
				       const char *code)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(f[i].code, code))
			return &f[i];
	return NULL;
}

/* Whether finding x's text holds want (copied: the compiler cannot see
 * that x points into a filled array). */
static int says(const struct finding *x, const char *want)
{
	char text[sizeof(x->text)];

	snprintf(text, sizeof(text), "%s", x->text);
	return strstr(text, want) != NULL;
}

static void test_classify(void **state)
{
	(void)state;
	assert_int_equal(cev_classify("hw", "out_of_sequence"), CEV_LOSS);
	assert_int_equal(cev_classify("hw", "packet_seq_err"), CEV_LOSS);
	assert_int_equal(cev_classify("hw", "local_ack_timeout_err"), CEV_LOSS);
	assert_int_equal(cev_classify("ethtool", "rx_discards_phy"), CEV_LOSS);
	assert_int_equal(cev_classify("hw", "duplicate_request"), CEV_LOSS);
	assert_int_equal(cev_classify("hw", "np_cnp_sent"), CEV_CONGESTION);
	assert_int_equal(cev_classify("hw", "np_ecn_marked_roce_packets"),
			 CEV_CONGESTION);
	assert_int_equal(cev_classify("ethtool", "tx_pause_ctrl_phy"),
			 CEV_PAUSE);
	assert_int_equal(cev_classify("netdev", "carrier_down_count"),
			 CEV_LINK);
	assert_int_equal(cev_classify("rdma", "link_downed"), CEV_LINK);
	assert_int_equal(cev_classify("ethtool", "rx_corrected_bits_phy"),
			 CEV_CABLE);
	assert_int_equal(cev_classify("hw", "rnr_nak_retry_err"), CEV_NONE);
	assert_int_equal(cev_classify("hw", "sent_pkts"), CEV_NONE);
	assert_int_equal(cev_classify("hw", "ack_deferred"), CEV_NONE);
	assert_int_equal(cev_classify("hw", "completer_retry_err"), CEV_LOSS);
	assert_int_equal(cev_classify("hw", "rcvd_seq_err"), CEV_LOSS);
	assert_int_equal(cev_classify("rdma", "port_xmit_data"), CEV_NONE);
}

static void test_report_findings(void **state)
{
	Ring__CounterDelta a[4], b[2], *ap[4], *bp[2];
	Ring__TestResult ra = RING__TEST_RESULT__INIT;
	Ring__TestResult rb = RING__TEST_RESULT__INIT;
	Ring__TestReport rep = RING__TEST_REPORT__INIT;
	struct cev_report_buf buf;
	const struct finding *x;
	struct finding f[16];
	unsigned n;

	(void)state;
	a[0] = cd("enp1s0f0np0", "rocep1s0f0", "hw", "out_of_sequence", 12, 5);
	a[1] = cd("enp1s0f0np0", "rocep1s0f0", "hw", "np_cnp_sent", 40, 5);
	a[2] = cd("enp1s0f0np0", "", "ethtool", "rx_pause_ctrl_phy", 2000, 5);
	a[3] = cd("enp1s0f0np0", "rocep1s0f0", "hw", "sent_pkts", 9000, 5);
	b[0] = cd("enp1s0f1np1", "", "netdev", "carrier_down_count", 1, 5);
	b[1] = cd("enp1s0f1np1", "", "ethtool", "tx_pause_ctrl_phy", 50, 5);
	for (int i = 0; i < 4; i++)
		ap[i] = &a[i];
	for (int i = 0; i < 2; i++)
		bp[i] = &b[i];
	ra.counters = ap;
	ra.n_counters = 4;
	rb.counters = bp;
	rb.n_counters = 2;
	rep.a = "n1";
	rep.b = "n2";
	rep.a_side = &ra;
	rep.b_side = &rb;
	n = cev_report_findings(&rep, f, 16);
	assert_int_equal(n, 5);
	/* Flaps first, then loss, pause, congestion. */
	assert_string_equal(f[0].code, "link_flap");
	assert_string_equal(f[0].text,
			    "test n1-n2: n2 enp1s0f1np1: the link went down "
			    "during the tests: carrier_down_count +1 (netdev)");
	x = with_code(f, n, "counter_loss");
	assert_non_null(x);
	assert_string_equal(x->level, "warn");
	assert_string_equal(x->text,
			    "test n1-n2: n1 rocep1s0f0 port 1 (enp1s0f0np0): "
			    "loss or error counters moved during the tests: "
			    "out_of_sequence +12 (hw)");
	/* 2000 in 5 s: 400/s, a storm; 50 in 5 s: 10/s, back-pressure. */
	x = with_code(f, n, "pause_storm");
	assert_non_null(x);
	assert_true(says(x, "n1 enp1s0f0np0: 2000 pause frames "
			    "in 5.0 s of tests (400/s, a pause "
			    "storm)"));
	x = with_code(f, n, "pause_frames");
	assert_non_null(x);
	assert_string_equal(x->level, "info");
	assert_true(says(x, "n2 enp1s0f1np1: 50 pause frames"));
	x = with_code(f, n, "ecn_congestion");
	assert_non_null(x);
	assert_true(says(x, "np_cnp_sent +40 (hw)"));
	/* The report carries them. */
	cev_report_attach(&rep, &buf);
	assert_int_equal(rep.n_findings, 5);
	assert_string_equal(rep.findings[0]->code, "link_flap");
}

static void test_edge(void **state)
{
	Ring__CounterDelta a = cd("eth1", "", "netdev", "tx_dropped", 5, 2.5);
	Ring__CounterDelta *ap = &a, **v;
	Ring__TestResult ra = RING__TEST_RESULT__INIT;
	Ring__TestResult rb = RING__TEST_RESULT__INIT;
	Ring__TestReport rep = RING__TEST_REPORT__INIT;
	Ring__TestParams params = RING__TEST_PARAMS__INIT;
	struct cev_edge *acc = NULL;
	struct finding f[8];
	size_t n;

	(void)state;
	assert_int_equal(cev_edge_view(NULL, &v), 0);
	ra.counters = &ap;
	ra.n_counters = 1;
	rb.window_s = 2; /* nothing moved there: its window counts */
	rep.a = "n1";
	rep.b = "n2";
	rep.a_side = &ra;
	rep.b_side = &rb;
	assert_int_equal(cev_edge_add(&acc, &rep), 0);
	assert_int_equal(cev_edge_add(&acc, &rep), 0);
	/* The other direction's test: B's node is now A. */
	rep.a = "n2";
	rep.b = "n1";
	/* No window (an RDMA target): the asked warm-up and duration. */
	rb.window_s = 0;
	params.warmup_ms = 500;
	params.duration_ms = 2500;
	rep.params = &params;
	assert_int_equal(cev_edge_add(&acc, &rep), 0);
	n = cev_edge_view(acc, &v);
	assert_int_equal(n, 2);
	assert_string_equal(v[0]->node, "n1");
	assert_int_equal(v[0]->delta, 10);
	assert_true(v[0]->span_s > 7.99 && v[0]->span_s < 8.01); /* 2.5+2.5+3 */
	assert_string_equal(v[1]->node, "n2");
	assert_int_equal(v[1]->delta, 5);
	assert_true(v[1]->span_s > 6.49 && v[1]->span_s < 6.51); /* 2+2+2.5 */
	assert_int_equal(cev_findings("edge n1-n2", v, n, f, 8), 2);
	assert_string_equal(f[0].text,
			    "edge n1-n2: n1 eth1: loss or error counters moved "
			    "during the tests: tx_dropped +10 (netdev)");
	cev_edge_free(acc);
}

static void test_validate(void **state)
{
	Ring__CounterDelta d = cd("eth1", "", "netdev", "tx_dropped", 1, 1);
	Ring__CounterDelta **many = calloc(257, sizeof(*many));
	Ring__CounterDelta *dp = &d;
	Ring__TestResult r = RING__TEST_RESULT__INIT;
	char why[200];

	(void)state;
	r.counters = &dp;
	r.n_counters = 1;
	assert_int_equal(validate_message(&r.base, why, sizeof(why)), 0);
	d.source = "sysfs";
	assert_int_equal(validate_message(&r.base, why, sizeof(why)), -1);
	assert_string_equal(why, "counter 0: invalid");
	d.source = "hw";
	d.name = "two words";
	assert_int_equal(validate_message(&r.base, why, sizeof(why)), -1);
	d.name = "x";
	d.node = "n1"; /* the coordinator's to set */
	assert_int_equal(validate_message(&r.base, why, sizeof(why)), -1);
	d.node = "";
	d.interface = "a/b";
	assert_int_equal(validate_message(&r.base, why, sizeof(why)), -1);
	d.interface = "eth1";
	for (int i = 0; i < 257; i++)
		many[i] = &d;
	r.counters = many;
	r.n_counters = 257;
	assert_int_equal(validate_message(&r.base, why, sizeof(why)), -1);
	assert_string_equal(why, "257 counters (max 256)");
	free(many);
}

/* The real kernel in a private namespace: the interface found by B's
 * bind address and by A's route to its peer, the kernel's ethtool answer
 * for a veth (its statistics read without an error), and a flap of the
 * peer end counted on vA. */
static int test_ns_child(void)
{
	Ring__TestResult r[2];
	struct tcount *c[2];

	/* sysfs shows the namespace it was mounted in: mount it anew, as
	 * ip netns exec does. */
	if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0 ||
	    mount("", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("sysfs", "/sys", "sysfs", 0, NULL) < 0)
		return 77;
	if (testns_sh("ip link set lo up") ||
	    testns_sh("ip link add vA type veth peer name vB") ||
	    testns_sh("ip addr add 10.77.0.1/30 dev vA") ||
	    testns_sh("ip link set vA up") || testns_sh("ip link set vB up"))
		return 1;
	c[0] = tcount_begin("", NULL, "10.77.0.1", NULL, NULL, 0);
	c[1] = tcount_begin(NULL, "", NULL, "10.77.0.2", NULL, 0);
	NS_CHECK(c[0] && c[1]);
	NS_CHECK(testns_sh("ip link set vB down") == 0);
	NS_CHECK(testns_sh("ip link set vB up") == 0);
	for (int k = 0; k < 2; k++) {
		const Ring__CounterDelta *d;

		ring__test_result__init(&r[k]);
		tcount_end(c[k], &r[k]);
		if (*r[k].counters_error)
			fprintf(stderr, "%s\n", r[k].counters_error);
		NS_CHECK(!strcmp(r[k].counters_error, ""));
		d = find(&r[k], "netdev", "carrier_changes");
		NS_CHECK(d && d->delta >= 2 && !strcmp(d->interface, "vA"));
		d = find(&r[k], "netdev", "carrier_down_count");
		NS_CHECK(d && d->delta >= 1);
		tcount_free(c[k]);
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mlx5_port, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_soft_roce, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_not_there, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test(test_ethtool_names),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_report_findings),
		cmocka_unit_test(test_edge),
		cmocka_unit_test(test_validate),
		TESTNS_UNIT_TEST(test_ns_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
