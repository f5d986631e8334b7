/* The Prometheus exposition (text format 0.0.4) rendered from the node
 * table, the last topology and the alerts; metrics.c serves it on GET
 * /metrics.
 *
 * Families (gauges but for the _total counters; a family's HELP and TYPE
 * are written once, even when it has no sample). Every per-node, per-edge,
 * per-diagonal and per-alert family (ringd_alerts_*, ringd_node_*,
 * ringd_interface_*, ringd_rdma_port_*, ringd_rank, ringd_edge_*,
 * ringd_diagonal_path) carries a `ring` label last: the RingView.id of its
 * subject's ring, "" where it is in no ring (issue 24; metrics_rings.c,
 * which also writes the per-ring families):
 *
 *   ringd_topology_rings              the rings of the site
 *   ringd_ring_info{ring,kind,configured}  1; configured "true" when a
 *                                     ring directive names it
 *   ringd_ring_nodes{ring}            its members
 *   ringd_ring_health{ring,state}     as ringd_health, by its alerts
 *   ringd_ring_order_valid{ring}      as ringd_topology_order_valid
 *   ringd_ring_alerts_firing{ring}    alerts firing in it
 *   ringd_ring_slowest_edge_bytes_per_second{ring}  its slowest edge
 *   ringd_ring_not_surveyed_nodes{ring}  members the survey left out
 *   ringd_ring_surveyed_timestamp_seconds{ring}
 *
 * The ring label adds no series beyond the nodes': each node, edge and
 * alert is in one ring, a ring has two members or more (rings <= nodes/2),
 * and nodes <= max_agents; the per-ring families are a few series a ring.
 * A site of one ring has the same families and series as before, each
 * with ring="ID" (its RingView.id), plus one ring's per-ring series.
 *
 *
 *   ringd_coordinator_info{coordinator,version}            1
 *   ringd_coordinator_certificate_expiry_timestamp_seconds  when known
 *   ringd_health{state}               1 for the coordinator's health
 *                                     ("healthy", "relearning", "degraded",
 *                                     "critical"), 0 for the others (a
 *                                     state set)
 *   ringd_alerts_firing{rule,severity}                     alerts firing
 *   ringd_alerts_clearing{rule,severity}  of those, the ones whose
 *                                     condition went away and whose
 *                                     hold-down runs (still firing)
 *   ringd_node_up{node}                                    1 up, 0 not
 *   ringd_node_expected{node}                              1 by `expect`
 *   ringd_node_info{node,version}     1, per connected-once agent version
 *   ringd_node_last_seen_timestamp_seconds{node}
 *   ringd_node_certificate_expiry_timestamp_seconds{node}  up nodes, when
 *                                     their session certificate's end is
 *                                     known
 *   ringd_node_memory_total_bytes{node}          up nodes with inventory
 *   ringd_node_memory_available_bytes{node}
 *   ringd_interface_up{node,interface}           carrier, up nodes only
 *   ringd_interface_speed_bytes_per_second{node,interface}   when known
 *   ringd_interface_mtu_bytes{node,interface}
 *   ringd_interface_pcie_link_width{node,interface}     lanes, when known
 *   ringd_interface_pcie_link_max_width{node,interface} lanes the device
 *                                     can do, when known
 *   ringd_rdma_port_active{node,device,port}     1 when state ACTIVE
 *   ringd_interface_{receive,transmit}_bytes_total{node,interface}
 *   ringd_interface_{receive,transmit}_errors_total{node,interface}
 *   ringd_interface_{receive,transmit}_drops_total{node,interface}
 *                                     counters, from the agents' last
 *                                     counters report; up nodes only
 *   ringd_interface_{receive,transmit}_bytes_per_second{node,interface}
 *                                     over the agent's last interval (none
 *                                     before a second sample)
 *   ringd_rdma_port_{receive,transmit}_bytes_total{node,device,port}
 *                                     counters (the port's data counters,
 *                                     4-byte words converted)
 *   ringd_topology_info{kind,live_kind}          1 (live_kind "" before
 *                                                the live overlay)
 *   ringd_topology_surveyed_timestamp_seconds
 *   ringd_topology_order_valid        1 while the published rank order
 *                                     holds; only with a published order
 *   ringd_topology_not_surveyed_nodes expected nodes the survey left out
 *   ringd_survey_interval_seconds     survey_interval (0: no periodic ones)
 *   ringd_survey_last_failed          1 while the last survey or re-check
 *                                     failed (survey_failed), else 0
 *   ringd_rank{node}                  the node's rank in the published order
 *                                     (on a site of several rings, in its
 *                                     ring's)
 *   ringd_edge_bandwidth_bytes_per_second{a,a_interface,b,b_interface,
 *       direction,streams,transport}  measured figures only (< 0 in the
 *                                     topology = not measured: no sample);
 *                                     direction is the way the data flows
 *                                     ("a_to_b", "b_to_a": an RDMA read by
 *                                     a from b flows b_to_a); transport
 *                                     "tcp", "rdma_write", "rdma_read";
 *                                     streams: TCP streams or RDMA queue
 *                                     pairs
 *   ringd_edge_latency_seconds{a,a_interface,b,b_interface,transport,size,
 *       quantile}                     half round trip at size bytes;
 *                                     quantile 0.5, 0.99, 0.999
 *   ringd_edge_nominal_bytes_per_second{a,a_interface,b,b_interface}
 *   ringd_edge_headline_bytes_per_second{a,a_interface,b,b_interface}
 *                                     the figure edge_degraded judges (top
 *                                     of the ladder, the worse direction)
 *   ringd_edge_baseline_bytes_per_second{a,a_interface,b,b_interface}
 *                                     its baseline (the first good one)
 *   ringd_edge_measured_timestamp_seconds{a,a_interface,b,b_interface}
 *   ringd_edge_verified{a,a_interface,b,b_interface}  probes both ways
 *   ringd_edge_light_check_ok{a,a_interface,b,b_interface}  the last
 *                                     light check got through (1) or not
 *   ringd_edge_light_check_latency_seconds{a,a_interface,b,b_interface}
 *   ringd_edge_light_check_timestamp_seconds{a,a_interface,b,b_interface}
 *                                     when the last light check started
 *   ringd_edge_sample_bytes_per_second{a,a_interface,b,b_interface}
 *                                     the last light check's bandwidth
 *                                     sample, its worse direction
 *   ringd_edge_sample_timestamp_seconds{a,a_interface,b,b_interface}
 *                                     when it was taken
 *   ringd_edge_self_bytes_last_hour{a,a_interface,b,b_interface}  what
 *                                     ringd's tests sent between the two
 *                                     nodes in the last hour (computed)
 *   ringd_edge_gid_changed{a,a_interface,b,b_interface}  1 when a GID
 *                                     the edge's RDMA tests used changed
 *                                     or is gone (gid_change), 0 not;
 *                                     absent while an end is down
 *   ringd_diagonal_path{a,b}          1 when a reached b over the data
 *                                     plane although they are not ring
 *                                     neighbours (unexpected_path), 0 when
 *                                     the survey's check found no path
 *   ringd_edge_up{a,a_interface,b,b_interface}  live state: 1 up or
 *                                     degraded, 0 down; absent without one
 *   ringd_edge_state{a,a_interface,b,b_interface,state}  state set of the
 *                                     live state: up, down, degraded,
 *                                     unverified
 *   ringd_edge_state_since_timestamp_seconds{a,a_interface,b,b_interface}
 *
 * Edges carry their interfaces besides their nodes so that two cables
 * between one pair of nodes are two series. Labels are names (validated on
 * arrival, and here again where a name could be anything) or values from
 * fixed sets; a value outside its set is dropped or mapped, never passed
 * through, so that cardinality stays bounded. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health.h"
#include "log.h"
#include "metrics_expo.h"
#include "validate.h"
#include "health_rules.h"
#include "metrics_rings.h"
#include "metrics_text.h"

static const char *const mr_edge_states[] = {
	"up", "down", "degraded", "unverified", NULL,
};

static void mr_coordinator(struct mr *r)
{
	const struct metrics_src *s = r->src;

	mr_head(r, "ringd_coordinator_info",
		"The coordinator's name and version (value 1).");
	mr_sample(r, "ringd_coordinator_info", 1, "coordinator",
		  mr_str(s->coordinator), "version", mr_str(s->version), NULL);
	mr_head(r, "ringd_coordinator_certificate_expiry_timestamp_seconds",
		"When the coordinator's certificate ends (Unix time).");
	if (s->cert_not_after_ms)
		mr_sample(r,
			  "ringd_coordinator_certificate_expiry_timestamp_"
			  "seconds",
			  (double)s->cert_not_after_ms / 1e3, NULL);
	/* The state store (ringd.db): a state set, and what it could not
	 * save or had to reopen (store_keeper.h). */
	mr_head(r, "ringd_store_state",
		"The state store's state (ok, failing, unavailable): 1 for "
		"the current one, 0 for the others.");
	if (s->store)
		for (int st = STORE_KEEPER_OK; st <= STORE_KEEPER_UNAVAILABLE;
		     st++)
			mr_sample(r, "ringd_store_state",
				  (int)s->store->state == st, "state",
				  store_keeper_state_name(
					  (enum store_keeper_state)st),
				  NULL);
	mr_head_type(r, "ringd_store_unsaved_writes_total",
		     "Writes to the state store that could not be saved.",
		     "counter");
	if (s->store)
		mr_sample(r, "ringd_store_unsaved_writes_total",
			  (double)s->store->unsaved, NULL);
	mr_head_type(r, "ringd_store_reopened_total",
		     "State store files found deleted, replaced or corrupt "
		     "and started afresh.",
		     "counter");
	if (s->store)
		mr_sample(r, "ringd_store_reopened_total",
			  (double)s->store->reopened, NULL);
}

