/* lldp: the frame encoder/decoder on exact bytes and every malformed case,
 * and the beacons themselves over a real veth pair and loopback in a
 * private network namespace (root only). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <grp.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "testns.h"
#include "agent/lldp.h"
#include "log.h"

static const uint8_t test_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

/* ---- frame builder for hand-made frames --------------------------------- */

struct fb {
	uint8_t b[2048];
	size_t n;
};

static void fb_eth(struct fb *f, uint16_t ethertype)
{
	static const uint8_t hdr[12] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e,
					0x00, 0x1c, 0x73, 0xaa, 0xbb, 0x01};

	memcpy(f->b, hdr, sizeof(hdr));
	f->b[12] = (uint8_t)(ethertype >> 8);
	f->b[13] = (uint8_t)ethertype;
	f->n = 14;
}

static void fb_raw(struct fb *f, const void *p, size_t n)
{
	assert_true(f->n + n <= sizeof(f->b));
	if (n)
		memcpy(f->b + f->n, p, n);
	f->n += n;
}

/* A TLV header claiming len, followed by n bytes of v (n may differ). */
static void fb_tlv_n(struct fb *f, unsigned type, size_t len, const void *v,
		     size_t n)
{
	uint8_t h[2] = {(uint8_t)(type << 1 | (len >> 8 & 1)),
			(uint8_t)(len & 0xff)};

	fb_raw(f, h, 2);
	fb_raw(f, v, n);
}

static void fb_tlv(struct fb *f, unsigned type, const void *v, size_t n)
{
	fb_tlv_n(f, type, n, v, n);
}

/* An id TLV: subtype octet then the string. */
static void fb_id(struct fb *f, unsigned type, uint8_t subtype, const char *s)
{
	uint8_t v[600];
	size_t n = strlen(s);

	assert_true(n < sizeof(v));
	v[0] = subtype;
	memcpy(v + 1, s, n);
	fb_tlv(f, type, v, n + 1);
}

static void fb_ttl(struct fb *f, uint16_t ttl)
{
	uint8_t v[2] = {(uint8_t)(ttl >> 8), (uint8_t)ttl};

	fb_tlv(f, 3, v, 2);
}

static void fb_agent(struct fb *f, const char *id)
{
	uint8_t v[600] = {0x02, 0x72, 0x64, 0x01};
	size_t n = strlen(id);

	memcpy(v + 4, id, n);
	fb_tlv(f, 127, v, n + 4);
}

static void fb_end(struct fb *f)
{
	fb_tlv(f, 0, NULL, 0);
}

/* A frame as data: the steps after the LLDP Ethernet header, up to the
 * first FB_DONE (so a table of cases can hold its frames). */
enum fb_op {
	FB_DONE,
	FB_ID,	      /* type, sub: subtype, s */
	FB_ID_REP,    /* type, sub: subtype, n times c */
	FB_TLV,	      /* type, s of n octets */
	FB_TLV_N,     /* type, sub: claimed length, s of n octets */
	FB_TTL,	      /* sub: seconds */
	FB_AGENT,     /* s */
	FB_AGENT_REP, /* n times c */
	FB_RAW,	      /* s of n octets */
	FB_END,
};

struct fb_step {
	enum fb_op op;
	unsigned type, sub;
	const char *s;
	size_t n;
	char c;
};

#define S_ID(t, sub, str)                                                      \
	{                                                                      \
		FB_ID, t, sub, str, 0, 0                                       \
	}
#define S_CH(str) S_ID(1, 7, str)
#define S_PORT(str) S_ID(2, 5, str)
#define S_ID_REP(t, sub, ch, count)                                            \
	{                                                                      \
		FB_ID_REP, t, sub, NULL, count, ch                             \
	}
#define S_TLV(t, str, len)                                                     \
	{                                                                      \
		FB_TLV, t, 0, str, len, 0                                      \
	}
#define S_TLV_N(t, claim, str, len)                                            \
	{                                                                      \
		FB_TLV_N, t, claim, str, len, 0                                \
	}
#define S_TTL(v)                                                               \
	{                                                                      \
		FB_TTL, 3, v, NULL, 0, 0                                       \
	}
#define S_AGENT(str)                                                           \
	{                                                                      \
		FB_AGENT, 127, 0, str, 0, 0                                    \
	}
#define S_AGENT_REP(ch, count)                                                 \
	{                                                                      \
		FB_AGENT_REP, 127, 0, NULL, count, ch                          \
	}
#define S_RAW(str, len)                                                        \
	{                                                                      \
		FB_RAW, 0, 0, str, len, 0                                      \
	}
#define S_END                                                                  \
	{                                                                      \
		FB_END, 0, 0, NULL, 0, 0                                       \
	}
#define S_DONE                                                                 \
	{                                                                      \
		FB_DONE, 0, 0, NULL, 0, 0                                      \
	}
/* The three mandatory TLVs of a minimal valid frame. */
#define S_MANDATORY S_CH("n2"), S_PORT("eth1"), S_TTL(120)

static void fb_build(struct fb *f, const struct fb_step *st)
{
	char rep[600];

	fb_eth(f, LLDP_ETHERTYPE);
	for (; st->op != FB_DONE; st++) {
		if (st->op == FB_ID_REP || st->op == FB_AGENT_REP) {
			assert_true(st->n < sizeof(rep));
			memset(rep, st->c, st->n);
			rep[st->n] = '\0';
		}
		switch (st->op) {
		case FB_ID:
			fb_id(f, st->type, (uint8_t)st->sub, st->s);
			break;
		case FB_ID_REP:
			fb_id(f, st->type, (uint8_t)st->sub, rep);
			break;
		case FB_TLV:
			fb_tlv(f, st->type, st->s, st->n);
			break;
		case FB_TLV_N:
			fb_tlv_n(f, st->type, st->sub, st->s, st->n);
			break;
		case FB_TTL:
			fb_ttl(f, (uint16_t)st->sub);
			break;
		case FB_AGENT:
			fb_agent(f, st->s);
			break;
		case FB_AGENT_REP:
			fb_agent(f, rep);
			break;
		case FB_RAW:
			fb_raw(f, st->s, st->n);
			break;
		case FB_END:
			fb_end(f);
			break;
		case FB_DONE:
			break;
		}
	}
}

/* Decode from an exact-size heap copy, so that ASan sees any over-read. */
static int decode_copy(const uint8_t *frame, size_t len, struct lldp_info *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	int rc, err;

	assert_non_null(copy);
	memcpy(copy, frame, len);
	errno = 0;
	rc = lldp_decode(copy, len, out);
	err = errno;
	free(copy);
	errno = err;
	return rc;
}

