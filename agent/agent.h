/* ring-agent's session with the coordinator: connect out over mutual TLS,
 * Hello, heartbeats, inventory on connect and on change, reconnect with
 * exponential backoff and jitter. */
#ifndef RING_AGENT_H
#define RING_AGENT_H

#include "agent_conf.h"

struct agent;

/* NULL on error (logged). */
struct agent *agent_new(const struct agent_conf *conf);
/* Run until SIGTERM/SIGINT. 0 on clean stop. */
int agent_run(struct agent *a);
void agent_free(struct agent *a);
/* Backoff delay in ms for the given attempt (0-based), before jitter:
 * min(max_ms, min_ms * 2^attempt). */
uint64_t agent_backoff_ms(uint64_t min_ms, uint64_t max_ms, unsigned attempt);

#endif
