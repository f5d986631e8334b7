/* A ring all-reduce as the survey sees it: a manual test, so no survey
 * or re-check starts while it runs, and it does not start while one does
 * (or while another test runs: its figures would share the cables). */
#include <errno.h>
#include <stdlib.h>

#include "survey_int.h"

struct survey_allreduce {
	struct survey *sv;
	struct allreduce_coord *job;
	allreduce_coord_cb cb;
	void *arg;
};

static void sv_ar_done(const Ring__AllreduceReport *rep, void *arg)
{
	struct survey_allreduce *a = arg;

	a->sv->manual_tests--;
	a->cb(rep, a->arg);
	free(a);
}

struct survey_allreduce *
survey_allreduce_start(struct survey *sv, const struct allreduce_coord_plan *p,
		       allreduce_coord_cb cb, void *arg)
{
	struct survey_allreduce *a;

	if (sv_running(sv) || sv->manual_tests) {
		errno = EBUSY;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->sv = sv;
	a->cb = cb;
	a->arg = arg;
	sv->manual_tests++;
	a->job = allreduce_coord_start(sv->calls, p, sv_ar_done, a);
	if (!a->job) {
		int err = errno;

		sv->manual_tests--;
		free(a);
		errno = err;
		return NULL;
	}
	return a;
}

void survey_allreduce_cancel(struct survey_allreduce *a)
{
	if (!a)
		return;
	allreduce_coord_cancel(a->job);
	a->sv->manual_tests--;
	free(a);
}
