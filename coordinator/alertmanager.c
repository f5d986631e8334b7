/* Alertmanager's API as Prometheus uses it: a round per target sends the
 * firing alerts of the table and the resolutions that target still owes
 * an answer for, in batches, one POST at a time; a failed round is
 * retried whole (from the table as it is then) after a backoff, a refused
 * batch (4xx) is not. */
#include "alertmanager.h"
#include "alert_text.h"
#include "json_text.h"
#include "cfg.h"
#include "clock.h"
#include "log.h"
#include "text.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#define AM_API_PATH "/api/v2/alerts"
#define AM_URL_LEN 512		 /* alertmanager_url, generatorURL */
#define AM_BODY_LOG 256		 /* a refusal's body, logged */
#define AM_REPLY_MAX (64 * 1024) /* a reply's headers and body */
#define AM_LINE_MAX (16 * 1024)	 /* one owed line, at most */
#define AM_ENDS_AHEAD 4		 /* firing: endsAt this many resends on */
#define AM_DEFAULT_RESEND_MS 60000ULL
#define AM_DEFAULT_TIMEOUT_MS 10000ULL
#define AM_DEFAULT_BACKOFF_MS 1000ULL
#define AM_DEFAULT_BATCH 64
#define AM_DEFAULT_BATCH_BYTES (256 * 1024)
#define AM_DEFAULT_OWED 1024

/* A resolution one target has not acknowledged: the postable alert as it
 * will be sent every time (its endsAt is fixed), keyed by the alert. */
struct am_owed {
	TAILQ_ENTRY(am_owed) link;
	uint64_t key; /* am_key(rule, subject) */
	uint64_t seq; /* which version: a batch acknowledges only its own */
	char *json;
	size_t len;
};
TAILQ_HEAD(am_owed_list, am_owed);

/* One POST of a round. */
struct am_batch {
	TAILQ_ENTRY(am_batch) link;
	struct evbuffer *body;
	size_t n;	    /* alerts in it */
	size_t n_owed;	    /* of which owed resolutions: */
	uint64_t *owed_key; /* acknowledged by a 2xx */
	uint64_t *owed_seq;
};
TAILQ_HEAD(am_batch_list, am_batch);

struct am_target {
	struct alertmanager *am;
	char url[AM_URL_LEN];
	char host[256];
	char hostport[270]; /* the Host header */
	uint16_t port;
	struct am_batch_list round; /* what this round has still to send */
	struct am_batch *cur;	    /* in flight */
	struct evhttp_connection *conn;
	struct event *timeout_ev, *done_ev, *retry_ev;
	int dirty;	   /* something to send since the round began */
	unsigned failures; /* attempts failed in a row */
	int code;	   /* HTTP status; 0: no reply; -1: timeout */
	int answered;
	char reply[AM_BODY_LOG + 1];
	struct am_owed_list owed;
	size_t n_owed;
	uint64_t owed_burst; /* dropped from a full owed set, not logged */
};

struct alertmanager {
	struct event_base *base;
	const struct alerts *table;
	char coordinator[256];
	char generator[AM_URL_LEN];
	uint64_t resend_ms, timeout_ms, backoff_ms;
	size_t batch_max, batch_bytes, owed_max;
	struct am_target t[ALERTMANAGER_MAX_URLS];
	size_t n;
	struct evdns_base *dns;
	struct event *work_ev;	 /* this turn's transitions, together */
	struct event *resend_ev; /* every resend_ms */
	alertmanager_owed_fn owed_fn;
	void *owed_arg;
	int owed_changed;
	uint64_t seq;
	uint64_t alerts_sent, posts_ok, posts_refused, retried, dropped;
};

/* ---- text ---- */

/* 64-bit FNV-1a of rule and subject: the alert's key. */
static uint64_t am_key(const char *rule, const char *subject)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *parts[2] = {rule, subject};

	for (int p = 0; p < 2; p++)
		for (const unsigned char *c = (const unsigned char *)parts[p];;
		     c++) {
			h = (h ^ *c) * 0x100000001b3ULL;
			if (!*c)
				break;
		}
	return h;
}

static void am_tv(struct timeval *tv, uint64_t ms)
{
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)(ms % 1000) * 1000;
}

/* One postable alert: firing with endsAt = ends_ms (a few resends on), or
 * resolved (endsAt its resolution). */
