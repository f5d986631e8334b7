/* The agent's session with the coordinator: connect, Hello, heartbeats,
 * reconnect backoff, rescans, signals (see agent.h). */
#include "agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "clock.h"
#include "conn.h"
#include "counters.h"
#include "inventory.h"
#include "lldp.h"
#include "log.h"
#include "ops.h"
#include "ratelimit.h"
#include "resolve.h"
#include "rdma_events.h"
#include "tls.h"
#include "tls_words.h"

/* Netlink bursts (an address and a route appear together) are folded into
 * one rescan this long after the last event. */
#define AGENT_RESCAN_DEBOUNCE_MS 300

enum agent_state {
	AGENT_IDLE,	  /* waiting to reconnect */
	AGENT_CONNECTING, /* TCP + TLS handshake */
	AGENT_HELLO,	  /* Hello sent, waiting for HelloAck */
	AGENT_ACTIVE,
};

struct agent {
	const struct agent_conf *conf;
	struct event_base *base;
	struct evdns_base *dns;
	SSL_CTX *tls;
	struct conn *conn;
	enum agent_state state;
	unsigned attempt;
	uint64_t seq;
	uint32_t hb_interval_ms;
	uint32_t hb_misses;
	Ring__Inventory *sent; /* last inventory the coordinator has */
	struct lldp *lldp;
	struct ops *ops;
	struct resolve *resolve;   /* host-name lookups (ResolveRequest) */
	struct counters *counters; /* NULL: counters_interval 0 */
	struct rdma_events *rdma_events;
	char agent_id[33]; /* random per start: tells our own beacons apart */
	char mgmt_address[64];
	char mgmt_interface[IFNAMSIZ];
	int nl_fd;
	struct event *reconnect_ev, *deadline_ev, *heartbeat_ev, *rescan_ev;
	struct event *nl_ev, *sig_term, *sig_int, *sig_hup, *watchdog_ev;
	struct event *counters_ev;
	struct ratelimit tls_rl; /* the TLS failures' words (one peer) */
};

static void agent_connect(struct agent *a);

static struct timeval agent_tv(uint64_t ms)
{
	struct timeval tv = {.tv_sec = (time_t)(ms / 1000),
			     .tv_usec = (suseconds_t)((ms % 1000) * 1000)};
	return tv;
}

uint64_t agent_backoff_ms(uint64_t min_ms, uint64_t max_ms, unsigned attempt)
{
	uint64_t d = min_ms ? min_ms : 1;

	while (attempt-- && d < max_ms)
		d *= 2;
	return d < max_ms ? d : max_ms;
}

static void agent_reply(void *arg, uint64_t request_id,
			Ring__Envelope__BodyCase type, void *body)
{
	struct agent *a = arg;

	if (a->conn)
		conn_send_body(a->conn, request_id, type, body);
}

static void agent_send(struct agent *a, Ring__Envelope__BodyCase type,
		       void *body)
{
	agent_reply(a, 0, type, body);
}

