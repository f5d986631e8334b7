/* A captured or fixture tree read back: getifaddrs from ROOT/addrs, the
 * libibverbs view of RDMA devices from the sysfs layout. Each field is
 * derived as libibverbs derives it from the same kernel data, so a tree
 * captured on a node gives that node's inventory. */
#include "inventory_tree.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "inventory.h"
#include "pbstr.h"
#include "sysread.h"

/* The validator's bounds, and what a tree may make us read. */
#define TREE_MAX_DEVICES 64
#define TREE_MAX_PORTS 16
#define TREE_MAX_GIDS 1024

struct tree_addr {
	struct ifaddrs ifa;
	struct sockaddr_in addr, mask;
	char name[IFNAMSIZ];
};

void inventory_tree_addrs_free(struct ifaddrs *list)
{
	while (list) {
		struct ifaddrs *next = list->ifa_next;

		free(list); /* the first member of a struct tree_addr */
		list = next;
	}
}

int inventory_tree_addrs(const char *root, struct ifaddrs **out, char *why,
			 size_t len)
{
	struct ifaddrs *head = NULL, **tail = &head;
	char path[PATH_MAX], line[256];
	unsigned lineno = 0, n = 0;
	FILE *f;

	*out = NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/addrs", root) >=
	    sizeof(path)) {
		snprintf(why, len, "%s/addrs: path too long", root);
		errno = ENAMETOOLONG;
		return -1;
	}
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return 1;
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[IFNAMSIZ + 1], addr[INET_ADDRSTRLEN], extra;
		struct tree_addr *a;
		unsigned prefix;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(why, len, "%s:%u: line longer than %zu bytes",
				 path, lineno, sizeof(line) - 2);
			goto bad;
		}
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		a = calloc(1, sizeof(*a));
		if (!a)
			goto fail;
		*tail = &a->ifa;
		tail = &a->ifa.ifa_next;
		if (sscanf(line, "%16s %15[0-9.]/%u %c", name, addr, &prefix,
			   &extra) != 3 ||
		    strlen(name) >= IFNAMSIZ || prefix > 32 ||
		    inet_pton(AF_INET, addr, &a->addr.sin_addr) != 1) {
			snprintf(why, len,
				 "%s:%u: want \"IFNAME ADDRESS/PREFIX\" "
				 "(IPv4, prefix 0-32)",
				 path, lineno);
			goto bad;
		}
		if (++n > INVENTORY_TREE_MAX_ADDRS) {
			snprintf(why, len, "%s: more than %d addresses", path,
				 INVENTORY_TREE_MAX_ADDRS);
			goto bad;
		}
		memcpy(a->name, name, strlen(name) + 1);
		a->addr.sin_family = a->mask.sin_family = AF_INET;
		a->mask.sin_addr.s_addr =
			htonl(prefix ? ~0u << (32 - prefix) : 0);
		a->ifa.ifa_name = a->name;
		a->ifa.ifa_addr = (struct sockaddr *)&a->addr;
		a->ifa.ifa_netmask = (struct sockaddr *)&a->mask;
	}
	if (ferror(f)) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	*out = head;
	return 0;
bad:
	errno = EINVAL;
fail:
	if (errno == ENOMEM)
		snprintf(why, len, "%s: out of memory", path);
	fclose(f);
	inventory_tree_addrs_free(head);
	return -1;
}

static int tree_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int tree_num_cmp(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* The decimal entries of a directory, ascending, at most max; their
 * count. */
static size_t tree_numbers(const char *dir, unsigned *out, size_t max)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		char *end;
		unsigned long v;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		errno = 0;
		v = strtoul(de->d_name, &end, 10);
		if (errno || *end || v > UINT32_MAX)
			continue;
		out[n++] = (unsigned)v;
	}
	closedir(d);
	qsort(out, n, sizeof(*out), tree_num_cmp);
	return n;
}

/* The kernel's rate file, "200 Gb/sec (4X HDR)": lanes and the lane rate
 * of the speed name, as the inventory reads ibv_port_attr's enums. */
