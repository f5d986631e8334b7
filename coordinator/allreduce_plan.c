/* The ring all-reduce's plan and the comparison of two runs: pure
 * functions of the published topology and of reports (allreduce_coord.h). */
#include "allreduce_coord.h"

#include <stdio.h>
#include <string.h>

#include "testlimits.h"

double allreduce_coord_busbw(double algbw, unsigned n)
{
	return n ? algbw * 2.0 * (n - 1) / n : 0;
}

/* The edge joining a and b, a primary function pair first; NULL if none. */
static const Ring__Edge *arc_edge(const Ring__Topology *t, const char *a,
				  const char *b)
{
	const Ring__Edge *twin = NULL;

	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (!((!strcmp(e->a, a) && !strcmp(e->b, b)) ||
		      (!strcmp(e->a, b) && !strcmp(e->b, a))))
			continue;
		if (!e->twin)
			return e;
		twin = twin ? twin : e;
	}
	return twin;
}

/* The published position of node, or -1. */
static int arc_rank_of(const Ring__Topology *t, const char *node)
{
	for (size_t i = 0; i < t->n_ranks; i++)
		if (!strcmp(t->ranks[i]->node, node))
			return (int)t->ranks[i]->rank;
	return -1;
}

static const char *arc_rank_node(const Ring__Topology *t, unsigned r)
{
	for (size_t i = 0; i < t->n_ranks; i++)
		if (t->ranks[i]->rank == r)
			return t->ranks[i]->node;
	return NULL;
}

/* --nodes: the given nodes in published order, which must be an arc of
 * the ring (consecutive ranks, wrapping). */
static int arc_nodes(const Ring__Topology *t, const Ring__AllreduceRequest *r,
		     struct allreduce_coord_plan *p, char *why, size_t len)
{
	unsigned N = (unsigned)t->n_ranks, n = (unsigned)r->n_nodes;
	int in[ARLIMITS_RANKS_MAX] = {0};
	unsigned start = 0, k = 0;

	for (unsigned i = 0; i < n; i++) {
		int rk = arc_rank_of(t, r->nodes[i]);

		if (rk < 0 || rk >= ARLIMITS_RANKS_MAX)
			return snprintf(why, len,
					"%s has no rank in the published "
					"order (ringctl ranks)",
					r->nodes[i]),
			       -1;
		if (in[rk])
			return snprintf(why, len, "%s given twice",
					r->nodes[i]),
			       -1;
		in[rk] = 1;
	}
	/* The arc starts where a member follows a non-member. */
	for (unsigned i = 0; i < N; i++)
		if (in[i] && !in[(i + N - 1) % N]) {
			start = i;
			break;
		}
	for (unsigned i = 0; i < n; i++)
		if (!in[(start + i) % N])
			return snprintf(why, len,
					"--nodes must be neighbours in the "
					"published order (a contiguous part "
					"of the ring)"),
			       -1;
	if (n > 2 && n < N)
		return snprintf(why, len,
				"a sub-ring of %u of the ring's %u nodes "
				"closes with a step from %s to %s, which no "
				"cable joins: only 2 neighbours (one cable, "
				"both ways) or the whole ring can run an "
				"all-reduce",
				n, N, arc_rank_node(t, (start + n - 1) % N),
				arc_rank_node(t, start)),
		       -1;
	for (unsigned i = 0; i < n; i++)
		snprintf(p->ranks[k++].node, sizeof(p->ranks[0].node), "%s",
			 arc_rank_node(t, (start + i) % N));
	return 0;
}

/* The step a -> b over edge e (fwd: a is e's a) runs over RDMA WRITE when
 * the survey measured the cable over RDMA (both ends have active ports)
 * and the operator did not ask for TCP. */
static void arc_step_rdma(const Ring__Edge *e, int fwd,
			  struct allreduce_coord_rank *a,
			  struct allreduce_coord_rank *b, const char *transport)
{
	if (!strcmp(transport, "tcp") ||
	    e->method_kind != RING__EDGE_METHOD__EDGE_METHOD_RDMA ||
	    !*e->a_rdma || !*e->b_rdma)
		return;
	a->next_rdma = b->prev_rdma = 1;
	snprintf(a->next_dev, sizeof(a->next_dev), "%s",
		 fwd ? e->a_rdma : e->b_rdma);
	snprintf(b->prev_dev, sizeof(b->prev_dev), "%s",
		 fwd ? e->b_rdma : e->a_rdma);
	a->next_gid = fwd ? e->a_gid_index : e->b_gid_index;
	b->prev_gid = fwd ? e->b_gid_index : e->a_gid_index;
}

