/* An edge's figures that move between surveys, filled into the topology
 * that outputs show (the watch's live copy, on every evaluation): ringd's
 * own bytes over the cable in the last hour (self_bytes_hour), the last
 * light check (light_ms, light_started_ms, light_lat_p50_us, light_error)
 * and the last bandwidth sample (sample_gbps_a_to_b/_b_to_a, sample_ms),
 * as the survey keeps them. No light check yet: latency and samples -1,
 * no error. */
#ifndef RING_LIVE_FIGURES_H
#define RING_LIVE_FIGURES_H

#include <stdint.h>

#include "ring.pb-c.h"

struct survey;

/* e's moving figures from sv at now_ms; e->light_error then points into
 * sv (or at a static ""), valid until the survey's next light check. */
void live_figures_fill(const struct survey *sv, Ring__Edge *e, uint64_t now_ms);

#endif
