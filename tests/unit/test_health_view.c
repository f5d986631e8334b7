/* The health's facts gathered from the real node table and alert table:
 * the first expected node that is not up is named and all are counted,
 * an unexpected node down is not a fact, the topology's class and rank
 * order are read, no topology is no survey; with no watch and no survey
 * yet, no topology and no relearning. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "coordinator/alerts.h"
#include "coordinator/health_view.h"
#include "coordinator/nodes.h"
#include "testalerts.h"

static void expect(struct nodes *t, const char *name, int up)
{
	struct node *n = nodes_get(t, name, UINT32_MAX);

	assert_non_null(n);
	n->expected = 1;
	if (up)
		nodes_mark_up(n, (void *)n, "10.0.0.1", "test", 1000);
}

static void test_missing_nodes(void **state)
{
	struct nodes *t = nodes_new();
	struct alerts *a = testalerts_table(1000);
	struct health_facts f;
	struct node *stray;

	(void)state;
	assert_non_null(t);
	health_view_facts(t, a, NULL, &f);
	assert_int_equal(f.n_missing, 0);
	assert_null(f.missing);
	assert_false(f.has_topology);
	assert_ptr_equal(f.alerts, a);
	expect(t, "n3", 0);
	expect(t, "n1", 1);
	expect(t, "n2", 0);
	/* Not expected, and down: not a fact for the health. */
	stray = nodes_get(t, "n0", UINT32_MAX);
	assert_non_null(stray);
	health_view_facts(t, a, NULL, &f);
	assert_int_equal(f.n_missing, 2);
	/* In name order, the first. */
	assert_string_equal(f.missing, "n2");
	alerts_free(a);
	nodes_free(t);
}

static void test_topology_and_derive(void **state)
{
	struct nodes *t = nodes_new();
	struct alerts *a = testalerts_table(1000);
	Ring__Topology topo = RING__TOPOLOGY__INIT;
	Ring__Rank r1 = RING__RANK__INIT, r2 = RING__RANK__INIT;
	Ring__Rank *ranks[2] = {&r1, &r2};
	struct health_view v = {.nodes = t, .alerts = a};
	struct health_facts f;
	struct health h;

	(void)state;
	topo.kind = "pair";
	topo.n_ranks = 2;
	topo.ranks = ranks;
	health_view_facts(t, a, &topo, &f);
	assert_true(f.has_topology);
	assert_string_equal(f.kind, "pair");
	assert_int_equal(f.n_ranks, 2);
	/* No watch and no survey yet: no topology, no relearning, so the
	 * health says no survey. */
	assert_null(health_view_topology(&v));
	health_view_derive(&v, 5000, &h);
	assert_int_equal(h.state, HEALTH_DEGRADED);
	assert_string_equal(h.cause, "no_survey");
	/* An alert decides before the states that are not alerts. */
	assert_int_equal(alerts_raise(a, "node_down", "n1", "n1", NULL,
				      ALERT_CRITICAL, "n1 down", 5000),
			 0);
	health_view_derive(&v, 5000, &h);
	assert_int_equal(h.state, HEALTH_CRITICAL);
	assert_string_equal(h.cause, "node_down");
	alerts_free(a);
	nodes_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_nodes),
		cmocka_unit_test(test_topology_and_derive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
