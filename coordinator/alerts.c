/* Health alerts: the table and its lifecycle. A few hundred alerts at
 * most (max_firing + max_resolved), so one array of pointers, searched
 * linearly; pointers to entries stay put while the array grows, which
 * keeps alerts_list's answers valid until the table changes.
 *
 * Each entry carries, besides what is published, whether its condition is
 * clearing (cleared, still firing until the hold-down has passed) and
 * since when, and the round that last raised it. Hold-downs that have
 * passed are resolved by alerts_tick and also by every alerts_raise,
 * alerts_clear and alerts_round_end call, so the table never shows an
 * alert firing past its hold-down to a caller that passes time in. */
#include "alerts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alert_text.h"
#include "log.h"
#include "text.h"

/* Not counted by alerts_health: it fires while all is well, so that a
 * receiver notices a monitor that fell silent. */
#define ALERTS_WATCHDOG_RULE "watchdog"

/* a.clearing and a.cleared_ms say whether the condition is clearing
 * (cleared, still firing until the hold-down has passed) and since
 * when. */
struct alerts_entry {
	struct alert a;
	uint64_t round;		    /* the round that last raised it */
	struct alerts_entry *hnext; /* its bucket's next (rule, subject) */
};

struct alerts {
	struct alerts_conf conf;
	alerts_notify_fn notify;
	void *arg;
	struct alerts_entry **v;
	/* v by (rule, subject): a rack of nodes down is thousands of alerts,
	 * each raised every evaluation (a list walk each was quadratic). */
	struct alerts_entry **hash;
	size_t n_hash; /* a power of two, or 0 */
	/* alerts_list's sort space, as large as v: a list never allocates
	 * (and so never fails). */
	struct alerts_entry **scratch;
	size_t n, cap;
	size_t n_firing;
	uint64_t round;
	alerts_ring_fn ring_fn;
	void *ring_arg;
};

void alerts_set_ring_fn(struct alerts *t, alerts_ring_fn fn, void *arg)
{
	t->ring_fn = fn;
	t->ring_arg = arg;
}

static void alerts_set_ring(const struct alerts *t, struct alert *a)
{
	a->ring[0] = '\0';
	if (t->ring_fn)
		t->ring_fn(a, a->ring, sizeof(a->ring), t->ring_arg);
}

/* Copy src into dst of size len, cut where it does not fit: a cut never
 * splits a UTF-8 sequence, and a byte that is not UTF-8 (a peer's name)
 * becomes '?', since the strings go out in protobuf strings and JSON,
 * which must be valid UTF-8. At most srcmax bytes of src are read: a
 * restored alert's fields need not be terminated. */
static void alerts_copy(char *dst, size_t len, const char *src, size_t srcmax)
{
	const unsigned char *s;
	size_t n, i = 0, o = 0, k;

	if (!src)
		src = "";
	s = (const unsigned char *)src;
	n = strnlen(src, srcmax);
	while (i < n) {
		k = text_utf8_len(s + i, n - i);
		if (k == 0) {
			if (o + 1 >= len)
				break;
			dst[o++] = '?';
			i++;
			continue;
		}
		if (o + k >= len)
			break;
		memcpy(dst + o, s + i, k);
		o += k;
		i += k;
	}
	dst[o] = '\0';
}

static int alerts_severity_ok(enum alert_severity s)
{
	/* As int: a value off the enum may come from a damaged record. */
	return (int)s >= (int)ALERT_INFO && (int)s <= (int)ALERT_CRITICAL;
}

static void alerts_notify(struct alerts *t, const struct alerts_entry *e,
			  enum alert_event ev)
{
	if (t->notify)
		t->notify(&e->a, ev, t->arg);
}

struct alerts *alerts_new(const struct alerts_conf *conf,
			  alerts_notify_fn notify, void *arg)
{
	struct alerts *t;

	/* No firing alert allowed would silently refuse every condition. */
	if (!conf || conf->max_firing == 0) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->conf = *conf;
	t->notify = notify;
	t->arg = arg;
	return t;
}

void alerts_free(struct alerts *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->hash);
	free(t->scratch);
	free(t);
}

/* The entry of (rule, subject) as they are after the copy's cut. */
/* FNV-1a of rule and subject (as the table keeps them). */
static size_t alerts_bucket(const struct alerts *t, const char *r,
			    const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *r; r++)
		h = (h ^ (unsigned char)*r) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h & (t->n_hash - 1);
}

