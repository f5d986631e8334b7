/* ring-coordinator's process: wires the modules together, signals,
 * watchdog, state_dir. */
#include "coord.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "agents.h"
#include "alertmanager.h"
#include "alerts.h"
#include "clock.h"
#include "control.h"
#include "feed.h"
#include "frame.h"
#include "log.h"
#include "metrics.h"
#include "sinks.h"
#include "store.h"
#include "store_keeper.h"
#include "survey.h"
#include "tls.h"
#include "health_rules.h"
#include "text.h"
#include "topoview.h"

static void coord_signal(evutil_socket_t sig, short what, void *arg)
{
	struct coord *co = arg;

	(void)what;
	if (sig == SIGHUP) {
		log_info("SIGHUP: configuration reload is not supported; "
			 "restart the service to apply changes");
		return;
	}
	log_info("signal %d: shutting down", (int)sig);
	sd_notify(0, "STOPPING=1");
	event_base_loopbreak(co->base);
}

/* Pinged from the loop itself, so a wedged loop is what systemd notices. */
static void coord_watchdog(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	sd_notify(0, "WATCHDOG=1");
}

/* A write through the keeper: counted when it fails, never logged here
 * (store_keeper.h says it once per interval). */
static int coord_put_blob(struct coord *co, const char *key, const void *buf,
			  size_t len)
{
	struct store *s = store_keeper_writable(co->keeper);
	int r = s ? store_put_blob(s, key, buf, len, clock_now_ms()) : -1;

	store_keeper_wrote(co->keeper, r);
	return r;
}

/* One descriptor per agent: the usual soft limit of 1024 is too low for a
 * thousand agents, so take what the hard limit allows. */
static void coord_raise_nofile(unsigned want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want
			      ? want
			      : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_warn("cannot raise the descriptor limit to %u", want);
	if (rl.rlim_cur < want)
		log_warnx("descriptor limit %llu is below what max_agents %u "
			  "needs (%u); raise LimitNOFILE",
			  (unsigned long long)rl.rlim_cur, want - 320, want);
}

static void coord_health(struct coord *co, struct health *out);

/* The watchers hear of every change of the one health: its word, its
 * cause, or whether what decides it is clearing. */
static void coord_health_feed(struct coord *co)
{
	struct health h;
	const char *was;

	coord_health(co, &h);
	if (co->health_fed_set && h.state == co->health_fed.state &&
	    h.clearing == co->health_fed.clearing &&
	    !strcmp(h.cause, co->health_fed.cause))
		return;
	was = co->health_fed_set ? health_name(co->health_fed.state) : "";
	feed_health(co->feed, health_name(h.state), was, h.cause, h.clearing,
		    h.text);
	co->health_fed = h;
	co->health_fed_set = 1;
}

/* A resolved episode gets its own row: `alerts --all` lists each. */
static void coord_episode(struct coord *co, const struct alert *a,
			  enum alert_event ev)
{
	struct store *s;

	if (ev != ALERT_EV_RESOLVED)
		return;
	s = store_keeper_writable(co->keeper);
	store_keeper_wrote(co->keeper, s ? store_episode_add(s, a) : -1);
}

/* Every alert transition: to the sinks, and to the store so that a
 * restart neither forgets a firing alert nor fires it twice. */
static void coord_alert(const struct alert *a, enum alert_event ev, void *arg)
{
	struct coord *co = arg;
	struct store *s;

	co->fired += ev == ALERT_EV_FIRED;
	co->resolved += ev == ALERT_EV_RESOLVED;
	sinks_alert(co->sinks, a, ev);
	alertmanager_alert(co->am, a, ev);
	feed_alert(co->feed, a, ev);
	s = store_keeper_writable(co->keeper);
	store_keeper_wrote(co->keeper, s ? store_alert_save(s, a) : -1);
	coord_episode(co, a, ev);
	if (co->rules) /* restoring: the first evaluation tells */
		coord_health_feed(co);
}

/* One figure of the history. */
static void coord_sample(struct store_sample *v, size_t *n, size_t max,
			 const Ring__Edge *e, const char *kind, const char *dir,
			 uint32_t param, double value)
{
	if (*n >= max || value < 0)
		return;
	memset(&v[*n], 0, sizeof(v[*n]));
	v[*n].ts_ms = e->measured_ms;
	text_edge_msg_name(v[*n].edge, sizeof(v[*n].edge), e);
	snprintf(v[*n].kind, sizeof(v[*n].kind), "%s", kind);
	snprintf(v[*n].direction, sizeof(v[*n].direction), "%s", dir);
	v[*n].param = param;
	v[*n].value = value;
	(*n)++;
}

