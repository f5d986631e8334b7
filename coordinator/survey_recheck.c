/* What brings a re-check: each published edge's physical facts against
 * the node table (its cable or a node came back, its speed or MTU
 * changed: a re-check of it after recheck_settle), and a light check's
 * outcome, judged against the edge as it was when the check started (one
 * that overlapped a change is dropped and run again). The queue itself is
 * recheck_queue.c, the outcomes light_checks.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "light_checks.h"
#include "log.h"
#include "recheck_queue.h"
#include "survey_int.h"

static void sv_facts_now(struct survey *sv, const Ring__Edge *e,
			 struct sv_edge_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->up = 1;
	for (int k = 0; k < 2; k++) {
		const char *name = k ? e->b : e->a;
		struct node *n = nodes_find(sv->table, name);
		const Ring__NetInterface *fi;

		if (!n || n->state != NODE_UP) {
			f->up = 0;
			snprintf(f->down_node, sizeof(f->down_node), "%s",
				 name);
			continue;
		}
		fi = nodes_iface(n, k ? e->b_interface : e->a_interface);
		if (!fi || !fi->admin_up || !fi->carrier) {
			f->up = 0;
			continue;
		}
		f->speed[k] = fi->speed_mbps;
		f->mtu[k] = fi->mtu;
	}
}

void sv_facts_scan(struct survey *sv)
{
	const Ring__Topology *t = sv->topology;
	uint64_t now_ms = clock_now_ms();

	if (!t || sv->n_facts != t->n_edges)
		return;
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		struct sv_edge_facts now, *old = &sv->facts[i];
		char why[96] = "";

		sv_facts_now(sv, e, &now);
		/* For light checks: anything that makes one running now
		 * say nothing of the edge as it is. */
		now.changed_ms = old->changed_ms;
		if (now.up != old->up ||
		    (now.up &&
		     (now.speed[0] != old->speed[0] ||
		      now.speed[1] != old->speed[1] ||
		      now.mtu[0] != old->mtu[0] || now.mtu[1] != old->mtu[1])))
			now.changed_ms = now_ms;
		if (!old->known) {
			/* Not seen up since it was published (a restored
			 * topology): this is what it is, not a change. */
			if (now.up) {
				*old = now;
				old->known = 1;
			}
			continue;
		}
		if (now.up && !old->up) {
			if (old->down_node[0])
				snprintf(why, sizeof(why), "%s came back",
					 old->down_node);
			else
				snprintf(why, sizeof(why), "cable back up");
		} else if (now.up && (now.speed[0] != old->speed[0] ||
				      now.speed[1] != old->speed[1])) {
			snprintf(why, sizeof(why), "link speed changed");
		} else if (now.up && (now.mtu[0] != old->mtu[0] ||
				      now.mtu[1] != old->mtu[1])) {
			snprintf(why, sizeof(why), "MTU changed");
		}
		if (now.up) {
			*old = now;
			old->known = 1;
		} else {
			/* Remember the first reason it went down: a node
			 * lost after its cable is still a cable. */
			if (old->up)
				snprintf(old->down_node, sizeof(old->down_node),
					 "%s", now.down_node);
			old->up = 0;
			old->changed_ms = now.changed_ms;
		}
		if (why[0] && sv->conf->recheck_settle_ms)
			recheck_queue_add(sv->rq, e->a, e->a_interface, e->b,
					  e->b_interface, why,
					  sv->conf->recheck_settle_ms, 0);
	}
}

static int sv_recheck_in_scope(const char *a, const char *b, void *arg)
{
	const struct survey *sv = arg;

	return sv_scope_in(sv->run, a) || sv_scope_in(sv->run, b);
}

