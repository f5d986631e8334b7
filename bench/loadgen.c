/* ring-loadgen: many agent sessions in one process, for the fleet bench.
 *
 * Promises: N sessions to one coordinator over real TLS 1.3, each with
 * its own node certificate (issued with common/pki.c into a cache
 * directory and reused) and its own source address on 127.0.0.0/8;
 * each speaks the protocol as ring-agent does (Hello, then Inventory of a
 * plausible two-port data node and its neighbour table, heartbeats at the
 * coordinator's interval, counters at counters_interval) and answers every
 * request: probes with a well-formed "not reachable" reply, tests and
 * everything else with a typed Error, so that no request of the
 * coordinator's waits on it. Sessions that drop reconnect with a backoff.
 * Memory per session is bounded: a fixed record, three timers, the TLS
 * session and frames up to --max-frame; messages are built on the stack.
 *
 * Nodes form rings of --ring-size (default 4): node j's p0 is cabled to
 * node j+1's p1, every cable its own /30 in 10.0.0.0/8. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "conn.h"
#include "log.h"
#include "pki.h"
#include "tls.h"

#define PROG "ring-loadgen"
#define LG_MAX_SESSIONS 200000
#define LG_PORTS 2

enum lg_state { LG_IDLE, LG_QUEUED, LG_CONNECTING, LG_HELLO, LG_ACTIVE };

struct lg;

struct lg_sess {
	struct lg *lg;
	unsigned idx;
	enum lg_state state;
	unsigned attempt;
	struct conn *conn;
	X509 *crt;
	EVP_PKEY *key;
	struct event *timer;  /* reconnect backoff, or the connect deadline */
	struct event *hb_ev;  /* heartbeats */
	struct event *ctr_ev; /* counters */
	uint64_t seq;
	uint64_t ctr_last_ms;
	uint64_t bytes;	      /* what the fake ports have moved */
	unsigned next_queued; /* the connect queue, by index; 0 = none */
};

struct lg_opts {
	unsigned n;
	const char *coordinator; /* HOST:PORT, an address */
	const char *coordinator_name;
	const char *pki;
	const char *prefix;
	unsigned source_o2; /* 127.O2.x.y */
	unsigned parallel;
	unsigned ring_size;
	uint64_t counters_ms;
	uint32_t max_frame;
	int issue_only;
	const char *debug;
};

struct lg {
	struct lg_opts o;
	struct event_base *base;
	SSL_CTX *tls;
	struct sockaddr_storage coord;
	int coord_len;
	struct lg_sess *s;
	uint64_t run_id; /* agent ids: run_id and the index */
	unsigned inflight;
	unsigned q_head, q_tail; /* 1-based indexes; 0 = empty */
	unsigned up, failures;
	struct event *report_ev, *sig_term, *sig_int;
};

static uint64_t lg_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static struct timeval lg_tv(uint64_t ms)
{
	struct timeval tv = {.tv_sec = (time_t)(ms / 1000),
			     .tv_usec = (suseconds_t)((ms % 1000) * 1000)};
	return tv;
}

static uint32_t lg_rand(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint32_t)rand();
	return r;
}

/* The bench computes the same: 250 hosts per /24 (no .0, no .255). */
static void lg_source(const struct lg *lg, unsigned i, char *buf, size_t len)
{
	snprintf(buf, len, "127.%u.%u.%u", lg->o.source_o2 + i / 64000,
		 (i / 250) % 256, 1 + i % 250);
}

static void lg_node(const struct lg *lg, unsigned i, char *buf, size_t len)
{
	snprintf(buf, len, "%s%05u", lg->o.prefix, i);
}

static void lg_agent_id(const struct lg *lg, unsigned i, char *buf, size_t len)
{
	snprintf(buf, len, "%016llx%016x", (unsigned long long)lg->run_id, i);
}

/* Node i's ring: its first member and size (the last ring may be short). */
static unsigned lg_ring_first(const struct lg *lg, unsigned i)
{
	return i - i % lg->o.ring_size;
}

