/* The survey's private parts: the structures its files share and the
 * functions they call across files (prefix sv_). Not for other modules:
 * they use survey.h. Files, in the order survey.c drives a run (a phase
 * reads the helpers of the phases before it, never those after it, and
 * none calls survey.c back: sv_done_one hands over through sv->next):
 *   survey.c           lifecycle: surveys and re-checks start and end,
 *                      the phase driver, automatic surveys
 *   survey_discover.c  phases: snapshot, cable candidates, probes, switch
 *                      and diagonal phases, claims, classification
 *   survey_measure.c   measure: plan, rounds, per-edge step machine
 *   survey_sample.c    a light check's short bandwidth sample
 *   survey_load.c      port steps and ring-load rounds, their report
 *   survey_report.c    report: edges, findings, the Topology message
 *   survey_ranks.c     the Topology's ranks (NCCL HCAs, GIDs, pairs)
 *   survey_recheck.c   what brings a re-check (facts, light outcomes)
 *   survey_busy.c      is an edge busy (counters, busy_threshold)
 *   survey_pairtest.c  one TCP test between two nodes (and RDMA wrapped)
 *   survey_run.c       a run's value, allocator, outstanding requests
 *   survey_lookup.c    test endpoints for control (from the last survey)
 * Modules with their own state and header, below all of them:
 * recheck_queue.c, light_checks.c, self_bytes.c, test_slots.c,
 * msg_arena.c; manual_tests.c (the operator's tests) sits above. */
#ifndef RING_SURVEY_INT_H
#define RING_SURVEY_INT_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <event2/event.h>

#include "call.h"
#include "coord_conf.h"
#include "findings.h"
#include "nodes.h"
#include "light_checks.h"
#include "rdmatest.h"
#include "recheck_queue.h"
#include "ring.pb-c.h"
#include "self_bytes.h"
#include "survey.h"
#include "test_slots.h"
#include "testlimits.h"
#include "topo.h"
#include "topo_site.h"

struct msg_arena;

/* Probes go to a port nobody needs to listen on: a RST proves the path as
 * well as a SYN-ACK does. */
#define SV_PROBE_PORT 7420
#define SV_PROBE_TIMEOUT_MS 1000
#define SV_ACCEPT_TIMEOUT_MS 5000
#define SV_SWITCH_MAX 64 /* all-pairs reachability check up to this size */
/* Probes in flight per agent (each agent refuses more than 64). */
#define SV_PROBES_PER_NODE 16
/* Steps of the stream ladder (coord_conf's survey_streams). */
#define SV_MAX_LADDER 4
/* Sizes of a latency ladder (a test's, the configuration's). */
#define SV_LAT_SIZES_MAX TESTLIMITS_LAT_SIZES_MAX

struct sv_if {
	char name[IFNAMSIZ];
	char addr[64]; /* first IPv4 address, "" if none */
	char subnet[48];
	uint32_t ip, mask; /* host order; mask 0 when no address */
	unsigned mtu;
	char rdma[64];
	double nominal_gbps;
	char rdma_dev[64];  /* device with an ACTIVE port here, "" if none */
	char rdma_why[160]; /* why not */
	int rdma_hw;	    /* some RDMA device sits on this interface */
	/* The physical port (twins share it; "" = unknown: its own port),
	 * its short name for people, the PCIe link, and the function's
	 * place among its port's twins (by PCIe link), which pairs twins
	 * across a cable when addresses do not. */
	char port_id[80];
	char port_name[32];
	char pcie_link[32];
	unsigned twin_idx;
	double port_gbps; /* the port's speed (sysfs), 0 unknown */
};

struct sv_node {
	char name[64];
	char mgmt_addr[64];
	char mgmt_if[IFNAMSIZ];
	struct sv_if *ifs;
	unsigned n_ifs;
	unsigned probes; /* probes in flight at its agent */
	int beacons;	 /* has a neighbour table with beacons on */
	int rdma_cap;	 /* its agent runs RDMA tests */
	/* Not cabled into the ring's component (topo_analyse's strays):
	 * not probed for diagonals nor measured, listed apart. */
	int stray;
};