static void agent_send_neighbours(struct agent *a)
{
	/* Static: the table is up to LLDP_MAX_NEIGHBOURS (256) entries, too
	 * much for the stack; the event loop is the only caller. */
	static struct lldp_neighbour nb[LLDP_MAX_NEIGHBOURS];
	static Ring__Neighbour msgs[LLDP_MAX_NEIGHBOURS];
	static Ring__Neighbour *ptrs[LLDP_MAX_NEIGHBOURS];
	static char macs[LLDP_MAX_NEIGHBOURS][18];
	static struct lldp_port_stats ps[LLDP_MAX_PORTS];
	static Ring__NeighbourPort pmsgs[LLDP_MAX_PORTS];
	static Ring__NeighbourPort *pptrs[LLDP_MAX_PORTS];
	Ring__NeighbourTable t = RING__NEIGHBOUR_TABLE__INIT;
	struct timespec now;
	uint64_t now_ms;
	size_t n, np, nr = 0;

	if (a->state != AGENT_ACTIVE)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	now_ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
	n = lldp_neighbours(a->lldp, nb, LLDP_MAX_NEIGHBOURS);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *m = nb[i].remote_mac;

		ring__neighbour__init(&msgs[i]);
		snprintf(macs[i], sizeof(macs[i]),
			 "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
			 m[3], m[4], m[5]);
		msgs[i].local_interface = nb[i].local_if;
		msgs[i].remote_node = nb[i].remote_node;
		msgs[i].remote_interface = nb[i].remote_if;
		msgs[i].remote_agent_id = nb[i].remote_agent_id;
		msgs[i].remote_mac = macs[i];
		msgs[i].ttl_s = nb[i].ttl;
		msgs[i].age_ms = (uint32_t)(now_ms - nb[i].last_heard_ms);
		ptrs[i] = &msgs[i];
	}
	t.n_neighbours = n;
	t.neighbours = ptrs;
	/* Ports that refused claims (full): the coordinator makes a finding
	 * of it. */
	np = lldp_ports(a->lldp, ps, LLDP_MAX_PORTS);
	for (size_t i = 0; i < np; i++) {
		if (!ps[i].claims_refused)
			continue;
		ring__neighbour_port__init(&pmsgs[nr]);
		pmsgs[nr].local_interface = ps[i].local_if;
		pmsgs[nr].claims_refused = ps[i].claims_refused;
		pptrs[nr] = &pmsgs[nr];
		nr++;
	}
	t.n_ports = nr;
	t.ports = pptrs;
	t.beacons_available = lldp_error(a->lldp) == NULL;
	t.beacons_error =
		(char *)(lldp_error(a->lldp) ? lldp_error(a->lldp) : "");
	t.agent_id = a->agent_id;
	log_debug("agent",
		  "sending %zu LLDP neighbours (%zu ports refused "
		  "claims)",
		  n, nr);
	agent_send(a, RING__ENVELOPE__BODY_NEIGHBOUR_TABLE, &t);
}

static void agent_lldp_changed(void *arg)
{
	agent_send_neighbours(arg);
}

/* Beacon on every data interface that has carrier, addressed or not. */
static void agent_beacon_on(struct agent *a, const Ring__Inventory *inv)
{
	const char *names[64];
	size_t n = 0;

	for (size_t i = 0; i < inv->n_interfaces && n < 64; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];

		if (!f->management && f->carrier && f->admin_up)
			names[n++] = f->name;
	}
	if (lldp_set_interfaces(a->lldp, names, n) < 0)
		log_debug("agent", "beacons unavailable: %s",
			  lldp_error(a->lldp) ? lldp_error(a->lldp) : "?");
}

/* Collect the inventory and send it if it changed (or always, if force). */
static void agent_scan(struct agent *a, int force)
{
	struct inventory_src src = {
		.sysfs_root = a->conf->sysfs_root,
		.procfs_root = a->conf->procfs_root,
		.mgmt_interface = a->mgmt_interface,
		.mgmt_address = a->mgmt_address,
		.with_rdma = 1,
	};
	struct ifaddrs *ifa = NULL;
	Ring__Inventory *inv;

	if (getifaddrs(&ifa) < 0)
		log_warn("getifaddrs");
	src.addrs = ifa;
	inv = inventory_collect(a->conf, &src);
	if (ifa)
		freeifaddrs(ifa);
	if (!inv) {
		log_warn("inventory");
		return;
	}
	agent_beacon_on(a, inv);
	rdma_events_sync(a->rdma_events, inv);
	if (a->state != AGENT_ACTIVE ||
	    (!force && a->sent && !inventory_changed(a->sent, inv))) {
		inventory_free(inv);
		return;
	}
	log_debug("agent",
		  "sending inventory: %zu interfaces, %zu RDMA devices",
		  inv->n_interfaces, inv->n_rdma_devices);
	agent_send(a, RING__ENVELOPE__BODY_INVENTORY, inv);
	inventory_free(a->sent);
	a->sent = inv;
}

