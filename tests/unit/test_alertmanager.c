/* alertmanager: the real module against real evhttp servers on loopback
 * standing in for Alertmanager (codes chosen per request), driven by a
 * libevent loop with deadlines: the postable alerts' JSON, batches, a 4xx
 * not retried, a 5xx retried with backoff, two targets independent, and
 * what is owed saved and loaded. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "coordinator/alertmanager.h"
#include "coordinator/alerts.h"
#include "clock.h"
#include "log.h"

#define MAX_REQ 16
#define BODY_MAX 16384

/* Alertmanager's stand-in: answers codes[] in turn, then 200. */
struct srv {
	struct evhttp *http;
	uint16_t port;
	int n;
	int codes[MAX_REQ], n_codes;
	char bodies[MAX_REQ][BODY_MAX];
	double at[MAX_REQ];
	int bad_request; /* method, path or content type not as sent */
};

struct fx {
	struct event_base *base;
	struct alerts *table;
	struct alertmanager *am;
	struct srv srv[2];
	int sock; /* a port that refuses */
	int saves;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run the loop until cond holds or 10 s pass. */
#define LOOP_UNTIL(f, cond)                                                    \
	do {                                                                   \
		double end_ = now_s() + 10;                                    \
		while (!(cond) && now_s() < end_)                              \
			event_base_loop((f)->base,                             \
					EVLOOP_ONCE | EVLOOP_NONBLOCK),        \
				usleep(1000);                                  \
	} while (0)

/* The loop for a while, whatever happens. */
static void loop_for(struct fx *f, double s)
{
	double end = now_s() + s;

	while (now_s() < end) {
		event_base_loop(f->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		usleep(1000);
	}
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct srv *v = arg;
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	const char *ct = evhttp_find_header(
		evhttp_request_get_input_headers(req), "Content-Type");
	size_t n = evbuffer_get_length(in);
	int i = v->n++;
	int code = i < v->n_codes ? v->codes[i] : 200;
	struct evbuffer *out = evbuffer_new();

	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST ||
	    strcmp(evhttp_request_get_uri(req), "/api/v2/alerts") || !ct ||
	    strcmp(ct, "application/json"))
		v->bad_request++;
	if (i < MAX_REQ) {
		if (n >= BODY_MAX)
			n = BODY_MAX - 1;
		evbuffer_copyout(in, v->bodies[i], n);
		v->bodies[i][n] = '\0';
		v->at[i] = now_s();
	}
	assert_non_null(out);
	if (code == 400)
		evbuffer_add_printf(out, "{\"code\":400,\"message\":\"bad "
					 "\\\"alert\\\"\\n\"}");
	evhttp_send_reply(req, code, code == 200 ? "OK" : "Oops", out);
	evbuffer_free(out);
}

static void start_srv(struct fx *f, int k)
{
	struct evhttp_bound_socket *bs;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct srv *v = &f->srv[k];

	v->http = evhttp_new(f->base);
	assert_non_null(v->http);
	bs = evhttp_bind_socket_with_handle(v->http, "127.0.0.1", 0);
	assert_non_null(bs);
	assert_int_equal(getsockname(evhttp_bound_socket_get_fd(bs),
				     (struct sockaddr *)&sin, &len),
			 0);
	v->port = ntohs(sin.sin_port);
	evhttp_set_gencb(v->http, on_request, v);
}

/* A bound, not listening socket: connections are refused. */
static uint16_t dead_port(struct fx *f)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->sock >= 0);
	assert_int_equal(bind(f->sock, (struct sockaddr *)&sin, sizeof(sin)),
			 0);
	assert_int_equal(getsockname(f->sock, (struct sockaddr *)&sin, &len),
			 0);
	return ntohs(sin.sin_port);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct alerts_conf ac = {
		.hold_down_ms = 0,
		.max_resolved = 16,
		.keep_resolved_ms = 3600000,
		.max_firing = 64,
	};

	assert_non_null(f);
	f->sock = -1;
	f->base = event_base_new();
	assert_non_null(f->base);
	f->table = alerts_new(&ac, NULL, NULL);
	assert_non_null(f->table);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	alertmanager_free(f->am);
	for (int k = 0; k < 2; k++)
		if (f->srv[k].http)
			evhttp_free(f->srv[k].http);
	if (f->sock >= 0)
		close(f->sock);
	alerts_free(f->table);
	event_base_free(f->base);
	free(f);
	return 0;
}

static void on_owed(void *arg)
{
	((struct fx *)arg)->saves++;
}

