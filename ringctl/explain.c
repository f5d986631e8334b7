/* `ringctl explain`: one edge's or node's figures gathered from status,
 * inventory and history, and the ceiling analysis. Measured figures carry
 * "_measured" and their time; what is derived from them "_computed". */
#include "explain.h"
#include "client.h"
#include "explain_inv.h"
#include "render.h"
#include "report_counters.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPLAIN_OK 0
#define EXPLAIN_PROBLEM 1
#define EXPLAIN_TROUBLE 2
/* Names listed after "unknown": enough to spot a typo, not a page. */
#define EXPLAIN_LIST_MAX 12
/* History series summarised (kind, direction, streams or size). */
#define EXPLAIN_SERIES_MAX 48

/* ---- requests ---- */

/* Texts from agents on the operator's terminal: no control byte. */
static Ring__Envelope *explain_inventory(const char *sock, int timeout_ms,
					 const char *node)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__InventoryRequest ir = RING__INVENTORY_REQUEST__INIT;

	ir.node = (char *)node;
	req.body_case = RING__ENVELOPE__BODY_INVENTORY_REQUEST;
	req.inventory_request = &ir;
	return client_call(sock, timeout_ms, &req,
			   RING__ENVELOPE__BODY_INVENTORY_REPLY,
			   CLIENT_QUIET_ERROR);
}

/* ---- rendering ---- */

static void explain_opt(struct writer *w, const char *key, double v)
{
	if (v >= 0)
		writer_double(w, key, v, 2);
	else
		writer_none(w, key, "");
}

static void explain_doubles(struct writer *w, const char *key, const double *v,
			    size_t n)
{
	writer_list_start(w, key);
	for (size_t i = 0; i < n; i++)
		writer_double(w, NULL, v[i], 2);
	writer_list_end(w);
}

static void explain_lat(struct writer *w, const char *key,
			Ring__LatResult *const *lat, size_t n)
{
	char id[16];

	writer_table_start(w, key);
	for (size_t i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%u", lat[i]->size);
		writer_obj_start_named(w, id);
		writer_uint(w, "size", lat[i]->size);
		writer_double(w, "p50_us", lat[i]->p50_us, 2);
		writer_double(w, "p99_us", lat[i]->p99_us, 2);
		writer_obj_end(w);
	}
	writer_table_end(w);
}

struct explain_problems {
	const char *why[16];
	unsigned n;
};

static void explain_problem(struct explain_problems *p, const char *why)
{
	if (p->n < sizeof(p->why) / sizeof(p->why[0]))
		p->why[p->n++] = why;
}

static void explain_write_problems(struct writer *w,
				   const struct explain_problems *p)
{
	writer_list_start(w, "problems");
	for (unsigned i = 0; i < p->n; i++)
		writer_str(w, NULL, p->why[i]);
	writer_list_end(w);
}

static void explain_edge_figures(struct writer *w, const Ring__Edge *e,
				 uint64_t now_ms)
{
	/* Plain: -1 (none) left out, as blank texts are by the writer. */
	int plain = writer_get_format(w) == WRITER_PLAIN;

	writer_obj_start(w, "figures");
	writer_str(w, "method", e->method);
	render_time(w, "measured", e->measured_ms, "");
	writer_uint(w, "age_s",
		    e->measured_ms && now_ms > e->measured_ms
			    ? (now_ms - e->measured_ms) / 1000
			    : 0);
	writer_bool(w, "verified", e->verified);
	writer_list_start(w, "streams");
	for (size_t i = 0; i < e->n_ladder; i++)
		writer_uint(w, NULL, e->ladder[i]);
	writer_list_end(w);
	explain_doubles(w, "gbps_a_to_b_measured", e->gbps_a_to_b,
			e->n_gbps_a_to_b);
	explain_doubles(w, "gbps_b_to_a_measured", e->gbps_b_to_a,
			e->n_gbps_b_to_a);
	/* The lesser port speed and PCIe share: from the inventories. */
	writer_double(w, "nominal_gbps_computed", e->nominal_gbps, 1);
	explain_lat(w, "lat_measured", e->latency, e->n_latency);
	explain_opt(w, "rdma_write_gbps_a_to_b_measured",
		    e->rdma_write_gbps_a_to_b);
	explain_opt(w, "rdma_write_gbps_b_to_a_measured",
		    e->rdma_write_gbps_b_to_a);
	explain_opt(w, "rdma_read_gbps_a_reads_b_measured",
		    e->rdma_read_gbps_a_to_b);
	explain_opt(w, "rdma_read_gbps_b_reads_a_measured",
		    e->rdma_read_gbps_b_to_a);
	explain_lat(w, "rdma_write_lat_measured", e->rdma_write_lat,
		    e->n_rdma_write_lat);
	writer_str(w, "a_gid", e->a_gid);
	if (!plain || e->a_gid_index >= 0)
		writer_int(w, "a_gid_index", e->a_gid_index);
	writer_str(w, "b_gid", e->b_gid);
	if (!plain || e->b_gid_index >= 0)
		writer_int(w, "b_gid_index", e->b_gid_index);
	writer_str(w, "error", e->error);
	writer_str(w, "rdma_error", e->rdma_error);
	if (e->busy && *e->busy)
		writer_str(w, "busy_not_measured", e->busy);
	writer_str(w, "live_state", e->live_state);
	render_time(w, "live_since", e->live_since_ms, "");
	writer_str(w, "live_reason", e->live_reason);
	if (e->light_ms) {
		render_time(w, "light_check", e->light_ms, "");
		explain_opt(w, "light_lat_p50_us_measured",
			    e->light_lat_p50_us);
		writer_str(w, "light_error", e->light_error);
	}
	if (e->sample_ms) {
		render_time(w, "sample", e->sample_ms, "");
		explain_opt(w, "sample_gbps_a_to_b_measured",
			    e->sample_gbps_a_to_b);
		explain_opt(w, "sample_gbps_b_to_a_measured",
			    e->sample_gbps_b_to_a);
	}
	if (e->rechecked_ms) {
		render_time(w, "rechecked", e->rechecked_ms, "");
		writer_str(w, "recheck_reason", e->recheck_reason);
	}
	writer_uint(w, "self_bytes_last_hour_computed", e->self_bytes_hour);
	writer_obj_end(w);
}

