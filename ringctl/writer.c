/* One file past the ~900-line guide on purpose: the three formats and the
 * plain-table buffer are one streaming state machine over struct writer
 * (the table replays into writer_scalar/open/close, which feed it). */
#include "writer.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* Output is streamed as calls arrive, so a long listing appears as it is
 * produced and memory stays bounded by the nesting depth. The only things
 * plain text has to wait for are a list's header: "key: a, b" for scalars and
 * "key:" plus records for objects cannot be told apart until the first
 * element arrives; and a table, whose column widths depend on every row. */

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
	/* plain, an inline list: the column its items start at, and the
	 * column its line has reached (items wrap within 100 columns) */
	size_t inline_start, inline_col;
};

struct writer {
	FILE *out;
	enum writer_format fmt;
	int failed; /* out of memory: stop writing rather than lie */
	struct writer_frame *stack;
	size_t depth, cap;
	char *path; /* keyvalue path (plain: the keys of deferred headers) */
	size_t path_cap;
	struct writer_table *table; /* plain: the table being held, if any */
	/* The caller's nesting, kept apart from the frames (which a held table
	 * bypasses): the keys written so far in each open object, so that a
	 * second member of the same name is left out instead of producing
	 * JSON that parsers read differently (most keep the last). */
	struct writer_level *levels;
	size_t n_levels, levels_cap;
	char *keys; /* NUL-terminated keys of every open object, in order */
	size_t keys_len, keys_cap;
	const char *next_id; /* keyvalue: the path component of the next
			      * list element (writer_obj_start_named) */
	size_t skip;	     /* > 0: inside a container being left out */
	size_t duplicates;   /* members left out */
};

