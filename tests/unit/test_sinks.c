/* sinks: alert_command as a real program (a shell script exec'd directly)
 * and the webhook against a real evhttp server on loopback, both driven by
 * a libevent loop with a deadline; journald only as far as it cannot fail
 * (not under systemd it is one log line). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "log.h"
#include "coordinator/sinks.h"
#include "testutil.h"

#define MAX_BODIES 8

/* The webhook receiver: answers codes[] in turn, then 200. */
struct srv {
	struct evhttp *http;
	uint16_t port;
	char host[64]; /* the Host header expected */
	int n, n_watchdog;
	int codes[MAX_BODIES], n_codes;
	char bodies[MAX_BODIES][4096];
	double at[MAX_BODIES]; /* when each request came, monotonic s */
	int bad_request;       /* method, path or a header not as sent */
	int silent;	       /* answer nothing (the request hangs) */
};

struct fx {
	struct event_base *base;
	struct event *tick;
	double last_tick, max_gap; /* how late the loop ran a 10 ms timer */
	char dir[64], script[96], path[160];
	int fds_before;
	struct sinks *s;
	struct srv srv;
	int sock; /* a port that refuses, or one that never accepts */
};

static const char script[] =
	"#!/bin/sh\n"
	"d=$1\n"
	"case \"$RING_ALERT\" in\n"
	"slow) echo $$ > \"$d/slow.pid\"; sleep 30 ;;\n"
	"block) echo $$ > \"$d/block.pid\"\n"
	"	while [ ! -e \"$d/go\" ]; do sleep 0.02; done ;;\n"
	"fail) echo \"it went wrong\" >&2; exit 3 ;;\n"
	"esac\n"
	"tr '\\0' '\\n' < /proc/$$/environ > \"$d/$RING_ALERT.env\"\n"
	"cat > \"$d/$RING_ALERT.in\"\n"
	"for a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$d/$RING_ALERT.args\"\n"
	"echo \"$RING_ALERT\" >> \"$d/order\"\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct fx *f = arg;
	double t = now_s();

	(void)fd;
	(void)what;
	if (t - f->last_tick > f->max_gap)
		f->max_gap = t - f->last_tick;
	f->last_tick = t;
}

/* Run the loop until cond holds or 10 s pass; the tick keeps it turning. */
#define LOOP_UNTIL(f, cond)                                                    \
	do {                                                                   \
		double end_ = now_s() + 10;                                    \
		while (!(cond) && now_s() < end_)                              \
			event_base_loop((f)->base, EVLOOP_ONCE);               \
	} while (0)

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct timeval tv = {0, 10000};
	FILE *fp;

	assert_non_null(f);
	f->fds_before = count_fds();
	f->sock = -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_sinks.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->script, sizeof(f->script), "%s/hook.sh", f->dir);
	fp = fopen(f->script, "w");
	assert_non_null(fp);
	fputs(script, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(f->script, 0755), 0);
	f->base = event_base_new();
	assert_non_null(f->base);
	f->tick = event_new(f->base, -1, EV_PERSIST, on_tick, f);
	assert_non_null(f->tick);
	assert_int_equal(event_add(f->tick, &tv), 0);
	f->last_tick = now_s();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	sinks_free(f->s);
	if (f->srv.http)
		evhttp_free(f->srv.http);
	if (f->sock >= 0)
		close(f->sock);
	event_free(f->tick);
	event_base_free(f->base);
	testutil_rm_tree(f->dir);
	/* Every command reaped, every pipe, pidfd and socket closed. */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	assert_int_equal(count_fds(), f->fds_before);
	free(f);
	return 0;
}

static void mk_alert(struct alert *a, const char *rule)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->rule, sizeof(a->rule), "%s", rule);
	snprintf(a->subject, sizeof(a->subject), "n1-n2");
	snprintf(a->node, sizeof(a->node), "n1");
	snprintf(a->edge, sizeof(a->edge), "n1-n2");
	a->severity = ALERT_CRITICAL;
	a->firing = 1;
	/* Agent text: a newline, quotes, a byte that is not UTF-8, and
	 * UTF-8 that is. */
	snprintf(a->message, sizeof(a->message),
		 "carrier lost\nat \"both\" ends\xff caf\xc3\xa9");
	a->first_seen_ms = 1700000000123ULL;
	a->last_seen_ms = 1700000005000ULL;
	a->flaps = 2;
}

