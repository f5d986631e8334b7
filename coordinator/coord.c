/* ring-coordinator's process: wires the modules together, signals,
 * watchdog, state_dir. */
#include "coord.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "agents.h"
#include "control.h"
#include "log.h"
#include "survey.h"
#include "tls.h"

static void coord_signal(evutil_socket_t sig, short what, void *arg)
{
	struct coord *co = arg;

	(void)what;
	if (sig == SIGHUP) {
		log_info("SIGHUP: configuration reload is not supported; "
			 "restart the service to apply changes");
		return;
	}
	log_info("signal %d: shutting down", (int)sig);
	sd_notify(0, "STOPPING=1");
	event_base_loopbreak(co->base);
}

/* Pinged from the loop itself, so a wedged loop is what systemd notices. */
static void coord_watchdog(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	sd_notify(0, "WATCHDOG=1");
}

static int coord_state_dir(const struct coord_conf *conf)
{
	if (mkdir(conf->state_dir, 0750) == 0 || errno == EEXIST)
		return 0;
	log_warn("state_dir %s", conf->state_dir);
	return -1;
}

/* One descriptor per agent: the usual soft limit of 1024 is too low for a
 * thousand agents, so take what the hard limit allows. */
static void coord_raise_nofile(unsigned want)
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
			  (unsigned long long)rl.rlim_cur, want - 320, want);
}

int coord_init(struct coord *co, struct coord_conf *conf)
{
	memset(co, 0, sizeof(*co));
	co->conf = conf;
	signal(SIGPIPE, SIG_IGN);
	/* Sessions, pending handshakes, control clients, and some spare. */
	coord_raise_nofile(conf->max_agents + 320);
	co->base = event_base_new();
	if (!co->base) {
		log_warnx("cannot create event loop");
		return -1;
	}
	co->tls = tls_ctx_new(1, conf->ca, conf->cert, conf->key);
	if (!co->tls)
		goto fail;
	co->nodes = nodes_new();
	if (!co->nodes)
		goto fail;
	for (unsigned i = 0; i < conf->n_expect; i++) {
		struct node *n =
			nodes_get(co->nodes, conf->expect[i], UINT32_MAX);

		if (!n)
			goto fail;
		n->expected = 1;
	}
	if (coord_state_dir(conf) < 0)
		goto fail;
	co->agents = agents_new(co->base, co->tls, conf, co->nodes);
	if (!co->agents)
		goto fail;
	co->survey =
		survey_new(co->base, conf, co->nodes, agents_calls(co->agents));
	if (!co->survey)
		goto fail;
	agents_set_change_cb(co->agents, survey_nodes_changed, co->survey);
	co->control = control_new(co->base, conf, co->nodes, co->survey);
	if (!co->control)
		goto fail;
	co->sig_term = evsignal_new(co->base, SIGTERM, coord_signal, co);
	co->sig_int = evsignal_new(co->base, SIGINT, coord_signal, co);
	co->sig_hup = evsignal_new(co->base, SIGHUP, coord_signal, co);
	if (!co->sig_term || !co->sig_int || !co->sig_hup ||
	    evsignal_add(co->sig_term, NULL) ||
	    evsignal_add(co->sig_int, NULL) || evsignal_add(co->sig_hup, NULL))
		goto fail;
	if (sd_watchdog_enabled(0, &co->watchdog_usec) > 0) {
		struct timeval tv = {.tv_sec = co->watchdog_usec / 2000000,
				     .tv_usec =
					     (co->watchdog_usec / 2) % 1000000};

		co->watchdog =
			event_new(co->base, -1, EV_PERSIST, coord_watchdog, co);
		if (!co->watchdog || event_add(co->watchdog, &tv))
			goto fail;
	}
	return 0;
fail:
	coord_fini(co);
	return -1;
}

int coord_run(struct coord *co)
{
	log_info("ring-coordinator %s ready: %u expected nodes", RING_VERSION,
		 co->conf->n_expect);
	sd_notify(0, "READY=1\nSTATUS=waiting for agents");
	if (event_base_dispatch(co->base) < 0) {
		log_warnx("event loop failed");
		return -1;
	}
	return 0;
}

void coord_fini(struct coord *co)
{
	if (co->watchdog)
		event_free(co->watchdog);
	if (co->sig_term)
		event_free(co->sig_term);
	if (co->sig_int)
		event_free(co->sig_int);
	if (co->sig_hup)
		event_free(co->sig_hup);
	control_free(co->control);
	/* Before the agents: the survey cancels its calls to them. */
	survey_free(co->survey);
	agents_free(co->agents);
	nodes_free(co->nodes);
	if (co->tls)
		SSL_CTX_free(co->tls);
	if (co->base)
		event_base_free(co->base);
	memset(co, 0, sizeof(*co));
}
