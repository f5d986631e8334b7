/* The picture of a site (svg.h): a reply of one ring drawn as svg.c draws
 * it; of several rings, an overview of tiles (one per ring, coloured by
 * its health) and then each ring's picture, drawn by svg.c from the
 * reply filtered to that ring (ring_view_build), so that a ring of many
 * looks as a site of one ring does. Bounded: tiles, pictures and bytes
 * (svg.h). */
#include "svg.h"
#include "svg_out.h"
#include "clock.h"
#include "ring_view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SVG_TILE_W 150
#define SVG_TILE_H 70
#define SVG_TILE_COLS 6
#define SVG_SITE_W 1000
/* Bytes kept for the head and the tail around the body. */
#define SVG_SITE_RESERVE 8192

static const char *svg_site_str(const char *s)
{
	return s ? s : "";
}

/* One of the health words, for a class; "unknown" for anything else. */
static const char *svg_site_health(const char *h)
{
	static const char *const known[] = {"healthy", "relearning", "degraded",
					    "critical"};

	for (size_t i = 0; h && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(h, known[i]))
			return known[i];
	return "unknown";
}

/* Worse first: critical, degraded, relearning, unknown, healthy. */
static int svg_site_rank(const char *h)
{
	h = svg_site_health(h);
	return !strcmp(h, "critical")	  ? 0
	       : !strcmp(h, "degraded")	  ? 1
	       : !strcmp(h, "relearning") ? 2
	       : !strcmp(h, "unknown")	  ? 3
					  : 4;
}

static const char *svg_site_fill(const char *h)
{
	static const char *const fill[] = {"#ffcdd2", "#ffe0b2", "#bbdefb",
					   "#eeeeee", "#c8e6c9"};

	return fill[svg_site_rank(h)];
}

static const char *svg_site_ink(const char *h)
{
	static const char *const ink[] = {"#c62828", "#e65100", "#1565c0",
					  "#616161", "#2e7d32"};

	return ink[svg_site_rank(h)];
}

/* The reply of one ring: the site's filtered to r (svg.h's promise: as
 * a coordinator answers `status --ring ID`). Shallow: it points into the
 * site's reply. */
struct svg_sub {
	Ring__StatusReply rep;
	struct ring_view view;
	Ring__NodeStatus **nodes;
	Ring__Alert **alerts;
};

static void svg_sub_release(struct svg_sub *s)
{
	ring_view_release(&s->view);
	free(s->nodes);
	free(s->alerts);
}

static int svg_site_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Is node one of r's members? They come ascending (RingView.nodes): a
 * binary search, so that a ring of thousands costs n log n; a reply
 * whose members are not in order is searched through. */
static int svg_site_member(const Ring__RingView *r, int sorted,
			   const char *node)
{
	if (!node || !r->n_nodes)
		return 0;
	if (sorted)
		return bsearch(&node, r->nodes, r->n_nodes, sizeof(*r->nodes),
			       svg_site_cmp) != NULL;
	return ring_view_member(r, node);
}

static int svg_site_sorted(const Ring__RingView *r)
{
	for (size_t i = 0; i < r->n_nodes; i++)
		if (!r->nodes[i] ||
		    (i && strcmp(r->nodes[i - 1], r->nodes[i]) >= 0))
			return 0;
	return 1;
}

static int svg_sub_build(const Ring__StatusReply *site, const Ring__RingView *r,
			 struct svg_sub *s)
{
	int sorted = svg_site_sorted(r);

	memset(s, 0, sizeof(*s));
	ring__status_reply__init(&s->rep);
	s->nodes = calloc(site->n_nodes ? site->n_nodes : 1, sizeof(*s->nodes));
	s->alerts =
		calloc(site->n_alerts ? site->n_alerts : 1, sizeof(*s->alerts));
	if (!s->nodes || !s->alerts ||
	    ring_view_build(site->topology, r, &s->view) < 0)
		return -1;
	s->rep.coordinator = site->coordinator;
	s->rep.version = site->version;
	s->rep.now_ms = site->now_ms;
	s->rep.survey_state = site->survey_state;
	s->rep.store = site->store;
	s->rep.topology = &s->view.top;
	for (size_t i = 0; i < site->n_nodes; i++) {
		const Ring__NodeStatus *n = site->nodes[i];

		if (!svg_site_member(r, sorted, n->node))
			continue;
		s->nodes[s->rep.n_nodes++] = site->nodes[i];
		s->rep.n_expected += n->expected;
		s->rep.n_connected += !strcmp(svg_site_str(n->state), "up");
	}
	s->rep.nodes = s->nodes;
	for (size_t i = 0; i < site->n_alerts; i++)
		if (!strcmp(svg_site_str(site->alerts[i]->ring),
			    svg_site_str(r->id)))
			s->alerts[s->rep.n_alerts++] = site->alerts[i];
	s->rep.alerts = s->alerts;
	s->rep.health = r->health;
	s->rep.health_cause = r->health_cause;
	s->rep.health_subject = r->health_subject;
	s->rep.health_text = r->health_text;
	return 0;
}

