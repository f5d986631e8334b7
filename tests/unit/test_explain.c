/* explain: edge names and the ceiling analysis on GB10-like inventories
 * and topologies built here (figures as docs/HARDWARE.md computes them). */
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

#include "ringctl/explain.h"
#include "agent/inventory.h"

/* One end: a port with two twins on two PCIe links (GB10's p0), an RDMA
 * port on the facing function. */
struct end {
	Ring__Inventory inv;
	Ring__NetInterface f[2], *fp[2];
	Ring__PcieLink l[2], *lp[2];
	Ring__PhysPort p, *pp[1];
	char *port_ifs[2], *link_ifs[2][1];
	Ring__RdmaDevice d, *dp[1];
	Ring__RdmaPort rp, *rpp[1];
};

static void end_init(struct end *x, const char *node, unsigned mtu,
		     double port_gbps)
{
	static const char *const names[2] = {"enp1s0f0np0", "enP2p1s0f0np0"};
	static const char *const links[2] = {"0000:01:00", "0002:01:00"};

	memset(x, 0, sizeof(*x));
	ring__inventory__init(&x->inv);
	x->inv.node = (char *)node;
	for (int i = 0; i < 2; i++) {
		ring__net_interface__init(&x->f[i]);
		x->f[i].name = (char *)names[i];
		x->f[i].mtu = mtu;
		x->f[i].carrier = 1;
		x->f[i].speed_mbps = (int32_t)(port_gbps * 1000);
		x->f[i].port_id = "4cbb47fffe2a1040/p0";
		x->f[i].pcie_link = (char *)links[i];
		x->fp[i] = &x->f[i];
		ring__pcie_link__init(&x->l[i]);
		x->l[i].id = (char *)links[i];
		x->l[i].speed = "32.0 GT/s PCIe";
		x->l[i].max_speed = "32.0 GT/s PCIe";
		x->l[i].width = 4;
		x->l[i].max_width = 4;
		x->l[i].raw_gbps = 126.0;
		x->l[i].usable_gbps = 111.0;
		x->l[i].downtrained = "";
		x->link_ifs[i][0] = (char *)names[i];
		x->l[i].interfaces = x->link_ifs[i];
		x->l[i].n_interfaces = 1;
		x->lp[i] = &x->l[i];
		x->port_ifs[i] = (char *)names[i];
	}
	ring__phys_port__init(&x->p);
	x->p.id = "4cbb47fffe2a1040/p0";
	x->p.name = "p0";
	x->p.speed_gbps = port_gbps;
	x->p.interfaces = x->port_ifs;
	x->p.n_interfaces = 2;
	x->pp[0] = &x->p;
	ring__rdma_port__init(&x->rp);
	x->rp.port = 1;
	x->rp.state = "ACTIVE";
	x->rp.active_mtu = 4096;
	x->rp.link_layer = "Ethernet";
	x->rp.netdev = (char *)names[0];
	x->rpp[0] = &x->rp;
	ring__rdma_device__init(&x->d);
	x->d.name = "rocep1s0f0";
	x->d.ports = x->rpp;
	x->d.n_ports = 1;
	x->dp[0] = &x->d;
	x->inv.interfaces = x->fp;
	x->inv.n_interfaces = 2;
	x->inv.pcie_links = x->lp;
	x->inv.n_pcie_links = 2;
	x->inv.phys_ports = x->pp;
	x->inv.n_phys_ports = 1;
	x->inv.rdma_devices = x->dp;
	x->inv.n_rdma_devices = 1;
}

/* A veth end: no PCIe link, no port model, speed from nominal_speed. */
static void end_veth(struct end *x, const char *node, unsigned mtu,
		     unsigned speed_mbps)
{
	end_init(x, node, mtu, 0);
	x->f[0].pcie_link = "";
	x->f[0].port_id = "";
	x->f[0].speed_mbps = -1;
	x->f[0].nominal_speed_mbps = speed_mbps;
	x->inv.n_pcie_links = 0;
	x->inv.n_phys_ports = 0;
	x->inv.n_rdma_devices = 0;
}

struct topo {
	Ring__Topology t;
	Ring__Edge e[2], *ep[2];
	Ring__Cable c, *cp[1];
	uint32_t ladder[3];
	double ab[3], ba[3];
	Ring__CounterDelta cd, *cdp[1];
};

