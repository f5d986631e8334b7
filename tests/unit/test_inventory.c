#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/inventory.h"
#include "agent/inventory_hw.h"
#include "agent/inventory_json.h"
#include "agent/inventory_pcie.h"

/* A hand-built getifaddrs() list: what the agent would see on a GB10 node
 * with two of its four CX-7 halves addressed. */
struct test_addr {
	struct ifaddrs ifa;
	char name[IFNAMSIZ];
	struct sockaddr_in addr;
	struct sockaddr_in mask;
};

#define TEST_MAX_ADDRS 16

struct test_addrs {
	struct test_addr a[TEST_MAX_ADDRS];
	unsigned n;
};

static void test_addrs_add(struct test_addrs *l, const char *name, int family,
			   const char *addr, const char *mask)
{
	struct test_addr *t = &l->a[l->n];

	assert_true(l->n < TEST_MAX_ADDRS);
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->ifa.ifa_name = t->name;
	t->addr.sin_family = (sa_family_t)family;
	if (addr)
		assert_int_equal(inet_pton(AF_INET, addr, &t->addr.sin_addr),
				 1);
	t->ifa.ifa_addr = (struct sockaddr *)&t->addr;
	if (mask) {
		t->mask.sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, mask, &t->mask.sin_addr),
				 1);
		t->ifa.ifa_netmask = (struct sockaddr *)&t->mask;
	}
	if (l->n)
		l->a[l->n - 1].ifa.ifa_next = &t->ifa;
	l->n++;
}

static void test_gb10_addrs(struct test_addrs *l)
{
	memset(l, 0, sizeof(*l));
	/* A link-layer entry per interface comes first, as in glibc. */
	test_addrs_add(l, "enp1s0f0np0", AF_PACKET, NULL, NULL);
	test_addrs_add(l, "lo", AF_INET, "127.0.0.1", "255.0.0.0");
	test_addrs_add(l, "enP7s7", AF_INET, "10.0.0.11", "255.255.255.0");
	test_addrs_add(l, "enp1s0f0np0", AF_INET, "192.168.100.1",
		       "255.255.255.0");
	test_addrs_add(l, "enp1s0f1np1", AF_INET, "192.168.101.1",
		       "255.255.255.0");
}

static const char *test_fixture(const char *name, char *buf, size_t len)
{
	const char *root = getenv("RING_FIXTURES");

	snprintf(buf, len, "%s/%s", root && *root ? root : "tests/fixtures",
		 name);
	return buf;
}

static void test_gb10_conf(struct agent_conf *c)
{
	agent_conf_defaults(c);
	snprintf(c->node, sizeof(c->node), "spark1");
	snprintf(c->ignore_globs[0], sizeof(c->ignore_globs[0]), "docker*");
	c->n_ignore_globs = 1;
	snprintf(c->speeds[0].glob, sizeof(c->speeds[0].glob), "en*np[01]");
	c->speeds[0].mbps = 200000;
	c->n_speeds = 1;
}

static Ring__Inventory *test_collect_gb10(const struct agent_conf *c,
					  const struct test_addrs *l)
{
	char root[PATH_MAX];
	struct inventory_src src = {
		.sysfs_root = test_fixture("gb10", root, sizeof(root)),
		.procfs_root = root,
		.addrs = &l->a[0].ifa,
		.mgmt_interface = "enP7s7",
		.mgmt_address = "10.0.0.11",
		.with_rdma = 0,
	};
	Ring__Inventory *inv = inventory_collect(c, &src);

	assert_non_null(inv);
	return inv;
}

static const Ring__NetInterface *test_iface(const Ring__Inventory *inv,
					    const char *name)
{
	size_t i;

	for (i = 0; i < inv->n_interfaces; i++)
		if (!strcmp(inv->interfaces[i]->name, name))
			return inv->interfaces[i];
	return NULL;
}

static void test_gb10_top(void **state)
{
	struct agent_conf c;
	struct test_addrs l;
	Ring__Inventory *inv;
	struct utsname uts;
	char host[HOST_NAME_MAX + 1] = "";

	(void)state;
	test_gb10_conf(&c);
	test_gb10_addrs(&l);
	inv = test_collect_gb10(&c, &l);
	assert_string_equal(inv->node, "spark1");
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	assert_string_equal(inv->hostname, host);
	assert_int_equal(uname(&uts), 0);
	assert_string_equal(inv->kernel, uts.release);
	assert_string_equal(inv->mgmt_interface, "enP7s7");
	assert_string_equal(inv->mgmt_address, "10.0.0.11");
	assert_int_equal(inv->n_rdma_devices, 0);
	assert_string_equal(inv->rdma_error, "");
	/* 121.7 GiB usable, as in docs/REFERENCE.md. */
	assert_non_null(inv->memory);
	assert_int_equal(inv->memory->total_kib, 127611264ULL);
	assert_int_equal(inv->memory->available_kib, 119537664ULL);
	assert_int_equal((inv->memory->total_kib * 10 + 524288) / 1048576,
			 1217);
	inventory_free(inv);
}

