/* The history request: one page of an edge's measured figures from the
 * store, newest first by cursor, the edge named either way round. */
#include "control_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "text.h"

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

struct control_history_ends {
	const Ring__Topology *t;
	const Ring__RingView *ring, *other;
};

/* Are both ends ring's? Else note whose ring they are. */
static int control_history_in_ring(const char *a, const char *b, void *arg)
{
	struct control_history_ends *e = arg;

	if (ring_view_member(e->ring, a) && ring_view_member(e->ring, b))
		return 1;
	if (!e->other)
		e->other = ring_view_of_edge(e->t, a, b);
	return 0;
}

/* Issue 24: --ring ID: the edge must be that ring's (both ends its
 * members); an Error says whose it is. 0 or -1 (answered). */
static int control_history_ring(struct client *cl, uint64_t id,
				const char *req_ring, const char *edge)
{
	const Ring__Topology *t = control_topology(cl->ctl);
	struct control_history_ends ends = {.t = t};
	const Ring__RingView *ring, *other;

	if (control_ring_find(cl, id, t, req_ring, &ring) < 0)
		return -1;
	if (!ring)
		return 0;
	ends.ring = ring;
	if (text_edge_splits(edge, control_history_in_ring, &ends))
		return 0;
	other = ends.other;
	conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_NOT_FOUND,
			"edge '%.64s' is not ring %.64s's%s%.64s%s", edge,
			ring->id, other ? " (it is ring " : "",
			other ? other->id : "", other ? "'s)" : "");
	return -1;
}

void control_history(struct client *cl, uint64_t id,
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
	if (rc == 0 && control_history_ring(cl, id, req->ring, name) < 0)
		return;
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
	control_client_send(cl, id, RING__ENVELOPE__BODY_HISTORY_REPLY, &rep);
out:
	free(smpp);
	free(smp);
	free(h.v);
}
