/* Which figures of a published topology become history: the stream ladder
 * both ways, the latency and RDMA write latency medians, the RDMA
 * bandwidths; a figure not measured (< 0) left out; an edge already
 * recorded (same cable, same measurement time) not again. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "coordinator/history_figures.h"

struct fx {
	Ring__Edge e;
	uint32_t ladder[3];
	double ab[3], ba[3];
	Ring__LatResult lat[2], wlat[1];
	Ring__LatResult *latp[2], *wlatp[1];
	Ring__Edge *ep[1];
	Ring__Topology t;
};

/* One edge n1-n2 measured at 1000: ladder 1 4 8 (the 8-stream b->a not
 * measured), two latency sizes, one RDMA write latency, write bandwidth
 * both ways, no read bandwidth. */
static void fx_init(struct fx *f)
{
	static const uint32_t ladder[3] = {1, 4, 8};
	static const double ab[3] = {9.5, 30, 38}, ba[3] = {9.4, 29, -1};

	memset(f, 0, sizeof(*f));
	ring__edge__init(&f->e);
	ring__topology__init(&f->t);
	f->e.a = "n1";
	f->e.b = "n2";
	f->e.a_interface = "r1a";
	f->e.b_interface = "r2a";
	f->e.measured_ms = 1000;
	memcpy(f->ladder, ladder, sizeof(ladder));
	memcpy(f->ab, ab, sizeof(ab));
	memcpy(f->ba, ba, sizeof(ba));
	f->e.n_ladder = 3;
	f->e.ladder = f->ladder;
	f->e.n_gbps_a_to_b = 3;
	f->e.gbps_a_to_b = f->ab;
	f->e.n_gbps_b_to_a = 3;
	f->e.gbps_b_to_a = f->ba;
	for (int i = 0; i < 2; i++) {
		ring__lat_result__init(&f->lat[i]);
		f->lat[i].size = i ? 4096 : 64;
		f->lat[i].p50_us = i ? 12.5 : 8.25;
		f->latp[i] = &f->lat[i];
	}
	f->e.n_latency = 2;
	f->e.latency = f->latp;
	ring__lat_result__init(&f->wlat[0]);
	f->wlat[0].size = 64;
	f->wlat[0].p50_us = 2.5;
	f->wlatp[0] = &f->wlat[0];
	f->e.n_rdma_write_lat = 1;
	f->e.rdma_write_lat = f->wlatp;
	f->e.rdma_write_gbps_a_to_b = 180;
	f->e.rdma_write_gbps_b_to_a = 181;
	f->e.rdma_read_gbps_a_to_b = -1;
	f->e.rdma_read_gbps_b_to_a = -1;
	f->ep[0] = &f->e;
	f->t.n_edges = 1;
	f->t.edges = f->ep;
}

static const struct store_sample *find(const struct store_sample *v, size_t n,
				       const char *kind, const char *dir,
				       uint32_t param)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].kind, kind) && !strcmp(v[i].direction, dir) &&
		    v[i].param == param)
			return &v[i];
	return NULL;
}

static void test_figures_chosen(void **state)
{
	struct fx f;
	struct store_sample *v;
	size_t n;

	(void)state;
	fx_init(&f);
	assert_int_equal(history_figures(&f.t, NULL, &v, &n), 0);
	/* 5 of the ladder (one not measured), 2 latency, 1 RDMA write
	 * latency, 2 RDMA write bandwidths; no read bandwidth. */
	assert_int_equal(n, 10);
	assert_non_null(find(v, n, "tcp_bw", "a_to_b", 8));
	assert_null(find(v, n, "tcp_bw", "b_to_a", 8));
	assert_true(find(v, n, "tcp_bw", "b_to_a", 4)->value == 29);
	assert_true(find(v, n, "tcp_lat", "", 4096)->value == 12.5);
	assert_true(find(v, n, "rdma_write_lat", "", 64)->value == 2.5);
	assert_true(find(v, n, "rdma_write_bw", "b_to_a", 0)->value == 181);
	assert_null(find(v, n, "rdma_read_bw", "a_to_b", 0));
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].ts_ms, 1000);
		assert_string_equal(v[i].edge, "n1-n2");
	}
	free(v);
}

static void test_recorded_once(void **state)
{
	struct fx f, prev;
	struct store_sample *v;
	size_t n;

	(void)state;
	fx_init(&f);
	fx_init(&prev);
	/* The same measurement in the topology before: nothing new. */
	assert_int_equal(history_figures(&f.t, &prev.t, &v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	/* Measured again: recorded. */
	f.e.measured_ms = 2000;
	assert_int_equal(history_figures(&f.t, &prev.t, &v, &n), 0);
	assert_int_equal(n, 10);
	free(v);
	/* The same time on another cable of the pair: recorded. */
	f.e.measured_ms = 1000;
	f.e.a_interface = "r1b";
	assert_int_equal(history_figures(&f.t, &prev.t, &v, &n), 0);
	assert_int_equal(n, 10);
	free(v);
}

static void test_no_edges(void **state)
{
	Ring__Topology t = RING__TOPOLOGY__INIT;
	struct store_sample *v = (void *)1;
	size_t n = 7;

	(void)state;
	assert_int_equal(history_figures(&t, NULL, &v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figures_chosen),
		cmocka_unit_test(test_recorded_once),
		cmocka_unit_test(test_no_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
