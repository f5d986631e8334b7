/* Topology classification. Adjacency is the simple graph of cables that
 * both ends heard (or that probes verified both ways); everything else
 * the input shows becomes an anomaly, never an edge. Fewer than two nodes
 * is TOPO_UNKNOWN: there is nothing to measure between them. */
#include "topo.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct topo_work {
	const struct topo_input *in;
	struct topo_result *out;
	unsigned cap_anomalies;
	/* simple graph in compressed rows: node i's neighbours are
	 * nbr[row[i]] .. nbr[row[i + 1] - 1], ascending by index */
	unsigned *row, *nbr;
	unsigned *comp; /* component id per node */
	/* The ring's nodes when strays were set apart; NULL: every node. */
	unsigned char *active;
};

const char *topo_class_name(enum topo_class c)
{
	switch (c) {
	case TOPO_UNKNOWN:
		return "unknown";
	case TOPO_RING:
		return "ring";
	case TOPO_PAIR:
		return "pair";
	case TOPO_LINE:
		return "line";
	case TOPO_SWITCH:
		return "switch";
	case TOPO_SPLIT:
		return "split";
	case TOPO_OTHER:
		return "other";
	case TOPO_RINGS:
		return "rings";
	}
	return "?";
}

const char *topo_anomaly_name(enum topo_anomaly_kind k)
{
	switch (k) {
	case TOPO_ONE_SIDED:
		return "one_sided";
	case TOPO_DEGREE:
		return "degree";
	case TOPO_PARALLEL:
		return "parallel";
	case TOPO_SUBNET_MISMATCH:
		return "subnet_mismatch";
	case TOPO_MTU_MISMATCH:
		return "mtu_mismatch";
	case TOPO_UNEXPECTED_PATH:
		return "unexpected_path";
	case TOPO_ISOLATED:
		return "isolated";
	}
	return "?";
}

const char *topo_stray_reason_name(enum topo_stray_reason r)
{
	switch (r) {
	case TOPO_STRAY_NO_CABLE:
		return "no_cable";
	case TOPO_STRAY_OFF_RING:
		return "not_cabled_into_ring";
	}
	return "?";
}

void topo_result_free(struct topo_result *r)
{
	if (!r)
		return;
	free(r->order);
	free(r->anomalies);
	free(r->strays);
	free(r->comp);
	memset(r, 0, sizeof(*r));
}

static const char *topo_name(const struct topo_work *w, unsigned i)
{
	return w->in->names[i];
}

/* Lower name first; equal names fall back to the index so the order is
 * total. */
static int topo_cmp_nodes(const struct topo_work *w, unsigned a, unsigned b)
{
	int c = strcmp(topo_name(w, a), topo_name(w, b));

	if (c)
		return c;
	return (a > b) - (a < b);
}

static int topo_link_adjacent(const struct topo_link *l)
{
	return (l->a_sees_b && l->b_sees_a) || l->verified;
}

/* Any sign that the cable exists; a record with none carries no facts. */
static int topo_link_seen(const struct topo_link *l)
{
	return l->a_sees_b || l->b_sees_a || l->verified;
}

/* Appends to a fixed buffer; output past its end is cut off. */
static void topo_append(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void topo_append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strnlen(buf, size);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	if (vsnprintf(buf + len, size - len, fmt, ap) < 0)
		buf[len] = '\0';
	va_end(ap);
}

/* "n1 eth2", or just "n1" when the interface is not known. */
static void topo_append_end(const struct topo_work *w, char *buf, size_t size,
			    unsigned node, const char *ifname)
{
	if (ifname[0])
		topo_append(buf, size, "%s %.*s", topo_name(w, node),
			    (int)IFNAMSIZ, ifname);
	else
		topo_append(buf, size, "%s", topo_name(w, node));
}

static struct topo_anomaly *topo_add(struct topo_work *w,
				     enum topo_anomaly_kind kind, unsigned a,
				     unsigned b)
{
	struct topo_result *r = w->out;
	struct topo_anomaly *an;

	if (r->n_anomalies == w->cap_anomalies) {
		unsigned cap = w->cap_anomalies ? w->cap_anomalies * 2 : 8;
		struct topo_anomaly *v =
			realloc(r->anomalies, cap * sizeof(*v));

		if (!v)
			return NULL;
		r->anomalies = v;
		w->cap_anomalies = cap;
	}
	an = &r->anomalies[r->n_anomalies++];
	memset(an, 0, sizeof(*an));
	an->kind = kind;
	an->a = a;
	an->b = b;
	return an;
}

