/* Every fixture tree under tests/fixtures/ (each directory with a sys/),
 * found at run time, so a capture an operator sends and someone drops in
 * is tested without a line of code: the inventory builds through the
 * agent's own code (inventory_tree.h's loading, as --print-inventory
 * does), has an interface, survives the wire and the coordinator's
 * validate(); and ring-agent --capture of the tree loads back to the same
 * inventory, and with --anonymise to one of the same structure. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/capture.h"
#include "agent/inventory.h"
#include "agent/inventory_json.h"
#include "agent/inventory_tree.h"
#include "coordinator/validate.h"

static const char *fixtures_root(void)
{
	const char *root = getenv("RING_FIXTURES");

	return root && *root ? root : "tests/fixtures";
}

/* The inventory of the tree at root, as --print-inventory builds it. */
static Ring__Inventory *load(const char *root)
{
	struct agent_conf c;
	struct ifaddrs *addrs = NULL;
	struct inventory_src src = {
		.sysfs_root = root,
		.procfs_root = root,
		.from_tree = 1,
	};
	char why[PATH_MAX + 128];
	Ring__Inventory *inv;
	int rc;

	agent_conf_defaults(&c);
	snprintf(c.node, sizeof(c.node), "n1");
	rc = inventory_tree_addrs(root, &addrs, why, sizeof(why));
	if (rc < 0)
		print_message("%s\n", why);
	assert_true(rc >= 0);
	src.addrs = addrs;
	inv = inventory_collect(&c, &src);
	inventory_tree_addrs_free(addrs);
	assert_non_null(inv);
	return inv;
}

static uint8_t *pack(const Ring__Inventory *inv, size_t *len)
{
	uint8_t *buf;

	*len = ring__inventory__get_packed_size(inv);
	buf = malloc(*len ? *len : 1);
	assert_non_null(buf);
	ring__inventory__pack(inv, buf);
	return buf;
}

