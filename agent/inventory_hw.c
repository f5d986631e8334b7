/* Physical ports and PCIe links behind the data interfaces.
 *
 * PCIe link: the functions of one PCI device (domain:bus:device) share its
 * upstream link; GB10's ConnectX-7 shows 0000:01:00.{0,1} on one Gen5 x4
 * link and 0002:01:00.{0,1} on another. A function without a PCI device
 * (a VLAN or veth named like one) takes its link from its systemd name.
 *
 * Usable bandwidth: raw (after 8b/10b or 128b/130b line encoding) times
 * the TLP payload share MPS / (MPS + per-TLP overhead) times 1 - the DLLP
 * share. MPS is the max payload size read from the function's Device
 * Control (inventory_pcie.c; the smallest of the link's functions); where
 * config space cannot be read (beyond 64 bytes without root) it is
 * HW_MPS_ASSUMED, 256 bytes, and the link says "assumed".
 * HW_TLP_OVERHEAD 26 bytes (a 4-dword header for 64-bit addresses, the
 * LCRC, sequence number and framing; the conservative end of the 24 bytes
 * Intel's AN 855 counts without ECRC), HW_DLLP 3% (ACK/NAK, flow-control
 * updates: an estimate). Gen5 x4: 126.0 x 256/282 x 0.97 = 111.0 Gbps at
 * MPS 256, 126.0 x 128/154 x 0.97 = 101.6 at 128; the reference cluster
 * measured 110.9 Gbps per edge and 111.3 busbw (docs/REFERENCE.md), so
 * the model is an estimate, not a bound. docs/HARDWARE.md cites the
 * sources.
 *
 * Downtrained or wired narrow: a link below its device's maximum width or
 * speed is "wired_narrow" when it runs at the upstream port's own maximum
 * (the board is built so), "downtrained" when below what both ends
 * support, "unknown" when the upstream port cannot be read.
 *
 * Physical port: what is certain on every board groups the functions:
 * one RDMA sys_image_guid, one PCI bus:device (any domain: GB10's twins
 * are 0000:01:00.0 and 0002:01:00.0) and one function number (= the
 * port). phys_switch_id only confirms: functions grouped so that report
 * different ones are named in switch_ids_differ, never split. Without a
 * sys_image_guid: phys_switch_id and phys_port_name; without those, the
 * systemd name without its P<domain> part (enp1s0f0np0 and enP2p1s0f0np0
 * are twins); else the interface alone. The port's id keeps the form
 * ADAPTER/PORT: the switch id its functions agree on, else the guid.
 *
 * A function's nominal rate: the lesser of its port's speed and its share
 * of its PCIe link's usable bandwidth, the share being usable / the number
 * of functions on the link with carrier (the function itself counted when
 * it has none). That is the per-direction figure when every cabled
 * function moves data the same way at once; PCIe is full duplex, so a ring
 * that sends on one cable and receives on the other may do better, which
 * only a measurement shows. */
#include "inventory_hw.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inventory.h"
#include "inventory_pcie.h"
#include "log.h"
#include "pbstr.h"
#include "sysread.h"

#define HW_MPS_ASSUMED 256u
#define HW_TLP_OVERHEAD 26.0
#define HW_DLLP 0.03
/* What coordinator/validate.c accepts. */
#define HW_MAX_LINKS 64
#define HW_MAX_PORTS 64

static int hw_strv_add(char ***v, size_t *n, const char *s)
{
	char **grown = reallocarray(*v, *n + 1, sizeof(**v));

	if (!grown)
		return -1;
	*v = grown;
	grown[*n] = strdup(s);
	if (!grown[*n])
		return -1;
	(*n)++;
	return 0;
}

static double hw_round1(double x)
{
	return (double)(unsigned long long)(x * 10.0 + 0.5) / 10.0;
}

double inventory_pcie_usable_gbps(double raw_gbps, unsigned mps)
{
	double m = mps ? mps : HW_MPS_ASSUMED;

	if (!(raw_gbps > 0.0))
		return 0.0;
	return hw_round1(raw_gbps * m / (m + HW_TLP_OVERHEAD) *
			 (1.0 - HW_DLLP));
}

