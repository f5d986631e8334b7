/* A framed message session over a bufferevent (TLS or plain). */
#include "conn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>

#include "log.h"
#include "tls_words.h"

/* A peer that does not read its replies must not grow our memory forever. */
#define CONN_MAX_BACKLOG (16u << 20)

struct conn {
	struct bufferevent *bev;
	char peer[80];
	uint32_t max_frame;
	conn_msg_cb on_msg;
	conn_close_cb on_close;
	conn_connect_cb on_connect;
	void *arg;
	int dispatching; /* >0 while inside our callbacks */
	int freed;	 /* conn_free() called while dispatching */
	int failed;	 /* on_close already delivered */
	int closing;	 /* close once output is flushed */
	int tls_failed;	 /* the close came with a TLS error */
	char close_reason[128];
};

static void conn_destroy(struct conn *c)
{
	bufferevent_free(c->bev);
	free(c);
}

/* Deliver on_close exactly once. */
static void conn_fail(struct conn *c, int err, const char *reason)
{
	if (c->failed || c->freed)
		return;
	c->failed = 1;
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	log_debug("conn", "%s: closing: %s", c->peer, reason);
	if (c->on_close)
		c->on_close(c, err, reason, c->arg);
}

/* Reply to a type we do not know, keeping the session: newer peers may send
 * requests this version lacks. */
static void conn_reply_unsupported(struct conn *c, const struct frame_header *h,
				   const uint8_t *payload)
{
	Ring__Envelope *e = frame_unpack_bounded(h->length, payload);
	uint64_t id = e ? e->request_id : 0;

	frame_free(e);
	log_debug("conn", "%s: unsupported message type %u", c->peer, h->type);
	conn_send_error(c, id, RING__ERROR_CODE__ERROR_UNSUPPORTED,
			"message type %u not supported by this peer", h->type);
}

/* Returns 1 if a frame was consumed, 0 if more bytes are needed, -1 if the
 * connection failed. */
static int conn_read_one(struct conn *c, struct evbuffer *in)
{
	static const uint8_t empty[1];
	uint8_t hdr[FRAME_HEADER_LEN];
	struct frame_header h;
	Ring__Envelope *env;
	const uint8_t *payload;
	char why[160];
	int rc;

	if (evbuffer_get_length(in) < FRAME_HEADER_LEN)
		return 0;
	evbuffer_copyout(in, hdr, sizeof(hdr));
	rc = frame_header_decode(hdr, c->max_frame, &h);
	if (rc == -EBADMSG) {
		snprintf(why, sizeof(why), "bad magic %02x%02x%02x%02x", hdr[0],
			 hdr[1], hdr[2], hdr[3]);
		log_warnx("%s: protocol error: %s", c->peer, why);
		conn_fail(c, -EPROTO, why);
		return -1;
	}
	if (rc < 0) {
		snprintf(why, sizeof(why),
			 "%s (version %u, type %u, length %u)",
			 frame_strerror(rc), h.version, h.type, h.length);
		log_warnx("%s: protocol error: %s", c->peer, why);
		conn_fail(c, -EPROTO, why);
		return -1;
	}
	if (evbuffer_get_length(in) < FRAME_HEADER_LEN + (size_t)h.length)
		return 0;
	evbuffer_drain(in, FRAME_HEADER_LEN);
	payload = h.length ? evbuffer_pullup(in, h.length) : empty;
	if (!payload) {
		conn_fail(c, -EIO, "out of memory");
		return -1;
	}
	env = frame_decode(&h, payload, &rc);
	if (!env && rc == -ENOTSUP)
		conn_reply_unsupported(c, &h, payload);
	evbuffer_drain(in, h.length);
	if (!env && rc == -ENOTSUP)
		return 1;
	if (!env) {
		snprintf(why, sizeof(why), "%s (type %u, length %u)",
			 frame_strerror(rc), h.type, h.length);
		log_warnx("%s: protocol error: %s", c->peer, why);
		conn_fail(c, -EPROTO, why);
		return -1;
	}
	log_debug("conn", "%s: <- %s id=%llu (%u bytes)", c->peer,
		  frame_type_name(h.type), (unsigned long long)env->request_id,
		  h.length);
	c->on_msg(c, env, c->arg);
	return 1;
}

static void conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	c->dispatching++;
	while (!c->freed && !c->failed && !c->closing &&
	       conn_read_one(c, in) > 0)
		;
	c->dispatching--;
	if (c->freed && !c->dispatching)
		conn_destroy(c);
}

static void conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (!c->closing || evbuffer_get_length(bufferevent_get_output(bev)))
		return;
	c->dispatching++;
	conn_fail(c, -ECANCELED, c->close_reason);
	c->dispatching--;
	if (c->freed && !c->dispatching)
		conn_destroy(c);
}

