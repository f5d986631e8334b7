/* feed: the watcher bounds (in all, per user, root's reserve), the
 * snapshot first, one packing per event with each watcher's request id,
 * the kinds filter, a slow watcher's bounded output and its `lost` event,
 * and the diffs of the live view, the node table, alerts and surveys. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "coordinator/feed.h"
#include "frame.h"

#define MAX_EV 64

/* The frames a subscriber's buffer holds, decoded (and drained). */
struct got {
	size_t n;
	Ring__Envelope *env[MAX_EV];
};

static void got_read(struct evbuffer *b, struct got *g)
{
	for (;;) {
		uint8_t hdr[FRAME_HEADER_LEN], *payload;
		struct frame_header h;
		int err = 0;

		if (evbuffer_get_length(b) < FRAME_HEADER_LEN)
			break;
		assert_int_equal(evbuffer_copyout(b, hdr, sizeof(hdr)),
				 (int)sizeof(hdr));
		assert_int_equal(frame_header_decode(hdr, 16u << 20, &h), 0);
		assert_true(evbuffer_get_length(b) >=
			    FRAME_HEADER_LEN + h.length);
		evbuffer_drain(b, FRAME_HEADER_LEN);
		payload = malloc(h.length ? h.length : 1);
		assert_non_null(payload);
		evbuffer_remove(b, payload, h.length);
		assert_true(g->n < MAX_EV);
		g->env[g->n] = frame_decode(&h, payload, &err);
		free(payload);
		assert_non_null(g->env[g->n]);
		assert_int_equal(g->env[g->n]->body_case,
				 RING__ENVELOPE__BODY_WATCH_EVENT);
		g->n++;
	}
}

static void got_free(struct got *g)
{
	for (size_t i = 0; i < g->n; i++)
		frame_free(g->env[i]);
	g->n = 0;
}

static const Ring__WatchEvent *got_ev(const struct got *g, size_t i)
{
	assert_true(i < g->n);
	return g->env[i]->watch_event;
}

static int gone_calls;

static void gone(struct feed_sub *s, const char *why, void *arg)
{
	(void)why;
	(void)arg;
	gone_calls++;
	feed_unsubscribe(s);
}

static struct feed_sub *sub(struct feed *f, struct evbuffer *b, uint64_t id,
			    uid_t uid, unsigned kinds)
{
	char why[256];

	return feed_subscribe(f, b, id, uid, kinds, NULL, "healthy", gone, NULL,
			      why, sizeof(why));
}

static void test_bounds(void **state)
{
	struct event_base *base = event_base_new();
	struct feed *f = feed_new(base);
	struct evbuffer *b[FEED_MAX_WATCHERS + 2];
	struct feed_sub *s[FEED_MAX_WATCHERS + 2];
	char why[256];
	unsigned i;

	(void)state;
	for (i = 0; i < FEED_MAX_WATCHERS + 2; i++)
		b[i] = evbuffer_new();
	/* Per user. */
	for (i = 0; i < FEED_MAX_PER_UID; i++)
		assert_non_null(s[i] = sub(f, b[i], 1, 1000, FEED_ALL));
	errno = 0;
	assert_null(feed_subscribe(f, b[i], 1, 1000, FEED_ALL, NULL, NULL, gone,
				   NULL, why, sizeof(why)));
	assert_int_equal(errno, EUSERS);
	assert_non_null(strstr(why, "too many watchers"));
	/* The group in all: all but the root reserve. */
	for (; i < FEED_MAX_WATCHERS - FEED_ROOT_RESERVE; i++)
		assert_non_null(s[i] = sub(f, b[i], 1,
					   2000 + i / FEED_MAX_PER_UID,
					   FEED_ALL));
	assert_null(sub(f, b[i], 1, 9999, FEED_ALL));
	/* Root still gets in, up to the total. */
	for (; i < FEED_MAX_WATCHERS; i++)
		assert_non_null(s[i] = sub(f, b[i], 1, 0, FEED_ALL));
	assert_int_equal(feed_watchers(f), FEED_MAX_WATCHERS);
	assert_null(sub(f, b[i], 1, 0, FEED_ALL));
	/* A slot freed is a slot again. */
	feed_unsubscribe(s[0]);
	assert_non_null(s[0] = sub(f, b[i], 1, 1000, FEED_ALL));
	feed_free(f); /* drops the rest */
	for (i = 0; i < FEED_MAX_WATCHERS + 2; i++)
		evbuffer_free(b[i]);
	event_base_free(base);
}

