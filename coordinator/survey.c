#include "survey.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <event2/event.h>

#include "clock.h"
#include "call.h"
#include "coord_conf.h"
#include "nodes.h"
#include "findings.h"
#include "log.h"
#include "rdmatest.h"
#include "sched.h"
#include "topo.h"

/* Probes go to a port nobody needs to listen on: a RST proves the path as
 * well as a SYN-ACK does. */
#define SV_PROBE_PORT 7420
#define SV_PROBE_TIMEOUT_MS 1000
#define SV_ACCEPT_TIMEOUT_MS 5000
#define SV_SWITCH_MAX 64 /* all-pairs reachability check up to this size */
/* Probes in flight per agent (each agent refuses more than 64). */
#define SV_PROBES_PER_NODE 16
#define SV_MAX_LADDER 4

struct sv_if {
	char name[IFNAMSIZ];
	char addr[64]; /* first IPv4 address, "" if none */
	char subnet[48];
	uint32_t ip, mask; /* host order; mask 0 when no address */
	unsigned mtu;
	char rdma[64];
	double nominal_gbps;
	char rdma_dev[64];  /* device with an ACTIVE port here, "" if none */
	char rdma_why[160]; /* why not */
	int rdma_hw;	    /* some RDMA device sits on this interface */
};

struct sv_node {
	char name[64];
	char mgmt_addr[64];
	char mgmt_if[IFNAMSIZ];
	struct sv_if *ifs;
	unsigned n_ifs;
	unsigned probes; /* probes in flight at its agent */
	int beacons;	 /* has a neighbour table with beacons on */
	int rdma_cap;	 /* its agent runs RDMA tests */
};

/* The steps of one edge's measurement: below SV_ST_TCP_LAT, a TCP ladder
 * step (direction step % 2, ladder index step / 2); then the others. */
enum sv_step {
	SV_ST_TCP_LAT = 100,
	SV_ST_RDMA_WRITE_AB, /* WRITE bandwidth, A requester: data A -> B */
	SV_ST_RDMA_WRITE_BA, /* the same with B requester */
	SV_ST_RDMA_READ_AB,  /* A reads from B: data B -> A */
	SV_ST_RDMA_READ_BA,
	SV_ST_RDMA_LAT, /* WRITE ping-pong latency, A requester */
};
#define SV_MAX_PLAN 24

struct sv_link {
	struct topo_link t;
	char a_addr[64], b_addr[64];
	char a_rdma[64], b_rdma[64];
	double nominal_gbps;
	int probe_ab, probe_ba; /* 1 reached, 0 not, -1 not probed */
	int switch_pair;	/* measured through a switch, not a cable */
	int rejected; /* another claim on one of its ports answered the probe */
	double gbps[2][SV_MAX_LADDER];
	Ring__LatResult lat[16];
	unsigned n_lat;
	char error[256];
	uint64_t measured_ms;
	unsigned step; /* index into plan */
	unsigned char plan[SV_MAX_PLAN];
	unsigned n_plan;
	int ladder_rdma; /* gbps[][0] are RDMA WRITE figures (ladder = qps) */
	double rdma_write[2], rdma_read[2]; /* [0] A requester, [1] B */
	Ring__LatResult rdma_lat[16];
	unsigned n_rdma_lat;
	char a_gid[64], b_gid[64];
	int a_gid_index, b_gid_index; /* -1 until an RDMA test reports them */
	char rdma_error[256];
	struct survey_test *test;
	struct timespec test_t0;
	struct survey *sv;
};

struct sv_diag {
	unsigned a, b;
	char b_addr[64];
	char route_kind[16];
	char route_if[IFNAMSIZ];
	int path;
	int not_probed; /* the agent only read its route: not a data port */
	int done;
};

enum sv_phase {
	SV_IDLE,
	SV_VERIFY,
	SV_SWITCH,
	SV_DIAG,
	SV_MEASURE,
};

/* One outstanding request to an agent on behalf of the survey. */
struct sv_op {
	struct survey *sv;
	struct call *call;
	enum sv_phase phase;
	unsigned idx;
	int dir;
	unsigned from;	       /* the probing node */
	char addr[64];	       /* what it probes */
	char ifname[IFNAMSIZ]; /* through which port ("" = route) */
	int queued;	       /* waits for a free probe slot */
	struct sv_op *prev, *next;
};

struct survey_test {
	struct survey *sv;
	char a[64], b[64], a_if[IFNAMSIZ], b_addr[64];
	Ring__TestParams params;
	uint32_t sizes[16];
	uint8_t token[16];
	struct call *call_a, *call_b;
	Ring__TestResult *res_a, *res_b;
	int done_a, done_b;
	char error[256];
	survey_test_cb cb;
	void *arg;
	int manual;	       /* started by ringctl, not by the survey */
	struct rdmatest *rdma; /* an RDMA test runs instead of the above */
	struct survey_test *prev, *next;
};

struct survey {
	struct event_base *base;
	const struct coord_conf *conf;
	struct nodes *table; /* the coordinator's node table */
	const struct call_iface *calls;
	enum sv_phase phase;
	unsigned pending;
	char reason[64];
	struct timespec t0;
	double tests_sum_s;
	struct sv_node *nodes;
	unsigned n_nodes;
	struct sv_link *links;
	unsigned n_links;
	struct sv_diag *diags;
	unsigned n_diags;
	unsigned switch_ok, switch_total;
	unsigned *meas; /* link indices in measurement order */
	unsigned n_meas;
	unsigned *round_of;
	int n_rounds, round;
	struct sv_op *ops;
	struct survey_test *tests;
	unsigned manual_tests;
	int dirty; /* nodes changed while a survey ran */
	Ring__Topology *topology;
	struct event *auto_ev;
};

static void sv_next(struct survey *sv);

static double sv_elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* ------------------------------------------------------------ tests */

static Ring__TestResult *sv_copy_result(const Ring__TestResult *r)
{
	size_t n = ring__test_result__get_packed_size(r);
	uint8_t *buf = malloc(n ? n : 1);
	Ring__TestResult *copy;

	if (!buf)
		return NULL;
	ring__test_result__pack(r, buf);
	copy = ring__test_result__unpack(NULL, n, buf);
	free(buf);
	return copy;
}

static void sv_test_link(struct survey *sv, struct survey_test *t)
{
	t->next = sv->tests;
	if (sv->tests)
		sv->tests->prev = t;
	sv->tests = t;
}

static void sv_test_unlink(struct survey_test *t)
{
	struct survey *sv = t->sv;

	if (t->prev)
		t->prev->next = t->next;
	else
		sv->tests = t->next;
	if (t->next)
		t->next->prev = t->prev;
}

static void sv_test_free(struct survey_test *t)
{
	if (t->manual)
		t->sv->manual_tests--;
	call_cancel(t->sv->calls, t->call_a);
	call_cancel(t->sv->calls, t->call_b);
	rdmatest_cancel(t->rdma);
	if (t->res_a)
		ring__test_result__free_unpacked(t->res_a, NULL);
	if (t->res_b)
		ring__test_result__free_unpacked(t->res_b, NULL);
	sv_test_unlink(t);
	free(t);
}

void survey_test_cancel(struct survey_test *t)
{
	if (t)
		sv_test_free(t);
}

static void sv_test_set_error(struct survey_test *t, const char *side,
			      const char *text)
{
	if (!t->error[0])
		snprintf(t->error, sizeof(t->error), "%s: %s", side, text);
}

static void sv_test_finish(struct survey_test *t)
{
	Ring__TestReport rep = RING__TEST_REPORT__INIT;
	int bw = t->params.kind == RING__TEST_KIND__TEST_TCP_BW;

	if (!t->done_a || !t->done_b)
		return;
	rep.a = t->a;
	rep.b = t->b;
	rep.a_interface = t->a_if;
	rep.b_address = t->b_addr;
	rep.params = &t->params;
	rep.a_side = t->res_a;
	rep.b_side = t->res_b;
	/* Each direction is what its senders' peers acknowledged. */
	if (bw && t->res_a)
		rep.gbps_a_to_b = t->res_a->gbps_sent;
	if (bw && t->res_b)
		rep.gbps_b_to_a = t->res_b->gbps_sent;
	if (!t->error[0] && t->res_a && *t->res_a->error)
		sv_test_set_error(t, t->a, t->res_a->error);
	if (!t->error[0] && t->res_b && *t->res_b->error)
		sv_test_set_error(t, t->b, t->res_b->error);
	rep.error = t->error;
	rep.finished_ms = clock_now_ms();
	rep.method = "tcp";
	t->call_a = t->call_b = NULL;
	t->cb(&rep, t->arg);
	sv_test_free(t);
}

static const char *sv_err_text(int err)
{
	return err == -ETIMEDOUT    ? "no answer before the test deadline"
	       : err == -ECONNRESET ? "agent session lost during the test"
				    : strerror(-err);
}

static void sv_test_reply_a(const Ring__Envelope *env, int err, void *arg)
{
	struct survey_test *t = arg;

	t->call_a = NULL;
	t->done_a = 1;
	if (!env)
		sv_test_set_error(t, t->a, sv_err_text(err));
	else if (env->body_case == RING__ENVELOPE__BODY_TEST_RESULT)
		t->res_a = sv_copy_result(env->test_result);
	else if (env->body_case == RING__ENVELOPE__BODY_ERROR)
		sv_test_set_error(t, t->a, env->error->text);
	sv_test_finish(t);
}

static unsigned sv_test_deadline_ms(const Ring__TestParams *p)
{
	uint64_t lat = (uint64_t)p->n_sizes * (p->iterations + p->lat_warmup);

	/* Latency: generous per round trip; bandwidth: the window plus
	 * connection set-up and teardown. */
	return SV_ACCEPT_TIMEOUT_MS + p->warmup_ms + p->duration_ms + 10000 +
	       (unsigned)(lat / 2);
}

static void sv_test_reply_b(const Ring__Envelope *env, int err, void *arg)
{
	struct survey_test *t = arg;
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__TestRunRequest run = RING__TEST_RUN_REQUEST__INIT;

	if (env && env->body_case == RING__ENVELOPE__BODY_TEST_LISTEN_REPLY) {
		run.params = &t->params;
		run.peer_address = t->b_addr;
		run.port = env->test_listen_reply->port;
		run.local_interface = t->a_if;
		run.token.data = t->token;
		run.token.len = sizeof(t->token);
		run.connect_timeout_ms = SV_ACCEPT_TIMEOUT_MS;
		req.body_case = RING__ENVELOPE__BODY_TEST_RUN_REQUEST;
		req.test_run_request = &run;
		t->call_a = call_start(t->sv->calls, t->a, &req,
				       sv_test_deadline_ms(&t->params), 0,
				       RING__ENVELOPE__BODY_TEST_RESULT,
				       sv_test_reply_a, t);
		if (!t->call_a) {
			sv_test_set_error(t, t->a, "not connected");
			t->done_a = 1;
		}
		return; /* B's result comes later on the same request */
	}
	t->call_b = NULL;
	t->done_b = 1;
	if (!env)
		sv_test_set_error(t, t->b, sv_err_text(err));
	else if (env->body_case == RING__ENVELOPE__BODY_TEST_RESULT)
		t->res_b = sv_copy_result(env->test_result);
	else if (env->body_case == RING__ENVELOPE__BODY_ERROR)
		sv_test_set_error(t, t->b, env->error->text);
	if (!t->call_a && !t->done_a) {
		/* B failed before A was told anything. */
		t->done_a = 1;
	}
	sv_test_finish(t);
}

