/* Findings from measured edge bandwidth, for any stream ladder: "top" is
 * the step with the largest stream count, "base" the smallest. Thresholds,
 * all fractions:
 *
 * - saturation: common/ladder.h's rule (shared with ringctl check
 *   nccl-env): per edge, the ratio of the base figure to the top figure,
 *   averaged over the directions measured at both steps; the median over
 *   edges below LADDER_SAT_LOW (80%) is reported, with the smallest
 *   count between base and top whose median ratio reaches
 *   LADDER_SAT_ENOUGH (90%) as the advised channel count (the top count
 *   when none does or none was measured). A one-count ladder says nothing.
 * - uniform ceiling: each edge's top figure is the lower of its two
 *   directions. With at least two such edges, all within
 *   FINDINGS_UNIFORM_SPREAD of each other ((max - min) / max <= 20%) and
 *   their median under FINDINGS_UNIFORM_UNDER (70%) of a known nominal
 *   rate, the limit is shared, not one cable's. The spread printed is
 *   max / min - 1, the way the reference cluster's notes state it (docs/REFERENCE.md).
 * - degraded edge: with at least three edges, one whose top figure is
 *   under FINDINGS_DEGRADED (70%) of the median of the other edges.
 * - asymmetric: an edge whose two top directions differ by more than
 *   FINDINGS_ASYM (20%) of the larger.
 *
 * Medians of an even count average the middle two. A figure < 0 (or NaN)
 * was not measured and takes no part. Order of findings: uniform ceiling,
 * degraded edges, asymmetric edges, saturation. */
#include "findings.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hw_ceiling.h"
#include "ladder.h"

#define FINDINGS_UNIFORM_SPREAD 0.20
#define FINDINGS_UNIFORM_UNDER 0.70
#define FINDINGS_DEGRADED 0.70
#define FINDINGS_ASYM 0.20

struct findings_out {
	struct finding *v;
	unsigned n, max;
	unsigned top; /* ladder step with the largest count */
	char top_what[64];
	int halves; /* FINDINGS_HALVES_* */
};

static int findings_measured(double g)
{
	return g >= 0.0; /* false for NaN too */
}

static struct finding *findings_add(struct findings_out *o, const char *code,
				    const char *level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static struct finding *findings_add(struct findings_out *o, const char *code,
				    const char *level, const char *fmt, ...)
{
	struct finding *f;
	va_list ap;

	if (o->n >= o->max)
		return NULL;
	f = &o->v[o->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->code, sizeof(f->code), "%.31s", code);
	snprintf(f->level, sizeof(f->level), "%.7s", level);
	va_start(ap, fmt);
	if (vsnprintf(f->text, sizeof(f->text), fmt, ap) < 0)
		f->text[0] = '\0';
	va_end(ap);
	return f;
}

/* f's subject (node, interface or port) and its text without them. */
static void findings_subject(struct finding *f, const char *node,
			     const char *iface, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void findings_subject(struct finding *f, const char *node,
			     const char *iface, const char *fmt, ...)
{
	va_list ap;

	if (!f)
		return;
	snprintf(f->node, sizeof(f->node), "%s", node);
	snprintf(f->iface, sizeof(f->iface), "%s", iface);
	va_start(ap, fmt);
	if (vsnprintf(f->gist, sizeof(f->gist), fmt, ap) < 0)
		f->gist[0] = '\0';
	va_end(ap);
}

/* A finding about one node: "NODE gist", the node as its subject. */
static struct finding *findings_add_node(struct findings_out *o,
					 const char *code, const char *level,
					 const char *node, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static struct finding *findings_add_node(struct findings_out *o,
					 const char *code, const char *level,
					 const char *node, const char *fmt, ...)
{
	char gist[sizeof(((struct finding *)0)->gist)];
	struct finding *f;
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(gist, sizeof(gist), fmt, ap) < 0)
		gist[0] = '\0';
	va_end(ap);
	f = findings_add(o, code, level, "%s %s", node, gist);
	findings_subject(f, node, "", "%s", gist);
	return f;
}

static int findings_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Median of an ascending array with the element at skip left out
 * (skip >= n: none left out). */
static double findings_median_skip(const double *v, unsigned n, unsigned skip)
{
	unsigned m = skip < n ? n - 1 : n;
	unsigned lo = (m - 1) / 2, hi = m / 2;
	double a = v[lo + (skip <= lo)], b = v[hi + (skip <= hi)];

	return (a + b) / 2.0;
}

static double findings_median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), findings_cmp);
	return findings_median_skip(v, n, n);
}

