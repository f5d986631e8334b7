#include "tcptest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/tcp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* Preamble, A -> B, first bytes on every connection (big-endian):
 * "RTST" version kind dir pad index:u16 n:u16 duration_ms:u32 token[16] */
#define TCPTEST_MAGIC "RTST"
#define TCPTEST_VERSION 2 /* 2: bandwidth streams end with REND/RACK */
#define TCPTEST_PREAMBLE_LEN 32

/* End of a bandwidth stream, after its data (big-endian):
 * sender -> receiver "REND" 0:u32 data_bytes:u64, then its write side shut;
 * receiver -> sender "RACK" 0:u32 data_bytes_read:u64, then its write side
 * shut. The receiver finds the record as the last bytes before the
 * sender's end of stream; the count makes data that happens to end like
 * one impossible to mistake for it. A stream that ends without it ended
 * mid-test, however close to the end of the window: clocks of the two
 * sides start apart (by 100 ms and more with 64 streams on a loaded host),
 * so only the record, not the time, tells a clean end from a dying peer. */
#define TCPTEST_END_MAGIC "REND"
#define TCPTEST_ACK_MAGIC "RACK"
#define TCPTEST_END_LEN 16

/* B's one-byte answer to a preamble. Anything but OK is followed by close;
 * the reason lets A tell the operator what was wrong. */
enum tcptest_status {
	TCPTEST_ST_OK = 0,
	TCPTEST_ST_BAD_HEADER = 1,
	TCPTEST_ST_BAD_TOKEN = 2,
	TCPTEST_ST_MISMATCH = 3,
	TCPTEST_ST_DUPLICATE = 4,
};

/* Start signals on stream 0 (tcptest_start_signal). */
#define TCPTEST_READY 'R' /* B -> A: B's stream threads run */
#define TCPTEST_GO 'G'	  /* A -> B: the clocks start */

#define TCPTEST_BUF (1u << 20)
#define TCPTEST_STACK (256u << 10)
#define TCPTEST_SOCKBUF (4 << 20)
/* Blocked workers wake up this often to check the stop flag and deadline. */
#define TCPTEST_IO_TIMEOUT_MS 1000
/* The setup phase polls in slices this long for the same reason. */
#define TCPTEST_SLICE_MS 100
#define TCPTEST_GRACE_MS 5000
/* A preamble must arrive this soon after connect. Connections are judged
 * concurrently, and at most TCPTEST_MAX_PENDING wait for theirs at once
 * (the oldest makes room for a newer one): anyone on the data plane can
 * connect to a listener, and silent connections must not keep the real
 * streams out. */
#define TCPTEST_PREAMBLE_MS 2000
#define TCPTEST_MAX_PENDING 16
/* Refused connections logged one by one per test; the rest are counted. */
#define TCPTEST_LOG_REFUSED 4

/* B: a connection accepted whose preamble is not complete yet. */
struct tcptest_pending {
	int fd;
	double deadline;
	size_t have;
	uint8_t b[TCPTEST_PREAMBLE_LEN];
	char from[64];
};

struct tcptest_worker {
	struct tcptest *t;
	pthread_t tid;
	unsigned index;
	int fd;
	int sending;
	atomic_uint_fast64_t moved; /* bytes sent or read so far */
	uint64_t bytes;		    /* in the window */
	uint32_t retrans;
	double cpu_s;
	double end;
	int err;
	double err_at;
	char error[200];
};

struct tcptest {
	struct event_base *base;
	struct event *ev_done;
	int efd; /* eventfd: the control thread's "finished" signal */
	int is_a;
	struct tcptest_params p;
	uint8_t token[TCPTEST_TOKEN_LEN];
	tcptest_done_cb cb;
	void *arg;
	struct sockaddr_in sa; /* A: the peer; B: the bound address */
	char name[64];	       /* A: peer address; B: bound address */
	char from[64];	       /* B: where the first stream came from */
	char local_if[IFNAMSIZ];
	unsigned setup_ms;
	double created, deadline; /* monotonic seconds */
	double t0;		  /* start of the test proper */
	unsigned n_conn;
	unsigned refused;

	/* Guards the descriptors: tcptest_free shuts them down from the loop
	 * thread while the control thread opens and closes them. */
	pthread_mutex_t mu;
	int lfd;
	int fds[TCPTEST_MAX_STREAMS];
	/* Start gate: the clock starts once every worker thread runs, so
	 * thread start-up is not part of any stream's window. */
	pthread_cond_t ready_cv, go_cv;
	unsigned ready;
	int go;

	pthread_t ctl;
	atomic_int stop;	/* tcptest_free: quit, no callback */
	atomic_int failed;	/* one worker failed: the others quit */
	atomic_int window_done; /* senders stop */
	int joined;		/* control thread joined, res final */
	int in_cb;
	int freed;
	struct tcptest_worker w[TCPTEST_MAX_STREAMS];
	struct engine_result res;
};

static double tcptest_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *tcptest_strerror(int err, char *buf, size_t len)
{
	return strerror_r(err < 0 ? -err : err, buf, len);
}

static int tcptest_halted(struct tcptest *t)
{
	return atomic_load(&t->stop) || atomic_load(&t->failed);
}

