/* Where a read test may read: a requested path checked against the
 * configured read_path roots by its text alone (absolute, no "..", at or
 * below a root as configured), so that a refusal depends on nothing
 * outside the roots and reveals nothing about it; then opened beneath its
 * root without any component leaving it (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS; where the kernel lacks openat2, a walk of one
 * component at a time that follows no symlink at all). */
#ifndef RING_READPATH_H
#define RING_READPATH_H

#include <stddef.h>

#include "agent_conf.h"

/* The text check, touching no filesystem (safe on the event loop). path
 * is normalised ("//" and "." dropped) into norm (nlen); on success *root
 * is the index of the first root that holds it and *rel the offset in
 * norm of the part below the root ("" for the root itself). -1 with why:
 * no roots (naming the read_path option), not absolute, a ".." component,
 * or outside every root: one message for every outside path, whatever is
 * or is not there. */
int readpath_check(const char (*roots)[AGENT_CONF_PATH_LEN], unsigned n,
		   const char *path, char *norm, size_t nlen, unsigned *root,
		   size_t *rel, char *why, size_t wlen);

/* rel ("" = the root itself) opened beneath root with flags (O_RDONLY and
 * the like; O_CLOEXEC is added). Symlinks inside the root are followed
 * when they stay in it (openat2); one that leads out, a /proc magic link
 * or, without openat2, any symlink is refused. May block on a hung
 * filesystem: for a worker thread. fd, or -1 with why naming the
 * requested path (what, as asked) and the problem below the root. */
int readpath_open(const char *root, const char *rel, const char *what,
		  int flags, char *why, size_t wlen);

/* Tests: 0 makes readpath_open take the walk, as when openat2 is ENOSYS;
 * 1 (the default) tries openat2 first. */
void readpath_use_openat2(int on);

#endif
