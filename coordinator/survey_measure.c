/* Survey measurements: plan, rounds, each edge's step machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters_eval.h"
#include "log.h"
#include "pair_rounds.h"
#include "survey_int.h"
#include "rdma_rules.h"

/* Measurement order: the ring's cycle when there is one (so the rounds
 * alternate), every pair by the circle method through a switch. */
int sv_plan_measure(struct survey *sv)
{
	struct topo_site site = {0};
	unsigned(*pairs)[2] = NULL;
	unsigned n = sv->run->n_nodes;
	int rc = -1;

	/* All pairs only through a switch, which is capped at SV_SWITCH_MAX. */
	size_t cap =
		sv->run->n_links + (sv_is_switch(sv) ? (size_t)n * n : 0) + 1;

	sv->run->meas = calloc(cap, sizeof(*sv->run->meas));
	sv->run->round_of = calloc(cap, sizeof(*sv->run->round_of));
	pairs = calloc(cap, sizeof(*pairs));
	if (!sv->run->meas || !sv->run->round_of || !pairs)
		goto out;
	if (sv_is_switch(sv)) {
		int r = pair_rounds_circle(n, pairs, sv->run->round_of, n * n);

		if (r < 0)
			goto out;
		sv->run->n_rounds = r;
		for (unsigned i = 0; i < n * (n - 1) / 2; i++) {
			const struct sv_if *fa = sv_first_addr(sv, pairs[i][0]);
			const struct sv_if *fb = sv_first_addr(sv, pairs[i][1]);
			struct sv_link *l;

			if (!fa || !fb)
				continue;
			l = sv_add_link(sv, pairs[i][0], fa->name, pairs[i][1],
					fb->name);
			if (!l)
				goto out;
			l->switch_pair = 1;
			l->t.verified = 1;
			sv->run->round_of[sv->run->n_meas] =
				sv->run->round_of[i];
			sv->run->meas[sv->run->n_meas++] =
				(unsigned)(l - sv->run->links);
		}
		rc = 0;
		goto out;
	}
	if (sv_analyse(sv, &site) < 0)
		memset(&site, 0, sizeof(site));
	/* Each ring's cycle: the rings share no node, so their edges fall
	 * into the same rounds side by side. */
	for (unsigned r = 0; r < site.n_rings; r++) {
		const struct topo_result res = site.rings[r].res;

		if (res.cls != TOPO_RING)
			continue;
		for (unsigned i = 0; i < res.n_order; i++) {
			int li = sv_find_link(sv, res.order[i],
					      res.order[(i + 1) % res.n_order]);

			/* Unaddressed (an unused twin): nothing to test. */
			if (li >= 0 && sv->run->links[li].a_addr[0] &&
			    sv->run->links[li].b_addr[0])
				sv->run->meas[sv->run->n_meas++] = (unsigned)li;
		}
	}
	/* Then every other adjacent link (parallel cables, lines, ...). */
	for (unsigned i = 0; i < sv->run->n_links; i++) {
		int seen = 0;

		for (unsigned k = 0; k < sv->run->n_meas; k++)
			seen |= sv->run->meas[k] == i;
		/* Strays' cables are not the ring's: not measured. */
		if (!seen && sv_adjacent(&sv->run->links[i]) &&
		    !sv_link_stray(sv, &sv->run->links[i]) &&
		    sv->run->links[i].a_addr[0] && sv->run->links[i].b_addr[0])
			sv->run->meas[sv->run->n_meas++] = i;
	}
	for (unsigned k = 0; k < sv->run->n_meas; k++) {
		pairs[k][0] = sv->run->links[sv->run->meas[k]].t.a;
		pairs[k][1] = sv->run->links[sv->run->meas[k]].t.b;
	}
	sv->run->n_rounds =
		sv->run->n_meas
			? pair_rounds_rounds((const unsigned(*)[2])pairs,
					     sv->run->n_meas, n,
					     sv->run->round_of)
			: 0;
	rc = sv->run->n_rounds < 0 ? -1 : 0;
out:
	topo_site_free(&site);
	free(pairs);
	return rc;
}

static void sv_edge_step(struct sv_link *l, struct survey *sv);

unsigned sv_ladder_len(const struct survey *sv)
{
	const struct coord_conf *conf = sv->conf;

	return conf->n_ladder < SV_MAX_LADDER ? conf->n_ladder : SV_MAX_LADDER;
}

