/* ring-agent: command line and startup only; see agent.c. */
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "capture.h"
#include "cfg.h"
#include "daemon_opts.h"
#include "inventory.h"
#include "inventory_json.h"
#include "inventory_tree.h"
#include "log.h"

#define PROG "ring-agent"

static void usage(FILE *f, const char *subsys)
{
	fprintf(f,
		"usage: " PROG " [-c CONFIG] [-n] [-i GLOB]... [-r GLOB]... "
		"[-d SUBSYS] [--print-inventory]\n"
		"       [--capture DIR [--anonymise]] [-V]\n"
		"  -c CONFIG  configuration file (default /etc/ringd/agent.conf)\n"
		"  -n         check the configuration, its CA, certificate and "
		"key, and exit\n"
		"  --print-inventory  print the inventory the agent would send "
		"(JSON)\n"
		"             and exit; honours sysfs_root and procfs_root\n"
		"  --capture DIR  write what the inventory reads (sysfs, "
		"procfs,\n"
		"             addresses, RDMA attributes) to the new directory "
		"DIR,\n"
		"             loadable as sysfs_root/procfs_root, and exit\n"
		"  --anonymise, --anonymize  with --capture: replace "
		"addresses,\n"
		"             MACs, GUIDs and the hostname, consistently\n"
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
#define OPT_CAPTURE 257
#define OPT_ANONYMISE 258

/* -i and -r: kept until the configuration is loaded, then they replace
 * its patterns. */
struct globs {
	const char *ifs[AGENT_CONF_MAX_GLOBS], *devs[AGENT_CONF_MAX_GLOBS];
	unsigned n_ifs, n_devs;
	int print_inventory;
	const char *capture; /* --capture DIR */
	int anonymise;
};

static int add_opt(int opt, const char *arg, void *arg_globs)
{
	struct globs *g = arg_globs;

	if (opt == OPT_PRINT_INVENTORY) {
		g->print_inventory = 1;
		return -1;
	}
	if (opt == OPT_CAPTURE) {
		g->capture = arg;
		return -1;
	}
	if (opt == OPT_ANONYMISE) {
		g->anonymise = 1;
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
 * is the configured one (the running agent learns it from the session).
 * With the real sysfs, addresses and RDMA devices are this host's; with a
 * tree (sysfs_root: a capture or fixture), its own (inventory_tree.h),
 * addresses from its addrs file or else this host's. */
static int print_inventory(const struct agent_conf *conf)
{
	struct inventory_src src = {
		.sysfs_root = conf->sysfs_root,
		.procfs_root = conf->procfs_root,
		.mgmt_interface =
			conf->mgmt_interface[0] ? conf->mgmt_interface : NULL,
		.with_rdma = !conf->sysfs_root[0],
		.from_tree = !!conf->sysfs_root[0],
	};
	struct ifaddrs *ifa = NULL, *tree = NULL;
	char why[PATH_MAX + 128];
	Ring__Inventory *inv;
	int rc = 0;

	if (src.from_tree) {
		rc = inventory_tree_addrs(conf->sysfs_root, &tree, why,
					  sizeof(why));
		if (rc < 0) {
			fprintf(stderr, PROG ": %s\n", why);
			return 1;
		}
	}
	if (rc == 0 && src.from_tree) {
		src.addrs = tree;
	} else {
		if (getifaddrs(&ifa) < 0)
			log_warn("getifaddrs");
		src.addrs = ifa;
	}
	rc = 0;
	inv = inventory_collect(conf, &src);
	if (ifa)
		freeifaddrs(ifa);
	inventory_tree_addrs_free(tree);
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

/* --capture DIR: where it went and how to send it. */
static int capture(const struct agent_conf *conf, const char *dir,
		   int anonymise)
{
	struct capture_result res;
	char why[PATH_MAX + 256], parent[PATH_MAX];
	const char *base;
	char *slash;

	if (capture_run(conf, dir, anonymise, &res, why, sizeof(why)) < 0) {
		fprintf(stderr, PROG ": capture: %s\n", why);
		return 1;
	}
	snprintf(parent, sizeof(parent), "%s", dir);
	while ((slash = strrchr(parent, '/')) && slash != parent && !slash[1])
		*slash = '\0'; /* "DIR/" */
	slash = strrchr(parent, '/');
	base = slash ? dir + (slash + 1 - parent) : dir;
	if (!slash)
		snprintf(parent, sizeof(parent), ".");
	else if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';
	printf("%s: %u files, %llu bytes, %s%s\n"
	       "load it: sysfs_root %s and procfs_root %s in an agent.conf, "
	       "then " PROG " --print-inventory\n"
	       "send it: tar -czf %.*s.tar.gz -C %s %.*s, then open an issue "
	       "on the ringd project and attach %.*s.tar.gz "
	       "(docs/HARDWARE.md)\n",
	       dir, res.files, res.bytes,
	       anonymise ? "anonymised" : "NOT anonymised (see --anonymise)",
	       res.notes ? "; some files left out or cut: see its MANIFEST"
			 : "",
	       dir, dir, (int)strcspn(base, "/"), base, parent,
	       (int)strcspn(base, "/"), base, (int)strcspn(base, "/"), base);
	return 0;
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
		{"capture", required_argument, NULL, OPT_CAPTURE},
		{"anonymise", no_argument, NULL, OPT_ANONYMISE},
		{"anonymize", no_argument, NULL, OPT_ANONYMISE},
		{NULL, 0, NULL, 0},
	};
	struct globs g = {0};
	struct daemon_opts o = {
		.prog = PROG,
		.daemon = CFG_DAEMON_AGENT,
		.usage = usage,
		.more_opts = "i:r:",
		.more = add_opt,
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
	if (g.anonymise && !g.capture) {
		fprintf(stderr, PROG ": --anonymise goes with --capture DIR\n");
		return 2;
	}
	if (g.print_inventory && g.capture) {
		fprintf(stderr,
			PROG ": --print-inventory or --capture, not both\n");
		return 2;
	}
	if (g.print_inventory || g.capture)
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
	if (g.capture)
		return capture(&conf, g.capture, g.anonymise);
	a = agent_new(&conf);
	if (!a)
		return 1;
	rc = agent_run(a);
	agent_free(a);
	log_fini();
	return rc ? 1 : 0;
}
