/* ringctl's rank order: the writer's table and the launchers' text
 * formats (hostfile, rankfile, torchrun, env). */
#ifndef RING_RANKS_H
#define RING_RANKS_H

#include <stddef.h>
#include <stdio.h>

#include "ring.pb-c.h"
#include "writer.h"

void ranks_render(struct writer *w, const Ring__Topology *t);
/* Punctuation allowed, besides ASCII letters and digits, in every value
 * the text formats print (IPv6 with a zone, "mlx5_0,mlx5_1"). */
#define RANKS_SAFE_PUNCT "._:,/+@%-"
/* 0 when every value `format` (hostfile, rankfile, torchrun, env) would
 * print is a non-empty word of the safe set (optional fields may be
 * empty), or for another format (the writer escapes); -1 with
 * "node 'N' (rank R): FIELD '...' ..." in err otherwise.
 * Node data come from agents: a newline in an interface name would
 * otherwise become a line of its own in an env file someone sources. */
int ranks_check(const Ring__Topology *t, const char *format, char *err,
		size_t errlen);
/* hostfile, rankfile, torchrun, env. -1 (nothing printed) for another
 * format, no ranks, or a value ranks_check refuses. */
int ranks_text(FILE *out, const Ring__Topology *t, const char *format);

#endif
