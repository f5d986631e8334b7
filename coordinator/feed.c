/* The live feed: subscribers, bounded output, and the diffs that turn the
 * coordinator's callbacks into events. */
#include "feed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "clock.h"
#include "frame.h"
#include "log.h"
#include "text.h"
#include "topoview.h"

#define FEED_STATE_LEN 24
#define FEED_CLASS_LEN 32

struct feed_sub {
	struct feed *feed;
	struct evbuffer *out;
	struct evbuffer_cb_entry *out_cb;
	struct event *ev; /* stall timer; made active once caught up */
	uint64_t request_id;
	uid_t uid;
	unsigned kinds;
	int behind;	 /* output past FEED_OUT_HIGH: counting, not queuing */
	int caught_up;	 /* ev fires for the `lost` event, not a stall */
	uint64_t missed; /* events left out while behind */
	feed_gone_fn gone;
	void *arg;
	LIST_ENTRY(feed_sub) link;
};

struct feed_edge {
	char name[ALERTS_EDGE_LEN];
	char state[FEED_STATE_LEN];
};

struct feed_node {
	char name[sizeof(((struct node *)0)->name)];
	enum node_state state;
};

struct feed {
	struct event_base *base;
	struct event *keepalive_ev; /* pending while anyone watches */
	LIST_HEAD(, feed_sub) subs;
	unsigned n_subs, n_group;
	uint64_t packed, dropped;
	/* What the live view was at the last evaluation. */
	int have_topo;
	char cls[FEED_CLASS_LEN];
	int order_valid;
	struct feed_edge *edges;
	size_t n_edges;
	/* The node table as last seen, by name, and the number of the
	 * table's last change then (nodes_changes). */
	int have_nodes;
	struct feed_node **nodes;
	size_t n_nodes;
	uint64_t nodes_seen;
};

static const struct {
	const char *name;
	unsigned bit;
} feed_kind_names[] = {
	{"node", FEED_NODE},	     {"edge", FEED_EDGE},
	{"topology", FEED_TOPOLOGY}, {"alert", FEED_ALERT},
	{"survey", FEED_SURVEY},     {"measurement", FEED_MEASUREMENT},
	{"health", FEED_HEALTH},
};

static unsigned feed_kind_bit(const char *kind)
{
	for (size_t i = 0;
	     i < sizeof(feed_kind_names) / sizeof(*feed_kind_names); i++)
		if (!strcmp(kind, feed_kind_names[i].name))
			return feed_kind_names[i].bit;
	return FEED_ALWAYS;
}

int feed_kinds_parse(char *const *names, size_t n, unsigned *mask, char *why,
		     size_t whylen)
{
	*mask = n ? FEED_ALWAYS : FEED_ALL;
	for (size_t i = 0; i < n; i++) {
		unsigned bit = feed_kind_bit(names[i]);

		if (bit == FEED_ALWAYS) {
			snprintf(why, whylen,
				 "unknown event kind '%.32s' (node, edge, "
				 "topology, alert, health, survey, "
				 "measurement)",
				 names[i]);
			errno = EINVAL;
			return -1;
		}
		*mask |= bit;
	}
	return 0;
}

static void feed_keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	feed_keepalive(arg);
}

struct feed *feed_new(struct event_base *base)
{
	struct feed *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->base = base;
	f->keepalive_ev = event_new(base, -1, EV_PERSIST, feed_keepalive_cb, f);
	if (!f->keepalive_ev) {
		free(f);
		return NULL;
	}
	f->order_valid = -1;
	LIST_INIT(&f->subs);
	return f;
}

void feed_unsubscribe(struct feed_sub *s)
{
	struct feed *f;

	if (!s)
		return;
	f = s->feed;
	LIST_REMOVE(s, link);
	f->n_subs--;
	f->n_group -= s->uid != 0;
	if (!f->n_subs)
		evtimer_del(f->keepalive_ev); /* no wake-ups for nobody */
	if (s->out_cb)
		evbuffer_remove_cb_entry(s->out, s->out_cb);
	if (s->ev)
		event_free(s->ev);
	free(s);
}

void feed_free(struct feed *f)
{
	if (!f)
		return;
	while (!LIST_EMPTY(&f->subs))
		feed_unsubscribe(LIST_FIRST(&f->subs));
	event_free(f->keepalive_ev);
	free(f->edges);
	for (size_t i = 0; i < f->n_nodes; i++)
		free(f->nodes[i]);
	free(f->nodes);
	free(f);
}

