#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl/check_env.h"
#include "ringctl/ranks.h"
#include "testgb10.h"
#include "testwriter.h"

/* ringctl check nccl-env on the reference cluster: four GB10 nodes in
 * the physical order 1-2-4-3, twins on every cable (four functions per
 * node), the measured ladder 1 stream 40.0, 4 streams 102.3, 8 streams
 * 110.9 Gbps on every edge (saturates at 4: 92% of 8). */

#define NR TESTGB10_N

/* What ranks -f env prints for every node, in one file: clean. */
static const char good[] = "# from ringctl ranks -f env\n"
			   "export NCCL_SOCKET_IFNAME==enP7s7\n"
			   "NCCL_IB_HCA==rocep1s0f1:1,roceP2p1s0f1:1,"
			   "rocep1s0f0:1,roceP2p1s0f0:1\n"
			   "\n"
			   "NCCL_ALGO='Ring'\n"
			   "NCCL_MIN_NCHANNELS=\"4\"  # four\n"
			   "NCCL_MAX_NCHANNELS=4\n"
			   "NCCL_CROSS_NIC=1\n"
			   "MASTER_ADDR=192.168.1.1\n";

static const char *lint_nccl_version = "2.30.7";

static struct check_env_result *lint_raw(const char *text,
					 const struct testgb10 *tp)
{
	struct check_env_result *res = calloc(1, sizeof(*res));
	struct check_env_set set;
	char err[256] = "";

	assert_non_null(res);
	if (check_env_parse(text, strlen(text), "f.env", &set, err,
			    sizeof(err)) < 0)
		fail_msg("parse: %s", err);
	/* The NCCL the environment needs, unless a test says otherwise. */
	snprintf(res->nccl_version, sizeof(res->nccl_version), "%s",
		 lint_nccl_version);
	/* The inventories when the test made them (testgb10_inventories). */
	check_env_lint(&set, &tp->t, NULL, tp->inv[0].node ? tp->invp : NULL,
		       res);
	check_env_set_free(&set);
	return res;
}

/* What ranks -f env sets besides the variables these tests are about:
 * appended (so line numbers stay) where text does not set them. */
static const char *const routing[] = {
	"NCCL_IB_SUBNET_AWARE_ROUTING=1",
	"NCCL_IB_SUBNET_PREFIX_LEN=30",
	"NCCL_CROSS_NIC=1",
	"NCCL_NET_PLUGIN=none",
	"NCCL_NET=IB",
	"NCCL_IB_HCA==rocep1s0f1:1,roceP2p1s0f1:1,rocep1s0f0:1,"
	"roceP2p1s0f0:1",
};

/* With the channels the ladder needs on line 1 unless text sets them,
 * and the routing after it: each test looks at one rule. */
static struct check_env_result *lint(const char *text,
				     const struct testgb10 *tp)
{
	char buf[2048];
	size_t w;

	w = (size_t)snprintf(buf, sizeof(buf), "%s%s",
			     strstr(text, "NCCL_MIN_NCHANNELS")
				     ? ""
				     : "NCCL_MIN_NCHANNELS=4\n",
			     text);
	for (size_t i = 0; i < sizeof(routing) / sizeof(routing[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name),
			 "%.*s=", (int)strcspn(routing[i], "="), routing[i]);
		if (!strstr(text, name))
			w += (size_t)snprintf(buf + w, sizeof(buf) - w,
					      "\n%s\n", routing[i]);
	}
	assert_true(w < sizeof(buf));
	return lint_raw(buf, tp);
}

/* The issue about var (and node, when not NULL), or NULL. */
static const struct check_env_issue *find(const struct check_env_result *res,
					  const char *var, const char *node)
{
	for (size_t i = 0; i < res->n; i++)
		if (!strcmp(res->issues[i].variable, var) &&
		    (!node || !strcmp(res->issues[i].node, node)))
			return &res->issues[i];
	return NULL;
}

static void test_parse(void **state)
{
	struct check_env_set set;
	char err[256];
	const char *text = "  # comment\n\nexport A=1\nB='two words'\r\n"
			   "C=\"=x,y\"\nA=3\nD=\n";

	(void)state;
	assert_int_equal(check_env_parse(text, strlen(text), "f", &set, err,
					 sizeof(err)),
			 0);
	assert_int_equal(set.n, 4);
	assert_string_equal(check_env_get(&set, "A"), "3");
	assert_string_equal(check_env_get(&set, "B"), "two words");
	assert_string_equal(check_env_get(&set, "C"), "=x,y");
	assert_string_equal(check_env_get(&set, "D"), "");
	assert_null(check_env_get(&set, "E"));
	assert_int_equal(set.v[0].line, 6); /* the last assignment's line */
	assert_int_equal(set.v[0].prev_line, 3);
	assert_int_equal(set.v[1].prev_line, 0);
	check_env_set_free(&set);
}

static void expect_error(const char *text, size_t len, const char *msg)
{
	struct check_env_set set;
	char err[256] = "";

	assert_int_equal(
		check_env_parse(text, len, "x.env", &set, err, sizeof(err)),
		-1);
	assert_null(set.v);
	if (!strstr(err, msg))
		fail_msg("error '%s' lacks '%s'", err, msg);
}

