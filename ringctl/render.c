/* ringctl's rendering: the coordinator's replies (status, topology,
 * alerts, test reports, ranks) through the writer, and the text formats
 * of ranks (hostfile, rankfile, torchrun, env) with their safety check. */
#include "render.h"
#include "clock.h"
#include "topoview.h"
#include "report_counters.h"
#include "rings.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void render_format_time(unsigned long long ms, char *buf, size_t len)
{
	clock_format_utc(ms, buf, len, "");
}

void render_time(struct writer *w, const char *key, uint64_t ms,
		 const char *none)
{
	char t[32];

	render_format_time(ms, t, sizeof(t));
	if (*t)
		writer_str(w, key, t);
	else
		writer_none(w, key, none);
}

const char *render_health(const Ring__StatusReply *r)
{
	/* The coordinator's, from its firing alerts; an older one sends
	 * none: then judge from the node states. */
	if (r->health && *r->health)
		return r->health;
	return render_status_health(r) ? "degraded" : "healthy";
}

int render_status_health(const Ring__StatusReply *r)
{
	if (r->health && *r->health)
		return strcmp(r->health, "healthy") != 0;
	for (size_t i = 0; i < r->n_nodes; i++)
		if (r->nodes[i]->expected && strcmp(r->nodes[i]->state, "up"))
			return 1;
	return 0;
}

/* Unified memory is what a ring adds per node (the reference cluster's point), so
 * status shows it, in GiB, as computed from the agent's MemTotal. */
static double render_gib(uint64_t kib)
{
	return (double)kib / (1024.0 * 1024.0);
}

/* "16s", "3m12s", "2h05m", "3d04h": how long a node has been in its state,
 * short enough for the default status table. */
