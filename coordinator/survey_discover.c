/* Survey discovery: snapshot, cables, probes, switch and diagonal phases. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_conf.h"
#include "survey_int.h"
#include "rdma_rules.h"

static void sv_subnet(const char *addr, unsigned prefix, char *out, size_t len)
{
	struct in_addr in;
	uint32_t mask = prefix ? ~0u << (32 - (prefix > 32 ? 32 : prefix)) : 0;

	out[0] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1)
		return;
	in.s_addr = htonl(ntohl(in.s_addr) & mask);
	inet_ntop(AF_INET, &in, out, (socklen_t)len);
	snprintf(out + strlen(out), len - strlen(out), "/%u", prefix);
}

static void sv_ip(const char *addr, unsigned prefix, uint32_t *ip,
		  uint32_t *mask)
{
	struct in_addr in;

	*ip = *mask = 0;
	if (inet_pton(AF_INET, addr, &in) != 1 || !prefix || prefix > 32)
		return;
	*ip = ntohl(in.s_addr);
	*mask = ~0u << (32 - prefix);
}

/* Is addr on the subnet of f? Probes only go where the prober's own data
 * port leads: one node's claims never aim another at foreign addresses. */
static int sv_on_subnet(const struct sv_if *f, const char *addr)
{
	struct in_addr in;
	uint32_t a;

	if (!f->mask || inet_pton(AF_INET, addr, &in) != 1)
		return 0;
	a = ntohl(in.s_addr);
	return (a & f->mask) == (f->ip & f->mask) && a != f->ip;
}

static int sv_on_any_subnet(const struct sv_node *n, const char *addr)
{
	for (unsigned i = 0; i < n->n_ifs; i++)
		if (sv_on_subnet(&n->ifs[i], addr))
			return 1;
	return 0;
}

/* The function's physical port and PCIe link, from the inventory's
 * port model (agents before it: each interface is its own port). */
static void sv_if_port(struct sv_if *si, const Ring__NetInterface *f,
		       const Ring__Inventory *inv)
{
	const char *slash, *pname = f->phys_port_name;

	/* Without sysfs' phys_port_name the agent names the port (from
	 * the predictable name's n<port> part). */
	for (size_t i = 0; !*pname && *f->port_id && i < inv->n_phys_ports; i++)
		if (!strcmp(inv->phys_ports[i]->id, f->port_id))
			pname = inv->phys_ports[i]->name;

	snprintf(si->port_id, sizeof(si->port_id), "%s", f->port_id);
	snprintf(si->pcie_link, sizeof(si->pcie_link), "%s", f->pcie_link);
	slash = strrchr(f->port_id, '/');
	snprintf(si->port_name, sizeof(si->port_name), "%s",
		 *pname		 ? pname
		 : slash	 ? slash + 1
		 : f->port_id[0] ? f->port_id
				 : f->name);
	si->port_gbps = f->speed_mbps > 0 ? f->speed_mbps / 1000.0 : 0;
	/* One function alone runs at most at its PCIe link's usable rate
	 * (GB10: ~111 of a 200G port's Gbps): that is its edge's nominal,
	 * or a healthy edge would read as a ceiling at half. */
	for (size_t i = 0; *f->pcie_link && i < inv->n_pcie_links; i++) {
		double u = inv->pcie_links[i]->usable_gbps;

		if (!strcmp(inv->pcie_links[i]->id, f->pcie_link) && u > 0 &&
		    (!si->nominal_gbps || u < si->nominal_gbps))
			si->nominal_gbps = u;
	}
}

/* Each function's place among its port's twins, ordered by PCIe link
 * (then name): twin 0 faces twin 0 across a cable. */
static void sv_twin_index(struct sv_node *sn)
{
	for (unsigned i = 0; i < sn->n_ifs; i++) {
		struct sv_if *x = &sn->ifs[i];

		x->twin_idx = 0;
		if (!x->port_id[0])
			continue;
		for (unsigned j = 0; j < sn->n_ifs; j++) {
			const struct sv_if *y = &sn->ifs[j];
			int c;

			if (j == i || strcmp(x->port_id, y->port_id))
				continue;
			c = strcmp(y->pcie_link, x->pcie_link);
			if (c < 0 || (!c && strcmp(y->name, x->name) < 0))
				x->twin_idx++;
		}
	}
}

