/* The agent's all-reduce job: its listener, its connections, its worker
 * thread and its result (see allreduce.h). */
#include "allreduce.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "verbs.h"

/* What the connecting rank says first: the job id and its rank. */
#define AR_HELLO_LEN (ALLREDUCE_ID_LEN + 4)

struct allreduce_job {
	struct event_base *base;
	uint8_t id[ALLREDUCE_ID_LEN];
	struct allreduce_params p;
	char listen_if[IFNAMSIZ], next_if[IFNAMSIZ];
	char listen_addr[INET_ADDRSTRLEN], prev_addr[INET_ADDRSTRLEN];
	char next_addr[INET_ADDRSTRLEN];
	uint16_t next_port;
	char prev_node[64], next_node[64];
	int lfd, prev_fd, next_fd, efd;
	/* RDMA steps: the transport, and the neighbours' queue pairs */
	struct allreduce_rdma *rdma;
	struct verbs_endpoint prev_peer, next_peer;
	unsigned ack_timeout;
	const char *method;
	struct event *efd_ev, *deadline_ev;
	double deadline;
	pthread_t tid;
	int started, joined, finished;
	atomic_int stop;
	/* Written by the worker, read after the join. */
	struct allreduce_size_result res[ARLIMITS_SIZES_MAX];
	unsigned n_res;
	char error[512];
	Ring__AllreduceResult msg;
	Ring__AllreduceSizeResult sr[ARLIMITS_SIZES_MAX];
	Ring__AllreduceSizeResult *srp[ARLIMITS_SIZES_MAX];
	allreduce_done_fn done;
	void *arg;
};

static int ar_ipv4(const char *s)
{
	struct in_addr a;

	return s && inet_pton(AF_INET, s, &a) == 1;
}

static int ar_ifname(const char *s)
{
	return s && *s && strlen(s) < IFNAMSIZ && !strchr(s, '/');
}

static int ar_bind_dev(int fd, const char *ifname)
{
	return setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname,
			  (socklen_t)strlen(ifname) + 1);
}

/* Chunks are written in pieces: Nagle would hold a piece's tail back for
 * an ACK the peer delays (NCCL's sockets set it too). */
