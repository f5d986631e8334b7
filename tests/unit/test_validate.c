/* validate: what the coordinator accepts from agents, and the bounded
 * unpacking of frames (frame.c) that runs before it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "agent/inventory.h"
#include "coordinator/validate.h"

/* A string and whether the check accepts it. */
struct str_case {
	const char *s;
	int ok;
};

static void check_strings(const char *check, int (*fn)(const char *s),
			  const struct str_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!fn(c[i].s) != !c[i].ok)
			fail_msg("%s(\"%s\") should be %s", check, c[i].s,
				 c[i].ok ? "accepted" : "refused");
}

static void test_names(void **state)
{
	static const struct str_case ifnames[] = {
		{"enP2p1s0f0np0", 1},
		{"eth1", 1},
		{"", 0},
		{".", 0},
		{"..", 0},
		{"0123456789abcdef", 0}, /* 16 bytes */
		{"x\nLD_PRELOAD", 0},
		{"a/b", 0},
		{"eth0:1", 0},
		{"a b", 0},
	};
	static const struct str_case rdma_names[] = {
		{"roceP2p1s0f0", 1},
		{"rxe_eth1", 1},
		{"mlx5;rm", 0},
		{"", 0},
	};

	(void)state;
	check_strings("validate_ifname", validate_ifname, ifnames,
		      sizeof(ifnames) / sizeof(ifnames[0]));
	check_strings("validate_rdma_name", validate_rdma_name, rdma_names,
		      sizeof(rdma_names) / sizeof(rdma_names[0]));
	assert_true(validate_text("6.1.0-28-arm64", 64));
	assert_false(validate_text("a\x1b[2J", 64));
	assert_false(validate_text("abcdef", 5));
}

static void test_addresses(void **state)
{
	static const struct str_case addrs[] = {
		{"10.0.12.1", 1}, {"192.0.2.1", 1},  {"127.0.0.1", 0},
		{"0.1.2.3", 0},	  {"224.0.0.1", 0},  {"255.255.255.255", 0},
		{"240.0.0.1", 0}, {"10.0.0.256", 0}, {"banana", 0},
		{"", 0},
	};

	(void)state;
	check_strings("validate_unicast_ipv4", validate_unicast_ipv4, addrs,
		      sizeof(addrs) / sizeof(addrs[0]));
}

/* A formatted copy on the heap. */
static char *strdupf(const char *fmt, unsigned a, unsigned b)
{
	char buf[32];

	snprintf(buf, sizeof(buf), fmt, a, b);
	return strdup(buf);
}

/* An inventory with n interfaces of k addresses each. */
static Ring__Inventory *inv_new(size_t n, size_t k)
{
	Ring__Inventory *inv = calloc(1, sizeof(*inv));

	ring__inventory__init(inv);
	inv->n_interfaces = n;
	inv->interfaces = calloc(n + 1, sizeof(*inv->interfaces));
	for (size_t i = 0; i < n; i++) {
		Ring__NetInterface *f = calloc(1, sizeof(*f));

		ring__net_interface__init(f);
		f->name = strdupf("eth%u", (unsigned)(i % 1000), 0);
		f->n_ipv4 = k;
		f->ipv4 = calloc(k + 1, sizeof(*f->ipv4));
		for (size_t j = 0; j < k; j++) {
			Ring__Ipv4Address *a = calloc(1, sizeof(*a));

			ring__ipv4_address__init(a);
			a->address = strdupf("10.%u.%u.1", (unsigned)(i % 256),
					     (unsigned)(j % 256));
			a->prefix = 24;
			f->ipv4[j] = a;
		}
		inv->interfaces[i] = f;
	}
	return inv;
}

static void inv_free(Ring__Inventory *inv)
{
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		Ring__NetInterface *f = inv->interfaces[i];

		for (size_t j = 0; j < f->n_ipv4; j++) {
			free(f->ipv4[j]->address);
			free(f->ipv4[j]);
		}
		free(f->ipv4);
		free(f->name);
		free(f);
	}
	free(inv->interfaces);
	free(inv);
}