static void render_age(unsigned long long since_ms, unsigned long long now_ms,
		       char *buf, size_t len)
{
	unsigned long long s;

	if (!since_ms || now_ms < since_ms) {
		snprintf(buf, len, "%s", "");
		return;
	}
	s = (now_ms - since_ms) / 1000;
	if (s < 60)
		snprintf(buf, len, "%llus", s);
	else if (s < 3600)
		snprintf(buf, len, "%llum%02llus", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%lluh%02llum", s / 3600, s / 60 % 60);
	else
		snprintf(buf, len, "%llud%02lluh", s / 86400, s / 3600 % 24);
}

const char *render_severity(Ring__Severity s)
{
	switch (s) {
	case RING__SEVERITY__SEVERITY_CRITICAL:
		return "critical";
	case RING__SEVERITY__SEVERITY_WARNING:
		return "warning";
	default:
		return "info";
	}
}

const char *render_alert_state(const Ring__Alert *a)
{
	if (!a->firing)
		return "resolved";
	return a->clearing ? "clearing" : "firing";
}

/* Room for "rule subject", and for a message with "(cleared TIME, N
 * flaps)". */
#define ALERT_TAG_MAX 128
#define ALERT_TEXT_MAX 640

/* Plain, the full view: a table that fits 100 columns (rule, severity,
 * state, subject, when it fired and was resolved), then each alert's
 * prose wrapped below it: its message (what cleared, once resolved),
 * when its condition cleared and its flaps. */
static void render_alerts_plain(struct writer *w, const char *key,
				Ring__Alert *const *v, size_t n)
{
	char t[32], tag[ALERT_TAG_MAX], what[64], text[ALERT_TEXT_MAX];

	writer_table_start(w, key);
	for (size_t i = 0; i < n; i++) {
		const Ring__Alert *a = v[i];

		writer_obj_start(w, NULL);
		writer_str(w, "rule", a->rule);
		writer_str(w, "severity", render_severity(a->severity));
		writer_str(w, "state", render_alert_state(a));
		writer_str(w, "subject", a->subject);
		render_format_time(a->first_seen_ms, t, sizeof(t));
		writer_str(w, "fired", t);
		render_format_time(a->resolved_ms, t, sizeof(t));
		writer_str(w, "resolved", t);
		writer_obj_end(w);
	}
	writer_table_end(w);
	if (!n)
		return;
	snprintf(what, sizeof(what), "%s_messages", key);
	writer_list_start(w, what);
	for (size_t i = 0; i < n; i++) {
		const Ring__Alert *a = v[i];
		size_t used;

		snprintf(tag, sizeof(tag), "%.40s %.80s", a->rule, a->subject);
		used = (size_t)snprintf(text, sizeof(text), "%s",
					a->firing || !*a->resolved_message
						? a->message
						: a->resolved_message);
		if (a->cleared_ms && used < sizeof(text)) {
			render_format_time(a->cleared_ms, t, sizeof(t));
			used += (size_t)snprintf(text + used,
						 sizeof(text) - used,
						 " (cleared %s", t);
		}
		if (a->flaps && used < sizeof(text))
			used += (size_t)snprintf(
				text + used, sizeof(text) - used, "%s%u flap%s",
				a->cleared_ms ? ", " : " (", a->flaps,
				a->flaps == 1 ? "" : "s");
		if ((a->cleared_ms || a->flaps) && used < sizeof(text))
			snprintf(text + used, sizeof(text) - used, ")");
		writer_obj_start(w, NULL);
		writer_str(w, tag, text);
		writer_obj_end(w);
	}
	writer_list_end(w);
}

void render_alerts(struct writer *w, const char *key, Ring__Alert *const *v,
		   size_t n, int brief)
{
	char t[32];

	if (!brief && writer_get_format(w) == WRITER_PLAIN) {
		render_alerts_plain(w, key, v, n);
		return;
	}
	/* Brief: one "- severity rule: message" line each, wrapped. */
	if (brief)
		writer_list_start(w, key);
	else
		writer_table_start(w, key);
	for (size_t i = 0; i < n; i++) {
		const Ring__Alert *a = v[i];
		char tag[96];

		writer_obj_start(w, NULL);
		if (brief) {
			snprintf(tag, sizeof(tag), "%s %s%s",
				 render_severity(a->severity), a->rule,
				 a->clearing ? " (clearing)" : "");
			writer_str(w, tag, a->message);
			writer_obj_end(w);
			continue;
		}
		writer_str(w, "rule", a->rule);
		writer_str(w, "severity", render_severity(a->severity));
		writer_str(w, "state", render_alert_state(a));
		writer_str(w, "subject", a->subject);
		writer_str(w, "ring", a->ring);
		render_format_time(a->first_seen_ms, t, sizeof(t));
		writer_str(w, "since", t);
		render_format_time(a->cleared_ms, t, sizeof(t));
		writer_str(w, "cleared", t);
		render_format_time(a->resolved_ms, t, sizeof(t));
		writer_str(w, "resolved", t);
		writer_uint(w, "flaps", a->flaps);
		writer_str(w, "message",
			   a->firing || !*a->resolved_message
				   ? a->message
				   : a->resolved_message);
		/* Every field, the times in ms. */
		writer_bool(w, "firing", a->firing);
		writer_bool(w, "clearing", a->clearing);
		writer_str(w, "node", a->node);
		writer_str(w, "edge", a->edge);
		writer_str(w, "fired_message", a->message);
		writer_str(w, "resolved_message", a->resolved_message);
		writer_uint(w, "first_seen_ms", a->first_seen_ms);
		writer_uint(w, "last_seen_ms", a->last_seen_ms);
		writer_uint(w, "cleared_ms", a->cleared_ms);
		writer_uint(w, "resolved_ms", a->resolved_ms);
		writer_obj_end(w);
	}
	if (brief)
		writer_list_end(w);
	else
		writer_table_end(w);
}

/* Member order is the column order of `ringctl status`; the fields written
 * only for a node that is not up keep their column (see writer.h). */
void render_node_status(struct writer *w, const Ring__NodeStatus *n, int view,
			unsigned long long now_ms)
{
	int up = !strcmp(n->state, "up"), brief = view & RENDER_NODE_BRIEF;
	unsigned long long since =
		up ? n->connected_since_ms : n->down_since_ms;
	char t[32];

	writer_str(w, "node", n->node);
	writer_str(w, "state", n->state);
	writer_bool(w, "expected", n->expected);
	writer_str(w, "mgmt_address", n->mgmt_address);
	if (brief)
		render_age(since, now_ms, t, sizeof(t));
	else
		render_format_time(since, t, sizeof(t));
	writer_str(w, brief ? "for" : up ? "connected_since" : "down_since", t);
	writer_str(w, brief ? "version" : "agent_version", n->agent_version);
	writer_uint(w, brief ? "data_ifs" : "data_interfaces", n->n_interfaces);
	if (!(view & RENDER_NODE_NO_RDMA_COUNT))
		writer_uint(w, brief ? "rdma" : "rdma_devices",
			    n->n_rdma_devices);
	writer_list_start(w, brief ? "unaddressed" : "unaddressed_up");
	for (size_t i = 0; i < n->n_unaddressed_up; i++)
		writer_str(w, NULL, n->unaddressed_up[i]);
	writer_list_end(w);
	writer_double(w, brief ? "mem_gib" : "mem_total_gib",
		      render_gib(n->mem_total_kib), 1);
	/* Brief: the reason follows the table (render_status). */
	if (!up && !brief)
		writer_str(w, "down_reason", n->down_reason);
	if (!(view & RENDER_NODE_FULL))
		return;
	render_format_time(n->last_seen_ms, t, sizeof(t));
	writer_str(w, "last_seen", t);
	writer_uint(w, "mem_total_kib", n->mem_total_kib);
	/* The latest heartbeat's figure (the inventory's, until the first
	 * heartbeat): fresher than the inventory's memory.available_kib. */
	writer_uint(w, "mem_available_kib_heartbeat", n->mem_available_kib);
}

/* The state store: plain and brief only when it is not ok. */
static void render_store(struct writer *w, const Ring__StoreStatus *st,
			 int brief)
{
	char t[32];

	if (!st || (brief && !strcmp(st->state, "ok") && !*st->lost))
		return;
	writer_str(w, "store", st->state);
	if (*st->reason)
		writer_str(w, "store_reason", st->reason);
	render_format_time(st->since_ms, t, sizeof(t));
	writer_str(w, "store_since", t);
	writer_uint(w, "store_unsaved_writes", st->unsaved_writes);
	writer_uint(w, "store_unsaved_now", st->unsaved_now);
	if (*st->lost || !brief)
		writer_str(w, "store_lost", st->lost);
	writer_uint(w, "store_reopened", st->reopened);
}

/* A brief status of a large site lists only the nodes that are not up,
 * at most this many (a site of one ring and fewer nodes: every node). */
#define RENDER_NODES_BRIEF_MAX 64

static void render_nodes_not_up(struct writer *w, const Ring__StatusReply *r)
{
	size_t shown = 0, more = 0;

	for (size_t i = 0; i < r->n_nodes; i++) {
		if (!strcmp(r->nodes[i]->state, "up"))
			continue;
		if (shown == RENDER_NODES_BRIEF_MAX) {
			more++;
			continue;
		}
		if (!shown++)
			writer_table_start(w, "nodes_not_up");
		writer_obj_start_named(w, r->nodes[i]->node);
		render_node_status(w, r->nodes[i], RENDER_NODE_BRIEF,
				   r->now_ms);
		writer_obj_end(w);
	}
	if (shown)
		writer_table_end(w);
	if (more) {
		char line[64];

		snprintf(line, sizeof(line), "%zu more not up", more);
		writer_str(w, "nodes_not_up_more", line);
	}
}

void render_status(struct writer *w, const Ring__StatusReply *r, int verbose)
{
	int brief = !verbose && writer_get_format(w) == WRITER_PLAIN;
	int several = rings_several(r->topology);
	uint64_t mem = 0;
	size_t down = 0;

	/* What an operator needs first: health, what fires, what is stale. */
	writer_str(w, "health", render_health(r));
	if (r->health_cause && *r->health_cause) {
		writer_str(w, "health_cause", r->health_cause);
		writer_str(w, "health_subject", r->health_subject);
		writer_str(w, "health_why", r->health_text);
	}
	/* Several rings (plain): the site's alerts here, each ring's under
	 * it, and the rings in place of the site's topology. */
	if (several && brief)
		rings_render_site_alerts(w, r);
	else
		render_alerts(w, "alerts", r->alerts, r->n_alerts, brief);
	if (several && writer_get_format(w) == WRITER_PLAIN)
		rings_render_status(w, r, verbose);
	else if (r->topology)
		render_topology(w, r->topology, r->now_ms, verbose);
	writer_str(w, "survey", r->survey_state);
	/* After the survey: a failing store is an alert above already. */
	render_store(w, r->store, brief);
	writer_str(w, "coordinator", r->coordinator);
	writer_str(w, "version", r->version);
	writer_uint(w, "expected", r->n_expected);
	for (size_t i = 0; i < r->n_nodes; i++)
		if (!strcmp(r->nodes[i]->state, "up"))
			mem += r->nodes[i]->mem_total_kib;
	writer_uint(w, "connected", r->n_connected);
	/* Computed: the sum of the up nodes' MemTotal. */
	writer_double(w, "mem_total_gib_up_nodes", render_gib(mem), 1);
	if (brief && (several || r->n_nodes > RENDER_NODES_BRIEF_MAX)) {
		/* Thousands of rows: the rings above say what is wrong, and
		 * the nodes that are not up are listed. */
		char line[96];

		snprintf(line, sizeof(line),
			 "%zu, listed by 'ringctl status -v'", r->n_nodes);
		writer_str(w, "nodes", line);
		render_nodes_not_up(w, r);
		return;
	}
	writer_table_start(w, "nodes");
	for (size_t i = 0; i < r->n_nodes; i++) {
		writer_obj_start_named(w, r->nodes[i]->node);
		render_node_status(w, r->nodes[i],
				   brief ? RENDER_NODE_BRIEF : 0, r->now_ms);
		writer_obj_end(w);
	}
	writer_table_end(w);
	if (!brief)
		return;
	/* Reasons are prose of any length: below the table, wrapped. */
	for (size_t i = 0; i < r->n_nodes; i++) {
		if (!strcmp(r->nodes[i]->state, "up"))
			continue;
		if (!down++)
			writer_list_start(w, "down");
		writer_obj_start(w, NULL);
		writer_str(w, r->nodes[i]->node, r->nodes[i]->down_reason);
		writer_obj_end(w);
	}
	if (down)
		writer_list_end(w);
}

/* ---- topology (status), tests and ranks ---- */

static const Ring__Edge *render_edge_between(const Ring__Topology *t,
					     const char *x, const char *y)
{
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if ((!strcmp(e->a, x) && !strcmp(e->b, y)) ||
		    (!strcmp(e->a, y) && !strcmp(e->b, x)))
			return e;
	}
	return NULL;
}