/* One ring's picture alone (ringctl's --ring, the page's ?ring=). */
static char *svg_site_one(const Ring__StatusReply *site,
			  const Ring__RingView *r, size_t *len)
{
	struct svg_sub s;
	char *doc = NULL;

	if (svg_sub_build(site, r, &s) == 0)
		doc = svg_draw(&s.rep, NULL, len, NULL, NULL);
	else
		errno = ENOMEM;
	svg_sub_release(&s);
	return doc;
}

static void svg_site_tile(struct svg_out *o, const Ring__RingView *r, size_t k,
			  const char *link)
{
	const char *h = svg_site_health(r->health);
	double x = 24 + (double)(k % SVG_TILE_COLS) * (SVG_TILE_W + 10);
	double y = (double)(k / SVG_TILE_COLS) * (SVG_TILE_H + 10);

	if (link) {
		SVG_LIT(o, "<a href=\"");
		svg_esc(o, link, SVG_NAME_MAX);
		svg_id(o, "", r->id);
		SVG_LIT(o, "\">");
	}
	svg_id(o, "<g id=\"tile-", r->id);
	svg_printf(o, "\" class=\"ring-tile %s\" data-ring=\"", h);
	svg_esc(o, r->id, SVG_NAME_MAX);
	svg_printf(o,
		   "\"><rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" "
		   "rx=\"6\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"/>",
		   x, y, SVG_TILE_W, SVG_TILE_H, svg_site_fill(h),
		   svg_site_ink(h));
	if (r->health_text && *r->health_text) {
		SVG_LIT(o, "<title>");
		svg_esc(o, r->health_text, 400);
		SVG_LIT(o, "</title>");
	}
	svg_printf(o,
		   "<text class=\"tile-id\" x=\"%.0f\" y=\"%.0f\" "
		   "font-weight=\"bold\">",
		   x + 8, y + 18);
	svg_esc(o, r->id, 22);
	svg_printf(o, "</text><text class=\"tile-kind\" x=\"%.0f\" y=\"%.0f\">",
		   x + 8, y + 36);
	svg_esc(o, r->kind, 16);
	svg_printf(o, " \xc2\xb7 %zu nodes</text>", r->n_nodes);
	svg_printf(o,
		   "<text class=\"tile-alerts\" x=\"%.0f\" y=\"%.0f\" "
		   "fill=\"%s\">%s \xc2\xb7 %u alert%s</text></g>",
		   x + 8, y + 56, svg_site_ink(h), h, r->n_alerts,
		   r->n_alerts == 1 ? "" : "s");
	if (link)
		SVG_LIT(o, "</a>\n");
	else
		SVG_LIT(o, "\n");
}

static double svg_site_overview(struct svg_out *o, const Ring__Topology *t,
				const char *link, double y)
{
	size_t n = t->n_rings < SVG_SITE_MAX_TILES ? t->n_rings
						   : SVG_SITE_MAX_TILES;
	size_t rows = (n + SVG_TILE_COLS - 1) / SVG_TILE_COLS;

	svg_printf(o,
		   "<g id=\"overview\" class=\"overview\" "
		   "transform=\"translate(0 %.0f)\">\n",
		   y);
	for (size_t k = 0; k < n; k++)
		svg_site_tile(o, t->rings[k], k, link);
	SVG_LIT(o, "</g>\n");
	y += (double)rows * (SVG_TILE_H + 10) + 10;
	if (t->n_rings > n) {
		svg_printf(o,
			   "<text class=\"more-rings\" x=\"24\" y=\"%.0f\" "
			   "fill=\"#616161\">and %zu more rings (ringctl "
			   "status lists them)</text>\n",
			   y + 4, t->n_rings - n);
		y += 24;
	}
	return y;
}

struct svg_site_pick {
	const Ring__RingView *r;
	size_t k;
};

static int svg_site_pick_cmp(const void *x, const void *y)
{
	const struct svg_site_pick *a = x, *b = y;
	int c = svg_site_rank(a->r->health) - svg_site_rank(b->r->health);

	return c ? c : a->k < b->k ? -1 : a->k > b->k;
}

