#include "agents.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "cfg.h"
#include "conn.h"
#include "coord.h"
#include "log.h"
#include "tls.h"

/* Sessions still in TLS handshake or before Hello are capped on top of
 * max_agents, so a flood of half-open peers cannot exhaust descriptors. */
#define AGENTS_PENDING_SLACK 256

struct agents_call {
	struct session *s;
	uint64_t id;
	unsigned timeout_ms;
	agents_reply_cb cb;
	void *arg;
	struct event *timer;
	struct agents_call *prev, *next;
};

struct session {
	struct agents *owner;
	struct agents_call *calls; /* pending requests to this agent */
	uint64_t next_id;
	struct conn *conn;
	SSL *ssl;
	struct node *node; /* set once Hello is accepted */
	char addr[64];	   /* peer IP, reported as the management address */
	struct session *prev, *next;
};

struct agents {
	struct coord *co;
	struct evconnlistener *listener;
	struct session *head;
	unsigned n_sessions;
	unsigned n_active;
	agents_change_cb change_cb;
	void *change_arg;
};

static void agents_changed(struct agents *a)
{
	if (a->change_cb)
		a->change_cb(a->change_arg);
}

static void call_unlink(struct agents_call *c)
{
	struct session *s = c->s;

	if (c->prev)
		c->prev->next = c->next;
	else
		s->calls = c->next;
	if (c->next)
		c->next->prev = c->prev;
	event_free(c->timer);
	free(c);
}

void agents_call_cancel(struct agents_call *c)
{
	if (c)
		call_unlink(c);
}

/* Fail every pending call of a session that is going away. */
static void session_fail_calls(struct session *s, int err)
{
	while (s->calls) {
		struct agents_call *c = s->calls;
		agents_reply_cb cb = c->cb;
		void *arg = c->arg;

		call_unlink(c);
		cb(NULL, err, arg);
	}
}

static void call_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct agents_call *c = arg;
	agents_reply_cb cb = c->cb;
	void *cb_arg = c->arg;

	(void)fd;
	(void)what;
	call_unlink(c);
	cb(NULL, -ETIMEDOUT, cb_arg);
}

static void call_arm(struct agents_call *c)
{
	struct timeval tv = {.tv_sec = c->timeout_ms / 1000,
			     .tv_usec = (c->timeout_ms % 1000) * 1000};

	evtimer_add(c->timer, &tv);
}

/* 1 if env answered a pending call (and was handed to its callback). */
static int session_deliver(struct session *s, const Ring__Envelope *env)
{
	struct agents_call *c;

	if (!env->request_id)
		return 0;
	for (c = s->calls; c; c = c->next)
		if (c->id == env->request_id)
			break;
	if (!c)
		return 0;
	if (c->cb(env, 0, c->arg))
		call_arm(c);
	else
		call_unlink(c);
	return 1;
}

static void session_free(struct session *s)
{
	struct agents *a = s->owner;

	if (s->prev)
		s->prev->next = s->next;
	else
		a->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	a->n_sessions--;
	session_fail_calls(s, -ECONNRESET);
	if (s->node) {
		a->n_active--;
		if (s->node->session == s)
			s->node->session = NULL;
	}
	conn_free(s->conn);
	free(s);
}

static void session_reply(struct session *s, uint64_t id,
			  Ring__Envelope__BodyCase type, void *body)
{
	conn_send_body(s->conn, id, type, body);
}

/* The agent is refused: tell it why, log it, close once the answer left. */
static void session_refuse(struct session *s, uint64_t id, int code,
			   const char *why)
{
	log_warnx("agent %s: refused: %s", conn_peer(s->conn), why);
	conn_send_error(s->conn, id, code, "%s", why);
	conn_close_after_flush(s->conn, why);
}

