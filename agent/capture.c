/* ring-agent --capture: the node's sysfs/procfs subset, addresses and
 * verbs attributes as a loadable tree (capture.h): what is captured, the
 * manifest, the destination. How each file gets in: capture_copy.c. */
#include "capture.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "capture_anon.h"
#include "capture_int.h"
#include "inventory_tree.h"
#include "sysread.h"

/* First time for this sys-relative device directory? */
static int cap_first(struct cap *c, const char *rel)
{
	char **grown;

	for (size_t i = 0; i < c->n_done; i++)
		if (!strcmp(c->done[i], rel))
			return 0;
	if (c->n_done >= CAP_MAX_DEVS) {
		cap_note(c, "sys/%s: more than %d devices: left out", rel,
			 CAP_MAX_DEVS);
		return 0;
	}
	grown = reallocarray(c->done, c->n_done + 1, sizeof(*grown));
	if (!grown)
		return -1;
	c->done = grown;
	c->done[c->n_done] = strdup(rel);
	if (!c->done[c->n_done])
		return -1;
	c->n_done++;
	return 1;
}

#define CAP_N(a) (sizeof(a) / sizeof((a)[0]))

/* One port of an IB device: state, rate, link layer, the populated GID
 * entries, counters. */
static int cap_ib_port(struct cap *c, const char *src, const char *dst)
{
	static const char *const attrs[] = {
		"state", "phys_state", "rate", "link_layer", "lid", "cap_mask"};
	char s[PATH_MAX], d[PATH_MAX], gid[128];
	struct dirent *de;
	unsigned n = 0;
	size_t len;
	int rc = 0;
	DIR *dir;

	if (cap_files(c, src, dst, attrs, CAP_N(attrs), CAP_RAW) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		const char *sub = i ? "hw_counters" : "counters";

		if (sysread_path(s, sizeof(s), "%s/%s", src, sub) < 0 ||
		    sysread_path(d, sizeof(d), "%s/%s", dst, sub) < 0 ||
		    cap_dir_files(c, s, d) < 0)
			return -1;
	}
	if (sysread_path(s, sizeof(s), "%s/gids", src) < 0)
		return 0;
	dir = opendir(s);
	if (!dir)
		return 0;
	while (!rc && (de = readdir(dir))) {
		char gs[PATH_MAX], gd[PATH_MAX];
		static const char *const sub[] = {"gid_attrs/types",
						  "gid_attrs/ndevs"};

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (++n > CAP_MAX_GIDS) {
			cap_note(c, "%s: more than %d GIDs: the rest left out",
				 s, CAP_MAX_GIDS);
			break;
		}
		/* Unpopulated entries (all zero) say nothing: left out. */
		if (sysread_path(gs, sizeof(gs), "%s/%s", s, de->d_name) < 0 ||
		    cap_read(c, gs, 0, gid, sizeof(gid) - 1, &len) != 0 ||
		    strspn(gid, "0:\n") == len)
			continue;
		if (sysread_path(gd, sizeof(gd), "%s/gids/%s", dst,
				 de->d_name) < 0)
			continue;
		rc = cap_file(c, gs, gd, CAP_GID, CAP_ATTR_MAX);
		for (size_t i = 0; !rc && i < CAP_N(sub); i++)
			if (sysread_path(gs, sizeof(gs), "%s/%s/%s", src,
					 sub[i], de->d_name) == 0 &&
			    sysread_path(gd, sizeof(gd), "%s/%s/%s", dst,
					 sub[i], de->d_name) == 0)
				rc = cap_file(c, gs, gd, CAP_RAW, CAP_ATTR_MAX);
	}
	closedir(dir);
	return rc;
}

