/* ringctl's rendering of one test's report (TCP or RDMA, bandwidth or
 * latency) through the writer: both sides, every stream or QP, the
 * latency table with its round-trip convention. */
#include "report.h"
#include "report_counters.h"
#include "testlimits.h"

#include <stdio.h>
#include <string.h>

static void report_lat(struct writer *w, const Ring__TestResult *s,
		       const char *convention)
{
	char conv[64];

	snprintf(conv, sizeof(conv), "%s, microseconds", convention);
	writer_str(w, "latency_convention", conv);
	writer_table_start(w, "latency");
	for (size_t i = 0; i < s->n_lat; i++) {
		const Ring__LatResult *l = s->lat[i];
		char id[16];

		snprintf(id, sizeof(id), "%u", l->size);
		writer_obj_start_named(w, id);
		writer_uint(w, "size", l->size);
		writer_uint(w, "n", l->n);
		writer_double(w, "min_us", l->min_us, 1);
		writer_double(w, "p50_us", l->p50_us, 1);
		writer_double(w, "mean_us", l->mean_us, 1);
		writer_double(w, "p99_us", l->p99_us, 1);
		writer_double(w, "p999_us", l->p999_us, 1);
		writer_double(w, "max_us", l->max_us, 1);
		writer_obj_end(w);
	}
	writer_table_end(w);
}

static void report_endpoint(struct writer *w, const char *key, const char *node,
			    const Ring__TestResult *s)
{
	const Ring__RdmaEndpoint *e = s ? s->endpoint : NULL;

	writer_obj_start(w, key);
	writer_str(w, "node", node);
	if (e) {
		writer_str(w, "device", e->device);
		writer_uint(w, "port", e->port);
		writer_uint(w, "gid_index", e->gid_index);
		writer_str(w, "gid", e->gid);
		writer_str(w, "gid_type", e->gid_type);
		writer_str(w, "netdev", e->netdev);
		writer_uint(w, "mtu", e->mtu);
	}
	writer_obj_end(w);
}

/* The path MTU the agents set (computed from the report, as the agent's
 * RTR does: the lesser of both ports' active MTU, or --mtu when below
 * it), and why. */
static void report_path_mtu(struct writer *w, const Ring__TestReport *r,
			    const Ring__RdmaParams *rp)
{
	const Ring__RdmaEndpoint *ea = r->a_side ? r->a_side->endpoint : NULL;
	const Ring__RdmaEndpoint *eb = r->b_side ? r->b_side->endpoint : NULL;
	unsigned asked = rp ? rp->mtu : 0, m;
	char why[200];

	if (!ea || !eb || !ea->mtu || !eb->mtu) {
		writer_none(w, "path_mtu", "both ports' active MTU not known");
		return;
	}
	m = ea->mtu < eb->mtu ? ea->mtu : eb->mtu;
	if (asked && asked < m)
		snprintf(why, sizeof(why),
			 "--mtu %u, below both ports' active MTU (%s %u, %s "
			 "%u)",
			 asked, r->a, ea->mtu, r->b, eb->mtu);
	else
		snprintf(why, sizeof(why),
			 "the lesser of both ports' active MTU (%s %u, %s "
			 "%u)%s",
			 r->a, ea->mtu, r->b, eb->mtu,
			 asked ? "; --mtu is not below it" : "");
	writer_uint(w, "path_mtu", asked && asked < m ? asked : m);
	writer_str(w, "path_mtu_why", why);
}

/* A direction's rate; plain leaves out one that did not run (a one-way
 * test, a failed one) rather than print its 0. */
static void report_rate(struct writer *w, const char *key, double gbps, int ran)
{
	if (ran || writer_get_format(w) != WRITER_PLAIN)
		writer_double(w, key, gbps, 3);
}

