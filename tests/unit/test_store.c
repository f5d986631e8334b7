/* store: the coordinator's SQLite state on real files in a temporary
 * directory: blobs, alerts, history and its thinning, reopening, what is
 * refused (a newer schema, a corrupt file, a second coordinator), and
 * crash safety: a child writing in a loop is killed with SIGKILL at a
 * random moment and what it committed must be there whole. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coordinator/store.h"
#include "testns.h"
#include "testutil.h"

struct fx {
	char dir[64];
	char db[128];
	char err[512];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_store.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/%s", f->dir, STORE_FILE);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	testutil_rm_tree(f->dir);
	free(f);
	return 0;
}

static struct store *fx_open(struct fx *f)
{
	struct store *s = store_open(f->dir, f->err, sizeof(f->err));

	if (!s)
		print_message("store_open: %s\n", f->err);
	assert_non_null(s);
	return s;
}

/* SQL on the file directly, as an operator's sqlite3 would: the first
 * column of the first row into out (when given). */
static void raw_sql(const char *path, const char *sql, char *out, size_t n)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc;

	assert_int_equal(
		sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (out)
		out[0] = '\0';
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && out)
		snprintf(out, n, "%s",
			 (const char *)sqlite3_column_text(st, 0));
	while (rc == SQLITE_ROW)
		rc = sqlite3_step(st);
	assert_int_equal(rc, SQLITE_DONE);
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* Several statements on the file directly. */
static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;

	assert_int_equal(
		sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* The same without cmocka's asserts, for a forked child: 0 or -1. */
static int raw_integrity(const char *path, char *out, size_t n)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = -1;

	out[0] = '\0';
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) ==
		    SQLITE_OK &&
	    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		snprintf(out, n, "%s",
			 (const char *)sqlite3_column_text(st, 0));
		rc = 0;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

