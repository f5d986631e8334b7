/* `ringctl explain`: one edge's or node's figures gathered from status,
 * inventory and history, and the ceiling analysis. Measured figures carry
 * "_measured" and their time; what is derived from them "_computed". */
#include "explain.h"
#include "client.h"
#include "render.h"
#include "report_counters.h"
#include "text.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPLAIN_OK 0
#define EXPLAIN_PROBLEM 1
#define EXPLAIN_TROUBLE 2
/* Names listed after "unknown": enough to spot a typo, not a page. */
#define EXPLAIN_LIST_MAX 12
/* History series summarised (kind, direction, streams or size). */
#define EXPLAIN_SERIES_MAX 48
/* Framing per packet, bytes: Ethernet header, FCS, preamble and gap (38);
 * TCP/IPv4 with timestamps (52); RoCE v2: IPv4, UDP, BTH, ICRC (44). */
#define EXPLAIN_ETH_WIRE 38.0
#define EXPLAIN_TCPIP_HDR 52.0
#define EXPLAIN_ROCE_HDR 44.0
/* A ladder step this much above the one before: still rising. */
#define EXPLAIN_RISING 0.05

/* ---- matching ---- */

static int explain_word_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

int explain_text_names(const char *text, const char *word)
{
	size_t n = word ? strlen(word) : 0;

	if (!text || !n)
		return 0;
	for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
		if ((p == text || !explain_word_char(p[-1])) &&
		    !explain_word_char(p[n]))
			return 1;
	return 0;
}

/* "x-y" with x, y exactly the two names. */
static int explain_pair_is(const char *s, size_t len, const char *x,
			   const char *y)
{
	size_t lx = strlen(x);

	return len == lx + 1 + strlen(y) && !strncmp(s, x, lx) &&
	       s[lx] == '-' && !strncmp(s + lx + 1, y, len - lx - 1);
}

int explain_find_edge(const Ring__Topology *t, const char *name)
{
	const char *colon = strrchr(name, ':');
	size_t len = colon ? (size_t)(colon - name) : strlen(name);

	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (colon) {
			if ((explain_pair_is(name, len, e->a, e->b) &&
			     !strcmp(colon + 1, e->a_interface)) ||
			    (explain_pair_is(name, len, e->b, e->a) &&
			     !strcmp(colon + 1, e->b_interface)))
				return (int)i;
			continue;
		}
		if (e->twin)
			continue;
		if (explain_pair_is(name, len, e->a, e->b) ||
		    explain_pair_is(name, len, e->b, e->a))
			return (int)i;
	}
	/* A node name with ':' in it is no twin name: try it whole. */
	for (size_t i = 0; colon && t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (!e->twin &&
		    (explain_pair_is(name, strlen(name), e->a, e->b) ||
		     explain_pair_is(name, strlen(name), e->b, e->a)))
			return (int)i;
	}
	return -1;
}

/* Findings about all edges, nodes or cables ("every edge tops out..."). */
static int explain_text_names_all(const char *text)
{
	return strstr(text, "every edge") || strstr(text, "every node") ||
	       strstr(text, "every cable");
}

int explain_finding_names_edge(const Ring__Edge *e, const char *text)
{
	char name[EXPLAIN_NAME_MAX];

	text_edge_msg_name(name, sizeof(name), e);
	if (explain_text_names(text, name))
		return 1;
	if (e->twin)
		snprintf(name, sizeof(name), "%s-%s:%s", e->b, e->a,
			 e->b_interface);
	else
		snprintf(name, sizeof(name), "%s-%s", e->b, e->a);
	return explain_text_names(text, name) ||
	       (explain_text_names(text, e->a) &&
		explain_text_names(text, e->a_interface)) ||
	       (explain_text_names(text, e->b) &&
		explain_text_names(text, e->b_interface)) ||
	       (e->cable_id && explain_text_names(text, e->cable_id)) ||
	       explain_text_names_all(text);
}

/* The coordinator's finding code about node and what (a link id), if
 * any: quoted instead of said again. */
static const Ring__Finding *explain_finding(const Ring__Topology *t,
					    const char *code, const char *node,
					    const char *what)
{
	for (size_t i = 0; t && i < t->n_findings; i++)
		if (!strcmp(t->findings[i]->code, code) &&
		    explain_text_names(t->findings[i]->text, node) &&
		    explain_text_names(t->findings[i]->text, what))
			return t->findings[i];
	return NULL;
}

/* ---- the inventory model ---- */

static const Ring__NetInterface *explain_iface(const Ring__Inventory *inv,
					       const char *name)
{
	for (size_t i = 0; inv && name && *name && i < inv->n_interfaces; i++)
		if (!strcmp(inv->interfaces[i]->name, name))
			return inv->interfaces[i];
	return NULL;
}

static const Ring__PcieLink *explain_link(const Ring__Inventory *inv,
					  const Ring__NetInterface *f)
{
	for (size_t i = 0; inv && f && *f->pcie_link && i < inv->n_pcie_links;
	     i++)
		if (!strcmp(inv->pcie_links[i]->id, f->pcie_link))
			return inv->pcie_links[i];
	return NULL;
}

static const Ring__PhysPort *explain_port(const Ring__Inventory *inv,
					  const Ring__NetInterface *f)
{
	for (size_t i = 0; inv && f && *f->port_id && i < inv->n_phys_ports;
	     i++)
		if (!strcmp(inv->phys_ports[i]->id, f->port_id))
			return inv->phys_ports[i];
	return NULL;
}

static const Ring__RdmaPort *explain_rdma_port(const Ring__Inventory *inv,
					       const Ring__NetInterface *f)
{
	for (size_t i = 0; inv && f && i < inv->n_rdma_devices; i++)
		for (size_t j = 0; j < inv->rdma_devices[i]->n_ports; j++)
			if (!strcmp(inv->rdma_devices[i]->ports[j]->netdev,
				    f->name))
				return inv->rdma_devices[i]->ports[j];
	return NULL;
}

/* The port's speed as the agent reports it: the port model's, else the
 * configured nominal, else sysfs. 0 unknown. */
static double explain_port_gbps(const Ring__Inventory *inv,
				const Ring__NetInterface *f)
{
	const Ring__PhysPort *p = explain_port(inv, f);

	if (p && p->speed_gbps > 0)
		return p->speed_gbps;
	if (!f)
		return 0;
	if (f->nominal_speed_mbps)
		return f->nominal_speed_mbps / 1000.0;
	return f->speed_mbps > 0 ? f->speed_mbps / 1000.0 : 0;
}

/* "32.0 GT/s PCIe" -> 32.0; 0 when not a rate. */
static double explain_gts(const char *s)
{
	return s && *s ? strtod(s, NULL) : 0;
}

/* ---- the ceiling ---- */

static double explain_top(const double *v, size_t n)
{
	return n ? v[n - 1] : -1;
}

static double explain_worse(double a, double b)
{
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return a < b ? a : b;
}

