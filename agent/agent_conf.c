/* agent.conf: directives, defaults, cross-checks and the -n file checks. */
#include "agent_conf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tls.h"

_Static_assert(sizeof(((struct agent_conf *)0)->coordinator_name) ==
		       sizeof(((struct agent_conf *)0)->coordinator_host),
	       "coordinator_name defaults to a copy of coordinator_host");

/* Interfaces that are not data ports on a GPU node: container and VM
 * bridges and their veths (docker0 has 172.17.0.1 on every DGX OS node),
 * CNI and overlay devices, tunnels, VPNs. The first ignore_interface line
 * replaces the list. */
static const char *const agent_conf_ignore_default[] = {
	"docker*",     "veth*", "br-*",	   "virbr*", "vnet*",	"cni*",
	"flannel*",    "cali*", "cilium*", "weave*", "kube-*",	"vxlan*",
	"genev_sys_*", "tun*",	"tap*",	   "lxc*",   "podman*", "wg*",
	"tailscale*",  "zt*",	"dummy*",  "ifb*",
};

void agent_conf_defaults(struct agent_conf *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < sizeof(agent_conf_ignore_default) /
				       sizeof(agent_conf_ignore_default[0]);
	     i++)
		snprintf(c->ignore_globs[c->n_ignore_globs++],
			 sizeof(c->ignore_globs[0]), "%s",
			 agent_conf_ignore_default[i]);
	c->ignore_default = 1;
	c->coordinator_port = RING_DEFAULT_PORT;
	snprintf(c->ca, sizeof(c->ca), "/etc/ringd/ca.crt");
	snprintf(c->cert, sizeof(c->cert), "/etc/ringd/agent.crt");
	snprintf(c->key, sizeof(c->key), "/etc/ringd/agent.key");
	c->reconnect_min_ms = 1000;
	c->reconnect_max_ms = 60000;
	c->inventory_interval_ms = 30000;
	c->lldp_interval_ms = 5000;
	c->connect_timeout_ms = 10000;
	c->counters_interval_ms = 10000;
	c->max_frame = 1024 * 1024;
	c->rdma_max_memory = 1ull << 30;
	c->allreduce_max_memory = 1ull << 30;
}

static int agent_conf_node(struct cfg_ctx *ctx, int argc, char **argv,
			   void *arg)
{
	struct agent_conf *c = arg;

	(void)argc;
	if (!cfg_valid_node_name(argv[1]))
		return cfg_error(
			ctx,
			"'%s': invalid node name '%s' (1-63 of A-Z a-z 0-9 . _ -, "
			"not starting with '-' or '.')",
			argv[0], argv[1]);
	return cfg_copy_string(ctx, argv[0], argv[1], c->node, sizeof(c->node));
}

static int agent_conf_coordinator(struct cfg_ctx *ctx, int argc, char **argv,
				  void *arg)
{
	struct agent_conf *c = arg;

	(void)argc;
	return cfg_parse_hostport(
		ctx, argv[0], argv[1], RING_DEFAULT_PORT, c->coordinator_host,
		sizeof(c->coordinator_host), &c->coordinator_port);
}

/* line: kept for agent_conf_verify()'s messages; path: absolute. */
static const struct cfg_string_field agent_conf_strings[] = {
	{"coordinator_name", offsetof(struct agent_conf, coordinator_name),
	 sizeof(((struct agent_conf *)0)->coordinator_name), 0, 0},
	{"ca", offsetof(struct agent_conf, ca),
	 sizeof(((struct agent_conf *)0)->ca),
	 offsetof(struct agent_conf, line_ca), 1},
	{"cert", offsetof(struct agent_conf, cert),
	 sizeof(((struct agent_conf *)0)->cert),
	 offsetof(struct agent_conf, line_cert), 1},
	{"key", offsetof(struct agent_conf, key),
	 sizeof(((struct agent_conf *)0)->key),
	 offsetof(struct agent_conf, line_key), 1},
	{"sysfs_root", offsetof(struct agent_conf, sysfs_root),
	 sizeof(((struct agent_conf *)0)->sysfs_root), 0, 0},
	{"procfs_root", offsetof(struct agent_conf, procfs_root),
	 sizeof(((struct agent_conf *)0)->procfs_root), 0, 0},
};

