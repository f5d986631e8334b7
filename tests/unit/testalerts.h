/* Shared by the unit tests of the alert table and the health (test_alerts,
 * test_health, test_health_view, test_health_rules, test_watchdog_alert):
 * a small table, and the health word it alone gives. Header-only, so each
 * test program stays one source file. */
#ifndef RING_TESTALERTS_H
#define RING_TESTALERTS_H

#include <stdint.h>

#include "coordinator/alerts.h"
#include "coordinator/health.h"

/* A table of 16 firing and 16 resolved alerts at most, resolved ones kept
 * an hour, clearing ones held hold_down_ms. */
static inline struct alerts *testalerts_table(uint64_t hold_down_ms)
{
	struct alerts_conf c = {.hold_down_ms = hold_down_ms,
				.max_resolved = 16,
				.keep_resolved_ms = 3600000,
				.max_firing = 16};
	struct alerts *t = alerts_new(&c, NULL, NULL);

	assert_non_null(t);
	return t;
}

/* The health word of the table alone (a surveyed ring, nothing missing). */
static inline const char *testalerts_health(const struct alerts *t)
{
	struct health_facts f = {
		.alerts = t, .has_topology = 1, .kind = "ring", .n_ranks = 4};
	struct health h;

	health_derive(&f, &h);
	return health_name(h.state);
}

#endif
