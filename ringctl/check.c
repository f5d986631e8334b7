/* ringctl check ranks / rendezvous: a launcher's rank order and rendezvous
 * address against the last survey, before a job is started. */
#include "check.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "error_report.h"
#include "render.h"

/* getaddrinfo answers beyond these are not looked at: a launcher tries
 * the first ones. */
#define CHECK_RESOLVE_MAX 8

/* "10.89.1.1/30" -> "10.89.1.1" into buf. */
static const char *check_bare(const char *addr, char *buf, size_t len)
{
	size_t n = strcspn(addr, "/");

	snprintf(buf, len, "%.*s", (int)n, addr);
	return buf;
}

/* Two numeric addresses are the same when they parse to the same bytes
 * ("::ffff:10.0.0.1" is not "10.0.0.1" to a launcher either). */
static int check_same_address(const char *a, const char *b)
{
	unsigned char x[16], y[16];
	char ba[INET6_ADDRSTRLEN + 8], bb[INET6_ADDRSTRLEN + 8];

	check_bare(a, ba, sizeof(ba));
	check_bare(b, bb, sizeof(bb));
	if (inet_pton(AF_INET, ba, x) == 1)
		return inet_pton(AF_INET, bb, y) == 1 && !memcmp(x, y, 4);
	if (inet_pton(AF_INET6, ba, x) == 1)
		return inet_pton(AF_INET6, bb, y) == 1 && !memcmp(x, y, 16);
	return 0;
}

void check_match_address(const Ring__StatusReply *st, const char *addr,
			 struct check_addr *out)
{
	const Ring__Topology *t = st->topology;

	memset(out, 0, sizeof(*out));
	snprintf(out->address, sizeof(out->address), "%s", addr);
	for (size_t i = 0; i < st->n_nodes; i++)
		if (*st->nodes[i]->mgmt_address &&
		    check_same_address(st->nodes[i]->mgmt_address, addr)) {
			out->kind = CHECK_ADDR_MGMT;
			out->node = st->nodes[i]->node;
			return;
		}
	for (size_t i = 0; t && i < t->n_ranks; i++)
		if (check_same_address(t->ranks[i]->mgmt_address, addr)) {
			out->kind = CHECK_ADDR_MGMT;
			out->node = t->ranks[i]->node;
			return;
		}
	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		int on_a = check_same_address(e->a_address, addr);

		if (!on_a && !check_same_address(e->b_address, addr))
			continue;
		out->kind = CHECK_ADDR_DATA;
		out->node = on_a ? e->a : e->b;
		out->peer = on_a ? e->b : e->a;
		out->interface = on_a ? e->a_interface : e->b_interface;
		return;
	}
	out->kind = CHECK_ADDR_UNKNOWN;
}

/* A node ringd knows by this name, or NULL. */
static const char *check_node_named(const Ring__StatusReply *st,
				    const char *name)
{
	const Ring__Topology *t = st->topology;

	for (size_t i = 0; i < st->n_nodes; i++)
		if (!strcmp(st->nodes[i]->node, name))
			return st->nodes[i]->node;
	for (size_t i = 0; t && i < t->n_ranks; i++)
		if (!strcmp(t->ranks[i]->node, name))
			return t->ranks[i]->node;
	return NULL;
}

/* Up to max numeric addresses host resolves to here; -1 when none. */
static int check_getaddrinfo(const char *host, char (*addrs)[INET6_ADDRSTRLEN],
			     int max, int *numeric)
{
	struct addrinfo hints, *res = NULL, *ai;
	int n = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST;
	*numeric = getaddrinfo(host, NULL, &hints, &res) == 0;
	if (!*numeric) {
		hints.ai_flags = 0;
		if (getaddrinfo(host, NULL, &hints, &res) != 0)
			return -1;
	}
	for (ai = res; ai && n < max; ai = ai->ai_next) {
		const void *p =
			ai->ai_family == AF_INET
				? (const void *)&((struct sockaddr_in *)(void *)
							  ai->ai_addr)
					  ->sin_addr
				: (const void *)&(
					  (struct sockaddr_in6 *)(void *)
						  ai->ai_addr)
					  ->sin6_addr;
		int dup = 0;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		if (!inet_ntop(ai->ai_family, p, addrs[n], INET6_ADDRSTRLEN))
			continue;
		for (int k = 0; k < n; k++)
			dup |= !strcmp(addrs[k], addrs[n]);
		n += !dup;
	}
	freeaddrinfo(res);
	return n ? n : -1;
}

int check_resolve(const Ring__StatusReply *st, const char *host,
		  struct check_addr *out, char *how, size_t howlen)
{
	char addrs[CHECK_RESOLVE_MAX][INET6_ADDRSTRLEN];
	int numeric = 0, n;
	const char *named = check_node_named(st, host);
	size_t used = 0;