/* Was e already in the history: the same cable with the same figures'
 * time in the topology before (a re-check or a busy edge keeps them)? */
static int coord_recorded(const Ring__Topology *prev, const Ring__Edge *e)
{
	for (size_t i = 0; prev && i < prev->n_edges; i++) {
		const Ring__Edge *o = prev->edges[i];

		if (o->measured_ms == e->measured_ms && !strcmp(o->a, e->a) &&
		    !strcmp(o->b, e->b) &&
		    !strcmp(o->a_interface, e->a_interface) &&
		    !strcmp(o->b_interface, e->b_interface))
			return 1;
	}
	return 0;
}

/* A survey's figures into the history: the stream ladder both ways, the
 * latency ladder, the RDMA figures; each measurement once. */
static void coord_history(struct coord *co, const Ring__Topology *t,
			  const Ring__Topology *prev)
{
	size_t max = 0, n = 0;
	struct store_sample *v;

	for (size_t i = 0; i < t->n_edges; i++)
		max += 2 * t->edges[i]->n_ladder + t->edges[i]->n_latency +
		       t->edges[i]->n_rdma_write_lat + 4;
	v = calloc(max ? max : 1, sizeof(*v));
	if (!v) {
		log_warnx("store: out of memory saving the history");
		return;
	}
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (coord_recorded(prev, e))
			continue;
		for (size_t k = 0; k < e->n_ladder; k++) {
			if (k < e->n_gbps_a_to_b)
				coord_sample(v, &n, max, e, "tcp_bw", "a_to_b",
					     e->ladder[k], e->gbps_a_to_b[k]);
			if (k < e->n_gbps_b_to_a)
				coord_sample(v, &n, max, e, "tcp_bw", "b_to_a",
					     e->ladder[k], e->gbps_b_to_a[k]);
		}
		for (size_t k = 0; k < e->n_latency; k++)
			coord_sample(v, &n, max, e, "tcp_lat", "",
				     e->latency[k]->size,
				     e->latency[k]->p50_us);
		for (size_t k = 0; k < e->n_rdma_write_lat; k++)
			coord_sample(v, &n, max, e, "rdma_write_lat", "",
				     e->rdma_write_lat[k]->size,
				     e->rdma_write_lat[k]->p50_us);
		coord_sample(v, &n, max, e, "rdma_write_bw", "a_to_b", 0,
			     e->rdma_write_gbps_a_to_b);
		coord_sample(v, &n, max, e, "rdma_write_bw", "b_to_a", 0,
			     e->rdma_write_gbps_b_to_a);
		coord_sample(v, &n, max, e, "rdma_read_bw", "a_to_b", 0,
			     e->rdma_read_gbps_a_to_b);
		coord_sample(v, &n, max, e, "rdma_read_bw", "b_to_a", 0,
			     e->rdma_read_gbps_b_to_a);
	}
	if (n) {
		struct store *s = store_keeper_writable(co->keeper);

		store_keeper_wrote(co->keeper,
				   s ? store_history_add(s, v, n) : -1);
	}
	free(v);
}

/* Each edge's baseline (its first good measurement) outlives restarts:
 * the store keeps the watch's text of them. */
static int coord_save_baselines(struct coord *co)
{
	size_t cap = 64 * 1024, len;
	char *buf = malloc(cap);
	int r;

	if (!buf)
		return -1;
	len = health_rules_baselines_text(co->rules, buf, cap);
	r = coord_put_blob(co, "baselines", buf, len);
	free(buf);
	return r;
}

/* The last hour of ringd's own bytes per pair, for the next start. */
static int coord_save_self_bytes(struct coord *co)
{
	size_t cap = 256 * 1024, len;
	char *buf = malloc(cap);
	int r;

	if (!buf)
		return -1;
	len = survey_self_bytes_text(co->survey, clock_now_ms(), buf, cap);
	r = coord_put_blob(co, "selfbytes", buf, len);
	free(buf);
	return r;
}

/* The topology (its rank order in it) under "topology". */
static int coord_save_topology(struct coord *co, const Ring__Topology *t)
{
	size_t len = ring__topology__get_packed_size(t);
	uint8_t *buf = malloc(len ? len : 1);
	int r;

	if (!buf) {
		log_warnx("store: out of memory saving the topology");
		return -1;
	}
	ring__topology__pack(t, buf);
	r = coord_put_blob(co, "topology", buf, len);
	free(buf);
	return r;
}