int sv_snapshot(struct survey *sv)
{
	struct node **v;
	unsigned n, k = 0;
	int rc = 0;

	v = nodes_sorted(sv->table, &n);
	if (!v) {
		errno = ENOMEM;
		return -1;
	}
	sv->run->nodes = sv_alloc(NULL, n ? n : 1, sizeof(*sv->run->nodes));
	if (!sv->run->nodes) {
		free(v);
		errno = ENOMEM;
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		const Ring__Inventory *inv = v[i]->inventory;
		struct sv_node *sn = &sv->run->nodes[k];

		if (v[i]->state != NODE_UP || !inv ||
		    !sv_scope_in(sv->run, v[i]->name))
			continue;
		snprintf(sn->name, sizeof(sn->name), "%s", v[i]->name);
		snprintf(sn->mgmt_addr, sizeof(sn->mgmt_addr), "%s",
			 v[i]->mgmt_address);
		snprintf(sn->mgmt_if, sizeof(sn->mgmt_if), "%s",
			 inv->mgmt_interface);
		sn->beacons =
			v[i]->neighbours && v[i]->neighbours->beacons_available;
		sn->rdma_cap = rdma_rules_capable(v[i]);
		sn->ifs =
			sv_alloc(NULL, inv->n_interfaces + 1, sizeof(*sn->ifs));
		if (!sn->ifs) {
			rc = -1; /* no partial list: the caller gives up */
			break;
		}
		for (size_t j = 0; j < inv->n_interfaces; j++) {
			const Ring__NetInterface *f = inv->interfaces[j];
			struct sv_if *si = &sn->ifs[sn->n_ifs];

			if (f->management)
				continue;
			snprintf(si->name, sizeof(si->name), "%s", f->name);
			if (f->n_ipv4) {
				snprintf(si->addr, sizeof(si->addr), "%s",
					 f->ipv4[0]->address);
				sv_subnet(si->addr, f->ipv4[0]->prefix,
					  si->subnet, sizeof(si->subnet));
				sv_ip(si->addr, f->ipv4[0]->prefix, &si->ip,
				      &si->mask);
			}
			si->mtu = f->mtu;
			snprintf(si->rdma, sizeof(si->rdma), "%s",
				 f->rdma_device);
			int port_down = 0;

			if (rdma_rules_port(inv, f->name, si->rdma_dev,
					    sizeof(si->rdma_dev), si->rdma_why,
					    sizeof(si->rdma_why)) < 0) {
				port_down = errno == ENETDOWN;
				si->rdma_dev[0] = '\0';
			}
			si->rdma_hw =
				si->rdma_dev[0] || si->rdma[0] || port_down;
			si->nominal_gbps =
				(f->nominal_speed_mbps
					 ? f->nominal_speed_mbps
					 : (f->speed_mbps > 0
						    ? (unsigned)f->speed_mbps
						    : 0)) /
				1000.0;
			sv_if_port(si, f, inv);
			sn->n_ifs++;
		}
		sv_twin_index(sn);
		k++;
	}
	free(v);
	sv->run->n_nodes = k;
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}

