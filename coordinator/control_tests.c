/* Control requests that run work on the agents and answer when it is
 * done: TCP and RDMA tests, the all-reduce (and its last figures), host-name
 * lookups on every node, read tests, a survey. One at a time per client;
 * the work has its own deadline. */
#include "control_int.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allreduce_coord.h"
#include "clock.h"
#include "counters_eval.h"
#include "log.h"
#include "nodes.h"
#include "readrelay.h"
#include "resolve_fanout.h"
#include "manual_tests.h"
#include "survey.h"
#include "testlimits.h"
#include "text.h"

/* Host-name lookups on every node (ResolveRequest) in flight for users
 * other than root: one per user, this many for them all (the agents keep
 * root's apart as well). */
#define CONTROL_GROUP_LOOKUPS 4

static const char *control_kind_name(Ring__TestKind k)
{
	switch (k) {
	case RING__TEST_KIND__TEST_TCP_BW:
		return "bw";
	case RING__TEST_KIND__TEST_TCP_LAT:
		return "lat";
	case RING__TEST_KIND__TEST_RDMA_BW:
		return "rdma-bw";
	case RING__TEST_KIND__TEST_RDMA_LAT:
		return "rdma-lat";
	default:
		return "?";
	}
}

static void control_test_done(const Ring__TestReport *rep, void *arg)
{
	struct client *cl = arg;

	Ring__TestReport copy = *rep;
	struct cev_report_buf cf;
	char hint[512];

	cl->test = NULL;
	control_client_arm(cl);
	cev_report_attach(&copy, &cf); /* the counters' findings */
	rep = &copy;
	/* An agent's typed "no data-plane path" (ERROR_NOT_ADJACENT) was
	 * worded by rdmatest, which knows the adjacency: say nothing twice. */
	if (*rep->error && cl->test_adjacent == 0 &&
	    rep->error_code != RING__ERROR_CODE__ERROR_NOT_ADJACENT) {
		/* The reference cluster's rank-order failure, said plainly. */
		snprintf(hint, sizeof(hint),
			 "%s; %s and %s are not ring neighbours: there is no "
			 "data-plane path between them, so ranks must follow "
			 "the physical ring order (ringctl ranks)",
			 rep->error, rep->a, rep->b);
		copy.error = hint;
		rep = &copy;
	}
	log_info("test %s %s -> %s: %s", control_kind_name(rep->params->kind),
		 rep->a, rep->b, *rep->error ? rep->error : "done");
	control_client_send(cl, cl->test_id, RING__ENVELOPE__BODY_TEST_REPORT,
			    (void *)rep);
}

void control_test(struct client *cl, uint64_t id, const Ring__TestRequest *req)
{
	struct control *co = cl->ctl;
	struct node *a = nodes_find(co->nodes, req->a);
	struct node *b = nodes_find(co->nodes, req->b);
	char a_if[IFNAMSIZ], b_addr[64], why[512];
	struct survey_rdma_ends ends;
	int rdma;

	if (!a || !b) {
		control_unknown_node(cl, id, !a ? req->a : req->b);
		return;
	}
	if (a == b || !req->params) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"a test needs two different nodes and its "
				"parameters (%.64s and %.64s given)",
				a->name, b->name);
		return;
	}
	if (a->state != NODE_UP || b->state != NODE_UP) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_NOT_FOUND,
				"%s is not up",
				a->state != NODE_UP ? a->name : b->name);
		return;
	}
	if (cl->test || cl->ar || cl->resolve || cl->read) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"one test at a time per client");
		return;
	}
	if (manual_test_blocker(co->survey) == TEST_SLOT_ALLREDUCE) {
		/* Its figures would share the cables with the test's. */
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"an all-reduce is running; try again when it "
				"is done");
		return;
	}
	rdma = req->params->kind == RING__TEST_KIND__TEST_RDMA_BW ||
	       req->params->kind == RING__TEST_KIND__TEST_RDMA_LAT;
	if (rdma && req->params->direction != RING__DIRECTION__DIR_A_TO_B) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"RDMA tests run with A as the requester; swap "
				"A and B for the other direction");
		return;
	}
	/* The agents' own rules, said before anything is set up. */
	if (testlimits_check(req->params, why, sizeof(why)) < 0) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST, "%s", why);
		return;
	}
	if (rdma ? survey_rdma_endpoints(co->survey, a->name, b->name, &ends,
					 why, sizeof(why))
		 : survey_test_endpoints(co->survey, a->name, b->name, a_if,
					 sizeof(a_if), b_addr, sizeof(b_addr),
					 &cl->test_adjacent, why,
					 sizeof(why))) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST, "%s", why);
		return;
	}
	cl->test_id = id;
	if (rdma) {
		cl->test_adjacent = ends.adjacent;
		cl->test = manual_rdma_test_start(co->survey, a->name, b->name,
						  &ends, req->params,
						  control_test_done, cl);
	} else {
		cl->test = manual_tcp_test_start(co->survey, a->name, a_if,
						 b->name, b_addr, req->params,
						 control_test_done, cl);
	}
	if (!cl->test) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST, "%s",
				errno == EBUSY ? "a survey or a re-check is "
						 "measuring; try again when it "
						 "is done"
					       : strerror(errno));
		return;
	}
	/* The test has its own deadline: control_msg lifts the request's. */
}

