/* What the coordinator asks of an agent beyond its session: data-plane
 * probes, TCP tests and RDMA tests. Each runs asynchronously and answers with the
 * request id it came with; all are cancelled when the session drops. */
#ifndef RING_OPS_H
#define RING_OPS_H

#include <stdint.h>

#include <event2/event.h>

#include "agent_conf.h"
#include "ring.pb-c.h"

struct ops;

/* Send one reply (body matches type) for request_id. */
typedef void (*ops_send_fn)(void *arg, uint64_t request_id,
			    Ring__Envelope__BodyCase type, void *body);

/* conf (kept, not copied) limits RDMA tests: devices and memory. */
struct ops *ops_new(struct event_base *base, const struct agent_conf *conf,
		    ops_send_fn send, void *arg);
/* 1 if env is a request this module serves (it then answers, possibly
 * later), 0 if not. env stays the caller's. */
int ops_handle(struct ops *o, const Ring__Envelope *env);
/* Abort every running probe and test without answering. */
void ops_cancel_all(struct ops *o);
void ops_free(struct ops *o);
/* Running operations, for logs and tests. */
unsigned ops_running(const struct ops *o);

#endif