/* What the cable of edge e carries: its port step (every function at
 * once, worse direction) where twins were measured together, else the
 * edge's own top figure. */
static double render_cable_top(const Ring__Topology *t, const Ring__Edge *e)
{
	for (size_t i = 0; e && e->cable_id && *e->cable_id && i < t->n_cables;
	     i++) {
		const Ring__Cable *c = t->cables[i];

		if (strcmp(c->id, e->cable_id) || c->port_gbps_a_to_b < 0 ||
		    c->port_gbps_b_to_a < 0)
			continue;
		return c->port_gbps_a_to_b < c->port_gbps_b_to_a
			       ? c->port_gbps_a_to_b
			       : c->port_gbps_b_to_a;
	}
	return topoview_edge_gbps(e);
}

void render_ring_picture(const Ring__Topology *t, char *buf, size_t len)
{
	size_t used = 0;
	int ring = !strcmp(t->kind, "ring");

	buf[0] = '\0';
	for (size_t i = 0; i < t->n_order && used < len; i++) {
		const char *next = i + 1 < t->n_order ? t->order[i + 1]
				   : ring	      ? t->order[0]
						      : NULL;
		const Ring__Edge *e =
			next ? render_edge_between(t, t->order[i], next) : NULL;
		double g = render_cable_top(t, e);
		int n;

		n = snprintf(buf + used, len - used, "%s", t->order[i]);
		used += n > 0 ? (size_t)n : 0;
		if (!next || used >= len)
			break;
		/* The live state, as the SVG draws it (topoview). */
		used += topoview_picture_link(e, g, buf + used, len - used);
		if (ring && i + 1 == t->n_order && used < len)
			snprintf(buf + used, len - used, "(%s)", t->order[0]);
	}
}