static void ar_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int ar_listen(struct allreduce_job *j, uint16_t *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int one = 1;

	j->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (j->lfd < 0)
		return -1;
	setsockopt(j->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	inet_pton(AF_INET, j->listen_addr, &sa.sin_addr);
	/* Bound to the interface facing the previous rank: its connection
	 * comes over that cable or not at all. */
	if (ar_bind_dev(j->lfd, j->listen_if) < 0 ||
	    bind(j->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(j->lfd, 4) < 0 ||
	    getsockname(j->lfd, (struct sockaddr *)&sa, &sl) < 0)
		return -1;
	*port = ntohs(sa.sin_port);
	return 0;
}

static void ar_finish(struct allreduce_job *j)
{
	Ring__AllreduceResult *m = &j->msg;

	ring__allreduce_result__init(m);
	m->method = (char *)j->method;
	m->error = j->error;
	for (unsigned i = 0; i < j->n_res; i++) {
		ring__allreduce_size_result__init(&j->sr[i]);
		j->sr[i].size = j->res[i].size;
		j->sr[i].mean_us = j->res[i].mean_us;
		j->sr[i].min_us = j->res[i].min_us;
		j->sr[i].max_us = j->res[i].max_us;
		j->sr[i].verified = j->res[i].verified;
		j->srp[i] = &j->sr[i];
	}
	m->n_sizes = j->n_res;
	m->sizes = j->srp;
	j->finished = 1;
	if (j->deadline_ev)
		evtimer_del(j->deadline_ev);
	if (*j->error)
		log_warnx("all-reduce rank %u failed: %s", j->p.rank, j->error);
	j->done(j, j->arg);
}

static void ar_join(struct allreduce_job *j)
{
	if (j->started && !j->joined) {
		pthread_join(j->tid, NULL);
		j->joined = 1;
	}
}

static void ar_on_efd(evutil_socket_t fd, short what, void *arg)
{
	struct allreduce_job *j = arg;
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("allreduce: eventfd read");
	if (j->finished)
		return;
	ar_join(j);
	ar_finish(j);
}

static void ar_on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct allreduce_job *j = arg;

	(void)fd;
	(void)what;
	if (j->started) {
		/* The worker checks the deadline itself; this is the net. */
		atomic_store(&j->stop, 1);
		return;
	}
	snprintf(j->error, sizeof(j->error),
		 "rank %u: no START before the job's deadline", j->p.rank);
	ar_finish(j);
}

static int ar_setup_check(const Ring__AllreduceSetup *s, uint64_t max_memory,
			  struct allreduce_params *p, char *why, size_t len)
{
	uint64_t max = 0;

	if (s->job_id.len != ALLREDUCE_ID_LEN)
		return snprintf(why, len, "job id must be %d bytes",
				ALLREDUCE_ID_LEN),
		       -1;
	if (s->n_sizes > ARLIMITS_SIZES_MAX ||
	    arlimits_check(s->sizes, s->n_sizes, s->n, s->iterations, s->warmup,
			   s->step_timeout_ms, why, len) < 0) {
		if (s->n_sizes > ARLIMITS_SIZES_MAX)
			snprintf(why, len, "at most %d sizes",
				 ARLIMITS_SIZES_MAX);
		return -1;
	}
	if (s->rank >= s->n)
		return snprintf(why, len, "rank %u of %u", s->rank, s->n), -1;
	if (!ar_ifname(s->listen_interface) || !ar_ifname(s->next_interface) ||
	    !ar_ipv4(s->listen_address) || !ar_ipv4(s->prev_address))
		return snprintf(why, len,
				"need the listen and next interfaces and the "
				"listen and previous ranks' IPv4 addresses"),
		       -1;
	for (size_t i = 0; i < s->n_sizes; i++)
		if (s->sizes[i] > max)
			max = s->sizes[i];
	if (max > max_memory)
		return snprintf(why, len,
				"size %llu MiB is over this agent's "
				"allreduce_max_memory (%llu MiB)",
				(unsigned long long)(max >> 20),
				(unsigned long long)(max_memory >> 20)),
		       -1;
	memset(p, 0, sizeof(*p));
	p->rank = s->rank;
	p->n = s->n;
	p->n_sizes = (unsigned)s->n_sizes;
	memcpy(p->sizes, s->sizes, s->n_sizes * sizeof(uint64_t));
	p->iterations = s->iterations;
	p->warmup = s->warmup;
	p->step_ms = s->step_timeout_ms;
	return 0;
}

struct allreduce_job *allreduce_job_new(struct event_base *base,
					const Ring__AllreduceSetup *s,
					uint64_t max_memory,
					allreduce_done_fn done, void *arg,
					uint16_t *port, char *why, size_t len)
{
	struct allreduce_job *j = calloc(1, sizeof(*j));
	unsigned ms;
	struct timeval tv;

	if (!j) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	j->lfd = j->prev_fd = j->next_fd = j->efd = -1;
	j->method = "tcp";
	j->base = base;
	j->done = done;
	j->arg = arg;
	if (ar_setup_check(s, max_memory, &j->p, why, len) < 0)
		goto fail;
	memcpy(j->id, s->job_id.data, ALLREDUCE_ID_LEN);
	snprintf(j->listen_if, sizeof(j->listen_if), "%s", s->listen_interface);
	snprintf(j->next_if, sizeof(j->next_if), "%s", s->next_interface);
	snprintf(j->listen_addr, sizeof(j->listen_addr), "%s",
		 s->listen_address);
	snprintf(j->prev_addr, sizeof(j->prev_addr), "%s", s->prev_address);
	snprintf(j->prev_node, sizeof(j->prev_node), "%.63s",
		 *s->prev_node ? s->prev_node : s->prev_address);
	snprintf(j->next_node, sizeof(j->next_node), "%.63s",
		 *s->next_node ? s->next_node : "next rank");
	ms = s->deadline_ms && s->deadline_ms < ARLIMITS_DEADLINE_MAX_MS
		     ? s->deadline_ms
		     : ARLIMITS_DEADLINE_MAX_MS;
	j->deadline = allreduce_now() + ms / 1000.0;
	if (ar_listen(j, port) < 0) {
		snprintf(why, len, "cannot listen on %s (%s): %s",
			 j->listen_addr, j->listen_if, strerror(errno));
		goto fail;
	}
	j->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (j->efd < 0)
		goto fail_sys;
	j->efd_ev = event_new(base, j->efd, EV_READ | EV_PERSIST, ar_on_efd, j);
	j->deadline_ev = evtimer_new(base, ar_on_deadline, j);
	if (!j->efd_ev || !j->deadline_ev || event_add(j->efd_ev, NULL) < 0)
		goto fail_sys;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(j->deadline_ev, &tv);
	return j;
fail_sys:
	snprintf(why, len, "%s", strerror(errno));
fail:
	allreduce_job_free(j);
	return NULL;
}

int allreduce_job_rdma(struct allreduce_job *j, const Ring__AllreduceSetup *s,
		       const struct agent_conf *conf, char *why, size_t len)
{
	struct verbs_setup prev = {0}, next = {0};
	struct allreduce_rdma_cfg c = {0};

	if (!s->prev_rdma && !s->next_rdma)
		return 0;
	prev.device = s->prev_device;
	prev.interface = j->listen_if;
	prev.gid_set = s->prev_gid_index >= 0 && s->prev_gid_index < 256 &&
		       *s->prev_device;
	prev.gid_index = prev.gid_set ? (unsigned)s->prev_gid_index : 0;
	prev.peer = j->prev_node;
	prev.conf = conf;
	next.device = s->next_device;
	next.interface = j->next_if;
	next.gid_set = s->next_gid_index >= 0 && s->next_gid_index < 256 &&
		       *s->next_device;
	next.gid_index = next.gid_set ? (unsigned)s->next_gid_index : 0;
	next.peer = j->next_node;
	next.conf = conf;
	c.prev = s->prev_rdma ? &prev : NULL;
	c.next = s->next_rdma ? &next : NULL;
	c.n = j->p.n;
	for (unsigned i = 0; i < j->p.n_sizes; i++)
		if (j->p.sizes[i] > c.max_size)
			c.max_size = j->p.sizes[i];
	if (s->ack_timeout &&
	    (s->ack_timeout < TESTLIMITS_RDMA_ACK_TIMEOUT_MIN ||
	     s->ack_timeout > TESTLIMITS_RDMA_ACK_TIMEOUT_MAX))
		return snprintf(why, len, "ACK timeout %u is not within %d..%d",
				s->ack_timeout, TESTLIMITS_RDMA_ACK_TIMEOUT_MIN,
				TESTLIMITS_RDMA_ACK_TIMEOUT_MAX),
		       -1;
	j->ack_timeout = s->ack_timeout;
	j->rdma = allreduce_rdma_new(&c, why, len);
	if (!j->rdma)
		return -1;
	j->method = s->next_rdma ? "rdma" : "tcp";
	return 0;
}

const struct verbs_endpoint *
allreduce_job_rdma_local(const struct allreduce_job *j, int prev)
{
	return j->rdma ? allreduce_rdma_local(j->rdma, prev) : NULL;
}

int allreduce_job_is(const struct allreduce_job *j, ProtobufCBinaryData id)
{
	return id.len == ALLREDUCE_ID_LEN && !memcmp(j->id, id.data, id.len);
}

static int ar_wait(int fd, short ev, double end, atomic_int *stop)
{
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = ev};
		double left = end - allreduce_now();
		int rc;

		if (atomic_load(stop))
			return -ECANCELED;
		if (left <= 0)
			return -ETIMEDOUT;
		rc = poll(&pfd, 1, left > 0.1 ? 100 : (int)(left * 1000) + 1);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
}

