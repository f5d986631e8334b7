/* ring-agent: command line and startup only; see agent.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "cfg.h"
#include "log.h"

#define PROG "ring-agent"

static void usage(FILE *f)
{
	char subsys[256];

	cfg_debug_names(CFG_DAEMON_AGENT, subsys, sizeof(subsys));
	fprintf(f,
		"usage: " PROG " [-c CONFIG] [-n] [-i GLOB]... [-r GLOB]... "
		"[-d SUBSYS] [-V]\n"
		"  -c CONFIG  configuration file (default /etc/ringd/agent.conf)\n"
		"  -n         check the configuration, its CA, certificate and "
		"key, and exit\n"
		"  -i GLOB    data interfaces: only these (replaces the file's\n"
		"             data_interface patterns; repeatable)\n"
		"  -r GLOB    RDMA devices: only these (replaces the file's\n"
		"             rdma_device patterns; repeatable)\n"
		"  -d SUBSYS  debug output for subsystems, comma-separated:\n"
		"             %s\n"
		"  -V, --version  print the version\n"
		"  -h, --help     print this help\n",
		subsys);
}

/* Errors and warnings of the configuration, one per line, then a count.
 * The same for -n and for a start: what -n passes, the start accepts.
 * Returns the number of warnings, or -1 after errors. */
static int load_conf(struct agent_conf *conf, const char *path)
{
	struct cfg_ctx ctx = {0};

	cfg_ctx_to_stderr(&ctx, PROG);
	agent_conf_defaults(conf);
	if (agent_conf_load(conf, path, &ctx) == 0 || errno == EINVAL)
		agent_conf_verify(conf, &ctx);
	return cfg_ctx_summary(&ctx, PROG, path);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *path = "/etc/ringd/agent.conf";
	const char *debug = NULL;
	struct agent_conf conf;
	struct agent *a;
	const char *ifs[AGENT_CONF_MAX_GLOBS], *devs[AGENT_CONF_MAX_GLOBS];
	unsigned n_ifs = 0, n_devs = 0;
	char bad[64], subsys[256], optbuf[4];
	int check = 0, opt, rc, warnings;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:ni:r:d:Vh", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'i':
		case 'r':
			if ((opt == 'i' ? n_ifs : n_devs) >=
			    AGENT_CONF_MAX_GLOBS) {
				fprintf(stderr, PROG ": -%c: at most %d\n", opt,
					AGENT_CONF_MAX_GLOBS);
				return 2;
			}
			if (opt == 'i')
				ifs[n_ifs++] = optarg;
			else
				devs[n_devs++] = optarg;
			break;
		case 'c':
			path = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'd':
			if (cfg_debug_check(CFG_DAEMON_AGENT, optarg, bad,
					    sizeof(bad)) < 0) {
				cfg_debug_names(CFG_DAEMON_AGENT, subsys,
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
	if (warnings < 0)
		return 1;
	if ((n_ifs && agent_conf_set_globs(&conf, "-i", ifs, n_ifs) < 0) ||
	    (n_devs && agent_conf_set_globs(&conf, "-r", devs, n_devs) < 0))
		return 2;
	if (check) {
		printf("%s: ok (node %s, coordinator %s:%u)", path, conf.node,
		       conf.coordinator_host, conf.coordinator_port);
		if (warnings)
			printf(", %d warning%s", warnings,
			       warnings == 1 ? "" : "s");
		printf("\n");
		return 0;
	}
	a = agent_new(&conf);
	if (!a)
		return 1;
	rc = agent_run(a);
	agent_free(a);
	log_fini();
	return rc ? 1 : 0;
}
