/* The page of the ring: a status reply assembled from the metrics'
 * inputs (the node table, the topology with its live overlay, the alerts
 * firing), drawn by svg.c as `ringctl status -f svg` draws it. */
#include "page.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "health.h"
#include "metrics.h"
#include "nodes.h"
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

static int page_alerts(struct page_reply *p, const struct alerts *t)
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
		p->alp[p->rep.n_alerts++] = &p->al[i];
	}
	p->rep.alerts = p->alp;
	free(v);
	return 0;
}

int page_render(struct evbuffer *out, const struct metrics_src *src, int html)
{
	struct page_reply p;
	char *doc = NULL;
	size_t len = 0, down = 0;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	ring__status_reply__init(&p.rep);
	if (page_nodes(&p, src->nodes) < 0 || page_alerts(&p, src->alerts) < 0)
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
	doc = svg_render(&p.rep, &len);
	if (!doc)
		goto out;
	for (size_t i = 0; src->topology && i < src->topology->n_edges; i++) {
		const char *st = src->topology->edges[i]->live_state;

		down += st && !strcmp(st, "down");
	}
	/* The page: the picture inline (an SVG document is valid HTML
	 * content as it is), reloaded by the browser itself; the title says
	 * how things stand (a tab, a browser's list of pages). The health is
	 * one of health_name's words (clearing: what decides it is in its
	 * hold-down), the rest numbers: nothing to escape. */
	if (html &&
	    evbuffer_add_printf(
		    out,
		    "<!DOCTYPE html>\n<html lang=\"en\"><head>"
		    "<meta charset=\"utf-8\">"
		    "<meta http-equiv=\"refresh\" content=\"%d\">"
		    "<title>ringd: %s%s, %u of %u nodes up, %zu %s down</title>"
		    "<style>body{margin:0;background:#fafafa;"
		    "font-family:sans-serif}p{margin:8px 24px;color:#616161;"
		    "font-size:12px}</style></head>\n<body>\n",
		    PAGE_REFRESH_S, *p.rep.health ? p.rep.health : "unknown",
		    src->health && src->health->clearing ? " (clearing)" : "",
		    p.rep.n_connected, p.n, down,
		    down == 1 ? "cable" : "cables") < 0)
		goto out;
	if (evbuffer_add(out, doc, len) < 0)
		goto out;
	if (html &&
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
