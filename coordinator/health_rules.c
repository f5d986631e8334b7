/* The live view over the published topology, and the health rules that
 * read it (see watch.h). Facts come from the node table only: what the
 * agents pushed (up or down, inventories with carrier, MTU and speeds,
 * beacon tables); nothing here sends traffic. */
#include "health_rules.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "frame.h"
#include "log.h"
#include "text.h"
#include "topoview.h"

/* One edge of the published topology as the agents see it now. */
struct health_rules_edge {
	char state[16]; /* up, down, unverified */
	uint64_t since_ms;
	char reason[256];
	/* The fastest each end has linked at since the topology was
	 * published: a downshift is a link that renegotiated below it. */
	int32_t max_mbps[2];
	/* Carrier at both ends but no beacons either way since (0: not
	 * so): down only once that outlasts the beacon grace. */
	uint64_t quiet_since_ms;
};

/* Without a neighbour table to read the agents' beacon interval from:
 * two of the default 5 s intervals. */
#define WATCH_BEACON_GRACE_MS 10000

struct health_rules_baseline {
	char edge[ALERTS_EDGE_LEN];
	double gbps;
	uint64_t ms;
};

/* Baselines are bounded like the node table: a few edges per node. */
#define WATCH_MAX_BASELINES 65536

struct health_rules {
	struct event_base *base;
	const struct coord_conf *conf;
	struct nodes *table;
	struct alerts *alerts;
	struct event *eval_ev; /* a change: evaluate on the next pass */
	struct event *tick_ev; /* the next hold-down to end */
	Ring__Topology *top;   /* a copy of the published one */
	struct health_rules_edge *edges;
	char live_kind[16];
	char live_gap[256];
	/* live_gap as data: nodes down (pointers into top's order) and
	 * cables not up ("x-y", owned), each at most top's n_order. */
	char **live_down, **live_cut;
	size_t n_live_down, n_live_cut;
	char order_invalid[320];
	char **not_surveyed; /* owned strings */
	size_t n_not_surveyed;
	/* The published strays (top's own list, given back on detach) and
	 * those of them still up, which the overlay shows. */
	Ring__StrayNode **strays_pub, **live_strays;
	size_t n_strays_pub, n_live_strays;
	int attached;	      /* the overlay's pointers are in top */
	uint64_t started_ms;  /* an expected node is missing after the grace */
	uint64_t own_cert_ms; /* the coordinator's certificate ends */
	struct health_rules_baseline *baselines;
	size_t n_baselines, cap_baselines;
	char survey_failure[400]; /* the last survey's, "" when it succeeded */
	health_rules_eval_fn eval_fn;
	void *eval_arg;
	health_rules_edge_fn edge_fn;
	void *edge_arg;
	/* After a restart: until every awaited node is ready or this
	 * passes, cables, nodes and the ring are not judged (0: not
	 * relearning). */
	uint64_t relearn_until_ms, relearn_started_ms;
	struct event *relearn_ev;
	struct event *beacon_ev; /* the earliest beacon grace to end */
	uint64_t beacon_due_ms;	 /* then (0: none pending) */
};

static void health_rules_rules_baselines(struct health_rules *w,
					 uint64_t now_ms);
static void health_rules_beacon_arm(struct health_rules *w, uint64_t now_ms);
static void health_rules_edge_extras(struct health_rules *w);

const char *const health_rules_rules[] = {
	"node_down",	      "cable_down",	 "ring_broken",
	"mtu_mismatch",	      "speed_downshift", "pcie_downshift",
	"version_skew",	      "unexpected_path", "port_errors",
	"cert_expiring",      "edge_degraded",	 "survey_failed",
	"light_check_failed", "gid_change",
};
const size_t health_rules_n_rules =
	sizeof(health_rules_rules) / sizeof(health_rules_rules[0]);

/* The overlay points into the watch's own buffers while attached; before
 * the copy is freed or replaced, the pointers go back to protobuf-c's
 * empty string so that free_unpacked frees only what it allocated. */
static void health_rules_detach(struct health_rules *w)
{
	Ring__Topology *t = w->top;

	if (!t || !w->attached)
		return;
	for (size_t i = 0; i < t->n_edges; i++) {
		t->edges[i]->live_state = (char *)protobuf_c_empty_string;
		t->edges[i]->live_reason = (char *)protobuf_c_empty_string;
		t->edges[i]->light_error = (char *)protobuf_c_empty_string;
	}
	t->live_kind = (char *)protobuf_c_empty_string;
	t->live_gap = (char *)protobuf_c_empty_string;
	t->live_nodes_down = NULL;
	t->n_live_nodes_down = 0;
	t->live_cables_down = NULL;
	t->n_live_cables_down = 0;
	t->order_invalid = (char *)protobuf_c_empty_string;
	t->not_surveyed = NULL;
	t->n_not_surveyed = 0;
	t->strays = w->strays_pub;
	t->n_strays = w->n_strays_pub;
	w->attached = 0;
}

static void health_rules_attach(struct health_rules *w, uint64_t now_ms)
{
	Ring__Topology *t = w->top;

	if (!t)
		return;
	for (size_t i = 0; i < t->n_edges; i++) {
		t->edges[i]->live_state = w->edges[i].state;
		t->edges[i]->live_since_ms = w->edges[i].since_ms;
		t->edges[i]->live_reason = w->edges[i].reason;
	}
	t->live_kind = w->live_kind;
	t->live_gap = w->live_gap;
	t->live_nodes_down = w->live_down;
	t->n_live_nodes_down = w->n_live_down;
	t->live_cables_down = w->live_cut;
	t->n_live_cables_down = w->n_live_cut;
	t->live_ms = now_ms;
	t->order_valid = !w->order_invalid[0];
	t->order_invalid = w->order_invalid;
	t->not_surveyed = w->not_surveyed;
	t->n_not_surveyed = w->n_not_surveyed;
	t->strays = w->live_strays;
	t->n_strays = w->n_live_strays;
	w->attached = 1;
}

static void health_rules_free_live_gap(struct health_rules *w)
{
	for (size_t i = 0; i < w->n_live_cut; i++)
		free(w->live_cut[i]);
	free(w->live_cut);
	free(w->live_down);
	w->live_cut = w->live_down = NULL;
	w->n_live_cut = w->n_live_down = 0;
}

static void health_rules_free_not_surveyed(struct health_rules *w)
{
	for (size_t i = 0; i < w->n_not_surveyed; i++)
		free(w->not_surveyed[i]);
	free(w->not_surveyed);
	w->not_surveyed = NULL;
	w->n_not_surveyed = 0;
}

/* Does node n's beacon table have peer on its port ifname? -1 when it has
 * no beacons at all (nothing to judge by). */
