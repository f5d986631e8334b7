/* ringctl: the operator's command. Exit status: 0 ok/healthy, 1 degraded,
 * 2 cannot reach the coordinator, refused request or bad usage. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_all.h"
#include "check_env.h"
#include "client.h"
#include "clock.h"
#include "explain.h"
#include "help.h"
#include "history.h"
#include "testlimits.h"
#include "text.h"
#include "pki.h"
#include "plan.h"
#include "ranks.h"
#include "render.h"
#include "svg.h"
#include "report.h"
#include "testargs.h"
#include "topoview.h"
#include "allreduce_cli.h"
#include "watch_cmd.h"
#include "writer.h"

#define EXIT_DEGRADED 1
#define EXIT_TROUBLE 2

struct ringctl {
	const char *sock;
	int help; /* --help or -h given: the command's help, not the command */
	int version; /* --version or -V given: that alone */
	int timeout_ms;
	enum writer_format fmt;
	const char *fmt_name; /* as given with -f, for ranks' text formats */
	int quiet;	      /* polling: no message per failed call */
};

/* The command being run, for a usage error's synopsis (NULL: none known
 * yet), and whether a usage error named it (json: the error's usage). */
static const struct help_cmd *ringctl_cmd;
static const char *ringctl_group; /* "test" alone: its commands' usage */
static int ringctl_usage_shown;
static enum writer_format ringctl_err_fmt = WRITER_PLAIN;

/* One line naming the problem, then the command's own synopsis (-f json:
 * the synopsis goes into the error object, see ringctl_json_error). */
static int ringctl_bad_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int ringctl_bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("ringctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	ringctl_usage_shown = 1;
	if (ringctl_err_fmt != WRITER_JSON)
		help_print_usage(stderr, ringctl_cmd, ringctl_group);
	return EXIT_TROUBLE;
}

/* Send one request and hand back its reply of type want, or print why not
 * (unless rc->quiet: polling). */
static Ring__Envelope *ringctl_call(const struct ringctl *rc,
				    Ring__Envelope *req,
				    Ring__Envelope__BodyCase want)
{
	return client_call(rc->sock, rc->timeout_ms, req, want,
			   rc->quiet ? CLIENT_QUIET : CLIENT_LOUD);
}

static int ringctl_verbose_flag(const char *arg)
{
	return !strcmp(arg, "-v") || !strcmp(arg, "--verbose");
}

/* Send a request and render its reply of type want; NULL: why not is
 * printed. The caller frees the reply (frame_free). */
static Ring__Envelope *
ringctl_show(const struct ringctl *rc, Ring__Envelope *req,
	     Ring__Envelope__BodyCase want,
	     void (*show)(struct writer *, const Ring__Envelope *, int),
	     int verbose)
{
	Ring__Envelope *rep = ringctl_call(rc, req, want);
	struct writer *w;

	if (!rep)
		return NULL;
	w = writer_new(stdout, rc->fmt);
	show(w, rep, verbose);
	writer_finish(w);
	return rep;
}

static void ringctl_show_status(struct writer *w, const Ring__Envelope *rep,
				int verbose)
{
	render_status(w, rep->status_reply, verbose);
}

static void ringctl_show_inventory(struct writer *w, const Ring__Envelope *rep,
				   int verbose)
{
	(void)verbose;
	render_inventory(w, rep->inventory_reply);
}

/* status -f svg: the picture of the ring (svg.h), the same one the
 * coordinator's page shows; exit status as for status. */
static int ringctl_status_svg(const struct ringctl *rc, Ring__Envelope *req)
{
	Ring__Envelope *rep =
		ringctl_call(rc, req, RING__ENVELOPE__BODY_STATUS_REPLY);
	size_t len = 0;
	char *doc;
	int health;

	if (!rep)
		return EXIT_TROUBLE;
	doc = svg_render(rep->status_reply, &len);
	health = render_status_health(rep->status_reply);
	frame_free(rep);
	if (!doc) {
		fprintf(stderr, "ringctl: cannot draw the picture: %s\n",
			strerror(errno));
		return EXIT_TROUBLE;
	}
	if (fwrite(doc, 1, len, stdout) != len || fflush(stdout) == EOF) {
		fprintf(stderr, "ringctl: writing the picture: %s\n",
			strerror(errno));
		free(doc);
		return EXIT_TROUBLE;
	}
	free(doc);
	return health ? EXIT_DEGRADED : 0;
}

static int ringctl_status(const struct ringctl *rc, int verbose)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	int health;

	req.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	req.status_request = &sr;
	if (rc->fmt_name && !strcmp(rc->fmt_name, "svg"))
		return ringctl_status_svg(rc, &req);
	rep = ringctl_show(rc, &req, RING__ENVELOPE__BODY_STATUS_REPLY,
			   ringctl_show_status, verbose);
	if (!rep)
		return EXIT_TROUBLE;
	health = render_status_health(rep->status_reply);
	frame_free(rep);
	return health ? EXIT_DEGRADED : 0;
}