/* The module at the given ports (0: the refusing one). */
static void start_am(struct fx *f, const uint16_t *ports, size_t n,
		     size_t batch_max, uint64_t resend_ms, uint64_t backoff_ms)
{
	static char urls[2][64];
	struct alertmanager_conf c = {
		.coordinator = "coord1",
		.generator_url = "http://10.0.0.1:9464/",
		.n_urls = n,
		.resend_ms = resend_ms,
		.timeout_ms = 2000,
		.backoff_ms = backoff_ms,
		.batch_max = batch_max,
	};

	for (size_t i = 0; i < n; i++) {
		snprintf(urls[i], sizeof(urls[i]), "http://127.0.0.1:%u%s",
			 (unsigned)ports[i], i ? "/" : "");
		c.urls[i] = urls[i];
	}
	f->am = alertmanager_new(f->base, &c, f->table);
	assert_non_null(f->am);
	alertmanager_set_owed_cb(f->am, on_owed, f);
}

static struct alertmanager_stats stats(const struct fx *f)
{
	struct alertmanager_stats st;

	alertmanager_stats(f->am, &st);
	return st;
}

/* A resolved alert as the table hands it over. */
static void mk_resolved(struct alert *a, const char *rule, const char *subj)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->rule, sizeof(a->rule), "%s", rule);
	snprintf(a->subject, sizeof(a->subject), "%s", subj);
	snprintf(a->edge, sizeof(a->edge), "%s", subj);
	a->severity = ALERT_WARNING;
	snprintf(a->message, sizeof(a->message), "%s is down", subj);
	snprintf(a->resolved_message, sizeof(a->resolved_message),
		 "%s came back after 10 s", subj);
	a->first_seen_ms = 1700000000123ULL;
	a->resolved_ms = 1700000060000ULL;
}

/* Is s one JSON value (objects, arrays, strings, numbers, literals)
 * and nothing after it? A small checker, enough to show the body parses. */
static const char *json_value(const char *s);

static const char *json_ws(const char *s)
{
	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	return s;
}

static const char *json_string(const char *s)
{
	if (*s++ != '"')
		return NULL;
	while (*s && *s != '"') {
		if ((unsigned char)*s < 0x20)
			return NULL;
		if (*s == '\\') {
			s++;
			if (*s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF",
						    s[i]) ||
					    !s[i])
						return NULL;
				s += 4;
			} else if (!*s || !strchr("\"\\/bfnrt", *s)) {
				return NULL;
			}
		}
		s++;
	}
	return *s == '"' ? s + 1 : NULL;
}

static const char *json_value(const char *s)
{
	s = json_ws(s);
	if (*s == '"')
		return json_string(s);
	if (*s == '{' || *s == '[') {
		char close = *s == '{' ? '}' : ']';

		s = json_ws(s + 1);
		if (*s == close)
			return s + 1;
		for (;;) {
			if (close == '}') {
				s = json_string(json_ws(s));
				if (!s || *(s = json_ws(s)) != ':')
					return NULL;
				s++;
			}
			s = json_value(s);
			if (!s)
				return NULL;
			s = json_ws(s);
			if (*s == close)
				return s + 1;
			if (*s++ != ',')
				return NULL;
		}
	}
	if (!strncmp(s, "null", 4) || !strncmp(s, "true", 4))
		return s + 4;
	if (!strncmp(s, "false", 5))
		return s + 5;
	if (*s == '-' || (*s >= '0' && *s <= '9')) {
		while (*s && strchr("+-0123456789.eE", *s))
			s++;
		return s;
	}
	return NULL;
}

static void assert_json(const char *body)
{
	const char *end = json_value(body);

	assert_non_null(end);
	assert_int_equal(*json_ws(end), '\0');
	assert_int_equal(body[0], '[');
}

/* How many postable alerts a body holds: one "labels" each. */
static int count_alerts(const char *body)
{
	int n = 0;

	for (const char *p = body; (p = strstr(p, "{\"labels\":")); p++)
		n++;
	return n;
}

/* A firing alert and a resolution: one POST, an array of postable alerts
 * with the labels, annotations and times documented. */
