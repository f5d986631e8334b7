/* Summary statistics for latency samples. */
#ifndef RING_STATS_H
#define RING_STATS_H

#include <stddef.h>

struct stats_summary {
	size_t n;
	double min, p50, mean, p99, p999, max;
};

/* Sorts v (n > 0) in place and summarises it. Percentiles use the
 * nearest-rank method: the smallest sample with at least p% of samples at
 * or below it. 0, or -1 with errno EINVAL when n == 0. */
int stats_summarize(double *v, size_t n, struct stats_summary *out);
/* Nearest-rank percentile (0 < p <= 100) of an ascending array. */
double stats_percentile_sorted(const double *v, size_t n, double p);

#endif
