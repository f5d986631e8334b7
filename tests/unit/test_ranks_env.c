#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl/ranks.h"
#include "testgb10.h"
#include "testwriter.h"

/* ringctl ranks -f env on the reference cluster's hardware: four GB10
 * nodes in the physical order 1-2-4-3, each cable carried by two
 * function pairs (twins), so four functions per node face a neighbour. */

#define NR TESTGB10_N

static char *env_text(const struct testgb10 *tp, int *rc)
{
	struct testwriter t;

	*rc = ranks_text(testwriter_stream(&t), &tp->t, "env");
	return testwriter_close(&t);
}

/* The block of one rank, from its "# node (rank N)" line to the blank
 * line that ends it. */
static char *rank_block(const char *out, const char *head)
{
	const char *p = strstr(out, head), *e;
	char *s;

	assert_non_null(p);
	e = strstr(p, "\n\n");
	assert_non_null(e);
	s = strndup(p, (size_t)(e - p) + 2);
	assert_non_null(s);
	return s;
}

static const char twin_rank1[] =
	"# n2 (rank 1)\n"
	"NODE_RANK=1\n"
	"MASTER_ADDR=192.168.1.1\n"
	"NCCL_SOCKET_IFNAME==enP7s7\n"
	"GLOO_SOCKET_IFNAME=enP7s7\n"
	"UCX_NET_DEVICES=enP7s7\n"
	"OMPI_MCA_btl_tcp_if_include=enP7s7\n"
	"OMPI_MCA_oob_tcp_if_include=enP7s7\n"
	"NCCL_IB_HCA==rocep1s0f1:1,roceP2p1s0f1:1,rocep1s0f0:1,"
	"roceP2p1s0f0:1\n"
	"# NCCL_IB_GID_INDEX left to NCCL (>= 2.21 picks each function's "
	"RoCE v2 IPv4 entry)\n"
	"# NCCL >= 2.30.7: connect over the function on the peer's subnet "
	"(each\n"
	"# cable is its own subnet). Older NCCL ignores these and can pick a "
	"function\n"
	"# facing the other neighbour: ibv_modify_qp fails with 110.\n"
	"NCCL_IB_SUBNET_AWARE_ROUTING=1\n"
	"NCCL_IB_SUBNET_PREFIX_LEN=30\n"
	"# NCCL devices: NCCL fuses each PCI device's functions by itself, "
	"one\n"
	"# facing each neighbour, so no NCCL_NET_FORCE_MERGE is needed "
	"(NCCL_IB_MERGE_NICS\n"
	"# must stay 1):\n"
	"# rocep1s0f1,rocep1s0f0;roceP2p1s0f1,roceP2p1s0f0\n"
	"# a ring channel enters on the function facing the previous rank "
	"and\n"
	"# leaves on the one facing the next: different NICs (NCCL >= "
	"2.5.6)\n"
	"NCCL_CROSS_NIC=1\n"
	"# the built-in IB transport, where the subnet-aware routing is, "
	"not an\n"
	"# external network plugin (\"none\": NCCL >= 2.28.3)\n"
	"NCCL_NET_PLUGIN=none\n"
	"# RDMA or nothing: no silent fallback to sockets (NCCL >= 2.10)\n"
	"NCCL_NET=IB\n"
	"# switchless ring: only ring collectives between adjacent ranks are "
	"safe.\n"
	"# Tree algorithms, all-to-all (MoE expert parallel) and send/recv "
	"between\n"
	"# non-adjacent ranks need diagonal paths and will hang; put "
	"pipeline stages\n"
	"# on adjacent ranks.\n"
	"NCCL_ALGO=Ring\n"
	"NCCL_MIN_NCHANNELS=4\n"
	"NCCL_MAX_NCHANNELS=4\n\n";

/* Twins: all four functions, exact names with their port, one agreed
 * GID index, the routing a switchless ring needs. */
static void test_env_twins(void **state)
{
	struct testgb10 tp;
	char *out, *blk;
	int rc;

	(void)state;
	testgb10_init(&tp);
	out = env_text(&tp, &rc);
	assert_int_equal(rc, 0);
	blk = rank_block(out, "# n2 (rank 1)\n");
	assert_string_equal(blk, twin_rank1);
	free(blk);
	/* Every rank gets the same shape. */
	for (const char *p = out; (p = strstr(p, "NCCL_IB_HCA==")); p++)
		rc++;
	assert_int_equal(rc, NR);
	assert_null(strstr(out, "mgmt0"));
	free(out);
}

