/* The ringctl control socket: requests, their deadlines and the per-user
 * caps. */
#include "control.h"

#include <errno.h>
#include <grp.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "arlast.h"
#include "clock.h"
#include "conn.h"
#include "coord_conf.h"
#include "counters_eval.h"
#include "feed.h"
#include "health.h"
#include "nodes.h"
#include "log.h"
#include "manual_tests.h"
#include "readrelay.h"
#include "resolve_fanout.h"
#include "survey.h"
#include "testlimits.h"
#include "text.h"

/* A whole request must arrive within this long of accept, or of the
 * previous request on a kept connection: an absolute deadline, so a client
 * trickling bytes cannot hold its slot (a read timeout would be renewed by
 * each byte). A client waiting for its test has the test's deadline. */
#define CONTROL_REQUEST_MS 5000
/* Memory is bounded by the slot count: a client holds at most one frame of
 * input, its paused input and its output up to the watermark (+ a reply). */
#define CONTROL_MAX_CLIENTS 64
/* Slots the control group can never take: root's `ringctl` always gets in. */
#define CONTROL_ROOT_RESERVE 16
#define CONTROL_MAX_PER_UID 8
/* Host-name lookups on every node (ResolveRequest) in flight for users
 * other than root: one per user, this many for them all (the agents keep
 * root's apart as well). */
#define CONTROL_GROUP_LOOKUPS 4
/* A control request is a few hundred bytes; agents' max_frame (1 MiB) would
 * let each client park a megabyte. */
#define CONTROL_MAX_FRAME (64u << 10)
/* Stop reading a client's requests while this much of its replies waits
 * (pipelined requests whose replies are not read); resume below LOW. */
#define CONTROL_OUT_HIGH (1u << 20)
#define CONTROL_OUT_LOW (256u << 10)
/* Refusals are logged at most this often: a flood must not flood the log. */
#define CONTROL_REFUSE_LOG_MS 10000

struct client {
	struct control *ctl;
	struct conn *conn;
	uid_t uid;
	struct event *deadline;		  /* CONTROL_REQUEST_MS, absolute */
	struct evbuffer *paused;	  /* input held while output drains */
	struct evbuffer_cb_entry *out_cb; /* watches the output draining */
	int in_msg;			  /* inside control_msg */
	int dead;		  /* closed inside control_msg: free there */
	struct survey_test *test; /* a test this client waits for */
	uint64_t test_id;
	int test_adjacent; /* the pair's adjacency in the last survey */
	struct survey_allreduce *ar; /* an all-reduce this client waits for */
	struct resolve_fanout *resolve; /* a lookup on every node */
	uint64_t resolve_id;
	struct readrelay *read; /* read tests this client waits for */
	uint64_t read_id;
	uint64_t ar_id;
	/* A watcher: the connection is a stream of events (feed.h), counted
	 * by the feed's bounds instead of the clients'. */
	struct feed_sub *watch;
	LIST_ENTRY(client) link;
};

struct control {
	struct event_base *base;
	const struct coord_conf *conf;
	struct nodes *nodes;
	struct survey *survey;
	const struct control_view *view;
	struct feed *feed;
	struct evconnlistener *listener;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	LIST_HEAD(, client) clients;
	unsigned n_clients;
	unsigned n_group; /* clients other than root */
	uint64_t refuse_logged_ms;
	unsigned refuse_quiet; /* refusals not logged since */
	/* The last successful all-reduce per number of ranks: the next
	 * one's comparison, plan --layers' figures; kept in the store when
	 * there is one (control_set_store). */
	struct arlast ar_last;
	struct store_keeper *keeper;
};

static void client_free(struct client *cl)
{
	struct control *ctl = cl->ctl;

	LIST_REMOVE(cl, link);
	if (cl->watch) {
		feed_unsubscribe(cl->watch);
	} else {
		ctl->n_clients--;
		ctl->n_group -= cl->uid != 0;
	}
	manual_test_cancel(cl->test);
	manual_allreduce_cancel(cl->ar);
	resolve_fanout_cancel(cl->resolve);
	readrelay_cancel(cl->read);
	if (cl->deadline)
		event_free(cl->deadline);
	/* The bufferevent may outlive us (freed after the callback that is
	 * running): its output must not call back into a freed client. */
	if (cl->out_cb)
		evbuffer_remove_cb_entry(
			bufferevent_get_output(conn_bev(cl->conn)), cl->out_cb);
	if (cl->paused)
		evbuffer_free(cl->paused);
	conn_free(cl->conn);
	free(cl);
}

/* A new request may start: it has CONTROL_REQUEST_MS to arrive whole. */
static void client_arm(struct client *cl)
{
	struct timeval tv = {.tv_sec = CONTROL_REQUEST_MS / 1000,
			     .tv_usec = (CONTROL_REQUEST_MS % 1000) * 1000};

	if (cl->test || cl->watch || cl->ar || cl->resolve || cl->read)
		evtimer_del(cl->deadline); /* the test's own deadline rules;
					    * a stream has none */
	else
		evtimer_add(cl->deadline, &tv);
}

static void client_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct client *cl = arg;

	(void)fd;
	(void)what;
	/* Debug only: a local user could otherwise fill the log. */
	log_debug("control", "%s: no complete request within %u ms; closing",
		  conn_peer(cl->conn), CONTROL_REQUEST_MS);
	client_free(cl);
}

