/* check nccl-env's rules over single variables, each against the last
 * survey: names upstream NCCL does not read, the algorithm on a ring with
 * diagonals, channel counts against the ladder's saturation, the socket
 * interface, the HCA list and the GID index (against each function's GID
 * table); and the one way every rule records an issue (check_env_add). */
#include "check_env_rules.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ladder.h"
#include "ranks.h"
#include "render.h"

void check_env_add(struct check_env_result *res, const char *level,
		   const struct check_env_var *v, const char *var,
		   const char *node, const char *fix, const char *fmt, ...)
{
	struct check_env_issue *is;
	va_list ap;

	if (strcmp(level, "note"))
		res->counted++;
	if (!strcmp(level, "problem"))
		res->problems++;
	if (res->n >= CHECK_ENV_ISSUES_MAX) {
		res->dropped++;
		return;
	}
	is = &res->issues[res->n++];
	memset(is, 0, sizeof(*is));
	snprintf(is->level, sizeof(is->level), "%s", level);
	snprintf(is->variable, sizeof(is->variable), "%s", v ? v->name : var);
	snprintf(is->value, sizeof(is->value), "%s", v ? v->value : "");
	is->line = v ? v->line : 0;
	snprintf(is->node, sizeof(is->node), "%s", node ? node : "");
	snprintf(is->fix, sizeof(is->fix), "%s", fix ? fix : "");
	va_start(ap, fmt);
	if (vsnprintf(is->why, sizeof(is->why), fmt, ap) < 0)
		is->why[0] = '\0';
	va_end(ap);
}

/* check_env_add, unless the same finding (variable, value, why) is
 * there already: then it stands for more than one node (node ""). One
 * file for every node would otherwise say the same thing per node. */
void check_env_add_once(struct check_env_result *res, const char *level,
			const struct check_env_var *v, const char *var,
			const char *node, const char *fix, const char *fmt, ...)
{
	char why[sizeof(res->issues[0].why)];
	const char *name = v ? v->name : var, *value = v ? v->value : "";
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(why, sizeof(why), fmt, ap) < 0)
		why[0] = '\0';
	va_end(ap);
	for (size_t i = 0; res->shared && i < res->n; i++) {
		struct check_env_issue *is = &res->issues[i];

		if (strcmp(is->variable, name) || strcmp(is->value, value) ||
		    strcmp(is->why, why) || strcmp(is->level, level))
			continue;
		if (node && strcmp(is->node, node))
			is->node[0] = '\0';
		return;
	}
	check_env_add(res, level, v, var, node, fix, "%s", why);
}

const struct check_env_var *check_env_var(const struct check_env_set *s,
					  const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

void check_env_names(const struct check_env_set *set,
		     struct check_env_result *res)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct check_env_var *v = &set->v[i];
		/* A block's line concerns its node. */
		const char *node =
			v->block >= 0 ? set->blocks[v->block].node : NULL;

		/* A block pasted after another: easy to miss which wins. */
		if (v->prev_line && !strncmp(v->name, "NCCL_", 5))
			check_env_add(res, "note", v, NULL, node, "",
				      "set again after line %u: this value "
				      "wins, as in a shell",
				      v->prev_line);

		if (strncmp(v->name, "NCCL_", 5) || check_env_known(v->name))
			continue;
		if (!strcmp(v->name, CHECK_ENV_SWITCHLESS))
			check_env_add(
				res, "warning", v, NULL, node,
				"remove it; NCCL_ALGO=Ring and ranks in ring "
				"order (ringctl ranks) are what upstream NCCL "
				"needs",
				"not an upstream NCCL variable (a patched "
				"build's?): upstream NCCL ignores it and does "
				"not keep itself to ring neighbours");
		else
			check_env_add(res, "warning", v, NULL, node,
				      "remove it, or check it against the "
				      "NCCL build in use",
				      "not an upstream NCCL variable (a "
				      "patched build's?)");
	}
}

/* Two ranks that are not neighbours exist (a ring of more than 3). */
static int check_env_diagonals(const Ring__Topology *t)
{
	return !strcmp(t->kind, "ring") && t->n_ranks > 3;
}

/* NCCL_ALGO is a list ("Ring", "Tree,Ring", 2.24's "allreduce:tree;...",
 * "^tree"): only Ring, and nothing but Ring, keeps to ring neighbours. */
