#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl/allreduce_cli.h"
#include "ringctl/ranks.h"
#include "ringctl/render.h"
#include "ringctl/report.h"
#include "ringctl/testargs.h"
#include "testwriter.h"

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

/* ranks_text into a string (caller frees); *rc its return. */
static char *text(const struct topo *tp, const char *fmt, int *rc)
{
	struct testwriter t;

	*rc = ranks_text(testwriter_stream(&t), &tp->t, fmt);
	return testwriter_close(&t);
}

/* fmt prints nothing at all for tp, not even the ranks before a bad one. */
static void assert_text_refused(const struct topo *tp, const char *fmt)
{
	int rc;
	char *out = text(tp, fmt, &rc);

	assert_int_equal(rc, -1);
	assert_string_equal(out, "");
	free(out);
}

/* Each of want (up to NULL) is in out; a missing one is named. */
static void assert_has(const char *out, const char *const *want)
{
	for (; *want; want++) {
		if (!strstr(out, *want))
			print_error("--- not found:\n%s\n--- in:\n%s---\n",
				    *want, out);
		assert_non_null(strstr(out, *want));
	}
}

/* None of unwanted (up to NULL) is in out; a present one is named. */
static void assert_lacks(const char *out, const char *const *unwanted)
{
	for (; *unwanted; unwanted++) {
		if (strstr(out, *unwanted))
			print_error("--- unexpected:\n%s\n--- in:\n%s---\n",
				    *unwanted, out);
		assert_null(strstr(out, *unwanted));
	}
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
			ranks_check(&tp.t, formats[i], err, sizeof(err)), 0);
		out = text(&tp, formats[i], &rc);
		assert_int_equal(rc, 0);
		assert_true(strlen(out) > 0);
		assert_plain_ascii(out);
		free(out);
	}
	out = text(&tp, "env", &rc);
	assert_non_null(strstr(out, "# n2 (rank 1)\nNODE_RANK=1\n"
				    "MASTER_ADDR=10.0.0.1\n"
				    "NCCL_SOCKET_IFNAME==enp1s0\n"));
	/* No ports listed (an older coordinator): the two devices, exact. */
	assert_non_null(strstr(out, "NCCL_IB_HCA==mlx5_0,mlx5_1\n"));
	free(out);
	out = text(&tp, "hostfile", &rc);
	assert_non_null(strstr(out, "fe80::3%mgmt0 slots=1  # rank 2: n3\n"));
	free(out);
	/* Not a text format: the caller renders it with the writer. */
	assert_text_refused(&tp, "json");
}

/* Optional fields may be empty: env leaves them out; an unknown
 * management interface is refused (test_ranks_env). */
static void test_empty_optional(void **state)
{
	struct topo tp;
	char err[512];
	int rc;
	char *out;

	(void)state;
	topo_init(&tp);
	tp.r[1].next_rdma = "";
	tp.r[1].prev_rdma = "";
	assert_int_equal(ranks_check(&tp.t, "env", err, sizeof(err)), 0);
	out = text(&tp, "env", &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "NODE_RANK=1\nMASTER_ADDR=10.0.0.1\n"
				    "NCCL_SOCKET_IFNAME==enp1s0\n"));
	assert_non_null(strstr(out, "OMPI_MCA_oob_tcp_if_include=enp1s0\n"
				    "# no RDMA"));
	assert_null(strstr(out, "mgmt0\n"));
	free(out);
	tp.r[1].mgmt_interface = "";
	assert_int_equal(ranks_check(&tp.t, "env", err, sizeof(err)), -1);
	/* A host with no name or address would silently shift the list. */
	tp.r[1].node = "";
	for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++)
		assert_int_equal(
			ranks_check(&tp.t, formats[i], err, sizeof(err)), -1);
	topo_init(&tp);
	tp.r[2].mgmt_address = "";
	assert_int_equal(ranks_check(&tp.t, "hostfile", err, sizeof(err)), -1);
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
	assert_int_equal(ranks_check(&tp.t, "env", err, sizeof(err)), -1);
	assert_string_equal(
		err, "node 'n2' (rank 1): mgmt_interface 'x\\x0aLD_PRELOAD=/a' "
		     "has characters outside [A-Za-z0-9._:,/+@%-]; refusing "
		     "to print env (it would not be one safe word)");
	/* Nothing at all is printed, not the ranks before the bad one. */
	assert_text_refused(&tp, "env");
	/* The writer's formats escape: nothing to refuse there. */
	assert_int_equal(ranks_check(&tp.t, "json", err, sizeof(err)), 0);
	assert_int_equal(ranks_check(&tp.t, "plain", err, sizeof(err)), 0);
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

	(void)state;
	for (size_t b = 0; b < sizeof(bad) / sizeof(*bad); b++) {
		/* A node name is printed by every format. */
		topo_init(&tp);
		tp.r[2].node = (char *)bad[b];
		for (size_t i = 0; i < sizeof(formats) / sizeof(*formats);
		     i++) {
			assert_int_equal(ranks_check(&tp.t, formats[i], err,
						     sizeof(err)),
					 -1);
			assert_non_null(strstr(err, "(rank 2): node '"));
			/* The message itself is safe to print. */
			assert_plain_ascii(err);
			assert_text_refused(&tp, formats[i]);
		}
		/* Rank 0's address is every launcher's rendezvous point. */
		topo_init(&tp);
		tp.r[0].mgmt_address = (char *)bad[b];
		for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++)
			assert_int_equal(ranks_check(&tp.t, formats[i], err,
						     sizeof(err)),
					 -1);
		assert_non_null(
			strstr(err, "node 'n1' (rank 0): mgmt_address"));
		/* Another rank's address only reaches hostfile and rankfile. */
		topo_init(&tp);
		tp.r[1].mgmt_address = (char *)bad[b];
		assert_int_equal(
			ranks_check(&tp.t, "hostfile", err, sizeof(err)), -1);
		assert_int_equal(
			ranks_check(&tp.t, "rankfile", err, sizeof(err)), -1);
		assert_int_equal(
			ranks_check(&tp.t, "torchrun", err, sizeof(err)), 0);
		assert_int_equal(ranks_check(&tp.t, "env", err, sizeof(err)),
				 0);
		/* RDMA device names reach NCCL_IB_HCA. */
		topo_init(&tp);
		tp.r[2].prev_rdma = (char *)bad[b];
		assert_int_equal(ranks_check(&tp.t, "env", err, sizeof(err)),
				 -1);
		assert_non_null(strstr(err, "prev_rdma '"));
		assert_int_equal(
			ranks_check(&tp.t, "hostfile", err, sizeof(err)), 0);
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
	assert_int_equal(ranks_check(&tp.t, "env", err, sizeof(err)), -1);
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
	assert_int_equal(t.rdma.traffic_class, 0);
	assert_int_equal(t.rdma.service_level, 0);
	assert_int_equal(parse(&t, err, sizeof(err), "rdma-bw", "n1", "n2",
			       "--op", "write", "--tc", "106", "--sl", "3",
			       NULL),
			 0);
	assert_int_equal(t.rdma.traffic_class, 106);
	assert_int_equal(t.rdma.service_level, 3);
}

