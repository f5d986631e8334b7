/* Survey report: the Topology message (edges, ranks, findings). */
#include <arpa/inet.h>
#include <stdarg.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "frame.h"
#include "counters_eval.h"
#include "log.h"
#include "msg_arena.h"
#include "survey_int.h"
#include "text.h"

/* Edge.method of a pair measured through a switch. ring.proto documents
 * only "tcp" and "rdma": this string, and the test below, become the
 * edge-method enum's value. */

int sv_edge_through_switch(const Ring__Edge *e)
{
	return e->method_kind == RING__EDGE_METHOD__EDGE_METHOD_TCP_SWITCH;
}

static void *sv_ar_alloc(void *ar, size_t size)
{
	return msg_arena_alloc(ar, size);
}

/* A finding with its subject as fields (findings.c builds the message);
 * text whole, longer than a struct finding holds. */
static Ring__Finding *sv_finding_of(struct msg_arena *ar, struct finding *f,
				    const char *text)
{
	return findings_msg(f, text, sv_ar_alloc, ar);
}

/* One about the edge a-b, or the node a (b NULL), or nothing. */
static Ring__Finding *sv_finding(struct msg_arena *ar, const char *code,
				 const char *level, const char *text,
				 const char *a, const char *b)
{
	struct finding f;

	findings_init(&f, code, level, "");
	if (a && b)
		findings_set_edge(&f, a, b);
	else if (a)
		snprintf(f.node, sizeof(f.node), "%s", a);
	return sv_finding_of(ar, &f, text);
}

/* A latency ladder as message pointers in the arena (NULL on failure). */
static Ring__LatResult **sv_lat_copy(struct msg_arena *ar,
				     const Ring__LatResult *lat, unsigned n,
				     size_t *n_out)
{
	Ring__LatResult **v = msg_arena_alloc(ar, (n + 1) * sizeof(*v));

	*n_out = 0;
	for (unsigned i = 0; v && i < n; i++) {
		Ring__LatResult *r = msg_arena_alloc(ar, sizeof(*r));

		if (!r)
			return NULL;
		*r = lat[i];
		r->base.unknown_fields = NULL;
		r->base.n_unknown_fields = 0;
		v[(*n_out)++] = r;
	}
	return v;
}

/* The published edge with the same ports, or NULL. */
static const Ring__Edge *sv_old_edge(const struct survey *sv,
				     const Ring__Edge *e)
{
	const Ring__Topology *t = sv->topology;

	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *o = t->edges[i];

		if (!strcmp(o->a, e->a) && !strcmp(o->b, e->b) &&
		    !strcmp(o->a_interface, e->a_interface) &&
		    !strcmp(o->b_interface, e->b_interface))
			return o;
	}
	return NULL;
}

/* A busy edge was not measured: it keeps its last figures, and their
 * time says how old they are. Pointers into the published topology:
 * sv_store copies the new one before it frees that. */
static void sv_edge_keep(Ring__Edge *e, const Ring__Edge *o)
{
	if (!o)
		return;
	e->n_ladder = o->n_ladder;
	e->ladder = o->ladder;
	e->n_gbps_a_to_b = o->n_gbps_a_to_b;
	e->gbps_a_to_b = o->gbps_a_to_b;
	e->n_gbps_b_to_a = o->n_gbps_b_to_a;
	e->gbps_b_to_a = o->gbps_b_to_a;
	e->n_latency = o->n_latency;
	e->latency = o->latency;
	e->measured_ms = o->measured_ms;
	e->method = o->method;
	e->method_kind = o->method_kind;
	e->rdma_write_gbps_a_to_b = o->rdma_write_gbps_a_to_b;
	e->rdma_write_gbps_b_to_a = o->rdma_write_gbps_b_to_a;
	e->rdma_read_gbps_a_to_b = o->rdma_read_gbps_a_to_b;
	e->rdma_read_gbps_b_to_a = o->rdma_read_gbps_b_to_a;
	e->n_rdma_write_lat = o->n_rdma_write_lat;
	e->rdma_write_lat = o->rdma_write_lat;
	e->a_gid = o->a_gid;
	e->b_gid = o->b_gid;
	e->a_gid_index = o->a_gid_index;
	e->b_gid_index = o->b_gid_index;
}