static void explain_cable_section(struct writer *w, const Ring__Topology *t,
				  const Ring__Edge *e)
{
	const Ring__Cable *c = explain_cable(t, e);

	if (!c)
		return;
	writer_obj_start(w, "cable");
	writer_str(w, "id", c->id);
	writer_bool(w, "twin", e->twin);
	writer_uint(w, "functions", c->functions);
	/* The cable's is the lesser link speed its ports report (a shaped
	 * veth says 10 Gbps); the edge's figures carry the nominal the
	 * ceiling uses: plain shows this one only where it is known and not
	 * above that. */
	if (writer_get_format(w) != WRITER_PLAIN ||
	    (c->nominal_gbps > 0 &&
	     !(e->nominal_gbps > 0 && c->nominal_gbps > e->nominal_gbps)))
		writer_double(w, "nominal_gbps_computed", c->nominal_gbps, 1);
	/* Every function pair of the cable at once, at the survey. */
	render_time(w, "measured", t->surveyed_ms, "");
	explain_opt(w, "port_gbps_a_to_b_measured", c->port_gbps_a_to_b);
	explain_opt(w, "port_gbps_b_to_a_measured", c->port_gbps_b_to_a);
	writer_str(w, "error", c->error);
	writer_obj_end(w);
	writer_table_start(w, "ring_load");
	for (size_t i = 0; i < t->n_load_rounds; i++) {
		const Ring__LoadRound *r = t->load_rounds[i];

		for (size_t j = 0; j < r->n_edges; j++) {
			const Ring__LoadEdge *le = r->edges[j];

			if (strcmp(le->cable_id, c->id))
				continue;
			writer_obj_start_named(w, r->mode);
			writer_str(w, "mode", r->mode);
			render_time(w, "measured", t->surveyed_ms, "");
			explain_opt(w, "gbps_a_to_b_measured", le->gbps_a_to_b);
			explain_opt(w, "gbps_b_to_a_measured", le->gbps_b_to_a);
			writer_str(w, "error", le->error);
			writer_obj_end(w);
		}
	}
	writer_table_end(w);
}

