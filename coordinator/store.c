/* The coordinator's durable state: one SQLite database in WAL mode under
 * state_dir, used by this process alone (an flock on ringd.lock keeps a
 * second coordinator out) from the event loop (no mutexes). Every write
 * is one BEGIN IMMEDIATE ... COMMIT; synchronous=FULL makes a commit
 * durable before it returns. The file is trusted no further than any
 * input: text is copied truncated, numbers are clamped. */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "reason.h"
#include "store_schema.h"

#define STORE_LOCK_FILE "ringd.lock"
/* Only this process uses the file: a lock held longer is a fault. */
#define STORE_BUSY_MS 1000
/* Rows that one store_history_thin call deletes per limit, at most: the
 * event loop is never held long; later calls catch up. */
#define STORE_THIN_MAX 2000

enum store_stmt {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_BLOB_PUT,
	ST_BLOB_GET,
	ST_ALERT_SAVE,
	ST_ALERTS_LOAD,
	ST_ALERTS_PRUNE,
	ST_HIST_ADD,
	ST_HIST_QUERY_EDGE,
	ST_HIST_QUERY_ALL,
	ST_HIST_PAGE,
	ST_HIST_THIN_AGE,
	ST_HIST_COUNT,
	ST_HIST_THIN_ROWS,
	ST_EPISODE_ADD,
	ST_EPISODES_QUERY,
	ST_EPISODES_PRUNE_AGE,
	ST_EPISODES_PRUNE_ROWS,
	ST_N
};

static const char *const store_sql[ST_N] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_BLOB_PUT] = "INSERT OR REPLACE INTO blobs(key, saved_ms, data) "
			"VALUES (?1, ?2, ?3)",
	[ST_BLOB_GET] = "SELECT saved_ms, data FROM blobs WHERE key = ?1",
	[ST_ALERT_SAVE] =
		"INSERT OR REPLACE INTO alerts(rule, subject, node, edge, "
		"severity, firing, message, first_seen_ms, last_seen_ms, "
		"resolved_ms, flaps, cleared_ms, resolved_message, ring) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
		"?13, ?14)",
	/* The order of alerts_list: firing, most severe, oldest first. */
	[ST_ALERTS_LOAD] =
		"SELECT rule, subject, node, edge, severity, firing, message, "
		"first_seen_ms, last_seen_ms, resolved_ms, flaps, cleared_ms, "
		"resolved_message, ring FROM alerts ORDER BY firing DESC, "
		"severity DESC, first_seen_ms, rule, subject",
	[ST_ALERTS_PRUNE] =
		"DELETE FROM alerts WHERE firing = 0 AND resolved_ms < ?1",
	[ST_HIST_ADD] = "INSERT INTO history(ts_ms, edge, kind, direction, "
			"param, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_HIST_QUERY_EDGE] =
		"SELECT ts_ms, edge, kind, direction, param, value FROM "
		"history WHERE edge = ?1 AND ts_ms >= ?2 ORDER BY ts_ms, id",
	[ST_HIST_QUERY_ALL] =
		"SELECT ts_ms, edge, kind, direction, param, value FROM "
		"history WHERE ts_ms >= ?1 ORDER BY ts_ms, id",
	/* Newest first from a cursor, on history_edge (whose entries end in
	 * the rowid): a seek and max rows, whatever the table holds. */
	[ST_HIST_PAGE] =
		"SELECT ts_ms, edge, kind, direction, param, value, id FROM "
		"history WHERE edge = ?1 AND ts_ms >= ?2 AND (ts_ms < ?3 OR "
		"(ts_ms = ?3 AND id < ?4)) ORDER BY ts_ms DESC, id DESC "
		"LIMIT ?5",
	[ST_HIST_THIN_AGE] = "DELETE FROM history WHERE id IN (SELECT id FROM "
			     "history WHERE ts_ms < ?1 ORDER BY ts_ms, id "
			     "LIMIT ?2)",
	/* Two index seeks, where count(*) walks every row (47 ms at
	 * 10000000 rows, on the loop): ids only grow (never is the newest
	 * row deleted), so max - min + 1 bounds the row count from above. */
	[ST_HIST_COUNT] = "SELECT (SELECT min(id) FROM history), "
			  "(SELECT max(id) FROM history)",
	/* The rows below the newest max_rows ids; with the gaps that the
	 * age limit leaves this keeps at most max_rows. */
	[ST_HIST_THIN_ROWS] = "DELETE FROM history WHERE id IN (SELECT id FROM "
			      "history WHERE id < ?1 ORDER BY id LIMIT ?2)",
	[ST_EPISODE_ADD] =
		"INSERT INTO alert_episodes(rule, subject, node, edge, "
		"severity, message, first_seen_ms, cleared_ms, resolved_ms, "
		"resolved_message, flaps, ring) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
	/* Columns in store_row_alert's order (firing 0, last seen is the
	 * clear). Newest first. */
	[ST_EPISODES_QUERY] =
		"SELECT rule, subject, node, edge, severity, 0, message, "
		"first_seen_ms, cleared_ms, resolved_ms, flaps, cleared_ms, "
		"resolved_message, ring FROM alert_episodes WHERE "
		"resolved_ms >= ?1 "
		"ORDER BY resolved_ms DESC, id DESC LIMIT ?2",
	[ST_EPISODES_PRUNE_AGE] = "DELETE FROM alert_episodes WHERE id IN "
				  "(SELECT id FROM alert_episodes WHERE "
				  "resolved_ms < ?1 ORDER BY resolved_ms, id "
				  "LIMIT ?2)",
	[ST_EPISODES_PRUNE_ROWS] =
		"DELETE FROM alert_episodes WHERE id IN (SELECT id FROM "
		"alert_episodes ORDER BY resolved_ms DESC, id DESC LIMIT ?2 "
		"OFFSET ?1)",
};

