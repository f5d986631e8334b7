/* ringctl's rank order: the writer's table and the launchers' text
 * formats (hostfile, rankfile, torchrun, env). */
#ifndef RING_RANKS_H
#define RING_RANKS_H

#include <stddef.h>
#include <stdio.h>

#include "ring.pb-c.h"
#include "writer.h"

/* The table; with a "warning" after it where ranks may be out of each
 * other's reach (a ring of more than 3, a line of more than 2). */
void ranks_render(struct writer *w, const Ring__Topology *t);
/* One rank's members, as the machine formats' table has them (inside an
 * object the caller opened): for a ring of a site's rings too. */
void ranks_render_rank(struct writer *w, const Ring__Rank *r);
/* Switchless: only the cables between adjacent ranks exist. */
#define RANKS_SWITCHLESS_WARNING                                               \
	"switchless ring: only ring collectives between adjacent ranks are "   \
	"safe; tree algorithms, all-to-all (MoE expert parallel) and "         \
	"send/recv between non-adjacent ranks need diagonal paths and will "   \
	"hang; put pipeline stages on adjacent ranks"
#define RANKS_SWITCHLESS_WARNING_ENV                                           \
	"# switchless ring: only ring collectives between adjacent ranks "     \
	"are safe.\n# Tree algorithms, all-to-all (MoE expert parallel) and "  \
	"send/recv between\n# non-adjacent ranks need diagonal paths and "     \
	"will hang; put pipeline stages\n# on adjacent ranks.\n"
/* Punctuation allowed, besides ASCII letters and digits, in every value
 * the text formats print (IPv6 with a zone, "mlx5_0,mlx5_1"). */
/* The oldest NCCL the printed environment works with on a ring whose
 * nodes face two neighbours: subnet-aware routing (docs/NCCL.md). */
#define RANKS_NCCL_MIN "2.30.7"
/* Does env's NCCL_IB_HCA list r->hcas[k]? (Functions without a partner
 * facing the other neighbour are left out.) */
int ranks_hca_printed(const Ring__Rank *r, size_t k);
/* NCCL_NET_FORCE_MERGE's value for r: Rank.nic_groups, ';' between. */
void ranks_force_merge_value(const Ring__Rank *r, char *buf, size_t len);
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
/* env's block of rank i alone (check nccl-env prints it per node); -1
 * (nothing printed) as ranks_text refuses env, or i out of range. */
int ranks_env_node(FILE *out, const Ring__Topology *t, size_t i);

#endif