static unsigned lg_ring_len(const struct lg *lg, unsigned i)
{
	unsigned first = lg_ring_first(lg, i);

	return lg->o.n - first < lg->o.ring_size ? lg->o.n - first
						 : lg->o.ring_size;
}

/* The cable out of node i's p0 (to the next member's p1) is number i; its
 * /30 is 10.0.0.0 + 4i: .1 on p0, .2 on p1 of the next member. */
static void lg_cable_addr(unsigned cable, unsigned end, char *buf, size_t len)
{
	uint32_t a = 0x0a000000u + 4u * cable + 1u + end;

	snprintf(buf, len, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255,
		 (a >> 8) & 255, a & 255);
}

/* Neighbour across port p of node i: p0 faces the next member, p1 the
 * previous one; the cable into p1 is the previous member's. */
static unsigned lg_peer(const struct lg *lg, unsigned i, int port)
{
	unsigned first = lg_ring_first(lg, i), n = lg_ring_len(lg, i);
	unsigned pos = i - first;

	return first + (port == 0 ? (pos + 1) % n : (pos + n - 1) % n);
}

static void lg_mac(unsigned i, int port, char *buf, size_t len)
{
	snprintf(buf, len, "02:%02x:%02x:%02x:%02x:%02x", (i >> 24) & 255,
		 (i >> 16) & 255, (i >> 8) & 255, i & 255, port);
}

static void lg_send(struct lg_sess *s, uint64_t id,
		    Ring__Envelope__BodyCase type, void *body)
{
	if (s->conn)
		conn_send_body(s->conn, id, type, body);
}

/* ------------------------------------------------------------ messages */

static void lg_send_inventory(struct lg_sess *s)
{
	struct lg *lg = s->lg;
	Ring__Inventory inv = RING__INVENTORY__INIT;
	Ring__NetInterface ifs[1 + LG_PORTS], *ifp[1 + LG_PORTS];
	Ring__Ipv4Address ad[1 + LG_PORTS], *adp[1 + LG_PORTS];
	Ring__Memory mem = RING__MEMORY__INIT;
	char node[32], src[20], mac[1 + LG_PORTS][20], ip[1 + LG_PORTS][20];
	static char *names[] = {"mgmt0", "p0", "p1"};

	lg_node(lg, s->idx, node, sizeof(node));
	lg_source(lg, s->idx, src, sizeof(src));
	for (int k = 0; k < 1 + LG_PORTS; k++) {
		ring__net_interface__init(&ifs[k]);
		ring__ipv4_address__init(&ad[k]);
		ifs[k].name = names[k];
		ifs[k].ifindex = (uint32_t)k + 2;
		lg_mac(s->idx, k, mac[k], sizeof(mac[k]));
		ifs[k].mac = mac[k];
		ifs[k].mtu = k ? 9000 : 1500;
		ifs[k].admin_up = 1;
		ifs[k].carrier = 1;
		ifs[k].operstate = "up";
		ifs[k].speed_mbps = k ? 200000 : 1000;
		ifs[k].driver = k ? "mlx5_core" : "r8169";
		ifs[k].arp_ignore = k ? 1 : 0;
		ifs[k].arp_announce = k ? 2 : 0;
		if (k == 0) {
			snprintf(ip[k], sizeof(ip[k]), "%s", src);
			ad[k].prefix = 8;
			ifs[k].management = 1;
		} else {
			/* p0: this node's cable, end .1; p1: the previous
			 * member's cable, end .2. */
			lg_cable_addr(k == 1 ? s->idx : lg_peer(lg, s->idx, 1),
				      k == 1 ? 0 : 1, ip[k], sizeof(ip[k]));
			ad[k].prefix = 30;
			ifs[k].nominal_speed_mbps = 200000;
			ifs[k].nominal_gbps = 200;
		}
		ad[k].address = ip[k];
		adp[k] = &ad[k];
		ifs[k].n_ipv4 = 1;
		ifs[k].ipv4 = &adp[k];
		ifp[k] = &ifs[k];
	}
	mem.total_kib = 128ull << 20;
	mem.available_kib = 120ull << 20;
	inv.node = node;
	inv.hostname = node;
	inv.mgmt_address = src;
	inv.mgmt_interface = "mgmt0";
	inv.n_interfaces = 1 + LG_PORTS;
	inv.interfaces = ifp;
	inv.memory = &mem;
	inv.kernel = "6.1.0-loadgen";
	lg_send(s, 0, RING__ENVELOPE__BODY_INVENTORY, &inv);
}

