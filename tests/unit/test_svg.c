/* svg: the picture of the ring drawn from hand-built status replies (a
 * ring with an edge in every state, a switch, a line with its gap, no
 * survey, nothing at all, hostile names, and a reply far past every
 * bound), each document checked well-formed by a small XML reader, and
 * asserted on by its ids and classes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "topoview.h"

static const char *const cut_n3_n4[] = {"n3-n4"};
#include "svg.h"

/* ---- A small XML reader: well-formed or not ---- */

/* Only the references svg.c writes, and numeric ones. */
static int xml_ref(const char **p)
{
	static const char *const names[] = {"&amp;", "&lt;", "&gt;", "&quot;",
					    "&apos;"};

	for (size_t i = 0; i < 5; i++)
		if (!strncmp(*p, names[i], strlen(names[i]))) {
			*p += strlen(names[i]);
			return 0;
		}
	if ((*p)[1] == '#') {
		const char *q = *p + 2;

		while (*q >= '0' && *q <= '9')
			q++;
		if (q > *p + 2 && *q == ';') {
			*p = q + 1;
			return 0;
		}
	}
	return -1;
}

/* Text or an attribute value up to stop: no '<' nor a bare '&', no
 * control character; the bytes UTF-8. */
static int xml_chars(const char **p, char stop)
{
	while (**p && **p != stop) {
		unsigned char c = (unsigned char)**p;

		if (c == '<' || (c < 0x20 && c != '\n' && c != '\t') ||
		    c == 0x7f)
			return -1;
		if (c == '&') {
			if (xml_ref(p) < 0)
				return -1;
			continue;
		}
		if (c >= 0x80) {
			size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;

			if (c < 0xc2 || c > 0xf4)
				return -1;
			for (size_t i = 1; i < n; i++)
				if (((unsigned char)(*p)[i] & 0xc0) != 0x80)
					return -1;
			*p += n;
			continue;
		}
		(*p)++;
	}
	return 0;
}

/* -1 if doc is one <svg> element, its tags nested and closed, attributes
 * quoted, text escaped; else the offset where it is not. */
static long xml_check_at(const char *doc, const char **where);

static long xml_check(const char *doc)
{
	const char *where = doc;

	return xml_check_at(doc, &where) < 0 ? (long)(where - doc) : -1;
}

static long xml_check_at(const char *doc, const char **where)
{
	const char *stack[256];
	size_t depth = 0, roots = 0;
	const char *p = doc;

	while (*p) {
		*where = p;
		const char *name;
		size_t nl;

		if (*p != '<') {
			if (!depth && *p != '\n')
				return -1;
			if (xml_chars(&p, '<') < 0)
				return -1;
			continue;
		}
		p++;
		if (*p == '/') {
			name = ++p;
			nl = strcspn(p, "> ");
			if (!depth || strncmp(stack[depth - 1], name, nl) ||
			    !strchr(" >/", stack[depth - 1][nl]))
				return -1;
			depth--;
			p += nl;
			if (*p++ != '>')
				return -1;
			continue;
		}
		name = p;
		nl = strcspn(p, " />");
		if (!nl)
			return -1;
		p += nl;
		for (;;) {
			while (*p == ' ' || *p == '\n')
				p++;
			if (*p == '>' || (*p == '/' && p[1] == '>'))
				break;
			while ((*p >= 'a' && *p <= 'z') || *p == '-' ||
			       *p == ':' || (*p >= 'A' && *p <= 'Z') ||
			       (*p >= '0' && *p <= '9'))
				p++;
			if (*p++ != '=' || *p++ != '"')
				return -1;
			if (xml_chars(&p, '"') < 0 || *p++ != '"')
				return -1;
		}
		if (*p == '/') {
			p += 2;
			if (!depth)
				roots++;
			continue;
		}
		p++;
		if (!depth)
			roots++;
		if (depth == 256)
			return -1;
		stack[depth++] = name;
	}
	return depth == 0 && roots == 1 ? 0 : -1;
}

/* ---- The inputs ---- */

struct fx {
	Ring__StatusReply r;
	Ring__Topology t;
	Ring__NodeStatus st[8], *stp[8];
	Ring__Edge e[8], *ep[8];
	double up[8][3], down[8][3];
	uint32_t ladder[3];
	Ring__LatResult lat[8], *latp[8];
	Ring__DiagonalCheck d[4], *dp[4];
	Ring__Finding f[4], *fp[4];
	Ring__Alert al[2], *alp[2];
	char *order[8];
	/* A site of rings (fx_site). */
	Ring__RingView rv[3], *rvp[3];
	char *members[3][4], *rorder[3][4];
	Ring__Rank rk[3][4], *rkp[3][4];
};

static int fx_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void fx_node(struct fx *x, size_t i, const char *name, const char *state)
{
	ring__node_status__init(&x->st[i]);
	x->st[i].node = (char *)name;
	x->st[i].state = (char *)state;
	x->st[i].expected = 1;
	x->st[i].mgmt_address = "10.0.0.1";
	x->st[i].down_reason = strcmp(state, "up") ? "heartbeat timeout" : "";
	x->stp[i] = &x->st[i];
	x->r.n_nodes = i + 1;
	x->r.n_expected = i + 1;
	x->r.n_connected += !strcmp(state, "up");
}

