/* The node table: expected and authenticated nodes, their state, last
 * inventory and neighbours. Lookup is a hash; the sorted listing is an
 * index kept in order as nodes come and go, so that listing a site of
 * thousands of nodes on every change is a copy, not a sort. */
#include "nodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Chains stay short up to ten thousand nodes and more. */
#define NODES_BUCKETS 8192

struct nodes {
	struct node *bucket[NODES_BUCKETS];
	unsigned count;
	struct node **sorted; /* every node, by name; count of them */
	unsigned sorted_cap;
	/* The last NODES_JOURNAL changes' names, change k at k % size. */
	char journal[NODES_JOURNAL][sizeof(((struct node *)0)->name)];
	uint64_t changes;
	unsigned n_rising; /* nodes with n->rising set */
};

static void nodes_journal(struct nodes *t, const char *name)
{
	t->changes++;
	snprintf(t->journal[t->changes % NODES_JOURNAL], sizeof(t->journal[0]),
		 "%s", name);
}

static unsigned nodes_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h % NODES_BUCKETS;
}

struct nodes *nodes_new(void)
{
	return calloc(1, sizeof(struct nodes));
}

static void nodes_free_one(struct node *n)
{
	if (n->inventory)
		ring__inventory__free_unpacked(n->inventory, NULL);
	if (n->neighbours)
		ring__neighbour_table__free_unpacked(n->neighbours, NULL);
	if (n->counters)
		ring__counters_report__free_unpacked(n->counters, NULL);
	free(n->counters_rise);
	free(n);
}

void nodes_free(struct nodes *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < NODES_BUCKETS; i++) {
		struct node *n = t->bucket[i];

		while (n) {
			struct node *next = n->hash_next;

			nodes_free_one(n);
			n = next;
		}
	}
	free(t->sorted);
	free(t);
}