static int check_env_algo_ring_only(const char *val, char *bad, size_t len)
{
	const char *p = val;
	size_t w = 0;
	int ok = 1;

	bad[0] = '\0';
	if (*p == '^') {
		snprintf(bad, len, "an exclusion list");
		return 0;
	}
	while (*p) {
		size_t n = strcspn(p, ",;");
		const char *tok = p, *colon = memchr(p, ':', n);

		if (colon) {
			n -= (size_t)(colon + 1 - tok);
			tok = colon + 1;
		}
		while (n && *tok == ' ') {
			tok++;
			n--;
		}
		if (n && !(n == 4 && !strncasecmp(tok, "ring", 4))) {
			ok = 0;
			if (w < len)
				w += (size_t)snprintf(bad + w, len - w,
						      "%s%.*s", w ? ", " : "",
						      (int)n, tok);
		}
		p = tok + n;
		p += strspn(p, ",;");
	}
	if (!*val) {
		snprintf(bad, len, "an empty list");
		return 0;
	}
	return ok;
}

void check_env_algo(const struct check_env_set *set, const Ring__Topology *t,
		    const char *node, struct check_env_result *res)
{
	const struct check_env_var *v = check_env_var(set, "NCCL_ALGO");
	char bad[160];

	if (strcmp(t->kind, "ring"))
		return; /* ranks -f env sets no algorithm on a line or pair */
	if (!v) {
		if (check_env_diagonals(t))
			check_env_add(
				res, "problem", NULL, "NCCL_ALGO", node,
				"NCCL_ALGO=Ring",
				"unset on a switchless ring of %zu nodes: NCCL "
				"picks per collective and size, Tree "
				"included, and a tree connects ranks that are "
				"not ring neighbours (no data-plane path)",
				t->n_ranks);
		return;
	}
	if (check_env_algo_ring_only(v->value, bad, sizeof(bad)))
		return;
	check_env_add(res, "problem", v, NULL, node, "NCCL_ALGO=Ring",
		      "%s on a ring: only Ring keeps every connection between "
		      "ring neighbours; %s",
		      bad,
		      check_env_diagonals(t)
			      ? "the others connect ranks that have no "
				"data-plane path and hang"
			      : "the others find no better path here");
}

/* A decimal count 0..1024 (NCCL's channel counts are far below). */
static int check_env_count(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return *s && !*end && !errno && *out >= 0 && *out <= 1024 ? 0 : -1;
}

void check_env_channels(const struct check_env_set *set, const char *node,
			struct check_env_result *res)
{
	static const char *const names[2] = {"NCCL_MIN_NCHANNELS",
					     "NCCL_MAX_NCHANNELS"};
	const struct ladder_advice *sat = &res->sat;
	long val[2] = {-1, -1};
	char fix[96], when[32];

	render_format_time(sat->measured_ms, when, sizeof(when));
	snprintf(fix, sizeof(fix),
		 "NCCL_MIN_NCHANNELS=%u NCCL_MAX_NCHANNELS=%u",
		 sat->streams < 4 ? 4 : sat->streams,
		 sat->streams < 4 ? 4 : sat->streams);
	for (int k = 0; k < 2; k++) {
		const struct check_env_var *v = check_env_var(set, names[k]);

		if (!v)
			continue;
		if (check_env_count(v->value, &val[k]) < 0) {
			check_env_add(res, "problem", v, NULL, node, fix,
				      "not a channel count (0..1024)");
			continue;
		}
		if (sat->streams && (unsigned long)val[k] < sat->streams)
			check_env_add(
				res, "problem", v, NULL, node, fix,
				"%ld channel%s, fewer than the %u %s at which "
				"the survey's ladder (%s, %s) saturates: %.0f%% "
				"of %u %s (computed, median over %u edge%s "
				"measured up to %s)",
				val[k], val[k] == 1 ? "" : "s", sat->streams,
				!strcmp(sat->method, "rdma") ? "QPs"
							     : "streams",
				sat->ladder, sat->method, sat->pct_of_top,
				sat->top,
				!strcmp(sat->method, "rdma") ? "QPs"
							     : "streams",
				sat->edges, sat->edges == 1 ? "" : "s", when);
	}
	if (val[0] >= 0 && val[1] >= 0 && val[0] > val[1])
		check_env_add(res, "problem", check_env_var(set, names[0]),
			      NULL, node, fix,
			      "NCCL_MIN_NCHANNELS %ld is more than "
			      "NCCL_MAX_NCHANNELS %ld",
			      val[0], val[1]);
	if (val[0] < 0 && !check_env_var(set, names[0]) && sat->streams > 1)
		check_env_add(res, "warning", NULL, names[0], node, fix,
			      "unset: NCCL chooses its channel count itself "
			      "and may run fewer than the %u %s the ladder "
			      "needs (computed, %.0f%% of %u)",
			      sat->streams,
			      !strcmp(sat->method, "rdma") ? "QPs" : "streams",
			      sat->pct_of_top, sat->top);
}

