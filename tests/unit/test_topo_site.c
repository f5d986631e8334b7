/* topo_site: a site's rings on hand-built graphs (issue 24): separate
 * rings each classified alone, a cut ring kept one ring by what is known
 * of it, strays beside known members, rank 0 in its own ring. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "coordinator/topo_site.h"

/* Two digits: the lowest name is the lowest number. */
static const char *const names12[] = {"n01", "n02", "n03", "n04", "n05", "n06",
				      "n07", "n08", "n09", "n10", "n11", "n12"};

static struct topo_link site_link(unsigned a, unsigned b)
{
	struct topo_link l;

	memset(&l, 0, sizeof(l));
	l.a = a;
	l.b = b;
	snprintf(l.a_if, sizeof(l.a_if), "eth%u", b);
	snprintf(l.b_if, sizeof(l.b_if), "eth%u", a);
	l.a_sees_b = l.b_sees_a = 1;
	l.a_mtu = l.b_mtu = 9000;
	return l;
}

/* Rings of four cabled in the order given: first[k] .. first[k] + 3,
 * each a cycle a-c-b-d (not by index order, as real cabling is not). */
static unsigned site_rings_of_four(struct topo_link *links, unsigned n_rings)
{
	unsigned n = 0;

	for (unsigned k = 0; k < n_rings; k++) {
		unsigned a = 4 * k, b = a + 1, c = a + 2, d = a + 3;

		links[n++] = site_link(a, c);
		links[n++] = site_link(c, b);
		links[n++] = site_link(b, d);
		links[n++] = site_link(d, a);
	}
	return n;
}

static struct topo_input
site_input(unsigned n_nodes, const struct topo_link *links, unsigned n_links)
{
	struct topo_input in;

	memset(&in, 0, sizeof(in));
	in.n_nodes = n_nodes;
	in.names = names12;
	in.links = links;
	in.n_links = n_links;
	return in;
}

