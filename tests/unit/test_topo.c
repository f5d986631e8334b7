/* topo: classification, anomalies and canonical order on hand-built
 * graphs, starting from the reference cluster's ring (docs/REFERENCE.md) 1-2-4-3. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/topo.h"

/* Port names of the reference cluster's nodes: port 1 and port 2. */
#define P1 "enp1s0f0np0"
#define P2 "enp1s0f1np1"

static const char *const names4[] = {"n1", "n2", "n3", "n4"};

/* A cable both ends heard, with matching MTU and subnet. */
static struct topo_link topo_test_link(unsigned a, const char *a_if, unsigned b,
				       const char *b_if)
{
	struct topo_link l;
	unsigned lo = a < b ? a : b, hi = a < b ? b : a;

	memset(&l, 0, sizeof(l));
	l.a = a;
	l.b = b;
	snprintf(l.a_if, sizeof(l.a_if), "%s", a_if);
	snprintf(l.b_if, sizeof(l.b_if), "%s", b_if);
	l.a_sees_b = 1;
	l.b_sees_a = 1;
	l.a_mtu = 9000;
	l.b_mtu = 9000;
	snprintf(l.a_subnet, sizeof(l.a_subnet), "10.89.%u.0/30", lo * 16 + hi);
	snprintf(l.b_subnet, sizeof(l.b_subnet), "10.89.%u.0/30", lo * 16 + hi);
	return l;
}

/* The reference cluster's ring n1-n2-n4-n3-n1: each node's port 1 goes to the
 * next node's port 2. */
static void topo_test_field_ring(struct topo_link links[4])
{
	links[0] = topo_test_link(0, P1, 1, P2); /* n1-n2 */
	links[1] = topo_test_link(1, P1, 3, P2); /* n2-n4 */
	links[2] = topo_test_link(3, P1, 2, P2); /* n4-n3 */
	links[3] = topo_test_link(2, P1, 0, P2); /* n3-n1 */
}

static struct topo_input topo_test_input(const char *const *names,
					 unsigned n_nodes,
					 const struct topo_link *links,
					 unsigned n_links)
{
	struct topo_input in;

	memset(&in, 0, sizeof(in));
	in.n_nodes = n_nodes;
	in.names = names;
	in.links = links;
	in.n_links = n_links;
	return in;
}

static unsigned topo_test_count(const struct topo_result *r,
				enum topo_anomaly_kind k)
{
	unsigned c = 0;

	for (unsigned i = 0; i < r->n_anomalies; i++)
		c += r->anomalies[i].kind == k;
	return c;
}

static const struct topo_anomaly *topo_test_find(const struct topo_result *r,
						 enum topo_anomaly_kind k)
{
	for (unsigned i = 0; i < r->n_anomalies; i++)
		if (r->anomalies[i].kind == k)
			return &r->anomalies[i];
	fail_msg("no %s anomaly", topo_anomaly_name(k));
	return NULL;
}

