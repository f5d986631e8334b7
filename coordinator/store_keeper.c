/* Keeps the store open with recovery, watches the file's identity,
 * counts what could not be saved and says it once per interval, and
 * hands a fresh or recovered file to the coordinator's rewrite. */
#include "store_keeper.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include "clock.h"
#include "log.h"

struct store_keeper {
	struct event_base *base;
	struct store_keeper_conf conf;
	char dir[PATH_MAX];
	char path[PATH_MAX];
	struct store *s;
	dev_t dev;
	ino_t ino;
	struct store_keeper_info info;
	uint64_t unsaved_interval; /* since the last counting line */
	uint64_t interval_start_ms;
	int low_space;	  /* the file system below its reserve */
	int rewriting;	  /* inside conf.rewrite */
	int need_rewrite; /* a fresh or recovered file */
	int need_changed;
	struct event *timer, *pending_ev;
};

const char *store_keeper_state_name(enum store_keeper_state s)
{
	return s == STORE_KEEPER_OK	   ? "ok"
	       : s == STORE_KEEPER_FAILING ? "failing"
					   : "unavailable";
}

static void keeper_set_state(struct store_keeper *k, enum store_keeper_state st,
			     const char *reason)
{
	if (k->info.state != st)
		k->info.since_ms = clock_now_ms();
	if (k->info.state != st || strcmp(k->info.reason, reason))
		k->need_changed = 1;
	k->info.state = st;
	snprintf(k->info.reason, sizeof(k->info.reason), "%s", reason);
	if (st == STORE_KEEPER_OK)
		k->info.unsaved_now = 0;
}

/* The deferred work runs from the loop, never inside a write. */
static void keeper_pending_soon(struct store_keeper *k)
{
	if (k->pending_ev)
		event_active(k->pending_ev, 0, 0);
}

/* The path's file is the one we have open? */
static void keeper_remember(struct store_keeper *k)
{
	struct stat st;

	if (store_file(k->s, &st) == 0) {
		k->dev = st.st_dev;
		k->ino = st.st_ino;
	}
}

/* ringd.db and its -wal, -shm renamed to ringd.db.corrupt-<stamp>...:
 * kept for a post-mortem, out of the way of a fresh file. */
static int keeper_move_aside(struct store_keeper *k, char *to, size_t tolen)
{
	static const char *const suffix[] = {"", "-wal", "-shm"};
	char stamp[32], base[PATH_MAX + 64], from[PATH_MAX + 8],
		dst[PATH_MAX + 80];
	time_t now = time(NULL);
	struct tm tm;
	struct stat st;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(base, sizeof(base), "%s.corrupt-%s", k->path, stamp);
	/* Two in one second: a number after the stamp. */
	for (int i = 1; i < 100 && lstat(base, &st) == 0; i++)
		snprintf(base, sizeof(base), "%s.corrupt-%s.%d", k->path, stamp,
			 i);
	snprintf(to, tolen, "%s", base);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(from, sizeof(from), "%s%s", k->path, suffix[i]);
		snprintf(dst, sizeof(dst), "%s%s", base, suffix[i]);
		if (rename(from, dst) < 0 && errno != ENOENT) {
			log_warn("store: cannot move %s aside to %s", from,
				 dst);
			return -1;
		}
	}
	return 0;
}

/* The file was lost: what, said in the log and in info.lost. */
static void keeper_lost(struct store_keeper *k, const char *what)
{
	snprintf(k->info.lost, sizeof(k->info.lost), "%s", what);
	k->info.lost_seq++;
	k->info.reopened++;
	k->need_changed = 1;
}

/* store_open with recovery: a corrupt file goes aside and a fresh one
 * is made. 0, or -1 with errno (EBUSY, EPROTO: refused; else the
 * directory or file cannot be used) and err. */
