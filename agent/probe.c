/* Route decisions (RTM_GETROUTE) and TCP reachability probes bound to a
 * data port. */
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* Older uapi headers lack it (Linux 4.13). */
#ifndef RTM_F_FIB_MATCH
#define RTM_F_FIB_MATCH 0x2000
#endif

#define PROBE_NL_BUF 8192
#define PROBE_NL_TIMEOUT_MS 1000

static double probe_ts_us(const struct timespec *ts)
{
	return (double)ts->tv_sec * 1e6 + (double)ts->tv_nsec / 1e3;
}

static double probe_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return probe_ts_us(&ts);
}

static void probe_set_kind(struct probe_route *out, const char *kind)
{
	snprintf(out->kind, sizeof(out->kind), "%s", kind);
}

/* The kernel answers a route lookup that ends on a reject route with an
 * error: blackhole -EINVAL, prohibit -EACCES, unreachable -EHOSTUNREACH,
 * no route or throw -ENETUNREACH. All of them mean "no data-plane path";
 * map them onto the two codes callers test for, so that -EINVAL keeps
 * meaning a bad address. */
static int probe_route_reject(int err, struct probe_route *out)
{
	switch (err) {
	case -ENETUNREACH:
	case -EHOSTUNREACH:
		break;
	case -EINVAL:
	case -EACCES:
		err = -EHOSTUNREACH;
		break;
	default:
		return err;
	}
	probe_set_kind(out, "unreachable");
	return err;
}

static int probe_nl_send(int fd, uint32_t seq, struct in_addr dst,
			 unsigned flags)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
		char attrs[RTA_SPACE(sizeof(struct in_addr))];
	} req;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	struct rtattr *rta;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = seq;
	req.rt.rtm_family = AF_INET;
	req.rt.rtm_dst_len = 32;
	req.rt.rtm_flags = flags;
	rta = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
	rta->rta_type = RTA_DST;
	rta->rta_len = RTA_LENGTH(sizeof(dst));
	memcpy(RTA_DATA(rta), &dst, sizeof(dst));
	req.nh.nlmsg_len =
		NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_SPACE(sizeof(dst));

	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	return 0;
}

static void probe_addr_str(int family, const void *addr, char *buf, size_t len)
{
	if (!inet_ntop(family, addr, buf, (socklen_t)len))
		buf[0] = '\0';
}

/* RTA_VIA: a gateway of another family (an IPv6 next hop, RFC 5549). */
static void probe_parse_via(const struct rtattr *rta, struct probe_route *out)
{
	const struct rtvia *via = RTA_DATA(rta);
	size_t plen = RTA_PAYLOAD(rta);

	if (plen < sizeof(*via))
		return;
	plen -= sizeof(*via);
	if (via->rtvia_family == AF_INET && plen >= sizeof(struct in_addr))
		probe_addr_str(AF_INET, via->rtvia_addr, out->gateway,
			       sizeof(out->gateway));
	else if (via->rtvia_family == AF_INET6 &&
		 plen >= sizeof(struct in6_addr))
		probe_addr_str(AF_INET6, via->rtvia_addr, out->gateway,
			       sizeof(out->gateway));
}

/* A multipath route reports carrier per next hop: take the one the
 * lookup chose (oif), or any when the lookup named none. */
static int probe_multipath_linkdown(const struct rtattr *rta, int oif)
{
	const struct rtnexthop *nh = RTA_DATA(rta);
	int len = (int)RTA_PAYLOAD(rta);

	for (; RTNH_OK(nh, len);
	     len -= NLMSG_ALIGN(nh->rtnh_len), nh = RTNH_NEXT(nh)) {
		if ((!oif || nh->rtnh_ifindex == oif) &&
		    (nh->rtnh_flags & RTNH_F_LINKDOWN))
			return 1;
	}
	return 0;
}

/* Fills out from one RTM_NEWROUTE; with fib_match only the carrier flag
 * is taken (the FIB entry lacks the lookup's source and output device). */
