/* The live feed behind `ringctl watch`: what the coordinator sees, as it
 * happens (nodes up and down, edges' live states, the ring's class and
 * rank order, alerts, the health, surveys, measurements), as WatchEvents to a bounded
 * set of subscribers. Each event is packed once and appended to every
 * subscriber's output; a subscriber that does not read loses events (it
 * is told how many once it catches up) and is dropped if it stays behind,
 * so a watcher never costs more than a bounded buffer and never blocks the
 * loop. */
#ifndef RING_FEED_H
#define RING_FEED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "alerts.h"
#include "nodes.h"
#include "ring.pb-c.h"
#include "survey.h"

/* Watchers at most; the group may take all but FEED_ROOT_RESERVE of them,
 * each user FEED_MAX_PER_UID (root: no per-user cap). */
#define FEED_MAX_WATCHERS 16
#define FEED_ROOT_RESERVE 4
#define FEED_MAX_PER_UID 4
/* A subscriber's unread output past HIGH: events are counted, not queued,
 * until it drains below LOW (then a `lost` event says how many); behind
 * for FEED_STALL_MS in a row, it is dropped. */
#define FEED_OUT_HIGH (256u << 10)
#define FEED_OUT_LOW (64u << 10)
#define FEED_STALL_MS 60000
/* While anyone watches, a `keepalive` event this often to every watcher
 * (whatever kinds it chose): a watcher that hears nothing for three of
 * them knows its coordinator is stuck, not quiet. */
#define FEED_KEEPALIVE_MS 15000

/* Kinds a watcher may choose (WatchRequest.kinds); snapshot, lost and
 * shutdown always come. */
enum feed_kind {
	FEED_NODE = 1u << 0,
	FEED_EDGE = 1u << 1,
	FEED_TOPOLOGY = 1u << 2,
	FEED_ALERT = 1u << 3,
	FEED_SURVEY = 1u << 4,
	FEED_MEASUREMENT = 1u << 5,
	FEED_HEALTH = 1u << 6,
	FEED_ALWAYS = 1u << 7, /* snapshot, lost, shutdown */
};
#define FEED_ALL 0xffu

struct feed;
struct feed_sub;

struct feed *feed_new(struct event_base *base);

/* Issue 24: names the ring an event is about into ring ("" the site's);
 * every event carries it (WatchEvent.ring), and a watcher of one ring
 * gets that ring's events and the site's. */
typedef void (*feed_ring_fn)(const Ring__WatchEvent *ev, char *ring, size_t len,
			     void *arg);
void feed_set_ring_fn(struct feed *f, feed_ring_fn fn, void *arg);
/* Subscribers still there are dropped without a word (control_free has
 * closed their connections first). */
void feed_free(struct feed *f);

/* The names into a mask (none: FEED_ALL). 0, or -1 with why. */
int feed_kinds_parse(char *const *names, size_t n, unsigned *mask, char *why,
		     size_t whylen);

/* The subscriber gone by the feed's decision (it stayed behind); why is
 * for the log. The callee must call feed_unsubscribe. */
typedef void (*feed_gone_fn)(struct feed_sub *s, const char *why, void *arg);

/* A new watcher writing into out (a connection's output buffer; it must
 * outlive the subscription) with frames carrying request_id; its first
 * event, a snapshot of t (NULL: no survey yet) and health, is queued at
 * once. NULL with why when the bounds refuse uid (errno EUSERS) or memory
 * runs out (ENOMEM). */
/* Only ring's events (and the site's) from now on; "" or NULL: all. */
void feed_sub_set_ring(struct feed_sub *s, const char *ring);
struct feed_sub *feed_subscribe(struct feed *f, struct evbuffer *out,
				uint64_t request_id, uid_t uid, unsigned kinds,
				const Ring__Topology *t, const char *health,
				feed_gone_fn gone, void *arg, char *why,
				size_t whylen);
void feed_unsubscribe(struct feed_sub *s);
unsigned feed_watchers(const struct feed *f);

/* Queue ev (its ts_ms set here when 0) for every subscriber that wants its
 * kind: packed once. */
void feed_publish(struct feed *f, const Ring__WatchEvent *ev);
/* Events packed so far, and events left out for subscribers that were
 * behind (tests, logs). */
uint64_t feed_packed(const struct feed *f);
uint64_t feed_dropped(const struct feed *f);

/* The sources. Each keeps what it last saw and publishes the difference
 * (the first call only records: the snapshot gives the context). */
/* The live view after an evaluation (health_rules_set_eval_cb): edges' live
 * states, the class, the rank order's validity. */
void feed_topology(struct feed *f, const Ring__Topology *t);
/* A survey published t: one measurement event per edge. */
void feed_published(struct feed *f, const Ring__Topology *t);
/* The node table changed: nodes up, down, new, forgotten. */
void feed_nodes(struct feed *f, struct nodes *table);
void feed_alert(struct feed *f, const struct alert *a, enum alert_event ev);
void feed_survey(struct feed *f, enum survey_event ev, const char *what,
		 const char *reason, const char *failure);
/* The one health (health.h) changed: its word (state), the one before
 * ("" the first time), its cause (the deciding rule, or the state's own
 * name), whether what decides it is clearing (within its hold-down), and
 * its text. The caller says when it changed (coord.c: word, cause or
 * clearing); a clearing alert has no event of its own. */
void feed_health(struct feed *f, const char *state, const char *previous,
		 const char *cause, int clearing, const char *text);
/* A keepalive to every watcher (the feed's timer calls it). */
void feed_keepalive(struct feed *f);
/* The coordinator stops: a last event to every watcher. */
void feed_shutdown(struct feed *f);

#endif