/* Each ring's picture, the worst first, while they fit. */
static double svg_site_pictures(struct svg_out *o,
				const Ring__StatusReply *site, double y,
				double *w)
{
	const Ring__Topology *t = site->topology;
	struct svg_site_pick *v = calloc(t->n_rings, sizeof(*v));
	size_t drawn = 0, tried = 0;

	if (!v) {
		o->err = ENOMEM;
		return y;
	}
	for (size_t k = 0; k < t->n_rings; k++) {
		v[k].r = t->rings[k];
		v[k].k = k;
	}
	qsort(v, t->n_rings, sizeof(*v), svg_site_pick_cmp);
	for (; tried < t->n_rings && drawn < SVG_SITE_MAX_PICTURES && !o->err;
	     tried++) {
		struct svg_frame f = {.ring = svg_site_str(v[tried].r->id),
				      .y = y};
		struct svg_sub s;
		char *doc = NULL;
		size_t len = 0;
		double pw = 0, ph = 0;

		if (svg_sub_build(site, v[tried].r, &s) == 0)
			doc = svg_draw(&s.rep, &f, &len, &pw, &ph);
		svg_sub_release(&s);
		if (!doc) {
			if (errno == ENOMEM)
				o->err = ENOMEM;
			continue;
		}
		if (o->len + len + SVG_SITE_RESERVE > SVG_MAX_BYTES) {
			free(doc);
			break;
		}
		svg_put(o, doc, len);
		free(doc);
		drawn++;
		y += ph + 10;
		if (pw > *w)
			*w = pw;
	}
	free(v);
	if (drawn < t->n_rings) {
		svg_printf(o,
			   "<text class=\"more-rings\" x=\"24\" y=\"%.0f\" "
			   "fill=\"#616161\">%zu more rings not drawn here: "
			   "ringctl status --ring ID draws one</text>\n",
			   y + 14, t->n_rings - drawn);
		y += 30;
	}
	return y;
}

static void svg_site_head(struct svg_out *o, const Ring__StatusReply *r,
			  double w, double h)
{
	const char *health = svg_site_health(r->health);
	char now[32];

	svg_printf(o,
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" "
		   "id=\"ringd-picture\" class=\"ringd site\" width=\"%.0f\" "
		   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		   "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
		   "font-size=\"12\">\n",
		   w, h, w, h);
	SVG_LIT(o, "<title>ringd: ");
	svg_esc(o, r->coordinator, SVG_NAME_MAX);
	svg_printf(o,
		   "</title>\n<rect width=\"100%%\" height=\"100%%\" "
		   "fill=\"#fafafa\"/>\n<text id=\"title\" x=\"24\" y=\"34\" "
		   "font-size=\"20\" font-weight=\"bold\">%zu rings</text>\n"
		   "<text id=\"health\" class=\"health %s\" x=\"24\" y=\"58\" "
		   "font-size=\"14\">health: <tspan font-weight=\"bold\" "
		   "fill=\"%s\">%s</tspan>",
		   r->topology->n_rings, health, svg_site_ink(health), health);
	if (r->health_cause && *r->health_cause) {
		SVG_LIT(o, " <tspan id=\"health-cause\">(");
		svg_esc(o, r->health_cause, 32);
		if (r->health_subject && *r->health_subject) {
			SVG_LIT(o, " ");
			svg_esc(o, r->health_subject, 2 * SVG_NAME_MAX);
		}
		SVG_LIT(o, ")</tspan>");
	}
	clock_format_utc(r->now_ms, now, sizeof(now), "never");
	svg_printf(o,
		   " \xc2\xb7 %u of %u expected nodes connected</text>\n"
		   "<text id=\"measured\" x=\"24\" y=\"80\" fill=\"#424242\">"
		   "drawn %s by ",
		   r->n_connected, r->n_expected, now);
	svg_esc(o, r->coordinator, SVG_NAME_MAX);
	SVG_LIT(o, " (ringd ");
	svg_esc(o, r->version, 32);
	SVG_LIT(o, ")</text>\n");
}

static char *svg_site(const Ring__StatusReply *r, const char *link, size_t *len)
{
	struct svg_out body = {0}, doc = {0};
	double y, w = SVG_SITE_W;
	char *p = NULL;

	y = svg_site_overview(&body, r->topology, link, 100);
	y = svg_site_pictures(&body, r, y + 10, &w);
	svg_site_head(&doc, r, w, y + 20);
	svg_put(&doc, body.p ? body.p : "", body.len);
	SVG_LIT(&doc, "</svg>\n");
	if (!body.err && !doc.err) {
		p = doc.p;
		doc.p = NULL;
		*len = doc.len;
	} else {
		errno = body.err ? body.err : doc.err;
	}
	free(body.p);
	free(doc.p);
	return p;
}

char *svg_render_opts(const Ring__StatusReply *r, const struct svg_opts *opts,
		      size_t *len)
{
	const Ring__Topology *t = r->topology;

	if (opts && opts->ring && *opts->ring) {
		const Ring__RingView *one = ring_view_find(t, opts->ring);

		if (!one) {
			errno = ENOENT;
			return NULL;
		}
		/* A site of one ring is that ring: drawn as ever. */
		if (t->n_rings == 1)
			return svg_draw(r, NULL, len, NULL, NULL);
		return svg_site_one(r, one, len);
	}
	if (!t || t->n_rings <= 1)
		return svg_draw(r, NULL, len, NULL, NULL);
	return svg_site(r, opts ? opts->link : NULL, len);
}

char *svg_render(const Ring__StatusReply *r, size_t *len)
{
	return svg_render_opts(r, NULL, len);
}