/* The snapshot is sorted by name (nodes_sorted): O(log n). */
int sv_node_index(const struct survey *sv, const char *name)
{
	unsigned lo = 0, hi = sv->run->n_nodes;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int c = strcmp(sv->run->nodes[mid].name, name);

		if (!c)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

const struct sv_if *sv_iface(const struct survey *sv, unsigned n,
			     const char *ifname)
{
	for (unsigned i = 0; i < sv->run->nodes[n].n_ifs; i++)
		if (!strcmp(sv->run->nodes[n].ifs[i].name, ifname))
			return &sv->run->nodes[n].ifs[i];
	return NULL;
}

struct sv_link *sv_add_link(struct survey *sv, unsigned a, const char *a_if,
			    unsigned b, const char *b_if)
{
	struct sv_link *l, *nl;
	const struct sv_if *fa, *fb;

	/* Canonical: lower node index first. */
	if (a > b) {
		unsigned x = a;
		const char *y = a_if;

		a = b;
		b = x;
		a_if = b_if;
		b_if = y;
	}
	for (unsigned i = 0; i < sv->run->n_links; i++) {
		l = &sv->run->links[i];
		if (l->t.a == a && l->t.b == b && !strcmp(l->t.a_if, a_if) &&
		    !strcmp(l->t.b_if, b_if))
			return l;
	}
	nl = sv_alloc(sv->run->links, sv->run->n_links + 1, sizeof(*nl));
	if (!nl)
		return NULL;
	sv->run->links = nl;
	l = &sv->run->links[sv->run->n_links++];
	memset(l, 0, sizeof(*l));
	l->t.a = a;
	l->t.b = b;
	snprintf(l->t.a_if, sizeof(l->t.a_if), "%s", a_if);
	snprintf(l->t.b_if, sizeof(l->t.b_if), "%s", b_if);
	l->probe_ab = l->probe_ba = -1;
	l->a_gid_index = l->b_gid_index = -1;
	for (int d = 0; d < 2; d++) {
		for (int s = 0; s < SV_MAX_LADDER; s++)
			l->gbps[d][s] = -1;
		l->rdma_write[d] = l->rdma_read[d] = -1;
	}
	fa = sv_iface(sv, a, a_if);
	fb = sv_iface(sv, b, b_if);
	if (fa) {
		snprintf(l->a_addr, sizeof(l->a_addr), "%s", fa->addr);
		snprintf(l->t.a_subnet, sizeof(l->t.a_subnet), "%s",
			 fa->subnet);
		snprintf(l->a_rdma, sizeof(l->a_rdma), "%s", fa->rdma);
		l->t.a_mtu = fa->mtu;
		l->nominal_gbps = fa->nominal_gbps;
		snprintf(l->t.a_port, sizeof(l->t.a_port), "%s", fa->port_id);
	}
	if (fb) {
		snprintf(l->b_addr, sizeof(l->b_addr), "%s", fb->addr);
		snprintf(l->t.b_subnet, sizeof(l->t.b_subnet), "%s",
			 fb->subnet);
		snprintf(l->b_rdma, sizeof(l->b_rdma), "%s", fb->rdma);
		l->t.b_mtu = fb->mtu;
		snprintf(l->t.b_port, sizeof(l->t.b_port), "%s", fb->port_id);
		if (!l->nominal_gbps ||
		    (fb->nominal_gbps && fb->nominal_gbps < l->nominal_gbps))
			l->nominal_gbps = fb->nominal_gbps;
	}
	return l;
}

/* Links from the beacons each node heard. */
int sv_links_from_beacons(struct survey *sv)
{
	for (unsigned i = 0; i < sv->run->n_nodes; i++) {
		struct node *n = nodes_find(sv->table, sv->run->nodes[i].name);
		const Ring__NeighbourTable *t = n ? n->neighbours : NULL;

		for (size_t j = 0; t && j < t->n_neighbours; j++) {
			const Ring__Neighbour *nb = t->neighbours[j];
			int r = sv_node_index(sv, nb->remote_node);
			struct sv_link *l;

			if (r < 0 || (unsigned)r == i)
				continue;
			l = sv_add_link(sv, i, nb->local_interface, (unsigned)r,
					nb->remote_interface);
			if (!l)
				return -1;
			if (l->t.a == i)
				l->t.a_sees_b = 1;
			else
				l->t.b_sees_a = 1;
		}
	}
	return 0;
}

struct sv_subnet_ref {
	uint32_t net, mask;
	unsigned node, iface;
};

static int sv_subnet_cmp(const void *x, const void *y)
{
	const struct sv_subnet_ref *a = x, *b = y;

	if (a->net != b->net)
		return a->net < b->net ? -1 : 1;
	if (a->mask != b->mask)
		return a->mask < b->mask ? -1 : 1;
	return 0;
}

/* Fallback where beacons are off (no CAP_NET_RAW): a subnet shared by
 * exactly two interfaces on two nodes is a point-to-point cable
 * candidate; the probes of the verify phase decide. Sorted, so
 * O(n log n) in the number of addressed interfaces. */
int sv_links_from_subnets(struct survey *sv)
{
	struct sv_subnet_ref *v;
	size_t n = 0, total = 0, i, j;
	int rc = 0;

	for (unsigned x = 0; x < sv->run->n_nodes; x++)
		total += sv->run->nodes[x].n_ifs;
	v = sv_alloc(NULL, total + 1, sizeof(*v));
	if (!v)
		return -1;
	for (unsigned x = 0; x < sv->run->n_nodes; x++)
		for (unsigned k = 0; k < sv->run->nodes[x].n_ifs; k++) {
			const struct sv_if *f = &sv->run->nodes[x].ifs[k];

			if (!f->mask)
				continue;
			v[n].net = f->ip & f->mask;
			v[n].mask = f->mask;
			v[n].node = x;
			v[n].iface = k;
			n++;
		}
	qsort(v, n, sizeof(*v), sv_subnet_cmp);
	for (i = 0; i < n && !rc; i = j) {
		const struct sv_subnet_ref *p = &v[i], *q = &v[i + 1];

		for (j = i + 1; j < n && !sv_subnet_cmp(&v[i], &v[j]); j++)
			;
		if (j - i != 2 || p->node == q->node ||
		    (sv->run->nodes[p->node].beacons &&
		     sv->run->nodes[q->node].beacons))
			continue;
		if (p->node > q->node) {
			const struct sv_subnet_ref *t = p;

			p = q;
			q = t;
		}
		if (!sv_add_link(sv, p->node,
				 sv->run->nodes[p->node].ifs[p->iface].name,
				 q->node,
				 sv->run->nodes[q->node].ifs[q->iface].name))
			rc = -1;
	}
	free(v);
	return rc;
}

static struct sv_op *sv_op_new(struct survey *sv, enum sv_phase phase,
			       unsigned idx, int dir)
{
	struct sv_op *op = calloc(1, sizeof(*op));

	if (!op)
		return NULL;
	op->sv = sv;
	op->phase = phase;
	op->idx = idx;
	op->dir = dir;
	op->next = sv->run->ops;
	if (sv->run->ops)
		sv->run->ops->prev = op;
	sv->run->ops = op;
	return op;
}

static void sv_op_free(struct sv_op *op)
{
	struct survey *sv = op->sv;

	if (op->prev)
		op->prev->next = op->next;
	else
		sv->run->ops = op->next;
	if (op->next)
		op->next->prev = op->prev;
	free(op);
}

static void sv_probe_result(struct sv_op *op, const Ring__Envelope *env)
{
	struct survey *sv = op->sv;
	int ok = env && env->body_case == RING__ENVELOPE__BODY_PROBE_REPLY &&
		 env->probe_reply->reachable;

	switch (op->phase) {
	case SV_VERIFY: {
		struct sv_link *l = &sv->run->links[op->idx];

		if (op->dir == 0)
			l->probe_ab = ok;
		else
			l->probe_ba = ok;
		break;
	}
	case SV_SWITCH:
		sv->run->switch_ok += ok;
		break;
	case SV_DIAG: {
		struct sv_diag *d = &sv->run->diags[op->idx];

		d->done = 1;
		d->path = ok;
		if (env && env->body_case == RING__ENVELOPE__BODY_PROBE_REPLY) {
			snprintf(d->route_kind, sizeof(d->route_kind), "%s",
				 env->probe_reply->route_kind);
			snprintf(d->route_if, sizeof(d->route_if), "%s",
				 env->probe_reply->route_interface);
			d->not_probed = env->probe_reply->not_probed;
			/* An address this node holds too (docker0's
			 * 172.17.0.1 everywhere) is no data-plane path. */
			if (!strcmp(d->route_kind, "local"))
				d->path = 0;
		} else {
			snprintf(d->route_kind, sizeof(d->route_kind), "?");
		}
		break;
	}
	default:
		break;
	}
}

static void sv_probe_reply(const Ring__Envelope *env, int err, void *arg);

static int sv_probe_send(struct survey *sv, struct sv_op *op)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__ProbeRequest pr = RING__PROBE_REQUEST__INIT;

	pr.peer_address = op->addr;
	pr.local_interface = op->ifname;
	pr.port = SV_PROBE_PORT;
	pr.timeout_ms = SV_PROBE_TIMEOUT_MS;
	req.body_case = RING__ENVELOPE__BODY_PROBE_REQUEST;
	req.probe_request = &pr;
	op->call = call_start(sv->calls, sv->run->nodes[op->from].name, &req,
			      SV_PROBE_TIMEOUT_MS + 3000, 0,
			      RING__ENVELOPE__BODY_PROBE_REPLY, sv_probe_reply,
			      op);
	if (!op->call)
		return -1;
	op->queued = 0;
	sv->run->nodes[op->from].probes++;
	return 0;
}