static struct survey_test *
sv_test_start(struct survey *sv, const char *a, const char *a_if, const char *b,
	      const char *b_addr, const Ring__TestParams *p, survey_test_cb cb,
	      void *arg, int manual)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__TestListenRequest lis = RING__TEST_LISTEN_REQUEST__INIT;
	struct survey_test *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->sv = sv;
	snprintf(t->a, sizeof(t->a), "%s", a);
	snprintf(t->b, sizeof(t->b), "%s", b);
	snprintf(t->a_if, sizeof(t->a_if), "%s", a_if);
	snprintf(t->b_addr, sizeof(t->b_addr), "%s", b_addr);
	t->params = *p;
	t->params.n_sizes = p->n_sizes < 16 ? p->n_sizes : 16;
	/* Bandwidth tests carry no sizes (NULL): memcpy must not see it. */
	if (t->params.n_sizes)
		memcpy(t->sizes, p->sizes,
		       t->params.n_sizes * sizeof(uint32_t));
	t->params.sizes = t->sizes;
	t->cb = cb;
	t->arg = arg;
	t->manual = manual;
	if (getrandom(t->token, sizeof(t->token), 0) != sizeof(t->token)) {
		free(t);
		return NULL;
	}
	sv_test_link(sv, t);
	lis.params = &t->params;
	lis.bind_address = t->b_addr;
	lis.token.data = t->token;
	lis.token.len = sizeof(t->token);
	lis.accept_timeout_ms = SV_ACCEPT_TIMEOUT_MS;
	req.body_case = RING__ENVELOPE__BODY_TEST_LISTEN_REQUEST;
	req.test_listen_request = &lis;
	/* B's port at once, B's result when the test ends. */
	t->call_b = call_start(
		sv->calls, b, &req, sv_test_deadline_ms(&t->params),
		RING__ENVELOPE__BODY_TEST_LISTEN_REPLY,
		RING__ENVELOPE__BODY_TEST_RESULT, sv_test_reply_b, t);
	if (!t->call_b) {
		sv_test_unlink(t);
		free(t);
		errno = ENOTCONN;
		return NULL;
	}
	sv->manual_tests += manual;
	return t;
}

struct survey_test *survey_test_start(struct survey *sv, const char *a,
				      const char *a_if, const char *b,
				      const char *b_addr,
				      const Ring__TestParams *p,
				      survey_test_cb cb, void *arg)
{
	/* No node in two tests at once: not while a survey runs. */
	if (sv->phase != SV_IDLE) {
		errno = EBUSY;
		return NULL;
	}
	return sv_test_start(sv, a, a_if, b, b_addr, p, cb, arg, 1);
}

static void sv_rdma_done(const Ring__TestReport *rep, void *arg)
{
	struct survey_test *t = arg;

	t->rdma = NULL; /* rdmatest frees itself when we return */
	t->cb(rep, t->arg);
	sv_test_free(t);
}

/* An RDMA test wrapped as a survey_test: the same list, the same one-test-
 * per-node rule against surveys. */
static struct survey_test *sv_rdma_start(struct survey *sv,
					 const struct rdmatest_spec *sp,
					 survey_test_cb cb, void *arg,
					 int manual)
{
	struct survey_test *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->sv = sv;
	snprintf(t->a, sizeof(t->a), "%s", sp->a);
	snprintf(t->b, sizeof(t->b), "%s", sp->b);
	t->cb = cb;
	t->arg = arg;
	t->manual = manual;
	sv_test_link(sv, t);
	t->rdma = rdmatest_start(sv->calls, sp, sv_rdma_done, t);
	if (!t->rdma) {
		int err = errno;

		sv_test_unlink(t);
		free(t);
		errno = err;
		return NULL;
	}
	sv->manual_tests += manual;
	return t;
}

struct survey_test *survey_rdma_test_start(struct survey *sv, const char *a,
					   const char *b,
					   const struct survey_rdma_ends *e,
					   const Ring__TestParams *p,
					   survey_test_cb cb, void *arg)
{
	struct rdmatest_spec sp = {
		.a = a,
		.a_if = e->a_if,
		.a_dev = e->a_dev,
		.b = b,
		.b_if = e->b_if,
		.b_dev = e->b_dev,
		.adjacent = e->adjacent,
		.params = p,
	};

	if (sv->phase != SV_IDLE) {
		errno = EBUSY;
		return NULL;
	}
	return sv_rdma_start(sv, &sp, cb, arg, 1);
}

/* ------------------------------------------------------------ snapshot */

static void sv_reset(struct survey *sv)
{
	while (sv->ops) {
		struct sv_op *op = sv->ops;

		sv->ops = op->next;
		call_cancel(sv->calls, op->call);
		free(op);
	}
	for (unsigned i = 0; i < sv->n_links; i++)
		if (sv->links[i].test)
			survey_test_cancel(sv->links[i].test);
	for (unsigned i = 0; i < sv->n_nodes; i++)
		free(sv->nodes[i].ifs);
	free(sv->nodes);
	free(sv->links);
	free(sv->diags);
	free(sv->meas);
	free(sv->round_of);
	sv->nodes = NULL;
	sv->links = NULL;
	sv->diags = NULL;
	sv->meas = NULL;
	sv->round_of = NULL;
	sv->n_nodes = sv->n_links = sv->n_diags = sv->n_meas = 0;
	sv->pending = 0;
	sv->phase = SV_IDLE;
}

static void sv_subnet(const char *addr, unsigned prefix, char *out, size_t len)
{
	struct in_addr in;
	uint32_t mask = prefix ? ~0u << (32 - (prefix > 32 ? 32 : prefix)) : 0;

	out[0] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1)
		return;
	in.s_addr = htonl(ntohl(in.s_addr) & mask);
	inet_ntop(AF_INET, &in, out, (socklen_t)len);
	snprintf(out + strlen(out), len - strlen(out), "/%u", prefix);
}

static void sv_ip(const char *addr, unsigned prefix, uint32_t *ip,
		  uint32_t *mask)
{
	struct in_addr in;

	*ip = *mask = 0;
	if (inet_pton(AF_INET, addr, &in) != 1 || !prefix || prefix > 32)
		return;
	*ip = ntohl(in.s_addr);
	*mask = ~0u << (32 - prefix);
}

/* Is addr on the subnet of f? Probes only go where the prober's own data
 * port leads: one node's claims never aim another at foreign addresses. */
static int sv_on_subnet(const struct sv_if *f, const char *addr)
{
	struct in_addr in;
	uint32_t a;

	if (!f->mask || inet_pton(AF_INET, addr, &in) != 1)
		return 0;
	a = ntohl(in.s_addr);
	return (a & f->mask) == (f->ip & f->mask) && a != f->ip;
}

static int sv_on_any_subnet(const struct sv_node *n, const char *addr)
{
	for (unsigned i = 0; i < n->n_ifs; i++)
		if (sv_on_subnet(&n->ifs[i], addr))
			return 1;
	return 0;
}

static int sv_snapshot(struct survey *sv)
{
	struct node **v;
	unsigned n, k = 0;

	v = nodes_sorted(sv->table, &n);
	if (!v)
		return -1;
	sv->nodes = calloc(n ? n : 1, sizeof(*sv->nodes));
	if (!sv->nodes) {
		free(v);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		const Ring__Inventory *inv = v[i]->inventory;
		struct sv_node *sn = &sv->nodes[k];

		if (v[i]->state != NODE_UP || !inv)
			continue;
		snprintf(sn->name, sizeof(sn->name), "%s", v[i]->name);
		snprintf(sn->mgmt_addr, sizeof(sn->mgmt_addr), "%s",
			 v[i]->mgmt_address);
		snprintf(sn->mgmt_if, sizeof(sn->mgmt_if), "%s",
			 inv->mgmt_interface);
		sn->beacons =
			v[i]->neighbours && v[i]->neighbours->beacons_available;
		sn->rdma_cap = rdmatest_node_capable(v[i]);
		sn->ifs = calloc(inv->n_interfaces + 1, sizeof(*sn->ifs));
		if (!sn->ifs)
			break;
		for (size_t j = 0; j < inv->n_interfaces; j++) {
			const Ring__NetInterface *f = inv->interfaces[j];
			struct sv_if *si = &sn->ifs[sn->n_ifs];

			if (f->management)
				continue;
			snprintf(si->name, sizeof(si->name), "%s", f->name);
			if (f->n_ipv4) {
				snprintf(si->addr, sizeof(si->addr), "%s",
					 f->ipv4[0]->address);
				sv_subnet(si->addr, f->ipv4[0]->prefix,
					  si->subnet, sizeof(si->subnet));
				sv_ip(si->addr, f->ipv4[0]->prefix, &si->ip,
				      &si->mask);
			}
			si->mtu = f->mtu;
			snprintf(si->rdma, sizeof(si->rdma), "%s",
				 f->rdma_device);
			if (rdmatest_active_port(inv, f->name, si->rdma_dev,
						 sizeof(si->rdma_dev),
						 si->rdma_why,
						 sizeof(si->rdma_why)) < 0)
				si->rdma_dev[0] = '\0';
			si->rdma_hw = si->rdma_dev[0] || si->rdma[0] ||
				      strncmp(si->rdma_why, "no ", 3);
			si->nominal_gbps =
				(f->nominal_speed_mbps
					 ? f->nominal_speed_mbps
					 : (f->speed_mbps > 0
						    ? (unsigned)f->speed_mbps
						    : 0)) /
				1000.0;
			sn->n_ifs++;
		}
		k++;
	}
	free(v);
	sv->n_nodes = k;
	return 0;
}

