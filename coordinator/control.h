/* The ringctl control socket: a Unix stream socket (mode 0660, group from
 * the config) speaking the same framing. Read-only requests are open to
 * whoever can connect; requests that change state need uid 0 (SO_PEERCRED). */
#ifndef RING_CONTROL_H
#define RING_CONTROL_H

#include <event2/event.h>

#include "alerts.h"
#include "health_view.h"
#include "coord_conf.h"
#include "nodes.h"
#include "store.h"
#include "store_keeper.h"
#include "survey.h"

struct health;
struct control;

/* Serves the node table and the survey to ringctl. */
struct control *control_new(struct event_base *base,
			    const struct coord_conf *conf, struct nodes *nodes,
			    struct survey *survey);
void control_free(struct control *ctl);

/* What status, ranks, alerts and history show beyond the node table:
 * the topology with its live overlay, the health, the alerts (coord.c
 * fills it from the watch and the alert table), the measured figures a
 * page at a time, the store's state. Without a view: the survey's
 * topology, no health (ringctl then judges from node states), no alerts,
 * no history. */
struct control_view {
	const Ring__Topology *(*topology)(void *arg);
	/* health.h: the one health (fills out). */
	void (*health)(void *arg, struct health *out);
	/* Issue 24: one ring's health, and t's rings with theirs filled
	 * (health_view.h's contracts). */
	void (*ring_health)(void *arg, const Ring__Topology *t,
			    const Ring__RingView *r, struct health *out);
	int (*rings)(void *arg, const Ring__Topology *t,
		     struct health_view_rings *out);
	size_t (*alerts)(void *arg, int all, const struct alert **out,
			 size_t max);
	/* One page, newest first (store_history_page's contract). */
	int (*history)(void *arg, const char *edge, uint64_t since_ms,
		       uint64_t before_ms, uint64_t before_id, size_t max,
		       int (*fn)(const struct store_sample *v, void *fnarg),
		       void *fnarg);
	/* The state store's state for status; without it none is shown. */
	void (*store)(void *arg, struct store_keeper_info *out);
	/* The resolved episodes (store_episodes_query's contract); without
	 * it, `alerts --all` shows the resolved ones the table keeps. */
	int (*episodes)(void *arg, uint64_t since_ms, size_t max,
			int (*fn)(const struct alert *a, void *fnarg),
			void *fnarg);
	void *arg;
};
void control_set_view(struct control *ctl, const struct control_view *view);

/* The store that keeps the last all-reduce per number of ranks across
 * restarts (arlast.h), through its keeper: what it holds is loaded now (a
 * corrupt or oversized entry is refused with a log line) and each
 * successful run is saved. Without one they live in memory only. The
 * number loaded, or -1 (logged; the coordinator goes on without them). */
int control_set_store(struct control *ctl, struct store_keeper *k);

/* Where WatchRequest subscribes (feed.h); without one it is refused. */
struct feed;
void control_set_feed(struct control *ctl, struct feed *feed);

#endif