/* The frame of steps decodes (err 0), or fails with err; what says which
 * case failed. */
static void expect_steps(const char *what, const struct fb_step *steps, int err,
			 struct lldp_info *info)
{
	struct fb f;
	int rc;

	fb_build(&f, steps);
	rc = decode_copy(f.b, f.n, info);
	if (err ? rc != -1 || errno != err : rc != 0)
		fail_msg("%s: decode gave %d (%s), want %s", what, rc,
			 rc ? strerror(errno) : "no error",
			 err ? strerror(err) : "no error");
}

/* Accepted frames and what must come out of them (NULL, -1: not
 * checked). */
struct accepted {
	const char *what;
	struct fb_step steps[12];
	const char *chassis, *port, *agent;
	int ttl;
};

static void expect_accepted(const struct accepted *c, size_t n)
{
	struct lldp_info info;

	for (size_t i = 0; i < n; i++) {
		print_message("    %s\n", c[i].what);
		expect_steps(c[i].what, c[i].steps, 0, &info);
		if (c[i].chassis)
			assert_string_equal(info.chassis_id, c[i].chassis);
		if (c[i].port)
			assert_string_equal(info.port_id, c[i].port);
		if (c[i].agent)
			assert_string_equal(info.agent_id, c[i].agent);
		if (c[i].ttl >= 0)
			assert_int_equal(info.ttl, c[i].ttl);
	}
}

/* ---- encoder ------------------------------------------------------------ */

/* Fixed inputs, fixed bytes: any change to the wire format shows here. */
static void test_encode_exact(void **state)
{
	static const uint8_t want[60] = {
		/* dst, src, ethertype */
		0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0x02, 0x00, 0x00, 0x00,
		0x00, 0x01, 0x88, 0xcc,
		/* Chassis ID, len 3, locally assigned, "n1" */
		0x02, 0x03, 0x07, 'n', '1',
		/* Port ID, len 12, interface name, "enp1s0f0np0" */
		0x04, 0x0c, 0x05, 'e', 'n', 'p', '1', 's', '0', 'f', '0', 'n',
		'p', '0',
		/* TTL, len 2, 120 s */
		0x06, 0x02, 0x00, 0x78,
		/* System Name, len 2, "n1" */
		0x0a, 0x02, 'n', '1',
		/* Org-specific, len 10, OUI 02-72-64, subtype 1, "a1b2c3" */
		0xfe, 0x0a, 0x02, 0x72, 0x64, 0x01, 'a', '1', 'b', '2', 'c',
		'3',
		/* End */
		0x00, 0x00,
		/* padding to the 60-byte Ethernet minimum */
		0x00, 0x00, 0x00, 0x00, 0x00};
	uint8_t buf[LLDP_MAX_FRAME];

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(lldp_encode(buf, sizeof(buf), test_mac, "n1",
				     "enp1s0f0np0", 120, "a1b2c3"),
			 60);
	assert_memory_equal(buf, want, sizeof(want));
	/* Exactly big enough is enough; one byte less is not. */
	assert_int_equal(lldp_encode(buf, 60, test_mac, "n1", "enp1s0f0np0",
				     120, "a1b2c3"),
			 60);
	assert_int_equal(lldp_encode(buf, 59, test_mac, "n1", "enp1s0f0np0",
				     120, "a1b2c3"),
			 -1);
	assert_int_equal(errno, EMSGSIZE);
}

/* Longer than the minimum: no padding; 9-bit TLV lengths. */
static void test_encode_long(void **state)
{
	char chassis[256], agent[64];
	uint8_t buf[LLDP_MAX_FRAME];
	struct lldp_info info;
	ssize_t n;

	(void)state;
	memset(chassis, 'c', 255);
	chassis[255] = '\0';
	memset(agent, 'a', 63);
	agent[63] = '\0';
	n = lldp_encode(buf, sizeof(buf), test_mac, chassis, "p", 65535, agent);
	/* 14 + (2+256) + (2+2) + 4 + (2+255) + (2+4+63) + 2 */
	assert_int_equal(n, 608);
	/* Chassis TLV: type 1, length 256 = 0x100, the 9th bit in octet 0. */
	assert_int_equal(buf[14], 0x03);
	assert_int_equal(buf[15], 0x00);
	assert_int_equal(buf[n - 2], 0);
	assert_int_equal(buf[n - 1], 0);
	assert_int_equal(decode_copy(buf, (size_t)n, &info), 0);
	assert_string_equal(info.chassis_id, chassis);
	assert_string_equal(info.port_id, "p");
	assert_string_equal(info.agent_id, agent);
	assert_int_equal(info.ttl, 65535);
}

static void test_encode_invalid(void **state)
{
	char big[300];
	uint8_t buf[LLDP_MAX_FRAME];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
#define ENC_EINVAL(ch, po, ag)                                                 \
	do {                                                                   \
		errno = 0;                                                     \
		assert_int_equal(lldp_encode(buf, sizeof(buf), test_mac, ch,   \
					     po, 1, ag),                       \
				 -1);                                          \
		assert_int_equal(errno, EINVAL);                               \
	} while (0)
	ENC_EINVAL("", "eth0", "a");
	ENC_EINVAL(NULL, "eth0", "a");
	ENC_EINVAL("n1", "", "a");
	ENC_EINVAL("n1", NULL, "a");
	ENC_EINVAL(big, "eth0", "a");			  /* 299 > 255 */
	ENC_EINVAL("n1", big, "a");			  /* 299 > 255 */
	ENC_EINVAL("n1", "eth0", big + sizeof(big) - 65); /* 64 > 63 */
	ENC_EINVAL("n\n1", "eth0", "a");		  /* not printable */
	ENC_EINVAL("n1", "eth\x01", "a");
	ENC_EINVAL("n1", "eth0", "a\x7f");
#undef ENC_EINVAL
	errno = 0;
	assert_int_equal(
		lldp_encode(NULL, sizeof(buf), test_mac, "n1", "e", 1, "a"),
		-1);
	assert_int_equal(errno, EINVAL);
	/* Too small a buffer for an otherwise fine frame. */
	assert_int_equal(lldp_encode(buf, 10, test_mac, "n1", "e", 1, "a"), -1);
	assert_int_equal(errno, EMSGSIZE);
}

