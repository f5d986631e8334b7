/* Chrony-style config files: parsing, value parsers, errors and warnings
 * with file:line. */
#include "cfg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "size.h"
#include "testlimits.h"
#include "tls.h"

/* A config file is a few KiB; a bound keeps a wrong path (a device, a huge
 * log) from being slurped into memory. */
#define CFG_MAX_FILE (16u * 1024 * 1024)
/* 3.2 Tbit/s: well above any single NIC port today, low enough to catch a
 * unit mix-up such as "200000G". */
#define CFG_MAX_SPEED_MBPS 3200000u

/* "file:line: message" (line 0: about the file as a whole, such as a
 * missing directive or a file that cannot be opened) to the reporter. */
static void cfg_vreport(struct cfg_ctx *ctx, int warning, const char *fmt,
			va_list ap)
{
	void (*report)(const char *, void *);
	char msg[2048];
	char line[4096];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!ctx) {
		log_warnx("%s", msg);
		return;
	}
	if (ctx->line)
		snprintf(line, sizeof(line), "%s:%u: %s",
			 ctx->file ? ctx->file : "(config)", ctx->line, msg);
	else
		snprintf(line, sizeof(line), "%s: %s",
			 ctx->file ? ctx->file : "(config)", msg);
	if (warning) {
		ctx->warnings++;
		report = ctx->report_warning;
	} else {
		ctx->errors++;
		report = ctx->report;
	}
	if (report)
		report(line, ctx->report_arg);
	else
		log_warnx("%s", line);
}

int cfg_error(struct cfg_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_vreport(ctx, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int cfg_warning(struct cfg_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_vreport(ctx, 1, fmt, ap);
	va_end(ap);
	return 0;
}

static void cfg_stderr_error(const char *msg, void *arg)
{
	fprintf(stderr, "%s: error: %s\n", (const char *)arg, msg);
}

static void cfg_stderr_warning(const char *msg, void *arg)
{
	fprintf(stderr, "%s: warning: %s\n", (const char *)arg, msg);
}

void cfg_ctx_to_stderr(struct cfg_ctx *ctx, const char *prog)
{
	ctx->report = cfg_stderr_error;
	ctx->report_warning = cfg_stderr_warning;
	ctx->report_arg = (void *)(uintptr_t)prog;
}

static const struct cfg_directive *cfg_lookup(const struct cfg_directive *tab,
					      const char *name)
{
	for (; tab && tab->name; tab++)
		if (!strcmp(tab->name, name))
			return tab;
	return NULL;
}

static int cfg_check_argc(struct cfg_ctx *ctx, const struct cfg_directive *d,
			  int nargs)
{
	if (nargs >= d->min_args && (d->max_args < 0 || nargs <= d->max_args))
		return 0;
	if (d->max_args < 0)
		return cfg_error(ctx,
				 "'%s' takes at least %d argument%s, got %d",
				 d->name, d->min_args,
				 d->min_args == 1 ? "" : "s", nargs);
	if (d->min_args == d->max_args)
		return cfg_error(ctx, "'%s' takes %d argument%s, got %d",
				 d->name, d->min_args,
				 d->min_args == 1 ? "" : "s", nargs);
	return cfg_error(ctx, "'%s' takes %d to %d arguments, got %d", d->name,
			 d->min_args, d->max_args, nargs);
}

/* Reject bytes that have no business in a text config: they are either a
 * corrupt file or an attempt to smuggle terminal escapes into our logs. */
static int cfg_check_chars(struct cfg_ctx *ctx, const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (ch == '\0')
			return cfg_error(ctx, "NUL byte at column %zu", i + 1);
		if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
			return cfg_error(
				ctx, "control character 0x%02x at column %zu",
				ch, i + 1);
	}
	return 0;
}

/* One line, without its newline. */
static void cfg_parse_line(struct cfg_ctx *ctx, const char *p, size_t len,
			   const struct cfg_directive *tab, void *arg)
{
	char buf[CFG_MAX_LINE + 1];
	char *argv[CFG_MAX_ARGS + 2];
	const struct cfg_directive *d;
	unsigned before = ctx->errors;
	char *s;
	int argc = 0;

	/* Tolerate DOS line endings rather than call '\r' a control char. */
	if (len && p[len - 1] == '\r')
		len--;
	if (len > CFG_MAX_LINE) {
		cfg_error(ctx, "line too long (more than %d characters)",
			  CFG_MAX_LINE);
		return;
	}
	if (cfg_check_chars(ctx, p, len) < 0)
		return;
	memcpy(buf, p, len);
	buf[len] = '\0';
	s = strchr(buf, '#');
	if (s)
		*s = '\0';

	for (s = buf;;) {
		s += strspn(s, " \t");
		if (!*s)
			break;
		if (argc == CFG_MAX_ARGS + 1) {
			cfg_error(ctx, "too many arguments (more than %d)",
				  CFG_MAX_ARGS);
			return;
		}
		argv[argc++] = s;
		s += strcspn(s, " \t");
		if (*s)
			*s++ = '\0';
	}
	if (!argc)
		return;
	argv[argc] = NULL;

	d = cfg_lookup(tab, argv[0]);
	if (!d) {
		cfg_error(ctx, "unknown directive '%s'", argv[0]);
		return;
	}
	if (cfg_check_argc(ctx, d, argc - 1) < 0)
		return;
	/* A handler that fails without saying why must still count. */
	if (d->fn(ctx, argc, argv, arg) < 0 && ctx->errors == before)
		cfg_error(ctx, "invalid '%s' directive", d->name);
}

int cfg_parse_buffer(const char *name, const char *buf, size_t len,
		     const struct cfg_directive *tab, void *arg,
		     struct cfg_ctx *ctx)
{
	struct cfg_ctx local = {0};
	unsigned before;
	size_t off = 0;

	if (!ctx)
		ctx = &local;
	ctx->file = name;
	ctx->line = 0;
	before = ctx->errors;
	while (off < len) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (buf + off)) : len - off;

		ctx->line++;
		cfg_parse_line(ctx, buf + off, n, tab, arg);
		off += n + (nl ? 1 : 0);
	}
	/* Later reports (cross-directive checks) are about the whole file. */
	ctx->line = 0;
	if (ctx->errors != before) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Whole file into memory; errors reported as "path: reason". */
