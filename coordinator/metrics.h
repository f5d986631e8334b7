/* The Prometheus text endpoint (metrics_listen, off by default): GET
 * /metrics on a small bounded HTTP server (http_serve.h), rendered by
 * metrics_expo.h from what the callback gathers at each scrape, and the
 * ring's read-only page (GET /, GET /ring.svg: page.h). */
#ifndef RING_METRICS_H
#define RING_METRICS_H

#include <event2/event.h>
#include <stdint.h>

#include "metrics_expo.h"

/* Fills *src at each scrape. */
typedef void (*metrics_src_fn)(struct metrics_src *src, void *arg);

struct metrics;

/* Listen on "ADDR:PORT" ("[v6]:PORT"; port 0: any free one, see
 * metrics_port); NULL with errno on failure. Bounded as http_serve.h says
 * with its default limits: connections per source and in all, request
 * size, a deadline per request and per reply. */
struct metrics *metrics_new(struct event_base *base, const char *listen,
			    metrics_src_fn fn, void *arg);
/* The port it listens on (host order). */
uint16_t metrics_port(const struct metrics *m);
void metrics_free(struct metrics *m);

#endif
