/* The health report's line (health_report.h). */
#include "health_report.h"

#include <stdio.h>

#include "topoview.h"

void health_report_line(const struct health *h, const Ring__Topology *t,
			size_t firing, unsigned fired, unsigned resolved,
			char *line, size_t len)
{
	char edges[2048] = "", now_text[600];
	size_t used = 0;

	for (size_t i = 0; t && i < t->n_edges && used < sizeof(edges); i++) {
		int n = snprintf(
			edges + used, sizeof(edges) - used, "%s%s-%s %s",
			i ? ", " : "", t->edges[i]->a, t->edges[i]->b,
			*t->edges[i]->live_state ? t->edges[i]->live_state
						 : "unknown");

		used += n > 0 ? (size_t)n : 0;
	}
	if (t)
		topoview_live_text(t, 1, now_text, sizeof(now_text));
	snprintf(line, len,
		 "health report: %s; %s%s; edges: %s; %zu alerts firing; "
		 "since the last report %u fired, %u resolved",
		 health_name(h->state), t ? "now " : "",
		 t ? now_text : "no survey yet", *edges ? edges : "none",
		 firing, fired, resolved);
}
