/* The picture of the ring as SVG (see svg.h): a hand-placed layout, the
 * nodes on a circle in the measured order, so that it needs no layout
 * engine and reads the same in a browser, an image viewer or a diff. */
#include "svg.h"
#include "svg_out.h"
#include "clock.h"
#include "topoview.h"
#include "text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bytes of a name drawn, and of a note's text (findings, reasons). */
#define SVG_NOTE_MAX 400
#define SVG_REASON_MAX 160 /* bytes of a reason in a tooltip */
#define SVG_WRAP 110	   /* characters a note line holds */
#define SVG_PI 3.14159265358979323846
/* ---- What is drawn ---- */

struct svg_node {
	const char *name;
	const Ring__NodeStatus *st; /* NULL: only in the topology */
	double x, y;
	int order; /* place on the circle; -1 in the row below it */
};

struct svg {
	struct svg_out o;
	const Ring__StatusReply *r;
	const Ring__Topology *t; /* NULL before the first survey */
	struct svg_node nodes[SVG_MAX_NODES];
	size_t n_nodes, n_circle, left_out;
	/* More nodes than SVG_FULL_NODES: small nodes, names outside the
	 * circle, the edges' figures in a list below instead of beside
	 * them. */
	int compact;
	double w, cx, cy, rad, y; /* y: where the next block goes */
	/* Within a site's picture: the ring's id (its fixed ids prefixed
	 * "ring-ID-") and where it is placed; NULL: the document. */
	const struct svg_frame *frame;
};

/* A fixed element's id: "title", or "ring-ID-title" within a site. */
static void svg_fixed_id(struct svg_out *o, const struct svg *g, const char *id)
{
	SVG_LIT(o, " id=\"");
	if (g->frame) {
		svg_id(o, "ring-", g->frame->ring);
		SVG_LIT(o, "-");
	}
	svg_put(o, id, strlen(id));
	SVG_LIT(o, "\"");
}

static struct svg_node *svg_find(struct svg *g, const char *name)
{
	for (size_t i = 0; i < g->n_nodes; i++)
		if (!strcmp(g->nodes[i].name, name))
			return &g->nodes[i];
	return NULL;
}

static const Ring__NodeStatus *svg_status(const struct svg *g, const char *name)
{
	for (size_t i = 0; i < g->r->n_nodes; i++)
		if (!strcmp(g->r->nodes[i]->node, name))
			return g->r->nodes[i];
	return NULL;
}

static void svg_add(struct svg *g, const char *name, int circle)
{
	struct svg_node *n;

	if (!name || !*name || svg_find(g, name))
		return;
	if (g->n_nodes >= SVG_MAX_NODES)
		return;
	n = &g->nodes[g->n_nodes++];
	n->name = name;
	n->st = svg_status(g, name);
	n->order = circle ? (int)g->n_circle++ : -1;
}

static int svg_cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The circle: the measured order; without one (no survey, a class with
 * no order) every known node by name. Then the row below: nodes known
 * but not in the order (down, not surveyed, beyond a split). */
static int svg_collect(struct svg *g)
{
	const Ring__Topology *t = g->t;
	size_t n = g->r->n_nodes + (t ? 2 * t->n_edges : 0), k = 0,
	       distinct = 0;
	const char **all = calloc(n ? n : 1, sizeof(*all));

	if (!all)
		return -1;
	for (size_t i = 0; i < g->r->n_nodes; i++)
		all[k++] = g->r->nodes[i]->node;
	for (size_t i = 0; t && i < t->n_edges; i++) {
		all[k++] = t->edges[i]->a;
		all[k++] = t->edges[i]->b;
	}
	qsort(all, k, sizeof(*all), svg_cmp_name);
	/* How many there are, for the count of those not drawn. */
	for (size_t i = 0; i < k; i++)
		distinct += !i || strcmp(all[i], all[i - 1]);
	for (size_t i = 0; t && i < t->n_order; i++)
		distinct += !bsearch(&t->order[i], all, k, sizeof(*all),
				     svg_cmp_name);
	if (t && t->n_order) {
		for (size_t i = 0; i < t->n_order; i++)
			svg_add(g, t->order[i], 1);
		for (size_t i = 0; i < k; i++)
			svg_add(g, all[i], 0);
	} else {
		for (size_t i = 0; i < k; i++)
			svg_add(g, all[i], 1);
	}
	free(all);
	g->left_out = distinct > g->n_nodes ? distinct - g->n_nodes : 0;
	return 0;
}

/* Where the circle's drawing ends: its bottom node, and the names along
 * the radius when compact. */
static double svg_below(const struct svg *g)
{
	return g->cy + g->rad + (g->compact ? 60 : 0);
}

/* Clockwise from the top, in order; the row below, left to right. */
static void svg_place(struct svg *g)
{
	size_t row = g->n_nodes - g->n_circle, per_row;

	g->compact = g->n_circle > SVG_FULL_NODES;
	/* About 34 px of circumference a node when compact. */
	g->rad = g->compact ? 34.0 * (double)g->n_circle / (2 * SVG_PI) : 220;
	if (g->rad < 220)
		g->rad = 220;
	g->w = 2 * g->rad + 420 > 1000 ? 2 * g->rad + 420 : 1000;
	g->cx = g->w / 2;
	g->cy = 120 + g->rad + (g->compact ? 110 : 50);
	per_row = (size_t)((g->w - 80) / 120);
	for (size_t i = 0, j = 0; i < g->n_nodes; i++) {
		struct svg_node *n = &g->nodes[i];

		if (n->order >= 0) {
			double a = 2 * SVG_PI * n->order / (double)g->n_circle -
				   SVG_PI / 2;

			n->x = g->n_circle == 1 ? g->cx
						: g->cx + g->rad * cos(a);
			n->y = g->n_circle == 1 ? g->cy
						: g->cy + g->rad * sin(a);
			continue;
		}
		n->x = 80 + (double)(j % per_row) * 120;
		n->y = svg_below(g) + 110 + (double)(j / per_row) * 90;
		j++;
	}
	g->y = svg_below(g) + 70;
	if (row)
		g->y += 60 + (double)((row + per_row - 1) / per_row) * 90;
}