static void explain_end(struct writer *w, const char *node,
			const Ring__InventoryReply *ir, const char *ifname,
			const char *address)
{
	const Ring__Inventory *inv = ir ? ir->inventory : NULL;
	const Ring__NetInterface *f = explain_iface(inv, ifname);
	const Ring__PcieLink *k = explain_link(inv, f);
	const Ring__PhysPort *p = explain_port(inv, f);
	const Ring__RdmaPort *rp = explain_rdma_port(inv, f);

	writer_obj_start_named(w, node);
	writer_str(w, "node", node);
	writer_str(w, "interface", ifname);
	writer_str(w, "address", address);
	if (ir && ir->status)
		/* The inventory is the agent's last report. */
		render_time(w, "inventory_seen", ir->status->last_seen_ms, "");
	if (!f) {
		writer_str(w, "inventory",
			   inv ? "no such interface" : "no inventory");
		writer_obj_end(w);
		return;
	}
	writer_str(w, "mac", f->mac);
	writer_uint(w, "mtu", f->mtu);
	writer_bool(w, "carrier", f->carrier);
	if (writer_get_format(w) != WRITER_PLAIN || f->speed_mbps >= 0)
		writer_int(w, "speed_mbps", f->speed_mbps);
	writer_uint(w, "nominal_speed_mbps", f->nominal_speed_mbps);
	writer_double(w, "nominal_gbps_computed", f->nominal_gbps, 1);
	writer_str(w, "driver", f->driver);
	writer_str(w, "pci_address", f->pci_address);
	/* Plain: no empty heading for a link or port the inventory lacks. */
	if (k || writer_get_format(w) != WRITER_PLAIN)
		writer_obj_start(w, "pcie_link");
	if (k) {
		writer_str(w, "id", k->id);
		writer_str(w, "speed", k->speed);
		writer_uint(w, "width", k->width);
		writer_str(w, "max_speed", k->max_speed);
		writer_uint(w, "max_width", k->max_width);
		writer_double(w, "usable_gbps_computed", k->usable_gbps, 1);
		writer_uint(w, "mps_bytes", k->mps_bytes);
		writer_str(w, "mps_source", k->mps_source);
		writer_str(w, "downtrained", k->downtrained);
		writer_str(w, "narrow", k->narrow);
		writer_list_start(w, "functions");
		for (size_t i = 0; i < k->n_interfaces; i++)
			writer_str(w, NULL, k->interfaces[i]);
		writer_list_end(w);
	}
	if (k || writer_get_format(w) != WRITER_PLAIN)
		writer_obj_end(w);
	if (p || writer_get_format(w) != WRITER_PLAIN)
		writer_obj_start(w, "port");
	if (p) {
		writer_str(w, "id", p->id);
		writer_str(w, "name", p->name);
		writer_double(w, "speed_gbps", p->speed_gbps, 1);
		writer_list_start(w, "twins");
		for (size_t i = 0; i < p->n_interfaces; i++)
			if (strcmp(p->interfaces[i], f->name))
				writer_str(w, NULL, p->interfaces[i]);
		writer_list_end(w);
		writer_str(w, "twins_differ", p->twins_differ);
	}
	if (p || writer_get_format(w) != WRITER_PLAIN)
		writer_obj_end(w);
	writer_str(w, "rdma_device", f->rdma_device);
	if (rp) {
		writer_str(w, "rdma_state", rp->state);
		writer_uint(w, "rdma_active_mtu", rp->active_mtu);
		writer_double(w, "rdma_active_speed_gbps",
			      rp->active_speed_gbps, 1);
		writer_table_start(w, "gids");
		for (size_t i = 0; i < rp->n_gids; i++) {
			char id[16];

			snprintf(id, sizeof(id), "%u", rp->gids[i]->index);
			writer_obj_start_named(w, id);
			writer_uint(w, "index", rp->gids[i]->index);
			writer_str(w, "gid", rp->gids[i]->gid);
			writer_str(w, "type", rp->gids[i]->type);
			writer_obj_end(w);
		}
		writer_table_end(w);
	}
	writer_obj_end(w);
}

struct explain_series {
	const char *kind, *direction;
	uint32_t param;
	double *v;
	size_t n;
	uint64_t last_ts;
	double last;
};