static int ringctl_inventory(const struct ringctl *rc, const char *node)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__InventoryRequest ir = RING__INVENTORY_REQUEST__INIT;

	ir.node = (char *)node;
	req.body_case = RING__ENVELOPE__BODY_INVENTORY_REQUEST;
	req.inventory_request = &ir;
	rep = ringctl_show(rc, &req, RING__ENVELOPE__BODY_INVENTORY_REPLY,
			   ringctl_show_inventory, 0);
	if (!rep)
		return EXIT_TROUBLE;
	frame_free(rep);
	return 0;
}

static void ringctl_show_alerts(struct writer *w, const Ring__Envelope *rep,
				int all)
{
	const Ring__AlertsReply *r = rep->alerts_reply;
	char t[32];

	if (r->health && *r->health)
		writer_str(w, "health", r->health);
	/* Why, as status gives it. */
	if (r->health_cause && *r->health_cause) {
		writer_str(w, "health_cause", r->health_cause);
		writer_str(w, "health_subject", r->health_subject);
		writer_str(w, "health_why", r->health_text);
	}
	if (all && r->since_ms) {
		render_format_time(r->since_ms, t, sizeof(t));
		writer_str(w, "resolved_since", t);
	}
	if (all)
		writer_bool(w, "truncated", r->truncated);
	render_alerts(w, "alerts", r->alerts, r->n_alerts, 0);
}

/* alerts [--all [--since DURATION]]: exit by the coordinator's health, as
 * status does (1 unless healthy); an older coordinator sends none: 1
 * while an alert fires. */
static int ringctl_alerts(const struct ringctl *rc, int argc, char **argv)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__AlertsRequest ar = RING__ALERTS_REQUEST__INIT;
	const char *since = NULL;
	uint64_t ms = 0, now = clock_now_ms();
	int firing = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--all"))
			ar.all = 1;
		else if (!strcmp(argv[i], "--since") && i + 1 < argc)
			since = argv[++i];
		else if (!strncmp(argv[i], "--since=", 8))
			since = argv[i] + 8;
		else if (!strcmp(argv[i], "--since"))
			return ringctl_bad_usage("--since needs a duration "
						 "(e.g. 30m, 6h, 7d)");
		else
			return ringctl_bad_usage("alerts takes only --all and "
						 "--since, not '%s'",
						 argv[i]);
	}
	if (since && !ar.all)
		return ringctl_bad_usage("--since goes with --all (the "
					 "resolved alerts since then)");
	/* The one --since grammar (history's). */
	if (since && history_parse_duration(since, &ms) < 0)
		return ringctl_bad_usage(
			"--since: '%s' is not a duration from 1s to 3650d "
			"(e.g. 90s, 30m, 6h, 7d, 2w)",
			since);
	ar.since_ms = since ? (now > ms ? now - ms : 1) : 0;
	req.body_case = RING__ENVELOPE__BODY_ALERTS_REQUEST;
	req.alerts_request = &ar;
	rep = ringctl_show(rc, &req, RING__ENVELOPE__BODY_ALERTS_REPLY,
			   ringctl_show_alerts, ar.all);
	if (!rep)
		return EXIT_TROUBLE;
	if (rep->alerts_reply->health && *rep->alerts_reply->health)
		firing = strcmp(rep->alerts_reply->health, "healthy") != 0;
	for (size_t i = 0; i < rep->alerts_reply->n_alerts; i++)
		firing |= rep->alerts_reply->alerts[i]->firing &&
			  rep->alerts_reply->alerts[i]->severity !=
				  RING__SEVERITY__SEVERITY_INFO;
	frame_free(rep);
	return firing ? EXIT_DEGRADED : 0;
}

/* history EDGE [--since DURATION] [--before MS:ID]: the newest page (or
 * the one before the cursor an earlier page printed); exit 0 with what
 * the store has (none included), 2 for an edge nobody knows. */
