/* coordinator.conf: directives, defaults, cross-checks, admission and the
 * -n file checks. */
#include "coord_conf.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "tls.h"
#include "testlimits.h"

#define COORD_CONF_FIELD(c, off) ((char *)(c) + (off))
#define COORD_CONF_SIZEOF(m) sizeof(((struct coord_conf *)0)->m)

void coord_conf_defaults(struct coord_conf *c)
{
	memset(c, 0, sizeof(*c));
	if (gethostname(c->name, sizeof(c->name)) < 0)
		c->name[0] = '\0'; /* coord_conf_check() reports it */
	c->name[sizeof(c->name) - 1] = '\0';
	snprintf(c->listen_host, sizeof(c->listen_host), "0.0.0.0");
	c->listen_port = 7420;
	snprintf(c->ca, sizeof(c->ca), "/etc/ringd/ca.crt");
	snprintf(c->cert, sizeof(c->cert), "/etc/ringd/coordinator.crt");
	snprintf(c->key, sizeof(c->key), "/etc/ringd/coordinator.key");
	snprintf(c->control_socket, sizeof(c->control_socket),
		 "/run/ringd/coordinator.sock");
	/* The operators' group, not the daemons': the daemons' group can
	 * read the keys. */
	snprintf(c->control_group, sizeof(c->control_group), "ringctl");
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/ringd");
	c->heartbeat_interval_ms = 5000;
	c->heartbeat_misses = 3;
	c->handshake_timeout_ms = 10000;
	c->max_frame = 1024 * 1024;
	c->max_agents = 4096;
	c->survey_duration_ms = 5000;
	c->survey_warmup_ms = 1000;
	c->survey_settle_ms = 10000;
	c->recheck_settle_ms = 10000;
	c->busy_threshold = 10;
	c->busy_retry_ms = 300000;
	c->light_check_interval_ms = 600000;
	c->survey_grace_ms = 120000;
	c->survey_interval_ms = 3600000;
	c->ladder[0] = 1;
	c->ladder[1] = 4;
	c->ladder[2] = 8;
	c->n_ladder = 3;
	for (unsigned i = 0; i < TESTLIMITS_LAT_SIZES_DEFAULT_N; i++)
		c->lat_sizes[i] = testlimits_lat_sizes_default[i];
	c->n_lat_sizes = TESTLIMITS_LAT_SIZES_DEFAULT_N;
	c->lat_iterations = 1000;
	c->diagonal_all_max = 16;
	c->survey_method = COORD_SURVEY_AUTO;
	c->survey_load = 1;
	c->survey_rdma_qps = TESTLIMITS_RDMA_QPS_DEFAULT;
	c->survey_rdma_size = TESTLIMITS_RDMA_SIZE_DEFAULT_WRITE;
	c->alert_hold_down_ms = 30000;
	c->relearn_timeout_ms = 20000;
	c->alert_command_timeout_ms = 10000;
	c->alert_webhook_timeout_ms = 5000;
	c->alert_webhook_retries = 5;
	c->alertmanager_resend_ms = 60000;
	c->alertmanager_timeout_ms = 10000;
	c->watchdog_interval_ms = 60000;
	c->health_report_interval_ms = 86400000;
	c->history_max_age_ms = 30ull * 86400000;
	c->history_max_rows = 1000000;
	/* Not directives: what the table and the sinks hold is sized by
	 * max_agents (firing) or bounded against a storm (the rest). */
	c->alert_max_resolved = 1024;
	c->alert_keep_resolved_ms = 7ull * 86400000;
	c->alert_max_firing = 0;
	c->alert_webhook_backoff_ms = 1000;
	c->alert_queue_max = 1024;
}

const char *coord_conf_page_url(const struct coord_conf *c, char *buf,
				size_t len)
{
	const char *colon = strrchr(c->metrics_listen, ':');
	char host[256];

	if (!c->metrics_listen[0] || !colon)
		return NULL;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - c->metrics_listen),
		 c->metrics_listen);
	/* A wildcard listener by our name. */
	if (!strcmp(host, "0.0.0.0") || !strcmp(host, "[::]"))
		snprintf(host, sizeof(host), "%s", c->name);
	snprintf(buf, len, "http://%s%s/", host, colon);
	return buf;
}

/* Room for every rule's alerts per agent (each node's links, ports,
 * certificate) and the cluster's own. */
uint32_t coord_conf_alert_max_firing(const struct coord_conf *c)
{
	return c->alert_max_firing ? c->alert_max_firing
				   : 4 * c->max_agents + 64;
}

static const char *const coord_survey_methods[] = {"auto", "tcp", "rdma",
						   "both"};

const char *coord_survey_method_name(int m)
{
	return m >= 0 && m < 4 ? coord_survey_methods[m] : "?";
}

void coord_conf_free(struct coord_conf *c)
{
	free(c->rings);
	c->rings = NULL;
	c->n_rings = 0;
	free(c->ring_nodes);
	c->ring_nodes = NULL;
	c->n_ring_nodes = 0;
	free(c->expect);
	c->expect = NULL;
	c->n_expect = 0;
	free(c->deny);
	c->deny = NULL;
	c->n_deny = 0;
	free(c->deny_serial);
	c->deny_serial = NULL;
	c->n_deny_serial = 0;
}

