/* A site's rings (issue 24): the data plane's connected components
 * grouped by the rings already known (a `ring` directive, a published
 * ring), each group classified and ordered on its own by topo_analyse.
 * Pure, unit-tested on hand-built graphs. */
#ifndef RING_TOPO_SITE_H
#define RING_TOPO_SITE_H

#include "topo.h"

struct topo_ring {
	/* The known ring it is (the label its members carry), or -1: a
	 * component no known ring claims, new to the site. */
	int label;
	unsigned *nodes; /* its members, site indices, ascending */
	unsigned n_nodes;
	/* Its class and order alone; order, gap_a/gap_b in site indices.
	 * No strays, no anomalies (the site's result has them). */
	struct topo_result res;
};

struct topo_site {
	/* The site as topo_analyse sees it. With one ring (or none) exactly
	 * that, and rings[0] repeats its class and order. With several:
	 * class TOPO_RINGS, no order, and the strays are the nodes in no
	 * ring. */
	struct topo_result site;
	struct topo_ring *rings; /* ascending by their lowest member */
	unsigned n_rings;
};

/* label: per node, the known ring it belongs to (>= 0), or -1; NULL:
 * none known. Components holding one label's members are one ring (a
 * ring cut in two is one ring of class split); a node with no cable
 * joins its label's ring, or (no label, a known member) the one ring
 * there is. A component of two nodes or more with no label is a ring of
 * its own when it holds a known member (in->member, rank0), or when
 * nothing at all is known (a first survey); otherwise its nodes are set
 * apart (strays), as topo_analyse does. 0, or -1 with errno. */
int topo_site_analyse(const struct topo_input *in, const int *label, int rank0,
		      enum topo_direction dir, struct topo_site *out);
void topo_site_free(struct topo_site *s);

#endif