/* "1 stream", "16 streams". */
static void findings_streams(unsigned count, char *buf, size_t size)
{
	snprintf(buf, size, "%u stream%s", count, count == 1 ? "" : "s");
}

/* The edge's top figure: the lower direction; < 0 if unmeasured. */
static double findings_edge_top(const struct findings_edge *e, unsigned top)
{
	double a = e->gbps[0][top], b = e->gbps[1][top];

	if (!findings_measured(a))
		return findings_measured(b) ? b : -1.0;
	if (!findings_measured(b))
		return a;
	return a < b ? a : b;
}

static void findings_edge_name(const struct findings_edge *e, unsigned i,
			       char *buf, size_t size)
{
	if (e->name)
		snprintf(buf, size, "%s", e->name);
	else
		snprintf(buf, size, "#%u", i + 1);
}

static void findings_uniform(const struct findings_edge *edges, unsigned n,
			     double *tmp, struct findings_out *o)
{
	double lo = 0.0, hi = 0.0, nominal = -1.0, med, pct;
	unsigned m = 0;
	int same_nominal = 1;
	const char *check;
	struct finding *f;

	for (unsigned i = 0; i < n; i++) {
		double top = findings_edge_top(&edges[i], o->top);

		if (top < 0.0)
			continue;
		if (!(edges[i].nominal_gbps > 0.0))
			return; /* "well under nominal" needs the nominal */
		if (nominal >= 0.0 && edges[i].nominal_gbps != nominal)
			same_nominal = 0;
		nominal = edges[i].nominal_gbps;
		if (!m || top < lo)
			lo = top;
		if (!m || top > hi)
			hi = top;
		tmp[m++] = top / edges[i].nominal_gbps;
	}
	if (m < 2 || hi <= 0.0 || lo <= 0.0 ||
	    (hi - lo) / hi > FINDINGS_UNIFORM_SPREAD)
		return;
	pct = findings_median(tmp, m);
	if (pct >= FINDINGS_UNIFORM_UNDER)
		return;
	m = 0;
	for (unsigned i = 0; i < n; i++) {
		double top = findings_edge_top(&edges[i], o->top);

		if (top >= 0.0)
			tmp[m++] = top;
	}
	med = findings_median(tmp, m);
	/* A correctly dual-addressed cluster is not told to address its
	 * halves: the inventories' port model says whether any is unused. */
	switch (o->halves) {
	case FINDINGS_HALVES_USED:
		check = "check the host link (PCIe) and PFC/ECN (every cabled "
			"NIC half is addressed)";
		break;
	case FINDINGS_HALVES_UNUSED:
		check = "check the host link (PCIe), PFC/ECN, and the unused "
			"NIC halves (see the port findings)";
		break;
	default:
		check = "check the host link (PCIe), PFC/ECN, and unused NIC "
			"halves";
	}
	if (same_nominal)
		f = findings_add(
			o, "uniform_ceiling", "warn",
			"every edge tops out at %.0f%% of its %.0f Gbps "
			"nominal (%.1f Gbps median, spread %.0f%%): a "
			"uniform ceiling - a link-layer or host limit, "
			"not a bad cable; %s",
			pct * 100.0, nominal, med, (hi / lo - 1.0) * 100.0,
			check);
	else
		f = findings_add(
			o, "uniform_ceiling", "warn",
			"every edge tops out at %.0f%% of its nominal "
			"rate (%.1f Gbps median, spread %.0f%%): a "
			"uniform ceiling - a link-layer or host limit, "
			"not a bad cable; %s",
			pct * 100.0, med, (hi / lo - 1.0) * 100.0, check);
	if (f) {
		f->ring = 1;
		f->gbps = med;
		f->reference_gbps = same_nominal ? nominal : 0.0;
	}
}

