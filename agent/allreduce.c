/* The ring all-reduce engine: chunk arithmetic, values, the ring steps
 * over two sockets (see allreduce.h). */
#include "allreduce.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "testlimits.h"

/* Received partial sums are added from this staging buffer, so a rank
 * holds its buffer and this much beside it, whatever the size. */
#define AR_STAGE (1u << 20)
/* A wait never sleeps longer, so STOP is seen soon. */
#define AR_POLL_MS 100
/* One send or recv at most this much: the other direction gets its turn. */
#define AR_IO_MAX (1u << 20)

void allreduce_chunk(uint64_t count, unsigned n, unsigned c, uint64_t *off,
		     uint64_t *len)
{
	uint64_t base = count / n, rem = count % n;

	*off = c * base + (c < rem ? c : rem);
	*len = base + (c < rem);
}

float allreduce_value(unsigned rank, uint64_t i)
{
	return (float)(rank + 1 + i % 7);
}

float allreduce_expected(unsigned n, uint64_t i)
{
	/* sum over r of (r + 1 + i % 7) */
	return (float)((uint64_t)n * (n + 1) / 2 + (uint64_t)n * (i % 7));
}

void allreduce_fill(float *buf, uint64_t count, unsigned rank)
{
	for (uint64_t i = 0; i < count; i++)
		buf[i] = allreduce_value(rank, i);
}

int64_t allreduce_verify(const float *buf, uint64_t count, unsigned n)
{
	for (uint64_t i = 0; i < count; i++)
		if (buf[i] != allreduce_expected(n, i))
			return (int64_t)i;
	return -1;
}

double allreduce_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run's state: the buffer, the staging area, where it is. */
struct ar_run {
	const struct allreduce_ring *ring;
	const struct allreduce_params *p;
	float *buf;
	int own_buf;
	uint8_t *stage;
	uint64_t size;
	const char *phase; /* "reduce-scatter", "all-gather", "warm-up" */
	unsigned step;
	char *err;
	size_t len;
};

static void ar_fail(struct ar_run *r, const char *peer, const char *role,
		    const char *what)
{
	char sz[16];

	testlimits_format_size(r->size, sz, sizeof(sz));
	if (!strcmp(r->phase, "start"))
		snprintf(r->err, r->len,
			 "starting an all-reduce of size %s: %s (rank %u's "
			 "%s rank) %s",
			 sz, peer, r->p->rank, role, what);
	else
		snprintf(r->err, r->len,
			 "%s step %u/%u of size %s: %s (rank %u's %s rank) %s",
			 r->phase, r->step + 1, r->p->n - 1, sz, peer,
			 r->p->rank, role, what);
}

static void ar_add(float *dst, const uint8_t *src, uint64_t nbytes)
{
	float v;

	for (uint64_t k = 0; k < nbytes / 4; k++) {
		memcpy(&v, src + 4 * k, 4);
		dst[k] += v;
	}
}

/* RDMA steps' side of a transfer: progress, then (when not done) arm the
 * completion channels and progress again, so a completion that came
 * before the arming is not slept through. *np grows by their fds. */
static int ar_rdma_turn(struct ar_run *r, struct allreduce_rdma *rd, float *dst,
			uint64_t rlen, int add, int *sent, int *got,
			struct pollfd *pfd, int *np)
{
	const struct allreduce_ring *g = r->ring;
	int rx = allreduce_rdma_has(rd, 1), which = 0;
	char why[320];

	for (int pass = 0; pass < 2; pass++) {
		if (allreduce_rdma_progress(rd, rx ? dst : NULL, rlen, add,
					    sent, got, &which, why,
					    sizeof(why)) < 0) {
			ar_fail(r, which ? g->prev_node : g->next_node,
				which ? "previous" : "next", why);
			return -1;
		}
		if (pass == 0 && allreduce_rdma_arm(rd) < 0) {
			snprintf(r->err, r->len, "ibv_req_notify_cq: %s",
				 strerror(errno));
			return -1;
		}
	}
	*np += allreduce_rdma_pollfds(rd, pfd + *np);
	return 0;
}

/* Send slen bytes to the next rank while receiving rlen from the previous
 * one (into dst, or added into dst when add): both at once, so a ring of
 * chunks larger than the socket buffers cannot deadlock. A data step
 * (data) goes over RDMA WRITE on the sides that have it. */