/* Send from's queued probes while it has free slots. The caller holds a
 * pending count of its own, so a failure here cannot end the phase. */
static void sv_probe_next(struct survey *sv, unsigned from)
{
	struct sv_op *op, *next;

	for (op = sv->run->ops;
	     op && sv->run->nodes[from].probes < SV_PROBES_PER_NODE;
	     op = next) {
		next = op->next;
		if (!op->queued || op->from != from)
			continue;
		if (sv_probe_send(sv, op) < 0) {
			sv_probe_result(op, NULL);
			sv_op_free(op);
			sv->run->pending--;
		}
	}
}

static void sv_probe_reply(const Ring__Envelope *env, int err, void *arg)
{
	struct sv_op *op = arg;
	struct survey *sv = op->sv;
	unsigned from = op->from;

	(void)err;
	sv->run->nodes[from].probes--;
	sv_probe_result(op, env);
	sv_op_free(op);
	sv_probe_next(sv, from);
	sv_done_one(sv);
}

/* Ask node `from` to probe addr (through ifname, or its route if ""), at
 * most SV_PROBES_PER_NODE at a time per node: the rest wait their turn. */
static void sv_probe(struct survey *sv, enum sv_phase phase, unsigned idx,
		     int dir, unsigned from, const char *addr,
		     const char *ifname)
{
	struct sv_op *op = sv_op_new(sv, phase, idx, dir);

	if (!op)
		return;
	op->from = from;
	snprintf(op->addr, sizeof(op->addr), "%s", addr);
	snprintf(op->ifname, sizeof(op->ifname), "%s", ifname);
	if (sv->run->nodes[from].probes >= SV_PROBES_PER_NODE) {
		op->queued = 1;
	} else if (sv_probe_send(sv, op) < 0) {
		sv_op_free(op);
		return;
	}
	sv->run->pending++;
}

