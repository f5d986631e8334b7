/* Latency summaries: nearest-rank percentiles, min, mean, max. */
#include "stats.h"

#include <errno.h>
#include <stdlib.h>

static int stats_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

double stats_percentile_sorted(const double *v, size_t n, double p)
{
	double x;
	size_t r;

	if (n == 0)
		return 0.0;
	if (p <= 0.0)
		return v[0];
	if (p >= 100.0)
		return v[n - 1];
	/* Nearest rank = ceil(p/100 * n). The product is computed in binary
	 * floating point (99.9 * 1000 / 100 = 999.0000000000001), so a hair
	 * above an integer counts as that integer. */
	x = p / 100.0 * (double)n;
	r = (size_t)x;
	if (x - (double)r > 1e-9 * (x > 1.0 ? x : 1.0))
		r++;
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return v[r - 1];
}

int stats_summarize(double *v, size_t n, struct stats_summary *out)
{
	double sum = 0.0;

	if (!v || !out || n == 0) {
		errno = EINVAL;
		return -1;
	}
	qsort(v, n, sizeof(*v), stats_cmp);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	out->n = n;
	out->min = v[0];
	out->max = v[n - 1];
	out->mean = sum / (double)n;
	out->p50 = stats_percentile_sorted(v, n, 50.0);
	out->p99 = stats_percentile_sorted(v, n, 99.0);
	out->p999 = stats_percentile_sorted(v, n, 99.9);
	return 0;
}