/* NCCL's interface and device lists: "^" excludes, then "=" for exact
 * names, entries split at ',' (init.cc, utils.cc parseStringList; the
 * user guide's NCCL_SOCKET_IFNAME). port < 0: the entry names none. */
struct check_env_list {
	int exclude, exact;
	const char *p; /* the entries */
};

static void check_env_list_init(struct check_env_list *l, const char *val)
{
	l->exclude = *val == '^';
	val += l->exclude;
	l->exact = *val == '=';
	l->p = val + l->exact;
}

/* Does the list take name (with port, or -1 for an interface)? */
static int check_env_list_takes(const struct check_env_list *l,
				const char *name, long port)
{
	const char *p = l->p;
	size_t nl = strlen(name);
	int match = 0;

	while (*p && !match) {
		size_t n = strcspn(p, ",");
		const char *colon = memchr(p, ':', n);
		size_t en = colon ? (size_t)(colon - p) : n;
		long eport = -1;

		if (colon && port >= 0)
			eport = strtol(colon + 1, NULL, 10);
		if (en && (l->exact ? en == nl : en <= nl) &&
		    !strncmp(p, name, en) && (eport < 0 || eport == port))
			match = 1;
		p += n;
		p += *p == ',';
	}
	return l->exclude ? !match : match;
}

/* Data ports of a node: the interfaces its edges run over, and (from
 * status) those with carrier but no address. */
static void check_env_socket_node(const struct check_env_var *v,
				  const struct check_env_list *l,
				  const Ring__Topology *t,
				  const Ring__StatusReply *st,
				  const Ring__Rank *r,
				  struct check_env_result *res, const char *fix)
{
	if (*r->mgmt_interface &&
	    !check_env_list_takes(l, r->mgmt_interface, -1))
		check_env_add(res, "problem", v, NULL, r->node, fix,
			      "does not select %s's management interface %s "
			      "(NCCL's bootstrap would take another "
			      "interface, or none)",
			      r->node, r->mgmt_interface);
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		const char *ifn = !strcmp(e->a, r->node)   ? e->a_interface
				  : !strcmp(e->b, r->node) ? e->b_interface
							   : NULL;

		if (ifn && *ifn && strcmp(ifn, r->mgmt_interface) &&
		    check_env_list_takes(l, ifn, -1))
			check_env_add(res, "problem", v, NULL, r->node, fix,
				      "selects %s's data port %s: sockets "
				      "(bootstrap, rendezvous) must stay on "
				      "the management network; a data port "
				      "reaches one neighbour only",
				      r->node, ifn);
	}
	for (size_t i = 0; st && i < st->n_nodes; i++) {
		const Ring__NodeStatus *ns = st->nodes[i];

		if (strcmp(ns->node, r->node))
			continue;
		for (size_t k = 0; k < ns->n_unaddressed_up; k++)
			if (check_env_list_takes(l, ns->unaddressed_up[k], -1))
				check_env_add(
					res, "problem", v, NULL, r->node, fix,
					"selects %s's data port %s (carrier, "
					"no address)",
					r->node, ns->unaddressed_up[k]);
	}
}

