/* The coordinator's RDMA rules: sizes, which port can run RDMA, GID
 * agreement, deadlines; ringctl's test arguments; the survey_method
 * directives; agent capabilities in the node table. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coordinator/coord_conf.h"
#include "coordinator/nodes.h"
#include "coordinator/rdmatest.h"
#include "coordinator/rdma_rules.h"

/* An inventory: eth1 with an active rxe port, eth2 with a DOWN one, eth3
 * without RDMA, mgmt0 (management) with an active one. */
struct inv_fixture {
	Ring__Inventory inv;
	Ring__NetInterface ifs[4], *ifp[4];
	Ring__RdmaDevice devs[2], *devp[2];
	Ring__RdmaPort ports[3], *portp[3];
};

static void inv_build(struct inv_fixture *f)
{
	static const char *const names[] = {"mgmt0", "eth1", "eth2", "eth3"};

	ring__inventory__init(&f->inv);
	for (int i = 0; i < 4; i++) {
		ring__net_interface__init(&f->ifs[i]);
		f->ifs[i].name = (char *)names[i];
		f->ifp[i] = &f->ifs[i];
	}
	f->ifs[0].management = 1;
	f->inv.interfaces = f->ifp;
	f->inv.n_interfaces = 4;
	for (int i = 0; i < 3; i++) {
		ring__rdma_port__init(&f->ports[i]);
		f->ports[i].port = 1;
		f->portp[i] = &f->ports[i];
	}
	f->ports[0].netdev = "mgmt0";
	f->ports[0].state = "ACTIVE";
	f->ports[1].netdev = "eth1";
	f->ports[1].state = "4: ACTIVE";
	f->ports[2].netdev = "eth2";
	f->ports[2].state = "DOWN";
	ring__rdma_device__init(&f->devs[0]);
	f->devs[0].name = "rxe_m";
	f->devs[0].ports = &f->portp[0];
	f->devs[0].n_ports = 1;
	ring__rdma_device__init(&f->devs[1]);
	f->devs[1].name = "rxe1";
	f->devs[1].ports = &f->portp[1];
	f->devs[1].n_ports = 2;
	f->devp[0] = &f->devs[0];
	f->devp[1] = &f->devs[1];
	f->inv.rdma_devices = f->devp;
	f->inv.n_rdma_devices = 2;
}

static void test_active_port(void **state)
{
	struct inv_fixture f;
	char dev[64], why[160], ifname[16];

	(void)state;
	inv_build(&f);
	assert_int_equal(rdma_rules_port(&f.inv, "eth1", dev, sizeof(dev), why,
					 sizeof(why)),
			 0);
	assert_string_equal(dev, "rxe1");
	assert_int_equal(rdma_rules_port(&f.inv, "eth2", dev, sizeof(dev), why,
					 sizeof(why)),
			 -1);
	assert_string_equal(why, "rxe1 port 1 is DOWN");
	assert_int_equal(rdma_rules_port(&f.inv, "eth3", dev, sizeof(dev), why,
					 sizeof(why)),
			 -1);
	assert_string_equal(why, "no RDMA device");
	f.inv.rdma_error = "no libibverbs devices";
	assert_int_equal(rdma_rules_port(&f.inv, "eth3", dev, sizeof(dev), why,
					 sizeof(why)),
			 -1);
	assert_string_equal(why, "no RDMA device (no libibverbs devices)");
	assert_int_equal(rdma_rules_port(NULL, "eth1", dev, sizeof(dev), why,
					 sizeof(why)),
			 -1);
	assert_string_equal(why, "no inventory yet");

	/* The first data port: never the management interface. */
	assert_int_equal(rdma_rules_first_port(&f.inv, ifname, sizeof(ifname),
					       dev, sizeof(dev)),
			 0);
	assert_string_equal(ifname, "eth1");
	assert_string_equal(dev, "rxe1");
	f.ports[1].state = "DOWN";
	assert_int_equal(rdma_rules_first_port(&f.inv, ifname, sizeof(ifname),
					       dev, sizeof(dev)),
			 -1);
	assert_int_equal(rdma_rules_first_port(NULL, ifname, sizeof(ifname),
					       dev, sizeof(dev)),
			 -1);
}

static void ep_init(Ring__RdmaEndpoint *e, unsigned idx, const char *type,
		    const char *gid, const char *netdev, const char *ipv4,
		    unsigned prefix)
{
	ring__rdma_endpoint__init(e);
	e->gid_index = idx;
	e->gid_type = (char *)type;
	e->gid = (char *)gid;
	e->netdev = (char *)netdev;
	e->ipv4 = (char *)ipv4;
	e->prefix = prefix;
}

/* B's side of a rdma_rules_gid_check case (A is index 1, RoCE v2, 10.9.1.1/24
 * on r1b). */
struct gid_ep {
	unsigned idx;
	const char *type, *gid, *netdev, *ipv4;
	unsigned prefix;
};

