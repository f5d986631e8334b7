/* nodes: the coordinator's node table; agent_backoff_ms: reconnect delays. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "coordinator/nodes.h"

static void test_get_find_count(void **state)
{
	struct nodes *t = nodes_new();
	struct node *a, *b;

	(void)state;
	assert_null(nodes_find(t, "n1"));
	a = nodes_get(t, "n1", 10);
	assert_non_null(a);
	assert_int_equal(a->state, NODE_NEVER);
	assert_ptr_equal(nodes_get(t, "n1", 10), a);
	b = nodes_get(t, "n2", 10);
	assert_ptr_equal(nodes_find(t, "n2"), b);
	assert_int_equal(nodes_count(t), 2);
	nodes_free(t);
}

static void test_limit_and_long_names(void **state)
{
	struct nodes *t = nodes_new();
	char name[80];

	(void)state;
	assert_non_null(nodes_get(t, "a", 2));
	assert_non_null(nodes_get(t, "b", 2));
	errno = 0;
	assert_null(nodes_get(t, "c", 2));
	assert_int_equal(errno, ENOSPC);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_null(nodes_get(t, name, 100));
	assert_int_equal(errno, ENAMETOOLONG);
	nodes_free(t);
}

/* A thousand names: every one found again, listing sorted. */
static void test_many_sorted(void **state)
{
	struct nodes *t = nodes_new();
	struct node **v;
	unsigned n;
	char name[16];

	(void)state;
	for (int i = 999; i >= 0; i--) {
		snprintf(name, sizeof(name), "a%04d", i);
		assert_non_null(nodes_get(t, name, 5000));
	}
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "a%04d", i);
		assert_non_null(nodes_find(t, name));
	}
	v = nodes_sorted(t, &n);
	assert_int_equal(n, 1000);
	for (unsigned i = 1; i < n; i++)
		assert_true(strcmp(v[i - 1]->name, v[i]->name) < 0);
	free(v);
	/* The index follows removals, first, last and between. */
	assert_int_equal(nodes_remove(t, "a0000"), 0);
	assert_int_equal(nodes_remove(t, "a0999"), 0);
	assert_int_equal(nodes_remove(t, "a0500"), 0);
	assert_non_null(nodes_get(t, "a0500x", 5000));
	v = nodes_sorted(t, &n);
	assert_int_equal(n, 998);
	assert_string_equal(v[0]->name, "a0001");
	assert_string_equal(v[n - 1]->name, "a0998");
	assert_string_equal(v[499]->name, "a0500x");
	for (unsigned i = 1; i < n; i++)
		assert_true(strcmp(v[i - 1]->name, v[i]->name) < 0);
	free(v);
	nodes_free(t);
}

/* The change journal names every node added, removed, up or down, in
 * order, for the last NODES_JOURNAL changes only. */
static void test_change_journal(void **state)
{
	struct nodes *t = nodes_new();
	struct node *n;
	uint64_t c0;
	char name[16];

	(void)state;
	assert_int_equal(nodes_changes(t), 0);
	assert_null(nodes_change_name(t, 0));
	n = nodes_get(t, "n1", 10);
	assert_int_equal(nodes_changes(t), 1);
	assert_string_equal(nodes_change_name(t, 1), "n1");
	assert_null(nodes_change_name(t, 2));
	nodes_set_inventory(n, NULL); /* not a change of the table */
	assert_int_equal(nodes_changes(t), 1);
	nodes_mark_up(n, (void *)1, "10.0.0.1", "1", 1000);
	nodes_mark_down(n, "gone", 2000);
	assert_int_equal(nodes_changes(t), 3);
	assert_int_equal(nodes_remove(t, "n1"), 0);
	assert_string_equal(nodes_change_name(t, 4), "n1");
	c0 = nodes_changes(t);
	for (int i = 0; i < NODES_JOURNAL + 1; i++) {
		snprintf(name, sizeof(name), "x%d", i);
		assert_non_null(nodes_get(t, name, 1000));
	}
	assert_null(nodes_change_name(t, c0 + 1)); /* fell out */
	assert_string_equal(nodes_change_name(t, c0 + 2), "x1");
	assert_string_equal(nodes_change_name(t, nodes_changes(t)), "x64");
	nodes_free(t);
}

