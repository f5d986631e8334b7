/* The TCP test engine's core: parameters, the control thread and the life
 * cycle (new, start, done in the loop, free). See tcptest_int.h for the
 * other files. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "tcptest_int.h"

#define TCPTEST_GRACE_MS 5000

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
		if (p->duration_ms < TESTLIMITS_SAMPLE_DURATION_MIN_MS ||
		    p->duration_ms > TESTLIMITS_DURATION_MAX_MS) {
			snprintf(why, len,
				 "duration %u ms out of range %u ms..%u s",
				 p->duration_ms,
				 TESTLIMITS_SAMPLE_DURATION_MIN_MS,
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

void tcptest_destroy(struct tcptest *t)
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

struct tcptest *tcptest_new(struct event_base *base, int is_a,
			    const uint8_t token[TCPTEST_TOKEN_LEN],
			    const struct tcptest_params *p, unsigned setup_ms,
			    tcptest_done_cb cb, void *arg)
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

int tcptest_start(struct tcptest *t)
{
	int rc = pthread_create(&t->ctl, NULL, tcptest_ctl_main, t);

	if (rc) {
		errno = rc;
		return -1;
	}
	return 0;
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