void feed_keepalive(struct feed *f)
{
	Ring__WatchEvent ev = RING__WATCH_EVENT__INIT;

	ev.kind = "keepalive";
	ev.subject = "watch";
	feed_publish(f, &ev);
}

unsigned feed_watchers(const struct feed *f)
{
	return f->n_subs;
}

uint64_t feed_packed(const struct feed *f)
{
	return f->packed;
}

uint64_t feed_dropped(const struct feed *f)
{
	return f->dropped;
}

static const char *feed_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

/* One packed event (an Envelope without a request id) as a frame for s:
 * the id goes in front of the body (protobuf takes fields in any order),
 * so the body is packed once for everyone. */
static int feed_append(struct feed_sub *s, const uint8_t *body, size_t len)
{
	uint8_t hdr[FRAME_HEADER_LEN], id[11];
	size_t n = 0;
	uint64_t v = s->request_id;

	if (v) {
		id[n++] = 0x08; /* field 1, varint */
		do {
			id[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			v >>= 7;
		} while (v);
	}
	frame_header_encode(hdr, RING__ENVELOPE__BODY_WATCH_EVENT,
			    (uint32_t)(n + len));
	if (evbuffer_expand(s->out, sizeof(hdr) + n + len) < 0 ||
	    evbuffer_add(s->out, hdr, sizeof(hdr)) < 0 ||
	    (n && evbuffer_add(s->out, id, n) < 0) ||
	    evbuffer_add(s->out, body, len) < 0)
		return -1;
	return 0;
}

static void feed_behind(struct feed_sub *s)
{
	struct timeval tv = {.tv_sec = FEED_STALL_MS / 1000,
			     .tv_usec = (FEED_STALL_MS % 1000) * 1000};

	s->behind = 1;
	s->caught_up = 0;
	evtimer_add(s->ev, &tv);
	evbuffer_cb_set_flags(s->out, s->out_cb, EVBUFFER_CB_ENABLED);
}

static void feed_pack(const Ring__WatchEvent *ev, uint8_t **buf, size_t *len)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;

	env.body_case = RING__ENVELOPE__BODY_WATCH_EVENT;
	env.watch_event = (Ring__WatchEvent *)ev;
	*len = ring__envelope__get_packed_size(&env);
	*buf = malloc(*len ? *len : 1);
	if (*buf)
		ring__envelope__pack(&env, *buf);
}

/* To one subscriber, or counted as missed while it is behind. */
static void feed_offer(struct feed_sub *s, const uint8_t *buf, size_t len)
{
	struct feed *f = s->feed;

	if (s->behind || !buf) {
		s->missed++;
		f->dropped++;
		return;
	}
	if (feed_append(s, buf, len) < 0) {
		s->missed++;
		f->dropped++;
		feed_behind(s);
		return;
	}
	if (evbuffer_get_length(s->out) > FEED_OUT_HIGH)
		feed_behind(s);
}

void feed_publish(struct feed *f, const Ring__WatchEvent *ev)
{
	Ring__WatchEvent copy = *ev;
	unsigned bit = feed_kind_bit(ev->kind);
	struct feed_sub *s;
	uint8_t *buf = NULL;
	size_t len = 0;
	int any = 0;

	LIST_FOREACH(s, &f->subs, link)
	any |= !!(s->kinds & bit);
	if (!any)
		return;
	if (!copy.ts_ms)
		copy.ts_ms = clock_now_ms();
	feed_pack(&copy, &buf, &len);
	if (buf)
		f->packed++;
	else
		log_warnx("feed: out of memory packing a %s event", ev->kind);
	LIST_FOREACH(s, &f->subs, link)
	if (s->kinds & bit)
		feed_offer(s, buf, len);
	free(buf);
}

/* Caught up (or stalled too long): from the loop, never from inside the
 * buffer operation that noticed. */
