/* ring-coordinator's composition root: builds the modules in order and
 * connects each one's callbacks to the others. What is decided lives in
 * the modules: the state kept across restarts (coord_persist.c), what is
 * shown (coord_outputs.c, health_view.c), signals and the watchdog
 * (coord_process.c), the limits (coord_conf.c's defaults). */
#include "coord.h"

#include <signal.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "agents.h"
#include "alertmanager.h"
#include "alerts.h"
#include "clock.h"
#include "coord_outputs.h"
#include "coord_persist.h"
#include "coord_process.h"
#include "control.h"
#include "feed.h"
#include "health_view.h"
#include "live_figures.h"
#include "log.h"
#include "metrics.h"
#include "sinks.h"
#include "store_keeper.h"
#include "survey.h"
#include "tls.h"
#include "health_rules.h"
#include "watchdog_alert.h"

static void coord_health(struct coord *co, struct health *out);

/* The watchers hear of every change of the one health: its word, its
 * cause, or whether what decides it is clearing. */
static void coord_health_feed(struct coord *co)
{
	struct health h;
	const char *was;

	coord_health(co, &h);
	if (co->health_fed_set && !health_differs(&co->health_fed, &h))
		return;
	was = co->health_fed_set ? health_name(co->health_fed.state) : "";
	feed_health(co->feed, health_name(h.state), was, h.cause, h.clearing,
		    h.text);
	co->health_fed = h;
	co->health_fed_set = 1;
}

/* Every alert transition: to the sinks, and to the store so that a
 * restart neither forgets a firing alert nor fires it twice. */
static void coord_alert(const struct alert *a, enum alert_event ev, void *arg)
{
	struct coord *co = arg;

	co->fired += ev == ALERT_EV_FIRED;
	co->resolved += ev == ALERT_EV_RESOLVED;
	sinks_alert(co->sinks, a, ev);
	alertmanager_alert(co->am, a, ev);
	feed_alert(co->feed, a, ev);
	coord_persist_alert(co, a, ev);
	if (co->rules) /* restoring: the first evaluation tells */
		coord_health_feed(co);
}

/* A survey published a topology: the live view starts from it, and the
 * store keeps it (and its figures) for the next start. */
static void coord_published(const Ring__Topology *t, void *arg)
{
	struct coord *co = arg;

	/* Before the watch lets go of the one before. */
	coord_persist_history(co, t, health_rules_topology(co->rules));
	if (health_rules_set_topology(co->rules, t) < 0)
		log_warnx("watch: out of memory: the live view keeps the "
			  "previous topology");
	feed_published(co->feed, t);
	/* Re-surveyed: what a lost file held is known again. */
	alerts_clear(co->alerts, "state_lost", "store", clock_now_ms());
	coord_persist_published(co, t);
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

/* What a change of the node table makes the survey and the rules look at
 * again, once for all the changes since: each walks every node (or edge),
 * so once per change would cost O(n) per agent and O(n^2) per join storm.
 * It runs at the next loop turn, or, when the last pass was recent, once
 * COORD_SETTLE_RATIO times its cost has passed since it ended (bounded by
 * COORD_SETTLE_MAX_MS): a lone change is judged at once, a storm of them
 * at most every few ms to COORD_SETTLE_MAX_MS, never behind by more. */
#define COORD_SETTLE_RATIO 10
#define COORD_SETTLE_MAX_MS 100

static uint64_t coord_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000;
}

static void coord_settle(evutil_socket_t fd, short what, void *arg)
{
	struct coord *co = arg;
	uint64_t t0 = coord_mono_us();

	(void)fd;
	(void)what;
	survey_nodes_changed(co->survey);
	health_rules_eval(co->rules);
	co->settle_end_us = coord_mono_us();
	co->settle_cost_us = co->settle_end_us - t0;
}

static void coord_nodes_changed(void *arg)
{
	struct coord *co = arg;
	uint64_t gap = co->settle_cost_us * COORD_SETTLE_RATIO, now, due;
	struct timeval tv = {0, 0};

	/* The watchers' events at once: every transition of every node is
	 * one (the feed follows the table's change journal, not every
	 * node). */
	feed_nodes(co->feed, co->nodes);
	if (evtimer_pending(co->settle_ev, NULL))
		return;
	if (gap > COORD_SETTLE_MAX_MS * 1000)
		gap = COORD_SETTLE_MAX_MS * 1000;
	now = coord_mono_us();
	due = co->settle_end_us + gap;
	if (due > now) {
		tv.tv_sec = (time_t)((due - now) / 1000000);
		tv.tv_usec = (suseconds_t)((due - now) % 1000000);
	}
	evtimer_add(co->settle_ev, &tv);
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
	live_figures_fill(((struct coord *)arg)->survey, e, clock_now_ms());
}

/* A light check's sample, low against the edge's baseline? (It is taken
 * again at once before it counts.) */
static int coord_sample_low(const Ring__Edge *e, double gbps, void *arg)
{
	return health_rules_figure_low(((struct coord *)arg)->rules, e, gbps);
}

static const Ring__Topology *coord_view_topology(void *arg)
{
	return health_view_topology(&((struct coord *)arg)->hview);
}

