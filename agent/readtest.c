/* Read tests: see readtest.h. Read-only by construction: every open is
 * O_RDONLY|O_NOFOLLOW, and only below a resolved read_path. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "readtest.h"

/* O_DIRECT wants offsets and sizes in multiples of the logical block;
 * 4096 covers every disk in use. */
#define READTEST_ALIGN 4096u
/* Workers alive at once, orphaned ones included: a session dropped while
 * a read hangs on a dead filesystem leaves its thread behind, and a peer
 * repeating that must not pile threads up without end. */
#define READTEST_MAX_WORKERS 4

static int readtest_workers; /* atomic */

/* The refusals that need no filesystem access. */
static int readtest_precheck_n(unsigned n, const char *path, char *why,
			       size_t wlen)
{
	if (n == 0) {
		snprintf(why, wlen,
			 "read tests are off on this node: agent.conf has no "
			 "read_path (add 'read_path DIR' for the directories "
			 "it may read)");
		return -1;
	}
	if (!path || path[0] != '/') {
		snprintf(why, wlen, "'%.256s' is not an absolute path",
			 path ? path : "");
		return -1;
	}
	return 0;
}

int readtest_path_precheck(const struct agent_conf *c, const char *path,
			   char *why, size_t wlen)
{
	return readtest_precheck_n(c ? c->n_read_paths : 0, path, why, wlen);
}

/* readtest_path_check on a list of roots (the worker's own copy). */
static int readtest_roots_check(const char (*roots)[AGENT_CONF_PATH_LEN],
				unsigned n, const char *path, char *resolved,
				size_t rlen, char *why, size_t wlen)
{
	char real[PATH_MAX], root[PATH_MAX];
	size_t used = 0;
	char list[400] = "";

	if (readtest_precheck_n(n, path, why, wlen) < 0)
		return -1;
	if (!realpath(path, real)) {
		snprintf(why, wlen, "%.256s: %s", path, strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		size_t k;

		used += (size_t)snprintf(
			list + used,
			used < sizeof(list) ? sizeof(list) - used : 0, "%s%s",
			i ? ", " : "", roots[i]);
		if (used >= sizeof(list))
			used = sizeof(list);
		/* The root resolved now: a symlinked read_path means its
		 * target, and a resolved path must be inside that. */
		if (!realpath(roots[i], root))
			continue;
		k = strlen(root);
		if (!strcmp(root, "/") ||
		    (!strncmp(real, root, k) &&
		     (real[k] == '\0' || real[k] == '/'))) {
			if (strlen(real) >= rlen) {
				snprintf(why, wlen, "%.256s: path too long",
					 path);
				return -1;
			}
			memcpy(resolved, real, strlen(real) + 1);
			return 0;
		}
	}
	snprintf(why, wlen,
		 "%.256s (resolved: %.256s) is outside read_path (%s)", path,
		 real, list);
	return -1;
}

int readtest_path_check(const struct agent_conf *c, const char *path,
			char *resolved, size_t rlen, char *why, size_t wlen)
{
	return readtest_roots_check(c ? c->read_paths : NULL,
				    c ? c->n_read_paths : 0, path, resolved,
				    rlen, why, wlen);
}

static double readtest_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *readtest_fstype(long magic)
{
	switch ((unsigned long)magic) {
	case 0xEF53:
		return "ext4";
	case 0x58465342:
		return "xfs";
	case 0x9123683E:
		return "btrfs";
	case 0x01021994:
		return "tmpfs";
	case 0x794c7630:
		return "overlay";
	case 0x6969:
		return "nfs";
	case 0x2fc12fc1:
		return "zfs";
	case 0xF2F52010:
		return "f2fs";
	default:
		return NULL;
	}
}

struct readtest_ctx {
	uint64_t max_bytes;
	double t0, deadline;
	const int *stop;
	void *buf;
	struct readtest_result *r;
};

static int readtest_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One file from dirfd (AT_FDCWD for an absolute name): 0, 1 when the
 * test is over (bytes, time or stop), -1 with r->error. */
static int readtest_file(struct readtest_ctx *c, int dirfd, const char *name)
{
	struct readtest_result *r = c->r;
	int fd, direct = 1, ret = 0;
	struct stat st;

	/* O_NONBLOCK: what was a regular file at stat may be a FIFO by now,
	 * and opening that would wait for a writer; on a regular file it
	 * changes nothing. */
	fd = openat(dirfd, name,
		    O_RDONLY | O_DIRECT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
			    O_NONBLOCK);
	if (fd < 0 && errno == EINVAL) {
		direct = 0;
		fd = openat(dirfd, name,
			    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
				    O_NONBLOCK);
	}
	if (fd < 0) {
		snprintf(r->error, sizeof(r->error), "%.200s: %s", name,
			 strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(r->error, sizeof(r->error), "%.200s: %s", name,
			 strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(r->error, sizeof(r->error),
			 "%.200s: not a regular file", name);
		close(fd);
		return -1;
	}
	for (;;) {
		uint64_t left = c->max_bytes - r->bytes;
		size_t want = READTEST_BLOCK;
		ssize_t got;

		if (left < want) /* aligned up: O_DIRECT sizes */
			want = (size_t)((left + READTEST_ALIGN - 1) /
					READTEST_ALIGN * READTEST_ALIGN);
		if (!direct)
			/* A fair try at reading the disk, not the cache. */
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		got = read(fd, c->buf, want);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == EINVAL && direct) {
			/* The filesystem took O_DIRECT at open but not here. */
			int fl = fcntl(fd, F_GETFL);

			if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_DIRECT) < 0) {
				snprintf(r->error, sizeof(r->error),
					 "%.200s: %s", name, strerror(errno));
				ret = -1;
				break;
			}
			direct = 0;
			continue;
		}
		if (got < 0) {
			snprintf(r->error, sizeof(r->error), "%.200s: %s", name,
				 strerror(errno));
			ret = -1;
			break;
		}
		if (got == 0)
			break;
		r->bytes += (uint64_t)got < left ? (uint64_t)got : left;
		if (r->bytes >= c->max_bytes) {
			ret = 1;
			break;
		}
		if (__atomic_load_n(c->stop, __ATOMIC_RELAXED)) {
			ret = 1;
			break;
		}
		if (readtest_now() >= c->deadline) {
			r->stopped_at_time = 1;
			ret = 1;
			break;
		}
	}
	if (!direct)
		r->direct = 0;
	r->files++;
	close(fd);
	return ret;
}