static void feed_sub_event(evutil_socket_t fd, short what, void *arg)
{
	struct feed_sub *s = arg;
	Ring__WatchEvent ev = RING__WATCH_EVENT__INIT;
	uint8_t *buf;
	size_t len;
	char text[128];

	(void)fd;
	(void)what;
	if (!s->caught_up) {
		s->gone(s, "not reading its events", s->arg);
		return;
	}
	s->caught_up = 0;
	s->behind = 0;
	ev.ts_ms = clock_now_ms();
	ev.kind = "lost";
	ev.subject = "watch";
	snprintf(text, sizeof(text),
		 "%llu events missed: this watcher read too slowly",
		 (unsigned long long)s->missed);
	ev.text = text;
	ev.missed = s->missed;
	feed_pack(&ev, &buf, &len);
	if (buf && feed_append(s, buf, len) == 0)
		s->missed = 0;
	else
		feed_behind(s); /* try again once more has drained */
	free(buf);
}

static void feed_sub_output(struct evbuffer *out,
			    const struct evbuffer_cb_info *info, void *arg)
{
	struct feed_sub *s = arg;

	if (!info->n_deleted || !s->behind || s->caught_up ||
	    evbuffer_get_length(out) > FEED_OUT_LOW)
		return;
	evbuffer_cb_clear_flags(out, s->out_cb, EVBUFFER_CB_ENABLED);
	evtimer_del(s->ev);
	s->caught_up = 1;
	event_active(s->ev, EV_TIMEOUT, 1);
}

/* The summary of t for the snapshot's text: "ring n1 n2 n3; 3 edges: 3
 * up, 0 down, 0 other; rank order valid". */
static void feed_summary(const Ring__Topology *t, char *text, size_t len)
{
	size_t up = 0, down = 0, used;

	for (size_t i = 0; i < t->n_edges; i++) {
		up += !strcmp(t->edges[i]->live_state, "up");
		down += !strcmp(t->edges[i]->live_state, "down");
	}
	used = (size_t)snprintf(text, len, "%s", t->kind);
	/* The order of a big ring is in ranks, not in one line. */
	for (size_t i = 0; i < t->n_order && used < 200; i++)
		used += (size_t)snprintf(text + used, len - used, " %s",
					 t->order[i]);
	if (used < len && (t->n_live_nodes_down || t->n_live_cables_down ||
			   (*t->live_kind && strcmp(t->live_kind, t->kind)))) {
		used += (size_t)snprintf(text + used, len - used, ", now ");
		if (used < len)
			used += topoview_live_text(t, 1, text + used,
						   len - used);
	}
	if (used < len)
		snprintf(text + used, len - used,
			 "; %zu edges: %zu up, %zu down, %zu other; rank "
			 "order %s",
			 t->n_edges, up, down, t->n_edges - up - down,
			 t->order_valid ? "valid" : "not valid");
}

/* The first event: the health, the class and every edge's live state. */
static void feed_snapshot(struct feed_sub *s, const Ring__Topology *t,
			  const char *health)
{
	Ring__WatchEvent ev = RING__WATCH_EVENT__INIT;
	size_t n = t ? t->n_edges : 0;
	Ring__WatchEdge *e = calloc(n ? n : 1, sizeof(*e));
	Ring__WatchEdge **ep = calloc(n ? n : 1, sizeof(*ep));
	char *names = calloc(n ? n : 1, ALERTS_EDGE_LEN);
	char text[512], summary[400];
	uint8_t *buf = NULL;
	size_t len = 0;

	if (!e || !ep || !names)
		n = 0; /* the summary without the list */
	for (size_t i = 0; i < n; i++) {
		char *name = names + i * ALERTS_EDGE_LEN;

		ring__watch_edge__init(&e[i]);
		text_edge_msg_name(name, ALERTS_EDGE_LEN, t->edges[i]);
		e[i].edge = name;
		e[i].state = t->edges[i]->live_state;
		e[i].reason = t->edges[i]->live_reason;
		ep[i] = &e[i];
	}
	ev.ts_ms = clock_now_ms();
	ev.kind = "snapshot";
	ev.subject = "ring";
	ev.state = (char *)(health ? health : "");
	if (t) {
		feed_summary(t, summary, sizeof(summary));
		ev.order_valid = t->order_valid;
		ev.reason = t->order_invalid;
	} else {
		snprintf(summary, sizeof(summary),
			 "no survey has completed yet");
	}
	snprintf(text, sizeof(text), "%s; %s", feed_or(ev.state, "unknown"),
		 summary);
	ev.text = text;
	ev.n_edges = n;
	ev.edges = ep;
	feed_pack(&ev, &buf, &len);
	if (buf)
		s->feed->packed++;
	feed_offer(s, buf, len);
	free(buf);
	free(names);
	free(ep);
	free(e);
}