	memset(out, 0, sizeof(*out));
	n = check_getaddrinfo(host, addrs, CHECK_RESOLVE_MAX, &numeric);
	how[0] = '\0';
	for (int i = 0; i < n; i++) {
		used += (size_t)snprintf(how + used,
					 used < howlen ? howlen - used : 0,
					 "%s%s", i ? " " : "", addrs[i]);
		if (used >= howlen)
			break;
	}
	/* The launcher connects to the first address that answers: the
	 * first one ringd knows stands for it. */
	for (int i = 0; i < n; i++) {
		check_match_address(st, addrs[i], out);
		out->resolved = n;
		if (out->kind != CHECK_ADDR_UNKNOWN)
			return 0;
	}
	if (named) {
		out->kind = CHECK_ADDR_NAME;
		out->node = named;
		out->resolved = n > 0 ? n : 0;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	out->resolved = n > 0 ? n : 0;
	if (n > 0)
		snprintf(out->address, sizeof(out->address), "%s", addrs[0]);
	return -1;
}

int check_edge(const Ring__Topology *t, const char *a, const char *b)
{
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if ((!strcmp(e->a, a) && !strcmp(e->b, b)) ||
		    (!strcmp(e->a, b) && !strcmp(e->b, a)))
			return (int)i;
	}
	return -1;
}

/* The cable between a and b that works: surveyed, and not down in the
 * coordinator's live view now. */
static int check_cable_ok(const Ring__Topology *t, const char *a, const char *b)
{
	int e = check_edge(t, a, b);

	return e >= 0 && strcmp(t->edges[e]->live_state, "down");
}

/* Pairs of consecutive ranks in nodes[order[k]] without a working
 * cable (two ranks: one pair, its cable carries both ways). */
static size_t check_count_bad(const Ring__Topology *t, const char **nodes,
			      const size_t *order, size_t n)
{
	size_t steps = n < 2 ? 0 : n == 2 ? 1 : n, bad = 0;

	for (size_t i = 0; i < steps; i++)
		bad += !check_cable_ok(
			t, nodes[order ? order[i] : i],
			nodes[order ? order[(i + 1) % n] : (i + 1) % n]);
	return bad;
}

static long check_order_index(const Ring__Topology *t, const char *node)
{
	for (size_t i = 0; i < t->n_order; i++)
		if (!strcmp(t->order[i], node))
			return (long)i;
	return -1;
}

int check_ranks_corrected(const Ring__Topology *t, const char *const *nodes,
			  size_t n, size_t *corrected, char *err, size_t errlen)
{
	size_t m = t->n_order, k = 0;
	long start, dir = 1;
	int ring = !strcmp(t->kind, "ring");
	long *at;

	if (!n)
		return 0;
	at = calloc(m ? m : 1, sizeof(*at));
	if (!at) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < m; i++)
		at[i] = -1;
	for (size_t i = 0; i < n; i++) {
		long o = check_order_index(t, nodes[i]);

		if (o < 0) {
			snprintf(err, errlen,
				 "%s is not in the surveyed order (%s)",
				 nodes[i], t->kind);
			free(at);
			return -1;
		}
		if (at[o] >= 0) {
			snprintf(err, errlen, "%s is rank %ld and rank %zu",
				 nodes[i], at[o], i);
			free(at);
			return -1;
		}
		at[o] = (long)i;
	}
	start = check_order_index(t, nodes[0]);
	if (ring) {
		/* Rank 0 stays; the ring runs the way the file's second host
		 * lies from it, if it is a neighbour before it. */
		long back = (start + (long)m - 1) % (long)m;

		if (n > 1 && !strcmp(t->order[back], nodes[1]))
			dir = -1;
		for (size_t s = 0; s < m; s++) {
			long o =
				(start + dir * (long)s + (long)m * 2) % (long)m;

			if (at[o] >= 0)
				corrected[k++] = (size_t)at[o];
		}
	} else {
		/* A line has ends: walk it from the end nearer rank 0. */
		dir = start * 2 < (long)m ? 1 : -1;
		for (size_t s = 0; s < m; s++) {
			long o = dir > 0 ? (long)s : (long)m - 1 - (long)s;

			if (at[o] >= 0)
				corrected[k++] = (size_t)at[o];
		}
	}
	free(at);
	return 0;
}

/* ------------------------------------------------------------ ranks */

static const Ring__Rank *check_rank_of(const Ring__Topology *t,
				       const char *node)
{
	for (size_t i = 0; i < t->n_ranks; i++)
		if (!strcmp(t->ranks[i]->node, node))
			return t->ranks[i];
	return NULL;
}

/* node's side of edge e: its interface, address and the GID the survey's
 * RDMA test used (may be ""). */
static void check_edge_side(const Ring__Edge *e, const char *node,
			    const char **iface, const char **addr,
			    const char **gid)
{
	int a = !strcmp(e->a, node);

	*iface = a ? e->a_interface : e->b_interface;
	*addr = a ? e->a_address : e->b_address;
	*gid = a ? e->a_gid : e->b_gid;
}

/* The GID NCCL would use on node's function facing `toward`: measured when
 * the survey's RDMA test recorded it, else computed from the IPv4 data
 * address (RoCE v2's IPv4-mapped GID). */