static Ring__Edge *sv_edge_msg(struct survey *sv, struct msg_arena *ar,
			       const struct sv_link *l)
{
	const struct coord_conf *conf = sv->conf;
	unsigned nl =
		conf->n_ladder < SV_MAX_LADDER ? conf->n_ladder : SV_MAX_LADDER;
	Ring__Edge *e = msg_arena_alloc(ar, sizeof(*e));

	if (!e)
		return NULL;
	ring__edge__init(e);
	e->a = msg_arena_printf(ar, "%s", sv->run->nodes[l->t.a].name);
	e->a_interface = msg_arena_printf(ar, "%s", l->t.a_if);
	e->a_rdma = msg_arena_printf(ar, "%s", l->a_rdma);
	e->a_address = msg_arena_printf(ar, "%s", l->a_addr);
	e->b = msg_arena_printf(ar, "%s", sv->run->nodes[l->t.b].name);
	e->b_interface = msg_arena_printf(ar, "%s", l->t.b_if);
	e->b_rdma = msg_arena_printf(ar, "%s", l->b_rdma);
	e->b_address = msg_arena_printf(ar, "%s", l->b_addr);
	e->a_sees_b = l->t.a_sees_b;
	e->b_sees_a = l->t.b_sees_a;
	e->verified = l->t.verified;
	/* RDMA's ladder is one step: the survey's queue pair count. */
	if (l->ladder_rdma)
		nl = 1;
	e->ladder = msg_arena_alloc(ar, nl * sizeof(uint32_t));
	e->gbps_a_to_b = msg_arena_alloc(ar, nl * sizeof(double));
	e->gbps_b_to_a = msg_arena_alloc(ar, nl * sizeof(double));
	if (!e->ladder || !e->gbps_a_to_b || !e->gbps_b_to_a)
		return NULL;
	e->n_ladder = e->n_gbps_a_to_b = e->n_gbps_b_to_a = nl;
	for (unsigned s = 0; s < nl; s++) {
		e->ladder[s] = l->ladder_rdma ? conf->survey_rdma_qps
					      : conf->ladder[s];
		e->gbps_a_to_b[s] = l->gbps[0][s];
		e->gbps_b_to_a[s] = l->gbps[1][s];
	}
	e->nominal_gbps = l->nominal_gbps;
	e->latency = sv_lat_copy(ar, l->lat, l->n_lat, &e->n_latency);
	if (!e->latency)
		return NULL;
	e->measured_ms = l->measured_ms;
	e->error = msg_arena_printf(ar, "%s", l->error);
	e->method_kind = l->switch_pair
				 ? RING__EDGE_METHOD__EDGE_METHOD_TCP_SWITCH
			 : l->ladder_rdma ? RING__EDGE_METHOD__EDGE_METHOD_RDMA
					  : RING__EDGE_METHOD__EDGE_METHOD_TCP;
	e->method = msg_arena_printf(ar, "%s",
				     l->switch_pair   ? "tcp (switch)"
				     : l->ladder_rdma ? "rdma"
						      : "tcp");
	e->rdma_write_gbps_a_to_b = l->rdma_write[0];
	e->rdma_write_gbps_b_to_a = l->rdma_write[1];
	e->rdma_read_gbps_a_to_b = l->rdma_read[0];
	e->rdma_read_gbps_b_to_a = l->rdma_read[1];
	e->rdma_write_lat = sv_lat_copy(ar, l->rdma_lat, l->n_rdma_lat,
					&e->n_rdma_write_lat);
	if (!e->rdma_write_lat)
		return NULL;
	e->rdma_error = msg_arena_printf(ar, "%s", l->rdma_error);
	e->a_gid = msg_arena_printf(ar, "%s", l->a_gid);
	e->b_gid = msg_arena_printf(ar, "%s", l->b_gid);
	e->a_gid_index = l->a_gid_index;
	e->b_gid_index = l->b_gid_index;
	e->busy = msg_arena_printf(ar, "%s", l->busy);
	e->cable_id = msg_arena_printf(ar, "%s", l->cable_id);
	e->n_counters = cev_edge_view(l->counters, &e->counters);
	{
		const struct sv_if *fa = sv_iface(sv, l->t.a, l->t.a_if);

		e->twin = fa && fa->twin_idx > 0;
	}
	if (l->busy[0])
		sv_edge_keep(e, sv_old_edge(sv, e));
	return e;
}

/* The findings' input for one method's edges (TCP ladders or RDMA WRITE
 * figures): the rules compare edges, so never one method with the other.
 * The TCP ladder goes as configured; RDMA's is one step, all QPs. */
static unsigned sv_findings_edges(struct survey *sv, struct msg_arena *ar,
				  int rdma, struct findings_ladder *ladder,
				  struct findings_edge *fe)
{
	const struct coord_conf *conf = sv->conf;
	unsigned nl = rdma ? 1 : sv_ladder_len(sv), nf = 0;

