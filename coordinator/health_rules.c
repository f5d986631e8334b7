/* The health rules over the live view (health_rules.h): alerts raised
 * and cleared on every change the agents push, certificate expiry,
 * re-learning after a restart, edge_degraded against each edge's baseline
 * (edge_baselines.h). The view itself is live_view.c's. */
#include "health_rules.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "edge_baselines.h"
#include "live_view.h"
#include "log.h"
#include "text.h"

struct health_rules {
	struct event_base *base;
	const struct coord_conf *conf;
	struct nodes *table;
	struct alerts *alerts;
	struct event *eval_ev;	/* a change: evaluate on the next pass */
	struct event *tick_ev;	/* the next hold-down to end */
	struct live_view *view; /* the published topology, live */
	uint64_t started_ms;  /* an expected node is missing after the grace */
	uint64_t own_cert_ms; /* the coordinator's certificate ends */
	struct edge_baselines baselines;
	char survey_failure[400]; /* the last survey's, "" when it succeeded */
	health_rules_eval_fn eval_fn;
	void *eval_arg;
	/* After a restart: until every awaited node is ready or this
	 * passes, cables, nodes and the ring are not judged (0: not
	 * relearning). */
	uint64_t relearn_until_ms, relearn_started_ms;
	struct event *relearn_ev;
	struct event *beacon_ev; /* the earliest beacon grace to end */
};

static void health_rules_check_baselines(struct health_rules *w,
					 uint64_t now_ms);
static void health_rules_beacon_arm(struct health_rules *w, uint64_t now_ms);

const char *const health_rules_names[] = {
	"node_down",	      "cable_down",	 "ring_broken",
	"mtu_mismatch",	      "speed_downshift", "pcie_downshift",
	"version_skew",	      "unexpected_path", "port_errors",
	"cert_expiring",      "edge_degraded",	 "survey_failed",
	"light_check_failed", "gid_change",
};
const size_t health_rules_n_names =
	sizeof(health_rules_names) / sizeof(health_rules_names[0]);

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

static int health_rules_subject_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The subjects of the firing node_down alerts, sorted (copies: raising
 * may resolve and drop entries), into *out; their number, or -1 when out
 * of memory. */
static long
health_rules_down_firing(struct health_rules *w,
			 char (**out)[sizeof(((struct node *)0)->name)])
{
	size_t nf = alerts_firing(w->alerts), k = 0;
	const struct alert **al = malloc((nf ? nf : 1) * sizeof(*al));
	char(*v)[sizeof(((struct node *)0)->name)] =
		malloc((nf ? nf : 1) * sizeof(*v));

	*out = NULL;
	if (!al || !v) {
		free(al);
		free(v);
		return -1;
	}
	k = alerts_list(w->alerts, 0, al, nf);
	nf = k < nf ? k : nf;
	k = 0;
	for (size_t i = 0; i < nf; i++) {
		size_t len = strlen(al[i]->subject);

		if (!strcmp(al[i]->rule, "node_down") && len < sizeof(v[0]))
			memcpy(v[k++], al[i]->subject, len + 1);
	}
	free(al);
	qsort(v, k, sizeof(v[0]), health_rules_subject_cmp);
	*out = v;
	return (long)k;
}

static void health_rules_check_nodes(struct health_rules *w, uint64_t now_ms)
{
	char(*down)[sizeof(((struct node *)0)->name)] = NULL;
	long n_down = -2; /* not gathered yet */
	struct node **v;
	unsigned n;

	v = nodes_sorted(w->table, &n);
	if (!v)
		return;
	for (unsigned i = 0; i < n; i++) {
		const struct node *x = v[i];
		const struct alert *was = NULL;
		int carried;

		/* Only a node never connected asks, and only when its alert
		 * fires (no firing alert can start before its own raise
		 * below): a lookup per node, which copies and scans the
		 * table, would be O(nodes x alerts) on every evaluation. */
		if (x->state == NODE_NEVER && n_down == -2)
			n_down = health_rules_down_firing(w, &down);
		if (x->state == NODE_NEVER &&
		    (n_down < 0 ||
		     (n_down > 0 &&
		      bsearch(x->name, down, (size_t)n_down, sizeof(down[0]),
			      health_rules_subject_cmp))))
			was = alerts_get(w->alerts, "node_down", x->name);
		carried = was && was->firing;

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
			   !live_view_published_stray(w->view, x->name))))
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
	free(down);
}

