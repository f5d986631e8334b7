/* LLDP's runtime: a raw socket per beaconing interface, the per-port
 * neighbour tables with their caps and expiry, the change notification.
 * Frames are encoded and decoded in lldp_tlv.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lldp_int.h"
#include "log.h"

#define LLDP_FAST_COUNT 3
#define LLDP_FAST_MS 200
#define LLDP_RX_BURST 32 /* frames per read callback, then yield */

/* ---- runtime ----------------------------------------------------------- */

struct lldp_if {
	struct lldp *l;
	struct lldp_if *next;
	char name[IFNAMSIZ];
	int ifindex;
	int fd;
	struct event *rx_ev, *tx_ev;
	unsigned fast_left; /* frames still to send LLDP_FAST_MS apart */
	uint64_t last_tx_ms;
	int seen; /* still wanted, during lldp_set_interfaces */
};

/* What one port heard. Each port has its own small table, so that frames
 * on one cable can never push out what another cable heard. */
struct lldp_port {
	char name[IFNAMSIZ]; /* "" = free slot */
	struct lldp_neighbour nb[LLDP_MAX_PER_PORT];
	size_t n;
	uint64_t refused;	 /* claims refused (table full) since opened */
	uint64_t refused_warned; /* refused at the last warning */
	uint64_t warn_ms;	 /* last "table full" warning, 0 = never */
	uint64_t log_window_ms;	 /* start of the current log budget window */
	unsigned log_left;	 /* info lines left in this window */
};

struct lldp {
	struct event_base *base;
	char node[LLDP_ID_MAX + 1];
	char agent_id[LLDP_AGENT_ID_MAX + 1];
	unsigned interval_ms;
	uint16_t ttl;
	lldp_change_cb cb;
	void *arg;
	struct lldp_if *ifs;
	struct lldp_port ports[LLDP_MAX_PORTS];
	int ports_warned;
	struct event *expire_ev;
	struct event *notify_ev; /* runs cb once for a burst of changes */
	int notify_pending;
	uint64_t notify_ms; /* when cb last ran */
	char error[160];
};

static uint64_t lldp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct timeval lldp_tv(uint64_t ms)
{
	struct timeval tv = {.tv_sec = (time_t)(ms / 1000),
			     .tv_usec = (suseconds_t)((ms % 1000) * 1000)};
	return tv;
}

static void lldp_copy(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Defer the callback to its own event-loop turn, and at most once per
 * LLDP_NOTIFY_MIN_MS: every change made meanwhile (a read burst, an expiry
 * pass, a flood of claims) yields one call, and the caller is never
 * re-entered from inside our functions. */
static void lldp_changed(struct lldp *l)
{
	uint64_t now = lldp_now_ms(), since;
	struct timeval tv;

	if (l->notify_pending)
		return;
	l->notify_pending = 1;
	since = now - l->notify_ms;
	tv = lldp_tv(l->notify_ms && since < LLDP_NOTIFY_MIN_MS
			     ? LLDP_NOTIFY_MIN_MS - since
			     : 0);
	evtimer_add(l->notify_ev, &tv);
}

static void lldp_notify_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lldp *l = arg;

	(void)fd;
	(void)what;
	l->notify_pending = 0;
	l->notify_ms = lldp_now_ms();
	if (l->cb)
		l->cb(l->arg); /* may free l: touch nothing after */
}

/* Info lines about one port's comings and goings, at most
 * LLDP_LOG_BURST per LLDP_LOG_WINDOW_MS: a flood of claims and shutdown
 * frames must not flood the journal. The rest go to debug. */
static int lldp_port_may_log(struct lldp_port *pt, uint64_t now)
{
	if (!pt->log_window_ms ||
	    now - pt->log_window_ms >= LLDP_LOG_WINDOW_MS) {
		pt->log_window_ms = now;
		pt->log_left = LLDP_LOG_BURST;
	}
	if (!pt->log_left)
		return 0;
	pt->log_left--;
	return 1;
}