/* The snapshot is sorted by name (nodes_sorted): O(log n). */
static int sv_node_index(const struct survey *sv, const char *name)
{
	unsigned lo = 0, hi = sv->n_nodes;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int c = strcmp(sv->nodes[mid].name, name);

		if (!c)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static const struct sv_if *sv_iface(const struct survey *sv, unsigned n,
				    const char *ifname)
{
	for (unsigned i = 0; i < sv->nodes[n].n_ifs; i++)
		if (!strcmp(sv->nodes[n].ifs[i].name, ifname))
			return &sv->nodes[n].ifs[i];
	return NULL;
}

static struct sv_link *sv_add_link(struct survey *sv, unsigned a,
				   const char *a_if, unsigned b,
				   const char *b_if)
{
	struct sv_link *l, *nl;
	const struct sv_if *fa, *fb;

	/* Canonical: lower node index first. */
	if (a > b) {
		unsigned x = a;
		const char *y = a_if;

		a = b;
		b = x;
		a_if = b_if;
		b_if = y;
	}
	for (unsigned i = 0; i < sv->n_links; i++) {
		l = &sv->links[i];
		if (l->t.a == a && l->t.b == b && !strcmp(l->t.a_if, a_if) &&
		    !strcmp(l->t.b_if, b_if))
			return l;
	}
	nl = realloc(sv->links, (sv->n_links + 1) * sizeof(*nl));
	if (!nl)
		return NULL;
	sv->links = nl;
	l = &sv->links[sv->n_links++];
	memset(l, 0, sizeof(*l));
	l->t.a = a;
	l->t.b = b;
	snprintf(l->t.a_if, sizeof(l->t.a_if), "%s", a_if);
	snprintf(l->t.b_if, sizeof(l->t.b_if), "%s", b_if);
	l->probe_ab = l->probe_ba = -1;
	l->a_gid_index = l->b_gid_index = -1;
	for (int d = 0; d < 2; d++) {
		for (int s = 0; s < SV_MAX_LADDER; s++)
			l->gbps[d][s] = -1;
		l->rdma_write[d] = l->rdma_read[d] = -1;
	}
	fa = sv_iface(sv, a, a_if);
	fb = sv_iface(sv, b, b_if);
	if (fa) {
		snprintf(l->a_addr, sizeof(l->a_addr), "%s", fa->addr);
		snprintf(l->t.a_subnet, sizeof(l->t.a_subnet), "%s",
			 fa->subnet);
		snprintf(l->a_rdma, sizeof(l->a_rdma), "%s", fa->rdma);
		l->t.a_mtu = fa->mtu;
		l->nominal_gbps = fa->nominal_gbps;
	}
	if (fb) {
		snprintf(l->b_addr, sizeof(l->b_addr), "%s", fb->addr);
		snprintf(l->t.b_subnet, sizeof(l->t.b_subnet), "%s",
			 fb->subnet);
		snprintf(l->b_rdma, sizeof(l->b_rdma), "%s", fb->rdma);
		l->t.b_mtu = fb->mtu;
		if (!l->nominal_gbps ||
		    (fb->nominal_gbps && fb->nominal_gbps < l->nominal_gbps))
			l->nominal_gbps = fb->nominal_gbps;
	}
	return l;
}

/* Links from the beacons each node heard. */
static int sv_links_from_beacons(struct survey *sv)
{
	for (unsigned i = 0; i < sv->n_nodes; i++) {
		struct node *n = nodes_find(sv->table, sv->nodes[i].name);
		const Ring__NeighbourTable *t = n ? n->neighbours : NULL;

		for (size_t j = 0; t && j < t->n_neighbours; j++) {
			const Ring__Neighbour *nb = t->neighbours[j];
			int r = sv_node_index(sv, nb->remote_node);
			struct sv_link *l;

			if (r < 0 || (unsigned)r == i)
				continue;
			l = sv_add_link(sv, i, nb->local_interface, (unsigned)r,
					nb->remote_interface);
			if (!l)
				return -1;
			if (l->t.a == i)
				l->t.a_sees_b = 1;
			else
				l->t.b_sees_a = 1;
		}
	}
	return 0;
}

struct sv_subnet_ref {
	uint32_t net, mask;
	unsigned node, iface;
};

static int sv_subnet_cmp(const void *x, const void *y)
{
	const struct sv_subnet_ref *a = x, *b = y;

	if (a->net != b->net)
		return a->net < b->net ? -1 : 1;
	if (a->mask != b->mask)
		return a->mask < b->mask ? -1 : 1;
	return 0;
}

/* Fallback where beacons are off (no CAP_NET_RAW): a subnet shared by
 * exactly two interfaces on two nodes is a point-to-point cable
 * candidate; the probes of the verify phase decide. Sorted, so
 * O(n log n) in the number of addressed interfaces. */
static int sv_links_from_subnets(struct survey *sv)
{
	struct sv_subnet_ref *v;
	size_t n = 0, total = 0, i, j;
	int rc = 0;

	for (unsigned x = 0; x < sv->n_nodes; x++)
		total += sv->nodes[x].n_ifs;
	v = calloc(total + 1, sizeof(*v));
	if (!v)
		return -1;
	for (unsigned x = 0; x < sv->n_nodes; x++)
		for (unsigned k = 0; k < sv->nodes[x].n_ifs; k++) {
			const struct sv_if *f = &sv->nodes[x].ifs[k];

			if (!f->mask)
				continue;
			v[n].net = f->ip & f->mask;
			v[n].mask = f->mask;
			v[n].node = x;
			v[n].iface = k;
			n++;
		}
	qsort(v, n, sizeof(*v), sv_subnet_cmp);
	for (i = 0; i < n && !rc; i = j) {
		const struct sv_subnet_ref *p = &v[i], *q = &v[i + 1];

		for (j = i + 1; j < n && !sv_subnet_cmp(&v[i], &v[j]); j++)
			;
		if (j - i != 2 || p->node == q->node ||
		    (sv->nodes[p->node].beacons && sv->nodes[q->node].beacons))
			continue;
		if (p->node > q->node) {
			const struct sv_subnet_ref *t = p;

			p = q;
			q = t;
		}
		if (!sv_add_link(sv, p->node,
				 sv->nodes[p->node].ifs[p->iface].name, q->node,
				 sv->nodes[q->node].ifs[q->iface].name))
			rc = -1;
	}
	free(v);
	return rc;
}

/* ------------------------------------------------------------ ops */

static struct sv_op *sv_op_new(struct survey *sv, enum sv_phase phase,
			       unsigned idx, int dir)
{
	struct sv_op *op = calloc(1, sizeof(*op));

	if (!op)
		return NULL;
	op->sv = sv;
	op->phase = phase;
	op->idx = idx;
	op->dir = dir;
	op->next = sv->ops;
	if (sv->ops)
		sv->ops->prev = op;
	sv->ops = op;
	return op;
}

static void sv_op_free(struct sv_op *op)
{
	struct survey *sv = op->sv;

	if (op->prev)
		op->prev->next = op->next;
	else
		sv->ops = op->next;
	if (op->next)
		op->next->prev = op->prev;
	free(op);
}

static void sv_done_one(struct survey *sv)
{
	if (sv->pending && --sv->pending == 0)
		sv_next(sv);
}

static void sv_probe_result(struct sv_op *op, const Ring__Envelope *env)
{
	struct survey *sv = op->sv;
	int ok = env && env->body_case == RING__ENVELOPE__BODY_PROBE_REPLY &&
		 env->probe_reply->reachable;

	switch (op->phase) {
	case SV_VERIFY: {
		struct sv_link *l = &sv->links[op->idx];

		if (op->dir == 0)
			l->probe_ab = ok;
		else
			l->probe_ba = ok;
		break;
	}
	case SV_SWITCH:
		sv->switch_ok += ok;
		break;
	case SV_DIAG: {
		struct sv_diag *d = &sv->diags[op->idx];

		d->done = 1;
		d->path = ok;
		if (env && env->body_case == RING__ENVELOPE__BODY_PROBE_REPLY) {
			snprintf(d->route_kind, sizeof(d->route_kind), "%s",
				 env->probe_reply->route_kind);
			snprintf(d->route_if, sizeof(d->route_if), "%s",
				 env->probe_reply->route_interface);
			d->not_probed = !strncmp(env->probe_reply->error,
						 "not probed", 10);
		} else {
			snprintf(d->route_kind, sizeof(d->route_kind), "?");
		}
		break;
	}
	default:
		break;
	}
}

static void sv_probe_reply(const Ring__Envelope *env, int err, void *arg);

static int sv_probe_send(struct survey *sv, struct sv_op *op)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__ProbeRequest pr = RING__PROBE_REQUEST__INIT;

	pr.peer_address = op->addr;
	pr.local_interface = op->ifname;
	pr.port = SV_PROBE_PORT;
	pr.timeout_ms = SV_PROBE_TIMEOUT_MS;
	req.body_case = RING__ENVELOPE__BODY_PROBE_REQUEST;
	req.probe_request = &pr;
	op->call = call_start(sv->calls, sv->nodes[op->from].name, &req,
			      SV_PROBE_TIMEOUT_MS + 3000, 0,
			      RING__ENVELOPE__BODY_PROBE_REPLY, sv_probe_reply,
			      op);
	if (!op->call)
		return -1;
	op->queued = 0;
	sv->nodes[op->from].probes++;
	return 0;
}

/* Send from's queued probes while it has free slots. The caller holds a
 * pending count of its own, so a failure here cannot end the phase. */
static void sv_probe_next(struct survey *sv, unsigned from)
{
	struct sv_op *op, *next;

	for (op = sv->ops; op && sv->nodes[from].probes < SV_PROBES_PER_NODE;
	     op = next) {
		next = op->next;
		if (!op->queued || op->from != from)
			continue;
		if (sv_probe_send(sv, op) < 0) {
			sv_probe_result(op, NULL);
			sv_op_free(op);
			sv->pending--;
		}
	}
}

static void sv_probe_reply(const Ring__Envelope *env, int err, void *arg)
{
	struct sv_op *op = arg;
	struct survey *sv = op->sv;
	unsigned from = op->from;

	(void)err;
	sv->nodes[from].probes--;
	sv_probe_result(op, env);
	sv_op_free(op);
	sv_probe_next(sv, from);
	sv_done_one(sv);
}

/* Ask node `from` to probe addr (through ifname, or its route if ""), at
 * most SV_PROBES_PER_NODE at a time per node: the rest wait their turn. */
static void sv_probe(struct survey *sv, enum sv_phase phase, unsigned idx,
		     int dir, unsigned from, const char *addr,
		     const char *ifname)
{
	struct sv_op *op = sv_op_new(sv, phase, idx, dir);

	if (!op)
		return;
	op->from = from;
	snprintf(op->addr, sizeof(op->addr), "%s", addr);
	snprintf(op->ifname, sizeof(op->ifname), "%s", ifname);
	if (sv->nodes[from].probes >= SV_PROBES_PER_NODE) {
		op->queued = 1;
	} else if (sv_probe_send(sv, op) < 0) {
		sv_op_free(op);
		return;
	}
	sv->pending++;
}

/* ------------------------------------------------------------ phases */

static int sv_adjacent(const struct sv_link *l)
{
	return !l->switch_pair && !l->rejected &&
	       ((l->t.a_sees_b && l->t.b_sees_a) || l->t.verified);
}

static void sv_phase_verify(struct survey *sv)
{
	sv->phase = SV_VERIFY;
	for (unsigned i = 0; i < sv->n_links; i++) {
		struct sv_link *l = &sv->links[i];

		const struct sv_if *fa = sv_iface(sv, l->t.a, l->t.a_if);
		const struct sv_if *fb = sv_iface(sv, l->t.b, l->t.b_if);

		if (l->b_addr[0] && fa && sv_on_subnet(fa, l->b_addr))
			sv_probe(sv, SV_VERIFY, i, 0, l->t.a, l->b_addr,
				 l->t.a_if);
		if (l->a_addr[0] && fb && sv_on_subnet(fb, l->a_addr))
			sv_probe(sv, SV_VERIFY, i, 1, l->t.b, l->a_addr,
				 l->t.b_if);
	}
}

static const struct sv_if *sv_first_addr(const struct survey *sv, unsigned n)
{
	for (unsigned i = 0; i < sv->nodes[n].n_ifs; i++)
		if (sv->nodes[n].ifs[i].addr[0])
			return &sv->nodes[n].ifs[i];
	return NULL;
}

/* No beacons anywhere: is every node reachable from every other? */
static void sv_phase_switch(struct survey *sv)
{
	sv->phase = SV_SWITCH;
	sv->switch_ok = sv->switch_total = 0;
	if (sv->n_links || sv->n_nodes < 2 || sv->n_nodes > SV_SWITCH_MAX)
		return;
	for (unsigned i = 0; i < sv->n_nodes; i++)
		for (unsigned j = 0; j < sv->n_nodes; j++) {
			const struct sv_if *f = sv_first_addr(sv, j);

			if (i == j || !f)
				continue;
			sv->switch_total++;
			if (!sv_on_any_subnet(&sv->nodes[i], f->addr))
				continue; /* counts as unreachable */
			sv_probe(sv, SV_SWITCH, 0, 0, i, f->addr, "");
		}
}

