/* The one output writer of ringctl: a tree of objects, lists and scalars
 * rendered as plain text (for people), key=value lines (for grep and shell)
 * or JSON (for programs; a list is a JSON array even with one element).
 * A key an object already has is left out, with a warning on stderr (and
 * the container it would open with all it holds): the output never has
 * a duplicate key, which JSON parsers resolve differently. */
#ifndef RING_WRITER_H
#define RING_WRITER_H

#include <stdint.h>
#include <stdio.h>

enum writer_format {
	WRITER_PLAIN,
	WRITER_KEYVALUE,
	WRITER_JSON,
};

struct writer;

/* 0 and *out set, or -1 for an unknown name ("plain", "keyvalue", "json"). */
int writer_format_parse(const char *name, enum writer_format *out);
struct writer *writer_new(FILE *out, enum writer_format fmt);
/* As writer_new, JSON on one line: no newline or indentation between
 * members (one object per line, as an error report on stderr). */
struct writer *writer_new_line(FILE *out, enum writer_format fmt);
/* Closes whatever is still open, flushes, frees. */
void writer_finish(struct writer *w);

/* key is NULL for an element directly inside a list. */
void writer_obj_start(struct writer *w, const char *key);
void writer_obj_end(struct writer *w);
/* A list element with a name: keyvalue paths use it instead of the index
 * ("nodes.n1.state", not "nodes.3.state"); JSON and plain are as for
 * writer_obj_start(w, NULL), so the caller writes the name as a member too.
 * Characters other than letters, digits and "_-+:@" become '_'; a name
 * that an earlier element of the list has, or none at all, gives "#INDEX". */
#define WRITER_ID_MAX 128
void writer_obj_start_named(struct writer *w, const char *id);
void writer_list_start(struct writer *w, const char *key);
void writer_list_end(struct writer *w);
/* Plain keeps within 100 columns: a member's text wraps under its start
 * (below its key, indented, when the key leaves it no room), an inline
 * list of scalars wraps under its first item.
 *
 * A list of records (writer_obj_start(w, NULL)) whose members are scalars
 * or lists of scalars. JSON and keyvalue render it exactly as a list; plain
 * text holds the rows until the end and prints an aligned table: a heading
 * line of the keys upper-cased ('_' as space), one line per record, columns
 * in order of first appearance (a key that a later record brings goes before
 * that record's next known key), "-" for an empty or missing cell, list items
 * joined by ",". A record holding an object makes it fall back to a list.
 * Plain leaves out a column that no row fills (unless no row fills any),
 * and stays within 100 columns: a last column that would pass it wraps
 * under its own start; when the columns before it leave it less than 30,
 * the table falls back to a list of records (prose members wrapped). */
void writer_table_start(struct writer *w, const char *key);
void writer_table_end(struct writer *w);

void writer_str(struct writer *w, const char *key, const char *val);
void writer_int(struct writer *w, const char *key, int64_t val);
void writer_uint(struct writer *w, const char *key, uint64_t val);
/* decimals: digits after the point in plain/keyvalue; JSON gets a number. */
void writer_double(struct writer *w, const char *key, double val, int decimals);
void writer_bool(struct writer *w, const char *key, int val);
/* A figure that is absent: text in plain and keyvalue ("" shows as "-" in
 * a table), null in JSON, so that a number's key never holds a string.
 * Plain leaves out an object's member whose text is empty (this or a
 * writer_str of ""); keyvalue and JSON keep it. */
void writer_none(struct writer *w, const char *key, const char *text);

/* For the few values whose plain rendering is a compact text of a
 * structure the machine formats spell out. */
enum writer_format writer_get_format(const struct writer *w);
/* Members left out so far as duplicate keys (a bug in the caller). */
size_t writer_duplicates(const struct writer *w);

/* s to f as it is, but every control byte as \xNN: error texts and
 * events can carry what agents sent, and none may reach the operator's
 * terminal raw. NULL prints nothing. */
void writer_fputs_safe(FILE *f, const char *s);
/* As writer_fputs_safe, for text that starts at column col of a plain
 * line: wrapped at spaces within 100 columns, continuation lines indented
 * to col (a line that starts with a space continues the one above). */
void writer_fputs_wrapped(FILE *f, const char *s, size_t col);

#endif
