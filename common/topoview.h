/* Rules for reading a published topology, shared by ringctl's reports,
 * the picture (status -f svg and the coordinator's page). Pure. */
#ifndef RING_TOPOVIEW_H
#define RING_TOPOVIEW_H

#include <stddef.h>

#include "ring.pb-c.h"

/* A survey checks each diagonal pair (two nodes that are not neighbours)
 * once per address, so a topology can hold several checks of one pair;
 * reports show each pair once, and a path on any address is what counts.
 * For t->diagonals[i]: NULL when an earlier check has the same pair;
 * else the check to show for the pair (the first with a path, or i's
 * own), and in *checks (may be NULL) how many checks the pair has. */
const Ring__DiagonalCheck *topoview_diagonal(const Ring__Topology *t, size_t i,
					     size_t *checks);

/* What edge e carries: the top of its TCP stream ladder, the worse
 * direction (one direction when the other failed); < 0 when e is NULL or
 * has no ladder both ways. */
double topoview_edge_gbps(const Ring__Edge *e);

/* Edge e's state as the live overlay has it now: "up", "degraded",
 * "down", "unverified", or "measured" (no overlay). The one reading behind
 * the picture in words and the SVG. */
const char *topoview_edge_state(const Ring__Edge *e);

/* The link between two nodes in the picture in words, from the live
 * state: " =0.95= " (its figure, gbps < 0 " =?= "), " ~0.95~ " degraded,
 * " =down= " down; no edge (e NULL) " =?= ". Into buf; the length
 * written. */
size_t topoview_picture_link(const Ring__Edge *e, double gbps, char *buf,
			     size_t len);

/* The class as the cables are now, in words, from the overlay's data
 * (live_kind, live_nodes_down, live_cables_down; a surveyed line's
 * line_gap), never from live_gap's text: "a line: n4 is down", "a line:
 * the cable n3-n4 is down", "split: the cables n1-n2 and n3-n4 are
 * down; n4 is down", "a line with no cable n1-n3", "a ring". article 0
 * leaves out "a ". Into buf (truncated to fit); the length it needed. */
size_t topoview_live_text(const Ring__Topology *t, int article, char *buf,
			  size_t len);

#endif