static int sv_is_switch(const struct survey *sv)
{
	/* Cables only: the pairs measured through the switch become links
	 * too, and the survey still classifies after that. */
	for (unsigned i = 0; i < sv->n_links; i++)
		if (!sv->links[i].switch_pair)
			return 0;
	return sv->switch_total && sv->switch_ok == sv->switch_total &&
	       sv->switch_total == sv->n_nodes * (sv->n_nodes - 1);
}

static int sv_pair_adjacent(const struct survey *sv, unsigned x, unsigned y)
{
	for (unsigned i = 0; i < sv->n_links; i++) {
		const struct sv_link *l = &sv->links[i];

		if (sv_adjacent(l) && ((l->t.a == x && l->t.b == y) ||
				       (l->t.a == y && l->t.b == x)))
			return 1;
	}
	return 0;
}

/* A diagonal is checked at this many of the far node's addresses at most
 * (a GB10 node has four data ports). */
#define SV_DIAG_MAX_ADDRS 8

static int sv_add_diag(struct survey *sv, unsigned x, unsigned y)
{
	unsigned added = 0;

	for (unsigned k = 0; k < sv->nodes[y].n_ifs; k++) {
		const struct sv_if *f = &sv->nodes[y].ifs[k];
		struct sv_diag *d;

		if (!f->addr[0] || added++ >= SV_DIAG_MAX_ADDRS)
			continue;
		d = realloc(sv->diags, (sv->n_diags + 1) * sizeof(*d));
		if (!d)
			return -1;
		sv->diags = d;
		d = &sv->diags[sv->n_diags++];
		memset(d, 0, sizeof(*d));
		d->a = x;
		d->b = y;
		snprintf(d->b_addr, sizeof(d->b_addr), "%s", f->addr);
	}
	return 0;
}

/* Non-adjacent pairs must have no data-plane path: all of them on small
 * clusters, the pairs two hops apart on large ones, found through each
 * node's neighbours (linear on a ring). */
static void sv_phase_diag(struct survey *sv)
{
	unsigned n = sv->n_nodes;

	sv->phase = SV_DIAG;
	if (sv_is_switch(sv))
		return;
	if (n <= sv->conf->diagonal_all_max) {
		for (unsigned x = 0; x < n; x++)
			for (unsigned y = x + 1; y < n; y++)
				if (!sv_pair_adjacent(sv, x, y))
					sv_add_diag(sv, x, y);
	} else {
		for (unsigned z = 0; z < n; z++) {
			unsigned nb[8], k = 0;

			/* z's distinct neighbours (a ring node has two). */
			for (unsigned i = 0; i < sv->n_links && k < 8; i++) {
				const struct sv_link *l = &sv->links[i];
				unsigned o;
				int seen = 0;

				if (!sv_adjacent(l) ||
				    (l->t.a != z && l->t.b != z))
					continue;
				o = l->t.a == z ? l->t.b : l->t.a;
				for (unsigned j = 0; j < k; j++)
					seen |= nb[j] == o;
				if (!seen)
					nb[k++] = o;
			}
			for (unsigned i = 0; i < k; i++)
				for (unsigned j = i + 1; j < k; j++)
					if (!sv_pair_adjacent(sv, nb[i], nb[j]))
						sv_add_diag(
							sv,
							nb[i] < nb[j] ? nb[i]
								      : nb[j],
							nb[i] < nb[j] ? nb[j]
								      : nb[i]);
		}
	}
	for (unsigned i = 0; i < sv->n_diags; i++)
		sv_probe(sv, SV_DIAG, i, 0, sv->diags[i].a, sv->diags[i].b_addr,
			 "");
}

/* topo input from the current links (cables only). */
static int sv_analyse(struct survey *sv, struct topo_result *res)
{
	const char **names = calloc(sv->n_nodes + 1, sizeof(*names));
	struct topo_link *links = calloc(sv->n_links + 1, sizeof(*links));
	unsigned(*unexp)[2] = calloc(sv->n_diags + 1, sizeof(*unexp));
	struct topo_input in = {0};
	unsigned nl = 0, nu = 0;
	const struct coord_conf *conf = sv->conf;
	int rank0 = conf->rank0[0] ? sv_node_index(sv, conf->rank0) : -1;
	int rc = -1;

	if (!names || !links || !unexp)
		goto out;
	for (unsigned i = 0; i < sv->n_nodes; i++)
		names[i] = sv->nodes[i].name;
	for (unsigned i = 0; i < sv->n_links; i++)
		if (!sv->links[i].switch_pair)
			links[nl++] = sv->links[i].t;
	for (unsigned i = 0; i < sv->n_diags; i++) {
		const struct sv_diag *d = &sv->diags[i];
		int seen = 0;

		if (!d->path)
			continue;
		for (unsigned k = 0; k < nu; k++)
			seen |= unexp[k][0] == d->a && unexp[k][1] == d->b;
		if (!seen) {
			unexp[nu][0] = d->a;
			unexp[nu][1] = d->b;
			nu++;
		}
	}
	in.n_nodes = sv->n_nodes;
	in.names = names;
	in.links = links;
	in.n_links = nl;
	in.all_to_all_reachable = sv_is_switch(sv);
	in.unexpected_paths = (const unsigned(*)[2])unexp;
	in.n_unexpected_paths = nu;
	rc = topo_analyse(&in, rank0,
			  conf->rank_higher ? TOPO_DIR_HIGHER : TOPO_DIR_LOWER,
			  res);
out:
	free(names);
	free(links);
	free(unexp);
	return rc;
}

static int sv_find_link(const struct survey *sv, unsigned x, unsigned y)
{
	for (unsigned i = 0; i < sv->n_links; i++) {
		const struct sv_link *l = &sv->links[i];

		if (sv_adjacent(l) && ((l->t.a == x && l->t.b == y) ||
				       (l->t.a == y && l->t.b == x)))
			return (int)i;
	}
	return -1;
}

/* Measurement order: the ring's cycle when there is one (so the rounds
 * alternate), every pair by the circle method through a switch. */
static int sv_plan_measure(struct survey *sv)
{
	struct topo_result res = {0};
	unsigned(*pairs)[2] = NULL;
	unsigned n = sv->n_nodes;
	int rc = -1;

	/* All pairs only through a switch, which is capped at SV_SWITCH_MAX. */
	size_t cap = sv->n_links + (sv_is_switch(sv) ? (size_t)n * n : 0) + 1;

	sv->meas = calloc(cap, sizeof(*sv->meas));
	sv->round_of = calloc(cap, sizeof(*sv->round_of));
	pairs = calloc(cap, sizeof(*pairs));
	if (!sv->meas || !sv->round_of || !pairs)
		goto out;
	if (sv_is_switch(sv)) {
		int r = sched_circle(n, pairs, sv->round_of, n * n);

		if (r < 0)
			goto out;
		sv->n_rounds = r;
		for (unsigned i = 0; i < n * (n - 1) / 2; i++) {
			const struct sv_if *fa = sv_first_addr(sv, pairs[i][0]);
			const struct sv_if *fb = sv_first_addr(sv, pairs[i][1]);
			struct sv_link *l;

			if (!fa || !fb)
				continue;
			l = sv_add_link(sv, pairs[i][0], fa->name, pairs[i][1],
					fb->name);
			if (!l)
				goto out;
			l->switch_pair = 1;
			l->t.verified = 1;
			sv->round_of[sv->n_meas] = sv->round_of[i];
			sv->meas[sv->n_meas++] = (unsigned)(l - sv->links);
		}
		rc = 0;
		goto out;
	}
	if (sv_analyse(sv, &res) == 0 && res.cls == TOPO_RING) {
		for (unsigned i = 0; i < res.n_order; i++) {
			int li = sv_find_link(sv, res.order[i],
					      res.order[(i + 1) % res.n_order]);

			if (li >= 0)
				sv->meas[sv->n_meas++] = (unsigned)li;
		}
	}
	/* Then every other adjacent link (parallel cables, lines, ...). */
	for (unsigned i = 0; i < sv->n_links; i++) {
		int seen = 0;

		for (unsigned k = 0; k < sv->n_meas; k++)
			seen |= sv->meas[k] == i;
		if (!seen && sv_adjacent(&sv->links[i]) &&
		    sv->links[i].a_addr[0] && sv->links[i].b_addr[0])
			sv->meas[sv->n_meas++] = i;
	}
	for (unsigned k = 0; k < sv->n_meas; k++) {
		pairs[k][0] = sv->links[sv->meas[k]].t.a;
		pairs[k][1] = sv->links[sv->meas[k]].t.b;
	}
	sv->n_rounds = sv->n_meas ? sched_rounds((const unsigned(*)[2])pairs,
						 sv->n_meas, n, sv->round_of)
				  : 0;
	rc = sv->n_rounds < 0 ? -1 : 0;
out:
	topo_result_free(&res);
	free(pairs);
	return rc;
}

static void sv_edge_step(struct sv_link *l, struct survey *sv);

static unsigned sv_ladder_len(const struct survey *sv)
{
	const struct coord_conf *conf = sv->conf;

	return conf->n_ladder < SV_MAX_LADDER ? conf->n_ladder : SV_MAX_LADDER;
}

static void sv_plan_add(struct sv_link *l, unsigned step)
{
	if (l->n_plan < SV_MAX_PLAN)
		l->plan[l->n_plan++] = (unsigned char)step;
}

static void sv_plan_tcp(const struct survey *sv, struct sv_link *l)
{
	for (unsigned s = 0; s < 2 * sv_ladder_len(sv); s++)
		sv_plan_add(l, s);
	sv_plan_add(l, SV_ST_TCP_LAT);
}

static void sv_plan_rdma(struct sv_link *l)
{
	sv_plan_add(l, SV_ST_RDMA_WRITE_AB);
	sv_plan_add(l, SV_ST_RDMA_WRITE_BA);
	sv_plan_add(l, SV_ST_RDMA_READ_AB);
	sv_plan_add(l, SV_ST_RDMA_READ_BA);
	sv_plan_add(l, SV_ST_RDMA_LAT);
}

/* Can this edge run RDMA tests? 0, or -1 with why; *hw tells whether
 * either end has RDMA hardware on the facing port at all. */
static int sv_link_rdma_ready(const struct survey *sv, const struct sv_link *l,
			      char *why, size_t why_len, int *hw)
{
	const struct sv_if *f[2] = {sv_iface(sv, l->t.a, l->t.a_if),
				    sv_iface(sv, l->t.b, l->t.b_if)};
	const unsigned n[2] = {l->t.a, l->t.b};

	*hw = (f[0] && f[0]->rdma_hw) || (f[1] && f[1]->rdma_hw);
	for (int k = 0; k < 2; k++)
		if (!f[k] || !f[k]->rdma_dev[0]) {
			snprintf(why, why_len,
				 "%s:%s has no active RDMA port (%.100s)",
				 sv->nodes[n[k]].name,
				 k ? l->t.b_if : l->t.a_if,
				 f[k] ? f[k]->rdma_why : "unknown interface");
			return -1;
		}
	for (int k = 0; k < 2; k++)
		if (!sv->nodes[n[k]].rdma_cap) {
			snprintf(why, why_len,
				 "%s: its agent does not offer RDMA tests "
				 "(no '%s' capability)",
				 sv->nodes[n[k]].name, RDMATEST_CAP);
			return -1;
		}
	return 0;
}