static void test_parse_errors(void **state)
{
	char *big, *many;
	size_t n;

	(void)state;
	expect_error("A=1\nnot an assignment\n", 20, "x.env:2: not a VAR");
	expect_error("A=1\n\n=1\n", 7, "x.env:3:");
	expect_error("1A=1\n", 5, "x.env:1:");
	expect_error("A='open\n", 8, "x.env:1: unterminated quote");
	expect_error("A=two words\n", 12, "x.env:1: a blank");
	expect_error("A='x' y\n", 8, "x.env:1: text after");
	expect_error("A=$HOME\n", 8, "x.env:1: quotes, $");
	expect_error("A=\"a\tb\"\n", 8, "x.env:1: a control");
	expect_error("A=1\0\n", 5, "NUL");
	/* The bounds: one byte over 1 MiB, one line over 4096. */
	big = malloc(CHECK_ENV_MAX_BYTES + 1);
	assert_non_null(big);
	memset(big, '#', CHECK_ENV_MAX_BYTES + 1);
	expect_error(big, CHECK_ENV_MAX_BYTES + 1, "more than 1048576 bytes");
	free(big);
	n = 2 * (CHECK_ENV_MAX_LINES + 1);
	many = malloc(n);
	assert_non_null(many);
	for (size_t i = 0; i < n; i += 2) {
		many[i] = '#';
		many[i + 1] = '\n';
	}
	expect_error(many, n, "more than 4096 lines");
	/* 4096 lines are fine. */
	{
		struct check_env_set set;
		char err[64];

		assert_int_equal(check_env_parse(many, n - 2, "x", &set, err,
						 sizeof(err)),
				 0);
		check_env_set_free(&set);
	}
	free(many);
}

/* Random input from a fixed seed (ASan watches): lines of pieces the
 * parser cares about, and stray bytes. Every input either parses, with
 * every value free of control bytes, or is refused with "x:LINE: why",
 * never a crash. */
static void test_parse_random(void **state)
{
	static const char *const pieces[] = {
		"NCCL_A",  "B1",   "=",	   "x,y",    "'",   "\"", " ",
		"\t",	   "#",	   "$",	   "`",	     "^=",  ":1", "\r",
		"export ", "\x01", "\x7f", "=\"q\"", "='s'"};
	const size_t np = sizeof(pieces) / sizeof(pieces[0]);
	unsigned seed = 12345, parsed = 0, kept = 0;
	char buf[512], err[256];

	(void)state;
	for (int iter = 0; iter < 20000; iter++) {
		struct check_env_set set;
		size_t len = 0;
		unsigned lines;

		seed = seed * 1103515245u + 12345u;
		lines = 1 + (seed >> 16) % 6;
		for (unsigned l = 0; l < lines; l++) {
			unsigned n;

			seed = seed * 1103515245u + 12345u;
			n = (seed >> 16) % 6;
			for (unsigned k = 0; k < n; k++) {
				const char *pc;

				seed = seed * 1103515245u + 12345u;
				/* Mostly NAME=value shaped. */
				pc = k == 0 && (seed >> 20) % 2 ? "NCCL_A"
				     : k == 1 && (seed >> 21) % 2
					     ? "="
					     : pieces[(seed >> 16) % np];
				if (len + strlen(pc) + 2 >= sizeof(buf))
					break;
				memcpy(buf + len, pc, strlen(pc));
				len += strlen(pc);
			}
			buf[len++] = '\n';
		}
		err[0] = '\0';
		if (check_env_parse(buf, len, "x", &set, err, sizeof(err)) <
		    0) {
			assert_true(!strncmp(err, "x:", 2));
			continue;
		}
		for (size_t i = 0; i < set.n; i++) {
			assert_true(set.v[i].name[0] != '\0');
			for (const char *p = set.v[i].value; *p; p++)
				assert_true((unsigned char)*p >= 0x20 &&
					    (unsigned char)*p != 0x7f);
		}
		parsed++;
		kept += set.n;
		check_env_set_free(&set);
	}
	/* Both paths taken often: the inputs are not all refused. */
	print_message("random inputs: %u of 20000 parsed, %u assignments\n",
		      parsed, kept);
	assert_true(parsed > 1000 && kept > 300);
}

static void test_environ(void **state)
{
	char *envp[] = {"PATH=/bin", "NCCL_ALGO=Tree", "NCCL_X=", "NCCLX=1",
			NULL};
	struct check_env_set set;

	(void)state;
	assert_int_equal(check_env_from_environ(envp, &set), 0);
	assert_int_equal(set.n, 2);
	assert_string_equal(check_env_get(&set, "NCCL_ALGO"), "Tree");
	assert_string_equal(check_env_get(&set, "NCCL_X"), "");
	assert_int_equal(set.v[0].line, 0);
	check_env_set_free(&set);
}

static void test_good(void **state)
{
	struct testgb10 tp;
	struct check_env_result *res;

	(void)state;
	testgb10_init(&tp);
	res = lint(good, &tp);
	if (res->n)
		fail_msg("unexpected: %s %s", res->issues[0].variable,
			 res->issues[0].why);
	assert_int_equal(res->counted, 0);
	/* The ladder saturates at 4 (102.3 / 110.9 = 92%). */
	assert_int_equal(res->sat.streams, 4);
	assert_int_equal(res->sat.top, 8);
	assert_int_equal(res->sat.edges, 4);
	assert_true(res->sat.pct_of_top > 92.0 && res->sat.pct_of_top < 92.5);
	assert_string_equal(res->sat.ladder, "1,4,8");
	assert_int_equal(res->sat.measured_ms, 1796000000003ULL);
	free(res);
}

