/* The ceiling analysis of `ringctl explain`: an edge's measured figure
 * against the limits its hardware sets (common/hw_ceiling.c computes
 * them; this says them, with their inputs named), the port step against
 * the port and the PCIe links, and the advice. Pure: no I/O. */
#include "explain_ceiling.h"
#include "explain_inv.h"
#include "explain_match.h"
#include "hw_ceiling.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A ladder step this much above the one before: still rising. */
#define EXPLAIN_RISING 0.05

/* ---- the ceiling ---- */

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
			mtu = HW_ROCE_MTU_DEFAULT;
		eff = hw_framing(1, mtu);
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
			mtu = HW_MTU_DEFAULT;
		eff = hw_framing(0, mtu);
		snprintf(mtus, sizeof(mtus),
			 "MTU %u (%s %u, %s %u): TCP/IPv4 framing %.1f%%", mtu,
			 e->a, fa ? fa->mtu : 0, e->b, fb ? fb->mtu : 0,
			 eff * 100.0);
	}
	l = explain_add_limit(c, c->rdma ? "rdma_mtu" : "port", port * eff);
	if (!l)
		return;
	l->mtu = mtu;
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
	double full =
		hw_pcie_full(k->usable_gbps, k->width, k->max_width,
			     explain_gts(k->speed), explain_gts(k->max_speed));

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
	double lowest = 0, limits[EXPLAIN_LIMITS_MAX];
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
	for (unsigned i = 0; i < c->n_limits; i++)
		limits[i] = c->limits[i].gbps;
	hw_place(c->gbps, limits, c->n_limits, &c->at, &low, &c->understated);
	if (low >= 0)
		lowest = c->limits[low].gbps;
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

		/* The path MTU the limit was computed at, below RoCE's
		 * largest. */
		if (c->rdma && c->limits[c->at].mtu < HW_ROCE_MTU_MAX)
			explain_advise(c,
				       "raise the MTU on both ends (9000) so "
				       "that the RDMA path MTU can be 4096");
		else if (!c->rdma && fa && fa->mtu && fa->mtu < HW_MTU_JUMBO)
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
			if (explain_finding_names_edge(t, e, v[i]))
				explain_advise(c,
					       "finding %s (coordinator): %s",
					       v[i]->code, v[i]->text);
	}
}