/* What this edge will run, by survey_method (switch pairs: TCP only). */
static void sv_edge_plan(struct survey *sv, struct sv_link *l)
{
	int method = sv->conf->survey_method, hw = 0;
	char why[256];
	int can = !l->switch_pair &&
		  sv_link_rdma_ready(sv, l, why, sizeof(why), &hw) == 0;

	l->n_plan = 0;
	l->step = 0;
	l->ladder_rdma = 0;
	if (l->switch_pair || method == COORD_SURVEY_TCP) {
		sv_plan_tcp(sv, l);
		return;
	}
	if (!can && (method != COORD_SURVEY_AUTO || hw))
		snprintf(l->rdma_error, sizeof(l->rdma_error), "%.250s", why);
	switch (method) {
	case COORD_SURVEY_RDMA:
		if (!can) {
			/* An RDMA edge with no figures, and why. */
			l->ladder_rdma = 1;
			snprintf(l->error, sizeof(l->error),
				 "not measured (survey_method rdma): %.200s",
				 why);
			break;
		}
		/* fall through */
	case COORD_SURVEY_AUTO:
		if (can) {
			l->ladder_rdma = 1;
			sv_plan_rdma(l);
		} else {
			sv_plan_tcp(sv, l);
		}
		break;
	default: /* both */
		sv_plan_tcp(sv, l);
		if (can)
			sv_plan_rdma(l);
		break;
	}
}

static int sv_step_is_rdma(unsigned step)
{
	return step > SV_ST_TCP_LAT;
}

/* An RDMA step failed: the others would fail alike, drop them. In auto
 * mode, when the ladder was to come from RDMA, measure over TCP instead. */
static void sv_rdma_failed(struct survey *sv, struct sv_link *l)
{
	unsigned k = l->step + 1;

	for (unsigned i = l->step + 1; i < l->n_plan; i++)
		if (!sv_step_is_rdma(l->plan[i]))
			l->plan[k++] = l->plan[i];
	l->n_plan = k;
	if (sv->conf->survey_method == COORD_SURVEY_AUTO && l->ladder_rdma &&
	    l->gbps[0][0] < 0 && l->gbps[1][0] < 0) {
		l->ladder_rdma = 0;
		sv_plan_tcp(sv, l);
		log_info("survey: %s-%s: RDMA failed (%s); measuring over TCP",
			 sv->nodes[l->t.a].name, sv->nodes[l->t.b].name,
			 l->rdma_error);
	}
}

static void sv_edge_rdma_done(struct survey *sv, struct sv_link *l,
			      unsigned step, const Ring__TestReport *rep)
{
	const Ring__TestResult *ra = rep->a_side; /* the requester's */
	double g = ra ? ra->gbps_sent : -1;

	if (*rep->error) {
		if (!l->rdma_error[0])
			snprintf(l->rdma_error, sizeof(l->rdma_error), "%s",
				 rep->error);
		if (sv->conf->survey_method == COORD_SURVEY_RDMA &&
		    !l->error[0])
			snprintf(l->error, sizeof(l->error), "%s", rep->error);
		sv_rdma_failed(sv, l);
		return;
	}
	switch (step) {
	case SV_ST_RDMA_WRITE_AB:
	case SV_ST_RDMA_WRITE_BA: {
		int d = step == SV_ST_RDMA_WRITE_BA;

		l->rdma_write[d] = g;
		if (l->ladder_rdma)
			l->gbps[d][0] = g;
		if (!d && ra && ra->endpoint) {
			snprintf(l->a_gid, sizeof(l->a_gid), "%s",
				 ra->endpoint->gid);
			l->a_gid_index = (int)ra->endpoint->gid_index;
		}
		if (!d && rep->b_side && rep->b_side->endpoint) {
			snprintf(l->b_gid, sizeof(l->b_gid), "%s",
				 rep->b_side->endpoint->gid);
			l->b_gid_index = (int)rep->b_side->endpoint->gid_index;
		}
		break;
	}
	case SV_ST_RDMA_READ_AB:
	case SV_ST_RDMA_READ_BA:
		l->rdma_read[step == SV_ST_RDMA_READ_BA] = g;
		break;
	default:
		l->n_rdma_lat = 0;
		for (size_t i = 0; ra && i < ra->n_lat && i < 16; i++)
			l->rdma_lat[l->n_rdma_lat++] = *ra->lat[i];
		break;
	}
}

static void sv_edge_test_done(const Ring__TestReport *rep, void *arg)
{
	struct sv_link *l = arg;
	struct survey *sv = l->sv;
	unsigned step = l->plan[l->step];

	l->test = NULL;
	/* Measured wall time of each test, to compare with the survey's. */
	sv->tests_sum_s += sv_elapsed(&l->test_t0);
	if (sv_step_is_rdma(step)) {
		sv_edge_rdma_done(sv, l, step, rep);
	} else if (step < SV_ST_TCP_LAT) {
		double g =
			(step % 2 == 0) ? rep->gbps_a_to_b : rep->gbps_b_to_a;

		if (*rep->error && !l->error[0])
			snprintf(l->error, sizeof(l->error), "%s", rep->error);
		if (!*rep->error)
			l->gbps[step % 2][step / 2] = g;
	} else {
		if (*rep->error && !l->error[0])
			snprintf(l->error, sizeof(l->error), "%s", rep->error);
		if (rep->a_side && !*rep->error) {
			l->n_lat = 0;
			for (size_t i = 0; i < rep->a_side->n_lat && i < 16;
			     i++)
				l->lat[l->n_lat++] = *rep->a_side->lat[i];
		}
	}
	l->measured_ms = rep->finished_ms;
	l->step++;
	sv_edge_step(l, sv);
}

/* The end of this edge that is no longer up, or NULL. A test needs both:
 * with A gone, B would wait out its accept timeout on every later step. */
static const char *sv_end_gone(struct survey *sv, const struct sv_link *l)
{
	for (int k = 0; k < 2; k++) {
		const char *name = sv->nodes[k ? l->t.b : l->t.a].name;
		struct node *n = nodes_find(sv->table, name);

		if (!n || n->state != NODE_UP)
			return name;
	}
	return NULL;
}

/* Start one RDMA step of an edge; its requester is A or, swapped, B. */
static struct survey_test *sv_edge_rdma(struct survey *sv, struct sv_link *l,
					unsigned step)
{
	const struct coord_conf *conf = sv->conf;
	Ring__TestParams p = RING__TEST_PARAMS__INIT;
	Ring__RdmaParams r = RING__RDMA_PARAMS__INIT;
	const struct sv_if *fa = sv_iface(sv, l->t.a, l->t.a_if);
	const struct sv_if *fb = sv_iface(sv, l->t.b, l->t.b_if);
	int swap = step == SV_ST_RDMA_WRITE_BA || step == SV_ST_RDMA_READ_BA;
	uint32_t sizes[16];
	struct rdmatest_spec sp = {
		.a = sv->nodes[swap ? l->t.b : l->t.a].name,
		.a_if = swap ? l->t.b_if : l->t.a_if,
		.a_dev = fa && fb ? (swap ? fb : fa)->rdma_dev : "",
		.b = sv->nodes[swap ? l->t.a : l->t.b].name,
		.b_if = swap ? l->t.a_if : l->t.b_if,
		.b_dev = fa && fb ? (swap ? fa : fb)->rdma_dev : "",
		.adjacent = 1,
		.params = &p,
	};

	p.rdma = &r;
	if (step == SV_ST_RDMA_LAT) {
		p.kind = RING__TEST_KIND__TEST_RDMA_LAT;
		memcpy(sizes, conf->lat_sizes,
		       conf->n_lat_sizes * sizeof(uint32_t));
		p.n_sizes = conf->n_lat_sizes;
		p.sizes = sizes;
		p.iterations = conf->lat_iterations;
		p.lat_warmup = conf->lat_iterations / 10 + 1;
	} else {
		p.kind = RING__TEST_KIND__TEST_RDMA_BW;
		p.duration_ms = (uint32_t)conf->survey_duration_ms;
		p.warmup_ms = (uint32_t)conf->survey_warmup_ms;
		r.op = step == SV_ST_RDMA_READ_AB || step == SV_ST_RDMA_READ_BA
			       ? RING__RDMA_OP__RDMA_OP_READ
			       : RING__RDMA_OP__RDMA_OP_WRITE;
		r.qps = conf->survey_rdma_qps;
		r.size = conf->survey_rdma_size;
	}
	return sv_rdma_start(sv, &sp, sv_edge_test_done, l, 0);
}

/* Run the next test of this edge's plan, or finish the edge. */
static void sv_edge_step(struct sv_link *l, struct survey *sv)
{
	const char *gone;
	const struct coord_conf *conf = sv->conf;
	Ring__TestParams p = RING__TEST_PARAMS__INIT;
	uint32_t sizes[16];
	unsigned step;

	if (l->step >= l->n_plan) {
		sv_done_one(sv);
		return;
	}
	step = l->plan[l->step];
	if (step < SV_ST_TCP_LAT) {
		p.kind = RING__TEST_KIND__TEST_TCP_BW;
		p.streams = conf->ladder[step / 2];
		p.direction = step % 2 ? RING__DIRECTION__DIR_B_TO_A
				       : RING__DIRECTION__DIR_A_TO_B;
		p.duration_ms = (uint32_t)conf->survey_duration_ms;
		p.warmup_ms = (uint32_t)conf->survey_warmup_ms;
	} else if (step == SV_ST_TCP_LAT) {
		p.kind = RING__TEST_KIND__TEST_TCP_LAT;
		memcpy(sizes, conf->lat_sizes,
		       conf->n_lat_sizes * sizeof(uint32_t));
		p.n_sizes = conf->n_lat_sizes;
		p.sizes = sizes;
		p.iterations = conf->lat_iterations;
		p.lat_warmup = conf->lat_iterations / 10 + 1;
	}
	l->sv = sv;
	clock_gettime(CLOCK_MONOTONIC, &l->test_t0);
	gone = sv_end_gone(sv, l);
	if (gone)
		l->test = NULL;
	else if (sv_step_is_rdma(step))
		l->test = sv_edge_rdma(sv, l, step);
	else
		l->test = sv_test_start(sv, sv->nodes[l->t.a].name, l->t.a_if,
					sv->nodes[l->t.b].name, l->b_addr, &p,
					sv_edge_test_done, l, 0);
	if (!l->test) {
		char *err = sv_step_is_rdma(step) ? l->rdma_error : l->error;
		size_t len = sv_step_is_rdma(step) ? sizeof(l->rdma_error)
						   : sizeof(l->error);

		if (!err[0])
			snprintf(err, len,
				 "cannot start test: %s is not connected",
				 gone ? gone : sv->nodes[l->t.b].name);
		if (sv_step_is_rdma(step))
			sv_rdma_failed(sv, l);
		l->step++;
		/* Not from inside our caller's loop: finish via the next step
		 * (each failure advances, so this ends). */
		sv_edge_step(l, sv);
	}
}

