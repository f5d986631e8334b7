/* See ratelimit.h. */
#include "ratelimit.h"

#include <stdio.h>
#include <string.h>

void ratelimit_init(struct ratelimit *r, uint64_t interval_ms)
{
	memset(r, 0, sizeof(*r));
	r->interval_ms = interval_ms;
}

int ratelimit_ok(struct ratelimit *r, const char *key, uint64_t now_ms,
		 unsigned *held)
{
	struct ratelimit_slot *s = NULL, *oldest = &r->slot[0];

	*held = 0;
	for (size_t i = 0; i < RATELIMIT_SLOTS && !s; i++) {
		struct ratelimit_slot *x = &r->slot[i];

		if (x->said_ms && !strncmp(x->key, key, sizeof(x->key) - 1))
			s = x;
		else if (!x->said_ms ||
			 (oldest->said_ms && x->said_ms < oldest->said_ms))
			oldest = x;
	}
	if (!s) {
		/* A new key: said now; a slot reused loses its count. */
		s = oldest;
		snprintf(s->key, sizeof(s->key), "%s", key);
		s->said_ms = now_ms ? now_ms : 1;
		s->held = 0;
		return 1;
	}
	if (now_ms - s->said_ms < r->interval_ms) {
		s->held++;
		return 0;
	}
	*held = s->held;
	s->held = 0;
	s->said_ms = now_ms ? now_ms : 1;
	return 1;
}