/* One end of a cable: a speed or PCIe width below what it should be. */
/* One end of a cable: a link speed below the fastest it had since the
 * survey (a renegotiation; a port that never ran faster is the survey's
 * finding against its nominal speed, not an alert), or a PCIe link
 * narrower than the device can do. */
static void health_rules_check_port(struct health_rules *w, const char *node,
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

static void health_rules_check_edges(struct health_rules *w, uint64_t now_ms)
{
	const Ring__Topology *t = live_view_published(w->view);

	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		const struct node *a = nodes_find(w->table, e->a);
		const struct node *b = nodes_find(w->table, e->b);
		const Ring__NetInterface *fa = nodes_iface(a, e->a_interface);
		const Ring__NetInterface *fb = nodes_iface(b, e->b_interface);
		struct live_view_edge *le = live_view_edge(w->view, i);
		char edge[ALERTS_EDGE_LEN];

		text_edge_msg_name(edge, sizeof(edge), e);
		if (!strcmp(le->state, "down"))
			health_rules_raise(w, "cable_down", edge, NULL, edge,
					   ALERT_CRITICAL, now_ms,
					   "cable %s %s - %s %s is down: %s",
					   e->a, e->a_interface, e->b,
					   e->b_interface, le->reason);
		if (!live_view_node_up(a) || !live_view_node_up(b))
			continue;
		/* Carrier and beacons say up, the data plane says no: a
		 * check judged against the edge as it was when it started
		 * (one that began before the edge came up says nothing). */
		if (!strcmp(le->state, "up") && *e->light_error &&
		    e->light_started_ms && e->light_started_ms >= le->since_ms)
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
			health_rules_check_port(w, e->a, fa, &le->max_mbps[0],
						now_ms);
		if (fb)
			health_rules_check_port(w, e->b, fb, &le->max_mbps[1],
						now_ms);
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
			live_view_add(
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
		live_view_add(
			why, len,
			"%s %s port %u: GID index %d is now %s (was %s when "
			"the survey measured it)",
			node, dev, p->port, index, now->gid, gid);
	else
		live_view_add(
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

	if (!live_view_node_up(a) || !live_view_node_up(b))
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
static void health_rules_check_gids(struct health_rules *w, uint64_t now_ms)
{
	const Ring__Topology *t = live_view_published(w->view);

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
static void health_rules_check_counters(struct health_rules *w, uint64_t now_ms)
{
	struct node **v;
	unsigned n;

	/* No port rising anywhere (the usual case): nothing to walk. */
	if (!nodes_rising_count(w->table))
		return;
	v = nodes_sorted(w->table, &n);
	if (!v)
		return;
	for (unsigned i = 0; i < n; i++) {
		const struct node *x = v[i];
		const Ring__CountersReport *c = x->counters;

		if (!live_view_node_up(x) || !c || !x->counters_rise)
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

static int health_rules_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every node the re-learning waits for: the expected ones, and those of
 * the published topology (its edges' ends sorted once and looked up: it
 * runs on every evaluation while thousands of agents reconnect). */
static int health_rules_awaited_ready(struct health_rules *w, unsigned *n_ready,
				      unsigned *n_awaited)
{
	const Ring__Topology *t = live_view_published(w->view);
	size_t n_ends = t ? 2 * t->n_edges : 0;
	const char **ends = malloc((n_ends ? n_ends : 1) * sizeof(*ends));
	struct node **v;
	unsigned n;

	*n_ready = *n_awaited = 0;
	v = nodes_sorted(w->table, &n);
	if (!v || !ends) {
		free(v);
		free(ends);
		return 0;
	}
	for (size_t k = 0; k < n_ends / 2; k++) {
		ends[2 * k] = t->edges[k]->a;
		ends[2 * k + 1] = t->edges[k]->b;
	}
	qsort(ends, n_ends, sizeof(*ends), health_rules_name_cmp);
	for (unsigned i = 0; i < n; i++) {
		const char *name = v[i]->name;
		int awaited =
			v[i]->expected ||
			(n_ends && bsearch(&name, ends, n_ends, sizeof(*ends),
					   health_rules_name_cmp));

		*n_awaited += awaited;
		*n_ready += awaited && nodes_ready(v[i]);
	}
	free(v);
	free(ends);
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
	const Ring__Topology *t = live_view_published(w->view);
	const char *order_invalid;
	char now_text[600];

	health_rules_relearn_check(w, now_ms);
	live_view_eval(w->view, now_ms, w->relearn_until_ms != 0, now_text,
		       sizeof(now_text));
	alerts_round_begin(w->alerts);
	health_rules_beacon_arm(w, now_ms);
	order_invalid = live_view_order_invalid(w->view);
	if (t && order_invalid[0] && t->n_ranks && !w->relearn_until_ms)
		health_rules_raise(w, "ring_broken", "ring", NULL, NULL,
				   ALERT_CRITICAL, now_ms,
				   "the rank order deployed from the last "
				   "survey is no longer valid: %s; the %s is "
				   "now %s",
				   order_invalid, t->kind, now_text);
	/* Several rings: each one's rank order on its own, the ring its
	 * subject. */
	for (size_t k = 0; t && k < live_view_n_rings(w->view); k++) {
		const Ring__RingView *r = t->rings[k];
		const char *why = live_view_ring_order_invalid(w->view, k);

		if (why[0] && r->n_ranks && !w->relearn_until_ms)
			health_rules_raise(
				w, "ring_broken", r->id, NULL, NULL,
				ALERT_CRITICAL, now_ms,
				"the rank order of ring %s deployed from the "
				"last survey is no longer valid: %s; the %s is "
				"now %s%s%s",
				r->id, why, r->kind, r->live_kind,
				r->live_gap[0] ? " without " : "", r->live_gap);
	}
	health_rules_cert(w, "the coordinator", NULL, w->own_cert_ms, now_ms);
	if (w->relearn_until_ms) {
		/* Nothing is judged from missing facts: what fired before the
		 * restart fires on (no rule's round ends), what is new waits
		 * for the agents. */
		alerts_round_end(w->alerts, NULL, 0, now_ms);
		health_rules_arm_tick(w, now_ms);
		if (w->eval_fn)
			w->eval_fn(t, w->eval_arg);
		return;
	}
	health_rules_check_nodes(w, now_ms);
	health_rules_check_edges(w, now_ms);
	health_rules_check_counters(w, now_ms);
	health_rules_check_baselines(w, now_ms);
	health_rules_check_gids(w, now_ms);
	if (w->survey_failure[0])
		health_rules_raise(w, "survey_failed", "survey", NULL, NULL,
				   ALERT_WARNING, now_ms, "%s",
				   w->survey_failure);
	alerts_round_end(w->alerts, health_rules_names, health_rules_n_names,
			 now_ms);
	health_rules_arm_tick(w, now_ms);
	if (w->eval_fn)
		w->eval_fn(t, w->eval_arg);
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
	uint64_t due = live_view_beacon_due(w->view), left;
	struct timeval tv;

	if (!due)
		return;
	if (!w->beacon_ev)
		w->beacon_ev = evtimer_new(w->base, health_rules_beacon_cb, w);
	if (!w->beacon_ev)
		return;
	left = due > now_ms ? due - now_ms : 0;
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

double health_rules_edge_figure(const Ring__Edge *e)
{
	return edge_baselines_figure(e);
}

double health_rules_edge_baseline(const struct health_rules *w,
				  const Ring__Edge *e)
{
	return edge_baselines_of(&w->baselines, e);
}

int health_rules_set_baseline(struct health_rules *w, const char *edge,
			      double gbps, uint64_t ms)
{
	return edge_baselines_set(&w->baselines, edge, gbps, ms);
}

size_t health_rules_baselines_text(const struct health_rules *w, char *buf,
				   size_t len)
{
	return edge_baselines_text(&w->baselines, buf, len);
}

void health_rules_baselines_load(struct health_rules *w, const char *text,
				 size_t len)
{
	edge_baselines_load(&w->baselines, text, len);
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
static void health_rules_check_baselines(struct health_rules *w,
					 uint64_t now_ms)
{
	const Ring__Topology *t = live_view_published(w->view);
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
		const struct edge_baseline *b;
		double g = edge_baselines_figure_now(e, &sampled[i]);

		text_edge_msg_name(edge, sizeof(edge), e);
		b = edge_baselines_find(&w->baselines, edge);
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
		const struct edge_baseline *b;

		if (ratio[i] < 0 || ratio[i] * 100 >= WATCH_DEGRADED_PCT)
			continue;
		if (n >= 3 && ratio[i] >= 0.8 * median)
			continue;
		text_edge_msg_name(edge, sizeof(edge), e);
		b = edge_baselines_find(&w->baselines, edge);
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

/* The ring an alert is about (issue 24): its node's, an edge's ends',
 * a ring id as its subject; "ring" on a site of one ring is that ring. */
struct health_rules_end {
	const struct health_rules *w;
	const Ring__RingView *r;
};

/* An edge's first end that is in a ring names the edge's ring. */
static int health_rules_end_ring(const char *a, const char *b, void *arg)
{
	struct health_rules_end *e = arg;

	(void)b;
	e->r = live_view_ring_of(e->w->view, a);
	return e->r != NULL;
}

void health_rules_subject_ring(const struct health_rules *w, const char *node,
			       const char *edge, const char *subject,
			       char *ring, size_t len)
{
	const Ring__Topology *t = live_view_published(w->view);
	const Ring__RingView *r = NULL;

	if (len)
		ring[0] = '\0';
	if (!t || !t->n_rings)
		return;
	node = node ? node : "";
	edge = edge ? edge : "";
	subject = subject ? subject : "";
	if (node[0])
		r = live_view_ring_of(w->view, node);
	if (!edge[0] && !node[0] && strchr(subject, '-'))
		edge = subject;
	if (!r) {
		struct health_rules_end end = {.w = w};

		text_edge_splits(edge, health_rules_end_ring, &end);
		r = end.r;
	}
	for (size_t k = 0; !r && k < t->n_rings; k++)
		if (!strcmp(t->rings[k]->id, subject) ||
		    (t->n_rings == 1 && !strcmp(subject, "ring")))
			r = t->rings[k];
	if (!r && !node[0])
		r = live_view_ring_of(w->view, subject);
	if (r)
		snprintf(ring, len, "%s", r->id);
}

static void health_rules_ring_of(const struct alert *a, char *ring, size_t len,
				 void *arg)
{
	health_rules_subject_ring(arg, a->node, a->edge, a->subject, ring, len);
}

int health_rules_set_topology(struct health_rules *w, const Ring__Topology *t)
{
	if (live_view_set_topology(w->view, t) < 0)
		return -1;
	if (t)
		edge_baselines_note(&w->baselines, t);
	health_rules_eval(w);
	return 0;
}

const Ring__Topology *health_rules_topology(struct health_rules *w)
{
	return live_view_topology(w->view);
}

void health_rules_set_edge_fn(struct health_rules *w, health_rules_edge_fn fn,
			      void *arg)
{
	live_view_set_edge_fn(w->view, fn, arg);
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
	w->view = live_view_new(table);
	alerts_set_ring_fn(alerts, health_rules_ring_of, w);
	w->eval_ev = evtimer_new(base, health_rules_eval_cb, w);
	w->tick_ev = evtimer_new(base, health_rules_tick_cb, w);
	if (!w->view || !w->eval_ev || !w->tick_ev) {
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
	alerts_set_ring_fn(w->alerts, NULL, NULL);
	if (w->eval_ev)
		event_free(w->eval_ev);
	if (w->tick_ev)
		event_free(w->tick_ev);
	if (w->relearn_ev)
		event_free(w->relearn_ev);
	if (w->beacon_ev)
		event_free(w->beacon_ev);
	live_view_free(w->view);
	edge_baselines_clear(&w->baselines);
	free(w);
}