/* ------------------------------------------------------------ results */

struct sv_arena {
	void **p;
	size_t n, cap;
};

static void *ar_alloc(struct sv_arena *a, size_t size)
{
	void *m;

	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		void **np = realloc(a->p, cap * sizeof(*np));

		if (!np)
			return NULL;
		a->p = np;
		a->cap = cap;
	}
	m = calloc(1, size ? size : 1);
	if (m)
		a->p[a->n++] = m;
	return m;
}

static char *ar_printf(struct sv_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static char *ar_printf(struct sv_arena *a, const char *fmt, ...)
{
	char buf[512];
	char *s;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s = ar_alloc(a, strlen(buf) + 1);
	if (s)
		memcpy(s, buf, strlen(buf) + 1);
	return s ? s : (char *)"";
}

static void ar_free(struct sv_arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
}

static Ring__Finding *sv_finding(struct sv_arena *ar, const char *code,
				 const char *level, const char *text)
{
	Ring__Finding *f = ar_alloc(ar, sizeof(*f));

	if (!f)
		return NULL;
	ring__finding__init(f);
	f->code = ar_printf(ar, "%s", code);
	f->level = ar_printf(ar, "%s", level);
	f->text = ar_printf(ar, "%s", text);
	return f;
}

/* A latency ladder as message pointers in the arena (NULL on failure). */
static Ring__LatResult **sv_lat_copy(struct sv_arena *ar,
				     const Ring__LatResult *lat, unsigned n,
				     size_t *n_out)
{
	Ring__LatResult **v = ar_alloc(ar, (n + 1) * sizeof(*v));

	*n_out = 0;
	for (unsigned i = 0; v && i < n; i++) {
		Ring__LatResult *r = ar_alloc(ar, sizeof(*r));

		if (!r)
			return NULL;
		*r = lat[i];
		r->base.unknown_fields = NULL;
		r->base.n_unknown_fields = 0;
		v[(*n_out)++] = r;
	}
	return v;
}

static Ring__Edge *sv_edge_msg(struct survey *sv, struct sv_arena *ar,
			       const struct sv_link *l)
{
	const struct coord_conf *conf = sv->conf;
	unsigned nl =
		conf->n_ladder < SV_MAX_LADDER ? conf->n_ladder : SV_MAX_LADDER;
	Ring__Edge *e = ar_alloc(ar, sizeof(*e));

	if (!e)
		return NULL;
	ring__edge__init(e);
	e->a = ar_printf(ar, "%s", sv->nodes[l->t.a].name);
	e->a_interface = ar_printf(ar, "%s", l->t.a_if);
	e->a_rdma = ar_printf(ar, "%s", l->a_rdma);
	e->a_address = ar_printf(ar, "%s", l->a_addr);
	e->b = ar_printf(ar, "%s", sv->nodes[l->t.b].name);
	e->b_interface = ar_printf(ar, "%s", l->t.b_if);
	e->b_rdma = ar_printf(ar, "%s", l->b_rdma);
	e->b_address = ar_printf(ar, "%s", l->b_addr);
	e->a_sees_b = l->t.a_sees_b;
	e->b_sees_a = l->t.b_sees_a;
	e->verified = l->t.verified;
	/* RDMA's ladder is one step: the survey's queue pair count. */
	if (l->ladder_rdma)
		nl = 1;
	e->ladder = ar_alloc(ar, nl * sizeof(uint32_t));
	e->gbps_a_to_b = ar_alloc(ar, nl * sizeof(double));
	e->gbps_b_to_a = ar_alloc(ar, nl * sizeof(double));
	if (!e->ladder || !e->gbps_a_to_b || !e->gbps_b_to_a)
		return NULL;
	e->n_ladder = e->n_gbps_a_to_b = e->n_gbps_b_to_a = nl;
	for (unsigned s = 0; s < nl; s++) {
		e->ladder[s] = l->ladder_rdma ? conf->survey_rdma_qps
					      : conf->ladder[s];
		e->gbps_a_to_b[s] = l->gbps[0][s];
		e->gbps_b_to_a[s] = l->gbps[1][s];
	}
	e->nominal_gbps = l->nominal_gbps;
	e->latency = sv_lat_copy(ar, l->lat, l->n_lat, &e->n_latency);
	if (!e->latency)
		return NULL;
	e->measured_ms = l->measured_ms;
	e->error = ar_printf(ar, "%s", l->error);
	e->method = ar_printf(ar, "%s",
			      l->switch_pair   ? "tcp (switch)"
			      : l->ladder_rdma ? "rdma"
					       : "tcp");
	e->rdma_write_gbps_a_to_b = l->rdma_write[0];
	e->rdma_write_gbps_b_to_a = l->rdma_write[1];
	e->rdma_read_gbps_a_to_b = l->rdma_read[0];
	e->rdma_read_gbps_b_to_a = l->rdma_read[1];
	e->rdma_write_lat = sv_lat_copy(ar, l->rdma_lat, l->n_rdma_lat,
					&e->n_rdma_write_lat);
	if (!e->rdma_write_lat)
		return NULL;
	e->rdma_error = ar_printf(ar, "%s", l->rdma_error);
	e->a_gid = ar_printf(ar, "%s", l->a_gid);
	e->b_gid = ar_printf(ar, "%s", l->b_gid);
	e->a_gid_index = l->a_gid_index;
	e->b_gid_index = l->b_gid_index;
	return e;
}

static const char *sv_link_if(const struct sv_link *l, unsigned node,
			      const char **rdma)
{
	if (l->t.a == node) {
		*rdma = l->a_rdma;
		return l->t.a_if;
	}
	*rdma = l->b_rdma;
	return l->t.b_if;
}

/* The GID index node's end of the link used in the RDMA tests, or -1. */
static int sv_link_gid_index(const struct sv_link *l, unsigned node)
{
	return l->t.a == node ? l->a_gid_index : l->b_gid_index;
}

static int sv_ranks(struct survey *sv, struct sv_arena *ar,
		    const struct topo_result *res, Ring__Topology *top)
{
	unsigned n = res->n_order;
	int ring = res->cls == TOPO_RING;

	if (res->cls != TOPO_RING && res->cls != TOPO_LINE &&
	    res->cls != TOPO_PAIR)
		return 0;
	top->ranks = ar_alloc(ar, (n + 1) * sizeof(*top->ranks));
	if (!top->ranks)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		Ring__Rank *r = ar_alloc(ar, sizeof(*r));
		unsigned me = res->order[i];
		int has_next = ring || res->cls == TOPO_PAIR || i + 1 < n;
		int has_prev = ring || res->cls == TOPO_PAIR || i > 0;
		const char *rdma = "";

		if (!r)
			return -1;
		ring__rank__init(r);
		r->rank = i;
		r->node = sv->nodes[me].name;
		r->mgmt_address = sv->nodes[me].mgmt_addr;
		r->mgmt_interface = sv->nodes[me].mgmt_if;
		r->next_node = r->next_interface = r->next_rdma = "";
		r->prev_node = r->prev_interface = r->prev_rdma = "";
		r->next_gid_index = r->prev_gid_index = -1;
		if (has_next) {
			unsigned o = res->order[(i + 1) % n];
			int li = sv_find_link(sv, me, o);

			r->next_node = sv->nodes[o].name;
			if (li >= 0) {
				r->next_interface = (char *)sv_link_if(
					&sv->links[li], me, &rdma);
				r->next_rdma = (char *)rdma;
				r->next_gid_index =
					sv_link_gid_index(&sv->links[li], me);
			}
		}
		if (has_prev) {
			unsigned o = res->order[(i + n - 1) % n];
			int li = sv_find_link(sv, me, o);

			r->prev_node = sv->nodes[o].name;
			if (li >= 0) {
				r->prev_interface = (char *)sv_link_if(
					&sv->links[li], me, &rdma);
				r->prev_rdma = (char *)rdma;
				r->prev_gid_index =
					sv_link_gid_index(&sv->links[li], me);
			}
		}
		top->ranks[top->n_ranks++] = r;
	}
	return 0;
}

/* The findings' input for one method's edges (TCP ladders or RDMA WRITE
 * figures): the rules compare edges, so never one method with the other. */
static unsigned sv_findings_edges(struct survey *sv, struct sv_arena *ar,
				  int rdma, struct findings_edge *fe)
{
	const struct coord_conf *conf = sv->conf;
	unsigned nl = sv_ladder_len(sv), nf = 0;
	const char *what =
		rdma ? ar_printf(ar, "%u RDMA QP%s", conf->survey_rdma_qps,
				 conf->survey_rdma_qps == 1 ? "" : "s")
		     : NULL;

	for (unsigned i = 0; i < sv->n_links; i++) {
		const struct sv_link *l = &sv->links[i];
		struct findings_edge *e = &fe[nf];

		if ((!sv_adjacent(l) && !l->switch_pair) ||
		    !l->ladder_rdma != !rdma)
			continue;
		e->name = ar_printf(ar, "%s-%s", sv->nodes[l->t.a].name,
				    sv->nodes[l->t.b].name);
		e->dir_name[0] = ar_printf(ar, "%s->%s", sv->nodes[l->t.a].name,
					   sv->nodes[l->t.b].name);
		e->dir_name[1] = ar_printf(ar, "%s->%s", sv->nodes[l->t.b].name,
					   sv->nodes[l->t.a].name);
		e->top_what = what;
		for (int d = 0; d < 2; d++)
			for (unsigned s = 0; s < FINDINGS_LADDER; s++)
				e->gbps[d][s] = -1;
		if (rdma) {
			/* All QPs at once: the figure the link carries, in
			 * the rules' top slot; no 1-stream figure to compare
			 * (saturation is a TCP finding). */
			e->gbps[0][FINDINGS_LADDER - 1] = l->gbps[0][0];
			e->gbps[1][FINDINGS_LADDER - 1] = l->gbps[1][0];
		}
		/* The findings rules read the 1/4/8 ladder: map by count. */
		for (unsigned s = 0; !rdma && s < nl; s++) {
			int k = conf->ladder[s] == 1   ? 0
				: conf->ladder[s] == 4 ? 1
				: conf->ladder[s] == 8 ? 2
						       : -1;

			if (k < 0)
				continue;
			e->gbps[0][k] = l->gbps[0][s];
			e->gbps[1][k] = l->gbps[1][s];
		}
		e->nominal_gbps = l->nominal_gbps;
		nf++;
	}
	return nf;
}

/* The neighbour a port's claims were resolved to, "" if none. */
static void sv_believed(const struct survey *sv, unsigned node,
			const char *port, char *out, size_t len)
{
	out[0] = '\0';
	for (unsigned i = 0; i < sv->n_links; i++) {
		const struct sv_link *l = &sv->links[i];

		if (!sv_adjacent(l))
			continue;
		if (l->t.a == node && !strcmp(l->t.a_if, port))
			snprintf(out, len, "%s %s", sv->nodes[l->t.b].name,
				 l->t.b_if);
		else if (l->t.b == node && !strcmp(l->t.b_if, port))
			snprintf(out, len, "%s %s", sv->nodes[l->t.a].name,
				 l->t.a_if);
		if (out[0])
			return;
	}
}

/* A port that heard several neighbours, or refused claims because its
 * table was full: only one neighbour can be cabled there. */
