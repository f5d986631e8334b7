/* The alert_receiver_webhook sink (sink_webhook.h): one POST at a time
 * over evhttp (names through evdns: never a blocking lookup on the loop),
 * a deadline per attempt, backoff behind the alerts that wait. */
#include "sink_webhook.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "alert_text.h"
#include "cfg.h"
#include "json_text.h"
#include "log.h"

#define SINK_WEBHOOK_OUT_MAX 256 /* the reply's start, for the log */
#define SINK_WEBHOOK_BACKOFF_CAP_MS 60000ULL /* retry delay, at most */
#define SINK_WEBHOOK_REPLY_MAX (64 * 1024)   /* reply body, at most */
#define SINK_WEBHOOK_TIMEOUT_MS 5000ULL	     /* webhook_timeout_ms 0 */

struct sink_webhook {
	struct sink sink; /* first: the interface */
	struct event_base *base;
	char coordinator[64];
	uint64_t timeout_ms;
	unsigned retries;    /* attempts after the first */
	uint64_t backoff_ms; /* first retry; doubles each time */
	struct sink_counts *counts;
	struct sink_queue q;
	struct sink_item *cur;
	char host[256];
	char hostport[270]; /* the Host header: [v6]:port */
	char path[1024];
	uint16_t port;
	struct evdns_base *dns; /* NULL when the host is an address */
	struct evhttp_connection *conn;
	struct event *timeout_ev; /* this attempt's webhook_timeout */
	struct event *done_ev;	  /* the reply handled outside libevent's
				     callback, where conn may be freed */
	struct event *retry_ev;	  /* backoff */
	int code;		  /* HTTP status, 0: no reply, -1: timeout */
	int answered;		  /* the reply callback ran */
	char reply[SINK_WEBHOOK_OUT_MAX + 1]; /* the reply body's start */
};

static void sink_webhook_next(struct sink_webhook *s);

/* 64-bit FNV-1a of rule and subject: the same alert, the same id. */
static void sink_webhook_fingerprint(const struct alert *a, char *buf,
				     size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *parts[2] = {a->rule, a->subject};

	for (int p = 0; p < 2; p++)
		for (const unsigned char *c = (const unsigned char *)parts[p];;
		     c++) {
			h = (h ^ *c) * 0x100000001b3ULL;
			if (!*c)
				break;
		}
	snprintf(buf, len, "%016llx", (unsigned long long)h);
}

static void sink_webhook_labels(const struct sink_webhook *s,
				const struct alert *a, struct evbuffer *b)
{
	evbuffer_add(b, "{", 1);
	json_text_kv(b, 1, "alertname", a->rule);
	json_text_kv(b, 0, "severity", alert_text_severity(a->severity));
	if (*a->node)
		json_text_kv(b, 0, "node", a->node);
	if (*a->edge)
		json_text_kv(b, 0, "edge", a->edge);
	if (*a->ring)
		json_text_kv(b, 0, "ring", a->ring);
	json_text_kv(b, 0, "subject", a->subject);
	json_text_kv(b, 0, "coordinator", s->coordinator);
	evbuffer_add(b, "}", 1);
}

static void sink_webhook_annotations(const struct alert *a, enum alert_event ev,
				     struct evbuffer *b)
{
	evbuffer_add(b, "{", 1);
	json_text_kv(b, 1, "summary", a->message);
	json_text_kv(b, 0, "description", sink_text(a, ev));
	evbuffer_add(b, "}", 1);
}

