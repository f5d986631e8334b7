/* A survey checks each diagonal pair (two nodes that are not neighbours)
 * once per address, so a topology can hold several checks of one pair.
 * Reports show each pair once, and a path on any address is what counts:
 * the one rule for status, the picture and its list. Pure. */
#ifndef RING_DIAGONAL_H
#define RING_DIAGONAL_H

#include <stddef.h>

#include "ring.pb-c.h"

/* For t->diagonals[i]: NULL when an earlier check has the same pair;
 * else the check to show for the pair (the first with a path, or i's
 * own), and in *checks (may be NULL) how many checks the pair has. */
const Ring__DiagonalCheck *diagonal_pair_show(const Ring__Topology *t, size_t i,
					      size_t *checks);

#endif