/* No agent id: a plain LLDP frame without our TLV. */
static void test_encode_no_agent(void **state)
{
	uint8_t buf[LLDP_MAX_FRAME], buf2[LLDP_MAX_FRAME];
	struct lldp_info info;
	ssize_t n;

	(void)state;
	n = lldp_encode(buf, sizeof(buf), test_mac, "n1", "eth0", 8, NULL);
	assert_int_equal(n, 60);
	assert_int_equal(
		lldp_encode(buf2, sizeof(buf2), test_mac, "n1", "eth0", 8, ""),
		60);
	assert_memory_equal(buf, buf2, 60);
	/* 14 + 5 + 7 + 4 + 4 = 34: End right after the System Name. */
	assert_int_equal(buf[34], 0);
	assert_int_equal(buf[35], 0);
	assert_int_equal(decode_copy(buf, (size_t)n, &info), 0);
	assert_string_equal(info.agent_id, "");
	assert_string_equal(info.chassis_id, "n1");
}

static void test_roundtrip(void **state)
{
	static const char *const ports[] = {"enp1s0f0np0", "enP2p1s0f1np1",
					    "eth0", "x"};
	uint8_t buf[LLDP_MAX_FRAME];
	struct lldp_info info;

	(void)state;
	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		ssize_t n = lldp_encode(buf, sizeof(buf), test_mac,
					"spark-04.lab", ports[i],
					(uint16_t)(i * 1000), "9f2c-77:ab");

		assert_true(n >= 60);
		assert_int_equal(decode_copy(buf, (size_t)n, &info), 0);
		assert_memory_equal(info.src_mac, test_mac, 6);
		assert_string_equal(info.chassis_id, "spark-04.lab");
		assert_string_equal(info.port_id, ports[i]);
		assert_string_equal(info.agent_id, "9f2c-77:ab");
		assert_int_equal(info.ttl, i * 1000);
	}
}

/* ---- decoder ------------------------------------------------------------ */

/* What an ordinary switch sends: MAC chassis id, interface-name port id,
 * port description, system name/description/capabilities, a management
 * address, IEEE 802.1 and 802.3 organisation TLVs. */
static void test_decode_switch(void **state)
{
	static const uint8_t chassis[] = {0x04, 0x00, 0x1c, 0x73,
					  0xaa, 0xbb, 0xcc};
	static const uint8_t caps[] = {0x00, 0x14, 0x00, 0x14};
	static const uint8_t mgmt[] = {0x05, 0x01, 192,	 0,    2,    10,
				       0x02, 0x00, 0x00, 0x00, 0x01, 0x00};
	static const uint8_t pvid[] = {0x00, 0x80, 0xc2, 0x01, 0x00, 0x01};
	static const uint8_t macphy[] = {0x00, 0x12, 0x0f, 0x01, 0x03,
					 0x6c, 0x00, 0x00, 0x10};
	struct lldp_info info;
	struct fb f;

	(void)state;
	fb_eth(&f, LLDP_ETHERTYPE);
	fb_tlv(&f, 1, chassis, sizeof(chassis));
	fb_id(&f, 2, 5, "Ethernet1/1");
	fb_ttl(&f, 120);
	fb_tlv(&f, 4, "to n1 port 1", 12);
	fb_tlv(&f, 5, "leaf-01", 7);
	fb_tlv(&f, 6, "Arista Networks EOS version 4.28.3M", 35);
	fb_tlv(&f, 7, caps, sizeof(caps));
	fb_tlv(&f, 8, mgmt, sizeof(mgmt));
	fb_tlv(&f, 127, pvid, sizeof(pvid));
	fb_tlv(&f, 127, macphy, sizeof(macphy));
	fb_end(&f);
	assert_int_equal(decode_copy(f.b, f.n, &info), 0);
	assert_string_equal(info.chassis_id, "00:1c:73:aa:bb:cc");
	assert_string_equal(info.port_id, "Ethernet1/1");
	assert_int_equal(info.ttl, 120);
	assert_string_equal(info.agent_id, "");
	assert_memory_equal(
		info.src_mac,
		((const uint8_t[]){0x00, 0x1c, 0x73, 0xaa, 0xbb, 0x01}), 6);
}

static void test_decode_subtypes(void **state)
{
	static const char v4[] = {0x05, 0x01, (char)192, 0, 2, 1};
	static const char v6[] = {0x04, 0x02, 0x20, 0x01, 0x0d, (char)0xb8,
				  0,	0,    0,    0,	  0,	0,
				  0,	0,    0,    0,	  0,	1};
	static const char pmac[] = {0x03,	(char)0xde, (char)0xad,
				    (char)0xbe, (char)0xef, 0x00,
				    0x01};
	static const char odd[] = {0x05, 0x09, 'a', 'b'};
	static const char bin[] = {0x01, 'a',	     0x00,	 'b',
				   0x1f, (char)0x80, (char)0xff, '~'};
	static const struct accepted cases[] = {
		{"chassis IPv4, port IPv6",
		 {S_TLV(1, v4, sizeof(v4)), S_TLV(2, v6, sizeof(v6)), S_TTL(1),
		  S_END},
		 "192.0.2.1",
		 "2001:db8::1",
		 NULL,
		 -1},
		/* Port MAC; chassis network address of an unknown family as
		 * text; non-printable bytes as '?'. */
		{"port MAC, chassis of unknown family",
		 {S_TLV(1, odd, sizeof(odd)), S_TLV(2, pmac, sizeof(pmac)),
		  S_TTL(1), S_END},
		 "?ab",
		 "de:ad:be:ef:00:01",
		 NULL,
		 -1},
		{"non-printable octets",
		 {S_TLV(1, bin, sizeof(bin)), S_ID(2, 7, "p\tq"), S_TTL(1),
		  S_AGENT("id\x01x"), S_END},
		 "a?b???~",
		 "p?q",
		 "id?x",
		 -1},
	};

	(void)state;
	expect_accepted(cases, sizeof(cases) / sizeof(cases[0]));
}

