/* ring-coordinator: command line and startup only; see coord.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "coord.h"
#include "log.h"

#define PROG "ring-coordinator"

static void usage(FILE *f)
{
	char subsys[256];

	cfg_debug_names(CFG_DAEMON_COORDINATOR, subsys, sizeof(subsys));
	fprintf(f,
		"usage: " PROG " [-c CONFIG] [-n] [-d SUBSYS] [-V]\n"
		"  -c CONFIG  configuration file (default "
		"/etc/ringd/coordinator.conf)\n"
		"  -n         check the configuration, its CA, certificate and "
		"key, and exit\n"
		"  -d SUBSYS  debug output for subsystems, comma-separated:\n"
		"             %s\n"
		"  -V, --version  print the version\n"
		"  -h, --help     print this help\n",
		subsys);
}

/* Errors and warnings of the configuration, one per line, then a count.
 * The same for -n and for a start: what -n passes, the start accepts. */
static int load_conf(struct coord_conf *conf, const char *path)
{
	struct cfg_ctx ctx = {0};

	cfg_ctx_to_stderr(&ctx, PROG);
	coord_conf_defaults(conf);
	if (coord_conf_load(conf, path, &ctx) == 0 || errno == EINVAL)
		coord_conf_verify(conf, &ctx);
	return cfg_ctx_summary(&ctx, PROG, path);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *path = "/etc/ringd/coordinator.conf";
	const char *debug = NULL;
	struct coord_conf conf;
	struct coord co;
	char bad[64], subsys[256], optbuf[4];
	int check = 0, opt, rc, warnings;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:nd:Vh", longopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'd':
			if (cfg_debug_check(CFG_DAEMON_COORDINATOR, optarg, bad,
					    sizeof(bad)) < 0) {
				cfg_debug_names(CFG_DAEMON_COORDINATOR, subsys,
						sizeof(subsys));
				fprintf(stderr,
					PROG ": -d: unknown debug subsystem "
					     "'%s' (known: %s)\n",
					bad, subsys);
				return 2;
			}
			debug = optarg;
			break;
		case 'V':
			printf(PROG " %s\n", RING_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			return cfg_usage_error(PROG, "missing argument to",
					       cfg_bad_option(argv, optind,
							      optopt, optbuf,
							      sizeof(optbuf)));
		default:
			return cfg_usage_error(PROG, "unknown option",
					       cfg_bad_option(argv, optind,
							      optopt, optbuf,
							      sizeof(optbuf)));
		}
	}
	if (optind != argc)
		return cfg_usage_error(PROG, "unexpected argument",
				       argv[optind]);
	log_init(PROG, debug, check);
	warnings = load_conf(&conf, path);
	if (warnings < 0) {
		coord_conf_free(&conf);
		return 1;
	}
	if (check) {
		if (warnings)
			printf("%s: ok, %d warning%s\n", path, warnings,
			       warnings == 1 ? "" : "s");
		else
			printf("%s: ok\n", path);
		coord_conf_free(&conf);
		return 0;
	}
	if (coord_init(&co, &conf) < 0) {
		coord_conf_free(&conf);
		return 1;
	}
	rc = coord_run(&co);
	coord_fini(&co);
	coord_conf_free(&conf);
	log_fini();
	return rc ? 1 : 0;
}