void check_env_socket(const struct check_env_set *set, const Ring__Topology *t,
		      const Ring__StatusReply *st, size_t i0, size_t i1,
		      const char *node, struct check_env_result *res)
{
	const struct check_env_var *v =
		check_env_var(set, "NCCL_SOCKET_IFNAME");
	struct check_env_list l;
	char fix[160];
	const char *mif = t->n_ranks ? t->ranks[0]->mgmt_interface : "";
	int same = 1;

	for (size_t i = 1; i < t->n_ranks; i++)
		same &= !strcmp(t->ranks[i]->mgmt_interface, mif);
	if (same && *mif)
		snprintf(fix, sizeof(fix), "NCCL_SOCKET_IFNAME==%s", mif);
	else
		snprintf(fix, sizeof(fix),
			 "NCCL_SOCKET_IFNAME==<the node's management "
			 "interface> (see the corrected environment)");
	if (!v) {
		if (t->n_edges)
			check_env_add(res, "problem", NULL,
				      "NCCL_SOCKET_IFNAME", node, fix,
				      "unset: NCCL takes any interface but lo "
				      "and docker*, a data port included, "
				      "for its sockets (bootstrap)");
		return;
	}
	check_env_list_init(&l, v->value);
	for (size_t i = i0; i < i1; i++)
		check_env_socket_node(v, &l, t, st, t->ranks[i], res, fix);
}

/* "device:port" of Rank.hcas, split. */
static void check_env_hca_split(const char *hca, char *dev, size_t len,
				long *port)
{
	const char *colon = strrchr(hca, ':');
	size_t n = colon ? (size_t)(colon - hca) : strlen(hca);

	snprintf(dev, len, "%.*s", (int)n, hca);
	*port = colon ? strtol(colon + 1, NULL, 10) : -1;
}

void check_env_hca(const struct check_env_set *set, const Ring__Topology *t,
		   size_t i0, size_t i1, const char *node,
		   struct check_env_result *res)
{
	const struct check_env_var *v = check_env_var(set, "NCCL_IB_HCA");
	struct check_env_list l;

	if (v)
		check_env_list_init(&l, v->value);
	for (size_t i = i0; i < i1; i++) {
		const Ring__Rank *r = t->ranks[i];
		char fix[600];
		size_t w = 0;
		int first = 1;

		w += (size_t)snprintf(fix, sizeof(fix), "NCCL_IB_HCA==");
		for (size_t k = 0; k < r->n_hcas && w < sizeof(fix); k++)
			if (ranks_hca_printed(r, k)) {
				w += (size_t)snprintf(fix + w, sizeof(fix) - w,
						      "%s%s", first ? "" : ",",
						      r->hcas[k]);
				first = 0;
			}
		if (!v) {
			/* NCCL takes every device, unaddressed ones and
			 * those without a partner included. */
			if (r->n_hcas)
				check_env_add_once(
					res, "warning", NULL, "NCCL_IB_HCA",
					node, fix,
					"unset: NCCL uses every RDMA device, "
					"not only the functions that face the "
					"neighbours (ranks -f env names them)");
			continue;
		}
		for (size_t k = 0; k < r->n_hcas; k++) {
			char dev[128];
			long port;

			check_env_hca_split(r->hcas[k], dev, sizeof(dev),
					    &port);
			if (!ranks_hca_printed(r, k)) {
				if (check_env_list_takes(&l, dev, port))
					check_env_add(
						res, "problem", v, NULL,
						r->node, fix,
						"selects %s's function %s, "
						"which no function facing the "
						"other neighbour pairs with: "
						"NCCL's device for it names "
						"one cable's subnet, and a "
						"connection through it can "
						"hang",
						r->node, r->hcas[k]);
				continue;
			}
			if (check_env_list_takes(&l, dev, port))
				continue;
			/* Twins share no name: a device not named next_rdma
			 * or prev_rdma faces one of the two. */
			check_env_add(res, "problem", v, NULL, r->node, fix,
				      "leaves out %s's function %s, through "
				      "which it reaches %s%s%s: that cable "
				      "(or its PCIe half) stays unused",
				      r->node, r->hcas[k],
				      !strcmp(dev, r->next_rdma) ? r->next_node
				      : !strcmp(dev, r->prev_rdma)
					      ? r->prev_node
					      : r->next_node,
				      strcmp(dev, r->next_rdma) &&
						      strcmp(dev, r->prev_rdma)
					      ? " or "
					      : "",
				      strcmp(dev, r->next_rdma) &&
						      strcmp(dev, r->prev_rdma)
					      ? r->prev_node
					      : "");
		}
	}
}

/* An entry NCCL can use between cable neighbours on their own subnets:
 * RoCE v2 (routable, UDP) with an IPv4-mapped address. */
static int check_env_gid_good(const Ring__Gid *g)
{
	struct in6_addr a;

	return g && g->type && !strcasecmp(g->type, "RoCE v2") && g->gid &&
	       inet_pton(AF_INET6, g->gid, &a) == 1 && IN6_IS_ADDR_V4MAPPED(&a);
}