static void test_inventory_limits(void **state)
{
	Ring__Inventory *inv;
	char why[200];

	(void)state;
	inv = inv_new(VALIDATE_MAX_INTERFACES, VALIDATE_MAX_IPV4);
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), 0);
	inv_free(inv);
	inv = inv_new(VALIDATE_MAX_INTERFACES + 1, 1);
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "257 interfaces (max 256)");
	inv_free(inv);
	inv = inv_new(1, VALIDATE_MAX_IPV4 + 1);
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "interface eth0: 17 IPv4 addresses (max 16)");
	inv_free(inv);
	/* Duplicates, hostile names, bad addresses and prefixes. */
	inv = inv_new(2, 1);
	free(inv->interfaces[1]->name);
	inv->interfaces[1]->name = strdup("eth0");
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "interface eth0 listed twice");
	free(inv->interfaces[1]->name);
	inv->interfaces[1]->name = strdup("x\nLD_PRELOAD=/a");
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "invalid interface name");
	free(inv->interfaces[1]->name);
	inv->interfaces[1]->name = strdup("eth1");
	inv->interfaces[1]->ipv4[0]->prefix = 33;
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	inv->interfaces[1]->ipv4[0]->prefix = 30;
	free(inv->interfaces[1]->ipv4[0]->address);
	inv->interfaces[1]->ipv4[0]->address = strdup("127.0.0.1");
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	/* ... except on the management port (lo, where the coordinator runs
	 * on the node itself). */
	inv->interfaces[1]->management = 1;
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), 0);
	inv->interfaces[1]->management = 0;
	free(inv->interfaces[1]->ipv4[0]->address);
	inv->interfaces[1]->ipv4[0]->address = strdup("10.9.1.1");
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), 0);
	inv->mgmt_interface = "a\nb";
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "invalid management interface name");
	inv->mgmt_interface = (char *)protobuf_c_empty_string;
	inv->kernel = "\x07";
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	inv->kernel = (char *)protobuf_c_empty_string;
	inv_free(inv);
}

/* The hardware model of a collected GB10 inventory, then broken one way
 * at a time. */
static Ring__Inventory *hw_inv(void)
{
	const char *root = getenv("RING_FIXTURES");
	char path[PATH_MAX];
	struct agent_conf c;
	struct inventory_src src = {0};
	Ring__Inventory *inv;

	snprintf(path, sizeof(path), "%s/gb10-docker",
		 root && *root ? root : "tests/fixtures");
	src.sysfs_root = src.procfs_root = path;
	src.mgmt_interface = "enP7s7";
	agent_conf_defaults(&c);
	snprintf(c.node, sizeof(c.node), "n1");
	inv = inventory_collect(&c, &src);
	assert_non_null(inv);
	assert_int_equal(inv->n_pcie_links, 2);
	assert_int_equal(inv->n_phys_ports, 2);
	assert_int_equal(inv->n_ignored_interfaces, 3);
	return inv;
}