static void am_alert_json(const struct alertmanager *am, const struct alert *a,
			  int resolved, uint64_t ends_ms, struct evbuffer *b)
{
	char starts[40], ends[40];
	const char *desc = resolved && *a->resolved_message
				   ? a->resolved_message
				   : a->message;

	json_text_time(starts, sizeof(starts), a->first_seen_ms,
		       "1970-01-01T00:00:00Z");
	json_text_time(ends, sizeof(ends), resolved ? a->resolved_ms : ends_ms,
		       "1970-01-01T00:00:00Z");
	evbuffer_add(b, "{\"labels\":{", 11);
	json_text_kv(b, 1, "alertname", a->rule);
	json_text_kv(b, 0, "severity", alert_text_severity(a->severity));
	json_text_kv(b, 0, "subject", a->subject);
	/* Empty values left out: a matcher on node="" matches absence. */
	if (*a->node)
		json_text_kv(b, 0, "node", a->node);
	if (*a->edge)
		json_text_kv(b, 0, "edge", a->edge);
	if (*a->ring)
		json_text_kv(b, 0, "ring", a->ring);
	json_text_kv(b, 0, "coordinator", am->coordinator);
	evbuffer_add(b, "},\"annotations\":{", 17);
	json_text_kv(b, 1, "summary", a->message);
	json_text_kv(b, 0, "description", desc);
	evbuffer_add(b, "}", 1);
	json_text_kv(b, 0, "startsAt", starts);
	json_text_kv(b, 0, "endsAt", ends);
	if (*am->generator)
		json_text_kv(b, 0, "generatorURL", am->generator);
	evbuffer_add(b, "}", 1);
}

/* ---- owed resolutions ---- */

static void am_owed_free(struct am_owed *o)
{
	free(o->json);
	free(o);
}

static struct am_owed *am_owed_find(struct am_target *t, uint64_t key)
{
	struct am_owed *o;

	TAILQ_FOREACH(o, &t->owed, link)
	if (o->key == key)
		return o;
	return NULL;
}

static void am_owed_remove(struct am_target *t, struct am_owed *o)
{
	TAILQ_REMOVE(&t->owed, o, link);
	if (!--t->n_owed)
		t->owed_burst = 0;
	t->am->owed_changed = 1;
	am_owed_free(o);
}

/* Owe json (taken over) to t under key, replacing an older one; the
 * oldest dropped when the set is full. */
static void am_owed_put(struct am_target *t, uint64_t key, char *json,
			size_t len)
{
	struct alertmanager *am = t->am;
	struct am_owed *o = am_owed_find(t, key);

	if (o)
		am_owed_remove(t, o);
	o = calloc(1, sizeof(*o));
	if (!o) {
		log_warnx("alertmanager %s: out of memory: a resolution is "
			  "not sent",
			  t->url);
		free(json);
		am->dropped++;
		return;
	}
	if (t->n_owed >= am->owed_max) {
		struct am_owed *old = TAILQ_FIRST(&t->owed);

		if (!t->owed_burst++)
			log_warnx("alertmanager %s: %zu resolutions are owed "
				  "already: dropping the oldest",
				  t->url, am->owed_max);
		am_owed_remove(t, old);
		am->dropped++;
	}
	o->key = key;
	o->seq = ++am->seq;
	o->json = json;
	o->len = len;
	TAILQ_INSERT_TAIL(&t->owed, o, link);
	t->n_owed++;
	am->owed_changed = 1;
}

/* What batch b carried of t's owed set is done (answered 2xx, or refused
 * for good): owed no longer, unless replaced meanwhile. */
static void am_owed_ack(struct am_target *t, const struct am_batch *b)
{
	for (size_t i = 0; i < b->n_owed; i++) {
		struct am_owed *o = am_owed_find(t, b->owed_key[i]);

		if (o && o->seq == b->owed_seq[i])
			am_owed_remove(t, o);
	}
}

/* ---- rounds and batches ---- */

static void am_batch_free(struct am_batch *b)
{
	if (!b)
		return;
	if (b->body)
		evbuffer_free(b->body);
	free(b->owed_key);
	free(b->owed_seq);
	free(b);
}

