/* store_keeper: the faults a disk brings, each on a real SQLite file in a
 * temporary directory: a corrupt file at open (moved aside, a fresh one,
 * "lost"), the file deleted or replaced while open (noticed before the
 * next write, the state rewritten), a state_dir that cannot be used (no
 * persistence, back on its own), a full disk (a tiny tmpfs in a private
 * mount namespace: failing, counted, back with the state rewritten once
 * there is room), and the operator errors that still refuse (a second
 * coordinator, a newer schema). No event loop: the tests call
 * store_keeper_check where the timer would. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coordinator/store.h"
#include "coordinator/store_keeper.h"
#include "testns.h"
#include "testutil.h"

struct fx {
	char dir[64];
	char db[128];
	char err[512];
	/* What the coordinator would rewrite: one blob. */
	const char *topology;
	unsigned rewrites, changes;
	int rewrite_ret;
};

static int fx_rewrite(struct store *s, void *arg)
{
	struct fx *f = arg;
	int r;

	f->rewrites++;
	if (store_batch_begin(s) < 0)
		return -1;
	r = store_put_blob(s, "topology", f->topology, strlen(f->topology),
			   1000);
	if (store_batch_end(s) < 0)
		return -1;
	return r;
}

static void fx_changed(void *arg)
{
	((struct fx *)arg)->changes++;
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_keeper.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/%s", f->dir, STORE_FILE);
	f->topology = "topology v1";
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

static struct store_keeper *fx_keeper(struct fx *f, const char *dir)
{
	struct store_keeper_conf c = {
		.dir = dir ? dir : f->dir,
		.rewrite = fx_rewrite,
		.changed = fx_changed,
		.arg = f,
	};
	struct store_keeper *k =
		store_keeper_new(NULL, &c, f->err, sizeof(f->err));

	if (!k)
		print_message("store_keeper_new: %s\n", f->err);
	return k;
}

/* A write as coord.c does it. */
static int fx_put(struct store_keeper *k, const char *key, const char *val)
{
	struct store *s = store_keeper_writable(k);
	int r = s ? store_put_blob(s, key, val, strlen(val), 1) : -1;

	store_keeper_wrote(k, r);
	return r;
}

/* The blob's text as a separate reader of the file sees it. */
static int raw_blob(const char *path, const char *key, char *out, size_t n)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = -1;

	out[0] = '\0';
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) ==
		    SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT data FROM blobs WHERE key = ?1", -1,
			       &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		snprintf(out, n, "%.*s", sqlite3_column_bytes(st, 0),
			 (const char *)sqlite3_column_blob(st, 0));
		rc = 0;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

/* The name in dir that starts with prefix ("" if none). */
static void find_aside(const char *dir, const char *prefix, char *out, size_t n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	out[0] = '\0';
	assert_non_null(d);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)) &&
		    !strstr(e->d_name, "-wal") && !strstr(e->d_name, "-shm"))
			snprintf(out, n, "%s", e->d_name);
	closedir(d);
}

static void write_junk(const char *path, size_t len)
{
	char *junk = malloc(len);
	FILE *fp = fopen(path, "wb");

	assert_non_null(junk);
	assert_non_null(fp);
	for (size_t i = 0; i < len; i++)
		junk[i] = (char)("not a database "[i % 15] ^ (i >> 7));
	assert_int_equal(fwrite(junk, 1, len, fp), len);
	fclose(fp);
	free(junk);
}

