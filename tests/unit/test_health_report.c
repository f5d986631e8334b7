/* The health report's line: the health's word, the ring now in words (or
 * no survey yet), each edge's live state ("unknown" before the overlay
 * says), the firing count and the transitions since the last report. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "coordinator/health_report.h"

static void test_no_survey(void **state)
{
	struct health h = {.state = HEALTH_DEGRADED};
	char line[HEALTH_REPORT_LEN];

	(void)state;
	health_report_line(&h, NULL, 0, 2, 1, line, sizeof(line));
	assert_string_equal(line,
			    "health report: degraded; no survey yet; edges: "
			    "none; 0 alerts firing; since the last report 2 "
			    "fired, 1 resolved");
}

static void test_edges(void **state)
{
	struct health h = {.state = HEALTH_HEALTHY};
	Ring__Topology t = RING__TOPOLOGY__INIT;
	Ring__Edge e1 = RING__EDGE__INIT, e2 = RING__EDGE__INIT;
	Ring__Edge *ev[2] = {&e1, &e2};
	char line[HEALTH_REPORT_LEN];

	(void)state;
	e1.a = "n1";
	e1.b = "n2";
	e1.live_state = "up";
	e2.a = "n2";
	e2.b = "n3";
	t.kind = "line";
	t.live_kind = "line";
	t.n_edges = 2;
	t.edges = ev;
	health_report_line(&h, &t, 3, 0, 0, line, sizeof(line));
	assert_non_null(strstr(line, "health report: healthy; now "));
	assert_non_null(strstr(line, "; edges: n1-n2 up, n2-n3 unknown; 3 "
				     "alerts firing; since the last report 0 "
				     "fired, 0 resolved"));
	/* A short buffer is cut, never overrun. */
	health_report_line(&h, &t, 3, 0, 0, line, 20);
	assert_int_equal(strlen(line), 19);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_survey),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
