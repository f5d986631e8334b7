/* check nccl-env's lint: every environment a node sees (the lines before
 * the blocks and its own block) against the last survey: the per-variable
 * rules (check_env_rules.c), then the comparison table of what `ranks -f
 * env` sets (a reason per variable), merging that would break it, the
 * NCCL version, and blocks printed for another rank order. */
#include "check_env_rules.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ladder_advice.h"
#include "ranks.h"

/* Does r face two different neighbours over RDMA functions? Then NCCL
 * needs subnet-aware routing to reach each over the one facing it. */
static int check_env_routed(const Ring__Rank *r)
{
	return r->n_hcas && *r->next_node && *r->prev_node &&
	       strcmp(r->next_node, r->prev_node);
}

/* What ranks -f env sets and a job's environment should set the same
 * way, and what it costs when it does not. unset NULL: not judged when
 * absent (the launcher variables: `check nccl-env` without a file reads
 * only NCCL_*). The variables with rules of their own are not here. */
struct check_env_printed_rule {
	const char *name;
	const char *unset; /* level when absent, NULL: not judged */
	const char *differs;
	const char *why;
};

static const struct check_env_printed_rule check_env_printed_rules[] = {
	{"NCCL_IB_SUBNET_AWARE_ROUTING", "problem", "problem",
	 "without it NCCL picks a function without regard to the peer's "
	 "cable; where that function faces the other neighbour, "
	 "ibv_modify_qp fails with 110 (Connection timed out)"},
	{"NCCL_NET_FORCE_MERGE", "problem", "problem",
	 "an NCCL device of functions facing one neighbour names only that "
	 "cable's subnet to its peers; where both ends picked functions "
	 "facing away from each other, the connection times out (110)"},
	{"NCCL_IB_SUBNET_PREFIX_LEN", "warning", "warning",
	 "NCCL masks both ends' GIDs with this prefix (default 24) to tell "
	 "the cables apart; the survey computed the prefix under which the "
	 "functions facing the two neighbours share no subnet"},
	{"NCCL_CROSS_NIC", "warning", "warning",
	 "a ring channel enters on the function facing the previous rank "
	 "and leaves on the one facing the next: different NICs"},
	{"NCCL_NET_PLUGIN", "warning", "warning",
	 "an external network plugin in the image would replace the "
	 "built-in IB transport and its subnet-aware routing"},
	{"NCCL_NET", "warning", "warning",
	 "without NCCL_NET=IB a broken RDMA set-up falls back to sockets "
	 "over the management network, silently and slowly"},
	{"NODE_RANK", NULL, "problem",
	 "not this node's rank: the rank order changed since the file was "
	 "written, or the block is another node's (print it again)"},
	{"MASTER_ADDR", NULL, "problem",
	 "the rendezvous must be rank 0's management address (a data-plane "
	 "address hangs the launcher)"},
	{"GLOO_SOCKET_IFNAME", NULL, "warning",
	 "Gloo's sockets belong on the management interface"},
	{"UCX_NET_DEVICES", NULL, "warning",
	 "UCX belongs on the management interface; a data port reaches one "
	 "neighbour only"},
	{"OMPI_MCA_btl_tcp_if_include", NULL, "warning",
	 "Open MPI's TCP transport belongs on the management interface"},
	{"OMPI_MCA_oob_tcp_if_include", NULL, "warning",
	 "Open MPI's out-of-band channel belongs on the management "
	 "interface"},
};

/* Is name set anywhere in set (before the blocks or in one)? */
int check_env_has_var(const struct check_env_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->v[i].name, name))
			return 1;
	return 0;
}

/* Judged by their own rules above. */
static int check_env_has_rule(const char *name)
{
	static const char *const own[] = {
		"NCCL_ALGO",	      "NCCL_MIN_NCHANNELS",
		"NCCL_MAX_NCHANNELS", "NCCL_SOCKET_IFNAME",
		"NCCL_IB_HCA",	      "NCCL_IB_GID_INDEX",
	};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strcmp(name, own[i]))
			return 1;
	return 0;
}

/* rank i's block of ranks -f env, parsed; 0 or -1 (refused there). */
static int check_env_printed_set(const Ring__Topology *t, size_t i,
				 struct check_env_set *out)
{
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int rc = -1;

	out->v = NULL;
	out->n = 0;
	out->blocks = NULL;
	out->n_blocks = 0;
	if (!m)
		return -1;
	if (ranks_env_node(m, t, i) < 0) {
		fclose(m);
		goto out;
	}
	if (fclose(m) == 0)
		rc = check_env_parse(buf, len, "ranks -f env", out, err,
				     sizeof(err));
out:
	free(buf);
	return rc;
}

/* Every variable ranks -f env sets for the ranks [i0, i1) that set
 * leaves out or sets another way. */
