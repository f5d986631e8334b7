/* The TCP test engine's B side: listen, accept every stream, judge each
 * preamble and its one-time token, with silent connections bounded. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "tcptest_int.h"

/* A preamble must arrive this soon after connect. Connections are judged
 * concurrently, and at most TCPTEST_MAX_PENDING wait for theirs at once
 * (the oldest makes room for a newer one): anyone on the data plane can
 * connect to a listener, and silent connections must not keep the real
 * streams out. */
#define TCPTEST_PREAMBLE_MS 2000
#define TCPTEST_MAX_PENDING 16
/* Refused connections logged one by one per test; the rest are counted. */
#define TCPTEST_LOG_REFUSED 4

/* B: a connection accepted whose preamble is not complete yet. */
struct tcptest_pending {
	int fd;
	double deadline;
	size_t have;
	uint8_t b[TCPTEST_PREAMBLE_LEN];
	char from[64];
};

/* B: judge one preamble; *index set when OK. */
static int tcptest_preamble_check(struct tcptest *t, const uint8_t *b,
				  unsigned *index)
{
	uint8_t expect[TCPTEST_PREAMBLE_LEN];
	uint8_t diff = 0;
	unsigned idx = (unsigned)b[8] << 8 | b[9];

	tcptest_preamble_encode(t, 0, expect);
	if (memcmp(b, expect, 5))
		return TCPTEST_ST_BAD_HEADER;
	/* constant time: the token is a secret */
	for (unsigned i = 16; i < TCPTEST_PREAMBLE_LEN; i++)
		diff |= b[i] ^ expect[i];
	if (diff)
		return TCPTEST_ST_BAD_TOKEN;
	if (memcmp(b + 5, expect + 5, 3) || memcmp(b + 10, expect + 10, 6))
		return TCPTEST_ST_MISMATCH;
	if (idx >= t->n_conn || t->fds[idx] >= 0)
		return TCPTEST_ST_DUPLICATE;
	*index = idx;
	return TCPTEST_ST_OK;
}

/* Count a refused connection; log the first few of a test. */
static void tcptest_note_refused(struct tcptest *t, const char *from,
				 const char *why)
{
	if (atomic_load(&t->stop))
		return;
	t->refused++;
	if (t->refused <= TCPTEST_LOG_REFUSED)
		log_warnx("tcptest on %s: refused a connection from %s: %s%s",
			  t->name, from, why,
			  t->refused == TCPTEST_LOG_REFUSED
				  ? " (further ones are counted, not logged)"
				  : "");
}

/* B: one connection that has sent its whole preamble. 1 when it became a
 * stream, 0 when refused (closed). */
