/* The moving figures of an edge from the survey (live_figures.h). */
#include "live_figures.h"

#include "survey.h"

void live_figures_fill(const struct survey *sv, Ring__Edge *e, uint64_t now_ms)
{
	struct survey_light_out l = {
		.lat_us = -1, .error = "", .sample_gbps = {-1, -1}};

	e->self_bytes_hour = survey_self_bytes(sv, e->a, e->b, now_ms);
	survey_light(sv, e, &l);
	e->light_ms = l.ms;
	e->light_started_ms = l.started_ms;
	e->light_lat_p50_us = l.lat_us;
	e->light_error = (char *)l.error;
	e->sample_gbps_a_to_b = l.sample_gbps[0];
	e->sample_gbps_b_to_a = l.sample_gbps[1];
	e->sample_ms = l.sample_ms;
}
