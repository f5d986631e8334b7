/* Survey lifecycle: start, phase driver, automatic surveys. */
#include "survey.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "clock.h"
#include "frame.h"
#include "counters_eval.h"
#include "log.h"
#include "survey_int.h"

static void sv_next(struct survey *sv);

/* A run begins: the survey's slot (nothing else tests meanwhile), then
 * its value. -1 with errno EBUSY or ENOMEM. */
static int sv_run_begin(struct survey *sv)
{
	if (test_slots_take(&sv->slots, TEST_SLOT_SURVEY) < 0)
		return -1;
	sv->run = survey_run_new();
	if (!sv->run) {
		test_slots_give(&sv->slots, TEST_SLOT_SURVEY);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* The run ends: what it has in flight cancelled, its value freed, the
 * slot given back. */
static void sv_reset(struct survey *sv)
{
	if (!sv->run)
		return;
	survey_run_free(sv->run, sv->calls);
	sv->run = NULL;
	test_slots_give(&sv->slots, TEST_SLOT_SURVEY);
}

static void sv_arm(struct survey *sv, uint64_t ms)
{
	struct timeval tv = {.tv_sec = (time_t)(ms / 1000),
			     .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	evtimer_add(sv->auto_ev, &tv);
}

/* Back to idle; then the next automatic survey. */
static void sv_idle(struct survey *sv)
{
	int recheck = sv->run->recheck;

	sv_reset(sv);
	if (sv->dirty) {
		sv->dirty = 0;
		survey_nodes_changed(sv);
	} else if (!recheck && sv->conf->survey_interval_ms) {
		/* A re-check leaves the schedule of full surveys alone. */
		sv_arm(sv, sv->conf->survey_interval_ms);
	}
	if (!sv_running(sv) && sv->queued[0]) {
		char why[64];

		snprintf(why, sizeof(why), "%s", sv->queued);
		sv->queued[0] = '\0';
		if (survey_start(sv, why) < 0)
			log_warnx("survey (%s) asked for while another ran "
				  "did not start: %s",
				  why, strerror(errno));
	}
	if (!sv_running(sv))
		sv_recheck_kick(sv);
}

/* Tell the event callback (failure: NULL or the reason). */
static void sv_event(struct survey *sv, enum survey_event ev,
		     const char *failure)
{
	unsigned full = 0;

	for (unsigned i = 0; sv->run->recheck && i < sv->run->n_links; i++)
		full += !sv->run->links[i].light;
	/* Light checks alone are no news (light_check_interval), but
	 * their outcomes are to be judged. */
	if (sv->run->recheck && !full) {
		if (ev == SURVEY_DONE && sv->event)
			sv->event(SURVEY_LIGHT, "light check", sv->run->reason,
				  NULL, sv->event_arg);
		return;
	}
	if (sv->event)
		sv->event(ev, sv->run->recheck ? "recheck" : "survey",
			  sv->run->reason, failure, sv->event_arg);
}

/* The report, then back to idle (and the next automatic survey). */
static void sv_finish(struct survey *sv)
{
	sv->run->failure[0] = '\0';
	sv_report(sv);
	sv_event(sv, SURVEY_DONE,
		 sv->run->failure[0] ? sv->run->failure : NULL);
	sv_idle(sv);
}

/* Out of memory midway: no report from partial lists, the last one
 * stays. */
static void sv_abandon(struct survey *sv, const char *what)
{
	char why[160];

	log_warnx("survey (%s) abandoned: out of memory %s", sv->run->reason,
		  what);
	snprintf(why, sizeof(why), "abandoned: out of memory %s", what);
	sv_event(sv, SURVEY_DONE, why);
	sv->failed = ENOMEM;
	sv_idle(sv);
}

/* The measurement rounds, then (surveys only) what a ring all-reduce
 * loads at once, then the report. */
static void sv_round_or_finish(struct survey *sv)
{
	if (sv_start_round(sv))
		return;
	if (!sv->run->recheck && sv_load_begin(sv))
		return;
	sv_finish(sv);
}

static void sv_next(struct survey *sv)
{
	/* A phase that ended the run (its report, or abandoned) freed it. */
	while (sv->run && !sv->run->pending) {
		switch (sv->run->phase) {
		case SV_VERIFY:
			for (unsigned i = 0; i < sv->run->n_links; i++)
				sv->run->links[i].t.verified =
					sv->run->links[i].probe_ab == 1 &&
					sv->run->links[i].probe_ba == 1;
			sv_resolve_twins(sv);
			sv_resolve_claims(sv);
			if (!sv->run->recheck)
				sv_mark_strays(sv);
			if (sv->run->recheck) {
				/* Only these edges: no switch or diagonal
				 * checks. */
				sv->run->phase = SV_DIAG;
				break;
			}
			sv_phase_switch(sv);
			break;
		case SV_SWITCH:
			if (sv_phase_diag(sv) < 0) {
				sv_abandon(sv, "listing the pairs to check for "
					       "data paths");
				return;
			}
			break;
		case SV_DIAG:
			sv->run->phase = SV_MEASURE;
			sv->run->round = 0;
			if (sv_plan_measure(sv) < 0) {
				log_warnx("survey: cannot plan measurements");
				sv->run->n_rounds = 0;
			}
			sv_round_or_finish(sv);
			return;
		case SV_MEASURE:
			sv->run->round++;
			sv_round_or_finish(sv);
			return;
		case SV_LOAD:
			sv->run->load_step++;
			if (!sv_load_next(sv))
				sv_finish(sv);
			return;
		default:
			return;
		}
	}
}

static int sv_surveyed_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Replace the surveyed set with n names from name(arg, i), kept sorted:
 * every change of the node table looks each node up in it. */
static void sv_set_surveyed(struct survey *sv, unsigned n,
			    const char *(*name)(const void *, unsigned),
			    const void *arg)
{
	char(*v)[64] = calloc(n ? n : 1, sizeof(*v));

	free(sv->surveyed);
	sv->surveyed = v;
	sv->n_surveyed = 0;
	if (!v)
		return; /* the next change looks as if nothing were known */
	for (unsigned i = 0; i < n; i++)
		snprintf(v[i], sizeof(v[i]), "%s", name(arg, i));
	qsort(v, n, sizeof(*v), sv_surveyed_cmp);
	sv->n_surveyed = n;
}

static const char *sv_node_name(const void *arg, unsigned i)
{
	return ((const struct survey *)arg)->run->nodes[i].name;
}

/* Remember who this survey includes, and when it began. */
static void sv_note_surveyed(struct survey *sv)
{
	sv->started_ms = clock_now_ms();
	sv_set_surveyed(sv, sv->run->n_nodes, sv_node_name, sv);
}

/* Is name in the surveyed set? */
static int sv_was_surveyed(const struct survey *sv, const char *name)
{
	return sv->n_surveyed &&
	       bsearch(name, sv->surveyed, sv->n_surveyed,
		       sizeof(*sv->surveyed), sv_surveyed_cmp) != NULL;
}

/* The order's nodes, then both ends of each edge. */
static const char *sv_topology_name(const void *arg, unsigned i)
{
	const Ring__Topology *t = arg;

	if (i < t->n_order)
		return t->order[i];
	i -= (unsigned)t->n_order;
	return i % 2 ? t->edges[i / 2]->b : t->edges[i / 2]->a;
}

int survey_start(struct survey *sv, const char *reason)
{
	/* Refused (EBUSY) while a survey, a re-check or a test runs. */
	if (sv_run_begin(sv) < 0)
		return -1;
	evtimer_del(sv->auto_ev);
	if (sv_snapshot(sv) < 0) {
		sv_reset(sv);
		errno = ENOMEM;
		return -1;
	}
	if (sv->run->n_nodes < 2) {
		sv_reset(sv);
		errno = ENOENT;
		return -1;
	}
	snprintf(sv->run->reason, sizeof(sv->run->reason), "%s", reason);
	sv_note_surveyed(sv);
	sv->dirty = 0;
	clock_gettime(CLOCK_MONOTONIC, &sv->run->t0);
	sv->run->tests_sum_s = 0;
	sv->run->n_rounds = 0;
	log_info("survey started (%s): %u nodes up", reason, sv->run->n_nodes);
	sv_event(sv, SURVEY_STARTED, NULL);
	if (sv_links_from_beacons(sv) < 0 || sv_links_from_subnets(sv) < 0) {
		sv_reset(sv);
		errno = ENOMEM;
		return -1;
	}
	/* Hold one count so that the phases run in order even when every
	 * probe fails to start. */
	sv->run->pending = 1;
	sv->failed = 0;
	sv_phase_verify(sv);
	sv_done_one(sv);
	if (!sv_running(sv) && sv->failed) {
		/* Every phase ran at once (no probe could start) and one of
		 * them gave up. */
		errno = sv->failed;
		return -1;
	}
	return 0;
}

int survey_request(struct survey *sv, const char *reason)
{
	/* Behind a running re-check or survey: one survey that starts after
	 * the request, not a refusal that `survey --wait` would wait out. */
	if (sv_running(sv) && !test_slots_manual(&sv->slots)) {
		snprintf(sv->queued, sizeof(sv->queued), "%s", reason);
		return sv->run->recheck ? 1 : 2;
	}
	return survey_start(sv, reason);
}

int survey_running(const struct survey *sv)
{
	return sv_running(sv);
}

const struct call_iface *survey_calls(const struct survey *sv)
{
	return sv->calls;
}

const Ring__Topology *survey_topology(const struct survey *sv)
{
	return sv->topology;
}

const char *survey_state(const struct survey *sv)
{
	if (sv_running(sv))
		return "running";
	return sv->topology ? "done" : "never";
}

/* ---- re-checks and light checks ---- */

/* Start the due re-checks as one run: probes, then the measurement
 * rounds (disjoint pairs), then the merged report. */
static int sv_recheck_start(struct survey *sv, uint64_t now)
{
	unsigned kept = 0, n = 0, full = 0;
	char list[512] = "";
	size_t used = 0;
	unsigned n_rq;
	struct recheck_item *rq = recheck_queue_items(sv->rq, &n_rq);

	if (!sv->topology) {
		recheck_queue_truncate(sv->rq, 0);
		return 0;
	}
	if (sv_run_begin(sv) < 0)
		return -1; /* the caller looks again later */
	if (sv_snapshot(sv) < 0)
		goto oom;
	for (unsigned i = 0; i < n_rq; i++) {
		const struct recheck_item *r = &rq[i];
		int ia, ib;
		struct sv_link *l;

		if (r->due_ms > now) {
			rq[kept++] = *r;
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
	recheck_queue_truncate(sv->rq, kept);
	if (!n) {
		sv_reset(sv);
		return 0;
	}
	sv->run->recheck = 1;
	snprintf(sv->run->reason, sizeof(sv->run->reason), "re-check");
	clock_gettime(CLOCK_MONOTONIC, &sv->run->t0);
	sv->run->tests_sum_s = 0;
	sv->run->n_rounds = 0;
	sv->failed = 0;
	if (full) {
		log_info("re-check started: %s%s", list,
			 n > full ? " (and light checks)" : "");
		sv_event(sv, SURVEY_STARTED, NULL);
	} else {
		/* Every light_check_interval: the journal need not say. */
		log_debug("survey", "light check of %u edge(s)", n);
	}
	sv->run->pending = 1;
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

	if (!recheck_queue_any_due(sv->rq, now)) {
		recheck_queue_arm(sv->rq, 0);
		return;
	}
	if (sv_running(sv) || test_slots_manual(&sv->slots) ||
	    sv_recheck_start(sv, now) < 0) {
		recheck_queue_arm(sv->rq, SV_RECHECK_RETRY_MS);
		return;
	}
	if (!sv_running(sv))
		recheck_queue_arm(sv->rq, 0); /* later ones */
}

static void sv_recheck_due(void *arg)
{
	sv_recheck_kick(arg);
}

/* Every published edge, probed both ways and sampled (64 B), now: at
 * most once per light_check_interval each, one run for all of them. */
static void sv_light_due(void *arg)
{
	struct survey *sv = arg;
	const Ring__Topology *t = sv->topology;

	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (!sv_edge_through_switch(e))
			recheck_queue_add(sv->rq, e->a, e->a_interface, e->b,
					  e->b_interface, "light check", 0, 1);
	}
	sv_recheck_kick(sv);
}

static void sv_auto(evutil_socket_t fd, short what, void *arg)
{
	struct survey *sv = arg;

	(void)fd;
	(void)what;
	/* A manual test or a re-check is running: soon. */
	if (survey_start(sv, "automatic") < 0 && errno == EBUSY)
		sv_arm(sv, 5000);
}

void survey_set_event_cb(struct survey *sv, survey_event_fn fn, void *arg)
{
	sv->event = fn;
	sv->event_arg = arg;
}

void survey_set_publish_cb(struct survey *sv, survey_publish_fn fn, void *arg)
{
	sv->publish = fn;
	sv->publish_arg = arg;
}

int survey_restore(struct survey *sv, const Ring__Topology *t)
{
	Ring__Topology *copy = (Ring__Topology *)frame_copy(&t->base);

	if (!copy)
		return -1;
	if (sv->topology)
		ring__topology__free_unpacked(sv->topology, NULL);
	sv->topology = copy;
	/* Its nodes count as surveyed: agents reconnecting to a restarted
	 * coordinator are no change in the cluster. */
	sv_set_surveyed(sv, (unsigned)(t->n_order + 2 * t->n_edges),
			sv_topology_name, t);
	sv->started_ms = t->surveyed_ms;
	/* Its edges' facts are learnt as their nodes connect. */
	sv_recheck_published(sv, 1);
	return 0;
}

void survey_nodes_changed(void *arg)
{
	struct survey *sv = arg;
	const struct coord_conf *conf = sv->conf;
	struct node **v;
	unsigned n, up = 0, missing = 0, fresh = 0;

	/* A published edge that came back or changed: a re-check of it. */
	sv_facts_scan(sv);
	if (sv_running(sv)) {
		sv->dirty = 1; /* look again once this survey is done */
		return;
	}
	v = nodes_sorted(sv->table, &n);
	if (!v)
		return;
	for (unsigned i = 0; i < n; i++) {
		int ready = v[i]->state == NODE_UP && v[i]->inventory &&
			    v[i]->neighbours;

		up += ready;
		missing += v[i]->expected && !ready;
		/* New to the last survey: a full one. A node back after
		 * being down is a change on its edges: sv_facts_scan queued
		 * their re-checks. */
		fresh += ready &&
			 (!sv->topology || !sv_was_surveyed(sv, v[i]->name));
	}
	free(v);
	if (up < 2 || !fresh)
		return;
	sv_arm(sv, missing ? conf->survey_grace_ms : conf->survey_settle_ms);
}

struct survey *survey_new(struct event_base *base,
			  const struct coord_conf *conf, struct nodes *table,
			  const struct call_iface *calls)
{
	struct survey *sv = calloc(1, sizeof(*sv));

	if (!sv)
		return NULL;
	sv->base = base;
	sv->conf = conf;
	sv->table = table;
	sv->calls = calls;
	sv->next = sv_next;
	sv->auto_ev = evtimer_new(base, sv_auto, sv);
	sv->rq = recheck_queue_new(base, sv_recheck_due, sv);
	sv->light = light_checks_new(base, conf->light_check_interval_ms,
				     sv_light_due, sv);
	sv->acct = self_bytes_new();
	if (!sv->auto_ev || !sv->rq || !sv->light || !sv->acct) {
		survey_free(sv);
		return NULL;
	}
	return sv;
}

void survey_free(struct survey *sv)
{
	if (!sv)
		return;
	sv_reset(sv);
	while (sv->tests)
		sv_test_free(sv->tests);
	if (sv->auto_ev)
		event_free(sv->auto_ev);
	recheck_queue_free(sv->rq);
	light_checks_free(sv->light);
	free(sv->facts);
	self_bytes_free(sv->acct);
	free(sv->surveyed);
	if (sv->topology)
		ring__topology__free_unpacked(sv->topology, NULL);
	free(sv);
}

uint64_t survey_self_bytes(const struct survey *sv, const char *a,
			   const char *b, uint64_t now_ms)
{
	return self_bytes_hour(sv->acct, a, b, now_ms);
}

size_t survey_self_bytes_text(const struct survey *sv, uint64_t now_ms,
			      char *buf, size_t len)
{
	return self_bytes_text(sv->acct, now_ms, buf, len);
}

void survey_self_bytes_load(struct survey *sv, const char *text, size_t len,
			    uint64_t now_ms)
{
	self_bytes_load(sv->acct, text, len, now_ms);
}
