/* ringctl test allreduce (see allreduce_cli.h). */
#include "allreduce_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reason.h"
#include "render.h"
#include "size.h"
#include "testlimits.h"

/* "n1,n2,n3": names into c->names (the text into c->buf, bounded). */
static int arcli_names(const char *val, struct allreduce_cli *c, char ***out,
		       size_t *n_out, char *err, size_t len)
{
	size_t used = strlen(c->buf) + 1, n = 0;
	char *s, *save = NULL, *tok;

	if (!*val || *val == ',' || val[strlen(val) - 1] == ',' ||
	    strstr(val, ",,") || strlen(val) >= sizeof(c->buf) - used)
		return reason_fail(err, len, "bad node list '%.64s'", val);
	s = c->buf + used;
	memcpy(s, val, strlen(val) + 1);
	*out = c->names;
	for (tok = strtok_r(s, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == ARLIMITS_RANKS_MAX || strlen(tok) > 63)
			return reason_fail(err, len,
					   "at most %d nodes of 63 characters",
					   ARLIMITS_RANKS_MAX);
		c->names[n++] = tok;
	}
	if (n < 2)
		return reason_fail(err, len, "need at least 2 nodes");
	*n_out = n;
	return 0;
}

/* "1M..1G" (doubling) or "64K,1M,4M", each size once, in the one size
 * grammar (size.h). */
static int arcli_sizes(const char *val, struct allreduce_cli *c, char *err,
		       size_t len)
{
	char tmp[256], why[200], *dots;
	uint64_t lo, hi;
	size_t n;

	if (strlen(val) >= sizeof(tmp))
		return reason_fail(err, len, "--sizes: '%.64s...' is too long",
				   val);
	snprintf(tmp, sizeof(tmp), "%s", val);
	dots = strstr(tmp, "..");
	if (dots) {
		*dots = '\0';
		if (size_parse(tmp, ARLIMITS_SIZE_MIN, ARLIMITS_SIZE_MAX, &lo,
			       why, sizeof(why)) < 0 ||
		    size_parse(dots + 2, ARLIMITS_SIZE_MIN, ARLIMITS_SIZE_MAX,
			       &hi, why, sizeof(why)) < 0)
			return reason_fail(err, len, "--sizes LO..HI: %s", why);
		if (lo > hi)
			return reason_fail(err, len,
					   "--sizes %.64s: LO is more than HI",
					   val);
		c->req.n_sizes =
			arlimits_ladder(lo, hi, c->sizes, ARLIMITS_SIZES_MAX);
		if (c->sizes[c->req.n_sizes - 1] * 2 <= hi)
			return reason_fail(err, len,
					   "--sizes %.64s: more than %d sizes",
					   val, ARLIMITS_SIZES_MAX);
		return 0;
	}
	if (size_parse_list(val, ARLIMITS_SIZE_MIN, ARLIMITS_SIZE_MAX, c->sizes,
			    ARLIMITS_SIZES_MAX, &n, why, sizeof(why)) < 0)
		return reason_fail(err, len, "--sizes: %s", why);
	c->req.n_sizes = n;
	return 0;
}

static int arcli_uint(const char *s, unsigned lo, unsigned hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int allreduce_cli_parse(int argc, char **argv, struct allreduce_cli *c,
			char *err, size_t len)
{
	memset(c, 0, sizeof(*c));
	ring__allreduce_request__init(&c->req);
	c->req.sizes = c->sizes;
	c->req.n_sizes =
		arlimits_ladder(ARLIMITS_LADDER_MIN, ARLIMITS_LADDER_MAX,
				c->sizes, ARLIMITS_SIZES_MAX);
	c->req.iterations = ARLIMITS_ITERATIONS_DEFAULT;
	c->req.warmup = ARLIMITS_WARMUP_DEFAULT;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strncmp(o, "--", 2))
			return reason_fail(err, len,
					   "test allreduce: '%.32s' is an "
					   "unexpected argument: it takes "
					   "--options only",
					   o);
		if (!v)
			return reason_fail(err, len,
					   "test allreduce: %.32s needs a "
					   "value",
					   o);
		i++;
		if (!strcmp(o, "--nodes") || !strcmp(o, "--order")) {
			int nodes = !strcmp(o, "--nodes");

			if (c->req.n_nodes || c->req.n_order)
				return reason_fail(err, len,
						   "--nodes or --order, once");
			if (arcli_names(
				    v, c, nodes ? &c->req.nodes : &c->req.order,
				    nodes ? &c->req.n_nodes : &c->req.n_order,
				    err, len) < 0)
				return -1;
		} else if (!strcmp(o, "--sizes")) {
			if (arcli_sizes(v, c, err, len) < 0)
				return -1;
		} else if (!strcmp(o, "--iterations")) {
			if (arcli_uint(v, 1, ARLIMITS_ITERATIONS_MAX,
				       &c->req.iterations) < 0)
				return reason_fail(err, len,
						   "--iterations: 1-%d",
						   ARLIMITS_ITERATIONS_MAX);
		} else if (!strcmp(o, "--warmup")) {
			if (arcli_uint(v, 0, ARLIMITS_WARMUP_MAX,
				       &c->req.warmup) < 0)
				return reason_fail(err, len, "--warmup: 0-%d",
						   ARLIMITS_WARMUP_MAX);
		} else if (!strcmp(o, "--transport")) {
			if (strcmp(v, "auto") && strcmp(v, "tcp") &&
			    strcmp(v, "rdma"))
				return reason_fail(err, len,
						   "--transport: auto, tcp or "
						   "rdma");
			c->req.transport = (char *)v;
		} else if (!strcmp(o, "--step-timeout")) {
			if (arcli_uint(v, ARLIMITS_STEP_MIN_MS,
				       ARLIMITS_STEP_MAX_MS,
				       &c->req.step_timeout_ms) < 0)
				return reason_fail(err, len,
						   "--step-timeout: %d-%d ms",
						   ARLIMITS_STEP_MIN_MS,
						   ARLIMITS_STEP_MAX_MS);
		} else {
			return reason_fail(err, len,
					   "test allreduce: unknown option "
					   "'%.32s'",
					   o);
		}
	}
	/* The agents' rules, for as many ranks as known (2 at least). */
	return arlimits_check(c->sizes, c->req.n_sizes,
			      c->req.n_order   ? (unsigned)c->req.n_order
			      : c->req.n_nodes ? (unsigned)c->req.n_nodes
					       : 2,
			      c->req.iterations, c->req.warmup,
			      c->req.step_timeout_ms, err, len);
}

