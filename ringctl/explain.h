/* `ringctl explain EDGE|NODE`: everything known about one edge or node,
 * gathered from the coordinator's status, inventories and history, and the
 * ceiling analysis of an edge's measured figure against the limits its
 * hardware sets (docs/HARDWARE.md). */
#ifndef RING_EXPLAIN_H
#define RING_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "explain_ceiling.h"
#include "explain_match.h"
#include "ring.pb-c.h"
#include "writer.h"

/* An explain argument, at most (bounded before anything is matched). */
#define EXPLAIN_NAME_MAX 256

/* The command: argc/argv after "explain". Exit status 0 nothing wrong, 1
 * a problem found (error, down, a warning finding or firing alert naming
 * it), 2 could not check (usage, coordinator, unknown name, no survey). */
int explain_cmd(const char *sock, int timeout_ms, enum writer_format fmt,
		int argc, char **argv);

#endif
