/* The TCP test engine's A side: connect every stream (from the chosen
 * interface), present the preamble, read B's answer. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "tcptest_int.h"

static int tcptest_connect_one(struct tcptest *t, unsigned index, double end)
{
	uint8_t b[TCPTEST_PREAMBLE_LEN];
	char ebuf[128];
	int fd, rc;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		tcptest_fail(t, -errno, "socket: %s",
			     tcptest_strerror(errno, ebuf, sizeof(ebuf)));
		return -1;
	}
	tcptest_track(t, index, fd);
	if (*t->local_if &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, t->local_if,
		       (socklen_t)strlen(t->local_if) + 1) < 0) {
		if (errno == EPERM)
			tcptest_fail(t, -EPERM,
				     "binding the test to interface %s needs "
				     "CAP_NET_RAW",
				     t->local_if);
		else
			tcptest_fail(
				t, -errno, "interface %s: %s", t->local_if,
				tcptest_strerror(errno, ebuf, sizeof(ebuf)));
		return -1;
	}
	tcptest_set_buffers(fd);
	if (t->p.kind == TCPTEST_LAT)
		tcptest_set_nodelay(fd);
	rc = connect(fd, (struct sockaddr *)&t->sa, sizeof(t->sa));
	if (rc < 0 && errno != EINPROGRESS) {
		rc = -errno;
		goto fail_connect;
	}
	while (rc < 0) {
		struct pollfd pfd = {.fd = fd, .events = POLLOUT};
		double left = end - tcptest_now();
		int soerr = 0;
		socklen_t len = sizeof(soerr);

		if (atomic_load(&t->stop))
			return -1;
		if (left <= 0) {
			rc = -ETIMEDOUT;
			goto fail_connect;
		}
		if (poll(&pfd, 1,
			 left * 1000 < TCPTEST_SLICE_MS
				 ? (int)(left * 1000) + 1
				 : TCPTEST_SLICE_MS) <= 0)
			continue;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
		if (soerr) {
			rc = -soerr;
			goto fail_connect;
		}
		rc = 0;
	}
	if ((rc = tcptest_set_blocking(fd)) < 0)
		goto fail_connect;
	tcptest_set_timeouts(fd, TCPTEST_IO_TIMEOUT_MS);
	tcptest_preamble_encode(t, index, b);
	rc = tcptest_io_full(t, fd, b, sizeof(b), 1, end);
	if (!rc)
		rc = tcptest_io_full(t, fd, b, 1, 0, end);
	if (rc == -ECANCELED)
		return -1;
	if (rc == 1) {
		tcptest_fail(t, -ECONNREFUSED,
			     "%s closed stream %u without accepting it",
			     t->name, index);
		return -1;
	}
	if (rc < 0) {
		tcptest_fail(t, rc,
			     "stream %u to %s: no answer to the test "
			     "preamble: %s",
			     index, t->name,
			     tcptest_strerror(rc, ebuf, sizeof(ebuf)));
		return -1;
	}
	if (b[0] != TCPTEST_ST_OK) {
		tcptest_fail(t, -ECONNREFUSED, "%s refused stream %u: %s",
			     t->name, index, tcptest_status_str(b[0]));
		return -1;
	}
	return 0;

fail_connect:
	tcptest_fail(t, rc, "connect to %s%s%s (stream %u): %s", t->name,
		     *t->local_if ? " via " : "", t->local_if, index,
		     tcptest_strerror(rc, ebuf, sizeof(ebuf)));
	return -1;
}

int tcptest_connect_all(struct tcptest *t)
{
	double end = t->created + t->setup_ms / 1000.0;

	for (unsigned i = 0; i < t->n_conn; i++)
		if (tcptest_connect_one(t, i, end) < 0)
			return -1;
	return 0;
}

struct tcptest *tcptest_connect(struct event_base *base, const char *peer,
				uint16_t port, const char *local_if,
				const uint8_t token[TCPTEST_TOKEN_LEN],
				const struct tcptest_params *p,
				unsigned connect_timeout_ms, tcptest_done_cb cb,
				void *arg)
{
	struct sockaddr_in sa;
	struct tcptest *t;
	int saved;

	if (tcptest_parse_addr(peer, port, &sa) < 0 || port == 0 ||
	    (local_if && strlen(local_if) >= IFNAMSIZ)) {
		errno = EINVAL;
		return NULL;
	}
	t = tcptest_new(base, 1, token, p, connect_timeout_ms, cb, arg);
	if (!t)
		return NULL;
	t->sa = sa;
	tcptest_addr_str(&sa, t->name, sizeof(t->name));
	if (local_if)
		snprintf(t->local_if, sizeof(t->local_if), "%s", local_if);
	if (tcptest_start(t) < 0) {
		saved = errno;
		tcptest_destroy(t);
		errno = saved;
		return NULL;
	}
	return t;
}
