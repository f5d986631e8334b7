/* How one thing gets into a capture (capture_int.h): a source file read
 * within the source's sys/ or proc/ (never through a link leading out),
 * bounded in size, anonymised by kind when asked, and written beneath
 * DIR.tmp without following links; directories of files, relative links
 * like the fixtures' own, and the counts that stop a capture rather than
 * let it grow without bound. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture_int.h"
#include "sysread.h"

int cap_fail(struct cap *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, c->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

void cap_note(struct cap *c, const char *fmt, ...)
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
int cap_mkdirs(struct cap *c, const char *rel)
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
int cap_write(struct cap *c, const char *rel, const void *data, size_t n)
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
int cap_within(const struct cap *c, const char *src, int proc, char *rel,
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
int cap_read(struct cap *c, const char *src, int proc, char *buf, size_t max,
	     size_t *n)
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
int cap_file(struct cap *c, const char *src, const char *dst, enum cap_kind k,
	     size_t max)
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
int cap_dir_files(struct cap *c, const char *src, const char *dst)
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
int cap_link(struct cap *c, const char *link, const char *target)
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

int cap_files(struct cap *c, const char *src, const char *dst,
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