/* Frames that are fine though not what we send. */
static void test_decode_lenient(void **state)
{
	static const char other_sub[] = {0x02, 0x72, 0x64, 0x02, 'z'};
	static const char other_oui[] = {0x00, (char)0x80, (char)0xc2,
					 0x01, 'z',	   'z'};
	static const struct accepted cases[] = {
		/* No End TLV: the TLVs end exactly at the end of the frame. */
		{"no End", {S_MANDATORY}, "n2", "eth1", NULL, 120},
		{"no End, agent",
		 {S_MANDATORY, S_AGENT("ag")},
		 NULL,
		 NULL,
		 "ag",
		 -1},
		/* Whatever follows End is padding, even if it is not zero. */
		{"padding not zero",
		 {S_MANDATORY, S_END, S_RAW("\xff\xff\x01", 3)},
		 NULL,
		 NULL,
		 NULL,
		 -1},
		/* Unknown and reserved TLV types, other organisations' TLVs
		 * and our OUI with another subtype are skipped; TTL 0 is a
		 * valid shutdown. */
		{"skipped TLVs, TTL 0",
		 {S_CH("n2"), S_PORT("eth1"), S_TTL(0),
		  S_TLV(100, "whatever", 8), S_TLV(9, NULL, 0),
		  S_TLV(127, other_sub, sizeof(other_sub)),
		  S_TLV(127, other_oui, sizeof(other_oui)), S_AGENT("ag"),
		  S_END},
		 NULL,
		 NULL,
		 "ag",
		 0},
	};
	struct lldp_info info;
	char s[256];

	(void)state;
	expect_accepted(cases, sizeof(cases) / sizeof(cases[0]));
	/* Longest ids: 255 octets. */
	{
		static const struct fb_step longest[] = {
			S_ID_REP(1, 1, 'q', 255), S_ID_REP(2, 2, 'q', 255),
			S_TTL(5), S_END, S_DONE};

		memset(s, 'q', 255);
		s[255] = '\0';
		expect_steps("longest ids", longest, 0, &info);
		assert_string_equal(info.chassis_id, s);
		assert_string_equal(info.port_id, s);
	}
}

static void test_decode_not_lldp(void **state)
{
	uint8_t buf[LLDP_MAX_FRAME];
	struct lldp_info info;
	struct fb f;
	ssize_t n;

	(void)state;
	n = lldp_encode(buf, sizeof(buf), test_mac, "n1", "e", 1, "a");
	assert_true(n > 0);
	for (size_t len = 0; len < 14; len++) {
		assert_int_equal(decode_copy(buf, len, &info), -1);
		assert_int_equal(errno, ENOENT);
	}
	buf[12] = 0x08;
	buf[13] = 0x00;
	assert_int_equal(decode_copy(buf, (size_t)n, &info), -1);
	assert_int_equal(errno, ENOENT);

	/* An 802.1Q-tagged LLDP frame is not what a bridge-local LLDP agent
	 * expects: not LLDP for us. */
	fb_eth(&f, 0x8100);
	fb_raw(&f, "\x00\x05\x88\xcc", 4);
	fb_id(&f, 1, 7, "n2");
	fb_id(&f, 2, 5, "eth1");
	fb_ttl(&f, 120);
	fb_end(&f);
	assert_int_equal(decode_copy(f.b, f.n, &info), -1);
	assert_int_equal(errno, ENOENT);
}

