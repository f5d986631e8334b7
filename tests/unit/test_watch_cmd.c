#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frame.h"
#include "ringctl/error_report.h"
#include "ringctl/watch_cmd.h"
#include "testwriter.h"

/* ringctl watch (ringctl/watch_cmd.c): its options, one event in each
 * format, and a real feed over a Unix socket from a fake coordinator. */

static int parse(struct watch_cmd_opts *o, char *err, size_t len, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;

	va_start(ap, len);
	for (char *a; (a = va_arg(ap, char *)) && argc < 16;)
		argv[argc++] = a;
	va_end(ap);
	err[0] = '\0';
	return watch_cmd_parse(argc, argv, o, err, len);
}

static void test_parse_ok(void **state)
{
	struct watch_cmd_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), NULL), 0);
	assert_false(o.counting);
	assert_int_equal(o.n_kinds, 0);
	assert_int_equal(parse(&o, err, sizeof(err), "--count", "0", NULL), 0);
	assert_true(o.counting);
	assert_int_equal(o.count, 0);
	assert_int_equal(parse(&o, err, sizeof(err), "--count=7", "--kind",
			       "edge,alert", "--kind=survey", NULL),
			 0);
	assert_int_equal(o.count, 7);
	assert_int_equal(o.n_kinds, 3);
	assert_string_equal(o.kinds[0], "edge");
	assert_string_equal(o.kinds[1], "alert");
	assert_string_equal(o.kinds[2], "survey");
	/* Empty words between commas are no kind. */
	assert_int_equal(parse(&o, err, sizeof(err), "--kind", ",node,,", NULL),
			 0);
	assert_int_equal(o.n_kinds, 1);
	assert_string_equal(o.kinds[0], "node");
	assert_int_equal(
		parse(&o, err, sizeof(err), "--count", "1000000000", NULL), 0);
}

static void test_parse_refused(void **state)
{
	static const char *const bad_counts[] = {
		"", "-1", "x", "1x", "1000000001", "99999999999999999999"};
	struct watch_cmd_opts o;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad_counts) / sizeof(bad_counts[0]);
	     i++) {
		assert_int_equal(parse(&o, err, sizeof(err), "--count",
				       bad_counts[i], NULL),
				 -1);
		/* The value is named, and what would do. */
		assert_non_null(strstr(err, "--count: '"));
		assert_non_null(strstr(err, bad_counts[i]));
		assert_non_null(strstr(err, "0 to 1000000000"));
	}
	assert_int_equal(parse(&o, err, sizeof(err), "--count", NULL), -1);
	assert_string_equal(err, "--count needs a value");
	assert_int_equal(parse(&o, err, sizeof(err), "--kind", NULL), -1);
	assert_string_equal(err, "--kind needs a value");
	assert_int_equal(parse(&o, err, sizeof(err), "-v", NULL), -1);
	assert_string_equal(err, "watch takes --count N and --kind KIND[,...], "
				 "not '-v'");
	assert_int_equal(parse(&o, err, sizeof(err), "--kind",
			       "a,b,c,d,e,f,g,h,i", NULL),
			 -1);
	assert_string_equal(err, "--kind: at most 8 kinds");
}

static void test_parse_kind_too_long(void **state)
{
	struct watch_cmd_opts o;
	char err[256], big[300];

	(void)state;
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(parse(&o, err, sizeof(err), "--kind", big, NULL), -1);
	assert_string_equal(err, "--kind: too long");
}

/* An edge event with a measurement, one direction not measured. */
struct ev {
	Ring__WatchEvent e;
	Ring__WatchMeasurement m;
	Ring__WatchEdge ed[2];
	Ring__WatchEdge *edp[2];
};

static void ev_measurement(struct ev *x)
{
	ring__watch_event__init(&x->e);
	ring__watch_measurement__init(&x->m);
	x->e.ts_ms = 1700000000000ull;
	x->e.kind = "measurement";
	x->e.subject = "n1-n2";
	x->e.text = "n1-n2 measured: 9.41 Gbps\nforged line";
	x->m.edge = "n1-n2";
	x->m.method = "tcp";
	x->m.nominal_gbps = 10;
	x->m.gbps_a_to_b = 9.41;
	x->m.gbps_b_to_a = -1;
	x->m.latency_p50_us = 31.5;
	x->m.rdma_write_gbps_a_to_b = -1;
	x->m.rdma_write_gbps_b_to_a = -1;
	x->e.measurement = &x->m;
}

