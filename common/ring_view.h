/* One ring of a site read out of the site's published topology (issue
 * 24): which ring a node belongs to, and the site's topology filtered to
 * one ring, so that every reader of a one-ring topology (the report, the
 * picture, explain, plan, the all-reduce) reads one ring of many
 * unchanged. Pure. */
#ifndef RING_RING_VIEW_H
#define RING_RING_VIEW_H

#include <stddef.h>

#include "ring.pb-c.h"

/* The ring with this id, or NULL. */
const Ring__RingView *ring_view_find(const Ring__Topology *site,
				     const char *id);

/* The ring node is a member of, or NULL. */
const Ring__RingView *ring_view_of_node(const Ring__Topology *site,
					const char *node);

/* Is node a member of ring r? */
int ring_view_member(const Ring__RingView *r, const char *node);

/* The ring an edge "a-b" belongs to (both ends members), or NULL. */
const Ring__RingView *ring_view_of_edge(const Ring__Topology *site,
					const char *a, const char *b);

/* Is finding f about ring r: its ring_id is r's, or (none) it names a
 * member (node, peer, nodes, an edge's end), or names no node at all
 * (then it is every ring's)? */
int ring_view_finding_in(const Ring__RingView *r, const Ring__Finding *f);

/* The site's topology filtered to ring r: r's class, order, ranks, gap
 * and live overlay; the edges, diagonals, cables (edge indexes
 * renumbered), load rounds and findings of its members; no strays, no
 * rings. Shallow: it points into site and r, which must outlive it; the
 * arrays it made are freed by ring_view_release. 0, or -1 (ENOMEM). */
struct ring_view {
	Ring__Topology top;
	void *mem[12];
	Ring__Cable *cables;
	Ring__LoadRound *rounds;
};
int ring_view_build(const Ring__Topology *site, const Ring__RingView *r,
		    struct ring_view *out);
void ring_view_release(struct ring_view *v);

#endif