/* n1 enp1s0f0np0 - n2 enp1s0f0np0 and its twin over cable n1:p0-n2:p0,
 * the ladder 1, 4, 8 with these figures both ways (b_to_a a little
 * lower). */
static void topo_init(struct topo *x, double g1, double g4, double g8)
{
	memset(x, 0, sizeof(*x));
	ring__topology__init(&x->t);
	x->t.kind = "pair";
	x->t.surveyed_ms = 1796000000000ull;
	x->ladder[0] = 1;
	x->ladder[1] = 4;
	x->ladder[2] = 8;
	x->ab[0] = g1;
	x->ab[1] = g4;
	x->ab[2] = g8;
	for (int i = 0; i < 3; i++)
		x->ba[i] = x->ab[i] * 0.995;
	for (int i = 0; i < 2; i++) {
		Ring__Edge *e = &x->e[i];

		ring__edge__init(e);
		e->a = "n1";
		e->b = "n2";
		e->a_interface = i ? "enP2p1s0f0np0" : "enp1s0f0np0";
		e->b_interface = e->a_interface;
		e->cable_id = "n1:p0-n2:p0";
		e->twin = i;
		e->method = "tcp";
		e->method_kind = RING__EDGE_METHOD__EDGE_METHOD_TCP;
		e->measured_ms = 1796000000000ull;
		e->ladder = x->ladder;
		e->n_ladder = 3;
		e->gbps_a_to_b = x->ab;
		e->n_gbps_a_to_b = 3;
		e->gbps_b_to_a = x->ba;
		e->n_gbps_b_to_a = 3;
		e->rdma_write_gbps_a_to_b = -1;
		e->rdma_write_gbps_b_to_a = -1;
		e->rdma_read_gbps_a_to_b = -1;
		e->rdma_read_gbps_b_to_a = -1;
		x->ep[i] = e;
	}
	ring__cable__init(&x->c);
	x->c.id = "n1:p0-n2:p0";
	x->c.functions = 2;
	x->c.port_gbps_a_to_b = 195.0;
	x->c.port_gbps_b_to_a = 194.6;
	x->cp[0] = &x->c;
	x->t.edges = x->ep;
	x->t.n_edges = 2;
	x->t.cables = x->cp;
	x->t.n_cables = 1;
}

static int advice_has(const struct explain_ceiling *c, const char *what)
{
	for (unsigned i = 0; i < c->n_advice; i++)
		if (strstr(c->advice[i], what))
			return 1;
	return 0;
}

static void show(const struct explain_ceiling *c)
{
	print_message("figure %s %.2f; at %d; %s\n", c->figure, c->gbps, c->at,
		      c->verdict);
	print_message("  port: %s\n", c->port_verdict);
	for (unsigned i = 0; i < c->n_limits; i++)
		print_message("  limit %s %.1f: %s\n", c->limits[i].what,
			      c->limits[i].gbps, c->limits[i].text);
	for (unsigned i = 0; i < c->n_advice; i++)
		print_message("  raise: %s\n", c->advice[i]);
}

/* The reference cluster's figure: one function at 110 Gbps over a Gen5 x4 link
 * of a 200G port sits at the link's usable rate, and the twin on the
 * other link is the way up (with the port step's figure). */
