/* alerts: the table's lifecycle (fired, changed, resolved), hold-down and
 * flaps, rounds, bounds, order, health, restore, and strings cut to fit. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coordinator/alerts.h"
#include "coordinator/health.h"
#include "testalerts.h"

#define REC_MAX 64

/* What the notify callback saw: every transition in order, and what the
 * table said about itself while the callback ran. */
struct rec {
	struct alerts *t;
	unsigned n, fired, resolved, changed;
	enum alert_event ev[REC_MAX];
	struct alert a[REC_MAX];
	size_t firing_then[REC_MAX]; /* alerts_firing during the call */
	int listed_then[REC_MAX];    /* the alert was in alerts_list(all) */
};

static void rec_notify(const struct alert *a, enum alert_event ev, void *arg)
{
	struct rec *r = arg;
	const struct alert *l[REC_MAX];
	size_t n;

	if (ev == ALERT_EV_FIRED)
		r->fired++;
	else if (ev == ALERT_EV_RESOLVED)
		r->resolved++;
	else
		r->changed++;
	if (r->n >= REC_MAX) {
		r->n++; /* counted, not kept */
		return;
	}
	r->ev[r->n] = ev;
	r->a[r->n] = *a;
	r->firing_then[r->n] = r->t ? alerts_firing(r->t) : 0;
	r->listed_then[r->n] = 0;
	if (r->t) {
		n = alerts_list(r->t, 1, l, REC_MAX);
		for (size_t i = 0; i < n && i < REC_MAX; i++)
			if (l[i] == a)
				r->listed_then[r->n] = 1;
	}
	r->n++;
}

static struct alerts *new_table(struct rec *r, uint64_t hold_ms,
				size_t max_firing, size_t max_resolved,
				uint64_t keep_ms)
{
	const struct alerts_conf c = {
		.hold_down_ms = hold_ms,
		.max_resolved = max_resolved,
		.keep_resolved_ms = keep_ms,
		.max_firing = max_firing,
	};
	struct alerts *t;

	memset(r, 0, sizeof(*r));
	t = alerts_new(&c, rec_notify, r);
	assert_non_null(t);
	r->t = t;
	return t;
}

/* The one alert of (rule, subject) in alerts_list(all), or NULL. */
static const struct alert *find(struct alerts *t, const char *rule,
				const char *subject)
{
	const struct alert *l[256];
	size_t n = alerts_list(t, 1, l, 256);
	const struct alert *hit = NULL;

	assert_true(n <= 256);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(l[i]->rule, rule) || strcmp(l[i]->subject, subject))
			continue;
		assert_null(hit); /* one per key */
		hit = l[i];
	}
	return hit;
}

static int raise_w(struct alerts *t, const char *rule, const char *subject,
		   const char *message, uint64_t now)
{
	return alerts_raise(t, rule, subject, NULL, NULL, ALERT_WARNING,
			    message, now);
}

