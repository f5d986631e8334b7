/* The inventories' model of an edge's ends, for `ringctl explain`. */
#include "explain_inv.h"

#include <stdlib.h>
#include <string.h>

const Ring__NetInterface *explain_iface(const Ring__Inventory *inv,
					const char *name)
{
	for (size_t i = 0; inv && name && *name && i < inv->n_interfaces; i++)
		if (!strcmp(inv->interfaces[i]->name, name))
			return inv->interfaces[i];
	return NULL;
}

const Ring__PcieLink *explain_link(const Ring__Inventory *inv,
				   const Ring__NetInterface *f)
{
	for (size_t i = 0; inv && f && *f->pcie_link && i < inv->n_pcie_links;
	     i++)
		if (!strcmp(inv->pcie_links[i]->id, f->pcie_link))
			return inv->pcie_links[i];
	return NULL;
}

const Ring__PhysPort *explain_port(const Ring__Inventory *inv,
				   const Ring__NetInterface *f)
{
	for (size_t i = 0; inv && f && *f->port_id && i < inv->n_phys_ports;
	     i++)
		if (!strcmp(inv->phys_ports[i]->id, f->port_id))
			return inv->phys_ports[i];
	return NULL;
}

const Ring__RdmaPort *explain_rdma_port(const Ring__Inventory *inv,
					const Ring__NetInterface *f)
{
	for (size_t i = 0; inv && f && i < inv->n_rdma_devices; i++)
		for (size_t j = 0; j < inv->rdma_devices[i]->n_ports; j++)
			if (!strcmp(inv->rdma_devices[i]->ports[j]->netdev,
				    f->name))
				return inv->rdma_devices[i]->ports[j];
	return NULL;
}

/* The port's speed as the agent reports it: the port model's, else the
 * configured nominal, else sysfs. 0 unknown. */
double explain_port_gbps(const Ring__Inventory *inv,
			 const Ring__NetInterface *f)
{
	const Ring__PhysPort *p = explain_port(inv, f);

	if (p && p->speed_gbps > 0)
		return p->speed_gbps;
	if (!f)
		return 0;
	if (f->nominal_speed_mbps)
		return f->nominal_speed_mbps / 1000.0;
	return f->speed_mbps > 0 ? f->speed_mbps / 1000.0 : 0;
}

/* "32.0 GT/s PCIe" -> 32.0; 0 when not a rate. */
double explain_gts(const char *s)
{
	return s && *s ? strtod(s, NULL) : 0;
}

const Ring__Cable *explain_cable(const Ring__Topology *t, const Ring__Edge *e)
{
	for (size_t i = 0; t && e->cable_id && *e->cable_id && i < t->n_cables;
	     i++)
		if (!strcmp(t->cables[i]->id, e->cable_id))
			return t->cables[i];
	return NULL;
}

double explain_top(const double *v, size_t n)
{
	return n ? v[n - 1] : -1;
}

double explain_worse(double a, double b)
{
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return a < b ? a : b;
}
