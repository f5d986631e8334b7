/* `ringctl explain EDGE|NODE`: everything known about one edge or node,
 * gathered from the coordinator's status, inventories and history, and the
 * ceiling analysis of an edge's measured figure against the limits its
 * hardware sets (docs/HARDWARE.md). */
#ifndef RING_EXPLAIN_H
#define RING_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "ring.pb-c.h"
#include "writer.h"

/* An explain argument, at most (bounded before anything is matched). */
#define EXPLAIN_NAME_MAX 256
#define EXPLAIN_LIMITS_MAX 8
#define EXPLAIN_ADVICE_MAX 8
/* A figure within this fraction of a limit "sits at" it. */
#define EXPLAIN_AT 0.10
/* A figure more than this fraction above a computed limit shows the
 * model understates it (within it: the limits' rounding). */
#define EXPLAIN_MODEL_SLACK 0.01

struct explain_limit {
	char what[16];	/* "port", "pcie_link", "rdma_mtu" */
	char text[240]; /* the limit and its inputs, named */
	double gbps;	/* computed */
	int side;	/* 0 the edge's a end, 1 its b end, -1 both */
};

struct explain_ceiling {
	double gbps;	  /* the measured figure analysed; < 0: none */
	char figure[160]; /* what that figure is */
	uint64_t measured_ms;
	int rdma; /* the figure ran over RDMA (RoCE framing) */
	struct explain_limit limits[EXPLAIN_LIMITS_MAX];
	unsigned n_limits;
	int at; /* index of the limit the figure sits at; -1 */
	/* Index of the lowest limit the measured figure is above by more
	 * than EXPLAIN_MODEL_SLACK: the computed model understates that
	 * link (a measurement is never "above its ceiling"); -1 none. */
	int understated;
	char verdict[400]; /* computed */
	/* The stream ladder's top two steps: "saturated ..." or "still
	 * rising ..." (computed from the measured steps; "" with fewer). */
	char ladder[200];
	char advice[EXPLAIN_ADVICE_MAX][400];
	unsigned n_advice;
	/* The cable's port step (every function pair at once, worse
	 * direction; < 0 not measured) against the port's line rate and
	 * each end's PCIe links summed (twins on one link count it once). */
	double port_gbps;
	char port_verdict[400]; /* computed; "" without a port step */
};

/* The edge of t that name means: "a-b" or "b-a" (the cable's first
 * function pair), "a-b:a_if" or "b-a:b_if" (either pair, twins included).
 * Node names may hold '-': every split is tried. Index, or -1. */
int explain_find_edge(const Ring__Topology *t, const char *name);

/* Whether text names word as a whole (no letter, digit or '_' beside it). */
int explain_text_names(const char *text, const char *word);

/* Whether a finding's text is about edge e: it names the edge (either
 * order), or an end's node and its interface, or speaks of every edge or
 * every node. */
int explain_finding_names_edge(const Ring__Edge *e, const char *text);

/* The ceiling analysis of edge e of t with both ends' inventories (either
 * may be NULL: those limits are then unknown). Pure: computed text from
 * the measured figures and the inventories' figures; the coordinator's
 * warning findings about the edge are quoted, not derived again. */
void explain_ceiling(const Ring__Topology *t, const Ring__Edge *e,
		     const Ring__Inventory *inv_a, const Ring__Inventory *inv_b,
		     struct explain_ceiling *c);

/* The command: argc/argv after "explain". Exit status 0 nothing wrong, 1
 * a problem found (error, down, a warning finding or firing alert naming
 * it), 2 could not check (usage, coordinator, unknown name, no survey). */
int explain_cmd(const char *sock, int timeout_ms, enum writer_format fmt,
		int argc, char **argv);

#endif