static void findings_degraded(const struct findings_edge *edges, unsigned n,
			      double *tmp, struct findings_out *o)
{
	unsigned m = 0;

	for (unsigned i = 0; i < n; i++) {
		double top = findings_edge_top(&edges[i], o->top);

		if (top >= 0.0)
			tmp[m++] = top;
	}
	if (m < 3)
		return;
	qsort(tmp, m, sizeof(*tmp), findings_cmp);
	for (unsigned i = 0; i < n; i++) {
		double top = findings_edge_top(&edges[i], o->top), others;
		unsigned j = 0;
		char name[64];
		struct finding *f;

		if (top < 0.0)
			continue;
		/* Any sample equal to this edge's stands for it. */
		while (j < m && tmp[j] != top)
			j++;
		others = findings_median_skip(tmp, m, j);
		if (!(top < FINDINGS_DEGRADED * others))
			continue;
		findings_edge_name(&edges[i], i, name, sizeof(name));
		f = findings_add(
			o, "degraded_edge", "warn",
			"edge %s tops out at %.1f Gbps with %s, %.0f%% "
			"of the other edges' median %.1f Gbps: a degraded "
			"edge; check its cable, both ports and both hosts",
			name, top, o->top_what,
			others > 0 ? top / others * 100.0 : 0.0, others);
		if (f && edges[i].name) {
			snprintf(f->edge, sizeof(f->edge), "%s", name);
			f->gbps = top;
			f->reference_gbps = others;
		}
	}
}

static void findings_asymmetric(const struct findings_edge *edges, unsigned n,
				struct findings_out *o)
{
	for (unsigned i = 0; i < n; i++) {
		const struct findings_edge *e = &edges[i];
		double a = e->gbps[0][o->top];
		double b = e->gbps[1][o->top];
		double hi = a > b ? a : b, lo = a > b ? b : a;
		char name[64];
		struct finding *f;

		if (!findings_measured(a) || !findings_measured(b) ||
		    hi <= 0.0 || hi - lo <= FINDINGS_ASYM * hi)
			continue;
		findings_edge_name(e, i, name, sizeof(name));
		f = findings_add(
			o, "asymmetric", "warn",
			"edge %s is asymmetric: %s %.1f Gbps, %s %.1f Gbps "
			"with %s (the slower direction %.0f%% below "
			"the faster); check both ends' port settings and "
			"PFC/ECN",
			name, e->dir_name[0] ? e->dir_name[0] : "forward", a,
			e->dir_name[1] ? e->dir_name[1] : "reverse", b,
			o->top_what, (hi - lo) / hi * 100.0);
		if (f && e->name) {
			snprintf(f->edge, sizeof(f->edge), "%s", name);
			f->gbps = lo;
			f->reference_gbps = hi;
		}
	}
}

static void findings_saturation(const struct findings_ladder *ladder,
				const struct findings_edge *edges, unsigned n,
				struct findings_out *o)
{
	struct ladder_edge *le = calloc(n, sizeof(*le));
	char base_what[32], top_what[32], mids[160] = "";
	struct ladder_sat sat;
	size_t w = 0;

	if (!le)
		return;
	for (unsigned i = 0; i < n; i++)
		for (int d = 0; d < 2; d++) {
			le[i].gbps[d] = edges[i].gbps[d];
			le[i].n[d] = ladder->n;
		}
	if (ladder_saturation(ladder->streams, ladder->n, le, n, &sat) < 0 ||
	    !sat.saturates) {
		free(le);
		return;
	}
	free(le);
	for (unsigned k = 0; k < sat.n_mid && w < sizeof(mids); k++)
		w += (size_t)snprintf(mids + w, sizeof(mids) - w,
				      "%s%u streams reach %.0f%%",
				      w ? ", " : ": ", sat.mid[k].streams,
				      sat.mid[k].ratio * 100.0);
	findings_streams(sat.first.streams, base_what, sizeof(base_what));
	findings_streams(ladder->streams[sat.top], top_what, sizeof(top_what));
	findings_add(o, "saturation", "info",
		     "%s reach%s %.0f%% of %s (median over %u edge%s); use at "
		     "least %u channels%s",
		     base_what, sat.first.streams == 1 ? "es" : "",
		     sat.first.ratio * 100.0, top_what, sat.first.edges,
		     sat.first.edges == 1 ? "" : "s", sat.advised.streams,
		     mids);
}

unsigned findings_compute(const struct findings_ladder *ladder,
			  const struct findings_edge *edges, unsigned n,
			  struct finding *out, unsigned max)
{
	struct findings_out o = {.v = out, .n = 0, .max = out ? max : 0};
	double *tmp;

	if (!ladder || !ladder->n || ladder->n > FINDINGS_LADDER_MAX ||
	    !edges || !n || !o.max)
		return 0;
	for (unsigned s = 1; s < ladder->n; s++)
		if (ladder->streams[s] > ladder->streams[o.top])
			o.top = s;
	o.halves = ladder->halves;
	if (ladder->top_what && *ladder->top_what)
		snprintf(o.top_what, sizeof(o.top_what), "%s",
			 ladder->top_what);
	else
		findings_streams(ladder->streams[o.top], o.top_what,
				 sizeof(o.top_what));
	tmp = calloc(n, sizeof(*tmp));
	if (!tmp) {
		errno = ENOMEM;
		return 0;
	}
	findings_uniform(edges, n, tmp, &o);
	findings_degraded(edges, n, tmp, &o);
	findings_asymmetric(edges, n, &o);
	findings_saturation(ladder, edges, n, &o);
	free(tmp);
	return o.n;
}

