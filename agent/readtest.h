/* Read tests (ringctl plan --weights): how fast this node's local disk
 * reads a file, or a directory's regular files (one level, by name),
 * sequentially, 4 MiB at a time with O_DIRECT where the filesystem allows
 * it. Only paths that resolve inside a configured read_path are read, and
 * only for reading. One test at a time, in a worker thread (path
 * resolution included), so the event loop keeps serving heartbeats. */
#ifndef RING_READTEST_H
#define RING_READTEST_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "agent_conf.h"

/* The read size and buffer alignment (O_DIRECT needs the alignment). */
#define READTEST_BLOCK (4u << 20)
/* Files read from one directory: the first this many readdir gives,
 * sorted by name; the rest are not read. */
#define READTEST_MAX_FILES 4096

struct readtest_result {
	char path[4096]; /* resolved */
	uint64_t bytes;
	double seconds;
	unsigned files;
	int direct;	     /* every file read with O_DIRECT */
	int stopped_at_time; /* max_ms ended it before max_bytes */
	char fstype[32];     /* "" unknown */
	char device[32];     /* "major:minor" */
	char error[320];     /* "" = measured */
	/* "" = the path was accepted; else why it was refused (outside
	 * read_path, missing, ...): the agent answers an error, not a
	 * result. */
	char refused[600];
};

/* path resolved (realpath) inside one of c's read_path (each resolved
 * too; c NULL = none),
 * into resolved (PATH_MAX). 0, or -1 with why: not absolute, does not
 * exist, outside every root (named), or no roots at all (naming the
 * read_path option). */
int readtest_path_check(const struct agent_conf *c, const char *path,
			char *resolved, size_t rlen, char *why, size_t wlen);
/* The part of readtest_path_check that touches no filesystem (read_path
 * configured, path absolute), for the event loop. 0, or -1 with why. */
int readtest_path_precheck(const struct agent_conf *c, const char *path,
			   char *why, size_t wlen);

/* Read resolved (a regular file or a directory) until max_bytes or
 * max_ms, whichever comes first; *stop set non-zero from another thread
 * ends it early. Fills r (r->error on failure). 0, or -1. */
int readtest_read(const char *resolved, uint64_t max_bytes, unsigned max_ms,
		  const int *stop, struct readtest_result *r);

struct readtest;
/* r is the worker's; valid during the callback only. The test frees
 * itself after done returns: do not readtest_free it then. */
typedef void (*readtest_done_fn)(const struct readtest_result *r, void *arg);
/* In a worker thread: readtest_path_check of path against c's read_path
 * (copied now), then readtest_read of the resolved path; done runs on
 * base's loop, with r->refused set when the check refused it. The
 * resolution is the worker's because realpath on a slow or hung
 * filesystem would stall the loop. NULL with why on failure. */
struct readtest *readtest_start(struct event_base *base,
				const struct agent_conf *c, const char *path,
				uint64_t max_bytes, unsigned max_ms,
				readtest_done_fn done, void *arg, char *why,
				size_t wlen);
/* Stop the read (it ends within one block) and let go of the test at
 * once: a worker still running (a hung filesystem can hold it) frees it
 * when it ends, so the loop never waits on a join. done is not called.
 * NULL is fine. */
void readtest_free(struct readtest *t);

#endif