static int explain_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Per series: how many samples, min, median, max, last (all measured). */
static void explain_history(struct writer *w, const Ring__HistoryReply *h)
{
	struct explain_series s[EXPLAIN_SERIES_MAX];
	size_t ns = 0, left_out = 0;

	writer_obj_start(w, "history");
	if (!h) {
		writer_str(w, "error", "no history from the coordinator");
		writer_obj_end(w);
		return;
	}
	writer_uint(w, "samples", h->n_samples);
	writer_bool(w, "truncated", h->truncated);
	render_time(w, "first", h->n_samples ? h->samples[0]->ts_ms : 0, "");
	render_time(w, "last",
		    h->n_samples ? h->samples[h->n_samples - 1]->ts_ms : 0, "");
	for (size_t i = 0; i < h->n_samples; i++) {
		const Ring__HistorySample *x = h->samples[i];
		size_t j;

		for (j = 0; j < ns; j++)
			if (!strcmp(s[j].kind, x->kind) &&
			    !strcmp(s[j].direction, x->direction) &&
			    s[j].param == x->param)
				break;
		if (j == ns) {
			if (ns == EXPLAIN_SERIES_MAX) {
				left_out++;
				continue;
			}
			s[ns] = (struct explain_series){
				.kind = x->kind,
				.direction = x->direction,
				.param = x->param,
				.v = calloc(h->n_samples, sizeof(double)),
			};
			if (!s[ns].v) {
				left_out++;
				continue;
			}
			ns++;
		}
		s[j].v[s[j].n++] = x->value;
		s[j].last = x->value;
		s[j].last_ts = x->ts_ms;
	}
	writer_table_start(w, "series");
	for (size_t j = 0; j < ns; j++) {
		qsort(s[j].v, s[j].n, sizeof(double), explain_cmp_double);
		writer_obj_start(w, NULL);
		writer_str(w, "kind", s[j].kind);
		writer_str(w, "direction", s[j].direction);
		writer_uint(w, "param", s[j].param);
		writer_uint(w, "count", s[j].n);
		writer_double(w, "min_measured", s[j].v[0], 2);
		writer_double(w, "median_computed",
			      s[j].n % 2 ? s[j].v[s[j].n / 2]
					 : (s[j].v[s[j].n / 2 - 1] +
					    s[j].v[s[j].n / 2]) /
						   2,
			      2);
		writer_double(w, "max_measured", s[j].v[s[j].n - 1], 2);
		writer_double(w, "last_measured", s[j].last, 2);
		/* Plain: within 100 columns; the page's first and last say
		 * when. */
		if (writer_get_format(w) != WRITER_PLAIN)
			render_time(w, "last_at", s[j].last_ts, "");
		writer_obj_end(w);
		free(s[j].v);
	}
	writer_table_end(w);
	if (left_out)
		writer_uint(w, "samples_not_summarised", left_out);
	writer_obj_end(w);
}

static void explain_ceiling_section(struct writer *w,
				    const struct explain_ceiling *c)
{
	writer_obj_start(w, "ceiling");
	writer_str(w, "figure", c->figure);
	explain_opt(w, "gbps_measured", c->gbps);
	render_time(w, "measured", c->measured_ms, "");
	writer_table_start(w, "limits");
	for (unsigned i = 0; i < c->n_limits; i++) {
		writer_obj_start(w, NULL);
		writer_str(w, "limit", c->limits[i].what);
		writer_double(w, "gbps_computed", c->limits[i].gbps, 1);
		if (c->gbps >= 0)
			writer_double(w, "pct_computed",
				      100.0 * c->gbps / c->limits[i].gbps, 0);
		else
			writer_none(w, "pct_computed", "");
		writer_bool(w, "at", (int)i == c->at);
		writer_str(w, "inputs", c->limits[i].text);
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_str(w, "at", c->at >= 0 ? c->limits[c->at].what : "");
	/* The limit a measured figure shows the model understates. */
	writer_str(w, "model_understated",
		   c->understated >= 0 ? c->limits[c->understated].what : "");
	writer_str(w, "ladder_computed", c->ladder);
	writer_str(w, "verdict_computed", c->verdict);
	if (*c->port_verdict)
		writer_str(w, "port_step_verdict_computed", c->port_verdict);
	/* Plain: one wrapped line each (the texts hold commas). */
	writer_list_start(w, "raise_computed");
	for (unsigned i = 0; i < c->n_advice; i++) {
		if (writer_get_format(w) != WRITER_PLAIN) {
			writer_str(w, NULL, c->advice[i]);
			continue;
		}
		writer_obj_start(w, NULL);
		writer_str(w, "raise", c->advice[i]);
		writer_obj_end(w);
	}
	writer_list_end(w);
	writer_obj_end(w);
}

/* Findings and anomalies for which named() holds; whether a warning is
 * among them. */
static int explain_findings(struct writer *w, const Ring__Topology *t,
			    int (*named)(const Ring__Topology *,
					 const Ring__Finding *, const void *),
			    const void *arg)
{
	int warn = 0;

	writer_table_start(w, "findings");
	for (int pass = 0; t && pass < 2; pass++) {
		Ring__Finding *const *v = pass ? t->anomalies : t->findings;
		size_t n = pass ? t->n_anomalies : t->n_findings;

		for (size_t i = 0; i < n; i++) {
			if (!named(t, v[i], arg))
				continue;
			writer_obj_start(w, NULL);
			writer_str(w, "level",
				   *v[i]->level ? v[i]->level : "anomaly");
			writer_str(w, "code", v[i]->code);
			writer_str(w, "finding", v[i]->text);
			writer_obj_end(w);
			warn |= !strcmp(v[i]->level, "warn");
		}
	}
	writer_table_end(w);
	return warn;
}

/* Firing alerts for which named() holds; whether one is above info. */
static int explain_alerts(struct writer *w, const Ring__StatusReply *st,
			  int (*named)(const Ring__Alert *, const void *),
			  const void *arg)
{
	Ring__Alert *v[64];
	size_t n = 0;
	int bad = 0;

	for (size_t i = 0; i < st->n_alerts && n < 64; i++)
		if (st->alerts[i]->firing && named(st->alerts[i], arg)) {
			v[n++] = st->alerts[i];
			bad |= st->alerts[i]->severity !=
			       RING__SEVERITY__SEVERITY_INFO;
		}
	render_alerts(w, "alerts", v, n, 0);
	return bad;
}

struct explain_edge_arg {
	const Ring__Edge *e;
	char name[EXPLAIN_NAME_MAX], rev[EXPLAIN_NAME_MAX];
};

static int explain_finding_about_edge(const Ring__Topology *t,
				      const Ring__Finding *f, const void *arg)
{
	const struct explain_edge_arg *x = arg;

	return explain_finding_names_edge(t, x->e, f);
}

static int explain_alert_names_edge(const Ring__Alert *a, const void *arg)
{
	const struct explain_edge_arg *x = arg;

	return !strcmp(a->edge, x->name) || !strcmp(a->edge, x->rev) ||
	       !strcmp(a->subject, x->name) || !strcmp(a->subject, x->rev);
}

static int explain_finding_about_node(const Ring__Topology *t,
				      const Ring__Finding *f, const void *arg)
{
	return explain_finding_names_node(t, arg, f);
}

static int explain_alert_names_node(const Ring__Alert *a, const void *arg)
{
	const char *node = arg;

	return !strcmp(a->node, node) || !strcmp(a->subject, node) ||
	       explain_text_names(a->edge, node);
}

static Ring__HistoryReply *explain_fetch_history(const char *sock,
						 int timeout_ms,
						 const char *name,
						 Ring__Envelope **hold)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__HistoryRequest hr = RING__HISTORY_REQUEST__INIT;

	hr.edge = (char *)name;
	req.body_case = RING__ENVELOPE__BODY_HISTORY_REQUEST;
	req.history_request = &hr;
	*hold = client_call(sock, timeout_ms, &req,
			    RING__ENVELOPE__BODY_HISTORY_REPLY,
			    CLIENT_QUIET_ERROR);
	return *hold ? (*hold)->history_reply : NULL;
}

