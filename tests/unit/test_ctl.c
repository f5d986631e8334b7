#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "testargs.h"

/* ringctl ranks' text formats with names an agent chose: what reaches an
 * operator's shell, hostfile or rankfile. */

static const char *const formats[] = {"hostfile", "rankfile", "torchrun",
				      "env"};

struct topo {
	Ring__Topology t;
	Ring__Rank r[3];
	Ring__Rank *rp[3];
};

static void topo_init(struct topo *tp)
{
	static const char *const names[] = {"n1", "n2", "n3"};
	static const char *const addrs[] = {"10.0.0.1", "10.0.0.2",
					    "fe80::3%mgmt0"};

	ring__topology__init(&tp->t);
	tp->t.kind = "ring";
	for (int i = 0; i < 3; i++) {
		Ring__Rank *r = &tp->r[i];

		ring__rank__init(r);
		r->rank = (uint32_t)i;
		r->node = (char *)names[i];
		r->mgmt_address = (char *)addrs[i];
		r->mgmt_interface = "enp1s0";
		r->next_node = (char *)names[(i + 1) % 3];
		r->prev_node = (char *)names[(i + 2) % 3];
		r->next_interface = "eth1";
		r->prev_interface = "eth2";
		r->next_rdma = "mlx5_0";
		r->prev_rdma = "mlx5_1";
		r->next_gid_index = 3;
		r->prev_gid_index = 3;
		tp->rp[i] = r;
	}
	tp->t.n_ranks = 3;
	tp->t.ranks = tp->rp;
}

/* render_ranks_text into a string (caller frees); *rc its return. */
static char *text(const struct topo *tp, const char *fmt, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*rc = render_ranks_text(f, &tp->t, fmt);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Nothing a terminal or shell acts on: printable ASCII and newlines. */
static void assert_plain_ascii(const char *s)
{
	for (; *s; s++)
		if (*s != '\n' &&
		    ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f))
			fail_msg("raw byte 0x%02x in output",
				 (unsigned char)*s);
}

static void test_safe_printed(void **state)
{
	struct topo tp;
	char err[512];
	int rc;
	char *out;

	(void)state;
	topo_init(&tp);
	for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++) {
		err[0] = '\0';
		assert_int_equal(
			render_ranks_check(&tp.t, formats[i], err, sizeof(err)),
			0);
		out = text(&tp, formats[i], &rc);
		assert_int_equal(rc, 0);
		assert_true(strlen(out) > 0);
		assert_plain_ascii(out);
		free(out);
	}
	out = text(&tp, "env", &rc);
	assert_non_null(strstr(out, "# n2 (rank 1)\nNODE_RANK=1\n"
				    "MASTER_ADDR=10.0.0.1\n"
				    "NCCL_SOCKET_IFNAME=enp1s0\n"
				    "NCCL_IB_HCA=mlx5_0,mlx5_1\n"));
	free(out);
	out = text(&tp, "hostfile", &rc);
	assert_non_null(strstr(out, "fe80::3%mgmt0 slots=1  # rank 2: n3\n"));
	free(out);
	/* Not a text format: the caller renders it with the writer. */
	out = text(&tp, "json", &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(out, "");
	free(out);
}

/* Optional fields may be empty: env leaves them out or uses a default. */
static void test_empty_optional(void **state)
{
	struct topo tp;
	char err[512];
	int rc;
	char *out;

	(void)state;
	topo_init(&tp);
	tp.r[1].mgmt_interface = "";
	tp.r[1].next_rdma = "";
	tp.r[1].prev_rdma = "";
	assert_int_equal(render_ranks_check(&tp.t, "env", err, sizeof(err)), 0);
	out = text(&tp, "env", &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "NODE_RANK=1\nMASTER_ADDR=10.0.0.1\n"
				    "NCCL_SOCKET_IFNAME=mgmt0\n# no RDMA"));
	free(out);
	/* A host with no name or address would silently shift the list. */
	tp.r[1].node = "";
	for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++)
		assert_int_equal(
			render_ranks_check(&tp.t, formats[i], err, sizeof(err)),
			-1);
	topo_init(&tp);
	tp.r[2].mgmt_address = "";
	assert_int_equal(
		render_ranks_check(&tp.t, "hostfile", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "mgmt_address '' is empty"));
}

