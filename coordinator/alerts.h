/* Health alerts: one table of alerts keyed by (rule, subject), each with a
 * lifecycle (firing, then resolved), deduplicated, with first and last
 * seen, and a hold-down that makes a flapping condition one alert with a
 * flap count instead of one per flap. The module decides nothing about the
 * cluster: watch.c says which conditions hold; time comes from the caller
 * and transitions go to one callback (the sinks, the store). */
#ifndef RING_ALERTS_H
#define RING_ALERTS_H

#include <stddef.h>
#include <stdint.h>

#include "ring.pb-c.h"

#define ALERTS_RULE_LEN 32
#define ALERTS_SUBJECT_LEN 160
#define ALERTS_NODE_LEN 64
#define ALERTS_EDGE_LEN 140
#define ALERTS_MESSAGE_LEN 512

/* The values of ring.proto's Severity. */
enum alert_severity {
	ALERT_INFO = 0,
	ALERT_WARNING = 1,
	ALERT_CRITICAL = 2,
};

struct alert {
	char rule[ALERTS_RULE_LEN];	  /* stable id: "node_down", ... */
	char subject[ALERTS_SUBJECT_LEN]; /* "n3", "n1-n2", "ring" */
	char node[ALERTS_NODE_LEN];	  /* "" where none */
	char edge[ALERTS_EDGE_LEN];	  /* "" where none */
	/* The ring its subject is in (issue 24; "" the site's), set by the
	 * table's ring function when an episode starts and kept for the
	 * episode (one identity for Alertmanager's labels). */
	char ring[ALERTS_NODE_LEN];
	enum alert_severity severity;
	int firing; /* as published: 0 once resolved */
	char message[ALERTS_MESSAGE_LEN];
	uint64_t first_seen_ms; /* this episode's start */
	uint64_t last_seen_ms;	/* the condition last held */
	uint64_t resolved_ms;	/* 0 while firing; then when it was
				   resolved: the end of the hold-down, when
				   the sinks were told */
	uint64_t cleared_ms;	/* when the condition went away (the clear
				   that began the hold-down); 0 while it
				   holds */
	int clearing;		/* firing, but the condition is gone and
				   the hold-down runs */
	uint32_t flaps;		/* cleared and back within the hold-down */
	/* What cleared and when, for a resolved one ("" while firing):
	 * alert_text_resolved() of the episode. */
	char resolved_message[ALERTS_MESSAGE_LEN];
};

enum alert_event {
	ALERT_EV_FIRED,	   /* a new episode */
	ALERT_EV_RESOLVED, /* clear for the whole hold-down */
	ALERT_EV_CHANGED,  /* still firing: the severity changed */
};

/* Called on every transition, from within alerts_raise/clear/tick/
 * round_end, with the table already consistent; it may read the table
 * (alerts_list, alerts_health, alerts_firing) but must not change it (no
 * raise, clear, round, tick, restore or free). a is valid only during the
 * call. */
typedef void (*alerts_notify_fn)(const struct alert *a, enum alert_event ev,
				 void *arg);

struct alerts_conf {
	uint64_t hold_down_ms; /* clear this long before resolved */
	/* Resolved alerts kept for `alerts --all` (and for a condition that
	 * returns: a new episode), oldest dropped first. */
	size_t max_resolved;
	uint64_t keep_resolved_ms; /* and not longer than this */
	size_t max_firing;	   /* distinct firing alerts, at most */
};
/* max_firing 0 is refused (EINVAL); max_resolved 0 keeps none, and
 * keep_resolved_ms 0 drops resolved ones at the next alerts_tick. */

struct alerts;

/* Names the ring a's subject belongs to into ring (len bytes; "" none). */
typedef void (*alerts_ring_fn)(const struct alert *a, char *ring, size_t len,
			       void *arg);

struct alerts *alerts_new(const struct alerts_conf *conf,
			  alerts_notify_fn notify, void *arg);
void alerts_free(struct alerts *t);
/* Who says which ring an alert is about; NULL: none (every alert the
 * site's). */
