/* ringctl check nccl-env: an NCCL environment (a file of VAR=value lines,
 * or the current environment) linted against the last survey, and the
 * corrected environment per node (what `ranks -f env` prints). The parts:
 * check_env_parse.c reads the input, check_env_rules.c and
 * check_env_lint.c judge it, check_env.c reports it and runs the command. */
#ifndef RING_CHECK_ENV_H
#define RING_CHECK_ENV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ring.pb-c.h"
#include "ladder_advice.h"
#include "writer.h"

/* Bounds on the input (a file or stdin): bigger is refused, not cut. */
#define CHECK_ENV_MAX_BYTES (1024 * 1024)
#define CHECK_ENV_MAX_LINES 4096
#define CHECK_ENV_NAME_MAX 128
#define CHECK_ENV_VALUE_MAX 4096

struct check_env_var {
	char *name;
	char *value;
	unsigned line;	    /* 0: from the environment */
	unsigned prev_line; /* an earlier assignment's line, 0 if none */
	int block;	    /* set->blocks index; -1: before any block */
};

/* One node's block, as `ranks -f env` prints it: from its "# NODE (rank
 * N)" line to the next such line. */
struct check_env_block {
	char node[CHECK_ENV_NAME_MAX];
	unsigned rank;
	unsigned line;
};

#define CHECK_ENV_BLOCKS_MAX 1024

struct check_env_set {
	struct check_env_var *v;
	size_t n;
	struct check_env_block *blocks;
	size_t n_blocks;
};

/* Parse VAR=value lines (`export VAR=value`, '#' comments, blank lines;
 * one pair of matching quotes around a value is stripped; within one
 * scope a later assignment replaces an earlier one, as in a shell). A
 * "# NODE (rank N)" comment line starts NODE's block: each node's
 * environment is the lines before the first block and its own block,
 * nothing from another node's. where names the input in messages. 0, or
 * -1 with "WHERE:LINE: why" in err (nothing kept). */
int check_env_parse(const char *text, size_t len, const char *where,
		    struct check_env_set *set, char *err, size_t errlen);
/* The NCCL_* variables of envp (NULL-terminated, as environ). 0 or -1. */
int check_env_from_environ(char *const *envp, struct check_env_set *set);
void check_env_set_free(struct check_env_set *set);
/* The value of name before any block, NULL when unset there. */
const char *check_env_get(const struct check_env_set *set, const char *name);

/* Is name a variable upstream NCCL documents (or reads in its source)? */
int check_env_known(const char *name);
/* A patched build's variable that operators copy from its scripts: named,
 * because upstream NCCL silently ignores it (docs/NCCL.md). */
#define CHECK_ENV_SWITCHLESS "NCCL_SWITCHLESS_RING_ONLY"

struct check_env_issue {
	char level[8]; /* "problem", "warning", "note" (notes: not counted) */
	char variable[CHECK_ENV_NAME_MAX];
	char value[200];
	unsigned line;
	char node[64];
	char why[480];
	char fix[240];
};

#define CHECK_ENV_ISSUES_MAX 256

struct check_env_result {
	/* In: the NCCL version the job runs ("2.30.7"), "" when unknown. */
	char nccl_version[32];
	/* Out: */
	struct check_env_issue issues[CHECK_ENV_ISSUES_MAX];
	size_t n;
	size_t dropped;	 /* beyond CHECK_ENV_ISSUES_MAX */
	size_t counted;	 /* problems and warnings */
	size_t problems; /* of which problems */
	int shared;	 /* internal: one environment for every node */
	struct ladder_advice sat;
};

/* Is name set anywhere in set (before the blocks or in one)? */
int check_env_has_var(const struct check_env_set *set, const char *name);

/* Lint set against topology t (ranks, edges) and, when st is not NULL,
 * the nodes' unaddressed data ports; inv (NULL, or one per rank of t,
 * NULL where none) the nodes' inventories: NCCL_IB_GID_INDEX is checked
 * against each function's GID table there (the entry must be RoCE v2
 * with an IPv4-mapped address on every function NCCL uses: Rank.hcas
 * less what NCCL_IB_HCA leaves out), against the survey's index where a
 * node has none. Fills res. */
void check_env_lint(const struct check_env_set *set, const Ring__Topology *t,
		    const Ring__StatusReply *st,
		    const Ring__Inventory *const *inv,
		    struct check_env_result *res);

/* The inventories of t's ranks from the coordinator, for the GID rule:
 * inv[i] for t->ranks[i], NULL where the node never reported one or the
 * request failed; nothing fetched (inv NULL) when no rank lists an RDMA
 * function. */
struct check_env_invs {
	const Ring__Inventory **inv;
	Ring__Envelope **rep; /* the replies, owned */
	size_t n;
};
void check_env_invs_fetch(const char *sock, int timeout_ms,
			  const Ring__Topology *t, struct check_env_invs *x);
void check_env_invs_free(struct check_env_invs *x);

/* The verdict, the issues and the corrected environment per node, through
 * the writer; plain prints the corrected environment as text after it. */
void check_env_render(struct writer *w, FILE *out, enum writer_format fmt,
		      const char *source, const Ring__Topology *t,
		      const struct check_env_result *res);

#define CHECK_ENV_NOT_GIVEN                                                    \
	"not given: no file, and no NCCL_* variable in this environment "      \
	"(ringctl ranks -f env prints one; check it with --env FILE)"

/* "2.30.7" (or "2.30.7-1", "2.30") as a comparable number, -1 when it
 * is not a version. */
long check_env_version(const char *s);

/* The whole command: file_or_dash NULL for the environment, "-" for
 * stdin; nccl_version NULL when not given. With no file and no NCCL_*
 * variable in the environment, the verdict is "not_given" (exit 0).
 * Exit status: 0 ok, 1 problems found, 2 could not check. */
int check_env_run(const char *sock, int timeout_ms, enum writer_format fmt,
		  const char *file_or_dash, const char *nccl_version);

#endif