static void am_round_clear(struct am_target *t)
{
	struct am_batch *b;

	while ((b = TAILQ_FIRST(&t->round))) {
		TAILQ_REMOVE(&t->round, b, link);
		am_batch_free(b);
	}
}

/* A new batch at the round's end, able to hold max alerts' owed refs. */
static struct am_batch *am_batch_new(struct am_target *t, size_t max)
{
	struct am_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->body = evbuffer_new();
	b->owed_key = calloc(max, sizeof(*b->owed_key));
	b->owed_seq = calloc(max, sizeof(*b->owed_seq));
	if (!b->body || !b->owed_key || !b->owed_seq) {
		am_batch_free(b);
		return NULL;
	}
	evbuffer_add(b->body, "[", 1);
	TAILQ_INSERT_TAIL(&t->round, b, link);
	return b;
}

/* One alert's JSON into the round: the last batch, or a new one when that
 * one is full. 0 or -1 (ENOMEM). */
static int am_round_add(struct am_target *t, const char *json, size_t len,
			const struct am_owed *o)
{
	struct alertmanager *am = t->am;
	struct am_batch *b = TAILQ_LAST(&t->round, am_batch_list);

	if (!b || b->n >= am->batch_max ||
	    evbuffer_get_length(b->body) + len + 2 > am->batch_bytes)
		b = am_batch_new(t, am->batch_max);
	if (!b)
		return -1;
	if (b->n)
		evbuffer_add(b->body, ",", 1);
	evbuffer_add(b->body, json, len);
	b->n++;
	if (o) {
		b->owed_key[b->n_owed] = o->key;
		b->owed_seq[b->n_owed++] = o->seq;
	}
	return 0;
}

/* The round: every firing alert of the table as it is now, then what t
 * owes. 0 (maybe empty) or -1 (ENOMEM). */
static int am_round_build(struct am_target *t)
{
	struct alertmanager *am = t->am;
	const struct alert **v = NULL;
	struct evbuffer *one = evbuffer_new();
	uint64_t ends = clock_now_ms() + AM_ENDS_AHEAD * am->resend_ms;
	struct am_owed *o;
	size_t n = 0;
	int rc = -1;

	if (!one)
		return -1;
	if (am->table) {
		n = alerts_list(am->table, 0, NULL, 0);
		v = calloc(n ? n : 1, sizeof(*v));
		if (!v)
			goto cleanup;
		n = alerts_list(am->table, 0, v, n);
	}
	for (size_t i = 0; i < n; i++) {
		if (!v[i]->firing)
			continue;
		evbuffer_drain(one, evbuffer_get_length(one));
		am_alert_json(am, v[i], 0, ends, one);
		if (am_round_add(t, (const char *)evbuffer_pullup(one, -1),
				 evbuffer_get_length(one), NULL) < 0)
			goto cleanup;
	}
	TAILQ_FOREACH(o, &t->owed, link)
	if (am_round_add(t, o->json, o->len, o) < 0)
		goto cleanup;
	rc = 0;
cleanup:
	if (rc < 0) {
		log_warnx("alertmanager %s: out of memory building a POST",
			  t->url);
		am_round_clear(t);
	}
	free(v);
	evbuffer_free(one);
	return rc;
}

/* ---- HTTP ---- */

static void am_target_kick(struct am_target *t);
static void am_schedule(struct alertmanager *am, int resend);

static void am_drop_conn(struct am_target *t)
{
	if (t->conn)
		evhttp_connection_free(t->conn);
	t->conn = NULL;
	if (t->timeout_ev)
		evtimer_del(t->timeout_ev);
	if (t->done_ev)
		event_del(t->done_ev);
}

static void am_reply_cb(struct evhttp_request *req, void *arg)
{
	struct am_target *t = arg;
	struct evbuffer *in;
	ev_ssize_t n;

	t->code = req ? evhttp_request_get_response_code(req) : 0;
	t->reply[0] = '\0';
	if (req && (in = evhttp_request_get_input_buffer(req))) {
		n = evbuffer_copyout(in, t->reply, AM_BODY_LOG);
		t->reply[n > 0 ? (size_t)n : 0] = '\0';
	}
	t->answered = 1;
	evtimer_del(t->timeout_ev);
	/* libevent still uses the connection after this returns. */
	event_active(t->done_ev, 0, 0);
}