/* Room for one more element in a list whose capacity is implicit in its
 * count (16, 32, 64, ...): grow exactly when the count reaches it. */
static int coord_conf_grow(void **list, unsigned n, size_t elem)
{
	size_t cap;
	void *p;

	if (*list && (n < 16 || (n & (n - 1))))
		return 0;
	cap = *list ? (size_t)n * 2 : 16;
	p = realloc(*list, cap * elem);
	if (!p)
		return -1;
	*list = p;
	return 0;
}

/* line: kept for coord_conf_verify()'s messages; path: absolute. */
static const struct cfg_string_field coord_conf_strings[] = {
	{"name", offsetof(struct coord_conf, name), COORD_CONF_SIZEOF(name), 0,
	 0},
	{"ca", offsetof(struct coord_conf, ca), COORD_CONF_SIZEOF(ca),
	 offsetof(struct coord_conf, line_ca), 1},
	{"cert", offsetof(struct coord_conf, cert), COORD_CONF_SIZEOF(cert),
	 offsetof(struct coord_conf, line_cert), 1},
	{"key", offsetof(struct coord_conf, key), COORD_CONF_SIZEOF(key),
	 offsetof(struct coord_conf, line_key), 1},
	/* sun_path bounds the socket path, not our buffer. */
	{"control_socket", offsetof(struct coord_conf, control_socket),
	 sizeof(((struct sockaddr_un *)0)->sun_path), 0, 1},
	{"control_group", offsetof(struct coord_conf, control_group),
	 COORD_CONF_SIZEOF(control_group),
	 offsetof(struct coord_conf, line_control_group), 0},
	{"state_dir", offsetof(struct coord_conf, state_dir),
	 COORD_CONF_SIZEOF(state_dir), 0, 1},
};

static int coord_conf_string(struct cfg_ctx *ctx, int argc, char **argv,
			     void *arg)
{
	(void)argc;
	return cfg_set_string_field(ctx, argv, arg, coord_conf_strings,
				    sizeof(coord_conf_strings) /
					    sizeof(coord_conf_strings[0]));
}

static int coord_conf_listen(struct cfg_ctx *ctx, int argc, char **argv,
			     void *arg)
{
	struct coord_conf *c = arg;

	(void)argc;
	return cfg_parse_hostport(ctx, argv[0], argv[1], 7420, c->listen_host,
				  sizeof(c->listen_host), &c->listen_port);
}

static int coord_conf_find_name(char (*list)[64], const char *name,
				unsigned upto)
{
	for (unsigned i = 0; i < upto; i++)
		if (!strcmp(list[i], name))
			return (int)i;
	return -1;
}

/* expect and deny: node names, each once per list. */
static int coord_conf_names(struct cfg_ctx *ctx, int argc, char **argv,
			    void *arg)
{
	struct coord_conf *c = arg;
	int deny = !strcmp(argv[0], "deny"), ret = 0;
	char(**list)[64] = deny ? &c->deny : &c->expect;
	unsigned *n = deny ? &c->n_deny : &c->n_expect;
	unsigned max = deny ? COORD_CONF_MAX_DENY : COORD_CONF_MAX_EXPECT;

	for (int i = 1; i < argc; i++) {
		const char *name = argv[i];

		if (!cfg_valid_node_name(name)) {
			ret = cfg_error(
				ctx,
				"'%s': invalid node name '%s' (1-63 of A-Z a-z 0-9 . _ "
				"-, not starting with '-' or '.')",
				argv[0], name);
			continue;
		}
		if (coord_conf_find_name(*list, name, *n) >= 0) {
			ret = cfg_error(ctx, "'%s': node '%s' listed twice",
					argv[0], name);
			continue;
		}
		if (*n >= max)
			return cfg_error(
				ctx, "'%s': too many %s nodes (max %u)",
				argv[0], deny ? "denied" : "expected", max);
		if (coord_conf_grow((void **)list, *n, sizeof(**list)) < 0)
			return cfg_error(ctx, "'%s': out of memory", argv[0]);
		snprintf((*list)[*n], sizeof((*list)[0]), "%s", name);
		(*n)++;
	}
	return ret;
}

int coord_conf_ring_of(const struct coord_conf *c, const char *node)
{
	for (unsigned k = 0; k < c->n_rings; k++)
		if (coord_conf_find_name(c->ring_nodes + c->rings[k].first,
					 node, c->rings[k].n) >= 0)
			return (int)k;
	return -1;
}

int coord_conf_ring_find(const struct coord_conf *c, const char *id)
{
	for (unsigned k = 0; k < c->n_rings; k++)
		if (!strcmp(c->rings[k].id, id))
			return (int)k;
	return -1;
}

/* ring ID NODE NODE [NODE...]: the members a ring of the site should
 * have; a node in one ring only, an id once. */
