/* ringctl's rank order: the table through the writer, and the text formats
 * launchers read (hostfile, rankfile, torchrun, env) with the check that
 * no value from an agent can inject a line into them. */
#include "ranks.h"
#include "ladder_advice.h"

#include <stdio.h>
#include <string.h>

static int ranks_has_diagonals(const Ring__Topology *t);

/* The machine formats: the functions NCCL_IB_HCA lists, and their GID
 * agreement. */
static void ranks_render_hcas(struct writer *w, const Ring__Rank *r)
{
	char buf[1024];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < r->n_hcas && n < sizeof(buf); k++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
				      k ? "," : "", r->hcas[k]);
	writer_str(w, "hcas", buf);
	/* The same columns on every row: -1 / 0 with the reason. */
	writer_int(w, "gid_index_measured", r->n_hcas ? r->gid_index : -1);
	writer_str(w, "gid_note", r->gid_note);
	writer_uint(w, "subnet_prefix_len", r->subnet_prefix_len);
	writer_str(w, "subnet_note", r->subnet_note);
	/* The NCCL devices env pairs the functions into (docs/NCCL.md). */
	ranks_force_merge_value(r, buf, sizeof(buf));
	writer_str(w, "nic_groups", buf);
	writer_bool(w, "nic_groups_automatic", r->nic_groups_automatic);
	n = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < r->n_nic_unpaired && n < sizeof(buf); k++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
				      k ? "," : "", r->nic_unpaired[k]);
	writer_str(w, "nic_unpaired", buf);
	writer_int(w, "nccl_gid_index", r->nccl_gid_index);
}

/* Plain: a row a rank within a terminal's width. A neighbour is its node
 * and the port towards it ("n2 eth2"); the GID index only where there are
 * functions to index (no -1 for "none"); every field is in -f json. */
static void ranks_render_plain(struct writer *w, const Ring__Topology *t)
{
	char buf[1024];

	writer_table_start(w, "ranks");
	for (size_t i = 0; i < t->n_ranks; i++) {
		const Ring__Rank *r = t->ranks[i];

		writer_obj_start(w, NULL);
		writer_uint(w, "rank", r->rank);
		writer_str(w, "node", r->node);
		snprintf(buf, sizeof(buf), "%s %s", r->mgmt_address,
			 r->mgmt_interface);
		writer_str(w, "mgmt", buf);
		snprintf(buf, sizeof(buf), "%s %s", r->next_node,
			 r->next_interface);
		writer_str(w, "next", buf);
		snprintf(buf, sizeof(buf), "%s %s", r->prev_node,
			 r->prev_interface);
		writer_str(w, "prev", buf);
		if (r->n_hcas) {
			size_t n = 0;

			buf[0] = '\0';
			for (size_t k = 0; k < r->n_hcas && n < sizeof(buf);
			     k++)
				n += (size_t)snprintf(buf + n, sizeof(buf) - n,
						      "%s%s", k ? "," : "",
						      r->hcas[k]);
			writer_str(w, "hcas", buf);
			writer_int(w, "gid_index", r->gid_index);
		}
		if (r->next_gid_index >= 0)
			writer_int(w, "next_gid_index", r->next_gid_index);
		if (r->prev_gid_index >= 0)
			writer_int(w, "prev_gid_index", r->prev_gid_index);
		writer_obj_end(w);
	}
	writer_table_end(w);
}

void ranks_render_rank(struct writer *w, const Ring__Rank *r)
{
	writer_uint(w, "rank", r->rank);
	writer_str(w, "node", r->node);
	writer_str(w, "mgmt_address", r->mgmt_address);
	writer_str(w, "mgmt_interface", r->mgmt_interface);
	writer_str(w, "next_node", r->next_node);
	writer_str(w, "next_interface", r->next_interface);
	writer_str(w, "next_rdma", r->next_rdma);
	writer_str(w, "prev_node", r->prev_node);
	writer_str(w, "prev_interface", r->prev_interface);
	writer_str(w, "prev_rdma", r->prev_rdma);
	ranks_render_hcas(w, r);
	if (r->next_gid_index >= 0 || r->prev_gid_index >= 0) {
		writer_int(w, "next_gid_index_measured", r->next_gid_index);
		writer_int(w, "prev_gid_index_measured", r->prev_gid_index);
	}
}

