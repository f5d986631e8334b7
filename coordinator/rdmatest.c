/* One RDMA test between two agents, driven through the call interface (see
 * rdmatest.h). */
#include "rdmatest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "clock.h"
#include "call.h"
#include "frame.h"
#include "log.h"
#include "nodes.h"
#include "rdma_rules.h"
#include "testlimits.h"

/* Our calls outlive the agents' own deadline by this much, so an agent's
 * late TestResult still finds its call. */
#define RDMATEST_MARGIN_MS 5000
#define RDMATEST_CTL_TIMEOUT_MS 10000

/* ------------------------------------------------------------ driver */

struct rt_side {
	struct rdmatest *t;
	int idx;		/* 0 A (requester), 1 B (target) */
	struct call *setup;	/* RdmaSetup: endpoint, later result */
	struct call *ctl;	/* RdmaControl CONNECT */
	Ring__RdmaEndpoint *ep; /* its endpoint, once answered */
	Ring__TestResult *res;	/* its result, once answered */
	int sent;		/* RdmaSetup went out */
	int done;		/* no more replies on the setup */
	int stopped;		/* RdmaControl STOP went out */
};

struct rdmatest {
	const struct call_iface *ci;
	char node[2][64], ifname[2][IFNAMSIZ], dev[2][64];
	int adjacent;
	Ring__TestParams params;
	Ring__RdmaParams rdma;
	uint32_t sizes[16];
	uint8_t id[16];
	unsigned deadline_ms;
	struct rt_side side[2];
	char error[1536];
	Ring__ErrorCode error_code; /* the first error's, when typed */
	int busy;		    /* nesting of our own entry points */
	rdmatest_cb cb;
	void *arg;
};