/* Record the test's error (the first one wins). Control thread only. */
static void tcptest_fail(struct tcptest *t, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void tcptest_fail(struct tcptest *t, int err, const char *fmt, ...)
{
	va_list ap;

	if (t->res.err)
		return;
	t->res.err = err ? err : -EIO;
	va_start(ap, fmt);
	vsnprintf(t->res.error, sizeof(t->res.error), fmt, ap);
	va_end(ap);
}

static void tcptest_werr(struct tcptest_worker *w, int err, const char *fmt,
			 ...) __attribute__((format(printf, 3, 4)));
static void tcptest_werr(struct tcptest_worker *w, int err, const char *fmt,
			 ...)
{
	va_list ap;

	if (w->err)
		return;
	w->err = err ? err : -EIO;
	w->err_at = tcptest_now();
	va_start(ap, fmt);
	vsnprintf(w->error, sizeof(w->error), fmt, ap);
	va_end(ap);
	atomic_store(&w->t->failed, 1);
}

int tcptest_params_check(const struct tcptest_params *p, char *why, size_t len)
{
	if (!p) {
		snprintf(why, len, "missing test parameters");
		return -1;
	}
	if (p->kind == TCPTEST_BW) {
		if (p->streams < 1 || p->streams > TCPTEST_MAX_STREAMS) {
			snprintf(why, len, "streams %u out of range 1..%d",
				 p->streams, TCPTEST_MAX_STREAMS);
			return -1;
		}
		if (p->dir != TCPTEST_A_TO_B && p->dir != TCPTEST_B_TO_A &&
		    p->dir != TCPTEST_BOTH) {
			snprintf(why, len, "unknown direction %d", (int)p->dir);
			return -1;
		}
		if (p->dir == TCPTEST_BOTH && (p->streams % 2 || !p->streams)) {
			snprintf(why, len,
				 "direction both needs an even number of "
				 "streams (>= 2), not %u",
				 p->streams);
			return -1;
		}
		if (p->duration_ms < TESTLIMITS_DURATION_MIN_MS ||
		    p->duration_ms > TESTLIMITS_DURATION_MAX_MS) {
			snprintf(why, len,
				 "duration %u ms out of range %u ms..%u s",
				 p->duration_ms, TESTLIMITS_DURATION_MIN_MS,
				 TESTLIMITS_DURATION_MAX_MS / 1000);
			return -1;
		}
		if (p->warmup_ms > TESTLIMITS_WARMUP_MAX_MS) {
			snprintf(why, len, "warm-up %u ms out of range 0..%u s",
				 p->warmup_ms, TESTLIMITS_WARMUP_MAX_MS / 1000);
			return -1;
		}
		return 0;
	}
	if (p->kind == TCPTEST_LAT) {
		if (p->n_sizes < 1 || p->n_sizes > TCPTEST_MAX_SIZES) {
			snprintf(why, len, "%u latency sizes, expected 1..%d",
				 p->n_sizes, TCPTEST_MAX_SIZES);
			return -1;
		}
		for (unsigned i = 0; i < p->n_sizes; i++) {
			if (p->sizes[i] < 1 || p->sizes[i] > TCPTEST_MAX_MSG) {
				snprintf(why, len,
					 "latency size %u bytes out of range "
					 "1..%u",
					 p->sizes[i], TCPTEST_MAX_MSG);
				return -1;
			}
		}
		if (p->iterations < 1 ||
		    p->iterations > TESTLIMITS_LAT_ITERATIONS_MAX) {
			snprintf(why, len, "iterations %u out of range 1..%u",
				 p->iterations, TESTLIMITS_LAT_ITERATIONS_MAX);
			return -1;
		}
		if (p->lat_warmup > TESTLIMITS_LAT_WARMUP_MAX) {
			snprintf(why, len,
				 "latency warm-up %u out of range 0..%u",
				 p->lat_warmup, TESTLIMITS_LAT_WARMUP_MAX);
			return -1;
		}
		return 0;
	}
	snprintf(why, len, "unknown test kind %d", (int)p->kind);
	return -1;
}

/* Time the test proper may take after setup. Latency has no duration: allow
 * 1 ms per round plus the bytes at a slow 64 MB/s, generous for any link
 * worth testing. */
static double tcptest_budget_s(const struct tcptest_params *p)
{
	double s = 0;

	if (p->kind == TCPTEST_BW)
		return (p->warmup_ms + p->duration_ms) / 1000.0;
	for (unsigned i = 0; i < p->n_sizes; i++)
		s += ((double)p->iterations + p->lat_warmup) *
		     (1e-3 + 2.0 * p->sizes[i] / 64e6);
	return s;
}

static int tcptest_sends(const struct tcptest *t, unsigned index)
{
	if (t->p.kind == TCPTEST_LAT)
		return t->is_a;
	switch (t->p.dir) {
	case TCPTEST_A_TO_B:
		return t->is_a;
	case TCPTEST_B_TO_A:
		return !t->is_a;
	default:
		return (index % 2 == 0) == !!t->is_a;
	}
}

/* ---- sockets ---- */

static void tcptest_set_timeouts(int fd, unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000,
			     .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int tcptest_sysctl_at_least(const char *path, long want)
{
	FILE *f = fopen(path, "re");
	long v = 0;
	int ok;

	if (!f)
		return 0;
	ok = fscanf(f, "%ld", &v) == 1 && v >= want;
	fclose(f);
	return ok;
}

/* Large fixed buffers, but only where the kernel grants them: setting
 * SO_RCVBUF switches autotuning off, and the default rmem_max (208 KiB)
 * would then cap the window far below what autotuning reaches. */
static void tcptest_set_buffers(int fd)
{
	int sz = TCPTEST_SOCKBUF;
	/* Keep little unsent data queued: after the window the sender waits
	 * for its queue to drain, which on a slow link took seconds with a
	 * full 8 MiB buffer per stream (make bench saw 2 s per 8-stream test
	 * at 200 Mbit/s). In-flight data is still bounded by cwnd only. */
	int lowat = 256 * 1024;

	if (tcptest_sysctl_at_least("/proc/sys/net/core/wmem_max", sz))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (tcptest_sysctl_at_least("/proc/sys/net/core/rmem_max", sz))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat));
}

static void tcptest_set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int tcptest_set_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* Remember a descriptor so tcptest_free can shut it down. A test stopped
 * meanwhile gets it shut down at once. */
static void tcptest_track(struct tcptest *t, unsigned slot, int fd)
{
	pthread_mutex_lock(&t->mu);
	t->fds[slot] = fd;
	if (atomic_load(&t->stop) && fd >= 0)
		shutdown(fd, SHUT_RDWR);
	pthread_mutex_unlock(&t->mu);
}

static void tcptest_close_all(struct tcptest *t)
{
	pthread_mutex_lock(&t->mu);
	for (unsigned i = 0; i < TCPTEST_MAX_STREAMS; i++) {
		if (t->fds[i] >= 0)
			close(t->fds[i]);
		t->fds[i] = -1;
	}
	if (t->lfd >= 0)
		close(t->lfd);
	t->lfd = -1;
	pthread_mutex_unlock(&t->mu);
}

/* Send or receive exactly len bytes. 0 done, 1 the peer closed (EOF, reset
 * or broken pipe), else -errno (-ETIMEDOUT past deadline, -ECANCELED when
 * the test is halted). */
static int tcptest_io_full(struct tcptest *t, int fd, void *buf, size_t len,
			   int wr, double deadline)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = wr ? send(fd, (char *)buf + done, len - done,
				      MSG_NOSIGNAL)
			       : recv(fd, (char *)buf + done, len - done, 0);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0 && !wr)
			return 1;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
			      errno == EINTR)) {
			if (tcptest_halted(t))
				return -ECANCELED;
			if (tcptest_now() >= deadline)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
			return 1;
		return n < 0 ? -errno : -EIO;
	}
	return 0;
}

/* ---- bandwidth workers ---- */

/* Workers only move data; the control thread samples every stream at the
 * window's edges (tcptest_sample), so all streams share one window and no
 * worker's scheduling delay can stretch or shift it. */

static void tcptest_end_encode(uint8_t *b, const char *magic, uint64_t n)
{
	memcpy(b, magic, 4);
	memset(b + 4, 0, 4);
	for (unsigned i = 0; i < 8; i++)
		b[8 + i] = (uint8_t)(n >> (56 - 8 * i));
}

/* 0 and *n when b is a record with this magic, else -1. */
static int tcptest_end_decode(const uint8_t *b, const char *magic, uint64_t *n)
{
	uint64_t v = 0;

	if (memcmp(b, magic, 4) || b[4] || b[5] || b[6] || b[7])
		return -1;
	for (unsigned i = 0; i < 8; i++)
		v = v << 8 | b[8 + i];
	*n = v;
	return 0;
}