static int keeper_open(struct store_keeper *k, char *err, size_t errlen)
{
	char aside[PATH_MAX + 128], what[sizeof(k->info.lost)];
	int e;

	if (mkdir(k->dir, 0750) < 0 && errno != EEXIST) {
		e = errno;
		snprintf(err, errlen, "%.300s: %s", k->dir, strerror(e));
		errno = e;
		return -1;
	}
	k->s = store_open(k->dir, err, errlen);
	if (!k->s && errno == EBADMSG) {
		log_warnx("store: %s", err);
		if (keeper_move_aside(k, aside, sizeof(aside)) < 0) {
			errno = EBADMSG;
			return -1;
		}
		snprintf(what, sizeof(what),
			 "%s was corrupt (moved to %.240s); re-surveying",
			 STORE_FILE, aside);
		log_warnx("store: state lost: %s", what);
		keeper_lost(k, what);
		k->s = store_open(k->dir, err, errlen);
	}
	if (!k->s)
		return -1;
	keeper_remember(k);
	return 0;
}

static void keeper_close(struct store_keeper *k)
{
	store_close(k->s);
	k->s = NULL;
}

/* Reopen after a loss; the state rewritten from the loop. */
static void keeper_reopen(struct store_keeper *k)
{
	char err[512];

	keeper_close(k);
	if (keeper_open(k, err, sizeof(err)) < 0) {
		log_warnx("store: %s; running without persistence, retried "
			  "every %llu s",
			  err, (unsigned long long)k->conf.interval_ms / 1000);
		keeper_set_state(k, STORE_KEEPER_UNAVAILABLE, err);
		return;
	}
	k->need_rewrite = 1;
	keeper_pending_soon(k);
}

/* Corrupt while in use: moved aside, a fresh file, the state rewritten
 * from the loop; lost. */
static void keeper_corrupt(struct store_keeper *k, const char *why)
{
	char what[sizeof(k->info.lost)], aside[PATH_MAX + 128];

	log_warnx("store: %s: corrupt while in use: %s", k->path, why);
	keeper_close(k);
	if (keeper_move_aside(k, aside, sizeof(aside)) == 0) {
		snprintf(what, sizeof(what),
			 "%s was corrupt (moved to %.240s); re-surveying",
			 STORE_FILE, aside);
		log_warnx("store: state lost: %s", what);
		keeper_lost(k, what);
	}
	keeper_reopen(k);
	keeper_pending_soon(k);
}

/* Deleted or replaced under us: a fresh file, written at once. */
static void keeper_identity(struct store_keeper *k)
{
	struct stat st;
	const char *how;

	if (!k->s)
		return;
	if (stat(k->path, &st) == 0) {
		if (st.st_dev == k->dev && st.st_ino == k->ino)
			return;
		how = "replaced";
	} else if (errno == ENOENT) {
		how = "deleted";
	} else {
		return; /* cannot tell: keep writing where we are */
	}
	log_warnx("store: %s was %s while in use; writing the current state "
		  "to a fresh one",
		  k->path, how);
	k->info.reopened++;
	keeper_reopen(k);
}

static int keeper_rewrite(struct store_keeper *k)
{
	int r;

	if (!k->s || !k->conf.rewrite)
		return 0;
	k->rewriting = 1;
	r = k->conf.rewrite(k->s, k->conf.arg);
	k->rewriting = 0;
	return r;
}

/* From the loop: a pending rewrite, then the changed callback. */
static void keeper_pending(struct store_keeper *k)
{
	if (k->need_rewrite && k->s) {
		k->need_rewrite = 0;
		if (keeper_rewrite(k) == 0 && k->s)
			log_info("store: the current state was written to %s",
				 k->path);
	}
	if (k->need_changed) {
		k->need_changed = 0;
		if (k->conf.changed)
			k->conf.changed(k->conf.arg);
	}
}

static void keeper_pending_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	keeper_pending(arg);
}

struct store *store_keeper_store(struct store_keeper *k)
{
	return k ? k->s : NULL;
}

