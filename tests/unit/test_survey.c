/* The survey driven end to end with scripted agents: a real node table
 * filled with hand-built inventories and neighbour tables, a real
 * event_base, and the call double of testcall.h, through which the
 * agents scripted here answer probes and tests the way agents do, or fail
 * them on cue. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "coordinator/coord_conf.h"
#include "frame.h"
#include "coordinator/nodes.h"
#include "coordinator/survey.h"
#include "coordinator/survey_int.h"
#include "testcall.h"

/* ------------------------------------------------------------ cluster */

#define TN_MAX 8
#define TI_MAX 6

struct tif {
	char name[16], addr[32];
	unsigned prefix;
	int peer_node, peer_if;		 /* the cable's other end, -1 if none */
	int no_carrier;			 /* the cable is out */
	char port_id[32], pcie_link[16]; /* twins share port_id */
	int cross_if; /* also hears the peer's other twin, -1 if not */
};

struct tnode {
	char name[16];
	struct tif ifs[TI_MAX];
	unsigned n_ifs;
	int beacons;
};

/* ------------------------------------------------------------ the agents */

/* A failure on cue: the nth (from 1) request of kind body to node gets
 * action instead of its answer. */
enum fail_action {
	FA_ERROR = 1,  /* an Error reply with text */
	FA_TIMEOUT,    /* the callee's deadline: -ETIMEDOUT */
	FA_RESET,      /* the session ended: -ECONNRESET */
	FA_HOLD,       /* no answer until released */
	FA_RESULT_ERR, /* a TestResult whose error is text */
	FA_DOWN	       /* answer, but node text's session is gone first */
};

struct fail {
	const char *node;
	Ring__Envelope__BodyCase body;
	unsigned nth;
	enum fail_action action;
	const char *text;
	unsigned seen;
	struct tc_call *held; /* FA_HOLD: the call left waiting */
};

struct fake {
	struct tnode n[TN_MAX];
	unsigned n_nodes;
	int switched; /* every data address reachable from every node */
	int path[TN_MAX][TN_MAX];    /* extra data paths (diagonals) */
	double gbps[TN_MAX][TN_MAX]; /* 8-stream figure from -> to */
	double one_stream;	     /* the 1-stream share of it; others 0.95 */
	int b_first;		     /* B's test result before A's */
	struct fail fails[8];
	unsigned n_fails;
	struct tc tc;
	unsigned busy[TN_MAX]; /* tests each node is in */
	unsigned busy_max;
	int rdma; /* each data interface has an RDMA function "roce_<if>" */
	/* The system under test. */
	struct event_base *base;
	struct nodes *table;
	struct coord_conf conf;
	struct survey *sv;
};

static int fake_node(const struct fake *f, const char *name)
{
	for (unsigned i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->n[i].name, name))
			return (int)i;
	return -1;
}

/* Which node and interface own addr; -1 if none. */
static int fake_addr(const struct fake *f, const char *addr, int *ifx)
{
	for (unsigned i = 0; i < f->n_nodes; i++)
		for (unsigned k = 0; k < f->n[i].n_ifs; k++)
			if (!strcmp(f->n[i].ifs[k].addr, addr)) {
				*ifx = (int)k;
				return (int)i;
			}
	return -1;
}

/* Not answered yet, nor held. */
static int fake_is_new(const struct fake *f, const struct tc_call *c)
{
	if (c->state != TC_PENDING || c->got_interim)
		return 0;
	for (unsigned i = 0; i < f->n_fails; i++)
		if (f->fails[i].held == c)
			return 0;
	return 1;
}

/* A listener that sent its port and waits for the test. */
static int fake_is_listening(const struct tc_call *c)
{
	return c->state == TC_PENDING && c->got_interim;
}

/* An agent's reply: never one that agents.c would drop. */
static void fake_deliver(struct fake *f, struct tc_call *c,
			 const Ring__Envelope *env)
{
	if (!tc_reply(&f->tc, c, env))
		fail_msg("reply to call %u to %s dropped", c->seq, c->node);
}

static void fake_error(struct fake *f, struct tc_call *c, const char *text)
{
	if (!tc_error(&f->tc, c, RING__ERROR_CODE__ERROR_INTERNAL, text))
		fail_msg("Error to call %u to %s dropped", c->seq, c->node);
}

static struct fail *fake_fail_for(struct fake *f, const struct tc_call *c)
{
	for (unsigned i = 0; i < f->n_fails; i++) {
		struct fail *x = &f->fails[i];

		if (x->body == c->req->body_case && !strcmp(x->node, c->node) &&
		    ++x->seen == x->nth)
			return x;
	}
	return NULL;
}

static void fake_probe(struct fake *f, struct tc_call *c)
{
	const Ring__ProbeRequest *pr = c->req->probe_request;
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__ProbeReply rep = RING__PROBE_REPLY__INIT;
	int x = fake_node(f, c->node), ifx = -1,
	    y = fake_addr(f, pr->peer_address, &ifx);
	int ok = 0;

	if (y >= 0 && y != x) {
		if (f->switched || f->path[x][y])
			ok = 1;
		for (unsigned k = 0; k < f->n[x].n_ifs; k++) {
			const struct tif *t = &f->n[x].ifs[k];

			if ((!*pr->local_interface ||
			     !strcmp(pr->local_interface, t->name)) &&
			    t->peer_node == y && t->peer_if == ifx)
				ok = 1;
		}
	}
	rep.reachable = ok;
	rep.route_kind = ok ? "direct" : "unreachable";
	env.body_case = RING__ENVELOPE__BODY_PROBE_REPLY;
	env.probe_reply = &rep;
	fake_deliver(f, c, &env);
}

/* The listen call of the test a run call belongs to (same token). */
static struct tc_call *fake_listen_of(struct fake *f, const struct tc_call *run)
{
	const ProtobufCBinaryData *tok = &run->req->test_run_request->token;

	for (struct tc_call *c = f->tc.calls; c; c = c->next) {
		const Ring__TestListenRequest *l;

		if (c->req->body_case !=
		    RING__ENVELOPE__BODY_TEST_LISTEN_REQUEST)
			continue;
		l = c->req->test_listen_request;
		if (l->token.len == tok->len &&
		    !memcmp(l->token.data, tok->data, tok->len))
			return c;
	}
	return NULL;
}

static void fake_result(struct fake *f, struct tc_call *c,
			const Ring__TestParams *p, double sent,
			const char *error)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__TestResult r = RING__TEST_RESULT__INIT;
	Ring__LatResult lat[SV_LAT_SIZES_MAX], *latp[SV_LAT_SIZES_MAX];

	r.gbps_sent = sent;
	r.error = (char *)(error ? error : "");
	if (p->kind == RING__TEST_KIND__TEST_TCP_LAT && !error) {
		for (size_t i = 0; i < p->n_sizes && i < SV_LAT_SIZES_MAX;
		     i++) {
			ring__lat_result__init(&lat[i]);
			lat[i].size = p->sizes[i];
			lat[i].n = p->iterations;
			lat[i].p50_us = 5.0 + (double)p->sizes[i] / 1000.0;
			latp[i] = &lat[i];
		}
		r.lat = latp;
		r.n_lat = p->n_sizes;
	}
	env.body_case = RING__ENVELOPE__BODY_TEST_RESULT;
	env.test_result = &r;
	fake_deliver(f, c, &env);
}

static double fake_figure(const struct fake *f, int from, int to,
			  unsigned streams)
{
	double g = f->gbps[from][to];

	return streams <= 2 ? g * f->one_stream : streams < 8 ? g * 0.95 : g;
}

static void fake_test_end(struct fake *f, struct tc_call *run,
			  struct tc_call *lis)
{
	const Ring__TestParams *p = run->req->test_run_request->params;
	int a = fake_node(f, run->node), b = fake_node(f, lis->node);
	int ab = p->direction != RING__DIRECTION__DIR_B_TO_A;
	int ba = p->direction != RING__DIRECTION__DIR_A_TO_B;
	double ga = 0, gb = 0;

	if (p->kind == RING__TEST_KIND__TEST_TCP_BW) {
		ga = ab ? fake_figure(f, a, b, p->streams) : 0;
		gb = ba ? fake_figure(f, b, a, p->streams) : 0;
	}
	f->busy[a]--;
	f->busy[b]--;
	if (f->b_first && fake_is_listening(lis)) {
		fake_result(f, lis, p, gb, NULL);
		if (run->state == TC_PENDING)
			fake_result(f, run, p, ga, NULL);
		return;
	}
	fake_result(f, run, p, ga, NULL);
	if (fake_is_listening(lis))
		fake_result(f, lis, p, gb, NULL);
}

/* Act on one call; 0 when it was left waiting. */
static int fake_act(struct fake *f, struct tc_call *c)
{
	struct fail *x = fake_is_new(f, c) ? fake_fail_for(f, c) : NULL;

	if (x && x->action == FA_DOWN) {
		tc_node_down(&f->tc, x->text);
		x = NULL;
	}
	/* A's failure: B's accept timeout ends its side, before or after. */
	if (x && f->b_first &&
	    c->req->body_case == RING__ENVELOPE__BODY_TEST_RUN_REQUEST) {
		struct tc_call *lis = fake_listen_of(f, c);

		if (fake_is_listening(lis))
			fake_result(f, lis,
				    lis->req->test_listen_request->params, 0,
				    "no connection before the accept timeout");
	}
	if (x) {
		switch (x->action) {
		case FA_ERROR:
			fake_error(f, c, x->text);
			return 1;
		case FA_TIMEOUT:
			tc_fail(c, -ETIMEDOUT);
			return 1;
		case FA_RESET:
			tc_fail(c, -ECONNRESET);
			return 1;
		case FA_HOLD:
			x->held = c;
			return 0;
		case FA_DOWN:
			break;
		case FA_RESULT_ERR:
			if (c->req->body_case ==
			    RING__ENVELOPE__BODY_TEST_RUN_REQUEST) {
				fake_result(f, c,
					    c->req->test_run_request->params, 0,
					    x->text);
				return 1;
			}
			fake_result(f, c, c->req->test_listen_request->params,
				    0, x->text);
			return 1;
		}
	}
	switch (c->req->body_case) {
	case RING__ENVELOPE__BODY_PROBE_REQUEST:
		fake_probe(f, c);
		return 1;
	case RING__ENVELOPE__BODY_TEST_LISTEN_REQUEST: {
		Ring__Envelope env = RING__ENVELOPE__INIT;
		Ring__TestListenReply rep = RING__TEST_LISTEN_REPLY__INIT;

		if (!fake_is_new(f, c))
			return 0; /* its result comes with the run */
		rep.port = 40000 + c->seq;
		env.body_case = RING__ENVELOPE__BODY_TEST_LISTEN_REPLY;
		env.test_listen_reply = &rep;
		fake_deliver(f, c, &env);
		return 1;
	}
	case RING__ENVELOPE__BODY_TEST_RUN_REQUEST: {
		struct tc_call *lis = fake_listen_of(f, c);
		int a = fake_node(f, c->node), b;

		assert_non_null(lis);
		b = fake_node(f, lis->node);
		/* No node in two tests at once. */
		f->busy[a]++;
		f->busy[b]++;
		if (f->busy[a] > f->busy_max)
			f->busy_max = f->busy[a];
		if (f->busy[b] > f->busy_max)
			f->busy_max = f->busy[b];
		fake_test_end(f, c, lis);
		return 1;
	}
	default:
		fail_msg("unexpected request %d", c->req->body_case);
		return 0;
	}
}