static void fx_edge(struct fx *x, size_t i, const char *a, const char *b,
		    const char *live, double gbps)
{
	Ring__Edge *e = &x->e[i];

	ring__edge__init(e);
	e->a = (char *)a;
	e->b = (char *)b;
	e->a_interface = "eth2";
	e->b_interface = "eth1";
	e->n_ladder = 3;
	e->ladder = x->ladder;
	for (size_t k = 0; k < 3; k++) {
		x->up[i][k] = gbps;
		x->down[i][k] = gbps + 0.01;
	}
	e->n_gbps_a_to_b = 3;
	e->gbps_a_to_b = x->up[i];
	e->n_gbps_b_to_a = 3;
	e->gbps_b_to_a = x->down[i];
	ring__lat_result__init(&x->lat[i]);
	x->lat[i].size = 64;
	x->lat[i].p50_us = 15.5;
	x->latp[i] = &x->lat[i];
	e->n_latency = 1;
	e->latency = &x->latp[i];
	e->rdma_write_gbps_a_to_b = -1;
	e->rdma_write_gbps_b_to_a = -1;
	e->rdma_read_gbps_a_to_b = -1;
	e->rdma_read_gbps_b_to_a = -1;
	e->live_state = (char *)live;
	e->live_reason = !strcmp(live, "down") ? "n1 eth2: no carrier" : "";
	e->verified = 1;
	e->method = "tcp";
	x->ep[i] = e;
	x->t.n_edges = i + 1;
}

static void fx_diag(struct fx *x, size_t i, const char *a, const char *b,
		    int path)
{
	ring__diagonal_check__init(&x->d[i]);
	x->d[i].a = (char *)a;
	x->d[i].b = (char *)b;
	x->d[i].b_address = "10.1.0.2";
	x->d[i].path = path;
	x->d[i].verdict = path ? "a data-plane path (unexpected: a cable "
				 "or route too many)"
			       : "no data-plane path, as expected";
	x->dp[i] = &x->d[i];
	x->t.n_diagonals = i + 1;
}

/* The reference cluster's ring n1-n2-n4-n3, one edge in each live state, one
 * diagonal as it must be and one with a path, a finding, an alert, n3
 * down. */
static void fx_ring(struct fx *x)
{
	static const char *const order[] = {"n1", "n2", "n4", "n3"};

	memset(x, 0, sizeof(*x));
	ring__status_reply__init(&x->r);
	ring__topology__init(&x->t);
	x->ladder[0] = 1;
	x->ladder[1] = 4;
	x->ladder[2] = 8;
	fx_node(x, 0, "n1", "up");
	fx_node(x, 1, "n2", "up");
	fx_node(x, 2, "n3", "down");
	fx_node(x, 3, "n4", "up");
	x->r.nodes = x->stp;
	x->r.coordinator = "coord1";
	x->r.version = "0.1.0";
	x->r.health = "critical";
	x->r.now_ms = 1764800000000ULL;
	x->t.kind = "ring";
	for (size_t i = 0; i < 4; i++)
		x->order[i] = (char *)order[i];
	x->t.n_order = 4;
	x->t.order = x->order;
	fx_edge(x, 0, "n1", "n2", "up", 0.95);
	fx_edge(x, 1, "n2", "n4", "degraded", 0.40);
	fx_edge(x, 2, "n3", "n4", "down", 0.94);
	fx_edge(x, 3, "n1", "n3", "unverified", 0.93);
	x->e[0].rdma_write_gbps_a_to_b = 9.5;
	x->e[0].rdma_write_gbps_b_to_a = 9.1;
	x->t.edges = x->ep;
	fx_diag(x, 0, "n1", "n4", 0);
	fx_diag(x, 1, "n2", "n3", 1);
	x->t.diagonals = x->dp;
	ring__finding__init(&x->f[0]);
	x->f[0].code = "uniform_ceiling";
	x->f[0].level = "warn";
	x->f[0].text = "every edge tops out at 47% of its 2 Gbps nominal";
	x->fp[0] = &x->f[0];
	x->t.n_findings = 1;
	x->t.findings = x->fp;
	x->t.surveyed_ms = x->r.now_ms - 30000;
	x->t.live_kind = "line";
	x->t.live_gap = "n3-n4";
	x->t.live_cables_down = (char **)cut_n3_n4;
	x->t.n_live_cables_down = 1;
	ring__alert__init(&x->al[0]);
	x->al[0].rule = "cable_down";
	x->al[0].severity = RING__SEVERITY__SEVERITY_CRITICAL;
	x->al[0].firing = 1;
	x->al[0].subject = "n3-n4";
	x->al[0].message = "cable n3-n4 is down: n3 eth1: no carrier";
	x->alp[0] = &x->al[0];
	x->r.n_alerts = 1;
	x->r.alerts = x->alp;
	x->r.topology = &x->t;
}

/* One ring of x's site: members (ascending), the order, its ranks. */
static void fx_ring_view(struct fx *x, size_t k, const char *id,
			 const char *kind, const char *const *order, size_t n,
			 const char *health, uint32_t alerts)
{
	Ring__RingView *v = &x->rv[k];

	ring__ring_view__init(v);
	v->id = (char *)id;
	v->kind = (char *)kind;
	v->health = (char *)health;
	v->n_alerts = alerts;
	for (size_t i = 0; i < n; i++) {
		x->members[k][i] = (char *)order[i];
		x->rorder[k][i] = (char *)order[i];
		ring__rank__init(&x->rk[k][i]);
		x->rk[k][i].node = (char *)order[i];
		x->rk[k][i].rank = (uint32_t)i;
		x->rkp[k][i] = &x->rk[k][i];
	}
	qsort(x->members[k], n, sizeof(char *), fx_cmp);
	v->n_nodes = n;
	v->nodes = x->members[k];
	if (strcmp(kind, "split")) {
		v->n_order = n;
		v->order = x->rorder[k];
		v->n_ranks = n;
		v->ranks = x->rkp[k];
	}
	x->rvp[k] = v;
	x->t.n_rings = k + 1;
	x->t.rings = x->rvp;
}

/* A site of three rings: fx_ring's n1-n2-n4-n3 as pod-a (critical: the
 * cut n3-n4), the pair n5-n6 as ring-n5 (healthy), pod-c's n7 and n8 cut
 * apart (a split, critical, its own alert). Kind "rings", no top-level
 * order, as the coordinator publishes a site of several rings. */
