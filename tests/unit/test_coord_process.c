/* The coordinator's process plumbing on a real event loop and real
 * signals: SIGHUP is logged and the loop goes on, SIGTERM and SIGINT stop
 * it; without systemd's watchdog no ping is set; the descriptor limit
 * rises to what is asked, within the hard limit. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "coordinator/coord_process.h"

static int ticks;

/* The loop's own end, past the signal events that keep it alive. */
static void tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ticks++;
	event_base_loopexit(arg, NULL);
}

static void send_sig(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	raise((int)(intptr_t)arg);
}

static void test_signals(void **state)
{
	int sigs[] = {SIGHUP, SIGTERM, SIGINT};

	(void)state;
	unsetenv("WATCHDOG_USEC");
	for (unsigned i = 0; i < 3; i++) {
		struct event_base *base = event_base_new();
		struct coord_process p = {0};
		struct timeval tv = {0, 300000}, soon = {0, 10000};
		struct event *stop;

		assert_non_null(base);
		assert_int_equal(coord_process_signals(&p, base), 0);
		assert_int_equal(coord_process_watchdog(&p, base), 0);
		assert_null(p.watchdog);
		stop = evtimer_new(base, tick, base);
		assert_non_null(stop);
		evtimer_add(stop, &tv);
		ticks = 0;
		event_base_once(base, -1, EV_TIMEOUT, send_sig,
				(void *)(intptr_t)sigs[i], &soon);
		event_base_dispatch(base);
		if (sigs[i] == SIGHUP) {
			/* Went on until the timer. */
			assert_false(event_base_got_break(base));
			assert_int_equal(ticks, 1);
		} else {
			assert_true(event_base_got_break(base));
			assert_int_equal(ticks, 0);
		}
		event_free(stop);
		coord_process_free(&p);
		assert_null(p.sig_term);
		event_base_free(base);
	}
}

static void test_nofile(void **state)
{
	struct rlimit rl;
	unsigned want;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > rl.rlim_cur + 16
		       ? (unsigned)rl.rlim_cur + 16
		       : (unsigned)rl.rlim_cur;
	coord_process_nofile(want, want - 320);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_true(rl.rlim_cur >= want);
	/* Below the limit already: unchanged. */
	coord_process_nofile(16, 1);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_true(rl.rlim_cur >= want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_nofile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