/* The steps of one edge's measurement: below SV_ST_TCP_LAT, a TCP ladder
 * step (direction step % 2, ladder index step / 2); then the others. */
enum sv_step {
	SV_ST_TCP_LAT = 100,
	SV_ST_RDMA_WRITE_AB, /* WRITE bandwidth, A requester: data A -> B */
	SV_ST_RDMA_WRITE_BA, /* the same with B requester */
	SV_ST_RDMA_READ_AB,  /* A reads from B: data B -> A */
	SV_ST_RDMA_READ_BA,
	SV_ST_RDMA_LAT, /* WRITE ping-pong latency, A requester */
	/* A light check's bandwidth sample (survey_sample.c): data A -> B,
	 * then B -> A; TCP, or RDMA WRITE where the ladder is RDMA. */
	SV_ST_SAMPLE_AB,
	SV_ST_SAMPLE_BA,
};
#define SV_MAX_PLAN 24

struct sv_link {
	struct topo_link t;
	char a_addr[64], b_addr[64];
	char a_rdma[64], b_rdma[64];
	double nominal_gbps;
	int probe_ab, probe_ba; /* 1 reached, 0 not, -1 not probed */
	int switch_pair;	/* measured through a switch, not a cable */
	int rejected; /* another claim on one of its ports answered the probe */
	/* Beacons heard across twins: a function of one port and the other
	 * twin of the facing port. Kept out of adjacency and measurements;
	 * the cable's intended function pairs carry it. */
	int cross;
	char cable_id[200]; /* "n1/p1-n2/p0"; "" when ports are unknown */
	double gbps[2][SV_MAX_LADDER];
	Ring__LatResult lat[SV_LAT_SIZES_MAX];
	unsigned n_lat;
	char error[256];
	uint64_t measured_ms;
	unsigned step; /* index into plan */
	unsigned char plan[SV_MAX_PLAN];
	unsigned n_plan;
	int ladder_rdma; /* gbps[][0] are RDMA WRITE figures (ladder = qps) */
	double rdma_write[2], rdma_read[2]; /* [0] A requester, [1] B */
	Ring__LatResult rdma_lat[SV_LAT_SIZES_MAX];
	unsigned n_rdma_lat;
	char a_gid[64], b_gid[64];
	int a_gid_index, b_gid_index; /* -1 until an RDMA test reports them */
	char rdma_error[256];
	int error_has_rdma; /* error already quotes rdma_error */
	char why[96];	    /* a re-check's reason ("cable back up") */
	int light; /* a light check: probes and a small latency sample */
	uint64_t light_started_ms; /* when its run started (Unix ms) */
	/* Its bandwidth sample per direction ([0] A -> B), < 0 none; each
	 * direction sampled again at once when low (resampled). */
	double sample[2];
	int resampled[2];
	int sample_rdma; /* the sample is RDMA WRITE, not TCP */
	char busy[160];	 /* postponed: the traffic that was on it */
	struct survey_test *test;
	struct timespec test_t0;
	struct survey *sv;
	struct cev_edge *counters; /* moved during its tests (counters_eval) */
};

struct sv_diag {
	unsigned a, b;
	char b_addr[64];
	char route_kind[16];
	char route_if[IFNAMSIZ];
	int path;
	int not_probed; /* the agent only read its route: not a data port */
	int done;
};

enum sv_phase {
	SV_IDLE,
	SV_VERIFY,
	SV_SWITCH,
	SV_DIAG,
	SV_MEASURE,
	SV_LOAD,
};

/* One outstanding request to an agent on behalf of the survey. */
struct sv_op {
	struct survey *sv;
	struct call *call;
	enum sv_phase phase;
	unsigned idx;
	int dir;
	unsigned from;	       /* the probing node */
	char addr[64];	       /* what it probes */
	char ifname[IFNAMSIZ]; /* through which port ("" = route) */
	int queued;	       /* waits for a free probe slot */
	struct sv_op *prev, *next;
};

