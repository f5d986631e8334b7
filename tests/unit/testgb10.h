/* The field notes' cluster as the coordinator publishes it, for the unit
 * tests of what reads a topology (ranks -f env, check nccl-env): four
 * GB10 nodes in the physical order 1-2-4-3, each cable carried by two
 * function pairs (twins), so four functions per node face a neighbour;
 * GID index 3 everywhere; the measured TCP ladder 1 / 4 / 8 streams at
 * 40.0 / 102.3 / 110.9 Gbps on every edge. Header-only, so each test
 * program stays one source file. */
#ifndef RING_TESTGB10_H
#define RING_TESTGB10_H

#include <stdint.h>
#include <string.h>

#include "ring.pb-c.h"

#define TESTGB10_N 4

struct testgb10 {
	Ring__Topology t;
	Ring__Rank r[TESTGB10_N];
	Ring__Rank *rp[TESTGB10_N];
	char *hcas[TESTGB10_N][4];
	Ring__Edge e[TESTGB10_N];
	Ring__Edge *ep[TESTGB10_N];
	uint32_t ladder[3];
	double gbps[3];
};

/* Rank order = ring order. */
static const char *const testgb10_names[TESTGB10_N] = {"n1", "n2", "n4", "n3"};

static inline void testgb10_init(struct testgb10 *tp)
{
	static const char *const addrs[TESTGB10_N] = {
		"192.168.1.1", "192.168.1.2", "192.168.1.4", "192.168.1.3"};
	static char *const twin_hcas[4] = {"rocep1s0f1:1", "roceP2p1s0f1:1",
					   "rocep1s0f0:1", "roceP2p1s0f0:1"};
	const int n = TESTGB10_N;

	memset(tp, 0, sizeof(*tp));
	ring__topology__init(&tp->t);
	tp->t.kind = "ring";
	tp->t.surveyed_ms = 1796000000000ULL;
	tp->ladder[0] = 1;
	tp->ladder[1] = 4;
	tp->ladder[2] = 8;
	tp->gbps[0] = 40.0;
	tp->gbps[1] = 102.3;
	tp->gbps[2] = 110.9;
	for (int i = 0; i < n; i++) {
		Ring__Rank *r = &tp->r[i];
		Ring__Edge *e = &tp->e[i];

		ring__rank__init(r);
		r->rank = (uint32_t)i;
		r->node = (char *)testgb10_names[i];
		r->mgmt_address = (char *)addrs[i];
		r->mgmt_interface = "enP7s7";
		r->next_node = (char *)testgb10_names[(i + 1) % n];
		r->prev_node = (char *)testgb10_names[(i + n - 1) % n];
		r->next_interface = "enp1s0f1np1";
		r->prev_interface = "enp1s0f0np0";
		r->next_rdma = "rocep1s0f1";
		r->prev_rdma = "rocep1s0f0";
		r->next_gid_index = 3;
		r->prev_gid_index = 3;
		memcpy(tp->hcas[i], twin_hcas, sizeof(twin_hcas));
		r->hcas = tp->hcas[i];
		r->n_hcas = 4;
		r->gid_index = 3;
		r->gid_note = "";
		r->subnet_prefix_len = 30;
		r->subnet_note = "";
		tp->rp[i] = r;

		/* The edge from rank i to rank i+1. */
		ring__edge__init(e);
		e->a = (char *)testgb10_names[i];
		e->b = (char *)testgb10_names[(i + 1) % n];
		e->a_interface = "enp1s0f1np1";
		e->b_interface = "enp1s0f0np0";
		e->method_kind = RING__EDGE_METHOD__EDGE_METHOD_TCP;
		e->method = "tcp";
		e->ladder = tp->ladder;
		e->n_ladder = 3;
		e->gbps_a_to_b = tp->gbps;
		e->n_gbps_a_to_b = 3;
		e->gbps_b_to_a = tp->gbps;
		e->n_gbps_b_to_a = 3;
		e->measured_ms = 1796000000000ULL + (uint64_t)i;
		tp->ep[i] = e;
	}
	tp->t.n_ranks = n;
	tp->t.ranks = tp->rp;
	tp->t.n_edges = n;
	tp->t.edges = tp->ep;
}

#endif
