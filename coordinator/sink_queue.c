/* What the sinks share (sink.h): the item, the bounded queue, the words. */
#include "sink.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

const char *sink_event_name(enum alert_event ev)
{
	return ev == ALERT_EV_FIRED	 ? "fired"
	       : ev == ALERT_EV_RESOLVED ? "resolved"
					 : "changed";
}

const char *sink_state(const struct sink_item *it)
{
	if (it->report[0])
		return it->report;
	return it->ev == ALERT_EV_RESOLVED ? "resolved" : "firing";
}

const char *sink_text(const struct alert *a, enum alert_event ev)
{
	return ev == ALERT_EV_RESOLVED && *a->resolved_message
		       ? a->resolved_message
		       : a->message;
}

uint64_t sink_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t sink_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void sink_tv(struct timeval *tv, uint64_t ms)
{
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)(ms % 1000) * 1000;
}

void sink_event_free(struct event **ev)
{
	if (*ev)
		event_free(*ev);
	*ev = NULL;
}

struct sink_item *sink_item_copy(const struct sink_item *it)
{
	struct sink_item *c = malloc(sizeof(*c));

	if (!c) {
		log_warn("alert %s %s: not sent", it->a.rule, it->a.subject);
		return NULL;
	}
	*c = *it;
	memset(&c->link, 0, sizeof(c->link));
	return c;
}

void sink_queue_init(struct sink_queue *q, const char *name, size_t max)
{
	q->name = name;
	TAILQ_INIT(&q->items);
	q->n = 0;
	q->max = max ? max : 1;
	q->burst = 0;
}

void sink_queue_put(struct sink_queue *q, struct sink_item *it,
		    struct sink_counts *counts)
{
	if (q->n >= q->max) {
		struct sink_item *old = TAILQ_FIRST(&q->items);

		TAILQ_REMOVE(&q->items, old, link);
		q->n--;
		free(old);
		counts->dropped++;
		/* Once per burst: a stuck sink must not flood the log. */
		if (!q->burst++)
			log_warnx("%s: %zu alerts wait already: dropping the "
				  "oldest ones",
				  q->name, q->max);
	}
	TAILQ_INSERT_TAIL(&q->items, it, link);
	q->n++;
}

void sink_queue_remove(struct sink_queue *q, struct sink_item *it)
{
	TAILQ_REMOVE(&q->items, it, link);
	if (!--q->n && q->burst) {
		log_warnx("%s: %llu alerts were dropped while its "
			  "queue was full",
			  q->name, (unsigned long long)q->burst);
		q->burst = 0;
	}
}

struct sink_item *sink_queue_take(struct sink_queue *q)
{
	struct sink_item *it = TAILQ_FIRST(&q->items);

	if (it)
		sink_queue_remove(q, it);
	return it;
}

void sink_queue_clear(struct sink_queue *q)
{
	struct sink_item *it;

	while ((it = TAILQ_FIRST(&q->items))) {
		TAILQ_REMOVE(&q->items, it, link);
		free(it);
	}
	q->n = 0;
}

int sink_queue_has_watchdog(const struct sink_queue *q)
{
	const struct sink_item *it;

	TAILQ_FOREACH(it, &q->items, link)
	if (it->watchdog)
		return 1;
	return 0;
}

int sink_queue_has_key(const struct sink_queue *q, const struct sink_item *it)
{
	const struct sink_item *o;

	TAILQ_FOREACH(o, &q->items, link)
	if (!strcmp(o->a.rule, it->a.rule) &&
	    !strcmp(o->a.subject, it->a.subject))
		return 1;
	return 0;
}