static const char *svg_edge_state(const Ring__Edge *e)
{
	return topoview_edge_state(e); /* as the picture in words reads it */
}

static const char *svg_colour(const char *state)
{
	if (!strcmp(state, "up"))
		return "#2e7d32";
	if (!strcmp(state, "degraded"))
		return "#e65100";
	if (!strcmp(state, "down") || !strcmp(state, "missing"))
		return "#c62828";
	if (!strcmp(state, "unverified"))
		return "#757575";
	return "#1565c0";
}

static double svg_worse(double a, double b)
{
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return a < b ? a : b;
}

/* A label box: lines of text centred on (x, y), on a pale background so
 * that it reads over the lines it crosses. */
static void svg_label_box(struct svg *g, double x, double y, size_t lines,
			  size_t chars)
{
	double w = (double)chars * 6.6 + 12, h = (double)lines * 14 + 6;

	svg_printf(&g->o,
		   "<rect class=\"label-bg\" x=\"%.1f\" y=\"%.1f\" "
		   "width=\"%.1f\" height=\"%.1f\" rx=\"4\" fill=\"#ffffff\" "
		   "fill-opacity=\"0.88\"/>",
		   x - w / 2, y - h / 2, w, h);
}

/* Characters (not bytes) of s, at most max bytes of it counted. */
static size_t svg_chars(const char *s, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; s && s[i] && i < max; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

/* 0 drawn, -1 not (an end not placed). */
static int svg_edge(struct svg *g, const Ring__Edge *e, size_t k, size_t m)
{
	const struct svg_node *a = svg_find(g, e->a), *b = svg_find(g, e->b);
	const char *state = svg_edge_state(e);
	const char *col = svg_colour(state);
	char name[2 * SVG_NAME_MAX + 40], l1[160], l2[96], l3[96] = "";
	double dx, dy, d, ox, oy, mx, my, lx, ly, gb, rg;
	size_t lines = 2, chars;

	if (!a || !b)
		return -1;
	text_edge_msg_name(name, sizeof(name), e);
	dx = b->x - a->x;
	dy = b->y - a->y;
	d = sqrt(dx * dx + dy * dy);
	if (d < 1)
		d = 1;
	/* Several cables between one pair: side by side. */
	ox = -dy / d * 9 * ((double)k - (double)(m - 1) / 2);
	oy = dx / d * 9 * ((double)k - (double)(m - 1) / 2);
	mx = (a->x + b->x) / 2 + ox;
	my = (a->y + b->y) / 2 + oy;
	/* The label outside the ring, away from the diagonals. */
	lx = mx - g->cx;
	ly = my - g->cy;
	if (sqrt(lx * lx + ly * ly) < 20) {
		lx = -dy;
		ly = dx;
	}
	gb = topoview_edge_gbps(e);
	snprintf(l1, sizeof(l1), "%s", state);
	if (gb >= 0 && e->n_latency)
		snprintf(l2, sizeof(l2), "%.2f Gbps \xc2\xb7 %.1f \xc2\xb5s",
			 gb, e->latency[0]->p50_us);
	else if (gb >= 0)
		snprintf(l2, sizeof(l2), "%.2f Gbps", gb);
	else
		snprintf(l2, sizeof(l2), "not measured");
	rg = svg_worse(e->rdma_write_gbps_a_to_b, e->rdma_write_gbps_b_to_a);
	if (rg >= 0 || e->n_rdma_write_lat) {
		lines++;
		if (rg >= 0 && e->n_rdma_write_lat)
			snprintf(l3, sizeof(l3),
				 "RDMA %.2f Gbps \xc2\xb7 %.1f \xc2\xb5s", rg,
				 e->rdma_write_lat[0]->p50_us);
		else if (rg >= 0)
			snprintf(l3, sizeof(l3), "RDMA %.2f Gbps", rg);
		else
			snprintf(l3, sizeof(l3), "RDMA %.1f \xc2\xb5s",
				 e->rdma_write_lat[0]->p50_us);
	}
	chars = svg_chars(name, sizeof(name)) + 3 + strlen(l1);
	if (svg_chars(l2, sizeof(l2)) > chars)
		chars = svg_chars(l2, sizeof(l2));
	if (svg_chars(l3, sizeof(l3)) > chars)
		chars = svg_chars(l3, sizeof(l3));
	/* Far enough along that direction that the box clears the line:
	 * the box's extent toward it, plus a margin. */
	d = sqrt(lx * lx + ly * ly);
	lx /= d > 0 ? d : 1;
	ly /= d > 0 ? d : 1;
	d = 14 + ((double)chars * 6.6 + 12) / 2 * fabs(lx) +
	    ((double)lines * 14 + 6) / 2 * fabs(ly) +
	    ((double)lines * 14 + 20) * (double)k;
	lx = mx + lx * d;
	ly = my + ly * d;
	SVG_LIT(&g->o, "<g ");
	svg_id(&g->o, "id=\"edge-", name);
	svg_printf(&g->o, "\" class=\"edge %s\" data-a=\"", state);
	svg_esc(&g->o, e->a, SVG_NAME_MAX);
	SVG_LIT(&g->o, "\" data-b=\"");
	svg_esc(&g->o, e->b, SVG_NAME_MAX);
	SVG_LIT(&g->o, "\"><title>");
	svg_esc(&g->o, name, sizeof(name));
	SVG_LIT(&g->o, ": ");
	svg_esc(&g->o, e->a, SVG_NAME_MAX);
	SVG_LIT(&g->o, " ");
	svg_esc(&g->o, e->a_interface, SVG_NAME_MAX);
	SVG_LIT(&g->o, " - ");
	svg_esc(&g->o, e->b, SVG_NAME_MAX);
	SVG_LIT(&g->o, " ");
	svg_esc(&g->o, e->b_interface, SVG_NAME_MAX);
	if (e->live_reason && *e->live_reason) {
		SVG_LIT(&g->o, "; ");
		svg_esc(&g->o, e->live_reason, SVG_REASON_MAX);
	}
	if (*e->error) {
		SVG_LIT(&g->o, "; ");
		svg_esc(&g->o, e->error, SVG_REASON_MAX);
	}
	SVG_LIT(&g->o, "</title>");
	svg_printf(&g->o,
		   "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		   "stroke=\"%s\" stroke-width=\"%d\"%s/>",
		   a->x + ox, a->y + oy, b->x + ox, b->y + oy, col,
		   !strcmp(state, "down") ? 4 : 6,
		   !strcmp(state, "down")	  ? " stroke-dasharray=\"3 7\""
		   : !strcmp(state, "unverified") ? " stroke-dasharray=\"12 5\""
						  : "");
	if (!strcmp(state, "down"))
		svg_printf(&g->o,
			   "<path class=\"cut\" d=\"M%.1f %.1fl12 12m0 -12l-12 "
			   "12\" stroke=\"%s\" stroke-width=\"4\"/>",
			   mx - 6, my - 6, col);
	if (g->compact) {
		SVG_LIT(&g->o, "</g>\n");
		return 0;
	}
	svg_label_box(g, lx, ly, lines, chars);
	svg_printf(&g->o,
		   "<text class=\"edge-label\" x=\"%.1f\" y=\"%.1f\" "
		   "text-anchor=\"middle\"><tspan x=\"%.1f\" "
		   "font-weight=\"bold\">",
		   lx, ly - 7.0 * (double)(lines - 1) + 4, lx);
	svg_esc(&g->o, name, sizeof(name));
	svg_printf(&g->o,
		   " \xc2\xb7 <tspan class=\"state\" fill=\"%s\">%s</tspan>"
		   "</tspan><tspan class=\"figures\" x=\"%.1f\" dy=\"14\">",
		   col, l1, lx);
	svg_esc(&g->o, l2, sizeof(l2));
	SVG_LIT(&g->o, "</tspan>");
	if (*l3) {
		svg_printf(&g->o, "<tspan class=\"rdma\" x=\"%.1f\" dy=\"14\">",
			   lx);
		svg_esc(&g->o, l3, sizeof(l3));
		SVG_LIT(&g->o, "</tspan>");
	}
	SVG_LIT(&g->o, "</text></g>\n");
	return 0;
}

static int svg_has_edge(const Ring__Topology *t, const char *a, const char *b)
{
	for (size_t i = 0; i < t->n_edges; i++)
		if ((!strcmp(t->edges[i]->a, a) &&
		     !strcmp(t->edges[i]->b, b)) ||
		    (!strcmp(t->edges[i]->a, b) && !strcmp(t->edges[i]->b, a)))
			return 1;
	return 0;
}

/* A line's missing cable ("n1-n3"), dashed between its ends, where no
 * edge (a cable cut now, drawn down) stands for it. */
static void svg_gap(struct svg *g, const char *gap)
{
	char a[SVG_NAME_MAX + 1], *b;
	const struct svg_node *na, *nb;

	if (!gap || !*gap || strlen(gap) > SVG_NAME_MAX)
		return;
	snprintf(a, sizeof(a), "%s", gap);
	/* Names hold '-' too: try each split. */
	for (b = strchr(a, '-'); b; b = strchr(b + 1, '-')) {
		*b = '\0';
		na = svg_find(g, a);
		nb = svg_find(g, b + 1);
		if (na && nb && !svg_has_edge(g->t, a, b + 1)) {
			svg_id(&g->o, "<g id=\"gap-", gap);
			svg_printf(&g->o,
				   "\" class=\"edge missing\"><title>missing "
				   "cable</title><line x1=\"%.1f\" y1=\"%.1f\" "
				   "x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				   "stroke-width=\"3\" stroke-dasharray=\"2 "
				   "8\"/><text x=\"%.1f\" y=\"%.1f\" "
				   "text-anchor=\"middle\" fill=\"%s\">"
				   "missing cable</text></g>\n",
				   na->x, na->y, nb->x, nb->y,
				   svg_colour("missing"), (na->x + nb->x) / 2,
				   (na->y + nb->y) / 2 - 8,
				   svg_colour("missing"));
			return;
		}
		*b = '-';
	}
}

/* Each diagonal pair once: dashed, grey when it has no path (as it must
 * not), red when it has one; its verdict beside. */
static void svg_diagonals(struct svg *g)
{
	const Ring__Topology *t = g->t;
	size_t drawn = 0;

	for (size_t i = 0; i < t->n_diagonals && drawn < SVG_MAX_EDGES; i++) {
		const Ring__DiagonalCheck *d = t->diagonals[i],
					  *show = topoview_diagonal(t, i, NULL);
		const struct svg_node *a = svg_find(g, d->a),
				      *b = svg_find(g, d->b);
		char pair[2 * SVG_NAME_MAX + 4];
		double f = drawn % 2 ? 0.7 : 0.3, x, y;
		if (!show || !a || !b)
			continue;
		drawn++;
		snprintf(pair, sizeof(pair), "%.*s-%.*s", SVG_NAME_MAX, d->a,
			 SVG_NAME_MAX, d->b);
		x = a->x + (b->x - a->x) * f;
		y = a->y + (b->y - a->y) * f;
		svg_id(&g->o, "<g id=\"diag-", pair);
		svg_printf(&g->o, "\" class=\"diagonal %s\"><title>",
			   show->path ? "path" : "ok");
		svg_esc(&g->o, show->verdict, SVG_REASON_MAX);
		svg_printf(&g->o,
			   "</title><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			   "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\" "
			   "stroke-dasharray=\"8 6\"/>",
			   a->x, a->y, b->x, b->y,
			   show->path ? "#c62828" : "#9e9e9e");
		/* On the line a word (none when compact); the verdict in the
		 * list below. */
		if (g->compact) {
			SVG_LIT(&g->o, "</g>\n");
			continue;
		}
		svg_label_box(g, x, y, 1,
			      svg_chars(pair, sizeof(pair)) +
				      (show->path ? 20 : 10));
		svg_printf(&g->o,
			   "<text class=\"verdict\" x=\"%.1f\" y=\"%.1f\" "
			   "text-anchor=\"middle\" fill=\"%s\">",
			   x, y + 4, show->path ? "#c62828" : "#616161");
		svg_esc(&g->o, pair, sizeof(pair));
		if (show->path)
			SVG_LIT(&g->o, ": a path (unexpected)");
		else
			SVG_LIT(&g->o, ": no path");
		SVG_LIT(&g->o, "</text></g>\n");
	}
}

/* Compact: a small disc, the name outside the circle, away from its
 * centre (the state in the colour and the tooltip). */
static void svg_node_small(struct svg *g, const struct svg_node *n,
			   const char *fill, const char *stroke)
{
	double ux = n->x - g->cx, uy = n->y - g->cy,
	       d = sqrt(ux * ux + uy * uy), deg;

	ux /= d > 0 ? d : 1;
	uy /= d > 0 ? d : 1;
	/* Names along the radius, reading left to right on both halves. */
	deg = atan2(uy, ux) * 180 / SVG_PI + (ux < 0 ? 180 : 0);
	svg_printf(&g->o,
		   "</title><circle r=\"11\" fill=\"%s\" stroke=\"%s\" "
		   "stroke-width=\"3\"/><text class=\"name\" "
		   "transform=\"rotate(%.1f) translate(%d 4)\" "
		   "text-anchor=\"%s\" font-size=\"11\">",
		   fill, stroke, deg, ux < 0 ? -17 : 17,
		   ux < 0 ? "end" : "start");
	svg_esc(&g->o, n->name, 24);
	SVG_LIT(&g->o, "</text></g>\n");
}

static void svg_node(struct svg *g, const struct svg_node *n)
{
	const char *state = n->st ? n->st->state : "unknown";
	const char *fill = "#eceff1", *stroke = "#757575";
	int long_name;

	if (!strcmp(state, "up")) {
		fill = "#e8f5e9";
		stroke = "#2e7d32";
	} else if (!strcmp(state, "down")) {
		fill = "#ffebee";
		stroke = "#c62828";
	}
	svg_id(&g->o, "<g id=\"node-", n->name);
	SVG_LIT(&g->o, "\" class=\"node ");
	svg_id(&g->o, "", state);
	svg_printf(&g->o, "\" data-order=\"%d\" data-name=\"", n->order);
	svg_esc(&g->o, n->name, SVG_NAME_MAX);
	svg_printf(&g->o, "\" transform=\"translate(%.1f %.1f)\"><title>", n->x,
		   n->y);
	svg_esc(&g->o, n->name, SVG_NAME_MAX);
	SVG_LIT(&g->o, ": ");
	svg_esc(&g->o, state, SVG_NAME_MAX);
	if (n->st && *n->st->mgmt_address) {
		SVG_LIT(&g->o, ", ");
		svg_esc(&g->o, n->st->mgmt_address, SVG_NAME_MAX);
	}
	if (n->st && n->st->down_reason && *n->st->down_reason &&
	    strcmp(state, "up")) {
		SVG_LIT(&g->o, " (");
		svg_esc(&g->o, n->st->down_reason, SVG_REASON_MAX);
		SVG_LIT(&g->o, ")");
	}
	if (g->compact && n->order >= 0) {
		svg_node_small(g, n, fill, stroke);
		return;
	}
	/* A short name inside the circle, a longer one under it. */
	long_name = svg_chars(n->name, SVG_NAME_MAX) > 6;
	svg_printf(&g->o,
		   "</title><circle r=\"30\" fill=\"%s\" stroke=\"%s\" "
		   "stroke-width=\"3\"/><text class=\"name\" y=\"%d\" "
		   "text-anchor=\"middle\" font-weight=\"bold\">",
		   fill, stroke,
		   long_name		 ? 48
		   : strcmp(state, "up") ? 0
					 : 5);
	svg_esc(&g->o, n->name, 24);
	SVG_LIT(&g->o, "</text>");
	if (strcmp(state, "up")) {
		svg_printf(&g->o,
			   "<text class=\"state\" y=\"%d\" "
			   "text-anchor=\"middle\" font-size=\"11\" "
			   "fill=\"%s\">",
			   long_name ? 4 : 14, stroke);
		svg_esc(&g->o, state, 16);
		SVG_LIT(&g->o, "</text>");
	}
	SVG_LIT(&g->o, "</g>\n");
}

/* Spokes to a hub: a switch carries the traffic, not cables between the
 * nodes; the edges' figures go in the list below. */
static void svg_switch(struct svg *g)
{
	SVG_LIT(&g->o, "<g");
	svg_fixed_id(&g->o, g, "switch");
	SVG_LIT(&g->o, " class=\"switch\">");
	for (size_t i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].order >= 0)
			svg_printf(&g->o,
				   "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				   "y2=\"%.1f\" stroke=\"#90a4ae\" "
				   "stroke-width=\"4\"/>",
				   g->cx, g->cy, g->nodes[i].x, g->nodes[i].y);
	svg_printf(&g->o,
		   "<rect x=\"%.1f\" y=\"%.1f\" width=\"120\" height=\"44\" "
		   "rx=\"6\" fill=\"#eceff1\" stroke=\"#546e7a\" "
		   "stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\" "
		   "text-anchor=\"middle\" font-weight=\"bold\">switch</text>"
		   "</g>\n",
		   g->cx - 60, g->cy - 22, g->cx, g->cy + 5);
}

