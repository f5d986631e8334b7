/* ring-agent --capture DIR: the part of sysfs and procfs the agent reads
 * (inventory, hardware model, counters, the RDMA explanations), what
 * getifaddrs and libibverbs tell it, written as a tree that sysfs_root
 * and procfs_root can load (inventory_tree.h), so the node's inventory
 * can be rebuilt anywhere. The source is the configuration's sysfs_root
 * and procfs_root (a fixture can be captured as a node is).
 *
 * Only named files are read, each bounded (capture.c's limits); links are
 * followed only within the source's sys/ and written as relative links
 * inside the tree. The tree is written to DIR.tmp and renamed to DIR
 * when complete; an existing non-empty DIR or a DIR.tmp is refused, and
 * on failure DIR.tmp is removed. DIR/MANIFEST says what was captured,
 * when, by which version, and whether it was anonymised
 * (capture_anon.h). */
#ifndef RING_CAPTURE_H
#define RING_CAPTURE_H

#include <stddef.h>

#include "agent_conf.h"

struct capture_result {
	unsigned files;		  /* written, links included */
	unsigned long long bytes; /* in the files */
	unsigned notes;		  /* things left out, listed in MANIFEST */
	int full_config;	  /* every PCI config file had 256 bytes */
};

/* Capture into dir. 0 and res filled, or -1 with why naming the path and
 * what failed. */
int capture_run(const struct agent_conf *conf, const char *dir, int anonymise,
		struct capture_result *res, char *why, size_t len);

#endif
