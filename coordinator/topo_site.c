/* A site's rings: components grouped by the known rings, each classified
 * alone (topo_site.h). */
#include "topo_site.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct topo_site_work {
	const struct topo_input *in;
	const int *label;
	int rank0;
	unsigned n_comp;
	unsigned *size;	       /* nodes per component */
	unsigned *parent;      /* union of components one label holds */
	unsigned char *member; /* a component holds a known member */
	int *comp_label;       /* the lowest label a union's root holds */
	int *group;	       /* a union root's ring, or -1 */
	int any_known;
};

static unsigned topo_site_root(struct topo_site_work *s, unsigned c)
{
	while (s->parent[c] != c)
		c = s->parent[c] = s->parent[s->parent[c]];
	return c;
}

/* A known member: expected, or in a published ring. rank0 alone is not
 * (topo_analyse counts it): it names rank 0 of whichever ring holds it,
 * and sets no other ring apart. */
static int topo_site_is_member(const struct topo_site_work *s, unsigned i)
{
	return s->in->member && s->in->member[i];
}

static int topo_site_label(const struct topo_site_work *s, unsigned i)
{
	return s->label ? s->label[i] : -1;
}

/* Components, their sizes and known members; those holding one label's
 * members united. */
static int topo_site_unite(struct topo_site_work *s, const unsigned *comp)
{
	unsigned n = s->in->n_nodes;
	int max_label = -1;
	unsigned *first;

	for (unsigned i = 0; i < n; i++) {
		if (comp[i] + 1 > s->n_comp)
			s->n_comp = comp[i] + 1;
		if (topo_site_label(s, i) > max_label)
			max_label = topo_site_label(s, i);
	}
	s->size = calloc(s->n_comp + 1, sizeof(*s->size));
	s->parent = calloc(s->n_comp + 1, sizeof(*s->parent));
	s->member = calloc(s->n_comp + 1, 1);
	s->comp_label = calloc(s->n_comp + 1, sizeof(*s->comp_label));
	s->group = calloc(s->n_comp + 1, sizeof(*s->group));
	first = calloc((size_t)max_label + 2, sizeof(*first));
	if (!s->size || !s->parent || !s->member || !s->comp_label ||
	    !s->group || !first) {
		free(first);
		return -1;
	}
	for (unsigned c = 0; c < s->n_comp; c++) {
		s->parent[c] = c;
		s->comp_label[c] = -1;
		s->group[c] = -1;
	}
	for (int l = 0; l <= max_label; l++)
		first[l] = (unsigned)-1;
	for (unsigned i = 0; i < n; i++) {
		int l = topo_site_label(s, i);

		s->size[comp[i]]++;
		if (topo_site_is_member(s, i)) {
			s->member[comp[i]] = 1;
			s->any_known = 1;
		}
		if (l < 0)
			continue;
		s->any_known = 1;
		if (first[l] == (unsigned)-1)
			first[l] = comp[i];
		else
			s->parent[topo_site_root(s, comp[i])] =
				topo_site_root(s, first[l]);
	}
	for (unsigned i = 0; i < n; i++) {
		int l = topo_site_label(s, i);
		unsigned r = topo_site_root(s, comp[i]);

		if (l >= 0 && (s->comp_label[r] < 0 || l < s->comp_label[r]))
			s->comp_label[r] = l;
	}
	free(first);
	return 0;
}

/* Is component c (a root's part) in a ring of its own or its label's? */
static int topo_site_in_ring(struct topo_site_work *s, unsigned c)
{
	if (s->comp_label[topo_site_root(s, c)] >= 0)
		return 1;
	return s->size[c] >= 2 && (s->member[c] || !s->any_known);
}

/* Numbers the rings (union roots holding a component in a ring); an
 * unlabelled member with no cable joins the one ring there is. */
static unsigned topo_site_groups(struct topo_site_work *s, const unsigned *comp)
{
	unsigned n_groups = 0;
	int only = -1;

	for (unsigned c = 0; c < s->n_comp; c++) {
		unsigned r = topo_site_root(s, c);

		if (topo_site_in_ring(s, c) && s->group[r] < 0)
			s->group[r] = (int)n_groups++;
	}
	if (n_groups == 1)
		for (unsigned c = 0; c < s->n_comp; c++)
			if (s->group[c] >= 0)
				only = (int)c;
	for (unsigned i = 0; only >= 0 && i < s->in->n_nodes; i++) {
		unsigned r = topo_site_root(s, comp[i]);

		if (s->group[r] < 0 && s->size[comp[i]] == 1 &&
		    topo_site_is_member(s, i))
			s->parent[r] = (unsigned)only;
	}
	return n_groups;
}

