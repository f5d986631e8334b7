/* The order a launcher will use, read from its own file: an MPI hostfile,
 * an Open MPI rankfile, a plain host list, or the per-node torchrun lines
 * that `ringctl -f torchrun ranks` prints; and the same file's lines put
 * in another order. */
#ifndef RING_CHECK_HOSTS_H
#define RING_CHECK_HOSTS_H

#include <stddef.h>
#include <stdio.h>

/* Input bounds: a launcher file for a ring is a few lines; anything near
 * these is not one, and is refused rather than read into memory. */
#define CHECK_HOSTS_MAX_BYTES (1024 * 1024)
#define CHECK_HOSTS_MAX_LINES 4096
#define CHECK_HOSTS_LINE_MAX 4096
#define CHECK_HOSTS_NAME_MAX 255 /* a DNS name's length */

enum check_hosts_format {
	CHECK_HOSTS_HOSTFILE, /* "host [slots=N] [max_slots=N]" */
	CHECK_HOSTS_RANKFILE, /* "rank N=host slot=..." */
	CHECK_HOSTS_LIST,     /* "host" */
	CHECK_HOSTS_TORCHRUN, /* "NODE: torchrun ... --node-rank=R ..." */
};

/* One host of the order, in rank order (rankfile and torchrun: by their
 * rank number; the others: by line). */
struct check_host {
	char host[CHECK_HOSTS_NAME_MAX + 1];
	char *line;	 /* the line as written, no newline */
	size_t len;	 /* its length without a trailing comment */
	unsigned lineno; /* 1-based */
	unsigned rank;	 /* rankfile / torchrun: the number written */
	size_t rank_off; /* where that number is in line */
	size_t rank_len; /* 0: the format has none */
};

struct check_hosts {
	enum check_hosts_format format;
	struct check_host *v;
	size_t n;
};

const char *check_hosts_format_name(enum check_hosts_format f);
/* Parse buf (len bytes; name for messages). 0, or -1 with
 * "NAME:LINE: ..." (or "NAME: ...") in err and nothing to free. */
int check_hosts_parse(const char *buf, size_t len, const char *name,
		      struct check_hosts *out, char *err, size_t errlen);
/* Read f to its end, at most CHECK_HOSTS_MAX_BYTES, and parse it. */
int check_hosts_read(FILE *f, const char *name, struct check_hosts *out,
		     char *err, size_t errlen);
void check_hosts_free(struct check_hosts *h);
/* Host i's line as it reads with rank number `rank` (rankfile, torchrun;
 * the line as it is for the others), without its trailing comment (one
 * that ranks printed names the old rank). 0, or -1 when it does not
 * fit. */
int check_hosts_line(const struct check_hosts *h, size_t i, unsigned rank,
		     char *buf, size_t len);

#endif