void sv_recheck_published(struct survey *sv, int full)
{
	const Ring__Topology *t = sv->topology;
	struct sv_edge_facts *f;

	if (!full)
		return;
	/* What was queued before the survey began, it measured: the whole
	 * site, or the rings a scoped survey measured. */
	if (sv->run && sv->run->scope)
		recheck_queue_forget_measured(sv->rq, sv->started_ms,
					      sv_recheck_in_scope, sv);
	else
		recheck_queue_forget_before(sv->rq, sv->started_ms);
	free(sv->facts);
	sv->facts = NULL;
	sv->n_facts = 0;
	if (!t || !t->n_edges)
		return;
	f = calloc(t->n_edges, sizeof(*f));
	if (!f)
		return; /* no re-checks until the next survey */
	for (size_t i = 0; i < t->n_edges; i++) {
		sv_facts_now(sv, t->edges[i], &f[i]);
		f[i].known = f[i].up;
	}
	sv->facts = f;
	sv->n_facts = t->n_edges;
}

/* Why the outcome of light check l says nothing of the edge: since it
 * started, an end's agent went away or (re)connected, or the cable went
 * down, came back or changed speed or MTU. NULL when nothing did. *up
 * tells whether the edge is up now (worth checking again). */
static const char *sv_light_overlap(struct survey *sv, const struct sv_link *l,
				    int *up)
{
	const Ring__Topology *t = sv->topology;
	const char *why = NULL;

	*up = 1;
	for (int k = 0; k < 2; k++) {
		const struct node *n = nodes_find(
			sv->table, sv->run->nodes[k ? l->t.b : l->t.a].name);

		if (!n || n->state != NODE_UP) {
			*up = 0;
			why = "an end's agent went away";
		} else if (n->connected_since_ms >= l->light_started_ms &&
			   !why) {
			why = "an end's agent connected again";
		}
	}
	for (size_t i = 0; t && i < t->n_edges && i < sv->n_facts; i++) {
		const Ring__Edge *e = t->edges[i];

		if (strcmp(e->a, sv->run->nodes[l->t.a].name) ||
		    strcmp(e->b, sv->run->nodes[l->t.b].name) ||
		    strcmp(e->a_interface, l->t.a_if) ||
		    strcmp(e->b_interface, l->t.b_if))
			continue;
		*up = *up && sv->facts[i].up;
		if (!why && sv->facts[i].changed_ms >= l->light_started_ms)
			why = "the cable went down, came back or changed";
	}
	return why;
}

void sv_light_note(struct survey *sv, const struct sv_link *l)
{
	const char *a = sv->run->nodes[l->t.a].name,
		   *b = sv->run->nodes[l->t.b].name;
	const char *overlap;
	char error[256];
	int up;

	overlap = sv_light_overlap(sv, l, &up);
	if (overlap) {
		/* Its outcome is neither the old state's nor the new one's:
		 * dropped. Down now: its return brings a re-check; up: the
		 * check again once the edge has been quiet a while. */
		log_debug("survey", "light check of %s-%s discarded: %s%s", a,
			  b, overlap, up ? "; again soon" : "");
		if (up)
			recheck_queue_add(sv->rq, a, l->t.a_if, b, l->t.b_if,
					  "light check again",
					  sv->conf->recheck_settle_ms
						  ? sv->conf->recheck_settle_ms
						  : SV_RECHECK_RETRY_MS,
					  1);
		return;
	}
	if (!l->t.verified)
		snprintf(error, sizeof(error),
			 "the probes did not get through both ways");
	else
		snprintf(error, sizeof(error), "%s",
			 l->error[0] ? l->error : l->rdma_error);
	light_checks_note(sv->light, a, l->t.a_if, b, l->t.b_if,
			  l->light_started_ms,
			  l->n_lat	  ? l->lat[0].p50_us
			  : l->n_rdma_lat ? l->rdma_lat[0].p50_us
					  : -1,
			  error, l->sample);
}

int survey_light(const struct survey *sv, const Ring__Edge *e,
		 struct survey_light_out *out)
{
	return light_checks_get(sv->light, e->a, e->a_interface, e->b,
				e->b_interface, out);
}
