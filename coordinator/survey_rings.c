/* The site's rings in a survey (issue 24): the rings already known, as
 * topo_site's labels (a `ring` directive first, then the published
 * rings), the ids of the rings a survey finds, and their RingView
 * messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_conf.h"
#include "msg_arena.h"
#include "survey_int.h"
#include "topoview.h"

/* The id a label names; "" for a new ring. */
static const char *sv_ring_label_id(const struct survey *sv, int label)
{
	const struct coord_conf *conf = sv->conf;

	if (label < 0)
		return "";
	if ((unsigned)label < conf->n_rings)
		return conf->rings[label].id;
	label -= (int)conf->n_rings;
	if (sv->topology && (size_t)label < sv->topology->n_rings)
		return sv->topology->rings[label]->id;
	return "";
}

static int sv_ring_id_taken(Ring__RingView **v, size_t n, const char *id)
{
	for (size_t k = 0; k < n; k++)
		if (v[k]->id && !strcmp(v[k]->id, id))
			return 1;
	return 0;
}

/* A new ring's id: "ring-" and its lowest member, kept by the published
 * topology from then on; a second use gets "-2", "-3", ... */
static char *sv_ring_new_id(struct msg_arena *ar, const struct survey *sv,
			    const struct topo_ring *r, Ring__RingView **v,
			    size_t n)
{
	const char *low = "";
	char *id;

	for (unsigned i = 0; i < r->n_nodes; i++) {
		const char *x = sv->run->nodes[r->nodes[i]].name;

		if (!i || strcmp(x, low) < 0)
			low = x;
	}
	id = msg_arena_printf(ar, "ring-%.56s", low);
	for (unsigned k = 2; id && sv_ring_id_taken(v, n, id); k++)
		id = msg_arena_printf(ar, "ring-%.50s-%u", low, k);
	return id;
}

static int sv_ring_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Members a directive names that the survey did not include. */
static int sv_ring_not_surveyed(struct msg_arena *ar, const struct survey *sv,
				Ring__RingView *v)
{
	const struct coord_conf *conf = sv->conf;
	int c = coord_conf_ring_find(conf, v->id);

	if (c < 0)
		return 0;
	v->not_surveyed = msg_arena_alloc(ar, (conf->rings[c].n + 1) *
						      sizeof(*v->not_surveyed));
	if (!v->not_surveyed)
		return -1;
	for (unsigned i = 0; i < conf->rings[c].n; i++) {
		const char *m = conf->ring_nodes[conf->rings[c].first + i];

		if (sv_node_index(sv, m) < 0)
			v->not_surveyed[v->n_not_surveyed++] = (char *)m;
	}
	return 0;
}

/* The slowest of the ring's measured edges (the figure an edge is
 * judged by at publication: the top of its ladder, the worse way). */
static void sv_ring_slowest(struct msg_arena *ar, const Ring__Topology *top,
			    Ring__RingView *v)
{
	for (size_t i = 0; i < top->n_edges; i++) {
		const Ring__Edge *e = top->edges[i];
		double g = topoview_edge_gbps(e);
		int a = 0, b = 0;

		for (size_t k = 0; k < v->n_nodes; k++) {
			a |= !strcmp(v->nodes[k], e->a);
			b |= !strcmp(v->nodes[k], e->b);
		}
		if (!a || !b || g < 0)
			continue;
		if (!v->slowest_edge[0] || g < v->slowest_gbps) {
			v->slowest_gbps = g;
			v->slowest_edge =
				msg_arena_printf(ar, "%s-%s", e->a, e->b);
		}
	}
}

static Ring__RingView *sv_ring_view(struct survey *sv, struct msg_arena *ar,
				    const struct topo_ring *r,
				    Ring__Topology *top, size_t k)
{
	Ring__RingView *v = msg_arena_alloc(ar, sizeof(*v));
	const char *known;

	if (!v)
		return NULL;
	ring__ring_view__init(v);
	known = sv_ring_label_id(sv, r->label);
	v->id = known[0] ? (char *)known
			 : sv_ring_new_id(ar, sv, r, top->rings, k);
	v->configured = coord_conf_ring_find(sv->conf, v->id) >= 0;
	v->kind = (char *)topo_class_name(r->res.cls);
	v->n_components = r->res.n_components;
	v->nodes = msg_arena_alloc(ar, (r->n_nodes + 1) * sizeof(char *));
	v->order = msg_arena_alloc(ar, (r->res.n_order + 1) * sizeof(char *));
	if (!v->id || !v->nodes || !v->order)
		return NULL;
	for (unsigned i = 0; i < r->n_nodes; i++)
		v->nodes[v->n_nodes++] = sv->run->nodes[r->nodes[i]].name;
	qsort(v->nodes, v->n_nodes, sizeof(*v->nodes), sv_ring_cmp_names);
	for (unsigned i = 0; i < r->res.n_order; i++)
		v->order[v->n_order++] = sv->run->nodes[r->res.order[i]].name;
	if (r->res.cls == TOPO_LINE)
		v->line_gap = msg_arena_printf(
			ar, "%s-%s", sv->run->nodes[r->res.gap_a].name,
			sv->run->nodes[r->res.gap_b].name);
	if (!v->line_gap)
		return NULL;
	/* The live overlay (live_view.c) fills live_*; until then the
	 * order holds as surveyed. */
	v->order_valid = v->n_order > 0;
	v->surveyed_ms = top->surveyed_ms;
	if (sv_ring_not_surveyed(ar, sv, v) < 0)
		return NULL;
	return v;
}

int sv_rings_report(struct survey *sv, struct msg_arena *ar,
		    const struct topo_site *site, Ring__Topology *top)
{
	if (!site->n_rings)
		return 0;
	top->rings =
		msg_arena_alloc(ar, (site->n_rings + 1) * sizeof(*top->rings));
	if (!top->rings)
		return -1;
	for (unsigned k = 0; k < site->n_rings; k++) {
		Ring__RingView *v = sv_ring_view(sv, ar, &site->rings[k], top,
						 top->n_rings);

		if (!v)
			return -1;
		top->rings[top->n_rings++] = v;
		/* The site's own ranks are one ring's; several rings' ranks
		 * are the caller's (sv_ranks per ring). */
		if (site->n_rings == 1) {
			v->ranks = top->ranks;
			v->n_ranks = top->n_ranks;
		}
		sv_ring_slowest(ar, top, v);
	}
	return 0;
}
