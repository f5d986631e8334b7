/* The node's inventory: interfaces (sysfs, addresses), PCIe links, RDMA
 * devices, memory. */
#include "inventory.h"
#include "inventory_hw.h"
#include "inventory_tree.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "log.h"
#include "pbstr.h"
#include "sysread.h"

#define INV_BUF 256

/* Room for one more pointer in a repeated field. */
static void **inv_grow(void **arr, size_t n)
{
	return reallocarray(arr, n + 1, sizeof(*arr));
}

static void inv_free_ipv4(Ring__Ipv4Address *a)
{
	if (!a)
		return;
	pbstr_free(a->address);
	free(a);
}

static void inv_free_iface(Ring__NetInterface *ifc)
{
	size_t i;

	if (!ifc)
		return;
	pbstr_free(ifc->name);
	pbstr_free(ifc->mac);
	for (i = 0; i < ifc->n_ipv4; i++)
		inv_free_ipv4(ifc->ipv4[i]);
	free(ifc->ipv4);
	pbstr_free(ifc->operstate);
	pbstr_free(ifc->pci_address);
	pbstr_free(ifc->pcie_link_speed);
	pbstr_free(ifc->pcie_max_link_speed);
	pbstr_free(ifc->rdma_device);
	pbstr_free(ifc->driver);
	inventory_hw_free_iface(ifc);
	free(ifc);
}

static void inv_free_gid(Ring__Gid *g)
{
	if (!g)
		return;
	pbstr_free(g->gid);
	pbstr_free(g->type);
	pbstr_free(g->netdev);
	free(g);
}

static void inv_free_port(Ring__RdmaPort *p)
{
	size_t i;

	if (!p)
		return;
	pbstr_free(p->state);
	pbstr_free(p->link_layer);
	pbstr_free(p->netdev);
	for (i = 0; i < p->n_gids; i++)
		inv_free_gid(p->gids[i]);
	free(p->gids);
	free(p);
}

static void inv_free_rdma(Ring__RdmaDevice *d)
{
	size_t i;

	if (!d)
		return;
	pbstr_free(d->name);
	pbstr_free(d->node_guid);
	pbstr_free(d->fw_ver);
	for (i = 0; i < d->n_ports; i++)
		inv_free_port(d->ports[i]);
	free(d->ports);
	free(d);
}

void inventory_free(Ring__Inventory *inv)
{
	size_t i;

	if (!inv)
		return;
	pbstr_free(inv->node);
	pbstr_free(inv->hostname);
	pbstr_free(inv->mgmt_address);
	pbstr_free(inv->mgmt_interface);
	for (i = 0; i < inv->n_interfaces; i++)
		inv_free_iface(inv->interfaces[i]);
	free(inv->interfaces);
	for (i = 0; i < inv->n_rdma_devices; i++)
		inv_free_rdma(inv->rdma_devices[i]);
	free(inv->rdma_devices);
	inventory_hw_free(inv);
	for (i = 0; i < inv->n_ignored_interfaces; i++)
		free(inv->ignored_interfaces[i]);
	free(inv->ignored_interfaces);
	free(inv->memory);
	pbstr_free(inv->kernel);
	pbstr_free(inv->rdma_error);
	free(inv);
}

static int inv_read_at(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];

	if (sysread_path(path, sizeof(path), "%s/%s", dir, file) < 0)
		return -1;
	return sysread_file(path, buf, len);
}