	ladder->n = nl;
	for (unsigned s = 0; s < nl; s++)
		ladder->streams[s] =
			rdma ? conf->survey_rdma_qps : conf->ladder[s];
	ladder->top_what =
		rdma ? msg_arena_printf(ar, "%u RDMA QP%s",
					conf->survey_rdma_qps,
					conf->survey_rdma_qps == 1 ? "" : "s")
		     : NULL;
	for (unsigned i = 0; i < sv->run->n_links; i++) {
		const struct sv_link *l = &sv->run->links[i];
		struct findings_edge *e = &fe[nf];

		if ((!sv_adjacent(l) && !l->switch_pair) ||
		    sv_link_stray(sv, l) || !l->ladder_rdma != !rdma ||
		    !sv_in_part(sv->run, l->t.a) ||
		    !sv_in_part(sv->run, l->t.b))
			continue;
		{
			const struct sv_if *fa =
				sv_iface(sv, l->t.a, l->t.a_if);
			char name[200];

			text_edge_name(
				name, sizeof(name), sv->run->nodes[l->t.a].name,
				sv->run->nodes[l->t.b].name, l->t.a_if,
				!l->switch_pair && fa && fa->twin_idx > 0);
			e->name = msg_arena_printf(ar, "%s", name);
		}
		e->dir_name[0] = msg_arena_printf(ar, "%s->%s",
						  sv->run->nodes[l->t.a].name,
						  sv->run->nodes[l->t.b].name);
		e->dir_name[1] = msg_arena_printf(ar, "%s->%s",
						  sv->run->nodes[l->t.b].name,
						  sv->run->nodes[l->t.a].name);
		for (int d = 0; d < 2; d++)
			for (unsigned s = 0; s < nl; s++)
				e->gbps[d][s] = l->gbps[d][s];
		e->nominal_gbps = l->nominal_gbps;
		nf++;
	}
	return nf;
}

/* The neighbour a port's claims were resolved to, "" if none. */
static void sv_believed(const struct survey *sv, unsigned node,
			const char *port, char *out, size_t len)
{
	out[0] = '\0';
	for (unsigned i = 0; i < sv->run->n_links; i++) {
		const struct sv_link *l = &sv->run->links[i];

		if (!sv_adjacent(l))
			continue;
		if (l->t.a == node && !strcmp(l->t.a_if, port))
			snprintf(out, len, "%s %s", sv->run->nodes[l->t.b].name,
				 l->t.b_if);
		else if (l->t.b == node && !strcmp(l->t.b_if, port))
			snprintf(out, len, "%s %s", sv->run->nodes[l->t.a].name,
				 l->t.a_if);
		if (out[0])
			return;
	}
}

/* A port that heard several neighbours, or refused claims because its
 * table was full: only one neighbour can be cabled there. */
static void sv_findings_claims(struct survey *sv, struct msg_arena *ar,
			       Ring__Topology *top, unsigned node, unsigned cap)
{
	struct node *n = nodes_find(sv->table, sv->run->nodes[node].name);
	const Ring__NeighbourTable *t = n ? n->neighbours : NULL;

	for (size_t j = 0; t && j < t->n_neighbours && top->n_findings < cap;
	     j++) {
		const char *port = t->neighbours[j]->local_interface;
		char text[600], who[200] = "", believed[96], more[48] = "";
		struct finding lc;
		uint64_t refused = 0;
		unsigned claims = 0;
		int first = 1;

		for (size_t k = 0; k < j && first; k++)
			first = strcmp(t->neighbours[k]->local_interface, port);
		if (!first)
			continue;
		for (size_t k = j; k < t->n_neighbours; k++) {
			const Ring__Neighbour *nb = t->neighbours[k];
			size_t w = strlen(who);

			if (strcmp(nb->local_interface, port))
				continue;
			if (claims++ < 4)
				snprintf(who + w, sizeof(who) - w, "%s%s %s",
					 w ? ", " : "", nb->remote_node,
					 nb->remote_interface);
		}
		for (size_t k = 0; k < t->n_ports; k++)
			if (!strcmp(t->ports[k]->local_interface, port))
				refused = t->ports[k]->claims_refused;
		if (claims < 2 && !refused)
			continue;
		sv_believed(sv, node, port, believed, sizeof(believed));
		if (refused)
			snprintf(more, sizeof(more), "; %llu more refused",
				 (unsigned long long)refused);
		snprintf(text, sizeof(text),
			 "%s %s hears conflicting LLDP claims (%s%s%s): %s%s; "
			 "the others are forged or come from a device on that "
			 "cable",
			 sv->run->nodes[node].name, port, who,
			 claims > 4 ? ", ..." : "", more,
			 believed[0] ? "believed " : "none could be confirmed",
			 believed[0] ? believed : "");
		findings_init(&lc, "lldp_conflict", "warn", "");
		snprintf(lc.node, sizeof(lc.node), "%s",
			 sv->run->nodes[node].name);
		snprintf(lc.iface, sizeof(lc.iface), "%s", port);
		for (size_t k = j; k < t->n_neighbours; k++)
			if (!strcmp(t->neighbours[k]->local_interface, port))
				findings_name_node(
					&lc, t->neighbours[k]->remote_node);
		top->findings[top->n_findings++] = sv_finding_of(ar, &lc, text);
	}
}

/* Findings [before, n) were made from ring part's figures alone: they
 * say so (Finding.ring_id), so that each ring's view holds its own. */