/* New, refreshed, changed, cleared, resolved, and back: a new episode. */
static void test_lifecycle(void **state)
{
	struct rec r;
	struct alerts *t = new_table(&r, 1000, 16, 16, 3600000);
	const struct alert *a;

	(void)state;
	assert_int_equal(alerts_raise(t, "node_down", "n3", "n3", NULL,
				      ALERT_CRITICAL, "n3 is down", 1000),
			 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.ev[0], ALERT_EV_FIRED);
	assert_string_equal(r.a[0].rule, "node_down");
	assert_string_equal(r.a[0].subject, "n3");
	assert_string_equal(r.a[0].node, "n3");
	assert_string_equal(r.a[0].edge, "");
	assert_string_equal(r.a[0].message, "n3 is down");
	assert_int_equal(r.a[0].severity, ALERT_CRITICAL);
	assert_int_equal(r.a[0].firing, 1);
	assert_int_equal(r.a[0].first_seen_ms, 1000);
	assert_int_equal(r.a[0].last_seen_ms, 1000);
	assert_int_equal(r.a[0].resolved_ms, 0);
	assert_int_equal(r.a[0].flaps, 0);
	/* Consistent before the callback: counted and listed. */
	assert_int_equal(r.firing_then[0], 1);
	assert_true(r.listed_then[0]);

	/* The same condition again: refreshed, nothing notified. */
	assert_int_equal(alerts_raise(t, "node_down", "n3", "n3", NULL,
				      ALERT_CRITICAL, "n3 is down", 2000),
			 0);
	assert_int_equal(r.n, 1);
	a = find(t, "node_down", "n3");
	assert_non_null(a);
	assert_int_equal(a->first_seen_ms, 1000);
	assert_int_equal(a->last_seen_ms, 2000);

	/* Another message: the table follows, quietly; another severity:
	 * CHANGED. */
	assert_int_equal(alerts_raise(t, "node_down", "n3", "n3", NULL,
				      ALERT_CRITICAL, "n3 is down for 5s",
				      3000),
			 0);
	assert_int_equal(r.n, 1);
	a = find(t, "node_down", "n3");
	assert_string_equal(a->message, "n3 is down for 5s");
	assert_int_equal(a->first_seen_ms, 1000);
	assert_int_equal(a->last_seen_ms, 3000);
	assert_int_equal(alerts_raise(t, "node_down", "n3", "n3", NULL,
				      ALERT_WARNING, "n3 is down for 5s", 3500),
			 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.ev[1], ALERT_EV_CHANGED);
	assert_string_equal(r.a[1].message, "n3 is down for 5s");
	assert_int_equal(r.a[1].severity, ALERT_WARNING);
	assert_int_equal(alerts_tick(t, 3600), 0);

	/* Cleared: still firing (clearing) for the hold-down, and health
	 * keeps its severity: never healthy while anything fires. */
	alerts_clear(t, "node_down", "n3", 4000);
	assert_int_equal(r.n, 2);
	assert_int_equal(alerts_firing(t), 1);
	assert_int_equal(find(t, "node_down", "n3")->clearing, 1);
	assert_int_equal(find(t, "node_down", "n3")->cleared_ms, 4000);
	assert_string_equal(testalerts_health(t), "degraded");
	assert_int_equal(alerts_tick(t, 4400), 600);
	assert_int_equal(r.n, 2);
	assert_int_equal(alerts_tick(t, 4999), 1);
	assert_int_equal(r.n, 2);
	assert_int_equal(alerts_tick(t, 5000), 0);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.ev[2], ALERT_EV_RESOLVED);
	assert_int_equal(r.a[2].firing, 0);
	/* Resolved when the hold-down ended (what the sinks were told);
	 * cleared when the condition went away; the resolution says what
	 * cleared and after how long it held. */
	assert_int_equal(r.a[2].resolved_ms, 5000);
	assert_int_equal(r.a[2].cleared_ms, 4000);
	assert_int_equal(r.a[2].clearing, 0);
	assert_string_equal(r.a[2].resolved_message,
			    "n3 is up again after 3 s");
	assert_int_equal(r.a[2].first_seen_ms, 1000);
	assert_int_equal(r.a[2].last_seen_ms, 3500);
	assert_int_equal(r.a[2].flaps, 0);
	assert_int_equal(r.firing_then[2], 0);
	assert_int_equal(alerts_firing(t), 0);
	assert_string_equal(testalerts_health(t), "healthy");
	assert_int_equal(alerts_list(t, 0, NULL, 0), 0);
	assert_int_equal(alerts_list(t, 1, NULL, 0), 1);
	/* Clearing a resolved or unknown alert does nothing. */
	alerts_clear(t, "node_down", "n3", 5100);
	alerts_clear(t, "node_down", "n9", 5100);
	alerts_clear(t, NULL, "n9", 5100);
	assert_int_equal(r.n, 3);

	/* Back: a new episode of the same key. */
	assert_int_equal(alerts_raise(t, "node_down", "n3", "n3", NULL,
				      ALERT_CRITICAL, "n3 is down", 6000),
			 0);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.ev[3], ALERT_EV_FIRED);
	assert_int_equal(r.a[3].first_seen_ms, 6000);
	assert_int_equal(r.a[3].resolved_ms, 0);
	assert_int_equal(r.a[3].flaps, 0);
	assert_int_equal(r.a[3].severity, ALERT_CRITICAL);
	assert_int_equal(alerts_list(t, 1, NULL, 0), 1);
	alerts_free(t);
}

/* The flapping link: down and up 20 times in 10 s with a 30 s
 * hold-down is one alert with 19 flaps, resolved once 30 s after the last
 * clear. */
static void test_flapping(void **state)
{
	struct rec r;
	struct alerts *t = new_table(&r, 30000, 16, 16, 3600000);
	const struct alert *a;
	uint64_t now = 100000, last_clear = 0;

	(void)state;
	for (int i = 0; i < 20; i++) {
		assert_int_equal(alerts_raise(t, "cable_down", "n1-n2", NULL,
					      "n1-n2", ALERT_CRITICAL,
					      "n1-n2 carrier lost", now),
				 0);
		now += 250;
		alerts_clear(t, "cable_down", "n1-n2", now);
		last_clear = now;
		now += 250;
		assert_int_not_equal(alerts_tick(t, now), 0);
	}
	assert_true(last_clear - 100000 <= 10000);
	assert_int_equal(r.fired, 1);
	assert_int_equal(r.resolved, 0);
	assert_int_equal(r.changed, 0);
	a = find(t, "cable_down", "n1-n2");
	assert_non_null(a);
	assert_int_equal(a->firing, 1);
	assert_int_equal(a->flaps, 19);
	assert_int_equal(a->first_seen_ms, 100000);
	assert_string_equal(a->edge, "n1-n2");
	/* The last flap cleared it: firing on (clearing), health held. */
	assert_int_equal(a->clearing, 1);
	assert_string_equal(testalerts_health(t), "critical");

	/* Clear for the hold-down, less one ms: still firing. */
	assert_int_equal(alerts_tick(t, last_clear + 29999), 1);
	assert_int_equal(r.resolved, 0);
	assert_int_equal(alerts_tick(t, last_clear + 30000), 0);
	assert_int_equal(r.fired, 1);
	assert_int_equal(r.resolved, 1);
	assert_int_equal(r.a[r.n - 1].flaps, 19);
	assert_int_equal(r.a[r.n - 1].resolved_ms, last_clear + 30000);
	assert_int_equal(r.a[r.n - 1].cleared_ms, last_clear);
	assert_int_equal(r.n, 2);
	alerts_free(t);
}