static int coord_conf_ring(struct cfg_ctx *ctx, int argc, char **argv,
			   void *arg)
{
	struct coord_conf *c = arg;
	struct coord_conf_ring *r;
	int ret = 0;

	if (!cfg_valid_node_name(argv[1]))
		return cfg_error(
			ctx,
			"'ring': invalid ring id '%s' (1-63 of A-Z a-z "
			"0-9 . _ -, not starting with '-' or '.')",
			argv[1]);
	if (coord_conf_ring_find(c, argv[1]) >= 0)
		return cfg_error(ctx,
				 "'ring': ring '%s' named twice (one directive "
				 "per ring, every member on it)",
				 argv[1]);
	if (c->n_rings >= COORD_CONF_MAX_RINGS)
		return cfg_error(ctx, "'ring': too many rings (max %u)",
				 COORD_CONF_MAX_RINGS);
	if (coord_conf_grow((void **)&c->rings, c->n_rings, sizeof(*c->rings)) <
	    0)
		return cfg_error(ctx, "'ring': out of memory");
	r = &c->rings[c->n_rings];
	memset(r, 0, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "%s", argv[1]);
	r->first = c->n_ring_nodes;
	r->line = ctx->line;
	for (int i = 2; i < argc; i++) {
		const char *name = argv[i];
		int other;

		if (!cfg_valid_node_name(name)) {
			ret = cfg_error(
				ctx,
				"'ring %s': invalid node name '%s' (1-63 "
				"of A-Z a-z 0-9 . _ -, not starting with "
				"'-' or '.')",
				argv[1], name);
			continue;
		}
		if (coord_conf_find_name(c->ring_nodes + r->first, name,
					 r->n) >= 0) {
			ret = cfg_error(ctx,
					"'ring %s': node '%s' listed twice",
					argv[1], name);
			continue;
		}
		other = coord_conf_ring_of(c, name);
		if (other >= 0) {
			ret = cfg_error(
				ctx,
				"'ring %s': node '%s' is already in ring "
				"'%s' (line %u); a node is in one ring",
				argv[1], name, c->rings[other].id,
				c->rings[other].line);
			continue;
		}
		if (c->n_ring_nodes >= COORD_CONF_MAX_EXPECT)
			return cfg_error(
				ctx, "'ring': too many ring members (max %u)",
				COORD_CONF_MAX_EXPECT);
		if (coord_conf_grow((void **)&c->ring_nodes, c->n_ring_nodes,
				    sizeof(*c->ring_nodes)) < 0)
			return cfg_error(ctx, "'ring': out of memory");
		snprintf(c->ring_nodes[c->n_ring_nodes],
			 sizeof(c->ring_nodes[0]), "%s", name);
		c->n_ring_nodes++;
		r->n++;
	}
	if (r->n < 2 && !ret)
		ret = cfg_error(ctx,
				"'ring %s': a ring has two nodes or more (ring "
				"ID NODE NODE [NODE...])",
				argv[1]);
	c->n_rings++;
	return ret;
}

/* A serial in the form deny_serial keeps and tls_peer_serial() prints,
 * less its leading zeros: openssl's "4A:0F:..." and "4a0f..." are the same
 * certificate. -1 if s is not hex (colons allowed) of at most 20 bytes. */
static int coord_conf_serial_norm(const char *s, char *out, size_t len)
{
	size_t n = 0;

	for (; *s == '0' || *s == ':'; s++)
		;
	for (; *s; s++) {
		if (*s == ':')
			continue;
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
		      (*s >= 'A' && *s <= 'F')))
			return -1;
		if (n + 1 >= len)
			return -1;
		out[n++] = (char)(*s >= 'A' && *s <= 'F' ? *s - 'A' + 'a' : *s);
	}
	if (n == 0)
		out[n++] = '0';
	out[n] = '\0';
	return 0;
}

static int coord_conf_deny_serial(struct cfg_ctx *ctx, int argc, char **argv,
				  void *arg)
{
	struct coord_conf *c = arg;
	char norm[COORD_CONF_SERIAL_LEN];
	int ret = 0;

	for (int i = 1; i < argc; i++) {
		unsigned j;

		if (strlen(argv[i]) > 64 ||
		    coord_conf_serial_norm(argv[i], norm, sizeof(norm)) < 0) {
			ret = cfg_error(ctx,
					"'%s': '%.64s' is not a certificate "
					"serial (hex, at most 20 bytes, colons "
					"allowed)",
					argv[0], argv[i]);
			continue;
		}
		for (j = 0; j < c->n_deny_serial; j++)
			if (!strcmp(c->deny_serial[j], norm))
				break;
		if (j < c->n_deny_serial) {
			ret = cfg_error(ctx, "'%s': serial %s listed twice",
					argv[0], argv[i]);
			continue;
		}
		if (c->n_deny_serial >= COORD_CONF_MAX_DENY)
			return cfg_error(ctx, "'%s': too many serials (max %d)",
					 argv[0], COORD_CONF_MAX_DENY);
		if (coord_conf_grow((void **)&c->deny_serial, c->n_deny_serial,
				    sizeof(c->deny_serial[0])) < 0)
			return cfg_error(ctx, "'%s': out of memory", argv[0]);
		memcpy(c->deny_serial[c->n_deny_serial++], norm, sizeof(norm));
	}
	return ret;
}

