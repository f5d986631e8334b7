/* UTF-8 checking for what is printed from peers. */
#include "text.h"

#include <stdio.h>
#include <string.h>

size_t text_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0;
	if (c < 0xe0) {
		len = 2;
	} else if (c < 0xf0) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c < 0xf5) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

void text_edge_name(char *buf, size_t len, const char *a, const char *b,
		    const char *a_if, int twin)
{
	if (twin && a_if && *a_if)
		snprintf(buf, len, "%s-%s:%s", a, b, a_if);
	else
		snprintf(buf, len, "%s-%s", a, b);
}

void text_edge_msg_name(char *buf, size_t len, const Ring__Edge *e)
{
	text_edge_name(buf, len, e->a, e->b, e->a_interface, e->twin);
}

void text_pair_name(char *buf, size_t len, const Ring__Topology *t,
		    const char *x, const char *y)
{
	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if ((!strcmp(e->a, x) && !strcmp(e->b, y)) ||
		    (!strcmp(e->a, y) && !strcmp(e->b, x))) {
			text_edge_msg_name(buf, len, e);
			return;
		}
	}
	text_edge_name(buf, len, x, y, "", 0);
}

int text_edge_splits(const char *edge,
		     int (*fn)(const char *a, const char *b, void *arg),
		     void *arg)
{
	for (const char *d = edge ? strchr(edge, '-') : NULL; d;
	     d = strchr(d + 1, '-')) {
		size_t k = (size_t)(d - edge);
		char a[64];
		int r;

		if (!k || k >= sizeof(a))
			continue;
		memcpy(a, edge, k);
		a[k] = '\0';
		r = fn(a, d + 1, arg);
		if (r)
			return r;
	}
	return 0;
}

int text_host_name_check(const char *name, char *why, size_t len)
{
	size_t n = strlen(name);

	if (!n || n > TEXT_HOST_NAME_MAX) {
		snprintf(why, len, "a host name of 1..%d characters",
			 TEXT_HOST_NAME_MAX);
		return -1;
	}
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr(".-_:", *p))) {
			snprintf(why, len,
				 "a host name or address holds only letters, "
				 "digits, '.', '-', '_' and ':'");
			return -1;
		}
	return 0;
}