static void fx_site(struct fx *x)
{
	static const char *const a[] = {"n1", "n2", "n4", "n3"};
	static const char *const b[] = {"n5", "n6"};
	static const char *const c[] = {"n7", "n8"};

	fx_ring(x);
	fx_node(x, 4, "n5", "up");
	fx_node(x, 5, "n6", "up");
	fx_node(x, 6, "n7", "up");
	fx_node(x, 7, "n8", "up");
	fx_edge(x, 4, "n5", "n6", "up", 9.41);
	fx_edge(x, 5, "n7", "n8", "down", 0.9);
	x->t.kind = "rings";
	x->t.live_kind = "rings";
	x->t.n_order = 0;
	x->t.live_gap = "";
	x->t.n_live_cables_down = 0;
	x->al[0].ring = "pod-a";
	ring__alert__init(&x->al[1]);
	x->al[1].rule = "cable_down";
	x->al[1].severity = RING__SEVERITY__SEVERITY_CRITICAL;
	x->al[1].firing = 1;
	x->al[1].subject = "n7-n8";
	x->al[1].ring = "pod-c";
	x->al[1].message = "cable n7-n8 is down: the pod-c cable";
	x->alp[1] = &x->al[1];
	x->r.n_alerts = 2;
	fx_ring_view(x, 0, "pod-a", "ring", a, 4, "critical", 1);
	x->rv[0].configured = 1;
	x->rv[0].health_text = "pod-a: cable n3-n4 is down";
	fx_ring_view(x, 1, "ring-n5", "pair", b, 2, "healthy", 0);
	fx_ring_view(x, 2, "pod-c", "split", c, 2, "critical", 1);
	x->rv[2].n_components = 2;
}

static char *draw(const Ring__StatusReply *r, size_t *len)
{
	size_t n = 0;
	char *doc = svg_render(r, &n);
	long at;

	assert_non_null(doc);
	assert_int_equal(strlen(doc), n);
	assert_true(n < SVG_MAX_BYTES);
	at = xml_check(doc);
	if (at >= 0) {
		fprintf(stderr, "not well-formed at byte %ld: %.200s\n", at,
			doc + at);
		fail();
	}
	/* RING_SVG_DUMP=DIR: each picture kept, to be looked at. */
	if (getenv("RING_SVG_DUMP")) {
		static unsigned seq;
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/test_svg-%u.svg",
			 getenv("RING_SVG_DUMP"), seq++);
		f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(doc, 1, n, f), n);
		assert_int_equal(fclose(f), 0);
		/* The reply itself: seeds for fuzz_svg. */
		if (ring__status_reply__get_packed_size(r) < 65536) {
			uint8_t *pb = malloc(65536);
			size_t pn;

			assert_non_null(pb);
			pn = ring__status_reply__pack(r, pb);
			snprintf(path, sizeof(path), "%s/test_svg-%u.pb",
				 getenv("RING_SVG_DUMP"), seq - 1);
			f = fopen(path, "w");
			assert_non_null(f);
			assert_int_equal(fwrite(pb, 1, pn, f), pn);
			assert_int_equal(fclose(f), 0);
			free(pb);
		}
	}
	if (len)
		*len = n;
	return doc;
}

/* The element that holds id="ID", from its '<' to its '>'. */
static char *tag_of(const char *doc, const char *id)
{
	char key[160];
	const char *p, *start;

	snprintf(key, sizeof(key), "id=\"%s\"", id);
	p = strstr(doc, key);
	if (!p)
		return NULL;
	start = p;
	while (start > doc && *start != '<')
		start--;
	return strndup(start, strcspn(start, ">") + 1);
}

/* The group <g id="ID" ...> ... </g> (groups do not nest in svg.c). */
static char *group_of(const char *doc, const char *id)
{
	char *t = tag_of(doc, id);
	const char *p = t ? strstr(doc, t) : NULL;
	char *g;

	assert_non_null(p);
	g = strndup(p, (size_t)(strstr(p, "</g>") - p));
	free(t);
	return g;
}

static void expect_tag(const char *doc, const char *id, const char *has)
{
	char *t = tag_of(doc, id);

	if (!t || !strstr(t, has)) {
		fprintf(stderr, "%s: want '%s' in %s\n", id, has,
			t ? t : "(no such element)");
		fail();
	}
	free(t);
}

/* ---- Tests ---- */

/* The picture's "measured at": RFC 3339 UTC, and the word for never when
 * there is no time or no room for it. */
static void test_clock_format(void **state)
{
	char buf[32], small[8];

	(void)state;
	clock_format_utc(1796360565123ULL, buf, sizeof(buf), "never");
	assert_string_equal(buf, "2026-12-04T05:02:45Z");
	clock_format_utc(0, buf, sizeof(buf), "never");
	assert_string_equal(buf, "never");
	clock_format_utc(1796360565123ULL, small, sizeof(small), "?");
	assert_string_equal(small, "?");
}

/* Each diagonal pair once, at its first check, showing a path on any of
 * its addresses. */
static void test_diagonal_pairs(void **state)
{
	Ring__DiagonalCheck c[3], *v[3] = {&c[0], &c[1], &c[2]};
	Ring__Topology t = RING__TOPOLOGY__INIT;
	const char *pairs[3][2] = {{"n1", "n3"}, {"n2", "n4"}, {"n1", "n3"}};
	size_t n = 99;

	(void)state;
	for (int k = 0; k < 3; k++) {
		ring__diagonal_check__init(&c[k]);
		c[k].a = (char *)pairs[k][0];
		c[k].b = (char *)pairs[k][1];
	}
	c[2].path = 1;
	t.diagonals = v;
	t.n_diagonals = 3;
	assert_ptr_equal(topoview_diagonal(&t, 0, &n), &c[2]);
	assert_int_equal(n, 2);
	assert_ptr_equal(topoview_diagonal(&t, 1, &n), &c[1]);
	assert_int_equal(n, 1);
	assert_null(topoview_diagonal(&t, 2, &n));
	c[2].path = 0;
	assert_ptr_equal(topoview_diagonal(&t, 0, NULL), &c[0]);
}