static char *cfg_read_file(struct cfg_ctx *ctx, const char *path, size_t *lenp)
{
	size_t len = 0, cap = 4096;
	char *buf = NULL, *nbuf;
	int fd, saved;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	buf = malloc(cap);
	if (!buf)
		goto fail;
	for (;;) {
		if (len == cap) {
			if (cap >= CFG_MAX_FILE) {
				errno = EFBIG;
				goto fail;
			}
			cap *= 2;
			nbuf = realloc(buf, cap);
			if (!nbuf)
				goto fail;
			buf = nbuf;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*lenp = len;
	return buf;
fail:
	saved = errno;
	free(buf);
	if (fd >= 0)
		close(fd);
	cfg_error(ctx, "%s", strerror(saved));
	errno = saved;
	return NULL;
}

int cfg_parse_file(const char *path, const struct cfg_directive *tab, void *arg,
		   struct cfg_ctx *ctx)
{
	struct cfg_ctx local = {0};
	size_t len;
	char *buf;
	int ret;

	if (!ctx)
		ctx = &local;
	ctx->file = path;
	ctx->line = 0;
	buf = cfg_read_file(ctx, path, &len);
	if (!buf)
		return -1;
	ret = cfg_parse_buffer(path, buf, len, tab, arg, ctx);
	free(buf);
	if (ret < 0)
		errno = EINVAL;
	return ret;
}

/* Digits only: strtoull would accept blanks, signs and "0x". Returns -1 on
 * a non-number, -2 on overflow; *end points after the digits. */
static int cfg_scan_digits(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10) {
			while (p[1] >= '0' && p[1] <= '9')
				p++;
			*end = p + 1;
			return -2;
		}
		v = v * 10 + d;
	}
	*out = v;
	*end = p;
	return 0;
}

int cfg_parse_uint(struct cfg_ctx *ctx, const char *what, const char *s,
		   uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int r = cfg_scan_digits(s, &v, &end);

	if (r == -1 || *end)
		return cfg_error(ctx, "'%s': '%s' is not a number", what, s);
	if (r == -2 || v < min || v > max)
		return cfg_error(ctx, "'%s': %s is out of range (%llu..%llu)",
				 what, s, (unsigned long long)min,
				 (unsigned long long)max);
	*out = v;
	return 0;
}

