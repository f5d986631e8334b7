/* The coordinator's ring all-reduce (coordinator/allreduce.c): the plan
 * from a 4-node ring's published edges (which end listens, which address
 * is the only peer, which sub-rings and orders are refused and how they
 * are named), and the job driven through the scripted call interface:
 * setups, endpoints, START with the next rank's endpoint, the report's
 * measured and computed figures, and a rank lost mid-job. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coordinator/allreduce_coord.h"
#include "testcall.h"

#define N 4

struct fx {
	Ring__Topology top;
	Ring__Edge e[N], *ep[N];
	Ring__Rank r[N], *rp[N];
	char names[N][16], ifs[N][2][16], addrs[N][2][24];
	struct nodes *table;
	struct tc tc;
	Ring__AllreduceReport *rep;
	unsigned reports;
};

/* n1 - n2 - n3 - n4 - n1; edge i joins n(i+1) (a) and n(i+2) (b). */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	ring__topology__init(&f->top);
	for (int i = 0; i < N; i++)
		snprintf(f->names[i], sizeof(f->names[i]), "n%d", i + 1);
	for (int i = 0; i < N; i++) {
		Ring__Edge *e = &f->e[i];

		ring__edge__init(e);
		e->a = f->names[i];
		e->b = f->names[(i + 1) % N];
		snprintf(f->ifs[i][0], 16, "a%d", i);
		snprintf(f->ifs[i][1], 16, "b%d", i);
		snprintf(f->addrs[i][0], 24, "10.0.%d.1", i);
		snprintf(f->addrs[i][1], 24, "10.0.%d.2", i);
		e->a_interface = f->ifs[i][0];
		e->b_interface = f->ifs[i][1];
		e->a_address = f->addrs[i][0];
		e->b_address = f->addrs[i][1];
		f->ep[i] = e;
		ring__rank__init(&f->r[i]);
		f->r[i].rank = (uint32_t)i;
		f->r[i].node = f->names[i];
		f->rp[i] = &f->r[i];
	}
	f->top.n_edges = N;
	f->top.edges = f->ep;
	f->top.n_ranks = N;
	f->top.ranks = f->rp;
	f->table = nodes_new();
	assert_non_null(f->table);
	for (int i = 0; i < N; i++)
		nodes_mark_up(nodes_get(f->table, f->names[i], 8), f,
			      "192.168.0.1", "test", 1);
	tc_init(&f->tc, f->table);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f->rep)
		ring__allreduce_report__free_unpacked(f->rep, NULL);
	tc_release(&f->tc);
	nodes_free(f->table);
	free(f);
	return 0;
}

static uint64_t small[] = {65536, 1u << 20};

static void req_init(Ring__AllreduceRequest *r)
{
	ring__allreduce_request__init(r);
	r->sizes = small;
	r->n_sizes = 2;
	r->iterations = 3;
}

static void test_plan_published(void **state)
{
	struct fx *f = *state;
	Ring__AllreduceRequest r;
	struct allreduce_coord_plan p;
	char why[512];
	int na;

	req_init(&r);
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		0);
	assert_int_equal(p.n, 4);
	assert_string_equal(p.source, "published");
	assert_string_equal(p.ranks[0].node, "n1");
	/* n1 -> n2 over edge 0: n1 sends from a0, n2 listens on b0's
	 * address and takes only n1's end, 10.0.0.1. */
	assert_string_equal(p.ranks[0].next_if, "a0");
	assert_string_equal(p.ranks[1].listen_if, "b0");
	assert_string_equal(p.ranks[1].listen_addr, "10.0.0.2");
	assert_string_equal(p.ranks[1].prev_addr, "10.0.0.1");
	/* The closing step n4 -> n1 over edge 3 (a n4, b n1). */
	assert_string_equal(p.ranks[3].next_if, "a3");
	assert_string_equal(p.ranks[0].listen_addr, "10.0.3.2");
	assert_string_equal(p.ranks[0].prev_addr, "10.0.3.1");
	assert_int_equal(p.iterations, 3);
	assert_int_equal(p.n_sizes, 2);
	/* No sizes: the ladder 1M..1G. */
	r.n_sizes = 0;
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		0);
	assert_int_equal(p.n_sizes, 11);
	assert_int_equal(p.sizes[10], 1u << 30);
}