static void topo_test_order(const struct topo_result *r, const unsigned *want,
			    unsigned n)
{
	assert_int_equal(r->n_order, n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(r->order[i], want[i]);
}

/* What an analysis must give: -1 or NULL where not checked. */
struct topo_want {
	int cls, n_components, n_anomalies;
	const unsigned *order;
	unsigned n_order;
};

/* Analyse in (rank 0, direction) into r, which must succeed as wanted;
 * the caller checks the rest and frees r. */
static void topo_test_analyse(const struct topo_input *in, int rank0,
			      enum topo_direction dir,
			      const struct topo_want *w, struct topo_result *r)
{
	assert_int_equal(topo_analyse(in, rank0, dir, r), 0);
	if (w->cls >= 0)
		assert_int_equal(r->cls, w->cls);
	if (w->n_components >= 0)
		assert_int_equal(r->n_components, w->n_components);
	if (w->n_anomalies >= 0)
		assert_int_equal(r->n_anomalies, w->n_anomalies);
	if (w->order)
		topo_test_order(r, w->order, w->n_order);
}

/* The first anomaly of kind k: its nodes (-1: not checked), text and
 * kind name (NULL: not checked). */
static void topo_test_anomaly(const struct topo_result *r,
			      enum topo_anomaly_kind k, int a, int b,
			      const char *text, const char *name)
{
	const struct topo_anomaly *an = topo_test_find(r, k);

	if (a >= 0)
		assert_int_equal(an->a, a);
	if (b >= 0)
		assert_int_equal(an->b, b);
	assert_string_equal(an->text, text);
	if (name)
		assert_string_equal(topo_anomaly_name(an->kind), name);
}

static void test_field_notes_ring(void **state)
{
	struct topo_link links[4];
	struct topo_input in;
	struct topo_result r;
	/* The order from each rank 0 in each direction. */
	static const struct {
		int rank0;
		enum topo_direction dir;
		unsigned order[4];
	} orders[] = {
		{-1, TOPO_DIR_LOWER, {0, 1, 3, 2}},  /* n1 n2 n4 n3 */
		{3, TOPO_DIR_LOWER, {3, 1, 0, 2}},   /* n4 n2 n1 n3 */
		{-1, TOPO_DIR_HIGHER, {0, 2, 3, 1}}, /* n1 n3 n4 n2 */
		{3, TOPO_DIR_HIGHER, {3, 2, 0, 1}},  /* n4 n3 n1 n2 */
	};

	(void)state;
	topo_test_field_ring(links);
	in = topo_test_input(names4, 4, links, 4);
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_RING, 1, 0, NULL, 0}, &r);
	assert_string_equal(topo_class_name(r.cls), "ring");
	topo_result_free(&r);
	assert_null(r.order);
	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
		print_message("    rank 0 %d, %s\n", orders[i].rank0,
			      orders[i].dir == TOPO_DIR_LOWER ? "lower"
							      : "higher");
		topo_test_analyse(
			&in, orders[i].rank0, orders[i].dir,
			&(struct topo_want){-1, -1, -1, orders[i].order, 4},
			&r);
		topo_result_free(&r);
	}
}

/* The same ring with the cables listed in another order and ends
 * swapped: the same answer. */
static void test_field_notes_ring_shuffled(void **state)
{
	struct topo_link links[4];
	struct topo_input in;
	struct topo_result r;
	const unsigned lower[] = {0, 1, 3, 2};

	(void)state;
	links[0] = topo_test_link(3, P2, 1, P1); /* n4-n2 */
	links[1] = topo_test_link(0, P2, 2, P1); /* n1-n3 */
	links[2] = topo_test_link(2, P2, 3, P1); /* n3-n4 */
	links[3] = topo_test_link(1, P2, 0, P1); /* n2-n1 */
	in = topo_test_input(names4, 4, links, 4);
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_RING, -1, 0, lower, 4}, &r);
	topo_result_free(&r);
}

/* Five nodes, names not in index order, cables in no particular order:
 * physical cycle n1-n4-n2-n5-n3. */
static void test_five_ring(void **state)
{
	const char *const names[] = {"n3", "n5", "n1", "n4", "n2"};
	struct topo_link links[5];
	struct topo_input in;
	struct topo_result r;
	const unsigned want[] = {2, 0, 1, 4, 3};    /* n1 n3 n5 n2 n4 */
	const unsigned from_n5[] = {1, 4, 3, 2, 0}; /* n5 n2 n4 n1 n3 */

	(void)state;
	links[0] = topo_test_link(4, P1, 1, P2); /* n2-n5 */
	links[1] = topo_test_link(0, P1, 2, P2); /* n3-n1 */
	links[2] = topo_test_link(3, P1, 4, P2); /* n4-n2 */
	links[3] = topo_test_link(1, P1, 0, P2); /* n5-n3 */
	links[4] = topo_test_link(2, P1, 3, P2); /* n1-n4 */
	in = topo_test_input(names, 5, links, 5);
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_RING, -1, 0, want, 5}, &r);
	topo_result_free(&r);
	topo_test_analyse(&in, 1, TOPO_DIR_LOWER,
			  &(struct topo_want){-1, -1, -1, from_n5, 5}, &r);
	topo_result_free(&r);
}