static int topo_check_input(const struct topo_input *in, int rank0)
{
	if (in->n_nodes && !in->names)
		return -1;
	for (unsigned i = 0; i < in->n_nodes; i++)
		if (!in->names[i])
			return -1;
	if (in->n_links && !in->links)
		return -1;
	for (unsigned i = 0; i < in->n_links; i++) {
		const struct topo_link *l = &in->links[i];

		if (l->a >= in->n_nodes || l->b >= in->n_nodes || l->a == l->b)
			return -1;
	}
	if (in->n_unexpected_paths && !in->unexpected_paths)
		return -1;
	for (unsigned i = 0; i < in->n_unexpected_paths; i++) {
		const unsigned *p = in->unexpected_paths[i];

		if (p[0] >= in->n_nodes || p[1] >= in->n_nodes || p[0] == p[1])
			return -1;
	}
	if (rank0 >= 0 && (unsigned)rank0 >= in->n_nodes)
		return -1;
	return 0;
}

/* Per-cable anomalies: one end deaf, ends that disagree on MTU or subnet. */
static int topo_link_anomalies(struct topo_work *w)
{
	const struct topo_input *in = w->in;

	for (unsigned i = 0; i < in->n_links; i++) {
		const struct topo_link *l = &in->links[i];
		struct topo_anomaly *an;

		if (topo_link_adjacent(l) || (!l->a_sees_b && !l->b_sees_a))
			continue;
		an = topo_add(w, TOPO_ONE_SIDED, l->a, l->b);
		if (!an)
			return -1;
		if (l->a_sees_b) {
			topo_append_end(w, an->text, sizeof(an->text), l->a,
					l->a_if);
			topo_append(an->text, sizeof(an->text), " hears ");
			topo_append_end(w, an->text, sizeof(an->text), l->b,
					l->b_if);
			topo_append(an->text, sizeof(an->text), ", but ");
			topo_append_end(w, an->text, sizeof(an->text), l->b,
					l->b_if);
			topo_append(an->text, sizeof(an->text),
				    " does not hear %s", topo_name(w, l->a));
		} else {
			topo_append_end(w, an->text, sizeof(an->text), l->b,
					l->b_if);
			topo_append(an->text, sizeof(an->text), " hears ");
			topo_append_end(w, an->text, sizeof(an->text), l->a,
					l->a_if);
			topo_append(an->text, sizeof(an->text), ", but ");
			topo_append_end(w, an->text, sizeof(an->text), l->a,
					l->a_if);
			topo_append(an->text, sizeof(an->text),
				    " does not hear %s", topo_name(w, l->b));
		}
	}
	for (unsigned i = 0; i < in->n_links; i++) {
		const struct topo_link *l = &in->links[i];
		struct topo_anomaly *an;

		if (!topo_link_seen(l) || !l->a_mtu || !l->b_mtu ||
		    l->a_mtu == l->b_mtu)
			continue;
		an = topo_add(w, TOPO_MTU_MISMATCH, l->a, l->b);
		if (!an)
			return -1;
		topo_append(an->text, sizeof(an->text),
			    "MTU differs across the cable ");
		topo_append_end(w, an->text, sizeof(an->text), l->a, l->a_if);
		topo_append(an->text, sizeof(an->text), " (%u) - ", l->a_mtu);
		topo_append_end(w, an->text, sizeof(an->text), l->b, l->b_if);
		topo_append(an->text, sizeof(an->text), " (%u)", l->b_mtu);
	}
	for (unsigned i = 0; i < in->n_links; i++) {
		const struct topo_link *l = &in->links[i];
		struct topo_anomaly *an;

		if (!topo_link_seen(l) || !l->a_subnet[0] || !l->b_subnet[0] ||
		    !strncmp(l->a_subnet, l->b_subnet, sizeof(l->a_subnet)))
			continue;
		an = topo_add(w, TOPO_SUBNET_MISMATCH, l->a, l->b);
		if (!an)
			return -1;
		topo_append(an->text, sizeof(an->text),
			    "subnets differ across the cable ");
		topo_append_end(w, an->text, sizeof(an->text), l->a, l->a_if);
		topo_append(an->text, sizeof(an->text), " (%.*s) - ",
			    (int)sizeof(l->a_subnet), l->a_subnet);
		topo_append_end(w, an->text, sizeof(an->text), l->b, l->b_if);
		topo_append(an->text, sizeof(an->text), " (%.*s)",
			    (int)sizeof(l->b_subnet), l->b_subnet);
	}
	return 0;
}