static void test_snapshot_and_packing(void **state)
{
	struct event_base *base = event_base_new();
	struct feed *f = feed_new(base);
	struct evbuffer *b1 = evbuffer_new(), *b2 = evbuffer_new();
	Ring__WatchEvent ev = RING__WATCH_EVENT__INIT;
	struct got g1 = {0}, g2 = {0};
	uint64_t packed;

	(void)state;
	/* Nobody listens: nothing is even packed. */
	ev.kind = "edge";
	ev.subject = "n1-n2";
	ev.text = "n1-n2 up -> down";
	feed_publish(f, &ev);
	assert_int_equal(feed_packed(f), 0);

	assert_non_null(sub(f, b1, 111, 0, FEED_ALL));
	assert_non_null(sub(f, b2, 1ull << 40, 0, FEED_ALL));
	got_read(b1, &g1);
	assert_int_equal(g1.n, 1);
	assert_string_equal(got_ev(&g1, 0)->kind, "snapshot");
	assert_string_equal(got_ev(&g1, 0)->state, "healthy");
	assert_non_null(strstr(got_ev(&g1, 0)->text, "no survey"));
	assert_true(got_ev(&g1, 0)->ts_ms > 0);
	got_free(&g1);
	got_read(b2, &g2);
	got_free(&g2);

	packed = feed_packed(f);
	feed_publish(f, &ev);
	assert_int_equal(feed_packed(f), packed + 1); /* once for both */
	got_read(b1, &g1);
	got_read(b2, &g2);
	assert_int_equal(g1.n, 1);
	assert_int_equal(g2.n, 1);
	assert_int_equal(g1.env[0]->request_id, 111);
	assert_int_equal(g2.env[0]->request_id, 1ull << 40);
	assert_string_equal(got_ev(&g2, 0)->text, "n1-n2 up -> down");
	assert_true(got_ev(&g2, 0)->ts_ms > 0);
	got_free(&g1);
	got_free(&g2);
	feed_free(f);
	evbuffer_free(b1);
	evbuffer_free(b2);
	event_base_free(base);
}

static void test_kinds(void **state)
{
	struct event_base *base = event_base_new();
	struct feed *f = feed_new(base);
	struct evbuffer *b = evbuffer_new();
	char *names[] = {"alert", "survey"}, *bad[] = {"alert", "bogus"};
	struct alert a = {.rule = "cable_down",
			  .subject = "n1-n2",
			  .edge = "n1-n2",
			  .severity = ALERT_CRITICAL,
			  .firing = 1,
			  .message = "cable n1-n2 is down"};
	struct got g = {0};
	unsigned mask;
	char why[128];

	(void)state;
	assert_int_equal(feed_kinds_parse(NULL, 0, &mask, why, sizeof(why)), 0);
	assert_int_equal(mask, FEED_ALL);
	assert_int_equal(feed_kinds_parse(bad, 2, &mask, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "bogus"));
	assert_int_equal(feed_kinds_parse(names, 2, &mask, why, sizeof(why)),
			 0);
	assert_non_null(sub(f, b, 7, 0, mask));
	feed_survey(f, SURVEY_STARTED, "survey", "requested by ringctl", NULL);
	feed_alert(f, &a, ALERT_EV_FIRED);
	feed_survey(f, SURVEY_DONE, "recheck", NULL, "no topology");
	got_read(b, &g);
	assert_int_equal(g.n, 4);
	assert_string_equal(got_ev(&g, 0)->kind, "snapshot");
	assert_string_equal(got_ev(&g, 1)->kind, "survey");
	assert_string_equal(got_ev(&g, 1)->state, "started");
	assert_string_equal(got_ev(&g, 1)->reason, "requested by ringctl");
	assert_string_equal(got_ev(&g, 2)->kind, "alert");
	assert_string_equal(got_ev(&g, 2)->state, "fired");
	assert_non_null(got_ev(&g, 2)->alert);
	assert_string_equal(got_ev(&g, 2)->alert->rule, "cable_down");
	assert_int_equal(got_ev(&g, 2)->alert->severity,
			 RING__SEVERITY__SEVERITY_CRITICAL);
	assert_string_equal(got_ev(&g, 3)->state, "failed");
	assert_string_equal(got_ev(&g, 3)->subject, "recheck");
	assert_string_equal(got_ev(&g, 3)->reason, "no topology");
	got_free(&g);
	/* The keepalive reaches every watcher, whatever kinds it chose. */
	feed_keepalive(f);
	got_read(b, &g);
	assert_int_equal(g.n, 1);
	assert_string_equal(got_ev(&g, 0)->kind, "keepalive");
	got_free(&g);
	feed_free(f);
	evbuffer_free(b);
	event_base_free(base);
}

