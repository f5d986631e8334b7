/* The reference cluster as the coordinator publishes it, for the unit
 * tests of what reads a topology (ranks -f env, check nccl-env): four
 * GB10 nodes in the physical order 1-2-4-3, each cable carried by two
 * function pairs (twins), so four functions per node face a neighbour;
 * GID index 3 everywhere; the measured TCP ladder 1 / 4 / 8 streams at
 * 40.0 / 102.3 / 110.9 Gbps on every edge. With testgb10_inventories,
 * each node's inventory as far as the GID tables go: every function's
 * port 1 has mlx5's usual four entries (0 RoCE v1 and 1 RoCE v2 on the
 * link-local IPv6 address, 2 RoCE v1 and 3 RoCE v2 on the IPv4-mapped
 * one). Header-only, so each test program stays one source file. */
#ifndef RING_TESTGB10_H
#define RING_TESTGB10_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ring.pb-c.h"

#define TESTGB10_N 4
#define TESTGB10_GIDS 8 /* room for a test to add entries */

struct testgb10 {
	Ring__Topology t;
	Ring__Rank r[TESTGB10_N];
	Ring__Rank *rp[TESTGB10_N];
	char *hcas[TESTGB10_N][4];
	char *groups[TESTGB10_N][2];
	Ring__Edge e[TESTGB10_N];
	Ring__Edge *ep[TESTGB10_N];
	uint32_t ladder[3];
	double gbps[3];
	/* testgb10_inventories: inv[i] for rank i; the GID table of
	 * function k (Rank.hcas order) of rank i is gid[i][k][0..n_gids). */
	Ring__Inventory inv[TESTGB10_N];
	const Ring__Inventory *invp[TESTGB10_N];
	Ring__RdmaDevice dev[TESTGB10_N][4];
	Ring__RdmaDevice *devp[TESTGB10_N][4];
	Ring__RdmaPort port[TESTGB10_N][4];
	Ring__RdmaPort *portp[TESTGB10_N][4];
	Ring__Gid gid[TESTGB10_N][4][TESTGB10_GIDS];
	Ring__Gid *gidp[TESTGB10_N][4][TESTGB10_GIDS];
	char gid_text[TESTGB10_N][4][TESTGB10_GIDS][48];
	char dev_name[TESTGB10_N][4][32];
};

/* Rank order = ring order. */
static const char *const testgb10_names[TESTGB10_N] = {"n1", "n2", "n4", "n3"};

static inline void testgb10_init(struct testgb10 *tp)
{
	static const char *const addrs[TESTGB10_N] = {
		"192.168.1.1", "192.168.1.2", "192.168.1.4", "192.168.1.3"};
	static char *const twin_hcas[4] = {"rocep1s0f1:1", "roceP2p1s0f1:1",
					   "rocep1s0f0:1", "roceP2p1s0f0:1"};
	static char *const twin_groups[2] = {"rocep1s0f1,rocep1s0f0",
					     "roceP2p1s0f1,roceP2p1s0f0"};
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
		/* Each PCI device's two functions face the two neighbours:
		 * NCCL fuses them by itself. */
		memcpy(tp->groups[i], twin_groups, sizeof(twin_groups));
		r->nic_groups = tp->groups[i];
		r->n_nic_groups = 2;
		r->nic_groups_automatic = 1;
		r->nccl_gid_index = -1;
		r->nccl_gid_note = "";
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

/* The inventories of testgb10_init's nodes (call it after that): one
 * RDMA device per function in Rank.hcas, its port 1 with four GIDs.
 * Function k of rank i has the IPv4 address 10.89.(i+1).(k+1). */
static inline void testgb10_inventories(struct testgb10 *tp)
{
	static const char *const types[4] = {"RoCE v1", "RoCE v2", "RoCE v1",
					     "RoCE v2"};

	for (int i = 0; i < TESTGB10_N; i++) {
		Ring__Inventory *inv = &tp->inv[i];

		ring__inventory__init(inv);
		inv->node = (char *)testgb10_names[i];
		for (int k = 0; k < 4; k++) {
			Ring__RdmaDevice *d = &tp->dev[i][k];
			Ring__RdmaPort *p = &tp->port[i][k];
			const char *h = tp->r[i].hcas[k];

			ring__rdma_device__init(d);
			/* "rocep1s0f1:1" -> "rocep1s0f1" */
			snprintf(tp->dev_name[i][k], sizeof(tp->dev_name[i][k]),
				 "%.*s", (int)strcspn(h, ":"), h);
			d->name = tp->dev_name[i][k];
			ring__rdma_port__init(p);
			p->port = 1;
			p->state = "ACTIVE";
			p->link_layer = "Ethernet";
			for (int g = 0; g < 4; g++) {
				Ring__Gid *e = &tp->gid[i][k][g];
				char *txt = tp->gid_text[i][k][g];

				ring__gid__init(e);
				e->index = (uint32_t)g;
				e->type = (char *)types[g];
				if (g < 2)
					snprintf(txt, 48, "fe80::%x:%x", i + 1,
						 k + 1);
				else
					snprintf(txt, 48, "::ffff:10.89.%d.%d",
						 i + 1, k + 1);
				e->gid = txt;
				e->netdev = "";
				tp->gidp[i][k][g] = e;
			}
			p->gids = tp->gidp[i][k];
			p->n_gids = 4;
			tp->portp[i][k] = p;
			d->ports = &tp->portp[i][k];
			d->n_ports = 1;
			tp->devp[i][k] = d;
		}
		inv->rdma_devices = tp->devp[i];
		inv->n_rdma_devices = 4;
		tp->invp[i] = inv;
	}
}

#endif