static void test_json_shape(void **state)
{
	struct fx *f = *state;
	uint16_t port;
	struct alert a;
	const char *b;
	char want[128], ends[40];
	uint64_t now = clock_now_ms();

	start_srv(f, 0);
	port = f->srv[0].port;
	start_am(f, &port, 1, 0, 60000, 100);
	assert_int_equal(alerts_raise(f->table, "cable_down", "n1-n2", "",
				      "n1-n2", ALERT_CRITICAL,
				      "cable n1-n2 is down: \"both\" ends\n"
				      "caf\xc3\xa9 \xff",
				      now),
			 0);
	mk_resolved(&a, "node_down", "n3");
	snprintf(a.node, sizeof(a.node), "n3");
	a.edge[0] = '\0';
	/* Not from the table: a byte that is not UTF-8 reaches the JSON. */
	snprintf(a.resolved_message, sizeof(a.resolved_message),
		 "n3 came back after 10 s\xff");
	alertmanager_alert(f->am, &a, ALERT_EV_RESOLVED);
	assert_int_equal(stats(f).owed, 1);
	LOOP_UNTIL(f, stats(f).posts_ok >= 1 && stats(f).owed == 0);
	assert_int_equal(f->srv[0].n, 1);
	assert_int_equal(f->srv[0].bad_request, 0);
	b = f->srv[0].bodies[0];
	assert_json(b);
	assert_int_equal(count_alerts(b), 2);
	assert_non_null(strstr(
		b, "[{\"labels\":{\"alertname\":\"cable_down\",\"severity\":"
		   "\"critical\",\"subject\":\"n1-n2\",\"edge\":\"n1-n2\","
		   "\"coordinator\":\"coord1\"},\"annotations\":{\"summary\":"
		   "\"cable n1-n2 is down: \\\"both\\\" ends\\u000acaf\xc3\xa9 "
		   "?\",\"description\":\"cable n1-n2"));
	/* Firing: endsAt four resend intervals on. */
	{
		time_t t = (time_t)((now + 240000) / 1000);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(ends, sizeof(ends), "%Y-%m-%dT%H:%M", &tm);
		snprintf(want, sizeof(want), "\"endsAt\":\"%s", ends);
		assert_non_null(strstr(b, want));
	}
	assert_non_null(
		strstr(b, "\"generatorURL\":\"http://10.0.0.1:9464/\"}"));
	/* Resolved: endsAt its resolution, the resolved message. */
	assert_non_null(strstr(
		b,
		"{\"labels\":{\"alertname\":\"node_down\",\"severity\":"
		"\"warning\",\"subject\":\"n3\",\"node\":\"n3\","
		"\"coordinator\":\"coord1\"},\"annotations\":{\"summary\":"
		"\"n3 is down\",\"description\":\"n3 came back after 10 s\xef\xbf\xbd\"},"
		"\"startsAt\":\"2023-11-14T22:13:20.123Z\",\"endsAt\":"
		"\"2023-11-14T22:14:20.000Z\",\"generatorURL\":"
		"\"http://10.0.0.1:9464/\"}]"));
	assert_true(f->saves >= 1); /* owed, then not: saved */
	assert_int_equal(stats(f).alerts_sent, 2);
}

/* Seven firing alerts, at most three per POST: 3, 3 and 1, one POST at a
 * time; then the resend interval sends them all again. */
static void test_batches_and_resend(void **state)
{
	struct fx *f = *state;
	uint16_t port;
	char subj[16];

	start_srv(f, 0);
	port = f->srv[0].port;
	for (int i = 0; i < 7; i++) {
		snprintf(subj, sizeof(subj), "n%d", i);
		assert_int_equal(alerts_raise(f->table, "node_down", subj, subj,
					      NULL, ALERT_CRITICAL, "down",
					      clock_now_ms()),
				 0);
	}
	start_am(f, &port, 1, 3, 1000, 100);
	LOOP_UNTIL(f, f->srv[0].n >= 3);
	assert_int_equal(count_alerts(f->srv[0].bodies[0]), 3);
	assert_int_equal(count_alerts(f->srv[0].bodies[1]), 3);
	assert_int_equal(count_alerts(f->srv[0].bodies[2]), 1);
	for (int i = 0; i < 3; i++)
		assert_json(f->srv[0].bodies[i]);
	/* No more until the resend, a second later. */
	loop_for(f, 0.5);
	assert_int_equal(f->srv[0].n, 3);
	LOOP_UNTIL(f, f->srv[0].n >= 6 && stats(f).alerts_sent >= 14);
	assert_int_equal(f->srv[0].n, 6);
	assert_true(f->srv[0].at[3] - f->srv[0].at[0] >= 0.9);
	assert_int_equal(stats(f).alerts_sent, 14);
	assert_int_equal(f->srv[0].bad_request, 0);
}

/* 400 (the answer to a wrong format): logged, not retried; the resolution
 * it carried is not owed any more. */
