/* ring-agent configuration (/etc/ringd/agent.conf). */
#ifndef RING_AGENT_CONF_H
#define RING_AGENT_CONF_H

#include <net/if.h>
#include <stdint.h>

#include "cfg.h"

#define RING_DEFAULT_PORT 7420
#define AGENT_CONF_MAX_GLOBS 32
#define AGENT_CONF_MAX_READ_PATHS 16
#define AGENT_CONF_PATH_LEN 512

struct agent_speed {
	char glob[IFNAMSIZ * 2];
	uint32_t mbps;
};

struct agent_conf {
	char node[64];		    /* node; default: short hostname */
	char coordinator_host[256]; /* coordinator HOST[:PORT]; required */
	uint16_t coordinator_port;
	char coordinator_name[256];	/* coordinator_name; default: host */
	char ca[AGENT_CONF_PATH_LEN];	/* ca PATH */
	char cert[AGENT_CONF_PATH_LEN]; /* cert PATH */
	char key[AGENT_CONF_PATH_LEN];	/* key PATH */
	char mgmt_interface[IFNAMSIZ];	/* mgmt_interface IF; default: the
					     interface the session leaves by */
	/* source_address ADDR: the management connection's socket is bound
	 * to it before connecting; "" = the kernel's choice. source_family
	 * is AF_INET or AF_INET6 when set, else 0. */
	char source_address[64];
	int source_family;
	char data_globs[AGENT_CONF_MAX_GLOBS]
		       [IFNAMSIZ * 2]; /* data_interface */
	unsigned n_data_globs;
	char ignore_globs[AGENT_CONF_MAX_GLOBS]
			 [IFNAMSIZ * 2]; /* ignore_interface */
	unsigned n_ignore_globs;
	int ignore_default; /* ignore_globs is still the built-in list */
	struct agent_speed
		speeds[AGENT_CONF_MAX_GLOBS]; /* nominal_speed GLOB SPEED */
	unsigned n_speeds;
	char sysfs_root[AGENT_CONF_PATH_LEN]; /* sysfs_root; "" = real /sys */
	char procfs_root
		[AGENT_CONF_PATH_LEN];	/* procfs_root; "" = real /proc */
	uint64_t reconnect_min_ms;	/* reconnect_min, default 1s */
	uint64_t reconnect_max_ms;	/* reconnect_max, default 60s */
	uint64_t inventory_interval_ms; /* inventory_interval, default 30s */
	uint64_t lldp_interval_ms;   /* lldp_interval, default 5s, 100ms..1h */
	uint64_t connect_timeout_ms; /* connect_timeout, default 10s */
	uint32_t max_frame;	     /* max_frame BYTES, default 1 MiB */
	/* counters_interval: port counters to the coordinator, default 10s,
	 * 1s..1h; 0 = off */
	uint64_t counters_interval_ms;
	char rdma_globs[AGENT_CONF_MAX_GLOBS][64]; /* rdma_device GLOB... */
	unsigned n_rdma_globs;
	uint64_t rdma_max_memory; /* rdma_max_memory SIZE, default 1 GiB */
	/* rdma_max_total_memory SIZE: all RDMA tests in flight together;
	 * 0 = twice rdma_max_memory (filled in by agent_conf_check) */
	uint64_t rdma_max_total_memory;
	/* allreduce_max_memory SIZE: an all-reduce job's buffer (its largest
	 * size), default 1 GiB, 1 MiB..64 GiB */
	uint64_t allreduce_max_memory;
	/* read_path DIR (repeatable, absolute): the only places a read test
	 * (ringctl plan --weights) may read; none = read tests refused. */
	char read_paths[AGENT_CONF_MAX_READ_PATHS][AGENT_CONF_PATH_LEN];
	unsigned n_read_paths;
	/* The line that set ca, cert, key (0: the default), for
	 * agent_conf_verify()'s messages. */
	unsigned line_ca, line_cert, line_key;
};

void agent_conf_defaults(struct agent_conf *c);
/* For cfg_load_daemon(): agent.conf's directives and checks. */
extern const struct cfg_conf_type agent_conf_type;
/* Parse path into c (which holds defaults). ctx may be NULL. -1 on any
 * error, all reported as file:line: errno EINVAL when the file had errors,
 * another errno when it could not be read. Runs agent_conf_check() at the
 * end, even after bad lines, so that one run reports every mistake. */
int agent_conf_load(struct agent_conf *c, const char *path,
		    struct cfg_ctx *ctx);
int agent_conf_load_buffer(struct agent_conf *c, const char *name,
			   const char *buf, size_t len, struct cfg_ctx *ctx);
/* Cross-directive checks (coordinator given, reconnect_min <= max, ...),
 * reported as "file: message". Fills derived defaults (node from hostname,
 * coordinator_name from coordinator host). */
int agent_conf_check(struct agent_conf *c, struct cfg_ctx *ctx);
/* What the service will find at start: the CA, certificate and key as
 * tls_check_files() sees them (a node's certificate, client role). Errors
 * for what stops the agent, warnings for what it survives (a certificate
 * the CA did not sign), each with the line that set the path. ctx->file
 * names the configuration. 0 or -1 (EINVAL). */
int agent_conf_verify(const struct agent_conf *c, struct cfg_ctx *ctx);
/* Nominal speed configured for ifname (first matching glob), 0 if none. */
uint32_t agent_conf_nominal_mbps(const struct agent_conf *c,
				 const char *ifname);
/* 1 if the ignore list (ignore_interface, default docker*, veth*, br-*,
 * virbr*, ...) leaves ifname out; never for a name a data_interface
 * pattern gives without wildcards. */
int agent_conf_is_ignored(const struct agent_conf *c, const char *ifname);
/* 1 if ifname is a data interface under the data/ignore globs. */
int agent_conf_is_data_interface(const struct agent_conf *c,
				 const char *ifname);

/* Replace the data_interface (opt "-i") or rdma_device (opt "-r") patterns
 * with those given on the command line. -1 after a message on stderr when
 * one is too long. */
int agent_conf_set_globs(struct agent_conf *c, const char *opt,
			 const char *const *globs, unsigned n);
/* 1 if the RDMA device may be reported and used (rdma_device globs). */
int agent_conf_is_rdma_device(const struct agent_conf *c, const char *name);

#endif
