/* Which findings are about which edge or node, by their subject fields
 * (never their text), and what an edge's name means, for `ringctl
 * explain`. */
#ifndef RING_EXPLAIN_MATCH_H
#define RING_EXPLAIN_MATCH_H

#include "ring.pb-c.h"

/* The edge of t that name means: "a-b" or "b-a" (the cable's first
 * function pair), "a-b:a_if" or "b-a:b_if" (either pair, twins included).
 * Node names may hold '-': every split is tried. Index, or -1. */
int explain_find_edge(const Ring__Topology *t, const char *name);

/* Whether a name list (an edge's name "a-b") names word as a whole (no
 * letter, digit or '_' beside it). */
int explain_text_names(const char *names, const char *word);

/* Whether finding f is about edge e of t: its edge is e, its subject or
 * peer is an end's node and function, it names e's cable, or it is about
 * the whole ring. */
int explain_finding_names_edge(const Ring__Topology *t, const Ring__Edge *e,
			       const Ring__Finding *f);

/* Whether finding f is about node: its subject or peer, among the nodes
 * it names, an end of its edge, or about the whole ring. */
int explain_finding_names_node(const Ring__Topology *t, const char *node,
			       const Ring__Finding *f);

/* The coordinator's finding code about node's PCIe link (an id), if
 * any: quoted instead of said again. */
const Ring__Finding *explain_finding(const Ring__Topology *t, const char *code,
				     const char *node, const char *link);

#endif
