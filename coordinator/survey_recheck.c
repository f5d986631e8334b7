/* Targeted re-checks: an edge of the published topology whose physical
 * facts changed (its cable or a node came back, its speed or MTU changed)
 * is probed both ways and measured again on its own after recheck_settle;
 * the rest of the topology stays as published. Also: the busy check before
 * any bandwidth test, and the account of ringd's own bytes per cable.
 * Light checks: their outcome, judged against the edge as it was when
 * the check started (one that overlapped a change is run again). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "survey_int.h"

/* A test that moved at least this much makes the counters sample that
 * overlaps it ringd's own traffic, not the link's. */
#define SV_SELF_TRAFFIC_MIN (1u << 20)

/* A re-check that cannot start now (a survey or a test runs) looks again
 * this much later. */
#define SV_RECHECK_RETRY_MS 2000

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
			sv_recheck_queue(sv, e->a, e->a_interface, e->b,
					 e->b_interface, why,
					 sv->conf->recheck_settle_ms, 0);
	}
}

void sv_recheck_published(struct survey *sv, int full)
{
	const Ring__Topology *t = sv->topology;
	struct sv_edge_facts *f;
	unsigned kept = 0;

	if (!full)
		return;
	/* What was queued before the survey began, it measured. */
	for (unsigned i = 0; i < sv->n_rq; i++)
		if (sv->rq[i].queued_ms >= sv->started_ms)
			sv->rq[kept++] = sv->rq[i];
	sv->n_rq = kept;
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

static void sv_recheck_arm(struct survey *sv, uint64_t min_ms)
{
	uint64_t now = clock_now_ms(), due = UINT64_MAX, ms;
	struct timeval tv;

	for (unsigned i = 0; i < sv->n_rq; i++)
		if (sv->rq[i].due_ms < due)
			due = sv->rq[i].due_ms;
	if (due == UINT64_MAX) {
		evtimer_del(sv->recheck_ev);
		return;
	}
	ms = due > now ? due - now : 0;
	if (ms < min_ms)
		ms = min_ms;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(sv->recheck_ev, &tv);
}

void sv_recheck_queue(struct survey *sv, const char *a, const char *a_if,
		      const char *b, const char *b_if, const char *why,
		      uint64_t delay_ms, int light)
{
	uint64_t now = clock_now_ms();
	struct sv_recheck *r = NULL, *v;

	for (unsigned i = 0; i < sv->n_rq && !r; i++)
		if (!strcmp(sv->rq[i].a, a) && !strcmp(sv->rq[i].b, b) &&
		    !strcmp(sv->rq[i].a_if, a_if) &&
		    !strcmp(sv->rq[i].b_if, b_if))
			r = &sv->rq[i];
	if (!r) {
		if (sv->n_rq >= SV_RECHECK_MAX) {
			log_debug("survey",
				  "re-check queue full: %s-%s not "
				  "queued",
				  a, b);
			return;
		}
		v = realloc(sv->rq, (sv->n_rq + 1) * sizeof(*v));
		if (!v) {
			log_warnx("survey: out of memory queueing a re-check "
				  "of %s-%s",
				  a, b);
			return;
		}
		sv->rq = v;
		r = &sv->rq[sv->n_rq++];
		memset(r, 0, sizeof(*r));
		snprintf(r->a, sizeof(r->a), "%s", a);
		snprintf(r->a_if, sizeof(r->a_if), "%s", a_if);
		snprintf(r->b, sizeof(r->b), "%s", b);
		snprintf(r->b_if, sizeof(r->b_if), "%s", b_if);
		r->queued_ms = now;
		r->light = light;
	} else if (light) {
		return; /* a re-check of it is queued: more than a light one */
	}
	/* Each change restarts the wait: a flapping cable is measured once
	 * it has been quiet for the settle time. */
	snprintf(r->why, sizeof(r->why), "%s", why);
	r->due_ms = now + delay_ms;
	r->light = light;
	log_debug("survey", "re-check of %s-%s (%s) in %llu ms", a, b, why,
		  (unsigned long long)delay_ms);
	sv_recheck_arm(sv, 0);
}

/* Start the due re-checks as one run: probes, then the measurement
 * rounds (disjoint pairs), then the merged report. */
static int sv_recheck_start(struct survey *sv, uint64_t now)
{
	unsigned kept = 0, n = 0, full = 0;
	char list[512] = "";
	size_t used = 0;

	if (!sv->topology) {
		sv->n_rq = 0;
		return 0;
	}
	if (sv_snapshot(sv) < 0)
		goto oom;
	for (unsigned i = 0; i < sv->n_rq; i++) {
		const struct sv_recheck *r = &sv->rq[i];
		int ia, ib;
		struct sv_link *l;

		if (r->due_ms > now) {
			sv->rq[kept++] = *r;
			continue;
		}
		ia = sv_node_index(sv, r->a);
		ib = sv_node_index(sv, r->b);
		if (ia < 0 || ib < 0) {
			/* Its return queues it again. */
			log_debug("survey",
				  "re-check of %s-%s dropped: %s is "
				  "not up",
				  r->a, r->b, ia < 0 ? r->a : r->b);
			continue;
		}
		l = sv_add_link(sv, (unsigned)ia, r->a_if, (unsigned)ib,
				r->b_if);
		if (!l)
			goto oom;
		snprintf(l->why, sizeof(l->why), "%s", r->why);
		l->light = r->light;
		l->light_started_ms = clock_now_ms();
		l->sample[0] = l->sample[1] = -1;
		full += !r->light;
		if (used < sizeof(list) && !r->light) {
			int w = snprintf(list + used, sizeof(list) - used,
					 "%s%s-%s (%s)", n ? ", " : "", r->a,
					 r->b, r->why);

			used += w > 0 ? (size_t)w : 0;
		}
		n++;
	}
	sv->n_rq = kept;
	if (!n) {
		sv_reset(sv);
		return 0;
	}
	sv->recheck = 1;
	snprintf(sv->reason, sizeof(sv->reason), "re-check");
	clock_gettime(CLOCK_MONOTONIC, &sv->t0);
	sv->tests_sum_s = 0;
	sv->n_rounds = 0;
	sv->failed = 0;
	if (full) {
		log_info("re-check started: %s%s", list,
			 n > full ? " (and light checks)" : "");
		sv_event(sv, SURVEY_STARTED, NULL);
	} else {
		/* Every light_check_interval: the journal need not say. */
		log_debug("survey", "light check of %u edge(s)", n);
	}
	sv->pending = 1;
	sv_phase_verify(sv);
	sv_done_one(sv);
	return 0;
oom:
	log_warnx("survey: out of memory starting a re-check");
	sv_reset(sv);
	errno = ENOMEM;
	return -1;
}

void sv_recheck_kick(struct survey *sv)
{
	uint64_t now = clock_now_ms();
	int due = 0;

	for (unsigned i = 0; i < sv->n_rq; i++)
		due |= sv->rq[i].due_ms <= now;
	if (!due) {
		sv_recheck_arm(sv, 0);
		return;
	}
	if (sv->phase != SV_IDLE || sv->manual_tests ||
	    sv_recheck_start(sv, now) < 0) {
		sv_recheck_arm(sv, SV_RECHECK_RETRY_MS);
		return;
	}
	if (sv->phase == SV_IDLE)
		sv_recheck_arm(sv, 0); /* later ones */
}

static void sv_recheck_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sv_recheck_kick(arg);
}

