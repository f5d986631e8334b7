#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "agent/resolve.h"
#include "coordinator/resolve_fanout.h"
#include "testcall.h"
#include "text.h"

/* Host-name lookups on every node: the agent's worker (the real system
 * resolver, for "localhost") and the coordinator's fan-out over the
 * scripted call interface. */

struct sent {
	int n;
	uint64_t id;
	Ring__Envelope__BodyCase type;
	char text[256];
	char node[64];
	char addrs[4][64];
	size_t n_addrs;
	int answered;
	uint64_t replied; /* bit id % 64 of each ResolveReply */
};

static void sent_cb(void *arg, uint64_t id, Ring__Envelope__BodyCase type,
		    void *body)
{
	struct sent *s = arg;

	s->n++;
	s->id = id;
	s->type = type;
	if (type == RING__ENVELOPE__BODY_ERROR) {
		snprintf(s->text, sizeof(s->text), "%s",
			 ((Ring__Error *)body)->text);
	} else if (type == RING__ENVELOPE__BODY_RESOLVE_REPLY) {
		const Ring__ResolveReply *r = body;
		const Ring__NodeResolve *nr = r->nodes[0];

		s->replied |= 1ull << (id % 64);
		assert_int_equal(r->n_nodes, 1);
		snprintf(s->node, sizeof(s->node), "%s", nr->node);
		snprintf(s->text, sizeof(s->text), "%s", nr->error);
		s->answered = nr->answered;
		/* This reply's first addresses (a later reply starts over:
		 * a fresh machine's resolver may give more than one). */
		s->n_addrs = 0;
		for (size_t i = 0; i < nr->n_addresses && i < 4; i++)
			snprintf(s->addrs[s->n_addrs++], sizeof(s->addrs[0]),
				 "%s", nr->addresses[i]);
	}
}

static Ring__Envelope request(uint64_t id, Ring__ResolveRequest *rr,
			      const char *name)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;

	ring__resolve_request__init(rr);
	rr->name = (char *)name;
	env.request_id = id;
	env.body_case = RING__ENVELOPE__BODY_RESOLVE_REQUEST;
	env.resolve_request = rr;
	return env;
}

static void test_name_check(void **state)
{
	char why[160], big[300];

	(void)state;
	assert_int_equal(text_host_name_check("n1", why, sizeof(why)), 0);
	assert_int_equal(
		text_host_name_check("gb10-1.lab.example", why, sizeof(why)),
		0);
	assert_int_equal(text_host_name_check("fe80::1", why, sizeof(why)), 0);
	assert_int_equal(text_host_name_check("", why, sizeof(why)), -1);
	assert_int_equal(text_host_name_check("n1;rm", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "only letters"));
	assert_int_equal(text_host_name_check("a b", why, sizeof(why)), -1);
	memset(big, 'a', 254);
	big[254] = '\0';
	assert_int_equal(text_host_name_check(big, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "1..253"));
}

/* The real resolver: localhost is in every /etc/hosts; a second request
 * while the first runs is refused, a bad name at once. */