static void test_gb10_interfaces(void **state)
{
	static const struct {
		const char *name, *pci, *rdma, *mac;
		uint32_t ifindex;
	} cx7[] = {
		{"enP2p1s0f0np0", "0002:01:00.0", "roceP2p1s0f0",
		 "4c:bb:47:2a:10:42", 5},
		{"enP2p1s0f1np1", "0002:01:00.1", "roceP2p1s0f1",
		 "4c:bb:47:2a:10:43", 6},
		{"enp1s0f0np0", "0000:01:00.0", "rocep1s0f0",
		 "4c:bb:47:2a:10:40", 3},
		{"enp1s0f1np1", "0000:01:00.1", "rocep1s0f1",
		 "4c:bb:47:2a:10:41", 4},
	};
	struct agent_conf c;
	struct test_addrs l;
	Ring__Inventory *inv;
	const Ring__NetInterface *ifc;
	size_t i;

	(void)state;
	test_gb10_conf(&c);
	test_gb10_addrs(&l);
	inv = test_collect_gb10(&c, &l);
	/* Sorted by name (strcmp: 'P' < 'p'); lo, docker0 and the
	 * bonding_masters file are not there. */
	assert_int_equal(inv->n_interfaces, 5);
	assert_string_equal(inv->interfaces[0]->name, "enP2p1s0f0np0");
	assert_string_equal(inv->interfaces[1]->name, "enP2p1s0f1np1");
	assert_string_equal(inv->interfaces[2]->name, "enP7s7");
	assert_string_equal(inv->interfaces[3]->name, "enp1s0f0np0");
	assert_string_equal(inv->interfaces[4]->name, "enp1s0f1np1");
	assert_null(test_iface(inv, "lo"));
	assert_null(test_iface(inv, "docker0"));

	for (i = 0; i < sizeof(cx7) / sizeof(cx7[0]); i++) {
		ifc = test_iface(inv, cx7[i].name);
		assert_non_null(ifc);
		assert_int_equal(ifc->ifindex, cx7[i].ifindex);
		assert_string_equal(ifc->mac, cx7[i].mac);
		assert_int_equal(ifc->mtu, 9000);
		assert_true(ifc->admin_up);
		assert_true(ifc->carrier);
		assert_string_equal(ifc->operstate, "up");
		assert_int_equal(ifc->speed_mbps, 200000);
		assert_int_equal(ifc->nominal_speed_mbps, 200000);
		assert_string_equal(ifc->driver, "mlx5_core");
		assert_string_equal(ifc->pci_address, cx7[i].pci);
		assert_string_equal(ifc->pcie_link_speed, "32.0 GT/s PCIe");
		assert_int_equal(ifc->pcie_link_width, 4);
		assert_string_equal(ifc->pcie_max_link_speed, "32.0 GT/s PCIe");
		assert_int_equal(ifc->pcie_max_link_width, 4);
		/* Each twin is a Gen5 x4 half: ~100G of a 200G port. */
		assert_true(ifc->pcie_gbps == 126.0);
		assert_string_equal(ifc->rdma_device, cx7[i].rdma);
		assert_false(ifc->management);
	}

	/* The reference cluster's trap: link on all four, addresses on two. */
	ifc = test_iface(inv, "enp1s0f0np0");
	assert_int_equal(ifc->n_ipv4, 1);
	assert_string_equal(ifc->ipv4[0]->address, "192.168.100.1");
	assert_int_equal(ifc->ipv4[0]->prefix, 24);
	assert_false(ifc->up_no_address);
	ifc = test_iface(inv, "enp1s0f1np1");
	assert_int_equal(ifc->n_ipv4, 1);
	assert_string_equal(ifc->ipv4[0]->address, "192.168.101.1");
	assert_false(ifc->up_no_address);
	ifc = test_iface(inv, "enP2p1s0f0np0");
	assert_int_equal(ifc->n_ipv4, 0);
	assert_true(ifc->up_no_address);
	ifc = test_iface(inv, "enP2p1s0f1np1");
	assert_int_equal(ifc->n_ipv4, 0);
	assert_true(ifc->up_no_address);

	ifc = test_iface(inv, "enP7s7");
	assert_true(ifc->management);
	assert_int_equal(ifc->ifindex, 2);
	assert_int_equal(ifc->mtu, 1500);
	assert_int_equal(ifc->speed_mbps, 10000);
	assert_int_equal(ifc->nominal_speed_mbps, 0);
	assert_string_equal(ifc->driver, "r8169");
	assert_string_equal(ifc->pci_address, "0007:01:00.0");
	assert_int_equal(ifc->pcie_link_width, 1);
	assert_true(ifc->pcie_gbps == 15.8);
	assert_string_equal(ifc->rdma_device, "");
	assert_int_equal(ifc->n_ipv4, 1);
	assert_string_equal(ifc->ipv4[0]->address, "10.0.0.11");
	assert_false(ifc->up_no_address);
	inventory_free(inv);
}

/* The GB10 inventory with test_gb10_conf's ignore glob (docker*) and
 * data, a second ignore glob, and n_ignore of them in force. */
static Ring__Inventory *test_collect_globs(const struct test_addrs *l,
					   const char *data,
					   const char *ignore2,
					   unsigned n_ignore)
{
	struct agent_conf c;

	test_gb10_conf(&c);
	if (data) {
		snprintf(c.data_globs[0], sizeof(c.data_globs[0]), "%s", data);
		c.n_data_globs = 1;
	}
	if (ignore2)
		snprintf(c.ignore_globs[1], sizeof(c.ignore_globs[1]), "%s",
			 ignore2);
	c.n_ignore_globs = n_ignore;
	return test_collect_gb10(&c, l);
}