/* A watcher that reads nothing holds at most FEED_OUT_HIGH and one event;
 * once it drains it learns how many it missed, and gets events again. */
static void test_slow_subscriber(void **state)
{
	struct event_base *base = event_base_new();
	struct feed *f = feed_new(base);
	struct evbuffer *b = evbuffer_new(), *fast = evbuffer_new();
	Ring__WatchEvent ev = RING__WATCH_EVENT__INIT;
	char *text = malloc(4000);
	struct got g = {0};
	size_t max_len = 0, i;

	(void)state;
	memset(text, 'x', 3999);
	text[3999] = 0;
	ev.kind = "edge";
	ev.subject = "n1-n2";
	ev.text = text;
	assert_non_null(sub(f, b, 1, 1000, FEED_ALL));
	assert_non_null(sub(f, fast, 2, 0, FEED_ALL));
	for (i = 0; i < 1000; i++) {
		feed_publish(f, &ev);
		if (evbuffer_get_length(b) > max_len)
			max_len = evbuffer_get_length(b);
		evbuffer_drain(fast, evbuffer_get_length(fast));
	}
	assert_true(max_len <= FEED_OUT_HIGH + 4100);
	assert_true(feed_dropped(f) > 900);
	assert_int_equal(feed_packed(f), 1000 + 2); /* + the snapshots */
	/* Drain below the low mark: the lost event comes from the loop. */
	evbuffer_drain(b, evbuffer_get_length(b) - FEED_OUT_LOW / 2);
	event_base_loop(base, EVLOOP_NONBLOCK);
	evbuffer_drain(b, evbuffer_get_length(b));
	event_base_loop(base, EVLOOP_NONBLOCK);
	/* A partial frame was drained above: start again from what came
	 * after the lost event by reading from a fresh state. */
	feed_publish(f, &ev);
	got_read(b, &g);
	assert_int_equal(g.n, 1);
	assert_string_equal(got_ev(&g, 0)->kind, "edge");
	got_free(&g);
	assert_int_equal(gone_calls, 0);
	feed_free(f);
	evbuffer_free(b);
	evbuffer_free(fast);
	event_base_free(base);
	free(text);
}