/* Connect to the next rank through the interface facing it, and say who
 * we are. */
static int ar_connect_next(struct allreduce_job *j, double end, char *why,
			   size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(j->next_port)};
	uint8_t hello[AR_HELLO_LEN];
	uint32_t rank = htonl(j->p.rank);
	socklen_t el = sizeof(int);
	int fd, e = 0, rc;

	inet_pton(AF_INET, j->next_addr, &sa.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	j->next_fd = fd;
	if (fd < 0 || ar_bind_dev(fd, j->next_if) < 0) {
		rc = -errno;
		goto fail;
	}
	ar_nodelay(fd);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
	    errno != EINPROGRESS) {
		rc = -errno;
		goto fail;
	}
	rc = ar_wait(fd, POLLOUT, end, &j->stop);
	if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e)
		rc = -e;
	if (rc < 0)
		goto fail;
	memcpy(hello, j->id, ALLREDUCE_ID_LEN);
	memcpy(hello + ALLREDUCE_ID_LEN, &rank, 4);
	/* 20 bytes into an empty socket buffer: sent whole at once. */
	if (send(fd, hello, sizeof(hello), MSG_NOSIGNAL) != sizeof(hello)) {
		rc = -errno;
		goto fail;
	}
	return 0;
fail:
	snprintf(why, len, "connect to %s (next rank %u) at %s:%u via %s: %s",
		 j->next_node, (j->p.rank + 1) % j->p.n, j->next_addr,
		 j->next_port, j->next_if, strerror(-rc));
	return -1;
}