/* ---------------------------------------------------------------- hw */

static const Ring__NetInterface *fhw_iface(const Ring__Inventory *inv,
					   const char *name)
{
	for (size_t i = 0; inv && i < inv->n_interfaces; i++)
		if (!strcmp(inv->interfaces[i]->name, name))
			return inv->interfaces[i];
	return NULL;
}

static const Ring__PcieLink *fhw_link(const Ring__Inventory *inv,
				      const char *id)
{
	for (size_t i = 0; *id && i < inv->n_pcie_links; i++)
		if (!strcmp(inv->pcie_links[i]->id, id))
			return inv->pcie_links[i];
	return NULL;
}

static int fhw_data(const Ring__NetInterface *f)
{
	return f && !f->management;
}

/* "a and b", "a, b and c" of a port's functions that pass keep(). */
static unsigned fhw_names(const Ring__Inventory *inv, char *const *names,
			  size_t n, int (*keep)(const Ring__NetInterface *),
			  char *buf, size_t len)
{
	unsigned k = 0, total = 0;

	for (size_t i = 0; i < n; i++)
		total += keep(fhw_iface(inv, names[i])) != 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t w = strlen(buf);

		if (!keep(fhw_iface(inv, names[i])))
			continue;
		k++;
		snprintf(buf + w, len - w, "%s%s",
			 k == 1	      ? ""
			 : k == total ? " and "
				      : ", ",
			 names[i]);
	}
	return k;
}

static int fhw_used(const Ring__NetInterface *f)
{
	return f && f->carrier && f->n_ipv4 > 0;
}

static int fhw_idle(const Ring__NetInterface *f)
{
	return f && f->up_no_address;
}

static const char *fhw_port_label(const Ring__PhysPort *p)
{
	return *p->name ? p->name : p->id;
}

/* The port a function belongs to, NULL if none is listed. */
static const Ring__PhysPort *fhw_port_of(const Ring__Inventory *inv,
					 const Ring__NetInterface *f)
{
	for (size_t i = 0; *f->port_id && i < inv->n_phys_ports; i++)
		if (!strcmp(inv->phys_ports[i]->id, f->port_id))
			return inv->phys_ports[i];
	return NULL;
}

/* A warning about one port of a node: "NODE port LABEL: gist", its
 * subject as fields. */
static void fhw_port_finding(struct findings_out *o, const char *code,
			     const struct findings_hw_node *nd,
			     const Ring__PhysPort *p, const char *gist)
{
	struct finding *f;
	char label[48];

	snprintf(label, sizeof(label), "port %s", fhw_port_label(p));
	f = findings_add(o, code, "warn", "%s %s: %s", nd->name, label, gist);
	findings_subject(f, nd->name, label, "%s", gist);
	for (size_t i = 0; f && i < p->n_interfaces; i++)
		findings_name_iface(f, p->interfaces[i]);
}

/* unaddressed_port's advice, in its text and its gist alike. */
#define FHW_HALF_ADVICE                                                        \
	"is the other PCIe half of a cabled port, address and use it too, "    \
	"or that port stays near half its rate"

