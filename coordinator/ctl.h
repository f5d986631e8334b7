/* ringctl's library part: one request/reply over the control socket, and
 * the rendering of replies through the writer. */
#ifndef RING_CTL_H
#define RING_CTL_H

#include <stddef.h>
#include <stdio.h>

#include "frame.h"
#include "writer.h"

#define CTL_DEFAULT_SOCKET "/run/ringd/coordinator.sock"

/* Connect to sock, send req (its request_id is set here), wait up to
 * timeout_ms for the reply with the same id. 0 and *rep, or -1 with a
 * one-line reason in err. An Error reply is returned as a reply. */
int ctl_request(const char *sock, int timeout_ms, Ring__Envelope *req,
		Ring__Envelope **rep, char *err, size_t errlen);

void ctl_render_status(struct writer *w, const Ring__StatusReply *r);
void ctl_render_inventory(struct writer *w, const Ring__InventoryReply *r);
/* 0 when every expected node is up, 1 otherwise. */
int ctl_status_health(const Ring__StatusReply *r);
/* "2026-12-02T11:50:55Z" for Unix ms; "" for 0. */
void ctl_format_time(unsigned long long ms, char *buf, size_t len);

/* "n1 =0.95= n2 =0.95= n4 =0.48= n3 =0.95= (n1)": each edge with its
 * measured top-of-ladder Gbps, worse direction. */
void ctl_ring_picture(const Ring__Topology *t, char *buf, size_t len);
void ctl_render_topology(struct writer *w, const Ring__Topology *t,
			 unsigned long long now_ms);
void ctl_render_report(struct writer *w, const Ring__TestReport *r);

/* `ringctl test KIND A B [options]`, KIND bw, lat, rdma-bw or rdma-lat. */
struct ctl_test_args {
	const char *a, *b;
	Ring__TestParams params; /* sizes and rdma point into this struct */
	Ring__RdmaParams rdma;
	uint32_t sizes[16];
};
/* argv[0] is KIND. Defaults filled in, then the options. 0, or -1 with
 * the usage complaint in err. */
int ctl_parse_test(int argc, char **argv, struct ctl_test_args *t, char *err,
		   size_t errlen);
void ctl_render_ranks(struct writer *w, const Ring__Topology *t);
/* Punctuation allowed, besides ASCII letters and digits, in every value
 * the text formats print (IPv6 with a zone, "mlx5_0,mlx5_1"). */
#define CTL_SAFE_PUNCT "._:,/+@%-"
/* 0 when every value `format` (hostfile, rankfile, torchrun, env) would
 * print is a non-empty word of the safe set (optional fields may be
 * empty), or for another format (the writer escapes); -1 with
 * "node 'N' (rank R): FIELD '...' ..." in err otherwise.
 * Node data come from agents: a newline in an interface name would
 * otherwise become a line of its own in an env file someone sources. */
int ctl_ranks_check(const Ring__Topology *t, const char *format, char *err,
		    size_t errlen);
/* hostfile, rankfile, torchrun, env. -1 (nothing printed) for another
 * format, no ranks, or a value ctl_ranks_check refuses. */
int ctl_ranks_text(FILE *out, const Ring__Topology *t, const char *format);

#endif
