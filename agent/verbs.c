#include "verbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <ifaddrs.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "inventory.h"
#include "log.h"

/* Local ACK timeout 4.096 us * 2^14 = 67 ms (perftest's), 6 retries: a
 * peer that is not there shows as IBV_WC_RETRY_EXC_ERR after about 0.5 s.
 * Not 7: soft-RoCE (and the IB spec for RNR) reads 7 as "retry forever",
 * and a missing path would hang. */
#define VERBS_QP_TIMEOUT 14
#define VERBS_RETRY_CNT 6
#define VERBS_RNR_RETRY 6
#define VERBS_MAX_RD_ATOM 16
#define VERBS_LAT_INLINE 220 /* asked for; the device may give less */
#define VERBS_SLICE_S 0.1    /* peak rate granularity */
#define VERBS_DRAIN_S 5.0    /* after the window, for the last completions */
#define VERBS_POLL_BATCH 64
#define VERBS_IDLE_YIELD 1024 /* empty polls before a sched_yield */
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
	int conn_no_path; /* conn_why says there is no data-plane path */
	struct engine_result res;
};

static double verbs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- parameters ---- */

void verbs_params_defaults(struct verbs_params *p)
{
	if (!p->qps)
		p->qps = p->kind == VERBS_LAT ? 1 : TESTLIMITS_RDMA_QPS_DEFAULT;
	if (!p->size)
		p->size = p->op == VERBS_READ
				  ? TESTLIMITS_RDMA_SIZE_DEFAULT_READ
				  : TESTLIMITS_RDMA_SIZE_DEFAULT_WRITE;
	if (!p->tx_depth)
		p->tx_depth = p->kind == VERBS_LAT
				      ? TESTLIMITS_RDMA_LAT_TX_DEPTH
				      : TESTLIMITS_RDMA_TX_DEPTH_DEFAULT;
	/* A default moderation is clipped to the depth, a given one must
	 * divide it (as testlimits_check judges a request). */
	if (!p->cq_mod)
		p->cq_mod = TESTLIMITS_RDMA_CQ_MOD_DEFAULT < p->tx_depth
				    ? TESTLIMITS_RDMA_CQ_MOD_DEFAULT
				    : p->tx_depth;
	if (!p->post_list)
		p->post_list = TESTLIMITS_RDMA_POST_LIST_DEFAULT;
	if (!p->duration_ms && !p->iterations)
		p->duration_ms = TESTLIMITS_DURATION_DEFAULT_MS;
	if (!p->lat_iterations)
		p->lat_iterations = TESTLIMITS_LAT_ITERATIONS_DEFAULT;
}