/* A survey published a topology: the live view starts from it, and the
 * store keeps it (and its figures) for the next start. */
static void coord_published(const Ring__Topology *t, void *arg)
{
	struct coord *co = arg;

	/* Before the watch lets go of the one before. */
	coord_history(co, t, health_rules_topology(co->rules));
	if (health_rules_set_topology(co->rules, t) < 0)
		log_warnx("watch: out of memory: the live view keeps the "
			  "previous topology");
	feed_published(co->feed, t);
	/* Re-surveyed: what a lost file held is known again. */
	alerts_clear(co->alerts, "state_lost", "store", clock_now_ms());
	coord_save_topology(co, t);
	coord_save_baselines(co);
	coord_save_self_bytes(co);
}

/* A survey or re-check started or ended: survey_failed follows how the
 * last one ended. */
static void coord_survey_event(enum survey_event ev, const char *what,
			       const char *reason, const char *failure,
			       void *arg)
{
	struct coord *co = arg;

	if (ev == SURVEY_LIGHT) {
		/* light_check_failed reads the outcomes: evaluate. */
		health_rules_nodes_changed(co->rules);
		return;
	}
	feed_survey(co->feed, ev, what, reason, failure);
	if (ev == SURVEY_DONE)
		health_rules_survey_outcome(co->rules, what, failure);
}

static void coord_nodes_changed(void *arg)
{
	struct coord *co = arg;

	survey_nodes_changed(co->survey);
	health_rules_nodes_changed(co->rules);
	feed_nodes(co->feed, co->nodes);
}

/* The live view after each evaluation: the feed's edge, class and rank
 * order events. */
static void coord_evaluated(const Ring__Topology *t, void *arg)
{
	feed_topology(((struct coord *)arg)->feed, t);
	coord_health_feed(arg);
}

/* An edge's figures that move between surveys, from the survey. */
static void coord_edge_extras(Ring__Edge *e, void *arg)
{
	struct coord *co = arg;
	struct survey_light_out l = {
		.lat_us = -1, .error = "", .sample_gbps = {-1, -1}};

	e->self_bytes_hour =
		survey_self_bytes(co->survey, e->a, e->b, clock_now_ms());
	survey_light(co->survey, e, &l);
	e->light_ms = l.ms;
	e->light_started_ms = l.started_ms;
	e->light_lat_p50_us = l.lat_us;
	e->light_error = (char *)l.error;
	e->sample_gbps_a_to_b = l.sample_gbps[0];
	e->sample_gbps_b_to_a = l.sample_gbps[1];
	e->sample_ms = l.sample_ms;
}

/* A light check's sample, low against the edge's baseline? (It is taken
 * again at once before it counts.) */
static int coord_sample_low(const Ring__Edge *e, double gbps, void *arg)
{
	return health_rules_figure_low(((struct coord *)arg)->rules, e, gbps);
}

static const Ring__Topology *coord_view_topology(void *arg)
{
	struct coord *co = arg;
	const Ring__Topology *t = health_rules_topology(co->rules);

	return t ? t : survey_topology(co->survey);
}

/* The one health (health.h) from the alerts and the states that are not
 * alerts: no survey, no rank order, an expected node not up. */
static void coord_health(struct coord *co, struct health *out)
{
	const Ring__Topology *t = coord_view_topology(co);
	struct health_facts f = {.alerts = co->alerts};
	struct node **v;
	unsigned n;

	v = nodes_sorted(co->nodes, &n);
	for (unsigned i = 0; v && i < n; i++)
		if (v[i]->expected && v[i]->state != NODE_UP) {
			if (!f.n_missing++)
				f.missing = v[i]->name;
		}
	f.has_topology = t != NULL;
	f.kind = t ? t->kind : NULL;
	f.n_ranks = t ? t->n_ranks : 0;
	f.relearning = health_rules_relearning(co->rules, clock_now_ms(),
					       &f.relearn_left_ms);
	health_derive(&f, out);
	free(v);
}

static void coord_view_health(void *arg, struct health *out)
{
	coord_health(arg, out);
}

static size_t coord_view_alerts(void *arg, int all, const struct alert **out,
				size_t max)
{
	return alerts_list(((struct coord *)arg)->alerts, all, out, max);
}

static int
coord_view_history(void *arg, const char *edge, uint64_t since_ms,
		   uint64_t before_ms, uint64_t before_id, size_t max,
		   int (*fn)(const struct store_sample *v, void *fnarg),
		   void *fnarg)
{
	struct store *s = store_keeper_store(((struct coord *)arg)->keeper);

	if (!s) {
		errno = ENODEV;
		return -1;
	}
	return store_history_page(s, edge, since_ms, before_ms, before_id, max,
				  fn, fnarg);
}