/* The lost event itself, read whole. */
static void test_lost_event(void **state)
{
	struct event_base *base = event_base_new();
	struct feed *f = feed_new(base);
	struct evbuffer *b = evbuffer_new(), *hold = evbuffer_new();
	Ring__WatchEvent ev = RING__WATCH_EVENT__INIT;
	char *text = malloc(4000);
	struct got g = {0};
	uint64_t dropped;

	(void)state;
	memset(text, 'y', 3999);
	text[3999] = 0;
	ev.kind = "node";
	ev.subject = "n3";
	ev.text = text;
	assert_non_null(sub(f, b, 5, 0, FEED_ALL));
	while (!feed_dropped(f))
		feed_publish(f, &ev);
	feed_publish(f, &ev);
	feed_publish(f, &ev);
	dropped = feed_dropped(f);
	assert_int_equal(dropped, 3);
	/* Read whole frames (into hold) until below the low mark. */
	while (evbuffer_get_length(b) > FEED_OUT_LOW / 2) {
		uint8_t hdr[FRAME_HEADER_LEN];
		struct frame_header h;

		evbuffer_copyout(b, hdr, sizeof(hdr));
		assert_int_equal(frame_header_decode(hdr, 1u << 20, &h), 0);
		evbuffer_remove_buffer(b, hold, FRAME_HEADER_LEN + h.length);
	}
	evbuffer_drain(hold, evbuffer_get_length(hold));
	event_base_loop(base, EVLOOP_NONBLOCK);
	got_read(b, &g);
	assert_true(g.n >= 2);
	assert_string_equal(got_ev(&g, g.n - 1)->kind, "lost");
	assert_int_equal(got_ev(&g, g.n - 1)->missed, 3);
	assert_non_null(strstr(got_ev(&g, g.n - 1)->text, "3 events missed"));
	got_free(&g);
	feed_publish(f, &ev); /* flowing again */
	got_read(b, &g);
	assert_int_equal(g.n, 1);
	got_free(&g);
	feed_free(f);
	evbuffer_free(b);
	evbuffer_free(hold);
	event_base_free(base);
	free(text);
}

/* A ring of n1 n2 n3 with its live overlay. */
struct topo {
	Ring__Topology t;
	Ring__Edge e[3], *ep[3];
	char *order[3];
};

static void topo_init(struct topo *x)
{
	static char *names[] = {"n1", "n2", "n3"};

	ring__topology__init(&x->t);
	for (int i = 0; i < 3; i++) {
		ring__edge__init(&x->e[i]);
		x->e[i].a = names[i];
		x->e[i].b = names[(i + 1) % 3];
		x->e[i].live_state = "up";
		x->ep[i] = &x->e[i];
		x->order[i] = names[i];
	}
	x->t.kind = "ring";
	x->t.live_kind = "ring";
	x->t.edges = x->ep;
	x->t.n_edges = 3;
	x->t.order = x->order;
	x->t.n_order = 3;
	x->t.order_valid = 1;
}