void sv_findings_stamp(Ring__Topology *top, size_t before, int part)
{
	if (part < 0 || (size_t)part >= top->n_rings)
		return;
	for (size_t i = before; i < top->n_findings; i++)
		top->findings[i]->ring_id = top->rings[part]->id;
}

/* The ladder's findings and the hardware model's, over the nodes of
 * sv->run->part (strays apart: no figure or hardware finding speaks of
 * them). */
static void sv_findings_part(struct survey *sv, struct msg_arena *ar,
			     Ring__Topology *top, unsigned cap,
			     struct findings_edge *fe,
			     struct findings_hw_node *hw, struct finding *hwf)
{
	struct finding fo[32];
	unsigned nf, nfo, nh = 0;

	for (unsigned i = 0; i < sv->run->n_nodes; i++) {
		struct node *n = nodes_find(sv->table, sv->run->nodes[i].name);

		if (sv->run->nodes[i].stray || !sv_in_part(sv->run, i))
			continue;
		hw[nh].name = sv->run->nodes[i].name;
		hw[nh].inv = n ? n->inventory : NULL;
		hw[nh].nbrs = n ? n->neighbours : NULL;
		nh++;
	}
	for (int rdma = 0; rdma < 2; rdma++) {
		struct findings_ladder ladder = {0};

		ladder.halves = findings_hw_halves(hw, nh);
		memset(fe, 0, (sv->run->n_links + 1) * sizeof(*fe));
		nf = sv_findings_edges(sv, ar, rdma, &ladder, fe);
		nfo = nf ? findings_compute(&ladder, fe, nf, fo,
					    sizeof(fo) / sizeof(fo[0]))
			 : 0;
		for (unsigned i = 0; i < nfo && top->n_findings < cap; i++)
			top->findings[top->n_findings++] =
				sv_finding_of(ar, &fo[i], NULL);
	}
	/* The port and PCIe model of the current inventories. */
	nfo = findings_hw(hw, nh, hwf, sv->run->n_nodes * 16);
	for (unsigned i = 0; i < nfo && top->n_findings < cap; i++)
		top->findings[top->n_findings++] =
			sv_finding_of(ar, &hwf[i], NULL);
}

static int sv_findings(struct survey *sv, struct msg_arena *ar,
		       Ring__Topology *top, int n_parts)
{
	struct findings_edge *fe = calloc(sv->run->n_links + 1, sizeof(*fe));
	struct findings_hw_node *hw = calloc(sv->run->n_nodes + 1, sizeof(*hw));
	struct finding fo[32],
		*hwf = calloc(sv->run->n_nodes * 16 + 1, sizeof(*hwf));
	unsigned nfo, cap = 64 + sv->run->n_links * 3 + sv->run->n_nodes * 20;
	int rc = -1;

	top->findings = msg_arena_alloc(ar, cap * sizeof(*top->findings));
	if (!fe || !hw || !hwf || !top->findings)
		goto out;
	/* The site's, or each ring's on its own on a site of several. */
	for (int part = n_parts > 1 ? 0 : -1; part < n_parts; part++) {
		size_t before = top->n_findings;

		sv->run->part = part;
		sv_findings_part(sv, ar, top, cap, fe, hw, hwf);
		sv_findings_stamp(top, before, part);
		if (part < 0)
			break;
	}
	sv->run->part = -1;
	for (unsigned i = 0; i < sv->run->n_links && top->n_findings < cap;
	     i++) {
		const struct sv_link *l = &sv->run->links[i];
		Ring__CounterDelta **cd;
		char text[400];

		if (l->switch_pair || sv_link_stray(sv, l))
			continue;
		if ((l->t.a_sees_b || l->t.b_sees_a) &&
		    (l->probe_ab == 0 || l->probe_ba == 0)) {
			snprintf(text, sizeof(text),
				 "%s %s and %s %s hear each other's beacons "
				 "but the data-plane probe failed %s: check "
				 "addresses and subnets on this cable",
				 sv->run->nodes[l->t.a].name, l->t.a_if,
				 sv->run->nodes[l->t.b].name, l->t.b_if,
				 l->probe_ab == 0 && l->probe_ba == 0
					 ? "both ways"
					 : "one way");
			top->findings[top->n_findings++] =
				sv_finding(ar, "probe_failed", "warn", text,
					   sv->run->nodes[l->t.a].name,
					   sv->run->nodes[l->t.b].name);
		}
		snprintf(text, sizeof(text), "edge %s-%s",
			 sv->run->nodes[l->t.a].name,
			 sv->run->nodes[l->t.b].name);
		nfo = cev_edge_view(l->counters, &cd);
		nfo = cev_findings(text, cd, nfo, fo,
				   sizeof(fo) / sizeof(fo[0]));
		for (unsigned k = 0; k < nfo && top->n_findings < cap; k++) {
			findings_set_edge(&fo[k], sv->run->nodes[l->t.a].name,
					  sv->run->nodes[l->t.b].name);
			top->findings[top->n_findings++] =
				sv_finding_of(ar, &fo[k], NULL);
		}
		if (l->error[0] && top->n_findings < cap) {
			snprintf(text, sizeof(text), "edge %s-%s: %s",
				 sv->run->nodes[l->t.a].name,
				 sv->run->nodes[l->t.b].name, l->error);
			top->findings[top->n_findings++] =
				sv_finding(ar, "test_failed", "warn", text,
					   sv->run->nodes[l->t.a].name,
					   sv->run->nodes[l->t.b].name);
		}
		/* RDMA's own trouble, unless it is the edge's error already. */
		if (l->rdma_error[0] && !l->error_has_rdma &&
		    top->n_findings < cap) {
			snprintf(text, sizeof(text), "edge %s-%s: RDMA: %s",
				 sv->run->nodes[l->t.a].name,
				 sv->run->nodes[l->t.b].name, l->rdma_error);
			top->findings[top->n_findings++] =
				sv_finding(ar, "rdma_failed", "warn", text,
					   sv->run->nodes[l->t.a].name,
					   sv->run->nodes[l->t.b].name);
		}
	}
	for (unsigned i = 0; i < sv->run->n_nodes && top->n_findings < cap;
	     i++) {
		struct node *n = nodes_find(sv->table, sv->run->nodes[i].name);
		char text[400];

		if (sv->run->nodes[i].beacons || sv->run->nodes[i].stray)
			continue;
		snprintf(text, sizeof(text),
			 "%s sends no beacons (%s): its cables were found "
			 "from shared point-to-point subnets and probes",
			 sv->run->nodes[i].name,
			 n && n->neighbours && *n->neighbours->beacons_error
				 ? n->neighbours->beacons_error
				 : "no neighbour table");
		top->findings[top->n_findings++] =
			sv_finding(ar, "beacons_off", "info", text,
				   sv->run->nodes[i].name, NULL);
	}
	/* A stray's forged or conflicting claims are still worth saying. */
	for (unsigned i = 0; i < sv->run->n_nodes && top->n_findings < cap; i++)
		sv_findings_claims(sv, ar, top, i, cap);
	rc = 0;
out:
	free(fe);
	free(hw);
	free(hwf);
	return rc;
}