static void test_gb10_at_pcie(void **state)
{
	struct end a, b;
	struct topo t;
	struct explain_ceiling c;

	(void)state;
	end_init(&a, "n1", 9000, 200);
	end_init(&b, "n2", 9000, 200);
	topo_init(&t, 60.0, 107.0, 110.4);
	explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
	show(&c);
	assert_true(c.gbps > 109.8 && c.gbps < 109.9); /* b_to_a, worse */
	assert_non_null(strstr(c.figure, "TCP ladder top (8 streams)"));
	assert_int_equal(c.n_limits, 3); /* port, both ends' links */
	assert_true(c.at >= 0);
	assert_string_equal(c.limits[c.at].what, "pcie_link");
	assert_non_null(strstr(c.verdict, "PCIe link's usable rate"));
	assert_non_null(strstr(c.verdict, "111.0"));
	assert_true(advice_has(&c, "use both twins of the port"));
	assert_true(advice_has(&c, "enP2p1s0f0np0 on link 0002:01:00"));
	assert_true(advice_has(&c, "port step measured 194.6 Gbps"));
	assert_string_equal(c.ladder, "saturated: 4 streams 106.5 Gbps, 8 "
				      "streams 109.8 Gbps (measured; +3%)");
	/* Saturated ladder at a known limit: no stream advice. */
	assert_false(advice_has(&c, "streams"));
	/* Both twins at once: 194.6, at the port's 198.0 (at MTU 9000),
	 * below the links' 111.0 + 111.0. */
	assert_true(c.port_gbps > 194.5 && c.port_gbps < 194.7);
	assert_non_null(strstr(c.port_verdict,
			       "port step 194.6 Gbps (measured, 2 function "
			       "pairs at once) sits at the port's line rate "
			       "(98% of 198.0 Gbps)"));

	/* Twins on one link (the reference cluster's choice, one link per node for
	 * both cables): the link counts once, its usable rate halves. */
	a.f[1].pcie_link = "0000:01:00";
	t.c.port_gbps_a_to_b = t.c.port_gbps_b_to_a = 108.0;
	explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
	show(&c);
	assert_non_null(strstr(c.port_verdict,
			       "sits at the PCIe links' usable rate (97% of "
			       "n1's PCIe links 0000:01:00 111.0 = 111.0 Gbps "
			       "usable)"));
	/* The twin on the same link does not raise the edge's figure. */
	assert_false(advice_has(&c, "use both twins"));
}

/* n2's first link trained x2 of x4 under a root port that can do x4:
 * 55.5 usable, the figure sits there, and the advice names the
 * downtrain and what to check. */
static void test_gb10_downtrained(void **state)
{
	struct end a, b;
	struct topo t;
	struct explain_ceiling c;

	(void)state;
	end_init(&a, "n1", 9000, 200);
	end_init(&b, "n2", 9000, 200);
	b.l[0].width = 2;
	b.l[0].raw_gbps = 63.0;
	b.l[0].usable_gbps = 55.5;
	b.l[0].downtrained = "x2 of x4";
	b.l[0].narrow = "downtrained";
	b.l[0].upstream = "0000:00:00.0";
	b.l[0].upstream_max_width = 4;
	topo_init(&t, 40.0, 54.0, 54.9);
	explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
	show(&c);
	assert_true(c.at >= 0);
	assert_string_equal(c.limits[c.at].what, "pcie_link");
	assert_non_null(strstr(c.limits[c.at].text, "n2 enp1s0f0np0"));
	assert_non_null(strstr(c.limits[c.at].text, "downtrained x2 of x4"));
	/* An agent before mps_bytes: 256 assumed, and said so. */
	assert_non_null(strstr(c.limits[c.at].text, "MPS 256 B assumed"));
	assert_non_null(strstr(c.verdict, "55.5"));
	assert_int_equal(c.understated, -1);
	assert_true(advice_has(&c, "n2 PCIe link 0000:01:00 is trained x2 "
				   "of x4 though the port above it "
				   "(0000:00:00.0) supports x4: reseat"));
	assert_true(advice_has(&c, "lspci -vv"));
	assert_true(advice_has(&c, "about 111.0 Gbps usable"));
	assert_true(advice_has(&c, "use both twins of the port (n2"));
	/* n2's links: 55.5 + 111.0 below the port's 198. */
	t.c.port_gbps_a_to_b = t.c.port_gbps_b_to_a = 160.2;
	explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
	show(&c);
	assert_non_null(
		strstr(c.port_verdict,
		       "sits at the PCIe links' usable rate (96% of n2's PCIe "
		       "links 0000:01:00 55.5 + 0002:01:00 111.0 = 166.5"));

	/* The coordinator's finding is quoted, not said again; a finding
	 * about another edge is left out. */
	{
		Ring__Finding f[2], *fp[2] = {&f[0], &f[1]};

		char *link_ifs[] = {"enp1s0f0np0"};

		ring__finding__init(&f[0]);
		f[0].code = "pcie_downtrained";
		f[0].level = "warn";
		f[0].text = "n2 PCIe link 0000:01:00 trained at x2 of x4 "
			    "(enp1s0f0np0): 55.5 Gbps usable";
		/* The subject as the coordinator sets it. */
		f[0].node = "n2";
		f[0].pcie_link = "0000:01:00";
		f[0].interfaces = link_ifs;
		f[0].n_interfaces = 1;
		ring__finding__init(&f[1]);
		f[1].code = "degraded_edge";
		f[1].level = "warn";
		f[1].text = "edge n3-n4 tops out at 20.1 Gbps";
		f[1].edge = "n3-n4";
		t.t.findings = fp;
		t.t.n_findings = 2;
		explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
		show(&c);
		assert_false(advice_has(&c, "reseat"));
		assert_true(advice_has(&c, "finding pcie_downtrained "
					   "(coordinator): n2 PCIe link "
					   "0000:01:00 trained at x2 of x4"));
		assert_false(advice_has(&c, "n3-n4"));
		assert_true(explain_finding_names_edge(&t.t, &t.e[0], &f[0]));
		assert_false(explain_finding_names_edge(&t.t, &t.e[0], &f[1]));
		/* The twin's pair is named by its function, not the
		 * first pair's. */
		assert_false(explain_finding_names_edge(&t.t, &t.e[1], &f[0]));
		t.t.n_findings = 0;
	}

	/* The port above not read (or an agent before the field): neither
	 * cause is claimed. */
	b.l[0].narrow = "";
	b.l[0].upstream = "";
	b.l[0].upstream_max_width = 0;
	t.c.port_gbps_a_to_b = t.c.port_gbps_b_to_a = -1;
	explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
	show(&c);
	assert_non_null(strstr(c.limits[c.at].text, "narrow x2 of x4"));
	assert_true(advice_has(&c, "n2 PCIe link 0000:01:00 runs at x2 of x4 "
				   "and the port above it was not read"));
	assert_false(advice_has(&c, "BIOS"));
}