static void tree_rate(const char *rate, uint32_t *lanes, double *gbps)
{
	static const struct {
		const char *name;
		double gbps;
	} speeds[] = {{"SDR", 2.5},    {"DDR", 5.0},  {"QDR", 10.0},
		      {"FDR10", 10.0}, {"FDR", 14.0}, {"EDR", 25.0},
		      {"HDR", 50.0},   {"NDR", 100.0}};
	const char *p = strchr(rate, '(');
	char name[16];
	unsigned w;

	*lanes = 0;
	*gbps = 0;
	if (!p || sscanf(p, "(%uX %15[A-Z0-9])", &w, name) != 2 || w > 64)
		return;
	*lanes = w;
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (!strcmp(name, speeds[i].name))
			*gbps = speeds[i].gbps * w;
}

/* One GID entry, skipped (0) when libibverbs would skip it: unpopulated
 * (zero, or no type: the kernel answers EINVAL). */
static int tree_gid(Ring__RdmaPort *p, const char *pdir, unsigned i,
		    int ethernet)
{
	static const uint8_t zero[16];
	char text[INET6_ADDRSTRLEN], type[32], ndev[IFNAMSIZ + 1] = "";
	uint8_t raw[16];
	Ring__Gid **grown, *g;

	if (sysread_at(text, sizeof(text), "%s/gids/%u", pdir, i) < 0 ||
	    inet_pton(AF_INET6, text, raw) != 1 ||
	    !memcmp(raw, zero, sizeof(zero)) ||
	    !inet_ntop(AF_INET6, raw, text, sizeof(text)) ||
	    sysread_at(type, sizeof(type), "%s/gid_attrs/types/%u", pdir, i) <
		    0)
		return 0;
	if (sysread_at(ndev, sizeof(ndev), "%s/gid_attrs/ndevs/%u", pdir, i) <
		    0 ||
	    strlen(ndev) >= IFNAMSIZ)
		ndev[0] = '\0';
	grown = reallocarray(p->gids, p->n_gids + 1, sizeof(*grown));
	if (!grown)
		return -1;
	p->gids = grown;
	g = malloc(sizeof(*g));
	if (!g)
		return -1;
	ring__gid__init(g);
	p->gids[p->n_gids++] = g;
	g->index = i;
	/* libibverbs: the kernel's "IB/RoCE v1" is IB on an InfiniBand
	 * port, RoCE v1 on Ethernet. */
	if (!strcmp(type, "RoCE v2"))
		snprintf(type, sizeof(type), "%s",
			 inventory_gid_type(IBV_GID_TYPE_ROCE_V2));
	else if (!strcmp(type, "IB/RoCE v1"))
		snprintf(type, sizeof(type), "%s",
			 inventory_gid_type(ethernet ? IBV_GID_TYPE_ROCE_V1
						     : IBV_GID_TYPE_IB));
	else
		type[0] = '\0';
	if (pbstr_set(&g->gid, text) < 0 || pbstr_set(&g->type, type) < 0 ||
	    pbstr_set(&g->netdev, ndev) < 0)
		return -1;
	if (!*p->netdev && ndev[0] && pbstr_set(&p->netdev, ndev) < 0)
		return -1;
	return 0;
}