/* Is a run call still to come for this listening call? */
static int fake_run_pending(struct fake *f, const struct tc_call *lis)
{
	for (struct tc_call *c = f->tc.calls; c; c = c->next)
		if (c->req->body_case ==
			    RING__ENVELOPE__BODY_TEST_RUN_REQUEST &&
		    fake_listen_of(f, c) == lis && c->state == TC_PENDING)
			return 1;
	return 0;
}

/* Answer everything that is due, in order, until nothing moves; a
 * listener nobody connects to ends with its accept timeout, as an agent's
 * does. */
static unsigned fake_pump(struct fake *f)
{
	unsigned acted = 0;
	int moved = 1;

	while (moved) {
		moved = 0;
		for (struct tc_call *c = f->tc.calls; c && !moved; c = c->next)
			if (fake_is_new(f, c) && fake_act(f, c))
				moved = 1;
		for (struct tc_call *c = f->tc.calls; c && !moved; c = c->next)
			if (fake_is_listening(c) && !fake_run_pending(f, c)) {
				fake_result(f, c,
					    c->req->test_listen_request->params,
					    0,
					    "no connection before the accept "
					    "timeout");
				moved = 1;
			}
		acted += moved;
	}
	return acted;
}

/* The call an FA_HOLD left waiting, if it still is. */
static struct tc_call *fake_held(struct fake *f)
{
	for (unsigned i = 0; i < f->n_fails; i++)
		if (f->fails[i].held && f->fails[i].held->state == TC_PENDING)
			return f->fails[i].held;
	return NULL;
}

static void fake_fail(struct fake *f, const char *node,
		      Ring__Envelope__BodyCase body, unsigned nth,
		      enum fail_action action, const char *text)
{
	assert_true(f->n_fails < 8);
	f->fails[f->n_fails++] =
		(struct fail){node, body, nth, action, text, 0, NULL};
}

/* ------------------------------------------------------------ setup */

static int tn_add(struct fake *f, const char *name)
{
	struct tnode *n = &f->n[f->n_nodes];

	assert_true(f->n_nodes < TN_MAX);
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->beacons = 1;
	return (int)f->n_nodes++;
}

static int tn_if(struct fake *f, int node, const char *ifname, const char *addr,
		 unsigned prefix)
{
	struct tnode *n = &f->n[node];
	struct tif *t = &n->ifs[n->n_ifs];

	assert_true(n->n_ifs < TI_MAX);
	snprintf(t->name, sizeof(t->name), "%s", ifname);
	snprintf(t->addr, sizeof(t->addr), "%s", addr);
	t->prefix = prefix;
	t->peer_node = t->peer_if = t->cross_if = -1;
	return (int)n->n_ifs++;
}

/* A cable between x and y on their next free ports, on 10.0.X.0/30. */
static void tn_cable(struct fake *f, int x, int y)
{
	char ax[32], ay[32], nx[16], ny[16];
	unsigned net = (unsigned)(x * 16 + y);
	int ix, iy;

	snprintf(ax, sizeof(ax), "10.0.%u.1", net);
	snprintf(ay, sizeof(ay), "10.0.%u.2", net);
	snprintf(nx, sizeof(nx), "p%u", f->n[x].n_ifs + 1);
	snprintf(ny, sizeof(ny), "p%u", f->n[y].n_ifs + 1);
	ix = tn_if(f, x, nx, ax, 30);
	iy = tn_if(f, y, ny, ay, 30);
	f->n[x].ifs[ix].peer_node = y;
	f->n[x].ifs[ix].peer_if = iy;
	f->n[y].ifs[iy].peer_node = x;
	f->n[y].ifs[iy].peer_if = ix;
	f->gbps[x][y] = f->gbps[y][x] = 100.0;
}

/* Every node's inventory and neighbour table into the node table. */
static void tn_publish(struct fake *f)
{
	for (unsigned i = 0; i < f->n_nodes; i++) {
		const struct tnode *tn = &f->n[i];
		Ring__Inventory inv = RING__INVENTORY__INIT;
		Ring__NetInterface nif[TI_MAX + 1], *nifp[TI_MAX + 1];
		Ring__Ipv4Address ip[TI_MAX + 1], *ipp[TI_MAX + 1];
		Ring__NeighbourTable nt = RING__NEIGHBOUR_TABLE__INIT;
		Ring__Neighbour nb[2 * TI_MAX], *nbp[2 * TI_MAX];
		Ring__PcieLink pl[TI_MAX], *plp[TI_MAX];
		Ring__RdmaDevice rd[TI_MAX], *rdp[TI_MAX];
		Ring__RdmaPort rp[TI_MAX], *rpp[TI_MAX];
		char rname[TI_MAX][24];
		char maddr[32];
		struct node *n = nodes_get(f->table, tn->name, 64);

		assert_non_null(n);
		snprintf(maddr, sizeof(maddr), "192.168.0.%u", i + 1);
		for (unsigned k = 0; k <= tn->n_ifs; k++) {
			ring__net_interface__init(&nif[k]);
			ring__ipv4_address__init(&ip[k]);
			ipp[k] = &ip[k];
			nif[k].ipv4 = &ipp[k];
			nif[k].n_ipv4 = 1;
			nif[k].mtu = 9000;
			nif[k].nominal_speed_mbps = 200000;
			nif[k].admin_up = 1;
			nif[k].carrier = !k || !tn->ifs[k - 1].no_carrier;
			nifp[k] = &nif[k];
		}
		nif[0].name = "mgmt0";
		nif[0].management = 1;
		ip[0].address = maddr;
		ip[0].prefix = 24;
		for (unsigned k = 0; k < tn->n_ifs; k++) {
			const struct tif *t = &tn->ifs[k];

			nif[k + 1].name = (char *)t->name;
			nif[k + 1].port_id = (char *)t->port_id;
			nif[k + 1].pcie_link = (char *)t->pcie_link;
			ip[k + 1].address = (char *)t->addr;
			ip[k + 1].prefix = t->prefix;
			if (t->peer_node < 0 || !tn->beacons)
				continue;
			if (t->cross_if >= 0) {
				ring__neighbour__init(&nb[nt.n_neighbours]);
				nb[nt.n_neighbours].local_interface =
					(char *)t->name;
				nb[nt.n_neighbours].remote_node =
					(char *)f->n[t->peer_node].name;
				nb[nt.n_neighbours].remote_interface =
					(char *)f->n[t->peer_node]
						.ifs[t->cross_if]
						.name;
				nbp[nt.n_neighbours] = &nb[nt.n_neighbours];
				nt.n_neighbours++;
			}
			ring__neighbour__init(&nb[nt.n_neighbours]);
			nb[nt.n_neighbours].local_interface = (char *)t->name;
			nb[nt.n_neighbours].remote_node =
				(char *)f->n[t->peer_node].name;
			nb[nt.n_neighbours].remote_interface =
				(char *)f->n[t->peer_node].ifs[t->peer_if].name;
			nbp[nt.n_neighbours] = &nb[nt.n_neighbours];
			nt.n_neighbours++;
		}
		inv.node = (char *)tn->name;
		inv.mgmt_interface = "mgmt0";
		inv.mgmt_address = maddr;
		inv.interfaces = nifp;
		inv.n_interfaces = tn->n_ifs + 1;
		/* Twins' PCIe links, 150 Gbps usable each. */
		for (unsigned k = 0; k < tn->n_ifs; k++) {
			size_t m = 0;

			while (m < inv.n_pcie_links &&
			       strcmp(pl[m].id, tn->ifs[k].pcie_link))
				m++;
			if (!tn->ifs[k].pcie_link[0] || m < inv.n_pcie_links)
				continue;
			ring__pcie_link__init(&pl[m]);
			pl[m].id = (char *)tn->ifs[k].pcie_link;
			pl[m].usable_gbps = 150.0;
			plp[m] = &pl[m];
			inv.n_pcie_links++;
		}
		inv.pcie_links = plp;
		for (unsigned k = 0; f->rdma && k < tn->n_ifs; k++) {
			snprintf(rname[k], sizeof(rname[k]), "roce_%s",
				 tn->ifs[k].name);
			nif[k + 1].rdma_device = rname[k];
			ring__rdma_device__init(&rd[k]);
			ring__rdma_port__init(&rp[k]);
			rp[k].port = 1;
			rp[k].state = "ACTIVE";
			rp[k].netdev = (char *)tn->ifs[k].name;
			rpp[k] = &rp[k];
			rd[k].name = rname[k];
			rd[k].ports = &rpp[k];
			rd[k].n_ports = 1;
			rdp[k] = &rd[k];
		}
		inv.rdma_devices = rdp;
		inv.n_rdma_devices = f->rdma ? tn->n_ifs : 0;
		nt.neighbours = nbp;
		nt.beacons_available = tn->beacons;
		nt.beacons_error = tn->beacons ? "" : "no CAP_NET_RAW";
		nodes_set_inventory(n, frame_copy(&inv.base));
		nodes_set_neighbours(n, frame_copy(&nt.base));
		assert_non_null(n->inventory);
		assert_non_null(n->neighbours);
		nodes_mark_up(n, f, maddr, "test", 1);
	}
}

static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->one_stream = 0.40;
	f->base = event_base_new();
	f->table = nodes_new();
	assert_non_null(f->base);
	assert_non_null(f->table);
	tc_init(&f->tc, f->table);
	coord_conf_defaults(&f->conf);
	f->conf.survey_method = COORD_SURVEY_TCP;
	f->conf.survey_interval_ms = 0;
	f->sv = survey_new(f->base, &f->conf, f->table, &f->tc.ci);
	assert_non_null(f->sv);
	return f;
}

