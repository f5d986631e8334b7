/* check nccl-env's rules over single variables (check_env_rules.c), for
 * the lint that runs them over each node's environment (check_env_lint.c).
 * Each adds its issues to res; node names the node judged ("" for all). */
#ifndef RING_CHECK_ENV_RULES_H
#define RING_CHECK_ENV_RULES_H

#include <stddef.h>

#include "check_env.h"

/* One issue: v the assignment (NULL: var, unset), the why formatted. */
void check_env_add(struct check_env_result *res, const char *level,
		   const struct check_env_var *v, const char *var,
		   const char *node, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
/* check_env_add, unless the same finding (variable, value, why) is there
 * already: then it stands for more than one node (node ""). */
void check_env_add_once(struct check_env_result *res, const char *level,
			const struct check_env_var *v, const char *var,
			const char *node, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
/* name's assignment in s, NULL when unset. */
const struct check_env_var *check_env_var(const struct check_env_set *s,
					  const char *name);

void check_env_names(const struct check_env_set *set,
		     struct check_env_result *res);
void check_env_algo(const struct check_env_set *set, const Ring__Topology *t,
		    const char *node, struct check_env_result *res);
void check_env_channels(const struct check_env_set *set, const char *node,
			struct check_env_result *res);
/* The ranks [i0, i1) of t that set is for. */
void check_env_socket(const struct check_env_set *set, const Ring__Topology *t,
		      const Ring__StatusReply *st, size_t i0, size_t i1,
		      const char *node, struct check_env_result *res);
void check_env_hca(const struct check_env_set *set, const Ring__Topology *t,
		   size_t i0, size_t i1, const char *node,
		   struct check_env_result *res);
void check_env_gid(const struct check_env_set *set, const Ring__Topology *t,
		   const Ring__Inventory *const *inv, size_t i0, size_t i1,
		   const char *node, struct check_env_result *res);

#endif
