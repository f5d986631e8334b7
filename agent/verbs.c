/* The verbs engine's life cycle: verbs_setup (the goto ladder from device
 * to QPs in INIT) and its teardown, the event-loop side of the worker,
 * stop and free. See verbs_int.h for the other files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "log.h"
#include "verbs_int.h"

#define VERBS_LAT_INLINE 220 /* asked for; the device may give less */

/* ---- life cycle (event loop thread) ---- */

static void verbs_destroy(struct verbs_test *t)
{
	for (unsigned i = 0; i < t->n_qp; i++)
		if (t->q[i].qp && ibv_destroy_qp(t->q[i].qp))
			log_warnx("verbs: ibv_destroy_qp failed");
	if (t->mr && ibv_dereg_mr(t->mr))
		log_warnx("verbs: ibv_dereg_mr failed");
	free(t->buf);
	if (t->cq && ibv_destroy_cq(t->cq))
		log_warnx("verbs: ibv_destroy_cq failed");
	if (t->pd && ibv_dealloc_pd(t->pd))
		log_warnx("verbs: ibv_dealloc_pd failed");
	if (t->ctx)
		ibv_close_device(t->ctx);
	if (t->ev_efd)
		event_free(t->ev_efd);
	if (t->ev_deadline)
		event_free(t->ev_deadline);
	if (t->ev_finish)
		event_free(t->ev_finish);
	if (t->efd >= 0)
		close(t->efd);
	free(t);
}

static void verbs_report_done(struct verbs_test *t)
{
	if (t->reported_done || t->freed)
		return;
	if (t->thread_started && !t->joined)
		return; /* the worker's exit reports */
	t->reported_done = 1;
	atomic_store(&t->phase, VP_FINISHED);
	event_del(t->ev_deadline);
	if (!t->res.err && t->deadline_hit) {
		t->res.err = -ETIMEDOUT;
		snprintf(t->res.error, sizeof(t->res.error),
			 "no STOP before the test deadline (coordinator "
			 "gone?): torn down");
	}
	if (!t->res.err && t->conn_err) {
		t->res.err = t->conn_err;
		snprintf(t->res.error, sizeof(t->res.error), "%s", t->conn_why);
		t->res.no_path = t->conn_no_path;
	}
	if (t->res.err && t->res.no_path)
		verbs_path_detail(&t->local, &t->peer, t->procfs_root,
				  t->res.path_detail,
				  sizeof(t->res.path_detail));
	if (t->res.err)
		log_warnx("verbs %s %s: %s", t->requester ? "to" : "from",
			  t->peer_name, t->res.error);
	else
		log_debug("verbs", "%s %s: done, %.2f Gbps, cpu %.0f%%",
			  t->requester ? "to" : "from", t->peer_name,
			  t->res.gbps_sent + t->res.gbps_received,
			  t->res.cpu_pct);
	t->dcb(t, &t->res, t->arg);
}

static void verbs_on_efd(evutil_socket_t fd, short what, void *arg)
{
	struct verbs_test *t = arg;
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("verbs: eventfd read");
	if (atomic_load(&t->worker_done) && !t->joined) {
		pthread_join(t->tid, NULL);
		t->joined = 1;
	}
	if (atomic_load(&t->connect_done) && !t->reported_connect) {
		t->reported_connect = 1;
		t->in_cb = 1;
		t->ccb(t, t->conn_err, t->conn_why, t->arg);
		t->in_cb = 0;
		if (t->freed) {
			/* The callback freed t: finish that here. */
			verbs_free(t);
			return;
		}
		if (t->conn_err)
			atomic_store(&t->stop, 1);
	}
	if (!t->joined)
		return;
	/* The requester reports when its run ends; a target when told to
	 * stop, or on a connection failure. */
	if (t->requester || atomic_load(&t->stop) || t->conn_err)
		verbs_report_done(t);
}

static void verbs_on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct verbs_test *t = arg;

	(void)fd;
	(void)what;
	/* A running worker sees the deadline itself and reports. */
	t->deadline_hit = 1;
	atomic_store(&t->stop, 1);
	verbs_report_done(t);
}

static void verbs_on_finish(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	verbs_report_done(arg);
}