static void explain_advise(struct explain_ceiling *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void explain_advise(struct explain_ceiling *c, const char *fmt, ...)
{
	va_list ap;

	if (c->n_advice >= EXPLAIN_ADVICE_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(c->advice[c->n_advice++], sizeof(c->advice[0]), fmt, ap);
	va_end(ap);
}

static struct explain_limit *explain_add_limit(struct explain_ceiling *c,
					       const char *what, double gbps)
{
	struct explain_limit *l;

	if (c->n_limits >= EXPLAIN_LIMITS_MAX || !(gbps > 0))
		return NULL;
	l = &c->limits[c->n_limits++];
	l->side = -1;
	snprintf(l->what, sizeof(l->what), "%s", what);
	l->gbps = gbps;
	return l;
}

/* The figure: the best the edge showed (the worse direction of the
 * ladder's top, or of RDMA WRITE), so the limits bound it. */
static void explain_figure(const Ring__Edge *e, struct explain_ceiling *c)
{
	double a = explain_top(e->gbps_a_to_b, e->n_gbps_a_to_b);
	double b = explain_top(e->gbps_b_to_a, e->n_gbps_b_to_a);
	double tcp = explain_worse(a, b);
	double rw = explain_worse(e->rdma_write_gbps_a_to_b,
				  e->rdma_write_gbps_b_to_a);
	unsigned top = e->n_ladder ? e->ladder[e->n_ladder - 1] : 0;
	int rdma_ladder = e->method_kind == RING__EDGE_METHOD__EDGE_METHOD_RDMA;

	c->measured_ms = e->measured_ms;
	if (tcp >= 0 && tcp >= rw) {
		c->gbps = tcp;
		c->rdma = rdma_ladder;
		snprintf(c->figure, sizeof(c->figure),
			 "%s ladder top (%u %s), worse direction (%s)",
			 rdma_ladder ? "RDMA WRITE" : "TCP", top,
			 rdma_ladder ? "QPs" : "streams",
			 a >= 0 && (b < 0 || a <= b) ? "a_to_b" : "b_to_a");
	} else if (rw >= 0) {
		c->gbps = rw;
		c->rdma = 1;
		snprintf(c->figure, sizeof(c->figure),
			 "RDMA WRITE, worse direction (%s)",
			 e->rdma_write_gbps_a_to_b >= 0 &&
					 (e->rdma_write_gbps_b_to_a < 0 ||
					  e->rdma_write_gbps_a_to_b <=
						  e->rdma_write_gbps_b_to_a)
				 ? "a_to_b"
				 : "b_to_a");
	} else {
		c->gbps = -1;
		snprintf(c->figure, sizeof(c->figure), "%s",
			 "no bandwidth figure measured");
	}
}

/* The port's line rate less framing at the MTU the figure ran with. */
static void explain_port_limit(struct explain_ceiling *c, const Ring__Edge *e,
			       const Ring__Inventory *inv_a,
			       const Ring__Inventory *inv_b)
{
	const Ring__NetInterface *fa = explain_iface(inv_a, e->a_interface),
				 *fb = explain_iface(inv_b, e->b_interface);
	const Ring__RdmaPort *ra = explain_rdma_port(inv_a, fa),
			     *rb = explain_rdma_port(inv_b, fb);
	double pa = explain_port_gbps(inv_a, fa),
	       pb = explain_port_gbps(inv_b, fb);
	double port = pa > 0 && (pb <= 0 || pa <= pb) ? pa : pb, eff;
	unsigned mtu = 0;
	struct explain_limit *l;
	char mtus[96];

	if (c->rdma) {
		if (ra && ra->active_mtu)
			mtu = ra->active_mtu;
		if (rb && rb->active_mtu && (!mtu || rb->active_mtu < mtu))
			mtu = rb->active_mtu;
		if (!mtu)
			mtu = 1024; /* RoCE's default path MTU */
		eff = mtu / (mtu + EXPLAIN_ROCE_HDR + EXPLAIN_ETH_WIRE);
		snprintf(mtus, sizeof(mtus),
			 "RDMA active_mtu %u (%s %u, %s %u): RoCE v2 framing "
			 "%.1f%%",
			 mtu, e->a, ra ? ra->active_mtu : 0, e->b,
			 rb ? rb->active_mtu : 0, eff * 100.0);
	} else {
		if (fa && fa->mtu)
			mtu = fa->mtu;
		if (fb && fb->mtu && (!mtu || fb->mtu < mtu))
			mtu = fb->mtu;
		if (!mtu)
			mtu = 1500;
		eff = (mtu - EXPLAIN_TCPIP_HDR) / (mtu + EXPLAIN_ETH_WIRE);
		snprintf(mtus, sizeof(mtus),
			 "MTU %u (%s %u, %s %u): TCP/IPv4 framing %.1f%%", mtu,
			 e->a, fa ? fa->mtu : 0, e->b, fb ? fb->mtu : 0,
			 eff * 100.0);
	}
	l = explain_add_limit(c, c->rdma ? "rdma_mtu" : "port", port * eff);
	if (!l)
		return;
	snprintf(l->text, sizeof(l->text),
		 "port line rate %.0f Gbps (%s %.0f, %s %.0f; inventory) at %s",
		 port, e->a, pa, e->b, pb, mtus);
}

/* One end's PCIe link: the test loads one function of it, so the whole
 * usable rate; twins on it halve that when both carry traffic. */
static void explain_pcie_limit(struct explain_ceiling *c, int side,
			       const char *node, const Ring__Inventory *inv,
			       const char *ifname)
{
	const Ring__NetInterface *f = explain_iface(inv, ifname);
	const Ring__PcieLink *k = explain_link(inv, f);
	struct explain_limit *l;

	if (!k || !(k->usable_gbps > 0))
		return;
	l = explain_add_limit(c, "pcie_link", k->usable_gbps);
	if (!l)
		return;
	l->side = side;
	/* What the usable rate was computed from: the MPS the agent read,
	 * or the one it assumed (agents before the field: assumed). */
	snprintf(l->text, sizeof(l->text),
		 "%s %s PCIe link %s: %s x%u%s%s, usable %.1f Gbps (computed "
		 "from MPS %u B %s; shared by %zu function%s, half each when "
		 "two load it)",
		 node, ifname, k->id, k->speed, k->width,
		 !*k->downtrained		      ? ""
		 : !strcmp(k->narrow, "wired_narrow") ? ", wired narrow "
		 : !strcmp(k->narrow, "downtrained")  ? ", downtrained "
						      : ", narrow ",
		 k->downtrained, k->usable_gbps,
		 k->mps_bytes ? k->mps_bytes : 256,
		 !strcmp(k->mps_source, "read") ? "read from config space"
						: "assumed",
		 k->n_interfaces, k->n_interfaces == 1 ? "" : "s");
}

static const Ring__Cable *explain_cable(const Ring__Topology *t,
					const Ring__Edge *e)
{
	for (size_t i = 0; t && e->cable_id && *e->cable_id && i < t->n_cables;
	     i++)
		if (!strcmp(t->cables[i]->id, e->cable_id))
			return t->cables[i];
	return NULL;
}

/* Twins of f on its port that sit on another PCIe link: "a on link L". */
static int explain_twins_elsewhere(const Ring__Inventory *inv,
				   const Ring__NetInterface *f, char *buf,
				   size_t len)
{
	const Ring__PhysPort *p = explain_port(inv, f);
	int n = 0;

	buf[0] = '\0';
	for (size_t i = 0; p && i < p->n_interfaces; i++) {
		const Ring__NetInterface *g =
			explain_iface(inv, p->interfaces[i]);
		size_t used = strlen(buf);

		if (!g || g == f || !strcmp(g->pcie_link, f->pcie_link))
			continue;
		snprintf(buf + used, len - used, "%s%s on link %s",
			 n ? ", " : "", g->name, g->pcie_link);
		n++;
	}
	return n;
}

/* A link below its device's maximum, by what the agent found above it. */
static void explain_advise_narrow(struct explain_ceiling *c, const char *node,
				  const Ring__PcieLink *k)
{
	double gts = explain_gts(k->speed), max_gts = explain_gts(k->max_speed);
	double full = k->usable_gbps;

	if (!strcmp(k->narrow, "wired_narrow")) {
		explain_advise(c,
			       "%s PCIe link %s runs at %s because the port "
			       "above it (%s) is itself x%u: the board is "
			       "wired so, nothing fixes it; plan on %.1f Gbps "
			       "usable (computed)",
			       node, k->id, k->downtrained, k->upstream,
			       k->upstream_max_width, k->usable_gbps);
		return;
	}
	if (k->width && k->max_width > k->width)
		full *= (double)k->max_width / k->width;
	if (gts > 0 && max_gts > gts)
		full *= max_gts / gts;
	if (!strcmp(k->narrow, "downtrained"))
		explain_advise(c,
			       "%s PCIe link %s is trained %s though the port "
			       "above it (%s) supports x%u: reseat the card, "
			       "check the slot/riser and firmware link "
			       "settings, compare LnkCap/LnkSta of both ends "
			       "(lspci -vv); trained fully it gives about "
			       "%.1f Gbps usable (computed)",
			       node, k->id, k->downtrained, k->upstream,
			       k->upstream_max_width, full);
	else
		explain_advise(c,
			       "%s PCIe link %s runs at %s and the port above "
			       "it was not read: downtrained (reseat, check "
			       "the slot/riser and firmware link settings; "
			       "about %.1f Gbps usable once trained fully) or "
			       "wired narrow by the board (nothing fixes it): "
			       "compare LnkCap of both ends (lspci -vv)",
			       node, k->id, k->downtrained, full);
}

static void explain_advise_pcie(struct explain_ceiling *c,
				const Ring__Topology *t, const Ring__Edge *e,
				const Ring__Inventory *inv_a,
				const Ring__Inventory *inv_b, int at_index)
{
	const Ring__Inventory *invs[2] = {inv_a, inv_b};
	const char *nodes[2] = {e->a, e->b};
	const char *ifs[2] = {e->a_interface, e->b_interface};
	const Ring__Cable *cab = explain_cable(t, e);
	int said_twins = 0;

	for (int s = 0; s < 2; s++) {
		const Ring__NetInterface *f = explain_iface(invs[s], ifs[s]);
		const Ring__PcieLink *k = explain_link(invs[s], f);
		char twins[160];

		if (!k)
			continue;
		/* The coordinator's finding says it: quoted below. */
		if (*k->downtrained &&
		    !explain_finding(t, "pcie_downtrained", nodes[s], k->id) &&
		    !explain_finding(t, "pcie_wired_narrow", nodes[s], k->id) &&
		    !explain_finding(t, "pcie_narrow", nodes[s], k->id))
			explain_advise_narrow(c, nodes[s], k);
		/* Twins only where this end's link is the bound. */
		if (at_index < 0 || said_twins ||
		    strcmp(c->limits[at_index].what, "pcie_link") ||
		    c->limits[at_index].side != s)
			continue;
		if (explain_twins_elsewhere(invs[s], f, twins, sizeof(twins))) {
			said_twins = 1;
			if (cab && cab->port_gbps_a_to_b >= 0 &&
			    cab->port_gbps_b_to_a >= 0)
				explain_advise(
					c,
					"use both twins of the port (%s %s): "
					"the port step measured %.1f Gbps "
					"(worse direction, both function pairs "
					"at once)",
					nodes[s], twins,
					explain_worse(cab->port_gbps_a_to_b,
						      cab->port_gbps_b_to_a));
			else
				explain_advise(
					c,
					"use both twins of the port (%s %s): "
					"address the twin on both ends and "
					"survey again (no port step measured)",
					nodes[s], twins);
		} else if (!*k->downtrained) {
			explain_advise(
				c,
				"%s's host link %s is the bound: nothing "
				"on the cable raises it",
				nodes[s], k->id);
		}
	}
}

/* Counters that moved during the edge's tests: evidence of loss. */
static void explain_advise_counters(struct explain_ceiling *c,
				    const Ring__Edge *e)
{
	char buf[300] = "";
	size_t used = 0, shown = 0;

	for (size_t i = 0; i < e->n_counters && shown < 4; i++) {
		const Ring__CounterDelta *d = e->counters[i];

		/* Volume counters say who carried it, not loss. */
		if (strstr(d->name, "_data") || strstr(d->name, "pkts") ||
		    strstr(d->name, "packets") || strstr(d->name, "bytes"))
			continue;
		used += (size_t)snprintf(buf + used, sizeof(buf) - used,
					 "%s%s %s %s +%llu", shown ? ", " : "",
					 d->node, d->interface, d->name,
					 (unsigned long long)d->delta);
		shown++;
		if (used >= sizeof(buf))
			break;
	}
	if (shown)
		explain_advise(c,
			       "counters moved during its tests (measured): "
			       "%s; see docs/COUNTERS.md",
			       buf);
}

/* The usable rate of the PCIe links that the cable's functions at node
 * use, each link once; 0 when one is unknown. The links' ids into ids. */
static double explain_cable_pcie(const Ring__Topology *t, const Ring__Edge *e,
				 const Ring__Inventory *inv, const char *node,
				 char *ids, size_t len)
{
	const Ring__PcieLink *seen[8];
	size_t n = 0;
	double sum = 0;

	ids[0] = '\0';
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *x = t->edges[i];
		const char *ifname;
		const Ring__PcieLink *k;
		int dup = 0;

		if (!x->cable_id || strcmp(x->cable_id, e->cable_id))
			continue;
		ifname = !strcmp(x->a, node)   ? x->a_interface
			 : !strcmp(x->b, node) ? x->b_interface
					       : NULL;
		k = explain_link(inv, explain_iface(inv, ifname));
		if (!k || !(k->usable_gbps > 0))
			return 0;
		for (size_t j = 0; j < n; j++)
			dup |= seen[j] == k;
		if (dup || n == sizeof(seen) / sizeof(seen[0]))
			continue;
		seen[n++] = k;
		sum += k->usable_gbps;
		snprintf(ids + strlen(ids), len - strlen(ids), "%s%s %.1f",
			 n > 1 ? " + " : "", k->id, k->usable_gbps);
	}
	return sum;
}

/* Text into a bounded buffer, cut where it does not fit (a long node
 * name shortens the sentence, it never overruns). */
static void explain_fmt(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void explain_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* The port step against the port's line rate and the PCIe links. */
static void explain_port_step(const Ring__Topology *t, const Ring__Edge *e,
			      const Ring__Inventory *inv_a,
			      const Ring__Inventory *inv_b,
			      struct explain_ceiling *c)
{
	const Ring__Cable *cab = explain_cable(t, e);
	const struct explain_limit *port = NULL;
	const char *lname = NULL;
	char ids[2][160], lim[240] = "";
	double pcie[2], lowest = 0;

	c->port_gbps = -1;
	if (!cab || cab->port_gbps_a_to_b < 0 || cab->port_gbps_b_to_a < 0)
		return;
	c->port_gbps =
		explain_worse(cab->port_gbps_a_to_b, cab->port_gbps_b_to_a);
	for (unsigned i = 0; i < c->n_limits && !port; i++)
		if (strcmp(c->limits[i].what, "pcie_link"))
			port = &c->limits[i];
	if (port) {
		lowest = port->gbps;
		lname = "the port's line rate";
		snprintf(lim, sizeof(lim), "%.1f Gbps", port->gbps);
	}
	pcie[0] = explain_cable_pcie(t, e, inv_a, e->a, ids[0], sizeof(ids[0]));
	pcie[1] = explain_cable_pcie(t, e, inv_b, e->b, ids[1], sizeof(ids[1]));
	for (int s = 0; s < 2; s++)
		if (pcie[s] > 0 && (!lname || pcie[s] < lowest)) {
			lowest = pcie[s];
			explain_fmt(lim, sizeof(lim),
				    "%s's PCIe links %s = %.1f Gbps usable",
				    s ? e->b : e->a, ids[s], pcie[s]);
			lname = "the PCIe links' usable rate";
		}
	if (!lname) {
		snprintf(c->port_verdict, sizeof(c->port_verdict),
			 "port step %.1f Gbps (measured, %u function pairs "
			 "at once): no limit known",
			 c->port_gbps, cab->functions);
		return;
	}
	if (c->port_gbps > (1.0 + EXPLAIN_AT) * lowest)
		snprintf(c->port_verdict, sizeof(c->port_verdict),
			 "port step %.1f Gbps (measured, %u function pairs "
			 "at once) is above %s (%.0f%% of %s, computed): the "
			 "model understates it",
			 c->port_gbps, cab->functions, lname,
			 100.0 * c->port_gbps / lowest, lim);
	else if (c->port_gbps >= (1.0 - EXPLAIN_AT) * lowest)
		snprintf(c->port_verdict, sizeof(c->port_verdict),
			 "port step %.1f Gbps (measured, %u function pairs "
			 "at once) sits at %s (%.0f%% of %s)",
			 c->port_gbps, cab->functions, lname,
			 100.0 * c->port_gbps / lowest, lim);
	else
		snprintf(c->port_verdict, sizeof(c->port_verdict),
			 "port step %.1f Gbps (measured, %u function pairs "
			 "at once) sits below %s (%.0f%% of %s)",
			 c->port_gbps, cab->functions, lname,
			 100.0 * c->port_gbps / lowest, lim);
}

/* "the PCIe link's usable rate", ... for a verdict. */
static const char *explain_limit_name(const struct explain_limit *l)
{
	if (!strcmp(l->what, "pcie_link"))
		return "PCIe link's usable rate";
	if (!strcmp(l->what, "port"))
		return "port's line rate";
	return "port's line rate at the RDMA MTU";
}

/* What the limit's model assumes, which a figure above it shows wrong. */
static const char *explain_limit_model(const struct explain_limit *l)
{
	if (!strcmp(l->what, "pcie_link"))
		return "MPS, TLP and DLLP overhead";
	if (!strcmp(l->what, "port"))
		return "port speed, TCP/IP framing";
	return "port speed, RoCE framing at the path MTU";
}

void explain_ceiling(const Ring__Topology *t, const Ring__Edge *e,
		     const Ring__Inventory *inv_a, const Ring__Inventory *inv_b,
		     struct explain_ceiling *c)
{
	size_t nl = e->n_ladder;
	double lowest = 0;
	int low = -1;

	memset(c, 0, sizeof(*c));
	c->at = -1;
	c->understated = -1;
	explain_figure(e, c);
	explain_port_limit(c, e, inv_a, inv_b);
	explain_pcie_limit(c, 0, e->a, inv_a, e->a_interface);
	explain_pcie_limit(c, 1, e->b, inv_b, e->b_interface);
	if (t)
		explain_port_step(t, e, inv_a, inv_b, c);
	else
		c->port_gbps = -1;
	if (c->gbps < 0) {
		snprintf(c->verdict, sizeof(c->verdict),
			 "nothing to analyse: no bandwidth figure was "
			 "measured%s%s",
			 *e->error ? " (" : "", *e->error ? e->error : "");
		if (*e->error)
			strncat(c->verdict, ")",
				sizeof(c->verdict) - strlen(c->verdict) - 1);
		return;
	}
	for (unsigned i = 0; i < c->n_limits; i++) {
		double r = c->gbps / c->limits[i].gbps;

		if (low < 0 || c->limits[i].gbps < lowest) {
			low = (int)i;
			lowest = c->limits[i].gbps;
		}
		if (r >= 1.0 - EXPLAIN_AT && r <= 1.0 + EXPLAIN_AT &&
		    (c->at < 0 || c->limits[i].gbps < c->limits[c->at].gbps))
			c->at = (int)i;
	}
	if (low >= 0 && c->gbps > (1.0 + EXPLAIN_MODEL_SLACK) * lowest)
		c->understated = low;
	if (c->at >= 0 && c->understated == c->at) {
		const struct explain_limit *l = &c->limits[c->at];

		snprintf(c->verdict, sizeof(c->verdict),
			 "%.1f Gbps sits at the %s but above its computed "
			 "%.1f Gbps (%.0f%%): the model (%s) understates this "
			 "link; %s",
			 c->gbps, explain_limit_name(l), l->gbps,
			 100.0 * c->gbps / l->gbps, explain_limit_model(l),
			 l->text);
	} else if (c->at >= 0) {
		const struct explain_limit *l = &c->limits[c->at];
		const struct explain_limit *u =
			c->understated >= 0 ? &c->limits[c->understated] : NULL;
		char more[160] = "";

		/* A lower limit it beats is a model that understates. */
		if (u)
			snprintf(more, sizeof(more),
				 "; it is above the computed %.1f Gbps %s: the "
				 "model (%s) understates that",
				 u->gbps, explain_limit_name(u),
				 explain_limit_model(u));
		snprintf(c->verdict, sizeof(c->verdict),
			 "%.1f Gbps sits at the %s (%.0f%% of %.1f Gbps): "
			 "%s%s",
			 c->gbps, explain_limit_name(l),
			 100.0 * c->gbps / l->gbps, l->gbps, l->text, more);
	} else if (low >= 0 && c->gbps < lowest) {
		snprintf(c->verdict, sizeof(c->verdict),
			 "%.1f Gbps sits below every known limit: %.*f%% of "
			 "the lowest, %s",
			 c->gbps, c->gbps < 0.1 * lowest ? 1 : 0,
			 100.0 * c->gbps / lowest, c->limits[low].text);
	} else if (low >= 0) {
		/* Measured above every computed limit: the model was wrong,
		 * not the link. */
		const struct explain_limit *l = &c->limits[low];

		snprintf(c->verdict, sizeof(c->verdict),
			 "%.1f Gbps (measured) is above the computed %.1f Gbps "
			 "%s (%.0f%%): the model (%s) understates this link; "
			 "%s",
			 c->gbps, l->gbps, explain_limit_name(l),
			 100.0 * c->gbps / l->gbps, explain_limit_model(l),
			 l->text);
	} else {
		snprintf(c->verdict, sizeof(c->verdict),
			 "%.1f Gbps, and no limit is known (no inventory with "
			 "port speed or PCIe figures)",
			 c->gbps);
	}
	/* What would raise it. */
	if (c->at >= 0 && strcmp(c->limits[c->at].what, "pcie_link")) {
		const Ring__NetInterface *fa =
			explain_iface(inv_a, e->a_interface);

		if (c->rdma && strstr(c->limits[c->at].text, "active_mtu") &&
		    !strstr(c->limits[c->at].text, "active_mtu 4096"))
			explain_advise(c,
				       "raise the MTU on both ends (9000) so "
				       "that the RDMA path MTU can be 4096");
		else if (!c->rdma && fa && fa->mtu && fa->mtu < 9000)
			explain_advise(c, "raise the MTU on both ends (9000): "
					  "less framing per byte");
		explain_advise(c, "the port is full at this MTU: beyond that "
				  "only a faster port (or another cable) "
				  "raises it");
	}
	explain_advise_pcie(c, t, e, inv_a, inv_b, c->at);
	/* The ladder's top two steps, worse direction. */
	if (nl >= 2 && e->n_gbps_a_to_b == nl && e->n_gbps_b_to_a == nl) {
		const char *u =
			e->method_kind == RING__EDGE_METHOD__EDGE_METHOD_RDMA
				? "QPs"
				: "streams";
		double top = explain_worse(e->gbps_a_to_b[nl - 1],
					   e->gbps_b_to_a[nl - 1]),
		       prev = explain_worse(e->gbps_a_to_b[nl - 2],
					    e->gbps_b_to_a[nl - 2]);
		int rising = prev > 0 && top > prev * (1.0 + EXPLAIN_RISING);

		if (prev > 0)
			snprintf(c->ladder, sizeof(c->ladder),
				 "%s: %u %s %.1f Gbps, %u %s %.1f Gbps "
				 "(measured; %+.0f%%)",
				 rising ? "still rising" : "saturated",
				 e->ladder[nl - 2], u, prev, e->ladder[nl - 1],
				 u, top, (top / prev - 1.0) * 100.0);
		/* At a limit, more streams cannot pass it. */
		if (c->at < 0 && rising)
			explain_advise(
				c,
				"the ladder still rose %.0f%% from %u to "
				"%u %s (measured): more %s or channels "
				"may raise it",
				(top / prev - 1.0) * 100.0, e->ladder[nl - 2],
				e->ladder[nl - 1], u, u);
		else if (c->at < 0 && prev > 0)
			explain_advise(c,
				       "the ladder saturated (%u %s %.1f, %u "
				       "%s %.1f Gbps, measured): more %s will "
				       "not raise it",
				       e->ladder[nl - 2], u, prev,
				       e->ladder[nl - 1], u, top, u);
	}
	if (c->at < 0) {
		size_t before = c->n_advice;

		explain_advise_counters(c, e);
		if (c->n_advice == before)
			explain_advise(c, "no loss counter moved: look at the "
					  "hosts (CPU and IRQ placement, "
					  "PFC/ECN)");
	}
	/* What the coordinator already concluded about it. */
	for (int pass = 0; t && pass < 2; pass++) {
		Ring__Finding *const *v = pass ? t->anomalies : t->findings;
		size_t n = pass ? t->n_anomalies : t->n_findings;

		for (size_t i = 0; i < n; i++)
			if (explain_finding_names_edge(e, v[i]->text))
				explain_advise(c,
					       "finding %s (coordinator): %s",
					       v[i]->code, v[i]->text);
	}
}

/* ---- requests ---- */

/* Texts from agents on the operator's terminal: no control byte. */
static Ring__Envelope *explain_inventory(const char *sock, int timeout_ms,
					 const char *node)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__InventoryRequest ir = RING__INVENTORY_REQUEST__INIT;

	ir.node = (char *)node;
	req.body_case = RING__ENVELOPE__BODY_INVENTORY_REQUEST;
	req.inventory_request = &ir;
	return client_call(sock, timeout_ms, &req,
			   RING__ENVELOPE__BODY_INVENTORY_REPLY,
			   CLIENT_QUIET_ERROR);
}

/* ---- rendering ---- */

static void explain_opt(struct writer *w, const char *key, double v)
{
	if (v >= 0)
		writer_double(w, key, v, 2);
	else
		writer_none(w, key, "");
}

static void explain_doubles(struct writer *w, const char *key, const double *v,
			    size_t n)
{
	writer_list_start(w, key);
	for (size_t i = 0; i < n; i++)
		writer_double(w, NULL, v[i], 2);
	writer_list_end(w);
}

static void explain_lat(struct writer *w, const char *key,
			Ring__LatResult *const *lat, size_t n)
{
	char id[16];

	writer_table_start(w, key);
	for (size_t i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%u", lat[i]->size);
		writer_obj_start_named(w, id);
		writer_uint(w, "size", lat[i]->size);
		writer_double(w, "p50_us", lat[i]->p50_us, 2);
		writer_double(w, "p99_us", lat[i]->p99_us, 2);
		writer_obj_end(w);
	}
	writer_table_end(w);
}

struct explain_problems {
	const char *why[16];
	unsigned n;
};

static void explain_problem(struct explain_problems *p, const char *why)
{
	if (p->n < sizeof(p->why) / sizeof(p->why[0]))
		p->why[p->n++] = why;
}

static void explain_write_problems(struct writer *w,
				   const struct explain_problems *p)
{
	writer_list_start(w, "problems");
	for (unsigned i = 0; i < p->n; i++)
		writer_str(w, NULL, p->why[i]);
	writer_list_end(w);
}

static void explain_edge_figures(struct writer *w, const Ring__Edge *e,
				 uint64_t now_ms)
{
	/* Plain: -1 (none) left out, as blank texts are by the writer. */
	int plain = writer_get_format(w) == WRITER_PLAIN;

	writer_obj_start(w, "figures");
	writer_str(w, "method", e->method);
	render_time(w, "measured", e->measured_ms, "");
	writer_uint(w, "age_s",
		    e->measured_ms && now_ms > e->measured_ms
			    ? (now_ms - e->measured_ms) / 1000
			    : 0);
	writer_bool(w, "verified", e->verified);
	writer_list_start(w, "streams");
	for (size_t i = 0; i < e->n_ladder; i++)
		writer_uint(w, NULL, e->ladder[i]);
	writer_list_end(w);
	explain_doubles(w, "gbps_a_to_b_measured", e->gbps_a_to_b,
			e->n_gbps_a_to_b);
	explain_doubles(w, "gbps_b_to_a_measured", e->gbps_b_to_a,
			e->n_gbps_b_to_a);
	/* The lesser port speed and PCIe share: from the inventories. */
	writer_double(w, "nominal_gbps_computed", e->nominal_gbps, 1);
	explain_lat(w, "lat_measured", e->latency, e->n_latency);
	explain_opt(w, "rdma_write_gbps_a_to_b_measured",
		    e->rdma_write_gbps_a_to_b);
	explain_opt(w, "rdma_write_gbps_b_to_a_measured",
		    e->rdma_write_gbps_b_to_a);
	explain_opt(w, "rdma_read_gbps_a_reads_b_measured",
		    e->rdma_read_gbps_a_to_b);
	explain_opt(w, "rdma_read_gbps_b_reads_a_measured",
		    e->rdma_read_gbps_b_to_a);
	explain_lat(w, "rdma_write_lat_measured", e->rdma_write_lat,
		    e->n_rdma_write_lat);
	writer_str(w, "a_gid", e->a_gid);
	if (!plain || e->a_gid_index >= 0)
		writer_int(w, "a_gid_index", e->a_gid_index);
	writer_str(w, "b_gid", e->b_gid);
	if (!plain || e->b_gid_index >= 0)
		writer_int(w, "b_gid_index", e->b_gid_index);
	writer_str(w, "error", e->error);
	writer_str(w, "rdma_error", e->rdma_error);
	if (e->busy && *e->busy)
		writer_str(w, "busy_not_measured", e->busy);
	writer_str(w, "live_state", e->live_state);
	render_time(w, "live_since", e->live_since_ms, "");
	writer_str(w, "live_reason", e->live_reason);
	if (e->light_ms) {
		render_time(w, "light_check", e->light_ms, "");
		explain_opt(w, "light_lat_p50_us_measured",
			    e->light_lat_p50_us);
		writer_str(w, "light_error", e->light_error);
	}
	if (e->sample_ms) {
		render_time(w, "sample", e->sample_ms, "");
		explain_opt(w, "sample_gbps_a_to_b_measured",
			    e->sample_gbps_a_to_b);
		explain_opt(w, "sample_gbps_b_to_a_measured",
			    e->sample_gbps_b_to_a);
	}
	if (e->rechecked_ms) {
		render_time(w, "rechecked", e->rechecked_ms, "");
		writer_str(w, "recheck_reason", e->recheck_reason);
	}
	writer_uint(w, "self_bytes_last_hour_computed", e->self_bytes_hour);
	writer_obj_end(w);
}

static void explain_cable_section(struct writer *w, const Ring__Topology *t,
				  const Ring__Edge *e)
{
	const Ring__Cable *c = explain_cable(t, e);

	if (!c)
		return;
	writer_obj_start(w, "cable");
	writer_str(w, "id", c->id);
	writer_bool(w, "twin", e->twin);
	writer_uint(w, "functions", c->functions);
	/* The cable's is the lesser link speed its ports report (a shaped
	 * veth says 10 Gbps); the edge's figures carry the nominal the
	 * ceiling uses: plain shows this one only where it is known and not
	 * above that. */
	if (writer_get_format(w) != WRITER_PLAIN ||
	    (c->nominal_gbps > 0 &&
	     !(e->nominal_gbps > 0 && c->nominal_gbps > e->nominal_gbps)))
		writer_double(w, "nominal_gbps_computed", c->nominal_gbps, 1);
	/* Every function pair of the cable at once, at the survey. */
	render_time(w, "measured", t->surveyed_ms, "");
	explain_opt(w, "port_gbps_a_to_b_measured", c->port_gbps_a_to_b);
	explain_opt(w, "port_gbps_b_to_a_measured", c->port_gbps_b_to_a);
	writer_str(w, "error", c->error);
	writer_obj_end(w);
	writer_table_start(w, "ring_load");
	for (size_t i = 0; i < t->n_load_rounds; i++) {
		const Ring__LoadRound *r = t->load_rounds[i];

		for (size_t j = 0; j < r->n_edges; j++) {
			const Ring__LoadEdge *le = r->edges[j];

			if (strcmp(le->cable_id, c->id))
				continue;
			writer_obj_start_named(w, r->mode);
			writer_str(w, "mode", r->mode);
			render_time(w, "measured", t->surveyed_ms, "");
			explain_opt(w, "gbps_a_to_b_measured", le->gbps_a_to_b);
			explain_opt(w, "gbps_b_to_a_measured", le->gbps_b_to_a);
			writer_str(w, "error", le->error);
			writer_obj_end(w);
		}
	}
	writer_table_end(w);
}

static void explain_end(struct writer *w, const char *node,
			const Ring__InventoryReply *ir, const char *ifname,
			const char *address)
{
	const Ring__Inventory *inv = ir ? ir->inventory : NULL;
	const Ring__NetInterface *f = explain_iface(inv, ifname);
	const Ring__PcieLink *k = explain_link(inv, f);
	const Ring__PhysPort *p = explain_port(inv, f);
	const Ring__RdmaPort *rp = explain_rdma_port(inv, f);

	writer_obj_start_named(w, node);
	writer_str(w, "node", node);
	writer_str(w, "interface", ifname);
	writer_str(w, "address", address);
	if (ir && ir->status)
		/* The inventory is the agent's last report. */
		render_time(w, "inventory_seen", ir->status->last_seen_ms, "");
	if (!f) {
		writer_str(w, "inventory",
			   inv ? "no such interface" : "no inventory");
		writer_obj_end(w);
		return;
	}
	writer_str(w, "mac", f->mac);
	writer_uint(w, "mtu", f->mtu);
	writer_bool(w, "carrier", f->carrier);
	if (writer_get_format(w) != WRITER_PLAIN || f->speed_mbps >= 0)
		writer_int(w, "speed_mbps", f->speed_mbps);
	writer_uint(w, "nominal_speed_mbps", f->nominal_speed_mbps);
	writer_double(w, "nominal_gbps_computed", f->nominal_gbps, 1);
	writer_str(w, "driver", f->driver);
	writer_str(w, "pci_address", f->pci_address);
	/* Plain: no empty heading for a link or port the inventory lacks. */
	if (k || writer_get_format(w) != WRITER_PLAIN)
		writer_obj_start(w, "pcie_link");
	if (k) {
		writer_str(w, "id", k->id);
		writer_str(w, "speed", k->speed);
		writer_uint(w, "width", k->width);
		writer_str(w, "max_speed", k->max_speed);
		writer_uint(w, "max_width", k->max_width);
		writer_double(w, "usable_gbps_computed", k->usable_gbps, 1);
		writer_uint(w, "mps_bytes", k->mps_bytes);
		writer_str(w, "mps_source", k->mps_source);
		writer_str(w, "downtrained", k->downtrained);
		writer_str(w, "narrow", k->narrow);
		writer_list_start(w, "functions");
		for (size_t i = 0; i < k->n_interfaces; i++)
			writer_str(w, NULL, k->interfaces[i]);
		writer_list_end(w);
	}
	if (k || writer_get_format(w) != WRITER_PLAIN)
		writer_obj_end(w);
	if (p || writer_get_format(w) != WRITER_PLAIN)
		writer_obj_start(w, "port");
	if (p) {
		writer_str(w, "id", p->id);
		writer_str(w, "name", p->name);
		writer_double(w, "speed_gbps", p->speed_gbps, 1);
		writer_list_start(w, "twins");
		for (size_t i = 0; i < p->n_interfaces; i++)
			if (strcmp(p->interfaces[i], f->name))
				writer_str(w, NULL, p->interfaces[i]);
		writer_list_end(w);
		writer_str(w, "twins_differ", p->twins_differ);
	}
	if (p || writer_get_format(w) != WRITER_PLAIN)
		writer_obj_end(w);
	writer_str(w, "rdma_device", f->rdma_device);
	if (rp) {
		writer_str(w, "rdma_state", rp->state);
		writer_uint(w, "rdma_active_mtu", rp->active_mtu);
		writer_double(w, "rdma_active_speed_gbps",
			      rp->active_speed_gbps, 1);
		writer_table_start(w, "gids");
		for (size_t i = 0; i < rp->n_gids; i++) {
			char id[16];

			snprintf(id, sizeof(id), "%u", rp->gids[i]->index);
			writer_obj_start_named(w, id);
			writer_uint(w, "index", rp->gids[i]->index);
			writer_str(w, "gid", rp->gids[i]->gid);
			writer_str(w, "type", rp->gids[i]->type);
			writer_obj_end(w);
		}
		writer_table_end(w);
	}
	writer_obj_end(w);
}

struct explain_series {
	const char *kind, *direction;
	uint32_t param;
	double *v;
	size_t n;
	uint64_t last_ts;
	double last;
};

static int explain_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Per series: how many samples, min, median, max, last (all measured). */
static void explain_history(struct writer *w, const Ring__HistoryReply *h)
{
	struct explain_series s[EXPLAIN_SERIES_MAX];
	size_t ns = 0, left_out = 0;

	writer_obj_start(w, "history");
	if (!h) {
		writer_str(w, "error", "no history from the coordinator");
		writer_obj_end(w);
		return;
	}
	writer_uint(w, "samples", h->n_samples);
	writer_bool(w, "truncated", h->truncated);
	render_time(w, "first", h->n_samples ? h->samples[0]->ts_ms : 0, "");
	render_time(w, "last",
		    h->n_samples ? h->samples[h->n_samples - 1]->ts_ms : 0, "");
	for (size_t i = 0; i < h->n_samples; i++) {
		const Ring__HistorySample *x = h->samples[i];
		size_t j;

		for (j = 0; j < ns; j++)
			if (!strcmp(s[j].kind, x->kind) &&
			    !strcmp(s[j].direction, x->direction) &&
			    s[j].param == x->param)
				break;
		if (j == ns) {
			if (ns == EXPLAIN_SERIES_MAX) {
				left_out++;
				continue;
			}
			s[ns] = (struct explain_series){
				.kind = x->kind,
				.direction = x->direction,
				.param = x->param,
				.v = calloc(h->n_samples, sizeof(double)),
			};
			if (!s[ns].v) {
				left_out++;
				continue;
			}
			ns++;
		}
		s[j].v[s[j].n++] = x->value;
		s[j].last = x->value;
		s[j].last_ts = x->ts_ms;
	}
	writer_table_start(w, "series");
	for (size_t j = 0; j < ns; j++) {
		qsort(s[j].v, s[j].n, sizeof(double), explain_cmp_double);
		writer_obj_start(w, NULL);
		writer_str(w, "kind", s[j].kind);
		writer_str(w, "direction", s[j].direction);
		writer_uint(w, "param", s[j].param);
		writer_uint(w, "count", s[j].n);
		writer_double(w, "min_measured", s[j].v[0], 2);
		writer_double(w, "median_computed",
			      s[j].n % 2 ? s[j].v[s[j].n / 2]
					 : (s[j].v[s[j].n / 2 - 1] +
					    s[j].v[s[j].n / 2]) /
						   2,
			      2);
		writer_double(w, "max_measured", s[j].v[s[j].n - 1], 2);
		writer_double(w, "last_measured", s[j].last, 2);
		/* Plain: within 100 columns; the page's first and last say
		 * when. */
		if (writer_get_format(w) != WRITER_PLAIN)
			render_time(w, "last_at", s[j].last_ts, "");
		writer_obj_end(w);
		free(s[j].v);
	}
	writer_table_end(w);
	if (left_out)
		writer_uint(w, "samples_not_summarised", left_out);
	writer_obj_end(w);
}

static void explain_ceiling_section(struct writer *w,
				    const struct explain_ceiling *c)
{
	writer_obj_start(w, "ceiling");
	writer_str(w, "figure", c->figure);
	explain_opt(w, "gbps_measured", c->gbps);
	render_time(w, "measured", c->measured_ms, "");
	writer_table_start(w, "limits");
	for (unsigned i = 0; i < c->n_limits; i++) {
		writer_obj_start(w, NULL);
		writer_str(w, "limit", c->limits[i].what);
		writer_double(w, "gbps_computed", c->limits[i].gbps, 1);
		if (c->gbps >= 0)
			writer_double(w, "pct_computed",
				      100.0 * c->gbps / c->limits[i].gbps, 0);
		else
			writer_none(w, "pct_computed", "");
		writer_bool(w, "at", (int)i == c->at);
		writer_str(w, "inputs", c->limits[i].text);
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_str(w, "at", c->at >= 0 ? c->limits[c->at].what : "");
	/* The limit a measured figure shows the model understates. */
	writer_str(w, "model_understated",
		   c->understated >= 0 ? c->limits[c->understated].what : "");
	writer_str(w, "ladder_computed", c->ladder);
	writer_str(w, "verdict_computed", c->verdict);
	if (*c->port_verdict)
		writer_str(w, "port_step_verdict_computed", c->port_verdict);
	/* Plain: one wrapped line each (the texts hold commas). */
	writer_list_start(w, "raise_computed");
	for (unsigned i = 0; i < c->n_advice; i++) {
		if (writer_get_format(w) != WRITER_PLAIN) {
			writer_str(w, NULL, c->advice[i]);
			continue;
		}
		writer_obj_start(w, NULL);
		writer_str(w, "raise", c->advice[i]);
		writer_obj_end(w);
	}
	writer_list_end(w);
	writer_obj_end(w);
}

/* Findings and anomalies for which named() holds; whether a warning is
 * among them. */
static int explain_findings(struct writer *w, const Ring__Topology *t,
			    int (*named)(const char *, const void *),
			    const void *arg)
{
	int warn = 0;

	writer_table_start(w, "findings");
	for (int pass = 0; t && pass < 2; pass++) {
		Ring__Finding *const *v = pass ? t->anomalies : t->findings;
		size_t n = pass ? t->n_anomalies : t->n_findings;

		for (size_t i = 0; i < n; i++) {
			if (!named(v[i]->text, arg))
				continue;
			writer_obj_start(w, NULL);
			writer_str(w, "level",
				   *v[i]->level ? v[i]->level : "anomaly");
			writer_str(w, "code", v[i]->code);
			writer_str(w, "finding", v[i]->text);
			writer_obj_end(w);
			warn |= !strcmp(v[i]->level, "warn");
		}
	}
	writer_table_end(w);
	return warn;
}

/* Firing alerts for which named() holds; whether one is above info. */
static int explain_alerts(struct writer *w, const Ring__StatusReply *st,
			  int (*named)(const Ring__Alert *, const void *),
			  const void *arg)
{
	Ring__Alert *v[64];
	size_t n = 0;
	int bad = 0;

	for (size_t i = 0; i < st->n_alerts && n < 64; i++)
		if (st->alerts[i]->firing && named(st->alerts[i], arg)) {
			v[n++] = st->alerts[i];
			bad |= st->alerts[i]->severity !=
			       RING__SEVERITY__SEVERITY_INFO;
		}
	render_alerts(w, "alerts", v, n, 0);
	return bad;
}

struct explain_edge_arg {
	const Ring__Edge *e;
	char name[EXPLAIN_NAME_MAX], rev[EXPLAIN_NAME_MAX];
};

static int explain_finding_about_edge(const char *text, const void *arg)
{
	const struct explain_edge_arg *x = arg;

	return explain_finding_names_edge(x->e, text);
}

static int explain_alert_names_edge(const Ring__Alert *a, const void *arg)
{
	const struct explain_edge_arg *x = arg;

	return !strcmp(a->edge, x->name) || !strcmp(a->edge, x->rev) ||
	       !strcmp(a->subject, x->name) || !strcmp(a->subject, x->rev);
}

static int explain_finding_names_node(const char *text, const void *arg)
{
	return explain_text_names(text, arg) || explain_text_names_all(text);
}

static int explain_alert_names_node(const Ring__Alert *a, const void *arg)
{
	const char *node = arg;

	return !strcmp(a->node, node) || !strcmp(a->subject, node) ||
	       explain_text_names(a->edge, node);
}

static Ring__HistoryReply *explain_fetch_history(const char *sock,
						 int timeout_ms,
						 const char *name,
						 Ring__Envelope **hold)
{
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__HistoryRequest hr = RING__HISTORY_REQUEST__INIT;

	hr.edge = (char *)name;
	req.body_case = RING__ENVELOPE__BODY_HISTORY_REQUEST;
	req.history_request = &hr;
	*hold = client_call(sock, timeout_ms, &req,
			    RING__ENVELOPE__BODY_HISTORY_REPLY,
			    CLIENT_QUIET_ERROR);
	return *hold ? (*hold)->history_reply : NULL;
}

static int explain_edge(const char *sock, int timeout_ms,
			enum writer_format fmt, const Ring__StatusReply *st,
			const Ring__Edge *e)
{
	const Ring__Topology *t = st->topology;
	Ring__Envelope *ia = explain_inventory(sock, timeout_ms, e->a);
	Ring__Envelope *ib = explain_inventory(sock, timeout_ms, e->b);
	Ring__Envelope *hh = NULL;
	const Ring__InventoryReply *ra = ia ? ia->inventory_reply : NULL,
				   *rb = ib ? ib->inventory_reply : NULL;
	struct explain_edge_arg x = {.e = e};
	struct explain_problems pr = {0};
	struct explain_ceiling *c = calloc(1, sizeof(*c));
	Ring__HistoryReply *h;
	struct writer *w;
	int warn;

	if (!c) {
		perror("ringctl");
		frame_free(ia);
		frame_free(ib);
		return EXPLAIN_TROUBLE;
	}
	text_edge_msg_name(x.name, sizeof(x.name), e);
	if (e->twin)
		snprintf(x.rev, sizeof(x.rev), "%s-%s:%s", e->b, e->a,
			 e->b_interface);
	else
		snprintf(x.rev, sizeof(x.rev), "%s-%s", e->b, e->a);
	h = explain_fetch_history(sock, timeout_ms, x.name, &hh);
	explain_ceiling(t, e, ra ? ra->inventory : NULL,
			rb ? rb->inventory : NULL, c);
	if (*e->error)
		explain_problem(&pr, "the edge's test failed (error)");
	if (*e->rdma_error)
		explain_problem(&pr,
				"the edge's RDMA test failed (rdma_error)");
	if (e->live_state && (!strcmp(e->live_state, "down") ||
			      !strcmp(e->live_state, "degraded")))
		explain_problem(&pr, !strcmp(e->live_state, "down")
					     ? "the edge is down now"
					     : "the edge is degraded now");

	w = writer_new(stdout, fmt);
	writer_str(w, "explain", "edge");
	writer_str(w, "edge", x.name);
	{
		char ports[320];

		snprintf(ports, sizeof(ports), "%s %s -> %s %s", e->a,
			 e->a_interface, e->b, e->b_interface);
		writer_str(w, "ports", ports);
	}
	render_time(w, "surveyed", t->surveyed_ms, "");
	explain_edge_figures(w, e, st->now_ms);
	explain_cable_section(w, t, e);
	writer_list_start(w, "ends");
	explain_end(w, e->a, ra, e->a_interface, e->a_address);
	explain_end(w, e->b, rb, e->b_interface, e->b_address);
	writer_list_end(w);
	/* Measured by the agents around the edge's tests. */
	report_counters_list(w, "counters_measured", e->counters,
			     e->n_counters);
	explain_history(w, h);
	explain_ceiling_section(w, c);
	warn = explain_findings(w, t, explain_finding_about_edge, &x);
	if (warn)
		explain_problem(&pr, "a warning finding names it");
	if (explain_alerts(w, st, explain_alert_names_edge, &x))
		explain_problem(&pr, "an alert on it fires");
	explain_write_problems(w, &pr);
	writer_finish(w);
	free(c);
	frame_free(hh);
	frame_free(ia);
	frame_free(ib);
	return pr.n ? EXPLAIN_PROBLEM : EXPLAIN_OK;
}

static double explain_edge_top(const Ring__Edge *e)
{
	return explain_worse(explain_top(e->gbps_a_to_b, e->n_gbps_a_to_b),
			     explain_top(e->gbps_b_to_a, e->n_gbps_b_to_a));
}

static void explain_node_inventory(struct writer *w, const Ring__Inventory *inv)
{
	writer_obj_start(w, "inventory");
	if (!inv) {
		writer_str(w, "error", "the node never reported an inventory");
		writer_obj_end(w);
		return;
	}
	writer_str(w, "hostname", inv->hostname);
	writer_str(w, "kernel", inv->kernel);
	writer_str(w, "mgmt_interface", inv->mgmt_interface);
	if (inv->memory) {
		writer_uint(w, "mem_total_kib", inv->memory->total_kib);
		writer_uint(w, "mem_available_kib", inv->memory->available_kib);
	}
	writer_table_start(w, "interfaces");
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];
		char addr[64] = "";

		if (f->n_ipv4)
			snprintf(addr, sizeof(addr), "%s/%u",
				 f->ipv4[0]->address, f->ipv4[0]->prefix);
		writer_obj_start_named(w, f->name);
		writer_str(w, "name", f->name);
		writer_str(w, "ipv4", addr);
		writer_uint(w, "mtu", f->mtu);
		writer_bool(w, "carrier", f->carrier);
		writer_int(w, "speed_mbps", f->speed_mbps);
		writer_str(w, "pcie_link", f->pcie_link);
		writer_str(w, "port",
			   *f->phys_port_name ? f->phys_port_name : f->port_id);
		writer_str(w, "rdma", f->rdma_device);
		writer_double(w, "nominal_gbps_computed", f->nominal_gbps, 1);
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_table_start(w, "rdma_devices");
	for (size_t i = 0; i < inv->n_rdma_devices; i++) {
		const Ring__RdmaDevice *d = inv->rdma_devices[i];

		for (size_t j = 0; j < d->n_ports; j++) {
			const Ring__RdmaPort *p = d->ports[j];

			writer_obj_start(w, NULL);
			writer_str(w, "device", d->name);
			writer_uint(w, "port", p->port);
			writer_str(w, "state", p->state);
			writer_str(w, "netdev", p->netdev);
			writer_uint(w, "active_mtu", p->active_mtu);
			writer_uint(w, "gids", p->n_gids);
			writer_obj_end(w);
		}
	}
	writer_table_end(w);
	writer_table_start(w, "pcie_links");
	for (size_t i = 0; i < inv->n_pcie_links; i++) {
		const Ring__PcieLink *l = inv->pcie_links[i];

		writer_obj_start_named(w, l->id);
		writer_str(w, "id", l->id);
		writer_str(w, "speed", l->speed);
		writer_uint(w, "width", l->width);
		writer_double(w, "usable_gbps_computed", l->usable_gbps, 1);
		writer_uint(w, "mps_bytes", l->mps_bytes);
		writer_str(w, "mps_source", l->mps_source);
		writer_str(w, "downtrained", l->downtrained);
		writer_str(w, "narrow", l->narrow);
		writer_list_start(w, "functions");
		for (size_t k = 0; k < l->n_interfaces; k++)
			writer_str(w, NULL, l->interfaces[k]);
		writer_list_end(w);
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_table_start(w, "phys_ports");
	for (size_t i = 0; i < inv->n_phys_ports; i++) {
		const Ring__PhysPort *p = inv->phys_ports[i];

		writer_obj_start_named(w, p->id);
		writer_str(w, "id", p->id);
		writer_double(w, "speed_gbps", p->speed_gbps, 1);
		writer_double(w, "aggregate_gbps_computed", p->aggregate_gbps,
			      1);
		writer_list_start(w, "functions");
		for (size_t k = 0; k < p->n_interfaces; k++)
			writer_str(w, NULL, p->interfaces[k]);
		writer_list_end(w);
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_obj_end(w);
}

static int explain_node(const char *sock, int timeout_ms,
			enum writer_format fmt, const Ring__StatusReply *st,
			const Ring__NodeStatus *ns)
{
	const Ring__Topology *t = st->topology;
	Ring__Envelope *iv = explain_inventory(sock, timeout_ms, ns->node);
	struct explain_problems pr = {0};
	int edge_bad = 0;
	struct writer *w;

	if (strcmp(ns->state, "up"))
		explain_problem(&pr, "the node is not up");
	w = writer_new(stdout, fmt);
	writer_str(w, "explain", "node");
	writer_str(w, "node", ns->node);
	writer_obj_start(w, "status");
	writer_str(w, "state", ns->state);
	writer_bool(w, "expected", ns->expected);
	writer_str(w, "mgmt_address", ns->mgmt_address);
	writer_str(w, "agent_version", ns->agent_version);
	render_time(w, "connected_since", ns->connected_since_ms, "");
	render_time(w, "last_seen", ns->last_seen_ms, "");
	if (ns->down_since_ms) {
		render_time(w, "down_since", ns->down_since_ms, "");
		writer_str(w, "down_reason", ns->down_reason);
	}
	writer_uint(w, "mem_total_kib", ns->mem_total_kib);
	/* From the heartbeat, not the inventory. */
	writer_uint(w, "mem_available_kib", ns->mem_available_kib);
	writer_obj_end(w);
	explain_node_inventory(w, iv && iv->inventory_reply
					  ? iv->inventory_reply->inventory
					  : NULL);
	render_time(w, "surveyed", t ? t->surveyed_ms : 0, "");
	writer_table_start(w, "edges");
	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		char name[EXPLAIN_NAME_MAX], ports[320];
		int mine_a = !strcmp(e->a, ns->node);

		if (!mine_a && strcmp(e->b, ns->node))
			continue;
		text_edge_msg_name(name, sizeof(name), e);
		snprintf(ports, sizeof(ports), "%s %s -> %s %s", e->a,
			 e->a_interface, e->b, e->b_interface);
		writer_obj_start_named(w, name);
		writer_str(w, "edge", name);
		writer_str(w, "ports", ports);
		writer_str(w, "live", e->live_state);
		explain_opt(w, "gbps_measured", explain_edge_top(e));
		explain_opt(w, "rdma_write_gbps_measured",
			    explain_worse(e->rdma_write_gbps_a_to_b,
					  e->rdma_write_gbps_b_to_a));
		explain_opt(w, "lat_p50_us_measured",
			    e->n_latency ? e->latency[0]->p50_us : -1);
		render_time(w, "measured", e->measured_ms, "");
		writer_str(w, "error", *e->error ? e->error : e->rdma_error);
		writer_obj_end(w);
		edge_bad |=
			*e->error || *e->rdma_error ||
			(e->live_state && (!strcmp(e->live_state, "down") ||
					   !strcmp(e->live_state, "degraded")));
	}
	writer_table_end(w);
	if (edge_bad)
		explain_problem(&pr, "one of its edges failed or is down");
	if (explain_findings(w, t, explain_finding_names_node, ns->node))
		explain_problem(&pr, "a warning finding names it");
	if (explain_alerts(w, st, explain_alert_names_node, ns->node))
		explain_problem(&pr, "an alert on it fires");
	explain_write_problems(w, &pr);
	writer_finish(w);
	frame_free(iv);
	return pr.n ? EXPLAIN_PROBLEM : EXPLAIN_OK;
}

/* name is "a-b" for two known nodes with no edge between them (a diagonal
 * or a cable the survey did not find): say so, with what to explain
 * instead. 1 if it was, 0 if name is no such pair. */
static int explain_no_cable(const Ring__StatusReply *st, const char *name)
{
	const Ring__Topology *t = st->topology;
	const char *a = NULL, *b = NULL;
	int diagonal = 0, shown = 0;

	for (const char *dash = strchr(name, '-'); dash && !a;
	     dash = strchr(dash + 1, '-'))
		for (size_t i = 0; i < st->n_nodes && !a; i++) {
			const char *n = st->nodes[i]->node;

			if (strlen(n) != (size_t)(dash - name) ||
			    strncmp(n, name, (size_t)(dash - name)))
				continue;
			for (size_t j = 0; j < st->n_nodes; j++)
				if (j != i &&
				    !strcmp(st->nodes[j]->node, dash + 1)) {
					a = n;
					b = st->nodes[j]->node;
				}
		}
	if (!a)
		return 0;
	for (size_t i = 0; t && i < t->n_diagonals; i++) {
		const Ring__DiagonalCheck *d = t->diagonals[i];

		diagonal |= (!strcmp(d->a, a) && !strcmp(d->b, b)) ||
			    (!strcmp(d->a, b) && !strcmp(d->b, a));
	}
	fputs("ringctl: ", stderr);
	writer_fputs_safe(stderr, name);
	fputs(diagonal ? " is a diagonal: " : " is no edge: ", stderr);
	writer_fputs_safe(stderr, a);
	fputs(" and ", stderr);
	writer_fputs_safe(stderr, b);
	fputs(diagonal ? " are not ring neighbours, no cable joins them"
		       : " have no cable the last survey found",
	      stderr);
	fputs("; explain their edges instead (", stderr);
	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		char en[EXPLAIN_NAME_MAX];

		if (strcmp(e->a, a) && strcmp(e->b, a) && strcmp(e->a, b) &&
		    strcmp(e->b, b))
			continue;
		text_edge_msg_name(en, sizeof(en), e);
		fputs(shown++ ? ", " : "", stderr);
		writer_fputs_safe(stderr, en);
	}
	if (!shown)
		fputs("none published", stderr);
	fputs(") or the nodes, or run ringctl check for the ring and the rank "
	      "order\n",
	      stderr);
	return 1;
}

/* "nodes: n1, n2; edges: n1-n2, ...", EXPLAIN_LIST_MAX of each. */
static void explain_unknown(const Ring__StatusReply *st, const char *name)
{
	const Ring__Topology *t = st->topology;

	char shown[65];

	snprintf(shown, sizeof(shown), "%s", name);
	fputs("ringctl: no node or edge '", stderr);
	writer_fputs_safe(stderr, shown);
	fputs("'; nodes:", stderr);
	for (size_t i = 0; i < st->n_nodes && i < EXPLAIN_LIST_MAX; i++) {
		fputs(i ? ", " : " ", stderr);
		writer_fputs_safe(stderr, st->nodes[i]->node);
	}
	if (st->n_nodes > EXPLAIN_LIST_MAX)
		fputs(", ...", stderr);
	if (!st->n_nodes)
		fputs(" none", stderr);
	fputs("; edges:", stderr);
	for (size_t i = 0; t && i < t->n_edges && i < EXPLAIN_LIST_MAX; i++) {
		char e[EXPLAIN_NAME_MAX];

		text_edge_msg_name(e, sizeof(e), t->edges[i]);
		fputs(i ? ", " : " ", stderr);
		writer_fputs_safe(stderr, e);
	}
	if (t && t->n_edges > EXPLAIN_LIST_MAX)
		fputs(", ...", stderr);
	if (!t || !t->n_edges)
		fputs(t ? " none" : " none (no survey yet)", stderr);
	fputc('\n', stderr);
}

int explain_cmd(const char *sock, int timeout_ms, enum writer_format fmt,
		int argc, char **argv)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	const Ring__StatusReply *st;
	const char *name;
	int ret, idx;

	if (argc != 1 || argv[0][0] == '-') {
		fprintf(stderr, "ringctl: explain needs one EDGE (a-b) or NODE"
				"; usage: ringctl --help\n");
		return EXPLAIN_TROUBLE;
	}
	name = argv[0];
	if (!*name || strlen(name) >= EXPLAIN_NAME_MAX) {
		fprintf(stderr,
			"ringctl: explain: a name of 1 to %d characters\n",
			EXPLAIN_NAME_MAX - 1);
		return EXPLAIN_TROUBLE;
	}
	req.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	req.status_request = &sr;
	rep = client_call(sock, timeout_ms, &req,
			  RING__ENVELOPE__BODY_STATUS_REPLY, CLIENT_LOUD);
	if (!rep)
		return EXPLAIN_TROUBLE;
	st = rep->status_reply;
	for (size_t i = 0; i < st->n_nodes; i++)
		if (!strcmp(st->nodes[i]->node, name)) {
			ret = explain_node(sock, timeout_ms, fmt, st,
					   st->nodes[i]);
			frame_free(rep);
			return ret;
		}
	idx = explain_find_edge(st->topology, name);
	if (idx < 0) {
		if (!explain_no_cable(st, name))
			explain_unknown(st, name);
		frame_free(rep);
		return EXPLAIN_TROUBLE;
	}
	ret = explain_edge(sock, timeout_ms, fmt, st, st->topology->edges[idx]);
	frame_free(rep);
	return ret;
}
