/* The ring all-reduce job, coordinator side (see allreduce_coord.h); the
 * plan is allreduce_plan.c. */
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
		       char **order, char **methods)
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
	rep->method = (char *)allreduce_coord_method(p, methods);
	rep->step_methods = methods;
	rep->n_step_methods = p->n;
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
	char *order[ARLIMITS_RANKS_MAX], *methods[ARLIMITS_RANKS_MAX];
	char *notes[ARLIMITS_RANKS_MAX];

	arc_report(j, &rep, sz, szp, order, methods);
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
		const Ring__AllreduceEndpoint *prev =
			j->r[(i + j->p.n - 1) % j->p.n].ep;

		c.job_id.data = j->id;
		c.job_id.len = sizeof(j->id);
		c.action = RING__ALLREDUCE_ACTION__ALLREDUCE_START;
		c.next_address = next->address;
		c.next_port = next->port;
		/* Each RDMA step's two queue pairs meet: ours toward the
		 * next rank with its from-previous one, and back. */
		if (j->p.ranks[i].next_rdma)
			c.next_rdma = next->prev_rdma;
		if (j->p.ranks[i].prev_rdma)
			c.prev_rdma = prev->next_rdma;
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

/* An RDMA side as the rank's peer will need it: one queue pair, a GID. */
static int arc_rdma_ok(const Ring__RdmaEndpoint *e, int want, int buffer)
{
	if (!want)
		return !e;
	return e && e->n_qpn == 1 && e->n_psn == 1 && e->gid_raw.len == 16 &&
	       e->mtu && (!buffer || (e->rkey && e->length)) &&
	       validate_text(e->device, 64) && validate_text(e->gid, 64) &&
	       validate_text(e->gid_type, 16) && validate_text(e->netdev, 16) &&
	       validate_text(e->ipv4, 16);
}

/* What an agent sent, checked before anything is built on it. */
static int arc_endpoint_ok(const struct allreduce_coord *j, unsigned i,
			   const Ring__AllreduceEndpoint *e)
{
	const struct allreduce_coord_rank *k = &j->p.ranks[i];

	return validate_unicast_ipv4(e->address) && e->port >= 1 &&
	       e->port <= 65535 && !strcmp(e->address, k->listen_addr) &&
	       arc_rdma_ok(e->prev_rdma, k->prev_rdma, 1) &&
	       arc_rdma_ok(e->next_rdma, k->next_rdma, 0);
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
	s.prev_rdma = k->prev_rdma;
	s.prev_device = (char *)k->prev_dev;
	s.prev_gid_index = k->prev_rdma ? k->prev_gid : -1;
	s.next_rdma = k->next_rdma;
	s.next_device = (char *)k->next_dev;
	s.next_gid_index = k->next_rdma ? k->next_gid : -1;
	/* The survey proved these paths: a job's queue pairs wait as
	 * NCCL's do before they retransmit (issue 11's soft-RoCE storms). */
	if (k->prev_rdma || k->next_rdma)
		s.ack_timeout = TESTLIMITS_RDMA_ACK_TIMEOUT_NCCL;
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
	char *order[ARLIMITS_RANKS_MAX], *methods[ARLIMITS_RANKS_MAX];

	for (unsigned i = 0; i < p->n; i++)
		order[i] = (char *)p->ranks[i].node;
	rep.n_order = p->n;
	rep.order = order;
	rep.order_source = (char *)p->source;
	rep.method = (char *)allreduce_coord_method(p, methods);
	rep.step_methods = methods;
	rep.n_step_methods = p->n;
	rep.iterations = p->iterations;
	rep.warmup = p->warmup;
	rep.error = (char *)error;
	rep.error_code = code;
	rep.finished_ms = clock_now_ms();
	cb(&rep, arg);
}