/* One note, wrapped at word boundaries into at most 3 lines. */
static void svg_note(struct svg *g, const char *cls, const char *tag,
		     const char *colour, const char *text)
{
	const char *s = text ? text : "";
	size_t left = strnlen(s, SVG_NOTE_MAX), lines = 0;

	svg_printf(&g->o, "<text class=\"%s\" x=\"40\" y=\"%.1f\">", cls, g->y);
	svg_printf(&g->o, "<tspan fill=\"%s\" font-weight=\"bold\">", colour);
	svg_esc(&g->o, tag, 40);
	SVG_LIT(&g->o, ":</tspan> ");
	while (left && lines < 3) {
		size_t cut = left, chars = 0, space = 0;

		for (size_t i = 0; i < left; i++) {
			if (((unsigned char)s[i] & 0xc0) != 0x80 &&
			    ++chars > SVG_WRAP) {
				cut = space ? space : i;
				break;
			}
			if (s[i] == ' ')
				space = i;
		}
		if (lines)
			svg_printf(&g->o, "<tspan x=\"60\" dy=\"15\">");
		else
			SVG_LIT(&g->o, "<tspan>");
		svg_esc_span(&g->o, s, cut);
		if (lines == 2 && cut < left)
			SVG_LIT(&g->o, "\xe2\x80\xa6");
		SVG_LIT(&g->o, "</tspan>");
		s += cut;
		left -= cut;
		while (left && *s == ' ') {
			s++;
			left--;
		}
		lines++;
	}
	SVG_LIT(&g->o, "</text>\n");
	g->y += 15.0 * (double)(lines ? lines : 1) + 5;
}

