/* ring-coordinator: command line and startup only; see coord.c. */
#include <stdio.h>

#include "cfg.h"
#include "coord.h"
#include "daemon_opts.h"
#include "log.h"

#define PROG "ring-coordinator"

static void usage(FILE *f, const char *subsys)
{
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

int main(int argc, char **argv)
{
	struct daemon_opts o = {
		.prog = PROG,
		.daemon = CFG_DAEMON_COORDINATOR,
		.usage = usage,
		.path = "/etc/ringd/coordinator.conf",
	};
	struct coord_conf conf;
	struct coord co;
	int rc, warnings;

	rc = daemon_opts_parse(&o, argc, argv);
	if (rc >= 0)
		return rc;
	log_init(PROG, o.debug, o.check);
	coord_conf_defaults(&conf);
	warnings = cfg_load_daemon(PROG, o.path, &coord_conf_type, &conf);
	if (warnings < 0) {
		coord_conf_free(&conf);
		return 1;
	}
	if (o.check) {
		if (warnings)
			printf("%s: ok, %d warning%s\n", o.path, warnings,
			       warnings == 1 ? "" : "s");
		else
			printf("%s: ok\n", o.path);
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
