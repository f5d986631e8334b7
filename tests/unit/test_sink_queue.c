/* The sinks' bounded queue: oldest first, a full queue drops its oldest
 * and counts it, max 0 counts as 1, the Watchdog and same-alert lookups,
 * removal from the middle; and the words every sink says. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/sink.h"

static struct sink_item *item(const char *rule, const char *subject,
			      int watchdog)
{
	struct sink_item it, *c;

	memset(&it, 0, sizeof(it));
	snprintf(it.a.rule, sizeof(it.a.rule), "%s", rule);
	snprintf(it.a.subject, sizeof(it.a.subject), "%s", subject);
	it.watchdog = watchdog;
	c = sink_item_copy(&it);
	assert_non_null(c);
	return c;
}

static void test_bounded(void **state)
{
	struct sink_queue q;
	struct sink_counts counts = {0};
	struct sink_item *it;

	(void)state;
	sink_queue_init(&q, "test", 2);
	sink_queue_put(&q, item("a", "1", 0), &counts);
	sink_queue_put(&q, item("b", "1", 0), &counts);
	sink_queue_put(&q, item("c", "1", 0), &counts);
	assert_int_equal(q.n, 2);
	assert_int_equal(counts.dropped, 1);
	it = sink_queue_take(&q);
	assert_string_equal(it->a.rule, "b");
	free(it);
	it = sink_queue_take(&q);
	assert_string_equal(it->a.rule, "c");
	free(it);
	assert_null(sink_queue_take(&q));
	assert_int_equal(q.burst, 0);
	/* 0 counts as 1. */
	sink_queue_init(&q, "test", 0);
	sink_queue_put(&q, item("a", "1", 0), &counts);
	sink_queue_put(&q, item("b", "1", 0), &counts);
	assert_int_equal(q.n, 1);
	assert_int_equal(counts.dropped, 2);
	sink_queue_clear(&q);
	assert_int_equal(q.n, 0);
}

static void test_lookups(void **state)
{
	struct sink_queue q;
	struct sink_counts counts = {0};
	struct sink_item *w = item("watchdog", "c1", 1), *x,
			 *probe = item("node_down", "n1", 0);

	(void)state;
	sink_queue_init(&q, "test", 8);
	assert_false(sink_queue_has_watchdog(&q));
	sink_queue_put(&q, item("node_down", "n1", 0), &counts);
	sink_queue_put(&q, w, &counts);
	x = item("node_down", "n2", 0);
	sink_queue_put(&q, x, &counts);
	assert_true(sink_queue_has_watchdog(&q));
	assert_true(sink_queue_has_key(&q, probe));
	sink_queue_remove(&q, w);
	free(w);
	assert_false(sink_queue_has_watchdog(&q));
	assert_int_equal(q.n, 2);
	snprintf(probe->a.subject, sizeof(probe->a.subject), "n3");
	assert_false(sink_queue_has_key(&q, probe));
	free(probe);
	sink_queue_clear(&q);
}

static void test_words(void **state)
{
	struct sink_item it;

	(void)state;
	memset(&it, 0, sizeof(it));
	snprintf(it.a.message, sizeof(it.a.message), "n1 down");
	assert_string_equal(sink_event_name(ALERT_EV_FIRED), "fired");
	assert_string_equal(sink_event_name(ALERT_EV_RESOLVED), "resolved");
	assert_string_equal(sink_event_name(ALERT_EV_CHANGED), "changed");
	it.ev = ALERT_EV_FIRED;
	assert_string_equal(sink_state(&it), "firing");
	assert_string_equal(sink_text(&it.a, it.ev), "n1 down");
	it.ev = ALERT_EV_RESOLVED;
	assert_string_equal(sink_state(&it), "resolved");
	/* No resolution text: the firing one. */
	assert_string_equal(sink_text(&it.a, it.ev), "n1 down");
	snprintf(it.a.resolved_message, sizeof(it.a.resolved_message),
		 "n1 up after 5 s");
	assert_string_equal(sink_text(&it.a, it.ev), "n1 up after 5 s");
	snprintf(it.report, sizeof(it.report), "degraded");
	assert_string_equal(sink_state(&it), "degraded");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