struct feed_sub *feed_subscribe(struct feed *f, struct evbuffer *out,
				uint64_t request_id, uid_t uid, unsigned kinds,
				const Ring__Topology *t, const char *health,
				feed_gone_fn gone, void *arg, char *why,
				size_t whylen)
{
	struct feed_sub *s;
	unsigned mine = 0;

	LIST_FOREACH(s, &f->subs, link)
	mine += s->uid == uid;
	if (f->n_subs >= FEED_MAX_WATCHERS ||
	    (uid != 0 &&
	     (mine >= FEED_MAX_PER_UID ||
	      f->n_group >= FEED_MAX_WATCHERS - FEED_ROOT_RESERVE))) {
		snprintf(why, whylen,
			 "too many watchers (at most %u per user, %u in all, "
			 "%u of them kept for root); other requests still "
			 "answer",
			 FEED_MAX_PER_UID, FEED_MAX_WATCHERS,
			 FEED_ROOT_RESERVE);
		errno = EUSERS;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->ev = event_new(f->base, -1, 0, feed_sub_event, s);
	if (!s->ev)
		goto oom_s;
	s->out_cb = evbuffer_add_cb(out, feed_sub_output, s);
	if (!s->out_cb)
		goto oom_ev;
	evbuffer_cb_clear_flags(out, s->out_cb, EVBUFFER_CB_ENABLED);
	s->feed = f;
	s->out = out;
	s->request_id = request_id;
	s->uid = uid;
	s->kinds = kinds | FEED_ALWAYS;
	s->gone = gone;
	s->arg = arg;
	LIST_INSERT_HEAD(&f->subs, s, link);
	f->n_subs++;
	f->n_group += uid != 0;
	if (!evtimer_pending(f->keepalive_ev, NULL)) {
		struct timeval tv = {FEED_KEEPALIVE_MS / 1000,
				     (FEED_KEEPALIVE_MS % 1000) * 1000};

		evtimer_add(f->keepalive_ev, &tv);
	}
	feed_snapshot(s, t, health);
	return s;
oom_ev:
	event_free(s->ev);
oom_s:
	free(s);
oom:
	snprintf(why, whylen, "out of memory");
	errno = ENOMEM;
	return NULL;
}

/* ---- the sources ---- */

static void feed_event(struct feed *f, const char *kind, const char *subject,
		       const char *state, const char *previous,
		       const char *reason, const char *text)
{
	Ring__WatchEvent ev = RING__WATCH_EVENT__INIT;

	ev.kind = (char *)kind;
	ev.subject = (char *)subject;
	ev.state = (char *)(state ? state : "");
	ev.previous = (char *)(previous ? previous : "");
	ev.reason = (char *)(reason ? reason : "");
	ev.text = (char *)text;
	feed_publish(f, &ev);
}

/* The edge named name among prev, looked for first at hint (the order
 * holds between publishes, so this is one comparison per edge). */
static struct feed_edge *feed_edge_find(struct feed *f, const char *name,
					size_t hint)
{
	if (hint < f->n_edges && !strcmp(f->edges[hint].name, name))
		return &f->edges[hint];
	for (size_t i = 0; i < f->n_edges; i++)
		if (!strcmp(f->edges[i].name, name))
			return &f->edges[i];
	return NULL;
}

void feed_topology(struct feed *f, const Ring__Topology *t)
{
	struct feed_edge *now;
	char text[512];
	const char *cls;
	size_t n;

	if (!t) {
		f->have_topo = 0;
		f->n_edges = 0;
		return;
	}
	n = t->n_edges;
	now = calloc(n ? n : 1, sizeof(*now));
	if (!now) {
		log_warnx("feed: out of memory diffing the live view");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const Ring__Edge *e = t->edges[i];
		struct feed_edge *old;

		text_edge_msg_name(now[i].name, sizeof(now[i].name), e);
		snprintf(now[i].state, sizeof(now[i].state), "%s",
			 e->live_state);
		if (!f->have_topo)
			continue;
		old = feed_edge_find(f, now[i].name, i);
		if (old && !strcmp(old->state, now[i].state))
			continue;
		snprintf(text, sizeof(text), "%s %s -> %s%s%s", now[i].name,
			 old ? feed_or(old->state, "unknown") : "new",
			 feed_or(now[i].state, "unknown"),
			 *e->live_reason ? ": " : "", e->live_reason);
		feed_event(f, "edge", now[i].name, now[i].state,
			   old ? old->state : "", e->live_reason, text);
	}
	cls = *t->live_kind ? t->live_kind : t->kind;
	if (f->have_topo && strcmp(cls, f->cls)) {
		char now_text[400];

		topoview_live_text(t, 0, now_text, sizeof(now_text));
		snprintf(text, sizeof(text), "%s -> %s",
			 feed_or(f->cls, "unknown"), now_text);
		feed_event(f, "topology", "ring", cls, f->cls, t->live_gap,
			   text);
	}
	if (f->have_topo && f->order_valid >= 0 &&
	    f->order_valid != (int)t->order_valid) {
		Ring__WatchEvent ev = RING__WATCH_EVENT__INIT;

		snprintf(text, sizeof(text), "%s%s%s",
			 t->order_valid ? "rank order valid again"
					: "rank order no longer valid",
			 *t->order_invalid ? ": " : "", t->order_invalid);
		ev.kind = "topology";
		ev.subject = "ranks";
		ev.state = t->order_valid ? "valid" : "invalid";
		ev.previous = t->order_valid ? "invalid" : "valid";
		ev.reason = t->order_invalid;
		ev.order_valid = t->order_valid;
		ev.text = text;
		feed_publish(f, &ev);
	}
	free(f->edges);
	f->edges = now;
	f->n_edges = n;
	snprintf(f->cls, sizeof(f->cls), "%s", cls);
	f->order_valid = t->order_valid;
	f->have_topo = 1;
}

static double feed_top(const double *v, size_t n)
{
	return n ? v[n - 1] : -1;
}

void feed_published(struct feed *f, const Ring__Topology *t)
{
	char name[ALERTS_EDGE_LEN], text[512];
	size_t used;

	if (!t || !(f->n_subs))
		return;
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		Ring__WatchEvent ev = RING__WATCH_EVENT__INIT;
		Ring__WatchMeasurement m = RING__WATCH_MEASUREMENT__INIT;

		text_edge_msg_name(name, sizeof(name), e);
		m.edge = name;
		m.measured_ms = e->measured_ms;
		m.method = e->method;
		m.nominal_gbps = e->nominal_gbps;
		m.gbps_a_to_b = feed_top(e->gbps_a_to_b, e->n_gbps_a_to_b);
		m.gbps_b_to_a = feed_top(e->gbps_b_to_a, e->n_gbps_b_to_a);
		m.latency_p50_us = e->n_latency ? e->latency[0]->p50_us : -1;
		m.rdma_write_gbps_a_to_b = e->rdma_write_gbps_a_to_b;
		m.rdma_write_gbps_b_to_a = e->rdma_write_gbps_b_to_a;
		m.error = e->error;
		used = (size_t)snprintf(text, sizeof(text), "%s", name);
		if (m.gbps_a_to_b >= 0 || m.gbps_b_to_a >= 0)
			used += (size_t)snprintf(
				text + used, sizeof(text) - used,
				" %.2f/%.2f Gbps%s%s%s", m.gbps_a_to_b,
				m.gbps_b_to_a, *m.method ? " (" : "", m.method,
				*m.method ? ")" : "");
		if (m.latency_p50_us >= 0 && used < sizeof(text))
			used += (size_t)snprintf(text + used,
						 sizeof(text) - used,
						 ", %.1f us", m.latency_p50_us);
		if (m.rdma_write_gbps_a_to_b >= 0 && used < sizeof(text))
			used += (size_t)snprintf(text + used,
						 sizeof(text) - used,
						 ", rdma write %.2f/%.2f Gbps",
						 m.rdma_write_gbps_a_to_b,
						 m.rdma_write_gbps_b_to_a);
		if (*e->error && used < sizeof(text))
			snprintf(text + used, sizeof(text) - used, ", %s",
				 e->error);
		ev.kind = "measurement";
		ev.subject = name;
		ev.state = *e->error ? "failed" : "measured";
		ev.reason = e->error;
		ev.text = text;
		ev.measurement = &m;
		feed_publish(f, &ev);
	}
}

