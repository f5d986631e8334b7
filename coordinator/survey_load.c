/* Survey load steps: what NCCL puts on the hardware, after each edge was
 * measured alone. A port step runs every function pair of one cable at
 * once (twins: both halves of a port) and sums them; the ring-load
 * rounds run every edge at once, one way (each node sends to the next,
 * as a ring all-reduce does) and then both ways. Only these show limits
 * that functions share: a port's two halves, or a node's PCIe links,
 * each carrying a half of both cables. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_ceiling.h"
#include "log.h"
#include "pair_rounds.h"
#include "survey_int.h"
#include "testlimits.h"

static const char *const sv_load_mode_name[] = {"port step", "ring load",
						"ring load both ways"};

/* A function pair that was measured and can carry a load test. */
static int sv_link_loadable(const struct sv_link *l)
{
	if (!sv_adjacent(l) || !l->a_addr[0] || !l->b_addr[0] || l->busy[0] ||
	    l->error[0] || l->light)
		return 0;
	if (l->ladder_rdma)
		return l->rdma_write[0] >= 0 || l->rdma_write[1] >= 0;
	return l->gbps[0][0] >= 0 || l->gbps[1][0] >= 0;
}

static struct sv_cable *sv_cable_get(struct survey *sv, const char *id,
				     const struct sv_link *l)
{
	struct sv_cable *c, *v;

	for (unsigned i = 0; i < sv->run->n_cables; i++)
		if (!strcmp(sv->run->cables[i].id, id))
			return &sv->run->cables[i];
	v = reallocarray(sv->run->cables, sv->run->n_cables + 1, sizeof(*v));
	if (!v)
		return NULL;
	sv->run->cables = v;
	c = &sv->run->cables[sv->run->n_cables++];
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", id);
	c->a = l->t.a;
	c->b = l->t.b;
	for (int m = 0; m < 2; m++)
		c->port[m] = c->load[0][m] = c->load[1][m] = -1;
	return c;
}

/* The cable a link runs over: its ports' id, or (ports unknown) its
 * interfaces'. */
static void sv_link_cable(const struct survey *sv, const struct sv_link *l,
			  char *id, size_t len)
{
	if (l->cable_id[0])
		snprintf(id, len, "%s", l->cable_id);
	else
		snprintf(id, len, "%s/%s-%s/%s", sv->run->nodes[l->t.a].name,
			 l->t.a_if, sv->run->nodes[l->t.b].name, l->t.b_if);
}

/* The cables of the adjacent links: twins' function pairs share one. */
static int sv_cables_build(struct survey *sv)
{
	for (unsigned i = 0; i < sv->run->n_links; i++) {
		const struct sv_link *l = &sv->run->links[i];
		const struct sv_if *fa, *fb;
		struct sv_cable *c;
		char id[200];
		double g;

		if (l->switch_pair || !sv_adjacent(l) || sv_link_stray(sv, l))
			continue;
		sv_link_cable(sv, l, id, sizeof(id));
		c = sv_cable_get(sv, id, l);
		if (!c)
			return -1;
		c->n_funcs++;
		fa = sv_iface(sv, l->t.a, l->t.a_if);
		fb = sv_iface(sv, l->t.b, l->t.b_if);
		/* The cable runs at the lesser port speed; twins each report
		 * the port's. */
		g = fa && fb && fa->port_gbps > 0 && fb->port_gbps > 0
			    ? (fa->port_gbps < fb->port_gbps ? fa->port_gbps
							     : fb->port_gbps)
			    : l->nominal_gbps;
		if (g > 0 && (!c->nominal_gbps || g < c->nominal_gbps))
			c->nominal_gbps = g;
		if (sv_link_loadable(l) && c->n_links < SV_CABLE_FUNCS) {
			c->links[c->n_links++] = i;
			c->rdma |= l->ladder_rdma;
		}
	}
	return 0;
}

