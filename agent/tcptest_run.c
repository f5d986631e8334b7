/* The TCP test engine's test proper: the stream threads, the start gate
 * both sides pass together, the result and its CPU accounting. */
#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "log.h"
#include "tcptest_int.h"

/* Start signals on stream 0 (tcptest_start_signal). */
#define TCPTEST_READY 'R' /* B -> A: B's stream threads run */
#define TCPTEST_GO 'G'	  /* A -> B: the clocks start */

#define TCPTEST_STACK (256u << 10)

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

void tcptest_run(struct tcptest *t)
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