static void test_up_down_remove(void **state)
{
	struct nodes *t = nodes_new();
	struct node *n = nodes_get(t, "n1", 10);
	int session;

	(void)state;
	nodes_mark_up(n, &session, "10.0.0.1", "1.2", 1000);
	assert_int_equal(n->state, NODE_UP);
	assert_string_equal(n->mgmt_address, "10.0.0.1");
	assert_int_equal(n->connected_since_ms, 1000);
	assert_int_equal(nodes_remove(t, "n1"), -1);
	assert_int_equal(errno, EBUSY);
	nodes_mark_down(n, "connection closed by agent", 2000);
	assert_int_equal(n->state, NODE_DOWN);
	assert_null(n->session);
	assert_int_equal(n->connected_since_ms, 0);
	assert_int_equal(n->down_since_ms, 2000);
	assert_string_equal(nodes_state_name(n->state), "down");
	assert_int_equal(nodes_remove(t, "n1"), 0);
	assert_null(nodes_find(t, "n1"));
	assert_int_equal(nodes_remove(t, "n1"), -1);
	assert_int_equal(errno, ENOENT);
	nodes_free(t);
}

/* Status counts data interfaces (not management) and lists the ones with
 * carrier and no address. */
static void test_fill_status(void **state)
{
	struct nodes *t = nodes_new();
	struct node *n = nodes_get(t, "n1", 10);
	Ring__Inventory *inv = calloc(1, sizeof(*inv));
	Ring__Memory *mem = calloc(1, sizeof(*mem));
	Ring__NodeStatus st = RING__NODE_STATUS__INIT;
	const char *names[] = {"mgmt0", "eth1", "eth2", "eth3"};
	char *unaddr[4];

	(void)state;
	ring__inventory__init(inv);
	ring__memory__init(mem);
	mem->total_kib = 100;
	mem->available_kib = 50;
	inv->memory = mem;
	inv->n_interfaces = 4;
	inv->interfaces = calloc(4, sizeof(*inv->interfaces));
	for (int i = 0; i < 4; i++) {
		Ring__NetInterface *f = calloc(1, sizeof(*f));

		ring__net_interface__init(f);
		f->name = strdup(names[i]);
		f->management = i == 0;
		f->up_no_address = i == 3;
		inv->interfaces[i] = f;
	}
	n->expected = 1;
	n->last_seen_ms = 1764000000000ull;
	nodes_set_inventory(n, inv);
	assert_int_equal(n->mem_available_kib, 50);
	nodes_fill_status(n, &st, unaddr);
	/* When the figure arrived: what plan reports as measured when. */
	assert_int_equal(st.mem_available_kib, 50);
	assert_int_equal(st.mem_available_ms, 1764000000000ull);
	assert_string_equal(st.node, "n1");
	assert_true(st.expected);
	assert_string_equal(st.state, "never");
	assert_int_equal(st.n_interfaces, 3);
	assert_int_equal(st.n_unaddressed_up, 1);
	assert_string_equal(st.unaddressed_up[0], "eth3");
	assert_int_equal(st.mem_total_kib, 100);
	nodes_free(t); /* frees the inventory too */
}

static void test_backoff(void **state)
{
	(void)state;
	assert_int_equal(agent_backoff_ms(1000, 60000, 0), 1000);
	assert_int_equal(agent_backoff_ms(1000, 60000, 1), 2000);
	assert_int_equal(agent_backoff_ms(1000, 60000, 5), 32000);
	assert_int_equal(agent_backoff_ms(1000, 60000, 6), 60000);
	assert_int_equal(agent_backoff_ms(1000, 60000, 63), 60000);
	assert_int_equal(agent_backoff_ms(0, 10, 0), 1);
	assert_int_equal(agent_backoff_ms(500, 500, 3), 500);
}