static void fhw_ports(const struct findings_hw_node *nd, struct findings_out *o)
{
	const Ring__Inventory *inv = nd->inv;

	for (size_t i = 0; i < inv->n_phys_ports; i++) {
		const Ring__PhysPort *p = inv->phys_ports[i];
		char idle[160], used[160], cap[64] = "near half of its rate";
		char gist[640]; /* cut to the finding's on the way in */
		unsigned ni, nu;

		nu = fhw_names(inv, p->interfaces, p->n_interfaces, fhw_used,
			       used, sizeof(used));
		ni = fhw_names(inv, p->interfaces, p->n_interfaces, fhw_idle,
			       idle, sizeof(idle));
		if (nu && ni) {
			if (p->speed_gbps > 0.0)
				snprintf(cap, sizeof(cap),
					 "near %s of %.0f Gbps",
					 nu * 2 == nu + ni ? "half"
					 : nu == 1	   ? "one share"
							   : "part",
					 p->speed_gbps);
			snprintf(gist, sizeof(gist),
				 "%s %s carrier but no address; %s %s the "
				 "cable alone, capping it %s; address and use "
				 "%s too",
				 idle, ni == 1 ? "has" : "have", used,
				 nu == 1 ? "carries" : "carry", cap,
				 ni == 1 ? "it" : "them");
			fhw_port_finding(o, "port_half_unused", nd, p, gist);
		}
		if (*p->twins_differ) {
			snprintf(gist, sizeof(gist),
				 "its functions differ (%s): they should be "
				 "configured alike",
				 p->twins_differ);
			fhw_port_finding(o, "twins_differ", nd, p, gist);
		}
	}
	/* Carrier, no address, and no addressed twin: the pre-model
	 * advice, for a function alone on its port. */
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];
		const Ring__PhysPort *p;
		char used[160];

		if (!fhw_data(f) || !f->up_no_address)
			continue;
		p = fhw_port_of(inv, f);
		if (p && fhw_names(inv, p->interfaces, p->n_interfaces,
				   fhw_used, used, sizeof(used)))
			continue;
		findings_subject(
			findings_add(o, "unaddressed_port", "info",
				     "%s %s has carrier but no address%s%s%s: "
				     "if it " FHW_HALF_ADVICE,
				     nd->name, f->name,
				     *f->pci_address ? " (PCI " : "",
				     f->pci_address,
				     *f->pci_address ? ")" : ""),
			nd->name, f->name,
			"carrier but no address%s%s%s: if it " FHW_HALF_ADVICE,
			*f->pci_address ? " (PCI " : "", f->pci_address,
			*f->pci_address ? ")" : "");
	}
}

/* Does the node use f to face a neighbour? Addressed with carrier, and
 * heard a neighbour when the node has a neighbour table (beacons go out
 * on unaddressed twins too: hearing alone says nothing of use). */
static int fhw_facing(const struct findings_hw_node *nd,
		      const Ring__NetInterface *f)
{
	if (!fhw_data(f) || !f->carrier || !f->n_ipv4)
		return 0;
	if (!nd->nbrs || !nd->nbrs->n_neighbours)
		return 1;
	for (size_t i = 0; i < nd->nbrs->n_neighbours; i++)
		if (!strcmp(nd->nbrs->neighbours[i]->local_interface, f->name))
			return 1;
	return 0;
}

/* A link below its device's maximum, by what the agent found above it
 * (PcieLink.narrow): downtrained (both ends support more: something to
 * fix), wired narrow (the upstream port's own maximum: the board is built
 * so) or not known (no upstream port read; an agent before the field). */
static void fhw_narrow(const struct findings_hw_node *nd,
		       const Ring__PcieLink *l, struct findings_out *o)
{
	const char *fn = l->n_interfaces ? l->interfaces[0] : "";
	struct finding *f;
	char dev[32];

	if (!*l->downtrained)
		return;
	/* lspci wants a function: the first one's PCI address. */
	snprintf(dev, sizeof(dev), "%s.0", l->id);
	if (!strcmp(l->narrow, "wired_narrow"))
		f = findings_add_node(
			o, "pcie_wired_narrow", "info", nd->name,
			"PCIe link %s (%s) runs at %s because the "
			"port above it (%s) is itself x%u, %s: the board "
			"is wired so and nothing fixes it; plan on its "
			"%.1f Gbps usable, shared by its functions",
			l->id, fn, l->downtrained, l->upstream,
			l->upstream_max_width, l->upstream_max_speed,
			l->usable_gbps);
	else if (!strcmp(l->narrow, "downtrained"))
		f = findings_add_node(
			o, "pcie_downtrained", "warn", nd->name,
			"PCIe link %s (%s) trained at %s though both "
			"ends support more (port above %s: x%u): %.1f "
			"Gbps usable, shared; reseat the card, check the "
			"slot/riser and firmware link settings, compare "
			"LnkCap/LnkSta of both ends (lspci -vv -s %s and "
			"-s %s)",
			l->id, fn, l->downtrained, l->upstream,
			l->upstream_max_width, l->usable_gbps, dev,
			l->upstream);
	else
		f = findings_add_node(
			o, "pcie_narrow", "warn", nd->name,
			"PCIe link %s (%s) runs at %s: %.1f Gbps "
			"usable, shared by its functions; the port above "
			"it was not read, so it is downtrained (reseat; "
			"check slot/riser, firmware link settings) or "
			"wired narrow (nothing to fix): compare LnkCap of "
			"both ends (lspci -vv)",
			l->id, fn, l->downtrained, l->usable_gbps);
	if (f) {
		snprintf(f->pcie_link, sizeof(f->pcie_link), "%s", l->id);
		f->gbps = l->usable_gbps;
		for (size_t i = 0; i < l->n_interfaces; i++)
			findings_name_iface(f, l->interfaces[i]);
	}
}