static const Ring__Gid *check_env_gid_at(const Ring__RdmaPort *p, long idx)
{
	for (size_t i = 0; i < p->n_gids; i++)
		if (p->gids[i]->index == idx)
			return p->gids[i];
	return NULL;
}

static const Ring__RdmaPort *check_env_inv_port(const Ring__Inventory *inv,
						const char *dev, long port)
{
	for (size_t i = 0; inv && i < inv->n_rdma_devices; i++) {
		const Ring__RdmaDevice *d = inv->rdma_devices[i];

		if (strcmp(d->name, dev))
			continue;
		for (size_t k = 0; k < d->n_ports; k++)
			if (d->ports[k]->port == port)
				return d->ports[k];
	}
	return NULL;
}

/* What stands at an index that is not the right one, for the why. */
static void check_env_gid_what(const Ring__Gid *g, char *buf, size_t len)
{
	const char *gid = g && g->gid ? g->gid : "";
	struct in6_addr a;

	if (!g)
		snprintf(buf, len, "no GID there");
	else if (g->type && !strcasecmp(g->type, "RoCE v2") &&
		 inet_pton(AF_INET6, gid, &a) == 1)
		snprintf(buf, len, "RoCE v2 %s, not IPv4-mapped", gid);
	else
		snprintf(buf, len, "%s %s",
			 g->type && *g->type ? g->type : "unknown type", gid);
}

/* The functions of r that NCCL will use: Rank.hcas, less those the
 * environment's NCCL_IB_HCA leaves out. */
static int check_env_gid_uses(const struct check_env_list *hca,
			      const char *hcaname, char *dev, size_t len,
			      long *port)
{
	check_env_hca_split(hcaname, dev, len, port);
	return !hca || check_env_list_takes(hca, dev, *port);
}

/* The node's GID tables (its inventory) against idx: 1 checked (issues
 * added), 0 nothing to check there (no table for any function used). */
static int check_env_gid_node(const struct check_env_var *v, long idx,
			      const struct check_env_list *hca,
			      const Ring__Rank *r, const Ring__Inventory *inv,
			      struct check_env_result *res)
{
	char wrong[360] = "", missing[200] = "", fits[200] = "";
	size_t ww = 0, wm = 0, wf = 0;
	long fit = -1;
	unsigned checked = 0;

	for (size_t k = 0; k < r->n_hcas; k++) {
		const Ring__RdmaPort *p;
		const Ring__Gid *g;
		char dev[128], what[160];
		long port;

		if (!check_env_gid_uses(hca, r->hcas[k], dev, sizeof(dev),
					&port))
			continue;
		p = check_env_inv_port(inv, dev, port);
		if (!p) {
			if (wm < sizeof(missing))
				wm += (size_t)snprintf(
					missing + wm, sizeof(missing) - wm,
					"%s%s", wm ? ", " : "", r->hcas[k]);
			continue;
		}
		checked++;
		g = check_env_gid_at(p, idx);
		if (check_env_gid_good(g))
			continue;
		check_env_gid_what(g, what, sizeof(what));
		if (ww < sizeof(wrong))
			ww += (size_t)snprintf(wrong + ww, sizeof(wrong) - ww,
					       "%s%s (%s)", ww ? ", " : "",
					       r->hcas[k], what);
	}
	if (*missing)
		check_env_add(res, "note", v, NULL, r->node, "",
			      "%s's function%s %s not in its inventory: no "
			      "GID table to check",
			      r->node, strchr(missing, ',') ? "s" : "",
			      missing);
	if (!checked)
		return 0;
	if (!*wrong) {
		if (r->gid_index >= 0 && r->gid_index != idx)
			check_env_add(res, "note", v, NULL, r->node, "",
				      "index %ld is a RoCE v2 IPv4 GID on "
				      "%s's functions too; the survey's RDMA "
				      "tests used index %d",
				      idx, r->node, r->gid_index);
		return 1;
	}
	/* The right index: the smallest that is RoCE v2 IPv4 on every
	 * function used; else each function's own. */
	for (long cand = 0; cand <= 255 && fit < 0; cand++) {
		int all = 1;

		for (size_t k = 0; k < r->n_hcas && all; k++) {
			const Ring__RdmaPort *p;
			char dev[128];
			long port;

			if (!check_env_gid_uses(hca, r->hcas[k], dev,
						sizeof(dev), &port) ||
			    !(p = check_env_inv_port(inv, dev, port)))
				continue;
			all = check_env_gid_good(check_env_gid_at(p, cand));
		}
		if (all)
			fit = cand;
	}
	if (fit >= 0) {
		char fix[64];

		snprintf(fix, sizeof(fix), "NCCL_IB_GID_INDEX=%ld", fit);
		check_env_add(res, "problem", v, NULL, r->node, fix,
			      "index %ld is not the RoCE v2 IPv4 GID on %s's "
			      "%s; index %ld is, on every function NCCL uses "
			      "there (inventory)",
			      idx, r->node, wrong, fit);
		return 1;
	}
	for (size_t k = 0; k < r->n_hcas; k++) {
		const Ring__RdmaPort *p;
		char dev[128];
		long port, own = -1;

		if (!check_env_gid_uses(hca, r->hcas[k], dev, sizeof(dev),
					&port) ||
		    !(p = check_env_inv_port(inv, dev, port)))
			continue;
		for (size_t i = 0; i < p->n_gids && own < 0; i++)
			if (check_env_gid_good(p->gids[i]))
				own = p->gids[i]->index;
		if (wf >= sizeof(fits))
			break;
		if (own >= 0)
			wf += (size_t)snprintf(fits + wf, sizeof(fits) - wf,
					       "%s%s %ld", wf ? ", " : "",
					       r->hcas[k], own);
		else
			wf += (size_t)snprintf(fits + wf, sizeof(fits) - wf,
					       "%s%s none", wf ? ", " : "",
					       r->hcas[k]);
	}
	check_env_add(res, "problem", v, NULL, r->node,
		      "give each function an IPv4 address (a RoCE v2 IPv4 "
		      "GID) at one index, or leave out those without",
		      "index %ld is not the RoCE v2 IPv4 GID on %s's %s; no "
		      "one index is, on every function NCCL uses there (%s)",
		      idx, r->node, wrong, fits);
	return 1;
}