struct survey_test {
	struct survey *sv;
	char a[64], b[64], a_if[IFNAMSIZ], b_addr[64];
	Ring__TestParams params;
	uint32_t sizes[SV_LAT_SIZES_MAX];
	uint8_t token[16];
	struct call *call_a, *call_b;
	Ring__TestResult *res_a, *res_b;
	int done_a, done_b;
	char error[256];
	survey_test_cb cb;
	void *arg;
	int manual;	       /* an operator's: holds a TEST_SLOT_TEST slot */
	struct rdmatest *rdma; /* an RDMA test runs instead of the above */
	struct survey_test *prev, *next;
};

/* A light check's latency sample: 64 B, this many round trips. */
#define SV_LIGHT_ITERATIONS 20
/* A re-check that cannot start now (a survey or a test runs) looks again
 * this much later. */
#define SV_RECHECK_RETRY_MS 2000

/* What was last seen of a published edge's physical facts (parallel to
 * topology->edges): a change brings a re-check of that edge alone. */
struct sv_edge_facts {
	int known; /* seen with both ends up since it was published */
	int up;	   /* both nodes up, both ports admin up with carrier */
	char down_node[64]; /* why it was down: this node was */
	int32_t speed[2];
	uint32_t mtu[2];
	uint64_t changed_ms; /* its last change: down, up, speed or MTU */
};

/* A cable and the function pairs measured over it (survey_load.c). */
#define SV_CABLE_FUNCS 4
struct sv_cable {
	char id[200];
	unsigned a, b; /* node indexes, as its links' */
	unsigned links[SV_CABLE_FUNCS];
	unsigned n_links; /* function pairs the load steps use */
	unsigned n_funcs; /* every adjacent function pair over it */
	int rdma;	  /* its links' ladders were RDMA */
	double nominal_gbps;
	double port[2];	   /* port step, summed; [0] a -> b; -1 none */
	double load[2][2]; /* [0 one way, 1 both ways][direction] */
	char error[256];
	int in_ring;
	int ring_fwd; /* one-way ring traffic flows a -> b */
};

/* One test of a load step: a function pair in one direction (2 = both
 * at once, TCP). */
struct sv_load_slot {
	struct survey *sv;
	unsigned cable, link;
	int dir;
	int mode; /* 0 port step, 1 ring one way, 2 ring both ways */
	struct survey_test *test;
};

enum sv_load_mode { SV_LOAD_PORT, SV_LOAD_RING1, SV_LOAD_RING2 };

/* One survey or re-check run: created when it starts, freed as one when
 * it ends (survey_run_free), so nothing of a run outlives it. */
struct survey_run {
	enum sv_phase phase;
	unsigned pending;
	char reason[64];
	struct timespec t0;
	double tests_sum_s;
	struct sv_node *nodes;
	unsigned n_nodes;
	struct sv_link *links;
	unsigned n_links;
	struct sv_diag *diags;
	unsigned n_diags;
	unsigned switch_ok, switch_total;
	unsigned *meas; /* link indices in measurement order */
	unsigned n_meas;
	unsigned *round_of;
	int n_rounds, round;
	struct sv_op *ops;
	int recheck;	   /* it re-checks some edges only */
	char failure[320]; /* why it failed, "" if it did not */
	/* Port steps and ring-load rounds after the per-edge rounds. */
	struct sv_cable *cables;
	unsigned n_cables;
	unsigned *cable_round;
	int n_cable_rounds;
	int load_step, n_load_steps;
	struct sv_load_slot *slots;
	unsigned n_slots;
	double load_wall_s[2];
	struct timespec load_t0;
	void **keep; /* the load report's messages, until the run is freed */
	unsigned n_keep;
	/* Issue 24: the nodes this survey is limited to (some rings'),
	 * sorted; NULL: the whole site. */
	char (*scope)[64];
	unsigned n_scope;
	/* The findings of a site of several rings are each ring's own: the
	 * ring of each node (-1: none), and the ring findings speak of now
	 * (-1: every node). */
	int *part_of;
	int part, n_parts;
};