static void test_names(void **state)
{
	struct testgb10 tp;
	struct check_env_result *res;
	const struct check_env_issue *is;

	(void)state;
	testgb10_init(&tp);
	assert_true(check_env_known("NCCL_IB_GID_INDEX"));
	assert_true(check_env_known("NCCL_IB_SUBNET_AWARE_ROUTING"));
	assert_false(check_env_known("NCCL_SWITCHLESS_RING_ONLY"));
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_SWITCHLESS_RING_ONLY=1\nNCCL_FOO=2\nFOO=3\n",
		   &tp);
	is = find(res, "NCCL_SWITCHLESS_RING_ONLY", NULL);
	assert_non_null(is);
	assert_string_equal(is->level, "warning");
	assert_int_equal(is->line, 4);
	assert_string_equal(is->value, "1");
	assert_non_null(strstr(is->why, "not an upstream NCCL variable"));
	assert_non_null(strstr(is->why, "ring neighbours"));
	is = find(res, "NCCL_FOO", NULL);
	assert_non_null(is);
	assert_non_null(strstr(is->why, "a patched build's?"));
	assert_null(find(res, "FOO", NULL));
	assert_int_equal(res->counted, 2);
	assert_int_equal(res->problems, 0);
	free(res);
}

static void test_algo(void **state)
{
	static const char *const bad[] = {"Tree",
					  "ring,tree",
					  "CollNet",
					  "NVLS",
					  "^tree",
					  "",
					  "allreduce:tree;allgather:ring"};
	static const char *const ok[] = {"Ring", "ring",
					 "allreduce:ring;allgather:Ring"};
	struct testgb10 tp;
	char text[128];

	(void)state;
	testgb10_init(&tp);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct check_env_result *res;
		const struct check_env_issue *is;

		snprintf(text, sizeof(text),
			 "NCCL_ALGO=\"%s\"\nNCCL_SOCKET_IFNAME==enP7s7\n",
			 bad[i]);
		res = lint(text, &tp);
		is = find(res, "NCCL_ALGO", NULL);
		if (!is)
			fail_msg("NCCL_ALGO=%s passed", bad[i]);
		assert_string_equal(is->level, "problem");
		assert_string_equal(is->fix, "NCCL_ALGO=Ring");
		assert_non_null(strstr(is->why, "no data-plane path"));
		free(res);
	}
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct check_env_result *res;

		snprintf(text, sizeof(text),
			 "NCCL_ALGO=%s\nNCCL_SOCKET_IFNAME==enP7s7\n", ok[i]);
		res = lint(text, &tp);
		if (res->n)
			fail_msg("NCCL_ALGO=%s: %s", ok[i], res->issues[0].why);
		free(res);
	}
	/* Unset on a 4-ring: NCCL may pick Tree. */
	{
		struct check_env_result *res =
			lint("NCCL_SOCKET_IFNAME==enP7s7\n", &tp);
		const struct check_env_issue *is = find(res, "NCCL_ALGO", NULL);

		assert_non_null(is);
		assert_non_null(strstr(is->why, "unset"));
		free(res);
	}
	/* Set twice: the later value is judged, and a note says so. */
	{
		struct check_env_result *res =
			lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
			     "NCCL_ALGO=Tree\n",
			     &tp);
		const struct check_env_issue *is = find(res, "NCCL_ALGO", NULL);

		assert_int_equal(res->n, 2);
		assert_int_equal(res->counted, 1);
		char why[sizeof(is->why)];

		assert_non_null(is);
		assert_string_equal(is->level, "note");
		/* A copy: gcc -O2 cannot size a found entry (stringop-overread). */
		memcpy(why, is->why, sizeof(why));
		assert_non_null(strstr(why, "set again after line 2"));
		assert_int_equal(is->line, 4);
		assert_string_equal(res->issues[1].level, "problem");
		free(res);
	}
	/* A line: ranks -f env sets no algorithm; nothing to say. */
	tp.t.kind = "line";
	{
		struct check_env_result *res = lint(
			"NCCL_ALGO=Tree\nNCCL_SOCKET_IFNAME==enP7s7\n", &tp);

		assert_null(find(res, "NCCL_ALGO", NULL));
		free(res);
	}
}

