/* Where alerts go (sinks.h): the dispatch of each transition, Watchdog
 * alert and health report to the sinks that take it, each behind the
 * sink interface (sink.h): journald (sink_journal.c), alert_command
 * (sink_command.c), alert_receiver_webhook (sink_webhook.c). */
#include "sinks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sink.h"
#include "sink_command.h"
#include "sink_journal.h"
#include "sink_webhook.h"

/* journald, the command, the webhook: in this order. */
#define SINKS_MAX 3

struct sinks {
	char coordinator[64];
	struct sink *sink[SINKS_MAX];
	size_t n;
	unsigned wants; /* what any of them takes (SINK_*) */
	struct event *watchdog_ev;
	uint64_t started_ms;
	struct sink_counts counts;
};

/* it to every sink that takes what it is. */
static void sinks_dispatch(struct sinks *s, const struct sink_item *it,
			   unsigned kind)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->sink[i]->wants & kind)
			s->sink[i]->ops->take(s->sink[i], it);
}

/* The Watchdog convention: an alert that always fires while we run, so a
 * receiver notices when it stops arriving. */
static void sinks_watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sinks *s = arg;
	struct sink_item it;
	struct alert *a = &it.a;

	(void)fd;
	(void)what;
	memset(&it, 0, sizeof(it));
	snprintf(a->rule, sizeof(a->rule), "watchdog");
	snprintf(a->subject, sizeof(a->subject), "%s", s->coordinator);
	a->severity = ALERT_INFO;
	a->firing = 1;
	snprintf(a->message, sizeof(a->message),
		 "ring-coordinator %s is running: this alert always fires, "
		 "so that its absence says the monitor is down",
		 s->coordinator);
	a->first_seen_ms = s->started_ms;
	a->last_seen_ms = sink_now_ms();
	it.ev = ALERT_EV_FIRED;
	it.watchdog = 1;
	sinks_dispatch(s, &it, SINK_WATCHDOG);
}

void sinks_report(struct sinks *s, const char *health, const char *text)
{
	struct sink_item it;
	struct alert *a = &it.a;

	if (!s || !(s->wants & SINK_REPORT))
		return;
	memset(&it, 0, sizeof(it));
	snprintf(a->rule, sizeof(a->rule), "health_report");
	snprintf(a->subject, sizeof(a->subject), "%s", s->coordinator);
	snprintf(a->message, sizeof(a->message), "%s", text);
	a->severity = ALERT_INFO;
	a->firing = 1;
	a->first_seen_ms = a->last_seen_ms = sink_now_ms();
	it.ev = ALERT_EV_FIRED;
	snprintf(it.report, sizeof(it.report), "%s", health);
	sinks_dispatch(s, &it, SINK_REPORT);
}

static int sinks_add(struct sinks *s, struct sink *k)
{
	if (!k)
		return -1;
	s->sink[s->n++] = k;
	s->wants |= k->wants;
	return 0;
}

struct sinks *sinks_new(struct event_base *base, const struct sinks_conf *conf)
{
	struct sinks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->started_ms = sink_now_ms();
	snprintf(s->coordinator, sizeof(s->coordinator), "%s",
		 conf->coordinator ? conf->coordinator : "");
	sinks_add(s, sink_journal());
	if (conf->command_argv && conf->command_argv[0] &&
	    sinks_add(s, sink_command_new(base, conf, &s->counts)) < 0)
		goto fail;
	if (conf->webhook_url && *conf->webhook_url &&
	    sinks_add(s, sink_webhook_new(base, conf, &s->counts)) < 0)
		goto fail;
	if (conf->watchdog_interval_ms && (s->wants & SINK_WATCHDOG)) {
		struct timeval tv;

		sink_tv(&tv, conf->watchdog_interval_ms);
		s->watchdog_ev =
			event_new(base, -1, EV_PERSIST, sinks_watchdog_cb, s);
		if (!s->watchdog_ev || event_add(s->watchdog_ev, &tv) < 0)
			goto fail;
	}
	return s;
fail:
	sinks_free(s);
	return NULL;
}

void sinks_free(struct sinks *s)
{
	int saved = errno;

	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		s->sink[i]->ops->free(s->sink[i]);
	sink_event_free(&s->watchdog_ev);
	free(s);
	errno = saved;
}

void sinks_alert(struct sinks *s, const struct alert *a, enum alert_event ev)
{
	struct sink_item it;

	memset(&it, 0, sizeof(it));
	it.a = *a;
	it.ev = ev;
	/* The watchdog alert of the table: the command and the webhook get
	 * it from sinks_watchdog_cb, on its interval. */
	sinks_dispatch(s, &it,
		       strcmp(a->rule, "watchdog") ? SINK_TABLE
						   : SINK_TABLE_WATCHDOG);
}

void sinks_stats(const struct sinks *s, struct sinks_stats *out)
{
	out->delivered = s->counts.delivered;
	out->retried = s->counts.retried;
	out->dropped = s->counts.dropped;
	out->failed = s->counts.failed;
	out->queued = 0;
	for (size_t i = 0; i < s->n; i++)
		out->queued += s->sink[i]->ops->queued(s->sink[i]);
}
