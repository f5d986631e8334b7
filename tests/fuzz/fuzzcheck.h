/* What a fuzz target checks beyond "no crash": a broken promise aborts,
 * naming the condition, the target's file and line. */
#ifndef RING_FUZZCHECK_H
#define RING_FUZZCHECK_H

#include <stdio.h>
#include <stdlib.h>

#define fuzz_check(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: %s failed\n", __FILE__,        \
				__LINE__, #cond);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#endif