int verbs_params_check(const struct verbs_params *p, char *why, size_t len)
{
	if (p->kind != VERBS_BW && p->kind != VERBS_LAT) {
		snprintf(why, len, "unknown RDMA test kind %d", (int)p->kind);
		return -1;
	}
	if (p->op != VERBS_WRITE && p->op != VERBS_READ) {
		snprintf(why, len, "unknown RDMA operation %d", (int)p->op);
		return -1;
	}
	if (p->mtu && p->mtu != 256 && p->mtu != 512 && p->mtu != 1024 &&
	    p->mtu != 2048 && p->mtu != 4096) {
		snprintf(why, len, "mtu %u: use 256, 512, 1024, 2048 or 4096",
			 p->mtu);
		return -1;
	}
	if (p->kind == VERBS_LAT) {
		if (p->n_sizes < 1 || p->n_sizes > VERBS_MAX_SIZES) {
			snprintf(why, len, "latency needs 1..%d sizes",
				 VERBS_MAX_SIZES);
			return -1;
		}
		for (unsigned i = 0; i < p->n_sizes; i++) {
			if (p->sizes[i] < 1 ||
			    p->sizes[i] > VERBS_MAX_LAT_MSG) {
				snprintf(why, len,
					 "latency size %u out of range "
					 "(1..%u bytes)",
					 p->sizes[i], VERBS_MAX_LAT_MSG);
				return -1;
			}
			/* The ping-pong polls a message's last byte: a size
			 * twice would find the old value there. */
			for (unsigned j = 0; j < i; j++)
				if (p->sizes[j] == p->sizes[i]) {
					snprintf(why, len,
						 "latency size %u given twice",
						 p->sizes[i]);
					return -1;
				}
		}
		if (p->lat_iterations < 1 ||
		    p->lat_iterations > TESTLIMITS_LAT_ITERATIONS_MAX ||
		    p->lat_warmup > TESTLIMITS_LAT_WARMUP_MAX) {
			snprintf(why, len,
				 "latency iterations 1..%u, warm-up 0..%u",
				 TESTLIMITS_LAT_ITERATIONS_MAX,
				 TESTLIMITS_LAT_WARMUP_MAX);
			return -1;
		}
		return 0;
	}
	if (p->qps < 1 || p->qps > VERBS_MAX_QPS) {
		snprintf(why, len, "qps %u out of range (1..%d)", p->qps,
			 VERBS_MAX_QPS);
		return -1;
	}
	if (p->size < 1 || p->size > VERBS_MAX_BW_MSG) {
		snprintf(why, len, "size %u out of range (1..%u bytes)",
			 p->size, VERBS_MAX_BW_MSG);
		return -1;
	}
	if (p->tx_depth < 1 || p->tx_depth > VERBS_MAX_TX_DEPTH) {
		snprintf(why, len, "tx depth %u out of range (1..%d)",
			 p->tx_depth, VERBS_MAX_TX_DEPTH);
		return -1;
	}
	if (p->cq_mod < 1 || p->cq_mod > p->tx_depth ||
	    p->tx_depth % p->cq_mod) {
		snprintf(why, len,
			 "cq moderation %u must divide the tx depth %u",
			 p->cq_mod, p->tx_depth);
		return -1;
	}
	if (p->post_list < 1 || p->post_list > VERBS_MAX_POST_LIST) {
		snprintf(why, len, "post list %u out of range (1..%d)",
			 p->post_list, VERBS_MAX_POST_LIST);
		return -1;
	}
	if (p->iterations > TESTLIMITS_RDMA_ITERATIONS_MAX) {
		snprintf(why, len, "iterations out of range (0..%llu)",
			 TESTLIMITS_RDMA_ITERATIONS_MAX);
		return -1;
	}
	if (!p->iterations && (p->duration_ms < TESTLIMITS_DURATION_MIN_MS ||
			       p->duration_ms > TESTLIMITS_DURATION_MAX_MS ||
			       p->warmup_ms > TESTLIMITS_WARMUP_MAX_MS)) {
		snprintf(why, len, "duration %u ms..%u s and warm-up 0..%u s",
			 TESTLIMITS_DURATION_MIN_MS,
			 TESTLIMITS_DURATION_MAX_MS / 1000,
			 TESTLIMITS_WARMUP_MAX_MS / 1000);
		return -1;
	}
	return 0;
}

uint64_t verbs_params_memory(const struct verbs_params *p)
{
	uint32_t max = 0;

	if (p->kind == VERBS_BW)
		return (uint64_t)p->qps * p->size;
	for (unsigned i = 0; i < p->n_sizes && i < VERBS_MAX_SIZES; i++)
		if (p->sizes[i] > max)
			max = p->sizes[i];
	/* receive area, then send area */
	return 2 * (uint64_t)max;
}

/* ---- operator-facing errors ---- */

int verbs_conn_no_path(const struct verbs_test *t)
{
	return t->conn_no_path;
}

static const char *verbs_peer_gid(const struct verbs_endpoint *peer)
{
	return peer && *peer->gid_str ? peer->gid_str : "?";
}