static void sv_plan_add(struct sv_link *l, unsigned step)
{
	if (l->n_plan < SV_MAX_PLAN)
		l->plan[l->n_plan++] = (unsigned char)step;
}

static void sv_plan_tcp(const struct survey *sv, struct sv_link *l)
{
	for (unsigned s = 0; s < 2 * sv_ladder_len(sv); s++)
		sv_plan_add(l, s);
	sv_plan_add(l, SV_ST_TCP_LAT);
}

static void sv_plan_rdma(struct sv_link *l)
{
	sv_plan_add(l, SV_ST_RDMA_WRITE_AB);
	sv_plan_add(l, SV_ST_RDMA_WRITE_BA);
	sv_plan_add(l, SV_ST_RDMA_READ_AB);
	sv_plan_add(l, SV_ST_RDMA_READ_BA);
	sv_plan_add(l, SV_ST_RDMA_LAT);
}

/* Can this edge run RDMA tests? 0, or -1 with why; *hw tells whether
 * either end has RDMA hardware on the facing port at all. */
static int sv_link_rdma_ready(const struct survey *sv, const struct sv_link *l,
			      char *why, size_t why_len, int *hw)
{
	const struct sv_if *f[2] = {sv_iface(sv, l->t.a, l->t.a_if),
				    sv_iface(sv, l->t.b, l->t.b_if)};
	const unsigned n[2] = {l->t.a, l->t.b};

	*hw = (f[0] && f[0]->rdma_hw) || (f[1] && f[1]->rdma_hw);
	for (int k = 0; k < 2; k++)
		if (!f[k] || !f[k]->rdma_dev[0]) {
			snprintf(why, why_len,
				 "%s:%s has no active RDMA port (%.100s)",
				 sv->run->nodes[n[k]].name,
				 k ? l->t.b_if : l->t.a_if,
				 f[k] ? f[k]->rdma_why : "unknown interface");
			return -1;
		}
	for (int k = 0; k < 2; k++)
		if (!sv->run->nodes[n[k]].rdma_cap) {
			snprintf(why, why_len,
				 "%s: its agent does not offer RDMA tests "
				 "(no '%s' capability)",
				 sv->run->nodes[n[k]].name, RDMA_RULES_CAP);
			return -1;
		}
	return 0;
}

/* What this edge will run, by survey_method (switch pairs: TCP only). */
static void sv_edge_plan(struct survey *sv, struct sv_link *l)
{
	int method = sv->conf->survey_method, hw = 0;
	char why[256];
	int can = !l->switch_pair &&
		  sv_link_rdma_ready(sv, l, why, sizeof(why), &hw) == 0;

	l->n_plan = 0;
	l->step = 0;
	l->ladder_rdma = 0;
	if (l->light) {
		/* 64 B round trips: nothing a busy link would notice. */
		sv_plan_add(l, can && method != COORD_SURVEY_TCP
				       ? SV_ST_RDMA_LAT
				       : SV_ST_TCP_LAT);
		/* Then a short sample as the ladder runs (RDMA or TCP),
		 * when the edge is idle. */
		sv_sample_plan(sv, l,
			       can && (method == COORD_SURVEY_AUTO ||
				       method == COORD_SURVEY_RDMA));
		return;
	}
	if (sv_link_busy(sv, l, l->busy, sizeof(l->busy))) {
		/* Never load a link in use: its last figures stay, and it
		 * is tried again later, alone. */
		log_info("survey: %s-%s is busy, not measured: %s",
			 sv->run->nodes[l->t.a].name,
			 sv->run->nodes[l->t.b].name, l->busy);
		if (!l->switch_pair)
			recheck_queue_add(sv->rq, sv->run->nodes[l->t.a].name,
					  l->t.a_if,
					  sv->run->nodes[l->t.b].name,
					  l->t.b_if, "busy at its last turn",
					  sv->conf->busy_retry_ms, 0);
		return;
	}
	if (l->switch_pair || method == COORD_SURVEY_TCP) {
		sv_plan_tcp(sv, l);
		return;
	}
	if (!can && (method != COORD_SURVEY_AUTO || hw))
		snprintf(l->rdma_error, sizeof(l->rdma_error), "%.250s", why);
	switch (method) {
	case COORD_SURVEY_RDMA:
		if (!can) {
			/* An RDMA edge with no figures, and why. */
			l->ladder_rdma = 1;
			snprintf(l->error, sizeof(l->error),
				 "not measured (survey_method rdma): %.200s",
				 why);
			l->error_has_rdma = 1;
			break;
		}
		/* fall through */
	case COORD_SURVEY_AUTO:
		if (can) {
			l->ladder_rdma = 1;
			sv_plan_rdma(l);
		} else {
			sv_plan_tcp(sv, l);
		}
		break;
	default: /* both */
		sv_plan_tcp(sv, l);
		if (can)
			sv_plan_rdma(l);
		break;
	}
}