static int coord_conf_admit_unexpected(struct cfg_ctx *ctx, int argc,
				       char **argv, void *arg)
{
	struct coord_conf *c = arg;

	(void)argc;
	return cfg_parse_bool(ctx, argv[0], argv[1], &c->admit_unexpected);
}

static int coord_conf_report_command(struct cfg_ctx *ctx, int argc, char **argv,
				     void *arg)
{
	struct coord_conf *c = arg;

	(void)argc;
	return cfg_parse_bool(ctx, argv[0], argv[1], &c->health_report_command);
}

static int coord_conf_survey_load(struct cfg_ctx *ctx, int argc, char **argv,
				  void *arg)
{
	struct coord_conf *c = arg;

	(void)argc;
	return cfg_parse_bool(ctx, argv[0], argv[1], &c->survey_load);
}

int coord_conf_admit(const struct coord_conf *c, const char *node,
		     const char *serial_hex, char *why, size_t len)
{
	char norm[COORD_CONF_SERIAL_LEN];

	if (len)
		why[0] = '\0';
	if (serial_hex && c->n_deny_serial &&
	    coord_conf_serial_norm(serial_hex, norm, sizeof(norm)) == 0)
		for (unsigned i = 0; i < c->n_deny_serial; i++)
			if (!strcmp(c->deny_serial[i], norm)) {
				snprintf(why, len,
					 "certificate serial %s is denied "
					 "(deny_serial)",
					 norm);
				return -1;
			}
	if (coord_conf_find_name(c->deny, node, c->n_deny) >= 0) {
		snprintf(why, len, "node '%s' is denied (deny)", node);
		return -1;
	}
	if (c->n_expect && !c->admit_unexpected &&
	    coord_conf_find_name(c->expect, node, c->n_expect) < 0) {
		snprintf(why, len,
			 "node '%s' is not expected (add it to 'expect', or "
			 "set 'admit_unexpected yes')",
			 node);
		return -1;
	}
	return 0;
}

static const struct cfg_duration_field coord_conf_durations[] = {
	{"heartbeat_interval",
	 offsetof(struct coord_conf, heartbeat_interval_ms), 100, 600000},
	{"handshake_timeout", offsetof(struct coord_conf, handshake_timeout_ms),
	 100, 300000},
	{"survey_duration", offsetof(struct coord_conf, survey_duration_ms),
	 100, 600000},
	{"survey_warmup", offsetof(struct coord_conf, survey_warmup_ms), 0,
	 60000},
	{"survey_settle", offsetof(struct coord_conf, survey_settle_ms), 0,
	 3600000},
	{"survey_grace", offsetof(struct coord_conf, survey_grace_ms), 0,
	 86400000},
	{"survey_interval", offsetof(struct coord_conf, survey_interval_ms), 0,
	 30ull * 86400000},
	{"recheck_settle", offsetof(struct coord_conf, recheck_settle_ms), 0,
	 3600000},
	{"busy_retry", offsetof(struct coord_conf, busy_retry_ms), 1000,
	 86400000},
	{"light_check_interval",
	 offsetof(struct coord_conf, light_check_interval_ms), 0, 86400000},
	{"alert_hold_down", offsetof(struct coord_conf, alert_hold_down_ms), 0,
	 3600000},
	{"relearn_timeout", offsetof(struct coord_conf, relearn_timeout_ms), 0,
	 600000},
	{"alert_command_timeout",
	 offsetof(struct coord_conf, alert_command_timeout_ms), 100, 600000},
	{"alert_webhook_timeout",
	 offsetof(struct coord_conf, alert_webhook_timeout_ms), 100, 600000},
	{"alert_receiver_webhook_timeout",
	 offsetof(struct coord_conf, alert_webhook_timeout_ms), 100, 600000},
	{"alertmanager_resend_interval",
	 offsetof(struct coord_conf, alertmanager_resend_ms), 1000, 3600000},
	{"alertmanager_timeout",
	 offsetof(struct coord_conf, alertmanager_timeout_ms), 100, 600000},
	{"watchdog_interval", offsetof(struct coord_conf, watchdog_interval_ms),
	 0, 86400000},
	{"health_report_interval",
	 offsetof(struct coord_conf, health_report_interval_ms), 0,
	 30ull * 86400000},
	{"history_max_age", offsetof(struct coord_conf, history_max_age_ms),
	 3600000, 3650ull * 86400000},
};

static int coord_conf_duration(struct cfg_ctx *ctx, int argc, char **argv,
			       void *arg)
{
	(void)argc;
	return cfg_set_duration_field(ctx, argv, arg, coord_conf_durations,
				      sizeof(coord_conf_durations) /
					      sizeof(coord_conf_durations[0]));
}