static int ar_xfer(struct ar_run *r, const uint8_t *sendp, uint64_t slen,
		   float *dst, uint64_t rlen, int add, int data)
{
	const struct allreduce_ring *g = r->ring;
	struct allreduce_rdma *rd = data ? g->rdma : NULL;
	int tx_rdma = allreduce_rdma_has(rd, 0);
	int rx_rdma = allreduce_rdma_has(rd, 1);
	int rsent = 0, rgot = 0;
	uint64_t sent = 0, got = 0, fill = 0;
	double end = allreduce_now() +
		     arlimits_step_deadline_ms(r->p->step_ms,
					       slen > rlen ? slen : rlen) /
			     1000.0;
	char why[160];

	if (end > g->deadline)
		end = g->deadline;
	if (tx_rdma)
		allreduce_rdma_send(rd, sendp, slen);
	for (;;) {
		struct pollfd pfd[4] = {
			{.fd = g->next_fd,
			 .events = !tx_rdma && sent < slen ? POLLOUT : 0},
			{.fd = g->prev_fd,
			 .events = !rx_rdma && got < rlen ? POLLIN : 0},
		};
		int np = 2;
		double left;
		int ms;
		ssize_t n;

		if (rd && ar_rdma_turn(r, rd, dst, rlen, add, &rsent, &rgot,
				       pfd, &np) < 0)
			return -1;
		if ((tx_rdma ? rsent : sent == slen) &&
		    (rx_rdma ? rgot : got == rlen))
			return 0;
		left = end - allreduce_now();
		ms = left <= 0			? 0
		     : left * 1000 > AR_POLL_MS ? AR_POLL_MS
						: (int)(left * 1000) + 1;
		if (g->stop && atomic_load(g->stop)) {
			char sz[16];

			/* No peer's fault: the coordinator ended the job. */
			snprintf(r->err, r->len,
				 "%s of size %s: stopped by the coordinator "
				 "(another rank failed, or the job was "
				 "cancelled)",
				 r->phase,
				 testlimits_format_size(r->size, sz,
							sizeof(sz)));
			return -1;
		}
		if (left <= 0) {
			int rx_late = rx_rdma ? !rgot : got < rlen;

			if (tx_rdma || rx_rdma)
				snprintf(why, sizeof(why),
					 "made no progress before the step's "
					 "deadline (RDMA WRITE: %s)",
					 rx_late ? "its chunk did not arrive"
						 : "ours was not acknowledged");
			else
				snprintf(why, sizeof(why),
					 "made no progress before the step's "
					 "deadline (%llu of %llu bytes sent, "
					 "%llu of %llu received)",
					 (unsigned long long)sent,
					 (unsigned long long)slen,
					 (unsigned long long)got,
					 (unsigned long long)rlen);
			ar_fail(r, rx_late ? g->prev_node : g->next_node,
				rx_late ? "previous" : "next", why);
			return -1;
		}
		if (poll(pfd, (nfds_t)np, ms) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(r->err, r->len, "poll: %s", strerror(errno));
			return -1;
		}
		/* Only the directions asked: a finished neighbour's hang-up
		 * is no failure while we wait on the other. */
		if (pfd[0].events && pfd[0].revents) {
			uint64_t want = slen - sent;

			n = send(g->next_fd, sendp + sent,
				 want > AR_IO_MAX ? AR_IO_MAX : want,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				snprintf(why, sizeof(why), "send failed: %s",
					 strerror(errno));
				ar_fail(r, g->next_node, "next", why);
				return -1;
			}
			if (n > 0)
				sent += (uint64_t)n;
		}
		if (pfd[1].events && pfd[1].revents) {
			uint64_t want = rlen - got;
			uint8_t *at =
				add ? r->stage + fill : (uint8_t *)dst + got;

			if (add && want > AR_STAGE - fill)
				want = AR_STAGE - fill;
			n = recv(g->prev_fd, at,
				 want > AR_IO_MAX ? AR_IO_MAX : want,
				 MSG_DONTWAIT);
			if (n == 0 ||
			    (n < 0 && errno != EAGAIN && errno != EINTR)) {
				snprintf(why, sizeof(why), "%s",
					 n == 0 ? "closed the connection"
						: strerror(errno));
				ar_fail(r, g->prev_node, "previous", why);
				return -1;
			}
			if (n > 0) {
				got += (uint64_t)n;
				fill += (uint64_t)n;
			}
			/* Whole floats: AR_STAGE and rlen are multiples of
			 * 4, so a full stage or the chunk's end is too. */
			if (add && (fill == AR_STAGE || got == rlen)) {
				ar_add(dst + (got - fill) / 4, r->stage, fill);
				fill = 0;
			}
		}
	}
	return 0;
}