static int tcptest_judge(struct tcptest *t, int fd, const uint8_t *b,
			 const char *from)
{
	unsigned index = 0;
	uint8_t st;

	st = (uint8_t)tcptest_preamble_check(t, b, &index);
	if (st != TCPTEST_ST_OK) {
		tcptest_note_refused(t, from, tcptest_status_str(st));
		send(fd, &st, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return 0;
	}
	if (send(fd, &st, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1 ||
	    tcptest_set_blocking(fd) < 0) {
		log_warnx("tcptest on %s: connection from %s went away",
			  t->name, from);
		close(fd);
		return 0;
	}
	tcptest_set_timeouts(fd, TCPTEST_IO_TIMEOUT_MS);
	if (t->p.kind == TCPTEST_LAT)
		tcptest_set_nodelay(fd);
	tcptest_track(t, index, fd);
	if (!*t->from)
		snprintf(t->from, sizeof(t->from), "%s", from);
	log_debug("tcptest", "on %s: stream %u from %s", t->name, index, from);
	return 1;
}

/* Read what a pending connection has sent. 1 when its preamble is
 * complete, 0 when more is to come, -1 when it closed or failed. */
static int tcptest_pending_read(struct tcptest_pending *pc)
{
	while (pc->have < TCPTEST_PREAMBLE_LEN) {
		ssize_t n = recv(pc->fd, pc->b + pc->have,
				 TCPTEST_PREAMBLE_LEN - pc->have, MSG_DONTWAIT);

		if (n > 0) {
			pc->have += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return -1;
	}
	return 1;
}

static void tcptest_pending_drop(struct tcptest *t, struct tcptest_pending *pc,
				 unsigned *np, unsigned i, const char *why)
{
	tcptest_note_refused(t, pc[i].from, why);
	close(pc[i].fd);
	pc[i] = pc[--*np];
}

/* B: take every queued connection off the listener. Those whose preamble
 * is already there are judged at once; the others wait in pc, each with
 * its own deadline. When pc is full the oldest makes room: a peer that
 * opens connections and sends nothing can hold at most
 * TCPTEST_MAX_PENDING of them, for TCPTEST_PREAMBLE_MS each, and never
 * blocks the streams behind it. Returns streams gained, or -1. */
static int tcptest_accept_new(struct tcptest *t, struct tcptest_pending *pc,
			      unsigned *np, double end)
{
	int gained = 0;

	for (unsigned k = 0; k < TCPTEST_MAX_PENDING * 2; k++) {
		struct sockaddr_in sa;
		socklen_t salen = sizeof(sa);
		struct tcptest_pending *c;
		double pend = tcptest_now() + TCPTEST_PREAMBLE_MS / 1000.0;
		char ebuf[128];
		int fd, rc;

		fd = accept4(t->lfd, (struct sockaddr *)&sa, &salen,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR || errno == ECONNABORTED)
				break;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				break; /* pending ones expire and free some */
			tcptest_fail(
				t, -errno, "accept on %s: %s", t->name,
				tcptest_strerror(errno, ebuf, sizeof(ebuf)));
			return -1;
		}
		if (*np == TCPTEST_MAX_PENDING) {
			unsigned old = 0;

			for (unsigned i = 1; i < *np; i++)
				if (pc[i].deadline < pc[old].deadline)
					old = i;
			tcptest_pending_drop(t, pc, np, old,
					     "no preamble yet, and newer "
					     "connections are waiting");
		}
		c = &pc[(*np)++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->deadline = pend < end ? pend : end;
		tcptest_addr_str(&sa, c->from, sizeof(c->from));
		rc = tcptest_pending_read(c);
		if (rc < 0) {
			tcptest_pending_drop(t, pc, np, *np - 1,
					     "closed before its preamble");
		} else if (rc > 0) {
			struct tcptest_pending done = *c;

			(*np)--;
			gained += tcptest_judge(t, done.fd, done.b, done.from);
		}
	}
	return gained;
}

int tcptest_accept_all(struct tcptest *t)
{
	double end = t->created + t->setup_ms / 1000.0;
	struct tcptest_pending pc[TCPTEST_MAX_PENDING];
	struct pollfd pfd[1 + TCPTEST_MAX_PENDING];
	unsigned have = 0, np = 0;
	int rc = 0;

	while (have < t->n_conn) {
		double now = tcptest_now(), wake = end;
		int ms;

		if (atomic_load(&t->stop)) {
			rc = -1;
			break;
		}
		if (now >= end) {
			tcptest_fail(t, -ETIMEDOUT,
				     "test listener on %s: %u of %u streams "
				     "arrived within %u ms, %u connection%s "
				     "refused",
				     t->name, have, t->n_conn, t->setup_ms,
				     t->refused, t->refused == 1 ? "" : "s");
			rc = -1;
			break;
		}
		for (unsigned i = 0; i < np;) {
			if (pc[i].deadline <= now) {
				tcptest_pending_drop(t, pc, &np, i,
						     "no complete preamble in "
						     "time");
				continue;
			}
			if (pc[i].deadline < wake)
				wake = pc[i].deadline;
			i++;
		}
		pfd[0].fd = t->lfd;
		pfd[0].events = POLLIN;
		for (unsigned i = 0; i < np; i++) {
			pfd[1 + i].fd = pc[i].fd;
			pfd[1 + i].events = POLLIN;
		}
		ms = (int)((wake - now) * 1000) + 1;
		if (ms > TCPTEST_SLICE_MS)
			ms = TCPTEST_SLICE_MS;
		if (poll(pfd, 1 + np, ms) <= 0)
			continue;
		/* Pending ones first, by index from the end: judging or
		 * dropping one moves the last into its place. */
		for (unsigned i = np; i-- > 0;) {
			int r;

			if (!pfd[1 + i].revents)
				continue;
			r = tcptest_pending_read(&pc[i]);
			if (r < 0) {
				tcptest_pending_drop(t, pc, &np, i,
						     "closed before its "
						     "preamble");
			} else if (r > 0) {
				struct tcptest_pending done = pc[i];

				pc[i] = pc[--np];
				have += (unsigned)tcptest_judge(
					t, done.fd, done.b, done.from);
			}
		}
		if (pfd[0].revents) {
			int g = tcptest_accept_new(t, pc, &np, end);

			if (g < 0) {
				rc = -1;
				break;
			}
			have += (unsigned)g;
		}
	}
	for (unsigned i = 0; i < np; i++)
		close(pc[i].fd);
	if (t->refused > TCPTEST_LOG_REFUSED)
		log_warnx("tcptest on %s: %u connections refused in all",
			  t->name, t->refused);
	if (rc < 0)
		return -1;
	/* One-time token: nobody else gets in once the test is complete. */
	pthread_mutex_lock(&t->mu);
	close(t->lfd);
	t->lfd = -1;
	pthread_mutex_unlock(&t->mu);
	return 0;
}

struct tcptest *tcptest_listen(struct event_base *base, const char *bind_addr,
			       const uint8_t token[TCPTEST_TOKEN_LEN],
			       const struct tcptest_params *p,
			       unsigned accept_timeout_ms, tcptest_done_cb cb,
			       void *arg, uint16_t *port)
{
	struct sockaddr_in sa;
	socklen_t salen = sizeof(sa);
	struct tcptest *t;
	int one = 1, fd, saved;

	if (tcptest_parse_addr(bind_addr, port ? *port : 0, &sa) < 0)
		return NULL;
	t = tcptest_new(base, 0, token, p, accept_timeout_ms, cb, arg);
	if (!t)
		return NULL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto fail;
	t->lfd = fd;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* accepted sockets inherit the buffers, sized before the handshake */
	tcptest_set_buffers(fd);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, TCPTEST_MAX_STREAMS * 2) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &salen) < 0)
		goto fail;
	t->sa = sa;
	tcptest_addr_str(&sa, t->name, sizeof(t->name));
	if (tcptest_start(t) < 0)
		goto fail;
	if (port)
		*port = ntohs(sa.sin_port);
	log_debug("tcptest", "listening on %s for %u streams", t->name,
		  t->n_conn);
	return t;

fail:
	saved = errno;
	if (t->lfd >= 0)
		close(t->lfd);
	tcptest_destroy(t);
	errno = saved;
	return NULL;
}