static int health_rules_hears(const struct node *n, const char *ifname,
			      const char *peer)
{
	const Ring__NeighbourTable *t = n->neighbours;

	if (!t || !t->beacons_available)
		return -1;
	for (size_t i = 0; i < t->n_neighbours; i++)
		if (!strcmp(t->neighbours[i]->local_interface, ifname) &&
		    !strcmp(t->neighbours[i]->remote_node, peer))
			return 1;
	return 0;
}

static int health_rules_node_up(const struct node *n)
{
	return n && n->state == NODE_UP;
}

/* Up but not yet judged by: this session has not sent its inventory and
 * neighbour table, or the coordinator is re-learning after a restart and
 * has not heard from it yet. Its cables are unverified, not down, and it
 * breaks neither the ring nor the rank order until it has reported. */
static int health_rules_pending(const struct health_rules *w,
				const struct node *n)
{
	if (w->relearn_until_ms && !nodes_ready(n))
		return 1;
	return health_rules_node_up(n) && !nodes_ready(n);
}

/* Append "text" to buf, "; "-separated. */
static void health_rules_add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void health_rules_add(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used && used + 2 < len) {
		memcpy(buf + used, "; ", 3);
		used += 2;
	}
	if (used >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* One end of a cable: why it is not up, added to why; 1 when it is. */
static int health_rules_end_ok(const struct node *n, const char *node,
			       const char *ifname, char *why, size_t len)
{
	const Ring__NetInterface *f = nodes_iface(n, ifname);

	if (!f) {
		health_rules_add(why, len, "%s has no interface %s", node,
				 ifname);
		return 0;
	}
	if (!f->admin_up) {
		health_rules_add(why, len, "%s %s: administratively down", node,
				 ifname);
		return 0;
	}
	if (!f->carrier) {
		health_rules_add(why, len, "%s %s: no carrier", node, ifname);
		return 0;
	}
	return 1;
}

/* How long carrier without beacons is waited out: two beacon intervals
 * of these agents (a neighbour's TTL is four), read from the TTLs their
 * tables hold. A port that just came up, or an agent that just
 * (re)started with an empty table, hears its peer within one interval;
 * a peer that forgot it while it was away (its TTL passed) hears it
 * again within one. */
static uint64_t health_rules_beacon_grace(const struct node *a,
					  const struct node *b)
{
	const struct node *v[2] = {a, b};
	uint32_t ttl = 0;

	for (int k = 0; k < 2; k++) {
		const Ring__NeighbourTable *t = v[k] ? v[k]->neighbours : NULL;

		for (size_t i = 0; t && i < t->n_neighbours; i++)
			if (t->neighbours[i]->ttl_s > ttl)
				ttl = t->neighbours[i]->ttl_s;
	}
	if (!ttl)
		return WATCH_BEACON_GRACE_MS;
	if (ttl > 120)
		ttl = 120;
	return ttl * 1000ull / 2 > 2000 ? ttl * 1000ull / 2 : 2000;
}

static void health_rules_edge_state(struct health_rules *w, const Ring__Edge *e,
				    struct health_rules_edge *out,
				    uint64_t now_ms)
{
	struct node *a = nodes_find(w->table, e->a);
	struct node *b = nodes_find(w->table, e->b);
	char state[16], why[256] = "";
	int ok_a, ok_b, ha, hb, quiet;
	uint64_t grace;

	if (health_rules_pending(w, a) || health_rules_pending(w, b) ||
	    !health_rules_node_up(a) || !health_rules_node_up(b))
		out->quiet_since_ms = 0; /* the wait starts when both report */
	if (health_rules_pending(w, a) || health_rules_pending(w, b)) {
		/* Facts from before this session, or none yet. */
		snprintf(state, sizeof(state), "unverified");
		if (health_rules_pending(w, a))
			health_rules_add(why, sizeof(why),
					 "%s has not reported yet", e->a);
		if (health_rules_pending(w, b))
			health_rules_add(why, sizeof(why),
					 "%s has not reported yet", e->b);
	} else if (!health_rules_node_up(a) || !health_rules_node_up(b)) {
		/* A node that is down is not a missing cable. */
		snprintf(state, sizeof(state), "unverified");
		if (!health_rules_node_up(a))
			health_rules_add(why, sizeof(why), "%s is down", e->a);
		if (!health_rules_node_up(b))
			health_rules_add(why, sizeof(why), "%s is down", e->b);
	} else {
		ok_a = health_rules_end_ok(a, e->a, e->a_interface, why,
					   sizeof(why));
		ok_b = health_rules_end_ok(b, e->b, e->b_interface, why,
					   sizeof(why));
		ha = health_rules_hears(a, e->a_interface, e->b);
		hb = health_rules_hears(b, e->b_interface, e->a);
		quiet = ok_a && ok_b && !ha && !hb;
		if (!quiet)
			out->quiet_since_ms = 0;
		else if (!out->quiet_since_ms)
			out->quiet_since_ms = now_ms;
		grace = quiet ? health_rules_beacon_grace(a, b) : 0;
		if (quiet && now_ms < out->quiet_since_ms + grace) {
			/* Beacons lag carrier by up to an interval. */
			snprintf(state, sizeof(state), "unverified");
			health_rules_add(why, sizeof(why),
					 "carrier; waiting %llu ms for beacons",
					 (unsigned long long)grace);
			if (!w->beacon_due_ms ||
			    out->quiet_since_ms + grace < w->beacon_due_ms)
				w->beacon_due_ms = out->quiet_since_ms + grace;
		} else {
			if (quiet)
				health_rules_add(
					why, sizeof(why),
					"carrier, but no beacons either way");
			snprintf(state, sizeof(state), "%s",
				 ok_a && ok_b && (ha || hb) ? "up" : "down");
		}
	}
	if (strcmp(out->state, state))
		out->since_ms = now_ms;
	snprintf(out->state, sizeof(out->state), "%s", state);
	snprintf(out->reason, sizeof(out->reason), "%s", why);
}

/* The published edge between x and y, or -1. */
static long health_rules_edge_index(const Ring__Topology *t, const char *x,
				    const char *y)
{
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if ((!strcmp(e->a, x) && !strcmp(e->b, y)) ||
		    (!strcmp(e->a, y) && !strcmp(e->b, x)))
			return (long)i;
	}
	return -1;
}

/* The class as the cables are now, from the published order: a ring with
 * one cable down is a line without that cable; a node down leaves a line
 * of the others (no cable is invented between its neighbours); more
 * breaks split it. */
