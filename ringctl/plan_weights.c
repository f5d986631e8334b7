/* See plan_weights.h. */
#include "plan_weights.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "error_report.h"
#include "client.h"
#include "frame.h"
#include "render.h"
#include "testlimits.h"

/* The agents' default read time and the coordinator's slack, plus a
 * margin: how long ringctl waits for the read tests at least. */
#define PLAN_WEIGHTS_WAIT_MS ((int)TESTLIMITS_READ_MS_DEFAULT + 15000 + 5000)

int plan_weights_parse(struct plan_opts *o, char *err, size_t len)
{
	char why[300];

	if (o->model_text || o->params_text || o->bpp_text || o->reserve_text) {
		snprintf(err, len,
			 "--weights asks shard-or-not on its own: no "
			 "--model-bytes, --params, --bytes-per-param or "
			 "--reserve with it");
		return -1;
	}
	if (!o->weights) {
		snprintf(err, len, "--max-bytes goes with --weights PATH");
		return -1;
	}
	if (o->weights[0] != '/' || strlen(o->weights) > 4095) {
		snprintf(err, len,
			 "--weights: '%s' is not an absolute path (it is read "
			 "on each node)",
			 o->weights);
		return -1;
	}
	if (o->max_bytes_text) {
		if (plan_parse_size(o->max_bytes_text, &o->max_bytes, why,
				    sizeof(why)) < 0) {
			snprintf(err, len, "--max-bytes: %s", why);
			return -1;
		}
		if (!o->max_bytes || o->max_bytes > TESTLIMITS_READ_BYTES_MAX) {
			snprintf(err, len,
				 "--max-bytes: more than 0 and at most 64 GiB");
			return -1;
		}
	}
	return 0;
}

static double plan_weights_max(const double *v, size_t n)
{
	double best = -1;

	for (size_t i = 0; i < n; i++)
		if (v[i] > best)
			best = v[i];
	return best;
}

double plan_weights_edge_in(const Ring__Topology *t, const char *node,
			    const Ring__Edge **edge)
{
	double best = -1;

	*edge = NULL;
	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		double g, r;

		/* Into node: B -> A when node is A, A -> B when it is B. */
		if (!strcmp(e->a, node)) {
			g = plan_weights_max(e->gbps_b_to_a, e->n_gbps_b_to_a);
			r = e->rdma_write_gbps_b_to_a;
		} else if (!strcmp(e->b, node)) {
			g = plan_weights_max(e->gbps_a_to_b, e->n_gbps_a_to_b);
			r = e->rdma_write_gbps_a_to_b;
		} else {
			continue;
		}
		if (r > g)
			g = r;
		if (g > 0 && g > best) {
			best = g;
			*edge = e;
		}
	}
	return best;
}

