#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl/history.h"
#include "testwriter.h"

/* ringctl history: the --since parser, the sparkline, and the rendering
 * of a reply in every format. */

#define LOW "\xe2\x96\x81"  /* U+2581 */
#define MID "\xe2\x96\x84"  /* U+2584 */
#define HIGH "\xe2\x96\x88" /* U+2588 */

static void test_parse_duration(void **state)
{
	static const struct {
		const char *s;
		uint64_t ms;
	} ok[] = {
		{"30m", 1800000},	   {"6h", 21600000}, {"7d", 604800000},
		{"2w", 1209600000},	   {"90", 90000},    {"1s", 1000},
		{"3650d", 315360000000ull}};
	static const char *const bad[] = {"",	  "m",	  "-5m", "5x",
					  "30 m", "1.5h", "5ms", "h5"};
	static const char *const range[] = {"0", "0s", "3651d",
					    "99999999999999999999999d"};
	uint64_t ms;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ms = 0;
		assert_int_equal(history_parse_duration(ok[i].s, &ms), 0);
		assert_int_equal(ms, ok[i].ms);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_int_equal(history_parse_duration(bad[i], &ms), -1);
		assert_int_equal(errno, EINVAL);
	}
	for (size_t i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
		errno = 0;
		assert_int_equal(history_parse_duration(range[i], &ms), -1);
		assert_int_equal(errno, ERANGE);
	}
}