static void test_gb10_globs(void **state)
{
	struct test_addrs l;
	Ring__Inventory *inv;

	(void)state;
	test_gb10_addrs(&l);

	/* No ignore glob: the docker bridge counts, lo never does. */
	inv = test_collect_globs(&l, NULL, NULL, 0);
	assert_int_equal(inv->n_interfaces, 6);
	assert_non_null(test_iface(inv, "docker0"));
	assert_null(test_iface(inv, "lo"));
	assert_int_equal(test_iface(inv, "docker0")->speed_mbps, -1);
	assert_false(test_iface(inv, "docker0")->carrier);
	assert_string_equal(test_iface(inv, "docker0")->pci_address, "");
	inventory_free(inv);

	/* Ignoring the PCIe domain 2 twins. */
	inv = test_collect_globs(&l, NULL, "enP2p*", 2);
	assert_int_equal(inv->n_interfaces, 3);
	assert_null(test_iface(inv, "enP2p1s0f0np0"));
	assert_null(test_iface(inv, "enP2p1s0f1np1"));
	inventory_free(inv);

	/* Data globs select; the management NIC is listed regardless. */
	inv = test_collect_globs(&l, "enp*", NULL, 1);
	assert_int_equal(inv->n_interfaces, 3);
	assert_string_equal(inv->interfaces[0]->name, "enP7s7");
	assert_true(inv->interfaces[0]->management);
	assert_string_equal(inv->interfaces[1]->name, "enp1s0f0np0");
	assert_string_equal(inv->interfaces[2]->name, "enp1s0f1np1");
	inventory_free(inv);
}

static void test_veth(void **state)
{
	char root[PATH_MAX];
	struct agent_conf c;
	struct test_addrs l;
	struct inventory_src src = {
		.sysfs_root = test_fixture("veth", root, sizeof(root)),
		.procfs_root = root,
		.mgmt_interface = "mgmt0",
		.mgmt_address = "172.30.0.2",
	};
	const Ring__NetInterface *ifc;
	Ring__Inventory *inv;

	(void)state;
	agent_conf_defaults(&c);
	snprintf(c.node, sizeof(c.node), "n1");
	memset(&l, 0, sizeof(l));
	test_addrs_add(&l, "mgmt0", AF_INET, "172.30.0.2", "255.255.0.0");
	test_addrs_add(&l, "data0", AF_INET, "10.10.1.1", "255.255.255.252");
	src.addrs = &l.a[0].ifa;
	inv = inventory_collect(&c, &src);
	assert_non_null(inv);
	assert_int_equal(inv->n_interfaces, 3);
	assert_string_equal(inv->interfaces[0]->name, "data0");
	assert_string_equal(inv->interfaces[1]->name, "data1");
	assert_string_equal(inv->interfaces[2]->name, "mgmt0");

	ifc = inv->interfaces[0];
	assert_true(ifc->admin_up);
	assert_true(ifc->carrier);
	assert_int_equal(ifc->speed_mbps, 10000);
	assert_int_equal(ifc->nominal_speed_mbps, 0);
	assert_string_equal(ifc->pci_address, "");
	assert_string_equal(ifc->driver, "");
	assert_string_equal(ifc->rdma_device, "");
	assert_true(ifc->pcie_gbps == 0);
	assert_int_equal(ifc->n_ipv4, 1);
	assert_int_equal(ifc->ipv4[0]->prefix, 30);
	assert_false(ifc->up_no_address);

	/* Admin down: no carrier file to read, speed -1. */
	ifc = inv->interfaces[1];
	assert_false(ifc->admin_up);
	assert_false(ifc->carrier);
	assert_string_equal(ifc->operstate, "down");
	assert_int_equal(ifc->speed_mbps, -1);
	assert_int_equal(ifc->mtu, 9000);
	assert_int_equal(ifc->n_ipv4, 0);
	assert_false(ifc->up_no_address);

	assert_true(inv->interfaces[2]->management);
	assert_int_equal(inv->memory->total_kib, 8024540ULL);
	assert_int_equal(inv->memory->available_kib, 6123456ULL);
	inventory_free(inv);
}

static void test_changed(void **state)
{
	struct agent_conf c;
	struct test_addrs l;
	Ring__Inventory *a, *b;
	uint32_t mtu;

	(void)state;
	test_gb10_conf(&c);
	test_gb10_addrs(&l);
	a = test_collect_gb10(&c, &l);
	b = test_collect_gb10(&c, &l);
	assert_false(inventory_changed(a, b));

	/* Free memory moves all the time: not a change. */
	b->memory->available_kib -= 4096;
	assert_false(inventory_changed(a, b));
	/* Total memory is part of the inventory. */
	b->memory->total_kib -= 4;
	assert_true(inventory_changed(a, b));
	b->memory->total_kib += 4;
	assert_false(inventory_changed(a, b));

	mtu = b->interfaces[3]->mtu;
	b->interfaces[3]->mtu = 1500;
	assert_true(inventory_changed(a, b));
	b->interfaces[3]->mtu = mtu;
	assert_false(inventory_changed(a, b));

	b->interfaces[0]->carrier = 0;
	assert_true(inventory_changed(a, b));
	b->interfaces[0]->carrier = 1;

	/* A new address on a twin. */
	inventory_free(b);
	test_addrs_add(&l, "enP2p1s0f0np0", AF_INET, "192.168.102.1",
		       "255.255.255.0");
	b = test_collect_gb10(&c, &l);
	assert_true(inventory_changed(a, b));
	assert_false(test_iface(b, "enP2p1s0f0np0")->up_no_address);

	assert_true(inventory_changed(NULL, b));
	assert_true(inventory_changed(a, NULL));
	assert_false(inventory_changed(NULL, NULL));
	inventory_free(a);
	inventory_free(b);
}

