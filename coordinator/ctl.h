/* ringctl's library part: one request/reply over the control socket, and
 * the rendering of replies through the writer. */
#ifndef RING_CTL_H
#define RING_CTL_H

#include <stddef.h>

#include "frame.h"
#include "writer.h"

#define CTL_DEFAULT_SOCKET "/run/ringd/coordinator.sock"

/* Connect to sock, send req (its request_id is set here), wait up to
 * timeout_ms for the reply with the same id. 0 and *rep, or -1 with a
 * one-line reason in err. An Error reply is returned as a reply. */
int ctl_request(const char *sock, int timeout_ms, Ring__Envelope *req,
		Ring__Envelope **rep, char *err, size_t errlen);

void ctl_render_status(struct writer *w, const Ring__StatusReply *r);
void ctl_render_inventory(struct writer *w, const Ring__InventoryReply *r);
/* 0 when every expected node is up, 1 otherwise. */
int ctl_status_health(const Ring__StatusReply *r);
/* "2026-12-02T11:50:55Z" for Unix ms; "" for 0. */
void ctl_format_time(unsigned long long ms, char *buf, size_t len);

#endif