static const struct {
	const char *name;
	size_t off;
	uint64_t min;
	uint64_t max;
} coord_conf_uints[] = {
	{"heartbeat_misses", offsetof(struct coord_conf, heartbeat_misses), 1,
	 100},
	{"max_frame", offsetof(struct coord_conf, max_frame), 4096,
	 64 * 1024 * 1024},
	{"max_agents", offsetof(struct coord_conf, max_agents), 1, 100000},
	{"latency_iterations", offsetof(struct coord_conf, lat_iterations), 10,
	 1000000},
	{"busy_threshold", offsetof(struct coord_conf, busy_threshold), 0, 100},
	{"diagonal_all_max", offsetof(struct coord_conf, diagonal_all_max), 0,
	 100000},
	{"survey_rdma_qps", offsetof(struct coord_conf, survey_rdma_qps), 1,
	 TESTLIMITS_RDMA_QPS_MAX},
	{"survey_rdma_tc", offsetof(struct coord_conf, survey_rdma_tc), 0,
	 TESTLIMITS_RDMA_TC_MAX},
	{"survey_rdma_sl", offsetof(struct coord_conf, survey_rdma_sl), 0,
	 TESTLIMITS_RDMA_SL_MAX},
	{"alert_webhook_retries",
	 offsetof(struct coord_conf, alert_webhook_retries), 0, 100},
	{"alert_receiver_webhook_retries",
	 offsetof(struct coord_conf, alert_webhook_retries), 0, 100},
	/* 10 million: the hourly thinning counts the rows on the loop, ~47 ms
	 * at that size (docs/SECURITY.md). */
	{"history_max_rows", offsetof(struct coord_conf, history_max_rows),
	 1000, 10000000},
};

static int coord_conf_uint(struct cfg_ctx *ctx, int argc, char **argv,
			   void *arg)
{
	uint64_t v;

	(void)argc;
	for (size_t i = 0;
	     i < sizeof(coord_conf_uints) / sizeof(coord_conf_uints[0]); i++) {
		if (strcmp(argv[0], coord_conf_uints[i].name))
			continue;
		if (cfg_parse_uint(ctx, argv[0], argv[1],
				   coord_conf_uints[i].min,
				   coord_conf_uints[i].max, &v) < 0)
			return -1;
		/* All of these are uint32_t fields. */
		*(uint32_t *)(void *)COORD_CONF_FIELD(
			arg, coord_conf_uints[i].off) = (uint32_t)v;
		return 0;
	}
	return cfg_error(ctx, "'%s': no such numeric setting", argv[0]);
}

/* A list of positive integers into a fixed array. */
static int coord_conf_list(struct cfg_ctx *ctx, int argc, char **argv,
			   uint32_t *out, unsigned max, unsigned *n,
			   uint64_t lo, uint64_t hi)
{
	uint64_t v;

	if (argc - 1 > (int)max)
		return cfg_error(ctx, "%s: at most %u values", argv[0], max);
	for (int i = 1; i < argc; i++) {
		if (cfg_parse_uint(ctx, argv[0], argv[i], lo, hi, &v) < 0)
			return -1;
		out[i - 1] = (uint32_t)v;
	}
	*n = (unsigned)(argc - 1);
	return 0;
}

static int coord_conf_streams(struct cfg_ctx *ctx, int argc, char **argv,
			      void *arg)
{
	struct coord_conf *c = arg;

	return coord_conf_list(ctx, argc, argv, c->ladder, 4, &c->n_ladder, 1,
			       64);
}

static int coord_conf_lat_sizes(struct cfg_ctx *ctx, int argc, char **argv,
				void *arg)
{
	struct coord_conf *c = arg;
	uint64_t v;

	if (argc - 1 > TESTLIMITS_LAT_SIZES_MAX)
		return cfg_error(ctx, "%s: at most %u values", argv[0],
				 TESTLIMITS_LAT_SIZES_MAX);
	/* Sizes, as everywhere: 64, 4K, 1M. */
	for (int i = 1; i < argc; i++) {
		if (cfg_parse_size(ctx, argv[0], argv[i], 1,
				   TESTLIMITS_TCP_LAT_SIZE_MAX, &v) < 0)
			return -1;
		/* One size measured twice is one result shown twice. */
		for (int j = 1; j < i; j++)
			if (c->lat_sizes[j - 1] == (uint32_t)v)
				return cfg_error(ctx,
						 "'%s': size '%s' given twice "
						 "(%llu bytes): give each size "
						 "once",
						 argv[0], argv[i],
						 (unsigned long long)v);
		c->lat_sizes[i - 1] = (uint32_t)v;
	}
	c->n_lat_sizes = (unsigned)(argc - 1);
	return 0;
}

static int coord_conf_rank0(struct cfg_ctx *ctx, int argc, char **argv,
			    void *arg)
{
	struct coord_conf *c = arg;

	(void)argc;
	if (!cfg_valid_node_name(argv[1]))
		return cfg_error(ctx, "rank0: invalid node name '%s'", argv[1]);
	return cfg_copy_string(ctx, argv[0], argv[1], c->rank0,
			       sizeof(c->rank0));
}

static int coord_conf_direction(struct cfg_ctx *ctx, int argc, char **argv,
				void *arg)
{
	struct coord_conf *c = arg;

	(void)argc;
	if (!strcmp(argv[1], "lower"))
		c->rank_higher = 0;
	else if (!strcmp(argv[1], "higher"))
		c->rank_higher = 1;
	else
		return cfg_error(ctx,
				 "rank_direction: '%s' is not lower or "
				 "higher",
				 argv[1]);
	return 0;
}

