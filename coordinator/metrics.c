/* The Prometheus endpoint's routing (metrics.h): GET or HEAD /metrics to
 * the exposition (metrics_expo.c), / and /ring.svg to the ring's page
 * (page.c; ?ring=ID one ring's, a bad query or an unknown ring 404),
 * anything else 404 and other methods 405; the HTTP server itself is
 * http_serve.c. */
#include "metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <event2/util.h>

#include "http_serve.h"
#include "log.h"
#include "page.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct metrics {
	struct http_serve *http;
	metrics_src_fn fn;
	void *arg;
};

static void metrics_reply_text(struct http_reply *rep, int code,
			       const char *text)
{
	rep->code = code;
	if (http_reply_header(rep, "Content-Type",
			      "text/plain; charset=utf-8") < 0 ||
	    evbuffer_add_printf(rep->body, "%s\n", text) < 0)
		log_warnx("metrics: out of memory answering %d", code);
}

/* Routing: /metrics, the page (/, /ring.svg, ?ring=ID), GET and HEAD
 * only. */
static void metrics_handle(const struct http_request *req,
			   struct http_reply *rep, void *arg)
{
	struct metrics *m = arg;
	const char *path = req->path;
	struct metrics_src src;
	char ring[PAGE_RING_MAX];
	int page, err, one = 0, saved;

	page = !strcmp(path, "/") ? 1 : !strcmp(path, "/ring.svg") ? 2 : 0;
	if (!page && strcmp(path, "/metrics")) {
		metrics_reply_text(rep, 404,
				   "not found: the metrics are at /metrics, "
				   "the ring at / and /ring.svg");
		return;
	}
	if (!req->get) {
		http_reply_header(rep, "Allow", "GET, HEAD");
		metrics_reply_text(rep, 405, "method not allowed: GET or HEAD");
		return;
	}
	if (page && (one = page_query(req->query, ring)) < 0) {
		metrics_reply_text(rep, 404,
				   "not found: the page takes ?ring=ID (a "
				   "ring's id: letters, digits, '.', '_', '-'; "
				   "1 to 63) or nothing");
		return;
	}
	memset(&src, 0, sizeof(src));
	m->fn(&src, m->arg);
	err = page ? page_render(rep->body, &src, page == 1, one ? ring : NULL)
		   : metrics_render(rep->body, &src);
	saved = errno;
	if (src.done)
		src.done(&src);
	errno = saved;
	if (err < 0) {
		if (errno == ENOENT) {
			evbuffer_drain(rep->body,
				       evbuffer_get_length(rep->body));
			metrics_reply_text(rep, 404,
					   "not found: no such ring (ringctl "
					   "status lists the rings)");
			return;
		}
		log_warnx("metrics: out of memory rendering %s", path);
		evbuffer_drain(rep->body, evbuffer_get_length(rep->body));
		metrics_reply_text(rep, 500, "out of memory");
		return;
	}
	log_debug("metrics", "%s: %zu bytes", path,
		  evbuffer_get_length(rep->body));
	err = http_reply_header(rep, "Content-Type",
				page == 1   ? "text/html; charset=utf-8"
				: page == 2 ? "image/svg+xml; charset=utf-8"
					    : METRICS_CONTENT_TYPE);
	if (page) {
		/* A picture of now, never a cached one; nothing of it runs
		 * (no script, nothing loaded from elsewhere). */
		err |= http_reply_header(rep, "Cache-Control", "no-store");
		err |= http_reply_header(rep, "X-Content-Type-Options",
					 "nosniff");
		err |= http_reply_header(rep, "Content-Security-Policy",
					 "default-src 'none'; style-src "
					 "'unsafe-inline'; frame-ancestors "
					 "'none'");
	}
	if (err)
		log_warnx("metrics: out of memory answering %s", path);
}

/* "ADDR:PORT" or "[ADDR]:PORT"; libevent refuses an explicit port 0,
 * which asks for any free port: it is parsed as the address alone. */
static int metrics_parse(const char *listen, struct sockaddr *sa, int *len)
{
	char addr[256];
	size_t n = strlen(listen);

	if (n < 3 || n >= sizeof(addr) || strcmp(listen + n - 2, ":0"))
		return evutil_parse_sockaddr_port(listen, sa, len);
	memcpy(addr, listen, n - 2);
	addr[n - 2] = '\0';
	/* "::0" unbracketed is an IPv6 address, not a port */
	if (addr[n - 3] != ']' && strchr(addr, ':'))
		return -1;
	return evutil_parse_sockaddr_port(addr, sa, len);
}

struct metrics *metrics_new(struct event_base *base, const char *listen,
			    metrics_src_fn fn, void *arg)
{
	struct metrics *m;
	struct sockaddr_storage ss;
	int sslen = sizeof(ss);
	struct sockaddr *sa = (struct sockaddr *)&ss;
	int saved;

	memset(&ss, 0, sizeof(ss));
	if (metrics_parse(listen, sa, &sslen) < 0 ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)) {
		log_warnx("metrics: '%s': not ADDR:PORT or [ADDR]:PORT",
			  listen);
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->fn = fn;
	m->arg = arg;
	m->http = http_serve_new(base, sa, sslen, NULL, "metrics",
				 metrics_handle, m);
	if (!m->http) {
		saved = errno;
		log_warn("metrics: listening on %s", listen);
		free(m);
		errno = saved;
		return NULL;
	}
	log_info("metrics: serving /metrics and the ring's page (/, /ring.svg) "
		 "on %s (port %u; at most %u connections per address, %u in "
		 "all, %u ms per request)",
		 listen, http_serve_port(m->http), HTTP_SERVE_PER_SOURCE,
		 HTTP_SERVE_MAX_CONNS, HTTP_SERVE_REQUEST_MS);
	return m;
}

uint16_t metrics_port(const struct metrics *m)
{
	return http_serve_port(m->http);
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	http_serve_free(m->http);
	free(m);
}