static void coord_health(struct coord *co, struct health *out)
{
	health_view_derive(&co->hview, clock_now_ms(), out);
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

static void coord_view_store(void *arg, struct store_keeper_info *out)
{
	store_keeper_info(((struct coord *)arg)->keeper, out);
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
	char gen[300];

	if (!conf->n_alertmanager_url)
		return 0;
	for (unsigned i = 0; i < conf->n_alertmanager_url; i++)
		ac.urls[i] = conf->alertmanager_url[i];
	if (coord_conf_page_url(conf, gen, sizeof(gen)))
		ac.generator_url = gen;
	co->am = alertmanager_new(co->base, &ac, co->alerts);
	if (!co->am)
		return -1;
	alertmanager_set_owed_cb(co->am, coord_persist_am_save, co);
	log_info("alerts to Alertmanager at %u URLs, resent every %llu ms",
		 conf->n_alertmanager_url,
		 (unsigned long long)conf->alertmanager_resend_ms);
	return coord_persist_am_load(co);
}

static int coord_watching(struct coord *co, const struct coord_conf *conf)
{
	struct alerts_conf ac = {
		.hold_down_ms = conf->alert_hold_down_ms,
		.max_resolved = conf->alert_max_resolved,
		.keep_resolved_ms = conf->alert_keep_resolved_ms,
		.max_firing = coord_conf_alert_max_firing(conf),
	};
	struct sinks_conf sc = {
		.coordinator = conf->name,
		.command_argv = conf->n_alert_argv ? co->alert_argv : NULL,
		.command_timeout_ms = conf->alert_command_timeout_ms,
		.webhook_url = conf->alert_webhook,
		.webhook_timeout_ms = conf->alert_webhook_timeout_ms,
		.webhook_retries = conf->alert_webhook_retries,
		.webhook_backoff_ms = conf->alert_webhook_backoff_ms,
		.queue_max = conf->alert_queue_max,
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
	kc.rewrite = coord_persist_rewrite;
	kc.changed = coord_persist_store_changed;
	kc.arg = co;
	co->keeper = store_keeper_new(co->base, &kc, err, sizeof(err));
	if (!co->keeper) {
		log_warnx("state_dir %s: %s", conf->state_dir, err);
		return -1;
	}
	co->sinks = sinks_new(co->base, &sc);
	co->alerts = alerts_new(&ac, coord_alert, co);
	co->hview.alerts = co->alerts;
	if (!co->sinks || !co->alerts)
		return -1;
	co->rules = co->hview.rules =
		health_rules_new(co->base, conf, co->nodes, co->alerts);
	if (!co->rules)
		return -1;
	health_rules_set_eval_cb(co->rules, coord_evaluated, co);
	{
		uint64_t end;

		if (tls_file_not_after(conf->cert, &end) == 0)
			health_rules_set_own_cert(co->rules, end);
	}
	coord_persist_restore(co);
	if (coord_alertmanager(co, conf) < 0)
		return -1;
	watchdog_alert_sync(co->alerts, conf->name, conf->watchdog_interval_ms,
			    clock_now_ms());
	/* A store failing or lost at the start. */
	coord_persist_store_changed(co);
	co->thin_ev = event_new(co->base, -1, 0, coord_persist_thin, co);
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

		co->report_ev = event_new(co->base, -1, EV_PERSIST,
					  coord_outputs_report, co);
		if (!co->report_ev || event_add(co->report_ev, &tv))
			return -1;
	}
	if (conf->metrics_listen[0]) {
		co->metrics = metrics_new(co->base, conf->metrics_listen,
					  coord_outputs_metrics_src, co);
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
	coord_process_nofile(conf->max_agents + 320, conf->max_agents);
	co->base = event_base_new();
	if (!co->base) {
		log_warnx("cannot create event loop");
		return -1;
	}
	/* Before any socket exists: a SIGTERM as soon as the control socket
	 * appears (systemd, a test) is a clean stop, not death by signal. */
	if (coord_process_signals(&co->process, co->base) < 0)
		goto fail;
	co->tls = tls_ctx_new(1, conf->ca, conf->cert, conf->key);
	if (!co->tls)
		goto fail;
	co->nodes = co->hview.nodes = nodes_new();
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
	co->settle_ev = evtimer_new(co->base, coord_settle, co);
	if (!co->settle_ev)
		goto fail;
	co->survey = co->hview.survey =
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
	co->view.history = coord_persist_history_page;
	co->view.store = coord_view_store;
	co->view.episodes = coord_persist_episodes;
	co->view.arg = co;
	control_set_view(co->control, &co->view);
	control_set_feed(co->control, co->feed);
	control_set_store(co->control, co->keeper);
	if (coord_process_watchdog(&co->process, co->base) < 0)
		goto fail;
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
	coord_process_free(&co->process);
	if (co->feed)
		feed_shutdown(co->feed);
	control_free(co->control);
	metrics_free(co->metrics);
	if (co->thin_ev)
		event_free(co->thin_ev);
	if (co->report_ev)
		event_free(co->report_ev);
	if (co->settle_ev)
		event_free(co->settle_ev);
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