static void test_channels(void **state)
{
	struct testgb10 tp;
	struct check_env_result *res;
	const struct check_env_issue *is;

	(void)state;
	testgb10_init(&tp);
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_MIN_NCHANNELS=2\nNCCL_MAX_NCHANNELS=1\n",
		   &tp);
	is = find(res, "NCCL_MIN_NCHANNELS", NULL);
	assert_non_null(is);
	assert_non_null(strstr(is->why, "fewer than the 4 streams"));
	assert_non_null(strstr(is->why, "92%"));
	assert_string_equal(is->fix,
			    "NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4");
	assert_non_null(find(res, "NCCL_MAX_NCHANNELS", NULL));
	/* 2 > 1: min above max, besides both being short. */
	assert_int_equal(res->counted, 3);
	free(res);

	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_MIN_NCHANNELS=four\n",
		   &tp);
	is = find(res, "NCCL_MIN_NCHANNELS", NULL);
	assert_non_null(is);
	assert_non_null(strstr(is->why, "not a channel count"));
	free(res);

	/* Unset: a warning, the count NCCL may undercut. */
	res = lint_raw("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n", &tp);
	is = find(res, "NCCL_MIN_NCHANNELS", NULL);
	assert_non_null(is);
	assert_string_equal(is->level, "warning");
	free(res);

	/* A ladder that saturates at once (90% at 1 stream): 1 channel is
	 * enough, nothing to say. */
	tp.gbps[0] = 100.0;
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_MIN_NCHANNELS=1\n",
		   &tp);
	assert_int_equal(res->sat.streams, 1);
	assert_int_equal(res->counted, 0);
	free(res);

	/* 86% at 1 stream: the findings see no saturation problem (under
	 * 80% only), so neither does the check. */
	tp.gbps[0] = 95.0;
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_MIN_NCHANNELS=1\n",
		   &tp);
	assert_int_equal(res->sat.streams, 1);
	assert_int_equal(res->counted, 0);
	free(res);

	/* No step reaches 90%: the top count. */
	tp.gbps[0] = 40.0;
	tp.gbps[1] = 80.0;
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_MIN_NCHANNELS=4\nNCCL_MAX_NCHANNELS=4\n",
		   &tp);
	assert_int_equal(res->sat.streams, 8);
	assert_non_null(find(res, "NCCL_MIN_NCHANNELS", NULL));
	free(res);
}

static void test_socket(void **state)
{
	struct testgb10 tp;
	struct check_env_result *res;
	const struct check_env_issue *is;
	Ring__StatusReply st = RING__STATUS_REPLY__INIT;
	Ring__NodeStatus ns = RING__NODE_STATUS__INIT, *nsp = &ns;
	char *unaddr[] = {"enP2p1s0f0np0"};
	struct check_env_set set;
	char err[128];
	const char *text = "NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME=enP\n"
			   "NCCL_MIN_NCHANNELS=4\n"
			   "NCCL_IB_SUBNET_AWARE_ROUTING=1\n"
			   "NCCL_IB_SUBNET_PREFIX_LEN=30\nNCCL_CROSS_NIC=1\n"
			   "NCCL_NET_PLUGIN=none\nNCCL_NET=IB\n"
			   "NCCL_IB_HCA==rocep1s0f1:1,roceP2p1s0f1:1,"
			   "rocep1s0f0:1,roceP2p1s0f0:1\n";

	(void)state;
	testgb10_init(&tp);
	/* A data port by name. */
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME=enp1s0f1np1\n", &tp);
	is = find(res, "NCCL_SOCKET_IFNAME", "n2");
	assert_non_null(is);
	assert_non_null(strstr(is->why, "management interface enP7s7"));
	/* Every node: no management interface, and its data port. */
	assert_int_equal(res->counted, 8);
	is = &res->issues[1];
	assert_non_null(strstr(is->why, "data port enp1s0f1np1"));
	assert_string_equal(is->fix, "NCCL_SOCKET_IFNAME==enP7s7");
	free(res);

	/* An interface no node has. */
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==eth0\n", &tp);
	assert_int_equal(res->counted, 4);
	free(res);

	/* A prefix that takes the management interface and, from status,
	 * an unaddressed data port. */
	ns.node = "n3";
	ns.unaddressed_up = unaddr;
	ns.n_unaddressed_up = 1;
	st.nodes = &nsp;
	st.n_nodes = 1;
	res = calloc(1, sizeof(*res));
	assert_non_null(res);
	assert_int_equal(check_env_parse(text, strlen(text), "f", &set, err,
					 sizeof(err)),
			 0);
	snprintf(res->nccl_version, sizeof(res->nccl_version), "2.30.7");
	check_env_lint(&set, &tp.t, &st, NULL, res);
	check_env_set_free(&set);
	is = find(res, "NCCL_SOCKET_IFNAME", "n3");
	assert_non_null(is);
	assert_non_null(strstr(is->why, "enP2p1s0f0np0 (carrier"));
	assert_int_equal(res->counted, 1);
	free(res);

	/* Exclusions: "^=enp1s0f0np0" leaves the other data port in. */
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME=^=enp1s0f0np0\n", &tp);
	is = find(res, "NCCL_SOCKET_IFNAME", "n1");
	assert_non_null(is);
	assert_non_null(strstr(is->why, "data port enp1s0f1np1"));
	assert_int_equal(res->counted, 4);
	free(res);
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME=^enp\n", &tp);
	assert_int_equal(res->counted, 0);
	free(res);

	/* Unset: NCCL may take a data port. */
	res = lint("NCCL_ALGO=Ring\n", &tp);
	is = find(res, "NCCL_SOCKET_IFNAME", NULL);
	assert_non_null(is);
	assert_non_null(strstr(is->why, "unset"));
	free(res);
}

