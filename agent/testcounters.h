/* Counters around one test (issue 11): a snapshot of the test's interface
 * and RDMA port before it and another after it, and the counters that moved
 * between them as TestResult.counters. The point is evidence of loss,
 * congestion, pause frames and link flaps during the test, not volume:
 *   netdev   /sys/class/net/IF/statistics/ error and drop counters, and
 *            IF/carrier_changes, IF/carrier_down_count
 *   ethtool  the driver's statistics through SIOCETHTOOL (ETHTOOL_GSSET_INFO,
 *            ETHTOOL_GSTRINGS, ETHTOOL_GSTATS; never the ethtool program),
 *            only names that speak of pause, discards, drops, errors, FEC,
 *            link downs, ECN/CNP, buffers or timeouts; per-queue copies
 *            ("rx3_...", "rx_queue_3_...") summed into one ("rx*_...")
 *   rdma     /sys/class/infiniband/DEV/ports/P/counters/ (RDMA tests)
 *   hw       /sys/class/infiniband/DEV/ports/P/hw_counters/ (RDMA tests)
 * Reads go through sysfs_root like the inventory's; ethtool asks the kernel
 * only when sysfs_root is the real one (a fixture tree stands for another
 * machine). docs/COUNTERS.md lists the counters and why. */
#ifndef RING_TESTCOUNTERS_H
#define RING_TESTCOUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "ring.pb-c.h"

/* Counters one snapshot keeps (a ConnectX port has ~150 that pass the
 * filters); more are left out and said in counters_error. */
#define TCOUNT_MAX_SNAP 512
/* Moved counters reported per side and test: evidence first, then volume
 * (port_xmit_data and the like); the coordinator refuses more than 256. */
#define TCOUNT_MAX_DELTAS 128
/* ethtool strings asked for at most (mlx5 with 64 channels has ~10,000). */
#define TCOUNT_MAX_ETHTOOL 65536

struct tcount;

/* Take the first snapshot of a test. ifname: the interface the test uses;
 * "" or NULL: the one holding local_addr (B's bind address), else the one
 * the route to peer_addr leaves by (A without an interface). rdma_dev and
 * rdma_port: the RDMA port an RDMA test uses ("" or NULL: none; TCP tests
 * read no RDMA counters). NULL only when memory ran out. A snapshot that
 * cannot be read is not a failure of the test: tcount_end says why. */
struct tcount *tcount_begin(const char *sysfs_root, const char *ifname,
			    const char *local_addr, const char *peer_addr,
			    const char *rdma_dev, unsigned rdma_port);
/* The second snapshot and the deltas into res (counters, counters_error),
 * pointing into c: valid until tcount_free. A counter that went down (a
 * reset or a wrap) or is in only one snapshot is left out. */
void tcount_end(struct tcount *c, Ring__TestResult *res);
void tcount_free(struct tcount *c);

/* The filter on ethtool names, and their per-queue folding (out: at least
 * 48 bytes): 1 and the name to keep, or 0. Exposed for the unit test. */
int tcount_ethtool_name(const char *name, char *out, size_t len);
/* 1 when a counter of source ("netdev", "ethtool", "rdma", "hw") is
 * volume (packets, bytes, requests) rather than evidence. */
int tcount_is_volume(const char *source, const char *name);

#endif