/* Random rings of random sizes: the order is the cycle, starting at the
 * lowest name and heading to its lower-named neighbour. */
static void test_random_rings(void **state)
{
	(void)state;
	srand(12345);
	for (int iter = 0; iter < 200; iter++) {
		unsigned n = 3 + (unsigned)rand() % 60;
		char(*buf)[16] = calloc(n, sizeof(*buf));
		const char **names = calloc(n, sizeof(*names));
		unsigned *cyc = calloc(n, sizeof(*cyc));
		unsigned *pos = calloc(n, sizeof(*pos));
		struct topo_link *links = calloc(n, sizeof(*links));
		struct topo_input in;
		struct topo_result r;
		unsigned lowest = 0, nx, pv;

		assert_true(buf && names && cyc && pos && links);
		for (unsigned i = 0; i < n; i++) {
			snprintf(buf[i], sizeof(buf[i]), "h%05d",
				 rand() % 100000);
			snprintf(buf[i] + 6, sizeof(buf[i]) - 6, "-%u", i);
			names[i] = buf[i];
			cyc[i] = i;
		}
		for (unsigned i = n - 1; i > 0; i--) {
			unsigned j = (unsigned)rand() % (i + 1), t = cyc[i];

			cyc[i] = cyc[j];
			cyc[j] = t;
		}
		for (unsigned i = 0; i < n; i++) {
			unsigned a = cyc[i], b = cyc[(i + 1) % n];

			pos[a] = i;
			links[i] = rand() % 2 ? topo_test_link(a, P1, b, P2)
					      : topo_test_link(b, P2, a, P1);
		}
		for (unsigned i = n - 1; i > 0; i--) {
			unsigned j = (unsigned)rand() % (i + 1);
			struct topo_link t = links[i];

			links[i] = links[j];
			links[j] = t;
		}
		for (unsigned i = 1; i < n; i++)
			if (strcmp(names[i], names[lowest]) < 0)
				lowest = i;
		in = topo_test_input(names, n, links, n);
		topo_test_analyse(
			&in, -1, TOPO_DIR_LOWER,
			&(struct topo_want){TOPO_RING, -1, 0, NULL, 0}, &r);
		assert_int_equal(r.n_order, n);
		assert_int_equal(r.order[0], lowest);
		nx = cyc[(pos[lowest] + 1) % n];
		pv = cyc[(pos[lowest] + n - 1) % n];
		assert_int_equal(r.order[1],
				 strcmp(names[nx], names[pv]) < 0 ? nx : pv);
		for (unsigned i = 0; i < n; i++) {
			unsigned d = (pos[r.order[(i + 1) % n]] + n -
				      pos[r.order[i]]) %
				     n;

			assert_true(d == 1 || d == n - 1);
		}
		topo_result_free(&r);
		free(links);
		free(pos);
		free(cyc);
		free(names);
		free(buf);
	}
}

static void test_pair_parallel(void **state)
{
	const char *const names[] = {"spark-b", "spark-a"};
	struct topo_link links[2];
	struct topo_input in;
	struct topo_result r;
	const unsigned lowest_first[] = {1, 0};
	const unsigned rank0_first[] = {0, 1};

	(void)state;
	links[0] = topo_test_link(0, P1, 1, P1);
	links[1] = topo_test_link(1, P2, 0, P2);
	in = topo_test_input(names, 2, links, 2);
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_PAIR, 1, 1, lowest_first, 2},
			  &r);
	assert_string_equal(topo_class_name(r.cls), "pair");
	topo_test_anomaly(&r, TOPO_PARALLEL, 0, 1,
			  "2 cables between spark-b and spark-a (spark-b " P1
			  " - spark-a " P1 ", spark-a " P2 " - spark-b " P2
			  "): counted as one neighbour",
			  NULL);
	topo_result_free(&r);
	topo_test_analyse(&in, 0, TOPO_DIR_LOWER,
			  &(struct topo_want){-1, -1, -1, rank0_first, 2}, &r);
	topo_result_free(&r);

	/* One cable: a pair without anomalies. */
	in.n_links = 1;
	topo_test_analyse(
		&in, -1, TOPO_DIR_LOWER,
		&(struct topo_want){TOPO_PAIR, -1, 0, lowest_first, 2}, &r);
	topo_result_free(&r);
}

