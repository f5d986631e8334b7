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

#include "agent.h"
#include "nodes.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_find_count),
		cmocka_unit_test(test_limit_and_long_names),
		cmocka_unit_test(test_many_sorted),
		cmocka_unit_test(test_up_down_remove),
		cmocka_unit_test(test_fill_status),
		cmocka_unit_test(test_backoff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
