/* rdma_events: the set of watched devices follows the inventory, devices
 * that cannot be opened are not retried every scan, the set is bounded,
 * and everything is freed. Devices that can be opened (soft-RoCE) and
 * their events are exercised in tests/rdma/. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "agent/rdma_events.h"

static int changes;

static void changed(void *arg)
{
	(void)arg;
	changes++;
}

/* An inventory naming n devices "nosuch<i>" (no such verbs device). */
static Ring__Inventory *inv_of(size_t n)
{
	Ring__Inventory *inv = calloc(1, sizeof(*inv));

	assert_non_null(inv);
	ring__inventory__init(inv);
	inv->rdma_devices = calloc(n ? n : 1, sizeof(*inv->rdma_devices));
	assert_non_null(inv->rdma_devices);
	for (size_t i = 0; i < n; i++) {
		Ring__RdmaDevice *d = calloc(1, sizeof(*d));

		assert_non_null(d);
		ring__rdma_device__init(d);
		d->name = calloc(1, 32);
		assert_non_null(d->name);
		snprintf(d->name, 32, "nosuch%zu", i);
		inv->rdma_devices[i] = d;
	}
	inv->n_rdma_devices = n;
	return inv;
}

static void inv_free(Ring__Inventory *inv)
{
	for (size_t i = 0; i < inv->n_rdma_devices; i++) {
		free(inv->rdma_devices[i]->name);
		free(inv->rdma_devices[i]);
	}
	free(inv->rdma_devices);
	free(inv);
}

static void test_unknown_devices(void **state)
{
	struct event_base *base = event_base_new();
	struct rdma_events *re = rdma_events_new(base, changed, NULL);
	Ring__Inventory *inv = inv_of(3), *many = inv_of(200);

	(void)state;
	assert_non_null(re);
	/* Not in the verbs list: refused, and not looked up again. */
	assert_int_equal(rdma_events_sync(re, inv), 0);
	assert_false(rdma_events_watching(re, "nosuch0"));
	assert_int_equal(rdma_events_sync(re, inv), 0);
	/* More than the bound: still nothing watched, nothing overflows. */
	assert_int_equal(rdma_events_sync(re, many), 0);
	assert_int_equal(rdma_events_sync(re, many), 0);
	/* Gone from the inventory, and none. */
	assert_int_equal(rdma_events_sync(re, NULL), 0);
	assert_int_equal(rdma_events_sync(re, inv), 0);
	/* No events without devices: nothing to wait on, the loop ends. */
	assert_int_equal(event_base_loop(base, EVLOOP_NONBLOCK), 1);
	assert_int_equal(changes, 0);
	rdma_events_free(re);
	rdma_events_free(NULL);
	inv_free(inv);
	inv_free(many);
	event_base_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