static void test_store_blob(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	static const unsigned char bin[] = {0, 1, 0, 2, 0xff};
	void *buf;
	size_t len;
	uint64_t saved;

	/* None yet. */
	buf = (void *)1;
	assert_int_equal(store_get_blob(s, "topology", &buf, &len, &saved), -1);
	assert_int_equal(errno, ENOENT);
	assert_null(buf);

	assert_int_equal(store_put_blob(s, "topology", "abc", 3, 100), 0);
	assert_int_equal(store_get_blob(s, "topology", &buf, &len, &saved), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(buf, "abc", 3);
	assert_int_equal(saved, 100);
	free(buf);

	/* Replaced whole, binary data intact. */
	assert_int_equal(store_put_blob(s, "topology", bin, sizeof(bin), 200),
			 0);
	assert_int_equal(store_get_blob(s, "topology", &buf, &len, &saved), 0);
	assert_int_equal(len, sizeof(bin));
	assert_memory_equal(buf, bin, sizeof(bin));
	assert_int_equal(saved, 200);
	free(buf);

	/* An empty blob is a blob, not a missing one. */
	assert_int_equal(store_put_blob(s, "ranks", NULL, 0, 300), 0);
	assert_int_equal(store_get_blob(s, "ranks", &buf, &len, NULL), 0);
	assert_non_null(buf);
	assert_int_equal(len, 0);
	free(buf);

	assert_int_equal(store_get_blob(s, "baselines", &buf, &len, NULL), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(store_put_blob(s, NULL, "x", 1, 1), -1);
	assert_int_equal(errno, EINVAL);
	store_close(s);
}

static struct alert test_alert(const char *rule, const char *subject,
			       enum alert_severity sev, int firing,
			       uint64_t first, uint64_t resolved)
{
	struct alert a;

	memset(&a, 0, sizeof(a));
	snprintf(a.rule, sizeof(a.rule), "%s", rule);
	snprintf(a.subject, sizeof(a.subject), "%s", subject);
	snprintf(a.node, sizeof(a.node), "%s", "n1");
	snprintf(a.message, sizeof(a.message), "%s %s", rule, subject);
	a.severity = sev;
	a.firing = firing;
	a.first_seen_ms = first;
	a.last_seen_ms = first + 5;
	a.resolved_ms = resolved;
	return a;
}

/* Field by field: the structs have padding. */
static void assert_alert_equal(const struct alert *x, const struct alert *y)
{
	assert_string_equal(x->rule, y->rule);
	assert_string_equal(x->subject, y->subject);
	assert_string_equal(x->node, y->node);
	assert_string_equal(x->edge, y->edge);
	assert_int_equal(x->severity, y->severity);
	assert_int_equal(x->firing, y->firing);
	assert_string_equal(x->message, y->message);
	assert_int_equal(x->first_seen_ms, y->first_seen_ms);
	assert_int_equal(x->last_seen_ms, y->last_seen_ms);
	assert_int_equal(x->resolved_ms, y->resolved_ms);
	assert_int_equal(x->flaps, y->flaps);
	assert_int_equal(x->cleared_ms, y->cleared_ms);
	assert_string_equal(x->resolved_message, y->resolved_message);
}

struct alerts_seen {
	struct alert a[8];
	unsigned n;
	unsigned stop_after; /* 0: never */
};

static int alerts_collect(const struct alert *a, void *arg)
{
	struct alerts_seen *seen = arg;

	if (seen->n < 8)
		seen->a[seen->n] = *a;
	seen->n++;
	return seen->stop_after && seen->n == seen->stop_after ? 7 : 0;
}

static void alerts_load_all(struct store *s, struct alerts_seen *seen)
{
	memset(seen, 0, sizeof(*seen));
	assert_int_equal(store_alerts_load(s, alerts_collect, seen), 0);
}

static void test_store_alerts(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	struct alerts_seen seen;
	struct alert a =
		test_alert("cable_down", "n1-n2", ALERT_CRITICAL, 0, 10, 50);
	struct alert b =
		test_alert("edge_degraded", "n2-n4", ALERT_WARNING, 1, 20, 0);
	struct alert c =
		test_alert("node_down", "n3", ALERT_CRITICAL, 1, 30, 0);

	snprintf(a.edge, sizeof(a.edge), "n1-n2");
	assert_int_equal(store_alert_save(s, &a), 0);
	assert_int_equal(store_alert_save(s, &b), 0);
	assert_int_equal(store_alert_save(s, &c), 0);
	/* The same (rule, subject): its latest state replaces the first. */
	snprintf(b.message, sizeof(b.message), "n2-n4 at 40%% of baseline");
	b.flaps = 2;
	b.last_seen_ms = 99;
	assert_int_equal(store_alert_save(s, &b), 0);

	/* Firing first, most severe first; then the resolved one. */
	alerts_load_all(s, &seen);
	assert_int_equal(seen.n, 3);
	assert_string_equal(seen.a[0].rule, "node_down");
	assert_string_equal(seen.a[1].rule, "edge_degraded");
	assert_string_equal(seen.a[2].rule, "cable_down");
	assert_alert_equal(&seen.a[1], &b);
	assert_alert_equal(&seen.a[2], &a);
	assert_alert_equal(&seen.a[0], &c);

	/* fn's non-zero return stops the walk and is returned. */
	memset(&seen, 0, sizeof(seen));
	seen.stop_after = 1;
	assert_int_equal(store_alerts_load(s, alerts_collect, &seen), 7);
	assert_int_equal(seen.n, 1);

	/* Only resolved alerts older than the cut go. */
	assert_int_equal(store_alerts_prune(s, 50), 0);
	alerts_load_all(s, &seen);
	assert_int_equal(seen.n, 3);
	assert_int_equal(store_alerts_prune(s, 51), 0);
	alerts_load_all(s, &seen);
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.a[0].rule, "node_down");
	assert_string_equal(seen.a[1].rule, "edge_degraded");

	/* Fields without their NUL are read no further than they go, and
	 * come back whole but for the room the NUL takes. */
	memset(a.rule, 'r', sizeof(a.rule));
	memset(a.subject, 's', sizeof(a.subject));
	memset(a.message, 'm', sizeof(a.message));
	assert_int_equal(store_alert_save(s, &a), 0);
	alerts_load_all(s, &seen);
	assert_int_equal(seen.n, 3);
	assert_int_equal(strlen(seen.a[2].rule), sizeof(a.rule) - 1);
	assert_int_equal(strlen(seen.a[2].subject), sizeof(a.subject) - 1);
	assert_int_equal(strlen(seen.a[2].message), sizeof(a.message) - 1);
	assert_int_equal(seen.a[2].rule[0], 'r');
	store_close(s);
}

/* What the database file says is not trusted: overlong text, severities
 * and counts out of range. */
static void test_store_alerts_hostile_file(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	struct alerts_seen seen;
	char sql[4096];

	store_close(s);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO alerts VALUES (printf('%%.*c', 1000, 'r'), "
		 "printf('%%.*c', 5000, 's'), x'6e3100ff', '', 99, 5, "
		 "printf('%%.*c', 100000, 'm'), -5, 7, 8, 99999999999, -3, "
		 "printf('%%.*c', 100000, 'x'), printf('%%.*c', 9000, 'g'))");
	raw_sql(f->db, sql, NULL, 0);
	s = fx_open(f);
	alerts_load_all(s, &seen);
	assert_int_equal(seen.n, 1);
	assert_int_equal(strlen(seen.a[0].rule), ALERTS_RULE_LEN - 1);
	assert_int_equal(strlen(seen.a[0].subject), ALERTS_SUBJECT_LEN - 1);
	assert_int_equal(strlen(seen.a[0].message), ALERTS_MESSAGE_LEN - 1);
	assert_string_equal(seen.a[0].node, "n1");
	assert_int_equal(seen.a[0].severity, ALERT_CRITICAL);
	assert_int_equal(seen.a[0].firing, 1);
	assert_int_equal(seen.a[0].first_seen_ms, 0);
	assert_int_equal(seen.a[0].resolved_ms, 8);
	assert_int_equal(seen.a[0].flaps, UINT32_MAX);
	assert_int_equal(seen.a[0].cleared_ms, 0);
	assert_int_equal(strlen(seen.a[0].ring), ALERTS_NODE_LEN - 1);
	assert_int_equal(strlen(seen.a[0].resolved_message),
			 ALERTS_MESSAGE_LEN - 1);
	store_close(s);
}

/* In a load callback the store is not re-entered. */
static int alerts_reenter(const struct alert *a, void *arg)
{
	struct store *s = arg;

	assert_int_equal(store_alert_save(s, a), -1);
	assert_int_equal(errno, EBUSY);
	return 0;
}

static void test_store_no_reentry(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	struct alert a =
		test_alert("node_down", "n3", ALERT_CRITICAL, 1, 30, 0);
	struct alerts_seen seen;

	assert_int_equal(store_alert_save(s, &a), 0);
	assert_int_equal(store_alerts_load(s, alerts_reenter, s), 0);
	/* And after it, all is usable again. */
	assert_int_equal(store_alert_save(s, &a), 0);
	alerts_load_all(s, &seen);
	assert_int_equal(seen.n, 1);
	store_close(s);
}

static struct store_sample test_sample(uint64_t ts, const char *edge,
				       const char *kind, uint32_t param,
				       double value)
{
	struct store_sample v;

	memset(&v, 0, sizeof(v));
	v.ts_ms = ts;
	snprintf(v.edge, sizeof(v.edge), "%s", edge);
	snprintf(v.kind, sizeof(v.kind), "%s", kind);
	snprintf(v.direction, sizeof(v.direction), "a_to_b");
	v.param = param;
	v.value = value;
	return v;
}

struct samples_seen {
	struct store_sample v[16];
	unsigned n;
	uint64_t min_ts, max_ts;
	unsigned stop_after;
};

static int samples_collect(const struct store_sample *v, void *arg)
{
	struct samples_seen *seen = arg;

	if (seen->n < 16)
		seen->v[seen->n] = *v;
	if (!seen->n || v->ts_ms < seen->min_ts)
		seen->min_ts = v->ts_ms;
	if (v->ts_ms > seen->max_ts)
		seen->max_ts = v->ts_ms;
	seen->n++;
	return seen->stop_after && seen->n == seen->stop_after ? 9 : 0;
}

static void samples_query(struct store *s, const char *edge, uint64_t since,
			  struct samples_seen *seen)
{
	memset(seen, 0, sizeof(*seen));
	assert_int_equal(
		store_history_query(s, edge, since, samples_collect, seen), 0);
}

static void test_store_history(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	struct samples_seen seen;
	struct store_sample v[5] = {
		test_sample(300, "n1-n2", "tcp_bw", 8, 180.5),
		test_sample(100, "n1-n2", "tcp_bw", 1, 45.25),
		test_sample(200, "n2-n4", "rdma_write_bw", 4, 190.0),
		test_sample(200, "n1-n2", "tcp_lat", 64, 12.5),
		test_sample(400, "n2-n4", "tcp_bw", 8, 170.0),
	};

	assert_int_equal(store_history_add(s, v, 5), 0);
	assert_int_equal(store_history_add(s, v, 0), 0);

	/* One edge, oldest first, every field back. */
	samples_query(s, "n1-n2", 0, &seen);
	assert_int_equal(seen.n, 3);
	assert_memory_equal(&seen.v[0], &v[1], sizeof(v[1]));
	assert_memory_equal(&seen.v[1], &v[3], sizeof(v[3]));
	assert_memory_equal(&seen.v[2], &v[0], sizeof(v[0]));

	/* since_ms is inclusive. */
	samples_query(s, "n1-n2", 200, &seen);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.v[0].ts_ms, 200);
	assert_string_equal(seen.v[0].kind, "tcp_lat");

	/* All edges. */
	samples_query(s, NULL, 0, &seen);
	assert_int_equal(seen.n, 5);
	assert_int_equal(seen.v[0].ts_ms, 100);
	assert_int_equal(seen.v[4].ts_ms, 400);
	samples_query(s, NULL, 301, &seen);
	assert_int_equal(seen.n, 1);
	assert_string_equal(seen.v[0].edge, "n2-n4");

	samples_query(s, "n9-n8", 0, &seen);
	assert_int_equal(seen.n, 0);

	memset(&seen, 0, sizeof(seen));
	seen.stop_after = 2;
	assert_int_equal(
		store_history_query(s, NULL, 0, samples_collect, &seen), 9);
	assert_int_equal(seen.n, 2);
	store_close(s);
}

