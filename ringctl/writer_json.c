/* JSON, for programs: one document, two-space indentation, a list a JSON
 * array even with one element, numbers as numbers (the shortest form that
 * reads back as the same double), an absent figure as null. */
#include "writer_impl.h"

#include <math.h>
#include <stdlib.h>

/* JSON: separator, indentation and key before a member or element. */
static void writer_json_prefix(struct writer *w, const char *key)
{
	struct writer_frame *top = writer_top(w);

	if (w->one_line) {
		if (top->count)
			putc(',', w->out);
	} else {
		fputs(top->count ? ",\n" : "\n", w->out);
		writer_indent(w, 2 * (int)w->depth);
	}
	if (top->kind == WRITER_OBJ) {
		writer_put_json_str(w, key ? key : "");
		fputs(": ", w->out);
	}
}

static void writer_json_begin(struct writer *w)
{
	putc('{', w->out);
}

static void writer_json_end(struct writer *w)
{
	if (!w->failed)
		fputs(w->stack[0].count && !w->one_line ? "\n}\n" : "}\n",
		      w->out);
}

static void writer_json_scalar(struct writer *w, struct writer_frame *top,
			       const char *key, const char *text,
			       const char *json)
{
	(void)top;
	writer_json_prefix(w, key);
	if (json)
		fputs(json, w->out);
	else if (text)
		writer_put_json_str(w, text);
	else
		fputs("null", w->out);
}

static void writer_json_open(struct writer *w, struct writer_frame *parent,
			     struct writer_frame *f, const char *key)
{
	(void)parent;
	writer_json_prefix(w, key);
	putc(f->kind == WRITER_OBJ ? '{' : '[', w->out);
}

static int writer_json_close(struct writer *w)
{
	struct writer_frame *f = writer_top(w);

	if (f->count && !w->one_line) {
		putc('\n', w->out);
		writer_indent(w, 2 * (int)(w->depth - 1));
	}
	putc(f->kind == WRITER_OBJ ? '}' : ']', w->out);
	return 0;
}

/* JSON: the shortest %g form that reads back as the same double. */
void writer_json_double(char *buf, size_t len, double val)
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

const struct writer_ops writer_json_ops = {
	.begin = writer_json_begin,
	.end = writer_json_end,
	.scalar = writer_json_scalar,
	.open = writer_json_open,
	.close = writer_json_close,
};
