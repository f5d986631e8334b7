/* Interface and RDMA port counters on an interval (issue 10): the kernel's
 * statistics of each data interface the inventory lists, and the data
 * counters of the RDMA port bound to it, with rates from the previous
 * sample. Read from sysfs (a root prefix for tests, as the inventory). */
#ifndef RING_COUNTERS_H
#define RING_COUNTERS_H

#include <stdint.h>

#include "ring.pb-c.h"

/* Interfaces per report; further ones are left out (the coordinator
 * refuses larger reports). */
#define COUNTERS_MAX_PORTS 256

struct counters;

/* sysfs_root: prefix before /sys/...; "" or NULL = the real one. NULL
 * with errno on allocation failure. */
/* A sysfs counter: one decimal number. Small files, read at once; sysfs
 * attributes never block. 0, or -1 (errno set; EINVAL: not a number). */
int counters_read(const char *path, uint64_t *out);
struct counters *counters_new(const char *sysfs_root);
void counters_free(struct counters *c);
/* Whether the agent's beacon receiver is bound on ifname at a sample (1 or
 * 0): reported per port, because LLDP frames that meet no receiver count
 * as the port's rx_dropped. Without one, no port is listening. */
typedef int counters_listening_fn(const char *ifname, void *arg);
void counters_set_listening(struct counters *c, counters_listening_fn *fn,
			    void *arg);

/* Sample the data interfaces of inv (not the management one) at now_ms
 * (a monotonic clock). An interface whose statistics cannot be read is
 * left out. Rates are from the previous sample of the same interface; a
 * counter lower than before (a wrap or a reset) gives no rate (0) for
 * that sample. Each port also says its carrier_changes, whether it had
 * carrier steadily while read, and whether it was listening (port_state
 * set). The report is owned by c and valid until the next call. */
const Ring__CountersReport *counters_sample(struct counters *c,
					    const Ring__Inventory *inv,
					    uint64_t now_ms);

#endif
