/* Plain text, for people: members as "key: value" lines, lists inline
 * ("key: a, b") or as "- " records, tables aligned under upper-cased
 * headings, all within 100 columns (prose wrapped under its start, a
 * table's last column wrapped, a table too wide for that as records),
 * empty members and columns left out. The one format that holds output
 * back: a list's header until its first element, a table until its end. */
#include "writer_impl.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static void writer_put_wrapped(struct writer *w, const char *text, size_t col)
{
	writer_wrap_to(w->out, text, col, 1);
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

static int writer_plain_hold(struct writer *w, enum writer_event ev,
			     const char *key, const char *text)
{
	return writer_table_take(w, ev, key, text);
}

static void writer_plain_scalar(struct writer *w, struct writer_frame *top,
				const char *key, const char *text,
				const char *json)
{
	(void)json;
	/* A member with nothing to say is left out: a blank "driver:"
	 * reads as a fault. The machine formats keep it. */
	if (top->kind == WRITER_OBJ && (!text || !*text))
		return;
	if (top->kind == WRITER_LIST && top->mode == WRITER_LIST_INLINE &&
	    writer_inline_wrap(w, top, text))
		return;
	if (top->kind == WRITER_OBJ && text &&
	    writer_value_below(w, top, key, text))
		return;
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
}

static void writer_plain_open(struct writer *w, struct writer_frame *parent,
			      struct writer_frame *f, const char *key)
{
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
	if (f->kind == WRITER_OBJ) {
		/* A record has no header line: its first member carries the
		 * "- ". */
		f->indent = f->hdr_indent + (f->has_key ? 2 : 0);
		f->dash_pending = !f->has_key;
		if (f->has_key) {
			writer_plain_line(w, parent);
			writer_put_text(w, key ? key : "");
			fputs(":\n", w->out);
		}
	} else {
		/* The header waits for the first element; the parent's "- "
		 * (if any) is spent on it. */
		parent->dash_pending = 0;
		f->indent = f->hdr_indent + 2;
		f->mode = WRITER_LIST_PENDING;
	}
}

static int writer_plain_close(struct writer *w)
{
	struct writer_frame *f;

	if (w->table) {
		if (w->table->level) {
			w->table->level--; /* a held row or list */
			return 1;
		}
		writer_table_render(w);
		if (w->failed)
			return 1;
	}
	f = writer_top(w);
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
	return 0;
}

/* A table is a list frame whose rows are held until it ends; a table is
 * no cell of another table: that one becomes a list. */
static void writer_plain_table_start(struct writer *w, const char *key)
{
	size_t depth;

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

static void writer_plain_begin(struct writer *w)
{
	(void)w;
}

static void writer_plain_end(struct writer *w)
{
	writer_table_free(w->table);
	w->table = NULL;
}

const struct writer_ops writer_plain_ops = {
	.paths = 1,
	.begin = writer_plain_begin,
	.end = writer_plain_end,
	.hold = writer_plain_hold,
	.scalar = writer_plain_scalar,
	.open = writer_plain_open,
	.close = writer_plain_close,
	.table_start = writer_plain_table_start,
};