/* Parallel cables in a 3-node ring: the simple graph decides the class. */
static void test_parallel_in_ring(void **state)
{
	const char *const names[] = {"a", "b", "c"};
	struct topo_link links[4];
	struct topo_input in;
	struct topo_result r;
	const unsigned want[] = {0, 1, 2};

	(void)state;
	links[0] = topo_test_link(0, P1, 1, P2);
	links[1] = topo_test_link(1, P1, 2, P2);
	links[2] = topo_test_link(2, P1, 0, P2);
	links[3] = topo_test_link(1, "eth9", 0, "eth8");
	in = topo_test_input(names, 3, links, 4);
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_RING, -1, 1, want, 3}, &r);
	assert_int_equal(topo_test_count(&r, TOPO_PARALLEL), 1);
	assert_int_equal(topo_test_count(&r, TOPO_DEGREE), 0);
	topo_result_free(&r);

	/* Without c-a, the doubled a-b does not close the ring: a line. */
	links[2] = links[3];
	in.n_links = 3;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_LINE, -1, -1, want, 3}, &r);
	assert_int_equal(r.gap_a, 0);
	assert_int_equal(r.gap_b, 2);
	assert_int_equal(topo_test_count(&r, TOPO_PARALLEL), 1);
	topo_result_free(&r);
}

static void test_switch(void **state)
{
	struct topo_input in;
	struct topo_result r;

	(void)state;
	in = topo_test_input(names4, 4, NULL, 0);
	in.all_to_all_reachable = 1;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_SWITCH, 1, 0, NULL, 0}, &r);
	assert_string_equal(topo_class_name(r.cls), "switch");
	assert_int_equal(r.n_order, 0);
	topo_result_free(&r);

	/* Without the reachability, four islands. */
	in.all_to_all_reachable = 0;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_SPLIT, 4, -1, NULL, 0}, &r);
	assert_int_equal(topo_test_count(&r, TOPO_ISOLATED), 4);
	topo_result_free(&r);
}

/* The reference cluster's ring with the n4-n3 cable cut. */
static void test_line(void **state)
{
	struct topo_link links[4];
	struct topo_input in;
	struct topo_result r;
	const unsigned from_n3[] = {2, 0, 1, 3}; /* n3 n1 n2 n4 */
	const unsigned from_n4[] = {3, 1, 0, 2}; /* n4 n2 n1 n3 */

	(void)state;
	topo_test_field_ring(links);
	links[2] = links[3];
	in = topo_test_input(names4, 4, links, 3);
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_LINE, 1, 0, from_n3, 4}, &r);
	assert_string_equal(topo_class_name(r.cls), "line");
	assert_string_equal(names4[r.gap_a], "n3");
	assert_string_equal(names4[r.gap_b], "n4");
	topo_result_free(&r);

	/* rank 0 at an end: the path starts there. */
	topo_test_analyse(&in, 3, TOPO_DIR_LOWER,
			  &(struct topo_want){-1, -1, -1, from_n4, 4}, &r);
	assert_int_equal(r.gap_a, 2);
	assert_int_equal(r.gap_b, 3);
	topo_result_free(&r);
	/* rank 0 in the middle: the lowest-named end, direction fixed. */
	topo_test_analyse(&in, 0, TOPO_DIR_HIGHER,
			  &(struct topo_want){-1, -1, -1, from_n3, 4}, &r);
	topo_result_free(&r);
}