/* A directory's regular files (not recursive), sorted by name. */
static int readtest_dir(struct readtest_ctx *c, const char *path)
{
	struct readtest_result *r = c->r;
	char **names = NULL;
	size_t n = 0;
	int dfd, ret = 0;
	DIR *d;

	dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		snprintf(r->error, sizeof(r->error), "%.200s: %s", path,
			 strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	names = calloc(READTEST_MAX_FILES, sizeof(*names));
	if (!names) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		ret = -1;
		goto out;
	}
	for (struct dirent *e; n < READTEST_MAX_FILES && (e = readdir(d));) {
		struct stat st;

		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) || st.st_size == 0)
			continue;
		names[n] = strdup(e->d_name);
		if (!names[n]) {
			snprintf(r->error, sizeof(r->error), "out of memory");
			ret = -1;
			goto out;
		}
		n++;
	}
	qsort(names, n, sizeof(*names), readtest_cmp);
	for (size_t i = 0; i < n && ret == 0; i++)
		ret = readtest_file(c, dfd, names[i]);
	if (ret > 0)
		ret = 0;
out:
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	closedir(d); /* closes dfd */
	return ret;
}

int readtest_read(const char *resolved, uint64_t max_bytes, unsigned max_ms,
		  const int *stop, struct readtest_result *r)
{
	struct readtest_ctx c = {.max_bytes = max_bytes, .stop = stop, .r = r};
	struct statfs sf;
	struct stat st;
	const char *fs;
	int ret;

	memset(r, 0, sizeof(*r));
	r->direct = 1;
	snprintf(r->path, sizeof(r->path), "%s", resolved);
	if (!max_bytes || !max_ms) {
		snprintf(r->error, sizeof(r->error),
			 "max_bytes and max_ms must be more than 0");
		return -1;
	}
	if (stat(resolved, &st) < 0) {
		snprintf(r->error, sizeof(r->error), "%.200s: %s", resolved,
			 strerror(errno));
		return -1;
	}
	snprintf(r->device, sizeof(r->device), "%u:%u", major(st.st_dev),
		 minor(st.st_dev));
	if (statfs(resolved, &sf) == 0 && (fs = readtest_fstype(sf.f_type)))
		snprintf(r->fstype, sizeof(r->fstype), "%s", fs);
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		snprintf(r->error, sizeof(r->error),
			 "%.200s: not a regular file or a directory", resolved);
		return -1;
	}
	if (posix_memalign(&c.buf, READTEST_ALIGN, READTEST_BLOCK)) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return -1;
	}
	c.t0 = readtest_now();
	c.deadline = c.t0 + max_ms / 1000.0;
	if (S_ISDIR(st.st_mode))
		ret = readtest_dir(&c, resolved);
	else
		ret = readtest_file(&c, AT_FDCWD, resolved) < 0 ? -1 : 0;
	r->seconds = readtest_now() - c.t0;
	free(c.buf);
	if (ret == 0 && r->bytes == 0) {
		snprintf(r->error, sizeof(r->error),
			 "%.200s: nothing to read (empty, or a directory "
			 "without regular files; subdirectories are not "
			 "read)",
			 resolved);
		ret = -1;
	}
	return ret;
}

/* Who frees a test: the loop after the worker said it finished, or the
 * worker itself when the loop gave up on it first (readtest_free while it
 * runs: a read or realpath on a hung filesystem would stall the loop in
 * pthread_join). */
enum readtest_state {
	READTEST_RUNNING,
	READTEST_FINISHED, /* the worker is done with t; the loop frees */
	READTEST_ORPHANED, /* the loop let go; the worker frees */
};