static void test_plan_nodes(void **state)
{
	struct fx *f = *state;
	Ring__AllreduceRequest r;
	struct allreduce_coord_plan p;
	char *two[] = {"n1", "n4"}, *three[] = {"n2", "n3", "n4"};
	char *apart[] = {"n1", "n3"};
	char why[512];
	int na;

	req_init(&r);
	/* n4, n1: published order wraps, so n4 is rank 0; one cable, both
	 * directions. */
	r.nodes = two;
	r.n_nodes = 2;
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.ranks[0].node, "n4");
	assert_string_equal(p.ranks[1].node, "n1");
	assert_string_equal(p.ranks[0].listen_addr, "10.0.3.1");
	assert_string_equal(p.ranks[0].prev_addr, "10.0.3.2");
	assert_string_equal(p.ranks[1].listen_addr, "10.0.3.2");
	assert_string_equal(p.ranks[1].prev_addr, "10.0.3.1");
	/* Three of four: the closing step n4 -> n2 is no cable. */
	r.nodes = three;
	r.n_nodes = 3;
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		-1);
	assert_int_equal(na, 0);
	assert_non_null(strstr(why, "from n4 to n2, which no cable joins"));
	r.nodes = apart;
	r.n_nodes = 2;
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		-1);
	assert_non_null(strstr(why, "must be neighbours"));
}

static void test_plan_wrong_order(void **state)
{
	struct fx *f = *state;
	Ring__AllreduceRequest r;
	struct allreduce_coord_plan p;
	char *bad[] = {"n1", "n3", "n2", "n4"}, *unknown[] = {"n1", "n9"};
	char why[1024];
	int na;

	req_init(&r);
	r.order = bad;
	r.n_order = 4;
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		-1);
	assert_int_equal(na, 1);
	assert_int_equal(p.n, 4); /* the order, for the report */
	assert_non_null(strstr(why, "not ring neighbours"));
	assert_non_null(strstr(why, "step rank 0 -> 1 (n1 -> n3)"));
	assert_non_null(strstr(why, "step rank 2 -> 3 (n2 -> n4)"));
	/* n3 -> n2 and n4 -> n1 are cables: not named. */
	assert_null(strstr(why, "(n3 -> n2)"));
	assert_null(strstr(why, "(n4 -> n1)"));
	r.order = unknown;
	r.n_order = 2;
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		-1);
	assert_int_equal(na, 0);
	assert_non_null(strstr(why, "n9 is not in the last survey"));
	assert_int_equal(
		allreduce_coord_plan(NULL, &r, &p, &na, why, sizeof(why)), -1);
}

static void test_busbw(void **state)
{
	(void)state;
	/* nccl-tests: busbw = algbw * 2(n-1)/n */
	assert_true(allreduce_coord_busbw(10, 2) == 10);
	assert_true(allreduce_coord_busbw(10, 4) == 15);
}

/* A successful report of n ranks with one size's bus bandwidth. */
static void t_report(Ring__AllreduceReport *r, Ring__AllreduceSize *s,
		     Ring__AllreduceSize **sp, char **order, size_t n,
		     uint64_t size, double busbw)
{
	ring__allreduce_report__init(r);
	ring__allreduce_size__init(s);
	s->size = size;
	s->busbw_gbps = busbw;
	s->verified = 1;
	sp[0] = s;
	r->sizes = sp;
	r->n_sizes = 1;
	r->order = order;
	r->n_order = n;
}

