/* Checks on agent data on arrival, against the limits in validate.h. */
#include "validate.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cfg.h"
#include "reason.h"

int validate_text(const char *s, size_t max)
{
	size_t n;

	if (!s)
		return 1;
	n = strnlen(s, max + 1);
	if (n > max)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

int validate_ifname(const char *s)
{
	size_t n = s ? strnlen(s, 16) : 0;

	if (n < 1 || n > 15 || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch <= 0x20 || ch > 0x7e || ch == '/' || ch == ':')
			return 0;
	}
	return 1;
}

int validate_rdma_name(const char *s)
{
	size_t n = s ? strnlen(s, 64) : 0;

	if (n < 1 || n > 63)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
		      ch == '-'))
			return 0;
	}
	return 1;
}

int validate_unicast_ipv4(const char *s)
{
	struct in_addr in;
	uint32_t a;

	if (!s || inet_pton(AF_INET, s, &in) != 1)
		return 0;
	a = ntohl(in.s_addr);
	return (a >> 24) != 0 && (a >> 24) != 127 && (a >> 28) < 14;
}

static int validate_ipv4(const char *s)
{
	struct in_addr in;

	return s && inet_pton(AF_INET, s, &in) == 1;
}

static int validate_gid(const char *s)
{
	struct in6_addr in;

	return s && (!*s || inet_pton(AF_INET6, s, &in) == 1);
}

/* A test result's counter deltas (testcounters.h on the agent): they
 * become report lines and findings' text. */
static int validate_test_counters(const Ring__TestResult *r, char *why,
				  size_t len)
{
	if (r->n_counters > VALIDATE_MAX_TEST_COUNTERS)
		return reason_fail(why, len, "%zu counters (max %u)",
				   r->n_counters, VALIDATE_MAX_TEST_COUNTERS);
	if (!validate_text(r->counters_error, VALIDATE_MAX_ERROR_TEXT))
		return reason_fail(why, len, "invalid counters_error");
	/* Worded into the report's error (rdmatest_no_path_text). */
	if (!validate_text(r->path_detail, VALIDATE_MAX_ERROR_TEXT))
		return reason_fail(why, len, "invalid path_detail");
	for (size_t i = 0; i < r->n_counters; i++) {
		const Ring__CounterDelta *c = r->counters[i];

		if ((*c->interface && !validate_ifname(c->interface)) ||
		    (*c->rdma_device && !validate_rdma_name(c->rdma_device)) ||
		    (strcmp(c->source, "netdev") &&
		     strcmp(c->source, "ethtool") &&
		     strcmp(c->source, "rdma") && strcmp(c->source, "hw")) ||
		    !*c->name || !validate_text(c->name, 63) ||
		    strchr(c->name, ' ') || *c->node || !isfinite(c->span_s) ||
		    c->span_s < 0)
			return reason_fail(why, len, "counter %zu: invalid", i);
	}
	return 0;
}

/* Walk every field through the descriptors, like frame.c's tag check. */
static int validate_walk(const ProtobufCMessage *m, char *why, size_t len,
			 unsigned depth)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	const char *base = (const char *)m;

	if (depth > 8)
		return reason_fail(why, len, "%s: nested too deep", d->name);
	if (d == &ring__test_result__descriptor &&
	    validate_test_counters((const Ring__TestResult *)m, why, len) < 0)
		return -1;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const void *slot = base + f->offset;
		size_t n = 1;

		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    *(const uint32_t *)(base + f->quantifier_offset) != f->id)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(const size_t *)(base + f->quantifier_offset);
			if (n > VALIDATE_MAX_REPEATED)
				return reason_fail(
					why, len, "%s.%s: %zu entries (max %u)",
					d->name, f->name, n,
					VALIDATE_MAX_REPEATED);
			slot = *(const void *const *)slot;
		}
		for (size_t j = 0; j < n; j++) {
			if (f->type == PROTOBUF_C_TYPE_STRING) {
				const char *s =
					f->label == PROTOBUF_C_LABEL_REPEATED
						? ((const char *const *)slot)[j]
						: *(const char *const *)slot;

				if (s && strnlen(s, VALIDATE_MAX_STRING + 1) >
						 VALIDATE_MAX_STRING)
					return reason_fail(
						why, len,
						"%s.%s: string longer than %u "
						"bytes",
						d->name, f->name,
						VALIDATE_MAX_STRING);
			} else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
				const ProtobufCMessage *sub =
					f->label == PROTOBUF_C_LABEL_REPEATED
						? ((const ProtobufCMessage
							    *const *)slot)[j]
						: *(const ProtobufCMessage
							    *const *)slot;

				if (sub &&
				    validate_walk(sub, why, len, depth + 1) < 0)
					return -1;
			}
		}
	}
	return 0;
}