int verbs_explain_rtr(int e, const struct verbs_endpoint *local,
		      const struct verbs_endpoint *peer, const char *peer_name,
		      char *out, size_t len)
{
	if (e == ETIMEDOUT || e == ENETUNREACH || e == EHOSTUNREACH ||
	    e == ENODATA) {
		snprintf(out, len,
			 "ibv_modify_qp(RTR) failed: %s: no data-plane path "
			 "from %s (%s) to %s (%s); these nodes are not ring "
			 "neighbours (the rank-order failure of the field "
			 "notes)",
			 strerror(e), local->netdev, local->gid_str,
			 peer_name ? peer_name : "the peer",
			 verbs_peer_gid(peer));
		return 1;
	}
	snprintf(out, len, "ibv_modify_qp(RTR) towards %s (%s): %s",
		 peer_name ? peer_name : "the peer", verbs_peer_gid(peer),
		 strerror(e));
	return 0;
}

int verbs_explain_wc(enum ibv_wc_status st, uint64_t ok_before,
		     const struct verbs_endpoint *local,
		     const struct verbs_endpoint *peer, const char *peer_name,
		     char *out, size_t len)
{
	const char *who = peer_name && *peer_name ? peer_name : "the peer";
	int no_path = 0;

	switch (st) {
	case IBV_WC_RETRY_EXC_ERR:
		no_path = !ok_before;
		if (!ok_before)
			snprintf(out, len,
				 "transport retry exceeded: no data-plane "
				 "path from %s (%s) to %s; these nodes are "
				 "not ring neighbours (the rank-order failure "
				 "of the field notes)",
				 local->netdev, local->gid_str,
				 verbs_peer_gid(peer));
		else
			snprintf(out, len,
				 "transport retry exceeded after %llu "
				 "messages: %s stopped answering (its agent, "
				 "its port or the cable went away mid-test)",
				 (unsigned long long)ok_before, who);
		break;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		snprintf(out, len,
			 "receiver-not-ready retry exceeded: %s posted no "
			 "receive buffer",
			 who);
		break;
	case IBV_WC_REM_ACCESS_ERR:
		snprintf(out, len,
			 "remote access error: %s refused the memory key or "
			 "address (its test was torn down?)",
			 who);
		break;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR:
		snprintf(out, len, "%s rejected the request: %s", who,
			 ibv_wc_status_str(st));
		break;
	case IBV_WC_WR_FLUSH_ERR:
		snprintf(out, len,
			 "work request flushed: the queue pair went to the "
			 "error state");
		break;
	default:
		snprintf(out, len, "work completion error: %s (%d)",
			 ibv_wc_status_str(st), (int)st);
		break;
	}
	return no_path;
}

/* ---- device, port and GID ---- */

static int verbs_gid_is_v4(const uint8_t *g)
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0,	  0,
					0, 0, 0, 0, 0xff, 0xff};

	return !memcmp(g, pfx, sizeof(pfx));
}

/* Higher is better: RoCE v2 over IPv4 (what NCCL uses on a routed or
 * direct-cabled RoCE fabric), then v2 over IPv6, then the rest; link-local
 * addresses last. */
static int verbs_gid_score(const struct ibv_gid_entry *e)
{
	const uint8_t *g = e->gid.raw;
	int v4 = verbs_gid_is_v4(g);
	int ll = v4 ? (g[12] == 169 && g[13] == 254)
		    : (g[0] == 0xfe && (g[1] & 0xc0) == 0x80);
	int s = e->gid_type == IBV_GID_TYPE_ROCE_V2 ? 8 : 4;

	if (v4)
		s += 2;
	if (!ll)
		s += 1;
	return s;
}

static void verbs_fill_ipv4(struct verbs_endpoint *ep)
{
	struct ifaddrs *ifa, *i;
	struct in_addr want;

	if (!verbs_gid_is_v4(ep->gid))
		return;
	memcpy(&want, ep->gid + 12, 4);
	inet_ntop(AF_INET, &want, ep->ipv4, sizeof(ep->ipv4));
	if (getifaddrs(&ifa) < 0)
		return;
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_in *a = (void *)i->ifa_addr;
		const struct sockaddr_in *m = (void *)i->ifa_netmask;

		if (!a || a->sin_family != AF_INET || !m ||
		    a->sin_addr.s_addr != want.s_addr)
			continue;
		ep->prefix = (unsigned)__builtin_popcount(m->sin_addr.s_addr);
		break;
	}
	freeifaddrs(ifa);
}

