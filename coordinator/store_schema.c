/* The store's file as SQLite holds it: the schema, its migrations by
 * user_version (one path to the current version, in one transaction), the
 * checks that refuse a file that is not ours, corrupt or newer, and the
 * connection's settings (WAL, synchronous=FULL). store.c prepares its
 * queries on what this leaves. */
#include "store_schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "reason.h"

/* Version 1. history_ts serves the age limit, the row limit (oldest
 * first) and the all-edges query; history_edge the per-edge query. A new
 * file gets it, then every migration after it: one path to the current
 * schema. */
static const char store_schema[] =
	"CREATE TABLE IF NOT EXISTS blobs(key TEXT PRIMARY KEY, "
	"saved_ms INTEGER NOT NULL, data BLOB NOT NULL);"
	"CREATE TABLE IF NOT EXISTS alerts(rule TEXT NOT NULL, "
	"subject TEXT NOT NULL, node TEXT NOT NULL, edge TEXT NOT NULL, "
	"severity INTEGER NOT NULL, firing INTEGER NOT NULL, "
	"message TEXT NOT NULL, first_seen_ms INTEGER NOT NULL, "
	"last_seen_ms INTEGER NOT NULL, resolved_ms INTEGER NOT NULL, "
	"flaps INTEGER NOT NULL, PRIMARY KEY(rule, subject));"
	"CREATE TABLE IF NOT EXISTS history(id INTEGER PRIMARY KEY, "
	"ts_ms INTEGER NOT NULL, edge TEXT NOT NULL, kind TEXT NOT NULL, "
	"direction TEXT NOT NULL, param INTEGER NOT NULL, "
	"value REAL NOT NULL);"
	"CREATE INDEX IF NOT EXISTS history_edge ON history(edge, ts_ms);"
	"CREATE INDEX IF NOT EXISTS history_ts ON history(ts_ms);"
	"PRAGMA user_version = 1;";

/* Version 1 to 2: the alerts keep when their condition cleared and what
 * resolved them, and every resolved episode gets a row of its own (the
 * alerts table holds the latest per rule and subject). The resolved rows
 * a version-1 file holds become the first episodes. */
static const char store_migrate_2[] =
	"ALTER TABLE alerts ADD COLUMN cleared_ms INTEGER NOT NULL "
	"DEFAULT 0;"
	"ALTER TABLE alerts ADD COLUMN resolved_message TEXT NOT NULL "
	"DEFAULT '';"
	"CREATE TABLE alert_episodes(id INTEGER PRIMARY KEY, "
	"rule TEXT NOT NULL, subject TEXT NOT NULL, node TEXT NOT NULL, "
	"edge TEXT NOT NULL, severity INTEGER NOT NULL, "
	"message TEXT NOT NULL, first_seen_ms INTEGER NOT NULL, "
	"cleared_ms INTEGER NOT NULL, resolved_ms INTEGER NOT NULL, "
	"resolved_message TEXT NOT NULL, flaps INTEGER NOT NULL);"
	"CREATE INDEX alert_episodes_resolved ON "
	"alert_episodes(resolved_ms);"
	"INSERT INTO alert_episodes(rule, subject, node, edge, severity, "
	"message, first_seen_ms, cleared_ms, resolved_ms, resolved_message, "
	"flaps) SELECT rule, subject, node, edge, severity, message, "
	"first_seen_ms, last_seen_ms, resolved_ms, '', flaps FROM alerts "
	"WHERE firing = 0;"
	"PRAGMA user_version = 2;";

/* Version 2 to 3 (issue 24): an alert keeps the ring of its subject, so
 * that a restart says the same ring (and Alertmanager hears the same
 * labels) for the same episode. */
static const char store_migrate_3[] =
	"ALTER TABLE alerts ADD COLUMN ring TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE alert_episodes ADD COLUMN ring TEXT NOT NULL "
	"DEFAULT '';"
	"PRAGMA user_version = 3;";

/* The scripts that bring a file of version i to i + 1 (store_schema
 * makes a new one version 1). */
static const char *const store_migrations[STORE_SCHEMA_VERSION] = {
	store_schema,
	store_migrate_2,
	store_migrate_3,
};

