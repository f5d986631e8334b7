/* ring-coordinator: command line and startup only; see coord.c. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "coord.h"
#include "log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ring-coordinator [-c CONFIG] [-n] [-d SUBSYS] [-V]\n"
		"  -c CONFIG  configuration file (default /etc/ringd/coordinator.conf)\n"
		"  -n         check the configuration and exit\n"
		"  -d SUBSYS  debug output for subsystems (conn,agents,control,all)\n"
		"  -V         print the version\n");
}

int main(int argc, char **argv)
{
	const char *path = "/etc/ringd/coordinator.conf";
	const char *debug = NULL;
	struct coord_conf conf;
	struct coord co;
	int check = 0, opt, rc;

	while ((opt = getopt(argc, argv, "c:nd:Vh")) != -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'd':
			debug = optarg;
			break;
		case 'V':
			printf("ring-coordinator %s\n", RING_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	log_init("ring-coordinator", debug, check);
	coord_conf_defaults(&conf);
	if (coord_conf_load(&conf, path, NULL) < 0) {
		coord_conf_free(&conf);
		return 1;
	}
	if (check) {
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