/* A passed hold-down resolves without alerts_tick: at another alert's
 * clear, at a round's end, and at a raise of the same key (then RESOLVED
 * and a new FIRED, not a flap). The caller's clock going back resolves
 * nothing. */
static void test_hold_down_without_tick(void **state)
{
	static const char *const rules[] = {"edge_degraded"};
	struct rec r;
	struct alerts *t = new_table(&r, 1000, 16, 16, 3600000);

	(void)state;
	assert_int_equal(raise_w(t, "a", "x", "m", 1000), 0);
	assert_int_equal(raise_w(t, "b", "y", "m", 1000), 0);
	alerts_clear(t, "a", "x", 2000);
	/* A second clear keeps the first one's time; the clock going back
	 * resolves nothing. */
	alerts_clear(t, "a", "x", 2500);
	assert_int_equal(alerts_tick(t, 1500), 1000);
	assert_int_equal(r.resolved, 0);
	alerts_clear(t, "b", "y", 3000);
	assert_int_equal(r.resolved, 1);
	assert_string_equal(r.a[r.n - 1].rule, "a");
	assert_int_equal(r.a[r.n - 1].resolved_ms, 3000);
	alerts_round_begin(t);
	alerts_round_end(t, rules, 1, 4000);
	assert_int_equal(r.resolved, 2);
	assert_string_equal(r.a[r.n - 1].rule, "b");
	assert_int_equal(r.a[r.n - 1].resolved_ms, 4000);

	/* Cleared, hold-down passed, raised before any tick. */
	assert_int_equal(raise_w(t, "c", "z", "m", 5000), 0);
	alerts_clear(t, "c", "z", 6000);
	assert_int_equal(raise_w(t, "c", "z", "m", 7000), 0);
	assert_int_equal(r.ev[r.n - 2], ALERT_EV_RESOLVED);
	assert_int_equal(r.a[r.n - 2].resolved_ms, 7000);
	assert_int_equal(r.ev[r.n - 1], ALERT_EV_FIRED);
	assert_int_equal(r.a[r.n - 1].first_seen_ms, 7000);
	assert_int_equal(r.a[r.n - 1].flaps, 0);
	alerts_free(t);
}

/* hold_down 0: resolved at the clear itself. */
static void test_hold_down_zero(void **state)
{
	struct rec r;
	struct alerts *t = new_table(&r, 0, 16, 16, 3600000);

	(void)state;
	assert_int_equal(raise_w(t, "mtu_mismatch", "n1-n2", "m", 1000), 0);
	alerts_clear(t, "mtu_mismatch", "n1-n2", 1500);
	assert_int_equal(r.fired, 1);
	assert_int_equal(r.resolved, 1);
	assert_int_equal(r.a[1].resolved_ms, 1500);
	assert_int_equal(alerts_firing(t), 0);
	assert_int_equal(alerts_tick(t, 1500), 0);
	/* Back at once: a new episode, no flap. */
	assert_int_equal(raise_w(t, "mtu_mismatch", "n1-n2", "m", 1600), 0);
	assert_int_equal(r.fired, 2);
	assert_int_equal(find(t, "mtu_mismatch", "n1-n2")->flaps, 0);
	alerts_free(t);
}

/* A round clears the alerts of its rules that it did not raise, and leaves
 * other rules alone. */
static void test_rounds(void **state)
{
	static const char *const rules[] = {"node_down", "cable_down"};
	struct rec r;
	struct alerts *t = new_table(&r, 0, 16, 16, 3600000);

	(void)state;
	alerts_round_begin(t);
	assert_int_equal(raise_w(t, "node_down", "n3", "m", 1000), 0);
	assert_int_equal(raise_w(t, "node_down", "n4", "m", 1000), 0);
	assert_int_equal(raise_w(t, "cable_down", "n1-n2", "m", 1000), 0);
	assert_int_equal(raise_w(t, "ring_broken", "ring", "m", 1000), 0);
	alerts_round_end(t, rules, 2, 1000);
	assert_int_equal(r.fired, 4);
	assert_int_equal(r.resolved, 0);
	assert_int_equal(alerts_firing(t), 4);

	alerts_round_begin(t);
	assert_int_equal(raise_w(t, "node_down", "n3", "m", 2000), 0);
	alerts_round_end(t, rules, 2, 2000);
	assert_int_equal(r.resolved, 2);
	assert_int_equal(find(t, "node_down", "n3")->firing, 1);
	assert_int_equal(find(t, "node_down", "n4")->firing, 0);
	assert_int_equal(find(t, "cable_down", "n1-n2")->firing, 0);
	assert_int_equal(find(t, "ring_broken", "ring")->firing, 1);

	/* A round of other rules touches none of these. */
	alerts_round_begin(t);
	alerts_round_end(t, (const char *const[]){"gid_change"}, 1, 3000);
	assert_int_equal(r.resolved, 2);
	assert_int_equal(alerts_firing(t), 2);
	/* A round with no rules, or a NULL among them, clears nothing. */
	alerts_round_begin(t);
	alerts_round_end(t, NULL, 0, 3500);
	alerts_round_end(t, (const char *const[]){NULL}, 1, 3500);
	assert_int_equal(r.resolved, 2);

	/* An empty round of node_down: n3 goes. */
	alerts_round_begin(t);
	alerts_round_end(t, rules, 1, 4000);
	assert_int_equal(r.resolved, 3);
	assert_string_equal(r.a[r.n - 1].subject, "n3");
	assert_int_equal(r.a[r.n - 1].resolved_ms, 4000);
	assert_int_equal(find(t, "ring_broken", "ring")->firing, 1);
	alerts_free(t);
}

