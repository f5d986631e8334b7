/* Findings from measured edge bandwidth. Thresholds, all fractions:
 *
 * - saturation: per edge, the ratio of the 1-stream to the 8-stream
 *   figure, averaged over the directions measured at both steps; the
 *   median over edges below FINDINGS_SAT_LOW (80%) is reported, with the
 *   smallest step whose median ratio reaches FINDINGS_SAT_ENOUGH (90%) as
 *   the advised channel count (8 when 4 streams fall short or were not
 *   measured).
 * - uniform ceiling: each edge's 8-stream figure is the lower of its two
 *   directions. With at least two such edges, all within
 *   FINDINGS_UNIFORM_SPREAD of each other ((max - min) / max <= 20%) and
 *   their median under FINDINGS_UNIFORM_UNDER (70%) of a known nominal
 *   rate, the limit is shared, not one cable's. The spread printed is
 *   max / min - 1, the way the field notes state it.
 * - degraded edge: with at least three edges, one whose 8-stream figure is
 *   under FINDINGS_DEGRADED (70%) of the median of the other edges.
 * - asymmetric: an edge whose two 8-stream directions differ by more than
 *   FINDINGS_ASYM (20%) of the larger.
 *
 * Medians of an even count average the middle two. A figure < 0 (or NaN)
 * was not measured and takes no part. Order of findings: uniform ceiling,
 * degraded edges, asymmetric edges, saturation. */
#include "findings.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FINDINGS_SAT_LOW 0.80
#define FINDINGS_SAT_ENOUGH 0.90
#define FINDINGS_UNIFORM_SPREAD 0.20
#define FINDINGS_UNIFORM_UNDER 0.70
#define FINDINGS_DEGRADED 0.70
#define FINDINGS_ASYM 0.20

#define FINDINGS_STEP_1 0
#define FINDINGS_STEP_4 1
#define FINDINGS_STEP_8 2

struct findings_out {
	struct finding *v;
	unsigned n, max;
};

static int findings_measured(double g)
{
	return g >= 0.0; /* false for NaN too */
}

static struct finding *findings_add(struct findings_out *o, const char *code,
				    const char *level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static struct finding *findings_add(struct findings_out *o, const char *code,
				    const char *level, const char *fmt, ...)
{
	struct finding *f;
	va_list ap;

	if (o->n >= o->max)
		return NULL;
	f = &o->v[o->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->code, sizeof(f->code), "%.31s", code);
	snprintf(f->level, sizeof(f->level), "%.7s", level);
	va_start(ap, fmt);
	if (vsnprintf(f->text, sizeof(f->text), fmt, ap) < 0)
		f->text[0] = '\0';
	va_end(ap);
	return f;
}

static int findings_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Median of an ascending array with the element at skip left out
 * (skip >= n: none left out). */
static double findings_median_skip(const double *v, unsigned n, unsigned skip)
{
	unsigned m = skip < n ? n - 1 : n;
	unsigned lo = (m - 1) / 2, hi = m / 2;
	double a = v[lo + (skip <= lo)], b = v[hi + (skip <= hi)];

	return (a + b) / 2.0;
}

static double findings_median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), findings_cmp);
	return findings_median_skip(v, n, n);
}

static const char *findings_top_what(const struct findings_edge *e)
{
	return e->top_what && *e->top_what ? e->top_what : "8 streams";
}

/* The edge's 8-stream figure: the lower direction; < 0 if unmeasured. */
static double findings_edge_top(const struct findings_edge *e)
{
	double a = e->gbps[0][FINDINGS_STEP_8], b = e->gbps[1][FINDINGS_STEP_8];

	if (!findings_measured(a))
		return findings_measured(b) ? b : -1.0;
	if (!findings_measured(b))
		return a;
	return a < b ? a : b;
}

/* Mean over directions of step / 8 streams; < 0 when no direction has
 * both. */
static double findings_edge_ratio(const struct findings_edge *e, int step)
{
	double sum = 0.0;
	int k = 0;

	for (int d = 0; d < 2; d++) {
		double s = e->gbps[d][step], top = e->gbps[d][FINDINGS_STEP_8];

		if (!findings_measured(s) || !findings_measured(top) ||
		    top <= 0.0)
			continue;
		sum += s / top;
		k++;
	}
	return k ? sum / k : -1.0;
}

static void findings_edge_name(const struct findings_edge *e, unsigned i,
			       char *buf, size_t size)
{
	if (e->name)
		snprintf(buf, size, "%s", e->name);
	else
		snprintf(buf, size, "#%u", i + 1);
}

static void findings_uniform(const struct findings_edge *edges, unsigned n,
			     double *tmp, struct findings_out *o)
{
	double lo = 0.0, hi = 0.0, nominal = -1.0, med, pct;
	unsigned m = 0;
	int same_nominal = 1;

	for (unsigned i = 0; i < n; i++) {
		double top = findings_edge_top(&edges[i]);

		if (top < 0.0)
			continue;
		if (!(edges[i].nominal_gbps > 0.0))
			return; /* "well under nominal" needs the nominal */
		if (nominal >= 0.0 && edges[i].nominal_gbps != nominal)
			same_nominal = 0;
		nominal = edges[i].nominal_gbps;
		if (!m || top < lo)
			lo = top;
		if (!m || top > hi)
			hi = top;
		tmp[m++] = top / edges[i].nominal_gbps;
	}
	if (m < 2 || hi <= 0.0 || lo <= 0.0 ||
	    (hi - lo) / hi > FINDINGS_UNIFORM_SPREAD)
		return;
	pct = findings_median(tmp, m);
	if (pct >= FINDINGS_UNIFORM_UNDER)
		return;
	m = 0;
	for (unsigned i = 0; i < n; i++) {
		double top = findings_edge_top(&edges[i]);

		if (top >= 0.0)
			tmp[m++] = top;
	}
	med = findings_median(tmp, m);
	if (same_nominal)
		findings_add(
			o, "uniform_ceiling", "warn",
			"every edge tops out at %.0f%% of its %.0f Gbps "
			"nominal (%.1f Gbps median, spread %.0f%%): a "
			"uniform ceiling - a link-layer or host limit, not "
			"a bad cable; check the host link (PCIe), PFC/ECN, "
			"and unused NIC halves",
			pct * 100.0, nominal, med, (hi / lo - 1.0) * 100.0);
	else
		findings_add(
			o, "uniform_ceiling", "warn",
			"every edge tops out at %.0f%% of its nominal rate "
			"(%.1f Gbps median, spread %.0f%%): a uniform "
			"ceiling - a link-layer or host limit, not a bad "
			"cable; check the host link (PCIe), PFC/ECN, and "
			"unused NIC halves",
			pct * 100.0, med, (hi / lo - 1.0) * 100.0);
}

