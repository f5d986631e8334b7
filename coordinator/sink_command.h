/* The alert_command sink: argv[0] executed directly (no shell), in its
 * own process group, with only PATH=/usr/bin:/bin and RING_ALERT,
 * RING_EVENT (fired, resolved, changed, report), RING_STATE,
 * RING_SEVERITY, RING_SUBJECT, RING_NODE, RING_EDGE, RING_MESSAGE
 * (escaped to one line), RING_FIRST_SEEN, RING_RESOLVED and
 * RING_COORDINATOR; on stdin one JSON object and a newline; its output's
 * first 256 bytes logged when it fails. One runs at a time, the rest wait
 * in a bounded queue; exit status 0 is delivered, anything else (or the
 * timeout: SIGKILL to the group) failed and not retried. Takes the
 * table's transitions (not its "watchdog"), the Watchdog alert and the
 * health report. */
#ifndef RING_SINK_COMMAND_H
#define RING_SINK_COMMAND_H

#include "sink.h"
#include "sinks.h"

/* conf->command_argv (not NULL, argv[0] not NULL) copied. NULL (logged,
 * errno EINVAL) when argv[0] is not absolute, or ENOMEM. */
struct sink *sink_command_new(struct event_base *base,
			      const struct sinks_conf *conf,
			      struct sink_counts *counts);

#endif