struct store {
	sqlite3 *db;
	int lock_fd;
	int db_fd;	 /* the file SQLite opened: its identity (store_file) */
	char error[256]; /* the last failure's message */
	int busy;	 /* inside a load/query callback: no re-entry */
	int batch;	 /* inside store_batch_begin/end: one transaction */
	int batch_err;	 /* errno of the batch's first failure, or 0 */
	sqlite3_stmt *st[ST_N];
};

/* A failed operation: its message kept for store_error (the keeper
 * says it, once per interval: a full disk fails every write), errno set;
 * -1. */
static int store_fail(struct store *s, const char *what, int rc)
{
	int e = store_schema_errno(s->db, rc);

	/* A reset statement may have cleared the connection's message. */
	snprintf(s->error, sizeof(s->error), "%s: %s", what,
		 sqlite3_errcode(s->db) == SQLITE_OK ? sqlite3_errstr(rc)
						     : sqlite3_errmsg(s->db));
	log_debug("store", "%s", s->error);
	errno = e;
	return -1;
}

const char *store_error(const struct store *s)
{
	return s->error;
}

int store_file(const struct store *s, struct stat *st)
{
	return fstat(s->db_fd, st);
}

int store_header_ok(const struct store *s)
{
	static const char magic[16] = "SQLite format 3";
	char buf[16];
	ssize_t n = pread(s->db_fd, buf, sizeof(buf), 0);

	if (n < 0)
		return -1;
	/* A file not yet written (0 bytes) is a new database. */
	return n == 0 || (n == (ssize_t)sizeof(buf) &&
			  !memcmp(buf, magic, sizeof(magic)));
}

