/* `ringctl inventory` through the writer: each node's interfaces, PCIe
 * links, physical ports and RDMA devices as the agent reported them;
 * plain leaves out what was not read, the machine formats keep every
 * field. */
#include "render.h"

#include <stdio.h>
#include <string.h>

/* Plain leaves out what is not there (a blank string, a 0 or -1 that
 * stands for "not read" or "none"); keyvalue and JSON keep every field. */
static int render_plain(const struct writer *w)
{
	return writer_get_format(w) == WRITER_PLAIN;
}

static void render_str_opt(struct writer *w, const char *key, const char *v)
{
	if (!render_plain(w) || (v && *v))
		writer_str(w, key, v);
}

static void render_uint_opt(struct writer *w, const char *key, uint64_t v)
{
	if (!render_plain(w) || v)
		writer_uint(w, key, v);
}

static void render_int_opt(struct writer *w, const char *key, int64_t v)
{
	if (!render_plain(w) || v >= 0)
		writer_int(w, key, v);
}

static void render_gbps_opt(struct writer *w, const char *key, double v)
{
	if (!render_plain(w) || v > 0)
		writer_double(w, key, v, 1);
}

/* The function's place in the port and PCIe model (docs/HARDWARE.md). */
static void render_interface_hw(struct writer *w, const Ring__NetInterface *f)
{
	render_str_opt(w, "phys_port_name", f->phys_port_name);
	render_str_opt(w, "phys_switch_id", f->phys_switch_id);
	render_str_opt(w, "port_id", f->port_id);
	render_str_opt(w, "pcie_link", f->pcie_link);
	/* Lesser of port speed and share of the link: not measured. */
	render_gbps_opt(w, "nominal_gbps_computed", f->nominal_gbps);
	render_int_opt(w, "arp_ignore", f->arp_ignore);
	render_int_opt(w, "arp_announce", f->arp_announce);
}

/* PCIe links, physical ports and ignored interfaces of an inventory. */
static void render_inventory_hw(struct writer *w, const Ring__Inventory *inv)
{
	writer_list_start(w, "pcie_links");
	for (size_t i = 0; i < inv->n_pcie_links; i++) {
		const Ring__PcieLink *l = inv->pcie_links[i];

		writer_obj_start_named(w, l->id);
		writer_str(w, "id", l->id);
		writer_list_start(w, "interfaces");
		for (size_t k = 0; k < l->n_interfaces; k++)
			writer_str(w, NULL, l->interfaces[k]);
		writer_list_end(w);
		writer_str(w, "speed", l->speed);
		writer_uint(w, "width", l->width);
		writer_str(w, "max_speed", l->max_speed);
		writer_uint(w, "max_width", l->max_width);
		writer_double(w, "raw_gbps_computed", l->raw_gbps, 1);
		writer_double(w, "usable_gbps_computed", l->usable_gbps, 1);
		/* The MPS the usable rate was computed from, and whether
		 * the agent read it or assumed it (none: an older agent). */
		if (l->mps_bytes)
			writer_uint(w, "mps_bytes", l->mps_bytes);
		else if (!render_plain(w))
			writer_none(w, "mps_bytes", "");
		render_str_opt(w, "mps_source", l->mps_source);
		render_str_opt(w, "downtrained", l->downtrained);
		render_str_opt(w, "narrow", l->narrow);
		render_str_opt(w, "upstream", l->upstream);
		render_str_opt(w, "upstream_max_speed", l->upstream_max_speed);
		render_uint_opt(w, "upstream_max_width", l->upstream_max_width);
		writer_obj_end(w);
	}
	writer_list_end(w);
	writer_list_start(w, "phys_ports");
	for (size_t i = 0; i < inv->n_phys_ports; i++) {
		const Ring__PhysPort *p = inv->phys_ports[i];

		writer_obj_start_named(w, p->id);
		writer_str(w, "id", p->id);
		writer_str(w, "name", p->name);
		writer_list_start(w, "interfaces");
		for (size_t k = 0; k < p->n_interfaces; k++)
			writer_str(w, NULL, p->interfaces[k]);
		writer_list_end(w);
		writer_double(w, "speed_gbps", p->speed_gbps, 1);
		writer_double(w, "aggregate_gbps_computed", p->aggregate_gbps,
			      1);
		render_str_opt(w, "twins_differ", p->twins_differ);
		render_str_opt(w, "grouped_by", p->grouped_by);
		render_str_opt(w, "switch_ids_differ", p->switch_ids_differ);
		writer_obj_end(w);
	}
	writer_list_end(w);
	writer_list_start(w, "ignored_interfaces");
	for (size_t i = 0; i < inv->n_ignored_interfaces; i++)
		writer_str(w, NULL, inv->ignored_interfaces[i]);
	writer_list_end(w);
}