/* 20 Gbps against 111 and 198: below every limit; the moved counters are
 * the evidence, and the saturated ladder says streams will not help. */
static void test_far_below(void **state)
{
	struct end a, b;
	struct topo t;
	struct explain_ceiling c;

	(void)state;
	end_init(&a, "n1", 9000, 200);
	end_init(&b, "n2", 9000, 200);
	topo_init(&t, 19.5, 20.0, 20.1);
	ring__counter_delta__init(&t.cd);
	t.cd.node = "n2";
	t.cd.interface = "enp1s0f0np0";
	t.cd.source = "ethtool";
	t.cd.name = "rx_prio3_pause";
	t.cd.delta = 48213;
	t.cdp[0] = &t.cd;
	t.e[0].counters = t.cdp;
	t.e[0].n_counters = 1;
	explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
	show(&c);
	assert_int_equal(c.at, -1);
	assert_non_null(strstr(c.verdict, "below every known limit"));
	assert_non_null(strstr(c.verdict, "18% of the lowest"));
	assert_true(advice_has(&c, "n2 enp1s0f0np0 rx_prio3_pause +48213"));
	assert_true(advice_has(&c, "the ladder saturated"));
	assert_false(advice_has(&c, "twins"));

	/* No counter moved: the hosts are pointed at instead. */
	t.e[0].n_counters = 0;
	explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
	assert_int_equal(c.at, -1);
	assert_true(advice_has(&c, "no loss counter moved"));

	/* Below every limit with the ladder still rising: more streams. */
	t.ab[2] = t.ba[2] = 30.0;
	explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
	assert_int_equal(c.at, -1);
	assert_true(advice_has(&c, "the ladder still rose 51% from 4 to 8 "
				   "streams"));
}

/* A 10G veth pair: the port's line rate less framing bounds it; at MTU
 * 1500 the advice is the MTU; a ladder still rising asks for streams. */