static void svg_heading(struct svg *g, const char *text)
{
	g->y += 10;
	svg_printf(&g->o,
		   "<text class=\"heading\" x=\"24\" y=\"%.1f\" "
		   "font-weight=\"bold\" font-size=\"15\">%s</text>\n",
		   g->y, text);
	g->y += 20;
}

static void svg_more(struct svg *g, size_t more)
{
	if (!more)
		return;
	svg_printf(&g->o,
		   "<text class=\"more\" x=\"40\" y=\"%.1f\" fill=\"#616161\">"
		   "and %zu more (ringctl status lists them)</text>\n",
		   g->y, more);
	g->y += 20;
}

/* Each diagonal pair once, with the verdict of its worst address: the
 * short one where there is no path, all of it where there is. */
static void svg_diagonal_list(struct svg *g)
{
	const Ring__Topology *t = g->t;
	size_t shown = 0, pairs = 0;

	for (size_t i = 0; i < t->n_diagonals; i++) {
		const Ring__DiagonalCheck *d = t->diagonals[i],
					  *show = topoview_diagonal(t, i, NULL);
		char pair[2 * SVG_NAME_MAX + 4], verdict[SVG_NOTE_MAX + 1];
		if (!show)
			continue;
		if (!pairs++)
			svg_heading(g, "Diagonals");
		if (shown >= SVG_MAX_NOTES)
			continue;
		shown++;
		snprintf(pair, sizeof(pair), "%.*s-%.*s", SVG_NAME_MAX, d->a,
			 SVG_NAME_MAX, d->b);
		/* A path: the verdict whole; none: the outcome alone (a
		 * topology stored before the field: the verdict whole). */
		snprintf(verdict, sizeof(verdict), "%.*s", SVG_NOTE_MAX,
			 show->path || !*show->outcome ? show->verdict
						       : show->outcome);
		svg_note(g,
			 show->path ? "diagonal-verdict path"
				    : "diagonal-verdict ok",
			 pair, show->path ? "#c62828" : "#616161", verdict);
	}
	svg_more(g, pairs - shown);
}