static void findings_degraded(const struct findings_edge *edges, unsigned n,
			      double *tmp, struct findings_out *o)
{
	unsigned m = 0;

	for (unsigned i = 0; i < n; i++) {
		double top = findings_edge_top(&edges[i]);

		if (top >= 0.0)
			tmp[m++] = top;
	}
	if (m < 3)
		return;
	qsort(tmp, m, sizeof(*tmp), findings_cmp);
	for (unsigned i = 0; i < n; i++) {
		double top = findings_edge_top(&edges[i]), others;
		unsigned j = 0;
		char name[64];

		if (top < 0.0)
			continue;
		/* Any sample equal to this edge's stands for it. */
		while (j < m && tmp[j] != top)
			j++;
		others = findings_median_skip(tmp, m, j);
		if (!(top < FINDINGS_DEGRADED * others))
			continue;
		findings_edge_name(&edges[i], i, name, sizeof(name));
		findings_add(o, "degraded_edge", "warn",
			     "edge %s tops out at %.1f Gbps with %s, %.0f%% "
			     "of the other edges' median %.1f Gbps: a degraded "
			     "edge; check its cable, both ports and both hosts",
			     name, top, findings_top_what(&edges[i]),
			     others > 0 ? top / others * 100.0 : 0.0, others);
	}
}

static void findings_asymmetric(const struct findings_edge *edges, unsigned n,
				struct findings_out *o)
{
	for (unsigned i = 0; i < n; i++) {
		const struct findings_edge *e = &edges[i];
		double a = e->gbps[0][FINDINGS_STEP_8];
		double b = e->gbps[1][FINDINGS_STEP_8];
		double hi = a > b ? a : b, lo = a > b ? b : a;
		char name[64];

		if (!findings_measured(a) || !findings_measured(b) ||
		    hi <= 0.0 || hi - lo <= FINDINGS_ASYM * hi)
			continue;
		findings_edge_name(e, i, name, sizeof(name));
		findings_add(
			o, "asymmetric", "warn",
			"edge %s is asymmetric: %s %.1f Gbps, %s %.1f Gbps "
			"with %s (the slower direction %.0f%% below "
			"the faster); check both ends' port settings and "
			"PFC/ECN",
			name, e->dir_name[0] ? e->dir_name[0] : "forward", a,
			e->dir_name[1] ? e->dir_name[1] : "reverse", b,
			findings_top_what(e), (hi - lo) / hi * 100.0);
	}
}

static void findings_saturation(const struct findings_edge *edges, unsigned n,
				double *tmp, struct findings_out *o)
{
	double r1, r4 = -1.0;
	unsigned m = 0, m4 = 0, step;

	for (unsigned i = 0; i < n; i++) {
		double r = findings_edge_ratio(&edges[i], FINDINGS_STEP_1);

		if (r >= 0.0)
			tmp[m++] = r;
	}
	if (!m)
		return;
	r1 = findings_median(tmp, m);
	if (r1 >= FINDINGS_SAT_LOW)
		return;
	for (unsigned i = 0; i < n; i++) {
		double r = findings_edge_ratio(&edges[i], FINDINGS_STEP_4);

		if (r >= 0.0)
			tmp[m4++] = r;
	}
	if (m4)
		r4 = findings_median(tmp, m4);
	step = r4 >= FINDINGS_SAT_ENOUGH ? 4 : 8;
	if (r4 >= 0.0)
		findings_add(
			o, "saturation", "info",
			"1 stream reaches %.0f%% of 8 streams (median over "
			"%u edge%s); use at least %u channels: 4 streams "
			"reach %.0f%%",
			r1 * 100.0, m, m == 1 ? "" : "s", step, r4 * 100.0);
	else
		findings_add(
			o, "saturation", "info",
			"1 stream reaches %.0f%% of 8 streams (median over "
			"%u edge%s); use at least %u channels",
			r1 * 100.0, m, m == 1 ? "" : "s", step);
}

unsigned findings_compute(const struct findings_edge *edges, unsigned n,
			  struct finding *out, unsigned max)
{
	struct findings_out o = {.v = out, .n = 0, .max = out ? max : 0};
	double *tmp;

	if (!edges || !n || !o.max)
		return 0;
	tmp = calloc(n, sizeof(*tmp));
	if (!tmp) {
		errno = ENOMEM;
		return 0;
	}
	findings_uniform(edges, n, tmp, &o);
	findings_degraded(edges, n, tmp, &o);
	findings_asymmetric(edges, n, &o);
	findings_saturation(edges, n, tmp, &o);
	free(tmp);
	return o.n;
}