int plan_weights_render(struct writer *w, const Ring__Topology *t,
			const Ring__ReadTestResult *all)
{
	size_t compared = 0, disk_wins = 0;
	double min_disk = -1, max_edge = -1;

	writer_str(w, "path", all->path);
	writer_table_start(w, "nodes");
	for (size_t i = 0; i < all->n_nodes; i++) {
		const Ring__ReadTestResult *r = all->nodes[i];
		const Ring__Edge *e = NULL;
		double gbps = plan_weights_edge_in(t, r->node, &e);
		double disk = r->seconds > 0
				      ? (double)r->bytes / r->seconds / 1e9
				      : -1;
		char name[160];
		int ok = !*r->error && disk > 0;

		writer_obj_start_named(w, r->node);
		writer_str(w, "node", r->node);
		if (ok) {
			writer_uint(w, "disk_bytes_measured", r->bytes);
			writer_double(w, "disk_seconds_measured", r->seconds,
				      3);
			render_time(w, "disk_measured_at", r->measured_ms,
				    "unknown");
			writer_double(w, "disk_gbytes_per_s_computed", disk, 2);
			writer_bool(w, "direct", r->direct);
			writer_uint(w, "files", r->files);
			writer_str(w, "filesystem", r->filesystem);
			writer_str(w, "device", r->device);
		} else {
			writer_none(w, "disk_bytes_measured", "");
			writer_none(w, "disk_seconds_measured", "");
			writer_none(w, "disk_measured_at", "");
			writer_none(w, "disk_gbytes_per_s_computed", "");
			writer_none(w, "direct", "");
			writer_none(w, "files", "");
			writer_none(w, "filesystem", "");
			writer_none(w, "device", "");
		}
		if (e) {
			snprintf(name, sizeof(name), "%s-%s", e->a, e->b);
			writer_str(w, "edge", name);
			writer_double(w, "edge_gbps_in_measured", gbps, 1);
			render_time(w, "edge_measured_at", e->measured_ms,
				    "unknown");
			writer_double(w, "edge_gbytes_per_s_computed", gbps / 8,
				      2);
		} else {
			writer_none(w, "edge", "");
			writer_none(w, "edge_gbps_in_measured", "");
			writer_none(w, "edge_measured_at", "");
			writer_none(w, "edge_gbytes_per_s_computed", "");
		}
		if (ok && e) {
			compared++;
			disk_wins += disk > gbps / 8;
			if (min_disk < 0 || disk < min_disk)
				min_disk = disk;
			if (gbps / 8 > max_edge)
				max_edge = gbps / 8;
			writer_double(w, "disk_over_edge_computed",
				      disk / (gbps / 8), 2);
			writer_str(w, "faster",
				   disk > gbps / 8 ? "disk" : "neighbour");
			writer_str(w, "note",
				   r->direct ? ""
					     : "no O_DIRECT here: the figure "
					       "may include the page cache");
		} else {
			writer_none(w, "disk_over_edge_computed", "");
			writer_none(w, "faster", "");
			writer_str(w, "note",
				   *r->error ? r->error
				   : !ok     ? "no disk figure"
					     : "no measured edge into this "
					       "node in the last survey");
		}
		writer_obj_end(w);
	}
	writer_table_end(w);
	writer_uint(w, "nodes_asked", all->n_nodes);
	writer_uint(w, "nodes_compared", compared);
	if (!all->n_nodes || compared < all->n_nodes) {
		writer_none(w, "conclusion",
			    *all->error ? all->error
					: "not every node could be compared "
					  "(see note)");
	} else if (disk_wins == compared) {
		writer_str(w, "conclusion", PLAN_WEIGHTS_DISK_WINS);
	} else if (disk_wins == 0) {
		writer_str(w, "conclusion",
			   "a neighbour feeds weights faster than the local "
			   "disk on every node: loading shards over the ring "
			   "is faster than reading them locally");
	} else {
		writer_str(w, "conclusion",
			   "mixed: the local disk is faster on some nodes, a "
			   "neighbour on others (see faster)");
	}
	writer_str(w, "units",
		   "GB = 10^9 bytes; edge GB/s = Gbps / 8 (computed)");
	writer_str(w, "measured",
		   "disk_*_measured: bytes read and seconds taken by each "
		   "node's agent, sequential 4 MiB reads of PATH (a file, or "
		   "a directory's regular files one level deep, by name), "
		   "O_DIRECT unless direct is false, at disk_measured_at; "
		   "edge_gbps_in_measured: the best one-way figure into the "
		   "node over its edges (TCP ladder or RDMA WRITE) in the "
		   "last survey, at edge_measured_at");
	writer_str(w, "computed",
		   "disk_gbytes_per_s = bytes / seconds / 10^9; "
		   "edge_gbytes_per_s = Gbps / 8; disk_over_edge = their "
		   "ratio; conclusion from faster on every node");
	return compared && compared == all->n_nodes ? 0 : 2;
}

int plan_weights_run(const char *sock, int timeout_ms, enum writer_format fmt,
		     const struct plan_opts *o)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *topo = NULL, *rep = NULL;
	Ring__RanksRequest rr = RING__RANKS_REQUEST__INIT;
	Ring__ReadTestRequest rt = RING__READ_TEST_REQUEST__INIT;
	struct writer *w;
	int ret = 2;

	/* The survey first: without edge figures there is nothing to
	 * compare with, so no disk is read for nothing. */
	req.body_case = RING__ENVELOPE__BODY_RANKS_REQUEST;
	req.ranks_request = &rr;
	topo = client_call(sock, timeout_ms, &req,
			   RING__ENVELOPE__BODY_RANKS_REPLY, CLIENT_LOUD);
	if (!topo)
		return 2;
	rt.path = (char *)o->weights;
	rt.max_bytes = o->max_bytes;
	rt.nodes = (char **)o->nodes;
	rt.n_nodes = o->n_nodes;
	req = (Ring__Envelope)RING__ENVELOPE__INIT;
	req.body_case = RING__ENVELOPE__BODY_READ_TEST_REQUEST;
	req.read_test_request = &rt;
	rep = client_call(
		sock,
		timeout_ms > PLAN_WEIGHTS_WAIT_MS ? timeout_ms
						  : PLAN_WEIGHTS_WAIT_MS,
		&req, RING__ENVELOPE__BODY_READ_TEST_RESULT, CLIENT_LOUD);
	if (!rep)
		goto out;
	w = writer_new(stdout, fmt);
	if (!w) {
		error_report(2, "system", NULL, NULL, "%s", strerror(errno));
		goto out;
	}
	ret = plan_weights_render(w, topo->ranks_reply->topology,
				  rep->read_test_result);
	writer_finish(w);
out:
	frame_free(rep);
	frame_free(topo);
	return ret;
}