/* One command line: what parse returns and, when it fails, what it says. */
struct parse_case {
	const char *line; /* the arguments, split at each space */
	int rc;
	const char *err;  /* the whole message, or NULL */
	const char *part; /* a part of it, or NULL */
};

/* Each case in turn; a failing one is named by its index and line. */
static void check_parse(const struct parse_case *c, size_t n)
{
	struct testargs t;
	char err[256], words[256];

	for (size_t i = 0; i < n; i++, c++) {
		char *argv[16], *save = NULL;
		int argc = 0, rc;

		if (strlen(c->line) >= sizeof(words))
			fail_msg("case %zu: line too long", i);
		strcpy(words, c->line);
		for (char *w = strtok_r(words, " ", &save); w && argc < 16;
		     w = strtok_r(NULL, " ", &save))
			argv[argc++] = w;
		err[0] = '\0';
		rc = testargs_parse(argc, argv, &t, err, sizeof(err));
		if (rc != c->rc || (c->err && strcmp(err, c->err)) ||
		    (c->part && !strstr(err, c->part)))
			print_error("case %zu (%s): returned %d, said '%s'\n",
				    i, c->line, rc, err);
		assert_int_equal(rc, c->rc);
		if (c->err)
			assert_string_equal(err, c->err);
		if (c->part)
			assert_non_null(strstr(err, c->part));
	}
}

static void test_parse_rdma_errors(void **state)
{
	static const struct parse_case cases[] = {
		{"rdma-bw n1 n2", -1, "rdma-bw needs --op write or --op read",
		 NULL},
		{"rdma-bw n1 n2 --op send", -1,
		 "--op: 'send' is not write or read", NULL},
		{"rdma-bw n1 n2 --op write --qps 0", -1,
		 "--qps: '0' is not 1..64", NULL},
		{"rdma-bw n1 n2 --op write --size 2G", -1, NULL,
		 "--size: '2G'"},
		{"rdma-bw n1 n2 --op write --mtu 1500", -1, NULL,
		 "--mtu: '1500'"},
		{"rdma-bw n1 n2 --op write --gid-a x", -1,
		 "--gid-a: 'x' is not a GID index 0..255", NULL},
		{"rdma-bw n1 n2 --op write --tx-depth 8 --cq-mod 16", -1,
		 "cq moderation 16 must divide the tx depth 8", NULL},
		/* What the agent refuses, ringctl refuses, in the same words. */
		{"rdma-bw n1 n2 --op write --cq-mod 3", -1,
		 "cq moderation 3 must divide the tx depth 128", NULL},
		{"rdma-bw n1 n2 --op write --tx-depth 16384", -1,
		 "--tx-depth: '16384' is not 1..8192", NULL},
		{"rdma-bw n1 n2 --op write --post-list 65", -1,
		 "--post-list: '65' is not 1..64", NULL},
		{"rdma-bw n1 n2 --op write --iterations 100000001", -1,
		 "--iterations: '100000001' is not 1..100000000 messages per QP",
		 NULL},
		{"rdma-bw n1 n2 --op write --size 65M", -1,
		 "--size: '65M' is out of range (1 byte..64MiB)", NULL},
		{"rdma-bw n1 n2 --op write --size 64M --post-list 64 --tx-depth 32 --duration nan",
		 -1, "--duration: 'nan' is not 0.1..600 seconds", NULL},
		{"rdma-bw n1 n2 --op write --streams 4", -1,
		 "unknown rdma-bw option '--streams'", NULL},
		{"rdma-bw n1 n2 --op", -1, "option '--op' needs a value", NULL},
		/* NCCL_IB_TC / NCCL_IB_SL: 8 and 4 bits, strictly. */
		{"rdma-bw n1 n2 --op write --tc 256", -1,
		 "--tc: '256' is not a traffic class 0..255", NULL},
		{"rdma-bw n1 n2 --op write --tc -1", -1,
		 "--tc: '-1' is not a traffic class 0..255", NULL},
		{"rdma-bw n1 n2 --op write --tc 0x6a", -1,
		 "--tc: '0x6a' is not a traffic class 0..255", NULL},
		{"rdma-lat n1 n2 --op write --sl 16", -1,
		 "--sl: '16' is not a service level 0..15", NULL},
		{"rdma-lat n1 n2 --op write --sl 1.5", -1,
		 "--sl: '1.5' is not a service level 0..15", NULL},
		{"rdma-bw n1 n2 --op write --tc 106 --sl 3", 0, NULL, NULL},
		{"rdma-lat n1 n2 --op read --tc 255 --sl 15", 0, NULL, NULL},
		/* NCCL_IB_TIMEOUT's exponent, 8..24. */
		{"rdma-bw n1 n2 --op write --ack-timeout 20", 0, NULL, NULL},
		{"rdma-bw n1 n2 --op write --ack-timeout 7", -1,
		 "--ack-timeout: '7' is not an exponent 8..24", NULL},
		{"rdma-lat n1 n2 --op write --ack-timeout 25", -1,
		 "--ack-timeout: '25' is not an exponent 8..24", NULL},
		/* Bandwidth knobs are not latency knobs. */
		{"rdma-lat n1 n2 --op write --qps 2", -1,
		 "unknown rdma-lat option '--qps'", NULL},
		{"rdma-xx n1 n2", -1, NULL, "'rdma-bw A B'"},
		{"rdma-bw n1", -1, NULL, NULL},
	};

	(void)state;
	check_parse(cases, sizeof(cases) / sizeof(*cases));
}