static void fake_free(struct fake *f)
{
	survey_free(f->sv);
	/* No call outlives the survey, and the agents scripted here never
	 * answer what agents.c would drop. */
	assert_int_equal(tc_pending(&f->tc), 0);
	assert_int_equal(f->tc.dropped, 0);
	tc_release(&f->tc);
	nodes_free(f->table);
	event_base_free(f->base);
	coord_conf_free(&f->conf);
	free(f);
}

/* The reference cluster's ring n1 - n2 - n4 - n3 - n1. */
static struct fake *fake_ring4(void)
{
	struct fake *f = fake_new();
	int n1 = tn_add(f, "n1"), n2 = tn_add(f, "n2"), n3 = tn_add(f, "n3"),
	    n4 = tn_add(f, "n4");

	tn_cable(f, n1, n2);
	tn_cable(f, n2, n4);
	tn_cable(f, n4, n3);
	tn_cable(f, n3, n1);
	return f;
}

/* A GB10 cable: port p<k> of x to port p<m> of y, each port two
 * functions (twins) on PCIe links 0000:01:00 and 0002:01:00, every
 * function pair its own /30; cross: each function also hears the
 * facing port's other twin. */
static void tn_twin_cable(struct fake *f, int x, int y, int cross)
{
	int ix[2], iy[2];
	char xn[16], yn[16];
	unsigned px = f->n[x].n_ifs / 2, py = f->n[y].n_ifs / 2;

	snprintf(xn, sizeof(xn), "%s", f->n[x].name);
	snprintf(yn, sizeof(yn), "%s", f->n[y].name);
	for (int t = 0; t < 2; t++) {
		char ax[32], ay[32], nx[16], ny[16];
		unsigned net = (unsigned)(x * 16 + y);

		snprintf(ax, sizeof(ax), "10.%d.%u.1", t, net);
		snprintf(ay, sizeof(ay), "10.%d.%u.2", t, net);
		snprintf(nx, sizeof(nx), "f%u%c", px, t ? 'b' : 'a');
		snprintf(ny, sizeof(ny), "f%u%c", py, t ? 'b' : 'a');
		ix[t] = tn_if(f, x, nx, ax, 30);
		iy[t] = tn_if(f, y, ny, ay, 30);
		snprintf(f->n[x].ifs[ix[t]].port_id, 32, "%s/p%u", xn, px);
		snprintf(f->n[y].ifs[iy[t]].port_id, 32, "%s/p%u", yn, py);
		snprintf(f->n[x].ifs[ix[t]].pcie_link, 16, "000%d:01:00",
			 2 * t);
		snprintf(f->n[y].ifs[iy[t]].pcie_link, 16, "000%d:01:00",
			 2 * t);
	}
	for (int t = 0; t < 2; t++) {
		f->n[x].ifs[ix[t]].peer_node = y;
		f->n[x].ifs[ix[t]].peer_if = iy[t];
		f->n[y].ifs[iy[t]].peer_node = x;
		f->n[y].ifs[iy[t]].peer_if = ix[t];
		if (cross) {
			f->n[x].ifs[ix[t]].cross_if = iy[!t];
			f->n[y].ifs[iy[t]].cross_if = ix[!t];
		}
	}
	f->gbps[x][y] = f->gbps[y][x] = 100.0;
}

/* Start, answer everything, and the survey is done. */
static const Ring__Topology *fake_survey(struct fake *f)
{
	assert_int_equal(survey_start(f->sv, "test"), 0);
	assert_string_equal(survey_state(f->sv), "running");
	fake_pump(f);
	assert_false(survey_running(f->sv));
	assert_int_equal(tc_pending(&f->tc), 0);
	assert_true(f->busy_max <= 1);
	assert_non_null(survey_topology(f->sv));
	return survey_topology(f->sv);
}

static const Ring__Edge *topo_edge(const Ring__Topology *t, const char *a,
				   const char *b)
{
	for (size_t i = 0; i < t->n_edges; i++)
		if (!strcmp(t->edges[i]->a, a) && !strcmp(t->edges[i]->b, b))
			return t->edges[i];
	fail_msg("no edge %s-%s", a, b);
	return NULL;
}

static const Ring__Finding *topo_finding(const Ring__Topology *t,
					 const char *code)
{
	for (size_t i = 0; i < t->n_findings; i++)
		if (!strcmp(t->findings[i]->code, code))
			return t->findings[i];
	return NULL;
}

/* ------------------------------------------------------------ tests */

/* The reference cluster's ring: kind, order, edges with their figures, the two
 * diagonals, ranks, and the findings word for word. */
static void test_ring_exact(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	const Ring__Edge *e;

	(void)state;
	tn_publish(f);
	t = fake_survey(f);
	assert_string_equal(t->kind, "ring");
	assert_int_equal(t->n_order, 4);
	assert_string_equal(t->order[0], "n1");
	assert_string_equal(t->order[1], "n2");
	assert_string_equal(t->order[2], "n4");
	assert_string_equal(t->order[3], "n3");
	assert_int_equal(t->rounds, 2);
	assert_string_equal(t->line_gap, "");
	assert_int_equal(t->n_edges, 4);
	e = topo_edge(t, "n1", "n2");
	assert_string_equal(e->a_interface, "p1");
	assert_string_equal(e->b_interface, "p1");
	assert_string_equal(e->a_address, "10.0.1.1");
	assert_string_equal(e->b_address, "10.0.1.2");
	assert_true(e->verified && e->a_sees_b && e->b_sees_a);
	assert_string_equal(e->method, "tcp");
	assert_string_equal(e->error, "");
	assert_int_equal(e->n_ladder, 3);
	assert_int_equal(e->ladder[0], 1);
	assert_int_equal(e->ladder[1], 4);
	assert_int_equal(e->ladder[2], 8);
	assert_true(e->gbps_a_to_b[0] == 40.0 && e->gbps_b_to_a[0] == 40.0);
	assert_true(e->gbps_a_to_b[1] == 95.0 && e->gbps_b_to_a[1] == 95.0);
	assert_true(e->gbps_a_to_b[2] == 100.0 && e->gbps_b_to_a[2] == 100.0);
	assert_true(e->nominal_gbps == 200.0);
	assert_int_equal(e->n_latency, 5);
	assert_int_equal(e->latency[0]->size, 64);
	assert_true(e->rdma_write_gbps_a_to_b < 0);
	assert_int_equal(e->a_gid_index, -1);
	/* Diagonals: n1-n4 and n2-n3 at each of the far node's addresses. */
	assert_int_equal(t->n_diagonals, 4);
	for (size_t i = 0; i < t->n_diagonals; i++) {
		assert_false(t->diagonals[i]->path);
		assert_string_equal(t->diagonals[i]->verdict,
				    "no data-plane path, as expected (route "
				    "unreachable, probe unanswered)");
	}
	assert_string_equal(t->diagonals[0]->a, "n1");
	assert_string_equal(t->diagonals[0]->b, "n4");
	assert_int_equal(t->n_anomalies, 0);
	assert_int_equal(t->n_ranks, 4);
	assert_string_equal(t->ranks[0]->node, "n1");
	assert_string_equal(t->ranks[0]->next_node, "n2");
	assert_string_equal(t->ranks[0]->next_interface, "p1");
	assert_string_equal(t->ranks[0]->prev_node, "n3");
	assert_string_equal(t->ranks[0]->prev_interface, "p2");
	assert_string_equal(t->ranks[0]->mgmt_address, "192.168.0.1");
	assert_int_equal(t->n_findings, 2);
	assert_string_equal(t->findings[0]->code, "uniform_ceiling");
	/* Every cabled function is addressed: no "unused NIC halves". */
	assert_string_equal(
		t->findings[0]->text,
		"every edge tops out at 50% of its 200 Gbps nominal (100.0 "
		"Gbps median, spread 0%): a uniform ceiling - a link-layer or "
		"host limit, not a bad cable; check the host link (PCIe) and "
		"PFC/ECN (every cabled NIC half is addressed)");
	assert_string_equal(t->findings[1]->code, "saturation");
	assert_string_equal(t->findings[1]->text,
			    "1 stream reaches 40% of 8 streams (median over 4 "
			    "edges); use at least 4 channels: 4 streams reach "
			    "95%");
	/* Three TCP ladder steps both ways and latency per edge, two probes
	 * per cable, two diagonal pairs at one address each... */
	assert_int_equal(survey_state(f->sv)[0], 'd');
	fake_free(f);
}

/* A line (the ring without n3-n1): its gap, ends and rounds. */
static void test_line(void **state)
{
	struct fake *f = fake_new();
	int n1 = tn_add(f, "n1"), n2 = tn_add(f, "n2"), n3 = tn_add(f, "n3"),
	    n4 = tn_add(f, "n4");
	const Ring__Topology *t;

	(void)state;
	tn_cable(f, n1, n2);
	tn_cable(f, n2, n4);
	tn_cable(f, n4, n3);
	tn_publish(f);
	t = fake_survey(f);
	assert_string_equal(t->kind, "line");
	assert_string_equal(t->line_gap, "n1-n3");
	assert_int_equal(t->n_edges, 3);
	assert_int_equal(t->rounds, 2);
	assert_int_equal(t->n_ranks, 4);
	assert_string_equal(t->ranks[0]->prev_node, "");
	assert_string_equal(t->ranks[3]->next_node, "");
	fake_free(f);
}

/* Five nodes: an odd ring takes three rounds. */
static void test_ring5_rounds(void **state)
{
	struct fake *f = fake_new();
	const Ring__Topology *t;

	(void)state;
	for (int i = 0; i < 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%d", i + 1);
		tn_add(f, name);
	}
	for (int i = 0; i < 5; i++)
		tn_cable(f, i, (i + 1) % 5);
	tn_publish(f);
	t = fake_survey(f);
	assert_string_equal(t->kind, "ring");
	assert_int_equal(t->n_edges, 5);
	assert_int_equal(t->rounds, 3);
	fake_free(f);
}

