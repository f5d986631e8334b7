/* The verbs engine's worker thread: the bandwidth and latency loops and
 * their CPU accounting, on queue pairs the connect step brought to RTS. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "verbs_int.h"

#define VERBS_SLICE_S 0.1 /* peak rate granularity */
#define VERBS_DRAIN_S 5.0 /* after the window, for the last completions */
#define VERBS_POLL_BATCH 64
#define VERBS_IDLE_YIELD 1024 /* empty polls before a sched_yield */

double verbs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int verbs_should_stop(struct verbs_test *t, double now)
{
	if (atomic_load(&t->stop))
		return 1;
	if (now > t->deadline) {
		if (!t->res.err) {
			t->res.err = -ETIMEDOUT;
			snprintf(t->res.error, sizeof(t->res.error),
				 "the test passed its deadline");
		}
		return 1;
	}
	return 0;
}

static void verbs_fail_wc(struct verbs_test *t, const struct ibv_wc *wc,
			  uint64_t ok_before)
{
	if (t->res.err)
		return;
	t->res.err = -EIO;
	t->res.no_path = verbs_explain_wc(wc->status, ok_before, &t->local,
					  &t->peer, t->peer_name, t->res.error,
					  sizeof(t->res.error));
}

/* Post up to n work requests on queue pair i, chained post_list at a
 * time; every cq_mod-th one (and the very last of a counted run) is
 * signalled, so each completion retires a known number of them. */
static int verbs_post_bw(struct verbs_test *t, unsigned i, uint64_t n,
			 uint64_t last)
{
	struct ibv_send_wr wr[VERBS_MAX_POST_LIST], *bad;
	struct ibv_sge sge[VERBS_MAX_POST_LIST];
	struct verbs_qp *q = &t->q[i];
	uint64_t off = (uint64_t)i * t->p.size;

	while (n) {
		unsigned k = n < t->p.post_list ? (unsigned)n : t->p.post_list;

		for (unsigned j = 0; j < k; j++) {
			uint64_t seq = q->posted + j + 1;

			memset(&wr[j], 0, sizeof(wr[j]));
			sge[j].addr = (uint64_t)(uintptr_t)(t->buf + off);
			sge[j].length = t->p.size;
			sge[j].lkey = t->mr->lkey;
			wr[j].wr_id = ((uint64_t)i << 48) | seq;
			wr[j].sg_list = &sge[j];
			wr[j].num_sge = 1;
			wr[j].opcode = t->p.op == VERBS_READ
					       ? IBV_WR_RDMA_READ
					       : IBV_WR_RDMA_WRITE;
			if (seq % t->p.cq_mod == 0 || seq == last)
				wr[j].send_flags = IBV_SEND_SIGNALED;
			wr[j].wr.rdma.remote_addr = t->peer.addr + off;
			wr[j].wr.rdma.rkey = t->peer.rkey;
			wr[j].next = j + 1 < k ? &wr[j + 1] : NULL;
		}
		if (ibv_post_send(q->qp, wr, &bad)) {
			snprintf(t->res.error, sizeof(t->res.error),
				 "ibv_post_send: %s", strerror(errno));
			t->res.err = -EIO;
			return -1;
		}
		q->posted += k;
		n -= k;
	}
	return 0;
}

static void verbs_slice_close(struct verbs_test *t, double *slice_total,
			      double *peak)
{
	double g = *slice_total * 8 / VERBS_SLICE_S / 1e9;

	if (g > *peak)
		*peak = g;
	*slice_total = 0;
	for (unsigned i = 0; i < t->n_qp; i++) {
		g = t->q[i].slice_bytes * 8 / VERBS_SLICE_S / 1e9;
		if (g > t->q[i].peak_gbps)
			t->q[i].peak_gbps = g;
		t->q[i].slice_bytes = 0;
	}
}

