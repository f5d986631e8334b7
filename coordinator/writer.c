#include "writer.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Output is streamed as calls arrive, so a long listing appears as it is
 * produced and memory stays bounded by the nesting depth. The only thing
 * plain text has to wait for is a list's header: "key: a, b" for scalars and
 * "key:" plus records for objects cannot be told apart until the first
 * element arrives. */

enum writer_kind {
	WRITER_OBJ,
	WRITER_LIST,
};

/* How a plain-text list is being laid out. */
enum writer_list_mode {
	WRITER_LIST_PENDING, /* header not printed yet */
	WRITER_LIST_INLINE,  /* "key: a, b" on one line */
	WRITER_LIST_RECORDS, /* "key:" then one "- " record per element */
};

struct writer_frame {
	enum writer_kind kind;
	size_t count;	 /* children written so far */
	size_t path_len; /* length of the keyvalue path up to this frame */
	size_t key_off;	 /* this frame's own key inside the path buffer */
	size_t key_len;
	/* plain: indentation of child lines; for a list, of its "- " lines */
	int indent;
	int dash_pending; /* plain: the next child line starts with "- " */
	enum writer_list_mode mode;
	int hdr_indent; /* plain: where a deferred list header goes */
	int hdr_dash;	/* plain: that header line starts with "- " */
	int has_key;	/* plain: that header names a key */
};

struct writer {
	FILE *out;
	enum writer_format fmt;
	int failed; /* out of memory: stop writing rather than lie */
	struct writer_frame *stack;
	size_t depth, cap;
	char *path; /* keyvalue path (plain: the keys of deferred headers) */
	size_t path_cap;
};