/* Where name is, or would go, in the sorted index. */
static unsigned nodes_sorted_pos(const struct nodes *t, const char *name)
{
	unsigned lo = 0, hi = t->count;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (strcmp(t->sorted[mid]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct node *nodes_find(struct nodes *t, const char *name)
{
	for (struct node *n = t->bucket[nodes_hash(name)]; n; n = n->hash_next)
		if (!strcmp(n->name, name))
			return n;
	return NULL;
}

struct node *nodes_get(struct nodes *t, const char *name, unsigned max)
{
	struct node *n = nodes_find(t, name);
	unsigned h, pos;

	if (n)
		return n;
	if (t->count >= max) {
		errno = ENOSPC;
		return NULL;
	}
	if (strlen(name) >= sizeof(n->name)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (t->count == t->sorted_cap) {
		unsigned cap = t->sorted_cap ? 2 * t->sorted_cap : 64;
		struct node **v = realloc(t->sorted, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->sorted = v;
		t->sorted_cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->state = NODE_NEVER;
	n->table = t;
	h = nodes_hash(name);
	n->hash_next = t->bucket[h];
	t->bucket[h] = n;
	pos = nodes_sorted_pos(t, name);
	memmove(&t->sorted[pos + 1], &t->sorted[pos],
		(t->count - pos) * sizeof(*t->sorted));
	t->sorted[pos] = n;
	t->count++;
	nodes_journal(t, name);
	return n;
}

int nodes_remove(struct nodes *t, const char *name)
{
	struct node **pp = &t->bucket[nodes_hash(name)];
	unsigned pos;

	for (; *pp; pp = &(*pp)->hash_next) {
		struct node *n = *pp;

		if (strcmp(n->name, name))
			continue;
		if (n->state == NODE_UP) {
			errno = EBUSY;
			return -1;
		}
		*pp = n->hash_next;
		pos = nodes_sorted_pos(t, name);
		memmove(&t->sorted[pos], &t->sorted[pos + 1],
			(t->count - pos - 1) * sizeof(*t->sorted));
		nodes_journal(t, n->name);
		t->n_rising -= n->rising != 0;
		nodes_free_one(n);
		t->count--;
		return 0;
	}
	errno = ENOENT;
	return -1;
}

unsigned nodes_count(const struct nodes *t)
{
	return t->count;
}

uint64_t nodes_changes(const struct nodes *t)
{
	return t->changes;
}

const char *nodes_change_name(const struct nodes *t, uint64_t seq)
{
	if (!seq || seq > t->changes || t->changes - seq >= NODES_JOURNAL)
		return NULL;
	return t->journal[seq % NODES_JOURNAL];
}

struct node **nodes_sorted(struct nodes *t, unsigned *n)
{
	struct node **v = malloc((t->count ? t->count : 1) * sizeof(*v));

	if (!v)
		return NULL;
	if (t->count)
		memcpy(v, t->sorted, t->count * sizeof(*v));
	*n = t->count;
	return v;
}

/* Interface name's carrier in inv: 1, 0, or -1 when not listed. */
static int nodes_inv_carrier(const Ring__Inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->n_interfaces; i++)
		if (!strcmp(inv->interfaces[i]->name, name))
			return inv->interfaces[i]->carrier;
	return -1;
}

/* Did any interface gain or lose carrier from inventory a to b? */
static int nodes_carrier_moved(const Ring__Inventory *a,
			       const Ring__Inventory *b)
{
	for (size_t i = 0; i < b->n_interfaces; i++)
		if (b->interfaces[i]->carrier !=
		    (nodes_inv_carrier(a, b->interfaces[i]->name) == 1))
			return 1;
	for (size_t i = 0; i < a->n_interfaces; i++)
		if (a->interfaces[i]->carrier &&
		    nodes_inv_carrier(b, a->interfaces[i]->name) != 1)
			return 1;
	return 0;
}

void nodes_set_inventory(struct node *n, Ring__Inventory *inv)
{
	if (n->inventory && inv && nodes_carrier_moved(n->inventory, inv))
		n->carrier_gen++;
	if (n->inventory)
		ring__inventory__free_unpacked(n->inventory, NULL);
	n->inventory = inv;
	n->session_inventory = inv != NULL;
	if (inv && inv->memory) {
		n->mem_available_kib = inv->memory->available_kib;
		/* The report being stored arrived just now. */
		n->mem_available_ms =
			inv->memory->available_kib ? n->last_seen_ms : 0;
	}
}

void nodes_set_neighbours(struct node *n, Ring__NeighbourTable *t)
{
	if (n->neighbours)
		ring__neighbour_table__free_unpacked(n->neighbours, NULL);
	n->neighbours = t;
	n->session_neighbours = t != NULL;
}

int nodes_port_rising(const struct node_port_rise *r)
{
	return r->rx_errors || r->tx_errors || r->rx_dropped || r->tx_dropped;
}

static uint64_t nodes_rise(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

/* Is the window from old's port q to r's port p judged? Counters move for
 * reasons other than the cable's health in two cases: while the port has
 * no carrier (what is sent meanwhile is dropped: tx_dropped) and while the
 * agent is away (beacons arriving find no receiver: rx_dropped). So both
 * reports must be of the agent session now up, and the port must have had
 * carrier at both samples with no transition between them. Older agents
 * send no carrier_changes: the inventories' carrier stands in, which sees
 * only flaps that outlast a rescan. */
static enum node_window nodes_window(const struct node *n,
				     const Ring__CountersReport *r,
				     const Ring__PortCounters *p,
				     const Ring__CountersReport *old,
				     const Ring__PortCounters *q)
{
	const Ring__NetInterface *f;

	if (!q)
		return NODE_WINDOW_NONE;
	/* interval_ms 0: the agent's first sample, a new agent process. */
	if (n->counters_session_gen != n->session_gen || !r->interval_ms)
		return NODE_WINDOW_SESSION;
	if (r->port_state && old->port_state)
		return p->carrier && q->carrier &&
				       p->carrier_changes == q->carrier_changes
			       ? NODE_WINDOW_JUDGED
			       : NODE_WINDOW_CARRIER;
	f = nodes_iface(n, p->interface);
	if (n->counters_carrier_gen != n->carrier_gen || (f && !f->carrier))
		return NODE_WINDOW_CARRIER;
	return NODE_WINDOW_JUDGED;
}

/* Is interface name rising in report r (rise array rise)? */
static int nodes_rising_in(const Ring__CountersReport *r,
			   const struct node_port_rise *rise, const char *name)
{
	for (size_t i = 0; r && rise && i < r->n_ports; i++)
		if (!strcmp(r->ports[i]->interface, name))
			return nodes_port_rising(&rise[i]);
	return 0;
}

/* Keep the table's count of nodes with a rising port in step. */
static void nodes_set_rising(struct node *n, const struct node_port_rise *rise)
{
	int now = 0;

	for (size_t i = 0;
	     rise && n->counters && i < n->counters->n_ports && !now; i++)
		now = nodes_port_rising(&rise[i]);
	if (n->table && now != n->rising) {
		if (now)
			n->table->n_rising++;
		else
			n->table->n_rising--;
	}
	n->rising = now;
}

unsigned nodes_rising_count(const struct nodes *t)
{
	return t->n_rising;
}

int nodes_set_counters(struct node *n, Ring__CountersReport *r, uint64_t now_ms)
{
	Ring__CountersReport *old = n->counters;
	struct node_port_rise *old_rise = n->counters_rise, *rise = NULL;
	int changed = 0;

	if (r && r->n_ports)
		rise = calloc(r->n_ports, sizeof(*rise));
	for (size_t i = 0; rise && i < r->n_ports; i++)
		rise[i].window = NODE_WINDOW_NONE;
	for (size_t i = 0; rise && old && i < r->n_ports; i++) {
		const Ring__PortCounters *p = r->ports[i];

		for (size_t k = 0; k < old->n_ports; k++) {
			const Ring__PortCounters *q = old->ports[k];

			if (strcmp(p->interface, q->interface))
				continue;
			rise[i].window = nodes_window(n, r, p, old, q);
			rise[i].rx_errors =
				nodes_rise(p->rx_errors, q->rx_errors);
			rise[i].tx_errors =
				nodes_rise(p->tx_errors, q->tx_errors);
			rise[i].rx_dropped =
				nodes_rise(p->rx_dropped, q->rx_dropped);
			rise[i].tx_dropped =
				nodes_rise(p->tx_dropped, q->tx_dropped);
			rise[i].rdma_rcv_bytes = nodes_rise(p->rdma_rcv_bytes,
							    q->rdma_rcv_bytes);
			rise[i].rdma_xmit_bytes = nodes_rise(
				p->rdma_xmit_bytes, q->rdma_xmit_bytes);
			if (rise[i].window != NODE_WINDOW_JUDGED) {
				rise[i].rx_errors = rise[i].tx_errors = 0;
				rise[i].rx_dropped = rise[i].tx_dropped = 0;
			} else if (r->port_state && old->port_state &&
				   !(p->listening && q->listening)) {
				/* Linux counts a frame no protocol takes
				 * as rx_dropped: with no beacon receiver,
				 * every beacon heard. */
				rise[i].rx_dropped = 0;
				rise[i].rx_dropped_unjudged = 1;
			}
			break;
		}
	}
	/* Out of memory: no rises known, which is a change only if some
	 * were. */
	for (size_t i = 0; rise && r && i < r->n_ports && !changed; i++)
		changed =
			nodes_port_rising(&rise[i]) !=
			nodes_rising_in(old, old_rise, r->ports[i]->interface);
	for (size_t k = 0; old && old_rise && k < old->n_ports && !changed; k++)
		changed = nodes_port_rising(&old_rise[k]) &&
			  !nodes_rising_in(r, rise, old->ports[k]->interface);
	n->counters_span_ms =
		old && now_ms > n->counters_ms ? now_ms - n->counters_ms : 0;
	n->counters_ms = now_ms;
	n->counters_session_gen = n->session_gen;
	n->counters_carrier_gen = n->carrier_gen;
	n->counters = r;
	n->counters_rise = rise;
	if (old)
		ring__counters_report__free_unpacked(old, NULL);
	free(old_rise);
	nodes_set_rising(n, rise);
	return changed;
}

const Ring__NetInterface *nodes_iface(const struct node *n, const char *name)
{
	const Ring__Inventory *inv = n ? n->inventory : NULL;

	for (size_t i = 0; inv && i < inv->n_interfaces; i++)
		if (!strcmp(inv->interfaces[i]->name, name))
			return inv->interfaces[i];
	return NULL;
}

double nodes_port_traffic_bps(const struct node *n, const char *ifname,
			      uint64_t *sample_ms)
{
	const Ring__CountersReport *r = n ? n->counters : NULL;

	for (size_t i = 0; r && i < r->n_ports; i++) {
		const Ring__PortCounters *p = r->ports[i];
		double bps, rdma = 0;

		if (strcmp(p->interface, ifname))
			continue;
		if (!r->interval_ms)
			return -1; /* the agent's first sample: no rate */
		bps = 8 * (p->rx_bytes_per_s > p->tx_bytes_per_s
				   ? p->rx_bytes_per_s
				   : p->tx_bytes_per_s);
		if (n->counters_rise && n->counters_span_ms) {
			const struct node_port_rise *x = &n->counters_rise[i];
			uint64_t m = x->rdma_rcv_bytes > x->rdma_xmit_bytes
					     ? x->rdma_rcv_bytes
					     : x->rdma_xmit_bytes;

			rdma = 8.0 * (double)m * 1000 /
			       (double)n->counters_span_ms;
		}
		*sample_ms = n->counters_ms;
		return bps > rdma ? bps : rdma;
	}
	return -1;
}

void nodes_mark_up(struct node *n, void *session, const char *addr,
		   const char *version, uint64_t now_ms)
{
	n->state = NODE_UP;
	if (n->table)
		nodes_journal(n->table, n->name);
	n->session = session;
	snprintf(n->mgmt_address, sizeof(n->mgmt_address), "%s", addr);
	snprintf(n->agent_version, sizeof(n->agent_version), "%s", version);
	n->connected_since_ms = now_ms;
	n->last_seen_ms = now_ms;
	n->session_gen++;
	n->session_inventory = n->session_neighbours = 0;
	n->down_since_ms = 0;
	n->down_reason[0] = '\0';
}

int nodes_ready(const struct node *n)
{
	return n && n->state == NODE_UP && n->session_inventory &&
	       n->session_neighbours && n->inventory && n->neighbours;
}

void nodes_mark_down(struct node *n, const char *reason, uint64_t now_ms)
{
	n->state = NODE_DOWN;
	if (n->table)
		nodes_journal(n->table, n->name);
	n->session = NULL;
	n->down_since_ms = now_ms;
	n->connected_since_ms = 0;
	snprintf(n->down_reason, sizeof(n->down_reason), "%s", reason);
}

void nodes_set_capabilities(struct node *n, char *const *caps, size_t count)
{
	n->n_caps = 0;
	for (size_t i = 0; i < count && n->n_caps < NODES_MAX_CAPS; i++)
		if (caps[i] && strlen(caps[i]) < sizeof(n->caps[0]))
			snprintf(n->caps[n->n_caps++], sizeof(n->caps[0]), "%s",
				 caps[i]);
}

int nodes_has_capability(const struct node *n, const char *cap)
{
	for (unsigned i = 0; i < n->n_caps; i++)
		if (!strcmp(n->caps[i], cap))
			return 1;
	return 0;
}

const char *nodes_state_name(enum node_state s)
{
	switch (s) {
	case NODE_UP:
		return "up";
	case NODE_DOWN:
		return "down";
	default:
		return "never";
	}
}

void nodes_fill_status(const struct node *n, Ring__NodeStatus *st,
		       char **unaddressed)
{
	const Ring__Inventory *inv = n->inventory;

	st->node = (char *)n->name;
	st->expected = n->expected;
	st->state = (char *)nodes_state_name(n->state);
	st->mgmt_address = (char *)n->mgmt_address;
	st->connected_since_ms = n->connected_since_ms;
	st->last_seen_ms = n->last_seen_ms;
	st->agent_version = (char *)n->agent_version;
	st->down_since_ms = n->down_since_ms;
	st->down_reason = (char *)n->down_reason;
	st->mem_available_kib = n->mem_available_kib;
	st->mem_available_ms = n->mem_available_ms;
	st->n_unaddressed_up = 0;
	st->unaddressed_up = unaddressed;
	if (!inv)
		return;
	st->n_rdma_devices = (uint32_t)inv->n_rdma_devices;
	st->mem_total_kib = inv->memory ? inv->memory->total_kib : 0;
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		const Ring__NetInterface *ifc = inv->interfaces[i];

		if (ifc->management)
			continue;
		st->n_interfaces++;
		if (ifc->up_no_address)
			unaddressed[st->n_unaddressed_up++] = ifc->name;
	}
}