static int probe_parse_route(const struct nlmsghdr *nh, struct probe_route *out,
			     int fib_match, int *oif)
{
	const struct rtmsg *rt = NLMSG_DATA(nh);
	const struct rtattr *rta;
	int len, gateway = 0;
	char name[IF_NAMESIZE];

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)))
		return -EPROTO;
	if (rt->rtm_flags & RTNH_F_LINKDOWN)
		out->linkdown = 1;
	len = (int)RTM_PAYLOAD(nh);
	for (rta = RTM_RTA(rt); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		size_t plen = RTA_PAYLOAD(rta);

		if (fib_match) {
			if (rta->rta_type == RTA_MULTIPATH &&
			    probe_multipath_linkdown(rta, *oif))
				out->linkdown = 1;
			continue;
		}
		switch (rta->rta_type) {
		case RTA_OIF:
			if (plen < sizeof(int))
				return -EPROTO;
			memcpy(oif, RTA_DATA(rta), sizeof(int));
			if (if_indextoname((unsigned)*oif, name))
				snprintf(out->ifname, sizeof(out->ifname), "%s",
					 name);
			break;
		case RTA_GATEWAY:
			if (plen < sizeof(struct in_addr))
				return -EPROTO;
			probe_addr_str(AF_INET, RTA_DATA(rta), out->gateway,
				       sizeof(out->gateway));
			gateway = 1;
			break;
		case RTA_VIA:
			probe_parse_via(rta, out);
			gateway = 1;
			break;
		case RTA_PREFSRC:
			if (plen < sizeof(struct in_addr))
				return -EPROTO;
			probe_addr_str(AF_INET, RTA_DATA(rta), out->source,
				       sizeof(out->source));
			break;
		default:
			break;
		}
	}
	if (fib_match)
		return 0;

	switch (rt->rtm_type) {
	case RTN_LOCAL:
		probe_set_kind(out, "local");
		break;
	case RTN_BROADCAST:
	case RTN_MULTICAST:
	case RTN_ANYCAST:
		out->not_unicast = 1;
		/* fall through */
	case RTN_UNICAST:
		probe_set_kind(out, gateway ? "gateway" : "direct");
		break;
	case RTN_BLACKHOLE:
	case RTN_PROHIBIT:
	case RTN_UNREACHABLE:
		return probe_route_reject(-EHOSTUNREACH, out);
	default:
		log_debug("probe", "route type %u: reported as unreachable",
			  rt->rtm_type);
		return probe_route_reject(-ENETUNREACH, out);
	}
	return 0;
}

/* One request, one answer: the RTM_NEWROUTE or NLMSG_ERROR with our
 * sequence number from the kernel, within PROBE_NL_TIMEOUT_MS. */
static int probe_nl_query(int fd, uint32_t seq, struct in_addr dst,
			  unsigned flags, struct probe_route *out, int *oif)
{
	union {
		struct nlmsghdr nh;
		char b[PROBE_NL_BUF];
	} buf;
	double deadline = probe_now_us() + PROBE_NL_TIMEOUT_MS * 1000.0;
	int rc;

	rc = probe_nl_send(fd, seq, dst, flags);
	if (rc < 0)
		return rc;
	for (;;) {
		struct sockaddr_nl from;
		struct iovec iov = {.iov_base = &buf, .iov_len = sizeof(buf)};
		struct msghdr msg = {
			.msg_name = &from,
			.msg_namelen = sizeof(from),
			.msg_iov = &iov,
			.msg_iovlen = 1,
		};
		const struct nlmsghdr *nh;
		ssize_t n;
		unsigned int len; /* NLMSG_OK compares it with a __u32 */

		if (probe_now_us() >= deadline)
			return -ETIMEDOUT;
		n = recvmsg(fd, &msg, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -ETIMEDOUT;
			return -errno;
		}
		if (msg.msg_flags & MSG_TRUNC)
			return -EMSGSIZE;
		/* Only the kernel may answer; anything else is ignored. */
		if (msg.msg_namelen < sizeof(from) ||
		    from.nl_family != AF_NETLINK || from.nl_pid != 0)
			continue;
		len = (unsigned int)n;
		for (nh = &buf.nh; NLMSG_OK(nh, len);
		     nh = NLMSG_NEXT(nh, len)) {
			if (nh->nlmsg_seq != seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EPROTO;
				/* An ACK without a route: not expected. */
				return e->error < 0 ? e->error : -EPROTO;
			}
			if (nh->nlmsg_type == RTM_NEWROUTE)
				return probe_parse_route(
					nh, out, !!(flags & RTM_F_FIB_MATCH),
					oif);
		}
	}
}

int probe_target_check(const char *dst, int scoped, char *why, size_t len)
{
	struct in_addr a4;
	struct in6_addr a6;
	uint32_t a;
	const char *what = NULL;

	if (!dst || inet_pton(AF_INET, dst, &a4) != 1) {
		if (dst && inet_pton(AF_INET6, dst, &a6) == 1)
			snprintf(why, len,
				 "IPv6 target %.64s: probes take IPv4 data "
				 "addresses only",
				 dst);
		else
			snprintf(why, len, "bad address '%.64s'",
				 dst ? dst : "");
		return -1;
	}
	a = ntohl(a4.s_addr);
	if ((a >> 24) == 0)
		what = "unspecified (0.0.0.0/8)";
	else if ((a >> 24) == 127)
		what = "loopback";
	else if ((a >> 28) == 0xe)
		what = "multicast";
	else if (a == 0xffffffffu)
		what = "broadcast";
	else if ((a >> 28) == 0xf)
		what = "reserved (240.0.0.0/4)";
	else if ((a >> 16) == 0xa9fe && !scoped)
		what = "link-local, without an interface to probe from";
	if (!what)
		return 0;
	snprintf(why, len, "%s is %s: not a unicast data address", dst, what);
	return -1;
}