/* Corrupt at the start: moved aside with a stamp, a fresh file, lost. */
static void test_keeper_corrupt_at_open(void **state)
{
	struct fx *f = *state;
	struct store_keeper *k;
	struct store_keeper_info in;
	char aside[256], path[512];
	struct stat st;

	write_junk(f->db, 16384);
	k = fx_keeper(f, NULL);
	assert_non_null(k);
	store_keeper_info(k, &in);
	assert_int_equal(in.state, STORE_KEEPER_OK);
	assert_int_equal(in.lost_seq, 1);
	assert_non_null(strstr(in.lost, "ringd.db was corrupt (moved to "));
	print_message("lost: %s\n", in.lost);
	find_aside(f->dir, "ringd.db.corrupt-", aside, sizeof(aside));
	assert_true(*aside);
	/* ringd.db.corrupt-20261206T171500Z */
	assert_int_equal(strlen(aside), strlen("ringd.db.corrupt-") + 16);
	snprintf(path, sizeof(path), "%s/%s", f->dir, aside);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 16384); /* kept as it was */
	assert_non_null(strstr(in.lost, aside));
	/* The fresh one takes writes. */
	assert_int_equal(fx_put(k, "topology", "fresh"), 0);
	assert_int_equal(raw_blob(f->db, "topology", path, sizeof(path)), 0);
	assert_string_equal(path, "fresh");
	store_keeper_check(k);
	assert_true(f->changes >= 1);
	store_keeper_free(k);
}

/* rm ringd.db* while open: the next write notices, writes to a fresh
 * file, and the state is rewritten into it. */
static void test_keeper_deleted(void **state)
{
	struct fx *f = *state;
	struct store_keeper *k = fx_keeper(f, NULL);
	struct store_keeper_info in;
	char path[160], out[64];

	assert_non_null(k);
	assert_int_equal(fx_put(k, "topology", f->topology), 0);
	assert_int_equal(fx_put(k, "ranks", "r1"), 0);
	assert_int_equal(unlink(f->db), 0);
	snprintf(path, sizeof(path), "%s-wal", f->db);
	unlink(path);
	snprintf(path, sizeof(path), "%s-shm", f->db);
	unlink(path);
	/* The interval's check finds it. */
	store_keeper_check(k);
	assert_int_equal(access(f->db, F_OK), 0);
	assert_int_equal(f->rewrites, 1);
	assert_int_equal(raw_blob(f->db, "topology", out, sizeof(out)), 0);
	assert_string_equal(out, f->topology);
	store_keeper_info(k, &in);
	assert_int_equal(in.state, STORE_KEEPER_OK);
	assert_int_equal(in.reopened, 1);
	assert_int_equal(in.unsaved, 0);

	/* And before a write, without waiting for the interval. */
	assert_int_equal(unlink(f->db), 0);
	assert_int_equal(fx_put(k, "ranks", "r2"), 0);
	assert_int_equal(raw_blob(f->db, "ranks", out, sizeof(out)), 0);
	assert_string_equal(out, "r2");
	store_keeper_check(k); /* the rewrite ran from "the loop" */
	assert_int_equal(f->rewrites, 2);
	assert_int_equal(raw_blob(f->db, "topology", out, sizeof(out)), 0);
	store_keeper_info(k, &in);
	assert_int_equal(in.reopened, 2);
	store_keeper_free(k);
}

/* Overwritten in place while open (same file, junk from byte 0): the
 * interval's check sees the header, moves it aside, starts afresh with
 * the state rewritten, and says it was lost. */
static void test_keeper_corrupt_while_open(void **state)
{
	struct fx *f = *state;
	struct store_keeper *k = fx_keeper(f, NULL);
	struct store_keeper_info in;
	char aside[256], out[64], junk[8192];
	int fd;

	assert_non_null(k);
	assert_int_equal(fx_put(k, "topology", f->topology), 0);
	store_keeper_check(k);
	store_keeper_info(k, &in);
	assert_int_equal(in.lost_seq, 0);
	memset(junk, 0x5a, sizeof(junk));
	fd = open(f->db, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, junk, sizeof(junk), 0), sizeof(junk));
	close(fd);
	store_keeper_check(k);
	store_keeper_info(k, &in);
	assert_int_equal(in.state, STORE_KEEPER_OK);
	assert_int_equal(in.lost_seq, 1);
	assert_non_null(strstr(in.lost, "was corrupt (moved to "));
	find_aside(f->dir, "ringd.db.corrupt-", aside, sizeof(aside));
	assert_true(*aside);
	assert_int_equal(raw_blob(f->db, "topology", out, sizeof(out)), 0);
	assert_string_equal(out, f->topology);
	assert_int_equal(fx_put(k, "ranks", "r4"), 0);
	store_keeper_free(k);
}

/* Replaced while open (another file renamed over it): the path's file
 * is used from then on, with the current state in it. */