/* The attack: a management interface named "x\nLD_PRELOAD=/a". */
static void test_env_injection_refused(void **state)
{
	struct topo tp;
	char err[512];
	int rc;
	char *out;

	(void)state;
	topo_init(&tp);
	tp.r[1].mgmt_interface = "x\nLD_PRELOAD=/a";
	assert_int_equal(render_ranks_check(&tp.t, "env", err, sizeof(err)),
			 -1);
	assert_string_equal(
		err, "node 'n2' (rank 1): mgmt_interface 'x\\x0aLD_PRELOAD=/a' "
		     "has characters outside [A-Za-z0-9._:,/+@%-]; refusing "
		     "to print env (it would not be one safe word)");
	/* Nothing at all is printed, not the ranks before the bad one. */
	out = text(&tp, "env", &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(out, "");
	free(out);
	/* The writer's formats escape: nothing to refuse there. */
	assert_int_equal(render_ranks_check(&tp.t, "json", err, sizeof(err)),
			 0);
	assert_int_equal(render_ranks_check(&tp.t, "plain", err, sizeof(err)),
			 0);
	/* hostfile, rankfile and torchrun do not print the interface. */
	for (size_t i = 0; i < 3; i++) {
		out = text(&tp, formats[i], &rc);
		assert_int_equal(rc, 0);
		assert_null(strstr(out, "LD_PRELOAD"));
		free(out);
	}
}

static void test_hostile_values(void **state)
{
	static const char *const bad[] = {
		"n\nX=1",   "n$(reboot)", "n`id`", "n'q", "n\"q",
		"n\x1b[2J", "n;x",	  "n x",   "n\\", "n\xc2\x9b",
		"n\xff",    "n\tx",	  "n|x",   "n>x", "n#x",
	};
	struct topo tp;
	char err[512];
	int rc;
	char *out;

	(void)state;
	for (size_t b = 0; b < sizeof(bad) / sizeof(*bad); b++) {
		/* A node name is printed by every format. */
		topo_init(&tp);
		tp.r[2].node = (char *)bad[b];
		for (size_t i = 0; i < sizeof(formats) / sizeof(*formats);
		     i++) {
			assert_int_equal(render_ranks_check(&tp.t, formats[i],
							    err, sizeof(err)),
					 -1);
			assert_non_null(strstr(err, "(rank 2): node '"));
			/* The message itself is safe to print. */
			assert_plain_ascii(err);
			out = text(&tp, formats[i], &rc);
			assert_int_equal(rc, -1);
			assert_string_equal(out, "");
			free(out);
		}
		/* Rank 0's address is every launcher's rendezvous point. */
		topo_init(&tp);
		tp.r[0].mgmt_address = (char *)bad[b];
		for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++)
			assert_int_equal(render_ranks_check(&tp.t, formats[i],
							    err, sizeof(err)),
					 -1);
		assert_non_null(
			strstr(err, "node 'n1' (rank 0): mgmt_address"));
		/* Another rank's address only reaches hostfile and rankfile. */
		topo_init(&tp);
		tp.r[1].mgmt_address = (char *)bad[b];
		assert_int_equal(
			render_ranks_check(&tp.t, "hostfile", err, sizeof(err)),
			-1);
		assert_int_equal(
			render_ranks_check(&tp.t, "rankfile", err, sizeof(err)),
			-1);
		assert_int_equal(
			render_ranks_check(&tp.t, "torchrun", err, sizeof(err)),
			0);
		assert_int_equal(
			render_ranks_check(&tp.t, "env", err, sizeof(err)), 0);
		/* RDMA device names reach NCCL_IB_HCA. */
		topo_init(&tp);
		tp.r[2].prev_rdma = (char *)bad[b];
		assert_int_equal(
			render_ranks_check(&tp.t, "env", err, sizeof(err)), -1);
		assert_non_null(strstr(err, "prev_rdma '"));
		assert_int_equal(
			render_ranks_check(&tp.t, "hostfile", err, sizeof(err)),
			0);
	}
}