static void lg_send_neighbours(struct lg_sess *s)
{
	struct lg *lg = s->lg;
	Ring__NeighbourTable t = RING__NEIGHBOUR_TABLE__INIT;
	Ring__Neighbour nb[LG_PORTS], *nbp[LG_PORTS];
	char id[40], rid[LG_PORTS][40], rnode[LG_PORTS][32], mac[LG_PORTS][20];
	static char *local[] = {"p0", "p1"}, *remote[] = {"p1", "p0"};
	size_t n = 0;

	lg_agent_id(lg, s->idx, id, sizeof(id));
	for (int p = 0; p < LG_PORTS && lg_ring_len(lg, s->idx) > 1; p++) {
		unsigned peer = lg_peer(lg, s->idx, p);

		/* A pair: both ports face the same node, as cabled. */
		ring__neighbour__init(&nb[n]);
		lg_node(lg, peer, rnode[n], sizeof(rnode[n]));
		lg_agent_id(lg, peer, rid[n], sizeof(rid[n]));
		lg_mac(peer, p == 0 ? 2 : 1, mac[n], sizeof(mac[n]));
		nb[n].local_interface = local[p];
		nb[n].remote_node = rnode[n];
		nb[n].remote_interface = remote[p];
		nb[n].remote_agent_id = rid[n];
		nb[n].remote_mac = mac[n];
		nb[n].ttl_s = 20;
		nb[n].age_ms = lg_rand() % 5000;
		nbp[n] = &nb[n];
		n++;
	}
	t.n_neighbours = n;
	t.neighbours = nbp;
	t.beacons_available = 1;
	t.beacons_error = "";
	t.agent_id = id;
	lg_send(s, 0, RING__ENVELOPE__BODY_NEIGHBOUR_TABLE, &t);
}

static void lg_counters(evutil_socket_t fd, short what, void *arg)
{
	struct lg_sess *s = arg;
	Ring__CountersReport r = RING__COUNTERS_REPORT__INIT;
	Ring__PortCounters pc[LG_PORTS], *pcp[LG_PORTS];
	static char *names[] = {"p0", "p1"};
	uint64_t now = lg_now_ms(),
		 dt = s->ctr_last_ms ? now - s->ctr_last_ms : 0;

	(void)fd;
	(void)what;
	if (s->state != LG_ACTIVE)
		return;
	/* A light, steady trickle: the survey's and the beacons' bytes. */
	s->bytes += 1000 * (dt / 1000 + 1);
	for (int p = 0; p < LG_PORTS; p++) {
		ring__port_counters__init(&pc[p]);
		pc[p].interface = names[p];
		pc[p].rx_bytes = pc[p].tx_bytes = s->bytes;
		pc[p].rx_packets = pc[p].tx_packets = s->bytes / 500;
		pc[p].rx_bytes_per_s = pc[p].tx_bytes_per_s = dt ? 1000.0 : 0;
		pc[p].rdma_device = "";
		pc[p].carrier = 1;
		pc[p].listening = 1;
		pcp[p] = &pc[p];
	}
	r.interval_ms = dt;
	r.n_ports = LG_PORTS;
	r.ports = pcp;
	r.port_state = 1;
	s->ctr_last_ms = now;
	lg_send(s, 0, RING__ENVELOPE__BODY_COUNTERS_REPORT, &r);
}

static void lg_heartbeat(evutil_socket_t fd, short what, void *arg)
{
	struct lg_sess *s = arg;
	Ring__Heartbeat hb = RING__HEARTBEAT__INIT;

	(void)fd;
	(void)what;
	hb.seq = ++s->seq;
	hb.mem_available_kib = 120ull << 20;
	lg_send(s, 0, RING__ENVELOPE__BODY_HEARTBEAT, &hb);
}

