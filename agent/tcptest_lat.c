/* The TCP test engine's latency ping-pong: A pings each size and times
 * the round trips, B echoes. */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "tcptest_int.h"

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
void tcptest_lat_ping(struct tcptest_worker *w, char *buf)
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
void tcptest_lat_echo(struct tcptest_worker *w, char *buf)
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