static int agent_conf_string(struct cfg_ctx *ctx, int argc, char **argv,
			     void *arg)
{
	(void)argc;
	return cfg_set_string_field(ctx, argv, arg, agent_conf_strings,
				    sizeof(agent_conf_strings) /
					    sizeof(agent_conf_strings[0]));
}

/* Interface names end up in paths under /sys/class/net, so refuse what the
 * kernel would refuse too. */
static int agent_conf_ifname_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	return n > 0 && n < max && !strchr(s, '/') && strcmp(s, ".") &&
	       strcmp(s, "..");
}

static int agent_conf_mgmt(struct cfg_ctx *ctx, int argc, char **argv,
			   void *arg)
{
	struct agent_conf *c = arg;

	(void)argc;
	if (!agent_conf_ifname_ok(argv[1], sizeof(c->mgmt_interface)))
		return cfg_error(ctx, "'%s': invalid interface name '%s'",
				 argv[0], argv[1]);
	return cfg_copy_string(ctx, argv[0], argv[1], c->mgmt_interface,
			       sizeof(c->mgmt_interface));
}

/* source_address: a numeric address (no name: the bind happens before
 * any lookup could, at every reconnect), IPv4 or IPv6, no port. */
static int agent_conf_source(struct cfg_ctx *ctx, int argc, char **argv,
			     void *arg)
{
	struct agent_conf *c = arg;
	unsigned char raw[sizeof(struct in6_addr)];
	int family = 0;

	(void)argc;
	if (inet_pton(AF_INET, argv[1], raw) == 1)
		family = AF_INET;
	else if (inet_pton(AF_INET6, argv[1], raw) == 1)
		family = AF_INET6;
	if (!family)
		return cfg_error(ctx,
				 "'%s': '%s' is not an IPv4 or IPv6 address "
				 "(give one of this host's addresses, e.g. "
				 "10.0.0.5 or fd00::5, without a port)",
				 argv[0], argv[1]);
	if (cfg_copy_string(ctx, argv[0], argv[1], c->source_address,
			    sizeof(c->source_address)) < 0)
		return -1;
	c->source_family = family;
	return 0;
}

static int agent_conf_add_glob(struct cfg_ctx *ctx, const char *what,
			       const char *glob, char (*globs)[IFNAMSIZ * 2],
			       unsigned *n)
{
	if (*n >= AGENT_CONF_MAX_GLOBS)
		return cfg_error(ctx, "'%s': too many patterns (max %d)", what,
				 AGENT_CONF_MAX_GLOBS);
	if (cfg_copy_string(ctx, what, glob, globs[*n], IFNAMSIZ * 2) < 0)
		return -1;
	(*n)++;
	return 0;
}

static int agent_conf_globs(struct cfg_ctx *ctx, int argc, char **argv,
			    void *arg)
{
	struct agent_conf *c = arg;
	int data = !strcmp(argv[0], "data_interface");
	int ret = 0;

	/* The file's list replaces the default one; a line without
	 * patterns ignores nothing. */
	if (!data && c->ignore_default) {
		c->ignore_default = 0;
		c->n_ignore_globs = 0;
	}

	for (int i = 1; i < argc; i++)
		if (agent_conf_add_glob(ctx, argv[0], argv[i],
					data ? c->data_globs : c->ignore_globs,
					data ? &c->n_data_globs
					     : &c->n_ignore_globs) < 0)
			ret = -1;
	return ret;
}

static int agent_conf_speed(struct cfg_ctx *ctx, int argc, char **argv,
			    void *arg)
{
	struct agent_conf *c = arg;
	struct agent_speed *sp;
	uint64_t mbps;

	(void)argc;
	if (c->n_speeds >= AGENT_CONF_MAX_GLOBS)
		return cfg_error(ctx, "'%s': too many patterns (max %d)",
				 argv[0], AGENT_CONF_MAX_GLOBS);
	sp = &c->speeds[c->n_speeds];
	if (cfg_copy_string(ctx, argv[0], argv[1], sp->glob, sizeof(sp->glob)) <
		    0 ||
	    cfg_parse_speed_mbps(ctx, argv[0], argv[2], &mbps) < 0)
		return -1;
	sp->mbps = (uint32_t)mbps;
	c->n_speeds++;
	return 0;
}

