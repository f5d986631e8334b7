/* The alert_receiver_webhook sink: the JSON that Alertmanager sends its
 * receivers (version 4, one alert per POST) for tools that consume
 * Alertmanager's notifications (Alertmanager's own API is
 * alertmanager.c's). A 2xx is delivered; a 4xx other than 408 and 429 is
 * not retried (the reply's start logged); other failures are retried up
 * to webhook_retries times, the backoff doubling from webhook_backoff_ms
 * to at most 60 s, behind the alerts that wait, so one failing alert does
 * not hold the others; only an alert's latest state waits (a newer one
 * replaces it). Takes the table's transitions (not its "watchdog") and
 * the Watchdog alert. */
#ifndef RING_SINK_WEBHOOK_H
#define RING_SINK_WEBHOOK_H

#include "sink.h"
#include "sinks.h"

/* conf->webhook_url (not empty). NULL (logged, errno EINVAL) when
 * cfg_split_http_url() refuses it, ENOMEM without memory or a
 * resolver. */
struct sink *sink_webhook_new(struct event_base *base,
			      const struct sinks_conf *conf,
			      struct sink_counts *counts);

#endif