static void render_interface(struct writer *w, const Ring__NetInterface *f)
{
	writer_str(w, "name", f->name);
	writer_bool(w, "management", f->management);
	writer_str(w, "mac", f->mac);
	writer_list_start(w, "ipv4");
	for (size_t i = 0; i < f->n_ipv4; i++) {
		writer_obj_start(w, NULL);
		writer_str(w, "address", f->ipv4[i]->address);
		writer_uint(w, "prefix", f->ipv4[i]->prefix);
		writer_obj_end(w);
	}
	writer_list_end(w);
	writer_uint(w, "mtu", f->mtu);
	writer_bool(w, "admin_up", f->admin_up);
	writer_bool(w, "carrier", f->carrier);
	writer_str(w, "operstate", f->operstate);
	writer_bool(w, "up_no_address", f->up_no_address);
	render_int_opt(w, "speed_mbps", f->speed_mbps);
	render_uint_opt(w, "nominal_speed_mbps", f->nominal_speed_mbps);
	render_str_opt(w, "driver", f->driver);
	render_str_opt(w, "pci_address", f->pci_address);
	render_str_opt(w, "pcie_link_speed", f->pcie_link_speed);
	render_uint_opt(w, "pcie_link_width", f->pcie_link_width);
	render_str_opt(w, "pcie_max_link_speed", f->pcie_max_link_speed);
	render_uint_opt(w, "pcie_max_link_width", f->pcie_max_link_width);
	/* Derived from link speed, width and encoding, not measured. */
	render_gbps_opt(w, "pcie_gbps_computed", f->pcie_gbps);
	render_str_opt(w, "rdma_device", f->rdma_device);
	render_interface_hw(w, f);
}

static void render_rdma(struct writer *w, const Ring__RdmaDevice *d)
{
	writer_str(w, "name", d->name);
	render_str_opt(w, "node_guid", d->node_guid);
	render_str_opt(w, "fw_ver", d->fw_ver);
	writer_list_start(w, "ports");
	for (size_t i = 0; i < d->n_ports; i++) {
		const Ring__RdmaPort *p = d->ports[i];
		char id[16];

		snprintf(id, sizeof(id), "%u", p->port);
		writer_obj_start_named(w, id);
		writer_uint(w, "port", p->port);
		writer_str(w, "state", p->state);
		writer_str(w, "link_layer", p->link_layer);
		render_str_opt(w, "netdev", p->netdev);
		writer_double(w, "active_speed_gbps", p->active_speed_gbps, 1);
		writer_uint(w, "active_width", p->active_width);
		writer_uint(w, "active_mtu", p->active_mtu);
		writer_list_start(w, "gids");
		for (size_t k = 0; k < p->n_gids; k++) {
			snprintf(id, sizeof(id), "%u", p->gids[k]->index);
			writer_obj_start_named(w, id);
			writer_uint(w, "index", p->gids[k]->index);
			writer_str(w, "gid", p->gids[k]->gid);
			writer_str(w, "type", p->gids[k]->type);
			render_str_opt(w, "netdev", p->gids[k]->netdev);
			writer_obj_end(w);
		}
		writer_list_end(w);
		writer_obj_end(w);
	}
	writer_list_end(w);
}

void render_inventory(struct writer *w, const Ring__InventoryReply *r)
{
	const Ring__Inventory *inv = r->inventory;

	if (r->status)
		render_node_status(
			w, r->status,
			RENDER_NODE_FULL |
				(inv ? RENDER_NODE_NO_RDMA_COUNT : 0),
			0);
	if (!inv)
		return;
	writer_str(w, "hostname", inv->hostname);
	writer_str(w, "kernel", inv->kernel);
	writer_str(w, "mgmt_interface", inv->mgmt_interface);
	writer_list_start(w, "interfaces");
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		writer_obj_start_named(w, inv->interfaces[i]->name);
		render_interface(w, inv->interfaces[i]);
		writer_obj_end(w);
	}
	writer_list_end(w);
	writer_list_start(w, "rdma_devices");
	for (size_t i = 0; i < inv->n_rdma_devices; i++) {
		writer_obj_start_named(w, inv->rdma_devices[i]->name);
		render_rdma(w, inv->rdma_devices[i]);
		writer_obj_end(w);
	}
	writer_list_end(w);
	if (inv->rdma_error && *inv->rdma_error)
		writer_str(w, "rdma_error", inv->rdma_error);
	render_inventory_hw(w, inv);
	writer_obj_start(w, "memory");
	writer_uint(w, "total_kib", inv->memory ? inv->memory->total_kib : 0);
	writer_uint(w, "available_kib",
		    inv->memory ? inv->memory->available_kib : 0);
	writer_obj_end(w);
}