static const struct gid_ep
	b_same = {1, "RoCE v2", "::ffff:10.9.1.2", "r2a", "10.9.1.2", 24},
	b_v1 = {0, "RoCE v1", "fe80::1", "r2a", "", 0},
	b_subnet = {3, "RoCE v2", "::ffff:10.9.2.2", "r2a", "10.9.2.2", 24},
	/* Prefixes that differ but contain each other's address. */
	b_wide = {1, "RoCE v2", "::ffff:10.9.1.2", "r2a", "10.9.1.2", 16},
	/* A link-local RoCE v2 GID: no IPv4 to compare. */
	b_no_ipv4 = {0, "RoCE v2", "fe80::2", "r2a", "", 0},
	b_case = {1, "roce V2", "::ffff:10.9.1.2", "r2a", "10.9.1.2", 24},
	b_untyped = {1, "", "", "", "", 0};

#define GID_TYPE_WHY                                                           \
	"GID type mismatch: n1 uses index 1 (RoCE v2 ::ffff:10.9.1.1 on "      \
	"r1b), n2 uses index 0 (RoCE v1 fe80::1 on r2a); choose matching "     \
	"indices with --gid-a/--gid-b"
#define GID_SUBNET_WHY                                                         \
	"GID subnet mismatch: n1 uses index 1 (RoCE v2 ::ffff:10.9.1.1 on "    \
	"r1b, 10.9.1.1/24), n2 uses index 3"

struct gid_case {
	const char *name;
	const struct gid_ep *b;
	int adjacent; /* 1 on a cable, 0 across a diagonal, -1 unknown */
	int rc;
	const char *why_is;		/* the whole message, or NULL */
	const char *why_has, *why_has2; /* parts of it, or NULL */
};

static const struct gid_case gid_cases[] = {
	{"same subnet", &b_same, 1, 0, NULL, NULL, NULL},
	/* A type mismatch is refused between any two nodes. */
	{"type mismatch on a cable", &b_v1, 1, -1, GID_TYPE_WHY, NULL, NULL},
	{"type mismatch across a diagonal", &b_v1, 0, -1, NULL, NULL, NULL},
	/* Different subnets: refused on a cable, run across a diagonal
	 * (where its failure says "not ring neighbours"). */
	{"subnet mismatch on a cable", &b_subnet, 1, -1, NULL, GID_SUBNET_WHY,
	 "--gid-a/--gid-b"},
	{"subnet mismatch across a diagonal", &b_subnet, 0, 0, NULL, NULL,
	 NULL},
	{"subnet mismatch, adjacency unknown", &b_subnet, -1, 0, NULL, NULL,
	 NULL},
	{"prefixes that contain each other", &b_wide, 1, 0, NULL, NULL, NULL},
	{"no IPv4 on B", &b_no_ipv4, 1, 0, NULL, NULL, NULL},
	/* Type case and missing types do not matter. */
	{"type in another case", &b_case, 1, 0, NULL, NULL, NULL},
	{"no type", &b_untyped, 1, 0, NULL, NULL, NULL},
};

static void test_gid_check(void **state)
{
	Ring__RdmaEndpoint a, b;
	char why[512];

	(void)state;
	ep_init(&a, 1, "RoCE v2", "::ffff:10.9.1.1", "r1b", "10.9.1.1", 24);
	for (size_t i = 0; i < sizeof(gid_cases) / sizeof(gid_cases[0]); i++) {
		const struct gid_case *k = &gid_cases[i];
		int rc;

		ep_init(&b, k->b->idx, k->b->type, k->b->gid, k->b->netdev,
			k->b->ipv4, k->b->prefix);
		why[0] = '\0';
		rc = rdma_rules_gid_check("n1", &a, "n2", &b, k->adjacent, why,
					  sizeof(why));
		if (rc != k->rc)
			fail_msg(
				"%s: rdma_rules_gid_check gave %d, want %d (%s)",
				k->name, rc, k->rc, why);
		if (k->why_is && strcmp(why, k->why_is))
			fail_msg("%s: '%s', want '%s'", k->name, why,
				 k->why_is);
		if (k->why_has && !strstr(why, k->why_has))
			fail_msg("%s: '%s' lacks '%s'", k->name, why,
				 k->why_has);
		if (k->why_has2 && !strstr(why, k->why_has2))
			fail_msg("%s: '%s' lacks '%s'", k->name, why,
				 k->why_has2);
	}
}

static int conf_load(struct coord_conf *c, const char *text)
{
	struct cfg_ctx ctx = {.file = "t.conf", .report = NULL};

	coord_conf_defaults(c);
	snprintf(c->name, sizeof(c->name), "coord");
	return coord_conf_load_buffer(c, "t.conf", text, strlen(text), &ctx);
}

