/* The re-check queue and its timer (recheck_queue.h). */
#include "recheck_queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"

struct recheck_queue {
	struct recheck_item *v;
	unsigned n;
	struct event *ev;
	void (*due)(void *arg);
	void *arg;
};

static void recheck_queue_cb(evutil_socket_t fd, short what, void *arg)
{
	struct recheck_queue *q = arg;

	(void)fd;
	(void)what;
	q->due(q->arg);
}

struct recheck_queue *recheck_queue_new(struct event_base *base,
					void (*due)(void *arg), void *arg)
{
	struct recheck_queue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->due = due;
	q->arg = arg;
	q->ev = evtimer_new(base, recheck_queue_cb, q);
	if (!q->ev) {
		free(q);
		return NULL;
	}
	return q;
}

void recheck_queue_free(struct recheck_queue *q)
{
	if (!q)
		return;
	event_free(q->ev);
	free(q->v);
	free(q);
}

void recheck_queue_arm(struct recheck_queue *q, uint64_t min_ms)
{
	uint64_t now = clock_now_ms(), due = UINT64_MAX, ms;
	struct timeval tv;

	for (unsigned i = 0; i < q->n; i++)
		if (q->v[i].due_ms < due)
			due = q->v[i].due_ms;
	if (due == UINT64_MAX) {
		evtimer_del(q->ev);
		return;
	}
	ms = due > now ? due - now : 0;
	if (ms < min_ms)
		ms = min_ms;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(q->ev, &tv);
}

void recheck_queue_add(struct recheck_queue *q, const char *a, const char *a_if,
		       const char *b, const char *b_if, const char *why,
		       uint64_t delay_ms, int light)
{
	uint64_t now = clock_now_ms();
	struct recheck_item *r = NULL, *v;

	for (unsigned i = 0; i < q->n && !r; i++)
		if (!strcmp(q->v[i].a, a) && !strcmp(q->v[i].b, b) &&
		    !strcmp(q->v[i].a_if, a_if) && !strcmp(q->v[i].b_if, b_if))
			r = &q->v[i];
	if (!r) {
		if (q->n >= RECHECK_QUEUE_MAX) {
			log_debug("survey",
				  "re-check queue full: %s-%s not "
				  "queued",
				  a, b);
			return;
		}
		v = realloc(q->v, (q->n + 1) * sizeof(*v));
		if (!v) {
			log_warnx("survey: out of memory queueing a re-check "
				  "of %s-%s",
				  a, b);
			return;
		}
		q->v = v;
		r = &q->v[q->n++];
		memset(r, 0, sizeof(*r));
		snprintf(r->a, sizeof(r->a), "%s", a);
		snprintf(r->a_if, sizeof(r->a_if), "%s", a_if);
		snprintf(r->b, sizeof(r->b), "%s", b);
		snprintf(r->b_if, sizeof(r->b_if), "%s", b_if);
		r->queued_ms = now;
		r->light = light;
	} else if (light) {
		return; /* a re-check of it is queued: more than a light one */
	}
	/* Each change restarts the wait: a flapping cable is measured once
	 * it has been quiet for the settle time. */
	snprintf(r->why, sizeof(r->why), "%s", why);
	r->due_ms = now + delay_ms;
	r->light = light;
	log_debug("survey", "re-check of %s-%s (%s) in %llu ms", a, b, why,
		  (unsigned long long)delay_ms);
	recheck_queue_arm(q, 0);
}

int recheck_queue_any_due(const struct recheck_queue *q, uint64_t now_ms)
{
	int due = 0;

	for (unsigned i = 0; i < q->n; i++)
		due |= q->v[i].due_ms <= now_ms;
	return due;
}

struct recheck_item *recheck_queue_items(struct recheck_queue *q, unsigned *n)
{
	*n = q->n;
	return q->v;
}

void recheck_queue_truncate(struct recheck_queue *q, unsigned n)
{
	if (n < q->n)
		q->n = n;
}

void recheck_queue_forget_measured(struct recheck_queue *q, uint64_t ms,
				   int (*measured)(const char *a, const char *b,
						   void *arg),
				   void *arg)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < q->n; i++)
		if (q->v[i].queued_ms >= ms ||
		    !measured(q->v[i].a, q->v[i].b, arg))
			q->v[kept++] = q->v[i];
	q->n = kept;
}

void recheck_queue_forget_before(struct recheck_queue *q, uint64_t ms)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < q->n; i++)
		if (q->v[i].queued_ms >= ms)
			q->v[kept++] = q->v[i];
	q->n = kept;
}