/* A probe: answered at once, not reachable (no data plane here). */
static void lg_probe(struct lg_sess *s, const Ring__Envelope *env)
{
	const Ring__ProbeRequest *q = env->probe_request;
	Ring__ProbeReply rep = RING__PROBE_REPLY__INIT;

	rep.route_kind = "direct";
	rep.route_interface = q->local_interface && *q->local_interface
				      ? q->local_interface
				      : "p0";
	rep.route_gateway = "";
	rep.route_source = "";
	rep.reachable = 0;
	rep.error = "load generator session: no data plane";
	lg_send(s, env->request_id, RING__ENVELOPE__BODY_PROBE_REPLY, &rep);
}

static void lg_kick(struct lg *lg);

static void lg_active(struct lg_sess *s, const Ring__HelloAck *ack)
{
	struct lg *lg = s->lg;
	uint32_t hb = ack->heartbeat_interval_ms >= 100
			      ? ack->heartbeat_interval_ms
			      : 100;
	uint32_t misses = ack->heartbeat_misses ? ack->heartbeat_misses : 3;
	struct timeval tv = lg_tv(hb);

	evtimer_del(s->timer);
	s->state = LG_ACTIVE;
	s->attempt = 0;
	lg->inflight--;
	lg->up++;
	event_add(s->hb_ev, &tv);
	conn_set_read_timeout(s->conn, hb * misses);
	lg_send_inventory(s);
	lg_send_neighbours(s);
	if (lg->o.counters_ms) {
		/* The first at a random phase: agents started over a join
		 * storm do not push in lockstep either. */
		tv = lg_tv(lg->o.counters_ms);
		event_add(s->ctr_ev, &tv);
	}
	lg_kick(lg);
}

static void lg_on_msg(struct conn *c, Ring__Envelope *env, void *arg)
{
	struct lg_sess *s = arg;

	switch (env->body_case) {
	case RING__ENVELOPE__BODY_HELLO_ACK:
		if (s->state == LG_HELLO)
			lg_active(s, env->hello_ack);
		break;
	case RING__ENVELOPE__BODY_HEARTBEAT:
		break;
	case RING__ENVELOPE__BODY_ERROR:
		log_debug("loadgen", "session %u: coordinator says: %s", s->idx,
			  env->error->text);
		break;
	case RING__ENVELOPE__BODY_PROBE_REQUEST:
		lg_probe(s, env);
		break;
	case RING__ENVELOPE__BODY_TEST_LISTEN_REQUEST:
	case RING__ENVELOPE__BODY_TEST_RUN_REQUEST:
	case RING__ENVELOPE__BODY_RDMA_SETUP:
	case RING__ENVELOPE__BODY_ALLREDUCE_SETUP:
	case RING__ENVELOPE__BODY_READ_TEST_REQUEST:
		conn_send_error(c, env->request_id,
				RING__ERROR_CODE__ERROR_INTERNAL,
				"%s: a load generator session has no data "
				"plane to test",
				frame_type_name((uint16_t)env->body_case));
		break;
	case RING__ENVELOPE__BODY_RDMA_CONTROL:
	case RING__ENVELOPE__BODY_ALLREDUCE_CONTROL:
		conn_send_error(c, env->request_id,
				RING__ERROR_CODE__ERROR_NOT_FOUND,
				"%s: no such test on a load generator session",
				frame_type_name((uint16_t)env->body_case));
		break;
	case RING__ENVELOPE__BODY_RESOLVE_REQUEST:
		conn_send_error(c, env->request_id,
				RING__ERROR_CODE__ERROR_UNSUPPORTED,
				"a load generator session resolves no names");
		break;
	default:
		conn_send_error(c, env->request_id,
				RING__ERROR_CODE__ERROR_BAD_REQUEST,
				"%s is not a request an agent serves",
				frame_type_name((uint16_t)env->body_case));
		break;
	}
	frame_free(env);
}

/* ------------------------------------------------------------ sessions */

