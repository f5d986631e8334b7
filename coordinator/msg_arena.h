/* A message arena: the report's protobuf messages and strings, allocated
 * zeroed and freed together once the Topology is stored. */
#ifndef RING_MSG_ARENA_H
#define RING_MSG_ARENA_H

#include <stddef.h>

struct msg_arena {
	void **p;
	size_t n, cap;
};

/* Zeroed memory of size bytes owned by the arena, or NULL. */
void *msg_arena_alloc(struct msg_arena *a, size_t size);
/* A formatted copy (up to 511 bytes) in the arena; "" when out of
 * memory. */
char *msg_arena_printf(struct msg_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Everything the arena holds. */
void msg_arena_free(struct msg_arena *a);

#endif