static void test_parse_rdma_lat(void **state)
{
	static const struct parse_case sizes[] = {
		{"rdma-lat n1 n2 --op read --sizes 64,,32M", -1, NULL,
		 "--sizes: '64,,32M'"},
		{"rdma-lat n1 n2 --op read --sizes 64,8M", 0, NULL, NULL},
		{"rdma-lat n1 n2 --op read --sizes 64,9M", -1,
		 "--sizes: '9M' is out of range (1 byte..8MiB)", NULL},
		{"rdma-lat n1 n2 --op read --sizes 64,64", -1,
		 "--sizes: '64' is given twice: give each size once", NULL},
		{"rdma-lat n1 n2 --op read --sizes 64,", -1, NULL, NULL},
		{"rdma-lat n1 n2 --op read --sizes 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
		 -1, NULL, NULL},
	};
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
	check_parse(sizes, sizeof(sizes) / sizeof(*sizes));
}

/* The TCP kinds parse as ringctl always did. */
static void test_parse_tcp(void **state)
{
	static const struct parse_case limits[] = {
		{"bw n1 n2 --streams 3 --direction both", -1,
		 "direction both needs an even number of streams (>= 2), not 3",
		 NULL},
		{"bw n1 n2 --op write", -1, "unknown test option '--op'", NULL},
		{"lat n1 n2 --sizes 2M", -1,
		 "--sizes: '2M' is out of range (1 byte..1MiB)", NULL},
		/* The agent's limits: 1 iteration is enough for it. */
		{"lat n1 n2 --iterations 1", 0, NULL, NULL},
		{"lat n1 n2 --iterations 1000001", -1,
		 "--iterations: '1000001' is not 1..1000000", NULL},
		{"bw n1 n2 --duration 0.05", -1,
		 "--duration: '0.05' is not 0.1..600 seconds", NULL},
	};
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
	check_parse(limits, sizeof(limits) / sizeof(*limits));
}

/* ---- every reply rendered: no duplicate key, numbers as numbers ---- */

struct replies {
	Ring__StatusReply status;
	Ring__NodeStatus node[2], *nodep[2];
	char *unaddr[1];
	Ring__Topology top;
	char *order[2];
	Ring__Edge edge[2], *edgep[2];
	double gbps[3];
	uint32_t ladder[3];
	Ring__LatResult lat[2], *latp[2];
	Ring__DiagonalCheck diag, *diagp[1];
	Ring__Finding finding, *findingp[1];
	Ring__StrayNode stray, *strayp[1];
	char *stray_nbr[1];
	Ring__Rank rank[2], *rankp[2];
	Ring__InventoryReply inv_reply;
	Ring__Inventory inv;
	Ring__NetInterface nif, *nifp[1];
	Ring__Ipv4Address ip, *ipp[1];
	Ring__RdmaDevice dev, *devp[1];
	Ring__RdmaPort port, *portp[1];
	Ring__Gid gid, *gidp[1];
	Ring__Memory mem;
	Ring__TestReport report;
	Ring__TestParams params;
	Ring__RdmaParams rdma;
	Ring__TestResult side[2];
	Ring__StreamResult stream, *streamp[1];
	Ring__RdmaEndpoint endpoint;
};

