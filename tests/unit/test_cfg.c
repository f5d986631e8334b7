/* Tests for common/cfg.c, agent/agent_conf.c and coordinator/coord_conf.c:
 * every error path with its exact "file:line: message" text. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_conf.h"
#include "cfg.h"
#include "coordinator/coord_conf.h"
#include "pki.h"
#include "size.h"
#include "testutil.h"

#define CAP_MAX 64

struct capture {
	unsigned n;
	char msg[CAP_MAX][1200];
};

static void capture_report(const char *msg, void *arg)
{
	struct capture *cap = arg;

	if (cap->n < CAP_MAX)
		snprintf(cap->msg[cap->n], sizeof(cap->msg[0]), "%s", msg);
	cap->n++;
}

static struct capture cap;
static struct cfg_ctx ctx;

static int setup(void **state)
{
	(void)state;
	memset(&cap, 0, sizeof(cap));
	memset(&ctx, 0, sizeof(ctx));
	ctx.report = capture_report;
	ctx.report_arg = &cap;
	return 0;
}

/* A ctx positioned as if parsing line 7 of v.conf, for the value parsers. */
static struct cfg_ctx *vctx(void)
{
	setup(NULL);
	ctx.file = "v.conf";
	ctx.line = 7;
	return &ctx;
}

static void assert_msgs(unsigned n, ...)
{
	va_list ap;

	if (cap.n != n) {
		for (unsigned i = 0; i < cap.n && i < CAP_MAX; i++)
			print_message("got: %s\n", cap.msg[i]);
	}
	assert_int_equal(cap.n, n);
	assert_int_equal(ctx.errors, n);
	va_start(ap, n);
	for (unsigned i = 0; i < n; i++)
		assert_string_equal(cap.msg[i], va_arg(ap, const char *));
	va_end(ap);
}

static int agent_parse(struct agent_conf *c, const char *text)
{
	setup(NULL);
	agent_conf_defaults(c);
	return agent_conf_load_buffer(c, "t.conf", text, strlen(text), &ctx);
}

static int coord_parse(struct coord_conf *c, const char *text)
{
	setup(NULL);
	coord_conf_defaults(c);
	return coord_conf_load_buffer(c, "t.conf", text, strlen(text), &ctx);
}

/* An agent (coord 0) or coordinator config whose only error is the given
 * line, on line 2 between two good ones. */
static void conf_bad(int coord, const char *line, const char *want)
{
	struct agent_conf a;
	struct coord_conf c;
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s\n%s\n%s\n",
		 coord ? "name c" : "coordinator c1", line,
		 coord ? "state_dir /s" : "node n1");
	assert_int_equal(coord ? coord_parse(&c, buf) : agent_parse(&a, buf),
			 -1);
	assert_msgs(1, want);
	/* Parsing went on past the bad line. */
	if (!coord) {
		assert_string_equal(a.node, "n1");
		return;
	}
	assert_string_equal(c.state_dir, "/s");
	coord_conf_free(&c);
}

static void agent_bad(const char *line, const char *want)
{
	conf_bad(0, line, want);
}

static void coord_bad(const char *line, const char *want)
{
	conf_bad(1, line, want);
}

/* A field of a parsed configuration and the value it must hold: a string
 * (str set) or an unsigned integer as wide as the field. */
struct want_field {
	const char *name;
	size_t off, size;
	const char *str;
	uint64_t num;
};

#define WANT_STR(type, field, s)                                               \
	{                                                                      \
		.name = #field, .off = offsetof(type, field), .str = (s)       \
	}
#define WANT_NUM(type, field, n)                                               \
	{                                                                      \
		.name = #field, .off = offsetof(type, field),                  \
		.size = sizeof(((type *)0)->field), .num = (n)                 \
	}
#define AGENT_STR(field, s) WANT_STR(struct agent_conf, field, s)
#define AGENT_NUM(field, n) WANT_NUM(struct agent_conf, field, n)
#define COORD_STR(field, s) WANT_STR(struct coord_conf, field, s)
#define COORD_NUM(field, n) WANT_NUM(struct coord_conf, field, n)
#define N_WANT(tab) (sizeof(tab) / sizeof((tab)[0]))

/* Every field of the table, naming the one that differs (cmocka names
 * only the line of the loop). */
static void assert_fields(const void *conf, const struct want_field *want,
			  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *p = (const char *)conf + want[i].off;
		uint64_t v = 0;

		if (want[i].str) {
			if (strcmp(p, want[i].str))
				print_error("field %s\n", want[i].name);
			assert_string_equal(p, want[i].str);
			continue;
		}
		if (want[i].size == sizeof(uint16_t)) {
			uint16_t v16;

			memcpy(&v16, p, sizeof(v16));
			v = v16;
		} else if (want[i].size == sizeof(uint32_t)) {
			uint32_t v32;

			memcpy(&v32, p, sizeof(v32));
			v = v32;
		} else {
			assert_int_equal(want[i].size, sizeof(v));
			memcpy(&v, p, sizeof(v));
		}
		if (v != want[i].num)
			print_error("field %s\n", want[i].name);
		assert_int_equal(v, want[i].num);
	}
}

/* The defaults that the shipped agent.conf shows as well. */
static const struct want_field agent_shown_defaults[] = {
	AGENT_STR(ca, "/etc/ringd/ca.crt"),
	AGENT_STR(cert, "/etc/ringd/agent.crt"),
	AGENT_STR(key, "/etc/ringd/agent.key"),
	AGENT_NUM(reconnect_min_ms, 1000),
	AGENT_NUM(reconnect_max_ms, 60000),
	AGENT_NUM(inventory_interval_ms, 30000),
	AGENT_NUM(connect_timeout_ms, 10000),
	AGENT_NUM(max_frame, 1024 * 1024),
};

/* The defaults that the shipped coordinator.conf shows as well. */
static const struct want_field coord_shown_defaults[] = {
	COORD_STR(listen_host, "0.0.0.0"),
	COORD_NUM(listen_port, 7420),
	COORD_STR(cert, "/etc/ringd/coordinator.crt"),
	COORD_STR(control_socket, "/run/ringd/coordinator.sock"),
	COORD_STR(control_group, "ringctl"),
	COORD_STR(state_dir, "/var/lib/ringd"),
	COORD_NUM(admit_unexpected, 0),
	COORD_NUM(heartbeat_interval_ms, 5000),
	COORD_NUM(heartbeat_misses, 3),
	COORD_NUM(handshake_timeout_ms, 10000),
	COORD_NUM(max_frame, 1024 * 1024),
	COORD_NUM(max_agents, 4096),
	COORD_NUM(alertmanager_resend_ms, 60000),
	COORD_NUM(alertmanager_timeout_ms, 10000),
	COORD_NUM(watchdog_interval_ms, 60000),
};

static void short_hostname(char *buf, size_t len)
{
	assert_int_equal(gethostname(buf, len), 0);
	buf[len - 1] = '\0';
	buf[strcspn(buf, ".")] = '\0';
}

/* ---- generic parser ---- */

static void test_unknown_directive(void **state)
{
	(void)state;
	agent_bad("frobnicate 1 2", "t.conf:2: unknown directive 'frobnicate'");
	/* Directive names are case-sensitive. */
	agent_bad("Node x", "t.conf:2: unknown directive 'Node'");
	coord_bad("coordinator x", "t.conf:2: unknown directive 'coordinator'");
}

static void test_arg_counts(void **state)
{
	(void)state;
	agent_bad("node", "t.conf:2: 'node' takes 1 argument, got 0");
	agent_bad("node a b", "t.conf:2: 'node' takes 1 argument, got 2");
	agent_bad(
		"data_interface",
		"t.conf:2: 'data_interface' takes at least 1 argument, got 0");
	agent_bad("nominal_speed eth*",
		  "t.conf:2: 'nominal_speed' takes 2 arguments, got 1");
	agent_bad("nominal_speed eth* 1G 2G",
		  "t.conf:2: 'nominal_speed' takes 2 arguments, got 3");
	coord_bad("expect",
		  "t.conf:2: 'expect' takes at least 1 argument, got 0");
	coord_bad("max_agents",
		  "t.conf:2: 'max_agents' takes 1 argument, got 0");
}

static int range_calls;

static int range_fn(struct cfg_ctx *c, int argc, char **argv, void *arg)
{
	(void)c;
	(void)argv;
	(void)arg;
	range_calls++;
	return argc == 2 ? -1 : 0; /* fails without reporting */
}

static int twice_fn(struct cfg_ctx *c, int argc, char **argv, void *arg)
{
	(void)argc;
	(void)arg;
	cfg_error(c, "first problem with %s", argv[1]);
	return cfg_error(c, "second problem");
}

static const struct cfg_directive range_tab[] = {
	{"r", 1, 3, range_fn},
	{"pair", 2, 2, twice_fn},
	{NULL, 0, 0, NULL},
};

static void test_arg_range_and_silent_handler(void **state)
{
	const char *in = "r\nr a b c d\nr a\nr a b\npair x y\n";

	(void)state;
	range_calls = 0;
	assert_int_equal(cfg_parse_buffer("g.conf", in, strlen(in), range_tab,
					  NULL, &ctx),
			 -1);
	assert_msgs(5, "g.conf:1: 'r' takes 1 to 3 arguments, got 0",
		    "g.conf:2: 'r' takes 1 to 3 arguments, got 4",
		    /* A handler failing silently still yields an error. */
		    "g.conf:3: invalid 'r' directive",
		    "g.conf:5: first problem with x",
		    "g.conf:5: second problem");
	assert_int_equal(range_calls, 2);
	assert_int_equal(ctx.line, 0);
}

static void test_errors_continue(void **state)
{
	struct agent_conf c;
	const char *in = "bogus\n"
			 "\n"
			 "node -x\n"
			 "coordinator c1:99\n"
			 "  max_frame   12   # too small\n"
			 "connect_timeout 20s\n";

	(void)state;
	assert_int_equal(agent_parse(&c, in), -1);
	assert_msgs(
		3, "t.conf:1: unknown directive 'bogus'",
		"t.conf:3: 'node': invalid node name '-x' (1-63 of A-Z a-z 0-9 . "
		"_ -, not starting with '-' or '.')",
		"t.conf:5: 'max_frame': 12 is out of range (4096..67108864)");
	/* Good lines between bad ones were applied, bad ones left defaults. */
	assert_string_equal(c.coordinator_host, "c1");
	assert_int_equal(c.coordinator_port, 99);
	assert_int_equal(c.connect_timeout_ms, 20000);
	assert_int_equal(c.max_frame, 1024 * 1024);
	/* The bad node line left the default, which the cross-directive
	 * check (run after bad lines too) fills from the hostname. */
	assert_string_not_equal(c.node, "-x");
}

