/* `ringctl plan`: a model's size against the ring's measured memory. */
#include "plan.h"
#include "rings.h"
#include "error_report.h"
#include "plan_tp.h"
#include "plan_weights.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "frame.h"
#include "render.h"
#include "size.h"

#define PLAN_GB 1e9
#define PLAN_GIB 1073741824.0

/* "--opt VALUE" or "--opt=VALUE": the value, or NULL (not this option). */
static const char *plan_opt(int argc, char **argv, int *i, const char *name,
			    int *missing)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n])
		return NULL;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

static int plan_parse_nodes(struct plan_opts *o, const char *val, char *err,
			    size_t len)
{
	size_t used = 0;

	while (used < sizeof(o->nodes_buf) && o->nodes_buf[used])
		used += strlen(o->nodes_buf + used) + 1;
	if (used + strlen(val) + 1 > sizeof(o->nodes_buf)) {
		snprintf(err, len, "--nodes: too long");
		return -1;
	}
	memcpy(o->nodes_buf + used, val, strlen(val) + 1);
	for (char *p = o->nodes_buf + used, *tok; (tok = strsep(&p, ","));) {
		if (!*tok || strlen(tok) > 63) {
			snprintf(err, len,
				 "--nodes: '%s' is not a list of node names "
				 "(n1,n2,...)",
				 val);
			return -1;
		}
		for (size_t k = 0; k < o->n_nodes; k++)
			if (!strcmp(o->nodes[k], tok)) {
				snprintf(err, len, "--nodes: %s twice", tok);
				return -1;
			}
		if (o->n_nodes >= PLAN_MAX_NODES) {
			snprintf(err, len, "--nodes: at most %d nodes",
				 PLAN_MAX_NODES);
			return -1;
		}
		o->nodes[o->n_nodes++] = tok;
	}
	return 0;
}

int plan_cmd_parse(int argc, char **argv, struct plan_opts *o, char *err,
		   size_t len)
{
	static const char *const names[] = {"--model-bytes", "--params",
					    "--bytes-per-param", "--reserve"};
	const char **texts[] = {&o->model_text, &o->params_text, &o->bpp_text,
				&o->reserve_text};
	char why[400];

	memset(o, 0, sizeof(*o));
	for (int i = 0; i < argc; i++) {
		const char *val = NULL;
		int missing = 0, done = 0;

		for (size_t k = 0; k < 4 && !done; k++) {
			val = plan_opt(argc, argv, &i, names[k], &missing);
			if (missing) {
				snprintf(err, len, "%s needs a value",
					 names[k]);
				return -1;
			}
			if (!val)
				continue;
			if (*texts[k]) {
				snprintf(err, len, "%s given twice", names[k]);
				return -1;
			}
			*texts[k] = val;
			done = 1;
		}
		if (done)
			continue;
		for (size_t k = 0; k < 5 && !done; k++) {
			static const char *const wn[] = {
				"--weights", "--max-bytes", "--layers",
				"--token-ms", "--allreduce-bytes"};
			const char **slots[] = {&o->weights, &o->max_bytes_text,
						&o->layers_text,
						&o->token_ms_text,
						&o->ar_bytes_text};
			const char **slot = slots[k];

			val = plan_opt(argc, argv, &i, wn[k], &missing);
			if (missing) {
				snprintf(err, len, "%s needs a value", wn[k]);
				return -1;
			}
			if (!val)
				continue;
			if (*slot) {
				snprintf(err, len, "%s given twice", wn[k]);
				return -1;
			}
			*slot = val;
			done = 1;
		}
		if (done)
			continue;
		val = plan_opt(argc, argv, &i, "--nodes", &missing);
		if (missing) {
			snprintf(err, len, "--nodes needs a list of nodes");
			return -1;
		}
		if (val) {
			if (plan_parse_nodes(o, val, err, len) < 0)
				return -1;
			continue;
		}
		snprintf(err, len,
			 "plan takes --model-bytes SIZE or --params N "
			 "[--bytes-per-param B], --reserve SIZE and --nodes "
			 "LIST, or --weights PATH [--max-bytes SIZE], or "
			 "--layers L --token-ms T [--allreduce-bytes B], not "
			 "'%s'",
			 argv[i]);
		return -1;
	}
	if (o->layers_text || o->token_ms_text || o->ar_bytes_text)
		return plan_tp_parse(o, err, len);
	if (o->weights || o->max_bytes_text)
		return plan_weights_parse(o, err, len);
	if (o->model_text && o->params_text) {
		snprintf(err, len,
			 "plan takes --model-bytes or --params, not both");
		return -1;
	}
	if (!o->model_text && !o->params_text) {
		snprintf(err, len,
			 "plan needs the model's size: --model-bytes SIZE, or "
			 "--params N with --bytes-per-param B");
		return -1;
	}
	if (o->bpp_text && !o->params_text) {
		snprintf(err, len, "--bytes-per-param goes with --params");
		return -1;
	}
	if (o->model_text) {
		if (plan_parse_size(o->model_text, &o->model_bytes, why,
				    sizeof(why)) < 0) {
			snprintf(err, len, "--model-bytes: %s", why);
			return -1;
		}
		if (!o->model_bytes) {
			snprintf(err, len, "--model-bytes: a model of 0 bytes");
			return -1;
		}
	} else {
		if (plan_parse_params(o->params_text, &o->params, why,
				      sizeof(why)) < 0) {
			snprintf(err, len, "--params: %s", why);
			return -1;
		}
		o->bpp_num = PLAN_BPP_DEFAULT;
		o->bpp_den = 1;
		o->bpp_default = !o->bpp_text;
		if (o->bpp_text &&
		    plan_parse_bpp(o->bpp_text, &o->bpp_num, &o->bpp_den, why,
				   sizeof(why)) < 0) {
			snprintf(err, len, "--bytes-per-param: %s", why);
			return -1;
		}
		if (plan_model_bytes(o->params, o->bpp_num, o->bpp_den,
				     &o->model_bytes) < 0) {
			snprintf(err, len,
				 "--params %s x --bytes-per-param %s is more "
				 "than 2^60 bytes (1 EiB)",
				 o->params_text,
				 o->bpp_text ? o->bpp_text : "2");
			return -1;
		}
	}
	if (o->reserve_text &&
	    plan_parse_size(o->reserve_text, &o->reserve_bytes, why,
			    sizeof(why)) < 0) {
		snprintf(err, len, "--reserve: %s", why);
		return -1;
	}
	return 0;
}