static void test_compare(void **state)
{
	Ring__AllreduceReport two, four;
	Ring__AllreduceSize s2, s4, *p2[1], *p4[1];
	char *names[] = {"n1", "n2", "n3", "n4"}, out[512];

	(void)state;
	/* The reference cluster (docs/REFERENCE.md): 2 nodes and 4, ratio 1.004. */
	t_report(&two, &s2, p2, names, 2, 1u << 30, 20.0);
	t_report(&four, &s4, p4, names, 4, 1u << 30, 20.08);
	assert_int_equal(allreduce_coord_compare(&two, &four, out, sizeof(out)),
			 0);
	assert_non_null(strstr(out, "busbw at 1GiB: 2 ranks 20.000 Gbps, 4 "
				    "ranks 20.080 Gbps, ratio 1.004"));
	assert_non_null(strstr(out, "adds memory, not all-reduce bandwidth"));
	/* Either order: more ranks over fewer. */
	assert_int_equal(allreduce_coord_compare(&four, &two, out, sizeof(out)),
			 0);
	assert_non_null(strstr(out, "ratio 1.004"));
	/* Far apart: no such conclusion. */
	s4.busbw_gbps = 10;
	assert_int_equal(allreduce_coord_compare(&two, &four, out, sizeof(out)),
			 0);
	assert_null(strstr(out, "adds memory"));
	/* Not comparable: same ring size, a failed run, no common size. */
	assert_int_equal(allreduce_coord_compare(&two, &two, out, sizeof(out)),
			 -1);
	s4.verified = 0;
	assert_int_equal(allreduce_coord_compare(&two, &four, out, sizeof(out)),
			 -1);
	s4.verified = 1;
	s4.size = 1u << 20;
	assert_int_equal(allreduce_coord_compare(&two, &four, out, sizeof(out)),
			 -1);
}

static void on_report(const Ring__AllreduceReport *rep, void *arg)
{
	struct fx *f = arg;

	f->reports++;
	if (f->rep)
		ring__allreduce_report__free_unpacked(f->rep, NULL);
	f->rep = frame_copy(&rep->base);
	assert_non_null(f->rep);
}

static void reply_endpoint(struct fx *f, struct tc_call *c, const char *addr,
			   uint32_t port)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__AllreduceEndpoint ep = RING__ALLREDUCE_ENDPOINT__INIT;

	ep.address = (char *)addr;
	ep.port = port;
	env.body_case = RING__ENVELOPE__BODY_ALLREDUCE_ENDPOINT;
	env.allreduce_endpoint = &ep;
	assert_int_equal(tc_reply(&f->tc, c, &env), 1);
}

static void reply_result(struct fx *f, struct tc_call *c, double us,
			 const char *error)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__AllreduceResult r = RING__ALLREDUCE_RESULT__INIT;
	Ring__AllreduceSizeResult s[2], *sp[2];

	for (int k = 0; k < 2 && !*error; k++) {
		ring__allreduce_size_result__init(&s[k]);
		s[k].size = small[k];
		s[k].mean_us = s[k].min_us = s[k].max_us = us * (k + 1);
		s[k].verified = 1;
		sp[k] = &s[k];
	}
	r.n_sizes = *error ? 0 : 2;
	r.sizes = sp;
	r.error = (char *)error;
	r.method = "tcp";
	env.body_case = RING__ENVELOPE__BODY_ALLREDUCE_RESULT;
	env.allreduce_result = &r;
	tc_reply(&f->tc, c, &env);
}

/* A published 4-ring job up to every rank STARTed. */
static struct allreduce_coord *start_job(struct fx *f)
{
	Ring__AllreduceRequest r;
	struct allreduce_coord_plan p;
	struct allreduce_coord *j;
	char why[512];
	int na;

	req_init(&r);
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		0);
	j = allreduce_coord_start(&f->tc.ci, &p, on_report, f);
	assert_non_null(j);
	for (int i = 0; i < N; i++) {
		struct tc_call *c =
			tc_get(&f->tc, f->names[i],
			       RING__ENVELOPE__BODY_ALLREDUCE_SETUP, 1);
		const Ring__AllreduceSetup *s = c->req->allreduce_setup;

		assert_int_equal(s->rank, i);
		assert_int_equal(s->n, N);
		assert_int_equal(s->job_id.len, 16);
		assert_true(s->deadline_ms > 0);
		/* No START before every endpoint is in. */
		assert_int_equal(
			tc_count(&f->tc, NULL,
				 RING__ENVELOPE__BODY_ALLREDUCE_CONTROL),
			0);
		reply_endpoint(f, c, p.ranks[i].listen_addr, 5000 + i);
	}
	for (int i = 0; i < N; i++) {
		struct tc_call *c =
			tc_get(&f->tc, f->names[i],
			       RING__ENVELOPE__BODY_ALLREDUCE_CONTROL, 1);
		const Ring__AllreduceControl *ctl = c->req->allreduce_control;

		assert_int_equal(ctl->action,
				 RING__ALLREDUCE_ACTION__ALLREDUCE_START);
		/* The next rank's endpoint. */
		assert_string_equal(ctl->next_address,
				    p.ranks[(i + 1) % N].listen_addr);
		assert_int_equal(ctl->next_port, 5000 + (i + 1) % N);
		assert_int_equal(tc_ack(&f->tc, c), 1);
	}
	return j;
}