/* Decimal number at *s (no sign); advances *s. -1 if none. */
static int hw_num(const char **s, unsigned *out)
{
	unsigned long v = 0;
	const char *p = *s;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > 0xffff)
			return -1;
		p++;
	}
	*out = (unsigned)v;
	*s = p;
	return 0;
}

int inventory_parse_pname(const char *name, struct inventory_pname *out)
{
	const char *s = name, *after_domain;
	struct inventory_pname p;
	int n;

	memset(&p, 0, sizeof(p));
	if (!name || strncmp(name, "en", 2))
		goto bad;
	s += 2;
	if (*s == 'P') {
		s++;
		if (hw_num(&s, &p.domain) < 0)
			goto bad;
	}
	after_domain = s;
	if (*s++ != 'p' || hw_num(&s, &p.bus) < 0 || p.bus > 0xff ||
	    *s++ != 's' || hw_num(&s, &p.slot) < 0 || p.slot > 0x1f)
		goto bad;
	if (*s == 'f') {
		s++;
		if (hw_num(&s, &p.function) < 0 || p.function > 7)
			goto bad;
	}
	if (*s == 'n') {
		s++;
		if (!*s || strlen(s) >= sizeof(p.port_name))
			goto bad;
		memcpy(p.port_name, s, strlen(s) + 1);
		s += strlen(s);
	} else if (*s == 'd') {
		unsigned dev_port;

		s++;
		if (hw_num(&s, &dev_port) < 0)
			goto bad;
	}
	if (*s)
		goto bad;
	n = snprintf(p.twin_key, sizeof(p.twin_key), "en%s", after_domain);
	if (n < 0 || (size_t)n >= sizeof(p.twin_key))
		goto bad;
	*out = p;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

/* Per data interface while the model is built. */
struct hw_fn {
	Ring__NetInterface *ifc;
	char link[32];
	char port[192];	   /* the grouping key */
	char adapter[128]; /* phys_switch_id, else sys_image_guid */
	char port_name[64];
	const char *grouped; /* PhysPort.grouped_by */
	char sw[128];
	unsigned mps; /* read from config space; 0 = not readable */
	struct inventory_pcie_up up;
	Ring__PcieLink *pl;
	Ring__PhysPort *pp;
};

/* -1 unknown: the kernel uses the larger of conf/all and conf/IF. */
static int32_t hw_arp(const char *procfs_root, const char *ifname,
		      const char *what)
{
	char a[32], b[32];
	long va, vb;
	char *end;

	if (sysread_at(a, sizeof(a), "%s/proc/sys/net/ipv4/conf/all/%s",
		       procfs_root, what) < 0 ||
	    sysread_at(b, sizeof(b), "%s/proc/sys/net/ipv4/conf/%s/%s",
		       procfs_root, ifname, what) < 0)
		return -1;
	errno = 0;
	va = strtol(a, &end, 10);
	if (errno || end == a || *end || va < 0 || va > 255)
		return -1;
	vb = strtol(b, &end, 10);
	if (errno || end == b || *end || vb < 0 || vb > 255)
		return -1;
	return (int32_t)(va > vb ? va : vb);
}

static int hw_fn_read(struct hw_fn *f, const char *sysfs_root,
		      const char *procfs_root)
{
	Ring__NetInterface *ifc = f->ifc;
	char pname[64] = "", sw[128] = "", guid[64] = "", pn[64];
	unsigned dom, bus, dev, fn;
	struct inventory_pname p;
	int parsed, pci;

	if (sysread_at(pname, sizeof(pname),
		       "%s/sys/class/net/%s/phys_port_name", sysfs_root,
		       ifc->name) < 0)
		pname[0] = '\0';
	if (sysread_at(sw, sizeof(sw), "%s/sys/class/net/%s/phys_switch_id",
		       sysfs_root, ifc->name) < 0)
		sw[0] = '\0';
	if (*ifc->rdma_device &&
	    sysread_at(
		    guid, sizeof(guid),
		    "%s/sys/class/net/%s/device/infiniband/%s/sys_image_guid",
		    sysfs_root, ifc->name, ifc->rdma_device) < 0)
		guid[0] = '\0';
	if (pbstr_set(&ifc->phys_port_name, pname) < 0 ||
	    pbstr_set(&ifc->phys_switch_id, sw) < 0)
		return -1;
	ifc->arp_ignore = hw_arp(procfs_root, ifc->name, "arp_ignore");
	ifc->arp_announce = hw_arp(procfs_root, ifc->name, "arp_announce");

	snprintf(f->sw, sizeof(f->sw), "%s", sw);
	if (*ifc->pci_address &&
	    inventory_pcie_read(sysfs_root, ifc->name, &f->mps, &f->up) < 0) {
		f->mps = 0;
		memset(&f->up, 0, sizeof(f->up));
	}

	parsed = inventory_parse_pname(ifc->name, &p) == 0;
	pci = sscanf(ifc->pci_address, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) ==
	      4;
	if (pci)
		snprintf(f->link, sizeof(f->link), "%04x:%02x:%02x", dom, bus,
			 dev);
	else if (parsed)
		snprintf(f->link, sizeof(f->link), "%04x:%02x:%02x", p.domain,
			 p.bus, p.slot);
	/* The port's name: sysfs', else the systemd name's n part, else
	 * the function number. */
	snprintf(pn, sizeof(pn), "%s",
		 pname[0]		    ? pname
		 : parsed && p.port_name[0] ? p.port_name
					    : "");
	if (!pn[0] && pci)
		snprintf(pn, sizeof(pn), "f%u", fn);
	if (guid[0] && pci) {
		snprintf(f->port, sizeof(f->port), "%s/%02x:%02x.%x", guid, bus,
			 dev, fn);
		snprintf(f->adapter, sizeof(f->adapter), "%s", guid);
		snprintf(f->port_name, sizeof(f->port_name), "%s", pn);
		f->grouped = "pci";
	} else if ((sw[0] || guid[0]) && pname[0]) {
		snprintf(f->port, sizeof(f->port), "%s/%s", sw[0] ? sw : guid,
			 pname);
		snprintf(f->adapter, sizeof(f->adapter), "%s",
			 sw[0] ? sw : guid);
		snprintf(f->port_name, sizeof(f->port_name), "%s", pname);
		f->grouped = sw[0] ? "switch_id" : "guid";
	} else if (parsed) {
		snprintf(f->port, sizeof(f->port), "%s", p.twin_key);
		snprintf(f->port_name, sizeof(f->port_name), "%s",
			 pname[0] ? pname : p.port_name);
		f->grouped = "name";
	} else {
		snprintf(f->port, sizeof(f->port), "%s", ifc->name);
		snprintf(f->port_name, sizeof(f->port_name), "%s", pname);
		f->grouped = "interface";
	}
	return 0;
}

static void hw_free_link(Ring__PcieLink *l)
{
	if (!l)
		return;
	pbstr_free(l->id);
	for (size_t i = 0; i < l->n_interfaces; i++)
		free(l->interfaces[i]);
	free(l->interfaces);
	pbstr_free(l->speed);
	pbstr_free(l->max_speed);
	pbstr_free(l->downtrained);
	pbstr_free(l->mps_source);
	pbstr_free(l->upstream);
	pbstr_free(l->upstream_max_speed);
	pbstr_free(l->narrow);
	free(l);
}

static void hw_free_port(Ring__PhysPort *p)
{
	if (!p)
		return;
	pbstr_free(p->id);
	pbstr_free(p->name);
	for (size_t i = 0; i < p->n_interfaces; i++)
		free(p->interfaces[i]);
	free(p->interfaces);
	pbstr_free(p->twins_differ);
	pbstr_free(p->grouped_by);
	pbstr_free(p->switch_ids_differ);
	free(p);
}

void inventory_hw_free_iface(Ring__NetInterface *ifc)
{
	pbstr_free(ifc->phys_port_name);
	pbstr_free(ifc->phys_switch_id);
	pbstr_free(ifc->port_id);
	pbstr_free(ifc->pcie_link);
}

void inventory_hw_free(Ring__Inventory *inv)
{
	for (size_t i = 0; i < inv->n_pcie_links; i++)
		hw_free_link(inv->pcie_links[i]);
	free(inv->pcie_links);
	inv->pcie_links = NULL;
	inv->n_pcie_links = 0;
	for (size_t i = 0; i < inv->n_phys_ports; i++)
		hw_free_port(inv->phys_ports[i]);
	free(inv->phys_ports);
	inv->phys_ports = NULL;
	inv->n_phys_ports = 0;
}

/* "x2 of x4", "16.0 of 32.0 GT/s", both joined by ", "; "" when not. */
static void hw_downtrained(const Ring__PcieLink *l, char *buf, size_t len)
{
	double cur = strtod(l->speed, NULL), max = strtod(l->max_speed, NULL);
	size_t used = 0;

	buf[0] = '\0';
	if (l->width && l->max_width && l->width < l->max_width)
		used = (size_t)snprintf(buf, len, "x%u of x%u", l->width,
					l->max_width);
	if (cur > 0.0 && max > 0.0 && cur < max && used < len)
		snprintf(buf + used, len - used, "%s%.1f of %.1f GT/s",
			 used ? ", " : "", cur, max);
}

static Ring__PcieLink *hw_link_get(Ring__Inventory *inv, const char *id)
{
	Ring__PcieLink **grown, *l;

	for (size_t i = 0; i < inv->n_pcie_links; i++)
		if (!strcmp(inv->pcie_links[i]->id, id))
			return inv->pcie_links[i];
	if (inv->n_pcie_links >= HW_MAX_LINKS) {
		log_warnx("inventory: more than %d PCIe links; %s left out",
			  HW_MAX_LINKS, id);
		errno = E2BIG;
		return NULL;
	}
	grown = reallocarray(inv->pcie_links, inv->n_pcie_links + 1,
			     sizeof(*grown));
	if (!grown)
		return NULL;
	inv->pcie_links = grown;
	l = malloc(sizeof(*l));
	if (!l)
		return NULL;
	ring__pcie_link__init(l);
	inv->pcie_links[inv->n_pcie_links++] = l;
	if (pbstr_set(&l->id, id) < 0)
		return NULL;
	return l;
}

static Ring__PhysPort *hw_port_get(Ring__Inventory *inv, const char *id,
				   const char *name)
{
	Ring__PhysPort **grown, *p;

	for (size_t i = 0; i < inv->n_phys_ports; i++)
		if (!strcmp(inv->phys_ports[i]->id, id))
			return inv->phys_ports[i];
	if (inv->n_phys_ports >= HW_MAX_PORTS) {
		log_warnx("inventory: more than %d physical ports; %s left out",
			  HW_MAX_PORTS, id);
		errno = E2BIG;
		return NULL;
	}
	grown = reallocarray(inv->phys_ports, inv->n_phys_ports + 1,
			     sizeof(*grown));
	if (!grown)
		return NULL;
	inv->phys_ports = grown;
	p = malloc(sizeof(*p));
	if (!p)
		return NULL;
	ring__phys_port__init(p);
	inv->phys_ports[inv->n_phys_ports++] = p;
	if (pbstr_set(&p->id, id) < 0 || pbstr_set(&p->name, name) < 0)
		return NULL;
	return p;
}

static int hw_link_add(Ring__Inventory *inv, struct hw_fn *f)
{
	const Ring__NetInterface *ifc = f->ifc;
	Ring__PcieLink *l;
	char down[64];

	if (!f->link[0])
		return 0;
	l = hw_link_get(inv, f->link);
	if (!l)
		return errno == E2BIG ? 0 : -1;
	f->pl = l;
	if (hw_strv_add(&l->interfaces, &l->n_interfaces, ifc->name) < 0)
		return -1;
	/* Functions of one device report the one link; the first with
	 * figures speaks for it. */
	if (!*l->speed && *ifc->pcie_link_speed) {
		if (pbstr_set(&l->speed, ifc->pcie_link_speed) < 0 ||
		    pbstr_set(&l->max_speed, ifc->pcie_max_link_speed) < 0)
			return -1;
		l->width = ifc->pcie_link_width;
		l->max_width = ifc->pcie_max_link_width;
		l->raw_gbps = inventory_pcie_gbps(l->speed, l->width);
		hw_downtrained(l, down, sizeof(down));
		if (pbstr_set(&l->downtrained, down) < 0)
			return -1;
	}
	return 0;
}

/* Below the device's maximum: why, from the upstream port's own. */
static const char *hw_narrow(const Ring__PcieLink *l)
{
	double cur = strtod(l->speed, NULL), max = strtod(l->max_speed, NULL);
	double up = strtod(l->upstream_max_speed, NULL);
	unsigned both_w = l->max_width;
	double both_s = max;

	if (!*l->downtrained)
		return "";
	if (!l->upstream_max_width || !(up > 0.0))
		return "unknown";
	if (l->upstream_max_width < both_w)
		both_w = l->upstream_max_width;
	if (up < both_s)
		both_s = up;
	if ((l->width && l->width < both_w) || (cur > 0.0 && cur < both_s))
		return "downtrained";
	return "wired_narrow";
}

/* The link's MPS (the smallest its functions read; HW_MPS_ASSUMED when
 * none could), its usable rate, and its upstream port (the first
 * function's that has one). */
static int hw_link_finish(Ring__PcieLink *l, const struct hw_fn *fns, size_t n)
{
	const struct inventory_pcie_up *up = NULL;
	unsigned mps = 0;

	for (size_t j = 0; j < n; j++) {
		if (fns[j].pl != l)
			continue;
		if (fns[j].mps && (!mps || fns[j].mps < mps))
			mps = fns[j].mps;
		if (!up && fns[j].up.addr[0])
			up = &fns[j].up;
	}
	l->mps_bytes = mps ? mps : HW_MPS_ASSUMED;
	if (pbstr_set(&l->mps_source, mps ? "read" : "assumed") < 0)
		return -1;
	l->usable_gbps = inventory_pcie_usable_gbps(l->raw_gbps, mps);
	if (up) {
		if (pbstr_set(&l->upstream, up->addr) < 0 ||
		    pbstr_set(&l->upstream_max_speed, up->max_speed) < 0)
			return -1;
		l->upstream_max_width = up->max_width;
	}
	if (pbstr_set(&l->narrow, hw_narrow(l)) < 0)
		return -1;
	if (*l->narrow)
		log_debug("agent",
			  "inventory: PCIe link %s at %s: %s (upstream %s x%u "
			  "%s)",
			  l->id, l->downtrained, l->narrow,
			  *l->upstream ? l->upstream : "unreadable",
			  l->upstream_max_width, l->upstream_max_speed);
	return 0;
}

/* The port's id ADAPTER/PORT, how it was grouped, and whether the
 * functions' phys_switch_ids confirm it. The functions take the id. */
static int hw_port_name(Ring__Inventory *inv, Ring__PhysPort *p,
			const struct hw_fn *fns, size_t n)
{
	const struct hw_fn *first = NULL;
	char id[256], differ[512] = "";
	int agree = 1;

	for (size_t j = 0; j < n; j++) {
		if (fns[j].pp != p)
			continue;
		if (!first)
			first = &fns[j];
		else if (strcmp(first->sw, fns[j].sw))
			agree = 0;
	}
	if (!first)
		return 0;
	if (pbstr_set(&p->grouped_by, first->grouped) < 0)
		return -1;
	if (!agree)
		for (size_t j = 0; j < n; j++) {
			size_t used = strlen(differ);

			if (fns[j].pp == p && used + 1 < sizeof(differ))
				snprintf(differ + used, sizeof(differ) - used,
					 "%s%s %s", used ? ", " : "",
					 fns[j].ifc->name,
					 fns[j].sw[0] ? fns[j].sw : "none");
		}
	if (pbstr_set(&p->switch_ids_differ, differ) < 0)
		return -1;
	if (differ[0])
		log_debug("agent",
			  "inventory: port %s grouped by %s; phys_switch_id "
			  "differs (%s): kept together",
			  p->id, first->grouped, differ);
	if (strcmp(first->grouped, "pci"))
		return 0;
	snprintf(id, sizeof(id), "%s/%s",
		 agree && first->sw[0] ? first->sw : first->adapter,
		 first->port_name);
	/* Another port already so named keeps this one's key. */
	for (size_t i = 0; i < inv->n_phys_ports; i++)
		if (inv->phys_ports[i] != p &&
		    !strcmp(inv->phys_ports[i]->id, id))
			return 0;
	return pbstr_set(&p->id, id);
}

static double hw_speed_gbps(const Ring__NetInterface *ifc)
{
	if (ifc->nominal_speed_mbps)
		return ifc->nominal_speed_mbps / 1000.0;
	return ifc->speed_mbps > 0 ? ifc->speed_mbps / 1000.0 : 0.0;
}

static void hw_nominal(struct hw_fn *fns, size_t n, size_t i)
{
	const struct hw_fn *f = &fns[i];
	double port = 0.0, share = 0.0;
	unsigned k = f->ifc->carrier ? 0 : 1;

	for (size_t j = 0; j < n; j++) {
		if (f->pp && fns[j].pp == f->pp &&
		    hw_speed_gbps(fns[j].ifc) > port)
			port = hw_speed_gbps(fns[j].ifc);
		if (f->pl && fns[j].pl == f->pl && fns[j].ifc->carrier)
			k++;
	}
	if (!f->pp)
		port = hw_speed_gbps(f->ifc);
	if (f->pl && f->pl->usable_gbps > 0.0)
		share = f->pl->usable_gbps / k;
	if (port > 0.0 && share > 0.0)
		f->ifc->nominal_gbps = hw_round1(port < share ? port : share);
	else
		f->ifc->nominal_gbps = hw_round1(port > 0.0 ? port : share);
}

/* Append "what: a=x, b=y" to buf when the port's functions differ in the
 * value fmt() gives. */
static void hw_differ_one(const struct hw_fn *fns, size_t n,
			  const Ring__PhysPort *p, const char *what,
			  void (*fmt)(const struct hw_fn *, char *, size_t),
			  char *buf, size_t len)
{
	char first[32] = "", v[32];
	int differ = 0, seen = 0;
	size_t used;

	for (size_t j = 0; j < n; j++) {
		if (fns[j].pp != p)
			continue;
		fmt(&fns[j], v, sizeof(v));
		if (!seen++)
			snprintf(first, sizeof(first), "%s", v);
		else if (strcmp(first, v))
			differ = 1;
	}
	if (!differ)
		return;
	used = strlen(buf);
	if (used + 1 < len)
		snprintf(buf + used, len - used, "%s%s:", used ? "; " : "",
			 what);
	seen = 0;
	for (size_t j = 0; j < n; j++) {
		if (fns[j].pp != p)
			continue;
		fmt(&fns[j], v, sizeof(v));
		used = strlen(buf);
		if (used + 1 < len)
			snprintf(buf + used, len - used, "%s %s %s",
				 seen++ ? "," : "", fns[j].ifc->name, v);
	}
}

static void hw_fmt_speed(const struct hw_fn *f, char *b, size_t l)
{
	if (f->ifc->speed_mbps >= 0)
		snprintf(b, l, "%d Mb/s", f->ifc->speed_mbps);
	else
		snprintf(b, l, "unknown");
}

static void hw_fmt_mtu(const struct hw_fn *f, char *b, size_t l)
{
	snprintf(b, l, "%u", f->ifc->mtu);
}

static void hw_fmt_carrier(const struct hw_fn *f, char *b, size_t l)
{
	snprintf(b, l, "%s", f->ifc->carrier ? "up" : "down");
}

static void hw_fmt_width(const struct hw_fn *f, char *b, size_t l)
{
	if (f->ifc->pcie_link_width)
		snprintf(b, l, "x%u", f->ifc->pcie_link_width);
	else
		snprintf(b, l, "unknown");
}

static void hw_fmt_pcie_speed(const struct hw_fn *f, char *b, size_t l)
{
	double s = strtod(f->ifc->pcie_link_speed, NULL);

	if (s > 0.0)
		snprintf(b, l, "%.1f GT/s", s);
	else
		snprintf(b, l, "unknown");
}

/* Whether the port's functions differ in PCIe width or speed only
 * because the board wires a link narrow: some link of theirs is narrow,
 * and every narrow one is wired so. Nothing to configure alike then. */
static int hw_port_wired(const Ring__PhysPort *p, const struct hw_fn *fns,
			 size_t n)
{
	int wired = 0;

	for (size_t j = 0; j < n; j++) {
		const Ring__PcieLink *l = fns[j].pl;

		if (fns[j].pp != p || !l || !*l->narrow)
			continue;
		if (strcmp(l->narrow, "wired_narrow"))
			return 0;
		wired = 1;
	}
	return wired;
}

static int hw_port_finish(Ring__PhysPort *p, const struct hw_fn *fns, size_t n)
{
	char differ[512] = "";

	p->speed_gbps = 0.0;
	p->aggregate_gbps = 0.0;
	for (size_t j = 0; j < n; j++) {
		if (fns[j].pp != p)
			continue;
		if (hw_speed_gbps(fns[j].ifc) > p->speed_gbps)
			p->speed_gbps = hw_speed_gbps(fns[j].ifc);
		p->aggregate_gbps += fns[j].ifc->nominal_gbps;
	}
	p->aggregate_gbps = hw_round1(p->aggregate_gbps);
	if (p->n_interfaces < 2)
		return 0;
	hw_differ_one(fns, n, p, "speed", hw_fmt_speed, differ, sizeof(differ));
	hw_differ_one(fns, n, p, "mtu", hw_fmt_mtu, differ, sizeof(differ));
	hw_differ_one(fns, n, p, "carrier", hw_fmt_carrier, differ,
		      sizeof(differ));
	/* A link wired narrow is the board's design (PcieLink.narrow and
	 * the pcie_wired_narrow finding say it), not a difference to set
	 * right. */
	if (!hw_port_wired(p, fns, n)) {
		hw_differ_one(fns, n, p, "pcie width", hw_fmt_width, differ,
			      sizeof(differ));
		hw_differ_one(fns, n, p, "pcie speed", hw_fmt_pcie_speed,
			      differ, sizeof(differ));
	}
	return pbstr_set(&p->twins_differ, differ);
}

static int hw_link_cmp(const void *a, const void *b)
{
	return strcmp((*(Ring__PcieLink *const *)a)->id,
		      (*(Ring__PcieLink *const *)b)->id);
}

static int hw_port_cmp(const void *a, const void *b)
{
	return strcmp((*(Ring__PhysPort *const *)a)->id,
		      (*(Ring__PhysPort *const *)b)->id);
}

int inventory_hw_model(Ring__Inventory *inv, const char *sysfs_root,
		       const char *procfs_root)
{
	struct hw_fn *fns;
	size_t n = 0;
	int rc = -1;

	inventory_hw_free(inv);
	fns = calloc(inv->n_interfaces ? inv->n_interfaces : 1, sizeof(*fns));
	if (!fns)
		return -1;
	for (size_t i = 0; i < inv->n_interfaces; i++) {
		Ring__NetInterface *ifc = inv->interfaces[i];

		ifc->arp_ignore = ifc->arp_announce = -1;
		if (ifc->management)
			continue;
		fns[n].ifc = ifc;
		if (hw_fn_read(&fns[n], sysfs_root, procfs_root) < 0)
			goto out;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		struct hw_fn *f = &fns[i];

		if (hw_link_add(inv, f) < 0)
			goto out;
		f->pp = hw_port_get(inv, f->port, f->port_name);
		if (!f->pp) {
			if (errno != E2BIG)
				goto out;
		} else if (hw_strv_add(&f->pp->interfaces, &f->pp->n_interfaces,
				       f->ifc->name) < 0) {
			goto out;
		}
		if (pbstr_set(&f->ifc->pcie_link, f->pl ? f->pl->id : "") < 0)
			goto out;
	}
	for (size_t i = 0; i < inv->n_pcie_links; i++)
		if (hw_link_finish(inv->pcie_links[i], fns, n) < 0)
			goto out;
	for (size_t i = 0; i < inv->n_phys_ports; i++)
		if (hw_port_name(inv, inv->phys_ports[i], fns, n) < 0)
			goto out;
	for (size_t i = 0; i < n; i++)
		if (pbstr_set(&fns[i].ifc->port_id,
			      fns[i].pp ? fns[i].pp->id : "") < 0)
			goto out;
	for (size_t i = 0; i < n; i++)
		hw_nominal(fns, n, i);
	for (size_t i = 0; i < inv->n_phys_ports; i++)
		if (hw_port_finish(inv->phys_ports[i], fns, n) < 0)
			goto out;
	if (inv->n_pcie_links > 1)
		qsort(inv->pcie_links, inv->n_pcie_links,
		      sizeof(*inv->pcie_links), hw_link_cmp);
	if (inv->n_phys_ports > 1)
		qsort(inv->phys_ports, inv->n_phys_ports,
		      sizeof(*inv->phys_ports), hw_port_cmp);
	rc = 0;
out:
	free(fns);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}