int probe_route_get(const char *dst, struct probe_route *out)
{
	struct timeval tv = {.tv_sec = PROBE_NL_TIMEOUT_MS / 1000};
	struct in_addr addr;
	struct probe_route fib;
	int fd, rc, oif = 0;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!dst || inet_pton(AF_INET, dst, &addr) != 1)
		return -EINVAL;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		rc = -errno;
		goto out;
	}

	rc = probe_nl_query(fd, 1, addr, 0, out, &oif);
	if (rc < 0) {
		rc = probe_route_reject(rc, out);
		goto out;
	}
	/* The lookup's answer is a cached dst without the FIB entry's
   * nexthop flags; only the matching FIB entry says "linkdown". A
   * kernel without RTM_F_FIB_MATCH (< 4.13) just leaves it 0. */
	if (!strcmp(out->kind, "direct") || !strcmp(out->kind, "gateway")) {
		memset(&fib, 0, sizeof(fib));
		if (probe_nl_query(fd, 2, addr, RTM_F_FIB_MATCH, &fib, &oif) ==
			    0 &&
		    fib.linkdown)
			out->linkdown = 1;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

struct probe {
	struct event *ev;
	int fd;
	/* connect() already decided; delivered from the loop. */
	int immediate;
	int immediate_err;
	double t0_us;
	double immediate_rtt_us;
	probe_done_cb cb;
	void *arg;
};

static void probe_free(struct probe *p)
{
	if (p->ev)
		event_free(p->ev);
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

/* The callback runs before the probe is freed, so it must not call
 * probe_cancel() on the probe it reports; it may start new probes. */
static void probe_on_event(evutil_socket_t fd, short what, void *arg)
{
	struct probe *p = arg;
	double rtt_us = 0;
	int err;

	if (p->immediate) {
		err = p->immediate_err;
		rtt_us = p->immediate_rtt_us;
	} else if (what & EV_WRITE) {
		int soerr = 0;
		socklen_t slen = sizeof(soerr);

		rtt_us = probe_now_us() - p->t0_us;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &slen) < 0)
			soerr = errno;
		/* An RST proves the path as well as a SYN-ACK does. */
		if (soerr == 0 || soerr == ECONNREFUSED) {
			err = 0;
		} else {
			err = -soerr;
			rtt_us = 0;
		}
	} else {
		err = -ETIMEDOUT;
	}
	p->cb(err, rtt_us, p->arg);
	probe_free(p);
}

struct probe *probe_start(struct event_base *base, const char *dst,
			  uint16_t port, const char *ifname,
			  unsigned timeout_ms, probe_done_cb cb, void *arg)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct timeval tv;
	struct probe *p;
	int saved;

	if (!base || !dst || !cb ||
	    inet_pton(AF_INET, dst, &sin.sin_addr) != 1) {
		errno = EINVAL;
		return NULL;
	}
	if (ifname && strlen(ifname) >= IFNAMSIZ) {
		errno = ENODEV;
		return NULL;
	}
	sin.sin_port = htons(port);

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->cb = cb;
	p->arg = arg;
	p->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		goto fail;
	if (ifname && *ifname &&
	    setsockopt(p->fd, SOL_SOCKET, SO_BINDTODEVICE, ifname,
		       (socklen_t)strlen(ifname)) < 0)
		goto fail;
	p->ev = event_new(base, p->fd, EV_WRITE, probe_on_event, p);
	if (!p->ev) {
		errno = ENOMEM;
		goto fail;
	}

	p->t0_us = probe_now_us();
	if (connect(p->fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 ||
	    errno == ECONNREFUSED) {
		p->immediate = 1;
		p->immediate_rtt_us = probe_now_us() - p->t0_us;
	} else if (errno != EINPROGRESS && errno != EINTR) {
		/* E.g. -ENETUNREACH through a device that is down: still
     * reported from the loop, as the contract promises. */
		p->immediate = 1;
		p->immediate_err = -errno;
	}
	if (p->immediate) {
		event_active(p->ev, EV_TIMEOUT, 0);
		return p;
	}
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
	if (event_add(p->ev, &tv) < 0) {
		errno = ENOMEM;
		goto fail;
	}
	return p;

fail:
	saved = errno;
	probe_free(p);
	errno = saved;
	return NULL;
}

void probe_cancel(struct probe *p)
{
	if (p)
		probe_free(p);
}
