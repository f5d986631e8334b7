/* ringctl: the operator's command. Exit status: 0 ok/healthy, 1 degraded,
 * 2 cannot reach the coordinator, refused request or bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "testlimits.h"
#include "pki.h"
#include "render.h"
#include "testargs.h"
#include "writer.h"

#define EXIT_DEGRADED 1
#define EXIT_TROUBLE 2

struct ringctl {
	const char *sock;
	int timeout_ms;
	enum writer_format fmt;
	const char *fmt_name; /* as given with -f, for ranks' text formats */
	int quiet;	      /* polling: no message per failed call */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringctl [-s SOCKET] [-f plain|keyvalue|json] [-t SECONDS] COMMAND\n"
		"commands:\n"
		"  status                      expected vs connected nodes\n"
		"  inventory NODE              one node's full inventory\n"
		"  forget NODE                 drop a node that is down (root)\n"
		"  survey [--wait]             survey the data plane now (root)\n"
		"  ranks [-f hostfile|rankfile|torchrun|env|json|plain|keyvalue]\n"
		"                              rank order from the last survey\n"
		"  test bw A B [--streams N] [--duration S] [--warmup S]\n"
		"              [--direction a-to-b|b-to-a|both]   TCP bandwidth (root)\n"
		"  test lat A B [--sizes B,B,...] [--iterations N] TCP latency (root)\n"
		"  test rdma-bw A B --op write|read [--qps N] [--size S]\n"
		"              [--duration S] [--warmup S] [--iterations N]\n"
		"              [--tx-depth N] [--cq-mod N] [--post-list N]\n"
		"              [--gid-a IDX] [--gid-b IDX] [--mtu N]\n"
		"                              RDMA bandwidth, A posts (root)\n"
		"  test rdma-lat A B --op write|read [--sizes S,S,...]\n"
		"              [--iterations N] [--gid-a IDX] [--gid-b IDX]\n"
		"                              RDMA latency, A posts (root)\n"
		"              sizes take K and M suffixes (binary)\n"
		"  pki init DIR [--cn NAME] [--days N]   create a cluster CA\n"
		"  pki issue DIR NAME [--coordinator] [--days N]\n"
		"                                        key + certificate for node NAME\n"
		"                                        (--coordinator: for the coordinator)\n"
		"exit status: 0 healthy, 1 degraded, 2 unreachable or bad usage\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "ringctl: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	usage(stderr);
	return EXIT_TROUBLE;
}

/* Error texts can carry what agents sent: never a raw control byte on the
 * operator's terminal. */
static void ringctl_print_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
}

/* Send one request and hand back its reply of type want, or print why not
 * (unless rc->quiet: polling). */
static Ring__Envelope *ringctl_call(const struct ringctl *rc,
				    Ring__Envelope *req,
				    Ring__Envelope__BodyCase want)
{
	Ring__Envelope *rep = NULL;
	char err[512];

	if (client_request(rc->sock, rc->timeout_ms, req, &rep, err,
			   sizeof(err)) < 0) {
		if (!rc->quiet)
			fprintf(stderr, "ringctl: %s\n", err);
		return NULL;
	}
	if (rep->body_case == RING__ENVELOPE__BODY_ERROR) {
		if (!rc->quiet) {
			fputs("ringctl: coordinator: ", stderr);
			ringctl_print_escaped(stderr, rep->error->text);
			fputc('\n', stderr);
		}
		frame_free(rep);
		return NULL;
	}
	if (rep->body_case != want) {
		if (!rc->quiet)
			fprintf(stderr, "ringctl: unexpected reply (%s)\n",
				frame_type_name((uint16_t)rep->body_case));
		frame_free(rep);
		return NULL;
	}
	return rep;
}

static int cmd_status(const struct ringctl *rc)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	struct writer *w;
	int health;

	req.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	req.status_request = &sr;
	rep = ringctl_call(rc, &req, RING__ENVELOPE__BODY_STATUS_REPLY);
	if (!rep)
		return EXIT_TROUBLE;
	w = writer_new(stdout, rc->fmt);
	render_status(w, rep->status_reply);
	writer_finish(w);
	health = render_status_health(rep->status_reply);
	frame_free(rep);
	return health ? EXIT_DEGRADED : 0;
}

static int cmd_inventory(const struct ringctl *rc, const char *node)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__InventoryRequest ir = RING__INVENTORY_REQUEST__INIT;
	struct writer *w;

	ir.node = (char *)node;
	req.body_case = RING__ENVELOPE__BODY_INVENTORY_REQUEST;
	req.inventory_request = &ir;
	rep = ringctl_call(rc, &req, RING__ENVELOPE__BODY_INVENTORY_REPLY);
	if (!rep)
		return EXIT_TROUBLE;
	w = writer_new(stdout, rc->fmt);
	render_inventory(w, rep->inventory_reply);
	writer_finish(w);
	frame_free(rep);
	return 0;
}

