/* The stream (or QP) count at which the survey's ladder saturates, from
 * the published edges with the findings' rule (common/ladder.h): what
 * `ranks -f env` prints as NCCL's channel counts and what check nccl-env
 * holds a job's channel counts against. */
#include "ladder_advice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ladder.h"

/* The edges of one method with the first such edge's ladder: findings
 * never compare one method's figures with another's. */
static size_t check_env_pick(const Ring__Topology *t, Ring__EdgeMethod method,
			     size_t *use)
{
	const Ring__Edge *first = NULL;
	size_t n = 0;

	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (e->method_kind != method || e->n_ladder < 2 ||
		    e->n_ladder > LADDER_MAX_STEPS)
			continue;
		if (!first)
			first = e;
		if (e->n_ladder != first->n_ladder ||
		    memcmp(e->ladder, first->ladder,
			   e->n_ladder * sizeof(*e->ladder)))
			continue;
		use[n++] = i;
	}
	return n;
}

/* common/ladder.h's rule, the one coordinator/findings.c advises with,
 * on the survey's TCP edges, else its RDMA edges. */
void ladder_advice_compute(const Ring__Topology *t, struct ladder_advice *sat)
{
	static const Ring__EdgeMethod methods[] = {
		RING__EDGE_METHOD__EDGE_METHOD_TCP,
		RING__EDGE_METHOD__EDGE_METHOD_RDMA};
	size_t *use = calloc(t->n_edges + 1, sizeof(*use));
	struct ladder_edge *le = calloc(t->n_edges + 1, sizeof(*le));

	memset(sat, 0, sizeof(*sat));
	for (size_t k = 0; use && le && k < 2 && !sat->streams; k++) {
		size_t n = check_env_pick(t, methods[k], use), w = 0;
		struct ladder_sat ls;
		const Ring__Edge *e0;

		if (!n)
			continue;
		e0 = t->edges[use[0]];
		for (size_t i = 0; i < n; i++) {
			const Ring__Edge *e = t->edges[use[i]];

			le[i].gbps[0] = e->gbps_a_to_b;
			le[i].n[0] = e->n_gbps_a_to_b;
			le[i].gbps[1] = e->gbps_b_to_a;
			le[i].n[1] = e->n_gbps_b_to_a;
		}
		if (ladder_saturation(e0->ladder, e0->n_ladder, le, n, &ls) < 0)
			continue;
		sat->streams = ls.advised.streams;
		sat->top = e0->ladder[ls.top];
		sat->pct_of_top = ls.advised.ratio * 100.0;
		sat->edges = ls.advised.edges;
		sat->method = k ? "rdma" : "tcp";
		for (size_t i = 0; i < n; i++)
			if (t->edges[use[i]]->measured_ms > sat->measured_ms)
				sat->measured_ms =
					t->edges[use[i]]->measured_ms;
		for (size_t s = 0; s < e0->n_ladder && w < sizeof(sat->ladder);
		     s++)
			w += (size_t)snprintf(sat->ladder + w,
					      sizeof(sat->ladder) - w, "%s%u",
					      s ? "," : "", e0->ladder[s]);
	}
	free(use);
	free(le);
}