/* Only 408 and 429 of the 4xx say "try again": the rest refuse what was
 * sent, and sending it again gets the same answer. */
static int am_refused(int code)
{
	return code >= 400 && code < 500 && code != 408 && code != 429;
}

static void am_result(struct am_target *t)
{
	struct alertmanager *am = t->am;
	struct am_batch *b = t->cur;
	char why[64], body[LOG_ESC_LEN(AM_BODY_LOG)];
	uint64_t delay = am->backoff_ms;
	struct timeval tv;

	am_drop_conn(t);
	t->cur = NULL;
	if (t->code >= 200 && t->code < 300) {
		if (t->failures)
			log_info("alertmanager %s: delivering again after %u "
				 "failed attempts",
				 t->url, t->failures);
		t->failures = 0;
		am->posts_ok++;
		am->alerts_sent += b->n;
		am_owed_ack(t, b);
		am_batch_free(b);
		am_target_kick(t);
		if (am->owed_changed)
			am_schedule(am, 0); /* saved from the loop */
		return;
	}
	if (am_refused(t->code)) {
		/* Not retried: the same alerts get the same answer. */
		log_escape(body, sizeof(body), t->reply);
		log_warnx("alertmanager %s: HTTP status %d for %zu alerts, "
			  "not retried: %s",
			  t->url, t->code, b->n, body);
		am->posts_refused++;
		am->dropped += b->n_owed;
		am_owed_ack(t, b);
		am_batch_free(b);
		am_target_kick(t);
		if (am->owed_changed)
			am_schedule(am, 0);
		return;
	}
	if (t->code > 0)
		snprintf(why, sizeof(why), "HTTP status %d", t->code);
	else if (t->code < 0)
		snprintf(why, sizeof(why), "no reply in time");
	else
		snprintf(why, sizeof(why),
			 "no HTTP reply (refused, reset or closed)");
	am_batch_free(b);
	/* The retry sends the table as it is then, and all that is owed. */
	am_round_clear(t);
	t->dirty = 1;
	for (unsigned i = 0; i < t->failures && delay < am->resend_ms; i++)
		delay *= 2;
	if (delay > am->resend_ms)
		delay = am->resend_ms;
	/* Once per outage, not once per attempt. */
	if (!t->failures++)
		log_warnx("alertmanager %s: %s; retrying (at most every %llu "
			  "ms)",
			  t->url, why, (unsigned long long)am->resend_ms);
	else
		log_debug("alerts", "alertmanager %s: %s; retry in %llu ms",
			  t->url, why, (unsigned long long)delay);
	am->retried++;
	am_tv(&tv, delay);
	evtimer_add(t->retry_ev, &tv);
}

static void am_done_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	am_result(arg);
}

static void am_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct am_target *t = arg;

	(void)fd;
	(void)what;
	t->code = -1;
	am_result(t);
}

static void am_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	am_target_kick(arg);
}

/* Send the round's first batch; a failure to even start is a failed
 * attempt, handled from the loop. */
static void am_send(struct am_target *t)
{
	struct alertmanager *am = t->am;
	struct evhttp_request *req = NULL;
	struct evkeyvalq *hdr;
	struct timeval tv, ev_tv;

	t->cur = TAILQ_FIRST(&t->round);
	TAILQ_REMOVE(&t->round, t->cur, link);
	evbuffer_add(t->cur->body, "]", 1);
	t->code = 0;
	t->reply[0] = '\0';
	am_tv(&tv, am->timeout_ms);
	t->conn =
		evhttp_connection_base_new(am->base, am->dns, t->host, t->port);
	if (!t->conn)
		goto fail;
	evhttp_connection_set_max_body_size(t->conn, AM_REPLY_MAX);
	evhttp_connection_set_max_headers_size(t->conn, AM_REPLY_MAX);
	/* Later than ours, which then says what happened. */
	ev_tv.tv_sec = tv.tv_sec + 1;
	ev_tv.tv_usec = tv.tv_usec;
	evhttp_connection_set_timeout_tv(t->conn, &ev_tv);
	req = evhttp_request_new(am_reply_cb, t);
	if (!req)
		goto fail;
	hdr = evhttp_request_get_output_headers(req);
	if (evhttp_add_header(hdr, "Host", t->hostport) < 0 ||
	    evhttp_add_header(hdr, "Content-Type", "application/json") < 0 ||
	    evhttp_add_header(hdr, "Connection", "close") < 0 ||
	    evbuffer_add_buffer(evhttp_request_get_output_buffer(req),
				t->cur->body) < 0)
		goto fail;
	evtimer_add(t->timeout_ev, &tv);
	/* As in sinks.c: a refused connection may have answered already;
	 * on -1 the request is libevent's to free. */
	t->answered = 0;
	if (evhttp_make_request(t->conn, req, EVHTTP_REQ_POST, AM_API_PATH) <
		    0 &&
	    !t->answered) {
		evtimer_del(t->timeout_ev);
		event_active(t->done_ev, 0, 0);
	}
	return;
fail:
	if (req)
		evhttp_request_free(req);
	log_warn("alertmanager %s: cannot send", t->url);
	event_active(t->done_ev, 0, 0);
}

