/* ringctl's rendering of the counters around a test (TestResult.counters,
 * issue 11) and of the findings the coordinator derived from them. */
#ifndef RING_REPORT_COUNTERS_H
#define RING_REPORT_COUNTERS_H

#include "ring.pb-c.h"
#include "writer.h"

/* Counters shown per side in plain text; keyvalue and JSON list all. */
#define REPORT_COUNTERS_PLAIN_MAX 8

/* One side's moved counters ("counters" table) and counters_error, inside
 * the side's object. Nothing when none moved and none failed. */
void report_counters_side(struct writer *w, const Ring__TestResult *s);
/* The report's findings ("findings" table: level, code, text). */
void report_counters_findings(struct writer *w, const Ring__TestReport *r);
/* A list of counters (an edge's), with their node. */
void report_counters_list(struct writer *w, const char *key,
			  Ring__CounterDelta *const *c, size_t n);

#endif