/* Do the findings being made now speak of node i? */
static inline int sv_in_part(const struct survey_run *r, unsigned i)
{
	return r->part < 0 || !r->part_of || r->part_of[i] == r->part;
}

/* The survey: what outlives a run. */
struct survey {
	struct event_base *base;
	const struct coord_conf *conf;
	struct nodes *table; /* the coordinator's node table */
	const struct call_iface *calls;
	struct survey_run *run;	   /* the running survey or re-check, or NULL */
	struct survey_test *tests; /* the survey's and the operator's */
	struct test_slots slots;   /* who may test now (test_slots.h) */
	int dirty;		   /* nodes changed while a survey ran */
	int failed; /* errno of a survey abandoned midway, else 0 */
	Ring__Topology *topology;
	/* Who the last survey included, and when it started: a node that
	 * joins after it brings the next automatic survey; one that comes
	 * back brings re-checks of its edges; a cable or node going away
	 * brings nothing (the live view reports it). */
	char (*surveyed)[64];
	unsigned n_surveyed;
	uint64_t started_ms;
	survey_publish_fn publish; /* told of every new topology */
	void *publish_arg;
	char queued[64]; /* a survey asked for during a re-check: why */
	/* What the queued and the next automatic survey are limited to
	 * (sorted node names; NULL: the whole site). */
	char (*queued_scope)[64];
	unsigned n_queued_scope;
	char (*auto_scope)[64];
	unsigned n_auto_scope;
	int auto_full; /* a change wants the whole site surveyed */
	struct recheck_queue *rq;
	struct sv_edge_facts *facts;
	size_t n_facts;
	struct self_bytes *acct;	 /* ringd's own bytes per node pair */
	struct light_checks *light;	 /* the light checks' outcomes */
	survey_sample_low_fn sample_low; /* is a sample below the baseline? */
	void *sample_low_arg;
	survey_event_fn event; /* told of starts and ends */
	void *event_arg;
	struct event *auto_ev;
	/* The phase driver (survey.c): sv_done_one hands over to it. */
	void (*next)(struct survey *sv);
};

/* A survey or a re-check is under way (its phases have begun). */
static inline int sv_running(const struct survey *sv)
{
	return sv->run && sv->run->phase != SV_IDLE;
}

_Static_assert(SV_MAX_LADDER <= FINDINGS_LADDER_MAX,
	       "the findings take every ladder step");
_Static_assert(sizeof(((struct coord_conf *)0)->ladder) ==
		       SV_MAX_LADDER * sizeof(uint32_t),
	       "survey_streams steps");
_Static_assert(sizeof(((struct coord_conf *)0)->lat_sizes) <=
		       SV_LAT_SIZES_MAX * sizeof(uint32_t),
	       "latency_sizes fit a test");

/* survey_run.c */
double sv_elapsed(const struct timespec *t0);
/* realloc(p, n * size), zeroing what is new when p is NULL (calloc); NULL
 * on overflow or when out of memory. The lists a survey builds (snapshot,
 * cable candidates, diagonals) come from here, so that a unit test can
 * make the nth allocation fail (sv_alloc_fail_at: 1 = the next one, 0 =
 * none). */
void *sv_alloc(void *p, size_t n, size_t size);
extern unsigned sv_alloc_fail_at;
/* A new run (its lists empty), and the end of one: whatever it has in
 * flight is cancelled (no callback), then it is freed as one. */
struct survey_run *survey_run_new(void);
void survey_run_free(struct survey_run *r, const struct call_iface *calls);
/* One outstanding request of a phase ended; the last one moves on
 * (sv->next). */
void sv_done_one(struct survey *sv);

/* survey_pairtest.c */
struct survey_test *sv_test_start(struct survey *sv, const char *a,
				  const char *a_if, const char *b,
				  const char *b_addr, const Ring__TestParams *p,
				  survey_test_cb cb, void *arg, int manual);
