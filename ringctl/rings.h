/* A site of several rings in ringctl's words (issue 24): status leads
 * with one line per ring and details only the rings with problems, each
 * read out of the site (common/ring_view.h) and shown as a site of one
 * ring is; the machine formats carry every ring's fields; and a command
 * that needs one ring's ranks says which rings there are when none was
 * named. A site of one ring is none of this: it prints as before. */
#ifndef RING_RINGS_H
#define RING_RINGS_H

#include <stddef.h>

#include "ring.pb-c.h"
#include "writer.h"

/* Rings listed in a ring_required error before "and N more". */
#define RINGS_LISTED_MAX 20

/* 1 when t is a site of several rings (kind "rings"), else 0. */
int rings_several(const Ring__Topology *t);

/* Has ring r a problem status details: health not healthy, alerts
 * firing, order not valid, class not a ring (or not one now), members
 * not surveyed? */
int rings_has_problem(const Ring__RingView *r);

/* topology.rings for the machine formats: every field of every ring,
 * records named by id. */
void rings_render_list(struct writer *w, const Ring__Topology *t);

/* Plain status of a site of several rings, in place of its topology:
 * the table of rings, then each ring with a problem (every ring with
 * verbose) with its health, alerts and one-ring topology, then what is
 * the site's alone (its survey, the nodes in no ring). */
void rings_render_status(struct writer *w, const Ring__StatusReply *r,
			 int verbose);

/* The site's firing alerts of no ring (Alert.ring ""), none at all when
 * only rings' fire: plain status of several rings lists those under
 * their ring. */
void rings_render_site_alerts(struct writer *w, const Ring__StatusReply *r);

/* what ("ranks", "check ranks") needs one ring and t is a site of
 * several: the error (code ring_required, the ring ids as its value, the
 * rings listed with kind and size, the fix --ring ID), returning
 * status. */
int rings_required(const Ring__Topology *t, const char *what, int status);

#endif