static void alerts_hash_add(struct alerts *t, struct alerts_entry *e)
{
	size_t b;

	if (!t->n_hash)
		return;
	b = alerts_bucket(t, e->a.rule, e->a.subject);
	e->hnext = t->hash[b];
	t->hash[b] = e;
}

static void alerts_hash_del(struct alerts *t, struct alerts_entry *e)
{
	struct alerts_entry **p;

	if (!t->n_hash)
		return;
	for (p = &t->hash[alerts_bucket(t, e->a.rule, e->a.subject)]; *p;
	     p = &(*p)->hnext)
		if (*p == e) {
			*p = e->hnext;
			return;
		}
}

/* Buckets for at least n entries; kept as they were when out of
 * memory (longer chains, the same answers). */
static void alerts_rehash(struct alerts *t, size_t n)
{
	struct alerts_entry **h;
	size_t size = 64;

	while (size < n)
		size *= 2;
	if (size <= t->n_hash)
		return;
	h = calloc(size, sizeof(*h));
	if (!h)
		return;
	free(t->hash);
	t->hash = h;
	t->n_hash = size;
	for (size_t i = 0; i < t->n; i++)
		alerts_hash_add(t, t->v[i]);
}

static struct alerts_entry *alerts_find(const struct alerts *t,
					const char *rule, const char *subject)
{
	char r[ALERTS_RULE_LEN], s[ALERTS_SUBJECT_LEN];

	alerts_copy(r, sizeof(r), rule, (size_t)-1);
	alerts_copy(s, sizeof(s), subject, (size_t)-1);
	if (t->n_hash) {
		for (struct alerts_entry *e = t->hash[alerts_bucket(t, r, s)];
		     e; e = e->hnext)
			if (!strcmp(e->a.rule, r) && !strcmp(e->a.subject, s))
				return e;
		return NULL;
	}
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i]->a.rule, r) &&
		    !strcmp(t->v[i]->a.subject, s))
			return t->v[i];
	return NULL;
}

/* Room for one more entry in v and scratch. */
static int alerts_reserve(struct alerts *t)
{
	struct alerts_entry **v, **s;
	size_t cap;

	if (t->n < t->cap)
		return 0;
	cap = t->cap ? t->cap * 2 : 16;
	v = realloc(t->v, cap * sizeof(*v));
	if (!v)
		return -1;
	t->v = v;
	s = realloc(t->scratch, cap * sizeof(*s));
	if (!s)
		return -1;
	t->scratch = s;
	t->cap = cap;
	alerts_rehash(t, cap);
	return 0;
}

static void alerts_remove(struct alerts *t, size_t i)
{
	if (t->v[i]->a.firing)
		t->n_firing--;
	alerts_hash_del(t, t->v[i]);
	free(t->v[i]);
	memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(t->v[0]));
	t->n--;
}

/* Elapsed from then to now; 0 if the caller's clock went back. */
static uint64_t alerts_since(uint64_t then, uint64_t now)
{
	return now > then ? now - then : 0;
}

static int alerts_hold_passed(const struct alerts *t,
			      const struct alerts_entry *e, uint64_t now_ms)
{
	return e->a.clearing &&
	       alerts_since(e->a.cleared_ms, now_ms) >= t->conf.hold_down_ms;
}

/* Resolved when the hold-down ended (what the sinks are told, and when);
 * cleared_ms keeps when the condition went away. */
static void alerts_resolve(struct alerts *t, struct alerts_entry *e)
{
	uint64_t end = e->a.cleared_ms + t->conf.hold_down_ms;

	e->a.firing = 0;
	/* 0 would read as firing: a clear at time 0 resolves at 1. */
	e->a.resolved_ms = end ? end : 1;
	e->a.clearing = 0;
	alert_text_resolved(&e->a, e->a.resolved_message,
			    sizeof(e->a.resolved_message));
	t->n_firing--;
	log_debug("alerts", "%s %s resolved (flaps %u)", e->a.rule,
		  e->a.subject, e->a.flaps);
	alerts_notify(t, e, ALERT_EV_RESOLVED);
}

/* The oldest resolved entry, by when it resolved; t->n if none. */
static size_t alerts_oldest_resolved(const struct alerts *t)
{
	size_t best = t->n;

	for (size_t i = 0; i < t->n; i++) {
		const struct alert *a = &t->v[i]->a;

		if (a->firing)
			continue;
		if (best == t->n || a->resolved_ms < t->v[best]->a.resolved_ms)
			best = i;
	}
	return best;
}

