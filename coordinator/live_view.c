/* The live view over the published topology (live_view.h). Facts come
 * from the node table only: what the agents pushed (up or down,
 * inventories with carrier, MTU and speeds, beacon tables); nothing here
 * sends traffic. */
#include "live_view.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "text.h"
#include "topoview.h"

/* Without a neighbour table to read the agents' beacon interval from:
 * two of the default 5 s intervals. */
#define LIVE_VIEW_BEACON_GRACE_MS 10000

struct live_view {
	struct nodes *table;
	Ring__Topology *top; /* a copy of the published one */
	struct live_view_edge *edges;
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
	int attached;		/* the overlay's pointers are in top */
	int relearning;		/* nodes not heard from are pending */
	uint64_t beacon_due_ms; /* the earliest beacon grace ends (0: none) */
	live_view_edge_fn edge_fn;
	void *edge_arg;
};

/* The overlay points into the view's own buffers while attached; before
 * the copy is freed or replaced, the pointers go back to protobuf-c's
 * empty string so that free_unpacked frees only what it allocated. */
static void live_view_detach(struct live_view *w)
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

static void live_view_attach(struct live_view *w, uint64_t now_ms)
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

static void live_view_free_live_gap(struct live_view *w)
{
	for (size_t i = 0; i < w->n_live_cut; i++)
		free(w->live_cut[i]);
	free(w->live_cut);
	free(w->live_down);
	w->live_cut = w->live_down = NULL;
	w->n_live_cut = w->n_live_down = 0;
}

static void live_view_free_not_surveyed(struct live_view *w)
{
	for (size_t i = 0; i < w->n_not_surveyed; i++)
		free(w->not_surveyed[i]);
	free(w->not_surveyed);
	w->not_surveyed = NULL;
	w->n_not_surveyed = 0;
}

/* Does node n's beacon table have peer on its port ifname? -1 when it has
 * no beacons at all (nothing to judge by). */
