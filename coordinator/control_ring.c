/* Issue 24: one ring of the site for status and ranks: the ring a
 * request names (an unknown one refused with the ids there are), the
 * site's topology filtered to it (common/ring_view.c), or the site's with
 * each ring's health filled. */
#include "control_int.h"

#include <stdio.h>
#include <string.h>

#include "ring_view.h"

int control_ring_find(struct client *cl, uint64_t id, const Ring__Topology *t,
		      const char *req_ring, const Ring__RingView **out)
{
	char ids[900] = "";
	size_t used = 0;

	*out = NULL;
	if (!req_ring || !req_ring[0])
		return 0;
	*out = ring_view_find(t, req_ring);
	if (*out)
		return 0;
	for (size_t k = 0; t && k < t->n_rings && used + 80 < sizeof(ids); k++)
		used += (size_t)snprintf(ids + used, sizeof(ids) - used, "%s%s",
					 k ? ", " : "", t->rings[k]->id);
	if (t && used + 80 >= sizeof(ids))
		snprintf(ids + used, sizeof(ids) - used, ", ... (%zu in all)",
			 t->n_rings);
	conn_send_error(cl->conn, id, RING__ERROR_CODE__ERROR_NOT_FOUND,
			"unknown ring '%.64s' (%s%s); ringctl status lists "
			"them",
			req_ring,
			!t	     ? "no survey has completed yet"
			: t->n_rings ? "the rings: "
				     : "the site has no ring",
			ids);
	return -1;
}

int control_ring_reply(const struct control *co, const Ring__Topology *t,
		       const Ring__RingView *r, struct control_ring_reply *out)
{
	memset(out, 0, sizeof(*out));
	if (!t)
		return 0;
	if (co->view && co->view->rings &&
	    co->view->rings(co->view->arg, t, &out->rings) < 0)
		return -1;
	if (!r) {
		out->site = *t;
		if (out->rings.n)
			out->site.rings = out->rings.ptrs;
		out->top = &out->site;
		return 0;
	}
	if (ring_view_build(t, r, &out->view) < 0) {
		health_view_rings_release(&out->rings);
		return -1;
	}
	out->built = 1;
	/* The ring itself, its health filled, as the one ring listed. */
	for (size_t k = 0; k < out->rings.n; k++)
		if (t->rings[k] == r)
			out->one = out->rings.ptrs[k];
	out->view.top.rings = out->one ? &out->one : NULL;
	out->view.top.n_rings = out->one ? 1 : 0;
	out->top = &out->view.top;
	return 0;
}

void control_ring_reply_release(struct control_ring_reply *r)
{
	if (r->built)
		ring_view_release(&r->view);
	health_view_rings_release(&r->rings);
	memset(r, 0, sizeof(*r));
}