/* Replies are piling up unread: take the rest of the input out of the
 * connection's reach (its read loop stops at an empty buffer) and stop
 * reading until the output drains. */
static void client_pause(struct client *cl)
{
	struct bufferevent *bev = conn_bev(cl->conn);

	if (evbuffer_get_length(bufferevent_get_output(bev)) <=
	    CONTROL_OUT_HIGH)
		return;
	bufferevent_disable(bev, EV_READ);
	evbuffer_add_buffer(cl->paused, bufferevent_get_input(bev));
	evbuffer_cb_set_flags(bufferevent_get_output(bev), cl->out_cb,
			      EVBUFFER_CB_ENABLED);
}

static void client_output(struct evbuffer *out,
			  const struct evbuffer_cb_info *info, void *arg)
{
	struct client *cl = arg;
	struct bufferevent *bev = conn_bev(cl->conn);

	if (!info->n_deleted || evbuffer_get_length(out) > CONTROL_OUT_LOW)
		return;
	evbuffer_cb_clear_flags(out, cl->out_cb, EVBUFFER_CB_ENABLED);
	evbuffer_prepend_buffer(bufferevent_get_input(bev), cl->paused);
	bufferevent_enable(bev, EV_READ);
	/* From the loop, not from inside this write. */
	bufferevent_trigger(bev, EV_READ,
			    BEV_TRIG_IGNORE_WATERMARKS |
				    BEV_TRIG_DEFER_CALLBACKS);
}

static void client_send(struct client *cl, uint64_t id,
			Ring__Envelope__BodyCase type, void *body)
{
	conn_send_body(cl->conn, id, type, body);
}

void control_set_view(struct control *ctl, const struct control_view *view)
{
	ctl->view = view;
}

void control_set_feed(struct control *ctl, struct feed *feed)
{
	ctl->feed = feed;
}

int control_set_store(struct control *ctl, struct store_keeper *k)
{
	struct store *st = store_keeper_store(k);

	ctl->keeper = k;
	return st ? arlast_restore(&ctl->ar_last, st) : 0;
}

static const Ring__Topology *control_topology(const struct control *co)
{
	if (co->view && co->view->topology)
		return co->view->topology(co->view->arg);
	return survey_topology(co->survey);
}

/* The alerts as the wire carries them: pointers into the table's strings,
 * valid while the reply is packed. *out and *outp are malloc'ed (caller
 * frees both); 0, or -1 (ENOMEM). Status leaves out the watchdog alert
 * (it fires while all is well); `ringctl alerts` lists it. */
static int control_alerts_fill(const struct control *co, int all,
			       int no_watchdog, Ring__Alert **out,
			       Ring__Alert ***outp, size_t *n)
{
	const struct alert **v = NULL;
	size_t total, got;

	*out = NULL;
	*outp = NULL;
	*n = 0;
	if (!co->view || !co->view->alerts)
		return 0;
	total = co->view->alerts(co->view->arg, all, NULL, 0);
	v = calloc(total ? total : 1, sizeof(*v));
	*out = calloc(total ? total : 1, sizeof(**out));
	*outp = calloc(total ? total : 1, sizeof(**outp));
	if (!v || !*out || !*outp) {
		free(v);
		free(*out);
		free(*outp);
		*out = NULL;
		*outp = NULL;
		errno = ENOMEM;
		return -1;
	}
	got = co->view->alerts(co->view->arg, all, v, total);
	for (size_t i = 0; i < got && i < total; i++) {
		if (no_watchdog && !strcmp(v[i]->rule, "watchdog"))
			continue;
		alerts_to_wire(v[i], &(*out)[*n]);
		(*outp)[*n] = &(*out)[*n];
		(*n)++;
	}
	free(v);
	return 0;
}

/* An alerts reply holds at most this many resolved episodes, the newest:
 * under 1.5 KiB each packed at the worst, within ringctl's frame and the
 * output watermark. */
#define CONTROL_EPISODES_MAX 1000
/* Without a since: the week the alert table keeps resolved ones. */
#define CONTROL_EPISODES_SINCE_MS (7ull * 86400000)

struct control_episodes {
	struct alert *v; /* CONTROL_EPISODES_MAX + 1: one more says truncated */
	size_t n;
	uint64_t since_ms;
};

static int control_episode_keep(const struct alert *a, void *arg)
{
	struct control_episodes *e = arg;

	if (e->n > CONTROL_EPISODES_MAX)
		return 1;
	e->v[e->n++] = *a;
	return 0;
}

/* The resolved episodes for `alerts --all`: from the store, each episode
 * its own; a coordinator without one has the table's latest per key. */
static int control_episodes_get(const struct control *co,
				struct control_episodes *e)
{
	const struct alert **v;
	size_t total;

	e->n = 0;
	e->v = calloc(CONTROL_EPISODES_MAX + 1, sizeof(*e->v));
	if (!e->v) {
		errno = ENOMEM;
		return -1;
	}
	if (co->view->episodes)
		return co->view->episodes(co->view->arg, e->since_ms,
					  CONTROL_EPISODES_MAX + 1,
					  control_episode_keep, e) < 0
			       ? -1
			       : 0;
	total = co->view->alerts(co->view->arg, 1, NULL, 0);
	v = calloc(total ? total : 1, sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return -1;
	}
	total = co->view->alerts(co->view->arg, 1, v, total);
	for (size_t i = 0; i < total; i++)
		if (!v[i]->firing && v[i]->resolved_ms >= e->since_ms &&
		    control_episode_keep(v[i], e))
			break;
	free(v);
	return 0;
}