/* Every optional part present: each key a renderer can write. */
static void replies_init(struct replies *x)
{
	static char *names[] = {"n1", "n2"};

	memset(x, 0, sizeof(*x));
	ring__status_reply__init(&x->status);
	x->status.coordinator = "coord";
	x->status.survey_state = "done";
	x->status.now_ms = 1800000000000ULL;
	x->unaddr[0] = "eth3";
	for (int i = 0; i < 2; i++) {
		Ring__NodeStatus *n = &x->node[i];

		ring__node_status__init(n);
		n->node = names[i];
		n->state = i ? "down" : "up";
		n->down_reason = i ? "heartbeat timeout" : "";
		n->connected_since_ms = x->status.now_ms - 5000;
		n->down_since_ms = x->status.now_ms - 1000;
		n->last_seen_ms = x->status.now_ms;
		n->n_rdma_devices = 1;
		n->n_unaddressed_up = 1;
		n->unaddressed_up = x->unaddr;
		n->mem_total_kib = 1 << 20;
		n->mem_available_kib = 1 << 19;
		x->nodep[i] = n;
	}
	x->status.n_nodes = 2;
	x->status.nodes = x->nodep;

	ring__topology__init(&x->top);
	x->top.kind = "line";
	x->top.line_gap = "n2-n1";
	x->order[0] = "n1";
	x->order[1] = "n2";
	x->top.n_order = 2;
	x->top.order = x->order;
	for (int i = 0; i < 3; i++) {
		x->gbps[i] = 10.0 * (i + 1);
		x->ladder[i] = (uint32_t)(1 << (2 * i));
	}
	for (int i = 0; i < 2; i++) {
		ring__lat_result__init(&x->lat[i]);
		x->lat[i].size = i ? 4096 : 64;
		x->lat[i].p50_us = i ? 12.25 : 8.6;
		x->latp[i] = &x->lat[i];
	}
	for (int i = 0; i < 2; i++) {
		Ring__Edge *e = &x->edge[i];

		ring__edge__init(e);
		e->a = "n1";
		e->b = "n2";
		e->a_interface = "eth1";
		e->b_interface = "eth2";
		e->method = "tcp";
		e->n_ladder = e->n_gbps_a_to_b = e->n_gbps_b_to_a = 3;
		e->ladder = x->ladder;
		e->gbps_a_to_b = e->gbps_b_to_a = x->gbps;
		e->nominal_gbps = i ? 0 : 200;
		e->n_latency = e->n_rdma_write_lat = 2;
		e->latency = e->rdma_write_lat = x->latp;
		e->measured_ms = x->status.now_ms - 3000;
		e->error = i ? "timed out" : "";
		/* One edge with every RDMA figure, one with none. */
		e->rdma_write_gbps_a_to_b = i ? -1 : 90;
		e->rdma_write_gbps_b_to_a = i ? -1 : 91;
		e->rdma_read_gbps_a_to_b = i ? -1 : 80;
		e->rdma_read_gbps_b_to_a = -1;
		e->rdma_error = i ? "no active RDMA port" : "";
		e->a_gid = "::ffff:10.0.0.1";
		e->b_gid = "::ffff:10.0.0.2";
		x->edgep[i] = e;
	}
	x->top.n_edges = 2;
	x->top.edges = x->edgep;
	ring__diagonal_check__init(&x->diag);
	x->diag.a = "n1";
	x->diag.b = "n2";
	x->diagp[0] = &x->diag;
	x->top.n_diagonals = 1;
	x->top.diagonals = x->diagp;
	ring__finding__init(&x->finding);
	x->finding.level = "warn";
	x->finding.text = "edge n1-n2: slow";
	x->findingp[0] = &x->finding;
	x->top.n_findings = x->top.n_anomalies = 1;
	x->top.findings = x->top.anomalies = x->findingp;
	ring__stray_node__init(&x->stray);
	x->stray.node = "s1";
	x->stray.reason = "not_cabled_into_ring";
	x->stray_nbr[0] = "s2";
	x->stray.neighbours = x->stray_nbr;
	x->stray.n_neighbours = 1;
	x->stray.text = "s1 is not cabled into the ring: its cables reach "
			"only s2, outside it; set apart, the ring is "
			"classified without it";
	x->strayp[0] = &x->stray;
	x->top.strays = x->strayp;
	x->top.n_strays = 1;
	for (int i = 0; i < 2; i++) {
		ring__rank__init(&x->rank[i]);
		x->rank[i].node = names[i];
		x->rank[i].next_gid_index = 1;
		x->rank[i].prev_gid_index = -1;
		x->rankp[i] = &x->rank[i];
	}
	x->top.n_ranks = 2;
	x->top.ranks = x->rankp;
	x->status.topology = &x->top;

	/* The inventory, each part built from the inside out. */
	ring__ipv4_address__init(&x->ip);
	x->ipp[0] = &x->ip;
	ring__net_interface__init(&x->nif);
	x->nif.name = "eth1";
	x->nif.n_ipv4 = 1;
	x->nif.ipv4 = x->ipp;
	x->nifp[0] = &x->nif;
	ring__gid__init(&x->gid);
	x->gid.index = 3;
	x->gidp[0] = &x->gid;
	ring__rdma_port__init(&x->port);
	x->port.port = 1;
	x->port.n_gids = 1;
	x->port.gids = x->gidp;
	x->portp[0] = &x->port;
	ring__rdma_device__init(&x->dev);
	x->dev.name = "mlx5_0";
	x->dev.n_ports = 1;
	x->dev.ports = x->portp;
	x->devp[0] = &x->dev;
	ring__memory__init(&x->mem);
	x->mem.total_kib = 1 << 20;
	x->mem.available_kib = 1 << 18;
	ring__inventory__init(&x->inv);
	x->inv.n_interfaces = 1;
	x->inv.interfaces = x->nifp;
	x->inv.n_rdma_devices = 1;
	x->inv.rdma_devices = x->devp;
	x->inv.rdma_error = "partly";
	x->inv.memory = &x->mem;
	ring__inventory_reply__init(&x->inv_reply);
	x->inv_reply.status = &x->node[0];
	x->inv_reply.inventory = &x->inv;

	/* A test report with both sides, every part present. */
	ring__rdma_params__init(&x->rdma);
	ring__test_params__init(&x->params);
	x->params.streams = 1;
	ring__stream_result__init(&x->stream);
	x->streamp[0] = &x->stream;
	ring__rdma_endpoint__init(&x->endpoint);
	ring__test_report__init(&x->report);
	x->report.a = "n1";
	x->report.b = "n2";
	x->report.error = "b: gone";
	x->report.params = &x->params;
	for (int i = 0; i < 2; i++) {
		Ring__TestResult *t = &x->side[i];

		ring__test_result__init(t);
		t->error = "late";
		t->n_streams = 1;
		t->streams = x->streamp;
		t->n_lat = 2;
		t->lat = x->latp;
		t->endpoint = &x->endpoint;
	}
	x->report.a_side = &x->side[0];
	x->report.b_side = &x->side[1];
}