struct survey_test *sv_rdma_start(struct survey *sv,
				  const struct rdmatest_spec *sp,
				  survey_test_cb cb, void *arg, int manual);
void sv_test_free(struct survey_test *t);
/* Stop t (NULL: nothing), no callback. */
void sv_test_cancel(struct survey_test *t);

/* survey_discover.c */
/* The nodes up with an inventory, sorted by name. 0, or -1 with errno
 * ENOMEM (sv->run->nodes then holds what was copied, for sv_reset). */
int sv_snapshot(struct survey *sv);
int sv_node_index(const struct survey *sv, const char *name);
const struct sv_if *sv_iface(const struct survey *sv, unsigned n,
			     const char *ifname);
const struct sv_if *sv_first_addr(const struct survey *sv, unsigned n);
struct sv_link *sv_add_link(struct survey *sv, unsigned a, const char *a_if,
			    unsigned b, const char *b_if);
int sv_links_from_beacons(struct survey *sv);
int sv_links_from_subnets(struct survey *sv);
void sv_phase_verify(struct survey *sv);
void sv_phase_switch(struct survey *sv);
/* 0, or -1 with errno ENOMEM when the list of pairs to check could not be
 * built: then nothing was probed. */
int sv_phase_diag(struct survey *sv);
void sv_resolve_claims(struct survey *sv);
void sv_resolve_twins(struct survey *sv);
int sv_adjacent(const struct sv_link *l);
int sv_is_switch(const struct survey *sv);
int sv_find_link(const struct survey *sv, unsigned x, unsigned y);
/* The site's rings from the current links (topo_site.h), the known
 * rings as labels (survey_rings.c). */
int sv_analyse(struct survey *sv, struct topo_site *site);
/* Scopes (survey_scope.c): sorted node-name sets. Is name in v; is it in
 * the run's scope (no scope: every node is); add it (0 or -1 ENOMEM). */
int sv_scope_has(char (*const v)[64], unsigned n, const char *name);
int sv_scope_in(const struct survey_run *r, const char *name);
int sv_scope_add(char (**v)[64], unsigned *n, const char *name);
/* The members of rings ids (published or named by a directive); -1 with
 * why for an unknown id. */
int sv_scope_rings(const struct survey *sv, char *const *ids, size_t n_ids,
		   char (**v)[64], unsigned *n, char *why, size_t len);
/* The scope new nodes bring: theirs, and the rings of the nodes they
 * hear; 1 when the whole site must be surveyed (one ring or none, a
 * node that hears no one), 0 with *v set. */
int sv_scope_fresh(const struct survey *sv, struct node *const *fresh,
		   unsigned n_fresh, char (**v)[64], unsigned *n);
/* The published topology old with the scope's nodes replaced by new_'s
 * result (survey_merge.c); shallow, into ar. 0 or -1 (ENOMEM). */
int sv_merge_scope(struct msg_arena *ar, const struct survey_run *run,
		   const Ring__Topology *old, const Ring__Topology *new_,
		   Ring__Topology *out);
/* Per run node, the known ring it belongs to (a directive's, then a
 * published one's), or -1. */
int sv_ring_labels(const struct survey *sv, int *label);
/* Findings [before, n) of top were made from ring part's figures alone
 * (part < 0: the site's): stamped with its id. */
void sv_findings_stamp(Ring__Topology *top, size_t before, int part);
/* Topology.rings from the analysis (after top's own edges and ranks are
 * in); one ring's ranks are the site's, several rings' the caller's. */
int sv_rings_report(struct survey *sv, struct msg_arena *ar,
		    const struct topo_site *site, Ring__Topology *top);
/* Sets each node's stray flag from the links verified so far. */
void sv_mark_strays(struct survey *sv);
/* An end of l is a stray. */
int sv_link_stray(const struct survey *sv, const struct sv_link *l);

