/* Each edge's baseline and the figure it is judged by (edge_baselines.h). */
#include "edge_baselines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

double edge_baselines_figure(const Ring__Edge *e)
{
	double a, b;

	if (e->n_gbps_a_to_b && e->n_gbps_b_to_a) {
		a = e->gbps_a_to_b[e->n_gbps_a_to_b - 1];
		b = e->gbps_b_to_a[e->n_gbps_b_to_a - 1];
	} else {
		a = e->rdma_write_gbps_a_to_b;
		b = e->rdma_write_gbps_b_to_a;
	}
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return a < b ? a : b;
}

double edge_baselines_figure_now(const Ring__Edge *e, int *sampled)
{
	double a = e->sample_gbps_a_to_b, b = e->sample_gbps_b_to_a;

	*sampled = 0;
	if (!e->sample_ms || e->sample_ms <= e->measured_ms || (a < 0 && b < 0))
		return edge_baselines_figure(e);
	*sampled = 1;
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return a < b ? a : b;
}

/* Where edge's is, or b->n. */
static size_t edge_baselines_index(const struct edge_baselines *b,
				   const char *edge)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].edge, edge))
			break;
	return i;
}

const struct edge_baseline *edge_baselines_find(const struct edge_baselines *b,
						const char *edge)
{
	size_t i = edge_baselines_index(b, edge);

	return i < b->n ? &b->v[i] : NULL;
}

double edge_baselines_of(const struct edge_baselines *b, const Ring__Edge *e)
{
	char edge[ALERTS_EDGE_LEN];
	const struct edge_baseline *x;

	text_edge_msg_name(edge, sizeof(edge), e);
	x = edge_baselines_find(b, edge);
	return x ? x->gbps : -1;
}

int edge_baselines_set(struct edge_baselines *b, const char *edge, double gbps,
		       uint64_t ms)
{
	size_t i = edge_baselines_index(b, edge);
	struct edge_baseline *x = i < b->n ? &b->v[i] : NULL;

	if (!(gbps > 0) || strlen(edge) >= ALERTS_EDGE_LEN) {
		errno = EINVAL;
		return -1;
	}
	if (!x) {
		if (b->n == EDGE_BASELINES_MAX) {
			errno = ENOSPC;
			return -1;
		}
		if (b->n == b->cap) {
			size_t cap = b->cap ? 2 * b->cap : 16;
			struct edge_baseline *v =
				reallocarray(b->v, cap, sizeof(*v));

			if (!v)
				return -1;
			b->v = v;
			b->cap = cap;
		}
		x = &b->v[b->n++];
		snprintf(x->edge, sizeof(x->edge), "%s", edge);
	}
	x->gbps = gbps;
	x->ms = ms;
	return 0;
}

size_t edge_baselines_text(const struct edge_baselines *b, char *buf,
			   size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < b->n && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s %.6f %llu\n",
				 b->v[i].edge, b->v[i].gbps,
				 (unsigned long long)b->v[i].ms);

		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0'; /* whole lines only */
			break;
		}
		used += (size_t)n;
	}
	return used;
}

void edge_baselines_load(struct edge_baselines *b, const char *text, size_t len)
{
	size_t off = 0;

	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		char line[256], edge[ALERTS_EDGE_LEN];
		double g;
		unsigned long long ms;

		if (n < sizeof(line)) {
			memcpy(line, text + off, n);
			line[n] = '\0';
			if (sscanf(line, "%139s %lf %llu", edge, &g, &ms) == 3)
				edge_baselines_set(b, edge, g, ms);
		}
		off += n + 1;
	}
}

void edge_baselines_note(struct edge_baselines *b, const Ring__Topology *t)
{
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		char edge[ALERTS_EDGE_LEN];
		double g = edge_baselines_figure(e);

		text_edge_msg_name(edge, sizeof(edge), e);
		if (g > 0 && !*e->error && !edge_baselines_find(b, edge))
			edge_baselines_set(b, edge, g, e->measured_ms);
	}
}

void edge_baselines_clear(struct edge_baselines *b)
{
	free(b->v);
	b->v = NULL;
	b->n = b->cap = 0;
}