static const char *svg_level_colour(const char *level)
{
	if (!strcmp(level, "critical") || !strcmp(level, "error"))
		return "#c62828";
	if (!strcmp(level, "warn") || !strcmp(level, "warning"))
		return "#e65100";
	return "#1565c0";
}

static const char *svg_severity(Ring__Severity s)
{
	return s == RING__SEVERITY__SEVERITY_CRITICAL  ? "critical"
	       : s == RING__SEVERITY__SEVERITY_WARNING ? "warning"
						       : "info";
}

/* Below the picture: alerts, nodes not up, findings, anomalies, then
 * (switch and no-order kinds) every edge's figures. */
static void svg_lists(struct svg *g)
{
	const Ring__StatusReply *r = g->r;
	const Ring__Topology *t = g->t;
	size_t shown = 0, down = 0;
	char cls[64];

	if (r->n_alerts) {
		svg_heading(g, "Alerts firing");
		for (size_t i = 0; i < r->n_alerts && i < SVG_MAX_NOTES; i++) {
			const Ring__Alert *a = r->alerts[i];
			char tag[96];

			/* Clearing: still firing, in grey, said so. */
			snprintf(cls, sizeof(cls), "alert %s%s",
				 svg_severity(a->severity),
				 a->clearing ? " clearing" : "");
			snprintf(tag, sizeof(tag), "%s %.40s%s",
				 svg_severity(a->severity), a->rule,
				 a->clearing ? " (clearing)" : "");
			svg_note(g, cls, tag,
				 a->clearing ? "#616161"
					     : svg_level_colour(svg_severity(
						       a->severity)),
				 a->message);
		}
		svg_more(g, r->n_alerts > SVG_MAX_NOTES
				    ? r->n_alerts - SVG_MAX_NOTES
				    : 0);
	}
	for (size_t i = 0; i < r->n_nodes; i++)
		down += strcmp(r->nodes[i]->state, "up") != 0;
	if (down) {
		svg_heading(g, "Nodes not up");
		for (size_t i = 0; i < r->n_nodes && shown < SVG_MAX_NOTES;
		     i++) {
			const Ring__NodeStatus *n = r->nodes[i];

			if (!strcmp(n->state, "up"))
				continue;
			shown++;
			svg_note(g, "down-node", n->node, "#c62828",
				 *n->down_reason ? n->down_reason : n->state);
		}
		svg_more(g, down - shown);
	}
	if (!t)
		return;
	if (t->n_findings) {
		svg_heading(g, "Findings");
		for (size_t i = 0; i < t->n_findings && i < SVG_MAX_NOTES;
		     i++) {
			const Ring__Finding *f = t->findings[i];

			snprintf(cls, sizeof(cls), "finding %.40s",
				 *f->level ? f->level : "info");
			for (char *p = cls; *p; p++)
				if (*p != ' ' &&
				    !((*p >= 'a' && *p <= 'z') || *p == '_'))
					*p = '_';
			svg_note(g, cls, *f->level ? f->level : "info",
				 svg_level_colour(f->level), f->text);
		}
		svg_more(g, t->n_findings > SVG_MAX_NOTES
				    ? t->n_findings - SVG_MAX_NOTES
				    : 0);
	}
	svg_diagonal_list(g);
	if (t->n_anomalies) {
		svg_heading(g, "Anomalies");
		for (size_t i = 0; i < t->n_anomalies && i < SVG_MAX_NOTES; i++)
			svg_note(g, "anomaly",
				 *t->anomalies[i]->code ? t->anomalies[i]->code
							: "anomaly",
				 "#c62828", t->anomalies[i]->text);
		svg_more(g, t->n_anomalies > SVG_MAX_NOTES
				    ? t->n_anomalies - SVG_MAX_NOTES
				    : 0);
	}
	if (t->n_not_surveyed) {
		svg_heading(g, "Not surveyed");
		for (size_t i = 0; i < t->n_not_surveyed && i < SVG_MAX_NOTES;
		     i++)
			svg_note(g, "not-surveyed", "node", "#616161",
				 t->not_surveyed[i]);
		svg_more(g, t->n_not_surveyed > SVG_MAX_NOTES
				    ? t->n_not_surveyed - SVG_MAX_NOTES
				    : 0);
	}
}