void check_env_gid(const struct check_env_set *set, const Ring__Topology *t,
		   const Ring__Inventory *const *inv, size_t i0, size_t i1,
		   const char *node, struct check_env_result *res)
{
	const struct check_env_var *v = check_env_var(set, "NCCL_IB_GID_INDEX");
	const struct check_env_var *hv = check_env_var(set, "NCCL_IB_HCA");
	struct check_env_list hca;
	long idx;
	int measured = 0;

	if (!v)
		return;
	if (check_env_count(v->value, &idx) < 0 || idx > 255) {
		check_env_add(res, "problem", v, NULL, node,
			      "the measured index (see the corrected "
			      "environment), or leave it unset",
			      "not a GID index (0..255)");
		return;
	}
	if (hv)
		check_env_list_init(&hca, hv->value);
	for (size_t i = i0; i < i1; i++) {
		const Ring__Rank *r = t->ranks[i];
		char fix[64];

		if (!r->n_hcas)
			continue;
		if (r->nccl_gid_index < 0 || !*r->nccl_gid_note)
			check_env_add_once(
				res, "note", v, NULL, node, "",
				"ranks -f env leaves it to NCCL, whose default "
				"(>= 2.21) picks each function's RoCE v2 IPv4 "
				"entry: a fixed index breaks when an address "
				"change shifts the GID table");
		/* The node's own GID tables, when its inventory is here. */
		if (inv && inv[i] &&
		    check_env_gid_node(v, idx, hv ? &hca : NULL, r, inv[i],
				       res)) {
			measured = 1;
			continue;
		}
		/* Else what the survey's RDMA tests used. */
		if (r->gid_index < 0)
			continue;
		measured = 1;
		if (r->gid_index == idx)
			continue;
		snprintf(fix, sizeof(fix), "NCCL_IB_GID_INDEX=%d",
			 r->gid_index);
		check_env_add(res, "problem", v, NULL, r->node, fix,
			      "%s's neighbour-facing functions use GID index "
			      "%d (measured: the RoCE v2 IPv4 GID the "
			      "survey's RDMA tests used), not %ld",
			      r->node, r->gid_index, idx);
	}
	if (!measured)
		check_env_add(res, "note", v, NULL, node, "",
			      "not checked: no inventory with the functions' "
			      "GID tables, and the last survey measured no "
			      "GID index (no RDMA test, or the functions "
			      "disagree)");
}