/* An IB device directory at the sys-relative rel. */
static int cap_ib_dev(struct cap *c, const char *rel)
{
	static const char *const attrs[] = {"node_type", "fw_ver", "hca_type",
					    "board_id"};
	static const char *const ids[] = {"node_guid", "sys_image_guid"};
	char src[PATH_MAX], dst[PATH_MAX], s[PATH_MAX], d[PATH_MAX];
	struct dirent *de;
	unsigned n = 0;
	int rc, first = cap_first(c, rel);
	DIR *dir;

	if (first <= 0)
		return first < 0 ? cap_fail(c, "out of memory") : 0;
	if (sysread_path(src, sizeof(src), "%s/%s", c->sys, rel) < 0 ||
	    sysread_path(dst, sizeof(dst), "sys/%s", rel) < 0)
		return cap_fail(c, "sys/%s: path too long", rel);
	if (cap_mkdirs(c, dst) < 0 ||
	    cap_files(c, src, dst, attrs, CAP_N(attrs), CAP_RAW) < 0 ||
	    cap_files(c, src, dst, ids, CAP_N(ids), CAP_ID) < 0)
		return -1;
	if (sysread_path(s, sizeof(s), "%s/ports", src) < 0)
		return 0;
	dir = opendir(s);
	if (!dir)
		return 0;
	rc = 0;
	while (!rc && (de = readdir(dir))) {
		char ps[PATH_MAX];

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (++n > CAP_MAX_PORTS) {
			cap_note(c, "%s: more than %d ports: the rest left out",
				 s, CAP_MAX_PORTS);
			break;
		}
		if (sysread_path(ps, sizeof(ps), "%s/%s", s, de->d_name) < 0 ||
		    sysread_path(d, sizeof(d), "%s/ports/%s", dst, de->d_name) <
			    0)
			continue;
		rc = cap_ib_port(c, ps, d);
	}
	closedir(dir);
	return rc;
}

static const char *const cap_pci_attrs[] = {
	"current_link_speed",
	"current_link_width",
	"max_link_speed",
	"max_link_width",
	"vendor",
	"device",
	"subsystem_vendor",
	"subsystem_device",
	"class",
	"numa_node",
};

/* The link files and the first 256 bytes of config of a PCI function. */
static int cap_pci_files(struct cap *c, const char *rel)
{
	char src[PATH_MAX], dst[PATH_MAX], s[PATH_MAX], d[PATH_MAX];
	struct stat st;

	if (sysread_path(src, sizeof(src), "%s/%s", c->sys, rel) < 0 ||
	    sysread_path(dst, sizeof(dst), "sys/%s", rel) < 0)
		return cap_fail(c, "sys/%s: path too long", rel);
	if (cap_mkdirs(c, dst) < 0 ||
	    cap_files(c, src, dst, cap_pci_attrs, CAP_N(cap_pci_attrs),
		      CAP_RAW) < 0)
		return -1;
	if (sysread_path(s, sizeof(s), "%s/config", src) < 0 ||
	    sysread_path(d, sizeof(d), "%s/config", dst) < 0)
		return 0;
	if (stat(s, &st) < 0)
		return 0;
	if (cap_file(c, s, d, CAP_RAW, CAP_CONFIG) < 0)
		return -1;
	/* Not root: the kernel shows the first 64 bytes only. */
	if (sysread_path(d, sizeof(d), "%s/%s/config", c->out, dst) == 0 &&
	    stat(d, &st) == 0 && st.st_size < CAP_CONFIG) {
		c->res->full_config = 0;
		cap_note(c,
			 "sys/%s/config: %lld bytes, not %d (run as root "
			 "for the capabilities)",
			 rel, (long long)st.st_size, CAP_CONFIG);
	}
	return 0;
}

static int cap_is_pci_address(const char *s)
{
	unsigned a, b, d, f;
	char end;

	return sscanf(s, "%x:%x:%x.%x%c", &a, &b, &d, &f, &end) == 4;
}

/* A device directory (sys-relative rel) behind a netdev: the PCI
 * function, its driver link, its RDMA devices and its upstream port. */