static int topo_site_ring_of(struct topo_site_work *s, const unsigned *comp,
			     unsigned i)
{
	return s->group[topo_site_root(s, comp[i])];
}

/* Ring k's members, its sub-graph analysed alone, indices mapped back. */
static int topo_site_one(struct topo_site_work *s, const unsigned *comp,
			 enum topo_direction dir, int k, struct topo_ring *r)
{
	const struct topo_input *in = s->in;
	unsigned n = in->n_nodes, *sub_of = NULL, nl = 0, nu = 0;
	const char **names = NULL;
	struct topo_link *links = NULL;
	unsigned(*unexp)[2] = NULL;
	struct topo_input sub = {0};
	int rank0 = -1, rc = -1;

	r->label = -1;
	r->nodes = calloc(n + 1, sizeof(*r->nodes));
	sub_of = calloc(n + 1, sizeof(*sub_of));
	names = calloc(n + 1, sizeof(*names));
	links = calloc(in->n_links + 1, sizeof(*links));
	unexp = calloc(in->n_unexpected_paths + 1, sizeof(*unexp));
	if (!r->nodes || !sub_of || !names || !links || !unexp)
		goto out;
	for (unsigned i = 0; i < n; i++) {
		sub_of[i] = (unsigned)-1;
		if (topo_site_ring_of(s, comp, i) != k)
			continue;
		if (r->label < 0)
			r->label = s->comp_label[topo_site_root(s, comp[i])];
		if (s->rank0 >= 0 && (unsigned)s->rank0 == i)
			rank0 = (int)r->n_nodes;
		sub_of[i] = r->n_nodes;
		names[r->n_nodes] = in->names[i];
		r->nodes[r->n_nodes++] = i;
	}
	for (unsigned i = 0; i < in->n_links; i++) {
		const struct topo_link *l = &in->links[i];

		if (sub_of[l->a] == (unsigned)-1 ||
		    sub_of[l->b] == (unsigned)-1)
			continue;
		links[nl] = *l;
		links[nl].a = sub_of[l->a];
		links[nl].b = sub_of[l->b];
		nl++;
	}
	for (unsigned i = 0; i < in->n_unexpected_paths; i++) {
		unsigned a = in->unexpected_paths[i][0],
			 b = in->unexpected_paths[i][1];

		if (sub_of[a] == (unsigned)-1 || sub_of[b] == (unsigned)-1)
			continue;
		unexp[nu][0] = sub_of[a];
		unexp[nu][1] = sub_of[b];
		nu++;
	}
	sub.n_nodes = r->n_nodes;
	sub.names = names;
	sub.links = links;
	sub.n_links = nl;
	sub.unexpected_paths = (const unsigned(*)[2])unexp;
	sub.n_unexpected_paths = nu;
	if (topo_analyse(&sub, rank0, dir, &r->res) < 0)
		goto out;
	/* Site indices from here on; its anomalies are the site's. */
	for (unsigned i = 0; i < r->res.n_order; i++)
		r->res.order[i] = r->nodes[r->res.order[i]];
	if (r->res.cls == TOPO_LINE) {
		r->res.gap_a = r->nodes[r->res.gap_a];
		r->res.gap_b = r->nodes[r->res.gap_b];
	}
	free(r->res.anomalies);
	r->res.anomalies = NULL;
	r->res.n_anomalies = 0;
	free(r->res.comp);
	r->res.comp = NULL;
	rc = 0;
out:
	free(sub_of);
	free(names);
	free(links);
	free(unexp);
	return rc;
}

/* The site's own result for a site of one ring: rings[0] repeats it. */
static int topo_site_single(struct topo_site *out, int label)
{
	const struct topo_result *site = &out->site;
	struct topo_ring *r;

	out->rings = calloc(1, sizeof(*out->rings));
	if (!out->rings)
		return -1;
	r = &out->rings[0];
	out->n_rings = 1;
	r->label = label;
	r->res.cls = site->cls;
	r->res.gap_a = site->gap_a;
	r->res.gap_b = site->gap_b;
	r->res.n_components = site->n_components;
	r->res.order = calloc(site->n_order + 1, sizeof(*r->res.order));
	if (!r->res.order)
		return -1;
	if (site->n_order)
		memcpy(r->res.order, site->order,
		       site->n_order * sizeof(*site->order));
	r->res.n_order = site->n_order;
	return 0;
}

/* The members of a single ring: every node not set apart. */
static int topo_site_single_nodes(struct topo_site *out, unsigned n)
{
	struct topo_ring *r = &out->rings[0];

	r->nodes = calloc(n + 1, sizeof(*r->nodes));
	if (!r->nodes)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		int stray = 0;

		for (unsigned k = 0; k < out->site.n_strays; k++)
			stray |= out->site.strays[k].node == i;
		if (!stray)
			r->nodes[r->n_nodes++] = i;
	}
	return 0;
}

