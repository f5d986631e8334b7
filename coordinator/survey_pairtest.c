/* Survey pair test: one TCP (or wrapped RDMA) test between two nodes, for
 * the survey's rounds and the operator's tests alike (manual: it holds a
 * TEST_SLOT_TEST slot, given back when it ends). Its bytes go to the
 * own-bytes account. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "frame.h"
#include "survey_int.h"
#include "test_slots.h"

static void sv_test_link(struct survey *sv, struct survey_test *t)
{
	t->next = sv->tests;
	if (sv->tests)
		sv->tests->prev = t;
	sv->tests = t;
}

static void sv_test_unlink(struct survey_test *t)
{
	struct survey *sv = t->sv;

	if (t->prev)
		t->prev->next = t->next;
	else
		sv->tests = t->next;
	if (t->next)
		t->next->prev = t->prev;
}

void sv_test_free(struct survey_test *t)
{
	if (t->manual)
		test_slots_give(&t->sv->slots, TEST_SLOT_TEST);
	call_cancel(t->sv->calls, t->call_a);
	call_cancel(t->sv->calls, t->call_b);
	rdmatest_cancel(t->rdma);
	if (t->res_a)
		ring__test_result__free_unpacked(t->res_a, NULL);
	if (t->res_b)
		ring__test_result__free_unpacked(t->res_b, NULL);
	sv_test_unlink(t);
	free(t);
}

void sv_test_cancel(struct survey_test *t)
{
	if (t)
		sv_test_free(t);
}

static void sv_test_set_error(struct survey_test *t, const char *side,
			      const char *text)
{
	if (!t->error[0])
		snprintf(t->error, sizeof(t->error), "%s: %s", side, text);
}

static void sv_test_finish(struct survey_test *t)
{
	Ring__TestReport rep = RING__TEST_REPORT__INIT;
	int bw = t->params.kind == RING__TEST_KIND__TEST_TCP_BW;

	if (!t->done_a || !t->done_b)
		return;
	rep.a = t->a;
	rep.b = t->b;
	rep.a_interface = t->a_if;
	rep.b_address = t->b_addr;
	rep.params = &t->params;
	rep.a_side = t->res_a;
	rep.b_side = t->res_b;
	/* Each direction is what its senders' peers acknowledged. */
	if (bw && t->res_a)
		rep.gbps_a_to_b = t->res_a->gbps_sent;
	if (bw && t->res_b)
		rep.gbps_b_to_a = t->res_b->gbps_sent;
	if (!t->error[0] && t->res_a && *t->res_a->error)
		sv_test_set_error(t, t->a, t->res_a->error);
	if (!t->error[0] && t->res_b && *t->res_b->error)
		sv_test_set_error(t, t->b, t->res_b->error);
	rep.error = t->error;
	rep.finished_ms = clock_now_ms();
	rep.method = "tcp";
	t->call_a = t->call_b = NULL;
	self_bytes_account(t->sv->acct, &rep);
	t->cb(&rep, t->arg);
	sv_test_free(t);
}

static const char *sv_err_text(int err)
{
	return err == -ETIMEDOUT    ? "no answer before the test deadline"
	       : err == -ECONNRESET ? "agent session lost during the test"
				    : strerror(-err);
}

static void sv_test_reply_a(const Ring__Envelope *env, int err, void *arg)
{
	struct survey_test *t = arg;

	t->call_a = NULL;
	t->done_a = 1;
	if (!env)
		sv_test_set_error(t, t->a, sv_err_text(err));
	else if (env->body_case == RING__ENVELOPE__BODY_TEST_RESULT)
		t->res_a = frame_copy(&env->test_result->base);
	else if (env->body_case == RING__ENVELOPE__BODY_ERROR)
		sv_test_set_error(t, t->a, env->error->text);
	sv_test_finish(t);
}

static unsigned sv_test_deadline_ms(const Ring__TestParams *p)
{
	uint64_t lat = (uint64_t)p->n_sizes * (p->iterations + p->lat_warmup);

	/* Latency: generous per round trip; bandwidth: the window plus
	 * connection set-up and teardown. */
	return SV_ACCEPT_TIMEOUT_MS + p->warmup_ms + p->duration_ms + 10000 +
	       (unsigned)(lat / 2);
}

