/* The hardware model behind the data interfaces: PCIe links (functions
 * grouped by domain:bus:device) and physical ports (functions grouped by
 * adapter, bus:device and function, twins when more than one), each function's
 * nominal rate, and the ARP sysctls that matter when twins share a subnet.
 * docs/HARDWARE.md describes the model and cites its sources. */
#ifndef RING_INVENTORY_HW_H
#define RING_INVENTORY_HW_H

#include "ring.pb-c.h"

/* Usable PCIe payload bandwidth of a link whose raw rate (after line
 * encoding, inventory_pcie_gbps()) is raw_gbps: raw x MPS / (MPS + TLP
 * overhead) x (1 - DLLP share), with mps bytes of payload (0: the 256
 * assumed where it cannot be read), 26 bytes per TLP and 3% for DLLPs
 * (constants in inventory_hw.c). One decimal; 0 for 0. Gen5 x4: 126.0 ->
 * 111.0 at 256, 101.6 at 128. */
double inventory_pcie_usable_gbps(double raw_gbps, unsigned mps);

/* What a systemd predictable name says about its PCI function:
 * en[P<domain>]p<bus>s<slot>[f<function>][n<port name>|d<dev_port>]. */
struct inventory_pname {
	unsigned domain, bus, slot, function;
	char port_name[16]; /* after 'n', "" if none */
	/* The name without its P<domain> part: twins of one port share it
	 * ("enP2p1s0f0np0" -> "enp1s0f0np0"). */
	char twin_key[32];
};

/* 0 and out filled, or -1 (EINVAL) when name is not such a name. */
int inventory_parse_pname(const char *name, struct inventory_pname *out);

/* Fill the model into inv, whose interfaces have been collected from
 * sysfs_root: each data interface's phys_port_name, phys_switch_id,
 * port_id, pcie_link, nominal_gbps, arp_ignore and arp_announce (read
 * under procfs_root), and inv->pcie_links and inv->phys_ports. The
 * management interface takes no part. -1 (ENOMEM) on allocation failure
 * only. */
int inventory_hw_model(Ring__Inventory *inv, const char *sysfs_root,
		       const char *procfs_root);

/* Free what inventory_hw_model added (called by inventory_free). */
void inventory_hw_free(Ring__Inventory *inv);
void inventory_hw_free_iface(Ring__NetInterface *ifc);

#endif
