/* The coordinator's RDMA requests to the agent: an RDMA test's setup
 * (parameters checked, registered memory reserved within the budget all
 * RDMA tests share, the local endpoint answered) and control (connect to
 * the peer, stop), and the ring all-reduce job's setup and control (one
 * job at a time, on data interfaces only). Results go back through the
 * request table of ops.c (ops_int.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allreduce.h"
#include "log.h"
#include "ops_int.h"
#include "testcounters.h"
#include "testlimits.h"
#include "verbs.h"

/* An RDMA test never holds its queue pairs and memory longer. */
#define OPS_MAX_RDMA_MS TESTLIMITS_RDMA_DEADLINE_MAX_MS

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

void ops_rdma_setup(struct ops *o, uint64_t id, const Ring__RdmaSetup *r)
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

void ops_rdma_control(struct ops *o, uint64_t id, const Ring__RdmaControl *r)
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

void ops_allreduce_setup(struct ops *o, uint64_t id,
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

void ops_allreduce_control(struct ops *o, uint64_t id,
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
