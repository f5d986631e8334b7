/* A light check's bandwidth sample: after its 64 B latency step, an edge
 * whose counters show it idle carries a short test each way (over TCP
 * with enough of the ladder's streams to reach its top figure, or RDMA
 * WRITE where the ladder is RDMA), so that a cable that lost rate
 * between surveys is seen within one light_check_interval. Short on
 * purpose: warm-up and window together are SV_SAMPLE_WARMUP_MS +
 * SV_SAMPLE_WINDOW_MS per direction, which bounds what it adds to the
 * cable (ringd's own bytes account counts it, computed from the window
 * as every test's). A low sample is taken again at once, over a longer
 * window, and the better of the two counts: one stalled window is not a
 * halved cable. */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "survey_int.h"

/* Per direction: 5 ms to open the window (slow start over a cable's few
 * microseconds of RTT, a token bucket's burst), 15 ms measured. At line
 * rate that is 20 ms of the cable each way per check (computed): at the
 * default light_check_interval (10 min) 6 checks an hour, 0.12 s of each
 * direction's 3600 s, 0.0033%; both directions' bytes against one
 * direction's capacity 0.0067%. Then what each stream had unsent or in
 * flight drains (the agents keep at most 256 KiB unsent per stream):
 * measured on a 1 Gbit/s cable, one stream, about 1 MB a check. */
#define SV_SAMPLE_WARMUP_MS 5
#define SV_SAMPLE_WINDOW_MS 15
/* A low sample is taken again at once over a longer window: a loaded
 * host or a stalled stream spoils 15 ms more easily than 100 ms. Only
 * on a low sample, so a healthy edge never pays for it. */
#define SV_SAMPLE_CONFIRM_MS 100

_Static_assert(SV_SAMPLE_WINDOW_MS >= TESTLIMITS_SAMPLE_DURATION_MIN_MS,
	       "agents accept the sample's window");

int sv_step_is_sample(unsigned step)
{
	return step == SV_ST_SAMPLE_AB || step == SV_ST_SAMPLE_BA;
}

void survey_set_sample_low_cb(struct survey *sv, survey_sample_low_fn fn,
			      void *arg)
{
	sv->sample_low = fn;
	sv->sample_low_arg = arg;
}

void sv_sample_plan(struct survey *sv, struct sv_link *l, int rdma)
{
	char why[160] = "";
	int traffic;

	l->sample[0] = l->sample[1] = -1;
	l->resampled[0] = l->resampled[1] = 0;
	l->sample_rdma = rdma;
	/* Only on an edge known idle: an unknown one may be busy. */
	traffic = sv_link_traffic(sv, l, why, sizeof(why));
	if (traffic) {
		log_debug("survey", "light check of %s-%s: no sample (%s)",
			  sv->run->nodes[l->t.a].name,
			  sv->run->nodes[l->t.b].name,
			  traffic > 0 ? why : "no fresh counters of its ports");
		return;
	}
	if (l->n_plan + 2 > SV_MAX_PLAN)
		return;
	l->plan[l->n_plan++] = SV_ST_SAMPLE_AB;
	l->plan[l->n_plan++] = SV_ST_SAMPLE_BA;
}

void sv_sample_drop(struct sv_link *l)
{
	unsigned k = l->step + 1;

	for (unsigned i = l->step + 1; i < l->n_plan; i++)
		if (!sv_step_is_sample(l->plan[i]))
			l->plan[k++] = l->plan[i];
	if (k < l->n_plan)
		l->n_plan = k;
}

/* The published edge that link l re-checks, or NULL. */
static const Ring__Edge *sv_sample_edge(const struct survey *sv,
					const struct sv_link *l)
{
	const Ring__Topology *t = sv->topology;

	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (!strcmp(e->a, sv->run->nodes[l->t.a].name) &&
		    !strcmp(e->b, sv->run->nodes[l->t.b].name) &&
		    !strcmp(e->a_interface, l->t.a_if) &&
		    !strcmp(e->b_interface, l->t.b_if))
			return e;
	}
	return NULL;
}

/* The fewest streams that carried what the top of the ladder did (at
 * least SV_SAMPLE_STEP_PCT of it, worse direction) when the edge was
 * last measured; the top when the edge has no such figures. Every
 * stream leaves its unsent and in-flight data to drain after the
 * window, bytes the account does not see: on a slow cable one stream
 * fills it, on a fast one it takes the ladder's top. */
