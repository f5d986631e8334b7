/* The commands that read what the coordinator knows: status (also as
 * the SVG picture), inventory, alerts, history; and forget, which drops
 * a node from it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "error_report.h"
#include "frame.h"
#include "clock.h"
#include "history.h"
#include "render.h"
#include "svg.h"

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
		error_report(EXIT_TROUBLE, "svg", NULL, NULL,
			     "cannot draw the picture: %s", strerror(errno));
		return EXIT_TROUBLE;
	}
	if (fwrite(doc, 1, len, stdout) != len || fflush(stdout) == EOF) {
		error_report(EXIT_TROUBLE, "write", NULL, NULL,
			     "writing the picture: %s", strerror(errno));
		free(doc);
		return EXIT_TROUBLE;
	}
	free(doc);
	return health ? EXIT_DEGRADED : 0;
}

int ringctl_status(const struct ringctl *rc, int verbose)
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

int ringctl_inventory(const struct ringctl *rc, const char *node)
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
int ringctl_alerts(const struct ringctl *rc, int argc, char **argv)
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
			return error_report_usage("--since needs a duration "
						  "(e.g. 30m, 6h, 7d)");
		else
			return error_report_usage("alerts takes only --all and "
						  "--since, not '%s'",
						  argv[i]);
	}
	if (since && !ar.all)
		return error_report_usage("--since goes with --all (the "
					  "resolved alerts since then)");
	/* The one --since grammar (history's). */
	if (since && history_parse_duration(since, &ms) < 0)
		return error_report_usage(
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
int ringctl_history(const struct ringctl *rc, int argc, char **argv)
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
			return error_report_usage("--since needs a duration "
						  "(e.g. 30m, 6h, 7d)");
		else if (argv[i][0] != '-' && !edge)
			edge = argv[i];
		else
			return error_report_usage("history takes one EDGE, "
						  "--since and --before, not "
						  "'%s'",
						  argv[i]);
	}
	if (!edge)
		return error_report_usage("history needs an EDGE (e.g. n1-n2)");
	if (since && history_parse_duration(since, &ms) < 0)
		return error_report_usage(
			"--since: '%s' is not a duration from 1s to 3650d "
			"(e.g. 90s, 30m, 6h, 7d, 2w)",
			since);
	if (before &&
	    (sscanf(before, "%llu:%llu%c", &bms, &bid, &tail) != 2 || !bms))
		return error_report_usage(
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

int ringctl_forget(const struct ringctl *rc, const char *node)
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
