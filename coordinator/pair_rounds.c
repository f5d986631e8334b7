/* Pure: rounds of disjoint pairs for the measurements. */
#include "pair_rounds.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Greedy edge colouring: each pair takes the smallest round in which
 * neither of its nodes is busy yet. A pair meets at most deg(a)-1 +
 * deg(b)-1 earlier pairs, so 2*maxdeg-1 rounds always suffice and each
 * node's busy rounds fit a bitmap of that many bits. */
int pair_rounds_rounds(const unsigned (*pairs)[2], unsigned n_pairs,
		       unsigned n_nodes, unsigned *round_of)
{
	unsigned *deg = NULL, maxdeg = 0, rounds = 0;
	uint64_t *busy = NULL;
	size_t words;

	if (n_pairs == 0)
		return 0;
	if (!pairs || !round_of) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned i = 0; i < n_pairs; i++) {
		if (pairs[i][0] >= n_nodes || pairs[i][1] >= n_nodes ||
		    pairs[i][0] == pairs[i][1]) {
			errno = EINVAL;
			return -1;
		}
	}
	deg = calloc(n_nodes, sizeof(*deg));
	if (!deg)
		goto fail;
	for (unsigned i = 0; i < n_pairs; i++) {
		for (int k = 0; k < 2; k++) {
			unsigned d = ++deg[pairs[i][k]];

			if (d > maxdeg)
				maxdeg = d;
		}
	}
	words = ((size_t)maxdeg * 2 + 63) / 64;
	busy = calloc((size_t)n_nodes * words, sizeof(*busy));
	if (!busy)
		goto fail;
	for (unsigned i = 0; i < n_pairs; i++) {
		uint64_t *ba = busy + (size_t)pairs[i][0] * words;
		uint64_t *bb = busy + (size_t)pairs[i][1] * words;
		unsigned r = 0;

		for (size_t w = 0; w < words; w++) {
			uint64_t used = ba[w] | bb[w];

			if (used != UINT64_MAX) {
				r = (unsigned)(w * 64) +
				    (unsigned)__builtin_ctzll(~used);
				break;
			}
		}
		ba[r / 64] |= 1ull << (r % 64);
		bb[r / 64] |= 1ull << (r % 64);
		round_of[i] = r;
		if (r + 1 > rounds)
			rounds = r + 1;
	}
	free(busy);
	free(deg);
	return (int)rounds;
fail:
	free(busy);
	free(deg);
	errno = ENOMEM;
	return -1;
}

/* Circle method: node m-1 stays put, the others rotate one place per
 * round; with odd n a dummy node m-1 = n sits out whoever it meets. */
int pair_rounds_circle(unsigned n, unsigned (*pairs)[2], unsigned *round_of,
		       unsigned max_pairs)
{
	unsigned long long total = (unsigned long long)n * (n ? n - 1 : 0) / 2;
	unsigned m, k = 0;

	if (n < 2)
		return 0;
	if (total > max_pairs || total > (unsigned long long)INT32_MAX) {
		errno = ENOSPC;
		return -1;
	}
	if (!pairs || !round_of) {
		errno = EINVAL;
		return -1;
	}
	m = n % 2 ? n + 1 : n;
	for (unsigned r = 0; r < m - 1; r++) {
		for (unsigned j = 0; j < m / 2; j++) {
			unsigned a, b;

			if (j == 0) {
				a = m - 1;
				b = r;
			} else {
				a = (r + j) % (m - 1);
				b = (r + m - 1 - j) % (m - 1);
			}
			if (a >= n || b >= n)
				continue;
			pairs[k][0] = a < b ? a : b;
			pairs[k][1] = a < b ? b : a;
			round_of[k] = r;
			k++;
		}
	}
	return (int)(m - 1);
}
