/* Test scheduling: rounds of disjoint pairs, so no node is in two tests at
 * once. */
#ifndef RING_PAIR_ROUNDS_H
#define RING_PAIR_ROUNDS_H

/* Assign each pair a round so that no node appears twice in a round, using
 * few rounds: a ring of even length gets 2, odd gets 3 (edges are taken in
 * the order given; pass a ring's edges in cycle order). Returns the number
 * of rounds, or -1 (errno EINVAL for a self-pair or index >= n_nodes). */
int pair_rounds_rounds(const unsigned (*pairs)[2], unsigned n_pairs,
		       unsigned n_nodes, unsigned *round_of);
/* All pairs of n nodes by the circle method: n-1 rounds for even n, n for
 * odd n. Writes n*(n-1)/2 pairs (max_pairs must allow it) and their
 * rounds. Returns the number of rounds, or -1 (errno ENOSPC). */
int pair_rounds_circle(unsigned n, unsigned (*pairs)[2], unsigned *round_of,
		       unsigned max_pairs);

#endif
