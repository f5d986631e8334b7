/* `ringctl plan --weights PATH`: shard or not. Each node's agent reads
 * PATH from its local disk (a read test, only under its read_path); the
 * disk's GB/s is set against the best one-way bandwidth into the node
 * over its ring edges from the last survey. The reference cluster (docs/REFERENCE.md): a local
 * NVMe (9.6-9.9 GB/s) feeds weights faster than a neighbour (~6.9 GB/s
 * one way), so sharding buys memory, not load speed. */
#ifndef RING_CTL_PLAN_WEIGHTS_H
#define RING_CTL_PLAN_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "ring.pb-c.h"
#include "writer.h"

/* The conclusion, word for word, when the disk wins on every node. */
#define PLAN_WEIGHTS_DISK_WINS                                                 \
	"a local disk feeds weights faster than a neighbour: sharding buys "   \
	"memory, not load speed"

/* The weights options of o (set by plan_cmd_parse): 0, or -1 with err. */
int plan_weights_parse(struct plan_opts *o, char *err, size_t len);

/* The best measured one-way bandwidth into node over its edges in t
 * (TCP ladder steps and RDMA WRITE toward node), in Gbps; *edge says
 * which (its measured_ms when). -1 when no edge of node has a figure. */
double plan_weights_edge_in(const Ring__Topology *t, const char *node,
			    const Ring__Edge **edge);

/* The comparison into w; the exit status: 0 answered, 2 could not (a
 * node without a disk figure or without an edge figure). */
int plan_weights_render(struct writer *w, const Ring__Topology *t,
			const Ring__ReadTestResult *all);

/* Ask the coordinator for the topology and the read tests; print. */
int plan_weights_run(const char *sock, int timeout_ms, enum writer_format fmt,
		     const struct plan_opts *o);

#endif