/* "lldp: " and the text, at info level within the port's budget. */
static void lldp_port_log(struct lldp_port *pt, uint64_t now, const char *fmt,
			  ...) __attribute__((format(printf, 3, 4)));
static void lldp_port_log(struct lldp_port *pt, uint64_t now, const char *fmt,
			  ...)
{
	char text[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (lldp_port_may_log(pt, now))
		log_info("lldp: %s", text);
	else
		log_debug("lldp", "%s", text);
}

static struct lldp_port *lldp_port_find(struct lldp *l, const char *ifname)
{
	for (size_t i = 0; i < LLDP_MAX_PORTS; i++)
		if (l->ports[i].name[0] && !strcmp(l->ports[i].name, ifname))
			return &l->ports[i];
	return NULL;
}

/* The port's table, made on first use; NULL when LLDP_MAX_PORTS ports
 * have tables already. */
static struct lldp_port *lldp_port_get(struct lldp *l, const char *ifname)
{
	struct lldp_port *pt = lldp_port_find(l, ifname);

	if (pt)
		return pt;
	for (size_t i = 0; i < LLDP_MAX_PORTS; i++) {
		if (!l->ports[i].name[0]) {
			pt = &l->ports[i];
			memset(pt, 0, sizeof(*pt));
			lldp_copy(pt->name, sizeof(pt->name), ifname);
			return pt;
		}
	}
	if (!l->ports_warned)
		log_warnx("lldp: %s: more than %d ports heard, ignored", ifname,
			  LLDP_MAX_PORTS);
	l->ports_warned = 1;
	return NULL;
}

static void lldp_port_remove(struct lldp_port *pt, size_t i)
{
	memmove(&pt->nb[i], &pt->nb[i + 1],
		(pt->n - i - 1) * sizeof(pt->nb[0]));
	pt->n--;
}

/* Arm the expiry timer for the entry that runs out first. */
static void lldp_expire_arm(struct lldp *l)
{
	uint64_t now = lldp_now_ms(), first = UINT64_MAX;
	struct timeval tv;

	for (size_t p = 0; p < LLDP_MAX_PORTS; p++) {
		const struct lldp_port *pt = &l->ports[p];

		for (size_t i = 0; i < pt->n; i++) {
			uint64_t t = pt->nb[i].last_heard_ms +
				     (uint64_t)pt->nb[i].ttl * 1000;
			if (t < first)
				first = t;
		}
	}
	if (first == UINT64_MAX) {
		evtimer_del(l->expire_ev);
		return;
	}
	tv = lldp_tv(first > now ? first - now : 0);
	evtimer_add(l->expire_ev, &tv);
}

static void lldp_expire_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lldp *l = arg;
	uint64_t now = lldp_now_ms();

	(void)fd;
	(void)what;
	for (size_t p = 0; p < LLDP_MAX_PORTS; p++) {
		struct lldp_port *pt = &l->ports[p];

		for (size_t i = 0; i < pt->n;) {
			struct lldp_neighbour *n = &pt->nb[i];

			if (now - n->last_heard_ms >= (uint64_t)n->ttl * 1000) {
				lldp_port_log(pt, now,
					      "%s: neighbour %s port %s "
					      "gone (not heard for %us)",
					      n->local_if, n->remote_node,
					      n->remote_if, (unsigned)n->ttl);
				lldp_port_remove(pt, i);
				lldp_changed(l);
			} else {
				i++;
			}
		}
	}
	lldp_expire_arm(l);
}

/* Forget every neighbour heard on ifname, and the port's counters. */
static void lldp_tbl_drop_if(struct lldp *l, const char *ifname)
{
	struct lldp_port *pt = lldp_port_find(l, ifname);

	if (!pt)
		return;
	if (pt->n)
		lldp_changed(l);
	memset(pt, 0, sizeof(*pt));
	lldp_expire_arm(l);
}