/* An edge's figure: the top of its ladder, the worse direction; one
 * direction when the other failed; none without a ladder both ways. */
static void test_edge_gbps(void **state)
{
	Ring__Edge e = RING__EDGE__INIT;
	double ab[] = {1.0, 5.0}, ba[] = {2.0, 4.0};

	(void)state;
	assert_true(topoview_edge_gbps(NULL) < 0);
	assert_true(topoview_edge_gbps(&e) < 0);
	e.gbps_a_to_b = ab;
	e.n_gbps_a_to_b = 2;
	e.gbps_b_to_a = ba;
	e.n_gbps_b_to_a = 2;
	assert_true(topoview_edge_gbps(&e) == 4.0);
	ba[1] = -1;
	assert_true(topoview_edge_gbps(&e) == 5.0);
}

/* The overlay in words from its data: a node down and a cable down read
 * differently, every node and cable is named, a surveyed line names its
 * missing cable, and nothing comes from live_gap's text. */
static void test_live_text(void **state)
{
	Ring__Topology t = RING__TOPOLOGY__INIT;
	char *down[] = {"n4", "n2"}, *cut[] = {"n1-n2", "n3-n4", "n5-n6"};
	char buf[200], small[12];

	(void)state;
	t.kind = "ring";
	t.live_kind = "ring";
	t.live_gap = "n9 down"; /* never read */
	topoview_live_text(&t, 1, buf, sizeof(buf));
	assert_string_equal(buf, "a ring");
	t.live_kind = "line";
	t.live_nodes_down = down;
	t.n_live_nodes_down = 1;
	topoview_live_text(&t, 1, buf, sizeof(buf));
	assert_string_equal(buf, "a line: n4 is down");
	t.n_live_nodes_down = 0;
	t.live_cables_down = cut;
	t.n_live_cables_down = 1;
	topoview_live_text(&t, 0, buf, sizeof(buf));
	assert_string_equal(buf, "line: the cable n1-n2 is down");
	t.live_kind = "split";
	t.n_live_cables_down = 3;
	t.n_live_nodes_down = 2;
	topoview_live_text(&t, 1, buf, sizeof(buf));
	assert_string_equal(buf, "split: the cables n1-n2, n3-n4 and n5-n6 "
				 "are down; n4 and n2 are down");
	/* Truncated to fit, the length it needed said. */
	assert_int_equal(topoview_live_text(&t, 1, small, sizeof(small)),
			 strlen(buf));
	assert_string_equal(small, "split: the ");
	t.n_live_cables_down = 0;
	t.n_live_nodes_down = 0;
	t.kind = "line";
	t.live_kind = "line";
	t.line_gap = "n1-n3";
	topoview_live_text(&t, 1, buf, sizeof(buf));
	assert_string_equal(buf, "a line with no cable n1-n3");
}

static void test_ring(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	const char *p1, *p2, *p4, *p3;
	char *doc, *grp;

	(void)state;
	fx_ring(x);
	doc = draw(&x->r, NULL);
	assert_true(
		!strncmp(doc, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39));
	/* The nodes in ring order, the order on each. */
	expect_tag(doc, "node-n1", "class=\"node up\" data-order=\"0\"");
	expect_tag(doc, "node-n2", "data-order=\"1\"");
	expect_tag(doc, "node-n4", "data-order=\"2\"");
	expect_tag(doc, "node-n3", "class=\"node down\" data-order=\"3\"");
	p1 = strstr(doc, "id=\"node-n1\"");
	p2 = strstr(doc, "id=\"node-n2\"");
	p4 = strstr(doc, "id=\"node-n4\"");
	p3 = strstr(doc, "id=\"node-n3\"");
	assert_true(p1 < p2 && p2 < p4 && p4 < p3);
	/* n1 at the top of the circle, n2 to its right (clockwise). */
	expect_tag(doc, "node-n1", "translate(500.0 170.0)");
	expect_tag(doc, "node-n2", "translate(720.0 390.0)");
	/* Every live state, its colour. */
	expect_tag(doc, "edge-n1-n2", "class=\"edge up\"");
	expect_tag(doc, "edge-n2-n4", "class=\"edge degraded\"");
	expect_tag(doc, "edge-n3-n4", "class=\"edge down\"");
	expect_tag(doc, "edge-n1-n3", "class=\"edge unverified\"");
	assert_non_null(strstr(doc, "stroke=\"#c62828\" stroke-width=\"4\" "
				    "stroke-dasharray=\"3 7\""));
	assert_non_null(strstr(doc, "class=\"cut\""));
	/* The figures: top of the ladder, worse direction; RDMA where
	 * measured. */
	assert_non_null(strstr(doc, "0.95 Gbps \xc2\xb7 15.5 \xc2\xb5s"));
	assert_non_null(strstr(doc, "0.40 Gbps"));
	assert_non_null(strstr(doc, "RDMA 9.10 Gbps"));
	grp = group_of(doc, "edge-n2-n4");
	assert_null(strstr(grp, "RDMA"));
	free(grp);
	assert_non_null(strstr(doc, "n1 eth2: no carrier"));
	/* Diagonals: dashed, with their verdict. */
	expect_tag(doc, "diag-n1-n4", "class=\"diagonal ok\"");
	expect_tag(doc, "diag-n2-n3", "class=\"diagonal path\"");
	assert_non_null(strstr(doc, ">n1-n4: no path</text>"));
	assert_non_null(strstr(doc, ">n2-n3: a path (unexpected)</text>"));
	/* Their verdicts listed: the short one, or all of a path's. */
	assert_non_null(strstr(doc, "<text class=\"diagonal-verdict ok\""));
	assert_non_null(strstr(doc, ">n1-n4:</tspan> <tspan>no data-plane "
				    "path, as expected</tspan>"));
	assert_non_null(strstr(doc, ">n2-n3:</tspan> <tspan>a data-plane "
				    "path (unexpected: a cable or route too "
				    "many)</tspan>"));
	/* Findings, alerts, the node down, when. */
	assert_non_null(strstr(doc, "class=\"finding warn\""));
	assert_non_null(strstr(doc, "every edge tops out at 47%"));
	assert_non_null(strstr(doc, "class=\"alert critical\""));
	assert_non_null(strstr(doc, "cable n3-n4 is down"));
	assert_non_null(strstr(doc, "heartbeat timeout"));
	assert_non_null(strstr(doc, "class=\"health critical\""));
	assert_non_null(strstr(doc, "measured 2025-12-03T22:12:50Z (30s "
				    "before)"));
	assert_non_null(strstr(doc, "now a line: the cable n3-n4 is down"));
	assert_null(strstr(doc, "missing n3-n4"));
	assert_non_null(strstr(doc, ">ring n1\xe2\x80\x93n2\xe2\x80\x93n4"
				    "\xe2\x80\x93n3\xe2\x80\x93n1</text>"));
	free(doc);
	/* No overlay: measured; twins side by side, each its own id. */
	x->e[1].live_state = "";
	x->e[2] = x->e[0];
	x->e[2].a_interface = "eth3";
	x->e[2].twin = 1;
	x->e[2].live_state = "up";
	doc = draw(&x->r, NULL);
	expect_tag(doc, "edge-n2-n4", "class=\"edge measured\"");
	expect_tag(doc, "edge-n1-n2", "class=\"edge up\"");
	expect_tag(doc, "edge-n1-n2:eth3", "class=\"edge up\"");
	free(doc);
	free(x);
}

