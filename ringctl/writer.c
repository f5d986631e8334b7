/* The writer's one interface (writer.h) over three formats: it checks
 * each call against the caller's nesting (a key an object already has is
 * left out, with a warning, and what it would open with it), keeps the
 * frames and the dotted path the formats lay out from, and hands each
 * admitted call to the format chosen at writer_new: writer_plain.c,
 * writer_kv.c or writer_json.c (struct writer_ops). Output streams as
 * calls arrive; memory stays bounded by the nesting depth (and a plain
 * table's rows). */
#include "writer_impl.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

int writer_path_push(struct writer *w, const char *key, size_t *key_off)
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

static const struct writer_ops *writer_ops_of(enum writer_format fmt)
{
	switch (fmt) {
	case WRITER_KEYVALUE:
		return &writer_kv_ops;
	case WRITER_JSON:
		return &writer_json_ops;
	case WRITER_PLAIN:
		break;
	}
	return &writer_plain_ops;
}

struct writer *writer_new(FILE *out, enum writer_format fmt)
{
	struct writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->out = out;
	w->fmt = fmt;
	w->ops = writer_ops_of(fmt);
	w->cap = 8;
	w->stack = calloc(w->cap, sizeof(*w->stack));
	if (!w->stack || writer_path_reserve(w, 0, 0) < 0 ||
	    writer_level_push(w, 1) < 0)
		goto fail;
	w->path[0] = '\0';
	/* The root: an object whose members are the top-level calls. */
	w->depth = 1;
	w->stack[0].kind = WRITER_OBJ;
	w->ops->begin(w);
	return w;
fail:
	free(w->levels);
	free(w->path);
	free(w->stack);
	free(w);
	return NULL;
}

struct writer *writer_new_line(FILE *out, enum writer_format fmt)
{
	struct writer *w = writer_new(out, fmt);

	if (w)
		w->one_line = 1;
	return w;
}

/* Write one scalar: text is its rendering for plain/keyvalue, json its
 * JSON literal (NULL: text as a JSON string). */
void writer_scalar(struct writer *w, const char *key, const char *text,
		   const char *json)
{
	struct writer_frame *top;

	if (!w || w->failed)
		return;
	if (w->ops->hold && w->ops->hold(w, WRITER_EV_SCALAR, key, text))
		return;
	top = writer_top(w);
	w->ops->scalar(w, top, key, text, json);
	top->count++;
}

void writer_open(struct writer *w, const char *key, enum writer_kind kind)
{
	struct writer_frame *parent, *f;
	size_t off = 0;

	if (!w || w->failed)
		return;
	if (w->ops->hold &&
	    w->ops->hold(w, kind == WRITER_OBJ ? WRITER_EV_OBJ : WRITER_EV_LIST,
			 key, NULL))
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
	if (w->ops->paths && writer_path_push(w, key, &off) < 0)
		return;
	f = &w->stack[w->depth];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->key_off = off;
	f->path_len = w->ops->paths ? strlen(w->path) : 0;
	f->key_len = f->path_len - off;
	w->ops->open(w, parent, f, key);
	parent->count++;
	w->depth++;
}

void writer_close(struct writer *w)
{
	struct writer_frame *parent;

	if (!w || w->failed || w->depth < 2)
		return; /* unbalanced end: the root is closed by finish */
	if (w->ops->close(w))
		return;
	parent = &w->stack[w->depth - 2];
	w->depth--;
	if (w->ops->paths)
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

	if (!w || w->failed || !w->ops->ids || w->skip) {
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
	if (writer_key_admit(w, key, 0))
		return;
	if (!w->ops->table_start) {
		/* Machine formats do not care how it looks. */
		writer_open(w, key, WRITER_LIST);
		return;
	}
	w->ops->table_start(w, key);
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
	w->ops->end(w);
	fflush(w->out);
	free(w->keys);
	free(w->levels);
	free(w->path);
	free(w->stack);
	free(w);
}
