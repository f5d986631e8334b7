/* The coordinator's durable state under state_dir: one SQLite database in
 * WAL mode (ringd.db). It keeps what a restart must not lose: the last
 * topology and published rank order (as the wire's packed messages), the
 * alerts and every resolved episode of them, and the history of every measured figure, thinned by age and
 * row count. Every write is one transaction: after a crash (kill -9
 * included) what was committed is there, and nothing half-written. */
#ifndef RING_STORE_H
#define RING_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "alerts.h"

#define STORE_FILE "ringd.db"

struct store;

/* One measured figure of an edge. */
struct store_sample {
	uint64_t ts_ms;
	char edge[ALERTS_EDGE_LEN]; /* "a-b" as the topology names it */
	char kind[32];		    /* "tcp_bw", "rdma_write_bw", "tcp_lat",
				       "rdma_write_lat", ... */
	char direction[8];	    /* "a_to_b", "b_to_a", "" */
	uint32_t param;		    /* streams, QPs, or message size */
	double value;		    /* Gbps, or microseconds */
	uint64_t id;		    /* the row (store_history_page's cursor);
				       ignored by store_history_add */
};

/* Open (creating) dir/ringd.db: WAL, synchronous FULL, a schema version
 * checked (a newer schema is refused, not overwritten), and
 * PRAGMA quick_check. dir must exist. One process at a time: an flock on
 * dir/ringd.lock, held until store_close, refuses a second coordinator
 * ("another coordinator uses DIR", EBUSY). NULL with the reason in err
 * (and errno: EBADMSG for a corrupt file or one that is not ours, EPROTO
 * for a newer schema, EACCES, EROFS, ENOTDIR... for a directory we cannot
 * use). The other calls return -1 with errno (ENOSPC for a full disk,
 * EBADMSG for a corrupt file, EIO, ...) and keep the database's message
 * for store_error; they log it only as debug (store_keeper.h says it,
 * once per interval). */
struct store *store_open(const char *dir, char *err, size_t errlen);
void store_close(struct store *s);
/* The last failure's message ("" before any). */
const char *store_error(const struct store *s);
/* fstat of the file SQLite opened (kept open since store_open): its
 * st_dev/st_ino against the path's tell a deleted or replaced file. */
int store_file(const struct store *s, struct stat *st);
/* The open file still starts as an SQLite database (16 bytes read; a
 * page cache in WAL mode would not notice it overwritten until it reads
 * an uncached page): 1 yes, 0 no, -1 with errno. */
int store_header_ok(const struct store *s);

/* The writes between these two are one transaction (a state rewritten
 * whole: one commit, not one per alert). A write inside that fails rolls
 * the batch back; the later ones fail at once with its errno, and so
 * does store_batch_end (-1). Not nested. */
int store_batch_begin(struct store *s);
int store_batch_end(struct store *s);

/* Named blobs ("topology", "ranks"): replaced whole, in one transaction.
 * get: *buf malloc'ed (caller frees), *saved_ms when it was written; -1
 * with errno ENOENT when there is none. */
int store_put_blob(struct store *s, const char *key, const void *buf,
		   size_t len, uint64_t now_ms);
int store_get_blob(struct store *s, const char *key, void **buf, size_t *len,
		   uint64_t *saved_ms);

/* Alerts by (rule, subject): the latest state of each. */
int store_alert_save(struct store *s, const struct alert *a);
/* fn for every saved alert (firing first); stops at fn's non-zero return,
 * which it returns. fn must not call into the store (-1, EBUSY); nor
 * may store_history_query's. */
int store_alerts_load(struct store *s,
		      int (*fn)(const struct alert *a, void *arg), void *arg);
/* Forget resolved alerts older than before_ms. */
int store_alerts_prune(struct store *s, uint64_t before_ms);

/* Alert episodes: one row per resolved episode (the alerts table keeps
 * only the latest per rule and subject), as the sinks saw it: first_seen,
 * cleared (the condition went away), resolved (the hold-down ended, the
 * sinks were told), resolved_message, flaps. a is a resolved alert. */
int store_episode_add(struct store *s, const struct alert *a);
/* fn for each episode resolved at or after since_ms, newest first, at
 * most max of them (firing 0, last_seen_ms = cleared_ms); stops at fn's
 * non-zero return, which it returns. fn must not call into the store. */
int store_episodes_query(struct store *s, uint64_t since_ms, size_t max,
			 int (*fn)(const struct alert *a, void *arg),
			 void *arg);
/* Drop episodes resolved before before_ms (0: no such limit), then the
 * oldest beyond max_rows (0: no such limit). Bounded as
 * store_history_thin: 1 when more may remain, else 0, or -1. */
int store_episodes_prune(struct store *s, uint64_t before_ms,
			 uint64_t max_rows);
/* The row cap the coordinator prunes episodes to. */
#define STORE_EPISODES_MAX_ROWS 100000

/* History: n samples in one transaction. */
int store_history_add(struct store *s, const struct store_sample *v, size_t n);
/* fn for each sample of edge (all edges: NULL) since since_ms, oldest
 * first; stops at fn's non-zero return, which it returns. */
int store_history_query(struct store *s, const char *edge, uint64_t since_ms,
			int (*fn)(const struct store_sample *v, void *arg),
			void *arg);
/* One page of edge's samples since since_ms, newest first, at most max
 * (> 0) of them: those before the cursor (ts_ms, id) = (before_ms,
 * before_id), or the newest when before_ms is 0. A seek on the (edge,
 * ts_ms) index and max rows: its time does not grow with the table.
 * Stops at fn's non-zero return, which it returns. */
int store_history_page(struct store *s, const char *edge, uint64_t since_ms,
		       uint64_t before_ms, uint64_t before_id, size_t max,
		       int (*fn)(const struct store_sample *v, void *arg),
		       void *arg);
/* Drop samples older than max_age_ms, then the oldest beyond max_rows
 * (0: no such limit). Bounded work: at most 2000 rows go per limit and
 * call; 1 when that bound was hit and more may remain (call again), else
 * 0, or -1. */
int store_history_thin(struct store *s, uint64_t now_ms, uint64_t max_age_ms,
		       uint64_t max_rows);

#endif