static int sv_step_is_rdma(unsigned step)
{
	return step > SV_ST_TCP_LAT && step <= SV_ST_RDMA_LAT;
}

/* An RDMA step failed: the others would fail alike, drop them. In auto
 * mode, when the ladder was to come from RDMA, measure over TCP instead. */
static void sv_rdma_failed(struct survey *sv, struct sv_link *l)
{
	unsigned k = l->step + 1;

	for (unsigned i = l->step + 1; i < l->n_plan; i++)
		if (!sv_step_is_rdma(l->plan[i]))
			l->plan[k++] = l->plan[i];
	l->n_plan = k;
	if (sv->conf->survey_method == COORD_SURVEY_AUTO && l->ladder_rdma &&
	    l->gbps[0][0] < 0 && l->gbps[1][0] < 0) {
		l->ladder_rdma = 0;
		sv_plan_tcp(sv, l);
		log_info("survey: %s-%s: RDMA failed (%s); measuring over TCP",
			 sv->run->nodes[l->t.a].name,
			 sv->run->nodes[l->t.b].name, l->rdma_error);
	}
}

static void sv_edge_rdma_done(struct survey *sv, struct sv_link *l,
			      unsigned step, const Ring__TestReport *rep)
{
	const Ring__TestResult *ra = rep->a_side; /* the requester's */
	double g = ra ? ra->gbps_sent : -1;

	if (*rep->error) {
		if (!l->rdma_error[0])
			snprintf(l->rdma_error, sizeof(l->rdma_error), "%s",
				 rep->error);
		if (sv->conf->survey_method == COORD_SURVEY_RDMA &&
		    !l->error[0]) {
			snprintf(l->error, sizeof(l->error), "%s", rep->error);
			l->error_has_rdma = !strcmp(l->error, l->rdma_error);
		}
		sv_rdma_failed(sv, l);
		return;
	}
	switch (step) {
	case SV_ST_RDMA_WRITE_AB:
	case SV_ST_RDMA_WRITE_BA: {
		int d = step == SV_ST_RDMA_WRITE_BA;

		l->rdma_write[d] = g;
		if (l->ladder_rdma)
			l->gbps[d][0] = g;
		if (!d && ra && ra->endpoint) {
			snprintf(l->a_gid, sizeof(l->a_gid), "%s",
				 ra->endpoint->gid);
			l->a_gid_index = (int)ra->endpoint->gid_index;
		}
		if (!d && rep->b_side && rep->b_side->endpoint) {
			snprintf(l->b_gid, sizeof(l->b_gid), "%s",
				 rep->b_side->endpoint->gid);
			l->b_gid_index = (int)rep->b_side->endpoint->gid_index;
		}
		break;
	}
	case SV_ST_RDMA_READ_AB:
	case SV_ST_RDMA_READ_BA:
		l->rdma_read[step == SV_ST_RDMA_READ_BA] = g;
		break;
	default:
		l->n_rdma_lat = 0;
		for (size_t i = 0; ra && i < ra->n_lat && i < SV_LAT_SIZES_MAX;
		     i++)
			l->rdma_lat[l->n_rdma_lat++] = *ra->lat[i];
		break;
	}
}

