/* arlast: the last successful all-reduce per number of ranks, kept in the
 * real store (SQLite in a temporary directory): it survives closing and
 * reopening; a failed run is not kept; a stored blob that does not
 * decode, is larger than the bound, or holds a report that fails the
 * checks is refused with a log line naming why, never a crash. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coordinator/arlast.h"
#include "log.h"
#include "coordinator/store.h"
#include "testutil.h"

struct fx {
	char dir[64];
	char err[256];
	FILE *cap; /* stderr while a test logs */
	int saved;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_arlast.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	log_init("test_arlast", NULL, 1);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	testutil_rm_tree(f->dir);
	free(f);
	return 0;
}

/* The logger writes to stderr: into a file while the code under test
 * logs (cmocka reports on stderr too). */
static void cap_start(struct fx *f)
{
	fflush(stderr);
	f->cap = tmpfile();
	assert_non_null(f->cap);
	f->saved = dup(STDERR_FILENO);
	assert_true(dup2(fileno(f->cap), STDERR_FILENO) >= 0);
}

static char *cap_end(struct fx *f)
{
	long n;
	char *s;

	fflush(stderr);
	assert_true(dup2(f->saved, STDERR_FILENO) >= 0);
	close(f->saved);
	n = ftell(f->cap);
	assert_true(n >= 0);
	s = calloc(1, (size_t)n + 1);
	assert_non_null(s);
	rewind(f->cap);
	assert_int_equal(fread(s, 1, (size_t)n, f->cap), (size_t)n);
	fclose(f->cap);
	return s;
}

/* A run over n ranks with the reference cluster's small-message all-reduce
 * (4 KB 31.5 us, 10 KB 36.4, 20 KB 41.1, 40 KB 43.6). */
struct run {
	Ring__AllreduceReport r;
	Ring__AllreduceSize s[4], *sp[4];
	char *order[8];
};

static void run_set(struct run *x, size_t n, uint64_t started_ms)
{
	static const char *const names[8] = {"n1", "n2", "n4", "n3",
					     "n5", "n6", "n7", "n8"};
	static const uint64_t sizes[4] = {4096, 10240, 20480, 40960};
	static const double us[4] = {31.5, 36.4, 41.1, 43.6};

	ring__allreduce_report__init(&x->r);
	for (size_t i = 0; i < n; i++)
		x->order[i] = (char *)names[i];
	x->r.order = x->order;
	x->r.n_order = n;
	x->r.order_source = "published";
	x->r.method = "tcp";
	for (int i = 0; i < 4; i++) {
		ring__allreduce_size__init(&x->s[i]);
		x->s[i].size = sizes[i];
		x->s[i].time_us = us[i];
		x->s[i].min_time_us = us[i] * 0.9;
		x->s[i].algbw_gbps = (double)sizes[i] * 8 / (us[i] * 1e3);
		x->s[i].busbw_gbps =
			x->s[i].algbw_gbps * 2 * (double)(n - 1) / (double)n;
		x->s[i].verified = 1;
		x->sp[i] = &x->s[i];
	}
	x->r.sizes = x->sp;
	x->r.n_sizes = 4;
	x->r.iterations = 5;
	x->r.warmup = 1;
	x->r.started_ms = started_ms;
	x->r.finished_ms = started_ms + 900;
}

static void test_keep_and_other(void **state)
{
	struct arlast a = {0};
	struct run x2, x4;
	char why[256];

	(void)state;
	run_set(&x2, 2, 1700000000000ull);
	run_set(&x4, 4, 1700000100000ull);
	assert_int_equal(arlast_check(&x4.r, why, sizeof(why)), 0);
	assert_int_equal(arlast_keep(&a, &x2.r), 0);
	assert_int_equal(arlast_keep(&a, &x4.r), 0);
	/* Against a 4-rank run, the other is the 2-rank one and back. */
	assert_int_equal(arlast_other(&a, 4)->n_order, 2);
	assert_int_equal(arlast_other(&a, 2)->n_order, 4);
	/* Any other number: the latest, the 4-rank run. */
	assert_int_equal(arlast_other(&a, 3)->n_order, 4);

	/* A failed run is not kept and leaves the one before. */
	x4.r.error = "reduce-scatter step 1/3: n3 closed the connection";
	assert_int_equal(arlast_keep(&a, &x4.r), -1);
	assert_float_equal(arlast_other(&a, 2)->sizes[1]->time_us, 36.4, 1e-9);
	/* Nor one with no size, a NaN, an unverified size, 65 ranks. */
	x4.r.error = "";
	x4.s[1].time_us = NAN;
	assert_int_equal(arlast_check(&x4.r, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "10240 bytes"));
	x4.s[1].time_us = 36.4;
	x4.s[2].verified = 0;
	assert_int_equal(arlast_check(&x4.r, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "not verified"));
	x4.s[2].verified = 1;
	x4.r.n_sizes = 0;
	assert_int_equal(arlast_check(&x4.r, why, sizeof(why)), -1);
	x4.r.n_sizes = 4;
	x4.r.n_order = 1;
	assert_int_equal(arlast_check(&x4.r, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "1 ranks"));
	x4.r.n_order = 4;
	x4.s[0].size = 4094; /* not a multiple of 4 */
	assert_int_equal(arlast_check(&x4.r, why, sizeof(why)), -1);
	arlast_clear(&a);
	assert_null(arlast_other(&a, 4));
}