/* Adjacent cables as (lower index, higher index), sorted, so that
 * parallel cables sit next to each other. */
struct topo_cable {
	unsigned lo, hi, link;
};

static int topo_cable_cmp(const void *pa, const void *pb)
{
	const struct topo_cable *a = pa, *b = pb;

	if (a->lo != b->lo)
		return (a->lo > b->lo) - (a->lo < b->lo);
	if (a->hi != b->hi)
		return (a->hi > b->hi) - (a->hi < b->hi);
	return (a->link > b->link) - (a->link < b->link);
}

/* One end's port: the physical port, or the interface when unknown. */
static const char *topo_port(const struct topo_link *l, unsigned node)
{
	if (node == l->a)
		return l->a_port[0] ? l->a_port : l->a_if;
	return l->b_port[0] ? l->b_port : l->b_if;
}

/* Is c[k] the first of c[i..k] over its cable (same ports at both
 * ends)? Twins give two function pairs per cable. */
static int topo_first_of_cable(const struct topo_input *in,
			       const struct topo_cable *c, unsigned i,
			       unsigned k)
{
	const struct topo_link *x = &in->links[c[k].link];

	for (unsigned m = i; m < k; m++) {
		const struct topo_link *y = &in->links[c[m].link];

		if (!strcmp(topo_port(x, c[k].lo), topo_port(y, c[m].lo)) &&
		    !strcmp(topo_port(x, c[k].hi), topo_port(y, c[m].hi)))
			return 0;
	}
	return 1;
}

/* Builds the simple graph and reports parallel cables. */
static int topo_build_graph(struct topo_work *w, unsigned *n_edges)
{
	const struct topo_input *in = w->in;
	struct topo_cable *c = NULL;
	unsigned nc = 0, ne = 0, *fill = NULL;
	int rc = -1;

	c = calloc(in->n_links ? in->n_links : 1, sizeof(*c));
	w->row = calloc((size_t)in->n_nodes + 1, sizeof(*w->row));
	fill = calloc(in->n_nodes ? in->n_nodes : 1, sizeof(*fill));
	if (!c || !w->row || !fill)
		goto out;
	for (unsigned i = 0; i < in->n_links; i++) {
		const struct topo_link *l = &in->links[i];

		if (!topo_link_adjacent(l))
			continue;
		c[nc].lo = l->a < l->b ? l->a : l->b;
		c[nc].hi = l->a < l->b ? l->b : l->a;
		c[nc].link = i;
		nc++;
	}
	qsort(c, nc, sizeof(*c), topo_cable_cmp);
	for (unsigned i = 0; i < nc;) {
		unsigned j = i + 1;

		unsigned cables = 0;

		while (j < nc && c[j].lo == c[i].lo && c[j].hi == c[i].hi)
			j++;
		w->row[c[i].lo + 1]++;
		w->row[c[i].hi + 1]++;
		ne++;
		/* Function pairs over one cable (twins) are one cable. */
		for (unsigned k = i; k < j; k++)
			cables += topo_first_of_cable(in, c, i, k);
		if (cables > 1) {
			struct topo_anomaly *an =
				topo_add(w, TOPO_PARALLEL, c[i].lo, c[i].hi);

			if (!an)
				goto out;
			topo_append(an->text, sizeof(an->text),
				    "%u cables between %s and %s (", cables,
				    topo_name(w, c[i].lo),
				    topo_name(w, c[i].hi));
			for (unsigned k = i; k < j; k++) {
				const struct topo_link *l =
					&in->links[c[k].link];

				if (!topo_first_of_cable(in, c, i, k))
					continue;
				topo_append(an->text, sizeof(an->text), "%s",
					    k > i ? ", " : "");
				topo_append_end(w, an->text, sizeof(an->text),
						l->a, l->a_if);
				topo_append(an->text, sizeof(an->text), " - ");
				topo_append_end(w, an->text, sizeof(an->text),
						l->b, l->b_if);
			}
			topo_append(an->text, sizeof(an->text),
				    "): counted as one neighbour");
		}
		i = j;
	}
	for (unsigned i = 0; i < in->n_nodes; i++)
		w->row[i + 1] += w->row[i];
	w->nbr = calloc(ne ? (size_t)ne * 2 : 1, sizeof(*w->nbr));
	if (!w->nbr)
		goto out;
	/* c is sorted by (lo, hi): each row comes out ascending. */
	for (unsigned i = 0; i < nc; i++) {
		if (i && c[i].lo == c[i - 1].lo && c[i].hi == c[i - 1].hi)
			continue;
		w->nbr[w->row[c[i].lo] + fill[c[i].lo]++] = c[i].hi;
	}
	for (unsigned i = 0; i < nc; i++) {
		if (i && c[i].lo == c[i - 1].lo && c[i].hi == c[i - 1].hi)
			continue;
		w->nbr[w->row[c[i].hi] + fill[c[i].hi]++] = c[i].lo;
	}
	*n_edges = ne;
	rc = 0;
out:
	free(fill);
	free(c);
	return rc;
}

