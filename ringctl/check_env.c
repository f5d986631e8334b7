/* ringctl check nccl-env: lint an NCCL environment against the measured
 * cluster (docs/NCCL.md, "Checking an environment"). The input is bounded:
 * CHECK_ENV_MAX_BYTES (1 MiB) and CHECK_ENV_MAX_LINES (4096 lines), a name
 * CHECK_ENV_NAME_MAX and a value CHECK_ENV_VALUE_MAX bytes; more is an
 * error, never a cut. */
#include "check_env.h"
#include "rings.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error_report.h"
#include "client.h"
#include "ranks.h"
#include "render.h"

#define CHECK_ENV_EXIT_PROBLEMS 1
#define CHECK_ENV_EXIT_TROUBLE 2

/* -------------------------------------------------------------- output */

static void check_env_render_sat(struct writer *w,
				 const struct ladder_advice *sat)
{
	char when[32];

	writer_obj_start(w, "saturation");
	if (!sat->streams) {
		writer_none(w, "streams_computed", "none");
		writer_str(w, "basis",
			   "no ladder of two or more counts in the survey");
		writer_obj_end(w);
		return;
	}
	render_format_time(sat->measured_ms, when, sizeof(when));
	writer_uint(w, "streams_computed", sat->streams);
	writer_double(w, "pct_of_top_computed", sat->pct_of_top, 0);
	writer_uint(w, "top_streams", sat->top);
	writer_str(w, "ladder", sat->ladder);
	writer_str(w, "method", sat->method);
	writer_uint(w, "edges", sat->edges);
	writer_str(w, "ladder_measured_at", when);
	writer_obj_end(w);
}

void check_env_render(struct writer *w, FILE *out, enum writer_format fmt,
		      const char *source, const Ring__Topology *t,
		      const struct check_env_result *res)
{
	char when[32], refused[512];
	int plain = fmt == WRITER_PLAIN;

	render_format_time(t->surveyed_ms, when, sizeof(when));
	writer_str(w, "verdict", res->counted ? "problems" : "ok");
	writer_str(w, "source", source);
	writer_str(w, "kind", t->kind);
	writer_str(w, "surveyed", when);
	writer_uint(w, "problems", res->problems);
	writer_uint(w, "warnings", res->counted - res->problems);
	check_env_render_sat(w, &res->sat);
	writer_list_start(w, "issues");
	for (size_t i = 0; i < res->n; i++) {
		const struct check_env_issue *is = &res->issues[i];

		writer_obj_start(w, NULL);
		writer_str(w, "level", is->level);
		writer_str(w, "variable", is->variable);
		writer_str(w, "value", is->value);
		if (is->line)
			writer_uint(w, "line", is->line);
		if (*is->node)
			writer_str(w, "node", is->node);
		writer_str(w, "why", is->why);
		if (*is->fix)
			writer_str(w, "fix", is->fix);
		writer_obj_end(w);
	}
	writer_list_end(w);
	if (res->dropped)
		writer_uint(w, "issues_left_out", res->dropped);
	if (t->n_ranks && ranks_check(t, "env", refused, sizeof(refused)) < 0)
		/* ranks -f env refuses too (exit 1 there): say why here. */
		writer_str(w, "corrected_env_refused", refused);
	else
		refused[0] = '\0';
	if (!plain && !refused[0]) {
		/* The corrected environment per node, each as env prints
		 * it. */
		writer_list_start(w, "corrected_env");
		for (size_t i = 0; i < t->n_ranks; i++) {
			char *buf = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&buf, &len);

			if (!m)
				break;
			if (ranks_env_node(m, t, i) < 0) {
				fclose(m);
				free(buf);
				break;
			}
			fclose(m);
			writer_obj_start_named(w, t->ranks[i]->node);
			writer_str(w, "node", t->ranks[i]->node);
			writer_uint(w, "rank", t->ranks[i]->rank);
			writer_str(w, "env", buf);
			writer_obj_end(w);
			free(buf);
		}
		writer_list_end(w);
	}
	writer_finish(w);
	if (plain && t->n_ranks && !refused[0]) {
		fputs("\ncorrected environment per node (as ringctl ranks -f "
		      "env prints it):\n",
		      out);
		ranks_text(out, t, "env");
	}
	fflush(out);
}

