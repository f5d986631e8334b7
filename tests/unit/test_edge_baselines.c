/* edge_baselines: each edge's first good figure kept (and put back from
 * its text), and the figure an edge is judged by: the top of the ladder
 * in the worse direction, RDMA WRITE without a ladder, a light check's
 * newer sample. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coordinator/edge_baselines.h"

static void edge_init(Ring__Edge *e, const char *a, const char *b, double *ab,
		      double *ba)
{
	static uint32_t ladder[1] = {8};

	ring__edge__init(e);
	e->a = (char *)a;
	e->b = (char *)b;
	e->a_interface = "eth2";
	e->b_interface = "eth1";
	if (ab && ba) {
		e->n_ladder = e->n_gbps_a_to_b = e->n_gbps_b_to_a = 1;
		e->ladder = ladder;
		e->gbps_a_to_b = ab;
		e->gbps_b_to_a = ba;
	}
	e->rdma_write_gbps_a_to_b = e->rdma_write_gbps_b_to_a = -1;
	e->sample_gbps_a_to_b = e->sample_gbps_b_to_a = -1;
}

static void test_figure(void **state)
{
	double ab = 90, ba = 80;
	Ring__Edge e;
	int sampled;

	(void)state;
	edge_init(&e, "n1", "n2", &ab, &ba);
	assert_true(edge_baselines_figure(&e) == 80); /* the worse way */
	/* No ladder: RDMA WRITE, one way known. */
	edge_init(&e, "n1", "n2", NULL, NULL);
	assert_true(edge_baselines_figure(&e) < 0);
	e.rdma_write_gbps_a_to_b = 150;
	assert_true(edge_baselines_figure(&e) == 150);
	e.rdma_write_gbps_b_to_a = 120;
	assert_true(edge_baselines_figure(&e) == 120);

	/* A sample counts only when newer than the survey's figures. */
	edge_init(&e, "n1", "n2", &ab, &ba);
	e.measured_ms = 1000;
	e.sample_ms = 900;
	e.sample_gbps_a_to_b = 30;
	assert_true(edge_baselines_figure_now(&e, &sampled) == 80);
	assert_int_equal(sampled, 0);
	e.sample_ms = 2000;
	assert_true(edge_baselines_figure_now(&e, &sampled) == 30);
	assert_int_equal(sampled, 1);
	e.sample_gbps_b_to_a = 20;
	assert_true(edge_baselines_figure_now(&e, &sampled) == 20);
}

static void test_set_find_refuse(void **state)
{
	struct edge_baselines b = {0};
	char longname[ALERTS_EDGE_LEN + 8];
	double ab = 50, ba = 60;
	Ring__Edge e;

	(void)state;
	edge_init(&e, "n1", "n2", &ab, &ba);
	assert_true(edge_baselines_of(&b, &e) < 0);
	assert_int_equal(edge_baselines_set(&b, "n1-n2", 100, 5), 0);
	assert_true(edge_baselines_of(&b, &e) == 100);
	/* Set again: replaced, not a second entry. */
	assert_int_equal(edge_baselines_set(&b, "n1-n2", 110, 6), 0);
	assert_int_equal(b.n, 1);
	assert_true(edge_baselines_find(&b, "n1-n2")->gbps == 110);
	assert_null(edge_baselines_find(&b, "n2-n1"));
	errno = 0;
	assert_int_equal(edge_baselines_set(&b, "n2-n3", 0, 5), -1);
	assert_int_equal(errno, EINVAL);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	errno = 0;
	assert_int_equal(edge_baselines_set(&b, longname, 10, 5), -1);
	assert_int_equal(errno, EINVAL);
	/* Many: the array grows. */
	for (int i = 0; i < 100; i++) {
		char name[32];

		snprintf(name, sizeof(name), "a%d-b%d", i, i);
		assert_int_equal(edge_baselines_set(&b, name, 1 + i, 1), 0);
	}
	assert_int_equal(b.n, 101);
	assert_true(edge_baselines_find(&b, "a99-b99")->gbps == 100);
	edge_baselines_clear(&b);
	assert_int_equal(b.n, 0);
	assert_null(b.v);
}

static void test_text_round_trip(void **state)
{
	struct edge_baselines b = {0}, back = {0};
	char text[256], small[30];
	size_t n;

	(void)state;
	assert_int_equal(edge_baselines_set(&b, "n1-n2", 97.5, 1000), 0);
	assert_int_equal(edge_baselines_set(&b, "n2-n3:eth2", 12.25, 2000), 0);
	n = edge_baselines_text(&b, text, sizeof(text));
	assert_int_equal(n, strlen(text));
	assert_string_equal(text, "n1-n2 97.500000 1000\n"
				  "n2-n3:eth2 12.250000 2000\n");
	/* Whole lines only when the buffer is short. */
	n = edge_baselines_text(&b, small, sizeof(small));
	assert_string_equal(small, "n1-n2 97.500000 1000\n");
	assert_int_equal(n, strlen(small));
	/* Back, with bad lines skipped. */
	edge_baselines_load(&back, text, strlen(text));
	edge_baselines_load(&back, "garbage\nn9 x y\nn7-n8 -1 5\n", 26);
	assert_int_equal(back.n, 2);
	assert_true(edge_baselines_find(&back, "n2-n3:eth2")->gbps == 12.25);
	assert_int_equal(edge_baselines_find(&back, "n1-n2")->ms, 1000);
	edge_baselines_clear(&b);
	edge_baselines_clear(&back);
}

static void test_note_keeps_the_first(void **state)
{
	struct edge_baselines b = {0};
	Ring__Topology t = RING__TOPOLOGY__INIT;
	Ring__Edge e[3], *ep[3] = {&e[0], &e[1], &e[2]};
	double g[3][2] = {{40, 50}, {70, 60}, {10, 10}};

	(void)state;
	edge_init(&e[0], "n1", "n2", &g[0][0], &g[0][1]);
	edge_init(&e[1], "n2", "n3", &g[1][0], &g[1][1]);
	edge_init(&e[2], "n3", "n1", &g[2][0], &g[2][1]);
	e[0].measured_ms = e[1].measured_ms = e[2].measured_ms = 1000;
	e[2].error = "the test failed"; /* not a good figure */
	t.edges = ep;
	t.n_edges = 3;
	edge_baselines_note(&b, &t);
	assert_int_equal(b.n, 2);
	assert_true(edge_baselines_find(&b, "n1-n2")->gbps == 40);
	assert_true(edge_baselines_find(&b, "n2-n3")->gbps == 60);
	assert_null(edge_baselines_find(&b, "n3-n1"));
	/* A later survey does not move a baseline. */
	g[0][0] = g[0][1] = 5;
	e[0].measured_ms = 2000;
	edge_baselines_note(&b, &t);
	assert_true(edge_baselines_find(&b, "n1-n2")->gbps == 40);
	assert_int_equal(edge_baselines_find(&b, "n1-n2")->ms, 1000);
	edge_baselines_clear(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figure),
		cmocka_unit_test(test_set_find_refuse),
		cmocka_unit_test(test_text_round_trip),
		cmocka_unit_test(test_note_keeps_the_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