static void sv_edge_test_done(const Ring__TestReport *rep, void *arg)
{
	struct sv_link *l = arg;
	struct survey *sv = l->sv;
	unsigned step = l->plan[l->step];

	l->test = NULL;
	if (cev_edge_add(&l->counters, rep) < 0)
		log_warnx("survey: out of memory keeping a test's counters");
	/* Measured wall time of each test, to compare with the survey's. */
	sv->run->tests_sum_s += sv_elapsed(&l->test_t0);
	if (sv_step_is_sample(step)) {
		sv_sample_done(sv, l, step, rep);
		l->step++;
		sv_edge_step(l, sv);
		return;
	}
	if (l->light && *rep->error)
		sv_sample_drop(l);
	if (sv_step_is_rdma(step)) {
		sv_edge_rdma_done(sv, l, step, rep);
	} else if (step < SV_ST_TCP_LAT) {
		double g =
			(step % 2 == 0) ? rep->gbps_a_to_b : rep->gbps_b_to_a;

		if (*rep->error && !l->error[0])
			snprintf(l->error, sizeof(l->error), "%s", rep->error);
		if (!*rep->error)
			l->gbps[step % 2][step / 2] = g;
	} else {
		if (*rep->error && !l->error[0])
			snprintf(l->error, sizeof(l->error), "%s", rep->error);
		if (rep->a_side && !*rep->error) {
			l->n_lat = 0;
			for (size_t i = 0;
			     i < rep->a_side->n_lat && i < SV_LAT_SIZES_MAX;
			     i++)
				l->lat[l->n_lat++] = *rep->a_side->lat[i];
		}
	}
	l->measured_ms = rep->finished_ms;
	l->step++;
	sv_edge_step(l, sv);
}

/* The end of this edge that is no longer up, or NULL. A test needs both:
 * with A gone, B would wait out its accept timeout on every later step. */
static const char *sv_end_gone(struct survey *sv, const struct sv_link *l)
{
	for (int k = 0; k < 2; k++) {
		const char *name = sv->run->nodes[k ? l->t.b : l->t.a].name;
		struct node *n = nodes_find(sv->table, name);

		if (!n || n->state != NODE_UP)
			return name;
	}
	return NULL;
}

/* A latency step, TCP or RDMA: the configured sizes (copied into sizes,
 * which must outlive p) and iterations. */
static void sv_lat_params(Ring__TestParams *p, Ring__TestKind kind,
			  uint32_t *sizes, const struct coord_conf *conf,
			  int light)
{
	if (light) {
		p->kind = kind;
		sizes[0] = 64;
		p->n_sizes = 1;
		p->sizes = sizes;
		p->iterations = SV_LIGHT_ITERATIONS;
		p->lat_warmup = 2;
		return;
	}
	p->kind = kind;
	memcpy(sizes, conf->lat_sizes, conf->n_lat_sizes * sizeof(uint32_t));
	p->n_sizes = conf->n_lat_sizes;
	p->sizes = sizes;
	p->iterations = conf->lat_iterations;
	p->lat_warmup = conf->lat_iterations / 10 + 1;
}

/* A bandwidth step, TCP or RDMA: the configured window. */
static void sv_bw_params(Ring__TestParams *p, Ring__TestKind kind,
			 const struct coord_conf *conf)
{
	p->kind = kind;
	p->duration_ms = (uint32_t)conf->survey_duration_ms;
	p->warmup_ms = (uint32_t)conf->survey_warmup_ms;
}

void sv_rdma_spec(const struct survey *sv, const struct sv_link *l, int swap,
		  const Ring__TestParams *p, struct rdmatest_spec *sp)
{
	const struct sv_if *fa = sv_iface(sv, l->t.a, l->t.a_if);
	const struct sv_if *fb = sv_iface(sv, l->t.b, l->t.b_if);

	sp->a = sv->run->nodes[swap ? l->t.b : l->t.a].name;
	sp->a_if = swap ? l->t.b_if : l->t.a_if;
	sp->a_dev = fa && fb ? (swap ? fb : fa)->rdma_dev : "";
	sp->b = sv->run->nodes[swap ? l->t.a : l->t.b].name;
	sp->b_if = swap ? l->t.a_if : l->t.b_if;
	sp->b_dev = fa && fb ? (swap ? fa : fb)->rdma_dev : "";
	sp->adjacent = 1;
	sp->params = p;
}

