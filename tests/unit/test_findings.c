/* findings: the rules on the reference cluster's figures and variations. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/findings.h"
#include "agent/inventory.h"

static const char *const edge_names[] = {"n1-n2", "n2-n4", "n4-n3", "n3-n1",
					 "n1-n4"};
static const char *const dir_names[][2] = {
	{"n1->n2", "n2->n1"}, {"n2->n4", "n4->n2"}, {"n4->n3", "n3->n4"},
	{"n3->n1", "n1->n3"}, {"n1->n4", "n4->n1"},
};

/* The default survey_streams ladder. */
static const struct findings_ladder ladder148 = {{1, 4, 8}, 3, NULL, 0};

/* Edge i with only the 8-stream figure, the same both ways, on a 200G
 * port. */
static struct findings_edge findings_test_edge(unsigned i, double g8)
{
	struct findings_edge e;

	memset(&e, 0, sizeof(e));
	e.name = edge_names[i];
	e.dir_name[0] = dir_names[i][0];
	e.dir_name[1] = dir_names[i][1];
	for (int d = 0; d < 2; d++) {
		e.gbps[d][0] = -1.0;
		e.gbps[d][1] = -1.0;
		e.gbps[d][2] = g8;
	}
	e.nominal_gbps = 200.0;
	return e;
}

/* Edges 0..3 with these 8-stream figures. */
static void findings_test_four(struct findings_edge e[4], const double g8[4])
{
	for (unsigned i = 0; i < 4; i++)
		e[i] = findings_test_edge(i, g8[i]);
}

/* The rules on n edges, room for max findings, must say exactly one, with
 * this code (NULL: any); the finding, for the caller's further checks. */
static const struct finding *findings_test_one(const struct findings_ladder *l,
					       const struct findings_edge *e,
					       unsigned n, unsigned max,
					       const char *code)
{
	static struct finding f[8];

	assert_true(max <= 8);
	assert_int_equal(findings_compute(l, e, n, f, max), 1);
	if (code)
		assert_string_equal(f[0].code, code);
	return &f[0];
}

/* The reference cluster (docs/REFERENCE.md): 105.2, 95.6, 99.9, 110.7 Gbps at 8 streams against
 * 200G: one uniform ceiling, nothing degraded. */
static void test_field_notes_ceiling(void **state)
{
	const double g8[] = {105.2, 95.6, 99.9, 110.7};
	struct findings_edge e[4];
	const struct finding *f;
	struct finding none[8];

	(void)state;
	findings_test_four(e, g8);
	f = findings_test_one(&ladder148, e, 4, 8, "uniform_ceiling");
	assert_string_equal(f->level, "warn");
	assert_string_equal(
		f->text,
		"every edge tops out at 51% of its 200 Gbps nominal (102.6 "
		"Gbps median, spread 16%): a uniform ceiling - a link-layer or "
		"host limit, not a bad cable; check the host link (PCIe), "
		"PFC/ECN, and unused NIC halves");

	/* The reverse directions a little faster: still the lower counts. */
	for (unsigned i = 0; i < 4; i++)
		e[i].gbps[1][2] = g8[i] + 5.0;
	f = findings_test_one(&ladder148, e, 4, 8, "uniform_ceiling");
	assert_non_null(strstr(f->text, "51% of its 200 Gbps"));

	/* Nominal unknown: "well under nominal" cannot be said. */
	for (unsigned i = 0; i < 4; i++)
		e[i].nominal_gbps = 0.0;
	assert_int_equal(findings_compute(&ladder148, e, 4, none, 8), 0);
}

/* The same edges near nominal: no ceiling to report. */
static void test_near_nominal(void **state)
{
	const double g8[] = {185.0, 190.0, 180.0, 192.0};
	struct findings_edge e[4];
	struct finding f[8];

	(void)state;
	findings_test_four(e, g8);
	assert_int_equal(findings_compute(&ladder148, e, 4, f, 8), 0);
}

/* One edge at half the others' rate: named as degraded, and the spread
 * rules out a uniform ceiling. */
/* The messages' arena in this test: freed at once at the end. */
struct msg_arena {
	void *p[64];
	unsigned n;
};

static void *msg_alloc(void *ctx, size_t size)
{
	struct msg_arena *a = ctx;

	if (a->n == 64)
		return NULL;
	return a->p[a->n++] = calloc(1, size);
}

/* The one constructor of the wire message carries every field; a text
 * longer than a struct finding holds goes whole. */
