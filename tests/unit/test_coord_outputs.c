/* The health report's tick on a real alert and node table: the line is
 * logged and the counts since the last report start again; no
 * alert_command (sinks absent) is no error. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "coordinator/alerts.h"
#include "coordinator/coord.h"
#include "coordinator/coord_outputs.h"

static void test_report_tick(void **state)
{
	struct alerts_conf ac = {.hold_down_ms = 0,
				 .max_resolved = 16,
				 .keep_resolved_ms = 3600000,
				 .max_firing = 16};
	struct coord_conf conf;
	struct coord co;

	(void)state;
	memset(&co, 0, sizeof(co));
	coord_conf_defaults(&conf);
	conf.health_report_command = 1;
	co.conf = &conf;
	co.nodes = co.hview.nodes = nodes_new();
	co.alerts = alerts_new(&ac, NULL, NULL);
	co.hview.alerts = co.alerts;
	assert_non_null(co.nodes);
	assert_non_null(co.alerts);
	co.fired = 3;
	co.resolved = 2;
	coord_outputs_report(-1, 0, &co);
	assert_int_equal(co.fired, 0);
	assert_int_equal(co.resolved, 0);
	/* No survey yet: the one health says so. */
	assert_int_equal(co.health.state, HEALTH_DEGRADED);
	assert_string_equal(co.health.cause, "no_survey");
	alerts_free(co.alerts);
	nodes_free(co.nodes);
	coord_conf_free(&conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_tick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
