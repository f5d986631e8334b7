/* What ring-coordinator is to the system, apart from its modules: the
 * signals (SIGTERM, SIGINT stop the loop cleanly with STOPPING=1; SIGHUP
 * is logged as unsupported), systemd's watchdog pinged from the loop
 * itself (WatchdogSec: a wedged loop is what systemd notices), and the
 * descriptor limit raised for max_agents sessions. */
#ifndef RING_COORD_PROCESS_H
#define RING_COORD_PROCESS_H

#include <stdint.h>

#include <event2/event.h>

struct coord_process {
	struct event *sig_term, *sig_int, *sig_hup, *watchdog;
	uint64_t watchdog_usec;
};

/* RLIMIT_NOFILE's soft limit raised to want (up to the hard limit); a
 * limit still below it is logged with what to raise. */
void coord_process_nofile(unsigned want, unsigned max_agents);
/* The signal events on base. 0, or -1 (p half set: coord_process_free). */
int coord_process_signals(struct coord_process *p, struct event_base *base);
/* The watchdog ping every half WatchdogSec when systemd asks for it. 0 or
 * -1. */
int coord_process_watchdog(struct coord_process *p, struct event_base *base);
void coord_process_free(struct coord_process *p);

#endif