static void test_msg(void **state)
{
	struct msg_arena a = {.n = 0};
	struct finding f;
	Ring__Finding *m;
	char longer[600];

	(void)state;
	findings_init(&f, "mtu_mismatch", "warn", "short");
	snprintf(f.iface, sizeof(f.iface), "eth1");
	snprintf(f.node, sizeof(f.node), "n1");
	snprintf(f.peer_node, sizeof(f.peer_node), "n2");
	snprintf(f.peer_iface, sizeof(f.peer_iface), "eth2");
	findings_set_edge(&f, "n1", "n2");
	findings_name_cable(&f, "c1");
	findings_name_cable(&f, "c1");
	findings_name_iface(&f, "eth1");
	f.mtu = 9000;
	f.peer_mtu = 1500;
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	m = findings_msg(&f, longer, msg_alloc, &a);
	assert_non_null(m);
	assert_string_equal(m->code, "mtu_mismatch");
	assert_int_equal(strlen(m->text), sizeof(longer) - 1);
	assert_string_equal(m->edge, "n1-n2");
	assert_string_equal(m->node, "n1");
	assert_string_equal(m->interface, "eth1");
	assert_string_equal(m->peer_node, "n2");
	assert_string_equal(m->peer_interface, "eth2");
	assert_int_equal(m->n_cables, 1);
	assert_string_equal(m->cables[0], "c1");
	assert_int_equal(m->n_nodes, 2);
	assert_int_equal(m->n_interfaces, 1);
	assert_int_equal(m->mtu, 9000);
	assert_int_equal(m->peer_mtu, 1500);
	assert_false(m->ring);
	m = findings_msg(&f, NULL, msg_alloc, &a);
	assert_string_equal(m->text, "short");
	/* Out of memory: NULL, nothing half made is returned. */
	a.n = 64;
	assert_null(findings_msg(&f, NULL, msg_alloc, &a));
	for (unsigned i = 0; i < 64; i++)
		free(a.p[i]);
}

static void test_degraded(void **state)
{
	const double g8[] = {105.2, 52.0, 99.9, 110.7};
	struct findings_edge e[4];
	const struct finding *one;
	struct finding f[8];
	unsigned n;

	(void)state;
	findings_test_four(e, g8);
	one = findings_test_one(&ladder148, e, 4, 8, "degraded_edge");
	assert_string_equal(one->level, "warn");
	assert_string_equal(one->text,
			    "edge n2-n4 tops out at 52.0 Gbps with 8 streams, "
			    "49% of the other edges' median 105.2 Gbps: a "
			    "degraded edge; check its cable, both ports and "
			    "both hosts");
	/* The edge and its figures as data (issue 23). */
	assert_string_equal(one->edge, "n2-n4");
	assert_true(one->gbps > 51.9 && one->gbps < 52.1);
	assert_true(one->reference_gbps > 105.1 && one->reference_gbps < 105.3);

	/* Two edges only: no "others" to compare against. */
	n = findings_compute(&ladder148, &e[1], 2, f, 8);
	assert_int_equal(n, 0);

	/* 75% of the others: within bounds. */
	e[1] = findings_test_edge(1, 0.75 * 105.2);
	n = findings_compute(&ladder148, e, 4, f, 8);
	for (unsigned i = 0; i < n; i++)
		assert_string_not_equal(f[i].code, "degraded_edge");
}

/* The reference cluster's ladder: 40.0 / 102.3 / 110.9 Gbps for 1 / 4 / 8
 * streams on one edge. */
static void test_saturation(void **state)
{
	struct findings_edge e;
	struct finding none[4];

	(void)state;
	e = findings_test_edge(0, 110.9);
	e.gbps[0][0] = 40.0;
	e.gbps[0][1] = 102.3;
	e.gbps[1][2] = -1.0;
	assert_string_equal(
		findings_test_one(&ladder148, &e, 1, 4, "saturation")->text,
		"1 stream reaches 36% of 8 streams (median over 1 "
		"edge); use at least 4 channels: 4 streams reach "
		"92%");

	/* 4 streams short of 90%: 8 channels. */
	e.gbps[0][1] = 90.0;
	assert_non_null(
		strstr(findings_test_one(&ladder148, &e, 1, 4, NULL)->text,
		       "use at least 8 channels"));

	/* 4 streams not measured: 8 channels, no 4-stream figure. */
	e.gbps[0][1] = -1.0;
	assert_string_equal(findings_test_one(&ladder148, &e, 1, 4, NULL)->text,
			    "1 stream reaches 36% of 8 streams (median over 1 "
			    "edge); use at least 8 channels");

	/* 1 stream at 85% of 8: nothing to say. */
	e.gbps[0][0] = 0.85 * 110.9;
	assert_int_equal(findings_compute(&ladder148, &e, 1, none, 4), 0);
}

/* The ladder on four edges, both directions: median over edges, next to
 * the reference cluster's ceiling. */