static void test_long_lines(void **state)
{
	char buf[3 * CFG_MAX_LINE];
	struct agent_conf c;
	size_t n;

	(void)state;
	/* Exactly CFG_MAX_LINE characters (a comment) is fine. */
	n = (size_t)snprintf(buf, sizeof(buf), "coordinator c1\n#");
	memset(buf + n, 'x', CFG_MAX_LINE - 1);
	strcpy(buf + n + CFG_MAX_LINE - 1, "\nnode ok\n");
	assert_int_equal(agent_parse(&c, buf), 0);
	assert_msgs(0);
	assert_string_equal(c.node, "ok");

	/* One more is an error; the next line still counts as line 3. */
	n = (size_t)snprintf(buf, sizeof(buf), "coordinator c1\n#");
	memset(buf + n, 'x', CFG_MAX_LINE);
	strcpy(buf + n + CFG_MAX_LINE, "\nnode\n");
	assert_int_equal(agent_parse(&c, buf), -1);
	assert_msgs(2, "t.conf:2: line too long (more than 1024 characters)",
		    "t.conf:3: 'node' takes 1 argument, got 0");

	/* Also without a final newline. */
	memset(buf, 'y', CFG_MAX_LINE + 5);
	buf[CFG_MAX_LINE + 5] = '\0';
	assert_int_equal(agent_parse(&c, buf), -1);
	/* The checks across lines run after bad lines as well. */
	assert_msgs(2, "t.conf:1: line too long (more than 1024 characters)",
		    "t.conf: no 'coordinator' directive");
}

static void test_too_many_args(void **state)
{
	char buf[1024];
	struct coord_conf c;
	size_t n;

	(void)state;
	n = (size_t)snprintf(buf, sizeof(buf), "expect");
	for (int i = 0; i < CFG_MAX_ARGS; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " n%d", i);
	/* CFG_MAX_ARGS arguments after the name are allowed. */
	assert_int_equal(coord_parse(&c, buf), 0);
	assert_msgs(0);
	assert_int_equal(c.n_expect, CFG_MAX_ARGS);
	coord_conf_free(&c);

	snprintf(buf + n, sizeof(buf) - n, " one-more");
	assert_int_equal(coord_parse(&c, buf), -1);
	assert_msgs(1, "t.conf:1: too many arguments (more than 32)");
	assert_int_equal(c.n_expect, 0);
	coord_conf_free(&c);
}

static void test_control_chars(void **state)
{
	static const char nul_in[] = "coordinator c1\nnode a\0b\nnode n1\n";
	struct agent_conf c;

	(void)state;
	agent_bad("node a\x01"
		  "b",
		  "t.conf:2: control character 0x01 at column 7");
	agent_bad("# escape \x1b[31m in a comment",
		  "t.conf:2: control character 0x1b at column 10");
	agent_bad("node a\x7f", "t.conf:2: control character 0x7f at column 7");
	agent_bad("node a\rb", "t.conf:2: control character 0x0d at column 7");
	agent_bad("\f", "t.conf:2: control character 0x0c at column 1");
	agent_bad("node\x1f", "t.conf:2: control character 0x1f at column 5");
	/* UTF-8 in comments is text, not control characters. */
	assert_int_equal(agent_parse(&c, "coordinator c # caf\xc3\xa9\n"), 0);
	assert_msgs(0);

	agent_conf_defaults(&c);
	setup(NULL);
	assert_int_equal(agent_conf_load_buffer(&c, "t.conf", nul_in,
						sizeof(nul_in) - 1, &ctx),
			 -1);
	assert_msgs(1, "t.conf:2: NUL byte at column 7");
	assert_string_equal(c.node, "n1");
}

static void test_format_tolerance(void **state)
{
	struct agent_conf c;
	/* Tabs, CRLF, trailing blanks, comments glued to values, blank and
   * comment-only lines, no final newline. */
	const char *in = "# header\r\n"
			 "\r\n"
			 "\t \t\n"
			 "coordinator\tc1   \r\n"
			 "   # indented comment\n"
			 "node n7#comment right after\n"
			 "data_interface\te*  \t f* # two\n"
			 "max_frame 65536";

	(void)state;
	assert_int_equal(agent_parse(&c, in), 0);
	assert_msgs(0);
	assert_string_equal(c.coordinator_host, "c1");
	assert_string_equal(c.node, "n7");
	assert_int_equal(c.n_data_globs, 2);
	assert_string_equal(c.data_globs[0], "e*");
	assert_string_equal(c.data_globs[1], "f*");
	assert_int_equal(c.max_frame, 65536);

	/* Empty input is a valid (if useless) config for the parser. */
	assert_int_equal(
		cfg_parse_buffer("e.conf", "", 0, range_tab, NULL, &ctx), 0);
}