static unsigned topo_deg(const struct topo_work *w, unsigned i)
{
	return w->row[i + 1] - w->row[i];
}

static int topo_active(const struct topo_work *w, unsigned i)
{
	return !w->active || w->active[i];
}

/* Labels components by an iterative flood fill; returns their count. */
static int topo_components(struct topo_work *w, unsigned *count)
{
	unsigned n = w->in->n_nodes, ncomp = 0, *stack;

	w->comp = malloc((n ? n : 1) * sizeof(*w->comp));
	stack = malloc((n ? n : 1) * sizeof(*stack));
	if (!w->comp || !stack) {
		free(stack);
		return -1;
	}
	for (unsigned i = 0; i < n; i++)
		w->comp[i] = (unsigned)-1;
	for (unsigned s = 0; s < n; s++) {
		unsigned top = 0;

		if (w->comp[s] != (unsigned)-1)
			continue;
		w->comp[s] = ncomp;
		stack[top++] = s;
		while (top) {
			unsigned v = stack[--top];

			for (unsigned k = w->row[v]; k < w->row[v + 1]; k++) {
				unsigned u = w->nbr[k];

				if (w->comp[u] == (unsigned)-1) {
					w->comp[u] = ncomp;
					stack[top++] = u;
				}
			}
		}
		ncomp++;
	}
	free(stack);
	*count = ncomp;
	return 0;
}

static int topo_node_anomalies(struct topo_work *w, int split)
{
	const struct topo_input *in = w->in;

	for (unsigned i = 0; i < in->n_nodes; i++) {
		struct topo_anomaly *an;
		unsigned d = topo_deg(w, i);

		if (d < 3)
			continue;
		an = topo_add(w, TOPO_DEGREE, i, i);
		if (!an)
			return -1;
		topo_append(an->text, sizeof(an->text),
			    "%s has %u direct neighbours (", topo_name(w, i),
			    d);
		for (unsigned k = w->row[i]; k < w->row[i + 1]; k++)
			topo_append(an->text, sizeof(an->text), "%s%s",
				    k > w->row[i] ? ", " : "",
				    topo_name(w, w->nbr[k]));
		topo_append(an->text, sizeof(an->text),
			    "); a ring node has two");
	}
	for (unsigned i = 0; split && i < in->n_nodes; i++) {
		struct topo_anomaly *an;

		if (topo_deg(w, i))
			continue;
		an = topo_add(w, TOPO_ISOLATED, i, i);
		if (!an)
			return -1;
		topo_append(
			an->text, sizeof(an->text),
			"%s has no data-plane neighbour: no cable both ends "
			"of which were heard",
			topo_name(w, i));
	}
	for (unsigned i = 0; i < in->n_unexpected_paths; i++) {
		unsigned a = in->unexpected_paths[i][0];
		unsigned b = in->unexpected_paths[i][1];
		struct topo_anomaly *an =
			topo_add(w, TOPO_UNEXPECTED_PATH, a, b);

		if (!an)
			return -1;
		topo_append(an->text, sizeof(an->text),
			    "%s reaches %s over the data plane although they "
			    "are not neighbours: an unexpected link",
			    topo_name(w, a), topo_name(w, b));
	}
	return 0;
}