static void session_hello(struct session *s, Ring__Envelope *env)
{
	struct agents *a = s->owner;
	const struct coord_conf *conf = a->co->conf;
	Ring__Hello *h = env->hello;
	Ring__HelloAck ack = RING__HELLO_ACK__INIT;
	struct node *n;
	char cn[128], why[256];

	if (!cfg_valid_node_name(h->node)) {
		snprintf(why, sizeof(why), "invalid node name '%.64s'",
			 h->node);
		session_refuse(s, env->request_id,
			       RING__ERROR_CODE__ERROR_BAD_REQUEST, why);
		return;
	}
	if (!tls_peer_has_name(s->ssl, h->node)) {
		tls_peer_cn(s->ssl, cn, sizeof(cn));
		snprintf(why, sizeof(why),
			 "claims node '%s' but its certificate is for '%s'",
			 h->node, cn);
		session_refuse(s, env->request_id,
			       RING__ERROR_CODE__ERROR_PERMISSION, why);
		return;
	}
	n = nodes_get(a->co->nodes, h->node, conf->max_agents);
	if (!n) {
		snprintf(why, sizeof(why), "node '%s' not admitted: %s",
			 h->node,
			 errno == ENOSPC ? "max_agents reached"
					 : strerror(errno));
		session_refuse(s, env->request_id,
			       RING__ERROR_CODE__ERROR_INTERNAL, why);
		return;
	}
	if (n->session) {
		struct session *old = n->session;

		/* An agent that restarted reconnects before its old session
		 * timed out: the new one wins. */
		log_info(
			"node %s: new session from %s replaces the one from %s",
			n->name, s->addr, old->addr);
		old->node = NULL;
		a->n_active--;
		session_free(old);
	}
	s->node = n;
	a->n_active++;
	nodes_mark_up(n, s, s->addr, h->agent_version, coord_now_ms());
	nodes_set_capabilities(n, h->capabilities, h->n_capabilities);
	log_info("node %s up: %s, agent %s%s", n->name, s->addr,
		 h->agent_version, n->expected ? "" : " (not in expect list)");
	agents_changed(a);
	ack.coordinator = (char *)conf->name;
	ack.heartbeat_interval_ms = (uint32_t)conf->heartbeat_interval_ms;
	ack.heartbeat_misses = conf->heartbeat_misses;
	session_reply(s, env->request_id, RING__ENVELOPE__BODY_HELLO_ACK, &ack);
	conn_set_read_timeout(s->conn, (unsigned)(conf->heartbeat_interval_ms *
						  conf->heartbeat_misses));
}

static void session_msg(struct conn *c, Ring__Envelope *env, void *arg)
{
	struct session *s = arg;
	struct node *n = s->node;

	(void)c;
	if (!n) {
		if (env->body_case == RING__ENVELOPE__BODY_HELLO)
			session_hello(s, env);
		else
			session_refuse(s, env->request_id,
				       RING__ERROR_CODE__ERROR_PROTOCOL,
				       "first message must be Hello");
		frame_free(env);
		return;
	}
	n->last_seen_ms = coord_now_ms();
	if (session_deliver(s, env)) {
		frame_free(env);
		return;
	}
	switch (env->body_case) {
	case RING__ENVELOPE__BODY_HEARTBEAT:
		n->mem_available_kib = env->heartbeat->mem_available_kib;
		session_reply(s, env->request_id,
			      RING__ENVELOPE__BODY_HEARTBEAT, env->heartbeat);
		break;
	case RING__ENVELOPE__BODY_INVENTORY:
		/* Keep the unpacked message; detach it from the envelope so
		 * frame_free leaves it alone. */
		nodes_set_inventory(n, env->inventory);
		free(env->inventory->node);
		env->inventory->node = strdup(n->name);
		env->body_case = RING__ENVELOPE__BODY__NOT_SET;
		env->inventory = NULL;
		log_info("node %s: inventory: %zu interfaces, %zu RDMA devices",
			 n->name, n->inventory->n_interfaces,
			 n->inventory->n_rdma_devices);
		agents_changed(s->owner);
		break;
	case RING__ENVELOPE__BODY_NEIGHBOUR_TABLE:
		nodes_set_neighbours(n, env->neighbour_table);
		env->body_case = RING__ENVELOPE__BODY__NOT_SET;
		env->neighbour_table = NULL;
		log_info("node %s: %zu LLDP neighbours%s%s", n->name,
			 n->neighbours->n_neighbours,
			 n->neighbours->beacons_available ? ""
							  : "; beacons off: ",
			 n->neighbours->beacons_available
				 ? ""
				 : n->neighbours->beacons_error);
		agents_changed(s->owner);
		break;
	case RING__ENVELOPE__BODY_ERROR:
		log_warnx("node %s reports error %d: %s", n->name,
			  env->error->code, env->error->text);
		break;
	default:
		conn_send_error(s->conn, env->request_id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"unexpected %s from an agent",
				frame_type_name((uint16_t)env->body_case));
		break;
	}
	frame_free(env);
}

static void session_close(struct conn *c, int err, const char *reason,
			  void *arg)
{
	struct session *s = arg;
	const struct coord_conf *conf = s->owner->co->conf;
	char why[256];

	if (s->node && s->node->session == s) {
		if (err == -ETIMEDOUT)
			snprintf(
				why, sizeof(why),
				"no heartbeat for %llu ms (%u missed)",
				(unsigned long long)(conf->heartbeat_interval_ms *
						     conf->heartbeat_misses),
				conf->heartbeat_misses);
		else if (err == -ECONNRESET)
			snprintf(why, sizeof(why),
				 "connection closed by agent");
		else
			snprintf(why, sizeof(why), "%s", reason);
		nodes_mark_down(s->node, why, coord_now_ms());
		log_info("node %s down: %s", s->node->name, why);
		session_fail_calls(s, -ECONNRESET);
		agents_changed(s->owner);
	} else if (!s->node && err != -ECANCELED) {
		log_warnx("agent %s: session failed before Hello: %s",
			  conn_peer(c), reason);
	}
	session_free(s);
}