static void test_hca(void **state)
{
	struct testgb10 tp;
	struct check_env_result *res;
	const struct check_env_issue *is;

	(void)state;
	testgb10_init(&tp);
	/* One function per neighbour: the twins are left out. */
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_IB_HCA==rocep1s0f1:1,rocep1s0f0:1\n",
		   &tp);
	assert_int_equal(res->counted, 8);
	is = find(res, "NCCL_IB_HCA", "n4");
	assert_non_null(is);
	assert_non_null(strstr(is->why, "n4's function roceP2p1s0f1:1"));
	assert_non_null(strstr(is->why, "reaches n3 or n2"));
	assert_string_equal(is->fix, "NCCL_IB_HCA==rocep1s0f1:1,roceP2p1s0f1:1,"
				     "rocep1s0f0:1,roceP2p1s0f0:1");
	free(res);

	/* The wrong port. */
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_IB_HCA=rocep1s0f1:2,roceP\n",
		   &tp);
	is = find(res, "NCCL_IB_HCA", "n1");
	assert_non_null(is);
	assert_non_null(strstr(is->why, "rocep1s0f1:1, through which it "
					"reaches n2:"));
	assert_int_equal(res->counted, 8); /* rocep1s0f0 and s0f1, each */
	free(res);

	/* Prefixes that take all, and an exclusion that spares them. */
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_IB_HCA=roce\n",
		   &tp);
	assert_int_equal(res->counted, 0);
	free(res);
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_IB_HCA=^mlx5\n",
		   &tp);
	assert_int_equal(res->counted, 0);
	free(res);
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_IB_HCA=^=roceP2p1s0f0\n",
		   &tp);
	assert_int_equal(res->counted, 4);
	free(res);
}

static void test_gid(void **state)
{
	struct testgb10 tp;
	struct check_env_result *res;
	const struct check_env_issue *is;

	(void)state;
	testgb10_init(&tp);
	tp.r[2].gid_index = 1;
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_IB_GID_INDEX=3\n",
		   &tp);
	assert_int_equal(res->counted, 1);
	is = find(res, "NCCL_IB_GID_INDEX", "n4");
	assert_non_null(is);
	assert_non_null(strstr(is->why, "GID index 1"));
	assert_non_null(strstr(is->why, "RoCE v2 IPv4"));
	assert_string_equal(is->fix, "NCCL_IB_GID_INDEX=1");
	free(res);

	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_IB_GID_INDEX=x\n",
		   &tp);
	assert_non_null(find(res, "NCCL_IB_GID_INDEX", NULL));
	free(res);

	/* Nothing measured: a note, not a problem. */
	for (int i = 0; i < NR; i++)
		tp.r[i].gid_index = -1;
	res = lint("NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_IB_GID_INDEX=3\n",
		   &tp);
	assert_int_equal(res->counted, 0);
	/* ... and the note that ranks -f env leaves it to NCCL. */
	assert_int_equal(res->n, 2);
	assert_string_equal(res->issues[0].level, "note");
	assert_string_equal(res->issues[1].level, "note");
	free(res);
}

/* Against the nodes' GID tables (inventories): the wrong index names
 * node, functions, what stands there, and the index that is right. */
