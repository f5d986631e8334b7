/* Keeps the coordinator's store open, and says when it cannot. The
 * database is history and a cache that a survey rebuilds: a fault of the
 * disk never stops the coordinator.
 *
 *   corrupt (at open, at a write,  the file (and its -wal, -shm) moved
 *   or its header overwritten:    aside as ringd.db.corrupt-<UTC stamp>,
 *   checked every interval)
 *                                 a fresh one opened, the state rewritten,
 *                                 "lost" said
 *   deleted or replaced           noticed (the open file's st_dev/st_ino
 *                                 against the path's) before every write
 *                                 and every interval; a fresh one opened
 *                                 and the state rewritten at once
 *   state_dir unusable            unavailable: no persistence, retried
 *                                 every interval, back on its own
 *   file system below its reserve failing before a write fails (the
 *                                 state rewritten once there is room)
 *   writes failing (ENOSPC...)    failing: counted, one log line per
 *                                 interval; every interval the state is
 *                                 rewritten (one transaction), and once
 *                                 that commits the store is ok again
 *
 * Only a second coordinator on the directory (EBUSY) and a newer schema
 * (EPROTO) refuse the start: operator errors, not disk faults.
 *
 * A write: s = store_keeper_writable(k); store_keeper_wrote(k, s ?
 * store_...(s, ...) : -1). The store's pointer changes when the file is
 * reopened: never keep it past the call. */
#ifndef RING_STORE_KEEPER_H
#define RING_STORE_KEEPER_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "store.h"

#define STORE_KEEPER_INTERVAL_MS 5000
/* Free space below this (or an eighth of a smaller file system) is a
 * failing store. */
#define STORE_KEEPER_RESERVE (1024 * 1024)

enum store_keeper_state {
	STORE_KEEPER_OK = 0,
	STORE_KEEPER_FAILING,	  /* open, but writes fail */
	STORE_KEEPER_UNAVAILABLE, /* not open: no persistence */
};

struct store_keeper;

struct store_keeper_conf {
	const char *dir;      /* state_dir */
	uint64_t interval_ms; /* checks, retries, the log line; 0: default */
	/* The current state into s, in one batch (store_batch_begin/end):
	 * a fresh file, or writes that work again. 0 when all of it was
	 * saved, else -1. It writes through store_keeper_writable like any
	 * other writer. */
	int (*rewrite)(struct store *s, void *arg);
	/* The state, its reason or the lost text changed (from the loop, not
	 * from inside a write: raise or clear alerts there). */
	void (*changed)(void *arg);
	void *arg;
};

struct store_keeper_info {
	enum store_keeper_state state;
	char reason[256];     /* why not ok; "" when ok */
	uint64_t since_ms;    /* in this state since */
	uint64_t unsaved;     /* writes not saved since the start */
	uint64_t unsaved_now; /* ... since the state last was ok */
	uint64_t lost_seq;    /* grows with each loss of the file */
	char lost[320];	      /* the last loss, e.g. "ringd.db was corrupt
				    (moved to ...)"; "" if none */
	uint64_t reopened;    /* files found deleted, replaced, corrupt */
};

/* Open dir's store with recovery (see above). NULL only with errno
 * EBUSY or EPROTO (err says why), or ENOMEM. base NULL: no timer and
 * changed is called at once (tests call store_keeper_check). */
struct store_keeper *store_keeper_new(struct event_base *base,
				      const struct store_keeper_conf *conf,
				      char *err, size_t errlen);
void store_keeper_free(struct store_keeper *k);

/* The store for a read: NULL while unavailable. */
struct store *store_keeper_store(struct store_keeper *k);
/* The store for a write, after the identity check (a deleted or replaced
 * file is reopened and rewritten first); NULL with errno ENODEV while
 * unavailable. */
struct store *store_keeper_writable(struct store_keeper *k);
/* A write's result: ret < 0 (errno) is counted, and turns ok into
 * failing (one warning); EBADMSG reopens a fresh file. */
void store_keeper_wrote(struct store_keeper *k, int ret);
/* The interval's work (the timer's; exposed for tests): identity check,
 * a retry of an unavailable store, the rewrite of a failing one, the
 * counting line. */
void store_keeper_check(struct store_keeper *k);
void store_keeper_info(const struct store_keeper *k,
		       struct store_keeper_info *out);
/* "ok", "failing", "unavailable". */
const char *store_keeper_state_name(enum store_keeper_state s);

#endif