int sv_adjacent(const struct sv_link *l)
{
	return !l->switch_pair && !l->rejected && !l->cross &&
	       ((l->t.a_sees_b && l->t.b_sees_a) || l->t.verified);
}

void sv_phase_verify(struct survey *sv)
{
	sv->run->phase = SV_VERIFY;
	for (unsigned i = 0; i < sv->run->n_links; i++) {
		struct sv_link *l = &sv->run->links[i];

		const struct sv_if *fa = sv_iface(sv, l->t.a, l->t.a_if);
		const struct sv_if *fb = sv_iface(sv, l->t.b, l->t.b_if);

		if (l->b_addr[0] && fa && sv_on_subnet(fa, l->b_addr))
			sv_probe(sv, SV_VERIFY, i, 0, l->t.a, l->b_addr,
				 l->t.a_if);
		if (l->a_addr[0] && fb && sv_on_subnet(fb, l->a_addr))
			sv_probe(sv, SV_VERIFY, i, 1, l->t.b, l->a_addr,
				 l->t.b_if);
	}
}

const struct sv_if *sv_first_addr(const struct survey *sv, unsigned n)
{
	for (unsigned i = 0; i < sv->run->nodes[n].n_ifs; i++)
		if (sv->run->nodes[n].ifs[i].addr[0])
			return &sv->run->nodes[n].ifs[i];
	return NULL;
}

/* No beacons anywhere: is every node reachable from every other? */
void sv_phase_switch(struct survey *sv)
{
	sv->run->phase = SV_SWITCH;
	sv->run->switch_ok = sv->run->switch_total = 0;
	if (sv->run->n_links || sv->run->n_nodes < 2 ||
	    sv->run->n_nodes > SV_SWITCH_MAX)
		return;
	for (unsigned i = 0; i < sv->run->n_nodes; i++)
		for (unsigned j = 0; j < sv->run->n_nodes; j++) {
			const struct sv_if *f = sv_first_addr(sv, j);

			if (i == j || !f)
				continue;
			sv->run->switch_total++;
			if (!sv_on_any_subnet(&sv->run->nodes[i], f->addr))
				continue; /* counts as unreachable */
			sv_probe(sv, SV_SWITCH, 0, 0, i, f->addr, "");
		}
}

