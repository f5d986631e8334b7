/* Agent sessions: the TLS listener on the management address, Hello
 * authentication (claimed node name must be in the certificate),
 * heartbeats and inventory updates. */
#ifndef RING_AGENTS_H
#define RING_AGENTS_H

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/ssl.h>

#include "coord_conf.h"

#include "call.h"
#include "nodes.h"
#include "ring.pb-c.h"

struct agents;

/* Connections that have not completed TLS and Hello are bounded apart
 * from agents (which max_agents bounds), in total and per source address,
 * with an absolute deadline (handshake_timeout) from accept: a flood of
 * them can never take an agent's place. When the pending total is full,
 * the oldest pending connection makes room for the new one. */
#define AGENTS_MAX_PENDING 256
/* Overridable at build time only for measurements of many agents from
 * one address (bench: -DAGENTS_MAX_PENDING_PER_SOURCE=256). */
#ifndef AGENTS_MAX_PENDING_PER_SOURCE
#define AGENTS_MAX_PENDING_PER_SOURCE 8
#endif
/* Before Hello, frames larger than this close the connection. */
#define AGENTS_HELLO_MAX_FRAME 4096

/* Bind and listen on conf->listen_host:listen_port (port 0: any free one).
 * NULL on error. */
struct agents *agents_new(struct event_base *base, SSL_CTX *tls,
			  const struct coord_conf *conf, struct nodes *nodes);
/* Close every session and the listener. */
void agents_free(struct agents *a);
/* Number of sessions that completed Hello. */
unsigned agents_active(const struct agents *a);

/* The call interface of the agents' sessions (call.h): requests to a
 * node's live session, one accepted outcome each. Anything else carrying
 * a call's id (a second interim, another type, a reply after the final
 * one or after the timeout) is logged and dropped. */
const struct call_iface *agents_calls(struct agents *a);
/* Take a connected transport as an agent session, as after a TLS accept.
 * identity: the name its certificate proves (NULL: ask the TLS layer of
 * bev); for sessions over plain sockets in tests and fuzzing. 0 or -1. */
int agents_attach(struct agents *a, struct bufferevent *bev, const char *addr,
		  const char *identity);
/* Counters for tests and status. */
unsigned agents_pending(const struct agents *a);
/* Called (from the event loop) when a node's neighbour table arrives or a
 * node comes up or goes down: the survey uses it to decide when to run. */
typedef void (*agents_change_cb)(void *arg);
void agents_set_change_cb(struct agents *a, agents_change_cb cb, void *arg);

#endif