/* The firing alerts (fill's), then the episodes in wire form after
 * them: *ap grows to hold both. */
static int control_alerts_append(Ring__Alert ***ap, size_t *n,
				 Ring__Alert **wire,
				 const struct control_episodes *e, size_t keep)
{
	Ring__Alert **grown = realloc(*ap, (*n + keep + 1) * sizeof(**ap));

	*wire = calloc(keep ? keep : 1, sizeof(**wire));
	if (!grown || !*wire) {
		if (grown)
			*ap = grown;
		free(*wire);
		*wire = NULL;
		errno = ENOMEM;
		return -1;
	}
	*ap = grown;
	for (size_t i = 0; i < keep && i < e->n; i++) {
		alerts_to_wire(&e->v[i], &(*wire)[i]);
		(*ap)[(*n)++] = &(*wire)[i];
	}
	return 0;
}

static void control_alerts(struct client *cl, uint64_t id,
			   const Ring__AlertsRequest *req)
{
	Ring__AlertsReply rep = RING__ALERTS_REPLY__INIT;
	const struct control *co = cl->ctl;
	struct control_episodes ep = {0};
	Ring__Alert *a, **ap, *wire = NULL;
	uint64_t now = clock_now_ms();
	struct health h;
	size_t n, keep;

	/* --all: the firing ones from the table, the resolved ones as
	 * episodes (the table's resolved rows are the latest per key). */
	if (control_alerts_fill(cl->ctl, 0, 0, &a, &ap, &n) < 0) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"out of memory");
		return;
	}
	if (req->all && co->view && co->view->alerts) {
		ep.since_ms = req->since_ms ? req->since_ms
			      : now > CONTROL_EPISODES_SINCE_MS
				      ? now - CONTROL_EPISODES_SINCE_MS
				      : 0;
		/* The store's failure is said, not shown as no episodes. */
		keep = 0;
		if (control_episodes_get(co, &ep) == 0) {
			keep = ep.n > CONTROL_EPISODES_MAX
				       ? CONTROL_EPISODES_MAX
				       : ep.n;
			rep.truncated = ep.n > CONTROL_EPISODES_MAX;
		} else {
			free(ep.v);
			ep.v = NULL;
		}
		if (!ep.v ||
		    control_alerts_append(&ap, &n, &wire, &ep, keep) < 0) {
			conn_send_error(cl->conn, id,
					RING__ERROR_CODE__ERROR_INTERNAL,
					"the resolved alerts could not be read "
					"(see the coordinator's log)");
			goto out;
		}
		rep.since_ms = ep.since_ms;
	}
	rep.now_ms = now;
	rep.n_alerts = n;
	rep.alerts = ap;
	if (co->view && co->view->health) {
		co->view->health(co->view->arg, &h);
		rep.health = (char *)health_name(h.state);
		rep.health_cause = h.cause;
		rep.health_subject = h.subject;
		rep.health_text = h.text;
	}
	client_send(cl, id, RING__ENVELOPE__BODY_ALERTS_REPLY, &rep);
out:
	free(wire);
	free(ep.v);
	free(ap);
	free(a);
}

/* A history reply is one page of at most this many samples, newest
 * first from a cursor: one index seek and this many rows, some 50 bytes
 * each packed (docs/SECURITY.md has the loop time measured at the row
 * cap). Older pages: the reply's cursor. */
#define CONTROL_HISTORY_PAGE 2000

struct control_hist_sample {
	uint64_t ts_ms;
	uint64_t id;
	char kind[sizeof(((struct store_sample *)0)->kind)];
	char direction[sizeof(((struct store_sample *)0)->direction)];
	uint32_t param;
	double value;
};

/* One page, newest first as the store reads it. */
struct control_hist {
	struct control_hist_sample *v;
	size_t n, max;
};

static int control_history_keep(const struct store_sample *s, void *arg)
{
	struct control_hist *h = arg;
	struct control_hist_sample *d;

	if (h->n >= h->max)
		return 1;
	d = &h->v[h->n++];
	d->ts_ms = s->ts_ms;
	d->id = s->id;
	memcpy(d->kind, s->kind, sizeof(d->kind));
	d->kind[sizeof(d->kind) - 1] = 0;
	memcpy(d->direction, s->direction, sizeof(d->direction));
	d->direction[sizeof(d->direction) - 1] = 0;
	d->param = s->param;
	d->value = s->value;
	return 0;
}

static int control_history_any(const struct store_sample *s, void *arg)
{
	(void)s;
	*(int *)arg = 1;
	return 1; /* one is enough */
}

/* The edge as the topology or the history names it ("a-b" for "b-a"
 * too; node names may hold '-', so every split is tried): 0 and name
 * set, 1 when nothing knows it, -1 when the store fails. */