static void agent_schedule_reconnect(struct agent *a)
{
	uint64_t base = agent_backoff_ms(a->conf->reconnect_min_ms,
					 a->conf->reconnect_max_ms, a->attempt);
	uint32_t r = 0;
	uint64_t delay;
	struct timeval tv;

	/* Half fixed, half random: agents restarted together by a power
	 * cycle do not reconnect in lockstep. */
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint32_t)rand();
	delay = base / 2 + (base > 1 ? r % (base / 2 + 1) : 0);
	if (a->attempt < 63)
		a->attempt++;
	tv = agent_tv(delay);
	a->state = AGENT_IDLE;
	evtimer_add(a->reconnect_ev, &tv);
	log_debug("agent", "reconnecting in %llu ms",
		  (unsigned long long)delay);
	sd_notifyf(0, "STATUS=not connected; retrying in %llu ms",
		   (unsigned long long)delay);
}

static void agent_drop(struct agent *a)
{
	/* Tests and probes belong to the session that asked for them. */
	ops_cancel_all(a->ops);
	resolve_cancel(a->resolve);
	evtimer_del(a->deadline_ev);
	evtimer_del(a->heartbeat_ev);
	conn_free(a->conn);
	a->conn = NULL;
	inventory_free(a->sent);
	a->sent = NULL;
}

static void agent_on_close(struct conn *c, int err, const char *reason,
			   void *arg)
{
	struct agent *a = arg;
	char more[80] = "", words[1200];
	unsigned held;

	/* TLS 1.3 clients finish the handshake before the server has
	 * judged their certificate: a refusal whose alert was lost looks
	 * like a close before any answer. */
	if (a->state == AGENT_HELLO && err == -ECONNRESET) {
		tls_words_closed(bufferevent_openssl_get_ssl(conn_bev(c)),
				 words, sizeof(words));
		reason = words;
	}
	if (conn_tls_failed(c) || reason == words) {
		/* In words, once per TLS_WORDS_LOG_MS: a wrong CA fails the
		 * same way on every retry. */
		if (ratelimit_ok(&a->tls_rl, "coordinator", clock_now_ms(),
				 &held)) {
			if (held)
				snprintf(more, sizeof(more),
					 " [%u more TLS failures since the "
					 "last such line]",
					 held);
			log_warnx("cannot connect to coordinator %s:%u: "
				  "%s%s%s%s%s%s",
				  a->conf->coordinator_host,
				  a->conf->coordinator_port, reason,
				  reason == words ? " (cert " : "",
				  reason == words ? a->conf->cert : "",
				  reason == words ? ", node " : "",
				  reason == words ? a->conf->node : "", more);
		} else
			log_debug("agent", "TLS failure again: %s", reason);
	} else if (a->state == AGENT_ACTIVE)
		log_warnx("lost the coordinator: %s%s", reason,
			  err == -ETIMEDOUT ? " (no heartbeat answer)" : "");
	else
		log_warnx("cannot connect to coordinator %s:%u: %s",
			  a->conf->coordinator_host, a->conf->coordinator_port,
			  reason);
	agent_drop(a);
	agent_schedule_reconnect(a);
}

static void agent_heartbeat(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	Ring__Heartbeat hb = RING__HEARTBEAT__INIT;

	(void)fd;
	(void)what;
	hb.seq = ++a->seq;
	hb.mem_available_kib =
		inventory_mem_available_kib(a->conf->procfs_root);
	agent_send(a, RING__ENVELOPE__BODY_HEARTBEAT, &hb);
}

static int agent_listening(const char *ifname, void *arg)
{
	struct agent *a = arg;

	return lldp_listening(a->lldp, ifname);
}

/* Port counters of the data interfaces the coordinator knows of (the last
 * inventory sent), while the session is up. */
static void agent_counters(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	const Ring__CountersReport *r;
	struct timespec now;

	(void)fd;
	(void)what;
	if (a->state != AGENT_ACTIVE || !a->sent)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	r = counters_sample(a->counters, a->sent,
			    (uint64_t)now.tv_sec * 1000 +
				    (uint64_t)now.tv_nsec / 1000000);
	log_debug("agent", "sending counters of %zu ports", r->n_ports);
	agent_send(a, RING__ENVELOPE__BODY_COUNTERS_REPORT, (void *)r);
}

