/* A small HTTP/1.x server for read-only pages, bounded against anyone who
 * can connect (what it promises: http_serve.h). libevent's evhttp was
 * replaced by it: its timeout is an idle timer renewed by every byte, and
 * it keeps reading pipelined requests into memory while a reply waits. */
#include "http_serve.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "clock.h"
#include "log.h"

#define HS_BACKLOG 64
/* What a closing connection may still send before it is dropped. */
#define HS_LINGER_MAX (64u << 10)
/* Refusals are logged at most this often: a flood must not flood the log. */
#define HS_REFUSE_LOG_MS 10000
/* Accepting pauses this long when out of descriptors (else the listener
 * would spin on a socket it cannot take). */
#define HS_ACCEPT_PAUSE_MS 1000
#define HS_MAX_METHOD 32

/* ---- Parsing ---- */

static int hs_tchar(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* A token of at least one tchar, up to max bytes. */
static int hs_token(const char *s, size_t max)
{
	size_t n = 0;

	for (; *s; s++, n++)
		if (!hs_tchar((unsigned char)*s) || n >= max)
			return 0;
	return n > 0;
}

/* Field values: visible characters, spaces, tabs and obs-text. */
static int hs_value_ok(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 0;
	}
	return 1;
}

static char *hs_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* Content-Length: digits only; a value past what any limit allows
 * saturates (refused as too large, not as malformed). */
static int hs_length(const char *v, size_t *out)
{
	size_t n = 0;

	if (!*v)
		return -1;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -1;
		n = n > SIZE_MAX / 100 ? SIZE_MAX / 10
				       : n * 10 + (size_t)(*v - '0');
	}
	*out = n;
	return 0;
}

