/* One health from the alerts and the states that are not alerts. */
#include "health.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert_text.h"

const char *health_name(enum health_state s)
{
	switch (s) {
	case HEALTH_CRITICAL:
		return "critical";
	case HEALTH_DEGRADED:
		return "degraded";
	case HEALTH_RELEARNING:
		return "relearning";
	case HEALTH_HEALTHY:
		break;
	}
	return "healthy";
}

static void health_set(struct health *h, enum health_state s, const char *cause,
		       const char *subject)
{
	h->state = s;
	snprintf(h->cause, sizeof(h->cause), "%s", cause);
	snprintf(h->subject, sizeof(h->subject), "%s", subject ? subject : "");
}

/* The first alert in list order (most severe, oldest) of severity sev that
 * counts: the one health names. */
static const struct alert *health_decider(const struct alerts *t, int sev,
					  const char *ring, size_t *n_counting)
{
	const struct alert *v[64], *first = NULL;
	size_t n = alerts_list(t, 0, v, 64);

	*n_counting = 0;
	if (ring && n > 64) {
		/* One ring's among many: look at every firing alert. */
		const struct alert **all = calloc(n, sizeof(*all));

		if (all) {
			n = alerts_list(t, 0, all, n);
			for (size_t i = 0; i < n; i++) {
				if (all[i]->severity == ALERT_INFO ||
				    !strcmp(all[i]->rule, "watchdog") ||
				    strcmp(all[i]->ring, ring))
					continue;
				(*n_counting)++;
				if (!first && (int)all[i]->severity == sev)
					first = all[i];
			}
			free(all);
			return first;
		}
	}
	for (size_t i = 0; i < n && i < 64; i++) {
		if (v[i]->severity == ALERT_INFO ||
		    !strcmp(v[i]->rule, "watchdog") ||
		    (ring && strcmp(v[i]->ring, ring)))
			continue;
		(*n_counting)++;
		if (!first && (int)v[i]->severity == sev)
			first = v[i];
	}
	if (n > 64)
		*n_counting += n - 64;
	return first;
}

void health_derive(const struct health_facts *f, struct health *out)
{
	int clearing = 0,
	    worst = alerts_worst_in(f->alerts, f->ring, &clearing);
	const struct alert *a;
	char left[48];

	memset(out, 0, sizeof(*out));
	if (worst > (int)ALERT_INFO) {
		a = health_decider(f->alerts, worst, f->ring, &out->n_firing);
		health_set(out,
			   worst == ALERT_CRITICAL ? HEALTH_CRITICAL
						   : HEALTH_DEGRADED,
			   a ? a->rule : "alert", a ? a->subject : "");
		out->clearing = clearing;
		if (a && clearing)
			snprintf(out->text, sizeof(out->text),
				 "%s (clearing: the condition went away; "
				 "resolved if it stays away for the "
				 "hold-down)",
				 a->message);
		else if (a)
			snprintf(out->text, sizeof(out->text), "%s",
				 a->message);
		return;
	}
	if (f->relearning) {
		alert_text_duration(f->relearn_left_ms, left, sizeof(left));
		health_set(out, HEALTH_RELEARNING, "relearning", "coordinator");
		snprintf(out->text, sizeof(out->text),
			 "the coordinator restarted: waiting for its agents "
			 "to report (at most %s more) before it judges "
			 "cables and the ring",
			 left);
		return;
	}
	if (f->n_missing) {
		health_set(out, HEALTH_DEGRADED, "expected_missing",
			   f->missing);
		snprintf(out->text, sizeof(out->text),
			 "%zu expected node%s not up (%s%s); node_down fires "
			 "once the grace has passed",
			 f->n_missing, f->n_missing == 1 ? " is" : "s are",
			 f->missing ? f->missing : "?",
			 f->n_missing > 1 ? ", ..." : "");
		return;
	}
	if (!f->has_topology) {
		health_set(out, HEALTH_DEGRADED, "no_survey", "survey");
		snprintf(out->text, sizeof(out->text),
			 "no survey yet: there is no rank order to use");
		return;
	}
	if (!f->n_ranks) {
		health_set(out, HEALTH_DEGRADED, "no_rank_order",
			   f->no_order_ring ? f->no_order_ring : "ring");
		snprintf(out->text, sizeof(out->text),
			 "the last survey found a %s: no rank order for a "
			 "ring job (ringctl status shows why)",
			 f->kind && *f->kind ? f->kind : "topology");
		return;
	}
	health_set(out, HEALTH_HEALTHY, "", NULL);
}

int health_differs(const struct health *a, const struct health *b)
{
	return a->state != b->state || a->clearing != b->clearing ||
	       strcmp(a->cause, b->cause) != 0;
}