/* Which cables form the ring, and which way one-way traffic flows. */
static int sv_cables_ring(struct survey *sv)
{
	struct topo_site site = {0};
	int ring = 0;

	if (sv_analyse(sv, &site) < 0)
		return 0;
	/* Every ring of the site at once: they share no cable. */
	for (unsigned r = 0; r < site.n_rings; r++) {
		const struct topo_result res = site.rings[r].res;

		if (res.cls != TOPO_RING || res.n_order < 3)
			continue;
		ring = 1;
		for (unsigned i = 0; i < res.n_order; i++) {
			unsigned x = res.order[i],
				 y = res.order[(i + 1) % res.n_order];

			for (unsigned k = 0; k < sv->run->n_cables; k++) {
				struct sv_cable *c = &sv->run->cables[k];

				if ((c->a == x && c->b == y) ||
				    (c->a == y && c->b == x)) {
					c->in_ring = 1;
					c->ring_fwd = c->a == x;
				}
			}
		}
	}
	topo_site_free(&site);
	return ring;
}

/* Port steps for cables of two or more measured function pairs, in rounds
 * of disjoint node pairs. */
static int sv_cables_schedule(struct survey *sv)
{
	unsigned(*pairs)[2] = calloc(sv->run->n_cables + 1, sizeof(*pairs));
	unsigned *idx = calloc(sv->run->n_cables + 1, sizeof(*idx));
	unsigned *round = calloc(sv->run->n_cables + 1, sizeof(*round));
	unsigned m = 0;
	int rc = -1;

	sv->run->cable_round =
		calloc(sv->run->n_cables + 1, sizeof(*sv->run->cable_round));
	if (!pairs || !idx || !round || !sv->run->cable_round)
		goto out;
	for (unsigned k = 0; k < sv->run->n_cables; k++) {
		sv->run->cable_round[k] = (unsigned)-1;
		if (sv->run->cables[k].n_links < 2)
			continue;
		pairs[m][0] = sv->run->cables[k].a;
		pairs[m][1] = sv->run->cables[k].b;
		idx[m++] = k;
	}
	sv->run->n_cable_rounds =
		m ? pair_rounds_rounds((const unsigned(*)[2])pairs, m,
				       sv->run->n_nodes, round)
		  : 0;
	if (sv->run->n_cable_rounds < 0)
		goto out;
	for (unsigned j = 0; j < m; j++)
		sv->run->cable_round[idx[j]] = round[j];
	rc = 0;
out:
	free(pairs);
	free(idx);
	free(round);
	return rc;
}

static void sv_slot_done(const Ring__TestReport *rep, void *arg)
{
	struct sv_load_slot *s = arg;
	struct survey *sv = s->sv;
	struct sv_cable *c = &sv->run->cables[s->cable];
	const struct sv_link *l = &sv->run->links[s->link];
	double *v = s->mode == SV_LOAD_PORT ? c->port : c->load[s->mode - 1];
	double g[2] = {-1, -1};

	s->test = NULL;
	if (*rep->error) {
		if (!c->error[0])
			snprintf(c->error, sizeof(c->error),
				 "%s, %s-%s: %.200s",
				 sv_load_mode_name[s->mode], l->t.a_if,
				 l->t.b_if, rep->error);
	} else if (l->ladder_rdma) {
		/* The requester's figure; data flows from it. */
		g[s->dir] = rep->a_side ? rep->a_side->gbps_sent : -1;
	} else {
		if (s->dir != 1)
			g[0] = rep->gbps_a_to_b;
		if (s->dir != 0)
			g[1] = rep->gbps_b_to_a;
	}
	for (int d = 0; d < 2; d++)
		if (g[d] >= 0)
			v[d] = (v[d] < 0 ? 0 : v[d]) + g[d];
	sv_done_one(sv);
}

static struct survey_test *sv_slot_start(struct survey *sv,
					 struct sv_load_slot *s)
{
	const struct coord_conf *conf = sv->conf;
	const struct sv_link *l = &sv->run->links[s->link];
	Ring__TestParams p = RING__TEST_PARAMS__INIT;
	Ring__RdmaParams r = RING__RDMA_PARAMS__INIT;

