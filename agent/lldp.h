/* Link-layer beacons: LLDP frames (ethertype 0x88cc to 01:80:c2:00:00:0e)
 * sent and heard on every data interface that has carrier, addressed or
 * not. Chassis id = node name, port id = interface name, plus an
 * organisation-specific TLV carrying the agent id. */
#ifndef RING_LLDP_H
#define RING_LLDP_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#define LLDP_ETHERTYPE 0x88cc
#define LLDP_MAX_FRAME 1500
/* The neighbour table is kept per port, each with its own small cap, so
 * that frames on one cable (anyone with a raw socket there can send them)
 * never push out what another cable heard. A port whose table is full
 * keeps the claims that go on refreshing and refuses newcomers (counted,
 * see lldp_ports()); a claim silent for over half its TTL makes room. */
#define LLDP_MAX_PORTS 64   /* ports with a table (beaconing interfaces) */
#define LLDP_MAX_PER_PORT 4 /* claims kept per port */
#define LLDP_MAX_NEIGHBOURS (LLDP_MAX_PORTS * LLDP_MAX_PER_PORT)
/* Received TTLs are clamped to this (or to our own TTL, 4 x
 * lldp_interval, when that is longer): a forged TTL of 65535 s would
 * otherwise hold a slot for 18 hours. */
#define LLDP_MAX_TTL_S 300
/* The change callback runs at most once per this: a flood that changes the
 * table a thousand times a second yields four pushes a second. */
#define LLDP_NOTIFY_MIN_MS 250
/* "Table full" warnings: at most one per port per LLDP_WARN_MS; neighbour
 * comings and goings: LLDP_LOG_BURST info lines per port per
 * LLDP_LOG_WINDOW_MS, the rest at debug level. */
#define LLDP_WARN_MS 60000
#define LLDP_LOG_BURST 16
#define LLDP_LOG_WINDOW_MS 60000

/* What a decoded frame says. Strings are NUL-terminated and printable
 * (anything else is replaced by '?'). */
struct lldp_info {
	uint8_t src_mac[6];
	char chassis_id[256]; /* node name */
	char port_id[256];    /* interface name */
	char agent_id[64];    /* empty when the frame is not from ringd */
	uint16_t ttl;	      /* seconds */
};

/* Encode a full Ethernet frame into buf. Returns its length, or -1 with
 * errno EMSGSIZE / EINVAL (strings too long or empty). */
ssize_t lldp_encode(uint8_t *buf, size_t len, const uint8_t src_mac[6],
		    const char *chassis, const char *port, uint16_t ttl,
		    const char *agent_id);
/* Decode a full Ethernet frame of any length and content. 0, or -1 with
 * errno: ENOENT (not an LLDP frame), EBADMSG (malformed: truncated TLV,
 * missing mandatory TLV, bad order, bad lengths). Never reads past len. */
int lldp_decode(const uint8_t *frame, size_t len, struct lldp_info *out);

struct lldp_neighbour {
	char local_if[IFNAMSIZ];
	char remote_node[64];
	char remote_if[64];
	char remote_agent_id[64];
	uint8_t remote_mac[6];
	uint16_t ttl;
	uint64_t last_heard_ms; /* CLOCK_MONOTONIC ms */
};

struct lldp;

/* Called from the event loop when the neighbour table changed (a new
 * neighbour, one gone by TTL, or a different TTL), at most once per
 * LLDP_NOTIFY_MIN_MS; the call after a burst sees the burst's end. */
typedef void (*lldp_change_cb)(void *arg);

/* interval_ms: transmit period (the first 3 frames on a newly enabled
 * interface go out 200 ms apart, so neighbours appear fast). TTL sent is
 * 4 * interval rounded up to seconds. NULL on allocation failure. */
struct lldp *lldp_new(struct event_base *base, const char *node,
		      const char *agent_id, unsigned interval_ms,
		      lldp_change_cb cb, void *arg);
void lldp_free(struct lldp *l);
/* The set of interfaces to beacon on (those with carrier). Opens raw
 * sockets for new ones, closes the others (their neighbours are dropped).
 * Returns 0, or -1 when raw sockets are not permitted (errno EPERM and
 * lldp_error() says so) - the agent then reports beacons unavailable. */
int lldp_set_interfaces(struct lldp *l, const char *const *ifnames, size_t n);
/* 1 if a beacon socket is bound on ifname now, else 0. */
int lldp_listening(const struct lldp *l, const char *ifname);
/* NULL when beacons work, else a one-line reason. */
const char *lldp_error(const struct lldp *l);
/* Copy the current table (sorted by local interface, remote node, remote
 * interface, agent id, MAC): every claim heard, several per port when
 * several senders claim it. Returns the number of entries (at most max). */
size_t lldp_neighbours(const struct lldp *l, struct lldp_neighbour *out,
		       size_t max);

struct lldp_port_stats {
	char local_if[IFNAMSIZ];
	unsigned neighbours;	 /* claims in the table now */
	uint64_t claims_refused; /* refused since the port opened (full) */
};

/* Every port that heard a frame since it opened. Returns the count (at
 * most max). */
size_t lldp_ports(const struct lldp *l, struct lldp_port_stats *out,
		  size_t max);
/* Record a decoded frame as heard on ifname, exactly as the receive path
 * does (own frames skipped, TTL clamped, per-port cap); tests and fuzzers
 * feed the table through it. 0 (a refused claim is counted, not an
 * error), or -1 with errno EINVAL (bad name) or ENOSPC (LLDP_MAX_PORTS
 * ports have tables already). */
int lldp_input(struct lldp *l, const char *ifname,
	       const struct lldp_info *info);

#endif