static const struct cfg_duration_field agent_conf_durations[] = {
	{"reconnect_min", offsetof(struct agent_conf, reconnect_min_ms), 100,
	 3600000},
	{"reconnect_max", offsetof(struct agent_conf, reconnect_max_ms), 100,
	 3600000},
	{"inventory_interval",
	 offsetof(struct agent_conf, inventory_interval_ms), 1000, 3600000},
	{"lldp_interval", offsetof(struct agent_conf, lldp_interval_ms), 100,
	 3600000},
	{"connect_timeout", offsetof(struct agent_conf, connect_timeout_ms),
	 100, 300000},
};

static int agent_conf_duration(struct cfg_ctx *ctx, int argc, char **argv,
			       void *arg)
{
	(void)argc;
	return cfg_set_duration_field(ctx, argv, arg, agent_conf_durations,
				      sizeof(agent_conf_durations) /
					      sizeof(agent_conf_durations[0]));
}

/* counters_interval: 0 turns the counters off; else 1s..1h (a faster
 * one is load on every agent and on the coordinator for no operator). */
static int agent_conf_counters(struct cfg_ctx *ctx, int argc, char **argv,
			       void *arg)
{
	struct agent_conf *c = arg;
	uint64_t v;

	(void)argc;
	if (cfg_parse_duration_ms(ctx, argv[0], argv[1], 0, 3600000, &v) < 0)
		return -1;
	if (v && v < 1000)
		return cfg_error(ctx,
				 "'%s': %llums is too short (0 = off, or 1s "
				 "to 1h)",
				 argv[0], (unsigned long long)v);
	c->counters_interval_ms = v;
	return 0;
}

static int agent_conf_max_frame(struct cfg_ctx *ctx, int argc, char **argv,
				void *arg)
{
	struct agent_conf *c = arg;
	uint64_t v;

	(void)argc;
	if (cfg_parse_uint(ctx, argv[0], argv[1], 4096, 64 * 1024 * 1024, &v) <
	    0)
		return -1;
	c->max_frame = (uint32_t)v;
	return 0;
}

static int agent_conf_rdma_globs(struct cfg_ctx *ctx, int argc, char **argv,
				 void *arg)
{
	struct agent_conf *c = arg;
	int ret = 0;

	for (int i = 1; i < argc; i++) {
		if (c->n_rdma_globs >= AGENT_CONF_MAX_GLOBS) {
			ret = cfg_error(ctx, "'%s': too many patterns (max %d)",
					argv[0], AGENT_CONF_MAX_GLOBS);
			break;
		}
		if (cfg_copy_string(ctx, argv[0], argv[i],
				    c->rdma_globs[c->n_rdma_globs],
				    sizeof(c->rdma_globs[0])) < 0)
			ret = -1;
		else
			c->n_rdma_globs++;
	}
	return ret;
}

static int agent_conf_rdma_memory(struct cfg_ctx *ctx, int argc, char **argv,
				  void *arg)
{
	struct agent_conf *c = arg;

	(void)argc;
	if (!strcmp(argv[0], "allreduce_max_memory"))
		return cfg_parse_size(ctx, argv[0], argv[1], 1ull << 20,
				      64ull << 30, &c->allreduce_max_memory);
	if (!strcmp(argv[0], "rdma_max_memory"))
		return cfg_parse_size(ctx, argv[0], argv[1], 1ull << 20,
				      64ull << 30, &c->rdma_max_memory);
	return cfg_parse_size(ctx, argv[0], argv[1], 1ull << 20, 256ull << 30,
			      &c->rdma_max_total_memory);
}

/* Where read tests may read: absolute and without "..", so that what is
 * allowed does not depend on the daemon's working directory and a
 * request is matched against it by text alone (readpath.c); nothing is
 * resolved here: each request opens the root afresh, beneath which no
 * link may lead out. */
static int agent_conf_read_path(struct cfg_ctx *ctx, int argc, char **argv,
				void *arg)
{
	struct agent_conf *c = arg;
	const char *p = argv[1];

	(void)argc;
	if (p[0] != '/')
		return cfg_error(ctx, "'%s': '%s' is not an absolute path",
				 argv[0], p);
	for (const char *q = p; (q = strstr(q, "..")); q += 2)
		if (q[-1] == '/' && (q[2] == '/' || q[2] == '\0'))
			return cfg_error(ctx,
					 "'%s': '%s' has a '..' component "
					 "(give the directory without one)",
					 argv[0], p);
	if (c->n_read_paths >= AGENT_CONF_MAX_READ_PATHS)
		return cfg_error(ctx, "'%s': too many paths (max %d)", argv[0],
				 AGENT_CONF_MAX_READ_PATHS);
	if (cfg_copy_string(ctx, argv[0], p, c->read_paths[c->n_read_paths],
			    sizeof(c->read_paths[0])) < 0)
		return -1;
	c->n_read_paths++;
	return 0;
}