/* --transport rdma: every step over RDMA, or none runs. */
static int arc_need_rdma(const struct allreduce_coord_plan *p, char *why,
			 size_t len)
{
	size_t used = 0;

	for (unsigned i = 0; i < p->n; i++) {
		const struct allreduce_coord_rank *a = &p->ranks[i];

		if (a->next_rdma)
			continue;
		used += (size_t)snprintf(
			why + used, len - used,
			"%sstep rank %u -> %u (%s -> %s)",
			used ? "; "
			     : "RDMA was asked but the survey did not "
			       "measure these cables over RDMA: ",
			i, (i + 1) % p->n, a->node,
			p->ranks[(i + 1) % p->n].node);
		if (used >= len)
			break;
	}
	return used ? -1 : 0;
}

static void arc_sizes(const Ring__AllreduceRequest *r,
		      struct allreduce_coord_plan *p)
{
	if (r->n_sizes) {
		p->n_sizes = r->n_sizes < ARLIMITS_SIZES_MAX
				     ? (unsigned)r->n_sizes
				     : ARLIMITS_SIZES_MAX;
		memcpy(p->sizes, r->sizes, p->n_sizes * sizeof(uint64_t));
	} else {
		p->n_sizes = (unsigned)arlimits_ladder(
			ARLIMITS_LADDER_MIN, ARLIMITS_LADDER_MAX, p->sizes,
			ARLIMITS_SIZES_MAX);
	}
	p->iterations =
		r->iterations ? r->iterations : ARLIMITS_ITERATIONS_DEFAULT;
	p->warmup = r->warmup;
	p->step_ms = r->step_timeout_ms;
}

int allreduce_coord_plan(const Ring__Topology *t,
			 const Ring__AllreduceRequest *r,
			 struct allreduce_coord_plan *p, int *not_adjacent,
			 char *why, size_t len)
{
	size_t used = 0;

	memset(p, 0, sizeof(*p));
	*not_adjacent = 0;
	arc_sizes(r, p);
	if (r->n_sizes > ARLIMITS_SIZES_MAX)
		return snprintf(why, len, "at most %d sizes",
				ARLIMITS_SIZES_MAX),
		       -1;
	if (r->n_nodes && r->n_order)
		return snprintf(why, len, "--nodes or --order, not both"), -1;
	if (!*r->transport || !strcmp(r->transport, "auto"))
		p->transport = "auto";
	else if (!strcmp(r->transport, "tcp") || !strcmp(r->transport, "rdma"))
		p->transport = !strcmp(r->transport, "tcp") ? "tcp" : "rdma";
	else
		return snprintf(why, len,
				"transport must be auto, tcp or rdma, not "
				"%.16s",
				r->transport),
		       -1;
	if (!t || !t->n_ranks)
		return snprintf(why, len,
				"no published rank order: run a survey "
				"first"),
		       -1;
	if (r->n_order > ARLIMITS_RANKS_MAX ||
	    r->n_nodes > ARLIMITS_RANKS_MAX || t->n_ranks > ARLIMITS_RANKS_MAX)
		return snprintf(why, len, "at most %d ranks",
				ARLIMITS_RANKS_MAX),
		       -1;
	if (r->n_order) {
		p->source = "order";
		p->n = (unsigned)r->n_order;
		for (unsigned i = 0; i < p->n; i++) {
			if (arc_rank_of(t, r->order[i]) < 0)
				return snprintf(why, len,
						"%.64s is not in the last "
						"survey",
						r->order[i]),
				       -1;
			for (unsigned k = 0; k < i; k++)
				if (!strcmp(r->order[k], r->order[i]))
					return snprintf(why, len,
							"%.64s given twice",
							r->order[i]),
					       -1;
			snprintf(p->ranks[i].node, sizeof(p->ranks[i].node),
				 "%s", r->order[i]);
		}
	} else if (r->n_nodes) {
		p->source = "nodes";
		p->n = (unsigned)r->n_nodes;
		if (p->n >= 2 && arc_nodes(t, r, p, why, len) < 0)
			return -1;
	} else {
		p->source = "published";
		p->n = (unsigned)t->n_ranks;
		for (unsigned i = 0; i < p->n; i++) {
			const char *nd = arc_rank_node(t, i);

			if (!nd)
				return snprintf(why, len,
						"the published ranks have a "
						"gap at %u",
						i),
				       -1;
			snprintf(p->ranks[i].node, sizeof(p->ranks[i].node),
				 "%s", nd);
		}
	}
	if (arlimits_check(p->sizes, p->n_sizes, p->n, p->iterations, p->warmup,
			   p->step_ms, why, len) < 0)
		return -1;
	/* Every step must be a cable: name each one that is not. */
	for (unsigned i = 0; i < p->n; i++) {
		struct allreduce_coord_rank *a = &p->ranks[i];
		struct allreduce_coord_rank *b = &p->ranks[(i + 1) % p->n];
		const Ring__Edge *e = arc_edge(t, a->node, b->node);
		int fwd;

		if (!e) {
			if (!*not_adjacent)
				used += (size_t)snprintf(
					why + used, len - used,
					"not ring neighbours: ");
			else if (used < len)
				used += (size_t)snprintf(why + used, len - used,
							 "; ");
			*not_adjacent = 1;
			if (used < len)
				used += (size_t)snprintf(
					why + used, len - used,
					"step rank %u -> %u (%s -> %s): no "
					"published edge joins them, no "
					"data-plane path",
					i, (i + 1) % p->n, a->node, b->node);
			continue;
		}
		fwd = !strcmp(e->a, a->node);
		snprintf(a->next_if, sizeof(a->next_if), "%s",
			 fwd ? e->a_interface : e->b_interface);
		snprintf(b->listen_if, sizeof(b->listen_if), "%s",
			 fwd ? e->b_interface : e->a_interface);
		snprintf(b->listen_addr, sizeof(b->listen_addr), "%s",
			 fwd ? e->b_address : e->a_address);
		snprintf(b->prev_addr, sizeof(b->prev_addr), "%s",
			 fwd ? e->a_address : e->b_address);
		arc_step_rdma(e, fwd, a, b, p->transport);
	}
	if (*not_adjacent) {
		if (used < len)
			snprintf(why + used, len - used,
				 "; ranks must follow the physical ring order "
				 "(ringctl ranks)");
		return -1;
	}
	if (!strcmp(p->transport, "rdma"))
		return arc_need_rdma(p, why, len);
	return 0;
}