static int ringctl_history(const struct ringctl *rc, int argc, char **argv)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__HistoryRequest hr = RING__HISTORY_REQUEST__INIT;
	const char *edge = NULL, *since = NULL, *before = NULL;
	uint64_t ms = 0, now = clock_now_ms();
	unsigned long long bms, bid;
	struct writer *w;
	char tail;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--since") && i + 1 < argc)
			since = argv[++i];
		else if (!strcmp(argv[i], "--before") && i + 1 < argc)
			before = argv[++i];
		else if (!strncmp(argv[i], "--before=", 9))
			before = argv[i] + 9;
		else if (!strncmp(argv[i], "--since=", 8))
			since = argv[i] + 8;
		else if (!strcmp(argv[i], "--since"))
			return ringctl_bad_usage("--since needs a duration "
						 "(e.g. 30m, 6h, 7d)");
		else if (argv[i][0] != '-' && !edge)
			edge = argv[i];
		else
			return ringctl_bad_usage("history takes one EDGE, "
						 "--since and --before, not "
						 "'%s'",
						 argv[i]);
	}
	if (!edge)
		return ringctl_bad_usage("history needs an EDGE (e.g. n1-n2)");
	if (since && history_parse_duration(since, &ms) < 0)
		return ringctl_bad_usage(
			"--since: '%s' is not a duration from 1s to 3650d "
			"(e.g. 90s, 30m, 6h, 7d, 2w)",
			since);
	if (before &&
	    (sscanf(before, "%llu:%llu%c", &bms, &bid, &tail) != 2 || !bms))
		return ringctl_bad_usage(
			"--before: '%s' is not a cursor MS:ID (the one a "
			"truncated page printed as older)",
			before);
	hr.edge = (char *)edge;
	hr.since_ms = since ? (now > ms ? now - ms : 1) : 0;
	if (before) {
		hr.before_ms = bms;
		hr.before_id = bid;
	}
	req.body_case = RING__ENVELOPE__BODY_HISTORY_REQUEST;
	req.history_request = &hr;
	rep = ringctl_call(rc, &req, RING__ENVELOPE__BODY_HISTORY_REPLY);
	if (!rep)
		return EXIT_TROUBLE;
	w = writer_new(stdout, rc->fmt);
	history_render(w, rep->history_reply, hr.since_ms);
	writer_finish(w);
	frame_free(rep);
	return 0;
}

static int ringctl_forget(const struct ringctl *rc, const char *node)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__ForgetRequest fr = RING__FORGET_REQUEST__INIT;

	fr.node = (char *)node;
	req.body_case = RING__ENVELOPE__BODY_FORGET_REQUEST;
	req.forget_request = &fr;
	rep = ringctl_call(rc, &req, RING__ENVELOPE__BODY_ACK);
	if (!rep)
		return EXIT_TROUBLE;
	if (rc->fmt == WRITER_PLAIN) {
		printf("%s\n", rep->ack->text);
	} else {
		struct writer *w = writer_new(stdout, rc->fmt);

		writer_str(w, "forgotten", node);
		writer_str(w, "message", rep->ack->text);
		writer_finish(w);
	}
	frame_free(rep);
	return 0;
}

static Ring__Topology *ringctl_topology(const struct ringctl *rc,
					Ring__Envelope **hold)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__RanksRequest rr = RING__RANKS_REQUEST__INIT;

	req.body_case = RING__ENVELOPE__BODY_RANKS_REQUEST;
	req.ranks_request = &rr;
	rep = ringctl_call(rc, &req, RING__ENVELOPE__BODY_RANKS_REPLY);
	if (!rep)
		return NULL;
	if (!rep->ranks_reply->topology) {
		if (!rc->quiet)
			fprintf(stderr, "ringctl: reply without a topology\n");
		frame_free(rep);
		return NULL;
	}
	*hold = rep;
	return rep->ranks_reply->topology;
}

static int ringctl_text_format(const char *name);