static void lg_enqueue(struct lg_sess *s)
{
	struct lg *lg = s->lg;

	s->state = LG_QUEUED;
	s->next_queued = 0;
	if (lg->q_tail)
		lg->s[lg->q_tail - 1].next_queued = s->idx + 1;
	else
		lg->q_head = s->idx + 1;
	lg->q_tail = s->idx + 1;
}

static void lg_retry(struct lg_sess *s, const char *why)
{
	struct lg *lg = s->lg;
	uint64_t base = 500;
	struct timeval tv;

	if (s->state == LG_ACTIVE)
		lg->up--;
	else if (s->state == LG_CONNECTING || s->state == LG_HELLO)
		lg->inflight--;
	lg->failures++;
	log_debug("loadgen", "session %u: %s", s->idx, why);
	evtimer_del(s->hb_ev);
	evtimer_del(s->ctr_ev);
	conn_free(s->conn);
	s->conn = NULL;
	for (unsigned k = 0; k < s->attempt && base < 5000; k++)
		base *= 2;
	if (base > 5000)
		base = 5000;
	if (s->attempt < 32)
		s->attempt++;
	s->state = LG_IDLE;
	tv = lg_tv(base / 2 + lg_rand() % (base / 2 + 1));
	evtimer_add(s->timer, &tv);
	lg_kick(lg);
}

static void lg_on_close(struct conn *c, int err, const char *reason, void *arg)
{
	(void)c;
	(void)err;
	lg_retry(arg, reason);
}

static void lg_on_connect(struct conn *c, void *arg)
{
	struct lg_sess *s = arg;
	static char *caps[] = {"inventory", "lldp", "probe"};
	Ring__Hello hello = RING__HELLO__INIT;
	char node[32];

	(void)c;
	lg_node(s->lg, s->idx, node, sizeof(node));
	hello.node = node;
	hello.agent_version = RING_VERSION;
	hello.n_capabilities = sizeof(caps) / sizeof(caps[0]);
	hello.capabilities = caps;
	s->state = LG_HELLO;
	lg_send(s, 0, RING__ENVELOPE__BODY_HELLO, &hello);
}

static int lg_connect(struct lg_sess *s)
{
	struct lg *lg = s->lg;
	struct sockaddr_in src = {.sin_family = AF_INET};
	char addr[20], peer[64];
	struct bufferevent *bev;
	struct timeval tv = lg_tv(10000);
	SSL *ssl = NULL;
	int fd;

	lg_source(lg, s->idx, addr, sizeof(addr));
	if (inet_pton(AF_INET, addr, &src.sin_addr) != 1)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0)
		goto fail;
	ssl = SSL_new(lg->tls);
	if (!ssl || SSL_use_certificate(ssl, s->crt) != 1 ||
	    SSL_use_PrivateKey(ssl, s->key) != 1 ||
	    tls_client_expect_name(ssl, lg->o.coordinator_name) < 0)
		goto fail;
	bev = bufferevent_openssl_socket_new(lg->base, fd, ssl,
					     BUFFEREVENT_SSL_CONNECTING,
					     BEV_OPT_CLOSE_ON_FREE);
	if (!bev)
		goto fail;
	snprintf(peer, sizeof(peer), "coordinator (session %u from %s)", s->idx,
		 addr);
	s->conn =
		conn_new(bev, peer, lg->o.max_frame, lg_on_msg, lg_on_close, s);
	if (!s->conn) {
		bufferevent_free(bev);
		return -1;
	}
	conn_set_connect_cb(s->conn, lg_on_connect);
	s->state = LG_CONNECTING;
	lg->inflight++;
	evtimer_add(s->timer, &tv);
	/* A failure at once comes back through lg_on_close. */
	bufferevent_socket_connect(bev, (struct sockaddr *)&lg->coord,
				   lg->coord_len);
	return 0;
fail:
	SSL_free(ssl);
	close(fd);
	return -1;
}