/* Names and texts from certificates, configs and agents: never markup. */
static void test_escaping(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	static const char evil[] = "a<b>&\"c'\x01\xff\xef\xbf\xbe";
	char *doc;

	(void)state;
	fx_ring(x);
	x->st[0].node = (char *)evil;
	x->order[0] = (char *)evil;
	x->e[0].a = (char *)evil;
	x->d[0].a = (char *)evil;
	x->f[0].text = "</text><script>alert(1)</script><![CDATA[ ]]> &amp;";
	x->al[0].message = "\"><foreignObject/>";
	x->r.coordinator = "c<&>";
	x->st[2].down_reason = "reason \x1b[31m red";
	doc = draw(&x->r, NULL);
	assert_null(strstr(doc, "<script"));
	assert_null(strstr(doc, "<foreignObject"));
	assert_null(strstr(doc, "<![CDATA["));
	assert_null(strstr(doc, "\x1b"));
	assert_null(strstr(doc, "\xff"));
	assert_non_null(
		strstr(doc, "&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
			    "&lt;![CDATA[ ]]&gt; &amp;amp;"));
	assert_non_null(strstr(doc, "&quot;&gt;&lt;foreignObject/&gt;"));
	/* The name: escaped where it is text, U+FFFD for the control
	 * character, the byte that is not UTF-8 and the non-character. */
	assert_non_null(strstr(doc, "data-name=\"a&lt;b&gt;&amp;&quot;c&#39;"
				    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""));
	/* The id: only safe bytes. */
	assert_non_null(strstr(doc, "id=\"node-a_b___c_"));
	assert_non_null(strstr(doc, "ringd: c&lt;&amp;&gt;</title>"));
	free(doc);
	free(x);
}

static void test_switch(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	char *doc;

	(void)state;
	fx_ring(x);
	x->t.kind = "switch";
	x->t.n_diagonals = 0;
	x->t.live_kind = "";
	x->t.live_gap = "";
	doc = draw(&x->r, NULL);
	expect_tag(doc, "switch", "class=\"switch\"");
	/* Spokes, not cables between the nodes: the edges listed. */
	assert_null(strstr(doc, "class=\"edge "));
	assert_non_null(strstr(doc, "class=\"edge-note up\""));
	assert_non_null(strstr(doc, ">n1-n2:</tspan> <tspan>up, 0.95 Gbps "
				    "\xc2\xb7 15.5 \xc2\xb5s, RDMA 9.10 "
				    "Gbps</tspan>"));
	assert_non_null(strstr(doc, ">n3-n4:</tspan> <tspan>down, 0.94 Gbps "
				    "\xc2\xb7 15.5 \xc2\xb5s</tspan>"));
	expect_tag(doc, "node-n3", "data-order=\"3\"");
	free(doc);
	free(x);
}

static void test_line_gap_and_row(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	char *doc;

	(void)state;
	fx_ring(x);
	/* n3 down and out of the order: a line n3... no: n1-n2-n4, and n3
	 * below the circle. */
	x->t.kind = "line";
	x->t.n_order = 3;
	x->t.n_edges = 2;
	x->t.n_diagonals = 0;
	x->t.line_gap = "n1-n4";
	x->t.live_kind = "";
	x->t.live_gap = "";
	doc = draw(&x->r, NULL);
	expect_tag(doc, "gap-n1-n4", "class=\"edge missing\"");
	expect_tag(doc, "node-n3", "data-order=\"-1\"");
	assert_non_null(strstr(doc, "not in the measured order"));
	free(doc);
	free(x);
}

static void test_empty(void **state)
{
	Ring__StatusReply r = RING__STATUS_REPLY__INIT;
	struct fx *x = calloc(1, sizeof(*x));
	char *doc;

	(void)state;
	doc = draw(&r, NULL);
	assert_non_null(strstr(doc, "no nodes known yet"));
	assert_non_null(strstr(doc, "no survey yet"));
	assert_non_null(strstr(doc, "class=\"health unknown\""));
	free(doc);
	/* Nodes, no survey yet: by name, on the circle. */
	fx_ring(x);
	x->r.topology = NULL;
	doc = draw(&x->r, NULL);
	assert_non_null(strstr(doc, "no survey yet"));
	expect_tag(doc, "node-n3", "data-order=\"2\"");
	expect_tag(doc, "node-n4", "data-order=\"3\"");
	assert_null(strstr(doc, "class=\"edge "));
	free(doc);
	free(x);
}

