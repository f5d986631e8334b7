#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

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

/* ctl_ranks_text into a string (caller frees); *rc its return. */
static char *text(const struct topo *tp, const char *fmt, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*rc = ctl_ranks_text(f, &tp->t, fmt);
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
			ctl_ranks_check(&tp.t, formats[i], err, sizeof(err)),
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
	assert_int_equal(ctl_ranks_check(&tp.t, "env", err, sizeof(err)), 0);
	out = text(&tp, "env", &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "NODE_RANK=1\nMASTER_ADDR=10.0.0.1\n"
				    "NCCL_SOCKET_IFNAME=mgmt0\n# no RDMA"));
	free(out);
	/* A host with no name or address would silently shift the list. */
	tp.r[1].node = "";
	for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++)
		assert_int_equal(
			ctl_ranks_check(&tp.t, formats[i], err, sizeof(err)),
			-1);
	topo_init(&tp);
	tp.r[2].mgmt_address = "";
	assert_int_equal(ctl_ranks_check(&tp.t, "hostfile", err, sizeof(err)),
			 -1);
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
	assert_int_equal(ctl_ranks_check(&tp.t, "env", err, sizeof(err)), -1);
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
	assert_int_equal(ctl_ranks_check(&tp.t, "json", err, sizeof(err)), 0);
	assert_int_equal(ctl_ranks_check(&tp.t, "plain", err, sizeof(err)), 0);
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
			assert_int_equal(ctl_ranks_check(&tp.t, formats[i], err,
							 sizeof(err)),
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
			assert_int_equal(ctl_ranks_check(&tp.t, formats[i], err,
							 sizeof(err)),
					 -1);
		assert_non_null(
			strstr(err, "node 'n1' (rank 0): mgmt_address"));
		/* Another rank's address only reaches hostfile and rankfile. */
		topo_init(&tp);
		tp.r[1].mgmt_address = (char *)bad[b];
		assert_int_equal(
			ctl_ranks_check(&tp.t, "hostfile", err, sizeof(err)),
			-1);
		assert_int_equal(
			ctl_ranks_check(&tp.t, "rankfile", err, sizeof(err)),
			-1);
		assert_int_equal(
			ctl_ranks_check(&tp.t, "torchrun", err, sizeof(err)),
			0);
		assert_int_equal(
			ctl_ranks_check(&tp.t, "env", err, sizeof(err)), 0);
		/* RDMA device names reach NCCL_IB_HCA. */
		topo_init(&tp);
		tp.r[2].prev_rdma = (char *)bad[b];
		assert_int_equal(
			ctl_ranks_check(&tp.t, "env", err, sizeof(err)), -1);
		assert_non_null(strstr(err, "prev_rdma '"));
		assert_int_equal(
			ctl_ranks_check(&tp.t, "hostfile", err, sizeof(err)),
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
	assert_int_equal(ctl_ranks_check(&tp.t, "env", err, sizeof(err)), -1);
	/* Node and value: 40 bytes each, escaped, and the explanation. */
	assert_true(strlen(err) < 500);
	assert_non_null(strstr(err, "one safe word)"));
	assert_non_null(strstr(err, "\\x0a...' (rank 0)"));
	assert_non_null(strstr(err, "refusing to print env"));
	assert_plain_ascii(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_safe_printed),
		cmocka_unit_test(test_empty_optional),
		cmocka_unit_test(test_env_injection_refused),
		cmocka_unit_test(test_hostile_values),
		cmocka_unit_test(test_message_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