static void health_rules_live_kind(struct health_rules *w)
{
	const Ring__Topology *t = w->top;
	int ring = !strcmp(t->kind, "ring"), line = !strcmp(t->kind, "line");
	size_t n = t->n_order, pairs, broken = 0, down = 0;
	char gap[256] = "", downs[256] = "", cable[300];

	health_rules_free_live_gap(w);
	snprintf(w->live_kind, sizeof(w->live_kind), "%s", t->kind);
	snprintf(w->live_gap, sizeof(w->live_gap), "%s",
		 t->line_gap ? t->line_gap : "");
	if ((!ring && !line) || n < 2)
		return;
	w->live_down = calloc(n, sizeof(char *));
	w->live_cut = calloc(n, sizeof(char *));
	if (!w->live_down || !w->live_cut) {
		/* Out of memory: the class and gap still say it. */
		free(w->live_down);
		free(w->live_cut);
		w->live_down = w->live_cut = NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!health_rules_pending(w,
					  nodes_find(w->table, t->order[i])) &&
		    !health_rules_node_up(nodes_find(w->table, t->order[i]))) {
			down++;
			health_rules_add(downs, sizeof(downs), "%s down",
					 t->order[i]);
			if (w->live_down)
				w->live_down[w->n_live_down++] = t->order[i];
		}
	pairs = ring ? n : n - 1;
	for (size_t i = 0; i < pairs; i++) {
		const char *x = t->order[i], *y = t->order[(i + 1) % n];
		long k = health_rules_edge_index(t, x, y);

		if (!health_rules_node_up(nodes_find(w->table, x)) ||
		    !health_rules_node_up(nodes_find(w->table, y)) ||
		    health_rules_pending(w, nodes_find(w->table, x)) ||
		    health_rules_pending(w, nodes_find(w->table, y)))
			continue; /* a node down, or not reported yet */
		if (k < 0 || strcmp(w->edges[k].state, "up")) {
			broken++;
			/* As the edge is published (n1-n3, never n3-n1). */
			text_pair_name(cable, sizeof(cable), t, x, y);
			health_rules_add(gap, sizeof(gap), "%s", cable);
			if (w->live_cut &&
			    (w->live_cut[w->n_live_cut] = strdup(cable)))
				w->n_live_cut++;
		}
	}
	if (!broken && !down)
		return;
	if (ring && ((broken == 1 && !down) || (!broken && down == 1))) {
		snprintf(w->live_kind, sizeof(w->live_kind), "line");
		snprintf(w->live_gap, sizeof(w->live_gap), "%s",
			 broken ? gap : downs);
		return;
	}
	snprintf(w->live_kind, sizeof(w->live_kind), "split");
	snprintf(w->live_gap, sizeof(w->live_gap), "%s", gap);
	if (*downs)
		health_rules_add(w->live_gap, sizeof(w->live_gap), "%s", downs);
}

/* The overlay in words, from its data as health_rules_attach will publish it. */
static void health_rules_live_text(const struct health_rules *w, char *buf,
				   size_t len)
{
	Ring__Topology v = *w->top;

	v.live_kind = (char *)w->live_kind;
	v.live_nodes_down = w->live_down;
	v.n_live_nodes_down = w->n_live_down;
	v.live_cables_down = w->live_cut;
	v.n_live_cables_down = w->n_live_cut;
	topoview_live_text(&v, 1, buf, len);
}

/* Does the published rank order still hold? Every rank's node up, and
 * the cable between consecutive ranks (around the ring: the last to the
 * first too) up. */
static void health_rules_order(struct health_rules *w)
{
	const Ring__Topology *t = w->top;
	int ring = !strcmp(t->kind, "ring");
	size_t n = t->n_ranks;

	w->order_invalid[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const struct node *x = nodes_find(w->table, t->ranks[i]->node);

		if (!health_rules_node_up(x) && !health_rules_pending(w, x))
			health_rules_add(
				w->order_invalid, sizeof(w->order_invalid),
				"rank %zu (%s) is down", i, t->ranks[i]->node);
	}
	for (size_t i = 0; n > 1 && i < (ring ? n : n - 1); i++) {
		const char *x = t->ranks[i]->node,
			   *y = t->ranks[(i + 1) % n]->node;
		long k = health_rules_edge_index(t, x, y);

		if (!health_rules_node_up(nodes_find(w->table, x)) ||
		    !health_rules_node_up(nodes_find(w->table, y)) ||
		    health_rules_pending(w, nodes_find(w->table, x)) ||
		    health_rules_pending(w, nodes_find(w->table, y)))
			continue;
		if (k < 0)
			health_rules_add(w->order_invalid,
					 sizeof(w->order_invalid),
					 "no cable %s-%s", x, y);
		else if (strcmp(w->edges[k].state, "up"))
			health_rules_add(w->order_invalid,
					 sizeof(w->order_invalid),
					 "cable %s-%s is %s (%s)", x, y,
					 w->edges[k].state, w->edges[k].reason);
	}
}

/* The published strays still up: one that left is no longer listed,
 * and nothing else of the topology changes. */
static void health_rules_strays(struct health_rules *w)
{
	w->n_live_strays = 0;
	for (size_t i = 0; w->live_strays && i < w->n_strays_pub; i++)
		if (health_rules_node_up(
			    nodes_find(w->table, w->strays_pub[i]->node)))
			w->live_strays[w->n_live_strays++] = w->strays_pub[i];
}

/* Was node set apart from the ring by the published survey? */
static int health_rules_published_stray(const struct health_rules *w,
					const char *node)
{
	for (size_t i = 0; i < w->n_strays_pub; i++)
		if (!strcmp(w->strays_pub[i]->node, node))
			return 1;
	return 0;
}

/* Expected nodes the published topology does not include, and why. */
static void health_rules_not_surveyed(struct health_rules *w)
{
	const Ring__Topology *t = w->top;
	struct node **v;
	unsigned n;

	health_rules_free_not_surveyed(w);
	v = nodes_sorted(w->table, &n);
	if (!v)
		return;
	w->not_surveyed = calloc(n ? n : 1, sizeof(char *));
	for (unsigned i = 0; w->not_surveyed && i < n; i++) {
		int in = 0;
		char buf[320];

		if (!v[i]->expected)
			continue;
		/* In the order, or at an end of a measured edge: a split has
		 * no order, and its nodes were surveyed all the same. */
		for (size_t k = 0; k < t->n_order && !in; k++)
			in = !strcmp(t->order[k], v[i]->name);
		for (size_t k = 0; k < t->n_edges && !in; k++)
			in = !strcmp(t->edges[k]->a, v[i]->name) ||
			     !strcmp(t->edges[k]->b, v[i]->name);
		if (in)
			continue;
		snprintf(buf, sizeof(buf), "%s: %s%s%s%s", v[i]->name,
			 nodes_state_name(v[i]->state),
			 v[i]->down_reason[0] ? " (" : "", v[i]->down_reason,
			 v[i]->down_reason[0] ? ")" : "");
		w->not_surveyed[w->n_not_surveyed] = strdup(buf);
		if (w->not_surveyed[w->n_not_surveyed])
			w->n_not_surveyed++;
	}
	free(v);
}

