/* A captured or fixture tree read back (ring-agent --capture writes one,
 * tests/fixtures/ holds others): what a live node's inventory takes from
 * outside sysfs and procfs, from the tree's files instead. ROOT/addrs
 * stands for getifaddrs ("IFNAME ADDRESS/PREFIX" a line, IPv4), and
 * ROOT/sys/class/infiniband for libibverbs (the devices, their ports'
 * state, rate, link layer and GID tables in the kernel's sysfs layout,
 * plus ports/N/active_mtu, which sysfs lacks and the capture writes from
 * ibv_query_port). */
#ifndef RING_INVENTORY_TREE_H
#define RING_INVENTORY_TREE_H

#include <ifaddrs.h>
#include <stddef.h>

#include "agent_conf.h"
#include "ring.pb-c.h"

/* Most lines an addrs file may have. */
#define INVENTORY_TREE_MAX_ADDRS 4096

/* ROOT/addrs as a getifaddrs list in *out (NULL when the file is empty).
 * 0; 1 when there is no such file (*out NULL); -1 with errno and why
 * (naming the file and line) on a bad or unreadable file. Free the list
 * with inventory_tree_addrs_free. */
int inventory_tree_addrs(const char *root, struct ifaddrs **out, char *why,
			 size_t len);
void inventory_tree_addrs_free(struct ifaddrs *list);

/* Add the RDMA devices under sysfs_root/sys/class/infiniband that conf's
 * rdma_device patterns allow, sorted by name, as inventory_collect's
 * libibverbs pass would on the live node. 0, or -1 (ENOMEM). */
int inventory_tree_rdma(Ring__Inventory *inv, const struct agent_conf *conf,
			const char *sysfs_root);

#endif
