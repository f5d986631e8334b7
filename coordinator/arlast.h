/* The last successful ring all-reduce per number of ranks: the next run's
 * comparison (ringctl test allreduce) and the measured figures ringctl
 * plan --layers prefers. Kept in the coordinator's store (store.h) as one
 * packed AllreduceLastReply, so they outlive a restart; what is read back
 * is bounded and checked like anything from the wire. */
#ifndef RING_ARLAST_H
#define RING_ARLAST_H

#include <stddef.h>
#include <stdint.h>

#include "arlimits.h"
#include "ring.pb-c.h"
#include "store.h"

#define ARLAST_KEY "allreduce_last"
/* The most a stored blob may hold: 63 reports of 64 names and 16 sizes
 * take well under 1 MiB; a larger blob is not one this coordinator
 * wrote, and is refused whole rather than decoded. */
#define ARLAST_BLOB_MAX (1u << 20)
/* Texts of a kept report (method, order source, comparison, notes). */
#define ARLAST_TEXT_MAX 1024

struct arlast {
	Ring__AllreduceReport *last[ARLIMITS_RANKS_MAX + 1];
};

/* Whether r may be kept: a run that succeeded (no error, 2 to
 * ARLIMITS_RANKS_MAX ranks of printable names of 1-63 bytes, 1 to
 * ARLIMITS_SIZES_MAX sizes within the all-reduce's limits, each verified
 * with a finite time above 0, when it ran). 0, or -1 with why. */
int arlast_check(const Ring__AllreduceReport *r, char *why, size_t len);
/* A copy of r replaces the one over the same number of ranks. 0, or -1
 * (EINVAL: not keepable per arlast_check, ENOMEM). */
int arlast_keep(struct arlast *a, const Ring__AllreduceReport *r);
/* The latest kept run over a number of ranks other than n, or NULL. */
const Ring__AllreduceReport *arlast_other(const struct arlast *a, size_t n);
/* The kept runs (ranks 0: all, else that number only) into out, by number
 * of ranks; pointers into a. Their count. */
size_t arlast_list(const struct arlast *a, unsigned ranks,
		   Ring__AllreduceReport **out, size_t max);
void arlast_clear(struct arlast *a);

/* All kept runs as one packed AllreduceLastReply (malloc'ed). 0 or -1. */
int arlast_pack(const struct arlast *a, uint8_t **buf, size_t *len);
/* Replaces what a holds with the runs of a packed AllreduceLastReply: a
 * blob over ARLAST_BLOB_MAX or one that does not decode is refused whole
 * (-1, why); a run that fails arlast_check, or repeats a number of ranks,
 * is left out with a log line naming it. The number kept. */
int arlast_unpack(struct arlast *a, const void *buf, size_t len, char *why,
		  size_t whylen);

/* Through the store: save replaces the blob (0 or -1); restore loads it,
 * logging what it kept or why it refused it (nothing saved is no
 * error). The number kept, or -1. */
int arlast_save(const struct arlast *a, struct store *s, uint64_t now_ms);
int arlast_restore(struct arlast *a, struct store *s);

#endif
