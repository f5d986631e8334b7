/* A framed message session over a libevent bufferevent (TLS or plain).
 * Reads are incremental: the header is validated as soon as 12 bytes are in,
 * the payload is only unpacked once complete. A malformed frame closes only
 * this connection, with a logged reason. */
#ifndef RING_CONN_H
#define RING_CONN_H

#include <stdint.h>

#include <event2/bufferevent.h>

#include "frame.h"

struct conn;

/* The callback owns env and frees it with frame_free(). It may call
 * conn_free() on this connection. */
typedef void (*conn_msg_cb)(struct conn *c, Ring__Envelope *env, void *arg);
/* Called once when the connection fails; err is -ECONNRESET (peer closed),
 * -ETIMEDOUT (read timeout), -EPROTO (bad frame), -ECANCELED
 * (conn_close_after_flush) or -EIO (socket/TLS error); reason is for logs.
 * The owner normally calls conn_free(). */
typedef void (*conn_close_cb)(struct conn *c, int err, const char *reason,
			      void *arg);

/* Called when the (TLS) connection is established; for TLS bufferevents
 * that is after the handshake. */
typedef void (*conn_connect_cb)(struct conn *c, void *arg);

/* Takes ownership of bev (freed with the connection). peer: a label for
 * logs ("10.0.0.1:4242"). The callbacks are installed at once. */
struct conn *conn_new(struct bufferevent *bev, const char *peer,
		      uint32_t max_frame, conn_msg_cb on_msg,
		      conn_close_cb on_close, void *arg);
void conn_set_connect_cb(struct conn *c, conn_connect_cb cb);
/* Change the largest frame accepted (and buffered) from now on. */
void conn_set_max_frame(struct conn *c, uint32_t max_frame);
/* Safe inside this connection's callbacks (freed when they return). */
void conn_free(struct conn *c);
/* Queue a message. 0 or -errno. */
int conn_send(struct conn *c, const Ring__Envelope *env);
/* Wrap body (a message matching type) in an Envelope for request_id and
 * queue it. 0 or -errno. */
int conn_send_body(struct conn *c, uint64_t request_id,
		   Ring__Envelope__BodyCase type, void *body);
/* Convenience: send Error{code, text} for request_id. */
int conn_send_error(struct conn *c, uint64_t request_id, int code,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Close if nothing is read within ms (0 disables). */
void conn_set_read_timeout(struct conn *c, unsigned ms);
const char *conn_peer(const struct conn *c);
/* 1 when the session ended on a TLS error (the reason on_close got is
 * then tls_words_failure()'s words), else 0. */
int conn_tls_failed(const struct conn *c);
struct bufferevent *conn_bev(struct conn *c);
/* Flush pending output, then close (calls on_close with reason). */
void conn_close_after_flush(struct conn *c, const char *reason);

#endif
