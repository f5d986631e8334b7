/* See topoview.h. */
#include "topoview.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const Ring__DiagonalCheck *topoview_diagonal(const Ring__Topology *t, size_t i,
					     size_t *checks)
{
	const Ring__DiagonalCheck *d = t->diagonals[i], *show = d;
	size_t n = 0;

	for (size_t k = 0; k < t->n_diagonals; k++) {
		const Ring__DiagonalCheck *o = t->diagonals[k];

		if (strcmp(o->a, d->a) || strcmp(o->b, d->b))
			continue;
		if (k < i)
			return NULL;
		n++;
		if (o->path && !show->path)
			show = o;
	}
	if (checks)
		*checks = n;
	return show;
}

double topoview_edge_gbps(const Ring__Edge *e)
{
	double a, b;

	if (!e || !e->n_gbps_a_to_b || !e->n_gbps_b_to_a)
		return -1;
	a = e->gbps_a_to_b[e->n_gbps_a_to_b - 1];
	b = e->gbps_b_to_a[e->n_gbps_b_to_a - 1];
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return a < b ? a : b;
}

struct topoview_out {
	char *buf;
	size_t len, used;
};

static void topoview_put(struct topoview_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void topoview_put(struct topoview_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->used < o->len ? o->buf + o->used : NULL,
		      o->used < o->len ? o->len - o->used : 0, fmt, ap);
	va_end(ap);
	o->used += n > 0 ? (size_t)n : 0;
}

/* "n4", "n3 and n4", "n2, n3 and n4". */
static void topoview_list(struct topoview_out *o, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		topoview_put(o, "%s%s",
			     !i		 ? ""
			     : i + 1 < n ? ", "
					 : " and ",
			     v[i]);
}

size_t topoview_live_text(const Ring__Topology *t, int article, char *buf,
			  size_t len)
{
	struct topoview_out o = {buf, len, 0};
	const char *kind =
		t->live_kind && *t->live_kind ? t->live_kind : t->kind;
	int a = article && strcmp(kind, "split") && strcmp(kind, "other") &&
		strcmp(kind, "unknown");
	size_t nd = t->n_live_nodes_down, nc = t->n_live_cables_down;

	if (len)
		buf[0] = '\0';
	topoview_put(&o, "%s%s", a ? "a " : "", kind);
	if (nc) {
		topoview_put(&o, ": the cable%s ", nc > 1 ? "s" : "");
		topoview_list(&o, t->live_cables_down, nc);
		topoview_put(&o, " %s down", nc > 1 ? "are" : "is");
	}
	if (nd) {
		topoview_put(&o, "%s", nc ? "; " : ": ");
		topoview_list(&o, t->live_nodes_down, nd);
		topoview_put(&o, " %s down", nd > 1 ? "are" : "is");
	}
	/* Nothing down: a surveyed line still lacks its closing cable. */
	if (!nc && !nd && !strcmp(kind, "line") && t->line_gap && *t->line_gap)
		topoview_put(&o, " with no cable %s", t->line_gap);
	return o.used;
}

const char *topoview_edge_state(const Ring__Edge *e)
{
	static const char *const live[] = {"up", "degraded", "down",
					   "unverified"};

	for (size_t i = 0; e && e->live_state && i < 4; i++)
		if (!strcmp(e->live_state, live[i]))
			return live[i];
	return "measured";
}

size_t topoview_picture_link(const Ring__Edge *e, double gbps, char *buf,
			     size_t len)
{
	const char *state = topoview_edge_state(e);
	int n;

	if (!e)
		n = snprintf(buf, len, " =?= ");
	else if (!strcmp(state, "down"))
		n = snprintf(buf, len, " =down= ");
	else if (gbps < 0)
		n = snprintf(buf, len, " =?= ");
	else
		n = snprintf(buf, len, " %s%.*f%s ",
			     strcmp(state, "degraded") ? "=" : "~",
			     gbps < 10 ? 2 : 1, gbps,
			     strcmp(state, "degraded") ? "=" : "~");
	return n > 0 ? (size_t)n : 0;
}
