/* The text primitives of every format: escaping for plain/keyvalue and
 * JSON strings (no control character reaches a terminal, invalid UTF-8
 * becomes U+FFFD), wrapping within 100 columns, and the escaping of error
 * texts and events written outside a writer. Calls nothing of the other
 * writer files. */
#include "writer_impl.h"

#include <string.h>

#include "text.h"

/* C1 controls (U+0080..U+009F) are acted upon by some terminals. */
static int writer_is_c1(const unsigned char *s, size_t len)
{
	return len == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

/* Plain and keyvalue text: raw, except that no control character reaches
 * the terminal and a value never spans lines; the backslash is escaped too
 * so that "\n" in the output always means a newline in the data. */
void writer_put_textn(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	while (n) {
		size_t len = text_utf8_len(s, n);

		if (!len) {
			fputs("\xef\xbf\xbd", out); /* U+FFFD */
			len = 1;
		} else if (len == 1) {
			switch (*s) {
			case '\n':
				fputs("\\n", out);
				break;
			case '\r':
				fputs("\\r", out);
				break;
			case '\t':
				fputs("\\t", out);
				break;
			case '\\':
				fputs("\\\\", out);
				break;
			default:
				if (*s < 0x20 || *s == 0x7f)
					fprintf(out, "\\x%02x", *s);
				else
					putc(*s, out);
			}
		} else if (writer_is_c1(s, len)) {
			fprintf(out, "\\u%04x", s[1]);
		} else {
			fwrite(s, 1, len, out);
		}
		s += len;
		n -= len;
	}
}

/* RFC 8259 string, quotes included; invalid UTF-8 becomes U+FFFD. */
void writer_put_json_str(struct writer *w, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	putc('"', w->out);
	while (n) {
		size_t len = text_utf8_len(s, n);

		if (!len) {
			fputs("\\ufffd", w->out);
			len = 1;
		} else if (len == 1) {
			switch (*s) {
			case '"':
				fputs("\\\"", w->out);
				break;
			case '\\':
				fputs("\\\\", w->out);
				break;
			case '\b':
				fputs("\\b", w->out);
				break;
			case '\f':
				fputs("\\f", w->out);
				break;
			case '\n':
				fputs("\\n", w->out);
				break;
			case '\r':
				fputs("\\r", w->out);
				break;
			case '\t':
				fputs("\\t", w->out);
				break;
			default:
				if (*s < 0x20 || *s == 0x7f)
					fprintf(w->out, "\\u%04x", *s);
				else
					putc(*s, w->out);
			}
		} else if (writer_is_c1(s, len)) {
			fprintf(w->out, "\\u%04x", s[1]);
		} else {
			fwrite(s, 1, len, w->out);
		}
		s += len;
		n -= len;
	}
	putc('"', w->out);
}

void writer_put_text(struct writer *w, const char *str)
{
	str = str ? str : "";
	writer_put_textn(w->out, str, strlen(str));
}

void writer_indent(struct writer *w, int n)
{
	fprintf(w->out, "%*s", n, "");
}

/* The text escaped (a value) or as it is (a table's cell, escaped when
 * it was made). */
static void writer_wrap_putn(FILE *out, const char *text, size_t n, int escape)
{
	if (escape)
		writer_put_textn(out, text, n);
	else
		fwrite(text, 1, n, out);
}

void writer_wrap_to(FILE *out, const char *text, size_t col, int escape)
{
	size_t room = WRITER_PLAIN_WIDTH > col ? WRITER_PLAIN_WIDTH - col : 0;
	size_t n = strlen(text);

	if (room < WRITER_WRAP_MIN) {
		writer_wrap_putn(out, text, n, escape);
		return;
	}
	while (n > room) {
		size_t cut = room;

		while (cut > 0 && text[cut] != ' ')
			cut--;
		if (!cut) {
			const char *sp = memchr(text, ' ', n);

			if (!sp)
				break;
			cut = (size_t)(sp - text);
		}
		writer_wrap_putn(out, text, cut, escape);
		fprintf(out, "\n%*s", (int)col, "");
		text += cut + 1;
		n -= cut + 1;
	}
	writer_wrap_putn(out, text, n, escape);
}

/* Width on the terminal: characters, not bytes (escaped text is valid
 * UTF-8). */
size_t writer_text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void writer_fputs_safen(FILE *f, const char *s, size_t n)
{
	for (; n && *s; s++, n--) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
}

void writer_fputs_safe(FILE *f, const char *s)
{
	if (s)
		writer_fputs_safen(f, s, strlen(s));
}

void writer_fputs_wrapped(FILE *f, const char *s, size_t col)
{
	size_t room, n;

	if (!s)
		return;
	room = WRITER_PLAIN_WIDTH > col ? WRITER_PLAIN_WIDTH - col : 0;
	n = strlen(s);
	while (room >= WRITER_WRAP_MIN && n > room) {
		size_t cut = room;

		while (cut > 0 && s[cut] != ' ')
			cut--;
		if (!cut)
			break; /* a word longer than the room stays whole */
		writer_fputs_safen(f, s, cut);
		fprintf(f, "\n%*s", (int)col, "");
		s += cut + 1;
		n -= cut + 1;
	}
	writer_fputs_safen(f, s, n);
}
