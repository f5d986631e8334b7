/* Consistent replacement of addresses and identifiers for --anonymise
 * (capture_anon.h says what is kept). */
#include "capture_anon.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

int capture_anon_init(struct capture_anon *a)
{
	if (RAND_bytes(a->key, sizeof(a->key)) != 1) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* HMAC-SHA256 of tag, a position and data under the key. */
static void anon_prf(const struct capture_anon *a, char tag, unsigned pos,
		     const uint8_t *data, size_t n, uint8_t out[32])
{
	uint8_t msg[2 + 64];
	unsigned outlen = 32;

	msg[0] = (uint8_t)tag;
	msg[1] = (uint8_t)pos;
	if (n > sizeof(msg) - 2)
		n = sizeof(msg) - 2;
	memcpy(msg + 2, data, n);
	if (!HMAC(EVP_sha256(), a->key, sizeof(a->key), msg, n + 2, out,
		  &outlen))
		memset(out, 0x5a, 32); /* never: a fixed flip pattern */
}

/* Bits [from, to) of the n-byte big-endian b, prefix-preserving: bit i
 * flips by a function of the original bits before it; bit from always
 * flips, so the result never equals the input. */
static void anon_pp(const struct capture_anon *a, char tag, uint8_t *b,
		    size_t n, unsigned from, unsigned to)
{
	uint8_t orig[16], prefix[16], h[32];

	memcpy(orig, b, n);
	for (unsigned i = from; i < to; i++) {
		int flip = 1;

		if (i > from) {
			memset(prefix, 0, sizeof(prefix));
			memcpy(prefix, orig, i / 8);
			if (i % 8)
				prefix[i / 8] = orig[i / 8] &
						(uint8_t)(0xff << (8 - i % 8));
			anon_prf(a, tag, i, prefix, n, h);
			flip = h[0] & 1;
		}
		if (flip)
			b[i / 8] ^= (uint8_t)(0x80 >> (i % 8));
	}
}

uint32_t capture_anon_ipv4(const struct capture_anon *a, uint32_t addr)
{
	uint8_t b[4];
	unsigned top = addr >> 24;

	if (top == 0 || top == 127 || top >= 224)
		return addr;
	b[0] = (uint8_t)(addr >> 24);
	b[1] = (uint8_t)(addr >> 16);
	b[2] = (uint8_t)(addr >> 8);
	b[3] = (uint8_t)addr;
	anon_pp(a, '4', b, 4, 8, 24);
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

void capture_anon_ipv6(const struct capture_anon *a, uint8_t addr[16])
{
	static const uint8_t zero[16];
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0,    0,
					   0, 0, 0, 0, 0xff, 0xff};

	if (!memcmp(addr, zero, 16))
		return;
	if (!memcmp(addr, mapped, sizeof(mapped))) {
		uint32_t v4 = (uint32_t)addr[12] << 24 |
			      (uint32_t)addr[13] << 16 |
			      (uint32_t)addr[14] << 8 | addr[15];

		v4 = capture_anon_ipv4(a, v4);
		addr[12] = (uint8_t)(v4 >> 24);
		addr[13] = (uint8_t)(v4 >> 16);
		addr[14] = (uint8_t)(v4 >> 8);
		addr[15] = (uint8_t)v4;
		return;
	}
	if (addr[0] == 0xfe && (addr[1] & 0xc0) == 0x80)
		anon_pp(a, 'l', addr, 16, 64, 128);
	else
		anon_pp(a, '6', addr, 16, 16, 128);
}

void capture_anon_id(const struct capture_anon *a, uint8_t *id, size_t n)
{
	uint8_t h[32];
	int zero = 1, ones = 1, changed = 0;

	for (size_t i = 0; i < n; i++) {
		zero &= id[i] == 0;
		ones &= id[i] == 0xff;
	}
	if (zero || ones || n <= 3 || n > 16)
		return;
	anon_prf(a, 'i', (unsigned)n, id, n, h);
	for (size_t i = 3; i < n; i++) {
		changed |= h[i] != 0;
		id[i] ^= h[i];
	}
	if (!changed)
		id[n - 1] ^= 1;
}

int capture_anon_ipv4_text(const struct capture_anon *a, const char *in,
			   char *out, size_t len)
{
	struct in_addr v;

	if (inet_pton(AF_INET, in, &v) != 1) {
		snprintf(out, len, "%s", in);
		return -1;
	}
	v.s_addr = htonl(capture_anon_ipv4(a, ntohl(v.s_addr)));
	if (!inet_ntop(AF_INET, &v, out, (socklen_t)len)) {
		snprintf(out, len, "%s", in);
		return -1;
	}
	return 0;
}

/* The kernel's sysfs spelling of a GID, eight groups of four digits,
 * stays that spelling; other text comes back compressed. */
int capture_anon_ipv6_text(const struct capture_anon *a, const char *in,
			   char *out, size_t len)
{
	uint8_t b[16];

	if (inet_pton(AF_INET6, in, b) != 1) {
		snprintf(out, len, "%s", in);
		return -1;
	}
	capture_anon_ipv6(a, b);
	if (strlen(in) == 39) {
		snprintf(
			out, len,
			"%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
			"%02x%02x:%02x%02x",
			b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8],
			b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
		return 0;
	}
	if (!inet_ntop(AF_INET6, b, out, (socklen_t)len)) {
		snprintf(out, len, "%s", in);
		return -1;
	}
	return 0;
}

static int anon_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int capture_anon_hex_text(const struct capture_anon *a, const char *in,
			  char *out, size_t len)
{
	uint8_t b[16];
	size_t nd = 0, n = strlen(in), k = 0;
	int upper = 0;

	snprintf(out, len, "%s", in);
	for (size_t i = 0; i < n; i++) {
		if (in[i] == ':' || in[i] == '-' || in[i] == '.')
			continue;
		if (anon_hexval(in[i]) < 0 || nd >= 2 * sizeof(b))
			return -1;
		upper |= isupper((unsigned char)in[i]);
		nd++;
	}
	if (nd < 8 || nd % 2 || n >= len)
		return -1;
	memset(b, 0, sizeof(b));
	for (size_t i = 0; i < n; i++) {
		int v = anon_hexval(in[i]);

		if (v < 0)
			continue;
		b[k / 2] |= (uint8_t)(k % 2 ? v : v << 4);
		k++;
	}
	capture_anon_id(a, b, nd / 2);
	k = 0;
	for (size_t i = 0; i < n; i++) {
		int v;

		if (anon_hexval(in[i]) < 0)
			continue;
		v = k % 2 ? b[k / 2] & 0xf : b[k / 2] >> 4;
		out[i] = (upper ? "0123456789ABCDEF" : "0123456789abcdef")[v];
		k++;
	}
	return 0;
}

void capture_anon_hostname(const struct capture_anon *a, const char *in,
			   char *out, size_t len)
{
	uint8_t h[32];

	anon_prf(a, 'h', 0, (const uint8_t *)in, strnlen(in, 64), h);
	snprintf(out, len, "host-%02x%02x%02x%02x", h[0], h[1], h[2], h[3]);
}