/* ----------------------------------------------------------------- run */

/* The whole input, bounded: more than CHECK_ENV_MAX_BYTES is an error. */
static char *check_env_slurp(FILE *f, size_t *len)
{
	char *buf = malloc(CHECK_ENV_MAX_BYTES + 1);
	size_t n;

	if (!buf)
		return NULL;
	n = fread(buf, 1, CHECK_ENV_MAX_BYTES + 1, f);
	if (ferror(f)) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static int check_env_load(const char *file, struct check_env_set *set)
{
	extern char **environ;
	char err[512];
	size_t len = 0;
	char *text;
	FILE *f;
	int rc;

	if (!file) {
		if (check_env_from_environ(environ, set) < 0) {
			error_report(2, "memory", NULL, NULL, "out of memory");
			return -1;
		}
		return 0;
	}
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f) {
		error_report(2, "file", file, NULL, "%s: %s", file,
			     strerror(errno));
		return -1;
	}
	text = check_env_slurp(f, &len);
	if (!text)
		error_report(2, "file", file, NULL, "%s: %s", file,
			     errno ? strerror(errno) : "read error");
	if (f != stdin)
		fclose(f);
	if (!text)
		return -1;
	rc = check_env_parse(text, len, strcmp(file, "-") ? file : "stdin", set,
			     err, sizeof(err));
	free(text);
	if (rc < 0)
		error_report(2, "bad_input", file, NULL, "%s", err);
	return rc;
}

/* The status reply (topology and nodes) or NULL with why reported. */
static Ring__Envelope *check_env_status(const char *sock, int timeout_ms)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep = NULL;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	char err[512];

	req.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	req.status_request = &sr;
	if (client_request(sock, timeout_ms, &req, &rep, err, sizeof(err)) <
	    0) {
		error_report(2, "unreachable", sock,
			     "-s SOCKET or RINGCTL_SOCKET", "%s", err);
		return NULL;
	}
	if (rep->body_case != RING__ENVELOPE__BODY_STATUS_REPLY) {
		/* The coordinator's why: an unknown --ring lists the ids. */
		error_report(2, "refused", NULL, NULL, "%s%s",
			     rep->body_case == RING__ENVELOPE__BODY_ERROR
				     ? "coordinator: "
				     : "unexpected reply to the status "
				       "request",
			     rep->body_case == RING__ENVELOPE__BODY_ERROR
				     ? rep->error->text
				     : "");
		frame_free(rep);
		return NULL;
	}
	return rep;
}

void check_env_invs_fetch(const char *sock, int timeout_ms,
			  const Ring__Topology *t, struct check_env_invs *x)
{
	int rdma = 0;

	memset(x, 0, sizeof(*x));
	for (size_t i = 0; t && i < t->n_ranks; i++)
		rdma |= t->ranks[i]->n_hcas > 0;
	if (!rdma)
		return; /* no function, no GID to check */
	x->inv = calloc(t->n_ranks, sizeof(*x->inv));
	x->rep = calloc(t->n_ranks, sizeof(*x->rep));
	if (!x->inv || !x->rep) {
		check_env_invs_free(x);
		return;
	}
	x->n = t->n_ranks;
	for (size_t i = 0; i < t->n_ranks; i++) {
		Ring__Envelope req = RING__ENVELOPE__INIT, *rep = NULL;
		Ring__InventoryRequest ir = RING__INVENTORY_REQUEST__INIT;
		char err[256];

		if (!t->ranks[i]->n_hcas)
			continue;
		ir.node = t->ranks[i]->node;
		req.body_case = RING__ENVELOPE__BODY_INVENTORY_REQUEST;
		req.inventory_request = &ir;
		/* A node without one is checked against the survey only. */
		if (client_request(sock, timeout_ms, &req, &rep, err,
				   sizeof(err)) < 0)
			continue;
		x->rep[i] = rep;
		if (rep->body_case == RING__ENVELOPE__BODY_INVENTORY_REPLY)
			x->inv[i] = rep->inventory_reply->inventory;
	}
}

