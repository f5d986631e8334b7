/* The agent's host-name lookups for the coordinator (ResolveRequest): the
 * system resolver (getaddrinfo: /etc/hosts, nsswitch, DNS) as a launcher
 * on this node would use it. getaddrinfo blocks, so each runs in a worker
 * thread. Lookups for root (the request's requester, set by the
 * coordinator) and for everyone else have slots of their own, so the
 * control group's lookups, however slow, never make root's busy; beyond
 * its class's slots a lookup is refused as busy at once (no queue). */
#ifndef RING_RESOLVE_H
#define RING_RESOLVE_H

#include <stddef.h>

#include <event2/event.h>

#include "ops.h"
#include "ring.pb-c.h"

#define RESOLVE_MAX_ADDRS 16
/* Lookups running at once, per requester class: at most 3 threads, each
 * ended by the resolver's own timeouts. */
#define RESOLVE_SLOTS_ROOT 2
#define RESOLVE_SLOTS_OTHER 1

struct resolve;

/* node: this agent's name, kept (not copied). */
struct resolve *resolve_new(struct event_base *base, const char *node,
			    ops_send_fn send, void *arg);
/* 1 if env is a ResolveRequest (answered now when refused, else when the
 * lookup ends), 0 if not. */
int resolve_handle(struct resolve *r, const Ring__Envelope *env);
/* The session ended: a lookup in flight is answered to nobody. */
void resolve_cancel(struct resolve *r);
/* Waits for the lookups in flight (the resolver's own timeouts bound
 * them). */
void resolve_free(struct resolve *r);

#endif