unsigned allreduce_cli_wait_ms(const struct allreduce_cli *c)
{
	/* The coordinator's job deadline for the largest ring, and more. */
	return arlimits_job_deadline_ms(c->sizes, c->req.n_sizes,
					ARLIMITS_RANKS_MAX, c->req.iterations,
					c->req.warmup, c->req.step_timeout_ms) +
	       20000;
}

void allreduce_cli_render(struct writer *w, const Ring__AllreduceReport *r)
{
	unsigned n = (unsigned)r->n_order;
	char t[64], sz[16];
	int all_ok = r->n_sizes > 0;

	writer_str(w, "test", "allreduce");
	writer_str(w, "method", *r->method ? r->method : "tcp");
	writer_list_start(w, "order");
	for (size_t i = 0; i < r->n_order; i++)
		writer_str(w, NULL, r->order[i]);
	writer_list_end(w);
	/* Which steps moved their chunks how: "a->b rdma". */
	if (r->n_step_methods == r->n_order && n) {
		writer_list_start(w, "steps");
		for (size_t i = 0; i < r->n_order; i++) {
			char st[160];

			snprintf(st, sizeof(st), "%.64s->%.64s %.8s",
				 r->order[i], r->order[(i + 1) % n],
				 r->step_methods[i]);
			writer_str(w, NULL, st);
		}
		writer_list_end(w);
	}
	writer_str(w, "order_source", r->order_source);
	writer_uint(w, "ranks", n);
	writer_uint(w, "iterations", r->iterations);
	writer_uint(w, "warmup", r->warmup);
	for (size_t i = 0; i < r->n_sizes; i++)
		all_ok &= r->sizes[i]->verified;
	writer_str(w, "result", *r->error ? "failed" : "ok");
	if (*r->error)
		writer_str(w, "error", r->error);
	/* Each failed rank's own words: a neighbour's names the step. */
	if (r->n_notes) {
		writer_list_start(w, "rank_errors");
		for (size_t i = 0; i < r->n_notes; i++)
			writer_str(w, NULL, r->notes[i]);
		writer_list_end(w);
	}
	if (r->started_ms) {
		render_format_time(r->started_ms, t, sizeof(t));
		writer_str(w, "measured_at", t);
	}
	writer_bool(w, "verified", all_ok);
	/* The definitions the computed figures follow. */
	writer_str(w, "computed",
		   "algbw = size / time_us_measured (the slowest rank's mean); "
		   "busbw = algbw x 2(n-1)/n (nccl-tests); Gbit/s");
	/* Against the coordinator's last run over another ring size. */
	if (*r->comparison)
		writer_str(w, "comparison_computed", r->comparison);
	writer_table_start(w, "sizes");
	for (size_t i = 0; i < r->n_sizes; i++) {
		const Ring__AllreduceSize *s = r->sizes[i];

		testlimits_format_size(s->size, sz, sizeof(sz));
		writer_obj_start_named(w, sz);
		writer_str(w, "size", sz);
		writer_uint(w, "bytes", s->size);
		writer_double(w, "time_us_measured", s->time_us, 1);
		writer_double(w, "algbw_gbps_computed", s->algbw_gbps, 3);
		writer_double(w, "busbw_gbps_computed", s->busbw_gbps, 3);
		writer_bool(w, "verified", s->verified);
		writer_obj_end(w);
	}
	writer_table_end(w);
}
