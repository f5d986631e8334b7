/* Alerts pushed to Prometheus Alertmanager's API as Prometheus pushes them:
 * POST /api/v2/alerts with a JSON array of postable alerts, every firing
 * alert of the table again on each resend interval (with an endsAt a few
 * intervals ahead, so that Alertmanager times them out if we die), and
 * each resolved one (endsAt = its resolution) until that target answered
 * 2xx for it. Each target (an HA pair gets everything at every URL) has
 * its own connection, batches, backoff and owed set: one that fails holds
 * back no other. Nothing here blocks the event loop.
 *
 * The alert as sent: labels alertname (the rule, e.g. cable_down),
 * severity, subject, node and edge where set, coordinator (the name);
 * annotations summary (the message) and description (the message, or
 * the resolved message once resolved); startsAt (first seen), endsAt,
 * generatorURL where one is configured. */
#ifndef RING_ALERTMANAGER_H
#define RING_ALERTMANAGER_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "alerts.h"

#define ALERTMANAGER_MAX_URLS 4

struct alertmanager_conf {
	/* alertmanager_new copies what it keeps of these strings. */
	const char *coordinator; /* the coordinator label */
	/* http://HOST[:PORT][/]: the module appends /api/v2/alerts */
	const char *urls[ALERTMANAGER_MAX_URLS];
	size_t n_urls;
	const char *generator_url; /* generatorURL; NULL or "": none */
	uint64_t resend_ms;	   /* every firing alert again; 0: 60 s */
	uint64_t timeout_ms;	   /* one POST, at most; 0: 10 s */
	uint64_t backoff_ms;	   /* first retry; doubles up to resend_ms;
				      0: 1 s */
	size_t batch_max;	   /* alerts per POST; 0: 64 */
	size_t batch_bytes;	   /* body per POST, at most; 0: 256 KiB */
	size_t owed_max; /* resolved alerts owed per target; 0: 1024 */
};

struct alertmanager;

/* Called (from the loop, not from within alertmanager_alert) when what is
 * owed changed: the caller saves alertmanager_owed_text() somewhere that
 * outlives a restart. */
typedef void (*alertmanager_owed_fn)(void *arg);

/* table: the alerts whose firing ones are resent (read only, on the
 * loop). NULL (logged, errno EINVAL) on a URL that is not http://HOST
 * [:PORT][/], or ENOMEM. */
struct alertmanager *alertmanager_new(struct event_base *base,
				      const struct alertmanager_conf *conf,
				      const struct alerts *table);
void alertmanager_free(struct alertmanager *am);
void alertmanager_set_owed_cb(struct alertmanager *am, alertmanager_owed_fn fn,
			      void *arg);

/* One transition of the table (copies what it needs): pushed to every
 * target soon (the same loop turn's transitions in one POST). */
void alertmanager_alert(struct alertmanager *am, const struct alert *a,
			enum alert_event ev);

/* The owed resolutions, one line per target and alert (text, no NUL);
 * *buf malloc'ed (caller frees). 0 or -1 (ENOMEM). */
int alertmanager_owed_text(const struct alertmanager *am, char **buf,
			   size_t *len);
/* Put back what alertmanager_owed_text() gave before a restart: lines of
 * targets no longer configured and lines that do not parse are dropped
 * (counted in the return). Returns the lines dropped, or -1 (ENOMEM). */
int alertmanager_owed_load(struct alertmanager *am, const char *buf,
			   size_t len);

/* For tests and the log, all targets together: alerts in 2xx-answered
 * POSTs, POSTs answered 2xx, POSTs refused for good (4xx: not retried),
 * attempts that failed and will be retried, resolutions dropped from a
 * full owed set or refused, resolutions owed now, POSTs in flight. */
struct alertmanager_stats {
	uint64_t alerts_sent, posts_ok, posts_refused, retried, dropped;
	size_t owed, in_flight;
};
void alertmanager_stats(const struct alertmanager *am,
			struct alertmanager_stats *out);

#endif