static int cap_device(struct cap *c, const char *rel)
{
	char src[PATH_MAX], s[PATH_MAX], t[PATH_MAX], l[PATH_MAX];
	char parent[PATH_MAX], *slash;
	struct dirent *de;
	int first = cap_first(c, rel), rc = 0;
	DIR *dir;

	if (first <= 0)
		return first < 0 ? cap_fail(c, "out of memory") : 0;
	if (cap_pci_files(c, rel) < 0)
		return -1;
	if (sysread_path(src, sizeof(src), "%s/%s", c->sys, rel) < 0 ||
	    sysread_path(s, sizeof(s), "%s/driver", src) < 0)
		return 0;
	if (cap_within(c, s, 0, t, sizeof(t)) == 0) {
		if (sysread_path(l, sizeof(l), "sys/%s/driver", rel) < 0)
			return cap_fail(c, "sys/%s: path too long", rel);
		if (cap_link(c, l, t) < 0 ||
		    (sysread_path(l, sizeof(l), "sys/%s", t) == 0 &&
		     cap_mkdirs(c, l) < 0))
			return -1;
	}
	if (sysread_path(s, sizeof(s), "%s/infiniband", src) == 0 &&
	    (dir = opendir(s))) {
		while (!rc && (de = readdir(dir))) {
			if (de->d_name[0] == '.')
				continue;
			if (sysread_path(t, sizeof(t), "%s/infiniband/%s", rel,
					 de->d_name) < 0)
				continue;
			rc = cap_ib_dev(c, t);
		}
		closedir(dir);
		if (rc < 0)
			return -1;
	}
	/* The upstream port: the link's other end, if it is a PCI
	 * function (not the host bridge). */
	snprintf(parent, sizeof(parent), "%s", rel);
	slash = strrchr(parent, '/');
	if (slash) {
		*slash = '\0';
		slash = strrchr(parent, '/');
		if (cap_is_pci_address(slash ? slash + 1 : parent) &&
		    cap_first(c, parent) > 0 && cap_pci_files(c, parent) < 0)
			return -1;
	}
	return 0;
}

static const char *const cap_net_attrs[] = {
	"ifindex",	   "iflink",	       "mtu",
	"flags",	   "carrier",	       "operstate",
	"speed",	   "duplex",	       "type",
	"dev_id",	   "dev_port",	       "phys_port_name",
	"carrier_changes", "carrier_up_count", "carrier_down_count",
};

static int cap_arp_sysctls(struct cap *c, const char *ifname)
{
	static const char *const names[] = {"arp_ignore", "arp_announce"};
	char src[PATH_MAX], dst[PATH_MAX];

	if (sysread_path(src, sizeof(src), "%s/sys/net/ipv4/conf/%s", c->proc,
			 ifname) < 0 ||
	    sysread_path(dst, sizeof(dst), "proc/sys/net/ipv4/conf/%s",
			 ifname) < 0)
		return cap_fail(c, "%s: path too long", ifname);
	return cap_files(c, src, dst, names, CAP_N(names), CAP_RAW);
}

/* One entry of class/net: a device as a directory of its attributes
 * with a relative device link, or a plain file (bonding_masters). */