static int tree_port(Ring__RdmaDevice *d, const char *ddir, unsigned port)
{
	char pdir[PATH_MAX], gdir[PATH_MAX + 8], buf[128], ndev[IFNAMSIZ + 1];
	unsigned *idx = NULL;
	Ring__RdmaPort **grown, *p;
	size_t n;
	unsigned long v;
	int ethernet, rc = -1;

	if ((size_t)snprintf(pdir, sizeof(pdir), "%s/ports/%u", ddir, port) >=
	    sizeof(pdir))
		return 0;
	grown = reallocarray(d->ports, d->n_ports + 1, sizeof(*grown));
	if (!grown)
		return -1;
	d->ports = grown;
	p = malloc(sizeof(*p));
	if (!p)
		return -1;
	ring__rdma_port__init(p);
	d->ports[d->n_ports++] = p;
	p->port = port;
	/* "4: ACTIVE": the enum, named as ibv_port_state_str names it. */
	if (sysread_at(buf, sizeof(buf), "%s/state", pdir) < 0)
		buf[0] = '\0';
	v = strtoul(buf, NULL, 10);
	if (pbstr_set(&p->state, ibv_port_state_str((enum ibv_port_state)v)) <
	    0)
		return -1;
	/* libibverbs reads an unspecified link layer as InfiniBand. */
	if (sysread_at(buf, sizeof(buf), "%s/link_layer", pdir) < 0 ||
	    strcmp(buf, "Ethernet"))
		snprintf(buf, sizeof(buf), "InfiniBand");
	ethernet = !strcmp(buf, "Ethernet");
	if (pbstr_set(&p->link_layer, buf) < 0)
		return -1;
	if (sysread_at(buf, sizeof(buf), "%s/rate", pdir) == 0)
		tree_rate(buf, &p->active_width, &p->active_speed_gbps);
	if (sysread_at(buf, sizeof(buf), "%s/active_mtu", pdir) == 0) {
		v = strtoul(buf, NULL, 10);
		if (v >= 256 && v <= 4096 && !(v & (v - 1)))
			p->active_mtu = (uint32_t)v;
	}
	idx = calloc(TREE_MAX_GIDS, sizeof(*idx));
	if (!idx)
		return -1;
	snprintf(gdir, sizeof(gdir), "%s/gids", pdir);
	n = tree_numbers(gdir, idx, TREE_MAX_GIDS);
	for (size_t i = 0; i < n; i++)
		if (tree_gid(p, pdir, idx[i], ethernet) < 0)
			goto out;
	/* No GID names a netdev (link down, no address): as the live
	 * inventory, the first entry's. */
	if (!*p->netdev &&
	    sysread_at(ndev, sizeof(ndev), "%s/gid_attrs/ndevs/0", pdir) == 0 &&
	    strlen(ndev) < IFNAMSIZ && pbstr_set(&p->netdev, ndev) < 0)
		goto out;
	rc = 0;
out:
	free(idx);
	return rc;
}

static int tree_device(Ring__Inventory *inv, const char *ibdir,
		       const char *name)
{
	char ddir[PATH_MAX], pdir[PATH_MAX + 8], buf[128];
	unsigned ports[TREE_MAX_PORTS];
	Ring__RdmaDevice **grown, *d;
	size_t n;

	if ((size_t)snprintf(ddir, sizeof(ddir), "%s/%s", ibdir, name) >=
	    sizeof(ddir))
		return 0;
	grown = reallocarray(inv->rdma_devices, inv->n_rdma_devices + 1,
			     sizeof(*grown));
	if (!grown)
		return -1;
	inv->rdma_devices = grown;
	d = malloc(sizeof(*d));
	if (!d)
		return -1;
	ring__rdma_device__init(d);
	inv->rdma_devices[inv->n_rdma_devices++] = d;
	if (pbstr_set(&d->name, name) < 0)
		return -1;
	if (sysread_at(buf, sizeof(buf), "%s/node_guid", ddir) == 0 &&
	    pbstr_set(&d->node_guid, buf) < 0)
		return -1;
	if (sysread_at(buf, sizeof(buf), "%s/fw_ver", ddir) == 0 &&
	    pbstr_set(&d->fw_ver, buf) < 0)
		return -1;
	snprintf(pdir, sizeof(pdir), "%s/ports", ddir);
	n = tree_numbers(pdir, ports, TREE_MAX_PORTS);
	for (size_t i = 0; i < n; i++) {
		if (ports[i] < 1 || ports[i] > UINT8_MAX)
			continue;
		if (tree_port(d, ddir, ports[i]) < 0)
			return -1;
	}
	return 0;
}

int inventory_tree_rdma(Ring__Inventory *inv, const struct agent_conf *conf,
			const char *sysfs_root)
{
	char ibdir[PATH_MAX], *names[TREE_MAX_DEVICES];
	struct dirent *de;
	size_t n = 0;
	int rc = 0;
	DIR *d;

	if ((size_t)snprintf(ibdir, sizeof(ibdir), "%s/sys/class/infiniband",
			     sysfs_root ? sysfs_root : "") >= sizeof(ibdir))
		return 0;
	d = opendir(ibdir);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < TREE_MAX_DEVICES) {
		if (de->d_name[0] == '.' ||
		    !agent_conf_is_rdma_device(conf, de->d_name))
			continue;
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			rc = -1;
			break;
		}
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), tree_name_cmp);
	for (size_t i = 0; i < n; i++) {
		if (!rc && tree_device(inv, ibdir, names[i]) < 0)
			rc = -1;
		free(names[i]);
	}
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}