static void rt_error(struct rdmatest *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The first failure is the one worth reporting. */
static void rt_error(struct rdmatest *t, const char *fmt, ...)
{
	va_list ap;

	if (t->error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(t->error, sizeof(t->error), fmt, ap);
	va_end(ap);
}

/* An agent's error with its code: only "no data-plane path" is kept
 * typed (the first error wins, as for the text). */
static void rt_error_code(struct rdmatest *t, Ring__ErrorCode code,
			  const char *node, const char *text)
{
	if (!t->error[0] && code == RING__ERROR_CODE__ERROR_NOT_ADJACENT)
		t->error_code = code;
	rt_error(t, "%s: %s", node, text);
}

static const char *rt_err_text(int err)
{
	return err == -ETIMEDOUT    ? "no answer before the test deadline"
	       : err == -ECONNRESET ? "agent session lost during the test"
				    : strerror(-err);
}

static void rt_free(struct rdmatest *t)
{
	for (int i = 0; i < 2; i++) {
		struct rt_side *s = &t->side[i];

		call_cancel(t->ci, s->setup);
		call_cancel(t->ci, s->ctl);
		if (s->ep)
			ring__rdma_endpoint__free_unpacked(s->ep, NULL);
		if (s->res)
			ring__test_result__free_unpacked(s->res, NULL);
	}
	free(t);
}

/* A STOP nobody waits for: the side's result comes on its setup call. */
static void rt_stop_reply(const Ring__Envelope *env, int err, void *arg)
{
	(void)arg;
	if (env && env->body_case == RING__ENVELOPE__BODY_ERROR)
		log_debug("rdmatest", "STOP refused: %s", env->error->text);
	else if (!env)
		log_debug("rdmatest", "STOP unanswered: %s", rt_err_text(err));
}

static void rt_send_stop(struct rdmatest *t, int idx)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__RdmaControl rc = RING__RDMA_CONTROL__INIT;

	rc.test_id.data = t->id;
	rc.test_id.len = sizeof(t->id);
	rc.action = RING__RDMA_ACTION__RDMA_STOP;
	req.body_case = RING__ENVELOPE__BODY_RDMA_CONTROL;
	req.rdma_control = &rc;
	/* No session, no call: its setup call fails with it. */
	call_start(t->ci, t->node[idx], &req, RDMATEST_CTL_TIMEOUT_MS, 0,
		   RING__ENVELOPE__BODY_ACK, rt_stop_reply, NULL);
}

/* End this side: STOP it if it holds anything, or mark it done if it was
 * never told. */
static void rt_stop(struct rdmatest *t, int idx)
{
	struct rt_side *s = &t->side[idx];

	if (!s->sent) {
		s->done = 1;
		return;
	}
	if (s->done || s->stopped)
		return;
	s->stopped = 1;
	rt_send_stop(t, idx);
}

/* The endpoint side idx used, for the wording: "n1 rxe1 port 1 (netdev
 * r1b)"; the node alone when it never answered with one. */
static void rt_side_name(const struct rdmatest *t, int idx, char *buf,
			 size_t len)
{
	const Ring__RdmaEndpoint *e = t->side[idx].ep;

	if (e && *e->device)
		snprintf(buf, len, "%s %s port %u (netdev %s)", t->node[idx],
			 e->device, e->port, *e->netdev ? e->netdev : "?");
	else
		snprintf(buf, len, "%s", t->node[idx]);
}

void rdmatest_no_path_text(const char *a, const char *a_end, const char *b,
			   const char *b_end, int adjacent, const char *error,
			   const char *detail, char *out, size_t len)
{
	const char *d = detail ? detail : "";

	if (adjacent == 0) {
		/* The reference cluster's rank-order failure: known, not guessed. */
		snprintf(out, len,
			 "%s and %s are not ring neighbours (no published "
			 "edge joins them): no data-plane path between them; "
			 "%s",
			 a, b, error);
		return;
	}
	snprintf(out, len,
		 "no RDMA path from %s to %s although %s: %s%s%s; between "
		 "neighbours a wrong function or ARP flux fails this way: "
		 "check that each address is on the function facing the "
		 "peer and, with twins on one subnet, net.ipv4.conf "
		 "arp_ignore=1 and arp_announce=2",
		 a_end, b_end,
		 /* 1: a published edge (ringctl test) or the cable the
		  * survey is measuring joins them. */
		 adjacent == 1 ? "they are neighbours (an edge joins them)"
			       : "no survey has said whether they are "
				 "neighbours",
		 error, *d ? "; " : "", d);
}

/* An agent's "no data-plane path" (ERROR_NOT_ADJACENT): only here is it
 * known whether the pair is adjacent, so only here is it worded. */
static void rt_no_path(struct rdmatest *t)
{
	const char *detail = "";
	char a_end[160], b_end[160], err[sizeof(t->error)];

	for (int i = 0; i < 2 && !*detail; i++)
		if (t->side[i].res && t->side[i].res->path_detail)
			detail = t->side[i].res->path_detail;
	rt_side_name(t, 0, a_end, sizeof(a_end));
	rt_side_name(t, 1, b_end, sizeof(b_end));
	snprintf(err, sizeof(err), "%s", t->error);
	rdmatest_no_path_text(t->node[0], a_end, t->node[1], b_end, t->adjacent,
			      err, detail, t->error, sizeof(t->error));
}

static void rt_finish(struct rdmatest *t)
{
	Ring__TestReport rep = RING__TEST_REPORT__INIT;
	const Ring__TestResult *ra = t->side[0].res;
	const Ring__RdmaEndpoint *eb = t->side[1].ep;
	int read = t->rdma.op == RING__RDMA_OP__RDMA_OP_READ;

	rep.a = t->node[0];
	rep.b = t->node[1];
	rep.a_interface = t->ifname[0];
	rep.b_address = eb && *eb->ipv4	 ? eb->ipv4
			: eb && *eb->gid ? eb->gid
					 : t->ifname[1];
	rep.params = &t->params;
	rep.a_side = t->side[0].res;
	rep.b_side = t->side[1].res;
	/* A's own count of completed work: for READ the data came from B. */
	if (ra && t->params.kind == RING__TEST_KIND__TEST_RDMA_BW) {
		if (read)
			rep.gbps_b_to_a = ra->gbps_sent;
		else
			rep.gbps_a_to_b = ra->gbps_sent;
	}
	if (t->error_code == RING__ERROR_CODE__ERROR_NOT_ADJACENT)
		rt_no_path(t);
	rep.error = t->error;
	rep.error_code = t->error_code;
	rep.finished_ms = clock_now_ms();
	rep.method = "rdma";
	t->cb(&rep, t->arg);
	rt_free(t);
}

static void rt_enter(struct rdmatest *t)
{
	t->busy++;
}

/* Finish once both sides are done and no entry point of ours is still on
 * the stack (a send can fail a session, and with it our calls, at once). */
static void rt_leave(struct rdmatest *t)
{
	if (--t->busy == 0 && t->side[0].done && t->side[1].done)
		rt_finish(t);
}

static void rt_abort(struct rdmatest *t)
{
	rt_stop(t, 0);
	rt_stop(t, 1);
}

static void rt_setup_reply(const Ring__Envelope *env, int err, void *arg);
static void rt_connect_reply(const Ring__Envelope *env, int err, void *arg);

static int rt_send_setup(struct rdmatest *t, int idx)
{
	struct rt_side *s = &t->side[idx];
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__RdmaSetup su = RING__RDMA_SETUP__INIT;

	su.params = &t->params;
	su.test_id.data = t->id;
	su.test_id.len = sizeof(t->id);
	su.requester = idx == 0;
	su.interface = t->ifname[idx];
	su.device = t->dev[idx];
	su.gid_set = idx == 0 ? t->rdma.a_gid_set : t->rdma.b_gid_set;
	su.gid_index = idx == 0 ? t->rdma.a_gid_index : t->rdma.b_gid_index;
	su.peer = t->node[!idx];
	su.deadline_ms = t->deadline_ms;
	req.body_case = RING__ENVELOPE__BODY_RDMA_SETUP;
	req.rdma_setup = &su;
	/* The endpoint at once, the result when the test ends. */
	s->setup = call_start(
		t->ci, t->node[idx], &req, t->deadline_ms + RDMATEST_MARGIN_MS,
		RING__ENVELOPE__BODY_RDMA_ENDPOINT,
		RING__ENVELOPE__BODY_TEST_RESULT, rt_setup_reply, s);
	if (!s->setup)
		return -1;
	s->sent = 1;
	return 0;
}

static int rt_send_connect(struct rdmatest *t, int idx)
{
	struct rt_side *s = &t->side[idx];
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__RdmaControl rc = RING__RDMA_CONTROL__INIT;

	rc.test_id.data = t->id;
	rc.test_id.len = sizeof(t->id);
	rc.action = RING__RDMA_ACTION__RDMA_CONNECT;
	rc.peer = t->side[!idx].ep;
	req.body_case = RING__ENVELOPE__BODY_RDMA_CONTROL;
	req.rdma_control = &rc;
	s->ctl = call_start(t->ci, t->node[idx], &req, RDMATEST_CTL_TIMEOUT_MS,
			    0, RING__ENVELOPE__BODY_ACK, rt_connect_reply, s);
	return s->ctl ? 0 : -1;
}

/* Both endpoints are in: check the GIDs, then connect B (target) first. */
static void rt_endpoints_ready(struct rdmatest *t)
{
	char why[512];

	if (rdma_rules_gid_check(t->node[0], t->side[0].ep, t->node[1],
				 t->side[1].ep, t->adjacent, why,
				 sizeof(why)) < 0) {
		rt_error(t, "%s", why);
		rt_abort(t);
		return;
	}
	if (rt_send_connect(t, 1) < 0) {
		rt_error(t, "%s: not connected", t->node[1]);
		rt_abort(t);
	}
}

static void rt_connect_reply(const Ring__Envelope *env, int err, void *arg)
{
	struct rt_side *s = arg;
	struct rdmatest *t = s->t;

	rt_enter(t);
	s->ctl = NULL;
	if (env && env->body_case == RING__ENVELOPE__BODY_ACK) {
		/* B is at RTS and responding: now A may post. */
		if (s->idx == 1 && rt_send_connect(t, 0) < 0) {
			rt_error(t, "%s: not connected", t->node[0]);
			rt_abort(t);
		}
	} else {
		if (!env)
			rt_error(t, "%s: connect: %s", t->node[s->idx],
				 rt_err_text(err));
		else if (env->body_case == RING__ENVELOPE__BODY_ERROR)
			rt_error_code(t, env->error->code, t->node[s->idx],
				      env->error->text);
		else
			rt_error(t, "%s: unexpected %s to connect",
				 t->node[s->idx],
				 frame_type_name((uint16_t)env->body_case));
		rt_abort(t);
	}
	rt_leave(t);
}

static void rt_setup_reply(const Ring__Envelope *env, int err, void *arg)
{
	struct rt_side *s = arg;
	struct rdmatest *t = s->t;
	const char *me = t->node[s->idx];

	rt_enter(t);
	if (env && env->body_case == RING__ENVELOPE__BODY_RDMA_ENDPOINT) {
		s->ep = frame_copy(&env->rdma_endpoint->base);
		if (!s->ep) {
			rt_error(t, "coordinator: out of memory");
			rt_abort(t);
		} else if (t->error[0]) {
			/* Failing already: this side was stopped, and its
			 * result follows; no next step for a test that ends. */
		} else if (s->idx == 1) {
			if (rt_send_setup(t, 0) < 0) {
				rt_error(t, "%s: not connected", t->node[0]);
				rt_abort(t);
			}
		} else {
			rt_endpoints_ready(t);
		}
		/* This side is not done, so t lives on: the call stays. */
		t->busy--;
		return;
	}
	s->setup = NULL;
	s->done = 1;
	if (!env) {
		rt_error(t, "%s: %s", me, rt_err_text(err));
		/* It may still hold the test: tell it, it is cheap. */
		if (err == -ETIMEDOUT && !s->stopped)
			rt_send_stop(t, s->idx);
	} else if (env->body_case == RING__ENVELOPE__BODY_TEST_RESULT) {
		s->res = frame_copy(&env->test_result->base);
		if (*env->test_result->error)
			rt_error_code(t, env->test_result->error_code, me,
				      env->test_result->error);
	} else if (env->body_case == RING__ENVELOPE__BODY_ERROR) {
		rt_error_code(t, env->error->code, me, env->error->text);
	} else {
		rt_error(t, "%s: unexpected %s to RDMA setup", me,
			 frame_type_name((uint16_t)env->body_case));
	}
	/* A done is the normal end (stop B); anything else is a failure. */
	rt_stop(t, !s->idx);
	rt_leave(t);
}

struct rdmatest *rdmatest_start(const struct call_iface *ci,
				const struct rdmatest_spec *sp, rdmatest_cb cb,
				void *arg)
{
	struct rdmatest *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ci = ci;
	snprintf(t->node[0], sizeof(t->node[0]), "%s", sp->a);
	snprintf(t->node[1], sizeof(t->node[1]), "%s", sp->b);
	snprintf(t->ifname[0], sizeof(t->ifname[0]), "%s", sp->a_if);
	snprintf(t->ifname[1], sizeof(t->ifname[1]), "%s", sp->b_if);
	snprintf(t->dev[0], sizeof(t->dev[0]), "%s", sp->a_dev);
	snprintf(t->dev[1], sizeof(t->dev[1]), "%s", sp->b_dev);
	t->adjacent = sp->adjacent;
	t->params = *sp->params;
	if (sp->params->rdma)
		t->rdma = *sp->params->rdma;
	else
		ring__rdma_params__init(&t->rdma);
	t->rdma.base.unknown_fields = NULL;
	t->rdma.base.n_unknown_fields = 0;
	t->params.base.unknown_fields = NULL;
	t->params.base.n_unknown_fields = 0;
	t->params.rdma = &t->rdma;
	t->params.direction = RING__DIRECTION__DIR_A_TO_B;
	t->params.n_sizes = sp->params->n_sizes < 16 ? sp->params->n_sizes : 16;
	if (t->params.n_sizes)
		memcpy(t->sizes, sp->params->sizes,
		       t->params.n_sizes * sizeof(uint32_t));
	t->params.sizes = t->sizes;
	t->deadline_ms = testlimits_rdma_deadline_ms(&t->params);
	t->cb = cb;
	t->arg = arg;
	for (int i = 0; i < 2; i++) {
		t->side[i].t = t;
		t->side[i].idx = i;
	}
	if (getrandom(t->id, sizeof(t->id), 0) != sizeof(t->id)) {
		free(t);
		return NULL;
	}
	/* B first: A's endpoint is of no use until B's exists. */
	if (rt_send_setup(t, 1) < 0) {
		free(t);
		errno = ENOTCONN;
		return NULL;
	}
	return t;
}

void rdmatest_cancel(struct rdmatest *t)
{
	if (!t)
		return;
	for (int i = 0; i < 2; i++)
		if (t->side[i].sent && !t->side[i].done && !t->side[i].stopped)
			rt_send_stop(t, i);
	rt_free(t);
}