static void verbs_run_bw(struct verbs_test *t)
{
	struct ibv_wc wc[VERBS_POLL_BATCH];
	const struct verbs_params *p = &t->p;
	double t0 = verbs_now(), w0, w1, now = t0, slice_end, slice_total = 0;
	double peak = 0, last_done = t0;
	uint64_t ok = 0;
	unsigned idle = 0;
	int posting = 1, counted = p->iterations > 0;

	w0 = counted ? t0 : t0 + p->warmup_ms / 1000.0;
	w1 = counted ? 0 : w0 + p->duration_ms / 1000.0;
	slice_end = w0 + VERBS_SLICE_S;
	for (unsigned spin = 0;; spin++) {
		int outstanding = 0, n;

		/* The clock is read after every completion; between them only
		 * now and then (it can cost a system call in a VM). */
		if (spin % 32 == 0)
			now = verbs_now();
		if (verbs_should_stop(t, now))
			break;
		if (!counted && posting && now >= w1)
			posting = 0;
		if (!posting && now > w1 + VERBS_DRAIN_S && !counted)
			break;
		for (unsigned i = 0; i < t->n_qp; i++) {
			struct verbs_qp *q = &t->q[i];
			uint64_t room =
				p->tx_depth - (q->posted - q->completed);
			uint64_t last = counted ? p->iterations : 0;

			if (posting && counted && q->posted + room > last)
				room = last - q->posted;
			else if (posting && !counted)
				room -= room % p->cq_mod; /* whole groups */
			if (posting && room &&
			    verbs_post_bw(t, i, room, last) < 0)
				goto out;
			if (q->posted != q->completed)
				outstanding = 1;
		}
		if (!outstanding && (!posting || counted))
			break;
		n = ibv_poll_cq(t->cq, VERBS_POLL_BATCH, wc);
		/* A long dry spell: let whatever serves the device (soft-RoCE's
		 * kernel work on a shared core) run. With nothing else to run
		 * this returns at once. */
		if (n == 0 && ++idle % VERBS_IDLE_YIELD == 0)
			sched_yield();
		if (n < 0) {
			t->res.err = -EIO;
			snprintf(t->res.error, sizeof(t->res.error),
				 "ibv_poll_cq failed");
			goto out;
		}
		if (n)
			now = verbs_now();
		while (!counted && now >= slice_end && slice_end <= w1) {
			if (slice_end > w0)
				verbs_slice_close(t, &slice_total, &peak);
			slice_end += VERBS_SLICE_S;
		}
		while (counted && now >= slice_end) {
			verbs_slice_close(t, &slice_total, &peak);
			slice_end += VERBS_SLICE_S;
		}
		for (int k = 0; k < n; k++) {
			unsigned i = (unsigned)(wc[k].wr_id >> 48);
			uint64_t seq = wc[k].wr_id & ((1ull << 48) - 1);
			struct verbs_qp *q;
			uint64_t msgs;

			if (wc[k].status != IBV_WC_SUCCESS) {
				verbs_fail_wc(t, &wc[k], ok);
				goto out;
			}
			if (i >= t->n_qp)
				continue;
			q = &t->q[i];
			msgs = seq - q->completed;
			q->completed = seq;
			ok += msgs;
			last_done = now;
			if (counted || (now >= w0 && now < w1)) {
				double b = (double)msgs * p->size;

				q->win_msgs += msgs;
				q->slice_bytes += b;
				slice_total += b;
			}
		}
	}
out:
	t->res.window_s = counted ? last_done - t0 : p->duration_ms / 1000.0;
	if (!counted && now < w1) /* stopped early */
		t->res.window_s = now > w0 ? now - w0 : 0;
	t->res.n_streams = t->n_qp;
	t->res.peak_gbps = peak;
	for (unsigned i = 0; i < t->n_qp; i++) {
		struct engine_stream *st = &t->res.streams[i];

		st->index = i;
		st->sending = 1;
		st->messages = t->q[i].win_msgs;
		st->bytes = t->q[i].win_msgs * p->size;
		st->gbps = t->res.window_s > 0 ? (double)st->bytes * 8 /
							 t->res.window_s / 1e9
					       : 0;
		/* A window shorter than a slice: the average is the peak. */
		st->peak_gbps = t->q[i].peak_gbps > st->gbps ? t->q[i].peak_gbps
							     : st->gbps;
		t->res.gbps_sent += st->gbps;
		if (t->res.window_s > 0)
			t->res.msg_rate_mps +=
				(double)st->messages / t->res.window_s / 1e6;
	}
	if (t->res.peak_gbps < t->res.gbps_sent)
		t->res.peak_gbps = t->res.gbps_sent;
	/* gbps_sent is what the requester's work moved, whichever way the
	 * data went (READ brings it towards the requester). */
}

/* Wait for one completion of queue pair 0; 0, or -1 with res.err set. One
 * the byte spin already reaped counts. */
static int verbs_wait_one(struct verbs_test *t, uint64_t ok_before)
{
	struct ibv_wc wc;

	if (t->lat_done) {
		t->lat_done--;
		return 0;
	}
	for (;;) {
		int n = ibv_poll_cq(t->cq, 1, &wc);

		if (n < 0) {
			t->res.err = -EIO;
			snprintf(t->res.error, sizeof(t->res.error),
				 "ibv_poll_cq failed");
			return -1;
		}
		if (n == 1) {
			if (wc.status == IBV_WC_SUCCESS)
				return 0;
			verbs_fail_wc(t, &wc, ok_before);
			return -1;
		}
		if (verbs_should_stop(t, verbs_now()))
			return -1;
	}
}

