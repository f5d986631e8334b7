/* One ring of a site from the site's topology: lookups and the filtered
 * view. Pure. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ring_view.h"
#include "text.h"

const Ring__RingView *ring_view_find(const Ring__Topology *site, const char *id)
{
	for (size_t k = 0; site && id && k < site->n_rings; k++)
		if (!strcmp(site->rings[k]->id, id))
			return site->rings[k];
	return NULL;
}

static int ring_view_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

/* Members are ascending by name (RingView.nodes): a binary search, for
 * rings of thousands. */
int ring_view_member(const Ring__RingView *r, const char *node)
{
	if (!r || !node || !r->n_nodes)
		return 0;
	return bsearch(node, r->nodes, r->n_nodes, sizeof(*r->nodes),
		       ring_view_cmp) != NULL;
}

const Ring__RingView *ring_view_of_node(const Ring__Topology *site,
					const char *node)
{
	for (size_t k = 0; site && k < site->n_rings; k++)
		if (ring_view_member(site->rings[k], node))
			return site->rings[k];
	return NULL;
}

const Ring__RingView *ring_view_of_edge(const Ring__Topology *site,
					const char *a, const char *b)
{
	const Ring__RingView *r = ring_view_of_node(site, a);

	return r && ring_view_member(r, b) ? r : NULL;
}

static int ring_view_end_in(const char *a, const char *b, void *arg)
{
	return ring_view_member(arg, a) || ring_view_member(arg, b);
}

/* Does "a-b" name a member at either end (any split: text.h)? */
static int ring_view_edge_in(const Ring__RingView *r, const char *edge)
{
	return text_edge_splits(edge, ring_view_end_in, (void *)r);
}

int ring_view_finding_in(const Ring__RingView *r, const Ring__Finding *f)
{
	int named = 0;

	if (f->ring_id && f->ring_id[0])
		return !strcmp(f->ring_id, r->id);
	if (f->node[0]) {
		named = 1;
		if (ring_view_member(r, f->node))
			return 1;
	}
	if (f->peer_node[0]) {
		named = 1;
		if (ring_view_member(r, f->peer_node))
			return 1;
	}
	for (size_t i = 0; i < f->n_nodes; i++) {
		named = 1;
		if (ring_view_member(r, f->nodes[i]))
			return 1;
	}
	if (f->edge[0]) {
		named = 1;
		if (ring_view_edge_in(r, f->edge))
			return 1;
	}
	return !named;
}

static void *ring_view_keep(struct ring_view *v, size_t n, size_t size)
{
	for (size_t i = 0; i < sizeof(v->mem) / sizeof(v->mem[0]); i++)
		if (!v->mem[i]) {
			v->mem[i] = calloc(n ? n : 1, size);
			return v->mem[i];
		}
	return NULL;
}

static int ring_view_findings(const Ring__RingView *r, Ring__Finding **in,
			      size_t n_in, Ring__Finding ***out, size_t *n_out,
			      struct ring_view *v)
{
	*out = ring_view_keep(v, n_in, sizeof(**out));
	*n_out = 0;
	if (!*out)
		return -1;
	for (size_t i = 0; i < n_in; i++)
		if (ring_view_finding_in(r, in[i]))
			(*out)[(*n_out)++] = in[i];
	return 0;
}

static int ring_view_edges(const Ring__Topology *s, const Ring__RingView *r,
			   struct ring_view *v, size_t **renum)
{
	Ring__Topology *t = &v->top;

	t->edges = ring_view_keep(v, s->n_edges, sizeof(*t->edges));
	*renum = ring_view_keep(v, s->n_edges, sizeof(**renum));
	if (!t->edges || !*renum)
		return -1;
	t->n_edges = 0;
	for (size_t i = 0; i < s->n_edges; i++) {
		(*renum)[i] = (size_t)-1;
		if (ring_view_member(r, s->edges[i]->a) &&
		    ring_view_member(r, s->edges[i]->b)) {
			(*renum)[i] = t->n_edges;
			t->edges[t->n_edges++] = s->edges[i];
		}
	}
	t->diagonals = ring_view_keep(v, s->n_diagonals, sizeof(*t->diagonals));
	if (!t->diagonals)
		return -1;
	t->n_diagonals = 0;
	for (size_t i = 0; i < s->n_diagonals; i++)
		if (ring_view_member(r, s->diagonals[i]->a) &&
		    ring_view_member(r, s->diagonals[i]->b))
			t->diagonals[t->n_diagonals++] = s->diagonals[i];
	return 0;
}

static int ring_view_cables(const Ring__Topology *s, const Ring__RingView *r,
			    struct ring_view *v, const size_t *renum)
{
	Ring__Topology *t = &v->top;
	size_t n_idx = 0;
	uint32_t *idx;