static void sv_test_reply_b(const Ring__Envelope *env, int err, void *arg)
{
	struct survey_test *t = arg;
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__TestRunRequest run = RING__TEST_RUN_REQUEST__INIT;

	if (env && env->body_case == RING__ENVELOPE__BODY_TEST_LISTEN_REPLY) {
		run.params = &t->params;
		run.peer_address = t->b_addr;
		run.port = env->test_listen_reply->port;
		run.local_interface = t->a_if;
		run.token.data = t->token;
		run.token.len = sizeof(t->token);
		run.connect_timeout_ms = SV_ACCEPT_TIMEOUT_MS;
		req.body_case = RING__ENVELOPE__BODY_TEST_RUN_REQUEST;
		req.test_run_request = &run;
		t->call_a = call_start(t->sv->calls, t->a, &req,
				       sv_test_deadline_ms(&t->params), 0,
				       RING__ENVELOPE__BODY_TEST_RESULT,
				       sv_test_reply_a, t);
		if (!t->call_a) {
			sv_test_set_error(t, t->a, "not connected");
			t->done_a = 1;
		}
		return; /* B's result comes later on the same request */
	}
	t->call_b = NULL;
	t->done_b = 1;
	if (!env)
		sv_test_set_error(t, t->b, sv_err_text(err));
	else if (env->body_case == RING__ENVELOPE__BODY_TEST_RESULT)
		t->res_b = frame_copy(&env->test_result->base);
	else if (env->body_case == RING__ENVELOPE__BODY_ERROR)
		sv_test_set_error(t, t->b, env->error->text);
	if (!t->call_a && !t->done_a) {
		/* B failed before A was told anything. */
		t->done_a = 1;
	}
	sv_test_finish(t);
}

struct survey_test *sv_test_start(struct survey *sv, const char *a,
				  const char *a_if, const char *b,
				  const char *b_addr, const Ring__TestParams *p,
				  survey_test_cb cb, void *arg, int manual)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__TestListenRequest lis = RING__TEST_LISTEN_REQUEST__INIT;
	struct survey_test *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->sv = sv;
	snprintf(t->a, sizeof(t->a), "%s", a);
	snprintf(t->b, sizeof(t->b), "%s", b);
	snprintf(t->a_if, sizeof(t->a_if), "%s", a_if);
	snprintf(t->b_addr, sizeof(t->b_addr), "%s", b_addr);
	t->params = *p;
	t->params.n_sizes =
		p->n_sizes < SV_LAT_SIZES_MAX ? p->n_sizes : SV_LAT_SIZES_MAX;
	/* Bandwidth tests carry no sizes (NULL): memcpy must not see it. */
	if (t->params.n_sizes)
		memcpy(t->sizes, p->sizes,
		       t->params.n_sizes * sizeof(uint32_t));
	t->params.sizes = t->sizes;
	t->cb = cb;
	t->arg = arg;
	t->manual = manual;
	if (getrandom(t->token, sizeof(t->token), 0) != sizeof(t->token)) {
		free(t);
		return NULL;
	}
	sv_test_link(sv, t);
	lis.params = &t->params;
	lis.bind_address = t->b_addr;
	lis.token.data = t->token;
	lis.token.len = sizeof(t->token);
	lis.accept_timeout_ms = SV_ACCEPT_TIMEOUT_MS;
	req.body_case = RING__ENVELOPE__BODY_TEST_LISTEN_REQUEST;
	req.test_listen_request = &lis;
	/* B's port at once, B's result when the test ends. */
	t->call_b = call_start(
		sv->calls, b, &req, sv_test_deadline_ms(&t->params),
		RING__ENVELOPE__BODY_TEST_LISTEN_REPLY,
		RING__ENVELOPE__BODY_TEST_RESULT, sv_test_reply_b, t);
	if (!t->call_b) {
		sv_test_unlink(t);
		free(t);
		errno = ENOTCONN;
		return NULL;
	}
	return t;
}

static void sv_rdma_done(const Ring__TestReport *rep, void *arg)
{
	struct survey_test *t = arg;

	t->rdma = NULL; /* rdmatest frees itself when we return */
	self_bytes_account(t->sv->acct, rep);
	t->cb(rep, t->arg);
	sv_test_free(t);
}

/* An RDMA test wrapped as a survey_test: the same list, the same one-test-
 * per-node rule against surveys. */
struct survey_test *sv_rdma_start(struct survey *sv,
				  const struct rdmatest_spec *sp,
				  survey_test_cb cb, void *arg, int manual)
{
	struct survey_test *t = calloc(1, sizeof(*t));
	struct rdmatest_spec s;
	Ring__TestParams p;
	Ring__RdmaParams r;

	if (!t)
		return NULL;
	t->sv = sv;
	snprintf(t->a, sizeof(t->a), "%s", sp->a);
	snprintf(t->b, sizeof(t->b), "%s", sp->b);
	t->cb = cb;
	t->arg = arg;
	t->manual = manual;
	sv_test_link(sv, t);
	/* The survey's own tests run in the jobs' class (survey_rdma_tc,
	 * survey_rdma_sl); an operator's test says its own. */
	if (!manual && sp->params->rdma) {
		p = *sp->params;
		r = *sp->params->rdma;
		r.traffic_class = sv->conf->survey_rdma_tc;
		r.service_level = sv->conf->survey_rdma_sl;
		p.rdma = &r;
		s = *sp;
		s.params = &p;
		sp = &s;
	}
	t->rdma = rdmatest_start(sv->calls, sp, sv_rdma_done, t);
	if (!t->rdma) {
		int err = errno;

		sv_test_unlink(t);
		free(t);
		errno = err;
		return NULL;
	}
	return t;
}