static void store_reset(sqlite3_stmt *st)
{
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

/* Run a statement that returns no rows (or whose rows don't matter). */
static int store_exec(struct store *s, enum store_stmt i)
{
	sqlite3_stmt *st = s->st[i];
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int store_begin(struct store *s, const char *what)
{
	int rc;

	if (s->busy) {
		snprintf(s->error, sizeof(s->error),
			 "%s: called back from a load or query", what);
		log_warnx("store: %s", s->error);
		errno = EBUSY;
		return -1;
	}
	if (s->batch) { /* the batch's transaction is open */
		errno = s->batch_err;
		return s->batch_err ? -1 : 0;
	}
	rc = store_exec(s, ST_BEGIN);
	if (rc != SQLITE_OK)
		return store_fail(s, what, rc);
	return 0;
}

/* Commit, or on rc != SQLITE_OK (or a failed commit) warn once and roll
 * back. */
static int store_end(struct store *s, const char *what, int rc)
{
	int ret, e;

	if (s->batch) { /* the batch commits, or fails, as one */
		if (rc == SQLITE_OK)
			return 0;
		ret = store_fail(s, what, rc);
		s->batch_err = errno;
		if (!sqlite3_get_autocommit(s->db))
			store_exec(s, ST_ROLLBACK);
		errno = s->batch_err;
		return ret;
	}
	if (rc == SQLITE_OK) {
		rc = store_exec(s, ST_COMMIT);
		if (rc == SQLITE_OK)
			return 0;
	}
	ret = store_fail(s, what, rc);
	e = errno;
	/* Some errors (SQLITE_FULL, IOERR) have rolled back already. */
	if (!sqlite3_get_autocommit(s->db))
		store_exec(s, ST_ROLLBACK);
	errno = e;
	return ret;
}

int store_batch_begin(struct store *s)
{
	if (s->batch) {
		errno = EINVAL;
		return -1;
	}
	if (store_begin(s, "begin batch") < 0)
		return -1;
	s->batch = 1;
	s->batch_err = 0;
	return 0;
}

int store_batch_end(struct store *s)
{
	int e;

	if (!s->batch) {
		errno = EINVAL;
		return -1;
	}
	s->batch = 0;
	if (s->batch_err) { /* rolled back at its failure */
		errno = s->batch_err;
		return -1;
	}
	if (store_end(s, "commit batch", SQLITE_OK) < 0) {
		e = errno;
		errno = e;
		return -1;
	}
	return 0;
}

static int store_bind_text(sqlite3_stmt *st, int idx, const char *str,
			   size_t max)
{
	/* Our fixed fields need not end in a NUL: never read past them. */
	return sqlite3_bind_text(st, idx, str, (int)strnlen(str, max),
				 SQLITE_STATIC);
}

static int store_bind_ms(sqlite3_stmt *st, int idx, uint64_t ms)
{
	return sqlite3_bind_int64(
		st, idx, ms > INT64_MAX ? INT64_MAX : (sqlite3_int64)ms);
}

/* Column text into a fixed field, truncated; the file may say anything. */
static void store_col_text(sqlite3_stmt *st, int col, char *dst, size_t size)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	int n = sqlite3_column_bytes(st, col);
	size_t len = t && n > 0 ? (size_t)n : 0;

	if (len >= size)
		len = size - 1;
	if (len)
		memcpy(dst, t, len);
	dst[len] = '\0';
}

static uint64_t store_col_u64(sqlite3_stmt *st, int col)
{
	sqlite3_int64 v = sqlite3_column_int64(st, col);

	return v < 0 ? 0 : (uint64_t)v;
}

static uint32_t store_col_u32(sqlite3_stmt *st, int col)
{
	sqlite3_int64 v = sqlite3_column_int64(st, col);

	if (v < 0)
		return 0;
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The lock that keeps a second coordinator off this state_dir. */
static int store_lock(const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
			     STORE_LOCK_FILE) >= sizeof(path)) {
		(void)reason_fail(err, errlen, "%s: path too long", dir);
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;

		(void)reason_fail(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno == EWOULDBLOCK ? EBUSY : errno;

		if (e == EBUSY)
			(void)reason_fail(err, errlen,
					  "another coordinator uses %s", dir);
		else
			(void)reason_fail(err, errlen, "%s: lock: %s", path,
					  strerror(e));
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The schema is store_schema.c's; here the statements prepared once. */
static int store_setup(struct store *s, const char *path, int version,
		       char *err, size_t errlen)
{
	int rc;

	if (store_schema_setup(s->db, path, version, err, errlen) < 0)
		return -1;
	for (int i = 0; i < ST_N; i++) {
		rc = sqlite3_prepare_v3(s->db, store_sql[i], -1,
					SQLITE_PREPARE_PERSISTENT, &s->st[i],
					NULL);
		if (rc != SQLITE_OK) {
			(void)reason_fail(err, errlen, "%s: %s", path,
					  sqlite3_errmsg(s->db));
			errno = store_schema_errno(s->db, rc);
			return -1;
		}
	}
	return 0;
}

struct store *store_open(const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct store *s;
	int rc, version, e;

	if (err && errlen)
		err[0] = '\0';
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, STORE_FILE) >=
	    sizeof(path)) {
		(void)reason_fail(err, errlen, "%s: path too long", dir);
		errno = ENAMETOOLONG;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		(void)reason_fail(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	s->lock_fd = -1;
	s->db_fd = -1;
	s->lock_fd = store_lock(dir, err, errlen);
	if (s->lock_fd < 0)
		goto fail;
	/* SQLite would create it 0644 (less the umask), and its -wal and
	 * -shm files take the database's mode: the history is ours alone. */
	/* Kept open until after sqlite3_close (closing a descriptor of the
	 * file would drop SQLite's POSIX locks): the identity of the file
	 * SQLite opens, against a path deleted or replaced meanwhile. */
	s->db_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->db_fd < 0) {
		e = errno;
		(void)reason_fail(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		goto fail;
	}
	rc = sqlite3_open_v2(path, &s->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				     SQLITE_OPEN_NOMUTEX,
			     NULL);
	if (rc != SQLITE_OK) {
		(void)reason_fail(err, errlen, "%s: %s", path,
				  s->db ? sqlite3_errmsg(s->db)
					: sqlite3_errstr(rc));
		errno = store_schema_errno(s->db, rc);
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	if (store_schema_check(s->db, path, &version, err, errlen) < 0)
		goto fail;
	if (store_setup(s, path, version, err, errlen) < 0)
		goto fail;
	return s;
fail:
	e = errno;
	store_close(s);
	errno = e;
	return NULL;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(s->st[i]);
	if (s->db && sqlite3_close(s->db) != SQLITE_OK)
		log_warnx("store: close: %s", sqlite3_errmsg(s->db));
	if (s->db_fd >= 0)
		close(s->db_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s);
}

int store_put_blob(struct store *s, const char *key, const void *buf,
		   size_t len, uint64_t now_ms)
{
	sqlite3_stmt *st = s->st[ST_BLOB_PUT];
	int rc;

	if (!key || (!buf && len)) {
		errno = EINVAL;
		return -1;
	}
	if (store_begin(s, "put blob") < 0)
		return -1;
	rc = sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = store_bind_ms(st, 2, now_ms);
	/* A NULL pointer would bind SQL NULL: an empty blob is a zeroblob. */
	if (rc == SQLITE_OK)
		rc = len ? sqlite3_bind_blob64(st, 3, buf, len, SQLITE_STATIC)
			 : sqlite3_bind_zeroblob(st, 3, 0);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	store_reset(st);
	return store_end(s, "put blob", rc);
}

int store_get_blob(struct store *s, const char *key, void **buf, size_t *len,
		   uint64_t *saved_ms)
{
	sqlite3_stmt *st = s->st[ST_BLOB_GET];
	const void *data;
	size_t n;
	int rc, ret = -1;

	*buf = NULL;
	*len = 0;
	if (s->busy) {
		errno = EBUSY;
		return -1;
	}
	rc = sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		errno = ENOENT;
		goto out;
	}
	if (rc != SQLITE_ROW) {
		store_fail(s, "get blob", rc);
		goto out;
	}
	if (saved_ms)
		*saved_ms = store_col_u64(st, 0);
	data = sqlite3_column_blob(st, 1);
	n = (size_t)sqlite3_column_bytes(st, 1);
	if (!data && sqlite3_errcode(s->db) == SQLITE_NOMEM) {
		errno = ENOMEM;
		goto out;
	}
	*buf = malloc(n ? n : 1);
	if (!*buf)
		goto out;
	if (n)
		memcpy(*buf, data, n);
	*len = n;
	ret = 0;
out:
	store_reset(st);
	return ret;
}

/* Parameters 1-5 of an alert's row, the same in alerts and
 * alert_episodes: rule, subject, node, edge, severity. */
static int store_bind_alert_head(sqlite3_stmt *st, const struct alert *a)
{
	int rc = store_bind_text(st, 1, a->rule, sizeof(a->rule));

	if (rc == SQLITE_OK)
		rc = store_bind_text(st, 2, a->subject, sizeof(a->subject));
	if (rc == SQLITE_OK)
		rc = store_bind_text(st, 3, a->node, sizeof(a->node));
	if (rc == SQLITE_OK)
		rc = store_bind_text(st, 4, a->edge, sizeof(a->edge));
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 5, (int)a->severity);
	return rc;
}

int store_alert_save(struct store *s, const struct alert *a)
{
	sqlite3_stmt *st = s->st[ST_ALERT_SAVE];
	int rc;

	if (store_begin(s, "save alert") < 0)
		return -1;
	rc = store_bind_alert_head(st, a);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 6, a->firing ? 1 : 0);
	if (rc == SQLITE_OK)
		rc = store_bind_text(st, 7, a->message, sizeof(a->message));
	if (rc == SQLITE_OK)
		rc = store_bind_ms(st, 8, a->first_seen_ms);
	if (rc == SQLITE_OK)
		rc = store_bind_ms(st, 9, a->last_seen_ms);
	if (rc == SQLITE_OK)
		rc = store_bind_ms(st, 10, a->resolved_ms);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 11, a->flaps);
	if (rc == SQLITE_OK)
		rc = store_bind_ms(st, 12, a->cleared_ms);
	if (rc == SQLITE_OK)
		rc = store_bind_text(st, 13, a->resolved_message,
				     sizeof(a->resolved_message));
	if (rc == SQLITE_OK)
		rc = store_bind_text(st, 14, a->ring, sizeof(a->ring));
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	store_reset(st);
	return store_end(s, "save alert", rc);
}

