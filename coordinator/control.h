/* The ringctl control socket: a Unix stream socket (mode 0660, group from
 * the config) speaking the same framing. Read-only requests are open to
 * whoever can connect; requests that change state need uid 0 (SO_PEERCRED). */
#ifndef RING_CONTROL_H
#define RING_CONTROL_H

struct coord;
struct control;

struct control *control_new(struct coord *co);
void control_free(struct control *ctl);

#endif
