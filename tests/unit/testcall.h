/* A scripted test double of the call interface (coordinator/call.h) for
 * unit tests of the coordinator's drivers (survey, rdmatest). It keeps
 * what agents.c promises and nothing more: a call starts only to a node
 * the real node table has up (else ENOTCONN); replies are routed as
 * session_deliver routes them (one interim, then one final or Error;
 * a duplicate interim, a reply to a finished or cancelled call, or one of
 * the wrong type is dropped and counted, never delivered); a node going
 * down fails its pending calls with -ECONNRESET. The test decides what
 * each agent answers and when. Every request is kept as a deep copy. */
#ifndef RING_TESTCALL_H
#define RING_TESTCALL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/call.h"
#include "frame.h"
#include "coordinator/nodes.h"

enum tc_state {
	TC_PENDING,   /* waiting for its interim or final reply */
	TC_DONE,      /* its final reply, Error or failure was delivered */
	TC_CANCELLED, /* the caller forgot it */
};

struct tc_call {
	unsigned seq; /* 1, 2, ... in start order */
	char node[64];
	Ring__Envelope *req; /* a deep copy */
	unsigned timeout_ms;
	Ring__Envelope__BodyCase interim, final;
	call_reply_cb cb;
	void *arg;
	int got_interim;
	enum tc_state state;
	struct tc_call *next;
};

struct tc {
	struct nodes *table; /* whose NODE_UP nodes can be called */
	struct tc_call *calls, **tail;
	unsigned n_calls;
	unsigned dropped; /* replies agents.c would have dropped */
	unsigned refused; /* starts refused with ENOTCONN */
	const char *lose; /* a start to this node loses its session */
	/* Every start is refused though the table still has the node up: its
	 * connection is failing (conn_send refuses) and the session is not
	 * torn down yet. */
	int refuse_all;
	struct call_iface ci;
};

static inline struct call *tc_start(void *ctx, const char *node,
				    Ring__Envelope *req, unsigned timeout_ms,
				    Ring__Envelope__BodyCase interim,
				    Ring__Envelope__BodyCase final,
				    call_reply_cb cb, void *arg);
static inline void tc_cancel(void *ctx, struct call *call);
static inline void tc_node_down(struct tc *t, const char *node);

static inline void tc_init(struct tc *t, struct nodes *table)
{
	memset(t, 0, sizeof(*t));
	t->table = table;
	t->tail = &t->calls;
	t->ci.start = tc_start;
	t->ci.cancel = tc_cancel;
	t->ci.ctx = t;
}

static inline void tc_release(struct tc *t)
{
	while (t->calls) {
		struct tc_call *c = t->calls;

		t->calls = c->next;
		frame_free(c->req);
		free(c);
	}
	t->tail = &t->calls;
}