static void feed_node_changed(struct feed *f, const struct node *nd,
			      enum node_state was)
{
	char text[512];

	snprintf(text, sizeof(text), "%s %s -> %s%s%s", nd->name,
		 nodes_state_name(was), nodes_state_name(nd->state),
		 nd->state == NODE_DOWN && *nd->down_reason ? ": " : "",
		 nd->state == NODE_DOWN ? nd->down_reason : "");
	feed_event(f, "node", nd->name, nodes_state_name(nd->state),
		   nodes_state_name(was),
		   nd->state == NODE_DOWN ? nd->down_reason : "", text);
}

static void feed_node_new(struct feed *f, const struct node *nd)
{
	char text[512];

	snprintf(text, sizeof(text), "%s new, %s", nd->name,
		 nodes_state_name(nd->state));
	feed_event(f, "node", nd->name, nodes_state_name(nd->state), "", "",
		   text);
}

static void feed_node_gone(struct feed *f, const struct feed_node *was)
{
	char text[512];

	snprintf(text, sizeof(text), "%s forgotten", was->name);
	feed_event(f, "node", was->name, "gone", nodes_state_name(was->state),
		   "", text);
}

static void feed_nodes_drop(struct feed *f)
{
	for (size_t i = 0; i < f->n_nodes; i++)
		free(f->nodes[i]);
	free(f->nodes);
	f->nodes = NULL;
	f->n_nodes = 0;
}

