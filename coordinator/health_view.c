/* The health's facts gathered from the modules that hold them
 * (health_view.h); the deriving is health.c's. */
#include "health_view.h"

#include <stdlib.h>
#include <string.h>

#include "health_rules.h"
#include "survey.h"

const Ring__Topology *health_view_topology(const struct health_view *v)
{
	const Ring__Topology *t =
		v->rules ? health_rules_topology(v->rules) : NULL;

	return t ? t : v->survey ? survey_topology(v->survey) : NULL;
}

/* The states that are not alerts: no survey, no rank order, an expected
 * node not up. */
void health_view_facts(struct nodes *nodes, const struct alerts *alerts,
		       const Ring__Topology *t, struct health_facts *f)
{
	struct node **v;
	unsigned n = 0;

	memset(f, 0, sizeof(*f));
	f->alerts = alerts;
	v = nodes ? nodes_sorted(nodes, &n) : NULL;
	for (unsigned i = 0; v && i < n; i++)
		if (v[i]->expected && v[i]->state != NODE_UP) {
			if (!f->n_missing++)
				f->missing = v[i]->name;
		}
	free(v);
	f->has_topology = t != NULL;
	f->kind = t ? t->kind : NULL;
	f->n_ranks = t ? t->n_ranks : 0;
	/* Several rings: a rank order each; the first without one is what
	 * the site lacks. */
	if (t && t->n_rings > 1) {
		f->n_ranks = 1;
		for (size_t k = 0; k < t->n_rings; k++)
			if (!t->rings[k]->n_ranks) {
				f->n_ranks = 0;
				f->kind = t->rings[k]->kind;
				f->no_order_ring = t->rings[k]->id;
				break;
			}
	}
}

void health_view_derive_ring(const struct health_view *v, uint64_t now_ms,
			     const Ring__Topology *t, const Ring__RingView *r,
			     struct health *out)
{
	struct health_facts f;

	if (!t || t->n_rings <= 1) {
		health_view_derive(v, now_ms, out);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.alerts = v->alerts;
	f.ring = r->id;
	f.has_topology = 1;
	f.kind = r->kind;
	f.n_ranks = r->n_ranks;
	f.no_order_ring = r->id;
	for (size_t i = 0; v->nodes && i < r->n_nodes; i++) {
		const struct node *n = nodes_find(v->nodes, r->nodes[i]);

		if (n && n->expected && n->state != NODE_UP && !f.n_missing++)
			f.missing = n->name;
	}
	if (v->rules)
		f.relearning = health_rules_relearning(v->rules, now_ms,
						       &f.relearn_left_ms);
	health_derive(&f, out);
}

int health_view_rings(const struct health_view *v, uint64_t now_ms,
		      const Ring__Topology *t, struct health_view_rings *out)
{
	size_t n = t ? t->n_rings : 0;

	memset(out, 0, sizeof(*out));
	if (!n)
		return 0;
	out->views = calloc(n, sizeof(*out->views));
	out->ptrs = calloc(n, sizeof(*out->ptrs));
	out->h = calloc(n, sizeof(*out->h));
	if (!out->views || !out->ptrs || !out->h) {
		health_view_rings_release(out);
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		Ring__RingView *r = &out->views[k];

		*r = *t->rings[k];
		health_view_derive_ring(v, now_ms, t, t->rings[k], &out->h[k]);
		r->health = (char *)health_name(out->h[k].state);
		r->health_cause = out->h[k].cause;
		r->health_subject = out->h[k].subject;
		r->health_text = out->h[k].text;
		r->n_alerts = (uint32_t)out->h[k].n_firing;
		out->ptrs[k] = r;
	}
	out->n = n;
	return 0;
}

void health_view_rings_release(struct health_view_rings *r)
{
	free(r->views);
	free(r->ptrs);
	free(r->h);
	memset(r, 0, sizeof(*r));
}

void health_view_derive(const struct health_view *v, uint64_t now_ms,
			struct health *out)
{
	struct health_facts f;

	health_view_facts(v->nodes, v->alerts, health_view_topology(v), &f);
	if (v->rules)
		f.relearning = health_rules_relearning(v->rules, now_ms,
						       &f.relearn_left_ms);
	health_derive(&f, out);
}