/* Shortest exact unit, so range messages read like the config syntax. */
static void cfg_format_ms(char *buf, size_t len, uint64_t ms)
{
	unsigned long long v = (unsigned long long)ms;

	if (ms && ms % 3600000 == 0)
		snprintf(buf, len, "%lluh", v / 3600000);
	else if (ms && ms % 60000 == 0)
		snprintf(buf, len, "%llum", v / 60000);
	else if (ms % 1000 == 0)
		snprintf(buf, len, "%llus", v / 1000);
	else
		snprintf(buf, len, "%llums", v);
}

int cfg_parse_duration_ms(struct cfg_ctx *ctx, const char *what, const char *s,
			  uint64_t min_ms, uint64_t max_ms, uint64_t *out)
{
	char lo[32], hi[32];
	const char *end;
	uint64_t v, mult;
	int r = cfg_scan_digits(s, &v, &end);

	if (r == -1)
		goto bad;
	if (!*end || !strcmp(end, "s"))
		mult = 1000;
	else if (!strcmp(end, "ms"))
		mult = 1;
	else if (!strcmp(end, "m"))
		mult = 60000;
	else if (!strcmp(end, "h"))
		mult = 3600000;
	else
		goto bad;
	if (r == -2 || v > UINT64_MAX / mult)
		goto range;
	v *= mult;
	if (v < min_ms || v > max_ms)
		goto range;
	*out = v;
	return 0;
bad:
	return cfg_error(
		ctx, "'%s': '%s' is not a duration (e.g. 250ms, 2s, 5m, 1h)",
		what, s);
range:
	cfg_format_ms(lo, sizeof(lo), min_ms);
	cfg_format_ms(hi, sizeof(hi), max_ms);
	return cfg_error(ctx, "'%s': %s is out of range (%s..%s)", what, s, lo,
			 hi);
}

int cfg_parse_bool(struct cfg_ctx *ctx, const char *what, const char *s,
		   int *out)
{
	static const char *const yes[] = {"yes", "on", "true", "1"};
	static const char *const no[] = {"no", "off", "false", "0"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return cfg_error(
		ctx,
		"'%s': '%s' is not a boolean (yes/no, on/off, true/false, 1/0)",
		what, s);
}

int cfg_parse_speed_mbps(struct cfg_ctx *ctx, const char *what, const char *s,
			 uint64_t *out)
{
	const char *end;
	uint64_t v, mult;
	int r = cfg_scan_digits(s, &v, &end);

	if (r == -1 || !end[0] || end[1])
		goto bad;
	if (end[0] == 'G' || end[0] == 'g')
		mult = 1000;
	else if (end[0] == 'M' || end[0] == 'm')
		mult = 1;
	else
		goto bad;
	if (r == -2 || v == 0 || v > CFG_MAX_SPEED_MBPS / mult)
		return cfg_error(ctx, "'%s': %s is out of range (1M..%uG)",
				 what, s, CFG_MAX_SPEED_MBPS / 1000);
	*out = v * mult;
	return 0;
bad:
	return cfg_error(ctx, "'%s': '%s' is not a speed (e.g. 200G, 25000M)",
			 what, s);
}

int cfg_parse_size(struct cfg_ctx *ctx, const char *what, const char *s,
		   uint64_t min, uint64_t max, uint64_t *out)
{
	char why[256];

	/* One size grammar for files, ringctl and agents (size.h). */
	if (size_parse(s, min, max, out, why, sizeof(why)) == 0)
		return 0;
	return cfg_error(ctx, "'%s': %s", what, why);
}

static int cfg_name_chars_ok(const char *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)h[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
		      ch == '_'))
			return 0;
	}
	return 1;
}

/* An IPv6 literal, optionally with a "%scope" suffix (link-local). */
static int cfg_ipv6_ok(const char *h, size_t n)
{
	char addr[INET6_ADDRSTRLEN];
	struct in6_addr a;
	const char *pct = memchr(h, '%', n);
	size_t alen = pct ? (size_t)(pct - h) : n;

	if (alen >= sizeof(addr))
		return 0;
	memcpy(addr, h, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET6, addr, &a) != 1)
		return 0;
	return !pct ||
	       (n - alen > 1 && cfg_name_chars_ok(pct + 1, n - alen - 1));
}

