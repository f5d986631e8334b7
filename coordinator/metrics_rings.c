/* The rings of the exposition (metrics_rings.h). */
#include "metrics_rings.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_expo.h"
#include "nodes.h"
#include "text.h"

struct mr_member {
	const char *node;
	const char *ring;
};

struct mr_rings {
	struct mr_member *m; /* by node name */
	size_t n;
	const char **ids; /* the rings' ids, sorted */
	size_t n_ids;
	const char **of_node; /* of r->nodes[i] */
};

static int mr_member_cmp(const void *x, const void *y)
{
	return strcmp(((const struct mr_member *)x)->node,
		      ((const struct mr_member *)y)->node);
}

static int mr_id_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

int mr_rings_new(struct mr *r)
{
	const Ring__Topology *t = r->src->topology;
	struct mr_rings *g = calloc(1, sizeof(*g));
	size_t total = 0;

	r->rings = g;
	if (!g)
		return -1;
	for (size_t k = 0; t && k < t->n_rings; k++)
		total += t->rings[k]->n_nodes;
	g->m = calloc(total ? total : 1, sizeof(*g->m));
	g->ids = calloc(t && t->n_rings ? t->n_rings : 1, sizeof(*g->ids));
	g->of_node = calloc(r->n_nodes ? r->n_nodes : 1, sizeof(*g->of_node));
	if (!g->m || !g->ids || !g->of_node)
		return -1;
	for (size_t k = 0; t && k < t->n_rings; k++) {
		const Ring__RingView *v = t->rings[k];

		g->ids[g->n_ids++] = mr_str(v->id);
		for (size_t i = 0; i < v->n_nodes; i++) {
			g->m[g->n].node = mr_str(v->nodes[i]);
			g->m[g->n++].ring = mr_str(v->id);
		}
	}
	qsort(g->m, g->n, sizeof(*g->m), mr_member_cmp);
	qsort(g->ids, g->n_ids, sizeof(*g->ids), mr_id_cmp);
	for (unsigned i = 0; i < r->n_nodes; i++)
		g->of_node[i] = mr_rings_of(r, r->nodes[i]->name);
	return 0;
}

void mr_rings_free(struct mr *r)
{
	if (!r->rings)
		return;
	free(r->rings->m);
	free(r->rings->ids);
	free(r->rings->of_node);
	free(r->rings);
	r->rings = NULL;
}

const char *mr_rings_of(const struct mr *r, const char *node)
{
	struct mr_member key = {.node = node}, *hit;

	if (!node || !r->rings || !r->rings->n)
		return "";
	hit = bsearch(&key, r->rings->m, r->rings->n, sizeof(key),
		      mr_member_cmp);
	return hit ? hit->ring : "";
}

const char *mr_rings_node(const struct mr *r, unsigned i)
{
	return r->rings && i < r->n_nodes ? r->rings->of_node[i] : "";
}

const char *mr_rings_edge(const struct mr *r, const char *a, const char *b)
{
	const char *ra = mr_rings_of(r, a);

	return strcmp(ra, mr_rings_of(r, b)) ? "" : ra;
}

struct mr_edge {
	const struct mr *r;
	const char *both, *one;
};

static int mr_rings_ends(const char *a, const char *b, void *arg)
{
	struct mr_edge *e = arg;
	const char *ra = mr_rings_of(e->r, a), *rb = mr_rings_of(e->r, b);

	if (*ra && !strcmp(ra, rb)) {
		e->both = ra;
		return 1;
	}
	if (!*e->one)
		e->one = *ra ? ra : rb;
	return 0;
}

/* "a-b" at any split (text.h): the first whose ends are both known
 * names a ring, or else one known end does. */
static const char *mr_rings_edge_text(const struct mr *r, const char *edge)
{
	struct mr_edge e = {.r = r, .one = ""};

	return text_edge_splits(edge, mr_rings_ends, &e) ? e.both : e.one;
}