/* One port's sample in a counters report. */
struct sample {
	uint64_t rx_errors, rx_dropped, tx_dropped, carrier_changes;
	int carrier, listening;
};

/* A counters report of eth1 through the wire (nodes_set_counters frees
 * it as unpacked); port_state 0 is an agent from before carrier was
 * reported. Returns eth1's rise. */
static const struct node_port_rise *report(struct node *n, int port_state,
					   const struct sample *s,
					   uint64_t interval_ms,
					   uint64_t now_ms)
{
	Ring__PortCounters p = RING__PORT_COUNTERS__INIT, *pp = &p;
	Ring__CountersReport r = RING__COUNTERS_REPORT__INIT;
	uint8_t buf[256];
	size_t len;

	p.interface = "eth1";
	p.rx_errors = s->rx_errors;
	p.rx_dropped = s->rx_dropped;
	p.tx_dropped = s->tx_dropped;
	if (port_state) {
		p.carrier_changes = s->carrier_changes;
		p.carrier = s->carrier;
		p.listening = s->listening;
	}
	r.interval_ms = interval_ms;
	r.port_state = port_state;
	r.n_ports = 1;
	r.ports = &pp;
	len = ring__counters_report__get_packed_size(&r);
	assert_true(len <= sizeof(buf));
	ring__counters_report__pack(&r, buf);
	nodes_set_counters(n, ring__counters_report__unpack(NULL, len, buf),
			   now_ms);
	assert_non_null(n->counters_rise);
	return &n->counters_rise[0];
}

/* Carrier and the agent throughout: a rise is judged and raises, every
 * counter of it, rx_dropped included. */
static void test_window_steady(void **state)
{
	struct nodes *t = nodes_new();
	struct node *n = nodes_get(t, "n1", 10);
	struct sample s = {.carrier_changes = 2, .carrier = 1, .listening = 1};
	const struct node_port_rise *r;
	int session;

	(void)state;
	nodes_mark_up(n, &session, "10.0.0.1", "1", 1000);
	r = report(n, 1, &s, 0, 2000);
	assert_int_equal(r->window, NODE_WINDOW_NONE);
	s.rx_errors = 5;
	s.rx_dropped = 3;
	s.tx_dropped = 1;
	assert_int_equal(nodes_rising_count(t), 0);
	r = report(n, 1, &s, 1000, 3000);
	assert_int_equal(r->window, NODE_WINDOW_JUDGED);
	assert_true(nodes_port_rising(r));
	assert_int_equal(r->rx_errors, 5);
	assert_int_equal(r->rx_dropped, 3);
	assert_int_equal(r->tx_dropped, 1);
	assert_int_equal(r->rx_dropped_unjudged, 0);
	/* The table counts the node while its last report rises. */
	assert_int_equal(nodes_rising_count(t), 1);
	r = report(n, 1, &s, 1000, 4000);
	assert_false(nodes_port_rising(r));
	assert_int_equal(nodes_rising_count(t), 0);
	s.rx_errors = 6;
	report(n, 1, &s, 1000, 5000);
	assert_int_equal(nodes_rising_count(t), 1);
	nodes_mark_down(n, "gone", 6000);
	assert_int_equal(nodes_remove(t, "n1"), 0);
	assert_int_equal(nodes_rising_count(t), 0);
	nodes_free(t);
}

/* An agent restart: the beacons that arrived meanwhile count as
 * rx_dropped, seen by the first report of the new session. That window
 * spans the reconnect: not judged. The next one is, and a real rise in it
 * raises. An agent's first sample (interval 0) starts a window too. */