	p.duration_ms = (uint32_t)conf->survey_duration_ms;
	p.warmup_ms = (uint32_t)conf->survey_warmup_ms;
	if (l->ladder_rdma) {
		struct rdmatest_spec sp;

		sv_rdma_spec(sv, l, s->dir == 1, &p, &sp);
		p.kind = RING__TEST_KIND__TEST_RDMA_BW;
		p.rdma = &r;
		r.op = RING__RDMA_OP__RDMA_OP_WRITE;
		r.qps = conf->survey_rdma_qps;
		r.size = conf->survey_rdma_size;
		/* NCCL's ACK timeout: these steps load the ring as a job
		 * does, and the path is known by now (the ladder ran on it);
		 * a shorter one retransmits into a merely busy peer. */
		r.ack_timeout = TESTLIMITS_RDMA_ACK_TIMEOUT_NCCL;
		return sv_rdma_start(sv, &sp, sv_slot_done, s, 0);
	}
	p.kind = RING__TEST_KIND__TEST_TCP_BW;
	p.streams = conf->ladder[sv_ladder_len(sv) - 1];
	p.direction = s->dir == 0   ? RING__DIRECTION__DIR_A_TO_B
		      : s->dir == 1 ? RING__DIRECTION__DIR_B_TO_A
				    : RING__DIRECTION__DIR_BOTH;
	return sv_test_start(sv, sv->run->nodes[l->t.a].name, l->t.a_if,
			     sv->run->nodes[l->t.b].name, l->b_addr, &p,
			     sv_slot_done, s, 0);
}

static void sv_slot_add(struct survey *sv, unsigned cable, unsigned link,
			int dir, int mode)
{
	struct sv_load_slot *s = &sv->run->slots[sv->run->n_slots++];

	memset(s, 0, sizeof(*s));
	s->sv = sv;
	s->cable = cable;
	s->link = link;
	s->dir = dir;
	s->mode = mode;
}

/* The slots of step k: port steps first (round k / 2, direction k % 2),
 * then one way around the ring, then both ways. */
static int sv_step_slots(struct survey *sv, int k)
{
	int ports = 2 * sv->run->n_cable_rounds;

	sv->run->n_slots = 0;
	for (unsigned c = 0; c < sv->run->n_cables; c++) {
		const struct sv_cable *cb = &sv->run->cables[c];

		if (k < ports) {
			if (sv->run->cable_round[c] != (unsigned)(k / 2))
				continue;
			for (unsigned j = 0; j < cb->n_links; j++)
				sv_slot_add(sv, c, cb->links[j], k % 2,
					    SV_LOAD_PORT);
			continue;
		}
		if (!cb->in_ring)
			continue;
		for (unsigned j = 0; j < cb->n_links; j++) {
			const struct sv_link *l = &sv->run->links[cb->links[j]];

			if (k == ports) {
				sv_slot_add(sv, c, cb->links[j],
					    cb->ring_fwd ? 0 : 1,
					    SV_LOAD_RING1);
			} else if (l->ladder_rdma) {
				/* An RDMA test carries one direction. */
				sv_slot_add(sv, c, cb->links[j], 0,
					    SV_LOAD_RING2);
				sv_slot_add(sv, c, cb->links[j], 1,
					    SV_LOAD_RING2);
			} else {
				sv_slot_add(sv, c, cb->links[j], 2,
					    SV_LOAD_RING2);
			}
		}
	}
	return (int)sv->run->n_slots;
}