/* Start queued sessions while fewer than --parallel are connecting. */
static void lg_kick(struct lg *lg)
{
	while (lg->q_head && lg->inflight < lg->o.parallel) {
		struct lg_sess *s = &lg->s[lg->q_head - 1];

		lg->q_head = s->next_queued;
		if (!lg->q_head)
			lg->q_tail = 0;
		s->state = LG_IDLE;
		if (lg_connect(s) < 0) {
			struct timeval tv = lg_tv(1000);

			log_warn("session %u: cannot start a connection",
				 s->idx);
			lg->failures++;
			evtimer_add(s->timer, &tv);
		}
	}
}

/* The one timer: in IDLE the backoff ended; while connecting the
 * deadline passed. */
static void lg_timer(evutil_socket_t fd, short what, void *arg)
{
	struct lg_sess *s = arg;

	(void)fd;
	(void)what;
	if (s->state == LG_CONNECTING || s->state == LG_HELLO) {
		lg_retry(s, "no answer within 10 s");
		return;
	}
	if (s->state == LG_IDLE) {
		lg_enqueue(s);
		lg_kick(s->lg);
	}
}

static void lg_report(evutil_socket_t fd, short what, void *arg)
{
	struct lg *lg = arg;

	(void)fd;
	(void)what;
	log_info("%u of %u sessions up, %u connecting, %u failures so far",
		 lg->up, lg->o.n, lg->inflight, lg->failures);
}

static void lg_signal(evutil_socket_t sig, short what, void *arg)
{
	struct lg *lg = arg;

	(void)what;
	log_info("signal %d: stopping (%u sessions up)", (int)sig, lg->up);
	event_base_loopbreak(lg->base);
}

/* ------------------------------------------------------------ set-up */

static int lg_load_pem(struct lg_sess *s, const char *crt, const char *key)
{
	FILE *f = fopen(crt, "r");

	if (!f)
		return -1;
	s->crt = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	f = fopen(key, "r");
	if (!f)
		return -1;
	s->key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	return s->crt && s->key ? 0 : -1;
}

/* Node certificates in the cache: issued once, reused by later runs. */
static int lg_certs(struct lg *lg)
{
	char node[32], crt[1024], key[1024], err[512];
	struct stat st;
	unsigned issued = 0;
	uint64_t t0 = lg_now_ms();

	for (unsigned i = 0; i < lg->o.n; i++) {
		lg_node(lg, i, node, sizeof(node));
		snprintf(crt, sizeof(crt), "%s/%s.crt", lg->o.pki, node);
		snprintf(key, sizeof(key), "%s/%s.key", lg->o.pki, node);
		if (stat(crt, &st) < 0 || stat(key, &st) < 0) {
			unlink(crt);
			unlink(key);
			if (pki_issue(lg->o.pki, node, PKI_ROLE_NODE, 3650,
				      NULL, 0, err, sizeof(err)) < 0) {
				log_warnx("%s: cannot issue %s: %s", lg->o.pki,
					  node, err);
				return -1;
			}
			issued++;
		}
		if (!lg->o.issue_only && lg_load_pem(&lg->s[i], crt, key) < 0) {
			log_warnx("%s or %s: cannot read the certificate and "
				  "key",
				  crt, key);
			return -1;
		}
	}
	log_info("%u node certificates in %s (%u issued now) in %llu ms",
		 lg->o.n, lg->o.pki, issued,
		 (unsigned long long)(lg_now_ms() - t0));
	return 0;
}

static void lg_raise_nofile(unsigned n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < n + 64) {
		rl.rlim_cur = rl.rlim_max < n + 64 ? rl.rlim_max : n + 64;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_warn("RLIMIT_NOFILE");
	}
}