/* Every one refused with EBADMSG. */
static void test_decode_malformed(void **state)
{
	static const struct {
		const char *what;
		struct fb_step steps[8];
	} cases[] = {
		{"nothing after the Ethernet header", {{FB_DONE}}},
		/* Truncated TLV header: one octet left. */
		{"half a TLV header after TTL",
		 {S_MANDATORY, S_RAW("\x00", 1)}},
		{"half a TLV header first", {S_RAW("\x02", 1)}},
		/* TLV length past the end, in a mandatory and an optional
		 * TLV. */
		{"port past the end",
		 {S_CH("n2"), S_TLV_N(2, 20,
				      "\x05"
				      "eth1",
				      5)}},
		{"optional past the end",
		 {S_MANDATORY, S_TLV_N(5, 9, "leaf", 4)}},
		{"org TLV past the end",
		 {S_MANDATORY, S_TLV_N(127, 511, "\x02\x72\x64\x01", 4)}},
		/* Missing chassis / port / TTL. */
		{"no chassis", {S_PORT("eth1"), S_TTL(120), S_END}},
		{"no port", {S_CH("n2"), S_TTL(120), S_END}},
		{"no TTL", {S_CH("n2"), S_PORT("eth1"), S_END}},
		/* ... and the frame just stopping before TTL. */
		{"stops before TTL", {S_CH("n2"), S_PORT("eth1")}},
		/* Wrong order. */
		{"port first", {S_PORT("eth1"), S_CH("n2"), S_TTL(120), S_END}},
		{"TTL before port",
		 {S_CH("n2"), S_TTL(120), S_PORT("eth1"), S_END}},
		/* An optional TLV before the mandatory ones are complete. */
		{"optional too early",
		 {S_CH("n2"), S_TLV(5, "leaf", 4), S_PORT("eth1"), S_TTL(120),
		  S_END}},
		/* Mandatory TLVs twice. */
		{"chassis twice", {S_MANDATORY, S_CH("n3"), S_END}},
		{"port twice", {S_MANDATORY, S_PORT("eth2"), S_END}},
		{"TTL twice", {S_MANDATORY, S_TTL(1), S_END}},
		/* Zero-length chassis / port ids: no octets, or a subtype
		 * only. */
		{"chassis of no octets",
		 {S_TLV(1, NULL, 0), S_PORT("eth1"), S_TTL(120), S_END}},
		{"chassis subtype only",
		 {S_CH(""), S_PORT("eth1"), S_TTL(120), S_END}},
		{"port subtype only",
		 {S_CH("n2"), S_PORT(""), S_TTL(120), S_END}},
		/* Oversized ids: 256 octets after the subtype. */
		{"chassis of 256",
		 {S_ID_REP(1, 7, 'x', 256), S_PORT("eth1"), S_TTL(120), S_END}},
		{"port of 256",
		 {S_CH("n2"), S_ID_REP(2, 5, 'x', 256), S_TTL(120), S_END}},
		/* A MAC id too long to print in the field (86 octets). */
		{"MAC chassis of 86",
		 {S_ID_REP(1, 4, 'x', 86), S_PORT("eth1"), S_TTL(120), S_END}},
		/* TTL of the wrong length. */
		{"TTL of 1 octet",
		 {S_CH("n2"), S_PORT("eth1"), S_TLV(3, "\x01", 1), S_END}},
		{"TTL of 3 octets",
		 {S_CH("n2"), S_PORT("eth1"), S_TLV(3, "\x00\x01\x02", 3),
		  S_END}},
		/* End with a length; End before the mandatory TLVs. */
		{"End with a length", {S_MANDATORY, S_TLV(0, "\x00", 1)}},
		{"End too early",
		 {S_CH("n2"), S_END, S_PORT("eth1"), S_TTL(120)}},
		/* Our TLV: empty, oversized (64), twice; an org TLV without
		 * room for OUI and subtype. */
		{"empty agent id", {S_MANDATORY, S_AGENT(""), S_END}},
		{"agent id of 64", {S_MANDATORY, S_AGENT_REP('a', 64), S_END}},
		{"agent id twice",
		 {S_MANDATORY, S_AGENT("a"), S_AGENT("b"), S_END}},
		{"org TLV without subtype",
		 {S_MANDATORY, S_TLV(127, "\x02\x72\x64", 3), S_END}},
	};
	static const struct fb_step mac85[] = {S_ID_REP(1, 4, 'x', 85),
					       S_PORT("eth1"), S_TTL(120),
					       S_END, S_DONE};
	static const struct fb_step agent63[] = {
		S_MANDATORY, S_AGENT_REP('a', 63), S_END, S_DONE};
	static const struct fb_step bad_ttl[] = {
		S_MANDATORY, S_TLV(3, "\x00\x01", 2), S_DONE};
	struct lldp_info info;
	struct fb f;
	char s[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_steps(cases[i].what, cases[i].steps, EBADMSG, &info);

	/* One octet less than the refused cases above: fine. */
	expect_steps("MAC chassis of 85", mac85, 0, &info);
	assert_int_equal(strlen(info.chassis_id), 85 * 3 - 1);
	expect_steps("agent id of 63", agent63, 0, &info);
	memset(s, 'a', 63);
	s[63] = '\0';
	assert_string_equal(info.agent_id, s);

	/* A failed decode leaves nothing half-filled behind. */
	fb_build(&f, bad_ttl);
	assert_int_equal(decode_copy(f.b, f.n, &info), -1);
	assert_string_equal(info.chassis_id, "");
	assert_string_equal(info.port_id, "");
}

/* Every prefix of one of our frames: accepted exactly when it ends on a
 * TLV boundary after TTL; never a read past the prefix (ASan). */
static void test_decode_prefixes(void **state)
{
	uint8_t buf[LLDP_MAX_FRAME];
	struct lldp_info info;
	ssize_t n;

	(void)state;
	n = lldp_encode(buf, sizeof(buf), test_mac, "n1", "enp1s0f0np0", 120,
			"a1b2c3");
	assert_int_equal(n, 60);
	/* TLV boundaries: TTL ends at 37, System Name 41, org 53, End 55;
	 * 54 leaves half a TLV header. */
	for (size_t len = 0; len <= (size_t)n; len++) {
		int rc = decode_copy(buf, len, &info);

		if (len < 14) {
			assert_int_equal(rc, -1);
			assert_int_equal(errno, ENOENT);
		} else if (len == 37 || len == 41 || len == 53 || len >= 55) {
			assert_int_equal(rc, 0);
			assert_string_equal(info.chassis_id, "n1");
			assert_string_equal(info.agent_id,
					    len >= 53 ? "a1b2c3" : "");
		} else {
			assert_int_equal(rc, -1);
			assert_int_equal(errno, EBADMSG);
		}
	}
}

/* ---- runtime without privileges ----------------------------------------- */

static void test_new_invalid(void **state)
{
	struct event_base *base = event_base_new();
	char big[80];

	(void)state;
	assert_non_null(base);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	errno = 0;
	assert_null(lldp_new(base, "", "a", 1000, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(lldp_new(base, NULL, "a", 1000, NULL, NULL));
	assert_null(lldp_new(base, "n1", "a", 0, NULL, NULL));
	assert_null(lldp_new(base, "n1", big, 1000, NULL, NULL));
	assert_null(lldp_new(NULL, "n1", "a", 1000, NULL, NULL));
	event_base_free(base);
}

static int test_change_count;

static void test_count_cb(void *arg)
{
	(void)arg;
	test_change_count++;
}

/* Interfaces that do not exist are skipped quietly, by anyone. */
static void test_missing_interface(void **state)
{
	static const char *const names[] = {"ringnosuch0", "ringnosuch1",
					    "much-too-long-interface-name"};
	struct event_base *base = event_base_new();
	struct lldp_neighbour nb[4];
	struct lldp *l;

	(void)state;
	l = lldp_new(base, "n1", "a", 1000, test_count_cb, NULL);
	assert_non_null(l);
	assert_null(lldp_error(l));
	assert_int_equal(lldp_set_interfaces(l, names, 3), 0);
	assert_null(lldp_error(l));
	assert_int_equal(lldp_neighbours(l, nb, 4), 0);
	assert_int_equal(lldp_set_interfaces(l, NULL, 0), 0);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(test_change_count, 0);
	lldp_free(l);
	lldp_free(NULL);
	event_base_free(base);
}

/* Without CAP_NET_RAW: -1/EPERM and a reason for the operator. Run in a
 * child that drops root, so that the test process keeps it. */
static int test_eperm_child(void)
{
	static const char *const lo[] = {"lo"};
	struct event_base *base;
	struct lldp *l;
	const char *e;
	int rc;

	if (geteuid() == 0 &&
	    (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
	     setresuid(65534, 65534, 65534) < 0))
		return 2;
	base = event_base_new();
	l = base ? lldp_new(base, "n1", "a", 1000, NULL, NULL) : NULL;
	if (!l)
		return 3;
	errno = 0;
	rc = lldp_set_interfaces(l, lo, 1);
	if (rc == 0)
		return 77; /* this process may open raw sockets after all */
	if (errno != EPERM)
		return 4;
	e = lldp_error(l);
	if (!e || !strstr(e, "CAP_NET_RAW") || !strstr(e, "probes"))
		return 5;
	lldp_free(l);
	event_base_free(base);
	return 0;
}

static void test_eperm(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(test_eperm_child());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77) {
		skip();
		return;
	}
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- real beacons in a private network namespace ------------------------ */

static uint64_t test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void test_run_for(struct event_base *base, unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000,
			     .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* ---- the neighbour table: what anyone on a cable can send ---------------- */

struct tbl {
	struct event_base *base;
	struct lldp *l;
	int changes;
	struct lldp_neighbour nb[LLDP_MAX_NEIGHBOURS];
	size_t n;
};

static void tbl_cb(void *arg)
{
	struct tbl *t = arg;

	t->changes++;
}

static void tbl_open(struct tbl *t, unsigned interval_ms)
{
	memset(t, 0, sizeof(*t));
	t->base = event_base_new();
	assert_non_null(t->base);
	t->l = lldp_new(t->base, "me", "agent-me", interval_ms, tbl_cb, t);
	assert_non_null(t->l);
}

static void tbl_close(struct tbl *t)
{
	lldp_free(t->l);
	event_base_free(t->base);
}

/* A claim heard on ifname: node, port, agent id, MAC's last byte, TTL. */
static void tbl_hear(struct tbl *t, const char *ifname, const char *node,
		     const char *port, const char *agent, uint8_t mac,
		     uint16_t ttl)
{
	struct lldp_info info;

	memset(&info, 0, sizeof(info));
	memcpy(info.src_mac, test_mac, 6);
	info.src_mac[5] = mac;
	snprintf(info.chassis_id, sizeof(info.chassis_id), "%s", node);
	snprintf(info.port_id, sizeof(info.port_id), "%s", port);
	snprintf(info.agent_id, sizeof(info.agent_id), "%s", agent);
	info.ttl = ttl;
	assert_int_equal(lldp_input(t->l, ifname, &info), 0);
}

static void tbl_read(struct tbl *t)
{
	t->n = lldp_neighbours(t->l, t->nb, LLDP_MAX_NEIGHBOURS);
}

/* Entries on ifname, and whether node/agent is among them. */
static size_t tbl_count(struct tbl *t, const char *ifname, const char *node,
			const char *agent, int *found)
{
	size_t c = 0;

	tbl_read(t);
	if (found)
		*found = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(t->nb[i].local_if, ifname))
			continue;
		c++;
		if (found && node && !strcmp(t->nb[i].remote_node, node) &&
		    !strcmp(t->nb[i].remote_agent_id, agent))
			*found = 1;
	}
	return c;
}

static uint64_t tbl_refused(struct tbl *t, const char *ifname)
{
	struct lldp_port_stats ps[LLDP_MAX_PORTS];
	size_t n = lldp_ports(t->l, ps, LLDP_MAX_PORTS);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(ps[i].local_if, ifname))
			return ps[i].claims_refused;
	return UINT64_MAX;
}

/* A flood of distinct claims with TTL 65535 on eth1: eth1 keeps the real
 * neighbour that was there and at most LLDP_MAX_PER_PORT claims, counts
 * every refused one, and the other ports keep theirs and still take new
 * ones. */
static void test_table_flood(void **state)
{
	struct tbl t;
	int found;

	(void)state;
	tbl_open(&t, 1000);
	tbl_hear(&t, "eth1", "n2", "eth2", "agent-n2", 2, 4);
	tbl_hear(&t, "eth2", "n3", "eth1", "agent-n3", 3, 4);
	for (unsigned i = 0; i < 1000; i++) {
		char node[32];

		snprintf(node, sizeof(node), "fake%u", i);
		tbl_hear(&t, "eth1", node, "eth1", "", (uint8_t)(i + 10),
			 65535);
	}
	assert_int_equal(tbl_count(&t, "eth1", "n2", "agent-n2", &found),
			 LLDP_MAX_PER_PORT);
	assert_true(found);
	assert_int_equal(tbl_count(&t, "eth2", "n3", "agent-n3", &found), 1);
	assert_true(found);
	assert_int_equal(tbl_refused(&t, "eth1"),
			 1000 - (LLDP_MAX_PER_PORT - 1));
	assert_int_equal(tbl_refused(&t, "eth2"), 0);
	/* A neighbour that turns up on another port after the flood. */
	tbl_hear(&t, "eth3", "n4", "eth1", "agent-n4", 4, 4);
	assert_int_equal(tbl_count(&t, "eth3", "n4", "agent-n4", &found), 1);
	assert_true(found);
	/* The real neighbour's refreshes are no claims: never refused. */
	tbl_hear(&t, "eth1", "n2", "eth2", "agent-n2", 2, 4);
	assert_int_equal(tbl_refused(&t, "eth1"),
			 1000 - (LLDP_MAX_PER_PORT - 1));
	tbl_close(&t);
}

/* Received TTLs are clamped to LLDP_MAX_TTL_S, or to our own TTL when
 * that is longer (a cluster with a long lldp_interval). */
static void test_table_ttl_clamp(void **state)
{
	static const struct {
		const char *what;
		unsigned interval_ms;
		const char *n3_if, *n3_port;
		uint16_t n3_ttl;
		unsigned want[2];
	} cases[] = {
		{"clamped", 1000, "eth2", "eth1", 20, {LLDP_MAX_TTL_S, 20}},
		/* we send TTL 400 s */
		{"our own TTL", 100000, "eth1", "eth2", 400, {400, 400}},
	};
	struct tbl t;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("    %s\n", cases[i].what);
		tbl_open(&t, cases[i].interval_ms);
		tbl_hear(&t, "eth1", "n2", "eth2", "a2", 2, 65535);
		tbl_hear(&t, cases[i].n3_if, "n3", cases[i].n3_port, "a3", 3,
			 cases[i].n3_ttl);
		tbl_read(&t);
		assert_int_equal(t.n, 2);
		assert_int_equal(t.nb[0].ttl, cases[i].want[0]);
		assert_int_equal(t.nb[1].ttl, cases[i].want[1]);
		tbl_close(&t);
	}
}

