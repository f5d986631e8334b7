/* ringctl's rendering of the coordinator's replies through the writer,
 * and the text formats of ranks (hostfile, rankfile, torchrun, env). */
#ifndef RING_RENDER_H
#define RING_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ring.pb-c.h"
#include "writer.h"

/* verbose: plain text shows every figure (the machine formats always
 * do); otherwise a view that fits about 100 columns. */
void render_status(struct writer *w, const Ring__StatusReply *r, int verbose);
void render_inventory(struct writer *w, const Ring__InventoryReply *r);
/* How much of a node's status to show. */
enum render_node_view {
	RENDER_NODE_BRIEF = 1, /* the default plain table: short columns */
	RENDER_NODE_FULL = 2,  /* inventory: every timestamp and figure */
	/* the inventory's list of RDMA devices follows under the same key,
	 * so the count is left to it */
	RENDER_NODE_NO_RDMA_COUNT = 4,
};

/* One node's status row (view: RENDER_NODE_* or'd). */
void render_node_status(struct writer *w, const Ring__NodeStatus *n, int view,
			unsigned long long now_ms);
/* 0 when healthy, 1 otherwise: the coordinator's health when it sends
 * one, else every expected node up. */
int render_status_health(const Ring__StatusReply *r);
/* "healthy", "degraded", "critical": as render_status_health judges. */
const char *render_health(const Ring__StatusReply *r);
/* Alerts as a table (brief: one wrapped line each). */
/* "critical", "warning" or "info". */
const char *render_severity(Ring__Severity s);
/* "firing", "clearing" (firing, condition gone, hold-down running) or
 * "resolved". */
const char *render_alert_state(const Ring__Alert *a);
void render_alerts(struct writer *w, const char *key, Ring__Alert *const *v,
		   size_t n, int brief);
/* "2026-12-02T11:50:55Z" for Unix ms; "" for 0. */
void render_format_time(unsigned long long ms, char *buf, size_t len);
/* key: the time, or "none" (writer_none) for 0. */
void render_time(struct writer *w, const char *key, uint64_t ms,
		 const char *none);

/* "n1 =0.95= n2 =0.95= n4 =0.48= n3 =0.95= (n1)": each edge with its
 * measured top-of-ladder Gbps, worse direction. */
void render_ring_picture(const Ring__Topology *t, char *buf, size_t len);
/* The nodes up but in no ring (the survey's strays); brief: a line
 * each. */
void render_strays(struct writer *w, const Ring__Topology *t, int brief);
/* Edges in ring order; verbose as for render_status. */
void render_topology(struct writer *w, const Ring__Topology *t,
		     unsigned long long now_ms, int verbose);

#endif
