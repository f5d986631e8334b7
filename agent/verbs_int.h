/* The verbs engine's private parts: the test's state, shared by its files,
 * and the functions they call across files. Not for other modules: they
 * use verbs.h. The split is rc_pingpong's:
 *   verbs_params.c   parameters: defaults, check, memory
 *   verbs.c          life cycle: verbs_setup (device, PD, MR,
 *                    CQ, QPs, the goto ladder) and teardown, the event-loop
 *                    side, stop and free
 *   verbs_device.c   device, port and GID choice, memory registration,
 *                    queue pair creation and INIT
 *   verbs_connect.c  the connect step: the peer's data checked, RTR and RTS
 *   verbs_run.c      the worker thread: bandwidth and latency loops, CPU
 *   verbs_explain.c  operator-facing texts for failed transitions and work
 *                    completions */
#ifndef RING_VERBS_INT_H
#define RING_VERBS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <infiniband/verbs.h>

#include "verbs.h"

#define VERBS_MAX_POST_LIST TESTLIMITS_RDMA_POST_LIST_MAX
/* Results travel in the engine's arrays. */
_Static_assert(VERBS_MAX_QPS <= ENGINE_MAX_STREAMS, "QPs beyond engine_result");
_Static_assert(VERBS_MAX_SIZES <= ENGINE_MAX_SIZES,
	       "sizes beyond engine_result");

enum verbs_phase {
	VP_SETUP,      /* QPs in INIT, waiting for the peer's data */
	VP_CONNECTING, /* worker moving to RTS */
	VP_RUNNING,    /* connected; worker running or idle (target) */
	VP_FINISHED,   /* result final */
};

struct verbs_qp {
	struct ibv_qp *qp;
	uint64_t posted, completed; /* work requests */
	uint64_t win_msgs;
	double slice_bytes, peak_gbps;
};

struct verbs_test {
	struct event_base *base;
	struct verbs_params p;
	int requester;
	char peer_name[64];
	verbs_connected_cb ccb;
	verbs_done_cb dcb;
	void *arg;

	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t buf_len;
	struct verbs_qp q[VERBS_MAX_QPS];
	unsigned n_qp;
	unsigned max_inline;
	unsigned rd_atom;
	enum ibv_mtu active_mtu;
	int is_ib;

	struct verbs_endpoint local, peer;
	double created, deadline; /* monotonic seconds */

	/* worker <-> loop */
	pthread_t tid;
	int thread_started, joined;
	atomic_int stop;
	atomic_int phase;
	atomic_int connect_done; /* worker finished RTR/RTS (either way) */
	atomic_int worker_done;
	int efd;
	struct event *ev_efd, *ev_deadline, *ev_finish;
	int reported_connect, reported_done, freed, in_cb, deadline_hit;
	unsigned lat_done; /* latency: completions seen while spinning */
	int conn_err;
	char conn_why[320];
	char procfs_root[512]; /* for verbs_path_detail */
	int conn_no_path;      /* conn_why says there is no data-plane path */
	struct engine_result res;
};

/* verbs_run.c */
double verbs_now(void);
/* The worker thread: RTR and RTS, then (requester, WRITE latency target)
 * the run; it tells the loop through the eventfd. */
void *verbs_worker(void *arg);

/* verbs_device.c */
struct ibv_context *verbs_open(const struct verbs_setup *s, unsigned ifindex,
			       char *name, size_t name_len, char *why,
			       size_t len);
int verbs_pick_gid(struct verbs_test *t, unsigned ifindex,
		   const struct verbs_setup *s, char *why, size_t len);
int verbs_query(struct verbs_test *t, char *why, size_t len);
int verbs_register(struct verbs_test *t, uint64_t max_memory, char *why,
		   size_t len);
struct ibv_qp *verbs_qp_create(struct verbs_test *t, unsigned inline_);
int verbs_qp_to_init(struct verbs_test *t, struct ibv_qp *qp);

/* verbs_connect.c */
int verbs_qp_to_rts(struct verbs_test *t, unsigned i);

#endif
