/* See ladder.h. */
#include "ladder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int ladder_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

static int ladder_measured(const struct ladder_edge *e, int d, size_t step)
{
	return step < e->n[d] && e->gbps[d] && e->gbps[d][step] >= 0.0;
}

/* Mean over directions of step / top; < 0 when no direction has both. */
static double ladder_edge_ratio(const struct ladder_edge *e, size_t step,
				size_t top)
{
	double sum = 0.0;
	int k = 0;

	for (int d = 0; d < 2; d++) {
		if (!ladder_measured(e, d, step) ||
		    !ladder_measured(e, d, top) || !(e->gbps[d][top] > 0.0))
			continue;
		sum += e->gbps[d][step] / e->gbps[d][top];
		k++;
	}
	return k ? sum / k : -1.0;
}

/* The median over edges of step / top into p; -1 when no edge has both. */
static int ladder_point_at(const struct ladder_edge *edges, size_t n,
			   const uint32_t *streams, size_t step, size_t top,
			   double *tmp, struct ladder_point *p)
{
	unsigned m = 0;

	for (size_t i = 0; i < n; i++) {
		double r = ladder_edge_ratio(&edges[i], step, top);

		if (r >= 0.0)
			tmp[m++] = r;
	}
	if (!m)
		return -1;
	qsort(tmp, m, sizeof(*tmp), ladder_cmp);
	p->streams = streams[step];
	p->ratio = (tmp[(m - 1) / 2] + tmp[m / 2]) / 2.0;
	p->edges = m;
	return 0;
}

int ladder_saturation(const uint32_t *streams, size_t steps,
		      const struct ladder_edge *edges, size_t n,
		      struct ladder_sat *out)
{
	uint32_t last = 0;
	double *tmp;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (!streams || steps < 2 || steps > LADDER_MAX_STEPS || !edges || !n) {
		errno = EINVAL;
		return -1;
	}
	for (size_t s = 1; s < steps; s++) {
		if (streams[s] > streams[out->top])
			out->top = s;
		if (streams[s] < streams[out->base])
			out->base = s;
	}
	if (streams[out->base] == streams[out->top]) {
		errno = EINVAL; /* one count: nothing to compare */
		return -1;
	}
	tmp = calloc(n, sizeof(*tmp));
	if (!tmp) {
		errno = ENOMEM;
		return -1;
	}
	if (ladder_point_at(edges, n, streams, out->base, out->top, tmp,
			    &out->first) < 0) {
		errno = EINVAL;
		goto out;
	}
	out->saturates = out->first.ratio < LADDER_SAT_LOW;
	out->advised = out->first;
	if (out->saturates) {
		out->advised.streams = streams[out->top];
		out->advised.ratio = 1.0;
	}
	/* The counts between, smallest first: the first that comes close
	 * to the top is enough. */
	for (;;) {
		size_t mid = steps;

		for (size_t s = 0; s < steps; s++)
			if (streams[s] > last &&
			    streams[s] > streams[out->base] &&
			    streams[s] < streams[out->top] &&
			    (mid == steps || streams[s] < streams[mid]))
				mid = s;
		if (mid == steps)
			break;
		last = streams[mid];
		if (ladder_point_at(edges, n, streams, mid, out->top, tmp,
				    &out->mid[out->n_mid]) < 0)
			continue;
		if (out->saturates &&
		    out->advised.streams == streams[out->top] &&
		    out->mid[out->n_mid].ratio >= LADDER_SAT_ENOUGH)
			out->advised = out->mid[out->n_mid];
		out->n_mid++;
	}
	ret = 0;
out:
	free(tmp);
	return ret;
}
