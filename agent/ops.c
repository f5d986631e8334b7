/* The coordinator's requests to the agent (probes, TCP and RDMA tests):
 * caps, checks, answers. */
#include "ops.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/queue.h>

#include "allreduce.h"
#include "log.h"
#include "probe.h"
#include "readtest.h"
#include "tcptest.h"
#include "testcounters.h"
#include "testlimits.h"
#include "verbs.h"

/* Whatever a test request says, an agent never waits longer than this for
 * its peer to connect. */
#define OPS_MAX_ACCEPT_MS 60000
/* ... and an RDMA test never holds its queue pairs and memory longer. */
#define OPS_MAX_RDMA_MS TESTLIMITS_RDMA_DEADLINE_MAX_MS
#define OPS_TEST_ID_LEN 16
#define OPS_WARN_MS 10000
/* A constant into a message at compile time. */
#define OPS_STR_(x) #x
#define OPS_STR(x) OPS_STR_(x)

enum op_kind {
	OP_PROBE = 1,
	OP_TEST, /* TCP listener, TCP run or RDMA test */
};

struct op {
	struct ops *owner;
	uint64_t request_id;
	enum op_kind kind;
	uint64_t rdma_mem; /* registered memory reserved for this test */
	struct probe *probe;
	struct tcptest *test;
	struct verbs_test *vt;
	struct allreduce_job *arj; /* a ring all-reduce job (allreduce.h) */
	struct readtest *rt;	   /* a read test (plan --weights) */
	struct tcount *tc;	   /* counters around a test (testcounters.h) */
	uint8_t test_id[OPS_TEST_ID_LEN];
	uint64_t connect_id; /* RdmaControl CONNECT waiting for RTS */
	struct probe_route route;
	int route_err;
	LIST_ENTRY(op) link;
};

struct ops {
	struct event_base *base;
	const struct agent_conf *conf;
	ops_send_fn send;
	void *arg;
	LIST_HEAD(, op) ops;
	unsigned n;
	unsigned n_probes, n_tests, n_rdma, n_read;
	uint64_t rdma_mem;    /* reserved by the RDMA tests in flight */
	struct op *allreduce; /* the one all-reduce job an agent runs */
	uint64_t warn_ms;     /* last refusal logged (CLOCK_MONOTONIC ms) */
	char mgmt_if[IFNAMSIZ];
};

struct ops *ops_new(struct event_base *base, const struct agent_conf *conf,
		    ops_send_fn send, void *arg)
{
	struct ops *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->base = base;
	o->conf = conf;
	o->send = send;
	o->arg = arg;
	return o;
}

static struct op *op_new(struct ops *o, uint64_t id, enum op_kind kind)
{
	struct op *op = calloc(1, sizeof(*op));

	if (!op)
		return NULL;
	op->owner = o;
	op->request_id = id;
	op->kind = kind;
	if (kind == OP_PROBE)
		o->n_probes++;
	else
		o->n_tests++;
	LIST_INSERT_HEAD(&o->ops, op, link);
	o->n++;
	return op;
}

static void op_unlink(struct op *op)
{
	struct ops *o = op->owner;

	LIST_REMOVE(op, link);
	o->n--;
	if (op->kind == OP_PROBE)
		o->n_probes--;
	else
		o->n_tests--;
	if (o->allreduce == op)
		o->allreduce = NULL;
	allreduce_job_free(op->arj);
	if (op->rdma_mem) {
		o->rdma_mem -= op->rdma_mem;
		o->n_rdma--;
	}
	tcount_free(op->tc);
	free(op);
}

static void ops_verror(struct ops *o, uint64_t id, int code, const char *fmt,
		       va_list ap)
{
	Ring__Error err = RING__ERROR__INIT;
	char text[320];

	vsnprintf(text, sizeof(text), fmt, ap);
	err.code = (Ring__ErrorCode)code;
	err.text = text;
	o->send(o->arg, id, RING__ENVELOPE__BODY_ERROR, &err);
}

