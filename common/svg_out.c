/* The SVG document's text as it is written (see svg_out.h). */
#include "svg_out.h"
#include "svg.h"
#include "text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void svg_put(struct svg_out *o, const char *s, size_t n)
{
	size_t cap;
	char *p;

	if (o->err)
		return;
	if (o->len + n + 1 > SVG_MAX_BYTES) {
		o->err = EMSGSIZE;
		return;
	}
	if (o->len + n + 1 > o->cap) {
		cap = o->cap ? o->cap : 16384;
		while (cap < o->len + n + 1)
			cap *= 2;
		p = realloc(o->p, cap);
		if (!p) {
			o->err = ENOMEM;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

void svg_printf(struct svg_out *o, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Only fixed markup and numbers come through here. */
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		o->err = o->err ? o->err : EMSGSIZE;
		return;
	}
	svg_put(o, buf, (size_t)n);
}

static const char svg_bad[] = "\xef\xbf\xbd"; /* U+FFFD */

/* Exactly n bytes of s for XML character data or an attribute value:
 * the five special characters as references; control characters, bytes
 * that are not UTF-8 and the non-characters XML forbids as U+FFFD. */
void svg_esc_span(struct svg_out *o, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n = c < 0x80 ? 1 : text_utf8_len(s + i, len - i);

		if (!n || c < 0x20 || c == 0x7f ||
		    (n == 3 && c == 0xef && s[i + 1] == 0xbf &&
		     s[i + 2] >= 0xbe)) {
			svg_put(o, svg_bad, 3);
			i += n ? n : 1;
			continue;
		}
		switch (c) {
		case '&':
			SVG_LIT(o, "&amp;");
			break;
		case '<':
			SVG_LIT(o, "&lt;");
			break;
		case '>':
			SVG_LIT(o, "&gt;");
			break;
		case '"':
			SVG_LIT(o, "&quot;");
			break;
		case '\'':
			SVG_LIT(o, "&#39;");
			break;
		default:
			svg_put(o, (const char *)s + i, n);
		}
		i += n;
	}
}

/* At most max bytes of s, escaped, cut at a character boundary, then an
 * ellipsis if anything was left out. */
void svg_esc(struct svg_out *o, const char *str, size_t max)
{
	const char *s = str ? str : "";
	size_t len = strnlen(s, max + 1), cut;

	if (len <= max) {
		svg_esc_span(o, s, len);
		return;
	}
	for (cut = max; cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80;
	     cut--)
		;
	svg_esc_span(o, s, cut);
	SVG_LIT(o, "\xe2\x80\xa6");
}

/* An id from a name: bytes outside [A-Za-z0-9_.:-] as '_'. */
void svg_id(struct svg_out *o, const char *prefix, const char *name)
{
	char buf[2 * SVG_NAME_MAX + 16];
	size_t n = 0;

	for (const char *p = name ? name : ""; *p && n < 2 * SVG_NAME_MAX;
	     p++) {
		char c = *p;

		buf[n++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '_' || c == '.' ||
			    c == ':' || c == '-')
				   ? c
				   : '_';
	}
	svg_put(o, prefix, strlen(prefix));
	svg_put(o, buf, n);
}

/* "12s", "4m", "3h", "2d" ago. */
void svg_age(unsigned long long then, unsigned long long now, char *buf,
	     size_t len)
{
	unsigned long long s = then && now > then ? (now - then) / 1000 : 0;

	if (s < 120)
		snprintf(buf, len, "%llus", s);
	else if (s < 7200)
		snprintf(buf, len, "%llum", s / 60);
	else if (s < 172800)
		snprintf(buf, len, "%lluh", s / 3600);
	else
		snprintf(buf, len, "%llud", s / 86400);
}
