/* `ringctl history`: the samples grouped into series (kind, direction,
 * streams or size), summed up, and drawn as sparklines in plain text. */
#include "history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_report.h"
#include "render.h"
#include "testlimits.h"

/* U+2581..U+2588, lowest first. */
static const char *const history_blocks[8] = {
	"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
	"\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88",
};

/* The indent of a table's rows under its key in plain text (writer.c). */
#define HISTORY_TABLE_INDENT 2
/* Plain: a sparkline gets at least this many points (and its heading
 * room) before a series' label is cut, to no fewer characters than
 * HISTORY_LABEL_MIN. */
#define HISTORY_SPARK_MIN 8
#define HISTORY_LABEL_MIN 16

int history_parse_duration(const char *s, uint64_t *ms)
{
	static const struct {
		const char *suffix;
		uint64_t ms;
	} units[] = {{"", 1000},     {"s", 1000},     {"m", 60000},
		     {"h", 3600000}, {"d", 86400000}, {"w", 604800000}};
	uint64_t v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > HISTORY_SINCE_MAX_MS) /* no overflow below */
			continue;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s)
		goto bad;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].suffix))
			continue;
		if (!v || v > HISTORY_SINCE_MAX_MS / units[i].ms) {
			errno = ERANGE;
			return -1;
		}
		*ms = v * units[i].ms;
		return 0;
	}
bad:
	errno = EINVAL;
	return -1;
}

size_t history_sparkline(const uint64_t *ts, const double *v, size_t n,
			 uint64_t t0, uint64_t t1, size_t points, char *buf,
			 size_t len)
{
	double *sum = NULL, max = 0;
	size_t *cnt = NULL, used = 0;

	if (!len)
		return 0;
	buf[0] = 0;
	if (points > (len - 1) / 3)
		points = (len - 1) / 3;
	if (t1 <= t0)
		points = points ? 1 : 0;
	if (!points || !n)
		return 0;
	sum = calloc(points, sizeof(*sum));
	cnt = calloc(points, sizeof(*cnt));
	if (!sum || !cnt) {
		free(sum);
		free(cnt);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		size_t b = 0;

		if (points > 1 && ts[i] > t0)
			b = ts[i] >= t1
				    ? points - 1
				    : (size_t)((double)(ts[i] - t0) /
						       (double)(t1 - t0) *
						       (double)(points - 1) +
					       0.5);
		sum[b] += v[i];
		cnt[b]++;
		if (v[i] > max)
			max = v[i];
	}
	for (size_t b = 0; b < points; b++) {
		int level = 0;

		if (!cnt[b]) {
			buf[used++] = ' ';
			continue;
		}
		if (max > 0)
			level = (int)(sum[b] / (double)cnt[b] / max * 7 + 0.5);
		level = level < 0 ? 0 : level > 7 ? 7 : level;
		memcpy(buf + used, history_blocks[level], 3);
		used += 3;
	}
	buf[used] = 0;
	free(sum);
	free(cnt);
	return points;
}

/* Series order: the survey's order of kinds, then the name. */
static int history_kind_rank(const char *kind)
{
	static const char *const order[] = {"tcp_bw", "tcp_lat",
					    "rdma_write_bw", "rdma_read_bw",
					    "rdma_write_lat"};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (!strcmp(kind, order[i]))
			return (int)i;
	return (int)(sizeof(order) / sizeof(order[0]));
}

static int history_cmp_series(const Ring__HistorySample *a,
			      const Ring__HistorySample *b)
{
	int ra = history_kind_rank(a->kind), rb = history_kind_rank(b->kind);
	int c;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	if ((c = strcmp(a->kind, b->kind)) ||
	    (c = strcmp(a->direction, b->direction)))
		return c;
	if (a->param != b->param)
		return a->param < b->param ? -1 : 1;
	return 0;
}

static int history_cmp(const void *pa, const void *pb)
{
	const Ring__HistorySample *a = *(const Ring__HistorySample *const *)pa;
	const Ring__HistorySample *b = *(const Ring__HistorySample *const *)pb;
	int c = history_cmp_series(a, b);

	if (c)
		return c;
	if (a->ts_ms != b->ts_ms)
		return a->ts_ms < b->ts_ms ? -1 : 1;
	return a->value < b->value ? -1 : a->value > b->value;
}

static int history_cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

static int history_cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

static int history_is(const char *kind, const char *tail)
{
	size_t n = strlen(kind), t = strlen(tail);

	return n >= t && !strcmp(kind + n - t, tail);
}

static const char *history_unit(const char *kind)
{
	return history_is(kind, "_bw")	  ? "Gbps"
	       : history_is(kind, "_lat") ? "us"
					  : "";
}