/* With a hold-down, rounds that miss a condition now and then are flaps of
 * one alert. */
/* A rack of nodes down: thousands of alerts, each raised again every
 * round, each found as the one it is (no second episode, no notice),
 * cleared and resolved one by one while the others fire on. */
static void test_rack_down(void **state)
{
	struct rec r;
	struct alerts *t = new_table(&r, 0, 20000, 20000, 0);
	char subject[32];

	(void)state;
	for (int round = 0; round < 3; round++) {
		alerts_round_begin(t);
		for (int i = 0; i < 10000; i++) {
			snprintf(subject, sizeof(subject), "n%d", i);
			assert_int_equal(raise_w(t, "node_down", subject,
						 "down", 100 + round),
					 0);
		}
		alerts_round_end(t, NULL, 0, 100 + round);
	}
	assert_int_equal(alerts_firing(t), 10000);
	assert_int_equal(r.n, 10000); /* fired once each */
	assert_non_null(alerts_get(t, "node_down", "n9999"));
	assert_null(alerts_get(t, "node_down", "n10000"));
	alerts_clear(t, "node_down", "n5", 200);
	assert_int_equal(alerts_firing(t), 9999);
	assert_int_equal(raise_w(t, "node_down", "n5", "down", 300), 0);
	assert_int_equal(alerts_firing(t), 10000);
	alerts_free(t);
}

static void test_rounds_hold_down(void **state)
{
	static const char *const rules[] = {"port_errors"};
	struct rec r;
	struct alerts *t = new_table(&r, 10000, 16, 16, 3600000);
	uint64_t now = 1000;

	(void)state;
	for (int i = 0; i < 6; i++, now += 1000) {
		alerts_round_begin(t);
		if (i % 2 == 0)
			assert_int_equal(
				raise_w(t, "port_errors", "n1 eth2", "m", now),
				0);
		alerts_round_end(t, rules, 1, now);
	}
	assert_int_equal(r.fired, 1);
	assert_int_equal(r.resolved, 0);
	assert_int_equal(find(t, "port_errors", "n1 eth2")->flaps, 2);
	/* The last round (6000) missed it: 1000 ms into its hold-down. */
	assert_int_equal(alerts_tick(t, now), 10000 - 1000);
	alerts_free(t);
}

