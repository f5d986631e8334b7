/* watch: the live overlay and the health rules over a real node table and
 * alert table, on the reference cluster's ring n1-n2-n4-n3. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "coordinator/alerts.h"
#include "coordinator/coord_conf.h"
#include "coordinator/health.h"
#include "coordinator/health_rules.h"
#include "coordinator/nodes.h"
#include "testalerts.h"

static const char *const ring[] = {"n1", "n2", "n4", "n3"};

/* Cables in the reference cluster's wiring: rank k's eth2 to rank k+1's eth1. */
struct cable {
	const char *a, *a_if, *b, *b_if;
};
static const struct cable cables[] = {
	{"n1", "eth2", "n2", "eth1"},
	{"n2", "eth2", "n4", "eth1"},
	{"n4", "eth2", "n3", "eth1"},
	{"n3", "eth2", "n1", "eth1"},
};
#define N_CABLES (sizeof(cables) / sizeof(cables[0]))

struct fx {
	struct event_base *base;
	struct coord_conf conf;
	struct nodes *table;
	struct alerts *alerts;
	struct health_rules *w;
	int fired, resolved, changed;
	int session; /* a non-NULL session pointer for nodes_mark_up */
	/* Per node and port: carrier, MTU, heard by beacons. */
	int carrier[4][2], mtu[4][2], hears[4][2], speed[4][2];
	/* Per node and port: the RoCE GID at index 1 of the port's RDMA
	 * device (rxe<node>a on eth1, rxe<node>b on eth2); "" none. */
	char gid1[4][2][48];
	int rdma_survey;   /* publish: edges measured over RDMA, GID index 1 */
	const char *stray; /* publish: a node set apart, or NULL */
};

static int node_idx(const char *n)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(ring[i], n))
			return i;
	fail_msg("no node %s", n);
	return -1;
}

static void notify(const struct alert *a, enum alert_event ev, void *arg)
{
	struct fx *f = arg;

	(void)a;
	f->fired += ev == ALERT_EV_FIRED;
	f->resolved += ev == ALERT_EV_RESOLVED;
	f->changed += ev == ALERT_EV_CHANGED;
}

/* The peer node n's port p (0 eth1, 1 eth2) is cabled to. */
static const char *peer_of(const char *n, int p)
{
	for (size_t i = 0; i < N_CABLES; i++) {
		if (!strcmp(cables[i].a, n) &&
		    (p == 1) == !strcmp(cables[i].a_if, "eth2"))
			return cables[i].b;
		if (!strcmp(cables[i].b, n) &&
		    (p == 1) == !strcmp(cables[i].b_if, "eth2"))
			return cables[i].a;
	}
	return "";
}

/* Push node i's facts as an agent would: an inventory and a beacon table
 * (heap copies, which the table owns). */
static void push(struct fx *f, int i)
{
	struct node *n = nodes_find(f->table, ring[i]);
	Ring__Inventory inv = RING__INVENTORY__INIT;
	Ring__NetInterface nif[2], *nifp[2];
	Ring__NeighbourTable nt = RING__NEIGHBOUR_TABLE__INIT;
	Ring__Neighbour nb[2], *nbp[2];
	Ring__RdmaDevice dev[2], *devp[2];
	Ring__RdmaPort port[2], *portp[2];
	Ring__Gid gid[2][2], *gidp[2][2];
	char devname[2][16];
	uint8_t buf[4096];
	size_t len;

	inv.node = (char *)ring[i];
	for (int p = 0; p < 2; p++) {
		ring__net_interface__init(&nif[p]);
		nif[p].name = p ? "eth2" : "eth1";
		nif[p].admin_up = 1;
		nif[p].carrier = f->carrier[i][p];
		nif[p].mtu = (uint32_t)f->mtu[i][p];
		nif[p].speed_mbps = f->speed[i][p];
		nifp[p] = &nif[p];
	}
	inv.n_interfaces = 2;
	inv.interfaces = nifp;
	/* One single-port device per interface: GID 0 link-local, GID 1 the
	 * IPv4-mapped one (absent when gid1 is ""). */
	for (int p = 0; p < 2; p++) {
		ring__rdma_device__init(&dev[p]);
		ring__rdma_port__init(&port[p]);
		snprintf(devname[p], sizeof(devname[p]), "rxe%s%c", ring[i] + 1,
			 p ? 'b' : 'a');
		dev[p].name = devname[p];
		port[p].port = 1;
		port[p].netdev = nif[p].name;
		for (int g = 0; g < 2; g++) {
			ring__gid__init(&gid[p][g]);
			gid[p][g].index = (uint32_t)g;
			gid[p][g].gid = g ? f->gid1[i][p] : "fe80::1";
			gidp[p][g] = &gid[p][g];
		}
		port[p].gids = gidp[p];
		port[p].n_gids = *f->gid1[i][p] ? 2 : 1;
		portp[p] = &port[p];
		dev[p].ports = &portp[p];
		dev[p].n_ports = 1;
		devp[p] = &dev[p];
	}
	inv.n_rdma_devices = 2;
	inv.rdma_devices = devp;
	assert_true(ring__inventory__get_packed_size(&inv) <= sizeof(buf));
	len = ring__inventory__pack(&inv, buf);
	nodes_set_inventory(n, ring__inventory__unpack(NULL, len, buf));
	nt.beacons_available = 1;
	for (int p = 0; p < 2; p++) {
		if (!f->hears[i][p])
			continue;
		ring__neighbour__init(&nb[nt.n_neighbours]);
		nb[nt.n_neighbours].local_interface = p ? "eth2" : "eth1";
		nb[nt.n_neighbours].remote_node = (char *)peer_of(ring[i], p);
		/* Beacons every second (TTL four of them): a grace of 2 s. */
		nb[nt.n_neighbours].ttl_s = 4;
		nbp[nt.n_neighbours] = &nb[nt.n_neighbours];
		nt.n_neighbours++;
	}
	nt.neighbours = nbp;
	len = ring__neighbour_table__pack(&nt, buf);
	nodes_set_neighbours(n, ring__neighbour_table__unpack(NULL, len, buf));
}

