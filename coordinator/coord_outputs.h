/* What the coordinator shows besides control's replies: the inputs of the
 * metrics and the ring's page gathered at each scrape (the node table, the
 * topology and health as health_view.h gives them, the alerts, the
 * certificate's end, the survey's interval and outcome, the watch's
 * baselines and GID judgements, the store's state), and the periodic
 * health report's tick (health_report.h's line in the journal, and to the
 * alert_command with health_report_command). arg: the struct coord. */
#ifndef RING_COORD_OUTPUTS_H
#define RING_COORD_OUTPUTS_H

#include <event2/event.h>

#include "coord.h"
#include "metrics.h"

/* metrics_src_fn. */
void coord_outputs_metrics_src(struct metrics_src *src, void *arg);
/* The health report timer's callback; the fired and resolved counts
 * start again. */
void coord_outputs_report(evutil_socket_t fd, short what, void *arg);

#endif