static void store_row_alert(sqlite3_stmt *st, struct alert *a)
{
	sqlite3_int64 sev = sqlite3_column_int64(st, 4);

	memset(a, 0, sizeof(*a));
	store_col_text(st, 0, a->rule, sizeof(a->rule));
	store_col_text(st, 1, a->subject, sizeof(a->subject));
	store_col_text(st, 2, a->node, sizeof(a->node));
	store_col_text(st, 3, a->edge, sizeof(a->edge));
	a->severity = sev <= ALERT_INFO	      ? ALERT_INFO
		      : sev >= ALERT_CRITICAL ? ALERT_CRITICAL
					      : ALERT_WARNING;
	a->firing = sqlite3_column_int64(st, 5) != 0;
	store_col_text(st, 6, a->message, sizeof(a->message));
	a->first_seen_ms = store_col_u64(st, 7);
	a->last_seen_ms = store_col_u64(st, 8);
	a->resolved_ms = store_col_u64(st, 9);
	a->flaps = store_col_u32(st, 10);
	a->cleared_ms = store_col_u64(st, 11);
	store_col_text(st, 12, a->resolved_message,
		       sizeof(a->resolved_message));
	store_col_text(st, 13, a->ring, sizeof(a->ring));
	/* Firing with its condition gone: the hold-down was running. */
	a->clearing = a->firing && a->cleared_ms;
}