static void test_sparkline(void **state)
{
	uint64_t ts[1000];
	double v[1000];
	char buf[3 * HISTORY_SPARK_MAX + 1];

	(void)state;
	/* Eight values, eight buckets: every block once, lowest first. */
	for (int i = 0; i < 8; i++) {
		ts[i] = 1000 + (uint64_t)i * 60000;
		v[i] = i;
	}
	assert_int_equal(
		history_sparkline(ts, v, 8, ts[0], ts[7], 8, buf, sizeof(buf)),
		8);
	assert_string_equal(buf, "\xe2\x96\x81\xe2\x96\x82\xe2\x96\x83\xe2\x96"
				 "\x84\xe2\x96\x85\xe2\x96\x86\xe2\x96\x87\xe2"
				 "\x96\x88");
	/* A bucket holds the mean of its values; heights are from 0, not
	 * from the min (9.3 next to 9.4 is no cliff). */
	ts[0] = 0, ts[1] = 1, ts[2] = 10;
	v[0] = 2, v[1] = 4, v[2] = 8;
	assert_int_equal(
		history_sparkline(ts, v, 3, 0, 10, 2, buf, sizeof(buf)), 2);
	assert_string_equal(buf, MID HIGH);
	v[0] = 9.3, v[1] = 9.3, v[2] = 9.4;
	history_sparkline(ts, v, 3, 0, 10, 2, buf, sizeof(buf));
	assert_string_equal(buf, HIGH HIGH);
	/* Nothing measured in a slice of time: a blank. */
	ts[0] = 0, ts[1] = 10;
	v[0] = 1, v[1] = 2;
	history_sparkline(ts, v, 2, 0, 10, 3, buf, sizeof(buf));
	assert_string_equal(buf, "\xe2\x96\x85 " HIGH);
	/* A shared axis: a series that starts later starts blank. */
	history_sparkline(ts + 1, v + 1, 1, 0, 10, 3, buf, sizeof(buf));
	assert_string_equal(buf, "  " HIGH);
	/* All zero: the lowest block. One time: one point. None: nothing. */
	v[0] = v[1] = 0;
	history_sparkline(ts, v, 2, 0, 10, 2, buf, sizeof(buf));
	assert_string_equal(buf, LOW LOW);
	v[0] = 5;
	assert_int_equal(
		history_sparkline(ts, v, 1, 7, 7, 40, buf, sizeof(buf)), 1);
	assert_string_equal(buf, HIGH);
	assert_int_equal(
		history_sparkline(ts, v, 0, 0, 10, 40, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* A thousand samples: at most the points asked, within buf. */
	for (int i = 0; i < 1000; i++) {
		ts[i] = (uint64_t)i * 3600000;
		v[i] = i % 7;
	}
	assert_int_equal(history_sparkline(ts, v, 1000, ts[0], ts[999],
					   HISTORY_SPARK_MAX, buf, sizeof(buf)),
			 HISTORY_SPARK_MAX);
	assert_int_equal(strlen(buf), 3 * HISTORY_SPARK_MAX);
	assert_int_equal(
		history_sparkline(ts, v, 1000, ts[0], ts[999], 40, buf, 7), 2);
	assert_int_equal(strlen(buf), 6);
}

/* A reply built by hand, as the coordinator sends it. */
struct reply {
	Ring__HistoryReply r;
	Ring__HistorySample *s;
	Ring__HistorySample **sp;
	char (*kind)[32];
};

static void reply_add(struct reply *rp, uint64_t ts, const char *kind,
		      const char *dir, uint32_t param, double value)
{
	size_t i = rp->r.n_samples++;

	ring__history_sample__init(&rp->s[i]);
	snprintf(rp->kind[i], sizeof(rp->kind[i]), "%s", kind);
	rp->s[i].ts_ms = ts;
	rp->s[i].kind = rp->kind[i];
	rp->s[i].direction = (char *)dir;
	rp->s[i].param = param;
	rp->s[i].value = value;
	rp->sp[i] = &rp->s[i];
}

static void reply_init(struct reply *rp, size_t max)
{
	ring__history_reply__init(&rp->r);
	rp->r.edge = "n1-n2";
	rp->r.now_ms = 1764763200000ull;
	rp->s = calloc(max ? max : 1, sizeof(*rp->s));
	rp->sp = calloc(max ? max : 1, sizeof(*rp->sp));
	rp->kind = calloc(max ? max : 1, sizeof(*rp->kind));
	assert_non_null(rp->s);
	assert_non_null(rp->sp);
	assert_non_null(rp->kind);
	rp->r.samples = rp->sp;
}

static void reply_free(struct reply *rp)
{
	free(rp->s);
	free(rp->sp);
	free(rp->kind);
}

/* n surveys of a whole edge's figures, an hour apart; values vary. */
static void reply_surveys(struct reply *rp, int n, const char *kind_prefix)
{
	static const uint32_t ladder[] = {1, 2, 4, 8, 16};
	static const uint32_t sizes[] = {64, 4096, 1048576};
	char kind[32];

	for (int k = 0; k < n; k++) {
		uint64_t ts = 1764700000000ull + (uint64_t)k * 3600000;

		for (size_t i = 0; i < 5; i++) {
			snprintf(kind, sizeof(kind), "%stcp_bw", kind_prefix);
			reply_add(rp, ts, kind, "a_to_b", ladder[i],
				  9.4 - (k == 1) * 5 + (double)i / 100);
			reply_add(rp, ts, kind, "b_to_a", ladder[i],
				  9.3 + (double)k / 1000);
		}
		for (size_t i = 0; i < 3; i++)
			reply_add(rp, ts, "tcp_lat", "", sizes[i],
				  12.5 + (double)(k % 3) * 1000);
		reply_add(rp, ts, "rdma_write_bw", "a_to_b", 0, 390.25 + k % 2);
		reply_add(rp, ts, "rdma_write_lat", "", 65536, 4.2);
	}
}

static char *render(const struct reply *rp, enum writer_format fmt,
		    uint64_t since_ms)
{
	struct testwriter t;
	struct writer *w = testwriter_open(&t, fmt);

	history_render(w, &rp->r, since_ms);
	assert_int_equal(writer_duplicates(w), 0);
	return testwriter_close(&t);
}

/* ---- a JSON syntax check (RFC 8259), enough to refuse what is not */

static const char *json_value(const char *p, int depth);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p != '"'; p++) {
		if (!*p || (unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\' && !strchr("\"\\/bfnrtu", *++p))
			return NULL;
	}
	return p + 1;
}

static const char *json_number(const char *p)
{
	const char *s = p;

	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return NULL;
	while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' ||
	       *p == 'E' || *p == '+' || *p == '-')
		p++;
	return p > s ? p : NULL;
}

static const char *json_members(const char *p, int depth, char close, int keyed)
{
	p = json_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (keyed) {
			p = json_string(json_ws(p));
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		p = json_value(p, depth + 1);
		if (!p)
			return NULL;
		p = json_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *json_value(const char *p, int depth)
{
	p = json_ws(p);
	if (depth > 32)
		return NULL;
	if (*p == '{')
		return json_members(p, depth, '}', 1);
	if (*p == '[')
		return json_members(p, depth, ']', 0);
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	return json_number(p);
}

static void assert_json(const char *text)
{
	const char *end = json_value(text, 0);

	if (!end || *json_ws(end))
		print_error("not JSON:\n%s\n", text);
	assert_non_null(end);
	assert_string_equal(json_ws(end), "");
}

/* Every line key=value, every key once. */
static void assert_keyvalue(const char *text)
{
	char *copy = strdup(text), *save = NULL, **keys;
	size_t n = 0;

	assert_non_null(copy);
	keys = calloc(strlen(text) + 1, sizeof(*keys));
	assert_non_null(keys);
	for (char *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		assert_non_null(eq);
		*eq = 0;
		assert_true(eq > line);
		for (size_t i = 0; i < n; i++)
			assert_string_not_equal(keys[i], line);
		keys[n++] = line;
	}
	free(keys);
	free(copy);
}

/* Terminal columns of the longest line (UTF-8 characters). */
static size_t max_columns(const char *text)
{
	size_t max = 0, col = 0;

	for (const char *p = text; *p; p++) {
		if (*p == '\n') {
			col = 0;
			continue;
		}
		col += ((unsigned char)*p & 0xc0) != 0x80;
		if (col > max)
			max = col;
	}
	return max;
}

/* The line of text that holds needle (a copy; caller frees). */
static char *line_with(const char *text, const char *needle)
{
	const char *p = strstr(text, needle), *b, *e;

	if (!p)
		print_error("no '%s' in:\n%s\n", needle, text);
	assert_non_null(p);
	for (b = p; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	return strndup(b, e ? (size_t)(e - b) : strlen(b));
}

/* line_with's line, its runs of spaces made one (the table's columns). */
static char *row_with(const char *text, const char *needle)
{
	char *line = line_with(text, needle), *o = line;

	for (const char *p = line; *p; p++)
		if (*p != ' ' || (o > line && o[-1] != ' '))
			*o++ = *p;
	*o = 0;
	return line;
}

static void test_render_surveys(void **state)
{
	struct reply rp;
	char *plain, *json, *kv, *line;

	(void)state;
	reply_init(&rp, 100);
	reply_surveys(&rp, 3, "");
	plain = render(&rp, WRITER_PLAIN, 1764690000000ull);
	json = render(&rp, WRITER_JSON, 1764690000000ull);
	kv = render(&rp, WRITER_KEYVALUE, 1764690000000ull);
	assert_json(json);
	assert_keyvalue(kv);
	assert_true(max_columns(plain) <= HISTORY_COLUMNS);

	assert_non_null(strstr(plain, "edge: n1-n2\n"));
	assert_non_null(strstr(plain, "n_samples: 45\n"));
	assert_non_null(strstr(plain, "n_surveys: 3\n"));
	assert_null(strstr(plain, "truncated"));
	/* 9.4, then 4.4, then 9.4 for one stream: a dip in the middle. */
	/* Series, count, min, median, max, last, unit, sparkline. */
	line = row_with(plain, "tcp_bw a_to_b 1 stream ");
	assert_string_equal(line, "tcp_bw a_to_b 1 stream 3 4.40 9.40 9.40 "
				  "9.40 Gbps " HIGH MID HIGH);
	free(line);
	line = row_with(plain, "tcp_bw b_to_a 16 streams");
	assert_string_equal(line, "tcp_bw b_to_a 16 streams 3 9.30 9.30 9.30 "
				  "9.30 Gbps " HIGH HIGH HIGH);
	free(line);
	line = row_with(plain, "tcp_lat 1MiB");
	assert_string_equal(line,
			    "tcp_lat 1MiB 3 12.5 1012.5 2012.5 2012.5 us " LOW
			    "\xe2\x96\x85" HIGH);
	free(line);
	line = row_with(plain, "rdma_write_bw a_to_b");
	assert_string_equal(line, "rdma_write_bw a_to_b 3 390.25 390.25 "
				  "391.25 390.25 Gbps " HIGH HIGH HIGH);
	free(line);
	/* Series in the survey's order: TCP bandwidth, latency, RDMA. */
	assert_true(strstr(plain, "tcp_bw a_to_b 1 stream ") <
		    strstr(plain, "tcp_bw a_to_b 2 streams"));
	assert_true(strstr(plain, "tcp_bw a_to_b 16 streams") <
		    strstr(plain, "tcp_bw b_to_a 1 stream "));
	assert_true(strstr(plain, "tcp_lat 64B") <
		    strstr(plain, "tcp_lat 4KiB"));
	assert_true(strstr(plain, "tcp_lat 4KiB") <
		    strstr(plain, "rdma_write_bw"));
	/* Plain has no sample list; the machine formats have all 45. */
	assert_null(strstr(plain, "ts_ms"));
	assert_non_null(strstr(json, "\"samples\": ["));
	assert_non_null(strstr(json, "\"ts_ms\": 1764707200000"));
	assert_non_null(strstr(json, "\"time\": \"2025-12-02T20:26:40Z\""));
	assert_non_null(strstr(json, "\"truncated\": false"));
	assert_non_null(strstr(json, "\"since\": \"2025-12-02T15:40:00Z\""));
	assert_null(strstr(json, "trend"));
	assert_non_null(strstr(kv, "samples.44.kind=rdma_write_lat\n"));
	assert_non_null(
		strstr(kv, "series.tcp_bw_a_to_b_8_streams.median=9.43\n"));
	free(plain);
	free(json);
	free(kv);
	reply_free(&rp);
}

static void test_render_median_and_truncated(void **state)
{
	struct reply rp;
	char *json, *plain;

	(void)state;
	reply_init(&rp, 4);
	reply_add(&rp, 4000, "tcp_bw", "a_to_b", 8, 4);
	reply_add(&rp, 1000, "tcp_bw", "a_to_b", 8, 1);
	reply_add(&rp, 2000, "tcp_bw", "a_to_b", 8, 2);
	reply_add(&rp, 3000, "tcp_bw", "a_to_b", 8, 3);
	rp.r.truncated = 1;
	json = render(&rp, WRITER_JSON, 0);
	plain = render(&rp, WRITER_PLAIN, 0);
	assert_json(json);
	assert_non_null(strstr(json, "\"median\": 2.5"));
	assert_non_null(strstr(json, "\"min\": 1"));
	assert_non_null(strstr(json, "\"max\": 4"));
	/* The last is the newest, whatever the order of the reply. */
	assert_non_null(strstr(json, "\"last\": 4"));
	assert_non_null(strstr(json, "\"truncated\": true"));
	assert_null(strstr(json, "\"since\""));
	assert_non_null(strstr(plain, "truncated: yes"));
	free(json);
	free(plain);
	reply_free(&rp);
}

static void test_render_empty_and_one(void **state)
{
	struct reply rp;
	char *text;

	(void)state;
	reply_init(&rp, 1);
	for (int f = WRITER_PLAIN; f <= WRITER_JSON; f++) {
		text = render(&rp, (enum writer_format)f, 0);
		if (f == WRITER_JSON) {
			assert_json(text);
			assert_non_null(strstr(text, "\"samples\": []"));
			assert_non_null(strstr(text, "\"series\": []"));
		} else if (f == WRITER_KEYVALUE) {
			assert_keyvalue(text);
		} else {
			assert_non_null(strstr(text, "n_samples: 0\n"));
			assert_null(strstr(text, "\xe2\x96"));
			assert_null(strstr(text, "first:"));
		}
		free(text);
	}
	reply_add(&rp, 1764700000000ull, "tcp_lat", "", 64, 20.25);
	for (int f = WRITER_PLAIN; f <= WRITER_JSON; f++) {
		text = render(&rp, (enum writer_format)f, 0);
		if (f == WRITER_JSON) {
			assert_json(text);
			assert_non_null(strstr(text, "\"n_surveys\": 1"));
		} else if (f == WRITER_KEYVALUE) {
			assert_keyvalue(text);
		} else {
			char *line = row_with(text, "tcp_lat 64B");

			/* One point, the full block; the latency's one
			 * decimal. */
			assert_string_equal(line, "tcp_lat 64B 1 20.2 20.2 "
						  "20.2 20.2 us " HIGH);
			free(line);
		}
		free(text);
	}
	reply_free(&rp);
}

/* Blocks in the row of needle. */
static size_t row_blocks(const char *text, const char *needle)
{
	char *line = line_with(text, needle);
	size_t n = 0;

	for (const char *p = line; (p = strstr(p, "\xe2\x96")); p += 3)
		n++;
	free(line);
	return n;
}

/* A hundred surveys: the sparklines get what the other columns leave of
 * 100, at most 40 points. A thousand, with long kind names and large
 * figures: still within 100 columns, the sparklines shorter. */
static void test_render_width(void **state)
{
	struct reply rp;
	char *plain, *json;
	size_t n;

	(void)state;
	reply_init(&rp, 100 * 15);
	reply_surveys(&rp, 100, "");
	plain = render(&rp, WRITER_PLAIN, 0);
	if (max_columns(plain) > HISTORY_COLUMNS)
		print_error("wider than %d:\n%s\n", HISTORY_COLUMNS, plain);
	assert_true(max_columns(plain) <= HISTORY_COLUMNS);
	n = row_blocks(plain, "tcp_lat 4KiB");
	assert_true(n >= 20 && n <= HISTORY_SPARK_MAX);
	assert_int_equal(row_blocks(plain, "tcp_bw b_to_a 16 streams"), n);
	free(plain);
	reply_free(&rp);

	reply_init(&rp, 1000 * 15);
	reply_surveys(&rp, 1000, "some_future_kind_of_");
	for (size_t i = 0; i < rp.r.n_samples; i++)
		rp.s[i].value *= 1000;
	plain = render(&rp, WRITER_PLAIN, 0);
	json = render(&rp, WRITER_JSON, 0);
	assert_json(json);
	if (max_columns(plain) > HISTORY_COLUMNS)
		print_error("wider than %d:\n%s\n", HISTORY_COLUMNS, plain);
	assert_true(max_columns(plain) <= HISTORY_COLUMNS);
	/* Labels cut to leave the sparklines 8 points. */
	assert_int_equal(row_blocks(plain, "tcp_lat 4KiB"), 8);
	assert_non_null(strstr(plain, "some_future_kind_of_tcp_bw a_to~"));
	assert_non_null(strstr(json, "some_future_kind_of_tcp_bw a_to_b 16"));
	free(plain);
	free(json);
	reply_free(&rp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_sparkline),
		cmocka_unit_test(test_render_surveys),
		cmocka_unit_test(test_render_median_and_truncated),
		cmocka_unit_test(test_render_empty_and_one),
		cmocka_unit_test(test_render_width),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
