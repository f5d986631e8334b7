/* `ringctl watch`: the coordinator's live feed, one event at a time as it
 * arrives (plain: one line; keyvalue: one record; json: one object per
 * line). */
#ifndef RING_WATCH_CMD_H
#define RING_WATCH_CMD_H

#include <stddef.h>
#include <stdio.h>

#include "ring.pb-c.h"
#include "writer.h"

#define WATCH_CMD_MAX_KINDS 8

struct watch_cmd_opts {
	int counting;	     /* --count given */
	unsigned long count; /* then exit after this many events past the
				snapshot (0: the snapshot alone) */
	char *kinds[WATCH_CMD_MAX_KINDS];
	size_t n_kinds;
	char kind_buf[256]; /* the --kind words, split at commas */
};

/* --count N, --kind K[,K...] (repeatable). 0, or -1 with why. */
int watch_cmd_parse(int argc, char **argv, struct watch_cmd_opts *o, char *err,
		    size_t len);

/* Subscribe and print until --count events after the snapshot, the
 * coordinator closes (or refuses) or timeout_ms passes without the
 * snapshot. 0 after --count events, else 2 (why on stderr). */
int watch_cmd_run(const char *sock, int timeout_ms, enum writer_format fmt,
		  const struct watch_cmd_opts *o);

/* One event in fmt, flushed. */
void watch_cmd_render(FILE *out, enum writer_format fmt,
		      const Ring__WatchEvent *ev);

#endif
