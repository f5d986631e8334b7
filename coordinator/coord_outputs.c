/* What the coordinator shows besides control's replies (coord_outputs.h):
 * the metrics' and page's inputs, the periodic health report. */
#include "coord_outputs.h"

#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "clock.h"
#include "health_report.h"
#include "health_view.h"
#include "health_rules.h"
#include "log.h"
#include "sinks.h"

static double coord_outputs_baseline(const Ring__Edge *e, void *arg)
{
	return health_rules_edge_baseline(((struct coord *)arg)->rules, e);
}

static int coord_outputs_gid_changed(const Ring__Edge *e, void *arg)
{
	return health_rules_edge_gid_changed(((struct coord *)arg)->rules, e);
}

/* The topology as outputs show it: each ring's health and firing alerts
 * (health_view_rings), derived at each scrape as control's replies do. */
struct coord_outputs_top {
	Ring__Topology top;
	struct health_view_rings rings;
};

static void coord_outputs_done(struct metrics_src *src)
{
	struct coord_outputs_top *x = src->scratch;

	if (!x)
		return;
	health_view_rings_release(&x->rings);
	free(x);
	src->scratch = NULL;
}

static const Ring__Topology *coord_outputs_topology(struct coord *co,
						    struct metrics_src *src)
{
	const Ring__Topology *t = health_view_topology(&co->hview);
	struct coord_outputs_top *x;

	if (!t || !t->n_rings)
		return t;
	x = calloc(1, sizeof(*x));
	/* Out of memory: the rings without their health, not no page. */
	if (!x)
		return t;
	if (health_view_rings(&co->hview, clock_now_ms(), t, &x->rings) < 0) {
		free(x);
		return t;
	}
	x->top = *t;
	x->top.rings = x->rings.ptrs;
	x->top.n_rings = x->rings.n;
	src->scratch = x;
	src->done = coord_outputs_done;
	return &x->top;
}

void coord_outputs_metrics_src(struct metrics_src *src, void *arg)
{
	struct coord *co = arg;

	memset(src, 0, sizeof(*src));
	src->nodes = co->nodes;
	src->topology = coord_outputs_topology(co, src);
	src->alerts = co->alerts;
	health_view_derive(&co->hview, clock_now_ms(), &co->health);
	src->health = &co->health;
	src->coordinator = co->conf->name;
	src->version = RING_VERSION;
	src->now_ms = clock_now_ms();
	src->rdma_qps = co->conf->survey_rdma_qps;
	src->cert_not_after_ms = health_rules_own_cert(co->rules);
	src->survey_failed = health_rules_survey_failed(co->rules);
	src->survey_interval_ms = co->conf->survey_interval_ms;
	src->edge_baseline = coord_outputs_baseline;
	src->edge_gid_changed = coord_outputs_gid_changed;
	src->edge_arg = co;
	store_keeper_info(co->keeper, &co->store_info);
	src->store = &co->store_info;
}

/* The periodic health report: one line in the journal with the state of
 * every edge and what fired and resolved since the last one. */
void coord_outputs_report(evutil_socket_t fd, short what, void *arg)
{
	struct coord *co = arg;
	char line[HEALTH_REPORT_LEN];

	(void)fd;
	(void)what;
	health_view_derive(&co->hview, clock_now_ms(), &co->health);
	health_report_line(&co->health, health_view_topology(&co->hview),
			   alerts_firing(co->alerts), co->fired, co->resolved,
			   line, sizeof(line));
	log_info("%s", line);
	if (co->conf->health_report_command)
		sinks_report(co->sinks, health_name(co->health.state), line);
	co->fired = co->resolved = 0;
}