static int live_view_hears(const struct node *n, const char *ifname,
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

int live_view_node_up(const struct node *n)
{
	return n && n->state == NODE_UP;
}

/* Up but not yet judged by: this session has not sent its inventory and
 * neighbour table, or the coordinator is re-learning after a restart and
 * has not heard from it yet. Its cables are unverified, not down, and it
 * breaks neither the ring nor the rank order until it has reported. */
static int live_view_pending(const struct live_view *w, const struct node *n)
{
	if (w->relearning && !nodes_ready(n))
		return 1;
	return live_view_node_up(n) && !nodes_ready(n);
}

void live_view_add(char *buf, size_t len, const char *fmt, ...)
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
static int live_view_end_ok(const struct node *n, const char *node,
			    const char *ifname, char *why, size_t len)
{
	const Ring__NetInterface *f = nodes_iface(n, ifname);

	if (!f) {
		live_view_add(why, len, "%s has no interface %s", node, ifname);
		return 0;
	}
	if (!f->admin_up) {
		live_view_add(why, len, "%s %s: administratively down", node,
			      ifname);
		return 0;
	}
	if (!f->carrier) {
		live_view_add(why, len, "%s %s: no carrier", node, ifname);
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
static uint64_t live_view_beacon_grace(const struct node *a,
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
		return LIVE_VIEW_BEACON_GRACE_MS;
	if (ttl > 120)
		ttl = 120;
	return ttl * 1000ull / 2 > 2000 ? ttl * 1000ull / 2 : 2000;
}

static void live_view_edge_state(struct live_view *w, const Ring__Edge *e,
				 struct live_view_edge *out, uint64_t now_ms)
{
	struct node *a = nodes_find(w->table, e->a);
	struct node *b = nodes_find(w->table, e->b);
	char state[16], why[256] = "";
	int ok_a, ok_b, ha, hb, quiet;
	uint64_t grace;

	if (live_view_pending(w, a) || live_view_pending(w, b) ||
	    !live_view_node_up(a) || !live_view_node_up(b))
		out->quiet_since_ms = 0; /* the wait starts when both report */
	if (live_view_pending(w, a) || live_view_pending(w, b)) {
		/* Facts from before this session, or none yet. */
		snprintf(state, sizeof(state), "unverified");
		if (live_view_pending(w, a))
			live_view_add(why, sizeof(why),
				      "%s has not reported yet", e->a);
		if (live_view_pending(w, b))
			live_view_add(why, sizeof(why),
				      "%s has not reported yet", e->b);
	} else if (!live_view_node_up(a) || !live_view_node_up(b)) {
		/* A node that is down is not a missing cable. */
		snprintf(state, sizeof(state), "unverified");
		if (!live_view_node_up(a))
			live_view_add(why, sizeof(why), "%s is down", e->a);
		if (!live_view_node_up(b))
			live_view_add(why, sizeof(why), "%s is down", e->b);
	} else {
		ok_a = live_view_end_ok(a, e->a, e->a_interface, why,
					sizeof(why));
		ok_b = live_view_end_ok(b, e->b, e->b_interface, why,
					sizeof(why));
		ha = live_view_hears(a, e->a_interface, e->b);
		hb = live_view_hears(b, e->b_interface, e->a);
		quiet = ok_a && ok_b && !ha && !hb;
		if (!quiet)
			out->quiet_since_ms = 0;
		else if (!out->quiet_since_ms)
			out->quiet_since_ms = now_ms;
		grace = quiet ? live_view_beacon_grace(a, b) : 0;
		if (quiet && now_ms < out->quiet_since_ms + grace) {
			/* Beacons lag carrier by up to an interval. */
			snprintf(state, sizeof(state), "unverified");
			live_view_add(why, sizeof(why),
				      "carrier; waiting %llu ms for beacons",
				      (unsigned long long)grace);
			if (!w->beacon_due_ms ||
			    out->quiet_since_ms + grace < w->beacon_due_ms)
				w->beacon_due_ms = out->quiet_since_ms + grace;
		} else {
			if (quiet)
				live_view_add(
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
static long live_view_edge_index(const Ring__Topology *t, const char *x,
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
static void live_view_live_kind(struct live_view *w)
{
	const Ring__Topology *t = w->top;
	int ring = !strcmp(t->kind, "ring"), line = !strcmp(t->kind, "line");
	size_t n = t->n_order, pairs, broken = 0, down = 0;
	char gap[256] = "", downs[256] = "", cable[300];

	live_view_free_live_gap(w);
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
		if (!live_view_pending(w, nodes_find(w->table, t->order[i])) &&
		    !live_view_node_up(nodes_find(w->table, t->order[i]))) {
			down++;
			live_view_add(downs, sizeof(downs), "%s down",
				      t->order[i]);
			if (w->live_down)
				w->live_down[w->n_live_down++] = t->order[i];
		}
	pairs = ring ? n : n - 1;
	for (size_t i = 0; i < pairs; i++) {
		const char *x = t->order[i], *y = t->order[(i + 1) % n];
		long k = live_view_edge_index(t, x, y);

		if (!live_view_node_up(nodes_find(w->table, x)) ||
		    !live_view_node_up(nodes_find(w->table, y)) ||
		    live_view_pending(w, nodes_find(w->table, x)) ||
		    live_view_pending(w, nodes_find(w->table, y)))
			continue; /* a node down, or not reported yet */
		if (k < 0 || strcmp(w->edges[k].state, "up")) {
			broken++;
			/* As the edge is published (n1-n3, never n3-n1). */
			text_pair_name(cable, sizeof(cable), t, x, y);
			live_view_add(gap, sizeof(gap), "%s", cable);
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
		live_view_add(w->live_gap, sizeof(w->live_gap), "%s", downs);
}

/* The overlay in words, from its data as live_view_attach will publish it. */
static void live_view_live_text(const struct live_view *w, char *buf,
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
static void live_view_order(struct live_view *w)
{
	const Ring__Topology *t = w->top;
	int ring = !strcmp(t->kind, "ring");
	size_t n = t->n_ranks;

	w->order_invalid[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const struct node *x = nodes_find(w->table, t->ranks[i]->node);

		if (!live_view_node_up(x) && !live_view_pending(w, x))
			live_view_add(
				w->order_invalid, sizeof(w->order_invalid),
				"rank %zu (%s) is down", i, t->ranks[i]->node);
	}
	for (size_t i = 0; n > 1 && i < (ring ? n : n - 1); i++) {
		const char *x = t->ranks[i]->node,
			   *y = t->ranks[(i + 1) % n]->node;
		long k = live_view_edge_index(t, x, y);

		if (!live_view_node_up(nodes_find(w->table, x)) ||
		    !live_view_node_up(nodes_find(w->table, y)) ||
		    live_view_pending(w, nodes_find(w->table, x)) ||
		    live_view_pending(w, nodes_find(w->table, y)))
			continue;
		if (k < 0)
			live_view_add(w->order_invalid,
				      sizeof(w->order_invalid),
				      "no cable %s-%s", x, y);
		else if (strcmp(w->edges[k].state, "up"))
			live_view_add(w->order_invalid,
				      sizeof(w->order_invalid),
				      "cable %s-%s is %s (%s)", x, y,
				      w->edges[k].state, w->edges[k].reason);
	}
}

/* The published strays still up: one that left is no longer listed,
 * and nothing else of the topology changes. */
static void live_view_strays(struct live_view *w)
{
	w->n_live_strays = 0;
	for (size_t i = 0; w->live_strays && i < w->n_strays_pub; i++)
		if (live_view_node_up(
			    nodes_find(w->table, w->strays_pub[i]->node)))
			w->live_strays[w->n_live_strays++] = w->strays_pub[i];
}

/* Was node set apart from the ring by the published survey? */
int live_view_published_stray(const struct live_view *w, const char *node)
{
	for (size_t i = 0; i < w->n_strays_pub; i++)
		if (!strcmp(w->strays_pub[i]->node, node))
			return 1;
	return 0;
}

static int live_view_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Expected nodes the published topology does not include, and why. The
 * topology's names are sorted once and looked up: a scan of the order
 * and the edges per node would be O(n^2) on every evaluation of a site
 * of thousands of nodes. */
static void live_view_not_surveyed(struct live_view *w)
{
	const Ring__Topology *t = w->top;
	size_t n_in = t->n_order + 2 * t->n_edges, k = 0;
	const char **in_v;
	struct node **v;
	unsigned n;

	live_view_free_not_surveyed(w);
	in_v = malloc((n_in ? n_in : 1) * sizeof(*in_v));
	v = nodes_sorted(w->table, &n);
	if (!v || !in_v) {
		free(v);
		free(in_v);
		return;
	}
	/* In the order, or at an end of a measured edge: a split has no
	 * order, and its nodes were surveyed all the same. */
	for (size_t i = 0; i < t->n_order; i++)
		in_v[k++] = t->order[i];
	for (size_t i = 0; i < t->n_edges; i++) {
		in_v[k++] = t->edges[i]->a;
		in_v[k++] = t->edges[i]->b;
	}
	qsort(in_v, k, sizeof(*in_v), live_view_name_cmp);
	w->not_surveyed = calloc(n ? n : 1, sizeof(char *));
	for (unsigned i = 0; w->not_surveyed && i < n; i++) {
		const char *name = v[i]->name;
		char buf[320];

		if (!v[i]->expected)
			continue;
		if (k &&
		    bsearch(&name, in_v, k, sizeof(*in_v), live_view_name_cmp))
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
	free(in_v);
}

/* The figures that move between surveys; only while attached (the
 * strings set are given back by live_view_detach). */
static void live_view_edge_extras(struct live_view *w)
{
	for (size_t i = 0; w->top && w->edge_fn && i < w->top->n_edges; i++)
		w->edge_fn(w->top->edges[i], w->edge_arg);
}

const Ring__Topology *live_view_topology(struct live_view *w)
{
	/* Read when asked: the account moves with every test. */
	if (w->attached)
		live_view_edge_extras(w);
	return w->top;
}

void live_view_set_edge_fn(struct live_view *w, live_view_edge_fn fn, void *arg)
{
	w->edge_fn = fn;
	w->edge_arg = arg;
}

void live_view_eval(struct live_view *w, uint64_t now_ms, int relearning,
		    char *now_text, size_t len)
{
	const Ring__Topology *t = w->top;

	w->relearning = relearning;
	live_view_detach(w);
	w->beacon_due_ms = 0;
	if (len)
		now_text[0] = '\0';
	if (!t)
		return;
	/* attached from here: live_view_attach below, in this pass */
	w->attached = 1;
	live_view_edge_extras(w);
	for (size_t i = 0; i < t->n_edges; i++)
		live_view_edge_state(w, t->edges[i], &w->edges[i], now_ms);
	live_view_live_kind(w);
	live_view_live_text(w, now_text, len);
	live_view_order(w);
	live_view_not_surveyed(w);
	live_view_strays(w);
	live_view_attach(w, now_ms);
}

/* The published copy and what points into it let go: the overlay off
 * the agents' nodes, the live gap (in the copy's order), the edges' and
 * strays' live arrays. */
static void live_view_drop_published(struct live_view *w)
{
	live_view_detach(w);
	live_view_free_live_gap(w);
	if (w->top)
		ring__topology__free_unpacked(w->top, NULL);
	free(w->edges);
	free(w->live_strays);
}

int live_view_set_topology(struct live_view *w, const Ring__Topology *t)
{
	Ring__Topology *copy = NULL;
	struct live_view_edge *edges = NULL;

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
	live_view_drop_published(w);
	w->top = copy;
	w->edges = edges;
	w->strays_pub = copy ? copy->strays : NULL;
	w->n_strays_pub = copy ? copy->n_strays : 0;
	w->n_live_strays = 0;
	/* Out of memory: no stray listed, the rest as published. */
	w->live_strays =
		copy ? calloc(copy->n_strays + 1, sizeof(*w->live_strays))
		     : NULL;
	return 0;
}

const Ring__Topology *live_view_published(const struct live_view *w)
{
	return w->top;
}

struct live_view_edge *live_view_edge(struct live_view *w, size_t i)
{
	return &w->edges[i];
}

const char *live_view_order_invalid(const struct live_view *w)
{
	return w->order_invalid;
}

uint64_t live_view_beacon_due(const struct live_view *w)
{
	return w->beacon_due_ms;
}

struct live_view *live_view_new(struct nodes *table)
{
	struct live_view *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->table = table;
	return w;
}

void live_view_free(struct live_view *w)
{
	if (!w)
		return;
	live_view_drop_published(w);
	live_view_free_not_surveyed(w);
	free(w);
}
