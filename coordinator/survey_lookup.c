/* Survey lookups for control: test endpoints from the last survey. */
#include <stdio.h>
#include <string.h>

#include "survey_int.h"
#include "rdma_rules.h"

int survey_test_endpoints(struct survey *sv, const char *a, const char *b,
			  char *a_if, size_t a_if_len, char *b_addr,
			  size_t b_addr_len, int *adjacent, char *why,
			  size_t why_len)
{
	const Ring__Topology *top = sv->topology;
	struct node *nb = nodes_find(sv->table, b);
	const Ring__Inventory *inv = nb ? nb->inventory : NULL;

	for (size_t i = 0; top && i < top->n_edges; i++) {
		const Ring__Edge *e = top->edges[i];

		if (!strcmp(e->a, a) && !strcmp(e->b, b) && *e->b_address) {
			*adjacent = 1;
			snprintf(a_if, a_if_len, "%s", e->a_interface);
			snprintf(b_addr, b_addr_len, "%s", e->b_address);
			return 0;
		}
		if (!strcmp(e->b, a) && !strcmp(e->a, b) && *e->a_address) {
			*adjacent = 1;
			snprintf(a_if, a_if_len, "%s", e->b_interface);
			snprintf(b_addr, b_addr_len, "%s", e->a_address);
			return 0;
		}
	}
	/* Not neighbours (or not surveyed yet): let a's kernel route to b's
	 * first data address decide; on a ring that is the diagonal case. */
	*adjacent = top ? 0 : -1;
	for (size_t i = 0; inv && i < inv->n_interfaces; i++) {
		const Ring__NetInterface *f = inv->interfaces[i];

		if (f->management || !f->n_ipv4)
			continue;
		snprintf(a_if, a_if_len, "%s", "");
		snprintf(b_addr, b_addr_len, "%s", f->ipv4[0]->address);
		return 0;
	}
	snprintf(why, why_len, "%s has no data address to test against", b);
	return -1;
}

/* One side of an RDMA test: its device on ifname, or why not. */
static int sv_rdma_side(struct node *n, const char *ifname, const char *peer,
			int adjacent, char *dev, size_t dev_len, char *why,
			size_t why_len)
{
	char detail[160];

	if (rdma_rules_port(n->inventory, ifname, dev, dev_len, detail,
			    sizeof(detail)) == 0)
		return 0;
	if (adjacent == 1)
		snprintf(why, why_len,
			 "%s: no active RDMA port on %s, the interface facing "
			 "%s (%s)",
			 n->name, ifname, peer, detail);
	else
		snprintf(why, why_len,
			 "%s: no data interface has an active "
			 "RDMA port",
			 n->name);
	return -1;
}

int survey_rdma_endpoints(struct survey *sv, const char *a, const char *b,
			  struct survey_rdma_ends *e, char *why, size_t why_len)
{
	const Ring__Topology *top = sv->topology;
	struct node *na = nodes_find(sv->table, a);
	struct node *nb = nodes_find(sv->table, b);

	memset(e, 0, sizeof(*e));
	if (!na || !nb) {
		snprintf(why, why_len, "unknown node");
		return -1;
	}
	e->adjacent = top ? 0 : -1;
	for (size_t i = 0; top && i < top->n_edges; i++) {
		const Ring__Edge *ed = top->edges[i];
		int fwd = !strcmp(ed->a, a) && !strcmp(ed->b, b);

		if (!fwd && !(!strcmp(ed->b, a) && !strcmp(ed->a, b)))
			continue;
		if (sv_edge_through_switch(ed))
			break; /* a switch pair, not a cable */
		e->adjacent = 1;
		snprintf(e->a_if, sizeof(e->a_if), "%s",
			 fwd ? ed->a_interface : ed->b_interface);
		snprintf(e->b_if, sizeof(e->b_if), "%s",
			 fwd ? ed->b_interface : ed->a_interface);
		break;
	}
	if (e->adjacent == 1) {
		if (sv_rdma_side(na, e->a_if, b, 1, e->a_dev, sizeof(e->a_dev),
				 why, why_len) < 0 ||
		    sv_rdma_side(nb, e->b_if, a, 1, e->b_dev, sizeof(e->b_dev),
				 why, why_len) < 0)
			return -1;
	} else {
		/* Not neighbours: the diagonal case. The test runs and fails
		 * on its own, which is the answer the operator wants. */
		if (rdma_rules_first_port(na->inventory, e->a_if,
					  sizeof(e->a_if), e->a_dev,
					  sizeof(e->a_dev)) < 0 ||
		    rdma_rules_first_port(nb->inventory, e->b_if,
					  sizeof(e->b_if), e->b_dev,
					  sizeof(e->b_dev)) < 0) {
			snprintf(why, why_len,
				 "%s: no data interface has an active RDMA "
				 "port",
				 e->a_if[0] ? b : a);
			return -1;
		}
	}
	for (int k = 0; k < 2; k++) {
		struct node *n = k ? nb : na;

		if (!rdma_rules_capable(n)) {
			snprintf(why, why_len,
				 "%s: its agent (version %s) does not offer "
				 "RDMA tests (no '%s' capability)",
				 n->name, n->agent_version, RDMA_RULES_CAP);
			return -1;
		}
	}
	return 0;
}
