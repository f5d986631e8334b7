/* ring-agent --capture: the node's sysfs/procfs subset, addresses and
 * verbs attributes as a loadable tree (capture.h). */
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
#include "inventory_tree.h"
#include "sysread.h"

/* Bounds on what one capture reads and writes. */
#define CAP_MAX_FILES 20000
#define CAP_MAX_BYTES (64ULL << 20)
#define CAP_ATTR_MAX 4096      /* a sysfs attribute is at most a page */
#define CAP_PROC_MAX (1 << 20) /* meminfo, arp, route */
#define CAP_CONFIG 256	       /* PCI config: the header and capabilities */
#define CAP_MAX_IFACES 1024
#define CAP_MAX_IBDEVS 64
#define CAP_MAX_PORTS 16
#define CAP_MAX_GIDS 1024
#define CAP_MAX_STATS 512 /* files in one statistics/counters directory */
#define CAP_MAX_DEVS 4096 /* PCI and IB device directories */
#define CAP_NOTES 8192

enum cap_kind {
	CAP_RAW,
	CAP_MAC,  /* one MAC address */
	CAP_ID,	  /* a GUID or switch id */
	CAP_GID,  /* one GID */
	CAP_HOST, /* the hostname */
	CAP_ARP,  /* proc/net/arp */
	CAP_ROUTE /* proc/net/route */
};

struct cap {
	char sys[PATH_MAX];  /* the source's sys/, resolved */
	char proc[PATH_MAX]; /* the source's proc/, resolved */
	const char *tree;    /* sysfs_root when it is a tree, else NULL */
	char out[PATH_MAX];  /* DIR.tmp */
	int anon, live;
	struct capture_anon an;
	struct capture_result *res;
	char notes[CAP_NOTES];
	char **done; /* device directories captured (sys-relative) */
	size_t n_done;
	char *why;
	size_t whylen;
};