int validate_message(const ProtobufCMessage *m, char *why, size_t len)
{
	return validate_walk(m, why, len, 0);
}

int validate_read_result(const Ring__ReadTestResult *r, char *why, size_t len)
{
	if (!r) {
		snprintf(why, len, "no result");
		return -1;
	}
	if (r->n_nodes) {
		snprintf(why, len, "an agent's read result lists nodes");
		return -1;
	}
	/* 64 GiB at most is asked; a minute at most, plus a margin. */
	if (r->bytes > (64ull << 30) || !(r->seconds >= 0) ||
	    r->seconds > 3600 || !(r->gbytes_per_s >= 0) ||
	    r->gbytes_per_s > 1e6) {
		snprintf(why, len, "read figures out of range");
		return -1;
	}
	if (!validate_text(r->path, 4095) ||
	    !validate_text(r->filesystem, 63) ||
	    !validate_text(r->device, 63) ||
	    !validate_text(r->error, VALIDATE_MAX_ERROR_TEXT)) {
		snprintf(why, len, "bad text in a read result");
		return -1;
	}
	return 0;
}

int validate_hello(const Ring__Hello *h, char *why, size_t len)
{
	if (!cfg_valid_node_name(h->node))
		return reason_fail(why, len, "invalid node name");
	if (!validate_text(h->agent_version, 63))
		return reason_fail(why, len, "invalid agent version");
	if (h->n_capabilities > VALIDATE_MAX_CAPABILITIES)
		return reason_fail(why, len, "%zu capabilities (max %u)",
				   h->n_capabilities,
				   VALIDATE_MAX_CAPABILITIES);
	for (size_t i = 0; i < h->n_capabilities; i++)
		if (!validate_rdma_name(h->capabilities[i]) ||
		    strlen(h->capabilities[i]) > 31)
			return reason_fail(why, len, "invalid capability name");
	return 0;
}

static int validate_gbps(double g)
{
	return isfinite(g) && g >= 0.0 && g <= VALIDATE_MAX_GBPS;
}

static int validate_interface(const Ring__NetInterface *f, char *why,
			      size_t len)
{
	if (!validate_ifname(f->name))
		return reason_fail(why, len, "invalid interface name");
	if (f->n_ipv4 > VALIDATE_MAX_IPV4)
		return reason_fail(why, len,
				   "interface %s: %zu IPv4 addresses (max %u)",
				   f->name, f->n_ipv4, VALIDATE_MAX_IPV4);
	/* Data ports become probe and test targets: unicast only. The
	 * management port is reported, never aimed at (a coordinator on the
	 * same host is reached over lo). */
	for (size_t i = 0; i < f->n_ipv4; i++)
		if (!(f->management
			      ? validate_ipv4(f->ipv4[i]->address)
			      : validate_unicast_ipv4(f->ipv4[i]->address)) ||
		    f->ipv4[i]->prefix > 32)
			return reason_fail(
				why, len,
				"interface %s: invalid IPv4 address or prefix",
				f->name);
	if (*f->rdma_device && !validate_rdma_name(f->rdma_device))
		return reason_fail(why, len,
				   "interface %s: invalid RDMA device name",
				   f->name);
	if (!validate_text(f->mac, 64) || !validate_text(f->operstate, 32) ||
	    !validate_text(f->pci_address, 32) ||
	    !validate_text(f->pcie_link_speed, 64) ||
	    !validate_text(f->pcie_max_link_speed, 64) ||
	    !validate_text(f->driver, 64) ||
	    !validate_text(f->phys_port_name, 32) ||
	    !validate_text(f->phys_switch_id, 64) ||
	    !validate_text(f->port_id, 160) || !validate_text(f->pcie_link, 32))
		return reason_fail(why, len, "interface %s: invalid text field",
				   f->name);
	if (!validate_gbps(f->pcie_gbps) || !validate_gbps(f->nominal_gbps))
		return reason_fail(why, len, "interface %s: invalid rate",
				   f->name);
	if (f->arp_ignore < -1 || f->arp_ignore > 8 || f->arp_announce < -1 ||
	    f->arp_announce > 2)
		return reason_fail(why, len,
				   "interface %s: invalid arp_ignore or "
				   "arp_announce",
				   f->name);
	return 0;
}