static void test_agent_lookup(void **state)
{
	struct event_base *base = event_base_new();
	struct sent s = {0};
	struct resolve *r = resolve_new(base, "n7", sent_cb, &s);
	Ring__ResolveRequest rr;
	Ring__Envelope env;
	int v4 = 0;

	(void)state;
	assert_non_null(r);
	env = request(5, &rr, "bad name");
	assert_int_equal(resolve_handle(r, &env), 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.type, RING__ENVELOPE__BODY_ERROR);
	assert_int_equal(s.id, 5);

	memset(&s, 0, sizeof(s));
	env = request(6, &rr, "localhost");
	assert_int_equal(resolve_handle(r, &env), 1);
	/* The worker's answer reaches the loop only: this one is refused. */
	env = request(7, &rr, "localhost");
	assert_int_equal(resolve_handle(r, &env), 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.id, 7);
	assert_non_null(strstr(s.text, "busy"));
	memset(&s, 0, sizeof(s));
	while (!s.n)
		event_base_loop(base, EVLOOP_ONCE);
	assert_int_equal(s.id, 6);
	assert_int_equal(s.type, RING__ENVELOPE__BODY_RESOLVE_REPLY);
	assert_string_equal(s.node, "n7");
	assert_string_equal(s.text, "");
	assert_true(s.answered);
	assert_true(s.n_addrs >= 1);
	for (size_t i = 0; i < s.n_addrs; i++)
		v4 |= !strcmp(s.addrs[i], "127.0.0.1");
	assert_true(v4 || !strcmp(s.addrs[0], "::1"));

	/* Root's lookups have slots of their own: a non-root flood (here
	 * one slow-to-answer lookup holding the others' slot) never makes
	 * root's busy; root's own are bounded too. An unknown requester (an
	 * older coordinator) is not root. */
	memset(&s, 0, sizeof(s));
	env = request(20, &rr, "localhost");
	rr.requester = RING__REQUESTER__REQUESTER_OTHER;
	assert_int_equal(resolve_handle(r, &env), 1);
	assert_int_equal(s.n, 0);
	env = request(21, &rr, "localhost"); /* unknown: the others' */
	assert_int_equal(resolve_handle(r, &env), 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.id, 21);
	assert_non_null(strstr(s.text, "busy"));
	assert_non_null(strstr(s.text, "non-root"));
	for (uint64_t id = 22; id < 24; id++) {
		env = request(id, &rr, "localhost");
		rr.requester = RING__REQUESTER__REQUESTER_ROOT;
		assert_int_equal(resolve_handle(r, &env), 1);
		assert_int_equal(s.n, 1); /* accepted: nothing sent yet */
	}
	env = request(24, &rr, "localhost");
	rr.requester = RING__REQUESTER__REQUESTER_ROOT;
	assert_int_equal(resolve_handle(r, &env), 1);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.id, 24);
	assert_non_null(strstr(s.text, "busy"));
	assert_non_null(strstr(s.text, "for root"));
	while (s.n < 5)
		event_base_loop(base, EVLOOP_ONCE);
	assert_int_equal(s.replied, (1ull << 20) | (1ull << 22) | (1ull << 23));

	/* Not a lookup: not this module's. */
	env.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	assert_int_equal(resolve_handle(r, &env), 0);

	/* A lookup whose session ended is answered to nobody. */
	memset(&s, 0, sizeof(s));
	env = request(8, &rr, "localhost");
	assert_int_equal(resolve_handle(r, &env), 1);
	resolve_cancel(r);
	resolve_free(r); /* joins the worker */
	assert_int_equal(s.n, 0);
	event_base_free(base);
}

struct fan {
	struct nodes *table;
	struct tc tc;
	struct event_base *base;
	int done;
	int for_root;
	Ring__ResolveReply *rep;
};

static void fan_cb(const Ring__ResolveReply *rep, void *arg)
{
	struct fan *f = arg;
	uint8_t buf[4096];
	size_t len = ring__resolve_reply__pack(rep, buf);

	assert_true(len < sizeof(buf));
	f->done++;
	f->rep = ring__resolve_reply__unpack(NULL, len, buf);
}

static struct resolve_fanout *fan_start(struct fan *f, struct node ***nodes,
					unsigned *n)
{
	*nodes = nodes_sorted(f->table, n);
	return resolve_fanout_start(f->base, &f->tc.ci, *nodes, *n, "n1",
				    f->for_root, fan_cb, f);
}

static void fan_answer(struct fan *f, const char *node, const char *addr,
		       const char *error)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__ResolveReply rep = RING__RESOLVE_REPLY__INIT;
	Ring__NodeResolve nr = RING__NODE_RESOLVE__INIT, *nrp = &nr;
	char *a = (char *)addr;

	nr.node = (char *)node;
	nr.addresses = &a;
	nr.n_addresses = addr ? 1 : 0;
	nr.error = (char *)(error ? error : "");
	nr.answered = 1;
	rep.name = "n1";
	rep.nodes = &nrp;
	rep.n_nodes = 1;
	env.body_case = RING__ENVELOPE__BODY_RESOLVE_REPLY;
	env.resolve_reply = &rep;
	assert_int_equal(
		tc_reply(&f->tc,
			 tc_get(&f->tc, node,
				RING__ENVELOPE__BODY_RESOLVE_REQUEST, 1),
			 &env),
		1);
}

/* Four nodes: one answers, one's resolver fails, one sends junk, one is
 * down; the reply keeps the table's order and says who was asked. */
