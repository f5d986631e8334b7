/* The RDMA test engine: RC queue pairs over libibverbs, RDMA WRITE and
 * READ bandwidth and latency, the sequence of rdma-core's rc_pingpong
 * (device, PD, MR, CQ, QP, INIT -> RTR -> RTS).
 *
 * Both sides are driven by the coordinator; neither listens on a port.
 * verbs_setup() builds one side and returns its connection data (QPNs,
 * PSNs, GID, rkey, buffer); the coordinator hands each side the other's
 * data with verbs_connect(), which brings the QPs to RTS in a worker thread
 * and, on the requester, runs the test there. Results come back through
 * the callbacks, in the event loop. Every wait is bounded by the test's
 * deadline; verbs_free() at any point leaves no QP or memory registered. */
#ifndef RING_VERBS_H
#define RING_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <infiniband/verbs.h>
#include <net/if.h>

#include "agent_conf.h"
#include "engine.h"
#include "testlimits.h"

/* The limits are testlimits.h's, which ringctl checks too. */
#define VERBS_MAX_QPS TESTLIMITS_RDMA_QPS_MAX
#define VERBS_MAX_SIZES TESTLIMITS_LAT_SIZES_MAX
#define VERBS_MAX_BW_MSG TESTLIMITS_RDMA_SIZE_MAX      /* bandwidth message */
#define VERBS_MAX_LAT_MSG TESTLIMITS_RDMA_LAT_SIZE_MAX /* latency message */
#define VERBS_MAX_TX_DEPTH TESTLIMITS_RDMA_TX_DEPTH_MAX

enum verbs_kind {
	VERBS_BW = 1,
	VERBS_LAT = 2,
};

enum verbs_op {
	VERBS_WRITE = 0,
	VERBS_READ = 1,
};

struct verbs_params {
	enum verbs_kind kind;
	enum verbs_op op;
	/* bandwidth */
	unsigned qps;	      /* 1..64 */
	uint32_t size;	      /* bytes per work request */
	unsigned tx_depth;    /* outstanding work requests per QP */
	unsigned cq_mod;      /* one signalled completion per this many */
	unsigned post_list;   /* work requests per ibv_post_send */
	uint64_t iterations;  /* per QP; 0 = run for duration_ms */
	unsigned duration_ms; /* measured window */
	unsigned warmup_ms;   /* before the window */
	/* latency: one QP, each size in turn */
	unsigned n_sizes;
	uint32_t sizes[VERBS_MAX_SIZES];
	unsigned lat_iterations;
	unsigned lat_warmup;
	unsigned mtu;		/* path MTU bytes; 0 = both ports' active MTU */
	unsigned traffic_class; /* GRH traffic class, 0..255 */
	unsigned service_level; /* SL, 0..15 */
	unsigned ack_timeout;	/* exponent, 0 = VERBS_QP_TIMEOUT */
};

/* One side's connection data, as it travels to the peer. */
struct verbs_endpoint {
	char device[64];
	unsigned port;
	unsigned gid_index;
	uint8_t gid[16];
	char gid_str[64];
	char gid_type[16]; /* "RoCE v2", "RoCE v1", "IB" */
	char netdev[IFNAMSIZ];
	char ipv4[16]; /* the GID's IPv4 address when IPv4-mapped */
	unsigned prefix;
	unsigned mtu; /* the port's active MTU, bytes */
	unsigned lid;
	unsigned n_qp;
	uint32_t qpn[VERBS_MAX_QPS];
	uint32_t psn[VERBS_MAX_QPS];
	uint32_t rkey;
	uint64_t addr;
	uint64_t length;
	unsigned rd_atomic; /* READs served (target) / issued at once */
};

struct verbs_setup {
	int requester;	       /* A: posts the work and measures */
	const char *device;    /* NULL/"" = the device bound to interface */
	const char *interface; /* facing the peer; chooses port and GID */
	int gid_set;	       /* explicit GID index instead of the choice */
	unsigned gid_index;
	const char *peer;	       /* peer node, for messages */
	unsigned deadline_ms;	       /* from setup to teardown, at most */
	const struct agent_conf *conf; /* rdma_device, rdma_max_memory */
};

struct verbs_test;

/* Called once, in the event loop, when the QPs reached RTS (err 0) or
 * could not (err -errno, why says it for the operator). */
typedef void (*verbs_connected_cb)(struct verbs_test *t, int err,
				   const char *why, void *arg);
/* Called once, in the event loop: the requester when its run ends, the
 * target after verbs_stop(); either on its deadline. r is valid during the
 * call only; the callback may call verbs_free(t). */
typedef void (*verbs_done_cb)(struct verbs_test *t,
			      const struct engine_result *r, void *arg);

/* Fill zero fields with defaults. */
void verbs_params_defaults(struct verbs_params *p);
/* 0 if p is valid, else -1 and a one-line reason in why. */
int verbs_params_check(const struct verbs_params *p, char *why, size_t len);
/* Registered memory one side of p needs, in bytes. */
uint64_t verbs_params_memory(const struct verbs_params *p);

/* Open the device, allocate and register the buffer, create the CQ and QPs
 * (INIT). Fills *local. NULL on failure, with the reason in why. */