/* The lowest name among a ring's members. */
static const char *topo_site_lowest(const struct topo_ring *r,
				    const char *const *names)
{
	const char *x = "";

	for (unsigned i = 0; i < r->n_nodes; i++)
		if (!i || strcmp(names[r->nodes[i]], x) < 0)
			x = names[r->nodes[i]];
	return x;
}

static int topo_site_cmp_rings(const void *pa, const void *pb, void *arg)
{
	const char *const *names = arg;

	return strcmp(topo_site_lowest(pa, names), topo_site_lowest(pb, names));
}

/* Several rings: the site's class is TOPO_RINGS, with no order, and its
 * strays are the nodes in no ring, ascending by name. */
static int topo_site_several(struct topo_site_work *s, const unsigned *comp,
			     struct topo_site *out)
{
	struct topo_result *site = &out->site;
	const struct topo_input *in = s->in;

	site->cls = TOPO_RINGS;
	site->n_order = 0;
	site->gap_a = site->gap_b = 0;
	site->n_components = out->n_rings;
	free(site->strays);
	site->n_strays = 0;
	site->strays = calloc(in->n_nodes + 1, sizeof(*site->strays));
	if (!site->strays)
		return -1;
	for (unsigned i = 0; i < in->n_nodes; i++) {
		unsigned k;

		if (topo_site_ring_of(s, comp, i) >= 0)
			continue;
		for (k = site->n_strays;
		     k && strcmp(in->names[site->strays[k - 1].node],
				 in->names[i]) > 0;
		     k--)
			site->strays[k] = site->strays[k - 1];
		site->strays[k].node = i;
		site->strays[k].reason = s->size[comp[i]] >= 2
						 ? TOPO_STRAY_OFF_RING
						 : TOPO_STRAY_NO_CABLE;
		site->n_strays++;
	}
	return 0;
}

int topo_site_analyse(const struct topo_input *in, const int *label, int rank0,
		      enum topo_direction dir, struct topo_site *out)
{
	struct topo_site_work s = {.in = in, .label = label, .rank0 = rank0};
	const unsigned *comp;
	unsigned n_groups;
	int rc = -1;

	if (!out) {
		errno = EINVAL;
		return -1;
	}
	memset(out, 0, sizeof(*out));
	/* The site as topo_analyse sees it, a known ring's members known
	 * members too. */
	if (label) {
		unsigned char *member = calloc(in->n_nodes + 1, 1);
		struct topo_input known = *in;
		int r;

		if (!member)
			return -1;
		for (unsigned i = 0; i < in->n_nodes; i++)
			member[i] =
				(in->member && in->member[i]) || label[i] >= 0;
		known.member = member;
		r = topo_analyse(&known, rank0, dir, &out->site);
		free(member);
		if (r < 0)
			return -1;
	} else if (topo_analyse(in, rank0, dir, &out->site) < 0) {
		return -1;
	}
	comp = out->site.comp;
	if (topo_site_unite(&s, comp) < 0)
		goto fail;
	n_groups = topo_site_groups(&s, comp);
	if (n_groups <= 1) {
		int only_label = -1;

		for (unsigned c = 0; c < s.n_comp; c++)
			if (s.group[c] >= 0)
				only_label = s.comp_label[c];
		if ((n_groups || out->site.cls == TOPO_SWITCH) &&
		    (topo_site_single(out, only_label) < 0 ||
		     topo_site_single_nodes(out, in->n_nodes) < 0))
			goto fail;
		rc = 0;
		goto done;
	}
	out->rings = calloc(n_groups, sizeof(*out->rings));
	if (!out->rings)
		goto fail;
	for (unsigned k = 0; k < n_groups; k++) {
		out->n_rings++;
		if (topo_site_one(&s, comp, dir, (int)k, &out->rings[k]) < 0)
			goto fail;
	}
	qsort_r(out->rings, out->n_rings, sizeof(*out->rings),
		topo_site_cmp_rings, (void *)in->names);
	if (topo_site_several(&s, comp, out) < 0)
		goto fail;
	free(out->site.order);
	out->site.order = NULL;
	rc = 0;
	goto done;
fail:
	topo_site_free(out);
	errno = ENOMEM;
done:
	free(s.size);
	free(s.parent);
	free(s.member);
	free(s.comp_label);
	free(s.group);
	return rc;
}

void topo_site_free(struct topo_site *s)
{
	if (!s)
		return;
	for (unsigned k = 0; k < s->n_rings; k++) {
		free(s->rings[k].nodes);
		topo_result_free(&s->rings[k].res);
	}
	free(s->rings);
	topo_result_free(&s->site);
	memset(s, 0, sizeof(*s));
}