static void test_job_ok(void **state)
{
	struct fx *f = *state;

	start_job(f);
	for (int i = 0; i < N; i++)
		reply_result(f,
			     tc_get(&f->tc, f->names[i],
				    RING__ENVELOPE__BODY_ALLREDUCE_SETUP, 1),
			     100 + 10 * i, "");
	assert_int_equal(f->reports, 1);
	assert_string_equal(f->rep->error, "");
	assert_int_equal(f->rep->n_sizes, 2);
	/* The slowest rank's time (measured); algbw = size/time in Gbit/s,
	 * busbw = algbw * 2(n-1)/n (computed). */
	assert_true(f->rep->sizes[0]->time_us == 130);
	assert_true(f->rep->sizes[0]->min_time_us == 100);
	assert_true(fabs(f->rep->sizes[0]->algbw_gbps -
			 65536 * 8 / (130 * 1e3)) < 1e-9);
	assert_true(fabs(f->rep->sizes[0]->busbw_gbps -
			 f->rep->sizes[0]->algbw_gbps * 1.5) < 1e-9);
	assert_true(f->rep->sizes[1]->verified);
	assert_int_equal(f->rep->n_order, 4);
	assert_int_equal(tc_pending(&f->tc), 0);
}

static void test_job_rank_lost(void **state)
{
	struct fx *f = *state;

	start_job(f);
	tc_node_down(&f->tc, "n3");
	assert_int_equal(f->reports, 0);
	/* Every other rank is told to stop, once. */
	for (int i = 0; i < N; i++)
		assert_int_equal(
			tc_count(&f->tc, f->names[i],
				 RING__ENVELOPE__BODY_ALLREDUCE_CONTROL),
			i == 2 ? 1 : 2);
	for (int i = 0; i < N; i++)
		if (i != 2)
			reply_result(
				f,
				tc_get(&f->tc, f->names[i],
				       RING__ENVELOPE__BODY_ALLREDUCE_SETUP, 1),
				0, "stopped");
	assert_int_equal(f->reports, 1);
	assert_non_null(
		strstr(f->rep->error, "n3 (rank 2): agent session lost"));
	/* Every rank's own failure is a note. */
	assert_int_equal(f->rep->n_notes, 4);
	assert_int_equal(f->rep->n_sizes, 0);
}

static void test_job_bad_endpoint(void **state)
{
	struct fx *f = *state;
	Ring__AllreduceRequest r;
	struct allreduce_coord_plan p;
	char why[512];
	int na;

	req_init(&r);
	allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why));
	assert_non_null(allreduce_coord_start(&f->tc.ci, &p, on_report, f));
	/* An address that is not the one it was told to listen on. */
	reply_endpoint(
		f,
		tc_get(&f->tc, "n1", RING__ENVELOPE__BODY_ALLREDUCE_SETUP, 1),
		"10.9.9.9", 5000);
	for (int i = 0; i < N; i++)
		reply_result(f,
			     tc_get(&f->tc, f->names[i],
				    RING__ENVELOPE__BODY_ALLREDUCE_SETUP, 1),
			     0, "stopped");
	assert_int_equal(f->reports, 1);
	assert_non_null(strstr(f->rep->error, "n1: invalid all-reduce"));
}

/* Edges 0, 1 and 3 surveyed over RDMA (devices rxeIa / rxeIb, GID 1),
 * edge 2 (n3 - n4) over TCP. */