/* Built, with an interface, as JSON, over the wire and past validate(). */
static void check_one(const char *name, const Ring__Inventory *inv)
{
	Ring__Inventory *back;
	uint8_t *buf, *again;
	size_t len, len2;
	char why[256] = "", *json;

	print_message("%s: %zu interfaces, %zu RDMA devices, %zu ports, %zu "
		      "PCIe links\n",
		      name, inv->n_interfaces, inv->n_rdma_devices,
		      inv->n_phys_ports, inv->n_pcie_links);
	assert_true(inv->n_interfaces >= 1);
	json = inventory_json_string(&inv->base);
	assert_non_null(json);
	assert_non_null(strstr(json, inv->interfaces[0]->name));
	free(json);
	buf = pack(inv, &len);
	back = ring__inventory__unpack(NULL, len, buf);
	assert_non_null(back);
	if (validate_inventory(back, why, sizeof(why)) < 0)
		print_message("%s: validate: %s\n", name, why);
	assert_int_equal(validate_inventory(back, why, sizeof(why)), 0);
	again = pack(back, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, again, len);
	free(again);
	free(buf);
	ring__inventory__free_unpacked(back, NULL);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* The structure --anonymise must keep: names, ports and their
 * interfaces, links, and which addresses share a subnet. */
static void same_structure(const Ring__Inventory *a, const Ring__Inventory *b)
{
	assert_int_equal(a->n_interfaces, b->n_interfaces);
	assert_int_equal(a->n_phys_ports, b->n_phys_ports);
	assert_int_equal(a->n_pcie_links, b->n_pcie_links);
	for (size_t i = 0; i < a->n_phys_ports; i++) {
		assert_int_equal(a->phys_ports[i]->n_interfaces,
				 b->phys_ports[i]->n_interfaces);
		for (size_t j = 0; j < a->phys_ports[i]->n_interfaces; j++)
			assert_string_equal(a->phys_ports[i]->interfaces[j],
					    b->phys_ports[i]->interfaces[j]);
	}
	for (size_t i = 0; i < a->n_pcie_links; i++)
		assert_string_equal(a->pcie_links[i]->id, b->pcie_links[i]->id);
	for (size_t i = 0; i < a->n_interfaces; i++) {
		const Ring__NetInterface *x = a->interfaces[i],
					 *y = b->interfaces[i];

		assert_string_equal(x->name, y->name);
		assert_int_equal(x->n_ipv4, y->n_ipv4);
		assert_true(!*x->mac || strcmp(x->mac, y->mac) ||
			    !strcmp(x->mac, "00:00:00:00:00:00"));
		assert_true(x->nominal_gbps == y->nominal_gbps);
		for (size_t k = 0; k < x->n_ipv4; k++) {
			assert_int_equal(x->ipv4[k]->prefix,
					 y->ipv4[k]->prefix);
			assert_string_not_equal(x->ipv4[k]->address,
						y->ipv4[k]->address);
		}
	}
	/* Two addresses share a subnet before iff they do after. */
	for (size_t i = 0; i < a->n_interfaces; i++)
		for (size_t j = 0; j < a->n_interfaces; j++) {
			const Ring__NetInterface *x = a->interfaces[i],
						 *y = a->interfaces[j];
			const Ring__NetInterface *u = b->interfaces[i],
						 *v = b->interfaces[j];

			if (!x->n_ipv4 || !y->n_ipv4)
				continue;
			uint32_t p = x->ipv4[0]->prefix, m;
			struct in_addr ax, ay, au, av;

			m = p ? htonl(~0u << (32 - p)) : 0;
			inet_pton(AF_INET, x->ipv4[0]->address, &ax);
			inet_pton(AF_INET, y->ipv4[0]->address, &ay);
			inet_pton(AF_INET, u->ipv4[0]->address, &au);
			inet_pton(AF_INET, v->ipv4[0]->address, &av);
			assert_int_equal((ax.s_addr & m) == (ay.s_addr & m),
					 (au.s_addr & m) == (av.s_addr & m));
		}
}

/* Captured (plainly and anonymised) from the tree, loaded back. */
static void check_capture(const char *root, const Ring__Inventory *inv)
{
	char tmpl[] = "/tmp/ringd-fixture-XXXXXX", dir[PATH_MAX], why[512];
	struct capture_result res;
	struct agent_conf c;
	Ring__Inventory *back;
	uint8_t *a, *b;
	size_t la, lb;
	int rc;

	assert_non_null(mkdtemp(tmpl));
	agent_conf_defaults(&c);
	assert_true(strlen(root) < sizeof(c.sysfs_root));
	memcpy(c.sysfs_root, root, strlen(root) + 1);
	memcpy(c.procfs_root, root, strlen(root) + 1);
	for (int anon = 0; anon < 2; anon++) {
		snprintf(dir, sizeof(dir), "%s/%s", tmpl,
			 anon ? "anon" : "plain");
		rc = capture_run(&c, dir, anon, &res, why, sizeof(why));
		if (rc < 0)
			print_message("capture: %s\n", why);
		assert_int_equal(rc, 0);
		/* Once there, DIR is refused, never added to. */
		assert_int_equal(
			capture_run(&c, dir, anon, &res, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "not empty"));
		back = load(dir);
		if (!anon) {
			a = pack(inv, &la);
			b = pack(back, &lb);
			assert_int_equal(la, lb);
			assert_memory_equal(a, b, la);
			free(a);
			free(b);
		} else {
			same_structure(inv, back);
			check_one("anonymised", back);
		}
		inventory_free(back);
	}
	assert_int_equal(nftw(tmpl, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void test_every_fixture(void **state)
{
	const char *top = fixtures_root();
	struct dirent **list;
	unsigned seen = 0;
	int n;

	(void)state;
	n = scandir(top, &list, NULL, alphasort);
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		char root[PATH_MAX], sys[PATH_MAX + 8];
		struct stat st;
		Ring__Inventory *inv;

		snprintf(root, sizeof(root), "%s/%s", top, list[i]->d_name);
		snprintf(sys, sizeof(sys), "%s/sys", root);
		if (list[i]->d_name[0] == '.' || stat(sys, &st) < 0 ||
		    !S_ISDIR(st.st_mode)) {
			free(list[i]);
			continue;
		}
		inv = load(root);
		check_one(list[i]->d_name, inv);
		check_capture(root, inv);
		inventory_free(inv);
		seen++;
		free(list[i]);
	}
	free(list);
	/* gb10, -dual, -x2, -docker, -onelink, -veth, veth at least. */
	assert_true(seen >= 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