int cfg_parse_hostport(struct cfg_ctx *ctx, const char *what, const char *s,
		       uint16_t default_port, char *host, size_t hostlen,
		       uint16_t *port)
{
	const char *h = s, *colon = NULL, *portstr = NULL, *end;
	size_t hlen;
	uint64_t v;
	int v6 = 0;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb)
			return cfg_error(ctx, "'%s': missing ']' in '%s'", what,
					 s);
		h = s + 1;
		hlen = (size_t)(rb - h);
		v6 = 1;
		if (rb[1] == ':')
			portstr = rb + 2;
		else if (rb[1])
			return cfg_error(
				ctx, "'%s': expected ':PORT' after ']' in '%s'",
				what, s);
	} else {
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':')) {
			/* Bare IPv6 literal: no way to add a port. Anything
			 * else with two colons is a typo, not a host. */
			hlen = strlen(s);
			v6 = 1;
		} else if (colon) {
			hlen = (size_t)(colon - s);
			portstr = colon + 1;
		} else {
			hlen = strlen(s);
		}
	}
	if (v6 && !cfg_ipv6_ok(h, hlen))
		return cfg_error(ctx, "'%s': invalid IPv6 address in '%s'",
				 what, s);
	if (!hlen)
		return cfg_error(ctx, "'%s': missing host in '%s'", what, s);
	if (!v6 && !cfg_name_chars_ok(h, hlen))
		return cfg_error(ctx, "'%s': invalid host in '%s'", what, s);
	if (hlen >= hostlen)
		return cfg_error(
			ctx, "'%s': host too long in '%s' (max %zu characters)",
			what, s, hostlen - 1);
	if (portstr) {
		if (cfg_scan_digits(portstr, &v, &end) < 0 || *end || v < 1 ||
		    v > 65535)
			return cfg_error(
				ctx, "'%s': invalid port in '%s' (1..65535)",
				what, s);
	} else {
		v = default_port;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	*port = (uint16_t)v;
	return 0;
}

static int cfg_url_fail(char *err, size_t errlen, int e, const char *why)
{
	snprintf(err, errlen, "%s", why);
	errno = e;
	return -1;
}

int cfg_split_http_url(const char *url, char *host, size_t hostlen,
		       uint16_t *port, char *path, size_t pathlen, char *err,
		       size_t errlen)
{
	const char *h, *end, *slash, *colon = NULL;
	size_t hn;

	if (!strncmp(url, "https://", 8))
		return cfg_url_fail(err, errlen, EINVAL,
				    "https is not supported: use plain http "
				    "to a receiver or a local relay");
	if (strncmp(url, "http://", 7))
		return cfg_url_fail(err, errlen, EINVAL,
				    "not http://HOST[:PORT]/PATH");
	h = url + 7;
	slash = strchr(h, '/');
	end = slash ? slash : h + strlen(h);
	if (*h == '[') {
		const char *rb = memchr(h, ']', (size_t)(end - h));

		if (!rb || (rb + 1 != end && rb[1] != ':'))
			return cfg_url_fail(err, errlen, EINVAL,
					    "bad [IPv6] host");
		colon = rb + 1 != end ? rb + 1 : NULL;
		hn = (size_t)(rb - h - 1);
		h++;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
		hn = (size_t)((colon ? colon : end) - h);
	}
	if (!hn)
		return cfg_url_fail(err, errlen, EINVAL, "no host");
	for (size_t i = 0; i < hn; i++)
		if ((unsigned char)h[i] <= ' ' || strchr("@?#/", h[i]))
			return cfg_url_fail(err, errlen, EINVAL,
					    "bad character in the host");
	*port = 80;
	if (colon) {
		char *e;
		unsigned long v = strtoul(colon + 1, &e, 10);

		if (e == colon + 1 || e != end || v < 1 || v > 65535)
			return cfg_url_fail(err, errlen, EINVAL,
					    "port is not 1..65535");
		*port = (uint16_t)v;
	}
	for (const char *p = end; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return cfg_url_fail(err, errlen, EINVAL,
					    "space or control character in "
					    "the path");
	if (hn >= hostlen || strlen(slash ? slash : "/") >= pathlen)
		return cfg_url_fail(err, errlen, ENAMETOOLONG, "URL too long");
	memcpy(host, h, hn);
	host[hn] = '\0';
	snprintf(path, pathlen, "%s", slash ? slash : "/");
	return 0;
}

/* Returns 1 when s is a valid node name, 0 otherwise. */
int cfg_valid_node_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 1 || n > 63 || s[0] == '-' || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
		      ch == '-'))
			return 0;
	}
	return 1;
}