/* Two senders claiming the same node and port on one cable are both
 * reported (the coordinator tells them apart); a shutdown frame removes
 * only the claim it matches; our own frames are ignored. */
static void test_table_conflicting_claims(void **state)
{
	struct tbl t;

	(void)state;
	tbl_open(&t, 1000);
	tbl_hear(&t, "eth1", "n2", "eth2", "agent-n2", 2, 20);
	tbl_hear(&t, "eth1", "n2", "eth2", "forged", 66, 20);
	tbl_hear(&t, "eth1", "me", "eth1", "agent-me", 1, 20);
	tbl_read(&t);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.nb[0].remote_agent_id, "agent-n2");
	assert_string_equal(t.nb[1].remote_agent_id, "forged");
	assert_int_equal(t.nb[1].remote_mac[5], 66);
	tbl_hear(&t, "eth1", "n2", "eth2", "forged", 66, 0);
	tbl_read(&t);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.nb[0].remote_agent_id, "agent-n2");
	tbl_close(&t);
}

/* A full port makes room only by dropping a claim silent for over half
 * its TTL; the neighbour that keeps beaconing stays. */
static void test_table_stale_makes_room(void **state)
{
	struct tbl t;
	uint64_t t0;
	int found;

	(void)state;
	tbl_open(&t, 1000);
	tbl_hear(&t, "eth1", "n2", "eth2", "agent-n2", 2, 2);
	tbl_hear(&t, "eth1", "x1", "p", "", 11, 2);
	tbl_hear(&t, "eth1", "x2", "p", "", 12, 2);
	tbl_hear(&t, "eth1", "x3", "p", "", 13, 2);
	tbl_hear(&t, "eth1", "y1", "p", "", 21, 2);
	assert_int_equal(tbl_refused(&t, "eth1"), 1);
	/* 1.2 s (over half the 2 s TTL) with n2 beaconing every 100 ms. */
	t0 = test_now_ms();
	while (test_now_ms() - t0 < 1200) {
		tbl_hear(&t, "eth1", "n2", "eth2", "agent-n2", 2, 2);
		test_run_for(t.base, 100);
	}
	tbl_hear(&t, "eth1", "y1", "p", "", 21, 2);
	tbl_hear(&t, "eth1", "y2", "p", "", 22, 2);
	tbl_hear(&t, "eth1", "y3", "p", "", 23, 2);
	assert_int_equal(tbl_refused(&t, "eth1"), 1);
	tbl_hear(&t, "eth1", "y4", "p", "", 24, 2);
	assert_int_equal(tbl_refused(&t, "eth1"), 2);
	assert_int_equal(tbl_count(&t, "eth1", "n2", "agent-n2", &found), 4);
	assert_true(found);
	assert_int_equal(tbl_count(&t, "eth1", "x1", "", &found), 4);
	assert_false(found);
	tbl_close(&t);
}