static void test_4xx_not_retried(void **state)
{
	struct fx *f = *state;
	uint16_t port;
	struct alert a;
	struct alertmanager_stats st;

	start_srv(f, 0);
	f->srv[0].codes[0] = 400;
	f->srv[0].n_codes = 1;
	port = f->srv[0].port;
	start_am(f, &port, 1, 0, 60000, 50);
	mk_resolved(&a, "cable_down", "n1-n2");
	alertmanager_alert(f->am, &a, ALERT_EV_RESOLVED);
	LOOP_UNTIL(f, stats(f).posts_refused == 1);
	loop_for(f, 0.5); /* ten backoffs' time: nothing again */
	st = stats(f);
	assert_int_equal(f->srv[0].n, 1);
	assert_int_equal(st.posts_refused, 1);
	assert_int_equal(st.retried, 0);
	assert_int_equal(st.owed, 0);
	assert_int_equal(st.dropped, 1);
}

/* 500, 500, then 200: the same resolution again after 100 ms, then
 * 200 ms; owed until the 200. */
static void test_5xx_retried_with_backoff(void **state)
{
	struct fx *f = *state;
	uint16_t port;
	struct alert a;
	struct alertmanager_stats st;

	start_srv(f, 0);
	f->srv[0].codes[0] = f->srv[0].codes[1] = 503;
	f->srv[0].n_codes = 2;
	port = f->srv[0].port;
	start_am(f, &port, 1, 0, 60000, 100);
	mk_resolved(&a, "cable_down", "n1-n2");
	alertmanager_alert(f->am, &a, ALERT_EV_RESOLVED);
	LOOP_UNTIL(f, f->srv[0].n >= 2);
	assert_int_equal(stats(f).owed, 1);
	LOOP_UNTIL(f, stats(f).owed == 0);
	st = stats(f);
	assert_int_equal(f->srv[0].n, 3);
	assert_int_equal(st.retried, 2);
	assert_int_equal(st.posts_ok, 1);
	assert_true(f->srv[0].at[1] - f->srv[0].at[0] >= 0.095);
	assert_true(f->srv[0].at[2] - f->srv[0].at[1] >= 0.195);
	assert_string_equal(f->srv[0].bodies[0], f->srv[0].bodies[2]);
}

/* One target refuses connections, the other answers: the other gets
 * every alert at once and owes nothing; the first keeps its resolution
 * owed and retries. */
static void test_two_targets_independent(void **state)
{
	struct fx *f = *state;
	uint16_t ports[2];
	struct alert a;
	char *text = NULL, want[96];
	size_t len = 0;

	start_srv(f, 1);
	ports[0] = dead_port(f);
	ports[1] = f->srv[1].port;
	start_am(f, ports, 2, 0, 60000, 50);
	mk_resolved(&a, "cable_down", "n1-n2");
	alertmanager_alert(f->am, &a, ALERT_EV_RESOLVED);
	assert_int_equal(stats(f).owed, 2);
	LOOP_UNTIL(f, f->srv[1].n >= 1 && stats(f).retried >= 3);
	assert_int_equal(f->srv[1].n, 1);
	assert_int_equal(stats(f).owed, 1);
	assert_int_equal(alertmanager_owed_text(f->am, &text, &len), 0);
	snprintf(want, sizeof(want), "http://127.0.0.1:%u\t",
		 (unsigned)ports[0]);
	assert_int_equal(strncmp(text, want, strlen(want)), 0);
	assert_int_equal(strchr(text, '\n') - text + 1, (long)len);
	free(text);
}

/* What was owed to a target that was down, saved and loaded into a new
 * instance: sent once it answers, the same JSON; lines for targets no
 * longer configured and lines that do not parse are dropped. */