/* The topology the survey published for the wiring above: n1-n2 (the
 * first cable) at `first` Gbps (top of a 1-step ladder both ways), every
 * other edge at `others`; no figures when first < 0. */
static void publish_figures(struct fx *f, double first, double others)
{
	Ring__Topology t = RING__TOPOLOGY__INIT;
	Ring__Edge e[N_CABLES], *ep[N_CABLES];
	Ring__Rank r[4], *rp[4];
	uint32_t ladder[1] = {8};
	double gb[N_CABLES];
	char rdma[N_CABLES][2][16];
	Ring__StrayNode stray, *sp = &stray;

	t.kind = "ring";
	t.order = (char **)ring;
	t.n_order = 4;
	for (size_t i = 0; i < N_CABLES; i++) {
		ring__edge__init(&e[i]);
		e[i].a = (char *)cables[i].a;
		e[i].a_interface = (char *)cables[i].a_if;
		e[i].b = (char *)cables[i].b;
		e[i].b_interface = (char *)cables[i].b_if;
		e[i].verified = 1;
		/* Measured over RDMA where the ends have a GID 1 now. */
		e[i].a_gid_index = e[i].b_gid_index = -1;
		if (f->rdma_survey) {
			int a = node_idx(cables[i].a),
			    b = node_idx(cables[i].b);
			int pa = !strcmp(cables[i].a_if, "eth2"),
			    pb = !strcmp(cables[i].b_if, "eth2");

			snprintf(rdma[i][0], sizeof(rdma[i][0]), "rxe%s%c",
				 cables[i].a + 1, pa ? 'b' : 'a');
			snprintf(rdma[i][1], sizeof(rdma[i][1]), "rxe%s%c",
				 cables[i].b + 1, pb ? 'b' : 'a');
			e[i].a_rdma = rdma[i][0];
			e[i].b_rdma = rdma[i][1];
			e[i].a_gid = f->gid1[a][pa];
			e[i].b_gid = f->gid1[b][pb];
			e[i].a_gid_index = e[i].b_gid_index = 1;
		}
		if (first >= 0) {
			gb[i] = i ? others : first;
			e[i].n_ladder = e[i].n_gbps_a_to_b =
				e[i].n_gbps_b_to_a = 1;
			e[i].ladder = ladder;
			e[i].gbps_a_to_b = e[i].gbps_b_to_a = &gb[i];
			e[i].measured_ms = 1000;
		}
		ep[i] = &e[i];
	}
	t.edges = ep;
	t.n_edges = N_CABLES;
	for (int i = 0; i < 4; i++) {
		ring__rank__init(&r[i]);
		r[i].rank = (uint32_t)i;
		r[i].node = (char *)ring[i];
		rp[i] = &r[i];
	}
	t.ranks = rp;
	t.n_ranks = 4;
	if (f->stray) {
		ring__stray_node__init(&stray);
		stray.node = (char *)f->stray;
		stray.reason = "no_cable";
		stray.text = "not cabled into the ring";
		t.strays = &sp;
		t.n_strays = 1;
	}
	assert_int_equal(health_rules_set_topology(f->w, &t), 0);
}

static void publish(struct fx *f)
{
	publish_figures(f, -1, -1);
}

static void publish_gbps(struct fx *f, double g)
{
	publish_figures(f, g, 10.0);
}

static void publish_all_gbps(struct fx *f, double g)
{
	publish_figures(f, g, g);
}

static struct fx *fx_new(uint64_t hold_down_ms)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct alerts_conf ac = {.hold_down_ms = hold_down_ms,
				 .max_resolved = 64,
				 .keep_resolved_ms = 86400000,
				 .max_firing = 64};

	assert_non_null(f);
	f->base = event_base_new();
	coord_conf_defaults(&f->conf);
	f->table = nodes_new();
	f->alerts = alerts_new(&ac, notify, f);
	f->w = health_rules_new(f->base, &f->conf, f->table, f->alerts);
	assert_non_null(f->base);
	assert_non_null(f->w);
	for (int i = 0; i < 4; i++) {
		struct node *n = nodes_get(f->table, ring[i], 100);

		assert_non_null(n);
		n->expected = 1;
		nodes_mark_up(n, &f->session, "10.88.0.1", RING_VERSION, 1000);
		for (int p = 0; p < 2; p++) {
			f->carrier[i][p] = 1;
			f->mtu[i][p] = 9000;
			f->speed[i][p] = 200000;
			f->hears[i][p] = 1;
			/* edge k's ends: 10.9.k.1 (b side), 10.9.k.2 */
			snprintf(f->gid1[i][p], sizeof(f->gid1[i][p]),
				 "::ffff:10.9.%d.%d",
				 p   ? i + 1
				 : i ? i
				     : 4,
				 p ? 1 : 2);
		}
		push(f, i);
	}
	publish(f);
	return f;
}

static void fx_free(struct fx *f)
{
	health_rules_free(f->w);
	alerts_free(f->alerts);
	nodes_free(f->table);
	coord_conf_free(&f->conf);
	event_base_free(f->base);
	free(f);
}