static void test_missing_file(void **state)
{
	struct agent_conf a;
	struct coord_conf c;

	(void)state;
	agent_conf_defaults(&a);
	setup(NULL);
	errno = 0;
	assert_int_equal(
		agent_conf_load(&a, "/nonexistent/ringd/agent.conf", &ctx), -1);
	assert_int_equal(errno, ENOENT);
	/* No "no 'coordinator'" noise on top of the real problem. */
	assert_msgs(1,
		    "/nonexistent/ringd/agent.conf: No such file or directory");

	coord_conf_defaults(&c);
	setup(NULL);
	errno = 0;
	assert_int_equal(coord_conf_load(&c, "/", &ctx), -1);
	assert_int_equal(errno, EISDIR);
	assert_msgs(1, "/: Is a directory");
	coord_conf_free(&c);

	/* Default reporter (log_warnx): still fails cleanly. */
	errno = 0;
	assert_int_equal(
		cfg_parse_file("/nonexistent/x", range_tab, NULL, NULL), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_default_reporter(void **state)
{
	struct agent_conf c;
	struct cfg_ctx quiet = {0};

	(void)state;
	/* ctx NULL and ctx without report both go to log_warnx. */
	agent_conf_defaults(&c);
	assert_int_equal(agent_conf_load_buffer(&c, "d.conf", "x\n", 2, NULL),
			 -1);
	assert_int_equal(agent_conf_load_buffer(&c, "d.conf", "x\n", 2, &quiet),
			 -1);
	/* The bad line and the missing coordinator: one run says both. */
	assert_int_equal(quiet.errors, 2);
	assert_int_equal(cfg_error(NULL, "standalone %d", 1), -1);
}

static void test_file_roundtrip(void **state)
{
	char path[] = "/tmp/test_cfg_XXXXXX";
	const char *text = "coordinator [fd00::5]:9000\nnode spark-2\n";
	struct agent_conf c;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	agent_conf_defaults(&c);
	setup(NULL);
	assert_int_equal(agent_conf_load(&c, path, &ctx), 0);
	assert_msgs(0);
	assert_string_equal(c.coordinator_host, "fd00::5");
	assert_int_equal(c.coordinator_port, 9000);
	assert_string_equal(c.coordinator_name, "fd00::5");
	assert_string_equal(c.node, "spark-2");
	assert_string_equal(ctx.file, path);
	unlink(path);
}

/* ---- value parsers ---- */

static void test_parse_uint(void **state)
{
	static const char *const nan[] = {"",	"abc", "-1",   "+1", " 1",
					  "1 ", "1x",  "0x10", "1e3"};
	uint64_t v = 42;

	(void)state;
	assert_int_equal(cfg_parse_uint(vctx(), "n", "0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(cfg_parse_uint(vctx(), "n", "0010", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(cfg_parse_uint(vctx(), "n", "18446744073709551615", 0,
					UINT64_MAX, &v),
			 0);
	assert_true(v == UINT64_MAX);
	assert_msgs(0);

	for (size_t i = 0; i < sizeof(nan) / sizeof(nan[0]); i++) {
		char want[128];

		v = 42;
		assert_int_equal(cfg_parse_uint(vctx(), "n", nan[i], 0, 10, &v),
				 -1);
		snprintf(want, sizeof(want),
			 "v.conf:7: 'n': '%s' is not a number", nan[i]);
		assert_msgs(1, want);
		assert_int_equal(v, 42);
	}
	assert_int_equal(cfg_parse_uint(vctx(), "n", "11", 0, 10, &v), -1);
	assert_msgs(1, "v.conf:7: 'n': 11 is out of range (0..10)");
	assert_int_equal(cfg_parse_uint(vctx(), "n", "4", 5, 10, &v), -1);
	assert_msgs(1, "v.conf:7: 'n': 4 is out of range (5..10)");
	/* Overflow is out of range, not silently wrapped. */
	assert_int_equal(cfg_parse_uint(vctx(), "n", "18446744073709551616", 0,
					UINT64_MAX, &v),
			 -1);
	assert_msgs(1, "v.conf:7: 'n': 18446744073709551616 is out of range "
		       "(0..18446744073709551615)");
	assert_int_equal(cfg_parse_uint(vctx(), "n", "99999999999999999999999x",
					0, 10, &v),
			 -1);
	assert_msgs(
		1, "v.conf:7: 'n': '99999999999999999999999x' is not a number");
	assert_int_equal(v, 42);
}

static void test_parse_duration(void **state)
{
	static const struct {
		const char *s;
		uint64_t ms;
	} ok[] = {{"250ms", 250},    {"2s", 2000},    {"5m", 300000},
		  {"1h", 3600000},   {"7", 7000},     {"0ms", 0},
		  {"00030s", 30000}, {"90m", 5400000}};
	static const char *const bad[] = {"",	  "s",	 "ms",	"5x",
					  "5S",	  "5 s", "-5s", "1.5s",
					  "5sec", "5hm", "h5"};
	uint64_t v = 1;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(cfg_parse_duration_ms(vctx(), "d", ok[i].s, 0,
						       UINT64_MAX, &v),
				 0);
		assert_int_equal(v, ok[i].ms);
		assert_msgs(0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[160];

		v = 1;
		assert_int_equal(cfg_parse_duration_ms(vctx(), "d", bad[i], 0,
						       UINT64_MAX, &v),
				 -1);
		snprintf(
			want, sizeof(want),
			"v.conf:7: 'd': '%s' is not a duration (e.g. 250ms, 2s, 5m, 1h)",
			bad[i]);
		assert_msgs(1, want);
		assert_int_equal(v, 1);
	}
	assert_int_equal(
		cfg_parse_duration_ms(vctx(), "d", "99ms", 100, 300000, &v),
		-1);
	assert_msgs(1, "v.conf:7: 'd': 99ms is out of range (100ms..5m)");
	assert_int_equal(
		cfg_parse_duration_ms(vctx(), "d", "301", 100, 300000, &v), -1);
	assert_msgs(1, "v.conf:7: 'd': 301 is out of range (100ms..5m)");
	assert_int_equal(
		cfg_parse_duration_ms(vctx(), "d", "2h", 1000, 3600000, &v),
		-1);
	assert_msgs(1, "v.conf:7: 'd': 2h is out of range (1s..1h)");
	assert_int_equal(
		cfg_parse_duration_ms(vctx(), "d", "1s", 1500, 90000, &v), -1);
	assert_msgs(1, "v.conf:7: 'd': 1s is out of range (1500ms..90s)");
	/* Multiplication overflow and digit overflow. */
	assert_int_equal(cfg_parse_duration_ms(vctx(), "d",
					       "18446744073709551615h", 0,
					       UINT64_MAX, &v),
			 -1);
	assert_msgs(1, "v.conf:7: 'd': 18446744073709551615h is out of range "
		       "(0s..18446744073709551615ms)");
	assert_int_equal(cfg_parse_duration_ms(vctx(), "d",
					       "99999999999999999999999ms", 0,
					       1000, &v),
			 -1);
	assert_msgs(
		1,
		"v.conf:7: 'd': 99999999999999999999999ms is out of range (0s..1s)");
	assert_int_equal(v, 1);
}

static void test_parse_bool(void **state)
{
	static const char *const yes[] = {"yes", "on",	"true",
					  "1",	 "YES", "True"};
	static const char *const no[] = {"no", "off", "false", "0", "Off"};
	static const char *const bad[] = {"", "maybe", "2", "y", "yes!"};
	int v;

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		v = -1;
		assert_int_equal(cfg_parse_bool(vctx(), "b", yes[i], &v), 0);
		assert_int_equal(v, 1);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		v = -1;
		assert_int_equal(cfg_parse_bool(vctx(), "b", no[i], &v), 0);
		assert_int_equal(v, 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[160];

		v = -1;
		assert_int_equal(cfg_parse_bool(vctx(), "b", bad[i], &v), -1);
		snprintf(
			want, sizeof(want),
			"v.conf:7: 'b': '%s' is not a boolean (yes/no, on/off, "
			"true/false, 1/0)",
			bad[i]);
		assert_msgs(1, want);
		assert_int_equal(v, -1);
	}
}

static void test_parse_speed(void **state)
{
	static const struct {
		const char *s;
		uint64_t mbps;
	} ok[] = {{"200G", 200000},	{"100g", 100000}, {"25000M", 25000},
		  {"10000m", 10000},	{"1M", 1},	  {"3200G", 3200000},
		  {"3200000M", 3200000}};
	static const char *const bad[] = {"",	   "G",	    "200",  "200Gb",
					  "200T",  "-1G",   "1.5G", "G200",
					  "200 G", "200GG", "200k"};
	static const char *const range[] = {"0G", "0M", "3201G", "3200001M",
					    "99999999999999999999G"};
	uint64_t v = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(cfg_parse_speed_mbps(vctx(), "s", ok[i].s, &v),
				 0);
		assert_int_equal(v, ok[i].mbps);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[160];

		v = 7;
		assert_int_equal(cfg_parse_speed_mbps(vctx(), "s", bad[i], &v),
				 -1);
		snprintf(
			want, sizeof(want),
			"v.conf:7: 's': '%s' is not a speed (e.g. 200G, 25000M)",
			bad[i]);
		assert_msgs(1, want);
		assert_int_equal(v, 7);
	}
	for (size_t i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
		char want[160];

		assert_int_equal(
			cfg_parse_speed_mbps(vctx(), "s", range[i], &v), -1);
		snprintf(want, sizeof(want),
			 "v.conf:7: 's': %s is out of range (1M..3200G)",
			 range[i]);
		assert_msgs(1, want);
		assert_int_equal(v, 7);
	}
}

static void test_parse_hostport(void **state)
{
	static const struct {
		const char *s;
		const char *host;
		uint16_t port;
	} ok[] = {
		{"coord", "coord", 7420},
		{"coord.example.net:80", "coord.example.net", 80},
		{"10.0.0.1:65535", "10.0.0.1", 65535},
		{"10.0.0.1:1", "10.0.0.1", 1},
		{"[::1]:8080", "::1", 8080},
		{"[::]", "::", 7420},
		{"fe80::1%eth0", "fe80::1%eth0", 7420},
		{"[fe80::1%eth0]:9", "fe80::1%eth0", 9},
		{"under_score", "under_score", 7420},
	};
	static const struct {
		const char *s;
		const char *msg;
	} bad[] = {
		{":80", "'h': missing host in ':80'"},
		{"", "'h': missing host in ''"},
		{"h:", "'h': invalid port in 'h:' (1..65535)"},
		{"h:0", "'h': invalid port in 'h:0' (1..65535)"},
		{"h:65536", "'h': invalid port in 'h:65536' (1..65535)"},
		{"h:8x", "'h': invalid port in 'h:8x' (1..65535)"},
		{"h:-1", "'h': invalid port in 'h:-1' (1..65535)"},
		{"h:99999999999999999999999",
		 "'h': invalid port in 'h:99999999999999999999999' (1..65535)"},
		{"[::1]:", "'h': invalid port in '[::1]:' (1..65535)"},
		{"[::1", "'h': missing ']' in '[::1'"},
		{"[::1]x", "'h': expected ':PORT' after ']' in '[::1]x'"},
		{"[::1]]:80", "'h': expected ':PORT' after ']' in '[::1]]:80'"},
		{"[abc]:80", "'h': invalid IPv6 address in '[abc]:80'"},
		{"[]:80", "'h': invalid IPv6 address in '[]:80'"},
		{"[1.2.3.4]:80", "'h': invalid IPv6 address in '[1.2.3.4]:80'"},
		{"a:b:c", "'h': invalid IPv6 address in 'a:b:c'"},
		{"h:80:90", "'h': invalid IPv6 address in 'h:80:90'"},
		{"[fe80::1%]:1", "'h': invalid IPv6 address in '[fe80::1%]:1'"},
		{"[fe80::1%a/b]:1",
		 "'h': invalid IPv6 address in '[fe80::1%a/b]:1'"},
		{"h/x:80", "'h': invalid host in 'h/x:80'"},
		{"h%x", "'h': invalid host in 'h%x'"},
		{"[::1/64]", "'h': invalid IPv6 address in '[::1/64]'"},
		{"abcdefghij:1",
		 "'h': host too long in 'abcdefghij:1' (max 7 characters)"},
		{"[1:2:3:4:5:6:7:8]:1",
		 "'h': host too long in '[1:2:3:4:5:6:7:8]:1' (max 7 characters)"},
	};
	char host[8];
	uint16_t port;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char big[64];

		port = 0;
		assert_int_equal(cfg_parse_hostport(vctx(), "h", ok[i].s, 7420,
						    big, sizeof(big), &port),
				 0);
		assert_string_equal(big, ok[i].host);
		assert_int_equal(port, ok[i].port);
		assert_msgs(0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[200];

		strcpy(host, "keep");
		port = 3;
		assert_int_equal(cfg_parse_hostport(vctx(), "h", bad[i].s, 7420,
						    host, sizeof(host), &port),
				 -1);
		snprintf(want, sizeof(want), "v.conf:7: %s", bad[i].msg);
		assert_msgs(1, want);
		assert_string_equal(host, "keep");
		assert_int_equal(port, 3);
	}
	/* Exactly hostlen - 1 characters fits. */
	assert_int_equal(cfg_parse_hostport(vctx(), "h", "abcdefg", 1, host,
					    sizeof(host), &port),
			 0);
	assert_string_equal(host, "abcdefg");
	assert_int_equal(port, 1);
}

static void test_node_names(void **state)
{
	char n63[64], n64[65];

	(void)state;
	memset(n63, 'a', 63);
	n63[63] = '\0';
	memset(n64, 'b', 64);
	n64[64] = '\0';
	assert_int_equal(cfg_valid_node_name("a"), 1);
	assert_int_equal(cfg_valid_node_name("spark-1"), 1);
	assert_int_equal(cfg_valid_node_name("n.example_1"), 1);
	assert_int_equal(cfg_valid_node_name("9"), 1);
	assert_int_equal(cfg_valid_node_name("a-"), 1);
	assert_int_equal(cfg_valid_node_name(n63), 1);
	assert_int_equal(cfg_valid_node_name(n64), 0);
	assert_int_equal(cfg_valid_node_name(""), 0);
	assert_int_equal(cfg_valid_node_name(NULL), 0);
	assert_int_equal(cfg_valid_node_name("-a"), 0);
	assert_int_equal(cfg_valid_node_name(".a"), 0);
	assert_int_equal(cfg_valid_node_name("a b"), 0);
	assert_int_equal(cfg_valid_node_name("a/b"), 0);
	assert_int_equal(cfg_valid_node_name("a:b"), 0);
	assert_int_equal(cfg_valid_node_name("caf\xc3\xa9"), 0);

	agent_bad(
		"node .hidden",
		"t.conf:2: 'node': invalid node name '.hidden' (1-63 of A-Z a-z "
		"0-9 . _ -, not starting with '-' or '.')");
}

static void test_copy_string(void **state)
{
	char dst[4] = "old";

	(void)state;
	assert_int_equal(cfg_copy_string(vctx(), "w", "abc", dst, sizeof(dst)),
			 0);
	assert_string_equal(dst, "abc");
	assert_int_equal(cfg_copy_string(vctx(), "w", "abcd", dst, sizeof(dst)),
			 -1);
	assert_msgs(1, "v.conf:7: 'w': value too long (max 3 characters)");
	assert_string_equal(dst, "abc");
}

/* ---- agent ---- */

/* What test_agent_full's configuration sets, field by field. */
static const struct want_field agent_full[] = {
	AGENT_STR(node, "spark-3"),
	AGENT_STR(coordinator_host, "10.1.2.3"),
	AGENT_NUM(coordinator_port, 7999),
	AGENT_STR(coordinator_name, "coord.example.net"),
	AGENT_STR(ca, "/etc/x/ca.pem"),
	AGENT_STR(cert, "/etc/x/a.pem"),
	AGENT_STR(key, "/etc/x/a.key"),
	AGENT_STR(mgmt_interface, "enP7s7"),
	AGENT_NUM(n_data_globs, 3),
	AGENT_STR(data_globs[0], "enp1s0f*np*"),
	AGENT_STR(data_globs[1], "enP2p1s0f*np*"),
	AGENT_STR(data_globs[2], "rdma[0-9]"),
	AGENT_NUM(n_ignore_globs, 2),
	AGENT_STR(ignore_globs[0], "docker*"),
	AGENT_STR(ignore_globs[1], "veth*"),
	AGENT_NUM(n_speeds, 2),
	AGENT_STR(speeds[0].glob, "enp1s0f0np0"),
	AGENT_NUM(speeds[0].mbps, 100000),
	AGENT_STR(speeds[1].glob, "en*np*"),
	AGENT_NUM(speeds[1].mbps, 200000),
	AGENT_STR(sysfs_root, "tests/fixtures/sys"),
	AGENT_STR(procfs_root, "/host/proc"),
	AGENT_NUM(reconnect_min_ms, 250),
	AGENT_NUM(reconnect_max_ms, 120000),
	AGENT_NUM(inventory_interval_ms, 3600000),
	AGENT_NUM(connect_timeout_ms, 100),
	AGENT_NUM(max_frame, 64 * 1024 * 1024),
};

static void test_agent_full(void **state)
{
	struct agent_conf c;
	const char *in = "# every directive\n"
			 "node spark-3\n"
			 "coordinator 10.1.2.3:7999\n"
			 "coordinator_name coord.example.net\n"
			 "ca /etc/x/ca.pem\n"
			 "cert /etc/x/a.pem\n"
			 "key /etc/x/a.key\n"
			 "mgmt_interface enP7s7\n"
			 "data_interface enp1s0f*np* enP2p1s0f*np*\n"
			 "data_interface rdma[0-9]\n"
			 "ignore_interface docker* veth*\n"
			 "nominal_speed enp1s0f0np0 100G\n"
			 "nominal_speed en*np* 200g\n"
			 "sysfs_root tests/fixtures/sys\n"
			 "procfs_root /host/proc\n"
			 "reconnect_min 250ms\n"
			 "reconnect_max 2m\n"
			 "inventory_interval 1h\n"
			 "connect_timeout 100ms\n"
			 "max_frame 67108864\n";

	(void)state;
	assert_int_equal(agent_parse(&c, in), 0);
	assert_msgs(0);
	assert_fields(&c, agent_full, N_WANT(agent_full));
	/* The last of a repeated scalar directive wins. */
	assert_int_equal(agent_parse(&c, "coordinator a\ncoordinator b:1\n"),
			 0);
	assert_string_equal(c.coordinator_host, "b");
	assert_int_equal(c.coordinator_port, 1);
}

static void test_agent_defaults(void **state)
{
	struct agent_conf c;
	char host[256];

	(void)state;
	short_hostname(host, sizeof(host));
	assert_int_equal(agent_parse(&c, "coordinator coord.lan\n"), 0);
	assert_msgs(0);
	if (cfg_valid_node_name(host))
		assert_string_equal(c.node, host);
	assert_string_equal(c.coordinator_host, "coord.lan");
	assert_int_equal(c.coordinator_port, RING_DEFAULT_PORT);
	assert_string_equal(c.coordinator_name, "coord.lan");
	assert_fields(&c, agent_shown_defaults, N_WANT(agent_shown_defaults));
	assert_string_equal(c.mgmt_interface, "");
	assert_int_equal(c.n_data_globs, 0);
	/* The built-in list of what is not a data port (issue 11). */
	assert_int_equal(c.n_ignore_globs, 22);
	assert_string_equal(c.ignore_globs[0], "docker*");
	assert_true(agent_conf_is_ignored(&c, "docker0"));
	assert_true(agent_conf_is_ignored(&c, "br-5f3e9a1c0d2e"));
	assert_false(agent_conf_is_ignored(&c, "enp1s0f0np0"));
	assert_false(agent_conf_is_data_interface(&c, "veth3f2a1b0"));
	/* A line without patterns ignores nothing. */
	assert_int_equal(agent_parse(&c, "coordinator c\nignore_interface\n"),
			 0);
	assert_int_equal(c.n_ignore_globs, 0);
	assert_true(agent_conf_is_data_interface(&c, "docker0"));
	/* A data interface named outright is never ignored; a pattern is. */
	assert_int_equal(agent_parse(&c, "coordinator c\n"
					 "data_interface docker0 veth*\n"),
			 0);
	assert_true(agent_conf_is_data_interface(&c, "docker0"));
	assert_false(agent_conf_is_data_interface(&c, "veth1"));
	assert_false(agent_conf_is_data_interface(&c, "docker1"));
	assert_int_equal(c.n_speeds, 0);
	assert_string_equal(c.sysfs_root, "");
	assert_string_equal(c.procfs_root, "");
	assert_int_equal(c.n_rdma_globs, 0);
	assert_int_equal(c.rdma_max_memory, 1ull << 30);
	assert_int_equal(c.rdma_max_total_memory, 2ull << 30);
	assert_int_equal(c.allreduce_max_memory, 1ull << 30);
	assert_true(agent_conf_is_rdma_device(&c, "mlx5_0"));
}

/* source_address: an address literal of either family, nothing else,
 * each refusal at its line naming the value. */
static void test_agent_source_address(void **state)
{
	struct agent_conf c;

	(void)state;
	assert_int_equal(agent_parse(&c, "coordinator c\n"), 0);
	assert_string_equal(c.source_address, "");
	assert_int_equal(c.source_family, 0);
	assert_int_equal(agent_parse(&c, "coordinator c\n"
					 "source_address 127.0.3.7\n"),
			 0);
	assert_msgs(0);
	assert_string_equal(c.source_address, "127.0.3.7");
	assert_int_equal(c.source_family, AF_INET);
	assert_int_equal(agent_parse(&c, "coordinator c\n"
					 "source_address fd00::5\n"),
			 0);
	assert_string_equal(c.source_address, "fd00::5");
	assert_int_equal(c.source_family, AF_INET6);
	assert_int_equal(agent_parse(&c, "coordinator c\n"
					 "source_address mgmt.lan\n"
					 "source_address 10.0.0.1:7420\n"
					 "source_address 10.0.0.256\n"
					 "source_address\n"),
			 -1);
	assert_msgs(4,
		    "t.conf:2: 'source_address': 'mgmt.lan' is not an IPv4 or "
		    "IPv6 address (give one of this host's addresses, e.g. "
		    "10.0.0.5 or fd00::5, without a port)",
		    "t.conf:3: 'source_address': '10.0.0.1:7420' is not an "
		    "IPv4 or IPv6 address (give one of this host's addresses, "
		    "e.g. 10.0.0.5 or fd00::5, without a port)",
		    "t.conf:4: 'source_address': '10.0.0.256' is not an IPv4 "
		    "or IPv6 address (give one of this host's addresses, e.g. "
		    "10.0.0.5 or fd00::5, without a port)",
		    "t.conf:5: 'source_address' takes 1 argument, got 0");
	assert_int_equal(c.source_family, 0);
}

static void test_agent_rdma(void **state)
{
	struct agent_conf c;

	(void)state;
	assert_int_equal(agent_parse(&c, "coordinator coord.lan\n"
					 "rdma_device rxe1* mlx5_[01]\n"
					 "rdma_device rxe9a\n"
					 "rdma_max_memory 256M\n"),
			 0);
	assert_msgs(0);
	assert_int_equal(c.n_rdma_globs, 3);
	assert_int_equal(c.rdma_max_memory, 256ull << 20);
	/* The shared budget follows: twice one test's. */
	assert_int_equal(c.rdma_max_total_memory, 512ull << 20);
	assert_true(agent_conf_is_rdma_device(&c, "rxe1b"));
	assert_true(agent_conf_is_rdma_device(&c, "mlx5_1"));
	assert_true(agent_conf_is_rdma_device(&c, "rxe9a"));
	assert_false(agent_conf_is_rdma_device(&c, "mlx5_2"));
	assert_false(agent_conf_is_rdma_device(&c, "rxe2a"));
	agent_bad("rdma_max_memory 512K",
		  "t.conf:2: 'rdma_max_memory': '512K' is out of range "
		  "(1MiB..64GiB)");
	agent_bad("rdma_max_memory 65G",
		  "t.conf:2: 'rdma_max_memory': '65G' is out of range "
		  "(1MiB..64GiB)");
	agent_bad(
		"rdma_max_memory lots",
		"t.conf:2: 'rdma_max_memory': 'lots' is not a size: " SIZE_FORMS);
	agent_bad("rdma_max_memory 1T",
		  "t.conf:2: 'rdma_max_memory': '1T' is out of range "
		  "(1MiB..64GiB)");
	agent_bad("rdma_device",
		  "t.conf:2: 'rdma_device' takes at least 1 argument, got 0");
	assert_int_equal(agent_parse(&c, "coordinator coord.lan\n"
					 "rdma_max_total_memory 4G\n"),
			 0);
	assert_int_equal(c.rdma_max_total_memory, 4ull << 30);
	agent_bad("rdma_max_total_memory 257G",
		  "t.conf:2: 'rdma_max_total_memory': '257G' is out of range "
		  "(1MiB..256GiB)");
	assert_int_equal(agent_parse(&c, "coordinator coord.lan\n"
					 "rdma_max_memory 256M\n"
					 "rdma_max_total_memory 128M\n"),
			 -1);
	assert_msgs(1, "t.conf: rdma_max_total_memory (128 MiB) is less than "
		       "rdma_max_memory (256 MiB): no test that one allows "
		       "could run");
	/* The all-reduce's buffer bound. */
	assert_int_equal(agent_parse(&c, "coordinator coord.lan\n"
					 "allreduce_max_memory 4G\n"),
			 0);
	assert_int_equal(c.allreduce_max_memory, 4ull << 30);
	agent_bad("allreduce_max_memory 512K",
		  "t.conf:2: 'allreduce_max_memory': '512K' is out of range "
		  "(1MiB..64GiB)");
	agent_bad(
		"allreduce_max_memory lots",
		"t.conf:2: 'allreduce_max_memory': 'lots' is not a size: " SIZE_FORMS);
}

/* ring-agent -i / -r replace the file's patterns. */
static void test_agent_flag_globs(void **state)
{
	const char *ifs[] = {"r1a", "r1b"}, *devs[] = {"rxe1*"};
	const char *longone[] = {"0123456789abcdef0123456789abcdef"};
	struct agent_conf c;

	(void)state;
	assert_int_equal(agent_parse(&c, "coordinator coord.lan\n"
					 "data_interface eth*\n"
					 "rdma_device mlx5_*\n"),
			 0);
	assert_int_equal(agent_conf_set_globs(&c, "-i", ifs, 2), 0);
	assert_int_equal(agent_conf_set_globs(&c, "-r", devs, 1), 0);
	assert_true(agent_conf_is_data_interface(&c, "r1b"));
	assert_false(agent_conf_is_data_interface(&c, "eth0"));
	assert_true(agent_conf_is_rdma_device(&c, "rxe1a"));
	assert_false(agent_conf_is_rdma_device(&c, "mlx5_0"));
	assert_int_equal(agent_conf_set_globs(&c, "-i", longone, 1), -1);
	assert_int_equal(agent_conf_set_globs(&c, "-r", devs, 33), -1);
	assert_int_equal(c.n_data_globs, 2); /* unchanged by the refusals */
}

static void test_agent_check(void **state)
{
	struct agent_conf c;

	(void)state;
	assert_int_equal(agent_parse(&c, "node n1\n"), -1);
	assert_msgs(1, "t.conf: no 'coordinator' directive");

	assert_int_equal(agent_parse(&c, "coordinator c\nreconnect_min 2m\n"
					 "reconnect_max 1m\n"),
			 -1);
	assert_msgs(1, "t.conf: reconnect_min (120000ms) is greater than "
		       "reconnect_max (60000ms)");

	/* Both at once, and equal bounds are fine. */
	assert_int_equal(agent_parse(&c, "reconnect_min 61s\n"), -1);
	assert_msgs(
		2, "t.conf: no 'coordinator' directive",
		"t.conf: reconnect_min (61000ms) is greater than reconnect_max "
		"(60000ms)");
	assert_int_equal(agent_parse(&c, "coordinator c\nreconnect_min 60s\n"),
			 0);

	/* Standalone check with no ctx. */
	agent_conf_defaults(&c);
	assert_int_equal(agent_conf_check(&c, NULL), -1);
	strcpy(c.coordinator_host, "h");
	assert_int_equal(agent_conf_check(&c, NULL), 0);
	assert_string_equal(c.coordinator_name, "h");
}

static void test_agent_value_errors(void **state)
{
	char path[AGENT_CONF_PATH_LEN + 1];
	char buf[1200];

	(void)state;
	agent_bad("coordinator :7420",
		  "t.conf:2: 'coordinator': missing host in ':7420'");
	agent_bad(
		"coordinator c:70000",
		"t.conf:2: 'coordinator': invalid port in 'c:70000' (1..65535)");
	agent_bad(
		"reconnect_min 50ms",
		"t.conf:2: 'reconnect_min': 50ms is out of range (100ms..1h)");
	agent_bad("reconnect_max 61m",
		  "t.conf:2: 'reconnect_max': 61m is out of range (100ms..1h)");
	agent_bad(
		"inventory_interval 999ms",
		"t.conf:2: 'inventory_interval': 999ms is out of range (1s..1h)");
	agent_bad(
		"connect_timeout 6m",
		"t.conf:2: 'connect_timeout': 6m is out of range (100ms..5m)");
	agent_bad("connect_timeout soon",
		  "t.conf:2: 'connect_timeout': 'soon' is "
		  "not a duration (e.g. 250ms, 2s, 5m, 1h)");
	agent_bad("max_frame 1M",
		  "t.conf:2: 'max_frame': '1M' is not a number");
	agent_bad(
		"max_frame 67108865",
		"t.conf:2: 'max_frame': 67108865 is out of range (4096..67108864)");
	agent_bad(
		"nominal_speed eth0 fast",
		"t.conf:2: 'nominal_speed': 'fast' is not a speed (e.g. 200G, 25000M)");
	agent_bad("nominal_speed eth0 0G",
		  "t.conf:2: 'nominal_speed': 0G is out of range (1M..3200G)");
	agent_bad(
		"nominal_speed eth0 4000G",
		"t.conf:2: 'nominal_speed': 4000G is out of range (1M..3200G)");
	agent_bad(
		"nominal_speed 0123456789abcdef0123456789abcdef 1G",
		"t.conf:2: 'nominal_speed': value too long (max 31 characters)");
	agent_bad("mgmt_interface a/b",
		  "t.conf:2: 'mgmt_interface': invalid interface name 'a/b'");
	agent_bad("mgmt_interface ..",
		  "t.conf:2: 'mgmt_interface': invalid interface name '..'");
	agent_bad(
		"mgmt_interface 0123456789abcdef",
		"t.conf:2: 'mgmt_interface': invalid interface name '0123456789abcdef'");
	agent_bad(
		"data_interface ok* 0123456789abcdef0123456789abcdef",
		"t.conf:2: 'data_interface': value too long (max 31 characters)");

	memset(path, 'p', AGENT_CONF_PATH_LEN);
	path[AGENT_CONF_PATH_LEN] = '\0';
	snprintf(buf, sizeof(buf), "ca /%s", path);
	agent_bad(buf, "t.conf:2: 'ca': value too long (max 511 characters)");
	snprintf(buf, sizeof(buf), "key /%s", path);
	agent_bad(buf, "t.conf:2: 'key': value too long (max 511 characters)");
}

static void test_agent_too_many_globs(void **state)
{
	char buf[2048];
	struct agent_conf c;
	size_t n = 0;

	(void)state;
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "coordinator c\n");
	for (int line = 0; line < 2; line++) {
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "ignore_interface");
		for (int i = 0; i < 17; i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
					      " i%d_%d", line, i);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\n");
	}
	assert_int_equal(agent_parse(&c, buf), -1);
	/* 34 patterns: the 33rd and 34th are refused, both reported. */
	assert_msgs(2,
		    "t.conf:3: 'ignore_interface': too many patterns (max 32)",
		    "t.conf:3: 'ignore_interface': too many patterns (max 32)");
	assert_int_equal(c.n_ignore_globs, AGENT_CONF_MAX_GLOBS);
	assert_string_equal(c.ignore_globs[31], "i1_14");

	n = (size_t)snprintf(buf, sizeof(buf), "coordinator c\n");
	for (int i = 0; i < 33; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "nominal_speed e%d 1G\n", i);
	assert_int_equal(agent_parse(&c, buf), -1);
	assert_msgs(1,
		    "t.conf:34: 'nominal_speed': too many patterns (max 32)");
	assert_int_equal(c.n_speeds, AGENT_CONF_MAX_GLOBS);
}

