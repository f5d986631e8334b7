/* The Topology's ranks: each node in the measured order with its
 * neighbours' ports, the functions NCCL_IB_HCA lists for it (device:port),
 * the GID index NCCL picks there against the one the survey measured, the
 * subnet agreement and the function pairs NCCL should merge. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "msg_arena.h"
#include "survey_int.h"

static const char *sv_link_if(const struct sv_link *l, unsigned node,
			      const char **rdma)
{
	if (l->t.a == node) {
		*rdma = l->a_rdma;
		return l->t.a_if;
	}
	*rdma = l->b_rdma;
	return l->t.b_if;
}

/* The GID index node's end of the link used in the RDMA tests, or -1. */
static int sv_link_gid_index(const struct sv_link *l, unsigned node)
{
	return l->t.a == node ? l->a_gid_index : l->b_gid_index;
}

/* One function NCCL_IB_HCA lists for a rank: "device:port", the GID
 * index the survey's RDMA tests used on it, its IPv4 address. */
struct sv_hca {
	char name[80];
	const char *peer; /* the neighbour it faces */
	int gid_index;	  /* -1: no RDMA test over it */
	uint32_t ip;	  /* host order; prefix 0: no IPv4 address */
	unsigned prefix;
	int nccl_default;   /* NCCL's own GID pick there, -1 unknown */
	char dev[64];	    /* the RDMA device alone (NCCL_NET_FORCE_MERGE) */
	char pcie_link[32]; /* its PCI device, "" when the inventory has none */
};
#define SV_RANK_HCAS 16

/* NCCL's walk (net_ib/connect.cc ncclIbGetGidIndex, ncclUpdateGidIndex):
 * the first IPv4-mapped entry, moved on to the first IPv4-mapped RoCE v2
 * one when that is v1. */
int sv_nccl_default_gid(const Ring__RdmaPort *p)
{
	int first = -1, v2 = -1;

	for (size_t i = 0; i < p->n_gids; i++) {
		const Ring__Gid *g = p->gids[i];
		struct in6_addr a;

		if (!g->gid || inet_pton(AF_INET6, g->gid, &a) != 1 ||
		    !IN6_IS_ADDR_V4MAPPED(&a))
			continue;
		if (first < 0 || (int)g->index < first)
			first = (int)g->index;
		if (g->type && !strcasecmp(g->type, "RoCE v2") &&
		    (v2 < 0 || (int)g->index < v2))
			v2 = (int)g->index;
	}
	return v2 >= 0 ? v2 : first;
}

/* The port of dev that carries ifname (0 when the inventory cannot say)
 * and ifname's first IPv4 address. */
static unsigned sv_hca_port(const Ring__Inventory *inv, const char *dev,
			    const char *ifname, struct sv_hca *x)
{
	uint32_t *ip = &x->ip;
	unsigned *prefix = &x->prefix;
	unsigned port = 0;
	struct in_addr a;

	*ip = 0;
	*prefix = 0;
	x->pcie_link[0] = '\0';
	x->nccl_default = -1;
	for (size_t i = 0; inv && i < inv->n_interfaces; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];

		if (!strcmp(f->name, ifname))
			snprintf(x->pcie_link, sizeof(x->pcie_link), "%s",
				 f->pcie_link);
		if (strcmp(f->name, ifname) || !f->n_ipv4 ||
		    inet_pton(AF_INET, f->ipv4[0]->address, &a) != 1 ||
		    f->ipv4[0]->prefix > 32)
			continue;
		*ip = ntohl(a.s_addr);
		*prefix = f->ipv4[0]->prefix;
	}
	for (size_t i = 0; inv && i < inv->n_rdma_devices; i++) {
		const Ring__RdmaDevice *d = inv->rdma_devices[i];

		for (size_t k = 0; !strcmp(d->name, dev) && k < d->n_ports; k++)
			if (!strcmp(d->ports[k]->netdev, ifname)) {
				port = d->ports[k]->port;
				x->nccl_default =
					sv_nccl_default_gid(d->ports[k]);
			}
	}
	return port;
}

/* Every function of node me that faces peer over a published edge
 * (twins included: each function pair of a cable is an edge), appended
 * to h[*n] once each. */
static void sv_rank_hcas_to(const struct survey *sv, const Ring__Topology *top,
			    const char *me, const char *peer, struct sv_hca *h,
			    size_t *n)
{
	const struct node *nd = nodes_find(sv->table, me);
	const Ring__Inventory *inv = nd ? nd->inventory : NULL;

	for (size_t i = 0; i < top->n_edges && *n < SV_RANK_HCAS; i++) {
		const Ring__Edge *e = top->edges[i];
		int a = !strcmp(e->a, me) && !strcmp(e->b, peer);
		int b = !strcmp(e->b, me) && !strcmp(e->a, peer);
		const char *dev = a ? e->a_rdma : e->b_rdma;
		const char *ifn = a ? e->a_interface : e->b_interface;
		struct sv_hca *x = &h[*n];
		unsigned port;
		size_t k;

		if ((!a && !b) || !*dev || sv_edge_through_switch(e))
			continue;
		port = sv_hca_port(inv, dev, ifn, x);
		snprintf(x->dev, sizeof(x->dev), "%s", dev);
		if (port)
			snprintf(x->name, sizeof(x->name), "%s:%u", dev, port);
		else
			snprintf(x->name, sizeof(x->name), "%s", dev);
		for (k = 0; k < *n && strcmp(h[k].name, x->name); k++)
			;
		if (k < *n)
			continue;
		x->peer = peer;
		x->gid_index = a ? e->a_gid_index : e->b_gid_index;
		(*n)++;
	}
}

