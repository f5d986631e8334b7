/* Agent sessions: the TLS listener on the management address, Hello
 * authentication (claimed node name must be in the certificate),
 * heartbeats and inventory updates. */
#ifndef RING_AGENTS_H
#define RING_AGENTS_H

struct coord;
struct agents;

/* Bind and listen on conf->listen_host:listen_port. NULL on error. */
struct agents *agents_new(struct coord *co);
/* Close every session and the listener. */
void agents_free(struct agents *a);
/* Number of sessions that completed Hello. */
unsigned agents_active(const struct agents *a);

#endif