static void coord_view_store(void *arg, struct store_keeper_info *out)
{
	store_keeper_info(((struct coord *)arg)->keeper, out);
}

static int coord_view_episodes(void *arg, uint64_t since_ms, size_t max,
			       int (*fn)(const struct alert *a, void *fnarg),
			       void *fnarg)
{
	struct store *s = store_keeper_store(((struct coord *)arg)->keeper);

	if (!s) {
		errno = ENODEV;
		return -1;
	}
	return store_episodes_query(s, since_ms, max, fn, fnarg);
}

/* A fresh file, or one that takes writes again: the current state in one
 * transaction (the topology with its rank order, the alerts, what the
 * watch and the survey keep); the history and episodes that were not
 * saved are gone. */
static void coord_am_save(void *arg);

static int coord_store_rewrite(struct store *s, void *arg)
{
	struct coord *co = arg;
	/* As published: the watch's copy carries its live overlay. */
	const Ring__Topology *t =
		co->survey ? survey_topology(co->survey) : NULL;
	size_t n = co->alerts ? alerts_list(co->alerts, 1, NULL, 0) : 0;
	const struct alert **v = calloc(n ? n : 1, sizeof(*v));
	int r = 0;

	if (!v || store_batch_begin(s) < 0) {
		free(v);
		return -1;
	}
	if (t)
		r = coord_save_topology(co, t);
	n = n ? alerts_list(co->alerts, 1, v, n) : 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		struct store *w = store_keeper_writable(co->keeper);

		r = w ? store_alert_save(w, v[i]) : -1;
	}
	if (r == 0 && co->rules)
		r = coord_save_baselines(co);
	if (r == 0 && co->survey)
		r = coord_save_self_bytes(co);
	if (r == 0 && co->am)
		coord_am_save(co);
	free(v);
	if (store_batch_end(s) < 0)
		return -1;
	return r;
}

/* The store's state as alerts: store_failing while it cannot save,
 * state_lost when a file was lost (until a survey publishes again). */
static void coord_store_changed(void *arg)
{
	struct coord *co = arg;
	struct store_keeper_info in;
	char msg[ALERTS_MESSAGE_LEN];
	uint64_t now = clock_now_ms();

	if (!co->alerts || !co->keeper)
		return;
	store_keeper_info(co->keeper, &in);
	if (in.state == STORE_KEEPER_OK) {
		alerts_clear(co->alerts, "store_failing", "store", now);
		/* The watch's evaluation arms the hold-down's tick. */
		if (co->rules)
			health_rules_nodes_changed(co->rules);
	} else {
		snprintf(msg, sizeof(msg),
			 "the state store is %s: %s; what cannot be saved is "
			 "counted (ringctl status), retried every %u s",
			 store_keeper_state_name(in.state), in.reason,
			 STORE_KEEPER_INTERVAL_MS / 1000);
		if (alerts_raise(co->alerts, "store_failing", "store", NULL,
				 NULL, ALERT_WARNING, msg, now) < 0)
			log_warn("store_failing alert");
	}
	if (in.lost_seq != co->store_lost_seen) {
		co->store_lost_seen = in.lost_seq;
		snprintf(msg, sizeof(msg), "state lost: %s", in.lost);
		if (alerts_raise(co->alerts, "state_lost", "store", NULL, NULL,
				 ALERT_WARNING, msg, now) < 0)
			log_warn("state_lost alert");
	}
}

static int coord_restore_alert(const struct alert *a, void *arg)
{
	struct coord *co = arg;

	if (alerts_restore(co->alerts, a) < 0)
		log_warnx("store: alert %s %s not restored", a->rule,
			  a->subject);
	return 0;
}

/* What the store kept: the alerts as they were, the last topology as
 * the answer to status and ranks until a survey completes. */