static void test_agent_interfaces(void **state)
{
	struct agent_conf c;

	(void)state;
	/* No globs: everything but lo and the management NIC. */
	assert_int_equal(agent_parse(&c, "coordinator c\n"), 0);
	assert_int_equal(agent_conf_is_data_interface(&c, "lo"), 0);
	assert_int_equal(agent_conf_is_data_interface(&c, "enp1s0f0np0"), 1);
	assert_int_equal(agent_conf_is_data_interface(&c, "eth0"), 1);
	assert_int_equal(agent_conf_nominal_mbps(&c, "enp1s0f0np0"), 0);

	assert_int_equal(agent_parse(&c, "coordinator c\n"
					 "mgmt_interface enP7s7\n"
					 "ignore_interface docker* veth*\n"),
			 0);
	assert_int_equal(agent_conf_is_data_interface(&c, "enP7s7"), 0);
	assert_int_equal(agent_conf_is_data_interface(&c, "docker0"), 0);
	assert_int_equal(agent_conf_is_data_interface(&c, "veth12ab"), 0);
	assert_int_equal(agent_conf_is_data_interface(&c, "enp1s0f1np1"), 1);

	assert_int_equal(
		agent_parse(&c, "coordinator c\n"
				"mgmt_interface enp1s0f0np0\n"
				"data_interface enp1s0f*np* enP2p1s0f*np* lo\n"
				"ignore_interface enP2p1s0f1np1\n"
				"nominal_speed enp1s0f1np1 100G\n"
				"nominal_speed en*np* 200G\n"),
		0);
	/* lo and the management NIC never count, even when a glob says so. */
	assert_int_equal(agent_conf_is_data_interface(&c, "lo"), 0);
	assert_int_equal(agent_conf_is_data_interface(&c, "enp1s0f0np0"), 0);
	assert_int_equal(agent_conf_is_data_interface(&c, "enp1s0f1np1"), 1);
	assert_int_equal(agent_conf_is_data_interface(&c, "enP2p1s0f0np0"), 1);
	/* Ignore beats data. */
	assert_int_equal(agent_conf_is_data_interface(&c, "enP2p1s0f1np1"), 0);
	/* Not matched by any data glob. */
	assert_int_equal(agent_conf_is_data_interface(&c, "eth0"), 0);
	assert_int_equal(agent_conf_is_data_interface(&c, "enp1s0f0"), 0);
	/* First matching speed glob wins. */
	assert_int_equal(agent_conf_nominal_mbps(&c, "enp1s0f1np1"), 100000);
	assert_int_equal(agent_conf_nominal_mbps(&c, "enP2p1s0f1np1"), 200000);
	assert_int_equal(agent_conf_nominal_mbps(&c, "eth0"), 0);
}

