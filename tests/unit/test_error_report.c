#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl/error_report.h"
#include "ringctl/help.h"
#include "testwriter.h"

/* ringctl's error reports (ringctl/error_report.c): plain as the text
 * always read, JSON one object per line with its fields, written at once;
 * a notice held for its exit status or the error after it. */

static struct testwriter tw;

static void start(enum writer_format fmt)
{
	error_report_setup(testwriter_stream(&tw));
	error_report_set_format(fmt);
	error_report_command(NULL, NULL);
}

static char *stop(void)
{
	error_report_setup(stderr);
	error_report_set_format(WRITER_PLAIN);
	return testwriter_close(&tw);
}

static void test_plain(void **state)
{
	char *s;

	(void)state;
	start(WRITER_PLAIN);
	assert_int_equal(error_report(2, "unreachable", "/run/x.sock",
				      "-s SOCKET", "%s: %s", "/run/x.sock",
				      "No such file or directory"),
			 2);
	/* A control byte an agent sent does not reach the terminal. */
	error_report(1, NULL, NULL, NULL, "coordinator: a\033[2Jb\nnext");
	s = stop();
	assert_string_equal(s, "ringctl: /run/x.sock: No such file or "
			       "directory\n"
			       "ringctl: coordinator: a\\x1b[2Jb\nnext\n");
	free(s);
	/* keyvalue reads the same. */
	start(WRITER_KEYVALUE);
	error_report(2, "refused", NULL, NULL, "coordinator: busy");
	s = stop();
	assert_string_equal(s, "ringctl: coordinator: busy\n");
	free(s);
}

static void test_json(void **state)
{
	char *s;

	(void)state;
	start(WRITER_JSON);
	error_report(2, "unknown_node", "n9", "one of the known nodes",
		     "coordinator: no node 'n9'; known nodes: n1, n2");
	s = stop();
	assert_string_equal(
		s, "{\"error\": {\"code\": \"unknown_node\",\"value\": \"n9\","
		   "\"fix\": \"one of the known nodes\",\"message\": "
		   "\"coordinator: no node 'n9'; known nodes: n1, n2\","
		   "\"command\": null,\"exit_status\": 2}}\n");
	free(s);
	/* Exit status 1: a notice; no value or fix: left out. */
	start(WRITER_JSON);
	error_report(1, "order_invalid", NULL, NULL, "a \"quoted\"\nline");
	s = stop();
	assert_string_equal(s, "{\"notice\": {\"code\": \"order_invalid\","
			       "\"message\": \"a \\\"quoted\\\"\\nline\","
			       "\"command\": null,\"exit_status\": 1}}\n");
	free(s);
	assert_true(error_report_count() >= 2);
}

static void test_usage(void **state)
{
	char *argv[] = {"test", "bw"};
	const struct help_cmd *c;
	int used = 0;
	char *s;

	(void)state;
	c = help_find(2, argv, &used);
	assert_non_null(c);
	start(WRITER_PLAIN);
	error_report_command(c, NULL);
	assert_int_equal(error_report_usage("unexpected argument '%s'", "x"),
			 2);
	s = stop();
	assert_true(!strncmp(s,
			     "ringctl: unexpected argument 'x'\nusage: "
			     "ringctl test bw A B",
			     strlen("ringctl: unexpected argument 'x'\nusage: "
				    "ringctl test bw A B")));
	free(s);
	start(WRITER_JSON);
	error_report_command(c, NULL);
	error_report_usage("unexpected argument '%s'", "x");
	s = stop();
	assert_non_null(strstr(s, "{\"error\": {\"code\": \"usage\","));
	assert_non_null(strstr(s, "\"command\": \"test bw\","));
	assert_non_null(strstr(s, "\"usage\": \"usage: ringctl test bw A B"));
	assert_int_equal(strchr(s, '\n') - s, (long)strlen(s) - 1);
	free(s);
}

static void test_notice(void **state)
{
	char *s;

	(void)state;
	/* Plain: at once. */
	start(WRITER_PLAIN);
	error_report_notice("survey_started", "survey started");
	error_report_end(0, NULL, 0);
	s = stop();
	assert_string_equal(s, "ringctl: survey started\n");
	free(s);
	/* JSON: held for the exit status. */
	start(WRITER_JSON);
	error_report_notice("survey_started", "survey started");
	assert_int_equal(ftell(tw.f), 0);
	error_report_end(1, NULL, 0);
	s = stop();
	assert_string_equal(s, "{\"notice\": {\"code\": \"survey_started\","
			       "\"message\": \"survey started\",\"command\": "
			       "null,\"exit_status\": 1}}\n");
	free(s);
	/* An error after it: one report, the notice first. */
	start(WRITER_JSON);
	error_report_notice("survey_started", "survey started");
	error_report(2, "timeout", NULL, NULL, "survey not done within 3600 s");
	error_report_end(2, NULL, 0);
	s = stop();
	assert_non_null(strstr(s, "\"message\": \"survey started\\nsurvey "
				  "not done within 3600 s\""));
	assert_int_equal(strchr(s, '\n') - s, (long)strlen(s) - 1);
	free(s);
}

/* What other code wrote to stderr under -f json: one report at exit,
 * its "ringctl: " prefixes gone. */
static void test_end_gathered(void **state)
{
	static const char text[] = "ringctl: no node or edge 'x'\n"
				   "ringctl: second\n";
	char *s;

	(void)state;
	start(WRITER_JSON);
	error_report_end(2, text, strlen(text));
	s = stop();
	assert_non_null(
		strstr(s, "\"message\": \"no node or edge 'x'\\nsecond\""));
	assert_non_null(strstr(s, "\"exit_status\": 2}}\n"));
	free(s);
	/* Plain: nothing to do there (the lines went out as written). */
	start(WRITER_PLAIN);
	error_report_end(2, text, strlen(text));
	s = stop();
	assert_string_equal(s, "");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_notice),
		cmocka_unit_test(test_end_gathered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
