/* Light checks' outcomes per edge and their timer (light_checks.h). */
#include "light_checks.h"

#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"

struct light_rec {
	char a[64], a_if[IFNAMSIZ], b[64], b_if[IFNAMSIZ];
	uint64_t ms, started_ms;
	double lat_us; /* p50, < 0 when none */
	char error[256];
	/* The last bandwidth sample (a check on a busy edge keeps the one
	 * before): Gbps per direction, < 0 none; when it ended, 0 none. */
	double sample[2];
	uint64_t sample_ms;
};

struct light_checks {
	struct light_rec *v;
	unsigned n;
	struct event *ev;
	void (*due)(void *arg);
	void *arg;
};

static void light_checks_cb(evutil_socket_t fd, short what, void *arg)
{
	struct light_checks *lc = arg;

	(void)fd;
	(void)what;
	lc->due(lc->arg);
}

struct light_checks *light_checks_new(struct event_base *base,
				      uint64_t interval_ms,
				      void (*due)(void *arg), void *arg)
{
	struct timeval tv = {.tv_sec = (time_t)(interval_ms / 1000),
			     .tv_usec =
				     (suseconds_t)(interval_ms % 1000) * 1000};
	struct light_checks *lc = calloc(1, sizeof(*lc));

	if (!lc)
		return NULL;
	lc->due = due;
	lc->arg = arg;
	if (!interval_ms)
		return lc;
	lc->ev = event_new(base, -1, EV_PERSIST, light_checks_cb, lc);
	if (!lc->ev || event_add(lc->ev, &tv) < 0) {
		light_checks_free(lc);
		return NULL;
	}
	return lc;
}

void light_checks_free(struct light_checks *lc)
{
	if (!lc)
		return;
	if (lc->ev)
		event_free(lc->ev);
	free(lc->v);
	free(lc);
}

static struct light_rec *light_find(const struct light_checks *lc,
				    const char *a, const char *a_if,
				    const char *b, const char *b_if)
{
	for (unsigned i = 0; i < lc->n; i++) {
		struct light_rec *x = &lc->v[i];

		if (!strcmp(x->a, a) && !strcmp(x->b, b) &&
		    !strcmp(x->a_if, a_if) && !strcmp(x->b_if, b_if))
			return x;
	}
	return NULL;
}

void light_checks_note(struct light_checks *lc, const char *a, const char *a_if,
		       const char *b, const char *b_if, uint64_t started_ms,
		       double lat_us, const char *error, const double sample[2])
{
	struct light_rec *x = light_find(lc, a, a_if, b, b_if);

	if (!x) {
		struct light_rec *v;

		/* Bounded like the re-check queue; the oldest goes. */
		if (lc->n >= LIGHT_CHECKS_MAX) {
			memmove(lc->v, lc->v + 1, (lc->n - 1) * sizeof(*v));
			lc->n--;
		}
		v = realloc(lc->v, (lc->n + 1) * sizeof(*v));
		if (!v)
			return;
		lc->v = v;
		x = &lc->v[lc->n++];
		memset(x, 0, sizeof(*x));
		snprintf(x->a, sizeof(x->a), "%s", a);
		snprintf(x->a_if, sizeof(x->a_if), "%s", a_if);
		snprintf(x->b, sizeof(x->b), "%s", b);
		snprintf(x->b_if, sizeof(x->b_if), "%s", b_if);
		x->sample[0] = x->sample[1] = -1;
	}
	x->ms = clock_now_ms();
	x->started_ms = started_ms;
	x->lat_us = lat_us;
	snprintf(x->error, sizeof(x->error), "%s", error);
	if (x->error[0])
		log_info("light check of %s-%s failed: %s", a, b, x->error);
	/* A check with no sample (busy, failed) keeps the one before. */
	if (sample[0] >= 0 || sample[1] >= 0) {
		x->sample[0] = sample[0];
		x->sample[1] = sample[1];
		x->sample_ms = x->ms;
		log_debug("survey", "sample of %s-%s: %.3f / %.3f Gbps", a, b,
			  sample[0], sample[1]);
	}
}

int light_checks_get(const struct light_checks *lc, const char *a,
		     const char *a_if, const char *b, const char *b_if,
		     struct survey_light_out *out)
{
	const struct light_rec *x = light_find(lc, a, a_if, b, b_if);

	if (!x)
		return -1;
	out->ms = x->ms;
	out->started_ms = x->started_ms;
	out->lat_us = x->lat_us;
	out->error = x->error;
	out->sample_gbps[0] = x->sample[0];
	out->sample_gbps[1] = x->sample[1];
	out->sample_ms = x->sample_ms;
	return 0;
}
