/* See plan_tp.h. */
#include "plan_tp.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_report.h"
#include "arlimits.h"
#include "client.h"
#include "clock.h"
#include "frame.h"
#include "render.h"
#include "testlimits.h"

/* Latency ladders are short (at most TESTLIMITS_LAT_SIZES_MAX sizes), the
 * all-reduce's at most ARLIMITS_SIZES_MAX; a figure from a larger list is
 * looked for among its first this many. */
#define PLAN_TP_SIZES_MAX 64

int plan_tp_parse(struct plan_opts *o, char *err, size_t len)
{
	char why[400], *end;
	unsigned long l;
	double t;

	if (o->model_text || o->params_text || o->bpp_text || o->reserve_text ||
	    o->weights || o->max_bytes_text) {
		snprintf(err, len,
			 "--layers asks the tensor-parallel tax on its own: no "
			 "--model-bytes, --params, --bytes-per-param, "
			 "--reserve, --weights or --max-bytes with it");
		return -1;
	}
	if (!o->layers_text) {
		snprintf(err, len,
			 "--token-ms and --allreduce-bytes go with --layers L");
		return -1;
	}
	if (!o->token_ms_text) {
		snprintf(err, len,
			 "--layers needs --token-ms T, the measured time per "
			 "token in milliseconds");
		return -1;
	}
	/* Digits only: strtoul would take a sign, spaces and 0x. */
	errno = 0;
	l = strtoul(o->layers_text, &end, 10);
	if (strspn(o->layers_text, "0123456789") != strlen(o->layers_text) ||
	    !*o->layers_text || *end || errno || l < 1 ||
	    l > PLAN_TP_LAYERS_MAX) {
		snprintf(
			err, len,
			"--layers: '%s' is not a whole number of layers from 1 "
			"to %d",
			o->layers_text, PLAN_TP_LAYERS_MAX);
		return -1;
	}
	o->layers = (uint32_t)l;
	/* A plain decimal (17.76, 1e3): strtod alone would take inf, nan
	 * and hexadecimal. */
	errno = 0;
	t = strtod(o->token_ms_text, &end);
	if (strspn(o->token_ms_text, "0123456789.eE+-") !=
		    strlen(o->token_ms_text) ||
	    !*o->token_ms_text || *end || errno || !isfinite(t) || t <= 0 ||
	    t > PLAN_TP_TOKEN_MS_MAX) {
		snprintf(err, len,
			 "--token-ms: '%s' is not a time per token in "
			 "milliseconds, more than 0 and at most %.0f (e.g. "
			 "17.76)",
			 o->token_ms_text, PLAN_TP_TOKEN_MS_MAX);
		return -1;
	}
	o->token_ms = t;
	o->ar_bytes = PLAN_TP_BYTES_DEFAULT;
	if (o->ar_bytes_text) {
		if (plan_parse_size(o->ar_bytes_text, &o->ar_bytes, why,
				    sizeof(why)) < 0) {
			snprintf(err, len, "--allreduce-bytes: %s", why);
			return -1;
		}
		if (!o->ar_bytes || o->ar_bytes > PLAN_TP_BYTES_MAX) {
			snprintf(err, len,
				 "--allreduce-bytes: '%s': more than 0 and at "
				 "most 16 GiB",
				 o->ar_bytes_text);
			return -1;
		}
	}
	return 0;
}

int plan_tp_nearest(const uint64_t *v, size_t n, uint64_t want, double *ratio)
{
	int best = -1;
	double best_r = 0;

	for (size_t i = 0; i < n && i < PLAN_TP_SIZES_MAX; i++) {
		double r;

		if (!v[i] || !want)
			continue;
		r = v[i] > want ? (double)v[i] / (double)want
				: (double)want / (double)v[i];
		/* Within rounding, a tie: the larger size, the more cautious
		 * figure. */
		if (best < 0 || r < best_r * (1 - 1e-12) ||
		    (r <= best_r * (1 + 1e-12) && v[i] > v[best])) {
			best = (int)i;
			best_r = r;
		}
	}
	if (ratio)
		*ratio = best < 0 ? 0 : best_r;
	return best;
}

static int plan_tp_has(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return 1;
	return 0;
}

/* Whether the survey knows node: a rank, a node of its order, or an end
 * of an edge. */