static void test_saturation_many(void **state)
{
	const double g8[] = {105.2, 95.6, 99.9, 110.7};
	const double r1[] = {0.30, 0.36, 0.40, 0.50};
	struct findings_edge e[4];
	struct finding f[8];
	unsigned n;

	(void)state;
	for (unsigned i = 0; i < 4; i++) {
		e[i] = findings_test_edge(i, g8[i]);
		for (int d = 0; d < 2; d++) {
			e[i].gbps[d][0] = r1[i] * g8[i];
			e[i].gbps[d][1] = 0.95 * g8[i];
		}
	}
	n = findings_compute(&ladder148, e, 4, f, 8);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].code, "uniform_ceiling");
	assert_string_equal(f[1].code, "saturation");
	assert_string_equal(f[1].text,
			    "1 stream reaches 38% of 8 streams (median over 4 "
			    "edges); use at least 4 channels: 4 streams reach "
			    "95%");
	/* Room for one: the first. */
	assert_int_equal(findings_compute(&ladder148, e, 4, f, 1), 1);
	assert_string_equal(f[0].code, "uniform_ceiling");
	assert_int_equal(findings_compute(&ladder148, e, 4, f, 0), 0);
}

static void test_asymmetric(void **state)
{
	const struct finding *one;
	struct findings_edge e;
	struct finding f[4];

	(void)state;
	e = findings_test_edge(0, 110.0);
	e.gbps[1][2] = 60.0;
	one = findings_test_one(&ladder148, &e, 1, 4, "asymmetric");
	assert_string_equal(one->level, "warn");
	assert_string_equal(one->text,
			    "edge n1-n2 is asymmetric: n1->n2 110.0 Gbps, "
			    "n2->n1 60.0 Gbps with 8 streams (the slower "
			    "direction 45% below the faster); check both ends' "
			    "port settings and PFC/ECN");

	/* 15% apart: within bounds. */
	e.gbps[1][2] = 0.85 * 110.0;
	assert_int_equal(findings_compute(&ladder148, &e, 1, f, 4), 0);
	/* One direction unmeasured: no verdict. */
	e.gbps[1][2] = -1.0;
	assert_int_equal(findings_compute(&ladder148, &e, 1, f, 4), 0);
}

/* Any ladder: the largest count is the top figure, the smallest the
 * base, the counts between advise. 2 16: no count between, so the top. */
static void test_ladder_2_16(void **state)
{
	const struct findings_ladder ladder = {{2, 16}, 2, NULL, 0};
	const double g16[] = {105.2, 95.6, 99.9, 110.7};
	struct findings_edge e[4];
	struct finding f[8];
	unsigned n;

	(void)state;
	for (unsigned i = 0; i < 4; i++) {
		e[i] = findings_test_edge(i, -1.0);
		for (int d = 0; d < 2; d++) {
			e[i].gbps[d][0] = 0.5 * g16[i];
			e[i].gbps[d][1] = g16[i];
		}
	}
	n = findings_compute(&ladder, e, 4, f, 8);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].code, "uniform_ceiling");
	assert_non_null(strstr(f[0].text, "51% of its 200 Gbps"));
	assert_string_equal(f[1].code, "saturation");
	assert_string_equal(f[1].text,
			    "2 streams reach 50% of 16 streams (median over 4 "
			    "edges); use at least 16 channels");
	/* The top's figures name their count. */
	e[1].gbps[0][1] = e[1].gbps[1][1] = 52.0;
	n = findings_compute(&ladder, e, 4, f, 8);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].code, "degraded_edge");
	assert_string_equal(f[0].text,
			    "edge n2-n4 tops out at 52.0 Gbps with 16 "
			    "streams, 49% of the other edges' median 105.2 "
			    "Gbps: a degraded edge; check its cable, both "
			    "ports and both hosts");
}

/* 1 2 4 8: every count between is reported, the first that is close to
 * the top is advised; the ladder's order does not matter. */