/* Keep at most max_resolved resolved alerts, the newest. */
static void alerts_trim_resolved(struct alerts *t)
{
	while (t->n - t->n_firing > t->conf.max_resolved)
		alerts_remove(t, alerts_oldest_resolved(t));
}

/* Resolve every alert whose hold-down has passed at now_ms. */
static void alerts_expire(struct alerts *t, uint64_t now_ms)
{
	int any = 0;

	for (size_t i = 0; i < t->n; i++) {
		if (alerts_hold_passed(t, t->v[i], now_ms)) {
			alerts_resolve(t, t->v[i]);
			any = 1;
		}
	}
	if (any)
		alerts_trim_resolved(t);
}

/* A new episode of e (fresh or resolved): firing from now_ms. */
static void alerts_fire(struct alerts_entry *e, const char *node,
			const char *edge, enum alert_severity severity,
			const char *message, uint64_t now_ms)
{
	alerts_copy(e->a.node, sizeof(e->a.node), node, (size_t)-1);
	alerts_copy(e->a.edge, sizeof(e->a.edge), edge, (size_t)-1);
	alerts_copy(e->a.message, sizeof(e->a.message), message, (size_t)-1);
	e->a.severity = severity;
	e->a.firing = 1;
	e->a.first_seen_ms = now_ms;
	e->a.last_seen_ms = now_ms;
	e->a.resolved_ms = 0;
	e->a.flaps = 0;
	e->a.clearing = 0;
	e->a.cleared_ms = 0;
	e->a.resolved_message[0] = '\0';
}

int alerts_raise(struct alerts *t, const char *rule, const char *subject,
		 const char *node, const char *edge,
		 enum alert_severity severity, const char *message,
		 uint64_t now_ms)
{
	struct alerts_entry *e;
	char msg[ALERTS_MESSAGE_LEN];
	int changed;

	if (!t || !rule || !*rule || !subject ||
	    !alerts_severity_ok(severity)) {
		errno = EINVAL;
		return -1;
	}
	/* A hold-down that passed before this raise was a real resolution:
	 * this raise is then a new episode, not a flap. */
	alerts_expire(t, now_ms);
	e = alerts_find(t, rule, subject);
	if (e && e->a.firing) {
		alerts_copy(msg, sizeof(msg), message, (size_t)-1);
		/* Receivers hear of a new severity; a message that only
		 * follows the facts (one end's carrier, then both) updates
		 * the table quietly, or each flap would be a notification. */
		changed = severity != e->a.severity;
		if (e->a.clearing) {
			e->a.clearing = 0;
			e->a.cleared_ms = 0;
			e->a.flaps++;
		}
		e->a.last_seen_ms = now_ms;
		e->round = t->round;
		alerts_copy(e->a.node, sizeof(e->a.node), node, (size_t)-1);
		alerts_copy(e->a.edge, sizeof(e->a.edge), edge, (size_t)-1);
		memcpy(e->a.message, msg, sizeof(msg));
		if (changed) {
			e->a.severity = severity;
			alerts_notify(t, e, ALERT_EV_CHANGED);
		}
		return 0;
	}
	if (t->n_firing >= t->conf.max_firing) {
		log_debug("alerts", "%s %s not raised: %zu alerts fire", rule,
			  subject, t->n_firing);
		errno = ENOSPC;
		return -1;
	}
	if (!e) {
		if (alerts_reserve(t) < 0)
			return -1;
		e = calloc(1, sizeof(*e));
		if (!e)
			return -1;
		alerts_copy(e->a.rule, sizeof(e->a.rule), rule, (size_t)-1);
		alerts_copy(e->a.subject, sizeof(e->a.subject), subject,
			    (size_t)-1);
		t->v[t->n++] = e;
		alerts_hash_add(t, e);
	}
	alerts_fire(e, node, edge, severity, message, now_ms);
	alerts_set_ring(t, &e->a);
	e->round = t->round;
	t->n_firing++;
	log_debug("alerts", "%s %s fired", e->a.rule, e->a.subject);
	alerts_notify(t, e, ALERT_EV_FIRED);
	return 0;
}

/* e's condition went away at now_ms: the hold-down starts (a second clear
 * keeps the first one's time); it is resolved by the caller's expiry. */
