/* The ring all-reduce, coordinator side (see allreduce_coord.h). */
#include "allreduce_coord.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "frame.h"
#include "log.h"
#include "testlimits.h"
#include "validate.h"

/* Our calls outlive the agents' own deadline by this much, so a late
 * result still finds its call. */
#define ARC_MARGIN_MS 5000
#define ARC_CTL_TIMEOUT_MS 10000

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
	}
	if (*not_adjacent) {
		if (used < len)
			snprintf(why + used, len - used,
				 "; ranks must follow the physical ring order "
				 "(ringctl ranks)");
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ the job */

struct arc_rank {
	struct allreduce_coord *j;
	unsigned idx;
	char *why; /* its own failure, for the report's notes */
	struct call *setup, *ctl;
	Ring__AllreduceEndpoint *ep;
	Ring__AllreduceResult *res;
	int sent, done, stopped;
};

struct allreduce_coord {
	const struct call_iface *ci;
	struct allreduce_coord_plan p;
	uint8_t id[16];
	unsigned deadline_ms, n_ep;
	uint64_t started_ms;
	struct arc_rank r[ARLIMITS_RANKS_MAX];
	char error[1024];
	int busy;
	allreduce_coord_cb cb;
	void *arg;
};

static void arc_error(struct allreduce_coord *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The first failure is the one worth reporting. */
static void arc_error(struct allreduce_coord *j, const char *fmt, ...)
{
	va_list ap;

	if (j->error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(j->error, sizeof(j->error), fmt, ap);
	va_end(ap);
}

/* A rank's own failure: the job's error if it is the first, and a note
 * either way (a neighbour's view of the same failure names the step). */
static void arc_rank_error(struct arc_rank *r, const char *text)
{
	struct allreduce_coord *j = r->j;
	const char *me = j->p.ranks[r->idx].node;

	arc_error(j, "%s (rank %u): %s", me, r->idx, text);
	free(r->why);
	if (asprintf(&r->why, "%s (rank %u): %s", me, r->idx, text) < 0)
		r->why = NULL;
}

static const char *arc_err_text(int err)
{
	return err == -ETIMEDOUT    ? "no answer before the job's deadline"
	       : err == -ECONNRESET ? "agent session lost during the job"
				    : strerror(-err);
}

static void arc_free(struct allreduce_coord *j)
{
	for (unsigned i = 0; i < j->p.n; i++) {
		call_cancel(j->ci, j->r[i].setup);
		call_cancel(j->ci, j->r[i].ctl);
		free(j->r[i].why);
		if (j->r[i].ep)
			ring__allreduce_endpoint__free_unpacked(j->r[i].ep,
								NULL);
		if (j->r[i].res)
			ring__allreduce_result__free_unpacked(j->r[i].res,
							      NULL);
	}
	free(j);
}

static void arc_ignore(const Ring__Envelope *env, int err, void *arg)
{
	(void)arg;
	if (!env)
		log_debug("control", "all-reduce STOP unanswered: %s",
			  arc_err_text(err));
}

static void arc_send_stop(struct allreduce_coord *j, unsigned i)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__AllreduceControl c = RING__ALLREDUCE_CONTROL__INIT;

	c.job_id.data = j->id;
	c.job_id.len = sizeof(j->id);
	c.action = RING__ALLREDUCE_ACTION__ALLREDUCE_STOP;
	req.body_case = RING__ENVELOPE__BODY_ALLREDUCE_CONTROL;
	req.allreduce_control = &c;
	call_start(j->ci, j->p.ranks[i].node, &req, ARC_CTL_TIMEOUT_MS, 0,
		   RING__ENVELOPE__BODY_ACK, arc_ignore, NULL);
}

static void arc_stop_all(struct allreduce_coord *j)
{
	for (unsigned i = 0; i < j->p.n; i++) {
		struct arc_rank *r = &j->r[i];

		if (!r->sent) {
			r->done = 1;
			continue;
		}
		if (r->done || r->stopped)
			continue;
		r->stopped = 1;
		arc_send_stop(j, i);
	}
}

static void arc_report(struct allreduce_coord *j, Ring__AllreduceReport *rep,
		       Ring__AllreduceSize *sz, Ring__AllreduceSize **szp,
		       char **order)
{
	const struct allreduce_coord_plan *p = &j->p;
	unsigned n_sz = p->n_sizes;

	for (unsigned i = 0; i < p->n; i++) {
		order[i] = (char *)p->ranks[i].node;
		if (!j->r[i].res)
			n_sz = 0;
		else if (j->r[i].res->n_sizes < n_sz)
			n_sz = (unsigned)j->r[i].res->n_sizes;
	}
	rep->n_order = p->n;
	rep->order = order;
	rep->order_source = (char *)p->source;
	rep->method = "tcp";
	rep->iterations = p->iterations;
	rep->warmup = p->warmup;
	for (unsigned k = 0; k < n_sz; k++) {
		Ring__AllreduceSize *s = &sz[k];
		double t = 0, tmin = 0;
		int ok = 1;

		ring__allreduce_size__init(s);
		s->size = p->sizes[k];
		/* The collective ends when its slowest rank does. */
		for (unsigned i = 0; i < p->n; i++) {
			const Ring__AllreduceSizeResult *x =
				j->r[i].res->sizes[k];

			ok &= x->verified && x->size == p->sizes[k];
			t = x->mean_us > t ? x->mean_us : t;
			tmin = !tmin || x->mean_us < tmin ? x->mean_us : tmin;
		}
		s->time_us = t;
		s->min_time_us = tmin;
		s->verified = ok;
		/* nccl-tests: algbw = size / time; bits here (Gbit/s). */
		s->algbw_gbps = t > 0 ? (double)s->size * 8 / (t * 1e3) : 0;
		s->busbw_gbps = allreduce_coord_busbw(s->algbw_gbps, p->n);
		szp[k] = s;
	}
	rep->n_sizes = n_sz;
	rep->sizes = szp;
}

static void arc_finish(struct allreduce_coord *j)
{
	Ring__AllreduceReport rep = RING__ALLREDUCE_REPORT__INIT;
	Ring__AllreduceSize sz[ARLIMITS_SIZES_MAX];
	Ring__AllreduceSize *szp[ARLIMITS_SIZES_MAX];
	char *order[ARLIMITS_RANKS_MAX];

	char *notes[ARLIMITS_RANKS_MAX];

	arc_report(j, &rep, sz, szp, order);
	for (unsigned i = 0; i < j->p.n; i++)
		if (j->r[i].why)
			notes[rep.n_notes++] = j->r[i].why;
	rep.notes = notes;
	rep.error = j->error;
	rep.started_ms = j->started_ms;
	rep.finished_ms = clock_now_ms();
	j->cb(&rep, j->arg);
	arc_free(j);
}

/* Finish once every rank is done and none of our entry points is still
 * on the stack (a send can fail a session, and our calls, at once). */
static void arc_leave(struct allreduce_coord *j)
{
	if (--j->busy)
		return;
	for (unsigned i = 0; i < j->p.n; i++)
		if (!j->r[i].done)
			return;
	arc_finish(j);
}

static void arc_start_reply(const Ring__Envelope *env, int err, void *arg)
{
	struct arc_rank *r = arg;
	struct allreduce_coord *j = r->j;
	const char *me = j->p.ranks[r->idx].node;

	j->busy++;
	r->ctl = NULL;
	if (!env || env->body_case != RING__ENVELOPE__BODY_ACK) {
		if (!env)
			arc_error(j, "%s: START: %s", me, arc_err_text(err));
		else if (env->body_case == RING__ENVELOPE__BODY_ERROR)
			arc_error(j, "%s: %s", me, env->error->text);
		else
			arc_error(j, "%s: unexpected %s to START", me,
				  frame_type_name((uint16_t)env->body_case));
		arc_stop_all(j);
	}
	arc_leave(j);
}

/* Every endpoint is in: START each rank with its next rank's. */
static void arc_start_all(struct allreduce_coord *j)
{
	for (unsigned i = 0; i < j->p.n && !j->error[0]; i++) {
		Ring__Envelope req = RING__ENVELOPE__INIT;
		Ring__AllreduceControl c = RING__ALLREDUCE_CONTROL__INIT;
		const Ring__AllreduceEndpoint *next = j->r[(i + 1) % j->p.n].ep;

		c.job_id.data = j->id;
		c.job_id.len = sizeof(j->id);
		c.action = RING__ALLREDUCE_ACTION__ALLREDUCE_START;
		c.next_address = next->address;
		c.next_port = next->port;
		req.body_case = RING__ENVELOPE__BODY_ALLREDUCE_CONTROL;
		req.allreduce_control = &c;
		j->r[i].ctl = call_start(
			j->ci, j->p.ranks[i].node, &req, ARC_CTL_TIMEOUT_MS, 0,
			RING__ENVELOPE__BODY_ACK, arc_start_reply, &j->r[i]);
		if (!j->r[i].ctl) {
			arc_error(j, "%s: not connected", j->p.ranks[i].node);
			arc_stop_all(j);
		}
	}
}

/* What an agent sent, checked before anything is built on it. */
static int arc_endpoint_ok(const struct allreduce_coord *j, unsigned i,
			   const Ring__AllreduceEndpoint *e)
{
	return validate_unicast_ipv4(e->address) && e->port >= 1 &&
	       e->port <= 65535 &&
	       !strcmp(e->address, j->p.ranks[i].listen_addr);
}

static int arc_result_ok(const struct allreduce_coord *j,
			 const Ring__AllreduceResult *r)
{
	if (r->n_sizes > j->p.n_sizes || !validate_text(r->error, 1024) ||
	    !validate_text(r->method, 16))
		return 0;
	for (size_t k = 0; k < r->n_sizes; k++) {
		const Ring__AllreduceSizeResult *x = r->sizes[k];

		if (x->size != j->p.sizes[k] || !isfinite(x->mean_us) ||
		    !isfinite(x->min_us) || !isfinite(x->max_us) ||
		    x->mean_us < 0 || x->min_us < 0 || x->max_us < 0)
			return 0;
	}
	return 1;
}

static void arc_setup_reply(const Ring__Envelope *env, int err, void *arg)
{
	struct arc_rank *r = arg;
	struct allreduce_coord *j = r->j;
	const char *me = j->p.ranks[r->idx].node;

	j->busy++;
	if (env && env->body_case == RING__ENVELOPE__BODY_ALLREDUCE_ENDPOINT) {
		if (r->ep ||
		    !arc_endpoint_ok(j, r->idx, env->allreduce_endpoint)) {
			arc_error(j, "%s: invalid all-reduce endpoint", me);
			arc_stop_all(j);
			j->busy--;
			return;
		}
		r->ep = frame_copy(&env->allreduce_endpoint->base);
		if (!r->ep) {
			arc_error(j, "coordinator: out of memory");
			arc_stop_all(j);
		} else if (!j->error[0] && ++j->n_ep == j->p.n) {
			arc_start_all(j);
		}
		j->busy--; /* this rank is not done: j lives on */
		return;
	}
	r->setup = NULL;
	r->done = 1;
	if (!env) {
		arc_rank_error(r, arc_err_text(err));
		if (err == -ETIMEDOUT && !r->stopped)
			arc_send_stop(j, r->idx);
	} else if (env->body_case == RING__ENVELOPE__BODY_ALLREDUCE_RESULT &&
		   !arc_result_ok(j, env->allreduce_result)) {
		arc_error(j, "%s (rank %u): invalid all-reduce result", me,
			  r->idx);
	} else if (env->body_case == RING__ENVELOPE__BODY_ALLREDUCE_RESULT) {
		r->res = frame_copy(&env->allreduce_result->base);
		if (*env->allreduce_result->error)
			arc_rank_error(r, env->allreduce_result->error);
		else if (!r->res)
			arc_error(j, "coordinator: out of memory");
	} else if (env->body_case == RING__ENVELOPE__BODY_ERROR) {
		arc_rank_error(r, env->error->text);
	} else {
		arc_error(j, "%s: unexpected %s to the all-reduce setup", me,
			  frame_type_name((uint16_t)env->body_case));
	}
	if (j->error[0])
		arc_stop_all(j);
	arc_leave(j);
}

static int arc_send_setup(struct allreduce_coord *j, unsigned i)
{
	const struct allreduce_coord_plan *p = &j->p;
	const struct allreduce_coord_rank *k = &p->ranks[i];
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__AllreduceSetup s = RING__ALLREDUCE_SETUP__INIT;

	s.job_id.data = j->id;
	s.job_id.len = sizeof(j->id);
	s.rank = i;
	s.n = p->n;
	s.listen_interface = (char *)k->listen_if;
	s.listen_address = (char *)k->listen_addr;
	s.prev_address = (char *)k->prev_addr;
	s.next_interface = (char *)k->next_if;
	s.sizes = (uint64_t *)p->sizes;
	s.n_sizes = p->n_sizes;
	s.iterations = p->iterations;
	s.warmup = p->warmup;
	s.step_timeout_ms = p->step_ms;
	s.deadline_ms = j->deadline_ms;
	s.prev_node = (char *)p->ranks[(i + p->n - 1) % p->n].node;
	s.next_node = (char *)p->ranks[(i + 1) % p->n].node;
	req.body_case = RING__ENVELOPE__BODY_ALLREDUCE_SETUP;
	req.allreduce_setup = &s;
	j->r[i].setup =
		call_start(j->ci, k->node, &req, j->deadline_ms + ARC_MARGIN_MS,
			   RING__ENVELOPE__BODY_ALLREDUCE_ENDPOINT,
			   RING__ENVELOPE__BODY_ALLREDUCE_RESULT,
			   arc_setup_reply, &j->r[i]);
	if (!j->r[i].setup)
		return -1;
	j->r[i].sent = 1;
	return 0;
}

struct allreduce_coord *
allreduce_coord_start(const struct call_iface *ci,
		      const struct allreduce_coord_plan *p,
		      allreduce_coord_cb cb, void *arg)
{
	struct allreduce_coord *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->ci = ci;
	j->p = *p;
	j->cb = cb;
	j->arg = arg;
	j->started_ms = clock_now_ms();
	j->deadline_ms =
		arlimits_job_deadline_ms(p->sizes, p->n_sizes, p->n,
					 p->iterations, p->warmup, p->step_ms);
	if (getrandom(j->id, sizeof(j->id), 0) != sizeof(j->id)) {
		free(j);
		return NULL;
	}
	j->busy = 1;
	for (unsigned i = 0; i < p->n; i++) {
		j->r[i].j = j;
		j->r[i].idx = i;
	}
	for (unsigned i = 0; i < p->n; i++)
		if (arc_send_setup(j, i) < 0) {
			if (i == 0) {
				free(j);
				errno = ENOTCONN;
				return NULL;
			}
			arc_error(j, "%s: not connected", p->ranks[i].node);
			arc_stop_all(j);
			break;
		}
	/* A failure above may have finished every rank: the report goes
	 * out from here, after our caller has its handle... so defer by
	 * leaving busy at 1 until the caller could not see it. */
	if (--j->busy == 0 && j->error[0]) {
		int all = 1;

		for (unsigned i = 0; i < p->n; i++)
			all &= j->r[i].done;
		if (all) {
			arc_free(j);
			errno = ENOTCONN;
			return NULL;
		}
	}
	return j;
}

void allreduce_coord_cancel(struct allreduce_coord *j)
{
	if (!j)
		return;
	for (unsigned i = 0; i < j->p.n; i++)
		if (j->r[i].sent && !j->r[i].done && !j->r[i].stopped)
			arc_send_stop(j, i);
	arc_free(j);
}

void allreduce_coord_refused(const struct allreduce_coord_plan *p,
			     const char *error, Ring__ErrorCode code,
			     allreduce_coord_cb cb, void *arg)
{
	Ring__AllreduceReport rep = RING__ALLREDUCE_REPORT__INIT;
	char *order[ARLIMITS_RANKS_MAX];

	for (unsigned i = 0; i < p->n; i++)
		order[i] = (char *)p->ranks[i].node;
	rep.n_order = p->n;
	rep.order = order;
	rep.order_source = (char *)p->source;
	rep.method = "tcp";
	rep.iterations = p->iterations;
	rep.warmup = p->warmup;
	rep.error = (char *)error;
	rep.error_code = code;
	rep.finished_ms = clock_now_ms();
	cb(&rep, arg);
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
