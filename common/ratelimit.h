/* At most one log line per key (a peer) per interval: the first is said,
 * the repeats within the interval are counted, and the next line said
 * for that key carries how many were held back. A small fixed table: a
 * new key takes a free slot or the one said longest ago (its count is
 * then lost), so a flood of keys costs no memory. Pure. */
#ifndef RING_RATELIMIT_H
#define RING_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#define RATELIMIT_SLOTS 32
#define RATELIMIT_KEY_LEN 96

struct ratelimit_slot {
	char key[RATELIMIT_KEY_LEN];
	uint64_t said_ms; /* 0: free */
	unsigned held;	  /* repeats since it was said */
};

struct ratelimit {
	uint64_t interval_ms;
	struct ratelimit_slot slot[RATELIMIT_SLOTS];
};

void ratelimit_init(struct ratelimit *r, uint64_t interval_ms);
/* 1: say it now; *held gets how many were held back for key since its
 * last line (0 for the first). 0: hold it back (counted). */
int ratelimit_ok(struct ratelimit *r, const char *key, uint64_t now_ms,
		 unsigned *held);

#endif
