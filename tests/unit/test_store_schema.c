/* The store's schema on a real SQLite file: a new file checked (version
 * 0) and brought to the current version in WAL mode; a version-1 file
 * migrated with its resolved alerts as the first episodes; a newer file,
 * a negative version and a file that is not a database refused, each
 * naming the path. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coordinator/store_schema.h"

struct fx {
	char dir[64], path[128];
	sqlite3 *db;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_store_schema.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/ringd.db", f->dir);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char p[160];

	if (f->db)
		sqlite3_close(f->db);
	unlink(f->path);
	snprintf(p, sizeof(p), "%s-wal", f->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", f->path);
	unlink(p);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void fx_open(struct fx *f)
{
	assert_int_equal(sqlite3_open(f->path, &f->db), SQLITE_OK);
}

static int one_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void test_new_file(void **state)
{
	struct fx *f = *state;
	char err[256];
	int version = -1;

	fx_open(f);
	assert_int_equal(
		store_schema_check(f->db, f->path, &version, err, sizeof(err)),
		0);
	assert_int_equal(version, 0);
	assert_int_equal(
		store_schema_setup(f->db, f->path, version, err, sizeof(err)),
		0);
	assert_int_equal(one_int(f->db, "PRAGMA user_version"),
			 STORE_SCHEMA_VERSION);
	assert_int_equal(one_int(f->db, "SELECT count(*) FROM alert_episodes"),
			 0);
	assert_int_equal(one_int(f->db, "SELECT count(*) FROM history"), 0);
}

static void test_migrate_v1(void **state)
{
	struct fx *f = *state;
	char err[256];
	int version = -1;

	fx_open(f);
	/* Version 1 as it was: a resolved alert and a firing one. */
	assert_int_equal(
		sqlite3_exec(
			f->db,
			"CREATE TABLE blobs(key TEXT PRIMARY KEY, saved_ms "
			"INTEGER NOT NULL, data BLOB NOT NULL);"
			"CREATE TABLE alerts(rule TEXT NOT NULL, subject TEXT "
			"NOT NULL, node TEXT NOT NULL, edge TEXT NOT NULL, "
			"severity INTEGER NOT NULL, firing INTEGER NOT NULL, "
			"message TEXT NOT NULL, first_seen_ms INTEGER NOT "
			"NULL, last_seen_ms INTEGER NOT NULL, resolved_ms "
			"INTEGER NOT NULL, flaps INTEGER NOT NULL, PRIMARY "
			"KEY(rule, subject));"
			"CREATE TABLE history(id INTEGER PRIMARY KEY, ts_ms "
			"INTEGER NOT NULL, edge TEXT NOT NULL, kind TEXT NOT "
			"NULL, direction TEXT NOT NULL, param INTEGER NOT "
			"NULL, value REAL NOT NULL);"
			"INSERT INTO alerts VALUES('node_down', 'n1', 'n1', '', "
			"2, 0, 'n1 down', 1, 2, 3, 0);"
			"INSERT INTO alerts VALUES('node_down', 'n2', 'n2', '', "
			"2, 1, 'n2 down', 1, 2, 0, 0);"
			"PRAGMA user_version = 1;",
			NULL, NULL, NULL),
		SQLITE_OK);
	assert_int_equal(
		store_schema_check(f->db, f->path, &version, err, sizeof(err)),
		0);
	assert_int_equal(version, 1);
	assert_int_equal(
		store_schema_setup(f->db, f->path, version, err, sizeof(err)),
		0);
	assert_int_equal(one_int(f->db, "PRAGMA user_version"), 3);
	/* The resolved one became the first episode. */
	assert_int_equal(one_int(f->db, "SELECT count(*) FROM alert_episodes"),
			 1);
	assert_int_equal(one_int(f->db, "SELECT cleared_ms FROM alerts WHERE "
					"subject = 'n1'"),
			 0);
}

static void test_refused(void **state)
{
	struct fx *f = *state;
	char err[256], want[300];
	int version = -1;
	FILE *fp;

	fx_open(f);
	assert_int_equal(sqlite3_exec(f->db, "PRAGMA user_version = 4", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	errno = 0;
	assert_int_equal(
		store_schema_check(f->db, f->path, &version, err, sizeof(err)),
		-1);
	assert_int_equal(errno, EPROTO);
	snprintf(want, sizeof(want),
		 "%s: schema version 4 is newer than this ring-coordinator's "
		 "(3): refusing to change it",
		 f->path);
	assert_string_equal(err, want);
	assert_int_equal(sqlite3_exec(f->db, "PRAGMA user_version = -1", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(
		store_schema_check(f->db, f->path, &version, err, sizeof(err)),
		-1);
	assert_int_equal(errno, EPROTO);
	sqlite3_close(f->db);
	f->db = NULL;
	/* Not a database at all. */
	fp = fopen(f->path, "w");
	assert_non_null(fp);
	for (int i = 0; i < 256; i++)
		fputs("not a database, ", fp);
	fclose(fp);
	fx_open(f);
	errno = 0;
	assert_int_equal(
		store_schema_check(f->db, f->path, &version, err, sizeof(err)),
		-1);
	assert_int_equal(errno, EBADMSG);
	assert_non_null(strstr(err, "corrupt, or not a ring-coordinator "
				    "database"));
	assert_int_equal(strncmp(err, f->path, strlen(f->path)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_file, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v1, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_refused, fx_setup,
						fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