static void health_rules_raise(struct health_rules *w, const char *rule,
			       const char *subject, const char *node,
			       const char *edge, enum alert_severity sev,
			       uint64_t now_ms, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));

static void health_rules_raise(struct health_rules *w, const char *rule,
			       const char *subject, const char *node,
			       const char *edge, enum alert_severity sev,
			       uint64_t now_ms, const char *fmt, ...)
{
	char msg[ALERTS_MESSAGE_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (alerts_raise(w->alerts, rule, subject, node, edge, sev, msg,
			 now_ms) < 0 &&
	    errno == ENOSPC)
		log_debug("watch", "alert table full: %s %s not raised", rule,
			  subject);
}

/* A certificate that ends within WATCH_CERT_WARN_MS: issue a new one
 * before agents (or everyone, for the coordinator's) are refused. */
static void health_rules_cert(struct health_rules *w, const char *who,
			      const char *node, uint64_t not_after_ms,
			      uint64_t now_ms)
{
	char when[32];

	if (!not_after_ms || not_after_ms > now_ms + WATCH_CERT_WARN_MS)
		return;
	clock_format_utc(not_after_ms, when, sizeof(when), "?");
	health_rules_raise(
		w, "cert_expiring", who, node, NULL,
		not_after_ms <= now_ms ? ALERT_CRITICAL : ALERT_WARNING, now_ms,
		"the certificate of %s ends %s (%llu days): issue a new "
		"one (ringctl pki issue)",
		who, when,
		(unsigned long long)(not_after_ms > now_ms
					     ? (not_after_ms - now_ms) /
						       86400000
					     : 0));
}

void health_rules_set_own_cert(struct health_rules *w, uint64_t not_after_ms)
{
	w->own_cert_ms = not_after_ms;
}

uint64_t health_rules_own_cert(const struct health_rules *w)
{
	return w->own_cert_ms;
}

int health_rules_survey_failed(const struct health_rules *w)
{
	return w->survey_failure[0] != '\0';
}

static void health_rules_rules_nodes(struct health_rules *w, uint64_t now_ms)
{
	struct node **v;
	unsigned n;

	v = nodes_sorted(w->table, &n);
	if (!v)
		return;
	for (unsigned i = 0; i < n; i++) {
		const struct node *x = v[i];

		const struct alert *was =
			alerts_get(w->alerts, "node_down", x->name);
		int carried = was && was->firing;

		/* Never connected since this start: after the grace, or at
		 * once when its alert fired before a restart. */
		if (x->state == NODE_NEVER && (x->expected || carried) &&
		    (carried ||
		     now_ms >= w->started_ms + w->conf->survey_grace_ms))
			health_rules_raise(
				w, "node_down", x->name, x->name, NULL,
				ALERT_CRITICAL, now_ms,
				"%s has never connected (expected; %llu s "
				"since the coordinator started)",
				x->name,
				(unsigned long long)(now_ms - w->started_ms) /
					1000);
		/* With an expect list, the others are guests (forget drops
		 * them); without one, every node that joined counts, but for
		 * a stray: its leaving is no matter of the ring. */
		else if (x->state == NODE_DOWN &&
			 (x->expected ||
			  (!w->conf->n_expect &&
			   !health_rules_published_stray(w, x->name))))
			health_rules_raise(
				w, "node_down", x->name, x->name, NULL,
				x->expected ? ALERT_CRITICAL : ALERT_WARNING,
				now_ms, "%s is down: %s", x->name,
				x->down_reason[0] ? x->down_reason
						  : "no reason given");
		if (x->state == NODE_UP)
			health_rules_cert(w, x->name, x->name,
					  x->cert_not_after_ms, now_ms);
		if (x->state == NODE_UP && x->agent_version[0] &&
		    strcmp(x->agent_version, RING_VERSION))
			health_rules_raise(
				w, "version_skew", x->name, x->name, NULL,
				ALERT_WARNING, now_ms,
				"%s runs agent %s, the coordinator is %s",
				x->name, x->agent_version, RING_VERSION);
	}
	free(v);
}

/* One end of a cable: a speed or PCIe width below what it should be. */
/* One end of a cable: a link speed below the fastest it had since the
 * survey (a renegotiation; a port that never ran faster is the survey's
 * finding against its nominal speed, not an alert), or a PCIe link
 * narrower than the device can do. */
static void health_rules_rules_port(struct health_rules *w, const char *node,
				    const Ring__NetInterface *f,
				    int32_t *max_mbps, uint64_t now_ms)
{
	char subject[ALERTS_SUBJECT_LEN];

	snprintf(subject, sizeof(subject), "%s %s", node, f->name);
	if (f->carrier && f->speed_mbps > *max_mbps)
		*max_mbps = f->speed_mbps;
	if (f->carrier && f->speed_mbps > 0 && f->speed_mbps < *max_mbps)
		health_rules_raise(w, "speed_downshift", subject, node, NULL,
				   ALERT_WARNING, now_ms,
				   "%s %s links at %d Mb/s, down from %d Mb/s",
				   node, f->name, f->speed_mbps, *max_mbps);
	if (f->pcie_link_width && f->pcie_max_link_width &&
	    f->pcie_link_width < f->pcie_max_link_width)
		health_rules_raise(
			w, "pcie_downshift", subject, node, NULL, ALERT_WARNING,
			now_ms, "%s %s: PCIe link x%u of x%u (%s of %s)", node,
			f->name, f->pcie_link_width, f->pcie_max_link_width,
			f->pcie_link_speed, f->pcie_max_link_speed);
}

static void health_rules_rules_edges(struct health_rules *w, uint64_t now_ms)
{
	const Ring__Topology *t = w->top;

	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		const struct node *a = nodes_find(w->table, e->a);
		const struct node *b = nodes_find(w->table, e->b);
		const Ring__NetInterface *fa = nodes_iface(a, e->a_interface);
		const Ring__NetInterface *fb = nodes_iface(b, e->b_interface);
		char edge[ALERTS_EDGE_LEN];

		text_edge_msg_name(edge, sizeof(edge), e);
		if (!strcmp(w->edges[i].state, "down"))
			health_rules_raise(w, "cable_down", edge, NULL, edge,
					   ALERT_CRITICAL, now_ms,
					   "cable %s %s - %s %s is down: %s",
					   e->a, e->a_interface, e->b,
					   e->b_interface, w->edges[i].reason);
		if (!health_rules_node_up(a) || !health_rules_node_up(b))
			continue;
		/* Carrier and beacons say up, the data plane says no: a
		 * check judged against the edge as it was when it started
		 * (one that began before the edge came up says nothing). */
		if (!strcmp(w->edges[i].state, "up") && *e->light_error &&
		    e->light_started_ms &&
		    e->light_started_ms >= w->edges[i].since_ms)
			health_rules_raise(
				w, "light_check_failed", edge, NULL, edge,
				ALERT_WARNING, now_ms,
				"edge %s: carrier and beacons are up but "
				"its light check failed: %s",
				edge, e->light_error);
		if (fa && fb && fa->mtu != fb->mtu)
			health_rules_raise(
				w, "mtu_mismatch", edge, NULL, edge,
				ALERT_WARNING, now_ms,
				"MTU differs across cable %s: %s %s %u, "
				"%s %s %u",
				edge, e->a, e->a_interface, fa->mtu, e->b,
				e->b_interface, fb->mtu);
		if (fa)
			health_rules_rules_port(
				w, e->a, fa, &w->edges[i].max_mbps[0], now_ms);
		if (fb)
			health_rules_rules_port(
				w, e->b, fb, &w->edges[i].max_mbps[1], now_ms);
	}
	for (size_t i = 0; t && i < t->n_diagonals; i++) {
		const Ring__DiagonalCheck *d = t->diagonals[i];
		char edge[ALERTS_EDGE_LEN];

		if (!d->path)
			continue;
		snprintf(edge, sizeof(edge), "%s-%s", d->a, d->b);
		health_rules_raise(
			w, "unexpected_path", edge, NULL, edge, ALERT_WARNING,
			now_ms,
			"%s reaches %s (%s) over the data plane although "
			"they are not ring neighbours: %s",
			d->a, d->b, d->b_address, d->verdict);
	}
}

