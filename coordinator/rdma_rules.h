/* Pure rules of RDMA tests, shared by the survey, the control socket and
 * the test driver (rdmatest): which port of a node can run RDMA, whether
 * two endpoints' GIDs can reach each other. No I/O, no state. */
#ifndef RING_RDMA_RULES_H
#define RING_RDMA_RULES_H

#include <stddef.h>

#include "nodes.h"
#include "ring.pb-c.h"

/* The Hello capability of an agent that runs RDMA tests (the agent says
 * "rdma_test", like "tcp_test"; "rdma-test", the name first planned, is
 * accepted too). */
#define RDMA_RULES_CAP "rdma_test"

struct node;

/* The RDMA device with an ACTIVE port whose netdev is ifname. 0 with its
 * name in dev, or -1 with the reason in why ("no RDMA device", "mlx5_0
 * port 1 is DOWN") and errno ENETDOWN where a port of the netdev is not
 * active, ENODEV where no device has one (or there is no inventory). */
int rdma_rules_port(const Ring__Inventory *inv, const char *ifname, char *dev,
		    size_t dev_len, char *why, size_t why_len);
/* The first data (non-management) interface that has an active RDMA port.
 * 0, or -1 when there is none. */
int rdma_rules_first_port(const Ring__Inventory *inv, char *ifname,
			  size_t if_len, char *dev, size_t dev_len);
/* 1 if the node is up and its agent announced RDMA_RULES_CAP. */
int rdma_rules_capable(const struct node *n);

/* Do the two endpoints' GIDs agree? Types must match; on ring neighbours
 * (adjacent 1) IPv4-mapped GIDs must share a subnet (a cable's two ports
 * do, so a difference means a wrong GID pick). A pair that is not
 * adjacent runs anyway: its failure is the diagnosis. 0, or -1 with the
 * operator's message in why. */
int rdma_rules_gid_check(const char *a, const Ring__RdmaEndpoint *ea,
			 const char *b, const Ring__RdmaEndpoint *eb,
			 int adjacent, char *why, size_t why_len);

#endif