static void test_inventory_hw(void **state)
{
	Ring__Inventory *inv;
	char why[200], *keep;
	size_t n;

	(void)state;
	inv = hw_inv();
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), 0);
	inventory_free(inv);

	/* Counts (the same entry over and over). */
	inv = hw_inv();
	{
		Ring__PcieLink *links[VALIDATE_MAX_PCIE_LINKS + 1], **kl;
		Ring__PhysPort *ports[VALIDATE_MAX_PHYS_PORTS + 1], **kp;
		char *ign[VALIDATE_MAX_IGNORED + 1], **ki;

		for (size_t i = 0; i <= VALIDATE_MAX_PCIE_LINKS; i++)
			links[i] = inv->pcie_links[0];
		for (size_t i = 0; i <= VALIDATE_MAX_PHYS_PORTS; i++)
			ports[i] = inv->phys_ports[0];
		for (size_t i = 0; i <= VALIDATE_MAX_IGNORED; i++)
			ign[i] = "veth0";
		kl = inv->pcie_links;
		n = inv->n_pcie_links;
		inv->pcie_links = links;
		inv->n_pcie_links = VALIDATE_MAX_PCIE_LINKS + 1;
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
		assert_string_equal(why, "65 PCIe links (max 64)");
		inv->pcie_links = kl;
		inv->n_pcie_links = n;
		kp = inv->phys_ports;
		n = inv->n_phys_ports;
		inv->phys_ports = ports;
		inv->n_phys_ports = VALIDATE_MAX_PHYS_PORTS + 1;
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
		assert_string_equal(why, "65 physical ports (max 64)");
		inv->phys_ports = kp;
		inv->n_phys_ports = n;
		ki = inv->ignored_interfaces;
		n = inv->n_ignored_interfaces;
		inv->ignored_interfaces = ign;
		inv->n_ignored_interfaces = VALIDATE_MAX_IGNORED + 1;
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
		assert_string_equal(why, "257 ignored interfaces (max 256)");
		inv->ignored_interfaces = ki;
		inv->n_ignored_interfaces = n;
	}
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), 0);

	/* A link member that is no interface, or not of that link. */
	keep = inv->pcie_links[0]->interfaces[1];
	inv->pcie_links[0]->interfaces[1] = "enP2p1s0f0np0";
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "PCIe link 0000:01:00: enP2p1s0f0np0 is not "
				 "an interface of it");
	inv->pcie_links[0]->interfaces[1] = "enp1s0f0np0";
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "PCIe link 0000:01:00: enp1s0f0np0 listed "
				 "twice");
	inv->pcie_links[0]->interfaces[1] = "a/b";
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "PCIe link 0000:01:00: invalid interface "
				 "name");
	inv->pcie_links[0]->interfaces[1] = keep;

	/* Rates: usable above raw, not finite, negative. */
	inv->pcie_links[1]->usable_gbps = 127.0;
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "PCIe link 0002:01:00: invalid rate");
	inv->pcie_links[1]->usable_gbps = 111.0;
	inv->phys_ports[0]->aggregate_gbps = NAN;
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "physical port 4cbb47fffe2a1040/p0: invalid "
				 "rate");
	inv->phys_ports[0]->aggregate_gbps = 111.0;
	inv->interfaces[0]->nominal_gbps = -1.0;
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "interface enP2p1s0f0np0: invalid rate");
	inv->interfaces[0]->nominal_gbps = 55.5;
	inv->interfaces[0]->arp_announce = 3;
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "interface enP2p1s0f0np0: invalid arp_ignore "
				 "or arp_announce");
	inv->interfaces[0]->arp_announce = -1;
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), 0);

	/* The MPS, its source, the narrow cause, the grouping. */
	{
		Ring__PcieLink *l = inv->pcie_links[1];
		Ring__PhysPort *p = inv->phys_ports[0];
		char *ks = l->mps_source, *kn = l->narrow, *kg = p->grouped_by;

		assert_int_equal(l->mps_bytes, 256);
		l->mps_bytes = 384;
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
		assert_string_equal(why, "PCIe link 0002:01:00: max payload "
					 "size 384 bytes (128 to 4096, a power "
					 "of two)");
		l->mps_bytes = 8192;
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
		l->mps_bytes = 0; /* an agent before the field */
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), 0);
		l->mps_bytes = 128;
		l->mps_source = "guessed";
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
		assert_string_equal(why, "PCIe link 0002:01:00: mps_source "
					 "must be read or assumed");
		l->mps_source = ks;
		l->narrow = "bios";
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
		assert_string_equal(why, "PCIe link 0002:01:00: narrow must be "
					 "downtrained, wired_narrow or "
					 "unknown");
		l->narrow = "wired_narrow";
		l->upstream_max_width = 64;
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
		assert_string_equal(why, "PCIe link 0002:01:00: upstream width "
					 "x64 (max x32)");
		l->upstream_max_width = 2;
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), 0);
		l->narrow = kn;
		p->grouped_by = "luck";
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
		assert_string_equal(why, "physical port 4cbb47fffe2a1040/p0: "
					 "grouped_by luck is not one the agent "
					 "sends");
		p->grouped_by = kg;
		assert_int_equal(validate_inventory(inv, why, sizeof(why)), 0);
	}

	/* Text: control characters in an id, a twins_differ too long. */
	keep = inv->phys_ports[1]->id;
	inv->phys_ports[1]->id = "p\n1";
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "physical port 1: invalid text field");
	inv->phys_ports[1]->id = inv->phys_ports[0]->id;
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "physical port 4cbb47fffe2a1040/p0 listed "
				 "twice");
	inv->phys_ports[1]->id = keep;
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), 0);

	/* An interface naming a port nobody lists. */
	keep = inv->interfaces[4]->port_id;
	inv->interfaces[4]->port_id = "elsewhere/p9";
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "physical port 4cbb47fffe2a1040/p1: "
				 "enp1s0f1np1 is not an interface of it");
	inv->interfaces[4]->port_id = keep;

	/* Ignored: a bad name, or one that is also a data interface. */
	keep = inv->ignored_interfaces[1];
	inv->ignored_interfaces[1] = "enp1s0f1np1";
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "interface enp1s0f1np1 both listed and "
				 "ignored");
	inv->ignored_interfaces[1] = "";
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "invalid ignored interface name");
	inv->ignored_interfaces[1] = keep;
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), 0);
	inventory_free(inv);

	/* An interface whose link is not listed. */
	inv = hw_inv();
	keep = inv->pcie_links[1]->id;
	inv->pcie_links[1]->id = "0003:01:00";
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	inv->pcie_links[1]->id = keep;
	inv->n_pcie_links = 1;
	assert_int_equal(validate_inventory(inv, why, sizeof(why)), -1);
	assert_string_equal(why, "interface enP2p1s0f0np0: PCIe link "
				 "0002:01:00 not listed");
	inv->n_pcie_links = 2;
	inventory_free(inv);
}