static void history_add_range(struct store *s, uint64_t from, uint64_t to)
{
	size_t n = (size_t)(to - from + 1);
	struct store_sample *v = calloc(n, sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = test_sample(from + i, i % 2 ? "n1-n2" : "n2-n4",
				   "tcp_bw", 8, 100.0);
	assert_int_equal(store_history_add(s, v, n), 0);
	free(v);
}

static void test_store_thin(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	struct samples_seen seen;

	history_add_range(s, 1, 100);
	/* Nothing to do. */
	assert_int_equal(store_history_thin(s, 100, 1000, 1000), 0);
	samples_query(s, NULL, 0, &seen);
	assert_int_equal(seen.n, 100);

	/* By age: older than now - max_age goes. */
	assert_int_equal(store_history_thin(s, 100, 50, 0), 0);
	samples_query(s, NULL, 0, &seen);
	assert_int_equal(seen.n, 51);
	assert_int_equal(seen.min_ts, 50);
	assert_int_equal(seen.max_ts, 100);

	/* By rows: the oldest beyond the limit go. */
	assert_int_equal(store_history_thin(s, 100, 0, 10), 0);
	samples_query(s, NULL, 0, &seen);
	assert_int_equal(seen.n, 10);
	assert_int_equal(seen.min_ts, 91);
	assert_int_equal(seen.max_ts, 100);
	samples_query(s, "n1-n2", 0, &seen);
	assert_int_equal(seen.n, 5);

	/* A large excess goes over several calls, each bounded; 1 says
	 * there is more. */
	history_add_range(s, 1001, 13000);
	assert_int_equal(store_history_thin(s, 13000, 0, 1000), 1);
	samples_query(s, NULL, 0, &seen);
	assert_int_equal(seen.n, 10010); /* 2000 of 12010 went */
	assert_int_equal(seen.min_ts, 2991);
	for (unsigned calls = 1;; calls++) {
		int r = store_history_thin(s, 13000, 0, 1000);

		assert_true(r == 0 || r == 1);
		assert_true(calls < 6 || r == 0); /* 11010 in 2000s: 6 */
		if (!r)
			break;
	}
	samples_query(s, NULL, 0, &seen);
	assert_int_equal(seen.n, 1000);
	assert_int_equal(seen.min_ts, 12001);
	assert_int_equal(seen.max_ts, 13000);
	store_close(s);
}

static void test_store_reopen(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	struct alert a =
		test_alert("ring_broken", "ring", ALERT_CRITICAL, 1, 30, 0);
	struct store_sample v = test_sample(500, "n1-n2", "tcp_bw", 8, 181.0);
	struct alerts_seen aseen;
	struct samples_seen seen;
	void *buf;
	size_t len;
	uint64_t saved;

	assert_int_equal(store_put_blob(s, "ranks", "n1 n2 n4 n3", 11, 77), 0);
	assert_int_equal(store_alert_save(s, &a), 0);
	assert_int_equal(store_history_add(s, &v, 1), 0);
	store_close(s);

	s = fx_open(f);
	assert_int_equal(store_get_blob(s, "ranks", &buf, &len, &saved), 0);
	assert_int_equal(len, 11);
	assert_memory_equal(buf, "n1 n2 n4 n3", 11);
	assert_int_equal(saved, 77);
	free(buf);
	alerts_load_all(s, &aseen);
	assert_int_equal(aseen.n, 1);
	assert_alert_equal(&aseen.a[0], &a);
	samples_query(s, "n1-n2", 0, &seen);
	assert_int_equal(seen.n, 1);
	assert_memory_equal(&seen.v[0], &v, sizeof(v));
	store_close(s);
}

/* The files are the coordinator's alone whatever the umask. */
static void test_store_mode(void **state)
{
	struct fx *f = *state;
	mode_t old = umask(022);
	struct store *s = fx_open(f);
	struct stat st;
	char wal[160];

	umask(old);
	assert_int_equal(store_put_blob(s, "topology", "t", 1, 1), 0);
	assert_int_equal(stat(f->db, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(wal, sizeof(wal), "%s-wal", f->db);
	assert_int_equal(stat(wal, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	store_close(s);
}

static void test_store_newer_schema(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	char out[32];

	store_close(s);
	raw_sql(f->db, "PRAGMA user_version = 4", NULL, 0);
	assert_null(store_open(f->dir, f->err, sizeof(f->err)));
	assert_int_equal(errno, EPROTO);
	print_message("refused: %s\n", f->err);
	assert_non_null(strstr(f->err, "schema version 4 is newer"));
	assert_non_null(strstr(f->err, f->db));
	/* Left as it was. */
	raw_sql(f->db, "PRAGMA user_version", out, sizeof(out));
	assert_string_equal(out, "4");
}

static void write_file(const char *path, const void *buf, size_t len, off_t off)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0600);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

static void *read_all(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = malloc(1 << 20);

	assert_non_null(fp);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 20, fp);
	fclose(fp);
	return buf;
}

static void test_store_garbage(void **state)
{
	struct fx *f = *state;
	char junk[16384];
	void *after;
	size_t len;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)("not a database "[i % 15] ^ (i >> 7));
	write_file(f->db, junk, sizeof(junk), 0);
	assert_null(store_open(f->dir, f->err, sizeof(f->err)));
	assert_int_equal(errno, EBADMSG);
	print_message("refused: %s\n", f->err);
	assert_non_null(strstr(f->err, f->db));
	assert_non_null(strstr(f->err, "not a ring-coordinator database"));
	/* Not overwritten. */
	after = read_all(f->db, &len);
	assert_int_equal(len, sizeof(junk));
	assert_memory_equal(after, junk, sizeof(junk));
	free(after);
}

/* A valid header over damaged pages: quick_check finds it. */
static void test_store_corrupt_pages(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	char junk[8192];
	struct stat st;

	history_add_range(s, 1, 3000);
	store_close(s);
	assert_int_equal(stat(f->db, &st), 0);
	assert_true(st.st_size > 4 * 4096);
	memset(junk, 0x5a, sizeof(junk));
	/* Pages 3 and 4 of 4096 bytes: history or its indexes. */
	write_file(f->db, junk, sizeof(junk), 2 * 4096);
	assert_null(store_open(f->dir, f->err, sizeof(f->err)));
	assert_int_equal(errno, EBADMSG);
	print_message("refused: %s\n", f->err);
	assert_non_null(strstr(f->err, f->db));
	assert_non_null(strstr(f->err, "corrupt"));
}

static void test_store_lock(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	struct store *s2;
	char want[160];

	assert_null(store_open(f->dir, f->err, sizeof(f->err)));
	assert_int_equal(errno, EBUSY);
	snprintf(want, sizeof(want), "another coordinator uses %s", f->dir);
	assert_string_equal(f->err, want);
	store_close(s);
	s2 = fx_open(f);
	store_close(s2);
}

/* Crash safety. Batch p is CRASH_ROWS rows with param p (and ts p); the
 * blob written after it is p's: its length and bytes follow from p. */
#define CRASH_ROWS 40
#define CRASH_ITERS 10
#define CRASH_BLOB_MAX 8192

static size_t crash_blob(unsigned char *buf, uint32_t p)
{
	size_t len = 16 + p % (CRASH_BLOB_MAX - 16);

	memcpy(buf, &p, sizeof(p));
	for (size_t k = sizeof(p); k < len; k++)
		buf[k] = (unsigned char)(p * 31 + k);
	return len;
}

/* The child: writes until killed; a byte on wfd after its first
 * commit. */
static void crash_child(const char *dir, uint32_t base, int wfd)
{
	static unsigned char blob[CRASH_BLOB_MAX];
	struct store_sample v[CRASH_ROWS];
	char err[256];
	struct store *s = store_open(dir, err, sizeof(err));

	if (!s) {
		fprintf(stderr, "child: store_open: %s\n", err);
		_exit(2);
	}
	for (uint32_t i = 0;; i++) {
		uint32_t p = base + i;

		for (unsigned r = 0; r < CRASH_ROWS; r++)
			v[r] = test_sample(p, r % 2 ? "n1-n2" : "n2-n4",
					   "tcp_bw", p, r);
		if (store_history_add(s, v, CRASH_ROWS) < 0)
			_exit(3);
		if (store_put_blob(s, "topology", blob, crash_blob(blob, p),
				   p) < 0)
			_exit(4);
		if (i == 0 && (write(wfd, "w", 1) != 1 || close(wfd) < 0))
			_exit(5);
	}
}

struct crash_check {
	unsigned rows;	  /* of a batch */
	uint32_t param;	  /* the batch being counted */
	unsigned count;	  /* its rows so far */
	unsigned batches; /* whole batches */
	uint32_t last;	  /* the newest whole batch */
	int bad;	  /* a batch not whole, or a row not its batch's */
};

static void crash_batch_end(struct crash_check *c)
{
	if (!c->count)
		return;
	if (c->count != c->rows) {
		fprintf(stderr, "batch %u: %u rows of %u\n", c->param, c->count,
			c->rows);
		c->bad = 1;
	}
	c->batches++;
	c->last = c->param;
}

static int crash_count(const struct store_sample *v, void *arg)
{
	struct crash_check *c = arg;

	if (v->ts_ms != v->param || strcmp(v->kind, "tcp_bw"))
		c->bad = 1;
	if (v->param != c->param || !c->count) {
		crash_batch_end(c);
		c->param = v->param;
		c->count = 0;
	}
	c->count++;
	return 0;
}

/* What survived a kill: whole batches only, a blob that is one batch's,
 * and a file sqlite3 itself finds sound. */
static unsigned crash_verify(struct fx *f, unsigned prev_batches)
{
	static unsigned char want[CRASH_BLOB_MAX];
	struct crash_check c;
	struct store *s = fx_open(f);
	void *buf;
	size_t len;
	uint64_t saved;
	char out[256];

	memset(&c, 0, sizeof(c));
	c.rows = CRASH_ROWS;
	assert_int_equal(store_history_query(s, NULL, 0, crash_count, &c), 0);
	crash_batch_end(&c);
	assert_false(c.bad);
	assert_true(c.batches >= prev_batches);
	if (store_get_blob(s, "topology", &buf, &len, &saved) == 0) {
		uint32_t p = (uint32_t)saved;

		assert_int_equal(len, crash_blob(want, p));
		assert_memory_equal(buf, want, len);
		/* Written after its batch, which is there whole. */
		assert_true(c.batches > 0);
		assert_true(p <= c.last);
		free(buf);
	} else {
		assert_int_equal(errno, ENOENT);
	}
	store_close(s);
	raw_sql(f->db, "PRAGMA integrity_check", out, sizeof(out));
	assert_string_equal(out, "ok");
	return c.batches;
}

static void test_store_crash(void **state)
{
	struct fx *f = *state;
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	unsigned batches = 0;

	print_message("crash: seed %u\n", seed);
	srand(seed);
	for (unsigned it = 0; it < CRASH_ITERS; it++) {
		int p[2], status;
		pid_t pid;

		assert_int_equal(pipe(p), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(p[0]);
			crash_child(f->dir, it * 1000000u, p[1]);
		}
		close(p[1]);
		/* The first two kills land anywhere, schema creation
		 * included; the others once writing is under way. */
		if (it >= 2) {
			struct pollfd pfd = {.fd = p[0], .events = POLLIN};
			char b;

			if (poll(&pfd, 1, 20000) != 1 ||
			    read(p[0], &b, 1) != 1) {
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
				fail_msg("child %u wrote nothing within 20 s",
					 it);
			}
		}
		/* p[0] stays open: the child's byte must not meet EPIPE. */
		usleep((useconds_t)(rand() % (it >= 2 ? 30000 : 3000)));
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		close(p[0]);
		/* Killed, not failed on its own. */
		if (!WIFSIGNALED(status))
			fail_msg("child %u exited %d", it, WEXITSTATUS(status));
		assert_int_equal(WTERMSIG(status), SIGKILL);
		batches = crash_verify(f, batches);
	}
	print_message("crash: %u kills, %u whole batches survived\n",
		      CRASH_ITERS, batches);
	assert_true(batches > 0);
}

/* A full disk (a 512 KiB tmpfs in a private mount namespace): the write
 * that does not fit fails with ENOSPC and loses nothing committed; the
 * store reopens sound. Needs root (a skip, see testns.h). */
static int store_full_child(void)
{
	char dir[] = "/tmp/test_store_full.XXXXXX", err[512], out[64];
	static unsigned char big[256 * 1024];
	struct store_sample v[200];
	struct crash_check c;
	struct store *s;
	void *buf;
	size_t len;
	unsigned batches = 0;
	int e;

	if (unshare(CLONE_NEWNS) < 0)
		return 77;
	NS_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	NS_CHECK(mkdtemp(dir));
	NS_CHECK(mount("tmpfs", dir, "tmpfs", 0, "size=512k,mode=0700") == 0);
	s = store_open(dir, err, sizeof(err));
	if (!s)
		fprintf(stderr, "store_open: %s\n", err);
	NS_CHECK(s);
	NS_CHECK(store_put_blob(s, "topology", "v1", 2, 1) == 0);
	for (;;) {
		for (unsigned r = 0; r < 200; r++)
			v[r] = test_sample(batches, "n1-n2", "tcp_bw", batches,
					   r);
		if (store_history_add(s, v, 200) < 0)
			break;
		NS_CHECK(++batches < 10000);
	}
	e = errno;
	fprintf(stderr, "full after %u batches: %s\n", batches, strerror(e));
	NS_CHECK(e == ENOSPC);
	NS_CHECK(batches > 0);
	NS_CHECK(store_put_blob(s, "topology", big, sizeof(big), 2) < 0);
	NS_CHECK(errno == ENOSPC);
	/* What was committed is still served. */
	NS_CHECK(store_get_blob(s, "topology", &buf, &len, NULL) == 0);
	NS_CHECK(len == 2 && !memcmp(buf, "v1", 2));
	free(buf);
	store_close(s);

	s = store_open(dir, err, sizeof(err));
	if (!s)
		fprintf(stderr, "reopen: %s\n", err);
	NS_CHECK(s);
	NS_CHECK(store_get_blob(s, "topology", &buf, &len, NULL) == 0);
	NS_CHECK(len == 2 && !memcmp(buf, "v1", 2));
	free(buf);
	memset(&c, 0, sizeof(c));
	c.rows = 200;
	NS_CHECK(store_history_query(s, NULL, 0, crash_count, &c) == 0);
	crash_batch_end(&c);
	NS_CHECK(!c.bad && c.batches == batches);
	store_close(s);
	snprintf(err, sizeof(err), "%s/%s", dir, STORE_FILE);
	NS_CHECK(raw_integrity(err, out, sizeof(out)) == 0);
	NS_CHECK(!strcmp(out, "ok"));
	umount(dir);
	rmdir(dir);
	return 0;
}

/* A page of the history: newest first from a cursor. */
struct page_seen {
	uint64_t ts[2100], id[2100];
	size_t n;
};

static int page_collect(const struct store_sample *v, void *arg)
{
	struct page_seen *p = arg;

	assert_true(p->n < 2100);
	assert_string_equal(v->edge, "n1-n2");
	p->ts[p->n] = v->ts_ms;
	p->id[p->n++] = v->id;
	return 0;
}

static double page_ms(struct timespec a, struct timespec b)
{
	return (double)(b.tv_sec - a.tv_sec) * 1e3 +
	       (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

/* store_history_page walks all of an edge's rows page by page, each
 * once, newest first, with equal timestamps told apart by the row; since
 * cuts; other edges never show. Then a page's time at many rows
 * (RINGD_STORE_PAGE_ROWS, default 200000: the figure in SECURITY.md was
 * measured with history_max_rows' cap in the plain build). */
static void test_store_history_page(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	struct store_sample *v = calloc(10000, sizeof(*v));
	struct page_seen *p = calloc(1, sizeof(*p));
	uint64_t bms = 0, bid = 0, prev_ts = UINT64_MAX, prev_id = UINT64_MAX;
	size_t total = 0, rows = 200000;
	const char *env = getenv("RINGD_STORE_PAGE_ROWS");
	struct timespec t0, t1, t2;

	assert_non_null(v);
	assert_non_null(p);
	for (size_t i = 0; i < 5000; i++)
		v[i] = test_sample(i / 3, i % 2 ? "n1-n2" : "n2-n3", "tcp_bw",
				   1, (double)i);
	assert_int_equal(store_history_add(s, v, 5000), 0);
	for (;;) {
		p->n = 0;
		assert_int_equal(store_history_page(s, "n1-n2", 0, bms, bid,
						    1000, page_collect, p),
				 0);
		for (size_t i = 0; i < p->n; i++) {
			assert_true(
				p->ts[i] < prev_ts ||
				(p->ts[i] == prev_ts && p->id[i] < prev_id));
			prev_ts = p->ts[i];
			prev_id = p->id[i];
		}
		total += p->n;
		if (p->n < 1000)
			break;
		bms = p->ts[p->n - 1];
		bid = p->id[p->n - 1];
	}
	assert_int_equal(total, 2500);
	p->n = 0;
	assert_int_equal(store_history_page(s, "n1-n2", 1000, 0, 0, 2000,
					    page_collect, p),
			 0);
	/* ts 1000..1666: rows 3000..4999, the odd ones. */
	for (size_t i = 0; i < p->n; i++)
		assert_true(p->ts[i] >= 1000);
	assert_int_equal(p->n, 1000);
	assert_int_equal(
		store_history_page(s, "n1-n2", 0, 0, 0, 0, page_collect, p),
		-1);
	assert_int_equal(errno, EINVAL);

	/* A page's time at many rows of one edge. */
	if (env)
		rows = strtoull(env, NULL, 10);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t done = 0; done < rows; done += 10000) {
		size_t n = rows - done < 10000 ? rows - done : 10000;

		for (size_t i = 0; i < n; i++)
			v[i] = test_sample(10000 + done + i, "n1-n2", "tcp_bw",
					   (uint32_t)(i % 8), 1.0);
		assert_int_equal(store_history_add(s, v, n), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	p->n = 0;
	assert_int_equal(
		store_history_page(s, "n1-n2", 0, 0, 0, 2000, page_collect, p),
		0);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	assert_int_equal(p->n, 2000);
	print_message("history page: 2000 of %zu rows in %.2f ms (filled in "
		      "%.1f s)\n",
		      rows + 2500, page_ms(t1, t2), page_ms(t0, t1) / 1e3);
	/* From the middle, by cursor. */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	p->n = 0;
	assert_int_equal(store_history_page(s, "n1-n2", 0, 10000 + rows / 2,
					    UINT64_MAX >> 1, 2000, page_collect,
					    p),
			 0);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	assert_int_equal(p->n, 2000);
	print_message("history page from the middle: %.2f ms\n",
		      page_ms(t1, t2));
	/* What the hourly thinning's count costs at this size. */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(store_history_thin(s, 0, 0, rows * 2) >= 0);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	print_message("history thin (nothing to drop): %.2f ms\n",
		      page_ms(t1, t2));
	/* A pass that drops its most: 2000 of the oldest. */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(store_history_thin(s, 0, 0, rows + 2500 - 10000) >= 0);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	print_message("history thin (2000 rows dropped): %.2f ms\n",
		      page_ms(t1, t2));
	free(p);
	free(v);
	store_close(s);
}

/* Episodes: one row each (three of one key are three), newest first,
 * since and max bound the answer, pruned by age and by rows. */
static void test_store_episodes(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open(f);
	struct alerts_seen seen;
	struct alert a;

	for (unsigned i = 0; i < 3; i++) {
		a = test_alert("ring_broken", "ring", ALERT_CRITICAL, 0,
			       1000 * (i + 1), 1000 * (i + 1) + 400);
		a.cleared_ms = 1000 * (i + 1) + 100;
		a.flaps = i;
		snprintf(a.resolved_message, sizeof(a.resolved_message),
			 "episode %u cleared", i);
		assert_int_equal(store_episode_add(s, &a), 0);
	}
	a = test_alert("cable_down", "n1-n2", ALERT_WARNING, 0, 1500, 2500);
	a.cleared_ms = 2100;
	assert_int_equal(store_episode_add(s, &a), 0);

	memset(&seen, 0, sizeof(seen));
	assert_int_equal(store_episodes_query(s, 0, 100, alerts_collect, &seen),
			 0);
	assert_int_equal(seen.n, 4);
	/* Newest resolved first: 3400, 2500, 2400, 1400. */
	assert_int_equal(seen.a[0].resolved_ms, 3400);
	assert_string_equal(seen.a[0].resolved_message, "episode 2 cleared");
	assert_int_equal(seen.a[0].cleared_ms, 3100);
	assert_int_equal(seen.a[0].first_seen_ms, 3000);
	assert_int_equal(seen.a[0].flaps, 2);
	assert_int_equal(seen.a[0].firing, 0);
	assert_string_equal(seen.a[1].rule, "cable_down");
	assert_int_equal(seen.a[2].resolved_ms, 2400);
	assert_int_equal(seen.a[3].resolved_ms, 1400);

	/* since and max. */
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(
		store_episodes_query(s, 2400, 100, alerts_collect, &seen), 0);
	assert_int_equal(seen.n, 3);
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(store_episodes_query(s, 0, 2, alerts_collect, &seen),
			 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.a[1].resolved_ms, 2500);

	/* Age, then rows: the oldest go. */
	assert_int_equal(store_episodes_prune(s, 1500, 0), 0);
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(store_episodes_query(s, 0, 100, alerts_collect, &seen),
			 0);
	assert_int_equal(seen.n, 3);
	assert_int_equal(store_episodes_prune(s, 0, 1), 0);
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(store_episodes_query(s, 0, 100, alerts_collect, &seen),
			 0);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.a[0].resolved_ms, 3400);
	store_close(s);
}

/* A version-1 file (as the coordinator before episodes wrote it) opens,
 * keeps its alerts, blobs and history, and its resolved alerts become
 * episodes. */
static void test_store_migrate_v1(void **state)
{
	struct fx *f = *state;
	struct alerts_seen seen;
	struct store *s;
	char out[32];
	int fd;

	fd = open(f->db, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	raw_exec(f->db,
		 "CREATE TABLE blobs(key TEXT PRIMARY KEY, saved_ms INTEGER "
		 "NOT NULL, data BLOB NOT NULL);"
		 "CREATE TABLE alerts(rule TEXT NOT NULL, subject TEXT NOT "
		 "NULL, node TEXT NOT NULL, edge TEXT NOT NULL, severity "
		 "INTEGER NOT NULL, firing INTEGER NOT NULL, message TEXT NOT "
		 "NULL, first_seen_ms INTEGER NOT NULL, last_seen_ms INTEGER "
		 "NOT NULL, resolved_ms INTEGER NOT NULL, flaps INTEGER NOT "
		 "NULL, PRIMARY KEY(rule, subject));"
		 "CREATE TABLE history(id INTEGER PRIMARY KEY, ts_ms INTEGER "
		 "NOT NULL, edge TEXT NOT NULL, kind TEXT NOT NULL, direction "
		 "TEXT NOT NULL, param INTEGER NOT NULL, value REAL NOT NULL);"
		 "CREATE INDEX history_edge ON history(edge, ts_ms);"
		 "CREATE INDEX history_ts ON history(ts_ms);"
		 "PRAGMA user_version = 1;");
	raw_exec(
		f->db,
		"INSERT INTO alerts VALUES ('node_down', 'n3', 'n3', '', 2, 1, "
		"'n3 is down', 100, 200, 0, 0), ('cable_down', 'n1-n2', '', "
		"'n1-n2', 2, 0, 'n1-n2 is down', 300, 400, 430, 1);"
		"INSERT INTO blobs VALUES ('topology', 5, x'0102');"
		"INSERT INTO history(ts_ms, edge, kind, direction, param, "
		"value) VALUES (7, 'n1-n2', 'tcp_bw', 'a_to_b', 4, 99.5)");

	s = fx_open(f);
	raw_sql(f->db, "PRAGMA user_version", out, sizeof(out));
	assert_string_equal(out, "3");
	alerts_load_all(s, &seen);
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.a[0].rule, "node_down");
	assert_int_equal(seen.a[0].firing, 1);
	assert_int_equal(seen.a[1].resolved_ms, 430);
	assert_int_equal(seen.a[1].cleared_ms, 0);
	assert_string_equal(seen.a[1].resolved_message, "");
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(store_episodes_query(s, 0, 10, alerts_collect, &seen),
			 0);
	assert_int_equal(seen.n, 1);
	assert_string_equal(seen.a[0].rule, "cable_down");
	assert_int_equal(seen.a[0].first_seen_ms, 300);
	assert_int_equal(seen.a[0].cleared_ms, 400); /* its last sight */
	assert_int_equal(seen.a[0].resolved_ms, 430);
	assert_int_equal(seen.a[0].flaps, 1);
	raw_sql(f->db, "SELECT count(*) FROM history", out, sizeof(out));
	assert_string_equal(out, "1");
	raw_sql(f->db, "SELECT saved_ms FROM blobs", out, sizeof(out));
	assert_string_equal(out, "5");

	/* The new fields outlive a restart. */
	{
		struct alert a = test_alert("ring_broken", "ring",
					    ALERT_CRITICAL, 0, 10, 50);

		a.cleared_ms = 20;
		snprintf(a.resolved_message, sizeof(a.resolved_message),
			 "the ring is whole again after 10 s");
		assert_int_equal(store_alert_save(s, &a), 0);
		store_close(s);
		s = fx_open(f);
		alerts_load_all(s, &seen);
		assert_int_equal(seen.n, 3);
		/* Resolved ones: the older episode first. */
		assert_alert_equal(&seen.a[1], &a);
	}
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_store_blob, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_alerts, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_alerts_hostile_file,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_no_reentry, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_episodes, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_migrate_v1, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_history, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_history_page,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_thin, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_reopen, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_mode, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_newer_schema,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_garbage, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_corrupt_pages,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_lock, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_crash, fx_setup,
						fx_teardown),
		TESTNS_UNIT_TEST(store_full_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