struct store *store_keeper_writable(struct store_keeper *k)
{
	if (!k) {
		errno = ENODEV;
		return NULL;
	}
	if (!k->rewriting)
		keeper_identity(k);
	if (!k->s)
		errno = ENODEV;
	return k->s;
}

void store_keeper_wrote(struct store_keeper *k, int ret)
{
	char why[256];
	int e = errno;

	if (!k || ret >= 0 || k->rewriting)
		return; /* a rewrite retries what was counted already */
	k->info.unsaved++;
	k->info.unsaved_now++;
	k->unsaved_interval++;
	if (!k->s)
		return;
	if (e == EBADMSG) { /* corrupt while running */
		keeper_corrupt(k, store_error(k->s));
		return;
	}
	if (k->info.state != STORE_KEEPER_OK)
		return;
	snprintf(why, sizeof(why), "%s",
		 *store_error(k->s) ? store_error(k->s) : strerror(e));
	log_warnx("store: writes to %s fail: %s; counting what is not saved, "
		  "retried every %llu s",
		  k->path, why, (unsigned long long)k->conf.interval_ms / 1000);
	k->interval_start_ms = clock_now_ms();
	keeper_set_state(k, STORE_KEEPER_FAILING, why);
	keeper_pending_soon(k);
}

/* A full file system is failing before a write says so: in steady
 * state the coordinator may write nothing for hours, and WAL pages are
 * reused, so a full disk would go unseen until the state it must keep
 * (a cut, an alert) is lost. Below the reserve (1 MiB, or an eighth of a
 * small file system) the store is failing; it is ok again at twice the
 * reserve. */
static void keeper_space(struct store_keeper *k)
{
	struct statvfs v;
	uint64_t size, avail, reserve;
	char why[256];

	if (statvfs(k->dir, &v) < 0 || !v.f_frsize || !v.f_blocks)
		return; /* cannot tell: the writes will */
	size = (uint64_t)v.f_blocks * v.f_frsize;
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	reserve = size / 8 < STORE_KEEPER_RESERVE ? size / 8
						  : STORE_KEEPER_RESERVE;
	if (!k->low_space && avail < reserve) {
		k->low_space = 1;
		if (snprintf(why, sizeof(why),
			     "no space: %llu KiB free of %llu MiB on the file "
			     "system of %s (at least %llu KiB wanted)",
			     (unsigned long long)(avail >> 10),
			     (unsigned long long)(size >> 20), k->dir,
			     (unsigned long long)(reserve >> 10)) >=
		    (int)sizeof(why))
			why[sizeof(why) - 2] = '~'; /* a long state_dir, cut */
		log_warnx("store: %s; what must be saved next will fail: free "
			  "some space there",
			  why);
		if (k->info.state == STORE_KEEPER_OK) {
			k->interval_start_ms = clock_now_ms();
			keeper_set_state(k, STORE_KEEPER_FAILING, why);
		}
	} else if (k->low_space && avail >= 2 * reserve) {
		k->low_space = 0;
		log_info("store: %llu KiB free on the file system of %s again",
			 (unsigned long long)(avail >> 10), k->dir);
	}
}

