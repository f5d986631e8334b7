/* The health rules over the live view (live_view.h): on every change (a
 * node up or down, a new inventory, a neighbour table) the view is
 * recomputed, then the rules are evaluated and alerts raised or cleared.
 * Also: certificate expiry, re-learning after a restart, edge_degraded
 * against each edge's baseline (edge_baselines.h, kept through here). */
#ifndef RING_HEALTH_RULES_H
#define RING_HEALTH_RULES_H

#include <event2/event.h>
#include <stdint.h>

#include "alerts.h"
#include "coord_conf.h"
#include "nodes.h"
#include "ring.pb-c.h"

struct health_rules;

/* Reads the node table, writes alerts. */
struct health_rules *health_rules_new(struct event_base *base,
				      const struct coord_conf *conf,
				      struct nodes *table,
				      struct alerts *alerts);
void health_rules_free(struct health_rules *w);

/* A change in the node table (agents' change callback): evaluated on the
 * next loop pass, so that a burst of changes is one evaluation. */
void health_rules_nodes_changed(void *arg);
/* Evaluate now (tests, and after a new topology). */
void health_rules_eval(struct health_rules *w);

/* A survey published t (copied; NULL: none), or the store gave it back
 * after a restart; evaluates at once. 0 or -1 (ENOMEM: the old one
 * stays). */
int health_rules_set_topology(struct health_rules *w, const Ring__Topology *t);

/* The published topology with the live overlay filled in (edges'
 * live_state, live_since_ms, live_reason; live_kind, live_gap,
 * live_nodes_down, live_cables_down, live_ms,
 * order_valid, order_invalid, not_surveyed), or NULL before any. Owned
 * by the live view; valid until the next evaluation or
 * health_rules_set_topology. */
const Ring__Topology *health_rules_topology(struct health_rules *w);

/* The coordinator's own certificate ends at not_after_ms (0: unknown):
 * cert_expiring covers it with the agents'. */
void health_rules_set_own_cert(struct health_rules *w, uint64_t not_after_ms);
/* What health_rules_set_own_cert set (0: unknown). */
uint64_t health_rules_own_cert(const struct health_rules *w);
/* cert_expiring warns this long before a certificate ends. */
#define WATCH_CERT_WARN_MS (30ull * 86400000)

/* Baselines: each edge's first good measurement (its top-of-ladder
 * figure, the worse direction, Gbps), kept across restarts; a later
 * survey below WATCH_DEGRADED_PCT percent of it raises edge_degraded.
 * set: put one back (from the store); text: all of them, one
 * "EDGE GBPS MS" line each, into buf (the store keeps the text). */
#define WATCH_DEGRADED_PCT 70
int health_rules_set_baseline(struct health_rules *w, const char *edge,
			      double gbps, uint64_t ms);
size_t health_rules_baselines_text(const struct health_rules *w, char *buf,
				   size_t len);
/* The same from such a text (unknown or bad lines are skipped). */
void health_rules_baselines_load(struct health_rules *w, const char *text,
				 size_t len);
/* The figure a baseline and edge_degraded judge (Gbps; < 0: none): the
 * top of the edge's ladder in its worse direction, else its RDMA write
 * figures. */
double health_rules_edge_figure(const Ring__Edge *e);
/* The edge's baseline (Gbps), or -1 when it has none. */
double health_rules_edge_baseline(const struct health_rules *w,
				  const Ring__Edge *e);
/* 1 when gbps is under WATCH_DEGRADED_PCT of the edge's baseline (0: not,
 * or no baseline): edge_degraded's threshold, for a light check's sample.
 * The rule itself also weighs the ring's median. */
int health_rules_figure_low(const struct health_rules *w, const Ring__Edge *e,
			    double gbps);
/* gid_change's judgement of one edge of the published topology: 1 a GID
 * its RDMA tests used changed or is gone, 0 not, -1 not judged (a node at
 * an end is down). */
int health_rules_edge_gid_changed(const struct health_rules *w,
				  const Ring__Edge *e);

/* The coordinator restarted with saved state (saved: when, for the
 * operator): until every expected node and every node of the published
 * topology is up and has reported its inventory and neighbours this
 * session, or timeout_ms passes, cables, nodes and the ring are not
 * judged (alerts that fired before fire on, nothing new fires, nothing
 * clears), edges of nodes not heard from yet are "unverified", and an
 * info alert coordinator_restarted says so (cleared when it ends).
 * 0: no re-learning. */
void health_rules_relearn_start(struct health_rules *w, uint64_t timeout_ms,
				const char *saved);
/* 1 while re-learning, with the time left at most. */
int health_rules_relearning(const struct health_rules *w, uint64_t now_ms,
			    uint64_t *left_ms);

/* Called after every evaluation with the topology and its overlay (NULL
 * before any survey), valid during the call: a subscriber diffs it. */
typedef void (*health_rules_eval_fn)(const Ring__Topology *t, void *arg);
void health_rules_set_eval_cb(struct health_rules *w, health_rules_eval_fn fn,
			      void *arg);

/* How the last survey or re-check ended: failure NULL when it published
 * a result (survey_failed resolves), else the reason (survey_failed
 * fires, warning, until one succeeds). Evaluates at once. */
void health_rules_survey_outcome(struct health_rules *w, const char *what,
				 const char *failure);
/* 1 while survey_failed holds (the last survey or re-check failed). */
int health_rules_survey_failed(const struct health_rules *w);

/* Fills an edge's figures that move between surveys (self_bytes_hour,
 * light_ms, light_started_ms, light_lat_p50_us, light_error, sample_gbps_*,
 * sample_ms), at every evaluation and
 * whenever the topology is read. Strings it sets must stay valid until
 * the next call; the watch gives them back before it frees the copy. */
typedef void (*health_rules_edge_fn)(Ring__Edge *e, void *arg);
void health_rules_set_edge_fn(struct health_rules *w, health_rules_edge_fn fn,
			      void *arg);

/* The rules this module evaluates (alert rule ids). */
extern const char *const health_rules_names[];
extern const size_t health_rules_n_names;

/* Issue 24: the ring a subject is in (a node, an edge "a-b" or a ring
 * id; node and edge may be NULL) into ring ("" none), by the published
 * topology. */
void health_rules_subject_ring(const struct health_rules *w, const char *node,
			       const char *edge, const char *subject,
			       char *ring, size_t len);

#endif