static inline struct call *tc_start(void *ctx, const char *node,
				    Ring__Envelope *req, unsigned timeout_ms,
				    Ring__Envelope__BodyCase interim,
				    Ring__Envelope__BodyCase final,
				    call_reply_cb cb, void *arg)
{
	struct tc *t = ctx;
	struct node *n = nodes_find(t->table, node);
	struct tc_call *c;

	/* Every wait has a deadline. */
	if (!timeout_ms)
		fail_msg("call to %s without a timeout", node);
	if (t->lose && !strcmp(t->lose, node)) {
		/* The send fails the session: its calls fail now, inside
		 * the caller's own call_start, as a conn_send error can. */
		t->lose = NULL;
		tc_node_down(t, node);
	}
	if (t->refuse_all || !n || n->state != NODE_UP) {
		t->refused++;
		errno = ENOTCONN;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		fail_msg("out of memory");
	c->seq = ++t->n_calls;
	snprintf(c->node, sizeof(c->node), "%s", node);
	c->req = frame_copy(&req->base);
	if (!c->req)
		fail_msg("out of memory");
	c->timeout_ms = timeout_ms;
	c->interim = interim;
	c->final = final;
	c->cb = cb;
	c->arg = arg;
	*t->tail = c;
	t->tail = &c->next;
	return (struct call *)c;
}

static inline void tc_cancel(void *ctx, struct call *call)
{
	struct tc_call *c = (struct tc_call *)call;

	(void)ctx;
	/* The contract: only pending calls are cancelled. */
	if (c->state != TC_PENDING)
		fail_msg("call %u to %s cancelled when not pending", c->seq,
			 c->node);
	c->state = TC_CANCELLED;
}

/* An agent's reply to c, routed as agents.c routes it: 1 if delivered, 0
 * if dropped. */
static inline int tc_reply(struct tc *t, struct tc_call *c,
			   const Ring__Envelope *env)
{
	Ring__Envelope__BodyCase b = env->body_case;

	if (c->state != TC_PENDING) {
		t->dropped++; /* late, or after a cancel */
		return 0;
	}
	if (c->interim && b == c->interim) {
		if (c->got_interim) {
			t->dropped++;
			return 0;
		}
		c->got_interim = 1;
		c->cb(env, 0, c->arg);
		return 1;
	}
	if (b == c->final || b == RING__ENVELOPE__BODY_ERROR) {
		c->state = TC_DONE;
		c->cb(env, 0, c->arg);
		return 1;
	}
	t->dropped++;
	return 0;
}

/* The call's deadline passed (-ETIMEDOUT) or its session ended
 * (-ECONNRESET). */
static inline void tc_fail(struct tc_call *c, int err)
{
	if (c->state != TC_PENDING)
		fail_msg("failing call %u to %s when not pending", c->seq,
			 c->node);
	c->state = TC_DONE;
	c->cb(NULL, err, c->arg);
}

static inline int tc_error(struct tc *t, struct tc_call *c,
			   Ring__ErrorCode code, const char *text)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__Error e = RING__ERROR__INIT;

	e.code = code;
	e.text = (char *)text;
	env.body_case = RING__ENVELOPE__BODY_ERROR;
	env.error = &e;
	return tc_reply(t, c, &env);
}

static inline int tc_ack(struct tc *t, struct tc_call *c)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__Ack a = RING__ACK__INIT;

	env.body_case = RING__ENVELOPE__BODY_ACK;
	env.ack = &a;
	return tc_reply(t, c, &env);
}

/* The node's session ended: mark it down in the table, fail its calls. */
static inline void tc_node_down(struct tc *t, const char *node)
{
	struct node *n = nodes_find(t->table, node);

	if (n && n->state == NODE_UP)
		nodes_mark_down(n, "session lost", 2);
	for (struct tc_call *c = t->calls; c; c = c->next)
		if (c->state == TC_PENDING && !strcmp(c->node, node))
			tc_fail(c, -ECONNRESET);
}

/* The nth (from 1) call to node whose request is body; NULL if none. */
static inline struct tc_call *tc_find(struct tc *t, const char *node,
				      Ring__Envelope__BodyCase body,
				      unsigned nth)
{
	for (struct tc_call *c = t->calls; c; c = c->next)
		if (c->req->body_case == body && !strcmp(c->node, node) &&
		    --nth == 0)
			return c;
	return NULL;
}

/* As tc_find, failing the test when there is none. */
static inline struct tc_call *tc_get(struct tc *t, const char *node,
				     Ring__Envelope__BodyCase body,
				     unsigned nth)
{
	struct tc_call *c = tc_find(t, node, body, nth);

	if (!c)
		fail_msg("no call %u of type %s to %s", nth,
			 frame_type_name((uint16_t)body), node);
	return c;
}

static inline unsigned tc_count(const struct tc *t, const char *node,
				Ring__Envelope__BodyCase body)
{
	unsigned n = 0;

	for (const struct tc_call *c = t->calls; c; c = c->next)
		n += c->req->body_case == body &&
		     (!node || !strcmp(c->node, node));
	return n;
}

static inline unsigned tc_pending(const struct tc *t)
{
	unsigned n = 0;

	for (const struct tc_call *c = t->calls; c; c = c->next)
		n += c->state == TC_PENDING;
	return n;
}

#endif
