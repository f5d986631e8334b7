/* The rings of the exposition (issue 24): which ring (RingView.id) each
 * node, edge, diagonal and alert belongs to, for the `ring` label of the
 * per-node, per-edge and per-alert families, looked up in a table built
 * once per scrape (sorted, binary search: a scrape of 10,000 nodes stays
 * O(n log n)); and the per-ring families (ringd_ring_*), one series set
 * per ring. Rings are at most nodes/2 and nodes at most max_agents, so
 * the label adds no cardinality beyond the nodes'. */
#ifndef RING_METRICS_RINGS_H
#define RING_METRICS_RINGS_H

#include "alerts.h"
#include "metrics_text.h"

/* r->rings from r->src->topology and r->nodes. 0, or -1 (ENOMEM). */
int mr_rings_new(struct mr *r);
void mr_rings_free(struct mr *r);
/* The ring of r->nodes[i], of a node by name, of an edge (both ends in
 * it), of an alert (its own ring, else its node's, its edge's ends',
 * or its subject a ring's id); "" for none. */
const char *mr_rings_node(const struct mr *r, unsigned i);
const char *mr_rings_of(const struct mr *r, const char *node);
const char *mr_rings_edge(const struct mr *r, const char *a, const char *b);
const char *mr_rings_alert(const struct mr *r, const struct alert *a);
/* The per-ring families and ringd_topology_rings. */
void mr_rings_families(struct mr *r);

#endif
