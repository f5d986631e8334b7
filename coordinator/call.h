/* How the survey and the test drivers ask agents for things: a call
 * interface, so that they depend on no session code (agents.c implements
 * it; unit tests script it). Every call has exactly one outcome: at most
 * one interim reply of its interim type, then one final reply (its final
 * type or an Error), or a failure; never anything after call_cancel. */
#ifndef RING_CALL_H
#define RING_CALL_H

#include "ring.pb-c.h"

struct call;

/* A reply (env owned by the callee, freed after the callback; an interim
 * reply leaves the call pending) or env == NULL with err (-ETIMEDOUT,
 * -ECONNRESET when the session ended). */
typedef void (*call_reply_cb)(const Ring__Envelope *env, int err, void *arg);

struct call_iface {
	/* Send req (request_id assigned by the callee) to node and route
	 * its replies to cb; interim 0 for none. NULL with errno (ENOTCONN
	 * when the node is not up). */
	struct call *(*start)(void *ctx, const char *node, Ring__Envelope *req,
			      unsigned timeout_ms,
			      Ring__Envelope__BodyCase interim,
			      Ring__Envelope__BodyCase final, call_reply_cb cb,
			      void *arg);
	/* Forget a pending call (NULL is fine). */
	void (*cancel)(void *ctx, struct call *c);
	void *ctx;
};

static inline struct call *
call_start(const struct call_iface *ci, const char *node, Ring__Envelope *req,
	   unsigned timeout_ms, Ring__Envelope__BodyCase interim,
	   Ring__Envelope__BodyCase final, call_reply_cb cb, void *arg)
{
	return ci->start(ci->ctx, node, req, timeout_ms, interim, final, cb,
			 arg);
}

static inline void call_cancel(const struct call_iface *ci, struct call *c)
{
	if (c)
		ci->cancel(ci->ctx, c);
}

#endif
