/* The verbs engine's operator-facing error texts: what a failed RTR or
 * work completion means for the link between two nodes, and what this
 * side knows of the path when nothing ever got through. Only the
 * coordinator knows whether the two nodes are ring neighbours, so the
 * texts here say "no data-plane path" and the facts, never "not ring
 * neighbours": with twins, a wrong function or ARP flux between real
 * neighbours fails the same way. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "verbs_int.h"

int verbs_conn_no_path(const struct verbs_test *t)
{
	return t->conn_no_path;
}

static const char *verbs_peer_gid(const struct verbs_endpoint *peer)
{
	return peer && *peer->gid_str ? peer->gid_str : "?";
}

int verbs_explain_rtr(int e, const struct verbs_endpoint *local,
		      const struct verbs_endpoint *peer, const char *peer_name,
		      char *out, size_t len)
{
	if (e == ETIMEDOUT || e == ENETUNREACH || e == EHOSTUNREACH ||
	    e == ENODATA) {
		snprintf(out, len,
			 "ibv_modify_qp(RTR) failed: %s: no data-plane path "
			 "from %s port %u (GID %s on %s) to %s (%s)",
			 strerror(e), local->device, local->port,
			 local->gid_str, local->netdev,
			 peer_name ? peer_name : "the peer",
			 verbs_peer_gid(peer));
		return 1;
	}
	snprintf(out, len, "ibv_modify_qp(RTR) towards %s (%s): %s",
		 peer_name ? peer_name : "the peer", verbs_peer_gid(peer),
		 strerror(e));
	return 0;
}

int verbs_explain_wc(enum ibv_wc_status st, uint64_t ok_before,
		     const struct verbs_endpoint *local,
		     const struct verbs_endpoint *peer, const char *peer_name,
		     char *out, size_t len)
{
	const char *who = peer_name && *peer_name ? peer_name : "the peer";
	int no_path = 0;

	switch (st) {
	case IBV_WC_RETRY_EXC_ERR:
		no_path = !ok_before;
		if (!ok_before)
			snprintf(out, len,
				 "transport retry exceeded before the first "
				 "completion: no data-plane path from %s port "
				 "%u (GID %s on %s) to %s (%s)",
				 local->device, local->port, local->gid_str,
				 local->netdev, who, verbs_peer_gid(peer));
		else
			snprintf(out, len,
				 "transport retry exceeded after %llu "
				 "messages: %s stopped answering (its agent, "
				 "its port or the cable went away mid-test)",
				 (unsigned long long)ok_before, who);
		break;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		snprintf(out, len,
			 "receiver-not-ready retry exceeded: %s posted no "
			 "receive buffer",
			 who);
		break;
	case IBV_WC_REM_ACCESS_ERR:
		snprintf(out, len,
			 "remote access error: %s refused the memory key or "
			 "address (its test was torn down?)",
			 who);
		break;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR:
		snprintf(out, len, "%s rejected the request: %s", who,
			 ibv_wc_status_str(st));
		break;
	case IBV_WC_WR_FLUSH_ERR:
		snprintf(out, len,
			 "work request flushed: the queue pair went to the "
			 "error state");
		break;
	default:
		snprintf(out, len, "work completion error: %s (%d)",
			 ibv_wc_status_str(st), (int)st);
		break;
	}
	return no_path;
}

/* The kernel's neighbour entry for ip (procfs_root/proc/net/arp: "IP
 * address, HW type, Flags, HW address, Mask, Device"): 1 with the MAC,
 * its device and whether it is complete (ATF_COM, 0x2), 0 when there is
 * none, -1 when the table cannot be read. */
static int verbs_arp_lookup(const char *procfs_root, const char *ip, char *mac,
			    size_t mac_len, char *dev, size_t dev_len,
			    int *complete)
{
	char path[4096], line[256], a[64], m[32], d[IFNAMSIZ];
	unsigned flags;
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "%s/proc/net/arp",
		 procfs_root ? procfs_root : "");
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %*s %x %31s %*s %15s", a, &flags, m,
			   d) != 4 ||
		    strcmp(a, ip))
			continue;
		snprintf(mac, mac_len, "%s", m);
		snprintf(dev, dev_len, "%s", d);
		*complete = !!(flags & 0x2);
		found = 1;
	}
	fclose(f);
	return found;
}

/* The kernel's IPv4 route for ip, longest prefix first
 * (procfs_root/proc/net/route: "Iface Destination Gateway Flags RefCnt
 * Use Metric Mask ...", addresses in hex, network order): 1 with the
 * device and gateway (0 when on link), 0 when none, -1 unreadable. */
static int verbs_route_lookup(const char *procfs_root, const char *ip,
			      char *dev, size_t dev_len, uint32_t *gw)
{
	char path[4096], line[256], d[IFNAMSIZ];
	unsigned dst, g, mask, best_mask = 0;
	struct in_addr in;
	FILE *f;
	int found = 0;

	if (inet_pton(AF_INET, ip, &in) != 1)
		return 0;
	snprintf(path, sizeof(path), "%s/proc/net/route",
		 procfs_root ? procfs_root : "");
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%15s %x %x %*s %*s %*s %*s %x", d, &dst, &g,
			   &mask) != 4 ||
		    (in.s_addr & mask) != dst ||
		    (found && ntohl(mask) < ntohl(best_mask)))
			continue;
		snprintf(dev, dev_len, "%s", d);
		*gw = g;
		best_mask = mask;
		found = 1;
	}
	fclose(f);
	return found;
}

int verbs_path_detail(const struct verbs_endpoint *local,
		      const struct verbs_endpoint *peer,
		      const char *procfs_root, char *out, size_t len)
{
	char mac[32], dev[IFNAMSIZ], gws[INET_ADDRSTRLEN];
	size_t n;
	uint32_t gw = 0;
	int complete = 0, r;

	n = (size_t)snprintf(out, len,
			     "local function %s port %u, its GID %s on netdev "
			     "%s; peer GID %s",
			     local->device, local->port, local->gid_str,
			     local->netdev, verbs_peer_gid(peer));
	if (!*peer->ipv4 || n >= len)
		return 0;
	r = verbs_arp_lookup(procfs_root, peer->ipv4, mac, sizeof(mac), dev,
			     sizeof(dev), &complete);
	if (r > 0 && complete)
		n += (size_t)snprintf(out + n, len - n,
				      "; the kernel resolved %s to MAC %s on "
				      "%s",
				      peer->ipv4, mac, dev);
	else if (r > 0)
		n += (size_t)snprintf(out + n, len - n,
				      "; the kernel's neighbour entry for %s "
				      "on %s is incomplete (no ARP answer)",
				      peer->ipv4, dev);
	else
		n += (size_t)snprintf(
			out + n, len - n, "; no neighbour entry for %s%s",
			peer->ipv4,
			r < 0 ? " (neighbour table unreadable)" : "");
	if (n >= len)
		return 0;
	r = verbs_route_lookup(procfs_root, peer->ipv4, dev, sizeof(dev), &gw);
	if (r > 0 && gw)
		snprintf(out + n, len - n, "; route to %s via %s dev %s",
			 peer->ipv4,
			 inet_ntop(AF_INET, &gw, gws, sizeof(gws)) ? gws : "?",
			 dev);
	else if (r > 0)
		snprintf(out + n, len - n, "; route to %s: on link, dev %s",
			 peer->ipv4, dev);
	else
		snprintf(out + n, len - n, "; no route to %s%s", peer->ipv4,
			 r < 0 ? " (route table unreadable)" : "");
	return 0;
}