static struct sinks_stats stats(const struct fx *f)
{
	struct sinks_stats st;

	sinks_stats(f->s, &st);
	return st;
}

static ssize_t slurp(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");
	size_t n;

	if (!fp)
		return -1;
	n = fread(buf, 1, len - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return (ssize_t)n;
}

static const char *fpath(struct fx *f, const char *name)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, name);
	return f->path;
}

static void start_cmd(struct fx *f, uint64_t timeout_ms, size_t queue_max)
{
	char *const argv[] = {f->script, f->dir, "two words", NULL};
	struct sinks_conf c = {
		.coordinator = "coord1",
		.command_argv = argv,
		.command_timeout_ms = timeout_ms,
		.queue_max = queue_max,
	};

	f->s = sinks_new(f->base, &c);
	assert_non_null(f->s);
}

/* argv, the whole environment and the JSON on stdin, exactly. */
static void test_command_env_and_stdin(void **state)
{
	struct fx *f = *state;
	struct alert a;
	char buf[4096], want[256];
	struct sinks_stats st;

	start_cmd(f, 5000, 8);
	mk_alert(&a, "cable_down");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	assert_int_equal(stats(f).queued, 1);
	LOOP_UNTIL(f, stats(f).queued == 0);
	st = stats(f);
	assert_int_equal(st.delivered, 1);
	assert_int_equal(st.failed, 0);
	assert_true(slurp(fpath(f, "cable_down.args"), buf, sizeof(buf)) > 0);
	snprintf(want, sizeof(want), "%s\ntwo words\n", f->dir);
	assert_string_equal(buf, want);
	assert_true(slurp(fpath(f, "cable_down.env"), buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "PATH=/usr/bin:/bin\n"
				 "RING_ALERT=cable_down\n"
				 "RING_EVENT=fired\n"
				 "RING_STATE=firing\n"
				 "RING_SEVERITY=critical\n"
				 "RING_SUBJECT=n1-n2\n"
				 "RING_NODE=n1\n"
				 "RING_EDGE=n1-n2\n"
				 "RING_RING=\n"
				 "RING_MESSAGE=carrier lost\\nat \"both\" "
				 "ends\\xff caf\xc3\xa9\n"
				 "RING_FIRST_SEEN=2023-11-14T22:13:20.123Z\n"
				 "RING_RESOLVED=\n"
				 "RING_COORDINATOR=coord1\n");
	assert_true(slurp(fpath(f, "cable_down.in"), buf, sizeof(buf)) > 0);
	assert_string_equal(
		buf,
		"{\"rule\":\"cable_down\",\"event\":\"fired\","
		"\"state\":\"firing\",\"severity\":\"critical\","
		"\"subject\":\"n1-n2\",\"node\":\"n1\",\"edge\":\"n1-n2\","
		"\"ring\":\"\","
		"\"message\":\"carrier lost\\u000aat \\\"both\\\" "
		"ends\xef\xbf\xbd caf\xc3\xa9\","
		"\"first_seen\":\"2023-11-14T22:13:20.123Z\","
		"\"last_seen\":\"2023-11-14T22:13:25.000Z\","
		"\"resolved\":null,\"flaps\":2,\"coordinator\":\"coord1\"}\n");

	/* Resolved: the state and time say so. */
	a.firing = 0;
	a.resolved_ms = 1700000060000ULL;
	snprintf(a.rule, sizeof(a.rule), "cable_up");
	sinks_alert(f->s, &a, ALERT_EV_RESOLVED);
	LOOP_UNTIL(f, stats(f).queued == 0);
	assert_int_equal(stats(f).delivered, 2);
	assert_true(slurp(fpath(f, "cable_up.env"), buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\nRING_STATE=resolved\n"));
	assert_non_null(strstr(buf, "\nRING_EVENT=resolved\n"));
	assert_non_null(
		strstr(buf, "\nRING_RESOLVED=2023-11-14T22:14:20.000Z\n"));
	assert_true(slurp(fpath(f, "cable_up.in"), buf, sizeof(buf)) > 0);
	assert_non_null(
		strstr(buf, "\"resolved\":\"2023-11-14T22:14:20.000Z\""));

	/* A resolution says what cleared, not the firing text again. */
	snprintf(a.rule, sizeof(a.rule), "cable_down2");
	snprintf(a.resolved_message, sizeof(a.resolved_message),
		 "cable n1-n2 is up again after 34 s");
	sinks_alert(f->s, &a, ALERT_EV_RESOLVED);
	LOOP_UNTIL(f, stats(f).queued == 0);
	assert_true(slurp(fpath(f, "cable_down2.env"), buf, sizeof(buf)) > 0);
	assert_non_null(strstr(
		buf, "\nRING_MESSAGE=cable n1-n2 is up again after 34 s\n"));
	assert_true(slurp(fpath(f, "cable_down2.in"), buf, sizeof(buf)) > 0);
	assert_non_null(strstr(
		buf, "\"message\":\"cable n1-n2 is up again after 34 s\""));
	assert_non_null(strstr(buf, "\"firing_message\":\"carrier lost"));

	/* The periodic health report, as an event of its own. */
	sinks_report(f->s, "degraded", "health report: degraded; ring");
	LOOP_UNTIL(f, stats(f).queued == 0);
	assert_true(slurp(fpath(f, "health_report.env"), buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\nRING_EVENT=report\n"));
	assert_non_null(strstr(buf, "\nRING_STATE=degraded\n"));
	assert_non_null(strstr(buf, "\nRING_SEVERITY=degraded\n"));
	assert_non_null(
		strstr(buf, "\nRING_MESSAGE=health report: degraded; ring\n"));
}

/* Past its timeout a command is killed (its children with it) and counted
 * failed; a non-zero exit is failed too; the next queued one still runs. */
static void test_command_timeout_and_failure(void **state)
{
	struct fx *f = *state;
	struct alert a;
	char buf[256];
	struct sinks_stats st;
	long pid;

	start_cmd(f, 1000, 8);
	mk_alert(&a, "slow");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	mk_alert(&a, "fail");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	mk_alert(&a, "after");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	assert_int_equal(stats(f).queued, 3);
	LOOP_UNTIL(f, stats(f).queued == 0);
	st = stats(f);
	assert_int_equal(st.failed, 2);
	assert_int_equal(st.delivered, 1);
	assert_int_equal(st.dropped, 0);
	assert_true(slurp(fpath(f, "slow.pid"), buf, sizeof(buf)) > 0);
	pid = strtol(buf, NULL, 10);
	assert_true(pid > 0);
	/* Reaped: no such process any more. */
	assert_int_equal(kill((pid_t)pid, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_true(slurp(fpath(f, "order"), buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "after\n");
	/* The loop turned while the slow one ran. */
	assert_true(f->max_gap < 0.5);
}

/* One command at a time; beyond queue_max waiting, the oldest is dropped
 * and the rest run in order. */
static void test_command_queue_drops_oldest(void **state)
{
	struct fx *f = *state;
	struct alert a;
	char buf[256];
	struct sinks_stats st;
	FILE *fp;

	start_cmd(f, 10000, 2);
	mk_alert(&a, "block");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	mk_alert(&a, "q1");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	mk_alert(&a, "q2");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	mk_alert(&a, "q3");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	st = stats(f);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.queued, 3); /* block runs, q2 and q3 wait */
	LOOP_UNTIL(f, access(fpath(f, "block.pid"), F_OK) == 0);
	/* Still one at a time: nothing else ran meanwhile. */
	assert_int_equal(access(fpath(f, "order"), F_OK), -1);
	fp = fopen(fpath(f, "go"), "w");
	assert_non_null(fp);
	fclose(fp);
	LOOP_UNTIL(f, stats(f).queued == 0);
	st = stats(f);
	assert_int_equal(st.delivered, 3);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.dropped, 1);
	assert_true(slurp(fpath(f, "order"), buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "block\nq2\nq3\n");
	assert_int_equal(access(fpath(f, "q1.env"), F_OK), -1);
}

/* ---- webhook ---- */

static void on_request(struct evhttp_request *req, void *arg)
{
	struct srv *v = arg;
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	const char *ct = evhttp_find_header(h, "Content-Type");
	const char *host = evhttp_find_header(h, "Host");
	size_t n = evbuffer_get_length(in);
	int i = v->n++;
	int code = i < v->n_codes ? v->codes[i] : 200;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST ||
	    strcmp(evhttp_request_get_uri(req), "/hook/ringd") || !ct ||
	    strcmp(ct, "application/json") || !host || strcmp(host, v->host))
		v->bad_request++;
	if (i < MAX_BODIES) {
		if (n >= sizeof(v->bodies[i]))
			n = sizeof(v->bodies[i]) - 1;
		evbuffer_copyout(in, v->bodies[i], n);
		v->bodies[i][n] = '\0';
		v->at[i] = now_s();
		if (strstr(v->bodies[i], "\"alertname\":\"watchdog\""))
			v->n_watchdog++;
	}
	if (v->silent)
		return; /* freed with the connection by evhttp_free */
	evhttp_send_reply(req, code, code == 200 ? "OK" : "Oops", NULL);
}

static void start_srv(struct fx *f)
{
	struct evhttp_bound_socket *bs;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	f->srv.http = evhttp_new(f->base);
	assert_non_null(f->srv.http);
	bs = evhttp_bind_socket_with_handle(f->srv.http, "127.0.0.1", 0);
	assert_non_null(bs);
	assert_int_equal(getsockname(evhttp_bound_socket_get_fd(bs),
				     (struct sockaddr *)&sin, &len),
			 0);
	f->srv.port = ntohs(sin.sin_port);
	snprintf(f->srv.host, sizeof(f->srv.host), "127.0.0.1:%u",
		 (unsigned)f->srv.port);
	evhttp_set_gencb(f->srv.http, on_request, &f->srv);
}

/* A socket on a loopback port: listening (it never accepts, so requests
 * hang) or not (connections are refused). Returns the port. */
static uint16_t dead_port(struct fx *f, int listening)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->sock >= 0);
	assert_int_equal(bind(f->sock, (struct sockaddr *)&sin, sizeof(sin)),
			 0);
	if (listening)
		assert_int_equal(listen(f->sock, 8), 0);
	assert_int_equal(getsockname(f->sock, (struct sockaddr *)&sin, &len),
			 0);
	return ntohs(sin.sin_port);
}

static void start_hook_at(struct fx *f, const char *host, uint16_t port,
			  uint64_t timeout_ms, unsigned retries,
			  uint64_t backoff_ms, uint64_t watchdog_ms)
{
	char url[96];
	struct sinks_conf c = {
		.coordinator = "coord1",
		.webhook_url = url,
		.webhook_timeout_ms = timeout_ms,
		.webhook_retries = retries,
		.webhook_backoff_ms = backoff_ms,
		.queue_max = 8,
		.watchdog_interval_ms = watchdog_ms,
	};

	snprintf(url, sizeof(url), "http://%s:%u/hook/ringd", host,
		 (unsigned)port);
	f->s = sinks_new(f->base, &c);
	assert_non_null(f->s);
}

static void start_hook(struct fx *f, uint16_t port, uint64_t timeout_ms,
		       unsigned retries, uint64_t backoff_ms,
		       uint64_t watchdog_ms)
{
	start_hook_at(f, "127.0.0.1", port, timeout_ms, retries, backoff_ms,
		      watchdog_ms);
}

static const char *fingerprint(const char *body, char *buf)
{
	const char *p = strstr(body, "\"fingerprint\":\"");

	assert_non_null(p);
	p += strlen("\"fingerprint\":\"");
	for (int i = 0; i < 16; i++)
		assert_non_null(strchr("0123456789abcdef", p[i]));
	assert_int_equal(p[16], '"');
	memcpy(buf, p, 16);
	buf[16] = '\0';
	return buf;
}

/* 500, 500, then 200: delivered after two retries, the same payload each
 * time, the backoff doubling in between; then the resolution. */
static void test_webhook_retries_then_delivers(void **state)
{
	struct fx *f = *state;
	struct alert a;
	struct sinks_stats st;
	char fp1[17], fp2[17];
	const char *b;

	start_srv(f);
	f->srv.codes[0] = f->srv.codes[1] = 500;
	f->srv.n_codes = 2;
	start_hook(f, f->srv.port, 5000, 3, 100, 0);
	mk_alert(&a, "cable_down");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	LOOP_UNTIL(f, stats(f).queued == 0);
	st = stats(f);
	assert_int_equal(st.delivered, 1);
	assert_int_equal(st.retried, 2);
	assert_int_equal(st.failed, 0);
	assert_int_equal(f->srv.n, 3);
	assert_int_equal(f->srv.bad_request, 0);
	assert_string_equal(f->srv.bodies[0], f->srv.bodies[1]);
	assert_string_equal(f->srv.bodies[0], f->srv.bodies[2]);
	/* Not earlier than the backoff said (100 ms, then 200 ms). */
	assert_true(f->srv.at[1] - f->srv.at[0] >= 0.095);
	assert_true(f->srv.at[2] - f->srv.at[1] >= 0.195);
	b = f->srv.bodies[0];
	assert_non_null(strstr(b, "{\"version\":\"4\",\"groupKey\":"));
	assert_non_null(
		strstr(b, "\"status\":\"firing\",\"receiver\":\"ringd\""));
	assert_non_null(
		strstr(b, "\"groupLabels\":{\"alertname\":\"cable_down\"}"));
	assert_non_null(
		strstr(b, "\"commonLabels\":{\"alertname\":\"cable_down\","
			  "\"severity\":\"critical\",\"node\":\"n1\",\"edge\":"
			  "\"n1-n2\",\"subject\":\"n1-n2\",\"coordinator\":"
			  "\"coord1\"}"));
	assert_non_null(strstr(b, "\"externalURL\":\"\""));
	assert_non_null(strstr(b, "\"alerts\":[{\"status\":\"firing\","
				  "\"labels\":{\"alertname\":\"cable_down\""));
	assert_non_null(strstr(
		b, "\"annotations\":{\"summary\":\"carrier lost\\u000aat "
		   "\\\"both\\\" ends\xef\xbf\xbd caf\xc3\xa9\","));
	assert_non_null(strstr(b, "\"startsAt\":\"2023-11-14T22:13:20.123Z\","
				  "\"endsAt\":\"0001-01-01T00:00:00Z\","
				  "\"generatorURL\":\"\""));
	fingerprint(b, fp1);
	assert_string_equal(b + strlen(b) - 4, "\"}]}");

	a.firing = 0;
	a.resolved_ms = 1700000060000ULL;
	sinks_alert(f->s, &a, ALERT_EV_RESOLVED);
	LOOP_UNTIL(f, stats(f).queued == 0);
	assert_int_equal(stats(f).delivered, 2);
	assert_int_equal(f->srv.n, 4);
	b = f->srv.bodies[3];
	assert_non_null(strstr(b, "\"status\":\"resolved\",\"receiver\""));
	assert_non_null(strstr(b, "\"endsAt\":\"2023-11-14T22:14:20.000Z\""));
	/* The same alert: the same fingerprint. */
	assert_string_equal(fingerprint(b, fp2), fp1);
}

/* A host name goes through libevent's asynchronous resolver (here from
 * /etc/hosts), not a blocking getaddrinfo; the Host header names it. The
 * receiver listens on ::1 too where there is one, whichever localhost
 * resolves to first. */
static void test_webhook_by_name(void **state)
{
	struct fx *f = *state;
	struct alert a;

	start_srv(f);
	evhttp_bind_socket(f->srv.http, "::1", f->srv.port);
	snprintf(f->srv.host, sizeof(f->srv.host), "localhost:%u",
		 (unsigned)f->srv.port);
	start_hook_at(f, "localhost", f->srv.port, 5000, 0, 100, 0);
	mk_alert(&a, "cable_down");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	LOOP_UNTIL(f, stats(f).queued == 0);
	assert_int_equal(stats(f).delivered, 1);
	assert_int_equal(f->srv.n, 1);
	assert_int_equal(f->srv.bad_request, 0);
}

/* Nothing listening: every attempt refused, then failed for good; the
 * loop kept running its other timers meanwhile. */
static void test_webhook_receiver_down(void **state)
{
	struct fx *f = *state;
	struct alert a;
	struct sinks_stats st;

	start_hook(f, dead_port(f, 0), 3000, 2, 50, 0);
	mk_alert(&a, "cable_down");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	LOOP_UNTIL(f, stats(f).queued == 0);
	st = stats(f);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.retried, 2);
	assert_int_equal(st.delivered, 0);
	assert_true(f->max_gap < 0.5);
}

/* A receiver that takes the connection and never answers: each attempt
 * ends at webhook_timeout, the loop is never held for it. */
static void test_webhook_receiver_silent(void **state)
{
	struct fx *f = *state;
	struct alert a;
	struct sinks_stats st;
	double t0 = now_s();

	start_hook(f, dead_port(f, 1), 1000, 1, 50, 0);
	mk_alert(&a, "cable_down");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	LOOP_UNTIL(f, stats(f).queued == 0);
	st = stats(f);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.retried, 1);
	assert_true(now_s() - t0 >= 1.95); /* two whole timeouts */
	assert_true(f->max_gap < 0.5);
}

/* The Watchdog alert arrives on its interval, firing, without any alert
 * being raised. */
static void test_webhook_watchdog(void **state)
{
	struct fx *f = *state;
	const char *b;

	start_srv(f);
	start_hook(f, f->srv.port, 5000, 0, 100, 50);
	LOOP_UNTIL(f, f->srv.n_watchdog >= 3 && stats(f).delivered >= 3);
	assert_true(f->srv.n_watchdog >= 3);
	assert_int_equal(f->srv.n, f->srv.n_watchdog); /* nothing else */
	assert_int_equal(f->srv.bad_request, 0);
	b = f->srv.bodies[0];
	assert_non_null(strstr(b, "\"status\":\"firing\""));
	assert_non_null(strstr(b, "\"labels\":{\"alertname\":\"watchdog\","
				  "\"severity\":\"info\",\"subject\":"
				  "\"coord1\",\"coordinator\":\"coord1\"}"));
	assert_non_null(strstr(b, "\"endsAt\":\"0001-01-01T00:00:00Z\""));
	assert_true(stats(f).delivered >= 3);
}

/* A 4xx is the receiver refusing what was sent: not retried, the next
 * alert goes at once. */
static void test_webhook_4xx_not_retried(void **state)
{
	struct fx *f = *state;
	struct alert a;
	struct sinks_stats st;

	start_srv(f);
	f->srv.codes[0] = 400;
	f->srv.n_codes = 1;
	start_hook(f, f->srv.port, 5000, 3, 100, 0);
	mk_alert(&a, "cable_down");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	mk_alert(&a, "node_down");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	LOOP_UNTIL(f, stats(f).queued == 0);
	st = stats(f);
	assert_int_equal(f->srv.n, 2);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.retried, 0);
	assert_int_equal(st.delivered, 1);
	assert_non_null(
		strstr(f->srv.bodies[1], "\"alertname\":\"node_down\""));
}

/* An alert that fails backs off behind the others: the next one is sent
 * at once, the failed one after its backoff; a newer state of an alert
 * that waits replaces it. */
static void test_webhook_failing_does_not_hold(void **state)
{
	struct fx *f = *state;
	struct alert a;

	start_srv(f);
	f->srv.codes[0] = 500;
	f->srv.n_codes = 1;
	start_hook(f, f->srv.port, 5000, 3, 1000, 0);
	mk_alert(&a, "cable_down");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	mk_alert(&a, "node_down");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	LOOP_UNTIL(f, f->srv.n >= 2);
	assert_non_null(
		strstr(f->srv.bodies[1], "\"alertname\":\"node_down\""));
	assert_true(f->srv.at[1] - f->srv.at[0] < 0.5);
	/* cable_down waits for its backoff; its resolution replaces it. */
	mk_alert(&a, "cable_down");
	a.firing = 0;
	a.resolved_ms = 1700000060000ULL;
	sinks_alert(f->s, &a, ALERT_EV_RESOLVED);
	LOOP_UNTIL(f, stats(f).queued == 0);
	assert_int_equal(f->srv.n, 3);
	assert_non_null(strstr(f->srv.bodies[2], "\"status\":\"resolved\""));
	assert_int_equal(stats(f).delivered, 2);
}

/* sinks_free with a command running and a request in flight: the command
 * is killed and reaped, the connection closed (teardown counts fds and
 * children, ASan the memory). */
static void test_free_while_busy(void **state)
{
	struct fx *f = *state;
	char *const argv[] = {f->script, f->dir, NULL};
	char url[96];
	struct sinks_conf c = {
		.coordinator = "coord1",
		.command_argv = argv,
		.command_timeout_ms = 10000,
		.webhook_url = url,
		.webhook_timeout_ms = 10000,
		.webhook_retries = 3,
		.webhook_backoff_ms = 100,
		.queue_max = 4,
	};
	struct alert a;
	char buf[64];
	long pid;

	start_srv(f);
	f->srv.silent = 1;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/hook/ringd",
		 (unsigned)f->srv.port);
	f->s = sinks_new(f->base, &c);
	assert_non_null(f->s);
	mk_alert(&a, "block");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	mk_alert(&a, "q1");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	LOOP_UNTIL(f,
		   access(fpath(f, "block.pid"), F_OK) == 0 && f->srv.n == 1);
	assert_int_equal(f->srv.n, 1);
	assert_int_equal(stats(f).queued, 4);
	assert_true(slurp(fpath(f, "block.pid"), buf, sizeof(buf)) > 0);
	pid = strtol(buf, NULL, 10);
	sinks_free(f->s);
	f->s = NULL;
	assert_int_equal(kill((pid_t)pid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

/* What stderr gets while f runs (caller frees); cmocka reports failures
 * on stderr too, so only around the call. */
static char *capture(void (*fn)(struct fx *), struct fx *f)
{
	FILE *cap = tmpfile();
	int saved;
	long len;
	char *buf;

	assert_non_null(cap);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(cap), STDERR_FILENO) >= 0);
	fn(f);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	len = ftell(cap);
	assert_true(len >= 0);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	rewind(cap);
	assert_int_equal(fread(buf, 1, (size_t)len, cap), (size_t)len);
	fclose(cap);
	return buf;
}

static void raise_and_resolve(struct fx *f)
{
	struct alert a;

	mk_alert(&a, "cable_down");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	a.firing = 0;
	a.resolved_ms = 1700000060000ULL;
	sinks_alert(f->s, &a, ALERT_EV_RESOLVED);
}

/* Not under systemd, each transition is one escaped log line; with no
 * command or webhook nothing is queued. */
static void test_log_line(void **state)
{
	struct fx *f = *state;
	struct sinks_conf c = {.coordinator = "coord1", .webhook_url = ""};
	char *out, *nl;

	f->s = sinks_new(f->base, &c);
	assert_non_null(f->s);
	out = capture(raise_and_resolve, f);
	nl = strchr(out, '\n');
	assert_non_null(nl);
	*nl = '\0';
	assert_non_null(strstr(out, "info: alert fired: cable_down n1-n2: "
				    "carrier lost\\nat \"both\" ends\\xff "
				    "caf\xc3\xa9"));
	assert_non_null(strstr(nl + 1, "info: alert resolved: cable_down "
				       "n1-n2: carrier lost\\nat"));
	assert_int_equal(strchr(nl + 1, '\n')[1], '\0'); /* two lines */
	free(out);
	assert_int_equal(stats(f).queued, 0);
	assert_int_equal(stats(f).delivered, 0);
}

/* The table's watchdog alert: journald (here the log line) only; the
 * command and the webhook get it from the sinks' own timer. */
static void test_table_watchdog_not_queued(void **state)
{
	struct fx *f = *state;
	struct alert a;

	start_srv(f);
	start_hook(f, f->srv.port, 5000, 0, 100, 0);
	mk_alert(&a, "watchdog");
	a.severity = ALERT_INFO;
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	assert_int_equal(stats(f).queued, 0);
	mk_alert(&a, "cable_down");
	sinks_alert(f->s, &a, ALERT_EV_FIRED);
	assert_int_equal(stats(f).queued, 1);
	LOOP_UNTIL(f, stats(f).queued == 0);
	assert_int_equal(f->srv.n, 1);
	assert_int_equal(f->srv.n_watchdog, 0);
}

/* What sinks_new refuses. */
static void test_bad_conf(void **state)
{
	struct fx *f = *state;
	char *const rel[] = {"hook.sh", NULL};
	struct sinks_conf c = {.coordinator = "c", .command_argv = rel};

	assert_null(sinks_new(f->base, &c));
	assert_int_equal(errno, EINVAL);
	c.command_argv = NULL;
	c.webhook_url = "https://example.org/hook";
	assert_null(sinks_new(f->base, &c));
	assert_int_equal(errno, EINVAL);
	c.webhook_url = "http://:80/";
	assert_null(sinks_new(f->base, &c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_command_env_and_stdin,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_command_timeout_and_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command_queue_drops_oldest,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_webhook_retries_then_delivers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_webhook_by_name, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_webhook_receiver_down,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_webhook_receiver_silent,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_webhook_watchdog, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_webhook_4xx_not_retried,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_webhook_failing_does_not_hold, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_while_busy, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_table_watchdog_not_queued,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_conf, setup, teardown),
	};

	/* SIGPIPE left at its default, unlike ring-coordinator: a command
	 * that does not read its stdin must not kill the writer. */
	log_init("test_sinks", NULL, 1);
	/* The log line, not journald, whatever started us. */
	unsetenv("JOURNAL_STREAM");
	unsetenv("INVOCATION_ID");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
