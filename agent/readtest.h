/* Read tests (ringctl plan --weights): how fast this node's local disk
 * reads a file, or a directory's regular files (one level, by name),
 * sequentially, 4 MiB at a time with O_DIRECT where the filesystem allows
 * it. Only paths at or below a configured read_path (by their text, then
 * opened beneath it: readpath.h) are read, and only for reading. One test
 * at a time, in a worker thread (every open included), so the event loop
 * keeps serving heartbeats. */
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
	char path[4096]; /* as asked, normalised ("//", "." dropped) */
	uint64_t bytes;
	double seconds;
	unsigned files;
	int direct;	     /* every file read with O_DIRECT */
	int stopped_at_time; /* max_ms ended it before max_bytes */
	char fstype[32];     /* "" unknown */
	char device[32];     /* "major:minor" */
	char error[320];     /* "" = measured */
	/* "" = the path was accepted and opened; else why not (outside
	 * read_path, not found below it, a link leading out, ...): the
	 * agent answers an error, not a result. */
	char refused[600];
};

/* The text check of readpath.h against c's read_path (c NULL = none),
 * touching no filesystem: for the event loop, so that an outside path is
 * refused at once. 0, or -1 with why. */
int readtest_path_check(const struct agent_conf *c, const char *path, char *why,
			size_t wlen);

/* The text check against roots (n_roots of them), then path opened
 * beneath its root (readpath_open) and read, a regular file or a
 * directory's regular files, until max_bytes or max_ms, whichever comes
 * first; *stop set non-zero from another thread ends it early. Fills r:
 * r->refused when the path was refused or could not be opened, r->error
 * when the read failed. 0, or -1. Blocks on a hung filesystem: for a
 * worker thread. */
int readtest_read(const char (*roots)[AGENT_CONF_PATH_LEN], unsigned n_roots,
		  const char *path, uint64_t max_bytes, unsigned max_ms,
		  const int *stop, struct readtest_result *r);

struct readtest;
/* r is the worker's; valid during the callback only. The test frees
 * itself after done returns: do not readtest_free it then. */
typedef void (*readtest_done_fn)(const struct readtest_result *r, void *arg);
/* In a worker thread: readtest_read of path against c's read_path
 * (copied now); done runs on base's loop, with r->refused set when the
 * path was refused. Opening is the worker's because a slow or hung
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