static void test_neighbours(void **state)
{
	/* rc, and the reason where one is checked. */
	static const struct {
		const char *node, *rif;
		int rc;
		const char *why;
	} cases[] = {
		{"n2", "eth2", 0, NULL},
		{"n2;reboot", "eth2", -1, "invalid remote node name"},
		{"n2", "", -1, NULL},
	};
	Ring__Neighbour nb = RING__NEIGHBOUR__INIT;
	Ring__NeighbourTable t = RING__NEIGHBOUR_TABLE__INIT;
	Ring__Neighbour *many[VALIDATE_MAX_NEIGHBOURS + 1];
	char why[200];

	(void)state;
	nb.local_interface = "eth1";
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("    %s %s\n", cases[i].node, cases[i].rif);
		nb.remote_node = (char *)cases[i].node;
		nb.remote_interface = (char *)cases[i].rif;
		assert_int_equal(validate_neighbour(&nb, why, sizeof(why)),
				 cases[i].rc);
		if (cases[i].why)
			assert_string_equal(why, cases[i].why);
	}
	nb.remote_node = "n2";
	nb.remote_interface = "eth2";
	for (size_t i = 0; i <= VALIDATE_MAX_NEIGHBOURS; i++)
		many[i] = &nb;
	t.neighbours = many;
	t.n_neighbours = VALIDATE_MAX_NEIGHBOURS;
	assert_int_equal(validate_neighbour_table(&t, why, sizeof(why)), 0);
	t.n_neighbours = VALIDATE_MAX_NEIGHBOURS + 1;
	assert_int_equal(validate_neighbour_table(&t, why, sizeof(why)), -1);
	assert_string_equal(why, "257 neighbours (max 256)");
}