static const char *mr_severity(enum alert_severity s)
{
	switch (s) {
	case ALERT_CRITICAL:
		return "critical";
	case ALERT_WARNING:
		return "warning";
	default:
		return "info";
	}
}

/* A firing alert and its ring (the ring label of its counts). */
struct mr_alert {
	const struct alert *a;
	const char *ring;
};

static int mr_alert_cmp(const void *x, const void *y)
{
	const struct mr_alert *a = x, *b = y;
	int c = strcmp(a->ring, b->ring);

	if (!c)
		c = strcmp(a->a->rule, b->a->rule);
	return c ? c : (int)a->a->severity - (int)b->a->severity;
}

/* Health as a state set, and the firing alerts counted by ring, rule
 * and severity (their subjects and messages are not labels: free text). */
static void mr_alerts(struct mr *r)
{
	const struct alerts *t = r->src->alerts;
	const struct alert **v = NULL;
	struct mr_alert *w = NULL;
	size_t n = 0, got;

	mr_head(r, "ringd_health",
		"1 for the coordinator's health by the firing alerts, 0 for "
		"the other states.");
	if (r->src->health) {
		const char *h = health_name(r->src->health->state);

		for (size_t i = 0; mr_health[i]; i++)
			mr_sample(r, "ringd_health", !strcmp(h, mr_health[i]),
				  "state", mr_health[i], NULL);
	}
	/* The firing ones, grouped by ring, rule and severity: each
	 * family's head, then its samples (the text format wants them
	 * together). */
	n = t ? alerts_firing(t) : 0;
	v = n ? calloc(n, sizeof(*v)) : NULL;
	w = n ? calloc(n, sizeof(*w)) : NULL;
	if (n && (!v || !w)) {
		free(v);
		free(w);
		r->err = 1;
		return;
	}
	got = n ? alerts_list(t, 0, v, n) : 0;
	if (got < n)
		n = got;
	for (size_t i = 0; i < n; i++) {
		w[i].a = v[i];
		w[i].ring = mr_rings_alert(r, v[i]);
	}
	if (n)
		qsort(w, n, sizeof(*w), mr_alert_cmp);
	mr_head(r, "ringd_alerts_firing",
		"Alerts firing, by ring, rule and severity.");
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !mr_alert_cmp(&w[i], &w[j]); j++)
			;
		r->ring = w[i].ring;
		mr_sample(r, "ringd_alerts_firing", (double)(j - i), "rule",
			  w[i].a->rule, "severity",
			  mr_severity(w[i].a->severity), NULL);
	}
	/* 0 where a rule fires but none of it clears. */
	mr_head(r, "ringd_alerts_clearing",
		"Of the alerts firing, those whose condition went away and "
		"whose hold-down runs, by ring, rule and severity.");
	for (size_t i = 0, j; i < n; i = j) {
		size_t clearing = 0;

		for (j = i; j < n && !mr_alert_cmp(&w[i], &w[j]); j++)
			clearing += w[j].a->clearing != 0;
		r->ring = w[i].ring;
		mr_sample(r, "ringd_alerts_clearing", (double)clearing, "rule",
			  w[i].a->rule, "severity",
			  mr_severity(w[i].a->severity), NULL);
	}
	free(w);
	free(v);
}