struct writer_level {
	int is_obj;
	size_t keys_off; /* where this level's keys start in keys */
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

/* C1 controls (U+0080..U+009F) are acted upon by some terminals. */
static int writer_is_c1(const unsigned char *s, size_t len)
{
	return len == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

/* Plain and keyvalue text: raw, except that no control character reaches
 * the terminal and a value never spans lines; the backslash is escaped too
 * so that "\n" in the output always means a newline in the data. */
static void writer_put_textn(FILE *out, const char *str, size_t n)
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
static void writer_put_json_str(struct writer *w, const char *str)
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

static void writer_put_text(struct writer *w, const char *str)
{
	str = str ? str : "";
	writer_put_textn(w->out, str, strlen(str));
}

static void writer_indent(struct writer *w, int n)
{
	fprintf(w->out, "%*s", n, "");
}

/* Plain: the width a member's line wraps at, so that prose (findings,
 * errors, verdicts) stays readable in a terminal; a table's last column
 * wraps, and a table too wide for that becomes records. */
#define WRITER_PLAIN_WIDTH 100
/* Below this room, wrapping makes a ribbon: the text stays whole. */
#define WRITER_WRAP_MIN 30

/* Plain: text starting at column col, wrapped at spaces to the width with
 * continuation lines under its start. A word longer than a line stays
 * whole. Columns are counted in bytes: close enough for the ASCII that
 * reports are made of, and never more than the width for it. */
static void writer_wrap_to(FILE *out, const char *text, size_t col, int escape);

static void writer_put_wrapped(struct writer *w, const char *text, size_t col)
{
	writer_wrap_to(w->out, text, col, 1);
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

static void writer_wrap_to(FILE *out, const char *text, size_t col, int escape)
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

	if (top->kind == WRITER_LIST && w->next_id) {
		comp = w->next_id;
	} else if (top->kind == WRITER_LIST) {
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

/* Keep the key buffer able to hold need more bytes. */
static int writer_keys_reserve(struct writer *w, size_t need)
{
	size_t cap = w->keys_cap;
	char *k;

	if (w->keys_len + need <= cap)
		return 0;
	while (cap < w->keys_len + need)
		cap = cap ? cap * 2 : 256;
	k = realloc(w->keys, cap);
	if (!k) {
		w->failed = 1;
		return -1;
	}
	w->keys = k;
	w->keys_cap = cap;
	return 0;
}

static int writer_level_push(struct writer *w, int is_obj)
{
	struct writer_level *l;

	if (w->n_levels == w->levels_cap) {
		size_t cap = w->levels_cap ? w->levels_cap * 2 : 8;

		l = reallocarray(w->levels, cap, sizeof(*l));
		if (!l) {
			w->failed = 1;
			return -1;
		}
		w->levels = l;
		w->levels_cap = cap;
	}
	l = &w->levels[w->n_levels++];
	l->is_obj = is_obj;
	l->keys_off = w->keys_len;
	return 0;
}

/* Before a member: 0 to write it, 1 to leave it out (a key the enclosing
 * object already has, or inside a container being left out). opens: -1
 * for a scalar, else 1 for an object or 0 for a list that starts here.
 * Objects are small (tens of members): a linear scan is enough. */
static int writer_key_admit(struct writer *w, const char *key, int opens)
{
	struct writer_level *top;

	if (!w || w->failed)
		return 1;
	if (w->skip) {
		w->skip += opens >= 0;
		return 1;
	}
	top = &w->levels[w->n_levels - 1];
	if (top->is_obj) {
		size_t n = strlen(key ? key : "") + 1;

		for (size_t off = top->keys_off; off < w->keys_len;
		     off += strlen(w->keys + off) + 1) {
			if (strcmp(w->keys + off, key ? key : ""))
				continue;
			/* A bug in the caller: say so, and keep the output
			 * one that every parser reads the same way. */
			fputs("ringctl: internal error: duplicate key '",
			      stderr);
			writer_put_textn(stderr, key, n - 1);
			fputs("' left out of the output\n", stderr);
			w->duplicates++;
			w->skip = opens >= 0;
			return 1;
		}
		if (writer_keys_reserve(w, n) < 0)
			return 1;
		memcpy(w->keys + w->keys_len, key ? key : "", n);
		w->keys_len += n;
	}
	if (opens >= 0 && writer_level_push(w, opens) < 0)
		return 1;
	return 0;
}

/* Before a container's end: 0 to close it, 1 when it was left out (or is
 * the root, which only finish closes). */
static int writer_key_leave(struct writer *w)
{
	if (!w || w->failed)
		return 1;
	if (w->skip) {
		w->skip--;
		return 1;
	}
	if (w->n_levels < 2)
		return 0; /* a stray end: writer_close ignores it */
	w->keys_len = w->levels[--w->n_levels].keys_off;
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
	if (!w->stack || writer_path_reserve(w, 0, 0) < 0 ||
	    writer_level_push(w, 1) < 0)
		goto fail;
	w->path[0] = '\0';
	/* The root: an object whose members are the top-level calls. */
	w->depth = 1;
	w->stack[0].kind = WRITER_OBJ;
	if (fmt == WRITER_JSON)
		putc('{', out);
	return w;
fail:
	free(w->levels);
	free(w->path);
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
		writer_put_textn(w->out, w->path + l->key_off, l->key_len);
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
		top->inline_start = (size_t)top->hdr_indent +
				    (top->has_key ? top->key_len + 2 : 0);
		top->inline_col = top->inline_start;
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

/* Plain tables. Rows are held until the table ends. Each member keeps its
 * call order and raw text, so that a table the writer cannot lay out (a
 * caller nesting a container in a row) is replayed as an ordinary list. */
struct writer_member {
	char *key;
	int is_list;
	char **items; /* a scalar is a single item */
	size_t n_items;
};

struct writer_row {
	struct writer_member *m;
	size_t n;
};

struct writer_table {
	int level; /* 0: in the table, 1: in a row, 2: in a row's list */
	struct writer_row *rows;
	size_t n_rows;
};

enum writer_event {
	WRITER_EV_SCALAR,
	WRITER_EV_OBJ,
	WRITER_EV_LIST,
};

static void writer_scalar(struct writer *w, const char *key, const char *text,
			  const char *json);
static void writer_open(struct writer *w, const char *key,
			enum writer_kind kind);
static void writer_close(struct writer *w);

static void writer_table_free(struct writer_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_rows; i++) {
		struct writer_row *r = &t->rows[i];

		for (size_t k = 0; k < r->n; k++) {
			for (size_t j = 0; j < r->m[k].n_items; j++)
				free(r->m[k].items[j]);
			free(r->m[k].items);
			free(r->m[k].key);
		}
		free(r->m);
	}
	free(t->rows);
	free(t);
}

static char *writer_strdup(struct writer *w, const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		w->failed = 1;
	return d;
}

static int writer_table_add_row(struct writer *w)
{
	struct writer_table *t = w->table;
	struct writer_row *rows;

	rows = reallocarray(t->rows, t->n_rows + 1, sizeof(*rows));
	if (!rows) {
		w->failed = 1;
		return -1;
	}
	t->rows = rows;
	memset(&rows[t->n_rows++], 0, sizeof(*rows));
	return 0;
}

static int writer_table_add_member(struct writer *w, const char *key,
				   int is_list)
{
	struct writer_row *r = &w->table->rows[w->table->n_rows - 1];
	struct writer_member *m;
	char *k = writer_strdup(w, key);

	if (!k)
		return -1;
	m = reallocarray(r->m, r->n + 1, sizeof(*m));
	if (!m) {
		free(k);
		w->failed = 1;
		return -1;
	}
	r->m = m;
	m = &r->m[r->n++];
	memset(m, 0, sizeof(*m));
	m->key = k;
	m->is_list = is_list;
	return 0;
}

/* Append an item to the last member of the last row. */
static int writer_table_add_item(struct writer *w, const char *text)
{
	struct writer_row *r = &w->table->rows[w->table->n_rows - 1];
	struct writer_member *m = &r->m[r->n - 1];
	char **items, *d = writer_strdup(w, text);

	if (!d)
		return -1;
	items = reallocarray(m->items, m->n_items + 1, sizeof(*items));
	if (!items) {
		free(d);
		w->failed = 1;
		return -1;
	}
	m->items = items;
	m->items[m->n_items++] = d;
	return 0;
}

/* Give up on the table: replay what was held as an ordinary list, leaving
 * the row and list still open at the caller's level open. terse: leave
 * out the empty scalars a table would have shown as "-" (a table too wide
 * for the terminal, its rows complete). */
static void writer_table_replay(struct writer *w, int terse)
{
	struct writer_table *t = w->table;

	w->table = NULL;
	for (size_t i = 0; i < t->n_rows; i++) {
		const struct writer_row *r = &t->rows[i];
		int last = i + 1 == t->n_rows;

		writer_open(w, NULL, WRITER_OBJ);
		for (size_t k = 0; k < r->n; k++) {
			const struct writer_member *m = &r->m[k];

			if (!m->is_list) {
				if (terse && !*m->items[0])
					continue;
				writer_scalar(w, m->key, m->items[0], NULL);
				continue;
			}
			writer_open(w, m->key, WRITER_LIST);
			for (size_t j = 0; j < m->n_items; j++)
				writer_scalar(w, NULL, m->items[j], NULL);
			if (!(last && k + 1 == r->n && t->level == 2))
				writer_close(w);
		}
		if (!(last && t->level >= 1))
			writer_close(w);
	}
	writer_table_free(t);
}

static void writer_table_unbuffer(struct writer *w)
{
	writer_table_replay(w, 0);
}

/* Plain, while a table is held: 1 if the call went into the table (or
 * failed), 0 if the caller writes it, the table having become a list. */
static int writer_table_take(struct writer *w, enum writer_event ev,
			     const char *key, const char *text)
{
	struct writer_table *t = w->table;

	if (!t)
		return 0;
	if (t->level == 0 && ev == WRITER_EV_OBJ) {
		if (writer_table_add_row(w) == 0)
			t->level = 1;
		return 1;
	}
	if (t->level == 1 && ev == WRITER_EV_SCALAR) {
		if (writer_table_add_member(w, key, 0) == 0)
			writer_table_add_item(w, text);
		return 1;
	}
	if (t->level == 1 && ev == WRITER_EV_LIST) {
		if (writer_table_add_member(w, key, 1) == 0)
			t->level = 2;
		return 1;
	}
	if (t->level == 2 && ev == WRITER_EV_SCALAR) {
		writer_table_add_item(w, text);
		return 1;
	}
	writer_table_unbuffer(w);
	return 0;
}

/* A cell as the terminal will show it: escaped like all plain text, list
 * items joined by ","; NULL when empty (shown as "-") or out of memory. */
static char *writer_table_cell(struct writer *w, const struct writer_member *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f) {
		w->failed = 1;
		return NULL;
	}
	for (size_t j = 0; j < m->n_items; j++) {
		if (j)
			putc(',', f);
		writer_put_textn(f, m->items[j], strlen(m->items[j]));
	}
	err = ferror(f);
	if (fclose(f) || err) {
		w->failed = 1;
		free(buf);
		return NULL;
	}
	if (!len) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Column heading: the key upper-cased, '_' read as a space. */
static char *writer_table_heading(struct writer *w, const char *key)
{
	struct writer_member m = {.n_items = 1};
	char *k = writer_strdup(w, key), *h;

	if (!k)
		return NULL;
	for (char *p = k; *p; p++)
		*p = *p == '_' ? ' ' : (char)toupper((unsigned char)*p);
	m.items = &k;
	h = writer_table_cell(w, &m);
	free(k);
	if (!h && !w->failed)
		h = writer_strdup(w, "");
	return h;
}

/* Width on the terminal: characters, not bytes (escaped text is valid
 * UTF-8). */
static size_t writer_text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static ssize_t writer_table_col(const char **cols, size_t n, const char *key)
{
	for (size_t c = 0; c < n; c++)
		if (!strcmp(cols[c], key))
			return (ssize_t)c;
	return -1;
}

/* Columns in first-appearance order; a key first met in a later row goes
 * before the next key of that row already known, so a field written only
 * for some rows keeps its place between its neighbours. */
static size_t writer_table_columns(const struct writer_table *t,
				   const char **cols)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n_rows; i++) {
		const struct writer_row *r = &t->rows[i];

		for (size_t k = 0; k < r->n; k++) {
			size_t pos = n;

			if (writer_table_col(cols, n, r->m[k].key) >= 0)
				continue;
			for (size_t j = k + 1; j < r->n; j++) {
				ssize_t c =
					writer_table_col(cols, n, r->m[j].key);

				if (c >= 0) {
					pos = (size_t)c;
					break;
				}
			}
			memmove(&cols[pos + 1], &cols[pos],
				(n - pos) * sizeof(*cols));
			cols[pos] = r->m[k].key;
			n++;
		}
	}
	return n;
}

static void writer_table_cells_free(char **cells, size_t n)
{
	for (size_t i = 0; cells && i < n; i++)
		free(cells[i]);
	free(cells);
}

/* Print the held table under its header; the frame is left as a list whose
 * close prints nothing more (or "(none)" when there was nothing to lay
 * out). */
static void writer_table_render(struct writer *w)
{
	struct writer_table *t = w->table;
	struct writer_frame *f = writer_top(w);
	const char **cols = NULL;
	char **cells = NULL;
	size_t *width = NULL, n_cols, n_members = 0, n_cells = 0, last_col;
	size_t last = SIZE_MAX;

	for (size_t i = 0; i < t->n_rows; i++)
		n_members += t->rows[i].n;
	if (!n_members) {
		/* No rows, or only empty ones: as a list says it. */
		writer_table_unbuffer(w);
		return;
	}
	cols = calloc(n_members, sizeof(*cols));
	if (!cols)
		goto oom;
	n_cols = writer_table_columns(t, cols);
	/* Row 0 holds the headings. */
	cells = calloc((t->n_rows + 1) * n_cols, sizeof(*cells));
	width = calloc(n_cols, sizeof(*width));
	if (!cells || !width)
		goto oom;
	n_cells = (t->n_rows + 1) * n_cols;
	for (size_t c = 0; c < n_cols; c++)
		if (!(cells[c] = writer_table_heading(w, cols[c])))
			goto fail;
	for (size_t i = 0; i < t->n_rows; i++) {
		const struct writer_row *r = &t->rows[i];

		for (size_t k = 0; k < r->n; k++) {
			ssize_t c = writer_table_col(cols, n_cols, r->m[k].key);
			char **cell = &cells[(i + 1) * n_cols + (size_t)c];

			if (*cell)
				continue; /* a repeated key: first non-empty */
			*cell = writer_table_cell(w, &r->m[k]);
			if (w->failed)
				goto fail;
		}
	}
	/* A column no row fills says nothing: plain leaves it out (0 width),
	 * unless every column is such. */
	for (size_t i = n_cols; i < n_cells; i++)
		if (cells[i])
			width[i % n_cols] = 1;
	for (size_t c = 0; c < n_cols; c++)
		if (width[c])
			last = c;
	if (last == SIZE_MAX)
		for (size_t c = 0; c < n_cols; c++)
			width[c] = 1;
	for (size_t i = 0; i < n_cells; i++) {
		size_t wd = cells[i] ? writer_text_width(cells[i]) : 1;

		if (width[i % n_cols] && wd > width[i % n_cols])
			width[i % n_cols] = wd;
	}
	last = n_cols - 1;
	while (last && !width[last])
		last--;
	/* Where the last column starts; a table wider than the terminal
	 * wraps that column (prose: notes, findings) under itself, or, when
	 * the columns before it are already too wide, becomes records. */
	last_col = (size_t)f->indent;
	for (size_t c = 0; c < last; c++)
		last_col += width[c] ? width[c] + 2 : 0;
	if (last_col + width[last] > WRITER_PLAIN_WIDTH &&
	    (!last || last_col + WRITER_WRAP_MIN > WRITER_PLAIN_WIDTH)) {
		writer_table_cells_free(cells, n_cells);
		free(width);
		free(cols);
		writer_table_replay(w, 1);
		return;
	}

	writer_plain_list_header(w, f, 0);
	for (size_t i = 0; i < n_cells; i++) {
		size_t c = i % n_cols;
		const char *s = cells[i] ? cells[i] : "-";

		if (!c)
			writer_indent(w, f->indent);
		if (!width[c] || c > last)
			continue;
		if (c < last) {
			fputs(s, w->out);
			writer_indent(
				w, (int)(width[c] - writer_text_width(s) + 2));
		} else {
			writer_wrap_to(w->out, s, last_col, 0);
			putc('\n', w->out);
		}
	}
	f->mode = WRITER_LIST_RECORDS;
	goto out;
oom:
	w->failed = 1;
fail:
out:
	writer_table_cells_free(cells, n_cells);
	free(width);
	free(cols);
	writer_table_free(t);
	w->table = NULL;
}

/* Plain: a value too long for its line whose key leaves it no room to
 * wrap (a long key, deep indentation) goes below the key, indented, and
 * wraps there; 1 if it was written so. */
static int writer_value_below(struct writer *w, struct writer_frame *top,
			      const char *key, const char *text)
{
	size_t col = (size_t)top->indent + strlen(key ? key : "") + 2;
	size_t at = (size_t)top->indent + 4;

	if (col + WRITER_WRAP_MIN <= WRITER_PLAIN_WIDTH ||
	    col + strlen(text) <= WRITER_PLAIN_WIDTH ||
	    at + WRITER_WRAP_MIN > WRITER_PLAIN_WIDTH)
		return 0;
	writer_plain_line(w, top);
	writer_put_text(w, key ? key : "");
	fputs(":\n", w->out);
	writer_indent(w, (int)at);
	writer_put_wrapped(w, text, at);
	putc('\n', w->out);
	return 1;
}

/* Plain: the next item of an inline list on a line of its own, under the
 * first item, when it would pass 100 columns; 1 if it was written so. */
static int writer_inline_wrap(struct writer *w, struct writer_frame *l,
			      const char *text)
{
	size_t n = writer_text_width(text ? text : "");

	if (l->inline_col + 2 + n <= WRITER_PLAIN_WIDTH ||
	    l->inline_col <= l->inline_start)
		return 0;
	fputs(",\n", w->out);
	writer_indent(w, (int)l->inline_start);
	writer_put_text(w, text);
	l->inline_col = l->inline_start + n;
	return 1;
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
	if (w->fmt == WRITER_PLAIN &&
	    writer_table_take(w, WRITER_EV_SCALAR, key, text))
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
		/* A member with nothing to say is left out: a blank "driver:"
		 * reads as a fault. The machine formats keep it. */
		if (top->kind == WRITER_OBJ && (!text || !*text))
			break;
		if (top->kind == WRITER_LIST &&
		    top->mode == WRITER_LIST_INLINE &&
		    writer_inline_wrap(w, top, text))
			break;
		if (top->kind == WRITER_OBJ && text &&
		    writer_value_below(w, top, key, text))
			break;
		writer_plain_scalar_prefix(w, key ? key : "");
		if (top->kind == WRITER_LIST && top->mode == WRITER_LIST_INLINE)
			top->inline_col += writer_text_width(text ? text : "") +
					   (top->count ? 2 : 0);
		if (top->kind == WRITER_OBJ && text)
			writer_put_wrapped(w, text,
					   (size_t)top->indent +
						   strlen(key ? key : "") + 2);
		else
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
	if (w->fmt == WRITER_PLAIN &&
	    writer_table_take(
		    w, kind == WRITER_OBJ ? WRITER_EV_OBJ : WRITER_EV_LIST, key,
		    NULL))
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
	if (w->table) {
		if (w->table->level) {
			w->table->level--; /* a held row or list */
			return;
		}
		writer_table_render(w);
		if (w->failed)
			return;
	}
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
	if (!writer_key_admit(w, key, 1))
		writer_open(w, key, WRITER_OBJ);
}

/* keyvalue: the id as a path component: what is not a safe word character
 * becomes '_' (a '.' would read as a level, '=' as the value), so that
 * "gb10-1.lab" is "gb10-1_lab". Returns 0, or -1 when it is no name. */
static int writer_id_component(const char *id, char *buf, size_t len)
{
	size_t n = id ? strlen(id) : 0;

	if (!n || n >= len || n > WRITER_ID_MAX)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)id[i];

		buf[i] = isalnum(c) || strchr("_-+:@", c) ? (char)c : '_';
	}
	buf[n] = '\0';
	return strspn(buf, "_") == n ? -1 : 0; /* nothing left of it */
}