static void render_doubles(struct writer *w, const char *key, const double *v,
			   size_t n)
{
	writer_list_start(w, key);
	for (size_t i = 0; i < n; i++)
		writer_double(w, NULL, v[i], 2);
	writer_list_end(w);
}

/* Any RDMA figure measured on this edge? (< 0 = not measured.) */
static int render_edge_has_rdma(const Ring__Edge *e)
{
	return e->rdma_write_gbps_a_to_b >= 0 ||
	       e->rdma_write_gbps_b_to_a >= 0 ||
	       e->rdma_read_gbps_a_to_b >= 0 || e->rdma_read_gbps_b_to_a >= 0 ||
	       e->n_rdma_write_lat;
}

/* An empty cell (JSON null) for a figure that was not measured. */
static void render_opt_double(struct writer *w, const char *key, double v)
{
	if (v >= 0)
		writer_double(w, key, v, 2);
	else
		writer_none(w, key, "");
}

/* Plain: "64B:8.6" items, one table cell; the machine formats: a list of
 * {"size": 64, "p50_us": 8.6}, so that no script parses text. */
static void render_lat_ladder(struct writer *w, const char *key,
			      Ring__LatResult *const *lat, size_t n)
{
	int plain = writer_get_format(w) == WRITER_PLAIN;
	char buf[64];

	writer_list_start(w, key);
	for (size_t i = 0; i < n; i++) {
		if (plain) {
			snprintf(buf, sizeof(buf), "%uB:%.1f", lat[i]->size,
				 lat[i]->p50_us);
			writer_str(w, NULL, buf);
			continue;
		}
		snprintf(buf, sizeof(buf), "%u", lat[i]->size);
		writer_obj_start_named(w, buf);
		writer_uint(w, "size", lat[i]->size);
		writer_double(w, "p50_us", lat[i]->p50_us, 1);
		writer_obj_end(w);
	}
	writer_list_end(w);
}