/* The lowest-named node, among those of degree deg when deg >= 0. */
static unsigned topo_lowest(const struct topo_work *w, int deg)
{
	unsigned best = (unsigned)-1;

	for (unsigned i = 0; i < w->in->n_nodes; i++) {
		if (!topo_active(w, i) ||
		    (deg >= 0 && topo_deg(w, i) != (unsigned)deg))
			continue;
		if (best == (unsigned)-1 || topo_cmp_nodes(w, i, best) < 0)
			best = i;
	}
	return best;
}

/* Walks a path or cycle of maximum degree 2 from start, first to next. */
static void topo_walk(struct topo_work *w, unsigned start, unsigned next)
{
	struct topo_result *r = w->out;
	unsigned prev = start, cur = next;

	r->order[0] = start;
	r->n_order = 1;
	while (cur != start && r->n_order < w->in->n_nodes) {
		unsigned k, nxt = (unsigned)-1;

		r->order[r->n_order++] = cur;
		for (k = w->row[cur]; k < w->row[cur + 1]; k++)
			if (w->nbr[k] != prev)
				nxt = w->nbr[k];
		if (nxt == (unsigned)-1)
			break; /* the far end of a line */
		prev = cur;
		cur = nxt;
	}
}

static int topo_order(struct topo_work *w, int rank0, enum topo_direction dir)
{
	struct topo_result *r = w->out;
	unsigned n = w->in->n_nodes, start;

	if (r->cls != TOPO_RING && r->cls != TOPO_LINE && r->cls != TOPO_PAIR)
		return 0; /* no order to give */
	r->order = calloc(n, sizeof(*r->order));
	if (!r->order)
		return -1;
	switch (r->cls) {
	case TOPO_RING: {
		unsigned x, y, lo;

		start = rank0 >= 0 && topo_active(w, (unsigned)rank0)
				? (unsigned)rank0
				: topo_lowest(w, -1);
		x = w->nbr[w->row[start]];
		y = w->nbr[w->row[start] + 1];
		lo = topo_cmp_nodes(w, x, y) < 0 ? x : y;
		topo_walk(w, start,
			  dir == TOPO_DIR_HIGHER ? (lo == x ? y : x) : lo);
		break;
	}
	case TOPO_LINE: {
		unsigned e1 = topo_lowest(w, 1), e2 = (unsigned)-1;

		for (unsigned i = 0; i < n; i++)
			if (topo_active(w, i) && topo_deg(w, i) == 1 && i != e1)
				e2 = i;
		start = rank0 >= 0 && (unsigned)rank0 == e2 ? e2 : e1;
		topo_walk(w, start, w->nbr[w->row[start]]);
		r->gap_a = e1;
		r->gap_b = e2;
		break;
	}
	case TOPO_PAIR:
		start = rank0 >= 0 && topo_active(w, (unsigned)rank0)
				? (unsigned)rank0
				: topo_lowest(w, -1);
		r->order[0] = start;
		/* The pair's other node: its one neighbour. */
		r->order[1] = w->nbr[w->row[start]];
		r->n_order = 2;
		break;
	default:
		break;
	}
	return 0;
}

static enum topo_class topo_classify(struct topo_work *w, unsigned n_edges,
				     unsigned ncomp)
{
	const struct topo_input *in = w->in;
	unsigned deg1 = 0, deg2 = 0, n = 0;

	for (unsigned i = 0; i < in->n_nodes; i++)
		n += topo_active(w, i);
	if (n < 2)
		return TOPO_UNKNOWN;
	if (n_edges == 0 && in->all_to_all_reachable)
		return TOPO_SWITCH;
	/* Strays set apart leave the ring's one component. */
	if (ncomp > 1 && !w->active)
		return TOPO_SPLIT;
	if (n == 2)
		return TOPO_PAIR;
	for (unsigned i = 0; i < in->n_nodes; i++) {
		unsigned d = topo_deg(w, i);

		if (!topo_active(w, i))
			continue;
		deg1 += d == 1;
		deg2 += d == 2;
	}
	/* Connected with every degree two is a cycle; with two ends of
	 * degree one and the rest two, a path. */
	if (deg2 == n)
		return TOPO_RING;
	if (deg1 == 2 && deg2 == n - 2)
		return TOPO_LINE;
	return TOPO_OTHER;
}

