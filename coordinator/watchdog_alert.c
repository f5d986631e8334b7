/* The Watchdog alert in the table (watchdog_alert.h). */
#include "watchdog_alert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int watchdog_alert_sync(struct alerts *alerts, const char *name,
			uint64_t interval_ms, uint64_t now_ms)
{
	size_t n = alerts_list(alerts, 0, NULL, 0);
	const struct alert **v = calloc(n ? n : 1, sizeof(*v));
	char(*stale)[ALERTS_SUBJECT_LEN] = calloc(n ? n : 1, sizeof(*stale));
	char msg[ALERTS_MESSAGE_LEN];
	size_t k = 0;
	int r = 0;

	if (!v || !stale) {
		log_warnx("watchdog alert: out of memory");
		r = -1;
		goto cleanup;
	}
	/* Copied first: clearing changes the list. */
	n = alerts_list(alerts, 0, v, n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i]->rule, "watchdog") &&
		    (strcmp(v[i]->subject, name) || !interval_ms))
			snprintf(stale[k++], sizeof(stale[0]), "%s",
				 v[i]->subject);
	for (size_t i = 0; i < k; i++)
		alerts_clear(alerts, "watchdog", stale[i], now_ms);
	if (!interval_ms)
		goto cleanup;
	snprintf(msg, sizeof(msg),
		 "ring-coordinator %s is running: this alert always fires, so "
		 "that its absence says the monitor is down",
		 name);
	if (alerts_raise(alerts, "watchdog", name, NULL, NULL, ALERT_INFO, msg,
			 now_ms) < 0) {
		log_warn("watchdog alert");
		r = -1;
	}
cleanup:
	free(v);
	free(stale);
	return r;
}