static int lldp_if_send(struct lldp_if *ifp, uint16_t ttl);

/* A full port's table refused a claim: count it; warn at most once per
 * LLDP_WARN_MS, with how many were refused since the last warning. */
static void lldp_refuse(struct lldp_port *pt, const char *node, const char *rif,
			uint64_t now)
{
	pt->refused++;
	if (pt->warn_ms && now - pt->warn_ms < LLDP_WARN_MS)
		return;
	log_warnx("lldp: %s: %d neighbours claim this port already; refused "
		  "%llu more claim%s (latest %s port %s): several senders on "
		  "one cable, or someone forging LLDP frames",
		  pt->name, LLDP_MAX_PER_PORT,
		  (unsigned long long)(pt->refused - pt->refused_warned),
		  pt->refused - pt->refused_warned == 1 ? "" : "s", node, rif);
	pt->warn_ms = now;
	pt->refused_warned = pt->refused;
}

/* Record a frame heard on ifname. Returns 1 when the sender is new or
 * changed (so that it should hear from us soon), 0 when not, -1 when the
 * claim was refused. */
static int lldp_heard(struct lldp *l, const char *ifname,
		      const struct lldp_info *info)
{
	char node[sizeof(((struct lldp_neighbour *)0)->remote_node)];
	char rif[sizeof(((struct lldp_neighbour *)0)->remote_if)];
	struct lldp_neighbour *n = NULL;
	struct lldp_port *pt;
	uint64_t now = lldp_now_ms();
	/* Never shorter than what we send ourselves: a cluster with a long
	 * lldp_interval keeps its neighbours between beacons. */
	unsigned max_ttl = l->ttl > LLDP_MAX_TTL_S ? l->ttl : LLDP_MAX_TTL_S;
	uint16_t ttl = info->ttl > max_ttl ? (uint16_t)max_ttl : info->ttl;
	size_t i;
	int fresh = 0;

	pt = lldp_port_get(l, ifname);
	if (!pt)
		return -1;
	/* Long ids are cut to the table's width; the coordinator compares
	 * them with node names (<= 63) and interface names (< 16). */
	lldp_copy(node, sizeof(node), info->chassis_id);
	lldp_copy(rif, sizeof(rif), info->port_id);
	/* One entry per claim: a sender that names the same node and port
	 * with another agent id or MAC is another claim, reported beside the
	 * first; the coordinator tells them apart by the agent ids its
	 * authenticated sessions report. */
	for (i = 0; i < pt->n; i++) {
		if (strcmp(pt->nb[i].remote_node, node) == 0 &&
		    strcmp(pt->nb[i].remote_if, rif) == 0 &&
		    strcmp(pt->nb[i].remote_agent_id, info->agent_id) == 0 &&
		    memcmp(pt->nb[i].remote_mac, info->src_mac, 6) == 0) {
			n = &pt->nb[i];
			break;
		}
	}
	if (info->ttl == 0) {
		/* A shutdown frame: the sender is leaving now. */
		if (n) {
			lldp_port_log(pt, now, "%s: neighbour %s port %s left",
				      ifname, node, rif);
			lldp_port_remove(pt, i);
			lldp_changed(l);
			lldp_expire_arm(l);
		}
		return 0;
	}
	if (!n && pt->n == LLDP_MAX_PER_PORT) {
		/* Full: make room only by dropping a claim that stopped
		 * refreshing (the least recently heard, silent for over half
		 * its TTL, i.e. several of its sender's periods). A neighbour
		 * that keeps beaconing is never pushed out by newcomers. */
		size_t old = 0;

		for (i = 1; i < pt->n; i++)
			if (pt->nb[i].last_heard_ms < pt->nb[old].last_heard_ms)
				old = i;
		if ((now - pt->nb[old].last_heard_ms) * 2 <=
		    (uint64_t)pt->nb[old].ttl * 1000) {
			lldp_refuse(pt, node, rif, now);
			return -1;
		}
		lldp_port_log(
			pt, now,
			"%s: neighbour %s port %s replaced (silent "
			"for %llus, table full)",
			ifname, pt->nb[old].remote_node, pt->nb[old].remote_if,
			(unsigned long long)((now - pt->nb[old].last_heard_ms) /
					     1000));
		lldp_port_remove(pt, old);
	}
	if (!n) {
		n = &pt->nb[pt->n++];
		memset(n, 0, sizeof(*n));
		lldp_copy(n->local_if, sizeof(n->local_if), ifname);
		lldp_copy(n->remote_node, sizeof(n->remote_node), node);
		lldp_copy(n->remote_if, sizeof(n->remote_if), rif);
		lldp_copy(n->remote_agent_id, sizeof(n->remote_agent_id),
			  info->agent_id);
		memcpy(n->remote_mac, info->src_mac, 6);
		lldp_port_log(pt, now, "%s: neighbour %s port %s%s%s", ifname,
			      node, rif, info->agent_id[0] ? " agent " : "",
			      info->agent_id);
		fresh = 1;
	} else if (n->ttl != ttl) {
		log_debug("lldp", "%s: neighbour %s port %s changed", ifname,
			  node, rif);
		fresh = 1;
	}
	if (fresh) {
		n->ttl = ttl;
		lldp_changed(l);
	}
	n->last_heard_ms = now;
	lldp_expire_arm(l);
	return fresh;
}

