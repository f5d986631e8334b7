/* Agent sessions: the TLS listener on the management address, Hello
 * authentication (claimed node name must be in the certificate),
 * heartbeats and inventory updates. */
#ifndef RING_AGENTS_H
#define RING_AGENTS_H

#include "ring.pb-c.h"

struct coord;
struct agents;

/* Bind and listen on conf->listen_host:listen_port. NULL on error. */
struct agents *agents_new(struct coord *co);
/* Close every session and the listener. */
void agents_free(struct agents *a);
/* Number of sessions that completed Hello. */
unsigned agents_active(const struct agents *a);

struct agents_call;

/* A reply to a call (env owned by the callee: freed after the callback),
 * or env == NULL with err (-ETIMEDOUT, -ECONNRESET when the session ended,
 * -ECANCELED from agents_call_cancel is silent: no callback). Return 1 to
 * keep waiting for another reply to the same request (timeout re-armed
 * with timeout_ms), 0 when done. */
typedef int (*agents_reply_cb)(const Ring__Envelope *env, int err, void *arg);

/* Send req (its request_id is assigned here) to node's live session and
 * route the replies with the same id to cb. NULL with errno ENOTCONN when
 * the node is not up. */
struct agents_call *agents_call(struct agents *a, const char *node,
				Ring__Envelope *req, unsigned timeout_ms,
				agents_reply_cb cb, void *arg);
/* Forget a pending call; its callback is not called again. */
void agents_call_cancel(struct agents_call *c);
/* Called (from the event loop) when a node's neighbour table arrives or a
 * node comes up or goes down: the survey uses it to decide when to run. */
typedef void (*agents_change_cb)(void *arg);
void agents_set_change_cb(struct agents *a, agents_change_cb cb, void *arg);

#endif