static void sv_findings_claims(struct survey *sv, struct sv_arena *ar,
			       Ring__Topology *top, unsigned node, unsigned cap)
{
	struct node *n = nodes_find(sv->table, sv->nodes[node].name);
	const Ring__NeighbourTable *t = n ? n->neighbours : NULL;

	for (size_t j = 0; t && j < t->n_neighbours && top->n_findings < cap;
	     j++) {
		const char *port = t->neighbours[j]->local_interface;
		char text[600], who[200] = "", believed[96], more[48] = "";
		uint64_t refused = 0;
		unsigned claims = 0;
		int first = 1;

		for (size_t k = 0; k < j && first; k++)
			first = strcmp(t->neighbours[k]->local_interface, port);
		if (!first)
			continue;
		for (size_t k = j; k < t->n_neighbours; k++) {
			const Ring__Neighbour *nb = t->neighbours[k];
			size_t w = strlen(who);

			if (strcmp(nb->local_interface, port))
				continue;
			if (claims++ < 4)
				snprintf(who + w, sizeof(who) - w, "%s%s %s",
					 w ? ", " : "", nb->remote_node,
					 nb->remote_interface);
		}
		for (size_t k = 0; k < t->n_ports; k++)
			if (!strcmp(t->ports[k]->local_interface, port))
				refused = t->ports[k]->claims_refused;
		if (claims < 2 && !refused)
			continue;
		sv_believed(sv, node, port, believed, sizeof(believed));
		if (refused)
			snprintf(more, sizeof(more), "; %llu more refused",
				 (unsigned long long)refused);
		snprintf(text, sizeof(text),
			 "%s %s hears conflicting LLDP claims (%s%s%s): %s%s; "
			 "the others are forged or come from a device on that "
			 "cable",
			 sv->nodes[node].name, port, who,
			 claims > 4 ? ", ..." : "", more,
			 believed[0] ? "believed " : "none could be confirmed",
			 believed[0] ? believed : "");
		top->findings[top->n_findings++] =
			sv_finding(ar, "lldp_conflict", "warn", text);
	}
}

static int sv_findings(struct survey *sv, struct sv_arena *ar,
		       Ring__Topology *top)
{
	struct findings_edge *fe = calloc(sv->n_links + 1, sizeof(*fe));
	struct finding fo[32];
	unsigned nf, nfo, cap = 64 + sv->n_links * 3 + sv->n_nodes * 4;
	int rc = -1;

	top->findings = ar_alloc(ar, cap * sizeof(*top->findings));
	if (!fe || !top->findings)
		goto out;
	for (int rdma = 0; rdma < 2; rdma++) {
		memset(fe, 0, (sv->n_links + 1) * sizeof(*fe));
		nf = sv_findings_edges(sv, ar, rdma, fe);
		nfo = nf ? findings_compute(fe, nf, fo,
					    sizeof(fo) / sizeof(fo[0]))
			 : 0;
		for (unsigned i = 0; i < nfo && top->n_findings < cap; i++)
			top->findings[top->n_findings++] = sv_finding(
				ar, fo[i].code, fo[i].level, fo[i].text);
	}
	for (unsigned i = 0; i < sv->n_links && top->n_findings < cap; i++) {
		const struct sv_link *l = &sv->links[i];
		char text[400];

		if (l->switch_pair)
			continue;
		if ((l->t.a_sees_b || l->t.b_sees_a) &&
		    (l->probe_ab == 0 || l->probe_ba == 0)) {
			snprintf(text, sizeof(text),
				 "%s %s and %s %s hear each other's beacons "
				 "but the data-plane probe failed %s: check "
				 "addresses and subnets on this cable",
				 sv->nodes[l->t.a].name, l->t.a_if,
				 sv->nodes[l->t.b].name, l->t.b_if,
				 l->probe_ab == 0 && l->probe_ba == 0
					 ? "both ways"
					 : "one way");
			top->findings[top->n_findings++] =
				sv_finding(ar, "probe_failed", "warn", text);
		}
		if (l->error[0] && top->n_findings < cap) {
			snprintf(text, sizeof(text), "edge %s-%s: %s",
				 sv->nodes[l->t.a].name, sv->nodes[l->t.b].name,
				 l->error);
			top->findings[top->n_findings++] =
				sv_finding(ar, "test_failed", "warn", text);
		}
		/* RDMA's own trouble, unless it is the edge's error already. */
		if (l->rdma_error[0] && !strstr(l->error, l->rdma_error) &&
		    top->n_findings < cap) {
			snprintf(text, sizeof(text), "edge %s-%s: RDMA: %s",
				 sv->nodes[l->t.a].name, sv->nodes[l->t.b].name,
				 l->rdma_error);
			top->findings[top->n_findings++] =
				sv_finding(ar, "rdma_failed", "warn", text);
		}
	}
	for (unsigned i = 0; i < sv->n_nodes && top->n_findings < cap; i++) {
		struct node *n = nodes_find(sv->table, sv->nodes[i].name);
		char text[400];

		if (sv->nodes[i].beacons)
			continue;
		snprintf(text, sizeof(text),
			 "%s sends no beacons (%s): its cables were found "
			 "from shared point-to-point subnets and probes",
			 sv->nodes[i].name,
			 n && n->neighbours && *n->neighbours->beacons_error
				 ? n->neighbours->beacons_error
				 : "no neighbour table");
		top->findings[top->n_findings++] =
			sv_finding(ar, "beacons_off", "info", text);
	}
	for (unsigned i = 0; i < sv->n_nodes && top->n_findings < cap; i++)
		sv_findings_claims(sv, ar, top, i, cap);
	/* Ports with carrier and no address, from the current inventories. */
	for (unsigned i = 0; i < sv->n_nodes && top->n_findings < cap; i++) {
		struct node *n = nodes_find(sv->table, sv->nodes[i].name);
		const Ring__Inventory *inv = n ? n->inventory : NULL;

		for (size_t j = 0;
		     inv && j < inv->n_interfaces && top->n_findings < cap;
		     j++) {
			const Ring__NetInterface *f = inv->interfaces[j];
			char text[400];

			if (f->management || !f->up_no_address)
				continue;
			snprintf(
				text, sizeof(text),
				"%s %s has carrier but no address%s%s%s: if it "
				"is the other PCIe half of a cabled port, "
				"address and use it too, or that port stays "
				"near half its rate",
				sv->nodes[i].name, f->name,
				*f->pci_address ? " (PCI " : "", f->pci_address,
				*f->pci_address ? ")" : "");
			top->findings[top->n_findings++] = sv_finding(
				ar, "unaddressed_port", "info", text);
		}
	}
	rc = 0;
out:
	free(fe);
	return rc;
}

static void sv_store(struct survey *sv, const Ring__Topology *top)
{
	size_t n = ring__topology__get_packed_size(top);
	uint8_t *buf = malloc(n ? n : 1);
	Ring__Topology *copy = NULL;

	if (buf) {
		ring__topology__pack(top, buf);
		copy = ring__topology__unpack(NULL, n, buf);
		free(buf);
	}
	if (!copy) {
		log_warnx("survey: out of memory storing the result");
		return;
	}
	if (sv->topology)
		ring__topology__free_unpacked(sv->topology, NULL);
	sv->topology = copy;
}