static void test_pcie_gbps(void **state)
{
	static const struct {
		const char *speed;
		uint32_t width;
		double gbps;
	} cases[] = {
		{"2.5 GT/s PCIe", 1, 2.0},
		{"2.5 GT/s", 4, 8.0},
		{"5.0 GT/s PCIe", 8, 32.0},
		{"8.0 GT/s PCIe", 16, 126.0},
		{"16.0 GT/s PCIe", 4, 63.0},
		{"16.0 GT/s PCIe", 1, 15.8},
		{"32.0 GT/s PCIe", 4, 126.0},
		{"32.0 GT/s PCIe", 16, 504.1},
		{"64.0 GT/s PCIe", 1, 63.0},
		{"Unknown", 4, 0},
		{"20.0 GT/s PCIe", 4, 0},
		{"", 4, 0},
		{NULL, 4, 0},
		{"32.0 GT/s PCIe", 0, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double got =
			inventory_pcie_gbps(cases[i].speed, cases[i].width);

		if (got != cases[i].gbps)
			print_error("case '%s' x%u: %g, want %g\n",
				    cases[i].speed ? cases[i].speed : "(null)",
				    cases[i].width, got, cases[i].gbps);
		assert_true(got == cases[i].gbps);
	}
}

static void test_iface_of_address(void **state)
{
	struct test_addrs l;
	char buf[IFNAMSIZ];

	(void)state;
	test_gb10_addrs(&l);
	assert_int_equal(inventory_iface_of_address(&l.a[0].ifa,
						    "192.168.101.1", buf,
						    sizeof(buf)),
			 0);
	assert_string_equal(buf, "enp1s0f1np1");
	assert_int_equal(inventory_iface_of_address(&l.a[0].ifa, "10.0.0.11",
						    buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "enP7s7");

	errno = 0;
	assert_int_equal(inventory_iface_of_address(&l.a[0].ifa,
						    "192.168.102.1", buf,
						    sizeof(buf)),
			 -1);
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(inventory_iface_of_address(&l.a[0].ifa, "spark2", buf,
						    sizeof(buf)),
			 -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(inventory_iface_of_address(&l.a[0].ifa,
						    "192.168.100.1", buf, 4),
			 -1);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(inventory_iface_of_address(NULL, "192.168.100.1", buf,
						    sizeof(buf)),
			 -1);
}

static void test_mem_available(void **state)
{
	char root[PATH_MAX];

	(void)state;
	assert_int_equal(inventory_mem_available_kib(
				 test_fixture("gb10", root, sizeof(root))),
			 119537664ULL);
	assert_int_equal(inventory_mem_available_kib(
				 test_fixture("veth", root, sizeof(root))),
			 6123456ULL);
	assert_int_equal(inventory_mem_available_kib(test_fixture(
				 "nonexistent", root, sizeof(root))),
			 0);
	assert_true(inventory_mem_available_kib("") > 0);
}

/* This machine, RDMA included: whatever it has, collecting must work, and
 * a host without an RDMA stack is not an error. */
static void test_real_machine(void **state)
{
	struct inventory_src src = {
		.sysfs_root = "",
		.procfs_root = "",
		.with_rdma = 1,
	};
	struct ifaddrs *addrs = NULL;
	struct agent_conf c;
	Ring__Inventory *inv;
	struct stat st;
	size_t i;

	(void)state;
	agent_conf_defaults(&c);
	snprintf(c.node, sizeof(c.node), "here");
	assert_int_equal(getifaddrs(&addrs), 0);
	src.addrs = addrs;
	inv = inventory_collect(&c, &src);
	assert_non_null(inv);
	for (i = 0; i < inv->n_interfaces; i++) {
		assert_string_not_equal(inv->interfaces[i]->name, "lo");
		if (i)
			assert_true(strcmp(inv->interfaces[i - 1]->name,
					   inv->interfaces[i]->name) < 0);
	}
	if (stat("/sys/class/infiniband", &st) < 0) {
		assert_int_equal(inv->n_rdma_devices, 0);
		assert_string_equal(inv->rdma_error, "");
	}
	assert_true(inv->memory->total_kib > 0);
	assert_true(inv->kernel[0] != '\0');
	print_message("real machine: %zu interfaces, %zu RDMA devices%s%s\n",
		      inv->n_interfaces, inv->n_rdma_devices,
		      inv->rdma_error[0] ? ", rdma_error: " : "",
		      inv->rdma_error);
	inventory_free(inv);
	freeifaddrs(addrs);
}

/* A fixture's addrs file ("IFNAME ADDRESS/PREFIX" lines) as a getifaddrs
 * list. */
static void test_addrs_file(struct test_addrs *l, const char *fixture)
{
	char root[PATH_MAX], path[PATH_MAX + 8], line[128];
	FILE *f;

	memset(l, 0, sizeof(*l));
	snprintf(path, sizeof(path), "%s/addrs",
		 test_fixture(fixture, root, sizeof(root)));
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char name[IFNAMSIZ], addr[32], mask[32];
		unsigned prefix;
		struct in_addr m;

		assert_int_equal(
			sscanf(line, "%15s %31[0-9.]/%u", name, addr, &prefix),
			3);
		m.s_addr = htonl(prefix ? ~0u << (32 - prefix) : 0);
		assert_non_null(inet_ntop(AF_INET, &m, mask, sizeof(mask)));
		assert_true(l->n < TEST_MAX_ADDRS);
		test_addrs_add(l, name, AF_INET, addr, mask);
	}
	fclose(f);
}

static Ring__Inventory *test_collect_fixture(const char *fixture,
					     const char *mgmt)
{
	char root[PATH_MAX];
	struct agent_conf c;
	struct test_addrs *l = calloc(1, sizeof(*l));
	struct inventory_src src = {
		.sysfs_root = test_fixture(fixture, root, sizeof(root)),
		.procfs_root = root,
		.mgmt_interface = mgmt,
	};
	Ring__Inventory *inv;

	assert_non_null(l);
	agent_conf_defaults(&c);
	snprintf(c.node, sizeof(c.node), "spark1");
	if (strncmp(fixture, "gb10-veth", 9)) {
		test_addrs_file(l, fixture);
		src.addrs = &l->a[0].ifa;
	}
	inv = inventory_collect(&c, &src);
	assert_non_null(inv);
	free(l);
	return inv;
}

static const Ring__PcieLink *test_link(const Ring__Inventory *inv,
				       const char *id)
{
	for (size_t i = 0; i < inv->n_pcie_links; i++)
		if (!strcmp(inv->pcie_links[i]->id, id))
			return inv->pcie_links[i];
	return NULL;
}

static const Ring__PhysPort *test_port(const Ring__Inventory *inv,
				       const char *id)
{
	for (size_t i = 0; i < inv->n_phys_ports; i++)
		if (!strcmp(inv->phys_ports[i]->id, id))
			return inv->phys_ports[i];
	return NULL;
}

static void test_assert_names(char **names, size_t n, const char *a,
			      const char *b)
{
	assert_int_equal(n, 2);
	assert_string_equal(names[0], a);
	assert_string_equal(names[1], b);
}

/* The GB10 port and link model: two x4 links each carrying one half of
 * both ports; two ports each with twins on the two links. */
static void test_gb10_model_common(const Ring__Inventory *inv, unsigned w2)
{
	static const struct {
		const char *name, *port, *link;
	} fns[] = {
		{"enp1s0f0np0", "4cbb47fffe2a1040/p0", "0000:01:00"},
		{"enP2p1s0f0np0", "4cbb47fffe2a1040/p0", "0002:01:00"},
		{"enp1s0f1np1", "4cbb47fffe2a1040/p1", "0000:01:00"},
		{"enP2p1s0f1np1", "4cbb47fffe2a1040/p1", "0002:01:00"},
	};
	const Ring__PcieLink *l;
	const Ring__PhysPort *p;

	/* The management NIC is no part of the model. */
	assert_int_equal(inv->n_pcie_links, 2);
	assert_int_equal(inv->n_phys_ports, 2);
	assert_string_equal(test_iface(inv, "enP7s7")->port_id, "");
	assert_string_equal(test_iface(inv, "enP7s7")->pcie_link, "");
	assert_int_equal(test_iface(inv, "enP7s7")->arp_ignore, -1);

	l = test_link(inv, "0000:01:00");
	assert_non_null(l);
	test_assert_names(l->interfaces, l->n_interfaces, "enp1s0f0np0",
			  "enp1s0f1np1");
	assert_string_equal(l->speed, "32.0 GT/s PCIe");
	assert_int_equal(l->width, 4);
	assert_int_equal(l->max_width, 4);
	assert_true(l->raw_gbps == 126.0);
	/* 126.0 x 256/282 x 0.97 */
	assert_true(l->usable_gbps == 111.0);
	assert_string_equal(l->downtrained, "");

	l = test_link(inv, "0002:01:00");
	assert_non_null(l);
	test_assert_names(l->interfaces, l->n_interfaces, "enP2p1s0f0np0",
			  "enP2p1s0f1np1");
	assert_int_equal(l->width, w2);
	assert_int_equal(l->max_width, 4);
	assert_true(l->raw_gbps == (w2 == 4 ? 126.0 : 63.0));
	assert_true(l->usable_gbps == (w2 == 4 ? 111.0 : 55.5));
	assert_string_equal(l->downtrained, w2 == 4 ? "" : "x2 of x4");

	p = test_port(inv, "4cbb47fffe2a1040/p0");
	assert_non_null(p);
	assert_string_equal(p->name, "p0");
	test_assert_names(p->interfaces, p->n_interfaces, "enP2p1s0f0np0",
			  "enp1s0f0np0");
	assert_true(p->speed_gbps == 200.0);
	p = test_port(inv, "4cbb47fffe2a1040/p1");
	assert_non_null(p);
	assert_string_equal(p->name, "p1");
	test_assert_names(p->interfaces, p->n_interfaces, "enP2p1s0f1np1",
			  "enp1s0f1np1");

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		const Ring__NetInterface *f = test_iface(inv, fns[i].name);

		assert_non_null(f);
		assert_string_equal(f->port_id, fns[i].port);
		assert_string_equal(f->pcie_link, fns[i].link);
		assert_string_equal(f->phys_switch_id, "4cbb47fffe2a1040");
		/* pcie_gbps keeps its meaning: the raw link rate. */
		assert_true(f->pcie_gbps ==
			    (strstr(f->name, "P2") && w2 == 2 ? 63.0 : 126.0));
	}
	assert_string_equal(test_iface(inv, "enP2p1s0f1np1")->phys_port_name,
			    "p1");
}

static void test_model_gb10(void **state)
{
	Ring__Inventory *inv;

	(void)state;
	inv = test_collect_fixture("gb10", "enP7s7");
	test_gb10_model_common(inv, 4);
	/* Every function has carrier: two share each link, 111.0 / 2. */
	for (size_t i = 0; i < inv->n_interfaces; i++)
		if (!inv->interfaces[i]->management)
			assert_true(inv->interfaces[i]->nominal_gbps == 55.5);
	assert_true(test_port(inv, "4cbb47fffe2a1040/p0")->aggregate_gbps ==
		    111.0);
	assert_string_equal(test_port(inv, "4cbb47fffe2a1040/p0")->twins_differ,
			    "");
	/* arp_ignore/announce 0 everywhere. */
	assert_int_equal(test_iface(inv, "enp1s0f0np0")->arp_ignore, 0);
	assert_int_equal(test_iface(inv, "enp1s0f0np0")->arp_announce, 0);
	assert_true(test_iface(inv, "enP2p1s0f0np0")->up_no_address);
	assert_false(test_iface(inv, "enP2p1s0f1np1")->up_no_address);
	inventory_free(inv);

	inv = test_collect_fixture("gb10-onelink", "enP7s7");
	test_gb10_model_common(inv, 4);
	assert_false(test_iface(inv, "enp1s0f1np1")->up_no_address);
	assert_true(test_iface(inv, "enP2p1s0f1np1")->up_no_address);
	inventory_free(inv);
}

static void test_model_dual(void **state)
{
	Ring__Inventory *inv;

	(void)state;
	inv = test_collect_fixture("gb10-dual", "enP7s7");
	test_gb10_model_common(inv, 4);
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];

		if (f->management)
			continue;
		assert_int_equal(f->n_ipv4, 1);
		assert_int_equal(f->ipv4[0]->prefix, 30);
		assert_false(f->up_no_address);
		/* The larger of all (1, 2) and the device's (0, 0). */
		assert_int_equal(f->arp_ignore, 1);
		assert_int_equal(f->arp_announce, 2);
		assert_true(f->nominal_gbps == 55.5);
	}
	inventory_free(inv);
}

