/* ring-agent: command line and startup only; see agent.c. */
#include <stdio.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ring-agent [-c CONFIG] [-n] [-i GLOB]... [-r GLOB]... "
		"[-d SUBSYS] [-V]\n"
		"  -c CONFIG  configuration file (default /etc/ringd/agent.conf)\n"
		"  -n         check the configuration and exit\n"
		"  -i GLOB    data interfaces: only these (replaces the file's\n"
		"             data_interface patterns; repeatable)\n"
		"  -r GLOB    RDMA devices: only these (replaces the file's\n"
		"             rdma_device patterns; repeatable)\n"
		"  -d SUBSYS  debug output for subsystems (agent,conn,all)\n"
		"  -V         print the version\n");
}

int main(int argc, char **argv)
{
	const char *path = "/etc/ringd/agent.conf";
	const char *debug = NULL;
	struct agent_conf conf;
	struct agent *a;
	const char *ifs[AGENT_CONF_MAX_GLOBS], *devs[AGENT_CONF_MAX_GLOBS];
	unsigned n_ifs = 0, n_devs = 0;
	int check = 0, opt, rc;

	while ((opt = getopt(argc, argv, "c:ni:r:d:Vh")) != -1) {
		switch (opt) {
		case 'i':
		case 'r':
			if ((opt == 'i' ? n_ifs : n_devs) >=
			    AGENT_CONF_MAX_GLOBS) {
				fprintf(stderr, "ring-agent: -%c: at most %d\n",
					opt, AGENT_CONF_MAX_GLOBS);
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
			debug = optarg;
			break;
		case 'V':
			printf("ring-agent %s\n", RING_VERSION);
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
	log_init("ring-agent", debug, check);
	agent_conf_defaults(&conf);
	if (agent_conf_load(&conf, path, NULL) < 0)
		return 1;
	if ((n_ifs && agent_conf_set_globs(&conf, "-i", ifs, n_ifs) < 0) ||
	    (n_devs && agent_conf_set_globs(&conf, "-r", devs, n_devs) < 0))
		return 2;
	if (check) {
		printf("%s: ok (node %s, coordinator %s:%u)\n", path, conf.node,
		       conf.coordinator_host, conf.coordinator_port);
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
