/* The coordinator's state in the store and back (coord_persist.h). */
#include "coord_persist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alertmanager.h"
#include "clock.h"
#include "health_rules.h"
#include "history_figures.h"
#include "log.h"
#include "store.h"
#include "store_keeper.h"
#include "survey.h"

/* A write through the keeper: counted when it fails. */
static int coord_persist_blob(struct coord *co, const char *key,
			      const void *buf, size_t len)
{
	struct store *s = store_keeper_writable(co->keeper);
	int r = s ? store_put_blob(s, key, buf, len, clock_now_ms()) : -1;

	store_keeper_wrote(co->keeper, r);
	return r;
}

/* Every alert transition, so that a restart neither forgets a firing
 * alert nor fires it twice; a resolved episode gets its own row too:
 * `alerts --all` lists each. */
void coord_persist_alert(struct coord *co, const struct alert *a,
			 enum alert_event ev)
{
	struct store *s = store_keeper_writable(co->keeper);

	store_keeper_wrote(co->keeper, s ? store_alert_save(s, a) : -1);
	if (ev != ALERT_EV_RESOLVED)
		return;
	s = store_keeper_writable(co->keeper);
	store_keeper_wrote(co->keeper, s ? store_episode_add(s, a) : -1);
}

void coord_persist_history(struct coord *co, const Ring__Topology *t,
			   const Ring__Topology *prev)
{
	struct store_sample *v;
	size_t n;

	if (history_figures(t, prev, &v, &n) < 0) {
		log_warnx("store: out of memory saving the history");
		return;
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
static int coord_persist_baselines(struct coord *co)
{
	size_t cap = 64 * 1024, len;
	char *buf = malloc(cap);
	int r;

	if (!buf)
		return -1;
	len = health_rules_baselines_text(co->rules, buf, cap);
	r = coord_persist_blob(co, "baselines", buf, len);
	free(buf);
	return r;
}

/* The last hour of ringd's own bytes per pair, for the next start. */
static int coord_persist_self_bytes(struct coord *co)
{
	size_t cap = 256 * 1024, len;
	char *buf = malloc(cap);
	int r;

	if (!buf)
		return -1;
	len = survey_self_bytes_text(co->survey, clock_now_ms(), buf, cap);
	r = coord_persist_blob(co, "selfbytes", buf, len);
	free(buf);
	return r;
}

/* The topology (its rank order in it) under "topology". */
static int coord_persist_topology(struct coord *co, const Ring__Topology *t)
{
	size_t len = ring__topology__get_packed_size(t);
	uint8_t *buf = malloc(len ? len : 1);
	int r;

	if (!buf) {
		log_warnx("store: out of memory saving the topology");
		return -1;
	}
	ring__topology__pack(t, buf);
	r = coord_persist_blob(co, "topology", buf, len);
	free(buf);
	return r;
}

void coord_persist_published(struct coord *co, const Ring__Topology *t)
{
	coord_persist_topology(co, t);
	coord_persist_baselines(co);
	coord_persist_self_bytes(co);
}

/* A fresh file, or one that takes writes again: the current state in one
 * transaction (the topology with its rank order, the alerts, what the
 * watch and the survey keep); the history and episodes that were not
 * saved are gone. */
int coord_persist_rewrite(struct store *s, void *arg)
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
		r = coord_persist_topology(co, t);
	n = n ? alerts_list(co->alerts, 1, v, n) : 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		struct store *w = store_keeper_writable(co->keeper);

		r = w ? store_alert_save(w, v[i]) : -1;
	}
	if (r == 0 && co->rules)
		r = coord_persist_baselines(co);
	if (r == 0 && co->survey)
		r = coord_persist_self_bytes(co);
	if (r == 0 && co->am)
		coord_persist_am_save(co);
	free(v);
	if (store_batch_end(s) < 0)
		return -1;
	return r;
}

/* The store's state as alerts: store_failing while it cannot save,
 * state_lost when a file was lost (until a survey publishes again). */
void coord_persist_store_changed(void *arg)
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

static int coord_persist_restore_alert(const struct alert *a, void *arg)
{
	struct coord *co = arg;

	if (alerts_restore(co->alerts, a) < 0)
		log_warnx("store: alert %s %s not restored", a->rule,
			  a->subject);
	return 0;
}

/* What the store kept: the alerts as they were, the last topology as
 * the answer to status and ranks until a survey completes. */
void coord_persist_restore(struct coord *co)
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
	store_alerts_load(s, coord_persist_restore_alert, co);
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

/* Hourly; while a bounded pass leaves more (a limit lowered, a burst of
 * rows), again a second later: each pass holds the loop a few ms. */
void coord_persist_thin(evutil_socket_t fd, short what, void *arg)
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

/* What Alertmanager is still owed survives a restart (the firing alerts
 * need nothing: the table is restored and resent). */
void coord_persist_am_save(void *arg)
{
	struct coord *co = arg;
	char *buf = NULL;
	size_t len = 0;

	if (alertmanager_owed_text(co->am, &buf, &len) < 0)
		log_warnx("store: out of memory saving the resolutions owed "
			  "to Alertmanager");
	else
		coord_persist_blob(co, "alertmanager_owed", buf, len);
	free(buf);
}

int coord_persist_am_load(struct coord *co)
{
	void *buf = NULL;
	size_t len = 0;
	uint64_t saved;
	int dropped;

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

/* control_view's history and episodes (control.h): the store's, or
 * ENODEV while there is none. */
int coord_persist_history_page(
	void *arg, const char *edge, uint64_t since_ms, uint64_t before_ms,
	uint64_t before_id, size_t max,
	int (*fn)(const struct store_sample *v, void *fnarg), void *fnarg)
{
	struct store *s = store_keeper_store(((struct coord *)arg)->keeper);

	if (!s) {
		errno = ENODEV;
		return -1;
	}
	return store_history_page(s, edge, since_ms, before_ms, before_id, max,
				  fn, fnarg);
}

int coord_persist_episodes(void *arg, uint64_t since_ms, size_t max,
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