static void test_model_x2(void **state)
{
	const Ring__PhysPort *p;
	const Ring__PcieLink *l;
	Ring__Inventory *inv;

	(void)state;
	inv = test_collect_fixture("gb10-x2", "enP7s7");
	test_gb10_model_common(inv, 2);
	assert_true(test_iface(inv, "enp1s0f0np0")->nominal_gbps == 55.5);
	assert_true(test_iface(inv, "enP2p1s0f0np0")->nominal_gbps == 27.8);
	assert_true(test_iface(inv, "enP2p1s0f1np1")->nominal_gbps == 27.8);
	p = test_port(inv, "4cbb47fffe2a1040/p0");
	assert_true(p->aggregate_gbps == 83.3);
	/* The board's wiring is no difference to set right. */
	assert_string_equal(p->twins_differ, "");
	/* The root port above 0002:01:00 is itself x2: wired narrow. */
	l = test_link(inv, "0002:01:00");
	assert_string_equal(l->upstream, "0002:00:00.0");
	assert_int_equal(l->upstream_max_width, 2);
	assert_string_equal(l->upstream_max_speed, "32.0 GT/s PCIe");
	assert_string_equal(l->narrow, "wired_narrow");
	l = test_link(inv, "0000:01:00");
	assert_int_equal(l->upstream_max_width, 4);
	assert_string_equal(l->narrow, "");
	inventory_free(inv);

	/* The same x2 below a root port that can do x4: downtrained. */
	inv = test_collect_fixture("gb10-x2-down", "enP7s7");
	test_gb10_model_common(inv, 2);
	l = test_link(inv, "0002:01:00");
	assert_int_equal(l->upstream_max_width, 4);
	assert_string_equal(l->downtrained, "x2 of x4");
	assert_string_equal(l->narrow, "downtrained");
	assert_string_equal(test_port(inv, "4cbb47fffe2a1040/p0")->twins_differ,
			    "pcie width: enP2p1s0f0np0 x2, enp1s0f0np0 x4");
	inventory_free(inv);
}