/* Choose port and GID on an open device. ifindex 0 = any interface. */
static int verbs_pick_gid(struct verbs_test *t, unsigned ifindex,
			  const struct verbs_setup *s, char *why, size_t len)
{
	struct ibv_gid_entry tab[256], best;
	ssize_t n = ibv_query_gid_table(t->ctx, tab, 256, 0);
	int best_score = -1;

	if (s->gid_set) {
		unsigned port = t->local.port ? t->local.port : 1;

		if (ibv_query_gid_ex(t->ctx, port, s->gid_index, &best, 0)) {
			snprintf(why, len,
				 "GID index %u is not valid on %s port %u",
				 s->gid_index, t->local.device, port);
			return -1;
		}
		best_score = 0;
	}
	for (ssize_t i = 0; !s->gid_set && i < n; i++) {
		int sc;

		if (ifindex && tab[i].ndev_ifindex != ifindex)
			continue;
		if (t->local.port && tab[i].port_num != t->local.port)
			continue;
		sc = verbs_gid_score(&tab[i]);
		if (sc > best_score) {
			best_score = sc;
			best = tab[i];
		}
	}
	if (best_score < 0) {
		snprintf(why, len,
			 "%s has no GID%s%s: is the interface up with an "
			 "address, and is it bound to this RDMA device?",
			 t->local.device, ifindex ? " on " : "",
			 ifindex ? s->interface : "");
		return -1;
	}
	t->local.port = best.port_num;
	t->local.gid_index = best.gid_index;
	memcpy(t->local.gid, best.gid.raw, 16);
	inet_ntop(AF_INET6, best.gid.raw, t->local.gid_str,
		  sizeof(t->local.gid_str));
	snprintf(t->local.gid_type, sizeof(t->local.gid_type), "%s",
		 inventory_gid_type(best.gid_type));
	if (best.ndev_ifindex)
		if_indextoname(best.ndev_ifindex, t->local.netdev);
	verbs_fill_ipv4(&t->local);
	return 0;
}

static int verbs_allowed(const struct verbs_setup *s, const char *dev)
{
	return !s->conf || agent_conf_is_rdma_device(s->conf, dev);
}

/* The device that carries a GID on ifindex (the interface facing the
 * peer), among those the agent may use. */
static struct ibv_context *verbs_open(const struct verbs_setup *s,
				      unsigned ifindex, char *name,
				      size_t name_len, char *why, size_t len)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(why, len, "no RDMA devices: %s", strerror(errno));
		return NULL;
	}
	for (int i = 0; i < n && !ctx; i++) {
		const char *dn = ibv_get_device_name(list[i]);
		struct ibv_gid_entry tab[256];
		ssize_t k;
		int match = 0;

		if (s->device && *s->device) {
			if (strcmp(dn, s->device))
				continue;
			if (!verbs_allowed(s, dn)) {
				snprintf(why, len,
					 "RDMA device %s is not this agent's "
					 "(rdma_device in agent.conf)",
					 dn);
				break;
			}
			ctx = ibv_open_device(list[i]);
			if (!ctx)
				snprintf(why, len, "cannot open %s: %s", dn,
					 strerror(errno));
			break;
		}
		if (!verbs_allowed(s, dn))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			continue;
		k = ibv_query_gid_table(ctx, tab, 256, 0);
		for (ssize_t j = 0; j < k && !match; j++)
			match = !ifindex || tab[j].ndev_ifindex == ifindex;
		if (!match) {
			ibv_close_device(ctx);
			ctx = NULL;
		}
	}
	if (ctx)
		snprintf(name, name_len, "%s",
			 ibv_get_device_name(ctx->device));
	else if (!*why && s->device && *s->device)
		snprintf(why, len, "no RDMA device named %s", s->device);
	else if (!*why)
		snprintf(why, len,
			 "no RDMA device of this agent has a GID on %s (no "
			 "RoCE port there, or the interface has no address)",
			 s->interface && *s->interface ? s->interface : "any "
								       "interface");
	ibv_free_device_list(list);
	return ctx;
}

