/* The agent's host-name lookups for the coordinator (ResolveRequest): the
 * system resolver (getaddrinfo: /etc/hosts, nsswitch, DNS) as a launcher
 * on this node would use it. getaddrinfo blocks, so it runs in a worker
 * thread; one lookup at a time, a second is refused as busy. */
#ifndef RING_RESOLVE_H
#define RING_RESOLVE_H

#include <stddef.h>

#include <event2/event.h>

#include "ops.h"
#include "ring.pb-c.h"

#define RESOLVE_MAX_ADDRS 16

struct resolve;

/* node: this agent's name, kept (not copied). */
struct resolve *resolve_new(struct event_base *base, const char *node,
			    ops_send_fn send, void *arg);
/* 1 if env is a ResolveRequest (answered now when refused, else when the
 * lookup ends), 0 if not. */
int resolve_handle(struct resolve *r, const Ring__Envelope *env);
/* The session ended: a lookup in flight is answered to nobody. */
void resolve_cancel(struct resolve *r);
/* Waits for a lookup in flight (the resolver's own timeouts bound it). */
void resolve_free(struct resolve *r);

#endif