/* The whole table against the one last seen, both sorted by name: one
 * merge. */
static void feed_nodes_diff(struct feed *f, struct nodes *table)
{
	struct feed_node **now;
	struct node **v;
	unsigned n, made = 0;
	size_t j = 0;

	v = nodes_sorted(table, &n);
	if (!v)
		return;
	now = calloc(n ? n : 1, sizeof(*now));
	for (; now && made < n; made++) {
		now[made] = malloc(sizeof(**now));
		if (!now[made])
			break;
	}
	if (!now || made < n) {
		for (unsigned i = 0; now && i < made; i++)
			free(now[i]);
		free(now);
		free(v);
		log_warnx("feed: out of memory diffing the node table");
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct node *nd = v[i];

		snprintf(now[i]->name, sizeof(now[i]->name), "%s", nd->name);
		now[i]->state = nd->state;
		for (; f->have_nodes && j < f->n_nodes &&
		       strcmp(f->nodes[j]->name, nd->name) < 0;
		     j++)
			feed_node_gone(f, f->nodes[j]);
		if (!f->have_nodes)
			continue;
		if (j < f->n_nodes && !strcmp(f->nodes[j]->name, nd->name)) {
			enum node_state was = f->nodes[j++]->state;

			if (was != nd->state)
				feed_node_changed(f, nd, was);
		} else {
			feed_node_new(f, nd);
		}
	}
	for (; f->have_nodes && j < f->n_nodes; j++)
		feed_node_gone(f, f->nodes[j]);
	free(v);
	feed_nodes_drop(f);
	f->nodes = now;
	f->n_nodes = n;
	f->have_nodes = 1;
}

