/* A small HTTP/1.x server for read-only pages (the coordinator's
 * metrics_listen), bounded against anyone who can connect. It promises:
 *
 * - a request (line, headers and a small body) arrives whole within
 *   request_ms of accept or of the previous reply's last byte: an absolute
 *   deadline that bytes do not renew. A started request gets 408 and the
 *   connection is closed; an idle kept-alive connection is just closed;
 * - one request at a time per connection: nothing is read while a reply is
 *   written, and the reply has reply_ms to be written (a reader too slow
 *   is closed). A connection so holds at most max_head + max_body bytes of
 *   input and one reply;
 * - at most per_source connections from one source (an IPv4 address, an
 *   IPv6 /64): a new one displaces that source's oldest idle connection,
 *   else it is refused (503); at most max_conns in all: a new one displaces
 *   the oldest connection of the source holding most, when that is at
 *   least two more than the newcomer's source holds, else the oldest idle
 *   connection, else it is refused (503);
 * - request line and headers up to max_head bytes (else 414 or 431), at
 *   most HTTP_SERVE_MAX_FIELDS header lines (else 431), a body only with a
 *   Content-Length up to max_body (else 411 or 413; read and discarded);
 *   HTTP/1.0 and HTTP/1.1 (others 505; an HTTP/1.1 request without exactly
 *   one Host is 400); keep-alive as the version and Connection say;
 *   replies carry Date and Content-Length (HEAD: the length alone);
 *   after an error reply the connection is closed.
 *
 * The handler is called once per request, on the loop, and fills the reply
 * at once. */
#ifndef RING_HTTP_SERVE_H
#define RING_HTTP_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>

#define HTTP_SERVE_MAX_CONNS 64
#define HTTP_SERVE_PER_SOURCE 8
#define HTTP_SERVE_REQUEST_MS 10000
#define HTTP_SERVE_REPLY_MS 10000
#define HTTP_SERVE_MAX_HEAD 8192
#define HTTP_SERVE_MAX_BODY 1024
#define HTTP_SERVE_MAX_FIELDS 100
/* After an error or a last reply: the write side is shut and what the
 * client still sends is read and dropped for this long (or up to 64 KiB),
 * so that closing with unread input does not reset the connection before
 * the client has read the reply. */
#define HTTP_SERVE_LINGER_MS 2000

struct http_serve_limits {
	unsigned max_conns;
	unsigned per_source;
	unsigned request_ms;
	unsigned reply_ms;
	size_t max_head;
	size_t max_body;
};

/* What http_parse_head found; strings point into the parsed buffer. */
struct http_head {
	const char *method; /* a token as sent ("GET") */
	/* The target's path (of an absolute-form target, its path part, "/"
	 * when it has none), as sent: not decoded. */
	const char *path;
	const char *query; /* after '?', or NULL */
	int minor;	   /* HTTP/1.minor */
	int keep;	   /* keep the connection after the reply */
	int chunked;	   /* Transfer-Encoding present */
	size_t content_length;
};

/* Parse a request head at the start of buf[0..len): 0 when more is needed,
 * the head's length in bytes (blank line included) when whole, or minus
 * the status code that refuses it (-400, -414, -431, -505). A head not
 * whole within max bytes is -414 (the request line) or -431. Writes NULs
 * into buf. */
int http_parse_head(char *buf, size_t len, size_t max, struct http_head *h);

struct http_request {
	const char *method;
	int get;  /* GET or HEAD */
	int head; /* HEAD: the reply's headers alone */
	const char *path;
	const char *query; /* or NULL */
};

/* The handler fills code (200 by default), reason (NULL: the code's own),
 * header lines (http_reply_header) and the body. The server adds Date,
 * Content-Length and Connection. */
struct http_reply {
	int code;
	const char *reason;
	struct evbuffer *headers;
	struct evbuffer *body;
};
int http_reply_header(struct http_reply *r, const char *name,
		      const char *value);

typedef void (*http_handler_fn)(const struct http_request *req,
				struct http_reply *rep, void *arg);

/* What happened so far, for tests and logs. */
struct http_serve_stats {
	unsigned conns;	    /* open now */
	uint64_t accepted;  /* connections taken */
	uint64_t refused;   /* closed at accept (503), a cap reached */
	uint64_t displaced; /* closed to make room for a new one */
	uint64_t timed_out; /* closed at a deadline */
	uint64_t requests;  /* handed to the handler */
};

struct http_serve;

/* Listen on sa; lim NULL: the HTTP_SERVE_ defaults. subsystem names the
 * log's debug subsystem and prefixes warnings. NULL with errno. */
struct http_serve *http_serve_new(struct event_base *base,
				  const struct sockaddr *sa, int salen,
				  const struct http_serve_limits *lim,
				  const char *subsystem, http_handler_fn fn,
				  void *arg);
/* The port it listens on (host order). */
uint16_t http_serve_port(const struct http_serve *s);
void http_serve_stats(const struct http_serve *s, struct http_serve_stats *st);
/* Closes every connection. */
void http_serve_free(struct http_serve *s);

#endif