static void store_row_sample(sqlite3_stmt *st, struct store_sample *v)
{
	memset(v, 0, sizeof(*v));
	v->ts_ms = store_col_u64(st, 0);
	store_col_text(st, 1, v->edge, sizeof(v->edge));
	store_col_text(st, 2, v->kind, sizeof(v->kind));
	store_col_text(st, 3, v->direction, sizeof(v->direction));
	v->param = store_col_u32(st, 4);
	v->value = sqlite3_column_double(st, 5);
	if (sqlite3_column_count(st) > 6)
		v->id = store_col_u64(st, 6);
}

/* Step st, handing each row to each() (which converts it and calls fn);
 * fn's non-zero return stops it and is returned. */
static int store_each(struct store *s, sqlite3_stmt *st, const char *what,
		      int (*each)(sqlite3_stmt *st, void *fn, void *arg),
		      void *fn, void *arg)
{
	int rc, ret = 0;

	s->busy = 1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ret = each(st, fn, arg);
		if (ret)
			break;
	}
	s->busy = 0;
	if (!ret && rc != SQLITE_DONE)
		ret = store_fail(s, what, rc);
	store_reset(st);
	return ret;
}

typedef int (*store_alert_fn)(const struct alert *a, void *arg);
typedef int (*store_sample_fn)(const struct store_sample *v, void *arg);

static int store_each_alert(sqlite3_stmt *st, void *fn, void *arg)
{
	struct alert a;

	store_row_alert(st, &a);
	return (*(store_alert_fn *)fn)(&a, arg);
}

static int store_each_sample(sqlite3_stmt *st, void *fn, void *arg)
{
	struct store_sample v;

	store_row_sample(st, &v);
	return (*(store_sample_fn *)fn)(&v, arg);
}

int store_alerts_load(struct store *s,
		      int (*fn)(const struct alert *a, void *arg), void *arg)
{
	store_alert_fn f = fn;

	if (s->busy) {
		errno = EBUSY;
		return -1;
	}
	return store_each(s, s->st[ST_ALERTS_LOAD], "load alerts",
			  store_each_alert, &f, arg);
}

