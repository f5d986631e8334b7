/* Agent sessions: pending connections and their caps, Hello and admission,
 * validated updates, calls with one outcome each. */
#include "agents.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "clock.h"
#include "cfg.h"
#include "conn.h"
#include "log.h"
#include "ratelimit.h"
#include "tls.h"
#include "tls_words.h"
#include "validate.h"

#define AGENTS_LOG_BURST 10

struct call {
	struct session *s;
	uint64_t id;
	unsigned timeout_ms;
	Ring__Envelope__BodyCase interim, final;
	int got_interim;
	call_reply_cb cb;
	void *arg;
	struct event *timer;
	LIST_ENTRY(call) link;
};

struct session {
	struct agents *owner;
	LIST_HEAD(, call) calls; /* pending requests to this agent */
	uint64_t next_id;
	struct conn *conn;
	SSL *ssl;
	struct node *node; /* set once Hello is accepted */
	char addr[64];	   /* peer IP, reported as the management address */
	char identity[64]; /* proven name without TLS (tests), or "" */
	struct event
		*deadline; /* pending only: handshake_timeout from accept */
	unsigned dropped;  /* replies dropped (duplicate, late, unexpected) */
	TAILQ_ENTRY(session) link; /* on the pending or the active list */
};

TAILQ_HEAD(session_list, session);

struct agents {
	struct event_base *base;
	SSL_CTX *tls;
	const struct coord_conf *conf;
	struct nodes *nodes;
	struct call_iface calls;
	struct evconnlistener *listener;
	struct session_list pending; /* oldest first */
	unsigned n_pending;
	struct session_list active;
	agents_change_cb change_cb;
	void *change_arg;
	unsigned refused;	 /* connections refused since the last log */
	uint64_t refused_log_ms; /* when that was */
	struct ratelimit tls_rl; /* TLS failures' words, per address */
};

static struct session_list *session_list_of(struct session *s)
{
	return s->deadline ? &s->owner->pending : &s->owner->active;
}

static void agents_changed(struct agents *a)
{
	if (a->change_cb)
		a->change_cb(a->change_arg);
}

static void call_unlink(struct call *c)
{
	LIST_REMOVE(c, link);
	event_free(c->timer);
	free(c);
}

static void agents_call_cancel(struct call *c)
{
	if (c)
		call_unlink(c);
}

/* Fail every pending call of a session that is going away. */
static void session_fail_calls(struct session *s, int err)
{
	while (!LIST_EMPTY(&s->calls)) {
		struct call *c = LIST_FIRST(&s->calls);
		call_reply_cb cb = c->cb;
		void *arg = c->arg;

		call_unlink(c);
		cb(NULL, err, arg);
	}
}

static void call_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct call *c = arg;
	call_reply_cb cb = c->cb;
	void *cb_arg = c->arg;

	(void)fd;
	(void)what;
	call_unlink(c);
	cb(NULL, -ETIMEDOUT, cb_arg);
}

static void call_arm(struct call *c)
{
	struct timeval tv = {.tv_sec = c->timeout_ms / 1000,
			     .tv_usec = (c->timeout_ms % 1000) * 1000};

	evtimer_add(c->timer, &tv);
}

/* Messages an agent sends on its own; everything else is a reply. */
static int session_unsolicited(Ring__Envelope__BodyCase t)
{
	return t == RING__ENVELOPE__BODY_HELLO ||
	       t == RING__ENVELOPE__BODY_HEARTBEAT ||
	       t == RING__ENVELOPE__BODY_INVENTORY ||
	       t == RING__ENVELOPE__BODY_NEIGHBOUR_TABLE;
}

/* A reply nobody may have: say so, a few times per session. */
static void session_drop(struct session *s, const Ring__Envelope *env,
			 const char *why)
{
	if (s->dropped++ < 8 || !(s->dropped & (s->dropped - 1)))
		log_warnx("node %s: dropped %s for request %llu: %s (%u "
			  "dropped on this session)",
			  s->node ? s->node->name : "?",
			  frame_type_name((uint16_t)env->body_case),
			  (unsigned long long)env->request_id, why, s->dropped);
}