static void test_topology_diff(void **state)
{
	struct event_base *base = event_base_new();
	struct feed *f = feed_new(base);
	struct evbuffer *b = evbuffer_new();
	struct got g = {0};
	struct topo x;
	char why[128], *cut[] = {"n1-n2"}, *down[] = {"n3"};
	double gbps[2] = {9.1, 9.4};
	struct evbuffer *b2;
	struct feed_sub *s2;

	(void)state;
	topo_init(&x);
	feed_topology(f, &x.t); /* the first only records */
	assert_non_null(feed_subscribe(f, b, 9, 0, FEED_ALL, &x.t, "healthy",
				       gone, NULL, why, sizeof(why)));
	got_read(b, &g);
	assert_int_equal(g.n, 1);
	assert_string_equal(got_ev(&g, 0)->kind, "snapshot");
	assert_int_equal(got_ev(&g, 0)->n_edges, 3);
	assert_string_equal(got_ev(&g, 0)->edges[1]->edge, "n2-n3");
	assert_string_equal(got_ev(&g, 0)->edges[1]->state, "up");
	assert_non_null(strstr(got_ev(&g, 0)->text, "healthy; ring n1 n2 n3"));
	assert_true(got_ev(&g, 0)->order_valid);
	got_free(&g);

	feed_topology(f, &x.t); /* no change, no event */
	assert_int_equal(evbuffer_get_length(b), 0);

	x.e[0].live_state = "down";
	x.e[0].live_reason = "n1 eth1: no carrier";
	x.t.live_kind = "line";
	x.t.live_gap = "n1-n2";
	x.t.live_cables_down = cut;
	x.t.n_live_cables_down = 1;
	x.t.order_valid = 0;
	x.t.order_invalid = "cable n1-n2 down";
	feed_topology(f, &x.t);
	got_read(b, &g);
	assert_int_equal(g.n, 3);
	assert_string_equal(got_ev(&g, 0)->kind, "edge");
	assert_string_equal(got_ev(&g, 0)->subject, "n1-n2");
	assert_string_equal(got_ev(&g, 0)->state, "down");
	assert_string_equal(got_ev(&g, 0)->previous, "up");
	assert_string_equal(got_ev(&g, 0)->reason, "n1 eth1: no carrier");
	assert_string_equal(got_ev(&g, 1)->kind, "topology");
	assert_string_equal(got_ev(&g, 1)->state, "line");
	assert_string_equal(got_ev(&g, 1)->previous, "ring");
	assert_string_equal(got_ev(&g, 1)->text,
			    "ring -> line: the cable n1-n2 is down");
	assert_string_equal(got_ev(&g, 2)->subject, "ranks");
	assert_string_equal(got_ev(&g, 2)->state, "invalid");
	got_free(&g);
	/* A new watcher's snapshot says the same from the same data. */
	b2 = evbuffer_new();
	s2 = feed_subscribe(f, b2, 9, 0, FEED_ALL, &x.t, "critical", gone, NULL,
			    why, sizeof(why));
	assert_non_null(s2);
	got_read(b2, &g);
	assert_non_null(strstr(got_ev(&g, 0)->text,
			       "ring n1 n2 n3, now a line: the cable n1-n2 is "
			       "down; 3 edges"));
	got_free(&g);
	feed_unsubscribe(s2);
	evbuffer_free(b2);

	/* Mended, then a node down instead: the words say a node. */
	x.e[0].live_state = "up";
	x.t.live_kind = "ring";
	x.t.n_live_cables_down = 0;
	feed_topology(f, &x.t);
	got_read(b, &g);
	got_free(&g);
	x.t.live_kind = "line";
	x.t.live_gap = "n3 down";
	x.t.live_nodes_down = down;
	x.t.n_live_nodes_down = 1;
	feed_topology(f, &x.t);
	got_read(b, &g);
	assert_true(g.n >= 1);
	for (size_t i = 0; i < g.n; i++)
		if (!strcmp(got_ev(&g, i)->kind, "topology"))
			assert_string_equal(got_ev(&g, i)->text,
					    "ring -> line: n3 is down");
	got_free(&g);
	x.t.n_live_nodes_down = 0;

	/* A publish: one measurement per edge. */
	x.e[1].gbps_a_to_b = gbps;
	x.e[1].n_gbps_a_to_b = 2;
	x.e[1].gbps_b_to_a = gbps;
	x.e[1].n_gbps_b_to_a = 1;
	x.e[1].method = "tcp";
	feed_published(f, &x.t);
	got_read(b, &g);
	assert_int_equal(g.n, 3);
	assert_string_equal(got_ev(&g, 1)->kind, "measurement");
	assert_non_null(got_ev(&g, 1)->measurement);
	assert_string_equal(got_ev(&g, 1)->measurement->edge, "n2-n3");
	assert_true(got_ev(&g, 1)->measurement->gbps_a_to_b == 9.4);
	assert_true(got_ev(&g, 1)->measurement->gbps_b_to_a == 9.1);
	assert_true(got_ev(&g, 0)->measurement->gbps_a_to_b < 0);
	assert_non_null(strstr(got_ev(&g, 1)->text, "9.40/9.10 Gbps (tcp)"));
	got_free(&g);
	feed_free(f);
	evbuffer_free(b);
	event_base_free(base);
}