void check_env_invs_free(struct check_env_invs *x)
{
	for (size_t i = 0; x->rep && i < x->n; i++)
		if (x->rep[i])
			frame_free(x->rep[i]);
	free(x->rep);
	free(x->inv);
	memset(x, 0, sizeof(*x));
}

/* Why the last survey cannot be checked against, or NULL. */
static const char *check_env_unusable(const Ring__Topology *t)
{
	if (!t || !t->surveyed_ms)
		return "no survey yet (ringctl survey --wait)";
	if (t->order_invalid && *t->order_invalid)
		return "the rank order of the last survey no longer holds; "
		       "survey again once the ring is whole";
	if (!t->n_ranks)
		return "the last survey found no ring, line or pair";
	return NULL;
}

/* No file and no NCCL_* variable here: nothing to check, and not a
 * failure (check all's row says the same). */
static int check_env_not_given(enum writer_format fmt)
{
	struct writer *w = writer_new(stdout, fmt);

	writer_str(w, "verdict", "not_given");
	writer_str(w, "source", "environment");
	writer_str(w, "why", CHECK_ENV_NOT_GIVEN);
	writer_finish(w);
	fflush(stdout);
	return 0;
}

int check_env_run(const char *sock, int timeout_ms, enum writer_format fmt,
		  const char *file_or_dash, const char *nccl_version)
{
	struct check_env_set set = {0};
	struct check_env_result *res = NULL;
	struct check_env_invs invs = {0};
	Ring__Envelope *rep = NULL;
	const Ring__Topology *t;
	const char *why;
	int ret = CHECK_ENV_EXIT_TROUBLE;

	if (check_env_load(file_or_dash, &set) < 0)
		return CHECK_ENV_EXIT_TROUBLE;
	if (!file_or_dash && !set.n) {
		check_env_set_free(&set);
		return check_env_not_given(fmt);
	}
	rep = check_env_status(sock, timeout_ms);
	if (!rep)
		goto out;
	t = rep->status_reply->topology;
	if (rings_several(t)) {
		rings_required(t, "check nccl-env", CHECK_ENV_EXIT_TROUBLE);
		goto out;
	}
	why = check_env_unusable(t);
	if (why) {
		error_report(2, "not_surveyed", NULL, "ringctl survey --wait",
			     "cannot check: %s", why);
		goto out;
	}
	res = calloc(1, sizeof(*res));
	if (!res) {
		error_report(2, "memory", NULL, NULL, "out of memory");
		goto out;
	}
	snprintf(res->nccl_version, sizeof(res->nccl_version), "%s",
		 nccl_version ? nccl_version : "");
	/* The GID rule is the inventories' one reader. */
	if (check_env_has_var(&set, "NCCL_IB_GID_INDEX"))
		check_env_invs_fetch(sock, timeout_ms, t, &invs);
	check_env_lint(&set, t, rep->status_reply, invs.inv, res);
	check_env_render(
		writer_new(stdout, fmt), stdout, fmt,
		file_or_dash
			? (strcmp(file_or_dash, "-") ? file_or_dash : "stdin")
			: "environment",
		t, res);
	ret = res->counted ? CHECK_ENV_EXIT_PROBLEMS : 0;
out:
	free(res);
	check_env_invs_free(&invs);
	if (rep)
		frame_free(rep);
	check_env_set_free(&set);
	return ret;
}