static int cmd_forget(const struct ringctl *rc, const char *node)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__ForgetRequest fr = RING__FORGET_REQUEST__INIT;

	fr.node = (char *)node;
	req.body_case = RING__ENVELOPE__BODY_FORGET_REQUEST;
	req.forget_request = &fr;
	rep = ringctl_call(rc, &req, RING__ENVELOPE__BODY_ACK);
	if (!rep)
		return EXIT_TROUBLE;
	printf("%s\n", rep->ack->text);
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

static int cmd_ranks(const struct ringctl *rc)
{
	Ring__Envelope *hold = NULL;
	Ring__Topology *t = ringctl_topology(rc, &hold);
	struct writer *w;
	char err[512];
	int ret = 0;

	if (!t)
		return EXIT_TROUBLE;
	if (!t->n_ranks) {
		fprintf(stderr,
			"ringctl: no rank order: the data plane is a %s, not a "
			"ring, line or pair\n",
			t->kind);
		ret = EXIT_DEGRADED;
	} else if (rc->fmt_name &&
		   render_ranks_check(t, rc->fmt_name, err, sizeof(err)) < 0) {
		/* Agent-supplied names outside the safe set: print nothing
		 * an operator might source. */
		fprintf(stderr, "ringctl: %s\n", err);
		ret = EXIT_DEGRADED;
	} else if (rc->fmt_name &&
		   render_ranks_text(stdout, t, rc->fmt_name) == 0) {
		ret = 0;
	} else {
		w = writer_new(stdout, rc->fmt);
		render_ranks(w, t);
		writer_finish(w);
	}
	frame_free(hold);
	return ret;
}

/* Poll until a survey newer than `since` is done, within the deadline. */
static int ringctl_wait_survey(const struct ringctl *rc, uint64_t since,
			       int wait_s)
{
	struct ringctl quiet = *rc;

	quiet.quiet = 1;
	for (int i = 0; i < wait_s * 4; i++) {
		Ring__Envelope *hold = NULL;
		Ring__Topology *t;

		usleep(250000);
		t = ringctl_topology(&quiet, &hold);
		if (t && t->surveyed_ms > since) {
			frame_free(hold);
			return 0;
		}
		frame_free(hold);
	}
	fprintf(stderr, "ringctl: survey not done within %d s\n", wait_s);
	return -1;
}

static int cmd_survey(const struct ringctl *rc, int argc, char **argv)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep, *hold = NULL;
	Ring__SurveyRequest sr = RING__SURVEY_REQUEST__INIT;
	Ring__Topology *t;
	uint64_t since = 0;
	int wait = argc == 1 && !strcmp(argv[0], "--wait");

	if (argc > 1 || (argc == 1 && !wait))
		return bad_usage("survey takes only --wait%s", "");
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
	printf("%s\n", rep->ack->text);
	frame_free(rep);
	if (!wait)
		return 0;
	if (ringctl_wait_survey(rc, since, 3600) < 0)
		return EXIT_TROUBLE;
	return cmd_status(rc);
}

static int cmd_test(const struct ringctl *rc, int argc, char **argv)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__TestRequest tr = RING__TEST_REQUEST__INIT;
	struct testargs t;
	struct ringctl slow = *rc;
	struct writer *w;
	char err[256];
	int ret;

	if (testargs_parse(argc, argv, &t, err, sizeof(err)) < 0)
		return bad_usage("%s", err);
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
	render_report(w, rep->test_report);
	writer_finish(w);
	ret = *rep->test_report->error ? EXIT_DEGRADED : 0;
	frame_free(rep);
	return ret;
}

static int parse_days(const char *s, unsigned *days)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v < 1 || v > 36500)
		return -1;
	*days = (unsigned)v;
	return 0;
}

