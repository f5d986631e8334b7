/* ring-coordinator configuration (/etc/ringd/coordinator.conf). */
#ifndef RING_COORD_CONF_H
#define RING_COORD_CONF_H

#include <stdint.h>

#include "cfg.h"
#include "testlimits.h"

#define COORD_CONF_PATH_LEN 512
/* expect (and ring members): a site of 10,000 nodes and room to grow; the
 * parser's duplicate check is linear per name (0.4 s of CPU at 10,000). */
#define COORD_CONF_MAX_EXPECT 16384
#define COORD_CONF_MAX_DENY 4096
/* A serial as deny_serial keeps it: up to 20 bytes in hex (RFC 5280). */
#define COORD_CONF_SERIAL_LEN 41
/* alert_command: the program and its arguments, at most. */
#define COORD_CONF_MAX_ARGS 16
/* alertmanager_url: an HA pair or two, at most. */
#define COORD_CONF_MAX_AM_URLS 4

/* A ring's id: 1-63 of A-Z a-z 0-9 . _ -, as a node name. */
#define COORD_CONF_MAX_RINGS 4096
struct coord_conf_ring {
	char id[64];
	unsigned first, n; /* members: ring_nodes[first .. first + n) */
	unsigned line;	   /* where the directive stands */
};

struct coord_conf {
	char name[256];	       /* name; default: hostname */
	char listen_host[256]; /* listen ADDR[:PORT]; default 0.0.0.0:7420 */
	uint16_t listen_port;
	char ca[COORD_CONF_PATH_LEN];	/* ca PATH */
	char cert[COORD_CONF_PATH_LEN]; /* cert PATH */
	char key[COORD_CONF_PATH_LEN];	/* key PATH */
	char control_socket
		[COORD_CONF_PATH_LEN]; /* default /run/ringd/coordinator.sock */
	char control_group[64];	       /* control_group; default "ringctl" */
	char state_dir
		[COORD_CONF_PATH_LEN]; /* state_dir; default /var/lib/ringd */
	char (*expect)[64];	       /* expect NODE [NODE...], repeatable */
	unsigned n_expect;
	int admit_unexpected; /* admit_unexpected yes|no, default no */
	int survey_load;      /* survey_load yes|no: port steps, ring load */
	int health_report_command; /* health_report_command yes|no: the
				      periodic report to alert_command too */
	char (*deny)[64];	   /* deny NODE [NODE...], repeatable */
	unsigned n_deny;
	/* deny_serial HEX [HEX...], repeatable: lower case, no colons, no
	 * leading zeros */
	char (*deny_serial)[COORD_CONF_SERIAL_LEN];
	unsigned n_deny_serial;
	uint64_t
		heartbeat_interval_ms; /* heartbeat_interval, default 5s, 100ms..10m */
	uint32_t heartbeat_misses;     /* heartbeat_misses, default 3, 1..100 */
	uint64_t handshake_timeout_ms; /* handshake_timeout, default 10s */
	uint32_t max_frame;  /* max_frame, default 1 MiB, 4 KiB..64 MiB */
	uint32_t max_agents; /* max_agents, default 4096 */
	/* The survey */
	uint64_t survey_duration_ms; /* survey_duration: each bandwidth test's
					measured window, default 5s */
	uint64_t survey_warmup_ms;   /* survey_warmup, default 1s */
	uint64_t survey_settle_ms;   /* survey_settle: quiet time after the
					last change before an automatic
					survey, default 10s */
	uint64_t survey_grace_ms;    /* survey_grace: survey the connected
					nodes when expected ones are still
					missing after this, default 2m */
	uint64_t survey_interval_ms; /* survey_interval: periodic re-survey,
					default 1h, 0 = off */
	uint64_t recheck_settle_ms;  /* recheck_settle: quiet time after a
					change on a surveyed edge before it
					alone is probed and measured again,
					default 10s, 0 = no re-checks */
	uint32_t busy_threshold;     /* busy_threshold: percent of an edge's
					capacity above which its traffic
					postpones a bandwidth test, default
					10, 0 = never postpone */
	uint64_t busy_retry_ms;	     /* busy_retry: a postponed edge is
					tried again after this, default 5m */
	uint64_t light_check_interval_ms; /* light_check_interval: probes
					     and a small latency sample of
					     every edge, default 10m, 0 =
					     off */
	uint32_t ladder[4]; /* survey_streams N...: default 1 4 8 */
	unsigned n_ladder;
	uint32_t lat_sizes[TESTLIMITS_LAT_SIZES_MAX]; /* latency_sizes */
	unsigned n_lat_sizes;
	uint32_t lat_iterations; /* latency_iterations, default 1000 */
	char rank0[64];		 /* rank0 NODE; default: lowest name */
	/* ring ID NODE NODE [NODE...], repeatable (issue 24): the ring a
	 * site's nodes should form, by name. ring_nodes holds every ring's
	 * members back to back, rings[k].first being ring k's first. */
	struct coord_conf_ring *rings;
	unsigned n_rings;
	char (*ring_nodes)[64];
	unsigned n_ring_nodes;
	int rank_higher;	   /* rank_direction lower|higher */
	uint32_t diagonal_all_max; /* check every non-adjacent pair up to this
				      many nodes, else distance-2 pairs only;
				      default 16 */
	int survey_method;	   /* survey_method auto|tcp|rdma|both */
	uint32_t survey_rdma_qps;  /* survey_rdma_qps, 1..64, default 4 */
	uint32_t survey_rdma_size; /* survey_rdma_size, bytes, default 1M,
				      at most TESTLIMITS_RDMA_SIZE_MAX */
	/* survey_rdma_tc 0..255, survey_rdma_sl 0..15, default 0: the GRH
	 * traffic class and service level of the survey's RDMA tests (the
	 * jobs' NCCL_IB_TC / NCCL_IB_SL) */
	uint32_t survey_rdma_tc;
	uint32_t survey_rdma_sl;
	/* Watching (issue 10) */
	uint64_t alert_hold_down_ms; /* alert_hold_down: clear this long before
					an alert resolves, default 30s */
	uint64_t relearn_timeout_ms; /* relearn_timeout: after a restart with
					saved state, wait at most this long
					for the agents before judging, 20s */
	/* alert_command PATH [ARG...]: run for every alert transition, no
	 * shell; PATH absolute */
	char alert_argv[COORD_CONF_MAX_ARGS][COORD_CONF_PATH_LEN];
	unsigned n_alert_argv;
	uint64_t alert_command_timeout_ms; /* alert_command_timeout, 10s */
	/* alert_receiver_webhook URL (alias alert_webhook): Alertmanager's
	 * notification JSON (version 4), for receivers; "" = none */
	char alert_webhook[COORD_CONF_PATH_LEN];
	uint64_t alert_webhook_timeout_ms; /* ..._timeout, default 5s */
	uint32_t alert_webhook_retries;	   /* ..._retries, default 5 */
	/* alertmanager_url http://HOST[:PORT], repeatable: Alertmanager's
	 * API (/api/v2/alerts), every alert to each */
	char alertmanager_url[COORD_CONF_MAX_AM_URLS][COORD_CONF_PATH_LEN];
	unsigned n_alertmanager_url;
	uint64_t alertmanager_resend_ms;    /* alertmanager_resend_interval,
					     default 1m */
	uint64_t alertmanager_timeout_ms;   /* alertmanager_timeout, 10s */
	uint64_t watchdog_interval_ms;	    /* watchdog_interval: the Watchdog
					  alert to the sinks, 1m, 0 = off */
	uint64_t health_report_interval_ms; /* health_report_interval, 24h,
					       0 = off */
	char metrics_listen[256];    /* metrics_listen ADDR:PORT, "" = off */
	uint64_t history_max_age_ms; /* history_max_age, default 30d */
	uint32_t history_max_rows;   /* history_max_rows, default 1000000 */
	/* The alert table's and the sinks' limits: defaults only, no
	 * directive (an operator sizes them through max_agents). */
	uint32_t alert_max_resolved;	   /* resolved alerts kept, 1024 */
	uint64_t alert_keep_resolved_ms;   /* ... for at most 7 days */
	uint32_t alert_max_firing;	   /* 0: 4 x max_agents + 64 */
	uint64_t alert_webhook_backoff_ms; /* first retry 1 s, doubling */
	uint32_t alert_queue_max;	   /* alerts waiting per sink, 1024 */
	/* The line that set ca, cert, key, control_group (0: the default),
	 * for coord_conf_verify()'s messages. */
	unsigned line_ca, line_cert, line_key, line_control_group;
};

