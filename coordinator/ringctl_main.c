/* ringctl: the operator's command. Exit status: 0 ok/healthy, 1 degraded,
 * 2 cannot reach the coordinator, refused request or bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "pki.h"

#define EXIT_DEGRADED 1
#define EXIT_TROUBLE 2

struct ringctl {
	const char *sock;
	int timeout_ms;
	enum writer_format fmt;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringctl [-s SOCKET] [-f plain|keyvalue|json] [-t SECONDS] COMMAND\n"
		"commands:\n"
		"  status                      expected vs connected nodes\n"
		"  inventory NODE              one node's full inventory\n"
		"  forget NODE                 drop a node that is down (root)\n"
		"  pki init DIR [--cn NAME] [--days N]   create a cluster CA\n"
		"  pki issue DIR NAME [--days N]         key + certificate for NAME\n"
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

/* Send one request and hand back the reply, or print why not. */
static Ring__Envelope *ringctl_call(const struct ringctl *rc,
				    Ring__Envelope *req)
{
	Ring__Envelope *rep = NULL;
	char err[512];

	if (ctl_request(rc->sock, rc->timeout_ms, req, &rep, err, sizeof(err)) <
	    0) {
		fprintf(stderr, "ringctl: %s\n", err);
		return NULL;
	}
	if (rep->body_case == RING__ENVELOPE__BODY_ERROR) {
		fprintf(stderr, "ringctl: coordinator: %s\n", rep->error->text);
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
	rep = ringctl_call(rc, &req);
	if (!rep)
		return EXIT_TROUBLE;
	if (rep->body_case != RING__ENVELOPE__BODY_STATUS_REPLY) {
		fprintf(stderr, "ringctl: unexpected reply\n");
		frame_free(rep);
		return EXIT_TROUBLE;
	}
	w = writer_new(stdout, rc->fmt);
	ctl_render_status(w, rep->status_reply);
	writer_finish(w);
	health = ctl_status_health(rep->status_reply);
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
	rep = ringctl_call(rc, &req);
	if (!rep)
		return EXIT_TROUBLE;
	if (rep->body_case != RING__ENVELOPE__BODY_INVENTORY_REPLY) {
		fprintf(stderr, "ringctl: unexpected reply\n");
		frame_free(rep);
		return EXIT_TROUBLE;
	}
	w = writer_new(stdout, rc->fmt);
	ctl_render_inventory(w, rep->inventory_reply);
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
	rep = ringctl_call(rc, &req);
	if (!rep)
		return EXIT_TROUBLE;
	if (rep->body_case == RING__ENVELOPE__BODY_ACK)
		printf("%s\n", rep->ack->text);
	frame_free(rep);
	return 0;
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
	const char *dir, *name = NULL, *cn = "ringd cluster CA";
	unsigned days = 0;
	char err[512];
	int i, init;

	if (argc < 2)
		return bad_usage("pki needs 'init DIR' or 'issue DIR NAME'%s",
				 "");
	init = !strcmp(argv[0], "init");
	if (!init && strcmp(argv[0], "issue"))
		return bad_usage("unknown pki command '%s'", argv[0]);
	dir = argv[1];
	i = 2;
	if (!init) {
		if (argc < 3)
			return bad_usage("pki issue needs a NAME%s", "");
		name = argv[2];
		i = 3;
	}
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--days") && i + 1 < argc) {
			if (parse_days(argv[++i], &days) < 0)
				return bad_usage("--days: '%s' is not 1..36500",
						 argv[i]);
		} else if (init && !strcmp(argv[i], "--cn") && i + 1 < argc) {
			cn = argv[++i];
		} else {
			return bad_usage("unexpected argument '%s'", argv[i]);
		}
	}
	if (init ? pki_init(dir, cn, days ? days : 3650, err, sizeof(err))
		 : pki_issue(dir, name, days ? days : 825, err, sizeof(err))) {
		fprintf(stderr, "ringctl: %s\n", err);
		return EXIT_TROUBLE;
	}
	if (init)
		printf("created CA %s/ca.crt (key %s/ca.key)\n", dir, dir);
	else
		printf("issued %s/%s.crt (key %s/%s.key)\n", dir, name, dir,
		       name);
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
		rc.sock = CTL_DEFAULT_SOCKET;
	while ((opt = getopt(argc, argv, "+s:f:t:hV")) != -1) {
		switch (opt) {
		case 's':
			rc.sock = optarg;
			break;
		case 'f':
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
	if (!strcmp(cmd, "status") && argc == 0)
		return cmd_status(&rc);
	if (!strcmp(cmd, "inventory") && argc == 1)
		return cmd_inventory(&rc, argv[0]);
	if (!strcmp(cmd, "forget") && argc == 1)
		return cmd_forget(&rc, argv[0]);
	if (!strcmp(cmd, "pki"))
		return cmd_pki(argc, argv);
	if (!strcmp(cmd, "status") || !strcmp(cmd, "inventory") ||
	    !strcmp(cmd, "forget"))
		return bad_usage("wrong number of arguments for '%s'", cmd);
	return bad_usage("unknown command '%s'", cmd);
}
