/* Which figures of a published topology become history (history_figures.h):
 * the choice only; coord.c hands the samples to the store. */
#include "history_figures.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* One figure of the history. */
static void history_sample(struct store_sample *v, size_t *n, size_t max,
			   const Ring__Edge *e, const char *kind,
			   const char *dir, uint32_t param, double value)
{
	if (*n >= max || value < 0)
		return;
	memset(&v[*n], 0, sizeof(v[*n]));
	v[*n].ts_ms = e->measured_ms;
	text_edge_msg_name(v[*n].edge, sizeof(v[*n].edge), e);
	snprintf(v[*n].kind, sizeof(v[*n].kind), "%s", kind);
	snprintf(v[*n].direction, sizeof(v[*n].direction), "%s", dir);
	v[*n].param = param;
	v[*n].value = value;
	(*n)++;
}

/* Was e already in the history: the same cable with the same figures'
 * time in the topology before (a re-check or a busy edge keeps them)? */
static int history_recorded(const Ring__Topology *prev, const Ring__Edge *e)
{
	for (size_t i = 0; prev && i < prev->n_edges; i++) {
		const Ring__Edge *o = prev->edges[i];

		if (o->measured_ms == e->measured_ms && !strcmp(o->a, e->a) &&
		    !strcmp(o->b, e->b) &&
		    !strcmp(o->a_interface, e->a_interface) &&
		    !strcmp(o->b_interface, e->b_interface))
			return 1;
	}
	return 0;
}

/* One edge's figures: the stream ladder both ways, the latency ladder,
 * the RDMA figures. */
static void history_edge(struct store_sample *v, size_t *n, size_t max,
			 const Ring__Edge *e)
{
	for (size_t k = 0; k < e->n_ladder; k++) {
		if (k < e->n_gbps_a_to_b)
			history_sample(v, n, max, e, "tcp_bw", "a_to_b",
				       e->ladder[k], e->gbps_a_to_b[k]);
		if (k < e->n_gbps_b_to_a)
			history_sample(v, n, max, e, "tcp_bw", "b_to_a",
				       e->ladder[k], e->gbps_b_to_a[k]);
	}
	for (size_t k = 0; k < e->n_latency; k++)
		history_sample(v, n, max, e, "tcp_lat", "", e->latency[k]->size,
			       e->latency[k]->p50_us);
	for (size_t k = 0; k < e->n_rdma_write_lat; k++)
		history_sample(v, n, max, e, "rdma_write_lat", "",
			       e->rdma_write_lat[k]->size,
			       e->rdma_write_lat[k]->p50_us);
	history_sample(v, n, max, e, "rdma_write_bw", "a_to_b", 0,
		       e->rdma_write_gbps_a_to_b);
	history_sample(v, n, max, e, "rdma_write_bw", "b_to_a", 0,
		       e->rdma_write_gbps_b_to_a);
	history_sample(v, n, max, e, "rdma_read_bw", "a_to_b", 0,
		       e->rdma_read_gbps_a_to_b);
	history_sample(v, n, max, e, "rdma_read_bw", "b_to_a", 0,
		       e->rdma_read_gbps_b_to_a);
}

int history_figures(const Ring__Topology *t, const Ring__Topology *prev,
		    struct store_sample **out, size_t *n)
{
	size_t max = 0;
	struct store_sample *v;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < t->n_edges; i++)
		max += 2 * t->edges[i]->n_ladder + t->edges[i]->n_latency +
		       t->edges[i]->n_rdma_write_lat + 4;
	v = calloc(max ? max : 1, sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < t->n_edges; i++)
		if (!history_recorded(prev, t->edges[i]))
			history_edge(v, n, max, t->edges[i]);
	if (!*n) {
		free(v);
		return 0;
	}
	*out = v;
	return 0;
}
