/* LLDP beacons (IEEE 802.1AB) on raw AF_PACKET sockets.
 *
 * Frames we send: Chassis ID (subtype 7, locally assigned = node name),
 * Port ID (subtype 5, interface name), TTL, System Name (= node name), one
 * organisation-specific TLV carrying the agent id, End. Short frames are
 * padded with zeros to the 60-byte Ethernet minimum (veth and some drivers
 * do not pad, and some switches drop runts).
 *
 * The organisation-specific TLV uses OUI 02-72-64 ("\x02rd"): the first
 * octet has the locally administered bit set and lies in the AAI quadrant
 * of the IEEE SLAP, a range the IEEE never assigns, so it cannot collide
 * with any vendor's TLV. Subtype 1 = agent id (1-63 printable octets).
 *
 * Decoding follows 802.1AB's validation rules: Chassis ID, Port ID and TTL
 * first and in that order, each exactly once; every length checked against
 * the frame; unknown TLVs skipped; everything after the End TLV ignored
 * (padding). A frame whose TLVs end exactly at the end of the frame
 * without an End TLV is accepted: nothing is lost and some stacks omit it. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lldp_int.h"

#define LLDP_TLV_END 0
#define LLDP_TLV_CHASSIS 1
#define LLDP_TLV_PORT 2
#define LLDP_TLV_TTL 3
#define LLDP_TLV_SYSNAME 5
#define LLDP_TLV_ORG 127

#define LLDP_CHASSIS_MAC 4
#define LLDP_CHASSIS_NETADDR 5
#define LLDP_CHASSIS_LOCAL 7
#define LLDP_PORT_MAC 3
#define LLDP_PORT_NETADDR 4
#define LLDP_PORT_IFNAME 5

#define LLDP_ORG_SUBTYPE_AGENT_ID 1
#define LLDP_ETH_HLEN 14
#define LLDP_ETH_ZLEN 60

const uint8_t lldp_mcast[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};
static const uint8_t lldp_oui[3] = {0x02, 0x72, 0x64};

/* ---- encoding ---------------------------------------------------------- */

static int lldp_printable(int c)
{
	return c >= 0x20 && c <= 0x7e;
}

/* Length of s if it is 1..max printable characters, else -1. */
ssize_t lldp_str_check(const char *s, size_t max)
{
	size_t n;

	if (!s)
		return -1;
	n = strnlen(s, max + 1);
	if (n == 0 || n > max)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!lldp_printable((unsigned char)s[i]))
			return -1;
	return (ssize_t)n;
}

static uint8_t *lldp_put_tlv(uint8_t *p, unsigned type, size_t len)
{
	p[0] = (uint8_t)((type << 1) | ((len >> 8) & 1));
	p[1] = (uint8_t)(len & 0xff);
	return p + 2;
}

ssize_t lldp_encode(uint8_t *buf, size_t len, const uint8_t src_mac[6],
		    const char *chassis, const char *port, uint16_t ttl,
		    const char *agent_id)
{
	ssize_t cl, pl, al = 0;
	size_t need;
	uint8_t *p;

	if (!buf || !src_mac) {
		errno = EINVAL;
		return -1;
	}
	cl = lldp_str_check(chassis, LLDP_ID_MAX);
	pl = lldp_str_check(port, LLDP_ID_MAX);
	/* No agent id: a plain LLDP frame without our TLV. */
	if (agent_id && *agent_id)
		al = lldp_str_check(agent_id, LLDP_AGENT_ID_MAX);
	if (cl < 0 || pl < 0 || al < 0) {
		errno = EINVAL;
		return -1;
	}
	need = LLDP_ETH_HLEN + (2 + 1 + (size_t)cl) + (2 + 1 + (size_t)pl) +
	       (2 + 2) + (2 + (size_t)cl) + (al ? 2 + 4 + (size_t)al : 0) + 2;
	if (need < LLDP_ETH_ZLEN)
		need = LLDP_ETH_ZLEN;
	if (need > len) {
		errno = EMSGSIZE;
		return -1;
	}
	memset(buf, 0, need);
	memcpy(buf, lldp_mcast, 6);
	memcpy(buf + 6, src_mac, 6);
	buf[12] = LLDP_ETHERTYPE >> 8;
	buf[13] = LLDP_ETHERTYPE & 0xff;
	p = buf + LLDP_ETH_HLEN;

	p = lldp_put_tlv(p, LLDP_TLV_CHASSIS, 1 + (size_t)cl);
	*p++ = LLDP_CHASSIS_LOCAL;
	memcpy(p, chassis, (size_t)cl);
	p += cl;

	p = lldp_put_tlv(p, LLDP_TLV_PORT, 1 + (size_t)pl);
	*p++ = LLDP_PORT_IFNAME;
	memcpy(p, port, (size_t)pl);
	p += pl;

	p = lldp_put_tlv(p, LLDP_TLV_TTL, 2);
	*p++ = (uint8_t)(ttl >> 8);
	*p++ = (uint8_t)(ttl & 0xff);

	p = lldp_put_tlv(p, LLDP_TLV_SYSNAME, (size_t)cl);
	memcpy(p, chassis, (size_t)cl);
	p += cl;

	if (al) {
		p = lldp_put_tlv(p, LLDP_TLV_ORG, 4 + (size_t)al);
		memcpy(p, lldp_oui, 3);
		p[3] = LLDP_ORG_SUBTYPE_AGENT_ID;
		memcpy(p + 4, agent_id, (size_t)al);
		p += 4 + al;
	}
	lldp_put_tlv(p, LLDP_TLV_END, 0); /* the rest is already zero */
	return (ssize_t)need;
}