/* Cut (on 0) or mend the cable of the edge a-b: both ends lose carrier
 * and stop hearing beacons, as a pulled cable does. */
static void cable(struct fx *f, size_t k, int on)
{
	int a = node_idx(cables[k].a), b = node_idx(cables[k].b);
	int pa = !strcmp(cables[k].a_if, "eth2"),
	    pb = !strcmp(cables[k].b_if, "eth2");

	f->carrier[a][pa] = f->carrier[b][pb] = on;
	f->hears[a][pa] = f->hears[b][pb] = on;
	push(f, a);
	push(f, b);
	health_rules_eval(f->w);
}

static const Ring__Edge *edge(const Ring__Topology *t, const char *a,
			      const char *b)
{
	for (size_t i = 0; i < t->n_edges; i++)
		if (!strcmp(t->edges[i]->a, a) && !strcmp(t->edges[i]->b, b))
			return t->edges[i];
	fail_msg("no edge %s-%s", a, b);
	return NULL;
}

static int firing(struct fx *f, const char *rule, const char *subject)
{
	const struct alert *v[64];
	size_t n = alerts_list(f->alerts, 0, v, 64);

	for (size_t i = 0; i < n && i < 64; i++)
		if (!strcmp(v[i]->rule, rule) &&
		    !strcmp(v[i]->subject, subject))
			return 1;
	return 0;
}

/* The message of a firing alert, or "". */
static const char *message(struct fx *f, const char *rule, const char *subject)
{
	const struct alert *a = alerts_get(f->alerts, rule, subject);

	return a && a->firing ? a->message : "";
}

static void test_all_up(void **state)
{
	struct fx *f = fx_new(0);
	const Ring__Topology *t = health_rules_topology(f->w);

	(void)state;
	assert_string_equal(t->live_kind, "ring");
	assert_string_equal(t->live_gap, "");
	assert_true(t->order_valid);
	for (size_t i = 0; i < t->n_edges; i++)
		assert_string_equal(t->edges[i]->live_state, "up");
	assert_int_equal(alerts_firing(f->alerts), 0);
	assert_string_equal(testalerts_health(f->alerts), "healthy");
	assert_int_equal(t->n_not_surveyed, 0);
	fx_free(f);
}

/* A pulled cable: the ring is a line without it at once, the published
 * order is invalid, cable_down and ring_broken fire; mended, both
 * resolve. No survey, no test traffic: only what the agents pushed. */
static void test_cable_cut_and_mended(void **state)
{
	struct fx *f = fx_new(0);
	const Ring__Topology *t;
	uint8_t buf[8192];

	(void)state;
	cable(f, 0, 0);
	t = health_rules_topology(f->w);
	assert_string_equal(edge(t, "n1", "n2")->live_state, "down");
	assert_non_null(strstr(edge(t, "n1", "n2")->live_reason,
			       "n1 eth2: no carrier"));
	assert_non_null(strstr(edge(t, "n1", "n2")->live_reason,
			       "n2 eth1: no carrier"));
	assert_string_equal(edge(t, "n2", "n4")->live_state, "up");
	assert_string_equal(t->live_kind, "line");
	assert_string_equal(t->live_gap, "n1-n2");
	/* The words come from the cable as data, not from a node. */
	assert_int_equal(t->n_live_cables_down, 1);
	assert_string_equal(t->live_cables_down[0], "n1-n2");
	assert_int_equal(t->n_live_nodes_down, 0);
	assert_false(t->order_valid);
	assert_non_null(strstr(t->order_invalid, "cable n1-n2 is down"));
	assert_true(firing(f, "cable_down", "n1-n2"));
	assert_true(firing(f, "ring_broken", "ring"));
	assert_non_null(strstr(message(f, "ring_broken", "ring"),
			       "; the ring is now a line: the cable n1-n2 is "
			       "down"));
	assert_null(strstr(message(f, "ring_broken", "ring"), "missing"));
	assert_false(firing(f, "cable_down", "n2-n4"));
	assert_string_equal(testalerts_health(f->alerts), "critical");
	assert_int_equal(f->fired, 2);
	/* The overlay travels: it packs (and the copy frees cleanly). */
	assert_true(ring__topology__get_packed_size(t) < sizeof(buf));
	ring__topology__pack(t, buf);

	cable(f, 0, 1);
	t = health_rules_topology(f->w);
	assert_string_equal(edge(t, "n1", "n2")->live_state, "up");
	assert_string_equal(t->live_kind, "ring");
	assert_true(t->order_valid);
	assert_int_equal(alerts_firing(f->alerts), 0);
	assert_int_equal(f->resolved, 2);
	assert_string_equal(testalerts_health(f->alerts), "healthy");
	fx_free(f);
}

/* Carrier without beacons either way is no working cable either. */
static void test_carrier_without_beacons(void **state)
{
	struct fx *f = fx_new(0);
	int a = node_idx("n2"), b = node_idx("n4");

	(void)state;
	f->hears[a][1] = f->hears[b][0] = 0;
	push(f, a);
	push(f, b);
	health_rules_eval(f->w);
	/* Beacons lag carrier (a port just up, an agent just back with an
	 * empty table): two beacon intervals are waited out first. */
	assert_string_equal(
		edge(health_rules_topology(f->w), "n2", "n4")->live_state,
		"unverified");
	assert_non_null(strstr(
		edge(health_rules_topology(f->w), "n2", "n4")->live_reason,
		"waiting 2000 ms for beacons"));
	assert_false(firing(f, "cable_down", "n2-n4"));
	usleep(2100 * 1000);
	health_rules_eval(f->w);
	assert_string_equal(
		edge(health_rules_topology(f->w), "n2", "n4")->live_state,
		"down");
	assert_true(firing(f, "cable_down", "n2-n4"));
	/* One direction heard is enough. */
	f->hears[b][0] = 1;
	push(f, b);
	health_rules_eval(f->w);
	assert_string_equal(
		edge(health_rules_topology(f->w), "n2", "n4")->live_state,
		"up");
	fx_free(f);
}