/* NCCL_IB_GID_INDEX is left to NCCL unless the GID tables show its own
 * pick is not the measured entry; then set, with the reason. */
static void test_env_gid(void **state)
{
	struct testgb10 tp;
	char *out, *blk;
	int rc;

	(void)state;
	testgb10_init(&tp);
	out = env_text(&tp, &rc);
	assert_int_equal(rc, 0);
	assert_null(strstr(out, "NCCL_IB_GID_INDEX="));
	free(out);
	tp.r[2].nccl_gid_index = 3;
	tp.r[2].nccl_gid_note = "on roceP2p1s0f1:1 NCCL's default picks GID "
				"index 5, not the index 3 the survey's RDMA "
				"tests used";
	out = env_text(&tp, &rc);
	assert_int_equal(rc, 0);
	blk = rank_block(out, "# n4 (rank 2)\n");
	assert_non_null(
		strstr(blk, "NCCL_IB_HCA==rocep1s0f1:1,roceP2p1s0f1:1,"
			    "rocep1s0f0:1,roceP2p1s0f0:1\n"
			    "# on roceP2p1s0f1:1 NCCL's default picks GID "
			    "index 5, not the index 3 the survey's RDMA tests "
			    "used\nNCCL_IB_GID_INDEX=3\n# NCCL >= 2.30.7"));
	free(blk);
	/* The others leave it to NCCL. */
	blk = rank_block(out, "# n3 (rank 3)\n");
	assert_null(strstr(blk, "NCCL_IB_GID_INDEX="));
	free(blk);
	/* A note from an agent's names cannot start a line of its own. */
	tp.r[2].nccl_gid_note = "x\nLD_PRELOAD=/a";
	free(out);
	out = env_text(&tp, &rc);
	assert_int_equal(rc, 0);
	assert_null(strstr(out, "\nLD_PRELOAD"));
	assert_non_null(strstr(out, "# x?LD_PRELOAD=/a\n"));
	free(out);
}

/* Pairs that are not one PCI device each: NCCL_NET_FORCE_MERGE; a
 * function without a partner is left out of NCCL_IB_HCA. */
static void test_env_force_merge(void **state)
{
	struct testgb10 tp;
	char *out, *blk;
	char *groups[1] = {"roceP2p1s0f1,rocep1s0f0"};
	char *unpaired[1] = {"rocep1s0f1:1"};
	int rc;

	(void)state;
	testgb10_init(&tp);
	tp.r[1].nic_groups = groups;
	tp.r[1].n_nic_groups = 1;
	tp.r[1].nic_groups_automatic = 0;
	tp.r[1].nic_unpaired = unpaired;
	tp.r[1].n_nic_unpaired = 1;
	tp.r[1].n_hcas = 3; /* rocep1s0f1:1, roceP2p1s0f1:1, rocep1s0f0:1 */
	out = env_text(&tp, &rc);
	assert_int_equal(rc, 0);
	blk = rank_block(out, "# n2 (rank 1)\n");
	assert_non_null(
		strstr(blk, "# left out of NCCL_IB_HCA: rocep1s0f1:1\n"));
	assert_non_null(
		strstr(blk, "\nNCCL_IB_HCA==roceP2p1s0f1:1,rocep1s0f0:1\n"));
	assert_non_null(strstr(blk, "# NCCL devices: each pairs a function "
				    "facing n4 with one facing n1, so\n"
				    "# its listener names both cables' subnets "
				    "(NCCL >= 2.24.3)\n"
				    "NCCL_NET_FORCE_MERGE=roceP2p1s0f1,"
				    "rocep1s0f0\n"));
	free(blk);
	blk = rank_block(out, "# n1 (rank 0)\n");
	assert_null(strstr(blk, "NCCL_NET_FORCE_MERGE="));
	free(blk);
	free(out);
}

/* No prefix tells the neighbours apart: routing still on, the prefix
 * left out with the reason. */
static void test_env_no_prefix(void **state)
{
	struct testgb10 tp;
	char *out;
	int rc;

	(void)state;
	testgb10_init(&tp);
	tp.r[0].subnet_prefix_len = 0;
	tp.r[0].subnet_note = "rocep1s0f1:1 (facing n2) and rocep1s0f0:1 "
			      "(facing n3) share a /16: no prefix length "
			      "tells the neighbours apart";
	out = env_text(&tp, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(
		out, "NCCL_IB_SUBNET_AWARE_ROUTING=1\n"
		     "# NCCL_IB_SUBNET_PREFIX_LEN not set (NCCL assumes /24): "
		     "rocep1s0f1:1 (facing n2) and rocep1s0f0:1 (facing n3) "
		     "share a /16: no prefix length tells the neighbours "
		     "apart\n# NCCL devices"));
	free(out);
}