struct verbs_test *verbs_setup(struct event_base *base,
			       const struct verbs_setup *s,
			       const struct verbs_params *pin,
			       struct verbs_endpoint *local,
			       verbs_connected_cb ccb, verbs_done_cb dcb,
			       void *arg, char *why, size_t len)
{
	struct verbs_test *t;
	struct timeval tv;
	unsigned ifindex = 0;
	uint32_t rnd[VERBS_MAX_QPS];

	*why = '\0';
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	t->efd = -1;
	t->base = base;
	t->p = *pin;
	verbs_params_defaults(&t->p);
	if (verbs_params_check(&t->p, why, len) < 0)
		goto fail;
	if (t->p.kind == VERBS_LAT)
		t->p.qps = 1;
	t->requester = s->requester;
	snprintf(t->peer_name, sizeof(t->peer_name), "%s",
		 s->peer ? s->peer : "");
	snprintf(t->procfs_root, sizeof(t->procfs_root), "%s",
		 s->conf ? s->conf->procfs_root : "");
	t->ccb = ccb;
	t->dcb = dcb;
	t->arg = arg;
	t->res.kind = t->p.kind;
	t->res.method = "rdma";
	t->res.lat_convention =
		t->p.op == VERBS_READ ? "full round trip" : "half round trip";
	if (s->interface && *s->interface) {
		ifindex = if_nametoindex(s->interface);
		if (!ifindex) {
			snprintf(why, len, "no interface %s", s->interface);
			goto fail;
		}
	}
	t->ctx = verbs_open(s, ifindex, t->local.device,
			    sizeof(t->local.device), why, len);
	if (!t->ctx)
		goto fail;
	if (verbs_pick_gid(t, ifindex, s, why, len) < 0 ||
	    verbs_query(t, why, len) < 0)
		goto fail;
	t->pd = ibv_alloc_pd(t->ctx);
	if (!t->pd) {
		snprintf(why, len, "ibv_alloc_pd(%s): %s", t->local.device,
			 strerror(errno));
		goto fail;
	}
	if (verbs_register(t, s->conf ? s->conf->rdma_max_memory : 1ull << 30,
			   why, len) < 0)
		goto fail;
	t->cq = ibv_create_cq(t->ctx, (int)(t->p.qps * t->p.tx_depth), NULL,
			      NULL, 0);
	if (!t->cq) {
		snprintf(why, len, "ibv_create_cq(%u entries): %s",
			 t->p.qps * t->p.tx_depth, strerror(errno));
		goto fail;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		snprintf(why, len, "getrandom: %s", strerror(errno));
		goto fail;
	}
	for (unsigned i = 0; i < t->p.qps; i++) {
		struct ibv_qp *qp = NULL;

		if (t->p.kind == VERBS_LAT)
			qp = verbs_qp_create(t, VERBS_LAT_INLINE);
		if (!qp)
			qp = verbs_qp_create(t, 0);
		if (!qp) {
			snprintf(why, len, "ibv_create_qp(%s): %s",
				 t->local.device, strerror(errno));
			goto fail;
		}
		t->q[t->n_qp++].qp = qp;
		if (verbs_qp_to_init(t, qp)) {
			snprintf(why, len, "ibv_modify_qp(INIT): %s",
				 strerror(errno));
			goto fail;
		}
		t->local.qpn[i] = qp->qp_num;
		t->local.psn[i] = rnd[i] & 0xffffff;
	}
	t->local.n_qp = t->n_qp;
	t->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->efd < 0) {
		snprintf(why, len, "eventfd: %s", strerror(errno));
		goto fail;
	}
	t->ev_efd =
		event_new(base, t->efd, EV_READ | EV_PERSIST, verbs_on_efd, t);
	t->ev_deadline = evtimer_new(base, verbs_on_deadline, t);
	t->ev_finish = evtimer_new(base, verbs_on_finish, t);
	if (!t->ev_efd || !t->ev_deadline || !t->ev_finish ||
	    event_add(t->ev_efd, NULL) < 0) {
		snprintf(why, len, "out of memory");
		goto fail;
	}
	t->created = verbs_now();
	t->deadline = t->created + s->deadline_ms / 1000.0;
	tv.tv_sec = s->deadline_ms / 1000;
	tv.tv_usec = (s->deadline_ms % 1000) * 1000;
	if (evtimer_add(t->ev_deadline, &tv) < 0) {
		snprintf(why, len, "cannot arm the deadline");
		goto fail;
	}
	atomic_store(&t->phase, VP_SETUP);
	*local = t->local;
	log_debug("verbs",
		  "%s for %s: %s port %u GID %u (%s %s on %s), %u QPs, %zu "
		  "KiB",
		  t->requester ? "requester" : "target", t->peer_name,
		  t->local.device, t->local.port, t->local.gid_index,
		  t->local.gid_type, t->local.gid_str, t->local.netdev, t->n_qp,
		  t->buf_len >> 10);
	return t;

fail:
	verbs_destroy(t);
	return NULL;
}

void verbs_stop(struct verbs_test *t)
{
	struct timeval now = {0, 0};

	atomic_store(&t->stop, 1);
	/* A running worker reports on exit; otherwise report from the loop,
	 * never from inside the caller. */
	if (!t->thread_started || t->joined)
		evtimer_add(t->ev_finish, &now);
}

void verbs_free(struct verbs_test *t)
{
	if (!t)
		return;
	atomic_store(&t->stop, 1);
	t->freed = 1;
	if (t->in_cb)
		return; /* verbs_on_efd finishes it after the callback */
	/* The worker sees stop within a poll loop's turn (or when a blocking
	 * RTR address resolution gives up): wait for it, so that nothing
	 * outlives the call, not even at shutdown. */
	if (t->thread_started && !t->joined) {
		pthread_join(t->tid, NULL);
		t->joined = 1;
	}
	verbs_destroy(t);
}

const struct verbs_endpoint *verbs_local(const struct verbs_test *t)
{
	return &t->local;
}