/* The loop over the nodes: i < n_nodes, with the ring label of node i
 * set for its samples. */
static int mr_at_node(struct mr *r, unsigned i)
{
	if (i >= r->n_nodes)
		return 0;
	r->ring = mr_rings_node(r, i);
	return 1;
}

static void mr_nodes(struct mr *r)
{
	mr_head(r, "ringd_node_up", "1 while the node's agent is connected.");
	for (unsigned i = 0; mr_at_node(r, i); i++)
		mr_sample(r, "ringd_node_up", r->nodes[i]->state == NODE_UP,
			  "node", r->nodes[i]->name, NULL);
	mr_head(r, "ringd_node_expected",
		"1 for a node named by an expect line.");
	for (unsigned i = 0; mr_at_node(r, i); i++)
		mr_sample(r, "ringd_node_expected", r->nodes[i]->expected != 0,
			  "node", r->nodes[i]->name, NULL);
	mr_head(r, "ringd_node_info",
		"The version of the node's agent (value 1).");
	for (unsigned i = 0; mr_at_node(r, i); i++)
		if (r->nodes[i]->agent_version[0])
			mr_sample(r, "ringd_node_info", 1, "node",
				  r->nodes[i]->name, "version",
				  r->nodes[i]->agent_version, NULL);
	mr_head(r, "ringd_node_last_seen_timestamp_seconds",
		"When the node's agent was last heard from (Unix time).");
	for (unsigned i = 0; mr_at_node(r, i); i++)
		if (r->nodes[i]->last_seen_ms)
			mr_sample(r, "ringd_node_last_seen_timestamp_seconds",
				  (double)r->nodes[i]->last_seen_ms / 1e3,
				  "node", r->nodes[i]->name, NULL);
	/* Up nodes only: a down node's session and certificate are gone. */
	mr_head(r, "ringd_node_certificate_expiry_timestamp_seconds",
		"When the certificate of the node's agent ends (Unix time).");
	for (unsigned i = 0; mr_at_node(r, i); i++)
		if (r->nodes[i]->state == NODE_UP &&
		    r->nodes[i]->cert_not_after_ms)
			mr_sample(r,
				  "ringd_node_certificate_expiry_timestamp_"
				  "seconds",
				  (double)r->nodes[i]->cert_not_after_ms / 1e3,
				  "node", r->nodes[i]->name, NULL);
}

/* The inventory of an up node: a down node's last report is history, not
 * the state of its ports. */
static const Ring__Inventory *mr_inventory(const struct node *n)
{
	return n->state == NODE_UP ? n->inventory : NULL;
}

