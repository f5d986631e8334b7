/* The coordinator's requests to the agent: the table of requests in
 * flight, their caps, checks and answers, the dispatch, and the probes,
 * TCP tests and read tests (RDMA tests and all-reduce: ops_rdma.c). */
#include "ops.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allreduce.h"
#include "log.h"
#include "ops_int.h"
#include "probe.h"
#include "readtest.h"
#include "tcptest.h"
#include "testcounters.h"
#include "testlimits.h"
#include "verbs.h"

/* Whatever a test request says, an agent never waits longer than this for
 * its peer to connect. */
#define OPS_MAX_ACCEPT_MS 60000
#define OPS_WARN_MS 10000
/* A constant into a message at compile time. */
#define OPS_STR_(x) #x
#define OPS_STR(x) OPS_STR_(x)
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

void op_unlink(struct op *op)
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

void ops_error(struct ops *o, uint64_t id, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ops_verror(o, id, RING__ERROR_CODE__ERROR_BAD_REQUEST, fmt, ap);
	va_end(ap);
}

void ops_error_code(struct ops *o, uint64_t id, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ops_verror(o, id, code, fmt, ap);
	va_end(ap);
}

/* A refusal is logged at most once per OPS_WARN_MS; the rest at debug. */
int ops_may_warn(struct ops *o)
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
int ops_admit(struct ops *o, uint64_t id, enum op_kind kind)
{
	if (kind == OP_PROBE && o->n_probes >= OPS_MAX_PROBES)
		return ops_busy(o, id, "probe");
	if (kind == OP_TEST && o->n_tests >= OPS_MAX_TESTS)
		return ops_busy(o, id, "test");
	return 0;
}

/* A new operation, or NULL after telling the coordinator (what: the
 * request's name in the message) that memory ran out. */
struct op *ops_op_new(struct ops *o, uint64_t id, enum op_kind kind,
		      const char *what)
{
	struct op *op = op_new(o, id, kind);

	if (!op)
		ops_error(o, id, "%s: out of memory", what);
	return op;
}

/* Admitted under the cap and allocated, or NULL after answering. */
struct op *ops_start(struct ops *o, uint64_t id, enum op_kind kind,
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
int ops_is_data_port(const struct ops *o, const char *ifname)
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
void ops_send_result(struct op *op, const struct engine_result *r,
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