int sv_is_switch(const struct survey *sv)
{
	/* Cables only: the pairs measured through the switch become links
	 * too, and the survey still classifies after that. */
	for (unsigned i = 0; i < sv->run->n_links; i++)
		if (!sv->run->links[i].switch_pair)
			return 0;
	return sv->run->switch_total &&
	       sv->run->switch_ok == sv->run->switch_total &&
	       sv->run->switch_total ==
		       sv->run->n_nodes * (sv->run->n_nodes - 1);
}

static int sv_pair_adjacent(const struct survey *sv, unsigned x, unsigned y)
{
	for (unsigned i = 0; i < sv->run->n_links; i++) {
		const struct sv_link *l = &sv->run->links[i];

		if (sv_adjacent(l) && ((l->t.a == x && l->t.b == y) ||
				       (l->t.a == y && l->t.b == x)))
			return 1;
	}
	return 0;
}

/* A diagonal is checked at this many of the far node's addresses at most
 * (a GB10 node has four data ports). */
#define SV_DIAG_MAX_ADDRS 8

static int sv_add_diag(struct survey *sv, unsigned x, unsigned y)
{
	unsigned added = 0;

	for (unsigned k = 0; k < sv->run->nodes[y].n_ifs; k++) {
		const struct sv_if *f = &sv->run->nodes[y].ifs[k];
		struct sv_diag *d;

		if (!f->addr[0] || added++ >= SV_DIAG_MAX_ADDRS)
			continue;
		d = sv_alloc(sv->run->diags, sv->run->n_diags + 1, sizeof(*d));
		if (!d) {
			errno = ENOMEM;
			return -1;
		}
		sv->run->diags = d;
		d = &sv->run->diags[sv->run->n_diags++];
		memset(d, 0, sizeof(*d));
		d->a = x;
		d->b = y;
		snprintf(d->b_addr, sizeof(d->b_addr), "%s", f->addr);
	}
	return 0;
}

/* Non-adjacent pairs must have no data-plane path: all of them on small
 * clusters, the pairs two hops apart on large ones, found through each
 * node's neighbours (linear on a ring). */
int sv_phase_diag(struct survey *sv)
{
	unsigned n = sv->run->n_nodes;
	int rc = 0;

	sv->run->phase = SV_DIAG;
	if (sv_is_switch(sv))
		return 0;
	/* A stray's paths are its own place: the ring's pairs only. */
	if (n <= sv->conf->diagonal_all_max) {
		for (unsigned x = 0; x < n; x++)
			for (unsigned y = x + 1; y < n; y++)
				if (!sv_pair_adjacent(sv, x, y) &&
				    !sv->run->nodes[x].stray &&
				    !sv->run->nodes[y].stray && !rc)
					rc = sv_add_diag(sv, x, y);
	} else {
		for (unsigned z = 0; z < n; z++) {
			unsigned nb[8], k = 0;

			if (sv->run->nodes[z].stray)
				continue; /* so are its neighbours */

			/* z's distinct neighbours (a ring node has two). */
			for (unsigned i = 0; i < sv->run->n_links && k < 8;
			     i++) {
				const struct sv_link *l = &sv->run->links[i];
				unsigned o;
				int seen = 0;

				if (!sv_adjacent(l) ||
				    (l->t.a != z && l->t.b != z))
					continue;
				o = l->t.a == z ? l->t.b : l->t.a;
				for (unsigned j = 0; j < k; j++)
					seen |= nb[j] == o;
				if (!seen)
					nb[k++] = o;
			}
			for (unsigned i = 0; i < k; i++)
				for (unsigned j = i + 1; j < k; j++)
					if (!sv_pair_adjacent(sv, nb[i],
							      nb[j]) &&
					    !rc)
						rc = sv_add_diag(
							sv,
							nb[i] < nb[j] ? nb[i]
								      : nb[j],
							nb[i] < nb[j] ? nb[j]
								      : nb[i]);
		}
	}
	if (rc < 0)
		return -1; /* probing part of the pairs would hide the rest */
	for (unsigned i = 0; i < sv->run->n_diags; i++)
		sv_probe(sv, SV_DIAG, i, 0, sv->run->diags[i].a,
			 sv->run->diags[i].b_addr, "");
	return 0;
}