static void mr_memory(struct mr *r)
{
	const char *total = "ringd_node_memory_total_bytes";
	const char *avail = "ringd_node_memory_available_bytes";

	mr_head(r, total, "The node's memory (MemTotal).");
	for (unsigned i = 0; mr_at_node(r, i); i++) {
		const Ring__Inventory *inv = mr_inventory(r->nodes[i]);

		if (inv && inv->memory)
			mr_sample(r, total,
				  (double)inv->memory->total_kib * 1024, "node",
				  r->nodes[i]->name, NULL);
	}
	mr_head(r, avail, "The node's available memory (MemAvailable).");
	for (unsigned i = 0; mr_at_node(r, i); i++) {
		const Ring__Inventory *inv = mr_inventory(r->nodes[i]);

		if (inv && inv->memory)
			mr_sample(r, avail,
				  (double)r->nodes[i]->mem_available_kib * 1024,
				  "node", r->nodes[i]->name, NULL);
	}
}

enum mr_if_fig {
	MR_IF_UP,
	MR_IF_SPEED,
	MR_IF_MTU,
	MR_IF_PCIE_WIDTH,
	MR_IF_PCIE_MAX_WIDTH,
};

/* An interface's figure; NAN (no sample) when not known. */
static double mr_if_value(const Ring__NetInterface *f, enum mr_if_fig fig)
{
	switch (fig) {
	case MR_IF_UP:
		return f->carrier;
	case MR_IF_MTU:
		return f->mtu;
	case MR_IF_SPEED:
		return f->speed_mbps > 0 ? f->speed_mbps * 1e6 / 8 : NAN;
	case MR_IF_PCIE_WIDTH:
		return f->pcie_link_width ? f->pcie_link_width : NAN;
	case MR_IF_PCIE_MAX_WIDTH:
		return f->pcie_max_link_width ? f->pcie_max_link_width : NAN;
	}
	return NAN;
}

static void mr_interfaces_one(struct mr *r, const char *name,
			      enum mr_if_fig fig)
{
	for (unsigned i = 0; mr_at_node(r, i); i++) {
		const Ring__Inventory *inv = mr_inventory(r->nodes[i]);

		for (size_t k = 0; inv && k < inv->n_interfaces; k++) {
			const Ring__NetInterface *f = inv->interfaces[k];
			double v = mr_if_value(f, fig);

			if (validate_ifname(f->name))
				mr_sample(r, name, v, "node", r->nodes[i]->name,
					  "interface", f->name, NULL);
		}
	}
}

static void mr_interfaces(struct mr *r)
{
	mr_head(r, "ringd_interface_up",
		"1 while the interface has carrier (a cable with a live "
		"peer).");
	mr_interfaces_one(r, "ringd_interface_up", MR_IF_UP);
	mr_head(r, "ringd_interface_speed_bytes_per_second",
		"The interface's link speed.");
	mr_interfaces_one(r, "ringd_interface_speed_bytes_per_second",
			  MR_IF_SPEED);
	mr_head(r, "ringd_interface_mtu_bytes", "The interface's MTU.");
	mr_interfaces_one(r, "ringd_interface_mtu_bytes", MR_IF_MTU);
	mr_head(r, "ringd_interface_pcie_link_width",
		"The lanes of the interface's PCIe link now.");
	mr_interfaces_one(r, "ringd_interface_pcie_link_width",
			  MR_IF_PCIE_WIDTH);
	mr_head(r, "ringd_interface_pcie_link_max_width",
		"The lanes the interface's PCIe device can link at.");
	mr_interfaces_one(r, "ringd_interface_pcie_link_max_width",
			  MR_IF_PCIE_MAX_WIDTH);
	mr_head(r, "ringd_rdma_port_active",
		"1 while the RDMA port's state is ACTIVE.");
	for (unsigned i = 0; mr_at_node(r, i); i++) {
		const Ring__Inventory *inv = mr_inventory(r->nodes[i]);

		for (size_t d = 0; inv && d < inv->n_rdma_devices; d++) {
			const Ring__RdmaDevice *dev = inv->rdma_devices[d];

			if (!validate_rdma_name(dev->name))
				continue;
			for (size_t p = 0; p < dev->n_ports; p++) {
				char port[16];

				snprintf(port, sizeof(port), "%" PRIu32,
					 dev->ports[p]->port);
				mr_sample(r, "ringd_rdma_port_active",
					  !strcmp(mr_str(dev->ports[p]->state),
						  "ACTIVE"),
					  "node", r->nodes[i]->name, "device",
					  dev->name, "port", port, NULL);
			}
		}
	}
}
/* The last counters report of an up node, as for inventories. */
static const Ring__CountersReport *mr_counters(const struct node *n)
{
	return n->state == NODE_UP ? n->counters : NULL;
}

enum mr_ctr {
	MR_RX_BYTES,
	MR_TX_BYTES,
	MR_RX_ERRORS,
	MR_TX_ERRORS,
	MR_RX_DROPS,
	MR_TX_DROPS,
	MR_RX_RATE,
	MR_TX_RATE,
};