static int ringctl_ranks(const struct ringctl *rc)
{
	Ring__Envelope *hold = NULL;
	Ring__Topology *t = ringctl_topology(rc, &hold);
	struct writer *w;
	char err[512];
	int ret = 0;

	if (!t)
		return EXIT_TROUBLE;
	if (t->order_invalid && *t->order_invalid) {
		/* Jobs started from this order hang or cross the wrong
		 * cables: say so, and give a launcher nothing to source. */
		char now_text[600];

		topoview_live_text(t, 1, now_text, sizeof(now_text));
		fprintf(stderr,
			"ringctl: the published rank order is no longer valid: "
			"%s (now %s; survey again once it is fixed)\n",
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
		fprintf(stderr,
			"ringctl: no rank order: the data plane is a %s, not a "
			"ring, line or pair\n",
			t->kind);
		ret = EXIT_DEGRADED;
	} else if (rc->fmt_name &&
		   ranks_check(t, rc->fmt_name, err, sizeof(err)) < 0) {
		/* Agent-supplied names outside the safe set: print nothing
		 * an operator might source. */
		fprintf(stderr, "ringctl: %s\n", err);
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
		fprintf(stderr,
			"ringctl: cannot check: no survey has completed yet "
			"(survey %s); run 'ringctl survey --wait'\n",
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
		fprintf(stderr, "ringctl: %s: %s\n", path, strerror(errno));
		return CHECK_CANNOT;
	}
	r = check_hosts_read(f, name, &h, err, sizeof(err));
	if (!is_stdin)
		fclose(f);
	if (r < 0) {
		fprintf(stderr, "ringctl: ");
		writer_fputs_safe(stderr, err);
		fputc('\n', stderr);
		return CHECK_CANNOT;
	}
	rep = ringctl_check_status(rc);
	if (!rep) {
		check_hosts_free(&h);
		return CHECK_CANNOT;
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
static int ringctl_check(const struct ringctl *rc, int argc, char **argv)
{
	if (argc < 1)
		return ringctl_bad_usage(
			"check needs one of ranks, rendezvous, "
			"nccl-env or all");
	if (!strcmp(argv[0], "ranks")) {
		if (argc != 2)
			return ringctl_bad_usage("check ranks needs one FILE "
						 "(or - for stdin)");
		return ringctl_check_ranks(rc, argv[1]);
	}
	if (!strcmp(argv[0], "rendezvous")) {
		if (argc != 2)
			return ringctl_bad_usage("check rendezvous needs one "
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
			return ringctl_bad_usage("%s", err);
		rep = ringctl_check_status(rc);
		if (!rep)
			return CHECK_CANNOT;
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
					return ringctl_bad_usage(
						"check nccl-env: --nccl-version "
						"needs a version like 2.30.7%s%s%s",
						i + 1 < argc ? " (not '" : "",
						i + 1 < argc ? argv[i + 1] : "",
						i + 1 < argc ? "')" : "");
				ver = argv[++i];
			} else if (argv[i][0] == '-' && argv[i][1]) {
				return ringctl_bad_usage("check nccl-env: "
							 "unknown option '%s'",
							 argv[i]);
			} else if (file) {
				return ringctl_bad_usage(
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
	return ringctl_bad_usage("unknown check '%s' (ranks, rendezvous, "
				 "nccl-env, all)",
				 argv[0]);
}

/* Poll until a survey newer than `since` is done, within the deadline. */
static int ringctl_wait_survey(const struct ringctl *rc, uint64_t *since,
			       int wait_s)
{
	struct ringctl quiet = *rc;

	quiet.quiet = 1;
	for (int i = 0; i < wait_s * 4; i++) {
		Ring__Envelope *hold = NULL;
		Ring__Topology *t;

		usleep(250000);
		t = ringctl_topology(&quiet, &hold);
		if (t && t->surveyed_ms > *since) {
			*since = t->surveyed_ms;
			frame_free(hold);
			return 0;
		}
		frame_free(hold);
	}
	fprintf(stderr, "ringctl: survey not done within %d s\n", wait_s);
	return -1;
}

static int ringctl_survey(const struct ringctl *rc, int argc, char **argv)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep, *hold = NULL;
	Ring__SurveyRequest sr = RING__SURVEY_REQUEST__INIT;
	Ring__Topology *t;
	uint64_t since = 0;
	int wait = 0, verbose = 0, behind;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (ringctl_verbose_flag(argv[i]))
			verbose = 1;
		else
			return ringctl_bad_usage(
				"survey takes --wait and, with "
				"it, -v; not '%s'",
				argv[i]);
	}
	if (verbose && !wait)
		return ringctl_bad_usage("survey -v goes with --wait");
	if (wait) {
		/* Quietly: there may be no earlier survey. */
		struct ringctl quiet = *rc;

		quiet.quiet = 1;
		t = ringctl_topology(&quiet, &hold);
		since = t ? t->surveyed_ms : 0;
		frame_free(hold);
	}
	req.body_case = RING__ENVELOPE__BODY_SURVEY_REQUEST;
	req.survey_request = &sr;
	rep = ringctl_call(rc, &req, RING__ENVELOPE__BODY_ACK);
	if (!rep)
		return EXIT_TROUBLE;
	/* Queued behind a survey already running: that one's result comes
	 * first, and is not the one asked for. */
	behind = rep->ack->queued == 2;
	/* With --wait the status document follows: nothing may precede it. */
	if (wait && rc->fmt != WRITER_PLAIN) {
		fprintf(stderr, "ringctl: %s\n", rep->ack->text);
	} else if (rc->fmt != WRITER_PLAIN) {
		struct writer *w = writer_new(stdout, rc->fmt);

		writer_str(w, "survey", "started");
		writer_str(w, "after",
			   rep->ack->queued == 2   ? "survey"
			   : rep->ack->queued == 1 ? "re-check"
						   : "none");
		writer_str(w, "message", rep->ack->text);
		writer_finish(w);
	} else {
		printf("%s\n", rep->ack->text);
	}
	frame_free(rep);
	if (!wait)
		return 0;
	if (ringctl_wait_survey(rc, &since, 3600) < 0 ||
	    (behind && ringctl_wait_survey(rc, &since, 3600) < 0))
		return EXIT_TROUBLE;
	return ringctl_status(rc, verbose);
}

static int ringctl_allreduce(const struct ringctl *rc, int argc, char **argv)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	struct allreduce_cli *c = malloc(sizeof(*c));
	struct ringctl slow = *rc;
	struct writer *w;
	char err[256];
	int ret = EXIT_TROUBLE;

	if (!c)
		return EXIT_TROUBLE;
	if (allreduce_cli_parse(argc, argv, c, err, sizeof(err)) < 0) {
		free(c);
		return ringctl_bad_usage("%s", err);
	}
	req.body_case = RING__ENVELOPE__BODY_ALLREDUCE_REQUEST;
	req.allreduce_request = &c->req;
	/* The coordinator answers when the job is over. */
	slow.timeout_ms = rc->timeout_ms + (int)allreduce_cli_wait_ms(c);
	rep = ringctl_call(&slow, &req, RING__ENVELOPE__BODY_ALLREDUCE_REPORT);
	if (rep) {
		w = writer_new(stdout, rc->fmt);
		allreduce_cli_render(w, rep->allreduce_report);
		writer_finish(w);
		ret = *rep->allreduce_report->error ? EXIT_DEGRADED : 0;
		frame_free(rep);
	}
	free(c);
	return ret;
}

static int ringctl_test(const struct ringctl *rc, int argc, char **argv)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__TestRequest tr = RING__TEST_REQUEST__INIT;
	struct testargs t;
	struct ringctl slow = *rc;
	struct writer *w;
	char err[256];
	int ret;

	if (testargs_parse(argc, argv, &t, err, sizeof(err)) < 0)
		return ringctl_bad_usage("%s", err);
	tr.a = (char *)t.a;
	tr.b = (char *)t.b;
	tr.params = &t.params;
	req.body_case = RING__ENVELOPE__BODY_TEST_REQUEST;
	req.test_request = &tr;
	/* The coordinator answers when the test is over. */
	if (t.params.rdma)
		slow.timeout_ms =
			rc->timeout_ms +
			2 * (int)testlimits_rdma_deadline_ms(&t.params) + 20000;
	else
		slow.timeout_ms =
			rc->timeout_ms +
			(int)(t.params.duration_ms + t.params.warmup_ms) +
			(int)(t.params.n_sizes *
			      (t.params.iterations + t.params.lat_warmup) / 2) +
			20000;
	rep = ringctl_call(&slow, &req, RING__ENVELOPE__BODY_TEST_REPORT);
	if (!rep)
		return EXIT_TROUBLE;
	w = writer_new(stdout, rc->fmt);
	report_render(w, rep->test_report);
	writer_finish(w);
	ret = *rep->test_report->error ? EXIT_DEGRADED : 0;
	frame_free(rep);
	return ret;
}

static int ringctl_parse_days(const char *s, unsigned *days)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v < 1 || v > 36500)
		return -1;
	*days = (unsigned)v;
	return 0;
}

static int ringctl_pki(const struct ringctl *rc, int argc, char **argv)
{
	const char *pos[2] = {NULL, NULL}, *cn = "ringd cluster CA";
	enum pki_role role = PKI_ROLE_NODE;
	char err[512], serial[PKI_SERIAL_LEN];
	const char *dir, *name;
	unsigned days = 0;
	int i, init, npos = 0;

	if (argc < 1)
		return ringctl_bad_usage(
			"pki needs 'init DIR' or 'issue DIR NAME'");
	init = !strcmp(argv[0], "init");
	if (!init && strcmp(argv[0], "issue"))
		return ringctl_bad_usage("unknown pki command '%s'", argv[0]);
	/* Options may come before or after DIR and NAME. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--days") && i + 1 < argc) {
			if (ringctl_parse_days(argv[++i], &days) < 0)
				return ringctl_bad_usage(
					"--days: '%s' is not 1..36500",
					argv[i]);
		} else if (init && !strcmp(argv[i], "--cn") && i + 1 < argc) {
			cn = argv[++i];
		} else if (!init && !strcmp(argv[i], "--coordinator")) {
			role = PKI_ROLE_COORDINATOR;
		} else if (argv[i][0] != '-' && npos < (init ? 1 : 2)) {
			pos[npos++] = argv[i];
		} else {
			return ringctl_bad_usage("unexpected argument '%s'",
						 argv[i]);
		}
	}
	if (npos < 1)
		return ringctl_bad_usage("pki %s needs a DIR", argv[0]);
	if (!init && npos < 2)
		return ringctl_bad_usage("pki issue needs a NAME");
	dir = pos[0];
	name = pos[1];
	if (init ? pki_init(dir, cn, days ? days : 3650, err, sizeof(err))
		 : pki_issue(dir, name, role, days ? days : 825, serial,
			     sizeof(serial), err, sizeof(err))) {
		fprintf(stderr, "ringctl: %s\n", err);
		return EXIT_TROUBLE;
	}
	if (rc->fmt != WRITER_PLAIN) {
		/* The same facts, with the paths as fields. */
		char crt[PATH_MAX], key[PATH_MAX];
		struct writer *w = writer_new(stdout, rc->fmt);

		snprintf(crt, sizeof(crt), "%s/%s.crt", dir,
			 init ? "ca" : name);
		snprintf(key, sizeof(key), "%s/%s.key", dir,
			 init ? "ca" : name);
		writer_str(w, "created", init ? "ca" : "certificate");
		if (!init) {
			writer_str(w, "name", name);
			writer_str(w, "role",
				   role == PKI_ROLE_COORDINATOR ? "coordinator"
								: "node");
			writer_str(w, "serial", serial);
		}
		writer_str(w, "certificate", crt);
		writer_str(w, "key", key);
		writer_finish(w);
	} else if (init) {
		printf("created CA %s/ca.crt (key %s/ca.key)\n", dir, dir);
	} else {
		/* The serial is what 'deny_serial' names to revoke it. */
		printf("issued %s/%s.crt (key %s/%s.key), %s certificate, "
		       "serial %s\n",
		       dir, name, dir, name,
		       role == PKI_ROLE_COORDINATOR ? "coordinator" : "node",
		       serial);
	}
	return 0;
}