static int control_history_edge(const struct control *co, const char *edge,
				char *name, size_t len)
{
	const Ring__Topology *t = control_topology(co);
	size_t n = strlen(edge);
	char rev[ALERTS_EDGE_LEN];

	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		size_t la = strlen(e->a), lb = strlen(e->b);
		char own[ALERTS_EDGE_LEN];

		/* A cable's second function pair: "a-b:a_if". */
		text_edge_msg_name(own, sizeof(own), e);
		if (e->twin && !strcmp(own, edge)) {
			snprintf(name, len, "%s", own);
			return 0;
		}
		if (la + lb + 1 != n)
			continue;
		if ((!strncmp(edge, e->a, la) && edge[la] == '-' &&
		     !strcmp(edge + la + 1, e->b)) ||
		    (!strncmp(edge, e->b, lb) && edge[lb] == '-' &&
		     !strcmp(edge + lb + 1, e->a))) {
			snprintf(name, len, "%s-%s", e->a, e->b);
			return 0;
		}
	}
	/* An edge no longer in the topology keeps its history. */
	for (size_t i = 0; i <= n; i++) {
		int any = 0;

		if (i < n && edge[i] != '-')
			continue;
		if (i == n)
			snprintf(rev, sizeof(rev), "%s", edge);
		else
			snprintf(rev, sizeof(rev), "%s-%.*s", edge + i + 1,
				 (int)i, edge);
		if (co->view->history(co->view->arg, rev, 0, 0, 0, 1,
				      control_history_any, &any) < 0)
			return -1;
		if (any) {
			snprintf(name, len, "%s", rev);
			return 0;
		}
	}
	return 1;
}

static void control_history(struct client *cl, uint64_t id,
			    const Ring__HistoryRequest *req)
{
	struct control *co = cl->ctl;
	Ring__HistoryReply rep = RING__HISTORY_REPLY__INIT;
	Ring__HistorySample *smp = NULL, **smpp = NULL;
	struct control_hist h = {0};
	char name[ALERTS_EDGE_LEN];
	size_t n, page;
	int rc;

	if (!co->view || !co->view->history) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_NOT_FOUND,
				"this coordinator keeps no history");
		return;
	}
	for (const char *p = req->edge; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			conn_send_error(cl->conn, id,
					RING__ERROR_CODE__ERROR_BAD_REQUEST,
					"an edge name holds no control "
					"characters");
			return;
		}
	if (!strchr(req->edge, '-') || strlen(req->edge) >= sizeof(name)) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"history needs an edge as A-B (e.g. n1-n2), "
				"not '%.64s'",
				req->edge);
		return;
	}
	rc = control_history_edge(co, req->edge, name, sizeof(name));
	if (rc > 0) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_NOT_FOUND,
				"no edge '%.64s' in the topology or the "
				"history",
				req->edge);
		return;
	}
	page = req->max_samples && req->max_samples < CONTROL_HISTORY_PAGE
		       ? req->max_samples
		       : CONTROL_HISTORY_PAGE;
	/* One more than the page: whether older ones remain. */
	h.max = page + 1;
	h.v = rc ? NULL : calloc(h.max, sizeof(*h.v));
	if (!rc && !h.v) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"out of memory");
		return;
	}
	if (rc < 0 || co->view->history(co->view->arg, name, req->since_ms,
					req->before_ms, req->before_id, h.max,
					control_history_keep, &h) < 0) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"the history could not be read (%s; see the "
				"coordinator's log)",
				errno == ENODEV ? "the state store is "
						  "unavailable"
						: "the state store failed");
		goto out;
	}
	n = h.n < page ? h.n : page;
	smp = calloc(n ? n : 1, sizeof(*smp));
	smpp = calloc(n ? n : 1, sizeof(*smpp));
	if (!smp || !smpp) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"out of memory");
		goto out;
	}
	/* Oldest first within the page, as before paging. */
	for (size_t i = 0; i < n; i++) {
		struct control_hist_sample *d = &h.v[n - 1 - i];

		ring__history_sample__init(&smp[i]);
		smp[i].ts_ms = d->ts_ms;
		smp[i].kind = d->kind;
		smp[i].direction = d->direction;
		smp[i].param = d->param;
		smp[i].value = d->value;
		smpp[i] = &smp[i];
	}
	if (h.n > page) {
		rep.next_before_ms = h.v[page - 1].ts_ms;
		rep.next_before_id = h.v[page - 1].id;
	}
	rep.edge = name;
	rep.n_samples = n;
	rep.samples = smpp;
	rep.now_ms = clock_now_ms();
	rep.truncated = h.n > page;
	client_send(cl, id, RING__ENVELOPE__BODY_HISTORY_REPLY, &rep);
out:
	free(smpp);
	free(smp);
	free(h.v);
}

