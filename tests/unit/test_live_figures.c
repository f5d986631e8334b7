/* An edge's moving figures from a real survey: ringd's own bytes over the
 * pair in the last hour (from the account as the store reads it back),
 * and, before any light check, no latency, no samples, no error. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <event2/event.h>
#include <string.h>

#include "coordinator/coord_conf.h"
#include "coordinator/live_figures.h"
#include "coordinator/nodes.h"
#include "coordinator/survey.h"
#include "testcall.h"

static void test_fill(void **state)
{
	struct event_base *base = event_base_new();
	struct nodes *table = nodes_new();
	struct coord_conf conf;
	struct tc tc;
	struct survey *sv;
	Ring__Edge e = RING__EDGE__INIT;
	uint64_t now = 100 * 60000ULL;
	const char acct[] = "n1 n2 99 1000\n"
			    "n1 n2 98 500\n"
			    "n1 n2 10 7\n"; /* over an hour ago */

	(void)state;
	assert_non_null(base);
	assert_non_null(table);
	tc_init(&tc, table);
	coord_conf_defaults(&conf);
	conf.survey_interval_ms = 0;
	sv = survey_new(base, &conf, table, &tc.ci);
	assert_non_null(sv);
	survey_self_bytes_load(sv, acct, sizeof(acct) - 1, now);
	e.a = "n1";
	e.b = "n2";
	e.light_ms = 77;
	e.sample_gbps_a_to_b = 5;
	live_figures_fill(sv, &e, now);
	assert_int_equal(e.self_bytes_hour, 1500);
	assert_int_equal(e.light_ms, 0);
	assert_int_equal(e.light_started_ms, 0);
	assert_true(e.light_lat_p50_us < 0);
	assert_string_equal(e.light_error, "");
	assert_true(e.sample_gbps_a_to_b < 0);
	assert_true(e.sample_gbps_b_to_a < 0);
	assert_int_equal(e.sample_ms, 0);
	survey_free(sv);
	tc_release(&tc);
	nodes_free(table);
	event_base_free(base);
	coord_conf_free(&conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