static int verbs_query(struct verbs_test *t, char *why, size_t len)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int e;

	e = ibv_query_device(t->ctx, &da);
	if (e) {
		snprintf(why, len, "ibv_query_device(%s): %s", t->local.device,
			 strerror(e));
		return -1;
	}
	e = ibv_query_port(t->ctx, (uint8_t)t->local.port, &pa);
	if (e) {
		snprintf(why, len, "ibv_query_port(%s port %u): %s",
			 t->local.device, t->local.port, strerror(e));
		return -1;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		snprintf(why, len, "%s port %u is %s, not ACTIVE (link down?)",
			 t->local.device, t->local.port,
			 ibv_port_state_str(pa.state));
		return -1;
	}
	t->rd_atom = da.max_qp_rd_atom < VERBS_MAX_RD_ATOM
			     ? (unsigned)da.max_qp_rd_atom
			     : VERBS_MAX_RD_ATOM;
	if (!t->rd_atom)
		t->rd_atom = 1;
	t->local.rd_atomic = t->rd_atom;
	if ((int)t->p.tx_depth > da.max_qp_wr) {
		snprintf(why, len, "tx depth %u exceeds %s's limit %d",
			 t->p.tx_depth, t->local.device, da.max_qp_wr);
		return -1;
	}
	t->active_mtu = pa.active_mtu;
	t->local.mtu = 128u << pa.active_mtu;
	t->local.lid = pa.lid;
	t->is_ib = pa.link_layer != IBV_LINK_LAYER_ETHERNET;
	return 0;
}

/* ---- memory ---- */

static int verbs_register(struct verbs_test *t, uint64_t max_memory, char *why,
			  size_t len)
{
	uint64_t need = verbs_params_memory(&t->p);
	size_t align = need >= (2u << 20) ? 2u << 20 : 4096;
	struct rlimit rl;
	int e;

	if (need > max_memory) {
		snprintf(why, len,
			 "the test needs %llu MiB of registered memory; "
			 "rdma_max_memory allows %llu MiB",
			 (unsigned long long)(need >> 20),
			 (unsigned long long)(max_memory >> 20));
		errno = E2BIG;
		return -1;
	}
	t->buf_len = (need + align - 1) / align * align;
	e = posix_memalign((void **)&t->buf, align, t->buf_len);
	if (e) {
		t->buf = NULL;
		snprintf(why, len, "cannot allocate %zu bytes: %s", t->buf_len,
			 strerror(e));
		errno = e;
		return -1;
	}
	memset(t->buf, 0, t->buf_len);
	t->mr = ibv_reg_mr(t->pd, t->buf, t->buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
	if (!t->mr) {
		e = errno;
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY)
			snprintf(why, len,
				 "ibv_reg_mr of %zu KiB failed: %s; the "
				 "locked-memory limit (RLIMIT_MEMLOCK) is "
				 "%llu KiB: raise LimitMEMLOCK in "
				 "ring-agent.service to at least "
				 "rdma_max_total_memory plus a little",
				 t->buf_len >> 10, strerror(e),
				 (unsigned long long)(rl.rlim_cur >> 10));
		else
			snprintf(why, len, "ibv_reg_mr of %zu KiB failed: %s",
				 t->buf_len >> 10, strerror(e));
		free(t->buf);
		t->buf = NULL;
		errno = e;
		return -1;
	}
	t->local.rkey = t->mr->rkey;
	t->local.addr = (uint64_t)(uintptr_t)t->buf;
	t->local.length = t->buf_len;
	return 0;
}

/* ---- queue pairs ---- */

static struct ibv_qp *verbs_qp_create(struct verbs_test *t, unsigned inline_)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = t->cq;
	ia.recv_cq = t->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = t->p.tx_depth;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = inline_;
	qp = ibv_create_qp(t->pd, &ia);
	if (qp)
		t->max_inline = ia.cap.max_inline_data;
	return qp;
}

