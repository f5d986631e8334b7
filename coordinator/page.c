/* The page of the ring: a status reply assembled from the metrics'
 * inputs (the node table, the topology with its live overlay, the alerts
 * firing), drawn by svg.c as `ringctl status -f svg` draws it; of a site
 * of several rings, svg_site.c's overview with links to each ring's
 * page, or one ring's alone. */
#include "page.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "health.h"
#include "metrics.h"
#include "nodes.h"
#include "ring_view.h"
#include "text.h"
#include "svg.h"

/* Most alerts a page lists (svg.c draws SVG_MAX_NOTES and counts the
 * rest). */
#define PAGE_MAX_ALERTS 256

struct page_reply {
	Ring__StatusReply rep;
	Ring__NodeStatus *st, **stp;
	char ***unaddr;
	Ring__Alert *al, **alp;
	struct node **v;
	unsigned n;
};

static void page_reply_free(struct page_reply *p)
{
	for (unsigned i = 0; p->unaddr && i < p->n; i++)
		free(p->unaddr[i]);
	free(p->unaddr);
	free(p->stp);
	free(p->st);
	free(p->alp);
	free(p->al);
	free(p->v);
}

static int page_nodes(struct page_reply *p, struct nodes *nodes)
{
	p->v = nodes ? nodes_sorted(nodes, &p->n) : NULL;
	if (nodes && !p->v)
		return -1;
	p->st = calloc(p->n ? p->n : 1, sizeof(*p->st));
	p->stp = calloc(p->n ? p->n : 1, sizeof(*p->stp));
	p->unaddr = calloc(p->n ? p->n : 1, sizeof(*p->unaddr));
	if (!p->st || !p->stp || !p->unaddr)
		return -1;
	for (unsigned i = 0; i < p->n; i++) {
		const struct node *n = p->v[i];
		size_t k = n->inventory ? n->inventory->n_interfaces : 0;

		p->unaddr[i] = calloc(k + 1, sizeof(char *));
		if (!p->unaddr[i])
			return -1;
		ring__node_status__init(&p->st[i]);
		nodes_fill_status(n, &p->st[i], p->unaddr[i]);
		p->stp[i] = &p->st[i];
		p->rep.n_expected += n->expected;
		p->rep.n_connected += n->state == NODE_UP;
	}
	p->rep.n_nodes = p->n;
	p->rep.nodes = p->stp;
	return 0;
}

struct page_end {
	const Ring__Topology *t;
	const Ring__RingView *r;
};

/* Either end's ring names an edge's ring. */
static int page_end_ring(const char *a, const char *b, void *arg)
{
	struct page_end *e = arg;

	e->r = ring_view_of_node(e->t, a);
	if (!e->r)
		e->r = ring_view_of_node(e->t, b);
	return e->r != NULL;
}

/* The ring of an alert's subject where the alert does not say (Alert.ring
 * ""): its node's, its edge's ("a-b": every split tried), or its subject
 * a ring's id; "" none. Points into the topology. */
static char *page_alert_ring(const Ring__Topology *t, const Ring__Alert *a)
{
	const Ring__RingView *r = NULL;
	const char *e = a->edge ? a->edge : "";

	if (a->node && *a->node)
		r = ring_view_of_node(t, a->node);
	if (!r) {
		struct page_end end = {.t = t};

		text_edge_splits(e, page_end_ring, &end);
		r = end.r;
	}
	if (!r)
		r = ring_view_find(t, a->subject);
	return r ? r->id : (char *)"";
}

static int page_alerts(struct page_reply *p, const struct alerts *t,
		       const Ring__Topology *top)
{
	const struct alert **v;
	size_t n;

	if (!t)
		return 0;
	v = calloc(PAGE_MAX_ALERTS, sizeof(*v));
	p->al = calloc(PAGE_MAX_ALERTS, sizeof(*p->al));
	p->alp = calloc(PAGE_MAX_ALERTS, sizeof(*p->alp));
	if (!v || !p->al || !p->alp) {
		free(v);
		return -1;
	}
	n = alerts_list(t, 0, v, PAGE_MAX_ALERTS);
	for (size_t i = 0; i < n && i < PAGE_MAX_ALERTS; i++) {
		/* It fires while all is well: nothing about the ring. */
		if (!strcmp(v[i]->rule, "watchdog"))
			continue;
		alerts_to_wire(v[i], &p->al[i]);
		if (top && top->n_rings && (!p->al[i].ring || !*p->al[i].ring))
			p->al[i].ring = page_alert_ring(top, &p->al[i]);
		p->alp[p->rep.n_alerts++] = &p->al[i];
	}
	p->rep.alerts = p->alp;
	free(v);
	return 0;
}