int sv_load_next(struct survey *sv)
{
	int ports = 2 * sv->run->n_cable_rounds;

	/* The ring-load step that just ended: its wall time. */
	if (sv->run->load_step > ports && sv->run->load_step - 1 - ports < 2)
		sv->run->load_wall_s[sv->run->load_step - 1 - ports] =
			sv_elapsed(&sv->run->load_t0);
	for (; sv->run->load_step < sv->run->n_load_steps;
	     sv->run->load_step++) {
		int n = sv_step_slots(sv, sv->run->load_step);

		if (!n)
			continue;
		log_info("survey: %s %d of %d: %d test(s) at once",
			 sv->run->load_step < ports    ? "port step"
			 : sv->run->load_step == ports ? "ring load, one way"
						       : "ring load, both ways",
			 sv->run->load_step + 1, sv->run->n_load_steps, n);
		clock_gettime(CLOCK_MONOTONIC, &sv->run->load_t0);
		sv->run->phase = SV_LOAD;
		/* One extra count while starting, as the rounds do. */
		sv->run->pending = (unsigned)n + 1;
		for (unsigned i = 0; i < sv->run->n_slots; i++) {
			struct sv_load_slot *s = &sv->run->slots[i];

			s->test = sv_slot_start(sv, s);
			if (!s->test) {
				struct sv_cable *c = &sv->run->cables[s->cable];

				if (!c->error[0])
					snprintf(c->error, sizeof(c->error),
						 "%s: cannot start a test "
						 "(%s)",
						 sv_load_mode_name[s->mode],
						 strerror(errno));
				sv->run->pending--;
			}
		}
		if (sv->run->pending == 1) {
			sv->run->pending = 0;
			continue; /* nothing started: the next step */
		}
		sv->run->pending--;
		return 1;
	}
	return 0;
}

int sv_load_begin(struct survey *sv)
{
	int ring;

	if (sv_cables_build(sv) < 0 || sv_cables_schedule(sv) < 0) {
		log_warnx("survey: cannot plan the port and ring-load steps: "
			  "out of memory");
		return 0;
	}
	ring = sv_cables_ring(sv);
	sv->run->n_load_steps = 2 * sv->run->n_cable_rounds + (ring ? 2 : 0);
	if (!sv->conf->survey_load)
		sv->run->n_load_steps = 0; /* the cables are still reported */
	sv->run->load_step = 0;
	/* The most slots a step can have: both ways on every function. */
	sv->run->slots =
		calloc(2 * SV_CABLE_FUNCS * (size_t)sv->run->n_cables + 1,
		       sizeof(*sv->run->slots));
	if (!sv->run->slots) {
		sv->run->n_load_steps = 0;
		return 0;
	}
	return sv_load_next(sv);
}

/* Report messages live until the survey resets (sv_store copies them). */
static void *sv_keep(struct survey *sv, size_t size)
{
	void **v = reallocarray(sv->run->keep, sv->run->n_keep + 1, sizeof(*v));
	void *p;

	if (!v)
		return NULL;
	sv->run->keep = v;
	p = calloc(1, size);
	if (p)
		sv->run->keep[sv->run->n_keep++] = p;
	return p;
}