static char rdev[N][2][16];
static void rdma_edges(struct fx *f)
{
	for (int i = 0; i < N; i++) {
		if (i == 2)
			continue;
		snprintf(rdev[i][0], 16, "rxe%da", i);
		snprintf(rdev[i][1], 16, "rxe%db", i);
		f->e[i].method_kind = RING__EDGE_METHOD__EDGE_METHOD_RDMA;
		f->e[i].a_rdma = rdev[i][0];
		f->e[i].b_rdma = rdev[i][1];
		f->e[i].a_gid_index = 1;
		f->e[i].b_gid_index = 3;
	}
}

/* The published 4-ring's plan over rdma_edges(). */
static void plan_rdma(struct fx *f, struct allreduce_coord_plan *p)
{
	Ring__AllreduceRequest r;
	char why[512];
	int na;

	rdma_edges(f);
	req_init(&r);
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, p, &na, why, sizeof(why)), 0);
}

static void test_plan_rdma(void **state)
{
	struct fx *f = *state;
	Ring__AllreduceRequest r;
	struct allreduce_coord_plan p;
	char why[512], *steps[N];
	int na;

	rdma_edges(f);
	req_init(&r);
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		0);
	/* n1 -> n2 over edge 0: n1 writes from rxe0a (GID 1) into n2's
	 * rxe0b (GID 3). */
	assert_true(p.ranks[0].next_rdma && p.ranks[1].prev_rdma);
	assert_string_equal(p.ranks[0].next_dev, "rxe0a");
	assert_int_equal(p.ranks[0].next_gid, 1);
	assert_string_equal(p.ranks[1].prev_dev, "rxe0b");
	assert_int_equal(p.ranks[1].prev_gid, 3);
	/* The closing step n4 -> n1 runs over edge 3 (a n4). */
	assert_string_equal(p.ranks[3].next_dev, "rxe3a");
	assert_string_equal(p.ranks[0].prev_dev, "rxe3b");
	/* n3 -> n4: TCP on both ends. */
	assert_false(p.ranks[2].next_rdma || p.ranks[3].prev_rdma);
	assert_string_equal(allreduce_coord_method(&p, steps), "rdma+tcp");
	assert_string_equal(steps[0], "rdma");
	assert_string_equal(steps[2], "tcp");

	/* rdma asked: the TCP step is named, nothing runs. */
	r.transport = "rdma";
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		-1);
	assert_non_null(strstr(why, "step rank 2 -> 3 (n3 -> n4)"));
	assert_null(strstr(why, "rank 0 -> 1"));
	/* tcp asked: no RDMA anywhere. */
	r.transport = "tcp";
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		0);
	assert_string_equal(allreduce_coord_method(&p, steps), "tcp");
	r.transport = "infiniband";
	assert_int_equal(
		allreduce_coord_plan(&f->top, &r, &p, &na, why, sizeof(why)),
		-1);
	assert_non_null(strstr(why, "auto, tcp or rdma"));
}

static void reply_rdma_endpoint(struct fx *f, struct tc_call *c,
				const char *addr, uint32_t port, int i,
				int prev, int next)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__AllreduceEndpoint ep = RING__ALLREDUCE_ENDPOINT__INIT;
	Ring__RdmaEndpoint pe, ne;
	uint32_t pq = 100 + i, nq = 200 + i, psn = 7;
	uint8_t gid[16] = {0};

	ring__rdma_endpoint__init(&pe);
	pe.n_qpn = pe.n_psn = 1;
	pe.qpn = &pq;
	pe.psn = &psn;
	pe.gid_raw.data = gid;
	pe.gid_raw.len = 16;
	pe.mtu = 1024;
	pe.rkey = 9;
	pe.length = 1 << 20;
	ne = pe;
	ne.qpn = &nq;
	ne.rkey = 0;
	ne.length = 0;
	ep.address = (char *)addr;
	ep.port = port;
	ep.prev_rdma = prev ? &pe : NULL;
	ep.next_rdma = next ? &ne : NULL;
	env.body_case = RING__ENVELOPE__BODY_ALLREDUCE_ENDPOINT;
	env.allreduce_endpoint = &ep;
	assert_int_equal(tc_reply(&f->tc, c, &env), 1);
}