/* ranks' text formats, beside the writer's. */
static int ringctl_text_format(const char *name)
{
	return !strcmp(name, "hostfile") || !strcmp(name, "rankfile") ||
	       !strcmp(name, "torchrun") || !strcmp(name, "env");
}

/* A command's own options take their value as the next word ("--sizes
 * 64"), so that word is never read as a global option; these take none. */
static int ringctl_takes_value(const char *word)
{
	static const char *const flags[] = {"--wait", "--coordinator",
					    "--verbose", "--all"};

	if (strncmp(word, "--", 2) || !word[2] || strchr(word, '='))
		return 0;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strcmp(word, flags[i]))
			return 0;
	return 1;
}

/* -s, -f, -t (value attached or next), -h/--help, -V/--version wherever
 * they stand; the other words, in order, into words. 1 done (help or
 * version printed), 0 go on, or EXIT_TROUBLE + 1 after a usage error. */
static int ringctl_global(struct ringctl *rc, int argc, char **argv,
			  char **words, int *n)
{
	int skip = 0;

	*n = 0;
	for (int i = 1; i < argc; i++) {
		const char *w = argv[i], *val;
		char opt;

		if (skip || w[0] != '-' || !w[1] || !strcmp(w, "-")) {
			skip = 0;
			words[(*n)++] = argv[i];
			continue;
		}
		if (!strcmp(w, "--help") || !strcmp(w, "-h")) {
			rc->help = 1;
			continue;
		}
		if (!strcmp(w, "--version") || !strcmp(w, "-V")) {
			rc->version = 1;
			continue;
		}
		if (w[1] == '-' || !strchr("sft", w[1])) {
			/* A command's option: the command judges it. */
			if (!*n)
				return 1 + ringctl_bad_usage(
						   "unknown option '%s'", w);
			skip = ringctl_takes_value(w);
			words[(*n)++] = argv[i];
			continue;
		}
		opt = w[1];
		val = w[2] ? w + 2 : i + 1 < argc ? argv[++i] : NULL;
		if (!val && opt == 'f')
			return 1 + ringctl_bad_usage(
					   "option -f needs a format (plain, "
					   "keyvalue, json; for ranks also "
					   "hostfile, rankfile, torchrun, env; "
					   "for status also svg)");
		if (!val)
			return 1 + ringctl_bad_usage(
					   "option -%c needs %s", opt,
					   opt == 's' ? "a socket path"
						      : "a number of seconds");
		if (opt == 's') {
			rc->sock = val;
		} else if (opt == 'f') {
			rc->fmt_name = val;
			rc->fmt = WRITER_PLAIN;
			if (!ringctl_text_format(val) && strcmp(val, "svg") &&
			    writer_format_parse(val, &rc->fmt) < 0)
				return 1 +
				       ringctl_bad_usage(
					       "unknown format '%s' (plain, "
					       "keyvalue, json; for ranks "
					       "also hostfile, rankfile, "
					       "torchrun, env; for status "
					       "also svg)",
					       val);
		} else {
			char *end;
			double t = strtod(val, &end);

			if (end == val || *end || !(t > 0 && t <= 3600))
				return 1 + ringctl_bad_usage(
						   "-t: '%s' is not a number "
						   "of seconds in (0, 3600]",
						   val);
			rc->timeout_ms = (int)(t * 1000);
		}
		ringctl_err_fmt = rc->fmt;
	}
	return 0;
}