static void alerts_start_clear(struct alerts_entry *e, uint64_t now_ms)
{
	if (!e->a.firing || e->a.clearing)
		return;
	e->a.clearing = 1;
	e->a.cleared_ms = now_ms;
}

void alerts_clear(struct alerts *t, const char *rule, const char *subject,
		  uint64_t now_ms)
{
	struct alerts_entry *e;

	if (!t || !rule || !subject)
		return;
	e = alerts_find(t, rule, subject);
	if (e)
		alerts_start_clear(e, now_ms);
	alerts_expire(t, now_ms);
}

void alerts_round_begin(struct alerts *t)
{
	if (t)
		t->round++;
}

void alerts_round_end(struct alerts *t, const char *const *rules,
		      size_t n_rules, uint64_t now_ms)
{
	char r[ALERTS_RULE_LEN];

	if (!t)
		return;
	for (size_t k = 0; k < n_rules; k++) {
		if (!rules[k])
			continue;
		alerts_copy(r, sizeof(r), rules[k], (size_t)-1);
		for (size_t i = 0; i < t->n; i++) {
			struct alerts_entry *e = t->v[i];

			if (e->round != t->round && !strcmp(e->a.rule, r))
				alerts_start_clear(e, now_ms);
		}
	}
	alerts_expire(t, now_ms);
}

uint64_t alerts_tick(struct alerts *t, uint64_t now_ms)
{
	uint64_t next = 0, left;
	size_t i;

	if (!t)
		return 0;
	alerts_expire(t, now_ms);
	/* Resolved ones past keep_resolved_ms, then the count limit. */
	for (i = 0; i < t->n;) {
		const struct alert *a = &t->v[i]->a;

		if (!a->firing && alerts_since(a->resolved_ms, now_ms) >=
					  t->conf.keep_resolved_ms)
			alerts_remove(t, i);
		else
			i++;
	}
	alerts_trim_resolved(t);
	for (i = 0; i < t->n; i++) {
		const struct alerts_entry *e = t->v[i];

		if (!e->a.clearing)
			continue;
		/* Not passed (alerts_expire resolved those): left >= 1. */
		left = t->conf.hold_down_ms -
		       alerts_since(e->a.cleared_ms, now_ms);
		if (next == 0 || left < next)
			next = left;
	}
	return next;
}

static int alerts_counts(const struct alert *a)
{
	return a->firing && a->severity != ALERT_INFO &&
	       strcmp(a->rule, ALERTS_WATCHDOG_RULE) != 0;
}

int alerts_worst(const struct alerts *t, int *clearing)
{
	return alerts_worst_in(t, NULL, clearing);
}

int alerts_worst_in(const struct alerts *t, const char *ring, int *clearing)
{
	int worst = -1, all_clearing = 1;

	for (size_t i = 0; t && i < t->n; i++) {
		const struct alert *a = &t->v[i]->a;

		if (!alerts_counts(a) || (ring && strcmp(a->ring, ring)))
			continue;
		if ((int)a->severity > worst) {
			worst = (int)a->severity;
			all_clearing = a->clearing;
		} else if ((int)a->severity == worst && !a->clearing) {
			all_clearing = 0;
		}
	}
	if (clearing)
		*clearing = worst >= 0 && all_clearing;
	return worst;
}

size_t alerts_firing(const struct alerts *t)
{
	return t ? t->n_firing : 0;
}

static int alerts_cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* Firing first, most severe first, oldest episode first, then by rule and
 * subject so that equal alerts keep one order between calls. */
static int alerts_cmp(const void *pa, const void *pb)
{
	const struct alert *a = &(*(struct alerts_entry *const *)pa)->a;
	const struct alert *b = &(*(struct alerts_entry *const *)pb)->a;
	int c;

	if (a->firing != b->firing)
		return a->firing ? -1 : 1;
	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	c = alerts_cmp_u64(a->first_seen_ms, b->first_seen_ms);
	if (c)
		return c;
	c = strcmp(a->rule, b->rule);
	if (c)
		return c;
	return strcmp(a->subject, b->subject);
}

size_t alerts_list(const struct alerts *t, int all, const struct alert **out,
		   size_t max)
{
	size_t n = 0;

	if (!t)
		return 0;
	for (size_t i = 0; i < t->n; i++)
		if (all || t->v[i]->a.firing)
			t->scratch[n++] = t->v[i];
	if (n > 1)
		qsort(t->scratch, n, sizeof(t->scratch[0]), alerts_cmp);
	for (size_t i = 0; i < n && i < max; i++)
		out[i] = &t->scratch[i]->a;
	return n;
}