static double mr_ctr_value(const Ring__CountersReport *c,
			   const Ring__PortCounters *p, enum mr_ctr fig)
{
	switch (fig) {
	case MR_RX_BYTES:
		return (double)p->rx_bytes;
	case MR_TX_BYTES:
		return (double)p->tx_bytes;
	case MR_RX_ERRORS:
		return (double)p->rx_errors;
	case MR_TX_ERRORS:
		return (double)p->tx_errors;
	case MR_RX_DROPS:
		return (double)p->rx_dropped;
	case MR_TX_DROPS:
		return (double)p->tx_dropped;
	case MR_RX_RATE:
		/* The first sample has no rate: no sample, not a 0. */
		return c->interval_ms ? p->rx_bytes_per_s : NAN;
	default:
		return c->interval_ms ? p->tx_bytes_per_s : NAN;
	}
}

static void mr_port_counters(struct mr *r)
{
	static const struct {
		const char *name, *help;
		enum mr_ctr fig;
	} fams[] = {
		{"ringd_interface_receive_bytes_total",
		 "Bytes the interface received (kernel statistics).",
		 MR_RX_BYTES},
		{"ringd_interface_transmit_bytes_total",
		 "Bytes the interface sent (kernel statistics).", MR_TX_BYTES},
		{"ringd_interface_receive_errors_total",
		 "Receive errors on the interface.", MR_RX_ERRORS},
		{"ringd_interface_transmit_errors_total",
		 "Transmit errors on the interface.", MR_TX_ERRORS},
		{"ringd_interface_receive_drops_total",
		 "Received packets the interface dropped.", MR_RX_DROPS},
		{"ringd_interface_transmit_drops_total",
		 "Packets to send the interface dropped.", MR_TX_DROPS},
		{"ringd_interface_receive_bytes_per_second",
		 "Receive rate over the agent's last counters interval.",
		 MR_RX_RATE},
		{"ringd_interface_transmit_bytes_per_second",
		 "Transmit rate over the agent's last counters interval.",
		 MR_TX_RATE},
	};

	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		mr_head_type(r, fams[f].name, fams[f].help,
			     fams[f].fig >= MR_RX_RATE ? "gauge" : "counter");
		for (unsigned i = 0; mr_at_node(r, i); i++) {
			const Ring__CountersReport *c =
				mr_counters(r->nodes[i]);

			for (size_t k = 0; c && k < c->n_ports; k++)
				if (validate_ifname(c->ports[k]->interface))
					mr_sample(r, fams[f].name,
						  mr_ctr_value(c, c->ports[k],
							       fams[f].fig),
						  "node", r->nodes[i]->name,
						  "interface",
						  c->ports[k]->interface, NULL);
		}
	}
	for (int tx = 0; tx < 2; tx++) {
		const char *name = tx ? "ringd_rdma_port_transmit_bytes_total"
				      : "ringd_rdma_port_receive_bytes_total";

		mr_head_type(r, name,
			     tx ? "Bytes the RDMA port sent (port_xmit_data "
				  "x 4)."
				: "Bytes the RDMA port received (port_rcv_data "
				  "x 4).",
			     "counter");
		for (unsigned i = 0; mr_at_node(r, i); i++) {
			const Ring__CountersReport *c =
				mr_counters(r->nodes[i]);

			for (size_t k = 0; c && k < c->n_ports; k++) {
				const Ring__PortCounters *p = c->ports[k];
				char port[16];

				if (!validate_rdma_name(p->rdma_device))
					continue;
				snprintf(port, sizeof(port), "%" PRIu32,
					 p->rdma_port);
				mr_sample(r, name,
					  (double)(tx ? p->rdma_xmit_bytes
						      : p->rdma_rcv_bytes),
					  "node", r->nodes[i]->name, "device",
					  p->rdma_device, "port", port, NULL);
			}
		}
	}
}

static void mr_topology(struct mr *r)
{
	const Ring__Topology *t = r->src->topology;

	mr_head(r, "ringd_topology_info",
		"The class of the surveyed topology and, from the live "
		"overlay, of the cables as they are now (value 1).");
	if (t)
		mr_sample(r, "ringd_topology_info", 1, "kind",
			  mr_in_set(t->kind, mr_kinds, "other"), "live_kind",
			  t->live_kind && *t->live_kind
				  ? mr_in_set(t->live_kind, mr_kinds, "other")
				  : "",
			  NULL);
	mr_head(r, "ringd_topology_surveyed_timestamp_seconds",
		"When the last survey finished (Unix time).");
	if (t && t->surveyed_ms)
		mr_sample(r, "ringd_topology_surveyed_timestamp_seconds",
			  (double)t->surveyed_ms / 1e3, NULL);
	mr_head(r, "ringd_topology_order_valid",
		"1 while the published rank order holds: every node up, every "
		"cable between consecutive ranks up.");
	if (t && t->n_ranks)
		mr_sample(r, "ringd_topology_order_valid", t->order_valid != 0,
			  NULL);
	mr_head(r, "ringd_topology_not_surveyed_nodes",
		"Expected nodes the last survey could not include.");
	if (t)
		mr_sample(r, "ringd_topology_not_surveyed_nodes",
			  (double)t->n_not_surveyed, NULL);
	mr_head(r, "ringd_survey_interval_seconds",
		"How often the coordinator surveys (survey_interval; 0: only "
		"on demand).");
	mr_sample(r, "ringd_survey_interval_seconds",
		  (double)r->src->survey_interval_ms / 1e3, NULL);
	mr_head(r, "ringd_survey_last_failed",
		"1 while the last survey or re-check failed, else 0.");
	mr_sample(r, "ringd_survey_last_failed", r->src->survey_failed != 0,
		  NULL);
	mr_head(r, "ringd_rank", "The node's rank in the published order.");
	for (size_t i = 0; t && i < t->n_ranks; i++) {
		r->ring = mr_rings_of(r, t->ranks[i]->node);
		mr_sample(r, "ringd_rank", t->ranks[i]->rank, "node",
			  mr_str(t->ranks[i]->node), NULL);
	}
	/* A site of several rings: each ring's own order (the top-level
	 * one is empty then). */
	for (size_t k = 0; t && t->n_rings > 1 && k < t->n_rings; k++) {
		const Ring__RingView *v = t->rings[k];

		r->ring = mr_str(v->id);
		for (size_t i = 0; i < v->n_ranks; i++)
			mr_sample(r, "ringd_rank", v->ranks[i]->rank, "node",
				  mr_str(v->ranks[i]->node), NULL);
	}
}