int cfg_copy_string(struct cfg_ctx *ctx, const char *what, const char *s,
		    char *dst, size_t dstlen)
{
	size_t n = strlen(s);

	if (n >= dstlen)
		return cfg_error(ctx,
				 "'%s': value too long (max %zu characters)",
				 what, dstlen - 1);
	memcpy(dst, s, n + 1);
	return 0;
}

int cfg_copy_path(struct cfg_ctx *ctx, const char *what, const char *s,
		  char *dst, size_t dstlen)
{
	if (s[0] != '/')
		return cfg_error(ctx, "'%s': '%s' is not an absolute path",
				 what, s);
	return cfg_copy_string(ctx, what, s, dst, dstlen);
}

/* Every subsystem name given to log_debug() in the sources, and which
 * daemon's sources use it (common/ code: both). One table, so that -d,
 * --help and the man pages cannot drift apart: test_config_check.py
 * compares it with the sources. */
static const struct {
	const char *name;
	unsigned daemons;
} cfg_debug_subsystems[] = {
	{"agent", CFG_DAEMON_AGENT},
	{"agents", CFG_DAEMON_COORDINATOR},
	{"alerts", CFG_DAEMON_COORDINATOR},
	{"conn", CFG_DAEMON_AGENT | CFG_DAEMON_COORDINATOR},
	{"control", CFG_DAEMON_COORDINATOR},
	{"lldp", CFG_DAEMON_AGENT},
	{"metrics", CFG_DAEMON_COORDINATOR},
	{"ops", CFG_DAEMON_AGENT},
	{"probe", CFG_DAEMON_AGENT},
	{"rdma", CFG_DAEMON_AGENT},
	{"rdmatest", CFG_DAEMON_COORDINATOR},
	{"store", CFG_DAEMON_COORDINATOR},
	{"survey", CFG_DAEMON_COORDINATOR},
	{"tcptest", CFG_DAEMON_AGENT},
	{"verbs", CFG_DAEMON_AGENT},
	{"watch", CFG_DAEMON_COORDINATOR},
};

static int cfg_debug_known(enum cfg_daemon daemon, const char *name, size_t len)
{
	if (len == 3 && !strncmp(name, "all", 3))
		return 1;
	for (size_t i = 0;
	     i < sizeof(cfg_debug_subsystems) / sizeof(cfg_debug_subsystems[0]);
	     i++)
		if ((cfg_debug_subsystems[i].daemons & daemon) &&
		    strlen(cfg_debug_subsystems[i].name) == len &&
		    !strncmp(cfg_debug_subsystems[i].name, name, len))
			return 1;
	return 0;
}