static int coord_conf_method(struct cfg_ctx *ctx, int argc, char **argv,
			     void *arg)
{
	struct coord_conf *c = arg;

	(void)argc;
	for (int i = 0; i < 4; i++)
		if (!strcmp(argv[1], coord_survey_methods[i])) {
			c->survey_method = i;
			return 0;
		}
	return cfg_error(ctx,
			 "survey_method: '%s' is not auto, tcp, rdma or both",
			 argv[1]);
}

static int coord_conf_rdma_size(struct cfg_ctx *ctx, int argc, char **argv,
				void *arg)
{
	struct coord_conf *c = arg;
	uint64_t v;

	(void)argc;
	if (cfg_parse_size(ctx, argv[0], argv[1], 1, TESTLIMITS_RDMA_SIZE_MAX,
			   &v) < 0)
		return -1;
	c->survey_rdma_size = (uint32_t)v;
	return 0;
}

/* alert_command PATH [ARG...]: exec'd as given, no shell. */
static int coord_conf_alert_command(struct cfg_ctx *ctx, int argc, char **argv,
				    void *arg)
{
	struct coord_conf *c = arg;

	if (argv[1][0] != '/')
		return cfg_error(ctx,
				 "alert_command: '%s' is not an absolute path",
				 argv[1]);
	if (argc - 1 > COORD_CONF_MAX_ARGS)
		return cfg_error(ctx, "alert_command: more than %d words",
				 COORD_CONF_MAX_ARGS);
	for (int i = 1; i < argc; i++)
		if (strlen(argv[i]) >= sizeof(c->alert_argv[0]))
			return cfg_error(ctx,
					 "alert_command: '%.40s...' is "
					 "too long",
					 argv[i]);
	for (int i = 1; i < argc; i++)
		snprintf(c->alert_argv[i - 1], sizeof(c->alert_argv[0]), "%s",
			 argv[i]);
	c->n_alert_argv = (unsigned)argc - 1;
	return 0;
}

/* Does path name Alertmanager's API (the receiver format is not what it
 * takes)? */
static int coord_conf_is_am_api(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	return (n >= 14 && !strncmp(path + n - 14, "/api/v1/alerts", 14)) ||
	       (n >= 14 && !strncmp(path + n - 14, "/api/v2/alerts", 14));
}

/* alert_receiver_webhook http://HOST[:PORT]/PATH (plain HTTP: a receiver
 * on the management network or a local relay); alert_webhook is its old
 * name. */
static int coord_conf_webhook(struct cfg_ctx *ctx, int argc, char **argv,
			      void *arg)
{
	struct coord_conf *c = arg;
	char err[160], host[256], path[COORD_CONF_PATH_LEN];
	uint16_t port;

	(void)argc;
	if (cfg_split_http_url(argv[1], host, sizeof(host), &port, path,
			       sizeof(path), err, sizeof(err)) < 0)
		return cfg_error(ctx, "%s: %s", argv[0], err);
	if (coord_conf_is_am_api(path))
		return cfg_error(ctx,
				 "%s: '%s' is Alertmanager's API, which "
				 "refuses the notification JSON this sends: "
				 "use 'alertmanager_url http://%s%s%s:%u'",
				 argv[0], argv[1], strchr(host, ':') ? "[" : "",
				 host, strchr(host, ':') ? "]" : "",
				 (unsigned)port);
	if (strlen(argv[1]) >= sizeof(c->alert_webhook))
		return cfg_error(ctx, "%s: URL too long", argv[0]);
	if (!strcmp(argv[0], "alert_webhook"))
		cfg_warning(ctx,
			    "alert_webhook is now called "
			    "alert_receiver_webhook (it posts the JSON that "
			    "Alertmanager sends to its receivers); to send "
			    "alerts to Alertmanager itself use "
			    "alertmanager_url");
	snprintf(c->alert_webhook, sizeof(c->alert_webhook), "%s", argv[1]);
	return 0;
}

/* The old names of alert_receiver_webhook_timeout and _retries: accepted,
 * with a warning naming the new one. */
static int coord_conf_webhook_old(struct cfg_ctx *ctx, int argc, char **argv,
				  void *arg)
{
	int timeout = !strcmp(argv[0], "alert_webhook_timeout");

	cfg_warning(ctx, "%s is now called alert_receiver_webhook_%s", argv[0],
		    timeout ? "timeout" : "retries");
	return timeout ? coord_conf_duration(ctx, argc, argv, arg)
		       : coord_conf_uint(ctx, argc, argv, arg);
}

/* alertmanager_url http://HOST[:PORT], repeatable: each one gets every
 * alert (an HA pair deduplicates among itself). */