/* The sender's end of a stream: the end record, then the receiver's
 * acknowledgement and its close, so neither side sees a reset. */
static void tcptest_bw_send_end(struct tcptest_worker *w)
{
	struct tcptest *t = w->t;
	uint8_t rec[TCPTEST_END_LEN];
	uint64_t sent, acked = 0;
	char ebuf[128];
	int rc;

	sent = atomic_load(&w->moved);
	tcptest_end_encode(rec, TCPTEST_END_MAGIC, sent);
	rc = tcptest_io_full(t, w->fd, rec, sizeof(rec), 1, t->deadline);
	if (rc == 0) {
		shutdown(w->fd, SHUT_WR);
		rc = tcptest_io_full(t, w->fd, rec, sizeof(rec), 0,
				     t->deadline);
	}
	if (rc == 0 && tcptest_end_decode(rec, TCPTEST_ACK_MAGIC, &acked) < 0) {
		tcptest_werr(w, -EPROTO,
			     "stream %u: the peer answered the end of the "
			     "test with something else than an "
			     "acknowledgement",
			     w->index);
		return;
	}
	if (rc == 0 && acked != sent) {
		tcptest_werr(w, -EPROTO,
			     "stream %u: the peer read %llu bytes, %llu were "
			     "sent",
			     w->index, (unsigned long long)acked,
			     (unsigned long long)sent);
		return;
	}
	if (rc == 0) {
		rc = tcptest_io_full(t, w->fd, rec, 1, 0, t->deadline);
		if (rc == 0) {
			tcptest_werr(w, -EPROTO,
				     "stream %u: the peer sent data after its "
				     "acknowledgement",
				     w->index);
			return;
		}
		if (rc == 1)
			return; /* its close: the clean end */
	}
	if (rc == 1)
		tcptest_werr(w, -ECONNRESET,
			     "peer closed stream %u before acknowledging the "
			     "end of the test",
			     w->index);
	else if (rc == -ETIMEDOUT)
		tcptest_werr(w, rc,
			     "stream %u: peer did not acknowledge the end of "
			     "the test before the deadline",
			     w->index);
	else if (rc != -ECANCELED)
		tcptest_werr(w, rc, "stream %u: %s", w->index,
			     tcptest_strerror(rc, ebuf, sizeof(ebuf)));
}

