/* The survey: from the agents' beacons and probes to a measured ring.
 * Gather neighbour tables, verify every claimed cable with probes both
 * ways, check that non-adjacent pairs have no data-plane path, measure
 * every edge (stream ladder both ways, latency ladder) in rounds of
 * disjoint pairs, then classify, order and explain. Event-driven: every
 * step is a request to an agent with a deadline. */
#ifndef RING_SURVEY_H
#define RING_SURVEY_H

#include <net/if.h>
#include <stddef.h>

#include <event2/event.h>

#include "call.h"
#include "coord_conf.h"
#include "nodes.h"
#include "ring.pb-c.h"

struct survey;

/* Depends on the node table (read), the configuration, and agents only
 * through calls. */
/* How the survey asks agents things; others (a lookup on every node) ask
 * the same way. */
const struct call_iface *survey_calls(const struct survey *sv);
struct survey *survey_new(struct event_base *base,
			  const struct coord_conf *conf, struct nodes *table,
			  const struct call_iface *calls);
/* Cancels whatever is in flight (no agent call outlives it). */
void survey_free(struct survey *sv);
/* Start now. 0, or -1 with errno EBUSY (one is running, or an
 * operator's test is: manual_tests.h), ENOENT (fewer than two nodes up with an inventory) or ENOMEM (out
 * of memory listing nodes, cables or pairs to check; a survey that runs
 * out later is abandoned and logged, the last result stays). */
int survey_start(struct survey *sv, const char *reason);
/* The operator's survey: as survey_start, but while a re-check or a
 * survey runs it is queued to start when that ends (so a fresh one
 * follows every request). 0 started, 1 queued behind a re-check, 2
 * behind a survey, or -1 as survey_start. */
int survey_request(struct survey *sv, const char *reason);
/* As survey_request for some rings only (issue 24: their ids, published
 * or named by a directive; n_rings 0: the whole site): the other rings
 * keep what they had, and are not tested. -1 with errno EINVAL and why
 * for an unknown ring. */
int survey_request_rings(struct survey *sv, const char *reason,
			 char *const *rings, size_t n_rings, char *why,
			 size_t len);
int survey_running(const struct survey *sv);
/* The last completed survey (or NULL); survey_state tells "running" while
 * a new one is under way. Owned by the survey. */
const Ring__Topology *survey_topology(const struct survey *sv);
const char *survey_state(const struct survey *sv);
/* Told of every topology a survey publishes (valid during the call). */
typedef void (*survey_publish_fn)(const Ring__Topology *t, void *arg);
void survey_set_publish_cb(struct survey *sv, survey_publish_fn fn, void *arg);
/* Told when a survey or a targeted re-check starts (failure NULL) and
 * when it ends: failure NULL when it published a result, else why it
 * did not or what failed in it ("every edge's measurement failed: ...").
 * what: "survey" or "recheck"; reason: why it ran. */
enum survey_event {
	SURVEY_STARTED,
	SURVEY_DONE,
	SURVEY_LIGHT, /* light checks alone ended: their outcomes moved */
};
typedef void (*survey_event_fn)(enum survey_event ev, const char *what,
				const char *reason, const char *failure,
				void *arg);
void survey_set_event_cb(struct survey *sv, survey_event_fn fn, void *arg);
/* A topology kept from before a restart, as the last result until a
 * survey completes (copied; not published again). 0 or -1 (ENOMEM). */
int survey_restore(struct survey *sv, const Ring__Topology *t);
/* Node up/down, inventory or neighbour table changed (agents_change_cb):
 * schedules automatic surveys (settle, grace, interval). */
void survey_nodes_changed(void *arg);

/* The bytes ringd's own tests put on the cable(s) between nodes a and b
 * in the hour before now_ms (computed from the tests' reports). */
uint64_t survey_self_bytes(const struct survey *sv, const char *a,
			   const char *b, uint64_t now_ms);
/* The account as text for the store ("A B MINUTE BYTES" lines, the last
 * hour's non-empty minutes), and back from it (bad lines skipped), so a
 * restart does not forget what the last hour's surveys sent. */
size_t survey_self_bytes_text(const struct survey *sv, uint64_t now_ms,
			      char *buf, size_t len);
void survey_self_bytes_load(struct survey *sv, const char *text, size_t len,
			    uint64_t now_ms);

/* The last light check of an edge, and its last bandwidth sample. */
struct survey_light_out {
	uint64_t ms;	     /* when it ended */
	uint64_t started_ms; /* when it started: judged against then */
	double lat_us;	     /* median, < 0 none */
	const char *error;   /* "" when it got through; valid until the next */
	double sample_gbps[2]; /* [0] a -> b; < 0 not sampled */
	uint64_t sample_ms;    /* when the sample ended, 0 none */
};
/* 0 with *out, or -1 when the edge has had no light check. */
int survey_light(const struct survey *sv, const Ring__Edge *e,
		 struct survey_light_out *out);
/* Asked after each light-check sample of edge e (a published edge):
 * 1 when gbps is low against the edge's baseline (the sample is then
 * taken again at once), 0 not or no baseline. */
typedef int (*survey_sample_low_fn)(const Ring__Edge *e, double gbps,
				    void *arg);
void survey_set_sample_low_cb(struct survey *sv, survey_sample_low_fn fn,
			      void *arg);

/* A test between two nodes (the survey's own, or an operator's through
 * manual_tests.h). The callback gets the assembled report (valid during
 * the call). */
struct survey_test;
typedef void (*survey_test_cb)(const Ring__TestReport *rep, void *arg);
/* Endpoints for a test between a and b: the facing ports when they are
 * adjacent in the last survey (*adjacent = 1), else a's kernel route
 * (a_if "") and b's first data address (*adjacent = 0, or -1 when no
 * survey has completed). 0, or -1 with a reason. */
int survey_test_endpoints(struct survey *sv, const char *a, const char *b,
			  char *a_if, size_t a_if_len, char *b_addr,
			  size_t b_addr_len, int *adjacent, char *why,
			  size_t why_len);

/* The RDMA ports of a test between a (requester) and b: the facing ports
 * when they are adjacent in the last survey (adjacent 1), else each
 * node's first data interface with an active RDMA port (adjacent 0, or -1
 * before any survey). */
struct survey_rdma_ends {
	char a_if[IFNAMSIZ], a_dev[64];
	char b_if[IFNAMSIZ], b_dev[64];
	int adjacent;
};
/* 0, or -1 with the operator's reason ("n1: no active RDMA port on r1a,
 * the interface facing n2 (no RDMA device)", an agent without RDMA
 * tests). Both nodes must be up. */
int survey_rdma_endpoints(struct survey *sv, const char *a, const char *b,
			  struct survey_rdma_ends *e, char *why,
			  size_t why_len);

#endif
