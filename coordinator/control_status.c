/* Control requests that read the node table and the topology as they are
 * (status, inventory, ranks), and forget, which drops a node from it. */
#include "control_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "health.h"
#include "log.h"
#include "nodes.h"
#include "survey.h"

/* The nodes a status reply lists: every node, or ring r's members. */
static struct node **control_status_nodes(const struct control *co,
					  const Ring__RingView *r, unsigned *n)
{
	struct node **v;

	if (!r)
		return nodes_sorted(co->nodes, n);
	v = calloc(r->n_nodes + 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; v && i < r->n_nodes; i++) {
		struct node *x = nodes_find(co->nodes, r->nodes[i]);

		if (x)
			v[(*n)++] = x;
	}
	return v;
}

void control_status(struct client *cl, uint64_t id,
		    const Ring__StatusRequest *req)
{
	struct control *co = cl->ctl;
	Ring__StatusReply rep = RING__STATUS_REPLY__INIT;
	Ring__StoreStatus store = RING__STORE_STATUS__INIT;
	struct store_keeper_info ki;
	struct control_ring_reply rr = {0};
	const Ring__Topology *t = control_topology(co);
	const Ring__RingView *ring;
	Ring__NodeStatus *st = NULL, **stp = NULL;
	Ring__Alert *al = NULL, **alp = NULL;
	size_t n_al = 0;
	struct health h;
	char ***unaddr = NULL;
	struct node **v = NULL;
	unsigned n = 0, i;

	if (control_ring_find(cl, id, t, req ? req->ring : NULL, &ring) < 0)
		return;
	v = control_status_nodes(co, ring, &n);
	if (!v || control_ring_reply(co, t, ring, &rr) < 0)
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
	rep.topology = (Ring__Topology *)rr.top;
	rep.survey_state = (char *)survey_state(co->survey);
	if (co->view && co->view->health) {
		if (ring && co->view->ring_health)
			co->view->ring_health(co->view->arg, t, ring, &h);
		else
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
	if (ring && t->n_rings > 1) {
		size_t kept = 0;

		/* One ring of several: its alerts alone. */
		for (size_t k = 0; k < n_al; k++)
			if (!strcmp(alp[k]->ring, ring->id))
				alp[kept++] = alp[k];
		n_al = kept;
	}
	rep.n_alerts = n_al;
	rep.alerts = alp;
	rep.coordinator = (char *)co->conf->name;
	rep.version = RING_VERSION;
	rep.now_ms = clock_now_ms();
	rep.n_nodes = n;
	rep.nodes = stp;
	control_client_send(cl, id, RING__ENVELOPE__BODY_STATUS_REPLY, &rep);
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
	control_ring_reply_release(&rr);
}

void control_inventory(struct client *cl, uint64_t id,
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
	control_client_send(cl, id, RING__ENVELOPE__BODY_INVENTORY_REPLY, &rep);
	free(unaddr);
}

void control_forget(struct client *cl, uint64_t id,
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
	control_client_send(cl, id, RING__ENVELOPE__BODY_ACK, &ack);
}

void control_ranks(struct client *cl, uint64_t id,
		   const Ring__RanksRequest *req)
{
	struct survey *sv = cl->ctl->survey;
	Ring__RanksReply rep = RING__RANKS_REPLY__INIT;
	const Ring__Topology *t = control_topology(cl->ctl);
	const Ring__RingView *ring;
	struct control_ring_reply rr = {0};

	if (!t) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_NOT_FOUND,
				"no survey has completed yet (survey %s)",
				survey_state(sv));
		return;
	}
	if (control_ring_find(cl, id, t, req ? req->ring : NULL, &ring) < 0)
		return;
	if (control_ring_reply(cl->ctl, t, ring, &rr) < 0) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"out of memory");
		return;
	}
	rep.topology = (Ring__Topology *)rr.top;
	control_client_send(cl, id, RING__ENVELOPE__BODY_RANKS_REPLY, &rep);
	control_ring_reply_release(&rr);
}