static void check_gid(struct writer *w, const char *key,
		      const Ring__Topology *t, const char *node,
		      const char *toward, const char **iface_out)
{
	int ei = toward && *toward ? check_edge(t, node, toward) : -1;
	const char *iface = "", *addr = "", *gid = "";
	char buf[INET6_ADDRSTRLEN + 16], k[64], bare[INET6_ADDRSTRLEN + 8];
	unsigned char b4[4];

	if (ei >= 0)
		check_edge_side(t->edges[ei], node, &iface, &addr, &gid);
	*iface_out = iface;
	if (*gid) {
		snprintf(k, sizeof(k), "%s_measured", key);
		writer_str(w, k, gid);
		return;
	}
	snprintf(k, sizeof(k), "%s_computed", key);
	check_bare(addr, bare, sizeof(bare));
	if (inet_pton(AF_INET, bare, b4) == 1) {
		snprintf(buf, sizeof(buf), "::ffff:%s", bare);
		writer_str(w, k, buf);
	} else {
		writer_str(w, k, *bare ? bare : "");
	}
}

/* The function NCCL would use on node toward its published next (or
 * previous) rank: "rocep1s0f0:1 (enp1s0f0np0)" or "eth2". */
static void check_function(char *buf, size_t len, const Ring__Rank *r, int next)
{
	const char *rdma = next ? r->next_rdma : r->prev_rdma;
	const char *ifn = next ? r->next_interface : r->prev_interface;
	const char *hca = rdma;

	for (size_t k = 0; *rdma && k < r->n_hcas; k++)
		if (!strncmp(r->hcas[k], rdma, strlen(rdma)) &&
		    r->hcas[k][strlen(rdma)] == ':')
			hca = r->hcas[k];
	if (*rdma)
		snprintf(buf, len, "%s (%s)", hca, ifn);
	else
		snprintf(buf, len, "%s", *ifn ? ifn : "?");
}

/* Consecutive ranks whose cable the coordinator sees down now. */
static void check_ranks_down(struct writer *w, const Ring__Edge *e, size_t i,
			     const char *a, size_t j, const char *b)
{
	char pair[300], text[1200], ts[64];

	snprintf(pair, sizeof(pair), "%s-%s", a, b);
	render_format_time(e->live_since_ms, ts, sizeof(ts));
	writer_obj_start(w, NULL);
	writer_str(w, "pair", pair);
	writer_uint(w, "rank", i);
	writer_str(w, "node", a);
	writer_uint(w, "next_rank", j);
	writer_str(w, "next_node", b);
	writer_str(w, "cable_down", e->live_reason);
	writer_str(w, "error_predicted", CHECK_RANKS_ERROR);
	snprintf(text, sizeof(text),
		 "%s (rank %zu) and %s (rank %zu) are cable neighbours, but "
		 "their cable is down since %s (%s): NCCL cannot connect "
		 "them until it is back",
		 a, i, b, j, ts, *e->live_reason ? e->live_reason : "?");
	writer_str(w, "text", text);
	writer_obj_end(w);
}

/* One consecutive pair without a cable: who, over what, and the failure
 * the reference cluster saw. */
static void check_ranks_problem(struct writer *w, const Ring__Topology *t,
				size_t i, const char *a, size_t j,
				const char *b)
{
	const Ring__Rank *ra = check_rank_of(t, a), *rb = check_rank_of(t, b);
	char fa[300] = "?", fb[300] = "?", pair[300], text[1500];
	const char *ia = "", *ib = "";

	snprintf(pair, sizeof(pair), "%s-%s", a, b);
	writer_obj_start(w, NULL);
	writer_str(w, "pair", pair);
	writer_uint(w, "rank", i);
	writer_str(w, "node", a);
	writer_uint(w, "next_rank", j);
	writer_str(w, "next_node", b);
	if (ra)
		check_function(fa, sizeof(fa), ra, 1);
	if (rb)
		check_function(fb, sizeof(fb), rb, 0);
	writer_str(w, "function", fa);
	writer_str(w, "next_function", fb);
	check_gid(w, "local_gid", t, a, ra ? ra->next_node : NULL, &ia);
	check_gid(w, "remote_gid", t, b, rb ? rb->prev_node : NULL, &ib);
	if (ra && (ra->n_hcas ? ra->gid_index : ra->next_gid_index) >= 0)
		writer_int(w, "gid_index_measured",
			   ra->n_hcas ? ra->gid_index : ra->next_gid_index);
	writer_str(w, "error_predicted", CHECK_RANKS_ERROR);
	snprintf(text, sizeof(text),
		 "%s (rank %zu) and %s (rank %zu) are consecutive ranks but "
		 "no cable joins them: NCCL on %s would use %s, which is "
		 "cabled to %s, not %s; %s's %s is on another subnet with no "
		 "data-plane path from %s, so startup fails with '%s' (the "
		 "reference cluster's rank-order failure)",
		 a, i, b, j, a, fa, ra && *ra->next_node ? ra->next_node : "?",
		 b, b, fb, a, CHECK_RANKS_ERROR);
	writer_str(w, "text", text);
	writer_obj_end(w);
}