/* "tcp_bw a_to_b 8 streams", "tcp_lat 64B", "rdma_write_bw b_to_a". */
static void history_label(const Ring__HistorySample *s, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s%s%s", s->kind, *s->direction ? " " : "",
			 s->direction);
	size_t used = n > 0 && (size_t)n < len ? (size_t)n : len - 1;
	char size[16];

	if (!strcmp(s->kind, "tcp_bw"))
		snprintf(buf + used, len - used, " %u stream%s", s->param,
			 s->param == 1 ? "" : "s");
	else if (history_is(s->kind, "_lat")) {
		/* "64B", "10KiB": the unit it means, never a bare K. */
		testlimits_format_size(s->param, size, sizeof(size));
		snprintf(buf + used, len - used, " %s%s", size,
			 strchr(size, 'i') ? "" : "B");
	} else if (s->param)
		snprintf(buf + used, len - used, " %u", s->param);
}

static int history_decimals(const char *kind)
{
	return history_is(kind, "_lat") ? 1 : 2;
}

/* One series: its n samples (sorted, oldest first). */
struct history_series {
	const Ring__HistorySample *const *s;
	size_t n;
	char label[96];
	double min, median, max, last;
};

static int history_summarize(struct history_series *se)
{
	double *v = malloc(se->n * sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i < se->n; i++)
		v[i] = se->s[i]->value;
	se->last = v[se->n - 1];
	qsort(v, se->n, sizeof(*v), history_cmp_double);
	se->min = v[0];
	se->max = v[se->n - 1];
	se->median = se->n % 2 ? v[se->n / 2]
			       : (v[se->n / 2 - 1] + v[se->n / 2]) / 2;
	history_label(se->s[0], se->label, sizeof(se->label));
	free(v);
	return 0;
}

static size_t history_num_width(double v, int decimals)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%.*f", decimals, v);

	return n > 0 ? (size_t)n : 1;
}

