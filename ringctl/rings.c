/* A site of several rings in ringctl's words: status's overview, the
 * rings for the machine formats, the ring_required error (rings.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_report.h"
#include "ranks.h"
#include "render.h"
#include "ring_view.h"
#include "rings.h"

int rings_several(const Ring__Topology *t)
{
	return t && t->n_rings > 1;
}

static int rings_set(const char *s)
{
	return s && *s;
}

int rings_has_problem(const Ring__RingView *r)
{
	return (rings_set(r->health) && strcmp(r->health, "healthy")) ||
	       r->n_alerts || rings_set(r->order_invalid) ||
	       strcmp(r->kind, "ring") ||
	       (rings_set(r->live_kind) && strcmp(r->live_kind, r->kind)) ||
	       r->n_not_surveyed || r->n_live_nodes_down ||
	       r->n_live_cables_down;
}

static void rings_strings(struct writer *w, const char *key, char **v, size_t n)
{
	writer_list_start(w, key);
	for (size_t i = 0; i < n; i++)
		writer_str(w, NULL, v[i]);
	writer_list_end(w);
}

void rings_render_list(struct writer *w, const Ring__Topology *t)
{
	char ts[32];

	writer_list_start(w, "rings");
	for (size_t i = 0; i < t->n_rings; i++) {
		const Ring__RingView *r = t->rings[i];

		writer_obj_start_named(w, r->id);
		writer_str(w, "id", r->id);
		writer_bool(w, "configured", r->configured);
		writer_str(w, "kind", r->kind);
		writer_uint(w, "n_nodes", r->n_nodes);
		rings_strings(w, "nodes", r->nodes, r->n_nodes);
		rings_strings(w, "order", r->order, r->n_order);
		writer_table_start(w, "ranks");
		for (size_t k = 0; k < r->n_ranks; k++) {
			writer_obj_start(w, NULL);
			ranks_render_rank(w, r->ranks[k]);
			writer_obj_end(w);
		}
		writer_table_end(w);
		writer_str(w, "missing_cable", r->line_gap);
		writer_uint(w, "n_components", r->n_components);
		writer_str(w, "live_kind", r->live_kind);
		writer_str(w, "live_gap", r->live_gap);
		writer_bool(w, "order_valid", r->order_valid);
		writer_str(w, "order_invalid", r->order_invalid);
		rings_strings(w, "live_nodes_down", r->live_nodes_down,
			      r->n_live_nodes_down);
		rings_strings(w, "live_cables_down", r->live_cables_down,
			      r->n_live_cables_down);
		rings_strings(w, "not_surveyed", r->not_surveyed,
			      r->n_not_surveyed);
		writer_str(w, "health", r->health);
		writer_str(w, "health_cause", r->health_cause);
		writer_str(w, "health_subject", r->health_subject);
		writer_str(w, "health_why", r->health_text);
		writer_uint(w, "alerts_firing", r->n_alerts);
		writer_str(w, "slowest_edge", r->slowest_edge);
		if (rings_set(r->slowest_edge))
			writer_double(w, "slowest_gbps", r->slowest_gbps, 2);
		else
			writer_none(w, "slowest_gbps", "");
		render_format_time(r->surveyed_ms, ts, sizeof(ts));
		writer_str(w, "surveyed", ts);
		writer_uint(w, "surveyed_ms", r->surveyed_ms);
		writer_obj_end(w);
	}
	writer_list_end(w);
}

/* "ring", or "ring, now line" when the live overlay differs. */
static void rings_class(const Ring__RingView *r, char *buf, size_t len)
{
	if (rings_set(r->live_kind) && strcmp(r->live_kind, r->kind))
		snprintf(buf, len, "%s, now %s", r->kind, r->live_kind);
	else
		snprintf(buf, len, "%s", r->kind);
}

/* One line per ring: what an operator of many rings reads first. */
static void rings_table(struct writer *w, const Ring__Topology *t)
{
	char cls[64];

	writer_table_start(w, "rings");
	for (size_t i = 0; i < t->n_rings; i++) {
		const Ring__RingView *r = t->rings[i];

		writer_obj_start_named(w, r->id);
		writer_str(w, "ring", r->id);
		rings_class(r, cls, sizeof(cls));
		writer_str(w, "class", cls);
		writer_str(w, "health", rings_set(r->health) ? r->health : "-");
		writer_uint(w, "nodes", r->n_nodes);
		writer_str(w, "slowest_edge",
			   rings_set(r->slowest_edge) ? r->slowest_edge : "-");
		if (rings_set(r->slowest_edge))
			writer_double(w, "gbps", r->slowest_gbps, 2);
		else
			writer_none(w, "gbps", "-");
		writer_uint(w, "alerts", r->n_alerts);
		writer_obj_end(w);
	}
	writer_table_end(w);
}