static int coord_conf_alertmanager(struct cfg_ctx *ctx, int argc, char **argv,
				   void *arg)
{
	struct coord_conf *c = arg;
	char err[160], host[256], path[COORD_CONF_PATH_LEN];
	uint16_t port;

	(void)argc;
	if (cfg_split_http_url(argv[1], host, sizeof(host), &port, path,
			       sizeof(path), err, sizeof(err)) < 0)
		return cfg_error(ctx, "alertmanager_url: '%s': %s", argv[1],
				 err);
	if (strcmp(path, "/"))
		return cfg_error(ctx,
				 "alertmanager_url: '%s' has a path (%s): "
				 "give Alertmanager's base URL, "
				 "http://HOST:PORT (ringd appends "
				 "/api/v2/alerts)",
				 argv[1], path);
	if (strlen(argv[1]) >= sizeof(c->alertmanager_url[0]))
		return cfg_error(ctx, "alertmanager_url: URL too long");
	for (unsigned i = 0; i < c->n_alertmanager_url; i++)
		if (!strcmp(c->alertmanager_url[i], argv[1]))
			return cfg_error(ctx,
					 "alertmanager_url: '%s' given twice",
					 argv[1]);
	if (c->n_alertmanager_url >= COORD_CONF_MAX_AM_URLS)
		return cfg_error(ctx,
				 "alertmanager_url: more than %d; the "
				 "members of an Alertmanager cluster share "
				 "what they receive, %d of them are enough",
				 COORD_CONF_MAX_AM_URLS,
				 COORD_CONF_MAX_AM_URLS);
	snprintf(c->alertmanager_url[c->n_alertmanager_url++],
		 sizeof(c->alertmanager_url[0]), "%s", argv[1]);
	return 0;
}

/* metrics_listen ADDR:PORT: off unless set (the figures are for the
 * monitoring network, not for anyone). */