/* A node that is down is not a missing cable: its edges are unverified,
 * no cable_down fires, the ring is a line of the others, the order that
 * includes it is invalid, and node_down names it. */
static void test_node_down(void **state)
{
	struct fx *f = fx_new(0);
	const Ring__Topology *t;

	(void)state;
	nodes_mark_down(nodes_find(f->table, "n4"), "heartbeat timeout", 2000);
	health_rules_eval(f->w);
	t = health_rules_topology(f->w);
	assert_string_equal(edge(t, "n2", "n4")->live_state, "unverified");
	assert_string_equal(edge(t, "n4", "n3")->live_state, "unverified");
	assert_non_null(strstr(edge(t, "n2", "n4")->live_reason, "n4 is down"));
	assert_false(firing(f, "cable_down", "n2-n4"));
	assert_true(firing(f, "node_down", "n4"));
	assert_true(firing(f, "ring_broken", "ring"));
	assert_string_equal(t->live_kind, "line");
	assert_string_equal(t->live_gap, "n4 down");
	assert_int_equal(t->n_live_nodes_down, 1);
	assert_string_equal(t->live_nodes_down[0], "n4");
	assert_int_equal(t->n_live_cables_down, 0);
	assert_non_null(strstr(t->order_invalid, "rank 2 (n4) is down"));
	assert_non_null(strstr(message(f, "ring_broken", "ring"),
			       "; the ring is now a line: n4 is down"));
	assert_null(strstr(message(f, "ring_broken", "ring"), "missing"));
	nodes_mark_up(nodes_find(f->table, "n4"), &f->session, "10.88.0.14",
		      RING_VERSION, 3000);
	health_rules_eval(f->w);
	assert_int_equal(alerts_firing(f->alerts), 0);
	fx_free(f);
}

/* An expected node the survey never saw: named with why, and alerted. */
static void test_not_surveyed(void **state)
{
	struct fx *f = fx_new(0);
	struct node *n5 = nodes_get(f->table, "n5", 100);
	const Ring__Topology *t;

	(void)state;
	n5->expected = 1;
	health_rules_eval(f->w);
	t = health_rules_topology(f->w);
	assert_int_equal(t->n_not_surveyed, 1);
	assert_string_equal(t->not_surveyed[0], "n5: never");
	/* Not alerted within the grace a cluster gets to come up. */
	assert_false(firing(f, "node_down", "n5"));
	f->conf.survey_grace_ms = 0;
	health_rules_eval(f->w);
	t = health_rules_topology(f->w);
	assert_true(firing(f, "node_down", "n5"));
	/* The order of the four surveyed nodes still holds. */
	assert_true(t->order_valid);
	fx_free(f);
}

/* A node the survey set apart: listed while up; when it leaves, the
 * listing goes and nothing else moves: no node_down (even without an
 * expect list, where any other node that joined is alerted), the order
 * holds, healthy. */
static void test_stray_leaves(void **state)
{
	struct fx *f = fx_new(0);
	struct node *evil = nodes_get(f->table, "evil", 100);
	struct node *guest = nodes_get(f->table, "guest", 100);
	const Ring__Topology *t;
	uint8_t buf[8192];

	(void)state;
	assert_int_equal(f->conf.n_expect, 0);
	nodes_mark_up(evil, &f->session, "10.88.0.66", RING_VERSION, 1000);
	nodes_mark_up(guest, &f->session, "10.88.0.67", RING_VERSION, 1000);
	f->stray = "evil";
	publish(f);
	t = health_rules_topology(f->w);
	assert_int_equal(t->n_strays, 1);
	assert_string_equal(t->strays[0]->node, "evil");
	assert_string_equal(t->strays[0]->reason, "no_cable");
	assert_true(t->order_valid);
	nodes_mark_down(evil, "session closed", 2000);
	health_rules_eval(f->w);
	t = health_rules_topology(f->w);
	assert_int_equal(t->n_strays, 0);
	assert_false(firing(f, "node_down", "evil"));
	assert_string_equal(t->live_kind, "ring");
	assert_true(t->order_valid);
	assert_int_equal(alerts_firing(f->alerts), 0);
	assert_string_equal(testalerts_health(f->alerts), "healthy");
	/* The filtered overlay packs, and the published list is freed. */
	assert_true(ring__topology__get_packed_size(t) < sizeof(buf));
	ring__topology__pack(t, buf);
	/* Back: listed again, without a survey. */
	nodes_mark_up(evil, &f->session, "10.88.0.66", RING_VERSION, 3000);
	health_rules_eval(f->w);
	assert_int_equal(health_rules_topology(f->w)->n_strays, 1);
	/* Any other node that joined and left is alerted, as before. */
	nodes_mark_down(guest, "session closed", 4000);
	health_rules_eval(f->w);
	assert_true(firing(f, "node_down", "guest"));
	/* A new survey without it: the old list lets go cleanly. */
	f->stray = NULL;
	publish(f);
	assert_int_equal(health_rules_topology(f->w)->n_strays, 0);
	fx_free(f);
}