/* Each PCI domain reports its own phys_switch_id: the twins still group
 * by sys_image_guid and bus:device.function, two ports of two functions
 * each, and the disagreement is named, not split on. */
static void test_model_swid(void **state)
{
	static const struct {
		const char *port, *a, *b, *differ;
	} want[] = {
		{"4cbb:4703:002a:1040/p0", "enP2p1s0f0np0", "enp1s0f0np0",
		 "enP2p1s0f0np0 4cbb47fffe2a1042, enp1s0f0np0 "
		 "4cbb47fffe2a1040"},
		{"4cbb:4703:002a:1040/p1", "enP2p1s0f1np1", "enp1s0f1np1",
		 "enP2p1s0f1np1 4cbb47fffe2a1042, enp1s0f1np1 "
		 "4cbb47fffe2a1040"},
	};
	const Ring__PhysPort *p;
	Ring__Inventory *inv;

	(void)state;
	inv = test_collect_fixture("gb10-swid", "enP7s7");
	assert_int_equal(inv->n_phys_ports, 2);
	assert_int_equal(inv->n_pcie_links, 2);
	for (size_t i = 0; i < 2; i++) {
		p = test_port(inv, want[i].port);
		assert_non_null(p);
		test_assert_names(p->interfaces, p->n_interfaces, want[i].a,
				  want[i].b);
		assert_string_equal(p->grouped_by, "pci");
		assert_string_equal(p->switch_ids_differ, want[i].differ);
		assert_string_equal(p->twins_differ, "");
		assert_true(p->speed_gbps == 200.0);
		assert_string_equal(test_iface(inv, want[i].a)->port_id,
				    want[i].port);
		assert_string_equal(test_iface(inv, want[i].b)->port_id,
				    want[i].port);
	}
	/* Each function keeps the switch id its domain reports. */
	assert_string_equal(test_iface(inv, "enP2p1s0f0np0")->phys_switch_id,
			    "4cbb47fffe2a1042");
	/* As in gb10: one half of each port addressed, the other unused. */
	assert_true(test_iface(inv, "enP2p1s0f0np0")->up_no_address);
	inventory_free(inv);

	/* Where the switch ids agree they name the port, as before, and
	 * the grouping says how it was made. */
	inv = test_collect_fixture("gb10", "enP7s7");
	p = test_port(inv, "4cbb47fffe2a1040/p0");
	assert_non_null(p);
	assert_string_equal(p->grouped_by, "pci");
	assert_string_equal(p->switch_ids_differ, "");
	inventory_free(inv);
	inv = test_collect_fixture("gb10-veth", "mgmt0");
	assert_string_equal(test_port(inv, "enp1s0f0np0")->grouped_by, "name");
	inventory_free(inv);
}

