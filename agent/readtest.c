/* Read tests: see readtest.h. Read-only by construction: every open is
 * O_RDONLY, beneath a read_path (readpath.c), never through a symlink
 * that leaves it. */
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
#include "readpath.h"
#include "readtest.h"

/* O_DIRECT wants offsets and sizes in multiples of the logical block;
 * 4096 covers every disk in use. */
#define READTEST_ALIGN 4096u
/* Workers alive at once, orphaned ones included: a session dropped while
 * a read hangs on a dead filesystem leaves its thread behind, and a peer
 * repeating that must not pile threads up without end. */
#define READTEST_MAX_WORKERS 4

static int readtest_workers; /* atomic */

int readtest_path_check(const struct agent_conf *c, const char *path, char *why,
			size_t wlen)
{
	char norm[PATH_MAX];
	unsigned root;
	size_t rel;

	return readpath_check(
		c ? (const char(*)[AGENT_CONF_PATH_LEN])c->read_paths : NULL,
		c ? c->n_read_paths : 0, path, norm, sizeof(norm), &root, &rel,
		why, wlen);
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

/* O_DIRECT on an open file where its filesystem takes it: 1, else 0. */
static int readtest_direct(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && fcntl(fd, F_SETFL, fl | O_DIRECT) == 0;
}

/* One open file (fd is taken and closed), name for messages: 0, 1 when
 * the test is over (bytes, time or stop), -1 with r->error. */
static int readtest_file(struct readtest_ctx *c, int fd, const char *name)
{
	struct readtest_result *r = c->r;
	int direct, ret = 0;
	struct stat st;

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
	direct = readtest_direct(fd);
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
			/* The filesystem took O_DIRECT at fcntl but not here. */
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

/* An open directory's regular files (not recursive), sorted by name; dfd
 * is taken and closed. Each entry is one name opened with O_NOFOLLOW from
 * dfd: a symlink swapped in is refused, nothing leaves the directory. */
static int readtest_dir(struct readtest_ctx *c, int dfd, const char *path)
{
	struct readtest_result *r = c->r;
	char **names = NULL;
	size_t n = 0;
	int ret = 0;
	DIR *d;

	if (!(d = fdopendir(dfd))) {
		snprintf(r->error, sizeof(r->error), "%.200s: %s", path,
			 strerror(errno));
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
	for (size_t i = 0; i < n && ret == 0; i++) {
		/* O_NONBLOCK: what was a regular file at fstatat may be a
		 * FIFO by now, and opening that would wait for a writer. */
		int fd = openat(dfd, names[i],
				O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
					O_NONBLOCK);

		if (fd < 0) {
			snprintf(r->error, sizeof(r->error), "%.200s: %s",
				 names[i], strerror(errno));
			ret = -1;
			break;
		}
		ret = readtest_file(c, fd, names[i]);
	}
	if (ret > 0)
		ret = 0;
out:
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	closedir(d); /* closes dfd */
	return ret;
}

int readtest_read(const char (*roots)[AGENT_CONF_PATH_LEN], unsigned n_roots,
		  const char *path, uint64_t max_bytes, unsigned max_ms,
		  const int *stop, struct readtest_result *r)
{
	struct readtest_ctx c = {.max_bytes = max_bytes, .stop = stop, .r = r};
	char norm[PATH_MAX];
	struct statfs sf;
	struct stat st;
	const char *fs;
	unsigned root;
	size_t rel;
	int fd, ret;

	memset(r, 0, sizeof(*r));
	r->direct = 1;
	snprintf(r->path, sizeof(r->path), "%s", path ? path : "");
	/* The text first: an outside path is refused before anything is
	 * looked at, in words that are the same whether it exists. */
	if (readpath_check(roots, n_roots, path, norm, sizeof(norm), &root,
			   &rel, r->refused, sizeof(r->refused)) < 0)
		return -1;
	snprintf(r->path, sizeof(r->path), "%s", norm);
	if (!max_bytes || !max_ms) {
		snprintf(r->error, sizeof(r->error),
			 "max_bytes and max_ms must be more than 0");
		return -1;
	}
	/* O_NONBLOCK: a FIFO does not wait for a writer (refused below). */
	fd = readpath_open(roots[root], norm + rel, path,
			   O_RDONLY | O_NOCTTY | O_NONBLOCK, r->refused,
			   sizeof(r->refused));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		snprintf(r->error, sizeof(r->error), "%.200s: %s", norm,
			 strerror(errno));
		close(fd);
		return -1;
	}
	snprintf(r->device, sizeof(r->device), "%u:%u", major(st.st_dev),
		 minor(st.st_dev));
	if (fstatfs(fd, &sf) == 0 && (fs = readtest_fstype(sf.f_type)))
		snprintf(r->fstype, sizeof(r->fstype), "%s", fs);
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		snprintf(r->error, sizeof(r->error),
			 "%.200s: not a regular file or a directory", norm);
		close(fd);
		return -1;
	}
	if (posix_memalign(&c.buf, READTEST_ALIGN, READTEST_BLOCK)) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		close(fd);
		return -1;
	}
	c.t0 = readtest_now();
	c.deadline = c.t0 + max_ms / 1000.0;
	if (S_ISDIR(st.st_mode))
		ret = readtest_dir(&c, fd, norm);
	else
		ret = readtest_file(&c, fd, norm) < 0 ? -1 : 0;
	r->seconds = readtest_now() - c.t0;
	free(c.buf);
	if (ret == 0 && r->bytes == 0) {
		snprintf(r->error, sizeof(r->error),
			 "%.200s: nothing to read (empty, or a directory "
			 "without regular files; subdirectories are not "
			 "read)",
			 norm);
		ret = -1;
	}
	return ret;
}

/* Who frees a test: the loop after the worker said it finished, or the
 * worker itself when the loop gave up on it first (readtest_free while it
 * runs: an open or read on a hung filesystem would stall the loop in
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
	char path[PATH_MAX]; /* as asked; checked and opened by the worker */
	/* The roots copied at start: the loop may reload agent.conf while
	 * the worker opens beneath them. */
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
	uint64_t one = 1;

	/* Every filesystem access here, not on the loop: a hung filesystem
	 * stalls this thread only. */
	(void)readtest_read((const char(*)[AGENT_CONF_PATH_LEN])t->roots,
			    t->n_roots, t->path, t->max_bytes, t->max_ms,
			    &t->stop, &t->res);
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
