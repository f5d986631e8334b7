/* live_view: the overlay over a published ring n1-n2-n3-n4 computed from a
 * real node table (inventories with carrier, beacon tables), without the
 * health rules: each edge's live state and why, the class as the cables
 * are now, whether the rank order holds, pending nodes while
 * re-learning, the beacon grace, strays and the copy's ownership. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/live_view.h"
#include "coordinator/nodes.h"

static const char *const ring[] = {"n1", "n2", "n3", "n4"};

/* Edge k: ring[k] eth2 to ring[k+1] eth1 (the last back to n1). */
#define N 4

struct fx {
	struct nodes *table;
	struct live_view *v;
	int session;
	int carrier[N][2], hears[N][2];
	char now_text[600];
};

/* The node at the other end of node i's port p (0 eth1, 1 eth2). */
static const char *peer_of(int i, int p)
{
	return ring[p ? (i + 1) % N : (i + N - 1) % N];
}

/* Node i's facts as its agent pushes them (the table owns the copies). */
static void push(struct fx *f, int i)
{
	struct node *n = nodes_find(f->table, ring[i]);
	Ring__Inventory inv = RING__INVENTORY__INIT;
	Ring__NetInterface nif[2], *nifp[2];
	Ring__NeighbourTable nt = RING__NEIGHBOUR_TABLE__INIT;
	Ring__Neighbour nb[2], *nbp[2];
	uint8_t buf[2048];
	size_t len;

	inv.node = (char *)ring[i];
	for (int p = 0; p < 2; p++) {
		ring__net_interface__init(&nif[p]);
		nif[p].name = p ? "eth2" : "eth1";
		nif[p].admin_up = 1;
		nif[p].carrier = f->carrier[i][p];
		nif[p].mtu = 9000;
		nif[p].speed_mbps = 200000;
		nifp[p] = &nif[p];
	}
	inv.n_interfaces = 2;
	inv.interfaces = nifp;
	len = ring__inventory__pack(&inv, buf);
	nodes_set_inventory(n, ring__inventory__unpack(NULL, len, buf));
	nt.beacons_available = 1;
	for (int p = 0; p < 2; p++) {
		if (!f->hears[i][p])
			continue;
		ring__neighbour__init(&nb[nt.n_neighbours]);
		nb[nt.n_neighbours].local_interface = p ? "eth2" : "eth1";
		nb[nt.n_neighbours].remote_node = (char *)peer_of(i, p);
		nb[nt.n_neighbours].ttl_s = 4; /* a grace of 2 s */
		nbp[nt.n_neighbours] = &nb[nt.n_neighbours];
		nt.n_neighbours++;
	}
	nt.neighbours = nbp;
	len = ring__neighbour_table__pack(&nt, buf);
	nodes_set_neighbours(n, ring__neighbour_table__unpack(NULL, len, buf));
}