static int explain_edge(const char *sock, int timeout_ms,
			enum writer_format fmt, const Ring__StatusReply *st,
			const Ring__Edge *e)
{
	const Ring__Topology *t = st->topology;
	Ring__Envelope *ia = explain_inventory(sock, timeout_ms, e->a);
	Ring__Envelope *ib = explain_inventory(sock, timeout_ms, e->b);
	Ring__Envelope *hh = NULL;
	const Ring__InventoryReply *ra = ia ? ia->inventory_reply : NULL,
				   *rb = ib ? ib->inventory_reply : NULL;
	struct explain_edge_arg x = {.e = e};
	struct explain_problems pr = {0};
	struct explain_ceiling *c = calloc(1, sizeof(*c));
	Ring__HistoryReply *h;
	struct writer *w;
	int warn;

	if (!c) {
		perror("ringctl");
		frame_free(ia);
		frame_free(ib);
		return EXPLAIN_TROUBLE;
	}
	text_edge_msg_name(x.name, sizeof(x.name), e);
	if (e->twin)
		snprintf(x.rev, sizeof(x.rev), "%s-%s:%s", e->b, e->a,
			 e->b_interface);
	else
		snprintf(x.rev, sizeof(x.rev), "%s-%s", e->b, e->a);
	h = explain_fetch_history(sock, timeout_ms, x.name, &hh);
	explain_ceiling(t, e, ra ? ra->inventory : NULL,
			rb ? rb->inventory : NULL, c);
	if (*e->error)
		explain_problem(&pr, "the edge's test failed (error)");
	if (*e->rdma_error)
		explain_problem(&pr,
				"the edge's RDMA test failed (rdma_error)");
	if (e->live_state && (!strcmp(e->live_state, "down") ||
			      !strcmp(e->live_state, "degraded")))
		explain_problem(&pr, !strcmp(e->live_state, "down")
					     ? "the edge is down now"
					     : "the edge is degraded now");

	w = writer_new(stdout, fmt);
	writer_str(w, "explain", "edge");
	writer_str(w, "edge", x.name);
	{
		char ports[320];

		snprintf(ports, sizeof(ports), "%s %s -> %s %s", e->a,
			 e->a_interface, e->b, e->b_interface);
		writer_str(w, "ports", ports);
	}
	render_time(w, "surveyed", t->surveyed_ms, "");
	explain_edge_figures(w, e, st->now_ms);
	explain_cable_section(w, t, e);
	writer_list_start(w, "ends");
	explain_end(w, e->a, ra, e->a_interface, e->a_address);
	explain_end(w, e->b, rb, e->b_interface, e->b_address);
	writer_list_end(w);
	/* Measured by the agents around the edge's tests. */
	report_counters_list(w, "counters_measured", e->counters,
			     e->n_counters);
	explain_history(w, h);
	explain_ceiling_section(w, c);
	warn = explain_findings(w, t, explain_finding_about_edge, &x);
	if (warn)
		explain_problem(&pr, "a warning finding names it");
	if (explain_alerts(w, st, explain_alert_names_edge, &x))
		explain_problem(&pr, "an alert on it fires");
	explain_write_problems(w, &pr);
	writer_finish(w);
	free(c);
	frame_free(hh);
	frame_free(ia);
	frame_free(ib);
	return pr.n ? EXPLAIN_PROBLEM : EXPLAIN_OK;
}