static void ev_snapshot(struct ev *x)
{
	static const char *const names[2] = {"n1-n2", "gb10-1.lab-n3"};

	ring__watch_event__init(&x->e);
	x->e.ts_ms = 1700000000000ull;
	x->e.kind = "snapshot";
	x->e.subject = "ring";
	x->e.state = "degraded";
	x->e.text = "4 nodes, 1 edge down";
	x->e.order_valid = 1;
	for (int i = 0; i < 2; i++) {
		ring__watch_edge__init(&x->ed[i]);
		x->ed[i].edge = (char *)names[i];
		x->ed[i].state = i ? "down" : "up";
		x->ed[i].reason = i ? "no carrier" : "";
		x->edp[i] = &x->ed[i];
	}
	x->e.edges = x->edp;
	x->e.n_edges = 2;
}

static char *render(enum writer_format fmt, const Ring__WatchEvent *e)
{
	struct testwriter t;

	watch_cmd_render(testwriter_stream(&t), fmt, e);
	return testwriter_close(&t);
}

static size_t lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_render_plain(void **state)
{
	struct ev x;
	char *s;

	(void)state;
	ev_measurement(&x);
	s = render(WRITER_PLAIN, &x.e);
	/* One line: kind and text, the newline in the text escaped. */
	assert_int_equal(lines(s), 1);
	assert_non_null(strstr(s, " measurement "));
	assert_non_null(strstr(s, "9.41 Gbps\\x0aforged line"));
	free(s);

	/* A snapshot lists its edges under it, a reason after a colon. */
	ev_snapshot(&x);
	s = render(WRITER_PLAIN, &x.e);
	assert_int_equal(lines(s), 3);
	assert_non_null(strstr(s, "\n  n1-n2 up\n"));
	assert_non_null(strstr(s, "\n  gb10-1.lab-n3 down: no carrier\n"));
	free(s);
}

static void test_render_plain_wraps(void **state)
{
	char text[400];
	struct ev x;
	char *s, *line;

	(void)state;
	ev_measurement(&x);
	for (size_t i = 0; i < sizeof(text) - 1; i++)
		text[i] = i % 9 == 8 ? ' ' : 'w';
	text[sizeof(text) - 1] = '\0';
	x.e.text = text;
	s = render(WRITER_PLAIN, &x.e);
	assert_true(lines(s) > 1);
	line = s;
	for (char *nl; (nl = strchr(line, '\n')); line = nl + 1)
		assert_true(nl - line <= 100);
	free(s);
}

static void test_render_keyvalue(void **state)
{
	struct ev x;
	char *s;

	(void)state;
	ev_measurement(&x);
	s = render(WRITER_KEYVALUE, &x.e);
	assert_non_null(strstr(s, "kind=measurement\n"));
	assert_non_null(strstr(s, "ts_ms=1700000000000\n"));
	assert_non_null(strstr(s, "measurement.gbps_a_to_b=9.41\n"));
	/* Not measured: no figure. */
	assert_non_null(strstr(s, "measurement.gbps_b_to_a=\n"));
	assert_non_null(strstr(s, "measurement.latency_p50_us=31.5\n"));
	/* One record: an empty line ends it. */
	assert_int_equal(strcmp(s + strlen(s) - 2, "\n\n"), 0);
	free(s);

	ev_snapshot(&x);
	s = render(WRITER_KEYVALUE, &x.e);
	assert_non_null(strstr(s, "order_valid=yes\n"));
	assert_non_null(strstr(s, "edges.n1-n2.state=up\n"));
	/* A name's dot would read as a level. */
	assert_non_null(strstr(s, "edges.gb10-1_lab-n3.reason=no carrier\n"));
	free(s);
}

static void test_render_json(void **state)
{
	struct ev x;
	char *s;

	(void)state;
	ev_measurement(&x);
	s = render(WRITER_JSON, &x.e);
	/* One object on one line. */
	assert_int_equal(lines(s), 1);
	assert_int_equal(s[0], '{');
	assert_int_equal(strcmp(s + strlen(s) - 2, "}\n"), 0);
	assert_non_null(strstr(s, "\"kind\": \"measurement\""));
	assert_non_null(strstr(s, "\"ts_ms\": 1700000000000"));
	assert_non_null(strstr(s, "\"gbps_a_to_b\": 9.41"));
	assert_non_null(strstr(s, "\"gbps_b_to_a\": null"));
	assert_non_null(strstr(s, "9.41 Gbps\\nforged line"));
	assert_null(strstr(s, "\"missed\""));
	free(s);

	ev_snapshot(&x);
	s = render(WRITER_JSON, &x.e);
	assert_int_equal(lines(s), 1);
	assert_non_null(strstr(s, "\"order_valid\": true"));
	assert_non_null(strstr(s, "\"edges\": [{"));
	assert_non_null(strstr(s, "\"edge\": \"gb10-1.lab-n3\""));
	free(s);

	ring__watch_event__init(&x.e);
	x.e.kind = "lost";
	x.e.missed = 12;
	s = render(WRITER_JSON, &x.e);
	assert_non_null(strstr(s, "\"missed\": 12"));
	free(s);
}

