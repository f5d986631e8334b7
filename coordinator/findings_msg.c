/* A finding's subject as fields and its wire message: the one
 * constructor of Ring__Finding for the survey and the counters (see
 * findings.h), every subject and figure field copied. Pure. */
#include "findings.h"

#include <stdio.h>
#include <string.h>

void findings_init(struct finding *f, const char *code, const char *level,
		   const char *text)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->code, sizeof(f->code), "%.31s", code);
	snprintf(f->level, sizeof(f->level), "%.7s", level);
	snprintf(f->text, sizeof(f->text), "%s", text);
}

void findings_name_node(struct finding *f, const char *node)
{
	if (!f || !node || !*node)
		return;
	for (unsigned i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i], node))
			return;
	if (f->n_nodes < FINDINGS_NAMES_MAX)
		snprintf(f->nodes[f->n_nodes++], sizeof(f->nodes[0]), "%s",
			 node);
}

void findings_name_iface(struct finding *f, const char *ifname)
{
	if (!f || !ifname || !*ifname)
		return;
	for (unsigned i = 0; i < f->n_ifaces; i++)
		if (!strcmp(f->ifaces[i], ifname))
			return;
	if (f->n_ifaces < FINDINGS_NAMES_MAX)
		snprintf(f->ifaces[f->n_ifaces++], sizeof(f->ifaces[0]), "%s",
			 ifname);
}

void findings_name_cable(struct finding *f, const char *id)
{
	if (!f || !id || !*id)
		return;
	for (unsigned i = 0; i < f->n_cables; i++)
		if (!strcmp(f->cables[i], id))
			return;
	if (f->n_cables < FINDINGS_NAMES_MAX)
		snprintf(f->cables[f->n_cables++], sizeof(f->cables[0]), "%s",
			 id);
}

void findings_set_edge(struct finding *f, const char *a, const char *b)
{
	if (!f)
		return;
	snprintf(f->edge, sizeof(f->edge), "%s-%s", a, b);
	findings_name_node(f, a);
	findings_name_node(f, b);
}

static char *findings_dup(findings_alloc_fn alloc, void *ctx, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = alloc(ctx, n);

	if (d)
		memcpy(d, s, n);
	return d;
}

/* Strings v[0..n) into a copied array (NULL with n 0); -1 on failure. */
static int findings_dup_list(findings_alloc_fn alloc, void *ctx,
			     const char (*v)[64], unsigned n, char ***out)
{
	char **d;

	*out = NULL;
	if (!n)
		return 0;
	d = alloc(ctx, n * sizeof(*d));
	if (!d)
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (!(d[i] = findings_dup(alloc, ctx, v[i])))
			return -1;
	*out = d;
	return 0;
}

Ring__Finding *findings_msg(const struct finding *f, const char *text,
			    findings_alloc_fn alloc, void *ctx)
{
	Ring__Finding *m = alloc(ctx, sizeof(*m));
	struct finding named;

	if (!m)
		return NULL;
	ring__finding__init(m);
	/* The subject's nodes are among those it names. */
	named = *f;
	findings_name_node(&named, f->node);
	findings_name_node(&named, f->peer_node);
	if (!(m->code = findings_dup(alloc, ctx, f->code)) ||
	    !(m->level = findings_dup(alloc, ctx, f->level)) ||
	    !(m->text = findings_dup(alloc, ctx, text ? text : f->text)) ||
	    !(m->node = findings_dup(alloc, ctx, f->node)) ||
	    !(m->interface = findings_dup(alloc, ctx, f->iface)) ||
	    !(m->gist = findings_dup(alloc, ctx, f->gist)) ||
	    !(m->edge = findings_dup(alloc, ctx, f->edge)) ||
	    !(m->pcie_link = findings_dup(alloc, ctx, f->pcie_link)) ||
	    !(m->peer_node = findings_dup(alloc, ctx, f->peer_node)) ||
	    !(m->peer_interface = findings_dup(alloc, ctx, f->peer_iface)) ||
	    findings_dup_list(alloc, ctx, named.cables, named.n_cables,
			      &m->cables) < 0 ||
	    findings_dup_list(alloc, ctx, named.nodes, named.n_nodes,
			      &m->nodes) < 0 ||
	    findings_dup_list(alloc, ctx, named.ifaces, named.n_ifaces,
			      &m->interfaces) < 0)
		return NULL;
	m->n_interfaces = named.n_ifaces;
	m->n_cables = named.n_cables;
	m->n_nodes = named.n_nodes;
	m->ring = f->ring != 0;
	m->gbps = f->gbps;
	m->reference_gbps = f->reference_gbps;
	m->mtu = f->mtu;
	m->peer_mtu = f->peer_mtu;
	return m;
}