static void control_status(struct client *cl, uint64_t id)
{
	struct control *co = cl->ctl;
	Ring__StatusReply rep = RING__STATUS_REPLY__INIT;
	Ring__StoreStatus store = RING__STORE_STATUS__INIT;
	struct store_keeper_info ki;
	Ring__NodeStatus *st = NULL, **stp = NULL;
	Ring__Alert *al = NULL, **alp = NULL;
	size_t n_al = 0;
	struct health h;
	char ***unaddr = NULL;
	struct node **v;
	unsigned n, i;

	v = nodes_sorted(co->nodes, &n);
	if (!v)
		goto oom;
	st = calloc(n ? n : 1, sizeof(*st));
	stp = calloc(n ? n : 1, sizeof(*stp));
	unaddr = calloc(n ? n : 1, sizeof(*unaddr));
	if (!st || !stp || !unaddr)
		goto oom;
	for (i = 0; i < n; i++) {
		size_t k = v[i]->inventory ? v[i]->inventory->n_interfaces : 0;

		unaddr[i] = calloc(k ? k : 1, sizeof(char *));
		if (!unaddr[i])
			goto oom;
		ring__node_status__init(&st[i]);
		nodes_fill_status(v[i], &st[i], unaddr[i]);
		stp[i] = &st[i];
		rep.n_expected += v[i]->expected;
		rep.n_connected += v[i]->state == NODE_UP;
	}
	rep.topology = (Ring__Topology *)control_topology(co);
	rep.survey_state = (char *)survey_state(co->survey);
	if (co->view && co->view->health) {
		co->view->health(co->view->arg, &h);
		rep.health = (char *)health_name(h.state);
		rep.health_cause = h.cause;
		rep.health_subject = h.subject;
		rep.health_text = h.text;
	}
	if (co->view && co->view->store) {
		co->view->store(co->view->arg, &ki);
		store.state = (char *)store_keeper_state_name(ki.state);
		store.reason = ki.reason;
		store.since_ms = ki.since_ms;
		store.unsaved_writes = ki.unsaved;
		store.unsaved_now = ki.unsaved_now;
		store.lost = ki.lost;
		store.reopened = ki.reopened;
		rep.store = &store;
	}
	if (control_alerts_fill(co, 0, 1, &al, &alp, &n_al) < 0)
		goto oom;
	rep.n_alerts = n_al;
	rep.alerts = alp;
	rep.coordinator = (char *)co->conf->name;
	rep.version = RING_VERSION;
	rep.now_ms = clock_now_ms();
	rep.n_nodes = n;
	rep.nodes = stp;
	client_send(cl, id, RING__ENVELOPE__BODY_STATUS_REPLY, &rep);
	goto out;
oom:
	conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
			"out of memory");
out:
	for (i = 0; unaddr && i < n; i++)
		free(unaddr[i]);
	free(unaddr);
	free(stp);
	free(st);
	free(alp);
	free(al);
	free(v);
}

/* A request named a node the table does not have: the name as a field,
 * so that ringctl lists the known nodes beside it. */
static void control_unknown_node(struct client *cl, uint64_t id,
				 const char *name)
{
	Ring__Error err = RING__ERROR__INIT;
	char text[128];

	snprintf(text, sizeof(text), "unknown node '%.64s'", name);
	err.code = RING__ERROR_CODE__ERROR_NOT_FOUND;
	err.text = text;
	err.unknown_node = (char *)name;
	conn_send_body(cl->conn, id, RING__ENVELOPE__BODY_ERROR, &err);
}

static void control_inventory(struct client *cl, uint64_t id,
			      const Ring__InventoryRequest *req)
{
	struct node *n = nodes_find(cl->ctl->nodes, req->node);
	Ring__InventoryReply rep = RING__INVENTORY_REPLY__INIT;
	Ring__NodeStatus st = RING__NODE_STATUS__INIT;
	char **unaddr;

	if (!n) {
		control_unknown_node(cl, id, req->node);
		return;
	}
	unaddr = calloc(n->inventory ? n->inventory->n_interfaces + 1 : 1,
			sizeof(char *));
	if (!unaddr) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"out of memory");
		return;
	}
	nodes_fill_status(n, &st, unaddr);
	rep.status = &st;
	rep.inventory = n->inventory;
	client_send(cl, id, RING__ENVELOPE__BODY_INVENTORY_REPLY, &rep);
	free(unaddr);
}

static void control_forget(struct client *cl, uint64_t id,
			   const Ring__ForgetRequest *req)
{
	Ring__Ack ack = RING__ACK__INIT;
	struct node *n = nodes_find(cl->ctl->nodes, req->node);
	char text[128];

	if (n && n->expected) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"node '%.64s' is in the expect list; remove it "
				"from the configuration instead",
				req->node);
		return;
	}
	if (nodes_remove(cl->ctl->nodes, req->node) < 0) {
		conn_send_error(
			cl->conn, id,
			errno == ENOENT ? RING__ERROR_CODE__ERROR_NOT_FOUND
					: RING__ERROR_CODE__ERROR_BAD_REQUEST,
			errno == ENOENT
				? "unknown node '%.64s'"
				: "node '%.64s' is up; stop its agent first",
			req->node);
		return;
	}
	log_info("node %s forgotten (by uid %u)", req->node, (unsigned)cl->uid);
	snprintf(text, sizeof(text), "node %.64s forgotten", req->node);
	ack.text = text;
	client_send(cl, id, RING__ENVELOPE__BODY_ACK, &ack);
}

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
	client_arm(cl);
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
	client_send(cl, cl->test_id, RING__ENVELOPE__BODY_TEST_REPORT,
		    (void *)rep);
}

static int control_allreduce_running(const struct control *co)
{
	const struct client *cl;

	LIST_FOREACH(cl, &co->clients, link)
	if (cl->ar)
		return 1;
	return 0;
}

static void control_test(struct client *cl, uint64_t id,
			 const Ring__TestRequest *req)
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
	if (control_allreduce_running(co)) {
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
	client_arm(cl);
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
	client_send(cl, cl->ar_id, RING__ENVELOPE__BODY_ALLREDUCE_REPORT,
		    &copy);
}

static void control_allreduce(struct client *cl, uint64_t id,
			      const Ring__AllreduceRequest *req)
{
	struct control *co = cl->ctl;
	struct allreduce_coord_plan *p;
	int not_adjacent = 0;
	char why[1024];

	if (cl->test || cl->ar || cl->resolve || cl->read) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"one test at a time per client");
		return;
	}
	p = malloc(sizeof(*p)); /* a few KiB: not on the stack */
	if (!p) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"out of memory");
		return;
	}
	if (allreduce_coord_plan(control_topology(co), req, p, &not_adjacent,
				 why, sizeof(why)) < 0) {
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
	client_arm(cl);
	client_send(cl, cl->resolve_id, RING__ENVELOPE__BODY_RESOLVE_REPLY,
		    (void *)rep);
}

