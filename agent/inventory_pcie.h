/* What the agent reads of a PCIe link beyond sysfs' link files: the max
 * payload size from the function's PCIe capability in config space, and
 * the Link Capabilities of the port above the device (its link partner).
 * docs/HARDWARE.md says what each figure decides. */
#ifndef RING_INVENTORY_PCIE_H
#define RING_INVENTORY_PCIE_H

#include <stddef.h>

/* The max payload size (bytes) in Device Control of the PCIe capability
 * of config space cfg (len bytes as read: 64 for a user other than root
 * on Linux, up to 4096 for root); 0 when the capability list does not
 * reach it within len, or the encoding is reserved. */
unsigned inventory_pcie_mps(const unsigned char *cfg, size_t len);

struct inventory_pcie_up {
	char addr[16];	    /* "0002:00:00.0"; "" when not a PCI port */
	char max_speed[64]; /* its max_link_speed; "" unreadable */
	unsigned max_width; /* its max_link_width; 0 unreadable */
};

/* Of the netdev ifname under sysfs_root: *mps from its config file (0
 * when unreadable there) and *up from the parent directory of its PCI
 * device. 0, or -1 (errno) when the netdev has no PCI device. */
int inventory_pcie_read(const char *sysfs_root, const char *ifname,
			unsigned *mps, struct inventory_pcie_up *up);

#endif