static void test_mtu_and_version(void **state)
{
	struct fx *f = fx_new(0);
	struct node *n3 = nodes_find(f->table, "n3");

	(void)state;
	f->mtu[node_idx("n1")][1] = 1500;
	push(f, node_idx("n1"));
	snprintf(n3->agent_version, sizeof(n3->agent_version), "0.0.1");
	health_rules_eval(f->w);
	assert_true(firing(f, "mtu_mismatch", "n1-n2"));
	assert_true(firing(f, "version_skew", "n3"));
	assert_string_equal(testalerts_health(f->alerts), "degraded");
	assert_true(health_rules_topology(f->w)->order_valid);
	fx_free(f);
}

/* Twenty cuts and mends inside the hold-down: one alert per rule, each
 * flap counted, nothing resolved while it flaps. */
static void test_flapping_cable(void **state)
{
	struct fx *f = fx_new(30000);
	const struct alert *v[8];
	size_t n;

	(void)state;
	for (int i = 0; i < 20; i++) {
		cable(f, 1, 0);
		cable(f, 1, 1);
	}
	assert_int_equal(f->fired, 2); /* cable_down, ring_broken */
	assert_int_equal(f->resolved, 0);
	n = alerts_list(f->alerts, 0, v, 8);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v[i]->flaps, 19);
	fx_free(f);
}

/* A counters report for one node, through the wire: eth1 and eth2 with
 * the given error and drop totals. */
static int counters(struct fx *f, const char *node, uint64_t rx_errors,
		    uint64_t rx_dropped, uint64_t now_ms)
{
	Ring__PortCounters p[2] = {RING__PORT_COUNTERS__INIT,
				   RING__PORT_COUNTERS__INIT};
	Ring__PortCounters *pp[2] = {&p[0], &p[1]};
	Ring__CountersReport r = RING__COUNTERS_REPORT__INIT;
	uint8_t buf[512];
	size_t len;
	int changed;

	p[0].interface = "eth1";
	p[0].tx_errors = 7; /* constant: never a rise */
	p[1].interface = "eth2";
	p[1].rx_errors = rx_errors;
	p[1].rx_dropped = rx_dropped;
	r.interval_ms = 10000;
	r.n_ports = 2;
	r.ports = pp;
	len = ring__counters_report__get_packed_size(&r);
	assert_true(len <= sizeof(buf));
	ring__counters_report__pack(&r, buf);
	changed = nodes_set_counters(
		nodes_find(f->table, node),
		ring__counters_report__unpack(NULL, len, buf), now_ms);
	health_rules_eval(f->w);
	return changed;
}

static const struct alert *alert_of(struct fx *f, const char *rule,
				    const char *subject)
{
	const struct alert *v[64];
	size_t n = alerts_list(f->alerts, 0, v, 64);

	for (size_t i = 0; i < n && i < 64; i++)
		if (!strcmp(v[i]->rule, rule) &&
		    !strcmp(v[i]->subject, subject))
			return v[i];
	return NULL;
}

/* Error or drop counters rising on a port: port_errors for that port,
 * saying by how much over how long; cleared by a report with no rise. A
 * first report, constant counters and a counter reset are no rise; the
 * change is reported (for the change callback) only when a port starts
 * or stops rising. */
static void test_port_errors(void **state)
{
	struct fx *f = fx_new(0);
	const struct alert *a;

	(void)state;
	/* First report: nothing to compare with, even with errors. */
	assert_int_equal(counters(f, "n2", 100, 50, 10000), 0);
	assert_int_equal(alerts_firing(f->alerts), 0);
	assert_int_equal(counters(f, "n2", 100, 50, 20000), 0);
	assert_int_equal(alerts_firing(f->alerts), 0);
	/* Rising: +5 errors, +2 drops in 10 s. */
	assert_int_equal(counters(f, "n2", 105, 52, 30000), 1);
	a = alert_of(f, "port_errors", "n2 eth2");
	assert_non_null(a);
	assert_int_equal(a->severity, ALERT_WARNING);
	assert_string_equal(a->node, "n2");
	assert_string_equal(a->message, "n2 eth2: rx_errors +5, rx_dropped "
					"+2 in the last 10 s");
	assert_false(firing(f, "port_errors", "n2 eth1"));
	assert_string_equal(testalerts_health(f->alerts), "degraded");
	/* Still rising: still one alert, no change to report. */
	assert_int_equal(counters(f, "n2", 106, 52, 40000), 0);
	assert_int_equal(alerts_firing(f->alerts), 1);
	/* No rise: cleared. */
	assert_int_equal(counters(f, "n2", 106, 52, 50000), 1);
	assert_false(firing(f, "port_errors", "n2 eth2"));
	assert_int_equal(alerts_firing(f->alerts), 0);
	/* A reset (counters back near 0) is no rise. */
	assert_int_equal(counters(f, "n2", 1, 0, 60000), 0);
	assert_int_equal(alerts_firing(f->alerts), 0);
	/* A node that is down is not judged by its last report. */
	assert_int_equal(counters(f, "n3", 0, 0, 60000), 0);
	assert_int_equal(counters(f, "n3", 0, 9, 70000), 1);
	assert_true(firing(f, "port_errors", "n3 eth2"));
	nodes_mark_down(nodes_find(f->table, "n3"), "heartbeat timeout", 71000);
	health_rules_eval(f->w);
	assert_false(firing(f, "port_errors", "n3 eth2"));
	fx_free(f);
}

/* A counters report of eth2 alone from an agent that reports carrier
 * (listening throughout). */