/* The title and the legend, written once the height is known. */
static void svg_head(struct svg_out *o, const struct svg *g, double h)
{
	const Ring__StatusReply *r = g->r;
	const Ring__Topology *t = g->t;
	const char *health = r->health && *r->health ? r->health : "unknown";
	static const char *const legend[] = {"up", "degraded", "down",
					     "unverified", "measured"};
	char when[32], now[32], age[16];
	size_t i = 0, chars = 0;

	if (g->frame) {
		/* A ring of a site: a nested picture, placed by the site's. */
		svg_id(o, "<svg id=\"ring-", g->frame->ring);
		SVG_LIT(o, "\" class=\"ring\" data-ring=\"");
		svg_esc(o, g->frame->ring, SVG_NAME_MAX);
		svg_printf(o,
			   "\" x=\"0\" y=\"%.0f\" width=\"%.0f\" "
			   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
			   g->frame->y, g->w, h, g->w, h);
	} else {
		svg_printf(
			o,
			"<svg xmlns=\"http://www.w3.org/2000/svg\" "
			"id=\"ringd-picture\" class=\"ringd\" "
			"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f "
			"%.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, "
			"sans-serif\" font-size=\"12\">\n",
			g->w, h, g->w, h);
	}
	SVG_LIT(o, "<title>ringd: ");
	svg_esc(o, r->coordinator, SVG_NAME_MAX);
	if (g->frame) {
		SVG_LIT(o, ", ring ");
		svg_esc(o, g->frame->ring, SVG_NAME_MAX);
	}
	SVG_LIT(o, "</title>\n<rect width=\"100%\" height=\"100%\" "
		   "fill=\"#fafafa\"/>\n<text");
	svg_fixed_id(o, g, "title");
	SVG_LIT(o, " x=\"24\" y=\"34\" font-size=\"20\" "
		   "font-weight=\"bold\">");
	if (g->frame) {
		svg_esc(o, g->frame->ring, SVG_NAME_MAX);
		SVG_LIT(o, ": ");
	}
	if (t) {
		svg_esc(o, t->kind, 16);
		/* The order as far as about 60 characters take it. */
		for (i = 0; i < t->n_order && chars < 60; i++) {
			svg_put(o, i ? "\xe2\x80\x93" : " ", i ? 3 : 1);
			svg_esc(o, t->order[i], 24);
			chars += svg_chars(t->order[i], 24) + 1;
		}
		if (i < t->n_order)
			SVG_LIT(o, "\xe2\x80\xa6");
		else if (!strcmp(t->kind, "ring") && t->n_order > 2) {
			SVG_LIT(o, "\xe2\x80\x93");
			svg_esc(o, t->order[0], 24);
		}
	} else {
		SVG_LIT(o, "no survey yet");
	}
	SVG_LIT(o, "</text>\n<text");
	svg_fixed_id(o, g, "health");
	svg_printf(o,
		   " class=\"health %s\" x=\"24\" y=\"58\" font-size=\"14\">",
		   !strcmp(health, "healthy")	   ? "healthy"
		   : !strcmp(health, "relearning") ? "relearning"
		   : !strcmp(health, "degraded")   ? "degraded"
		   : !strcmp(health, "critical")   ? "critical"
						   : "unknown");
	/* The health's own line, on hover. */
	if (r->health_text && *r->health_text) {
		SVG_LIT(o, "<title>");
		svg_esc(o, r->health_text, SVG_NOTE_MAX);
		SVG_LIT(o, "</title>");
	}
	svg_printf(o, "health: <tspan font-weight=\"bold\" fill=\"%s\">",
		   !strcmp(health, "healthy")	   ? "#2e7d32"
		   : !strcmp(health, "relearning") ? "#1565c0"
		   : !strcmp(health, "degraded")   ? "#e65100"
						   : "#c62828");
	svg_esc(o, health, 16);
	SVG_LIT(o, "</tspan>");
	/* Why, as data: the deciding rule (or state) and its subject. */
	if (r->health_cause && *r->health_cause) {
		SVG_LIT(o, " <tspan");
		svg_fixed_id(o, g, "health-cause");
		SVG_LIT(o, ">(");
		svg_esc(o, r->health_cause, 32);
		if (r->health_subject && *r->health_subject) {
			SVG_LIT(o, " ");
			svg_esc(o, r->health_subject, 2 * SVG_NAME_MAX);
		}
		SVG_LIT(o, ")</tspan>");
	}
	svg_printf(o, " \xc2\xb7 %u of %u expected nodes connected",
		   r->n_connected, r->n_expected);
	if (t && t->live_kind && *t->live_kind) {
		char now_text[600];

		topoview_live_text(t, 1, now_text, sizeof(now_text));
		SVG_LIT(o, " \xc2\xb7 now ");
		svg_esc(o, now_text, 4 * SVG_NAME_MAX);
	}
	clock_format_utc(t ? t->surveyed_ms : 0, when, sizeof(when), "never");
	clock_format_utc(r->now_ms, now, sizeof(now), "never");
	svg_age(t ? t->surveyed_ms : 0, r->now_ms, age, sizeof(age));
	SVG_LIT(o, "</text>\n<text");
	svg_fixed_id(o, g, "measured");
	svg_printf(o,
		   " x=\"24\" y=\"80\" "
		   "fill=\"#424242\">measured %s%s%s%s \xc2\xb7 drawn %s by ",
		   when, t && t->surveyed_ms ? " (" : "",
		   t && t->surveyed_ms ? age : "",
		   t && t->surveyed_ms ? " before)" : "", now);
	svg_esc(o, r->coordinator, SVG_NAME_MAX);
	SVG_LIT(o, " (ringd ");
	svg_esc(o, r->version, 32);
	SVG_LIT(o, ")</text>\n");
	SVG_LIT(o, "<g");
	svg_fixed_id(o, g, "legend");
	svg_printf(o, " transform=\"translate(%.0f 24)\">", g->w - 150);
	for (size_t i = 0; i < 5; i++)
		svg_printf(o,
			   "<line x1=\"0\" y1=\"%zu\" x2=\"28\" y2=\"%zu\" "
			   "stroke=\"%s\" stroke-width=\"5\"%s/><text "
			   "x=\"36\" y=\"%zu\">%s</text>",
			   i * 16, i * 16, svg_colour(legend[i]),
			   i == 2 ? " stroke-dasharray=\"3 7\"" : "",
			   i * 16 + 4, legend[i]);
	svg_printf(o, "<line x1=\"0\" y1=\"80\" x2=\"28\" y2=\"80\" "
		      "stroke=\"#9e9e9e\" stroke-width=\"2\" "
		      "stroke-dasharray=\"8 6\"/><text x=\"36\" y=\"84\">"
		      "diagonal</text></g>\n");
}