int lldp_input(struct lldp *l, const char *ifname, const struct lldp_info *info)
{
	if (!l || !ifname || !info || !ifname[0] ||
	    strnlen(ifname, IFNAMSIZ) >= IFNAMSIZ) {
		errno = EINVAL;
		return -1;
	}
	if (l->agent_id[0] && strcmp(info->agent_id, l->agent_id) == 0)
		return 0; /* our own, looped back */
	if (lldp_heard(l, ifname, info) < 0 && !lldp_port_find(l, ifname)) {
		errno = ENOSPC;
		return -1;
	}
	return 0;
}
/* 1 when ifp's interface no longer exists (or is another one now). */
static int lldp_if_gone(const struct lldp_if *ifp)
{
	return if_nametoindex(ifp->name) != (unsigned)ifp->ifindex;
}

static void lldp_if_close(struct lldp *l, struct lldp_if *ifp, int farewell)
{
	struct lldp_if **pp;

	if (farewell)
		lldp_if_send(ifp, 0); /* best effort: peers drop us now */
	for (pp = &l->ifs; *pp; pp = &(*pp)->next) {
		if (*pp == ifp) {
			*pp = ifp->next;
			break;
		}
	}
	event_free(ifp->rx_ev);
	event_free(ifp->tx_ev);
	close(ifp->fd);
	lldp_tbl_drop_if(l, ifp->name);
	free(ifp);
}

/* The interface went away under us (unplugged NIC, deleted veth): that is
 * the caller's business to notice, so no warning. */
static void lldp_if_vanished(struct lldp_if *ifp)
{
	log_debug("lldp", "%s: interface gone, closing", ifp->name);
	lldp_if_close(ifp->l, ifp, 0);
}

/* 0, or -1 with errno; ENODEV when the interface is gone. */
static int lldp_if_send(struct lldp_if *ifp, uint16_t ttl)
{
	uint8_t frame[LLDP_MAX_FRAME];
	struct ifreq ifr;
	ssize_t len;

	/* Read the MAC each time: bonding or an operator may change it. */
	memset(&ifr, 0, sizeof(ifr));
	lldp_copy(ifr.ifr_name, sizeof(ifr.ifr_name), ifp->name);
	if (ioctl(ifp->fd, SIOCGIFHWADDR, &ifr) < 0)
		return -1;
	len = lldp_encode(frame, sizeof(frame),
			  (const uint8_t *)ifr.ifr_hwaddr.sa_data, ifp->l->node,
			  ifp->name, ttl, ifp->l->agent_id);
	if (len < 0)
		return -1;
	ifp->last_tx_ms = lldp_now_ms();
	if (send(ifp->fd, frame, (size_t)len, MSG_DONTWAIT) < 0)
		return -1;
	return 0;
}