void store_keeper_check(struct store_keeper *k)
{
	char err[512];
	uint64_t now = clock_now_ms();

	keeper_identity(k);
	if (k->s)
		keeper_space(k);
	/* Overwritten in place: the page cache may not see it for long. */
	if (k->s && store_header_ok(k->s) == 0)
		keeper_corrupt(k, "not an SQLite database any more");
	err[0] = '\0';
	if (!k->s && keeper_open(k, err, sizeof(err)) == 0) {
		log_info("store: %s usable again; %llu writes were not saved "
			 "meanwhile",
			 k->path, (unsigned long long)k->info.unsaved_now);
		k->need_rewrite = 1;
		keeper_set_state(k, STORE_KEEPER_OK, "");
	} else if (!k->s && strcmp(err, k->info.reason)) {
		log_warnx("store: %s", err);
		keeper_set_state(k, STORE_KEEPER_UNAVAILABLE, err);
	}
	if (k->info.state != STORE_KEEPER_OK && k->unsaved_interval)
		log_warnx(
			"store: %llu writes not saved in the last %llu s "
			"(%llu since %s): %s",
			(unsigned long long)k->unsaved_interval,
			(unsigned long long)(now > k->interval_start_ms
						     ? (now -
							k->interval_start_ms) /
							       1000
						     : 0),
			(unsigned long long)k->info.unsaved_now,
			store_keeper_state_name(k->info.state), k->info.reason);
	k->unsaved_interval = 0;
	k->interval_start_ms = now;
	if (k->info.state == STORE_KEEPER_FAILING && k->s) {
		/* The whole state in one transaction: it commits once there
		 * is room again. */
		k->need_rewrite = 0;
		if (keeper_rewrite(k) == 0 && k->s && !k->low_space &&
		    k->info.state == STORE_KEEPER_FAILING) {
			log_info("store: saving to %s again; %llu writes could "
				 "not be saved, the current state is rewritten",
				 k->path,
				 (unsigned long long)k->info.unsaved_now);
			keeper_set_state(k, STORE_KEEPER_OK, "");
		}
	}
	keeper_pending(k);
}

static void keeper_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	store_keeper_check(arg);
}

struct store_keeper *store_keeper_new(struct event_base *base,
				      const struct store_keeper_conf *conf,
				      char *err, size_t errlen)
{
	struct store_keeper *k = calloc(1, sizeof(*k));
	char why[512];
	int e;

	if (!k)
		return NULL;
	k->base = base;
	k->conf = *conf;
	if (!k->conf.interval_ms)
		k->conf.interval_ms = STORE_KEEPER_INTERVAL_MS;
	snprintf(k->dir, sizeof(k->dir), "%s", conf->dir);
	snprintf(k->path, sizeof(k->path), "%s/%s", conf->dir, STORE_FILE);
	k->conf.dir = k->dir;
	k->interval_start_ms = clock_now_ms();
	k->info.since_ms = k->interval_start_ms;
	if (base) {
		struct timeval tv = {
			.tv_sec = (time_t)(k->conf.interval_ms / 1000),
			.tv_usec = (suseconds_t)(k->conf.interval_ms % 1000) *
				   1000,
		};

		k->timer = event_new(base, -1, EV_PERSIST, keeper_timer_cb, k);
		k->pending_ev = event_new(base, -1, 0, keeper_pending_cb, k);
		if (!k->timer || !k->pending_ev || event_add(k->timer, &tv)) {
			store_keeper_free(k);
			errno = ENOMEM;
			return NULL;
		}
	}
	if (keeper_open(k, why, sizeof(why)) < 0) {
		e = errno;
		if (e == EBUSY || e == EPROTO || e == ENOMEM) {
			snprintf(err, errlen, "%s", why);
			store_keeper_free(k);
			errno = e;
			return NULL;
		}
		log_warnx("store: %s; running without persistence, retried "
			  "every %llu s",
			  why, (unsigned long long)k->conf.interval_ms / 1000);
		keeper_set_state(k, STORE_KEEPER_UNAVAILABLE, why);
	}
	/* The first changed call comes from the loop (or the first check):
	 * the coordinator reads the info once its alerts exist. */
	if (k->info.lost_seq || k->info.state != STORE_KEEPER_OK) {
		k->need_changed = 1;
		keeper_pending_soon(k);
	}
	return k;
}

void store_keeper_free(struct store_keeper *k)
{
	if (!k)
		return;
	if (k->timer)
		event_free(k->timer);
	if (k->pending_ev)
		event_free(k->pending_ev);
	keeper_close(k);
	free(k);
}

void store_keeper_info(const struct store_keeper *k,
		       struct store_keeper_info *out)
{
	*out = k->info;
}
