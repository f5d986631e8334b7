/* The Watchdog convention's alert (watchdog_interval): one info alert,
 * rule "watchdog", subject the coordinator's name, firing for as long as
 * the coordinator runs, so that its absence downstream says the monitor is
 * down. It lives in the table (ringctl alerts, Alertmanager's resends);
 * health leaves it out. A watchdog alert under another name (renamed) or
 * with the interval off is resolved. */
#ifndef RING_WATCHDOG_ALERT_H
#define RING_WATCHDOG_ALERT_H

#include <stdint.h>

#include "alerts.h"

/* The table's watchdog alerts made to match name and interval_ms (0: off)
 * at now_ms. 0, or -1 (logged) when it could not. */
int watchdog_alert_sync(struct alerts *alerts, const char *name,
			uint64_t interval_ms, uint64_t now_ms);

#endif
