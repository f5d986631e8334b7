/* What the coordinator asks of an agent beyond its session: data-plane
 * probes, TCP tests and RDMA tests. Each runs asynchronously and answers with the
 * request id it came with; all are cancelled when the session drops. */
#ifndef RING_OPS_H
#define RING_OPS_H

#include <stdint.h>

#include <event2/event.h>

#include "agent_conf.h"
#include "ring.pb-c.h"

/* What one agent runs at once for its coordinator. Over a cap a request
 * is answered at once with an Error ("busy: ..."); nothing is queued.
 * A read test (plan --weights) counts as a test; one at a time.
 * Probes: the survey's widest burst is a switched cluster's all-pairs
 * check, one probe per other node (at most 63). Tests: TCP listeners, TCP
 * runs and RDMA tests together; a survey runs one per node at a time,
 * except in its ring-load round: both ways at once over two cables of two
 * functions (GB10 twins) is 8.
 * RDMA tests also share a registered-memory budget, rdma_max_total_memory
 * (default: twice rdma_max_memory). */
#define OPS_MAX_PROBES 64
#define OPS_MAX_TESTS 8

struct ops;

/* Send one reply (body matches type) for request_id. */
typedef void (*ops_send_fn)(void *arg, uint64_t request_id,
			    Ring__Envelope__BodyCase type, void *body);

/* conf (kept, not copied) limits RDMA tests: devices and memory. */
struct ops *ops_new(struct event_base *base, const struct agent_conf *conf,
		    ops_send_fn send, void *arg);
/* The management interface of the current session: probes never leave by
 * it (nor by any interface that is not a data interface), whatever the
 * route says. "" = not known. */
void ops_set_mgmt_interface(struct ops *o, const char *ifname);
/* 1 if env is a request this module serves (it then answers, possibly
 * later), 0 if not. env stays the caller's. */
int ops_handle(struct ops *o, const Ring__Envelope *env);
/* Abort every running probe and test without answering. */
void ops_cancel_all(struct ops *o);
void ops_free(struct ops *o);
/* Running operations, for logs and tests. */
unsigned ops_running(const struct ops *o);

#endif