int writer_format_parse(const char *name, enum writer_format *out)
{
	if (!name)
		goto bad;
	if (!strcmp(name, "plain"))
		*out = WRITER_PLAIN;
	else if (!strcmp(name, "keyvalue"))
		*out = WRITER_KEYVALUE;
	else if (!strcmp(name, "json"))
		*out = WRITER_JSON;
	else
		goto bad;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid:
 * overlong forms, surrogates and code points past U+10FFFF are refused. */
static size_t writer_utf8_len(const unsigned char *s, size_t n)
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

/* C1 controls (U+0080..U+009F) are acted upon by some terminals. */
static int writer_is_c1(const unsigned char *s, size_t len)
{
	return len == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

/* Plain and keyvalue text: raw, except that no control character reaches
 * the terminal and a value never spans lines; the backslash is escaped too
 * so that "\n" in the output always means a newline in the data. */
static void writer_put_textn(struct writer *w, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	while (n) {
		size_t len = writer_utf8_len(s, n);

		if (!len) {
			fputs("\xef\xbf\xbd", w->out); /* U+FFFD */
			len = 1;
		} else if (len == 1) {
			switch (*s) {
			case '\n':
				fputs("\\n", w->out);
				break;
			case '\r':
				fputs("\\r", w->out);
				break;
			case '\t':
				fputs("\\t", w->out);
				break;
			case '\\':
				fputs("\\\\", w->out);
				break;
			default:
				if (*s < 0x20 || *s == 0x7f)
					fprintf(w->out, "\\x%02x", *s);
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
}

/* RFC 8259 string, quotes included; invalid UTF-8 becomes U+FFFD. */
static void writer_put_json_str(struct writer *w, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	putc('"', w->out);
	while (n) {
		size_t len = writer_utf8_len(s, n);

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

static void writer_put_text(struct writer *w, const char *str)
{
	str = str ? str : "";
	writer_put_textn(w, str, strlen(str));
}

static void writer_indent(struct writer *w, int n)
{
	fprintf(w->out, "%*s", n, "");
}

static struct writer_frame *writer_top(struct writer *w)
{
	return &w->stack[w->depth - 1];
}

/* Keep the path buffer able to hold need more bytes plus the NUL. */
static int writer_path_reserve(struct writer *w, size_t used, size_t need)
{
	size_t cap = w->path_cap;
	char *p;

	if (used + need + 1 <= cap)
		return 0;
	while (cap < used + need + 1)
		cap = cap ? cap * 2 : 64;
	p = realloc(w->path, cap);
	if (!p) {
		w->failed = 1;
		return -1;
	}
	w->path = p;
	w->path_cap = cap;
	return 0;
}

/* Append the component naming a new child of the top frame to the path;
 * *key_off gets where the component starts. */
static int writer_path_push(struct writer *w, const char *key, size_t *key_off)
{
	struct writer_frame *top = writer_top(w);
	size_t len = top->path_len;
	char idx[24];
	const char *comp;
	size_t n;

	if (top->kind == WRITER_LIST) {
		snprintf(idx, sizeof(idx), "%zu", top->count);
		comp = idx;
	} else {
		comp = key ? key : "";
	}
	n = strlen(comp);
	if (writer_path_reserve(w, len, n + 1) < 0)
		return -1;
	if (len)
		w->path[len++] = '.';
	*key_off = len;
	memcpy(w->path + len, comp, n + 1);
	return 0;
}

struct writer *writer_new(FILE *out, enum writer_format fmt)
{
	struct writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->out = out;
	w->fmt = fmt;
	w->cap = 8;
	w->stack = calloc(w->cap, sizeof(*w->stack));
	if (!w->stack || writer_path_reserve(w, 0, 0) < 0)
		goto fail;
	w->path[0] = '\0';
	/* The root: an object whose members are the top-level calls. */
	w->depth = 1;
	w->stack[0].kind = WRITER_OBJ;
	if (fmt == WRITER_JSON)
		putc('{', out);
	return w;
fail:
	free(w->stack);
	free(w);
	return NULL;
}

/* Plain: start a new line for a child of frame f. */
static void writer_plain_line(struct writer *w, struct writer_frame *f)
{
	if (f->dash_pending) {
		writer_indent(w, f->indent - 2);
		fputs("- ", w->out);
		f->dash_pending = 0;
	} else {
		writer_indent(w, f->indent);
	}
}

/* Plain: print a list's deferred header; a scalar follows on the same line
 * when inline. */
static void writer_plain_list_header(struct writer *w, struct writer_frame *l,
				     int inl)
{
	if (l->hdr_dash) {
		writer_indent(w, l->hdr_indent - 2);
		fputs("- ", w->out);
	} else {
		writer_indent(w, l->hdr_indent);
	}
	if (l->has_key) {
		writer_put_textn(w, w->path + l->key_off, l->key_len);
		putc(':', w->out);
		if (inl)
			putc(' ', w->out);
	}
	if (!inl)
		putc('\n', w->out);
}

/* Plain: a container element is about to open inside list l. */
static void writer_plain_list_record(struct writer *w, struct writer_frame *l)
{
	switch (l->mode) {
	case WRITER_LIST_PENDING:
		writer_plain_list_header(w, l, 0);
		break;
	case WRITER_LIST_INLINE:
		putc('\n', w->out);
		break;
	case WRITER_LIST_RECORDS:
		if (l->count)
			putc('\n', w->out); /* records read apart */
		break;
	}
	l->mode = WRITER_LIST_RECORDS;
}

/* Plain: the text before a scalar value, up to where the value goes. */
static void writer_plain_scalar_prefix(struct writer *w, const char *key)
{
	struct writer_frame *top = writer_top(w);

	if (top->kind == WRITER_OBJ) {
		writer_plain_line(w, top);
		writer_put_text(w, key);
		fputs(": ", w->out);
		return;
	}
	switch (top->mode) {
	case WRITER_LIST_PENDING:
		writer_plain_list_header(w, top, 1);
		top->mode = WRITER_LIST_INLINE;
		break;
	case WRITER_LIST_INLINE:
		fputs(", ", w->out);
		break;
	case WRITER_LIST_RECORDS:
		writer_indent(w, top->indent);
		fputs("- ", w->out);
		break;
	}
}

/* JSON: separator, indentation and key before a member or element. */
static void writer_json_prefix(struct writer *w, const char *key)
{
	struct writer_frame *top = writer_top(w);

	fputs(top->count ? ",\n" : "\n", w->out);
	writer_indent(w, 2 * (int)w->depth);
	if (top->kind == WRITER_OBJ) {
		writer_put_json_str(w, key ? key : "");
		fputs(": ", w->out);
	}
}

/* Write one scalar: text is its rendering for plain/keyvalue, json its
 * JSON literal (NULL: text as a JSON string). */
static void writer_scalar(struct writer *w, const char *key, const char *text,
			  const char *json)
{
	struct writer_frame *top;
	size_t off;

	if (!w || w->failed)
		return;
	top = writer_top(w);
	switch (w->fmt) {
	case WRITER_JSON:
		writer_json_prefix(w, key);
		if (json)
			fputs(json, w->out);
		else if (text)
			writer_put_json_str(w, text);
		else
			fputs("null", w->out);
		break;
	case WRITER_KEYVALUE:
		if (writer_path_push(w, key, &off) < 0)
			return;
		writer_put_text(w, w->path);
		putc('=', w->out);
		writer_put_text(w, text);
		putc('\n', w->out);
		w->path[top->path_len] = '\0';
		break;
	case WRITER_PLAIN:
		writer_plain_scalar_prefix(w, key ? key : "");
		writer_put_text(w, text);
		if (top->kind == WRITER_OBJ || top->mode == WRITER_LIST_RECORDS)
			putc('\n', w->out);
		break;
	}
	top->count++;
}

static void writer_open(struct writer *w, const char *key,
			enum writer_kind kind)
{
	struct writer_frame *parent, *f;
	size_t off = 0;

	if (!w || w->failed)
		return;
	if (w->depth == w->cap) {
		f = reallocarray(w->stack, w->cap * 2, sizeof(*f));
		if (!f) {
			w->failed = 1;
			return;
		}
		w->stack = f;
		w->cap *= 2;
	}
	parent = writer_top(w);
	if (w->fmt != WRITER_JSON && writer_path_push(w, key, &off) < 0)
		return;
	f = &w->stack[w->depth];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->key_off = off;
	f->path_len = w->fmt == WRITER_JSON ? 0 : strlen(w->path);
	f->key_len = f->path_len - off;

	switch (w->fmt) {
	case WRITER_JSON:
		writer_json_prefix(w, key);
		putc(kind == WRITER_OBJ ? '{' : '[', w->out);
		break;
	case WRITER_KEYVALUE:
		break;
	case WRITER_PLAIN:
		if (parent->kind == WRITER_LIST) {
			/* An element: a record introduced by "- ". */
			writer_plain_list_record(w, parent);
			f->hdr_indent = parent->indent + 2;
			f->hdr_dash = 1;
		} else {
			f->hdr_indent = parent->indent;
			f->hdr_dash = parent->dash_pending;
			f->has_key = 1;
		}
		if (kind == WRITER_OBJ) {
			/* A record has no header line: its first member
			 * carries the "- ". */
			f->indent = f->hdr_indent + (f->has_key ? 2 : 0);
			f->dash_pending = !f->has_key;
			if (f->has_key) {
				writer_plain_line(w, parent);
				writer_put_text(w, key ? key : "");
				fputs(":\n", w->out);
			}
		} else {
			/* The header waits for the first element; the
			 * parent's "- " (if any) is spent on it. */
			parent->dash_pending = 0;
			f->indent = f->hdr_indent + 2;
			f->mode = WRITER_LIST_PENDING;
		}
		break;
	}
	parent->count++;
	w->depth++;
}

static void writer_close(struct writer *w)
{
	struct writer_frame *f, *parent;

	if (!w || w->failed || w->depth < 2)
		return; /* unbalanced end: the root is closed by finish */
	f = writer_top(w);
	parent = &w->stack[w->depth - 2];
	switch (w->fmt) {
	case WRITER_JSON:
		if (f->count) {
			putc('\n', w->out);
			writer_indent(w, 2 * (int)(w->depth - 1));
		}
		putc(f->kind == WRITER_OBJ ? '}' : ']', w->out);
		break;
	case WRITER_KEYVALUE:
		break; /* empty containers leave no line */
	case WRITER_PLAIN:
		if (f->kind == WRITER_OBJ) {
			if (f->dash_pending) {
				/* An empty record still shows it exists. */
				writer_indent(w, f->indent - 2);
				fputs("-\n", w->out);
			}
		} else if (f->mode == WRITER_LIST_PENDING) {
			writer_plain_list_header(w, f, 1);
			fputs("(none)\n", w->out);
		} else if (f->mode == WRITER_LIST_INLINE) {
			putc('\n', w->out);
		}
		break;
	}
	w->depth--;
	if (w->fmt != WRITER_JSON)
		w->path[parent->path_len] = '\0';
}

void writer_obj_start(struct writer *w, const char *key)
{
	writer_open(w, key, WRITER_OBJ);
}

void writer_obj_end(struct writer *w)
{
	writer_close(w);
}

void writer_list_start(struct writer *w, const char *key)
{
	writer_open(w, key, WRITER_LIST);
}

void writer_list_end(struct writer *w)
{
	writer_close(w);
}

void writer_str(struct writer *w, const char *key, const char *val)
{
	writer_scalar(w, key, val, NULL);
}

void writer_int(struct writer *w, const char *key, int64_t val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, val);
	writer_scalar(w, key, buf, buf);
}

void writer_uint(struct writer *w, const char *key, uint64_t val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, val);
	writer_scalar(w, key, buf, buf);
}

/* JSON: the shortest %g form that reads back as the same double. */
static void writer_json_double(char *buf, size_t len, double val)
{
	char *p;
	int prec;

	if (!isfinite(val)) {
		snprintf(buf, len, "null");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, val);
		if (strtod(buf, NULL) == val)
			break;
	}
	if (prec == 17)
		snprintf(buf, len, "%.17g", val);
	/* A locale's decimal comma would not be JSON. */
	for (p = buf; *p; p++)
		if (*p == ',')
			*p = '.';
}

void writer_double(struct writer *w, const char *key, double val, int decimals)
{
	char text[512], json[40];

	if (decimals < 0)
		decimals = 0;
	if (decimals > 17)
		decimals = 17;
	snprintf(text, sizeof(text), "%.*f", decimals, val);
	writer_json_double(json, sizeof(json), val);
	writer_scalar(w, key, text, json);
}

void writer_bool(struct writer *w, const char *key, int val)
{
	writer_scalar(w, key, val ? "yes" : "no", val ? "true" : "false");
}

void writer_finish(struct writer *w)
{
	if (!w)
		return;
	while (!w->failed && w->depth > 1)
		writer_close(w);
	if (!w->failed && w->fmt == WRITER_JSON)
		fputs(w->stack[0].count ? "\n}\n" : "}\n", w->out);
	fflush(w->out);
	free(w->path);
	free(w->stack);
	free(w);
}