void writer_obj_start_named(struct writer *w, const char *id)
{
	struct writer_level *top;
	char comp[WRITER_ID_MAX + 1], idx[24];
	size_t n;
	int used = 0;

	if (!w || w->failed || w->fmt != WRITER_KEYVALUE || w->skip) {
		writer_obj_start(w, NULL);
		return;
	}
	top = &w->levels[w->n_levels - 1];
	if (top->is_obj) {
		writer_obj_start(w, NULL); /* not a list element: no name */
		return;
	}
	if (writer_id_component(id, comp, sizeof(comp)) < 0) {
		used = 1;
	} else {
		/* A list level keeps its elements' names where an object
		 * keeps its keys: a second element of one name is no name. */
		for (size_t off = top->keys_off; off < w->keys_len && !used;
		     off += strlen(w->keys + off) + 1)
			used = !strcmp(w->keys + off, comp);
	}
	if (used) {
		/* Its index, marked, so that it meets no element's name. */
		snprintf(idx, sizeof(idx), "#%zu", writer_top(w)->count);
		w->next_id = idx;
		writer_obj_start(w, NULL);
		w->next_id = NULL;
		return;
	}
	n = strlen(comp) + 1;
	if (writer_keys_reserve(w, n) < 0)
		return;
	memcpy(w->keys + w->keys_len, comp, n);
	w->keys_len += n;
	w->next_id = comp;
	writer_obj_start(w, NULL);
	w->next_id = NULL;
}