static void sv_arm(struct survey *sv, uint64_t ms)
{
	struct timeval tv = {.tv_sec = (time_t)(ms / 1000),
			     .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	evtimer_add(sv->auto_ev, &tv);
}

static void sv_finish(struct survey *sv)
{
	Ring__Topology top = RING__TOPOLOGY__INIT;
	struct topo_result res = {0};
	struct sv_arena ar = {0};
	int ok = sv_analyse(sv, &res) == 0;

	top.kind = (char *)(ok ? topo_class_name(res.cls) : "unknown");
	top.order = ar_alloc(&ar, (res.n_order + 1) * sizeof(char *));
	top.edges = ar_alloc(&ar, (sv->n_links + 1) * sizeof(*top.edges));
	top.diagonals =
		ar_alloc(&ar, (sv->n_diags + 1) * sizeof(*top.diagonals));
	top.anomalies =
		ar_alloc(&ar, (res.n_anomalies + 1) * sizeof(*top.anomalies));
	if (!top.order || !top.edges || !top.diagonals || !top.anomalies)
		ok = 0;
	for (unsigned i = 0; ok && i < res.n_order; i++)
		top.order[top.n_order++] = sv->nodes[res.order[i]].name;
	for (unsigned i = 0; ok && i < sv->n_links; i++) {
		Ring__Edge *e = sv_edge_msg(sv, &ar, &sv->links[i]);

		if (e)
			top.edges[top.n_edges++] = e;
	}
	for (unsigned i = 0; ok && i < sv->n_diags; i++) {
		const struct sv_diag *d = &sv->diags[i];
		Ring__DiagonalCheck *c = ar_alloc(&ar, sizeof(*c));

		if (!c)
			break;
		ring__diagonal_check__init(c);
		c->a = sv->nodes[d->a].name;
		c->b = sv->nodes[d->b].name;
		c->b_address = (char *)d->b_addr;
		c->route_kind = (char *)d->route_kind;
		c->route_interface = (char *)d->route_if;
		c->path = d->path;
		c->verdict =
			d->path ? ar_printf(&ar,
					    "UNEXPECTED: %s reaches %s's %s "
					    "(route %s%s%s): a data path "
					    "where the ring has none",
					    c->a, c->b, d->b_addr,
					    d->route_kind,
					    d->route_if[0] ? " via " : "",
					    d->route_if)
				: ar_printf(&ar,
					    "no data-plane path, as "
					    "expected (route %s%s%s, %s)",
					    d->route_kind,
					    d->route_if[0] ? " via " : "",
					    d->route_if,
					    d->not_probed
						    ? "not a data port: not "
						      "probed"
						    : "probe unanswered");
		top.diagonals[top.n_diagonals++] = c;
	}
	for (unsigned i = 0; ok && i < res.n_anomalies; i++)
		top.anomalies[top.n_anomalies++] = sv_finding(
			&ar, topo_anomaly_name(res.anomalies[i].kind), "warn",
			res.anomalies[i].text);
	if (ok && res.cls == TOPO_LINE)
		top.line_gap =
			ar_printf(&ar, "%s-%s", sv->nodes[res.gap_a].name,
				  sv->nodes[res.gap_b].name);
	if (ok)
		ok = sv_ranks(sv, &ar, &res, &top) == 0 &&
		     sv_findings(sv, &ar, &top) == 0;
	top.surveyed_ms = clock_now_ms();
	top.survey_state = "done";
	top.survey_wall_s = sv_elapsed(&sv->t0);
	top.tests_sum_s = sv->tests_sum_s;
	top.rounds = sv->n_rounds > 0 ? (uint32_t)sv->n_rounds : 0;
	if (ok)
		sv_store(sv, &top);
	log_info("survey done (%s): %s of %u nodes, %u edges measured in %d "
		 "rounds, %.1f s (tests alone: %.1f s)",
		 sv->reason, top.kind, sv->n_nodes, sv->n_meas, sv->n_rounds,
		 top.survey_wall_s, sv->tests_sum_s);
	topo_result_free(&res);
	ar_free(&ar);
	sv_reset(sv);
	if (sv->dirty) {
		sv->dirty = 0;
		survey_nodes_changed(sv);
	} else if (sv->conf->survey_interval_ms) {
		sv_arm(sv, sv->conf->survey_interval_ms);
	}
}

/* ------------------------------------------------------------ driving */

static void sv_start_round_or_finish(struct survey *sv)
{
	unsigned started = 0;

	for (; sv->round < sv->n_rounds; sv->round++) {
		for (unsigned k = 0; k < sv->n_meas; k++)
			started += sv->round_of[k] == (unsigned)sv->round;
		if (started)
			break;
	}
	if (!started) {
		sv_finish(sv);
		return;
	}
	log_info("survey: round %d of %d: %u edge(s)", sv->round + 1,
		 sv->n_rounds, started);
	/* One extra count while starting: edges that fail at once must not
	 * end the round before every edge of it has started. */
	sv->pending = started + 1;
	for (unsigned k = 0; k < sv->n_meas; k++)
		if (sv->round_of[k] == (unsigned)sv->round) {
			struct sv_link *l = &sv->links[sv->meas[k]];

			sv_edge_plan(sv, l);
			sv_edge_step(l, sv);
		}
	sv_done_one(sv);
}

static int sv_shares_port(const struct sv_link *x, const struct sv_link *y)
{
	return (x->t.a == y->t.a && !strcmp(x->t.a_if, y->t.a_if)) ||
	       (x->t.a == y->t.b && !strcmp(x->t.a_if, y->t.b_if)) ||
	       (x->t.b == y->t.a && !strcmp(x->t.b_if, y->t.a_if)) ||
	       (x->t.b == y->t.b && !strcmp(x->t.b_if, y->t.b_if));
}

/* LLDP comes from the data plane and can be forged: where a port has
 * several claimed neighbours, believe the one that answered the
 * authenticated probe both ways (the agents on both ends ran it). */
static void sv_resolve_claims(struct survey *sv)
{
	for (unsigned i = 0; i < sv->n_links; i++) {
		struct sv_link *l = &sv->links[i];

		if (l->t.verified || l->switch_pair)
			continue;
		for (unsigned j = 0; j < sv->n_links; j++)
			if (j != i && sv->links[j].t.verified &&
			    sv_shares_port(l, &sv->links[j])) {
				l->rejected = 1;
				break;
			}
	}
}

static void sv_next(struct survey *sv)
{
	while (!sv->pending) {
		switch (sv->phase) {
		case SV_VERIFY:
			for (unsigned i = 0; i < sv->n_links; i++)
				sv->links[i].t.verified =
					sv->links[i].probe_ab == 1 &&
					sv->links[i].probe_ba == 1;
			sv_resolve_claims(sv);
			sv_phase_switch(sv);
			break;
		case SV_SWITCH:
			sv_phase_diag(sv);
			break;
		case SV_DIAG:
			sv->phase = SV_MEASURE;
			sv->round = 0;
			if (sv_plan_measure(sv) < 0) {
				log_warnx("survey: cannot plan measurements");
				sv->n_rounds = 0;
			}
			sv_start_round_or_finish(sv);
			return;
		case SV_MEASURE:
			sv->round++;
			sv_start_round_or_finish(sv);
			return;
		default:
			return;
		}
	}
}

int survey_start(struct survey *sv, const char *reason)
{
	if (sv->phase != SV_IDLE || sv->manual_tests) {
		errno = EBUSY;
		return -1;
	}
	evtimer_del(sv->auto_ev);
	if (sv_snapshot(sv) < 0 || sv->n_nodes < 2) {
		sv_reset(sv);
		errno = ENOENT;
		return -1;
	}
	snprintf(sv->reason, sizeof(sv->reason), "%s", reason);
	sv->dirty = 0;
	clock_gettime(CLOCK_MONOTONIC, &sv->t0);
	sv->tests_sum_s = 0;
	sv->n_rounds = 0;
	log_info("survey started (%s): %u nodes up", reason, sv->n_nodes);
	if (sv_links_from_beacons(sv) < 0 || sv_links_from_subnets(sv) < 0) {
		sv_reset(sv);
		errno = ENOMEM;
		return -1;
	}
	/* Hold one count so that the phases run in order even when every
	 * probe fails to start. */
	sv->pending = 1;
	sv_phase_verify(sv);
	sv_done_one(sv);
	return 0;
}

int survey_running(const struct survey *sv)
{
	return sv->phase != SV_IDLE;
}

const Ring__Topology *survey_topology(const struct survey *sv)
{
	return sv->topology;
}

const char *survey_state(const struct survey *sv)
{
	if (sv->phase != SV_IDLE)
		return "running";
	return sv->topology ? "done" : "never";
}

static void sv_auto(evutil_socket_t fd, short what, void *arg)
{
	struct survey *sv = arg;

	(void)fd;
	(void)what;
	if (survey_start(sv, "automatic") < 0 && errno == EBUSY &&
	    sv->phase == SV_IDLE)
		sv_arm(sv, 5000); /* a manual test is running: soon */
}

void survey_nodes_changed(void *arg)
{
	struct survey *sv = arg;
	const struct coord_conf *conf = sv->conf;
	struct node **v;
	unsigned n, up = 0, missing = 0;

	if (sv->phase != SV_IDLE) {
		sv->dirty = 1; /* look again once this survey is done */
		return;
	}
	v = nodes_sorted(sv->table, &n);
	if (!v)
		return;
	for (unsigned i = 0; i < n; i++) {
		int ready = v[i]->state == NODE_UP && v[i]->inventory &&
			    v[i]->neighbours;

		up += ready;
		missing += v[i]->expected && !ready;
	}
	free(v);
	if (up < 2)
		return;
	sv_arm(sv, missing ? conf->survey_grace_ms : conf->survey_settle_ms);
}

struct survey *survey_new(struct event_base *base,
			  const struct coord_conf *conf, struct nodes *table,
			  const struct call_iface *calls)
{
	struct survey *sv = calloc(1, sizeof(*sv));

	if (!sv)
		return NULL;
	sv->base = base;
	sv->conf = conf;
	sv->table = table;
	sv->calls = calls;
	sv->auto_ev = evtimer_new(base, sv_auto, sv);
	if (!sv->auto_ev) {
		free(sv);
		return NULL;
	}
	return sv;
}

void survey_free(struct survey *sv)
{
	if (!sv)
		return;
	sv_reset(sv);
	while (sv->tests)
		sv_test_free(sv->tests);
	event_free(sv->auto_ev);
	if (sv->topology)
		ring__topology__free_unpacked(sv->topology, NULL);
	free(sv);
}

int survey_test_endpoints(struct survey *sv, const char *a, const char *b,
			  char *a_if, size_t a_if_len, char *b_addr,
			  size_t b_addr_len, int *adjacent, char *why,
			  size_t why_len)
{
	const Ring__Topology *top = sv->topology;
	struct node *nb = nodes_find(sv->table, b);
	const Ring__Inventory *inv = nb ? nb->inventory : NULL;

	for (size_t i = 0; top && i < top->n_edges; i++) {
		const Ring__Edge *e = top->edges[i];

		if (!strcmp(e->a, a) && !strcmp(e->b, b) && *e->b_address) {
			*adjacent = 1;
			snprintf(a_if, a_if_len, "%s", e->a_interface);
			snprintf(b_addr, b_addr_len, "%s", e->b_address);
			return 0;
		}
		if (!strcmp(e->b, a) && !strcmp(e->a, b) && *e->a_address) {
			*adjacent = 1;
			snprintf(a_if, a_if_len, "%s", e->b_interface);
			snprintf(b_addr, b_addr_len, "%s", e->a_address);
			return 0;
		}
	}
	/* Not neighbours (or not surveyed yet): let a's kernel route to b's
	 * first data address decide; on a ring that is the diagonal case. */
	*adjacent = top ? 0 : -1;
	for (size_t i = 0; inv && i < inv->n_interfaces; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];

		if (f->management || !f->n_ipv4)
			continue;
		snprintf(a_if, a_if_len, "%s", "");
		snprintf(b_addr, b_addr_len, "%s", f->ipv4[0]->address);
		return 0;
	}
	snprintf(why, why_len, "%s has no data address to test against", b);
	return -1;
}

/* One side of an RDMA test: its device on ifname, or why not. */
static int sv_rdma_side(struct node *n, const char *ifname, const char *peer,
			int adjacent, char *dev, size_t dev_len, char *why,
			size_t why_len)
{
	char detail[160];

	if (rdmatest_active_port(n->inventory, ifname, dev, dev_len, detail,
				 sizeof(detail)) == 0)
		return 0;
	if (adjacent == 1)
		snprintf(why, why_len,
			 "%s: no active RDMA port on %s, the interface facing "
			 "%s (%s)",
			 n->name, ifname, peer, detail);
	else
		snprintf(why, why_len,
			 "%s: no data interface has an active "
			 "RDMA port",
			 n->name);
	return -1;
}

int survey_rdma_endpoints(struct survey *sv, const char *a, const char *b,
			  struct survey_rdma_ends *e, char *why, size_t why_len)
{
	const Ring__Topology *top = sv->topology;
	struct node *na = nodes_find(sv->table, a);
	struct node *nb = nodes_find(sv->table, b);

	memset(e, 0, sizeof(*e));
	if (!na || !nb) {
		snprintf(why, why_len, "unknown node");
		return -1;
	}
	e->adjacent = top ? 0 : -1;
	for (size_t i = 0; top && i < top->n_edges; i++) {
		const Ring__Edge *ed = top->edges[i];
		int fwd = !strcmp(ed->a, a) && !strcmp(ed->b, b);

		if (!fwd && !(!strcmp(ed->b, a) && !strcmp(ed->a, b)))
			continue;
		if (!strncmp(ed->method, "tcp (switch)", 12))
			break; /* a switch pair, not a cable */
		e->adjacent = 1;
		snprintf(e->a_if, sizeof(e->a_if), "%s",
			 fwd ? ed->a_interface : ed->b_interface);
		snprintf(e->b_if, sizeof(e->b_if), "%s",
			 fwd ? ed->b_interface : ed->a_interface);
		break;
	}
	if (e->adjacent == 1) {
		if (sv_rdma_side(na, e->a_if, b, 1, e->a_dev, sizeof(e->a_dev),
				 why, why_len) < 0 ||
		    sv_rdma_side(nb, e->b_if, a, 1, e->b_dev, sizeof(e->b_dev),
				 why, why_len) < 0)
			return -1;
	} else {
		/* Not neighbours: the diagonal case. The test runs and fails
		 * on its own, which is the answer the operator wants. */
		if (rdmatest_first_port(na->inventory, e->a_if, sizeof(e->a_if),
					e->a_dev, sizeof(e->a_dev)) < 0 ||
		    rdmatest_first_port(nb->inventory, e->b_if, sizeof(e->b_if),
					e->b_dev, sizeof(e->b_dev)) < 0) {
			snprintf(why, why_len,
				 "%s: no data interface has an active RDMA "
				 "port",
				 e->a_if[0] ? b : a);
			return -1;
		}
	}
	for (int k = 0; k < 2; k++) {
		struct node *n = k ? nb : na;

		if (!rdmatest_node_capable(n)) {
			snprintf(why, why_len,
				 "%s: its agent (version %s) does not offer "
				 "RDMA tests (no '%s' capability)",
				 n->name, n->agent_version, RDMATEST_CAP);
			return -1;
		}
	}
	return 0;
}