/* One all-reduce of the buffer, in place. */
static int ar_once(struct ar_run *r, uint64_t count)
{
	unsigned n = r->p->n, me = r->p->rank;
	uint64_t so, sl, ro, rl;

	r->phase = "reduce-scatter";
	for (unsigned s = 0; s + 1 < n; s++) {
		/* Send chunk (r - s), receive (r - s - 1) and add: after n-1
		 * steps chunk (r + 1) holds every rank's sum. */
		r->step = s;
		allreduce_chunk(count, n, (me + n - s % n) % n, &so, &sl);
		allreduce_chunk(count, n, (me + 2 * n - s - 1) % n, &ro, &rl);
		if (ar_xfer(r, (uint8_t *)(r->buf + so), sl * 4, r->buf + ro,
			    rl * 4, 1, 1) < 0)
			return -1;
	}
	r->phase = "all-gather";
	for (unsigned s = 0; s + 1 < n; s++) {
		/* Pass the finished chunks on: send (r + 1 - s), receive
		 * (r - s) over the stale one. */
		r->step = s;
		allreduce_chunk(count, n, (me + 1 + n - s) % n, &so, &sl);
		allreduce_chunk(count, n, (me + n - s) % n, &ro, &rl);
		if (ar_xfer(r, (uint8_t *)(r->buf + so), sl * 4, r->buf + ro,
			    rl * 4, 0, 1) < 0)
			return -1;
	}
	return 0;
}

static int ar_size(struct ar_run *r, struct allreduce_size_result *o)
{
	uint64_t count = r->size / 4;
	const uint8_t tok = 1;
	float sink = 0;
	double sum = 0;
	int64_t bad;

	memset(o, 0, sizeof(*o));
	o->size = r->size;
	for (unsigned it = 0; it < r->p->warmup + r->p->iterations; it++) {
		double t0, us;

		/* In place, so every iteration starts from the inputs; the
		 * filling is not timed. */
		allreduce_fill(r->buf, count, r->p->rank);
		/* A byte each way first, untimed: the previous rank has
		 * refilled too, so its refill is not timed as ours. */
		r->phase = "start";
		r->step = 0;
		if (ar_xfer(r, &tok, 1, &sink, 1, 0, 0) < 0)
			return -1;
		t0 = allreduce_now();
		if (ar_once(r, count) < 0)
			return -1;
		if (it < r->p->warmup)
			continue;
		us = (allreduce_now() - t0) * 1e6;
		sum += us;
		if (!o->min_us || us < o->min_us)
			o->min_us = us;
		if (us > o->max_us)
			o->max_us = us;
	}
	o->mean_us = sum / r->p->iterations;
	bad = allreduce_verify(r->buf, count, r->p->n);
	o->verified = bad < 0;
	if (bad >= 0) {
		char sz[16];

		snprintf(r->err, r->len,
			 "size %s: element %lld is %g, expected %g: the "
			 "reduction is wrong",
			 testlimits_format_size(r->size, sz, sizeof(sz)),
			 (long long)bad, (double)r->buf[bad],
			 (double)allreduce_expected(r->p->n, (uint64_t)bad));
		return -1;
	}
	return 0;
}

int allreduce_run(const struct allreduce_ring *ring,
		  const struct allreduce_params *p,
		  struct allreduce_size_result *out, unsigned *n_out, char *err,
		  size_t len)
{
	struct ar_run r = {.ring = ring, .p = p, .err = err, .len = len};
	uint64_t max = 0;
	int rc = 0;

	*n_out = 0;
	for (unsigned i = 0; i < p->n_sizes; i++)
		if (p->sizes[i] > max)
			max = p->sizes[i];
	/* RDMA WRITEs go out of a registered buffer: the transport's. */
	r.buf = ring->rdma ? allreduce_rdma_buf(ring->rdma) : NULL;
	r.own_buf = !r.buf;
	if (!r.buf)
		r.buf = malloc(max ? max : 4);
	r.stage = malloc(AR_STAGE);
	if (!r.buf || !r.stage) {
		snprintf(err, len, "out of memory for %llu bytes",
			 (unsigned long long)max);
		rc = -1;
		goto out;
	}
	for (unsigned i = 0; i < p->n_sizes && rc == 0; i++) {
		r.size = p->sizes[i];
		rc = ar_size(&r, &out[i]);
		if (rc == 0 || out[i].mean_us > 0)
			*n_out = i + 1;
	}
out:
	if (r.own_buf)
		free(r.buf);
	free(r.stage);
	return rc;
}