/* ---- light checks ---- */

/* Every published edge, probed both ways and sampled (64 B), now: at
 * most once per light_check_interval each, one run for all of them. */
static void sv_light_cb(evutil_socket_t fd, short what, void *arg)
{
	struct survey *sv = arg;
	const Ring__Topology *t = sv->topology;

	(void)fd;
	(void)what;
	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (!sv_edge_through_switch(e))
			sv_recheck_queue(sv, e->a, e->a_interface, e->b,
					 e->b_interface, "light check", 0, 1);
	}
	sv_recheck_kick(sv);
}

static struct sv_light *sv_light_find(const struct survey *sv, const char *a,
				      const char *a_if, const char *b,
				      const char *b_if)
{
	for (unsigned i = 0; i < sv->n_light; i++) {
		struct sv_light *x = &sv->light[i];

		if (!strcmp(x->a, a) && !strcmp(x->b, b) &&
		    !strcmp(x->a_if, a_if) && !strcmp(x->b_if, b_if))
			return x;
	}
	return NULL;
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
			sv->table, sv->nodes[k ? l->t.b : l->t.a].name);

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

		if (strcmp(e->a, sv->nodes[l->t.a].name) ||
		    strcmp(e->b, sv->nodes[l->t.b].name) ||
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
	const char *a = sv->nodes[l->t.a].name, *b = sv->nodes[l->t.b].name;
	struct sv_light *x = sv_light_find(sv, a, l->t.a_if, b, l->t.b_if);
	const char *overlap;
	int up;

	overlap = sv_light_overlap(sv, l, &up);
	if (overlap) {
		/* Its outcome is neither the old state's nor the new one's:
		 * dropped. Down now: its return brings a re-check; up: the
		 * check again once the edge has been quiet a while. */
		log_debug("survey", "light check of %s-%s discarded: %s%s", a,
			  b, overlap, up ? "; again soon" : "");
		if (up)
			sv_recheck_queue(sv, a, l->t.a_if, b, l->t.b_if,
					 "light check again",
					 sv->conf->recheck_settle_ms
						 ? sv->conf->recheck_settle_ms
						 : SV_RECHECK_RETRY_MS,
					 1);
		return;
	}
	if (!x) {
		struct sv_light *v;

		/* Bounded like the re-check queue; the oldest goes. */
		if (sv->n_light >= SV_RECHECK_MAX) {
			memmove(sv->light, sv->light + 1,
				(sv->n_light - 1) * sizeof(*v));
			sv->n_light--;
		}
		v = realloc(sv->light, (sv->n_light + 1) * sizeof(*v));
		if (!v)
			return;
		sv->light = v;
		x = &sv->light[sv->n_light++];
		memset(x, 0, sizeof(*x));
		snprintf(x->a, sizeof(x->a), "%s", a);
		snprintf(x->a_if, sizeof(x->a_if), "%s", l->t.a_if);
		snprintf(x->b, sizeof(x->b), "%s", b);
		snprintf(x->b_if, sizeof(x->b_if), "%s", l->t.b_if);
		x->sample[0] = x->sample[1] = -1;
	}
	x->ms = clock_now_ms();
	x->started_ms = l->light_started_ms;
	x->lat_us = l->n_lat	    ? l->lat[0].p50_us
		    : l->n_rdma_lat ? l->rdma_lat[0].p50_us
				    : -1;
	if (!l->t.verified)
		snprintf(x->error, sizeof(x->error),
			 "the probes did not get through both ways");
	else
		snprintf(x->error, sizeof(x->error), "%s",
			 l->error[0] ? l->error : l->rdma_error);
	if (x->error[0])
		log_info("light check of %s-%s failed: %s", a, b, x->error);
	/* A check with no sample (busy, failed) keeps the one before. */
	if (l->sample[0] >= 0 || l->sample[1] >= 0) {
		x->sample[0] = l->sample[0];
		x->sample[1] = l->sample[1];
		x->sample_ms = x->ms;
		log_debug("survey", "sample of %s-%s: %.3f / %.3f Gbps", a, b,
			  l->sample[0], l->sample[1]);
	}
}