/* Each RDMA step's queue pairs meet through START: a rank gets the next
 * rank's from-previous queue pair (where it writes) and the previous
 * rank's toward-next one; a rank that leaves its RDMA endpoint out fails
 * the job. */
static void test_job_rdma(void **state)
{
	struct fx *f = *state;
	struct allreduce_coord_plan p;

	plan_rdma(f, &p);
	assert_non_null(allreduce_coord_start(&f->tc.ci, &p, on_report, f));
	for (int i = 0; i < N; i++) {
		struct tc_call *c =
			tc_get(&f->tc, f->names[i],
			       RING__ENVELOPE__BODY_ALLREDUCE_SETUP, 1);
		const Ring__AllreduceSetup *s = c->req->allreduce_setup;

		assert_int_equal(s->next_rdma, i != 2);
		assert_int_equal(s->prev_rdma, i != 3);
		assert_int_equal(s->ack_timeout, 20);
		if (i == 0) {
			assert_string_equal(s->next_device, "rxe0a");
			assert_int_equal(s->next_gid_index, 1);
			assert_string_equal(s->prev_device, "rxe3b");
		}
		reply_rdma_endpoint(f, c, p.ranks[i].listen_addr, 5000 + i, i,
				    i != 3, i != 2);
	}
	for (int i = 0; i < N; i++) {
		struct tc_call *c =
			tc_get(&f->tc, f->names[i],
			       RING__ENVELOPE__BODY_ALLREDUCE_CONTROL, 1);
		const Ring__AllreduceControl *ctl = c->req->allreduce_control;

		if (i != 2) {
			assert_non_null(ctl->next_rdma);
			assert_int_equal(ctl->next_rdma->qpn[0],
					 100 + (i + 1) % N);
		} else {
			assert_null(ctl->next_rdma);
		}
		if (i != 3) {
			assert_non_null(ctl->prev_rdma);
			assert_int_equal(ctl->prev_rdma->qpn[0],
					 200 + (i + N - 1) % N);
		} else {
			assert_null(ctl->prev_rdma);
		}
		assert_int_equal(tc_ack(&f->tc, c), 1);
	}
	for (int i = 0; i < N; i++)
		reply_result(f,
			     tc_get(&f->tc, f->names[i],
				    RING__ENVELOPE__BODY_ALLREDUCE_SETUP, 1),
			     100, "");
	assert_int_equal(f->reports, 1);
	assert_string_equal(f->rep->method, "rdma+tcp");
	assert_int_equal(f->rep->n_step_methods, N);
	assert_string_equal(f->rep->step_methods[2], "tcp");
}

static void test_job_rdma_missing(void **state)
{
	struct fx *f = *state;
	struct allreduce_coord_plan p;

	plan_rdma(f, &p);
	assert_non_null(allreduce_coord_start(&f->tc.ci, &p, on_report, f));
	/* n1 answers with TCP only where it was asked for RDMA. */
	reply_endpoint(
		f,
		tc_get(&f->tc, "n1", RING__ENVELOPE__BODY_ALLREDUCE_SETUP, 1),
		p.ranks[0].listen_addr, 5000);
	for (int i = 0; i < N; i++)
		reply_result(f,
			     tc_get(&f->tc, f->names[i],
				    RING__ENVELOPE__BODY_ALLREDUCE_SETUP, 1),
			     0, "stopped");
	assert_int_equal(f->reports, 1);
	assert_non_null(strstr(f->rep->error, "invalid all-reduce endpoint"));
	assert_int_equal(
		tc_count(&f->tc, "n2", RING__ENVELOPE__BODY_ALLREDUCE_CONTROL),
		1); /* STOP, never START */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_plan_published, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_plan_nodes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_plan_wrong_order, setup,
						teardown),
		cmocka_unit_test(test_busbw),
		cmocka_unit_test(test_compare),
		cmocka_unit_test_setup_teardown(test_job_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_rank_lost, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_plan_rdma, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_job_rdma, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_rdma_missing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_job_bad_endpoint, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
