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