static void counters_st(struct fx *f, const char *node, uint64_t tx_dropped,
			uint64_t rx_dropped, uint64_t carrier_changes,
			int carrier, uint64_t now_ms)
{
	Ring__PortCounters p = RING__PORT_COUNTERS__INIT, *pp = &p;
	Ring__CountersReport r = RING__COUNTERS_REPORT__INIT;
	uint8_t buf[256];
	size_t len;

	p.interface = "eth2";
	p.tx_dropped = tx_dropped;
	p.rx_dropped = rx_dropped;
	p.carrier_changes = carrier_changes;
	p.carrier = carrier;
	p.listening = 1;
	r.interval_ms = 1000;
	r.port_state = 1;
	r.n_ports = 1;
	r.ports = &pp;
	len = ring__counters_report__get_packed_size(&r);
	assert_true(len <= sizeof(buf));
	ring__counters_report__pack(&r, buf);
	nodes_set_counters(nodes_find(f->table, node),
			   ring__counters_report__unpack(NULL, len, buf),
			   now_ms);
	health_rules_eval(f->w);
}

/* The noise: a cut (tx_dropped +1 while the carrier is gone), a
 * mend, an agent restart (the beacons meanwhile as rx_dropped) raise no
 * port_errors; the same rises with carrier and the agent throughout
 * do. */
static void test_port_errors_windows(void **state)
{
	struct fx *f = fx_new(0);
	struct node *n2;

	(void)state;
	counters_st(f, "n2", 0, 0, 2, 1, 10000);
	counters_st(f, "n2", 1, 0, 3, 0, 11000); /* cut */
	counters_st(f, "n2", 1, 0, 3, 0, 12000);
	counters_st(f, "n2", 1, 0, 4, 1, 13000); /* mended */
	counters_st(f, "n2", 1, 0, 4, 1, 14000);
	assert_false(firing(f, "port_errors", "n2 eth2"));
	n2 = nodes_find(f->table, "n2");
	nodes_mark_down(n2, "connection closed by agent", 14500);
	health_rules_eval(f->w);
	nodes_mark_up(n2, &f->session, "10.88.0.1", RING_VERSION, 60000);
	counters_st(f, "n2", 1, 31, 4, 1, 61000); /* 47 s of beacons */
	assert_false(firing(f, "port_errors", "n2 eth2"));
	counters_st(f, "n2", 1, 31, 4, 1, 62000);
	assert_int_equal(alerts_firing(f->alerts), 0);
	/* The same counters moving with carrier and the agent throughout. */
	counters_st(f, "n2", 2, 33, 4, 1, 63000);
	assert_true(firing(f, "port_errors", "n2 eth2"));
	assert_string_equal(alert_of(f, "port_errors", "n2 eth2")->message,
			    "n2 eth2: rx_dropped +2, tx_dropped +1 in the "
			    "last 1 s");
	counters_st(f, "n2", 2, 33, 4, 1, 64000);
	assert_false(firing(f, "port_errors", "n2 eth2"));
	fx_free(f);
}

/* A link that renegotiates below the speed it had is a downshift; one
 * that always ran at its speed is not, whatever its nominal. */
static void test_speed_downshift(void **state)
{
	struct fx *f = fx_new(0);

	(void)state;
	assert_false(firing(f, "speed_downshift", "n1 eth2"));
	f->speed[node_idx("n1")][1] = 100000;
	push(f, node_idx("n1"));
	health_rules_eval(f->w);
	assert_true(firing(f, "speed_downshift", "n1 eth2"));
	assert_string_equal(testalerts_health(f->alerts), "degraded");
	f->speed[node_idx("n1")][1] = 200000;
	push(f, node_idx("n1"));
	health_rules_eval(f->w);
	assert_false(firing(f, "speed_downshift", "n1 eth2"));
	fx_free(f);
}

/* Certificates ending within 30 days: a warning for an agent's, critical
 * once one has ended; far ends say nothing. */
static void test_cert_expiring(void **state)
{
	struct fx *f = fx_new(0);
	uint64_t now = (uint64_t)time(NULL) * 1000;

	(void)state;
	nodes_find(f->table, "n2")->cert_not_after_ms = now + 10 * 86400000ull;
	nodes_find(f->table, "n3")->cert_not_after_ms = now + 90 * 86400000ull;
	health_rules_set_own_cert(f->w, now - 1000);
	health_rules_eval(f->w);
	assert_true(firing(f, "cert_expiring", "n2"));
	assert_false(firing(f, "cert_expiring", "n3"));
	assert_true(firing(f, "cert_expiring", "the coordinator"));
	assert_string_equal(testalerts_health(f->alerts), "critical");
	health_rules_set_own_cert(f->w, now + 365 * 86400000ull);
	nodes_find(f->table, "n2")->cert_not_after_ms = now + 300 * 86400000ull;
	health_rules_eval(f->w);
	assert_false(firing(f, "cert_expiring", "n2"));
	assert_false(firing(f, "cert_expiring", "the coordinator"));
	fx_free(f);
}

/* The first good figure of an edge is its baseline; a later survey
 * under 70% of it raises edge_degraded, back over it clears; baselines
 * go through their text and back. */