static void test_nodes_diff(void **state)
{
	struct event_base *base = event_base_new();
	struct feed *f = feed_new(base);
	struct evbuffer *b = evbuffer_new();
	struct nodes *t = nodes_new();
	struct node *n1, *n2;
	struct got g = {0};

	(void)state;
	n1 = nodes_get(t, "n1", 100);
	n2 = nodes_get(t, "n2", 100);
	assert_non_null(n1);
	assert_non_null(n2);
	feed_nodes(f, t); /* the baseline */
	assert_non_null(sub(f, b, 1, 0, FEED_NODE));
	got_read(b, &g);
	got_free(&g);
	nodes_mark_up(n1, (void *)1, "10.0.0.1", "1", 1000);
	feed_nodes(f, t);
	nodes_mark_down(n1, "heartbeat timeout", 2000);
	assert_non_null(nodes_get(t, "n0", 100));
	feed_nodes(f, t);
	assert_int_equal(nodes_remove(t, "n2"), 0);
	feed_nodes(f, t);
	got_read(b, &g);
	assert_int_equal(g.n, 4);
	assert_string_equal(got_ev(&g, 0)->subject, "n1");
	assert_string_equal(got_ev(&g, 0)->state, "up");
	assert_string_equal(got_ev(&g, 1)->subject, "n0");
	assert_string_equal(got_ev(&g, 1)->previous, "");
	assert_string_equal(got_ev(&g, 2)->subject, "n1");
	assert_string_equal(got_ev(&g, 2)->state, "down");
	assert_string_equal(got_ev(&g, 2)->reason, "heartbeat timeout");
	assert_string_equal(got_ev(&g, 3)->subject, "n2");
	assert_string_equal(got_ev(&g, 3)->state, "gone");
	got_free(&g);
	feed_free(f);
	nodes_free(t);
	evbuffer_free(b);
	event_base_free(base);
}

/* Following the table's journal says what diffing the whole table says:
 * a flap back to the state last seen is no event, a forgotten and re-added
 * node is a change, and more changes than the journal holds are diffed
 * whole, each node's event in name order. */
static void test_nodes_journal(void **state)
{
	struct event_base *base = event_base_new();
	struct feed *f = feed_new(base);
	struct evbuffer *b = evbuffer_new();
	struct nodes *t = nodes_new();
	struct node *v[40];
	struct got g = {0};
	char name[16];

	(void)state;
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "m%02d", 39 - i);
		v[i] = nodes_get(t, name, 100);
		assert_non_null(v[i]);
	}
	feed_nodes(f, t);
	assert_non_null(sub(f, b, 1, 0, FEED_NODE));
	got_read(b, &g);
	got_free(&g);
	/* Up, seen; down and up again before the next look: nothing. */
	nodes_mark_up(v[0], (void *)1, "10.0.0.1", "1", 1000);
	feed_nodes(f, t);
	nodes_mark_down(v[0], "closed", 2000);
	nodes_mark_up(v[0], (void *)1, "10.0.0.1", "1", 3000);
	feed_nodes(f, t);
	got_read(b, &g);
	assert_int_equal(g.n, 1);
	assert_string_equal(got_ev(&g, 0)->subject, "m39");
	assert_string_equal(got_ev(&g, 0)->state, "up");
	got_free(&g);
	/* Down, forgotten, back as never: one change, down to never. */
	nodes_mark_down(v[1], "closed", 4000);
	feed_nodes(f, t);
	assert_int_equal(nodes_remove(t, "m38"), 0);
	v[1] = nodes_get(t, "m38", 100);
	feed_nodes(f, t);
	got_read(b, &g);
	assert_int_equal(g.n, 2);
	assert_string_equal(got_ev(&g, 1)->subject, "m38");
	assert_string_equal(got_ev(&g, 1)->previous, "down");
	assert_string_equal(got_ev(&g, 1)->state, "never");
	got_free(&g);
	/* 80 changes at once: past the journal, the whole table. */
	for (int i = 0; i < 40; i++) {
		if (v[i]->state != NODE_UP)
			nodes_mark_up(v[i], (void *)1, "10.0.0.1", "1", 5000);
		nodes_mark_down(v[i], "closed", 6000);
	}
	feed_nodes(f, t);
	got_read(b, &g);
	assert_int_equal(g.n, 40);
	for (size_t i = 0; i < g.n; i++)
		assert_string_equal(got_ev(&g, i)->state, "down");
	for (size_t i = 1; i < g.n; i++)
		assert_true(strcmp(got_ev(&g, i - 1)->subject,
				   got_ev(&g, i)->subject) < 0);
	got_free(&g);
	/* And it goes on from there, change by change. */
	nodes_mark_up(v[5], (void *)1, "10.0.0.1", "1", 7000);
	nodes_mark_up(v[2], (void *)1, "10.0.0.1", "1", 7000);
	feed_nodes(f, t);
	got_read(b, &g);
	assert_int_equal(g.n, 2);
	assert_string_equal(got_ev(&g, 0)->subject, "m34");
	assert_string_equal(got_ev(&g, 1)->subject, "m37");
	got_free(&g);
	feed_free(f);
	nodes_free(t);
	evbuffer_free(b);
	event_base_free(base);
}