/* The nodes set apart (res.strays), each with the nodes its cables
 * reach, and why. */
static int sv_strays(struct survey *sv, struct msg_arena *ar,
		     const struct topo_result *res, Ring__Topology *top)
{
	if (!res->n_strays)
		return 0;
	top->strays = msg_arena_alloc(ar, res->n_strays * sizeof(*top->strays));
	if (!top->strays)
		return -1;
	for (unsigned i = 0; i < res->n_strays; i++) {
		unsigned me = res->strays[i].node;
		Ring__StrayNode *s = msg_arena_alloc(ar, sizeof(*s));
		char who[300] = "";
		size_t used = 0;

		if (!s)
			return -1;
		ring__stray_node__init(s);
		s->node = sv->run->nodes[me].name;
		s->reason =
			(char *)topo_stray_reason_name(res->strays[i].reason);
		s->neighbours = msg_arena_alloc(ar, (sv->run->n_links + 1) *
							    sizeof(char *));
		if (!s->neighbours)
			return -1;
		for (unsigned k = 0; k < sv->run->n_links; k++) {
			const struct sv_link *l = &sv->run->links[k];
			unsigned o = l->t.a == me ? l->t.b : l->t.a;
			int seen = 0;

			if (!sv_adjacent(l) || l->cross ||
			    (l->t.a != me && l->t.b != me))
				continue;
			for (size_t j = 0; j < s->n_neighbours; j++)
				seen |= !strcmp(s->neighbours[j],
						sv->run->nodes[o].name);
			if (seen)
				continue;
			s->neighbours[s->n_neighbours++] =
				sv->run->nodes[o].name;
			if (used < sizeof(who))
				used += (size_t)snprintf(
					who + used, sizeof(who) - used, "%s%s",
					used ? ", " : "",
					sv->run->nodes[o].name);
		}
		s->text = s->n_neighbours
				  ? msg_arena_printf(
					    ar,
					    "%s is not cabled into the ring: "
					    "its cables reach only %s, "
					    "outside it; set apart, the ring "
					    "is classified without it",
					    s->node, who)
				  : msg_arena_printf(
					    ar,
					    "%s is not cabled into the ring: "
					    "no cable both ends of which were "
					    "heard; set apart, the ring is "
					    "classified without it",
					    s->node);
		top->strays[top->n_strays++] = s;
	}
	return 0;
}

/* An end of l went away while it ran: its agent is not up now, or it
 * reconnected since the run started. node_down says so already, and the
 * edge is re-checked when the node is back: not a failed survey. */
