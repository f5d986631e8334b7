/* The picture of the ring: an SVG document of a status reply, shared by
 * `ringctl status -f svg` and the coordinator's page (metrics_listen).
 * Nodes in their measured order around a circle, each cable with its
 * measured figures and live state, the diagonals checked, the findings,
 * the alerts firing, when it was measured. Every element a test or a
 * stylesheet may look for has a stable id or class:
 *
 *   <g id="node-NAME" class="node STATE" data-order="I">   STATE: up, down,
 *                                                          never
 *   <g id="edge-A-B" class="edge STATE">   STATE: up, degraded, down,
 *        unverified (the live overlay), measured (no overlay); a twin
 *        "edge-A-B:IF" (text_edge_msg_name)
 *   <g id="diag-A-B" class="diagonal ok|path">   ok: no path, as expected
 *   <g id="gap-A-B" class="edge missing">   a line's missing cable
 *   <g id="switch" class="switch">   the hub of a switched topology
 *   <text class="finding LEVEL">, <text class="alert SEVERITY">,
 *   <text class="diagonal-verdict ok|path">, <text class="edge-note STATE">
 *        (a switch's edges, and every edge past SVG_FULL_NODES nodes,
 *        when the picture is compact: small nodes, figures listed)
 *
 * Ids are the names with every byte outside [A-Za-z0-9_.:-] as '_'
 * (data-name holds the name itself). Text from peers is escaped for XML
 * (and for HTML, which embeds the document as it is), cut to a bounded
 * length at a character boundary; what is not UTF-8 becomes U+FFFD. The
 * document is bounded: at most SVG_MAX_NODES nodes and SVG_MAX_EDGES
 * edges drawn, SVG_MAX_NOTES entries of each list (SVG_MAX_EDGES of the
 * edges'; the rest counted), so that it stays under SVG_MAX_BYTES
 * whatever the reply holds (test_svg's worst case: about 0.7 MiB).
 *
 * A site of several rings (Topology.n_rings > 1; svg_site.c): an
 * overview, one tile per ring coloured by its health, then one picture
 * per ring drawn as above from the reply filtered to that ring:
 *
 *   <g id="overview" class="overview">
 *   <g id="tile-ID" class="ring-tile HEALTH" data-ring="ID">   a tile
 *        (id, class, nodes, alerts firing), in an <a href> when linked
 *   <svg id="ring-ID" class="ring" data-ring="ID">   a ring's picture;
 *        its title, health, measured and legend as "ring-ID-title"...
 *   <text class="more-rings">   the tiles or pictures not drawn, counted
 *
 * at most SVG_SITE_MAX_TILES tiles and SVG_SITE_MAX_PICTURES pictures
 * (the worst health first), and only as many as keep the document under
 * SVG_MAX_BYTES. One ring is drawn exactly as a site of one ring. */
#ifndef RING_SVG_H
#define RING_SVG_H

#include <stddef.h>

#include "ring.pb-c.h"

#define SVG_FULL_NODES 16
#define SVG_MAX_NODES 64
#define SVG_MAX_EDGES 128
#define SVG_MAX_NOTES 24
#define SVG_MAX_BYTES (1024 * 1024)
#define SVG_SITE_MAX_TILES 240
#define SVG_SITE_MAX_PICTURES 16

/* The document, NUL-terminated (malloc'd; *len its length without the
 * NUL), or NULL with errno ENOMEM (or EMSGSIZE: past SVG_MAX_BYTES, which
 * the bounds above rule out). */
char *svg_render(const Ring__StatusReply *r, size_t *len);

struct svg_opts {
	/* Only this ring (RingView.id) of a site's reply; NULL or "": all.
	 * Not a ring of the topology: NULL with errno ENOENT. */
	const char *ring;
	/* The overview's tiles link to link + id (the page's "/?ring=");
	 * NULL: no links (ringctl's file). */
	const char *link;
};
/* svg_render with options (NULL: none). */
char *svg_render_opts(const Ring__StatusReply *r, const struct svg_opts *opts,
		      size_t *len);

/* For svg_site.c: one ring's picture, the document (frame NULL) or
 * nested in a site's at y, its fixed ids prefixed "ring-ID-"; its width
 * and height when asked. */
struct svg_frame {
	const char *ring;
	double y;
};
char *svg_draw(const Ring__StatusReply *r, const struct svg_frame *frame,
	       size_t *len, double *width, double *height);

#endif