static char *sv_keep_printf(struct survey *sv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static char *sv_keep_printf(struct survey *sv, const char *fmt, ...)
{
	va_list ap;
	char buf[512], *p;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	p = sv_keep(sv, strlen(buf) + 1);
	if (p)
		memcpy(p, buf, strlen(buf) + 1);
	return p;
}

/* A function pair's best figure alone in direction d (measured), -1. */
static double sv_link_alone(const struct sv_link *l, int d)
{
	double best = -1;

	if (l->ladder_rdma)
		return l->rdma_write[d];
	for (int s = 0; s < SV_MAX_LADDER; s++)
		if (l->gbps[d][s] > best)
			best = l->gbps[d][s];
	return best;
}

static void *sv_keep_ctx(void *sv, size_t size)
{
	return sv_keep(sv, size);
}

/* A finding with its subject as fields (subj, NULL for none; built by
 * findings.c), text whole. */
static int sv_add_finding(struct survey *sv, Ring__Finding ***v, size_t *n,
			  const char *code, const char *level, const char *text,
			  struct finding *subj)
{
	struct finding none;
	Ring__Finding *f, **nv = sv_keep(sv, (*n + 1) * sizeof(*nv));

	if (!subj)
		subj = &none;
	findings_init(&none, code, level, "");
	snprintf(subj->code, sizeof(subj->code), "%s", code);
	snprintf(subj->level, sizeof(subj->level), "%s", level);
	f = text ? findings_msg(subj, text, sv_keep_ctx, sv) : NULL;
	if (!f || !nv)
		return -1;
	if (*n)
		memcpy(nv, *v, *n * sizeof(*nv));
	nv[(*n)++] = f;
	*v = nv;
	return 0;
}

/* The best figure of the function pairs through node n's functions on
 * PCIe link `link`, both ways: hi (the best) and lo (the worst pair's
 * best); how many pairs and their interfaces. */
static unsigned sv_link_figures(const struct survey *sv, unsigned n,
				const char *link, double *lo, double *hi,
				char *names, size_t len)
{
	unsigned count = 0;
	size_t used = 0;

	*lo = -1;
	*hi = -1;
	names[0] = '\0';
	for (unsigned i = 0; i < sv->run->n_links; i++) {
		const struct sv_link *l = &sv->run->links[i];
		const char *ifn = l->t.a == n	? l->t.a_if
				  : l->t.b == n ? l->t.b_if
						: NULL;
		const struct sv_if *f = ifn ? sv_iface(sv, n, ifn) : NULL;
		double g = -1;

		if (!f || strcmp(f->pcie_link, link) || !sv_adjacent(l))
			continue;
		for (int d = 0; d < 2; d++)
			if (sv_link_alone(l, d) > g)
				g = sv_link_alone(l, d);
		if (g < 0)
			continue;
		count++;
		if (*lo < 0 || g < *lo)
			*lo = g;
		if (g > *hi)
			*hi = g;
		if (used < len)
			used += (size_t)snprintf(names + used, len - used,
						 "%s%s", used ? ", " : "", ifn);
	}
	return count;
}

/* subj: node's PCIe link, its figure against the other link's. */
static struct finding *sv_subject_link(struct finding *subj, const char *node,
				       const char *link, double gbps,
				       double reference)
{
	findings_init(subj, "", "", "");
	snprintf(subj->node, sizeof(subj->node), "%s", node);
	snprintf(subj->pcie_link, sizeof(subj->pcie_link), "%s", link);
	subj->gbps = gbps;
	subj->reference_gbps = reference;
	return subj;
}

/* A node whose function pairs through one PCIe link are all slower than
 * every pair through its other link: that link (trained down, or
 * shared) is the bottleneck, not the cables: its neighbours' other
 * pairs are fine. */
static int sv_pcie_link_findings(struct survey *sv, Ring__Topology *top)
{
	for (unsigned n = 0; n < sv->run->n_nodes; n++) {
		const struct sv_node *sn = &sv->run->nodes[n];

		if (!sv_in_part(sv->run, n))
			continue;
		for (unsigned i = 0; i < sn->n_ifs; i++) {
			const char *link = sn->ifs[i].pcie_link;
			char slow[160], fast[160];
			double slo, shi, flo = -1, fhi = -1;
			const char *other = NULL;
			struct finding subj;
			int first = 1;

			for (unsigned j = 0; j < i && first; j++)
				first = strcmp(sn->ifs[j].pcie_link, link) != 0;
			if (!*link || !first ||
			    sv_link_figures(sv, n, link, &slo, &shi, slow,
					    sizeof(slow)) < 2)
				continue;
			/* Against each other link of this node. */
			for (unsigned j = 0; j < sn->n_ifs; j++) {
				const char *ol = sn->ifs[j].pcie_link;

				if (!*ol || !strcmp(ol, link) ||
				    sv_link_figures(sv, n, ol, &flo, &fhi, fast,
						    sizeof(fast)) < 2 ||
				    !hw_link_slower(shi, flo))
					continue;
				other = ol;
				break;
			}
			if (other &&
			    sv_add_finding(
				    sv, &top->findings, &top->n_findings,
				    "pcie_link_slow", "warn",
				    sv_keep_printf(
					    sv,
					    "%s: every function pair through "
					    "its PCIe link %s (%s) measured "
					    "at most %.2f Gbps alone, every "
					    "one through %s (%s) at least "
					    "%.2f: that PCIe link (trained "
					    "down, or shared) is the limit, "
					    "not the cables",
					    sn->name, link, slow, shi, other,
					    fast, flo),
				    sv_subject_link(&subj, sn->name, link, shi,
						    flo)) < 0)
				return -1;
		}
	}
	return 0;
}

/* Append "; " or ", " and text to a list, keeping it terminated. */
static void sv_list_add(char *list, size_t len, size_t *used, const char *sep,
			const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void sv_list_add(char *list, size_t len, size_t *used, const char *sep,
			const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*used >= len - 1)
		return;
	if (*used)
		*used += (size_t)snprintf(list + *used, len - *used, "%s", sep);
	if (*used >= len - 1) {
		*used = len - 1;
		return;
	}
	va_start(ap, fmt);
	w = vsnprintf(list + *used, len - *used, fmt, ap);
	va_end(ap);
	*used += w > 0 ? (size_t)w : 0;
	if (*used >= len)
		*used = len - 1;
}

/* A cable's port step against its best function alone, the worse
 * direction's ratio (0 when not both measured). */
static double sv_port_ratio(const struct survey *sv, const struct sv_cable *c,
			    double *port, double *alone_out)
{
	double worst = 0;

	for (int d = 0; d < 2 && c->n_links >= 2; d++) {
		double alone = -1;

		for (unsigned j = 0; j < c->n_links; j++) {
			double g =
				sv_link_alone(&sv->run->links[c->links[j]], d);

			if (g > alone)
				alone = g;
		}
		if (alone <= 0 || c->port[d] <= 0)
			return 0;
		if (!d || c->port[d] / alone < worst) {
			worst = c->port[d] / alone;
			*port = c->port[d];
			*alone_out = alone;
		}
	}
	return worst;
}

/* subj, about the whole ring when all is set. */
static struct finding *sv_subject_all(struct finding *subj, int all)
{
	subj->ring = all;
	return subj;
}

/* subj: a function pair across twins, both ends and its cable. */
static struct finding *sv_subject_cross(const struct survey *sv,
					const struct sv_link *l,
					struct finding *subj)
{
	findings_init(subj, "", "", "");
	snprintf(subj->node, sizeof(subj->node), "%s",
		 sv->run->nodes[l->t.a].name);
	snprintf(subj->iface, sizeof(subj->iface), "%s", l->t.a_if);
	snprintf(subj->peer_node, sizeof(subj->peer_node), "%s",
		 sv->run->nodes[l->t.b].name);
	snprintf(subj->peer_iface, sizeof(subj->peer_iface), "%s", l->t.b_if);
	findings_name_cable(subj, l->cable_id);
	return subj;
}

/* Computed from the measured steps: what a cable's functions add up to
 * (port steps), and whose limit the ring load hits. Said once for the
 * whole ring when every cable or node is alike. */
static int sv_load_findings(struct survey *sv, Ring__Topology *top)
{
	char twins[400] = "", limit[400] = "", hosts[400] = "";
	size_t ut = 0, ul = 0, uh = 0;
	unsigned stepped = 0, n_twins = 0, n_limit = 0, nodes = 0, fell = 0;
	struct finding subj, twins_of, limit_of, fell_of;

	findings_init(&twins_of, "", "", "");
	findings_init(&limit_of, "", "", "");
	findings_init(&fell_of, "", "", "");

	for (unsigned i = 0; i < sv->run->n_links; i++) {
		const struct sv_link *l = &sv->run->links[i];

		if (l->cross && sv_in_part(sv->run, l->t.a) &&
		    sv_add_finding(
			    sv, &top->findings, &top->n_findings, "twins_cross",
			    "info",
			    sv_keep_printf(
				    sv,
				    "cable %s: %s %s and %s %s hear each other "
				    "across twins (not the intended pair of "
				    "functions): not measured",
				    l->cable_id, sv->run->nodes[l->t.a].name,
				    l->t.a_if, sv->run->nodes[l->t.b].name,
				    l->t.b_if),
			    sv_subject_cross(sv, l, &subj)) < 0)
			return -1;
	}
	for (unsigned k = 0; k < sv->run->n_cables; k++) {
		const struct sv_cable *c = &sv->run->cables[k];
		double port = 0, alone = 0,
		       r = sv_port_ratio(sv, c, &port, &alone);

		if (r <= 0 || !sv_in_part(sv->run, c->a))
			continue;
		stepped++;
		if (hw_port_step_class(r) == HW_PORT_NEEDS_TWINS) {
			n_twins++;
			findings_name_cable(&twins_of, c->id);
			sv_list_add(twins, sizeof(twins), &ut, ", ",
				    "%s %.2f vs %.2f", c->id, port, alone);
		} else if (hw_port_step_class(r) == HW_PORT_AT_LIMIT) {
			n_limit++;
			findings_name_cable(&limit_of, c->id);
			sv_list_add(limit, sizeof(limit), &ul, ", ",
				    "%s %.2f vs %.2f", c->id, port, alone);
		}
	}
	if (n_twins &&
	    sv_add_finding(
		    sv, &top->findings, &top->n_findings, "port_needs_twins",
		    "info",
		    sv_keep_printf(
			    sv,
			    "%s: a cable's functions together move more than "
			    "one alone (%s Gbps, port step vs one function, "
			    "measured, the worse direction): the port's rate "
			    "needs every function used (all in NCCL_IB_HCA)",
			    n_twins == stepped ? "every cable" : "some cables",
			    twins),
		    sv_subject_all(&twins_of, n_twins == stepped)) < 0)
		return -1;
	if (n_limit &&
	    sv_add_finding(
		    sv, &top->findings, &top->n_findings, "port_limit", "warn",
		    sv_keep_printf(
			    sv,
			    "%s: a cable's functions together move hardly "
			    "more than one alone (%s Gbps, port step vs one "
			    "function, measured): the cable or port is the "
			    "limit, not the PCIe links",
			    n_limit == stepped ? "every cable" : "some cables",
			    limit),
		    sv_subject_all(&limit_of, n_limit == stepped)) < 0)
		return -1;
	if (sv_pcie_link_findings(sv, top) < 0)
		return -1;
	/* Both ways at once against one way: a node whose every ring cable
	 * fell is limited by its host side (PCIe), not by a cable. */
	for (unsigned n = 0; n < sv->run->n_nodes; n++) {
		unsigned cables = 0, down = 0;
		char list[200] = "";
		size_t used = 0;

		for (unsigned k = 0; k < sv->run->n_cables; k++) {
			const struct sv_cable *c = &sv->run->cables[k];
			int fwd = c->ring_fwd ? 0 : 1;
			double one = c->load[0][fwd], both = c->load[1][fwd];

			if (!c->in_ring || (c->a != n && c->b != n) ||
			    one <= 0 || both < 0)
				continue;
			cables++;
			if (hw_load_fell(both, one)) {
				down++;
				sv_list_add(list, sizeof(list), &used, ", ",
					    "%.2f of %.2f", both, one);
			}
		}
		if (cables < 2 || !sv_in_part(sv->run, n))
			continue;
		nodes++;
		if (down == cables) {
			fell++;
			findings_name_node(&fell_of, sv->run->nodes[n].name);
			sv_list_add(hosts, sizeof(hosts), &uh, "; ", "%s %s",
				    sv->run->nodes[n].name, list);
		}
	}
	if (fell &&
	    sv_add_finding(
		    sv, &top->findings, &top->n_findings, "host_pcie_limit",
		    "warn",
		    sv_keep_printf(
			    sv,
			    "%s: with both cables loaded both ways at once "
			    "each fell below three quarters of its one-way "
			    "figure (%s Gbps, ring load, measured): the host "
			    "side (PCIe links that each carry a half of both "
			    "cables) is the limit, not a cable; a ring "
			    "all-reduce sends one way",
			    fell == nodes ? "every node" : "some nodes", hosts),
		    sv_subject_all(&fell_of, fell == nodes)) < 0)
		return -1;
	return 0;
}

int sv_load_report(struct survey *sv, Ring__Topology *top,
		   const int *edge_of_link)
{
	Ring__Cable **cv = NULL;
	size_t nc = 0;

	if (sv->run->n_cables) {
		cv = sv_keep(sv, sv->run->n_cables * sizeof(*cv));
		if (!cv)
			return -1;
	}
	for (unsigned k = 0; k < sv->run->n_cables; k++) {
		const struct sv_cable *c = &sv->run->cables[k];
		Ring__Cable *m = sv_keep(sv, sizeof(*m));
		const struct sv_link *l0;

		if (!m)
			return -1;
		ring__cable__init(m);
		m->edges = sv_keep(sv, (c->n_funcs + 1) * sizeof(uint32_t));
		if (!m->edges)
			return -1;
		for (unsigned i = 0; i < sv->run->n_links; i++) {
			const struct sv_link *l = &sv->run->links[i];
			char id[200];

			if (edge_of_link[i] < 0 || l->t.a != c->a ||
			    l->t.b != c->b || !sv_adjacent(l) ||
			    m->n_edges >= c->n_funcs)
				continue;
			sv_link_cable(sv, l, id, sizeof(id));
			if (!strcmp(id, c->id))
				m->edges[m->n_edges++] =
					(uint32_t)edge_of_link[i];
		}
		l0 = c->n_links ? &sv->run->links[c->links[0]] : NULL;
		m->id = (char *)c->id;
		m->a = sv->run->nodes[c->a].name;
		m->b = sv->run->nodes[c->b].name;
		m->a_port = l0 ? (char *)l0->t.a_port : "";
		m->b_port = l0 ? (char *)l0->t.b_port : "";
		m->functions = c->n_funcs;
		m->nominal_gbps = c->nominal_gbps;
		m->port_gbps_a_to_b = c->n_links >= 2 ? c->port[0] : -1;
		m->port_gbps_b_to_a = c->n_links >= 2 ? c->port[1] : -1;
		m->error = (char *)c->error;
		m->method = c->rdma ? "rdma" : "tcp";
		cv[nc++] = m;
	}
	top->cables = cv;
	top->n_cables = nc;
	if (sv->run->n_load_steps > 2 * sv->run->n_cable_rounds) {
		Ring__LoadRound **rv = sv_keep(sv, 2 * sizeof(*rv));

		if (!rv)
			return -1;
		for (int mode = 0; mode < 2; mode++) {
			Ring__LoadRound *r = sv_keep(sv, sizeof(*r));
			size_t ne = 0;

			if (!r)
				return -1;
			ring__load_round__init(r);
			r->mode = mode ? "both ways" : "one way";
			r->wall_s = sv->run->load_wall_s[mode];
			r->edges = sv_keep(sv, (sv->run->n_cables + 1) *
						       sizeof(*r->edges));
			if (!r->edges)
				return -1;
			for (unsigned k = 0; k < sv->run->n_cables; k++) {
				const struct sv_cable *c = &sv->run->cables[k];
				Ring__LoadEdge *e;

				if (!c->in_ring || !c->n_links)
					continue;
				e = sv_keep(sv, sizeof(*e));
				if (!e)
					return -1;
				ring__load_edge__init(e);
				e->cable_id = (char *)c->id;
				e->a = sv->run->nodes[c->a].name;
				e->b = sv->run->nodes[c->b].name;
				e->gbps_a_to_b = c->load[mode][0];
				e->gbps_b_to_a = c->load[mode][1];
				e->error = (char *)c->error;
				r->edges[ne++] = e;
			}
			r->n_edges = ne;
			rv[mode] = r;
		}
		top->load_rounds = rv;
		top->n_load_rounds = 2;
	}
	/* A site of several rings: each ring's findings of its own. */
	for (int part = sv->run->n_parts > 1 ? 0 : -1; part < sv->run->n_parts;
	     part++) {
		size_t before = top->n_findings;
		int rc;

		sv->run->part = part;
		rc = sv_load_findings(sv, top);
		sv->run->part = -1;
		sv_findings_stamp(top, before, part);
		if (rc < 0)
			return -1;
		if (part < 0)
			break;
	}
	return 0;
}