/* Each test that renders replies gets its own, freed by replies_teardown. */
static int replies_setup(void **state)
{
	struct replies *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	replies_init(x);
	*state = x;
	return 0;
}

static int replies_teardown(void **state)
{
	free(*state);
	return 0;
}

enum reply_kind {
	REPLY_STATUS,
	REPLY_STATUS_VERBOSE,
	REPLY_INVENTORY,
	REPLY_RANKS,
	REPLY_TEST,
};

/* Render one reply in fmt into a string (caller frees); no member of it
 * may have been refused as a duplicate key. */
static char *render_reply(const struct replies *x, enum reply_kind kind,
			  enum writer_format fmt)
{
	struct testwriter t;
	struct writer *w = testwriter_open(&t, fmt);

	switch (kind) {
	case REPLY_STATUS:
	case REPLY_STATUS_VERBOSE:
		render_status(w, &x->status, kind == REPLY_STATUS_VERBOSE);
		break;
	case REPLY_INVENTORY:
		render_inventory(w, &x->inv_reply);
		break;
	case REPLY_RANKS:
		ranks_render(w, &x->top);
		break;
	case REPLY_TEST:
		report_render(w, &x->report);
		break;
	}
	if (writer_duplicates(w))
		fail_msg("reply %d in format %d: %zu duplicate keys", kind, fmt,
			 writer_duplicates(w));
	return testwriter_close(&t);
}

/* Each key=value line's key appears once. */
static void assert_keys_unique(const char *kv)
{
	const char *line = kv;

	for (; *line; line = strchr(line, '\n') + 1) {
		const char *eq = strchr(line, '=');
		const char *next;

		assert_non_null(eq);
		assert_non_null(strchr(line, '\n'));
		for (next = strchr(line, '\n') + 1; *next;
		     next = strchr(next, '\n') + 1)
			if (!strncmp(next, line, (size_t)(eq - line + 1)))
				fail_msg("key %.*s twice", (int)(eq - line),
					 line);
	}
}

static void test_replies_unique_keys(void **state)
{
	static const Ring__TestKind kinds[] = {
		RING__TEST_KIND__TEST_TCP_BW,
		RING__TEST_KIND__TEST_TCP_LAT,
		RING__TEST_KIND__TEST_RDMA_BW,
		RING__TEST_KIND__TEST_RDMA_LAT,
	};
	struct replies *x = *state;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		x->params.kind = kinds[k];
		x->params.rdma = k >= 2 ? &x->rdma : NULL;
		x->rdma.size = k == 2 ? 0 : 65536; /* "agent default" */
		for (int fmt = WRITER_PLAIN; fmt <= WRITER_JSON; fmt++) {
			char *out = render_reply(x, REPLY_TEST, fmt);

			if (fmt == WRITER_KEYVALUE)
				assert_keys_unique(out);
			/* No number's key holds a string in JSON. */
			if (fmt == WRITER_JSON)
				assert_null(strstr(out, "agent default"));
			free(out);
		}
	}
	for (int kind = REPLY_STATUS; kind <= REPLY_RANKS; kind++) {
		for (int fmt = WRITER_PLAIN; fmt <= WRITER_JSON; fmt++) {
			char *out = render_reply(x, kind, fmt);

			if (fmt == WRITER_KEYVALUE)
				assert_keys_unique(out);
			free(out);
		}
	}
}

/* The inventory says where each memory figure comes from, and lists the
 * RDMA devices under one key. */
static void test_inventory_keys(void **state)
{
	struct replies *x = *state;
	char *out;

	out = render_reply(x, REPLY_INVENTORY, WRITER_KEYVALUE);
	assert_has(out,
		   (const char *const[]){
			   "\nmem_available_kib_heartbeat=524288\n",
			   "\nmemory.available_kib=262144\n",
			   "\nrdma_devices.mlx5_0.name=mlx5_0\n",
			   "\nrdma_devices.mlx5_0.ports.1.gids.3.index=3\n",
			   "\ninterfaces.eth1.ipv4.0.address=",
			   NULL,
		   });
	assert_lacks(out, (const char *const[]){"\nrdma_devices=", NULL});
	free(out);
	/* Without an inventory the count is all there is. */
	x->inv_reply.inventory = NULL;
	out = render_reply(x, REPLY_INVENTORY, WRITER_KEYVALUE);
	assert_non_null(strstr(out, "\nrdma_devices=1\n"));
	free(out);
}

/* Latencies: objects in the machine formats, "SIZE B:P50" in the table;
 * an RDMA figure not measured is null in JSON. */