/* The RDMA port of node n's device dev that faces ifname (its netdev;
 * else the device's only port). NULL when the inventory cannot say: no
 * inventory, RDMA devices not listed (rdma_error), or the device listed
 * without ports (it could not be opened). *gone is set when the device
 * is simply no longer reported. */
static const Ring__RdmaPort *health_rules_rdma_port(const struct node *n,
						    const char *dev,
						    const char *ifname,
						    int *gone)
{
	const Ring__Inventory *inv = n ? n->inventory : NULL;
	const Ring__RdmaDevice *d = NULL;

	*gone = 0;
	if (!inv)
		return NULL;
	for (size_t i = 0; i < inv->n_rdma_devices && !d; i++)
		if (!strcmp(inv->rdma_devices[i]->name, dev))
			d = inv->rdma_devices[i];
	if (!d) {
		*gone = !*inv->rdma_error;
		return NULL;
	}
	for (size_t i = 0; i < d->n_ports; i++)
		if (!strcmp(d->ports[i]->netdev, ifname))
			return d->ports[i];
	return d->n_ports == 1 ? d->ports[0] : NULL;
}

/* One end of an edge measured over RDMA: what became of the GID its
 * tests used, added to why; 1 when it changed or vanished. */
static int health_rules_gid_end(const struct node *n, const char *node,
				const char *dev, const char *ifname,
				const char *gid, int32_t index, char *why,
				size_t len)
{
	const Ring__RdmaPort *p;
	const Ring__Gid *now = NULL;
	int gone;

	if (index < 0 || !*dev || !*gid)
		return 0;
	p = health_rules_rdma_port(n, dev, ifname, &gone);
	if (!p) {
		if (gone)
			health_rules_add(
				why, len,
				"%s %s is no longer reported (GID index %d "
				"was %s when the survey measured it)",
				node, dev, index, gid);
		return gone;
	}
	for (size_t i = 0; i < p->n_gids && !now; i++)
		if (p->gids[i]->index == (uint32_t)index)
			now = p->gids[i];
	if (now && !strcmp(now->gid, gid))
		return 0;
	if (now)
		health_rules_add(
			why, len,
			"%s %s port %u: GID index %d is now %s (was %s when "
			"the survey measured it)",
			node, dev, p->port, index, now->gid, gid);
	else
		health_rules_add(
			why, len,
			"%s %s port %u: GID index %d is gone (was %s when "
			"the survey measured it)",
			node, dev, p->port, index, gid);
	return 1;
}

/* Whether the GIDs edge e's RDMA tests used are still at their indices:
 * 1 changed or gone (why says how, *node the one end that changed, NULL
 * for both), 0 not, -1 not judged (a node at an end is down: that is
 * node_down's). */
static int health_rules_gid_judge(const struct health_rules *w,
				  const Ring__Edge *e, const char **node,
				  char *why, size_t len)
{
	const struct node *a = nodes_find(w->table, e->a);
	const struct node *b = nodes_find(w->table, e->b);
	int ca, cb;

	if (!health_rules_node_up(a) || !health_rules_node_up(b))
		return -1;
	ca = health_rules_gid_end(a, e->a, e->a_rdma, e->a_interface, e->a_gid,
				  e->a_gid_index, why, len);
	cb = health_rules_gid_end(b, e->b, e->b_rdma, e->b_interface, e->b_gid,
				  e->b_gid_index, why, len);
	*node = ca && cb ? NULL : ca ? e->a : e->b;
	return ca || cb;
}

int health_rules_edge_gid_changed(const struct health_rules *w,
				  const Ring__Edge *e)
{
	char why[ALERTS_MESSAGE_LEN] = "";
	const char *node;

	return health_rules_gid_judge(w, e, &node, why, sizeof(why));
}

/* GIDs the published survey's RDMA tests used that the agents' current
 * inventories no longer have at the same index: NCCL_IB_GID_INDEX, as
 * ringctl ranks printed it, may now pick another address (or none). */
static void health_rules_rules_gids(struct health_rules *w, uint64_t now_ms)
{
	const Ring__Topology *t = w->top;

	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		char edge[ALERTS_EDGE_LEN], why[ALERTS_MESSAGE_LEN] = "";
		const char *node = NULL;

		if (health_rules_gid_judge(w, e, &node, why, sizeof(why)) != 1)
			continue;
		text_edge_msg_name(edge, sizeof(edge), e);
		health_rules_raise(
			w, "gid_change", edge, node, edge, ALERT_WARNING,
			now_ms,
			"%s: NCCL_IB_GID_INDEX from `ringctl ranks` may be "
			"stale; re-survey",
			why);
	}
}

/* Error or drop counters that rose between an up node's last two counters
 * reports (nodes_set_counters computed by how much). */
