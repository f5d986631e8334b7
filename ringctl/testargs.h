/* ringctl's test arguments: `ringctl test KIND A B [options]`, KIND bw,
 * lat, rdma-bw or rdma-lat, into the TestParams the coordinator gets. */
#ifndef RING_TESTARGS_H
#define RING_TESTARGS_H

#include <stddef.h>
#include <stdint.h>

#include "testlimits.h"
#include "ring.pb-c.h"

struct testargs {
	const char *a, *b;
	Ring__TestParams params; /* sizes and rdma point into this struct */
	Ring__RdmaParams rdma;
	uint32_t sizes[TESTLIMITS_LAT_SIZES_MAX];
};

/* argv[0] is KIND. Defaults filled in, then the options. 0, or -1 with
 * the usage complaint in err. */
int testargs_parse(int argc, char **argv, struct testargs *t, char *err,
		   size_t errlen);

#endif