void writer_obj_end(struct writer *w)
{
	if (!writer_key_leave(w))
		writer_close(w);
}

void writer_list_start(struct writer *w, const char *key)
{
	if (!writer_key_admit(w, key, 0))
		writer_open(w, key, WRITER_LIST);
}

void writer_list_end(struct writer *w)
{
	if (!writer_key_leave(w))
		writer_close(w);
}

void writer_table_start(struct writer *w, const char *key)
{
	size_t depth;

	if (writer_key_admit(w, key, 0))
		return;
	if (w->fmt != WRITER_PLAIN) {
		/* Machine formats do not care how it looks. */
		writer_open(w, key, WRITER_LIST);
		return;
	}
	/* A table is no cell of another table: that one becomes a list. */
	if (w->table)
		writer_table_unbuffer(w);
	depth = w->depth;
	writer_open(w, key, WRITER_LIST);
	if (w->failed || w->depth != depth + 1)
		return;
	w->table = calloc(1, sizeof(*w->table));
	if (!w->table)
		w->failed = 1;
}

void writer_table_end(struct writer *w)
{
	if (!writer_key_leave(w))
		writer_close(w);
}

/* A member as the caller wrote it (the held table's replay bypasses the
 * key check: its keys were checked when they came). */
static void writer_member(struct writer *w, const char *key, const char *text,
			  const char *json)
{
	if (!writer_key_admit(w, key, -1))
		writer_scalar(w, key, text, json);
}

void writer_str(struct writer *w, const char *key, const char *val)
{
	writer_member(w, key, val, NULL);
}

void writer_none(struct writer *w, const char *key, const char *text)
{
	writer_member(w, key, text ? text : "", "null");
}

void writer_int(struct writer *w, const char *key, int64_t val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, val);
	writer_member(w, key, buf, buf);
}

void writer_uint(struct writer *w, const char *key, uint64_t val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, val);
	writer_member(w, key, buf, buf);
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
	writer_member(w, key, text, json);
}

void writer_bool(struct writer *w, const char *key, int val)
{
	writer_member(w, key, val ? "yes" : "no", val ? "true" : "false");
}

enum writer_format writer_get_format(const struct writer *w)
{
	return w->fmt;
}

size_t writer_duplicates(const struct writer *w)
{
	return w ? w->duplicates : 0;
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
	writer_table_free(w->table);
	free(w->keys);
	free(w->levels);
	free(w->path);
	free(w->stack);
	free(w);
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