static const Ring__NetInterface *validate_find_iface(const Ring__Inventory *inv,
						     const char *name)
{
	for (size_t i = 0; i < inv->n_interfaces; i++)
		if (!strcmp(inv->interfaces[i]->name, name))
			return inv->interfaces[i];
	return NULL;
}

/* A link's or port's members: listed interfaces whose pcie_link (or
 * port_id) is this id, each once. */
static int validate_members(const Ring__Inventory *inv, const char *what,
			    const char *id, char *const *names, size_t n,
			    int port, char *why, size_t len)
{
	if (n > VALIDATE_MAX_INTERFACES)
		return reason_fail(why, len, "%s %s: %zu interfaces (max %u)",
				   what, id, n, VALIDATE_MAX_INTERFACES);
	for (size_t i = 0; i < n; i++) {
		const Ring__NetInterface *f;

		if (!validate_ifname(names[i]))
			return reason_fail(why, len,
					   "%s %s: invalid interface name",
					   what, id);
		f = validate_find_iface(inv, names[i]);
		if (!f || strcmp(port ? f->port_id : f->pcie_link, id))
			return reason_fail(why, len,
					   "%s %s: %s is not an interface of "
					   "it",
					   what, id, names[i]);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				return reason_fail(why, len,
						   "%s %s: %s listed twice",
						   what, id, names[i]);
	}
	return 0;
}

/* s is "" or one of the words of v (NULL-ended). */
static int validate_word(const char *s, const char *const *v)
{
	if (!*s)
		return 1;
	for (; *v; v++)
		if (!strcmp(s, *v))
			return 1;
	return 0;
}

static int validate_hw_link(const Ring__PcieLink *l, char *why, size_t len)
{
	static const char *const sources[] = {"read", "assumed", NULL};
	static const char *const narrow[] = {"downtrained", "wired_narrow",
					     "unknown", NULL};

	/* 128 to 4096 bytes, a power of two (PCIe Device Control); 0 from
	 * agents before the field. */
	if (l->mps_bytes && (l->mps_bytes < 128 || l->mps_bytes > 4096 ||
			     (l->mps_bytes & (l->mps_bytes - 1))))
		return reason_fail(why, len,
				   "PCIe link %s: max payload size %u bytes "
				   "(128 to 4096, a power of two)",
				   l->id, l->mps_bytes);
	if (!validate_text(l->mps_source, 16) ||
	    !validate_word(l->mps_source, sources))
		return reason_fail(why, len,
				   "PCIe link %s: mps_source must be read or "
				   "assumed",
				   l->id);
	if (!validate_text(l->narrow, 16) || !validate_word(l->narrow, narrow))
		return reason_fail(why, len,
				   "PCIe link %s: narrow must be downtrained, "
				   "wired_narrow or unknown",
				   l->id);
	if (l->upstream_max_width > 32)
		return reason_fail(why, len,
				   "PCIe link %s: upstream width x%u (max x32)",
				   l->id, l->upstream_max_width);
	return 0;
}

