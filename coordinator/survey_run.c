/* The survey's shared plumbing for a run: the phases' one allocator (a
 * unit test can make the nth allocation fail), elapsed time, and the
 * count of a phase's outstanding requests, the last of which hands over
 * to the phase driver (survey.c, through sv->next). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "survey_int.h"

double sv_elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

unsigned sv_alloc_fail_at;

void *sv_alloc(void *p, size_t n, size_t size)
{
	void *m;

	if (sv_alloc_fail_at && --sv_alloc_fail_at == 0) {
		errno = ENOMEM;
		return NULL;
	}
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	if (!n || !size)
		n = size = 1;
	if (!p)
		return calloc(n, size);
	m = realloc(p, n * size);
	return m;
}

void sv_done_one(struct survey *sv)
{
	if (sv->pending && --sv->pending == 0)
		sv->next(sv);
}