static int inv_read_ull(const char *dir, const char *file, int base,
			unsigned long long *out)
{
	char buf[64], *end;
	unsigned long long v;

	if (inv_read_at(dir, file, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	v = strtoull(buf, &end, base);
	if (errno || end == buf || *end || buf[0] == '-') {
		errno = EINVAL;
		return -1;
	}
	*out = v;
	return 0;
}

/* Basename of a symlink's target, "" when there is no such link. */
static void inv_link_base(const char *dir, const char *link, char *buf,
			  size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	buf[0] = '\0';
	if (sysread_path(path, sizeof(path), "%s/%s", dir, link) < 0)
		return;
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	while (n > 1 && target[n - 1] == '/')
		target[--n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	/* A cut name would be a wrong one: leave it empty instead. */
	if (strlen(base) < len)
		memcpy(buf, base, strlen(base) + 1);
}

/* DDDD:BB:SS.F, the domain possibly wider than four digits. */
static int inv_is_pci_address(const char *s)
{
	size_t n = 0;

	while (isxdigit((unsigned char)s[n]))
		n++;
	if (n < 4 || s[n] != ':')
		return 0;
	s += n + 1;
	return isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]) &&
	       s[2] == ':' && isxdigit((unsigned char)s[3]) &&
	       isxdigit((unsigned char)s[4]) && s[5] == '.' && s[6] >= '0' &&
	       s[6] <= '7' && s[7] == '\0';
}

double inventory_pcie_gbps(const char *link_speed, unsigned width)
{
	double gts, raw;
	char *end;

	if (!link_speed || !width)
		return 0;
	errno = 0;
	gts = strtod(link_speed, &end);
	if (errno || end == link_speed)
		return 0;
	/* Gen1/2 lose 20% to 8b/10b, Gen3 and later 2/130 to 128b/130b. */
	if (gts == 2.5 || gts == 5.0)
		raw = gts * width * 8.0 / 10.0;
	else if (gts == 8.0 || gts == 16.0 || gts == 32.0 || gts == 64.0)
		raw = gts * width * 128.0 / 130.0;
	else
		return 0;
	/* One decimal, as in reports: 32 GT/s x4 is 126.0, not 126.03. */
	return (double)(unsigned long long)(raw * 10.0 + 0.5) / 10.0;
}

static unsigned inv_prefix_len(const struct sockaddr *mask)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)mask;

	if (!mask || mask->sa_family != AF_INET)
		return 32;
	return (unsigned)__builtin_popcount(sin->sin_addr.s_addr);
}

static int inv_add_ipv4(Ring__NetInterface *ifc, const struct ifaddrs *addrs)
{
	const struct ifaddrs *ifa;

	for (ifa = addrs; ifa; ifa = ifa->ifa_next) {
		const struct sockaddr_in *sin;
		char text[INET_ADDRSTRLEN];
		Ring__Ipv4Address *a;
		void **grown;

		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET ||
		    !ifa->ifa_name || strcmp(ifa->ifa_name, ifc->name))
			continue;
		sin = (const struct sockaddr_in *)ifa->ifa_addr;
		if (!inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text)))
			continue;
		grown = inv_grow((void **)ifc->ipv4, ifc->n_ipv4);
		if (!grown)
			return -1;
		ifc->ipv4 = (Ring__Ipv4Address **)grown;
		a = malloc(sizeof(*a));
		if (!a)
			return -1;
		ring__ipv4_address__init(a);
		ifc->ipv4[ifc->n_ipv4++] = a;
		if (pbstr_set(&a->address, text) < 0)
			return -1;
		a->prefix = inv_prefix_len(ifa->ifa_netmask);
	}
	return 0;
}

/* PCI function behind the netdev: address, PCIe link, encoded bandwidth. */
static int inv_iface_pci(Ring__NetInterface *ifc, const char *dir)
{
	char dev[PATH_MAX], buf[INV_BUF];
	unsigned long long width;

	inv_link_base(dir, "device", buf, sizeof(buf));
	if (!inv_is_pci_address(buf))
		return 0;
	if (pbstr_set(&ifc->pci_address, buf) < 0)
		return -1;
	/* Opening through the link follows it to the PCI device directory. */
	if (sysread_path(dev, sizeof(dev), "%s/device", dir) < 0)
		return 0;
	if (inv_read_at(dev, "current_link_speed", buf, sizeof(buf)) == 0 &&
	    pbstr_set(&ifc->pcie_link_speed, buf) < 0)
		return -1;
	if (inv_read_ull(dev, "current_link_width", 10, &width) == 0 &&
	    width <= UINT32_MAX)
		ifc->pcie_link_width = (uint32_t)width;
	if (inv_read_at(dev, "max_link_speed", buf, sizeof(buf)) == 0 &&
	    pbstr_set(&ifc->pcie_max_link_speed, buf) < 0)
		return -1;
	if (inv_read_ull(dev, "max_link_width", 10, &width) == 0 &&
	    width <= UINT32_MAX)
		ifc->pcie_max_link_width = (uint32_t)width;
	ifc->pcie_gbps =
		inventory_pcie_gbps(ifc->pcie_link_speed, ifc->pcie_link_width);
	return 0;
}