/* Two nodes, two parallel cables: a pair, both cables measured. */
static void test_pair(void **state)
{
	struct fake *f = fake_new();
	int n1 = tn_add(f, "n1"), n2 = tn_add(f, "n2");
	const Ring__Topology *t;

	(void)state;
	tn_cable(f, n1, n2);
	tn_cable(f, n1, n2);
	tn_publish(f);
	t = fake_survey(f);
	assert_string_equal(t->kind, "pair");
	assert_int_equal(t->n_edges, 2);
	assert_int_equal(t->rounds, 2); /* one node pair, one cable a round */
	assert_int_equal(t->n_diagonals, 0);
	assert_int_equal(t->n_ranks, 2);
	fake_free(f);
}

/* No beacons and one shared subnet: a switch. Every pair is measured by
 * the circle method, and the edges say so. */
static void test_switch(void **state)
{
	struct fake *f = fake_new();
	const Ring__Topology *t;

	(void)state;
	f->switched = 1;
	for (int i = 0; i < 4; i++) {
		char name[16], addr[32];

		snprintf(name, sizeof(name), "n%d", i + 1);
		snprintf(addr, sizeof(addr), "10.1.0.%d", i + 1);
		tn_add(f, name);
		f->n[i].beacons = 0;
		tn_if(f, i, "p1", addr, 24);
		for (int j = 0; j < 4; j++)
			f->gbps[i][j] = 100.0;
	}
	tn_publish(f);
	t = fake_survey(f);
	assert_string_equal(t->kind, "switch");
	assert_int_equal(t->n_edges, 6);
	assert_int_equal(t->rounds, 3);
	for (size_t i = 0; i < t->n_edges; i++)
		assert_true(sv_edge_through_switch(t->edges[i]));
	assert_int_equal(t->n_ranks, 0);
	/* beacons_off for each node, after the ladder's findings. */
	assert_non_null(topo_finding(t, "beacons_off"));
	fake_free(f);
}

/* One cable n1 (A) - n2 (B): the edge's steps are the ladder 1, 4, 8
 * streams both ways, then latency; B listens, A runs. */
static struct fake *fake_pair1(void)
{
	struct fake *f = fake_new();
	int n1 = tn_add(f, "n1"), n2 = tn_add(f, "n2");

	tn_cable(f, n1, n2);
	return f;
}

struct step_case {
	const char *node;
	Ring__Envelope__BodyCase body;
	unsigned nth; /* which test of the edge (1 = 1 stream A->B) */
	enum fail_action action;
	const char *text;
	const char *error; /* the edge's error, both orders */
};

#define LIS RING__ENVELOPE__BODY_TEST_LISTEN_REQUEST
#define RUN RING__ENVELOPE__BODY_TEST_RUN_REQUEST

static const struct step_case step_cases[] = {
	{"n2", LIS, 1, FA_ERROR, "address in use", "n2: address in use"},
	{"n2", LIS, 1, FA_TIMEOUT, NULL,
	 "n2: no answer before the test deadline"},
	{"n2", LIS, 1, FA_RESET, NULL,
	 "n2: agent session lost during the test"},
	{"n2", LIS, 3, FA_RESULT_ERR, "bind failed", "n2: bind failed"},
	{"n1", RUN, 1, FA_ERROR, "connection refused",
	 "n1: connection refused"},
	{"n1", RUN, 3, FA_TIMEOUT, NULL,
	 "n1: no answer before the test deadline"},
	{"n1", RUN, 5, FA_RESET, NULL,
	 "n1: agent session lost during the test"},
	{"n1", RUN, 1, FA_RESULT_ERR, "peer closed the connection",
	 "n1: peer closed the connection"},
	/* A's session gone between B's port and A's request. */
	{"n2", LIS, 1, FA_DOWN, "n1", "n1: not connected"},
};

/* Every way one step can fail, in both orders of the two sides' results:
 * the edge keeps the first failure, the failed step has no figure, the
 * other steps are measured, the survey ends and no call is left. */
static void test_step_failures(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(step_cases) / sizeof(step_cases[0]); i++)
		for (int order = 0; order < 2; order++) {
			const struct step_case *k = &step_cases[i];
			struct fake *f = fake_pair1();
			const Ring__Topology *t;
			const Ring__Edge *e;
			const Ring__Finding *fd;
			char want[300];
			unsigned s = k->nth - 1; /* the step that fails */

			f->b_first = order;
			fake_fail(f, k->node, k->body, k->nth, k->action,
				  k->text);
			tn_publish(f);
			t = fake_survey(f);
			e = topo_edge(t, "n1", "n2");
			assert_string_equal(e->error, k->error);
			if (k->action == FA_DOWN) {
				/* Every later step fails alike. */
				for (unsigned j = 0; j < 3; j++)
					assert_true(e->gbps_a_to_b[j] < 0 &&
						    e->gbps_b_to_a[j] < 0);
				fake_free(f);
				continue;
			}
			for (unsigned j = 0; j < 6; j++) {
				double g = j % 2 ? e->gbps_b_to_a[j / 2]
						 : e->gbps_a_to_b[j / 2];

				if (j == s)
					assert_true(g < 0);
				else
					assert_true(g > 0);
			}
			assert_int_equal(e->n_latency, 5);
			fd = topo_finding(t, "test_failed");
			assert_non_null(fd);
			snprintf(want, sizeof(want), "edge n1-n2: %s",
				 k->error);
			assert_string_equal(fd->text, want);
			fake_free(f);
		}
}

/* A node that leaves mid-survey: the step in flight ends with the
 * session, the later ones are not started, and the report says why. */
static void test_node_gone(void **state)
{
	struct fake *f = fake_pair1();
	const Ring__Topology *t;
	const Ring__Edge *e;
	struct tc_call *held;
	unsigned calls;

	(void)state;
	fake_fail(f, "n1", RUN, 2, FA_HOLD, NULL);
	tn_publish(f);
	assert_int_equal(survey_start(f->sv, "test"), 0);
	fake_pump(f);
	held = fake_held(f);
	assert_non_null(held);
	assert_true(survey_running(f->sv));
	assert_string_equal(survey_state(f->sv), "running");
	/* A second survey, or a manual test, waits for this one. */
	assert_int_equal(survey_start(f->sv, "again"), -1);
	assert_int_equal(errno, EBUSY);
	calls = f->tc.n_calls;
	/* n1 down in the table, and its held call fails with the session. */
	tc_node_down(&f->tc, "n1");
	assert_int_equal(held->state, TC_DONE);
	fake_pump(f);
	assert_int_equal(f->tc.n_calls, calls); /* nothing more was asked */
	assert_false(survey_running(f->sv));
	t = survey_topology(f->sv);
	assert_non_null(t);
	e = topo_edge(t, "n1", "n2");
	assert_string_equal(e->error, "n1: agent session lost during the test");
	assert_true(e->gbps_a_to_b[0] > 0 && e->gbps_b_to_a[0] < 0);
	assert_true(e->gbps_a_to_b[2] < 0);
	assert_int_equal(e->n_latency, 0);
	fake_free(f);
}

/* survey_free with everything in flight: every call is cancelled (the
 * double checks no call is left), nothing is delivered later. */
static void test_free_in_flight(void **state)
{
	struct fake *f = fake_ring4();

	(void)state;
	fake_fail(f, "n1", RUN, 1, FA_HOLD, NULL);
	tn_publish(f);
	assert_int_equal(survey_start(f->sv, "test"), 0);
	fake_pump(f);
	assert_non_null(fake_held(f));
	assert_true(tc_pending(&f->tc) > 0);
	fake_free(f);
}

/* Probes: a failed verify leaves the cable unverified but believed from
 * both ends' beacons (a finding says so); a diagonal with a path is
 * UNEXPECTED. */
static void test_probe_findings(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	const Ring__Finding *fd;
	int seen = 0;

	(void)state;
	fake_fail(f, "n1", RING__ENVELOPE__BODY_PROBE_REQUEST, 1, FA_TIMEOUT,
		  NULL);
	f->path[0][3] = 1; /* n1 reaches n4 */
	tn_publish(f);
	t = fake_survey(f);
	fd = topo_finding(t, "probe_failed");
	assert_non_null(fd);
	assert_string_equal(fd->text,
			    "n1 p1 and n2 p1 hear each other's beacons but "
			    "the data-plane probe failed one way: check "
			    "addresses and subnets on this cable");
	/* n1 reaches n4 at both its addresses: two UNEXPECTED checks. */
	for (size_t i = 0; i < t->n_diagonals; i++) {
		const Ring__DiagonalCheck *d = t->diagonals[i];
		char want[200];

		if (!d->path)
			continue;
		seen++;
		snprintf(want, sizeof(want),
			 "UNEXPECTED: n1 reaches n4's %s (route direct): a "
			 "data path where the ring has none",
			 d->b_address);
		assert_string_equal(d->verdict, want);
	}
	assert_int_equal(seen, 2);
	assert_true(t->n_anomalies >= 1);
	fake_free(f);
}

/* Each allocation of the survey's lists fails in turn: the start fails
 * with ENOMEM (never a partial list, never "fewer than two nodes"), or a
 * survey already under way is abandoned with no result; nothing leaks
 * and no call is left. */
static void test_alloc_failures(void **state)
{
	unsigned start_fails = 0, abandoned = 0, done = 0;

	(void)state;
	for (unsigned k = 1; k < 100; k++) {
		struct fake *f = fake_ring4();
		int rc;

		tn_publish(f);
		sv_alloc_fail_at = k;
		rc = survey_start(f->sv, "test");
		if (rc < 0) {
			assert_int_equal(errno, ENOMEM);
			assert_int_equal(sv_alloc_fail_at, 0);
			assert_int_equal(f->tc.n_calls, 0);
			start_fails++;
		} else {
			fake_pump(f);
			assert_false(survey_running(f->sv));
			if (survey_topology(f->sv)) {
				done++;
			} else {
				assert_string_equal(survey_state(f->sv),
						    "never");
				abandoned++;
			}
		}
		fake_free(f);
		if (sv_alloc_fail_at) {
			/* Fewer than k allocations: every one was tried. */
			sv_alloc_fail_at = 0;
			break;
		}
	}
	/* Snapshot (1 + 4 nodes), cables (4), subnets (1); diagonals (two
	 * pairs at two addresses each). */
	assert_int_equal(start_fails, 10);
	assert_int_equal(abandoned, 4);
	assert_int_equal(done, 1);
}

/* No probe can start, so every phase runs inside survey_start: a failure
 * listing the diagonals is its ENOMEM. */
static void test_alloc_failure_at_once(void **state)
{
	struct fake *f = fake_ring4();

	(void)state;
	tn_publish(f);
	f->tc.refuse_all = 1;
	sv_alloc_fail_at = 11;
	assert_int_equal(survey_start(f->sv, "test"), -1);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(sv_alloc_fail_at, 0);
	assert_true(f->tc.refused > 0);
	assert_int_equal(f->tc.n_calls, 0);
	assert_false(survey_running(f->sv));
	assert_null(survey_topology(f->sv));
	fake_free(f);
}