/* The labels that name an edge: its nodes and the ports of its cable. */
#define MR_EDGE(e)                                                             \
	"a", mr_str((e)->a), "a_interface", mr_str((e)->a_interface), "b",     \
		mr_str((e)->b), "b_interface", mr_str((e)->b_interface)

/* A measured figure in Gbit/s (< 0 = not measured: no sample). */
static void mr_bw(struct mr *r, const Ring__Edge *e, const char *direction,
		  const char *streams, const char *transport, double gbps)
{
	if (!(gbps >= 0))
		return;
	mr_sample(r, "ringd_edge_bandwidth_bytes_per_second", gbps * 1e9 / 8,
		  MR_EDGE(e), "direction", direction, "streams", streams,
		  "transport", transport, NULL);
}

/* The ladder came from RDMA WRITE queue pairs (survey_method rdma, or
 * auto with RDMA ports): then it is the RDMA write figure itself. */
static int mr_ladder_rdma(const Ring__Edge *e)
{
	return e->method_kind == RING__EDGE_METHOD__EDGE_METHOD_RDMA;
}

static void mr_edge_bw(struct mr *r, const Ring__Edge *e)
{
	const char *ladder = mr_ladder_rdma(e) ? "rdma_write" : "tcp";
	char streams[16] = "";

	for (size_t s = 0; s < e->n_ladder; s++) {
		snprintf(streams, sizeof(streams), "%" PRIu32, e->ladder[s]);
		if (s < e->n_gbps_a_to_b)
			mr_bw(r, e, "a_to_b", streams, ladder,
			      e->gbps_a_to_b[s]);
		if (s < e->n_gbps_b_to_a)
			mr_bw(r, e, "b_to_a", streams, ladder,
			      e->gbps_b_to_a[s]);
	}
	streams[0] = '\0';
	if (mr_ladder_rdma(e) && e->n_ladder)
		snprintf(streams, sizeof(streams), "%" PRIu32, e->ladder[0]);
	else if (r->src->rdma_qps)
		snprintf(streams, sizeof(streams), "%" PRIu32,
			 r->src->rdma_qps);
	if (!mr_ladder_rdma(e)) {
		mr_bw(r, e, "a_to_b", streams, "rdma_write",
		      e->rdma_write_gbps_a_to_b);
		mr_bw(r, e, "b_to_a", streams, "rdma_write",
		      e->rdma_write_gbps_b_to_a);
	}
	/* Named by the requester: a_to_b is a reading from b, the data
	 * flowing from b to a. */
	mr_bw(r, e, "b_to_a", streams, "rdma_read", e->rdma_read_gbps_a_to_b);
	mr_bw(r, e, "a_to_b", streams, "rdma_read", e->rdma_read_gbps_b_to_a);
}

static void mr_lat(struct mr *r, const Ring__Edge *e, const char *transport,
		   Ring__LatResult *const *lat, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct {
			const char *q;
			double us;
		} qs[] = {
			{"0.5", lat[i]->p50_us},
			{"0.99", lat[i]->p99_us},
			{"0.999", lat[i]->p999_us},
		};
		char size[16];

		if (!lat[i]->n)
			continue;
		snprintf(size, sizeof(size), "%" PRIu32, lat[i]->size);
		for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++)
			if (qs[k].us >= 0)
				mr_sample(r, "ringd_edge_latency_seconds",
					  qs[k].us * 1e-6, MR_EDGE(e),
					  "transport", transport, "size", size,
					  "quantile", qs[k].q, NULL);
	}
}

static void mr_edge_lat(struct mr *r, const Ring__Edge *e)
{
	mr_lat(r, e, "tcp", e->latency, e->n_latency);
	mr_lat(r, e, "rdma_write", e->rdma_write_lat, e->n_rdma_write_lat);
}

static void mr_edge_nominal(struct mr *r, const Ring__Edge *e)
{
	if (e->nominal_gbps > 0)
		mr_sample(r, "ringd_edge_nominal_bytes_per_second",
			  e->nominal_gbps * 1e9 / 8, MR_EDGE(e), NULL);
}

static void mr_edge_headline(struct mr *r, const Ring__Edge *e)
{
	double g = health_rules_edge_figure(e);

	if (g >= 0)
		mr_sample(r, "ringd_edge_headline_bytes_per_second",
			  g * 1e9 / 8, MR_EDGE(e), NULL);
}