/* A diagonal cable n1-n4 on the reference cluster's ring (docs/REFERENCE.md). */
static void test_degree(void **state)
{
	struct topo_link links[5];
	struct topo_input in;
	struct topo_result r;

	(void)state;
	topo_test_field_ring(links);
	links[4] = topo_test_link(0, "enP2p1s0f0np0", 3, "enP2p1s0f0np0");
	in = topo_test_input(names4, 4, links, 5);
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_OTHER, 1, 2, NULL, 0}, &r);
	assert_string_equal(topo_class_name(r.cls), "other");
	assert_int_equal(r.n_order, 0);
	assert_int_equal(topo_test_count(&r, TOPO_DEGREE), 2);
	topo_test_anomaly(&r, TOPO_DEGREE, 0, 0,
			  "n1 has 3 direct neighbours (n2, n3, n4); a ring "
			  "node has two",
			  "degree");
	assert_string_equal(r.anomalies[1].text,
			    "n4 has 3 direct neighbours (n1, n2, n3); a ring "
			    "node has two");
	topo_result_free(&r);
}

/* n1 hears n3 on the n3-n1 cable, n3 hears nothing: not adjacency. */
static void test_one_sided(void **state)
{
	struct topo_link links[4];
	struct topo_input in;
	struct topo_result r;

	(void)state;
	topo_test_field_ring(links);
	links[3] = topo_test_link(0, P2, 2, P1);
	links[3].b_sees_a = 0;
	in = topo_test_input(names4, 4, links, 4);
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_LINE, -1, 1, NULL, 0}, &r);
	assert_string_equal(names4[r.gap_a], "n1");
	assert_string_equal(names4[r.gap_b], "n3");
	topo_test_anomaly(&r, TOPO_ONE_SIDED, -1, -1,
			  "n1 " P2 " hears n3 " P1 ", but n3 " P1
			  " does not hear n1",
			  "one_sided");
	topo_result_free(&r);

	/* The other end deaf instead. */
	links[3].a_sees_b = 0;
	links[3].b_sees_a = 1;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){-1, -1, -1, NULL, 0}, &r);
	topo_test_anomaly(&r, TOPO_ONE_SIDED, -1, -1,
			  "n3 " P1 " hears n1 " P2 ", but n1 " P2
			  " does not hear n3",
			  NULL);
	topo_result_free(&r);

	/* Probes verified it both ways: a cable after all. */
	links[3].verified = 1;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_RING, -1, 0, NULL, 0}, &r);
	topo_result_free(&r);
}

/* A triangle and a node nobody heard. */
static void test_split_isolated(void **state)
{
	struct topo_link links[3];
	struct topo_input in;
	struct topo_result r;

	(void)state;
	links[0] = topo_test_link(0, P1, 1, P2);
	links[1] = topo_test_link(1, P1, 2, P2);
	links[2] = topo_test_link(2, P1, 0, P2);
	in = topo_test_input(names4, 4, links, 3);
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_SPLIT, 2, 1, NULL, 0}, &r);
	assert_string_equal(topo_class_name(r.cls), "split");
	assert_int_equal(r.n_order, 0);
	topo_test_anomaly(&r, TOPO_ISOLATED, 3, 3,
			  "n4 has no data-plane neighbour: no cable both ends "
			  "of which were heard",
			  "isolated");
	topo_result_free(&r);

	/* Two pairs: split, nobody isolated. */
	links[0] = topo_test_link(0, P1, 1, P2);
	links[1] = topo_test_link(2, P1, 3, P2);
	in.n_links = 2;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_SPLIT, 2, 0, NULL, 0}, &r);
	topo_result_free(&r);
}

/* The rank order of the reference cluster's ring (docs/REFERENCE.md), n1 first: n1 n2 n4 n3. */
static const unsigned field_order[] = {0, 1, 3, 2};

/* A fifth node with a valid certificate and no cable, beside the ring of
 * four known members: set apart, the ring classified and ordered as if
 * it were not there. */