void ranks_render(struct writer *w, const Ring__Topology *t)
{
	int plain = writer_get_format(w) == WRITER_PLAIN;

	writer_str(w, "kind", t->kind);
	if (plain) {
		ranks_render_plain(w, t);
		if (ranks_has_diagonals(t))
			writer_str(w, "warning", RANKS_SWITCHLESS_WARNING);
		return;
	}
	writer_table_start(w, "ranks");
	for (size_t i = 0; i < t->n_ranks; i++) {
		writer_obj_start(w, NULL);
		ranks_render_rank(w, t->ranks[i]);
		writer_obj_end(w);
	}
	writer_table_end(w);
	if (ranks_has_diagonals(t))
		writer_str(w, "warning", RANKS_SWITCHLESS_WARNING);
}

/* A value the text formats print as it is: one word to a shell, an MPI
 * hostfile or a rankfile, none of which has quoting to hide anything else.
 * Explicit ranges: no locale widens the set. */
static int ranks_safe_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && strchr(RANKS_SAFE_PUNCT, c));
}

/* s for a message: printable ASCII as is, the rest as \xNN, cut at 40. */
static void ranks_quote_for_message(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; s[i] && n + 5 < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == 40) {
			n += (size_t)snprintf(buf + n, len - n, "...");
			break;
		}
		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf[n++] = (char)c;
		else
			n += (size_t)snprintf(buf + n, len - n, "\\x%02x", c);
	}
	buf[n < len ? n : len - 1] = '\0';
}

/* 0 if val may be printed; may_be_empty for fields a format leaves out
 * when empty. */
static int ranks_check_value(const Ring__Rank *r, const char *field,
			     const char *val, int may_be_empty,
			     const char *format, char *err, size_t errlen)
{
	char node[300], v[300];
	const char *p;

	for (p = val; *p && ranks_safe_char((unsigned char)*p); p++)
		;
	if (!*p && (*val || may_be_empty))
		return 0;
	ranks_quote_for_message(r->node, node, sizeof(node));
	ranks_quote_for_message(val, v, sizeof(v));
	snprintf(err, errlen,
		 "node '%s' (rank %u): %s '%s' %s; refusing to print %s (it "
		 "would not be one safe word)",
		 node, r->rank, field, v,
		 *val ? "has characters outside [A-Za-z0-9" RANKS_SAFE_PUNCT "]"
		      : "is empty",
		 format);
	return -1;
}

/* Every launcher variable env prints names the management interface:
 * never guess one (an invented name makes NCCL fail, or worse, pick the
 * data plane for its sockets). */
static int ranks_check_mgmt_if(const Ring__Rank *r, char *err, size_t errlen)
{
	char node[300];

	if (*r->mgmt_interface)
		return ranks_check_value(r, "mgmt_interface", r->mgmt_interface,
					 0, "env", err, errlen);
	ranks_quote_for_message(r->node, node, sizeof(node));
	snprintf(err, errlen,
		 "node '%s' (rank %u): its management interface is unknown "
		 "(its agent reported none: set mgmt_interface in its "
		 "configuration); refusing to print env, whose "
		 "NCCL_SOCKET_IFNAME and launcher socket variables need it",
		 node, r->rank);
	return -1;
}

int ranks_check(const Ring__Topology *t, const char *format, char *err,
		size_t errlen)
{
	const Ring__Rank *r0 = t->n_ranks ? t->ranks[0] : NULL;
	int env = !strcmp(format, "env");
	int launcher = env || !strcmp(format, "torchrun");

	if (strcmp(format, "hostfile") && strcmp(format, "rankfile") &&
	    !launcher)
		return 0; /* the writer's formats escape whatever comes */
	if (!r0) {
		snprintf(err, errlen, "no rank order");
		return -1;
	}
	/* rank 0's address is every launcher's rendezvous point. */
	if (launcher && ranks_check_value(r0, "mgmt_address", r0->mgmt_address,
					  0, format, err, errlen))
		return -1;
	for (size_t i = 0; i < t->n_ranks; i++) {
		const Ring__Rank *r = t->ranks[i];

		/* Names reach comments and torchrun's line prefix: a newline
		 * there starts a line of its own. */
		if (ranks_check_value(r, "node", r->node, 0, format, err,
				      errlen) ||
		    (!launcher &&
		     ranks_check_value(r, "mgmt_address", r->mgmt_address, 0,
				       format, err, errlen)) ||
		    (env && (ranks_check_mgmt_if(r, err, errlen) ||
			     ranks_check_value(r, "next_rdma", r->next_rdma, 1,
					       format, err, errlen) ||
			     ranks_check_value(r, "prev_rdma", r->prev_rdma, 1,
					       format, err, errlen))))
			return -1;
		for (size_t k = 0; env && k < r->n_hcas; k++)
			if (ranks_check_value(r, "hcas", r->hcas[k], 0, format,
					      err, errlen))
				return -1;
	}
	if (!launcher &&
	    ranks_check_value(r0, "kind", t->kind, 0, format, err, errlen))
		return -1;
	return 0;
}