/* help [COMMAND], COMMAND --help: plain text, or with -f json the table's
 * entries (all of them for help alone: what the tests compare the man
 * page and the completion with). */
static int ringctl_help(const struct ringctl *rc, int argc, char **argv)
{
	const struct help_cmd *c;
	int used = 0;

	if (argc < 1) {
		if (rc->fmt == WRITER_JSON)
			help_print_table(stdout, NULL);
		else
			help_print_overview(stdout);
		return 0;
	}
	c = help_find(argc, argv, &used);
	if (!c && !help_is_group(argv[0]))
		return ringctl_bad_usage("help: no command '%s' (ringctl "
					 "--help lists them)",
					 argv[0]);
	if (!c || (used == 1 && help_is_group(argv[0]))) {
		if (rc->fmt == WRITER_JSON)
			help_print_table(stdout, argv[0]);
		else
			help_print_group(stdout, argv[0]);
		return 0;
	}
	if (rc->fmt == WRITER_JSON)
		help_print_table(stdout, help_cmd_name(c));
	else
		help_print_command(stdout, c);
	return 0;
}

static int ringctl_run(struct ringctl *rc, int argc, char **argv)
{
	const char *cmd;
	int used = 0;

	if (argc < 1)
		return ringctl_bad_usage("no command given");
	ringctl_cmd = help_find(argc, argv, &used);
	if (!ringctl_cmd && help_is_group(argv[0]))
		ringctl_group = argv[0];
	if (rc->help)
		return ringctl_help(rc, argc, argv);
	cmd = argv[0];
	argc--;
	argv++;
	if (strcmp(cmd, "ranks") && rc->fmt_name &&
	    ringctl_text_format(rc->fmt_name))
		return ringctl_bad_usage("-f %s is for 'ranks' only",
					 rc->fmt_name);
	/* A picture of the ring, of status alone: other replies have none. */
	if (strcmp(cmd, "status") && rc->fmt_name &&
	    !strcmp(rc->fmt_name, "svg"))
		return ringctl_bad_usage("-f svg is for 'status' only (the "
					 "picture of the ring)");
	if (!strcmp(cmd, "help"))
		return ringctl_help(rc, argc, argv);
	if (!strcmp(cmd, "pki"))
		return ringctl_pki(rc, argc, argv);
	if (!strcmp(cmd, "survey"))
		return ringctl_survey(rc, argc, argv);
	if (!strcmp(cmd, "test") && argc > 0 && !strcmp(argv[0], "allreduce"))
		return ringctl_allreduce(rc, argc, argv);
	if (!strcmp(cmd, "test"))
		return ringctl_test(rc, argc, argv);
	if (!strcmp(cmd, "status")) {
		for (int i = 0; i < argc; i++)
			if (!ringctl_verbose_flag(argv[i]))
				return ringctl_bad_usage(
					"status takes only -v, "
					"not '%s'",
					argv[i]);
		return ringctl_status(rc, argc > 0);
	}
	if (!strcmp(cmd, "alerts"))
		return ringctl_alerts(rc, argc, argv);
	if (!strcmp(cmd, "check"))
		return ringctl_check(rc, argc, argv);
	if (!strcmp(cmd, "history"))
		return ringctl_history(rc, argc, argv);
	/* explain's own check, here for the usage it prints. */
	if (!strcmp(cmd, "explain") && (argc != 1 || argv[0][0] == '-'))
		return ringctl_bad_usage(
			"explain needs one EDGE (a-b) or NODE");
	if (!strcmp(cmd, "explain"))
		return explain_cmd(rc->sock, rc->timeout_ms, rc->fmt, argc,
				   argv);
	if (!strcmp(cmd, "watch")) {
		struct watch_cmd_opts wo;
		char err[256];

		if (watch_cmd_parse(argc, argv, &wo, err, sizeof(err)) < 0)
			return ringctl_bad_usage("%s", err);
		return watch_cmd_run(rc->sock, rc->timeout_ms, rc->fmt, &wo);
	}
	if (!strcmp(cmd, "plan")) {
		struct plan_opts *po = malloc(sizeof(*po));
		char err[512];
		int r;

		if (!po)
			return EXIT_TROUBLE;
		r = plan_cmd_parse(argc, argv, po, err, sizeof(err)) < 0
			    ? ringctl_bad_usage("%s", err)
			    : plan_cmd_run(rc->sock, rc->timeout_ms, rc->fmt,
					   po);
		free(po);
		return r;
	}
	if (!strcmp(cmd, "ranks")) {
		if (argc)
			return ringctl_bad_usage("ranks takes no arguments, "
						 "not '%s'",
						 argv[0]);
		return ringctl_ranks(rc);
	}
	if (!strcmp(cmd, "inventory") || !strcmp(cmd, "forget")) {
		if (argc != 1)
			return ringctl_bad_usage("%s needs one NODE", cmd);
		return !strcmp(cmd, "inventory")
			       ? ringctl_inventory(rc, argv[0])
			       : ringctl_forget(rc, argv[0]);
	}
	return ringctl_bad_usage("unknown command '%s' (ringctl --help lists "
				 "them)",
				 cmd);
}