static void health_rules_rules_counters(struct health_rules *w, uint64_t now_ms)
{
	struct node **v;
	unsigned n;

	v = nodes_sorted(w->table, &n);
	if (!v)
		return;
	for (unsigned i = 0; i < n; i++) {
		const struct node *x = v[i];
		const Ring__CountersReport *c = x->counters;

		if (!health_rules_node_up(x) || !c || !x->counters_rise)
			continue;
		for (size_t k = 0; k < c->n_ports; k++) {
			const struct node_port_rise *r = &x->counters_rise[k];
			const char *f = c->ports[k]->interface;
			char subject[ALERTS_SUBJECT_LEN], what[200] = "";
			const struct {
				const char *name;
				uint64_t rise;
			} figs[] = {{"rx_errors", r->rx_errors},
				    {"tx_errors", r->tx_errors},
				    {"rx_dropped", r->rx_dropped},
				    {"tx_dropped", r->tx_dropped}};
			size_t used = 0;

			if (!nodes_port_rising(r))
				continue;
			for (size_t j = 0; j < 4 && used < sizeof(what); j++)
				if (figs[j].rise)
					used += (size_t)snprintf(
						what + used,
						sizeof(what) - used,
						"%s%s +%llu", used ? ", " : "",
						figs[j].name,
						(unsigned long long)figs[j]
							.rise);
			snprintf(subject, sizeof(subject), "%s %s", x->name, f);
			health_rules_raise(
				w, "port_errors", subject, x->name, NULL,
				ALERT_WARNING, now_ms,
				"%s %s: %s in the last %llu s", x->name, f,
				what,
				(unsigned long long)(x->counters_span_ms +
						     500) /
					1000);
		}
	}
	free(v);
}

static void health_rules_arm_tick(struct health_rules *w, uint64_t now_ms)
{
	uint64_t next = alerts_tick(w->alerts, now_ms);
	struct timeval tv;

	if (!next)
		return;
	tv.tv_sec = (time_t)(next / 1000);
	tv.tv_usec = (suseconds_t)(next % 1000) * 1000;
	evtimer_add(w->tick_ev, &tv);
}

/* Every node the re-learning waits for: the expected ones, and those of
 * the published topology. */
static int health_rules_awaited_ready(struct health_rules *w, unsigned *n_ready,
				      unsigned *n_awaited)
{
	const Ring__Topology *t = w->top;
	struct node **v;
	unsigned n;

	*n_ready = *n_awaited = 0;
	v = nodes_sorted(w->table, &n);
	if (!v)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		int awaited = v[i]->expected;

		for (size_t k = 0; t && !awaited && k < t->n_edges; k++)
			awaited = !strcmp(t->edges[k]->a, v[i]->name) ||
				  !strcmp(t->edges[k]->b, v[i]->name);
		*n_awaited += awaited;
		*n_ready += awaited && nodes_ready(v[i]);
	}
	free(v);
	return *n_ready == *n_awaited;
}

/* Re-learning ends when every awaited node reported, or at its deadline:
 * from then on everything is judged from fresh facts. */
static void health_rules_relearn_check(struct health_rules *w, uint64_t now_ms)
{
	unsigned ready, awaited;
	int all;

	if (!w->relearn_until_ms)
		return;
	all = health_rules_awaited_ready(w, &ready, &awaited);
	if (!all && now_ms < w->relearn_until_ms)
		return;
	log_info("re-learned after the restart in %llu ms: %u of %u nodes "
		 "reported%s; judging cables and the ring from now on",
		 (unsigned long long)(now_ms - w->relearn_started_ms), ready,
		 awaited, all ? "" : " (the rest are judged as they are)");
	w->relearn_until_ms = 0;
	if (w->relearn_ev)
		event_del(w->relearn_ev);
	alerts_clear(w->alerts, "coordinator_restarted", "coordinator", now_ms);
}

void health_rules_eval(struct health_rules *w)
{
	uint64_t now_ms = clock_now_ms();
	const Ring__Topology *t = w->top;
	char now_text[600];

	health_rules_relearn_check(w, now_ms);
	health_rules_detach(w);
	alerts_round_begin(w->alerts);
	w->beacon_due_ms = 0;
	if (t) {
		/* attached from here: health_rules_attach below, in this pass */
		w->attached = 1;
		health_rules_edge_extras(w);
		for (size_t i = 0; i < t->n_edges; i++)
			health_rules_edge_state(w, t->edges[i], &w->edges[i],
						now_ms);
		health_rules_beacon_arm(w, now_ms);
		health_rules_live_kind(w);
		health_rules_live_text(w, now_text, sizeof(now_text));
		health_rules_order(w);
		health_rules_not_surveyed(w);
		health_rules_strays(w);
		if (w->order_invalid[0] && t->n_ranks && !w->relearn_until_ms)
			health_rules_raise(
				w, "ring_broken", "ring", NULL, NULL,
				ALERT_CRITICAL, now_ms,
				"the rank order deployed from the last "
				"survey is no longer valid: %s; the %s is "
				"now %s",
				w->order_invalid, t->kind, now_text);
		health_rules_attach(w, now_ms);
	}
	health_rules_cert(w, "the coordinator", NULL, w->own_cert_ms, now_ms);
	if (w->relearn_until_ms) {
		/* Nothing is judged from missing facts: what fired before the
		 * restart fires on (no rule's round ends), what is new waits
		 * for the agents. */
		alerts_round_end(w->alerts, NULL, 0, now_ms);
		health_rules_arm_tick(w, now_ms);
		if (w->eval_fn)
			w->eval_fn(w->top, w->eval_arg);
		return;
	}
	health_rules_rules_nodes(w, now_ms);
	health_rules_rules_edges(w, now_ms);
	health_rules_rules_counters(w, now_ms);
	health_rules_rules_baselines(w, now_ms);
	health_rules_rules_gids(w, now_ms);
	if (w->survey_failure[0])
		health_rules_raise(w, "survey_failed", "survey", NULL, NULL,
				   ALERT_WARNING, now_ms, "%s",
				   w->survey_failure);
	alerts_round_end(w->alerts, health_rules_rules, health_rules_n_rules,
			 now_ms);
	health_rules_arm_tick(w, now_ms);
	if (w->eval_fn)
		w->eval_fn(w->top, w->eval_arg);
}

static void health_rules_beacon_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	health_rules_eval(arg);
}

/* Look again when the first beacon grace ends: a cable still without
 * beacons then is down. */
static void health_rules_beacon_arm(struct health_rules *w, uint64_t now_ms)
{
	uint64_t left;
	struct timeval tv;

	if (!w->beacon_due_ms)
		return;
	if (!w->beacon_ev)
		w->beacon_ev = evtimer_new(w->base, health_rules_beacon_cb, w);
	if (!w->beacon_ev)
		return;
	left = w->beacon_due_ms > now_ms ? w->beacon_due_ms - now_ms : 0;
	tv.tv_sec = (time_t)(left / 1000);
	tv.tv_usec = (suseconds_t)(left % 1000) * 1000 + 1000;
	evtimer_add(w->beacon_ev, &tv);
}

static void health_rules_relearn_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	health_rules_eval(arg);
}

