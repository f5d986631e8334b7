/* Launcher files for `ringctl check ranks`: which hosts, in which rank
 * order, and the same lines in another order. */
#include "check_hosts.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* What one line is, before the file's format is known. */
enum check_hosts_kind {
	CHECK_HOSTS_KIND_HOST, /* host list or hostfile */
	CHECK_HOSTS_KIND_RANK,
	CHECK_HOSTS_KIND_TORCH,
};

const char *check_hosts_format_name(enum check_hosts_format f)
{
	switch (f) {
	case CHECK_HOSTS_HOSTFILE:
		return "hostfile";
	case CHECK_HOSTS_RANKFILE:
		return "rankfile";
	case CHECK_HOSTS_LIST:
		return "host list";
	case CHECK_HOSTS_TORCHRUN:
		return "torchrun";
	}
	return "?";
}

static const char *check_hosts_kind_name(enum check_hosts_kind k)
{
	return k == CHECK_HOSTS_KIND_RANK    ? "rankfile"
	       : k == CHECK_HOSTS_KIND_TORCH ? "torchrun"
					     : "hostfile or host list";
}

static int check_hosts_fail(char *err, size_t errlen, const char *name,
			    unsigned lineno, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int check_hosts_fail(char *err, size_t errlen, const char *name,
			    unsigned lineno, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = lineno ? snprintf(err, errlen, "%s:%u: ", name, lineno)
		   : snprintf(err, errlen, "%s: ", name);
	if (n < 0 || (size_t)n >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A host as written: printable, no space, DNS-sized. */
static int check_hosts_take(struct check_host *h, const char *s, size_t len,
			    const char *name, unsigned lineno, char *err,
			    size_t errlen)
{
	if (!len)
		return check_hosts_fail(err, errlen, name, lineno,
					"no host name");
	if (len > CHECK_HOSTS_NAME_MAX)
		return check_hosts_fail(err, errlen, name, lineno,
					"host name longer than %d characters",
					CHECK_HOSTS_NAME_MAX);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return check_hosts_fail(
				err, errlen, name, lineno,
				"host name with a control or non-ASCII byte "
				"(0x%02x)",
				(unsigned char)s[i]);
	memcpy(h->host, s, len);
	h->host[len] = '\0';
	return 0;
}

/* "123" at s: its value and length, or -1. */
static int check_hosts_number(const char *s, unsigned *val, size_t *len)
{
	unsigned long v = 0;
	size_t i = 0;

	while (isdigit((unsigned char)s[i]) && i < 6)
		v = v * 10 + (unsigned long)(s[i++] - '0');
	if (!i || isdigit((unsigned char)s[i]) || v >= CHECK_HOSTS_MAX_LINES)
		return -1;
	*val = (unsigned)v;
	*len = i;
	return 0;
}

/* A hostfile's words after the host: MPI's slot counts only. */
static int check_hosts_slots_word(const char *w, size_t len)
{
	static const char *const keys[] = {
		"slots=", "max_slots=", "max-slots="};

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		size_t kl = strlen(keys[k]), i;

		if (len <= kl || strncmp(w, keys[k], kl))
			continue;
		for (i = kl; i < len && isdigit((unsigned char)w[i]); i++)
			;
		return i == len;
	}
	return 0;
}

/* "rank N=host slot=..." (content is the line up to its comment). */
static int check_hosts_rank_line(struct check_host *h, const char *line,
				 const char *content, const char *name,
				 char *err, size_t errlen)
{
	const char *p = content + 4, *host;
	size_t len;

	while (*p == ' ' || *p == '\t')
		p++;
	if (check_hosts_number(p, &h->rank, &h->rank_len) < 0)
		return check_hosts_fail(err, errlen, name, h->lineno,
					"'rank' is not followed by a rank "
					"number 0..%d",
					CHECK_HOSTS_MAX_LINES - 1);
	h->rank_off = (size_t)(p - line);
	p += h->rank_len;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p++ != '=')
		return check_hosts_fail(err, errlen, name, h->lineno,
					"rank %u: no '=' before the host",
					h->rank);
	while (*p == ' ' || *p == '\t')
		p++;
	host = p;
	len = strcspn(host, " \t");
	return check_hosts_take(h, host, len, name, h->lineno, err, errlen);
}

/* "NODE: torchrun ... --node-rank=R ...", as ranks -f torchrun prints. */
static int check_hosts_torch_line(struct check_host *h, const char *line,
				  const char *content, const char *colon,
				  const char *name, char *err, size_t errlen)
{
	static const char *const opts[] = {" --node-rank=", " --node_rank="};
	const char *p = NULL;
	size_t ol = 0;

	for (size_t k = 0; k < 2 && !p; k++) {
		p = strstr(colon, opts[k]);
		ol = strlen(opts[k]);
	}
	if (!p)
		return check_hosts_fail(err, errlen, name, h->lineno,
					"torchrun line without --node-rank=R");
	p += ol;
	if (check_hosts_number(p, &h->rank, &h->rank_len) < 0 ||
	    (p[h->rank_len] && p[h->rank_len] != ' ' && p[h->rank_len] != '\t'))
		return check_hosts_fail(err, errlen, name, h->lineno,
					"--node-rank= is not a number 0..%d",
					CHECK_HOSTS_MAX_LINES - 1);
	h->rank_off = (size_t)(p - line);
	return check_hosts_take(h, content, (size_t)(colon - content), name,
				h->lineno, err, errlen);
}

/* "host [slots=N ...]": *slots set when a slot count is there. */
static int check_hosts_host_line(struct check_host *h, const char *content,
				 int *slots, const char *name, char *err,
				 size_t errlen)
{
	size_t len = strcspn(content, " \t");
	const char *p = content + len;

	if (check_hosts_take(h, content, len, name, h->lineno, err, errlen))
		return -1;
	for (;;) {
		size_t wl;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			return 0;
		wl = strcspn(p, " \t");
		if (!check_hosts_slots_word(p, wl))
			return check_hosts_fail(
				err, errlen, name, h->lineno,
				"'%.*s' after the host is not slots=N or "
				"max_slots=N",
				(int)(wl > 40 ? 40 : wl), p);
		*slots = 1;
		p += wl;
	}
}

/* One line (NUL-terminated, no newline) into h, or 1 when it holds no
 * host (blank or a comment). */
static int check_hosts_one(struct check_host *h, char *line,
			   enum check_hosts_kind *kind, int *slots,
			   const char *name, char *err, size_t errlen)
{
	char *content = line, *end, saved;
	const char *colon;

	h->line = line;
	h->rank_len = 0;
	while (*content == ' ' || *content == '\t')
		content++;
	/* The comment goes, so that "host slots=1  # rank 0: n1" reads as
	 * the host it names; the line keeps it for the corrected order. */
	end = content + strcspn(content, "#");
	while (end > content && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end == content)
		return 1;
	saved = *end;
	*end = '\0';
	h->len = (size_t)(end - line);
	colon = strstr(content, ": torchrun");
	if (colon && (colon[10] == ' ' || !colon[10])) {
		*kind = CHECK_HOSTS_KIND_TORCH;
		if (check_hosts_torch_line(h, line, content, colon, name, err,
					   errlen))
			return -1;
	} else if (!strncmp(content, "rank", 4) &&
		   (content[4] == ' ' || content[4] == '\t')) {
		*kind = CHECK_HOSTS_KIND_RANK;
		if (check_hosts_rank_line(h, line, content, name, err, errlen))
			return -1;
	} else {
		*kind = CHECK_HOSTS_KIND_HOST;
		if (check_hosts_host_line(h, content, slots, name, err, errlen))
			return -1;
	}
	/* Only the host and the number were read: the line as written. */
	*end = saved;
	return 0;
}

static int check_hosts_by_rank(const void *a, const void *b)
{
	const struct check_host *x = a, *y = b;

	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Rankfile, torchrun: ranks 0..n-1, each once; then in that order. */
static int check_hosts_ranks(struct check_hosts *out, const char *name,
			     char *err, size_t errlen)
{
	qsort(out->v, out->n, sizeof(out->v[0]), check_hosts_by_rank);
	for (size_t i = 0; i < out->n; i++) {
		if (i && out->v[i].rank == out->v[i - 1].rank)
			return check_hosts_fail(
				err, errlen, name, out->v[i].lineno,
				"rank %u again (line %u has it)",
				out->v[i].rank, out->v[i - 1].lineno);
		if (out->v[i].rank != i)
			return check_hosts_fail(err, errlen, name,
						out->v[i].lineno,
						"rank %u, but no rank %zu: "
						"ranks must be 0..%zu",
						out->v[i].rank, i, out->n - 1);
	}
	return 0;
}

/* A line printed back (the corrected order) is text of bounded length:
 * no control byte but tab. */
static int check_hosts_text(const char *s, size_t len, const char *name,
			    unsigned lineno, char *err, size_t errlen)
{
	if (len > CHECK_HOSTS_LINE_MAX)
		return check_hosts_fail(err, errlen, name, lineno,
					"longer than %d characters",
					CHECK_HOSTS_LINE_MAX);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!c)
			return check_hosts_fail(err, errlen, name, lineno,
						"a NUL byte: not a text file");
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return check_hosts_fail(err, errlen, name, lineno,
						"a control byte (0x%02x)", c);
	}
	return 0;
}