int page_query(const char *query, char *ring)
{
	size_t n = 0;

	if (!query || !*query)
		return 0;
	if (strncmp(query, "ring=", 5))
		return -1;
	for (query += 5; query[n]; n++) {
		char c = query[n];

		if (n + 1 >= PAGE_RING_MAX ||
		    !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return -1;
	}
	if (!n)
		return -1;
	memcpy(ring, query, n);
	ring[n] = '\0';
	return 1;
}

/* What the page's title says: the health, nodes up of those known, and
 * cables down; of one ring, its own. */
struct page_title {
	const char *health;
	unsigned up, nodes;
	size_t down;
};

static int page_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Is node one of r's members? The coordinator's rings list them
 * ascending (RingView.nodes): a binary search, so that the page of a
 * ring of thousands costs n log n. */
static int page_member(const Ring__RingView *r, const char *node)
{
	return node && r->n_nodes &&
	       bsearch(&node, r->nodes, r->n_nodes, sizeof(*r->nodes),
		       page_cmp) != NULL;
}

static void page_title(const struct page_reply *p, const Ring__Topology *t,
		       const Ring__RingView *r, struct page_title *pt)
{
	pt->health = *p->rep.health ? p->rep.health : "unknown";
	pt->up = p->rep.n_connected;
	pt->nodes = p->n;
	pt->down = 0;
	if (r) {
		pt->health = r->health && *r->health ? r->health : "unknown";
		pt->up = pt->nodes = 0;
		for (size_t i = 0; i < p->rep.n_nodes; i++)
			if (page_member(r, p->rep.nodes[i]->node)) {
				pt->nodes++;
				pt->up += !strcmp(p->rep.nodes[i]->state, "up");
			}
	}
	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (r && !(page_member(r, e->a) && page_member(r, e->b)))
			continue;
		pt->down += e->live_state && !strcmp(e->live_state, "down");
	}
}

int page_render(struct evbuffer *out, const struct metrics_src *src, int html,
		const char *ring)
{
	struct page_reply p;
	struct svg_opts opts = {.ring = ring, .link = "/?ring="};
	const Ring__RingView *r = NULL;
	struct page_title pt;
	char *doc = NULL;
	size_t len = 0;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	ring__status_reply__init(&p.rep);
	errno = 0;
	if (ring && !(r = ring_view_find(src->topology, ring))) {
		errno = ENOENT;
		goto out;
	}
	if (page_nodes(&p, src->nodes) < 0 ||
	    page_alerts(&p, src->alerts, src->topology) < 0)
		goto out;
	p.rep.topology = (Ring__Topology *)src->topology;
	if (src->health) {
		p.rep.health = (char *)health_name(src->health->state);
		p.rep.health_cause = (char *)src->health->cause;
		p.rep.health_subject = (char *)src->health->subject;
		p.rep.health_text = (char *)src->health->text;
	} else {
		p.rep.health = (char *)"";
	}
	p.rep.coordinator = (char *)(src->coordinator ? src->coordinator : "");
	p.rep.version = (char *)(src->version ? src->version : "");
	p.rep.now_ms = src->now_ms;
	doc = svg_render_opts(&p.rep, &opts, &len);
	if (!doc)
		goto out;
	page_title(&p, src->topology, r, &pt);
	/* The page: the picture inline (an SVG document is valid HTML
	 * content as it is), reloaded by the browser itself; the title says
	 * how things stand (a tab, a browser's list of pages). The health is
	 * one of health_name's words (clearing: what decides it is in its
	 * hold-down), the ring a checked id, the rest numbers: nothing to
	 * escape. */
	if (html &&
	    evbuffer_add_printf(
		    out,
		    "<!DOCTYPE html>\n<html lang=\"en\"><head>"
		    "<meta charset=\"utf-8\">"
		    "<meta http-equiv=\"refresh\" content=\"%d\">"
		    "<title>ringd: %s%s%s%s%s, %u of %u nodes up, %zu %s "
		    "down</title>"
		    "<style>body{margin:0;background:#fafafa;"
		    "font-family:sans-serif}p{margin:8px 24px;color:#616161;"
		    "font-size:12px}</style></head>\n<body>\n",
		    PAGE_REFRESH_S, r ? "ring " : "", r ? ring : "",
		    r ? ": " : "", pt.health,
		    !r && src->health && src->health->clearing ? " (clearing)"
							       : "",
		    pt.up, pt.nodes, pt.down,
		    pt.down == 1 ? "cable" : "cables") < 0)
		goto out;
	if (evbuffer_add(out, doc, len) < 0)
		goto out;
	if (html && r &&
	    evbuffer_add_printf(out,
				"<p id=\"about\">Read-only; reloads every %d "
				"s. The picture alone: <a href=\"/ring.svg?"
				"ring=%s\">/ring.svg?ring=%s</a>; the site: "
				"<a href=\"/\">/</a>; the metrics: <a "
				"href=\"/metrics\">/metrics</a>.</p>\n</body>"
				"</html>\n",
				PAGE_REFRESH_S, ring, ring) < 0)
		goto out;
	if (html && !r &&
	    evbuffer_add_printf(
		    out,
		    "<p id=\"about\">Read-only; reloads every %d s. The picture "
		    "alone: <a href=\"/ring.svg\">/ring.svg</a>; the metrics: "
		    "<a href=\"/metrics\">/metrics</a>.</p>\n</body></html>\n",
		    PAGE_REFRESH_S) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0 && !errno)
		errno = ENOMEM;
	free(doc);
	page_reply_free(&p);
	return rc;
}