/* The max payload size from config space: 128 read in full on the 0000
 * functions; only 64 bytes readable on the 0002 ones, so 256 assumed. */
static void test_model_mps(void **state)
{
	const Ring__PcieLink *l;
	Ring__Inventory *inv;

	(void)state;
	inv = test_collect_fixture("gb10-mps", "enP7s7");
	l = test_link(inv, "0000:01:00");
	assert_int_equal(l->mps_bytes, 128);
	assert_string_equal(l->mps_source, "read");
	/* 126.0 x 128/154 x 0.97 */
	assert_true(l->usable_gbps == 101.6);
	assert_true(test_iface(inv, "enp1s0f0np0")->nominal_gbps == 50.8);
	l = test_link(inv, "0002:01:00");
	assert_int_equal(l->mps_bytes, 256);
	assert_string_equal(l->mps_source, "assumed");
	assert_true(l->usable_gbps == 111.0);
	inventory_free(inv);

	/* Fixtures without config files: assumed everywhere. */
	inv = test_collect_fixture("gb10", "enP7s7");
	assert_string_equal(test_link(inv, "0000:01:00")->mps_source,
			    "assumed");
	assert_int_equal(test_link(inv, "0000:01:00")->mps_bytes, 256);
	inventory_free(inv);
}

/* The capability walk on its own: encodings, a short read, a loop. */
static void test_pcie_mps(void **state)
{
	unsigned char cfg[256];

	(void)state;
	memset(cfg, 0, sizeof(cfg));
	cfg[0x06] = 0x10;
	cfg[0x34] = 0x40;
	cfg[0x40] = 0x01;
	cfg[0x41] = 0x60;
	cfg[0x60] = 0x10;
	for (unsigned enc = 0; enc < 8; enc++) {
		cfg[0x68] = (unsigned char)(enc << 5 | 0x10);
		assert_int_equal(inventory_pcie_mps(cfg, sizeof(cfg)),
				 enc <= 5 ? 128u << enc : 0);
	}
	cfg[0x68] = 0x30;
	assert_int_equal(inventory_pcie_mps(cfg, sizeof(cfg)), 256);
	/* What a user other than root reads: the first 64 bytes. */
	assert_int_equal(inventory_pcie_mps(cfg, 64), 0);
	assert_int_equal(inventory_pcie_mps(cfg, 0x69), 0);
	assert_int_equal(inventory_pcie_mps(cfg, 0x6a), 256);
	/* No capability list. */
	cfg[0x06] = 0;
	assert_int_equal(inventory_pcie_mps(cfg, sizeof(cfg)), 0);
	cfg[0x06] = 0x10;
	/* A list that loops without the PCIe capability ends. */
	cfg[0x60] = 0x05;
	cfg[0x61] = 0x40;
	assert_int_equal(inventory_pcie_mps(cfg, sizeof(cfg)), 0);
	assert_int_equal(inventory_pcie_mps(NULL, 0), 0);
}

/* docker0 up with 172.17.0.1, a veth member and a compose bridge: none
 * is a data port by default, all are named as ignored. */
static void test_model_docker(void **state)
{
	Ring__Inventory *inv;

	(void)state;
	inv = test_collect_fixture("gb10-docker", "enP7s7");
	assert_null(test_iface(inv, "docker0"));
	assert_null(test_iface(inv, "veth3f2a1b0"));
	assert_null(test_iface(inv, "br-5f3e9a1c0d2e"));
	assert_int_equal(inv->n_ignored_interfaces, 3);
	assert_string_equal(inv->ignored_interfaces[0], "br-5f3e9a1c0d2e");
	assert_string_equal(inv->ignored_interfaces[1], "docker0");
	assert_string_equal(inv->ignored_interfaces[2], "veth3f2a1b0");
	assert_int_equal(inv->n_interfaces, 5);
	test_gb10_model_common(inv, 4);
	inventory_free(inv);
}

/* The harness's twins: no PCI device, no phys_port_name. */
static void test_model_fallback(void **state)
{
	const Ring__PhysPort *p;
	const Ring__PcieLink *l;
	Ring__Inventory *inv;

	(void)state;
	inv = test_collect_fixture("gb10-veth", "mgmt0");
	assert_int_equal(inv->n_phys_ports, 2);
	assert_int_equal(inv->n_pcie_links, 2);
	p = test_port(inv, "enp1s0f0np0");
	assert_non_null(p);
	assert_string_equal(p->name, "p0");
	test_assert_names(p->interfaces, p->n_interfaces, "enP2p1s0f0np0",
			  "enp1s0f0np0");
	/* No PCIe figures: the port speed is all there is. */
	assert_true(p->speed_gbps == 10.0);
	assert_true(p->aggregate_gbps == 20.0);
	assert_string_equal(p->twins_differ, "");
	p = test_port(inv, "enp1s0f1np1");
	assert_non_null(p);
	assert_string_equal(p->twins_differ,
			    "mtu: enP2p1s0f1np1 1500, enp1s0f1np1 9000");
	l = test_link(inv, "0002:01:00");
	assert_non_null(l);
	test_assert_names(l->interfaces, l->n_interfaces, "enP2p1s0f0np0",
			  "enP2p1s0f1np1");
	assert_true(l->raw_gbps == 0.0);
	assert_string_equal(l->speed, "");
	assert_string_equal(test_iface(inv, "enp1s0f1np1")->pcie_link,
			    "0000:01:00");
	assert_string_equal(test_iface(inv, "enp1s0f1np1")->port_id,
			    "enp1s0f1np1");
	assert_string_equal(test_iface(inv, "enp1s0f1np1")->phys_port_name, "");
	assert_true(test_iface(inv, "enp1s0f1np1")->nominal_gbps == 10.0);
	assert_int_equal(test_iface(inv, "enp1s0f1np1")->arp_ignore, -1);
	inventory_free(inv);
}

