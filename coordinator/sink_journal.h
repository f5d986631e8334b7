/* The journald sink: every transition of the alert table (the "watchdog"
 * rule's included) as one journal entry with the structured fields
 * RING_ALERT, RING_SEVERITY, RING_STATE, RING_SUBJECT, RING_NODE,
 * RING_EDGE (empty ones left out) at the severity's priority (a
 * resolution at notice), or one log_info line when not under systemd.
 * Synchronous: journald's socket, never the network. */
#ifndef RING_SINK_JOURNAL_H
#define RING_SINK_JOURNAL_H

#include "sink.h"

/* The sink (stateless; its free does nothing). */
struct sink *sink_journal(void);

#endif