static void test_window_reconnect(void **state)
{
	struct nodes *t = nodes_new();
	struct node *n = nodes_get(t, "n1", 10);
	struct sample s = {.rx_dropped = 10,
			   .carrier_changes = 2,
			   .carrier = 1,
			   .listening = 1};
	const struct node_port_rise *r;
	int session;

	(void)state;
	nodes_mark_up(n, &session, "10.0.0.1", "1", 1000);
	report(n, 1, &s, 0, 2000);
	report(n, 1, &s, 1000, 3000);
	nodes_mark_down(n, "connection closed by agent", 3500);
	nodes_mark_up(n, &session, "10.0.0.1", "1", 50000);
	s.rx_dropped = 41;
	r = report(n, 1, &s, 1000, 51000);
	assert_int_equal(r->window, NODE_WINDOW_SESSION);
	assert_false(nodes_port_rising(r));
	assert_int_equal(r->rx_dropped, 0);
	r = report(n, 1, &s, 1000, 52000);
	assert_int_equal(r->window, NODE_WINDOW_JUDGED);
	assert_false(nodes_port_rising(r));
	s.rx_errors = 2;
	r = report(n, 1, &s, 1000, 53000);
	assert_int_equal(r->window, NODE_WINDOW_JUDGED);
	assert_int_equal(r->rx_errors, 2);
	/* A new agent process's first sample, whatever the session. */
	s.rx_errors = 9;
	r = report(n, 1, &s, 0, 54000);
	assert_int_equal(r->window, NODE_WINDOW_SESSION);
	assert_false(nodes_port_rising(r));
	nodes_free(t);
}

/* A cut and a mend: the frame sent into the port without carrier counts
 * as tx_dropped. No window with the carrier down at a sample or with
 * carrier_changes moved is judged; the first one after with carrier at
 * both ends and no change is, and raises a real rise. */
static void test_window_carrier(void **state)
{
	struct nodes *t = nodes_new();
	struct node *n = nodes_get(t, "n1", 10);
	struct sample s = {.carrier_changes = 2, .carrier = 1, .listening = 1};
	const struct node_port_rise *r;
	int session;

	(void)state;
	nodes_mark_up(n, &session, "10.0.0.1", "1", 1000);
	report(n, 1, &s, 0, 2000);
	/* Cut: carrier down at the sample. */
	s.carrier_changes = 3;
	s.carrier = 0;
	s.listening = 0;
	s.tx_dropped = 1;
	r = report(n, 1, &s, 1000, 3000);
	assert_int_equal(r->window, NODE_WINDOW_CARRIER);
	assert_false(nodes_port_rising(r));
	/* Still cut: no carrier at either sample. */
	s.tx_dropped = 2;
	r = report(n, 1, &s, 1000, 4000);
	assert_int_equal(r->window, NODE_WINDOW_CARRIER);
	assert_false(nodes_port_rising(r));
	/* Mended: carrier again, but it changed since the last sample. */
	s.carrier_changes = 4;
	s.carrier = 1;
	s.listening = 1;
	s.rx_dropped = 3;
	r = report(n, 1, &s, 1000, 5000);
	assert_int_equal(r->window, NODE_WINDOW_CARRIER);
	assert_false(nodes_port_rising(r));
	/* Down and up within one window: carrier at both samples, yet the
	 * count moved. */
	s.carrier_changes = 6;
	s.tx_dropped = 3;
	r = report(n, 1, &s, 1000, 6000);
	assert_int_equal(r->window, NODE_WINDOW_CARRIER);
	assert_false(nodes_port_rising(r));
	/* A transition while the sample was read: carrier reported false. */
	s.carrier = 0;
	s.tx_dropped = 4;
	r = report(n, 1, &s, 1000, 7000);
	assert_int_equal(r->window, NODE_WINDOW_CARRIER);
	s.carrier = 1;
	r = report(n, 1, &s, 1000, 8000);
	assert_int_equal(r->window, NODE_WINDOW_CARRIER);
	/* Steady again: judged, quiet, then a real rise raises. */
	r = report(n, 1, &s, 1000, 9000);
	assert_int_equal(r->window, NODE_WINDOW_JUDGED);
	assert_false(nodes_port_rising(r));
	s.tx_dropped = 10;
	r = report(n, 1, &s, 1000, 10000);
	assert_int_equal(r->window, NODE_WINDOW_JUDGED);
	assert_int_equal(r->tx_dropped, 6);
	assert_true(nodes_port_rising(r));
	nodes_free(t);
}