struct readtest {
	pthread_t tid;
	int efd;
	int stop;
	int state; /* enum readtest_state, atomic */
	struct event *ev;
	char path[PATH_MAX]; /* as asked; resolved by the worker */
	/* The roots copied at start: the loop may reload agent.conf while
	 * the worker resolves against them. */
	char roots[AGENT_CONF_MAX_READ_PATHS][AGENT_CONF_PATH_LEN];
	unsigned n_roots;
	uint64_t max_bytes;
	unsigned max_ms;
	readtest_done_fn done;
	void *arg;
	struct readtest_result res;
};

static void *readtest_worker(void *arg)
{
	struct readtest *t = arg;
	char resolved[PATH_MAX];
	uint64_t one = 1;

	/* realpath here, not in the loop: a hung filesystem stalls this
	 * thread only. */
	if (readtest_roots_check((const char(*)[AGENT_CONF_PATH_LEN])t->roots,
				 t->n_roots, t->path, resolved,
				 sizeof(resolved), t->res.refused,
				 sizeof(t->res.refused)) < 0)
		snprintf(t->res.path, sizeof(t->res.path), "%s", t->path);
	else
		(void)readtest_read(resolved, t->max_bytes, t->max_ms, &t->stop,
				    &t->res);
	__atomic_sub_fetch(&readtest_workers, 1, __ATOMIC_ACQ_REL);
	if (__atomic_exchange_n(&t->state, READTEST_FINISHED,
				__ATOMIC_ACQ_REL) == READTEST_ORPHANED) {
		/* Nobody waits: the loop freed its event and let go. */
		close(t->efd);
		free(t);
		return NULL;
	}
	/* An eventfd write of 8 bytes cannot be short; if it fails the
	 * loop never hears, so say so at least. */
	if (write(t->efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		log_warn("readtest: eventfd write");
	return NULL;
}

static void readtest_finished(evutil_socket_t fd, short what, void *arg)
{
	struct readtest *t = arg;
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0 && errno == EAGAIN)
		return;
	pthread_join(t->tid, NULL);
	t->done(&t->res, t->arg);
	event_free(t->ev);
	close(t->efd);
	free(t);
}

struct readtest *readtest_start(struct event_base *base,
				const struct agent_conf *c, const char *path,
				uint64_t max_bytes, unsigned max_ms,
				readtest_done_fn done, void *arg, char *why,
				size_t wlen)
{
	struct readtest *t;
	int rc, alive = __atomic_load_n(&readtest_workers, __ATOMIC_ACQUIRE);

	if (alive >= READTEST_MAX_WORKERS) {
		snprintf(why, wlen,
			 "busy: %d read tests still running (at most %d; a "
			 "read hung on a dead filesystem ends only when the "
			 "filesystem answers)",
			 alive, READTEST_MAX_WORKERS);
		errno = EBUSY;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(why, wlen, "out of memory");
		return NULL;
	}
	t->efd = -1;
	snprintf(t->path, sizeof(t->path), "%s", path ? path : "");
	t->n_roots = c ? c->n_read_paths : 0;
	if (t->n_roots > AGENT_CONF_MAX_READ_PATHS)
		t->n_roots = AGENT_CONF_MAX_READ_PATHS;
	for (unsigned i = 0; i < t->n_roots; i++)
		memcpy(t->roots[i], c->read_paths[i], sizeof(t->roots[i]));
	t->max_bytes = max_bytes;
	t->max_ms = max_ms;
	t->done = done;
	t->arg = arg;
	t->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->efd < 0) {
		snprintf(why, wlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	t->ev = event_new(base, t->efd, EV_READ | EV_PERSIST, readtest_finished,
			  t);
	if (!t->ev || event_add(t->ev, NULL) < 0) {
		snprintf(why, wlen, "cannot watch the worker");
		goto fail;
	}
	__atomic_add_fetch(&readtest_workers, 1, __ATOMIC_ACQ_REL);
	rc = pthread_create(&t->tid, NULL, readtest_worker, t);
	if (rc) {
		__atomic_sub_fetch(&readtest_workers, 1, __ATOMIC_ACQ_REL);
		snprintf(why, wlen, "thread: %s", strerror(rc));
		goto fail;
	}
	return t;
fail:
	if (t->ev)
		event_free(t->ev);
	if (t->efd >= 0)
		close(t->efd);
	free(t);
	return NULL;
}

void readtest_free(struct readtest *t)
{
	pthread_t tid;

	if (!t)
		return;
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELAXED);
	/* The event goes first: once orphaned, t is the worker's. A write
	 * to the eventfd with no event on it is harmless. */
	event_free(t->ev);
	tid = t->tid;
	if (__atomic_exchange_n(&t->state, READTEST_ORPHANED,
				__ATOMIC_ACQ_REL) == READTEST_FINISHED) {
		pthread_join(tid, NULL); /* it is returning: no wait */
		close(t->efd);
		free(t);
		return;
	}
	/* Still running (stop ends a read within one block; a hung
	 * filesystem may hold it longer): it frees t when it ends. */
	pthread_detach(tid);
}