static void test_stray_no_cable(void **state)
{
	static const char *const names[] = {"n1", "n2", "n3", "n4", "evil"};
	const unsigned char member[] = {1, 1, 1, 1, 0};
	struct topo_link links[4];
	struct topo_input in;
	struct topo_result r;

	(void)state;
	topo_test_field_ring(links);
	in = topo_test_input(names, 5, links, 4);
	in.member = member;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_RING, 1, 0, field_order, 4},
			  &r);
	assert_int_equal(r.n_strays, 1);
	assert_int_equal(r.strays[0].node, 4);
	assert_int_equal(r.strays[0].reason, TOPO_STRAY_NO_CABLE);
	assert_string_equal(topo_stray_reason_name(r.strays[0].reason),
			    "no_cable");
	topo_result_free(&r);

	/* Named rank 0 (not in member): a member all the same. */
	in.member = NULL;
	topo_test_analyse(&in, 3, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_RING, 1, 0, NULL, 0}, &r);
	assert_int_equal(r.order[0], 3);
	assert_int_equal(r.n_order, 4);
	assert_int_equal(r.n_strays, 1);
	topo_result_free(&r);

	/* Nothing known (a first survey without expect): a cut-off member
	 * and a newcomer look alike, so a split as before. */
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_SPLIT, 2, 1, NULL, 0}, &r);
	assert_int_equal(r.n_strays, 0);
	topo_test_anomaly(&r, TOPO_ISOLATED, 4, 4,
			  "evil has no data-plane neighbour: no cable both "
			  "ends of which were heard",
			  NULL);
	topo_result_free(&r);
}

/* Two strays cabled to each other (and one-sided to a ring port): their
 * component holds no member; listed by name, cabled off the ring. */
static void test_stray_pair(void **state)
{
	static const char *const names[] = {"n1", "n2", "n3", "n4", "s2", "s1"};
	const unsigned char member[] = {1, 1, 1, 1, 0, 0};
	struct topo_link links[6];
	struct topo_input in;
	struct topo_result r;

	(void)state;
	topo_test_field_ring(links);
	links[4] = topo_test_link(4, P1, 5, P1);
	links[5] = topo_test_link(5, P2, 0, "eth9");
	links[5].b_sees_a = 0; /* s1 claims n1; n1 never heard it */
	in = topo_test_input(names, 6, links, 6);
	in.member = member;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_RING, 1, -1, field_order, 4},
			  &r);
	assert_int_equal(r.n_strays, 2);
	assert_int_equal(r.strays[0].node, 5); /* s1 */
	assert_int_equal(r.strays[1].node, 4); /* s2 */
	assert_int_equal(r.strays[0].reason, TOPO_STRAY_OFF_RING);
	assert_string_equal(topo_stray_reason_name(r.strays[1].reason),
			    "not_cabled_into_ring");
	/* The claim stays an anomaly; nobody is isolated. */
	assert_int_equal(topo_test_count(&r, TOPO_ONE_SIDED), 1);
	assert_int_equal(topo_test_count(&r, TOPO_ISOLATED), 0);
	topo_result_free(&r);

	/* A line (n3-n1 cut) and a pair keep their class beside strays. */
	links[3] = links[4];
	in.n_links = 4;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_LINE, 1, -1, NULL, 0}, &r);
	assert_int_equal(r.n_order, 4);
	assert_int_equal(r.n_strays, 2);
	assert_string_equal(names[r.gap_a], "n1");
	assert_string_equal(names[r.gap_b], "n3");
	topo_result_free(&r);
	links[1] = links[4];
	in.n_links = 2;
	{
		const unsigned char two[] = {1, 1, 0, 0, 0, 0};
		const unsigned want[] = {1, 0};

		in.member = two;
		topo_test_analyse(
			&in, 1, TOPO_DIR_LOWER,
			&(struct topo_want){TOPO_PAIR, 1, -1, want, 2}, &r);
		/* n3 and n4 have no cable: strays too. */
		assert_int_equal(r.n_strays, 4);
		topo_result_free(&r);
	}
}

/* Controls: a member with no cable, or members cut apart, is a broken
 * ring: split, nobody set apart, as without members. */
