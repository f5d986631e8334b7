/* Is an edge busy: its ends' port counters against busy_threshold of
 * its nominal rate, before any bandwidth test on it (a counters sample
 * that overlaps ringd's own last test there says nothing). */
#include <stdio.h>

#include "clock.h"
#include "self_bytes.h"
#include "survey_int.h"

int sv_link_busy(struct survey *sv, const struct sv_link *l, char *why,
		 size_t len)
{
	return sv_link_traffic(sv, l, why, len) == 1;
}

int sv_link_traffic(struct survey *sv, const struct sv_link *l, char *why,
		    size_t len)
{
	const struct coord_conf *conf = sv->conf;
	double cap = l->nominal_gbps * 1e9;
	/* Our own tests on this cable in the counters' last interval would
	 * count as traffic: the sample says nothing then. */
	uint64_t self_ms =
		self_bytes_last_ms(sv->acct, sv->run->nodes[l->t.a].name,
				   sv->run->nodes[l->t.b].name);
	int known = 0;

	if (!conf->busy_threshold)
		return 0; /* the operator turned the check off */
	if (cap <= 0)
		return -1;
	for (int k = 0; k < 2; k++) {
		unsigned idx = k ? l->t.b : l->t.a;
		const char *ifname = k ? l->t.b_if : l->t.a_if;
		struct node *n =
			nodes_find(sv->table, sv->run->nodes[idx].name);
		uint64_t at = 0;
		double bps = nodes_port_traffic_bps(n, ifname, &at);

		/* No rate, a sample older than a minute, or one whose
		 * interval overlaps our own last test there: unknown. */
		if (bps < 0 || at + 60000 < clock_now_ms() ||
		    (self_ms && self_ms + 1000 + n->counters_span_ms > at))
			continue;
		/* A port's busier direction: one end covers the cable. */
		known = 1;
		if (bps * 100 > cap * conf->busy_threshold) {
			snprintf(why, len,
				 "%s %s: %.2f Gbps of traffic (%.0f%% of "
				 "%.0f Gbps, above busy_threshold %u%%)",
				 sv->run->nodes[idx].name, ifname, bps / 1e9,
				 100 * bps / cap, l->nominal_gbps,
				 conf->busy_threshold);
			return 1;
		}
	}
	return known ? 0 : -1;
}