static int verbs_post_one(struct verbs_test *t, enum ibv_wr_opcode op,
			  uint8_t *local, uint64_t remote, uint32_t size)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	memset(&wr, 0, sizeof(wr));
	sge.addr = (uint64_t)(uintptr_t)local;
	sge.length = size;
	sge.lkey = t->mr->lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_RDMA_WRITE && size <= t->max_inline)
		wr.send_flags |= IBV_SEND_INLINE;
	wr.wr.rdma.remote_addr = remote;
	wr.wr.rdma.rkey = t->peer.rkey;
	if (ibv_post_send(t->q[0].qp, &wr, &bad)) {
		t->res.err = -EIO;
		snprintf(t->res.error, sizeof(t->res.error),
			 "ibv_post_send: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Spin until the last byte of the receive area's message holds v, while
 * watching the CQ for an error (a peer that is gone). */
static int verbs_wait_byte(struct verbs_test *t, volatile uint8_t *b, uint8_t v,
			   uint64_t ok_before)
{
	unsigned spins = 0;
	struct ibv_wc wc;

	while (*b != v) {
		if (++spins % 256)
			continue;
		if (ibv_poll_cq(t->cq, 1, &wc) == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				verbs_fail_wc(t, &wc, ok_before);
				return -1;
			}
			t->lat_done++; /* our own write, done: keep count */
		}
		if (verbs_should_stop(t, verbs_now()))
			return -1;
	}
	return 0;
}

/* WRITE ping-pong: the requester writes, the target sees the last byte
 * change and writes back; half the round trip is reported (the
 * ib_write_lat convention). READ: one read at a time, full round trip. */
static void verbs_run_lat(struct verbs_test *t)
{
	const struct verbs_params *p = &t->p;
	uint32_t max = (uint32_t)(verbs_params_memory(p) / 2);
	uint8_t *recv = t->buf, *send = t->buf + max;
	unsigned total = p->lat_warmup + p->lat_iterations;
	double *v = calloc(p->lat_iterations, sizeof(*v));
	unsigned counter = 0;
	uint64_t ok = 0;

	if (!v) {
		t->res.err = -ENOMEM;
		snprintf(t->res.error, sizeof(t->res.error), "out of memory");
		return;
	}
	t->res.lat_convention =
		p->op == VERBS_READ ? "full round trip" : "half round trip";
	for (unsigned s = 0; s < p->n_sizes; s++) {
		uint32_t size = p->sizes[s];

		for (unsigned i = 0; i < total; i++) {
			uint8_t val = (uint8_t)(counter++ % 255 + 1);
			double a, b;

			if (p->op == VERBS_READ) {
				if (!t->requester)
					break;
				a = verbs_now();
				if (verbs_post_one(t, IBV_WR_RDMA_READ, recv,
						   t->peer.addr, size) < 0 ||
				    verbs_wait_one(t, ok) < 0)
					goto out;
				b = verbs_now();
				if (i >= p->lat_warmup)
					v[i - p->lat_warmup] = (b - a) * 1e6;
				ok++;
				continue;
			}
			if (!t->requester &&
			    verbs_wait_byte(t, recv + size - 1, val, ok) < 0)
				goto out;
			send[size - 1] = val;
			a = verbs_now();
			if (verbs_post_one(t, IBV_WR_RDMA_WRITE, send,
					   t->peer.addr, size) < 0)
				goto out;
			if (t->requester &&
			    verbs_wait_byte(t, recv + size - 1, val, ok) < 0)
				goto out;
			b = verbs_now();
			/* The send area may change only once the write
			 * completed. */
			if (verbs_wait_one(t, ok) < 0)
				goto out;
			send[size - 1] = 0;
			if (t->requester && i >= p->lat_warmup)
				v[i - p->lat_warmup] = (b - a) * 1e6 / 2;
			ok++;
		}
		if (!t->requester)
			continue;
		t->res.lat[s].size = size;
		stats_summarize(v, p->lat_iterations, &t->res.lat[s].us);
		t->res.n_lat = s + 1;
	}
out:
	free(v);
}

static void verbs_signal(struct verbs_test *t)
{
	uint64_t one = 1;

	if (write(t->efd, &one, sizeof(one)) < 0)
		log_warn("verbs: eventfd");
}

static double verbs_tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

void *verbs_worker(void *arg)
{
	struct verbs_test *t = arg;
	struct rusage r0, r1;
	double a, b;
	int e = 0;

	for (unsigned i = 0; i < t->n_qp && !e; i++)
		e = verbs_qp_to_rts(t, i);
	t->conn_err = e;
	atomic_store(&t->phase, e ? VP_FINISHED : VP_RUNNING);
	atomic_store(&t->connect_done, 1);
	verbs_signal(t);
	/* A bandwidth or READ target has nothing to do: the hardware serves
	 * the peer's requests until STOP. */
	if (!e && (t->requester ||
		   (t->p.kind == VERBS_LAT && t->p.op == VERBS_WRITE))) {
		getrusage(RUSAGE_THREAD, &r0);
		a = verbs_now();
		if (t->p.kind == VERBS_BW)
			verbs_run_bw(t);
		else
			verbs_run_lat(t);
		b = verbs_now();
		getrusage(RUSAGE_THREAD, &r1);
		if (b > a)
			t->res.cpu_pct = 100 *
					 (verbs_tv_s(r1.ru_utime) -
					  verbs_tv_s(r0.ru_utime) +
					  verbs_tv_s(r1.ru_stime) -
					  verbs_tv_s(r0.ru_stime)) /
					 (b - a);
	}
	/* The loop joins us when this arrives; nothing may touch t after. */
	atomic_store(&t->worker_done, 1);
	verbs_signal(t);
	return NULL;
}