static double explain_edge_top(const Ring__Edge *e)
{
	return explain_worse(explain_top(e->gbps_a_to_b, e->n_gbps_a_to_b),
			     explain_top(e->gbps_b_to_a, e->n_gbps_b_to_a));
}

static void explain_node_inventory(struct writer *w, const Ring__Inventory *inv)
{
	writer_obj_start(w, "inventory");
	if (!inv) {
		writer_str(w, "error", "the node never reported an inventory");
		writer_obj_end(w);
		return;
	}
	writer_str(w, "hostname", inv->hostname);
	writer_str(w, "kernel", inv->kernel);
	writer_str(w, "mgmt_interface", inv->mgmt_interface);
	if (inv->memory) {
		writer_uint(w, "mem_total_kib", inv->memory->total_kib);
		writer_uint(w, "mem_available_kib", inv->memory->available_kib);
	}
	writer_table_start(w, "interfaces");
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];
		char addr[64] = "";

		if (f->n_ipv4)
			snprintf(addr, sizeof(addr), "%s/%u",
				 f->ipv4[0]->address, f->ipv4[0]->prefix);
		writer_obj_start_named(w, f->name);
		writer_str(w, "name", f->name);
		writer_str(w, "ipv4", addr);
		writer_uint(w, "mtu", f->mtu);
		writer_bool(w, "carrier", f->carrier);
		writer_int(w, "speed_mbps", f->speed_mbps);
		writer_str(w, "pcie_link", f->pcie_link);
		writer_str(w, "port",
			   *f->phys_port_name ? f->phys_port_name : f->port_id);
		writer_str(w, "rdma", f->rdma_device);
		writer_double(w, "nominal_gbps_computed", f->nominal_gbps, 1);
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_table_start(w, "rdma_devices");
	for (size_t i = 0; i < inv->n_rdma_devices; i++) {
		const Ring__RdmaDevice *d = inv->rdma_devices[i];

		for (size_t j = 0; j < d->n_ports; j++) {
			const Ring__RdmaPort *p = d->ports[j];

			writer_obj_start(w, NULL);
			writer_str(w, "device", d->name);
			writer_uint(w, "port", p->port);
			writer_str(w, "state", p->state);
			writer_str(w, "netdev", p->netdev);
			writer_uint(w, "active_mtu", p->active_mtu);
			writer_uint(w, "gids", p->n_gids);
			writer_obj_end(w);
		}
	}
	writer_table_end(w);
	writer_table_start(w, "pcie_links");
	for (size_t i = 0; i < inv->n_pcie_links; i++) {
		const Ring__PcieLink *l = inv->pcie_links[i];

		writer_obj_start_named(w, l->id);
		writer_str(w, "id", l->id);
		writer_str(w, "speed", l->speed);
		writer_uint(w, "width", l->width);
		writer_double(w, "usable_gbps_computed", l->usable_gbps, 1);
		writer_uint(w, "mps_bytes", l->mps_bytes);
		writer_str(w, "mps_source", l->mps_source);
		writer_str(w, "downtrained", l->downtrained);
		writer_str(w, "narrow", l->narrow);
		writer_list_start(w, "functions");
		for (size_t k = 0; k < l->n_interfaces; k++)
			writer_str(w, NULL, l->interfaces[k]);
		writer_list_end(w);
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_table_start(w, "phys_ports");
	for (size_t i = 0; i < inv->n_phys_ports; i++) {
		const Ring__PhysPort *p = inv->phys_ports[i];

		writer_obj_start_named(w, p->id);
		writer_str(w, "id", p->id);
		writer_double(w, "speed_gbps", p->speed_gbps, 1);
		writer_double(w, "aggregate_gbps_computed", p->aggregate_gbps,
			      1);
		writer_list_start(w, "functions");
		for (size_t k = 0; k < p->n_interfaces; k++)
			writer_str(w, NULL, p->interfaces[k]);
		writer_list_end(w);
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_obj_end(w);
}

static int explain_node(const char *sock, int timeout_ms,
			enum writer_format fmt, const Ring__StatusReply *st,
			const Ring__NodeStatus *ns)
{
	const Ring__Topology *t = st->topology;
	Ring__Envelope *iv = explain_inventory(sock, timeout_ms, ns->node);
	struct explain_problems pr = {0};
	int edge_bad = 0;
	struct writer *w;

	if (strcmp(ns->state, "up"))
		explain_problem(&pr, "the node is not up");
	w = writer_new(stdout, fmt);
	writer_str(w, "explain", "node");
	writer_str(w, "node", ns->node);
	writer_obj_start(w, "status");
	writer_str(w, "state", ns->state);
	writer_bool(w, "expected", ns->expected);
	writer_str(w, "mgmt_address", ns->mgmt_address);
	writer_str(w, "agent_version", ns->agent_version);
	render_time(w, "connected_since", ns->connected_since_ms, "");
	render_time(w, "last_seen", ns->last_seen_ms, "");
	if (ns->down_since_ms) {
		render_time(w, "down_since", ns->down_since_ms, "");
		writer_str(w, "down_reason", ns->down_reason);
	}
	writer_uint(w, "mem_total_kib", ns->mem_total_kib);
	/* From the heartbeat, not the inventory. */
	writer_uint(w, "mem_available_kib", ns->mem_available_kib);
	writer_obj_end(w);
	explain_node_inventory(w, iv && iv->inventory_reply
					  ? iv->inventory_reply->inventory
					  : NULL);
	render_time(w, "surveyed", t ? t->surveyed_ms : 0, "");
	writer_table_start(w, "edges");
	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		char name[EXPLAIN_NAME_MAX], ports[320];
		int mine_a = !strcmp(e->a, ns->node);

		if (!mine_a && strcmp(e->b, ns->node))
			continue;
		text_edge_msg_name(name, sizeof(name), e);
		snprintf(ports, sizeof(ports), "%s %s -> %s %s", e->a,
			 e->a_interface, e->b, e->b_interface);
		writer_obj_start_named(w, name);
		writer_str(w, "edge", name);
		writer_str(w, "ports", ports);
		writer_str(w, "live", e->live_state);
		explain_opt(w, "gbps_measured", explain_edge_top(e));
		explain_opt(w, "rdma_write_gbps_measured",
			    explain_worse(e->rdma_write_gbps_a_to_b,
					  e->rdma_write_gbps_b_to_a));
		explain_opt(w, "lat_p50_us_measured",
			    e->n_latency ? e->latency[0]->p50_us : -1);
		render_time(w, "measured", e->measured_ms, "");
		writer_str(w, "error", *e->error ? e->error : e->rdma_error);
		writer_obj_end(w);
		edge_bad |=
			*e->error || *e->rdma_error ||
			(e->live_state && (!strcmp(e->live_state, "down") ||
					   !strcmp(e->live_state, "degraded")));
	}
	writer_table_end(w);
	if (edge_bad)
		explain_problem(&pr, "one of its edges failed or is down");
	if (explain_findings(w, t, explain_finding_about_node, ns->node))
		explain_problem(&pr, "a warning finding names it");
	if (explain_alerts(w, st, explain_alert_names_node, ns->node))
		explain_problem(&pr, "an alert on it fires");
	explain_write_problems(w, &pr);
	writer_finish(w);
	frame_free(iv);
	return pr.n ? EXPLAIN_PROBLEM : EXPLAIN_OK;
}