const char *allreduce_coord_method(const struct allreduce_coord_plan *p,
				   char **steps)
{
	unsigned n_rdma = 0;

	for (unsigned i = 0; i < p->n; i++) {
		n_rdma += p->ranks[i].next_rdma != 0;
		steps[i] = p->ranks[i].next_rdma ? "rdma" : "tcp";
	}
	return !n_rdma ? "tcp" : n_rdma == p->n ? "rdma" : "rdma+tcp";
}

static int arc_report_ok(const Ring__AllreduceReport *r)
{
	if (!r || *r->error || !r->n_sizes)
		return 0;
	for (size_t i = 0; i < r->n_sizes; i++)
		if (!r->sizes[i]->verified || !(r->sizes[i]->busbw_gbps > 0))
			return 0;
	return 1;
}

int allreduce_coord_compare(const Ring__AllreduceReport *old,
			    const Ring__AllreduceReport *cur, char *out,
			    size_t len)
{
	const Ring__AllreduceReport *few, *many;
	const Ring__AllreduceSize *a = NULL, *b = NULL;
	char sz[16];
	double ratio;

	if (!arc_report_ok(old) || !arc_report_ok(cur) ||
	    old->n_order == cur->n_order)
		return -1;
	few = old->n_order < cur->n_order ? old : cur;
	many = few == old ? cur : old;
	/* The largest size both measured: the least latency-bound. */
	for (size_t i = 0; i < few->n_sizes; i++)
		for (size_t k = 0; k < many->n_sizes; k++)
			if (few->sizes[i]->size == many->sizes[k]->size &&
			    (!a || few->sizes[i]->size > a->size)) {
				a = few->sizes[i];
				b = many->sizes[k];
			}
	if (!a)
		return -1;
	ratio = b->busbw_gbps / a->busbw_gbps;
	snprintf(out, len,
		 "busbw at %s: %zu ranks %.3f Gbps, %zu ranks %.3f Gbps, ratio "
		 "%.3f%s",
		 testlimits_format_size(a->size, sz, sizeof(sz)), few->n_order,
		 a->busbw_gbps, many->n_order, b->busbw_gbps, ratio,
		 ratio >= 0.9 && ratio <= 1.1
			 ? ": adding nodes to the ring adds memory, not "
			   "all-reduce bandwidth"
			 : ": the rings differ by more than 10% (the slower "
			   "one has a slower cable or rank)");
	return 0;
}
