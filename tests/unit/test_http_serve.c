/* http_serve: the request head parser on good and hostile heads, then the
 * server on loopback with small limits, driven by raw client sockets bound
 * to 127.0.0.x (one source each): keep-alive and pipelining, nothing read
 * while a reply waits, the absolute deadlines, the per-source and total
 * caps, and the refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "coordinator/http_serve.h"

/* ---- The parser ---- */

static int parse(const char *text, size_t max, struct http_head *h, char **keep)
{
	char *buf = strdup(text);
	int r;

	assert_non_null(buf);
	r = http_parse_head(buf, strlen(buf), max, h);
	*keep = buf; /* h points into it */
	return r;
}

static void test_parse_good(void **state)
{
	struct http_head h;
	char *b;
	const char *t = "GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\nNEXT";

	(void)state;
	assert_int_equal(parse(t, 8192, &h, &b), (int)strlen(t) - 4);
	assert_string_equal(h.method, "GET");
	assert_string_equal(h.path, "/metrics");
	assert_string_equal(h.query, "x=1");
	assert_int_equal(h.minor, 1);
	assert_true(h.keep);
	assert_int_equal(h.content_length, 0);
	free(b);
	/* HTTP/1.0: closed unless asked to keep it */
	assert_true(parse("GET / HTTP/1.0\r\n\r\n", 8192, &h, &b) > 0);
	assert_false(h.keep);
	assert_null(h.query);
	free(b);
	assert_true(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
			  8192, &h, &b) > 0);
	assert_true(h.keep);
	free(b);
	assert_true(parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: te, "
			  "close\r\n\r\n",
			  8192, &h, &b) > 0);
	assert_false(h.keep);
	free(b);
	/* Bare LF line ends, empty lines before the request */
	assert_true(parse("\r\n\nHEAD /ring.svg HTTP/1.1\nHost: x\n\n", 8192,
			  &h, &b) > 0);
	assert_string_equal(h.method, "HEAD");
	assert_string_equal(h.path, "/ring.svg");
	free(b);
	/* Absolute-form: its path; none is "/" */
	assert_true(parse("GET http://h:9464/metrics?a HTTP/1.1\r\nHost: "
			  "h\r\n\r\n",
			  8192, &h, &b) > 0);
	assert_string_equal(h.path, "/metrics");
	assert_string_equal(h.query, "a");
	free(b);
	assert_true(parse("GET HTTP://h HTTP/1.1\r\nHost: h\r\n\r\n", 8192, &h,
			  &b) > 0);
	assert_string_equal(h.path, "/");
	free(b);
	/* A body's length; a huge one is too large, not malformed */
	assert_true(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: "
			  "12\r\ncontent-length: 12\r\n\r\n",
			  8192, &h, &b) > 0);
	assert_int_equal(h.content_length, 12);
	free(b);
	assert_true(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: "
			  "99999999999999999999999999\r\n\r\n",
			  8192, &h, &b) > 0);
	assert_true(h.content_length > 1u << 30);
	free(b);
	assert_true(parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
			  "chunked\r\n\r\n",
			  8192, &h, &b) > 0);
	assert_true(h.chunked);
	free(b);
}

static void test_parse_incomplete(void **state)
{
	struct http_head h;
	char *b;

	(void)state;
	assert_int_equal(parse("", 8192, &h, &b), 0);
	free(b);
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost: x\r\n", 8192, &h, &b),
			 0);
	free(b);
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost: x\r\n\r", 8192, &h, &b),
			 0);
	free(b);
	assert_int_equal(parse("\r\n\r\n\r\n", 8192, &h, &b), 0);
	free(b);
}