static int lg_setup(struct lg *lg)
{
	char crt[1024], key[1024], ca[1024], node[32];

	lg->s = calloc(lg->o.n, sizeof(*lg->s));
	if (!lg->s)
		return -1;
	if (lg_certs(lg) < 0)
		return -1;
	if (lg->o.issue_only)
		return 0;
	lg_raise_nofile(lg->o.n);
	if (getrandom(&lg->run_id, sizeof(lg->run_id), 0) != sizeof(lg->run_id))
		lg->run_id = (uint64_t)time(NULL);
	lg->base = event_base_new();
	if (!lg->base)
		return -1;
	/* One context (the CA, TLS 1.3, the role checks); each session's
	 * certificate goes on its own SSL. */
	lg_node(lg, 0, node, sizeof(node));
	snprintf(ca, sizeof(ca), "%s/ca.crt", lg->o.pki);
	snprintf(crt, sizeof(crt), "%s/%s.crt", lg->o.pki, node);
	snprintf(key, sizeof(key), "%s/%s.key", lg->o.pki, node);
	lg->tls = tls_ctx_new(0, ca, crt, key);
	if (!lg->tls)
		return -1;
	/* Idle sessions hold no record buffers: 10,000 of them fit. */
	SSL_CTX_set_mode(lg->tls, SSL_MODE_RELEASE_BUFFERS);
	lg->coord_len = sizeof(lg->coord);
	if (evutil_parse_sockaddr_port(lg->o.coordinator,
				       (struct sockaddr *)&lg->coord,
				       &lg->coord_len) < 0) {
		log_warnx("--coordinator %s: not ADDRESS:PORT",
			  lg->o.coordinator);
		return -1;
	}
	for (unsigned i = 0; i < lg->o.n; i++) {
		struct lg_sess *s = &lg->s[i];

		s->lg = lg;
		s->idx = i;
		s->timer = evtimer_new(lg->base, lg_timer, s);
		s->hb_ev = event_new(lg->base, -1, EV_PERSIST, lg_heartbeat, s);
		s->ctr_ev = event_new(lg->base, -1, EV_PERSIST, lg_counters, s);
		if (!s->timer || !s->hb_ev || !s->ctr_ev)
			return -1;
		lg_enqueue(s);
	}
	{
		struct timeval tv = lg_tv(5000);

		lg->report_ev =
			event_new(lg->base, -1, EV_PERSIST, lg_report, lg);
		lg->sig_term = evsignal_new(lg->base, SIGTERM, lg_signal, lg);
		lg->sig_int = evsignal_new(lg->base, SIGINT, lg_signal, lg);
		if (!lg->report_ev || !lg->sig_term || !lg->sig_int ||
		    event_add(lg->report_ev, &tv) ||
		    evsignal_add(lg->sig_term, NULL) ||
		    evsignal_add(lg->sig_int, NULL))
			return -1;
	}
	return 0;
}

static void lg_free(struct lg *lg)
{
	for (unsigned i = 0; lg->s && i < lg->o.n; i++) {
		struct lg_sess *s = &lg->s[i];

		conn_free(s->conn);
		if (s->timer)
			event_free(s->timer);
		if (s->hb_ev)
			event_free(s->hb_ev);
		if (s->ctr_ev)
			event_free(s->ctr_ev);
		X509_free(s->crt);
		EVP_PKEY_free(s->key);
	}
	free(lg->s);
	if (lg->report_ev)
		event_free(lg->report_ev);
	if (lg->sig_term)
		event_free(lg->sig_term);
	if (lg->sig_int)
		event_free(lg->sig_int);
	/* Deferred bufferevent callbacks run before the base goes. */
	if (lg->base)
		event_base_loop(lg->base, EVLOOP_NONBLOCK);
	if (lg->tls)
		SSL_CTX_free(lg->tls);
	if (lg->base)
		event_base_free(lg->base);
}

static void lg_usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG
		" -n SESSIONS --coordinator ADDR:PORT --pki DIR\n"
		"       [--coordinator-name NAME] [--prefix P] [--source O2]\n"
		"       [--parallel N] [--ring-size N] [--counters-interval "
		"S]\n"
		"       [--max-frame BYTES] [--issue-only] [-d DEBUG]\n"
		"Holds SESSIONS agent sessions (nodes P00000..) to one "
		"coordinator, session i\n"
		"from 127.O2+i/64000.(i/250)%%256.(1+i%%250) (O2 default 100) "
		"with DIR/NODE.crt,\n"
		"issued there with DIR's CA when missing (--issue-only: only "
		"that).\n");
}