/* Send what is due unless a POST is in flight or a retry waits. */
static void am_target_kick(struct am_target *t)
{
	if (t->cur || evtimer_pending(t->retry_ev, NULL))
		return;
	if (TAILQ_EMPTY(&t->round)) {
		if (!t->dirty)
			return;
		t->dirty = 0;
		if (am_round_build(t) < 0 || TAILQ_EMPTY(&t->round))
			return;
	}
	am_send(t);
}

/* ---- the module ---- */

static void am_work_cb(evutil_socket_t fd, short what, void *arg)
{
	struct alertmanager *am = arg;

	(void)fd;
	(void)what;
	for (size_t i = 0; i < am->n; i++)
		am_target_kick(&am->t[i]);
	if (am->owed_changed && am->owed_fn) {
		am->owed_changed = 0;
		am->owed_fn(am->owed_arg);
	}
}

/* Everything again in this turn's work (one round for what came
 * together). */
static void am_schedule(struct alertmanager *am, int resend)
{
	struct timeval zero = {0, 0};

	for (size_t i = 0; resend && i < am->n; i++)
		am->t[i].dirty = 1;
	if (!evtimer_pending(am->work_ev, NULL))
		evtimer_add(am->work_ev, &zero);
}

static void am_resend_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	am_schedule(arg, 1);
}

/* A URL as alertmanager_url takes it: http://HOST[:PORT] and at most "/"
 * after it. */
