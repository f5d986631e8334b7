/* The one health of the cluster, derived in one place for every output
 * (status, alerts, watch, the page and its picture, metrics, the health
 * report): the worst firing alert (clearing ones included: never healthy
 * while anything fires), else a state that is not an alert (yet), else
 * healthy. Pure: the caller gathers the facts.
 *
 *   critical    a critical alert fires (or clears within its hold-down)
 *   degraded    a warning fires or clears; or no survey yet, a published
 *               topology without a rank order (split, other), an expected
 *               node not up before its alert
 *   relearning  the coordinator restarted and waits (bounded) for its
 *               agents before it judges cables and the ring
 *   healthy     none of these
 *
 * ringctl status and alerts exit 0 only for healthy (ringctl(8)). */
#ifndef RING_HEALTH_H
#define RING_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "alerts.h"

enum health_state {
	HEALTH_HEALTHY = 0,
	HEALTH_RELEARNING,
	HEALTH_DEGRADED,
	HEALTH_CRITICAL,
};

struct health_facts {
	const struct alerts *alerts;
	int relearning;		  /* restarted, agents not all back */
	uint64_t relearn_left_ms; /* at most this long still */
	int has_topology;	  /* a survey published (or was restored) */
	const char *kind;	  /* its class */
	size_t n_ranks;		  /* its rank order's length */
	const char *missing;	  /* an expected node that is not up, or NULL */
	size_t n_missing;
	/* Issue 24: one ring's health (only its alerts count; kind and
	 * n_ranks are its own), or NULL for the site's. */
	const char *ring;
	/* The site's: the ring without a rank order, named as the subject
	 * of no_rank_order (NULL: "ring"). */
	const char *no_order_ring;
};

#define HEALTH_CAUSE_LEN 32
#define HEALTH_TEXT_LEN 600

struct health {
	enum health_state state;
	/* The deciding alert's rule (and subject), or the state's own name:
	 * relearning, no_survey, no_rank_order, expected_missing. "" when
	 * healthy. */
	char cause[HEALTH_CAUSE_LEN];
	char subject[ALERTS_SUBJECT_LEN];
	int clearing;	 /* every alert of the deciding severity is clearing */
	size_t n_firing; /* alerts that count (watchdog and info do not) */
	char text[HEALTH_TEXT_LEN];
};

void health_derive(const struct health_facts *f, struct health *out);
/* Does b say something that a did not, for the watchers: another state,
 * another cause, or clearing where it was not (or the reverse)? */
int health_differs(const struct health *a, const struct health *b);
/* "healthy", "relearning", "degraded", "critical". */
const char *health_name(enum health_state s);

#endif
