/* ringd's own test bytes per node pair and minute (self_bytes.h). */
#include "self_bytes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

/* A test that moved at least this much makes the counters sample that
 * overlaps it ringd's own traffic, not the link's. */
#define SELF_TRAFFIC_MIN (1u << 20)

struct self_pair {
	char a[64], b[64]; /* a < b */
	uint64_t minute[60];
	uint64_t bytes[60];
	uint64_t last_ms;
};

struct self_bytes {
	struct self_pair *v;
	unsigned n;
};

struct self_bytes *self_bytes_new(void)
{
	return calloc(1, sizeof(struct self_bytes));
}

void self_bytes_free(struct self_bytes *s)
{
	if (!s)
		return;
	free(s->v);
	free(s);
}

/* The account of the pair (a, b), in either order, or NULL. */
static struct self_pair *self_find(const struct self_bytes *s, const char *a,
				   const char *b)
{
	for (unsigned i = 0; i < s->n; i++) {
		struct self_pair *x = &s->v[i];

		if ((!strcmp(x->a, a) && !strcmp(x->b, b)) ||
		    (!strcmp(x->a, b) && !strcmp(x->b, a)))
			return x;
	}
	return NULL;
}

/* A test's bytes on the wire, warm-up included (computed): the streams'
 * bytes counted in the window, scaled by (warm-up + window) / window;
 * for latency, the round trips of every size both ways. */
static uint64_t self_test_bytes(const Ring__TestReport *rep)
{
	const Ring__TestParams *p = rep->params;
	double total = 0;

	if (!p)
		return 0;
	if (p->kind == RING__TEST_KIND__TEST_TCP_LAT ||
	    p->kind == RING__TEST_KIND__TEST_RDMA_LAT) {
		for (size_t i = 0; i < p->n_sizes; i++)
			total += 2.0 * (double)p->sizes[i] *
				 (double)(p->iterations + p->lat_warmup);
		return (uint64_t)total;
	}
	for (int s = 0; s < 2; s++) {
		const Ring__TestResult *r = s ? rep->b_side : rep->a_side;
		double window = r ? r->window_s : 0, bytes = 0;

		for (size_t i = 0; r && i < r->n_streams; i++)
			if (r->streams[i]->sending)
				bytes += (double)r->streams[i]->bytes;
		if (window > 0)
			bytes *=
				(window + (double)p->warmup_ms / 1000) / window;
		total += bytes;
	}
	return (uint64_t)total;
}

/* Add bytes to pair (a, b) in the minute of at_ms. */
static void self_add(struct self_bytes *s, const char *a0, const char *b0,
		     uint64_t at_ms, uint64_t bytes, int ours_now)
{
	uint64_t now = at_ms, minute = now / 60000;
	const char *a = strcmp(a0, b0) < 0 ? a0 : b0;
	const char *b = a == a0 ? b0 : a0;
	struct self_pair *x = self_find(s, a, b);

	if (!x && s->n < SELF_BYTES_PAIRS_MAX) {
		struct self_pair *v = realloc(s->v, (s->n + 1) * sizeof(*v));

		if (!v)
			return;
		s->v = v;
		x = &s->v[s->n++];
		memset(x, 0, sizeof(*x)); /* named below */
	} else if (!x) {
		/* Full: the pair tested longest ago makes room. */
		x = s->v;
		for (unsigned i = 1; i < s->n; i++)
			if (s->v[i].last_ms < x->last_ms)
				x = &s->v[i];
	}
	if (strcmp(x->a, a) || strcmp(x->b, b)) {
		memset(x, 0, sizeof(*x));
		snprintf(x->a, sizeof(x->a), "%s", a);
		snprintf(x->b, sizeof(x->b), "%s", b);
	}
	if (x->minute[minute % 60] != minute) {
		x->minute[minute % 60] = minute;
		x->bytes[minute % 60] = 0;
	}
	x->bytes[minute % 60] += bytes;
	/* A light check's few KB do not make a counters sample ours. */
	if (ours_now && bytes >= SELF_TRAFFIC_MIN)
		x->last_ms = now;
}

void self_bytes_account(struct self_bytes *s, const Ring__TestReport *rep)
{
	self_add(s, rep->a, rep->b, clock_now_ms(), self_test_bytes(rep), 1);
}

uint64_t self_bytes_last_ms(const struct self_bytes *s, const char *a,
			    const char *b)
{
	const struct self_pair *x = self_find(s, a, b);

	return x ? x->last_ms : 0;
}

size_t self_bytes_text(const struct self_bytes *s, uint64_t now_ms, char *buf,
		       size_t len)
{
	uint64_t minute = now_ms / 60000;
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < s->n; i++)
		for (int m = 0; m < 60; m++) {
			const struct self_pair *x = &s->v[i];
			int n;

			if (!x->bytes[m] || x->minute[m] + 60 <= minute)
				continue;
			n = snprintf(buf + used, len - used,
				     "%s %s %llu %llu\n", x->a, x->b,
				     (unsigned long long)x->minute[m],
				     (unsigned long long)x->bytes[m]);
			if (n < 0 || (size_t)n >= len - used) {
				buf[used] = '\0'; /* whole lines only */
				return used;
			}
			used += (size_t)n;
		}
	return used;
}

void self_bytes_load(struct self_bytes *s, const char *text, size_t len,
		     uint64_t now_ms)
{
	size_t off = 0;

	while (off < len) {
		char line[200], a[64], b[64];
		unsigned long long minute, bytes;
		size_t n = 0;

		while (off + n < len && text[off + n] != '\n')
			n++;
		if (n < sizeof(line)) {
			memcpy(line, text + off, n);
			line[n] = '\0';
			if (sscanf(line, "%63s %63s %llu %llu", a, b, &minute,
				   &bytes) == 4 &&
			    minute + 60 > now_ms / 60000 &&
			    minute <= now_ms / 60000)
				self_add(s, a, b, minute * 60000, bytes, 0);
		}
		off += n + 1;
	}
}

uint64_t self_bytes_hour(const struct self_bytes *s, const char *a,
			 const char *b, uint64_t now_ms)
{
	uint64_t minute = now_ms / 60000, sum = 0;
	const struct self_pair *x = self_find(s, a, b);

	for (int m = 0; x && m < 60; m++)
		if (x->minute[m] + 60 > minute)
			sum += x->bytes[m];
	return sum;
}