static void coord_restore(struct coord *co)
{
	Ring__Topology *t;
	void *buf = NULL;
	size_t len = 0;
	uint64_t saved = 0;

	int had_alerts = 0;
	char when[32] = "";
	struct store *s = store_keeper_store(co->keeper);

	if (!s)
		return;
	store_alerts_load(s, coord_restore_alert, co);
	had_alerts = alerts_list(co->alerts, 1, NULL, 0) > 0;
	if (store_get_blob(s, "baselines", &buf, &len, &saved) == 0) {
		health_rules_baselines_load(co->rules, buf, len);
		free(buf);
		buf = NULL;
	}
	if (store_get_blob(s, "selfbytes", &buf, &len, &saved) == 0) {
		survey_self_bytes_load(co->survey, buf, len, clock_now_ms());
		free(buf);
		buf = NULL;
	}
	if (store_get_blob(s, "topology", &buf, &len, &saved) < 0) {
		if (errno != ENOENT)
			log_warnx("store: cannot read the saved topology");
		if (had_alerts)
			health_rules_relearn_start(
				co->rules, co->conf->relearn_timeout_ms, "");
		return;
	}
	clock_format_utc(saved, when, sizeof(when), "");
	t = ring__topology__unpack(NULL, len, buf);
	free(buf);
	if (!t) {
		log_warnx("store: the saved topology does not decode; "
			  "ignored");
		return;
	}
	/* Before the topology is judged: nothing fires from facts the
	 * agents have not sent yet. */
	health_rules_relearn_start(co->rules, co->conf->relearn_timeout_ms,
				   when);
	if (survey_restore(co->survey, t) < 0 ||
	    health_rules_set_topology(co->rules, t) < 0)
		log_warnx("store: out of memory restoring the topology");
	else
		log_info("restored the topology surveyed %llu s ago",
			 (unsigned long long)(clock_now_ms() > t->surveyed_ms
						      ? (clock_now_ms() -
							 t->surveyed_ms) /
								1000
						      : 0));
	ring__topology__free_unpacked(t, NULL);
}

static double coord_edge_baseline(const Ring__Edge *e, void *arg)
{
	return health_rules_edge_baseline(((struct coord *)arg)->rules, e);
}

static int coord_edge_gid_changed(const Ring__Edge *e, void *arg)
{
	return health_rules_edge_gid_changed(((struct coord *)arg)->rules, e);
}

static void coord_metrics_src(struct metrics_src *src, void *arg)
{
	struct coord *co = arg;

	memset(src, 0, sizeof(*src));
	src->nodes = co->nodes;
	src->topology = coord_view_topology(co);
	src->alerts = co->alerts;
	coord_health(co, &co->health);
	src->health = &co->health;
	src->coordinator = co->conf->name;
	src->version = RING_VERSION;
	src->now_ms = clock_now_ms();
	src->rdma_qps = co->conf->survey_rdma_qps;
	src->cert_not_after_ms = health_rules_own_cert(co->rules);
	src->survey_failed = health_rules_survey_failed(co->rules);
	src->survey_interval_ms = co->conf->survey_interval_ms;
	src->edge_baseline = coord_edge_baseline;
	src->edge_gid_changed = coord_edge_gid_changed;
	src->edge_arg = co;
	store_keeper_info(co->keeper, &co->store_info);
	src->store = &co->store_info;
}

/* Hourly; while a bounded pass leaves more (a limit lowered, a burst of
 * rows), again a second later: each pass holds the loop a few ms. */
static void coord_thin(evutil_socket_t fd, short what, void *arg)
{
	struct coord *co = arg;
	uint64_t now = clock_now_ms();
	struct store *s = store_keeper_writable(co->keeper);
	struct timeval again = {.tv_sec = 1}, hour = {.tv_sec = 3600};
	int h = 0, a = 0, e = 0;

	(void)fd;
	(void)what;
	if (s) {
		h = store_history_thin(s, now, co->conf->history_max_age_ms,
				       co->conf->history_max_rows);
		a = h < 0 ? 0
			  : store_alerts_prune(
				    s, now - co->conf->history_max_age_ms);
		e = h < 0 || a < 0
			    ? 0
			    : store_episodes_prune(
				      s,
				      now > co->conf->history_max_age_ms
					      ? now - co->conf->history_max_age_ms
					      : 0,
				      STORE_EPISODES_MAX_ROWS);
	}
	store_keeper_wrote(co->keeper, !s || h < 0 || a < 0 || e < 0 ? -1 : 0);
	if (event_add(co->thin_ev, h > 0 || e > 0 ? &again : &hour) < 0)
		log_warn("store: scheduling the next thinning pass");
}

/* The periodic health report: one line in the journal with the state of
 * every edge and what fired and resolved since the last one. */