static void test_stray_not_members(void **state)
{
	static const char *const names[] = {"n1", "n2", "n3", "n4", "n5"};
	const unsigned char member[] = {1, 1, 1, 1, 1};
	struct topo_link links[4];
	struct topo_input in;
	struct topo_result r;

	(void)state;
	topo_test_field_ring(links);
	in = topo_test_input(names, 5, links, 4);
	in.member = member;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_SPLIT, 2, 1, NULL, 0}, &r);
	assert_int_equal(r.n_strays, 0);
	topo_test_find(&r, TOPO_ISOLATED);
	topo_result_free(&r);

	/* Two cuts in the ring of four members: two pairs. */
	links[1] = links[0];
	links[0] = topo_test_link(1, P1, 3, P2); /* n2-n4 */
	links[1] = topo_test_link(2, P1, 0, P2); /* n3-n1 */
	in.n_nodes = 4;
	in.n_links = 2;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_SPLIT, 2, 0, NULL, 0}, &r);
	assert_int_equal(r.n_strays, 0);
	topo_result_free(&r);

	/* The one member up has no cable: no ring to keep. */
	{
		const unsigned char one[] = {1, 0, 0, 0};

		in.member = one;
		in.n_links = 1;
		topo_test_analyse(
			&in, -1, TOPO_DIR_LOWER,
			&(struct topo_want){TOPO_SPLIT, 3, -1, NULL, 0}, &r);
		assert_int_equal(r.n_strays, 0);
		topo_result_free(&r);
	}
}

static void test_mtu_subnet(void **state)
{
	struct topo_link links[4];
	struct topo_input in;
	struct topo_result r;

	(void)state;
	topo_test_field_ring(links);
	links[1].b_mtu = 1500; /* n4's end of n2-n4 */
	snprintf(links[2].a_subnet, sizeof(links[2].a_subnet),
		 "10.89.7.0/30");    /* n4's end of n4-n3 */
	links[0].a_mtu = 0;	     /* unknown: no verdict */
	links[3].b_subnet[0] = '\0'; /* no address: no verdict */
	in = topo_test_input(names4, 4, links, 4);
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_RING, -1, 2, NULL, 0}, &r);
	topo_test_anomaly(&r, TOPO_MTU_MISMATCH, 1, 3,
			  "MTU differs across the cable n2 " P1
			  " (9000) - n4 " P2 " (1500)",
			  "mtu_mismatch");
	topo_test_anomaly(&r, TOPO_SUBNET_MISMATCH, 3, 2,
			  "subnets differ across the cable n4 " P1
			  " (10.89.7.0/30) - n3 " P2 " (10.89.35.0/30)",
			  "subnet_mismatch");
	topo_result_free(&r);
}

/* The diagonal n1-n4 answered on the data plane. */
static void test_unexpected_path(void **state)
{
	struct topo_link links[4];
	struct topo_input in;
	struct topo_result r;
	const unsigned diag[1][2] = {{0, 3}};

	(void)state;
	topo_test_field_ring(links);
	in = topo_test_input(names4, 4, links, 4);
	in.unexpected_paths = diag;
	in.n_unexpected_paths = 1;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_RING, -1, 1, NULL, 0}, &r);
	topo_test_anomaly(&r, TOPO_UNEXPECTED_PATH, 0, 3,
			  "n1 reaches n4 over the data plane although they are "
			  "not neighbours: an unexpected link",
			  "unexpected_path");
	topo_result_free(&r);
}

