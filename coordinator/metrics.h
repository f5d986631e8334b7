/* The Prometheus text endpoint (metrics_listen, off by default): GET
 * /metrics on a small bounded HTTP server (http_serve.h), and the ring's
 * read-only page (GET /, GET /ring.svg: page.h). The exposition is rendered
 * from explicit inputs (the node table, the last topology, the alerts), so that
 * it is unit-tested without a server; names follow Prometheus' rules (base
 * units, _total counters, _info metadata) and labels stay bounded (nodes,
 * edges, directions, ladder steps, sizes: never free text). */
#ifndef RING_METRICS_H
#define RING_METRICS_H

struct health;
#include <event2/buffer.h>
#include <event2/event.h>
#include <stdint.h>

#include "alerts.h"
#include "nodes.h"
#include "store_keeper.h"
#include "ring.pb-c.h"

/* What the exposition is made of; any pointer may be NULL. */
struct metrics_src {
	struct nodes *nodes;
	const Ring__Topology *topology; /* the last survey, with overlay */
	const struct alerts *alerts;
	const struct health *health; /* the one health (NULL: unknown) */
	const char *coordinator;     /* name */
	const char *version;
	uint64_t now_ms;
	/* The queue pairs of the survey's RDMA bandwidth tests
	 * (survey_rdma_qps): the streams label of the RDMA figures that are
	 * not the edge's ladder; 0 = not known (the label is left empty). */
	uint32_t rdma_qps;
	/* The coordinator's own certificate ends (0: unknown). */
	uint64_t cert_not_after_ms;
	/* survey_interval (0: no periodic surveys). */
	uint64_t survey_interval_ms;
	/* 1 while the last survey or re-check failed (survey_failed). */
	int survey_failed;
	/* The watch's view of an edge, called with edge_arg (NULL: not
	 * known): its baseline in Gbps (< 0: none), and gid_change's
	 * judgement (1 changed, 0 not, -1 not judged). */
	double (*edge_baseline)(const Ring__Edge *e, void *arg);
	int (*edge_gid_changed)(const Ring__Edge *e, void *arg);
	void *edge_arg;
	/* The state store (NULL: not known): ringd_store_state{state},
	 * ringd_store_unsaved_writes_total, ringd_store_reopened_total. */
	const struct store_keeper_info *store;
};

/* Append the exposition (text format 0.0.4) to out. 0 or -1 (ENOMEM). */
int metrics_render(struct evbuffer *out, const struct metrics_src *src);

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