/* What a restart reads back: the same figures. */
static void test_store_round_trip(void **state)
{
	struct fx *f = *state;
	struct arlast a = {0}, b = {0};
	Ring__AllreduceReport *v[ARLIMITS_RANKS_MAX + 1];
	struct run x2, x4;
	struct store *s;
	char *log;

	run_set(&x2, 2, 1700000000000ull);
	run_set(&x4, 4, 1700000100000ull);
	s = store_open(f->dir, f->err, sizeof(f->err));
	assert_non_null(s);
	/* Nothing saved yet: nothing restored, no error. */
	assert_int_equal(arlast_restore(&b, s), 0);
	assert_int_equal(arlast_keep(&a, &x4.r), 0);
	assert_int_equal(arlast_keep(&a, &x2.r), 0);
	assert_int_equal(arlast_save(&a, s, 1700000200000ull), 0);
	store_close(s);

	s = store_open(f->dir, f->err, sizeof(f->err));
	assert_non_null(s);
	cap_start(f);
	assert_int_equal(arlast_restore(&b, s), 2);
	log = cap_end(f);
	assert_non_null(strstr(log, "restored 2 saved all-reduce results"));
	free(log);
	/* By number of ranks; the figures as measured. */
	assert_int_equal(arlast_list(&b, 0, v, ARLIMITS_RANKS_MAX + 1), 2);
	assert_int_equal(v[0]->n_order, 2);
	assert_int_equal(v[1]->n_order, 4);
	assert_string_equal(v[1]->order[2], "n4");
	assert_int_equal(v[1]->sizes[1]->size, 10240);
	assert_float_equal(v[1]->sizes[1]->time_us, 36.4, 1e-9);
	assert_int_equal(v[1]->started_ms, 1700000100000ull);
	assert_int_equal(arlast_list(&b, 4, v, ARLIMITS_RANKS_MAX + 1), 1);
	assert_int_equal(v[0]->n_order, 4);
	assert_int_equal(arlast_list(&b, 3, v, ARLIMITS_RANKS_MAX + 1), 0);
	store_close(s);
	arlast_clear(&a);
	arlast_clear(&b);
}

/* A blob that is not ours: refused whole with the reason logged; what
 * was held before is gone (the next run starts afresh), nothing
 * crashes. */
static void test_store_refused(void **state)
{
	struct fx *f = *state;
	struct arlast a = {0};
	struct store *s;
	struct run x4;
	uint8_t *big;
	char *log;

	run_set(&x4, 4, 1700000100000ull);
	s = store_open(f->dir, f->err, sizeof(f->err));
	assert_non_null(s);

	assert_int_equal(store_put_blob(s, ARLAST_KEY, "\xff\xff\xff\xff", 4,
					1700000000000ull),
			 0);
	assert_int_equal(arlast_keep(&a, &x4.r), 0);
	cap_start(f);
	assert_int_equal(arlast_restore(&a, s), -1);
	log = cap_end(f);
	assert_non_null(strstr(log, "saved all-reduce results refused"));
	assert_non_null(strstr(log, "do not decode"));
	free(log);
	assert_null(arlast_other(&a, 0));

	/* Past the bound: refused before decoding. */
	big = calloc(1, ARLAST_BLOB_MAX + 1);
	assert_non_null(big);
	assert_int_equal(store_put_blob(s, ARLAST_KEY, big, ARLAST_BLOB_MAX + 1,
					1700000000000ull),
			 0);
	free(big);
	cap_start(f);
	assert_int_equal(arlast_restore(&a, s), -1);
	log = cap_end(f);
	assert_non_null(strstr(log, "1048577 bytes, more than the 1048576"));
	free(log);
	store_close(s);
}

/* One bad report among good ones: it alone is left out, by name. */
static void test_store_bad_entry(void **state)
{
	struct fx *f = *state;
	Ring__AllreduceLastReply rep = RING__ALLREDUCE_LAST_REPLY__INIT;
	Ring__AllreduceReport *v[3];
	struct arlast a = {0};
	struct run x2, x4, dup4;
	struct store *s;
	uint8_t *buf;
	size_t len;
	char *log;

	run_set(&x2, 2, 1700000000000ull);
	run_set(&x4, 4, 1700000100000ull);
	run_set(&dup4, 4, 1700000200000ull);
	x2.s[3].time_us = -1; /* not a measurement */
	v[0] = &x2.r;
	v[1] = &x4.r;
	v[2] = &dup4.r; /* a second run over 4 ranks */
	rep.reports = v;
	rep.n_reports = 3;
	len = ring__allreduce_last_reply__get_packed_size(&rep);
	buf = malloc(len);
	assert_non_null(buf);
	ring__allreduce_last_reply__pack(&rep, buf);
	s = store_open(f->dir, f->err, sizeof(f->err));
	assert_non_null(s);
	assert_int_equal(store_put_blob(s, ARLAST_KEY, buf, len, 1), 0);
	free(buf);
	cap_start(f);
	assert_int_equal(arlast_restore(&a, s), 1);
	log = cap_end(f);
	assert_non_null(strstr(log, "saved all-reduce result 0 refused: size "
				    "40960 bytes"));
	assert_non_null(strstr(log, "result 2 refused: a second run over 4 "
				    "ranks"));
	free(log);
	assert_null(arlast_other(&a, 4));
	assert_int_equal(arlast_other(&a, 2)->started_ms, 1700000100000ull);
	arlast_clear(&a);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep_and_other),
		cmocka_unit_test_setup_teardown(test_store_round_trip, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_refused, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_store_bad_entry, fx_setup,
						fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
