/* A scoped survey's result put into the published topology (issue 24):
 * what the published one says about nodes outside the scope kept, what
 * it says about the scope's nodes replaced by the new result. */
#include <string.h>

#include "msg_arena.h"
#include "survey_int.h"

/* Does the message name a node of the scope? */
static int sv_merge_touches(const struct survey_run *run, const char *a,
			    const char *b)
{
	return (a && sv_scope_has(run->scope, run->n_scope, a)) ||
	       (b && sv_scope_has(run->scope, run->n_scope, b));
}

/* A finding of the published topology kept: it names nodes, none of
 * them the scope's. One naming no node is the old survey's about the
 * site: the new one says its own. */
static int sv_merge_keep_finding(const struct survey_run *run,
				 const Ring__Finding *f)
{
	int named = 0;

	if (f->node[0]) {
		named = 1;
		if (sv_merge_touches(run, f->node, NULL))
			return 0;
	}
	if (f->peer_node[0]) {
		named = 1;
		if (sv_merge_touches(run, f->peer_node, NULL))
			return 0;
	}
	for (size_t i = 0; i < f->n_nodes; i++) {
		named = 1;
		if (sv_merge_touches(run, f->nodes[i], NULL))
			return 0;
	}
	return named;
}

static Ring__Finding **sv_merge_findings(struct msg_arena *ar,
					 const struct survey_run *run,
					 Ring__Finding **old, size_t n_old,
					 Ring__Finding **new_, size_t n_new,
					 size_t *n)
{
	Ring__Finding **v =
		msg_arena_alloc(ar, (n_old + n_new + 1) * sizeof(*v));

	*n = 0;
	for (size_t i = 0; v && i < n_old; i++)
		if (sv_merge_keep_finding(run, old[i]))
			v[(*n)++] = old[i];
	for (size_t i = 0; v && i < n_new; i++)
		v[(*n)++] = new_[i];
	return v;
}

/* Edges and the cables that index them: the old ones outside the scope
 * renumbered, then the new ones after them. */
static int sv_merge_edges(struct msg_arena *ar, const struct survey_run *run,
			  const Ring__Topology *old, const Ring__Topology *new_,
			  Ring__Topology *out)
{
	size_t *renum =
		msg_arena_alloc(ar, (old->n_edges + 1) * sizeof(*renum));
	size_t n_idx = 0, kept;
	uint32_t *idx;

	out->edges = msg_arena_alloc(ar, (old->n_edges + new_->n_edges + 1) *
						 sizeof(*out->edges));
	out->cables = msg_arena_alloc(ar, (old->n_cables + new_->n_cables + 1) *
						  sizeof(*out->cables));
	for (size_t i = 0; i < old->n_cables; i++)
		n_idx += old->cables[i]->n_edges;
	for (size_t i = 0; i < new_->n_cables; i++)
		n_idx += new_->cables[i]->n_edges;
	idx = msg_arena_alloc(ar, (n_idx + 1) * sizeof(*idx));
	if (!renum || !out->edges || !out->cables || !idx)
		return -1;
	out->n_edges = 0;
	for (size_t i = 0; i < old->n_edges; i++) {
		renum[i] = (size_t)-1;
		if (sv_merge_touches(run, old->edges[i]->a, old->edges[i]->b))
			continue;
		renum[i] = out->n_edges;
		out->edges[out->n_edges++] = old->edges[i];
	}
	kept = out->n_edges;
	for (size_t i = 0; i < new_->n_edges; i++)
		out->edges[out->n_edges++] = new_->edges[i];
	out->n_cables = 0;
	for (size_t i = 0; i < old->n_cables + new_->n_cables; i++) {
		int is_old = i < old->n_cables;
		const Ring__Cable *c = is_old ? old->cables[i]
					      : new_->cables[i - old->n_cables];
		Ring__Cable *mine;

		if (is_old && sv_merge_touches(run, c->a, c->b))
			continue;
		mine = msg_arena_alloc(ar, sizeof(*mine));
		if (!mine)
			return -1;
		*mine = *c;
		mine->edges = idx;
		mine->n_edges = 0;
		for (size_t k = 0; k < c->n_edges; k++) {
			if (!is_old)
				idx[mine->n_edges++] =
					(uint32_t)(kept + c->edges[k]);
			else if (c->edges[k] < old->n_edges &&
				 renum[c->edges[k]] != (size_t)-1)
				idx[mine->n_edges++] =
					(uint32_t)renum[c->edges[k]];
		}
		idx += mine->n_edges;
		out->cables[out->n_cables++] = mine;
	}
	return 0;
}