/* Where name is, or would go, among the nodes last seen. */
static size_t feed_node_pos(const struct feed *f, const char *name)
{
	size_t lo = 0, hi = f->n_nodes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(f->nodes[mid]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* One name of the journal: what the merge would say of it. 0, or -1 out
 * of memory (the caller diffs the whole table). */
static int feed_node_one(struct feed *f, struct nodes *table, const char *name)
{
	const struct node *nd = nodes_find(table, name);
	size_t pos = feed_node_pos(f, name);
	int had = pos < f->n_nodes && !strcmp(f->nodes[pos]->name, name);
	struct feed_node *fn;

	if (had && nd) {
		enum node_state was = f->nodes[pos]->state;

		if (was != nd->state) {
			f->nodes[pos]->state = nd->state;
			feed_node_changed(f, nd, was);
		}
	} else if (had) {
		fn = f->nodes[pos];
		memmove(&f->nodes[pos], &f->nodes[pos + 1],
			(f->n_nodes - pos - 1) * sizeof(*f->nodes));
		f->n_nodes--;
		feed_node_gone(f, fn);
		free(fn);
	} else if (nd) {
		struct feed_node **v =
			realloc(f->nodes, (f->n_nodes + 1) * sizeof(*v));

		fn = malloc(sizeof(*fn));
		if (v)
			f->nodes = v;
		if (!v || !fn) {
			free(fn);
			return -1;
		}
		snprintf(fn->name, sizeof(fn->name), "%s", nd->name);
		fn->state = nd->state;
		memmove(&f->nodes[pos + 1], &f->nodes[pos],
			(f->n_nodes - pos) * sizeof(*f->nodes));
		f->nodes[pos] = fn;
		f->n_nodes++;
		feed_node_new(f, nd);
	}
	return 0;
}

static int feed_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Only the nodes the table's journal names since the last call can have
 * changed: the same events, in the same (name) order, as diffing the
 * whole table, without walking every node on every change of one. */
void feed_nodes(struct feed *f, struct nodes *table)
{
	uint64_t last = nodes_changes(table);
	char names[NODES_JOURNAL][sizeof(((struct node *)0)->name)];
	const char *v[NODES_JOURNAL];
	size_t k = 0;

	if (f->have_nodes && last == f->nodes_seen)
		return;
	if (!f->have_nodes || last - f->nodes_seen > NODES_JOURNAL) {
		feed_nodes_diff(f, table);
		f->nodes_seen = last;
		return;
	}
	/* Copied: the events' subscribers run nothing that changes the
	 * table, but the journal is the table's. */
	for (uint64_t seq = f->nodes_seen + 1; seq <= last; seq++) {
		snprintf(names[k], sizeof(names[k]), "%s",
			 nodes_change_name(table, seq));
		v[k] = names[k];
		k++;
	}
	qsort(v, k, sizeof(*v), feed_name_cmp);
	f->nodes_seen = last;
	for (size_t i = 0; i < k; i++) {
		if (i && !strcmp(v[i], v[i - 1]))
			continue;
		if (feed_node_one(f, table, v[i]) < 0) {
			log_warnx("feed: out of memory following the node "
				  "table");
			feed_nodes_diff(f, table);
			return;
		}
	}
}

void feed_alert(struct feed *f, const struct alert *a, enum alert_event ev)
{
	static const char *const sev[] = {"info", "warning", "critical"};
	Ring__WatchEvent w = RING__WATCH_EVENT__INIT;
	Ring__Alert al = RING__ALERT__INIT;
	const char *what = ev == ALERT_EV_FIRED	     ? "fired"
			   : ev == ALERT_EV_RESOLVED ? "resolved"
						     : "changed";
	/* A resolved one says what cleared, not what fired. */
	const char *msg = ev == ALERT_EV_RESOLVED && *a->resolved_message
				  ? a->resolved_message
				  : a->message;
	char text[1200];

	if (!f->n_subs)
		return;
	alerts_to_wire(a, &al);
	snprintf(text, sizeof(text), "%s %s %s %s: %s", a->rule, a->subject,
		 what, (unsigned)a->severity < 3 ? sev[a->severity] : "?", msg);
	w.kind = "alert";
	w.subject = (char *)a->subject;
	w.state = (char *)what;
	w.text = text;
	w.alert = &al;
	feed_publish(f, &w);
}

void feed_survey(struct feed *f, enum survey_event ev, const char *what,
		 const char *reason, const char *failure)
{
	const char *state = ev == SURVEY_STARTED ? "started"
			    : failure		 ? "failed"
						 : "done";
	const char *why = ev == SURVEY_STARTED ? reason : failure;
	char text[512];

	snprintf(text, sizeof(text), "%s %s%s%s", feed_or(what, "survey"),
		 state, why && *why ? ": " : "", why ? why : "");
	feed_event(f, "survey", feed_or(what, "survey"), state, "", why, text);
}

void feed_health(struct feed *f, const char *state, const char *previous,
		 const char *cause, int clearing, const char *text)
{
	char line[768];

	if (!f || !f->n_subs)
		return;
	snprintf(line, sizeof(line), "%s%s%s%s%s%s%s%s", feed_or(previous, ""),
		 previous && *previous ? " -> " : "", feed_or(state, "?"),
		 clearing ? " (clearing)" : "", cause && *cause ? ": " : "",
		 feed_or(cause, ""), text && *text ? ": " : "",
		 feed_or(text, ""));
	feed_event(f, "health", "ring", state, previous, cause, line);
}

void feed_shutdown(struct feed *f)
{
	feed_event(f, "shutdown", "coordinator", "stopping", "", "",
		   "the coordinator is shutting down");
}
