/* ringctl's rank order: the table through the writer, and the text formats
 * launchers read (hostfile, rankfile, torchrun, env) with the check that
 * no value from an agent can inject a line into them. */
#include "ranks.h"

#include <stdio.h>
#include <string.h>

void ranks_render(struct writer *w, const Ring__Topology *t)
{
	writer_str(w, "kind", t->kind);
	writer_table_start(w, "ranks");
	for (size_t i = 0; i < t->n_ranks; i++) {
		const Ring__Rank *r = t->ranks[i];

		writer_obj_start(w, NULL);
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
		if (r->next_gid_index >= 0 || r->prev_gid_index >= 0) {
			writer_int(w, "next_gid_index_measured",
				   r->next_gid_index);
			writer_int(w, "prev_gid_index_measured",
				   r->prev_gid_index);
		}
		writer_obj_end(w);
	}
	writer_table_end(w);
}

/* NCCL_IB_GID_INDEX is one value per process: print it when the ports
 * facing both neighbours used the same index in the survey's RDMA tests. */
static void ranks_env_gid_index(FILE *out, const Ring__Rank *r)
{
	int n = r->next_gid_index, p = r->prev_gid_index;

	if (n < 0 && p < 0)
		fprintf(out, "# NCCL_IB_GID_INDEX: no RDMA test in the last "
			     "survey to read it from\n");
	else if (n >= 0 && p >= 0 && n != p)
		fprintf(out,
			"# NCCL_IB_GID_INDEX not set: the ports facing the "
			"neighbours use GID index %d (next) and %d (prev); "
			"NCCL takes one\n",
			n, p);
	else
		fprintf(out, "NCCL_IB_GID_INDEX=%d\n", n >= 0 ? n : p);
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
		    (env &&
		     (ranks_check_value(r, "mgmt_interface", r->mgmt_interface,
					1, format, err, errlen) ||
		      ranks_check_value(r, "next_rdma", r->next_rdma, 1, format,
					err, errlen) ||
		      ranks_check_value(r, "prev_rdma", r->prev_rdma, 1, format,
					err, errlen))))
			return -1;
	}
	if (!launcher &&
	    ranks_check_value(r0, "kind", t->kind, 0, format, err, errlen))
		return -1;
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
		for (size_t i = 0; i < t->n_ranks; i++) {
			const Ring__Rank *r = t->ranks[i];

			fprintf(out, "# %s (rank %u)\n", r->node, r->rank);
			fprintf(out, "NODE_RANK=%u\nMASTER_ADDR=%s\n", r->rank,
				r0->mgmt_address);
			fprintf(out, "NCCL_SOCKET_IFNAME=%s\n",
				*r->mgmt_interface ? r->mgmt_interface
						   : "mgmt0");
			if (*r->next_rdma || *r->prev_rdma)
				fprintf(out, "NCCL_IB_HCA=%s%s%s\n",
					r->next_rdma,
					*r->next_rdma && *r->prev_rdma &&
							strcmp(r->next_rdma,
							       r->prev_rdma)
						? ","
						: "",
					strcmp(r->next_rdma, r->prev_rdma)
						? r->prev_rdma
						: "");
			else
				fprintf(out,
					"# no RDMA device faces the "
					"neighbours: NCCL_IB_HCA not set\n");
			ranks_env_gid_index(out, r);
			/* One stream per channel saturates nothing: the field
			 * notes needed 4 (see the saturation finding). A line
			 * is no ring: NCCL's ring would cross the missing
			 * cable through another path, or hang. */
			if (!strcmp(t->kind, "ring"))
				fprintf(out,
					"NCCL_ALGO=Ring\nNCCL_MIN_NCHANNELS=4\n"
					"NCCL_MAX_NCHANNELS=4\n\n");
			else
				fprintf(out,
					"# a %s, not a ring: NCCL_ALGO "
					"and the ring's channel settings "
					"left out\n\n",
					t->kind);
		}
	} else {
		return -1;
	}
	return 0;
}
