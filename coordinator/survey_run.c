/* The survey's shared plumbing for a run: the phases' one allocator (a
 * unit test can make the nth allocation fail), elapsed time, and the
 * count of a phase's outstanding requests, the last of which hands over
 * to the phase driver (survey.c, through sv->next). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "counters_eval.h"
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
	if (sv->run->pending && --sv->run->pending == 0)
		sv->next(sv);
}

struct survey_run *survey_run_new(void)
{
	return calloc(1, sizeof(struct survey_run));
}

void survey_run_free(struct survey_run *r, const struct call_iface *calls)
{
	if (!r)
		return;
	while (r->ops) {
		struct sv_op *op = r->ops;

		r->ops = op->next;
		call_cancel(calls, op->call);
		free(op);
	}
	for (unsigned i = 0; i < r->n_links; i++) {
		if (r->links[i].test)
			sv_test_cancel(r->links[i].test);
		cev_edge_free(r->links[i].counters);
	}
	for (unsigned i = 0; i < r->n_slots; i++)
		if (r->slots[i].test)
			sv_test_cancel(r->slots[i].test);
	for (unsigned i = 0; i < r->n_keep; i++)
		free(r->keep[i]);
	free(r->keep);
	free(r->slots);
	free(r->cables);
	free(r->cable_round);
	for (unsigned i = 0; i < r->n_nodes; i++)
		free(r->nodes[i].ifs);
	free(r->nodes);
	free(r->links);
	free(r->diags);
	free(r->meas);
	free(r->round_of);
	free(r->scope);
	free(r->part_of);
	free(r);
}
