/* Findings: the measured figures turned into operator advice. Pure. */
#ifndef RING_FINDINGS_H
#define RING_FINDINGS_H

#define FINDINGS_LADDER 3 /* 1, 4, 8 streams */

struct findings_edge {
	const char *name;	 /* "n1-n2" */
	const char *dir_name[2]; /* "n1->n2", "n2->n1" */
	/* Measured Gbps per direction and ladder step; < 0 = not measured. */
	double gbps[2][FINDINGS_LADDER];
	double nominal_gbps; /* the port's nominal rate; 0 = unknown */
	/* What the top figure (the 8-stream slot) is, for the texts: NULL =
	 * "8 streams"; an RDMA survey says e.g. "4 RDMA QPs". Compare edges
	 * of one method per call. */
	const char *top_what;
};

struct finding {
	char code[32];	/* "saturation", "uniform_ceiling", "degraded_edge",
			   "asymmetric", ... */
	char level[8];	/* "info", "warn" */
	char text[320]; /* operator wording, figures and names included */
};

/* Rules (thresholds in findings.c, documented there):
 * - saturation: 1 stream vs 8 streams ("1 stream reaches 36% of 8; use at
 *   least 4 channels"), from the ladder's median over edges;
 * - uniform ceiling: all edges within ~20% of each other and well under
 *   nominal: "link-layer ceiling, not a bad cable; check host link,
 *   PFC/ECN, unused NIC halves";
 * - degraded edge: one edge well under the others: named;
 * - asymmetric: an edge whose two directions differ by more than ~20%.
 * Returns the number written (at most max). */
unsigned findings_compute(const struct findings_edge *edges, unsigned n,
			  struct finding *out, unsigned max);

#endif