/* A host name looked up on every node, as a launcher there would: read
 * only, for the socket's group too; one at a time per client, and for the
 * group one per user and CONTROL_GROUP_LOOKUPS in all. */
static void control_resolve(struct client *cl, uint64_t id,
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
	client_send(cl, cl->read_id, RING__ENVELOPE__BODY_READ_TEST_RESULT,
		    (void *)all);
	if (!cl->in_msg)
		client_arm(cl);
}

/* plan --weights: read tests on the nodes asked (none: every node up). */
static void control_read(struct client *cl, uint64_t id,
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

static void control_survey(struct client *cl, uint64_t id)
{
	Ring__Ack ack = RING__ACK__INIT;
	int rc = survey_request(cl->ctl->survey, "requested by ringctl");

	if (rc < 0) {
		conn_send_error(
			cl->conn, id, RING__ERROR_CODE__ERROR_BAD_REQUEST, "%s",
			errno == EBUSY ? "a survey or a test is already running"
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
	client_send(cl, id, RING__ENVELOPE__BODY_ACK, &ack);
}

/* The last successful all-reduce per number of ranks (plan --layers):
 * read-only, open to every client; none kept is an empty reply. */
static void control_allreduce_last(struct client *cl, uint64_t id,
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
	client_send(cl, id, RING__ENVELOPE__BODY_ALLREDUCE_LAST_REPLY, &rep);
}

static void control_ranks(struct client *cl, uint64_t id)
{
	struct survey *sv = cl->ctl->survey;
	Ring__RanksReply rep = RING__RANKS_REPLY__INIT;

	rep.topology = (Ring__Topology *)control_topology(cl->ctl);
	if (!rep.topology) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_NOT_FOUND,
				"no survey has completed yet (survey %s)",
				survey_state(sv));
		return;
	}
	client_send(cl, id, RING__ENVELOPE__BODY_RANKS_REPLY, &rep);
}

/* The feed dropped a watcher that stopped reading. */
static void control_watch_gone(struct feed_sub *s, const char *why, void *arg)
{
	struct client *cl = arg;

	(void)s;
	log_debug("control", "%s: watch ended: %s", conn_peer(cl->conn), why);
	if (cl->in_msg)
		cl->dead = 1;
	else
		client_free(cl);
}

/* The reply is the stream: the snapshot first, then every event, until
 * either side closes. The watcher leaves the clients' count for the
 * feed's, so watchers never take the slots of status and ranks. */
static void control_watch(struct client *cl, uint64_t id,
			  const Ring__WatchRequest *req)
{
	struct control *co = cl->ctl;
	struct health h;
	char why[256];
	unsigned kinds;

	if (co->view && co->view->health)
		co->view->health(co->view->arg, &h);

	if (!co->feed) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_UNSUPPORTED,
				"this coordinator has no event feed");
		return;
	}
	if (feed_kinds_parse(req->kinds, req->n_kinds, &kinds, why,
			     sizeof(why)) < 0) {
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST, "%s", why);
		return;
	}
	cl->watch = feed_subscribe(
		co->feed, bufferevent_get_output(conn_bev(cl->conn)), id,
		cl->uid, kinds, control_topology(co),
		co->view && co->view->health ? health_name(h.state) : NULL,
		control_watch_gone, cl, why, sizeof(why));
	if (!cl->watch) {
		conn_send_error(cl->conn, id,
				errno == EUSERS
					? RING__ERROR_CODE__ERROR_PERMISSION
					: RING__ERROR_CODE__ERROR_INTERNAL,
				"%s", why);
		return;
	}
	co->n_clients--;
	co->n_group -= cl->uid != 0;
	log_debug("control", "%s: watching (%u watchers)", conn_peer(cl->conn),
		  feed_watchers(co->feed));
}