/* At most max_firing alerts fire; the firing ones still refresh. */
static void test_max_firing(void **state)
{
	struct rec r;
	struct alerts *t = new_table(&r, 0, 3, 16, 3600000);

	(void)state;
	assert_int_equal(raise_w(t, "r", "s1", "m", 1000), 0);
	assert_int_equal(raise_w(t, "r", "s2", "m", 1000), 0);
	assert_int_equal(raise_w(t, "r", "s3", "m", 1000), 0);
	errno = 0;
	assert_int_equal(raise_w(t, "r", "s4", "m", 1000), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(r.fired, 3);
	assert_null(find(t, "r", "s4"));
	/* Existing ones refresh and change (a new message: quietly). */
	assert_int_equal(raise_w(t, "r", "s2", "m", 2000), 0);
	assert_int_equal(find(t, "r", "s2")->last_seen_ms, 2000);
	assert_int_equal(raise_w(t, "r", "s3", "other", 2000), 0);
	assert_int_equal(r.changed, 0);
	assert_string_equal(find(t, "r", "s3")->message, "other");
	/* One resolves: room for one more. A resolved one coming back needs
	 * room too. */
	alerts_clear(t, "r", "s1", 3000);
	assert_int_equal(raise_w(t, "r", "s4", "m", 3000), 0);
	errno = 0;
	assert_int_equal(raise_w(t, "r", "s1", "m", 3000), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(find(t, "r", "s1")->firing, 0);
	assert_int_equal(alerts_firing(t), 3);
	assert_int_equal(r.fired, 4);
	alerts_free(t);

	/* max_firing 0 would refuse everything: refused itself. */
	{
		const struct alerts_conf c = {.max_firing = 0};

		errno = 0;
		assert_null(alerts_new(&c, NULL, NULL));
		assert_int_equal(errno, EINVAL);
		errno = 0;
		assert_null(alerts_new(NULL, NULL, NULL));
		assert_int_equal(errno, EINVAL);
	}
}

/* Resolved alerts: the newest max_resolved, none older than
 * keep_resolved_ms. */
static void test_resolved_keep(void **state)
{
	struct rec r;
	struct alerts *t = new_table(&r, 0, 16, 2, 10000);
	const struct alert *l[8];

	(void)state;
	for (int i = 0; i < 4; i++) {
		char s[8];

		snprintf(s, sizeof(s), "s%u", (unsigned)i & 7u);
		assert_int_equal(raise_w(t, "r", s, "m", 1000), 0);
	}
	assert_int_equal(raise_w(t, "r", "live", "m", 1000), 0);
	alerts_clear(t, "r", "s2", 2000);
	alerts_clear(t, "r", "s0", 3000);
	alerts_clear(t, "r", "s3", 4000);
	/* Bounded between ticks too: s0 and s3 resolved, s1 and live fire. */
	assert_int_equal(alerts_list(t, 1, l, 8), 4);
	alerts_clear(t, "r", "s1", 5000);
	assert_int_equal(r.resolved, 4);
	assert_int_equal(alerts_list(t, 1, l, 8), 3);
	assert_int_equal(alerts_tick(t, 5000), 0);
	/* The two newest resolved, and the firing one. */
	assert_int_equal(alerts_list(t, 1, l, 8), 3);
	assert_string_equal(l[0]->subject, "live");
	assert_non_null(find(t, "r", "s3"));
	assert_non_null(find(t, "r", "s1"));
	assert_null(find(t, "r", "s0"));
	assert_null(find(t, "r", "s2"));
	/* Age: s3 resolved at 4000 goes at 14000, s1 at 15000. */
	alerts_tick(t, 13999);
	assert_int_equal(alerts_list(t, 1, l, 8), 3);
	alerts_tick(t, 14000);
	assert_int_equal(alerts_list(t, 1, l, 8), 2);
	assert_null(find(t, "r", "s3"));
	alerts_tick(t, 15000);
	assert_int_equal(alerts_list(t, 1, l, 8), 1);
	/* The firing one is never dropped, whatever its age. */
	alerts_tick(t, 1000000);
	assert_int_equal(alerts_list(t, 1, l, 8), 1);
	assert_int_equal(r.resolved, 4);
	/* Restored resolved ones obey the count at once: the newest two. */
	for (unsigned i = 0; i < 3; i++) {
		struct alert a;

		memset(&a, 0, sizeof(a));
		snprintf(a.rule, sizeof(a.rule), "r");
		snprintf(a.subject, sizeof(a.subject), "old%u", i);
		a.severity = ALERT_WARNING;
		a.resolved_ms = 999000 + i;
		assert_int_equal(alerts_restore(t, &a), 0);
	}
	assert_int_equal(alerts_list(t, 1, l, 8), 3);
	assert_null(find(t, "r", "old0"));
	assert_int_equal(r.n, 9); /* 5 FIRED, 4 RESOLVED: none more */
	alerts_free(t);
}

/* Firing first, most severe first, oldest first, then rule and subject;
 * max cuts what is filled, not what is counted. */
static void test_list_order(void **state)
{
	struct rec r;
	struct alerts *t = new_table(&r, 0, 16, 16, 3600000);
	const struct alert *l[8];

	(void)state;
	assert_int_equal(alerts_raise(t, "resolved", "x", NULL, NULL,
				      ALERT_CRITICAL, "m", 500),
			 0);
	alerts_clear(t, "resolved", "x", 600);
	assert_int_equal(
		alerts_raise(t, "info", "x", NULL, NULL, ALERT_INFO, "m", 700),
		0);
	assert_int_equal(raise_w(t, "warn_b", "x", "m", 1000), 0);
	assert_int_equal(raise_w(t, "warn_a", "y", "m", 1000), 0);
	assert_int_equal(raise_w(t, "warn_a", "x", "m", 1000), 0);
	assert_int_equal(raise_w(t, "warn_old", "x", "m", 800), 0);
	assert_int_equal(alerts_raise(t, "crit", "x", NULL, NULL,
				      ALERT_CRITICAL, "m", 2000),
			 0);

	assert_int_equal(alerts_list(t, 1, l, 8), 7);
	assert_string_equal(l[0]->rule, "crit");
	assert_string_equal(l[1]->rule, "warn_old");
	assert_string_equal(l[2]->rule, "warn_a");
	assert_string_equal(l[2]->subject, "x");
	assert_string_equal(l[3]->rule, "warn_a");
	assert_string_equal(l[3]->subject, "y");
	assert_string_equal(l[4]->rule, "warn_b");
	assert_string_equal(l[5]->rule, "info");
	assert_string_equal(l[6]->rule, "resolved");
	/* Firing only; and a short array gets the head of the order. */
	assert_int_equal(alerts_list(t, 0, l, 8), 6);
	assert_string_equal(l[5]->rule, "info");
	l[2] = NULL;
	assert_int_equal(alerts_list(t, 1, l, 2), 7);
	assert_string_equal(l[0]->rule, "crit");
	assert_string_equal(l[1]->rule, "warn_old");
	assert_null(l[2]);
	alerts_free(t);
}

/* Health from the most severe firing alert; INFO and the watchdog do not
 * count; an alert within its hold-down still fires. */
static void test_health(void **state)
{
	struct rec r;
	struct alerts *t = new_table(&r, 1000, 16, 16, 3600000);

	(void)state;
	assert_string_equal(testalerts_health(t), "healthy");
	assert_int_equal(alerts_raise(t, "version_skew", "n2", "n2", NULL,
				      ALERT_INFO, "m", 1000),
			 0);
	assert_int_equal(alerts_raise(t, "watchdog", "coordinator", NULL, NULL,
				      ALERT_CRITICAL, "m", 1000),
			 0);
	assert_string_equal(testalerts_health(t), "healthy");
	assert_int_equal(alerts_firing(t), 2);
	assert_int_equal(raise_w(t, "edge_degraded", "n1-n2", "m", 1000), 0);
	assert_string_equal(testalerts_health(t), "degraded");
	assert_int_equal(alerts_raise(t, "node_down", "n3", "n3", NULL,
				      ALERT_CRITICAL, "m", 1000),
			 0);
	assert_string_equal(testalerts_health(t), "critical");
	alerts_clear(t, "node_down", "n3", 2000);
	/* Clearing within the hold-down: still critical. */
	assert_string_equal(testalerts_health(t), "critical");
	alerts_tick(t, 3000);
	assert_string_equal(testalerts_health(t), "degraded");
	alerts_clear(t, "edge_degraded", "n1-n2", 3000);
	alerts_tick(t, 4000);
	assert_string_equal(testalerts_health(t), "healthy");
	assert_int_equal(alerts_firing(t), 2);
	alerts_free(t);
	assert_string_equal(testalerts_health(NULL), "healthy");
}

static struct alert saved(const char *rule, const char *subject, int firing,
			  enum alert_severity sev)
{
	struct alert a;

	memset(&a, 0, sizeof(a));
	snprintf(a.rule, sizeof(a.rule), "%s", rule);
	snprintf(a.subject, sizeof(a.subject), "%s", subject);
	snprintf(a.node, sizeof(a.node), "n3");
	snprintf(a.message, sizeof(a.message), "saved");
	a.severity = sev;
	a.firing = firing;
	a.first_seen_ms = 100;
	a.last_seen_ms = 200;
	a.resolved_ms = firing ? 0 : 300;
	a.flaps = 4;
	return a;
}

/* Restored alerts: no notification, then the usual lifecycle. */
static void test_restore(void **state)
{
	static const char *const rules[] = {"cable_down"};
	struct rec r;
	struct alerts *t = new_table(&r, 0, 2, 16, 3600000);
	struct alert a;
	const struct alert *b;

	(void)state;
	a = saved("node_down", "n3", 1, ALERT_CRITICAL);
	assert_int_equal(alerts_restore(t, &a), 0);
	a = saved("cable_down", "n1-n2", 1, ALERT_WARNING);
	assert_int_equal(alerts_restore(t, &a), 0);
	a = saved("gid_change", "n2", 0, ALERT_INFO);
	assert_int_equal(alerts_restore(t, &a), 0);
	assert_int_equal(r.n, 0);
	assert_int_equal(alerts_firing(t), 2);
	assert_string_equal(testalerts_health(t), "critical");
	b = find(t, "node_down", "n3");
	assert_non_null(b);
	assert_int_equal(b->first_seen_ms, 100);
	assert_int_equal(b->flaps, 4);
	assert_string_equal(b->node, "n3");
	assert_int_equal(find(t, "gid_change", "n2")->resolved_ms, 300);

	/* Full: a third firing one is refused, a resolved one is not. */
	errno = 0;
	a = saved("ring_broken", "ring", 1, ALERT_CRITICAL);
	assert_int_equal(alerts_restore(t, &a), -1);
	assert_int_equal(errno, ENOSPC);
	a = saved("ring_broken", "ring", 0, ALERT_CRITICAL);
	assert_int_equal(alerts_restore(t, &a), 0);

	/* Raised again: fires on, no second FIRED. */
	assert_int_equal(alerts_raise(t, "node_down", "n3", "n3", NULL,
				      ALERT_CRITICAL, "saved", 1000),
			 0);
	assert_int_equal(r.n, 0);
	assert_int_equal(find(t, "node_down", "n3")->first_seen_ms, 100);
	assert_int_equal(find(t, "node_down", "n3")->last_seen_ms, 1000);
	/* Cleared: RESOLVED as usual. */
	alerts_clear(t, "node_down", "n3", 2000);
	assert_int_equal(r.resolved, 1);
	assert_int_equal(r.a[0].resolved_ms, 2000);
	assert_int_equal(r.a[0].first_seen_ms, 100);
	/* A round that does not raise a restored alert clears it. */
	alerts_round_begin(t);
	alerts_round_end(t, rules, 1, 3000);
	assert_int_equal(r.resolved, 2);
	assert_string_equal(r.a[1].subject, "n1-n2");
	assert_int_equal(alerts_firing(t), 0);

	/* Restored within a round and not raised by it: cleared at its end. */
	alerts_round_begin(t);
	a = saved("cable_down", "n2-n4", 1, ALERT_WARNING);
	assert_int_equal(alerts_restore(t, &a), 0);
	alerts_round_end(t, rules, 1, 3500);
	assert_int_equal(r.resolved, 3);
	assert_string_equal(r.a[2].subject, "n2-n4");
	assert_int_equal(alerts_firing(t), 0);

	/* A duplicate key replaces, still without notification. */
	a = saved("gid_change", "n2", 1, ALERT_WARNING);
	snprintf(a.message, sizeof(a.message), "newer");
	assert_int_equal(alerts_restore(t, &a), 0);
	assert_int_equal(alerts_list(t, 1, NULL, 0), 5);
	b = find(t, "gid_change", "n2");
	assert_int_equal(b->firing, 1);
	assert_int_equal(b->resolved_ms, 0);
	assert_string_equal(b->message, "newer");
	assert_int_equal(alerts_firing(t), 1);
	a.firing = 0;
	a.resolved_ms = 0; /* resolved without a time: its last seen */
	assert_int_equal(alerts_restore(t, &a), 0);
	assert_int_equal(alerts_firing(t), 0);
	assert_int_equal(find(t, "gid_change", "n2")->resolved_ms, 200);
	assert_int_equal(r.n, 3);

	/* Bad ones: no rule, a severity out of range, NULL. */
	a = saved("", "x", 1, ALERT_WARNING);
	errno = 0;
	assert_int_equal(alerts_restore(t, &a), -1);
	assert_int_equal(errno, EINVAL);
	a = saved("r", "x", 1, (enum alert_severity)7);
	assert_int_equal(alerts_restore(t, &a), -1);
	assert_int_equal(alerts_restore(t, NULL), -1);

	/* Fields not terminated (a damaged record): cut, never overread. */
	memset(&a, 'z', sizeof(a));
	a.severity = ALERT_WARNING;
	a.firing = 1;
	assert_int_equal(alerts_restore(t, &a), 0);
	assert_int_equal(alerts_list(t, 0, &b, 1), 1);
	assert_int_equal(strlen(b->rule), ALERTS_RULE_LEN - 1);
	assert_int_equal(strlen(b->subject), ALERTS_SUBJECT_LEN - 1);
	assert_int_equal(strlen(b->node), ALERTS_NODE_LEN - 1);
	assert_int_equal(strlen(b->edge), ALERTS_EDGE_LEN - 1);
	assert_int_equal(strlen(b->message), ALERTS_MESSAGE_LEN - 1);
	assert_int_equal(r.n, 3);
	alerts_free(t);
}

/* Strings longer than their fields are cut (at a character boundary), not
 * refused; the key is the cut one. */
static void test_long_strings(void **state)
{
	struct rec r;
	struct alerts *t = new_table(&r, 0, 16, 16, 3600000);
	char rule[100], subject[300], node[200], edge[300], msg[2000];
	const struct alert *a;

	(void)state;
	memset(rule, 'r', sizeof(rule) - 1);
	rule[sizeof(rule) - 1] = '\0';
	memset(subject, 's', sizeof(subject) - 1);
	subject[sizeof(subject) - 1] = '\0';
	memset(node, 'n', sizeof(node) - 1);
	node[sizeof(node) - 1] = '\0';
	memset(edge, 'e', sizeof(edge) - 1);
	edge[sizeof(edge) - 1] = '\0';
	/* "é" is two bytes: 511 bytes would split the 256th. */
	for (size_t i = 0; i + 2 < sizeof(msg); i += 2)
		memcpy(msg + i, "\xc3\xa9", 2);
	msg[sizeof(msg) - 2] = '\0';
	assert_int_equal(alerts_raise(t, rule, subject, node, edge,
				      ALERT_WARNING, msg, 1000),
			 0);
	assert_int_equal(alerts_list(t, 1, &a, 1), 1);
	assert_int_equal(strlen(a->rule), ALERTS_RULE_LEN - 1);
	assert_int_equal(strlen(a->subject), ALERTS_SUBJECT_LEN - 1);
	assert_int_equal(strlen(a->node), ALERTS_NODE_LEN - 1);
	assert_int_equal(strlen(a->edge), ALERTS_EDGE_LEN - 1);
	assert_int_equal(strlen(a->message), ALERTS_MESSAGE_LEN - 2);
	assert_memory_equal(a->message + ALERTS_MESSAGE_LEN - 4, "\xc3\xa9", 2);
	/* Same prefix, longer still: the same alert. */
	rule[sizeof(rule) - 2] = 'x';
	assert_int_equal(alerts_raise(t, rule, subject, node, edge,
				      ALERT_WARNING, msg, 2000),
			 0);
	assert_int_equal(r.fired, 1);
	assert_int_equal(alerts_list(t, 1, &a, 1), 1);
	assert_int_equal(a->last_seen_ms, 2000);
	/* Three-byte characters: 511 bytes would split the 171st. */
	for (size_t i = 0; i + 3 < sizeof(msg); i += 3)
		memcpy(msg + i, "\xe2\x82\xac", 3);
	msg[1998] = '\0';
	assert_int_equal(raise_w(t, "euro", "x", msg, 3000), 0);
	a = find(t, "euro", "x");
	assert_int_equal(strlen(a->message), 510);
	assert_memory_equal(a->message + 507, "\xe2\x82\xac", 3);
	alerts_clear(t, rule, subject, 4000);
	assert_int_equal(r.resolved, 1);
	/* Bytes that are not UTF-8 (a bad lead, a sequence cut short at the
	 * end, an overlong form) become '?'; the key is the clean one. */
	assert_int_equal(raise_w(t, "node_down",
				 "n\xff"
				 "1",
				 "abc\xc3", 5000),
			 0);
	a = find(t, "node_down", "n?1");
	assert_non_null(a);
	assert_string_equal(a->message, "abc?");
	assert_int_equal(raise_w(t, "node_down",
				 "n\xfe"
				 "1",
				 "\xc0\xaf", 5100),
			 0);
	assert_int_equal(r.fired, 3);
	assert_string_equal(find(t, "node_down", "n?1")->message, "??");
	alerts_free(t);
}

/* NULL node, edge and message are ""; no rule or subject, or a bad
 * severity, is refused; a NULL table is harmless. */
static void test_null_and_bad(void **state)
{
	struct rec r;
	struct alerts *t = new_table(&r, 0, 16, 16, 3600000);
	const struct alert *a;

	(void)state;
	assert_int_equal(alerts_raise(t, "survey_failed", "ring", NULL, NULL,
				      ALERT_WARNING, NULL, 1000),
			 0);
	a = find(t, "survey_failed", "ring");
	assert_non_null(a);
	assert_string_equal(a->node, "");
	assert_string_equal(a->edge, "");
	assert_string_equal(a->message, "");
	/* A message now (quietly); node and edge follow the latest raise. */
	assert_int_equal(alerts_raise(t, "survey_failed", "ring", "n1", "n1-n2",
				      ALERT_WARNING, "why", 1100),
			 0);
	assert_int_equal(r.changed, 0);
	assert_string_equal(find(t, "survey_failed", "ring")->message, "why");
	a = find(t, "survey_failed", "ring");
	assert_string_equal(a->node, "n1");
	assert_string_equal(a->edge, "n1-n2");

	errno = 0;
	assert_int_equal(raise_w(t, NULL, "x", "m", 1000), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(raise_w(t, "", "x", "m", 1000), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(raise_w(t, "r", NULL, "m", 1000), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(alerts_raise(t, "r", "x", NULL, NULL,
				      (enum alert_severity)3, "m", 1000),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(r.fired, 1);
	alerts_clear(t, "r", NULL, 1000);
	assert_int_equal(alerts_list(t, 1, NULL, 0), 1);
	alerts_free(t);

	/* No callback: transitions still happen. */
	{
		const struct alerts_conf c = {.max_firing = 4};

		t = alerts_new(&c, NULL, NULL);
		assert_non_null(t);
		assert_int_equal(raise_w(t, "r", "x", "m", 1000), 0);
		alerts_clear(t, "r", "x", 1000);
		assert_int_equal(alerts_firing(t), 0);
		alerts_free(t);
	}
	assert_int_equal(raise_w(NULL, "r", "x", "m", 1), -1);
	alerts_clear(NULL, "r", "x", 1);
	alerts_round_begin(NULL);
	alerts_round_end(NULL, NULL, 0, 1);
	assert_int_equal(alerts_tick(NULL, 1), 0);
	assert_int_equal(alerts_firing(NULL), 0);
	assert_int_equal(alerts_list(NULL, 1, NULL, 0), 0);
	alerts_free(NULL);
}

/* Many alerts: the table grows, and every one is found and resolved. */
static void test_many(void **state)
{
	struct rec r;
	struct alerts *t;
	char s[16];

	(void)state;
	t = new_table(&r, 0, 500, 1000, 3600000);
	r.t = NULL; /* the callback's own checks are for small tables */
	for (int i = 0; i < 500; i++) {
		snprintf(s, sizeof(s), "n%d", i);
		assert_int_equal(raise_w(t, "node_down", s, "m", 1000), 0);
	}
	assert_int_equal(alerts_firing(t), 500);
	assert_int_equal(raise_w(t, "node_down", "n500", "m", 1000), -1);
	for (int i = 0; i < 500; i += 2) {
		snprintf(s, sizeof(s), "n%d", i);
		alerts_clear(t, "node_down", s, 2000);
	}
	assert_int_equal(alerts_firing(t), 250);
	assert_int_equal(alerts_list(t, 1, NULL, 0), 500);
	assert_int_equal(alerts_list(t, 0, NULL, 0), 250);
	alerts_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_flapping),
		cmocka_unit_test(test_hold_down_without_tick),
		cmocka_unit_test(test_hold_down_zero),
		cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_rack_down),
		cmocka_unit_test(test_rounds_hold_down),
		cmocka_unit_test(test_max_firing),
		cmocka_unit_test(test_resolved_keep),
		cmocka_unit_test(test_list_order),
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_restore),
		cmocka_unit_test(test_long_strings),
		cmocka_unit_test(test_null_and_bad),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
