/* Data-plane probes: the kernel's route decision for a peer's data address
 * and a short reachability check through a named interface; the field
 * notes' "ip route get + ping", automated. */
#ifndef RING_PROBE_H
#define RING_PROBE_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

struct probe_route {
	/* "direct" (on-link, no gateway), "gateway" (via a router),
	 * "local" (an address of this host), "unreachable" */
	char kind[16];
	char ifname[IFNAMSIZ]; /* output interface */
	char gateway[64];      /* when kind is "gateway" */
	char source[64];       /* preferred source address */
	int linkdown;	 /* RTNH_F_LINKDOWN: connected route, no carrier */
	int not_unicast; /* a broadcast, multicast or anycast route */
};

/* 0 when dst may be probed: a unicast IPv4 address (dotted). Else -1 and
 * a one-line reason in why: not an address, IPv6 (not supported), the
 * unspecified 0.0.0.0/8, loopback, multicast, broadcast or reserved
 * 240.0.0.0/4, or link-local 169.254.0.0/16 unless scoped (the probe names
 * its interface). Subnet broadcasts show in the route (not_unicast). */
int probe_target_check(const char *dst, int scoped, char *why, size_t len);

/* RTM_GETROUTE for an IPv4 address (dotted). 0, or -errno (-EINVAL for a
 * bad address, -ENETUNREACH/-EHOSTUNREACH when the kernel has no route:
 * then out->kind is "unreachable"). Bounded by a 1 s receive timeout. */
int probe_route_get(const char *dst, struct probe_route *out);

struct probe;
/* err: 0 reachable (the peer answered: SYN-ACK or RST), -ETIMEDOUT,
 * -EHOSTUNREACH, -ENETUNREACH, ... rtt_us: connect round trip when err 0. */
typedef void (*probe_done_cb)(int err, double rtt_us, void *arg);

/* Non-blocking TCP connect to dst:port, bound to ifname (SO_BINDTODEVICE;
 * NULL or "" = let the kernel route), within timeout_ms. An RST counts as
 * reachable: it proves a data-plane path. cb is called exactly once, from
 * the event loop, unless probe_cancel() is called first. NULL with errno
 * on immediate setup failure (bad address, no such device). */
struct probe *probe_start(struct event_base *base, const char *dst,
			  uint16_t port, const char *ifname,
			  unsigned timeout_ms, probe_done_cb cb, void *arg);
void probe_cancel(struct probe *p);

#endif