static void render_edge(struct writer *w, const Ring__Edge *e,
			unsigned long long now_ms)
{
	char buf[256];
	double top = topoview_edge_gbps(e);
	int rdma;

	text_edge_msg_name(buf, sizeof(buf), e);
	writer_str(w, "edge", buf);
	snprintf(buf, sizeof(buf), "%s %s -> %s %s", e->a, e->a_interface, e->b,
		 e->b_interface);
	writer_str(w, "ports", buf);
	if (e->live_state && *e->live_state) {
		char t[32];

		writer_str(w, "live_state", e->live_state);
		render_format_time(e->live_since_ms, t, sizeof(t));
		writer_str(w, "live_since", t);
		writer_str(w, "live_reason", e->live_reason);
	}
	if (writer_get_format(w) != WRITER_PLAIN) {
		/* The parts of "ports", for scripts (not a table column). */
		writer_str(w, "a", e->a);
		writer_str(w, "a_interface", e->a_interface);
		writer_str(w, "b", e->b);
		writer_str(w, "b_interface", e->b_interface);
	}
	if (e->cable_id && *e->cable_id) {
		writer_str(w, "cable", e->cable_id);
		writer_bool(w, "twin", e->twin);
	}
	writer_list_start(w, "streams");
	for (size_t i = 0; i < e->n_ladder; i++)
		writer_uint(w, NULL, e->ladder[i]);
	writer_list_end(w);
	render_doubles(w, "gbps_a_to_b_measured", e->gbps_a_to_b,
		       e->n_gbps_a_to_b);
	render_doubles(w, "gbps_b_to_a_measured", e->gbps_b_to_a,
		       e->n_gbps_b_to_a);
	if (e->nominal_gbps > 0 && top >= 0)
		writer_double(w, "pct_of_nominal_computed",
			      100.0 * top / e->nominal_gbps, 1);
	else
		writer_none(w, "pct_of_nominal_computed", "");
	render_lat_ladder(w, "lat_p50_us_measured", e->latency, e->n_latency);
	writer_uint(w, "age_s",
		    e->measured_ms && now_ms > e->measured_ms
			    ? (now_ms - e->measured_ms) / 1000
			    : 0);
	writer_bool(w, "verified", e->verified);
	rdma = render_edge_has_rdma(e);
	/* "tcp+rdma": the ladder over TCP, RDMA figures beside it. */
	snprintf(buf, sizeof(buf), "%s%s", e->method,
		 rdma && !strncmp(e->method, "tcp", 3) ? "+rdma" : "");
	writer_str(w, "method", buf);
	if (*e->error)
		writer_str(w, "error", e->error);
	if (e->busy && *e->busy)
		writer_str(w, "busy_not_measured", e->busy);
	if (e->rechecked_ms) {
		char t[32];

		render_format_time(e->rechecked_ms, t, sizeof(t));
		writer_str(w, "rechecked", t);
		writer_str(w, "recheck_reason", e->recheck_reason);
	}
	/* Computed from ringd's own tests' reports. */
	writer_uint(w, "self_bytes_last_hour_computed", e->self_bytes_hour);
	if (e->light_ms) {
		char t[32];

		render_format_time(e->light_ms, t, sizeof(t));
		writer_str(w, "light_check", t);
		render_opt_double(w, "light_lat_p50_us_measured",
				  e->light_lat_p50_us);
		if (e->light_error && *e->light_error)
			writer_str(w, "light_error", e->light_error);
	}
	if (e->sample_ms) {
		char t[32];

		/* A light check's short bandwidth sample (on an idle edge):
		 * edge_degraded judges it when newer than the figures above. */
		render_format_time(e->sample_ms, t, sizeof(t));
		writer_str(w, "sample", t);
		render_opt_double(w, "sample_gbps_a_to_b_measured",
				  e->sample_gbps_a_to_b);
		render_opt_double(w, "sample_gbps_b_to_a_measured",
				  e->sample_gbps_b_to_a);
	}
	/* Moved during its tests, both ends (measured, counted by agents). */
	report_counters_list(w, "counters", e->counters, e->n_counters);
	if (!rdma && !*e->rdma_error)
		return;
	render_opt_double(w, "rdma_write_gbps_a_to_b_measured",
			  e->rdma_write_gbps_a_to_b);
	render_opt_double(w, "rdma_write_gbps_b_to_a_measured",
			  e->rdma_write_gbps_b_to_a);
	/* Named by the requester: a_to_b is A reading from B. */
	render_opt_double(w, "rdma_read_gbps_a_reads_b_measured",
			  e->rdma_read_gbps_a_to_b);
	render_opt_double(w, "rdma_read_gbps_b_reads_a_measured",
			  e->rdma_read_gbps_b_to_a);
	render_lat_ladder(w, "rdma_write_lat_p50_us_measured",
			  e->rdma_write_lat, e->n_rdma_write_lat);
	if (*e->a_gid || *e->b_gid) {
		snprintf(buf, sizeof(buf), "%s %s", e->a_gid, e->b_gid);
		writer_str(w, "rdma_gids", buf);
		if (writer_get_format(w) != WRITER_PLAIN) {
			writer_str(w, "a_gid", e->a_gid);
			writer_str(w, "b_gid", e->b_gid);
		}
	}
	if (*e->rdma_error)
		writer_str(w, "rdma_error", e->rdma_error);
}

/* Edges in ring order (n1-n2, n2-n4, ... back to n1), then any edge the
 * order does not walk (a line's missing cable, a switch's extra ports):
 * the order an operator traces the cables in. idx gets t->n_edges entries. */
static void render_edge_order(const Ring__Topology *t, size_t *idx)
{
	size_t n = 0;
	int ring = !strcmp(t->kind, "ring");

	for (size_t i = 0; i < t->n_order; i++) {
		const char *next = i + 1 < t->n_order	    ? t->order[i + 1]
				   : ring && t->n_order > 2 ? t->order[0]
							    : NULL;
		const Ring__Edge *e =
			next ? render_edge_between(t, t->order[i], next) : NULL;

		for (size_t k = 0; e && k < t->n_edges; k++) {
			int seen = 0;

			if (t->edges[k] != e)
				continue;
			for (size_t j = 0; j < n; j++)
				seen |= idx[j] == k;
			if (!seen)
				idx[n++] = k;
		}
	}
	for (size_t k = 0; k < t->n_edges && n < t->n_edges; k++) {
		int seen = 0;

		for (size_t j = 0; j < n; j++)
			seen |= idx[j] == k;
		if (!seen)
			idx[n++] = k;
	}
}

/* The default view of an edge: one short row; -v has every figure. */
static void render_edge_brief(struct writer *w, const Ring__Edge *e,
			      unsigned long long now_ms)
{
	char buf[256];
	double top = topoview_edge_gbps(e);

	text_edge_msg_name(buf, sizeof(buf), e);
	writer_str(w, "edge", buf);
	snprintf(buf, sizeof(buf), "%s %s -> %s %s", e->a, e->a_interface, e->b,
		 e->b_interface);
	writer_str(w, "ports", buf);
	if (e->live_state && *e->live_state)
		writer_str(w, "live", e->live_state);
	/* Top of the stream ladder, worse direction, as in the picture. */
	render_opt_double(w, "gbps", top);
	if (e->nominal_gbps > 0 && top >= 0)
		writer_double(w, "pct_nominal", 100.0 * top / e->nominal_gbps,
			      1);
	else
		writer_none(w, "pct_nominal", "");
	if (render_edge_has_rdma(e)) {
		double a = e->rdma_write_gbps_a_to_b,
		       b = e->rdma_write_gbps_b_to_a;

		render_opt_double(w, "rdma_gbps",
				  a >= 0 && b >= 0 && b < a ? b
				  : a >= 0		    ? a
							    : b);
	}
	if (e->n_latency) {
		snprintf(buf, sizeof(buf), "%.1f@%uB", e->latency[0]->p50_us,
			 e->latency[0]->size);
		writer_str(w, "lat_p50_us", buf);
	} else {
		writer_none(w, "lat_p50_us", "");
	}
	writer_uint(w, "age_s",
		    e->measured_ms && now_ms > e->measured_ms
			    ? (now_ms - e->measured_ms) / 1000
			    : 0);
	writer_bool(w, "verified", e->verified);
	snprintf(buf, sizeof(buf), "%s%s", e->method,
		 render_edge_has_rdma(e) && !strncmp(e->method, "tcp", 3)
			 ? "+rdma"
			 : "");
	writer_str(w, "method", buf);
	if (*e->error || *e->rdma_error)
		writer_str(w, "error", *e->error ? e->error : e->rdma_error);
	else if (e->busy && *e->busy)
		writer_str(w, "error", "busy, not measured");
}