/* The firing alerts of ring id ("" the site's), in the reply's order. */
static void rings_alerts_of(struct writer *w, const Ring__StatusReply *st,
			    const char *id)
{
	Ring__Alert **v = calloc(st->n_alerts ? st->n_alerts : 1, sizeof(*v));
	size_t n = 0;

	if (!v) {
		writer_str(w, "alerts", "cannot list: out of memory");
		return;
	}
	for (size_t i = 0; i < st->n_alerts; i++)
		if (!strcmp(st->alerts[i]->ring ? st->alerts[i]->ring : "", id))
			v[n++] = st->alerts[i];
	/* The site's list says "(none)" only when nothing fires at all:
	 * the rings' alerts are under their rings. */
	if (n || (!*id && !st->n_alerts))
		render_alerts(w, "alerts", v, n, 1);
	free(v);
}

void rings_render_site_alerts(struct writer *w, const Ring__StatusReply *r)
{
	rings_alerts_of(w, r, "");
}

/* One ring in detail: its health and alerts, then its topology as a site
 * of one ring shows it. */
static void rings_detail(struct writer *w, const Ring__StatusReply *st,
			 const Ring__RingView *r, int verbose)
{
	struct ring_view v;
	char key[96];

	snprintf(key, sizeof(key), "ring %s", r->id);
	writer_obj_start(w, key);
	writer_str(w, "health", rings_set(r->health) ? r->health : "-");
	if (rings_set(r->health_cause)) {
		writer_str(w, "health_cause", r->health_cause);
		writer_str(w, "health_subject", r->health_subject);
		writer_str(w, "health_why", r->health_text);
	}
	/* -v lists every alert above, as for one ring. */
	if (!verbose)
		rings_alerts_of(w, st, r->id);
	if (ring_view_build(st->topology, r, &v) < 0) {
		writer_str(w, "topology", "cannot show: out of memory");
	} else {
		render_topology(w, &v.top, st->now_ms, verbose);
		ring_view_release(&v);
	}
	writer_obj_end(w);
}

void rings_render_status(struct writer *w, const Ring__StatusReply *r,
			 int verbose)
{
	const Ring__Topology *t = r->topology;
	char ts[32];
	size_t shown = 0;

	rings_table(w, t);
	for (size_t i = 0; i < t->n_rings; i++)
		if (verbose || rings_has_problem(t->rings[i])) {
			rings_detail(w, r, t->rings[i], verbose);
			shown++;
		}
	if (!shown)
		writer_str(w, "details", "every ring is healthy");
	/* What is the site's alone. */
	render_format_time(t->surveyed_ms, ts, sizeof(ts));
	writer_str(w, "surveyed", ts);
	render_strays(w, t, !verbose);
	writer_double(w, "survey_wall_s", t->survey_wall_s, 1);
}

int rings_required(const Ring__Topology *t, const char *what, int status)
{
	char *text = NULL, *ids = NULL;
	size_t tlen = 0, ilen = 0;
	FILE *ft = open_memstream(&text, &tlen);
	FILE *fi = open_memstream(&ids, &ilen);
	size_t n = t->n_rings;

	if (!ft || !fi) {
		if (ft)
			fclose(ft);
		if (fi)
			fclose(fi);
		free(text);
		free(ids);
		return error_report(status, "ring_required", NULL, "--ring ID",
				    "%s needs one ring: this site has %zu; "
				    "name one with --ring ID ('ringctl "
				    "status' lists them)",
				    what, n);
	}
	fprintf(ft,
		"%s needs one ring: this site has %zu rings; name one with "
		"--ring ID:",
		what, n);
	for (size_t i = 0; i < n && i < RINGS_LISTED_MAX; i++) {
		const Ring__RingView *r = t->rings[i];

		fprintf(ft, "%s %s (%s, %zu node%s)", i ? "," : "", r->id,
			r->kind, r->n_nodes, r->n_nodes == 1 ? "" : "s");
		fprintf(fi, "%s%s", i ? "," : "", r->id);
	}
	if (n > RINGS_LISTED_MAX)
		fprintf(ft, " and %zu more ('ringctl status' lists them)",
			n - RINGS_LISTED_MAX);
	fclose(ft);
	fclose(fi);
	status = error_report(status, "ring_required", ids, "--ring ID", "%s",
			      text);
	free(text);
	free(ids);
	return status;
}