static void lldp_tx_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lldp_if *ifp = arg;
	struct timeval tv;

	(void)fd;
	(void)what;
	if (lldp_if_send(ifp, ifp->l->ttl) < 0) {
		if (lldp_if_gone(ifp)) {
			lldp_if_vanished(ifp);
			return;
		}
		/* ENETDOWN (no carrier), ENOBUFS: try again next period. */
		log_debug("lldp", "%s: send: %s", ifp->name, strerror(errno));
	}
	if (ifp->fast_left)
		ifp->fast_left--;
	tv = lldp_tv(ifp->fast_left ? LLDP_FAST_MS : ifp->l->interval_ms);
	evtimer_add(ifp->tx_ev, &tv);
}

static void lldp_rx_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lldp_if *ifp = arg;
	struct lldp *l = ifp->l;
	uint8_t buf[2048];

	(void)what;
	for (int k = 0; k < LLDP_RX_BURST; k++) {
		struct sockaddr_ll sll;
		socklen_t slen = sizeof(sll);
		struct lldp_info info;
		ssize_t n;

		n = recvfrom(fd, buf, sizeof(buf), MSG_TRUNC,
			     (struct sockaddr *)&sll, &slen);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/* ENETDOWN once when the link is set down, or when the
			 * interface is removed. */
			if (lldp_if_gone(ifp)) {
				lldp_if_vanished(ifp);
				return;
			}
			log_debug("lldp", "%s: recv: %s", ifp->name,
				  strerror(errno));
			return;
		}
		if (sll.sll_pkttype == PACKET_OUTGOING)
			continue;
		if ((size_t)n > sizeof(buf)) {
			log_debug("lldp", "%s: %zd-byte frame ignored",
				  ifp->name, n);
			continue;
		}
		if (lldp_decode(buf, (size_t)n, &info) < 0) {
			log_debug("lldp", "%s: %s frame ignored", ifp->name,
				  errno == ENOENT ? "non-LLDP" : "malformed");
			continue;
		}
		if (l->agent_id[0] && strcmp(info.agent_id, l->agent_id) == 0)
			continue; /* our own, looped back */
		if (lldp_heard(l, ifp->name, &info) > 0 && !ifp->fast_left &&
		    lldp_now_ms() - ifp->last_tx_ms >= LLDP_FAST_MS) {
			/* A new neighbour should not wait a whole period to
			 * hear from us. */
			struct timeval tv = {0, 0};

			evtimer_add(ifp->tx_ev, &tv);
		}
	}
}

/* Open ifname. 0, 1 when it does not exist (skipped), -1 with errno. */
static int lldp_if_open(struct lldp *l, const char *ifname)
{
	struct lldp_if *ifp;
	struct sockaddr_ll sll;
	struct packet_mreq mr;
	struct timeval now = {0, 0};
	unsigned idx;
	int fd, err;

	if (strnlen(ifname, IFNAMSIZ) >= IFNAMSIZ ||
	    (idx = if_nametoindex(ifname)) == 0) {
		log_debug("lldp", "%s: no such interface, skipped", ifname);
		return 1;
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    htons(ETH_P_LLDP));
	if (fd < 0)
		return -1;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_LLDP);
	sll.sll_ifindex = (int)idx;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		err = errno;
		close(fd);
		if (err == ENODEV || err == ENXIO)
			return 1; /* gone since if_nametoindex */
		errno = err;
		return -1;
	}
	memset(&mr, 0, sizeof(mr));
	mr.mr_ifindex = (int)idx;
	mr.mr_type = PACKET_MR_MULTICAST;
	mr.mr_alen = 6;
	memcpy(mr.mr_address, lldp_mcast, 6);
	/* Without it only a promiscuous or allmulti NIC delivers the frames;
	 * keep going, the interface can still send. */
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) <
	    0)
		log_warn("lldp: %s: joining the LLDP multicast group", ifname);
	ifp = calloc(1, sizeof(*ifp));
	if (!ifp)
		goto fail_fd;
	ifp->l = l;
	ifp->fd = fd;
	ifp->ifindex = (int)idx;
	ifp->fast_left = LLDP_FAST_COUNT;
	lldp_copy(ifp->name, sizeof(ifp->name), ifname);
	ifp->rx_ev =
		event_new(l->base, fd, EV_READ | EV_PERSIST, lldp_rx_cb, ifp);
	ifp->tx_ev = evtimer_new(l->base, lldp_tx_cb, ifp);
	if (!ifp->rx_ev || !ifp->tx_ev || event_add(ifp->rx_ev, NULL) < 0 ||
	    evtimer_add(ifp->tx_ev, &now) < 0)
		goto fail_ev;
	ifp->next = l->ifs;
	l->ifs = ifp;
	log_debug("lldp", "%s: beacons on (ifindex %u)", ifname, idx);
	return 0;

