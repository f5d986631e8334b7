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
 * whatever the reply holds (test_svg's worst case: about 0.7 MiB). */
#ifndef RING_SVG_H
#define RING_SVG_H

#include <stddef.h>

#include "ring.pb-c.h"

#define SVG_FULL_NODES 16
#define SVG_MAX_NODES 64
#define SVG_MAX_EDGES 128
#define SVG_MAX_NOTES 24
#define SVG_MAX_BYTES (1024 * 1024)

/* The document, NUL-terminated (malloc'd; *len its length without the
 * NUL), or NULL with errno ENOMEM (or EMSGSIZE: past SVG_MAX_BYTES, which
 * the bounds above rule out). */
char *svg_render(const Ring__StatusReply *r, size_t *len);

#endif