/* errno for an SQLite result code. */
int store_schema_errno(sqlite3 *db, int rc)
{
	int sys = db ? sqlite3_system_errno(db) : 0;

	switch (rc & 0xff) {
	case SQLITE_FULL:
		return ENOSPC;
	case SQLITE_NOMEM:
		return ENOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return EBUSY;
	case SQLITE_READONLY:
		return EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return EACCES;
	case SQLITE_TOOBIG:
		return EMSGSIZE;
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
		return EINVAL;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return EBADMSG;
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
		return sys > 0 ? sys : EIO;
	default:
		return EIO;
	}
}

/* The first row's text of a pragma into out; SQLite's rc. */
static int store_schema_pragma(sqlite3 *db, const char *sql, char *out,
			       size_t size)
{
	sqlite3_stmt *st = NULL;
	int rc;

	out[0] = '\0';
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		snprintf(out, size, "%s", t ? t : "");
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* A database that is not ours, corrupt, or newer than us is refused
 * before anything writes to it. */
int store_schema_check(sqlite3 *db, const char *path, int *version, char *err,
		       size_t errlen)
{
	char buf[256];
	int rc;

	rc = store_schema_pragma(db, "PRAGMA user_version", buf, sizeof(buf));
	if (rc != SQLITE_OK)
		goto fail;
	*version = atoi(buf);
	if (*version > STORE_SCHEMA_VERSION) {
		(void)reason_fail(
			err, errlen,
			"%s: schema version %d is newer than this "
			"ring-coordinator's (%d): refusing to change it",
			path, *version, STORE_SCHEMA_VERSION);
		errno = EPROTO;
		return -1;
	}
	if (*version < 0) {
		(void)reason_fail(err, errlen, "%s: bad schema version %d",
				  path, *version);
		errno = EPROTO;
		return -1;
	}
	rc = store_schema_pragma(db, "PRAGMA quick_check", buf, sizeof(buf));
	if (rc != SQLITE_OK)
		goto fail;
	if (strcmp(buf, "ok")) {
		(void)reason_fail(err, errlen, "%s: corrupt (quick_check: %s)",
				  path, buf);
		errno = EBADMSG;
		return -1;
	}
	return 0;
fail:
	if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT) {
		(void)reason_fail(err, errlen,
				  "%s: %s: corrupt, or not a ring-coordinator "
				  "database",
				  path, sqlite3_errmsg(db));
		errno = EBADMSG;
		return -1;
	}
	(void)reason_fail(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
	errno = store_schema_errno(db, rc);
	return -1;
}

int store_schema_setup(sqlite3 *db, const char *path, int version, char *err,
		       size_t errlen)
{
	char buf[64], *msg = NULL;
	int rc;

	rc = store_schema_pragma(db, "PRAGMA journal_mode = WAL", buf,
				 sizeof(buf));
	if (rc != SQLITE_OK)
		goto fail;
	if (strcmp(buf, "wal")) {
		(void)reason_fail(err, errlen,
				  "%s: cannot use WAL (journal mode %s)", path,
				  buf);
		errno = EIO;
		return -1;
	}
	rc = sqlite3_exec(db,
			  "PRAGMA synchronous = FULL;"
			  "PRAGMA foreign_keys = ON;"
			  /* The WAL shrinks back to 64 MiB after a large
			     transaction. */
			  "PRAGMA journal_size_limit = 67108864;",
			  NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		goto fail;
	if (version < STORE_SCHEMA_VERSION) {
		/* All steps in one transaction: a crash leaves the old
		 * version whole. */
		rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
		for (int v = version; v < STORE_SCHEMA_VERSION; v++)
			if (rc == SQLITE_OK)
				rc = sqlite3_exec(db, store_migrations[v], NULL,
						  NULL, &msg);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &msg);
		if (rc != SQLITE_OK && !sqlite3_get_autocommit(db))
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			goto fail;
		if (version)
			log_info("%s: schema version %d migrated to %d", path,
				 version, STORE_SCHEMA_VERSION);
	}
	return 0;
fail:
	(void)reason_fail(err, errlen, "%s: %s", path,
			  msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	errno = store_schema_errno(db, rc);
	return -1;
}