struct verbs_test *verbs_setup(struct event_base *base,
			       const struct verbs_setup *s,
			       const struct verbs_params *p,
			       struct verbs_endpoint *local,
			       verbs_connected_cb ccb, verbs_done_cb dcb,
			       void *arg, char *why, size_t len);
/* Check the peer's data and start the worker (RTR, RTS, then the run).
 * -1 with why when the peer's data cannot fit this test. */
int verbs_connect(struct verbs_test *t, const struct verbs_endpoint *peer,
		  char *why, size_t len);
/* End the test: the done callback follows from the event loop. */
void verbs_stop(struct verbs_test *t);
/* Tear down at any point; no callback after this. Waits for the worker,
 * if any, to notice (a poll loop's turn); QPs and memory are gone when it
 * returns. */
void verbs_free(struct verbs_test *t);
/* The local endpoint (valid until verbs_free). */
const struct verbs_endpoint *verbs_local(const struct verbs_test *t);
/* After the connect callback reported an error: was it "no data-plane
 * path" (the peer is not a ring neighbour)? */
int verbs_conn_no_path(const struct verbs_test *t);

/* Operator-facing text for a failed work completion. ok_before: messages
 * that had completed before it (0 means the path never worked). 1 when the
 * failure means there is no data-plane path to the peer, else 0. */
int verbs_explain_wc(enum ibv_wc_status st, uint64_t ok_before,
		     const struct verbs_endpoint *local,
		     const struct verbs_endpoint *peer, const char *peer_name,
		     char *out, size_t len);
/* The same for a failed RTR transition (errno e). */
int verbs_explain_rtr(int e, const struct verbs_endpoint *local,
		      const struct verbs_endpoint *peer, const char *peer_name,
		      char *out, size_t len);
/* The path MTU of the queue pairs: the lesser of both ports' active MTU,
 * or asked (RdmaParams.mtu, 0 = none) when it is below that. ringctl's
 * report says the same from the endpoints. */
unsigned verbs_path_mtu(unsigned local_mtu, unsigned peer_mtu, unsigned asked);
/* After "no data-plane path": what this side knows of the path, for the
 * coordinator's wording (TestResult.path_detail): the local function and
 * port, its GID's netdev, the neighbour entry the kernel resolved for the
 * peer's IPv4 address (procfs_root/proc/net/arp) and the route to it
 * (procfs_root/proc/net/route). Always 0; out is always terminated. */
int verbs_path_detail(const struct verbs_endpoint *local,
		      const struct verbs_endpoint *peer,
		      const char *procfs_root, char *out, size_t len);

/* ---- one connected queue pair for another engine (verbs_link.c) ----
 * The ring all-reduce moves its chunks with RDMA WRITE over one RC queue
 * pair per neighbour: the device, GID, PD, CQ and QP steps above, but the
 * buffer, the posting and the polling are the caller's, from its own
 * thread. s->interface picks the device and GID as for a test. */
struct verbs_link;
/* Open, PD, CQ, QP in INIT (sq_depth sends and rq_depth receives
 * outstanding); *local is the endpoint (no buffer yet). NULL with why. */
struct verbs_link *verbs_link_new(const struct verbs_setup *s,
				  unsigned sq_depth, unsigned rq_depth,
				  struct verbs_endpoint *local, char *why,
				  size_t len);
/* Register the one buffer this link touches: remote_write for a buffer
 * the peer writes into (its rkey and address go into *local), else a
 * source of WRITEs. 0, or -1 with why. */
int verbs_link_reg(struct verbs_link *l, void *buf, size_t len,
		   int remote_write, struct verbs_endpoint *local, char *why,
		   size_t wlen);
/* RTR and RTS against the peer's endpoint (ack_timeout 0: the default).
 * Blocking but brief; 0, or -1 with why. */
int verbs_link_connect(struct verbs_link *l, const struct verbs_endpoint *peer,
		       unsigned ack_timeout, char *why, size_t len);
/* Post an RDMA WRITE of n bytes from src (in the registered buffer) to the
 * peer's raddr/rkey, with immediate data when imm. 0 or -errno. */
int verbs_link_post_write(struct verbs_link *l, const void *src, uint32_t n,
			  uint64_t raddr, uint32_t rkey, int imm, uint32_t data,
			  int signaled, uint64_t wr_id);
/* A zero-length SEND with immediate data, signalled. 0 or -errno. */
int verbs_link_post_send(struct verbs_link *l, uint32_t data, uint64_t wr_id);
/* A receive for a WRITE's immediate data or a zero-length SEND. */
int verbs_link_post_recv(struct verbs_link *l, uint64_t wr_id);
/* ibv_poll_cq on the link's one CQ. */
int verbs_link_poll(struct verbs_link *l, struct ibv_wc *wc, int n);
/* The completion channel's fd (non-blocking), readable when the CQ has
 * news after verbs_link_arm(), which takes what woke it and re-arms. */
int verbs_link_fd(const struct verbs_link *l);
int verbs_link_arm(struct verbs_link *l);
/* The port's largest message (0: unknown). */
uint32_t verbs_link_max_msg(const struct verbs_link *l);
/* verbs_explain_wc for this link's ends. */
int verbs_link_explain(const struct verbs_link *l, enum ibv_wc_status st,
		       uint64_t ok_before, char *out, size_t len);
void verbs_link_free(struct verbs_link *l);

#endif
