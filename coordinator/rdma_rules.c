/* Pure RDMA rules: which port can run RDMA, GID agreement (see
 * rdma_rules.h). */
#include "rdma_rules.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int rdma_rules_port(const Ring__Inventory *inv, const char *ifname, char *dev,
		    size_t dev_len, char *why, size_t why_len)
{
	int seen = 0; /* a port of some device has this netdev */

	snprintf(why, why_len, "%s",
		 !inv ? "no inventory yet" : "no RDMA device");
	for (size_t i = 0; inv && i < inv->n_rdma_devices; i++) {
		const Ring__RdmaDevice *d = inv->rdma_devices[i];

		for (size_t k = 0; k < d->n_ports; k++) {
			const Ring__RdmaPort *p = d->ports[k];

			if (strcmp(p->netdev, ifname))
				continue;
			/* libibverbs says "active" (rdma-core 44) or "PORT_ACTIVE"; sysfs
			 * "4: ACTIVE". */
			if (strcasestr(p->state, "ACTIVE")) {
				snprintf(dev, dev_len, "%s", d->name);
				return 0;
			}
			seen = 1;
			snprintf(why, why_len, "%s port %u is %s", d->name,
				 p->port, *p->state ? p->state : "not active");
		}
	}
	if (inv && !seen && inv->rdma_error && *inv->rdma_error)
		snprintf(why, why_len, "no RDMA device (%s)", inv->rdma_error);
	errno = seen ? ENETDOWN : ENODEV;
	return -1;
}

int rdma_rules_first_port(const Ring__Inventory *inv, char *ifname,
			  size_t if_len, char *dev, size_t dev_len)
{
	char why[160];

	for (size_t i = 0; inv && i < inv->n_interfaces; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];

		if (f->management)
			continue;
		if (rdma_rules_port(inv, f->name, dev, dev_len, why,
				    sizeof(why)) == 0) {
			snprintf(ifname, if_len, "%s", f->name);
			return 0;
		}
	}
	return -1;
}

int rdma_rules_capable(const struct node *n)
{
	return n && n->state == NODE_UP &&
	       (nodes_has_capability(n, RDMA_RULES_CAP) ||
		nodes_has_capability(n, "rdma-test"));
}

static int rules_ip(const char *addr, unsigned prefix, uint32_t *ip,
		    uint32_t *mask)
{
	struct in_addr in;

	if (!addr || !*addr || !prefix || prefix > 32 ||
	    inet_pton(AF_INET, addr, &in) != 1)
		return -1;
	*mask = ~0u << (32 - prefix);
	*ip = ntohl(in.s_addr);
	return 0;
}

/* "index 1 (RoCE v2 ::ffff:10.9.1.1 on r1b)" */
static void rules_describe(const Ring__RdmaEndpoint *e, int with_addr,
			   char *buf, size_t len)
{
	char addr[64] = "";

	if (with_addr && *e->ipv4)
		snprintf(addr, sizeof(addr), ", %s/%u", e->ipv4, e->prefix);
	snprintf(buf, len, "index %u (%s %s on %s%s)", e->gid_index,
		 *e->gid_type ? e->gid_type : "unknown type",
		 *e->gid ? e->gid : "?", *e->netdev ? e->netdev : "?", addr);
}

int rdma_rules_gid_check(const char *a, const Ring__RdmaEndpoint *ea,
			 const char *b, const Ring__RdmaEndpoint *eb,
			 int adjacent, char *why, size_t why_len)
{
	char da[192], db[192];
	uint32_t ia, ma, ib, mb;

	if (*ea->gid_type && *eb->gid_type &&
	    strcasecmp(ea->gid_type, eb->gid_type)) {
		rules_describe(ea, 0, da, sizeof(da));
		rules_describe(eb, 0, db, sizeof(db));
		snprintf(why, why_len,
			 "GID type mismatch: %s uses %s, %s uses %s; choose "
			 "matching indices with --gid-a/--gid-b",
			 a, da, b, db);
		return -1;
	}
	if (adjacent != 1 || rules_ip(ea->ipv4, ea->prefix, &ia, &ma) < 0 ||
	    rules_ip(eb->ipv4, eb->prefix, &ib, &mb) < 0)
		return 0;
	/* Each address inside the other's subnet (prefixes may differ). */
	if ((ib & ma) == (ia & ma) && (ia & mb) == (ib & mb))
		return 0;
	rules_describe(ea, 1, da, sizeof(da));
	rules_describe(eb, 1, db, sizeof(db));
	snprintf(why, why_len,
		 "GID subnet mismatch: %s uses %s, %s uses %s; the two ports "
		 "of a cable share a subnet, so one of these is the wrong "
		 "GID; choose matching indices with --gid-a/--gid-b",
		 a, da, b, db);
	return -1;
}