static void agents_accept(struct evconnlistener *l, evutil_socket_t fd,
			  struct sockaddr *sa, int salen, void *arg)
{
	struct agents *a = arg;
	struct coord *co = a->co;
	struct bufferevent *bev;
	struct session *s;
	char host[64] = "?", serv[16] = "?", peer[96];

	(void)l;
	getnameinfo(sa, (socklen_t)salen, host, sizeof(host), serv,
		    sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(peer, sizeof(peer), "%s:%s", host, serv);
	if (a->n_sessions >= co->conf->max_agents + AGENTS_PENDING_SLACK) {
		log_warnx("agent %s: refused: too many sessions (%u)", peer,
			  a->n_sessions);
		evutil_closesocket(fd);
		return;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto fail_fd;
	s->ssl = SSL_new(co->tls);
	if (!s->ssl)
		goto fail_s;
	bev = bufferevent_openssl_socket_new(co->base, fd, s->ssl,
					     BUFFEREVENT_SSL_ACCEPTING,
					     BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		SSL_free(s->ssl);
		goto fail_s;
	}
	s->conn = conn_new(bev, peer, co->conf->max_frame, session_msg,
			   session_close, s);
	if (!s->conn) {
		bufferevent_free(bev);
		free(s);
		log_warnx("agent %s: out of memory", peer);
		return;
	}
	s->owner = a;
	snprintf(s->addr, sizeof(s->addr), "%s", host);
	/* The handshake and Hello must complete within handshake_timeout. */
	conn_set_read_timeout(s->conn,
			      (unsigned)co->conf->handshake_timeout_ms);
	s->next = a->head;
	if (a->head)
		a->head->prev = s;
	a->head = s;
	a->n_sessions++;
	log_debug("agents", "%s: connection accepted", peer);
	return;
fail_s:
	free(s);
fail_fd:
	log_warnx("agent %s: cannot set up session", peer);
	evutil_closesocket(fd);
}

static void agents_listen_error(struct evconnlistener *l, void *arg)
{
	(void)l;
	(void)arg;
	/* EMFILE and friends: libevent keeps listening; say so once per
	 * burst rather than crash. */
	log_warn("agents: accept failed");
}

struct agents *agents_new(struct coord *co)
{
	const struct coord_conf *conf = co->conf;
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	struct agents *a;
	char port[8];
	int rc;

	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->co = co;
	snprintf(port, sizeof(port), "%u", conf->listen_port);
	rc = getaddrinfo(conf->listen_host, port, &hints, &res);
	if (rc) {
		log_warnx("listen %s: %s", conf->listen_host, gai_strerror(rc));
		goto fail;
	}
	a->listener = evconnlistener_new_bind(
		co->base, agents_accept, a,
		LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE |
			LEV_OPT_CLOSE_ON_EXEC,
		1024, res->ai_addr, (int)res->ai_addrlen);
	freeaddrinfo(res);
	if (!a->listener) {
		log_warn("listen %s:%u", conf->listen_host, conf->listen_port);
		goto fail;
	}
	evconnlistener_set_error_cb(a->listener, agents_listen_error);
	log_info("listening for agents on %s:%u", conf->listen_host,
		 conf->listen_port);
	return a;
fail:
	free(a);
	return NULL;
}

void agents_free(struct agents *a)
{
	if (!a)
		return;
	while (a->head)
		session_free(a->head);
	if (a->listener)
		evconnlistener_free(a->listener);
	free(a);
}

unsigned agents_active(const struct agents *a)
{
	return a->n_active;
}

void agents_set_change_cb(struct agents *a, agents_change_cb cb, void *arg)
{
	a->change_cb = cb;
	a->change_arg = arg;
}

struct agents_call *agents_call(struct agents *a, const char *node,
				Ring__Envelope *req, unsigned timeout_ms,
				agents_reply_cb cb, void *arg)
{
	struct node *n = nodes_find(a->co->nodes, node);
	struct session *s = n && n->state == NODE_UP ? n->session : NULL;
	struct agents_call *c;

	if (!s) {
		errno = ENOTCONN;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->timer = evtimer_new(a->co->base, call_timeout, c);
	if (!c->timer) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->s = s;
	c->id = ++s->next_id;
	c->timeout_ms = timeout_ms;
	c->cb = cb;
	c->arg = arg;
	req->request_id = c->id;
	if (conn_send(s->conn, req) < 0) {
		event_free(c->timer);
		free(c);
		errno = ENOTCONN;
		return NULL;
	}
	c->next = s->calls;
	if (s->calls)
		s->calls->prev = c;
	s->calls = c;
	call_arm(c);
	return c;
}