static void test_keeper_replaced(void **state)
{
	struct fx *f = *state;
	struct store_keeper *k = fx_keeper(f, NULL);
	struct store_keeper_info in;
	char other[160], out[64];
	sqlite3 *db;

	assert_non_null(k);
	assert_int_equal(fx_put(k, "topology", f->topology), 0);
	snprintf(other, sizeof(other), "%s/other.db", f->dir);
	assert_int_equal(sqlite3_open(other, &db), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(db, "CREATE TABLE x(y)", NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(rename(other, f->db), 0);
	f->topology = "topology v2";
	assert_int_equal(fx_put(k, "ranks", "r3"), 0);
	store_keeper_check(k);
	assert_int_equal(raw_blob(f->db, "ranks", out, sizeof(out)), 0);
	assert_string_equal(out, "r3");
	assert_int_equal(raw_blob(f->db, "topology", out, sizeof(out)), 0);
	assert_string_equal(out, "topology v2");
	store_keeper_info(k, &in);
	assert_int_equal(in.state, STORE_KEEPER_OK);
	assert_int_equal(in.reopened, 1);
	store_keeper_free(k);
}

/* state_dir cannot be used (a file where the directory should be: root
 * ignores modes): the keeper runs without persistence, counts, retries,
 * and is back on its own once the directory can be made. */
static void test_keeper_unusable_dir(void **state)
{
	struct fx *f = *state;
	char dir[160], db[200], out[64];
	struct store_keeper *k;
	struct store_keeper_info in;
	FILE *fp;

	snprintf(dir, sizeof(dir), "%s/state", f->dir);
	fp = fopen(dir, "w");
	assert_non_null(fp);
	fclose(fp);
	k = fx_keeper(f, dir);
	assert_non_null(k);
	store_keeper_info(k, &in);
	assert_int_equal(in.state, STORE_KEEPER_UNAVAILABLE);
	print_message("unavailable: %s\n", in.reason);
	assert_non_null(strstr(in.reason, dir));
	assert_null(store_keeper_store(k));
	errno = 0;
	assert_null(store_keeper_writable(k));
	assert_int_equal(errno, ENODEV);
	assert_int_equal(fx_put(k, "topology", "x"), -1);
	assert_int_equal(fx_put(k, "topology", "y"), -1);
	store_keeper_check(k); /* still a file: still unavailable */
	store_keeper_info(k, &in);
	assert_int_equal(in.state, STORE_KEEPER_UNAVAILABLE);
	assert_int_equal(in.unsaved, 2);
	assert_int_equal(in.unsaved_now, 2);
	assert_true(f->changes >= 1);

	/* Fixed: back with the state rewritten. */
	assert_int_equal(unlink(dir), 0);
	store_keeper_check(k);
	store_keeper_info(k, &in);
	assert_int_equal(in.state, STORE_KEEPER_OK);
	assert_int_equal(in.unsaved, 2);
	assert_int_equal(in.unsaved_now, 0);
	assert_int_equal(f->rewrites, 1);
	snprintf(db, sizeof(db), "%s/%s", dir, STORE_FILE);
	assert_int_equal(raw_blob(db, "topology", out, sizeof(out)), 0);
	assert_string_equal(out, f->topology);
	store_keeper_free(k);
}

/* Operator errors still refuse: a second coordinator, a newer schema. */
static void test_keeper_refuses(void **state)
{
	struct fx *f = *state;
	struct store_keeper *k = fx_keeper(f, NULL), *k2;
	sqlite3 *db;

	assert_non_null(k);
	k2 = fx_keeper(f, NULL);
	assert_null(k2);
	assert_int_equal(errno, EBUSY);
	store_keeper_free(k);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(db);
	assert_null(fx_keeper(f, NULL));
	assert_int_equal(errno, EPROTO);
}

/* A full disk: a 1 MiB tmpfs in a private mount namespace, filled by
 * another file. Writes fail: failing, counted; the file freed: the next
 * check rewrites the state and the store is ok. Needs root. */
static int full_changes;
static const char *full_topology = "topology after the full disk";

static int full_rewrite(struct store *s, void *arg)
{
	int r;

	(void)arg;
	if (store_batch_begin(s) < 0)
		return -1;
	r = store_put_blob(s, "topology", full_topology, strlen(full_topology),
			   2);
	if (store_batch_end(s) < 0)
		return -1;
	return r;
}

static void full_changed(void *arg)
{
	(void)arg;
	full_changes++;
}

static int keeper_full_child(void)
{
	char dir[] = "/tmp/test_keeper_full.XXXXXX", err[512], fill[128],
	     db[128], out[64];
	static char big[64 * 1024];
	struct store_keeper_conf c = {
		.rewrite = full_rewrite,
		.changed = full_changed,
	};
	struct store_keeper *k;
	struct store_keeper_info in;
	unsigned failed = 0;
	FILE *fp;

	if (unshare(CLONE_NEWNS) < 0)
		return 77;
	NS_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	NS_CHECK(mkdtemp(dir));
	NS_CHECK(mount("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0700") == 0);
	c.dir = dir;
	k = store_keeper_new(NULL, &c, err, sizeof(err));
	NS_CHECK(k);
	/* Fill what is left. */
	snprintf(fill, sizeof(fill), "%s/filler", dir);
	fp = fopen(fill, "wb");
	NS_CHECK(fp);
	memset(big, 'x', sizeof(big));
	while (fwrite(big, 1, sizeof(big), fp) == sizeof(big))
		;
	fclose(fp);
	for (unsigned i = 0; i < 50; i++) {
		struct store *s = store_keeper_writable(k);
		int r = s ? store_put_blob(s, "history", big, sizeof(big), 3)
			  : -1;

		store_keeper_wrote(k, r);
		failed += r < 0;
	}
	store_keeper_info(k, &in);
	fprintf(stderr, "full: %s (%s), %llu unsaved\n",
		store_keeper_state_name(in.state), in.reason,
		(unsigned long long)in.unsaved);
	NS_CHECK(failed == 50);
	NS_CHECK(in.state == STORE_KEEPER_FAILING);
	NS_CHECK(in.unsaved == 50 && in.unsaved_now == 50);
	NS_CHECK(strstr(in.reason, "full"));
	store_keeper_check(k); /* still full: still failing */
	store_keeper_info(k, &in);
	NS_CHECK(in.state == STORE_KEEPER_FAILING);
	NS_CHECK(full_changes >= 1);

	NS_CHECK(unlink(fill) == 0);
	store_keeper_check(k);
	store_keeper_info(k, &in);
	NS_CHECK(in.state == STORE_KEEPER_OK);
	NS_CHECK(in.unsaved == 50 && in.unsaved_now == 0);
	snprintf(db, sizeof(db), "%s/%s", dir, STORE_FILE);
	NS_CHECK(raw_blob(db, "topology", out, sizeof(out)) == 0);
	NS_CHECK(!strcmp(out, full_topology));

	/* Full again with nothing written: the interval's check alone says
	 * so (steady state writes nothing for long), and no rewrite that
	 * fits in the WAL's reused pages makes it ok while full. */
	fp = fopen(fill, "wb");
	NS_CHECK(fp);
	while (fwrite(big, 1, sizeof(big), fp) == sizeof(big))
		;
	fclose(fp);
	store_keeper_check(k);
	store_keeper_info(k, &in);
	NS_CHECK(in.state == STORE_KEEPER_FAILING);
	NS_CHECK(strstr(in.reason, "no space"));
	NS_CHECK(in.unsaved_now == 0);
	store_keeper_check(k);
	store_keeper_info(k, &in);
	NS_CHECK(in.state == STORE_KEEPER_FAILING);
	NS_CHECK(unlink(fill) == 0);
	store_keeper_check(k);
	store_keeper_info(k, &in);
	NS_CHECK(in.state == STORE_KEEPER_OK);
	store_keeper_free(k);
	umount(dir);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keeper_corrupt_at_open,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_keeper_deleted, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_keeper_corrupt_while_open,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_keeper_replaced, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_keeper_unusable_dir,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_keeper_refuses, fx_setup,
						fx_teardown),
		TESTNS_UNIT_TEST(keeper_full_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
