/* What the coordinator keeps in the store (store.h, through the keeper)
 * and reads back at its start: the published topology with its rank order,
 * the alerts (the latest per rule and subject) and every resolved episode,
 * the history's figures (history_figures.h), the watch's baselines,
 * ringd's own bytes per pair, what Alertmanager is still owed; the hourly
 * thinning; the whole state written again to a fresh file; and the store's
 * own state as the store_failing and state_lost alerts. A failed write is
 * counted by the keeper, never logged here (store_keeper.h says it once
 * per interval). */
#ifndef RING_COORD_PERSIST_H
#define RING_COORD_PERSIST_H

#include <event2/event.h>

#include "alerts.h"
#include "coord.h"
#include "ring.pb-c.h"
#include "store.h"

/* An alert's transition saved (a resolution also as its episode). */
void coord_persist_alert(struct coord *co, const struct alert *a,
			 enum alert_event ev);
/* A survey published t: its figures not recorded under prev (the
 * topology before it) into the history. Before the watch lets go of
 * prev. */
void coord_persist_history(struct coord *co, const Ring__Topology *t,
			   const Ring__Topology *prev);
/* After a publication: the topology t, the baselines, the self bytes. */
void coord_persist_published(struct coord *co, const Ring__Topology *t);
/* At the start: the alerts, baselines, self bytes and topology restored
 * (the watch then re-learns before it judges). */
void coord_persist_restore(struct coord *co);
/* What the last run still owed Alertmanager, loaded into co->am. 0 or
 * -1. */
int coord_persist_am_load(struct coord *co);
/* Callbacks: the keeper's rewrite (arg: co), its state change, the
 * Alertmanager owed set's change, and the thinning timer (every hour,
 * sooner while a pass leaves more). */
int coord_persist_rewrite(struct store *s, void *arg);
void coord_persist_store_changed(void *arg);
void coord_persist_am_save(void *arg);
void coord_persist_thin(evutil_socket_t fd, short what, void *arg);

/* control_view's history page and resolved episodes (control.h); arg:
 * co. -1 with errno ENODEV while no store is open. */
int coord_persist_history_page(
	void *arg, const char *edge, uint64_t since_ms, uint64_t before_ms,
	uint64_t before_id, size_t max,
	int (*fn)(const struct store_sample *v, void *fnarg), void *fnarg);
int coord_persist_episodes(void *arg, uint64_t since_ms, size_t max,
			   int (*fn)(const struct alert *a, void *fnarg),
			   void *fnarg);

#endif
