/* The TCP test engine's sockets: options, the descriptors tcptest_free
 * can shut down, whole-buffer I/O with the stop flag and deadline watched,
 * and the preamble both sides share. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcptest_int.h"

#define TCPTEST_SOCKBUF (4 << 20)

void tcptest_set_timeouts(int fd, unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000,
			     .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int tcptest_sysctl_at_least(const char *path, long want)
{
	FILE *f = fopen(path, "re");
	long v = 0;
	int ok;

	if (!f)
		return 0;
	ok = fscanf(f, "%ld", &v) == 1 && v >= want;
	fclose(f);
	return ok;
}

/* Large fixed buffers, but only where the kernel grants them: setting
 * SO_RCVBUF switches autotuning off, and the default rmem_max (208 KiB)
 * would then cap the window far below what autotuning reaches. */
void tcptest_set_buffers(int fd)
{
	int sz = TCPTEST_SOCKBUF;
	/* Keep little unsent data queued: after the window the sender waits
	 * for its queue to drain, which on a slow link took seconds with a
	 * full 8 MiB buffer per stream (make bench saw 2 s per 8-stream test
	 * at 200 Mbit/s). In-flight data is still bounded by cwnd only. */
	int lowat = 256 * 1024;

	if (tcptest_sysctl_at_least("/proc/sys/net/core/wmem_max", sz))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (tcptest_sysctl_at_least("/proc/sys/net/core/rmem_max", sz))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat));
}

void tcptest_set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int tcptest_set_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* Remember a descriptor so tcptest_free can shut it down. A test stopped
 * meanwhile gets it shut down at once. */
void tcptest_track(struct tcptest *t, unsigned slot, int fd)
{
	pthread_mutex_lock(&t->mu);
	t->fds[slot] = fd;
	if (atomic_load(&t->stop) && fd >= 0)
		shutdown(fd, SHUT_RDWR);
	pthread_mutex_unlock(&t->mu);
}

void tcptest_close_all(struct tcptest *t)
{
	pthread_mutex_lock(&t->mu);
	for (unsigned i = 0; i < TCPTEST_MAX_STREAMS; i++) {
		if (t->fds[i] >= 0)
			close(t->fds[i]);
		t->fds[i] = -1;
	}
	if (t->lfd >= 0)
		close(t->lfd);
	t->lfd = -1;
	pthread_mutex_unlock(&t->mu);
}

/* Send or receive exactly len bytes. 0 done, 1 the peer closed (EOF, reset
 * or broken pipe), else -errno (-ETIMEDOUT past deadline, -ECANCELED when
 * the test is halted). */
int tcptest_io_full(struct tcptest *t, int fd, void *buf, size_t len, int wr,
		    double deadline)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = wr ? send(fd, (char *)buf + done, len - done,
				      MSG_NOSIGNAL)
			       : recv(fd, (char *)buf + done, len - done, 0);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0 && !wr)
			return 1;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
			      errno == EINTR)) {
			if (tcptest_halted(t))
				return -ECANCELED;
			if (tcptest_now() >= deadline)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
			return 1;
		return n < 0 ? -errno : -EIO;
	}
	return 0;
}

void tcptest_addr_str(const struct sockaddr_in *sa, char *buf, size_t len)
{
	char ip[INET_ADDRSTRLEN] = "?";

	inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, ntohs(sa->sin_port));
}

/* ---- the preamble ---- */

void tcptest_preamble_encode(const struct tcptest *t, unsigned index,
			     uint8_t *b)
{
	uint32_t dur = t->p.kind == TCPTEST_BW ? t->p.duration_ms : 0;

	memcpy(b, TCPTEST_MAGIC, 4);
	b[4] = TCPTEST_VERSION;
	b[5] = (uint8_t)t->p.kind;
	b[6] = t->p.kind == TCPTEST_BW ? (uint8_t)t->p.dir : 0;
	b[7] = 0;
	b[8] = (uint8_t)(index >> 8);
	b[9] = (uint8_t)index;
	b[10] = (uint8_t)(t->n_conn >> 8);
	b[11] = (uint8_t)t->n_conn;
	b[12] = (uint8_t)(dur >> 24);
	b[13] = (uint8_t)(dur >> 16);
	b[14] = (uint8_t)(dur >> 8);
	b[15] = (uint8_t)dur;
	memcpy(b + 16, t->token, TCPTEST_TOKEN_LEN);
}

const char *tcptest_status_str(int st)
{
	switch (st) {
	case TCPTEST_ST_BAD_HEADER:
		return "not a test preamble (bad magic or version)";
	case TCPTEST_ST_BAD_TOKEN:
		return "unknown or reused token";
	case TCPTEST_ST_MISMATCH:
		return "test parameters differ";
	case TCPTEST_ST_DUPLICATE:
		return "stream index out of range or already connected";
	default:
		return "unknown refusal";
	}
}

int tcptest_parse_addr(const char *ip, uint16_t port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	if (!ip || inet_pton(AF_INET, ip, &sa->sin_addr) != 1) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}