static void test_port_bound(void **state)
{
	struct end a, b;
	struct topo t;
	struct explain_ceiling c;

	(void)state;
	end_veth(&a, "n1", 1500, 10000);
	end_veth(&b, "n2", 1500, 10000);
	topo_init(&t, 3.0, 8.0, 9.3);
	explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
	show(&c);
	assert_int_equal(c.n_limits, 1);
	assert_true(c.at == 0);
	assert_string_equal(c.limits[0].what, "port");
	/* 10 x 1448 / 1538 */
	assert_true(c.limits[0].gbps > 9.41 && c.limits[0].gbps < 9.42);
	assert_non_null(strstr(c.verdict, "port's line rate"));
	assert_true(advice_has(&c, "raise the MTU on both ends (9000)"));
	/* At the port's rate, more streams cannot pass it. */
	assert_false(advice_has(&c, "the ladder"));

	/* Without inventories nothing is known. */
	explain_ceiling(&t.t, &t.e[0], NULL, NULL, &c);
	assert_int_equal(c.n_limits, 0);
	assert_non_null(strstr(c.verdict, "no limit is known"));

	/* Nothing measured: nothing to analyse, the error quoted. */
	t.e[0].n_gbps_a_to_b = t.e[0].n_gbps_b_to_a = 0;
	t.e[0].error = "n2 unreachable";
	explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
	assert_true(c.gbps < 0);
	assert_non_null(strstr(c.verdict, "(n2 unreachable)"));
}

/* RDMA WRITE figures above the TCP ladder are the figure analysed, with
 * RoCE framing at the active MTU; 1024 asks for a larger MTU. */
static void test_rdma_mtu(void **state)
{
	struct end a, b;
	struct topo t;
	struct explain_ceiling c;

	(void)state;
	end_veth(&a, "n1", 1500, 10000);
	end_veth(&b, "n2", 1500, 10000);
	a.inv.n_rdma_devices = b.inv.n_rdma_devices = 1;
	a.rp.active_mtu = b.rp.active_mtu = 1024;
	topo_init(&t, 3.0, 6.0, 6.5);
	t.e[0].rdma_write_gbps_a_to_b = 9.2;
	t.e[0].rdma_write_gbps_b_to_a = 9.1;
	explain_ceiling(&t.t, &t.e[0], &a.inv, &b.inv, &c);
	show(&c);
	assert_true(c.rdma);
	assert_non_null(strstr(c.figure, "RDMA WRITE"));
	assert_true(c.at == 0);
	assert_string_equal(c.limits[0].what, "rdma_mtu");
	assert_true(advice_has(&c, "path MTU can be 4096"));
}

static void test_find_edge(void **state)
{
	struct topo t;
	static Ring__Edge dash;
	Ring__Edge *ep[3];

	(void)state;
	topo_init(&t, 1, 2, 3);
	assert_int_equal(explain_find_edge(&t.t, "n1-n2"), 0);
	assert_int_equal(explain_find_edge(&t.t, "n2-n1"), 0);
	assert_int_equal(explain_find_edge(&t.t, "n1-n2:enP2p1s0f0np0"), 1);
	assert_int_equal(explain_find_edge(&t.t, "n2-n1:enP2p1s0f0np0"), 1);
	assert_int_equal(explain_find_edge(&t.t, "n1-n2:enp1s0f0np0"), 0);
	assert_int_equal(explain_find_edge(&t.t, "n1-n2:eth9"), -1);
	assert_int_equal(explain_find_edge(&t.t, "n1-n3"), -1);
	assert_int_equal(explain_find_edge(&t.t, "n1"), -1);
	assert_int_equal(explain_find_edge(&t.t, "n1-n2-"), -1);
	assert_int_equal(explain_find_edge(NULL, "n1-n2"), -1);
	/* Node names holding '-': every split is tried. */
	ring__edge__init(&dash);
	dash.a = "rack-1";
	dash.b = "rack-2";
	ep[0] = &t.e[0];
	ep[1] = &t.e[1];
	ep[2] = &dash;
	t.t.edges = ep;
	t.t.n_edges = 3;
	assert_int_equal(explain_find_edge(&t.t, "rack-2-rack-1"), 2);
	assert_int_equal(explain_find_edge(&t.t, "rack-1-rack-2"), 2);
	assert_int_equal(explain_find_edge(&t.t, "rack-1-rack"), -1);
}

/* Which findings are about an edge or a node: by their subject fields,
 * whatever the text says; a topology stored before the fields (its
 * findings packed with code, level and text only) reads back with empty
 * subjects: about nothing in particular, said as their text, no crash. */