/* GB10 twins, dual-addressed, beacons heard across twins too: each
 * cable is one cable of two function pairs (no parallel cables, no cross
 * pair measured), the port step sums both, the ring load runs. */
static void test_twins(void **state)
{
	struct fake *f = fake_new();
	int n1 = tn_add(f, "n1"), n2 = tn_add(f, "n2"), n3 = tn_add(f, "n3"),
	    n4 = tn_add(f, "n4");
	const Ring__Topology *t;
	const Ring__Finding *fd;
	unsigned twins = 0;

	(void)state;
	tn_twin_cable(f, n1, n2, 1);
	tn_twin_cable(f, n2, n4, 1);
	tn_twin_cable(f, n4, n3, 1);
	tn_twin_cable(f, n3, n1, 1);
	tn_publish(f);
	t = fake_survey(f);
	assert_string_equal(t->kind, "ring");
	assert_string_equal(t->order[0], "n1");
	assert_string_equal(t->order[1], "n2");
	assert_string_equal(t->order[2], "n4");
	assert_string_equal(t->order[3], "n3");
	assert_int_equal(t->n_anomalies, 0);
	/* Two function pairs per cable; the cross pairs are no edge. */
	assert_int_equal(t->n_edges, 8);
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		assert_int_equal(e->a_interface[2], e->b_interface[2]);
		assert_true(e->verified);
		/* A function alone: its PCIe link's usable rate, not the
		 * port's 200. */
		assert_true(e->nominal_gbps == 150.0);
		assert_true(e->gbps_a_to_b[2] == 100.0);
		twins += e->twin;
	}
	assert_int_equal(twins, 4);
	assert_string_equal(topo_edge(t, "n1", "n2")->cable_id, "n1/p0-n2/p0");
	assert_int_equal(t->n_cables, 4);
	for (size_t i = 0; i < t->n_cables; i++) {
		const Ring__Cable *c = t->cables[i];

		assert_int_equal(c->functions, 2);
		assert_int_equal(c->n_edges, 2);
		assert_true(c->port_gbps_a_to_b == 200.0);
		assert_true(c->port_gbps_b_to_a == 200.0);
	}
	assert_string_equal(t->cables[0]->id, "n1/p0-n2/p0");
	/* The ring load: one way, then both ways, every cable. */
	assert_int_equal(t->n_load_rounds, 2);
	assert_string_equal(t->load_rounds[0]->mode, "one way");
	assert_int_equal(t->load_rounds[0]->n_edges, 4);
	assert_int_equal(t->load_rounds[1]->n_edges, 4);
	for (size_t i = 0; i < 4; i++) {
		const Ring__LoadEdge *e = t->load_rounds[1]->edges[i];

		assert_true(e->gbps_a_to_b == 200.0 && e->gbps_b_to_a == 200.0);
	}
	fd = topo_finding(t, "port_needs_twins");
	assert_non_null(fd);
	assert_string_equal(
		fd->text,
		"every cable: a cable's functions together move more than one "
		"alone (n1/p0-n2/p0 200.00 vs 100.00, n1/p1-n3/p1 200.00 vs "
		"100.00, n2/p1-n4/p0 200.00 vs 100.00, n3/p0-n4/p1 200.00 vs "
		"100.00 Gbps, port step vs one function, measured, the worse "
		"direction): the port's rate needs every function used (all "
		"in NCCL_IB_HCA)");
	assert_null(topo_finding(t, "port_limit"));
	assert_null(topo_finding(t, "pcie_link_slow"));
	fd = topo_finding(t, "twins_cross");
	assert_non_null(fd);
	assert_string_equal(fd->text,
			    "cable n1/p0-n2/p0: n1 f0a and n2 f0b hear each "
			    "other across twins (not the intended pair of "
			    "functions): not measured");
	assert_null(topo_finding(t, "host_pcie_limit"));
	fake_free(f);
}

/* The twin ring n1-n2-n4-n3-n1 with RDMA: two function pairs a cable,
 * twin a on PCI device 0000:01:00, twin b on 0002:01:00. */
static struct fake *twin_ring4(void)
{
	struct fake *f = fake_new();
	int n1 = tn_add(f, "n1"), n2 = tn_add(f, "n2"), n3 = tn_add(f, "n3"),
	    n4 = tn_add(f, "n4");

	f->rdma = 1;
	tn_twin_cable(f, n1, n2, 0);
	tn_twin_cable(f, n2, n4, 0);
	tn_twin_cable(f, n4, n3, 0);
	tn_twin_cable(f, n3, n1, 0);
	return f;
}

/* Node x's interface ifname and its peer no longer hear each other (no
 * beacon either way): that function pair is no edge. */
static void tn_unheard(struct fake *f, int x, const char *ifname)
{
	for (unsigned k = 0; k < f->n[x].n_ifs; k++) {
		struct tif *t = &f->n[x].ifs[k];

		if (strcmp(t->name, ifname) || t->peer_node < 0)
			continue;
		f->n[t->peer_node].ifs[t->peer_if].peer_node = -1;
		t->peer_node = -1;
	}
}

/* The NCCL view of a twin ring: every function facing a neighbour, with
 * its port, next rank's first; no GID index without RDMA tests (said
 * why); the /30s tell the neighbours apart, a /16 does not. */
