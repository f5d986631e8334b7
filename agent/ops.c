#include "ops.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "probe.h"
#include "tcptest.h"

/* Whatever a test request says, an agent never waits longer than this for
 * its peer to connect. */
#define OPS_MAX_ACCEPT_MS 60000

struct op {
	struct ops *owner;
	uint64_t request_id;
	struct probe *probe;
	struct tcptest *test;
	struct probe_route route;
	int route_err;
	struct op *prev, *next;
};

struct ops {
	struct event_base *base;
	ops_send_fn send;
	void *arg;
	struct op *head;
	unsigned n;
};

struct ops *ops_new(struct event_base *base, ops_send_fn send, void *arg)
{
	struct ops *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->base = base;
	o->send = send;
	o->arg = arg;
	return o;
}

static struct op *op_new(struct ops *o, uint64_t id)
{
	struct op *op = calloc(1, sizeof(*op));

	if (!op)
		return NULL;
	op->owner = o;
	op->request_id = id;
	op->next = o->head;
	if (o->head)
		o->head->prev = op;
	o->head = op;
	o->n++;
	return op;
}

static void op_unlink(struct op *op)
{
	struct ops *o = op->owner;

	if (op->prev)
		op->prev->next = op->next;
	else
		o->head = op->next;
	if (op->next)
		op->next->prev = op->prev;
	o->n--;
	free(op);
}

static void ops_error(struct ops *o, uint64_t id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void ops_error(struct ops *o, uint64_t id, const char *fmt, ...)
{
	Ring__Error err = RING__ERROR__INIT;
	char text[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	err.code = RING__ERROR_CODE__ERROR_BAD_REQUEST;
	err.text = text;
	o->send(o->arg, id, RING__ENVELOPE__BODY_ERROR, &err);
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

static void ops_probe(struct ops *o, uint64_t id, const Ring__ProbeRequest *r)
{
	unsigned timeout = r->timeout_ms ? r->timeout_ms : 1000;
	struct op *op;

	if (timeout > 30000 || r->port == 0 || r->port > 65535) {
		ops_error(o, id,
			  "probe: timeout (<= 30 s) or port out of range");
		return;
	}
	op = op_new(o, id);
	if (!op) {
		ops_error(o, id, "probe: out of memory");
		return;
	}
	op->route_err = probe_route_get(r->peer_address, &op->route);
	if (op->route_err == -EINVAL) {
		ops_error(o, id, "probe: bad address '%.64s'", r->peer_address);
		op_unlink(op);
		return;
	}
	op->probe =
		probe_start(o->base, r->peer_address, (uint16_t)r->port,
			    r->local_interface, timeout, ops_probe_done, op);
	if (!op->probe) {
		/* e.g. the named interface does not exist: not reachable. */
		ops_probe_done(-errno, 0, op);
		return;
	}
	log_debug("ops", "probe %s:%u via %s", r->peer_address, r->port,
		  *r->local_interface ? r->local_interface : "route");
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

static void ops_test_done(struct tcptest *t, const struct engine_result *r,
			  void *arg)
{
	struct op *op = arg;
	Ring__TestResult res = RING__TEST_RESULT__INIT;
	Ring__StreamResult sr[TCPTEST_MAX_STREAMS], *srp[TCPTEST_MAX_STREAMS];
	Ring__LatResult lr[TCPTEST_MAX_SIZES], *lrp[TCPTEST_MAX_SIZES];

	res.error = (char *)(r->err ? r->error : "");
	res.window_s = r->window_s;
	res.gbps_sent = r->gbps_sent;
	res.gbps_received = r->gbps_received;
	res.retransmits = r->retransmits;
	res.cpu_pct = r->cpu_pct;
	for (unsigned i = 0; i < r->n_streams && i < TCPTEST_MAX_STREAMS; i++) {
		ring__stream_result__init(&sr[i]);
		sr[i].index = r->streams[i].index;
		sr[i].sending = r->streams[i].sending;
		sr[i].bytes = r->streams[i].bytes;
		sr[i].gbps = r->streams[i].gbps;
		sr[i].retransmits = r->streams[i].retransmits;
		srp[i] = &sr[i];
	}
	res.n_streams = r->n_streams;
	res.streams = srp;
	for (unsigned i = 0; i < r->n_lat && i < TCPTEST_MAX_SIZES; i++) {
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
	if (r->err)
		log_warnx("test %llu failed: %s",
			  (unsigned long long)op->request_id, r->error);
	op->owner->send(op->owner->arg, op->request_id,
			RING__ENVELOPE__BODY_TEST_RESULT, &res);
	tcptest_free(t);
	op_unlink(op);
}

static void ops_listen(struct ops *o, uint64_t id,
		       const Ring__TestListenRequest *r)
{
	Ring__TestListenReply rep = RING__TEST_LISTEN_REPLY__INIT;
	struct tcptest_params p;
	unsigned accept_ms = r->accept_timeout_ms ? r->accept_timeout_ms : 5000;
	char why[256];
	uint16_t port = 0;
	struct op *op;

	if (ops_params(r->params, &p, why, sizeof(why)) < 0) {
		ops_error(o, id, "test: %s", why);
		return;
	}
	if (r->token.len != TCPTEST_TOKEN_LEN) {
		ops_error(o, id, "test: token must be %d bytes",
			  TCPTEST_TOKEN_LEN);
		return;
	}
	if (accept_ms > OPS_MAX_ACCEPT_MS)
		accept_ms = OPS_MAX_ACCEPT_MS;
	op = op_new(o, id);
	if (!op) {
		ops_error(o, id, "test: out of memory");
		return;
	}
	op->test = tcptest_listen(o->base, r->bind_address, r->token.data, &p,
				  accept_ms, ops_test_done, op, &port);
	if (!op->test) {
		ops_error(o, id, "test: cannot listen on %.64s: %s",
			  r->bind_address, strerror(errno));
		op_unlink(op);
		return;
	}
	rep.port = port;
	o->send(o->arg, id, RING__ENVELOPE__BODY_TEST_LISTEN_REPLY, &rep);
	log_debug("ops", "test listener on %s:%u", r->bind_address, port);
}

static void ops_run(struct ops *o, uint64_t id, const Ring__TestRunRequest *r)
{
	struct tcptest_params p;
	unsigned conn_ms = r->connect_timeout_ms ? r->connect_timeout_ms : 5000;
	char why[256];
	struct op *op;

	if (ops_params(r->params, &p, why, sizeof(why)) < 0) {
		ops_error(o, id, "test: %s", why);
		return;
	}
	if (r->token.len != TCPTEST_TOKEN_LEN || r->port == 0 ||
	    r->port > 65535) {
		ops_error(o, id, "test: bad token or port");
		return;
	}
	if (conn_ms > OPS_MAX_ACCEPT_MS)
		conn_ms = OPS_MAX_ACCEPT_MS;
	op = op_new(o, id);
	if (!op) {
		ops_error(o, id, "test: out of memory");
		return;
	}
	op->test = tcptest_connect(o->base, r->peer_address, (uint16_t)r->port,
				   r->local_interface, r->token.data, &p,
				   conn_ms, ops_test_done, op);
	if (!op->test) {
		ops_error(o, id, "test: cannot start towards %.64s: %s",
			  r->peer_address, strerror(errno));
		op_unlink(op);
	}
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
	default:
		return 0;
	}
}

void ops_cancel_all(struct ops *o)
{
	while (o->head) {
		struct op *op = o->head;

		if (op->probe)
			probe_cancel(op->probe);
		if (op->test)
			tcptest_free(op->test);
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