#define SV_SAMPLE_STEP_PCT 90
static uint32_t sv_sample_streams(const struct survey *sv,
				  const struct sv_link *l)
{
	const struct coord_conf *conf = sv->conf;
	const Ring__Edge *e = sv_sample_edge(sv, l);
	unsigned n = sv_ladder_len(sv);
	size_t k;
	double top;

	if (!n)
		return 1;
	if (!e || !e->n_ladder || e->n_gbps_a_to_b != e->n_ladder ||
	    e->n_gbps_b_to_a != e->n_ladder)
		return conf->ladder[n - 1];
	k = e->n_ladder - 1;
	top = e->gbps_a_to_b[k] < e->gbps_b_to_a[k] ? e->gbps_a_to_b[k]
						    : e->gbps_b_to_a[k];
	if (!(top > 0))
		return conf->ladder[n - 1];
	for (size_t i = 0; i < e->n_ladder; i++) {
		double g = e->gbps_a_to_b[i] < e->gbps_b_to_a[i]
				   ? e->gbps_a_to_b[i]
				   : e->gbps_b_to_a[i];

		if (e->ladder[i] && g * 100 >= top * SV_SAMPLE_STEP_PCT)
			return e->ladder[i];
	}
	return e->ladder[k] ? e->ladder[k] : conf->ladder[n - 1];
}

struct survey_test *sv_sample_start(struct survey *sv, struct sv_link *l,
				    unsigned step, survey_test_cb cb)
{
	const struct coord_conf *conf = sv->conf;
	Ring__TestParams p = RING__TEST_PARAMS__INIT;
	Ring__RdmaParams r = RING__RDMA_PARAMS__INIT;
	int ba = step == SV_ST_SAMPLE_BA;

	/* resampled: this is the second, after a low first one. */
	p.duration_ms =
		l->resampled[ba] ? SV_SAMPLE_CONFIRM_MS : SV_SAMPLE_WINDOW_MS;
	p.warmup_ms = SV_SAMPLE_WARMUP_MS;
	if (l->sample_rdma) {
		struct rdmatest_spec sp;

		/* B -> A: B is the requester (its report's A side). */
		sv_rdma_spec(sv, l, ba, &p, &sp);
		p.kind = RING__TEST_KIND__TEST_RDMA_BW;
		p.rdma = &r;
		r.op = RING__RDMA_OP__RDMA_OP_WRITE;
		r.qps = conf->survey_rdma_qps;
		r.size = conf->survey_rdma_size;
		return sv_rdma_start(sv, &sp, cb, l, 0);
	}
	/* Enough streams to reach the baseline's figure (the top). */
	p.kind = RING__TEST_KIND__TEST_TCP_BW;
	p.streams = sv_sample_streams(sv, l);
	p.direction =
		ba ? RING__DIRECTION__DIR_B_TO_A : RING__DIRECTION__DIR_A_TO_B;
	return sv_test_start(sv, sv->run->nodes[l->t.a].name, l->t.a_if,
			     sv->run->nodes[l->t.b].name, l->b_addr, &p, cb, l,
			     0);
}

void sv_sample_done(struct survey *sv, struct sv_link *l, unsigned step,
		    const Ring__TestReport *rep)
{
	int d = step == SV_ST_SAMPLE_BA;
	const Ring__Edge *e;
	double g;

	if (*rep->error) {
		/* Not the edge's light check failing: its latency step
		 * said that. The previous sample stays. */
		log_debug("survey", "sample of %s-%s (%s) failed: %s",
			  sv->run->nodes[l->t.a].name,
			  sv->run->nodes[l->t.b].name, d ? "b->a" : "a->b",
			  rep->error);
		return;
	}
	if (l->sample_rdma)
		g = rep->a_side ? rep->a_side->gbps_sent : -1;
	else
		g = d ? rep->gbps_b_to_a : rep->gbps_a_to_b;
	if (g < 0)
		return;
	if (g > l->sample[d])
		l->sample[d] = g;
	if (l->resampled[d] || !sv->sample_low)
		return;
	e = sv_sample_edge(sv, l);
	if (!e || !sv->sample_low(e, g, sv->sample_low_arg) ||
	    l->n_plan >= SV_MAX_PLAN)
		return;
	/* Low: once more at once, the same direction, right after this. */
	l->resampled[d] = 1;
	memmove(&l->plan[l->step + 2], &l->plan[l->step + 1],
		l->n_plan - l->step - 1);
	l->plan[l->step + 1] = (unsigned char)step;
	l->n_plan++;
	log_debug("survey", "sample of %s-%s (%s) low at %.3f Gbps: again",
		  e->a, e->b, d ? "b->a" : "a->b", g);
}
