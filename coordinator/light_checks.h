/* Light checks' outcomes: each published edge's last light check (probes
 * and a 64 B latency sample) and its last bandwidth sample, by edge, and
 * the light_check_interval timer that asks for the next round. Its own
 * state; whether an outcome counts (nothing changed while it ran) is the
 * caller's judgement. */
#ifndef RING_LIGHT_CHECKS_H
#define RING_LIGHT_CHECKS_H

#include <stdint.h>

#include <event2/event.h>

#include "survey.h"

/* At most this many edges are remembered; the oldest goes. */
#define LIGHT_CHECKS_MAX 1024

struct light_checks;

/* due(arg) every interval_ms (0: never). NULL when out of memory. */
struct light_checks *light_checks_new(struct event_base *base,
				      uint64_t interval_ms,
				      void (*due)(void *arg), void *arg);
void light_checks_free(struct light_checks *lc);

/* One check's outcome for edge (a, a_if, b, b_if): when it started,
 * its latency p50 (< 0 none), its error ("" got through), its sample
 * per direction ([0] a -> b, < 0 none: a check with no sample keeps the
 * one before). Logged as before. */
void light_checks_note(struct light_checks *lc, const char *a, const char *a_if,
		       const char *b, const char *b_if, uint64_t started_ms,
		       double lat_us, const char *error,
		       const double sample[2]);
/* 0 with *out, or -1 when the edge has had no light check. */
int light_checks_get(const struct light_checks *lc, const char *a,
		     const char *a_if, const char *b, const char *b_if,
		     struct survey_light_out *out);

#endif