/* Without the agent's beacon receiver bound at both samples, rx_dropped
 * may be beacons that met no receiver: left out; the other counters are
 * still judged. */
static void test_window_not_listening(void **state)
{
	struct nodes *t = nodes_new();
	struct node *n = nodes_get(t, "n1", 10);
	struct sample s = {.carrier_changes = 2, .carrier = 1};
	const struct node_port_rise *r;
	int session;

	(void)state;
	nodes_mark_up(n, &session, "10.0.0.1", "1", 1000);
	report(n, 1, &s, 0, 2000);
	s.rx_dropped = 7;
	r = report(n, 1, &s, 1000, 3000);
	assert_int_equal(r->window, NODE_WINDOW_JUDGED);
	assert_false(nodes_port_rising(r));
	assert_int_equal(r->rx_dropped_unjudged, 1);
	s.rx_dropped = 9;
	s.rx_errors = 1;
	r = report(n, 1, &s, 1000, 4000);
	assert_true(nodes_port_rising(r));
	assert_int_equal(r->rx_errors, 1);
	assert_int_equal(r->rx_dropped, 0);
	/* Listening from one sample on: the window after is judged whole. */
	s.listening = 1;
	report(n, 1, &s, 1000, 5000);
	s.rx_dropped = 12;
	r = report(n, 1, &s, 1000, 6000);
	assert_int_equal(r->rx_dropped, 3);
	assert_int_equal(r->rx_dropped_unjudged, 0);
	nodes_free(t);
}

/* An inventory of eth1 with the given carrier (owned by the caller). */
static Ring__Inventory *inventory_eth1(int carrier)
{
	Ring__Inventory *inv = calloc(1, sizeof(*inv));
	Ring__NetInterface *f = calloc(1, sizeof(*f));

	assert_non_null(inv);
	assert_non_null(f);
	ring__inventory__init(inv);
	ring__net_interface__init(f);
	f->name = strdup("eth1");
	f->carrier = carrier;
	inv->interfaces = calloc(1, sizeof(*inv->interfaces));
	assert_non_null(inv->interfaces);
	inv->interfaces[0] = f;
	inv->n_interfaces = 1;
	return inv;
}

/* An agent that reports no carrier: a carrier change among its
 * inventories between two reports, or no carrier now, is a new window. */
static void test_window_older_agent(void **state)
{
	struct nodes *t = nodes_new();
	struct node *n = nodes_get(t, "n1", 10);
	struct sample s = {0};
	const struct node_port_rise *r;
	int session;

	(void)state;
	nodes_mark_up(n, &session, "10.0.0.1", "1", 1000);
	nodes_set_inventory(n, inventory_eth1(1));
	report(n, 0, &s, 0, 2000);
	nodes_set_inventory(n, inventory_eth1(0));
	s.tx_dropped = 1;
	r = report(n, 0, &s, 1000, 3000);
	assert_int_equal(r->window, NODE_WINDOW_CARRIER);
	nodes_set_inventory(n, inventory_eth1(1));
	r = report(n, 0, &s, 1000, 4000);
	assert_int_equal(r->window, NODE_WINDOW_CARRIER);
	s.rx_dropped = 4;
	r = report(n, 0, &s, 1000, 5000);
	assert_int_equal(r->window, NODE_WINDOW_JUDGED);
	assert_int_equal(r->rx_dropped, 4);
	nodes_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_find_count),
		cmocka_unit_test(test_limit_and_long_names),
		cmocka_unit_test(test_many_sorted),
		cmocka_unit_test(test_change_journal),
		cmocka_unit_test(test_up_down_remove),
		cmocka_unit_test(test_fill_status),
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_window_steady),
		cmocka_unit_test(test_window_reconnect),
		cmocka_unit_test(test_window_carrier),
		cmocka_unit_test(test_window_not_listening),
		cmocka_unit_test(test_window_older_agent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