static void control_msg(struct conn *c, Ring__Envelope *env, void *arg)
{
	struct client *cl = arg;
	uint64_t id = env->request_id;

	(void)c;
	cl->in_msg++;
	if (cl->watch) {
		/* One reply per request, even here; the stream goes on. */
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"this connection is watching; send other "
				"requests on another");
		goto done;
	}
	switch (env->body_case) {
	case RING__ENVELOPE__BODY_STATUS_REQUEST:
		control_status(cl, id);
		break;
	case RING__ENVELOPE__BODY_INVENTORY_REQUEST:
		control_inventory(cl, id, env->inventory_request);
		break;
	case RING__ENVELOPE__BODY_FORGET_REQUEST:
		/* State changes are root's; the socket's group may only read. */
		if (cl->uid != 0) {
			conn_send_error(cl->conn, id,
					RING__ERROR_CODE__ERROR_PERMISSION,
					"this request needs root");
			break;
		}
		control_forget(cl, id, env->forget_request);
		break;
	case RING__ENVELOPE__BODY_RANKS_REQUEST:
		control_ranks(cl, id);
		break;
	case RING__ENVELOPE__BODY_ALERTS_REQUEST:
		control_alerts(cl, id, env->alerts_request);
		break;
	case RING__ENVELOPE__BODY_HISTORY_REQUEST:
		control_history(cl, id, env->history_request);
		break;
	case RING__ENVELOPE__BODY_WATCH_REQUEST:
		control_watch(cl, id, env->watch_request);
		break;
	case RING__ENVELOPE__BODY_RESOLVE_REQUEST:
		control_resolve(cl, id, env->resolve_request);
		break;
	case RING__ENVELOPE__BODY_ALLREDUCE_LAST_REQUEST:
		control_allreduce_last(cl, id, env->allreduce_last_request);
		break;
	case RING__ENVELOPE__BODY_TEST_REQUEST:
	case RING__ENVELOPE__BODY_SURVEY_REQUEST:
	case RING__ENVELOPE__BODY_ALLREDUCE_REQUEST:
	case RING__ENVELOPE__BODY_READ_TEST_REQUEST:
		if (cl->uid != 0) {
			conn_send_error(cl->conn, id,
					RING__ERROR_CODE__ERROR_PERMISSION,
					"this request needs root");
			break;
		}
		if (env->body_case == RING__ENVELOPE__BODY_TEST_REQUEST)
			control_test(cl, id, env->test_request);
		else if (env->body_case ==
			 RING__ENVELOPE__BODY_ALLREDUCE_REQUEST)
			control_allreduce(cl, id, env->allreduce_request);
		else if (env->body_case ==
			 RING__ENVELOPE__BODY_READ_TEST_REQUEST)
			control_read(cl, id, env->read_test_request);
		else
			control_survey(cl, id);
		break;
	default:
		conn_send_error(cl->conn, id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"%s is not a control request",
				frame_type_name((uint16_t)env->body_case));
		break;
	}
done:
	frame_free(env);
	cl->in_msg--;
	if (cl->dead) {
		client_free(cl);
		return;
	}
	client_arm(cl); /* the next request's deadline starts now */
	client_pause(cl);
}

static void control_close(struct conn *c, int err, const char *reason,
			  void *arg)
{
	struct client *cl = arg;

	(void)c;
	if (err != -ECONNRESET)
		log_debug("control", "client closed: %s", reason);
	if (cl->in_msg)
		cl->dead = 1; /* a reply failed: control_msg frees it */
	else
		client_free(cl);
}

static unsigned control_uid_count(const struct control *ctl, uid_t uid)
{
	const struct client *cl;
	unsigned n = 0;

	LIST_FOREACH(cl, &ctl->clients, link)
	n += cl->uid == uid && !cl->watch; /* the feed counts watchers */
	return n;
}

/* Why a client of this uid may not connect now, or NULL. */
static const char *control_refusal(const struct control *ctl, uid_t uid)
{
	if (ctl->n_clients >= CONTROL_MAX_CLIENTS)
		return "too many control clients";
	if (uid == 0)
		return NULL;
	if (control_uid_count(ctl, uid) >= CONTROL_MAX_PER_UID)
		return "too many control connections from this user";
	if (ctl->n_group >= CONTROL_MAX_CLIENTS - CONTROL_ROOT_RESERVE)
		return "too many control clients (the rest is kept for root)";
	return NULL;
}

/* Tell the client why (ringctl prints an Error with request id 0) and
 * close; one line in the log per CONTROL_REFUSE_LOG_MS at most. */
static void control_refuse(struct control *ctl, evutil_socket_t fd,
			   const struct ucred *cred, const char *why)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__Error err = RING__ERROR__INIT;
	uint64_t now = clock_now_ms();
	char text[160], junk[256];
	uint8_t *buf;
	size_t len;

	snprintf(text, sizeof(text), "%s (at most %u per user, %u in all)", why,
		 CONTROL_MAX_PER_UID, CONTROL_MAX_CLIENTS);
	err.code = RING__ERROR_CODE__ERROR_PERMISSION;
	err.text = text;
	env.body_case = RING__ENVELOPE__BODY_ERROR;
	env.error = &err;
	if (frame_encode(&env, &buf, &len) == 0) {
		/* A few dozen bytes fit any socket buffer; never wait. */
		if (send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			log_debug("control", "refusal not sent: %s",
				  strerror(errno));
		free(buf);
	}
	/* Closing with unread input would reset the connection before the
	 * client reads why. */
	for (int i = 0; i < 64; i++)
		if (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0)
			break;
	evutil_closesocket(fd);
	if (now - ctl->refuse_logged_ms < CONTROL_REFUSE_LOG_MS) {
		ctl->refuse_quiet++;
		return;
	}
	if (cred)
		log_warnx("control: refusing pid %d uid %u: %s (and %u "
			  "refusals since the last such line)",
			  (int)cred->pid, (unsigned)cred->uid, why,
			  ctl->refuse_quiet);
	else
		log_warnx("control: refusing a client: %s", why);
	ctl->refuse_logged_ms = now;
	ctl->refuse_quiet = 0;
}

static void control_accept(struct evconnlistener *l, evutil_socket_t fd,
			   struct sockaddr *sa, int salen, void *arg)
{
	struct control *ctl = arg;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct bufferevent *bev = NULL;
	struct client *cl;
	const char *why;
	char peer[48];

