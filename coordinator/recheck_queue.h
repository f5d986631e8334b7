/* The re-check queue: edges of the published topology waiting for their
 * settle time before a targeted re-check (or a light check), each once,
 * with its reason and when it is due, and the timer that fires when the
 * earliest is due. Its own state; what a due entry starts is the
 * caller's (due callback). */
#ifndef RING_RECHECK_QUEUE_H
#define RING_RECHECK_QUEUE_H

#include <net/if.h>
#include <stdint.h>

#include <event2/event.h>

/* At most this many edges wait; more changes than that at once are a
 * new cluster, and the next survey measures them. */
#define RECHECK_QUEUE_MAX 1024

struct recheck_item {
	char a[64], a_if[IFNAMSIZ], b[64], b_if[IFNAMSIZ];
	char why[96];
	uint64_t due_ms, queued_ms;
	int light; /* probes and a small latency sample only */
};

struct recheck_queue;

/* due(arg) when the timer fires. NULL when out of memory. */
struct recheck_queue *recheck_queue_new(struct event_base *base,
					void (*due)(void *arg), void *arg);
void recheck_queue_free(struct recheck_queue *q);
/* Queue edge (a, a_if, b, b_if) after delay_ms; an edge queued already
 * waits again from now (a light check does not replace a re-check). */
void recheck_queue_add(struct recheck_queue *q, const char *a, const char *a_if,
		       const char *b, const char *b_if, const char *why,
		       uint64_t delay_ms, int light);
/* Arm the timer for the earliest entry, at least min_ms from now (none
 * queued: disarmed). */
void recheck_queue_arm(struct recheck_queue *q, uint64_t min_ms);
/* 1 when an entry is due at now_ms. */
int recheck_queue_any_due(const struct recheck_queue *q, uint64_t now_ms);
/* The entries, in order (valid until the next change), and keeping only
 * the first n of them (the caller compacts in place). */
struct recheck_item *recheck_queue_items(struct recheck_queue *q, unsigned *n);
void recheck_queue_truncate(struct recheck_queue *q, unsigned n);
/* Forget the entries queued before ms (a survey that began then
 * measured them). */
void recheck_queue_forget_before(struct recheck_queue *q, uint64_t ms);
/* The same for the edges measured(a, b, arg) says a survey of some rings
 * measured; the others' stay queued. */
void recheck_queue_forget_measured(struct recheck_queue *q, uint64_t ms,
				   int (*measured)(const char *a, const char *b,
						   void *arg),
				   void *arg);

#endif
