/* Where alerts go: journald (structured fields RING_ALERT, RING_SEVERITY,
 * RING_STATE, RING_SUBJECT, RING_EDGE, RING_NODE; one log_info line when
 * not under systemd), an alert_command run without a shell (the alert in
 * environment variables and as JSON on its stdin, killed after a timeout),
 * and alert_receiver_webhook: the JSON that Alertmanager sends to its
 * receivers (version 4, one alert per POST) for tools that consume
 * Alertmanager's notifications (Alertmanager itself is alertmanager.c's).
 * No sink blocks the event loop; the queue of what waits for one is
 * bounded. The webhook: a 4xx other than 408 and 429 is not retried (the
 * reply's start logged); other failures are retried with backoff behind
 * the alerts that wait, so one failing alert does not hold the others;
 * only an alert's latest state waits (a newer one replaces it). The
 * "watchdog" alert of the table goes to the command and the webhook only
 * on watchdog_interval, from here.
 *
 * alert_command: argv[0] is executed directly, in its own process group,
 * with only PATH=/usr/bin:/bin and RING_ALERT, RING_EVENT (fired, resolved,
 * changed), RING_STATE, RING_SEVERITY, RING_SUBJECT, RING_NODE, RING_EDGE,
 * RING_MESSAGE (escaped to one line as the log prints it), RING_FIRST_SEEN,
 * RING_RESOLVED (RFC 3339 UTC, "" while firing) and RING_COORDINATOR; on
 * stdin one JSON object and a newline; stdout and stderr are read, the
 * first 256 bytes logged when it fails. One runs at a time; exit status 0
 * is delivered, anything else (or the timeout: SIGKILL to the group) is
 * failed and not retried. SIGPIPE needs no handling by the caller. */
#ifndef RING_SINKS_H
#define RING_SINKS_H

#include <event2/event.h>
#include <stdint.h>

#include "alerts.h"

struct sinks_conf {
	/* sinks_new copies what it keeps of these strings. */
	const char *coordinator; /* this coordinator's name (labels) */
	/* alert_command PATH [ARG...]: argv[0] absolute; NULL: none */
	char *const *command_argv;
	uint64_t command_timeout_ms;
	/* alert_receiver_webhook http://HOST[:PORT]/PATH (cfg_split_http_url() has
	 * checked it); "" or NULL: none */
	const char *webhook_url;
	uint64_t webhook_timeout_ms;
	unsigned webhook_retries;      /* attempts after the first */
	uint64_t webhook_backoff_ms;   /* first retry; doubles each time */
	size_t queue_max;	       /* alerts waiting per sink, at most
					  (besides the one being delivered;
					  0 counts as 1) */
	uint64_t watchdog_interval_ms; /* Watchdog alert to the webhook and
					  command this often; 0 = off */
};

struct sinks;

/* NULL (logged, errno set) on a relative alert_command, a webhook URL
 * that cfg_split_http_url() refuses, or no memory. */
struct sinks *sinks_new(struct event_base *base, const struct sinks_conf *conf);
void sinks_free(struct sinks *s);

/* Hand one transition to every sink (copies what it needs). */
void sinks_alert(struct sinks *s, const struct alert *a, enum alert_event ev);

/* The periodic health report (health: its word, text: its line) to the
 * alert_command, as RING_EVENT=report, RING_ALERT=health_report; nothing
 * without a command. */
void sinks_report(struct sinks *s, const char *health, const char *text);

/* For tests and `ringctl status`, both sinks together: delivered, webhook
 * attempts retried, dropped from a full queue (oldest first), failed for
 * good, and the alerts queued or being delivered. */
struct sinks_stats {
	uint64_t delivered, retried, dropped, failed;
	size_t queued;
};
void sinks_stats(const struct sinks *s, struct sinks_stats *out);

#endif