static void conn_describe_error(struct conn *c, short what, char *buf,
				size_t len)
{
	unsigned long e, first = 0;
	SSL *ssl;

	if (what & BEV_EVENT_TIMEOUT) {
		snprintf(buf, len, "timed out waiting for the peer");
		return;
	}
	/* A TLS failure in words (side, peer's certificate, our CA, what
	 * to check), from the first real OpenSSL error (libevent adds
	 * placeholder entries of no library); the rest drained. */
	ssl = bufferevent_openssl_get_ssl(c->bev);
	while (ssl && (e = bufferevent_get_openssl_error(c->bev)) != 0)
		if (ERR_GET_LIB(e) && !first)
			first = e;
	if (first) {
		c->tls_failed = 1;
		tls_words_failure(ssl, first, buf, len);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		snprintf(buf, len, "connection closed by peer");
		return;
	}
	snprintf(buf, len, "%s",
		 EVUTIL_SOCKET_ERROR() ? strerror(EVUTIL_SOCKET_ERROR())
				       : "connection error");
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	char why[1200];

	(void)bev;
	c->dispatching++;
	if (what & BEV_EVENT_CONNECTED) {
		if (c->on_connect)
			c->on_connect(c, c->arg);
	} else {
		conn_describe_error(c, what, why, sizeof(why));
		conn_fail(c,
			  what & BEV_EVENT_TIMEOUT ? -ETIMEDOUT
			  : what & BEV_EVENT_EOF   ? -ECONNRESET
						   : -EIO,
			  why);
	}
	c->dispatching--;
	if (c->freed && !c->dispatching)
		conn_destroy(c);
}

struct conn *conn_new(struct bufferevent *bev, const char *peer,
		      uint32_t max_frame, conn_msg_cb on_msg,
		      conn_close_cb on_close, void *arg)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->bev = bev;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->max_frame = max_frame;
	c->on_msg = on_msg;
	c->on_close = on_close;
	c->arg = arg;
	/* Never buffer more than one maximal frame: the header check runs
	 * before the payload is waited for. */
	bufferevent_setwatermark(bev, EV_READ, 0,
				 (size_t)max_frame + FRAME_HEADER_LEN);
	if (bufferevent_openssl_get_ssl(bev))
		bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	bufferevent_setcb(bev, conn_read_cb, conn_write_cb, conn_event_cb, c);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	return c;
}

void conn_set_max_frame(struct conn *c, uint32_t max_frame)
{
	c->max_frame = max_frame;
	bufferevent_setwatermark(c->bev, EV_READ, 0,
				 (size_t)max_frame + FRAME_HEADER_LEN);
}

void conn_set_connect_cb(struct conn *c, conn_connect_cb cb)
{
	c->on_connect = cb;
}

void conn_free(struct conn *c)
{
	if (!c)
		return;
	if (c->dispatching) {
		/* Inside one of our callbacks: finish there. */
		c->freed = 1;
		bufferevent_disable(c->bev, EV_READ | EV_WRITE);
		return;
	}
	conn_destroy(c);
}

int conn_send(struct conn *c, const Ring__Envelope *env)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	uint8_t *buf;
	size_t len;
	int rc;

	if (c->failed || c->freed || c->closing)
		return -ENOTCONN;
	if (evbuffer_get_length(out) > CONN_MAX_BACKLOG) {
		conn_fail(c, -ENOBUFS,
			  "peer is not reading (output backlog too large)");
		return -ENOBUFS;
	}
	rc = frame_encode(env, &buf, &len);
	if (rc < 0)
		return rc;
	log_debug("conn", "%s: -> %s id=%llu (%zu bytes)", c->peer,
		  frame_type_name((uint16_t)env->body_case),
		  (unsigned long long)env->request_id, len - FRAME_HEADER_LEN);
	rc = evbuffer_add(out, buf, len) == 0 ? 0 : -ENOMEM;
	free(buf);
	return rc;
}

int conn_send_body(struct conn *c, uint64_t request_id,
		   Ring__Envelope__BodyCase type, void *body)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;

	env.request_id = request_id;
	env.body_case = type;
	env.error = body; /* every body of the oneof shares this slot */
	return conn_send(c, &env);
}

int conn_send_error(struct conn *c, uint64_t request_id, int code,
		    const char *fmt, ...)
{
	Ring__Error err = RING__ERROR__INIT;
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	err.code = (Ring__ErrorCode)code;
	err.text = text;
	return conn_send_body(c, request_id, RING__ENVELOPE__BODY_ERROR, &err);
}

void conn_set_read_timeout(struct conn *c, unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000,
			     .tv_usec = (ms % 1000) * 1000};

	bufferevent_set_timeouts(c->bev, ms ? &tv : NULL, NULL);
}

const char *conn_peer(const struct conn *c)
{
	return c->peer;
}

struct bufferevent *conn_bev(struct conn *c)
{
	return c->bev;
}

void conn_close_after_flush(struct conn *c, const char *reason)
{
	if (c->failed || c->freed || c->closing)
		return;
	c->closing = 1;
	snprintf(c->close_reason, sizeof(c->close_reason), "%s", reason);
	bufferevent_disable(c->bev, EV_READ);
	/* Let the write callback run from the loop even if nothing is queued,
	 * so on_close never re-enters the caller. */
	bufferevent_trigger(c->bev, EV_WRITE,
			    BEV_TRIG_IGNORE_WATERMARKS |
				    BEV_TRIG_DEFER_CALLBACKS);
}

int conn_tls_failed(const struct conn *c)
{
	return c->tls_failed;
}
