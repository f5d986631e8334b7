/* ringctl's host-name lookup on every node (ResolveRequest): one call per
 * node that is up, gathered into one ResolveReply; a node that is down,
 * refuses or does not answer in time gets an error entry of its own. */
#ifndef RING_RESOLVE_FANOUT_H
#define RING_RESOLVE_FANOUT_H

#include <event2/event.h>

#include "call.h"
#include "nodes.h"
#include "ring.pb-c.h"

/* The agents' own resolver timeouts are seconds; ours is the bound. */
#define RESOLVE_FANOUT_TIMEOUT_MS 10000
#define RESOLVE_FANOUT_MAX_ADDRS 16

struct resolve_fanout;

/* rep is valid during the call only; the fan-out is freed after it. */
typedef void (*resolve_fanout_cb)(const Ring__ResolveReply *rep, void *arg);

/* Ask the n nodes (sorted: the reply keeps their order) to resolve name
 * (checked by the caller) for root or not (for_root: the requester the
 * agents count it under). NULL on out of memory; otherwise cb runs once,
 * always from the loop, never inside this call. */
struct resolve_fanout *
resolve_fanout_start(struct event_base *base, const struct call_iface *ci,
		     struct node *const *nodes, unsigned n, const char *name,
		     int for_root, resolve_fanout_cb cb, void *arg);
/* Forget it: cb never runs. */
void resolve_fanout_cancel(struct resolve_fanout *f);

#endif