static void mr_edge_baseline(struct mr *r, const Ring__Edge *e)
{
	double g = r->src->edge_baseline
			   ? r->src->edge_baseline(e, r->src->edge_arg)
			   : -1;

	if (g > 0)
		mr_sample(r, "ringd_edge_baseline_bytes_per_second",
			  g * 1e9 / 8, MR_EDGE(e), NULL);
}

static void mr_edge_gid(struct mr *r, const Ring__Edge *e)
{
	int c = r->src->edge_gid_changed
			? r->src->edge_gid_changed(e, r->src->edge_arg)
			: -1;

	if (c >= 0)
		mr_sample(r, "ringd_edge_gid_changed", c, MR_EDGE(e), NULL);
}

static void mr_edge_measured(struct mr *r, const Ring__Edge *e)
{
	if (e->measured_ms)
		mr_sample(r, "ringd_edge_measured_timestamp_seconds",
			  (double)e->measured_ms / 1e3, MR_EDGE(e), NULL);
}

static void mr_edge_self_bytes(struct mr *r, const Ring__Edge *e)
{
	mr_sample(r, "ringd_edge_self_bytes_last_hour",
		  (double)e->self_bytes_hour, MR_EDGE(e), NULL);
}

static void mr_edge_light_ok(struct mr *r, const Ring__Edge *e)
{
	if (e->light_ms)
		mr_sample(r, "ringd_edge_light_check_ok",
			  !e->light_error || !*e->light_error, MR_EDGE(e),
			  NULL);
}

static void mr_edge_light_lat(struct mr *r, const Ring__Edge *e)
{
	if (e->light_ms && e->light_lat_p50_us >= 0)
		mr_sample(r, "ringd_edge_light_check_latency_seconds",
			  e->light_lat_p50_us / 1e6, MR_EDGE(e), NULL);
}

/* A failed check that started before the edge's state began (a cable
 * cut, then mended) is no news about the cable now: rules compare the
 * two times, so this is when it started (when it ended, from an older
 * coordinator that did not say). */
static void mr_edge_light_ms(struct mr *r, const Ring__Edge *e)
{
	if (e->light_ms)
		mr_sample(r, "ringd_edge_light_check_timestamp_seconds",
			  (double)(e->light_started_ms ? e->light_started_ms
						       : e->light_ms) /
				  1e3,
			  MR_EDGE(e), NULL);
}

/* The light check's bandwidth sample, its worse direction (as the
 * headline figure). */
static void mr_edge_sample(struct mr *r, const Ring__Edge *e)
{
	double a = e->sample_gbps_a_to_b, b = e->sample_gbps_b_to_a;
	double g = a < 0 ? b : b < 0 ? a : a < b ? a : b;

	if (e->sample_ms && g >= 0)
		mr_sample(r, "ringd_edge_sample_bytes_per_second", g * 1e9 / 8,
			  MR_EDGE(e), NULL);
}

static void mr_edge_sample_ms(struct mr *r, const Ring__Edge *e)
{
	if (e->sample_ms)
		mr_sample(r, "ringd_edge_sample_timestamp_seconds",
			  (double)e->sample_ms / 1e3, MR_EDGE(e), NULL);
}

static void mr_edge_verified(struct mr *r, const Ring__Edge *e)
{
	mr_sample(r, "ringd_edge_verified", e->verified != 0, MR_EDGE(e), NULL);
}

/* The live state, if it is one we know; NULL otherwise. */
static const char *mr_edge_live(const Ring__Edge *e)
{
	return mr_in_set(e->live_state, mr_edge_states, NULL);
}

static void mr_edge_up(struct mr *r, const Ring__Edge *e)
{
	const char *st = mr_edge_live(e);

	if (st && strcmp(st, "unverified"))
		mr_sample(r, "ringd_edge_up", strcmp(st, "down") != 0,
			  MR_EDGE(e), NULL);
}

static void mr_edge_state(struct mr *r, const Ring__Edge *e)
{
	const char *st = mr_edge_live(e);

	for (size_t i = 0; st && mr_edge_states[i]; i++)
		mr_sample(r, "ringd_edge_state", st == mr_edge_states[i],
			  MR_EDGE(e), "state", mr_edge_states[i], NULL);
}

static void mr_edge_since(struct mr *r, const Ring__Edge *e)
{
	if (mr_edge_live(e) && e->live_since_ms)
		mr_sample(r, "ringd_edge_state_since_timestamp_seconds",
			  (double)e->live_since_ms / 1e3, MR_EDGE(e), NULL);
}

