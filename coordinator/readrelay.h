/* ringctl plan --weights: the coordinator asks each chosen agent for a
 * read test (ReadTestRequest) at once and answers ringctl with all the
 * results together, in the order asked. */
#ifndef RING_READRELAY_H
#define RING_READRELAY_H

#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "ring.pb-c.h"

/* Agents get the read's own time plus this for the reply. */
#define READRELAY_SLACK_MS 15000

struct readrelay;

/* all: the answer (nodes filled in), valid during the callback only; the
 * relay frees itself after done returns. */
typedef void (*readrelay_done_fn)(const Ring__ReadTestResult *all, void *arg);

/* A relay for n nodes (names copied); up[i] 0 = the node is not up (its
 * result says so, nothing is sent to it). NULL (ENOMEM). */
struct readrelay *readrelay_new(const struct call_iface *ci,
				const char *const *nodes, const int *up,
				size_t n, const char *path, uint64_t max_bytes,
				unsigned max_ms, readrelay_done_fn done,
				void *arg);
/* Send the requests; done may run before this returns (every node
 * failed at once), and the relay is then already freed. */
void readrelay_go(struct readrelay *r);
/* Forget every pending call; done is not called. NULL is fine. */
void readrelay_cancel(struct readrelay *r);

#endif