/* s as a JSON string: quotes, backslashes and control bytes escaped, a
 * byte that is not UTF-8 as U+FFFD. */
static void ringctl_json_str(FILE *f, const char *s)
{
	size_t n = strlen(s);

	fputc('"', f);
	while (n) {
		const unsigned char c = (unsigned char)*s;
		size_t k = c < 0x80 ? 1 : text_utf8_len((const void *)s, n);

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else if (!k)
			fputs("\\ufffd", f);
		else
			fwrite(s, 1, k, f);
		k = k ? k : 1;
		s += k;
		n -= k;
	}
	fputc('"', f);
}

/* -f json: what went to stderr (every "ringctl: ..." line of any module)
 * as one object on one line: {"error": {...}} for exit status 2 (nothing
 * done, or not all of it), else {"notice": {...}}, a message that goes
 * with the document (a survey's acknowledgement, an order that no longer
 * holds); message without the "ringctl: " prefixes, the command, its
 * usage after a usage error, the exit status. */
static void ringctl_json_error(FILE *f, const char *text, int status)
{
	char *msg = strdup(text), *o = msg, usage[2048];
	const char *p = text;

	if (!msg)
		return;
	while (*p) {
		if (!strncmp(p, "ringctl: ", 9))
			p += 9;
		while (*p && *p != '\n')
			*o++ = *p++;
		if (*p == '\n' && p[1])
			*o++ = *p;
		if (*p)
			p++;
	}
	*o = '\0';
	fprintf(f, "{\"%s\":{\"message\":",
		status >= EXIT_TROUBLE ? "error" : "notice");
	ringctl_json_str(f, msg);
	fputs(",\"command\":", f);
	if (ringctl_cmd || ringctl_group)
		ringctl_json_str(f, ringctl_cmd ? help_cmd_name(ringctl_cmd)
						: ringctl_group);
	else
		fputs("null", f);
	if (ringctl_usage_shown && help_usage_text(ringctl_cmd, ringctl_group,
						   usage, sizeof(usage)) == 0) {
		fputs(",\"usage\":", f);
		ringctl_json_str(f, usage);
	}
	fprintf(f, ",\"exit_status\":%d}}\n", status);
	free(msg);
}

