/* Shared by the unit tests that drive a module through its message
 * interface: a coordinator module (test_agents, test_control) with its
 * configuration, loop and node table, frames written to a socket, and an
 * agent's ops instance (test_probe, test_verbs) with what it sent back.
 * Header-only, so each test program stays one source file; include
 * <cmocka.h> first. */
#ifndef RING_TESTSOCK_H
#define RING_TESTSOCK_H

#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "agent/agent_conf.h"
#include "coordinator/coord_conf.h"
#include "frame.h"
#include "log.h"
#include "coordinator/nodes.h"
#include "agent/ops.h"

/* ---- a coordinator module's surroundings -------------------------------- */

struct testsock_coord {
	struct coord_conf conf;
	struct event_base *base;
	struct nodes *nodes;
};

/* Defaults, a loop and an empty node table; the caller adjusts conf. */
static inline void testsock_coord_open(struct testsock_coord *c,
				       const char *prog)
{
	signal(SIGPIPE, SIG_IGN);
	log_init(prog, NULL, 1);
	coord_conf_defaults(&c->conf);
	c->base = event_base_new();
	assert_non_null(c->base);
	c->nodes = nodes_new();
	assert_non_null(c->nodes);
}

/* After the module itself is freed. */
static inline void testsock_coord_close(struct testsock_coord *c)
{
	nodes_free(c->nodes);
	event_base_free(c->base);
	coord_conf_free(&c->conf);
}

/* Let the loop handle whatever is ready, a few rounds deep. */
static inline void testsock_spin(struct event_base *base)
{
	for (int i = 0; i < 8; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

/* One envelope of the given type and body, written to fd. */
static inline void testsock_send(int fd, uint64_t id,
				 Ring__Envelope__BodyCase type, void *body)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;

	env.request_id = id;
	env.body_case = type;
	env.error = body; /* every body shares this slot */
	assert_int_equal(frame_write_fd(fd, &env, 1000), 0);
}

/* ---- an agent's ops instance -------------------------------------------- */

/* What an ops instance sent back last, and how many times it sent. */
struct testsock_sent {
	int n;
	Ring__Envelope__BodyCase type;
	char text[320]; /* Error text or ProbeReply error */
	char route_kind[16], route_if[IFNAMSIZ];
	int reachable;
};

static inline void testsock_sent_cb(void *arg, uint64_t id,
				    Ring__Envelope__BodyCase type, void *body)
{
	struct testsock_sent *s = arg;

	(void)id;
	s->n++;
	s->type = type;
	s->text[0] = s->route_kind[0] = s->route_if[0] = '\0';
	if (type == RING__ENVELOPE__BODY_ERROR) {
		snprintf(s->text, sizeof(s->text), "%s",
			 ((Ring__Error *)body)->text);
	} else if (type == RING__ENVELOPE__BODY_PROBE_REPLY) {
		Ring__ProbeReply *r = body;

		snprintf(s->text, sizeof(s->text), "%s", r->error);
		snprintf(s->route_kind, sizeof(s->route_kind), "%s",
			 r->route_kind);
		snprintf(s->route_if, sizeof(s->route_if), "%s",
			 r->route_interface);
		s->reachable = r->reachable;
	}
}

/* An agent's ops instance, its configuration and what it sent. */
struct testsock_agent {
	struct event_base *base;
	int own_base;
	struct agent_conf conf;
	struct testsock_sent s;
	struct ops *o;
};

/* The default configuration and an ops instance reporting to a->s, on
 * base (NULL: a loop of its own). The test may change a->conf afterwards:
 * ops reads it where it uses it. 0, or -1 with nothing held; no assert, so
 * that a forked namespace child can use it too. */
static inline int testsock_agent_open(struct testsock_agent *a,
				      struct event_base *base)
{
	memset(a, 0, sizeof(*a));
	a->own_base = !base;
	a->base = base ? base : event_base_new();
	if (!a->base)
		return -1;
	agent_conf_defaults(&a->conf);
	a->o = ops_new(a->base, &a->conf, testsock_sent_cb, &a->s);
	if (!a->o) {
		if (a->own_base)
			event_base_free(a->base);
		return -1;
	}
	return 0;
}

/* One request of the given type and body to a's ops instance, which must
 * take it; what it sent back is cleared first. */
static inline void testsock_agent_handle(struct testsock_agent *a, uint64_t id,
					 Ring__Envelope__BodyCase type,
					 void *body)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;

	env.request_id = id;
	env.body_case = type;
	env.error = body; /* every body shares this slot */
	memset(&a->s, 0, sizeof(a->s));
	assert_int_equal(ops_handle(a->o, &env), 1);
}

static inline void testsock_agent_close(struct testsock_agent *a)
{
	ops_free(a->o);
	if (a->own_base)
		event_base_free(a->base);
}

#endif