fail_ev:
	if (ifp->rx_ev)
		event_free(ifp->rx_ev);
	if (ifp->tx_ev)
		event_free(ifp->tx_ev);
	free(ifp);
fail_fd:
	close(fd);
	errno = ENOMEM;
	return -1;
}

static struct lldp_if *lldp_if_find(struct lldp *l, const char *ifname)
{
	struct lldp_if *ifp;

	for (ifp = l->ifs; ifp; ifp = ifp->next)
		if (strcmp(ifp->name, ifname) == 0)
			break;
	return ifp;
}

int lldp_set_interfaces(struct lldp *l, const char *const *ifnames, size_t n)
{
	struct lldp_if *ifp, *next;

	for (ifp = l->ifs; ifp; ifp = ifp->next)
		ifp->seen = 0;
	for (size_t i = 0; i < n; i++)
		if ((ifp = lldp_if_find(l, ifnames[i])))
			ifp->seen = 1;
	for (ifp = l->ifs; ifp; ifp = next) {
		next = ifp->next;
		if (!ifp->seen)
			lldp_if_close(l, ifp, 1);
	}
	for (size_t i = 0; i < n; i++) {
		int err;

		if (lldp_if_find(l, ifnames[i]))
			continue; /* open already, or listed twice */
		if (lldp_if_open(l, ifnames[i]) >= 0) {
			l->error[0] = '\0';
			continue;
		}
		err = errno;
		if (err == EPERM || err == EACCES) {
			/* Said once, not at every rescan. */
			if (!l->error[0])
				log_warnx("lldp: raw sockets not permitted "
					  "(needs CAP_NET_RAW): beacons off, "
					  "the coordinator will fall back to "
					  "probes");
			snprintf(l->error, sizeof(l->error),
				 "raw sockets not permitted (needs "
				 "CAP_NET_RAW): beacons off, the coordinator "
				 "will fall back to probes");
			errno = EPERM;
			return -1;
		}
		if (err == EAFNOSUPPORT) {
			/* Under systemd the usual cause is the unit, not
			 * the kernel: say both. */
			snprintf(l->error, sizeof(l->error),
				 "packet sockets not available (no AF_PACKET "
				 "in the kernel or in the unit's "
				 "RestrictAddressFamilies=): beacons off, the "
				 "coordinator will fall back to probes");
			log_warnx("lldp: %s", l->error);
			errno = err;
			return -1;
		}
		/* One odd interface does not turn beacons off elsewhere. */
		errno = err;
		log_warn("lldp: %s: beacons off", ifnames[i]);
	}
	return 0;
}

int lldp_listening(const struct lldp *l, const char *ifname)
{
	for (const struct lldp_if *ifp = l->ifs; ifp; ifp = ifp->next)
		if (!strcmp(ifp->name, ifname))
			return ifp->fd >= 0;
	return 0;
}

