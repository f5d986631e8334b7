/* What the coordinator keeps, through a real store keeper on a real
 * SQLite file: a resolved alert becomes its episode, a publication's
 * figures become history once (the same measurement published again adds
 * nothing), control's history and episode views read them back, and with
 * no store they answer ENODEV. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coordinator/alerts.h"
#include "coordinator/coord.h"
#include "coordinator/coord_persist.h"
#include "coordinator/store_keeper.h"

struct fx {
	char dir[64];
	struct coord co;
	struct coord_conf conf;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct alerts_conf ac = {.hold_down_ms = 0,
				 .max_resolved = 16,
				 .keep_resolved_ms = 3600000,
				 .max_firing = 16};
	struct store_keeper_conf kc = {0};
	char err[256];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_coord_persist.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	coord_conf_defaults(&f->conf);
	f->co.conf = &f->conf;
	f->co.base = event_base_new();
	assert_non_null(f->co.base);
	f->co.alerts = alerts_new(&ac, NULL, NULL);
	assert_non_null(f->co.alerts);
	kc.dir = f->dir;
	kc.rewrite = coord_persist_rewrite;
	kc.changed = coord_persist_store_changed;
	kc.arg = &f->co;
	f->co.keeper = store_keeper_new(f->co.base, &kc, err, sizeof(err));
	assert_non_null(f->co.keeper);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	store_keeper_free(f->co.keeper);
	alerts_free(f->co.alerts);
	event_base_free(f->co.base);
	coord_conf_free(&f->conf);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static int count_alert(const struct alert *a, void *arg)
{
	(void)a;
	(*(int *)arg)++;
	return 0;
}

static int count_sample(const struct store_sample *v, void *arg)
{
	assert_string_equal(v->edge, "n1-n2");
	(*(int *)arg)++;
	return 0;
}

static void test_alert_episode(void **state)
{
	struct fx *f = *state;
	struct alert a;
	int n = 0;

	memset(&a, 0, sizeof(a));
	snprintf(a.rule, sizeof(a.rule), "node_down");
	snprintf(a.subject, sizeof(a.subject), "n1");
	a.severity = ALERT_CRITICAL;
	a.firing = 1;
	a.first_seen_ms = a.last_seen_ms = 1000;
	coord_persist_alert(&f->co, &a, ALERT_EV_FIRED);
	assert_int_equal(coord_persist_episodes(&f->co, 0, 10, count_alert, &n),
			 0);
	assert_int_equal(n, 0);
	a.firing = 0;
	a.cleared_ms = 2000;
	a.resolved_ms = 3000;
	coord_persist_alert(&f->co, &a, ALERT_EV_RESOLVED);
	assert_int_equal(coord_persist_episodes(&f->co, 0, 10, count_alert, &n),
			 0);
	assert_int_equal(n, 1);
}

static void test_history_once(void **state)
{
	struct fx *f = *state;
	Ring__Topology t = RING__TOPOLOGY__INIT;
	Ring__Edge e = RING__EDGE__INIT, *ev[1] = {&e};
	uint32_t ladder[1] = {1};
	double ab[1] = {9.5}, ba[1] = {9.4};
	int n = 0;

	e.a = "n1";
	e.b = "n2";
	e.measured_ms = 5000;
	e.n_ladder = 1;
	e.ladder = ladder;
	e.n_gbps_a_to_b = 1;
	e.gbps_a_to_b = ab;
	e.n_gbps_b_to_a = 1;
	e.gbps_b_to_a = ba;
	e.rdma_write_gbps_a_to_b = e.rdma_write_gbps_b_to_a = -1;
	e.rdma_read_gbps_a_to_b = e.rdma_read_gbps_b_to_a = -1;
	t.n_edges = 1;
	t.edges = ev;
	coord_persist_history(&f->co, &t, NULL);
	/* Published again with the same measurement: nothing new. */
	coord_persist_history(&f->co, &t, &t);
	assert_int_equal(coord_persist_history_page(&f->co, "n1-n2", 0, 0, 0,
						    100, count_sample, &n),
			 0);
	assert_int_equal(n, 2);
}

static void test_no_store(void **state)
{
	struct coord co;
	int n = 0;

	(void)state;
	/* No store (state_dir unusable, or not built yet). */
	memset(&co, 0, sizeof(co));
	errno = 0;
	assert_int_equal(coord_persist_history_page(&co, "n1-n2", 0, 0, 0, 10,
						    count_sample, &n),
			 -1);
	assert_int_equal(errno, ENODEV);
	errno = 0;
	assert_int_equal(coord_persist_episodes(&co, 0, 10, count_alert, &n),
			 -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_alert_episode, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_history_once, fx_setup,
						fx_teardown),
		cmocka_unit_test(test_no_store),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
