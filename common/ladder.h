/* The saturation rule of a measured stream ladder, in one place for the
 * coordinator's findings (advice after a survey) and ringctl's check
 * nccl-env (too few NCCL_MIN_NCHANNELS): how many streams (channels) the
 * edges need before adding more buys little.
 *
 * Per edge, the ratio of a step's figure to the top step's (the largest
 * count), averaged over the directions measured at both; the median over
 * edges (an even count averages the middle two). The smallest count
 * saturates when that median is below LADDER_SAT_LOW of the top; the
 * advised count is then the smallest count between whose median reaches
 * LADDER_SAT_ENOUGH, else the top. Pure. */
#ifndef RING_LADDER_H
#define RING_LADDER_H

#include <stddef.h>
#include <stdint.h>

#define LADDER_SAT_LOW 0.80
#define LADDER_SAT_ENOUGH 0.90
/* Steps a ladder may have here (survey_streams has at most four; an
 * edge's ladder in a topology is taken up to this). */
#define LADDER_MAX_STEPS 8

/* One edge's figures per direction, per ladder step (gbps[d][i] for step
 * i < n[d]); < 0 or NaN = not measured, so is a step past n[d]. */
struct ladder_edge {
	const double *gbps[2];
	size_t n[2];
};

struct ladder_point {
	uint32_t streams;
	double ratio;	/* median of this step over the top */
	unsigned edges; /* edges with both figures */
};

struct ladder_sat {
	size_t base, top;	   /* step indices: smallest, largest count */
	struct ladder_point first; /* the smallest count's median */
	int saturates;		   /* first.ratio < LADDER_SAT_LOW */
	/* The counts strictly between, smallest first, each once; those
	 * no edge measured at both steps left out. */
	struct ladder_point mid[LADDER_MAX_STEPS];
	unsigned n_mid;
	/* What the rule advises: first when it does not saturate; else the
	 * smallest mid reaching LADDER_SAT_ENOUGH; else the top (ratio 1,
	 * edges those of first). */
	struct ladder_point advised;
};

/* The rule over n edges measured with streams[0..steps-1] (the same
 * ladder for every edge, any order). 0 with out filled; -1 with errno
 * EINVAL when there is nothing to judge (fewer than two counts, more
 * than LADDER_MAX_STEPS steps, no edge with both the smallest and the
 * top figure) or ENOMEM. */
int ladder_saturation(const uint32_t *streams, size_t steps,
		      const struct ladder_edge *edges, size_t n,
		      struct ladder_sat *out);

#endif