/* Labels: 0 .. n_rings-1 the directives' rings, then n_rings + k the
 * published topology's ring k (one whose id a directive names is the
 * directive's). */
static int sv_ring_label_published(const struct survey *sv, const char *name)
{
	const Ring__Topology *t = sv->topology;
	const struct coord_conf *conf = sv->conf;

	for (size_t k = 0; t && k < t->n_rings; k++) {
		const Ring__RingView *r = t->rings[k];

		for (size_t i = 0; i < r->n_nodes; i++) {
			int c;

			if (strcmp(r->nodes[i], name))
				continue;
			c = coord_conf_ring_find(conf, r->id);
			return c >= 0 ? c : (int)(conf->n_rings + k);
		}
	}
	return -1;
}

int sv_ring_labels(const struct survey *sv, int *label)
{
	for (unsigned i = 0; i < sv->run->n_nodes; i++) {
		const char *name = sv->run->nodes[i].name;
		int c = coord_conf_ring_of(sv->conf, name);

		label[i] = c >= 0 ? c : sv_ring_label_published(sv, name);
	}
	return 0;
}

/* A node the ring is known to hold: expected, or in the published rank
 * order. A node that joins with no cable into their component is a
 * stray, whatever it claims; one of these cut off is a broken ring. */
static int sv_known_member(const struct survey *sv, const char *name)
{
	const struct node *n = nodes_find(sv->table, name);
	const Ring__Topology *t = sv->topology;

	if (n && n->expected)
		return 1;
	for (size_t i = 0; t && i < t->n_order; i++)
		if (!strcmp(t->order[i], name))
			return 1;
	return 0;
}

/* topo input from the current links (cables only). */
int sv_analyse(struct survey *sv, struct topo_site *site)
{
	const char **names = calloc(sv->run->n_nodes + 1, sizeof(*names));
	struct topo_link *links = calloc(sv->run->n_links + 1, sizeof(*links));
	unsigned(*unexp)[2] = calloc(sv->run->n_diags + 1, sizeof(*unexp));
	unsigned char *member = calloc(sv->run->n_nodes + 1, 1);
	int *label = calloc(sv->run->n_nodes + 1, sizeof(*label));
	struct topo_input in = {0};
	unsigned nl = 0, nu = 0;
	const struct coord_conf *conf = sv->conf;
	int rank0 = conf->rank0[0] ? sv_node_index(sv, conf->rank0) : -1;
	int rc = -1;

	if (!names || !links || !unexp || !member || !label ||
	    sv_ring_labels(sv, label) < 0)
		goto out;
	for (unsigned i = 0; i < sv->run->n_nodes; i++) {
		names[i] = sv->run->nodes[i].name;
		member[i] = sv_known_member(sv, sv->run->nodes[i].name);
	}
	for (unsigned i = 0; i < sv->run->n_links; i++)
		if (!sv->run->links[i].switch_pair && !sv->run->links[i].cross)
			links[nl++] = sv->run->links[i].t;
	for (unsigned i = 0; i < sv->run->n_diags; i++) {
		const struct sv_diag *d = &sv->run->diags[i];
		int seen = 0;

		if (!d->path)
			continue;
		for (unsigned k = 0; k < nu; k++)
			seen |= unexp[k][0] == d->a && unexp[k][1] == d->b;
		if (!seen) {
			unexp[nu][0] = d->a;
			unexp[nu][1] = d->b;
			nu++;
		}
	}
	in.n_nodes = sv->run->n_nodes;
	in.names = names;
	in.links = links;
	in.n_links = nl;
	in.all_to_all_reachable = sv_is_switch(sv);
	in.unexpected_paths = (const unsigned(*)[2])unexp;
	in.n_unexpected_paths = nu;
	in.member = member;
	rc = topo_site_analyse(
		&in, label, rank0,
		conf->rank_higher ? TOPO_DIR_HIGHER : TOPO_DIR_LOWER, site);
out:
	free(label);
	free(names);
	free(links);
	free(unexp);
	free(member);
	return rc;
}

int sv_link_stray(const struct survey *sv, const struct sv_link *l)
{
	return sv->run->nodes[l->t.a].stray || sv->run->nodes[l->t.b].stray;
}

