/* ranks and the checks of a job's inputs against the last survey: check
 * ranks (a launcher's host file), check rendezvous, check nccl-env and
 * check all. */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "error_report.h"
#include "frame.h"
#include "check.h"
#include "check_all.h"
#include "check_env.h"
#include "ranks.h"
#include "rings.h"
#include "topoview.h"

int ringctl_ranks(const struct ringctl *rc)
{
	Ring__Envelope *hold = NULL;
	Ring__Topology *t = ringctl_topology(rc, &hold);
	struct writer *w;
	char err[512];
	int ret = 0;

	if (!t)
		return EXIT_TROUBLE;
	/* A site of several rings has no one order: which ring? */
	if (rings_several(t)) {
		ret = rings_required(t, "ranks", EXIT_DEGRADED);
		frame_free(hold);
		return ret;
	}
	if (t->order_invalid && *t->order_invalid) {
		/* Jobs started from this order hang or cross the wrong
		 * cables: say so, and give a launcher nothing to source. */
		char now_text[600];

		topoview_live_text(t, 1, now_text, sizeof(now_text));
		error_report(EXIT_DEGRADED, "order_invalid", t->order_invalid,
			     "ringctl survey --wait, once it is fixed",
			     "the published rank order is no longer valid: %s "
			     "(now %s; survey again once it is fixed)",
			     t->order_invalid, now_text);
		if (rc->fmt_name && ringctl_text_format(rc->fmt_name)) {
			frame_free(hold);
			return EXIT_DEGRADED;
		}
		w = writer_new(stdout, rc->fmt);
		ranks_render(w, t);
		writer_finish(w);
		frame_free(hold);
		return EXIT_DEGRADED;
	}
	if (!t->n_ranks) {
		error_report(EXIT_DEGRADED, "no_rank_order", t->kind, NULL,
			     "no rank order: the data plane is a %s, not a "
			     "ring, line or pair",
			     t->kind);
		ret = EXIT_DEGRADED;
	} else if (rc->fmt_name &&
		   ranks_check(t, rc->fmt_name, err, sizeof(err)) < 0) {
		/* Agent-supplied names outside the safe set: print nothing
		 * an operator might source. */
		error_report(EXIT_DEGRADED, "unsafe_name", rc->fmt_name, NULL,
			     "%s", err);
		ret = EXIT_DEGRADED;
	} else if (rc->fmt_name && ranks_text(stdout, t, rc->fmt_name) == 0) {
		ret = 0;
	} else {
		w = writer_new(stdout, rc->fmt);
		ranks_render(w, t);
		writer_finish(w);
	}
	frame_free(hold);
	return ret;
}

/* The status reply with a topology for the checks; NULL (why printed)
 * when the coordinator cannot answer or no survey has completed. */
static Ring__Envelope *ringctl_check_status(const struct ringctl *rc)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;

	req.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	req.status_request = &sr;
	rep = ringctl_call(rc, &req, RING__ENVELOPE__BODY_STATUS_REPLY);
	if (rep && !rep->status_reply->topology) {
		error_report(EXIT_TROUBLE, "not_surveyed",
			     rep->status_reply->survey_state,
			     "ringctl survey --wait",
			     "cannot check: no survey has completed yet "
			     "(survey %s); run 'ringctl survey --wait'",
			     rep->status_reply->survey_state);
		frame_free(rep);
		return NULL;
	}
	return rep;
}

/* check ranks FILE|-: the file is read (and refused, file:line) before
 * the coordinator is asked. */
static int ringctl_check_ranks(const struct ringctl *rc, const char *path)
{
	int is_stdin = !strcmp(path, "-");
	const char *name = is_stdin ? "<stdin>" : path;
	FILE *f = is_stdin ? stdin : fopen(path, "r");
	struct check_hosts h;
	Ring__Envelope *rep;
	char err[600];
	int r;

	if (!f) {
		error_report(CHECK_CANNOT, "file", path, NULL, "%s: %s", path,
			     strerror(errno));
		return CHECK_CANNOT;
	}
	r = check_hosts_read(f, name, &h, err, sizeof(err));
	if (!is_stdin)
		fclose(f);
	if (r < 0) {
		error_report(CHECK_CANNOT, "bad_input", name, NULL, "%s", err);
		return CHECK_CANNOT;
	}
	rep = ringctl_check_status(rc);
	if (!rep) {
		check_hosts_free(&h);
		return CHECK_CANNOT;
	}
	if (rings_several(rep->status_reply->topology)) {
		r = rings_required(rep->status_reply->topology, "check ranks",
				   CHECK_CANNOT);
		frame_free(rep);
		check_hosts_free(&h);
		return r;
	}
	r = check_ranks_report(stdout, rc->fmt, &h, name, rep->status_reply);
	frame_free(rep);
	check_hosts_free(&h);
	return r;
}