static void test_ladder_1_2_4_8(void **state)
{
	const struct findings_ladder up = {{1, 2, 4, 8}, 4, NULL, 0};
	const struct findings_ladder down = {{8, 4, 2, 1}, 4, NULL, 0};
	struct findings_edge e, r;
	struct finding f[4];

	(void)state;
	e = findings_test_edge(0, -1.0);
	for (int d = 0; d < 2; d++) {
		e.gbps[d][0] = 40.0;
		e.gbps[d][1] = 70.0;
		e.gbps[d][2] = 102.3;
		e.gbps[d][3] = 110.9;
	}
	assert_string_equal(
		findings_test_one(&up, &e, 1, 4, "saturation")->text,
		"1 stream reaches 36% of 8 streams (median over 1 "
		"edge); use at least 4 channels: 2 streams reach "
		"63%, 4 streams reach 92%");
	/* The same figures in the reverse ladder order. */
	r = e;
	for (int d = 0; d < 2; d++)
		for (int s = 0; s < 4; s++)
			r.gbps[d][s] = e.gbps[d][3 - s];
	assert_non_null(strstr(findings_test_one(&down, &r, 1, 4, NULL)->text,
			       "use at least 4 channels: 2 "
			       "streams reach 63%, 4 streams "
			       "reach 92%"));
	/* 2 streams are enough already. */
	e.gbps[0][1] = e.gbps[1][1] = 105.0;
	assert_non_null(strstr(findings_test_one(&up, &e, 1, 4, NULL)->text,
			       "use at least 2 channels: 2 "
			       "streams reach 95%, 4 streams "
			       "reach 92%"));
	/* One count, or a count missing: no saturation, the rest stands. */
	{
		const struct findings_ladder one = {{4}, 1, "4 RDMA QPs", 0};
		struct findings_edge q = findings_test_edge(0, -1.0);

		q.gbps[0][0] = 110.0;
		q.gbps[1][0] = 60.0;
		assert_non_null(strstr(
			findings_test_one(&one, &q, 1, 4, "asymmetric")->text,
			"with 4 RDMA QPs"));
	}
	/* A ladder the rules cannot take. */
	{
		const struct findings_ladder none = {{0}, 0, NULL, 0};

		assert_int_equal(findings_compute(&none, &e, 1, f, 4), 0);
		assert_int_equal(findings_compute(NULL, &e, 1, f, 4), 0);
	}
}

static void test_empty(void **state)
{
	struct findings_edge e[4];
	struct finding f[4];

	(void)state;
	assert_int_equal(findings_compute(&ladder148, NULL, 0, f, 4), 0);
	assert_int_equal(findings_compute(&ladder148, e, 0, f, 4), 0);
	/* Nothing measured anywhere. */
	for (unsigned i = 0; i < 4; i++)
		e[i] = findings_test_edge(i, -1.0);
	assert_int_equal(findings_compute(&ladder148, e, 4, f, 4), 0);
}

/* ------------------------------------------------ hardware (issue 11) */

/* A getifaddrs() list from "IFNAME ADDRESS/PREFIX" lines (a fixture's
 * addrs file, or a test's own). */
struct hw_addr {
	struct ifaddrs ifa;
	struct sockaddr_in addr, mask;
	char name[IFNAMSIZ];
};

struct hw_addrs {
	struct hw_addr a[16];
	unsigned n;
};

static void hw_addrs_line(struct hw_addrs *l, const char *line)
{
	char addr[32];
	unsigned prefix;
	struct hw_addr *t = &l->a[l->n];

	assert_true(l->n < 16);
	memset(t, 0, sizeof(*t));
	assert_int_equal(
		sscanf(line, "%15s %31[0-9.]/%u", t->name, addr, &prefix), 3);
	t->addr.sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, addr, &t->addr.sin_addr), 1);
	t->mask.sin_family = AF_INET;
	t->mask.sin_addr.s_addr = htonl(prefix ? ~0u << (32 - prefix) : 0);
	t->ifa.ifa_name = t->name;
	t->ifa.ifa_addr = (struct sockaddr *)&t->addr;
	t->ifa.ifa_netmask = (struct sockaddr *)&t->mask;
	if (l->n)
		l->a[l->n - 1].ifa.ifa_next = &t->ifa;
	l->n++;
}

static const char *hw_root(const char *fixture, char *buf, size_t len)
{
	const char *root = getenv("RING_FIXTURES");

	snprintf(buf, len, "%s/%s", root && *root ? root : "tests/fixtures",
		 fixture);
	return buf;
}

/* The agent's inventory of a fixture (its addrs file, or lines when not
 * NULL), as node name. */
