/* The SVG document's text as it is written: a buffer bounded by
 * SVG_MAX_BYTES (a sticky error past it or on allocation failure, never
 * a cut mid-element), text escaped for XML and HTML alike and cut to a
 * bound without splitting a UTF-8 sequence, ids made of safe bytes, and
 * ages in short words. For svg.c. */
#ifndef RING_SVG_OUT_H
#define RING_SVG_OUT_H

#include <stddef.h>

/* Bytes of a name drawn. */
#define SVG_NAME_MAX 64
/* A string literal, its length counted by the compiler. */
#define SVG_LIT(o, s) svg_put((o), (s), sizeof(s) - 1)

struct svg_out {
	char *p;
	size_t len, cap;
	int err; /* sticky errno */
};

/* n bytes of s, as they are. */
void svg_put(struct svg_out *o, const char *s, size_t n);
void svg_printf(struct svg_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* len bytes of str, escaped. */
void svg_esc_span(struct svg_out *o, const char *str, size_t len);
/* str, escaped, at most max bytes of it. */
void svg_esc(struct svg_out *o, const char *str, size_t max);
/* An id from a name: bytes outside [A-Za-z0-9_.:-] as '_'. */
void svg_id(struct svg_out *o, const char *prefix, const char *name);
/* "12s", "4m", "3h", "2d" ago. */
void svg_age(unsigned long long then, unsigned long long now, char *buf,
	     size_t len);

#endif
