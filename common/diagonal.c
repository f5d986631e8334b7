/* See diagonal.h. */
#include "diagonal.h"

#include <string.h>

const Ring__DiagonalCheck *diagonal_pair_show(const Ring__Topology *t, size_t i,
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