/* Rings of every size the circle must hold: each node drawn once, on the
 * circle, in order; twin cables of a pair side by side. */
static void test_sizes(void **state)
{
	static const size_t sizes[] = {1, 2, 3, 12, 64};
	struct fx *x = calloc(1, sizeof(*x));
	char(*names)[16] = calloc(64, 16);
	char **order = calloc(64, sizeof(*order));
	Ring__Edge *e = calloc(64, sizeof(*e));
	Ring__Edge **ep = calloc(64, sizeof(*ep));

	(void)state;
	assert_true(x && names && order && e && ep);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		char *doc, id[48];

		fx_ring(x);
		x->r.n_nodes = 0;
		x->r.n_alerts = 0;
		x->t.n_diagonals = 0;
		x->t.n_findings = 0;
		x->t.kind = n == 2 ? "pair" : "ring";
		for (size_t i = 0; i < 64; i++) {
			snprintf(names[i], 16, "gpu-node-%02u", (unsigned)i);
			order[i] = names[i];
		}
		for (size_t i = 0; i < n && n > 1; i++) {
			fx_edge(x, 0, names[i], names[(i + 1) % n], "up", 1.5);
			e[i] = x->e[0];
			e[i].a_interface = n == 2 && i ? "eth3" : "eth2";
			e[i].twin = n == 2 && i;
			ep[i] = &e[i];
		}
		x->t.n_order = n;
		x->t.order = order;
		x->t.n_edges = n > 1 ? n : 0;
		x->t.edges = ep;
		doc = draw(&x->r, NULL);
		for (size_t i = 0; i < n; i++) {
			char want[48];

			snprintf(id, sizeof(id), "node-gpu-node-%02zu", i);
			snprintf(want, sizeof(want), "data-order=\"%zu\"", i);
			expect_tag(doc, id, want);
		}
		assert_null(strstr(doc, "not drawn"));
		/* Past SVG_FULL_NODES: the figures in a list, not beside
		 * the lines. */
		if (n > 1) {
			assert_true(!strstr(doc, "class=\"edge-label\"") ==
				    (n > 16));
			assert_true(!strstr(doc, "class=\"edge-note up\"") ==
				    (n <= 16));
		}
		if (n == 2) {
			expect_tag(doc, "edge-gpu-node-00-gpu-node-01",
				   "class=\"edge up\"");
			expect_tag(doc, "edge-gpu-node-01-gpu-node-00:eth3",
				   "class=\"edge up\"");
		}
		free(doc);
	}
	free(ep);
	free(e);
	free(order);
	free(names);
	free(x);
}

/* Far past every bound: the document stays under SVG_MAX_BYTES, whole
 * and well-formed, and says what it left out. */
static void test_bounded(void **state)
{
	enum { NODES = 1000, EDGES = 2000, NOTES = 500 };
	struct fx *x = calloc(1, sizeof(*x));
	char(*names)[64] = calloc(NODES, 64);
	char *text = malloc(5000);
	Ring__NodeStatus *st = calloc(NODES, sizeof(*st));
	Ring__NodeStatus **stp = calloc(NODES, sizeof(*stp));
	Ring__Edge *e = calloc(EDGES, sizeof(*e));
	Ring__Edge **ep = calloc(EDGES, sizeof(*ep));
	Ring__Finding *f = calloc(NOTES, sizeof(*f));
	Ring__Finding **fp = calloc(NOTES, sizeof(*fp));
	Ring__DiagonalCheck *d = calloc(NOTES, sizeof(*d));
	Ring__DiagonalCheck **dp = calloc(NOTES, sizeof(*dp));
	char **order = calloc(NODES, sizeof(*order));
	size_t len;
	char *doc;

	(void)state;
	assert_true(names && text && st && stp && e && ep && f && fp && d &&
		    dp && order);
	fx_ring(x);
	/* '"' is the longest escape (&quot;): the worst case. */
	memset(text, '"', 4999);
	text[4999] = '\0';
	for (size_t i = 0; i < NODES; i++) {
		/* 63 bytes, 59 of them escaped to 6 */
		snprintf(names[i], 64, "%04zu", i);
		memset(names[i] + 4, '"', 59);
		names[i][63] = '\0';
		ring__node_status__init(&st[i]);
		st[i].node = names[i];
		st[i].state = i % 2 ? "down" : "up";
		st[i].down_reason = text;
		st[i].mgmt_address = text;
		stp[i] = &st[i];
		order[i] = names[i];
	}
	for (size_t i = 0; i < EDGES; i++) {
		fx_edge(x, 0, names[i % NODES], names[(i + 1) % NODES], "down",
			1.0);
		e[i] = x->e[0];
		e[i].live_reason = text;
		e[i].error = text;
		ep[i] = &e[i];
	}
	for (size_t i = 0; i < NOTES; i++) {
		ring__finding__init(&f[i]);
		f[i].level = "warn";
		f[i].text = text;
		fp[i] = &f[i];
		ring__diagonal_check__init(&d[i]);
		d[i].a = names[i];
		d[i].b = names[i + NOTES];
		d[i].path = 1;
		d[i].verdict = text;
		dp[i] = &d[i];
	}
	x->r.n_nodes = NODES;
	x->r.nodes = stp;
	x->t.n_order = NODES;
	x->t.order = order;
	x->t.n_edges = EDGES;
	x->t.edges = ep;
	x->t.n_findings = NOTES;
	x->t.findings = fp;
	x->t.n_anomalies = NOTES;
	x->t.anomalies = fp;
	x->t.n_diagonals = NOTES;
	x->t.diagonals = dp;
	x->t.n_not_surveyed = NOTES;
	x->t.not_surveyed = order;
	doc = draw(&x->r, &len);
	fprintf(stderr, "bounded: %zu bytes (limit %d)\n", len, SVG_MAX_BYTES);
	assert_non_null(strstr(doc, "936 more nodes not drawn"));
	assert_non_null(strstr(doc, "and 476 more"));
	assert_true(len < SVG_MAX_BYTES);
	free(doc);
	free(order);
	free(dp);
	free(d);
	free(fp);
	free(f);
	free(ep);
	free(e);
	free(stp);
	free(st);
	free(text);
	free(names);
	free(x);
}