static void report_rdma(struct writer *w, const Ring__TestReport *r)
{
	const Ring__TestParams *p = r->params;
	const Ring__RdmaParams *rp = p ? p->rdma : NULL;
	int bw = p && p->kind == RING__TEST_KIND__TEST_RDMA_BW;
	int read = rp && rp->op == RING__RDMA_OP__RDMA_OP_READ;
	const Ring__TestResult *a = r->a_side;
	char buf[160];

	snprintf(buf, sizeof(buf), "rdma %s %s", read ? "read" : "write",
		 bw ? "bandwidth" : "latency");
	writer_str(w, "test", buf);
	writer_str(w, "method", "rdma");
	writer_str(w, "op", read ? "read" : "write");
	writer_str(w, "a", r->a);
	writer_str(w, "b", r->b);
	writer_str(w, "result", *r->error ? "failed" : "ok");
	if (*r->error)
		writer_str(w, "error", r->error);
	/* A always posts; READ brings B's memory to A. */
	snprintf(buf, sizeof(buf), "%s (%s %s %s)", read ? "b-to-a" : "a-to-b",
		 r->a, read ? "reads from" : "writes to", r->b);
	writer_str(w, "data_direction", buf);
	report_endpoint(w, "a_endpoint", r->a, a);
	report_endpoint(w, "b_endpoint", r->b, r->b_side);
	report_path_mtu(w, r, rp);
	/* What NCCL_IB_TC / NCCL_IB_SL would set; 0 is the verbs default. */
	writer_uint(w, "traffic_class", rp ? rp->traffic_class : 0);
	writer_uint(w, "service_level", rp ? rp->service_level : 0);
	/* NCCL_IB_TIMEOUT's exponent the queue pairs used. */
	writer_uint(w, "ack_timeout",
		    rp && rp->ack_timeout
			    ? rp->ack_timeout
			    : TESTLIMITS_RDMA_ACK_TIMEOUT_DEFAULT);
	if (bw) {
		writer_uint(w, "qps", a ? a->n_streams : (rp ? rp->qps : 0));
		if (rp && rp->size)
			writer_uint(w, "size", rp->size);
		else
			writer_none(w, "size", "agent default");
		writer_double(w, "duration_s", p->duration_ms / 1000.0, 1);
		report_rate(w, "gbps_a_to_b_measured", r->gbps_a_to_b,
			    !*r->error && !read);
		report_rate(w, "gbps_b_to_a_measured", r->gbps_b_to_a,
			    !*r->error && read);
		if (a) {
			writer_double(w, "gbps_measured", a->gbps_sent, 3);
			writer_double(w, "peak_gbps_measured", a->peak_gbps, 3);
			writer_double(w, "mmsg_per_s_measured", a->msg_rate_mps,
				      3);
		}
	}
	for (int side = 0; side < 2; side++) {
		const Ring__TestResult *s = side ? r->b_side : r->a_side;

		if (!s)
			continue;
		writer_obj_start(w, side ? "b_side" : "a_side");
		writer_str(w, "role", side ? "target" : "requester");
		writer_double(w, "window_s", s->window_s, 3);
		writer_double(w, "cpu_pct", s->cpu_pct, 1);
		if (*s->error)
			writer_str(w, "error", s->error);
		if (bw && s->n_streams) {
			writer_table_start(w, "qps");
			for (size_t i = 0; i < s->n_streams; i++) {
				const Ring__StreamResult *st = s->streams[i];

				writer_obj_start(w, NULL);
				writer_uint(w, "qp", st->index);
				writer_double(w, "gbps", st->gbps, 3);
				writer_double(w, "peak_gbps", st->peak_gbps, 3);
				writer_uint(w, "messages", st->messages);
				writer_uint(w, "bytes", st->bytes);
				writer_obj_end(w);
			}
			writer_table_end(w);
		}
		if (s->n_lat)
			report_lat(w, s,
				   *s->lat_convention
					   ? s->lat_convention
					   : (read ? "full round trip"
						   : "half round trip"));
		report_counters_side(w, s);
		writer_obj_end(w);
	}
	report_counters_findings(w, r);
}

void report_render(struct writer *w, const Ring__TestReport *r)
{
	const Ring__TestParams *p = r->params;
	int bw = p && p->kind == RING__TEST_KIND__TEST_TCP_BW;
	static const char *const dirs[] = {"a-to-b", "b-to-a", "both"};

	if (!strcmp(r->method, "rdma") ||
	    (p && (p->kind == RING__TEST_KIND__TEST_RDMA_BW ||
		   p->kind == RING__TEST_KIND__TEST_RDMA_LAT))) {
		report_rdma(w, r);
		return;
	}
	writer_str(w, "test", bw ? "tcp bandwidth" : "tcp latency");
	writer_str(w, "method", "tcp");
	writer_str(w, "a", r->a);
	writer_str(w, "b", r->b);
	writer_str(w, "a_interface",
		   *r->a_interface ? r->a_interface : "(kernel route)");
	writer_str(w, "b_address", r->b_address);
	writer_str(w, "result", *r->error ? "failed" : "ok");
	if (*r->error)
		writer_str(w, "error", r->error);
	if (bw && p) {
		writer_uint(w, "streams", p->streams);
		writer_str(w, "direction",
			   p->direction <= 2 ? dirs[p->direction] : "?");
		writer_double(w, "duration_s", p->duration_ms / 1000.0, 1);
		report_rate(w, "gbps_a_to_b_measured", r->gbps_a_to_b,
			    !*r->error && p->direction !=
						  RING__DIRECTION__DIR_B_TO_A);
		report_rate(w, "gbps_b_to_a_measured", r->gbps_b_to_a,
			    !*r->error && p->direction !=
						  RING__DIRECTION__DIR_A_TO_B);
	}
	for (int side = 0; side < 2; side++) {
		const Ring__TestResult *s = side ? r->b_side : r->a_side;

		if (!s)
			continue;
		writer_obj_start(w, side ? "b_side" : "a_side");
		writer_double(w, "window_s", s->window_s, 3);
		writer_double(w, "cpu_pct", s->cpu_pct, 1);
		if (bw) {
			writer_uint(w, "retransmits", s->retransmits);
			writer_table_start(w, "streams");
			for (size_t i = 0; i < s->n_streams; i++) {
				const Ring__StreamResult *st = s->streams[i];

				writer_obj_start(w, NULL);
				writer_uint(w, "stream", st->index);
				writer_str(w, "role",
					   st->sending ? "send" : "receive");
				writer_double(w, "gbps", st->gbps, 3);
				writer_uint(w, "bytes", st->bytes);
				writer_uint(w, "retransmits", st->retransmits);
				writer_obj_end(w);
			}
			writer_table_end(w);
		}
		/* Half of each measured round trip. */
		if (s->n_lat)
			report_lat(w, s, "half round trip");
		report_counters_side(w, s);
		writer_obj_end(w);
	}
	report_counters_findings(w, r);
}