/* Alertmanager's webhook payload (version 4) for one alert. */
static void sink_webhook_json(const struct sink_webhook *s,
			      const struct sink_item *it, struct evbuffer *b)
{
	const struct alert *a = &it->a;
	char starts[40], ends[40], fp[20];
	const char *state = sink_state(it);

	json_text_time(starts, sizeof(starts), a->first_seen_ms,
		       "0001-01-01T00:00:00Z");
	json_text_time(ends, sizeof(ends),
		       it->ev == ALERT_EV_RESOLVED ? a->resolved_ms : 0,
		       "0001-01-01T00:00:00Z");
	sink_webhook_fingerprint(a, fp, sizeof(fp));
	evbuffer_add_printf(b, "{\"version\":\"4\",\"groupKey\":");
	{
		char key[ALERTS_RULE_LEN + 32];

		snprintf(key, sizeof(key), "{}:{alertname=\"%s\"}", a->rule);
		json_text_str(b, key);
	}
	evbuffer_add_printf(b, ",\"truncatedAlerts\":0");
	json_text_kv(b, 0, "status", state);
	json_text_kv(b, 0, "receiver", "ringd");
	evbuffer_add_printf(b, ",\"groupLabels\":{");
	json_text_kv(b, 1, "alertname", a->rule);
	evbuffer_add_printf(b, "},\"commonLabels\":");
	sink_webhook_labels(s, a, b);
	evbuffer_add_printf(b, ",\"commonAnnotations\":");
	sink_webhook_annotations(a, it->ev, b);
	evbuffer_add_printf(b, ",\"externalURL\":\"\",\"alerts\":[");
	evbuffer_add(b, "{", 1);
	json_text_kv(b, 1, "status", state);
	evbuffer_add_printf(b, ",\"labels\":");
	sink_webhook_labels(s, a, b);
	evbuffer_add_printf(b, ",\"annotations\":");
	sink_webhook_annotations(a, it->ev, b);
	json_text_kv(b, 0, "startsAt", starts);
	json_text_kv(b, 0, "endsAt", ends);
	json_text_kv(b, 0, "generatorURL", "");
	json_text_kv(b, 0, "fingerprint", fp);
	evbuffer_add_printf(b, "}]}");
}

/* The attempt's connection (and the request it holds) gone; no callback
 * comes for it afterwards. */
static void sink_webhook_drop_conn(struct sink_webhook *h)
{
	if (h->conn)
		evhttp_connection_free(h->conn);
	h->conn = NULL;
	if (h->timeout_ev)
		evtimer_del(h->timeout_ev);
	if (h->done_ev)
		event_del(h->done_ev);
}

static void sink_webhook_reply_cb(struct evhttp_request *req, void *arg)
{
	struct sink_webhook *s = arg;
	struct sink_webhook *h = s;

	h->code = req ? evhttp_request_get_response_code(req) : 0;
	h->reply[0] = '\0';
	if (req) {
		ev_ssize_t n =
			evbuffer_copyout(evhttp_request_get_input_buffer(req),
					 h->reply, SINK_WEBHOOK_OUT_MAX);

		h->reply[n > 0 ? (size_t)n : 0] = '\0';
	}
	h->answered = 1;
	evtimer_del(h->timeout_ev);
	/* libevent still uses the connection after this returns. */
	event_active(h->done_ev, 0, 0);
}

/* One attempt's outcome: delivered, refused for good (4xx: the same
 * alert gets the same answer), or retried after the backoff behind the
 * others (one failing alert does not hold the rest), or failed for good
 * after webhook_retries. */
static void sink_webhook_result(struct sink_webhook *s)
{
	struct sink_webhook *h = s;
	struct sink_item *it = h->cur;
	char why[64], body[LOG_ESC_LEN(SINK_WEBHOOK_OUT_MAX)];
	uint64_t delay = s->backoff_ms;

	sink_webhook_drop_conn(h);
	h->cur = NULL;
	if (h->code >= 200 && h->code < 300) {
		s->counts->delivered++;
		goto next;
	}
	if (h->code >= 400 && h->code < 500 && h->code != 408 &&
	    h->code != 429) {
		log_escape(body, sizeof(body), h->reply);
		log_warnx("alert_receiver_webhook %s:%u%s (%s %s): HTTP "
			  "status %d, not retried: %s",
			  h->host, (unsigned)h->port, h->path, it->a.rule,
			  it->a.subject, h->code, body);
		s->counts->failed++;
		goto next;
	}
	if (h->code > 0)
		snprintf(why, sizeof(why), "HTTP status %d", h->code);
	else if (h->code < 0)
		snprintf(why, sizeof(why), "no reply in time");
	else /* libevent's errno here is that of its cleanup, not why */
		snprintf(why, sizeof(why),
			 "no HTTP reply (refused, reset or closed)");
	if (it->attempts > s->retries) {
		log_warnx("alert_receiver_webhook %s:%u%s (%s %s): %s; given "
			  "up after %u attempts",
			  h->host, (unsigned)h->port, h->path, it->a.rule,
			  it->a.subject, why, it->attempts);
		s->counts->failed++;
		goto next;
	}
	/* A newer state of the same alert waits: it says more than this
	 * one would, and must not be overtaken by it. */
	if (sink_queue_has_key(&h->q, it)) {
		log_warnx("alert_receiver_webhook %s:%u%s (%s %s): %s; a "
			  "newer state of it follows",
			  h->host, (unsigned)h->port, h->path, it->a.rule,
			  it->a.subject, why);
		s->counts->failed++;
		goto next;
	}
	/* Once per alert, not once per attempt. */
	if (it->attempts == 1)
		log_warnx("alert_receiver_webhook %s:%u%s (%s %s): %s; "
			  "retrying up to %u times",
			  h->host, (unsigned)h->port, h->path, it->a.rule,
			  it->a.subject, why, s->retries);
	for (unsigned i = 1;
	     i < it->attempts && delay < SINK_WEBHOOK_BACKOFF_CAP_MS; i++)
		delay *= 2;
	if (delay > SINK_WEBHOOK_BACKOFF_CAP_MS)
		delay = SINK_WEBHOOK_BACKOFF_CAP_MS;
	s->counts->retried++;
	it->not_before_ms = sink_mono_ms() + delay;
	/* Behind what waits: the others go while this one backs off. */
	TAILQ_INSERT_TAIL(&h->q.items, it, link);
	h->q.n++;
	sink_webhook_next(s);
	return;
next:
	free(it);
	sink_webhook_next(s);
}