/* The comma-separated options of a Connection field. */
static void hs_connection(char *v, int *close, int *keep_alive)
{
	char *save = NULL;

	for (char *t = strtok_r(v, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		t = hs_trim(t);
		if (!strcasecmp(t, "close"))
			*close = 1;
		else if (!strcasecmp(t, "keep-alive"))
			*keep_alive = 1;
	}
}

/* The request line "METHOD SP TARGET SP HTTP/1.x". */
static int hs_request_line(char *line, struct http_head *h)
{
	char *target, *version, *q;

	target = strchr(line, ' ');
	if (!target)
		return -400;
	*target++ = '\0';
	version = strchr(target, ' ');
	if (!version)
		return -400; /* HTTP/0.9 or a space in the target */
	*version++ = '\0';
	if (!hs_token(line, HS_MAX_METHOD) || !*target)
		return -400;
	for (q = target; *q; q++)
		if ((unsigned char)*q <= 0x20 || *q == 0x7f)
			return -400;
	if (strlen(version) != 8 || strncmp(version, "HTTP/", 5) ||
	    version[5] < '0' || version[5] > '9' || version[6] != '.' ||
	    version[7] < '0' || version[7] > '9')
		return -400;
	if (version[5] != '1')
		return -505;
	h->method = line;
	h->minor = version[7] - '0';
	/* Absolute-form: a server must accept it; the path is what counts. */
	if (!strncasecmp(target, "http://", 7) ||
	    !strncasecmp(target, "https://", 8)) {
		target = strstr(target, "://") + 3;
		target += strcspn(target, "/?");
		if (*target != '/') {
			h->path = "/";
			h->query = *target == '?' ? target + 1 : NULL;
			return 0;
		}
	}
	/* Else origin-form, or "*" (OPTIONS); not a proxy: no authority-form */
	if (*target != '/' && strcmp(target, "*"))
		return -400;
	q = strchr(target, '?');
	if (q)
		*q++ = '\0';
	h->path = target;
	h->query = q;
	return 0;
}

int http_parse_head(char *buf, size_t len, size_t max, struct http_head *h)
{
	size_t start = 0, ls, end = 0, lines = 0;
	int hosts = 0, close = 0, keep_alive = 0, have_length = 0;
	char *line, *next, *colon, *v, *nl;
	int rc;

	memset(h, 0, sizeof(*h));
	if (len > max)
		len = max;
	/* Empty lines before a request are to be ignored (RFC 9112 2.2). */
	while (start < len && (buf[start] == '\r' || buf[start] == '\n'))
		start++;
	ls = start;
	for (size_t i = start; i < len; i++) {
		size_t le = i;

		if (buf[i] != '\n')
			continue;
		if (le > ls && buf[le - 1] == '\r')
			le--;
		if (le == ls) {
			end = i + 1;
			break;
		}
		lines++;
		ls = i + 1;
	}
	if (!end) {
		if (len < max)
			return 0;
		return lines ? -431 : -414;
	}
	if (lines > HTTP_SERVE_MAX_FIELDS + 1)
		return -431;
	/* Each line NUL-terminated in place; a CR or NUL inside is refused
	 * (a bare CR must not be taken for a line end by one party and not
	 * by another). */
	for (line = buf + start; line < buf + end; line = next) {
		nl = memchr(line, '\n', (size_t)(buf + end - line));
		next = nl + 1;
		if (nl > line && nl[-1] == '\r')
			nl--;
		*nl = '\0';
		if (memchr(line, '\r', (size_t)(nl - line)) ||
		    strlen(line) != (size_t)(nl - line))
			return -400;
		if (line == buf + start) {
			rc = hs_request_line(line, h);
			if (rc < 0)
				return rc;
			continue;
		}
		if (!*line)
			break;
		colon = strchr(line, ':');
		/* No obsolete line folding, no space before the colon. */
		if (!colon)
			return -400;
		*colon = '\0';
		v = hs_trim(colon + 1);
		if (!hs_token(line, max) || !hs_value_ok(v))
			return -400;
		if (!strcasecmp(line, "host")) {
			hosts++;
		} else if (!strcasecmp(line, "content-length")) {
			size_t n;

			if (hs_length(v, &n) < 0 ||
			    (have_length && n != h->content_length))
				return -400;
			h->content_length = n;
			have_length = 1;
		} else if (!strcasecmp(line, "transfer-encoding")) {
			h->chunked = 1;
		} else if (!strcasecmp(line, "connection")) {
			hs_connection(v, &close, &keep_alive);
		}
	}
	if (hosts > 1 || (h->minor >= 1 && hosts != 1))
		return -400;
	h->keep = h->minor >= 1 ? !close : keep_alive && !close;
	return (int)end;
}

/* ---- Replies ---- */

static const char *hs_reason(int code)
{
	switch (code) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 411:
		return "Length Required";
	case 413:
		return "Content Too Large";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Unknown";
	}
}