static void test_baselines(void **state)
{
	struct fx *f = fx_new(0);
	char text[512];
	size_t n;

	(void)state;
	publish_gbps(f, 10.0);
	assert_false(firing(f, "edge_degraded", "n1-n2"));
	publish_gbps(f, 4.0); /* n1-n2 at 4 of 10 */
	assert_true(firing(f, "edge_degraded", "n1-n2"));
	assert_false(firing(f, "edge_degraded", "n2-n4"));
	assert_string_equal(testalerts_health(f->alerts), "degraded");
	publish_gbps(f, 9.0);
	assert_false(firing(f, "edge_degraded", "n1-n2"));
	/* Every edge at half its baseline: the hosts' load, no alert. */
	publish_all_gbps(f, 5.0);
	assert_false(firing(f, "edge_degraded", "n1-n2"));
	assert_false(firing(f, "edge_degraded", "n2-n4"));
	n = health_rules_baselines_text(f->w, text, sizeof(text));
	assert_true(n > 0);
	assert_non_null(strstr(text, "n1-n2 10.000000 "));
	/* A new watch takes them back, and judges by them at once. */
	health_rules_free(f->w);
	f->w = health_rules_new(f->base, &f->conf, f->table, f->alerts);
	health_rules_baselines_load(f->w, text, n);
	health_rules_baselines_load(f->w, "garbage\nn9 x y\n", 15);
	publish_gbps(f, 4.0);
	assert_true(firing(f, "edge_degraded", "n1-n2"));
	fx_free(f);
}

/* A GID the survey's RDMA tests used that changed at its index: the
 * operator hears which node, device, port and index, and that the
 * deployed NCCL_IB_GID_INDEX may be stale; back, it resolves; a survey
 * that records the new GID resolves it too. Edges not measured over
 * RDMA, and nodes that are down, are not judged. */
static void test_gid_change(void **state)
{
	struct fx *f = fx_new(0);
	int n1 = node_idx("n1");
	const struct alert *a;
	char was[48];

	(void)state;
	/* Published without RDMA figures: nothing to compare. */
	snprintf(f->gid1[n1][1], sizeof(f->gid1[n1][1]), "::ffff:10.9.1.11");
	push(f, n1);
	health_rules_eval(f->w);
	assert_false(firing(f, "gid_change", "n1-n2"));
	snprintf(f->gid1[n1][1], sizeof(f->gid1[n1][1]), "::ffff:10.9.1.1");
	push(f, n1);
	f->rdma_survey = 1;
	publish(f);
	assert_int_equal(alerts_firing(f->alerts), 0);

	/* n1's address on rxe1b (eth2, facing n2) changes. */
	snprintf(was, sizeof(was), "%s", f->gid1[n1][1]);
	snprintf(f->gid1[n1][1], sizeof(f->gid1[n1][1]), "::ffff:10.9.1.11");
	push(f, n1);
	health_rules_eval(f->w);
	a = alert_of(f, "gid_change", "n1-n2");
	assert_non_null(a);
	assert_true(a->firing);
	assert_int_equal(a->severity, ALERT_WARNING);
	assert_string_equal(a->node, "n1");
	assert_string_equal(a->edge, "n1-n2");
	assert_string_equal(a->message,
			    "n1 rxe1b port 1: GID index 1 is now "
			    "::ffff:10.9.1.11 (was ::ffff:10.9.1.1 when the "
			    "survey measured it): NCCL_IB_GID_INDEX from "
			    "`ringctl ranks` may be stale; re-survey");
	assert_false(firing(f, "gid_change", "n3-n1")); /* n1's other port */
	assert_string_equal(testalerts_health(f->alerts), "degraded");

	/* Restored: resolved. */
	snprintf(f->gid1[n1][1], sizeof(f->gid1[n1][1]), "%s", was);
	push(f, n1);
	health_rules_eval(f->w);
	assert_false(firing(f, "gid_change", "n1-n2"));
	assert_int_equal(alerts_firing(f->alerts), 0);

	/* Gone from the table: fires, saying so. */
	f->gid1[n1][1][0] = '\0';
	push(f, n1);
	health_rules_eval(f->w);
	a = alert_of(f, "gid_change", "n1-n2");
	assert_non_null(a);
	assert_non_null(strstr(a->message, "n1 rxe1b port 1: GID index 1 is "
					   "gone (was ::ffff:10.9.1.1"));
	/* A node that is down is node_down's. */
	nodes_mark_down(nodes_find(f->table, "n1"), "heartbeat timeout", 2000);
	health_rules_eval(f->w);
	assert_false(firing(f, "gid_change", "n1-n2"));
	nodes_mark_up(nodes_find(f->table, "n1"), &f->session, "10.88.0.1",
		      RING_VERSION, 3000);
	push(f, n1);
	health_rules_eval(f->w);
	assert_true(firing(f, "gid_change", "n1-n2"));
	/* A new survey records the table as it is: resolved. */
	snprintf(f->gid1[n1][1], sizeof(f->gid1[n1][1]), "::ffff:10.9.1.11");
	push(f, n1);
	publish(f);
	assert_false(firing(f, "gid_change", "n1-n2"));
	assert_int_equal(alerts_firing(f->alerts), 0);
	fx_free(f);
}

/* What the survey's light checks said, as coord.c feeds them. */
static const char *light_fail_edge = "";
static uint64_t light_at, light_started; /* started 0: as light_at */

static void light_extras(Ring__Edge *e, void *arg)
{
	char name[64];

	(void)arg;
	snprintf(name, sizeof(name), "%s-%s", e->a, e->b);
	e->light_ms = light_at;
	e->light_started_ms = light_started ? light_started : light_at;
	e->light_lat_p50_us = 12.5;
	e->light_error = !strcmp(name, light_fail_edge)
				 ? "the probes did not get through both ways"
				 : "";
}

/* Carrier and beacons up but the last light check failed: warned, and
 * resolved by the next one that gets through; shown on the edge. */
