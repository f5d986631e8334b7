/* What ring-agent --capture --anonymise replaces, consistently within one
 * capture (a random key per capture, never written): equal inputs give
 * equal outputs, and every output differs from its input.
 *
 * IPv4: the first and last octets kept, the middle 16 bits mapped so that
 * prefixes are preserved (two addresses sharing their first k bits share
 * their first k bits after; Crypto-PAn's construction with HMAC-SHA256):
 * subnets, their prefixes and which addresses share one stay as they
 * were, and a unicast address stays unicast. IPv6 (GIDs): IPv4-mapped
 * ones through the IPv4 map; link-local (fe80::/10) keep their first 64
 * bits and map the rest prefix-preserving; others keep the first 16 bits.
 * MAC addresses, GUIDs and switch ids keep their first three bytes (the
 * vendor's OUI) and change the rest; a GUID is mapped by its value, so a
 * switch id equal to an image GUID stays equal whatever its spelling. */
#ifndef RING_CAPTURE_ANON_H
#define RING_CAPTURE_ANON_H

#include <stddef.h>
#include <stdint.h>

struct capture_anon {
	uint8_t key[32];
};

/* A fresh random key. 0, or -1 with errno. */
int capture_anon_init(struct capture_anon *a);

/* Host byte order in and out; 0.0.0.0/8, 127/8 and 224/3 unchanged. */
uint32_t capture_anon_ipv4(const struct capture_anon *a, uint32_t addr);
/* 16 bytes in place; the zero address unchanged. */
void capture_anon_ipv6(const struct capture_anon *a, uint8_t addr[16]);
/* n bytes in place (a MAC: 6, a GUID: 8); all-zero and all-ones kept. */
void capture_anon_id(const struct capture_anon *a, uint8_t *id, size_t n);

/* Text forms, rewritten into out (len bytes); 0, or -1 when in is not
 * such a text (out then a copy of in). */
int capture_anon_ipv4_text(const struct capture_anon *a, const char *in,
			   char *out, size_t len);
int capture_anon_ipv6_text(const struct capture_anon *a, const char *in,
			   char *out, size_t len);
/* "aa:bb:cc:dd:ee:ff", "4cbb:4703:002a:1040", "4cbb47fffe2a1040": hex
 * digits with or without separators, separators and case kept. */
int capture_anon_hex_text(const struct capture_anon *a, const char *in,
			  char *out, size_t len);
/* "host-" and eight hex digits. */
void capture_anon_hostname(const struct capture_anon *a, const char *in,
			   char *out, size_t len);

#endif
