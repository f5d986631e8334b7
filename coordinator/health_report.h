/* The periodic health report's one line (health_report_interval): the one
 * health, the ring as the cables are now (topoview's words), every edge's
 * live state, how many alerts fire, and what fired and resolved since the
 * last report. Pure; coord.c logs it and hands it to the alert_command
 * (health_report_command). */
#ifndef RING_HEALTH_REPORT_H
#define RING_HEALTH_REPORT_H

#include <stddef.h>

#include "health.h"
#include "ring.pb-c.h"

/* HEALTH_REPORT_LEN bytes are enough for any line (longer edge lists are
 * cut). */
#define HEALTH_REPORT_LEN 3200

/* The line for health h, topology t (NULL: no survey yet), firing alerts
 * firing now, fired and resolved since the last report, into line. */
void health_report_line(const struct health *h, const Ring__Topology *t,
			size_t firing, unsigned fired, unsigned resolved,
			char *line, size_t len);

#endif
