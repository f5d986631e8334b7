/* The alerts request: the firing alerts from the table and, with --all,
 * the resolved episodes (from the store, bounded), with the health. */
#include "control_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "health.h"

/* The alerts as the wire carries them: pointers into the table's strings,
 * valid while the reply is packed. *out and *outp are malloc'ed (caller
 * frees both); 0, or -1 (ENOMEM). Status leaves out the watchdog alert
 * (it fires while all is well); `ringctl alerts` lists it. */
int control_alerts_fill(const struct control *co, int all, int no_watchdog,
			Ring__Alert **out, Ring__Alert ***outp, size_t *n)
{
	const struct alert **v = NULL;
	size_t total, got;

	*out = NULL;
	*outp = NULL;
	*n = 0;
	if (!co->view || !co->view->alerts)
		return 0;
	total = co->view->alerts(co->view->arg, all, NULL, 0);
	v = calloc(total ? total : 1, sizeof(*v));
	*out = calloc(total ? total : 1, sizeof(**out));
	*outp = calloc(total ? total : 1, sizeof(**outp));
	if (!v || !*out || !*outp) {
		free(v);
		free(*out);
		free(*outp);
		*out = NULL;
		*outp = NULL;
		errno = ENOMEM;
		return -1;
	}
	got = co->view->alerts(co->view->arg, all, v, total);
	for (size_t i = 0; i < got && i < total; i++) {
		if (no_watchdog && !strcmp(v[i]->rule, "watchdog"))
			continue;
		alerts_to_wire(v[i], &(*out)[*n]);
		(*outp)[*n] = &(*out)[*n];
		(*n)++;
	}
	free(v);
	return 0;
}

/* An alerts reply holds at most this many resolved episodes, the newest:
 * under 1.5 KiB each packed at the worst, within ringctl's frame and the
 * output watermark. */
#define CONTROL_EPISODES_MAX 1000
/* Without a since: the week the alert table keeps resolved ones. */
#define CONTROL_EPISODES_SINCE_MS (7ull * 86400000)

struct control_episodes {
	struct alert *v; /* CONTROL_EPISODES_MAX + 1: one more says truncated */
	size_t n;
	uint64_t since_ms;
};

static int control_episode_keep(const struct alert *a, void *arg)
{
	struct control_episodes *e = arg;

	if (e->n > CONTROL_EPISODES_MAX)
		return 1;
	e->v[e->n++] = *a;
	return 0;
}

/* The resolved episodes for `alerts --all`: from the store, each episode
 * its own; a coordinator without one has the table's latest per key. */
static int control_episodes_get(const struct control *co,
				struct control_episodes *e)
{
	const struct alert **v;
	size_t total;

	e->n = 0;
	e->v = calloc(CONTROL_EPISODES_MAX + 1, sizeof(*e->v));
	if (!e->v) {
		errno = ENOMEM;
		return -1;
	}
	if (co->view->episodes)
		return co->view->episodes(co->view->arg, e->since_ms,
					  CONTROL_EPISODES_MAX + 1,
					  control_episode_keep, e) < 0
			       ? -1
			       : 0;
	total = co->view->alerts(co->view->arg, 1, NULL, 0);
	v = calloc(total ? total : 1, sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return -1;
	}
	total = co->view->alerts(co->view->arg, 1, v, total);
	for (size_t i = 0; i < total; i++)
		if (!v[i]->firing && v[i]->resolved_ms >= e->since_ms &&
		    control_episode_keep(v[i], e))
			break;
	free(v);
	return 0;
}

/* The firing alerts (fill's), then the episodes in wire form after
 * them: *ap grows to hold both. */
static int control_alerts_append(Ring__Alert ***ap, size_t *n,
				 Ring__Alert **wire,
				 const struct control_episodes *e, size_t keep)
{
	Ring__Alert **grown = realloc(*ap, (*n + keep + 1) * sizeof(**ap));

	*wire = calloc(keep ? keep : 1, sizeof(**wire));
	if (!grown || !*wire) {
		if (grown)
			*ap = grown;
		free(*wire);
		*wire = NULL;
		errno = ENOMEM;
		return -1;
	}
	*ap = grown;
	for (size_t i = 0; i < keep && i < e->n; i++) {
		alerts_to_wire(&e->v[i], &(*wire)[i]);
		(*ap)[(*n)++] = &(*wire)[i];
	}
	return 0;
}

void control_alerts(struct client *cl, uint64_t id,
		    const Ring__AlertsRequest *req)
{
	Ring__AlertsReply rep = RING__ALERTS_REPLY__INIT;
	const struct control *co = cl->ctl;
	struct control_episodes ep = {0};
	Ring__Alert *a, **ap, *wire = NULL;
	uint64_t now = clock_now_ms();
	struct health h;
	size_t n, keep;

	/* --all: the firing ones from the table, the resolved ones as
	 * episodes (the table's resolved rows are the latest per key). */
	if (control_alerts_fill(cl->ctl, 0, 0, &a, &ap, &n) < 0) {
		conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_INTERNAL,
				"out of memory");
		return;
	}
	if (req->all && co->view && co->view->alerts) {
		ep.since_ms = req->since_ms ? req->since_ms
			      : now > CONTROL_EPISODES_SINCE_MS
				      ? now - CONTROL_EPISODES_SINCE_MS
				      : 0;
		/* The store's failure is said, not shown as no episodes. */
		keep = 0;
		if (control_episodes_get(co, &ep) == 0) {
			keep = ep.n > CONTROL_EPISODES_MAX
				       ? CONTROL_EPISODES_MAX
				       : ep.n;
			rep.truncated = ep.n > CONTROL_EPISODES_MAX;
		} else {
			free(ep.v);
			ep.v = NULL;
		}
		if (!ep.v ||
		    control_alerts_append(&ap, &n, &wire, &ep, keep) < 0) {
			conn_send_error(cl->conn, id,
					RING__ERROR_CODE__ERROR_INTERNAL,
					"the resolved alerts could not be read "
					"(see the coordinator's log)");
			goto out;
		}
		rep.since_ms = ep.since_ms;
	}
	rep.now_ms = now;
	rep.n_alerts = n;
	rep.alerts = ap;
	if (co->view && co->view->health) {
		co->view->health(co->view->arg, &h);
		rep.health = (char *)health_name(h.state);
		rep.health_cause = h.cause;
		rep.health_subject = h.subject;
		rep.health_text = h.text;
	}
	control_client_send(cl, id, RING__ENVELOPE__BODY_ALERTS_REPLY, &rep);
out:
	free(wire);
	free(ep.v);
	free(ap);
	free(a);
}
