/* The exposition's writer (metrics_text.h). */
#include "metrics_text.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

const char *const mr_kinds[] = {
	"ring",	 "pair",  "line",    "switch", "split",
	"other", "rings", "unknown", NULL,
};
const char *const mr_health[] = {
	"healthy", "relearning", "degraded", "critical", NULL,
};

void mr_head_type(struct mr *r, const char *name, const char *help,
		  const char *type)
{
	r->ring = NULL;
	if (evbuffer_add_printf(r->b, "# HELP %s %s\n# TYPE %s %s\n", name,
				help, name, type) < 0)
		r->err = 1;
}

void mr_head(struct mr *r, const char *name, const char *help)
{
	mr_head_type(r, name, help, "gauge");
}

/* A label value as the text format wants it: \\, \" and \n escaped. */
static void mr_label_value(struct mr *r, const char *v)
{
	while (*v) {
		size_t n = strcspn(v, "\\\"\n");

		if (n && evbuffer_add(r->b, v, n) < 0)
			r->err = 1;
		v += n;
		if (!*v)
			break;
		if (evbuffer_add(r->b,
				 *v == '\\'  ? "\\\\"
				 : *v == '"' ? "\\\""
					     : "\\n",
				 2) < 0)
			r->err = 1;
		v++;
	}
}

static void mr_label(struct mr *r, const char *k, const char *v, int first)
{
	if (evbuffer_add_printf(r->b, "%s%s=\"", first ? "{" : ",", k) < 0)
		r->err = 1;
	mr_label_value(r, v ? v : "");
	if (evbuffer_add(r->b, "\"", 1) < 0)
		r->err = 1;
}

void mr_sample(struct mr *r, const char *name, double v, ...)
{
	va_list ap;
	const char *k;
	int first = 1;

	if (!isfinite(v))
		return;
	if (evbuffer_add_printf(r->b, "%s", name) < 0)
		r->err = 1;
	va_start(ap, v);
	while ((k = va_arg(ap, const char *)) != NULL) {
		mr_label(r, k, va_arg(ap, const char *), first);
		first = 0;
	}
	va_end(ap);
	if (r->ring) {
		mr_label(r, "ring", r->ring, first);
		first = 0;
	}
	/* 15 digits: every figure we have, without binary noise
	 * (9.41 Gbit/s is 1176250000, not 1176250000.0000002). */
	if (evbuffer_add_printf(r->b, "%s %.15g\n", first ? "" : "}", v) < 0)
		r->err = 1;
}

const char *mr_str(const char *s)
{
	return s ? s : "";
}

const char *mr_in_set(const char *s, const char *const *set, const char *dflt)
{
	for (size_t i = 0; s && set[i]; i++)
		if (!strcmp(s, set[i]))
			return set[i];
	return dflt;
}