/* RDMA device bound to the netdev's PCI function, if any. */
static int inv_iface_rdma(Ring__NetInterface *ifc, const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (sysread_path(path, sizeof(path), "%s/device/infiniband", dir) < 0)
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		rc = pbstr_set(&ifc->rdma_device, de->d_name);
		break;
	}
	closedir(d);
	return rc;
}

static int inv_iface_fill(Ring__NetInterface *ifc,
			  const struct agent_conf *conf,
			  const struct inventory_src *src, const char *dir)
{
	char buf[INV_BUF];
	unsigned long long v;

	if (inv_read_ull(dir, "ifindex", 10, &v) == 0 && v <= UINT32_MAX)
		ifc->ifindex = (uint32_t)v;
	if (inv_read_at(dir, "address", buf, sizeof(buf)) == 0 &&
	    pbstr_set(&ifc->mac, buf) < 0)
		return -1;
	if (inv_read_ull(dir, "mtu", 10, &v) == 0 && v <= UINT32_MAX)
		ifc->mtu = (uint32_t)v;
	if (inv_read_ull(dir, "flags", 16, &v) == 0)
		ifc->admin_up = !!(v & IFF_UP);
	/* The kernel answers EINVAL on an admin-down device: no carrier. */
	if (inv_read_ull(dir, "carrier", 10, &v) == 0)
		ifc->carrier = v == 1;
	if (inv_read_at(dir, "operstate", buf, sizeof(buf)) == 0 &&
	    pbstr_set(&ifc->operstate, buf) < 0)
		return -1;
	ifc->speed_mbps = -1;
	if (inv_read_at(dir, "speed", buf, sizeof(buf)) == 0) {
		char *end;
		long s;

		errno = 0;
		s = strtol(buf, &end, 10);
		if (!errno && end != buf && !*end && s >= 0 && s <= INT32_MAX)
			ifc->speed_mbps = (int32_t)s;
	}
	ifc->nominal_speed_mbps = agent_conf_nominal_mbps(conf, ifc->name);
	inv_link_base(dir, "device/driver", buf, sizeof(buf));
	if (pbstr_set(&ifc->driver, buf) < 0)
		return -1;
	if (inv_iface_pci(ifc, dir) < 0 || inv_iface_rdma(ifc, dir) < 0 ||
	    inv_add_ipv4(ifc, src->addrs) < 0)
		return -1;
	ifc->up_no_address = ifc->carrier && ifc->n_ipv4 == 0;
	return 0;
}

static int inv_is_loopback(const char *dir)
{
	unsigned long long flags;

	return inv_read_ull(dir, "flags", 16, &flags) == 0 &&
	       (flags & IFF_LOOPBACK);
}

static int inv_iface_cmp(const void *a, const void *b)
{
	const Ring__NetInterface *x = *(Ring__NetInterface *const *)a;
	const Ring__NetInterface *y = *(Ring__NetInterface *const *)b;

	return strcmp(x->name, y->name);
}

/* The validator's bound on Inventory.ignored_interfaces. */
#define INV_MAX_IGNORED 256

/* An interface left out as not a data port: named in the inventory. */
static int inv_ignored(Ring__Inventory *inv, const char *name)
{
	char **grown;

	if (inv->n_ignored_interfaces >= INV_MAX_IGNORED)
		return 0;
	grown = reallocarray(inv->ignored_interfaces,
			     inv->n_ignored_interfaces + 1, sizeof(*grown));
	if (!grown)
		return -1;
	inv->ignored_interfaces = grown;
	grown[inv->n_ignored_interfaces] = strdup(name);
	if (!grown[inv->n_ignored_interfaces])
		return -1;
	inv->n_ignored_interfaces++;
	return 0;
}