/* An unknown management interface is an error, not an invented name. */
static void test_env_unknown_mgmt(void **state)
{
	struct testgb10 tp;
	char err[512];
	char *out;
	int rc;

	(void)state;
	testgb10_init(&tp);
	tp.r[3].mgmt_interface = "";
	assert_int_equal(ranks_check(&tp.t, "env", err, sizeof(err)), -1);
	assert_string_equal(
		err, "node 'n3' (rank 3): its management interface is unknown "
		     "(its agent reported none: set mgmt_interface in its "
		     "configuration); refusing to print env, whose "
		     "NCCL_SOCKET_IFNAME and launcher socket variables need "
		     "it");
	out = env_text(&tp, &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(out, "");
	free(out);
	/* The other formats do not name it. */
	assert_int_equal(ranks_check(&tp.t, "hostfile", err, sizeof(err)), 0);
	assert_int_equal(ranks_check(&tp.t, "torchrun", err, sizeof(err)), 0);
}

/* A hostile HCA name is refused like any other agent-made value. */
static void test_env_hca_refused(void **state)
{
	struct testgb10 tp;
	char err[512];

	(void)state;
	testgb10_init(&tp);
	tp.hcas[1][2] = "mlx5_0\nX=1";
	assert_int_equal(ranks_check(&tp.t, "env", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "node 'n2' (rank 1): hcas 'mlx5_0\\x0aX=1' "
				    "has characters outside"));
}

/* Two nodes (both cables to one peer) or a ring of three: every pair is
 * adjacent; no routing variables needed for a pair, no warning. */
static void test_env_small(void **state)
{
	struct testgb10 tp;
	char *out;
	int rc;

	(void)state;
	testgb10_init(&tp);
	tp.t.n_ranks = 2;
	tp.t.kind = "pair";
	for (int i = 0; i < 2; i++)
		tp.r[i].next_node = tp.r[i].prev_node =
			(char *)tp.r[1 - i].node;
	out = env_text(&tp, &rc);
	assert_int_equal(rc, 0);
	assert_null(strstr(out, "switchless"));
	assert_null(strstr(out, "NCCL_IB_MERGE_NICS="));
	assert_null(strstr(out, "SUBNET_AWARE"));
	assert_null(strstr(out, "FORCE_MERGE="));
	assert_non_null(strstr(out, "NCCL_NET=IB\n# a pair, not a ring"));
	free(out);
	testgb10_init(&tp);
	tp.t.n_ranks = 3;
	out = env_text(&tp, &rc);
	assert_int_equal(rc, 0);
	assert_null(strstr(out, "switchless"));
	assert_non_null(strstr(out, "NCCL_IB_SUBNET_AWARE_ROUTING=1\n"));
	assert_null(strstr(out, "NCCL_IB_MERGE_NICS="));
	free(out);
}

/* The plain table ends with the warning where ranks can be apart. */
static void test_plain_warning(void **state)
{
	struct testgb10 tp;
	struct testwriter t;
	struct writer *w;
	char *out;

	(void)state;
	testgb10_init(&tp);
	w = writer_new(testwriter_stream(&t), WRITER_PLAIN);
	ranks_render(w, &tp.t);
	writer_finish(w);
	out = testwriter_close(&t);
	/* Plain wraps it: the start, and the end's words. */
	assert_non_null(strstr(out, "\nwarning: switchless ring: only ring "
				    "collectives between adjacent ranks are "
				    "safe;"));
	assert_non_null(strstr(out, "pipeline stages on adjacent ranks\n"));
	assert_non_null(strstr(out, "rocep1s0f1:1,roceP2p1s0f1:1"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_twins),
		cmocka_unit_test(test_env_gid),
		cmocka_unit_test(test_env_force_merge),
		cmocka_unit_test(test_env_no_prefix),
		cmocka_unit_test(test_env_unknown_mgmt),
		cmocka_unit_test(test_env_hca_refused),
		cmocka_unit_test(test_env_small),
		cmocka_unit_test(test_plain_warning),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