static void test_edge_numbers(void **state)
{
	struct replies *x = *state;
	char *out;

	out = render_reply(x, REPLY_STATUS, WRITER_JSON);
	assert_has(out, (const char *const[]){
				"\"lat_p50_us_measured\": [\n"
				"          {\n"
				"            \"size\": 64,\n"
				"            \"p50_us\": 8.6\n"
				"          },\n"
				"          {\n"
				"            \"size\": 4096,\n"
				"            \"p50_us\": 12.25\n",
				"\"rdma_read_gbps_b_reads_a_measured\": null",
				"\"pct_of_nominal_computed\": null",
				"\"pct_of_nominal_computed\": 15,",
				"\"a_interface\": \"eth1\"",
				NULL,
			});
	assert_lacks(out,
		     (const char *const[]){"B:", "_measured\": \"\"", NULL});
	free(out);
	/* keyvalue names edges and ladder steps; the second edge of the same
	 * name gets its index. */
	out = render_reply(x, REPLY_STATUS, WRITER_KEYVALUE);
	assert_has(out, (const char *const[]){
				"\ntopology.edges.n1-n2.rdma_write_lat_p50_"
				"us_measured.4096.p50_us=12.2",
				"\ntopology.edges.#1.rdma_write_gbps_a_to_"
				"b_measured=\n",
				"\nnodes.n1.state=up\n",
				"\nnodes.n2.state=down\n",
				NULL,
			});
	free(out);
	out = render_reply(x, REPLY_STATUS_VERBOSE, WRITER_PLAIN);
	/* Too wide for a table in 100 columns: a record per edge. */
	assert_has(out,
		   (const char *const[]){
			   "\n      lat_p50_us_measured: 64B:8.6, 4096B:12.2\n",
			   NULL});
	/* The parts of "ports" are no column of the table. */
	assert_lacks(out, (const char *const[]){"  A INTERFACE  ", NULL});
	free(out);
}

/* Default plain status: edges in ring order, one row per diagonal pair
 * (a path on any of its addresses shows), prose wrapped, every line within
 * 100 columns; -v keeps every figure. */
/* Findings alike but for their node (subject fields, not the English)
 * are said once in plain, in their order; JSON keeps one each. */
static void test_findings_grouped(void **state)
{
	static const char *const nodes[] = {"n1", "n2", "n4", "n3"};
	struct replies *x = *state;
	Ring__Finding f[6], *fp[6];
	char text[4][80];
	char *out;

	for (int i = 0; i < 6; i++) {
		ring__finding__init(&f[i]);
		f[i].code = "unaddressed_port";
		f[i].level = "info";
		fp[i] = &f[i];
	}
	for (int i = 0; i < 4; i++) {
		snprintf(text[i], sizeof(text[i]),
			 "%s eth3 has carrier but no address", nodes[i]);
		f[i].text = text[i];
		f[i].node = (char *)nodes[i];
		f[i].interface = "eth3";
		f[i].gist = "carrier but no address";
	}
	/* Another interface: a group of its own; no subject: as it is. */
	f[4].text = "n2 eth4 has carrier but no address";
	f[4].node = "n2";
	f[4].interface = "eth4";
	f[4].gist = "carrier but no address";
	f[5].code = "uniform_ceiling";
	f[5].level = "warn";
	f[5].text = "every edge tops out at 48%";
	x->top.n_findings = 6;
	x->top.findings = fp;
	out = render_reply(x, REPLY_STATUS, WRITER_PLAIN);
	assert_has(out, (const char *const[]){
				"    - info: n1, n2, n4, n3 eth3: carrier but "
				"no address\n\n"
				"    - info: n2 eth4 has carrier but no "
				"address\n\n"
				"    - warn: every edge tops out at 48%\n",
				NULL});
	assert_lacks(out, (const char *const[]){"n1 eth3 has", NULL});
	free(out);
	out = render_reply(x, REPLY_STATUS_VERBOSE, WRITER_PLAIN);
	assert_has(out, (const char *const[]){
				"  info   n1, n2, n4, n3 eth3: carrier but no "
				"address\n",
				NULL});
	free(out);
	out = render_reply(x, REPLY_STATUS, WRITER_JSON);
	assert_has(out, (const char *const[]){
				"\"finding\": \"n1 eth3 has carrier but no "
				"address\"",
				"\"finding\": \"n3 eth3 has carrier but no "
				"address\"",
				"\"node\": \"n4\",\n",
				"\"interface\": \"eth3\"", NULL});
	free(out);
	x->top.n_findings = 1;
	x->top.findings = x->findingp;
}

