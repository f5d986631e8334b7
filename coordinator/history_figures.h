/* Which of a published topology's figures become the measurement history
 * (`ringctl history`, the store's history table): per edge the stream
 * ladder both ways (tcp_bw), the latency ladder's medians (tcp_lat), the
 * RDMA write latency medians (rdma_write_lat) and the RDMA write and read
 * bandwidth both ways (rdma_write_bw, rdma_read_bw); a figure below zero
 * (not measured) is left out, and an edge that the topology before
 * already had with the same cable and the same measurement time (a
 * re-check or a busy edge keeps the figures) is not recorded again. Each
 * sample carries the edge's measurement time and its one name (a-b).
 * Pure. */
#ifndef RING_HISTORY_FIGURES_H
#define RING_HISTORY_FIGURES_H

#include <stddef.h>

#include "ring.pb-c.h"
#include "store.h"

/* The samples of t not already recorded under prev (NULL: none) into a
 * new array *out (the caller frees it; NULL when there are none) of *n.
 * 0, or -1 with errno ENOMEM. */
int history_figures(const Ring__Topology *t, const Ring__Topology *prev,
		    struct store_sample **out, size_t *n);

#endif