static void coord_report(evutil_socket_t fd, short what, void *arg)
{
	struct coord *co = arg;
	const Ring__Topology *t = coord_view_topology(co);
	char edges[2048] = "", line[3200], now_text[600];
	size_t used = 0;

	(void)fd;
	(void)what;
	coord_health(co, &co->health);
	for (size_t i = 0; t && i < t->n_edges && used < sizeof(edges); i++) {
		int n = snprintf(
			edges + used, sizeof(edges) - used, "%s%s-%s %s",
			i ? ", " : "", t->edges[i]->a, t->edges[i]->b,
			*t->edges[i]->live_state ? t->edges[i]->live_state
						 : "unknown");

		used += n > 0 ? (size_t)n : 0;
	}
	if (t)
		topoview_live_text(t, 1, now_text, sizeof(now_text));
	snprintf(line, sizeof(line),
		 "health report: %s; %s%s; edges: %s; %zu alerts firing; "
		 "since the last report %u fired, %u resolved",
		 health_name(co->health.state), t ? "now " : "",
		 t ? now_text : "no survey yet", *edges ? edges : "none",
		 alerts_firing(co->alerts), co->fired, co->resolved);
	log_info("%s", line);
	if (co->conf->health_report_command)
		sinks_report(co->sinks, health_name(co->health.state), line);
	co->fired = co->resolved = 0;
}

/* What Alertmanager is still owed survives a restart (the firing alerts
 * need nothing: the table is restored and resent). */
static void coord_am_save(void *arg)
{
	struct coord *co = arg;
	char *buf = NULL;
	size_t len = 0;

	if (alertmanager_owed_text(co->am, &buf, &len) < 0)
		log_warnx("store: out of memory saving the resolutions owed "
			  "to Alertmanager");
	else
		coord_put_blob(co, "alertmanager_owed", buf, len);
	free(buf);
}

/* alertmanager_url: the module, given the table for its resends and what
 * the last run still owed. */
static int coord_alertmanager(struct coord *co, const struct coord_conf *conf)
{
	struct alertmanager_conf ac = {
		.coordinator = conf->name,
		.n_urls = conf->n_alertmanager_url,
		.resend_ms = conf->alertmanager_resend_ms,
		.timeout_ms = conf->alertmanager_timeout_ms,
	};
	char gen[300] = "", host[256];
	void *buf = NULL;
	size_t len = 0;
	uint64_t saved;
	int dropped;

	if (!conf->n_alertmanager_url)
		return 0;
	for (unsigned i = 0; i < conf->n_alertmanager_url; i++)
		ac.urls[i] = conf->alertmanager_url[i];
	/* The coordinator's page; a wildcard listener by our name. */
	if (conf->metrics_listen[0]) {
		const char *colon = strrchr(conf->metrics_listen, ':');

		snprintf(host, sizeof(host), "%.*s",
			 (int)(colon - conf->metrics_listen),
			 conf->metrics_listen);
		if (!strcmp(host, "0.0.0.0") || !strcmp(host, "[::]"))
			snprintf(host, sizeof(host), "%s", conf->name);
		snprintf(gen, sizeof(gen), "http://%s%s/", host, colon);
		ac.generator_url = gen;
	}
	co->am = alertmanager_new(co->base, &ac, co->alerts);
	if (!co->am)
		return -1;
	alertmanager_set_owed_cb(co->am, coord_am_save, co);
	log_info("alerts to Alertmanager at %u URLs, resent every %llu ms",
		 conf->n_alertmanager_url,
		 (unsigned long long)conf->alertmanager_resend_ms);
	if (!store_keeper_store(co->keeper) ||
	    store_get_blob(store_keeper_store(co->keeper), "alertmanager_owed",
			   &buf, &len, &saved) < 0)
		return 0;
	dropped = alertmanager_owed_load(co->am, buf, len);
	free(buf);
	if (dropped > 0)
		log_warnx("store: %d resolutions owed to Alertmanager were "
			  "for URLs no longer configured; dropped",
			  dropped);
	return dropped < 0 ? -1 : 0;
}

/* watchdog_interval: the Watchdog convention's alert, firing as long as
 * we run, in the table (ringctl alerts, Alertmanager's resends); health
 * leaves it out. Off, or under another name: resolved. */