/* Start one RDMA step of an edge; its requester is A or, swapped, B. */
static struct survey_test *sv_edge_rdma(struct survey *sv, struct sv_link *l,
					unsigned step)
{
	const struct coord_conf *conf = sv->conf;
	Ring__TestParams p = RING__TEST_PARAMS__INIT;
	Ring__RdmaParams r = RING__RDMA_PARAMS__INIT;
	int swap = step == SV_ST_RDMA_WRITE_BA || step == SV_ST_RDMA_READ_BA;
	uint32_t sizes[SV_LAT_SIZES_MAX];
	struct rdmatest_spec sp;

	sv_rdma_spec(sv, l, swap, &p, &sp);
	p.rdma = &r;
	if (step == SV_ST_RDMA_LAT) {
		sv_lat_params(&p, RING__TEST_KIND__TEST_RDMA_LAT, sizes, conf,
			      l->light);
	} else {
		sv_bw_params(&p, RING__TEST_KIND__TEST_RDMA_BW, conf);
		r.op = step == SV_ST_RDMA_READ_AB || step == SV_ST_RDMA_READ_BA
			       ? RING__RDMA_OP__RDMA_OP_READ
			       : RING__RDMA_OP__RDMA_OP_WRITE;
		r.qps = conf->survey_rdma_qps;
		r.size = conf->survey_rdma_size;
	}
	return sv_rdma_start(sv, &sp, sv_edge_test_done, l, 0);
}

/* Run the next test of this edge's plan, or finish the edge. */
static void sv_edge_step(struct sv_link *l, struct survey *sv)
{
	const char *gone;
	const struct coord_conf *conf = sv->conf;
	Ring__TestParams p = RING__TEST_PARAMS__INIT;
	uint32_t sizes[SV_LAT_SIZES_MAX];
	unsigned step;

	if (l->step >= l->n_plan) {
		sv_done_one(sv);
		return;
	}
	step = l->plan[l->step];
	if (step < SV_ST_TCP_LAT) {
		sv_bw_params(&p, RING__TEST_KIND__TEST_TCP_BW, conf);
		p.streams = conf->ladder[step / 2];
		p.direction = step % 2 ? RING__DIRECTION__DIR_B_TO_A
				       : RING__DIRECTION__DIR_A_TO_B;
	} else if (step == SV_ST_TCP_LAT) {
		sv_lat_params(&p, RING__TEST_KIND__TEST_TCP_LAT, sizes, conf,
			      l->light);
	}
	l->sv = sv;
	clock_gettime(CLOCK_MONOTONIC, &l->test_t0);
	gone = sv_end_gone(sv, l);
	if (gone)
		l->test = NULL;
	else if (sv_step_is_sample(step))
		l->test = sv_sample_start(sv, l, step, sv_edge_test_done);
	else if (sv_step_is_rdma(step))
		l->test = sv_edge_rdma(sv, l, step);
	else
		l->test = sv_test_start(sv, sv->run->nodes[l->t.a].name,
					l->t.a_if, sv->run->nodes[l->t.b].name,
					l->b_addr, &p, sv_edge_test_done, l, 0);
	if (!l->test && sv_step_is_sample(step)) {
		/* A sample that cannot start says nothing of the edge (its
		 * latency step did): the next check samples again. */
		l->step++;
		sv_edge_step(l, sv);
		return;
	}
	if (!l->test) {
		char *err = sv_step_is_rdma(step) ? l->rdma_error : l->error;
		size_t len = sv_step_is_rdma(step) ? sizeof(l->rdma_error)
						   : sizeof(l->error);

		if (!err[0])
			snprintf(err, len,
				 "cannot start test: %s is not connected",
				 gone ? gone : sv->run->nodes[l->t.b].name);
		if (sv_step_is_rdma(step))
			sv_rdma_failed(sv, l);
		l->step++;
		/* Not from inside our caller's loop: finish via the next step
		 * (each failure advances, so this ends). */
		sv_edge_step(l, sv);
	}
}

int sv_start_round(struct survey *sv)
{
	unsigned started = 0;

	for (; sv->run->round < sv->run->n_rounds; sv->run->round++) {
		for (unsigned k = 0; k < sv->run->n_meas; k++)
			started += sv->run->round_of[k] ==
				   (unsigned)sv->run->round;
		if (started)
			break;
	}
	if (!started)
		return 0;
	log_info("survey: round %d of %d: %u edge(s)", sv->run->round + 1,
		 sv->run->n_rounds, started);
	/* One extra count while starting: edges that fail at once must not
	 * end the round before every edge of it has started. */
	sv->run->pending = started + 1;
	for (unsigned k = 0; k < sv->run->n_meas; k++)
		if (sv->run->round_of[k] == (unsigned)sv->run->round) {
			struct sv_link *l = &sv->run->links[sv->run->meas[k]];

			sv_edge_plan(sv, l);
			sv_edge_step(l, sv);
		}
	sv_done_one(sv);
	return 1;
}
