/* tcptest: both sides of real tests over 127.0.0.1 in one event loop. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "log.h"
#include "agent/tcptest.h"

static const uint8_t token1[TCPTEST_TOKEN_LEN] = "0123456789abcdef";
static const uint8_t token2[TCPTEST_TOKEN_LEN] = "fedcba9876543210";

struct side {
	struct tcptest *t;
	int calls;
	int keep;  /* do not free in the callback */
	double at; /* seconds after the test started, when the callback ran */
	struct engine_result r;
	struct fixture *f;
};

struct fixture {
	struct event_base *base;
	struct event *watchdog;
	double start;
	int pending; /* callbacks still expected */
	uint16_t port;
	struct tcptest_params p;
	struct side a, b, extra;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_done(struct tcptest *t, const struct engine_result *r, void *arg)
{
	struct side *s = arg;
	struct fixture *f = s->f;

	assert_ptr_equal(t, s->t);
	s->calls++;
	s->r = *r;
	s->at = now_s() - f->start;
	if (!s->keep) {
		tcptest_free(t);
		s->t = NULL;
	}
	/* The loop ends by itself once no test has an event left. */
	if (--f->pending == 0)
		event_del(f->watchdog);
}

static void on_watchdog(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	fail_msg("test did not finish in time");
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct timeval tv = {.tv_sec = 60};

	assert_non_null(f);
	f->base = event_base_new();
	assert_non_null(f->base);
	f->watchdog = evtimer_new(f->base, on_watchdog, f);
	evtimer_add(f->watchdog, &tv);
	f->a.f = f->b.f = f->extra.f = f;
	f->start = now_s();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	tcptest_free(f->a.t);
	tcptest_free(f->b.t);
	tcptest_free(f->extra.t);
	event_free(f->watchdog);
	event_base_free(f->base);
	free(f);
	return 0;
}

static void bw_params(struct tcptest_params *p, unsigned streams,
		      enum tcptest_dir dir, unsigned duration_ms)
{
	memset(p, 0, sizeof(*p));
	p->kind = TCPTEST_BW;
	p->streams = streams;
	p->dir = dir;
	p->duration_ms = duration_ms;
}

/* B listens, A connects with the given token; both report to f. */
static void start_pair(struct fixture *f, const uint8_t *token_a,
		       unsigned accept_ms)
{
	f->port = 0;
	f->b.t = tcptest_listen(f->base, "127.0.0.1", token1, &f->p, accept_ms,
				on_done, &f->b, &f->port);
	assert_non_null(f->b.t);
	assert_int_not_equal(f->port, 0);
	f->a.t = tcptest_connect(f->base, "127.0.0.1", f->port, "", token_a,
				 &f->p, 2000, on_done, &f->a);
	assert_non_null(f->a.t);
	f->pending += 2;
}

static void run_loop(struct fixture *f)
{
	assert_int_equal(event_base_dispatch(f->base), 1);
}

static void check_bw_side(const struct side *s, const struct tcptest_params *p,
			  int is_a)
{
	const struct engine_result *r = &s->r;
	double want = p->duration_ms / 1000.0;
	int sent = 0, received = 0;

	assert_int_equal(s->calls, 1);
	if (r->err)
		print_error("%s: %s\n", is_a ? "A" : "B", r->error);
	assert_int_equal(r->err, 0);
	assert_int_equal(r->kind, TCPTEST_BW);
	assert_int_equal(r->n_streams, p->streams);
	if (!(r->window_s > want * 0.8 && r->window_s < want * 1.2))
		fail_msg("%s: window %.3f s, expected %.3f s +- 20%%",
			 is_a ? "A" : "B", r->window_s, want);
	for (unsigned i = 0; i < r->n_streams; i++) {
		const struct engine_stream *st = &r->streams[i];
		int a_sends = p->dir == TCPTEST_A_TO_B ||
			      (p->dir == TCPTEST_BOTH && i % 2 == 0);

		assert_int_equal(st->index, i);
		assert_int_equal(!!st->sending, is_a ? a_sends : !a_sends);
		if (st->sending) {
			sent++;
			assert_true(st->bytes > 0);
			assert_true(st->gbps > 0);
		} else {
			received++;
			assert_int_equal(st->retransmits, 0);
		}
	}
	assert_true(sent ? r->gbps_sent > 0 : r->gbps_sent == 0);
	assert_true(received ? r->gbps_received > 0 : r->gbps_received == 0);
	assert_true(r->cpu_pct > 0);
	assert_int_equal(r->n_lat, 0);
}

static void run_bw(void **state, unsigned streams, enum tcptest_dir dir)
{
	struct fixture *f = *state;

	bw_params(&f->p, streams, dir, 300);
	start_pair(f, token1, 2000);
	run_loop(f);
	check_bw_side(&f->a, &f->p, 1);
	check_bw_side(&f->b, &f->p, 0);
}

static void test_bw_a_to_b_1(void **state)
{
	run_bw(state, 1, TCPTEST_A_TO_B);
}

static void test_bw_a_to_b_4(void **state)
{
	run_bw(state, 4, TCPTEST_A_TO_B);
}

static void test_bw_b_to_a(void **state)
{
	run_bw(state, 2, TCPTEST_B_TO_A);
}

static void test_bw_both(void **state)
{
	run_bw(state, 4, TCPTEST_BOTH);
}

/* 128 threads on a small test machine: structure only, since the
 * scheduler, not the engine, decides who gets the CPU (under valgrind or
 * TSan a stream may not move a byte in the window). */
static void test_bw_max_streams(void **state)
{
	struct fixture *f = *state;

	bw_params(&f->p, TCPTEST_MAX_STREAMS, TCPTEST_BOTH, 300);
	start_pair(f, token1, 5000);
	run_loop(f);
	assert_int_equal(f->a.calls, 1);
	assert_int_equal(f->b.calls, 1);
	if (f->a.r.err || f->b.r.err)
		fail_msg("A: %s; B: %s", f->a.r.error, f->b.r.error);
	assert_int_equal(f->a.r.n_streams, TCPTEST_MAX_STREAMS);
	assert_int_equal(f->b.r.n_streams, TCPTEST_MAX_STREAMS);
	for (unsigned i = 0; i < TCPTEST_MAX_STREAMS; i++) {
		assert_int_equal(f->a.r.streams[i].index, i);
		assert_int_equal(f->a.r.streams[i].sending, i % 2 == 0);
		assert_int_equal(f->b.r.streams[i].sending, i % 2 == 1);
	}
}

static void test_bw_warmup(void **state)
{
	struct fixture *f = *state;

	bw_params(&f->p, 1, TCPTEST_A_TO_B, 200);
	f->p.warmup_ms = 200;
	start_pair(f, token1, 2000);
	run_loop(f);
	check_bw_side(&f->a, &f->p, 1);
	check_bw_side(&f->b, &f->p, 0);
	/* warm-up + window, not the window alone */
	assert_true(f->a.at >= 0.4);
}

static void test_latency(void **state)
{
	struct fixture *f = *state;
	const struct engine_result *r = &f->a.r;

	memset(&f->p, 0, sizeof(f->p));
	f->p.kind = TCPTEST_LAT;
	f->p.n_sizes = 2;
	f->p.sizes[0] = 64;
	f->p.sizes[1] = 4096;
	f->p.iterations = 200;
	f->p.lat_warmup = 10;
	/* A keeps its test past the callback: freed after the loop. */
	f->a.keep = 1;
	start_pair(f, token1, 2000);
	run_loop(f);
	assert_int_equal(f->a.calls, 1);
	assert_int_equal(f->b.calls, 1);
	if (r->err)
		print_error("A: %s\n", r->error);
	assert_int_equal(r->err, 0);
	assert_int_equal(f->b.r.err, 0);
	assert_int_equal(r->kind, TCPTEST_LAT);
	assert_int_equal(r->n_lat, 2);
	for (unsigned i = 0; i < 2; i++) {
		const struct stats_summary *s = &r->lat[i].us;

		assert_int_equal(r->lat[i].size, f->p.sizes[i]);
		assert_int_equal(s->n, 200);
		assert_true(s->min > 0);
		assert_true(s->min <= s->p50);
		assert_true(s->p50 <= s->p99);
		assert_true(s->p99 <= s->p999);
		assert_true(s->p999 <= s->max);
		assert_true(s->min <= s->mean && s->mean <= s->max);
	}
	assert_int_equal(f->b.r.n_lat, 0);
	assert_non_null(f->a.t);
	tcptest_free(f->a.t);
	f->a.t = NULL;
}

static void test_wrong_token(void **state)
{
	struct fixture *f = *state;

	bw_params(&f->p, 1, TCPTEST_A_TO_B, 300);
	start_pair(f, token2, 1000);
	run_loop(f);
	/* A learns at once why it was turned away. */
	assert_int_equal(f->a.calls, 1);
	assert_int_not_equal(f->a.r.err, 0);
	assert_non_null(strstr(f->a.r.error, "token"));
	assert_true(f->a.at < 1.0);
	/* B kept waiting for the right peer until its accept deadline. */
	assert_int_equal(f->b.calls, 1);
	assert_int_equal(f->b.r.err, -ETIMEDOUT);
	assert_non_null(strstr(f->b.r.error, "1 connection refused"));
	assert_true(f->b.at >= 0.9 && f->b.at < 3.0);
	assert_int_equal(f->b.r.n_streams, 0);
}

static void test_param_mismatch(void **state)
{
	struct fixture *f = *state;
	struct tcptest_params pa;

	bw_params(&f->p, 1, TCPTEST_A_TO_B, 300);
	bw_params(&pa, 2, TCPTEST_A_TO_B, 300);
	f->b.t = tcptest_listen(f->base, "127.0.0.1", token1, &f->p, 500,
				on_done, &f->b, &f->port);
	assert_non_null(f->b.t);
	f->a.t = tcptest_connect(f->base, "127.0.0.1", f->port, NULL, token1,
				 &pa, 2000, on_done, &f->a);
	assert_non_null(f->a.t);
	f->pending = 2;
	run_loop(f);
	assert_int_equal(f->a.r.err, -ECONNREFUSED);
	assert_non_null(strstr(f->a.r.error, "parameters differ"));
	assert_int_equal(f->b.r.err, -ETIMEDOUT);
}

static void start_reuse(evutil_socket_t fd, short what, void *arg)
{
	struct fixture *f = arg;

	(void)fd;
	(void)what;
	f->extra.t = tcptest_connect(f->base, "127.0.0.1", f->port, "", token1,
				     &f->p, 1000, on_done, &f->extra);
	assert_non_null(f->extra.t);
	f->pending++;
}

/* Once a test has its streams the token is spent: the listener is gone. */
static void test_token_reuse(void **state)
{
	struct fixture *f = *state;
	struct timeval tv = {.tv_usec = 150000};

	bw_params(&f->p, 1, TCPTEST_A_TO_B, 500);
	start_pair(f, token1, 2000);
	event_base_once(f->base, -1, EV_TIMEOUT, start_reuse, f, &tv);
	run_loop(f);
	check_bw_side(&f->a, &f->p, 1);
	check_bw_side(&f->b, &f->p, 0);
	assert_int_equal(f->extra.calls, 1);
	assert_int_equal(f->extra.r.err, -ECONNREFUSED);
	assert_non_null(strstr(f->extra.r.error, "connect to 127.0.0.1:"));
}

static void free_side(evutil_socket_t fd, short what, void *arg)
{
	struct side *s = arg;

	(void)fd;
	(void)what;
	tcptest_free(s->t);
	s->t = NULL;
	s->f->pending--;
}

/* One side goes away 200 ms into a 2 s test: the other reports an error
 * well before its deadline instead of hanging. */
static void run_peer_dies(void **state, enum tcptest_dir dir, int kill_b)
{
	struct fixture *f = *state;
	struct side *dead = kill_b ? &f->b : &f->a;
	struct side *alive = kill_b ? &f->a : &f->b;
	struct timeval tv = {.tv_usec = 200000};

	bw_params(&f->p, 2, dir, 2000);
	start_pair(f, token1, 2000);
	event_base_once(f->base, -1, EV_TIMEOUT, free_side, dead, &tv);
	run_loop(f);
	assert_int_equal(dead->calls, 0);
	assert_null(dead->t);
	assert_int_equal(alive->calls, 1);
	assert_int_not_equal(alive->r.err, 0);
	assert_non_null(strstr(alive->r.error, "mid-test"));
	assert_true(alive->at < 2.0 + 6.0);
	print_message("   %s after %.2f s: %s\n", kill_b ? "A" : "B", alive->at,
		      alive->r.error);
}

static void test_peer_dies_receiver(void **state)
{
	run_peer_dies(state, TCPTEST_A_TO_B, 1);
}

static void test_peer_dies_both(void **state)
{
	run_peer_dies(state, TCPTEST_BOTH, 1);
}

static void test_client_dies(void **state)
{
	run_peer_dies(state, TCPTEST_A_TO_B, 0);
}

/* ---- a peer played by hand, on the wire format of docs/PROTOCOL.md ----
 * It plays A with its own clock, so a test decides exactly when its streams
 * stop and whether they end with the end-of-test record: what a peer whose
 * clock started early, or one that dies near the end, looks like to B. */

enum { RAW_END_LEN = 16, RAW_CHUNK = 64 << 10 };

struct raw_stream {
	int fd;
	int sends;
	double stop_at; /* sender: end of its data */
	int phase;	/* 0 data, 1 record going out, 2 awaiting, 3 done */
	uint64_t bytes; /* data bytes sent or read */
	uint8_t out[RAW_END_LEN];
	size_t out_off;
	uint8_t tail[RAW_END_LEN]; /* receiver: the last bytes read */
	uint8_t in[RAW_END_LEN + 1];
	size_t in_len; /* sender: the acknowledgement read so far */
};

struct raw_peer {
	const struct tcptest_params *p;
	uint16_t port;
	double stagger_s;    /* stream i stops sending i * stagger_s early */
	double die_before_s; /* > 0: close everything this long before the
			      * end of the window, no end record */
	int count_off;	     /* added to the count of the end records sent */
	unsigned clean;	     /* streams that ended with the full exchange */
	char error[256];
	struct raw_stream s[TCPTEST_MAX_STREAMS];
};

static void raw_record(uint8_t *b, const char *magic, uint64_t n)
{
	memcpy(b, magic, 4);
	memset(b + 4, 0, 4);
	for (unsigned i = 0; i < 8; i++)
		b[8 + i] = (uint8_t)(n >> (56 - 8 * i));
}

static int raw_record_is(const uint8_t *b, const char *magic, uint64_t n)
{
	uint8_t want[RAW_END_LEN];

	raw_record(want, magic, n);
	return !memcmp(b, want, RAW_END_LEN);
}

static int raw_connect(const struct raw_peer *rp, unsigned index)
{
	const struct tcptest_params *p = rp->p;
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(rp->port)};
	struct timeval tv = {.tv_sec = 5};
	uint8_t b[32] = "RTST";
	int fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	b[4] = 2;
	b[5] = TCPTEST_BW;
	b[6] = (uint8_t)p->dir;
	b[8] = (uint8_t)(index >> 8);
	b[9] = (uint8_t)index;
	b[10] = (uint8_t)(p->streams >> 8);
	b[11] = (uint8_t)p->streams;
	for (unsigned i = 0; i < 4; i++)
		b[12 + i] = (uint8_t)(p->duration_ms >> (24 - 8 * i));
	memcpy(b + 16, token1, TCPTEST_TOKEN_LEN);
	assert_int_equal(send(fd, b, sizeof(b), MSG_NOSIGNAL), sizeof(b));
	assert_int_equal(recv(fd, b, 1, MSG_WAITALL), 1);
	assert_int_equal(b[0], 0); /* accepted */
	return fd;
}