	(void)l;
	(void)sa;
	(void)salen;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		control_refuse(ctl, fd, NULL, "no peer credentials");
		return;
	}
	why = control_refusal(ctl, cred.uid);
	if (why) {
		control_refuse(ctl, fd, &cred, why);
		return;
	}
	snprintf(peer, sizeof(peer), "ringctl[pid %d uid %u]", (int)cred.pid,
		 (unsigned)cred.uid);
	cl = calloc(1, sizeof(*cl));
	if (!cl)
		goto fail_fd;
	cl->deadline = evtimer_new(ctl->base, client_deadline, cl);
	cl->paused = evbuffer_new();
	if (!cl->deadline || !cl->paused)
		goto fail_cl;
	bev = bufferevent_socket_new(ctl->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!bev)
		goto fail_cl;
	cl->out_cb =
		evbuffer_add_cb(bufferevent_get_output(bev), client_output, cl);
	if (!cl->out_cb)
		goto fail_bev;
	evbuffer_cb_clear_flags(bufferevent_get_output(bev), cl->out_cb,
				EVBUFFER_CB_ENABLED);
	cl->conn = conn_new(bev, peer, CONTROL_MAX_FRAME, control_msg,
			    control_close, cl);
	if (!cl->conn)
		goto fail_bev;
	cl->ctl = ctl;
	cl->uid = cred.uid;
	LIST_INSERT_HEAD(&ctl->clients, cl, link);
	ctl->n_clients++;
	ctl->n_group += cred.uid != 0;
	client_arm(cl);
	return;
fail_bev:
	bufferevent_free(bev); /* closes fd; its callbacks go with it */
	fd = -1;
fail_cl:
	if (cl->deadline)
		event_free(cl->deadline);
	if (cl->paused)
		evbuffer_free(cl->paused);
	free(cl);
fail_fd:
	if (fd >= 0)
		evutil_closesocket(fd);
	log_warnx("control: out of memory accepting a client");
}

/* Refuse to steal the socket of a coordinator that is still running. */
static int control_unlink_stale(const struct sockaddr_un *sun)
{
	struct stat st;
	int fd, rc;

	if (lstat(sun->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		errno = EEXIST;
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	close(fd);
	if (rc == 0) {
		errno = EADDRINUSE;
		return -1;
	}
	return unlink(sun->sun_path);
}

struct control *control_new(struct event_base *base,
			    const struct coord_conf *conf, struct nodes *nodes,
			    struct survey *survey)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct control *ctl;
	struct group *gr;
	mode_t old_mask;
	int fd, rc;

	if (strlen(conf->control_socket) >= sizeof(sun.sun_path)) {
		log_warnx("control_socket %s: path too long",
			  conf->control_socket);
		return NULL;
	}
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return NULL;
	ctl->base = base;
	ctl->conf = conf;
	ctl->nodes = nodes;
	ctl->survey = survey;
	/* Length checked above; memcpy keeps the terminating NUL. */
	memcpy(sun.sun_path, conf->control_socket,
	       strlen(conf->control_socket) + 1);
	memcpy(ctl->path, sun.sun_path, sizeof(ctl->path));
	if (control_unlink_stale(&sun) < 0) {
		log_warn("control socket %s%s", sun.sun_path,
			 errno == EADDRINUSE
				 ? " (is another coordinator running?)"
				 : "");
		goto fail_ctl;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		log_warn("control socket");
		goto fail_ctl;
	}
	/* Created 0660 from the start: no window with wider permissions. */
	old_mask = umask(0117);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old_mask);
	if (rc < 0) {
		log_warn("control socket %s: bind", sun.sun_path);
		goto fail_fd;
	}
	gr = getgrnam(conf->control_group);
	if (!gr)
		log_warnx("control_group %s does not exist; the control socket "
			  "is for root only",
			  conf->control_group);
	else if (chown(sun.sun_path, (uid_t)-1, gr->gr_gid) < 0)
		log_warn("control socket %s: chown to group %s", sun.sun_path,
			 conf->control_group);
	ctl->listener = evconnlistener_new(
		base, control_accept, ctl,
		LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 64, fd);
	if (!ctl->listener) {
		log_warn("control socket %s: listen", sun.sun_path);
		goto fail_unlink;
	}
	log_info("control socket %s (group %s)", sun.sun_path,
		 gr ? conf->control_group : "root");
	return ctl;
fail_unlink:
	unlink(sun.sun_path);
fail_fd:
	close(fd);
fail_ctl:
	free(ctl);
	return NULL;
}

void control_free(struct control *ctl)
{
	struct client *cl;

	if (!ctl)
		return;
	/* Watchers get what is queued (the shutdown event) if their socket
	 * takes it now: never wait. The bufferevent's output drains only
	 * from its own write callback (its front is frozen), so the bytes
	 * are sent from a peek. */
	LIST_FOREACH(cl, &ctl->clients, link)
	if (cl->watch) {
		struct bufferevent *bev = conn_bev(cl->conn);
		struct evbuffer_iovec v[16];
		struct iovec iov[16];
		struct msghdr mh = {.msg_iov = iov};
		int n = evbuffer_peek(bufferevent_get_output(bev), -1, NULL, v,
				      16);

		for (int i = 0; i < n && i < 16; i++) {
			iov[i].iov_base = v[i].iov_base;
			iov[i].iov_len = v[i].iov_len;
		}
		mh.msg_iovlen = (size_t)(n < 16 ? n : 16);
		if (n > 0 && sendmsg(bufferevent_getfd(bev), &mh,
				     MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			log_debug("control", "watcher not told: %s",
				  strerror(errno));
	}
	while (!LIST_EMPTY(&ctl->clients))
		client_free(LIST_FIRST(&ctl->clients));
	evconnlistener_free(ctl->listener);
	unlink(ctl->path);
	arlast_clear(&ctl->ar_last);
	free(ctl);
}