/* A comment line's text: printable ASCII as is, anything else '?' (an
 * agent-made name must not end the comment and start a line). */
static void ranks_comment(FILE *out, const char *prefix, const char *text)
{
	fputs(prefix, out);
	for (const char *p = text; *p; p++)
		fputc((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f
			      ? *p
			      : '?',
		      out);
	fputc('\n', out);
}

/* Can two ranks of this order be out of each other's reach? On a ring
 * of 3 every pair is adjacent, as in a pair; a line of 3 has one gap. */
static int ranks_has_diagonals(const Ring__Topology *t)
{
	if (!strcmp(t->kind, "ring"))
		return t->n_ranks > 3;
	if (!strcmp(t->kind, "line"))
		return t->n_ranks > 2;
	return 0;
}

/* Does this rank's HCA list face more than one node? Then NCCL must not
 * merge its functions, and must pick per peer the one that reaches it. */
static int ranks_multi_neighbour(const Ring__Rank *r)
{
	return *r->next_node && *r->prev_node &&
	       strcmp(r->next_node, r->prev_node);
}

int ranks_hca_printed(const Ring__Rank *r, size_t k)
{
	for (size_t u = 0; k < r->n_hcas && u < r->n_nic_unpaired; u++)
		if (!strcmp(r->nic_unpaired[u], r->hcas[k]))
			return 0;
	return k < r->n_hcas;
}

/* NCCL_IB_HCA: "=" for exact names (no prefix match that would pull in
 * another device), "device:port" for the port (NCCL's init.cc and
 * parseStringList). Functions without a partner facing the other
 * neighbour are left out (see ranks_env_routing). Legacy topologies
 * without hcas list the two devices without a port. */
static int ranks_env_hca(FILE *out, const Ring__Rank *r)
{
	if (r->n_hcas) {
		int first = 1;

		for (size_t u = 0; u < r->n_nic_unpaired; u++)
			ranks_comment(out, "# left out of NCCL_IB_HCA: ",
				      r->nic_unpaired[u]);
		if (r->n_nic_unpaired)
			fputs("# (no function facing the other neighbour to "
			      "pair it with: alone, NCCL's\n# listener for it "
			      "names one cable's subnet, and a connection "
			      "can hang)\n",
			      out);
		fputs("NCCL_IB_HCA==", out);
		for (size_t k = 0; k < r->n_hcas; k++)
			if (ranks_hca_printed(r, k)) {
				fprintf(out, "%s%s", first ? "" : ",",
					r->hcas[k]);
				first = 0;
			}
		fputc('\n', out);
		return 1;
	}
	if (*r->next_rdma || *r->prev_rdma) {
		int both = *r->next_rdma && *r->prev_rdma &&
			   strcmp(r->next_rdma, r->prev_rdma);

		fprintf(out,
			"# the coordinator listed no functions with ports "
			"(an older one): the neighbour-facing devices only\n"
			"NCCL_IB_HCA==%s%s%s\n",
			*r->next_rdma ? r->next_rdma : r->prev_rdma,
			both ? "," : "", both ? r->prev_rdma : "");
		return 1;
	}
	fputs("# no RDMA function faces the neighbours: NCCL_IB_HCA not "
	      "set\n",
	      out);
	return 0;
}

/* NCCL_IB_GID_INDEX: left to NCCL, whose default (>= 2.21) picks each
 * function's RoCE v2 IPv4 entry; a fixed index breaks when an address
 * change shifts the table. Set only where the GID tables show NCCL's
 * pick is not the entry the survey's RDMA tests used. */
static void ranks_env_gid(FILE *out, const Ring__Rank *r)
{
	if (r->n_hcas) {
		/* With its reason only: a topology from before the field
		 * has 0 there, which is no decision. */
		if (r->nccl_gid_index >= 0 && *r->nccl_gid_note) {
			ranks_comment(out, "# ", r->nccl_gid_note);
			fprintf(out, "NCCL_IB_GID_INDEX=%d\n",
				r->nccl_gid_index);
		} else if (*r->nccl_gid_note) {
			ranks_comment(
				out, "# NCCL_IB_GID_INDEX: ", r->nccl_gid_note);
		} else {
			fputs("# NCCL_IB_GID_INDEX left to NCCL (>= 2.21 picks "
			      "each function's RoCE v2 IPv4 entry)\n",
			      out);
		}
		return;
	}
	/* An older coordinator: the two neighbour-facing ports only. */
	if (r->next_gid_index < 0 && r->prev_gid_index < 0)
		fputs("# NCCL_IB_GID_INDEX not set: no RDMA test in the last "
		      "survey to read it from\n",
		      out);
	else if (r->next_gid_index >= 0 && r->prev_gid_index >= 0 &&
		 r->next_gid_index != r->prev_gid_index)
		fprintf(out,
			"# NCCL_IB_GID_INDEX not set: the ports facing the "
			"neighbours use GID index %d (next) and %d (prev); "
			"NCCL takes one\n",
			r->next_gid_index, r->prev_gid_index);
	else
		fprintf(out, "NCCL_IB_GID_INDEX=%d\n",
			r->next_gid_index >= 0 ? r->next_gid_index
					       : r->prev_gid_index);
}

/* NCCL_NET_FORCE_MERGE's value: the groups, ';' between them. */
void ranks_force_merge_value(const Ring__Rank *r, char *buf, size_t len)
{
	size_t w = 0;

	buf[0] = '\0';
	for (size_t g = 0; g < r->n_nic_groups && w < len; g++)
		w += (size_t)snprintf(buf + w, len - w, "%s%s", g ? ";" : "",
				      r->nic_groups[g]);
}

/* What a switchless ring needs for NCCL to reach each neighbour over the
 * function that faces it (docs/NCCL.md has the sources). */
static void ranks_env_routing(FILE *out, const Ring__Rank *r)
{
	char merge[1024];

	if (!ranks_multi_neighbour(r) || !r->n_hcas)
		return;
	fputs("# NCCL >= " RANKS_NCCL_MIN ": connect over the function on "
	      "the peer's subnet (each\n# cable is its own subnet). Older "
	      "NCCL ignores these and can pick a function\n# facing the "
	      "other neighbour: ibv_modify_qp fails with 110.\n"
	      "NCCL_IB_SUBNET_AWARE_ROUTING=1\n",
	      out);
	if (r->subnet_prefix_len)
		fprintf(out, "NCCL_IB_SUBNET_PREFIX_LEN=%u\n",
			r->subnet_prefix_len);
	else
		ranks_comment(out,
			      "# NCCL_IB_SUBNET_PREFIX_LEN not set (NCCL "
			      "assumes /24): ",
			      *r->subnet_note ? r->subnet_note
					      : "no IPv4 prefix known");
	ranks_force_merge_value(r, merge, sizeof(merge));
	if (r->n_nic_groups && r->nic_groups_automatic) {
		fputs("# NCCL devices: NCCL fuses each PCI device's functions "
		      "by itself, one\n# facing each neighbour, so no "
		      "NCCL_NET_FORCE_MERGE is needed (NCCL_IB_MERGE_NICS\n# "
		      "must stay 1):\n",
		      out);
		ranks_comment(out, "# ", merge);
	} else if (r->n_nic_groups) {
		fprintf(out,
			"# NCCL devices: each pairs a function facing %s "
			"with one facing %s, so\n# its listener names both "
			"cables' subnets (NCCL >= 2.24.3)\n",
			r->next_node, r->prev_node);
		fprintf(out, "NCCL_NET_FORCE_MERGE=%s\n", merge);
	}
	fputs("# a ring channel enters on the function facing the previous "
	      "rank and\n# leaves on the one facing the next: different NICs "
	      "(NCCL >= 2.5.6)\nNCCL_CROSS_NIC=1\n",
	      out);
	fputs("# the built-in IB transport, where the subnet-aware routing "
	      "is, not an\n# external network plugin (\"none\": NCCL >= "
	      "2.28.3)\nNCCL_NET_PLUGIN=none\n",
	      out);
}

static void ranks_env_rank(FILE *out, const Ring__Topology *t,
			   const Ring__Rank *r)
{
	const char *mif = r->mgmt_interface;

	fprintf(out, "# %s (rank %u)\n", r->node, r->rank);
	fprintf(out, "NODE_RANK=%u\nMASTER_ADDR=%s\n", r->rank,
		t->ranks[0]->mgmt_address);
	/* Sockets (bootstrap, rendezvous, out-of-band) on the management
	 * interface: never the data plane (the reference cluster's 181 s hang). */
	fprintf(out,
		"NCCL_SOCKET_IFNAME==%s\nGLOO_SOCKET_IFNAME=%s\n"
		"UCX_NET_DEVICES=%s\nOMPI_MCA_btl_tcp_if_include=%s\n"
		"OMPI_MCA_oob_tcp_if_include=%s\n",
		mif, mif, mif, mif, mif);
	if (ranks_env_hca(out, r)) {
		ranks_env_gid(out, r);
		ranks_env_routing(out, r);
		/* A broken RDMA set-up fails at start instead of falling
		 * back to sockets over the management network. */
		fputs("# RDMA or nothing: no silent fallback to sockets "
		      "(NCCL >= 2.10)\nNCCL_NET=IB\n",
		      out);
	}
	if (ranks_has_diagonals(t))
		fputs(RANKS_SWITCHLESS_WARNING_ENV, out);
	/* One stream per channel saturates nothing: the reference cluster needed
	 * 4, and more when the survey's ladder saturated only above that
	 * (the count check nccl-env asks for). A line is no ring: NCCL's
	 * ring would cross the missing cable through another path, or
	 * hang. */
	if (!strcmp(t->kind, "ring")) {
		struct ladder_advice sat;
		unsigned ch;

		ladder_advice_compute(t, &sat);
		ch = sat.streams > 4 ? sat.streams : 4;
		fprintf(out,
			"NCCL_ALGO=Ring\nNCCL_MIN_NCHANNELS=%u\n"
			"NCCL_MAX_NCHANNELS=%u\n\n",
			ch, ch);
	} else
		fprintf(out,
			"# a %s, not a ring: NCCL_ALGO and the ring's channel "
			"settings left out\n\n",
			t->kind);
}

int ranks_env_node(FILE *out, const Ring__Topology *t, size_t i)
{
	char err[512];

	if (i >= t->n_ranks || ranks_check(t, "env", err, sizeof(err)) < 0)
		return -1;
	ranks_env_rank(out, t, t->ranks[i]);
	return 0;
}

int ranks_text(FILE *out, const Ring__Topology *t, const char *format)
{
	const Ring__Rank *r0 = t->n_ranks ? t->ranks[0] : NULL;
	char err[512];

	if (!r0)
		return -1;
	if (strcmp(format, "hostfile") && strcmp(format, "rankfile") &&
	    strcmp(format, "torchrun") && strcmp(format, "env"))
		return -1;
	/* Never print half of it: refuse the whole output. */
	if (ranks_check(t, format, err, sizeof(err)) < 0)
		return -1;
	if (!strcmp(format, "hostfile")) {
		/* Management addresses: the launcher must never rendezvous
		 * over the data plane. */
		fprintf(out, "# MPI hostfile in physical ring order (%s)\n",
			t->kind);
		for (size_t i = 0; i < t->n_ranks; i++)
			fprintf(out, "%s slots=1  # rank %u: %s\n",
				t->ranks[i]->mgmt_address, t->ranks[i]->rank,
				t->ranks[i]->node);
	} else if (!strcmp(format, "rankfile")) {
		fprintf(out, "# Open MPI rankfile in physical ring order\n");
		for (size_t i = 0; i < t->n_ranks; i++)
			fprintf(out, "rank %u=%s slot=0  # %s\n",
				t->ranks[i]->rank, t->ranks[i]->mgmt_address,
				t->ranks[i]->node);
	} else if (!strcmp(format, "torchrun")) {
		fprintf(out,
			"# Static rendezvous: with the dynamic (c10d) backend "
			"torchrun ignores\n# --node-rank and numbers nodes in "
			"arrival order, which breaks ring order.\n# "
			"--master-addr is rank 0's management address: "
			"rendezvous never uses the data plane.\n");
		for (size_t i = 0; i < t->n_ranks; i++)
			fprintf(out,
				"%s: torchrun --nnodes=%zu --node-rank=%u "
				"--rdzv-backend=static --master-addr=%s "
				"--master-port=29500 --nproc-per-node=1 "
				"SCRIPT\n",
				t->ranks[i]->node, t->n_ranks,
				t->ranks[i]->rank, r0->mgmt_address);
	} else if (!strcmp(format, "env")) {
		for (size_t i = 0; i < t->n_ranks; i++)
			ranks_env_rank(out, t, t->ranks[i]);
	} else {
		return -1;
	}
	return 0;
}
