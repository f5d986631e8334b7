/* Baselines: each edge's first good measurement (its top-of-ladder
 * figure, the worse direction, Gbps), kept across restarts as text, and
 * the figure an edge is judged by now. Pure: no alerts, no thresholds
 * (edge_degraded's are the health rules'). */
#ifndef RING_EDGE_BASELINES_H
#define RING_EDGE_BASELINES_H

#include <stddef.h>
#include <stdint.h>

#include "alerts.h"
#include "ring.pb-c.h"

struct edge_baseline {
	char edge[ALERTS_EDGE_LEN]; /* text_edge_msg_name's */
	double gbps;
	uint64_t ms;
};

/* Zeroed is empty; bounded like the node table (a few edges per node). */
struct edge_baselines {
	struct edge_baseline *v;
	size_t n, cap;
};
#define EDGE_BASELINES_MAX 65536

/* Set (or replace) edge's: 0, or -1 with EINVAL (gbps not > 0, name too
 * long), ENOSPC (EDGE_BASELINES_MAX) or ENOMEM. */
int edge_baselines_set(struct edge_baselines *b, const char *edge, double gbps,
		       uint64_t ms);
const struct edge_baseline *edge_baselines_find(const struct edge_baselines *b,
						const char *edge);
/* The edge's baseline (Gbps), or -1 when it has none. */
double edge_baselines_of(const struct edge_baselines *b, const Ring__Edge *e);
/* All of them, one "EDGE GBPS MS" line each, whole lines only, into buf;
 * the length written. */
size_t edge_baselines_text(const struct edge_baselines *b, char *buf,
			   size_t len);
/* The same from such a text (unknown or bad lines are skipped). */
void edge_baselines_load(struct edge_baselines *b, const char *text,
			 size_t len);
/* A published survey: every edge's first good figure becomes its
 * baseline (one that has one keeps it). */
void edge_baselines_note(struct edge_baselines *b, const Ring__Topology *t);
void edge_baselines_clear(struct edge_baselines *b);

/* The figure an edge is judged by: the top of the stream ladder, the
 * worse direction; RDMA WRITE where no TCP ladder ran. < 0: none. */
double edge_baselines_figure(const Ring__Edge *e);
/* The figure judged now: the light check's bandwidth sample when it is
 * newer than the survey's figures (its worse direction), else the
 * survey's; *sampled says which. */
double edge_baselines_figure_now(const Ring__Edge *e, int *sampled);

#endif