/* How the survey measures an edge. auto: RDMA where both ends can (active
 * RDMA ports facing each other, agents with RDMA tests), TCP elsewhere;
 * rdma: RDMA only; tcp: TCP only; both: the TCP ladder and RDMA figures. */
enum coord_survey_method {
	COORD_SURVEY_AUTO,
	COORD_SURVEY_TCP,
	COORD_SURVEY_RDMA,
	COORD_SURVEY_BOTH,
};

const char *coord_survey_method_name(int m);

void coord_conf_defaults(struct coord_conf *c);
/* Distinct firing alerts the table holds: alert_max_firing, or 0's
 * 4 x max_agents + 64. */
uint32_t coord_conf_alert_max_firing(const struct coord_conf *c);
/* The coordinator's page (metrics_listen's "/", a wildcard address by the
 * coordinator's name) as an http:// URL in buf, for Alertmanager's
 * generatorURL; NULL when metrics_listen is off. */
const char *coord_conf_page_url(const struct coord_conf *c, char *buf,
				size_t len);
/* For cfg_load_daemon(): coordinator.conf's directives and checks. */
extern const struct cfg_conf_type coord_conf_type;
void coord_conf_free(struct coord_conf *c);
/* Parse path into c (which holds defaults), then coord_conf_check(), which
 * runs even after bad lines so that one run reports every mistake. ctx may
 * be NULL. -1 on any error: errno EINVAL when the file had errors (all
 * reported), another errno when it could not be read. */