/* 1 if env was a reply (accepted by its call, or dropped), 0 if it is the
 * agent's own message. */
static int session_deliver(struct session *s, const Ring__Envelope *env)
{
	Ring__Envelope__BodyCase t = env->body_case;
	struct call *c;

	if (!env->request_id)
		return 0;
	LIST_FOREACH(c, &s->calls, link)
	if (c->id == env->request_id)
		break;
	if (!c) {
		if (session_unsolicited(t))
			return 0;
		session_drop(s, env,
			     "no such request pending (late or "
			     "duplicate reply)");
		return 1;
	}
	if (c->interim && t == c->interim) {
		if (c->got_interim) {
			session_drop(s, env, "duplicate interim reply");
			return 1;
		}
		c->got_interim = 1;
		call_arm(c);
		c->cb(env, 0, c->arg);
		return 1;
	}
	if (t == c->final || t == RING__ENVELOPE__BODY_ERROR) {
		call_reply_cb cb = c->cb;
		void *arg = c->arg;

		call_unlink(c);
		cb(env, 0, arg);
		return 1;
	}
	session_drop(s, env, "not a reply to that request");
	return 1;
}

static void session_free(struct session *s)
{
	struct agents *a = s->owner;

	if (s->deadline)
		a->n_pending--;
	TAILQ_REMOVE(session_list_of(s), s, link);
	if (s->deadline)
		event_free(s->deadline);
	s->deadline = NULL;
	session_fail_calls(s, -ECONNRESET);
	if (s->node && s->node->session == s)
		s->node->session = NULL;
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

static int session_has_name(struct session *s, const char *name)
{
	if (s->identity[0])
		return !strcmp(s->identity, name);
	return s->ssl && tls_peer_has_name(s->ssl, name);
}

static void session_peer_cn(struct session *s, char *buf, size_t len)
{
	if (s->identity[0])
		snprintf(buf, len, "%s", s->identity);
	else if (s->ssl)
		tls_peer_cn(s->ssl, buf, len);
	else
		snprintf(buf, len, "?");
}

static void session_hello(struct session *s, Ring__Envelope *env)
{
	struct agents *a = s->owner;
	const struct coord_conf *conf = a->conf;
	Ring__Hello *h = env->hello;
	Ring__HelloAck ack = RING__HELLO_ACK__INIT;
	struct node *n;
	char cn[128], why[256], bad[160], serial[TLS_SERIAL_LEN] = "";

	if (validate_hello(h, bad, sizeof(bad)) < 0) {
		snprintf(why, sizeof(why), "bad Hello: %s", bad);
		session_refuse(s, env->request_id,
			       RING__ERROR_CODE__ERROR_BAD_REQUEST, why);
		return;
	}
	if (!session_has_name(s, h->node)) {
		session_peer_cn(s, cn, sizeof(cn));
		snprintf(why, sizeof(why),
			 "claims node '%s' but its certificate is for '%s'",
			 h->node, cn);
		session_refuse(s, env->request_id,
			       RING__ERROR_CODE__ERROR_PERMISSION, why);
		return;
	}
	if (s->ssl && tls_peer_serial(s->ssl, serial, sizeof(serial)) < 0)
		serial[0] = '\0';
	if (coord_conf_admit(conf, h->node, serial[0] ? serial : NULL, bad,
			     sizeof(bad)) < 0) {
		snprintf(why, sizeof(why), "node '%s' not admitted: %s",
			 h->node, bad);
		session_refuse(s, env->request_id,
			       RING__ERROR_CODE__ERROR_PERMISSION, why);
		return;
	}
	n = nodes_get(a->nodes, h->node, conf->max_agents);
	if (!n) {
		snprintf(why, sizeof(why), "node '%s' not admitted: %s",
			 h->node,
			 errno == ENOSPC ? "max_agents reached"
					 : strerror(errno));
		session_refuse(s, env->request_id,
			       RING__ERROR_CODE__ERROR_INTERNAL, why);
		return;
	}
	/* Authenticated: from now on an agent, not a pending connection. */
	TAILQ_REMOVE(&a->pending, s, link);
	a->n_pending--;
	event_free(s->deadline);
	s->deadline = NULL;
	TAILQ_INSERT_TAIL(&a->active, s, link);
	if (n->session) {
		struct session *old = n->session;

		/* An agent that restarted reconnects before its old session
		 * timed out: the new one wins. */
		log_info(
			"node %s: new session from %s replaces the one from %s",
			n->name, s->addr, old->addr);
		n->session = NULL;
		old->node = NULL;
		session_free(old);
	}
	s->node = n;
	nodes_mark_up(n, s, s->addr, h->agent_version, clock_now_ms());
	nodes_set_capabilities(n, h->capabilities, h->n_capabilities);
	if (!s->ssl || tls_peer_not_after(s->ssl, &n->cert_not_after_ms) < 0)
		n->cert_not_after_ms = 0;
	log_info("node %s up: %s, agent %s%s", n->name, s->addr,
		 h->agent_version, n->expected ? "" : " (not in expect list)");
	conn_set_max_frame(s->conn, conf->max_frame);
	agents_changed(a);
	ack.coordinator = (char *)conf->name;
	ack.heartbeat_interval_ms = (uint32_t)conf->heartbeat_interval_ms;
	ack.heartbeat_misses = conf->heartbeat_misses;
	session_reply(s, env->request_id, RING__ENVELOPE__BODY_HELLO_ACK, &ack);
	conn_set_read_timeout(s->conn, (unsigned)(conf->heartbeat_interval_ms *
						  conf->heartbeat_misses));
}

/* A report that fails validation: logged, and the agent told why. */
static void session_bad_report(struct session *s, const Ring__Envelope *env,
			       const char *what, const char *why)
{
	log_warnx("node %s: %s refused: %s", s->node->name, what, why);
	conn_send_error(s->conn, env->request_id,
			RING__ERROR_CODE__ERROR_BAD_REQUEST, "%s refused: %s",
			what, why);
}

/* Keep a validated inventory: it replaces the last one. */
static void session_inventory(struct session *s, Ring__Envelope *env)
{
	struct node *n = s->node;
	Ring__Inventory *inv = env->inventory;
	char why[200];

	if (validate_inventory(inv, why, sizeof(why)) < 0) {
		session_bad_report(s, env, "inventory", why);
		return;
	}
	/* The node is who the certificate says, whatever the message says;
	 * a missing field is protobuf-c's shared empty string, not ours. */
	if (inv->node != protobuf_c_empty_string)
		free(inv->node);
	inv->node = strdup(n->name);
	if (!inv->node) {
		inv->node = (char *)protobuf_c_empty_string;
		log_warnx("node %s: inventory dropped: out of memory", n->name);
		return;
	}
	/* Keep the unpacked message; detach it from the envelope so
	 * frame_free leaves it alone. */
	nodes_set_inventory(n, inv);
	env->body_case = RING__ENVELOPE__BODY__NOT_SET;
	env->inventory = NULL;
	log_info("node %s: inventory: %zu interfaces, %zu RDMA devices",
		 n->name, n->inventory->n_interfaces,
		 n->inventory->n_rdma_devices);
	agents_changed(s->owner);
}

/* Keep a neighbour table: its shape must be sane; entries that are not
 * (their content comes from the data plane) are dropped one by one. */
static void session_neighbours(struct session *s, Ring__Envelope *env)
{
	struct node *n = s->node;
	Ring__NeighbourTable *t = env->neighbour_table;
	size_t kept = 0;
	char why[200];

	if (validate_neighbour_table(t, why, sizeof(why)) < 0) {
		session_bad_report(s, env, "neighbour table", why);
		return;
	}
	for (size_t i = 0; i < t->n_neighbours; i++) {
		if (validate_neighbour(t->neighbours[i], why, sizeof(why)) <
		    0) {
			log_warnx("node %s: LLDP neighbour %zu ignored: %s",
				  n->name, i, why);
			ring__neighbour__free_unpacked(t->neighbours[i], NULL);
			continue;
		}
		t->neighbours[kept++] = t->neighbours[i];
	}
	t->n_neighbours = kept;
	nodes_set_neighbours(n, t);
	env->body_case = RING__ENVELOPE__BODY__NOT_SET;
	env->neighbour_table = NULL;
	log_info("node %s: %zu LLDP neighbours%s%s", n->name,
		 n->neighbours->n_neighbours,
		 n->neighbours->beacons_available ? "" : "; beacons off: ",
		 n->neighbours->beacons_available
			 ? ""
			 : n->neighbours->beacons_error);
	agents_changed(s->owner);
}

/* Keep the latest port counters. Metrics read them when scraped; the
 * change callback (the watch, and the survey's settle timer) hears only
 * when a port starts or stops showing errors or drops, not every report:
 * reports come every few seconds from every node. */
static void session_counters(struct session *s, Ring__Envelope *env)
{
	struct node *n = s->node;
	Ring__CountersReport *r = env->counters_report;
	char why[200];
	int changed;

	if (validate_counters_report(r, why, sizeof(why)) < 0) {
		session_bad_report(s, env, "counters report", why);
		return;
	}
	env->body_case = RING__ENVELOPE__BODY__NOT_SET;
	env->counters_report = NULL;
	changed = nodes_set_counters(n, r, clock_now_ms());
	log_debug("agents", "node %s: counters of %zu ports%s", n->name,
		  r->n_ports, changed ? "; errors or drops changed" : "");
	if (changed)
		agents_changed(s->owner);
}

static void session_msg(struct conn *c, Ring__Envelope *env, void *arg)
{
	struct session *s = arg;
	struct node *n = s->node;
	char why[200];

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
	n->last_seen_ms = clock_now_ms();
	if (validate_message(&env->base, why, sizeof(why)) < 0) {
		log_warnx("node %s: %s refused: %s", n->name,
			  frame_type_name((uint16_t)env->body_case), why);
		conn_send_error(s->conn, env->request_id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"message refused: %s", why);
		frame_free(env);
		return;
	}
	if (session_deliver(s, env)) {
		frame_free(env);
		return;
	}
	switch (env->body_case) {
	case RING__ENVELOPE__BODY_HEARTBEAT:
		n->mem_available_kib = env->heartbeat->mem_available_kib;
		n->mem_available_ms =
			n->mem_available_kib ? n->last_seen_ms : 0;
		session_reply(s, env->request_id,
			      RING__ENVELOPE__BODY_HEARTBEAT, env->heartbeat);
		break;
	case RING__ENVELOPE__BODY_INVENTORY:
		session_inventory(s, env);
		break;
	case RING__ENVELOPE__BODY_NEIGHBOUR_TABLE:
		session_neighbours(s, env);
		break;
	case RING__ENVELOPE__BODY_COUNTERS_REPORT:
		session_counters(s, env);
		break;
	case RING__ENVELOPE__BODY_ERROR:
		log_warnx("node %s reports error %d: %s", n->name,
			  env->error->code, env->error->text);
		break;
	case RING__ENVELOPE__BODY_HELLO:
		conn_send_error(s->conn, env->request_id,
				RING__ERROR_CODE__ERROR_PROTOCOL,
				"already said Hello");
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

static void agents_refused(struct agents *a, const char *peer, const char *why);
static void agents_tls_refused(struct agents *a, const char *addr,
			       const char *why);

static void session_close(struct conn *c, int err, const char *reason,
			  void *arg)
{
	struct session *s = arg;
	const struct coord_conf *conf = s->owner->conf;
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
		nodes_mark_down(s->node, why, clock_now_ms());
		log_info("node %s down: %s", s->node->name, why);
		session_fail_calls(s, -ECONNRESET);
		agents_changed(s->owner);
	} else if (!s->node && err != -ECANCELED && conn_tls_failed(c)) {
		agents_tls_refused(s->owner, s->addr, reason);
	} else if (!s->node && err != -ECANCELED) {
		agents_refused(s->owner, conn_peer(c), reason);
	}
	session_free(s);
}

/* Absolute: trickling bytes does not extend it. */
static void session_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	(void)fd;
	(void)what;
	log_debug("agents", "%s: no Hello within the handshake timeout",
		  conn_peer(s->conn));
	session_free(s);
}

/* Connections that fail before Hello come in floods when someone attacks:
 * say why for the first few in each 10 s window, then how many more. */
static void agents_refused(struct agents *a, const char *peer, const char *why)
{
	uint64_t now = clock_now_ms();

	if (now - a->refused_log_ms >= 10000) {
		if (a->refused > AGENTS_LOG_BURST)
			log_warnx("agents: %u more connections failed or were "
				  "refused before Hello in 10 s",
				  a->refused - AGENTS_LOG_BURST);
		a->refused = 0;
		a->refused_log_ms = now;
	}
	if (a->refused++ < AGENTS_LOG_BURST)
		log_warnx("agent %s: no session: %s", peer, why);
}

/* A TLS failure in words: an agent with the wrong CA retries every few
 * seconds, so one line per address per TLS_WORDS_LOG_MS with the count
 * held back, and the flood cap above over all addresses. */
static void agents_tls_refused(struct agents *a, const char *addr,
			       const char *why)
{
	char line[1400];
	unsigned held;

	if (!ratelimit_ok(&a->tls_rl, addr, clock_now_ms(), &held)) {
		log_debug("agents", "agent %s: TLS failure again: %s", addr,
			  why);
		return;
	}
	if (held)
		snprintf(line, sizeof(line),
			 "%s [%u more TLS failures from this address since "
			 "the last such line]",
			 why, held);
	else
		snprintf(line, sizeof(line), "%s", why);
	agents_refused(a, addr, line);
}

static unsigned agents_pending_from(const struct agents *a, const char *addr)
{
	const struct session *s;
	unsigned k = 0;

	TAILQ_FOREACH(s, &a->pending, link)
	k += !strcmp(s->addr, addr);
	return k;
}

int agents_attach(struct agents *a, struct bufferevent *bev, const char *addr,
		  const char *identity)
{
	struct timeval tv = {.tv_sec = a->conf->handshake_timeout_ms / 1000,
			     .tv_usec = (a->conf->handshake_timeout_ms % 1000) *
					1000};
	struct session *s;

	if (agents_pending_from(a, addr) >= AGENTS_MAX_PENDING_PER_SOURCE) {
		agents_refused(a, addr,
			       "too many pending connections from this "
			       "address");
		goto fail_bev;
	}
	if (a->n_pending >= AGENTS_MAX_PENDING) {
		agents_refused(a, conn_peer(TAILQ_FIRST(&a->pending)->conn),
			       "pending connections full: the oldest makes "
			       "room");
		session_free(TAILQ_FIRST(&a->pending));
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto fail_bev;
	s->owner = a;
	s->ssl = identity ? NULL : bufferevent_openssl_get_ssl(bev);
	snprintf(s->identity, sizeof(s->identity), "%s",
		 identity ? identity : "");
	snprintf(s->addr, sizeof(s->addr), "%s", addr);
	s->deadline = evtimer_new(a->base, session_deadline, s);
	if (!s->deadline)
		goto fail_s;
	s->conn = conn_new(bev, addr, AGENTS_HELLO_MAX_FRAME, session_msg,
			   session_close, s);
	if (!s->conn)
		goto fail_ev;
	evtimer_add(s->deadline, &tv);
	LIST_INIT(&s->calls);
	TAILQ_INSERT_TAIL(&a->pending, s, link);
	a->n_pending++;
	return 0;
fail_ev:
	event_free(s->deadline);
fail_s:
	free(s);
fail_bev:
	bufferevent_free(bev);
	return -1;
}

static void agents_accept(struct evconnlistener *l, evutil_socket_t fd,
			  struct sockaddr *sa, int salen, void *arg)
{
	struct agents *a = arg;
	struct bufferevent *bev;
	SSL *ssl;
	char host[64] = "?", serv[16] = "?", peer[96];

	(void)l;
	getnameinfo(sa, (socklen_t)salen, host, sizeof(host), serv,
		    sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(peer, sizeof(peer), "%s:%s", host, serv);
	ssl = SSL_new(a->tls);
	if (!ssl) {
		log_warnx("agent %s: cannot set up TLS", peer);
		evutil_closesocket(fd);
		return;
	}
	/* An idle pending connection holds no TLS buffers. */
	SSL_set_mode(ssl, SSL_MODE_RELEASE_BUFFERS);
	bev = bufferevent_openssl_socket_new(a->base, fd, ssl,
					     BUFFEREVENT_SSL_ACCEPTING,
					     BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		SSL_free(ssl);
		evutil_closesocket(fd);
		log_warnx("agent %s: cannot set up session", peer);
		return;
	}
	if (agents_attach(a, bev, host, NULL) < 0)
		return;
	log_debug("agents", "%s: connection accepted", peer);
}

static void agents_listen_error(struct evconnlistener *l, void *arg)
{
	(void)l;
	(void)arg;
	/* EMFILE and friends: libevent keeps listening; say so once per
	 * burst rather than crash. */
	log_warn("agents: accept failed");
}

static struct call *agents_call_start(void *ctx, const char *node,
				      Ring__Envelope *req, unsigned timeout_ms,
				      Ring__Envelope__BodyCase interim,
				      Ring__Envelope__BodyCase final,
				      call_reply_cb cb, void *arg);

static void agents_call_cancel_cb(void *ctx, struct call *c)
{
	(void)ctx;
	agents_call_cancel(c);
}

struct agents *agents_new(struct event_base *base, SSL_CTX *tls,
			  const struct coord_conf *conf, struct nodes *nodes)
{
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
	TAILQ_INIT(&a->pending);
	TAILQ_INIT(&a->active);
	ratelimit_init(&a->tls_rl, TLS_WORDS_LOG_MS);
	a->base = base;
	a->tls = tls;
	a->conf = conf;
	a->nodes = nodes;
	a->calls.start = agents_call_start;
	a->calls.cancel = agents_call_cancel_cb;
	a->calls.ctx = a;
	snprintf(port, sizeof(port), "%u", conf->listen_port);
	rc = getaddrinfo(conf->listen_host, port, &hints, &res);
	if (rc) {
		log_warnx("listen %s: %s", conf->listen_host, gai_strerror(rc));
		goto fail;
	}
	a->listener = evconnlistener_new_bind(
		base, agents_accept, a,
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
	while (!TAILQ_EMPTY(&a->pending))
		session_free(TAILQ_FIRST(&a->pending));
	while (!TAILQ_EMPTY(&a->active))
		session_free(TAILQ_FIRST(&a->active));
	if (a->listener)
		evconnlistener_free(a->listener);
	free(a);
}

unsigned agents_active(const struct agents *a)
{
	const struct session *s;
	unsigned k = 0;

	TAILQ_FOREACH(s, &a->active, link)
	k += s->node != NULL;
	return k;
}

unsigned agents_pending(const struct agents *a)
{
	return a->n_pending;
}

void agents_set_change_cb(struct agents *a, agents_change_cb cb, void *arg)
{
	a->change_cb = cb;
	a->change_arg = arg;
}

const struct call_iface *agents_calls(struct agents *a)
{
	return &a->calls;
}

static struct call *agents_call_start(void *ctx, const char *node,
				      Ring__Envelope *req, unsigned timeout_ms,
				      Ring__Envelope__BodyCase interim,
				      Ring__Envelope__BodyCase final,
				      call_reply_cb cb, void *arg)
{
	struct agents *a = ctx;
	struct node *n = nodes_find(a->nodes, node);
	struct session *s = n && n->state == NODE_UP ? n->session : NULL;
	struct call *c;

	if (!s) {
		errno = ENOTCONN;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->timer = evtimer_new(a->base, call_timeout, c);
	if (!c->timer) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->s = s;
	c->id = ++s->next_id;
	c->timeout_ms = timeout_ms;
	c->interim = interim;
	c->final = final;
	c->cb = cb;
	c->arg = arg;
	req->request_id = c->id;
	if (conn_send(s->conn, req) < 0) {
		event_free(c->timer);
		free(c);
		errno = ENOTCONN;
		return NULL;
	}
	LIST_INSERT_HEAD(&s->calls, c, link);
	call_arm(c);
	return c;
}