static void coord_watchdog_alert(struct coord *co,
				 const struct coord_conf *conf)
{
	size_t n = alerts_list(co->alerts, 0, NULL, 0);
	const struct alert **v = calloc(n ? n : 1, sizeof(*v));
	char(*stale)[ALERTS_SUBJECT_LEN] = calloc(n ? n : 1, sizeof(*stale));
	char msg[ALERTS_MESSAGE_LEN];
	size_t k = 0;

	if (!v || !stale) {
		log_warnx("watchdog alert: out of memory");
		goto cleanup;
	}
	/* Copied first: clearing changes the list. */
	n = alerts_list(co->alerts, 0, v, n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i]->rule, "watchdog") &&
		    (strcmp(v[i]->subject, conf->name) ||
		     !conf->watchdog_interval_ms))
			snprintf(stale[k++], sizeof(stale[0]), "%s",
				 v[i]->subject);
	for (size_t i = 0; i < k; i++)
		alerts_clear(co->alerts, "watchdog", stale[i], clock_now_ms());
	if (!conf->watchdog_interval_ms)
		goto cleanup;
	snprintf(msg, sizeof(msg),
		 "ring-coordinator %s is running: this alert always fires, so "
		 "that its absence says the monitor is down",
		 conf->name);
	if (alerts_raise(co->alerts, "watchdog", conf->name, NULL, NULL,
			 ALERT_INFO, msg, clock_now_ms()) < 0)
		log_warn("watchdog alert");
cleanup:
	free(v);
	free(stale);
}

static int coord_watching(struct coord *co, const struct coord_conf *conf)
{
	struct alerts_conf ac = {
		.hold_down_ms = conf->alert_hold_down_ms,
		.max_resolved = 1024,
		.keep_resolved_ms = 7ull * 86400000,
		.max_firing = 4 * conf->max_agents + 64,
	};
	struct sinks_conf sc = {
		.coordinator = conf->name,
		.command_argv = conf->n_alert_argv ? co->alert_argv : NULL,
		.command_timeout_ms = conf->alert_command_timeout_ms,
		.webhook_url = conf->alert_webhook,
		.webhook_timeout_ms = conf->alert_webhook_timeout_ms,
		.webhook_retries = conf->alert_webhook_retries,
		.webhook_backoff_ms = 1000,
		.queue_max = 1024,
		.watchdog_interval_ms = conf->watchdog_interval_ms,
	};
	struct timeval hour = {3600, 0};
	struct store_keeper_conf kc = {0};
	char err[512];

	for (unsigned i = 0; i < conf->n_alert_argv; i++)
		co->alert_argv[i] = (char *)conf->alert_argv[i];
	/* First: restoring alerts and the topology already tells it. */
	co->feed = feed_new(co->base);
	if (!co->feed)
		return -1;
	feed_nodes(co->feed, co->nodes); /* what later changes are against */
	kc.dir = conf->state_dir;
	kc.rewrite = coord_store_rewrite;
	kc.changed = coord_store_changed;
	kc.arg = co;
	co->keeper = store_keeper_new(co->base, &kc, err, sizeof(err));
	if (!co->keeper) {
		log_warnx("state_dir %s: %s", conf->state_dir, err);
		return -1;
	}
	co->sinks = sinks_new(co->base, &sc);
	co->alerts = alerts_new(&ac, coord_alert, co);
	if (!co->sinks || !co->alerts)
		return -1;
	co->rules = health_rules_new(co->base, conf, co->nodes, co->alerts);
	if (!co->rules)
		return -1;
	health_rules_set_eval_cb(co->rules, coord_evaluated, co);
	{
		uint64_t end;

		if (tls_file_not_after(conf->cert, &end) == 0)
			health_rules_set_own_cert(co->rules, end);
	}
	coord_restore(co);
	if (coord_alertmanager(co, conf) < 0)
		return -1;
	coord_watchdog_alert(co, conf);
	coord_store_changed(co); /* a store failing or lost at the start */
	co->thin_ev = event_new(co->base, -1, 0, coord_thin, co);
	if (!co->thin_ev || event_add(co->thin_ev, &hour))
		return -1;
	if (conf->health_report_interval_ms) {
		struct timeval tv = {
			.tv_sec = (time_t)(conf->health_report_interval_ms /
					   1000),
			.tv_usec =
				(suseconds_t)(conf->health_report_interval_ms %
					      1000) *
				1000};

		co->report_ev =
			event_new(co->base, -1, EV_PERSIST, coord_report, co);
		if (!co->report_ev || event_add(co->report_ev, &tv))
			return -1;
	}
	if (conf->metrics_listen[0]) {
		co->metrics = metrics_new(co->base, conf->metrics_listen,
					  coord_metrics_src, co);
		if (!co->metrics) {
			log_warn("metrics_listen %s", conf->metrics_listen);
			return -1;
		}
	}
	return 0;
}