/* A long hostile value is cut in the message, which stays bounded. */
static void test_message_bounded(void **state)
{
	char big[4096], err[512];
	struct topo tp;

	(void)state;
	memset(big, '\n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	topo_init(&tp);
	tp.r[0].node = big;
	assert_int_equal(render_ranks_check(&tp.t, "env", err, sizeof(err)),
			 -1);
	/* Node and value: 40 bytes each, escaped, and the explanation. */
	assert_true(strlen(err) < 500);
	assert_non_null(strstr(err, "one safe word)"));
	assert_non_null(strstr(err, "\\x0a...' (rank 0)"));
	assert_non_null(strstr(err, "refusing to print env"));
	assert_plain_ascii(err);
}

static int parse(struct testargs *t, char *err, size_t len, ...)
{
	char *argv[40];
	int argc = 0;
	va_list ap;

	va_start(ap, len);
	while (argc < 39 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	return testargs_parse(argc, argv, t, err, len);
}

static void test_parse_rdma_bw(void **state)
{
	struct testargs t;
	char err[256];

	(void)state;
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "read", NULL),
			 0);
	assert_string_equal(t.a, "n1");
	assert_string_equal(t.b, "n2");
	assert_int_equal(t.params.kind, RING__TEST_KIND__TEST_RDMA_BW);
	assert_ptr_equal(t.params.rdma, &t.rdma);
	assert_int_equal(t.rdma.op, RING__RDMA_OP__RDMA_OP_READ);
	assert_int_equal(t.params.duration_ms, 5000);
	assert_int_equal(t.params.warmup_ms, 1000);
	/* 0 = the agent's default. */
	assert_int_equal(t.rdma.qps, 0);
	assert_int_equal(t.rdma.size, 0);
	assert_false(t.rdma.a_gid_set);

	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--qps", "8", "--size", "64K",
			       "--duration", "2.5", "--warmup", "0",
			       "--iterations", "5000", "--tx-depth", "128",
			       "--cq-mod", "16", "--post-list", "4", "--gid-a",
			       "3", "--gid-b", "1", "--mtu", "1024", NULL),
			 0);
	assert_int_equal(t.rdma.op, RING__RDMA_OP__RDMA_OP_WRITE);
	assert_int_equal(t.rdma.qps, 8);
	assert_int_equal(t.rdma.size, 65536);
	assert_int_equal(t.params.duration_ms, 2500);
	assert_int_equal(t.params.warmup_ms, 0);
	assert_int_equal(t.rdma.iterations, 5000);
	assert_int_equal(t.rdma.tx_depth, 128);
	assert_int_equal(t.rdma.cq_mod, 16);
	assert_int_equal(t.rdma.post_list, 4);
	assert_true(t.rdma.a_gid_set);
	assert_int_equal(t.rdma.a_gid_index, 3);
	assert_true(t.rdma.b_gid_set);
	assert_int_equal(t.rdma.b_gid_index, 1);
	assert_int_equal(t.rdma.mtu, 1024);
	assert_int_equal(t.params.direction, RING__DIRECTION__DIR_A_TO_B);
}