static int validate_hw(const Ring__Inventory *inv, char *why, size_t len)
{
	static const char *const grouped[] = {"pci",  "switch_id", "guid",
					      "name", "interface", NULL};

	if (inv->n_pcie_links > VALIDATE_MAX_PCIE_LINKS)
		return reason_fail(why, len, "%zu PCIe links (max %u)",
				   inv->n_pcie_links, VALIDATE_MAX_PCIE_LINKS);
	if (inv->n_phys_ports > VALIDATE_MAX_PHYS_PORTS)
		return reason_fail(why, len, "%zu physical ports (max %u)",
				   inv->n_phys_ports, VALIDATE_MAX_PHYS_PORTS);
	if (inv->n_ignored_interfaces > VALIDATE_MAX_IGNORED)
		return reason_fail(why, len, "%zu ignored interfaces (max %u)",
				   inv->n_ignored_interfaces,
				   VALIDATE_MAX_IGNORED);
	for (size_t i = 0; i < inv->n_pcie_links; i++) {
		const Ring__PcieLink *l = inv->pcie_links[i];

		if (!*l->id || !validate_text(l->id, 32) ||
		    !validate_text(l->speed, 64) ||
		    !validate_text(l->max_speed, 64) ||
		    !validate_text(l->downtrained, 64) ||
		    !validate_text(l->upstream, 32) ||
		    !validate_text(l->upstream_max_speed, 64))
			return reason_fail(why, len,
					   "PCIe link %zu: invalid text field",
					   i);
		if (validate_hw_link(l, why, len) < 0)
			return -1;
		if (!validate_gbps(l->raw_gbps) ||
		    !validate_gbps(l->usable_gbps) ||
		    l->usable_gbps > l->raw_gbps)
			return reason_fail(why, len,
					   "PCIe link %s: invalid rate", l->id);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(l->id, inv->pcie_links[j]->id))
				return reason_fail(why, len,
						   "PCIe link %s listed twice",
						   l->id);
		if (validate_members(inv, "PCIe link", l->id, l->interfaces,
				     l->n_interfaces, 0, why, len) < 0)
			return -1;
	}
	for (size_t i = 0; i < inv->n_phys_ports; i++) {
		const Ring__PhysPort *p = inv->phys_ports[i];

		if (!*p->id || !validate_text(p->id, 160) ||
		    !validate_text(p->name, 32) ||
		    !validate_text(p->twins_differ, VALIDATE_MAX_ERROR_TEXT) ||
		    !validate_text(p->switch_ids_differ,
				   VALIDATE_MAX_ERROR_TEXT) ||
		    !validate_text(p->grouped_by, 16))
			return reason_fail(
				why, len,
				"physical port %zu: invalid text field", i);
		if (!validate_word(p->grouped_by, grouped))
			return reason_fail(why, len,
					   "physical port %s: grouped_by %.32s "
					   "is not one the agent sends",
					   p->id, p->grouped_by);
		if (!validate_gbps(p->speed_gbps) ||
		    !validate_gbps(p->aggregate_gbps))
			return reason_fail(why, len,
					   "physical port %s: invalid rate",
					   p->id);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(p->id, inv->phys_ports[j]->id))
				return reason_fail(
					why, len,
					"physical port %s listed twice", p->id);
		if (validate_members(inv, "physical port", p->id, p->interfaces,
				     p->n_interfaces, 1, why, len) < 0)
			return -1;
	}
	/* An interface naming a port or link names a listed one. */
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];
		int port = !*f->port_id, link = !*f->pcie_link;

		for (size_t j = 0; !port && j < inv->n_phys_ports; j++)
			port = !strcmp(f->port_id, inv->phys_ports[j]->id);
		for (size_t j = 0; !link && j < inv->n_pcie_links; j++)
			link = !strcmp(f->pcie_link, inv->pcie_links[j]->id);
		if (!port || !link)
			return reason_fail(
				why, len, "interface %s: %s %s not listed",
				f->name, port ? "PCIe link" : "physical port",
				port ? f->pcie_link : f->port_id);
	}
	for (size_t i = 0; i < inv->n_ignored_interfaces; i++) {
		const char *n = inv->ignored_interfaces[i];

		if (!validate_ifname(n))
			return reason_fail(why, len,
					   "invalid ignored interface name");
		if (validate_find_iface(inv, n))
			return reason_fail(why, len,
					   "interface %s both listed and "
					   "ignored",
					   n);
	}
	return 0;
}

static int validate_rdma_device(const Ring__RdmaDevice *dev, char *why,
				size_t len)
{
	if (!validate_rdma_name(dev->name))
		return reason_fail(why, len, "invalid RDMA device name");
	if (!validate_text(dev->node_guid, 64) ||
	    !validate_text(dev->fw_ver, 64))
		return reason_fail(why, len, "RDMA device %s: invalid text",
				   dev->name);
	if (dev->n_ports > VALIDATE_MAX_RDMA_PORTS)
		return reason_fail(
			why, len, "RDMA device %s: %zu ports (max %u)",
			dev->name, dev->n_ports, VALIDATE_MAX_RDMA_PORTS);
	for (size_t i = 0; i < dev->n_ports; i++) {
		const Ring__RdmaPort *p = dev->ports[i];

		if ((*p->netdev && !validate_ifname(p->netdev)) ||
		    !validate_text(p->state, 32) ||
		    !validate_text(p->link_layer, 32))
			return reason_fail(why, len,
					   "RDMA device %s: invalid port",
					   dev->name);
		if (p->n_gids > VALIDATE_MAX_GIDS)
			return reason_fail(
				why, len, "RDMA device %s: %zu GIDs (max %u)",
				dev->name, p->n_gids, VALIDATE_MAX_GIDS);
		for (size_t j = 0; j < p->n_gids; j++) {
			const Ring__Gid *g = p->gids[j];

			if (!validate_gid(g->gid) ||
			    !validate_text(g->type, 16) ||
			    (*g->netdev && !validate_ifname(g->netdev)))
				return reason_fail(
					why, len, "RDMA device %s: invalid GID",
					dev->name);
		}
	}
	return 0;
}