static Ring__Inventory *hw_inv(const char *fixture, const char *name,
			       const char *const *lines)
{
	char root[PATH_MAX], path[PATH_MAX + 8], line[128];
	struct hw_addrs *l = calloc(1, sizeof(*l));
	struct inventory_src src = {0};
	struct agent_conf c;
	Ring__Inventory *inv;

	assert_non_null(l);
	hw_root(fixture, root, sizeof(root));
	if (lines) {
		for (; *lines; lines++)
			hw_addrs_line(l, *lines);
	} else {
		FILE *f;

		snprintf(path, sizeof(path), "%s/addrs", root);
		f = fopen(path, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			hw_addrs_line(l, line);
		fclose(f);
	}
	src.sysfs_root = src.procfs_root = root;
	src.addrs = l->n ? &l->a[0].ifa : NULL;
	src.mgmt_interface = "enP7s7";
	agent_conf_defaults(&c);
	snprintf(c.node, sizeof(c.node), "%s", name);
	inv = inventory_collect(&c, &src);
	assert_non_null(inv);
	free(l);
	return inv;
}

/* A finding about one node carries it as its subject, and its gist is
 * its text less the subject (what ringctl's plain output groups by); the
 * findings about a node's port or PCIe link, RDMA MTU or lone unaddressed
 * function all have one. Every hardware finding names its node as data;
 * those that speak of two functions (one PCIe link, ARP flux, a cable's
 * ends) have no gist: they are never grouped across nodes. */
static void hw_subject_agrees(const struct finding *f, const char *node)
{
	char text[sizeof(f->text) + 64];
	int gist = strcmp(f->code, "one_pcie_link") &&
		   strcmp(f->code, "arp_flux") &&
		   strcmp(f->code, "mtu_mismatch") &&
		   strcmp(f->code, "neighbour_mac");

	assert_string_equal(f->node, node);
	if (!gist) {
		assert_string_equal(f->gist, "");
		if (strcmp(f->code, "one_pcie_link")) {
			assert_true(*f->iface);
			assert_true(*f->peer_node && *f->peer_iface);
		} else {
			assert_true(*f->pcie_link);
			assert_true(f->n_ifaces >= 2);
		}
		return;
	}
	assert_true(*f->gist);
	if (!strcmp(f->code, "rdma_mtu")) {
		/* "NODE DEV port N (IFACE): rest", the gist "DEV port N:
		 * rest", the active MTU a figure. */
		const char *rest = strstr(f->gist, ": ");
		int dev = rest ? (int)(rest - f->gist) : 0;

		assert_non_null(rest);
		snprintf(text, sizeof(text), "%s %.*s (%s)%s", node, dev,
			 f->gist, f->iface, rest);
		assert_string_equal(f->text, text);
		assert_true(f->mtu > 0 && f->mtu < 4096);
		return;
	}
	if (!strncmp(f->iface, "port ", 5))
		snprintf(text, sizeof(text), "%s %s: %s", node, f->iface,
			 f->gist);
	else if (!*f->iface)
		snprintf(text, sizeof(text), "%s %s", node, f->gist);
	else
		snprintf(text, sizeof(text), "%s %s has %s", node, f->iface,
			 f->gist);
	assert_string_equal(f->text, text);
}

/* Findings of one node's fixture: exactly want[] (code, then text). */
static void hw_expect(const char *fixture, const char *const *lines,
		      const char *const *want, unsigned n_want)
{
	struct findings_hw_node nd = {.name = "n1"};
	struct finding f[16];
	unsigned n;

	nd.inv = hw_inv(fixture, "n1", lines);
	n = findings_hw(&nd, 1, f, 16);
	for (unsigned i = 0; i < n; i++)
		print_message("%s: %s: %s\n", fixture, f[i].code, f[i].text);
	assert_int_equal(n, n_want);
	for (unsigned i = 0; i < n; i++) {
		assert_string_equal(f[i].code, want[2 * i]);
		/* Nothing to fix in a board wired narrow: info. */
		assert_string_equal(f[i].level,
				    strcmp(want[2 * i], "pcie_wired_narrow")
					    ? "warn"
					    : "info");
		assert_string_equal(f[i].text, want[2 * i + 1]);
		hw_subject_agrees(&f[i], "n1");
	}
	assert_int_equal(findings_hw_halves(&nd, 1),
			 n_want && !strcmp(want[0], "port_half_unused")
				 ? FINDINGS_HALVES_UNUSED
				 : FINDINGS_HALVES_USED);
	inventory_free((Ring__Inventory *)nd.inv);
}

#define HW_HALF_P0_ALONE                                                       \
	"n1 port p0: enP2p1s0f0np0 has carrier but no address; enp1s0f0np0 "   \
	"carries the cable alone, capping it near half of 200 Gbps; address "  \
	"and use it too"

/* One half of each port addressed, the halves on different links. */
static void test_hw_gb10(void **state)
{
	static const char *const want[] = {
		"port_half_unused",
		HW_HALF_P0_ALONE,
		"port_half_unused",
		"n1 port p1: enp1s0f1np1 has carrier but no address; "
		"enP2p1s0f1np1 carries the cable alone, capping it near half "
		"of 200 Gbps; address and use it too",
	};

	(void)state;
	hw_expect("gb10", NULL, want, 2);
	/* docker0 up with 172.17.0.1 changes nothing: it is ignored. */
	hw_expect("gb10-docker", NULL, want, 2);
}

/* The reference cluster's choice: both cables on the 0000 link. */
static void test_hw_onelink(void **state)
{
	static const char *const want[] = {
		"port_half_unused",
		HW_HALF_P0_ALONE,
		"port_half_unused",
		"n1 port p1: enP2p1s0f1np1 has carrier but no address; "
		"enp1s0f1np1 carries the cable alone, capping it near half of "
		"200 Gbps; address and use it too",
		"one_pcie_link",
		"n1: the neighbour-facing functions enp1s0f0np0 and enp1s0f1np1 "
		"share PCIe link 0000:01:00 (111.0 Gbps usable for both "
		"cables) while link 0002:01:00 (enP2p1s0f0np0, enP2p1s0f1np1) "
		"carries none: use the twins on 0002:01:00 too",
	};

	(void)state;
	hw_expect("gb10-onelink", NULL, want, 3);
}

/* All four addressed, a /30 each, ARP set: nothing to say. */
static void test_hw_dual(void **state)
{
	(void)state;
	hw_expect("gb10-dual", NULL, NULL, 0);
}

/* x2 under a root port wired x2: the board's design, said once, with
 * nothing to configure alike; x2 below a root port that can do x4: the
 * twins differ and the link is downtrained. */
static void test_hw_x2(void **state)
{
	static const char *const want[] = {
		"pcie_wired_narrow",
		"n1 PCIe link 0002:01:00 (enP2p1s0f0np0) runs at x2 of x4 "
		"because the port above it (0002:00:00.0) is itself x2, 32.0 "
		"GT/s PCIe: the board is wired so and nothing fixes it; plan "
		"on its 55.5 Gbps usable, shared by its functions",
	};
	static const char *const down[] = {
		"twins_differ",
		"n1 port p0: its functions differ (pcie width: enP2p1s0f0np0 "
		"x2, enp1s0f0np0 x4): they should be configured alike",
		"twins_differ",
		"n1 port p1: its functions differ (pcie width: enP2p1s0f1np1 "
		"x2, enp1s0f1np1 x4): they should be configured alike",
		"pcie_downtrained",
		"n1 PCIe link 0002:01:00 (enP2p1s0f0np0) trained at x2 of x4 "
		"though both ends support more (port above 0002:00:00.0: x4): "
		"55.5 Gbps usable, shared; reseat the card, check the "
		"slot/riser and firmware link settings, compare LnkCap/LnkSta "
		"of both ends (lspci -vv -s 0002:01:00.0 and -s 0002:00:00.0)",
	};

	(void)state;
	hw_expect("gb10-x2", NULL, want, 1);
	hw_expect("gb10-x2-down", NULL, down, 3);
}

/* A narrow link whose upstream port the agent could not read (or an
 * agent before the field): neither cause is claimed. */
static void test_hw_narrow_unknown(void **state)
{
	struct findings_hw_node nd = {.name = "n1"};
	Ring__Inventory *inv;
	Ring__PcieLink *l = NULL;
	struct finding f[16];
	unsigned n, hit = 0;

	(void)state;
	inv = hw_inv("gb10-x2", "n1", NULL);
	for (size_t i = 0; i < inv->n_pcie_links; i++)
		if (!strcmp(inv->pcie_links[i]->id, "0002:01:00"))
			l = inv->pcie_links[i];
	assert_non_null(l);
	free(l->narrow);
	l->narrow = (char *)protobuf_c_empty_string;
	nd.inv = inv;
	n = findings_hw(&nd, 1, f, 16);
	for (unsigned i = 0; i < n; i++) {
		assert_string_not_equal(f[i].code, "pcie_downtrained");
		assert_string_not_equal(f[i].code, "pcie_wired_narrow");
		if (strcmp(f[i].code, "pcie_narrow"))
			continue;
		hit++;
		assert_string_equal(f[i].level, "warn");
		assert_non_null(strstr(f[i].text, "0002:01:00"));
		assert_non_null(strstr(f[i].text, "x2 of x4"));
		assert_non_null(strstr(f[i].text, "was not read"));
	}
	assert_int_equal(hit, 1);
	inventory_free(inv);
}

/* Each PCI domain with its own phys_switch_id: the twins still make two
 * ports of two functions, so the port findings are those of gb10. */
static void test_hw_swid(void **state)
{
	static const char *const want[] = {
		"port_half_unused",
		HW_HALF_P0_ALONE,
		"port_half_unused",
		"n1 port p1: enp1s0f1np1 has carrier but no address; "
		"enP2p1s0f1np1 carries the cable alone, capping it near half "
		"of 200 Gbps; address and use it too",
	};

	(void)state;
	hw_expect("gb10-swid", NULL, want, 2);
}

/* Twins in one subnet: ARP flux unless arp_ignore=1, arp_announce=2. */
static void test_hw_arp(void **state)
{
	static const char *const shared[] = {
		"enP7s7 10.0.0.11/24",
		"enp1s0f0np0 192.168.100.1/24",
		"enP2p1s0f0np0 192.168.100.2/24",
		"enp1s0f1np1 192.168.101.1/30",
		"enP2p1s0f1np1 192.168.101.5/30",
		NULL,
	};
	static const char *const want[] = {
		"arp_flux",
		"n1: enP2p1s0f0np0 and enp1s0f0np0 share 192.168.100.0/24 with "
		"arp_ignore 0/0 and arp_announce 0/0: either may answer ARP "
		"for the other's address, and RoCE sent to the wrong function "
		"is silently dropped; set net.ipv4.conf.all.arp_ignore=1 and "
		"arp_announce=2, or give each function its own subnet",
	};

	(void)state;
	hw_expect("gb10", shared, want, 1);
	/* gb10-dual has all/arp_ignore 1 and all/arp_announce 2. */
	hw_expect("gb10-dual", shared, NULL, 0);
}

/* A hand-made RDMA device on a fixture inventory (freed with it). */
static void hw_add_rdma(Ring__Inventory *inv, const char *dev,
			const char *netdev, uint32_t mtu)
{
	Ring__RdmaDevice *d = malloc(sizeof(*d));
	Ring__RdmaPort *p = malloc(sizeof(*p));

	assert_non_null(d);
	assert_non_null(p);
	ring__rdma_device__init(d);
	ring__rdma_port__init(p);
	d->name = strdup(dev);
	p->port = 1;
	p->state = strdup("ACTIVE");
	p->link_layer = strdup("Ethernet");
	p->netdev = strdup(netdev);
	p->active_mtu = mtu;
	d->ports = malloc(sizeof(*d->ports));
	assert_non_null(d->ports);
	d->ports[0] = p;
	d->n_ports = 1;
	inv->rdma_devices = realloc(inv->rdma_devices,
				    (inv->n_rdma_devices + 1) * sizeof(d));
	assert_non_null(inv->rdma_devices);
	inv->rdma_devices[inv->n_rdma_devices++] = d;
}

/* Two dual-addressed nodes, n1 enp1s0f0np0 cabled to n2 enp1s0f1np1: the
 * cable rules (MAC, MTU) and the RDMA MTU. */
static void test_hw_cable(void **state)
{
	struct findings_hw_node nd[2] = {{.name = "n1"}, {.name = "n2"}};
	Ring__NeighbourTable t = RING__NEIGHBOUR_TABLE__INIT;
	Ring__Neighbour nb = RING__NEIGHBOUR__INIT, *nbs[1] = {&nb};
	Ring__Inventory *n1, *n2;
	struct finding f[16];

	(void)state;
	n1 = hw_inv("gb10-dual", "n1", NULL);
	n2 = hw_inv("gb10-dual", "n2", NULL);
	nb.local_interface = "enp1s0f0np0";
	nb.remote_node = "n2";
	nb.remote_interface = "enp1s0f1np1";
	nb.remote_mac = "4C:BB:47:2A:10:41";
	t.neighbours = nbs;
	t.n_neighbours = 1;
	nd[0].inv = n1;
	nd[0].nbrs = &t;
	nd[1].inv = n2;
	assert_int_equal(findings_hw(nd, 2, f, 16), 0);

	nb.remote_mac = "4c:bb:47:2a:10:43";
	n2->interfaces[4]->mtu = 1500; /* enp1s0f1np1 */
	hw_add_rdma(n1, "rocep1s0f0", "enp1s0f0np0", 1024);
	hw_add_rdma(n1, "rocep1s0f1", "enp1s0f1np1", 4096);
	assert_int_equal(findings_hw(nd, 2, f, 16), 3);
	assert_string_equal(f[0].code, "rdma_mtu");
	assert_string_equal(f[0].text,
			    "n1 rocep1s0f0 port 1 (enp1s0f0np0): active_mtu "
			    "1024, under RoCE's 4096 (netdev MTU 9000): raise "
			    "the MTU on both ends of the cable (9000) so that "
			    "the path MTU can be 4096");
	assert_string_equal(f[1].code, "neighbour_mac");
	assert_string_equal(
		f[1].text,
		"n1 enp1s0f0np0 hears n2 enp1s0f1np1 from MAC "
		"4c:bb:47:2a:10:43, but n2's inventory gives enp1s0f1np1 MAC "
		"4c:bb:47:2a:10:41: the beacon came through another function "
		"or device (a twin, a bond, a bridge), or the claim is forged");
	assert_string_equal(f[2].code, "mtu_mismatch");
	assert_string_equal(f[2].text,
			    "n1 enp1s0f0np0 (MTU 9000) and n2 enp1s0f1np1 (MTU "
			    "1500) differ across their cable: the smaller one "
			    "decides, and RoCE's path MTU with it; set both "
			    "alike (9000)");
	/* Their subjects and figures as data (issue 23). */
	assert_string_equal(f[0].node, "n1");
	assert_string_equal(f[0].iface, "enp1s0f0np0");
	assert_int_equal(f[0].mtu, 1024);
	assert_string_equal(f[1].node, "n1");
	assert_string_equal(f[1].iface, "enp1s0f0np0");
	assert_string_equal(f[1].peer_node, "n2");
	assert_string_equal(f[1].peer_iface, "enp1s0f1np1");
	assert_string_equal(f[2].node, "n1");
	assert_string_equal(f[2].iface, "enp1s0f0np0");
	assert_string_equal(f[2].peer_node, "n2");
	assert_string_equal(f[2].peer_iface, "enp1s0f1np1");
	assert_int_equal(f[2].mtu, 9000);
	assert_int_equal(f[2].peer_mtu, 1500);
	/* Room for one: one. */
	assert_int_equal(findings_hw(nd, 2, f, 1), 1);
	assert_int_equal(findings_hw(NULL, 2, f, 16), 0);
	inventory_free(n1);
	inventory_free(n2);
}

/* Beacons go out on unaddressed twins too: a neighbour table in which
 * every function hears someone does not hide the one-link choice. */
static void test_hw_onelink_beacons(void **state)
{
	static const char *const ifs[] = {"enp1s0f0np0", "enP2p1s0f0np0",
					  "enp1s0f1np1", "enP2p1s0f1np1"};
	struct findings_hw_node nd = {.name = "n1"};
	Ring__NeighbourTable t = RING__NEIGHBOUR_TABLE__INIT;
	Ring__Neighbour nb[4], *nbs[4];
	struct finding f[16];
	unsigned n, one = 0;

	(void)state;
	for (unsigned i = 0; i < 4; i++) {
		ring__neighbour__init(&nb[i]);
		nb[i].local_interface = (char *)ifs[i];
		nb[i].remote_node = i < 2 ? "n2" : "n3";
		nb[i].remote_interface = (char *)ifs[i ^ 2];
		nbs[i] = &nb[i];
	}
	t.neighbours = nbs;
	t.n_neighbours = 4;
	nd.inv = hw_inv("gb10-onelink", "n1", NULL);
	nd.nbrs = &t;
	n = findings_hw(&nd, 1, f, 16);
	for (unsigned i = 0; i < n; i++)
		one += !strcmp(f[i].code, "one_pcie_link");
	assert_int_equal(n, 3);
	assert_int_equal(one, 1);
	inventory_free((Ring__Inventory *)nd.inv);

	/* Dual-addressed, every function used: nothing. */
	nd.inv = hw_inv("gb10-dual", "n1", NULL);
	assert_int_equal(findings_hw(&nd, 1, f, 16), 0);
	inventory_free((Ring__Inventory *)nd.inv);
}

/* The uniform ceiling's advice follows the port model: a correctly
 * dual-addressed cluster is not told of unused halves. */
static void test_hw_uniform(void **state)
{
	const double g8[] = {105.2, 95.6, 99.9, 110.7};
	struct findings_ladder ladder = ladder148;
	struct findings_edge e[4];
	const struct finding *f;

	(void)state;
	findings_test_four(e, g8);
	ladder.halves = FINDINGS_HALVES_USED;
	f = findings_test_one(&ladder, e, 4, 8, "uniform_ceiling");
	assert_string_equal(
		f->text,
		"every edge tops out at 51% of its 200 Gbps nominal (102.6 "
		"Gbps median, spread 16%): a uniform ceiling - a link-layer or "
		"host limit, not a bad cable; check the host link (PCIe) and "
		"PFC/ECN (every cabled NIC half is addressed)");
	ladder.halves = FINDINGS_HALVES_UNUSED;
	f = findings_test_one(&ladder, e, 4, 8, "uniform_ceiling");
	assert_non_null(strstr(f->text, "; check the host link (PCIe), "
					"PFC/ECN, and the unused NIC halves "
					"(see the port findings)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_notes_ceiling),
		cmocka_unit_test(test_near_nominal),
		cmocka_unit_test(test_degraded),
		cmocka_unit_test(test_saturation),
		cmocka_unit_test(test_saturation_many),
		cmocka_unit_test(test_asymmetric),
		cmocka_unit_test(test_ladder_2_16),
		cmocka_unit_test(test_ladder_1_2_4_8),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_hw_gb10),
		cmocka_unit_test(test_hw_onelink),
		cmocka_unit_test(test_hw_dual),
		cmocka_unit_test(test_hw_x2),
		cmocka_unit_test(test_hw_narrow_unknown),
		cmocka_unit_test(test_hw_swid),
		cmocka_unit_test(test_hw_arp),
		cmocka_unit_test(test_hw_cable),
		cmocka_unit_test(test_hw_onelink_beacons),
		cmocka_unit_test(test_hw_uniform),
		cmocka_unit_test(test_msg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