/* ---- coordinator ---- */

/* What test_coord_full's configuration sets, field by field. */
static const struct want_field coord_full[] = {
	COORD_STR(name, "ringmaster"),
	COORD_STR(listen_host, "fd00::1"),
	COORD_NUM(listen_port, 7500),
	COORD_STR(ca, "/c/ca.pem"),
	COORD_STR(cert, "/c/c.pem"),
	COORD_STR(key, "/c/c.key"),
	COORD_STR(control_socket, "/tmp/ring.sock"),
	COORD_STR(control_group, "wheel"),
	COORD_STR(state_dir, "/srv/ringd"),
	COORD_NUM(n_expect, 4),
	COORD_NUM(heartbeat_interval_ms, 250),
	COORD_NUM(heartbeat_misses, 100),
	COORD_NUM(handshake_timeout_ms, 300000),
	COORD_NUM(max_frame, 4096),
	COORD_NUM(max_agents, 100000),
};

/* Its expect list (behind a pointer, so not in the table), in order. */
static const char *const coord_full_expect[] = {"spark-1", "spark-2", "spark-4",
						"spark-3"};

static void test_coord_full(void **state)
{
	struct coord_conf c;
	const char *in = "name ringmaster\n"
			 "listen [fd00::1]:7500\n"
			 "ca /c/ca.pem\n"
			 "cert /c/c.pem\n"
			 "key /c/c.key\n"
			 "control_socket /tmp/ring.sock\n"
			 "control_group wheel\n"
			 "state_dir /srv/ringd\n"
			 "expect spark-1 spark-2\n"
			 "expect spark-4 spark-3   # physical order\n"
			 "heartbeat_interval 250ms\n"
			 "heartbeat_misses 100\n"
			 "handshake_timeout 5m\n"
			 "max_frame 4096\n"
			 "max_agents 100000\n";

	(void)state;
	assert_int_equal(coord_parse(&c, in), 0);
	assert_msgs(0);
	assert_fields(&c, coord_full, N_WANT(coord_full));
	for (unsigned i = 0; i < N_WANT(coord_full_expect); i++)
		assert_string_equal(c.expect[i], coord_full_expect[i]);
	coord_conf_free(&c);
	assert_null(c.expect);
	assert_int_equal(c.n_expect, 0);
	coord_conf_free(&c); /* idempotent */
}

static void test_coord_defaults(void **state)
{
	struct coord_conf c;
	char host[256];

	(void)state;
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	host[sizeof(host) - 1] = '\0';
	assert_int_equal(coord_parse(&c, "# nothing\n\n"), 0);
	assert_msgs(0);
	assert_string_equal(c.name, host);
	assert_fields(&c, coord_shown_defaults, N_WANT(coord_shown_defaults));
	assert_string_equal(c.ca, "/etc/ringd/ca.crt");
	assert_string_equal(c.key, "/etc/ringd/coordinator.key");
	assert_null(c.expect);
	assert_int_equal(c.n_expect, 0);
	assert_null(c.deny);
	assert_int_equal(c.n_deny, 0);
	assert_null(c.deny_serial);
	assert_int_equal(c.n_deny_serial, 0);
	coord_conf_free(&c);
}