static void test_finding_subjects(void **state)
{
	struct topo t;
	Ring__Finding f[4], *fp[4] = {&f[0], &f[1], &f[2], &f[3]};
	Ring__DiagonalCheck d = RING__DIAGONAL_CHECK__INIT, *dp[1] = {&d};
	char *cables[] = {"n1:p0-n2:p0"}, *nodes[] = {"n1", "n2"};
	struct explain_ceiling c;
	Ring__Topology *old;
	uint8_t *buf;
	size_t len;

	(void)state;
	topo_init(&t, 40.0, 102.3, 110.9);
	for (int i = 0; i < 4; i++) {
		ring__finding__init(&f[i]);
		f[i].code = "x";
		f[i].level = "warn";
		/* Text that names the edge: read by nothing. */
		f[i].text = "edge n1-n2 n1 enp1s0f0np0 every edge";
	}
	assert_false(explain_finding_names_edge(&t.t, &t.e[0], &f[0]));
	assert_false(explain_finding_names_node(&t.t, "n1", &f[0]));
	f[0].edge = "n2-n1";
	assert_true(explain_finding_names_edge(&t.t, &t.e[0], &f[0]));
	assert_false(explain_finding_names_edge(&t.t, &t.e[1], &f[0]));
	assert_true(explain_finding_names_node(&t.t, "n2", &f[0]));
	f[1].node = "n2";
	f[1].interface = "enP2p1s0f0np0";
	assert_true(explain_finding_names_edge(&t.t, &t.e[1], &f[1]));
	assert_false(explain_finding_names_edge(&t.t, &t.e[0], &f[1]));
	f[2].cables = cables;
	f[2].n_cables = 1;
	f[2].nodes = nodes;
	f[2].n_nodes = 2;
	assert_true(explain_finding_names_edge(&t.t, &t.e[1], &f[2]));
	assert_true(explain_finding_names_node(&t.t, "n1", &f[2]));
	assert_false(explain_finding_names_node(&t.t, "n3", &f[2]));
	f[3].ring = 1;
	assert_true(explain_finding_names_edge(&t.t, &t.e[0], &f[3]));
	assert_true(explain_finding_names_node(&t.t, "n3", &f[3]));

	/* Stored before the fields: packed with code, level, text only. */
	for (int i = 0; i < 4; i++) {
		f[i].edge = "";
		f[i].node = "";
		f[i].interface = "";
		f[i].n_cables = f[i].n_nodes = 0;
		f[i].ring = 0;
	}
	d.a = "n1";
	d.b = "n2";
	d.verdict = "no data-plane path, as expected (route gateway)";
	t.t.findings = fp;
	t.t.n_findings = 4;
	t.t.diagonals = dp;
	t.t.n_diagonals = 1;
	len = ring__topology__get_packed_size(&t.t);
	buf = malloc(len);
	assert_non_null(buf);
	ring__topology__pack(&t.t, buf);
	old = ring__topology__unpack(NULL, len, buf);
	free(buf);
	assert_non_null(old);
	assert_string_equal(old->findings[0]->edge, "");
	assert_string_equal(old->findings[0]->pcie_link, "");
	assert_string_equal(old->diagonals[0]->outcome, "");
	assert_false(explain_finding_names_edge(old, old->edges[0],
						old->findings[0]));
	assert_false(explain_finding_names_node(old, "n1", old->findings[0]));
	assert_null(explain_finding(old, "x", "n1", ""));
	explain_ceiling(old, old->edges[0], NULL, NULL, &c);
	assert_false(advice_has(&c, "finding x"));
	ring__topology__free_unpacked(old, NULL);
}

static void test_text_names(void **state)
{
	(void)state;
	assert_true(explain_text_names("edge n1-n2 tops out", "n1-n2"));
	assert_true(explain_text_names("n1 port p0: enp1s0f0np0 has", "n1"));
	assert_true(explain_text_names("edge n1-n2 tops out", "n1"));
	assert_false(explain_text_names("edge n10-n2 tops out", "n1"));
	assert_false(explain_text_names("xn1", "n1"));
	assert_false(explain_text_names("n1x", "n1"));
	assert_false(explain_text_names("", "n1"));
	assert_false(explain_text_names("n1", ""));
	assert_true(explain_text_names("n12 n1", "n1"));
}