void sv_mark_strays(struct survey *sv)
{
	struct topo_site site = {0};

	for (unsigned i = 0; i < sv->run->n_nodes; i++)
		sv->run->nodes[i].stray = 0;
	if (sv_analyse(sv, &site) < 0)
		return; /* out of memory: nothing set apart */
	for (unsigned i = 0; i < site.site.n_strays; i++)
		sv->run->nodes[site.site.strays[i].node].stray = 1;
	topo_site_free(&site);
}

/* An adjacent link between x and y: one with addresses at both ends if
 * any (twins: an unaddressed half carries no test), else the first. */
int sv_find_link(const struct survey *sv, unsigned x, unsigned y)
{
	int first = -1;

	for (unsigned i = 0; i < sv->run->n_links; i++) {
		const struct sv_link *l = &sv->run->links[i];

		if (!sv_adjacent(l) || !((l->t.a == x && l->t.b == y) ||
					 (l->t.a == y && l->t.b == x)))
			continue;
		if (l->a_addr[0] && l->b_addr[0])
			return (int)i;
		if (first < 0)
			first = (int)i;
	}
	return first;
}

static int sv_shares_port(const struct sv_link *x, const struct sv_link *y)
{
	return (x->t.a == y->t.a && !strcmp(x->t.a_if, y->t.a_if)) ||
	       (x->t.a == y->t.b && !strcmp(x->t.a_if, y->t.b_if)) ||
	       (x->t.b == y->t.a && !strcmp(x->t.b_if, y->t.a_if)) ||
	       (x->t.b == y->t.b && !strcmp(x->t.b_if, y->t.b_if));
}

/* LLDP comes from the data plane and can be forged: where a port has
 * several claimed neighbours, believe the one that answered the
 * authenticated probe both ways (the agents on both ends ran it). */
void sv_resolve_claims(struct survey *sv)
{
	for (unsigned i = 0; i < sv->run->n_links; i++) {
		struct sv_link *l = &sv->run->links[i];

		if (l->t.verified || l->switch_pair || l->cross)
			continue;
		for (unsigned j = 0; j < sv->run->n_links; j++)
			if (j != i && sv->run->links[j].t.verified &&
			    sv_shares_port(l, &sv->run->links[j])) {
				l->rejected = 1;
				break;
			}
	}
}

static int sv_same_subnet(const struct sv_link *l)
{
	return l->t.a_subnet[0] && !strcmp(l->t.a_subnet, l->t.b_subnet);
}

/* Does another function pair of l's cable join twins of equal place? */
static int sv_cable_has_straight(const struct survey *sv,
				 const struct sv_link *l)
{
	for (unsigned i = 0; i < sv->run->n_links; i++) {
		const struct sv_link *m = &sv->run->links[i];
		const struct sv_if *fa, *fb;

		if (m == l || m->t.a != l->t.a || m->t.b != l->t.b ||
		    strcmp(m->t.a_port, l->t.a_port) ||
		    strcmp(m->t.b_port, l->t.b_port))
			continue;
		fa = sv_iface(sv, m->t.a, m->t.a_if);
		fb = sv_iface(sv, m->t.b, m->t.b_if);
		if (fa && fb && fa->twin_idx == fb->twin_idx)
			return 1;
	}
	return 0;
}

/* Twins: name each link's cable by its ports, and set aside the cross
 * pairs (one twin heard the other end's other twin): a pair on one
 * subnet is intended; otherwise twins of equal place face each other. */
void sv_resolve_twins(struct survey *sv)
{
	for (unsigned i = 0; i < sv->run->n_links; i++) {
		struct sv_link *l = &sv->run->links[i];
		const struct sv_if *fa = sv_iface(sv, l->t.a, l->t.a_if);
		const struct sv_if *fb = sv_iface(sv, l->t.b, l->t.b_if);

		l->cable_id[0] = '\0';
		l->cross = 0;
		if (l->switch_pair || !fa || !fb || !fa->port_id[0] ||
		    !fb->port_id[0])
			continue;
		snprintf(l->cable_id, sizeof(l->cable_id), "%s/%s-%s/%s",
			 sv->run->nodes[l->t.a].name, fa->port_name,
			 sv->run->nodes[l->t.b].name, fb->port_name);
		if (fa->twin_idx != fb->twin_idx &&
		    (!sv_same_subnet(l) || sv_cable_has_straight(sv, l)))
			l->cross = 1;
	}
}
