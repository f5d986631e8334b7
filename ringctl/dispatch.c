/* ringctl COMMAND: the command words to the code that runs it, each
 * command's own argument checks that give its usage, and help. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "client.h"
#include "error_report.h"
#include "help.h"
#include "explain.h"
#include "plan.h"
#include "watch_cmd.h"

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
		return error_report_usage("help: no command '%s' (ringctl "
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

/* The commands about one ring of a site (or, survey, several): --ring
 * is theirs. */
static int ringctl_takes_ring(const char *cmd, int argc, char **argv)
{
	static const char *const cmds[] = {"status",  "ranks", "check",
					   "explain", "plan",  "history",
					   "watch",   "survey"};

	if (!strcmp(cmd, "test"))
		return argc > 0 && !strcmp(argv[0], "allreduce");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmd, cmds[i]))
			return 1;
	return 0;
}

/* --ring out of the command's words: one ring, or survey's rings. */
static int ringctl_ring_option(struct ringctl *rc, const char *cmd, int *argc,
			       char **argv)
{
	int survey = !strcmp(cmd, "survey");
	char err[256];

	if (!ringctl_takes_ring(cmd, *argc, argv))
		return 0;
	if (ring_arg_take(argc, argv, rc->rings, survey ? RING_ARG_MAX : 1,
			  &rc->n_rings, err, sizeof(err)) < 0)
		return error_report_usage("%s", err);
	/* survey --ring ID --wait: then that ring's status. */
	rc->ring = rc->n_rings == 1 ? rc->rings[0] : NULL;
	client_set_ring(rc->ring);
	return 0;
}

int ringctl_run(struct ringctl *rc, int argc, char **argv)
{
	const struct help_cmd *cmd_entry;
	const char *cmd;
	int used = 0;

	if (argc < 1)
		return error_report_usage("no command given");
	cmd_entry = help_find(argc, argv, &used);
	error_report_command(cmd_entry, !cmd_entry && help_is_group(argv[0])
						? argv[0]
						: NULL);
	if (rc->help)
		return ringctl_help(rc, argc, argv);
	cmd = argv[0];
	argc--;
	argv++;
	if (strcmp(cmd, "ranks") && rc->fmt_name &&
	    ringctl_text_format(rc->fmt_name))
		return error_report_usage("-f %s is for 'ranks' only",
					  rc->fmt_name);
	/* A picture of the ring, of status alone: other replies have none. */
	if (strcmp(cmd, "status") && rc->fmt_name &&
	    !strcmp(rc->fmt_name, "svg"))
		return error_report_usage("-f svg is for 'status' only (the "
					  "picture of the ring)");
	if (!strcmp(cmd, "help"))
		return ringctl_help(rc, argc, argv);
	if (ringctl_ring_option(rc, cmd, &argc, argv))
		return EXIT_TROUBLE;
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
				return error_report_usage(
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
		return error_report_usage(
			"explain needs one EDGE (a-b) or NODE");
	if (!strcmp(cmd, "explain"))
		return explain_cmd(rc->sock, rc->timeout_ms, rc->fmt, argc,
				   argv);
	if (!strcmp(cmd, "watch")) {
		struct watch_cmd_opts wo;
		char err[256];

		if (watch_cmd_parse(argc, argv, &wo, err, sizeof(err)) < 0)
			return error_report_usage("%s", err);
		return watch_cmd_run(rc->sock, rc->timeout_ms, rc->fmt, &wo);
	}
	if (!strcmp(cmd, "plan")) {
		struct plan_opts *po = malloc(sizeof(*po));
		char err[512];
		int r;

		if (!po)
			return EXIT_TROUBLE;
		r = plan_cmd_parse(argc, argv, po, err, sizeof(err)) < 0
			    ? error_report_usage("%s", err)
			    : plan_cmd_run(rc->sock, rc->timeout_ms, rc->fmt,
					   po);
		free(po);
		return r;
	}
	if (!strcmp(cmd, "ranks")) {
		if (argc)
			return error_report_usage("ranks takes no arguments, "
						  "not '%s'",
						  argv[0]);
		return ringctl_ranks(rc);
	}
	if (!strcmp(cmd, "inventory") || !strcmp(cmd, "forget")) {
		if (argc != 1)
			return error_report_usage("%s needs one NODE", cmd);
		return !strcmp(cmd, "inventory")
			       ? ringctl_inventory(rc, argv[0])
			       : ringctl_forget(rc, argv[0]);
	}
	return error_report_usage("unknown command '%s' (ringctl --help lists "
				  "them)",
				  cmd);
}