/* Measured: when the cables were surveyed and the addresses reported;
 * computed: everything this command derives from them. */
static void check_provenance(struct writer *w, const Ring__StatusReply *st,
			     const char *computed)
{
	const Ring__Topology *t = st->topology;
	char ts[64];

	render_format_time(t->surveyed_ms, ts, sizeof(ts));
	writer_str(w, "cables_measured", ts);
	render_format_time(st->now_ms, ts, sizeof(ts));
	writer_str(w, "coordinator_read", ts);
	writer_str(w, "computed", computed);
}

/* The file's lines again, ranks renumbered into the measured order: a
 * list for programs; for people, after the rest, a block to paste (its
 * one comment line is a comment in every one of these formats). */
static void check_ranks_corrected_list(struct writer *w,
				       const struct check_hosts *h,
				       const size_t *corrected)
{
	char line[CHECK_HOSTS_LINE_MAX + 16];

	writer_list_start(w, "corrected");
	for (size_t k = 0; k < h->n; k++)
		if (check_hosts_line(h, corrected[k], (unsigned)k, line,
				     sizeof(line)) == 0)
			writer_str(w, NULL, line);
	writer_list_end(w);
}

static void check_ranks_corrected_block(FILE *out, const struct check_hosts *h,
					const Ring__Topology *t,
					const size_t *corrected)
{
	char line[CHECK_HOSTS_LINE_MAX + 16], ts[64];

	render_format_time(t->surveyed_ms, ts, sizeof(ts));
	fprintf(out,
		"\n# corrected by ringctl check ranks: the %s's order "
		"surveyed %s, rank 0 kept\n",
		t->kind, ts);
	for (size_t k = 0; k < h->n; k++)
		if (check_hosts_line(h, corrected[k], (unsigned)k, line,
				     sizeof(line)) == 0)
			fprintf(out, "%s\n", line);
}

/* Every host to its node; CHECK_CANNOT with file:line when one is no
 * node ringd knows. */
static int check_ranks_resolve(const struct check_hosts *h, const char *name,
			       const Ring__StatusReply *st,
			       struct check_addr *where, const char **nodes)
{
	char how[512];

	for (size_t i = 0; i < h->n; i++) {
		if (check_resolve(st, h->v[i].host, &where[i], how,
				  sizeof(how)) < 0) {
			error_report(CHECK_CANNOT, "unknown_host", h->v[i].host,
				     NULL,
				     "%s:%u: '%s' is no node ringd knows "
				     "(%s%s here)",
				     name, h->v[i].lineno, h->v[i].host,
				     where[i].resolved ? "it resolves to "
						       : "it does not resolve",
				     how);
			return CHECK_CANNOT;
		}
		nodes[i] = where[i].node;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(nodes[k], nodes[i])) {
				error_report(
					CHECK_CANNOT, "repeated_node",
					h->v[i].host, NULL,
					"%s:%u: '%s' is %s again "
					"(line %u): a ring order names each "
					"node once",
					name, h->v[i].lineno, h->v[i].host,
					nodes[i], h->v[k].lineno);
				return CHECK_CANNOT;
			}
	}
	return CHECK_OK;
}

static const char *check_kind_name(enum check_addr_kind k)
{
	return k == CHECK_ADDR_MGMT   ? "management"
	       : k == CHECK_ADDR_DATA ? "data"
	       : k == CHECK_ADDR_NAME ? "name"
				      : "unknown";
}

static void check_ranks_steps(struct writer *w, const struct check_hosts *h,
			      const Ring__Topology *t, const char **nodes,
			      const struct check_addr *where, size_t steps)
{
	writer_table_start(w, "steps");
	for (size_t i = 0; i < steps; i++) {
		size_t j = (i + 1) % h->n;
		int e = check_edge(t, nodes[i], nodes[j]);

		writer_obj_start(w, NULL);
		writer_uint(w, "rank", i);
		writer_str(w, "host", h->v[i].host);
		writer_str(w, "node", nodes[i]);
		writer_str(w, "via", check_kind_name(where[i].kind));
		writer_str(w, "next_node", nodes[j]);
		writer_bool(w, "cable", e >= 0);
		if (e >= 0) {
			const char *ia, *aa, *ga, *ib, *ab, *gb;
			char ports[300];

			check_edge_side(t->edges[e], nodes[i], &ia, &aa, &ga);
			check_edge_side(t->edges[e], nodes[j], &ib, &ab, &gb);
			snprintf(ports, sizeof(ports), "%s-%s", ia, ib);
			writer_str(w, "interfaces", ports);
			writer_str(w, "cable_now", t->edges[e]->live_state);
		} else {
			writer_str(w, "interfaces", "");
			writer_str(w, "cable_now", "");
		}
		writer_obj_end(w);
	}
	writer_table_end(w);
}