static int sv_merge_lists(struct msg_arena *ar, const struct survey_run *run,
			  const Ring__Topology *old, const Ring__Topology *new_,
			  Ring__Topology *out)
{
	out->diagonals =
		msg_arena_alloc(ar, (old->n_diagonals + new_->n_diagonals + 1) *
					    sizeof(*out->diagonals));
	out->strays = msg_arena_alloc(ar, (old->n_strays + new_->n_strays + 1) *
						  sizeof(*out->strays));
	out->rings = msg_arena_alloc(ar, (old->n_rings + new_->n_rings + 1) *
						 sizeof(*out->rings));
	out->load_rounds =
		msg_arena_alloc(ar, (old->n_load_rounds + new_->n_load_rounds +
				     1) * sizeof(*out->load_rounds));
	if (!out->diagonals || !out->strays || !out->rings || !out->load_rounds)
		return -1;
	out->n_diagonals = out->n_strays = out->n_rings = 0;
	for (size_t i = 0; i < old->n_diagonals; i++)
		if (!sv_merge_touches(run, old->diagonals[i]->a,
				      old->diagonals[i]->b))
			out->diagonals[out->n_diagonals++] = old->diagonals[i];
	for (size_t i = 0; i < new_->n_diagonals; i++)
		out->diagonals[out->n_diagonals++] = new_->diagonals[i];
	for (size_t i = 0; i < old->n_strays; i++)
		if (!sv_merge_touches(run, old->strays[i]->node, NULL))
			out->strays[out->n_strays++] = old->strays[i];
	for (size_t i = 0; i < new_->n_strays; i++)
		out->strays[out->n_strays++] = new_->strays[i];
	for (size_t i = 0; i < old->n_rings; i++) {
		int touched = 0;

		for (size_t k = 0; k < old->rings[i]->n_nodes && !touched; k++)
			touched = sv_merge_touches(run, old->rings[i]->nodes[k],
						   NULL);
		if (!touched)
			out->rings[out->n_rings++] = old->rings[i];
	}
	for (size_t i = 0; i < new_->n_rings; i++)
		out->rings[out->n_rings++] = new_->rings[i];
	/* The new load rounds: the old ones measured other rings at another
	 * time, and stay with those rings' edges' figures. */
	out->n_load_rounds = new_->n_load_rounds;
	for (size_t i = 0; i < new_->n_load_rounds; i++)
		out->load_rounds[i] = new_->load_rounds[i];
	return 0;
}

/* The site's own fields from its rings: one ring's, or "rings". */
static void sv_merge_site(const Ring__Topology *new_, Ring__Topology *out)
{
	if (out->n_rings == 1) {
		const Ring__RingView *r = out->rings[0];

		out->kind = r->kind;
		out->order = r->order;
		out->n_order = r->n_order;
		out->ranks = r->ranks;
		out->n_ranks = r->n_ranks;
		out->line_gap = r->line_gap;
		return;
	}
	out->kind = out->n_rings > 1 ? "rings" : new_->kind;
	out->n_order = out->n_rings > 1 ? 0 : new_->n_order;
	out->order = out->n_rings > 1 ? NULL : new_->order;
	out->n_ranks = out->n_rings > 1 ? 0 : new_->n_ranks;
	out->ranks = out->n_rings > 1 ? NULL : new_->ranks;
	out->line_gap = out->n_rings > 1 ? "" : new_->line_gap;
}

int sv_merge_scope(struct msg_arena *ar, const struct survey_run *run,
		   const Ring__Topology *old, const Ring__Topology *new_,
		   Ring__Topology *out)
{
	*out = *new_;
	if (!old || !run->scope)
		return 0;
	if (sv_merge_edges(ar, run, old, new_, out) < 0 ||
	    sv_merge_lists(ar, run, old, new_, out) < 0)
		return -1;
	out->findings = sv_merge_findings(ar, run, old->findings,
					  old->n_findings, new_->findings,
					  new_->n_findings, &out->n_findings);
	out->anomalies = sv_merge_findings(
		ar, run, old->anomalies, old->n_anomalies, new_->anomalies,
		new_->n_anomalies, &out->n_anomalies);
	if (!out->findings || !out->anomalies)
		return -1;
	sv_merge_site(new_, out);
	return 0;
}