static int sv_link_lost_node(const struct survey *sv, const struct sv_link *l)
{
	const char *ends[2] = {sv->run->nodes[l->t.a].name,
			       sv->run->nodes[l->t.b].name};
	/* A re-check's links carry their run's start; a survey's is its. */
	uint64_t started = sv->run->recheck && l->light_started_ms
				   ? l->light_started_ms
				   : sv->started_ms;

	for (int k = 0; k < 2; k++) {
		const struct node *n = nodes_find(sv->table, ends[k]);

		if (!n || n->state != NODE_UP ||
		    n->connected_since_ms > started)
			return 1;
	}
	return 0;
}

/* Every edge it tried to measure failed: the survey measured nothing.
 * Unless each failure is a node that went away meanwhile. */
static void sv_report_failure(struct survey *sv)
{
	unsigned failed = 0, lost = 0;
	const char *first = NULL;

	if (sv->run->failure[0] || !sv->run->n_meas)
		return;
	for (unsigned i = 0; i < sv->run->n_meas; i++) {
		const struct sv_link *l = &sv->run->links[sv->run->meas[i]];

		if (!l->error[0] && !(l->ladder_rdma && l->rdma_error[0]))
			continue;
		failed++;
		lost += sv_link_lost_node(sv, l);
		if (!first)
			first = l->error[0] ? l->error : l->rdma_error;
	}
	if (failed == sv->run->n_meas && lost == failed) {
		log_info("%s: every measurement failed with a node gone "
			 "meanwhile (the first: %s); not a failed survey: "
			 "node_down says so, and its edges are re-checked "
			 "when it is back",
			 sv->run->recheck ? "re-check" : "survey", first);
		return;
	}
	if (failed == sv->run->n_meas)
		snprintf(sv->run->failure, sizeof(sv->run->failure),
			 "every edge's measurement failed (%u); the first: %s",
			 failed, first ? first : "?");
}

static void sv_store(struct survey *sv, const Ring__Topology *top)
{
	Ring__Topology *copy = frame_copy(&top->base);

	if (!copy) {
		log_warnx("survey: out of memory storing the result");
		return;
	}
	if (sv->topology)
		ring__topology__free_unpacked(sv->topology, NULL);
	sv->topology = copy;
	sv_recheck_published(sv, !sv->run->recheck);
	if (sv->publish)
		sv->publish(sv->topology, sv->publish_arg);
}
/* Is finding f about a figure of edge e (its subject edge a-b, or one of
 * its function pairs a-b:IF)? A failed probe names the edge's ends, not
 * a figure: it stays. A finding stored before the field has no edge. */
static int sv_finding_about(const Ring__Finding *f, const Ring__Edge *e)
{
	char head[160];
	size_t n = (size_t)snprintf(head, sizeof(head), "%s-%s", e->a, e->b);

	return n < sizeof(head) && f->edge && strcmp(f->code, "probe_failed") &&
	       !strncmp(f->edge, head, n) &&
	       (f->edge[n] == '\0' || f->edge[n] == ':');
}

void sv_report_recheck(struct survey *sv)
{
	const Ring__Topology *old = sv->topology;
	Ring__Topology top;
	struct msg_arena ar = {0};
	uint64_t now = clock_now_ms();
	char list[512] = "";
	size_t used = 0;
	unsigned full = 0;

	if (!old) {
		snprintf(sv->run->failure, sizeof(sv->run->failure),
			 "no published topology to re-check");
		return;
	}
	top = *old;
	top.edges =
		msg_arena_alloc(&ar, (old->n_edges + 1) * sizeof(*top.edges));
	top.findings = msg_arena_alloc(&ar, (old->n_findings + 1) *
						    sizeof(*top.findings));
	if (!top.edges || !top.findings) {
		snprintf(sv->run->failure, sizeof(sv->run->failure),
			 "out of memory merging the re-checked edges");
		goto out;
	}
	top.n_findings = 0;
	for (size_t i = 0; i < old->n_edges; i++) {
		const Ring__Edge *o = old->edges[i];
		const struct sv_link *l = NULL;
		Ring__Edge *e;
		int w;

		top.edges[i] = (Ring__Edge *)o;
		for (unsigned k = 0; k < sv->run->n_links && !l; k++) {
			const struct sv_link *x = &sv->run->links[k];

			if (!strcmp(sv->run->nodes[x->t.a].name, o->a) &&
			    !strcmp(sv->run->nodes[x->t.b].name, o->b) &&
			    !strcmp(x->t.a_if, o->a_interface) &&
			    !strcmp(x->t.b_if, o->b_interface))
				l = x;
		}
		if (!l)
			continue;
		if (l->light) {
			sv_light_note(sv, l);
			continue;
		}
		full++;
		e = msg_arena_alloc(&ar, sizeof(*e));
		if (!e)
			continue;
		if (l->measured_ms && !l->busy[0]) {
			Ring__Edge *ne = sv_edge_msg(sv, &ar, l);

			if (!ne)
				continue;
			*e = *ne;
		} else {
			/* Not measured (probes failed, busy, an end lost):
			 * the last figures stay, with their time. */
			*e = *o;
			e->verified = l->t.verified;
			e->busy = msg_arena_printf(&ar, "%s", l->busy);
			e->error = msg_arena_printf(
				&ar, "%s",
				l->error[0]	 ? l->error
				: !l->t.verified ? "re-check: the probes did "
						   "not get through both ways"
						 : "");
		}
		e->rechecked_ms = now;
		e->recheck_reason = msg_arena_printf(&ar, "%s", l->why);
		top.edges[i] = e;
		w = snprintf(list + (used < sizeof(list) ? used : sizeof(list)),
			     used < sizeof(list) ? sizeof(list) - used : 0,
			     "%s%s-%s %s", used ? ", " : "", e->a, e->b,
			     e->busy[0]		? "busy, not measured"
			     : e->error[0]	? e->error
			     : e->n_gbps_a_to_b ? "measured"
						: "probed");
		used += w > 0 ? (size_t)w : 0;
	}
	/* What the survey said of an edge measured again no longer holds. */
	for (size_t i = 0; i < old->n_findings; i++) {
		int stale = 0;

		for (size_t k = 0; k < old->n_edges && !stale; k++)
			stale = top.edges[k] != old->edges[k] &&
				top.edges[k]->measured_ms !=
					old->edges[k]->measured_ms &&
				sv_finding_about(old->findings[i],
						 old->edges[k]);
		if (!stale)
			top.findings[top.n_findings++] = old->findings[i];
	}
	if (!full)
		goto out; /* light checks only: nothing to publish */
	sv_store(sv, &top);
	log_info("re-check done in %.1f s: %s", sv_elapsed(&sv->run->t0), list);
out:
	msg_arena_free(&ar);
}

