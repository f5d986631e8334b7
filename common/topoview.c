/* See topoview.h. */
#include "topoview.h"

#include <string.h>

const Ring__DiagonalCheck *topoview_diagonal(const Ring__Topology *t, size_t i,
					     size_t *checks)
{
	const Ring__DiagonalCheck *d = t->diagonals[i], *show = d;
	size_t n = 0;

	for (size_t k = 0; k < t->n_diagonals; k++) {
		const Ring__DiagonalCheck *o = t->diagonals[k];

		if (strcmp(o->a, d->a) || strcmp(o->b, d->b))
			continue;
		if (k < i)
			return NULL;
		n++;
		if (o->path && !show->path)
			show = o;
	}
	if (checks)
		*checks = n;
	return show;
}

double topoview_edge_gbps(const Ring__Edge *e)
{
	double a, b;

	if (!e || !e->n_gbps_a_to_b || !e->n_gbps_b_to_a)
		return -1;
	a = e->gbps_a_to_b[e->n_gbps_a_to_b - 1];
	b = e->gbps_b_to_a[e->n_gbps_b_to_a - 1];
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return a < b ? a : b;
}