static int plan_tp_known(const Ring__Topology *t, const char *node)
{
	for (size_t i = 0; i < t->n_ranks; i++)
		if (!strcmp(t->ranks[i]->node, node))
			return 1;
	for (size_t i = 0; i < t->n_order; i++)
		if (!strcmp(t->order[i], node))
			return 1;
	for (size_t i = 0; i < t->n_edges; i++)
		if (!strcmp(t->edges[i]->a, node) ||
		    !strcmp(t->edges[i]->b, node))
			return 1;
	return 0;
}

static int plan_tp_select(const Ring__Topology *t, const struct plan_opts *o,
			  struct plan_tp_result *res, char *err, size_t len)
{
	if (o->n_nodes) {
		if (o->n_nodes < 2) {
			snprintf(err, len,
				 "--nodes: at least 2 nodes (the all-reduce "
				 "runs between them)");
			return -1;
		}
		for (size_t i = 0; i < o->n_nodes; i++) {
			if (!plan_tp_known(t, o->nodes[i])) {
				snprintf(err, len,
					 "--nodes: the last survey has no node "
					 "'%s'",
					 o->nodes[i]);
				return -1;
			}
			res->nodes[i] = o->nodes[i];
		}
		res->n_nodes = o->n_nodes;
		res->from = PLAN_FROM_NODES;
		return 0;
	}
	if (t->n_ranks < 2) {
		snprintf(err, len,
			 "the last survey published no rank order (the data "
			 "plane is %s %s): name the nodes with --nodes",
			 *t->kind ? "a" : "of kind", *t->kind ? t->kind : "''");
		return -1;
	}
	for (size_t i = 0; i < t->n_ranks && i < PLAN_MAX_NODES; i++)
		res->nodes[res->n_nodes++] = t->ranks[i]->node;
	res->from = PLAN_FROM_RING;
	return 0;
}

/* The all-reduce over as many ranks, at the size nearest B. */
static void plan_tp_add_allreduce(const Ring__AllreduceLastReply *reports,
				  uint64_t want, struct plan_tp_result *res)
{
	for (size_t i = 0; reports && i < reports->n_reports; i++) {
		const Ring__AllreduceReport *r = reports->reports[i];
		uint64_t v[PLAN_TP_SIZES_MAX];
		size_t n = 0;
		struct plan_tp_figure *f;
		double ratio;
		int k;

		if (r->n_order != res->n_nodes || *r->error ||
		    res->n_fig >= PLAN_TP_MAX_FIGURES)
			continue;
		for (; n < r->n_sizes && n < PLAN_TP_SIZES_MAX; n++)
			v[n] = r->sizes[n]->time_us > 0 ? r->sizes[n]->size : 0;
		k = plan_tp_nearest(v, n, want, &ratio);
		if (k < 0)
			continue;
		f = &res->fig[res->n_fig++];
		f->kind = PLAN_TP_ALLREDUCE;
		f->ar = r;
		f->size = v[k];
		f->ratio = ratio;
		f->us = r->sizes[k]->time_us;
		f->measured_ms = r->started_ms;
		return; /* the coordinator keeps one per number of ranks */
	}
}

/* A latency ladder's figure nearest B: 0, or -1 when it has none. */
static int plan_tp_ladder(Ring__LatResult *const *lat, size_t n_lat,
			  uint64_t want, struct plan_tp_figure *f)
{
	uint64_t v[PLAN_TP_SIZES_MAX];
	size_t n = 0;
	int k;

	for (; n < n_lat && n < PLAN_TP_SIZES_MAX; n++)
		v[n] = lat[n]->p50_us > 0 && isfinite(lat[n]->p50_us)
			       ? lat[n]->size
			       : 0;
	k = plan_tp_nearest(v, n, want, &f->ratio);
	if (k < 0)
		return -1;
	f->size = v[k];
	f->us = lat[k]->p50_us;
	return 0;
}

/* Each edge between two of the ranks: its latency at the size nearest B,
 * RDMA WRITE where the survey measured it (NCCL over RoCE rides RDMA),
 * else TCP. A twin is the same cable as its primary: left out. */
static void plan_tp_add_edges(const Ring__Topology *t, uint64_t want,
			      struct plan_tp_result *res)
{
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		struct plan_tp_figure f = {.kind = PLAN_TP_LATENCY, .edge = e};

		if (e->twin || res->n_fig >= PLAN_TP_MAX_FIGURES ||
		    !plan_tp_has(res->nodes, res->n_nodes, e->a) ||
		    !plan_tp_has(res->nodes, res->n_nodes, e->b))
			continue;
		f.rdma = plan_tp_ladder(e->rdma_write_lat, e->n_rdma_write_lat,
					want, &f) == 0;
		if (!f.rdma &&
		    plan_tp_ladder(e->latency, e->n_latency, want, &f) < 0)
			continue;
		f.measured_ms = e->measured_ms;
		res->fig[res->n_fig++] = f;
	}
}