int store_alerts_prune(struct store *s, uint64_t before_ms)
{
	sqlite3_stmt *st = s->st[ST_ALERTS_PRUNE];
	int rc;

	if (store_begin(s, "prune alerts") < 0)
		return -1;
	rc = store_bind_ms(st, 1, before_ms);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	store_reset(st);
	return store_end(s, "prune alerts", rc);
}

int store_history_add(struct store *s, const struct store_sample *v, size_t n)
{
	sqlite3_stmt *st = s->st[ST_HIST_ADD];
	int rc = SQLITE_OK;

	if (!n)
		return 0;
	if (store_begin(s, "add history") < 0)
		return -1;
	for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
		rc = store_bind_ms(st, 1, v[i].ts_ms);
		if (rc == SQLITE_OK)
			rc = store_bind_text(st, 2, v[i].edge,
					     sizeof(v[i].edge));
		if (rc == SQLITE_OK)
			rc = store_bind_text(st, 3, v[i].kind,
					     sizeof(v[i].kind));
		if (rc == SQLITE_OK)
			rc = store_bind_text(st, 4, v[i].direction,
					     sizeof(v[i].direction));
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(st, 5, v[i].param);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_double(st, 6, v[i].value);
		if (rc == SQLITE_OK) {
			rc = sqlite3_step(st);
			rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
		}
		store_reset(st);
	}
	return store_end(s, "add history", rc);
}

int store_history_query(struct store *s, const char *edge, uint64_t since_ms,
			int (*fn)(const struct store_sample *v, void *arg),
			void *arg)
{
	sqlite3_stmt *st = s->st[edge ? ST_HIST_QUERY_EDGE : ST_HIST_QUERY_ALL];
	store_sample_fn f = fn;
	int rc;

	if (s->busy) {
		errno = EBUSY;
		return -1;
	}
	if (edge) {
		rc = sqlite3_bind_text(st, 1, edge, -1, SQLITE_STATIC);
		if (rc == SQLITE_OK)
			rc = store_bind_ms(st, 2, since_ms);
	} else {
		rc = store_bind_ms(st, 1, since_ms);
	}
	if (rc != SQLITE_OK) {
		store_reset(st);
		return store_fail(s, "query history", rc);
	}
	return store_each(s, st, "query history", store_each_sample, &f, arg);
}

int store_history_page(struct store *s, const char *edge, uint64_t since_ms,
		       uint64_t before_ms, uint64_t before_id, size_t max,
		       int (*fn)(const struct store_sample *v, void *arg),
		       void *arg)
{
	sqlite3_stmt *st = s->st[ST_HIST_PAGE];
	store_sample_fn f = fn;
	int rc;

	if (s->busy) {
		errno = EBUSY;
		return -1;
	}
	if (!edge || !max) {
		errno = EINVAL;
		return -1;
	}
	if (!before_ms) { /* from the newest */
		before_ms = INT64_MAX;
		before_id = INT64_MAX;
	}
	rc = sqlite3_bind_text(st, 1, edge, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = store_bind_ms(st, 2, since_ms);
	if (rc == SQLITE_OK)
		rc = store_bind_ms(st, 3, before_ms);
	if (rc == SQLITE_OK)
		rc = store_bind_ms(st, 4, before_id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 5,
					max > INT64_MAX ? INT64_MAX
							: (sqlite3_int64)max);
	if (rc != SQLITE_OK) {
		store_reset(st);
		return store_fail(s, "query history", rc);
	}
	return store_each(s, st, "query history", store_each_sample, &f, arg);
}

/* Run a thinning DELETE; *more when it hit its bound. */
static int store_thin_step(struct store *s, sqlite3_stmt *st, int *more)
{
	int rc = sqlite3_step(st);

	store_reset(st);
	if (rc != SQLITE_DONE)
		return rc;
	if (sqlite3_changes(s->db) >= STORE_THIN_MAX)
		*more = 1;
	return SQLITE_OK;
}

int store_history_thin(struct store *s, uint64_t now_ms, uint64_t max_age_ms,
		       uint64_t max_rows)
{
	sqlite3_stmt *st;
	sqlite3_int64 lo = 0, hi = -1;
	int rc = SQLITE_OK, more = 0;

	if (store_begin(s, "thin history") < 0)
		return -1;
	if (max_age_ms && now_ms > max_age_ms) {
		st = s->st[ST_HIST_THIN_AGE];
		rc = store_bind_ms(st, 1, now_ms - max_age_ms);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int(st, 2, STORE_THIN_MAX);
		if (rc == SQLITE_OK)
			rc = store_thin_step(s, st, &more);
		else
			store_reset(st);
	}
	if (rc == SQLITE_OK && max_rows) {
		st = s->st[ST_HIST_COUNT];
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			lo = sqlite3_column_int64(st, 0);
			hi = sqlite3_column_int64(st, 1);
			rc = SQLITE_OK;
		}
		store_reset(st);
	}
	if (rc == SQLITE_OK && max_rows && hi >= lo &&
	    (uint64_t)(hi - lo) + 1 > max_rows) {
		sqlite3_int64 below = hi - (sqlite3_int64)max_rows + 1;

		st = s->st[ST_HIST_THIN_ROWS];
		rc = sqlite3_bind_int64(st, 1, below);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int(st, 2, STORE_THIN_MAX);
		if (rc == SQLITE_OK)
			rc = store_thin_step(s, st, &more);
		else
			store_reset(st);
		if (below - lo > STORE_THIN_MAX)
			more = 1;
	}
	if (store_end(s, "thin history", rc) < 0)
		return -1;
	return more;
}