/* IMF-fixdate, in English whatever the locale. */
static void hs_date(char *out, size_t len)
{
	static const char *const days[] = {"Sun", "Mon", "Tue", "Wed",
					   "Thu", "Fri", "Sat"};
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr",
					     "May", "Jun", "Jul", "Aug",
					     "Sep", "Oct", "Nov", "Dec"};
	time_t t = (time_t)(clock_now_ms() / 1000);
	struct tm tm;

	if (!gmtime_r(&t, &tm)) {
		snprintf(out, len, "Thu, 01 Jan 1970 00:00:00 GMT");
		return;
	}
	snprintf(out, len, "%s, %02d %s %04d %02d:%02d:%02d GMT",
		 days[tm.tm_wday % 7], tm.tm_mday, months[tm.tm_mon % 12],
		 tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

int http_reply_header(struct http_reply *r, const char *name, const char *value)
{
	return evbuffer_add_printf(r->headers, "%s: %s\r\n", name, value) < 0
		       ? -1
		       : 0;
}

/* The whole reply as bytes onto out. */
static int hs_format(struct evbuffer *out, struct http_reply *rep, int head,
		     int keep, int minor)
{
	char date[40];

	hs_date(date, sizeof(date));
	if (evbuffer_add_printf(
		    out, "HTTP/1.1 %d %s\r\nDate: %s\r\n", rep->code,
		    rep->reason ? rep->reason : hs_reason(rep->code),
		    date) < 0 ||
	    evbuffer_add_buffer(out, rep->headers) < 0 ||
	    evbuffer_add_printf(out, "Content-Length: %zu\r\n%s\r\n",
				evbuffer_get_length(rep->body),
				!keep	    ? "Connection: close\r\n"
				: minor < 1 ? "Connection: keep-alive\r\n"
					    : "") < 0)
		return -1;
	if (!head && evbuffer_add_buffer(out, rep->body) < 0)
		return -1;
	return 0;
}

/* ---- Connections ---- */

/* Where connections come from, for the caps: an IPv4 address (mapped ones
 * too) or an IPv6 /64, which one host commonly holds whole. */
struct hs_source {
	uint8_t len;
	uint8_t a[8];
};

enum hs_state {
	HS_READ,   /* a request may arrive (deadline: request_ms) */
	HS_WRITE,  /* a reply is written, nothing read (reply_ms) */
	HS_LINGER, /* write side shut, input dropped (HTTP_SERVE_LINGER_MS) */
};

struct hs_conn {
	struct http_serve *s;
	struct bufferevent *bev;
	struct event *timer;
	struct hs_source src;
	char peer[INET6_ADDRSTRLEN + 8];
	enum hs_state st;
	int keep;		   /* keep the connection after this reply */
	size_t lingered;	   /* bytes dropped while closing */
	TAILQ_ENTRY(hs_conn) link; /* oldest first */
};

struct http_serve {
	struct event_base *base;
	struct evconnlistener *lev;
	struct event *resume; /* accepting again after EMFILE */
	struct http_serve_limits lim;
	char sub[32];
	http_handler_fn fn;
	void *arg;
	uint16_t port;
	char *scratch; /* max_head + max_body + 1: one head parsed at a time */
	TAILQ_HEAD(, hs_conn) conns;
	struct http_serve_stats stats;
	uint64_t refuse_logged_ms;
	unsigned refuse_quiet;
};

static void hs_source_of(const struct sockaddr *sa, struct hs_source *src)
{
	memset(src, 0, sizeof(*src));
	if (sa->sa_family == AF_INET) {
		src->len = 4;
		memcpy(src->a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
			&((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			src->len = 4;
			memcpy(src->a, a->s6_addr + 12, 4);
		} else {
			src->len = 8;
			memcpy(src->a, a->s6_addr, 8);
		}
	}
}

static int hs_same(const struct hs_source *x, const struct hs_source *y)
{
	return x->len == y->len && !memcmp(x->a, y->a, x->len);
}

static void hs_peer(const struct sockaddr *sa, char *out, size_t len)
{
	const void *a =
		sa->sa_family == AF_INET6
			? (const void *)&((const struct sockaddr_in6 *)sa)
				  ->sin6_addr
			: (const void *)&((const struct sockaddr_in *)sa)
				  ->sin_addr;

	if (!evutil_inet_ntop(sa->sa_family, a, out, len))
		snprintf(out, len, "?");
}

static void hs_free(struct hs_conn *c)
{
	struct http_serve *s = c->s;

	TAILQ_REMOVE(&s->conns, c, link);
	s->stats.conns--;
	if (c->timer)
		event_free(c->timer);
	/* Its callbacks go with it, even when it is freed from one. */
	bufferevent_free(c->bev);
	free(c);
}

static void hs_arm(struct hs_conn *c, unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000,
			     .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	evtimer_add(c->timer, &tv);
}

/* A reply is queued: nothing more is read until it is written. */
static void hs_send(struct hs_conn *c, struct http_reply *rep, int head,
		    int keep, int minor)
{
	struct http_serve *s = c->s;

	if (hs_format(bufferevent_get_output(c->bev), rep, head, keep, minor) <
	    0) {
		log_warnx("%s: out of memory replying to %s", s->sub, c->peer);
		hs_free(c);
		return;
	}
	bufferevent_disable(c->bev, EV_READ);
	c->st = HS_WRITE;
	c->keep = keep;
	hs_arm(c, s->lim.reply_ms);
}

static void hs_error(struct hs_conn *c, int code)
{
	struct http_serve *s = c->s;
	struct http_reply rep = {.code = code};
	int rc = -1;

	log_debug(s->sub, "%s: refusing a request: %d %s", c->peer, code,
		  hs_reason(code));
	rep.headers = evbuffer_new();
	rep.body = evbuffer_new();
	if (rep.headers && rep.body &&
	    http_reply_header(&rep, "Content-Type",
			      "text/plain; charset=utf-8") == 0) {
		switch (code) {
		case 408:
			rc = evbuffer_add_printf(
				rep.body,
				"request timeout: a request must arrive whole "
				"within %u ms\n",
				s->lim.request_ms);
			break;
		case 411:
			rc = evbuffer_add_printf(rep.body,
						 "a request body needs a "
						 "Content-Length\n");
			break;
		case 413:
			rc = evbuffer_add_printf(rep.body,
						 "request body too large: at "
						 "most %zu bytes\n",
						 s->lim.max_body);
			break;
		case 414:
		case 431:
			rc = evbuffer_add_printf(
				rep.body,
				"request line and headers too large: at most "
				"%zu bytes, %u header lines\n",
				s->lim.max_head, HTTP_SERVE_MAX_FIELDS);
			break;
		case 505:
			rc = evbuffer_add_printf(rep.body,
						 "HTTP/1.0 or HTTP/1.1 only\n");
			break;
		default:
			rc = evbuffer_add_printf(rep.body, "bad request\n");
			break;
		}
	}
	if (rc < 0) {
		if (rep.headers)
			evbuffer_free(rep.headers);
		if (rep.body)
			evbuffer_free(rep.body);
		hs_free(c);
		return;
	}
	hs_send(c, &rep, 0, 0, 1);
	evbuffer_free(rep.headers);
	evbuffer_free(rep.body);
}

static void hs_dispatch(struct hs_conn *c, const struct http_head *h)
{
	struct http_serve *s = c->s;
	struct http_request req = {
		.method = h->method, .path = h->path, .query = h->query};
	struct http_reply rep = {.code = 200};

	req.head = !strcmp(h->method, "HEAD");
	req.get = req.head || !strcmp(h->method, "GET");
	rep.headers = evbuffer_new();
	rep.body = evbuffer_new();
	if (!rep.headers || !rep.body) {
		log_warnx("%s: out of memory serving %s", s->sub, c->peer);
		if (rep.headers)
			evbuffer_free(rep.headers);
		if (rep.body)
			evbuffer_free(rep.body);
		hs_free(c);
		return;
	}
	s->stats.requests++;
	s->fn(&req, &rep, s->arg);
	hs_send(c, &rep, req.head, h->keep, h->minor);
	evbuffer_free(rep.headers);
	evbuffer_free(rep.body);
}

/* The connection is done: shut the write side, drop what still comes. */
static void hs_linger(struct hs_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	c->st = HS_LINGER;
	c->lingered = evbuffer_get_length(in);
	evbuffer_drain(in, c->lingered);
	if (shutdown(bufferevent_getfd(c->bev), SHUT_WR) < 0) {
		hs_free(c);
		return;
	}
	bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
	bufferevent_enable(c->bev, EV_READ);
	hs_arm(c, HTTP_SERVE_LINGER_MS);
}

static void hs_read(struct bufferevent *bev, void *arg)
{
	struct hs_conn *c = arg;
	struct http_serve *s = c->s;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len = evbuffer_get_length(in), n;
	size_t cap = s->lim.max_head + s->lim.max_body;
	struct http_head h;
	int r;

	if (c->st == HS_LINGER) {
		c->lingered += len;
		evbuffer_drain(in, len);
		if (c->lingered > HS_LINGER_MAX)
			hs_free(c);
		return;
	}
	if (c->st != HS_READ || !len)
		return;
	n = len < cap ? len : cap;
	if (evbuffer_copyout(in, s->scratch, n) != (ev_ssize_t)n) {
		hs_free(c);
		return;
	}
	s->scratch[n] = '\0';
	r = http_parse_head(s->scratch, n, s->lim.max_head, &h);
	if (r == 0)
		return;
	if (r < 0) {
		hs_error(c, -r);
		return;
	}
	if (h.chunked) {
		hs_error(c, 411);
		return;
	}
	if (h.content_length > s->lim.max_body) {
		hs_error(c, 413);
		return;
	}
	if (n < (size_t)r + h.content_length)
		return; /* the body is still to come */
	evbuffer_drain(in, (size_t)r + h.content_length);
	hs_dispatch(c, &h);
}

static void hs_write(struct bufferevent *bev, void *arg)
{
	struct hs_conn *c = arg;

	if (c->st != HS_WRITE ||
	    evbuffer_get_length(bufferevent_get_output(bev)))
		return;
	if (!c->keep) {
		hs_linger(c);
		return;
	}
	/* The next request's deadline starts now; one already here (sent
	 * pipelined) is read from the loop, not from inside this write. */
	c->st = HS_READ;
	hs_arm(c, c->s->lim.request_ms);
	bufferevent_enable(bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_input(bev)))
		bufferevent_trigger(bev, EV_READ,
				    BEV_TRIG_IGNORE_WATERMARKS |
					    BEV_TRIG_DEFER_CALLBACKS);
}

static void hs_event(struct bufferevent *bev, short what, void *arg)
{
	struct hs_conn *c = arg;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		hs_free(c);
}

static void hs_timer(evutil_socket_t fd, short what, void *arg)
{
	struct hs_conn *c = arg;
	struct http_serve *s = c->s;

	(void)fd;
	(void)what;
	if (c->st == HS_READ &&
	    evbuffer_get_length(bufferevent_get_input(c->bev))) {
		/* A request started and not whole in time: say so, close. */
		s->stats.timed_out++;
		log_debug(s->sub, "%s: no whole request within %u ms; closing",
			  c->peer, s->lim.request_ms);
		hs_error(c, 408);
		return;
	}
	if (c->st == HS_WRITE) {
		s->stats.timed_out++;
		log_debug(s->sub, "%s: reply not read within %u ms; closing",
			  c->peer, s->lim.reply_ms);
	}
	hs_free(c);
}

/* A connection that may be closed for a newcomer at no loss: closing, or
 * kept alive between requests (clients retry on those). */
static int hs_idle(const struct hs_conn *c)
{
	return c->st == HS_LINGER ||
	       (c->st == HS_READ &&
		!evbuffer_get_length(bufferevent_get_input(c->bev)));
}

static unsigned hs_count(const struct http_serve *s,
			 const struct hs_source *src)
{
	const struct hs_conn *c;
	unsigned n = 0;

	TAILQ_FOREACH(c, &s->conns, link)
	n += hs_same(&c->src, src);
	return n;
}

/* The oldest connection (idle ones first) of src, or of any source when
 * src is NULL and only idle ones are wanted. */
static struct hs_conn *hs_oldest(const struct http_serve *s,
				 const struct hs_source *src, int idle_only)
{
	struct hs_conn *c, *any = NULL;

	TAILQ_FOREACH(c, &s->conns, link)
	{
		if (src && !hs_same(&c->src, src))
			continue;
		if (hs_idle(c))
			return c;
		if (!any)
			any = c;
	}
	return idle_only ? NULL : any;
}

/* Who makes room for a newcomer from src, NULL when nobody should (the
 * newcomer is refused); *why says why in that case. */
static struct hs_conn *hs_victim(struct http_serve *s,
				 const struct hs_source *src, const char **why)
{
	unsigned mine = hs_count(s, src), most = 0;
	struct hs_conn *c, *busiest = NULL;

	if (mine >= s->lim.per_source) {
		*why = "too many connections from this address";
		return hs_oldest(s, src, 1);
	}
	if (s->stats.conns < s->lim.max_conns)
		return NULL;
	*why = "too many connections";
	TAILQ_FOREACH(c, &s->conns, link)
	{
		unsigned n = hs_count(s, &c->src);

		if (n > most) {
			most = n;
			busiest = c;
		}
	}
	if (busiest && most >= mine + 2)
		return hs_oldest(s, &busiest->src, 0);
	return hs_oldest(s, NULL, 1);
}

/* Tell the client why in a 503, and close; one log line per
 * HS_REFUSE_LOG_MS at most. */
static void hs_refuse(struct http_serve *s, evutil_socket_t fd,
		      const char *peer, const char *why)
{
	char body[160], buf[512], date[40], junk[256];
	uint64_t now = clock_now_ms();
	int n;

	s->stats.refused++;
	hs_date(date, sizeof(date));
	snprintf(body, sizeof(body), "%s (at most %u per address, %u in all)\n",
		 why, s->lim.per_source, s->lim.max_conns);
	n = snprintf(buf, sizeof(buf),
		     "HTTP/1.1 503 Service Unavailable\r\nDate: %s\r\n"
		     "Content-Type: text/plain; charset=utf-8\r\n"
		     "Retry-After: %u\r\nConnection: close\r\n"
		     "Content-Length: %zu\r\n\r\n%s",
		     date, (s->lim.request_ms + 999) / 1000, strlen(body),
		     body);
	/* A few hundred bytes fit any socket buffer; never wait. */
	if (n > 0 && (size_t)n < sizeof(buf))
		(void)send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	/* Closing with unread input would reset the connection before the
	 * client reads why. */
	for (int i = 0; i < 16; i++)
		if (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0)
			break;
	evutil_closesocket(fd);
	if (now - s->refuse_logged_ms < HS_REFUSE_LOG_MS) {
		s->refuse_quiet++;
		return;
	}
	log_warnx("%s: refusing a connection from %s: %s (at most %u per "
		  "address, %u in all; %u refusals since the last such line)",
		  s->sub, peer, why, s->lim.per_source, s->lim.max_conns,
		  s->refuse_quiet);
	s->refuse_logged_ms = now;
	s->refuse_quiet = 0;
}

static void hs_accept(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	struct http_serve *s = arg;
	struct hs_source src;
	struct hs_conn *c, *victim;
	const char *why = NULL;
	char peer[INET6_ADDRSTRLEN + 8];
	int one = 1;

	(void)l;
	(void)salen;
	hs_source_of(sa, &src);
	hs_peer(sa, peer, sizeof(peer));
	victim = hs_victim(s, &src, &why);
	if (why && !victim) {
		hs_refuse(s, fd, peer, why);
		return;
	}
	if (victim) {
		log_debug(s->sub, "%s: closed to make room for %s (%s)",
			  victim->peer, peer, why);
		s->stats.displaced++;
		hs_free(victim);
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto fail_fd;
	c->s = s;
	c->src = src;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->timer = evtimer_new(s->base, hs_timer, c);
	if (!c->timer)
		goto fail_c;
	/* Replies go out whole: no reason to hold their last segment. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev)
		goto fail_c;
	bufferevent_setcb(c->bev, hs_read, hs_write, hs_event, c);
	/* Input is bounded by what one request may hold. */
	bufferevent_setwatermark(c->bev, EV_READ, 0,
				 s->lim.max_head + s->lim.max_body);
	if (bufferevent_enable(c->bev, EV_READ) < 0) {
		bufferevent_free(c->bev);
		fd = -1;
		goto fail_c;
	}
	TAILQ_INSERT_TAIL(&s->conns, c, link);
	s->stats.conns++;
	s->stats.accepted++;
	hs_arm(c, s->lim.request_ms);
	log_debug(s->sub, "%s: connected (%u open)", peer, s->stats.conns);
	return;
fail_c:
	if (c->timer)
		event_free(c->timer);
	free(c);
fail_fd:
	if (fd >= 0)
		evutil_closesocket(fd);
	log_warnx("%s: out of memory accepting %s", s->sub, peer);
}

static void hs_resume(evutil_socket_t fd, short what, void *arg)
{
	struct http_serve *s = arg;

	(void)fd;
	(void)what;
	if (evconnlistener_enable(s->lev) < 0)
		log_warn("%s: resuming accepts", s->sub);
}

static void hs_accept_error(struct evconnlistener *l, void *arg)
{
	struct http_serve *s = arg;
	int err = EVUTIL_SOCKET_ERROR();
	struct timeval tv = {.tv_sec = HS_ACCEPT_PAUSE_MS / 1000,
			     .tv_usec = (HS_ACCEPT_PAUSE_MS % 1000) * 1000};

	log_warnx("%s: accept: %s", s->sub, evutil_socket_error_to_string(err));
	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		evconnlistener_disable(l);
		evtimer_add(s->resume, &tv);
	}
}

struct http_serve *http_serve_new(struct event_base *base,
				  const struct sockaddr *sa, int salen,
				  const struct http_serve_limits *lim,
				  const char *subsystem, http_handler_fn fn,
				  void *arg)
{
	static const struct http_serve_limits defaults = {
		.max_conns = HTTP_SERVE_MAX_CONNS,
		.per_source = HTTP_SERVE_PER_SOURCE,
		.request_ms = HTTP_SERVE_REQUEST_MS,
		.reply_ms = HTTP_SERVE_REPLY_MS,
		.max_head = HTTP_SERVE_MAX_HEAD,
		.max_body = HTTP_SERVE_MAX_BODY,
	};
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct http_serve *s;
	int saved;

	lim = lim ? lim : &defaults;
	if (!lim->max_conns || !lim->per_source || !lim->max_head ||
	    lim->max_head > (1u << 20) || lim->max_body > (1u << 20)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->base = base;
	s->lim = *lim;
	s->fn = fn;
	s->arg = arg;
	snprintf(s->sub, sizeof(s->sub), "%s", subsystem);
	TAILQ_INIT(&s->conns);
	s->scratch = malloc(lim->max_head + lim->max_body + 1);
	s->resume = evtimer_new(base, hs_resume, s);
	if (!s->scratch || !s->resume) {
		errno = ENOMEM;
		goto fail;
	}
	s->lev = evconnlistener_new_bind(base, hs_accept, s,
					 LEV_OPT_CLOSE_ON_FREE |
						 LEV_OPT_CLOSE_ON_EXEC |
						 LEV_OPT_REUSEABLE,
					 HS_BACKLOG, sa, salen);
	if (!s->lev)
		goto fail;
	evconnlistener_set_error_cb(s->lev, hs_accept_error);
	if (getsockname(evconnlistener_get_fd(s->lev), (struct sockaddr *)&ss,
			&len) < 0)
		goto fail;
	s->port = ntohs(ss.ss_family == AF_INET6
				? ((struct sockaddr_in6 *)&ss)->sin6_port
				: ((struct sockaddr_in *)&ss)->sin_port);
	return s;
fail:
	saved = errno;
	http_serve_free(s);
	errno = saved;
	return NULL;
}

uint16_t http_serve_port(const struct http_serve *s)
{
	return s->port;
}

void http_serve_stats(const struct http_serve *s, struct http_serve_stats *st)
{
	*st = s->stats;
}

void http_serve_free(struct http_serve *s)
{
	struct hs_conn *c;

	if (!s)
		return;
	while ((c = TAILQ_FIRST(&s->conns)))
		hs_free(c);
	if (s->lev)
		evconnlistener_free(s->lev);
	if (s->resume)
		event_free(s->resume);
	free(s->scratch);
	free(s);
}