static void test_parse_rdma_errors(void **state)
{
	struct testargs t;
	char err[256];

	(void)state;
	assert_int_equal(
		parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2", NULL), -1);
	assert_string_equal(err, "rdma-bw needs --op write or --op read");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "send", NULL),
			 -1);
	assert_string_equal(err, "--op: 'send' is not write or read");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--qps", "0", NULL),
			 -1);
	assert_string_equal(err, "--qps: '0' is not 1..64");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--size", "2G", NULL),
			 -1);
	assert_non_null(strstr(err, "--size: '2G'"));
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--mtu", "1500", NULL),
			 -1);
	assert_non_null(strstr(err, "--mtu: '1500'"));
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--gid-a", "x", NULL),
			 -1);
	assert_string_equal(err, "--gid-a: 'x' is not a GID index 0..255");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--tx-depth", "8", "--cq-mod",
			       "16", NULL),
			 -1);
	assert_string_equal(err, "cq moderation 16 must divide the tx depth 8");
	/* What the agent refuses, ringctl refuses, in the same words. */
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--cq-mod", "3", NULL),
			 -1);
	assert_string_equal(err,
			    "cq moderation 3 must divide the tx depth 128");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--tx-depth", "16384", NULL),
			 -1);
	assert_string_equal(err, "--tx-depth: '16384' is not 1..8192");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--post-list", "65", NULL),
			 -1);
	assert_string_equal(err, "--post-list: '65' is not 1..64");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--iterations", "100000001",
			       NULL),
			 -1);
	assert_string_equal(err, "--iterations: '100000001' is not "
				 "1..100000000 messages per QP");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--size", "65M", NULL),
			 -1);
	assert_string_equal(err, "--size: '65M' is not a size of 1 byte..64M "
				 "(K and M suffixes accepted)");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--size", "64M", "--post-list",
			       "64", "--tx-depth", "32", "--duration", "nan",
			       NULL),
			 -1);
	assert_string_equal(err, "--duration: 'nan' is not 0.1..600 seconds");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--streams", "4", NULL),
			 -1);
	assert_string_equal(err, "unknown rdma-bw option '--streams'");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", NULL),
			 -1);
	assert_string_equal(err, "option '--op' needs a value");
	/* Bandwidth knobs are not latency knobs. */
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-lat", "n1", "n2",
			       "--op", "write", "--qps", "2", NULL),
			 -1);
	assert_string_equal(err, "unknown rdma-lat option '--qps'");
	assert_int_equal(
		parse(&t, err, sizeof(err), "rdma-xx", "n1", "n2", NULL), -1);
	assert_non_null(strstr(err, "'rdma-bw A B'"));
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", NULL),
			 -1);
}

static void test_parse_rdma_lat(void **state)
{
	struct testargs t;
	char err[256];

	(void)state;
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-lat", "n1", "n2",
			       "--op", "write", NULL),
			 0);
	assert_int_equal(t.params.kind, RING__TEST_KIND__TEST_RDMA_LAT);
	assert_int_equal(t.params.n_sizes, 5);
	assert_int_equal(t.params.sizes[0], 64);
	assert_int_equal(t.params.iterations, 1000);
	assert_int_equal(t.params.lat_warmup, 100);
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-lat", "n1", "n2",
			       "--op", "read", "--sizes", "2,4K,1M",
			       "--iterations", "500", "--gid-b", "7", NULL),
			 0);
	assert_int_equal(t.rdma.op, RING__RDMA_OP__RDMA_OP_READ);
	assert_int_equal(t.params.n_sizes, 3);
	assert_int_equal(t.sizes[0], 2);
	assert_int_equal(t.sizes[1], 4096);
	assert_int_equal(t.sizes[2], 1048576);
	assert_int_equal(t.params.iterations, 500);
	assert_int_equal(t.params.lat_warmup, 50);
	assert_true(t.rdma.b_gid_set);
	assert_int_equal(t.rdma.b_gid_index, 7);
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-lat", "n1", "n2",
			       "--op", "read", "--sizes", "64,,32M", NULL),
			 -1);
	assert_non_null(strstr(err, "--sizes: '64,,32M'"));
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-lat", "n1", "n2",
			       "--op", "read", "--sizes", "64,8M", NULL),
			 0);
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-lat", "n1", "n2",
			       "--op", "read", "--sizes", "64,9M", NULL),
			 -1);
	assert_string_equal(err, "--sizes: '64,9M' is not a list of up to 16 "
				 "sizes of 1 byte..8M (K and M suffixes "
				 "accepted)");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-lat", "n1", "n2",
			       "--op", "read", "--sizes", "64,64", NULL),
			 -1);
	assert_string_equal(err, "latency size 64 given twice");
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-lat", "n1", "n2",
			       "--op", "read", "--sizes", "64,", NULL),
			 -1);
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-lat", "n1", "n2",
			       "--op", "read", "--sizes",
			       "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
			       NULL),
			 -1);
}