void alerts_set_ring_fn(struct alerts *t, alerts_ring_fn fn, void *arg);
/* As alerts_worst, counting only the alerts of ring (NULL: all). */
int alerts_worst_in(const struct alerts *t, const char *ring, int *clearing);

/* The condition (rule, subject) holds at now_ms: a new alert fires (notify
 * FIRED), or the firing one is refreshed (last_seen and message, quietly;
 * a new severity: notify CHANGED), or one clearing within its hold-down
 * fires on (flaps + 1, no notification unless the severity changed). One
 * whose hold-down has passed but that no tick has resolved yet is resolved
 * first (RESOLVED, then FIRED: a new episode). node, edge and message may
 * be NULL (""); every string is cut to its field's size at a UTF-8
 * character boundary, never refused (a byte that is not UTF-8 becomes
 * '?'), and the key is (rule, subject) as cut. 0, or -1 with errno EINVAL (no rule or subject, bad severity),
 * ENOSPC when max_firing distinct alerts already fire (the rule's
 * existing alerts still refresh) or ENOMEM. */
int alerts_raise(struct alerts *t, const char *rule, const char *subject,
		 const char *node, const char *edge,
		 enum alert_severity severity, const char *message,
		 uint64_t now_ms);
/* The condition no longer holds: resolved (notify RESOLVED) once it stays
 * clear for the hold-down; at once when hold_down_ms is 0. A second clear
 * keeps the first one's time. Unknown or resolved alerts are ignored.
 * Also resolves any other alert whose hold-down has passed by now_ms. */
void alerts_clear(struct alerts *t, const char *rule, const char *subject,
		  uint64_t now_ms);

/* An evaluation round: every alert of the given rules that was not raised
 * between begin and end is cleared at end (conditions that went away);
 * alerts of other rules are left alone. A raise outside a round counts
 * for the round that came before it. */
void alerts_round_begin(struct alerts *t);
void alerts_round_end(struct alerts *t, const char *const *rules,
		      size_t n_rules, uint64_t now_ms);

/* Resolve the alerts whose hold-down has passed, drop resolved ones past
 * the keep limits. Returns the ms until the next hold-down ends, 0 when
 * none is pending (the caller arms its timer with it). */
uint64_t alerts_tick(struct alerts *t, uint64_t now_ms);

/* The most severe firing alert that counts for health, or -1 when none
 * does: ALERT_INFO alerts do not count, nor does the "watchdog" rule (it
 * fires while all is well); an alert clearing within its hold-down does
 * (it still fires: health never says healthy while anything fires).
 * *clearing (may be NULL) is set when every alert of that severity is
 * clearing. health.c turns this into the one health word. alerts_firing
 * counts every firing alert (clearing ones included). */
int alerts_worst(const struct alerts *t, int *clearing);
size_t alerts_firing(const struct alerts *t);

/* The alerts in order (firing first, most severe first, then oldest
 * first, then by rule and subject): all = resolved ones too. Returns how
 * many there are; fills at most max pointers (valid until the next call
 * that changes the table). Never allocates. */
size_t alerts_list(const struct alerts *t, int all, const struct alert **out,
		   size_t max);

/* The wire form of a: dst's strings point into a (no copies), so dst is
 * valid as long as a is. */
void alerts_to_wire(const struct alert *a, Ring__Alert *dst);

/* The alert of (rule, subject) as it stands (firing or resolved), or
 * NULL: valid until the table changes. */
const struct alert *alerts_get(const struct alerts *t, const char *rule,
			       const char *subject);

/* Put back an alert saved before a restart (no notification): a firing
 * one fires on without a second FIRED (a later clear resolves it and
 * notifies as usual; it counts as not raised in the current round). It
 * replaces an alert of the same key. 0 or -1 (errno EINVAL: no rule, bad
 * severity; ENOSPC: max_firing already fire; ENOMEM). */
int alerts_restore(struct alerts *t, const struct alert *a);

#endif