static void test_light_check_failed(void **state)
{
	struct fx *f = fx_new(0);
	const Ring__Topology *t;
	const struct alert *a;

	(void)state;
	health_rules_set_edge_fn(f->w, light_extras, NULL);
	/* A second ago: after the edges came up, before any change. */
	light_at = clock_now_ms() - 1000;
	light_fail_edge = "n1-n2";
	health_rules_eval(f->w);
	a = alert_of(f, "light_check_failed", "n1-n2");
	assert_non_null(a);
	assert_int_equal(a->severity, ALERT_WARNING);
	assert_string_equal(a->message,
			    "edge n1-n2: carrier and beacons are up but its "
			    "light check failed: the probes did not get "
			    "through both ways");
	assert_int_equal(alerts_firing(f->alerts), 1);
	t = health_rules_topology(f->w);
	assert_string_equal(edge(t, "n1", "n2")->light_error,
			    "the probes did not get through both ways");
	assert_true(edge(t, "n2", "n4")->light_lat_p50_us == 12.5);
	/* The cable out: cable_down says it, not this rule. */
	cable(f, 0, 0);
	assert_false(firing(f, "light_check_failed", "n1-n2"));
	cable(f, 0, 1);
	/* Up again after the failed check: that check is older news. */
	assert_false(firing(f, "light_check_failed", "n1-n2"));
	/* A new check gets through: nothing fires. */
	light_at = clock_now_ms() + 1;
	light_fail_edge = "";
	health_rules_eval(f->w);
	assert_false(firing(f, "light_check_failed", "n1-n2"));
	/* A check that started while the cable was out and failed, ended
	 * after it was back: judged against the edge when it started (down),
	 * so not at all; the false alert after a mend. */
	cable(f, 0, 0);
	light_started = clock_now_ms() - 1;
	cable(f, 0, 1);
	light_at = clock_now_ms() + 1;
	light_fail_edge = "n1-n2";
	health_rules_eval(f->w);
	assert_false(firing(f, "light_check_failed", "n1-n2"));
	/* The next one, started with the edge up, is judged. */
	light_started = 0;
	light_at = clock_now_ms() + 2;
	health_rules_eval(f->w);
	assert_true(firing(f, "light_check_failed", "n1-n2"));
	light_fail_edge = "";
	fx_free(f);
}

/* What the light checks' bandwidth samples said, as coord.c feeds them:
 * n1-n2 a -> b at sample_n1n2, everything else at 10 Gbps. */
static double sample_n1n2;
static uint64_t sample_at;

static void sample_extras(Ring__Edge *e, void *arg)
{
	(void)arg;
	e->sample_ms = sample_at;
	e->sample_gbps_a_to_b =
		!strcmp(e->a, "n1") && !strcmp(e->b, "n2") ? sample_n1n2 : 10;
	e->sample_gbps_b_to_a = 10.0;
}

/* Between surveys a light check's sample under 70% of the baseline (its
 * worse direction) raises edge_degraded and a later one back above
 * resolves it, no survey needed, also when a survey raised it; the
 * survey's figure counts again once it is the newer one. */
static void test_sample_degraded(void **state)
{
	struct fx *f = fx_new(0);
	const struct alert *a;
	const Ring__Topology *t;

	(void)state;
	publish_gbps(f, 10.0); /* baselines: 10 Gbps, measured at 1000 */
	t = health_rules_topology(f->w);
	assert_true(health_rules_figure_low(f->w, edge(t, "n1", "n2"), 6.9));
	assert_false(health_rules_figure_low(f->w, edge(t, "n1", "n2"), 7.0));
	health_rules_set_edge_fn(f->w, sample_extras, NULL);
	sample_at = 2000;
	sample_n1n2 = 5.0; /* halved */
	health_rules_eval(f->w);
	a = alert_of(f, "edge_degraded", "n1-n2");
	assert_non_null(a);
	assert_string_equal(a->message,
			    "edge n1-n2 carries 5.00 Gbps (light-check "
			    "sample), 50% of its baseline 10.00 Gbps (its "
			    "first measurement); the ring's median edge is at "
			    "100% of its own");
	assert_false(firing(f, "edge_degraded", "n2-n4"));
	/* Restored: the next sample resolves it. */
	sample_at = 3000;
	sample_n1n2 = 9.5;
	health_rules_eval(f->w);
	assert_false(firing(f, "edge_degraded", "n1-n2"));
	/* Raised by a survey (its figure newer than the sample) ... */
	sample_at = 500;
	publish_gbps(f, 4.0);
	assert_true(firing(f, "edge_degraded", "n1-n2"));
	/* ... resolved by a later sample, no survey. */
	sample_at = 4000;
	health_rules_eval(f->w);
	assert_false(firing(f, "edge_degraded", "n1-n2"));
	/* One direction not sampled: the other one's figure. */
	sample_n1n2 = -1;
	health_rules_eval(f->w);
	assert_false(firing(f, "edge_degraded", "n1-n2"));
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_up),
		cmocka_unit_test(test_cable_cut_and_mended),
		cmocka_unit_test(test_carrier_without_beacons),
		cmocka_unit_test(test_node_down),
		cmocka_unit_test(test_not_surveyed),
		cmocka_unit_test(test_stray_leaves),
		cmocka_unit_test(test_mtu_and_version),
		cmocka_unit_test(test_flapping_cable),
		cmocka_unit_test(test_speed_downshift),
		cmocka_unit_test(test_cert_expiring),
		cmocka_unit_test(test_baselines),
		cmocka_unit_test(test_port_errors),
		cmocka_unit_test(test_port_errors_windows),
		cmocka_unit_test(test_gid_change),
		cmocka_unit_test(test_light_check_failed),
		cmocka_unit_test(test_sample_degraded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
