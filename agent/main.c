/* ring-agent: command line and startup only; see agent.c. */
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "cfg.h"
#include "daemon_opts.h"
#include "inventory.h"
#include "inventory_json.h"
#include "log.h"

#define PROG "ring-agent"

static void usage(FILE *f, const char *subsys)
{
	fprintf(f,
		"usage: " PROG " [-c CONFIG] [-n] [-i GLOB]... [-r GLOB]... "
		"[-d SUBSYS] [--print-inventory] [-V]\n"
		"  -c CONFIG  configuration file (default /etc/ringd/agent.conf)\n"
		"  -n         check the configuration, its CA, certificate and "
		"key, and exit\n"
		"  --print-inventory  print the inventory the agent would send "
		"(JSON)\n"
		"             and exit; honours sysfs_root and procfs_root\n"
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

/* Long-only option values: outside the range of characters. */
#define OPT_PRINT_INVENTORY 256

/* -i and -r: kept until the configuration is loaded, then they replace
 * its patterns. */
struct globs {
	const char *ifs[AGENT_CONF_MAX_GLOBS], *devs[AGENT_CONF_MAX_GLOBS];
	unsigned n_ifs, n_devs;
	int print_inventory;
};

static int add_glob(int opt, const char *arg, void *arg_globs)
{
	struct globs *g = arg_globs;

	if (opt == OPT_PRINT_INVENTORY) {
		g->print_inventory = 1;
		return -1;
	}

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

/* What the agent would send, as JSON on stdout. The management interface
 * is the configured one (the running agent learns it from the session);
 * addresses are this host's; RDMA devices only with the real sysfs, as a
 * fixture's are not this host's. */
static int print_inventory(const struct agent_conf *conf)
{
	struct inventory_src src = {
		.sysfs_root = conf->sysfs_root,
		.procfs_root = conf->procfs_root,
		.mgmt_interface =
			conf->mgmt_interface[0] ? conf->mgmt_interface : NULL,
		.with_rdma = !conf->sysfs_root[0],
	};
	struct ifaddrs *ifa = NULL;
	Ring__Inventory *inv;
	int rc = 0;

	if (getifaddrs(&ifa) < 0)
		log_warn("getifaddrs");
	src.addrs = ifa;
	inv = inventory_collect(conf, &src);
	if (ifa)
		freeifaddrs(ifa);
	if (!inv) {
		fprintf(stderr, PROG ": inventory: %s\n", strerror(errno));
		return 1;
	}
	if (inventory_json_write(stdout, &inv->base) < 0) {
		fprintf(stderr, PROG ": stdout: %s\n", strerror(errno));
		rc = 1;
	}
	inventory_free(inv);
	return rc;
}

/* --print-inventory talks to nobody: the CA, certificate and key are not
 * opened. */
static int verify_nothing(void *conf, struct cfg_ctx *ctx)
{
	(void)conf;
	(void)ctx;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{"print-inventory", no_argument, NULL, OPT_PRINT_INVENTORY},
		{NULL, 0, NULL, 0},
	};
	struct globs g = {0};
	struct daemon_opts o = {
		.prog = PROG,
		.daemon = CFG_DAEMON_AGENT,
		.usage = usage,
		.more_opts = "i:r:",
		.more = add_glob,
		.more_arg = &g,
		.more_long = longs,
		.path = "/etc/ringd/agent.conf",
	};
	struct cfg_conf_type type = agent_conf_type;
	struct agent_conf conf;
	struct agent *a;
	int rc, warnings;

	rc = daemon_opts_parse(&o, argc, argv);
	if (rc >= 0)
		return rc;
	log_init(PROG, o.debug, o.check);
	agent_conf_defaults(&conf);
	if (g.print_inventory)
		type.verify = verify_nothing;
	warnings = cfg_load_daemon(PROG, o.path, &type, &conf);
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
	if (g.print_inventory)
		return print_inventory(&conf);
	a = agent_new(&conf);
	if (!a)
		return 1;
	rc = agent_run(a);
	agent_free(a);
	log_fini();
	return rc ? 1 : 0;
}