static const Ring__NodeStatus *plan_find(const Ring__StatusReply *r,
					 const char *name)
{
	for (size_t i = 0; i < r->n_nodes; i++)
		if (!strcmp(r->nodes[i]->node, name))
			return r->nodes[i];
	return NULL;
}

int plan_select(const Ring__StatusReply *r, const struct plan_opts *o,
		struct plan_sel *sel, char *err, size_t len)
{
	const Ring__Topology *t = r->topology;

	memset(sel, 0, sizeof(*sel));
	if (o->n_nodes) {
		sel->from = PLAN_FROM_NODES;
		for (size_t i = 0; i < o->n_nodes; i++) {
			sel->name[i] = o->nodes[i];
			sel->st[i] = plan_find(r, o->nodes[i]);
			if (!sel->st[i]) {
				snprintf(err, len,
					 "--nodes: the coordinator lists no "
					 "node '%s'",
					 o->nodes[i]);
				return -1;
			}
		}
		sel->n = o->n_nodes;
		return 0;
	}
	if (t && t->n_ranks) {
		sel->from = PLAN_FROM_RING;
		for (size_t i = 0; i < t->n_ranks && i < PLAN_MAX_NODES; i++) {
			sel->name[sel->n] = t->ranks[i]->node;
			sel->st[sel->n++] = plan_find(r, t->ranks[i]->node);
		}
		return 0;
	}
	sel->from = PLAN_FROM_CONNECTED;
	for (size_t i = 0; i < r->n_nodes && sel->n < PLAN_MAX_NODES; i++)
		if (!strcmp(r->nodes[i]->state, "up")) {
			sel->name[sel->n] = r->nodes[i]->node;
			sel->st[sel->n++] = r->nodes[i];
		}
	if (!sel->n) {
		snprintf(err, len,
			 "no node to plan on: no published ring and no node "
			 "connected");
		return -1;
	}
	return 0;
}