static void test_gid_table(void **state)
{
	static const char env[] = "NCCL_ALGO=Ring\nNCCL_SOCKET_IFNAME==enP7s7\n"
				  "NCCL_IB_GID_INDEX=%s\n%s";
	struct testgb10 tp;
	struct check_env_result *res;
	const struct check_env_issue *is;
	char text[512];

	(void)state;
	testgb10_init(&tp);
	testgb10_inventories(&tp);
	/* The right one: clean; the survey agrees. */
	snprintf(text, sizeof(text), env, "3", "");
	res = lint(text, &tp);
	assert_int_equal(res->counted, 0);
	/* Only the note: ranks -f env leaves the index to NCCL. */
	assert_int_equal(res->n, 1);
	assert_non_null(strstr(res->issues[0].why, "leaves it to NCCL"));
	free(res);

	/* Index 1: RoCE v2, but the link-local IPv6 GID, on every node and
	 * every function; index 3 is right. */
	snprintf(text, sizeof(text), env, "1", "");
	res = lint(text, &tp);
	assert_int_equal(res->counted, NR);
	assert_int_equal(res->problems, NR);
	is = find(res, "NCCL_IB_GID_INDEX", "n4");
	assert_non_null(is);
	assert_string_equal(
		is->why,
		"index 1 is not the RoCE v2 IPv4 GID on n4's rocep1s0f1:1 "
		"(RoCE v2 fe80::3:1, not IPv4-mapped), roceP2p1s0f1:1 (RoCE "
		"v2 fe80::3:2, not IPv4-mapped), rocep1s0f0:1 (RoCE v2 "
		"fe80::3:3, not IPv4-mapped), roceP2p1s0f0:1 (RoCE v2 "
		"fe80::3:4, not IPv4-mapped); index 3 is, on every function "
		"NCCL uses there (inventory)");
	assert_string_equal(is->fix, "NCCL_IB_GID_INDEX=3");
	free(res);

	/* Index 2: the IPv4 address, but RoCE v1. */
	snprintf(text, sizeof(text), env, "2", "");
	res = lint(text, &tp);
	assert_int_equal(res->problems, NR);
	is = find(res, "NCCL_IB_GID_INDEX", "n1");
	assert_non_null(strstr(is->why, "rocep1s0f1:1 (RoCE v1 "
					"::ffff:10.89.1.1)"));
	free(res);

	/* Index 7: nothing there. */
	snprintf(text, sizeof(text), env, "7", "");
	res = lint(text, &tp);
	is = find(res, "NCCL_IB_GID_INDEX", "n2");
	assert_non_null(strstr(is->why, "rocep1s0f0:1 (no GID there)"));
	assert_string_equal(is->fix, "NCCL_IB_GID_INDEX=3");
	free(res);

	/* The table decides, not the survey: the survey's index was 1 on n3
	 * (its tests ran elsewhere), the table says 3 is right there. */
	tp.r[3].gid_index = 1;
	snprintf(text, sizeof(text), env, "3", "");
	res = lint(text, &tp);
	assert_int_equal(res->counted, 0);
	assert_int_equal(res->n, 2);
	assert_string_equal(res->issues[1].level, "note");
	assert_string_equal(res->issues[1].node, "n3");
	assert_non_null(strstr(res->issues[1].why, "survey's RDMA tests used "
						   "index 1"));
	free(res);
	tp.r[3].gid_index = 3;

	/* n4's twin roceP2p1s0f0 has its IPv4 GIDs at 4 and 5 (another
	 * address order): no one index fits n4, each function's named. */
	tp.gid[2][3][2].gid = "fe80::9";
	tp.gid[2][3][3].gid = "fe80::9";
	tp.gid[2][3][4] = tp.gid[2][0][2];
	tp.gid[2][3][4].index = 4;
	tp.gid[2][3][5] = tp.gid[2][0][3];
	tp.gid[2][3][5].index = 5;
	tp.gidp[2][3][4] = &tp.gid[2][3][4];
	tp.gidp[2][3][5] = &tp.gid[2][3][5];
	tp.port[2][3].n_gids = 6;
	res = lint(text, &tp);
	assert_int_equal(res->problems, 1);
	is = find(res, "NCCL_IB_GID_INDEX", "n4");
	assert_non_null(is);
	assert_non_null(strstr(is->why, "n4's roceP2p1s0f0:1 (RoCE v2 "
					"fe80::9, not IPv4-mapped); no one "
					"index is"));
	assert_non_null(strstr(is->why, "(rocep1s0f1:1 3, roceP2p1s0f1:1 3, "
					"rocep1s0f0:1 3, roceP2p1s0f0:1 5)"));
	free(res);
	/* ... unless NCCL_IB_HCA leaves that function out: then 3 fits the
	 * functions NCCL uses (the HCA rule flags the twin left out). */
	snprintf(text, sizeof(text), env, "3",
		 "NCCL_IB_HCA==rocep1s0f1:1,roceP2p1s0f1:1,rocep1s0f0:1\n");
	res = lint(text, &tp);
	for (size_t i = 0; i < res->n; i++)
		if (!strcmp(res->issues[i].variable, "NCCL_IB_GID_INDEX"))
			assert_string_equal(res->issues[i].level, "note");
	assert_non_null(find(res, "NCCL_IB_HCA", "n4"));
	free(res);

	/* n1 never reported an inventory: its check falls back to the
	 * survey's index; a function missing from n2's inventory is said. */
	testgb10_inventories(&tp);
	tp.invp[0] = NULL;
	tp.r[0].gid_index = 1;
	tp.inv[1].n_rdma_devices = 3;
	snprintf(text, sizeof(text), env, "3", "");
	res = lint(text, &tp);
	assert_int_equal(res->problems, 1);
	is = find(res, "NCCL_IB_GID_INDEX", "n1");
	assert_non_null(strstr(is->why, "survey's RDMA tests used"));
	is = find(res, "NCCL_IB_GID_INDEX", "n2");
	assert_string_equal(is->level, "note");
	assert_non_null(strstr(is->why, "roceP2p1s0f0:1 not in its "
					"inventory"));
	free(res);
}

/* What ranks -f env prints for every node, as one file, with extra
 * inserted after the line that starts with `after` (NULL: nothing). */
static char *printed_env(const struct testgb10 *tp, const char *after,
			 const char *extra)
{
	struct testwriter t;
	char *out, *res, *at;
	size_t n;

	assert_int_equal(ranks_text(testwriter_stream(&t), &tp->t, "env"), 0);
	out = testwriter_close(&t);
	if (!after)
		return out;
	at = strstr(out, after);
	assert_non_null(at);
	at = strchr(at, '\n') + 1;
	n = strlen(out) + strlen(extra) + 1;
	res = malloc(n);
	assert_non_null(res);
	snprintf(res, n, "%.*s%s%s", (int)(at - out), out, extra, at);
	free(out);
	return res;
}

/* The first counted finding (problem or warning) about var and node. */
static const struct check_env_issue *
find_counted(const struct check_env_result *res, const char *var,
	     const char *node)
{
	for (size_t i = 0; i < res->n; i++)
		if (!strcmp(res->issues[i].variable, var) &&
		    !strcmp(res->issues[i].node, node) &&
		    strcmp(res->issues[i].level, "note"))
			return &res->issues[i];
	return NULL;
}

/* How many counted findings (problems and warnings) about var. */
static size_t counted_about(const struct check_env_result *res, const char *var)
{
	size_t n = 0;

	for (size_t i = 0; i < res->n; i++)
		n += !strcmp(res->issues[i].variable, var) &&
		     strcmp(res->issues[i].level, "note");
	return n;
}

/* ranks -f env's own output, every node's block: clean. Each block is
 * that node's environment: a line added to n1's block is judged for n1
 * and for nobody else, and a later block cannot override it. */