/* The ring waits on its slowest step: a step between consecutive ranks
 * (and the closing one, past two ranks) without a latency figure could
 * be it. */
static void plan_tp_missing(struct plan_tp_result *res)
{
	size_t steps = res->n_nodes > 2 ? res->n_nodes : 1, used = 0;

	for (size_t i = 0; i < steps; i++) {
		const char *a = res->nodes[i];
		const char *b = res->nodes[(i + 1) % res->n_nodes];
		int found = 0;

		for (size_t k = 0; k < res->n_fig && !found; k++) {
			const Ring__Edge *e = res->fig[k].edge;

			found = res->fig[k].kind == PLAN_TP_LATENCY &&
				((!strcmp(e->a, a) && !strcmp(e->b, b)) ||
				 (!strcmp(e->a, b) && !strcmp(e->b, a)));
		}
		if (found)
			continue;
		res->n_missing++;
		if (used < sizeof(res->missing)) {
			int k = snprintf(res->missing + used,
					 sizeof(res->missing) - used, "%s%s-%s",
					 used ? ", " : "", a, b);

			used += k > 0 ? (size_t)k : 0;
		}
	}
}

int plan_tp_compute(const Ring__Topology *t,
		    const Ring__AllreduceLastReply *reports,
		    const struct plan_opts *o, struct plan_tp_result *res,
		    char *err, size_t len)
{
	int ar = -1, slow = -1;

	memset(res, 0, sizeof(*res));
	res->used = -1;
	if (plan_tp_select(t, o, res, err, len) < 0)
		return -1;
	plan_tp_add_allreduce(reports, o->ar_bytes, res);
	plan_tp_add_edges(t, o->ar_bytes, res);
	for (size_t i = 0; i < res->n_fig; i++) {
		if (res->fig[i].kind == PLAN_TP_ALLREDUCE)
			ar = (int)i;
		else if (slow < 0 || res->fig[i].us > res->fig[slow].us)
			slow = (int)i;
	}
	if (ar >= 0 && res->fig[ar].ratio <= PLAN_TP_NEAR_RATIO)
		res->used = ar;
	else if (slow >= 0)
		res->used = slow;
	else
		res->used = ar;
	for (size_t i = 0; i < res->n_fig; i++) {
		struct plan_tp_figure *f = &res->fig[i];

		if ((int)i == res->used)
			f->not_used = NULL;
		else if (f->kind == PLAN_TP_ALLREDUCE)
			f->not_used = "measured only at sizes more than 2x "
				      "away from the layer's all-reduce";
		else if (res->fig[res->used].kind == PLAN_TP_ALLREDUCE)
			f->not_used = "an all-reduce over as many ranks was "
				      "measured near this size";
		else
			f->not_used = "a faster edge: the ring waits on its "
				      "slowest";
	}
	if (res->used >= 0 && res->fig[res->used].kind == PLAN_TP_LATENCY)
		plan_tp_missing(res);
	if (res->used >= 0) {
		res->per_token_ms =
			(double)o->layers * res->fig[res->used].us / 1000.0;
		res->share_pct = res->per_token_ms / o->token_ms * 100.0;
	}
	return 0;
}

static void plan_tp_time(struct writer *w, const char *key, uint64_t ms,
			 const char *age_key, uint64_t now_ms)
{
	render_time(w, key, ms, "unknown");
	if (!age_key)
		return;
	if (!ms)
		writer_none(w, age_key, "");
	else
		writer_uint(w, age_key, now_ms > ms ? (now_ms - ms) / 1000 : 0);
}
/* "n1,n2,n4,n3" */
static const char *plan_tp_join(char *const *v, size_t n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		int k = snprintf(buf + used, len - used, "%s%s", i ? "," : "",
				 v[i]);

		used += k > 0 ? (size_t)k : 0;
	}
	return buf;
}