static void test_twins_ranks_nccl(void **state)
{
	struct fake *f = twin_ring4();
	const Ring__Topology *t;
	const Ring__Rank *r;
	static const char *const want[] = {"roce_f1a:1", "roce_f1b:1",
					   "roce_f0a:1", "roce_f0b:1"};

	(void)state;
	tn_publish(f);
	t = fake_survey(f);
	assert_string_equal(t->kind, "ring");
	r = t->ranks[1];
	assert_string_equal(r->node, "n2");
	assert_string_equal(r->next_node, "n4");
	assert_int_equal(r->n_hcas, 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(r->hcas[i], want[i]);
	assert_int_equal(r->gid_index, -1);
	assert_string_equal(r->gid_note,
			    "no RDMA test measured the GID index of "
			    "roce_f1a:1, roce_f1b:1, roce_f0a:1, roce_f0b:1");
	assert_int_equal(r->subnet_prefix_len, 30);
	assert_string_equal(r->subnet_note, "");
	/* NCCL devices: each PCI device's two functions, one facing each
	 * neighbour, which NCCL fuses by itself. */
	assert_int_equal(r->n_nic_groups, 2);
	assert_string_equal(r->nic_groups[0], "roce_f1a,roce_f0a");
	assert_string_equal(r->nic_groups[1], "roce_f1b,roce_f0b");
	assert_true(r->nic_groups_automatic);
	assert_int_equal(r->n_nic_unpaired, 0);
	/* No GID tables: NCCL's own GID choice stands. */
	assert_int_equal(r->nccl_gid_index, -1);
	for (size_t i = 0; i < t->n_ranks; i++)
		assert_int_equal(t->ranks[i]->n_hcas, 4);
	fake_free(f);

	/* One twin of n2's cable to n4 unheard: n2's functions facing
	 * n1 outnumber those facing n4; the one without a partner is left
	 * out, and the pair across PCI devices needs NCCL_NET_FORCE_MERGE. */
	f = twin_ring4();
	tn_unheard(f, 1, "f1a");
	tn_publish(f);
	t = fake_survey(f);
	r = t->ranks[1];
	assert_string_equal(r->node, "n2");
	assert_int_equal(r->n_hcas, 3);
	assert_int_equal(r->n_nic_groups, 1);
	assert_string_equal(r->nic_groups[0], "roce_f1b,roce_f0b");
	assert_int_equal(r->n_nic_unpaired, 1);
	assert_string_equal(r->nic_unpaired[0], "roce_f0a:1");
	/* NCCL_IB_HCA leaves roce_f0a out: 0002's two functions are what
	 * NCCL fuses by itself. */
	assert_true(r->nic_groups_automatic);
	fake_free(f);

	/* n2 hears n4 on twin b only and n1 on twin a only: the pair spans
	 * two PCI devices, which NCCL does not fuse by itself. */
	f = twin_ring4();
	tn_unheard(f, 1, "f1a");
	tn_unheard(f, 1, "f0b");
	tn_publish(f);
	t = fake_survey(f);
	r = t->ranks[1];
	assert_int_equal(r->n_hcas, 2);
	assert_int_equal(r->n_nic_groups, 1);
	assert_string_equal(r->nic_groups[0], "roce_f1b,roce_f0a");
	assert_int_equal(r->n_nic_unpaired, 0);
	assert_false(r->nic_groups_automatic);
	fake_free(f);

	/* Every function in one /16: no prefix length separates them. */
	f = twin_ring4();
	for (unsigned i = 0; i < f->n_nodes; i++)
		for (unsigned k = 0; k < f->n[i].n_ifs; k++)
			f->n[i].ifs[k].prefix = 16;
	tn_publish(f);
	t = fake_survey(f);
	r = t->ranks[1];
	assert_int_equal(r->subnet_prefix_len, 0);
	assert_string_equal(r->subnet_note,
			    "roce_f1a:1 (facing n4) and roce_f0a:1 (facing n1) "
			    "share a /16: no prefix length tells the "
			    "neighbours apart");
	fake_free(f);
}

/* NCCL's own GID pick, which decides whether env sets the index. */
static void test_nccl_default_gid(void **state)
{
	Ring__Gid g[4];
	Ring__Gid *gp[4] = {&g[0], &g[1], &g[2], &g[3]};
	Ring__RdmaPort p = RING__RDMA_PORT__INIT;
	static const char *const gid[4] = {
		"fe80::1", "fe80::1", "::ffff:10.0.0.1", "::ffff:10.0.0.1"};
	static const char *const type[4] = {"RoCE v1", "RoCE v2", "RoCE v1",
					    "RoCE v2"};

	(void)state;
	for (int i = 0; i < 4; i++) {
		ring__gid__init(&g[i]);
		g[i].index = (uint32_t)i;
		g[i].gid = (char *)gid[i];
		g[i].type = (char *)type[i];
	}
	p.gids = gp;
	p.n_gids = 4;
	/* mlx5's usual table: the IPv4-mapped RoCE v2 entry. */
	assert_int_equal(sv_nccl_default_gid(&p), 3);
	/* A second address listed first: NCCL takes that one. */
	g[0].gid = "::ffff:192.168.9.9";
	g[0].type = "RoCE v2";
	assert_int_equal(sv_nccl_default_gid(&p), 0);
	/* RoCE v1 only: the first IPv4-mapped entry. */
	g[0].gid = "fe80::1";
	g[3].type = "RoCE v1";
	assert_int_equal(sv_nccl_default_gid(&p), 2);
	/* No IPv4 address: none. */
	p.n_gids = 2;
	assert_int_equal(sv_nccl_default_gid(&p), -1);
}

/* survey_streams 2 16: the findings read that ladder, not 1/4/8. */
static void test_ladder_2_16(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	const Ring__Edge *e;

	(void)state;
	f->conf.ladder[0] = 2;
	f->conf.ladder[1] = 16;
	f->conf.n_ladder = 2;
	tn_publish(f);
	t = fake_survey(f);
	e = topo_edge(t, "n1", "n2");
	assert_int_equal(e->n_ladder, 2);
	assert_int_equal(e->ladder[1], 16);
	assert_true(e->gbps_a_to_b[0] == 40.0 && e->gbps_a_to_b[1] == 100.0);
	assert_int_equal(t->n_findings, 2);
	assert_string_equal(t->findings[0]->code, "uniform_ceiling");
	assert_string_equal(t->findings[1]->code, "saturation");
	assert_string_equal(t->findings[1]->text,
			    "2 streams reach 40% of 16 streams (median over 4 "
			    "edges); use at least 16 channels");
	fake_free(f);
}

/* ------------------------------------------------------------ re-checks */

/* Let the re-check timer fire (recheck_settle is 1 ms here), then answer
 * what it asks. */
/* Past the settle time: the tests set a settle long enough (100 ms) that
 * the pumps before this, on a loaded host too, never reach it. */
static void fake_settle(struct fake *f)
{
	usleep((f->conf.recheck_settle_ms + 20) * 1000);
	event_base_loop(f->base, EVLOOP_NONBLOCK);
	fake_pump(f);
}

/* Calls since seq to nodes other than those listed ("" ends the list). */
static unsigned calls_beyond(struct fake *f, unsigned seq, const char *x,
			     const char *y, const char *z)
{
	unsigned n = 0;

	for (struct tc_call *c = f->tc.calls; c; c = c->next)
		if (c->seq > seq && strcmp(c->node, x) && strcmp(c->node, y) &&
		    strcmp(c->node, z))
			n++;
	return n;
}

static void fake_cut(struct fake *f, int x, int ix, int cut)
{
	const struct tif *t = &f->n[x].ifs[ix];

	f->n[x].ifs[ix].no_carrier = cut;
	f->n[t->peer_node].ifs[t->peer_if].no_carrier = cut;
	tn_publish(f);
	survey_nodes_changed(f->sv);
}

/* A cable out and back: nothing while it is out; back, after the settle
 * time, that edge alone is probed and measured again; the rest of the
 * topology is as the survey published it. */
static void test_recheck_cable_back(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	const Ring__Edge *e;
	uint64_t m12, m24, surveyed;
	unsigned seq;

	(void)state;
	f->conf.recheck_settle_ms = 100;
	tn_publish(f);
	t = fake_survey(f);
	m12 = topo_edge(t, "n1", "n2")->measured_ms;
	m24 = topo_edge(t, "n2", "n4")->measured_ms;
	surveyed = t->surveyed_ms;
	seq = f->tc.n_calls;
	usleep(2000);	      /* a later measured_ms */
	fake_cut(f, 0, 0, 1); /* n1 p1 - n2 p1 */
	fake_settle(f);
	assert_int_equal(f->tc.n_calls, seq); /* out: nothing to measure */
	fake_cut(f, 0, 0, 0);
	assert_false(survey_running(f->sv)); /* the settle time first */
	fake_settle(f);
	assert_false(survey_running(f->sv));
	assert_true(f->tc.n_calls > seq);
	assert_int_equal(calls_beyond(f, seq, "n1", "n2", "n2"), 0);
	t = survey_topology(f->sv);
	assert_string_equal(t->kind, "ring");
	assert_int_equal(t->surveyed_ms, surveyed);
	assert_int_equal(t->n_edges, 4);
	assert_int_equal(t->n_diagonals, 4);
	e = topo_edge(t, "n1", "n2");
	assert_true(e->rechecked_ms > 0);
	assert_string_equal(e->recheck_reason, "cable back up");
	assert_true(e->measured_ms > m12);
	assert_true(e->verified);
	assert_true(e->gbps_a_to_b[2] == 100.0);
	e = topo_edge(t, "n2", "n4");
	assert_int_equal(e->measured_ms, m24);
	assert_int_equal(e->rechecked_ms, 0);
	/* The survey's own traffic is accounted to the pair. */
	assert_true(survey_self_bytes(f->sv, "n2", "n1", clock_now_ms()) > 0);
	assert_int_equal(survey_self_bytes(f->sv, "n1", "n4", clock_now_ms()),
			 0);
	/* Through the store's text: the same account after a restart. */
	{
		char text[8192];
		uint64_t now = clock_now_ms();
		size_t len =
			survey_self_bytes_text(f->sv, now, text, sizeof(text));
		struct survey *sv2 =
			survey_new(f->base, &f->conf, f->table, &f->tc.ci);

		assert_true(len > 0 && len < sizeof(text));
		assert_non_null(sv2);
		survey_self_bytes_load(sv2, text, len, now);
		survey_self_bytes_load(sv2, "junk\nn1 n2 x 5\n", 15, now);
		for (size_t i = 0; i < t->n_edges; i++)
			assert_int_equal(
				survey_self_bytes(sv2, t->edges[i]->a,
						  t->edges[i]->b, now),
				survey_self_bytes(f->sv, t->edges[i]->a,
						  t->edges[i]->b, now));
		/* An hour on, nothing is left of it. */
		assert_int_equal(
			survey_self_bytes(sv2, "n1", "n2", now + 3600000), 0);
		survey_free(sv2);
	}
	fake_free(f);
}

static void count_queued_done(enum survey_event ev, const char *what,
			      const char *reason, const char *failure,
			      void *arg)
{
	(void)what;
	(void)failure;
	if (ev == SURVEY_DONE && !strcmp(reason, "behind a survey"))
		(*(unsigned *)arg)++;
}

/* The operator's survey asked for while a re-check runs: queued, and it
 * runs (whole) right after; the same behind a survey. */
static void test_survey_queued_behind_recheck(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	uint64_t surveyed;
	unsigned queued_done = 0;

	(void)state;
	f->conf.recheck_settle_ms = 100;
	tn_publish(f);
	t = fake_survey(f);
	surveyed = t->surveyed_ms;
	usleep(2000);
	fake_cut(f, 0, 0, 1);
	fake_cut(f, 0, 0, 0);
	usleep((f->conf.recheck_settle_ms + 20) * 1000);
	event_base_loop(f->base, EVLOOP_NONBLOCK);
	assert_true(survey_running(f->sv)); /* the re-check */
	assert_int_equal(survey_start(f->sv, "direct"), -1);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(survey_request(f->sv, "queued"), 1);
	fake_pump(f);
	assert_false(survey_running(f->sv));
	t = survey_topology(f->sv);
	assert_true(t->surveyed_ms > surveyed);
	assert_int_equal(t->n_diagonals, 4); /* a whole survey */
	/* Idle: the request starts at once. */
	assert_int_equal(survey_request(f->sv, "now"), 0);
	/* Another while that one runs: queued behind it, and a fresh
	 * survey follows (what `survey --wait` waits for). */
	assert_true(survey_running(f->sv));
	survey_set_event_cb(f->sv, count_queued_done, &queued_done);
	assert_int_equal(survey_request(f->sv, "behind a survey"), 2);
	fake_pump(f);
	assert_false(survey_running(f->sv));
	assert_int_equal(queued_done, 1);
	fake_free(f);
}

/* Light checks: every edge probed and sampled (64 B, a few round trips),
 * nothing published, the figures left alone; a failure is kept with the
 * edge's light check. */
static void test_light_checks(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	uint64_t surveyed, m12, before;
	unsigned seq, light_runs = 0;
	struct survey_light_out o;

	(void)state;
	tn_publish(f);
	t = fake_survey(f);
	surveyed = t->surveyed_ms;
	m12 = topo_edge(t, "n1", "n2")->measured_ms;
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n1", "n2"), &o), -1);
	before = clock_now_ms();
	seq = f->tc.n_calls;
	fake_fail(f, "n1", RUN, 1, FA_ERROR, "connection refused");
	for (size_t i = 0; i < t->n_edges; i++)
		recheck_queue_add(f->sv->rq, t->edges[i]->a,
				  t->edges[i]->a_interface, t->edges[i]->b,
				  t->edges[i]->b_interface, "light check", 0,
				  1);
	sv_recheck_kick(f->sv);
	fake_pump(f);
	assert_false(survey_running(f->sv));
	for (struct tc_call *c = f->tc.calls; c; c = c->next) {
		const Ring__TestParams *p;

		if (c->seq <= seq || c->req->body_case != LIS)
			continue;
		p = c->req->test_listen_request->params;
		assert_int_equal(p->kind, RING__TEST_KIND__TEST_TCP_LAT);
		assert_int_equal(p->n_sizes, 1);
		assert_int_equal(p->sizes[0], 64);
		assert_int_equal(p->iterations, SV_LIGHT_ITERATIONS);
		light_runs++;
	}
	assert_int_equal(light_runs, 4); /* one sample per edge, no ladder */
	t = survey_topology(f->sv);
	assert_int_equal(t->surveyed_ms, surveyed);
	assert_int_equal(topo_edge(t, "n1", "n2")->measured_ms, m12);
	assert_int_equal(topo_edge(t, "n1", "n2")->rechecked_ms, 0);
	{
		unsigned failed = 0;

		for (size_t i = 0; i < t->n_edges; i++) {
			assert_int_equal(survey_light(f->sv, t->edges[i], &o),
					 0);
			assert_true(o.ms > 0);
			assert_true(o.started_ms >= before &&
				    o.started_ms <= o.ms);
			/* No counters: not known idle, not sampled. */
			assert_int_equal(o.sample_ms, 0);
			if (*o.error) {
				assert_string_equal(o.error,
						    "n1: connection refused");
				failed++;
			} else {
				assert_true(o.lat_us > 0);
			}
		}
		assert_int_equal(failed, 1);
	}
	fake_free(f);
}

/* Every published edge's light check, queued as the light timer does,
 * and run to the end. */
static void fake_light_all(struct fake *f)
{
	const Ring__Topology *t = survey_topology(f->sv);

	for (size_t i = 0; i < t->n_edges; i++)
		recheck_queue_add(f->sv->rq, t->edges[i]->a,
				  t->edges[i]->a_interface, t->edges[i]->b,
				  t->edges[i]->b_interface, "light check", 0,
				  1);
	sv_recheck_kick(f->sv);
	fake_pump(f);
}

/* A counters report of node x: every port idle, but ifname (if any)
 * receiving gbps. */
static void fake_counters(struct fake *f, int x, const char *ifname,
			  double gbps)
{
	Ring__CountersReport r = RING__COUNTERS_REPORT__INIT;
	Ring__PortCounters pc[TI_MAX], *pcp[TI_MAX];

	for (unsigned k = 0; k < f->n[x].n_ifs; k++) {
		ring__port_counters__init(&pc[k]);
		pc[k].interface = f->n[x].ifs[k].name;
		if (ifname && !strcmp(ifname, pc[k].interface))
			pc[k].rx_bytes_per_s = gbps * 1e9 / 8;
		pcp[k] = &pc[k];
	}
	r.interval_ms = 1000;
	r.ports = pcp;
	r.n_ports = f->n[x].n_ifs;
	/* Sampled after the survey's own tests (which make an earlier
	 * report say nothing). */
	nodes_set_counters(nodes_find(f->table, f->n[x].name),
			   frame_copy(&r.base), clock_now_ms() + 5000);
}

/* x is y, give or take rounding. */
static int near(double x, double y)
{
	return x > y - 1e-6 && x < y + 1e-6;
}

static int low_under_70(const Ring__Edge *e, double gbps, void *arg)
{
	(void)e;
	(*(unsigned *)arg)++;
	return gbps < 70.0;
}

/* A light check's bandwidth sample: on edges their counters show idle,
 * each way, for a 15 ms window after 5 ms, with the fewest streams that
 * reached the top of the ladder's figure in the survey; a low one is
 * taken again at once over 100 ms (the better counts); a busy edge is
 * not sampled, its last sample stays. */
static void test_light_sample(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	struct survey_light_out o;
	unsigned seq, bw = 0, asked = 0, confirms = 0;

	(void)state;
	tn_publish(f);
	t = fake_survey(f);
	survey_set_sample_low_cb(f->sv, low_under_70, &asked);
	for (unsigned i = 0; i < f->n_nodes; i++)
		fake_counters(f, (int)i, NULL, 0);
	/* n2 p1 (facing n1) receives 100 of its 200 Gbps: busy. */
	fake_counters(f, fake_node(f, "n2"), "p1", 100);
	/* n2 -> n4 at 40 of its 100 (baseline) Gbps. */
	f->gbps[fake_node(f, "n2")][fake_node(f, "n4")] = 40.0;
	seq = f->tc.n_calls;
	fake_light_all(f);
	assert_false(survey_running(f->sv));
	for (struct tc_call *c = f->tc.calls; c; c = c->next) {
		const Ring__TestParams *p;

		if (c->seq <= seq || c->req->body_case != LIS)
			continue;
		p = c->req->test_listen_request->params;
		if (p->kind != RING__TEST_KIND__TEST_TCP_BW)
			continue;
		/* 15 ms; the one taken again after a low one, 100 ms. */
		confirms += p->duration_ms == 100;
		assert_true(p->duration_ms == 15 || p->duration_ms == 100);
		assert_int_equal(p->warmup_ms, 5);
		/* The fewest that reached 90% of the top (8 streams' 100
		 * Gbps) in the survey: 4 (95), not 1 (40). */
		assert_int_equal(p->streams, 4);
		assert_string_not_equal(c->node, "n1"); /* n1-n2 is busy */
		bw++;
	}
	/* n2-n4 a->b twice (low, again), the rest once each way. */
	assert_int_equal(bw, 2 + 2 + 2 + 1);
	assert_int_equal(confirms, 1);
	assert_int_equal(asked, 6);
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n2", "n4"), &o), 0);
	assert_true(o.sample_ms >= o.started_ms && o.sample_ms > 0);
	/* 4 streams carry 95% of the 8 streams' figure (the fake's). */
	assert_true(near(o.sample_gbps[0], 38) && near(o.sample_gbps[1], 95));
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n1", "n3"), &o), 0);
	assert_true(near(o.sample_gbps[0], 95) && near(o.sample_gbps[1], 95));
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n1", "n2"), &o), 0);
	assert_string_equal(o.error, "");
	assert_int_equal(o.sample_ms, 0); /* busy: never sampled */
	/* Restored, and n1-n2 idle: every edge sampled at its rate. */
	f->gbps[fake_node(f, "n2")][fake_node(f, "n4")] = 100.0;
	fake_counters(f, fake_node(f, "n2"), NULL, 0);
	fake_light_all(f);
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n2", "n4"), &o), 0);
	assert_true(near(o.sample_gbps[0], 95) && near(o.sample_gbps[1], 95));
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n1", "n2"), &o), 0);
	assert_true(o.sample_ms > 0 && near(o.sample_gbps[0], 95));
	/* A failed light check takes no sample; the last one stays. */
	{
		const char *peer[2] = {"n2", "n3"};
		uint64_t was[2];
		unsigned failed = 0;

		for (int k = 0; k < 2; k++) {
			survey_light(f->sv, topo_edge(t, "n1", peer[k]), &o);
			was[k] = o.sample_ms;
		}
		fake_fail(f, "n1", RUN, 1, FA_ERROR, "connection refused");
		usleep(2000);
		fake_light_all(f);
		for (int k = 0; k < 2; k++) {
			assert_int_equal(
				survey_light(f->sv, topo_edge(t, "n1", peer[k]),
					     &o),
				0);
			failed += *o.error != '\0';
			if (*o.error)
				assert_int_equal(o.sample_ms, was[k]);
			else
				assert_true(o.sample_ms > was[k]);
		}
		assert_int_equal(failed, 1);
	}
	/* A cable one stream fills (as a 1 Gbit/s one): one stream. */
	f->one_stream = 0.95;
	usleep(2000);
	t = fake_survey(f);
	for (unsigned i = 0; i < f->n_nodes; i++)
		fake_counters(f, (int)i, NULL, 0);
	seq = f->tc.n_calls;
	bw = 0;
	fake_light_all(f);
	for (struct tc_call *c = f->tc.calls; c; c = c->next)
		if (c->seq > seq && c->req->body_case == LIS &&
		    c->req->test_listen_request->params->kind ==
			    RING__TEST_KIND__TEST_TCP_BW) {
			assert_int_equal(
				c->req->test_listen_request->params->streams,
				1);
			bw++;
		}
	assert_int_equal(bw, 8);
	fake_free(f);
}

/* A light check that overlapped a cut and a mend of its cable, or an
 * agent that connected again, says nothing of the edge: it is discarded
 * (the outcome before it stays) and, the edge up, run again after the
 * settle time; the edges nothing happened to keep their outcome. */
static void test_light_overlap(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	struct survey_light_out o, o24, o34;
	struct node *n2;
	uint64_t restarted;
	int again = 0;
	struct recheck_item *rq;
	unsigned n_rq;

	(void)state;
	f->conf.recheck_settle_ms = 100;
	tn_publish(f);
	t = fake_survey(f);
	/* The cable n1-n2 cut and mended while the check runs. */
	fake_fail(f, "n1", RUN, 1, FA_HOLD, NULL);
	fake_light_all(f);
	assert_non_null(fake_held(f));
	assert_true(survey_running(f->sv));
	usleep(2000);
	fake_cut(f, 0, 0, 1); /* n1 p1 - n2 p1 */
	fake_cut(f, 0, 0, 0);
	f->fails[0].held = NULL; /* released: answered as usual */
	fake_pump(f);
	assert_false(survey_running(f->sv));
	/* The mend's re-check may have run within the pump already (settle
	 * 1 ms), publishing a new topology: no pointer into the old one. */
	t = survey_topology(f->sv);
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n1", "n2"), &o), -1);
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n3", "n4"), &o34),
			 0);
	assert_string_equal(o34.error, "");
	/* The mend brings its re-check (more than a light check). */
	fake_settle(f);
	assert_string_equal(
		topo_edge(survey_topology(f->sv), "n1", "n2")->recheck_reason,
		"cable back up");
	t = survey_topology(f->sv);
	/* n2's agent connects again while the next check runs. */
	fake_light_all(f);
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n2", "n4"), &o24),
			 0);
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n3", "n4"), &o34),
			 0);
	fake_fail(f, "n1", RUN, 1, FA_HOLD, NULL);
	usleep(2000);
	fake_light_all(f);
	assert_non_null(fake_held(f));
	n2 = nodes_find(f->table, "n2");
	nodes_mark_down(n2, "restarted", clock_now_ms());
	restarted = clock_now_ms();
	nodes_mark_up(n2, f, "10.88.0.12", "test", restarted);
	f->fails[1].held = NULL;
	fake_pump(f);
	assert_false(survey_running(f->sv));
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n2", "n4"), &o), 0);
	assert_int_equal(o.ms, o24.ms); /* the one before it stays */
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n3", "n4"), &o), 0);
	assert_true(o.ms > o34.ms);
	rq = recheck_queue_items(f->sv->rq, &n_rq);
	for (unsigned i = 0; i < n_rq; i++)
		again += rq[i].light && !strcmp(rq[i].why, "light check again");
	assert_int_equal(again, 2); /* n1-n2 and n2-n4 */
	/* Run again once quiet: judged this time. */
	fake_settle(f);
	assert_false(survey_running(f->sv));
	assert_int_equal(survey_light(f->sv, topo_edge(t, "n2", "n4"), &o), 0);
	assert_true(o.started_ms > restarted);
	assert_string_equal(o.error, "");
	fake_free(f);
}

