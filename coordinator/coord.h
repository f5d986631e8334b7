/* ring-coordinator: the process state shared by its modules, and its
 * lifecycle (init, event loop, shutdown). */
#ifndef RING_COORD_H
#define RING_COORD_H

#include "health.h"
#include "health_view.h"
#include <stdint.h>

#include <event2/event.h>
#include <openssl/ssl.h>

#include "control.h"
#include "coord_conf.h"
#include "coord_process.h"
#include "nodes.h"
#include "store_keeper.h"

struct coord {
	struct coord_conf *conf;
	struct event_base *base;
	SSL_CTX *tls;
	struct nodes *nodes;
	struct agents *agents;	 /* agent sessions (agents.h) */
	struct control *control; /* ringctl socket (control.h) */
	struct survey *survey;	 /* adjacency, tests, topology (survey.h) */
	struct alerts *alerts;	 /* health alerts (alerts.h) */
	struct health_rules
		*rules;		 /* live overlay and rules (health_rules.h) */
	struct sinks *sinks;	 /* where alerts go (sinks.h) */
	struct alertmanager *am; /* Alertmanager's API (alertmanager.h) */
	struct store_keeper *keeper; /* durable state (store_keeper.h) */
	uint64_t store_lost_seen;    /* the keeper's lost_seq alerted */
	struct store_keeper_info store_info; /* the last (metrics) */
	struct metrics *metrics; /* Prometheus endpoint (metrics.h) */
	struct feed *feed;	 /* ringctl watch's events (feed.h) */
	char *alert_argv[COORD_CONF_MAX_ARGS + 1];
	struct event *thin_ev;	 /* history thinning, hourly */
	struct event *report_ev; /* health report, health_report_interval */
	struct event *settle_ev; /* node table changed: survey, rules */
	uint64_t settle_end_us, settle_cost_us; /* the last pass (monotonic) */
	unsigned fired, resolved; /* transitions since the last report */
	struct control_view view; /* what control shows of the above */
	struct health_view hview; /* where the health's facts live */
	struct health health;	  /* the last derived (metrics, page) */
	struct health health_fed; /* the last the watchers were told */
	int health_fed_set;
	struct coord_process process; /* signals, watchdog (coord_process.h) */
};

/* Build everything up to bound listeners; READY=1 is sent by coord_run.
 * -1 on error (logged). */
int coord_init(struct coord *co, struct coord_conf *conf);
/* Run until SIGTERM/SIGINT. 0 on clean stop. */
int coord_run(struct coord *co);
void coord_fini(struct coord *co);

#endif