static void test_parse_refused(void **state)
{
	static const struct {
		const char *text;
		int rc;
	} cases[] = {
		{"GET /\r\n\r\n", -400}, /* HTTP/0.9 */
		{"GET / HTTP/2.0\r\n\r\n", -505},
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", -505},
		{"GET / HTTP/1.1\r\n\r\n", -400}, /* no Host */
		{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", -400},
		{"GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n",
		 -400},
		{"GET / HTTP/1.1\r\nHost : x\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nHost: x\r\nX-A: \x01\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n",
		 -400},
		{"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
		 "Content-Length: 2\r\n\r\n",
		 -400},
		{"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n", -400},
		{"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", -400},
		{"GET / HTTP/1.1 \r\nHost: x\r\n\r\n", -400},
		{"G(T / HTTP/1.1\r\nHost: x\r\n\r\n", -400},
		{"GET / HTTP/1.x\r\nHost: x\r\n\r\n", -400},
		{"GET / http/1.1\r\nHost: x\r\n\r\n", -400},
		{"GET ?x HTTP/1.1\r\nHost: x\r\n\r\n", -400},
		{"CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n", -400},
	};
	struct http_head h;
	char *b, big[300];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = parse(cases[i].text, 8192, &h, &b);

		if (r != cases[i].rc)
			fail_msg("case %zu: %d, not %d", i, r, cases[i].rc);
		free(b);
	}
	/* A NUL inside a line */
	memcpy(big, "GET / HTTP/1.1\r\nHost: x\0y\r\n\r\n", 30);
	assert_int_equal(http_parse_head(big, 30, 8192, &h), -400);
	/* Not whole within max: the request line (414) or the rest (431) */
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /", 5);
	assert_int_equal(http_parse_head(big, sizeof(big), 256, &h), -414);
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	assert_int_equal(http_parse_head(big, sizeof(big), 256, &h), -431);
	/* More header lines than allowed */
	{
		size_t n = 0, cap = 64 + 8 * (HTTP_SERVE_MAX_FIELDS + 2);
		char *t = malloc(cap);

		assert_non_null(t);
		n += (size_t)snprintf(t + n, cap - n,
				      "GET / HTTP/1.1\r\nHost: x\r\n");
		for (int i = 0; i < HTTP_SERVE_MAX_FIELDS; i++)
			n += (size_t)snprintf(t + n, cap - n, "A: b\r\n");
		n += (size_t)snprintf(t + n, cap - n, "\r\n");
		assert_int_equal(http_parse_head(t, n, 8192, &h), -431);
		free(t);
	}
}

/* ---- The server ---- */

struct server {
	struct event_base *base;
	struct http_serve *s;
	unsigned calls;
	size_t body; /* bytes each reply carries */
};

static void handler(const struct http_request *req, struct http_reply *rep,
		    void *arg)
{
	struct server *sv = arg;
	char *fill;

	sv->calls++;
	if (strcmp(req->path, "/big")) {
		http_reply_header(rep, "Content-Type", "text/plain");
		evbuffer_add_printf(rep->body, "%s %s\n", req->method,
				    req->path);
		return;
	}
	fill = malloc(sv->body);
	assert_non_null(fill);
	memset(fill, 'x', sv->body);
	evbuffer_add(rep->body, fill, sv->body);
	free(fill);
}

static const struct http_serve_limits small = {
	.max_conns = 4,
	.per_source = 2,
	.request_ms = 600,
	.reply_ms = 600,
	.max_head = 256,
	.max_body = 16,
};

static int setup(void **state)
{
	struct server *sv = calloc(1, sizeof(*sv));
	struct sockaddr_in sin = {.sin_family = AF_INET};

	assert_non_null(sv);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sv->base = event_base_new();
	assert_non_null(sv->base);
	sv->s = http_serve_new(sv->base, (struct sockaddr *)&sin, sizeof(sin),
			       &small, "metrics", handler, sv);
	assert_non_null(sv->s);
	assert_int_not_equal(http_serve_port(sv->s), 0);
	*state = sv;
	return 0;
}

static int teardown(void **state)
{
	struct server *sv = *state;

	http_serve_free(sv->s);
	event_base_free(sv->base);
	free(sv);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A client from 127.0.0.last, connected (non-blocking). */
static int client(struct server *sv, int last)
{
	struct sockaddr_in me = {.sin_family = AF_INET};
	struct sockaddr_in to = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	me.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)last);
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	to.sin_port = htons(http_serve_port(sv->s));
	assert_true(connect(fd, (struct sockaddr *)&to, sizeof(to)) == 0 ||
		    errno == EINPROGRESS);
	return fd;
}

static void say(int fd, const char *text)
{
	assert_int_equal(send(fd, text, strlen(text), MSG_NOSIGNAL),
			 (ssize_t)strlen(text));
}

/* Run the server for ms, or until fd has something to read (or is
 * closed) when fd >= 0. */
static void pump(struct server *sv, int fd, unsigned ms)
{
	uint64_t end = now_ms() + ms;

	while (now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		event_base_loop(sv->base, EVLOOP_NONBLOCK);
		if (fd >= 0 && poll(&p, 1, 0) == 1)
			return;
		usleep(1000);
	}
}

/* What fd has to read within ms (NUL-terminated, into buf); its length, 0
 * on EOF, -1 if nothing came. */
