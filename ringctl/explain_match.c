/* Which findings are about which edge or node of a topology, by the
 * subject fields the coordinator sets (Finding.edge, node, interface,
 * peer_*, interfaces, cables, nodes, ring), never by their text; and
 * what an edge's or node's name means. A finding stored before those
 * fields has none: it is about nothing in particular here. */
#include "explain_match.h"

#include <ctype.h>
#include <string.h>

static int explain_word_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

int explain_text_names(const char *names, const char *word)
{
	size_t n = word ? strlen(word) : 0;

	if (!names || !n)
		return 0;
	for (const char *p = strstr(names, word); p; p = strstr(p + 1, word))
		if ((p == names || !explain_word_char(p[-1])) &&
		    !explain_word_char(p[n]))
			return 1;
	return 0;
}

/* "x-y" with x, y exactly the two names. */
static int explain_pair_is(const char *s, size_t len, const char *x,
			   const char *y)
{
	size_t lx = strlen(x);

	return len == lx + 1 + strlen(y) && !strncmp(s, x, lx) &&
	       s[lx] == '-' && !strncmp(s + lx + 1, y, len - lx - 1);
}

int explain_find_edge(const Ring__Topology *t, const char *name)
{
	const char *colon = strrchr(name, ':');
	size_t len = colon ? (size_t)(colon - name) : strlen(name);

	for (size_t i = 0; t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (colon) {
			if ((explain_pair_is(name, len, e->a, e->b) &&
			     !strcmp(colon + 1, e->a_interface)) ||
			    (explain_pair_is(name, len, e->b, e->a) &&
			     !strcmp(colon + 1, e->b_interface)))
				return (int)i;
			continue;
		}
		if (e->twin)
			continue;
		if (explain_pair_is(name, len, e->a, e->b) ||
		    explain_pair_is(name, len, e->b, e->a))
			return (int)i;
	}
	/* A node name with ':' in it is no twin name: try it whole. */
	for (size_t i = 0; colon && t && i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (!e->twin &&
		    (explain_pair_is(name, strlen(name), e->a, e->b) ||
		     explain_pair_is(name, strlen(name), e->b, e->a)))
			return (int)i;
	}
	return -1;
}

static int explain_listed(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; s && *s && i < n; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

/* Is f about node's function ifname: its subject or its peer, or one of
 * the node's functions it names? */
static int explain_finding_end(const Ring__Finding *f, const char *node,
			       const char *ifname)
{
	if (!ifname || !*ifname)
		return 0;
	if (!strcmp(f->node, node) &&
	    (!strcmp(f->interface, ifname) ||
	     explain_listed(f->interfaces, f->n_interfaces, ifname)))
		return 1;
	return !strcmp(f->peer_node, node) &&
	       !strcmp(f->peer_interface, ifname);
}

int explain_finding_names_edge(const Ring__Topology *t, const Ring__Edge *e,
			       const Ring__Finding *f)
{
	int k;

	if (!f || !e)
		return 0;
	if (f->ring)
		return 1;
	if (*f->edge && (k = explain_find_edge(t, f->edge)) >= 0 &&
	    t->edges[k] == e)
		return 1;
	return explain_finding_end(f, e->a, e->a_interface) ||
	       explain_finding_end(f, e->b, e->b_interface) ||
	       (e->cable_id && *e->cable_id &&
		explain_listed(f->cables, f->n_cables, e->cable_id));
}

int explain_finding_names_node(const Ring__Topology *t, const char *node,
			       const Ring__Finding *f)
{
	int k;

	if (!f || !node || !*node)
		return 0;
	if (f->ring || !strcmp(f->node, node) || !strcmp(f->peer_node, node) ||
	    explain_listed(f->nodes, f->n_nodes, node))
		return 1;
	return *f->edge && (k = explain_find_edge(t, f->edge)) >= 0 &&
	       (!strcmp(t->edges[k]->a, node) || !strcmp(t->edges[k]->b, node));
}

const Ring__Finding *explain_finding(const Ring__Topology *t, const char *code,
				     const char *node, const char *link)
{
	for (size_t i = 0; t && i < t->n_findings; i++) {
		const Ring__Finding *f = t->findings[i];

		if (!strcmp(f->code, code) && !strcmp(f->node, node) &&
		    !strcmp(f->pcie_link, link))
			return f;
	}
	return NULL;
}