const char *lldp_error(const struct lldp *l)
{
	return l->error[0] ? l->error : NULL;
}

static int lldp_neighbour_cmp(const void *a, const void *b)
{
	const struct lldp_neighbour *x = a, *y = b;
	int c = strcmp(x->local_if, y->local_if);

	if (!c)
		c = strcmp(x->remote_node, y->remote_node);
	if (!c)
		c = strcmp(x->remote_if, y->remote_if);
	if (!c)
		c = strcmp(x->remote_agent_id, y->remote_agent_id);
	if (!c)
		c = memcmp(x->remote_mac, y->remote_mac, 6);
	return c;
}

size_t lldp_neighbours(const struct lldp *l, struct lldp_neighbour *out,
		       size_t max)
{
	struct lldp_neighbour *all;
	size_t n = 0, total = 0;

	for (size_t p = 0; p < LLDP_MAX_PORTS; p++)
		total += l->ports[p].n;
	/* Sort in out when everything fits, else in a copy. */
	all = total <= max ? out : malloc(total * sizeof(*all));
	if (!all)
		return 0;
	for (size_t p = 0; p < LLDP_MAX_PORTS; p++) {
		const struct lldp_port *pt = &l->ports[p];

		if (pt->n)
			memcpy(all + n, pt->nb, pt->n * sizeof(all[0]));
		n += pt->n;
	}
	if (n)
		qsort(all, n, sizeof(all[0]), lldp_neighbour_cmp);
	if (all != out) {
		n = max;
		if (n)
			memcpy(out, all, n * sizeof(all[0]));
		free(all);
	}
	return n;
}

size_t lldp_ports(const struct lldp *l, struct lldp_port_stats *out, size_t max)
{
	size_t n = 0;

	for (size_t p = 0; p < LLDP_MAX_PORTS && n < max; p++) {
		const struct lldp_port *pt = &l->ports[p];

		if (!pt->name[0])
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		lldp_copy(out[n].local_if, sizeof(out[n].local_if), pt->name);
		out[n].neighbours = (unsigned)pt->n;
		out[n].claims_refused = pt->refused;
		n++;
	}
	return n;
}

struct lldp *lldp_new(struct event_base *base, const char *node,
		      const char *agent_id, unsigned interval_ms,
		      lldp_change_cb cb, void *arg)
{
	struct lldp *l;
	uint64_t ttl;

	if (!base || lldp_str_check(node, LLDP_ID_MAX) < 0 ||
	    (agent_id && *agent_id &&
	     lldp_str_check(agent_id, LLDP_AGENT_ID_MAX) < 0) ||
	    interval_ms == 0) {
		errno = EINVAL;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->base = base;
	lldp_copy(l->node, sizeof(l->node), node);
	lldp_copy(l->agent_id, sizeof(l->agent_id), agent_id ? agent_id : "");
	l->interval_ms = interval_ms;
	/* 4 periods, so that three lost frames in a row do not drop a
	 * neighbour (802.1AB's default hold multiplier). */
	ttl = ((uint64_t)interval_ms * 4 + 999) / 1000;
	l->ttl = (uint16_t)(ttl > UINT16_MAX ? UINT16_MAX : ttl);
	l->cb = cb;
	l->arg = arg;
	l->expire_ev = evtimer_new(base, lldp_expire_cb, l);
	l->notify_ev = evtimer_new(base, lldp_notify_cb, l);
	if (!l->expire_ev || !l->notify_ev) {
		lldp_free(l);
		errno = ENOMEM;
		return NULL;
	}
	return l;
}

void lldp_free(struct lldp *l)
{
	if (!l)
		return;
	while (l->ifs)
		lldp_if_close(l, l->ifs, 1);
	if (l->expire_ev)
		event_free(l->expire_ev);
	if (l->notify_ev)
		event_free(l->notify_ev);
	free(l);
}