static const struct cfg_directive agent_conf_directives[] = {
	{"node", 1, 1, agent_conf_node},
	{"coordinator", 1, 1, agent_conf_coordinator},
	{"coordinator_name", 1, 1, agent_conf_string},
	{"ca", 1, 1, agent_conf_string},
	{"cert", 1, 1, agent_conf_string},
	{"key", 1, 1, agent_conf_string},
	{"mgmt_interface", 1, 1, agent_conf_mgmt},
	{"source_address", 1, 1, agent_conf_source},
	{"data_interface", 1, -1, agent_conf_globs},
	{"ignore_interface", 0, -1, agent_conf_globs},
	{"nominal_speed", 2, 2, agent_conf_speed},
	{"sysfs_root", 1, 1, agent_conf_string},
	{"procfs_root", 1, 1, agent_conf_string},
	{"reconnect_min", 1, 1, agent_conf_duration},
	{"reconnect_max", 1, 1, agent_conf_duration},
	{"inventory_interval", 1, 1, agent_conf_duration},
	{"lldp_interval", 1, 1, agent_conf_duration},
	{"connect_timeout", 1, 1, agent_conf_duration},
	{"counters_interval", 1, 1, agent_conf_counters},
	{"max_frame", 1, 1, agent_conf_max_frame},
	{"rdma_device", 1, -1, agent_conf_rdma_globs},
	{"rdma_max_memory", 1, 1, agent_conf_rdma_memory},
	{"rdma_max_total_memory", 1, 1, agent_conf_rdma_memory},
	{"allreduce_max_memory", 1, 1, agent_conf_rdma_memory},
	{"read_path", 1, 1, agent_conf_read_path},
	{NULL, 0, 0, NULL},
};

int agent_conf_check(struct agent_conf *c, struct cfg_ctx *ctx)
{
	struct cfg_ctx local = {.file = "agent.conf"};
	unsigned before;
	char host[256];

	if (!ctx)
		ctx = &local;
	ctx->line = 0;
	before = ctx->errors;
	if (!c->coordinator_host[0])
		cfg_error(ctx, "no 'coordinator' directive");
	if (c->reconnect_min_ms > c->reconnect_max_ms)
		cfg_error(
			ctx,
			"reconnect_min (%llums) is greater than reconnect_max (%llums)",
			(unsigned long long)c->reconnect_min_ms,
			(unsigned long long)c->reconnect_max_ms);
	if (!c->node[0]) {
		/* Short hostname: that is what operators type and what the
     * coordinator's expect list is written in. */
		if (gethostname(host, sizeof(host)) < 0) {
			cfg_error(ctx, "cannot get hostname (%s); set 'node'",
				  strerror(errno));
		} else {
			host[sizeof(host) - 1] = '\0';
			host[strcspn(host, ".")] = '\0';
			if (!cfg_valid_node_name(host))
				cfg_error(
					ctx,
					"hostname '%s' is not a valid node name; set 'node'",
					host);
			else
				memcpy(c->node, host, strlen(host) + 1);
		}
	}
	if (!c->coordinator_name[0])
		memcpy(c->coordinator_name, c->coordinator_host,
		       sizeof(c->coordinator_name));
	if (!c->rdma_max_total_memory)
		c->rdma_max_total_memory = 2 * c->rdma_max_memory;
	else if (c->rdma_max_total_memory < c->rdma_max_memory)
		cfg_error(ctx,
			  "rdma_max_total_memory (%llu MiB) is less than "
			  "rdma_max_memory (%llu MiB): no test that one allows "
			  "could run",
			  (unsigned long long)(c->rdma_max_total_memory >> 20),
			  (unsigned long long)(c->rdma_max_memory >> 20));
	return cfg_ctx_result(ctx, before);
}