int store_episode_add(struct store *s, const struct alert *a)
{
	sqlite3_stmt *st = s->st[ST_EPISODE_ADD];
	int rc;

	if (store_begin(s, "add alert episode") < 0)
		return -1;
	rc = store_bind_alert_head(st, a);
	if (rc == SQLITE_OK)
		rc = store_bind_text(st, 6, a->message, sizeof(a->message));
	if (rc == SQLITE_OK)
		rc = store_bind_ms(st, 7, a->first_seen_ms);
	if (rc == SQLITE_OK)
		rc = store_bind_ms(st, 8, a->cleared_ms);
	if (rc == SQLITE_OK)
		rc = store_bind_ms(st, 9, a->resolved_ms);
	if (rc == SQLITE_OK)
		rc = store_bind_text(st, 10, a->resolved_message,
				     sizeof(a->resolved_message));
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 11, a->flaps);
	if (rc == SQLITE_OK)
		rc = store_bind_text(st, 12, a->ring, sizeof(a->ring));
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	store_reset(st);
	return store_end(s, "add alert episode", rc);
}

int store_episodes_query(struct store *s, uint64_t since_ms, size_t max,
			 int (*fn)(const struct alert *a, void *arg), void *arg)
{
	sqlite3_stmt *st = s->st[ST_EPISODES_QUERY];
	store_alert_fn f = fn;
	int rc;

	if (s->busy) {
		errno = EBUSY;
		return -1;
	}
	rc = store_bind_ms(st, 1, since_ms);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2,
					max > INT64_MAX ? INT64_MAX
							: (sqlite3_int64)max);
	if (rc != SQLITE_OK) {
		store_reset(st);
		return store_fail(s, "query alert episodes", rc);
	}
	return store_each(s, st, "query alert episodes", store_each_alert, &f,
			  arg);
}

int store_episodes_prune(struct store *s, uint64_t before_ms, uint64_t max_rows)
{
	sqlite3_stmt *st;
	int rc = SQLITE_OK, more = 0;

	if (store_begin(s, "prune alert episodes") < 0)
		return -1;
	if (before_ms) {
		st = s->st[ST_EPISODES_PRUNE_AGE];
		rc = store_bind_ms(st, 1, before_ms);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int(st, 2, STORE_THIN_MAX);
		if (rc == SQLITE_OK)
			rc = store_thin_step(s, st, &more);
		else
			store_reset(st);
	}
	if (rc == SQLITE_OK && max_rows) {
		st = s->st[ST_EPISODES_PRUNE_ROWS];
		rc = store_bind_ms(st, 1, max_rows);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int(st, 2, STORE_THIN_MAX);
		if (rc == SQLITE_OK)
			rc = store_thin_step(s, st, &more);
		else
			store_reset(st);
	}
	if (store_end(s, "prune alert episodes", rc) < 0)
		return -1;
	return more;
}