/* A site of several rings: each node's ring for the findings, made per
 * ring (sv->run->part_of); the number of rings. */
static int sv_parts(struct survey *sv, const struct topo_site *site)
{
	free(sv->run->part_of);
	sv->run->part_of = NULL;
	sv->run->part = -1;
	sv->run->n_parts = 1;
	if (site->n_rings < 2)
		return 1;
	sv->run->part_of = calloc(sv->run->n_nodes + 1, sizeof(int));
	if (!sv->run->part_of)
		return 1; /* out of memory: the site's findings as one */
	for (unsigned i = 0; i < sv->run->n_nodes; i++)
		sv->run->part_of[i] = -1;
	for (unsigned k = 0; k < site->n_rings; k++)
		for (unsigned i = 0; i < site->rings[k].n_nodes; i++)
			sv->run->part_of[site->rings[k].nodes[i]] = (int)k;
	sv->run->n_parts = (int)site->n_rings;
	return sv->run->n_parts;
}

void sv_report(struct survey *sv)
{
	Ring__Topology top = RING__TOPOLOGY__INIT;
	struct topo_site site = {0};
	const struct topo_result *res = &site.site;
	struct msg_arena ar = {0};
	int *edge_of_link = NULL;
	int ok;

	if (sv->run->recheck) {
		unsigned full = 0;

		sv_report_recheck(sv);
		for (unsigned i = 0; i < sv->run->n_links; i++)
			full += !sv->run->links[i].light;
		if (full)
			sv_report_failure(sv);
		return;
	}
	ok = sv_analyse(sv, &site) == 0;

	top.kind = (char *)(ok ? topo_class_name(res->cls) : "unknown");
	top.order = msg_arena_alloc(&ar, (res->n_order + 1) * sizeof(char *));
	top.edges = msg_arena_alloc(&ar, (sv->run->n_links + 1) *
						 sizeof(*top.edges));
	top.diagonals = msg_arena_alloc(&ar, (sv->run->n_diags + 1) *
						     sizeof(*top.diagonals));
	top.anomalies = msg_arena_alloc(&ar, (res->n_anomalies + 1) *
						     sizeof(*top.anomalies));
	if (!top.order || !top.edges || !top.diagonals || !top.anomalies)
		ok = 0;
	for (unsigned i = 0; ok && i < res->n_order; i++)
		top.order[top.n_order++] = sv->run->nodes[res->order[i]].name;
	edge_of_link =
		msg_arena_alloc(&ar, (sv->run->n_links + 1) * sizeof(int));
	if (!edge_of_link)
		ok = 0;
	for (unsigned i = 0; ok && i < sv->run->n_links; i++) {
		/* Cross pairs of twins are no edge (a finding says so); a
		 * stray's cables are listed with it. */
		Ring__Edge *e =
			sv->run->links[i].cross ||
					sv_link_stray(sv, &sv->run->links[i])
				? NULL
				: sv_edge_msg(sv, &ar, &sv->run->links[i]);

		edge_of_link[i] = e ? (int)top.n_edges : -1;
		if (e)
			top.edges[top.n_edges++] = e;
	}
	for (unsigned i = 0; ok && i < sv->run->n_diags; i++) {
		const struct sv_diag *d = &sv->run->diags[i];
		Ring__DiagonalCheck *c = msg_arena_alloc(&ar, sizeof(*c));

		if (!c)
			break;
		ring__diagonal_check__init(c);
		c->a = sv->run->nodes[d->a].name;
		c->b = sv->run->nodes[d->b].name;
		c->b_address = (char *)d->b_addr;
		c->route_kind = (char *)d->route_kind;
		c->route_interface = (char *)d->route_if;
		c->path = d->path;
		/* The outcome and the why as fields; verdict says both. */
		c->outcome =
			d->path ? msg_arena_printf(
					  &ar, "UNEXPECTED: %s reaches %s's %s",
					  c->a, c->b, d->b_addr)
				: "no data-plane path, as expected";
		c->reason = d->path ? msg_arena_printf(
					      &ar,
					      "route %s%s%s: a data path "
					      "where the ring has none",
					      d->route_kind,
					      d->route_if[0] ? " via " : "",
					      d->route_if)
				    : msg_arena_printf(
					      &ar, "route %s%s%s, %s",
					      d->route_kind,
					      d->route_if[0] ? " via " : "",
					      d->route_if,
					      !strcmp(d->route_kind, "local")
						      ? "the address is also "
							"this node's own"
					      : d->not_probed
						      ? "not a data port: not "
							"probed"
						      : "probe unanswered");
		c->verdict =
			d->path ? msg_arena_printf(
					  &ar,
					  "UNEXPECTED: %s reaches %s's %s "
					  "(route %s%s%s): a data path "
					  "where the ring has none",
					  c->a, c->b, d->b_addr, d->route_kind,
					  d->route_if[0] ? " via " : "",
					  d->route_if)
				: msg_arena_printf(&ar, "%s (%s)", c->outcome,
						   c->reason);
		top.diagonals[top.n_diagonals++] = c;
	}
	for (unsigned i = 0; ok && i < res->n_anomalies; i++)
		top.anomalies[top.n_anomalies++] = sv_finding(
			&ar, topo_anomaly_name(res->anomalies[i].kind), "warn",
			res->anomalies[i].text,
			sv->run->nodes[res->anomalies[i].a].name,
			res->anomalies[i].b == res->anomalies[i].a
				? NULL
				: sv->run->nodes[res->anomalies[i].b].name);
	if (ok && sv_strays(sv, &ar, res, &top) < 0)
		ok = 0;
	if (ok && res->cls == TOPO_LINE)
		top.line_gap = msg_arena_printf(
			&ar, "%s-%s", sv->run->nodes[res->gap_a].name,
			sv->run->nodes[res->gap_b].name);
	top.surveyed_ms = clock_now_ms();
	if (ok)
		ok = sv_ranks(sv, &ar, res, &top) == 0 &&
		     sv_rings_report(sv, &ar, &site, &top) == 0;
	/* Several rings: each one's ranks over the site's edges. */
	for (unsigned k = 0; ok && site.n_rings > 1 && k < top.n_rings; k++) {
		Ring__Topology one = RING__TOPOLOGY__INIT;

		one.edges = top.edges;
		one.n_edges = top.n_edges;
		ok = sv_ranks(sv, &ar, &site.rings[k].res, &one) == 0;
		top.rings[k]->ranks = one.ranks;
		top.rings[k]->n_ranks = one.n_ranks;
	}
	if (ok)
		ok = sv_findings(sv, &ar, &top, sv_parts(sv, &site)) == 0 &&
		     sv_load_report(sv, &top, edge_of_link) == 0;
	top.survey_state = "done";
	top.survey_wall_s = sv_elapsed(&sv->run->t0);
	top.tests_sum_s = sv->run->tests_sum_s;
	top.rounds = sv->run->n_rounds > 0 ? (uint32_t)sv->run->n_rounds : 0;
	if (ok && sv->run->scope) {
		/* Some rings only: the others as published. */
		Ring__Topology merged;

		ok = sv_merge_scope(&ar, sv->run, sv->topology, &top,
				    &merged) == 0;
		if (ok)
			sv_store(sv, &merged);
	} else if (ok) {
		sv_store(sv, &top);
	}
	if (!ok)
		snprintf(sv->run->failure, sizeof(sv->run->failure),
			 "no result: out of memory assembling the topology");
	sv_report_failure(sv);
	log_info("survey done (%s): %s of %u nodes, %u edges measured in %d "
		 "rounds, %.1f s (tests alone: %.1f s)",
		 sv->run->reason, top.kind, sv->run->n_nodes, sv->run->n_meas,
		 sv->run->n_rounds, top.survey_wall_s, sv->run->tests_sum_s);
	for (size_t i = 0; i < top.n_strays; i++)
		log_info("survey: %s set apart (%s): %s", top.strays[i]->node,
			 top.strays[i]->reason, top.strays[i]->text);
	topo_site_free(&site);
	msg_arena_free(&ar);
}