static void check_env_printed(const struct check_env_set *set,
			      const Ring__Topology *t, size_t i0, size_t i1,
			      struct check_env_result *res)
{
	for (size_t i = i0; i < i1; i++) {
		const Ring__Rank *r = t->ranks[i];
		struct check_env_set pset;

		if (check_env_printed_set(t, i, &pset) < 0)
			return;
		for (size_t k = 0; k < pset.n; k++) {
			const struct check_env_var *pv = &pset.v[k];
			const struct check_env_var *v =
				check_env_var(set, pv->name);
			const struct check_env_printed_rule *ru = NULL;
			char fix[CHECK_ENV_NAME_MAX + 1100];

			if (check_env_has_rule(pv->name) ||
			    (res->shared && !strcmp(pv->name, "NODE_RANK")))
				continue;
			if (v && !strcmp(v->value, pv->value))
				continue;
			for (size_t q = 0;
			     q < sizeof(check_env_printed_rules) /
					 sizeof(check_env_printed_rules[0]);
			     q++)
				if (!strcmp(check_env_printed_rules[q].name,
					    pv->name))
					ru = &check_env_printed_rules[q];
			if (!ru && strncmp(pv->name, "NCCL_", 5))
				continue;
			if (!v && ru && !ru->unset)
				continue;
			snprintf(fix, sizeof(fix), "%s=%s", pv->name,
				 pv->value);
			if (!v)
				check_env_add_once(
					res, ru ? ru->unset : "warning", NULL,
					pv->name, r->node, fix,
					"unset; ranks -f env sets %s: %s", fix,
					ru ? ru->why
					   : "the survey's environment sets it");
			else
				check_env_add_once(
					res, ru ? ru->differs : "warning", v,
					NULL, r->node, fix,
					"ranks -f env sets %s: %s", fix,
					ru ? ru->why
					   : "the survey's environment sets it");
		}
		check_env_set_free(&pset);
	}
}

/* Variables ranks -f env leaves alone that would break what it sets. */
static void check_env_merging(const struct check_env_set *set,
			      const Ring__Topology *t, size_t i0, size_t i1,
			      const char *node, struct check_env_result *res)
{
	const struct check_env_var *v =
		check_env_var(set, "NCCL_IB_MERGE_NICS");
	const struct check_env_var *lv =
		check_env_var(set, "NCCL_NET_MERGE_LEVEL");
	int routed = 0, automatic = 0;

	for (size_t i = i0; i < i1; i++) {
		routed |= check_env_routed(t->ranks[i]);
		automatic |= t->ranks[i]->nic_groups_automatic;
	}
	if (!routed)
		return;
	if (v && !strcmp(v->value, "0"))
		check_env_add_once(
			res, "problem", v, NULL, node,
			"leave it unset (NCCL's default, 1)",
			"every NCCL device is then one function, whose "
			"listener names only its own cable's subnet: where "
			"both ends picked functions facing away from each "
			"other (cables p0 to p0 or p1 to p1), the connection "
			"times out (ibv_modify_qp 110)");
	if (lv && automatic && !strcasecmp(lv->value, "LOC"))
		check_env_add_once(
			res, "problem", lv, NULL, node,
			"leave it unset (NCCL's default, PORT)",
			"LOC stops NCCL fusing each PCI device's functions, "
			"one facing each neighbour, into one device: each "
			"function's listener then names only its own cable's "
			"subnet, and a connection can time out (110)");
}

long check_env_version(const char *s)
{
	unsigned long part[3] = {0, 0, 0};
	size_t n = 0;
	char *end;

	if (!s || !*s)
		return -1;
	for (;;) {
		if (*s < '0' || *s > '9')
			return -1;
		part[n] = strtoul(s, &end, 10);
		if (part[n] > 999)
			return -1;
		n++;
		s = end;
		if (*s != '.' || n == 3)
			break;
		s++;
	}
	/* "2.30.7-1", NCCL's tags: the package revision is not compared. */
	if (n < 2 || (*s && *s != '-'))
		return -1;
	return (long)(part[0] * 1000000 + part[1] * 1000 + part[2]);
}

/* The NCCL the environment needs: subnet-aware routing (2.30.7) where a
 * node faces two neighbours. */
static void check_env_nccl_version(const Ring__Topology *t,
				   struct check_env_result *res)
{
	long need = check_env_version(RANKS_NCCL_MIN);
	long have = check_env_version(res->nccl_version);
	int routed = 0;