static void svg_edges(struct svg *g)
{
	const Ring__Topology *t = g->t;
	size_t drawn = 0;

	for (size_t i = 0; i < t->n_edges && drawn < SVG_MAX_EDGES; i++) {
		const Ring__Edge *e = t->edges[i];
		size_t k = 0, m = 0;

		/* A cap on the work too: edges between the same two nodes
		 * are counted over the first SVG_MAX_EDGES * 4 only. */
		if (i >= 4 * SVG_MAX_EDGES)
			break;

		/* Its place among the edges between the same two nodes. */
		for (size_t j = 0; j < t->n_edges && j < 4 * SVG_MAX_EDGES;
		     j++) {
			const Ring__Edge *o = t->edges[j];

			if ((strcmp(o->a, e->a) || strcmp(o->b, e->b)) &&
			    (strcmp(o->a, e->b) || strcmp(o->b, e->a)))
				continue;
			k += j < i;
			m++;
		}
		drawn += svg_edge(g, e, k, m) == 0;
	}
	if (t->n_edges > drawn) {
		svg_printf(&g->o,
			   "<text class=\"more\" x=\"24\" y=\"%.1f\" "
			   "fill=\"#616161\">%zu more edges not drawn "
			   "(ringctl status lists them)</text>\n",
			   svg_below(g) + 40, t->n_edges - drawn);
	}
}