static int cap_fail(struct cap *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int cap_fail(struct cap *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, c->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

static void cap_note(struct cap *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void cap_note(struct cap *c, const char *fmt, ...)
{
	size_t used = strlen(c->notes);
	va_list ap;

	c->res->notes++;
	if (used + 2 >= sizeof(c->notes))
		return;
	va_start(ap, fmt);
	vsnprintf(c->notes + used, sizeof(c->notes) - used, fmt, ap);
	va_end(ap);
	used = strlen(c->notes);
	if (used + 1 < sizeof(c->notes))
		memcpy(c->notes + used, "\n", 2);
}

/* mkdir -p of OUT/rel. */
static int cap_mkdirs(struct cap *c, const char *rel)
{
	char path[PATH_MAX];
	size_t base = strlen(c->out) + 1;

	if (sysread_path(path, sizeof(path), "%s/%s", c->out, rel) < 0)
		return cap_fail(c, "%s/%s: path too long", c->out, rel);
	for (char *p = path + base;; p++) {
		if (*p != '/' && *p)
			continue;
		char saved = *p;

		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return cap_fail(c, "%s: %s", path, strerror(errno));
		*p = saved;
		if (!saved)
			break;
	}
	return 0;
}

static int cap_count(struct cap *c, size_t bytes, const char *rel)
{
	if (c->res->files >= CAP_MAX_FILES)
		return cap_fail(c,
				"%s/%s: more than %d files: the capture "
				"stops rather than grow without bound",
				c->out, rel, CAP_MAX_FILES);
	if (c->res->bytes + bytes > CAP_MAX_BYTES)
		return cap_fail(c, "%s/%s: more than %llu MiB in all", c->out,
				rel, CAP_MAX_BYTES >> 20);
	c->res->files++;
	c->res->bytes += bytes;
	return 0;
}

/* Write OUT/rel (its directories made), never through a link. */
static int cap_write(struct cap *c, const char *rel, const void *data, size_t n)
{
	char path[PATH_MAX], dir[PATH_MAX], *slash;
	size_t done = 0;
	int fd;

	if (cap_count(c, n, rel) < 0)
		return -1;
	if (sysread_path(dir, sizeof(dir), "%s", rel) < 0 ||
	    sysread_path(path, sizeof(path), "%s/%s", c->out, rel) < 0)
		return cap_fail(c, "%s/%s: path too long", c->out, rel);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		if (cap_mkdirs(c, dir) < 0)
			return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return cap_fail(c, "%s: %s", path, strerror(errno));
	while (done < n) {
		ssize_t w = write(fd, (const char *)data + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int e = errno;

			close(fd);
			return cap_fail(c, "%s: %s", path, strerror(e));
		}
		done += (size_t)w;
	}
	if (close(fd) < 0)
		return cap_fail(c, "%s: %s", path, strerror(errno));
	return 0;
}

/* The path of src resolved, if it lies within the source's sys/ (or
 * proc/ when proc is set); its part after that into rel. 0, or -1 when
 * it does not exist or lies outside. */
static int cap_within(const struct cap *c, const char *src, int proc, char *rel,
		      size_t len)
{
	const char *top = proc ? c->proc : c->sys;
	char real[PATH_MAX];
	size_t n = strlen(top);

	if (!realpath(src, real))
		return -1;
	if (strncmp(real, top, n) || (real[n] != '/' && real[n] != '\0')) {
		errno = EXDEV;
		return -1;
	}
	if (rel &&
	    sysread_path(rel, len, "%s", real[n] ? real + n + 1 : "") < 0)
		return -1;
	return 0;
}

/* Read at most max bytes of src into buf (max + 1 long); 1 when there is
 * nothing to capture (absent, refused by the kernel: EINVAL on a down
 * link's speed, EOPNOTSUPP on phys_port_name), noted when it is a
 * permission. */
static int cap_read(struct cap *c, const char *src, int proc, char *buf,
		    size_t max, size_t *n)
{
	int fd;

	*n = 0;
	if (cap_within(c, src, proc, NULL, 0) < 0) {
		if (errno == EXDEV)
			cap_note(c, "%s: outside %s/: left out", src,
				 proc ? c->proc : c->sys);
		return 1;
	}
	fd = open(src, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == EACCES || errno == EPERM)
			cap_note(c, "%s: %s", src, strerror(errno));
		return 1;
	}
	for (;;) {
		ssize_t r = read(fd, buf + *n, max + 1 - *n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			if (errno == EACCES || errno == EPERM)
				cap_note(c, "%s: %s", src, strerror(errno));
			close(fd);
			return 1;
		}
		if (r == 0)
			break;
		*n += (size_t)r;
		if (*n > max) {
			*n = max;
			cap_note(c, "%s: cut at %zu bytes", src, max);
			break;
		}
	}
	close(fd);
	buf[*n] = '\0';
	return 0;
}

/* One line of proc/net/arp with its IP and MAC replaced. */
static void cap_anon_arp_line(struct cap *c, const char *line, char *out,
			      size_t len)
{
	char ip[64], type[16], flags[16], mac[64], mask[16], dev[64];
	char aip[64], amac[64];

	if (sscanf(line, "%63s %15s %15s %63s %15s %63s", ip, type, flags, mac,
		   mask, dev) != 6 ||
	    capture_anon_ipv4_text(&c->an, ip, aip, sizeof(aip)) < 0) {
		snprintf(out, len, "%s", line);
		return;
	}
	capture_anon_hex_text(&c->an, mac, amac, sizeof(amac));
	snprintf(out, len, "%-16s %-10s %-11s %-17s %-8s %s\n", aip, type,
		 flags, amac, mask, dev);
}

/* One line of proc/net/route with destination and gateway replaced: the
 * kernel prints each __be32 as a native %08X. */
static void cap_anon_route_line(struct cap *c, const char *line, char *out,
				size_t len)
{
	char ifn[64], rest[192];
	unsigned dst, gw, flags, ref, use, metric, mask;
	uint32_t d, g, m;

	if (sscanf(line, "%63s %X %X %X %u %u %u %X %191[^\n]", ifn, &dst, &gw,
		   &flags, &ref, &use, &metric, &mask, rest) != 9) {
		snprintf(out, len, "%s", line);
		return;
	}
	m = ntohl(mask);
	d = ntohl(dst);
	g = ntohl(gw);
	/* A destination stays a network: its mapped prefix, host bits 0. */
	d = capture_anon_ipv4(&c->an, d) & m;
	if (g)
		g = capture_anon_ipv4(&c->an, g);
	snprintf(out, len, "%s\t%08X\t%08X\t%04X\t%u\t%u\t%u\t%08X\t%s\n", ifn,
		 htonl(d), htonl(g), flags, ref, use, metric, mask, rest);
}

/* The text of a file of kind k, rewritten by the anonymiser into out. */
static int cap_anon_text(struct cap *c, enum cap_kind k, const char *in,
			 char **out, size_t *n)
{
	size_t cap = strlen(in) * 2 + 256, used = 0;
	char *buf = malloc(cap), word[256];
	const char *p = in;

	if (!buf)
		return -1;
	buf[0] = '\0';
	if (k == CAP_ARP || k == CAP_ROUTE) {
		int first = 1;

		while (*p) {
			size_t l = strcspn(p, "\n");
			char line[512], done[512];

			snprintf(line, sizeof(line), "%.*s\n", (int)l, p);
			if (first)
				snprintf(done, sizeof(done), "%s", line);
			else if (k == CAP_ARP)
				cap_anon_arp_line(c, line, done, sizeof(done));
			else
				cap_anon_route_line(c, line, done,
						    sizeof(done));
			first = 0;
			if (used + strlen(done) + 1 < cap) {
				memcpy(buf + used, done, strlen(done) + 1);
				used += strlen(done);
			}
			p += l;
			if (*p == '\n')
				p++;
		}
	} else {
		snprintf(word, sizeof(word), "%.*s", (int)strcspn(in, "\n"),
			 in);
		if (k == CAP_MAC || k == CAP_ID)
			capture_anon_hex_text(&c->an, word, buf, cap);
		else if (k == CAP_GID)
			capture_anon_ipv6_text(&c->an, word, buf, cap);
		else
			capture_anon_hostname(&c->an, word, buf, cap);
		used = strlen(buf);
		buf[used++] = '\n';
		buf[used] = '\0';
	}
	*out = buf;
	*n = used;
	return 0;
}

/* Copy src (a sys/ or proc/ file) to OUT/dst. 0 also when there was
 * nothing to copy. */
static int cap_file(struct cap *c, const char *src, const char *dst,
		    enum cap_kind k, size_t max)
{
	char *buf = malloc(max + 1), *anon = NULL;
	int proc = !strncmp(dst, "proc/", 5), rc;
	size_t n;

	if (!buf)
		return cap_fail(c, "%s: out of memory", src);
	rc = cap_read(c, src, proc, buf, max, &n);
	if (rc > 0) {
		free(buf);
		return 0;
	}
	if (c->anon && k != CAP_RAW && n) {
		if (cap_anon_text(c, k, buf, &anon, &n) < 0) {
			free(buf);
			return cap_fail(c, "%s: out of memory", src);
		}
	}
	rc = cap_write(c, dst, anon ? anon : buf, n);
	free(anon);
	free(buf);
	return rc;
}

/* Files of one directory, as they are (statistics, counters). */
static int cap_dir_files(struct cap *c, const char *src, const char *dst)
{
	char s[PATH_MAX], d[PATH_MAX];
	struct dirent *de;
	unsigned n = 0;
	int rc = 0;
	DIR *dir;

	if (cap_within(c, src, 0, NULL, 0) < 0)
		return 0;
	dir = opendir(src);
	if (!dir)
		return 0;
	while (!rc && (de = readdir(dir))) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (++n > CAP_MAX_STATS) {
			cap_note(c, "%s: more than %d files: the rest left out",
				 src, CAP_MAX_STATS);
			break;
		}
		if (sysread_path(s, sizeof(s), "%s/%s", src, de->d_name) < 0 ||
		    sysread_path(d, sizeof(d), "%s/%s", dst, de->d_name) < 0 ||
		    lstat(s, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		rc = cap_file(c, s, d, CAP_RAW, CAP_ATTR_MAX);
	}
	closedir(dir);
	return rc;
}

/* A relative link OUT/link -> OUT/sys/target (both OUT-relative, target
 * without its "sys/"), like the fixtures' links. */
static int cap_link(struct cap *c, const char *link, const char *target)
{
	char path[PATH_MAX], text[PATH_MAX] = "", dir[PATH_MAX];
	size_t depth = 0;

	for (const char *p = link; *p; p++)
		depth += *p == '/';
	if (!depth || 3 * depth + strlen(target) + 1 > sizeof(text))
		return cap_fail(c, "%s/%s: link too long", c->out, link);
	/* link "sys/class/net/IF/device": 4 directories, 3 up to sys/. */
	for (size_t i = 1; i < depth; i++)
		memcpy(text + 3 * (i - 1), "../", 4);
	memcpy(text + strlen(text), target, strlen(target) + 1);
	if (sysread_path(dir, sizeof(dir), "%s", link) < 0 ||
	    sysread_path(path, sizeof(path), "%s/%s", c->out, link) < 0)
		return cap_fail(c, "%s/%s: path too long", c->out, link);
	*strrchr(dir, '/') = '\0';
	if (cap_mkdirs(c, dir) < 0 || cap_count(c, 0, link) < 0)
		return -1;
	if (symlink(text, path) < 0)
		return cap_fail(c, "%s: %s", path, strerror(errno));
	return 0;
}

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

static int cap_files(struct cap *c, const char *src, const char *dst,
		     const char *const *names, size_t n, enum cap_kind k)
{
	char s[PATH_MAX], d[PATH_MAX];

	for (size_t i = 0; i < n; i++) {
		if (sysread_path(s, sizeof(s), "%s/%s", src, names[i]) < 0 ||
		    sysread_path(d, sizeof(d), "%s/%s", dst, names[i]) < 0)
			return cap_fail(c, "%s/%s: path too long", src,
					names[i]);
		if (cap_file(c, s, d, k, CAP_ATTR_MAX) < 0)
			return -1;
	}
	return 0;
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
