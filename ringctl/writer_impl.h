/* What the three formats share behind writer.h, for writer*.c only: the
 * state of one writer (the frame stack the formats lay out from, the
 * keyvalue/plain path, the keys of open objects) and the interface each
 * format implements (struct writer_ops). writer.c keeps the state and the
 * caller's nesting and calls the chosen format; writer_plain.c,
 * writer_kv.c and writer_json.c each lay out one format; writer_text.c
 * holds the escaping and wrapping they all use. */
#ifndef RING_WRITER_IMPL_H
#define RING_WRITER_IMPL_H

#include <stddef.h>
#include <stdio.h>

#include "writer.h"

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
	const struct writer_ops *ops; /* the chosen format */
	int one_line;		      /* JSON: no newlines (writer_new_line) */
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

enum writer_event {
	WRITER_EV_SCALAR,
	WRITER_EV_OBJ,
	WRITER_EV_LIST,
};

/* One output format. writer.c has admitted the call (keys, nesting) and
 * keeps the frames; a format writes what the call looks like in it. */
struct writer_ops {
	int paths; /* keeps the dotted path of keys (keyvalue, plain) */
	int ids;   /* names list elements in that path (keyvalue) */
	/* The root object opens (writer_new) and closes (writer_finish,
	 * called even after a failure, to free what the format holds). */
	void (*begin)(struct writer *w);
	void (*end)(struct writer *w);
	/* Plain only (else NULL): 1 when the call went into a held table. */
	int (*hold)(struct writer *w, enum writer_event ev, const char *key,
		    const char *text);
	/* One scalar member or element of the top frame: text is its
	 * rendering for plain/keyvalue, json its JSON literal (NULL: text as
	 * a JSON string; both NULL: null). */
	void (*scalar)(struct writer *w, struct writer_frame *top,
		       const char *key, const char *text, const char *json);
	/* Frame f (zeroed, its path set) opens inside parent. */
	void (*open)(struct writer *w, struct writer_frame *parent,
		     struct writer_frame *f, const char *key);
	/* The top frame closes: 0 to pop it, 1 when the format absorbed the
	 * close (a held table's row) or failed. */
	int (*close)(struct writer *w);
	/* Plain only (else NULL): a table starts (the key admitted); the
	 * machine formats write it as a list. */
	void (*table_start)(struct writer *w, const char *key);
};

extern const struct writer_ops writer_plain_ops;
extern const struct writer_ops writer_kv_ops;
extern const struct writer_ops writer_json_ops;

static inline struct writer_frame *writer_top(struct writer *w)
{
	return &w->stack[w->depth - 1];
}

/* writer.c: the generic calls, which a held plain table replays into. */
void writer_scalar(struct writer *w, const char *key, const char *text,
		   const char *json);
void writer_open(struct writer *w, const char *key, enum writer_kind kind);
void writer_close(struct writer *w);
/* Append the component naming a new child of the top frame to the path;
 * *key_off gets where the component starts. 0, or -1 out of memory. */
int writer_path_push(struct writer *w, const char *key, size_t *key_off);

/* writer_json.c: a double as a JSON number, the shortest %g form that
 * reads back as the same double ("null" when not finite). */
void writer_json_double(char *buf, size_t len, double val);

/* writer_text.c: plain is laid out within this many columns, so that
 * prose (findings, errors, verdicts) stays readable in a terminal; a
 * table's last column wraps, and a table too wide for that becomes
 * records. */
#define WRITER_PLAIN_WIDTH 100
/* Below this room, wrapping makes a ribbon: the text stays whole. */
#define WRITER_WRAP_MIN 30

/* Plain and keyvalue text: raw, except that no control character reaches
 * the terminal and a value never spans lines. */
void writer_put_textn(FILE *out, const char *str, size_t n);
void writer_put_text(struct writer *w, const char *str);
/* RFC 8259 string, quotes included; invalid UTF-8 becomes U+FFFD. */
void writer_put_json_str(struct writer *w, const char *str);
void writer_indent(struct writer *w, int n);
/* Text starting at column col, wrapped at spaces to the width with
 * continuation lines under its start; escape: as a value (else as it is,
 * a table's cell escaped when it was made). */
void writer_wrap_to(FILE *out, const char *text, size_t col, int escape);
/* Width on the terminal: characters, not bytes. */
size_t writer_text_width(const char *s);

#endif