static void test_fanout(void **state)
{
	static const char *const names[4] = {"n1", "n2", "n3", "n4"};
	struct fan f = {0};
	struct resolve_fanout *rf;
	struct node **nodes;
	unsigned n;

	(void)state;
	f.table = nodes_new();
	f.base = event_base_new();
	tc_init(&f.tc, f.table);
	for (int i = 0; i < 4; i++) {
		struct node *nd = nodes_get(f.table, names[i], 8);

		if (i != 3)
			nodes_mark_up(nd, &f, "192.168.0.1", "test", 1);
	}
	rf = fan_start(&f, &nodes, &n);
	assert_non_null(rf);
	free(nodes);
	assert_int_equal(f.tc.n_calls, 3);
	assert_string_equal(
		tc_get(&f.tc, "n2", RING__ENVELOPE__BODY_RESOLVE_REQUEST, 1)
			->req->resolve_request->name,
		"n1");
	/* Not root's (for_root 0): the agents count it with the others. */
	assert_int_equal(
		tc_get(&f.tc, "n2", RING__ENVELOPE__BODY_RESOLVE_REQUEST, 1)
			->req->resolve_request->requester,
		RING__REQUESTER__REQUESTER_OTHER);
	fan_answer(&f, "n1", "192.168.0.11", NULL);
	fan_answer(&f, "n2", NULL, "Name or service not known");
	assert_int_equal(f.done, 0);
	fan_answer(&f, "n3", "not-an-address", NULL);
	assert_int_equal(f.done, 1);
	assert_int_equal(f.rep->n_nodes, 4);
	assert_string_equal(f.rep->nodes[0]->node, "n1");
	assert_int_equal(f.rep->nodes[0]->n_addresses, 1);
	assert_string_equal(f.rep->nodes[0]->addresses[0], "192.168.0.11");
	assert_true(f.rep->nodes[0]->answered);
	assert_string_equal(f.rep->nodes[1]->error,
			    "Name or service not known");
	assert_true(f.rep->nodes[1]->answered);
	assert_non_null(strstr(f.rep->nodes[2]->error, "not numeric"));
	assert_int_equal(f.rep->nodes[2]->n_addresses, 0);
	assert_string_equal(f.rep->nodes[3]->node, "n4");
	assert_false(f.rep->nodes[3]->answered);
	assert_non_null(strstr(f.rep->nodes[3]->error, "node is"));
	ring__resolve_reply__free_unpacked(f.rep, NULL);

	/* A timeout and a refusal are "not asked"; a cancel ends it all
	 * without a callback. */
	memset(&f.done, 0, sizeof(f.done));
	f.for_root = 1;
	rf = fan_start(&f, &nodes, &n);
	free(nodes);
	assert_int_equal(
		tc_get(&f.tc, "n1", RING__ENVELOPE__BODY_RESOLVE_REQUEST, 2)
			->req->resolve_request->requester,
		RING__REQUESTER__REQUESTER_ROOT);
	tc_fail(tc_get(&f.tc, "n1", RING__ENVELOPE__BODY_RESOLVE_REQUEST, 2),
		-ETIMEDOUT);
	tc_error(&f.tc,
		 tc_get(&f.tc, "n2", RING__ENVELOPE__BODY_RESOLVE_REQUEST, 2),
		 RING__ERROR_CODE__ERROR_BAD_REQUEST, "busy");
	resolve_fanout_cancel(rf);
	assert_int_equal(f.done, 0);

	/* No node up: the answer still comes, from the loop. */
	for (int i = 0; i < 3; i++)
		nodes_mark_down(nodes_find(f.table, names[i]), "gone", 2);
	rf = fan_start(&f, &nodes, &n);
	free(nodes);
	assert_non_null(rf);
	assert_int_equal(f.done, 0);
	event_base_loop(f.base, EVLOOP_NONBLOCK);
	assert_int_equal(f.done, 1);
	assert_int_equal(f.rep->n_nodes, 4);
	for (int i = 0; i < 4; i++)
		assert_false(f.rep->nodes[i]->answered);
	ring__resolve_reply__free_unpacked(f.rep, NULL);

	tc_release(&f.tc);
	nodes_free(f.table);
	event_base_free(f.base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_check),
		cmocka_unit_test(test_agent_lookup),
		cmocka_unit_test(test_fanout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
