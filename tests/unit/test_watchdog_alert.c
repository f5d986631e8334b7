/* The Watchdog alert in the real alert table: raised under the
 * coordinator's name as info, kept once, resolved when the interval is
 * off or the coordinator was renamed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "coordinator/alerts.h"
#include "coordinator/watchdog_alert.h"
#include "testalerts.h"

/* The firing watchdog alerts' subjects, comma-joined. */
static const char *firing(const struct alerts *t)
{
	static char buf[256];
	const struct alert *v[16];
	size_t n = alerts_list(t, 0, v, 16);

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i]->rule, "watchdog") && !v[i]->clearing) {
			assert_int_equal(v[i]->severity, ALERT_INFO);
			if (buf[0])
				strcat(buf, ",");
			strcat(buf, v[i]->subject);
		}
	return buf;
}

static void test_watchdog(void **state)
{
	struct alerts *t = testalerts_table(0);

	(void)state;
	assert_int_equal(watchdog_alert_sync(t, "c1", 60000, 1000), 0);
	assert_string_equal(firing(t), "c1");
	/* Again (a restart with the alert restored): still one. */
	assert_int_equal(watchdog_alert_sync(t, "c1", 60000, 2000), 0);
	assert_string_equal(firing(t), "c1");
	/* Renamed: the old one goes, the new one fires. */
	assert_int_equal(watchdog_alert_sync(t, "c2", 60000, 3000), 0);
	assert_string_equal(firing(t), "c2");
	/* Off: none. */
	assert_int_equal(watchdog_alert_sync(t, "c2", 0, 4000), 0);
	assert_string_equal(firing(t), "");
	alerts_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watchdog),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