/* NCCL_IB_GID_INDEX for the printed environment: left to NCCL unless,
 * on a function whose GID table is known, NCCL's own pick is not the
 * entry the survey's RDMA tests used (a second IPv4 address, say); then
 * the measured index when the functions agree on it. A fixed index
 * breaks when an address change shifts the table, hence only then. */
static void sv_rank_nccl_gid(struct msg_arena *ar, Ring__Rank *r,
			     const struct sv_hca *h, size_t n)
{
	r->nccl_gid_index = -1;
	r->nccl_gid_note = "";
	for (size_t k = 0; k < n; k++) {
		if (h[k].gid_index < 0 || h[k].nccl_default < 0 ||
		    h[k].nccl_default == h[k].gid_index)
			continue;
		r->nccl_gid_index = r->gid_index;
		r->nccl_gid_note = msg_arena_printf(
			ar,
			"on %s NCCL's default picks GID index %d, not the "
			"index %d the survey's RDMA tests used%s",
			h[k].name, h[k].nccl_default, h[k].gid_index,
			r->gid_index < 0 ? "; the functions disagree, so no "
					   "one index fixes it"
					 : "");
		return;
	}
}

/* gid_index when every listed function used the same one, else -1 and
 * why; the IPv4 prefix under which the functions facing one neighbour
 * share no subnet with those facing the other (NCCL's subnet-aware
 * routing masks both GIDs with one prefix length), else 0 and why. */
static void sv_rank_agree(struct msg_arena *ar, Ring__Rank *r,
			  const struct sv_hca *h, size_t n)
{
	char buf[400];
	size_t len = 0;
	unsigned pl = 33;

	r->gid_index = -1;
	r->gid_note = r->subnet_note = "";
	for (size_t k = 0; k < n; k++)
		if (h[k].gid_index < 0)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"%s%s", len ? ", " : "",
						h[k].name);
	if (len && len < sizeof(buf)) {
		r->gid_note =
			msg_arena_printf(ar,
					 "no RDMA test measured the GID index "
					 "of %s",
					 buf);
	} else if (n) {
		int same = 1;

		for (size_t k = 1; k < n; k++)
			same &= h[k].gid_index == h[0].gid_index;
		if (same) {
			r->gid_index = h[0].gid_index;
		} else {
			len = 0;
			for (size_t k = 0; k < n && len < sizeof(buf); k++)
				len += (size_t)snprintf(
					buf + len, sizeof(buf) - len, "%s%s %d",
					k ? ", " : "", h[k].name,
					h[k].gid_index);
			r->gid_note =
				msg_arena_printf(ar,
						 "the functions use different "
						 "GID indexes (%s); NCCL takes "
						 "one",
						 buf);
		}
	}
	sv_rank_nccl_gid(ar, r, h, n);
	r->subnet_prefix_len = 0;
	for (size_t k = 0; k < n; k++) {
		if (!h[k].prefix) {
			r->subnet_note = msg_arena_printf(
				ar, "%s has no IPv4 address", h[k].name);
			return;
		}
		if (h[k].prefix < pl)
			pl = h[k].prefix;
	}
	if (pl > 32)
		return;
	for (size_t x = 0; x < n; x++)
		for (size_t y = x + 1; y < n; y++) {
			uint32_t m = pl ? ~0u << (32 - pl) : 0;

			if (strcmp(h[x].peer, h[y].peer) &&
			    (h[x].ip & m) == (h[y].ip & m)) {
				r->subnet_note = msg_arena_printf(
					ar,
					"%s (facing %s) and %s (facing %s) "
					"share a /%u: no prefix length tells "
					"the neighbours apart",
					h[x].name, h[x].peer, h[y].name,
					h[y].peer, pl);
				return;
			}
		}
	r->subnet_prefix_len = pl;
}

/* How many of h's functions sit on link (never "": no PCI device). */
static size_t sv_hcas_on_link(const struct sv_hca *h, size_t n,
			      const char *link)
{
	size_t c = 0;

	for (size_t k = 0; *link && k < n; k++)
		c += !strcmp(h[k].pcie_link, link);
	return c;
}

/* NCCL devices for a rank facing two neighbours: each function facing
 * the next rank (h[0..nn)) paired with one facing the previous
 * (h[nn..n)), a partner on the same PCI device first. A device that
 * spans both cables puts both subnets in its listener's handle, so the
 * connector always finds its function on the peer's cable; a device of
 * one function names one subnet, and where both ends picked functions
 * facing away the connection times out (docs/NCCL.md). Pairs that are
 * each one PCI device's only listed functions are what NCCL fuses by
 * itself (NCCL_NET_MERGE_LEVEL's default, PORT). */