const struct alert *alerts_get(const struct alerts *t, const char *rule,
			       const char *subject)
{
	const struct alerts_entry *e;

	if (!t || !rule || !subject)
		return NULL;
	e = alerts_find(t, rule, subject);
	return e ? &e->a : NULL;
}

int alerts_restore(struct alerts *t, const struct alert *a)
{
	struct alerts_entry *e;
	char r[ALERTS_RULE_LEN], s[ALERTS_SUBJECT_LEN];
	int was_firing;

	if (!t || !a || !alerts_severity_ok(a->severity)) {
		errno = EINVAL;
		return -1;
	}
	alerts_copy(r, sizeof(r), a->rule, sizeof(a->rule));
	alerts_copy(s, sizeof(s), a->subject, sizeof(a->subject));
	if (!*r) {
		errno = EINVAL;
		return -1;
	}
	e = alerts_find(t, r, s);
	was_firing = e && e->a.firing;
	if (a->firing && !was_firing && t->n_firing >= t->conf.max_firing) {
		errno = ENOSPC;
		return -1;
	}
	if (!e) {
		if (alerts_reserve(t) < 0)
			return -1;
		e = calloc(1, sizeof(*e));
		if (!e)
			return -1;
		t->v[t->n++] = e;
		memcpy(e->a.rule, r, sizeof(r));
		memcpy(e->a.subject, s, sizeof(s));
		alerts_hash_add(t, e);
	}
	{
		/* Its place in the hash stays: the same rule and subject. */
		struct alerts_entry *next = e->hnext;

		memset(e, 0, sizeof(*e));
		e->hnext = next;
	}
	memcpy(e->a.rule, r, sizeof(r));
	memcpy(e->a.subject, s, sizeof(s));
	alerts_copy(e->a.node, sizeof(e->a.node), a->node, sizeof(a->node));
	alerts_copy(e->a.edge, sizeof(e->a.edge), a->edge, sizeof(a->edge));
	alerts_copy(e->a.message, sizeof(e->a.message), a->message,
		    sizeof(a->message));
	alerts_copy(e->a.ring, sizeof(e->a.ring), a->ring, sizeof(a->ring));
	e->a.severity = a->severity;
	e->a.firing = a->firing ? 1 : 0;
	e->a.first_seen_ms = a->first_seen_ms;
	e->a.last_seen_ms = a->last_seen_ms;
	e->a.flaps = a->flaps;
	alerts_copy(e->a.resolved_message, sizeof(e->a.resolved_message),
		    a->resolved_message, sizeof(a->resolved_message));
	e->a.cleared_ms = e->a.firing ? 0 : a->cleared_ms;
	/* A resolved alert needs a resolution time for the keep limits. */
	if (e->a.firing)
		e->a.resolved_ms = 0;
	else if (a->resolved_ms)
		e->a.resolved_ms = a->resolved_ms;
	else
		e->a.resolved_ms = a->last_seen_ms ? a->last_seen_ms : 1;
	/* Not raised in the current round: a round that ends without
	 * raising it clears it, as for any other alert. */
	e->round = t->round - 1;
	if (e->a.firing && !was_firing)
		t->n_firing++;
	else if (!e->a.firing && was_firing)
		t->n_firing--;
	if (!e->a.firing)
		alerts_trim_resolved(t);
	return 0;
}

void alerts_to_wire(const struct alert *a, Ring__Alert *dst)
{
	ring__alert__init(dst);
	dst->rule = (char *)a->rule;
	dst->severity = (Ring__Severity)a->severity;
	dst->firing = a->firing;
	dst->subject = (char *)a->subject;
	dst->node = (char *)a->node;
	dst->edge = (char *)a->edge;
	dst->message = (char *)a->message;
	dst->first_seen_ms = a->first_seen_ms;
	dst->last_seen_ms = a->last_seen_ms;
	dst->resolved_ms = a->resolved_ms;
	dst->flaps = a->flaps;
	dst->clearing = a->clearing ? 1 : 0;
	dst->cleared_ms = a->cleared_ms;
	dst->resolved_message = (char *)a->resolved_message;
	dst->ring = (char *)a->ring;
}