/* name is "a-b" for two known nodes with no edge between them (a diagonal
 * or a cable the survey did not find): say so, with what to explain
 * instead. 1 if it was, 0 if name is no such pair. */
static int explain_no_cable(const Ring__StatusReply *st, const char *name)
{
	const Ring__Topology *t = st->topology;
	const char *a = NULL, *b = NULL;
	int diagonal = 0, shown = 0;

	for (const char *dash = strchr(name, '-'); dash && !a;
	     dash = strchr(dash + 1, '-'))
		for (size_t i = 0; i < st->n_nodes && !a; i++) {
			const char *n = st->nodes[i]->node;

			if (strlen(n) != (size_t)(dash - name) ||
			    strncmp(n, name, (size_t)(dash - name)))
				continue;
			for (size_t j = 0; j < st->n_nodes; j++)
				if (j != i &&
				    !strcmp(st->nodes[j]->node, dash + 1)) {
					a = n;
					b = st->nodes[j]->node;
				}
		}
	if (!a)
		return 0;
	for (size_t i = 0; t && i < t->n_diagonals; i++) {
		const Ring__DiagonalCheck *d = t->diagonals[i];

		diagonal |= (!strcmp(d->a, a) && !strcmp(d->b, b)) ||
			    (!strcmp(d->a, b) && !strcmp(d->b, a));
	}
	fputs("ringctl: ", stderr);
	writer_fputs_safe(stderr, name);
	fputs(diagonal ? " is a diagonal: " : " is no edge: ", stderr);
	writer_fputs_safe(stderr, a);
	fputs(" and ", stderr);
	writer_fputs_safe(stderr, b);
	fputs(diagonal ? " are not ring neighbours, no cable joins them"
		       : " have no cable the last survey found",
	      stderr);
	fputs("; explain their edges instead (", stderr);
	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		char en[EXPLAIN_NAME_MAX];

		if (strcmp(e->a, a) && strcmp(e->b, a) && strcmp(e->a, b) &&
		    strcmp(e->b, b))
			continue;
		text_edge_msg_name(en, sizeof(en), e);
		fputs(shown++ ? ", " : "", stderr);
		writer_fputs_safe(stderr, en);
	}
	if (!shown)
		fputs("none published", stderr);
	fputs(") or the nodes, or run ringctl check for the ring and the rank "
	      "order\n",
	      stderr);
	return 1;
}