static int cmd_pki(int argc, char **argv)
{
	const char *pos[2] = {NULL, NULL}, *cn = "ringd cluster CA";
	enum pki_role role = PKI_ROLE_NODE;
	char err[512], serial[PKI_SERIAL_LEN];
	const char *dir, *name;
	unsigned days = 0;
	int i, init, npos = 0;

	if (argc < 1)
		return bad_usage("pki needs 'init DIR' or 'issue DIR NAME'%s",
				 "");
	init = !strcmp(argv[0], "init");
	if (!init && strcmp(argv[0], "issue"))
		return bad_usage("unknown pki command '%s'", argv[0]);
	/* Options may come before or after DIR and NAME. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--days") && i + 1 < argc) {
			if (parse_days(argv[++i], &days) < 0)
				return bad_usage("--days: '%s' is not 1..36500",
						 argv[i]);
		} else if (init && !strcmp(argv[i], "--cn") && i + 1 < argc) {
			cn = argv[++i];
		} else if (!init && !strcmp(argv[i], "--coordinator")) {
			role = PKI_ROLE_COORDINATOR;
		} else if (argv[i][0] != '-' && npos < (init ? 1 : 2)) {
			pos[npos++] = argv[i];
		} else {
			return bad_usage("unexpected argument '%s'", argv[i]);
		}
	}
	if (npos < 1)
		return bad_usage("pki %s needs a DIR", argv[0]);
	if (!init && npos < 2)
		return bad_usage("pki issue needs a NAME%s", "");
	dir = pos[0];
	name = pos[1];
	if (init ? pki_init(dir, cn, days ? days : 3650, err, sizeof(err))
		 : pki_issue(dir, name, role, days ? days : 825, serial,
			     sizeof(serial), err, sizeof(err))) {
		fprintf(stderr, "ringctl: %s\n", err);
		return EXIT_TROUBLE;
	}
	if (init)
		printf("created CA %s/ca.crt (key %s/ca.key)\n", dir, dir);
	else
		/* The serial is what 'deny_serial' names to revoke it. */
		printf("issued %s/%s.crt (key %s/%s.key), %s certificate, "
		       "serial %s\n",
		       dir, name, dir, name,
		       role == PKI_ROLE_COORDINATOR ? "coordinator" : "node",
		       serial);
	return 0;
}

int main(int argc, char **argv)
{
	struct ringctl rc = {.timeout_ms = 10000, .fmt = WRITER_PLAIN};
	const char *cmd;
	char *end;
	int opt;

	rc.sock = getenv("RINGCTL_SOCKET");
	if (!rc.sock || !*rc.sock)
		rc.sock = CLIENT_DEFAULT_SOCKET;
	while ((opt = getopt(argc, argv, "+s:f:t:hV")) != -1) {
		switch (opt) {
		case 's':
			rc.sock = optarg;
			break;
		case 'f':
			rc.fmt_name = optarg;
			if (!strcmp(optarg, "hostfile") ||
			    !strcmp(optarg, "rankfile") ||
			    !strcmp(optarg, "torchrun") ||
			    !strcmp(optarg, "env"))
				break; /* ranks only; checked there */
			if (writer_format_parse(optarg, &rc.fmt) < 0)
				return bad_usage(
					"unknown format '%s' (plain, keyvalue, json)",
					optarg);
			break;
		case 't': {
			double t = strtod(optarg, &end);

			if (end == optarg || *end || t <= 0 || t > 3600)
				return bad_usage(
					"-t: '%s' is not a number of seconds in (0, 3600]",
					optarg);
			rc.timeout_ms = (int)(t * 1000);
			break;
		}
		case 'V':
			printf("ringctl %s\n", RING_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_TROUBLE;
		}
	}
	if (optind >= argc)
		return bad_usage("no command given%s", "");
	cmd = argv[optind++];
	argc -= optind;
	argv += optind;
	if (strcmp(cmd, "ranks") && rc.fmt_name &&
	    writer_format_parse(rc.fmt_name, &rc.fmt) < 0)
		return bad_usage("-f %s is for 'ranks' only", rc.fmt_name);
	if (!strcmp(cmd, "status") && argc == 0)
		return cmd_status(&rc);
	if (!strcmp(cmd, "inventory") && argc == 1)
		return cmd_inventory(&rc, argv[0]);
	if (!strcmp(cmd, "forget") && argc == 1)
		return cmd_forget(&rc, argv[0]);
	if (!strcmp(cmd, "pki"))
		return cmd_pki(argc, argv);
	if (!strcmp(cmd, "ranks") && argc == 2 && !strcmp(argv[0], "-f")) {
		/* `ranks -f torchrun` reads naturally; accept it there too. */
		rc.fmt_name = argv[1];
		if (writer_format_parse(argv[1], &rc.fmt) < 0 &&
		    strcmp(argv[1], "hostfile") &&
		    strcmp(argv[1], "rankfile") &&
		    strcmp(argv[1], "torchrun") && strcmp(argv[1], "env"))
			return bad_usage("ranks: unknown format '%s'", argv[1]);
		argc = 0;
	}
	if (!strcmp(cmd, "ranks") && argc == 0)
		return cmd_ranks(&rc);
	if (!strcmp(cmd, "survey"))
		return cmd_survey(&rc, argc, argv);
	if (!strcmp(cmd, "test"))
		return cmd_test(&rc, argc, argv);

	if (!strcmp(cmd, "status") || !strcmp(cmd, "inventory") ||
	    !strcmp(cmd, "forget"))
		return bad_usage("wrong number of arguments for '%s'", cmd);
	return bad_usage("unknown command '%s'", cmd);
}