static void test_coord_value_errors(void **state)
{
	char buf[200];

	(void)state;
	coord_bad("listen 0.0.0.0:0",
		  "t.conf:2: 'listen': invalid port in '0.0.0.0:0' (1..65535)");
	coord_bad("listen [::", "t.conf:2: 'listen': missing ']' in '[::'");
	coord_bad(
		"heartbeat_interval 50ms",
		"t.conf:2: 'heartbeat_interval': 50ms is out of range (100ms..10m)");
	coord_bad(
		"heartbeat_interval 11m",
		"t.conf:2: 'heartbeat_interval': 11m is out of range (100ms..10m)");
	coord_bad("heartbeat_misses 0",
		  "t.conf:2: 'heartbeat_misses': 0 is out of range (1..100)");
	coord_bad("heartbeat_misses 101",
		  "t.conf:2: 'heartbeat_misses': 101 is out of range (1..100)");
	coord_bad("heartbeat_misses three",
		  "t.conf:2: 'heartbeat_misses': 'three' is not a number");
	coord_bad(
		"handshake_timeout 301s",
		"t.conf:2: 'handshake_timeout': 301s is out of range (100ms..5m)");
	coord_bad(
		"max_frame 4095",
		"t.conf:2: 'max_frame': 4095 is out of range (4096..67108864)");
	coord_bad("max_agents 0",
		  "t.conf:2: 'max_agents': 0 is out of range (1..100000)");
	coord_bad("max_agents 100001",
		  "t.conf:2: 'max_agents': 100001 is out of range (1..100000)");
	coord_bad("max_agents -5",
		  "t.conf:2: 'max_agents': '-5' is not a number");
	coord_bad(
		"control_group "
		"0123456789012345678901234567890123456789012345678901234567890123",
		"t.conf:2: 'control_group': value too long (max 63 characters)");

	/* Unix socket paths are bounded by sun_path (108 with the NUL). */
	buf[0] = '\0';
	strcat(buf, "control_socket /");
	memset(buf + strlen(buf), 's', 107);
	buf[16 + 107] = '\0';
	coord_bad(
		buf,
		"t.conf:2: 'control_socket': value too long (max 107 characters)");

	/* A latency size twice, under either spelling, names the value. */
	coord_bad("latency_sizes 64 4096 64",
		  "t.conf:2: 'latency_sizes': size '64' given twice (64 "
		  "bytes): give each size once");
	coord_bad("latency_sizes 64 4096 4K",
		  "t.conf:2: 'latency_sizes': size '4K' given twice (4096 "
		  "bytes): give each size once");
}

static void test_coord_expect(void **state)
{
	struct coord_conf c;
	char *buf;
	size_t n = 0, cap_len = 16 * (COORD_CONF_MAX_EXPECT + 16);
	char too_many[96];

	(void)state;
	assert_int_equal(coord_parse(&c, "expect a b\n"
					 "expect c a\n"
					 "expect d d -e\n"),
			 -1);
	assert_msgs(
		3, "t.conf:2: 'expect': node 'a' listed twice",
		"t.conf:3: 'expect': node 'd' listed twice",
		"t.conf:3: 'expect': invalid node name '-e' (1-63 of A-Z a-z 0-9 "
		". _ -, not starting with '-' or '.')");
	/* The good names of a bad line are kept. */
	assert_int_equal(c.n_expect, 4);
	assert_string_equal(c.expect[2], "c");
	assert_string_equal(c.expect[3], "d");
	coord_conf_free(&c);

	/* More expected nodes than max_agents. */
	assert_int_equal(coord_parse(&c, "max_agents 2\nexpect x y z\n"), -1);
	assert_msgs(1, "t.conf: 3 expected nodes exceed max_agents 2");
	coord_conf_free(&c);

	/* Growth across many lines up to the limit, then one too many. */
	buf = malloc(cap_len);
	assert_non_null(buf);
	/* max_agents first: as many agents as the list may name. */
	n = (size_t)snprintf(buf, cap_len, "max_agents %d\n",
			     COORD_CONF_MAX_EXPECT);
	for (int i = 0; i <= COORD_CONF_MAX_EXPECT; i++)
		n += (size_t)snprintf(
			buf + n, cap_len - n, "%snode%d",
			i % 16 ? " " : (i ? "\nexpect " : "expect "), i);
	snprintf(buf + n, cap_len - n, "\n");
	assert_int_equal(coord_parse(&c, buf), -1);
	/* 16 names a line after max_agents: the one too many is on the
	 * last line. */
	snprintf(too_many, sizeof(too_many),
		 "t.conf:%d: 'expect': too many expected nodes (max %d)",
		 COORD_CONF_MAX_EXPECT / 16 + 2, COORD_CONF_MAX_EXPECT);
	assert_msgs(1, too_many);
	assert_int_equal(c.n_expect, COORD_CONF_MAX_EXPECT);
	for (unsigned i = 0; i < c.n_expect; i++) {
		char want[16];

		snprintf(want, sizeof(want), "node%u", i);
		assert_string_equal(c.expect[i], want);
	}
	coord_conf_free(&c);
	free(buf);
}

/* deny, deny_serial and admit_unexpected: parsing and their checks. */
static void test_coord_membership(void **state)
{
	struct coord_conf c;
	char *buf;
	size_t n = 0, cap_len = 64 * 1024;

	(void)state;
	assert_int_equal(
		coord_parse(&c, "expect a b\n"
				"deny x y\n"
				"deny z\n"
				"deny_serial 4A:0F:01 00ff\n"
				"deny_serial 0x12 4a0f01 123456789012345678901"
				"234567890123456789012\n"
				"deny -q x\n"),
		-1);
	assert_msgs(
		5,
		"t.conf:5: 'deny_serial': '0x12' is not a certificate serial "
		"(hex, at most 20 bytes, colons allowed)",
		"t.conf:5: 'deny_serial': serial 4a0f01 listed twice",
		"t.conf:5: 'deny_serial': '1234567890123456789012345678901234567"
		"89012' is not a certificate serial (hex, at most 20 bytes, "
		"colons allowed)",
		"t.conf:6: 'deny': invalid node name '-q' (1-63 of A-Z a-z 0-9 "
		". _ -, not starting with '-' or '.')",
		"t.conf:6: 'deny': node 'x' listed twice");
	/* The good values of a bad line are kept. */
	assert_int_equal(c.n_deny, 3);
	assert_string_equal(c.deny[2], "z");
	/* Kept as tls_peer_serial() prints, less leading zeros. */
	assert_int_equal(c.n_deny_serial, 2);
	assert_string_equal(c.deny_serial[0], "4a0f01");
	assert_string_equal(c.deny_serial[1], "ff");
	coord_conf_free(&c);
	assert_null(c.deny);
	assert_null(c.deny_serial);

	assert_int_equal(coord_parse(&c, "admit_unexpected yes\n"), 0);
	assert_int_equal(c.admit_unexpected, 1);
	coord_conf_free(&c);
	assert_int_equal(coord_parse(&c, "admit_unexpected maybe\n"), -1);
	assert_msgs(1, "t.conf:1: 'admit_unexpected': 'maybe' is not a "
		       "boolean (yes/no, on/off, true/false, 1/0)");
	coord_conf_free(&c);

	/* Expected and denied at once is a contradiction. */
	assert_int_equal(coord_parse(&c, "expect a b\ndeny b\n"), -1);
	assert_msgs(1, "t.conf: node 'b' is both expected and denied; "
		       "remove it from 'expect'");
	coord_conf_free(&c);

	/* Both lists are bounded, like expect. */
	buf = malloc(cap_len);
	assert_non_null(buf);
	for (int i = 0; i <= COORD_CONF_MAX_DENY; i++)
		n += (size_t)snprintf(buf + n, cap_len - n, "%snode%d",
				      i % 16 ? " " : (i ? "\ndeny " : "deny "),
				      i);
	snprintf(buf + n, cap_len - n, "\n");
	assert_int_equal(coord_parse(&c, buf), -1);
	assert_msgs(1, "t.conf:257: 'deny': too many denied nodes (max 4096)");
	assert_int_equal(c.n_deny, COORD_CONF_MAX_DENY);
	assert_string_equal(c.deny[4095], "node4095");
	coord_conf_free(&c);
	n = 0;
	for (int i = 0; i <= COORD_CONF_MAX_DENY; i++)
		n += (size_t)snprintf(
			buf + n, cap_len - n, "%s%x",
			i % 16 ? " " : (i ? "\ndeny_serial " : "deny_serial "),
			i + 1);
	snprintf(buf + n, cap_len - n, "\n");
	assert_int_equal(coord_parse(&c, buf), -1);
	assert_msgs(1, "t.conf:257: 'deny_serial': too many serials (max "
		       "4096)");
	assert_int_equal(c.n_deny_serial, COORD_CONF_MAX_DENY);
	assert_string_equal(c.deny_serial[4095], "1000");
	coord_conf_free(&c);
	free(buf);
}

/* Who coord_conf_admit lets in, and the reason given for the others. */
static void test_coord_admit(void **state)
{
	struct coord_conf c;
	char why[160];

	(void)state;
	/* Without expect and deny: any node of the CA, as before. */
	assert_int_equal(coord_parse(&c, "name c\n"), 0);
	assert_int_equal(
		coord_conf_admit(&c, "anyone", "4a0f", why, sizeof(why)), 0);
	assert_int_equal(coord_conf_admit(&c, "anyone", NULL, why, sizeof(why)),
			 0);
	coord_conf_free(&c);

	assert_int_equal(coord_parse(&c, "expect n1 n2\n"
					 "deny old\n"
					 "deny_serial 4A:0F:01\n"),
			 0);
	assert_int_equal(coord_conf_admit(&c, "n1", "7f00", why, sizeof(why)),
			 0);
	assert_string_equal(why, "");
	assert_int_equal(coord_conf_admit(&c, "n3", "7f00", why, sizeof(why)),
			 -1);
	assert_string_equal(why, "node 'n3' is not expected (add it to "
				 "'expect', or set 'admit_unexpected yes')");
	assert_int_equal(coord_conf_admit(&c, "old", "7f00", why, sizeof(why)),
			 -1);
	assert_string_equal(why, "node 'old' is denied (deny)");
	/* An expected node with a revoked certificate, in either
	 * spelling of its serial. */
	assert_int_equal(coord_conf_admit(&c, "n2", "4a0f01", why, sizeof(why)),
			 -1);
	assert_string_equal(
		why, "certificate serial 4a0f01 is denied (deny_serial)");
	assert_int_equal(
		coord_conf_admit(&c, "n2", "004A0F01", why, sizeof(why)), -1);
	assert_int_equal(
		coord_conf_admit(&c, "n2", "4a0f0100", why, sizeof(why)), 0);
	/* A short buffer still gets a terminated, truncated reason. */
	assert_int_equal(coord_conf_admit(&c, "n3", NULL, why, 8), -1);
	assert_string_equal(why, "node 'n");
	coord_conf_free(&c);

	/* admit_unexpected opens expect, but not deny. */
	assert_int_equal(coord_parse(&c, "expect n1\n"
					 "admit_unexpected yes\n"
					 "deny old\n"),
			 0);
	assert_int_equal(coord_conf_admit(&c, "n9", NULL, why, sizeof(why)), 0);
	assert_int_equal(coord_conf_admit(&c, "old", NULL, why, sizeof(why)),
			 -1);
	coord_conf_free(&c);
}

