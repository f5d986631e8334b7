/* The stream (or QP) count at which the survey's ladder saturates, for
 * `ranks -f env` and check nccl-env alike. */
#ifndef RING_LADDER_ADVICE_H
#define RING_LADDER_ADVICE_H

#include <stdint.h>

#include "ring.pb-c.h"

/* The stream (or QP) count at which the survey's ladder saturates,
 * computed from the published edges with the findings' rule
 * (common/ladder.h, advised.streams): the smallest count whose median ratio to the
 * top count reaches 90%, the smallest count when it reaches 80% already,
 * the top count when none reaches 90%. */
struct ladder_advice {
	unsigned streams;     /* computed; 0 = no ladder to judge */
	unsigned top;	      /* the ladder's largest count */
	double pct_of_top;    /* computed: median ratio at streams */
	unsigned edges;	      /* edges the median is over */
	const char *method;   /* "tcp", "rdma" */
	uint64_t measured_ms; /* the newest edge figure used */
	char ladder[64];      /* "1,4,8" */
};
void ladder_advice_compute(const Ring__Topology *t, struct ladder_advice *sat);

#endif
