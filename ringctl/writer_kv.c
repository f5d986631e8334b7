/* keyvalue, for grep and shell: one "path=value" line per scalar, the
 * path the dotted keys from the root (a list element by its name where
 * the caller gave one, else its index); empty containers leave no line. */
#include "writer_impl.h"

static void writer_kv_begin(struct writer *w)
{
	(void)w;
}

static void writer_kv_end(struct writer *w)
{
	(void)w;
}

static void writer_kv_scalar(struct writer *w, struct writer_frame *top,
			     const char *key, const char *text,
			     const char *json)
{
	size_t off;

	(void)json;
	if (writer_path_push(w, key, &off) < 0)
		return;
	writer_put_text(w, w->path);
	putc('=', w->out);
	writer_put_text(w, text);
	putc('\n', w->out);
	w->path[top->path_len] = '\0';
}

/* A container adds its key to the path (writer.c did) and nothing else. */
static void writer_kv_open(struct writer *w, struct writer_frame *parent,
			   struct writer_frame *f, const char *key)
{
	(void)w;
	(void)parent;
	(void)f;
	(void)key;
}

static int writer_kv_close(struct writer *w)
{
	(void)w;
	return 0;
}

const struct writer_ops writer_kv_ops = {
	.paths = 1,
	.ids = 1,
	.begin = writer_kv_begin,
	.end = writer_kv_end,
	.scalar = writer_kv_scalar,
	.open = writer_kv_open,
	.close = writer_kv_close,
};