static void site_order(const struct topo_ring *r, const unsigned *want,
		       unsigned n)
{
	assert_int_equal(r->res.n_order, n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(r->res.order[i], want[i]);
}

/* Three rings of four, nothing known (a first survey): three rings, each
 * a ring in its physical order, the site of class rings with no order. */
static void test_three_rings(void **state)
{
	struct topo_link links[12];
	struct topo_input in;
	struct topo_site s;
	static const unsigned o1[] = {0, 2, 1, 3}, o2[] = {4, 6, 5, 7},
			      o3[] = {8, 10, 9, 11};

	(void)state;
	in = site_input(12, links, site_rings_of_four(links, 3));
	assert_int_equal(topo_site_analyse(&in, NULL, -1, TOPO_DIR_LOWER, &s),
			 0);
	assert_int_equal(s.site.cls, TOPO_RINGS);
	assert_string_equal(topo_class_name(s.site.cls), "rings");
	assert_int_equal(s.site.n_order, 0);
	assert_int_equal(s.site.n_strays, 0);
	assert_int_equal(s.n_rings, 3);
	for (unsigned k = 0; k < 3; k++) {
		assert_int_equal(s.rings[k].res.cls, TOPO_RING);
		assert_int_equal(s.rings[k].n_nodes, 4);
		assert_int_equal(s.rings[k].label, -1);
	}
	/* Ascending by the lowest member: n01's, n05's, n09's. */
	site_order(&s.rings[0], o1, 4);
	site_order(&s.rings[1], o2, 4);
	site_order(&s.rings[2], o3, 4);
	topo_site_free(&s);

	/* Every node expected (expect, no ring directive): the same. */
	{
		unsigned char member[12];

		memset(member, 1, sizeof(member));
		in.member = member;
		assert_int_equal(
			topo_site_analyse(&in, NULL, -1, TOPO_DIR_LOWER, &s),
			0);
		assert_int_equal(s.site.cls, TOPO_RINGS);
		assert_int_equal(s.n_rings, 3);
		topo_site_free(&s);
	}
}

/* One ring of the site cut twice: two pairs. Known as one ring (a
 * label), it is one ring of class split beside the others; unknown,
 * two pairs of their own. */
static void test_cut_ring_stays_one(void **state)
{
	struct topo_link links[12];
	struct topo_input in;
	struct topo_site s;
	int label[8] = {0, 0, 0, 0, 1, 1, 1, 1};
	unsigned n = site_rings_of_four(links, 2);

	(void)state;
	/* Ring 1 (n5 n7 n6 n8): cut n5-n7 and n6-n8. */
	links[4] = links[n - 1];
	links[6] = links[n - 2];
	n -= 2;
	in = site_input(8, links, n);
	assert_int_equal(topo_site_analyse(&in, label, -1, TOPO_DIR_LOWER, &s),
			 0);
	assert_int_equal(s.site.cls, TOPO_RINGS);
	assert_int_equal(s.n_rings, 2);
	assert_int_equal(s.rings[0].res.cls, TOPO_RING);
	assert_int_equal(s.rings[0].label, 0);
	assert_int_equal(s.rings[1].res.cls, TOPO_SPLIT);
	assert_int_equal(s.rings[1].res.n_components, 2);
	assert_int_equal(s.rings[1].n_nodes, 4);
	assert_int_equal(s.rings[1].label, 1);
	topo_site_free(&s);

	assert_int_equal(topo_site_analyse(&in, NULL, -1, TOPO_DIR_LOWER, &s),
			 0);
	assert_int_equal(s.n_rings, 3);
	assert_int_equal(s.rings[1].res.cls, TOPO_PAIR);
	assert_int_equal(s.rings[2].res.cls, TOPO_PAIR);
	topo_site_free(&s);

	/* The site of the cut ring alone, known: as topo_analyse says (a
	 * split), its one ring repeating it. */
	{
		struct topo_link two[2] = {site_link(0, 2), site_link(1, 3)};

		in = site_input(4, two, 2);
		assert_int_equal(
			topo_site_analyse(&in, label, -1, TOPO_DIR_LOWER, &s),
			0);
		assert_int_equal(s.site.cls, TOPO_SPLIT);
		assert_int_equal(s.n_rings, 1);
		assert_int_equal(s.rings[0].res.cls, TOPO_SPLIT);
		assert_int_equal(s.rings[0].n_nodes, 4);
		topo_site_free(&s);
	}
}

/* Known members in one ring, a pair of strangers cabled to each other:
 * set apart as before (not a ring of the site), one ring. */
static void test_strangers_stay_apart(void **state)
{
	struct topo_link links[6];
	struct topo_input in;
	struct topo_site s;
	unsigned char member[6] = {1, 1, 1, 1, 0, 0};
	unsigned n = site_rings_of_four(links, 1);

	(void)state;
	links[n++] = site_link(4, 5);
	in = site_input(6, links, n);
	in.member = member;
	assert_int_equal(topo_site_analyse(&in, NULL, -1, TOPO_DIR_LOWER, &s),
			 0);
	assert_int_equal(s.site.cls, TOPO_RING);
	assert_int_equal(s.site.n_strays, 2);
	assert_int_equal(s.site.strays[0].reason, TOPO_STRAY_OFF_RING);
	assert_int_equal(s.n_rings, 1);
	assert_int_equal(s.rings[0].n_nodes, 4);
	topo_site_free(&s);
}

/* An expected node with no cable: beside one ring a split as before;
 * beside two rings it belongs to neither, set apart with no cable. */
static void test_isolated_member(void **state)
{
	static const char *const names[] = {"n1", "n2", "n3", "n4", "n5",
					    "n6", "n7", "n8", "n9"};
	struct topo_link links[8];
	struct topo_input in;
	struct topo_site s;
	unsigned char member[9];

	(void)state;
	memset(member, 1, sizeof(member));
	in = site_input(5, links, site_rings_of_four(links, 1));
	in.names = names;
	in.member = member;
	assert_int_equal(topo_site_analyse(&in, NULL, -1, TOPO_DIR_LOWER, &s),
			 0);
	assert_int_equal(s.site.cls, TOPO_SPLIT);
	assert_int_equal(s.n_rings, 1);
	assert_int_equal(s.rings[0].n_nodes, 5);
	topo_site_free(&s);

	/* n9 (index 8) alone beside two rings. */
	in = site_input(9, links, site_rings_of_four(links, 2));
	in.names = names;
	in.member = member;
	assert_int_equal(topo_site_analyse(&in, NULL, -1, TOPO_DIR_LOWER, &s),
			 0);
	assert_int_equal(s.site.cls, TOPO_RINGS);
	assert_int_equal(s.n_rings, 2);
	assert_int_equal(s.site.n_strays, 1);
	assert_int_equal(s.site.strays[0].node, 8);
	assert_int_equal(s.site.strays[0].reason, TOPO_STRAY_NO_CABLE);
	topo_site_free(&s);
}

/* rank0 names a node of the second ring: that ring starts there, the
 * first starts at its lowest name. */
static void test_rank0_in_its_ring(void **state)
{
	struct topo_link links[8];
	struct topo_input in;
	struct topo_site s;

	(void)state;
	in = site_input(8, links, site_rings_of_four(links, 2));
	assert_int_equal(topo_site_analyse(&in, NULL, 5, TOPO_DIR_LOWER, &s),
			 0);
	assert_int_equal(s.n_rings, 2);
	assert_int_equal(s.rings[0].res.order[0], 0);
	assert_int_equal(s.rings[1].res.order[0], 5);
	topo_site_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_rings),
		cmocka_unit_test(test_cut_ring_stays_one),
		cmocka_unit_test(test_strangers_stay_apart),
		cmocka_unit_test(test_isolated_member),
		cmocka_unit_test(test_rank0_in_its_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
