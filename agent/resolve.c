/* Host-name lookups in a worker thread (see resolve.h). */
#include "resolve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "text.h"

struct resolve {
	struct event_base *base;
	const char *node;
	ops_send_fn send;
	void *arg;
	int efd;
	struct event *ev;
	pthread_t tid;
	int running; /* a worker exists and is not joined */
	int answer;  /* 0: the session that asked is gone */
	uint64_t id;
	char name[TEXT_HOST_NAME_MAX + 1];
	/* the worker's result, read after the eventfd says it is done */
	char addrs[RESOLVE_MAX_ADDRS][INET6_ADDRSTRLEN];
	size_t n;
	char error[256];
};

static void *resolve_worker(void *arg)
{
	struct resolve *r = arg;
	struct addrinfo hints, *res = NULL;
	uint64_t one = 1;
	int e;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM; /* one entry per address */
	e = getaddrinfo(r->name, NULL, &hints, &res);
	if (e)
		snprintf(r->error, sizeof(r->error), "%s",
			 e == EAI_SYSTEM ? strerror(errno) : gai_strerror(e));
	for (struct addrinfo *ai = res; ai && r->n < RESOLVE_MAX_ADDRS;
	     ai = ai->ai_next) {
		const void *a =
			ai->ai_family == AF_INET
				? (const void *)&(
					  (struct sockaddr_in *)ai->ai_addr)
					  ->sin_addr
				: (const void *)&(
					  (struct sockaddr_in6 *)ai->ai_addr)
					  ->sin6_addr;

		if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) &&
		    inet_ntop(ai->ai_family, a, r->addrs[r->n],
			      sizeof(r->addrs[r->n])))
			r->n++;
	}
	if (res)
		freeaddrinfo(res);
	if (write(r->efd, &one, sizeof(one)) < 0)
		log_warn("resolve: eventfd write");
	return NULL;
}

static void resolve_reply(struct resolve *r)
{
	Ring__ResolveReply rep = RING__RESOLVE_REPLY__INIT;
	Ring__NodeResolve nr = RING__NODE_RESOLVE__INIT, *nrp = &nr;
	char *addrs[RESOLVE_MAX_ADDRS];

	for (size_t i = 0; i < r->n; i++)
		addrs[i] = r->addrs[i];
	nr.node = (char *)r->node;
	nr.addresses = addrs;
	nr.n_addresses = r->n;
	nr.error = r->error;
	nr.answered = 1;
	rep.name = r->name;
	rep.nodes = &nrp;
	rep.n_nodes = 1;
	r->send(r->arg, r->id, RING__ENVELOPE__BODY_RESOLVE_REPLY, &rep);
}

static void resolve_on_done(evutil_socket_t fd, short what, void *arg)
{
	struct resolve *r = arg;
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("resolve: eventfd read");
	if (!r->running)
		return;
	pthread_join(r->tid, NULL);
	r->running = 0;
	log_debug("ops", "resolve %s: %zu addresses%s%s", r->name, r->n,
		  *r->error ? ", " : "", r->error);
	if (r->answer)
		resolve_reply(r);
}

struct resolve *resolve_new(struct event_base *base, const char *node,
			    ops_send_fn send, void *arg)
{
	struct resolve *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->base = base;
	r->node = node;
	r->send = send;
	r->arg = arg;
	r->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->efd < 0)
		goto fail;
	r->ev = event_new(base, r->efd, EV_READ | EV_PERSIST, resolve_on_done,
			  r);
	if (!r->ev || event_add(r->ev, NULL) < 0)
		goto fail;
	return r;

fail:
	if (r->ev)
		event_free(r->ev);
	if (r->efd >= 0)
		close(r->efd);
	free(r);
	return NULL;
}

static void resolve_refuse(struct resolve *r, uint64_t id, const char *why)
{
	Ring__Error err = RING__ERROR__INIT;

	err.code = RING__ERROR_CODE__ERROR_BAD_REQUEST;
	err.text = (char *)why;
	r->send(r->arg, id, RING__ENVELOPE__BODY_ERROR, &err);
}

int resolve_handle(struct resolve *r, const Ring__Envelope *env)
{
	const Ring__ResolveRequest *req = env->resolve_request;
	char why[160];
	int e;

	if (env->body_case != RING__ENVELOPE__BODY_RESOLVE_REQUEST)
		return 0;
	if (text_host_name_check(req->name, why, sizeof(why)) < 0) {
		resolve_refuse(r, env->request_id, why);
		return 1;
	}
	if (r->running) {
		resolve_refuse(r, env->request_id,
			       "busy: a host-name lookup is running");
		return 1;
	}
	snprintf(r->name, sizeof(r->name), "%s", req->name);
	r->id = env->request_id;
	r->n = 0;
	r->error[0] = '\0';
	r->answer = 1;
	e = pthread_create(&r->tid, NULL, resolve_worker, r);
	if (e) {
		snprintf(why, sizeof(why), "cannot start a lookup: %s",
			 strerror(e));
		resolve_refuse(r, env->request_id, why);
		return 1;
	}
	r->running = 1;
	return 1;
}

void resolve_cancel(struct resolve *r)
{
	if (r)
		r->answer = 0;
}

void resolve_free(struct resolve *r)
{
	if (!r)
		return;
	if (r->running)
		pthread_join(r->tid, NULL);
	event_free(r->ev);
	close(r->efd);
	free(r);
}