/* What the figure is, for people: one line. */
static void plan_tp_describe(const struct plan_tp_figure *f, char *buf,
			     size_t len)
{
	char order[1024];

	if (f->kind == PLAN_TP_ALLREDUCE)
		snprintf(buf, len,
			 "ring all-reduce of %llu bytes over %zu ranks (%s), "
			 "%s, the slowest rank's mean (ringctl test allreduce)",
			 (unsigned long long)f->size, f->ar->n_order,
			 plan_tp_join(f->ar->order, f->ar->n_order, order,
				      sizeof(order)),
			 *f->ar->method ? f->ar->method : "tcp");
	else
		snprintf(buf, len,
			 "%s half round trip of %llu bytes on %s-%s, median "
			 "(p50), the survey's latency step",
			 f->rdma ? "RDMA WRITE" : "TCP",
			 (unsigned long long)f->size, f->edge->a, f->edge->b);
}

static void plan_tp_verdict(struct writer *w, const struct plan_opts *o,
			    const struct plan_tp_result *res)
{
	const struct plan_tp_figure *f;
	char text[1024], what[128];

	if (res->used < 0) {
		writer_str(w, "verdict",
			   "no measured figure: neither an all-reduce over "
			   "as many ranks nor a latency figure on an edge "
			   "between them; run ringctl test allreduce or a "
			   "survey (root)");
		return;
	}
	f = &res->fig[res->used];
	if (f->kind == PLAN_TP_ALLREDUCE)
		snprintf(what, sizeof(what),
			 "a ring all-reduce of %llu bytes over %zu ranks",
			 (unsigned long long)f->size, f->ar->n_order);
	else
		snprintf(what, sizeof(what),
			 "%s-%s's %s latency at %llu bytes, a lower bound",
			 f->edge->a, f->edge->b, f->rdma ? "RDMA WRITE" : "TCP",
			 (unsigned long long)f->size);
	snprintf(text, sizeof(text),
		 "%u layers x %.1f us = %.3f ms of all-reduce per token, "
		 "%.1f%% of %g ms (computed; the %.1f us per layer is %s, "
		 "measured)",
		 o->layers, f->us, res->per_token_ms, res->share_pct,
		 o->token_ms, f->us, what);
	writer_str(w, "verdict", text);
}

/* Whether the run's ranks are the nodes planned on (in any order). */
static int plan_tp_same_nodes(const Ring__AllreduceReport *r,
			      const struct plan_tp_result *res)
{
	if (r->n_order != res->n_nodes)
		return 0;
	for (size_t i = 0; i < r->n_order; i++)
		if (!plan_tp_has(res->nodes, res->n_nodes, r->order[i]))
			return 0;
	return 1;
}

/* Why the figure may mislead, or "". */
static const char *plan_tp_note(const struct plan_opts *o,
				const struct plan_tp_result *res, char *buf,
				size_t len)
{
	const struct plan_tp_figure *f;
	uint64_t sz = o->ar_bytes;
	char s[32];
	size_t used = 0;
	int k;

	buf[0] = '\0';
	if (res->used < 0)
		return buf;
	f = &res->fig[res->used];
	/* What test allreduce takes: a multiple of 4 bytes from 1 KiB. */
	sz = (sz + 3) / 4 * 4;
	sz = sz < ARLIMITS_SIZE_MIN ? ARLIMITS_SIZE_MIN : sz;
	testlimits_format_size(sz, s, sizeof(s));
	if (f->kind == PLAN_TP_LATENCY) {
		char nodes[PLAN_MAX_NODES * 64 + 1] = "";

		if (res->from == PLAN_FROM_NODES)
			plan_tp_join((char *const *)res->nodes, res->n_nodes,
				     nodes, sizeof(nodes));
		k = snprintf(buf, len,
			     "a point-to-point latency is a lower bound: a "
			     "ring all-reduce over %zu ranks takes %zu steps; "
			     "measure one with ringctl test allreduce%s%s "
			     "--sizes %s (root) and plan uses it",
			     res->n_nodes, 2 * (res->n_nodes - 1),
			     *nodes ? " --nodes " : "", nodes, s);
		used = k > 0 && (size_t)k < len ? (size_t)k : len;
	}
	if (f->kind == PLAN_TP_ALLREDUCE && !plan_tp_same_nodes(f->ar, res)) {
		char order[1024];

		k = snprintf(buf, len,
			     "the all-reduce ran over %s: as many ranks, not "
			     "the same nodes",
			     plan_tp_join(f->ar->order, f->ar->n_order, order,
					  sizeof(order)));
		used = k > 0 && (size_t)k < len ? (size_t)k : len;
	}
	if (f->ratio > PLAN_TP_NEAR_RATIO && used < len)
		snprintf(buf + used, len - used,
			 "%sthe nearest measured size, %llu bytes, is %.1fx "
			 "the layer's %llu bytes",
			 used ? "; " : "", (unsigned long long)f->size,
			 f->ratio, (unsigned long long)o->ar_bytes);
	if (res->n_missing && strlen(buf) + 2 < len)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 "%sno latency figure for %s (no measured edge joins "
			 "them): the ring's slowest step may be missing",
			 *buf ? "; " : "", res->missing);
	if (res->share_pct >= 100 && strlen(buf) + 2 < len)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 "%scommunication alone takes longer than the token",
			 *buf ? "; " : "");
	return buf;
}

