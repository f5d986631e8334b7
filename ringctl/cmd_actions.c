/* The commands that make the ring do something: survey (and wait for
 * it), test, test allreduce. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "error_report.h"
#include "frame.h"
#include "allreduce_cli.h"
#include "report.h"
#include "testargs.h"

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
	error_report(EXIT_TROUBLE, "timeout", NULL, NULL,
		     "survey not done within %d s", wait_s);
	return -1;
}

int ringctl_survey(const struct ringctl *rc, int argc, char **argv)
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
			return error_report_usage(
				"survey takes --wait and, with "
				"it, -v; not '%s'",
				argv[i]);
	}
	if (verbose && !wait)
		return error_report_usage("survey -v goes with --wait");
	if (wait) {
		/* Quietly: there may be no earlier survey. */
		struct ringctl quiet = *rc;

		quiet.quiet = 1;
		t = ringctl_topology(&quiet, &hold);
		since = t ? t->surveyed_ms : 0;
		frame_free(hold);
	}
	sr.rings = (char **)rc->rings;
	sr.n_rings = rc->n_rings;
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
		error_report_notice("survey_started", "%s", rep->ack->text);
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

int ringctl_allreduce(const struct ringctl *rc, int argc, char **argv)
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
		return error_report_usage("%s", err);
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

int ringctl_test(const struct ringctl *rc, int argc, char **argv)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__TestRequest tr = RING__TEST_REQUEST__INIT;
	struct testargs t;
	struct ringctl slow = *rc;
	struct writer *w;
	char err[256];
	int ret;

	if (testargs_parse(argc, argv, &t, err, sizeof(err)) < 0)
		return error_report_usage("%s", err);
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