int coord_conf_load(struct coord_conf *c, const char *path,
		    struct cfg_ctx *ctx);
int coord_conf_load_buffer(struct coord_conf *c, const char *name,
			   const char *buf, size_t len, struct cfg_ctx *ctx);
/* The configured ring (index into rings) node belongs to, or -1. */
int coord_conf_ring_of(const struct coord_conf *c, const char *node);
/* The configured ring with this id, or -1. */
int coord_conf_ring_find(const struct coord_conf *c, const char *id);

/* Cross-directive checks; duplicate expect names are errors. */
int coord_conf_check(struct coord_conf *c, struct cfg_ctx *ctx);
/* What the service will find at start: the CA, certificate and key as
 * tls_check_files() sees them (a coordinator's certificate, server role)
 * and the control_group. Errors for what stops the coordinator, warnings
 * for what it survives (a certificate the CA did not sign, an unknown
 * group: then the control socket is root's only), each with the line that
 * set the value. ctx->file names the configuration. 0 or -1 (EINVAL). */
int coord_conf_verify(const struct coord_conf *c, struct cfg_ctx *ctx);
/* May an agent whose certificate (already verified against the CA, with
 * the node role, and valid for node) has serial serial_hex (as
 * tls_peer_serial() gives it; NULL if unknown) join as node? Refused: a
 * denied serial or name, or a node that is not expected while 'expect' is
 * set and 'admit_unexpected' is not. 0 admitted, or -1 with one line of
 * reason in why. */
int coord_conf_admit(const struct coord_conf *c, const char *node,
		     const char *serial_hex, char *why, size_t len);

#endif