/* A fake coordinator on a Unix socket: reads the request, sends the
 * events given, then closes (or holds still, with hold). */
static pid_t serve(const char *path, const Ring__WatchEvent *const *evs,
		   size_t n, const char *refuse)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	pid_t pid;

	assert_true(lfd >= 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		Ring__Envelope *req = NULL;
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0 || frame_read_fd(fd, 1 << 20, 5000, &req) < 0)
			_exit(1);
		for (size_t i = 0; i < n; i++) {
			Ring__Envelope env = RING__ENVELOPE__INIT;

			env.request_id = req->request_id;
			env.body_case = RING__ENVELOPE__BODY_WATCH_EVENT;
			env.watch_event = (Ring__WatchEvent *)evs[i];
			if (frame_write_fd(fd, &env, 5000) < 0)
				_exit(1);
		}
		if (refuse) {
			Ring__Envelope env = RING__ENVELOPE__INIT;
			Ring__Error e = RING__ERROR__INIT;

			e.text = (char *)refuse;
			env.request_id = req->request_id;
			env.body_case = RING__ENVELOPE__BODY_ERROR;
			env.error = &e;
			frame_write_fd(fd, &env, 5000);
		}
		frame_free(req);
		close(fd);
		_exit(0);
	}
	close(lfd);
	return pid;
}

static void wait_child(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static char *sock_path(void)
{
	static char path[108];

	snprintf(path, sizeof(path), "/tmp/test_watch_cmd.%d.sock",
		 (int)getpid());
	return path;
}

static void test_run_counts(void **state)
{
	struct watch_cmd_opts o;
	struct ev snap, m;
	const Ring__WatchEvent *evs[3];
	Ring__WatchEvent keep = RING__WATCH_EVENT__INIT;
	char err[64];
	pid_t pid;

	(void)state;
	ev_snapshot(&snap);
	ev_measurement(&m);
	keep.kind = "keepalive";
	evs[0] = &snap.e;
	evs[1] = &keep; /* proof of life: not counted, not shown */
	evs[2] = &m.e;
	assert_int_equal(parse(&o, err, sizeof(err), "--count", "1", NULL), 0);
	pid = serve(sock_path(), evs, 3, NULL);
	assert_int_equal(watch_cmd_run(sock_path(), 5000, WRITER_JSON, &o), 0);
	wait_child(pid);
	unlink(sock_path());
}

/* Errors are reported as they happen, in the format chosen: json one
 * object on one line, with the code and the value. */
static void test_run_errors_at_once(void **state)
{
	struct watch_cmd_opts o;
	struct testwriter t;
	struct ev snap;
	const Ring__WatchEvent *evs[1];
	char err[64], *s;
	pid_t pid;

	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), NULL), 0);
	error_report_setup(testwriter_stream(&t));
	error_report_set_format(WRITER_JSON);
	assert_int_equal(
		watch_cmd_run("/nonexistent/ringd.sock", 1000, WRITER_JSON, &o),
		2);
	error_report_setup(stderr);
	s = testwriter_close(&t);
	assert_int_equal(lines(s), 1);
	assert_non_null(strstr(s, "{\"error\": {\"code\": \"unreachable\""));
	assert_non_null(strstr(s, "\"value\": \"/nonexistent/ringd.sock\""));
	assert_non_null(strstr(s, "\"exit_status\": 2}}\n"));
	free(s);

	/* The coordinator refuses after the snapshot: its words. */
	ev_snapshot(&snap);
	evs[0] = &snap.e;
	pid = serve(sock_path(), evs, 1, "too many watchers");
	error_report_setup(testwriter_stream(&t));
	error_report_set_format(WRITER_PLAIN);
	assert_int_equal(watch_cmd_run(sock_path(), 5000, WRITER_PLAIN, &o), 2);
	error_report_setup(stderr);
	s = testwriter_close(&t);
	assert_string_equal(s, "ringctl: coordinator: too many watchers\n");
	free(s);
	wait_child(pid);

	/* It closes after the snapshot: the stream's end is said. */
	pid = serve(sock_path(), evs, 1, NULL);
	error_report_setup(testwriter_stream(&t));
	assert_int_equal(watch_cmd_run(sock_path(), 5000, WRITER_KEYVALUE, &o),
			 2);
	error_report_setup(stderr);
	s = testwriter_close(&t);
	assert_non_null(
		strstr(s, "ringctl: the coordinator closed the stream ("));
	free(s);
	wait_child(pid);
	unlink(sock_path());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_parse_refused),
		cmocka_unit_test(test_parse_kind_too_long),
		cmocka_unit_test(test_render_plain),
		cmocka_unit_test(test_render_plain_wraps),
		cmocka_unit_test(test_render_keyvalue),
		cmocka_unit_test(test_render_json),
		cmocka_unit_test(test_run_counts),
		cmocka_unit_test(test_run_errors_at_once),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
