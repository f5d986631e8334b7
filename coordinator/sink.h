/* The interface behind which each of sinks.c's destinations sits
 * (sink_journal.c, sink_command.c, sink_webhook.c), and what they share:
 * the item handed to a sink (one alert transition, a Watchdog alert or a
 * health report), the bounded queue of items that wait for one sink
 * (oldest dropped first when full, once-per-burst logging), the delivery
 * counters, and the words every sink says (event, state, text). A sink
 * copies what it keeps of an item; none blocks the event loop. */
#ifndef RING_SINK_H
#define RING_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/time.h>

#include <event2/event.h>

#include "alerts.h"

struct sink_item {
	TAILQ_ENTRY(sink_item) link;
	struct alert a;
	enum alert_event ev;
	int watchdog;		/* the Watchdog alert of watchdog_interval */
	char report[16];	/* a health report: the health word; "" else */
	unsigned attempts;	/* webhook: sent this many times */
	uint64_t not_before_ms; /* webhook: its backoff ends (monotonic) */
};
TAILQ_HEAD(sink_list, sink_item);

/* Counted across the sinks (sinks_stats). */
struct sink_counts {
	uint64_t delivered, retried, dropped, failed;
};

/* What waits for one sink, oldest first. */
struct sink_queue {
	const char *name;
	struct sink_list items;
	size_t n, max;
	uint64_t burst; /* dropped since the queue was last empty */
};

/* What a sink takes (sinks.c hands it only these). */
enum {
	SINK_TABLE = 1,		 /* the table's transitions, not "watchdog" */
	SINK_TABLE_WATCHDOG = 2, /* the table's "watchdog" rule too */
	SINK_WATCHDOG = 4,	 /* the Watchdog alert on its interval */
	SINK_REPORT = 8,	 /* the periodic health report */
};

struct sink;
struct sink_ops {
	/* One item handed over; the sink copies what it keeps. */
	void (*take)(struct sink *k, const struct sink_item *it);
	/* Items waiting or being delivered. */
	size_t (*queued)(const struct sink *k);
	/* Everything let go: a delivery in progress abandoned. */
	void (*free)(struct sink *k);
};

/* The first member of each sink's own state. */
struct sink {
	const struct sink_ops *ops;
	unsigned wants; /* SINK_* */
};

/* The queue (max 0 counts as 1: else every alert that arrives while one
 * is delivered would be dropped). */
void sink_queue_init(struct sink_queue *q, const char *name, size_t max);
/* it at the tail; a full queue drops its oldest (counted in dropped). */
void sink_queue_put(struct sink_queue *q, struct sink_item *it,
		    struct sink_counts *counts);
/* The oldest, or NULL; an emptied queue says what a burst dropped. */
struct sink_item *sink_queue_take(struct sink_queue *q);
/* it out of the queue wherever it is (same logging as take). */
void sink_queue_remove(struct sink_queue *q, struct sink_item *it);
void sink_queue_clear(struct sink_queue *q);
/* A Watchdog alert waiting already (it says all the next one would). */
int sink_queue_has_watchdog(const struct sink_queue *q);
/* An item of it's alert (rule, subject) waiting. */
int sink_queue_has_key(const struct sink_queue *q, const struct sink_item *it);
/* A heap copy of it (unlinked), or NULL (logged: not sent). */
struct sink_item *sink_item_copy(const struct sink_item *it);

/* "fired", "resolved", "changed". */
const char *sink_event_name(enum alert_event ev);
/* "firing", "resolved", or a report's health word. */
const char *sink_state(const struct sink_item *it);
/* What a notification says: a resolution says what cleared and after how
 * long (resolved_message), never the firing text again. */
const char *sink_text(const struct alert *a, enum alert_event ev);
uint64_t sink_now_ms(void);  /* wall clock */
uint64_t sink_mono_ms(void); /* monotonic */
void sink_tv(struct timeval *tv, uint64_t ms);
/* event_free and NULL, if set. */
void sink_event_free(struct event **ev);

#endif