	for (size_t i = 0; i < s->n_cables; i++)
		n_idx += s->cables[i]->n_edges;
	t->cables = ring_view_keep(v, s->n_cables, sizeof(*t->cables));
	v->cables = calloc(s->n_cables ? s->n_cables : 1, sizeof(*v->cables));
	idx = ring_view_keep(v, n_idx, sizeof(*idx));
	if (!t->cables || !v->cables || !idx)
		return -1;
	t->n_cables = 0;
	for (size_t i = 0; i < s->n_cables; i++) {
		const Ring__Cable *c = s->cables[i];
		Ring__Cable *mine = &v->cables[t->n_cables];

		if (!ring_view_member(r, c->a) || !ring_view_member(r, c->b))
			continue;
		*mine = *c;
		mine->edges = idx;
		mine->n_edges = 0;
		for (size_t k = 0; k < c->n_edges; k++)
			if (c->edges[k] < s->n_edges &&
			    renum[c->edges[k]] != (size_t)-1)
				idx[mine->n_edges++] =
					(uint32_t)renum[c->edges[k]];
		idx += mine->n_edges;
		t->cables[t->n_cables++] = mine;
	}
	return 0;
}

static int ring_view_rounds(const Ring__Topology *s, const Ring__RingView *r,
			    struct ring_view *v)
{
	Ring__Topology *t = &v->top;
	size_t n_edges = 0;
	Ring__LoadEdge **le;

	for (size_t i = 0; i < s->n_load_rounds; i++)
		n_edges += s->load_rounds[i]->n_edges;
	t->load_rounds =
		ring_view_keep(v, s->n_load_rounds, sizeof(*t->load_rounds));
	v->rounds = calloc(s->n_load_rounds ? s->n_load_rounds : 1,
			   sizeof(*v->rounds));
	le = ring_view_keep(v, n_edges, sizeof(*le));
	if (!t->load_rounds || !v->rounds || !le)
		return -1;
	t->n_load_rounds = 0;
	for (size_t i = 0; i < s->n_load_rounds; i++) {
		const Ring__LoadRound *lr = s->load_rounds[i];
		Ring__LoadRound *mine = &v->rounds[t->n_load_rounds];

		*mine = *lr;
		mine->edges = le;
		mine->n_edges = 0;
		for (size_t k = 0; k < lr->n_edges; k++)
			if (ring_view_member(r, lr->edges[k]->a) &&
			    ring_view_member(r, lr->edges[k]->b))
				le[mine->n_edges++] = lr->edges[k];
		le += mine->n_edges;
		if (mine->n_edges)
			t->load_rounds[t->n_load_rounds++] = mine;
	}
	return 0;
}

int ring_view_build(const Ring__Topology *site, const Ring__RingView *r,
		    struct ring_view *out)
{
	Ring__Topology *t = &out->top;
	size_t *renum = NULL;

	memset(out, 0, sizeof(*out));
	if (!site || !r) {
		errno = EINVAL;
		return -1;
	}
	*t = *site;
	t->kind = r->kind;
	t->n_order = r->n_order;
	t->order = r->order;
	t->n_ranks = r->n_ranks;
	t->ranks = r->ranks;
	t->line_gap = r->line_gap;
	t->live_kind = r->live_kind;
	t->live_gap = r->live_gap;
	t->order_valid = r->order_valid;
	t->order_invalid = r->order_invalid;
	t->n_live_nodes_down = r->n_live_nodes_down;
	t->live_nodes_down = r->live_nodes_down;
	t->n_live_cables_down = r->n_live_cables_down;
	t->live_cables_down = r->live_cables_down;
	t->n_not_surveyed = r->n_not_surveyed;
	t->not_surveyed = r->not_surveyed;
	if (r->surveyed_ms)
		t->surveyed_ms = r->surveyed_ms;
	t->n_strays = 0;
	t->strays = NULL;
	t->n_rings = 0;
	t->rings = NULL;
	if (ring_view_edges(site, r, out, &renum) < 0 ||
	    ring_view_cables(site, r, out, renum) < 0 ||
	    ring_view_rounds(site, r, out) < 0 ||
	    ring_view_findings(r, site->findings, site->n_findings,
			       &t->findings, &t->n_findings, out) < 0 ||
	    ring_view_findings(r, site->anomalies, site->n_anomalies,
			       &t->anomalies, &t->n_anomalies, out) < 0) {
		ring_view_release(out);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void ring_view_release(struct ring_view *v)
{
	for (size_t i = 0; i < sizeof(v->mem) / sizeof(v->mem[0]); i++)
		free(v->mem[i]);
	free(v->cables);
	free(v->rounds);
	memset(v, 0, sizeof(*v));
}
