/* ring-agent --capture and the tree it writes: the libibverbs view read
 * back from the sysfs layout (inventory_tree.c), --anonymise's promises
 * (capture_anon.h: prefixes kept, consistent, nothing original left, the
 * GID of an address mapped as the address is), links out of sys/ never
 * followed, and the refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/capture.h"
#include "agent/capture_anon.h"
#include "agent/inventory.h"
#include "agent/inventory_tree.h"

static char top[64];

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX], dir[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	for (char *p = path + strlen(top) + 1; (p = strchr(p, '/')); p++) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(p - path), path);
		mkdir(dir, 0755);
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", text);
	fclose(f);
}

static void link_at(const char *rel, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	assert_int_equal(symlink(target, path), 0);
}

#define DEV "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
#define IB DEV "/infiniband/mlx5_0/ports/1/"

/* A node as the kernel shows it: a netdev on a PCI function with one
 * RoCE device, mlx5's four GIDs (and an unpopulated fifth), a second
 * device the configuration leaves out, a link out of sys/. */
static void make_node(void)
{
	static const char *const gids[] = {
		"fe80:0000:0000:0000:4ebb:47ff:fe2a:1040",
		"fe80:0000:0000:0000:4ebb:47ff:fe2a:1040",
		"0000:0000:0000:0000:0000:ffff:c0a8:6401",
		"0000:0000:0000:0000:0000:ffff:c0a8:6401",
		"0000:0000:0000:0000:0000:0000:0000:0000"};
	static const char *const types[] = {"IB/RoCE v1", "RoCE v2",
					    "IB/RoCE v1", "RoCE v2"};
	char rel[256];

	snprintf(top, sizeof(top), "/tmp/ringd-capture-XXXXXX");
	assert_non_null(mkdtemp(top));
	put("sys/class/net/enp1s0f0np0/address", "4c:bb:47:2a:10:40");
	put("sys/class/net/enp1s0f0np0/ifindex", "3");
	put("sys/class/net/enp1s0f0np0/mtu", "9000");
	put("sys/class/net/enp1s0f0np0/flags", "0x1003");
	put("sys/class/net/enp1s0f0np0/carrier", "1");
	put("sys/class/net/enp1s0f0np0/speed", "200000");
	put("sys/class/net/enp1s0f0np0/operstate", "up");
	put("sys/class/net/enp1s0f0np0/phys_port_name", "p0");
	put("sys/class/net/enp1s0f0np0/phys_switch_id", "4cbb4703002a1040");
	put("sys/class/net/enp1s0f0np0/statistics/rx_errors", "0");
	link_at("sys/class/net/enp1s0f0np0/device",
		"../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0");
	/* Out of sys/: neither followed nor copied. */
	put("outside/secret", "do not copy");
	put("sys/class/net/evil0/address", "02:00:00:00:00:01");
	link_at("sys/class/net/evil0/device", "../../../../outside");
	link_at("sys/class/net/evil1", "../../../outside");
	put(DEV "/current_link_speed", "32.0 GT/s PCIe");
	put(DEV "/current_link_width", "4");
	put(DEV "/max_link_speed", "32.0 GT/s PCIe");
	put(DEV "/max_link_width", "4");
	put(DEV "/config", "not really 256 bytes");
	put("sys/devices/pci0000:00/0000:00:01.0/config", "upstream");
	put("sys/bus/pci/drivers/mlx5_core/uevent", "");
	link_at(DEV "/driver", "../../../../bus/pci/drivers/mlx5_core");
	put(DEV "/infiniband/mlx5_0/node_guid", "4cbb:4703:002a:1040");
	put(DEV "/infiniband/mlx5_0/sys_image_guid", "4cbb:4703:002a:1040");
	put(DEV "/infiniband/mlx5_0/fw_ver", "28.39.1002");
	put(IB "state", "4: ACTIVE");
	put(IB "rate", "200 Gb/sec (4X HDR)");
	put(IB "link_layer", "Ethernet");
	put(IB "active_mtu", "4096");
	put(IB "counters/port_xmit_data", "12345");
	for (int i = 0; i < 5; i++) {
		snprintf(rel, sizeof(rel), IB "gids/%d", i);
		put(rel, gids[i]);
		if (i == 4)
			continue;
		snprintf(rel, sizeof(rel), IB "gid_attrs/types/%d", i);
		put(rel, types[i]);
		snprintf(rel, sizeof(rel), IB "gid_attrs/ndevs/%d", i);
		put(rel, "enp1s0f0np0");
	}
	put("sys/class/infiniband/.keep", "");
	link_at("sys/class/infiniband/mlx5_0",
		"../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/"
		"infiniband/mlx5_0");
	put("sys/class/infiniband/rxe9/node_guid", "0000:0000:0000:0001");
	put("proc/meminfo", "MemTotal: 100 kB\nMemAvailable: 50 kB");
	put("proc/sys/kernel/hostname", "spark-secret-7");
	put("proc/sys/kernel/osrelease", "6.11.0-1016-nvidia");
	put("proc/net/arp",
	    "IP address       HW type     Flags       HW address            "
	    "Mask     Device\n"
	    "192.168.100.2    0x1         0x2         4c:bb:47:2a:20:40     "
	    "*        enp1s0f0np0");
	put("proc/net/route",
	    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask"
	    "\t\tMTU\tWindow\tIRTT\n"
	    "enp1s0f0np0\t0064A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0"
	    "\t0");
	put("addrs", "enp1s0f0np0 192.168.100.1/24");
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void conf_for(struct agent_conf *c, const char *root)
{
	agent_conf_defaults(c);
	snprintf(c->node, sizeof(c->node), "n1");
	assert_true(strlen(root) < sizeof(c->sysfs_root));
	memcpy(c->sysfs_root, root, strlen(root) + 1);
	memcpy(c->procfs_root, root, strlen(root) + 1);
	snprintf(c->rdma_globs[0], sizeof(c->rdma_globs[0]), "mlx5_*");
	c->n_rdma_globs = 1;
}

static Ring__Inventory *load(const char *root)
{
	struct agent_conf c;
	struct ifaddrs *addrs = NULL;
	struct inventory_src src = {
		.sysfs_root = root, .procfs_root = root, .from_tree = 1};
	char why[PATH_MAX + 128];
	Ring__Inventory *inv;

	conf_for(&c, root);
	assert_int_equal(inventory_tree_addrs(root, &addrs, why, sizeof(why)),
			 0);
	src.addrs = addrs;
	inv = inventory_collect(&c, &src);
	inventory_tree_addrs_free(addrs);
	assert_non_null(inv);
	return inv;
}

/* What libibverbs would have said, from the sysfs layout. */
static void test_tree_rdma(void **state)
{
	Ring__Inventory *inv;
	const Ring__RdmaPort *p;

	(void)state;
	make_node();
	inv = load(top);
	assert_string_equal(inv->hostname, "spark-secret-7");
	assert_string_equal(inv->kernel, "6.11.0-1016-nvidia");
	assert_int_equal(inv->n_rdma_devices, 1); /* rxe9: not mlx5_* */
	assert_string_equal(inv->rdma_devices[0]->name, "mlx5_0");
	assert_string_equal(inv->rdma_devices[0]->node_guid,
			    "4cbb:4703:002a:1040");
	assert_string_equal(inv->rdma_devices[0]->fw_ver, "28.39.1002");
	assert_int_equal(inv->rdma_devices[0]->n_ports, 1);
	p = inv->rdma_devices[0]->ports[0];
	assert_int_equal(p->port, 1);
	assert_string_equal(p->state, "active"); /* ibv_port_state_str */
	assert_string_equal(p->link_layer, "Ethernet");
	assert_int_equal(p->active_width, 4);
	assert_true(p->active_speed_gbps == 200.0);
	assert_int_equal(p->active_mtu, 4096);
	assert_string_equal(p->netdev, "enp1s0f0np0");
	assert_int_equal(p->n_gids, 4); /* the zero entry left out */
	assert_string_equal(p->gids[0]->gid, "fe80::4ebb:47ff:fe2a:1040");
	assert_string_equal(p->gids[0]->type, "RoCE v1");
	assert_string_equal(p->gids[1]->type, "RoCE v2");
	assert_string_equal(p->gids[3]->gid, "::ffff:192.168.100.1");
	assert_int_equal(p->gids[3]->index, 3);
	/* The source's own reading follows evil1 out; a capture does not. */
	assert_int_equal(inv->n_interfaces, 3);
	assert_string_equal(inv->interfaces[0]->name, "enp1s0f0np0");
	assert_string_equal(inv->interfaces[0]->rdma_device, "mlx5_0");
	assert_string_equal(inv->interfaces[0]->ipv4[0]->address,
			    "192.168.100.1");
	inventory_free(inv);
	assert_int_equal(nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* Every regular file of the tree at root, searched for s. */
static const char *found_in;

static int grep_one(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	static char buf[65536];
	ssize_t n;
	int fd;

	(void)ftw;
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (strstr(buf, found_in)) {
		print_message("%s holds %s\n", path, found_in);
		return 1;
	}
	return 0;
}

static int tree_has(const char *root, const char *s)
{
	found_in = s;
	return nftw(root, grep_one, 16, FTW_PHYS) == 1;
}

static void test_capture_anonymised(void **state)
{
	static const char *const secrets[] = {
		"4c:bb:47:2a:10:40", "4c:bb:47:2a:20:40",   "192.168.100.1",
		"192.168.100.2",     "4cbb:4703:002a:1040", "4cbb4703002a1040",
		"47ff:fe2a:1040",    "c0a8:6401",	    "spark-secret-7",
		"0064A8C0",	     "do not copy"};
	char dir[PATH_MAX], path[PATH_MAX + 64], why[512], text[64];
	struct capture_result res;
	struct agent_conf c;
	Ring__Inventory *a, *b;
	const Ring__RdmaPort *p;
	struct stat st;

	(void)state;
	make_node();
	conf_for(&c, top);
	snprintf(dir, sizeof(dir), "%s/out", top);
	assert_int_equal(capture_run(&c, dir, 1, &res, why, sizeof(why)), 0);
	assert_true(res.notes > 0); /* the links out, the short config */
	snprintf(path, sizeof(path), "%s.tmp", dir);
	assert_int_equal(stat(path, &st), -1); /* renamed away */
	/* Nothing original in any file, and nothing from outside sys/. */
	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
		assert_false(tree_has(dir, secrets[i]));
	snprintf(path, sizeof(path), "%s/sys/class/net/evil1", dir);
	assert_int_equal(lstat(path, &st), -1);
	snprintf(path, sizeof(path), "%s/sys/class/net/evil0/device", dir);
	assert_int_equal(lstat(path, &st), -1);
	snprintf(path, sizeof(path), "%s/sys/class/net/enp1s0f0np0/device",
		 dir);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_true(tree_has(dir, "anonymised: yes"));

	a = load(top);
	b = load(dir);
	/* The structure as it was; the identifiers not. */
	assert_int_equal(a->n_interfaces, 3);
	assert_int_equal(b->n_interfaces, 2); /* evil1 left out */
	assert_int_equal(b->n_rdma_devices, 1);
	assert_int_equal(b->n_phys_ports, a->n_phys_ports - 1);
	assert_string_equal(b->interfaces[0]->rdma_device, "mlx5_0");
	assert_int_equal(b->interfaces[0]->ipv4[0]->prefix, 24);
	assert_true(!strncmp(b->interfaces[0]->mac, "4c:bb:47:", 9));
	assert_true(!strncmp(b->rdma_devices[0]->node_guid, "4cbb:47", 7));
	assert_string_not_equal(b->hostname, a->hostname);
	/* The switch id and the image GUID had one value: still one. */
	assert_string_equal(b->interfaces[0]->port_id + 16, "/p0");
	p = b->rdma_devices[0]->ports[0];
	assert_int_equal(p->n_gids, 4);
	assert_string_equal(p->gids[1]->type, "RoCE v2");
	/* The GID of an address is the mapped address's GID. */
	snprintf(text, sizeof(text), "::ffff:%s",
		 b->interfaces[0]->ipv4[0]->address);
	assert_string_equal(p->gids[3]->gid, text);
	assert_true(!strncmp(p->gids[0]->gid, "fe80::", 6));
	inventory_free(a);
	inventory_free(b);
	assert_int_equal(nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void test_capture_refusals(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], why[512];
	struct capture_result res;
	struct agent_conf c;

	(void)state;
	make_node();
	conf_for(&c, top);
	snprintf(dir, sizeof(dir), "%s/out", top);
	/* A leftover DIR.tmp: named, not removed. */
	snprintf(path, sizeof(path), "%s.tmp", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(capture_run(&c, dir, 0, &res, why, sizeof(why)), -1);
	assert_non_null(strstr(why, path));
	assert_non_null(strstr(why, "remove it"));
	assert_int_equal(rmdir(path), 0);
	/* An empty DIR is taken; a second capture into it refused. */
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(capture_run(&c, dir, 0, &res, why, sizeof(why)), 0);
	assert_int_equal(capture_run(&c, dir, 0, &res, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "not empty"));
	/* A source that is not there: its path named. */
	snprintf(c.sysfs_root, sizeof(c.sysfs_root), "/nonexistent/tree");
	snprintf(dir, sizeof(dir), "%s/out2", top);
	assert_int_equal(capture_run(&c, dir, 0, &res, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "/nonexistent/tree/sys"));
	snprintf(path, sizeof(path), "%s.tmp", dir);
	assert_int_equal(access(path, F_OK), -1); /* cleaned up */
	assert_int_equal(nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static unsigned common_prefix(uint32_t a, uint32_t b)
{
	return a == b ? 32 : (unsigned)__builtin_clz(a ^ b);
}

static void test_anon_ipv4(void **state)
{
	struct capture_anon an;
	uint32_t base = 0xc0a86401; /* 192.168.100.1 */

	(void)state;
	assert_int_equal(capture_anon_init(&an), 0);
	srandom(1);
	for (int i = 0; i < 2000; i++) {
		uint32_t x = (uint32_t)random() ^ ((uint32_t)random() << 16);
		uint32_t y = x ^ (uint32_t)(random() & 0xffff);
		uint32_t mx, my;

		if ((x >> 24) == 0 || (x >> 24) == 127 || (x >> 24) >= 224)
			continue;
		mx = capture_anon_ipv4(&an, x);
		my = capture_anon_ipv4(&an, y);
		assert_int_equal(mx, capture_anon_ipv4(&an, x));
		assert_true(mx != x);
		assert_int_equal(mx >> 24, x >> 24);
		assert_int_equal(mx & 0xff, x & 0xff);
		assert_int_equal(common_prefix(mx, my), common_prefix(x, y));
	}
	assert_int_equal(capture_anon_ipv4(&an, 0x7f000001), 0x7f000001);
	assert_int_equal(capture_anon_ipv4(&an, 0), 0);
	/* The GID of an address follows the address. */
	{
		char want[64], got[64], a[32];
		struct in_addr in = {.s_addr = htonl(base)};

		inet_ntop(AF_INET, &in, a, sizeof(a));
		assert_int_equal(
			capture_anon_ipv4_text(&an, a, want, sizeof(want)), 0);
		assert_int_equal(capture_anon_ipv6_text(&an,
							"::ffff:192.168.100.1",
							got, sizeof(got)),
				 0);
		assert_string_equal(got + 7, want);
	}
}

static void test_anon_ids(void **state)
{
	struct capture_anon an;
	char a[64], b[64], c[64];

	(void)state;
	assert_int_equal(capture_anon_init(&an), 0);
	/* One value, three spellings: one result, spelled as it came. */
	assert_int_equal(
		capture_anon_hex_text(&an, "4cbb:4703:002a:1040", a, sizeof(a)),
		0);
	assert_int_equal(
		capture_anon_hex_text(&an, "4cbb4703002a1040", b, sizeof(b)),
		0);
	assert_int_equal(
		capture_anon_hex_text(&an, "4CBB4703002A1040", c, sizeof(c)),
		0);
	assert_int_equal(strlen(a), 19);
	assert_int_equal(a[4], ':');
	assert_true(!strncmp(a, "4cbb:47", 7));
	assert_string_not_equal(a, "4cbb:4703:002a:1040");
	for (size_t i = 0, j = 0; a[i]; i++)
		if (a[i] != ':')
			assert_int_equal(a[i], b[j++]);
	assert_int_equal(strcasecmp(b, c), 0);
	assert_true(c[15] == (char)toupper((unsigned char)c[15]));
	assert_int_equal(
		capture_anon_hex_text(&an, "4c:bb:47:2a:10:40", a, sizeof(a)),
		0);
	assert_true(!strncmp(a, "4c:bb:47:", 9));
	assert_string_not_equal(a, "4c:bb:47:2a:10:40");
	assert_int_equal(
		capture_anon_hex_text(&an, "00:00:00:00:00:00", a, sizeof(a)),
		0);
	assert_string_equal(a, "00:00:00:00:00:00");
	assert_int_equal(capture_anon_hex_text(&an, "p0", a, sizeof(a)), -1);
	capture_anon_hostname(&an, "spark1", a, sizeof(a));
	capture_anon_hostname(&an, "spark1", b, sizeof(b));
	assert_string_equal(a, b);
	assert_true(!strncmp(a, "host-", 5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_rdma),
		cmocka_unit_test(test_capture_anonymised),
		cmocka_unit_test(test_capture_refusals),
		cmocka_unit_test(test_anon_ipv4),
		cmocka_unit_test(test_anon_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
