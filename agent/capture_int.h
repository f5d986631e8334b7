/* ring-agent --capture's private parts, shared by capture.c (what is
 * captured: devices, interfaces, verbs, proc files, addresses, the
 * manifest) and capture_copy.c (how one file, directory of files or link
 * gets into the capture: bounded, kept within the source's sys/ and
 * proc/, anonymised when asked). Not for other modules. */
#ifndef RING_CAPTURE_INT_H
#define RING_CAPTURE_INT_H

#include <limits.h>
#include <stddef.h>

#include "capture.h"
#include "capture_anon.h"

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

/* Say why in c->why; -1. */
int cap_fail(struct cap *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* One line of the capture's notes (what was left out and why). */
void cap_note(struct cap *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* mkdir -p of OUT/rel. */
int cap_mkdirs(struct cap *c, const char *rel);
/* Write OUT/rel (its directories made), never through a link, counted
 * against the capture's bounds. */
int cap_write(struct cap *c, const char *rel, const void *data, size_t n);
/* 0 when src resolves within the source's sys/ (proc/ when proc is set),
 * its part after that into rel (when not NULL); else -1 (EXDEV: outside). */
int cap_within(const struct cap *c, const char *src, int proc, char *rel,
	       size_t len);
/* At most max bytes of src into buf (max + 1 long); 1 when there is
 * nothing to capture. */
int cap_read(struct cap *c, const char *src, int proc, char *buf, size_t max,
	     size_t *n);
/* Copy src (a sys/ or proc/ file) to OUT/dst, anonymised as kind k when
 * the capture is; 0 also when there was nothing to copy. */
int cap_file(struct cap *c, const char *src, const char *dst, enum cap_kind k,
	     size_t max);
/* The regular files of directory src into dst, as they are. */
int cap_dir_files(struct cap *c, const char *src, const char *dst);
/* A relative link OUT/link -> OUT/sys/target. */
int cap_link(struct cap *c, const char *link, const char *target);
/* The files names[0..n) of src into dst, as kind k. */
int cap_files(struct cap *c, const char *src, const char *dst,
	      const char *const *names, size_t n, enum cap_kind k);

#endif