/* One step of a stream; 0 while it goes on, -1 on a failure (rp->error). */
static int raw_step(struct raw_peer *rp, unsigned i, char *buf)
{
	struct raw_stream *st = &rp->s[i];
	ssize_t n;

	if (st->phase == 0 && st->sends) {
		if (now_s() >= st->stop_at) {
			raw_record(st->out, "REND",
				   st->bytes + (uint64_t)rp->count_off);
			st->phase = 1;
			return 0;
		}
		n = send(st->fd, buf, RAW_CHUNK, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0)
			st->bytes += (uint64_t)n;
		else if (errno != EAGAIN && errno != EWOULDBLOCK)
			goto io_failed;
		return 0;
	}
	if (st->phase == 0) {
		n = recv(st->fd, buf, RAW_CHUNK, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			goto io_failed;
		if (n > 0) {
			size_t k = (size_t)n;

			if (k >= RAW_END_LEN) {
				memcpy(st->tail, buf + k - RAW_END_LEN,
				       RAW_END_LEN);
			} else {
				memmove(st->tail, st->tail + k,
					RAW_END_LEN - k);
				memcpy(st->tail + RAW_END_LEN - k, buf, k);
			}
			st->bytes += k;
			return 0;
		}
		/* B's end of stream: its record closes the data. */
		st->bytes -= RAW_END_LEN;
		if (!raw_record_is(st->tail, "REND", st->bytes)) {
			snprintf(rp->error, sizeof(rp->error),
				 "stream %u: B's data ended without its end "
				 "record",
				 i);
			return -1;
		}
		raw_record(st->out, "RACK", st->bytes);
		st->phase = 1;
		return 0;
	}
	if (st->phase == 1) {
		n = send(st->fd, st->out + st->out_off,
			 RAW_END_LEN - st->out_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			goto io_failed;
		st->out_off += (size_t)n;
		if (st->out_off == RAW_END_LEN) {
			shutdown(st->fd, SHUT_WR);
			st->phase = st->sends ? 2 : 3;
			rp->clean += !st->sends;
		}
		return 0;
	}
	if (st->phase == 2) {
		n = recv(st->fd, st->in + st->in_len,
			 sizeof(st->in) - st->in_len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			goto io_failed;
		st->in_len += (size_t)n;
		if (n > 0)
			return 0;
		if (st->in_len != RAW_END_LEN ||
		    !raw_record_is(st->in, "RACK", st->bytes)) {
			snprintf(rp->error, sizeof(rp->error),
				 "stream %u: no acknowledgement of %llu bytes "
				 "from B (%zu bytes came)",
				 i, (unsigned long long)st->bytes, st->in_len);
			return -1;
		}
		st->phase = 3;
		rp->clean++;
	}
	return 0;

io_failed:
	snprintf(rp->error, sizeof(rp->error), "stream %u: %s", i,
		 strerror(errno));
	return -1;
}

/* Connect every stream, start the clocks, run until every stream has
 * ended (or, with die_before_s, until the peer "dies"). */
static void raw_run(struct raw_peer *rp)
{
	const struct tcptest_params *p = rp->p;
	double go, end;
	char *buf = calloc(1, RAW_CHUNK);
	uint8_t b;
	unsigned done = 0;

	assert_non_null(buf);
	for (unsigned i = 0; i < p->streams; i++) {
		rp->s[i].fd = raw_connect(rp, i);
		rp->s[i].sends = p->dir == TCPTEST_A_TO_B ||
				 (p->dir == TCPTEST_BOTH && i % 2 == 0);
	}
	assert_int_equal(recv(rp->s[0].fd, &b, 1, MSG_WAITALL), 1);
	assert_int_equal(b, 'R');
	assert_int_equal(send(rp->s[0].fd, "G", 1, MSG_NOSIGNAL), 1);
	go = now_s();
	end = go + (p->warmup_ms + p->duration_ms) / 1000.0;
	for (unsigned i = 0; i < p->streams; i++) {
		rp->s[i].stop_at = end - i * rp->stagger_s;
		fcntl(rp->s[i].fd, F_SETFL, O_NONBLOCK);
	}
	while (done < p->streams && !*rp->error) {
		struct pollfd pfd[TCPTEST_MAX_STREAMS];

		if (rp->die_before_s > 0 && now_s() >= end - rp->die_before_s)
			break;
		assert_true(now_s() < end + 10);
		for (unsigned i = 0; i < p->streams; i++) {
			const struct raw_stream *st = &rp->s[i];

			pfd[i].fd = st->phase == 3 ? -1 : st->fd;
			pfd[i].events =
				st->phase == 1 || (st->phase == 0 && st->sends)
					? POLLOUT
					: POLLIN;
		}
		poll(pfd, p->streams, 10);
		done = 0;
		for (unsigned i = 0; i < p->streams && !*rp->error; i++) {
			if (rp->s[i].phase != 3 && raw_step(rp, i, buf) < 0)
				break;
			done += rp->s[i].phase == 3;
		}
	}
	for (unsigned i = 0; i < p->streams; i++)
		close(rp->s[i].fd);
	free(buf);
}

static void raw_listen(struct fixture *f, struct raw_peer *rp,
		       enum tcptest_dir dir, unsigned streams)
{
	bw_params(&f->p, streams, dir, 1000);
	f->b.t = tcptest_listen(f->base, "127.0.0.1", token1, &f->p, 2000,
				on_done, &f->b, &f->port);
	assert_non_null(f->b.t);
	f->pending = 1;
	memset(rp, 0, sizeof(*rp));
	rp->p = &f->p;
	rp->port = f->port;
}

/* The peer's clock started up to 280 ms before B's (as 64 streams both
 * ways on a loaded host start apart): its streams end that much before
 * B's window does, each with its end record. A clean end for both. */
static void test_end_staggered_clean(void **state)
{
	struct fixture *f = *state;
	struct raw_peer rp;

	raw_listen(f, &rp, TCPTEST_BOTH, 8);
	rp.stagger_s = 0.04;
	raw_run(&rp);
	run_loop(f);
	if (*rp.error)
		fail_msg("peer: %s", rp.error);
	assert_int_equal(rp.clean, 8);
	check_bw_side(&f->b, &f->p, 0);
}

/* A peer that dies 50 ms before the end of its window sent no end
 * record: B reports it, however close to the end it came. */
static void test_end_peer_dies_near_end(void **state)
{
	struct fixture *f = *state;
	struct raw_peer rp;

	raw_listen(f, &rp, TCPTEST_A_TO_B, 2);
	rp.die_before_s = 0.05;
	raw_run(&rp);
	run_loop(f);
	assert_int_equal(rp.clean, 0);
	assert_int_equal(f->b.calls, 1);
	assert_int_equal(f->b.r.err, -ECONNRESET);
	if (!strstr(f->b.r.error, "mid-test"))
		fail_msg("B: %s", f->b.r.error);
	print_message("   B: %s\n", f->b.r.error);
}

/* The receiving peer dies 50 ms before the end: B, sending, reports it. */
static void test_end_receiver_dies_near_end(void **state)
{
	struct fixture *f = *state;
	struct raw_peer rp;

	raw_listen(f, &rp, TCPTEST_B_TO_A, 2);
	rp.die_before_s = 0.05;
	raw_run(&rp);
	run_loop(f);
	assert_int_equal(f->b.calls, 1);
	assert_int_equal(f->b.r.err, -ECONNRESET);
	if (!strstr(f->b.r.error, "mid-test") &&
	    !strstr(f->b.r.error, "before acknowledging"))
		fail_msg("B: %s", f->b.r.error);
	print_message("   B: %s\n", f->b.r.error);
}

/* An end record whose count is not what arrived is not a clean end. */
static void test_end_wrong_count(void **state)
{
	struct fixture *f = *state;
	struct raw_peer rp;

	raw_listen(f, &rp, TCPTEST_A_TO_B, 1);
	rp.count_off = 1;
	raw_run(&rp);
	run_loop(f);
	assert_int_equal(f->b.calls, 1);
	assert_int_equal(f->b.r.err, -EPROTO);
	if (!strstr(f->b.r.error, "counts"))
		fail_msg("B: %s", f->b.r.error);
	/* and B did not acknowledge it */
	assert_int_equal(rp.clean, 0);
}

static void free_both(evutil_socket_t fd, short what, void *arg)
{
	struct fixture *f = arg;

	(void)fd;
	(void)what;
	tcptest_free(f->a.t);
	tcptest_free(f->b.t);
	f->a.t = f->b.t = NULL;
	f->pending -= 2;
	event_del(f->watchdog);
}

/* Freeing running tests: no callback, the threads end promptly, and the
 * loop runs dry once they are reaped (ASan/valgrind check the rest). */
static void test_free_running(void **state)
{
	struct fixture *f = *state;
	struct timeval tv = {.tv_usec = 200000};

	bw_params(&f->p, 4, TCPTEST_BOTH, 2000);
	start_pair(f, token1, 2000);
	event_base_once(f->base, -1, EV_TIMEOUT, free_both, f, &tv);
	run_loop(f);
	assert_int_equal(f->a.calls, 0);
	assert_int_equal(f->b.calls, 0);
	assert_true(now_s() - f->start < 1.8);
}

/* A listener freed before anybody connects. */
static void test_free_listening(void **state)
{
	struct fixture *f = *state;
	uint16_t port = 0;

	bw_params(&f->p, 1, TCPTEST_A_TO_B, 300);
	f->b.t = tcptest_listen(f->base, "127.0.0.1", token1, &f->p, 5000,
				on_done, &f->b, &port);
	assert_non_null(f->b.t);
	tcptest_free(f->b.t);
	f->b.t = NULL;
	event_del(f->watchdog);
	run_loop(f);
	assert_int_equal(f->b.calls, 0);
	assert_true(now_s() - f->start < 1.0);
}

/* Open n connections to 127.0.0.1:port that send nothing (or, with
 * partial, half a preamble): what anyone on the data plane can do to a
 * listener. The kernel completes them from the listen backlog. */
static void open_junk(int *fds, unsigned n, uint16_t port, int partial)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(port)};

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (unsigned i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_true(fds[i] >= 0);
		assert_int_equal(
			connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
		if (partial)
			assert_int_equal(send(fds[i], "RTST\1", 5, 0), 5);
	}
}

/* Silent and half-open connections do not keep the real streams out: with
 * JUNK (more than the listener keeps pending at once) open before A even
 * starts, a 4-stream test still completes within a 3 s accept window.
 * (One at a time, with 2 s each to send a preamble, the listener would
 * need 40 s to get past them.) */
static void run_junk(void **state, int partial)
{
	struct fixture *f = *state;
	enum { JUNK = 20 };
	int junk[JUNK];

	bw_params(&f->p, 4, TCPTEST_BOTH, 300);
	f->b.t = tcptest_listen(f->base, "127.0.0.1", token1, &f->p, 3000,
				on_done, &f->b, &f->port);
	assert_non_null(f->b.t);
	open_junk(junk, JUNK, f->port, partial);
	f->a.t = tcptest_connect(f->base, "127.0.0.1", f->port, "", token1,
				 &f->p, 3000, on_done, &f->a);
	assert_non_null(f->a.t);
	f->pending = 2;
	run_loop(f);
	check_bw_side(&f->a, &f->p, 1);
	check_bw_side(&f->b, &f->p, 0);
	for (unsigned i = 0; i < JUNK; i++)
		close(junk[i]);
}

static void test_junk_silent(void **state)
{
	run_junk(state, 0);
}

static void test_junk_partial(void **state)
{
	run_junk(state, 1);
}

static void test_bind_missing_interface(void **state)
{
	struct fixture *f = *state;

	bw_params(&f->p, 1, TCPTEST_A_TO_B, 300);
	f->a.t = tcptest_connect(f->base, "127.0.0.1", 9, "nosuchif0", token1,
				 &f->p, 1000, on_done, &f->a);
	assert_non_null(f->a.t);
	f->pending = 1;
	run_loop(f);
	assert_int_not_equal(f->a.r.err, 0);
	assert_non_null(strstr(f->a.r.error, "nosuchif0"));
}

static void expect_bad(const struct tcptest_params *p, const char *word)
{
	char why[256] = "";

	assert_int_equal(tcptest_params_check(p, why, sizeof(why)), -1);
	if (!strstr(why, word))
		fail_msg("reason \"%s\" lacks \"%s\"", why, word);
}

static void test_params_check(void **state)
{
	struct tcptest_params p, q;
	char why[256];
	uint16_t port = 0;
	struct fixture *f = *state;

	bw_params(&p, 8, TCPTEST_A_TO_B, 1000);
	assert_int_equal(tcptest_params_check(&p, why, sizeof(why)), 0);
	q = p, q.streams = 0, expect_bad(&q, "streams");
	q = p, q.streams = 65, expect_bad(&q, "streams");
	q = p, q.streams = 64,
	assert_int_equal(tcptest_params_check(&q, why, 256), 0);
	q = p, q.dir = TCPTEST_BOTH, q.streams = 3, expect_bad(&q, "even");
	q = p, q.dir = TCPTEST_BOTH, q.streams = 1, expect_bad(&q, "even");
	q = p, q.dir = (enum tcptest_dir)7, expect_bad(&q, "direction");
	/* The coordinator's samples go down to 10 ms; ringctl's 100 ms is
	 * testlimits_check's. */
	q = p, q.duration_ms = TESTLIMITS_SAMPLE_DURATION_MIN_MS - 1,
	expect_bad(&q, "duration");
	q = p, q.duration_ms = TESTLIMITS_SAMPLE_DURATION_MIN_MS,
	assert_int_equal(tcptest_params_check(&q, why, 256), 0);
	q = p, q.duration_ms = 600001, expect_bad(&q, "duration");
	q = p, q.warmup_ms = 60001, expect_bad(&q, "warm-up");
	q = p, q.kind = (enum tcptest_kind)0, expect_bad(&q, "kind");

	memset(&p, 0, sizeof(p));
	p.kind = TCPTEST_LAT;
	p.n_sizes = 1;
	p.sizes[0] = 64;
	p.iterations = 100;
	assert_int_equal(tcptest_params_check(&p, why, sizeof(why)), 0);
	q = p, q.n_sizes = 0, expect_bad(&q, "sizes");
	q = p, q.n_sizes = TCPTEST_MAX_SIZES + 1, expect_bad(&q, "sizes");
	q = p, q.sizes[0] = 0, expect_bad(&q, "size 0");
	q = p, q.sizes[0] = TCPTEST_MAX_MSG + 1, expect_bad(&q, "size");
	q = p, q.iterations = 0, expect_bad(&q, "iterations");
	q = p, q.iterations = 1000001, expect_bad(&q, "iterations");
	q = p, q.lat_warmup = 1000001, expect_bad(&q, "warm-up");
	assert_int_equal(tcptest_params_check(NULL, why, sizeof(why)), -1);

	/* and the constructors refuse them too */
	errno = 0;
	assert_null(tcptest_listen(f->base, "127.0.0.1", token1, &q, 1000,
				   on_done, NULL, &port));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(tcptest_connect(f->base, "no-such-address", 1, "", token1,
				    &p, 1000, on_done, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(tcptest_listen(f->base, "127.0.0.1x", token1, &p, 1000,
				   on_done, NULL, &port));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_params_check, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bw_a_to_b_1, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bw_a_to_b_4, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bw_b_to_a, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bw_both, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bw_max_streams, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bw_warmup, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_latency, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_token, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_param_mismatch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_token_reuse, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_peer_dies_receiver, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_peer_dies_both, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_client_dies, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_end_staggered_clean, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_end_peer_dies_near_end,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_receiver_dies_near_end,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_wrong_count, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_free_running, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_free_listening, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bind_missing_interface,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_junk_silent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_junk_partial, setup,
						teardown),
	};

	log_init("test_tcptest", getenv("RING_DEBUG"), 1);
	if (getenv("TEST_FILTER")) /* e.g. TEST_FILTER='test_bw_*' */
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