static void test_status_brief(void **state)
{
	static const char *const ring[] = {"n1", "n2", "n4", "n3"};
	/* Listed out of ring order: the view walks n1 n2 n4 n3 (n1). */
	static const char *const ends[][2] = {
		{"n1", "n3"}, {"n3", "n4"}, {"n1", "n2"}, {"n2", "n4"}};
	struct replies *x = *state;
	Ring__Edge edge[4];
	Ring__Edge *edgep[4];
	Ring__DiagonalCheck diag[3];
	Ring__DiagonalCheck *diagp[3];
	char *out, *v;
	const char *line, *p;

	x->top.kind = "ring";
	x->top.line_gap = "";
	x->top.n_order = 4;
	x->top.order = (char **)ring;
	for (int i = 0; i < 4; i++) {
		edge[i] = *x->edgep[0];
		edge[i].a = (char *)ends[i][0];
		edge[i].b = (char *)ends[i][1];
		edgep[i] = &edge[i];
	}
	x->top.n_edges = 4;
	x->top.edges = edgep;
	for (int i = 0; i < 3; i++) {
		ring__diagonal_check__init(&diag[i]);
		diag[i].a = i < 2 ? "n1" : "n2";
		diag[i].b = i < 2 ? "n4" : "n3";
		diag[i].b_address = i ? "10.0.1.2" : "10.0.0.2";
		diag[i].path = i == 1;
		diag[i].verdict = i == 1 ? "UNEXPECTED path (ping answered)"
					 : "no data-plane path, as expected "
					   "(route gateway via mgmt0)";
		/* The outcome and the why apart, as the survey sets them. */
		diag[i].outcome = i == 1 ? "UNEXPECTED path"
					 : "no data-plane path, as expected";
		diag[i].reason =
			i == 1 ? "ping answered" : "route gateway via mgmt0";
		diagp[i] = &diag[i];
	}
	x->top.n_diagonals = 3;
	x->top.diagonals = diagp;
	x->finding.text =
		"every edge tops out at 48% of its 2 Gbps nominal (1.0 Gbps "
		"median, spread 0%): a uniform ceiling - a link-layer or host "
		"limit, not a bad cable; check the host link (PCIe)";
	out = render_reply(x, REPLY_STATUS, WRITER_PLAIN);
	for (line = out; *line; line = strchr(line, '\n') + 1)
		if ((size_t)(strchr(line, '\n') - line) > 100)
			fail_msg("wider than 100 columns: %.*s",
				 (int)(strchr(line, '\n') - line), line);
	p = strstr(out, "\n    n1-n2  ");
	assert_non_null(p);
	p = strstr(p, "\n    n2-n4  ");
	assert_non_null(p);
	p = strstr(p, "\n    n3-n4  ");
	assert_non_null(p);
	assert_non_null(strstr(p, "\n    n1-n3  "));
	assert_has(out,
		   (const char *const[]){
			   "    PAIR   ADDRESSES  PATH  VERDICT\n"
			   "    n1-n4  2          yes   UNEXPECTED path\n"
			   "    n2-n3  1          no    no data-plane "
			   "path, as expected\n",
			   "    - warn: every edge tops out at 48% ",
			   "  8.6@64B  ",
			   /* No MGMT ADDRESS column: no node has one. */
			   "\n  n1    up     no        5s",
			   "\ndown:\n  - n2: heartbeat timeout\n",
			   "  not_in_ring:\n    - not_cabled_into_ring: s1 "
			   "is not cabled into the ring: its cables reach "
			   "only s2",
			   NULL,
		   });
	assert_lacks(out, (const char *const[]){"64B:8.6", NULL});
	/* Verbose: the full ladders and every diagonal address, still
	 * within 100 columns (the edges as records). */
	v = render_reply(x, REPLY_STATUS_VERBOSE, WRITER_PLAIN);
	for (line = v; *line; line = strchr(line, '\n') + 1)
		if ((size_t)(strchr(line, '\n') - line) > 100)
			fail_msg("-v wider than 100 columns: %.*s",
				 (int)(strchr(line, '\n') - line), line);
	assert_has(v, (const char *const[]){
			      "lat_p50_us_measured: 64B:8.6, 4096B:12.2\n",
			      "10.0.1.2",
			      "(route gateway via mgmt0)",
			      NULL,
		      });
	free(v);
	free(out);
	/* The machine formats ignore -v: the same document either way. */
	out = render_reply(x, REPLY_STATUS, WRITER_JSON);
	v = render_reply(x, REPLY_STATUS_VERBOSE, WRITER_JSON);
	assert_string_equal(out, v);
	assert_true(strstr(out, "\"n1-n2\"") < strstr(out, "\"n2-n4\""));
	/* The stray as data: its name, reason code and neighbours. */
	assert_non_null(strstr(out, "\"strays\": [\n      {\n        "
				    "\"node\": \"s1\",\n        \"reason\": "
				    "\"not_cabled_into_ring\",\n        "
				    "\"neighbours\": [\n          \"s2\"\n"));
	free(v);
	free(out);
	out = render_reply(x, REPLY_STATUS, WRITER_KEYVALUE);
	assert_keys_unique(out);
	assert_non_null(strstr(out, "\ntopology.diagonals.n1-n4@10_0_1_2.path="
				    "yes\n"));
	free(out);
}

/* The path MTU the agents set, said with its reason; NCCL's TC and SL. */
static void test_report_path_mtu(void **state)
{
	Ring__TestReport rep = RING__TEST_REPORT__INIT;
	Ring__TestParams p = RING__TEST_PARAMS__INIT;
	Ring__RdmaParams r = RING__RDMA_PARAMS__INIT;
	Ring__TestResult side[2];
	Ring__RdmaEndpoint ep[2];
	static const unsigned mtu[2] = {4096, 1024};
	static const struct {
		unsigned asked;
		const char *want;
	} cases[] = {
		{0, "path_mtu=1024\npath_mtu_why=the lesser of both ports' "
		    "active MTU (n1 4096, n2 1024)\n"},
		{2048, "path_mtu=1024\npath_mtu_why=the lesser of both ports' "
		       "active MTU (n1 4096, n2 1024); --mtu is not below "
		       "it\n"},
		{512, "path_mtu=512\npath_mtu_why=--mtu 512, below both "
		      "ports' active MTU (n1 4096, n2 1024)\n"},
	};
	struct testwriter t;
	struct writer *w;
	char *out;

	(void)state;
	p.kind = RING__TEST_KIND__TEST_RDMA_BW;
	p.rdma = &r;
	r.traffic_class = 106;
	r.service_level = 3;
	rep.a = "n1";
	rep.b = "n2";
	rep.params = &p;
	for (int i = 0; i < 2; i++) {
		ring__test_result__init(&side[i]);
		ring__rdma_endpoint__init(&ep[i]);
		ep[i].mtu = mtu[i];
		side[i].endpoint = &ep[i];
	}
	rep.a_side = &side[0];
	rep.b_side = &side[1];
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		r.mtu = cases[i].asked;
		w = testwriter_open(&t, WRITER_KEYVALUE);
		report_render(w, &rep);
		out = testwriter_close(&t);
		if (!strstr(out, cases[i].want))
			fail_msg("--mtu %u: no '%s' in:\n%s", cases[i].asked,
				 cases[i].want, out);
		assert_non_null(strstr(out, "traffic_class=106\n"
					    "service_level=3\n"));
		free(out);
	}
	/* An endpoint never came: not guessed. */
	rep.b_side = NULL;
	w = testwriter_open(&t, WRITER_KEYVALUE);
	report_render(w, &rep);
	out = testwriter_close(&t);
	assert_null(strstr(out, "path_mtu=1024"));
	assert_non_null(strstr(out, "path_mtu"));
	free(out);
}