/* ------------------------------------- the agent's inventory of fixtures */

/* A getifaddrs() list from a fixture's addrs file ("IFNAME ADDR/PREFIX"). */
struct fx_addr {
	struct ifaddrs ifa;
	struct sockaddr_in addr, mask;
	char name[IFNAMSIZ];
};

static Ring__Inventory *fx_inventory(const char *fixture, const char *node)
{
	const char *root = getenv("RING_FIXTURES");
	char dir[PATH_MAX], path[PATH_MAX + 8], line[128];
	struct fx_addr *a = calloc(16, sizeof(*a));
	struct inventory_src src = {0};
	struct agent_conf conf;
	Ring__Inventory *inv;
	unsigned n = 0;
	FILE *f;

	assert_non_null(a);
	snprintf(dir, sizeof(dir), "%s/%s",
		 root && *root ? root : "tests/fixtures", fixture);
	snprintf(path, sizeof(path), "%s/addrs", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char addr[32];
		unsigned prefix;

		assert_true(n < 16);
		assert_int_equal(sscanf(line, "%15s %31[0-9.]/%u", a[n].name,
					addr, &prefix),
				 3);
		a[n].addr.sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, addr, &a[n].addr.sin_addr),
				 1);
		a[n].mask.sin_family = AF_INET;
		a[n].mask.sin_addr.s_addr =
			htonl(prefix ? ~0u << (32 - prefix) : 0);
		a[n].ifa.ifa_name = a[n].name;
		a[n].ifa.ifa_addr = (struct sockaddr *)&a[n].addr;
		a[n].ifa.ifa_netmask = (struct sockaddr *)&a[n].mask;
		if (n)
			a[n - 1].ifa.ifa_next = &a[n].ifa;
		n++;
	}
	fclose(f);
	src.sysfs_root = src.procfs_root = dir;
	src.addrs = n ? &a[0].ifa : NULL;
	src.mgmt_interface = "enP7s7";
	agent_conf_defaults(&conf);
	snprintf(conf.node, sizeof(conf.node), "%s", node);
	inv = inventory_collect(&conf, &src);
	assert_non_null(inv);
	free(a);
	return inv;
}

/* The agent's own model of GB10 fixtures: n1 with its 0002 link at x2
 * under a root port wired x2 (gb10-x2), n2 fully trained (gb10-dual).
 * The edge over n1's enP2p1s0f0np0 at 54.8 Gbps sits at that link's
 * usable rate as the agent computes it, and nothing is to be fixed; with
 * n1's root port able to do x4 (gb10-x2-down) the advice is to retrain
 * it. The edge over enp1s0f0np0 at 109.9 sits at its x4 link's. */
static void test_fixture_inventories(void **state)
{
	Ring__Inventory *n1 = fx_inventory("gb10-x2", "n1");
	Ring__Inventory *n2 = fx_inventory("gb10-dual", "n2");
	struct explain_ceiling c;
	struct topo t;

	(void)state;
	topo_init(&t, 30.0, 54.0, 54.8);
	t.e[0].a_interface = t.e[0].b_interface = "enP2p1s0f0np0";
	t.e[1].a_interface = t.e[1].b_interface = "enp1s0f0np0";
	explain_ceiling(&t.t, &t.e[0], n1, n2, &c);
	show(&c);
	assert_true(c.at >= 0);
	assert_string_equal(c.limits[c.at].what, "pcie_link");
	assert_non_null(strstr(c.limits[c.at].text,
			       "n1 enP2p1s0f0np0 PCIe link 0002:01:00"));
	assert_non_null(strstr(c.limits[c.at].text, "x2 of x4"));
	assert_true(c.limits[c.at].gbps > 55.4 && c.limits[c.at].gbps < 55.6);
	assert_non_null(strstr(c.limits[c.at].text, "wired narrow x2 of x4"));
	assert_true(advice_has(&c, "n1 PCIe link 0002:01:00 runs at x2 of x4 "
				   "because the port above it (0002:00:00.0) "
				   "is itself x2: the board is wired so"));
	assert_false(advice_has(&c, "reseat"));
	assert_false(advice_has(&c, "about 111.0 Gbps usable"));
	assert_true(advice_has(&c, "enp1s0f0np0 on link 0000:01:00"));
	inventory_free(n1);
	n1 = fx_inventory("gb10-x2-down", "n1");
	explain_ceiling(&t.t, &t.e[0], n1, n2, &c);
	show(&c);
	assert_non_null(strstr(c.limits[c.at].text, "downtrained x2 of x4"));
	assert_true(advice_has(&c, "n1 PCIe link 0002:01:00 is trained x2 of "
				   "x4 though the port above it "
				   "(0002:00:00.0) supports x4: reseat"));
	assert_true(advice_has(&c, "about 111.0 Gbps usable"));

	for (int i = 0; i < 3; i++)
		t.ab[i] = t.ba[i] = 109.9;
	explain_ceiling(&t.t, &t.e[1], n1, n2, &c);
	show(&c);
	assert_true(c.at >= 0);
	assert_string_equal(c.limits[c.at].what, "pcie_link");
	assert_true(c.limits[c.at].gbps > 110.9 && c.limits[c.at].gbps < 111.1);
	assert_non_null(strstr(c.verdict, "PCIe link's usable rate"));
	inventory_free(n1);
	inventory_free(n2);
}

