/* Host-name lookups in worker threads (see resolve.h). */
#include "resolve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "text.h"

#define RESOLVE_SLOTS (RESOLVE_SLOTS_ROOT + RESOLVE_SLOTS_OTHER)

/* One lookup: the loop's until started, the worker's until done, the
 * loop's again once it joined the worker. */
struct resolve_slot {
	struct resolve *r;
	int root; /* a slot for root's lookups */
	pthread_t tid;
	int running; /* a worker exists and is not joined */
	int done;    /* atomic: the worker wrote its result */
	int answer;  /* 0: the session that asked is gone */
	uint64_t id;
	char name[TEXT_HOST_NAME_MAX + 1];
	char addrs[RESOLVE_MAX_ADDRS][INET6_ADDRSTRLEN];
	size_t n;
	char error[256];
};

struct resolve {
	struct event_base *base;
	const char *node;
	ops_send_fn send;
	void *arg;
	int efd; /* any worker done */
	struct event *ev;
	struct resolve_slot slot[RESOLVE_SLOTS];
};

static void *resolve_worker(void *arg)
{
	struct resolve_slot *s = arg;
	struct addrinfo hints, *res = NULL;
	uint64_t one = 1;
	int e;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM; /* one entry per address */
	e = getaddrinfo(s->name, NULL, &hints, &res);
	if (e)
		snprintf(s->error, sizeof(s->error), "%s",
			 e == EAI_SYSTEM ? strerror(errno) : gai_strerror(e));
	for (struct addrinfo *ai = res; ai && s->n < RESOLVE_MAX_ADDRS;
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
		    inet_ntop(ai->ai_family, a, s->addrs[s->n],
			      sizeof(s->addrs[s->n])))
			s->n++;
	}
	if (res)
		freeaddrinfo(res);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	if (write(s->r->efd, &one, sizeof(one)) < 0)
		log_warn("resolve: eventfd write");
	return NULL;
}

static void resolve_reply(struct resolve *r, struct resolve_slot *s)
{
	Ring__ResolveReply rep = RING__RESOLVE_REPLY__INIT;
	Ring__NodeResolve nr = RING__NODE_RESOLVE__INIT, *nrp = &nr;
	char *addrs[RESOLVE_MAX_ADDRS];

	for (size_t i = 0; i < s->n; i++)
		addrs[i] = s->addrs[i];
	nr.node = (char *)r->node;
	nr.addresses = addrs;
	nr.n_addresses = s->n;
	nr.error = s->error;
	nr.answered = 1;
	rep.name = s->name;
	rep.nodes = &nrp;
	rep.n_nodes = 1;
	r->send(r->arg, s->id, RING__ENVELOPE__BODY_RESOLVE_REPLY, &rep);
}

static void resolve_on_done(evutil_socket_t fd, short what, void *arg)
{
	struct resolve *r = arg;
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("resolve: eventfd read");
	for (int i = 0; i < RESOLVE_SLOTS; i++) {
		struct resolve_slot *s = &r->slot[i];

		if (!s->running || !__atomic_load_n(&s->done, __ATOMIC_ACQUIRE))
			continue;
		pthread_join(s->tid, NULL);
		s->running = 0;
		log_debug("ops", "resolve %s for %s: %zu addresses%s%s",
			  s->name, s->root ? "root" : "others", s->n,
			  *s->error ? ", " : "", s->error);
		if (s->answer)
			resolve_reply(r, s);
	}
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
	for (int i = 0; i < RESOLVE_SLOTS; i++) {
		r->slot[i].r = r;
		r->slot[i].root = i < RESOLVE_SLOTS_ROOT;
	}
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
	struct resolve_slot *s = NULL;
	char why[160];
	int e, root;

	if (env->body_case != RING__ENVELOPE__BODY_RESOLVE_REQUEST)
		return 0;
	if (text_host_name_check(req->name, why, sizeof(why)) < 0) {
		resolve_refuse(r, env->request_id, why);
		return 1;
	}
	/* Unknown (an older coordinator): not root's, whoever asked. */
	root = req->requester == RING__REQUESTER__REQUESTER_ROOT;
	for (int i = 0; i < RESOLVE_SLOTS && !s; i++)
		if (r->slot[i].root == root && !r->slot[i].running)
			s = &r->slot[i];
	if (!s) {
		snprintf(why, sizeof(why),
			 "busy: %d host-name lookups for %s are running (at "
			 "most %d; root's and the others' are counted apart)",
			 root ? RESOLVE_SLOTS_ROOT : RESOLVE_SLOTS_OTHER,
			 root ? "root" : "non-root users",
			 root ? RESOLVE_SLOTS_ROOT : RESOLVE_SLOTS_OTHER);
		resolve_refuse(r, env->request_id, why);
		return 1;
	}
	snprintf(s->name, sizeof(s->name), "%s", req->name);
	s->id = env->request_id;
	s->n = 0;
	s->error[0] = '\0';
	s->answer = 1;
	__atomic_store_n(&s->done, 0, __ATOMIC_RELAXED);
	e = pthread_create(&s->tid, NULL, resolve_worker, s);
	if (e) {
		snprintf(why, sizeof(why), "cannot start a lookup: %s",
			 strerror(e));
		resolve_refuse(r, env->request_id, why);
		return 1;
	}
	s->running = 1;
	return 1;
}

void resolve_cancel(struct resolve *r)
{
	for (int i = 0; r && i < RESOLVE_SLOTS; i++)
		r->slot[i].answer = 0;
}

void resolve_free(struct resolve *r)
{
	if (!r)
		return;
	for (int i = 0; i < RESOLVE_SLOTS; i++)
		if (r->slot[i].running)
			pthread_join(r->slot[i].tid, NULL);
	event_free(r->ev);
	close(r->efd);
	free(r);
}