static void test_parse_pname(void **state)
{
	struct inventory_pname p;

	(void)state;
	assert_int_equal(inventory_parse_pname("enP2p1s0f1np1", &p), 0);
	assert_int_equal(p.domain, 2);
	assert_int_equal(p.bus, 1);
	assert_int_equal(p.slot, 0);
	assert_int_equal(p.function, 1);
	assert_string_equal(p.port_name, "p1");
	assert_string_equal(p.twin_key, "enp1s0f1np1");
	assert_int_equal(inventory_parse_pname("enp1s0f0np0", &p), 0);
	assert_int_equal(p.domain, 0);
	assert_string_equal(p.twin_key, "enp1s0f0np0");
	assert_int_equal(inventory_parse_pname("enp3s0", &p), 0);
	assert_int_equal(p.bus, 3);
	assert_string_equal(p.port_name, "");
	assert_int_equal(inventory_parse_pname("enp129s0f1d1", &p), 0);
	assert_int_equal(p.bus, 129);
	assert_int_equal(inventory_parse_pname("enP7s7", &p), -1);
	assert_int_equal(inventory_parse_pname("eth0", &p), -1);
	assert_int_equal(inventory_parse_pname("enp1s0f9", &p), -1);
	assert_int_equal(inventory_parse_pname("enp256s0", &p), -1);
	assert_int_equal(inventory_parse_pname("enp1s0x", &p), -1);
	assert_int_equal(inventory_parse_pname("enp1s0n", &p), -1);
	assert_int_equal(inventory_parse_pname("enp1s0.100", &p), -1);
	assert_int_equal(inventory_parse_pname(NULL, &p), -1);
}

static void test_usable_gbps(void **state)
{
	(void)state;
	assert_true(inventory_pcie_usable_gbps(126.0, 0) == 111.0);
	assert_true(inventory_pcie_usable_gbps(63.0, 0) == 55.5);
	assert_true(inventory_pcie_usable_gbps(504.1, 0) == 443.9);
	assert_true(inventory_pcie_usable_gbps(0.0, 0) == 0.0);
	assert_true(inventory_pcie_usable_gbps(-1.0, 0) == 0.0);
	assert_true(inventory_pcie_usable_gbps(126.0, 256) == 111.0);
	assert_true(inventory_pcie_usable_gbps(126.0, 128) == 101.6);
}

/* --print-inventory's JSON: escaping, nested messages, repeated fields. */
static void test_json(void **state)
{
	Ring__Inventory *inv;
	char *js;

	(void)state;
	inv = test_collect_fixture("gb10-x2", "enP7s7");
	js = inventory_json_string(&inv->base);
	assert_non_null(js);
	assert_non_null(strstr(js, "\"node\":\"spark1\""));
	assert_non_null(strstr(js, "\"downtrained\":\"x2 of x4\""));
	assert_non_null(strstr(js, "\"usable_gbps\":55.5"));
	assert_non_null(strstr(js, "\"memory\":{\"total_kib\":127611264,"));
	assert_non_null(strstr(js, "\"ipv4\":[{\"address\":\"192.168.100.5\","
				   "\"prefix\":30}]"));
	assert_non_null(strstr(js, "\"arp_ignore\":-1"));
	assert_string_equal(js + strlen(js) - 2, "}\n");
	free(js);

	/* Quote, backslash, control characters, bad UTF-8, good UTF-8. */
	inv->interfaces[0]->mac[0] = '\0';
	free(inv->node);
	inv->node = strdup("a\"b\\c\n\x01\xff\xc3\xa9");
	assert_non_null(inv->node);
	js = inventory_json_string(&inv->base);
	assert_non_null(js);
	assert_non_null(strstr(
		js, "\"node\":\"a\\\"b\\\\c\\n\\u0001\\u00ff\xc3\xa9\""));
	free(js);
	inventory_free(inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gb10_top),
		cmocka_unit_test(test_gb10_interfaces),
		cmocka_unit_test(test_gb10_globs),
		cmocka_unit_test(test_veth),
		cmocka_unit_test(test_changed),
		cmocka_unit_test(test_pcie_gbps),
		cmocka_unit_test(test_iface_of_address),
		cmocka_unit_test(test_mem_available),
		cmocka_unit_test(test_real_machine),
		cmocka_unit_test(test_model_gb10),
		cmocka_unit_test(test_model_dual),
		cmocka_unit_test(test_model_x2),
		cmocka_unit_test(test_model_swid),
		cmocka_unit_test(test_model_mps),
		cmocka_unit_test(test_pcie_mps),
		cmocka_unit_test(test_model_docker),
		cmocka_unit_test(test_model_fallback),
		cmocka_unit_test(test_parse_pname),
		cmocka_unit_test(test_usable_gbps),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