static void fhw_links(const struct findings_hw_node *nd, struct findings_out *o)
{
	const Ring__Inventory *inv = nd->inv;
	const char *link = NULL, *port = NULL;
	char facing[160] = "", other[160] = "", usable[64] = "";
	const Ring__PcieLink *l, *idle = NULL;
	struct finding *f;
	unsigned nf = 0;
	int ports = 0;

	for (size_t i = 0; i < inv->n_pcie_links; i++)
		fhw_narrow(nd, inv->pcie_links[i], o);
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];
		size_t w = strlen(facing);

		if (!fhw_facing(nd, f))
			continue;
		if (!*f->pcie_link)
			return;
		if (!link)
			link = f->pcie_link;
		else if (strcmp(link, f->pcie_link))
			return; /* spread over links: fine */
		if (!port)
			port = f->port_id;
		else if (strcmp(port, f->port_id))
			ports = 1;
		nf++;
		snprintf(facing + w, sizeof(facing) - w, "%s%s",
			 w ? " and " : "", f->name);
	}
	if (nf < 2 || !ports)
		return;
	for (size_t i = 0; i < inv->n_pcie_links && !idle; i++) {
		l = inv->pcie_links[i];
		if (strcmp(l->id, link))
			for (size_t j = 0; j < l->n_interfaces && !idle; j++) {
				const Ring__NetInterface *f =
					fhw_iface(inv, l->interfaces[j]);

				if (fhw_data(f) && f->carrier)
					idle = l;
			}
	}
	if (!idle)
		return;
	for (size_t j = 0; j < idle->n_interfaces; j++) {
		size_t w = strlen(other);

		snprintf(other + w, sizeof(other) - w, "%s%s", w ? ", " : "",
			 idle->interfaces[j]);
	}
	l = fhw_link(inv, link);
	/* The usable rate only where the agent could compute it. */
	if (l && l->usable_gbps > 0)
		snprintf(usable, sizeof(usable),
			 " (%.1f Gbps usable for both cables)", l->usable_gbps);
	f = findings_add(o, "one_pcie_link", "warn",
			 "%s: the neighbour-facing functions %s share PCIe "
			 "link %s%s while link %s (%s) carries none: use the "
			 "twins on %s too",
			 nd->name, facing, link, usable, idle->id, other,
			 idle->id);
	/* No gist: the text names interfaces of its own. */
	if (f) {
		snprintf(f->node, sizeof(f->node), "%s", nd->name);
		snprintf(f->pcie_link, sizeof(f->pcie_link), "%s", link);
		f->gbps = l && l->usable_gbps > 0 ? l->usable_gbps : 0.0;
		for (size_t i = 0; i < inv->n_interfaces; i++)
			if (fhw_facing(nd, inv->interfaces[i]))
				findings_name_iface(f,
						    inv->interfaces[i]->name);
		for (size_t j = 0; j < idle->n_interfaces; j++)
			findings_name_iface(f, idle->interfaces[j]);
	}
}

/* The subject is the node's function f; the gist names its RDMA port
 * (the grouped line says "NODES IFACE: gist"). */
static void fhw_rdma_mtu_add(struct findings_out *o,
			     const struct findings_hw_node *nd,
			     const Ring__RdmaDevice *d, const Ring__RdmaPort *p,
			     const Ring__NetInterface *f)
{
	struct finding *x;
	char rest[240];

	snprintf(rest, sizeof(rest),
		 "active_mtu %u, under RoCE's %u (netdev MTU %u): raise the "
		 "MTU on both ends of the cable (9000) so that the path MTU "
		 "can be 4096",
		 p->active_mtu, HW_ROCE_MTU_MAX, f->mtu);
	x = findings_add(o, "rdma_mtu", "warn", "%s %s port %u (%s): %s",
			 nd->name, d->name, p->port, f->name, rest);
	findings_subject(x, nd->name, f->name, "%s port %u: %s", d->name,
			 p->port, rest);
	if (x)
		x->mtu = p->active_mtu;
}

static void fhw_rdma_mtu(const struct findings_hw_node *nd,
			 struct findings_out *o)
{
	const Ring__Inventory *inv = nd->inv;