/* One row per diagonal pair: a path on any address is what matters. */
static void render_diagonals_brief(struct writer *w, const Ring__Topology *t)
{
	writer_table_start(w, "diagonals");
	for (size_t i = 0; i < t->n_diagonals; i++) {
		const Ring__DiagonalCheck *d = t->diagonals[i], *show;
		char pair[140];
		size_t n;

		show = topoview_diagonal(t, i, &n);
		if (!show)
			continue;
		writer_obj_start(w, NULL);
		snprintf(pair, sizeof(pair), "%s-%s", d->a, d->b);
		writer_str(w, "pair", pair);
		writer_uint(w, "addresses", n);
		writer_bool(w, "path", show->path);
		/* The outcome alone; a topology stored before the field
		 * has the verdict whole. */
		writer_str(w, "verdict",
			   *show->outcome ? show->outcome : show->verdict);
		writer_obj_end(w);
	}
	writer_table_end(w);
}

/* Two findings alike but for their node (the subject fields; never the
 * English). */
static int render_finding_alike(const Ring__Finding *a, const Ring__Finding *b)
{
	return *a->node && *b->node && *a->gist && !strcmp(a->code, b->code) &&
	       !strcmp(a->level, b->level) &&
	       !strcmp(a->interface, b->interface) && !strcmp(a->gist, b->gist);
}

/* Plain: v[i]'s text, or, when later findings are alike but for their
 * node, one text for them all ("n1, n2, n3 eth3: gist"); 0 when an
 * earlier finding already said it. */
static int render_finding_text(Ring__Finding *const *v, size_t n, size_t i,
			       char *buf, size_t len)
{
	size_t used = 0, alike = 0;

	for (size_t j = 0; j < i; j++)
		if (render_finding_alike(v[j], v[i]))
			return 0;
	buf[0] = '\0';
	for (size_t j = i; j < n && used < len; j++) {
		if (j != i && !render_finding_alike(v[j], v[i]))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 alike ? ", " : "", v[j]->node);
		alike++;
	}
	if (alike < 2 || used >= len)
		snprintf(buf, len, "%s", v[i]->text);
	else
		snprintf(buf + used, len - used, "%s%s: %s",
			 *v[i]->interface ? " " : "", v[i]->interface,
			 v[i]->gist);
	return 1;
}

/* The rest of a finding's subject and its figures, where it has them,
 * for scripts to decide on (never on the text). */
static void render_finding_fields(struct writer *w, const Ring__Finding *f)
{
	if (*f->edge)
		writer_str(w, "edge", f->edge);
	if (f->ring)
		writer_bool(w, "ring", 1);
	if (*f->pcie_link)
		writer_str(w, "pcie_link", f->pcie_link);
	if (*f->peer_node) {
		writer_str(w, "peer_node", f->peer_node);
		writer_str(w, "peer_interface", f->peer_interface);
	}
	if (f->n_cables) {
		writer_list_start(w, "cables");
		for (size_t i = 0; i < f->n_cables; i++)
			writer_str(w, NULL, f->cables[i]);
		writer_list_end(w);
	}
	if (f->gbps > 0)
		writer_double(w, "gbps", f->gbps, 2);
	if (f->reference_gbps > 0)
		writer_double(w, "reference_gbps", f->reference_gbps, 2);
	if (f->mtu)
		writer_uint(w, "mtu", f->mtu);
	if (f->peer_mtu)
		writer_uint(w, "peer_mtu", f->peer_mtu);
}

/* Findings (anomalies: by_code) in plain by default: one "- level: text"
 * line each (alike findings of several nodes as one), wrapped by the
 * writer; -v and the machine formats: the
 * table's columns (level, finding / kind, anomaly). */
