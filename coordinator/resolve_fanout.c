/* One ResolveRequest per node, one ResolveReply for ringctl (see
 * resolve_fanout.h). */
#include "resolve_fanout.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

struct rf_slot {
	struct resolve_fanout *f;
	char node[64];
	struct call *call;
	char addrs[RESOLVE_FANOUT_MAX_ADDRS][INET6_ADDRSTRLEN];
	size_t n;
	char error[256];
	int answered; /* its resolver's own answer, good or not */
	int done;
};

struct resolve_fanout {
	const struct call_iface *ci;
	char name[256];
	struct rf_slot *slot;
	unsigned n, pending;
	int busy;		 /* inside start: finish from the loop */
	struct event *ev_finish; /* finishes what start could not ask */
	resolve_fanout_cb cb;
	void *arg;
};

static void rf_free(struct resolve_fanout *f)
{
	for (unsigned i = 0; i < f->n; i++)
		call_cancel(f->ci, f->slot[i].call);
	if (f->ev_finish)
		event_free(f->ev_finish);
	free(f->slot);
	free(f);
}

static void rf_finish(struct resolve_fanout *f)
{
	Ring__ResolveReply rep = RING__RESOLVE_REPLY__INIT;
	Ring__NodeResolve *nr = calloc(f->n + 1, sizeof(*nr));
	Ring__NodeResolve **nrp = calloc(f->n + 1, sizeof(*nrp));
	char *(*addrs)[RESOLVE_FANOUT_MAX_ADDRS] =
		calloc(f->n + 1, sizeof(*addrs));

	rep.name = f->name;
	if (nr && nrp && addrs) {
		for (unsigned i = 0; i < f->n; i++) {
			struct rf_slot *s = &f->slot[i];

			ring__node_resolve__init(&nr[i]);
			nr[i].node = s->node;
			for (size_t k = 0; k < s->n; k++)
				addrs[i][k] = s->addrs[k];
			nr[i].addresses = addrs[i];
			nr[i].n_addresses = s->n;
			nr[i].error = s->error;
			nr[i].answered = s->answered;
			nrp[i] = &nr[i];
		}
		rep.nodes = nrp;
		rep.n_nodes = f->n;
	}
	/* Out of memory: the name alone, no node answered. */
	f->cb(&rep, f->arg);
	free(addrs);
	free(nrp);
	free(nr);
	rf_free(f);
}

static void rf_on_finish(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	rf_finish(arg);
}

static void rf_slot_done(struct rf_slot *s)
{
	struct resolve_fanout *f = s->f;

	s->call = NULL;
	s->done = 1;
	if (--f->pending == 0 && !f->busy)
		rf_finish(f);
}

/* An agent answers for its own node: take its addresses only if each is
 * a numeric address, at most RESOLVE_FANOUT_MAX_ADDRS of them. */
static void rf_take(struct rf_slot *s, const Ring__ResolveReply *rep)
{
	const Ring__NodeResolve *nr;
	unsigned char buf[16];

	if (rep->n_nodes != 1) {
		snprintf(s->error, sizeof(s->error),
			 "the agent's answer holds %zu nodes, not 1",
			 rep->n_nodes);
		return;
	}
	nr = rep->nodes[0];
	if (*nr->error) {
		s->answered = 1;
		snprintf(s->error, sizeof(s->error), "%s", nr->error);
		return;
	}
	for (size_t k = 0; k < nr->n_addresses; k++) {
		const char *a = nr->addresses[k];

		if (s->n == RESOLVE_FANOUT_MAX_ADDRS)
			break;
		if (strlen(a) >= sizeof(s->addrs[0]) ||
		    (inet_pton(AF_INET, a, buf) != 1 &&
		     inet_pton(AF_INET6, a, buf) != 1)) {
			snprintf(s->error, sizeof(s->error),
				 "the agent's answer holds an address that is "
				 "not numeric");
			s->n = 0;
			return;
		}
		snprintf(s->addrs[s->n++], sizeof(s->addrs[0]), "%s", a);
	}
	s->answered = 1;
	if (!s->n)
		snprintf(s->error, sizeof(s->error), "no address");
}

static void rf_reply(const Ring__Envelope *env, int err, void *arg)
{
	struct rf_slot *s = arg;

	if (!env)
		snprintf(s->error, sizeof(s->error), "%s",
			 err == -ETIMEDOUT ? "no answer in time"
					   : "the agent's session ended");
	else if (env->body_case == RING__ENVELOPE__BODY_RESOLVE_REPLY)
		rf_take(s, env->resolve_reply);
	else if (env->body_case == RING__ENVELOPE__BODY_ERROR)
		snprintf(s->error, sizeof(s->error), "the agent refused: %s",
			 env->error->text);
	else
		snprintf(s->error, sizeof(s->error), "an unexpected answer");
	rf_slot_done(s);
}

struct resolve_fanout *
resolve_fanout_start(struct event_base *base, const struct call_iface *ci,
		     struct node *const *nodes, unsigned n, const char *name,
		     int for_root, resolve_fanout_cb cb, void *arg)
{
	struct resolve_fanout *f = calloc(1, sizeof(*f));
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__ResolveRequest rr = RING__RESOLVE_REQUEST__INIT;

	if (!f)
		return NULL;
	f->slot = calloc(n + 1, sizeof(*f->slot));
	f->ev_finish = evtimer_new(base, rf_on_finish, f);
	if (!f->slot || !f->ev_finish) {
		rf_free(f);
		return NULL;
	}
	f->ci = ci;
	f->n = n;
	f->cb = cb;
	f->arg = arg;
	snprintf(f->name, sizeof(f->name), "%s", name);
	rr.name = f->name;
	rr.requester = for_root ? RING__REQUESTER__REQUESTER_ROOT
				: RING__REQUESTER__REQUESTER_OTHER;
	req.body_case = RING__ENVELOPE__BODY_RESOLVE_REQUEST;
	req.resolve_request = &rr;
	f->busy = 1;
	f->pending = n;
	for (unsigned i = 0; i < n; i++) {
		struct rf_slot *s = &f->slot[i];

		s->f = f;
		snprintf(s->node, sizeof(s->node), "%s", nodes[i]->name);
		if (nodes[i]->state != NODE_UP) {
			snprintf(s->error, sizeof(s->error), "node is %s",
				 nodes_state_name(nodes[i]->state));
			rf_slot_done(s);
			continue;
		}
		s->call = call_start(
			ci, s->node, &req, RESOLVE_FANOUT_TIMEOUT_MS, 0,
			RING__ENVELOPE__BODY_RESOLVE_REPLY, rf_reply, s);
		if (!s->call && !s->done) {
			snprintf(s->error, sizeof(s->error),
				 "cannot ask it: %s", strerror(errno));
			rf_slot_done(s);
		}
	}
	f->busy = 0;
	if (f->pending == 0) {
		struct timeval now = {0, 0};

		/* Nobody could be asked, or all failed at once: the caller
		 * hears it from the loop, after it holds f. */
		evtimer_add(f->ev_finish, &now);
	}
	return f;
}

void resolve_fanout_cancel(struct resolve_fanout *f)
{
	if (f)
		rf_free(f);
}