/* A node that comes back: its edges are re-checked, not the ring (no
 * probe or test involves the node that has no edge with it). */
static void test_recheck_node_back(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	unsigned seq;

	(void)state;
	f->conf.recheck_settle_ms = 100;
	f->conf.survey_settle_ms = 1;
	tn_publish(f);
	fake_survey(f);
	seq = f->tc.n_calls;
	tc_node_down(&f->tc, "n4");
	survey_nodes_changed(f->sv);
	fake_settle(f);
	assert_int_equal(f->tc.n_calls, seq);
	tn_publish(f);
	survey_nodes_changed(f->sv);
	fake_settle(f);
	assert_false(survey_running(f->sv));
	assert_true(f->tc.n_calls > seq);
	assert_int_equal(calls_beyond(f, seq, "n2", "n4", "n3"), 0);
	t = survey_topology(f->sv);
	assert_string_equal(topo_edge(t, "n2", "n4")->recheck_reason,
			    "n4 came back");
	assert_string_equal(topo_edge(t, "n3", "n4")->recheck_reason,
			    "n4 came back");
	assert_int_equal(topo_edge(t, "n1", "n2")->rechecked_ms, 0);
	fake_free(f);
}

/* Traffic above busy_threshold on a port: the survey does not load that
 * edge; its last figures stay, it says why, and it is tried again. */