static void test_coord_check(void **state)
{
	struct coord_conf c;

	(void)state;
	coord_conf_defaults(&c);
	c.expect = calloc(3, sizeof(*c.expect));
	assert_non_null(c.expect);
	strcpy(c.expect[0], "a");
	strcpy(c.expect[1], "b");
	strcpy(c.expect[2], "a");
	c.n_expect = 3;
	setup(NULL);
	ctx.file = "prog";
	assert_int_equal(coord_conf_check(&c, &ctx), -1);
	assert_msgs(1, "prog: node 'a' expected twice");
	strcpy(c.expect[2], "c");
	assert_int_equal(coord_conf_check(&c, NULL), 0);
	coord_conf_free(&c);
}

/* ---- shipped examples ---- */

static void example_path(char *buf, size_t len, const char *name)
{
	const char *src = getenv("RING_SRCDIR");

	snprintf(buf, len, "%s/docs/examples/%s", src && *src ? src : ".",
		 name);
}

/* The example with every "#directive value" line switched on: shows that
 * each documented default/example actually parses. */
static char *example_uncommented(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char line[CFG_MAX_LINE + 2];
	char *out = NULL;
	size_t n = 0;
	FILE *mem;

	assert_non_null(f);
	mem = open_memstream(&out, &n);
	assert_non_null(mem);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' && line[1] >= 'a' && line[1] <= 'z')
			fputs(line + 1, mem);
		else
			fputs(line, mem);
	}
	fclose(f);
	fclose(mem);
	*len = n;
	return out;
}

static void test_examples(void **state)
{
	char path[1024];
	struct agent_conf a;
	struct coord_conf c;
	char *text;
	size_t len;

	(void)state;
	example_path(path, sizeof(path), "agent.conf");
	agent_conf_defaults(&a);
	setup(NULL);
	assert_int_equal(agent_conf_load(&a, path, &ctx), 0);
	assert_msgs(0);
	assert_string_equal(a.coordinator_host, "coordinator.example.net");
	assert_int_equal(a.coordinator_port, 7420);

	text = example_uncommented(path, &len);
	agent_conf_defaults(&a);
	setup(NULL);
	assert_int_equal(agent_conf_load_buffer(&a, path, text, len, &ctx), 0);
	assert_msgs(0);
	free(text);
	/* The shown values are the real defaults. */
	assert_string_equal(a.node, "spark-1");
	assert_string_equal(a.coordinator_name, "coordinator.example.net");
	assert_fields(&a, agent_shown_defaults, N_WANT(agent_shown_defaults));
	assert_int_equal(a.n_data_globs, 2);
	assert_int_equal(a.n_ignore_globs, 4);
	assert_int_equal(a.n_speeds, 2);
	assert_int_equal(agent_conf_nominal_mbps(&a, "enP2p1s0f1np1"), 200000);
	assert_int_equal(agent_conf_is_data_interface(&a, "enP2p1s0f1np1"), 1);

	example_path(path, sizeof(path), "coordinator.conf");
	coord_conf_defaults(&c);
	setup(NULL);
	assert_int_equal(coord_conf_load(&c, path, &ctx), 0);
	assert_msgs(0);
	coord_conf_free(&c);

	text = example_uncommented(path, &len);
	coord_conf_defaults(&c);
	setup(NULL);
	assert_int_equal(coord_conf_load_buffer(&c, path, text, len, &ctx), 0);
	assert_msgs(0);
	free(text);
	assert_fields(&c, coord_shown_defaults, N_WANT(coord_shown_defaults));
	assert_int_equal(c.n_expect, 4);
	assert_int_equal(c.n_deny, 1);
	assert_string_equal(c.deny[0], "spark-9");
	assert_int_equal(c.n_deny_serial, 1);
	assert_string_equal(c.deny_serial[0],
			    "4a1f0c9e2b7d8e6f5a4b3c2d1e0f9a8b");
	assert_int_equal(c.n_alertmanager_url, 1);
	assert_string_equal(c.alert_webhook,
			    "http://relay.example.net:9000/ringd");
	coord_conf_free(&c);
}

/* Warnings, captured apart from errors. */
static struct capture wcap;

static void capture_warning(const char *msg, void *arg)
{
	(void)arg;
	if (wcap.n < CAP_MAX)
		snprintf(wcap.msg[wcap.n], sizeof(wcap.msg[0]), "%s", msg);
	wcap.n++;
}

static void setup_warnings(void)
{
	memset(&wcap, 0, sizeof(wcap));
	ctx.report_warning = capture_warning;
}

static void test_warnings(void **state)
{
	(void)state;
	setup_warnings();
	ctx.file = "w.conf";
	ctx.line = 4;
	/* A warning fails nothing: counted apart, sent apart. */
	assert_int_equal(cfg_warning(&ctx, "odd %s", "value"), 0);
	assert_int_equal(ctx.warnings, 1);
	assert_msgs(0);
	assert_int_equal(wcap.n, 1);
	assert_string_equal(wcap.msg[0], "w.conf:4: odd value");
	ctx.line = 0;
	cfg_warning(&ctx, "about the file");
	assert_string_equal(wcap.msg[1], "w.conf: about the file");
	/* Without a warning reporter: the log, still counted. */
	ctx.report_warning = NULL;
	cfg_warning(&ctx, "to the log");
	assert_int_equal(ctx.warnings, 3);
	assert_int_equal(wcap.n, 2);
}

/* Alertmanager's API and the receiver webhook: base URLs only (the API
 * path appended), at most four, no duplicate; the receiver format refused
 * for Alertmanager's API; alert_webhook still read, with a warning that
 * names its new name. */
static void test_coord_alertmanager(void **state)
{
	struct coord_conf c;

	(void)state;
	assert_int_equal(
		coord_parse(&c, "alertmanager_url http://10.0.0.5:9093\n"
				"alertmanager_url http://[fd00::5]:9093/\n"
				"alertmanager_resend_interval 30s\n"
				"alertmanager_timeout 2s\n"
				"alert_receiver_webhook http://10.0.0.7/hook\n"
				"alert_receiver_webhook_retries 2\n"),
		0);
	assert_int_equal(c.n_alertmanager_url, 2);
	assert_string_equal(c.alertmanager_url[0], "http://10.0.0.5:9093");
	assert_string_equal(c.alertmanager_url[1], "http://[fd00::5]:9093/");
	assert_int_equal(c.alertmanager_resend_ms, 30000);
	assert_int_equal(c.alertmanager_timeout_ms, 2000);
	assert_string_equal(c.alert_webhook, "http://10.0.0.7/hook");
	assert_int_equal(c.alert_webhook_retries, 2);
	assert_int_equal(ctx.warnings, 0);
	coord_conf_free(&c);
	coord_conf_defaults(&c);
	assert_int_equal(c.n_alertmanager_url, 0);
	assert_int_equal(c.alertmanager_resend_ms, 60000);
	assert_int_equal(c.alertmanager_timeout_ms, 10000);
	coord_conf_free(&c);

	coord_bad("alertmanager_url http://10.0.0.5:9093/api/v2/alerts",
		  "t.conf:2: alertmanager_url: "
		  "'http://10.0.0.5:9093/api/v2/alerts' has a path "
		  "(/api/v2/alerts): give Alertmanager's base URL, "
		  "http://HOST:PORT (ringd appends /api/v2/alerts)");
	coord_bad("alertmanager_url https://am:9093",
		  "t.conf:2: alertmanager_url: 'https://am:9093': https is not "
		  "supported: use plain http to a receiver or a local relay");
	coord_bad("alertmanager_resend_interval 500ms",
		  "t.conf:2: 'alertmanager_resend_interval': 500ms is out of "
		  "range (1s..1h)");
	coord_bad(
		"alert_webhook http://10.0.0.5:9093/api/v2/alerts",
		"t.conf:2: alert_webhook: 'http://10.0.0.5:9093/api/v2/alerts' "
		"is Alertmanager's API, which refuses the notification JSON "
		"this sends: use 'alertmanager_url http://10.0.0.5:9093'");
	coord_bad("alert_receiver_webhook http://[fd00::5]:9093/api/v1/alerts/",
		  "t.conf:2: alert_receiver_webhook: "
		  "'http://[fd00::5]:9093/api/v1/alerts/' is Alertmanager's "
		  "API, which refuses the notification JSON this sends: use "
		  "'alertmanager_url http://[fd00::5]:9093'");
	assert_int_equal(coord_parse(&c, "name c\n"
					 "alertmanager_url http://a:1\n"
					 "alertmanager_url http://a:1\n"
					 "alertmanager_url http://b:1\n"
					 "alertmanager_url http://c:1\n"
					 "alertmanager_url http://d:1\n"
					 "alertmanager_url http://e:1\n"),
			 -1);
	assert_msgs(2, "t.conf:3: alertmanager_url: 'http://a:1' given twice",
		    "t.conf:7: alertmanager_url: more than 4; the members of "
		    "an Alertmanager cluster share what they receive, 4 of "
		    "them are enough");
	coord_conf_free(&c);

	/* The old name: read, and a warning at its line. */
	setup(NULL);
	setup_warnings();
	coord_conf_defaults(&c);
	assert_int_equal(coord_conf_load_buffer(&c, "t.conf",
						"name c\n"
						"alert_webhook http://h/x\n"
						"alert_webhook_timeout 2s\n",
						57, &ctx),
			 0);
	assert_string_equal(c.alert_webhook, "http://h/x");
	assert_int_equal(c.alert_webhook_timeout_ms, 2000);
	assert_int_equal(ctx.warnings, 2);
	assert_string_equal(wcap.msg[0],
			    "t.conf:2: alert_webhook is now called "
			    "alert_receiver_webhook (it posts the JSON that "
			    "Alertmanager sends to its receivers); to send "
			    "alerts to Alertmanager itself use "
			    "alertmanager_url");
	assert_string_equal(wcap.msg[1],
			    "t.conf:3: alert_webhook_timeout is now called "
			    "alert_receiver_webhook_timeout");
	ctx.report_warning = NULL;
	coord_conf_free(&c);
}

/* Paths the daemons open must not depend on the directory they start
 * in: each relative one is an error at its line, and the rest of the file
 * is still read. */
static void test_relative_paths(void **state)
{
	struct coord_conf c;
	struct agent_conf a;

	(void)state;
	assert_int_equal(coord_parse(&c, "name c\n"
					 "ca ca.crt\n"
					 "cert ./c.crt\n"
					 "key ../c.key\n"
					 "control_socket run/c.sock\n"
					 "state_dir var/lib/ringd\n"
					 "control_group ringctl\n"),
			 -1);
	assert_msgs(5, "t.conf:2: 'ca': 'ca.crt' is not an absolute path",
		    "t.conf:3: 'cert': './c.crt' is not an absolute path",
		    "t.conf:4: 'key': '../c.key' is not an absolute path",
		    "t.conf:5: 'control_socket': 'run/c.sock' is not an "
		    "absolute path",
		    "t.conf:6: 'state_dir': 'var/lib/ringd' is not an absolute "
		    "path");
	/* Not the default in their place, which verify would then report
	 * as missing although the file never named it. */
	assert_string_equal(c.ca, "");
	assert_string_equal(c.state_dir, "");
	assert_int_equal(c.line_ca, 2);
	assert_int_equal(c.line_control_group, 7);
	coord_conf_free(&c);

	assert_int_equal(agent_parse(&a, "coordinator c1\n"
					 "ca pki/ca.crt\n"
					 "cert n1.crt\n"
					 "key /etc/ringd/n1.key\n"
					 "sysfs_root tests/fixtures/sys\n"),
			 -1);
	assert_msgs(2, "t.conf:2: 'ca': 'pki/ca.crt' is not an absolute path",
		    "t.conf:3: 'cert': 'n1.crt' is not an absolute path");
	assert_string_equal(a.key, "/etc/ringd/n1.key");
	assert_int_equal(a.line_key, 4);
}

