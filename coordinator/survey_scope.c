/* A survey of some rings only (issue 24): the nodes a scope holds, the
 * members of rings named by id, and the rings an automatic survey's new
 * nodes join, so that a change on one ring tests that ring alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_conf.h"
#include "ring_view.h"
#include "survey_int.h"

static int sv_scope_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int sv_scope_has(char (*const v)[64], unsigned n, const char *name)
{
	char key[64];

	if (!v)
		return 0;
	snprintf(key, sizeof(key), "%s", name);
	return bsearch(key, v, n, sizeof(key), sv_scope_cmp) != NULL;
}

int sv_scope_in(const struct survey_run *r, const char *name)
{
	return !r->scope || sv_scope_has(r->scope, r->n_scope, name);
}

int sv_scope_add(char (**v)[64], unsigned *n, const char *name)
{
	char(*grown)[64];
	unsigned k;

	if (sv_scope_has(*v, *n, name))
		return 0;
	grown = realloc(*v, (*n + 1) * sizeof(**v));
	if (!grown)
		return -1;
	*v = grown;
	/* Insertion keeps it sorted: scopes are a few rings' members. */
	for (k = *n; k && strcmp((*v)[k - 1], name) > 0; k--)
		memcpy((*v)[k], (*v)[k - 1], sizeof((*v)[k]));
	snprintf((*v)[k], sizeof((*v)[k]), "%s", name);
	(*n)++;
	return 0;
}

/* The members of the published ring id, and those a directive names. */
static int sv_scope_ring(const struct survey *sv, const char *id,
			 char (**v)[64], unsigned *n)
{
	const Ring__RingView *r = ring_view_find(sv->topology, id);
	const struct coord_conf *conf = sv->conf;
	int c = coord_conf_ring_find(conf, id);

	if (!r && c < 0) {
		errno = ENOENT;
		return -1;
	}
	for (size_t i = 0; r && i < r->n_nodes; i++)
		if (sv_scope_add(v, n, r->nodes[i]) < 0)
			return -1;
	for (unsigned i = 0; c >= 0 && i < conf->rings[c].n; i++)
		if (sv_scope_add(v, n,
				 conf->ring_nodes[conf->rings[c].first + i]) <
		    0)
			return -1;
	return 0;
}

int sv_scope_rings(const struct survey *sv, char *const *ids, size_t n_ids,
		   char (**v)[64], unsigned *n, char *why, size_t len)
{
	*v = NULL;
	*n = 0;
	for (size_t k = 0; k < n_ids; k++)
		if (sv_scope_ring(sv, ids[k], v, n) < 0) {
			if (errno == ENOENT)
				snprintf(why, len,
					 "unknown ring '%.64s' (ringctl status "
					 "lists the rings)",
					 ids[k]);
			else
				snprintf(why, len, "out of memory");
			free(*v);
			*v = NULL;
			*n = 0;
			return -1;
		}
	return 0;
}

/* The ring a node heard from its ports is in, added with its members. */
static int sv_scope_heard(const struct survey *sv, const struct node *x,
			  char (**v)[64], unsigned *n, int *hears)
{
	const Ring__NeighbourTable *t = x->neighbours;

	for (size_t i = 0; t && i < t->n_neighbours; i++) {
		const char *peer = t->neighbours[i]->remote_node;
		const Ring__RingView *r = ring_view_of_node(sv->topology, peer);

		*hears = 1;
		if (sv_scope_add(v, n, peer) < 0)
			return -1;
		if (r && !sv_scope_has(*v, *n, r->nodes[0]) &&
		    sv_scope_ring(sv, r->id, v, n) < 0)
			return -1;
	}
	return 0;
}

int sv_scope_fresh(const struct survey *sv, struct node *const *fresh,
		   unsigned n_fresh, char (**v)[64], unsigned *n)
{
	*v = NULL;
	*n = 0;
	/* One ring (or none yet): the whole site, as ever. */
	if (!sv->topology || sv->topology->n_rings < 2)
		return 1;
	for (unsigned i = 0; i < n_fresh; i++) {
		const Ring__RingView *r =
			ring_view_of_node(sv->topology, fresh[i]->name);
		int c = coord_conf_ring_of(sv->conf, fresh[i]->name);
		int hears = 0;

		if (sv_scope_add(v, n, fresh[i]->name) < 0 ||
		    (r && sv_scope_ring(sv, r->id, v, n) < 0) ||
		    (c >= 0 &&
		     sv_scope_ring(sv, sv->conf->rings[c].id, v, n) < 0) ||
		    sv_scope_heard(sv, fresh[i], v, n, &hears) < 0)
			goto full;
		/* No cable heard: where it belongs is unknown, the site's
		 * survey sets it apart or finds its ring. */
		if (!hears && !r && c < 0)
			goto full;
	}
	/* The rings of nodes the fresh ones heard that were new too. */
	return *n >= 2 ? 0 : 1;
full:
	free(*v);
	*v = NULL;
	*n = 0;
	return 1;
}