int agent_conf_load(struct agent_conf *c, const char *path, struct cfg_ctx *ctx)
{
	return cfg_load_file(path, &agent_conf_type, c, ctx);
}

int agent_conf_load_buffer(struct agent_conf *c, const char *name,
			   const char *buf, size_t len, struct cfg_ctx *ctx)
{
	return cfg_load_buffer(name, buf, len, &agent_conf_type, c, ctx);
}

int agent_conf_verify(const struct agent_conf *c, struct cfg_ctx *ctx)
{
	struct cfg_ctx local = {.file = "agent.conf"};
	unsigned before;

	if (!ctx)
		ctx = &local;
	before = ctx->errors;
	cfg_check_tls_files(ctx, 0, c->ca, c->line_ca, c->cert, c->line_cert,
			    c->key, c->line_key);
	ctx->line = 0;
	return cfg_ctx_result(ctx, before);
}

static int agent_conf_check_cb(void *conf, struct cfg_ctx *ctx)
{
	return agent_conf_check(conf, ctx);
}

static int agent_conf_verify_cb(void *conf, struct cfg_ctx *ctx)
{
	return agent_conf_verify(conf, ctx);
}

const struct cfg_conf_type agent_conf_type = {
	.directives = agent_conf_directives,
	.check = agent_conf_check_cb,
	.verify = agent_conf_verify_cb,
};

static int agent_conf_match_any(const char (*globs)[IFNAMSIZ * 2], unsigned n,
				const char *ifname)
{
	for (unsigned i = 0; i < n; i++)
		if (!fnmatch(globs[i], ifname, 0))
			return 1;
	return 0;
}

uint32_t agent_conf_nominal_mbps(const struct agent_conf *c, const char *ifname)
{
	for (unsigned i = 0; i < c->n_speeds; i++)
		if (!fnmatch(c->speeds[i].glob, ifname, 0))
			return c->speeds[i].mbps;
	return 0;
}

/* A data_interface pattern without wildcards names ifname itself. */
static int agent_conf_named_data(const struct agent_conf *c, const char *ifname)
{
	for (unsigned i = 0; i < c->n_data_globs; i++)
		if (!strcmp(c->data_globs[i], ifname) &&
		    !strpbrk(c->data_globs[i], "*?[\\"))
			return 1;
	return 0;
}

int agent_conf_is_ignored(const struct agent_conf *c, const char *ifname)
{
	if (agent_conf_named_data(c, ifname))
		return 0;
	return agent_conf_match_any(c->ignore_globs, c->n_ignore_globs, ifname);
}

int agent_conf_is_data_interface(const struct agent_conf *c, const char *ifname)
{
	if (!strcmp(ifname, "lo"))
		return 0;
	if (c->mgmt_interface[0] && !strcmp(ifname, c->mgmt_interface))
		return 0;
	if (c->n_data_globs &&
	    !agent_conf_match_any(c->data_globs, c->n_data_globs, ifname))
		return 0;
	return !agent_conf_is_ignored(c, ifname);
}

int agent_conf_is_rdma_device(const struct agent_conf *c, const char *name)
{
	for (unsigned i = 0; i < c->n_rdma_globs; i++)
		if (fnmatch(c->rdma_globs[i], name, 0) == 0)
			return 1;
	return c->n_rdma_globs == 0;
}

int agent_conf_set_globs(struct agent_conf *c, const char *opt,
			 const char *const *globs, unsigned n)
{
	int rdma = !strcmp(opt, "-r");
	size_t len = rdma ? sizeof(c->rdma_globs[0]) : sizeof(c->data_globs[0]);

	if (n > AGENT_CONF_MAX_GLOBS) {
		fprintf(stderr, "ring-agent: %s: at most %d patterns\n", opt,
			AGENT_CONF_MAX_GLOBS);
		return -1;
	}
	for (unsigned i = 0; i < n; i++)
		if (strlen(globs[i]) >= len) {
			fprintf(stderr,
				"ring-agent: %s: '%s' is too long (max %zu "
				"characters)\n",
				opt, globs[i], len - 1);
			return -1;
		}
	for (unsigned i = 0; i < n; i++)
		snprintf(rdma ? c->rdma_globs[i] : c->data_globs[i], len, "%s",
			 globs[i]);
	if (rdma)
		c->n_rdma_globs = n;
	else
		c->n_data_globs = n;
	return 0;
}