/* "nodes: n1, n2; edges: n1-n2, ...", EXPLAIN_LIST_MAX of each. */
static void explain_unknown(const Ring__StatusReply *st, const char *name)
{
	const Ring__Topology *t = st->topology;

	char shown[65];

	snprintf(shown, sizeof(shown), "%s", name);
	fputs("ringctl: no node or edge '", stderr);
	writer_fputs_safe(stderr, shown);
	fputs("'; nodes:", stderr);
	for (size_t i = 0; i < st->n_nodes && i < EXPLAIN_LIST_MAX; i++) {
		fputs(i ? ", " : " ", stderr);
		writer_fputs_safe(stderr, st->nodes[i]->node);
	}
	if (st->n_nodes > EXPLAIN_LIST_MAX)
		fputs(", ...", stderr);
	if (!st->n_nodes)
		fputs(" none", stderr);
	fputs("; edges:", stderr);
	for (size_t i = 0; t && i < t->n_edges && i < EXPLAIN_LIST_MAX; i++) {
		char e[EXPLAIN_NAME_MAX];

		text_edge_msg_name(e, sizeof(e), t->edges[i]);
		fputs(i ? ", " : " ", stderr);
		writer_fputs_safe(stderr, e);
	}
	if (t && t->n_edges > EXPLAIN_LIST_MAX)
		fputs(", ...", stderr);
	if (!t || !t->n_edges)
		fputs(t ? " none" : " none (no survey yet)", stderr);
	fputc('\n', stderr);
}

int explain_cmd(const char *sock, int timeout_ms, enum writer_format fmt,
		int argc, char **argv)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	const Ring__StatusReply *st;
	const char *name;
	int ret, idx;

	if (argc != 1 || argv[0][0] == '-') {
		fprintf(stderr, "ringctl: explain needs one EDGE (a-b) or NODE"
				"; usage: ringctl --help\n");
		return EXPLAIN_TROUBLE;
	}
	name = argv[0];
	if (!*name || strlen(name) >= EXPLAIN_NAME_MAX) {
		fprintf(stderr,
			"ringctl: explain: a name of 1 to %d characters\n",
			EXPLAIN_NAME_MAX - 1);
		return EXPLAIN_TROUBLE;
	}
	req.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	req.status_request = &sr;
	rep = client_call(sock, timeout_ms, &req,
			  RING__ENVELOPE__BODY_STATUS_REPLY, CLIENT_LOUD);
	if (!rep)
		return EXPLAIN_TROUBLE;
	st = rep->status_reply;
	for (size_t i = 0; i < st->n_nodes; i++)
		if (!strcmp(st->nodes[i]->node, name)) {
			ret = explain_node(sock, timeout_ms, fmt, st,
					   st->nodes[i]);
			frame_free(rep);
			return ret;
		}
	idx = explain_find_edge(st->topology, name);
	if (idx < 0) {
		if (!explain_no_cable(st, name))
			explain_unknown(st, name);
		frame_free(rep);
		return EXPLAIN_TROUBLE;
	}
	ret = explain_edge(sock, timeout_ms, fmt, st, st->topology->edges[idx]);
	frame_free(rep);
	return ret;
}