static size_t history_max(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* Points the plain sparklines get: what the other columns leave of
 * HISTORY_COLUMNS, at most HISTORY_SPARK_MAX, and no more than there are
 * distinct times. Labels too long for HISTORY_SPARK_MIN points are cut
 * ('~' says so), down to HISTORY_LABEL_MIN. */
static size_t history_points(struct history_series *se, size_t n,
			     size_t distinct)
{
	size_t wl = strlen("SERIES"), wn = 1, wv[4] = {3, 6, 3, 4}, used;

	for (size_t i = 0; i < n; i++) {
		int d = history_decimals(se[i].s[0]->kind);
		char num[32];

		wl = history_max(wl, strlen(se[i].label));
		wn = history_max(
			wn, (size_t)snprintf(num, sizeof(num), "%zu", se[i].n));
		wv[0] = history_max(wv[0], history_num_width(se[i].min, d));
		wv[1] = history_max(wv[1], history_num_width(se[i].median, d));
		wv[2] = history_max(wv[2], history_num_width(se[i].max, d));
		wv[3] = history_max(wv[3], history_num_width(se[i].last, d));
	}
	used = HISTORY_TABLE_INDENT + wl + 2 + wn + 2 + wv[0] + 2 + wv[1] + 2 +
	       wv[2] + 2 + wv[3] + 2 + strlen("UNIT") + 2;
	if (used + HISTORY_SPARK_MIN > HISTORY_COLUMNS &&
	    wl > HISTORY_LABEL_MIN) {
		size_t cut = used + HISTORY_SPARK_MIN - HISTORY_COLUMNS;

		cut = cut < wl - HISTORY_LABEL_MIN ? cut
						   : wl - HISTORY_LABEL_MIN;
		wl -= cut;
		used -= cut;
		for (size_t i = 0; i < n; i++)
			if (strlen(se[i].label) > wl) {
				se[i].label[wl - 1] = '~';
				se[i].label[wl] = 0;
			}
	}
	n = used + 1 < HISTORY_COLUMNS ? HISTORY_COLUMNS - used : 1;
	n = n < HISTORY_SPARK_MAX ? n : HISTORY_SPARK_MAX;
	return n < distinct ? n : distinct;
}

static void history_series_row(struct writer *w,
			       const struct history_series *se, int plain,
			       uint64_t t0, uint64_t t1, size_t points)
{
	const Ring__HistorySample *s0 = se->s[0];
	int d = history_decimals(s0->kind);
	char spark[3 * HISTORY_SPARK_MAX + 1];
	uint64_t *ts = NULL;
	double *v = NULL;

	writer_obj_start_named(w, se->label);
	writer_str(w, "series", se->label);
	if (!plain) {
		writer_str(w, "kind", s0->kind);
		writer_str(w, "direction", s0->direction);
		writer_uint(w, "param", s0->param);
	}
	writer_uint(w, "n", se->n);
	writer_double(w, "min", se->min, d);
	writer_double(w, "median", se->median, d);
	writer_double(w, "max", se->max, d);
	writer_double(w, "last", se->last, d);
	writer_str(w, "unit", history_unit(s0->kind));
	if (plain) {
		ts = malloc(se->n * sizeof(*ts));
		v = malloc(se->n * sizeof(*v));
		spark[0] = 0;
		for (size_t i = 0; ts && v && i < se->n; i++) {
			ts[i] = se->s[i]->ts_ms;
			v[i] = se->s[i]->value;
		}
		if (ts && v)
			history_sparkline(ts, v, se->n, t0, t1, points, spark,
					  sizeof(spark));
		writer_str(w, "trend", spark);
		free(ts);
		free(v);
	}
	writer_obj_end(w);
}

static void history_samples(struct writer *w, const Ring__HistoryReply *r)
{
	char t[32];

	writer_list_start(w, "samples");
	for (size_t i = 0; i < r->n_samples; i++) {
		const Ring__HistorySample *s = r->samples[i];

		writer_obj_start(w, NULL);
		render_format_time(s->ts_ms, t, sizeof(t));
		writer_str(w, "time", t);
		writer_uint(w, "ts_ms", s->ts_ms);
		writer_str(w, "kind", s->kind);
		writer_str(w, "direction", s->direction);
		writer_uint(w, "param", s->param);
		writer_double(w, "value", s->value, history_decimals(s->kind));
		writer_str(w, "unit", history_unit(s->kind));
		writer_obj_end(w);
	}
	writer_list_end(w);
}

void history_render(struct writer *w, const Ring__HistoryReply *r,
		    uint64_t since_ms)
{
	int plain = writer_get_format(w) == WRITER_PLAIN;
	size_t n = r->n_samples, n_series = 0, distinct = 0, points;
	const Ring__HistorySample **s = NULL;
	struct history_series *se = NULL;
	uint64_t *ts = NULL;
	char t[32], older[48], cmd[200];

	s = malloc((n ? n : 1) * sizeof(*s));
	se = calloc(n ? n : 1, sizeof(*se));
	ts = malloc((n ? n : 1) * sizeof(*ts));
	if (!s || !se || !ts)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		s[i] = r->samples[i];
		ts[i] = r->samples[i]->ts_ms;
	}
	qsort(ts, n, sizeof(*ts), history_cmp_u64);
	for (size_t i = 0; i < n; i++)
		distinct += !i || ts[i] != ts[i - 1];
	qsort(s, n, sizeof(*s), history_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i && !history_cmp_series(s[i - 1], s[i])) {
			se[n_series - 1].n++;
			continue;
		}
		se[n_series].s = &s[i];
		se[n_series++].n = 1;
	}
	for (size_t i = 0; i < n_series; i++)
		if (history_summarize(&se[i]) < 0)
			goto oom;

	writer_str(w, "edge", r->edge);
	if (since_ms) {
		render_format_time(since_ms, t, sizeof(t));
		writer_str(w, "since", t);
	}
	if (n) {
		render_format_time(ts[0], t, sizeof(t));
		writer_str(w, "first", t);
		render_format_time(ts[n - 1], t, sizeof(t));
		writer_str(w, "last", t);
	}
	writer_uint(w, "n_samples", n);
	writer_uint(w, "n_surveys", distinct);
	if (r->truncated || !plain)
		writer_bool(w, "truncated", r->truncated);
	if (r->truncated) {
		/* One page: the next older one by its cursor. */
		snprintf(older, sizeof(older), "%llu:%llu",
			 (unsigned long long)r->next_before_ms,
			 (unsigned long long)r->next_before_id);
		writer_str(w, "older", older);
		if (plain) {
			snprintf(cmd, sizeof(cmd),
				 "ringctl history %.100s --before %s", r->edge,
				 older);
			writer_str(w, "older_command", cmd);
		}
	}
	/* Only plain cuts labels: they name the keyvalue records. */
	points = plain ? history_points(se, n_series, distinct) : 0;
	writer_table_start(w, "series");
	for (size_t i = 0; i < n_series; i++)
		history_series_row(w, &se[i], plain, n ? ts[0] : 0,
				   n ? ts[n - 1] : 0, points);
	writer_table_end(w);
	if (!plain)
		history_samples(w, r);
	goto out;
oom:
	error_report(2, "memory", NULL, NULL,
		     "out of memory rendering the history");
out:
	free(ts);
	free(se);
	free(s);
}