static void control_allreduce_done(const Ring__AllreduceReport *rep, void *arg)
{
	struct client *cl = arg;
	struct control *co = cl->ctl;
	const Ring__AllreduceReport *other;
	Ring__AllreduceReport copy = *rep;
	char cmp[512];

	cl->ar = NULL;
	control_client_arm(cl);
	log_info("all-reduce over %zu ranks: %s", rep->n_order,
		 *rep->error ? rep->error : "done");
	/* Against the latest run over another number of ranks. */
	other = arlast_other(&co->ar_last, rep->n_order);
	if (other && allreduce_coord_compare(other, rep, cmp, sizeof(cmp)) == 0)
		copy.comparison = cmp;
	/* A failed run is not kept (arlast_check); a kept one is saved at
	 * once, so a restart right after still has it. */
	if (!*rep->error && arlast_keep(&co->ar_last, rep) == 0 && co->keeper) {
		struct store *st = store_keeper_writable(co->keeper);

		store_keeper_wrote(
			co->keeper,
			st ? arlast_save(&co->ar_last, st, clock_now_ms())
			   : -1);
	}
	control_client_send(cl, cl->ar_id,
			    RING__ENVELOPE__BODY_ALLREDUCE_REPORT, &copy);
}

void control_allreduce(struct client *cl, uint64_t id,
		       const Ring__AllreduceRequest *req)
{
	struct control *co = cl->ctl;
	struct allreduce_coord_plan *p;
	const Ring__Topology *t = control_topology(co);
	const Ring__RingView *ring;
	struct ring_view view;
	int not_adjacent = 0, rc;
	char why[1024];

	if (cl->test || cl->ar || cl->resolve || cl->read) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"one test at a time per client");
		return;
	}
	/* Issue 24: one ring of several, its order and cables alone. */
	if (control_ring_find(cl, id, t, req->ring, &ring) < 0)
		return;
	if (!ring && t && t->n_rings > 1) {
		conn_send_error(
			cl->conn, id, RING__ERROR_CODE__ERROR_BAD_REQUEST,
			"the site has %zu rings: name one (ringctl test "
			"allreduce --ring ID; ringctl status lists them)",
			t->n_rings);
		return;
	}
	p = malloc(sizeof(*p)); /* a few KiB: not on the stack */
	if (!p || (ring && ring_view_build(t, ring, &view) < 0)) {
		free(p);
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"out of memory");
		return;
	}
	rc = allreduce_coord_plan(ring ? &view.top : t, req, p, &not_adjacent,
				  why, sizeof(why));
	if (ring)
		ring_view_release(&view);
	if (rc < 0) {
		/* A wrong order is a finding (exit 1), like a failed test;
		 * anything else is a bad request. */
		cl->ar_id = id;
		if (not_adjacent)
			allreduce_coord_refused(
				p, why, RING__ERROR_CODE__ERROR_NOT_ADJACENT,
				control_allreduce_done, cl);
		else
			conn_send_error(cl->conn, id,
					RING__ERROR_CODE__ERROR_BAD_REQUEST,
					"%s", why);
		goto out;
	}
	for (unsigned i = 0; i < p->n; i++) {
		struct node *nd = nodes_find(co->nodes, p->ranks[i].node);

		if (!nd || nd->state != NODE_UP) {
			conn_send_error(
				cl->conn, id, RING__ERROR_CODE__ERROR_NOT_FOUND,
				"%s (rank %u) is not up", p->ranks[i].node, i);
			goto out;
		}
	}
	cl->ar_id = id;
	cl->ar = manual_allreduce_start(co->survey, p, control_allreduce_done,
					cl);
	if (!cl->ar)
		conn_send_error(
			cl->conn, id, RING__ERROR_CODE__ERROR_BAD_REQUEST, "%s",
			errno == EBUSY ? "a survey, a re-check or a test "
					 "is running; try again when "
					 "it is done"
				       : strerror(errno));
	/* The job has its own deadline: control_msg lifts the request's. */