static char *render_alert_list(Ring__Alert **v, size_t n,
			       enum writer_format fmt, int brief)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct writer *w;

	assert_non_null(fp);
	w = writer_new(fp, fmt);
	render_alerts(w, "alerts", v, n, brief);
	writer_finish(w);
	fclose(fp);
	return buf;
}

/* alerts --all: a firing, a clearing and a resolved episode; plain fits
 * 100 columns and says clearing and resolved; a resolved one shows what
 * cleared it; the machine formats carry every time in ms and both
 * messages; status' brief list marks the clearing one. */
static void test_alerts_states(void **state)
{
	Ring__Alert a[3], *v[3];
	char *out;
	const char *line;

	(void)state;
	for (int i = 0; i < 3; i++) {
		ring__alert__init(&a[i]);
		a[i].rule = "cable_down";
		a[i].severity = RING__SEVERITY__SEVERITY_CRITICAL;
		a[i].subject = "n1-n2";
		a[i].edge = "n1-n2";
		a[i].message = "cable n1-n2 is down: n1 eth1: no carrier, n2 "
			       "eth1: no carrier; the ring is now a line: the "
			       "cable n1-n2 is down";
		a[i].first_seen_ms = 1764800000000ULL + 60000 * i;
		a[i].last_seen_ms = a[i].first_seen_ms + 5000;
		v[i] = &a[i];
	}
	a[0].firing = 1;
	a[1].firing = 1;
	a[1].clearing = 1;
	a[1].cleared_ms = a[1].first_seen_ms + 6000;
	a[2].cleared_ms = a[2].first_seen_ms + 6000;
	a[2].resolved_ms = a[2].cleared_ms + 30000;
	a[2].resolved_message = "cable n1-n2 is up again after 6 s down";
	out = render_alert_list(v, 3, WRITER_PLAIN, 0);
	for (line = out; *line; line = strchr(line, '\n') + 1)
		if ((size_t)(strchr(line, '\n') - line) > 100)
			fail_msg("wider than 100 columns: %.*s",
				 (int)(strchr(line, '\n') - line), line);
	assert_has(out, (const char *const[]){
				"  cable_down  critical  clearing  n1-n2    "
				"2025-12-03T22:14:20Z  -\n",
				"  cable_down  critical  resolved  n1-n2    "
				"2025-12-03T22:15:20Z  2025-12-03T22:15:56Z\n",
				"is up again after 6 s down (cleared "
				"2025-12-03T22:15:26Z)",
				NULL});
	free(out);
	out = render_alert_list(v, 3, WRITER_JSON, 0);
	assert_has(out,
		   (const char *const[]){
			   "\"state\": \"clearing\"",
			   "\"resolved_ms\": 1764800156000",
			   "\"cleared_ms\": 1764800126000",
			   "\"fired_message\": \"cable n1-n2 is down", NULL});
	free(out);
	out = render_alert_list(v, 3, WRITER_KEYVALUE, 0);
	assert_keys_unique(out);
	free(out);
	out = render_alert_list(v, 2, WRITER_PLAIN, 1);
	assert_has(out, (const char *const[]){"critical cable_down (clearing)",
					      NULL});
	free(out);
}

/* An argument that is no option is called unexpected, not "needs a
 * value". */
static void test_unexpected(void **state)
{
	char err[512];
	struct testargs t;
	struct allreduce_cli *ar = calloc(1, sizeof(*ar));
	char *bw[] = {"bw", "n1", "n2", "extra"};
	char *arv[] = {"allreduce", "extra"};

	(void)state;
	assert_non_null(ar);
	assert_int_equal(testargs_parse(4, bw, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'extra' is an unexpected argument"));
	assert_int_equal(allreduce_cli_parse(2, arv, ar, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'extra' is an unexpected argument"));
	free(ar);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unexpected),
		cmocka_unit_test(test_safe_printed),
		cmocka_unit_test(test_empty_optional),
		cmocka_unit_test(test_env_injection_refused),
		cmocka_unit_test(test_hostile_values),
		cmocka_unit_test(test_message_bounded),
		cmocka_unit_test(test_parse_rdma_bw),
		cmocka_unit_test(test_parse_rdma_errors),
		cmocka_unit_test(test_parse_rdma_lat),
		cmocka_unit_test(test_parse_tcp),
		cmocka_unit_test(test_report_path_mtu),
		cmocka_unit_test(test_alerts_states),
		cmocka_unit_test_setup_teardown(test_replies_unique_keys,
						replies_setup,
						replies_teardown),
		cmocka_unit_test_setup_teardown(
			test_inventory_keys, replies_setup, replies_teardown),
		cmocka_unit_test_setup_teardown(
			test_edge_numbers, replies_setup, replies_teardown),
		cmocka_unit_test_setup_teardown(
			test_status_brief, replies_setup, replies_teardown),
		cmocka_unit_test_setup_teardown(
			test_findings_grouped, replies_setup, replies_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
