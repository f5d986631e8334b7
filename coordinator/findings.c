/* Findings from measured edge bandwidth, for any stream ladder: "top" is
 * the step with the largest stream count, "base" the smallest. Thresholds,
 * all fractions:
 *
 * - saturation: per edge, the ratio of the base figure to the top figure,
 *   averaged over the directions measured at both steps; the median over
 *   edges below FINDINGS_SAT_LOW (80%) is reported, with the smallest
 *   count between base and top whose median ratio reaches
 *   FINDINGS_SAT_ENOUGH (90%) as the advised channel count (the top count
 *   when none does or none was measured). A one-count ladder says nothing.
 * - uniform ceiling: each edge's top figure is the lower of its two
 *   directions. With at least two such edges, all within
 *   FINDINGS_UNIFORM_SPREAD of each other ((max - min) / max <= 20%) and
 *   their median under FINDINGS_UNIFORM_UNDER (70%) of a known nominal
 *   rate, the limit is shared, not one cable's. The spread printed is
 *   max / min - 1, the way the field notes state it.
 * - degraded edge: with at least three edges, one whose top figure is
 *   under FINDINGS_DEGRADED (70%) of the median of the other edges.
 * - asymmetric: an edge whose two top directions differ by more than
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

struct findings_out {
	struct finding *v;
	unsigned n, max;
	unsigned top; /* ladder step with the largest count */
	char top_what[64];
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

/* "1 stream", "16 streams". */
static void findings_streams(unsigned count, char *buf, size_t size)
{
	snprintf(buf, size, "%u stream%s", count, count == 1 ? "" : "s");
}

/* The edge's top figure: the lower direction; < 0 if unmeasured. */
static double findings_edge_top(const struct findings_edge *e, unsigned top)
{
	double a = e->gbps[0][top], b = e->gbps[1][top];

	if (!findings_measured(a))
		return findings_measured(b) ? b : -1.0;
	if (!findings_measured(b))
		return a;
	return a < b ? a : b;
}

/* Mean over directions of step / top; < 0 when no direction has both. */
static double findings_edge_ratio(const struct findings_edge *e, unsigned step,
				  unsigned top_step)
{
	double sum = 0.0;
	int k = 0;

	for (int d = 0; d < 2; d++) {
		double s = e->gbps[d][step], top = e->gbps[d][top_step];

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
		double top = findings_edge_top(&edges[i], o->top);

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
		double top = findings_edge_top(&edges[i], o->top);

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
		double top = findings_edge_top(&edges[i], o->top);

		if (top >= 0.0)
			tmp[m++] = top;
	}
	if (m < 3)
		return;
	qsort(tmp, m, sizeof(*tmp), findings_cmp);
	for (unsigned i = 0; i < n; i++) {
		double top = findings_edge_top(&edges[i], o->top), others;
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
			     name, top, o->top_what,
			     others > 0 ? top / others * 100.0 : 0.0, others);
	}
}

static void findings_asymmetric(const struct findings_edge *edges, unsigned n,
				struct findings_out *o)
{
	for (unsigned i = 0; i < n; i++) {
		const struct findings_edge *e = &edges[i];
		double a = e->gbps[0][o->top];
		double b = e->gbps[1][o->top];
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
			o->top_what, (hi - lo) / hi * 100.0);
	}
}

/* Median over edges of step / top; < 0 when no edge has both. */
static double findings_ratio_median(const struct findings_edge *edges,
				    unsigned n, unsigned step, unsigned top,
				    double *tmp, unsigned *m)
{
	*m = 0;
	for (unsigned i = 0; i < n; i++) {
		double r = findings_edge_ratio(&edges[i], step, top);

		if (r >= 0.0)
			tmp[(*m)++] = r;
	}
	return *m ? findings_median(tmp, *m) : -1.0;
}

static void findings_saturation(const struct findings_ladder *ladder,
				const struct findings_edge *edges, unsigned n,
				double *tmp, struct findings_out *o)
{
	unsigned base = o->top, m, m_mid, advised, last = 0;
	char base_what[32], top_what[32], mids[160] = "";
	double r1;

	for (unsigned s = 0; s < ladder->n; s++)
		if (ladder->streams[s] < ladder->streams[base])
			base = s;
	if (base == o->top)
		return; /* one count: nothing to compare */
	r1 = findings_ratio_median(edges, n, base, o->top, tmp, &m);
	if (r1 < 0.0 || r1 >= FINDINGS_SAT_LOW)
		return;
	advised = ladder->streams[o->top];
	/* The counts between, smallest first: the first that comes close
	 * to the top is enough. */
	for (;;) {
		unsigned mid = FINDINGS_LADDER_MAX, count;
		double r;
		size_t w = strlen(mids);

		for (unsigned s = 0; s < ladder->n; s++)
			if (ladder->streams[s] > last &&
			    ladder->streams[s] > ladder->streams[base] &&
			    ladder->streams[s] < ladder->streams[o->top] &&
			    (mid == FINDINGS_LADDER_MAX ||
			     ladder->streams[s] < ladder->streams[mid]))
				mid = s;
		if (mid == FINDINGS_LADDER_MAX)
			break;
		count = last = ladder->streams[mid];
		r = findings_ratio_median(edges, n, mid, o->top, tmp, &m_mid);
		if (r < 0.0)
			continue;
		if (r >= FINDINGS_SAT_ENOUGH &&
		    advised == ladder->streams[o->top])
			advised = count;
		snprintf(mids + w, sizeof(mids) - w,
			 "%s%u streams reach %.0f%%", w ? ", " : ": ", count,
			 r * 100.0);
	}
	findings_streams(ladder->streams[base], base_what, sizeof(base_what));
	findings_streams(ladder->streams[o->top], top_what, sizeof(top_what));
	findings_add(o, "saturation", "info",
		     "%s reach%s %.0f%% of %s (median over %u edge%s); use at "
		     "least %u channels%s",
		     base_what, ladder->streams[base] == 1 ? "es" : "",
		     r1 * 100.0, top_what, m, m == 1 ? "" : "s", advised, mids);
}

unsigned findings_compute(const struct findings_ladder *ladder,
			  const struct findings_edge *edges, unsigned n,
			  struct finding *out, unsigned max)
{
	struct findings_out o = {.v = out, .n = 0, .max = out ? max : 0};
	double *tmp;

	if (!ladder || !ladder->n || ladder->n > FINDINGS_LADDER_MAX ||
	    !edges || !n || !o.max)
		return 0;
	for (unsigned s = 1; s < ladder->n; s++)
		if (ladder->streams[s] > ladder->streams[o.top])
			o.top = s;
	if (ladder->top_what && *ladder->top_what)
		snprintf(o.top_what, sizeof(o.top_what), "%s",
			 ladder->top_what);
	else
		findings_streams(ladder->streams[o.top], o.top_what,
				 sizeof(o.top_what));
	tmp = calloc(n, sizeof(*tmp));
	if (!tmp) {
		errno = ENOMEM;
		return 0;
	}
	findings_uniform(edges, n, tmp, &o);
	findings_degraded(edges, n, tmp, &o);
	findings_asymmetric(edges, n, &o);
	findings_saturation(ladder, edges, n, tmp, &o);
	free(tmp);
	return o.n;
}