/* Lines are copied whole (with their comments restored on output). */
static int check_hosts_split(const char *buf, size_t len, const char *name,
			     struct check_hosts *out, char *err, size_t errlen)
{
	enum check_hosts_kind first = CHECK_HOSTS_KIND_HOST, kind;
	unsigned lineno = 0, first_line = 0;
	int slots = 0;
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - buf) - pos : len - pos;
		struct check_host *h = &out->v[out->n];
		char *line;
		int r;

		if (++lineno > CHECK_HOSTS_MAX_LINES)
			return check_hosts_fail(err, errlen, name, 0,
						"more than %d lines",
						CHECK_HOSTS_MAX_LINES);
		if (ll && buf[pos + ll - 1] == '\r')
			ll--;
		if (check_hosts_text(buf + pos, ll, name, lineno, err, errlen))
			return -1;
		line = strndup(buf + pos, ll);
		if (!line)
			return check_hosts_fail(err, errlen, name, 0, "%s",
						strerror(errno));
		pos += (nl ? (size_t)(nl - buf) - pos + 1 : len - pos);
		memset(h, 0, sizeof(*h));
		h->lineno = lineno;
		r = check_hosts_one(h, line, &kind, &slots, name, err, errlen);
		if (r) {
			free(line);
			if (r < 0)
				return -1;
			continue;
		}
		out->n++;
		if (!first_line) {
			first = kind;
			first_line = lineno;
		} else if (kind != first) {
			return check_hosts_fail(
				err, errlen, name, lineno,
				"a %s line, but line %u made this a %s",
				check_hosts_kind_name(kind), first_line,
				check_hosts_kind_name(first));
		}
	}
	if (!out->n)
		return check_hosts_fail(err, errlen, name, 0,
					"no hosts (only blank lines and "
					"comments)");
	out->format = first == CHECK_HOSTS_KIND_RANK	? CHECK_HOSTS_RANKFILE
		      : first == CHECK_HOSTS_KIND_TORCH ? CHECK_HOSTS_TORCHRUN
		      : slots				? CHECK_HOSTS_HOSTFILE
							: CHECK_HOSTS_LIST;
	if (first != CHECK_HOSTS_KIND_HOST)
		return check_hosts_ranks(out, name, err, errlen);
	return 0;
}