out:
	free(p);
}

static void control_resolve_done(const Ring__ResolveReply *rep, void *arg)
{
	struct client *cl = arg;

	cl->resolve = NULL;
	control_client_arm(cl);
	control_client_send(cl, cl->resolve_id,
			    RING__ENVELOPE__BODY_RESOLVE_REPLY, (void *)rep);
}

/* A host name looked up on every node, as a launcher there would: read
 * only, for the socket's group too; one at a time per client, and for the
 * group one per user and CONTROL_GROUP_LOOKUPS in all. */
void control_resolve(struct client *cl, uint64_t id,
		     const Ring__ResolveRequest *req)
{
	struct control *co = cl->ctl;
	struct node **nodes;
	unsigned n;
	char why[160];

	if (text_host_name_check(req->name, why, sizeof(why)) < 0) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST, "%s", why);
		return;
	}
	if (cl->test || cl->ar || cl->resolve || cl->read) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"one request at a time per client");
		return;
	}
	if (cl->uid != 0) {
		const struct client *o;
		unsigned mine = 0, group = 0;

		LIST_FOREACH(o, &co->clients, link)
		{
			mine += o->resolve && o->uid == cl->uid;
			group += o->resolve && o->uid != 0;
		}
		if (mine || group >= CONTROL_GROUP_LOOKUPS) {
			conn_send_error(
				cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"busy: %u host-name lookups by users other "
				"than root are running (one per user, %d in "
				"all); try again when yours has answered",
				group, CONTROL_GROUP_LOOKUPS);
			return;
		}
	}
	nodes = nodes_sorted(co->nodes, &n);
	if (!nodes && n) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"out of memory");
		return;
	}
	cl->resolve_id = id;
	/* The requester from SO_PEERCRED, never from the request. */
	cl->resolve = resolve_fanout_start(co->base, survey_calls(co->survey),
					   nodes, n, req->name, cl->uid == 0,
					   control_resolve_done, cl);
	free(nodes);
	if (!cl->resolve)
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"out of memory");
}

static void control_read_done(const Ring__ReadTestResult *all, void *arg)
{
	struct client *cl = arg;

	cl->read = NULL;
	control_client_send(cl, cl->read_id,
			    RING__ENVELOPE__BODY_READ_TEST_RESULT, (void *)all);
	if (!cl->in_msg)
		control_client_arm(cl);
}