	for (size_t i = 0; i < inv->n_rdma_devices; i++) {
		const Ring__RdmaDevice *d = inv->rdma_devices[i];

		for (size_t j = 0; j < d->n_ports; j++) {
			const Ring__RdmaPort *p = d->ports[j];
			const Ring__NetInterface *f = fhw_iface(inv, p->netdev);

			if (!fhw_data(f) || !f->carrier ||
			    strcmp(p->state, "ACTIVE") ||
			    strcmp(p->link_layer, "Ethernet") ||
			    !p->active_mtu || p->active_mtu >= HW_ROCE_MTU_MAX)
				continue;
			fhw_rdma_mtu_add(o, nd, d, p, f);
		}
	}
}

/* One IPv4 subnet of a data function, for finding shared subnets. */
struct fhw_net {
	uint32_t net;
	unsigned prefix;
	size_t iface;
};

static int fhw_net_cmp(const void *pa, const void *pb)
{
	const struct fhw_net *a = pa, *b = pb;

	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	if (a->net != b->net)
		return a->net < b->net ? -1 : 1;
	return (a->iface > b->iface) - (a->iface < b->iface);
}

/* Does f answer ARP only for its own addresses and announce only them? */
static int fhw_arp_ok(const Ring__NetInterface *f)
{
	/* -1: not known, nothing to say. */
	if (f->arp_ignore < 0 || f->arp_announce < 0)
		return 1;
	return f->arp_ignore != 0 && f->arp_announce >= 2;
}

/* Sorted by subnet, so that a node of 256 interfaces of 16 addresses
 * each costs one sort, not every pair of addresses. One finding per
 * shared subnet, naming its first two functions. */
static void fhw_arp(const struct findings_hw_node *nd, struct findings_out *o)
{
	const Ring__Inventory *inv = nd->inv;
	struct fhw_net *v;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < inv->n_interfaces; i++)
		if (fhw_data(inv->interfaces[i]))
			cap += inv->interfaces[i]->n_ipv4;
	if (cap < 2)
		return;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];

		for (size_t k = 0; fhw_data(f) && k < f->n_ipv4; k++) {
			struct in_addr a;
			unsigned p = f->ipv4[k]->prefix;

			if (p > 32 ||
			    inet_pton(AF_INET, f->ipv4[k]->address, &a) != 1)
				continue;
			v[n].prefix = p;
			v[n].net = ntohl(a.s_addr) & (p ? ~0u << (32 - p) : 0);
			v[n].iface = i;
			n++;
		}
	}
	qsort(v, n, sizeof(*v), fhw_net_cmp);
	for (size_t g = 0, e; g < n; g = e) {
		const Ring__NetInterface *a = inv->interfaces[v[g].iface], *b;
		struct finding *f;
		size_t second = n;
		char net[INET_ADDRSTRLEN];
		struct in_addr in;
		int bad = !fhw_arp_ok(a);

		for (e = g + 1; e < n && v[e].prefix == v[g].prefix &&
				v[e].net == v[g].net;
		     e++) {
			if (v[e].iface == v[g].iface)
				continue;
			if (second == n)
				second = e;
			if (!fhw_arp_ok(inv->interfaces[v[e].iface]))
				bad = 1;
		}
		if (second == n || !bad)
			continue;
		b = inv->interfaces[v[second].iface];
		in.s_addr = htonl(v[g].net);
		if (!inet_ntop(AF_INET, &in, net, sizeof(net)))
			continue;
		f = findings_add(
			o, "arp_flux", "warn",
			"%s: %s and %s share %s/%u with arp_ignore %d/%d "
			"and arp_announce %d/%d: either may answer ARP "
			"for the other's address, and RoCE sent to the "
			"wrong function is silently dropped; set "
			"net.ipv4.conf.all.arp_ignore=1 and "
			"arp_announce=2, or give each function its own "
			"subnet",
			nd->name, a->name, b->name, net, v[g].prefix,
			a->arp_ignore, b->arp_ignore, a->arp_announce,
			b->arp_announce);
		/* Subject without a gist: never grouped across nodes. */
		if (f) {
			snprintf(f->node, sizeof(f->node), "%s", nd->name);
			snprintf(f->iface, sizeof(f->iface), "%s", a->name);
			snprintf(f->peer_node, sizeof(f->peer_node), "%s",
				 nd->name);
			snprintf(f->peer_iface, sizeof(f->peer_iface), "%s",
				 b->name);
			findings_name_iface(f, a->name);
			findings_name_iface(f, b->name);
		}
	}
	free(v);
}