static void test_busy_edge_postponed(void **state)
{
	struct recheck_item *rq;
	unsigned n_rq;
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	const Ring__Edge *e;
	Ring__CountersReport r = RING__COUNTERS_REPORT__INIT;
	Ring__PortCounters pc = RING__PORT_COUNTERS__INIT, *pcp = &pc;
	uint64_t m12;

	(void)state;
	tn_publish(f);
	t = fake_survey(f);
	m12 = topo_edge(t, "n1", "n2")->measured_ms;
	/* n2 p1 (facing n1) receives 100 Gbps: half of its 200. */
	pc.interface = "p1";
	pc.rx_bytes_per_s = 100e9 / 8;
	r.interval_ms = 10000;
	r.ports = &pcp;
	r.n_ports = 1;
	/* Sampled after the survey's own tests there. */
	nodes_set_counters(nodes_find(f->table, "n2"), frame_copy(&r.base),
			   clock_now_ms() + 5000);
	t = fake_survey(f);
	e = topo_edge(t, "n1", "n2");
	assert_string_equal(e->busy,
			    "n2 p1: 100.00 Gbps of traffic (50% of 200 Gbps, "
			    "above busy_threshold 10%)");
	assert_int_equal(e->measured_ms, m12);
	assert_true(e->gbps_a_to_b[2] == 100.0);
	assert_string_equal(topo_edge(t, "n2", "n4")->busy, "");
	rq = recheck_queue_items(f->sv->rq, &n_rq);
	assert_int_equal(n_rq, 1);
	assert_string_equal(rq[0].why, "busy at its last turn");
	/* busy_threshold 0: never postponed. (A millisecond later: the
	 * scripted surveys can run within one.) */
	f->conf.busy_threshold = 0;
	usleep(2000);
	t = fake_survey(f);
	assert_string_equal(topo_edge(t, "n1", "n2")->busy, "");
	assert_true(topo_edge(t, "n1", "n2")->measured_ms > m12);
	fake_free(f);
}

/* The ring's nodes n1..n4 are expected (expect in coordinator.conf). */
static void fake_expect_ring4(struct fake *f)
{
	static const char *const names[] = {"n1", "n2", "n3", "n4"};

	for (unsigned i = 0; i < 4; i++) {
		struct node *n = nodes_find(f->table, names[i]);

		assert_non_null(n);
		n->expected = 1;
	}
}

static const Ring__StrayNode *topo_stray(const Ring__Topology *t,
					 const char *node)
{
	for (size_t i = 0; i < t->n_strays; i++)
		if (!strcmp(t->strays[i]->node, node))
			return t->strays[i];
	fail_msg("no stray %s", node);
	return NULL;
}

/* Nothing published speaks of node x but its stray entry (and an LLDP
 * conflict it claims, which these have none of). */
static void assert_only_listed_apart(const Ring__Topology *t, const char *x)
{
	for (size_t i = 0; i < t->n_order; i++)
		assert_string_not_equal(t->order[i], x);
	for (size_t i = 0; i < t->n_edges; i++) {
		assert_string_not_equal(t->edges[i]->a, x);
		assert_string_not_equal(t->edges[i]->b, x);
	}
	for (size_t i = 0; i < t->n_diagonals; i++) {
		assert_string_not_equal(t->diagonals[i]->a, x);
		assert_string_not_equal(t->diagonals[i]->b, x);
	}
	for (size_t i = 0; i < t->n_findings; i++)
		assert_null(strstr(t->findings[i]->text, x));
}

/* The attack: an unexpected node with a valid certificate and no cable
 * joins the ring of four expected nodes. The survey publishes the ring
 * in its order and lists the stray apart; it is neither probed nor
 * measured. */
static void test_stray_no_cable(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	const Ring__StrayNode *s;

	(void)state;
	tn_add(f, "evil");
	f->n[4].beacons = 0; /* not even beacons: no finding either */
	tn_publish(f);
	fake_expect_ring4(f);
	t = fake_survey(f);
	assert_string_equal(t->kind, "ring");
	assert_int_equal(t->n_order, 4);
	assert_string_equal(t->order[0], "n1");
	assert_string_equal(t->order[1], "n2");
	assert_string_equal(t->order[2], "n4");
	assert_string_equal(t->order[3], "n3");
	assert_int_equal(t->n_ranks, 4);
	assert_int_equal(t->n_edges, 4);
	assert_int_equal(t->n_anomalies, 0);
	assert_int_equal(t->n_strays, 1);
	s = topo_stray(t, "evil");
	assert_string_equal(s->reason, "no_cable");
	assert_int_equal(s->n_neighbours, 0);
	assert_non_null(strstr(s->text, "not cabled into the ring"));
	assert_only_listed_apart(t, "evil");
	fake_free(f);
}

/* Two strays cabled to each other: listed apart with their cable's far
 * end, their cable neither an edge nor measured. */
static void test_stray_pair(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	const Ring__StrayNode *s;
	int s1, s2;

	(void)state;
	s1 = tn_add(f, "s1");
	s2 = tn_add(f, "s2");
	tn_cable(f, s1, s2);
	tn_publish(f);
	fake_expect_ring4(f);
	t = fake_survey(f);
	assert_string_equal(t->kind, "ring");
	assert_int_equal(t->n_ranks, 4);
	assert_string_equal(t->ranks[0]->node, "n1");
	assert_int_equal(t->n_edges, 4);
	assert_int_equal(t->rounds, 2); /* the ring's two rounds only */
	assert_int_equal(t->n_strays, 2);
	assert_string_equal(t->strays[0]->node, "s1");
	s = topo_stray(t, "s2");
	assert_string_equal(s->reason, "not_cabled_into_ring");
	assert_int_equal(s->n_neighbours, 1);
	assert_string_equal(s->neighbours[0], "s1");
	assert_only_listed_apart(t, "s1");
	assert_only_listed_apart(t, "s2");
	fake_free(f);
}

/* Without expect, the published order names the ring's members: a
 * newcomer without cables at the next survey is a stray. */
static void test_stray_after_survey(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;

	(void)state;
	tn_publish(f);
	t = fake_survey(f);
	assert_string_equal(t->kind, "ring");
	tn_add(f, "evil");
	tn_publish(f);
	t = fake_survey(f);
	assert_string_equal(t->kind, "ring");
	assert_int_equal(t->n_ranks, 4);
	assert_int_equal(t->n_strays, 1);
	assert_string_equal(t->strays[0]->node, "evil");
	fake_free(f);
}

/* Controls: an expected node with no cable is missing from the ring, a
 * split as before (no stray); so is a ring member cut off. */
static void test_stray_control(void **state)
{
	struct fake *f = fake_ring4();
	const Ring__Topology *t;
	struct node *n;

	(void)state;
	tn_add(f, "n5");
	tn_publish(f);
	fake_expect_ring4(f);
	n = nodes_find(f->table, "n5");
	n->expected = 1;
	t = fake_survey(f);
	assert_string_equal(t->kind, "split");
	assert_int_equal(t->n_ranks, 0);
	assert_int_equal(t->n_strays, 0);
	assert_string_equal(t->anomalies[t->n_anomalies - 1]->code, "isolated");
	fake_free(f);

	/* n5 in the published order, then without a cable (no expect). */
	f = fake_new();
	{
		int n1 = tn_add(f, "n1"), n2 = tn_add(f, "n2"),
		    n3 = tn_add(f, "n3"), n5 = tn_add(f, "n5");

		tn_cable(f, n1, n2);
		tn_cable(f, n2, n3);
		tn_cable(f, n3, n5);
		tn_cable(f, n5, n1);
		tn_publish(f);
		t = fake_survey(f);
		assert_string_equal(t->kind, "ring");
		f->n[n5].ifs[0].no_carrier = 1;
		f->n[n5].ifs[1].no_carrier = 1;
		f->n[n5].ifs[0].peer_node = f->n[n5].ifs[1].peer_node = -1;
		f->n[n1].ifs[1].peer_node = f->n[n3].ifs[1].peer_node = -1;
		tn_publish(f);
		t = fake_survey(f);
		assert_string_equal(t->kind, "split");
		assert_int_equal(t->n_strays, 0);
	}
	fake_free(f);
}

static void test_fewer_than_two(void **state)
{
	struct fake *f = fake_new();

	(void)state;
	tn_add(f, "n1");
	tn_publish(f);
	assert_int_equal(survey_start(f->sv, "test"), -1);
	assert_int_equal(errno, ENOENT);
	assert_false(survey_running(f->sv));
	assert_string_equal(survey_state(f->sv), "never");
	fake_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_exact),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_ring5_rounds),
		cmocka_unit_test(test_pair),
		cmocka_unit_test(test_switch),
		cmocka_unit_test(test_step_failures),
		cmocka_unit_test(test_node_gone),
		cmocka_unit_test(test_free_in_flight),
		cmocka_unit_test(test_probe_findings),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_alloc_failure_at_once),
		cmocka_unit_test(test_ladder_2_16),
		cmocka_unit_test(test_twins),
		cmocka_unit_test(test_twins_ranks_nccl),
		cmocka_unit_test(test_nccl_default_gid),
		cmocka_unit_test(test_fewer_than_two),
		cmocka_unit_test(test_stray_no_cable),
		cmocka_unit_test(test_stray_pair),
		cmocka_unit_test(test_stray_after_survey),
		cmocka_unit_test(test_stray_control),
		cmocka_unit_test(test_recheck_cable_back),
		cmocka_unit_test(test_recheck_node_back),
		cmocka_unit_test(test_survey_queued_behind_recheck),
		cmocka_unit_test(test_light_checks),
		cmocka_unit_test(test_light_sample),
		cmocka_unit_test(test_light_overlap),
		cmocka_unit_test(test_busy_edge_postponed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
