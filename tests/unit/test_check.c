#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringctl/check.h"
#include "ringctl/ranks.h"
#include "testwriter.h"

/* The reference cluster as the coordinator reports it: physical order
 * n1-n2-n4-n3, one cable (a /30 of its own) per neighbour pair, the
 * diagonals n1-n4 and n2-n3 without a path. */

#define NN 4

struct cluster {
	Ring__StatusReply st;
	Ring__NodeStatus ns[NN];
	Ring__NodeStatus *nsp[NN];
	Ring__Topology t;
	Ring__Rank r[NN];
	Ring__Rank *rp[NN];
	Ring__Edge e[NN];
	Ring__Edge *ep[NN];
	Ring__DiagonalCheck d[2];
	Ring__DiagonalCheck *dp[2];
	char *order[NN];
};

static const char *const ring[NN] = {"n1", "n2", "n4", "n3"};
static const char *const mgmt[NN] = {"10.88.0.11", "10.88.0.12", "10.88.0.14",
				     "10.88.0.13"};
/* Edge k joins ring[k] (address .1, eth2) and ring[k+1] (.2, eth1). */
static const char *const data_a[NN] = {"10.89.1.1", "10.89.2.1", "10.89.3.1",
				       "10.89.4.1"};
static const char *const data_b[NN] = {"10.89.1.2", "10.89.2.2", "10.89.3.2",
				       "10.89.4.2"};

static void cluster_init(struct cluster *c)
{
	memset(c, 0, sizeof(*c));
	ring__status_reply__init(&c->st);
	ring__topology__init(&c->t);
	c->t.kind = "ring";
	c->t.surveyed_ms = 1764700000000ULL;
	for (int i = 0; i < NN; i++) {
		Ring__Rank *r = &c->r[i];
		Ring__Edge *e = &c->e[i];

		ring__node_status__init(&c->ns[i]);
		c->ns[i].node = (char *)ring[i];
		c->ns[i].mgmt_address = (char *)mgmt[i];
		c->ns[i].state = "up";
		c->nsp[i] = &c->ns[i];

		ring__rank__init(r);
		r->rank = (uint32_t)i;
		r->node = (char *)ring[i];
		r->mgmt_address = (char *)mgmt[i];
		r->mgmt_interface = "mgmt0";
		r->next_node = (char *)ring[(i + 1) % NN];
		r->prev_node = (char *)ring[(i + NN - 1) % NN];
		r->next_interface = "eth2";
		r->prev_interface = "eth1";
		r->next_rdma = "";
		r->prev_rdma = "";
		r->next_gid_index = -1;
		r->prev_gid_index = -1;
		r->gid_index = -1;
		c->rp[i] = r;

		ring__edge__init(e);
		e->a = (char *)ring[i];
		e->b = (char *)ring[(i + 1) % NN];
		e->a_interface = "eth2";
		e->b_interface = "eth1";
		e->a_address = (char *)data_a[i];
		e->b_address = (char *)data_b[i];
		e->a_gid_index = -1;
		e->b_gid_index = -1;
		e->live_state = "up";
		e->live_reason = "";
		c->ep[i] = e;
		c->order[i] = (char *)ring[i];
	}
	for (int k = 0; k < 2; k++) {
		ring__diagonal_check__init(&c->d[k]);
		c->d[k].a = (char *)ring[k];
		c->d[k].b = (char *)ring[k + 2];
		c->d[k].b_address = (char *)data_a[k + 2];
		c->d[k].route_kind = "gateway";
		c->dp[k] = &c->d[k];
	}
	c->t.n_ranks = NN;
	c->t.ranks = c->rp;
	c->t.n_edges = NN;
	c->t.edges = c->ep;
	c->t.n_diagonals = 2;
	c->t.diagonals = c->dp;
	c->t.n_order = NN;
	c->t.order = c->order;
	c->st.n_nodes = NN;
	c->st.nodes = c->nsp;
	c->st.topology = &c->t;
	c->st.now_ms = 1764700060000ULL;
}