static const struct findings_hw_node *
fhw_node(const struct findings_hw_node *nodes, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (nodes[i].name && !strcmp(nodes[i].name, name))
			return &nodes[i];
	return NULL;
}

/* A finding about both ends of a cable: the subject and its peer, no
 * gist (never grouped across nodes). */
static void fhw_ends(struct finding *f, const struct findings_hw_node *nd,
		     const Ring__NetInterface *mine,
		     const struct findings_hw_node *peer,
		     const Ring__NetInterface *theirs)
{
	if (!f)
		return;
	snprintf(f->node, sizeof(f->node), "%s", nd->name);
	snprintf(f->iface, sizeof(f->iface), "%s", mine->name);
	snprintf(f->peer_node, sizeof(f->peer_node), "%s", peer->name);
	snprintf(f->peer_iface, sizeof(f->peer_iface), "%s", theirs->name);
}

static void fhw_cables(const struct findings_hw_node *nodes, unsigned n,
		       unsigned i, struct findings_out *o)
{
	const struct findings_hw_node *nd = &nodes[i];

	for (size_t k = 0; nd->nbrs && k < nd->nbrs->n_neighbours; k++) {
		const Ring__Neighbour *nb = nd->nbrs->neighbours[k];
		const struct findings_hw_node *peer =
			fhw_node(nodes, n, nb->remote_node);
		const Ring__NetInterface *mine, *theirs;
		struct finding *f = NULL;

		mine = fhw_iface(nd->inv, nb->local_interface);
		theirs = peer ? fhw_iface(peer->inv, nb->remote_interface)
			      : NULL;
		if (!fhw_data(mine) || !theirs || peer == nd)
			continue;
		if (*nb->remote_mac && *theirs->mac &&
		    strcasecmp(nb->remote_mac, theirs->mac))
			f = findings_add(
				o, "neighbour_mac", "warn",
				"%s %s hears %s %s from MAC %s, but %s's "
				"inventory gives %s MAC %s: the beacon "
				"came through another function or "
				"device (a twin, a bond, a bridge), or "
				"the claim is forged",
				nd->name, mine->name, peer->name, theirs->name,
				nb->remote_mac, peer->name, theirs->name,
				theirs->mac);
		fhw_ends(f, nd, mine, peer, theirs);
		f = NULL;
		/* Once per cable: from the side that sorts first. */
		if (mine->mtu && theirs->mtu && mine->mtu != theirs->mtu &&
		    (strcmp(nd->name, peer->name) < 0))
			f = findings_add(
				o, "mtu_mismatch", "warn",
				"%s %s (MTU %u) and %s %s (MTU %u) differ "
				"across their cable: the smaller one "
				"decides, and RoCE's path MTU with it; "
				"set both alike (9000)",
				nd->name, mine->name, mine->mtu, peer->name,
				theirs->name, theirs->mtu);
		fhw_ends(f, nd, mine, peer, theirs);
		if (f) {
			f->mtu = mine->mtu;
			f->peer_mtu = theirs->mtu;
		}
	}
}

unsigned findings_hw(const struct findings_hw_node *nodes, unsigned n,
		     struct finding *out, unsigned max)
{
	struct findings_out o = {.v = out, .n = 0, .max = out ? max : 0};

	if (!nodes)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		if (!nodes[i].inv || !nodes[i].name)
			continue;
		fhw_ports(&nodes[i], &o);
		fhw_links(&nodes[i], &o);
		fhw_rdma_mtu(&nodes[i], &o);
		fhw_arp(&nodes[i], &o);
	}
	for (unsigned i = 0; i < n; i++)
		if (nodes[i].inv && nodes[i].name)
			fhw_cables(nodes, n, i, &o);
	return o.n;
}

int findings_hw_halves(const struct findings_hw_node *nodes, unsigned n)
{
	int seen = 0;

	for (unsigned i = 0; nodes && i < n; i++) {
		const Ring__Inventory *inv = nodes[i].inv;

		for (size_t j = 0; inv && j < inv->n_interfaces; j++) {
			const Ring__NetInterface *f = inv->interfaces[j];

			if (!fhw_data(f))
				continue;
			seen = 1;
			if (f->up_no_address)
				return FINDINGS_HALVES_UNUSED;
		}
	}
	return seen ? FINDINGS_HALVES_USED : FINDINGS_HALVES_UNKNOWN;
}