static int cap_netdev(struct cap *c, const char *name)
{
	static const char *const mac[] = {"address"};
	static const char *const id[] = {"phys_switch_id"};
	char src[PATH_MAX], dst[PATH_MAX], s[PATH_MAX], d[PATH_MAX];
	char rel[PATH_MAX];
	struct stat st;

	if (sysread_path(src, sizeof(src), "%s/class/net/%s", c->sys, name) <
		    0 ||
	    sysread_path(dst, sizeof(dst), "sys/class/net/%s", name) < 0)
		return cap_fail(c, "%s: path too long", name);
	if (lstat(src, &st) < 0)
		return 0;
	if (S_ISREG(st.st_mode))
		return cap_file(c, src, dst, CAP_RAW, CAP_ATTR_MAX);
	if (cap_within(c, src, 0, NULL, 0) < 0 || stat(src, &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		return 0;
	if (cap_mkdirs(c, dst) < 0 ||
	    cap_files(c, src, dst, cap_net_attrs, CAP_N(cap_net_attrs),
		      CAP_RAW) < 0 ||
	    cap_files(c, src, dst, mac, 1, CAP_MAC) < 0 ||
	    cap_files(c, src, dst, id, 1, CAP_ID) < 0)
		return -1;
	if (sysread_path(s, sizeof(s), "%s/statistics", src) < 0 ||
	    sysread_path(d, sizeof(d), "%s/statistics", dst) < 0 ||
	    cap_dir_files(c, s, d) < 0)
		return -1;
	if (sysread_path(s, sizeof(s), "%s/device", src) == 0 &&
	    cap_within(c, s, 0, rel, sizeof(rel)) == 0) {
		if (sysread_path(d, sizeof(d), "%s/device", dst) < 0 ||
		    cap_link(c, d, rel) < 0 || cap_device(c, rel) < 0)
			return -1;
	} else if (errno == EXDEV) {
		cap_note(c, "%s: outside %s/: left out", s, c->sys);
	}
	return cap_arp_sysctls(c, name);
}

static int cap_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in a directory, sorted, at most max. */
static int cap_list(struct cap *c, const char *dir, size_t max, char ***out,
		    size_t *n)
{
	struct dirent *de;
	DIR *d;

	*out = NULL;
	*n = 0;
	if (cap_within(c, dir, 0, NULL, 0) < 0)
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char **grown;

		if (de->d_name[0] == '.')
			continue;
		if (*n >= max) {
			cap_note(c,
				 "%s: more than %zu entries: the rest left "
				 "out",
				 dir, max);
			break;
		}
		grown = reallocarray(*out, *n + 1, sizeof(*grown));
		if (!grown || !(grown[*n] = strdup(de->d_name))) {
			if (grown)
				*out = grown;
			closedir(d);
			return cap_fail(c, "%s: out of memory", dir);
		}
		*out = grown;
		(*n)++;
	}
	closedir(d);
	qsort(*out, *n, sizeof(**out), cap_name_cmp);
	return 0;
}

static void cap_list_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int cap_net(struct cap *c)
{
	char dir[PATH_MAX], **names;
	size_t n;
	int rc = 0;

	if (sysread_path(dir, sizeof(dir), "%s/class/net", c->sys) < 0 ||
	    cap_list(c, dir, CAP_MAX_IFACES, &names, &n) < 0)
		return -1;
	if (!n)
		cap_note(c, "%s: no network interfaces", dir);
	for (size_t i = 0; !rc && i < n; i++)
		rc = cap_netdev(c, names[i]);
	cap_list_free(names, n);
	if (!rc)
		rc = cap_arp_sysctls(c, "all");
	if (!rc)
		rc = cap_arp_sysctls(c, "default");
	return rc;
}

/* class/infiniband: each device a relative link to its directory under
 * devices/ (a fixture's plain directory copied in place). */
static int cap_ib(struct cap *c)
{
	char dir[PATH_MAX], s[PATH_MAX], rel[PATH_MAX], l[PATH_MAX], **names;
	size_t n;
	int rc = 0;

	if (sysread_path(dir, sizeof(dir), "%s/class/infiniband", c->sys) < 0 ||
	    cap_list(c, dir, CAP_MAX_IBDEVS, &names, &n) < 0)
		return -1;
	for (size_t i = 0; !rc && i < n; i++) {
		if (sysread_path(s, sizeof(s), "%s/%s", dir, names[i]) < 0 ||
		    cap_within(c, s, 0, rel, sizeof(rel)) < 0 ||
		    sysread_path(l, sizeof(l), "sys/class/infiniband/%s",
				 names[i]) < 0)
			continue;
		/* l + 4: l without "sys/"; equal for a fixture's directory. */
		if (strcmp(rel, l + 4) && cap_link(c, l, rel) < 0)
			rc = -1;
		if (!rc)
			rc = cap_ib_dev(c, rel);
	}
	cap_list_free(names, n);
	return rc;
}

/* What ibv_query_port says and sysfs does not: the active MTU, into
 * ports/N/active_mtu of each captured device. */
static int cap_verbs(struct cap *c)
{
	struct ibv_device **list;
	int n = 0, rc = 0;

	list = ibv_get_device_list(&n);
	if (!list)
		return 0;
	for (int i = 0; !rc && i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);
		struct ibv_device_attr attr;
		struct ibv_context *ctx = ibv_open_device(list[i]);

		if (!ctx) {
			cap_note(c, "%s: ibv_open_device: %s", name,
				 strerror(errno));
			continue;
		}
		memset(&attr, 0, sizeof(attr));
		if (ibv_query_device(ctx, &attr) != 0)
			attr.phys_port_cnt = 0;
		for (unsigned p = 1; !rc && p <= attr.phys_port_cnt; p++) {
			struct ibv_port_attr pa;
			char rel[PATH_MAX], path[PATH_MAX], text[16];
			struct stat st;

			memset(&pa, 0, sizeof(pa));
			if (ibv_query_port(ctx, (uint8_t)p, &pa) != 0 ||
			    pa.active_mtu < IBV_MTU_256 ||
			    pa.active_mtu > IBV_MTU_4096)
				continue;
			if (sysread_path(rel, sizeof(rel),
					 "sys/class/infiniband/%s/ports/%u",
					 name, p) < 0 ||
			    sysread_path(path, sizeof(path), "%s/%s", c->out,
					 rel) < 0 ||
			    stat(path, &st) < 0)
				continue;
			snprintf(text, sizeof(text), "%u\n",
				 128u << pa.active_mtu);
			if (sysread_path(rel + strlen(rel),
					 sizeof(rel) - strlen(rel),
					 "/active_mtu") == 0)
				rc = cap_write(c, rel, text, strlen(text));
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return rc;
}

static int cap_proc(struct cap *c)
{
	static const struct {
		const char *name;
		enum cap_kind kind;
	} files[] = {
		{"meminfo", CAP_RAW},
		{"net/arp", CAP_ARP},
		{"net/route", CAP_ROUTE},
		{"sys/kernel/hostname", CAP_HOST},
		{"sys/kernel/osrelease", CAP_RAW},
	};
	char s[PATH_MAX], d[PATH_MAX];

	for (size_t i = 0; i < CAP_N(files); i++) {
		if (sysread_path(s, sizeof(s), "%s/%s", c->proc,
				 files[i].name) < 0 ||
		    sysread_path(d, sizeof(d), "proc/%s", files[i].name) < 0)
			return cap_fail(c, "%s: path too long", c->proc);
		if (cap_file(c, s, d, files[i].kind, CAP_PROC_MAX) < 0)
			return -1;
	}
	return 0;
}

/* addrs: getifaddrs' IPv4 addresses (a tree's own addrs file when the
 * source is one), "IFNAME ADDRESS/PREFIX" a line. */
static int cap_addrs(struct cap *c)
{
	struct ifaddrs *list = NULL;
	char why[PATH_MAX + 128];
	size_t cap = 4096, used = 0;
	char *text;
	int rc;

	if (c->tree) {
		rc = inventory_tree_addrs(c->tree, &list, why, sizeof(why));
		if (rc < 0)
			return cap_fail(c, "%s", why);
		if (rc > 0)
			return 0; /* no addrs file: none written */
	} else if (getifaddrs(&list) < 0) {
		return cap_fail(c, "getifaddrs: %s", strerror(errno));
	}
	text = malloc(cap);
	rc = text ? 0 : cap_fail(c, "addrs: out of memory");
	for (const struct ifaddrs *a = list; !rc && a; a = a->ifa_next) {
		const struct sockaddr_in *sin, *mask;
		char line[IFNAMSIZ + 64];
		uint32_t v;
		unsigned prefix = 32;
		int n;

		if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET ||
		    !a->ifa_name)
			continue;
		sin = (const struct sockaddr_in *)a->ifa_addr;
		mask = (const struct sockaddr_in *)a->ifa_netmask;
		if (mask && mask->sin_family == AF_INET)
			prefix = (unsigned)__builtin_popcount(
				mask->sin_addr.s_addr);
		v = ntohl(sin->sin_addr.s_addr);
		if (c->anon)
			v = capture_anon_ipv4(&c->an, v);
		n = snprintf(line, sizeof(line), "%s %u.%u.%u.%u/%u\n",
			     a->ifa_name, v >> 24, (v >> 16) & 0xff,
			     (v >> 8) & 0xff, v & 0xff, prefix);
		if (n < 0 || (size_t)n >= sizeof(line))
			continue;
		if (used + (size_t)n + 1 > cap) {
			char *grown;

			if (cap >= CAP_PROC_MAX) {
				cap_note(c, "addrs: cut at %d bytes",
					 CAP_PROC_MAX);
				break;
			}
			grown = realloc(text, cap * 2);
			if (!grown) {
				rc = cap_fail(c, "addrs: out of memory");
				break;
			}
			text = grown;
			cap *= 2;
		}
		memcpy(text + used, line, (size_t)n + 1);
		used += (size_t)n;
	}
	if (!rc)
		rc = cap_write(c, "addrs", text, used);
	free(text);
	if (c->tree)
		inventory_tree_addrs_free(list);
	else
		freeifaddrs(list);
	return rc;
}

static int cap_manifest(struct cap *c, const char *dir)
{
	char when[64], text[CAP_NOTES + 4096];
	time_t now = time(NULL);
	struct tm tm;
	int n;

	if (!gmtime_r(&now, &tm) ||
	    !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(when, sizeof(when), "unknown");
	n = snprintf(
		text, sizeof(text),
		"ringd capture (ring-agent --capture)\n"
		"agent: ring-agent " RING_VERSION "\n"
		"captured: %s\n"
		"source: %s (sys), %s (proc)%s\n"
		"uid: %u%s\n"
		"anonymised: %s\n"
		"files: %u, %llu bytes\n"
		"\n"
		"What is here: the files ring-agent reads. sys/class/net/*: "
		"each interface's attributes and statistics, its device link; "
		"sys/devices/...: each interface's PCI function (link speed "
		"and width, the first 256 bytes of config, the driver link), "
		"its upstream port's, and its RDMA devices (GUIDs, firmware, "
		"each port's state, rate, link layer, populated GID entries "
		"and counters); sys/class/infiniband: links to those; "
		"ports/N/active_mtu is not a kernel file: ibv_query_port's "
		"active MTU, which sysfs does not show. proc/: meminfo, the "
		"ARP sysctls, net/arp, net/route, the hostname and kernel "
		"release. addrs: the IPv4 addresses getifaddrs gives, "
		"\"IFNAME ADDRESS/PREFIX\" a line.\n"
		"\n"
		"Load it: sysfs_root %s and procfs_root %s in an agent.conf, "
		"then ring-agent -c THAT --print-inventory.\n"
		"%s%s",
		when, c->sys, c->proc,
		c->tree ? " (a tree, addrs from it)" : "", (unsigned)getuid(),
		c->res->full_config ? ""
				    : " (not root: PCI config cut to 64 bytes)",
		c->anon ? "yes: IPv4 addresses (first and last octet kept, "
			  "prefixes and shared subnets kept), GIDs, MAC "
			  "addresses, GUIDs and switch ids (vendor OUI kept), "
			  "ARP and route entries, the hostname; interface "
			  "names are kept (an enx name spells its MAC)"
			: "no: this node's addresses, MACs, GUIDs and hostname "
			  "are as they are",
		c->res->files + 1, c->res->bytes, dir, dir,
		c->notes[0] ? "\nLeft out or cut:\n" : "", c->notes);
	if (n < 0)
		return cap_fail(c, "MANIFEST: %s", strerror(errno));
	if ((size_t)n >= sizeof(text))
		n = (int)sizeof(text) - 1;
	return cap_write(c, "MANIFEST", text, (size_t)n);
}

static int cap_rm_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* Refuse a DIR with something in it (an empty one is replaced). */
static int cap_check_dest(const char *dir, char *why, size_t len)
{
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (lstat(dir, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, len, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len,
			 "%s: exists and is not a directory; name a new "
			 "directory",
			 dir);
		return -1;
	}
	d = opendir(dir);
	if (!d) {
		snprintf(why, len, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			closedir(d);
			snprintf(why, len,
				 "%s: exists and is not empty; name a new "
				 "directory",
				 dir);
			return -1;
		}
	closedir(d);
	return 0;
}

static int cap_source(struct cap *c, const struct agent_conf *conf)
{
	char path[PATH_MAX];

	if (sysread_path(path, sizeof(path), "%s/sys", conf->sysfs_root) < 0 ||
	    !realpath(path, c->sys))
		return cap_fail(c, "%s/sys: %s (sysfs_root)", conf->sysfs_root,
				strerror(errno));
	if (sysread_path(path, sizeof(path), "%s/proc", conf->procfs_root) <
		    0 ||
	    !realpath(path, c->proc))
		return cap_fail(c, "%s/proc: %s (procfs_root)",
				conf->procfs_root, strerror(errno));
	c->tree = conf->sysfs_root[0] ? conf->sysfs_root : NULL;
	c->live = !conf->sysfs_root[0];
	return 0;
}

int capture_run(const struct agent_conf *conf, const char *dir, int anonymise,
		struct capture_result *res, char *why, size_t len)
{
	struct cap *c = calloc(1, sizeof(*c));
	char d[PATH_MAX];
	int rc = -1, made = 0;

	memset(res, 0, sizeof(*res));
	res->full_config = 1;
	if (!c) {
		snprintf(why, len, "%s: out of memory", dir);
		return -1;
	}
	c->res = res;
	c->why = why;
	c->whylen = len;
	c->anon = anonymise;
	if (!dir || !*dir) {
		cap_fail(c, "--capture: name a directory to write");
		goto out;
	}
	/* "DIR/" is DIR: the temporary name is a sibling, not inside. */
	if (sysread_path(d, sizeof(d), "%s", dir) < 0) {
		cap_fail(c, "%s: path too long", dir);
		goto out;
	}
	for (size_t n = strlen(d); n > 1 && d[n - 1] == '/'; n--)
		d[n - 1] = '\0';
	dir = d;
	if (cap_check_dest(dir, why, len) < 0)
		goto out;
	if (sysread_path(c->out, sizeof(c->out), "%s.tmp", dir) < 0) {
		cap_fail(c, "%s: path too long", dir);
		goto out;
	}
	if (mkdir(c->out, 0700) < 0) {
		if (errno == EEXIST)
			cap_fail(c,
				 "%s: exists (a capture cut short?): remove "
				 "it or name another directory",
				 c->out);
		else
			cap_fail(c, "%s: %s", c->out, strerror(errno));
		goto out;
	}
	made = 1;
	if (cap_source(c, conf) < 0 ||
	    (anonymise && capture_anon_init(&c->an) < 0 &&
	     cap_fail(c, "anonymise: no random key: %s", strerror(errno))) ||
	    cap_net(c) < 0 || cap_ib(c) < 0 || (c->live && cap_verbs(c) < 0) ||
	    cap_proc(c) < 0 || cap_addrs(c) < 0 || cap_manifest(c, dir) < 0)
		goto out;
	if (rename(c->out, dir) < 0) {
		cap_fail(c, "%s -> %s: %s", c->out, dir, strerror(errno));
		goto out;
	}
	made = 0;
	rc = 0;
out:
	if (made)
		nftw(c->out, cap_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	cap_list_free(c->done, c->n_done);
	explicit_bzero(&c->an, sizeof(c->an));
	free(c);
	return rc;
}