int check_hosts_parse(const char *buf, size_t len, const char *name,
		      struct check_hosts *out, char *err, size_t errlen)
{
	size_t lines = 1;

	memset(out, 0, sizeof(*out));
	if (len > CHECK_HOSTS_MAX_BYTES)
		return check_hosts_fail(err, errlen, name, 0,
					"larger than %d bytes",
					CHECK_HOSTS_MAX_BYTES);
	for (size_t i = 0; i < len; i++)
		lines += buf[i] == '\n';
	if (lines > CHECK_HOSTS_MAX_LINES + 1)
		return check_hosts_fail(err, errlen, name, 0,
					"more than %d lines",
					CHECK_HOSTS_MAX_LINES);
	out->v = calloc(lines, sizeof(*out->v));
	if (!out->v)
		return check_hosts_fail(err, errlen, name, 0, "%s",
					strerror(errno));
	if (check_hosts_split(buf, len, name, out, err, errlen) < 0) {
		check_hosts_free(out);
		return -1;
	}
	return 0;
}

int check_hosts_read(FILE *f, const char *name, struct check_hosts *out,
		     char *err, size_t errlen)
{
	/* One byte over the bound tells a file that is too large. */
	char *buf = malloc(CHECK_HOSTS_MAX_BYTES + 1);
	size_t len;
	int r;

	memset(out, 0, sizeof(*out));
	if (!buf)
		return check_hosts_fail(err, errlen, name, 0, "%s",
					strerror(errno));
	len = fread(buf, 1, CHECK_HOSTS_MAX_BYTES + 1, f);
	if (ferror(f)) {
		free(buf);
		return check_hosts_fail(err, errlen, name, 0, "read error");
	}
	r = check_hosts_parse(buf, len, name, out, err, errlen);
	free(buf);
	return r;
}

void check_hosts_free(struct check_hosts *h)
{
	for (size_t i = 0; h->v && i < h->n; i++)
		free(h->v[i].line);
	free(h->v);
	h->v = NULL;
	h->n = 0;
}

int check_hosts_line(const struct check_hosts *h, size_t i, unsigned rank,
		     char *buf, size_t len)
{
	const struct check_host *e = &h->v[i];
	size_t after = e->rank_off + e->rank_len;
	int n;

	if (!e->rank_len)
		n = snprintf(buf, len, "%.*s", (int)e->len, e->line);
	else
		n = snprintf(buf, len, "%.*s%u%.*s", (int)e->rank_off, e->line,
			     rank, (int)(e->len - after), e->line + after);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
