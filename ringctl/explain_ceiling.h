/* The ceiling analysis of `ringctl explain`: an edge's measured figure
 * against the limits its hardware sets (docs/HARDWARE.md; the model is
 * common/hw_ceiling.c), the port step, and what would raise it. */
#ifndef RING_EXPLAIN_CEILING_H
#define RING_EXPLAIN_CEILING_H

#include <stdint.h>

#include "hw_ceiling.h"
#include "ring.pb-c.h"

#define EXPLAIN_LIMITS_MAX 8
#define EXPLAIN_ADVICE_MAX 8
/* A figure within this fraction of a limit "sits at" it; more than
 * EXPLAIN_MODEL_SLACK above a computed one shows the model understates
 * it (hw_ceiling.h). */
#define EXPLAIN_AT HW_AT
#define EXPLAIN_MODEL_SLACK HW_MODEL_SLACK

struct explain_limit {
	char what[16];	/* "port", "pcie_link", "rdma_mtu" */
	char text[240]; /* the limit and its inputs, named */
	double gbps;	/* computed */
	int side;	/* 0 the edge's a end, 1 its b end, -1 both */
	unsigned mtu;	/* port, rdma_mtu: the MTU it was computed at */
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

/* The ceiling analysis of edge e of t with both ends' inventories (either
 * may be NULL: those limits are then unknown). Pure: computed text from
 * the measured figures and the inventories' figures; the coordinator's
 * warning findings about the edge are quoted, not derived again. */
void explain_ceiling(const Ring__Topology *t, const Ring__Edge *e,
		     const Ring__Inventory *inv_a, const Ring__Inventory *inv_b,
		     struct explain_ceiling *c);

#endif
