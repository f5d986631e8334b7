/* What a node is made of: data interfaces (sysfs + addresses), RDMA devices
 * (libibverbs), memory (procfs). Roots are configurable so tests run the
 * same code on fixture trees. */
#ifndef RING_INVENTORY_H
#define RING_INVENTORY_H

#include <ifaddrs.h>

#include "agent_conf.h"
#include "ring.pb-c.h"

struct inventory_src {
	const char *sysfs_root;	     /* prefix before /sys/...; "" = real */
	const char *procfs_root;     /* prefix before /proc/...; "" = real */
	const struct ifaddrs *addrs; /* IPv4 addresses (getifaddrs list) */
	const char *mgmt_interface; /* excluded from data interfaces, flagged */
	const char *mgmt_address;
	int with_rdma; /* query libibverbs */
	/* sysfs_root is a captured or fixture tree (inventory_tree.h):
	 * without with_rdma, RDMA devices come from its sysfs layout; the
	 * hostname and kernel release from procfs_root/proc/sys/kernel/
	 * where the tree has them. */
	int from_tree;
};

/* Build a new inventory. conf chooses data interfaces and nominal speeds.
 * Returns NULL with errno set only on allocation failure; missing sysfs
 * files just leave fields empty, no RDMA device is normal. */
Ring__Inventory *inventory_collect(const struct agent_conf *conf,
				   const struct inventory_src *src);
void inventory_free(Ring__Inventory *inv);
/* 1 when a and b differ in anything but the fast-moving memory figure. */
int inventory_changed(const Ring__Inventory *a, const Ring__Inventory *b);
/* MemAvailable in KiB from procfs_root/proc/meminfo, 0 if unknown. */
unsigned long long inventory_mem_available_kib(const char *procfs_root);
/* Find the interface owning an IPv4 address (dotted) in an ifaddrs list;
 * copies its name into buf. 0 or -1. */
int inventory_iface_of_address(const struct ifaddrs *addrs, const char *addr,
			       char *buf, size_t len);
/* PCIe bandwidth in Gbit/s after line encoding: "32.0 GT/s PCIe" x4 ->
 * 126.0. 0 when unknown. */
double inventory_pcie_gbps(const char *link_speed, unsigned width);

/* "IB", "RoCE v1", "RoCE v2" for an enum ibv_gid_type; "" if unknown. */
const char *inventory_gid_type(uint32_t type);

#endif
