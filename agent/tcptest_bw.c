/* The TCP test engine's bandwidth streams: senders and receivers, the
 * REND/RACK exchange that ends a stream cleanly, the measured window. */
#include <errno.h>
#include <linux/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "log.h"
#include "tcptest_int.h"

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

void tcptest_bw_send(struct tcptest_worker *w, char *buf)
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

void tcptest_bw_recv(struct tcptest_worker *w, char *buf)
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
void tcptest_bw_window(struct tcptest *t, unsigned n)
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