/* The health event: only to those who want it (or all kinds), its word,
 * the one before, its cause and a line that says clearing; a resolved
 * alert's event says what cleared, with the clearing fields. */
static void test_health_event(void **state)
{
	struct event_base *base = event_base_new();
	struct feed *f = feed_new(base);
	struct evbuffer *b = evbuffer_new(), *b2 = evbuffer_new();
	char *names[] = {"health"};
	struct alert a = {.rule = "cable_down",
			  .subject = "n1-n2",
			  .edge = "n1-n2",
			  .severity = ALERT_CRITICAL,
			  .message = "cable n1-n2 is down",
			  .first_seen_ms = 1000,
			  .cleared_ms = 5000,
			  .resolved_ms = 8000,
			  .resolved_message = "cable n1-n2 is back after 4 s"};
	struct got g = {0};
	unsigned mask;
	char why[128];

	(void)state;
	assert_int_equal(feed_kinds_parse(names, 1, &mask, why, sizeof(why)),
			 0);
	assert_true(mask & FEED_HEALTH);
	assert_false(mask & FEED_ALERT);
	assert_non_null(sub(f, b, 7, 0, mask));
	assert_non_null(sub(f, b2, 8, 0, FEED_ALERT));
	feed_health(f, "critical", "healthy", "cable_down", 0,
		    "cable n1-n2 is down");
	feed_health(f, "critical", "critical", "cable_down", 1,
		    "cable n1-n2 is down (clearing)");
	feed_alert(f, &a, ALERT_EV_RESOLVED);
	feed_health(f, "healthy", "critical", "", 0, "");
	got_read(b, &g);
	assert_int_equal(g.n, 4); /* the snapshot, three health events */
	assert_string_equal(got_ev(&g, 1)->kind, "health");
	assert_string_equal(got_ev(&g, 1)->subject, "ring");
	assert_string_equal(got_ev(&g, 1)->state, "critical");
	assert_string_equal(got_ev(&g, 1)->previous, "healthy");
	assert_string_equal(got_ev(&g, 1)->reason, "cable_down");
	assert_string_equal(got_ev(&g, 1)->text,
			    "healthy -> critical: cable_down: cable n1-n2 is "
			    "down");
	assert_non_null(strstr(got_ev(&g, 2)->text, "critical (clearing)"));
	assert_string_equal(got_ev(&g, 3)->state, "healthy");
	assert_string_equal(got_ev(&g, 3)->text, "critical -> healthy");
	got_free(&g);
	got_read(b2, &g);
	assert_int_equal(g.n, 2); /* the snapshot, the alert */
	assert_string_equal(got_ev(&g, 1)->state, "resolved");
	assert_string_equal(got_ev(&g, 1)->text,
			    "cable_down n1-n2 resolved critical: cable n1-n2 "
			    "is back after 4 s");
	assert_int_equal(got_ev(&g, 1)->alert->cleared_ms, 5000);
	assert_int_equal(got_ev(&g, 1)->alert->resolved_ms, 8000);
	assert_string_equal(got_ev(&g, 1)->alert->resolved_message,
			    "cable n1-n2 is back after 4 s");
	got_free(&g);
	feed_free(f);
	evbuffer_free(b);
	evbuffer_free(b2);
	event_base_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_snapshot_and_packing),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_slow_subscriber),
		cmocka_unit_test(test_lost_event),
		cmocka_unit_test(test_topology_diff),
		cmocka_unit_test(test_nodes_diff),
		cmocka_unit_test(test_nodes_journal),
		cmocka_unit_test(test_health_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