static ssize_t hear(struct server *sv, int fd, char *buf, size_t len,
		    unsigned ms)
{
	ssize_t n;

	pump(sv, fd, ms);
	n = recv(fd, buf, len - 1, MSG_DONTWAIT);
	if (n < 0 && errno == ECONNRESET)
		n = 0;
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static int status_of(const char *reply)
{
	int code = 0;

	return sscanf(reply, "HTTP/1.1 %d ", &code) == 1 ? code : -1;
}

/* Whole replies on one connection, pipelined; kept open after. */
static void test_keep_alive_pipelined(void **state)
{
	struct server *sv = *state;
	int fd = client(sv, 1);
	char buf[4096];
	size_t got = 0;
	const char *p;

	say(fd, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
		"HEAD /b HTTP/1.1\r\nHost: x\r\n\r\n"
		"GET /c HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	while (got < 3 * 60) {
		ssize_t n = hear(sv, fd, buf + got, sizeof(buf) - got, 1000);

		assert_true(n > 0);
		got += (size_t)n;
		if (strstr(buf, "GET /c"))
			break;
	}
	assert_int_equal(sv->calls, 3);
	assert_int_equal(status_of(buf), 200);
	assert_non_null(strstr(buf, "\r\nDate: "));
	assert_non_null(strstr(buf, "\r\nContent-Length: 7\r\n\r\nGET /a\n"));
	/* HEAD: the length, no body: the next reply follows at once */
	p = strstr(buf, "GET /a\nHTTP/1.1 200 OK\r\n");
	assert_non_null(p);
	assert_non_null(strstr(p, "Content-Length: 8\r\n\r\nHTTP/1.1 200"));
	assert_non_null(strstr(p, "Connection: keep-alive\r\n"));
	assert_null(strstr(buf, "HEAD /b"));
	assert_null(strstr(buf, "Connection: close"));
	/* still open */
	assert_int_equal(hear(sv, fd, buf, sizeof(buf), 100), -1);
	close(fd);
}

/* Pipelined requests whose replies are not read: one is answered, the rest
 * waits in the kernel; the reader too slow is closed at reply_ms. */
static void test_nothing_read_while_replying(void **state)
{
	struct server *sv = *state;
	struct http_serve_stats st;
	int fd = client(sv, 1);
	const char *req = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
	uint64_t t0;

	sv->body = 32u << 20; /* more than any socket buffer */
	for (int i = 0; i < 100; i++)
		say(fd, req);
	pump(sv, -1, 300);
	assert_int_equal(sv->calls, 1);
	t0 = now_ms();
	for (;;) {
		http_serve_stats(sv->s, &st);
		if (!st.conns || now_ms() - t0 > 3000)
			break;
		pump(sv, -1, 20);
	}
	assert_int_equal(st.conns, 0);
	assert_int_equal(st.timed_out, 1);
	assert_int_equal(sv->calls, 1);
	close(fd);
}

/* A request trickled a byte at a time is closed at its deadline, with a
 * 408; an idle connection silently. */
static void test_deadline_absolute(void **state)
{
	struct server *sv = *state;
	/* ~80 bytes at one per 50 ms: 4 s, far past the deadline, which a
	 * timer renewed by each byte would never reach */
	const char *req = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "
			  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	int fd = client(sv, 1), idle = client(sv, 2);
	uint64_t t0 = now_ms(), closed = 0, idle_closed = 0;
	char buf[1024] = "";
	size_t sent = 0, got = 0;

	while (now_ms() - t0 < 5000 && (!closed || !idle_closed)) {
		ssize_t n;

		if (!closed && sent < strlen(req) &&
		    send(fd, req + sent, 1, MSG_NOSIGNAL) == 1)
			sent++;
		pump(sv, -1, 50);
		n = closed ? 1
			   : recv(fd, buf + got, sizeof(buf) - 1 - got,
				  MSG_DONTWAIT);
		if (!closed && n > 0) {
			got += (size_t)n;
			buf[got] = '\0';
		}
		if (!closed && (n == 0 || (n < 0 && errno == ECONNRESET)))
			closed = now_ms() - t0;
		if (!idle_closed &&
		    recv(idle, buf + sizeof(buf) - 2, 1, MSG_DONTWAIT) == 0)
			idle_closed = now_ms() - t0;
	}
	assert_int_equal(status_of(buf), 408);
	assert_non_null(strstr(buf, "Connection: close\r\n"));
	assert_true(closed >= small.request_ms - 50);
	/* (slack for ASan on a loaded box) */
	assert_true(closed < small.request_ms + 1200);
	assert_true(sent < strlen(req));
	assert_true(idle_closed >= small.request_ms - 50);
	assert_true(idle_closed < small.request_ms + 1200);
	assert_int_equal(sv->calls, 0);
	close(fd);
	close(idle);
}

/* per_source busy connections from one address: its next one is refused
 * (503) while another address is served; an idle one makes room. */
static void test_per_source(void **state)
{
	struct server *sv = *state;
	int busy[2], late, other, idle[2], third;
	char buf[1024];
	struct http_serve_stats st;

	for (int i = 0; i < 2; i++) {
		busy[i] = client(sv, 2);
		say(busy[i], "GET / HTTP/1.1\r\n");
		pump(sv, -1, 30);
	}
	late = client(sv, 2);
	assert_true(hear(sv, late, buf, sizeof(buf), 1000) > 0);
	assert_int_equal(status_of(buf), 503);
	assert_non_null(strstr(buf, "too many connections from this address"));
	other = client(sv, 3);
	say(other, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_true(hear(sv, other, buf, sizeof(buf), 1000) > 0);
	assert_int_equal(status_of(buf), 200);
	close(other);
	close(late);
	/* Two idle ones from .4: a third displaces the older */
	for (int i = 0; i < 2; i++) {
		idle[i] = client(sv, 4);
		pump(sv, -1, 30);
	}
	third = client(sv, 4);
	say(third, "GET /y HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_true(hear(sv, third, buf, sizeof(buf), 1000) > 0);
	assert_int_equal(status_of(buf), 200);
	assert_int_equal(hear(sv, idle[0], buf, sizeof(buf), 300), 0);
	assert_int_equal(hear(sv, idle[1], buf, sizeof(buf), 50), -1);
	http_serve_stats(sv->s, &st);
	assert_int_equal(st.refused, 1);
	assert_int_equal(st.displaced, 1);
	for (int i = 0; i < 2; i++) {
		close(busy[i]);
		close(idle[i]);
	}
	close(third);
}

/* max_conns busy ones from two addresses: a newcomer from a third gets in,
 * the oldest of the busiest source closed for it; when every source holds
 * one, a newcomer is refused. */
static void test_total(void **state)
{
	struct server *sv = *state;
	int fds[4], fresh, again;
	char buf[1024];

	for (int i = 0; i < 4; i++) {
		fds[i] = client(sv, 2 + i / 2);
		say(fds[i], "GET / HTTP/1.1\r\n");
		pump(sv, -1, 30);
	}
	fresh = client(sv, 9);
	say(fresh, "GET /z HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_true(hear(sv, fresh, buf, sizeof(buf), 1000) > 0);
	assert_int_equal(status_of(buf), 200);
	assert_int_equal(hear(sv, fds[0], buf, sizeof(buf), 300), 0);
	for (int i = 1; i < 4; i++)
		assert_int_equal(hear(sv, fds[i], buf, sizeof(buf), 20), -1);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	close(fresh);
	pump(sv, -1, 100);
	/* Four sources, one busy connection each: a fifth is refused. */
	for (int i = 0; i < 4; i++) {
		fds[i] = client(sv, 20 + i);
		say(fds[i], "GET / HTTP/1.1\r\n");
		pump(sv, -1, 30);
	}
	again = client(sv, 30);
	assert_true(hear(sv, again, buf, sizeof(buf), 1000) > 0);
	assert_int_equal(status_of(buf), 503);
	assert_non_null(strstr(buf, "too many connections (at most"));
	close(again);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
}

/* What cannot be a scrape: refused with the right code, then closed. */
static void test_refusals(void **state)
{
	static const struct {
		const char *req;
		int code;
	} cases[] = {
		{"GET / HTTP/2.0\r\n\r\n", 505},
		{"GET / HTTP/1.1\r\n\r\n", 400},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n",
		 413},
		{"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
		 411},
	};
	struct server *sv = *state;
	char buf[2048], big[600];
	int fd;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fd = client(sv, 5);
		say(fd, cases[i].req);
		assert_true(hear(sv, fd, buf, sizeof(buf), 1000) > 0);
		if (status_of(buf) != cases[i].code)
			fail_msg("case %zu: %s", i, buf);
		assert_non_null(strstr(buf, "Connection: close\r\n"));
		/* then closed */
		assert_int_equal(hear(sv, fd, buf, sizeof(buf), 1000), 0);
		close(fd);
	}
	/* Headers past max_head: 431; the rest of them is read and dropped
	 * so that the reply is not lost to a reset. */
	fd = client(sv, 5);
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	assert_int_equal(send(fd, big, sizeof(big), MSG_NOSIGNAL),
			 (ssize_t)sizeof(big));
	assert_true(hear(sv, fd, buf, sizeof(buf), 1000) > 0);
	assert_int_equal(status_of(buf), 431);
	close(fd);
	/* A small body is read and dropped; the connection serves on. */
	fd = client(sv, 5);
	say(fd, "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nab");
	pump(sv, -1, 100);
	assert_int_equal(sv->calls, 0);
	say(fd, "cGET /q HTTP/1.1\r\nHost: x\r\n\r\n");
	pump(sv, -1, 200);
	assert_int_equal(sv->calls, 2);
	assert_true(hear(sv, fd, buf, sizeof(buf), 1000) > 0);
	assert_non_null(strstr(buf, "POST /p\n"));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_incomplete),
		cmocka_unit_test(test_parse_refused),
		cmocka_unit_test_setup_teardown(test_keep_alive_pipelined,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_nothing_read_while_replying, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline_absolute, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_per_source, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_total, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