/* The edges as lines of text: a switch's (spokes carry no figures) and a
 * compact picture's (no room beside the lines). */
static void svg_edge_list(struct svg *g, const char *heading)
{
	const Ring__Topology *t = g->t;
	size_t n = 0;

	svg_heading(g, heading);
	for (size_t i = 0; i < t->n_edges && n < SVG_MAX_EDGES; i++, n++) {
		const Ring__Edge *e = t->edges[i];
		const char *state = svg_edge_state(e);
		char name[2 * SVG_NAME_MAX + 40], fig[200], cls[32];
		char bw[48] = ", not measured", lat[48] = "", rdma[48] = "";
		double gb = topoview_edge_gbps(e),
		       rg = svg_worse(e->rdma_write_gbps_a_to_b,
				      e->rdma_write_gbps_b_to_a);

		text_edge_msg_name(name, sizeof(name), e);
		/* Each part cut to its own buffer: a figure of any size. */
		if (gb >= 0)
			snprintf(bw, sizeof(bw), ", %.2f Gbps", gb);
		if (e->n_latency)
			snprintf(lat, sizeof(lat), " \xc2\xb7 %.1f \xc2\xb5s",
				 e->latency[0]->p50_us);
		if (rg >= 0)
			snprintf(rdma, sizeof(rdma), ", RDMA %.2f Gbps", rg);
		snprintf(fig, sizeof(fig), "%s%s%s%s", state, bw, lat, rdma);
		snprintf(cls, sizeof(cls), "edge-note %s", state);
		svg_note(g, cls, name, svg_colour(state), fig);
	}
	svg_more(g, t->n_edges - n);
}

char *svg_draw(const Ring__StatusReply *r, const struct svg_frame *frame,
	       size_t *len, double *width, double *height)
{
	struct svg *g = calloc(1, sizeof(*g));
	struct svg_out doc = {0};
	int sw;
	char *p = NULL;

	if (!g) {
		errno = ENOMEM;
		return NULL;
	}
	g->r = r;
	g->t = r->topology;
	g->frame = frame;
	sw = g->t && !strcmp(g->t->kind, "switch");
	if (svg_collect(g) < 0) {
		g->o.err = ENOMEM;
		goto out;
	}
	svg_place(g);
	if (sw)
		svg_switch(g);
	if (g->t && !sw)
		svg_diagonals(g);
	if (g->t && !sw)
		svg_gap(g, *g->t->live_gap ? g->t->live_gap : g->t->line_gap);
	if (g->t && !sw)
		svg_edges(g);
	for (size_t i = 0; i < g->n_nodes; i++)
		svg_node(g, &g->nodes[i]);
	if (g->n_nodes > g->n_circle)
		svg_printf(
			&g->o,
			"<text class=\"row-note\" x=\"24\" y=\"%.1f\" "
			"fill=\"#616161\">not in the measured order:</text>\n",
			svg_below(g) + 60);
	if (!g->n_nodes)
		svg_printf(&g->o,
			   "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\" "
			   "text-anchor=\"middle\" font-size=\"16\">no nodes "
			   "known yet</text>\n",
			   g->cx, g->cy);
	if (g->left_out)
		svg_printf(&g->o,
			   "<text class=\"more\" x=\"24\" y=\"%.1f\" "
			   "fill=\"#616161\">%zu more nodes not drawn (ringctl "
			   "status lists them)</text>\n",
			   svg_below(g) + 20, g->left_out);
	if (sw || (g->compact && g->t))
		svg_edge_list(g, sw ? "Edges (through the switch)" : "Edges");
	svg_lists(g);
	svg_head(&doc, g, g->y + 30);
	svg_put(&doc, g->o.p ? g->o.p : "", g->o.len);
	SVG_LIT(&doc, "</svg>\n");
	if (g->o.err || doc.err) {
		g->o.err = g->o.err ? g->o.err : doc.err;
		goto out;
	}
	p = doc.p;
	doc.p = NULL;
	*len = doc.len;
	if (width)
		*width = g->w;
	if (height)
		*height = g->y + 30;
out:
	if (!p)
		errno = g->o.err ? g->o.err : ENOMEM;
	free(doc.p);
	free(g->o.p);
	free(g);
	return p;
}