/* A size as bytes (machine formats, or with bytes), GB and GiB. */
static void plan_size(struct writer *w, const char *stem, const char *suffix,
		      uint64_t v, int bytes)
{
	char k[96];

	if (bytes || writer_get_format(w) != WRITER_PLAIN) {
		snprintf(k, sizeof(k), "%s_bytes%s", stem, suffix);
		writer_uint(w, k, v);
	}
	snprintf(k, sizeof(k), "%s_gb%s", stem, suffix);
	writer_double(w, k, (double)v / PLAN_GB, 2);
	snprintf(k, sizeof(k), "%s_gib%s", stem, suffix);
	writer_double(w, k, (double)v / PLAN_GIB, 2);
}

/* A size in the nodes table: plain has room for GiB alone (the verdict
 * gives both units); the machine formats get every unit. */
static void plan_size_cell(struct writer *w, const char *stem,
			   const char *suffix, uint64_t v)
{
	char k[96];

	if (writer_get_format(w) != WRITER_PLAIN) {
		plan_size(w, stem, suffix, v, 0);
		return;
	}
	snprintf(k, sizeof(k), "%s_gib%s", stem, suffix);
	writer_double(w, k, (double)v / PLAN_GIB, 2);
}

static void plan_size_none(struct writer *w, const char *stem,
			   const char *suffix)
{
	char k[96];

	/* Plain: the GiB column alone, as plan_size_cell writes it. */
	if (writer_get_format(w) != WRITER_PLAIN) {
		snprintf(k, sizeof(k), "%s_bytes%s", stem, suffix);
		writer_none(w, k, "");
		snprintf(k, sizeof(k), "%s_gb%s", stem, suffix);
		writer_none(w, k, "");
	}
	snprintf(k, sizeof(k), "%s_gib%s", stem, suffix);
	writer_none(w, k, "");
}

/* Why a node has no current figure, or NULL: it has one. */
static const char *plan_unknown(const Ring__NodeStatus *st)
{
	if (!st)
		return "the coordinator no longer lists it";
	if (strcmp(st->state, "up"))
		return !strcmp(st->state, "never")
			       ? "never connected: no MemAvailable"
			       : "not up: its last MemAvailable is not "
				 "current";
	if (!st->mem_available_kib)
		return "no MemAvailable reported";
	return NULL;
}

/* "12.34 GB (11.49 GiB)" */
static const char *plan_gb_gib(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%.2f GB (%.2f GiB)", (double)v / PLAN_GB,
		 (double)v / PLAN_GIB);
	return buf;
}

static const char *plan_gib_gb(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%.2f GiB (%.2f GB)", (double)v / PLAN_GIB,
		 (double)v / PLAN_GB);
	return buf;
}

static void plan_verdict(struct writer *w, const struct plan_opts *o,
			 const struct plan_sel *sel,
			 const struct plan_figures *f, const char *smallest)
{
	char text[768], a[64], b[64], c[64], d[64], head[128] = "";

	if (f->n < sel->n)
		snprintf(head, sizeof(head),
			 "only %zu of the %zu nodes have a current figure; "
			 "counting those, ",
			 f->n, sel->n);
	if (!f->n)
		snprintf(text, sizeof(text),
			 "cannot check: none of the %zu nodes has a current "
			 "MemAvailable figure",
			 sel->n);
	else if (!f->needed)
		snprintf(text, sizeof(text),
			 "%sdoes not fit: no room on %s after the %s "
			 "reservation; %s short",
			 head, smallest,
			 plan_gb_gib(o->reserve_bytes, a, sizeof(a)),
			 plan_gb_gib(f->short_bytes, b, sizeof(b)));
	else if (f->holds)
		snprintf(text, sizeof(text),
			 "%sfits: %s needs %llu node%s of %s usable (%s, "
			 "the smallest); these %zu hold %s: %s headroom",
			 head, plan_gb_gib(o->model_bytes, a, sizeof(a)),
			 (unsigned long long)f->needed,
			 f->needed == 1 ? "" : "s",
			 plan_gib_gb(f->smallest, b, sizeof(b)), smallest, f->n,
			 plan_gib_gb(f->capacity, c, sizeof(c)),
			 plan_gb_gib(f->headroom_bytes, d, sizeof(d)));
	else
		snprintf(text, sizeof(text),
			 "%sdoes not fit: %s needs %llu nodes of %s usable "
			 "(%s, the smallest); these %zu hold %s: %s short",
			 head, plan_gb_gib(o->model_bytes, a, sizeof(a)),
			 (unsigned long long)f->needed,
			 plan_gib_gb(f->smallest, b, sizeof(b)), smallest, f->n,
			 plan_gib_gb(f->capacity, c, sizeof(c)),
			 plan_gb_gib(f->short_bytes, d, sizeof(d)));
	writer_str(w, "verdict", text);
}