static void test_blocks(void **state)
{
	struct testgb10 tp;
	struct check_env_result *res;
	const struct check_env_issue *is;
	char *text;

	(void)state;
	testgb10_init(&tp);
	text = printed_env(&tp, NULL, NULL);
	res = lint_raw(text, &tp);
	for (size_t i = 0; i < res->n; i++)
		if (strcmp(res->issues[i].level, "note"))
			fail_msg("unexpected: %s %s %s", res->issues[i].node,
				 res->issues[i].variable, res->issues[i].why);
	assert_int_equal(res->counted, 0);
	free(res);
	free(text);

	/* NCCL_ALGO=Tree in n1's block: the later blocks' Ring is theirs. */
	text = printed_env(&tp, "NCCL_MAX_NCHANNELS=4", "NCCL_ALGO=Tree\n");
	res = lint_raw(text, &tp);
	is = find_counted(res, "NCCL_ALGO", "n1");
	assert_non_null(is);
	assert_string_equal(is->level, "problem");
	assert_string_equal(is->value, "Tree");
	assert_int_equal(is->line, 35); /* after n1's block's last line */
	assert_int_equal(counted_about(res, "NCCL_ALGO"), 1);
	assert_int_equal(res->problems, 1);
	free(res);
	free(text);

	/* docs/NCCL.md's example: Tree and a patched build's switch. */
	text = printed_env(&tp, "NCCL_MAX_NCHANNELS=4",
			   "NCCL_ALGO=Tree\nNCCL_SWITCHLESS_RING_ONLY=1\n");
	res = lint_raw(text, &tp);
	assert_non_null(find(res, "NCCL_ALGO", "n1"));
	assert_non_null(find(res, "NCCL_SWITCHLESS_RING_ONLY", NULL));
	assert_int_equal(res->problems, 1);
	assert_int_equal(res->counted, 2);
	free(res);
	free(text);

	/* A block printed for another rank order: said, with the rank. */
	text = printed_env(&tp, NULL, NULL);
	{
		char *p = strstr(text, "# n2 (rank 1)");

		assert_non_null(p);
		p[11] = '3';
	}
	res = lint_raw(text, &tp);
	is = find(res, "# n2 (rank 3)", "n2");
	assert_non_null(is);
	assert_string_equal(is->level, "problem");
	assert_non_null(strstr(is->why, "n2 is rank 1 now, not 3"));
	free(res);
	free(text);
}

/* The environments that would hang on this ring are never ok. */
static void test_hanging(void **state)
{
	static const char *const drop[] = {"NCCL_IB_SUBNET_AWARE_ROUTING=1\n",
					   "NCCL_NET_FORCE_MERGE="};
	struct testgb10 tp;
	struct check_env_result *res;
	const struct check_env_issue *is;
	char *text, *p;
	char *groups[4][1] = {{"roceP2p1s0f1,rocep1s0f0"},
			      {"roceP2p1s0f1,rocep1s0f0"},
			      {"roceP2p1s0f1,rocep1s0f0"},
			      {"roceP2p1s0f1,rocep1s0f0"}};

	(void)state;
	testgb10_init(&tp);
	/* Without subnet-aware routing: every node, a problem. */
	text = printed_env(&tp, NULL, NULL);
	while ((p = strstr(text, drop[0])))
		memmove(p, p + strlen(drop[0]),
			strlen(p + strlen(drop[0])) + 1);
	res = lint_raw(text, &tp);
	assert_int_equal(counted_about(res, "NCCL_IB_SUBNET_AWARE_ROUTING"),
			 NR);
	is = find(res, "NCCL_IB_SUBNET_AWARE_ROUTING", "n4");
	assert_string_equal(is->level, "problem");
	assert_non_null(strstr(is->why, "110"));
	assert_string_equal(is->fix, "NCCL_IB_SUBNET_AWARE_ROUTING=1");
	free(res);
	free(text);

	/* NVIDIA's other recipe: merging off. */
	text = printed_env(&tp, "# n4 (rank 2)", "NCCL_IB_MERGE_NICS=0\n");
	res = lint_raw(text, &tp);
	is = find(res, "NCCL_IB_MERGE_NICS", "n4");
	assert_non_null(is);
	assert_string_equal(is->level, "problem");
	assert_int_equal(res->problems, 1);
	free(res);
	free(text);

	/* An NCCL older than subnet-aware routing; unknown: a note. */
	text = printed_env(&tp, NULL, NULL);
	lint_nccl_version = "2.29.3-1";
	res = lint_raw(text, &tp);
	is = find(res, "--nccl-version", NULL);
	assert_non_null(is);
	assert_string_equal(is->level, "problem");
	assert_non_null(strstr(is->why, "NCCL 2.29.3-1 ignores"));
	free(res);
	lint_nccl_version = "";
	res = lint_raw(text, &tp);
	is = find(res, "--nccl-version", NULL);
	assert_non_null(is);
	assert_string_equal(is->level, "note");
	assert_int_equal(res->counted, 0);
	free(res);
	lint_nccl_version = "2.31.2";
	res = lint_raw(text, &tp);
	assert_null(find(res, "--nccl-version", NULL));
	free(res);
	lint_nccl_version = "2.30.7";
	free(text);

	/* Pairs NCCL does not fuse by itself: without NCCL_NET_FORCE_MERGE
	 * each function is a device of its own. */
	for (int i = 0; i < NR; i++) {
		tp.r[i].nic_groups = groups[i];
		tp.r[i].n_nic_groups = 1;
		tp.r[i].nic_groups_automatic = 0;
	}
	text = printed_env(&tp, NULL, NULL);
	assert_non_null(strstr(text, "NCCL_NET_FORCE_MERGE=roceP2p1s0f1,"
				     "rocep1s0f0\n"));
	res = lint_raw(text, &tp);
	assert_int_equal(res->counted, 0);
	free(res);
	while ((p = strstr(text, drop[1])))
		*p = 'X'; /* XCCL_NET_FORCE_MERGE: not NCCL's */
	res = lint_raw(text, &tp);
	assert_int_equal(counted_about(res, "NCCL_NET_FORCE_MERGE"), NR);
	assert_string_equal(find(res, "NCCL_NET_FORCE_MERGE", "n1")->level,
			    "problem");
	free(res);
	free(text);
}