static void mr_edges(struct mr *r)
{
	static const struct {
		const char *name;
		const char *help;
		void (*one)(struct mr *r, const Ring__Edge *e);
	} fams[] = {
		{"ringd_edge_bandwidth_bytes_per_second",
		 "Measured throughput over the edge, by the direction the data "
		 "flows, streams (TCP streams or RDMA queue pairs) and "
		 "transport.",
		 mr_edge_bw},
		{"ringd_edge_latency_seconds",
		 "Measured half round trip latency over the edge, by message "
		 "size.",
		 mr_edge_lat},
		{"ringd_edge_nominal_bytes_per_second",
		 "The edge's nominal speed (its slower port).",
		 mr_edge_nominal},
		{"ringd_edge_headline_bytes_per_second",
		 "The figure edge_degraded judges: the top of the edge's "
		 "ladder in its worse direction (else its RDMA write figures).",
		 mr_edge_headline},
		{"ringd_edge_baseline_bytes_per_second",
		 "The edge's baseline: its first good headline figure.",
		 mr_edge_baseline},
		{"ringd_edge_measured_timestamp_seconds",
		 "When the edge's figures were measured (Unix time).",
		 mr_edge_measured},
		{"ringd_edge_verified",
		 "1 when data-plane probes crossed the edge both ways.",
		 mr_edge_verified},
		{"ringd_edge_self_bytes_last_hour",
		 "Bytes ringd's own tests put between the edge's nodes in the "
		 "last hour (computed from the tests' reports).",
		 mr_edge_self_bytes},
		{"ringd_edge_light_check_ok",
		 "1 when the edge's last light check (probes, 64 B latency "
		 "sample) got through, 0 when it failed; absent before one.",
		 mr_edge_light_ok},
		{"ringd_edge_light_check_latency_seconds",
		 "The median of the edge's last light check (64 B).",
		 mr_edge_light_lat},
		{"ringd_edge_gid_changed",
		 "1 when a GID the edge's RDMA tests used changed or is gone "
		 "(NCCL_IB_GID_INDEX may be stale), 0 not; absent while a node "
		 "at an end is down.",
		 mr_edge_gid},
		{"ringd_edge_light_check_timestamp_seconds",
		 "When the edge's last light check started (Unix time).",
		 mr_edge_light_ms},
		{"ringd_edge_sample_bytes_per_second",
		 "The last light check's bandwidth sample (a short window, "
		 "only on an idle edge), its worse direction; edge_degraded "
		 "judges it when it is newer than the survey's figures.",
		 mr_edge_sample},
		{"ringd_edge_sample_timestamp_seconds",
		 "When the edge's last bandwidth sample was taken (Unix time).",
		 mr_edge_sample_ms},
		{"ringd_edge_up",
		 "The live state of the edge: 1 up (or degraded), 0 down.",
		 mr_edge_up},
		{"ringd_edge_state",
		 "1 for the live state of the edge, 0 for the other states.",
		 mr_edge_state},
		{"ringd_edge_state_since_timestamp_seconds",
		 "When the edge's live state began (Unix time).",
		 mr_edge_since},
	};
	const Ring__Topology *t = r->src->topology;

	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		mr_head(r, fams[f].name, fams[f].help);
		for (size_t i = 0; t && i < t->n_edges; i++) {
			r->ring = mr_rings_edge(r, t->edges[i]->a,
						t->edges[i]->b);
			fams[f].one(r, t->edges[i]);
		}
	}
}

static int mr_diag_cmp(const void *x, const void *y)
{
	const Ring__DiagonalCheck *a = *(const Ring__DiagonalCheck *const *)x;
	const Ring__DiagonalCheck *b = *(const Ring__DiagonalCheck *const *)y;
	int c = strcmp(mr_str(a->a), mr_str(b->a));

	return c ? c : strcmp(mr_str(a->b), mr_str(b->b));
}

/* One sample per checked pair (a pair is checked at several of b's
 * addresses): 1 if any check found a path. The survey checks every
 * non-adjacent pair on small rings and those two hops apart on large
 * ones, so the series stay about as many as the nodes. */
static void mr_diagonals(struct mr *r)
{
	const Ring__Topology *t = r->src->topology;
	const Ring__DiagonalCheck **v;
	size_t n = t ? t->n_diagonals : 0;

	mr_head(r, "ringd_diagonal_path",
		"1 when a reached b over the data plane although they are not "
		"ring neighbours, 0 when the survey's check found no path.");
	if (!n)
		return;
	v = calloc(n, sizeof(*v));
	if (!v) {
		r->err = 1;
		return;
	}
	memcpy(v, t->diagonals, n * sizeof(*v));
	qsort(v, n, sizeof(*v), mr_diag_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		int path = 0;

		for (j = i; j < n && !mr_diag_cmp(&v[i], &v[j]); j++)
			path |= v[j]->path != 0;
		r->ring = mr_rings_edge(r, v[i]->a, v[i]->b);
		mr_sample(r, "ringd_diagonal_path", path, "a", mr_str(v[i]->a),
			  "b", mr_str(v[i]->b), NULL);
	}
	free(v);
}

int metrics_render(struct evbuffer *out, const struct metrics_src *src)
{
	struct mr r = {.b = out, .src = src};

	if (src->nodes && nodes_count(src->nodes)) {
		r.nodes = nodes_sorted(src->nodes, &r.n_nodes);
		if (!r.nodes) {
			errno = ENOMEM;
			return -1;
		}
	}
	if (mr_rings_new(&r) < 0) {
		free(r.nodes);
		mr_rings_free(&r);
		errno = ENOMEM;
		return -1;
	}
	mr_coordinator(&r);
	mr_alerts(&r);
	mr_nodes(&r);
	mr_memory(&r);
	mr_interfaces(&r);
	mr_port_counters(&r);
	mr_topology(&r);
	mr_edges(&r);
	mr_diagonals(&r);
	mr_rings_families(&r);
	mr_rings_free(&r);
	free(r.nodes);
	if (r.err) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}