static int lg_uint(const char *opt, const char *s, unsigned lo, unsigned hi,
		   unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, PROG ": %s: '%s' is not a number in %u..%u\n",
			opt, s, lo, hi);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int lg_args(int argc, char **argv, struct lg_opts *o)
{
	static const struct option lo[] = {
		{"coordinator", required_argument, NULL, 'C'},
		{"coordinator-name", required_argument, NULL, 'N'},
		{"pki", required_argument, NULL, 'P'},
		{"prefix", required_argument, NULL, 'x'},
		{"source", required_argument, NULL, 's'},
		{"parallel", required_argument, NULL, 'j'},
		{"ring-size", required_argument, NULL, 'r'},
		{"counters-interval", required_argument, NULL, 'c'},
		{"max-frame", required_argument, NULL, 'm'},
		{"issue-only", no_argument, NULL, 'I'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned v;
	int ch;

	*o = (struct lg_opts){.coordinator_name = "coordinator",
			      .prefix = "lg",
			      .source_o2 = 100,
			      .parallel = 256,
			      .ring_size = 4,
			      .counters_ms = 10000,
			      .max_frame = 1024 * 1024};
	while ((ch = getopt_long(argc, argv, "n:d:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'n':
			if (lg_uint("-n", optarg, 1, LG_MAX_SESSIONS, &o->n))
				return -1;
			break;
		case 'C':
			o->coordinator = optarg;
			break;
		case 'N':
			o->coordinator_name = optarg;
			break;
		case 'P':
			o->pki = optarg;
			break;
		case 'x':
			if (strlen(optarg) < 1 || strlen(optarg) > 20 ||
			    strspn(optarg, "abcdefghijklmnopqrstuvwxyz") !=
				    strlen(optarg)) {
				fprintf(stderr,
					PROG ": --prefix: '%s': 1-20 of a-z\n",
					optarg);
				return -1;
			}
			o->prefix = optarg;
			break;
		case 's':
			if (lg_uint("--source", optarg, 1, 250, &o->source_o2))
				return -1;
			break;
		case 'j':
			if (lg_uint("--parallel", optarg, 1, 65536,
				    &o->parallel))
				return -1;
			break;
		case 'r':
			if (lg_uint("--ring-size", optarg, 1, 1024,
				    &o->ring_size))
				return -1;
			break;
		case 'c':
			if (lg_uint("--counters-interval", optarg, 0, 3600, &v))
				return -1;
			o->counters_ms = (uint64_t)v * 1000;
			break;
		case 'm':
			if (lg_uint("--max-frame", optarg, 4096,
				    64 * 1024 * 1024, &v))
				return -1;
			o->max_frame = v;
			break;
		case 'I':
			o->issue_only = 1;
			break;
		case 'd':
			o->debug = optarg;
			break;
		case 'h':
			lg_usage(stdout);
			exit(0);
		default:
			lg_usage(stderr);
			return -1;
		}
	}
	if (optind != argc || !o->n || !o->pki ||
	    (!o->coordinator && !o->issue_only)) {
		lg_usage(stderr);
		return -1;
	}
	if (o->source_o2 + (o->n - 1) / 64000 > 255) {
		fprintf(stderr,
			PROG ": %u sessions from --source %u pass 127.255\n",
			o->n, o->source_o2);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct lg lg;
	int rc = 1;

	memset(&lg, 0, sizeof(lg));
	if (lg_args(argc, argv, &lg.o) < 0)
		return 2;
	log_init(PROG, lg.o.debug, 1);
	signal(SIGPIPE, SIG_IGN);
	if (lg_setup(&lg) < 0) {
		log_warnx("set-up failed");
		goto out;
	}
	if (lg.o.issue_only) {
		rc = 0;
		goto out;
	}
	log_info("%u sessions to %s, at most %u connecting at once", lg.o.n,
		 lg.o.coordinator, lg.o.parallel);
	lg_kick(&lg);
	rc = event_base_dispatch(lg.base) < 0;
out:
	lg_free(&lg);
	return rc;
}