int check_ranks_report(FILE *outf, enum writer_format fmt,
		       const struct check_hosts *h, const char *name,
		       const Ring__StatusReply *st)
{
	struct writer *w = NULL;
	const Ring__Topology *t = st->topology;
	struct check_addr *where = calloc(h->n, sizeof(*where));
	const char **nodes = calloc(h->n, sizeof(*nodes));
	size_t *corrected = calloc(h->n, sizeof(*corrected));
	size_t steps, bad = 0, data = 0, left = 0;
	int ret = CHECK_CANNOT, sw, plain = fmt == WRITER_PLAIN, moved = 0;
	char err[512], summary[600];

	if (!where || !nodes || !corrected) {
		error_report(2, "memory", NULL, NULL, "out of memory");
		goto out;
	}
	ret = check_ranks_resolve(h, name, st, where, nodes);
	if (ret != CHECK_OK)
		goto out;
	ret = CHECK_CANNOT;
	sw = !strcmp(t->kind, "switch");
	if (!sw && !t->n_order) {
		error_report(CHECK_CANNOT, "no_rank_order", t->kind, NULL,
			     "no measured order to compare with: the data "
			     "plane is a %s",
			     t->kind);
		goto out;
	}
	if (!sw && check_ranks_corrected(t, nodes, h->n, corrected, err,
					 sizeof(err)) < 0) {
		error_report(CHECK_CANNOT, "bad_input", name, NULL, "%s: %s",
			     name, err);
		goto out;
	}
	/* Two ranks: one cable carries both directions. */
	steps = h->n < 2 ? 0 : h->n == 2 ? 1 : h->n;
	if (!sw) {
		bad = check_count_bad(t, nodes, NULL, h->n);
		left = check_count_bad(t, nodes, corrected, h->n);
		for (size_t i = 0; i < h->n; i++)
			moved |= corrected[i] != i;
	}
	for (size_t i = 0; i < h->n; i++)
		data += where[i].kind == CHECK_ADDR_DATA;
	if (sw)
		snprintf(summary, sizeof(summary),
			 "the data plane is a switch: every rank reaches "
			 "every other, any order works");
	else if (bad)
		snprintf(summary, sizeof(summary),
			 "%zu of %zu consecutive rank pairs have no working "
			 "cable between them: NCCL fails at startup with "
			 "'%s'%s",
			 bad, steps, CHECK_RANKS_ERROR,
			 left ? "" : "; use the corrected order");
	else
		snprintf(summary, sizeof(summary),
			 "every consecutive rank pair (last to first "
			 "included) is joined by a cable: the order follows "
			 "the %s",
			 t->kind);
	w = writer_new(outf, fmt);
	if (!w) {
		error_report(2, "memory", NULL, NULL, "out of memory");
		goto out;
	}
	writer_str(w, "verdict", bad ? "problems" : "ok");
	writer_str(w, "summary", summary);
	writer_str(w, "file", name);
	writer_str(w, "format", check_hosts_format_name(h->format));
	writer_str(w, "kind_measured", t->kind);
	if (t->order_invalid && *t->order_invalid)
		writer_str(w, "warning_order",
			   "the measured order no longer holds: "
			   "survey again once it is fixed");
	if (bad && left)
		writer_str(w, "warning_corrected",
			   !strcmp(t->kind, "ring") && h->n == t->n_order
				   ? "no order avoids a pair without a "
				     "working cable: a cable is down"
				   : "no order of these hosts avoids a pair "
				     "without a cable: a ring order needs "
				     "every node of the ring (a line never "
				     "closes one)");
	if (data)
		writer_str(w, "warning_data_addresses",
			   "some hosts are data-plane addresses: the "
			   "launcher's own connections (ssh, out-of-band) "
			   "need management addresses");
	if (!sw)
		check_ranks_steps(w, h, t, nodes, where, steps);
	if (bad) {
		writer_list_start(w, "problems");
		for (size_t i = 0; i < steps; i++) {
			size_t j = (i + 1) % h->n;

			int e = check_edge(t, nodes[i], nodes[j]);

			if (e < 0)
				check_ranks_problem(w, t, i, nodes[i], j,
						    nodes[j]);
			else if (!check_cable_ok(t, nodes[i], nodes[j]))
				check_ranks_down(w, t->edges[e], i, nodes[i], j,
						 nodes[j]);
		}
		writer_list_end(w);
		if (!moved)
			writer_str(w, "corrected",
				   "none: no other order of these hosts is "
				   "better");
		else if (!plain)
			check_ranks_corrected_list(w, h, corrected);
		else
			writer_str(w, "corrected",
				   "below, in the file's format");
	}
	check_provenance(w, st,
			 "the hosts' nodes (resolved here, now), the pairs' "
			 "verdicts, the functions and GIDs NCCL would use "
			 "(from the survey's cables), the predicted error and "
			 "the corrected order");
	writer_finish(w);
	if (bad && moved && plain)
		check_ranks_corrected_block(outf, h, t, corrected);
	ret = bad ? CHECK_PROBLEMS : CHECK_OK;
out:
	free(where);
	free(nodes);
	free(corrected);
	return ret;
}

/* ------------------------------------------------------- rendezvous */