static void agent_hello_ack(struct agent *a, const Ring__HelloAck *ack)
{
	struct timeval tv;

	evtimer_del(a->deadline_ev);
	a->state = AGENT_ACTIVE;
	a->attempt = 0;
	a->hb_interval_ms = ack->heartbeat_interval_ms >= 100
				    ? ack->heartbeat_interval_ms
				    : 100;
	a->hb_misses = ack->heartbeat_misses ? ack->heartbeat_misses : 3;
	tv = agent_tv(a->hb_interval_ms);
	evtimer_add(a->heartbeat_ev, &tv);
	/* The coordinator echoes every heartbeat: silence means it is gone. */
	conn_set_read_timeout(a->conn, a->hb_interval_ms * a->hb_misses);
	log_info("connected to coordinator %s (%s:%u) from %s on %s",
		 ack->coordinator, a->conf->coordinator_host,
		 a->conf->coordinator_port, a->mgmt_address,
		 a->mgmt_interface[0] ? a->mgmt_interface : "?");
	sd_notifyf(0, "STATUS=connected to %s", ack->coordinator);
	agent_scan(a, 1);
	agent_send_neighbours(a);
}

static void agent_on_msg(struct conn *c, Ring__Envelope *env, void *arg)
{
	struct agent *a = arg;

	switch (env->body_case) {
	case RING__ENVELOPE__BODY_HELLO_ACK:
		if (a->state == AGENT_HELLO)
			agent_hello_ack(a, env->hello_ack);
		break;
	case RING__ENVELOPE__BODY_HEARTBEAT:
		break;
	case RING__ENVELOPE__BODY_ERROR:
		log_warnx("coordinator says: %s (code %d)", env->error->text,
			  env->error->code);
		break;
	default:
		if (a->state == AGENT_ACTIVE &&
		    (ops_handle(a->ops, env) ||
		     resolve_handle(a->resolve, env)))
			break;
		conn_send_error(c, env->request_id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"%s is not a request an agent serves",
				frame_type_name((uint16_t)env->body_case));
		break;
	}
	frame_free(env);
}

/* The management address is the local end of this session. */
static void agent_learn_mgmt(struct agent *a)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct ifaddrs *ifa;
	int fd = bufferevent_getfd(conn_bev(a->conn));

	a->mgmt_address[0] = '\0';
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, len, a->mgmt_address,
			sizeof(a->mgmt_address), NULL, 0, NI_NUMERICHOST))
		return;
	if (a->conf->mgmt_interface[0]) {
		snprintf(a->mgmt_interface, sizeof(a->mgmt_interface), "%s",
			 a->conf->mgmt_interface);
		return;
	}
	if (getifaddrs(&ifa) < 0)
		return;
	if (inventory_iface_of_address(ifa, a->mgmt_address, a->mgmt_interface,
				       sizeof(a->mgmt_interface)) < 0)
		a->mgmt_interface[0] = '\0';
	freeifaddrs(ifa);
}

static void agent_on_connect(struct conn *c, void *arg)
{
	struct agent *a = arg;
	static char *caps[] = {"inventory", "lldp", "probe", "tcp_test",
			       "rdma_test"};
	Ring__Hello hello = RING__HELLO__INIT;

	(void)c;
	agent_learn_mgmt(a);
	/* Probes never leave by the management interface. */
	ops_set_mgmt_interface(a->ops, a->mgmt_interface);
	hello.node = (char *)a->conf->node;
	hello.agent_version = RING_VERSION;
	hello.n_capabilities = sizeof(caps) / sizeof(caps[0]);
	hello.capabilities = caps;
	a->state = AGENT_HELLO;
	agent_send(a, RING__ENVELOPE__BODY_HELLO, &hello);
	log_debug("agent", "TLS up, Hello sent as %s", a->conf->node);
}

static void agent_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;

	(void)fd;
	(void)what;
	log_warnx(
		"cannot connect to coordinator %s:%u: no answer within %llu ms",
		a->conf->coordinator_host, a->conf->coordinator_port,
		(unsigned long long)a->conf->connect_timeout_ms);
	agent_drop(a);
	agent_schedule_reconnect(a);
}