static int coord_conf_metrics(struct cfg_ctx *ctx, int argc, char **argv,
			      void *arg)
{
	struct coord_conf *c = arg;
	char host[256];
	uint16_t port = 0;

	(void)argc;
	if (cfg_parse_hostport(ctx, argv[0], argv[1], 0, host, sizeof(host),
			       &port) < 0)
		return -1;
	if (!port)
		return cfg_error(ctx, "metrics_listen: '%s' needs a port",
				 argv[1]);
	snprintf(c->metrics_listen, sizeof(c->metrics_listen),
		 strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
	return 0;
}

static const struct cfg_directive coord_conf_directives[] = {
	{"alert_hold_down", 1, 1, coord_conf_duration},
	{"relearn_timeout", 1, 1, coord_conf_duration},
	{"alert_command", 1, COORD_CONF_MAX_ARGS + 1, coord_conf_alert_command},
	{"alert_command_timeout", 1, 1, coord_conf_duration},
	{"alert_receiver_webhook", 1, 1, coord_conf_webhook},
	{"alert_receiver_webhook_timeout", 1, 1, coord_conf_duration},
	{"alert_receiver_webhook_retries", 1, 1, coord_conf_uint},
	{"alert_webhook", 1, 1, coord_conf_webhook},
	{"alert_webhook_timeout", 1, 1, coord_conf_webhook_old},
	{"alert_webhook_retries", 1, 1, coord_conf_webhook_old},
	{"alertmanager_url", 1, 1, coord_conf_alertmanager},
	{"alertmanager_resend_interval", 1, 1, coord_conf_duration},
	{"alertmanager_timeout", 1, 1, coord_conf_duration},
	{"watchdog_interval", 1, 1, coord_conf_duration},
	{"health_report_interval", 1, 1, coord_conf_duration},
	{"health_report_command", 1, 1, coord_conf_report_command},
	{"metrics_listen", 1, 1, coord_conf_metrics},
	{"history_max_age", 1, 1, coord_conf_duration},
	{"history_max_rows", 1, 1, coord_conf_uint},
	{"survey_method", 1, 1, coord_conf_method},
	{"survey_load", 1, 1, coord_conf_survey_load},
	{"survey_rdma_qps", 1, 1, coord_conf_uint},
	{"survey_rdma_size", 1, 1, coord_conf_rdma_size},
	{"survey_rdma_tc", 1, 1, coord_conf_uint},
	{"survey_rdma_sl", 1, 1, coord_conf_uint},
	{"survey_duration", 1, 1, coord_conf_duration},
	{"survey_warmup", 1, 1, coord_conf_duration},
	{"survey_settle", 1, 1, coord_conf_duration},
	{"recheck_settle", 1, 1, coord_conf_duration},
	{"busy_retry", 1, 1, coord_conf_duration},
	{"light_check_interval", 1, 1, coord_conf_duration},
	{"busy_threshold", 1, 1, coord_conf_uint},
	{"survey_grace", 1, 1, coord_conf_duration},
	{"survey_interval", 1, 1, coord_conf_duration},
	{"survey_streams", 1, 4, coord_conf_streams},
	{"latency_sizes", 1, TESTLIMITS_LAT_SIZES_MAX, coord_conf_lat_sizes},
	{"latency_iterations", 1, 1, coord_conf_uint},
	{"diagonal_all_max", 1, 1, coord_conf_uint},
	{"rank0", 1, 1, coord_conf_rank0},
	{"rank_direction", 1, 1, coord_conf_direction},
	{"name", 1, 1, coord_conf_string},
	{"listen", 1, 1, coord_conf_listen},
	{"ca", 1, 1, coord_conf_string},
	{"cert", 1, 1, coord_conf_string},
	{"key", 1, 1, coord_conf_string},
	{"control_socket", 1, 1, coord_conf_string},
	{"control_group", 1, 1, coord_conf_string},
	{"state_dir", 1, 1, coord_conf_string},
	{"ring", 2, -1, coord_conf_ring},
	{"expect", 1, -1, coord_conf_names},
	{"admit_unexpected", 1, 1, coord_conf_admit_unexpected},
	{"deny", 1, -1, coord_conf_names},
	{"deny_serial", 1, -1, coord_conf_deny_serial},
	{"heartbeat_interval", 1, 1, coord_conf_duration},
	{"heartbeat_misses", 1, 1, coord_conf_uint},
	{"handshake_timeout", 1, 1, coord_conf_duration},
	{"max_frame", 1, 1, coord_conf_uint},
	{"max_agents", 1, 1, coord_conf_uint},
	{NULL, 0, 0, NULL},
};

int coord_conf_check(struct coord_conf *c, struct cfg_ctx *ctx)
{
	struct cfg_ctx local = {.file = "coordinator.conf"};
	unsigned before;

	if (!ctx)
		ctx = &local;
	ctx->line = 0;
	before = ctx->errors;
	if (!c->name[0] && gethostname(c->name, sizeof(c->name)) < 0) {
		c->name[0] = '\0';
		cfg_error(ctx, "cannot get hostname (%s); set 'name'",
			  strerror(errno));
	}
	c->name[sizeof(c->name) - 1] = '\0';
	/* The parser refuses duplicates with a line number; this catches
   * lists built by other means. */
	for (unsigned i = 1; i < c->n_expect; i++)
		if (coord_conf_find_name(c->expect, c->expect[i], i) >= 0)
			cfg_error(ctx, "node '%s' expected twice",
				  c->expect[i]);
	/* Both would leave the operator guessing which one wins. */
	for (unsigned i = 0; i < c->n_deny; i++)
		if (coord_conf_find_name(c->expect, c->deny[i], c->n_expect) >=
		    0)
			cfg_error(ctx,
				  "node '%s' is both expected and denied; "
				  "remove it from 'expect'",
				  c->deny[i]);
	/* A ring's member that expect leaves out would be refused. */
	for (unsigned i = 0;
	     c->n_expect && !c->admit_unexpected && i < c->n_ring_nodes; i++)
		if (coord_conf_find_name(c->expect, c->ring_nodes[i],
					 c->n_expect) < 0)
			cfg_error(ctx,
				  "node '%s' is in ring '%s' but not expected; "
				  "add it to 'expect'",
				  c->ring_nodes[i],
				  c->rings[coord_conf_ring_of(c,
							      c->ring_nodes[i])]
					  .id);
	for (unsigned i = 0; i < c->n_ring_nodes; i++)
		if (coord_conf_find_name(c->deny, c->ring_nodes[i],
					 c->n_deny) >= 0)
			cfg_error(ctx,
				  "node '%s' is in ring '%s' and denied; "
				  "remove it from one",
				  c->ring_nodes[i],
				  c->rings[coord_conf_ring_of(c,
							      c->ring_nodes[i])]
					  .id);
	if (c->n_expect > c->max_agents)
		cfg_error(ctx, "%u expected nodes exceed max_agents %u",
			  c->n_expect, c->max_agents);
	return cfg_ctx_result(ctx, before);
}

int coord_conf_load(struct coord_conf *c, const char *path, struct cfg_ctx *ctx)
{
	return cfg_load_file(path, &coord_conf_type, c, ctx);
}

int coord_conf_load_buffer(struct coord_conf *c, const char *name,
			   const char *buf, size_t len, struct cfg_ctx *ctx)
{
	return cfg_load_buffer(name, buf, len, &coord_conf_type, c, ctx);
}

int coord_conf_verify(const struct coord_conf *c, struct cfg_ctx *ctx)
{
	struct cfg_ctx local = {.file = "coordinator.conf"};
	unsigned before;

	if (!ctx)
		ctx = &local;
	before = ctx->errors;
	cfg_check_tls_files(ctx, 1, c->ca, c->line_ca, c->cert, c->line_cert,
			    c->key, c->line_key);
	if (c->control_group[0] && !getgrnam(c->control_group)) {
		ctx->line = c->line_control_group;
		cfg_warning(ctx,
			    "control_group %s does not exist: the control "
			    "socket will be for root only",
			    c->control_group);
	}
	ctx->line = 0;
	return cfg_ctx_result(ctx, before);
}

static int coord_conf_check_cb(void *conf, struct cfg_ctx *ctx)
{
	return coord_conf_check(conf, ctx);
}

static int coord_conf_verify_cb(void *conf, struct cfg_ctx *ctx)
{
	return coord_conf_verify(conf, ctx);
}

const struct cfg_conf_type coord_conf_type = {
	.directives = coord_conf_directives,
	.check = coord_conf_check_cb,
	.verify = coord_conf_verify_cb,
};