static void render_notes(struct writer *w, const char *key,
			 Ring__Finding *const *v, size_t n, int brief,
			 int by_code)
{
	if (brief)
		writer_list_start(w, key);
	else
		writer_table_start(w, key);
	for (size_t i = 0; i < n; i++) {
		const char *tag = by_code ? v[i]->code : v[i]->level;
		const char *text = v[i]->text;
		char grouped[2048];

		/* Plain says a finding on many nodes once; the machine
		 * formats keep one record each. */
		if (!by_code && (writer_get_format(w) == WRITER_PLAIN)) {
			if (!render_finding_text(v, n, i, grouped,
						 sizeof(grouped)))
				continue;
			text = grouped;
		}
		writer_obj_start(w, NULL);
		if (brief) {
			writer_str(w,
				   *tag	     ? tag
				   : by_code ? "anomaly"
					     : "note",
				   text);
		} else {
			writer_str(w, by_code ? "kind" : "level", tag);
			/* A finding's code, for scripts (no table column). */
			if (!by_code && writer_get_format(w) != WRITER_PLAIN) {
				writer_str(w, "code", v[i]->code);
				/* Its subject, where it is one node's. */
				if (*v[i]->node) {
					writer_str(w, "node", v[i]->node);
					writer_str(w, "interface",
						   v[i]->interface);
				}
				render_finding_fields(w, v[i]);
			}
			writer_str(w, by_code ? "anomaly" : "finding", text);
		}
		writer_obj_end(w);
	}
	if (brief)
		writer_list_end(w);
	else
		writer_table_end(w);
}

/* keyvalue names a diagonal check by its pair and address. */
static void render_diagonal_id(const Ring__DiagonalCheck *d, char *buf,
			       size_t len)
{
	snprintf(buf, len, "%s-%s@%s", d->a, d->b, d->b_address);
}

/* Cables (twins: function pairs per cable) with their port steps, and
 * the ring-load rounds. Plain, brief: only where a cable has several
 * functions or a round ran. */
/* Plain: a cable's nominal is the lesser link speed its ports report (a
 * shaped veth says 10 Gbps); above its edge's own nominal, the one every
 * percentage uses, it would contradict it: plain leaves it out, the
 * machine formats keep it. */
static int render_cable_nominal_above(const Ring__Topology *t,
				      const Ring__Cable *c,
				      const struct writer *w)
{
	const Ring__Edge *e;

	if (!(writer_get_format(w) == WRITER_PLAIN) || !c->n_edges ||
	    c->edges[0] >= t->n_edges)
		return 0;
	e = t->edges[c->edges[0]];
	return e->nominal_gbps > 0 && c->nominal_gbps > e->nominal_gbps;
}

static void render_cables(struct writer *w, const Ring__Topology *t, int brief)
{
	int twins = 0;

	for (size_t i = 0; i < t->n_cables; i++)
		twins |= t->cables[i]->functions > 1;
	if (twins || !brief) {
		writer_table_start(w, "cables");
		for (size_t i = 0; i < t->n_cables; i++) {
			const Ring__Cable *c = t->cables[i];

			writer_obj_start_named(w, c->id);
			writer_str(w, "cable", c->id);
			writer_uint(w, "functions", c->functions);
			render_opt_double(w, "port_gbps_a_to_b_measured",
					  c->port_gbps_a_to_b);
			render_opt_double(w, "port_gbps_b_to_a_measured",
					  c->port_gbps_b_to_a);
			if (c->nominal_gbps > 0 &&
			    !render_cable_nominal_above(t, c, w))
				writer_double(w, "nominal_gbps",
					      c->nominal_gbps, 0);
			if (!brief)
				writer_str(w, "method", c->method);
			if (*c->error)
				writer_str(w, "error", c->error);
			writer_obj_end(w);
		}
		writer_table_end(w);
	}
	if (!t->n_load_rounds || (brief && !twins))
		return;
	/* One row per ring cable: one way (the direction each node sends
	 * to the next), then both ways at once. */
	writer_table_start(w, "ring_load");
	for (size_t k = 0; k < t->load_rounds[0]->n_edges; k++) {
		const Ring__LoadEdge *one = t->load_rounds[0]->edges[k];
		const Ring__LoadEdge *both = NULL;
		int ab = one->gbps_a_to_b >= 0;
		char dir[140];

		for (size_t i = 1; i < t->n_load_rounds && !both; i++)
			for (size_t m = 0; m < t->load_rounds[i]->n_edges; m++)
				if (!strcmp(t->load_rounds[i]
						    ->edges[m]
						    ->cable_id,
					    one->cable_id))
					both = t->load_rounds[i]->edges[m];
		writer_obj_start_named(w, one->cable_id);
		writer_str(w, "cable", one->cable_id);
		snprintf(dir, sizeof(dir), "%s->%s", ab ? one->a : one->b,
			 ab ? one->b : one->a);
		writer_str(w, "one_way", dir);
		render_opt_double(w, "one_way_gbps_measured",
				  ab ? one->gbps_a_to_b : one->gbps_b_to_a);
		render_opt_double(w, "both_ways_gbps_a_to_b_measured",
				  both ? both->gbps_a_to_b : -1);
		render_opt_double(w, "both_ways_gbps_b_to_a_measured",
				  both ? both->gbps_b_to_a : -1);
		if (*one->error)
			writer_str(w, "error", one->error);
		writer_obj_end(w);
	}
	writer_table_end(w);
}