/* An alert in its hold-down: listed as clearing, in grey; the health's
 * cause and subject beside its word, its text on hover; relearning has
 * its own class. */
static void test_clearing_and_cause(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	char *doc;

	(void)state;
	assert_non_null(x);
	fx_ring(x);
	x->al[0].clearing = 1;
	x->al[0].cleared_ms = x->r.now_ms - 2000;
	x->r.health_cause = "cable_down";
	x->r.health_subject = "n3-n4";
	x->r.health_text = "cable n3-n4 is down (clearing: the condition "
			   "went away; resolved if it stays away for the "
			   "hold-down) <&>";
	doc = draw(&x->r, NULL);
	assert_non_null(strstr(doc, "class=\"alert critical clearing\""));
	assert_non_null(strstr(doc, ">critical cable_down (clearing):"));
	assert_non_null(strstr(doc, "fill=\"#616161\" font-weight=\"bold\">"
				    "critical cable_down (clearing)"));
	assert_non_null(strstr(doc, "<tspan id=\"health-cause\">(cable_down "
				    "n3-n4)</tspan>"));
	assert_non_null(strstr(doc, "<title>cable n3-n4 is down (clearing:"));
	assert_non_null(strstr(doc, "hold-down) &lt;&amp;&gt;</title>"));
	free(doc);
	x->r.health = "relearning";
	x->r.health_cause = "relearning";
	x->r.health_subject = "coordinator";
	doc = draw(&x->r, NULL);
	assert_non_null(strstr(doc, "class=\"health relearning\""));
	free(doc);
	free(x);
}

/* The nested picture of ring id: from <svg id="ring-ID" to its </svg>. */
static char *ring_picture(const char *doc, const char *id)
{
	char key[128];
	const char *p, *end;

	snprintf(key, sizeof(key), "<svg id=\"ring-%s\"", id);
	p = strstr(doc, key);
	if (!p)
		return NULL;
	end = strstr(p, "</svg>");
	assert_non_null(end);
	return strndup(p, (size_t)(end - p));
}

/* A site of three rings: the overview (a tile per ring, its health, class,
 * nodes and alerts), then each ring's own picture, the worst first, each
 * holding only its members, cables and alerts. */
static void test_site(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct svg_opts linked = {.link = "/?ring="};
	char *doc, *pa, *pb, *pc;
	size_t n;

	(void)state;
	fx_site(x);
	doc = draw(&x->r, NULL);
	assert_true(
		!strncmp(doc,
			 "<svg xmlns=\"http://www.w3.org/2000/svg\" "
			 "id=\"ringd-picture\" class=\"ringd site\"",
			 strlen("<svg xmlns=\"http://www.w3.org/2000/svg\" "
				"id=\"ringd-picture\" class=\"ringd site\"")));
	assert_non_null(strstr(doc, ">3 rings</text>"));
	expect_tag(doc, "overview", "class=\"overview\"");
	expect_tag(doc, "tile-pod-a", "class=\"ring-tile critical\"");
	expect_tag(doc, "tile-pod-a", "data-ring=\"pod-a\"");
	expect_tag(doc, "tile-ring-n5", "class=\"ring-tile healthy\"");
	expect_tag(doc, "tile-pod-c", "class=\"ring-tile critical\"");
	assert_non_null(strstr(doc, ">ring \xc2\xb7 4 nodes</text>"));
	assert_non_null(strstr(doc, ">split \xc2\xb7 2 nodes</text>"));
	assert_non_null(strstr(doc, ">critical \xc2\xb7 1 alert</text>"));
	assert_non_null(strstr(doc, ">healthy \xc2\xb7 0 alerts</text>"));
	assert_non_null(strstr(doc, "<title>pod-a: cable n3-n4 is down"));
	/* ringctl's file: no links */
	assert_null(strstr(doc, "<a href"));
	/* the worst first, then the site's order */
	pa = strstr(doc, "<svg id=\"ring-pod-a\"");
	pb = strstr(doc, "<svg id=\"ring-ring-n5\"");
	pc = strstr(doc, "<svg id=\"ring-pod-c\"");
	assert_true(pa && pb && pc && pa < pc && pc < pb);
	expect_tag(doc, "ring-pod-a", "class=\"ring\" data-ring=\"pod-a\"");
	/* each picture's fixed ids its own; the site's once */
	expect_tag(doc, "ring-pod-a-health", "class=\"health critical\"");
	expect_tag(doc, "ring-ring-n5-health", "class=\"health healthy\"");
	expect_tag(doc, "health", "class=\"health critical\"");
	expect_tag(doc, "ring-pod-c-legend", "transform=");
	pa = ring_picture(doc, "pod-a");
	pb = ring_picture(doc, "ring-n5");
	pc = ring_picture(doc, "pod-c");
	/* pod-a: its order on the circle, its cut, its alert alone */
	expect_tag(pa, "node-n1", "data-order=\"0\"");
	expect_tag(pa, "node-n3", "class=\"node down\" data-order=\"3\"");
	expect_tag(pa, "edge-n3-n4", "class=\"edge down\"");
	assert_non_null(strstr(pa, ">pod-a: ring n1\xe2\x80\x93n2"));
	assert_non_null(strstr(pa, "cable n3-n4 is down"));
	assert_null(strstr(pa, "node-n5"));
	assert_null(strstr(pa, "the pod-c cable"));
	assert_null(strstr(pa, "edge-n7-n8"));
	/* the pair: its two nodes, up; 2 of 2 connected */
	expect_tag(pb, "node-n5", "class=\"node up\" data-order=\"0\"");
	expect_tag(pb, "edge-n5-n6", "class=\"edge up\"");
	assert_non_null(strstr(pb, "2 of 2 expected nodes connected"));
	assert_null(strstr(pb, "node-n1"));
	assert_null(strstr(pb, "class=\"alert "));
	/* the split: no order, its cable down, its own alert */
	expect_tag(pc, "edge-n7-n8", "class=\"edge down\"");
	assert_non_null(strstr(pc, "the pod-c cable"));
	assert_null(strstr(pc, "cable n3-n4 is down"));
	free(pa);
	free(pb);
	free(pc);
	free(doc);
	/* the page's: each tile a link to its ring's page */
	doc = svg_render_opts(&x->r, &linked, &n);
	assert_non_null(doc);
	assert_int_equal(xml_check(doc), -1);
	assert_non_null(strstr(doc, "<a href=\"/?ring=pod-a\"><g "
				    "id=\"tile-pod-a\""));
	assert_non_null(strstr(doc, "<a href=\"/?ring=ring-n5\">"));
	free(doc);
	free(x);
}

