/* `ringctl history`: one edge's measured figures over time, as the
 * coordinator's store keeps them. */
#ifndef RING_HISTORY_H
#define RING_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "ring.pb-c.h"
#include "writer.h"

/* Points of a plain sparkline, at most; and the width plain output keeps
 * within. */
#define HISTORY_SPARK_MAX 40
#define HISTORY_COLUMNS 100
/* --since, at most (the store keeps less). */
#define HISTORY_SINCE_MAX_MS (3650ull * 86400000)

/* "90s", "30m", "6h", "7d", "2w" or a bare number of seconds; more than
 * 0, at most HISTORY_SINCE_MAX_MS. 0 and *ms, or -1 (errno EINVAL for
 * what is not a duration, ERANGE for one out of range). */
int history_parse_duration(const char *s, uint64_t *ms);

/* A sparkline of the n values v (at times ts, ascending) on the time axis
 * [t0, t1] cut into points equal buckets (t0 == t1: one): each bucket the
 * mean of its values as one of the eight blocks U+2581..U+2588, its
 * height proportional to the value from 0 to the largest of v (so noise
 * stays small; all 0: the lowest block); a space for a bucket without a
 * value. buf (at least 3 * points + 1 bytes, else as many points as fit)
 * gets UTF-8; returns the points written. */
size_t history_sparkline(const uint64_t *ts, const double *v, size_t n,
			 uint64_t t0, uint64_t t1, size_t points, char *buf,
			 size_t len);

/* since_ms: what was asked (0: everything kept). All formats: the edge,
 * the time span, the number of samples, and one record per series (kind,
 * direction and streams or size) with its count, min, median, max and
 * last value. Plain: the series as a table with a sparkline, within
 * HISTORY_COLUMNS; the machine formats: every sample too. */
void history_render(struct writer *w, const Ring__HistoryReply *r,
		    uint64_t since_ms);

#endif