/* plan --weights: read tests on the nodes asked (none: every node up). */
void control_read(struct client *cl, uint64_t id,
		  const Ring__ReadTestRequest *req)
{
	struct control *co = cl->ctl;
	const char *names[TESTLIMITS_READ_NODES_MAX];
	int up[TESTLIMITS_READ_NODES_MAX];
	struct node **all = NULL;
	unsigned n_all = 0;
	size_t n = 0;
	uint64_t bytes;
	unsigned ms;
	char why[512];

	if (cl->test || cl->ar || cl->resolve || cl->read) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"one test at a time per client");
		return;
	}
	if (testlimits_read_check(req, &bytes, &ms, why, sizeof(why)) < 0) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST, "%s", why);
		return;
	}
	if (req->n_nodes) {
		for (size_t i = 0; i < req->n_nodes; i++) {
			struct node *nd = nodes_find(co->nodes, req->nodes[i]);

			if (!nd) {
				conn_send_error(
					cl->conn, id,
					RING__ERROR_CODE__ERROR_NOT_FOUND,
					"no node %.64s", req->nodes[i]);
				return;
			}
			names[n] = nd->name;
			up[n++] = nd->state == NODE_UP;
		}
	} else {
		all = nodes_sorted(co->nodes, &n_all);
		for (unsigned i = 0;
		     all && i < n_all && n < TESTLIMITS_READ_NODES_MAX; i++)
			if (all[i]->state == NODE_UP) {
				names[n] = all[i]->name;
				up[n++] = 1;
			}
	}
	if (!n) {
		free(all);
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_NOT_FOUND,
				"no node is up");
		return;
	}
	cl->read = readrelay_new(survey_calls(co->survey), names, up, n,
				 req->path, bytes, ms, control_read_done, cl);
	free(all);
	if (!cl->read) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"out of memory");
		return;
	}
	cl->read_id = id;
	log_info("read test of %s on %zu node%s (ringctl)", req->path, n,
		 n == 1 ? "" : "s");
	readrelay_go(cl->read); /* may answer at once */
}

void control_survey(struct client *cl, uint64_t id,
		    const Ring__SurveyRequest *req)
{
	Ring__Ack ack = RING__ACK__INIT;
	char why[200] = "";
	int rc = survey_request_rings(cl->ctl->survey, "requested by ringctl",
				      req ? req->rings : NULL,
				      req ? req->n_rings : 0, why, sizeof(why));

	if (rc < 0) {
		conn_send_error(
			cl->conn, id,
			errno == EINVAL ? RING__ERROR_CODE__ERROR_NOT_FOUND
					: RING__ERROR_CODE__ERROR_BAD_REQUEST,
			"%s",
			errno == EINVAL ? why
			: errno == EBUSY
				? "a survey or a test is already running"
			: errno == ENOMEM ? "out of memory starting the survey "
					    "(see the coordinator's log)"
					  : "fewer than two nodes are up");
		return;
	}
	/* "survey started" either way: it will, right after what runs now
	 * (ringctl survey --wait tells the two apart). */
	ack.text = rc == 2   ? "survey started (after the survey now running)"
		   : rc == 1 ? "survey started (after the re-check now running)"
			     : "survey started";
	ack.queued = (uint32_t)rc;
	control_client_send(cl, id, RING__ENVELOPE__BODY_ACK, &ack);
}

/* The last successful all-reduce per number of ranks (plan --layers):
 * read-only, open to every client; none kept is an empty reply. */
void control_allreduce_last(struct client *cl, uint64_t id,
			    const Ring__AllreduceLastRequest *req)
{
	Ring__AllreduceLastReply rep = RING__ALLREDUCE_LAST_REPLY__INIT;
	Ring__AllreduceReport *v[ARLIMITS_RANKS_MAX + 1];

	if (req->ranks > ARLIMITS_RANKS_MAX) {
		conn_send_error(
			cl->conn, id, RING__ERROR_CODE__ERROR_BAD_REQUEST,
			"ranks %u: at most %d", req->ranks, ARLIMITS_RANKS_MAX);
		return;
	}
	rep.reports = v;
	rep.n_reports = arlast_list(&cl->ctl->ar_last, req->ranks, v,
				    ARLIMITS_RANKS_MAX + 1);
	control_client_send(cl, id, RING__ENVELOPE__BODY_ALLREDUCE_LAST_REPLY,
			    &rep);
}