/* Checks across directives run after bad lines as well, so that one run
 * says everything: no fixing one mistake to be shown the next. */
static void test_one_pass(void **state)
{
	struct agent_conf a;
	struct coord_conf c;

	(void)state;
	assert_int_equal(agent_parse(&a, "coordinator c1\n"
					 "node n1\n"
					 "reconnect_min 10s\n"
					 "reconnect_max 2s\n"
					 "lldp_interval soon\n"),
			 -1);
	assert_msgs(2,
		    "t.conf:5: 'lldp_interval': 'soon' is not a duration (e.g. "
		    "250ms, 2s, 5m, 1h)",
		    "t.conf: reconnect_min (10000ms) is greater than "
		    "reconnect_max (2000ms)");

	assert_int_equal(coord_parse(&c, "name c\n"
					 "expect n1 n2\n"
					 "frobnicate\n"
					 "deny n2\n"),
			 -1);
	assert_msgs(2, "t.conf:3: unknown directive 'frobnicate'",
		    "t.conf: node 'n2' is both expected and denied; remove it "
		    "from 'expect'");
	coord_conf_free(&c);
}

/* What -n and every start find on disk, with real files from the pki
 * module: the CA, certificate and key at the lines that named them, the
 * defaults without a line; an unknown control_group is a warning. */
static void test_verify(void **state)
{
	char top[] = "/tmp/test_cfg_pki.XXXXXX", dir[64], text[1024], err[256];
	char want[3][512];
	struct coord_conf c;
	struct agent_conf a;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(dir, sizeof(dir), "%s/pki", top);
	assert_int_equal(pki_init(dir, "test CA", 10, err, sizeof(err)), 0);
	assert_int_equal(pki_issue(dir, "coordinator", PKI_ROLE_COORDINATOR, 10,
				   NULL, 0, err, sizeof(err)),
			 0);
	assert_int_equal(pki_issue(dir, "n1", PKI_ROLE_NODE, 10, NULL, 0, err,
				   sizeof(err)),
			 0);

	snprintf(text, sizeof(text),
		 "name c\nca %s/ca.crt\ncert %s/coordinator.crt\n"
		 "key %s/coordinator.key\ncontrol_group root\n",
		 dir, dir, dir);
	assert_int_equal(coord_parse(&c, text), 0);
	setup_warnings();
	ctx.file = "t.conf";
	assert_int_equal(coord_conf_verify(&c, &ctx), 0);
	assert_msgs(0);
	assert_int_equal(wcap.n, 0);
	coord_conf_free(&c);

	/* A node's certificate and key, and a group nobody has. */
	snprintf(text, sizeof(text),
		 "name c\nca %s/ca.crt\ncert %s/n1.crt\nkey %s/n1.key\n"
		 "control_group no-such-group-ringd\n",
		 dir, dir, dir);
	assert_int_equal(coord_parse(&c, text), 0);
	setup_warnings();
	ctx.file = "t.conf";
	assert_int_equal(coord_conf_verify(&c, &ctx), -1);
	assert_int_equal(errno, EINVAL);
	snprintf(want[0], sizeof(want[0]),
		 "t.conf:3: cert %s/n1.crt is not for server use (the "
		 "coordinator needs a certificate issued with --coordinator)",
		 dir);
	assert_msgs(1, want[0]);
	assert_int_equal(wcap.n, 1);
	assert_string_equal(wcap.msg[0],
			    "t.conf:5: control_group no-such-group-ringd does "
			    "not exist: the control socket will be for root "
			    "only");
	assert_int_equal(ctx.line, 0);
	coord_conf_free(&c);

	/* The agent: its own pair is fine; a missing key and the defaults
	 * (no line to name) are errors. */
	snprintf(text, sizeof(text),
		 "coordinator c1\nnode n1\nca %s/ca.crt\ncert %s/n1.crt\n"
		 "key %s/n1.key\n",
		 dir, dir, dir);
	assert_int_equal(agent_parse(&a, text), 0);
	ctx.file = "t.conf";
	assert_int_equal(agent_conf_verify(&a, &ctx), 0);
	assert_msgs(0);

	snprintf(text, sizeof(text), "coordinator c1\nnode n1\nkey %s/n2.key\n",
		 dir);
	assert_int_equal(agent_parse(&a, text), 0);
	ctx.file = "t.conf";
	assert_int_equal(agent_conf_verify(&a, &ctx), -1);
	snprintf(want[0], sizeof(want[0]),
		 "t.conf: ca /etc/ringd/ca.crt: No such file or directory");
	snprintf(
		want[1], sizeof(want[1]),
		"t.conf: cert /etc/ringd/agent.crt: No such file or directory");
	snprintf(want[2], sizeof(want[2]),
		 "t.conf:3: key %s/n2.key: No such file or directory", dir);
	testutil_rm_tree(top);
	if (access("/etc/ringd/ca.crt", F_OK) == 0 ||
	    access("/etc/ringd/agent.crt", F_OK) == 0)
		skip(); /* a host with ringd installed */
	assert_msgs(3, want[0], want[1], want[2]);
}

static void test_debug_subsystems(void **state)
{
	char bad[16], names[256];

	(void)state;
	assert_int_equal(
		cfg_debug_check(CFG_DAEMON_AGENT, "conn", bad, sizeof(bad)), 0);
	assert_int_equal(cfg_debug_check(CFG_DAEMON_AGENT, "lldp,all,tcptest",
					 bad, sizeof(bad)),
			 0);
	assert_int_equal(cfg_debug_check(CFG_DAEMON_COORDINATOR,
					 "agents,control,conn,rdmatest", bad,
					 sizeof(bad)),
			 0);
	/* Another daemon's subsystem, a typo, an empty name, a prefix. */
	assert_int_equal(cfg_debug_check(CFG_DAEMON_COORDINATOR, "conn,lldp",
					 bad, sizeof(bad)),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(bad, "lldp");
	assert_int_equal(
		cfg_debug_check(CFG_DAEMON_AGENT, "bogus", bad, sizeof(bad)),
		-1);
	assert_string_equal(bad, "bogus");
	assert_int_equal(
		cfg_debug_check(CFG_DAEMON_AGENT, "conn,", bad, sizeof(bad)),
		-1);
	assert_string_equal(bad, "");
	assert_int_equal(
		cfg_debug_check(CFG_DAEMON_AGENT, "", bad, sizeof(bad)), -1);
	assert_int_equal(
		cfg_debug_check(CFG_DAEMON_AGENT, "con", bad, sizeof(bad)), -1);
	assert_int_equal(
		cfg_debug_check(CFG_DAEMON_AGENT, "connx", bad, sizeof(bad)),
		-1);
	/* A long name is cut in the message, not overflowed. */
	assert_int_equal(cfg_debug_check(CFG_DAEMON_AGENT,
					 "abcdefghijklmnopqrstuvwxyz", bad,
					 sizeof(bad)),
			 -1);
	assert_string_equal(bad, "abcdefghijklmno");

	cfg_debug_names(CFG_DAEMON_AGENT, names, sizeof(names));
	assert_string_equal(names,
			    "agent,conn,lldp,ops,probe,rdma,tcptest,verbs,all");
	cfg_debug_names(CFG_DAEMON_COORDINATOR, names, sizeof(names));
	assert_string_equal(names,
			    "agents,alerts,conn,control,metrics,rdmatest,"
			    "store,survey,watch,all");
	/* Too small a buffer: cut, terminated. */
	cfg_debug_names(CFG_DAEMON_COORDINATOR, names, 8);
	assert_int_equal(strlen(names), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_unknown_directive, setup),
		cmocka_unit_test_setup(test_arg_counts, setup),
		cmocka_unit_test_setup(test_arg_range_and_silent_handler,
				       setup),
		cmocka_unit_test_setup(test_errors_continue, setup),
		cmocka_unit_test_setup(test_long_lines, setup),
		cmocka_unit_test_setup(test_too_many_args, setup),
		cmocka_unit_test_setup(test_control_chars, setup),
		cmocka_unit_test_setup(test_format_tolerance, setup),
		cmocka_unit_test_setup(test_missing_file, setup),
		cmocka_unit_test_setup(test_default_reporter, setup),
		cmocka_unit_test_setup(test_file_roundtrip, setup),
		cmocka_unit_test_setup(test_parse_uint, setup),
		cmocka_unit_test_setup(test_parse_duration, setup),
		cmocka_unit_test_setup(test_parse_bool, setup),
		cmocka_unit_test_setup(test_parse_speed, setup),
		cmocka_unit_test_setup(test_parse_hostport, setup),
		cmocka_unit_test_setup(test_node_names, setup),
		cmocka_unit_test_setup(test_copy_string, setup),
		cmocka_unit_test_setup(test_agent_full, setup),
		cmocka_unit_test_setup(test_agent_defaults, setup),
		cmocka_unit_test_setup(test_agent_rdma, setup),
		cmocka_unit_test_setup(test_agent_flag_globs, setup),
		cmocka_unit_test_setup(test_agent_check, setup),
		cmocka_unit_test_setup(test_agent_value_errors, setup),
		cmocka_unit_test_setup(test_agent_too_many_globs, setup),
		cmocka_unit_test_setup(test_agent_interfaces, setup),
		cmocka_unit_test_setup(test_coord_full, setup),
		cmocka_unit_test_setup(test_coord_defaults, setup),
		cmocka_unit_test_setup(test_coord_value_errors, setup),
		cmocka_unit_test_setup(test_coord_expect, setup),
		cmocka_unit_test_setup(test_coord_membership, setup),
		cmocka_unit_test_setup(test_coord_admit, setup),
		cmocka_unit_test_setup(test_coord_check, setup),
		cmocka_unit_test_setup(test_examples, setup),
		cmocka_unit_test_setup(test_warnings, setup),
		cmocka_unit_test_setup(test_relative_paths, setup),
		cmocka_unit_test_setup(test_coord_alertmanager, setup),
		cmocka_unit_test_setup(test_one_pass, setup),
		cmocka_unit_test_setup(test_verify, setup),
		cmocka_unit_test_setup(test_debug_subsystems, setup),
		cmocka_unit_test_setup(test_agent_source_address, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