/* A table that changes 1000 times within about a second yields at most
 * one push per LLDP_NOTIFY_MIN_MS (plus the first), and the last change
 * is always pushed. */
static void test_table_coalesced_pushes(void **state)
{
	struct tbl t;
	uint64_t t0, elapsed;
	int last;

	(void)state;
	tbl_open(&t, 1000);
	t0 = test_now_ms();
	for (unsigned i = 0; i < 1000; i++) {
		char node[32];

		snprintf(node, sizeof(node), "flap%u", i);
		/* a claim and its shutdown: two changes each */
		tbl_hear(&t, "eth1", node, "p", "", 9, 30);
		tbl_hear(&t, "eth1", node, "p", "", 9, 0);
		event_base_loop(t.base, EVLOOP_NONBLOCK);
		if (i % 100 == 99)
			test_run_for(t.base, 100);
	}
	tbl_hear(&t, "eth1", "final", "p", "", 9, 30);
	elapsed = test_now_ms() - t0;
	last = t.changes;
	assert_true(last >= 1);
	assert_true((uint64_t)last <= elapsed / LLDP_NOTIFY_MIN_MS + 1);
	/* The final change still reaches the callback. */
	t0 = test_now_ms();
	while (t.changes == last && test_now_ms() - t0 < 2000)
		test_run_for(t.base, 20);
	assert_int_equal(t.changes, last + 1);
	fprintf(stderr, "test_lldp: 2001 changes in %llu ms, %d pushes\n",
		(unsigned long long)elapsed, t.changes);
	tbl_close(&t);
}