void health_rules_relearn_start(struct health_rules *w, uint64_t timeout_ms,
				const char *saved)
{
	uint64_t now_ms = clock_now_ms();
	struct timeval tv = {.tv_sec = (time_t)(timeout_ms / 1000),
			     .tv_usec =
				     (suseconds_t)(timeout_ms % 1000) * 1000};
	unsigned ready, awaited;

	if (!timeout_ms)
		return;
	w->relearn_started_ms = now_ms;
	w->relearn_until_ms = now_ms + timeout_ms;
	if (!w->relearn_ev)
		w->relearn_ev =
			evtimer_new(w->base, health_rules_relearn_cb, w);
	if (w->relearn_ev)
		evtimer_add(w->relearn_ev, &tv);
	health_rules_awaited_ready(w, &ready, &awaited);
	health_rules_raise(
		w, "coordinator_restarted", "coordinator", NULL, NULL,
		ALERT_INFO, now_ms,
		"the coordinator restarted (state saved %s): re-learning "
		"from %u agents for at most %llu s before judging cables "
		"and the ring; alerts that fired before go on",
		saved && *saved ? saved : "earlier", awaited,
		(unsigned long long)(timeout_ms / 1000));
	log_info("restarted with saved state: waiting up to %llu ms for %u "
		 "nodes to report before judging cables and the ring",
		 (unsigned long long)timeout_ms, awaited);
}

int health_rules_relearning(const struct health_rules *w, uint64_t now_ms,
			    uint64_t *left_ms)
{
	if (!w || !w->relearn_until_ms)
		return 0;
	if (left_ms)
		*left_ms = w->relearn_until_ms > now_ms
				   ? w->relearn_until_ms - now_ms
				   : 0;
	return 1;
}

void health_rules_set_eval_cb(struct health_rules *w, health_rules_eval_fn fn,
			      void *arg)
{
	w->eval_fn = fn;
	w->eval_arg = arg;
}

void health_rules_survey_outcome(struct health_rules *w, const char *what,
				 const char *failure)
{
	if (failure)
		snprintf(w->survey_failure, sizeof(w->survey_failure),
			 "the last %s failed: %s", what, failure);
	else
		w->survey_failure[0] = '\0';
	health_rules_eval(w);
}

static void health_rules_eval_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	health_rules_eval(arg);
}

static void health_rules_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct health_rules *w = arg;

	(void)fd;
	(void)what;
	health_rules_arm_tick(w, clock_now_ms());
}

void health_rules_nodes_changed(void *arg)
{
	struct health_rules *w = arg;
	struct timeval zero = {0, 0};

	evtimer_add(w->eval_ev, &zero);
}

/* The figure an edge is judged by: the top of the stream ladder, the
 * worse direction; RDMA WRITE where no TCP ladder ran. < 0: none. */
double health_rules_edge_figure(const Ring__Edge *e)
{
	double a, b;

	if (e->n_gbps_a_to_b && e->n_gbps_b_to_a) {
		a = e->gbps_a_to_b[e->n_gbps_a_to_b - 1];
		b = e->gbps_b_to_a[e->n_gbps_b_to_a - 1];
	} else {
		a = e->rdma_write_gbps_a_to_b;
		b = e->rdma_write_gbps_b_to_a;
	}
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return a < b ? a : b;
}

static struct health_rules_baseline *
health_rules_baseline_find(const struct health_rules *w, const char *edge)
{
	for (size_t i = 0; i < w->n_baselines; i++)
		if (!strcmp(w->baselines[i].edge, edge))
			return &w->baselines[i];
	return NULL;
}

double health_rules_edge_baseline(const struct health_rules *w,
				  const Ring__Edge *e)
{
	char edge[ALERTS_EDGE_LEN];
	const struct health_rules_baseline *b;

	text_edge_msg_name(edge, sizeof(edge), e);
	b = health_rules_baseline_find(w, edge);
	return b ? b->gbps : -1;
}

int health_rules_set_baseline(struct health_rules *w, const char *edge,
			      double gbps, uint64_t ms)
{
	struct health_rules_baseline *b = health_rules_baseline_find(w, edge);

	if (!(gbps > 0) || strlen(edge) >= ALERTS_EDGE_LEN) {
		errno = EINVAL;
		return -1;
	}
	if (!b) {
		if (w->n_baselines == WATCH_MAX_BASELINES) {
			errno = ENOSPC;
			return -1;
		}
		if (w->n_baselines == w->cap_baselines) {
			size_t cap =
				w->cap_baselines ? 2 * w->cap_baselines : 16;
			struct health_rules_baseline *v =
				reallocarray(w->baselines, cap, sizeof(*v));

			if (!v)
				return -1;
			w->baselines = v;
			w->cap_baselines = cap;
		}
		b = &w->baselines[w->n_baselines++];
		snprintf(b->edge, sizeof(b->edge), "%s", edge);
	}
	b->gbps = gbps;
	b->ms = ms;
	return 0;
}

size_t health_rules_baselines_text(const struct health_rules *w, char *buf,
				   size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < w->n_baselines && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s %.6f %llu\n",
				 w->baselines[i].edge, w->baselines[i].gbps,
				 (unsigned long long)w->baselines[i].ms);

		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0'; /* whole lines only */
			break;
		}
		used += (size_t)n;
	}
	return used;
}

void health_rules_baselines_load(struct health_rules *w, const char *text,
				 size_t len)
{
	size_t off = 0;

	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		char line[256], edge[ALERTS_EDGE_LEN];
		double g;
		unsigned long long ms;

		if (n < sizeof(line)) {
			memcpy(line, text + off, n);
			line[n] = '\0';
			if (sscanf(line, "%139s %lf %llu", edge, &g, &ms) == 3)
				health_rules_set_baseline(w, edge, g, ms);
		}
		off += n + 1;
	}
}

/* A published survey: every edge's first good figure becomes its
 * baseline. */
static void health_rules_note_baselines(struct health_rules *w,
					const Ring__Topology *t)
{
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		char edge[ALERTS_EDGE_LEN];
		double g = health_rules_edge_figure(e);

		text_edge_msg_name(edge, sizeof(edge), e);
		if (g > 0 && !*e->error && !health_rules_baseline_find(w, edge))
			health_rules_set_baseline(w, edge, g, e->measured_ms);
	}
}

/* The figure edge_degraded judges now: the light check's bandwidth
 * sample when it is newer than the survey's figures (its worse
 * direction, as the survey's), else the survey's; *sampled says which. */
static double health_rules_edge_figure_now(const Ring__Edge *e, int *sampled)
{
	double a = e->sample_gbps_a_to_b, b = e->sample_gbps_b_to_a;

	*sampled = 0;
	if (!e->sample_ms || e->sample_ms <= e->measured_ms || (a < 0 && b < 0))
		return health_rules_edge_figure(e);
	*sampled = 1;
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return a < b ? a : b;
}

