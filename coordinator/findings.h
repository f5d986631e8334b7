/* Findings: the measured figures turned into operator advice. Pure. */
#ifndef RING_FINDINGS_H
#define RING_FINDINGS_H

/* Ladder steps the rules take (survey_streams has at most four). */
#define FINDINGS_LADDER_MAX 4

/* The ladder the edges of one call were measured with: step i of every
 * edge's figures ran streams[i] streams (or queue pairs), in any order.
 * The largest count is the top figure; the smallest against it tells
 * saturation, the counts between say how many channels are enough. */
struct findings_ladder {
	unsigned streams[FINDINGS_LADDER_MAX];
	unsigned n;
	/* What the top figure is, for the texts: NULL = "N streams" with
	 * the largest count; an RDMA survey says e.g. "4 RDMA QPs". */
	const char *top_what;
};

struct findings_edge {
	const char *name;	 /* "n1-n2" */
	const char *dir_name[2]; /* "n1->n2", "n2->n1" */
	/* Measured Gbps per direction and ladder step; < 0 = not measured. */
	double gbps[2][FINDINGS_LADDER_MAX];
	double nominal_gbps; /* the port's nominal rate; 0 = unknown */
};

struct finding {
	char code[32];	/* "saturation", "uniform_ceiling", "degraded_edge",
			   "asymmetric", ... */
	char level[8];	/* "info", "warn" */
	char text[320]; /* operator wording, figures and names included */
};

/* Rules (thresholds in findings.c, documented there), "top" being the
 * ladder's largest stream count:
 * - saturation: the smallest count vs the top ("1 stream reaches 36% of 8
 *   streams; use at least 4 channels"), from the median over edges;
 * - uniform ceiling: all edges within ~20% of each other and well under
 *   nominal: "link-layer ceiling, not a bad cable; check host link,
 *   PFC/ECN, unused NIC halves";
 * - degraded edge: one edge well under the others: named;
 * - asymmetric: an edge whose two directions differ by more than ~20%.
 * Edges of one method per call. Returns the number written (at most
 * max). */
unsigned findings_compute(const struct findings_ladder *ladder,
			  const struct findings_edge *edges, unsigned n,
			  struct finding *out, unsigned max);

#endif
