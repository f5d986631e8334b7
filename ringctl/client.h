/* ringctl's client: one request and its reply over the coordinator's
 * control socket (the wire code of proto/frame.c, nothing of the daemon). */
#ifndef RING_CLIENT_H
#define RING_CLIENT_H

#include <stddef.h>

#include "frame.h"

#define CLIENT_DEFAULT_SOCKET "/run/ringd/coordinator.sock"

/* Connect to sock, send req (its request_id is set here), wait up to
 * timeout_ms for the reply with the same id. 0 and *rep, or -1 with a
 * one-line reason in err. An Error reply is returned as a reply. */
int client_request(const char *sock, int timeout_ms, Ring__Envelope *req,
		   Ring__Envelope **rep, char *err, size_t errlen);

/* The ring a command is about (--ring ID; NULL: the whole site), set
 * once before its requests: every request with a ring field (status,
 * ranks, history, watch, all-reduce) that the caller left "" carries it,
 * so each reader of a one-ring reply (explain, plan, the checks) asks for
 * that ring's without knowing. client_request stamps it; a connection of
 * its own (watch) calls client_stamp_ring. */
void client_set_ring(const char *id);
void client_stamp_ring(Ring__Envelope *req);

/* Why connect(sock) failed with errno e, in words for the operator: the
 * path that refused (a directory this user cannot search, a file that is
 * not a socket, the socket's mode and group) and how to choose another
 * socket. */
void client_connect_error(const char *sock, int e, char *err, size_t len);

/* What client_call leaves unsaid: nothing; the coordinator's Error (the
 * caller has a better word for "not there"); everything (polling). */
enum client_quiet { CLIENT_LOUD, CLIENT_QUIET_ERROR, CLIENT_QUIET };

/* client_request, keeping only a reply of type want: otherwise say why
 * on stderr (the coordinator's text escaped) and return NULL. */
Ring__Envelope *client_call(const char *sock, int timeout_ms,
			    Ring__Envelope *req, Ring__Envelope__BodyCase want,
			    enum client_quiet quiet);

#endif