/* Every anomaly at once, in the documented order. */
static void test_all_kinds(void **state)
{
	const char *const names[] = {"n1", "n2", "n3", "n4", "n5", "n6"};
	struct topo_link links[7];
	struct topo_input in;
	struct topo_result r;
	const unsigned diag[1][2] = {{0, 2}};
	unsigned k = 0;
	const enum topo_anomaly_kind want[] = {
		TOPO_ONE_SIDED,	      TOPO_MTU_MISMATCH, TOPO_SUBNET_MISMATCH,
		TOPO_PARALLEL,	      TOPO_DEGREE,	 TOPO_ISOLATED,
		TOPO_UNEXPECTED_PATH,
	};

	(void)state;
	links[0] = topo_test_link(0, P1, 1, P2);
	links[1] = topo_test_link(1, P1, 2, P2);
	links[2] = topo_test_link(2, P1, 0, P2);
	links[3] = topo_test_link(0, "eth3", 3, "eth3"); /* n1 degree 3 */
	links[4] = topo_test_link(0, "eth4", 1, "eth4"); /* parallel */
	links[4].b_mtu = 1500;
	links[5] = topo_test_link(1, "eth5", 2, "eth5");
	links[5].b_sees_a = 0; /* one-sided */
	links[6] = topo_test_link(2, "eth6", 3, "eth6");
	snprintf(links[6].b_subnet, sizeof(links[6].b_subnet), "x");
	in = topo_test_input(names, 6, links, 7);
	in.unexpected_paths = diag;
	in.n_unexpected_paths = 1;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_SPLIT, 3, 9, NULL, 0}, &r);
	for (unsigned i = 0; i < r.n_anomalies; i++) {
		if (i && r.anomalies[i].kind == r.anomalies[i - 1].kind)
			continue;
		assert_true(k < 7);
		assert_int_equal(r.anomalies[i].kind, want[k]);
		k++;
	}
	assert_int_equal(k, 7);
	/* n5 and n6 both isolated; n1 and n3 of degree 3. */
	assert_int_equal(topo_test_count(&r, TOPO_ISOLATED), 2);
	assert_int_equal(topo_test_count(&r, TOPO_DEGREE), 2);
	assert_int_equal(topo_test_count(&r, TOPO_PARALLEL), 1);
	topo_result_free(&r);
}

static void test_small_and_errors(void **state)
{
	struct topo_link links[2];
	struct topo_input in;
	struct topo_result r;

	(void)state;
	in = topo_test_input(names4, 0, NULL, 0);
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_UNKNOWN, 0, -1, NULL, 0},
			  &r);
	assert_string_equal(topo_class_name(r.cls), "unknown");
	topo_result_free(&r);
	in.n_nodes = 1;
	topo_test_analyse(&in, -1, TOPO_DIR_LOWER,
			  &(struct topo_want){TOPO_UNKNOWN, 1, 0, NULL, 0}, &r);
	topo_result_free(&r);

	links[0] = topo_test_link(0, P1, 1, P2);
	links[1] = topo_test_link(1, P1, 4, P2);
	in = topo_test_input(names4, 4, links, 2);
	errno = 0;
	assert_int_equal(topo_analyse(&in, -1, TOPO_DIR_LOWER, &r), -1);
	assert_int_equal(errno, EINVAL);
	assert_null(r.order);
	assert_null(r.anomalies);
	links[1] = topo_test_link(2, P1, 2, P2);
	errno = 0;
	assert_int_equal(topo_analyse(&in, -1, TOPO_DIR_LOWER, &r), -1);
	assert_int_equal(errno, EINVAL);
	in.n_links = 1;
	errno = 0;
	assert_int_equal(topo_analyse(&in, 4, TOPO_DIR_LOWER, &r), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(topo_analyse(NULL, -1, TOPO_DIR_LOWER, &r), -1);
	assert_int_equal(errno, EINVAL);
	topo_result_free(&r);
	topo_result_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_notes_ring),
		cmocka_unit_test(test_field_notes_ring_shuffled),
		cmocka_unit_test(test_five_ring),
		cmocka_unit_test(test_random_rings),
		cmocka_unit_test(test_pair_parallel),
		cmocka_unit_test(test_parallel_in_ring),
		cmocka_unit_test(test_switch),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_degree),
		cmocka_unit_test(test_one_sided),
		cmocka_unit_test(test_split_isolated),
		cmocka_unit_test(test_stray_no_cable),
		cmocka_unit_test(test_stray_pair),
		cmocka_unit_test(test_stray_not_members),
		cmocka_unit_test(test_mtu_subnet),
		cmocka_unit_test(test_unexpected_path),
		cmocka_unit_test(test_all_kinds),
		cmocka_unit_test(test_small_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
