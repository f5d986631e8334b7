/* RDMA async events: one verbs context per RDMA device the agent reports,
 * its async event channel in the event loop. Port state, GID, LID and
 * P_Key changes are logged and reported through a callback (the agent
 * rescans its inventory), so the coordinator hears of them at once
 * instead of at the next periodic scan. No polling: the loop sleeps on the
 * channels. */
#ifndef RING_RDMA_EVENTS_H
#define RING_RDMA_EVENTS_H

#include <stddef.h>

#include <event2/event.h>

#include "ring.pb-c.h"

/* At most this many devices are watched; the rest wait for the next
 * periodic scan. */
#define RDMA_EVENTS_MAX_DEVICES 64

typedef void (*rdma_events_fn)(void *arg);

struct rdma_events;

/* changed(arg) runs after a batch of events from one device (and when a
 * device is lost). NULL on allocation failure. */
struct rdma_events *rdma_events_new(struct event_base *base,
				    rdma_events_fn changed, void *arg);
/* Watch exactly the devices inv reports (inv NULL: none): open the new
 * ones, close those gone. A device that cannot be opened is logged once
 * (again only after it has left the inventory and come back). Returns
 * the number watched. */
size_t rdma_events_sync(struct rdma_events *re, const Ring__Inventory *inv);
/* 1 when the device is watched (for tests and logs). */
int rdma_events_watching(const struct rdma_events *re, const char *name);
void rdma_events_free(struct rdma_events *re);

#endif