int survey_light(const struct survey *sv, const Ring__Edge *e,
		 struct survey_light_out *out)
{
	const struct sv_light *x =
		sv_light_find(sv, e->a, e->a_interface, e->b, e->b_interface);

	if (!x)
		return -1;
	out->ms = x->ms;
	out->started_ms = x->started_ms;
	out->lat_us = x->lat_us;
	out->error = x->error;
	out->sample_gbps[0] = x->sample[0];
	out->sample_gbps[1] = x->sample[1];
	out->sample_ms = x->sample_ms;
	return 0;
}

int sv_recheck_init(struct survey *sv)
{
	uint64_t ms = sv->conf->light_check_interval_ms;
	struct timeval tv = {.tv_sec = (time_t)(ms / 1000),
			     .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	sv->recheck_ev = evtimer_new(sv->base, sv_recheck_cb, sv);
	if (!sv->recheck_ev)
		return -1;
	if (!ms)
		return 0;
	sv->light_ev = event_new(sv->base, -1, EV_PERSIST, sv_light_cb, sv);
	return sv->light_ev && event_add(sv->light_ev, &tv) == 0 ? 0 : -1;
}

void sv_recheck_fini(struct survey *sv)
{
	if (sv->recheck_ev)
		event_free(sv->recheck_ev);
	if (sv->light_ev)
		event_free(sv->light_ev);
	free(sv->light);
	free(sv->rq);
	free(sv->facts);
	free(sv->acct);
}

/* ---- busy edges ---- */

/* The account of the pair (a, b), in either order, or NULL. */
static struct sv_acct *sv_acct_find(const struct survey *sv, const char *a,
				    const char *b)
{
	for (unsigned i = 0; i < sv->n_acct; i++) {
		struct sv_acct *x = &sv->acct[i];

		if ((!strcmp(x->a, a) && !strcmp(x->b, b)) ||
		    (!strcmp(x->a, b) && !strcmp(x->b, a)))
			return x;
	}
	return NULL;
}

int sv_link_busy(struct survey *sv, const struct sv_link *l, char *why,
		 size_t len)
{
	return sv_link_traffic(sv, l, why, len) == 1;
}

int sv_link_traffic(struct survey *sv, const struct sv_link *l, char *why,
		    size_t len)
{
	const struct coord_conf *conf = sv->conf;
	double cap = l->nominal_gbps * 1e9;
	/* Our own tests on this cable in the counters' last interval would
	 * count as traffic: the sample says nothing then. */
	const struct sv_acct *x = sv_acct_find(sv, sv->nodes[l->t.a].name,
					       sv->nodes[l->t.b].name);
	uint64_t self_ms = x ? x->last_ms : 0;
	int known = 0;

	if (!conf->busy_threshold)
		return 0; /* the operator turned the check off */
	if (cap <= 0)
		return -1;
	for (int k = 0; k < 2; k++) {
		unsigned idx = k ? l->t.b : l->t.a;
		const char *ifname = k ? l->t.b_if : l->t.a_if;
		struct node *n = nodes_find(sv->table, sv->nodes[idx].name);
		uint64_t at = 0;
		double bps = nodes_port_traffic_bps(n, ifname, &at);

		/* No rate, a sample older than a minute, or one whose
		 * interval overlaps our own last test there: unknown. */
		if (bps < 0 || at + 60000 < clock_now_ms() ||
		    (self_ms && self_ms + 1000 + n->counters_span_ms > at))
			continue;
		/* A port's busier direction: one end covers the cable. */
		known = 1;
		if (bps * 100 > cap * conf->busy_threshold) {
			snprintf(why, len,
				 "%s %s: %.2f Gbps of traffic (%.0f%% of "
				 "%.0f Gbps, above busy_threshold %u%%)",
				 sv->nodes[idx].name, ifname, bps / 1e9,
				 100 * bps / cap, l->nominal_gbps,
				 conf->busy_threshold);
			return 1;
		}
	}
	return known ? 0 : -1;
}

/* ---- ringd's own bytes ---- */

/* A test's bytes on the wire, warm-up included (computed): the streams'
 * bytes counted in the window, scaled by (warm-up + window) / window;
 * for latency, the round trips of every size both ways. */
static uint64_t sv_test_bytes(const Ring__TestReport *rep)
{
	const Ring__TestParams *p = rep->params;
	double total = 0;

	if (!p)
		return 0;
	if (p->kind == RING__TEST_KIND__TEST_TCP_LAT ||
	    p->kind == RING__TEST_KIND__TEST_RDMA_LAT) {
		for (size_t i = 0; i < p->n_sizes; i++)
			total += 2.0 * (double)p->sizes[i] *
				 (double)(p->iterations + p->lat_warmup);
		return (uint64_t)total;
	}
	for (int s = 0; s < 2; s++) {
		const Ring__TestResult *r = s ? rep->b_side : rep->a_side;
		double window = r ? r->window_s : 0, bytes = 0;

		for (size_t i = 0; r && i < r->n_streams; i++)
			if (r->streams[i]->sending)
				bytes += (double)r->streams[i]->bytes;
		if (window > 0)
			bytes *=
				(window + (double)p->warmup_ms / 1000) / window;
		total += bytes;
	}
	return (uint64_t)total;
}

/* Add bytes to pair (a, b) in the minute of at_ms. */
static void sv_account_add(struct survey *sv, const char *a0, const char *b0,
			   uint64_t at_ms, uint64_t bytes, int ours_now)
{
	uint64_t now = at_ms, minute = now / 60000;
	const char *a = strcmp(a0, b0) < 0 ? a0 : b0;
	const char *b = a == a0 ? b0 : a0;
	struct sv_acct *x = sv_acct_find(sv, a, b);

	if (!x && sv->n_acct < SV_ACCT_MAX) {
		struct sv_acct *v =
			realloc(sv->acct, (sv->n_acct + 1) * sizeof(*v));

		if (!v)
			return;
		sv->acct = v;
		x = &sv->acct[sv->n_acct++];
		memset(x, 0, sizeof(*x)); /* named below */
	} else if (!x) {
		/* Full: the pair tested longest ago makes room. */
		x = sv->acct;
		for (unsigned i = 1; i < sv->n_acct; i++)
			if (sv->acct[i].last_ms < x->last_ms)
				x = &sv->acct[i];
	}
	if (strcmp(x->a, a) || strcmp(x->b, b)) {
		memset(x, 0, sizeof(*x));
		snprintf(x->a, sizeof(x->a), "%s", a);
		snprintf(x->b, sizeof(x->b), "%s", b);
	}
	if (x->minute[minute % 60] != minute) {
		x->minute[minute % 60] = minute;
		x->bytes[minute % 60] = 0;
	}
	x->bytes[minute % 60] += bytes;
	/* A light check's few KB do not make a counters sample ours. */
	if (ours_now && bytes >= SV_SELF_TRAFFIC_MIN)
		x->last_ms = now;
}

void sv_account(struct survey *sv, const Ring__TestReport *rep)
{
	sv_account_add(sv, rep->a, rep->b, clock_now_ms(), sv_test_bytes(rep),
		       1);
}

size_t survey_self_bytes_text(const struct survey *sv, uint64_t now_ms,
			      char *buf, size_t len)
{
	uint64_t minute = now_ms / 60000;
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < sv->n_acct; i++)
		for (int m = 0; m < 60; m++) {
			const struct sv_acct *x = &sv->acct[i];
			int n;

			if (!x->bytes[m] || x->minute[m] + 60 <= minute)
				continue;
			n = snprintf(buf + used, len - used,
				     "%s %s %llu %llu\n", x->a, x->b,
				     (unsigned long long)x->minute[m],
				     (unsigned long long)x->bytes[m]);
			if (n < 0 || (size_t)n >= len - used) {
				buf[used] = '\0'; /* whole lines only */
				return used;
			}
			used += (size_t)n;
		}
	return used;
}

void survey_self_bytes_load(struct survey *sv, const char *text, size_t len,
			    uint64_t now_ms)
{
	size_t off = 0;

	while (off < len) {
		char line[200], a[64], b[64];
		unsigned long long minute, bytes;
		size_t n = 0;

		while (off + n < len && text[off + n] != '\n')
			n++;
		if (n < sizeof(line)) {
			memcpy(line, text + off, n);
			line[n] = '\0';
			if (sscanf(line, "%63s %63s %llu %llu", a, b, &minute,
				   &bytes) == 4 &&
			    minute + 60 > now_ms / 60000 &&
			    minute <= now_ms / 60000)
				sv_account_add(sv, a, b, minute * 60000, bytes,
					       0);
		}
		off += n + 1;
	}
}

uint64_t survey_self_bytes(const struct survey *sv, const char *a,
			   const char *b, uint64_t now_ms)
{
	uint64_t minute = now_ms / 60000, sum = 0;
	const struct sv_acct *x = sv_acct_find(sv, a, b);

	for (int m = 0; x && m < 60; m++)
		if (x->minute[m] + 60 > minute)
			sum += x->bytes[m];
	return sum;
}
