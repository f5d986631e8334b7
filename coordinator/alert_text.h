/* What an alert's resolution says: the rule's own words for "this is over"
 * (a cable up again, a node back, counters quiet), the subject, and how
 * long the condition held, from the alert's fields (never from its firing
 * message). Pure. */
#ifndef RING_ALERT_TEXT_H
#define RING_ALERT_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "alerts.h"

/* "cable n1-n2 is up again after 34 s": a's rule and subject, and the time
 * from first_seen_ms to cleared_ms (to resolved_ms where it has no clear
 * time). Always terminates buf (len > 0). */
void alert_text_resolved(const struct alert *a, char *buf, size_t len);

/* "critical", "warning", "info": the severity as receivers read it. */
const char *alert_text_severity(enum alert_severity s);

/* A duration for the operator: "850 ms", "34 s", "12 min 5 s",
 * "3 h 2 min", "2 d 4 h". */
void alert_text_duration(uint64_t ms, char *buf, size_t len);

#endif