static int verbs_qp_to_init(struct verbs_test *t, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = (uint8_t)t->local.port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_ACCESS_FLAGS);
}

static enum ibv_mtu verbs_mtu_enum(unsigned bytes)
{
	switch (bytes) {
	case 256:
		return IBV_MTU_256;
	case 512:
		return IBV_MTU_512;
	case 1024:
		return IBV_MTU_1024;
	case 2048:
		return IBV_MTU_2048;
	default:
		return IBV_MTU_4096;
	}
}

/* The peer's INIT -> RTR -> RTS for queue pair i; errno-style result. */
static int verbs_qp_to_rts(struct verbs_test *t, unsigned i)
{
	unsigned mtu = t->local.mtu < t->peer.mtu ? t->local.mtu : t->peer.mtu;
	struct ibv_qp_attr a;
	int e;

	if (t->p.mtu && t->p.mtu < mtu)
		mtu = t->p.mtu;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = verbs_mtu_enum(mtu);
	a.dest_qp_num = t->peer.qpn[i];
	a.rq_psn = t->peer.psn[i];
	a.max_dest_rd_atomic = (uint8_t)t->rd_atom;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = (uint8_t)t->local.port;
	a.ah_attr.dlid = (uint16_t)t->peer.lid;
	if (!t->is_ib || t->local.gid_index) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, t->peer.gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)t->local.gid_index;
		a.ah_attr.grh.hop_limit = 64;
	}
	e = ibv_modify_qp(t->q[i].qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER);
	if (e) {
		t->conn_no_path =
			verbs_explain_rtr(e, &t->local, &t->peer, t->peer_name,
					  t->conn_why, sizeof(t->conn_why));
		return -e;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = VERBS_QP_TIMEOUT;
	a.retry_cnt = VERBS_RETRY_CNT;
	a.rnr_retry = VERBS_RNR_RETRY;
	a.sq_psn = t->local.psn[i];
	a.max_rd_atomic = (uint8_t)t->rd_atom;
	e = ibv_modify_qp(t->q[i].qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC);
	if (e) {
		snprintf(t->conn_why, sizeof(t->conn_why),
			 "ibv_modify_qp(RTS): %s", strerror(e));
		return -e;
	}
	return 0;
}

/* ---- the run (worker thread) ---- */

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

static void *verbs_worker(void *arg)
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

int verbs_connect(struct verbs_test *t, const struct verbs_endpoint *peer,
		  char *why, size_t len)
{
	int rc;

	if (atomic_load(&t->phase) != VP_SETUP) {
		snprintf(why, len, "test already connected or finished");
		errno = EALREADY;
		return -1;
	}
	if (peer->n_qp != t->n_qp) {
		snprintf(why, len, "the peer has %u queue pairs, this side %u",
			 peer->n_qp, t->n_qp);
		errno = EINVAL;
		return -1;
	}
	if (peer->length < t->buf_len &&
	    peer->length < verbs_params_memory(&t->p)) {
		snprintf(why, len,
			 "the peer's buffer (%llu bytes) is smaller than the "
			 "test needs",
			 (unsigned long long)peer->length);
		errno = EINVAL;
		return -1;
	}
	if (!peer->mtu) {
		snprintf(why, len, "the peer gave no MTU");
		errno = EINVAL;
		return -1;
	}
	t->peer = *peer;
	/* A requester may have no more READs in flight than the peer serves
	 * (else the peer NAKs them): agree on the smaller. */
	if (peer->rd_atomic && peer->rd_atomic < t->rd_atom)
		t->rd_atom = peer->rd_atomic;
	atomic_store(&t->phase, VP_CONNECTING);
	rc = pthread_create(&t->tid, NULL, verbs_worker, t);
	if (rc) {
		snprintf(why, len, "cannot start the worker: %s", strerror(rc));
		atomic_store(&t->phase, VP_SETUP);
		errno = rc;
		return -1;
	}
	t->thread_started = 1;
	return 0;
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