/* A socket bound to source_address for a coordinator at dst (NULL: a
 * name, resolved later in the source's family), or -1 after saying why
 * in words. -2 when no source address is configured. */
static int agent_source_socket(struct agent *a, const struct sockaddr *dst)
{
	const struct agent_conf *conf = a->conf;
	struct sockaddr_storage src;
	int srclen = sizeof(src), fd;

	if (!conf->source_family)
		return -2;
	if (dst && dst->sa_family != conf->source_family) {
		log_warnx("cannot connect to coordinator %s:%u from "
			  "source_address %s: the coordinator's address is "
			  "%s and the source is %s (give a source_address of "
			  "the coordinator's family, or none)",
			  conf->coordinator_host, conf->coordinator_port,
			  conf->source_address,
			  dst->sa_family == AF_INET6 ? "IPv6" : "IPv4",
			  conf->source_family == AF_INET6 ? "IPv6" : "IPv4");
		return -1;
	}
	memset(&src, 0, sizeof(src));
	if (evutil_parse_sockaddr_port(conf->source_address,
				       (struct sockaddr *)&src, &srclen) < 0) {
		log_warnx("source_address %s: not an address",
			  conf->source_address);
		return -1;
	}
	fd = socket(conf->source_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		log_warn("cannot open a socket for the coordinator");
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&src, (socklen_t)srclen) < 0) {
		int e = errno;

		log_warnx("cannot connect to coordinator %s:%u: cannot bind to "
			  "source_address %s: %s%s",
			  conf->coordinator_host, conf->coordinator_port,
			  conf->source_address, strerror(e),
			  e == EADDRNOTAVAIL ? " (no interface of this host "
					       "has that address now; add it "
					       "or change source_address)"
					     : "");
		close(fd);
		return -1;
	}
	return fd;
}

static void agent_connect(struct agent *a)
{
	const struct agent_conf *conf = a->conf;
	struct sockaddr_storage ss;
	int sslen = sizeof(ss);
	struct bufferevent *bev;
	char peer[300], hp[300];
	struct timeval tv;
	SSL *ssl;
	int rc, fd, literal;

	a->state = AGENT_CONNECTING;
	snprintf(peer, sizeof(peer), "coordinator %s:%u",
		 conf->coordinator_host, conf->coordinator_port);
	snprintf(hp, sizeof(hp),
		 strchr(conf->coordinator_host, ':') ? "[%s]:%u" : "%s:%u",
		 conf->coordinator_host, conf->coordinator_port);
	literal = evutil_parse_sockaddr_port(hp, (struct sockaddr *)&ss,
					     &sslen) == 0;
	/* Bound before connecting (multi-homed hosts; a test agent's own
	 * loopback address); a failure is logged and retried with the
	 * backoff, as a refused connection is. */
	fd = agent_source_socket(a, literal ? (struct sockaddr *)&ss : NULL);
	if (fd == -1) {
		agent_schedule_reconnect(a);
		return;
	}
	ssl = SSL_new(a->tls);
	if (!ssl || tls_client_expect_name(ssl, conf->coordinator_name) < 0) {
		SSL_free(ssl);
		goto retry;
	}
	bev = bufferevent_openssl_socket_new(a->base, fd < 0 ? -1 : fd, ssl,
					     BUFFEREVENT_SSL_CONNECTING,
					     BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		SSL_free(ssl);
		goto retry;
	}
	fd = -1; /* the bufferevent's now */
	a->conn = conn_new(bev, peer, conf->max_frame, agent_on_msg,
			   agent_on_close, a);
	if (!a->conn) {
		bufferevent_free(bev);
		goto retry;
	}
	conn_set_connect_cb(a->conn, agent_on_connect);
	tv = agent_tv(conf->connect_timeout_ms);
	evtimer_add(a->deadline_ev, &tv);
	if (literal) {
		rc = bufferevent_socket_connect(bev, (struct sockaddr *)&ss,
						sslen);
	} else {
		if (!a->dns)
			a->dns = evdns_base_new(
				a->base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
		/* With a source address, only the names of its family. */
		rc = a->dns ? bufferevent_socket_connect_hostname(
				      bev, a->dns,
				      conf->source_family ? conf->source_family
							  : AF_UNSPEC,
				      conf->coordinator_host,
				      conf->coordinator_port)
			    : -1;
	}
	/* An immediate failure already went through agent_on_close, which
	 * scheduled the retry. */
	(void)rc;
	log_debug("agent", "connecting to %s", peer);
	return;
retry:
	if (fd >= 0)
		close(fd);
	log_warnx("cannot set up a TLS session for %s", peer);
	agent_schedule_reconnect(a);
}

static void agent_reconnect_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	agent_connect(arg);
}