static void ops_error(struct ops *o, uint64_t id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void ops_error(struct ops *o, uint64_t id, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ops_verror(o, id, RING__ERROR_CODE__ERROR_BAD_REQUEST, fmt, ap);
	va_end(ap);
}

static void ops_error_code(struct ops *o, uint64_t id, int code,
			   const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void ops_error_code(struct ops *o, uint64_t id, int code,
			   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ops_verror(o, id, code, fmt, ap);
	va_end(ap);
}

/* A refusal is logged at most once per OPS_WARN_MS; the rest at debug. */
static int ops_may_warn(struct ops *o)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (o->warn_ms && now - o->warn_ms < OPS_WARN_MS)
		return 0;
	o->warn_ms = now;
	return 1;
}

static int ops_busy(struct ops *o, uint64_t id, const char *what)
{
	if (ops_may_warn(o))
		log_warnx("refused a %s request: %u probes and %u tests in "
			  "flight (at most %d and %d)",
			  what, o->n_probes, o->n_tests, OPS_MAX_PROBES,
			  OPS_MAX_TESTS);
	ops_error(o, id,
		  "%s: busy: %u %s in flight, at most %d per agent; try again "
		  "when they are done",
		  what, !strcmp(what, "probe") ? o->n_probes : o->n_tests,
		  !strcmp(what, "probe") ? "probes" : "tests",
		  !strcmp(what, "probe") ? OPS_MAX_PROBES : OPS_MAX_TESTS);
	return -1;
}

/* Over the cap: answer at once, so the coordinator can retry later, and
 * a request flood holds nothing. */
static int ops_admit(struct ops *o, uint64_t id, enum op_kind kind)
{
	if (kind == OP_PROBE && o->n_probes >= OPS_MAX_PROBES)
		return ops_busy(o, id, "probe");
	if (kind == OP_TEST && o->n_tests >= OPS_MAX_TESTS)
		return ops_busy(o, id, "test");
	return 0;
}

/* A new operation, or NULL after telling the coordinator (what: the
 * request's name in the message) that memory ran out. */
static struct op *ops_op_new(struct ops *o, uint64_t id, enum op_kind kind,
			     const char *what)
{
	struct op *op = op_new(o, id, kind);

	if (!op)
		ops_error(o, id, "%s: out of memory", what);
	return op;
}

/* Admitted under the cap and allocated, or NULL after answering. */
static struct op *ops_start(struct ops *o, uint64_t id, enum op_kind kind,
			    const char *what)
{
	if (ops_admit(o, id, kind) < 0)
		return NULL;
	return ops_op_new(o, id, kind, what);
}

void ops_set_mgmt_interface(struct ops *o, const char *ifname)
{
	snprintf(o->mgmt_if, sizeof(o->mgmt_if), "%s", ifname ? ifname : "");
}

/* A port probes may leave by: a data interface, never management. */
static int ops_is_data_port(const struct ops *o, const char *ifname)
{
	return ifname[0] && strcmp(ifname, o->mgmt_if) != 0 &&
	       agent_conf_is_data_interface(o->conf, ifname);
}

/* ---- probes ---- */

static void ops_probe_done(int err, double rtt_us, void *arg)
{
	struct op *op = arg;
	Ring__ProbeReply rep = RING__PROBE_REPLY__INIT;
	char why[128] = "";

	rep.route_kind = op->route.kind;
	rep.route_interface = op->route.ifname;
	rep.route_gateway = op->route.gateway;
	rep.route_source = op->route.source;
	rep.route_linkdown = op->route.linkdown;
	rep.reachable = err == 0;
	rep.rtt_us = err == 0 ? rtt_us : 0;
	if (err)
		snprintf(why, sizeof(why), "%s", strerror(-err));
	rep.error = why;
	op->probe = NULL; /* freed by the probe module after we return */
	op->owner->send(op->owner->arg, op->request_id,
			RING__ENVELOPE__BODY_PROBE_REPLY, &rep);
	op_unlink(op);
}

/* The route decision is reported as it is, without a connect: the route
 * does not leave by a data port (or not by the one asked for), so a probe
 * would test the management network or beyond, not the data plane. */
static void ops_probe_not_sent(struct op *op, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ops_probe_not_sent(struct op *op, const char *fmt, ...)
{
	Ring__ProbeReply rep = RING__PROBE_REPLY__INIT;
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	rep.route_kind = op->route.kind;
	rep.route_interface = op->route.ifname;
	rep.route_gateway = op->route.gateway;
	rep.route_source = op->route.source;
	rep.route_linkdown = op->route.linkdown;
	rep.error = why;
	rep.not_probed = 1;
	log_debug("ops", "probe %llu: %s", (unsigned long long)op->request_id,
		  why);
	op->owner->send(op->owner->arg, op->request_id,
			RING__ENVELOPE__BODY_PROBE_REPLY, &rep);
	op_unlink(op);
}

static void ops_probe(struct ops *o, uint64_t id, const Ring__ProbeRequest *r)
{
	unsigned timeout = r->timeout_ms ? r->timeout_ms : 1000;
	const char *want = r->local_interface ? r->local_interface : "";
	char why[160];
	struct op *op;

	if (timeout > 30000 || r->port == 0 || r->port > 65535) {
		ops_error(o, id,
			  "probe: timeout (<= 30 s) or port out of range");
		return;
	}
	if (probe_target_check(r->peer_address, want[0] != '\0', why,
			       sizeof(why)) < 0) {
		ops_error(o, id, "probe: %s", why);
		return;
	}
	if (want[0] && !ops_is_data_port(o, want)) {
		ops_error(o, id,
			  "probe: %.16s is not a data interface of this "
			  "node",
			  want);
		return;
	}
	op = ops_start(o, id, OP_PROBE, "probe");
	if (!op)
		return;
	op->route_err = probe_route_get(r->peer_address, &op->route);
	if (op->route_err == -EINVAL) {
		ops_error(o, id, "probe: bad address '%.64s'", r->peer_address);
		op_unlink(op);
		return;
	}
	if (op->route_err < 0) {
		ops_probe_not_sent(op, "not probed: no route (%s)",
				   strerror(-op->route_err));
		return;
	}
	if (op->route.not_unicast) {
		ops_error(o, id,
			  "probe: %.64s is a broadcast or multicast address on "
			  "%.16s: not a unicast data address",
			  r->peer_address, op->route.ifname);
		op_unlink(op);
		return;
	}
	if (!strcmp(op->route.kind, "local")) {
		ops_probe_not_sent(op, "not probed: an address of this node");
		return;
	}
	if (!ops_is_data_port(o, op->route.ifname)) {
		ops_probe_not_sent(op,
				   "not probed: the route leaves by %s, not a "
				   "data port",
				   op->route.ifname[0] ? op->route.ifname
						       : "no interface");
		return;
	}
	if (want[0] && strcmp(want, op->route.ifname) != 0) {
		ops_probe_not_sent(op,
				   "not probed: the route leaves by %s, not by "
				   "%s",
				   op->route.ifname, want);
		return;
	}
	/* Bound to the route's data port: a route that changes meanwhile
	 * cannot send the SYN anywhere else. */
	op->probe = probe_start(o->base, r->peer_address, (uint16_t)r->port,
				op->route.ifname, timeout, ops_probe_done, op);
	if (!op->probe) {
		/* e.g. the interface vanished: not reachable. */
		ops_probe_done(-errno, 0, op);
		return;
	}
	log_debug("ops", "probe %s:%u via %s", r->peer_address, r->port,
		  op->route.ifname);
}

/* ---- tests ---- */

static int ops_params(const Ring__TestParams *in, struct tcptest_params *p,
		      char *why, size_t len)
{
	memset(p, 0, sizeof(*p));
	if (!in) {
		snprintf(why, len, "missing test parameters");
		return -1;
	}
	/* The rules ringctl applied already, in the same words (the
	 * coordinator's own samples may have shorter windows). */
	if (testlimits_check_agent(in, why, len) < 0)
		return -1;
	switch (in->kind) {
	case RING__TEST_KIND__TEST_TCP_BW:
		p->kind = TCPTEST_BW;
		break;
	case RING__TEST_KIND__TEST_TCP_LAT:
		p->kind = TCPTEST_LAT;
		break;
	default:
		snprintf(why, len, "unsupported test kind %d", in->kind);
		return -1;
	}
	p->streams = in->streams;
	p->duration_ms = in->duration_ms;
	p->warmup_ms = in->warmup_ms;
	p->dir = (enum tcptest_dir)in->direction;
	if (in->n_sizes > TCPTEST_MAX_SIZES) {
		snprintf(why, len, "at most %d latency sizes",
			 TCPTEST_MAX_SIZES);
		return -1;
	}
	p->n_sizes = (unsigned)in->n_sizes;
	for (size_t i = 0; i < in->n_sizes; i++)
		p->sizes[i] = in->sizes[i];
	p->iterations = in->iterations;
	p->lat_warmup = in->lat_warmup;
	return tcptest_params_check(p, why, len);
}

/* One side's result, from either engine, as the coordinator reads it. */
static void ops_send_result(struct op *op, const struct engine_result *r,
			    Ring__RdmaEndpoint *ep)
{
	Ring__TestResult res = RING__TEST_RESULT__INIT;
	Ring__StreamResult sr[ENGINE_MAX_STREAMS], *srp[ENGINE_MAX_STREAMS];
	Ring__LatResult lr[ENGINE_MAX_SIZES], *lrp[ENGINE_MAX_SIZES];

	res.error = (char *)(r->err ? r->error : "");
	if (r->err && r->no_path) {
		res.error_code = RING__ERROR_CODE__ERROR_NOT_ADJACENT;
		res.path_detail = (char *)r->path_detail;
	}
	res.method = (char *)(r->method ? r->method : "");
	res.lat_convention =
		(char *)(r->lat_convention ? r->lat_convention : "");
	res.window_s = r->window_s;
	res.gbps_sent = r->gbps_sent;
	res.gbps_received = r->gbps_received;
	res.retransmits = r->retransmits;
	res.cpu_pct = r->cpu_pct;
	res.peak_gbps = r->peak_gbps;
	res.msg_rate_mps = r->msg_rate_mps;
	res.endpoint = ep;
	for (unsigned i = 0; i < r->n_streams && i < ENGINE_MAX_STREAMS; i++) {
		ring__stream_result__init(&sr[i]);
		sr[i].index = r->streams[i].index;
		sr[i].sending = r->streams[i].sending;
		sr[i].bytes = r->streams[i].bytes;
		sr[i].gbps = r->streams[i].gbps;
		sr[i].retransmits = r->streams[i].retransmits;
		sr[i].peak_gbps = r->streams[i].peak_gbps;
		sr[i].messages = r->streams[i].messages;
		srp[i] = &sr[i];
	}
	res.n_streams = r->n_streams;
	res.streams = srp;
	for (unsigned i = 0; i < r->n_lat && i < ENGINE_MAX_SIZES; i++) {
		const struct stats_summary *s = &r->lat[i].us;

		ring__lat_result__init(&lr[i]);
		lr[i].size = r->lat[i].size;
		lr[i].n = (uint32_t)s->n;
		lr[i].min_us = s->min;
		lr[i].p50_us = s->p50;
		lr[i].mean_us = s->mean;
		lr[i].p99_us = s->p99;
		lr[i].p999_us = s->p999;
		lr[i].max_us = s->max;
		lrp[i] = &lr[i];
	}
	res.n_lat = r->n_lat;
	res.lat = lrp;
	if (op->tc)
		tcount_end(op->tc, &res);
	if (r->err)
		log_warnx("test %llu failed: %s",
			  (unsigned long long)op->request_id, r->error);
	op->owner->send(op->owner->arg, op->request_id,
			RING__ENVELOPE__BODY_TEST_RESULT, &res);
}

static void ops_test_done(struct tcptest *t, const struct engine_result *r,
			  void *arg)
{
	struct op *op = arg;

	ops_send_result(op, r, NULL);
	tcptest_free(t);
	op_unlink(op);
}

/* The wait for the peer of a TCP test: 5 s unless asked, and bounded. */
static unsigned ops_timeout_ms(unsigned asked_ms)
{
	unsigned ms = asked_ms ? asked_ms : 5000;

	return ms > OPS_MAX_ACCEPT_MS ? OPS_MAX_ACCEPT_MS : ms;
}

/* What listen and run check before they start a TCP test: its parameters
 * into p, then the request's own fields (bad: what is wrong with them, or
 * NULL), then the cap. The op, or NULL after answering with the error. */
static struct op *ops_test_start(struct ops *o, uint64_t id,
				 const Ring__TestParams *params,
				 struct tcptest_params *p, const char *bad)
{
	char why[256];

	if (ops_params(params, p, why, sizeof(why)) < 0) {
		ops_error(o, id, "test: %s", why);
		return NULL;
	}
	if (bad) {
		ops_error(o, id, "test: %s", bad);
		return NULL;
	}
	return ops_start(o, id, OP_TEST, "test");
}

static void ops_listen(struct ops *o, uint64_t id,
		       const Ring__TestListenRequest *r)
{
	Ring__TestListenReply rep = RING__TEST_LISTEN_REPLY__INIT;
	struct tcptest_params p;
	const char *bad = NULL;
	uint16_t port = 0;
	struct op *op;

	if (r->token.len != TCPTEST_TOKEN_LEN)
		bad = "token must be " OPS_STR(TCPTEST_TOKEN_LEN) " bytes";
	op = ops_test_start(o, id, r->params, &p, bad);
	if (!op)
		return;
	op->test = tcptest_listen(o->base, r->bind_address, r->token.data, &p,
				  ops_timeout_ms(r->accept_timeout_ms),
				  ops_test_done, op, &port);
	if (!op->test) {
		ops_error(o, id, "test: cannot listen on %.64s: %s",
			  r->bind_address, strerror(errno));
		op_unlink(op);
		return;
	}
	op->tc = tcount_begin(o->conf ? o->conf->sysfs_root : "", NULL,
			      r->bind_address, NULL, NULL, 0);
	rep.port = port;
	o->send(o->arg, id, RING__ENVELOPE__BODY_TEST_LISTEN_REPLY, &rep);
	log_debug("ops", "test listener on %s:%u", r->bind_address, port);
}

static void ops_run(struct ops *o, uint64_t id, const Ring__TestRunRequest *r)
{
	struct tcptest_params p;
	const char *bad = NULL;
	struct op *op;

	if (r->token.len != TCPTEST_TOKEN_LEN || r->port == 0 ||
	    r->port > 65535)
		bad = "bad token or port";
	op = ops_test_start(o, id, r->params, &p, bad);
	if (!op)
		return;
	op->test = tcptest_connect(o->base, r->peer_address, (uint16_t)r->port,
				   r->local_interface, r->token.data, &p,
				   ops_timeout_ms(r->connect_timeout_ms),
				   ops_test_done, op);
	if (!op->test) {
		ops_error(o, id, "test: cannot start towards %.64s: %s",
			  r->peer_address, strerror(errno));
		op_unlink(op);
		return;
	}
	op->tc = tcount_begin(o->conf ? o->conf->sysfs_root : "",
			      r->local_interface, NULL, r->peer_address, NULL,
			      0);
}

/* ---- RDMA tests ---- */

static int ops_rdma_params(const Ring__TestParams *in, struct verbs_params *p,
			   char *why, size_t len)
{
	const Ring__RdmaParams *r = in ? in->rdma : NULL;

	memset(p, 0, sizeof(*p));
	if (!in) {
		snprintf(why, len, "missing test parameters");
		return -1;
	}
	if (in->direction != RING__DIRECTION__DIR_A_TO_B) {
		/* The coordinator swaps the roles for the other direction. */
		snprintf(why, len, "RDMA tests run from A (requester) to B");
		return -1;
	}
	if (in->kind != RING__TEST_KIND__TEST_RDMA_BW &&
	    in->kind != RING__TEST_KIND__TEST_RDMA_LAT) {
		snprintf(why, len, "not an RDMA test kind (%d)", in->kind);
		return -1;
	}
	if (testlimits_check_agent(in, why, len) < 0)
		return -1;
	p->kind = in->kind == RING__TEST_KIND__TEST_RDMA_LAT ? VERBS_LAT
							     : VERBS_BW;
	if (r) {
		p->op = r->op == RING__RDMA_OP__RDMA_OP_READ ? VERBS_READ
							     : VERBS_WRITE;
		p->qps = r->qps;
		p->size = r->size;
		p->tx_depth = r->tx_depth;
		p->cq_mod = r->cq_mod;
		p->post_list = r->post_list;
		p->iterations = r->iterations;
		p->mtu = r->mtu;
		p->traffic_class = r->traffic_class;
		p->service_level = r->service_level;
		p->ack_timeout = r->ack_timeout;
	}
	p->duration_ms = in->duration_ms;
	p->warmup_ms = in->warmup_ms;
	if (in->n_sizes > VERBS_MAX_SIZES) {
		snprintf(why, len, "at most %d latency sizes", VERBS_MAX_SIZES);
		return -1;
	}
	p->n_sizes = (unsigned)in->n_sizes;
	for (size_t i = 0; i < in->n_sizes; i++)
		p->sizes[i] = in->sizes[i];
	p->lat_iterations = in->iterations;
	p->lat_warmup = in->lat_warmup;
	verbs_params_defaults(p);
	return verbs_params_check(p, why, len);
}

static void ops_ep_to_msg(const struct verbs_endpoint *e, Ring__RdmaEndpoint *m)
{
	ring__rdma_endpoint__init(m);
	m->device = (char *)e->device;
	m->port = e->port;
	m->gid_index = e->gid_index;
	m->gid = (char *)e->gid_str;
	m->gid_type = (char *)e->gid_type;
	m->netdev = (char *)e->netdev;
	m->ipv4 = (char *)e->ipv4;
	m->prefix = e->prefix;
	m->mtu = e->mtu;
	m->lid = e->lid;
	m->n_qpn = e->n_qp;
	m->qpn = (uint32_t *)e->qpn;
	m->n_psn = e->n_qp;
	m->psn = (uint32_t *)e->psn;
	m->rkey = e->rkey;
	m->addr = e->addr;
	m->length = e->length;
	m->gid_raw.data = (uint8_t *)e->gid;
	m->gid_raw.len = sizeof(e->gid);
	m->rd_atomic = e->rd_atomic;
}

static int ops_ep_from_msg(const Ring__RdmaEndpoint *m,
			   struct verbs_endpoint *e, char *why, size_t len)
{
	memset(e, 0, sizeof(*e));
	if (!m || m->gid_raw.len != 16 || m->n_qpn != m->n_psn ||
	    m->n_qpn < 1 || m->n_qpn > VERBS_MAX_QPS) {
		snprintf(why, len, "malformed peer endpoint");
		return -1;
	}
	snprintf(e->device, sizeof(e->device), "%s", m->device);
	snprintf(e->gid_str, sizeof(e->gid_str), "%s", m->gid);
	snprintf(e->gid_type, sizeof(e->gid_type), "%s", m->gid_type);
	snprintf(e->netdev, sizeof(e->netdev), "%s", m->netdev);
	snprintf(e->ipv4, sizeof(e->ipv4), "%s", m->ipv4);
	memcpy(e->gid, m->gid_raw.data, 16);
	e->port = m->port;
	e->gid_index = m->gid_index;
	e->prefix = m->prefix;
	e->mtu = m->mtu;
	e->lid = m->lid;
	e->n_qp = (unsigned)m->n_qpn;
	for (unsigned i = 0; i < e->n_qp; i++) {
		e->qpn[i] = m->qpn[i];
		e->psn[i] = m->psn[i] & 0xffffff;
	}
	e->rkey = m->rkey;
	e->addr = m->addr;
	e->length = m->length;
	e->rd_atomic = m->rd_atomic;
	return 0;
}

static struct op *ops_find_test(struct ops *o, ProtobufCBinaryData id)
{
	struct op *op;

	if (id.len != OPS_TEST_ID_LEN)
		return NULL;
	LIST_FOREACH(op, &o->ops, link)
	if (op->vt && !memcmp(op->test_id, id.data, OPS_TEST_ID_LEN))
		return op;
	return NULL;
}

static void ops_ack(struct ops *o, uint64_t id, const char *text)
{
	Ring__Ack ack = RING__ACK__INIT;

	ack.text = (char *)text;
	o->send(o->arg, id, RING__ENVELOPE__BODY_ACK, &ack);
}

static void ops_rdma_connected(struct verbs_test *t, int err, const char *why,
			       void *arg)
{
	struct op *op = arg;
	uint64_t id = op->connect_id;

	op->connect_id = 0;
	if (!id)
		return;
	if (err && verbs_conn_no_path(t))
		ops_error_code(op->owner, id,
			       RING__ERROR_CODE__ERROR_NOT_ADJACENT, "rdma: %s",
			       why);
	else if (err)
		ops_error(op->owner, id, "rdma: %s", why);
	else
		ops_ack(op->owner, id, "connected");
}

static void ops_rdma_done(struct verbs_test *t, const struct engine_result *r,
			  void *arg)
{
	struct op *op = arg;
	Ring__RdmaEndpoint ep;

	ops_ep_to_msg(verbs_local(t), &ep);
	ep.n_qpn = ep.n_psn = 0; /* connection data is not news any more */
	ops_send_result(op, r, &ep);
	verbs_free(t);
	op_unlink(op);
}

/* What verbs_setup() will register for p: the buffer rounded up as it
 * allocates it (2 MiB pages from 2 MiB up). */
static uint64_t ops_rdma_need(const struct verbs_params *p)
{
	uint64_t need = verbs_params_memory(p);
	uint64_t align = need >= (2u << 20) ? 2u << 20 : 4096;

	return (need + align - 1) / align * align;
}

/* The registered memory all RDMA tests on this agent share:
 * rdma_max_total_memory, by default twice rdma_max_memory. */
static uint64_t ops_rdma_budget(const struct agent_conf *c)
{
	uint64_t one =
		c && c->rdma_max_memory ? c->rdma_max_memory : 1ull << 30;

	return c && c->rdma_max_total_memory ? c->rdma_max_total_memory
					     : 2 * one;
}

/* 0 when need bytes fit the budget beside the RDMA tests in flight, else
 * an Error with both figures and -1. */
static int ops_rdma_reserve_bytes(struct ops *o, uint64_t id, uint64_t need)
{
	uint64_t budget = ops_rdma_budget(o->conf);

	if (need <= budget && o->rdma_mem <= budget - need)
		return 0;
	if (ops_may_warn(o))
		log_warnx(
			"refused an RDMA test: it needs %llu MiB of registered "
			"memory, %u RDMA test%s in flight hold %llu MiB, "
			"rdma_max_total_memory is %llu MiB",
			(unsigned long long)(need >> 20), o->n_rdma,
			o->n_rdma == 1 ? "" : "s",
			(unsigned long long)(o->rdma_mem >> 20),
			(unsigned long long)(budget >> 20));
	ops_error(o, id,
		  "rdma: busy: the test needs %llu MiB of registered memory "
		  "and %u RDMA test%s in flight on this node hold %llu MiB of "
		  "the %llu MiB all tests share (rdma_max_total_memory); at "
		  "most %d tests run at once",
		  (unsigned long long)(need >> 20), o->n_rdma,
		  o->n_rdma == 1 ? "" : "s",
		  (unsigned long long)(o->rdma_mem >> 20),
		  (unsigned long long)(budget >> 20), OPS_MAX_TESTS);
	return -1;
}

static void ops_rdma_setup(struct ops *o, uint64_t id, const Ring__RdmaSetup *r)
{
	struct verbs_setup vs = {0};
	struct verbs_params p;
	struct verbs_endpoint local;
	Ring__RdmaEndpoint ep;
	char why[320];
	struct op *op;

	if (ops_rdma_params(r->params, &p, why, sizeof(why)) < 0) {
		ops_error(o, id, "rdma: %s", why);
		return;
	}
	if (r->test_id.len != OPS_TEST_ID_LEN || ops_find_test(o, r->test_id)) {
		ops_error(o, id, "rdma: test id must be %d new bytes",
			  OPS_TEST_ID_LEN);
		return;
	}
	if (ops_admit(o, id, OP_TEST) < 0 ||
	    ops_rdma_reserve_bytes(o, id, ops_rdma_need(&p)) < 0)
		return;
	op = ops_op_new(o, id, OP_TEST, "rdma");
	if (!op)
		return;
	op->rdma_mem = ops_rdma_need(&p);
	o->rdma_mem += op->rdma_mem;
	o->n_rdma++;
	memcpy(op->test_id, r->test_id.data, OPS_TEST_ID_LEN);
	vs.requester = r->requester;
	vs.device = r->device;
	vs.interface = r->interface;
	vs.gid_set = r->gid_set;
	vs.gid_index = r->gid_index;
	vs.peer = r->peer;
	vs.deadline_ms = r->deadline_ms && r->deadline_ms < OPS_MAX_RDMA_MS
				 ? r->deadline_ms
				 : OPS_MAX_RDMA_MS;
	vs.conf = o->conf;
	op->vt = verbs_setup(o->base, &vs, &p, &local, ops_rdma_connected,
			     ops_rdma_done, op, why, sizeof(why));
	if (!op->vt) {
		ops_error(o, id, "rdma: %s", why);
		op_unlink(op);
		return;
	}
	op->tc = tcount_begin(o->conf ? o->conf->sysfs_root : "", local.netdev,
			      NULL, NULL, local.device, local.port);
	ops_ep_to_msg(&local, &ep);
	o->send(o->arg, id, RING__ENVELOPE__BODY_RDMA_ENDPOINT, &ep);
}

static void ops_rdma_control(struct ops *o, uint64_t id,
			     const Ring__RdmaControl *r)
{
	struct op *op = ops_find_test(o, r->test_id);
	struct verbs_endpoint peer;
	char why[320];

	if (!op) {
		Ring__Error err = RING__ERROR__INIT;

		err.code = RING__ERROR_CODE__ERROR_NOT_FOUND;
		err.text = "rdma: no such test here (finished, timed out or "
			   "never set up)";
		o->send(o->arg, id, RING__ENVELOPE__BODY_ERROR, &err);
		return;
	}
	switch (r->action) {
	case RING__RDMA_ACTION__RDMA_CONNECT:
		if (op->connect_id ||
		    ops_ep_from_msg(r->peer, &peer, why, sizeof(why)) < 0 ||
		    verbs_connect(op->vt, &peer, why, sizeof(why)) < 0) {
			ops_error(o, id, "rdma: %s",
				  op->connect_id ? "connect already under way"
						 : why);
			return;
		}
		op->connect_id = id; /* answered at RTS */
		return;
	case RING__RDMA_ACTION__RDMA_STOP:
		verbs_stop(op->vt);
		ops_ack(o, id, "stopping");
		return;
	default:
		ops_error(o, id, "rdma: unknown action %d", (int)r->action);
		return;
	}
}

/* ---- ring all-reduce ---- */

static void ops_allreduce_done(struct allreduce_job *j, void *arg)
{
	struct op *op = arg;

	op->owner->send(op->owner->arg, op->request_id,
			RING__ENVELOPE__BODY_ALLREDUCE_RESULT,
			(void *)allreduce_job_result(j));
	op_unlink(op); /* frees the job: it has returned from the worker */
}

static void ops_allreduce_setup(struct ops *o, uint64_t id,
				const Ring__AllreduceSetup *r)
{
	Ring__AllreduceEndpoint ep = RING__ALLREDUCE_ENDPOINT__INIT;
	Ring__RdmaEndpoint pep, nep;
	const struct verbs_endpoint *pv, *nv;
	uint64_t max = o->conf && o->conf->allreduce_max_memory
			       ? o->conf->allreduce_max_memory
			       : 1ull << 30;
	uint64_t pinned = 0, biggest = 0;
	char why[320];
	uint16_t port = 0;
	struct op *op;

	/* The job's traffic stays on the data plane, as probes' does. */
	if (o->conf && r->listen_interface && r->next_interface &&
	    (!ops_is_data_port(o, r->listen_interface) ||
	     !ops_is_data_port(o, r->next_interface))) {
		ops_error(o, id,
			  "allreduce: %.16s or %.16s is not a data interface "
			  "of this node",
			  r->listen_interface, r->next_interface);
		return;
	}
	if (o->allreduce) {
		ops_error(o, id,
			  "allreduce: busy: this node already runs an "
			  "all-reduce job (one at a time)");
		return;
	}
	/* RDMA steps pin their buffers: they count against the memory all
	 * RDMA tests share. */
	for (size_t i = 0; i < r->n_sizes && i < ARLIMITS_SIZES_MAX; i++)
		if (r->sizes[i] > biggest)
			biggest = r->sizes[i];
	if ((r->prev_rdma || r->next_rdma) && r->n >= 2 &&
	    r->n <= ARLIMITS_RANKS_MAX && biggest <= max) {
		pinned = allreduce_rdma_memory(biggest, r->n, r->prev_rdma,
					       r->next_rdma);
		if (ops_rdma_reserve_bytes(o, id, pinned) < 0)
			return;
	}
	op = ops_start(o, id, OP_TEST, "allreduce");
	if (!op)
		return;
	op->arj = allreduce_job_new(o->base, r, max, ops_allreduce_done, op,
				    &port, why, sizeof(why));
	if (op->arj && pinned) {
		op->rdma_mem = pinned;
		o->rdma_mem += pinned;
		o->n_rdma++;
	}
	if (!op->arj ||
	    allreduce_job_rdma(op->arj, r, o->conf, why, sizeof(why)) < 0) {
		ops_error(o, id, "allreduce: %s", why);
		op_unlink(op);
		return;
	}
	o->allreduce = op;
	ep.address = r->listen_address;
	ep.port = port;
	pv = allreduce_job_rdma_local(op->arj, 1);
	nv = allreduce_job_rdma_local(op->arj, 0);
	if (pv) {
		ops_ep_to_msg(pv, &pep);
		ep.prev_rdma = &pep;
	}
	if (nv) {
		ops_ep_to_msg(nv, &nep);
		ep.next_rdma = &nep;
	}
	o->send(o->arg, id, RING__ENVELOPE__BODY_ALLREDUCE_ENDPOINT, &ep);
}

static void ops_allreduce_control(struct ops *o, uint64_t id,
				  const Ring__AllreduceControl *r)
{
	struct op *op = o->allreduce;
	struct verbs_endpoint pv, nv;
	char why[320];

	if (!op || !allreduce_job_is(op->arj, r->job_id)) {
		ops_error_code(o, id, RING__ERROR_CODE__ERROR_NOT_FOUND,
			       "allreduce: no such job here (finished, timed "
			       "out or never set up)");
		return;
	}
	switch (r->action) {
	case RING__ALLREDUCE_ACTION__ALLREDUCE_START:
		if ((r->prev_rdma && ops_ep_from_msg(r->prev_rdma, &pv, why,
						     sizeof(why)) < 0) ||
		    (r->next_rdma && ops_ep_from_msg(r->next_rdma, &nv, why,
						     sizeof(why)) < 0) ||
		    allreduce_job_start(op->arj, r->next_address, r->next_port,
					r->prev_rdma ? &pv : NULL,
					r->next_rdma ? &nv : NULL, why,
					sizeof(why)) < 0) {
			ops_error(o, id, "allreduce: %s", why);
			return;
		}
		ops_ack(o, id, "started");
		return;
	case RING__ALLREDUCE_ACTION__ALLREDUCE_STOP:
		/* Ack first: a job not started ends (and is freed) at once. */
		ops_ack(o, id, "stopping");
		allreduce_job_stop(op->arj);
		return;
	default:
		ops_error(o, id, "allreduce: unknown action %d",
			  (int)r->action);
		return;
	}
}

/* ---- read test ---- */

static void ops_read_done(const struct readtest_result *r, void *arg)
{
	struct op *op = arg;
	struct ops *o = op->owner;
	Ring__ReadTestResult rep = RING__READ_TEST_RESULT__INIT;
	struct timespec ts;

	if (*r->refused) {
		/* Refused by the worker (not found below read_path, a link
		 * leading out, ...): an error, not a result. */
		log_info("read test %s refused: %s", r->path, r->refused);
		op->rt = NULL; /* frees itself after this returns */
		o->n_read--;
		ops_error_code(o, op->request_id,
			       RING__ERROR_CODE__ERROR_PERMISSION,
			       "read test: %s", r->refused);
		op_unlink(op);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	rep.path = (char *)r->path;
	rep.bytes = r->bytes;
	rep.seconds = r->seconds;
	rep.gbytes_per_s =
		r->seconds > 0 ? (double)r->bytes / r->seconds / 1e9 : 0;
	rep.files = r->files;
	rep.direct = r->direct;
	rep.filesystem = (char *)r->fstype;
	rep.device = (char *)r->device;
	rep.error = (char *)r->error;
	rep.stopped_at_time = r->stopped_at_time;
	rep.measured_ms =
		(uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	log_info("read test %s: %llu bytes in %.3f s%s%s", r->path,
		 (unsigned long long)r->bytes, r->seconds,
		 *r->error ? ": " : "", r->error);
	op->rt = NULL; /* frees itself after this returns */
	o->n_read--;
	o->send(o->arg, op->request_id, RING__ENVELOPE__BODY_READ_TEST_RESULT,
		&rep);
	op_unlink(op);
}

/* Only under read_path, one at a time, counted with the tests. */
static void ops_read(struct ops *o, uint64_t id, const Ring__ReadTestRequest *r)
{
	char why[600];
	uint64_t bytes;
	unsigned ms;
	struct op *op;

	if (testlimits_read_check(r, &bytes, &ms, why, sizeof(why)) < 0) {
		ops_error(o, id, "%s", why);
		return;
	}
	/* The path's text only, no filesystem here: an outside path is
	 * refused at once; the worker opens it beneath its root. */
	if (readtest_path_check(o->conf, r->path, why, sizeof(why)) < 0) {
		ops_error_code(o, id, RING__ERROR_CODE__ERROR_PERMISSION,
			       "read test: %s", why);
		return;
	}
	if (o->n_read) {
		ops_error(o, id,
			  "read test: busy: one read test at a time per agent");
		return;
	}
	op = ops_start(o, id, OP_TEST, "read test");
	if (!op)
		return;
	op->rt = readtest_start(o->base, o->conf, r->path, bytes, ms,
				ops_read_done, op, why, sizeof(why));
	if (!op->rt) {
		ops_error_code(o, id, RING__ERROR_CODE__ERROR_INTERNAL,
			       "read test: %s", why);
		op_unlink(op);
		return;
	}
	o->n_read++;
}

int ops_handle(struct ops *o, const Ring__Envelope *env)
{
	switch (env->body_case) {
	case RING__ENVELOPE__BODY_PROBE_REQUEST:
		ops_probe(o, env->request_id, env->probe_request);
		return 1;
	case RING__ENVELOPE__BODY_TEST_LISTEN_REQUEST:
		ops_listen(o, env->request_id, env->test_listen_request);
		return 1;
	case RING__ENVELOPE__BODY_TEST_RUN_REQUEST:
		ops_run(o, env->request_id, env->test_run_request);
		return 1;
	case RING__ENVELOPE__BODY_RDMA_SETUP:
		ops_rdma_setup(o, env->request_id, env->rdma_setup);
		return 1;
	case RING__ENVELOPE__BODY_RDMA_CONTROL:
		ops_rdma_control(o, env->request_id, env->rdma_control);
		return 1;
	case RING__ENVELOPE__BODY_ALLREDUCE_SETUP:
		ops_allreduce_setup(o, env->request_id, env->allreduce_setup);
		return 1;
	case RING__ENVELOPE__BODY_ALLREDUCE_CONTROL:
		ops_allreduce_control(o, env->request_id,
				      env->allreduce_control);
		return 1;
	case RING__ENVELOPE__BODY_READ_TEST_REQUEST:
		ops_read(o, env->request_id, env->read_test_request);
		return 1;
	default:
		return 0;
	}
}

void ops_cancel_all(struct ops *o)
{
	while (!LIST_EMPTY(&o->ops)) {
		struct op *op = LIST_FIRST(&o->ops);

		if (op->probe)
			probe_cancel(op->probe);
		if (op->test)
			tcptest_free(op->test);
		if (op->vt)
			verbs_free(op->vt);
		if (op->rt) {
			readtest_free(op->rt);
			o->n_read--;
		}
		op_unlink(op);
	}
}

void ops_free(struct ops *o)
{
	if (!o)
		return;
	ops_cancel_all(o);
	free(o);
}

unsigned ops_running(const struct ops *o)
{
	return o->n;
}