static int inv_str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int inv_interfaces(Ring__Inventory *inv, const struct agent_conf *conf,
			  const struct inventory_src *src)
{
	char netdir[PATH_MAX], dir[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int rc = 0;

	if (sysread_path(netdir, sizeof(netdir), "%s/sys/class/net",
			 src->sysfs_root) < 0)
		return 0;
	d = opendir(netdir);
	if (!d) {
		log_warn("inventory: %s", netdir);
		return 0;
	}
	while ((de = readdir(d))) {
		Ring__NetInterface *ifc;
		void **grown;
		int mgmt;

		if (de->d_name[0] == '.')
			continue;
		/* bonding_masters and the like are files, not devices. */
		if (sysread_path(dir, sizeof(dir), "%s/%s", netdir,
				 de->d_name) < 0 ||
		    stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		mgmt = src->mgmt_interface &&
		       !strcmp(de->d_name, src->mgmt_interface);
		if (!mgmt && !inv_is_loopback(dir) &&
		    agent_conf_is_ignored(conf, de->d_name)) {
			if (inv_ignored(inv, de->d_name) < 0)
				goto fail;
			continue;
		}
		if (!mgmt && (inv_is_loopback(dir) ||
			      !agent_conf_is_data_interface(conf, de->d_name)))
			continue;
		grown = inv_grow((void **)inv->interfaces, inv->n_interfaces);
		if (!grown)
			goto fail;
		inv->interfaces = (Ring__NetInterface **)grown;
		ifc = malloc(sizeof(*ifc));
		if (!ifc)
			goto fail;
		ring__net_interface__init(ifc);
		inv->interfaces[inv->n_interfaces++] = ifc;
		ifc->management = mgmt;
		if (pbstr_set(&ifc->name, de->d_name) < 0 ||
		    inv_iface_fill(ifc, conf, src, dir) < 0)
			goto fail;
	}
	if (inv->n_interfaces > 1)
		qsort(inv->interfaces, inv->n_interfaces,
		      sizeof(*inv->interfaces), inv_iface_cmp);
	if (inv->n_ignored_interfaces > 1)
		qsort(inv->ignored_interfaces, inv->n_ignored_interfaces,
		      sizeof(*inv->ignored_interfaces), inv_str_cmp);
	goto out;
fail:
	rc = -1;
out:
	closedir(d);
	return rc;
}

static int inv_meminfo(const char *procfs_root, unsigned long long *total,
		       unsigned long long *avail)
{
	char path[PATH_MAX], buf[8192], *line, *save = NULL;

	*total = *avail = 0;
	if (sysread_path(path, sizeof(path), "%s/proc/meminfo",
			 procfs_root ? procfs_root : "") < 0 ||
	    sysread_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long v;
		char key[32];

		if (sscanf(line, "%31[^:]: %llu", key, &v) != 2)
			continue;
		if (!strcmp(key, "MemTotal"))
			*total = v;
		else if (!strcmp(key, "MemAvailable"))
			*avail = v;
	}
	return 0;
}

unsigned long long inventory_mem_available_kib(const char *procfs_root)
{
	unsigned long long total, avail;

	if (inv_meminfo(procfs_root, &total, &avail) < 0)
		return 0;
	return avail;
}

/* ibv_devinfo's per-lane figures (rdma-core 44); XDR needs active_speed_ex,
 * which these headers do not have. */
static double inv_ib_lane_gbps(uint8_t speed)
{
	switch (speed) {
	case 1: /* SDR */
		return 2.5;
	case 2: /* DDR */
		return 5.0;
	case 4: /* QDR */
	case 8: /* FDR10 */
		return 10.0;
	case 16: /* FDR */
		return 14.0;
	case 32: /* EDR */
		return 25.0;
	case 64: /* HDR */
		return 50.0;
	case 128: /* NDR */
		return 100.0;
	default:
		return 0;
	}
}

static unsigned inv_ib_lanes(uint8_t width)
{
	switch (width) {
	case 1:
		return 1;
	case 2:
		return 4;
	case 4:
		return 8;
	case 8:
		return 12;
	case 16:
		return 2;
	default:
		return 0;
	}
}

const char *inventory_gid_type(uint32_t type)
{
	switch (type) {
	case IBV_GID_TYPE_IB:
		return "IB";
	case IBV_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	default:
		return "";
	}
}

static int inv_rdma_gids(Ring__RdmaPort *p, struct ibv_context *ctx,
			 int tbl_len)
{
	static const uint8_t zero[16];
	int i;

	for (i = 0; i < tbl_len; i++) {
		struct ibv_gid_entry e;
		char text[INET6_ADDRSTRLEN], ndev[IF_NAMESIZE];
		Ring__Gid *g;
		void **grown;

		/* Unpopulated slots answer ENODATA; nothing to report. */
		if (ibv_query_gid_ex(ctx, p->port, (uint32_t)i, &e, 0) != 0)
			continue;
		if (!memcmp(e.gid.raw, zero, sizeof(zero)) ||
		    !inet_ntop(AF_INET6, e.gid.raw, text, sizeof(text)))
			continue;
		grown = inv_grow((void **)p->gids, p->n_gids);
		if (!grown)
			return -1;
		p->gids = (Ring__Gid **)grown;
		g = malloc(sizeof(*g));
		if (!g)
			return -1;
		ring__gid__init(g);
		p->gids[p->n_gids++] = g;
		g->index = (uint32_t)i;
		ndev[0] = '\0';
		if (e.ndev_ifindex && !if_indextoname(e.ndev_ifindex, ndev))
			ndev[0] = '\0';
		if (pbstr_set(&g->gid, text) < 0 ||
		    pbstr_set(&g->type, inventory_gid_type(e.gid_type)) < 0 ||
		    pbstr_set(&g->netdev, ndev) < 0)
			return -1;
		if (!*p->netdev && ndev[0] && pbstr_set(&p->netdev, ndev) < 0)
			return -1;
	}
	return 0;
}

static int inv_rdma_port(Ring__RdmaDevice *d, struct ibv_context *ctx,
			 uint8_t port, const char *sysfs_root)
{
	struct ibv_port_attr pa;
	const char *link_layer;
	Ring__RdmaPort *p;
	char dir[PATH_MAX], buf[INV_BUF];
	void **grown;
	int err;

	memset(&pa, 0, sizeof(pa));
	err = ibv_query_port(ctx, port, &pa);
	if (err) {
		log_warnx("inventory: %s port %u: ibv_query_port: %s", d->name,
			  port, strerror(err));
		return 0;
	}
	grown = inv_grow((void **)d->ports, d->n_ports);
	if (!grown)
		return -1;
	d->ports = (Ring__RdmaPort **)grown;
	p = malloc(sizeof(*p));
	if (!p)
		return -1;
	ring__rdma_port__init(p);
	d->ports[d->n_ports++] = p;
	p->port = port;
	/* ibv_devinfo's reading: unspecified is InfiniBand. */
	link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet"
							      : "InfiniBand";
	p->active_width = inv_ib_lanes(pa.active_width);
	p->active_speed_gbps =
		inv_ib_lane_gbps(pa.active_speed) * p->active_width;
	if (pa.active_mtu >= IBV_MTU_256 && pa.active_mtu <= IBV_MTU_4096)
		p->active_mtu = 128u << pa.active_mtu;
	if (pbstr_set(&p->state, ibv_port_state_str(pa.state)) < 0 ||
	    pbstr_set(&p->link_layer, link_layer) < 0 ||
	    inv_rdma_gids(p, ctx, pa.gid_tbl_len) < 0)
		return -1;
	/* No GID names a netdev (link down, no address): ask sysfs. */
	if (!*p->netdev &&
	    sysread_path(dir, sizeof(dir),
			 "%s/sys/class/infiniband/%s/ports/%u/gid_attrs/ndevs",
			 sysfs_root, d->name, port) == 0 &&
	    inv_read_at(dir, "0", buf, sizeof(buf)) == 0 &&
	    pbstr_set(&p->netdev, buf) < 0)
		return -1;
	return 0;
}

static void inv_err_append(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void inv_err_append(char *err, size_t len, const char *fmt, ...)
{
	size_t used = strlen(err);
	va_list ap;

	if (used && used + 2 < len) {
		memcpy(err + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(err + used, len - used, fmt, ap);
	va_end(ap);
}

/* One device: -1 on allocation failure; other failures go to err. */
static int inv_rdma_device(Ring__Inventory *inv, struct ibv_device *dev,
			   const char *sysfs_root, char *err, size_t errlen)
{
	struct ibv_device_attr attr;
	struct ibv_context *ctx;
	Ring__RdmaDevice *d;
	char guid[20];
	uint64_t g;
	void **grown;
	int rc = -1, e;
	uint8_t port;

	grown = inv_grow((void **)inv->rdma_devices, inv->n_rdma_devices);
	if (!grown)
		return -1;
	inv->rdma_devices = (Ring__RdmaDevice **)grown;
	d = malloc(sizeof(*d));
	if (!d)
		return -1;
	ring__rdma_device__init(d);
	inv->rdma_devices[inv->n_rdma_devices++] = d;
	if (pbstr_set(&d->name, ibv_get_device_name(dev)) < 0)
		return -1;
	ctx = ibv_open_device(dev);
	if (!ctx) {
		inv_err_append(err, errlen, "%s: open: %s", d->name,
			       strerror(errno));
		return 0;
	}
	memset(&attr, 0, sizeof(attr));
	e = ibv_query_device(ctx, &attr);
	if (e) {
		inv_err_append(err, errlen, "%s: query: %s", d->name,
			       strerror(e));
		rc = 0;
		goto out_close;
	}
	g = be64toh(attr.node_guid);
	snprintf(guid, sizeof(guid), "%04x:%04x:%04x:%04x",
		 (unsigned)(g >> 48) & 0xffff, (unsigned)(g >> 32) & 0xffff,
		 (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
	if (pbstr_set(&d->node_guid, guid) < 0 ||
	    pbstr_set(&d->fw_ver, attr.fw_ver) < 0)
		goto out_close;
	for (port = 1; port <= attr.phys_port_cnt; port++) {
		if (inv_rdma_port(d, ctx, port, sysfs_root) < 0)
			goto out_close;
		if (port == UINT8_MAX)
			break;
	}
	rc = 0;
out_close:
	ibv_close_device(ctx);
	return rc;
}

/* Software devices (rxe, siw) have no device/infiniband link under the
 * netdev: bind interfaces to devices through the ports' netdevs too. */
static int inv_rdma_bind_interfaces(Ring__Inventory *inv)
{
	for (size_t d = 0; d < inv->n_rdma_devices; d++) {
		const Ring__RdmaDevice *dev = inv->rdma_devices[d];

		for (size_t p = 0; p < dev->n_ports; p++) {
			const char *nd = dev->ports[p]->netdev;

			for (size_t i = 0; *nd && i < inv->n_interfaces; i++) {
				Ring__NetInterface *f = inv->interfaces[i];

				if (strcmp(f->name, nd) || *f->rdma_device)
					continue;
				if (pbstr_set(&f->rdma_device, dev->name) < 0)
					return -1;
			}
		}
	}
	return 0;
}

static int inv_rdma_cmp(const void *a, const void *b)
{
	return strcmp((*(Ring__RdmaDevice *const *)a)->name,
		      (*(Ring__RdmaDevice *const *)b)->name);
}

/* A tree's hostname and kernel release, where it has them (a capture
 * does, the hand-made fixtures do not). */
static int inv_tree_kernel(const struct inventory_src *s, Ring__Inventory *inv)
{
	char dir[PATH_MAX], buf[HOST_NAME_MAX + 1];

	if (sysread_path(dir, sizeof(dir), "%s/proc/sys/kernel",
			 s->procfs_root) < 0)
		return 0;
	if (inv_read_at(dir, "hostname", buf, sizeof(buf)) == 0 &&
	    pbstr_set(&inv->hostname, buf) < 0)
		return -1;
	if (inv_read_at(dir, "osrelease", buf, sizeof(buf)) == 0 &&
	    pbstr_set(&inv->kernel, buf) < 0)
		return -1;
	return 0;
}

static int inv_rdma(Ring__Inventory *inv, const struct agent_conf *conf,
		    const char *sysfs_root)
{
	struct ibv_device **list;
	char err[512] = "";
	int n = 0, i, rc = 0;

	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list) {
		/* ENOSYS: no RDMA subsystem in this kernel, a normal node. */
		if (errno == ENOMEM)
			return -1;
		if (errno == ENOSYS || errno == ENOENT || errno == 0)
			return 0;
		snprintf(err, sizeof(err), "ibv_get_device_list: %s",
			 strerror(errno));
		return pbstr_set(&inv->rdma_error, err);
	}
	for (i = 0; i < n; i++) {
		/* rdma_device restricts what this agent owns (several agents
		 * may share one host in tests). */
		if (!agent_conf_is_rdma_device(conf,
					       ibv_get_device_name(list[i])))
			continue;
		if (inv_rdma_device(inv, list[i], sysfs_root, err,
				    sizeof(err)) < 0) {
			rc = -1;
			goto out;
		}
	}
	if (err[0]) {
		log_warnx("inventory: rdma: %s", err);
		rc = pbstr_set(&inv->rdma_error, err);
	}
out:
	ibv_free_device_list(list);
	return rc;
}

Ring__Inventory *inventory_collect(const struct agent_conf *conf,
				   const struct inventory_src *src)
{
	struct inventory_src s;
	unsigned long long total, avail;
	char host[HOST_NAME_MAX + 1];
	struct utsname uts;
	Ring__Inventory *inv;

	if (!conf || !src) {
		errno = EINVAL;
		return NULL;
	}
	s = *src;
	if (!s.sysfs_root)
		s.sysfs_root = "";
	if (!s.procfs_root)
		s.procfs_root = "";
	inv = malloc(sizeof(*inv));
	if (!inv)
		return NULL;
	ring__inventory__init(inv);
	inv->memory = malloc(sizeof(*inv->memory));
	if (!inv->memory)
		goto fail;
	ring__memory__init(inv->memory);
	if (gethostname(host, sizeof(host)) < 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	if (uname(&uts) < 0)
		uts.release[0] = '\0';
	if (pbstr_set(&inv->node, conf->node) < 0 ||
	    pbstr_set(&inv->hostname, host) < 0 ||
	    pbstr_set(&inv->mgmt_address, s.mgmt_address) < 0 ||
	    pbstr_set(&inv->mgmt_interface, s.mgmt_interface) < 0 ||
	    pbstr_set(&inv->kernel, uts.release) < 0)
		goto fail;
	if (inv_interfaces(inv, conf, &s) < 0)
		goto fail;
	if (s.with_rdma && inv_rdma(inv, conf, s.sysfs_root) < 0)
		goto fail;
	if (!s.with_rdma && s.from_tree &&
	    inventory_tree_rdma(inv, conf, s.sysfs_root) < 0)
		goto fail;
	/* libibverbs lists devices in no set order: by name, so a capture
	 * compares equal and a reordering is no change. */
	if (inv->n_rdma_devices > 1)
		qsort(inv->rdma_devices, inv->n_rdma_devices,
		      sizeof(*inv->rdma_devices), inv_rdma_cmp);
	if (inv_rdma_bind_interfaces(inv) < 0)
		goto fail;
	if (s.from_tree && inv_tree_kernel(&s, inv) < 0)
		goto fail;
	/* After RDMA: software devices' functions know theirs only now. */
	if (inventory_hw_model(inv, s.sysfs_root, s.procfs_root) < 0)
		goto fail;
	if (inv_meminfo(s.procfs_root, &total, &avail) == 0) {
		inv->memory->total_kib = total;
		inv->memory->available_kib = avail;
	}
	return inv;
fail:
	inventory_free(inv);
	errno = ENOMEM;
	return NULL;
}

/* Packed with the fast-moving figure zeroed; NULL on allocation failure. */
static uint8_t *inv_pack_stable(const Ring__Inventory *in, size_t *len)
{
	Ring__Inventory copy = *in;
	Ring__Memory mem;
	uint8_t *buf;

	if (in->memory) {
		mem = *in->memory;
		mem.available_kib = 0;
		copy.memory = &mem;
	}
	*len = ring__inventory__get_packed_size(&copy);
	buf = malloc(*len ? *len : 1);
	if (!buf)
		return NULL;
	ring__inventory__pack(&copy, buf);
	return buf;
}

int inventory_changed(const Ring__Inventory *a, const Ring__Inventory *b)
{
	uint8_t *pa = NULL, *pb = NULL;
	size_t la = 0, lb = 0;
	int changed = 1; /* when in doubt, resend */

	if (!a || !b)
		return a != b;
	pa = inv_pack_stable(a, &la);
	pb = inv_pack_stable(b, &lb);
	if (pa && pb)
		changed = la != lb || memcmp(pa, pb, la) != 0;
	free(pa);
	free(pb);
	return changed;
}

int inventory_iface_of_address(const struct ifaddrs *addrs, const char *addr,
			       char *buf, size_t len)
{
	const struct ifaddrs *ifa;
	struct in_addr want;

	if (!addr || !buf || !len || inet_pton(AF_INET, addr, &want) != 1) {
		errno = EINVAL;
		return -1;
	}
	for (ifa = addrs; ifa; ifa = ifa->ifa_next) {
		const struct sockaddr_in *sin;
		int n;

		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET ||
		    !ifa->ifa_name)
			continue;
		sin = (const struct sockaddr_in *)ifa->ifa_addr;
		if (sin->sin_addr.s_addr != want.s_addr)
			continue;
		n = snprintf(buf, len, "%s", ifa->ifa_name);
		if (n < 0 || (size_t)n >= len) {
			errno = ERANGE;
			return -1;
		}
		return 0;
	}
	errno = ENOENT;
	return -1;
}