static int am_target_init(struct alertmanager *am, struct am_target *t,
			  const char *url)
{
	char err[128], path[AM_URL_LEN];
	unsigned char addr[16];

	t->am = am;
	TAILQ_INIT(&t->round);
	TAILQ_INIT(&t->owed);
	snprintf(t->url, sizeof(t->url), "%s", url);
	if (cfg_split_http_url(url, t->host, sizeof(t->host), &t->port, path,
			       sizeof(path), err, sizeof(err)) < 0) {
		log_warnx("alertmanager_url %s: %s", url, err);
		errno = EINVAL;
		return -1;
	}
	if (strcmp(path, "/")) {
		log_warnx("alertmanager_url %s: has a path (%s is appended)",
			  url, AM_API_PATH);
		errno = EINVAL;
		return -1;
	}
	/* The log names the target without a trailing slash. */
	if (t->url[0] && t->url[strlen(t->url) - 1] == '/')
		t->url[strlen(t->url) - 1] = '\0';
	snprintf(t->hostport, sizeof(t->hostport),
		 strchr(t->host, ':') ? "[%s]:%u" : "%s:%u", t->host,
		 (unsigned)t->port);
	/* A name needs the asynchronous resolver: evhttp's fallback is a
	 * blocking getaddrinfo on the loop. */
	if (!am->dns && inet_pton(AF_INET, t->host, addr) != 1 &&
	    inet_pton(AF_INET6, t->host, addr) != 1) {
		am->dns = evdns_base_new(am->base,
					 EVDNS_BASE_INITIALIZE_NAMESERVERS);
		if (!am->dns) {
			log_warnx("alertmanager_url %s: no resolver", url);
			errno = ENOMEM;
			return -1;
		}
	}
	t->timeout_ev = evtimer_new(am->base, am_timeout_cb, t);
	t->done_ev = event_new(am->base, -1, 0, am_done_cb, t);
	t->retry_ev = evtimer_new(am->base, am_retry_cb, t);
	if (!t->timeout_ev || !t->done_ev || !t->retry_ev) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

struct alertmanager *alertmanager_new(struct event_base *base,
				      const struct alertmanager_conf *conf,
				      const struct alerts *table)
{
	struct alertmanager *am = calloc(1, sizeof(*am));
	struct timeval tv;

	if (!am)
		return NULL;
	am->base = base;
	am->table = table;
	snprintf(am->coordinator, sizeof(am->coordinator), "%s",
		 conf->coordinator ? conf->coordinator : "");
	snprintf(am->generator, sizeof(am->generator), "%s",
		 conf->generator_url ? conf->generator_url : "");
	am->resend_ms =
		conf->resend_ms ? conf->resend_ms : AM_DEFAULT_RESEND_MS;
	am->timeout_ms =
		conf->timeout_ms ? conf->timeout_ms : AM_DEFAULT_TIMEOUT_MS;
	am->backoff_ms =
		conf->backoff_ms ? conf->backoff_ms : AM_DEFAULT_BACKOFF_MS;
	am->batch_max = conf->batch_max ? conf->batch_max : AM_DEFAULT_BATCH;
	am->batch_bytes =
		conf->batch_bytes ? conf->batch_bytes : AM_DEFAULT_BATCH_BYTES;
	am->owed_max = conf->owed_max ? conf->owed_max : AM_DEFAULT_OWED;
	if (conf->n_urls > ALERTMANAGER_MAX_URLS) {
		log_warnx("alertmanager_url: more than %d",
			  ALERTMANAGER_MAX_URLS);
		errno = EINVAL;
		goto fail;
	}
	for (size_t i = 0; i < conf->n_urls; i++) {
		am->n++;
		if (am_target_init(am, &am->t[i], conf->urls[i]) < 0)
			goto fail;
	}
	am->work_ev = evtimer_new(base, am_work_cb, am);
	am->resend_ev = event_new(base, -1, EV_PERSIST, am_resend_cb, am);
	am_tv(&tv, am->resend_ms);
	if (!am->work_ev || !am->resend_ev ||
	    event_add(am->resend_ev, &tv) < 0) {
		errno = ENOMEM;
		goto fail;
	}
	/* What the table holds at start (restored alerts) goes out now. */
	am_schedule(am, 1);
	return am;
fail:
	alertmanager_free(am);
	return NULL;
}

static void am_event_free(struct event **ev)
{
	if (*ev)
		event_free(*ev);
	*ev = NULL;
}

void alertmanager_free(struct alertmanager *am)
{
	int saved = errno;

	if (!am)
		return;
	for (size_t i = 0; i < am->n; i++) {
		struct am_target *t = &am->t[i];
		struct am_owed *o;

		am_drop_conn(t);
		am_batch_free(t->cur);
		am_round_clear(t);
		while ((o = TAILQ_FIRST(&t->owed))) {
			TAILQ_REMOVE(&t->owed, o, link);
			am_owed_free(o);
		}
		am_event_free(&t->timeout_ev);
		am_event_free(&t->done_ev);
		am_event_free(&t->retry_ev);
	}
	am_event_free(&am->work_ev);
	am_event_free(&am->resend_ev);
	if (am->dns)
		evdns_base_free(am->dns, 0);
	free(am);
	errno = saved;
}

void alertmanager_set_owed_cb(struct alertmanager *am, alertmanager_owed_fn fn,
			      void *arg)
{
	am->owed_fn = fn;
	am->owed_arg = arg;
}

void alertmanager_alert(struct alertmanager *am, const struct alert *a,
			enum alert_event ev)
{
	uint64_t key;

	if (!am)
		return;
	key = am_key(a->rule, a->subject);
	for (size_t i = 0; i < am->n; i++) {
		struct am_target *t = &am->t[i];
		struct am_owed *o = am_owed_find(t, key);
		struct evbuffer *b;
		char *json;
		size_t len;

		/* A new episode replaces a resolution not yet delivered:
		 * the same labels, and the newer state. */
		if (o && ev != ALERT_EV_RESOLVED)
			am_owed_remove(t, o);
		if (ev != ALERT_EV_RESOLVED)
			continue;
		b = evbuffer_new();
		if (!b)
			goto nomem;
		am_alert_json(am, a, 1, 0, b);
		len = evbuffer_get_length(b);
		json = malloc(len + 1);
		if (!json) {
			evbuffer_free(b);
			goto nomem;
		}
		evbuffer_remove(b, json, len);
		json[len] = '\0';
		evbuffer_free(b);
		am_owed_put(t, key, json, len);
		continue;
	nomem:
		log_warnx("alertmanager %s: out of memory: resolution of %s "
			  "%s not sent",
			  t->url, a->rule, a->subject);
		am->dropped++;
	}
	/* Pushed now, as Prometheus pushes a new alert at once. */
	am_schedule(am, 1);
}

/* ---- what is owed, across a restart ---- */

/* Lines "URL<TAB>KEY<TAB>JSON\n": KEY 16 hex digits; JSON as sent (no tab
 * or newline: am_json_str escapes them). */
int alertmanager_owed_text(const struct alertmanager *am, char **buf,
			   size_t *len)
{
	struct evbuffer *b = evbuffer_new();
	int rc = 0;

	if (!b)
		return -1;
	for (size_t i = 0; i < am->n; i++) {
		const struct am_owed *o;

		TAILQ_FOREACH(o, &am->t[i].owed, link)
		rc |= evbuffer_add_printf(b, "%s\t%016llx\t%s\n", am->t[i].url,
					  (unsigned long long)o->key,
					  o->json) < 0;
	}
	*len = evbuffer_get_length(b);
	*buf = malloc(*len + 1);
	if (rc || !*buf) {
		free(*buf);
		*buf = NULL;
		evbuffer_free(b);
		errno = ENOMEM;
		return -1;
	}
	evbuffer_remove(b, *buf, *len);
	(*buf)[*len] = '\0';
	evbuffer_free(b);
	return 0;
}

/* One line of alertmanager_owed_text() (NUL-terminated, no newline): 0
 * put back, 1 dropped, -1 no memory. */
static int am_owed_line(struct alertmanager *am, char *line)
{
	char *tab1 = strchr(line, '\t'), *tab2, *end, *json;
	unsigned long long key;
	size_t len;

	if (!tab1 || !(tab2 = strchr(tab1 + 1, '\t')))
		return 1;
	*tab1 = *tab2 = '\0';
	if (tab2 - tab1 - 1 != 16)
		return 1;
	for (const char *p = tab1 + 1; p < tab2; p++)
		if (!isxdigit((unsigned char)*p))
			return 1;
	key = strtoull(tab1 + 1, &end, 16);
	len = strlen(tab2 + 1);
	if (len < 2 || tab2[1] != '{' || tab2[len] != '}')
		return 1;
	for (const char *p = tab2 + 1; *p; p++)
		if ((unsigned char)*p < 0x20)
			return 1;
	for (size_t i = 0; i < am->n; i++) {
		if (strcmp(am->t[i].url, line))
			continue;
		json = strdup(tab2 + 1);
		if (!json)
			return -1;
		am_owed_put(&am->t[i], key, json, len);
		return 0;
	}
	return 1; /* a target no longer configured */
}

int alertmanager_owed_load(struct alertmanager *am, const char *buf, size_t len)
{
	char *line = malloc(AM_LINE_MAX + 1);
	int dropped = 0;
	size_t i = 0;

	if (!line)
		return -1;
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = (nl ? (size_t)(nl - buf) : len) - i;
		int r = 1;

		if (n <= AM_LINE_MAX && !memchr(buf + i, '\0', n)) {
			memcpy(line, buf + i, n);
			line[n] = '\0';
			r = am_owed_line(am, line);
		}
		if (r < 0) {
			free(line);
			errno = ENOMEM;
			return -1;
		}
		dropped += r;
		i += n + 1;
	}
	free(line);
	/* Loaded, not changed: nothing to save back. */
	am->owed_changed = 0;
	am_schedule(am, 1);
	return dropped;
}

void alertmanager_stats(const struct alertmanager *am,
			struct alertmanager_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->alerts_sent = am->alerts_sent;
	out->posts_ok = am->posts_ok;
	out->posts_refused = am->posts_refused;
	out->retried = am->retried;
	out->dropped = am->dropped;
	for (size_t i = 0; i < am->n; i++) {
		out->owed += am->t[i].n_owed;
		out->in_flight += !!am->t[i].cur;
	}
}