static void sink_webhook_done_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sink_webhook_result(arg);
}

static void sink_webhook_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sink_webhook *s = arg;

	(void)fd;
	(void)what;
	s->code = -1;
	sink_webhook_result(s);
}

/* Send h->cur once more. Failures to even start count as a failed
 * attempt, handled from the loop. */
static void sink_webhook_attempt(struct sink_webhook *s)
{
	struct sink_webhook *h = s;
	struct evhttp_request *req = NULL;
	struct evkeyvalq *hdr;
	uint64_t timeout_ms = s->timeout_ms;
	struct timeval tv, ev_tv;

	if (!timeout_ms)
		timeout_ms = SINK_WEBHOOK_TIMEOUT_MS; /* every wait has one */
	sink_tv(&tv, timeout_ms);
	h->cur->attempts++;
	h->code = 0;
	h->conn = evhttp_connection_base_new(s->base, h->dns, h->host, h->port);
	if (!h->conn)
		goto fail;
	evhttp_connection_set_max_body_size(h->conn, SINK_WEBHOOK_REPLY_MAX);
	evhttp_connection_set_max_headers_size(h->conn, SINK_WEBHOOK_REPLY_MAX);
	/* Later than ours, which then says what happened. */
	ev_tv.tv_sec = tv.tv_sec + 1;
	ev_tv.tv_usec = tv.tv_usec;
	evhttp_connection_set_timeout_tv(h->conn, &ev_tv);
	req = evhttp_request_new(sink_webhook_reply_cb, s);
	if (!req)
		goto fail;
	hdr = evhttp_request_get_output_headers(req);
	if (evhttp_add_header(hdr, "Host", h->hostport) < 0 ||
	    evhttp_add_header(hdr, "Content-Type", "application/json") < 0 ||
	    evhttp_add_header(hdr, "Connection", "close") < 0)
		goto fail;
	sink_webhook_json(s, h->cur, evhttp_request_get_output_buffer(req));
	evtimer_add(h->timeout_ev, &tv);
	/* A connection refused at once has called sink_webhook_reply_cb
	 * already. On -1 libevent keeps req out of the connection's list
	 * without always freeing it; freeing it here could free it twice. */
	h->answered = 0;
	if (evhttp_make_request(h->conn, req, EVHTTP_REQ_POST, h->path) < 0 &&
	    !h->answered) {
		evtimer_del(h->timeout_ev);
		event_active(h->done_ev, 0, 0);
	}
	return;
fail:
	if (req)
		evhttp_request_free(req);
	log_warn("alert_receiver_webhook %s:%u%s: cannot send", h->host,
		 (unsigned)h->port, h->path);
	event_active(h->done_ev, 0, 0);
}

static void sink_webhook_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sink_webhook_next(arg);
}

/* The oldest alert whose backoff has ended, sent; when all wait for
 * theirs, the timer for the first to end. */
static void sink_webhook_next(struct sink_webhook *s)
{
	struct sink_webhook *h = s;
	uint64_t now = sink_mono_ms(), soonest = UINT64_MAX;
	struct sink_item *it;
	struct timeval tv;

	if (h->cur)
		return;
	evtimer_del(h->retry_ev);
	TAILQ_FOREACH(it, &h->q.items, link)
	{
		if (it->not_before_ms <= now)
			break;
		if (it->not_before_ms < soonest)
			soonest = it->not_before_ms;
	}
	if (!it) {
		if (soonest != UINT64_MAX) {
			sink_tv(&tv, soonest - now);
			evtimer_add(h->retry_ev, &tv);
		}
		return;
	}
	sink_queue_remove(&h->q, it);
	h->cur = it;
	sink_webhook_attempt(s);
}

