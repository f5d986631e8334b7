/* ring-agent: command line and startup only; see agent.c. */
#include <stdio.h>

#include "agent.h"
#include "cfg.h"
#include "daemon_opts.h"
#include "log.h"

#define PROG "ring-agent"

static void usage(FILE *f, const char *subsys)
{
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

/* -i and -r: kept until the configuration is loaded, then they replace
 * its patterns. */
struct globs {
	const char *ifs[AGENT_CONF_MAX_GLOBS], *devs[AGENT_CONF_MAX_GLOBS];
	unsigned n_ifs, n_devs;
};

static int add_glob(int opt, const char *arg, void *arg_globs)
{
	struct globs *g = arg_globs;

	if ((opt == 'i' ? g->n_ifs : g->n_devs) >= AGENT_CONF_MAX_GLOBS) {
		fprintf(stderr, PROG ": -%c: at most %d\n", opt,
			AGENT_CONF_MAX_GLOBS);
		return 2;
	}
	if (opt == 'i')
		g->ifs[g->n_ifs++] = arg;
	else
		g->devs[g->n_devs++] = arg;
	return -1;
}

int main(int argc, char **argv)
{
	struct globs g = {0};
	struct daemon_opts o = {
		.prog = PROG,
		.daemon = CFG_DAEMON_AGENT,
		.usage = usage,
		.more_opts = "i:r:",
		.more = add_glob,
		.more_arg = &g,
		.path = "/etc/ringd/agent.conf",
	};
	struct agent_conf conf;
	struct agent *a;
	int rc, warnings;

	rc = daemon_opts_parse(&o, argc, argv);
	if (rc >= 0)
		return rc;
	log_init(PROG, o.debug, o.check);
	agent_conf_defaults(&conf);
	warnings = cfg_load_daemon(PROG, o.path, &agent_conf_type, &conf);
	if (warnings < 0)
		return 1;
	if ((g.n_ifs &&
	     agent_conf_set_globs(&conf, "-i", g.ifs, g.n_ifs) < 0) ||
	    (g.n_devs &&
	     agent_conf_set_globs(&conf, "-r", g.devs, g.n_devs) < 0))
		return 2;
	if (o.check) {
		printf("%s: ok (node %s, coordinator %s:%u)", o.path, conf.node,
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