/* "HOST", "HOST:PORT", "[V6]:PORT" or a bare IPv6 address. */
static int check_split_hostport(const char *arg, char *host, size_t len,
				unsigned *port)
{
	const char *colon = strrchr(arg, ':'), *hend = NULL;
	char *end;
	unsigned long p;

	*port = 0;
	if (arg[0] == '[') {
		const char *rb = strchr(arg, ']');

		if (!rb || (rb[1] && rb[1] != ':'))
			return -1;
		colon = rb[1] ? rb + 1 : NULL;
		arg++;
		hend = rb;
	} else if (colon && strchr(arg, ':') != colon) {
		colon = NULL; /* IPv6 without brackets: no port */
	}
	if (!hend)
		hend = colon ? colon : arg + strlen(arg);
	if (hend == arg || (size_t)(hend - arg) >= len)
		return -1;
	snprintf(host, len, "%.*s", (int)(hend - arg), arg);
	if (!colon)
		return 0;
	p = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || p < 1 || p > 65535)
		return -1;
	*port = (unsigned)p;
	return 0;
}

/* Who reaches a data-plane address: the node itself, its cable's other
 * end while that cable is not down, and any node the survey's diagonal
 * check found a path from. Every count and list a rendezvous message or
 * record gives comes from here. */
struct check_reach {
	size_t total, reach, no_path;
	char reach_list[600], no_path_list[600]; /* names, space-separated */
};

static void check_reach_add(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);

	snprintf(buf + used, used < len ? len - used : 0, "%s%s",
		 used ? " " : "", name);
}

static void check_reach(const Ring__StatusReply *st, const struct check_addr *a,
			struct check_reach *r)
{
	const Ring__Topology *t = st->topology;
	int cable_up = check_cable_ok(t, a->node, a->peer);

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < t->n_order; i++) {
		const char *z = t->order[i];
		int path = !strcmp(z, a->node) ||
			   (cable_up && !strcmp(z, a->peer));

		for (size_t d = 0; !path && d < t->n_diagonals; d++)
			path = !strcmp(t->diagonals[d]->a, z) &&
			       !strcmp(t->diagonals[d]->b, a->node) &&
			       check_same_address(t->diagonals[d]->b_address,
						  a->address) &&
			       t->diagonals[d]->path;
		r->total++;
		if (path) {
			r->reach++;
			check_reach_add(r->reach_list, sizeof(r->reach_list),
					z);
		} else {
			r->no_path++;
			check_reach_add(r->no_path_list,
					sizeof(r->no_path_list), z);
		}
	}
}

/* torchrun's c10d rendezvous looks up rank 0's host name: it must land on
 * its management address. Checked with this host's resolver only. */
struct check_rank0 {
	const Ring__Rank *r0;
	char how[512];
	char text[900];
	int bad;
	const Ring__ResolveReply *rr; /* the nodes' own lookups, or NULL */
	size_t nodes_ok, nodes_bad, nodes_unasked;
	char nodes_text[600]; /* the first node it fails on, and how */
};

/* What rank 0's name gives on node nr: its management address first is
 * right (c10d connects to the first); 1 when not. */
static int check_rank0_node_bad(const Ring__Rank *r0,
				const Ring__NodeResolve *nr, char *why,
				size_t len)
{
	if (*nr->error) {
		snprintf(why, len, "on %s it does not resolve (%s)", nr->node,
			 nr->error);
		return 1;
	}
	if (!nr->n_addresses || strcmp(nr->addresses[0], r0->mgmt_address)) {
		snprintf(why, len,
			 "on %s it resolves to %s first, not to %s's "
			 "management address %s",
			 nr->node,
			 nr->n_addresses ? nr->addresses[0] : "nothing",
			 r0->node, r0->mgmt_address);
		return 1;
	}
	return 0;
}

/* The nodes' own answers: counted, the first failure worded. A node the
 * coordinator could not ask (down, no answer) is counted apart. */
static void check_rank0_nodes(struct check_rank0 *c)
{
	char why[400];

	for (size_t i = 0; c->rr && i < c->rr->n_nodes; i++) {
		const Ring__NodeResolve *nr = c->rr->nodes[i];

		if (!nr->answered) {
			c->nodes_unasked++;
			continue;
		}
		if (!check_rank0_node_bad(c->r0, nr, why, sizeof(why))) {
			c->nodes_ok++;
			continue;
		}
		if (!c->nodes_bad++)
			snprintf(c->nodes_text, sizeof(c->nodes_text), "%s",
				 why);
	}
	if (c->nodes_bad)
		c->bad = 1;
}

static void check_rank0_judge(const Ring__StatusReply *st,
			      const Ring__ResolveReply *rr,
			      struct check_rank0 *c)
{
	const Ring__Topology *t = st->topology;
	const Ring__Rank *r0 = t->n_ranks ? t->ranks[0] : NULL;
	struct check_addr a;

