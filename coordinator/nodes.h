/* The coordinator's table of nodes: expected ones from the config and any
 * agent that authenticated. Lookup by name is O(1); listing is sorted (a
 * copy of an index kept in order, O(n)). */
#ifndef RING_NODES_H
#define RING_NODES_H

#include <stddef.h>
#include <stdint.h>

#include "ring.pb-c.h"

#define NODES_MAX_CAPS 16

enum node_state {
	NODE_NEVER, /* expected, never connected */
	NODE_UP,
	NODE_DOWN,
};

/* Whether the counters between two reports of a port are judged
 * (docs/COUNTERS.md, "Which windows port_errors judges"): a cut or an agent's
 * absence moves drop counters that say nothing about the cable. */
enum node_window {
	NODE_WINDOW_JUDGED = 0,
	NODE_WINDOW_NONE,    /* no earlier report of the port */
	NODE_WINDOW_SESSION, /* an agent (re)connect between the reports */
	NODE_WINDOW_CARRIER, /* no carrier at a sample, or a change between */
};

/* How much a port's error and drop counters rose since the node's
 * previous counters report, in a judged window only (else 0, as where a
 * counter went back: a reset is no rise). */
struct node_port_rise {
	uint64_t rx_errors, tx_errors, rx_dropped, tx_dropped;
	enum node_window window;
	/* rx_dropped left out of a judged window: the agent's beacon
	 * receiver was not bound on the port at both samples, so LLDP
	 * frames could be what the kernel dropped. */
	int rx_dropped_unjudged;
	/* RDMA data bytes: RoCE traffic of hardware devices bypasses the
	 * netdev's byte counters, so a busy link shows only here. */
	uint64_t rdma_rcv_bytes, rdma_xmit_bytes;
};

struct node {
	char name[64];
	int expected;
	enum node_state state;
	void *session; /* the live agent session, NULL when not up */
	char mgmt_address[64];
	char agent_version[64];
	uint64_t connected_since_ms; /* Unix ms */
	uint64_t last_seen_ms;
	uint64_t down_since_ms;
	char down_reason[160];
	uint64_t mem_available_kib;
	uint64_t mem_available_ms;     /* when it arrived (last_seen_ms then) */
	uint64_t cert_not_after_ms;    /* the session certificate's end; 0 ? */
	char caps[NODES_MAX_CAPS][32]; /* Hello capabilities of the session */
	unsigned n_caps;
	Ring__Inventory *inventory;	  /* last report, owned */
	Ring__NeighbourTable *neighbours; /* last LLDP table, owned */
	/* This session has sent its inventory and its neighbour table (the
	 * ones above may be a previous session's): until both, the node's
	 * cables are not judged. */
	int session_inventory, session_neighbours;
	/* The last port counters report (owned), each port's rise against
	 * the one before (per counters->ports[i]; NULL: not known), when it
	 * arrived (Unix ms) and how long after the one before (0: none). */
	Ring__CountersReport *counters;
	struct node_port_rise *counters_rise;
	uint64_t counters_ms, counters_span_ms;
	/* Agent sessions (nodes_mark_up) and carrier changes among the
	 * inventories' interfaces, counted; the counts when the stored
	 * counters report arrived. */
	uint64_t session_gen, carrier_gen;
	uint64_t counters_session_gen, counters_carrier_gen;
	struct node *hash_next;
	struct nodes *table; /* the table it is in (its change journal) */
	int rising;	     /* a port of the last counters report rose */
};

struct nodes;

struct nodes *nodes_new(void);
void nodes_free(struct nodes *t);
struct node *nodes_find(struct nodes *t, const char *name);
/* Find or add (state NODE_NEVER). NULL with errno on allocation failure or
 * ENOSPC past max. */
struct node *nodes_get(struct nodes *t, const char *name, unsigned max);
/* Remove a node that is not up. 0 or -1 (ENOENT, EBUSY). */
int nodes_remove(struct nodes *t, const char *name);
unsigned nodes_count(const struct nodes *t);
/* Up, and this session has reported its inventory and neighbours: its
 * facts are fresh enough to judge its cables by. */
int nodes_ready(const struct node *n);
/* Sorted by name into a new malloc'd array of *n pointers (a copy of the
 * table's index: O(n), no sort). */
struct node **nodes_sorted(struct nodes *t, unsigned *n);
/* Changes of the table (a node added or removed, a state set by
 * nodes_mark_up or nodes_mark_down), numbered from 1: a reader that
 * follows the table node by node (the feed) reads the names changed
 * since the last number it saw, or diffs the whole table when that fell
 * out of the journal. */
#define NODES_JOURNAL 64
uint64_t nodes_changes(const struct nodes *t);
/* The name of change seq; NULL when seq is 0, not yet, or more than
 * NODES_JOURNAL changes ago. Valid until the next change. */
const char *nodes_change_name(const struct nodes *t, uint64_t seq);
/* Replace the stored inventory (takes ownership); its MemAvailable, if
 * any, becomes the node's, received at last_seen_ms. */
void nodes_set_inventory(struct node *n, Ring__Inventory *inv);
/* Replace the stored neighbour table (takes ownership). */
void nodes_set_neighbours(struct node *n, Ring__NeighbourTable *t);
/* Replace the stored counters report (takes ownership), arrived at now_ms,
 * and compute each port's rise against the one it replaces, where that
 * window is judged: both reports of this agent session, the port with
 * carrier at both samples and none lost between (by the report's
 * carrier_changes, else by the inventories). 1 when the
 * set of ports whose errors or drops rise changed (one started or stopped
 * rising): the health rule has something new to say; else 0. */
int nodes_set_counters(struct node *n, Ring__CountersReport *r,
		       uint64_t now_ms);
/* How many nodes' last counters report has a port whose error or drop
 * counters rose (nodes_port_rising): 0 lets a reader skip the walk. */
unsigned nodes_rising_count(const struct nodes *t);
/* 1 if any of the port's error or drop counters rose. */
int nodes_port_rising(const struct node_port_rise *r);
/* Node n's interface called name in its last inventory, or NULL (no
 * node, no inventory, no such interface). */
const Ring__NetInterface *nodes_iface(const struct node *n, const char *name);
/* The traffic on a node's port by its last counters report, in bits per
 * second, the busier direction, netdev or RDMA bytes whichever is more;
 * *sample_ms: when that report arrived. -1 when not known (no report,
 * no such port, no rate yet). */
double nodes_port_traffic_bps(const struct node *n, const char *ifname,
			      uint64_t *sample_ms);
void nodes_mark_up(struct node *n, void *session, const char *addr,
		   const char *version, uint64_t now_ms);
void nodes_mark_down(struct node *n, const char *reason, uint64_t now_ms);
const char *nodes_state_name(enum node_state s);
/* Replace the capabilities the node's agent announced in Hello (at most
 * NODES_MAX_CAPS; longer names are dropped). */
void nodes_set_capabilities(struct node *n, char *const *caps, size_t count);
/* 1 if the node's agent announced cap, else 0. */
int nodes_has_capability(const struct node *n, const char *cap);
/* Fill a NodeStatus whose strings point into n (valid until n changes);
 * unaddressed must have room for the interface count of n's inventory. */
void nodes_fill_status(const struct node *n, Ring__NodeStatus *st,
		       char **unaddressed);

#endif