static void test_table_input_errors(void **state)
{
	struct tbl t;
	struct lldp_info info;

	(void)state;
	tbl_open(&t, 1000);
	memset(&info, 0, sizeof(info));
	strcpy(info.chassis_id, "n2");
	strcpy(info.port_id, "p");
	info.ttl = 20;
	errno = 0;
	assert_int_equal(lldp_input(t.l, "", &info), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(lldp_input(t.l, "much-too-long-interface-name", &info),
			 -1);
	assert_int_equal(errno, EINVAL);
	for (unsigned i = 0; i < LLDP_MAX_PORTS; i++) {
		char ifname[IFNAMSIZ];

		snprintf(ifname, sizeof(ifname), "p%u", i);
		assert_int_equal(lldp_input(t.l, ifname, &info), 0);
	}
	assert_int_equal(lldp_input(t.l, "one-too-many", &info), -1);
	assert_int_equal(errno, ENOSPC);
	tbl_read(&t);
	assert_int_equal(t.n, LLDP_MAX_PORTS);
	tbl_close(&t);
}

/* Run the loop until a and b have na and nb neighbours (-1: any), at most
 * max_ms. Returns the time it took, or -1. */
static long test_wait(struct event_base *base, struct tbl *a, long na,
		      struct tbl *b, long nb, unsigned max_ms)
{
	uint64_t t0 = test_now_ms();

	for (;;) {
		tbl_read(a);
		if (b)
			tbl_read(b);
		if ((na < 0 || (long)a->n == na) &&
		    (!b || nb < 0 || (long)b->n == nb))
			return (long)(test_now_ms() - t0);
		if (test_now_ms() - t0 > max_ms)
			return -1;
		test_run_for(base, 10);
	}
}

static int test_mac_of(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	rc = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (rc == 0)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return rc;
}

static int test_is(const struct lldp_neighbour *n, const char *local,
		   const char *node, const char *rif, const char *agent,
		   unsigned ttl, const uint8_t mac[6])
{
	if (strcmp(n->local_if, local) || strcmp(n->remote_node, node) ||
	    strcmp(n->remote_if, rif) || strcmp(n->remote_agent_id, agent) ||
	    n->ttl != ttl || (mac && memcmp(n->remote_mac, mac, 6))) {
		fprintf(stderr,
			"test_lldp: got %s -> %s/%s agent %s ttl %u, want %s "
			"-> %s/%s agent %s ttl %u\n",
			n->local_if, n->remote_node, n->remote_if,
			n->remote_agent_id, (unsigned)n->ttl, local, node, rif,
			agent, ttl);
		return 0;
	}
	return 1;
}

/* Veth pair ifa <-> ifb: discovery, shutdown frames, expiry by TTL,
 * interfaces vanishing. */
static int test_ns_veth(struct event_base *base)
{
	char ifa[IFNAMSIZ], ifb[IFNAMSIZ];
	const char *pa_if[1] = {ifa}, *pb_if[1] = {ifb};
	struct tbl a = {0}, b = {0};
	uint8_t mac_a[6], mac_b[6];
	uint64_t t_a, t0;
	long t;

	snprintf(ifa, sizeof(ifa), "lt%da", (int)getpid());
	snprintf(ifb, sizeof(ifb), "lt%db", (int)getpid());
	if (testns_sh("ip link add %s type veth peer name %s", ifa, ifb))
		return 77; /* no veth in this kernel */
	NS_CHECK(testns_sh("ip link set %s up", ifa) == 0);
	NS_CHECK(testns_sh("ip link set %s up", ifb) == 0);
	NS_CHECK(test_mac_of(ifa, mac_a) == 0 && test_mac_of(ifb, mac_b) == 0);

	/* A long period (TTL 40 s): discovery must come from the first,
	 * immediate frames, not from the period. */
	a.l = lldp_new(base, "na", "agent-a", 10000, tbl_cb, &a);
	b.l = lldp_new(base, "nb", "agent-b", 10000, tbl_cb, &b);
	NS_CHECK(a.l && b.l);
	t_a = test_now_ms();
	NS_CHECK(lldp_set_interfaces(a.l, pa_if, 1) == 0);
	NS_CHECK(lldp_set_interfaces(b.l, pb_if, 1) == 0);
	NS_CHECK(lldp_error(a.l) == NULL && lldp_error(b.l) == NULL);
	t = test_wait(base, &a, 1, &b, 1, 5000);
	NS_CHECK(t >= 0 && t < 1000);
	NS_CHECK(test_is(&a.nb[0], ifa, "nb", ifb, "agent-b", 40, mac_b));
	NS_CHECK(test_is(&b.nb[0], ifb, "na", ifa, "agent-a", 40, mac_a));
	NS_CHECK(a.changes >= 1 && b.changes >= 1);
	NS_CHECK(a.nb[0].last_heard_ms >= t_a &&
		 a.nb[0].last_heard_ms <= test_now_ms());
	/* Repeats (the fast-start frames) refresh, they are no change. */
	test_run_for(base, 700);
	tbl_read(&a);
	NS_CHECK(a.n == 1 && a.changes == 1);

	/* b leaves: its shutdown frame (TTL 0) removes it at once rather
	 * than after 40 s. */
	lldp_free(b.l);
	b.l = NULL;
	t = test_wait(base, &a, 0, NULL, 0, 2000);
	NS_CHECK(t >= 0);
	NS_CHECK(a.changes == 2);

	/* b comes back with a short period (TTL 1 s) and a new agent id: a,
	 * long past its fast start, answers at once rather than in 10 s. */
	b.l = lldp_new(base, "nb", "agent-b2", 250, tbl_cb, &b);
	NS_CHECK(b.l);
	NS_CHECK(lldp_set_interfaces(b.l, pb_if, 1) == 0);
	t = test_wait(base, &a, 1, &b, 1, 5000);
	NS_CHECK(t >= 0 && t < 1000);
	NS_CHECK(test_is(&a.nb[0], ifa, "nb", ifb, "agent-b2", 1, mac_b));
	NS_CHECK(test_is(&b.nb[0], ifb, "na", ifa, "agent-a", 40, mac_a));

	/* Link down: b goes silent and a drops it when its 1 s TTL runs out
	 * (not before, and not much later); b keeps a for a's 40 s. */
	test_run_for(base, 300);
	NS_CHECK(testns_sh("ip link set %s down", ifb) == 0);
	t0 = test_now_ms();
	t = test_wait(base, &a, 0, NULL, 0, 3000);
	NS_CHECK(t >= 0);
	t = (long)(test_now_ms() - t0);
	fprintf(stderr, "test_lldp: neighbour expired %ld ms after link down\n",
		t);
	NS_CHECK(t >= 500 && t <= 2000);
	tbl_read(&b);
	NS_CHECK(b.n == 1);

	/* The interfaces disappear: both sides close them quietly and
	 * drop what was heard there. */
	NS_CHECK(testns_sh("ip link del %s", ifa) == 0);
	t = test_wait(base, &a, 0, &b, 0, 3000);
	NS_CHECK(t >= 0);
	NS_CHECK(lldp_set_interfaces(a.l, pa_if, 1) == 0);
	NS_CHECK(lldp_error(a.l) == NULL);
	test_run_for(base, 300);
	lldp_free(a.l);
	lldp_free(b.l);
	return 0;
}

/* Two instances on loopback hear each other and never themselves (every
 * frame comes back on lo); dropping the interface notifies once, from
 * the loop. */
static int test_ns_loopback(struct event_base *base)
{
	static const char *const lo[] = {"lo"};
	struct tbl x = {0}, y = {0};
	int before;

	x.l = lldp_new(base, "nx", "ax", 250, tbl_cb, &x);
	y.l = lldp_new(base, "ny", "ay", 250, tbl_cb, &y);
	NS_CHECK(x.l && y.l);
	NS_CHECK(lldp_set_interfaces(x.l, lo, 1) == 0);
	NS_CHECK(lldp_set_interfaces(y.l, lo, 1) == 0);
	NS_CHECK(test_wait(base, &x, 1, &y, 1, 5000) >= 0);
	test_run_for(base, 800);
	tbl_read(&x);
	tbl_read(&y);
	NS_CHECK(x.n == 1 && y.n == 1);
	NS_CHECK(test_is(&x.nb[0], "lo", "ny", "lo", "ay", 1, NULL));
	NS_CHECK(test_is(&y.nb[0], "lo", "nx", "lo", "ax", 1, NULL));
	NS_CHECK(x.changes == 1);

	before = x.changes;
	NS_CHECK(lldp_set_interfaces(x.l, NULL, 0) == 0);
	tbl_read(&x);
	NS_CHECK(x.n == 0);
	NS_CHECK(x.changes == before); /* not from inside the call */
	event_base_loop(base, EVLOOP_NONBLOCK);
	NS_CHECK(x.changes == before + 1);
	/* y saw x's shutdown frame. */
	NS_CHECK(test_wait(base, &y, 0, NULL, 0, 2000) >= 0);
	lldp_free(x.l);
	lldp_free(y.l);
	return 0;
}

static int test_ns_child(void)
{
	struct event_base *base;
	int rc;

	if (unshare(CLONE_NEWNET) < 0)
		return 77;
	if (testns_sh("ip link set lo up"))
		return 77;
	base = event_base_new();
	NS_CHECK(base);
	rc = test_ns_veth(base);
	if (!rc)
		rc = test_ns_loopback(base);
	event_base_free(base);
	return rc;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_exact),
		cmocka_unit_test(test_encode_long),
		cmocka_unit_test(test_encode_invalid),
		cmocka_unit_test(test_encode_no_agent),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_decode_switch),
		cmocka_unit_test(test_decode_subtypes),
		cmocka_unit_test(test_decode_lenient),
		cmocka_unit_test(test_decode_not_lldp),
		cmocka_unit_test(test_decode_malformed),
		cmocka_unit_test(test_decode_prefixes),
		cmocka_unit_test(test_new_invalid),
		cmocka_unit_test(test_missing_interface),
		cmocka_unit_test(test_eperm),
		cmocka_unit_test(test_table_flood),
		cmocka_unit_test(test_table_ttl_clamp),
		cmocka_unit_test(test_table_conflicting_claims),
		cmocka_unit_test(test_table_stale_makes_room),
		cmocka_unit_test(test_table_coalesced_pushes),
		cmocka_unit_test(test_table_input_errors),
		TESTNS_UNIT_TEST(test_ns_child),
	};

	log_init("test_lldp", NULL, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
