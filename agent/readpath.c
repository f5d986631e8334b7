/* Read test paths: the text check and the open beneath a root (see
 * readpath.h). */
#include "readpath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

/* openat2 answers EAGAIN when a rename anywhere raced a ".." it resolved
 * (a symlink's relative target): asked again this many times. */
#define READPATH_EAGAIN_TRIES 8

static int readpath_openat2_on = 1; /* atomic */

void readpath_use_openat2(int on)
{
	__atomic_store_n(&readpath_openat2_on, on, __ATOMIC_RELAXED);
}

/* in without "//", "." and a trailing "/", into out (olen): its length,
 * -1 when in is not absolute, -2 on a ".." component, -3 too long. */
static int readpath_normalise(const char *in, char *out, size_t olen)
{
	size_t o = 0;
	const char *p = in;

	if (!in || in[0] != '/')
		return -1;
	while (*p) {
		const char *c;
		size_t k;

		while (*p == '/')
			p++;
		c = p;
		while (*p && *p != '/')
			p++;
		k = (size_t)(p - c);
		if (k == 0 || (k == 1 && c[0] == '.'))
			continue;
		if (k == 2 && c[0] == '.' && c[1] == '.')
			return -2;
		if (o + 1 + k + 1 > olen)
			return -3;
		out[o++] = '/';
		memcpy(out + o, c, k);
		o += k;
	}
	if (o == 0) {
		if (olen < 2)
			return -3;
		out[o++] = '/';
	}
	out[o] = '\0';
	return (int)o;
}

int readpath_check(const char (*roots)[AGENT_CONF_PATH_LEN], unsigned n,
		   const char *path, char *norm, size_t nlen, unsigned *root,
		   size_t *rel, char *why, size_t wlen)
{
	char list[400] = "";
	size_t used = 0;
	int len;

	if (n == 0 || !roots) {
		snprintf(why, wlen,
			 "read tests are off on this node: agent.conf has no "
			 "read_path (add 'read_path DIR' for the directories "
			 "it may read)");
		return -1;
	}
	len = readpath_normalise(path, norm, nlen);
	if (len == -1) {
		snprintf(why, wlen, "'%.256s' is not an absolute path",
			 path ? path : "");
		return -1;
	}
	if (len == -2) {
		snprintf(why, wlen,
			 "'%.256s' has a '..' component: give the path "
			 "without one (read tests take none)",
			 path);
		return -1;
	}
	if (len < 0) {
		snprintf(why, wlen,
			 "'%.64s...' is too long (at most %zu bytes)", path,
			 nlen - 1);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		char r[AGENT_CONF_PATH_LEN];
		int rl;

		used += (size_t)snprintf(
			list + used,
			used < sizeof(list) ? sizeof(list) - used : 0, "%s%s",
			i ? ", " : "", roots[i]);
		if (used >= sizeof(list))
			used = sizeof(list);
		rl = readpath_normalise(roots[i], r, sizeof(r));
		if (rl < 0)
			continue; /* agent_conf refuses these: never matches */
		if (rl == 1) {	  /* "/" */
			*root = i;
			*rel = 1;
			return 0;
		}
		if (!strncmp(norm, r, (size_t)rl) &&
		    (norm[rl] == '\0' || norm[rl] == '/')) {
			*root = i;
			*rel = (size_t)rl + (norm[rl] == '/');
			return 0;
		}
	}
	/* The same words whether the path exists or not: nothing outside
	 * the roots was looked at. */
	snprintf(why, wlen, "'%.256s' is outside read_path (%s)", path, list);
	return -1;
}

static int readpath_openat2(int dfd, const char *rel, int flags)
{
	struct open_how how;
	int fd = -1;

	memset(&how, 0, sizeof(how));
	how.flags = (unsigned long long)(flags | O_CLOEXEC);
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	for (int i = 0; i < READPATH_EAGAIN_TRIES; i++) {
		fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd;
}

/* One component at a time, no symlink followed (O_NOFOLLOW; a middle
 * one that is a link reads ELOOP). rel is normalised: no "..", no ".",
 * no empty component. */
static int readpath_walk(int rootfd, const char *rel, int flags)
{
	char buf[PATH_MAX], *save = NULL, *comp, *next;
	int cur = rootfd, fd, e;

	if (strlen(rel) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, rel, strlen(rel) + 1);
	comp = strtok_r(buf, "/", &save);
	if (!comp)
		return openat(rootfd, ".", flags | O_CLOEXEC);
	for (;;) {
		next = strtok_r(NULL, "/", &save);
		if (!next) {
			fd = openat(cur, comp, flags | O_CLOEXEC | O_NOFOLLOW);
			e = errno;
			break;
		}
		fd = openat(cur, comp,
			    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		if (fd < 0 && e == ENOTDIR) {
			struct stat st;

			if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				e = ELOOP;
		}
		if (fd < 0)
			break;
		if (cur != rootfd)
			close(cur);
		cur = fd;
		comp = next;
	}
	if (cur != rootfd)
		close(cur);
	errno = e;
	return fd;
}

int readpath_open(const char *root, const char *rel, const char *what,
		  int flags, char *why, size_t wlen)
{
	int rootfd, fd, e, walked = 0;

	/* The root as configured, symlinks in it followed: the operator's
	 * word (docs/SECURITY.md: it and the directories above it are
	 * root's to change). */
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		snprintf(why, wlen, "read_path %.256s cannot be opened: %s",
			 root, strerror(errno));
		return -1;
	}
	fd = -1;
	errno = ENOSYS;
	if (__atomic_load_n(&readpath_openat2_on, __ATOMIC_RELAXED))
		fd = readpath_openat2(rootfd, *rel ? rel : ".", flags);
	if (fd < 0 && errno == ENOSYS) {
		walked = 1;
		fd = readpath_walk(rootfd, rel, flags);
	}
	e = errno;
	close(rootfd);
	if (fd >= 0)
		return fd;
	switch (e) {
	case ENOENT:
		snprintf(why, wlen, "'%.256s': not found", what);
		break;
	case ENOTDIR:
		snprintf(why, wlen,
			 "'%.256s': a component on the way is not a directory",
			 what);
		break;
	case EACCES:
	case EPERM:
		snprintf(why, wlen, "'%.256s': permission denied", what);
		break;
	case EXDEV:
		snprintf(why, wlen,
			 "'%.256s': a symbolic link on the way leads outside "
			 "read_path %.256s (links are followed only within it)",
			 what, root);
		break;
	case ELOOP:
		snprintf(why, wlen,
			 walked ? "'%.256s': a symbolic link on the way (this "
				  "kernel has no openat2: read tests follow "
				  "no link)"
				: "'%.256s': a symbolic link on the way is a "
				  "/proc magic link or a loop (refused)",
			 what);
		break;
	case EAGAIN:
		snprintf(why, wlen,
			 "'%.256s': renames under read_path kept changing the "
			 "way while it was opened; try again",
			 what);
		break;
	default:
		snprintf(why, wlen, "'%.256s': %s", what, strerror(e));
		break;
	}
	return -1;
}