/* v >= 0 to 1/scale (ringctl does without libm). */
static double plan_tp_round(double v, double scale)
{
	return v * scale < 9e15 ? (double)(long long)(v * scale + 0.5) / scale
				: v;
}

int plan_tp_render(struct writer *w, const Ring__Topology *t,
		   const struct plan_opts *o, const struct plan_tp_result *res,
		   uint64_t now_ms)
{
	char text[1024], nodes[PLAN_MAX_NODES * 64 + 1], t_s[64];

	plan_tp_verdict(w, o, res);
	writer_uint(w, "layers", o->layers);
	writer_double(w, "token_ms", o->token_ms, 3);
	writer_uint(w, "allreduce_bytes", o->ar_bytes);
	if (o->ar_bytes_text)
		snprintf(text, sizeof(text), "given: --allreduce-bytes %s",
			 o->ar_bytes_text);
	writer_str(w, "allreduce_bytes_source",
		   o->ar_bytes_text ? text
				    : "default: 10240 bytes (10 KiB), the "
				      "reference cluster's one layer's "
				      "tensor-parallel all-reduce");
	writer_uint(w, "ranks", res->n_nodes);
	writer_str(w, "nodes",
		   plan_tp_join((char *const *)res->nodes, res->n_nodes, nodes,
				sizeof(nodes)));
	if (res->from == PLAN_FROM_RING) {
		render_format_time(t->surveyed_ms, t_s, sizeof(t_s));
		snprintf(text, sizeof(text),
			 "the published rank order (survey of %s)", t_s);
	}
	writer_str(w, "nodes_from",
		   res->from == PLAN_FROM_NODES ? "--nodes" : text);
	if (res->used >= 0) {
		const struct plan_tp_figure *f = &res->fig[res->used];

		writer_str(w, "source",
			   f->kind == PLAN_TP_ALLREDUCE ? "allreduce"
							: "edge latency");
		plan_tp_describe(f, text, sizeof(text));
		writer_str(w, "figure", text);
		writer_uint(w, "figure_bytes", f->size);
		writer_double(w, "per_layer_us_measured", f->us, 1);
		plan_tp_time(w, "measured_at", f->measured_ms, "age_s", now_ms);
		/* JSON too at the precision printed: 8.2, not 8.198198... */
		writer_double(w, "per_token_ms_computed",
			      plan_tp_round(res->per_token_ms, 1000), 3);
		writer_double(w, "share_pct_computed",
			      plan_tp_round(res->share_pct, 10), 1);
	} else {
		writer_none(w, "source", "");
		writer_none(w, "figure", "");
		writer_none(w, "figure_bytes", "");
		writer_none(w, "per_layer_us_measured", "");
		writer_none(w, "measured_at", "");
		writer_none(w, "age_s", "");
		writer_none(w, "per_token_ms_computed", "");
		writer_none(w, "share_pct_computed", "");
	}
	writer_str(w, "note", plan_tp_note(o, res, text, sizeof(text)));

	writer_table_start(w, "figures");
	for (size_t i = 0; i < res->n_fig; i++) {
		const struct plan_tp_figure *f = &res->fig[i];
		char name[160], kind[64];

		if (f->kind == PLAN_TP_ALLREDUCE)
			snprintf(name, sizeof(name), "allreduce");
		else
			snprintf(name, sizeof(name), "%s-%s", f->edge->a,
				 f->edge->b);
		writer_obj_start_named(w, name);
		writer_str(w, "figure", name);
		if (f->kind == PLAN_TP_ALLREDUCE)
			snprintf(kind, sizeof(kind), "allreduce %s",
				 *f->ar->method ? f->ar->method : "tcp");
		writer_str(w, "kind",
			   f->kind == PLAN_TP_ALLREDUCE ? kind
			   : f->rdma			? "rdma_write_lat p50"
							: "tcp_lat p50");
		writer_uint(w, "bytes", f->size);
		writer_double(w, "us_measured", f->us, 1);
		/* Plain: the figure and its note within 100 columns; when
		 * is the machine formats' (and the chosen figure's, above). */
		if (writer_get_format(w) != WRITER_PLAIN)
			plan_tp_time(w, "measured_at", f->measured_ms, NULL,
				     now_ms);
		writer_bool(w, "used", (int)i == res->used);
		writer_str(w, "note", f->not_used ? f->not_used : "");
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_str(w, "measured",
		   "per_layer_us_measured and the figures' us_measured: the "
		   "coordinator's last ring all-reduce over as many ranks "
		   "(time per run, the slowest rank's mean; kept across "
		   "restarts), or the last survey's latency step on each edge "
		   "between the ranks (half round trip, median), at "
		   "measured_at, at the measured size nearest the layer's "
		   "all-reduce (by ratio)");
	writer_str(w, "computed",
		   "per_token_ms = layers x per_layer_us / 1000 (one "
		   "all-reduce per layer, as docs/REFERENCE.md counts); "
		   "share_pct = per_token_ms / token_ms x 100; the all-reduce "
		   "is used when measured within 2x of the size, else the "
		   "slowest edge's latency");
	return res->used >= 0 && !res->n_missing ? 0 : 1;
}

int plan_tp_run(const char *sock, int timeout_ms, enum writer_format fmt,
		const struct plan_opts *o)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *topo = NULL, *ar = NULL;
	Ring__RanksRequest rr = RING__RANKS_REQUEST__INIT;
	Ring__AllreduceLastRequest lr = RING__ALLREDUCE_LAST_REQUEST__INIT;
	const Ring__AllreduceLastReply *reports = NULL;
	struct plan_tp_result *res = NULL;
	struct writer *w;
	char err[512];
	int ret = 2;

	req.body_case = RING__ENVELOPE__BODY_RANKS_REQUEST;
	req.ranks_request = &rr;
	topo = client_call(sock, timeout_ms, &req,
			   RING__ENVELOPE__BODY_RANKS_REPLY, CLIENT_LOUD);
	if (!topo)
		return 2;
	if (!topo->ranks_reply->topology) {
		error_report(2, "reply", NULL, NULL,
			     "the coordinator sent no topology");
		goto out;
	}
	req = (Ring__Envelope)RING__ENVELOPE__INIT;
	req.body_case = RING__ENVELOPE__BODY_ALLREDUCE_LAST_REQUEST;
	req.allreduce_last_request = &lr;
	if (client_request(sock, timeout_ms, &req, &ar, err, sizeof(err)) < 0) {
		error_report(2, "unreachable", sock,
			     "-s SOCKET or RINGCTL_SOCKET", "%s", err);
		goto out;
	}
	if (ar->body_case == RING__ENVELOPE__BODY_ALLREDUCE_LAST_REPLY) {
		reports = ar->allreduce_last_reply;
	} else if (ar->body_case == RING__ENVELOPE__BODY_ERROR &&
		   ar->error->code == RING__ERROR_CODE__ERROR_UNSUPPORTED) {
		/* An older coordinator keeps none: the edges' figures. */
		error_report_notice("no_allreduce_results",
				    "plan: the coordinator keeps no all-reduce "
				    "results (an older version); using the "
				    "survey's latency");
	} else if (ar->body_case == RING__ENVELOPE__BODY_ERROR) {
		error_report(2, "refused", NULL, NULL, "coordinator: %s",
			     ar->error->text);
		goto out;
	} else {
		error_report(2, "reply", NULL, NULL, "unexpected reply (%s)",
			     frame_type_name((uint16_t)ar->body_case));
		goto out;
	}
	res = calloc(1, sizeof(*res));
	if (!res) {
		error_report(2, "system", NULL, NULL, "%s", strerror(errno));
		goto out;
	}
	if (plan_tp_compute(topo->ranks_reply->topology, reports, o, res, err,
			    sizeof(err)) < 0) {
		error_report(2, "bad_input", NULL, NULL, "plan: %s", err);
		goto out;
	}
	w = writer_new(stdout, fmt);
	if (!w) {
		error_report(2, "system", NULL, NULL, "%s", strerror(errno));
		goto out;
	}
	ret = plan_tp_render(w, topo->ranks_reply->topology, o, res,
			     clock_now_ms());
	writer_finish(w);
out:
	free(res);
	frame_free(ar);
	frame_free(topo);
	return ret;
}