	memset(c, 0, sizeof(*c));
	c->r0 = r0;
	c->rr = rr;
	if (!r0)
		return;
	check_rank0_nodes(c);
	check_resolve(st, r0->node, &a, c->how, sizeof(c->how));
	if (a.kind == CHECK_ADDR_MGMT && !strcmp(a.node, r0->node)) {
		snprintf(c->text, sizeof(c->text),
			 "%s resolves to its management address here",
			 r0->node);
	} else if (a.kind == CHECK_ADDR_NAME) {
		/* Not proof of a problem: ringctl may run off the nodes. */
		snprintf(c->text, sizeof(c->text),
			 "%s %s%s here: torchrun's c10d rendezvous needs it "
			 "to resolve to %s on every node",
			 r0->node,
			 a.resolved ? "gives no address ringd knows: "
				    : "does not resolve",
			 c->how, r0->mgmt_address);
	} else {
		c->bad = 1;
		snprintf(c->text, sizeof(c->text),
			 "%s resolves to %s here: %s%s%s, not its management "
			 "address %s; torchrun's c10d rendezvous would go "
			 "there",
			 r0->node, c->how,
			 a.kind == CHECK_ADDR_DATA ? "a data-plane address of "
			 : a.kind == CHECK_ADDR_MGMT
				 ? "the management address of "
				 : "an address ringd does "
				   "not know",
			 a.node ? a.node : "", "", r0->mgmt_address);
	}
	/* The nodes' own answers outrank this host's when they all agree. */
	if (!c->bad && c->nodes_ok && a.kind != CHECK_ADDR_MGMT)
		snprintf(c->text, sizeof(c->text),
			 "%s resolves to its management address %s on all %zu "
			 "nodes asked; on this host, where ringctl runs: %s",
			 r0->node, r0->mgmt_address, c->nodes_ok, c->how);
}