static void plan_render_model(struct writer *w, const struct plan_opts *o)
{
	char text[256];

	plan_size(w, "model", "", o->model_bytes, 1);
	if (!o->params) {
		snprintf(text, sizeof(text), "given: --model-bytes %s",
			 o->model_text);
		writer_str(w, "model_source", text);
		return;
	}
	snprintf(text, sizeof(text),
		 "computed: %llu parameters x %s bytes per parameter, rounded "
		 "up to whole bytes",
		 (unsigned long long)o->params,
		 o->bpp_text ? o->bpp_text : "2");
	writer_str(w, "model_source", text);
	writer_uint(w, "params", o->params);
	writer_double(w, "bytes_per_param",
		      (double)o->bpp_num / (double)o->bpp_den, 6);
	writer_str(w, "bytes_per_param_source",
		   o->bpp_default ? "default: 2 (bf16, nothing for overhead; "
				    "the reference cluster measured 2.03)"
				  : "given");
}

int plan_render(struct writer *w, const Ring__StatusReply *r,
		const struct plan_opts *o, const struct plan_sel *sel)
{
	uint64_t usable[PLAN_MAX_NODES] = {0}, avail[PLAN_MAX_NODES] = {0};
	size_t known_at[PLAN_MAX_NODES], n = 0;
	struct plan_figures f;
	char text[256], t[32];
	int plain = writer_get_format(w) == WRITER_PLAIN;

	/* The figures first: the verdict leads the document. */
	for (size_t i = 0; i < sel->n; i++) {
		const Ring__NodeStatus *st = sel->st[i];

		if (plan_unknown(st))
			continue;
		avail[n] = st->mem_available_kib > PLAN_BYTES_MAX / 1024
				   ? PLAN_BYTES_MAX
				   : st->mem_available_kib * 1024;
		usable[n] = avail[n] > o->reserve_bytes
				    ? avail[n] - o->reserve_bytes
				    : 0;
		known_at[n++] = i;
	}
	plan_compute(o->model_bytes, usable, n, &f);
	plan_verdict(w, o, sel, &f,
		     n ? sel->name[known_at[f.smallest_at]] : "");
	writer_bool(w, "holds", n == sel->n && f.holds);

	plan_render_model(w, o);
	plan_size(w, "reserve_per_node", "", o->reserve_bytes, 1);
	if (o->reserve_text)
		snprintf(text, sizeof(text), "given: --reserve %s",
			 o->reserve_text);
	writer_str(w, "reserve_source",
		   o->reserve_text ? text : "default: none (0 bytes)");
	if (sel->from == PLAN_FROM_RING) {
		render_format_time(r->topology->surveyed_ms, t, sizeof(t));
		snprintf(text, sizeof(text),
			 "the published rank order (survey of %s)", t);
	}
	writer_str(w, "nodes_from",
		   sel->from == PLAN_FROM_NODES	 ? "--nodes"
		   : sel->from == PLAN_FROM_RING ? text
						 : "the connected nodes (no "
						   "published rank order)");

	writer_table_start(w, "nodes");
	for (size_t i = 0, k = 0; i < sel->n; i++) {
		const Ring__NodeStatus *st = sel->st[i];
		const char *why = plan_unknown(st);

		writer_obj_start_named(w, sel->name[i]);
		writer_str(w, "node", sel->name[i]);
		writer_str(w, "state", st ? st->state : "unknown");
		if (why) {
			plan_size_none(w, "available", "_measured");
			if (!plain)
				writer_none(w, "measured_at", "");
			writer_none(w, "age_s", "");
			plan_size_none(w, "usable", "_computed");
			writer_str(w, "note", why);
			writer_obj_end(w);
			continue;
		}
		plan_size_cell(w, "available", "_measured", avail[k]);
		if (st->mem_available_ms) {
			render_format_time(st->mem_available_ms, t, sizeof(t));
			if (!plain) /* plain: its age, within 100 columns */
				writer_str(w, "measured_at", t);
			writer_uint(
				w, "age_s",
				r->now_ms > st->mem_available_ms
					? (r->now_ms - st->mem_available_ms) /
						  1000
					: 0);
		} else {
			/* A coordinator from before mem_available_ms. */
			writer_none(w, "measured_at", "unknown");
			writer_none(w, "age_s", "");
		}
		plan_size_cell(w, "usable", "_computed", usable[k]);
		writer_str(w, "note", k == f.smallest_at ? "the smallest" : "");
		k++;
		writer_obj_end(w);
	}
	writer_table_end(w);

	writer_uint(w, "nodes_planned", sel->n);
	writer_uint(w, "nodes_with_figure", n);
	if (n) {
		writer_str(w, "smallest_node",
			   sel->name[known_at[f.smallest_at]]);
		plan_size(w, "smallest_usable", "_computed", f.smallest, 0);
		plan_size(w, "total_usable", "_computed", f.total, 0);
		plan_size(w, "capacity", "_computed", f.capacity, 0);
		if (f.needed)
			writer_uint(w, "nodes_needed_computed", f.needed);
		else
			writer_none(w, "nodes_needed_computed",
				    "none: no room after the reservation");
		if (f.holds)
			plan_size(w, "headroom", "_computed", f.headroom_bytes,
				  0);
		else
			plan_size(w, "short", "_computed", f.short_bytes, 0);
	}
	writer_str(w, "units", "GB = 10^9 bytes, GiB = 2^30 bytes");
	writer_str(w, "measured",
		   "available_*_measured: each node's MemAvailable "
		   "(/proc/meminfo), read by its agent and received by the "
		   "coordinator with its latest heartbeat, at measured_at; on "
		   "unified-memory nodes (GB10) the GPU's memory too, on "
		   "nodes with discrete GPUs host memory only");
	writer_str(w, "computed",
		   "usable = available - reserve per node; total_usable = "
		   "their sum; nodes taken as alike: capacity = nodes x "
		   "smallest usable, nodes_needed = ceil(model / smallest "
		   "usable), short or headroom = model against capacity");
	if (!n)
		return 2;
	return n == sel->n && f.holds ? 0 : 1;
}