	for (size_t i = 0; i < t->n_ranks; i++)
		routed |= check_env_routed(t->ranks[i]);
	if (!routed)
		return;
	if (have < 0)
		check_env_add(
			res, "note", NULL, "--nccl-version", NULL,
			"NCCL >= " RANKS_NCCL_MIN,
			"not given: this ring needs NCCL >= " RANKS_NCCL_MIN
			" (subnet-aware routing); an older NCCL ignores "
			"NCCL_IB_SUBNET_AWARE_ROUTING and is likely to "
			"fail here with ibv_modify_qp 110");
	else if (have < need)
		check_env_add(res, "problem", NULL, "--nccl-version", NULL,
			      "NCCL >= " RANKS_NCCL_MIN,
			      "NCCL %s ignores NCCL_IB_SUBNET_AWARE_ROUTING "
			      "(first in " RANKS_NCCL_MIN
			      "): it picks functions "
			      "without regard to the peer's cable, and a "
			      "connection whose function faces the other "
			      "neighbour fails with ibv_modify_qp 110",
			      res->nccl_version);
}

/* The environment node sees: the lines before any block, then its own
 * block's over them. The view's strings are set's (free view->v only). */
static int check_env_view(const struct check_env_set *set, int block,
			  struct check_env_set *view)
{
	memset(view, 0, sizeof(*view));
	view->v = calloc(set->n + 1, sizeof(*view->v));
	if (!view->v)
		return -1;
	for (int pass = 0; pass < 2 && (!pass || block >= 0); pass++)
		for (size_t i = 0; i < set->n; i++) {
			const struct check_env_var *v = &set->v[i];
			size_t k;

			if (v->block != (pass ? block : -1))
				continue;
			for (k = 0;
			     k < view->n && strcmp(view->v[k].name, v->name);
			     k++)
				;
			view->v[k] = *v;
			if (k == view->n)
				view->n++;
		}
	return 0;
}

/* Blocks that name no rank, or another rank than the node has now. */
static void check_env_blocks(const struct check_env_set *set,
			     const Ring__Topology *t,
			     struct check_env_result *res)
{
	for (size_t b = 0; b < set->n_blocks; b++) {
		const struct check_env_block *bl = &set->blocks[b];
		const Ring__Rank *r = NULL;
		char var[CHECK_ENV_NAME_MAX + 16];

		for (size_t i = 0; i < t->n_ranks && !r; i++)
			if (!strcmp(t->ranks[i]->node, bl->node))
				r = t->ranks[i];
		snprintf(var, sizeof(var), "# %s (rank %u)", bl->node,
			 bl->rank);
		if (!r)
			check_env_add(res, "warning", NULL, var, bl->node,
				      "remove the block, or survey again",
				      "line %u: a block for %s, which is not a "
				      "rank of the last survey",
				      bl->line, bl->node);
		else if (r->rank != bl->rank)
			check_env_add(res, "problem", NULL, var, bl->node,
				      "print the environment again (ringctl "
				      "ranks -f env)",
				      "line %u: %s is rank %u now, not %u: the "
				      "rank order changed since this was "
				      "written",
				      bl->line, bl->node, r->rank, bl->rank);
	}
}

/* Every rule over one environment and the ranks [i0, i1) it is for;
 * node names them in the findings (NULL: one file for every node). */
static void check_env_scope(const struct check_env_set *set,
			    const Ring__Topology *t,
			    const Ring__StatusReply *st,
			    const Ring__Inventory *const *inv, size_t i0,
			    size_t i1, const char *node,
			    struct check_env_result *res)
{
	check_env_algo(set, t, node, res);
	check_env_channels(set, node, res);
	check_env_socket(set, t, st, i0, i1, node, res);
	check_env_hca(set, t, i0, i1, node, res);
	check_env_gid(set, t, inv, i0, i1, node, res);
	check_env_printed(set, t, i0, i1, res);
	check_env_merging(set, t, i0, i1, node, res);
}

void check_env_lint(const struct check_env_set *set, const Ring__Topology *t,
		    const Ring__StatusReply *st,
		    const Ring__Inventory *const *inv,
		    struct check_env_result *res)
{
	res->n = res->dropped = res->counted = res->problems = 0;
	ladder_advice_compute(t, &res->sat);
	check_env_names(set, res);
	check_env_nccl_version(t, res);
	/* One file for every node: each finding once. */
	res->shared = !set->n_blocks;
	if (res->shared) {
		check_env_scope(set, t, st, inv, 0, t->n_ranks, NULL, res);
		return;
	}
	/* Each node's own block: nothing leaks from one to another. */
	check_env_blocks(set, t, res);
	for (size_t i = 0; i < t->n_ranks; i++) {
		const Ring__Rank *r = t->ranks[i];
		struct check_env_set view;
		int block = -1;

		for (size_t b = 0; b < set->n_blocks; b++)
			if (!strcmp(set->blocks[b].node, r->node))
				block = (int)b;
		/* A file of one node's block checks that node. */
		if (block < 0) {
			check_env_add(res, "note", NULL, "NODE_RANK", r->node,
				      "",
				      "no block for %s in this file: not "
				      "checked",
				      r->node);
			continue;
		}
		if (check_env_view(set, block, &view) < 0)
			continue;
		check_env_scope(&view, t, st, inv, i, i + 1, r->node, res);
		free(view.v);
	}
}