/* The previous rank's connection: from its address, with our job id and
 * its rank; anything else is closed and the wait goes on. */
static int ar_accept_prev(struct allreduce_job *j, double end, char *why,
			  size_t len)
{
	unsigned prev = (j->p.rank + j->p.n - 1) % j->p.n;
	uint8_t hello[AR_HELLO_LEN];
	int rc;

	for (;;) {
		struct sockaddr_in sa;
		socklen_t sl = sizeof(sa);
		char from[INET_ADDRSTRLEN] = "?";
		uint32_t r;
		int fd;

		rc = ar_wait(j->lfd, POLLIN, end, &j->stop);
		if (rc < 0)
			break;
		fd = accept4(j->lfd, (struct sockaddr *)&sa, &sl,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;
		inet_ntop(AF_INET, &sa.sin_addr, from, sizeof(from));
		if (strcmp(from, j->prev_addr) != 0) {
			log_warnx("all-reduce: refused a connection from %s "
				  "(expected %s)",
				  from, j->prev_addr);
			close(fd);
			continue;
		}
		rc = ar_wait(fd, POLLIN, end, &j->stop);
		if (rc == 0 && recv(fd, hello, sizeof(hello), MSG_WAITALL) !=
				       (ssize_t)sizeof(hello))
			rc = -EPROTO;
		memcpy(&r, hello + ALLREDUCE_ID_LEN, 4);
		if (rc == 0 && (memcmp(hello, j->id, ALLREDUCE_ID_LEN) ||
				ntohl(r) != prev))
			rc = -EPROTO;
		if (rc < 0) {
			close(fd);
			if (rc == -EPROTO)
				continue;
			break;
		}
		ar_nodelay(fd);
		j->prev_fd = fd;
		return 0;
	}
	snprintf(why, len,
		 "no connection from %s (previous rank %u) at %s on %s: %s",
		 j->prev_node, prev, j->prev_addr, j->listen_if,
		 rc == -ETIMEDOUT ? "timed out" : strerror(-rc));
	return -1;
}

/* "Ready" to the previous rank, then the next rank's: a rank starts only
 * when its next rank is listening and its queue pairs are at RTS. The
 * next rank answers once it accepted us, which needs nothing of ours
 * beyond the connect already made: no ring of waits. */
static int ar_ready(struct allreduce_job *j, double end, char *why, size_t len)
{
	const uint8_t ready = 'R';
	uint8_t got = 0;
	int rc = 0;

	if (send(j->prev_fd, &ready, 1, MSG_NOSIGNAL) != 1)
		rc = -errno;
	if (rc == 0)
		rc = ar_wait(j->next_fd, POLLIN, end, &j->stop);
	if (rc == 0 && recv(j->next_fd, &got, 1, MSG_DONTWAIT) != 1)
		rc = -EPROTO;
	if (rc == 0 && got != ready)
		rc = -EPROTO;
	if (rc == 0)
		return 0;
	snprintf(why, len, "%s (next rank %u) did not say it was ready: %s",
		 j->next_node, (j->p.rank + 1) % j->p.n,
		 rc == -ETIMEDOUT ? "timed out" : strerror(-rc));
	return -1;
}

static void *ar_worker(void *arg)
{
	struct allreduce_job *j = arg;
	struct allreduce_ring ring = {.stop = &j->stop,
				      .deadline = j->deadline,
				      .prev_node = j->prev_node,
				      .next_node = j->next_node};
	/* Connecting is one step with a step's deadline. */
	double end = allreduce_now() +
		     arlimits_step_deadline_ms(j->p.step_ms, 0) / 1000.0;
	uint64_t one = 1;

	if (end > j->deadline)
		end = j->deadline;
	/* Queue pairs to RTS before the handshake: a rank that hears
	 * "ready" from its next rank may WRITE to it at once. */
	if (j->rdma && allreduce_rdma_connect(j->rdma, &j->prev_peer,
					      &j->next_peer, j->ack_timeout,
					      j->error, sizeof(j->error)) < 0)
		goto out;
	/* The listener completes handshakes without accept(): every rank
	 * connects first, then accepts, and no ring of waits forms. */
	if (ar_connect_next(j, end, j->error, sizeof(j->error)) == 0 &&
	    ar_accept_prev(j, end, j->error, sizeof(j->error)) == 0 &&
	    ar_ready(j, end, j->error, sizeof(j->error)) == 0) {
		ring.prev_fd = j->prev_fd;
		ring.next_fd = j->next_fd;
		ring.rdma = j->rdma;
		allreduce_run(&ring, &j->p, j->res, &j->n_res, j->error,
			      sizeof(j->error));
	}
out:
	if (write(j->efd, &one, sizeof(one)) < 0)
		log_warn("allreduce: eventfd");
	return NULL;
}

int allreduce_job_start(struct allreduce_job *j, const char *next_addr,
			uint32_t next_port,
			const struct verbs_endpoint *prev_peer,
			const struct verbs_endpoint *next_peer, char *why,
			size_t len)
{
	if (j->started || j->finished)
		return snprintf(why, len, "job already started"), -1;
	if (!ar_ipv4(next_addr) || next_port == 0 || next_port > 65535)
		return snprintf(why, len, "bad next rank endpoint"), -1;
	if ((allreduce_rdma_has(j->rdma, 1) && !prev_peer) ||
	    (allreduce_rdma_has(j->rdma, 0) && !next_peer))
		return snprintf(why, len,
				"RDMA steps need the neighbours' queue "
				"pairs"),
		       -1;
	if (prev_peer)
		j->prev_peer = *prev_peer;
	if (next_peer)
		j->next_peer = *next_peer;
	snprintf(j->next_addr, sizeof(j->next_addr), "%s", next_addr);
	j->next_port = (uint16_t)next_port;
	if (pthread_create(&j->tid, NULL, ar_worker, j) != 0)
		return snprintf(why, len, "cannot start a thread"), -1;
	j->started = 1;
	return 0;
}

void allreduce_job_stop(struct allreduce_job *j)
{
	if (j->finished)
		return;
	if (j->started) {
		atomic_store(&j->stop, 1);
		return;
	}
	snprintf(j->error, sizeof(j->error), "rank %u: stopped before START",
		 j->p.rank);
	ar_finish(j);
}

const Ring__AllreduceResult *allreduce_job_result(struct allreduce_job *j)
{
	return &j->msg;
}

void allreduce_job_free(struct allreduce_job *j)
{
	if (!j)
		return;
	atomic_store(&j->stop, 1);
	ar_join(j);
	if (j->efd_ev)
		event_free(j->efd_ev);
	if (j->deadline_ev)
		event_free(j->deadline_ev);
	if (j->efd >= 0)
		close(j->efd);
	if (j->lfd >= 0)
		close(j->lfd);
	if (j->prev_fd >= 0)
		close(j->prev_fd);
	if (j->next_fd >= 0)
		close(j->next_fd);
	allreduce_rdma_free(j->rdma);
	free(j);
}
