/* The live view: a copy of the last published topology with an overlay
 * computed from what the agents push now (node table only, no test
 * traffic): each edge's live state from carrier and beacons, the class of
 * the ring as the cables are now, whether the published rank order still
 * holds, the expected nodes not surveyed and the strays still up. The
 * overlay is written into the copy's fields (live_state, live_kind,
 * order_valid, ...) between evaluations; the copy is given back clean
 * before it is replaced or freed. Judges nothing: the health rules
 * (health_rules.h) read it. */
#ifndef RING_LIVE_VIEW_H
#define RING_LIVE_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "nodes.h"
#include "ring.pb-c.h"

/* One edge of the published topology as the agents see it now. */
struct live_view_edge {
	char state[16]; /* up, down, unverified */
	uint64_t since_ms;
	char reason[256];
	/* The fastest each end has linked at since the topology was
	 * published: a downshift is a link that renegotiated below it
	 * (kept here for speed_downshift, reset with each topology). */
	int32_t max_mbps[2];
	/* Carrier at both ends but no beacons either way since (0: not
	 * so): down only once that outlasts the beacon grace. */
	uint64_t quiet_since_ms;
};

struct live_view;

/* Reads the node table; NULL on ENOMEM. */
struct live_view *live_view_new(struct nodes *table);
void live_view_free(struct live_view *w);

/* A survey published t (copied; NULL: none): every edge as the survey
 * measured it until the agents say otherwise. 0 or -1 (ENOMEM: the old
 * one stays). */
int live_view_set_topology(struct live_view *w, const Ring__Topology *t);

/* Recompute the overlay at now_ms. relearning: the coordinator restarted
 * and nodes that have not reported this session are pending (their
 * cables unverified, not down). now_text: the overlay in words (the
 * class as the cables are now), "" without a topology. */
void live_view_eval(struct live_view *w, uint64_t now_ms, int relearning,
		    char *now_text, size_t len);

/* The copy as it is (NULL before any), overlay attached after an
 * evaluation; live_view_topology also refreshes the figures that move
 * between surveys (live_view_set_edge_fn) first. Valid until the next
 * evaluation or live_view_set_topology. */
const Ring__Topology *live_view_published(const struct live_view *w);
const Ring__Topology *live_view_topology(struct live_view *w);

/* Edge i of the published topology (i < its n_edges). */
struct live_view_edge *live_view_edge(struct live_view *w, size_t i);
/* Why the published rank order no longer holds ("" while it does). */
const char *live_view_order_invalid(const struct live_view *w);
/* The published ring node is in (Topology.rings), or NULL. Valid until
 * the next live_view_set_topology. */
const Ring__RingView *live_view_ring_of(const struct live_view *w,
					const char *node);
/* On a site of several rings, how many (0 otherwise: the site's overlay
 * is its one ring's), and why ring k's rank order (top->rings[k]) no
 * longer holds ("" while it does). */
size_t live_view_n_rings(const struct live_view *w);
const char *live_view_ring_order_invalid(const struct live_view *w, size_t k);
/* When the earliest beacon grace ends (0: none pending): look again
 * then, a cable still without beacons is down. */
uint64_t live_view_beacon_due(const struct live_view *w);
/* Was node set apart from the ring (a stray) by the published survey? */
int live_view_published_stray(const struct live_view *w, const char *node);

/* Fills an edge's figures that move between surveys; strings it sets
 * stay valid until the next call (given back before the copy is freed). */
typedef void (*live_view_edge_fn)(Ring__Edge *e, void *arg);
void live_view_set_edge_fn(struct live_view *w, live_view_edge_fn fn,
			   void *arg);

/* A node counted as up. */
int live_view_node_up(const struct node *n);
/* Append text to buf, "; "-separated, as every reason here is written. */
void live_view_add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