static void check_rank0_render(struct writer *w, const struct check_rank0 *c)
{
	if (!c->r0)
		return;
	writer_obj_start(w, "rank0_name");
	writer_str(w, "node", c->r0->node);
	writer_str(w, "mgmt_address", c->r0->mgmt_address);
	writer_str(w, "resolves_here", c->how);
	writer_str(w, "verdict", c->bad ? "problem" : "ok");
	writer_str(w, "text", c->text);
	if (!c->rr) {
		writer_str(w, "checked",
			   "on this host only, not on every node");
		writer_obj_end(w);
		return;
	}
	writer_str(w, "checked",
		   "on this host and on every node the coordinator could ask "
		   "(their own resolvers, now)");
	writer_uint(w, "nodes_ok", c->nodes_ok);
	writer_uint(w, "nodes_wrong", c->nodes_bad);
	writer_uint(w, "nodes_not_asked", c->nodes_unasked);
	if (c->nodes_bad)
		writer_str(w, "nodes_text", c->nodes_text);
	writer_table_start(w, "on_nodes");
	for (size_t i = 0; i < c->rr->n_nodes; i++) {
		const Ring__NodeResolve *nr = c->rr->nodes[i];
		char why[400];

		writer_obj_start_named(w, nr->node);
		writer_str(w, "node", nr->node);
		writer_list_start(w, "resolves_to");
		for (size_t k = 0; k < nr->n_addresses; k++)
			writer_str(w, NULL, nr->addresses[k]);
		writer_list_end(w);
		writer_str(w, "error", nr->error);
		writer_str(w, "verdict",
			   check_rank0_node_bad(c->r0, nr, why, sizeof(why))
				   ? "wrong"
				   : "ok");
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_obj_end(w);
}

/* What a rendezvous should use instead: rank 0's management address. */
static void check_rdzv_use(const Ring__Topology *t, char *buf, size_t len)
{
	if (t->n_ranks)
		snprintf(buf, len, "use rank 0's management address %s (%s)",
			 t->ranks[0]->mgmt_address, t->ranks[0]->node);
	else
		snprintf(buf, len,
			 "use rank 0's management address (ringctl ranks, "
			 "once a survey has measured the order)");
}

int check_rendezvous_report(FILE *outf, enum writer_format fmt, const char *arg,
			    const Ring__StatusReply *st,
			    const Ring__ResolveReply *rr)
{
	struct writer *w;
	const Ring__Topology *t = st->topology;
	char host[CHECK_HOSTS_NAME_MAX + 1], how[512], text[2000], use[300];
	char predicted[128] = "";
	const char *r0 = t->n_ranks ? t->ranks[0]->node : NULL;
	struct check_reach reach;
	struct check_rank0 r0c;
	struct check_addr a;
	unsigned port;
	int bad = 0;

	memset(&reach, 0, sizeof(reach));

	if (check_split_hostport(arg, host, sizeof(host), &port) < 0) {
		error_report(CHECK_CANNOT, "bad_input", arg,
			     "ringctl help check rendezvous",
			     "check rendezvous: '%s' is not HOST, "
			     "HOST:PORT or [IPV6]:PORT (port 1..65535); see "
			     "ringctl help check rendezvous",
			     arg);
		return CHECK_CANNOT;
	}
	check_resolve(st, host, &a, how, sizeof(how));
	check_rank0_judge(st, rr, &r0c);
	switch (a.kind) {
	case CHECK_ADDR_MGMT:
		snprintf(text, sizeof(text),
			 "%s is %s's management address: every node reaches "
			 "it%s",
			 *how ? how : host, a.node,
			 r0 && strcmp(a.node, r0)
				 ? "; note that rank 0 of the measured order "
				   "is another node"
				 : "");
		break;
	case CHECK_ADDR_DATA:
		bad = 1;
		check_rdzv_use(t, use, sizeof(use));
		/* A switch reaches every port: no node lacks a path. */
		if (!strcmp(t->kind, "switch")) {
			snprintf(text, sizeof(text),
				 "%s is %s's data-plane address on the switch "
				 "(%s): every node reaches it, but rendezvous "
				 "belongs on the management network (the data "
				 "plane carries collective traffic only); %s",
				 a.address, a.node, a.interface, use);
			break;
		}
		check_reach(st, &a, &reach);
		/* A pair, or a path the diagonal checks found: it works,
		 * but the reference cluster's rule still holds. */
		if (!reach.no_path) {
			snprintf(text, sizeof(text),
				 "%s is %s's data-plane address on its cable "
				 "to %s (%s): all %zu nodes have a path to it, "
				 "but rendezvous belongs on the management "
				 "network (the data plane carries collective "
				 "traffic only); %s",
				 a.address, a.node, a.peer, a.interface,
				 reach.total, use);
			break;
		}
		snprintf(predicted, sizeof(predicted), CHECK_RDZV_ERROR_FMT,
			 reach.reach, reach.total);
		snprintf(text, sizeof(text),
			 "%s is %s's data-plane address on its cable to %s "
			 "(%s%s): only %zu of %zu nodes can reach it (%s); "
			 "%zu (%s) %s no path, so at most %zu can join: the "
			 "launcher hangs (~181 s on the reference cluster, "
			 "docs/REFERENCE.md), then fails like '%s'; %s",
			 a.address, a.node, a.peer, a.interface,
			 check_cable_ok(t, a.node, a.peer)
				 ? ""
				 : ", a cable that is down now",
			 reach.reach, reach.total, reach.reach_list,
			 reach.no_path, reach.no_path_list,
			 reach.no_path == 1 ? "has" : "have", reach.reach,
			 predicted, use);
		break;
	case CHECK_ADDR_NAME:
		bad = 1;
		snprintf(text, sizeof(text),
			 "%s is a node's name but %s (checked on this host "
			 "only): the launcher cannot reach it by this name",
			 host, how);
		break;
	default:
		bad = 1;
		if (a.resolved)
			snprintf(text, sizeof(text),
				 "%s resolves to %s here: an address ringd "
				 "does not know (no node's management or data "
				 "address)",
				 host, how);
		else
			snprintf(text, sizeof(text),
				 "%s does not resolve here (getaddrinfo on "
				 "this host gave no address): check the name, "
				 "or give the management address itself",
				 host);
		break;
	}
	bad |= r0c.bad;
	if (r0c.nodes_bad) {
		size_t l = strlen(text);

		snprintf(text + l, sizeof(text) - l,
			 "; rank 0's host name %s: %s (%zu of %zu nodes), "
			 "and torchrun's c10d rendezvous looks it up there",
			 r0c.r0->node, r0c.nodes_text, r0c.nodes_bad,
			 r0c.nodes_bad + r0c.nodes_ok);
	}
	w = writer_new(outf, fmt);
	if (!w) {
		error_report(2, "memory", NULL, NULL, "out of memory");
		return CHECK_CANNOT;
	}
	writer_str(w, "verdict", bad ? "problems" : "ok");
	writer_str(w, "summary", text);
	writer_str(w, "host", host);
	if (port)
		writer_uint(w, "port", port);
	writer_str(w, "resolves_here", how);
	writer_str(w, "address_kind", check_kind_name(a.kind));
	if (a.node)
		writer_str(w, "node", a.node);
	if (a.kind == CHECK_ADDR_DATA && strcmp(t->kind, "switch")) {
		writer_str(w, "cable_peer", a.peer);
		writer_uint(w, "nodes_total", reach.total);
		writer_uint(w, "nodes_reach", reach.reach);
		writer_uint(w, "nodes_no_path", reach.no_path);
		writer_str(w, "reach_computed", reach.reach_list);
		writer_str(w, "no_path_computed", reach.no_path_list);
		if (reach.no_path)
			writer_str(w, "error_predicted", predicted);
	}
	if (a.kind == CHECK_ADDR_DATA && r0) {
		writer_str(w, "use_node", r0);
		writer_str(w, "use_address", t->ranks[0]->mgmt_address);
	}
	check_rank0_render(w, &r0c);
	check_provenance(w, st,
			 "the address's kind and node (resolved here, now), "
			 "the nodes without a path (from the survey's cables "
			 "and diagonal checks) and the predicted error");
	writer_finish(w);
	return bad ? CHECK_PROBLEMS : CHECK_OK;
}
