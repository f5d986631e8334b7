/* The one health: the worst firing alert (clearing ones included), else
 * relearning, else a state that is not an alert, else healthy; the cause
 * names the deciding alert or state. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "coordinator/alert_text.h"
#include "coordinator/alerts.h"
#include "coordinator/health.h"
#include "testalerts.h"

static struct health derive(const struct alerts *t, int relearning,
			    int has_topology, size_t n_ranks,
			    const char *missing)
{
	struct health_facts f = {.alerts = t,
				 .relearning = relearning,
				 .relearn_left_ms = 12000,
				 .has_topology = has_topology,
				 .kind = "split",
				 .n_ranks = n_ranks,
				 .missing = missing,
				 .n_missing = missing ? 1 : 0};
	struct health h;

	health_derive(&f, &h);
	return h;
}

static void test_order_of_causes(void **state)
{
	struct alerts *t = testalerts_table(1000);
	struct health h;

	(void)state;
	h = derive(t, 0, 1, 4, NULL);
	assert_int_equal(h.state, HEALTH_HEALTHY);
	assert_string_equal(h.cause, "");
	assert_string_equal(health_name(h.state), "healthy");
	/* States that are not alerts, the most telling first. */
	h = derive(t, 0, 0, 0, NULL);
	assert_int_equal(h.state, HEALTH_DEGRADED);
	assert_string_equal(h.cause, "no_survey");
	h = derive(t, 0, 1, 0, NULL);
	assert_string_equal(h.cause, "no_rank_order");
	assert_non_null(strstr(h.text, "split"));
	h = derive(t, 0, 1, 4, "n3");
	assert_string_equal(h.cause, "expected_missing");
	assert_string_equal(h.subject, "n3");
	/* Relearning before those: they are what it waits out. */
	h = derive(t, 1, 1, 4, "n3");
	assert_int_equal(h.state, HEALTH_RELEARNING);
	assert_string_equal(h.cause, "relearning");
	assert_non_null(strstr(h.text, "12 s"));
	/* Info alerts and the watchdog never make health. */
	assert_int_equal(alerts_raise(t, "watchdog", "c", NULL, NULL,
				      ALERT_INFO, "m", 1000),
			 0);
	assert_int_equal(alerts_raise(t, "coordinator_restarted", "coordinator",
				      NULL, NULL, ALERT_INFO, "m", 1000),
			 0);
	assert_int_equal(derive(t, 0, 1, 4, NULL).state, HEALTH_HEALTHY);
	/* A warning beats relearning; a critical beats a warning. */
	assert_int_equal(alerts_raise(t, "edge_degraded", "n1-n2", NULL,
				      "n1-n2", ALERT_WARNING, "slow", 1000),
			 0);
	h = derive(t, 1, 1, 4, NULL);
	assert_int_equal(h.state, HEALTH_DEGRADED);
	assert_string_equal(h.cause, "edge_degraded");
	assert_string_equal(h.subject, "n1-n2");
	assert_int_equal(alerts_raise(t, "cable_down", "n2-n4", NULL, "n2-n4",
				      ALERT_CRITICAL, "cable n2-n4 is down",
				      1000),
			 0);
	h = derive(t, 0, 1, 4, NULL);
	assert_int_equal(h.state, HEALTH_CRITICAL);
	assert_string_equal(h.cause, "cable_down");
	assert_int_equal(h.clearing, 0);
	assert_int_equal(h.n_firing, 2);
	alerts_free(t);
}

/* Clearing keeps the severity until the hold-down has passed, and says
 * so; then the next alert decides. */
static void test_clearing_holds(void **state)
{
	struct alerts *t = testalerts_table(1000);
	struct health h;

	(void)state;
	assert_int_equal(alerts_raise(t, "cable_down", "n2-n4", NULL, "n2-n4",
				      ALERT_CRITICAL, "cable n2-n4 is down",
				      1000),
			 0);
	alerts_clear(t, "cable_down", "n2-n4", 2000);
	h = derive(t, 0, 1, 4, NULL);
	assert_int_equal(h.state, HEALTH_CRITICAL);
	assert_int_equal(h.clearing, 1);
	assert_non_null(strstr(h.text, "clearing"));
	alerts_tick(t, 2999);
	assert_int_equal(derive(t, 0, 1, 4, NULL).state, HEALTH_CRITICAL);
	alerts_tick(t, 3000);
	assert_int_equal(derive(t, 0, 1, 4, NULL).state, HEALTH_HEALTHY);
	alerts_free(t);
}

static void test_resolved_text(void **state)
{
	struct alert a;
	char buf[200];

	(void)state;
	memset(&a, 0, sizeof(a));
	snprintf(a.rule, sizeof(a.rule), "cable_down");
	snprintf(a.subject, sizeof(a.subject), "n1-n2");
	a.first_seen_ms = 1000;
	a.cleared_ms = 35000;
	alert_text_resolved(&a, buf, sizeof(buf));
	assert_string_equal(buf, "cable n1-n2 is up again after 34 s");
	snprintf(a.rule, sizeof(a.rule), "some_new_rule");
	a.cleared_ms = 1000 + 3725000;
	alert_text_resolved(&a, buf, sizeof(buf));
	assert_string_equal(buf, "some_new_rule n1-n2 cleared after 1 h 2 min");
	alert_text_duration(850, buf, sizeof(buf));
	assert_string_equal(buf, "850 ms");
	alert_text_duration(2 * 86400000ull + 4 * 3600000ull, buf, sizeof(buf));
	assert_string_equal(buf, "2 d 4 h");
}

/* What the watchers are told of: a change of state, cause or clearing,
 * not of the text alone. */
static void test_differs(void **state)
{
	struct health a = {.state = HEALTH_DEGRADED, .cause = "no_survey"};
	struct health b = a;

	(void)state;
	snprintf(b.text, sizeof(b.text), "other words");
	assert_false(health_differs(&a, &b));
	b.clearing = 1;
	assert_true(health_differs(&a, &b));
	b = a;
	snprintf(b.cause, sizeof(b.cause), "node_down");
	assert_true(health_differs(&a, &b));
	b = a;
	b.state = HEALTH_CRITICAL;
	assert_true(health_differs(&a, &b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_of_causes),
		cmocka_unit_test(test_clearing_holds),
		cmocka_unit_test(test_resolved_text),
		cmocka_unit_test(test_differs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