/* One ring of a site drawn alone (`status -f svg --ring`, the page's
 * ?ring=): a document of its own, exactly as a site of that one ring;
 * an id that is no ring's: ENOENT. A site of one ring: today's picture,
 * byte for byte, whether the reply lists its ring or not. */
static void test_site_one_ring(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct svg_opts one = {.ring = "ring-n5"}, none = {.ring = "pod-z"};
	char *doc, *plain;
	size_t n, m;

	(void)state;
	fx_site(x);
	doc = svg_render_opts(&x->r, &one, &n);
	assert_non_null(doc);
	assert_int_equal(xml_check(doc), -1);
	assert_true(!strncmp(doc,
			     "<svg xmlns=\"http://www.w3.org/2000/svg\" "
			     "id=\"ringd-picture\" class=\"ringd\" ",
			     strlen("<svg xmlns=\"http://www.w3.org/2000/svg\" "
				    "id=\"ringd-picture\" class=\"ringd\" ")));
	expect_tag(doc, "node-n5", "class=\"node up\" data-order=\"0\"");
	expect_tag(doc, "node-n6", "data-order=\"1\"");
	expect_tag(doc, "health", "class=\"health healthy\"");
	assert_null(strstr(doc, "node-n1"));
	assert_null(strstr(doc, "tile-"));
	assert_non_null(strstr(doc, ">pair n5\xe2\x80\x93n6</text>"));
	free(doc);
	errno = 0;
	assert_null(svg_render_opts(&x->r, &none, &n));
	assert_int_equal(errno, ENOENT);
	/* a ring listing no members (a hostile reply): drawn, empty */
	x->rv[1].n_nodes = 0;
	x->rv[1].nodes = NULL;
	doc = svg_render_opts(&x->r, &one, &n);
	assert_non_null(doc);
	assert_int_equal(xml_check(doc), -1);
	assert_non_null(strstr(doc, "0 of 0 expected nodes"));
	free(doc);
	free(draw(&x->r, NULL));
	free(x);
	/* one ring, listed or not, named or not: the same bytes */
	x = calloc(1, sizeof(*x));
	fx_ring(x);
	plain = draw(&x->r, &m);
	fx_ring_view(x, 0, "ring-n1", "ring",
		     (const char *const[]){"n1", "n2", "n4", "n3"}, 4,
		     "critical", 1);
	doc = draw(&x->r, &n);
	assert_int_equal(n, m);
	assert_string_equal(doc, plain);
	free(doc);
	one.ring = "ring-n1";
	doc = svg_render_opts(&x->r, &one, &n);
	assert_non_null(doc);
	assert_string_equal(doc, plain);
	free(doc);
	free(plain);
	free(x);
}

/* Thousands of rings: a bounded overview (SVG_SITE_MAX_TILES tiles, the
 * rest counted), at most SVG_SITE_MAX_PICTURES pictures, under
 * SVG_MAX_BYTES. */
static void test_site_bounded(void **state)
{
	enum { RINGS = 3000 };
	struct fx *x = calloc(1, sizeof(*x));
	Ring__RingView *rv = calloc(RINGS, sizeof(*rv));
	Ring__RingView **rvp = calloc(RINGS, sizeof(*rvp));
	char(*ids)[64] = calloc(RINGS, 64);
	size_t len, tiles = 0, pictures = 0;
	char *doc;

	(void)state;
	assert_true(rv && rvp && ids);
	fx_site(x);
	for (size_t k = 0; k < RINGS; k++) {
		rv[k] = x->rv[k % 3];
		/* 63 bytes: the longest id */
		snprintf(ids[k], 64, "%05zu", k);
		memset(ids[k] + 5, 'x', 58);
		rv[k].id = ids[k];
		rvp[k] = &rv[k];
	}
	x->t.n_rings = RINGS;
	x->t.rings = rvp;
	doc = draw(&x->r, &len);
	fprintf(stderr, "site bounded: %zu bytes (limit %d)\n", len,
		SVG_MAX_BYTES);
	for (const char *p = doc; (p = strstr(p, "class=\"ring-tile ")); p++)
		tiles++;
	for (const char *p = doc; (p = strstr(p, "<svg id=\"ring-")); p++)
		pictures++;
	assert_int_equal(tiles, SVG_SITE_MAX_TILES);
	assert_true(pictures >= 1 && pictures <= SVG_SITE_MAX_PICTURES);
	assert_non_null(strstr(doc, "and 2760 more rings"));
	assert_non_null(strstr(doc, "more rings not drawn here"));
	free(doc);
	free(ids);
	free(rvp);
	free(rv);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_format),
		cmocka_unit_test(test_diagonal_pairs),
		cmocka_unit_test(test_edge_gbps),
		cmocka_unit_test(test_live_text),
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_switch),
		cmocka_unit_test(test_line_gap_and_row),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_clearing_and_cause),
		cmocka_unit_test(test_site),
		cmocka_unit_test(test_site_one_ring),
		cmocka_unit_test(test_site_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
