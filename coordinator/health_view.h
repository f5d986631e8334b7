/* The facts the one health (health.h) is derived from, gathered where they
 * live: the alert table, the expected nodes that are not up (the node
 * table), whether a topology is published and its class and rank order
 * (the watch's live copy, else the survey's), and whether a restarted
 * coordinator is still re-learning (health_rules.h). Every output
 * (control's status and alerts, watch, metrics, the page, the health
 * report) asks here, so that they all say one health. */
#ifndef RING_HEALTH_VIEW_H
#define RING_HEALTH_VIEW_H

#include <stdint.h>

#include "health.h"
#include "nodes.h"
#include "ring.pb-c.h"

struct health_rules;
struct survey;

/* Where the facts live; any of rules and survey may be NULL (not yet
 * built: then no relearning, and no topology from it). */
struct health_view {
	struct nodes *nodes;
	const struct alerts *alerts;
	struct health_rules *rules;
	struct survey *survey;
};

/* The topology as outputs show it: the watch's copy with its live
 * overlay, else the survey's as published; NULL before any. */
const Ring__Topology *health_view_topology(const struct health_view *v);

/* The facts from the node table and topology t (NULL: none yet); the
 * first expected node not up is named (a pointer into the table, valid
 * while the node is). Relearning is left off for the caller. */
void health_view_facts(struct nodes *nodes, const struct alerts *alerts,
		       const Ring__Topology *t, struct health_facts *f);

/* The one health now. */
void health_view_derive(const struct health_view *v, uint64_t now_ms,
			struct health *out);

/* Issue 24: ring r's health now: its alerts (Alert.ring), its class and
 * rank order, its expected members not up. On a site of one ring the
 * site's health is the ring's. */
void health_view_derive_ring(const struct health_view *v, uint64_t now_ms,
			     const Ring__Topology *t, const Ring__RingView *r,
			     struct health *out);

/* t's rings as outputs show them: shallow copies of t->rings with each
 * one's health and firing alerts filled (ptrs[k] for Topology.rings),
 * valid while t is; released by health_view_rings_release. 0, or -1
 * (ENOMEM). */
struct health_view_rings {
	Ring__RingView *views;
	Ring__RingView **ptrs;
	struct health *h;
	size_t n;
};
int health_view_rings(const struct health_view *v, uint64_t now_ms,
		      const Ring__Topology *t, struct health_view_rings *out);
void health_view_rings_release(struct health_view_rings *r);

#endif
