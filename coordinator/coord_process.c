/* Signals, systemd's watchdog and the descriptor limit (coord_process.h). */
#include "coord_process.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#include <systemd/sd-daemon.h>

#include "log.h"

static void coord_process_signal(evutil_socket_t sig, short what, void *arg)
{
	struct event_base *base = arg;

	(void)what;
	if (sig == SIGHUP) {
		log_info("SIGHUP: configuration reload is not supported; "
			 "restart the service to apply changes");
		return;
	}
	log_info("signal %d: shutting down", (int)sig);
	sd_notify(0, "STOPPING=1");
	event_base_loopbreak(base);
}

/* Pinged from the loop itself, so a wedged loop is what systemd notices. */
static void coord_process_ping(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	sd_notify(0, "WATCHDOG=1");
}

/* One descriptor per agent: the usual soft limit of 1024 is too low for a
 * thousand agents, so take what the hard limit allows. */
void coord_process_nofile(unsigned want, unsigned max_agents)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want
			      ? want
			      : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_warn("cannot raise the descriptor limit to %u", want);
	if (rl.rlim_cur < want)
		log_warnx("descriptor limit %llu is below what max_agents %u "
			  "needs (%u); raise LimitNOFILE",
			  (unsigned long long)rl.rlim_cur, max_agents, want);
}

int coord_process_signals(struct coord_process *p, struct event_base *base)
{
	p->sig_term = evsignal_new(base, SIGTERM, coord_process_signal, base);
	p->sig_int = evsignal_new(base, SIGINT, coord_process_signal, base);
	p->sig_hup = evsignal_new(base, SIGHUP, coord_process_signal, base);
	if (!p->sig_term || !p->sig_int || !p->sig_hup ||
	    evsignal_add(p->sig_term, NULL) || evsignal_add(p->sig_int, NULL) ||
	    evsignal_add(p->sig_hup, NULL))
		return -1;
	return 0;
}

int coord_process_watchdog(struct coord_process *p, struct event_base *base)
{
	struct timeval tv;

	if (sd_watchdog_enabled(0, &p->watchdog_usec) <= 0)
		return 0;
	tv.tv_sec = p->watchdog_usec / 2000000;
	tv.tv_usec = (p->watchdog_usec / 2) % 1000000;
	p->watchdog = event_new(base, -1, EV_PERSIST, coord_process_ping, NULL);
	if (!p->watchdog || event_add(p->watchdog, &tv))
		return -1;
	return 0;
}

void coord_process_free(struct coord_process *p)
{
	if (p->watchdog)
		event_free(p->watchdog);
	if (p->sig_term)
		event_free(p->sig_term);
	if (p->sig_int)
		event_free(p->sig_int);
	if (p->sig_hup)
		event_free(p->sig_hup);
	memset(p, 0, sizeof(*p));
}
