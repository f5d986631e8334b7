/* What an edge's ends are in the inventories and the topology, for
 * `ringctl explain`: a node's function by name, its PCIe link, physical
 * port and RDMA port, the port's speed as the agent reports it, an
 * edge's cable, and the two small figure helpers the analysis shares. */
#ifndef RING_EXPLAIN_INV_H
#define RING_EXPLAIN_INV_H

#include <stddef.h>

#include "ring.pb-c.h"

/* inv's function name (NULL for none, or an empty name). */
const Ring__NetInterface *explain_iface(const Ring__Inventory *inv,
					const char *name);
/* f's PCIe link, physical port and RDMA port in inv (NULL: none). */
const Ring__PcieLink *explain_link(const Ring__Inventory *inv,
				   const Ring__NetInterface *f);
const Ring__PhysPort *explain_port(const Ring__Inventory *inv,
				   const Ring__NetInterface *f);
const Ring__RdmaPort *explain_rdma_port(const Ring__Inventory *inv,
					const Ring__NetInterface *f);
/* The port's speed as the agent reports it: the port model's, else the
 * configured nominal, else sysfs. 0 unknown. */
double explain_port_gbps(const Ring__Inventory *inv,
			 const Ring__NetInterface *f);
/* "32.0 GT/s PCIe" -> 32.0; 0 when not a rate. */
double explain_gts(const char *s);
/* The cable of edge e in t (NULL: none). */
const Ring__Cable *explain_cable(const Ring__Topology *t, const Ring__Edge *e);
/* The last of v[0..n) (a ladder's top), -1 with none. */
double explain_top(const double *v, size_t n);
/* The worse of two figures, < 0 meaning not measured. */
double explain_worse(double a, double b);

#endif