/* Nodes up but not cabled into the ring, set apart by the survey. */
void render_strays(struct writer *w, const Ring__Topology *t, int brief)
{
	if (!t->n_strays)
		return;
	if (brief) {
		/* As the anomalies: "- reason: text", wrapped. */
		writer_list_start(w, "not_in_ring");
		for (size_t i = 0; i < t->n_strays; i++) {
			writer_obj_start(w, NULL);
			writer_str(w, t->strays[i]->reason, t->strays[i]->text);
			writer_obj_end(w);
		}
		writer_list_end(w);
		return;
	}
	writer_table_start(w, "strays");
	for (size_t i = 0; i < t->n_strays; i++) {
		const Ring__StrayNode *s = t->strays[i];

		writer_obj_start_named(w, s->node);
		writer_str(w, "node", s->node);
		writer_str(w, "reason", s->reason);
		writer_list_start(w, "neighbours");
		for (size_t k = 0; k < s->n_neighbours; k++)
			writer_str(w, NULL, s->neighbours[k]);
		writer_list_end(w);
		writer_str(w, "text", s->text);
		writer_obj_end(w);
	}
	writer_table_end(w);
}

void render_topology(struct writer *w, const Ring__Topology *t,
		     unsigned long long now_ms, int verbose)
{
	int brief = !verbose && writer_get_format(w) == WRITER_PLAIN;
	char pic[2048], ts[32], id[WRITER_ID_MAX + 1];
	size_t *idx = calloc(t->n_edges ? t->n_edges : 1, sizeof(*idx));

	writer_obj_start(w, "topology");
	writer_str(w, "kind", t->kind);
	render_format_time(t->surveyed_ms, ts, sizeof(ts));
	writer_str(w, "surveyed", ts);
	if (t->line_gap && *t->line_gap)
		writer_str(w, "missing_cable", t->line_gap);
	if (t->live_kind && *t->live_kind) {
		/* Now, from what the agents push (no test traffic). */
		writer_str(w, "live_kind", t->live_kind);
		if (*t->live_gap)
			writer_str(w, "live_gap", t->live_gap);
		if (t->n_live_nodes_down) {
			writer_list_start(w, "live_nodes_down");
			for (size_t i = 0; i < t->n_live_nodes_down; i++)
				writer_str(w, NULL, t->live_nodes_down[i]);
			writer_list_end(w);
		}
		if (t->n_live_cables_down) {
			writer_list_start(w, "live_cables_down");
			for (size_t i = 0; i < t->n_live_cables_down; i++)
				writer_str(w, NULL, t->live_cables_down[i]);
			writer_list_end(w);
		}
		if (t->n_live_nodes_down || t->n_live_cables_down) {
			char now_text[600];

			topoview_live_text(t, 1, now_text, sizeof(now_text));
			writer_str(w, "live_text", now_text);
		}
		writer_bool(w, "order_valid", !*t->order_invalid);
		if (*t->order_invalid)
			writer_str(w, "order_invalid", t->order_invalid);
	}
	if (t->n_not_surveyed) {
		writer_list_start(w, "not_surveyed");
		for (size_t i = 0; i < t->n_not_surveyed; i++)
			writer_str(w, NULL, t->not_surveyed[i]);
		writer_list_end(w);
	}
	render_strays(w, t, brief);
	render_ring_picture(t, pic, sizeof(pic));
	/* Each edge labelled with its measured top-of-ladder figure, the
	 * worse direction, in Gbps (a cable of twins: its port step). */
	writer_str(w, "picture", pic);
	writer_list_start(w, "order");
	for (size_t i = 0; i < t->n_order; i++)
		writer_str(w, NULL, t->order[i]);
	writer_list_end(w);
	if (idx)
		render_edge_order(t, idx);
	writer_table_start(w, "edges");
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[idx ? idx[i] : i];

		text_edge_msg_name(id, sizeof(id), e);
		writer_obj_start_named(w, id);
		if (brief)
			render_edge_brief(w, e, now_ms);
		else
			render_edge(w, e, now_ms);
		writer_obj_end(w);
	}
	writer_table_end(w);
	free(idx);
	if (brief) {
		render_diagonals_brief(w, t);
	} else {
		writer_table_start(w, "diagonals");
		for (size_t i = 0; i < t->n_diagonals; i++) {
			const Ring__DiagonalCheck *d = t->diagonals[i];
			char pair[140];

			render_diagonal_id(d, id, sizeof(id));
			writer_obj_start_named(w, id);
			snprintf(pair, sizeof(pair), "%s-%s", d->a, d->b);
			writer_str(w, "pair", pair);
			writer_str(w, "address", d->b_address);
			writer_str(w, "route", d->route_kind);
			writer_str(w, "route_interface", d->route_interface);
			writer_bool(w, "path", d->path);
			writer_str(w, "verdict", d->verdict);
			/* Its two parts, for scripts (no table column). */
			if (writer_get_format(w) != WRITER_PLAIN) {
				writer_str(w, "outcome", d->outcome);
				writer_str(w, "reason", d->reason);
			}
			writer_obj_end(w);
		}
		writer_table_end(w);
	}
	render_cables(w, t, brief);
	render_notes(w, "findings", t->findings, t->n_findings, brief, 0);
	render_notes(w, "anomalies", t->anomalies, t->n_anomalies, brief, 1);
	writer_double(w, "survey_wall_s", t->survey_wall_s, 1);
	/* Computed: what the same tests would take one after another. */
	writer_double(w, "tests_sum_s_computed", t->tests_sum_s, 1);
	writer_uint(w, "rounds", t->rounds);
	/* Issue 24: every ring of the site, for programs (plain status of
	 * several rings has its own view, rings.c). */
	if (t->n_rings && writer_get_format(w) != WRITER_PLAIN)
		rings_render_list(w, t);
	writer_obj_end(w);
}