static void quiet(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

static void test_conf_survey_method(void **state)
{
	struct coord_conf c;
	struct cfg_ctx ctx = {.report = quiet};
	static const char bad_method[] = "survey_method fast\n";
	static const char bad_qps[] = "survey_rdma_qps 65\n";
	static const char bad_size[] = "survey_rdma_size 0\n";

	(void)state;
	assert_int_equal(conf_load(&c, ""), 0);
	assert_int_equal(c.survey_method, COORD_SURVEY_AUTO);
	assert_int_equal(c.survey_rdma_qps, 4);
	assert_int_equal(c.survey_rdma_size, 1048576);
	assert_string_equal(coord_survey_method_name(c.survey_method), "auto");
	coord_conf_free(&c);
	assert_int_equal(conf_load(&c, "survey_method both\n"
				       "survey_rdma_qps 16\n"
				       "survey_rdma_size 64K\n"),
			 0);
	assert_int_equal(c.survey_method, COORD_SURVEY_BOTH);
	assert_int_equal(c.survey_rdma_qps, 16);
	assert_int_equal(c.survey_rdma_size, 65536);
	coord_conf_free(&c);
	assert_int_equal(conf_load(&c, "survey_method rdma\n"), 0);
	assert_int_equal(c.survey_method, COORD_SURVEY_RDMA);
	coord_conf_free(&c);
	assert_int_equal(conf_load(&c, "survey_method tcp\n"), 0);
	assert_int_equal(c.survey_method, COORD_SURVEY_TCP);
	coord_conf_free(&c);

	coord_conf_defaults(&c);
	assert_int_equal(coord_conf_load_buffer(&c, "t", bad_method,
						strlen(bad_method), &ctx),
			 -1);
	assert_int_equal(
		coord_conf_load_buffer(&c, "t", bad_qps, strlen(bad_qps), &ctx),
		-1);
	assert_int_equal(coord_conf_load_buffer(&c, "t", bad_size,
						strlen(bad_size), &ctx),
			 -1);
	coord_conf_free(&c);
}

static void keep_msg(const char *msg, void *arg)
{
	snprintf(arg, 256, "%s", msg);
}

/* survey_rdma_tc / survey_rdma_sl: the jobs' NCCL_IB_TC / NCCL_IB_SL,
 * strictly in range, errors at file:line. */
static void test_conf_survey_tc_sl(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"survey_rdma_tc 256\n",
		 "t.conf:1: 'survey_rdma_tc': 256 is out of range (0..255)"},
		{"\nsurvey_rdma_sl 16\n",
		 "t.conf:2: 'survey_rdma_sl': 16 is out of range (0..15)"},
		{"survey_rdma_tc -1\n", "t.conf:1: 'survey_rdma_tc'"},
		{"survey_rdma_sl 3x\n", "t.conf:1: 'survey_rdma_sl'"},
		{"survey_rdma_tc\n", "t.conf:1:"},
		{"survey_rdma_sl 1 2\n", "t.conf:1:"},
	};
	struct coord_conf c;
	char msg[256];
	struct cfg_ctx ctx = {.report = keep_msg, .report_arg = msg};

	(void)state;
	assert_int_equal(conf_load(&c, ""), 0);
	assert_int_equal(c.survey_rdma_tc, 0);
	assert_int_equal(c.survey_rdma_sl, 0);
	coord_conf_free(&c);
	assert_int_equal(conf_load(&c, "survey_rdma_tc 106\n"
				       "survey_rdma_sl 15\n"),
			 0);
	assert_int_equal(c.survey_rdma_tc, 106);
	assert_int_equal(c.survey_rdma_sl, 15);
	coord_conf_free(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		msg[0] = '\0';
		ctx.file = "t.conf";
		ctx.line = 0;
		coord_conf_defaults(&c);
		assert_int_equal(
			coord_conf_load_buffer(&c, "t.conf", bad[i].text,
					       strlen(bad[i].text), &ctx),
			-1);
		if (strncmp(msg, bad[i].msg, strlen(bad[i].msg)))
			fail_msg("'%s': '%s' does not start with '%s'",
				 bad[i].text, msg, bad[i].msg);
		coord_conf_free(&c);
	}
}

static void test_capabilities(void **state)
{
	struct nodes *t = nodes_new();
	struct node *n = nodes_get(t, "n1", 10);
	char *caps[] = {"inventory", "tcp_test", "rdma_test"};
	char *old[] = {"inventory", "tcp_test"};
	char *planned[] = {"rdma-test"};
	int session;

	(void)state;
	assert_false(rdma_rules_capable(n));
	nodes_mark_up(n, &session, "10.0.0.1", "0.1.0", 1);
	nodes_set_capabilities(n, caps, 3);
	assert_true(nodes_has_capability(n, "tcp_test"));
	assert_false(nodes_has_capability(n, "tcp"));
	assert_true(rdma_rules_capable(n));
	nodes_set_capabilities(n, old, 2);
	assert_false(rdma_rules_capable(n));
	nodes_set_capabilities(n, planned, 1);
	assert_true(rdma_rules_capable(n));
	/* Down: no test, whatever it said. */
	nodes_mark_down(n, "gone", 2);
	assert_false(rdma_rules_capable(n));
	nodes_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_active_port),
		cmocka_unit_test(test_gid_check),
		cmocka_unit_test(test_conf_survey_method),
		cmocka_unit_test(test_conf_survey_tc_sl),
		cmocka_unit_test(test_capabilities),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