static int sink_webhook_init(struct sink_webhook *s, const char *url)
{
	struct sink_webhook *h = s;
	char err[128];
	unsigned char addr[16];

	if (cfg_split_http_url(url, h->host, sizeof(h->host), &h->port, h->path,
			       sizeof(h->path), err, sizeof(err)) < 0) {
		log_warnx("alert_receiver_webhook %s: %s", url, err);
		errno = EINVAL;
		return -1;
	}
	if (strchr(h->host, ':'))
		snprintf(h->hostport, sizeof(h->hostport), "[%s]:%u", h->host,
			 (unsigned)h->port);
	else
		snprintf(h->hostport, sizeof(h->hostport), "%s:%u", h->host,
			 (unsigned)h->port);
	/* A name needs the asynchronous resolver: evhttp's fallback is a
	 * blocking getaddrinfo on the loop. */
	if (inet_pton(AF_INET, h->host, addr) != 1 &&
	    inet_pton(AF_INET6, h->host, addr) != 1) {
		h->dns = evdns_base_new(s->base,
					EVDNS_BASE_INITIALIZE_NAMESERVERS);
		if (!h->dns) {
			log_warnx("alert_receiver_webhook %s: no resolver",
				  url);
			errno = ENOMEM;
			return -1;
		}
	}
	h->timeout_ev = evtimer_new(s->base, sink_webhook_timeout_cb, s);
	h->done_ev = event_new(s->base, -1, 0, sink_webhook_done_cb, s);
	h->retry_ev = evtimer_new(s->base, sink_webhook_retry_cb, s);
	if (!h->timeout_ev || !h->done_ev || !h->retry_ev) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* The webhook sends an alert's latest state: one still waiting (maybe
 * backing off) is replaced by the newer one, so no state overtakes a
 * later one of the same alert. */
static void sink_webhook_supersede(struct sink_queue *q,
				   const struct sink_item *it)
{
	struct sink_item *o, *tmp;

	for (o = TAILQ_FIRST(&q->items); o; o = tmp) {
		tmp = TAILQ_NEXT(o, link);
		if (strcmp(o->a.rule, it->a.rule) ||
		    strcmp(o->a.subject, it->a.subject))
			continue;
		TAILQ_REMOVE(&q->items, o, link);
		q->n--;
		free(o);
	}
}

static void sink_webhook_take(struct sink *k, const struct sink_item *it)
{
	struct sink_webhook *s = (struct sink_webhook *)k;
	struct sink_item *c;

	if (it->watchdog && sink_queue_has_watchdog(&s->q))
		return;
	c = sink_item_copy(it);
	if (!c)
		return;
	sink_webhook_supersede(&s->q, c);
	sink_queue_put(&s->q, c, s->counts);
	sink_webhook_next(s);
}

static size_t sink_webhook_queued(const struct sink *k)
{
	const struct sink_webhook *s = (const struct sink_webhook *)k;

	return s->q.n + !!s->cur;
}

static void sink_webhook_free(struct sink *k)
{
	struct sink_webhook *s = (struct sink_webhook *)k;

	if (!s)
		return;
	sink_webhook_drop_conn(s);
	free(s->cur);
	sink_queue_clear(&s->q);
	sink_event_free(&s->timeout_ev);
	sink_event_free(&s->done_ev);
	sink_event_free(&s->retry_ev);
	if (s->dns)
		evdns_base_free(s->dns, 0);
	free(s);
}

static const struct sink_ops sink_webhook_ops = {
	.take = sink_webhook_take,
	.queued = sink_webhook_queued,
	.free = sink_webhook_free,
};

struct sink *sink_webhook_new(struct event_base *base,
			      const struct sinks_conf *conf,
			      struct sink_counts *counts)
{
	struct sink_webhook *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->sink.ops = &sink_webhook_ops;
	s->sink.wants = SINK_TABLE | SINK_WATCHDOG;
	s->base = base;
	snprintf(s->coordinator, sizeof(s->coordinator), "%s",
		 conf->coordinator ? conf->coordinator : "");
	s->timeout_ms = conf->webhook_timeout_ms;
	s->retries = conf->webhook_retries;
	s->backoff_ms = conf->webhook_backoff_ms;
	s->counts = counts;
	sink_queue_init(&s->q, "alert_receiver_webhook", conf->queue_max);
	if (sink_webhook_init(s, conf->webhook_url) < 0) {
		int e = errno;

		sink_webhook_free(&s->sink);
		errno = e;
		return NULL;
	}
	return &s->sink;
}