int validate_inventory(const Ring__Inventory *inv, char *why, size_t len)
{
	if (validate_message(&inv->base, why, len) < 0)
		return -1;
	if (inv->n_interfaces > VALIDATE_MAX_INTERFACES)
		return reason_fail(why, len, "%zu interfaces (max %u)",
				   inv->n_interfaces, VALIDATE_MAX_INTERFACES);
	if (inv->n_rdma_devices > VALIDATE_MAX_RDMA_DEVICES)
		return reason_fail(why, len, "%zu RDMA devices (max %u)",
				   inv->n_rdma_devices,
				   VALIDATE_MAX_RDMA_DEVICES);
	if (!validate_text(inv->hostname, VALIDATE_MAX_TEXT) ||
	    !validate_text(inv->mgmt_address, 64) ||
	    !validate_text(inv->kernel, VALIDATE_MAX_TEXT) ||
	    !validate_text(inv->rdma_error, VALIDATE_MAX_ERROR_TEXT))
		return reason_fail(why, len, "invalid text field");
	if (*inv->mgmt_interface && !validate_ifname(inv->mgmt_interface))
		return reason_fail(why, len,
				   "invalid management interface name");
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		if (validate_interface(inv->interfaces[i], why, len) < 0)
			return -1;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(inv->interfaces[i]->name,
				    inv->interfaces[j]->name))
				return reason_fail(why, len,
						   "interface %s listed twice",
						   inv->interfaces[i]->name);
	}
	for (size_t i = 0; i < inv->n_rdma_devices; i++)
		if (validate_rdma_device(inv->rdma_devices[i], why, len) < 0)
			return -1;
	return validate_hw(inv, why, len);
}

int validate_neighbour_table(const Ring__NeighbourTable *t, char *why,
			     size_t len)
{
	if (validate_message(&t->base, why, len) < 0)
		return -1;
	if (t->n_neighbours > VALIDATE_MAX_NEIGHBOURS)
		return reason_fail(why, len, "%zu neighbours (max %u)",
				   t->n_neighbours, VALIDATE_MAX_NEIGHBOURS);
	if (!validate_text(t->beacons_error, VALIDATE_MAX_ERROR_TEXT) ||
	    !validate_text(t->agent_id, 64))
		return reason_fail(why, len, "invalid text field");
	return 0;
}

int validate_counters_report(const Ring__CountersReport *r, char *why,
			     size_t len)
{
	if (validate_message(&r->base, why, len) < 0)
		return -1;
	if (r->n_ports > VALIDATE_MAX_COUNTER_PORTS)
		return reason_fail(why, len, "%zu ports (max %u)", r->n_ports,
				   VALIDATE_MAX_COUNTER_PORTS);
	for (size_t i = 0; i < r->n_ports; i++) {
		const Ring__PortCounters *p = r->ports[i];

		if (!validate_ifname(p->interface))
			return reason_fail(why, len,
					   "port %zu: invalid interface name",
					   i);
		/* Rates become metrics and alert text: finite, >= 0. */
		if (!isfinite(p->rx_bytes_per_s) || p->rx_bytes_per_s < 0 ||
		    !isfinite(p->tx_bytes_per_s) || p->tx_bytes_per_s < 0)
			return reason_fail(why, len, "%s: invalid rate",
					   p->interface);
		if (*p->rdma_device && !validate_rdma_name(p->rdma_device))
			return reason_fail(why, len,
					   "%s: invalid RDMA device name",
					   p->interface);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(p->interface, r->ports[j]->interface))
				return reason_fail(why, len,
						   "interface %s listed twice",
						   p->interface);
	}
	return 0;
}

int validate_neighbour(const Ring__Neighbour *nb, char *why, size_t len)
{
	if (!validate_ifname(nb->local_interface))
		return reason_fail(why, len, "invalid local interface");
	if (!cfg_valid_node_name(nb->remote_node))
		return reason_fail(why, len, "invalid remote node name");
	if (!validate_ifname(nb->remote_interface))
		return reason_fail(why, len, "invalid remote interface");
	if (!validate_text(nb->remote_agent_id, 64) ||
	    !validate_text(nb->remote_mac, 64))
		return reason_fail(why, len, "invalid remote details");
	return 0;
}