int cfg_debug_check(enum cfg_daemon daemon, const char *spec, char *bad,
		    size_t badlen)
{
	const char *p = spec;

	if (badlen)
		bad[0] = '\0';
	for (;;) {
		size_t len = strcspn(p, ",");

		if (!cfg_debug_known(daemon, p, len)) {
			if (badlen)
				snprintf(bad, badlen, "%.*s", (int)len, p);
			errno = EINVAL;
			return -1;
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

void cfg_debug_names(enum cfg_daemon daemon, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (size_t i = 0;
	     i < sizeof(cfg_debug_subsystems) / sizeof(cfg_debug_subsystems[0]);
	     i++) {
		if (!(cfg_debug_subsystems[i].daemons & daemon) || used >= len)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s,",
					 cfg_debug_subsystems[i].name);
	}
	if (used < len)
		snprintf(buf + used, len - used, "all");
}

/* The cross-directive check after a parse that returned rc. */
static int cfg_load_check(const struct cfg_conf_type *type, void *conf,
			  struct cfg_ctx *ctx, int rc)
{
	if (type->check(conf, ctx) < 0 || rc < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int cfg_load_file(const char *path, const struct cfg_conf_type *type,
		  void *conf, struct cfg_ctx *ctx)
{
	struct cfg_ctx local = {0};
	int rc;

	if (!ctx)
		ctx = &local;
	rc = cfg_parse_file(path, type->directives, conf, ctx);
	if (rc < 0 && errno != EINVAL)
		return -1;
	return cfg_load_check(type, conf, ctx, rc);
}

int cfg_load_buffer(const char *name, const char *buf, size_t len,
		    const struct cfg_conf_type *type, void *conf,
		    struct cfg_ctx *ctx)
{
	struct cfg_ctx local = {0};

	if (!ctx)
		ctx = &local;
	return cfg_load_check(
		type, conf, ctx,
		cfg_parse_buffer(name, buf, len, type->directives, conf, ctx));
}

int cfg_load_daemon(const char *prog, const char *path,
		    const struct cfg_conf_type *type, void *conf)
{
	struct cfg_ctx ctx = {0};

	cfg_ctx_to_stderr(&ctx, prog);
	if (cfg_load_file(path, type, conf, &ctx) == 0 || errno == EINVAL)
		type->verify(conf, &ctx);
	return cfg_ctx_summary(&ctx, prog, path);
}

int cfg_ctx_result(const struct cfg_ctx *ctx, unsigned before)
{
	if (ctx->errors != before) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int cfg_set_string_field(struct cfg_ctx *ctx, char **argv, void *conf,
			 const struct cfg_string_field *tab, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *dst = (char *)conf + tab[i].off;

		if (strcmp(argv[0], tab[i].name))
			continue;
		if (tab[i].line)
			*(unsigned *)(void *)((char *)conf + tab[i].line) =
				ctx->line;
		if ((tab[i].path ? cfg_copy_path(ctx, argv[0], argv[1], dst,
						 tab[i].len)
				 : cfg_copy_string(ctx, argv[0], argv[1], dst,
						   tab[i].len)) == 0)
			return 0;
		dst[0] = '\0';
		return -1;
	}
	return cfg_error(ctx, "'%s': no such string setting", argv[0]);
}

int cfg_set_duration_field(struct cfg_ctx *ctx, char **argv, void *conf,
			   const struct cfg_duration_field *tab, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(argv[0], tab[i].name))
			return cfg_parse_duration_ms(
				ctx, argv[0], argv[1], tab[i].min_ms,
				tab[i].max_ms,
				(uint64_t *)(void *)((char *)conf +
						     tab[i].off));
	return cfg_error(ctx, "'%s': no such duration setting", argv[0]);
}

struct cfg_tls_lines {
	struct cfg_ctx *ctx;
	unsigned line[3]; /* by enum tls_file */
};

static void cfg_tls_report(enum tls_file file, int fatal, const char *msg,
			   void *arg)
{
	struct cfg_tls_lines *t = arg;

	t->ctx->line = file == TLS_FILE_CA     ? t->line[0]
		       : file == TLS_FILE_CERT ? t->line[1]
					       : t->line[2];
	if (fatal)
		cfg_error(t->ctx, "%s", msg);
	else
		cfg_warning(t->ctx, "%s", msg);
	t->ctx->line = 0;
}

void cfg_check_tls_files(struct cfg_ctx *ctx, int server, const char *ca,
			 unsigned line_ca, const char *cert, unsigned line_cert,
			 const char *key, unsigned line_key)
{
	struct cfg_tls_lines t = {ctx, {line_ca, line_cert, line_key}};

	if (ca[0] && cert[0] && key[0])
		tls_check_files(server, ca, cert, key, cfg_tls_report, &t);
	ctx->line = 0;
}

int cfg_usage_error(const char *prog, const char *what, const char *arg)
{
	fprintf(stderr, "%s: %s '%s'; see '%s --help'\n", prog, what, arg,
		prog);
	return 2;
}

const char *cfg_bad_option(char **argv, int optind_now, int optopt_now,
			   char *buf, size_t len)
{
	const char *arg = argv[optind_now - 1];

	if (!optopt_now || !strncmp(arg, "--", 2))
		return arg;
	snprintf(buf, len, "-%c", optopt_now);
	return buf;
}

int cfg_ctx_summary(const struct cfg_ctx *ctx, const char *prog,
		    const char *path)
{
	if (!ctx->errors)
		return (int)ctx->warnings;
	fprintf(stderr, "%s: %s: %u error%s, %u warning%s\n", prog, path,
		ctx->errors, ctx->errors == 1 ? "" : "s", ctx->warnings,
		ctx->warnings == 1 ? "" : "s");
	return -1;
}