static void test_hello(void **state)
{
	Ring__Hello h = RING__HELLO__INIT;
	char *caps[VALIDATE_MAX_CAPABILITIES + 1];
	char why[200];

	static const struct {
		const char *node, *version;
		int rc;
	} cases[] = {
		{"n1", "0.1.0", 0},
		{"n1", "0.1\n0", -1},
		{"", "0.1.0", -1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("    '%s' '%s'\n", cases[i].node,
			      cases[i].version);
		h.node = (char *)cases[i].node;
		h.agent_version = (char *)cases[i].version;
		assert_int_equal(validate_hello(&h, why, sizeof(why)),
				 cases[i].rc);
	}
	h.node = "n1";
	h.agent_version = "0.1.0";
	for (size_t i = 0; i <= VALIDATE_MAX_CAPABILITIES; i++)
		caps[i] = "rdma_test";
	h.capabilities = caps;
	h.n_capabilities = VALIDATE_MAX_CAPABILITIES;
	assert_int_equal(validate_hello(&h, why, sizeof(why)), 0);
	h.n_capabilities++;
	assert_int_equal(validate_hello(&h, why, sizeof(why)), -1);
}

/* 1 MiB of empty interfaces unpacks to ~100 MiB: the frame is refused
 * before that memory is spent, while a real inventory of the same
 * interfaces with names and addresses decodes. */
static void test_bounded_unpack(void **state)
{
	size_t n = (1u << 20) / 2 - 16, len = 0;
	uint8_t *payload = malloc(n * 2 + 16);
	Ring__Inventory *inv;
	Ring__Envelope env = RING__ENVELOPE__INIT, *got;
	struct frame_header h;
	uint8_t *buf;
	int err = 0;

	(void)state;
	/* Envelope{inventory (20): Inventory{interfaces (5): {} x n}} */
	payload[len++] = 0xa2; /* field 20, wire type 2 */
	payload[len++] = 0x01;
	{
		size_t body = n * 2, v = body;

		while (v >= 0x80) {
			payload[len++] = (uint8_t)(v | 0x80);
			v >>= 7;
		}
		payload[len++] = (uint8_t)v;
	}
	for (size_t i = 0; i < n; i++) {
		payload[len++] = 0x2a;
		payload[len++] = 0x00;
	}
	h.version = FRAME_VERSION;
	h.type = 20;
	h.length = (uint32_t)len;
	assert_null(frame_decode(&h, payload, &err));
	assert_int_equal(err, -EBADMSG);
	free(payload);

	inv = inv_new(VALIDATE_MAX_INTERFACES, VALIDATE_MAX_IPV4);
	env.body_case = RING__ENVELOPE__BODY_INVENTORY;
	env.inventory = inv;
	assert_int_equal(frame_encode(&env, &buf, &len), 0);
	assert_int_equal(frame_header_decode(buf, FRAME_MAX_DEFAULT, &h), 0);
	got = frame_decode(&h, buf + FRAME_HEADER_LEN, &err);
	assert_non_null(got);
	assert_int_equal(got->inventory->n_interfaces, VALIDATE_MAX_INTERFACES);
	frame_free(got);
	free(buf);
	inv_free(inv);
}

/* A read test's result from an agent: figures in range, no nested list. */
static void test_read_result(void **state)
{
	Ring__ReadTestResult r = RING__READ_TEST_RESULT__INIT, *one = &r;
	Ring__ReadTestResult top = RING__READ_TEST_RESULT__INIT;
	char why[256];

	(void)state;
	r.path = "/srv/m/w.bin";
	r.bytes = 4ull << 30;
	r.seconds = 0.43;
	r.gbytes_per_s = 9.98;
	r.device = "259:1";
	r.filesystem = "ext4";
	assert_int_equal(validate_read_result(&r, why, sizeof(why)), 0);
	assert_int_equal(validate_read_result(NULL, why, sizeof(why)), -1);
	r.seconds = NAN;
	assert_int_equal(validate_read_result(&r, why, sizeof(why)), -1);
	r.seconds = -1;
	assert_int_equal(validate_read_result(&r, why, sizeof(why)), -1);
	r.seconds = 0.43;
	r.bytes = (64ull << 30) + 1;
	assert_int_equal(validate_read_result(&r, why, sizeof(why)), -1);
	r.bytes = 1;
	r.gbytes_per_s = INFINITY;
	assert_int_equal(validate_read_result(&r, why, sizeof(why)), -1);
	r.gbytes_per_s = 1;
	r.error = "bad\001byte";
	assert_int_equal(validate_read_result(&r, why, sizeof(why)), -1);
	r.error = "";
	/* An agent may not answer with a list of nodes. */
	top.path = "/srv/m";
	top.nodes = &one;
	top.n_nodes = 1;
	assert_int_equal(validate_read_result(&top, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "lists nodes"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_inventory_limits),
		cmocka_unit_test(test_inventory_hw),
		cmocka_unit_test(test_neighbours),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_bounded_unpack),
		cmocka_unit_test(test_read_result),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