int main(int argc, char **argv)
{
	struct ringctl rc = {.timeout_ms = 10000, .fmt = WRITER_PLAIN};
	FILE *err = stderr, *cap;
	char **words, *text = NULL;
	size_t len = 0;
	int n, r;

	rc.sock = getenv("RINGCTL_SOCKET");
	if (!rc.sock || !*rc.sock)
		rc.sock = CLIENT_DEFAULT_SOCKET;
	words = calloc((size_t)argc + 1, sizeof(*words));
	if (!words) {
		perror("ringctl");
		return EXIT_TROUBLE;
	}
	/* Every module says what went wrong as "ringctl: ..." on stderr; for
	 * -f json those lines are gathered here and become one error object
	 * (ringctl_json_error), so that no module needs to know the format.
	 * Until -f is read, gather them all. */
	cap = open_memstream(&text, &len);
	if (cap)
		stderr = cap;
	r = ringctl_global(&rc, argc, argv, words, &n);
	if (cap && rc.fmt != WRITER_JSON) {
		stderr = err;
		fclose(cap);
		cap = NULL;
		fwrite(text, 1, len, stderr);
		free(text);
		text = NULL;
	}
	if (r) {
		r--;
	} else if (rc.version && rc.fmt != WRITER_PLAIN) {
		struct writer *w = writer_new(stdout, rc.fmt);

		writer_str(w, "version", RING_VERSION);
		writer_finish(w);
	} else if (rc.version) {
		printf("ringctl %s\n", RING_VERSION);
	} else if (rc.help && !n)
		help_print_overview(stdout);
	else
		r = ringctl_run(&rc, n, words);
	free(words);
	if (cap) {
		stderr = err;
		fclose(cap);
		if (len)
			ringctl_json_error(stderr, text, r);
		free(text);
	}
	return r;
}