/* ---- decoding ---------------------------------------------------------- */

/* n bytes as text, non-printable ones as '?'. n < size. */
static void lldp_text(char *dst, const uint8_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = lldp_printable(v[i]) ? (char)v[i] : '?';
	dst[n] = '\0';
}

/* One chassis or port id (the octets after the subtype) as a string. */
static int lldp_id_string(char *dst, size_t size, int is_mac, int is_netaddr,
			  const uint8_t *v, size_t n)
{
	if (n == 0 || n >= size)
		return -1;
	if (is_mac) {
		char *w = dst;

		/* aa:bb:..; a MAC id longer than fits is malformed. */
		if (n * 3 > size)
			return -1;
		for (size_t i = 0; i < n; i++) {
			if (i)
				*w++ = ':';
			snprintf(w, 3, "%02x", v[i]);
			w += 2;
		}
		*w = '\0';
		return 0;
	}
	/* IANA address family 1 = IPv4, 2 = IPv6; anything else as text. */
	if (is_netaddr && ((v[0] == 1 && n == 5 &&
			    inet_ntop(AF_INET, v + 1, dst, (socklen_t)size)) ||
			   (v[0] == 2 && n == 17 &&
			    inet_ntop(AF_INET6, v + 1, dst, (socklen_t)size))))
		return 0;
	lldp_text(dst, v, n);
	return 0;
}

int lldp_decode(const uint8_t *frame, size_t len, struct lldp_info *out)
{
	const uint8_t *p, *end;
	unsigned idx = 0;
	int have_agent = 0;

	memset(out, 0, sizeof(*out));
	if (!frame || len < LLDP_ETH_HLEN ||
	    ((unsigned)frame[12] << 8 | frame[13]) != LLDP_ETHERTYPE) {
		/* 802.1Q-tagged frames land here too: LLDP to the nearest
		 * bridge is never tagged. */
		errno = ENOENT;
		return -1;
	}
	memcpy(out->src_mac, frame + 6, 6);
	p = frame + LLDP_ETH_HLEN;
	end = frame + len;
	for (;;) {
		unsigned type;
		size_t tlen;
		const uint8_t *v;

		if (p == end)
			break; /* no End TLV: accepted, see the top */
		if (end - p < 2)
			goto bad;
		type = p[0] >> 1;
		tlen = ((size_t)(p[0] & 1) << 8) | p[1];
		p += 2;
		if (tlen > (size_t)(end - p))
			goto bad;
		v = p;
		p += tlen;
		/* Chassis, port, TTL: first, in order, once each. */
		if (idx < 3 ? type != idx + 1
			    : type >= LLDP_TLV_CHASSIS && type <= LLDP_TLV_TTL)
			goto bad;
		idx++;
		switch (type) {
		case LLDP_TLV_END:
			if (tlen != 0)
				goto bad;
			goto done;
		case LLDP_TLV_CHASSIS:
			if (tlen < 2 ||
			    lldp_id_string(out->chassis_id,
					   sizeof(out->chassis_id),
					   v[0] == LLDP_CHASSIS_MAC,
					   v[0] == LLDP_CHASSIS_NETADDR, v + 1,
					   tlen - 1) < 0)
				goto bad;
			break;
		case LLDP_TLV_PORT:
			if (tlen < 2 ||
			    lldp_id_string(out->port_id, sizeof(out->port_id),
					   v[0] == LLDP_PORT_MAC,
					   v[0] == LLDP_PORT_NETADDR, v + 1,
					   tlen - 1) < 0)
				goto bad;
			break;
		case LLDP_TLV_TTL:
			if (tlen != 2)
				goto bad;
			out->ttl = (uint16_t)(v[0] << 8 | v[1]);
			break;
		case LLDP_TLV_ORG:
			if (tlen < 4)
				goto bad;
			if (memcmp(v, lldp_oui, 3) != 0 ||
			    v[3] != LLDP_ORG_SUBTYPE_AGENT_ID)
				break; /* someone else's */
			if (have_agent || tlen == 4 ||
			    tlen - 4 >= sizeof(out->agent_id))
				goto bad;
			lldp_text(out->agent_id, v + 4, tlen - 4);
			have_agent = 1;
			break;
		default:
			break; /* optional TLVs we do not use */
		}
	}
done:
	if (idx < 3)
		goto bad;
	return 0;
bad:
	memset(out, 0, sizeof(*out));
	errno = EBADMSG;
	return -1;
}