int coord_init(struct coord *co, struct coord_conf *conf)
{
	memset(co, 0, sizeof(*co));
	co->conf = conf;
	signal(SIGPIPE, SIG_IGN);
	/* Sessions, pending handshakes, control clients, and some spare. */
	coord_raise_nofile(conf->max_agents + 320);
	co->base = event_base_new();
	if (!co->base) {
		log_warnx("cannot create event loop");
		return -1;
	}
	/* Before any socket exists: a SIGTERM as soon as the control socket
	 * appears (systemd, a test) is a clean stop, not death by signal. */
	co->sig_term = evsignal_new(co->base, SIGTERM, coord_signal, co);
	co->sig_int = evsignal_new(co->base, SIGINT, coord_signal, co);
	co->sig_hup = evsignal_new(co->base, SIGHUP, coord_signal, co);
	if (!co->sig_term || !co->sig_int || !co->sig_hup ||
	    evsignal_add(co->sig_term, NULL) ||
	    evsignal_add(co->sig_int, NULL) || evsignal_add(co->sig_hup, NULL))
		goto fail;
	co->tls = tls_ctx_new(1, conf->ca, conf->cert, conf->key);
	if (!co->tls)
		goto fail;
	co->nodes = nodes_new();
	if (!co->nodes)
		goto fail;
	for (unsigned i = 0; i < conf->n_expect; i++) {
		struct node *n =
			nodes_get(co->nodes, conf->expect[i], UINT32_MAX);

		if (!n)
			goto fail;
		n->expected = 1;
	}
	co->agents = agents_new(co->base, co->tls, conf, co->nodes);
	if (!co->agents)
		goto fail;
	co->survey =
		survey_new(co->base, conf, co->nodes, agents_calls(co->agents));
	if (!co->survey)
		goto fail;
	if (coord_watching(co, conf) < 0)
		goto fail;
	survey_set_publish_cb(co->survey, coord_published, co);
	survey_set_event_cb(co->survey, coord_survey_event, co);
	health_rules_set_edge_fn(co->rules, coord_edge_extras, co);
	survey_set_sample_low_cb(co->survey, coord_sample_low, co);
	agents_set_change_cb(co->agents, coord_nodes_changed, co);
	co->control = control_new(co->base, conf, co->nodes, co->survey);
	if (!co->control)
		goto fail;
	co->view.topology = coord_view_topology;
	co->view.health = coord_view_health;
	co->view.alerts = coord_view_alerts;
	co->view.history = coord_view_history;
	co->view.store = coord_view_store;
	co->view.episodes = coord_view_episodes;
	co->view.arg = co;
	control_set_view(co->control, &co->view);
	control_set_feed(co->control, co->feed);
	control_set_store(co->control, co->keeper);
	if (sd_watchdog_enabled(0, &co->watchdog_usec) > 0) {
		struct timeval tv = {.tv_sec = co->watchdog_usec / 2000000,
				     .tv_usec =
					     (co->watchdog_usec / 2) % 1000000};

		co->watchdog =
			event_new(co->base, -1, EV_PERSIST, coord_watchdog, co);
		if (!co->watchdog || event_add(co->watchdog, &tv))
			goto fail;
	}
	return 0;
fail:
	coord_fini(co);
	return -1;
}

int coord_run(struct coord *co)
{
	log_info("ring-coordinator %s ready: %u expected nodes", RING_VERSION,
		 co->conf->n_expect);
	sd_notify(0, "READY=1\nSTATUS=waiting for agents");
	if (event_base_dispatch(co->base) < 0) {
		log_warnx("event loop failed");
		return -1;
	}
	return 0;
}

void coord_fini(struct coord *co)
{
	if (co->watchdog)
		event_free(co->watchdog);
	if (co->sig_term)
		event_free(co->sig_term);
	if (co->sig_int)
		event_free(co->sig_int);
	if (co->sig_hup)
		event_free(co->sig_hup);
	if (co->feed)
		feed_shutdown(co->feed);
	control_free(co->control);
	metrics_free(co->metrics);
	if (co->thin_ev)
		event_free(co->thin_ev);
	if (co->report_ev)
		event_free(co->report_ev);
	health_rules_free(co->rules);
	/* The sinks first: alerts_free notifies nothing. */
	sinks_free(co->sinks);
	alertmanager_free(co->am);
	alerts_free(co->alerts);
	store_keeper_free(co->keeper);
	/* Before the agents: the survey cancels its calls to them. */
	survey_free(co->survey);
	agents_free(co->agents);
	/* Last of the modules that call into it. */
	feed_free(co->feed);
	nodes_free(co->nodes);
	if (co->tls)
		SSL_CTX_free(co->tls);
	if (co->base)
		event_base_free(co->base);
	memset(co, 0, sizeof(*co));
}