static void tcptest_bw_send(struct tcptest_worker *w, char *buf)
{
	struct tcptest *t = w->t;
	struct pollfd pfd = {.fd = w->fd, .events = POLLOUT};
	char ebuf[128];

	while (!atomic_load(&t->window_done)) {
		ssize_t n;

		if (tcptest_halted(t))
			return;
		if (tcptest_now() >= t->deadline) {
			tcptest_werr(w, -ETIMEDOUT,
				     "stream %u: peer stopped reading before "
				     "the test deadline",
				     w->index);
			return;
		}
		/* Never blocks long in send, so the end of the window is
		 * noticed promptly even when the receiver is slow. */
		if (poll(&pfd, 1, TCPTEST_SLICE_MS) <= 0)
			continue;
		n = send(w->fd, buf, TCPTEST_BUF, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			atomic_fetch_add_explicit(&w->moved, (uint64_t)n,
						  memory_order_relaxed);
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			continue;
		if (errno == EPIPE || errno == ECONNRESET)
			tcptest_werr(w, -ECONNRESET,
				     "peer closed stream %u mid-test after "
				     "%.1f s",
				     w->index, tcptest_now() - t->t0);
		else
			tcptest_werr(
				w, -errno, "stream %u: send: %s", w->index,
				tcptest_strerror(errno, ebuf, sizeof(ebuf)));
		return;
	}
	tcptest_bw_send_end(w);
}

/* The receiver's end of a stream (EOF or reset): clean only after a
 * complete end record, which it then acknowledges. */
static void tcptest_bw_recv_end(struct tcptest_worker *w, const uint8_t *tail,
				uint64_t total)
{
	struct tcptest *t = w->t;
	uint8_t ack[TCPTEST_END_LEN];
	uint64_t n = 0;
	int rc;

	if (total < TCPTEST_END_LEN ||
	    tcptest_end_decode(tail, TCPTEST_END_MAGIC, &n) < 0) {
		tcptest_werr(w, -ECONNRESET,
			     "peer closed stream %u mid-test after %.1f s",
			     w->index, tcptest_now() - t->t0);
		return;
	}
	if (n != total - TCPTEST_END_LEN) {
		tcptest_werr(w, -EPROTO,
			     "stream %u: the end of the test counts %llu "
			     "bytes, %llu arrived",
			     w->index, (unsigned long long)n,
			     (unsigned long long)(total - TCPTEST_END_LEN));
		return;
	}
	/* Everything arrived. A peer gone before reading the answer is its
	 * own side's failure, reported there. */
	tcptest_end_encode(ack, TCPTEST_ACK_MAGIC, n);
	rc = tcptest_io_full(t, w->fd, ack, sizeof(ack), 1, t->deadline);
	if (rc != 0)
		log_debug("tcptest", "stream %u: acknowledging the end: %d",
			  w->index, rc);
	shutdown(w->fd, SHUT_WR);
}

static void tcptest_bw_recv(struct tcptest_worker *w, char *buf)
{
	struct tcptest *t = w->t;
	/* The last bytes read: the end record once the stream ends. */
	uint8_t tail[TCPTEST_END_LEN] = {0};
	uint64_t total = 0;
	char ebuf[128];

	for (;;) {
		ssize_t n;

		if (tcptest_halted(t))
			return;
		n = recv(w->fd, buf, TCPTEST_BUF, 0);
		if (n > 0) {
			size_t k = (size_t)n;

			if (k >= TCPTEST_END_LEN) {
				memcpy(tail, buf + k - TCPTEST_END_LEN,
				       TCPTEST_END_LEN);
			} else {
				memmove(tail, tail + k, TCPTEST_END_LEN - k);
				memcpy(tail + TCPTEST_END_LEN - k, buf, k);
			}
			total += k;
			/* The record is not data: the last bytes are held
			 * back from the count until more follow. */
			atomic_store_explicit(&w->moved,
					      total > TCPTEST_END_LEN
						      ? total - TCPTEST_END_LEN
						      : 0,
					      memory_order_relaxed);
			continue;
		}
		if (tcptest_halted(t))
			return;
		if (n == 0 || errno == ECONNRESET) {
			tcptest_bw_recv_end(w, tail, total);
			return;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			tcptest_werr(
				w, -errno, "stream %u: recv: %s", w->index,
				tcptest_strerror(errno, ebuf, sizeof(ebuf)));
			return;
		}
		if (tcptest_now() >= t->deadline) {
			tcptest_werr(w, -ETIMEDOUT,
				     "stream %u: no end of data from the peer "
				     "before the test deadline",
				     w->index);
			return;
		}
	}
}

/* Per stream: sender, the bytes the peer acknowledged (sent bytes on
 * kernels without tcpi_bytes_acked) and retransmissions; receiver, the
 * bytes read. */
static void tcptest_sample(struct tcptest *t, unsigned n, uint64_t *bytes,
			   uint32_t *retrans)
{
	for (unsigned i = 0; i < n; i++) {
		struct tcptest_worker *w = &t->w[i];
		struct tcp_info ti;
		socklen_t len = sizeof(ti);

		bytes[i] =
			atomic_load_explicit(&w->moved, memory_order_relaxed);
		retrans[i] = 0;
		if (!w->sending)
			continue;
		memset(&ti, 0, sizeof(ti));
		if (getsockopt(w->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
			continue;
		retrans[i] = ti.tcpi_total_retrans;
		if (len >= offsetof(struct tcp_info, tcpi_bytes_acked) +
				   sizeof(ti.tcpi_bytes_acked))
			bytes[i] = ti.tcpi_bytes_acked;
	}
}

/* 0 at the monotonic time until, -1 if the test was halted first. */
static int tcptest_sleep_until(struct tcptest *t, double until)
{
	for (;;) {
		double now = tcptest_now(), to = until;
		struct timespec ts;

		if (tcptest_halted(t))
			return -1;
		if (now >= until)
			return 0;
		if (to > now + TCPTEST_SLICE_MS / 1000.0)
			to = now + TCPTEST_SLICE_MS / 1000.0;
		ts.tv_sec = (time_t)to;
		ts.tv_nsec = (long)((to - (double)ts.tv_sec) * 1e9);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

/* Control thread, while the workers run: sample at the window's edges. */
static void tcptest_bw_window(struct tcptest *t, unsigned n)
{
	double ws = t->t0 + t->p.warmup_ms / 1000.0;
	double we = ws + t->p.duration_ms / 1000.0;
	uint64_t b0[TCPTEST_MAX_STREAMS], b1[TCPTEST_MAX_STREAMS];
	uint32_t r0[TCPTEST_MAX_STREAMS], r1[TCPTEST_MAX_STREAMS];
	double t_start, t_end;

	if (tcptest_sleep_until(t, ws) < 0)
		goto out;
	t_start = tcptest_now();
	tcptest_sample(t, n, b0, r0);
	if (tcptest_sleep_until(t, we) < 0)
		goto out;
	t_end = tcptest_now();
	tcptest_sample(t, n, b1, r1);
	t->res.window_s = t_end - t_start;
	for (unsigned i = 0; i < n; i++) {
		t->w[i].bytes = b1[i] - b0[i];
		t->w[i].retrans = r1[i] - r0[i];
	}
out:
	atomic_store(&t->window_done, 1);
}

/* ---- latency workers ---- */

static void tcptest_lat_io_err(struct tcptest_worker *w, int rc, uint32_t size,
			       unsigned round)
{
	struct tcptest *t = w->t;
	char ebuf[128];

	if (rc == 1)
		tcptest_werr(w, -ECONNRESET,
			     "peer closed the latency connection mid-test "
			     "after %.1f s (size %u, round %u)",
			     tcptest_now() - t->t0, size, round);
	else if (rc == -ETIMEDOUT)
		tcptest_werr(w, rc,
			     "latency test: no answer from the peer before "
			     "the test deadline (size %u, round %u)",
			     size, round);
	else if (rc != -ECANCELED)
		tcptest_werr(w, rc, "latency test: %s",
			     tcptest_strerror(rc, ebuf, sizeof(ebuf)));
}

/* A: ping each size, time the round trips after the warm-up rounds. */
static void tcptest_lat_ping(struct tcptest_worker *w, char *buf)
{
	struct tcptest *t = w->t;
	const struct tcptest_params *p = &t->p;
	double *v = calloc(p->iterations, sizeof(*v));
	int rc = 0;

	if (!v) {
		tcptest_werr(w, -ENOMEM, "latency test: out of memory");
		return;
	}
	for (unsigned s = 0; s < p->n_sizes; s++) {
		uint32_t size = p->sizes[s];
		unsigned rounds = p->lat_warmup + p->iterations;

		for (unsigned r = 0; r < rounds; r++) {
			double a = tcptest_now(), b;

			if (tcptest_halted(t))
				goto out;
			rc = tcptest_io_full(t, w->fd, buf, size, 1,
					     t->deadline);
			if (!rc)
				rc = tcptest_io_full(t, w->fd, buf, size, 0,
						     t->deadline);
			if (rc) {
				tcptest_lat_io_err(w, rc, size, r);
				goto out;
			}
			b = tcptest_now();
			if (r >= p->lat_warmup)
				v[r - p->lat_warmup] = (b - a) / 2 * 1e6;
		}
		t->res.lat[s].size = size;
		stats_summarize(v, p->iterations, &t->res.lat[s].us);
		t->res.n_lat = s + 1;
	}
	shutdown(w->fd, SHUT_WR);
	rc = tcptest_io_full(t, w->fd, buf, 1, 0, t->deadline);
	if (rc == 0)
		tcptest_werr(w, -EPROTO,
			     "latency test: the peer sent more than asked");
	else if (rc < 0 && rc != -ECANCELED)
		tcptest_lat_io_err(w, rc, 0, 0);
out:
	free(v);
}

/* B: echo each message back, then wait for A's end of stream. */
static void tcptest_lat_echo(struct tcptest_worker *w, char *buf)
{
	struct tcptest *t = w->t;
	const struct tcptest_params *p = &t->p;
	int rc;

	for (unsigned s = 0; s < p->n_sizes; s++) {
		uint32_t size = p->sizes[s];
		unsigned rounds = p->lat_warmup + p->iterations;

		for (unsigned r = 0; r < rounds; r++) {
			rc = tcptest_io_full(t, w->fd, buf, size, 0,
					     t->deadline);
			if (!rc)
				rc = tcptest_io_full(t, w->fd, buf, size, 1,
						     t->deadline);
			if (rc) {
				tcptest_lat_io_err(w, rc, size, r);
				return;
			}
		}
	}
	rc = tcptest_io_full(t, w->fd, buf, 1, 0, t->deadline);
	if (rc == 1)
		shutdown(w->fd, SHUT_WR);
	else if (rc == 0)
		tcptest_werr(w, -EPROTO,
			     "latency test: the peer sent more than its "
			     "parameters announce");
	else if (rc < 0 && rc != -ECANCELED)
		tcptest_lat_io_err(w, rc, 0, 0);
}

static double tcptest_tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void *tcptest_worker_main(void *arg)
{
	struct tcptest_worker *w = arg;
	struct tcptest *t = w->t;
	struct rusage r0, r1;
	char *buf = calloc(1, TCPTEST_BUF);

	getrusage(RUSAGE_THREAD, &r0);
	pthread_mutex_lock(&t->mu);
	t->ready++;
	pthread_cond_signal(&t->ready_cv);
	while (!t->go)
		pthread_cond_wait(&t->go_cv, &t->mu);
	pthread_mutex_unlock(&t->mu);
	if (!buf)
		tcptest_werr(w, -ENOMEM, "stream %u: out of memory", w->index);
	else if (t->p.kind == TCPTEST_LAT && t->is_a)
		tcptest_lat_ping(w, buf);
	else if (t->p.kind == TCPTEST_LAT)
		tcptest_lat_echo(w, buf);
	else if (w->sending)
		tcptest_bw_send(w, buf);
	else
		tcptest_bw_recv(w, buf);
	getrusage(RUSAGE_THREAD, &r1);
	w->cpu_s = tcptest_tv_s(r1.ru_utime) - tcptest_tv_s(r0.ru_utime) +
		   tcptest_tv_s(r1.ru_stime) - tcptest_tv_s(r0.ru_stime);
	w->end = tcptest_now();
	log_debug("tcptest",
		  "%s %s: stream %u %s %llu bytes, ended after "
		  "%.3f s%s%s",
		  t->is_a ? "to" : "on", t->name, w->index,
		  w->sending ? "sent" : "read",
		  (unsigned long long)atomic_load(&w->moved), w->end - t->t0,
		  w->err ? ": " : "", w->error);
	free(buf);
	return NULL;
}

/* ---- setup: B accepts, A connects ---- */

static void tcptest_preamble_encode(const struct tcptest *t, unsigned index,
				    uint8_t *b)
{
	uint32_t dur = t->p.kind == TCPTEST_BW ? t->p.duration_ms : 0;

	memcpy(b, TCPTEST_MAGIC, 4);
	b[4] = TCPTEST_VERSION;
	b[5] = (uint8_t)t->p.kind;
	b[6] = t->p.kind == TCPTEST_BW ? (uint8_t)t->p.dir : 0;
	b[7] = 0;
	b[8] = (uint8_t)(index >> 8);
	b[9] = (uint8_t)index;
	b[10] = (uint8_t)(t->n_conn >> 8);
	b[11] = (uint8_t)t->n_conn;
	b[12] = (uint8_t)(dur >> 24);
	b[13] = (uint8_t)(dur >> 16);
	b[14] = (uint8_t)(dur >> 8);
	b[15] = (uint8_t)dur;
	memcpy(b + 16, t->token, TCPTEST_TOKEN_LEN);
}

static const char *tcptest_status_str(int st)
{
	switch (st) {
	case TCPTEST_ST_BAD_HEADER:
		return "not a test preamble (bad magic or version)";
	case TCPTEST_ST_BAD_TOKEN:
		return "unknown or reused token";
	case TCPTEST_ST_MISMATCH:
		return "test parameters differ";
	case TCPTEST_ST_DUPLICATE:
		return "stream index out of range or already connected";
	default:
		return "unknown refusal";
	}
}

/* B: judge one preamble; *index set when OK. */
static int tcptest_preamble_check(struct tcptest *t, const uint8_t *b,
				  unsigned *index)
{
	uint8_t expect[TCPTEST_PREAMBLE_LEN];
	uint8_t diff = 0;
	unsigned idx = (unsigned)b[8] << 8 | b[9];

	tcptest_preamble_encode(t, 0, expect);
	if (memcmp(b, expect, 5))
		return TCPTEST_ST_BAD_HEADER;
	/* constant time: the token is a secret */
	for (unsigned i = 16; i < TCPTEST_PREAMBLE_LEN; i++)
		diff |= b[i] ^ expect[i];
	if (diff)
		return TCPTEST_ST_BAD_TOKEN;
	if (memcmp(b + 5, expect + 5, 3) || memcmp(b + 10, expect + 10, 6))
		return TCPTEST_ST_MISMATCH;
	if (idx >= t->n_conn || t->fds[idx] >= 0)
		return TCPTEST_ST_DUPLICATE;
	*index = idx;
	return TCPTEST_ST_OK;
}

static void tcptest_addr_str(const struct sockaddr_in *sa, char *buf,
			     size_t len)
{
	char ip[INET_ADDRSTRLEN] = "?";

	inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, ntohs(sa->sin_port));
}

/* Count a refused connection; log the first few of a test. */
static void tcptest_note_refused(struct tcptest *t, const char *from,
				 const char *why)
{
	if (atomic_load(&t->stop))
		return;
	t->refused++;
	if (t->refused <= TCPTEST_LOG_REFUSED)
		log_warnx("tcptest on %s: refused a connection from %s: %s%s",
			  t->name, from, why,
			  t->refused == TCPTEST_LOG_REFUSED
				  ? " (further ones are counted, not logged)"
				  : "");
}

/* B: one connection that has sent its whole preamble. 1 when it became a
 * stream, 0 when refused (closed). */
static int tcptest_judge(struct tcptest *t, int fd, const uint8_t *b,
			 const char *from)
{
	unsigned index = 0;
	uint8_t st;

	st = (uint8_t)tcptest_preamble_check(t, b, &index);
	if (st != TCPTEST_ST_OK) {
		tcptest_note_refused(t, from, tcptest_status_str(st));
		send(fd, &st, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return 0;
	}
	if (send(fd, &st, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1 ||
	    tcptest_set_blocking(fd) < 0) {
		log_warnx("tcptest on %s: connection from %s went away",
			  t->name, from);
		close(fd);
		return 0;
	}
	tcptest_set_timeouts(fd, TCPTEST_IO_TIMEOUT_MS);
	if (t->p.kind == TCPTEST_LAT)
		tcptest_set_nodelay(fd);
	tcptest_track(t, index, fd);
	if (!*t->from)
		snprintf(t->from, sizeof(t->from), "%s", from);
	log_debug("tcptest", "on %s: stream %u from %s", t->name, index, from);
	return 1;
}

/* Read what a pending connection has sent. 1 when its preamble is
 * complete, 0 when more is to come, -1 when it closed or failed. */
static int tcptest_pending_read(struct tcptest_pending *pc)
{
	while (pc->have < TCPTEST_PREAMBLE_LEN) {
		ssize_t n = recv(pc->fd, pc->b + pc->have,
				 TCPTEST_PREAMBLE_LEN - pc->have, MSG_DONTWAIT);

		if (n > 0) {
			pc->have += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return -1;
	}
	return 1;
}

static void tcptest_pending_drop(struct tcptest *t, struct tcptest_pending *pc,
				 unsigned *np, unsigned i, const char *why)
{
	tcptest_note_refused(t, pc[i].from, why);
	close(pc[i].fd);
	pc[i] = pc[--*np];
}

/* B: take every queued connection off the listener. Those whose preamble
 * is already there are judged at once; the others wait in pc, each with
 * its own deadline. When pc is full the oldest makes room: a peer that
 * opens connections and sends nothing can hold at most
 * TCPTEST_MAX_PENDING of them, for TCPTEST_PREAMBLE_MS each, and never
 * blocks the streams behind it. Returns streams gained, or -1. */
static int tcptest_accept_new(struct tcptest *t, struct tcptest_pending *pc,
			      unsigned *np, double end)
{
	int gained = 0;

	for (unsigned k = 0; k < TCPTEST_MAX_PENDING * 2; k++) {
		struct sockaddr_in sa;
		socklen_t salen = sizeof(sa);
		struct tcptest_pending *c;
		double pend = tcptest_now() + TCPTEST_PREAMBLE_MS / 1000.0;
		char ebuf[128];
		int fd, rc;

		fd = accept4(t->lfd, (struct sockaddr *)&sa, &salen,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR || errno == ECONNABORTED)
				break;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				break; /* pending ones expire and free some */
			tcptest_fail(
				t, -errno, "accept on %s: %s", t->name,
				tcptest_strerror(errno, ebuf, sizeof(ebuf)));
			return -1;
		}
		if (*np == TCPTEST_MAX_PENDING) {
			unsigned old = 0;

			for (unsigned i = 1; i < *np; i++)
				if (pc[i].deadline < pc[old].deadline)
					old = i;
			tcptest_pending_drop(t, pc, np, old,
					     "no preamble yet, and newer "
					     "connections are waiting");
		}
		c = &pc[(*np)++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->deadline = pend < end ? pend : end;
		tcptest_addr_str(&sa, c->from, sizeof(c->from));
		rc = tcptest_pending_read(c);
		if (rc < 0) {
			tcptest_pending_drop(t, pc, np, *np - 1,
					     "closed before its preamble");
		} else if (rc > 0) {
			struct tcptest_pending done = *c;

			(*np)--;
			gained += tcptest_judge(t, done.fd, done.b, done.from);
		}
	}
	return gained;
}

static int tcptest_accept_all(struct tcptest *t)
{
	double end = t->created + t->setup_ms / 1000.0;
	struct tcptest_pending pc[TCPTEST_MAX_PENDING];
	struct pollfd pfd[1 + TCPTEST_MAX_PENDING];
	unsigned have = 0, np = 0;
	int rc = 0;

	while (have < t->n_conn) {
		double now = tcptest_now(), wake = end;
		int ms;

		if (atomic_load(&t->stop)) {
			rc = -1;
			break;
		}
		if (now >= end) {
			tcptest_fail(t, -ETIMEDOUT,
				     "test listener on %s: %u of %u streams "
				     "arrived within %u ms, %u connection%s "
				     "refused",
				     t->name, have, t->n_conn, t->setup_ms,
				     t->refused, t->refused == 1 ? "" : "s");
			rc = -1;
			break;
		}
		for (unsigned i = 0; i < np;) {
			if (pc[i].deadline <= now) {
				tcptest_pending_drop(t, pc, &np, i,
						     "no complete preamble in "
						     "time");
				continue;
			}
			if (pc[i].deadline < wake)
				wake = pc[i].deadline;
			i++;
		}
		pfd[0].fd = t->lfd;
		pfd[0].events = POLLIN;
		for (unsigned i = 0; i < np; i++) {
			pfd[1 + i].fd = pc[i].fd;
			pfd[1 + i].events = POLLIN;
		}
		ms = (int)((wake - now) * 1000) + 1;
		if (ms > TCPTEST_SLICE_MS)
			ms = TCPTEST_SLICE_MS;
		if (poll(pfd, 1 + np, ms) <= 0)
			continue;
		/* Pending ones first, by index from the end: judging or
		 * dropping one moves the last into its place. */
		for (unsigned i = np; i-- > 0;) {
			int r;

			if (!pfd[1 + i].revents)
				continue;
			r = tcptest_pending_read(&pc[i]);
			if (r < 0) {
				tcptest_pending_drop(t, pc, &np, i,
						     "closed before its "
						     "preamble");
			} else if (r > 0) {
				struct tcptest_pending done = pc[i];

				pc[i] = pc[--np];
				have += (unsigned)tcptest_judge(
					t, done.fd, done.b, done.from);
			}
		}
		if (pfd[0].revents) {
			int g = tcptest_accept_new(t, pc, &np, end);

			if (g < 0) {
				rc = -1;
				break;
			}
			have += (unsigned)g;
		}
	}
	for (unsigned i = 0; i < np; i++)
		close(pc[i].fd);
	if (t->refused > TCPTEST_LOG_REFUSED)
		log_warnx("tcptest on %s: %u connections refused in all",
			  t->name, t->refused);
	if (rc < 0)
		return -1;
	/* One-time token: nobody else gets in once the test is complete. */
	pthread_mutex_lock(&t->mu);
	close(t->lfd);
	t->lfd = -1;
	pthread_mutex_unlock(&t->mu);
	return 0;
}

static int tcptest_connect_one(struct tcptest *t, unsigned index, double end)
{
	uint8_t b[TCPTEST_PREAMBLE_LEN];
	char ebuf[128];
	int fd, rc;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		tcptest_fail(t, -errno, "socket: %s",
			     tcptest_strerror(errno, ebuf, sizeof(ebuf)));
		return -1;
	}
	tcptest_track(t, index, fd);
	if (*t->local_if &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, t->local_if,
		       (socklen_t)strlen(t->local_if) + 1) < 0) {
		if (errno == EPERM)
			tcptest_fail(t, -EPERM,
				     "binding the test to interface %s needs "
				     "CAP_NET_RAW",
				     t->local_if);
		else
			tcptest_fail(
				t, -errno, "interface %s: %s", t->local_if,
				tcptest_strerror(errno, ebuf, sizeof(ebuf)));
		return -1;
	}
	tcptest_set_buffers(fd);
	if (t->p.kind == TCPTEST_LAT)
		tcptest_set_nodelay(fd);
	rc = connect(fd, (struct sockaddr *)&t->sa, sizeof(t->sa));
	if (rc < 0 && errno != EINPROGRESS) {
		rc = -errno;
		goto fail_connect;
	}
	while (rc < 0) {
		struct pollfd pfd = {.fd = fd, .events = POLLOUT};
		double left = end - tcptest_now();
		int soerr = 0;
		socklen_t len = sizeof(soerr);

		if (atomic_load(&t->stop))
			return -1;
		if (left <= 0) {
			rc = -ETIMEDOUT;
			goto fail_connect;
		}
		if (poll(&pfd, 1,
			 left * 1000 < TCPTEST_SLICE_MS
				 ? (int)(left * 1000) + 1
				 : TCPTEST_SLICE_MS) <= 0)
			continue;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
		if (soerr) {
			rc = -soerr;
			goto fail_connect;
		}
		rc = 0;
	}
	if ((rc = tcptest_set_blocking(fd)) < 0)
		goto fail_connect;
	tcptest_set_timeouts(fd, TCPTEST_IO_TIMEOUT_MS);
	tcptest_preamble_encode(t, index, b);
	rc = tcptest_io_full(t, fd, b, sizeof(b), 1, end);
	if (!rc)
		rc = tcptest_io_full(t, fd, b, 1, 0, end);
	if (rc == -ECANCELED)
		return -1;
	if (rc == 1) {
		tcptest_fail(t, -ECONNREFUSED,
			     "%s closed stream %u without accepting it",
			     t->name, index);
		return -1;
	}
	if (rc < 0) {
		tcptest_fail(t, rc,
			     "stream %u to %s: no answer to the test "
			     "preamble: %s",
			     index, t->name,
			     tcptest_strerror(rc, ebuf, sizeof(ebuf)));
		return -1;
	}
	if (b[0] != TCPTEST_ST_OK) {
		tcptest_fail(t, -ECONNREFUSED, "%s refused stream %u: %s",
			     t->name, index, tcptest_status_str(b[0]));
		return -1;
	}
	return 0;

fail_connect:
	tcptest_fail(t, rc, "connect to %s%s%s (stream %u): %s", t->name,
		     *t->local_if ? " via " : "", t->local_if, index,
		     tcptest_strerror(rc, ebuf, sizeof(ebuf)));
	return -1;
}

static int tcptest_connect_all(struct tcptest *t)
{
	double end = t->created + t->setup_ms / 1000.0;

	for (unsigned i = 0; i < t->n_conn; i++)
		if (tcptest_connect_one(t, i, end) < 0)
			return -1;
	return 0;
}

/* ---- the test proper ---- */

static void tcptest_collect(struct tcptest *t, unsigned started, double t1)
{
	struct engine_result *r = &t->res;
	struct tcptest_worker *first = NULL;
	double cpu = 0;

	for (unsigned i = 0; i < started; i++) {
		struct tcptest_worker *w = &t->w[i];
		struct engine_stream *st = &r->streams[i];

		cpu += w->cpu_s;
		if (w->err && (!first || w->err_at < first->err_at))
			first = w;
		if (t->p.kind != TCPTEST_BW)
			continue;
		st->index = w->index;
		st->sending = w->sending;
		st->bytes = w->bytes;
		st->gbps =
			r->window_s > 0 ? w->bytes * 8 / r->window_s / 1e9 : 0;
		st->retransmits = w->retrans;
		if (w->sending) {
			r->gbps_sent += st->gbps;
			r->retransmits += w->retrans;
		} else {
			r->gbps_received += st->gbps;
		}
	}
	if (t->p.kind == TCPTEST_BW)
		r->n_streams = started;
	else
		r->window_s = t1 - t->t0;
	r->cpu_pct = t1 > t->t0 ? 100 * cpu / (t1 - t->t0) : 0;
	if (first)
		tcptest_fail(t, first->err, "%s", first->error);
}

/* Both clocks start together, once both sides' stream threads run: B
 * says it is ready, A starts its clock and says go, B starts its clock
 * when go arrives. Otherwise the side that got going first (the other's
 * start-up slowed by its traffic) would end first, and the other side's
 * receivers would see its streams close early. */
static int tcptest_start_signal(struct tcptest *t)
{
	uint8_t b = TCPTEST_READY;
	char ebuf[128];
	int rc;

	rc = tcptest_io_full(t, t->fds[0], &b, 1, !t->is_a, t->deadline);
	if (rc == 0 && b != TCPTEST_READY)
		goto bad_byte;
	if (rc == 0) {
		b = TCPTEST_GO;
		rc = tcptest_io_full(t, t->fds[0], &b, 1, !!t->is_a,
				     t->deadline);
	}
	if (rc == 0 && b != TCPTEST_GO)
		goto bad_byte;
	if (rc == 0 || rc == -ECANCELED)
		return rc;
	if (rc == 1)
		tcptest_fail(t, -ECONNRESET,
			     "peer closed stream 0 before the test started");
	else if (rc == -ETIMEDOUT)
		tcptest_fail(t, rc,
			     "peer did not start the test before the deadline");
	else
		tcptest_fail(t, rc, "start signal on stream 0: %s",
			     tcptest_strerror(rc, ebuf, sizeof(ebuf)));
	return rc;

bad_byte:
	tcptest_fail(t, -EPROTO, "peer sent 0x%02x instead of a start signal",
		     b);
	return -EPROTO;
}

static void tcptest_run(struct tcptest *t)
{
	unsigned started = 0;
	pthread_attr_t attr;
	char ebuf[128];

	/* Workers need little stack; 64 of the default 8 MiB add up. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, TCPTEST_STACK);

	for (; started < t->n_conn; started++) {
		struct tcptest_worker *w = &t->w[started];
		int rc;

		w->t = t;
		w->index = started;
		w->fd = t->fds[started];
		w->sending = tcptest_sends(t, started);
		rc = pthread_create(&w->tid, &attr, tcptest_worker_main, w);
		if (rc) {
			tcptest_fail(t, -rc, "cannot start a stream thread: %s",
				     tcptest_strerror(rc, ebuf, sizeof(ebuf)));
			atomic_store(&t->failed, 1);
			break;
		}
	}
	pthread_attr_destroy(&attr);
	pthread_mutex_lock(&t->mu);
	while (t->ready < started)
		pthread_cond_wait(&t->ready_cv, &t->mu);
	pthread_mutex_unlock(&t->mu);
	if (started == t->n_conn && tcptest_start_signal(t) < 0)
		atomic_store(&t->failed, 1);
	pthread_mutex_lock(&t->mu);
	t->t0 = tcptest_now();
	t->go = 1;
	pthread_cond_broadcast(&t->go_cv);
	pthread_mutex_unlock(&t->mu);
	if (t->p.kind == TCPTEST_BW)
		tcptest_bw_window(t, started);
	for (unsigned i = 0; i < started; i++)
		pthread_join(t->w[i].tid, NULL);
	tcptest_collect(t, started, tcptest_now());
}

static void *tcptest_ctl_main(void *arg)
{
	struct tcptest *t = arg;
	uint64_t one = 1;
	char who[160];
	int rc;

	rc = t->is_a ? tcptest_connect_all(t) : tcptest_accept_all(t);
	if (rc == 0 && !atomic_load(&t->stop))
		tcptest_run(t);
	tcptest_close_all(t);
	snprintf(who, sizeof(who), "%s %s%s%s", t->is_a ? "to" : "on", t->name,
		 *t->from ? " from " : "", t->from);
	if (atomic_load(&t->stop))
		log_debug("tcptest", "%s: stopped", who);
	else if (t->res.err)
		log_warnx("tcptest %s: %s", who, t->res.error);
	else if (t->p.kind == TCPTEST_BW)
		log_debug("tcptest",
			  "%s: done, sent %.2f Gbps, received %.2f Gbps, "
			  "%u retransmits, cpu %.0f%%",
			  who, t->res.gbps_sent, t->res.gbps_received,
			  t->res.retransmits, t->res.cpu_pct);
	else
		log_debug("tcptest", "%s: done, %u sizes, first p50 %.1f us",
			  who, t->res.n_lat,
			  t->res.n_lat ? t->res.lat[0].us.p50 : 0);
	/* The loop thread joins us when this arrives; nothing may touch t
	 * after the write. */
	if (write(t->efd, &one, sizeof(one)) < 0)
		log_warn("tcptest: eventfd");
	return NULL;
}

/* ---- life cycle (event loop thread) ---- */

static void tcptest_destroy(struct tcptest *t)
{
	event_free(t->ev_done);
	close(t->efd);
	pthread_cond_destroy(&t->go_cv);
	pthread_cond_destroy(&t->ready_cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

static void tcptest_on_done(evutil_socket_t fd, short what, void *arg)
{
	struct tcptest *t = arg;
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0)
		log_debug("tcptest", "eventfd read: %s", strerror(errno));
	pthread_join(t->ctl, NULL);
	t->joined = 1;
	if (t->freed) {
		tcptest_destroy(t);
		return;
	}
	if (t->cb) {
		t->in_cb = 1;
		t->cb(t, &t->res, t->arg);
		t->in_cb = 0;
	}
	if (t->freed)
		tcptest_destroy(t);
}

static struct tcptest *tcptest_new(struct event_base *base, int is_a,
				   const uint8_t token[TCPTEST_TOKEN_LEN],
				   const struct tcptest_params *p,
				   unsigned setup_ms, tcptest_done_cb cb,
				   void *arg)
{
	struct tcptest *t;
	char why[256];

	if (!base || !token || tcptest_params_check(p, why, sizeof(why)) < 0) {
		if (p && base && token)
			log_warnx("tcptest: %s", why);
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->base = base;
	t->is_a = is_a;
	t->p = *p;
	memcpy(t->token, token, TCPTEST_TOKEN_LEN);
	t->cb = cb;
	t->arg = arg;
	t->setup_ms = setup_ms;
	t->n_conn = p->kind == TCPTEST_BW ? p->streams : 1;
	t->lfd = -1;
	for (unsigned i = 0; i < TCPTEST_MAX_STREAMS; i++)
		t->fds[i] = -1;
	t->res.kind = p->kind;
	t->res.method = "tcp";
	t->res.lat_convention = "half round trip";
	t->created = tcptest_now();
	t->deadline = t->created + setup_ms / 1000.0 + tcptest_budget_s(p) +
		      TCPTEST_GRACE_MS / 1000.0;
	t->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->efd < 0)
		goto fail_efd;
	t->ev_done = event_new(base, t->efd, EV_READ, tcptest_on_done, t);
	if (!t->ev_done || event_add(t->ev_done, NULL) < 0)
		goto fail_ev;
	if (pthread_mutex_init(&t->mu, NULL))
		goto fail_ev;
	if (pthread_cond_init(&t->ready_cv, NULL))
		goto fail_ready;
	if (pthread_cond_init(&t->go_cv, NULL))
		goto fail_go;
	return t;

fail_go:
	pthread_cond_destroy(&t->ready_cv);
fail_ready:
	pthread_mutex_destroy(&t->mu);
fail_ev:
	if (t->ev_done)
		event_free(t->ev_done);
	close(t->efd);
fail_efd:
	free(t);
	errno = ENOMEM;
	return NULL;
}

static int tcptest_start(struct tcptest *t)
{
	int rc = pthread_create(&t->ctl, NULL, tcptest_ctl_main, t);

	if (rc) {
		errno = rc;
		return -1;
	}
	return 0;
}

static int tcptest_parse_addr(const char *ip, uint16_t port,
			      struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	if (!ip || inet_pton(AF_INET, ip, &sa->sin_addr) != 1) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

struct tcptest *tcptest_listen(struct event_base *base, const char *bind_addr,
			       const uint8_t token[TCPTEST_TOKEN_LEN],
			       const struct tcptest_params *p,
			       unsigned accept_timeout_ms, tcptest_done_cb cb,
			       void *arg, uint16_t *port)
{
	struct sockaddr_in sa;
	socklen_t salen = sizeof(sa);
	struct tcptest *t;
	int one = 1, fd, saved;

	if (tcptest_parse_addr(bind_addr, port ? *port : 0, &sa) < 0)
		return NULL;
	t = tcptest_new(base, 0, token, p, accept_timeout_ms, cb, arg);
	if (!t)
		return NULL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto fail;
	t->lfd = fd;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* accepted sockets inherit the buffers, sized before the handshake */
	tcptest_set_buffers(fd);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, TCPTEST_MAX_STREAMS * 2) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &salen) < 0)
		goto fail;
	t->sa = sa;
	tcptest_addr_str(&sa, t->name, sizeof(t->name));
	if (tcptest_start(t) < 0)
		goto fail;
	if (port)
		*port = ntohs(sa.sin_port);
	log_debug("tcptest", "listening on %s for %u streams", t->name,
		  t->n_conn);
	return t;

fail:
	saved = errno;
	if (t->lfd >= 0)
		close(t->lfd);
	tcptest_destroy(t);
	errno = saved;
	return NULL;
}

struct tcptest *tcptest_connect(struct event_base *base, const char *peer,
				uint16_t port, const char *local_if,
				const uint8_t token[TCPTEST_TOKEN_LEN],
				const struct tcptest_params *p,
				unsigned connect_timeout_ms, tcptest_done_cb cb,
				void *arg)
{
	struct sockaddr_in sa;
	struct tcptest *t;
	int saved;

	if (tcptest_parse_addr(peer, port, &sa) < 0 || port == 0 ||
	    (local_if && strlen(local_if) >= IFNAMSIZ)) {
		errno = EINVAL;
		return NULL;
	}
	t = tcptest_new(base, 1, token, p, connect_timeout_ms, cb, arg);
	if (!t)
		return NULL;
	t->sa = sa;
	tcptest_addr_str(&sa, t->name, sizeof(t->name));
	if (local_if)
		snprintf(t->local_if, sizeof(t->local_if), "%s", local_if);
	if (tcptest_start(t) < 0) {
		saved = errno;
		tcptest_destroy(t);
		errno = saved;
		return NULL;
	}
	return t;
}

void tcptest_free(struct tcptest *t)
{
	if (!t)
		return;
	if (t->joined) {
		/* finished: at once, or after the callback returns */
		if (t->in_cb)
			t->freed = 1;
		else
			tcptest_destroy(t);
		return;
	}
	/* Running: wake every thread (shutdown ends blocked send/recv) and
	 * let tcptest_on_done free t once the control thread is done. */
	t->freed = 1;
	pthread_mutex_lock(&t->mu);
	atomic_store(&t->stop, 1);
	for (unsigned i = 0; i < TCPTEST_MAX_STREAMS; i++)
		if (t->fds[i] >= 0)
			shutdown(t->fds[i], SHUT_RDWR);
	if (t->lfd >= 0)
		shutdown(t->lfd, SHUT_RDWR);
	pthread_mutex_unlock(&t->mu);
}