const char *mr_rings_alert(const struct mr *r, const struct alert *a)
{
	const char *ring, *subject = a->subject;
	const char **hit;

	/* The table's own (Alert.ring), else worked out from the topology
	 * (an alert raised before it knew rings). */
	if (a->ring[0])
		return a->ring;
	ring = mr_rings_of(r, a->node[0] ? a->node : NULL);
	if (*ring)
		return ring;
	if (a->edge[0] && *(ring = mr_rings_edge_text(r, a->edge)))
		return ring;
	if (!r->rings || !r->rings->n_ids)
		return "";
	hit = bsearch(&subject, r->rings->ids, r->rings->n_ids,
		      sizeof(*r->rings->ids), mr_id_cmp);
	return hit ? *hit : "";
}

static void mr_ring_gauge(struct mr *r, const char *name, const char *help,
			  const Ring__Topology *t,
			  double (*fig)(const Ring__RingView *v))
{
	mr_head(r, name, help);
	for (size_t k = 0; t && k < t->n_rings; k++) {
		r->ring = mr_str(t->rings[k]->id);
		mr_sample(r, name, fig(t->rings[k]), NULL);
	}
}

static double mr_ring_nodes(const Ring__RingView *v)
{
	return (double)v->n_nodes;
}

static double mr_ring_firing(const Ring__RingView *v)
{
	return v->n_alerts;
}

static double mr_ring_not_surveyed(const Ring__RingView *v)
{
	return (double)v->n_not_surveyed;
}

/* Only with a published order, as ringd_topology_order_valid. */
static double mr_ring_order_valid(const Ring__RingView *v)
{
	return v->n_ranks ? v->order_valid != 0 : NAN;
}

static double mr_ring_slowest(const Ring__RingView *v)
{
	return v->slowest_edge && *v->slowest_edge && v->slowest_gbps >= 0
		       ? v->slowest_gbps * 1e9 / 8
		       : NAN;
}

static double mr_ring_surveyed(const Ring__RingView *v)
{
	return v->surveyed_ms ? (double)v->surveyed_ms / 1e3 : NAN;
}

void mr_rings_families(struct mr *r)
{
	const Ring__Topology *t = r->src->topology;

	mr_head(r, "ringd_topology_rings",
		"The rings of the site (connected parts of the data plane, or "
		"named by ring directives).");
	if (t)
		mr_sample(r, "ringd_topology_rings", (double)t->n_rings, NULL);
	mr_head(r, "ringd_ring_info",
		"A ring's class and whether a ring directive names it (value "
		"1).");
	for (size_t k = 0; t && k < t->n_rings; k++) {
		const Ring__RingView *v = t->rings[k];

		r->ring = mr_str(v->id);
		mr_sample(r, "ringd_ring_info", 1, "kind",
			  mr_in_set(v->kind, mr_kinds, "other"), "configured",
			  v->configured ? "true" : "false", NULL);
	}
	mr_ring_gauge(r, "ringd_ring_nodes", "The ring's members surveyed.", t,
		      mr_ring_nodes);
	mr_head(r, "ringd_ring_health",
		"1 for the ring's health by its firing alerts, 0 for the "
		"other states.");
	for (size_t k = 0; t && k < t->n_rings; k++) {
		const char *h = mr_in_set(t->rings[k]->health, mr_health, NULL);

		r->ring = mr_str(t->rings[k]->id);
		for (size_t i = 0; h && mr_health[i]; i++)
			mr_sample(r, "ringd_ring_health", h == mr_health[i],
				  "state", mr_health[i], NULL);
	}
	mr_ring_gauge(r, "ringd_ring_order_valid",
		      "1 while the ring's published rank order holds; only "
		      "with a published order.",
		      t, mr_ring_order_valid);
	mr_ring_gauge(r, "ringd_ring_alerts_firing",
		      "Alerts firing whose subject is in the ring.", t,
		      mr_ring_firing);
	mr_ring_gauge(r, "ringd_ring_slowest_edge_bytes_per_second",
		      "The figure of the ring's slowest measured edge (as "
		      "ringd_edge_headline_bytes_per_second).",
		      t, mr_ring_slowest);
	mr_ring_gauge(r, "ringd_ring_not_surveyed_nodes",
		      "Members a ring directive names that the last survey "
		      "could not include.",
		      t, mr_ring_not_surveyed);
	mr_ring_gauge(r, "ringd_ring_surveyed_timestamp_seconds",
		      "When the ring was last surveyed (Unix time).", t,
		      mr_ring_surveyed);
}
