/* The bytes ringd's own tests put on the cable(s) between two nodes, per
 * minute of the last hour, computed from the tests' reports (warm-up
 * included). Its own state, no event loop: the survey's and the
 * operator's tests add to it, the busy check asks when our last sizeable
 * test there ended, the store keeps it across restarts as text. */
#ifndef RING_SELF_BYTES_H
#define RING_SELF_BYTES_H

#include <stddef.h>
#include <stdint.h>

#include "ring.pb-c.h"

/* At most this many node pairs; the pair tested longest ago makes room. */
#define SELF_BYTES_PAIRS_MAX 4096

struct self_bytes;

struct self_bytes *self_bytes_new(void);
void self_bytes_free(struct self_bytes *s);
/* Account a finished test's bytes to its pair of nodes, now. */
void self_bytes_account(struct self_bytes *s, const Ring__TestReport *rep);
/* When our last test of at least 1 MiB between a and b (either order)
 * ended (Unix ms), 0 never. */
uint64_t self_bytes_last_ms(const struct self_bytes *s, const char *a,
			    const char *b);
/* The bytes between a and b in the hour before now_ms. */
uint64_t self_bytes_hour(const struct self_bytes *s, const char *a,
			 const char *b, uint64_t now_ms);
/* "A B MINUTE BYTES" lines of the last hour's non-empty minutes (whole
 * lines only), and back from them (bad lines skipped). */
size_t self_bytes_text(const struct self_bytes *s, uint64_t now_ms, char *buf,
		       size_t len);
void self_bytes_load(struct self_bytes *s, const char *text, size_t len,
		     uint64_t now_ms);

#endif