static void parse_ok(const char *text, struct check_hosts *h)
{
	char err[512] = "";
	int r = check_hosts_parse(text, strlen(text), "f", h, err, sizeof(err));

	if (r)
		fail_msg("parse: %s", err);
}

/* -1 and the error text, which must contain want. */
static void parse_fails(const char *text, size_t len, const char *want)
{
	struct check_hosts h;
	char err[512] = "";

	assert_int_equal(
		check_hosts_parse(text, len, "f", &h, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
	assert_null(h.v);
}

static void test_parse_hostfile(void **state)
{
	struct check_hosts h;
	char line[256];

	(void)state;
	parse_ok("# a comment\n\nn1 slots=2\n  n3 slots=1 max_slots=4  # x\n"
		 "n2\r\nn4 slots=8",
		 &h);
	assert_int_equal(h.format, CHECK_HOSTS_HOSTFILE);
	assert_int_equal(h.n, 4);
	assert_string_equal(h.v[0].host, "n1");
	assert_string_equal(h.v[1].host, "n3");
	assert_string_equal(h.v[2].host, "n2");
	assert_string_equal(h.v[3].host, "n4");
	assert_int_equal(h.v[1].lineno, 4);
	assert_int_equal(h.v[3].lineno, 6);
	/* The line as written, comment and slots kept, no CR. */
	assert_int_equal(check_hosts_line(&h, 1, 7, line, sizeof(line)), 0);
	assert_string_equal(line, "  n3 slots=1 max_slots=4");
	assert_int_equal(check_hosts_line(&h, 2, 7, line, sizeof(line)), 0);
	assert_string_equal(line, "n2");
	assert_int_equal(check_hosts_line(&h, 1, 7, line, 5), -1);
	check_hosts_free(&h);

	parse_ok("n1\nn2\n10.88.0.13\n", &h);
	assert_int_equal(h.format, CHECK_HOSTS_LIST);
	assert_int_equal(h.n, 3);
	assert_string_equal(h.v[2].host, "10.88.0.13");
	check_hosts_free(&h);
}

static void test_parse_rankfile(void **state)
{
	struct check_hosts h;
	char line[256];

	(void)state;
	/* Lines out of rank order: the launcher goes by the number. */
	parse_ok("rank 1=n3 slot=0\nrank 0=n1 slot=0  # first\n"
		 "rank  3 = n4 slot=1:0\nrank 2=n2 slot=0\n",
		 &h);
	assert_int_equal(h.format, CHECK_HOSTS_RANKFILE);
	assert_int_equal(h.n, 4);
	assert_string_equal(h.v[0].host, "n1");
	assert_string_equal(h.v[1].host, "n3");
	assert_string_equal(h.v[2].host, "n2");
	assert_string_equal(h.v[3].host, "n4");
	assert_int_equal(h.v[3].lineno, 3);
	assert_int_equal(check_hosts_line(&h, 1, 3, line, sizeof(line)), 0);
	assert_string_equal(line, "rank 3=n3 slot=0");
	assert_int_equal(check_hosts_line(&h, 3, 12, line, sizeof(line)), 0);
	assert_string_equal(line, "rank  12 = n4 slot=1:0");
	check_hosts_free(&h);
}

/* What ringctl ranks prints, read back: the same order. */
static void test_parse_ranks_output(void **state)
{
	static const char *const fmts[] = {"hostfile", "rankfile", "torchrun"};
	static const enum check_hosts_format want[] = {CHECK_HOSTS_HOSTFILE,
						       CHECK_HOSTS_RANKFILE,
						       CHECK_HOSTS_TORCHRUN};
	struct cluster c;

	(void)state;
	cluster_init(&c);
	for (size_t f = 0; f < 3; f++) {
		struct testwriter tw;
		struct check_hosts h;
		char *out, line[512];

		assert_int_equal(
			ranks_text(testwriter_stream(&tw), &c.t, fmts[f]), 0);
		out = testwriter_close(&tw);
		parse_ok(out, &h);
		assert_int_equal(h.format, want[f]);
		assert_int_equal(h.n, NN);
		for (int i = 0; i < NN; i++)
			assert_string_equal(h.v[i].host,
					    f == 2 ? ring[i] : mgmt[i]);
		if (f == 2) {
			/* The node-rank is what changes. */
			assert_int_equal(
				check_hosts_line(&h, 2, 1, line, sizeof(line)),
				0);
			assert_non_null(strstr(line, "n4: torchrun "));
			assert_non_null(strstr(line, " --node-rank=1 "));
			assert_null(strstr(line, "--node-rank=2"));
		}
		check_hosts_free(&h);
		free(out);
	}
}

static void test_parse_errors(void **state)
{
	char *big;

	(void)state;
	parse_fails("n1 slots=1\nrank 1=n2\n", 22,
		    "f:2: a rankfile line, but line 1 made this a hostfile");
	parse_fails("# x\nn1 slots=one\n", 16,
		    "f:2: 'slots=one' after the host is not slots=N");
	parse_fails("n1 n2\n", 6, "f:1: 'n2' after the host");
	parse_fails("rank 0=n1\nrank 0=n2\n", 20,
		    "f:2: rank 0 again (line 1 has it)");
	parse_fails("rank 0=n1\nrank 2=n2\n", 20,
		    "f:2: rank 2, but no rank 1: ranks must be 0..1");
	parse_fails("rank x=n1\n", 10, "f:1: 'rank' is not followed by");
	parse_fails("rank 0 n1\n", 10, "f:1: rank 0: no '=' before the host");
	parse_fails("n1: torchrun --nnodes=2 SCRIPT\n", 31,
		    "f:1: torchrun line without --node-rank=R");
	parse_fails("n1\nn\0002\n", 6, "f:2: a NUL byte");
	parse_fails("n1\nn\0012\n", 6, "f:2: a control byte (0x01)");
	parse_fails("n1 slots=1 # \033[2J\n", 19, "f:1: a control byte (0x1b)");
	parse_fails("# only\n\n", 8, "f: no hosts");
	big = malloc(CHECK_HOSTS_MAX_BYTES + 2);
	assert_non_null(big);
	memset(big, 'a', CHECK_HOSTS_MAX_BYTES + 1);
	parse_fails(big, CHECK_HOSTS_MAX_BYTES + 1, "f: larger than 1048576");
	memset(big, '\n', CHECK_HOSTS_MAX_LINES + 1);
	parse_fails(big, CHECK_HOSTS_MAX_LINES + 1, "f: more than 4096 lines");
	memset(big, 'a', 300);
	parse_fails(big, 300, "f:1: host name longer than 255");
	memset(big, ' ', CHECK_HOSTS_LINE_MAX + 1);
	big[0] = 'a';
	parse_fails(big, CHECK_HOSTS_LINE_MAX + 1,
		    "f:1: longer than 4096 characters");
	free(big);
}

static void test_match_address(void **state)
{
	struct cluster c;
	struct check_addr a;
	char how[256];

	(void)state;
	cluster_init(&c);
	check_match_address(&c.st, "10.88.0.14", &a);
	assert_int_equal(a.kind, CHECK_ADDR_MGMT);
	assert_string_equal(a.node, "n4");
	/* n4 is b of edge 1 (n2-n4) and a of edge 2 (n4-n3). */
	check_match_address(&c.st, "10.89.2.2", &a);
	assert_int_equal(a.kind, CHECK_ADDR_DATA);
	assert_string_equal(a.node, "n4");
	assert_string_equal(a.peer, "n2");
	assert_string_equal(a.interface, "eth1");
	check_match_address(&c.st, "10.89.9.9", &a);
	assert_int_equal(a.kind, CHECK_ADDR_UNKNOWN);
	/* Through getaddrinfo: a literal, and a node name that does not
	 * resolve on the test host. */
	assert_int_equal(
		check_resolve(&c.st, "10.88.0.11", &a, how, sizeof(how)), 0);
	assert_int_equal(a.kind, CHECK_ADDR_MGMT);
	assert_string_equal(how, "10.88.0.11");
	assert_int_equal(check_resolve(&c.st, "n3", &a, how, sizeof(how)), 0);
	assert_string_equal(a.node, "n3");
	assert_int_equal(
		check_resolve(&c.st, "192.0.2.7", &a, how, sizeof(how)), -1);
	assert_string_equal(a.address, "192.0.2.7");
}

static void test_compare(void **state)
{
	struct cluster c;
	const char *wrong[NN] = {"n1", "n3", "n2", "n4"};
	const char *back[NN] = {"n1", "n3", "n4", "n2"};
	size_t k[NN];
	char err[256];

	(void)state;
	cluster_init(&c);
	assert_true(check_edge(&c.t, "n1", "n2") >= 0);
	assert_true(check_edge(&c.t, "n3", "n1") >= 0);
	assert_int_equal(check_edge(&c.t, "n1", "n4"), -1);
	assert_int_equal(check_edge(&c.t, "n2", "n3"), -1);
	/* Natural host order: rank 0 kept, the ring n1 n2 n4 n3. */
	assert_int_equal(
		check_ranks_corrected(&c.t, wrong, NN, k, err, sizeof(err)), 0);
	assert_int_equal(k[0], 0);
	assert_string_equal(wrong[k[1]], "n3");
	assert_string_equal(wrong[k[2]], "n4");
	assert_string_equal(wrong[k[3]], "n2");
	/* The ring the other way round is kept as it is. */
	assert_int_equal(
		check_ranks_corrected(&c.t, back, NN, k, err, sizeof(err)), 0);
	for (size_t i = 0; i < NN; i++)
		assert_int_equal(k[i], i);
	back[3] = "n5";
	assert_int_equal(
		check_ranks_corrected(&c.t, back, NN, k, err, sizeof(err)), -1);
	assert_string_equal(err, "n5 is not in the surveyed order (ring)");
}

static char *ranks_report_fmt(struct cluster *c, const char *text,
			      enum writer_format fmt, int *rc)
{
	struct testwriter tw;
	FILE *f = testwriter_stream(&tw);
	struct check_hosts h;

	parse_ok(text, &h);
	*rc = check_ranks_report(f, fmt, &h, "f", &c->st);
	check_hosts_free(&h);
	return testwriter_close(&tw);
}

static char *ranks_report(struct cluster *c, const char *text, int *rc)
{
	struct testwriter tw;
	FILE *f = testwriter_stream(&tw);
	struct check_hosts h;

	parse_ok(text, &h);
	*rc = check_ranks_report(f, WRITER_JSON, &h, "f", &c->st);
	check_hosts_free(&h);
	return testwriter_close(&tw);
}

static void test_ranks_report(void **state)
{
	struct cluster c;
	char *out;
	int rc;

	(void)state;
	cluster_init(&c);
	/* The reference cluster's failure: natural host order on the ring
	 * n1-n2-n4-n3. n2-n4 measured over RDMA: n2's GID facing its
	 * published next is measured, the others computed from the data
	 * addresses. */
	c.e[1].a_gid = "fe80::2";
	out = ranks_report(&c,
			   "n1 slots=1\nn2 slots=1\nn3 slots=1\n"
			   "n4 slots=1\n",
			   &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_non_null(strstr(out, "\"verdict\": \"problems\""));
	assert_non_null(strstr(out, "\"pair\": \"n2-n3\""));
	assert_non_null(strstr(out, "\"pair\": \"n4-n1\""));
	assert_null(strstr(out, "\"pair\": \"n1-n2\""));
	assert_null(strstr(out, "\"pair\": \"n3-n4\""));
	assert_non_null(strstr(out, CHECK_RANKS_ERROR));
	assert_non_null(strstr(out, "\"local_gid_measured\": \"fe80::2\""));
	/* n3 faces its previous rank (n4) over edge n4-n3's b side. */
	assert_non_null(
		strstr(out, "\"remote_gid_computed\": \"::ffff:10.89.3.2\""));
	assert_non_null(strstr(out, "would use eth2, which is cabled to n4, "
				    "not n3"));
	assert_non_null(strstr(out, "\"corrected\": [\n    \"n1 slots=1\",\n"
				    "    \"n2 slots=1\",\n    \"n4 slots=1\",\n"
				    "    \"n3 slots=1\"\n  ]"));
	assert_non_null(strstr(out, "\"cables_measured\""));
	free(out);

	/* n1 n3 n2 n4: n1-n3 is a cable here, n3-n2 and n4-n1 are not;
	 * the corrected order runs the way n3 lies from n1. */
	out = ranks_report(&c, "n1\nn3\nn2\nn4\n", &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_non_null(strstr(out, "\"pair\": \"n3-n2\""));
	assert_non_null(strstr(out, "\"corrected\": [\n    \"n1\",\n"
				    "    \"n3\",\n    \"n4\",\n    \"n2\"\n"));
	free(out);

	out = ranks_report(&c, "10.88.0.11\nn2\n10.89.2.2\nn3\n", &rc);
	assert_int_equal(rc, CHECK_OK);
	assert_non_null(strstr(out, "\"verdict\": \"ok\""));
	assert_null(strstr(out, "\"corrected\""));
	/* n4 given by its data address: resolved, and warned about. */
	assert_non_null(strstr(out, "\"warning_data_addresses\""));
	free(out);

	/* Plain: a block to paste after the rest, rank numbers renumbered,
	 * the comment kept. */
	out = ranks_report_fmt(&c,
			       "rank 0=n1 slot=0 # a\nrank 1=n2 slot=0\n"
			       "rank 2=n3 slot=0\nrank 3=n4 slot=0\n",
			       WRITER_PLAIN, &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_non_null(strstr(out, "\ncorrected: below, in the file's "
				    "format\n"));
	assert_non_null(strstr(out, "\n\n# corrected by ringctl check ranks: "
				    "the ring's order surveyed "));
	assert_non_null(strstr(out, "rank 0 kept\nrank 0=n1 slot=0\n"
				    "rank 1=n2 slot=0\nrank 2=n4 slot=0\n"
				    "rank 3=n3 slot=0\n"));
	free(out);

	/* A cable between consecutive ranks down now: a problem the
	 * corrected order cannot mend. */
	c.e[3].live_state = "down";
	c.e[3].live_reason = "n3 eth2: no carrier";
	out = ranks_report(&c, "n1\nn2\nn4\nn3\n", &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_non_null(strstr(out, "\"pair\": \"n3-n1\""));
	assert_non_null(strstr(out, "\"cable_down\": \"n3 eth2: no carrier\""));
	assert_non_null(
		strstr(out, "\"warning_corrected\": \"no order avoids"));
	assert_non_null(strstr(out, "\"corrected\": \"none: "));
	free(out);
	c.e[3].live_state = "up";
	out = ranks_report(&c, "n1\nn2\nn4\nn3\n", &rc);
	assert_int_equal(rc, CHECK_OK);
	assert_non_null(strstr(out, "\"cable_now\": \"up\""));
	free(out);

	/* Three of the four: n3-n1 and n1-n2 are cables, n4-n3 too, but
	 * the order must close: n2 ... n3 or n4 ... n1 crosses. */
	out = ranks_report(&c, "n1\nn2\nn4\n", &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_non_null(strstr(out, "\"pair\": \"n4-n1\""));
	assert_non_null(strstr(out, "no order of these hosts avoids"));
	free(out);

	/* With RDMA (the reference cluster's hardware): the function is the
	 * device:port NCCL_IB_HCA lists, with its GID index. */
	{
		static char *hcas[2] = {"roceP2p1s0f1:1", "rocep1s0f1:1"};

		c.r[1].next_rdma = "rocep1s0f1";
		c.r[1].hcas = hcas;
		c.r[1].n_hcas = 2;
		c.r[1].gid_index = 3;
		out = ranks_report(&c, "n1\nn2\nn3\nn4\n", &rc);
		assert_int_equal(rc, CHECK_PROBLEMS);
		assert_non_null(
			strstr(out, "\"function\": \"rocep1s0f1:1 (eth2)\""));
		assert_non_null(strstr(out, "\"gid_index_measured\": 3"));
		free(out);
		c.r[1].n_hcas = 0;
		c.r[1].next_rdma = "";
	}

	/* Could not check: nothing on the output at all. */
	out = ranks_report(&c, "n1\nn9\n", &rc);
	assert_int_equal(rc, CHECK_CANNOT);
	assert_string_equal(out, "");
	free(out);
	out = ranks_report(&c, "n1\nn2\n10.88.0.11\n", &rc);
	assert_int_equal(rc, CHECK_CANNOT);
	assert_string_equal(out, "");
	free(out);
}

static char *rdzv_report(struct cluster *c, const char *arg, int *rc)
{
	struct testwriter tw;
	FILE *f = testwriter_stream(&tw);

	*rc = check_rendezvous_report(f, WRITER_JSON, arg, &c->st, NULL);
	return testwriter_close(&tw);
}

/* A top-level JSON member of out: the string's text into buf, or the
 * number. */
static void json_member(const char *out, const char *key, char *buf, size_t len)
{
	char pat[64];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(out, pat);
	assert_non_null(p);
	p += strlen(pat);
	if (*p == '"') {
		p++;
		n = strcspn(p, "\"");
	} else {
		n = strcspn(p, ",\n}");
	}
	assert_true(n < len);
	snprintf(buf, len, "%.*s", (int)n, p);
}

static size_t words(const char *s)
{
	size_t n = 0;

	for (const char *p = s; *p; p++)
		n += *p != ' ' && (p == s || p[-1] == ' ');
	return n;
}

/* The counts of a data-plane rendezvous record against each other, the
 * name lists, the summary and the predicted error: one data behind all
 * of them. The number of nodes that reach the address. */
static size_t rdzv_counts_agree(const char *out)
{
	char v[700], reach[700], nopath[700], want[1600];
	size_t total, nr, nn;

	json_member(out, "nodes_total", v, sizeof(v));
	total = strtoul(v, NULL, 10);
	json_member(out, "nodes_reach", v, sizeof(v));
	nr = strtoul(v, NULL, 10);
	json_member(out, "nodes_no_path", v, sizeof(v));
	nn = strtoul(v, NULL, 10);
	json_member(out, "reach_computed", reach, sizeof(reach));
	json_member(out, "no_path_computed", nopath, sizeof(nopath));
	assert_int_equal(nr + nn, total);
	assert_int_equal(words(reach), nr);
	assert_int_equal(words(nopath), nn);
	if (nn) {
		snprintf(want, sizeof(want),
			 "only %zu of %zu nodes can reach it (%s); %zu (%s) "
			 "ha%s no path, so at most %zu can join",
			 nr, total, reach, nn, nopath, nn == 1 ? "s" : "ve",
			 nr);
		assert_non_null(strstr(out, want));
		snprintf(want, sizeof(want), CHECK_RDZV_ERROR_FMT, nr, total);
		json_member(out, "error_predicted", v, sizeof(v));
		assert_string_equal(v, want);
	} else {
		snprintf(want, sizeof(want), "all %zu nodes have a path",
			 total);
		assert_non_null(strstr(out, want));
	}
	return nr;
}

static void test_rendezvous(void **state)
{
	struct cluster c;
	char *out, *out2;
	int rc;

	(void)state;
	cluster_init(&c);
	out = rdzv_report(&c, "10.88.0.11:29500", &rc);
	assert_int_equal(rc, CHECK_OK);
	assert_non_null(strstr(out, "\"address_kind\": \"management\""));
	assert_non_null(strstr(out, "\"port\": 29500"));
	assert_non_null(strstr(out, "\"checked\": \"on this host only"));
	free(out);

	/* n1's end of its cable to n2: reached by n1 and n2 only. */
	out = rdzv_report(&c, "10.89.1.1", &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_int_equal(rdzv_counts_agree(out), 2);
	assert_non_null(strstr(out, "\"no_path_computed\": \"n4 n3\""));
	assert_non_null(strstr(out, "\"reach_computed\": \"n1 n2\""));
	assert_non_null(strstr(out, "only 2 of 4 nodes can reach it (n1 n2); "
				    "2 (n4 n3) have no path, so at most 2 can "
				    "join"));
	assert_non_null(strstr(out, "2/4 clients joined"));
	assert_null(strstr(out, "3/4"));
	/* What to use: rank 0's management address, whoever's cable. */
	out2 = rdzv_report(&c, "10.89.3.2", &rc);
	assert_int_equal(rdzv_counts_agree(out2), 2);
	assert_non_null(strstr(out2, "use rank 0's management address "
				     "10.88.0.11 (n1)"));
	assert_non_null(strstr(out2, "\"use_address\": \"10.88.0.11\""));
	free(out2);
	free(out);

	/* The same cable down now: only n1 itself reaches it. */
	c.e[0].live_state = "down";
	out = rdzv_report(&c, "10.89.1.1", &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_int_equal(rdzv_counts_agree(out), 1);
	assert_non_null(strstr(out, "only 1 of 4 nodes can reach it (n1); "
				    "3 (n2 n4 n3) have no path"));
	assert_non_null(strstr(out, "1/4 clients joined"));
	free(out);
	c.e[0].live_state = "up";

	/* A diagonal check that found a path (n1 -> n4's 10.89.3.1). */
	c.d[0].path = 1;
	out = rdzv_report(&c, "10.89.3.1", &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_int_equal(rdzv_counts_agree(out), 3);
	assert_non_null(strstr(out, "\"no_path_computed\": \"n2\""));
	assert_non_null(strstr(out, "1 (n2) has no path"));
	free(out);

	/* Paths from everyone (both diagonal checks found one): still the
	 * wrong network, but no hang to predict. */
	c.d[1].b_address = (char *)data_a[3];
	c.d[1].path = 1;
	c.d[0].b_address = (char *)data_a[3];
	c.d[0].a = "n2";
	c.d[0].b = "n3";
	c.d[1].a = "n4";
	c.d[1].b = "n3";
	out = rdzv_report(&c, "10.89.4.1", &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_int_equal(rdzv_counts_agree(out), 4);
	assert_non_null(strstr(out, "all 4 nodes have a path to it"));
	assert_null(strstr(out, "error_predicted"));
	free(out);

	/* A name that does not resolve: said once, in words. */
	out = rdzv_report(&c, "nosuchhost.invalid:29500", &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_non_null(strstr(out, "nosuchhost.invalid does not resolve "
				    "here"));
	assert_null(strstr(out, "resolves to does not"));
	free(out);

	out = rdzv_report(&c, "192.0.2.1", &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_non_null(strstr(out, "ringd does not know"));
	free(out);
	out = rdzv_report(&c, "[::1]:99999", &rc);
	assert_int_equal(rc, CHECK_CANNOT);
	assert_string_equal(out, "");
	free(out);
	out = rdzv_report(&c, "n1:", &rc);
	assert_int_equal(rc, CHECK_CANNOT);
	free(out);
	out = rdzv_report(&c, "[::1]:80", &rc);
	assert_int_equal(rc, CHECK_PROBLEMS);
	assert_non_null(strstr(out, "\"host\": \"::1\""));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_hostfile),
		cmocka_unit_test(test_parse_rankfile),
		cmocka_unit_test(test_parse_ranks_output),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_match_address),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_ranks_report),
		cmocka_unit_test(test_rendezvous),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
