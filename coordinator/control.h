/* The ringctl control socket: a Unix stream socket (mode 0660, group from
 * the config) speaking the same framing. Read-only requests are open to
 * whoever can connect; requests that change state need uid 0 (SO_PEERCRED). */
#ifndef RING_CONTROL_H
#define RING_CONTROL_H

#include <event2/event.h>

#include "coord_conf.h"
#include "nodes.h"
#include "survey.h"

struct control;

/* Serves the node table and the survey to ringctl. */
struct control *control_new(struct event_base *base,
			    const struct coord_conf *conf, struct nodes *nodes,
			    struct survey *survey);
void control_free(struct control *ctl);

#endif