/* The TCP kinds parse as ringctl always did. */
static void test_parse_tcp(void **state)
{
	struct testargs t;
	char err[256];

	(void)state;
	assert_int_equal(parse(&t, err, sizeof(err), "bw", "n1", "n2", NULL),
			 0);
	assert_int_equal(t.params.kind, RING__TEST_KIND__TEST_TCP_BW);
	assert_int_equal(t.params.streams, 8);
	assert_null(t.params.rdma);
	assert_int_equal(parse(&t, err, sizeof(err), "bw", "n1", "n2",
			       "--streams", "4", "--direction", "both", NULL),
			 0);
	assert_int_equal(t.params.direction, RING__DIRECTION__DIR_BOTH);
	assert_int_equal(parse(&t, err, sizeof(err), "bw", "n1", "n2",
			       "--streams", "3", "--direction", "both", NULL),
			 -1);
	assert_string_equal(err, "direction both needs an even number of "
				 "streams (>= 2), not 3");
	assert_int_equal(parse(&t, err, sizeof(err), "bw", "n1", "n2", "--op",
			       "write", NULL),
			 -1);
	assert_string_equal(err, "unknown test option '--op'");
	assert_int_equal(parse(&t, err, sizeof(err), "lat", "n1", "n2",
			       "--sizes", "64,4096", "--iterations", "100",
			       NULL),
			 0);
	assert_int_equal(t.params.n_sizes, 2);
	assert_int_equal(t.params.lat_warmup, 10);
	/* The size grammar of rdma-lat and the configuration. */
	assert_int_equal(parse(&t, err, sizeof(err), "lat", "n1", "n2",
			       "--sizes", "1K,64K,1M", NULL),
			 0);
	assert_int_equal(t.params.n_sizes, 3);
	assert_int_equal(t.sizes[0], 1024);
	assert_int_equal(t.sizes[1], 65536);
	assert_int_equal(t.sizes[2], 1048576);
	assert_int_equal(parse(&t, err, sizeof(err), "lat", "n1", "n2",
			       "--sizes", "2M", NULL),
			 -1);
	assert_string_equal(err, "--sizes: '2M' is not a list of up to 16 "
				 "sizes of 1 byte..1M (K and M suffixes "
				 "accepted)");
	/* The agent's limits: 1 iteration is enough for it. */
	assert_int_equal(parse(&t, err, sizeof(err), "lat", "n1", "n2",
			       "--iterations", "1", NULL),
			 0);
	assert_int_equal(parse(&t, err, sizeof(err), "lat", "n1", "n2",
			       "--iterations", "1000001", NULL),
			 -1);
	assert_string_equal(err, "--iterations: '1000001' is not 1..1000000");
	assert_int_equal(parse(&t, err, sizeof(err), "bw", "n1", "n2",
			       "--duration", "0.05", NULL),
			 -1);
	assert_string_equal(err, "--duration: '0.05' is not 0.1..600 seconds");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_safe_printed),
		cmocka_unit_test(test_empty_optional),
		cmocka_unit_test(test_env_injection_refused),
		cmocka_unit_test(test_hostile_values),
		cmocka_unit_test(test_message_bounded),
		cmocka_unit_test(test_parse_rdma_bw),
		cmocka_unit_test(test_parse_rdma_errors),
		cmocka_unit_test(test_parse_rdma_lat),
		cmocka_unit_test(test_parse_tcp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
