/* The Prometheus exposition (text format 0.0.4): every metric family of
 * ringd (metrics_expo.c lists them) rendered from explicit inputs (the
 * node table, the last topology, the alerts, the health, the store's
 * state), so that it is unit-tested without a server; names follow
 * Prometheus' rules (base units, _total counters, _info metadata) and
 * labels stay bounded (nodes, edges, directions, ladder steps, sizes:
 * never free text). docs/prometheus/ringd.rules.yml and the Grafana
 * dashboard read these names. */
#ifndef RING_METRICS_EXPO_H
#define RING_METRICS_EXPO_H

struct health;
#include <event2/buffer.h>
#include <stdint.h>

#include "alerts.h"
#include "nodes.h"
#include "ring.pb-c.h"
#include "store_keeper.h"

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
	/* Called once the scrape is answered (NULL: nothing to do): lets go
	 * of what the gathering made for it (scratch, its own). */
	void (*done)(struct metrics_src *src);
	void *scratch;
};

/* Append the exposition (text format 0.0.4) to out. 0 or -1 (ENOMEM). */
int metrics_render(struct evbuffer *out, const struct metrics_src *src);

#endif