/* Rank 0's host name as every node resolves it (torchrun's c10d looks it
 * up there). NULL when there is no rank 0 or the coordinator could not
 * say (an older one): the check then says it looked on this host only. */
static Ring__Envelope *ringctl_check_resolve(const struct ringctl *rc,
					     const Ring__StatusReply *st)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__ResolveRequest rr = RING__RESOLVE_REQUEST__INIT;
	struct ringctl quiet = *rc;

	if (!st->topology || !st->topology->n_ranks)
		return NULL;
	rr.name = st->topology->ranks[0]->node;
	req.body_case = RING__ENVELOPE__BODY_RESOLVE_REQUEST;
	req.resolve_request = &rr;
	/* The coordinator waits up to 10 s for the slowest node. */
	if (quiet.timeout_ms < 15000)
		quiet.timeout_ms = 15000;
	quiet.quiet = 1;
	return ringctl_call(&quiet, &req, RING__ENVELOPE__BODY_RESOLVE_REPLY);
}

static int ringctl_check_rendezvous(const struct ringctl *rc, const char *arg)
{
	Ring__Envelope *rep = ringctl_check_status(rc), *res;
	int r;

	if (!rep)
		return CHECK_CANNOT;
	res = ringctl_check_resolve(rc, rep->status_reply);
	r = check_rendezvous_report(stdout, rc->fmt, arg, rep->status_reply,
				    res ? res->resolve_reply : NULL);
	frame_free(res);
	frame_free(rep);
	return r;
}

/* check SUBCOMMAND ...: 0 ok, 1 problems found, 2 could not check. */
int ringctl_check(const struct ringctl *rc, int argc, char **argv)
{
	if (argc < 1)
		return error_report_usage(
			"check needs one of ranks, rendezvous, "
			"nccl-env or all");
	if (!strcmp(argv[0], "ranks")) {
		if (argc != 2)
			return error_report_usage("check ranks needs one FILE "
						  "(or - for stdin)");
		return ringctl_check_ranks(rc, argv[1]);
	}
	if (!strcmp(argv[0], "rendezvous")) {
		if (argc != 2)
			return error_report_usage("check rendezvous needs one "
						  "HOST[:PORT]");
		return ringctl_check_rendezvous(rc, argv[1]);
	}
	if (!strcmp(argv[0], "all")) {
		struct check_all_opts o;
		struct check_env_invs invs;
		Ring__Envelope *rep, *res;
		char err[256];
		int r;

		if (check_all_parse(argc - 1, argv + 1, &o, err, sizeof(err)) <
		    0)
			return error_report_usage("%s", err);
		rep = ringctl_check_status(rc);
		if (!rep)
			return CHECK_CANNOT;
		if (rings_several(rep->status_reply->topology)) {
			r = rings_required(rep->status_reply->topology,
					   "check all", CHECK_CANNOT);
			frame_free(rep);
			return r;
		}
		res = ringctl_check_resolve(rc, rep->status_reply);
		check_env_invs_fetch(rc->sock, rc->timeout_ms,
				     rep->status_reply->topology, &invs);
		r = check_all_report(stdout, rc->fmt, &o, rep->status_reply,
				     res ? res->resolve_reply : NULL, invs.inv);
		check_env_invs_free(&invs);
		frame_free(res);
		frame_free(rep);
		return r;
	}
	if (!strcmp(argv[0], "nccl-env")) {
		/* check nccl-env [--nccl-version V] [FILE|-]: no FILE, the
		 * environment's. */
		const char *file = NULL, *ver = NULL;

		for (int i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--nccl-version")) {
				if (i + 1 >= argc ||
				    check_env_version(argv[i + 1]) < 0)
					return error_report_usage(
						"check nccl-env: --nccl-version "
						"needs a version like 2.30.7%s%s%s",
						i + 1 < argc ? " (not '" : "",
						i + 1 < argc ? argv[i + 1] : "",
						i + 1 < argc ? "')" : "");
				ver = argv[++i];
			} else if (argv[i][0] == '-' && argv[i][1]) {
				return error_report_usage("check nccl-env: "
							  "unknown option '%s'",
							  argv[i]);
			} else if (file) {
				return error_report_usage(
					"check nccl-env takes one FILE (or "
					"-), not '%s'",
					argv[i]);
			} else {
				file = argv[i];
			}
		}
		return check_env_run(rc->sock, rc->timeout_ms, rc->fmt, file,
				     ver);
	}
	return error_report_usage("unknown check '%s' (ranks, rendezvous, "
				  "nccl-env, all)",
				  argv[0]);
}