/* A measured figure above the computed model: the model was wrong, not
 * the link. Both ends read MPS 128 B (gb10-mps): 101.6 Gbps usable per
 * x4 link; the reference cluster measured 111.3 Gbps (docs/REFERENCE.md). */
static void test_above_model(void **state)
{
	Ring__Inventory *n1 = fx_inventory("gb10-mps", "n1");
	Ring__Inventory *n2 = fx_inventory("gb10-mps", "n2");
	struct explain_ceiling c;
	struct topo t;

	(void)state;
	topo_init(&t, 40.0, 102.3, 111.3);
	for (int i = 0; i < 3; i++)
		t.ba[i] = t.ab[i];
	explain_ceiling(&t.t, &t.e[0], n1, n2, &c);
	show(&c);
	assert_true(c.at >= 0);
	assert_string_equal(c.limits[c.at].what, "pcie_link");
	assert_true(c.limits[c.at].gbps > 101.5 && c.limits[c.at].gbps < 101.7);
	assert_non_null(strstr(c.limits[c.at].text,
			       "computed from MPS 128 B read from config "
			       "space"));
	assert_int_equal(c.understated, c.at);
	assert_non_null(strstr(c.verdict,
			       "111.3 Gbps sits at the PCIe link's usable rate "
			       "but above its computed 101.6 Gbps (110%): the "
			       "model (MPS, TLP and DLLP overhead) understates "
			       "this link"));
	assert_null(strstr(c.verdict, "violat"));

	/* Well above every limit: still the model's fault. */
	for (int i = 0; i < 3; i++)
		t.ab[i] = t.ba[i] = 125.0;
	explain_ceiling(&t.t, &t.e[0], n1, n2, &c);
	show(&c);
	assert_int_equal(c.at, -1);
	assert_true(c.understated >= 0);
	assert_string_equal(c.limits[c.understated].what, "pcie_link");
	assert_non_null(strstr(c.verdict,
			       "125.0 Gbps (measured) is above the computed "
			       "101.6 Gbps PCIe link's usable rate (123%): the "
			       "model (MPS, TLP and DLLP overhead) understates "
			       "this link"));

	/* Within the limits' rounding: at, and nothing understated. */
	for (int i = 0; i < 3; i++)
		t.ab[i] = t.ba[i] = 102.0;
	explain_ceiling(&t.t, &t.e[0], n1, n2, &c);
	assert_int_equal(c.understated, -1);
	assert_null(strstr(c.verdict, "understates"));
	inventory_free(n1);
	inventory_free(n2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gb10_at_pcie),
		cmocka_unit_test(test_gb10_downtrained),
		cmocka_unit_test(test_far_below),
		cmocka_unit_test(test_port_bound),
		cmocka_unit_test(test_rdma_mtu),
		cmocka_unit_test(test_fixture_inventories),
		cmocka_unit_test(test_above_model),
		cmocka_unit_test(test_find_edge),
		cmocka_unit_test(test_text_names),
		cmocka_unit_test(test_finding_subjects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