/* survey_measure.c */
int sv_plan_measure(struct survey *sv);
/* An RDMA test over link l: A requester, or B when swapped. */
void sv_rdma_spec(const struct survey *sv, const struct sv_link *l, int swap,
		  const Ring__TestParams *p, struct rdmatest_spec *sp);
/* Start the next measurement round from sv->round on: 1 when one
 * started, 0 when the rounds are over. */
int sv_start_round(struct survey *sv);
unsigned sv_ladder_len(const struct survey *sv);

/* survey.c: re-checks */
/* Start the queued re-checks that are due, when nothing else runs. */
void sv_recheck_kick(struct survey *sv);

/* survey_recheck.c */
/* Compare every published edge's facts with the node table; queue a
 * re-check of each that came back up or changed speed or MTU. */
void sv_facts_scan(struct survey *sv);
/* A new topology was stored: full (a survey) forgets the facts and the
 * queue from before it; a re-check keeps them. */
void sv_recheck_published(struct survey *sv, int full);
/* A light check of link l ended: keep its outcome. */
void sv_light_note(struct survey *sv, const struct sv_link *l);

/* survey_busy.c */
/* Is this edge too busy to measure now? 1 with why filled in. */
int sv_link_busy(struct survey *sv, const struct sv_link *l, char *why,
		 size_t len);
/* The same, three ways: 1 busy (why), 0 idle (a fresh counters report
 * of one end at least, not overlapping our own tests, says so), -1
 * unknown (no such report, no capacity). */
int sv_link_traffic(struct survey *sv, const struct sv_link *l, char *why,
		    size_t len);

/* survey_sample.c */
/* A light check's plan after its latency step: the two sample steps,
 * only when the edge's counters show it idle (rdma: RDMA WRITE). */
void sv_sample_plan(struct survey *sv, struct sv_link *l, int rdma);
/* The latency step failed: no sample (it would say nothing). */
void sv_sample_drop(struct sv_link *l);
/* Start sample step of l (cb as any step's); NULL when it cannot. */
struct survey_test *sv_sample_start(struct survey *sv, struct sv_link *l,
				    unsigned step, survey_test_cb cb);
/* A sample step ended: keep its figure; a low one is sampled again at
 * once over a longer window (one more step), the better of the two
 * counts. */
void sv_sample_done(struct survey *sv, struct sv_link *l, unsigned step,
		    const Ring__TestReport *rep);
int sv_step_is_sample(unsigned step);

/* survey_load.c */
/* After the per-edge rounds: the port steps (every function pair of a
 * cable at once) and the ring-load rounds (every edge at once, one way,
 * then both). 1 when a step started (sv_next resumes with
 * sv_load_next), 0 when there is none to run. */
int sv_load_begin(struct survey *sv);
/* The next step, or 0 when the load steps are over. */
int sv_load_next(struct survey *sv);
/* Topology.cables, load_rounds and their findings (edge_of_link: each
 * link's index in top->edges, -1 none). 0, or -1 out of memory. */
int sv_load_report(struct survey *sv, Ring__Topology *top,
		   const int *edge_of_link);

/* survey_report.c */
/* The re-check's edges merged into the published topology. */
void sv_report_recheck(struct survey *sv);
/* Build the Topology message from what the survey found, store it (the
 * last good one stays when that fails) and log the outcome. */
void sv_report(struct survey *sv);
/* Edge.method of an edge measured through a switch, not over a cable. */
int sv_edge_through_switch(const Ring__Edge *e);

/* survey_ranks.c */
/* Topology.ranks for the order in res (rings, lines and pairs only),
 * allocated in ar. 0, or -1 out of memory. */
int sv_ranks(struct survey *sv, struct msg_arena *ar,
	     const struct topo_result *res, Ring__Topology *top);
/* The GID index NCCL (>= 2.21) picks on a RoCE port when
 * NCCL_IB_GID_INDEX is unset: the first IPv4-mapped RoCE v2 entry, else
 * the first IPv4-mapped one; -1 when there is none. */
int sv_nccl_default_gid(const Ring__RdmaPort *p);

#endif