static void test_version(void **state)
{
	(void)state;
	assert_int_equal(check_env_version("2.30.7"), 2030007);
	assert_int_equal(check_env_version("2.30.7-1"), 2030007);
	assert_int_equal(check_env_version("2.30"), 2030000);
	assert_true(check_env_version("2.29.3") < check_env_version("2.30.7"));
	assert_int_equal(check_env_version("2"), -1);
	assert_int_equal(check_env_version("v2.30.7"), -1);
	assert_int_equal(check_env_version("2.30.x"), -1);
	assert_int_equal(check_env_version(""), -1);
	assert_int_equal(check_env_version("2.3000.1"), -1);
}

static void test_render(void **state)
{
	struct testgb10 tp;
	struct check_env_result *res;
	struct testwriter tw;
	char *out, *one = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	testgb10_init(&tp);
	res = lint("NCCL_ALGO=Tree\nNCCL_SOCKET_IFNAME==enP7s7\n"
		   "NCCL_SWITCHLESS_RING_ONLY=1\n",
		   &tp);
	/* Plain: the records, then the text of ranks -f env. */
	testwriter_open(&tw, WRITER_PLAIN);
	check_env_render(tw.w, tw.f, WRITER_PLAIN, "f.env", &tp.t, res);
	tw.w = NULL; /* finished by check_env_render */
	out = testwriter_close(&tw);
	assert_non_null(strstr(out, "verdict: problems"));
	assert_non_null(strstr(out, "NCCL_SWITCHLESS_RING_ONLY"));
	assert_non_null(strstr(out, "# n4 (rank 2)\nNODE_RANK=2\n"));
	assert_non_null(strstr(out, "NCCL_ALGO=Ring\n"));
	free(out);

	/* JSON: each node's block as ranks_env_node prints it. */
	m = open_memstream(&one, &len);
	assert_non_null(m);
	assert_int_equal(ranks_env_node(m, &tp.t, 3), 0);
	fclose(m);
	assert_non_null(strstr(one, "# n3 (rank 3)\n"));
	assert_null(strstr(one, "# n1 (rank 0)"));
	testwriter_open(&tw, WRITER_JSON);
	check_env_render(tw.w, tw.f, WRITER_JSON, "f.env", &tp.t, res);
	tw.w = NULL;
	out = testwriter_close(&tw);
	assert_non_null(strstr(out, "\"verdict\": \"problems\""));
	assert_non_null(strstr(out, "\"streams_computed\": 4"));
	assert_non_null(strstr(out, "\"corrected_env\""));
	assert_non_null(strstr(out, "NODE_RANK=3\\nMASTER_ADDR=192.168.1.1"));
	assert_null(strstr(out, "corrected environment per node"));
	free(out);
	free(one);
	assert_int_equal(ranks_env_node(stdout, &tp.t, NR), -1);

	/* A node without a management interface: ranks -f env refuses, and
	 * so does the corrected environment here, saying why. */
	tp.r[1].mgmt_interface = "";
	testwriter_open(&tw, WRITER_PLAIN);
	check_env_render(tw.w, tw.f, WRITER_PLAIN, "f.env", &tp.t, res);
	tw.w = NULL;
	out = testwriter_close(&tw);
	assert_non_null(strstr(out, "corrected_env_refused: node 'n2'"));
	assert_null(strstr(out, "NODE_RANK="));
	free(out);
	free(res);
}

/* ranks -f env writes the channel count this check asks for: at least
 * the reference cluster's 4, more when the ladder saturated only above that. */
static void test_ranks_env_channels(void **state)
{
	struct testwriter tw;
	struct testgb10 tp;
	char *out;

	(void)state;
	testgb10_init(&tp);
	assert_int_equal(ranks_text(testwriter_stream(&tw), &tp.t, "env"), 0);
	out = testwriter_close(&tw);
	assert_non_null(strstr(out, "NCCL_MIN_NCHANNELS=4\n"
				    "NCCL_MAX_NCHANNELS=4\n"));
	free(out);
	/* 18% at 1, 54% at 4, all of it only at 8 streams. */
	tp.gbps[0] = 20.0;
	tp.gbps[1] = 60.0;
	assert_int_equal(ranks_text(testwriter_stream(&tw), &tp.t, "env"), 0);
	out = testwriter_close(&tw);
	assert_non_null(strstr(out, "NCCL_MIN_NCHANNELS=8\n"
				    "NCCL_MAX_NCHANNELS=8\n"));
	assert_null(strstr(out, "NCHANNELS=4"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_random),
		cmocka_unit_test(test_environ),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_algo),
		cmocka_unit_test(test_channels),
		cmocka_unit_test(test_socket),
		cmocka_unit_test(test_hca),
		cmocka_unit_test(test_gid),
		cmocka_unit_test(test_gid_table),
		cmocka_unit_test(test_blocks),
		cmocka_unit_test(test_hanging),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_ranks_env_channels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
