/* The store's schema and its migrations (store_schema.c): a file opened by
 * store.c is checked (ours, not corrupt, not newer) and brought to the
 * current version before any query is prepared on it. */
#ifndef RING_STORE_SCHEMA_H
#define RING_STORE_SCHEMA_H

#include <sqlite3.h>
#include <stddef.h>

/* The version store_schema_setup leaves a file at. */
#define STORE_SCHEMA_VERSION 3

/* errno for an SQLite result code (an I/O error's system errno). */
int store_schema_errno(sqlite3 *db, int rc);
/* The file's user_version into *version; refused (-1, errno EPROTO or
 * EBADMSG, the reason naming path in err) when it is newer than this
 * program's, negative, corrupt or not a database. */
int store_schema_check(sqlite3 *db, const char *path, int *version, char *err,
		       size_t errlen);
/* WAL, synchronous=FULL and the WAL's size limit, then every migration
 * from version to STORE_SCHEMA_VERSION in one transaction. 0, or -1 with
 * errno and the reason in err. */
int store_schema_setup(sqlite3 *db, const char *path, int version, char *err,
		       size_t errlen);

#endif