static int sv_rank_groups(struct msg_arena *ar, Ring__Rank *r,
			  const struct sv_hca *h, size_t nn, size_t n)
{
	int used[SV_RANK_HCAS] = {0};
	int automatic = 1;

	r->nic_groups = msg_arena_alloc(ar, (n + 1) * sizeof(*r->nic_groups));
	r->nic_unpaired =
		msg_arena_alloc(ar, (n + 1) * sizeof(*r->nic_unpaired));
	if (!r->nic_groups || !r->nic_unpaired)
		return -1;
	for (int pass = 0; pass < 2; pass++)
		for (size_t a = 0; a < nn; a++) {
			size_t b;

			if (used[a])
				continue;
			for (b = nn; b < n; b++)
				if (!used[b] &&
				    (pass ||
				     (*h[a].pcie_link &&
				      !strcmp(h[a].pcie_link, h[b].pcie_link))))
					break;
			if (b == n)
				continue;
			used[a] = used[b] = 1;
			automatic &= !pass &&
				     sv_hcas_on_link(h, n, h[a].pcie_link) == 2;
			r->nic_groups[r->n_nic_groups++] = msg_arena_printf(
				ar, "%s,%s", h[a].dev, h[b].dev);
		}
	for (size_t k = 0; k < n; k++)
		if (!used[k])
			r->nic_unpaired[r->n_nic_unpaired++] =
				msg_arena_printf(ar, "%s", h[k].name);
	r->nic_groups_automatic = r->n_nic_groups && automatic;
	return 0;
}

/* Rank.hcas and what NCCL needs to agree on over them. */
static int sv_rank_nccl(const struct survey *sv, struct msg_arena *ar,
			const Ring__Topology *top, Ring__Rank *r)
{
	struct sv_hca h[SV_RANK_HCAS];
	size_t n = 0, nn = 0;

	if (*r->next_node)
		sv_rank_hcas_to(sv, top, r->node, r->next_node, h, &n);
	nn = n;
	if (*r->prev_node && strcmp(r->prev_node, r->next_node))
		sv_rank_hcas_to(sv, top, r->node, r->prev_node, h, &n);
	r->hcas = msg_arena_alloc(ar, (n + 1) * sizeof(*r->hcas));
	if (!r->hcas)
		return -1;
	for (size_t k = 0; k < n; k++)
		r->hcas[r->n_hcas++] = msg_arena_printf(ar, "%s", h[k].name);
	sv_rank_agree(ar, r, h, n);
	if (nn && nn < n && sv_rank_groups(ar, r, h, nn, n) < 0)
		return -1;
	return 0;
}

int sv_ranks(struct survey *sv, struct msg_arena *ar,
	     const struct topo_result *res, Ring__Topology *top)
{
	unsigned n = res->n_order;
	int ring = res->cls == TOPO_RING;

	if (res->cls != TOPO_RING && res->cls != TOPO_LINE &&
	    res->cls != TOPO_PAIR)
		return 0;
	top->ranks = msg_arena_alloc(ar, (n + 1) * sizeof(*top->ranks));
	if (!top->ranks)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		Ring__Rank *r = msg_arena_alloc(ar, sizeof(*r));
		unsigned me = res->order[i];
		int has_next = ring || res->cls == TOPO_PAIR || i + 1 < n;
		int has_prev = ring || res->cls == TOPO_PAIR || i > 0;
		const char *rdma = "";

		if (!r)
			return -1;
		ring__rank__init(r);
		r->rank = i;
		r->node = sv->run->nodes[me].name;
		r->mgmt_address = sv->run->nodes[me].mgmt_addr;
		r->mgmt_interface = sv->run->nodes[me].mgmt_if;
		r->next_node = r->next_interface = r->next_rdma = "";
		r->prev_node = r->prev_interface = r->prev_rdma = "";
		r->next_gid_index = r->prev_gid_index = -1;
		if (has_next) {
			unsigned o = res->order[(i + 1) % n];
			int li = sv_find_link(sv, me, o);

			r->next_node = sv->run->nodes[o].name;
			if (li >= 0) {
				r->next_interface = (char *)sv_link_if(
					&sv->run->links[li], me, &rdma);
				r->next_rdma = (char *)rdma;
				r->next_gid_index = sv_link_gid_index(
					&sv->run->links[li], me);
			}
		}
		if (has_prev) {
			unsigned o = res->order[(i + n - 1) % n];
			int li = sv_find_link(sv, me, o);

			r->prev_node = sv->run->nodes[o].name;
			if (li >= 0) {
				r->prev_interface = (char *)sv_link_if(
					&sv->run->links[li], me, &rdma);
				r->prev_rdma = (char *)rdma;
				r->prev_gid_index = sv_link_gid_index(
					&sv->run->links[li], me);
			}
		}
		if (sv_rank_nccl(sv, ar, top, r) < 0)
			return -1;
		top->ranks[top->n_ranks++] = r;
	}
	return 0;
}