static void test_owed_save_load(void **state)
{
	struct fx *f = *state;
	uint16_t port;
	struct alert a;
	char *text = NULL, *more;
	size_t len = 0;
	const char *p;

	start_srv(f, 0);
	port = f->srv[0].port;
	/* Down: the server's port, nothing listening on it yet. */
	evhttp_free(f->srv[0].http);
	f->srv[0].http = NULL;
	start_am(f, &port, 1, 0, 60000, 50);
	mk_resolved(&a, "cable_down", "n1-n2");
	alertmanager_alert(f->am, &a, ALERT_EV_RESOLVED);
	mk_resolved(&a, "node_down", "n4");
	alertmanager_alert(f->am, &a, ALERT_EV_RESOLVED);
	LOOP_UNTIL(f, stats(f).retried >= 1);
	assert_int_equal(stats(f).owed, 2);
	assert_true(f->saves >= 1);
	assert_int_equal(alertmanager_owed_text(f->am, &text, &len), 0);
	alertmanager_free(f->am);
	f->am = NULL;

	more = calloc(1, len + 256);
	assert_non_null(more);
	snprintf(more, len + 256,
		 "%sgarbage\nhttp://10.9.9.9:9093\t0123456789abcdef\t{}\n"
		 "http://127.0.0.1:%u\tnothex\t{}",
		 text, (unsigned)port);
	/* Up again, and a new coordinator loads what was owed. */
	f->srv[0].http = evhttp_new(f->base);
	assert_non_null(f->srv[0].http);
	assert_int_equal(evhttp_bind_socket(f->srv[0].http, "127.0.0.1", port),
			 0);
	evhttp_set_gencb(f->srv[0].http, on_request, &f->srv[0]);
	start_am(f, &port, 1, 0, 60000, 50);
	assert_int_equal(alertmanager_owed_load(f->am, more, strlen(more)), 3);
	assert_int_equal(stats(f).owed, 2);
	LOOP_UNTIL(f, stats(f).owed == 0);
	assert_int_equal(f->srv[0].n, 1);
	assert_json(f->srv[0].bodies[0]);
	assert_int_equal(count_alerts(f->srv[0].bodies[0]), 2);
	p = strstr(text, "\t{");
	assert_non_null(p);
	/* The first owed alert's JSON, as it was before the restart. */
	{
		size_t n = strcspn(p + 1, "\n");
		char first[2048];

		assert_true(n < sizeof(first));
		memcpy(first, p + 1, n);
		first[n] = '\0';
		assert_non_null(strstr(f->srv[0].bodies[0], first));
	}
	free(more);
	free(text);
}

/* An Alertmanager that takes the connection and never answers: each
 * attempt ends at alertmanager_timeout, and is retried. */
static void test_timeout_retried(void **state)
{
	struct fx *f = *state;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);
	char url[64];
	struct alertmanager_conf c = {
		.coordinator = "coord1",
		.n_urls = 1,
		.timeout_ms = 300,
		.backoff_ms = 50,
	};
	struct alert a;
	double t0 = now_s();

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->sock >= 0);
	assert_int_equal(bind(f->sock, (struct sockaddr *)&sin, sizeof(sin)),
			 0);
	assert_int_equal(listen(f->sock, 8), 0);
	assert_int_equal(getsockname(f->sock, (struct sockaddr *)&sin, &len),
			 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u",
		 (unsigned)ntohs(sin.sin_port));
	c.urls[0] = url;
	f->am = alertmanager_new(f->base, &c, f->table);
	assert_non_null(f->am);
	mk_resolved(&a, "cable_down", "n1-n2");
	alertmanager_alert(f->am, &a, ALERT_EV_RESOLVED);
	LOOP_UNTIL(f, stats(f).retried >= 2);
	assert_int_equal(stats(f).retried, 2);
	assert_true(now_s() - t0 >= 0.59); /* two whole timeouts */
	assert_int_equal(stats(f).owed, 1);
}

/* A new episode replaces a resolution not yet delivered. */
static void test_refire_replaces_owed(void **state)
{
	struct fx *f = *state;
	uint16_t port = dead_port(f);
	struct alert a;

	start_am(f, &port, 1, 0, 60000, 50);
	mk_resolved(&a, "cable_down", "n1-n2");
	alertmanager_alert(f->am, &a, ALERT_EV_RESOLVED);
	assert_int_equal(stats(f).owed, 1);
	a.resolved_ms = 0;
	a.firing = 1;
	alertmanager_alert(f->am, &a, ALERT_EV_FIRED);
	assert_int_equal(stats(f).owed, 0);
}

/* What alertmanager_new refuses. */
static void test_bad_urls(void **state)
{
	struct fx *f = *state;
	struct alertmanager_conf c = {.coordinator = "c", .n_urls = 1};
	const char *bad[] = {"http://10.0.0.5:9093/api/v2/alerts",
			     "https://10.0.0.5:9093", "http://:9093/",
			     "10.0.0.5:9093"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.urls[0] = bad[i];
		assert_null(alertmanager_new(f->base, &c, f->table));
		assert_int_equal(errno, EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_json_shape, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batches_and_resend, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_4xx_not_retried, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_5xx_retried_with_backoff,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_targets_independent,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_owed_save_load, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_timeout_retried, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_refire_replaces_owed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_urls, setup, teardown),
	};

	log_init("test_alertmanager", NULL, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