int plan_cmd_run(const char *sock, int timeout_ms, enum writer_format fmt,
		 const struct plan_opts *o)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep = NULL;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	struct plan_sel *sel = NULL;
	struct writer *w;
	char err[512];
	int ret = 2;

	if (o->weights)
		return plan_weights_run(sock, timeout_ms, fmt, o);
	if (o->layers_text)
		return plan_tp_run(sock, timeout_ms, fmt, o);
	req.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	req.status_request = &sr;
	rep = client_call(sock, timeout_ms, &req,
			  RING__ENVELOPE__BODY_STATUS_REPLY, CLIENT_LOUD);
	if (!rep)
		return 2;
	/* A site of several rings: a job runs on one ring, named (or on the
	 * nodes the operator lists). */
	if (!o->n_nodes && rings_several(rep->status_reply->topology)) {
		ret = rings_required(rep->status_reply->topology, "plan", 2);
		goto out;
	}
	sel = calloc(1, sizeof(*sel));
	if (!sel) {
		error_report(2, "system", NULL, NULL, "%s", strerror(errno));
		goto out;
	}
	if (plan_select(rep->status_reply, o, sel, err, sizeof(err)) < 0) {
		error_report(2, "bad_input", NULL, NULL, "plan: %s", err);
		goto out;
	}
	w = writer_new(stdout, fmt);
	if (!w) {
		error_report(2, "system", NULL, NULL, "%s", strerror(errno));
		goto out;
	}
	ret = plan_render(w, rep->status_reply, o, sel);
	writer_finish(w);
out:
	free(sel);
	frame_free(rep);
	return ret;
}