static void agent_rescan_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	struct timeval tv = agent_tv(a->conf->inventory_interval_ms);

	(void)fd;
	(void)what;
	agent_scan(a, 0);
	evtimer_add(a->rescan_ev, &tv);
}

static void agent_rescan_soon(struct agent *a)
{
	struct timeval tv = agent_tv(AGENT_RESCAN_DEBOUNCE_MS);

	evtimer_add(a->rescan_ev, &tv);
}

/* Link and address changes: rescan soon instead of at the next period. */
static void agent_netlink_cb(evutil_socket_t fd, short what, void *arg)
{
	char buf[8192];

	(void)what;
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	agent_rescan_soon(arg);
}

/* RDMA port state and GID changes: the same (the kernel updates RoCE GIDs
 * from a work queue, after the address change netlink reported). */
static void agent_rdma_changed(void *arg)
{
	agent_rescan_soon(arg);
}

static int agent_netlink_open(struct agent *a)
{
	struct sockaddr_nl snl = {.nl_family = AF_NETLINK,
				  .nl_groups = RTMGRP_LINK |
					       RTMGRP_IPV4_IFADDR |
					       RTMGRP_IPV6_IFADDR};

	a->nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
			  NETLINK_ROUTE);
	if (a->nl_fd < 0 ||
	    bind(a->nl_fd, (struct sockaddr *)&snl, sizeof(snl)) < 0) {
		log_warn("netlink: link changes are seen only every %llu ms",
			 (unsigned long long)a->conf->inventory_interval_ms);
		if (a->nl_fd >= 0)
			close(a->nl_fd);
		a->nl_fd = -1;
		return 0;
	}
	a->nl_ev = event_new(a->base, a->nl_fd, EV_READ | EV_PERSIST,
			     agent_netlink_cb, a);
	return a->nl_ev && event_add(a->nl_ev, NULL) == 0 ? 0 : -1;
}

static void agent_signal(evutil_socket_t sig, short what, void *arg)
{
	struct agent *a = arg;

	(void)what;
	if (sig == SIGHUP) {
		log_info("SIGHUP: rescanning the inventory");
		agent_scan(a, 0);
		return;
	}
	log_info("signal %d: shutting down", (int)sig);
	sd_notify(0, "STOPPING=1");
	event_base_loopbreak(a->base);
}

static void agent_watchdog(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	sd_notify(0, "WATCHDOG=1");
}

static int agent_make_id(struct agent *a)
{
	uint8_t r[16];

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return -1;
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(a->agent_id + 2 * i, 3, "%02x", r[i]);
	return 0;
}

struct agent *agent_new(const struct agent_conf *conf)
{
	struct agent *a = calloc(1, sizeof(*a));
	uint64_t wd_usec;