/* Is node i a known ring member? */
static int topo_member(const struct topo_work *w, unsigned i, int rank0)
{
	return (w->in->member && w->in->member[i]) ||
	       (rank0 >= 0 && (unsigned)rank0 == i);
}

/* The ring's component among several (see topo_analyse), or -1. */
static int topo_ring_component(const struct topo_work *w, unsigned ncomp,
			       int rank0, unsigned *size)
{
	const struct topo_input *in = w->in;
	unsigned comp = (unsigned)-1;

	if (ncomp < 2)
		return -1;
	for (unsigned i = 0; i < in->n_nodes; i++)
		size[w->comp[i]]++;
	for (unsigned i = 0; i < in->n_nodes; i++) {
		if (!topo_member(w, i, rank0))
			continue;
		if (comp != (unsigned)-1 && comp != w->comp[i])
			return -1; /* members apart: the ring is cut */
		comp = w->comp[i];
	}
	/* None known (a first survey without expect): a member cut off
	 * and a newcomer without cables look alike; a split, as before. */
	return comp != (unsigned)-1 && size[comp] >= 2 ? (int)comp : -1;
}

/* Sets apart every node outside the ring's component, if there is one:
 * w->active and out->strays. */
static int topo_set_apart(struct topo_work *w, unsigned ncomp, int rank0)
{
	const struct topo_input *in = w->in;
	struct topo_result *r = w->out;
	unsigned *size = calloc(ncomp ? ncomp : 1, sizeof(*size));
	int ring;

	if (!size)
		return -1;
	ring = topo_ring_component(w, ncomp, rank0, size);
	free(size);
	if (ring < 0)
		return 0;
	w->active = calloc(in->n_nodes, 1);
	r->strays = calloc(in->n_nodes, sizeof(*r->strays));
	if (!w->active || !r->strays)
		return -1;
	for (unsigned i = 0; i < in->n_nodes; i++) {
		unsigned k;

		if (w->comp[i] == (unsigned)ring) {
			w->active[i] = 1;
			continue;
		}
		/* Insertion by name: a handful of strays. */
		for (k = r->n_strays;
		     k && topo_cmp_nodes(w, r->strays[k - 1].node, i) > 0; k--)
			r->strays[k] = r->strays[k - 1];
		r->strays[k].node = i;
		r->strays[k].reason = topo_deg(w, i) ? TOPO_STRAY_OFF_RING
						     : TOPO_STRAY_NO_CABLE;
		r->n_strays++;
	}
	return 0;
}

int topo_analyse(const struct topo_input *in, int rank0,
		 enum topo_direction dir, struct topo_result *out)
{
	struct topo_work w = {.in = in, .out = out};
	unsigned n_edges = 0, ncomp = 0;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!in || !out || topo_check_input(in, rank0) < 0) {
		errno = EINVAL;
		return -1;
	}
	if (topo_link_anomalies(&w) < 0 || topo_build_graph(&w, &n_edges) < 0 ||
	    topo_components(&w, &ncomp) < 0 ||
	    topo_set_apart(&w, ncomp, rank0) < 0)
		goto fail;
	out->cls = topo_classify(&w, n_edges, ncomp);
	/* Through a switch every node reaches every other: one component;
	 * strays set apart leave the ring's one. */
	out->n_components = out->cls == TOPO_SWITCH || w.active ? 1 : ncomp;
	if (topo_node_anomalies(&w, out->cls == TOPO_SPLIT) < 0 ||
	    topo_order(&w, rank0, dir) < 0)
		goto fail;
	free(w.active);
	out->comp = w.comp;
	free(w.nbr);
	free(w.row);
	return 0;
fail:
	free(w.active);
	free(w.comp);
	free(w.nbr);
	free(w.row);
	topo_result_free(out);
	errno = ENOMEM;
	return -1;
}