int health_rules_figure_low(const struct health_rules *w, const Ring__Edge *e,
			    double gbps)
{
	double base = health_rules_edge_baseline(w, e);

	return base > 0 && gbps >= 0 && gbps * 100 < base * WATCH_DEGRADED_PCT;
}

static int health_rules_cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Each edge's latest figure (a light check's sample when newer than
 * the survey's) against its baseline, and against the ring: an edge is
 * degraded when it fell under WATCH_DEGRADED_PCT of its baseline while
 * the others did not fall with it (with three edges or more: its ratio
 * under 80% of the median ratio). A drop every edge shares is the hosts'
 * load, not a cable. A later figure back above resolves it, whether a
 * survey or a sample raised it. */
static void health_rules_rules_baselines(struct health_rules *w,
					 uint64_t now_ms)
{
	const Ring__Topology *t = w->top;
	double *ratio, *sorted, median = 0;
	int *sampled;
	size_t n = 0;

	if (!t || !t->n_edges)
		return;
	ratio = calloc(t->n_edges, sizeof(*ratio));
	sorted = calloc(t->n_edges, sizeof(*sorted));
	sampled = calloc(t->n_edges, sizeof(*sampled));
	if (!ratio || !sorted || !sampled)
		goto out;
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		char edge[ALERTS_EDGE_LEN];
		const struct health_rules_baseline *b;
		double g = health_rules_edge_figure_now(e, &sampled[i]);

		text_edge_msg_name(edge, sizeof(edge), e);
		b = health_rules_baseline_find(w, edge);
		ratio[i] = b && g >= 0 ? g / b->gbps : -1;
		if (ratio[i] >= 0)
			sorted[n++] = ratio[i];
	}
	if (n) {
		qsort(sorted, n, sizeof(*sorted), health_rules_cmp_double);
		median = n % 2 ? sorted[n / 2]
			       : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	}
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		char edge[ALERTS_EDGE_LEN];
		const struct health_rules_baseline *b;

		if (ratio[i] < 0 || ratio[i] * 100 >= WATCH_DEGRADED_PCT)
			continue;
		if (n >= 3 && ratio[i] >= 0.8 * median)
			continue;
		text_edge_msg_name(edge, sizeof(edge), e);
		b = health_rules_baseline_find(w, edge);
		health_rules_raise(
			w, "edge_degraded", edge, NULL, edge, ALERT_WARNING,
			now_ms,
			"edge %s carries %.2f Gbps%s, %.0f%% of its "
			"baseline %.2f Gbps (its first measurement); the "
			"ring's median edge is at %.0f%% of its own",
			edge, ratio[i] * b->gbps,
			sampled[i] ? " (light-check sample)" : "",
			100 * ratio[i], b->gbps, 100 * median);
	}
out:
	free(ratio);
	free(sorted);
	free(sampled);
}

int health_rules_set_topology(struct health_rules *w, const Ring__Topology *t)
{
	Ring__Topology *copy = NULL;
	struct health_rules_edge *edges = NULL;

	if (t) {
		copy = (Ring__Topology *)frame_copy(&t->base);
		edges = calloc(t->n_edges ? t->n_edges : 1, sizeof(*edges));
		if (!copy || !edges) {
			if (copy)
				ring__topology__free_unpacked(copy, NULL);
			free(edges);
			errno = ENOMEM;
			return -1;
		}
		/* Until the agents say otherwise: as the survey measured. */
		for (size_t i = 0; i < t->n_edges; i++) {
			snprintf(edges[i].state, sizeof(edges[i].state), "%s",
				 t->edges[i]->verified ? "up" : "unverified");
			edges[i].since_ms = t->edges[i]->measured_ms;
		}
	}
	health_rules_detach(w);
	health_rules_free_live_gap(w); /* points into the old copy's order */
	if (w->top)
		ring__topology__free_unpacked(w->top, NULL);
	free(w->edges);
	free(w->live_strays);
	w->top = copy;
	w->edges = edges;
	w->strays_pub = copy ? copy->strays : NULL;
	w->n_strays_pub = copy ? copy->n_strays : 0;
	w->n_live_strays = 0;
	/* Out of memory: no stray listed, the rest as published. */
	w->live_strays =
		copy ? calloc(copy->n_strays + 1, sizeof(*w->live_strays))
		     : NULL;
	if (t)
		health_rules_note_baselines(w, t);
	health_rules_eval(w);
	return 0;
}

/* The figures that move between surveys; only while attached (the
 * strings set are given back by health_rules_detach). */
static void health_rules_edge_extras(struct health_rules *w)
{
	for (size_t i = 0; w->top && w->edge_fn && i < w->top->n_edges; i++)
		w->edge_fn(w->top->edges[i], w->edge_arg);
}

const Ring__Topology *health_rules_topology(struct health_rules *w)
{
	/* Read when asked: the account moves with every test. */
	if (w->attached)
		health_rules_edge_extras(w);
	return w->top;
}

void health_rules_set_edge_fn(struct health_rules *w, health_rules_edge_fn fn,
			      void *arg)
{
	w->edge_fn = fn;
	w->edge_arg = arg;
}

struct health_rules *health_rules_new(struct event_base *base,
				      const struct coord_conf *conf,
				      struct nodes *table,
				      struct alerts *alerts)
{
	struct health_rules *w = calloc(1, sizeof(*w));
	struct timeval tv;

	if (!w)
		return NULL;
	w->base = base;
	w->conf = conf;
	w->table = table;
	w->alerts = alerts;
	w->started_ms = clock_now_ms();
	w->eval_ev = evtimer_new(base, health_rules_eval_cb, w);
	w->tick_ev = evtimer_new(base, health_rules_tick_cb, w);
	if (!w->eval_ev || !w->tick_ev) {
		health_rules_free(w);
		return NULL;
	}
	/* An expected node still missing when the grace ends is alerted:
	 * look again then. */
	tv.tv_sec = (time_t)(conf->survey_grace_ms / 1000) + 1;
	tv.tv_usec = 0;
	evtimer_add(w->eval_ev, &tv);
	return w;
}

void health_rules_free(struct health_rules *w)
{
	if (!w)
		return;
	if (w->eval_ev)
		event_free(w->eval_ev);
	if (w->tick_ev)
		event_free(w->tick_ev);
	if (w->relearn_ev)
		event_free(w->relearn_ev);
	if (w->beacon_ev)
		event_free(w->beacon_ev);
	health_rules_detach(w);
	health_rules_free_live_gap(w); /* points into the old copy's order */
	if (w->top)
		ring__topology__free_unpacked(w->top, NULL);
	free(w->edges);
	free(w->live_strays);
	free(w->baselines);
	health_rules_free_not_surveyed(w);
	health_rules_free_live_gap(w);
	free(w);
}