/* The survey's ring, every edge verified; stray: a node set apart. */
static void publish(struct fx *f, const char *stray)
{
	Ring__Topology t = RING__TOPOLOGY__INIT;
	Ring__Edge e[N], *ep[N];
	Ring__Rank r[N], *rp[N];
	Ring__StrayNode s = RING__STRAY_NODE__INIT, *sp = &s;

	t.kind = "ring";
	t.order = (char **)ring;
	t.n_order = N;
	for (int i = 0; i < N; i++) {
		ring__edge__init(&e[i]);
		e[i].a = (char *)ring[i];
		e[i].a_interface = "eth2";
		e[i].b = (char *)ring[(i + 1) % N];
		e[i].b_interface = "eth1";
		e[i].verified = 1;
		e[i].measured_ms = 500;
		ep[i] = &e[i];
		ring__rank__init(&r[i]);
		r[i].rank = (uint32_t)i;
		r[i].node = (char *)ring[i];
		rp[i] = &r[i];
	}
	t.edges = ep;
	t.n_edges = N;
	t.ranks = rp;
	t.n_ranks = N;
	if (stray) {
		s.node = (char *)stray;
		s.reason = "no_cable";
		s.text = "not cabled into the ring";
		t.strays = &sp;
		t.n_strays = 1;
	}
	assert_int_equal(live_view_set_topology(f->v, &t), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->table = nodes_new();
	f->v = live_view_new(f->table);
	assert_non_null(f->v);
	for (int i = 0; i < N; i++) {
		struct node *n = nodes_get(f->table, ring[i], 100);

		assert_non_null(n);
		n->expected = 1;
		nodes_mark_up(n, &f->session, "10.88.0.1", RING_VERSION, 1000);
		for (int p = 0; p < 2; p++)
			f->carrier[i][p] = f->hears[i][p] = 1;
		push(f, i);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	live_view_free(f->v);
	nodes_free(f->table);
	free(f);
	return 0;
}

static const Ring__Topology *eval(struct fx *f, uint64_t now_ms, int relearning)
{
	live_view_eval(f->v, now_ms, relearning, f->now_text,
		       sizeof(f->now_text));
	return live_view_published(f->v);
}

/* Edge k's cable pulled (on 0) or back: no carrier, no beacons. */
static void cable(struct fx *f, int k, int on)
{
	int a = k, b = (k + 1) % N;

	f->carrier[a][1] = f->carrier[b][0] = on;
	f->hears[a][1] = f->hears[b][0] = on;
	push(f, a);
	push(f, b);
}

static void test_before_any_topology(void **state)
{
	struct fx *f = *state;

	assert_null(eval(f, 2000, 0));
	assert_string_equal(f->now_text, "");
	assert_null(live_view_topology(f->v));
	assert_int_equal(live_view_beacon_due(f->v), 0);
	assert_int_equal(live_view_published_stray(f->v, "n1"), 0);
}

static void test_all_up(void **state)
{
	struct fx *f = *state;
	const Ring__Topology *t;

	publish(f, NULL);
	t = eval(f, 2000, 0);
	assert_non_null(t);
	for (int i = 0; i < N; i++) {
		assert_string_equal(t->edges[i]->live_state, "up");
		assert_string_equal(live_view_edge(f->v, (size_t)i)->state,
				    "up");
		/* Up since the survey measured it: no change seen. */
		assert_int_equal(t->edges[i]->live_since_ms, 500);
	}
	assert_string_equal(t->live_kind, "ring");
	assert_true(t->order_valid);
	assert_string_equal(live_view_order_invalid(f->v), "");
	assert_int_equal(t->n_live_nodes_down, 0);
	assert_int_equal(t->n_live_cables_down, 0);
	assert_int_equal(t->live_ms, 2000);
}

static void test_cable_down_makes_a_line(void **state)
{
	struct fx *f = *state;
	const Ring__Topology *t;

	publish(f, NULL);
	cable(f, 1, 0); /* n2-n3 */
	t = eval(f, 3000, 0);
	assert_string_equal(t->edges[1]->live_state, "down");
	assert_int_equal(t->edges[1]->live_since_ms, 3000);
	assert_non_null(strstr(t->edges[1]->live_reason, "no carrier"));
	assert_string_equal(t->live_kind, "line");
	assert_string_equal(t->live_gap, "n2-n3");
	assert_int_equal(t->n_live_cables_down, 1);
	assert_string_equal(t->live_cables_down[0], "n2-n3");
	assert_false(t->order_valid);
	assert_non_null(strstr(t->order_invalid, "cable n2-n3 is down"));
	assert_true(*f->now_text);

	/* Two breaks split the ring. */
	cable(f, 3, 0); /* n4-n1 */
	t = eval(f, 4000, 0);
	assert_string_equal(t->live_kind, "split");
	assert_int_equal(t->n_live_cables_down, 2);

	/* Mended: a ring again, the order holds. */
	cable(f, 1, 1);
	cable(f, 3, 1);
	t = eval(f, 5000, 0);
	assert_string_equal(t->live_kind, "ring");
	assert_true(t->order_valid);
	assert_string_equal(t->edges[1]->live_state, "up");
	assert_int_equal(t->edges[1]->live_since_ms, 5000);
}

static void test_node_down_and_relearning(void **state)
{
	struct fx *f = *state;
	const Ring__Topology *t;

	publish(f, NULL);
	nodes_mark_down(nodes_find(f->table, "n3"), "connection lost", 2500);
	t = eval(f, 3000, 0);
	/* A node down is not a missing cable: its edges unverified. */
	assert_string_equal(t->edges[1]->live_state, "unverified");
	assert_non_null(strstr(t->edges[1]->live_reason, "n3 is down"));
	assert_string_equal(t->edges[2]->live_state, "unverified");
	assert_string_equal(t->live_kind, "line");
	assert_int_equal(t->n_live_nodes_down, 1);
	assert_string_equal(t->live_nodes_down[0], "n3");
	assert_non_null(strstr(t->order_invalid, "rank 2 (n3) is down"));

	/* Re-learning after a restart: n3 has not reported yet, so it
	 * breaks neither the ring nor the order. */
	t = eval(f, 3500, 1);
	assert_non_null(
		strstr(t->edges[1]->live_reason, "n3 has not reported yet"));
	assert_string_equal(t->live_kind, "ring");
	assert_int_equal(t->n_live_nodes_down, 0);
	assert_true(t->order_valid);
}

static void test_beacon_grace(void **state)
{
	struct fx *f = *state;
	const Ring__Topology *t;

	publish(f, NULL);
	/* Carrier at both ends of n1-n2, beacons neither way. */
	f->hears[0][1] = f->hears[1][0] = 0;
	push(f, 0);
	push(f, 1);
	t = eval(f, 10000, 0);
	assert_string_equal(t->edges[0]->live_state, "unverified");
	assert_non_null(strstr(t->edges[0]->live_reason, "waiting"));
	/* TTL 4 s: half of it. */
	assert_int_equal(live_view_beacon_due(f->v), 12000);
	t = eval(f, 11999, 0);
	assert_string_equal(t->edges[0]->live_state, "unverified");
	t = eval(f, 12000, 0);
	assert_string_equal(t->edges[0]->live_state, "down");
	assert_non_null(strstr(t->edges[0]->live_reason,
			       "carrier, but no beacons either way"));
	assert_int_equal(live_view_beacon_due(f->v), 0);
}

static void fill(Ring__Edge *e, void *arg)
{
	(*(int *)arg)++;
	e->self_bytes_hour = 7;
}

static void test_strays_and_edge_fn(void **state)
{
	struct fx *f = *state;
	const Ring__Topology *t;
	struct node *n5 = nodes_get(f->table, "n5", 100);
	int calls = 0;

	assert_non_null(n5);
	nodes_mark_up(n5, &f->session, "10.88.0.5", RING_VERSION, 1000);
	publish(f, "n5");
	live_view_set_edge_fn(f->v, fill, &calls);
	t = eval(f, 2000, 0);
	assert_int_equal(calls, N);
	assert_int_equal(t->n_strays, 1);
	assert_true(live_view_published_stray(f->v, "n5"));
	assert_false(live_view_published_stray(f->v, "n1"));
	/* Read when asked: the figures are filled again. */
	t = live_view_topology(f->v);
	assert_int_equal(calls, 2 * N);
	assert_int_equal(t->edges[0]->self_bytes_hour, 7);
	/* A stray that left is no longer listed. */
	nodes_mark_down(n5, "connection lost", 2500);
	t = eval(f, 3000, 0);
	assert_int_equal(t->n_strays, 0);
	/* Replaced and cleared: the old copy given back whole (ASan). */
	publish(f, NULL);
	assert_int_equal(live_view_set_topology(f->v, NULL), 0);
	assert_null(live_view_published(f->v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_before_any_topology, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_all_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cable_down_makes_a_line,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_down_and_relearning,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_beacon_grace, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_strays_and_edge_fn, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