	if (!a)
		return NULL;
	a->conf = conf;
	a->nl_fd = -1;
	ratelimit_init(&a->tls_rl, TLS_WORDS_LOG_MS);
	signal(SIGPIPE, SIG_IGN);
	a->base = event_base_new();
	if (!a->base)
		goto fail;
	a->tls = tls_ctx_new(0, conf->ca, conf->cert, conf->key);
	if (!a->tls)
		goto fail;
	a->reconnect_ev = evtimer_new(a->base, agent_reconnect_cb, a);
	a->deadline_ev = evtimer_new(a->base, agent_deadline, a);
	a->heartbeat_ev =
		event_new(a->base, -1, EV_PERSIST, agent_heartbeat, a);
	a->rescan_ev = evtimer_new(a->base, agent_rescan_cb, a);
	a->sig_term = evsignal_new(a->base, SIGTERM, agent_signal, a);
	a->sig_int = evsignal_new(a->base, SIGINT, agent_signal, a);
	a->sig_hup = evsignal_new(a->base, SIGHUP, agent_signal, a);
	if (!a->reconnect_ev || !a->deadline_ev || !a->heartbeat_ev ||
	    !a->rescan_ev || !a->sig_term || !a->sig_int || !a->sig_hup ||
	    evsignal_add(a->sig_term, NULL) || evsignal_add(a->sig_int, NULL) ||
	    evsignal_add(a->sig_hup, NULL))
		goto fail;
	if (agent_netlink_open(a) < 0)
		goto fail;
	a->rdma_events = rdma_events_new(a->base, agent_rdma_changed, a);
	if (!a->rdma_events)
		goto fail;
	if (agent_make_id(a) < 0)
		goto fail;
	a->lldp = lldp_new(a->base, conf->node, a->agent_id,
			   (unsigned)conf->lldp_interval_ms, agent_lldp_changed,
			   a);
	a->ops = ops_new(a->base, a->conf, agent_reply, a);
	a->resolve = resolve_new(a->base, a->conf->node, agent_reply, a);
	if (!a->lldp || !a->ops || !a->resolve)
		goto fail;
	if (conf->counters_interval_ms) {
		struct timeval tv = agent_tv(conf->counters_interval_ms);

		a->counters = counters_new(conf->sysfs_root);
		a->counters_ev =
			event_new(a->base, -1, EV_PERSIST, agent_counters, a);
		if (!a->counters || !a->counters_ev ||
		    event_add(a->counters_ev, &tv))
			goto fail;
		counters_set_listening(a->counters, agent_listening, a);
	}
	if (sd_watchdog_enabled(0, &wd_usec) > 0) {
		struct timeval tv = {.tv_sec = wd_usec / 2000000,
				     .tv_usec = (wd_usec / 2) % 1000000};

		a->watchdog_ev =
			event_new(a->base, -1, EV_PERSIST, agent_watchdog, a);
		if (!a->watchdog_ev || event_add(a->watchdog_ev, &tv))
			goto fail;
	}
	return a;
fail:
	log_warnx("agent: initialisation failed");
	agent_free(a);
	return NULL;
}

int agent_run(struct agent *a)
{
	struct timeval tv = agent_tv(a->conf->inventory_interval_ms);

	log_info("ring-agent %s: node %s, coordinator %s:%u", RING_VERSION,
		 a->conf->node, a->conf->coordinator_host,
		 a->conf->coordinator_port);
	evtimer_add(a->rescan_ev, &tv);
	agent_scan(a, 0); /* beacons start before the session does */
	agent_connect(a);
	sd_notify(0, "READY=1");
	if (event_base_dispatch(a->base) < 0)
		return -1;
	return 0;
}

void agent_free(struct agent *a)
{
	struct event *evs[] = {a->reconnect_ev, a->deadline_ev, a->heartbeat_ev,
			       a->rescan_ev,	a->nl_ev,	a->sig_term,
			       a->sig_int,	a->sig_hup,	a->watchdog_ev,
			       a->counters_ev};

	if (!a)
		return;
	conn_free(a->conn);
	inventory_free(a->sent);
	ops_free(a->ops);
	resolve_free(a->resolve);
	lldp_free(a->lldp);
	counters_free(a->counters);
	rdma_events_free(a->rdma_events);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (evs[i])
			event_free(evs[i]);
	if (a->nl_fd >= 0)
		close(a->nl_fd);
	if (a->dns)
		evdns_base_free(a->dns, 0);
	/* Let what is still queued run before the loop goes: a deferred
	 * bufferevent callback holds the TLS session, and a cancelled test is
	 * reaped from the loop once its threads are joined. Bounded: ~2 s. */
	for (int i = 0; a->base && i < 100 &&
			event_base_loop(a->base, EVLOOP_NONBLOCK) == 0;
	     i++)
		usleep(20000);
	if (a->tls)
		SSL_CTX_free(a->tls);
	if (a->base)
		event_base_free(a->base);
	free(a);
}
