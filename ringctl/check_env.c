/* ringctl check nccl-env: lint an NCCL environment against the measured
 * cluster (docs/NCCL.md, "Checking an environment"). The input is bounded:
 * CHECK_ENV_MAX_BYTES (1 MiB) and CHECK_ENV_MAX_LINES (4096 lines), a name
 * CHECK_ENV_NAME_MAX and a value CHECK_ENV_VALUE_MAX bytes; more is an
 * error, never a cut. */
#include "check_env.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "ladder.h"
#include "ranks.h"
#include "render.h"

#define CHECK_ENV_EXIT_PROBLEMS 1
#define CHECK_ENV_EXIT_TROUBLE 2

/* Names upstream NCCL documents in its user guide, Environment Variables
 * (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html, and the
 * archived 2.15.5 / 2.23.4 / 2.31.2 pages), plus those docs/NCCL.md found
 * only in NCCL's source (src/transport/net_ib/connect.cc, init.cc):
 * checked December 2026. NCCL_CUMEM_ENABLE and NCCL_NVLS_ENABLE were
 * not on the pages read; NVIDIA's own threads use them (NVIDIA/nccl#1234,
 * NVIDIA/JAX-Toolbox#1708). A name missing here is reported as a
 * warning, not an error: a newer NCCL may have it. */
static const char *const check_env_upstream[] = {
	"NCCL_ALGO",
	"NCCL_ALLOC_P2P_NET_LL_BUFFERS",
	"NCCL_BUFFSIZE",
	"NCCL_CHECKS_DISABLE",
	"NCCL_CHECK_POINTERS",
	"NCCL_COLLNET_ENABLE",
	"NCCL_COLLNET_NODE_THRESHOLD",
	"NCCL_COMM_BLOCKING",
	"NCCL_CONF_FILE",
	"NCCL_CROSS_NIC",
	"NCCL_CUMEM_ENABLE",
	"NCCL_DEBUG",
	"NCCL_DEBUG_FILE",
	"NCCL_DEBUG_SUBSYS",
	"NCCL_DMABUF_ENABLE",
	"NCCL_GRAPH_MIXING_SUPPORT",
	"NCCL_GRAPH_REGISTER",
	"NCCL_IB_ADAPTIVE_ROUTING",
	"NCCL_IB_ADDR_FAMILY",
	"NCCL_IB_ADDR_RANGE",
	"NCCL_IB_AR_THRESHOLD",
	"NCCL_IB_CUDA_SUPPORT",
	"NCCL_IB_DISABLE",
	"NCCL_IB_ECE_ENABLE",
	"NCCL_IB_FIFO_TC",
	"NCCL_IB_GDR_LEVEL",
	"NCCL_IB_GID_INDEX",
	"NCCL_IB_HCA",
	"NCCL_IB_MERGE_NICS",
	"NCCL_IB_PCI_RELAXED_ORDERING",
	"NCCL_IB_PKEY",
	"NCCL_IB_QPS_PER_CONNECTION",
	"NCCL_IB_RETRY_CNT",
	"NCCL_IB_ROCE_VERSION_NUM",
	"NCCL_IB_ROUTABLE_FLID_GID_INDEX",
	"NCCL_IB_SL",
	"NCCL_IB_SPLIT_DATA_ON_QPS",
	"NCCL_IB_SUBNET_AWARE_ROUTING",
	"NCCL_IB_SUBNET_PREFIX_LEN",
	"NCCL_IB_TC",
	"NCCL_IB_TIMEOUT",
	"NCCL_IB_USE_INLINE",
	"NCCL_IGNORE_CPU_AFFINITY",
	"NCCL_LAUNCH_MODE",
	"NCCL_LL_THRESHOLD",
	"NCCL_MAX_NCHANNELS",
	"NCCL_MEM_SYNC_DOMAIN",
	"NCCL_MIN_NCHANNELS",
	"NCCL_NET",
	"NCCL_NET_FORCE_MERGE",
	"NCCL_NET_GDR_LEVEL",
	"NCCL_NET_GDR_READ",
	"NCCL_NET_MERGE_LEVEL",
	"NCCL_NET_PLUGIN",
	"NCCL_NET_SHARED_BUFFERS",
	"NCCL_NET_SHARED_COMMS",
	"NCCL_NSOCKS_PERTHREAD",
	"NCCL_NTHREADS",
	"NCCL_NVB_DISABLE",
	"NCCL_NVLS_ENABLE",
	"NCCL_P2P_DIRECT_DISABLE",
	"NCCL_P2P_DISABLE",
	"NCCL_P2P_LEVEL",
	"NCCL_P2P_LL_THRESHOLD",
	"NCCL_P2P_NET_CHUNKSIZE",
	"NCCL_P2P_PXN_LEVEL",
	"NCCL_PROTO",
	"NCCL_PXN_DISABLE",
	"NCCL_SET_STACK_SIZE",
	"NCCL_SET_THREAD_NAME",
	"NCCL_SHM_DISABLE",
	"NCCL_SINGLE_RING_THRESHOLD",
	"NCCL_SOCKET_FAMILY",
	"NCCL_SOCKET_IFNAME",
	"NCCL_SOCKET_NTHREADS",
	"NCCL_TOPO_DUMP_FILE",
	"NCCL_TOPO_FILE",
	"NCCL_TREE_THRESHOLD",
};

/* A patched build's variable that operators copy from its scripts: named,
 * because upstream NCCL silently ignores it (docs/NCCL.md). */
#define CHECK_ENV_SWITCHLESS "NCCL_SWITCHLESS_RING_ONLY"

int check_env_known(const char *name)
{
	for (size_t i = 0;
	     i < sizeof(check_env_upstream) / sizeof(check_env_upstream[0]);
	     i++)
		if (!strcmp(name, check_env_upstream[i]))
			return 1;
	return 0;
}

/* ------------------------------------------------------------ parsing */

void check_env_set_free(struct check_env_set *set)
{
	for (size_t i = 0; set->v && i < set->n; i++) {
		free(set->v[i].name);
		free(set->v[i].value);
	}
	free(set->v);
	free(set->blocks);
	set->v = NULL;
	set->n = 0;
	set->blocks = NULL;
	set->n_blocks = 0;
}

const char *check_env_get(const struct check_env_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].block < 0 && !strcmp(set->v[i].name, name))
			return set->v[i].value;
	return NULL;
}

/* Set name in the current scope (the last block, or before any):
 * replacing an earlier one there, the shell's last word wins. */
static int check_env_put(struct check_env_set *set, const char *name,
			 size_t nlen, const char *val, size_t vlen,
			 unsigned line)
{
	struct check_env_var *v = NULL, *grown;
	char *n = strndup(name, nlen), *s = strndup(val, vlen);
	int block = (int)set->n_blocks - 1;

	if (!n || !s)
		goto fail;
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].block == block && !strcmp(set->v[i].name, n))
			v = &set->v[i];
	if (v) {
		free(v->name);
		free(v->value);
		v->prev_line = v->line;
	} else {
		grown = realloc(set->v, (set->n + 1) * sizeof(*set->v));
		if (!grown)
			goto fail;
		set->v = grown;
		v = &set->v[set->n++];
		v->prev_line = 0;
	}
	v->name = n;
	v->value = s;
	v->line = line;
	v->block = block;
	return 0;
fail:
	free(n);
	free(s);
	errno = ENOMEM;
	return -1;
}

static int check_env_name_char(unsigned char c, int first)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (!first && c >= '0' && c <= '9');
}

/* One line (without its newline): 0 nothing, 1 an assignment in
 * name/value, -1 with why in err. */
static int check_env_line(const char *p, const char *end, const char **name,
			  size_t *nlen, const char **val, size_t *vlen,
			  const char **why)
{
	const char *q;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p &&
	       (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (p == end || *p == '#')
		return 0;
	if (end - p > 7 && !strncmp(p, "export", 6) &&
	    (p[6] == ' ' || p[6] == '\t')) {
		p += 7;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
	}
	for (q = p; q < end && check_env_name_char((unsigned char)*q, q == p);
	     q++)
		;
	if (q == p || q == end || *q != '=') {
		*why = "not a VAR=value assignment";
		return -1;
	}
	if ((size_t)(q - p) >= CHECK_ENV_NAME_MAX) {
		*why = "variable name longer than 127 bytes";
		return -1;
	}
	*name = p;
	*nlen = (size_t)(q - p);
	p = q + 1;
	if (p < end && (*p == '"' || *p == '\'')) {
		/* One quoted word: the closing quote must end the line (or
		 * come before a comment). */
		const char *close = memchr(p + 1, *p, (size_t)(end - p - 1));

		if (!close) {
			*why = "unterminated quote";
			return -1;
		}
		for (q = close + 1; q < end && (*q == ' ' || *q == '\t'); q++)
			;
		if (q < end && *q != '#') {
			*why = "text after the closing quote";
			return -1;
		}
		*val = p + 1;
		*vlen = (size_t)(close - p - 1);
	} else {
		/* Unquoted: a shell ends the word at a blank ("#" after it
		 * starts a comment); anything else there is not one value. */
		for (q = p; q < end && *q != ' ' && *q != '\t'; q++)
			if (*q == '"' || *q == '\'' || *q == '`' || *q == '$') {
				*why = "quotes, $ or ` inside an unquoted "
				       "value (quote the whole value)";
				return -1;
			}
		*val = p;
		*vlen = (size_t)(q - p);
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (q < end && *q != '#') {
			*why = "a blank inside an unquoted value (quote it)";
			return -1;
		}
	}
	if (*vlen >= CHECK_ENV_VALUE_MAX) {
		*why = "value longer than 4095 bytes";
		return -1;
	}
	for (size_t i = 0; i < *vlen; i++)
		if ((unsigned char)(*val)[i] < 0x20 ||
		    (unsigned char)(*val)[i] == 0x7f) {
			*why = "a control character in the value";
			return -1;
		}
	return 1;
}

/* "# NODE (rank N)", the line `ranks -f env` starts a node's block
 * with: 1 and the node and rank, else 0. */
static int check_env_block_head(const char *p, const char *end, char *node,
				size_t len, unsigned *rank)
{
	static const char tag[] = " (rank ";
	const char *q, *r;
	unsigned long n = 0;

	while (end > p &&
	       (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (end - p < 11 || p[0] != '#' || p[1] != ' ' || end[-1] != ')')
		return 0;
	p += 2;
	for (q = p; q < end && *q != ' '; q++)
		if ((unsigned char)*q < 0x21 || (unsigned char)*q > 0x7e)
			return 0;
	if (q == p || (size_t)(q - p) >= len ||
	    (size_t)(end - q) < sizeof(tag) || memcmp(q, tag, sizeof(tag) - 1))
		return 0;
	for (r = q + sizeof(tag) - 1; r < end - 1; r++) {
		if (*r < '0' || *r > '9' || n > 1000000)
			return 0;
		n = n * 10 + (unsigned long)(*r - '0');
	}
	if (r == q + sizeof(tag) - 1)
		return 0;
	snprintf(node, len, "%.*s", (int)(q - p), p);
	*rank = (unsigned)n;
	return 1;
}

/* A new block; 0 or -1 with why. */
static int check_env_block_add(struct check_env_set *set, const char *node,
			       unsigned rank, unsigned line, const char **why)
{
	struct check_env_block *grown;

	for (size_t i = 0; i < set->n_blocks; i++)
		if (!strcmp(set->blocks[i].node, node)) {
			*why = "a second block for the same node";
			return -1;
		}
	if (set->n_blocks >= CHECK_ENV_BLOCKS_MAX) {
		*why = "more than 1024 node blocks";
		return -1;
	}
	grown = realloc(set->blocks, (set->n_blocks + 1) * sizeof(*grown));
	if (!grown) {
		*why = "out of memory";
		return -1;
	}
	set->blocks = grown;
	snprintf(grown[set->n_blocks].node, sizeof(grown->node), "%s", node);
	grown[set->n_blocks].rank = rank;
	grown[set->n_blocks].line = line;
	set->n_blocks++;
	return 0;
}

int check_env_parse(const char *text, size_t len, const char *where,
		    struct check_env_set *set, char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	unsigned line = 0;

	set->v = NULL;
	set->n = 0;
	set->blocks = NULL;
	set->n_blocks = 0;
	if (len > CHECK_ENV_MAX_BYTES) {
		snprintf(err, errlen, "%s: more than %d bytes", where,
			 CHECK_ENV_MAX_BYTES);
		return -1;
	}
	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "%s: a NUL byte (not a text file)",
			 where);
		return -1;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *name, *val, *why = "";
		size_t nlen = 0, vlen = 0;
		int r;

		if (++line > CHECK_ENV_MAX_LINES) {
			snprintf(err, errlen, "%s: more than %d lines", where,
				 CHECK_ENV_MAX_LINES);
			goto fail;
		}
		{
			char node[CHECK_ENV_NAME_MAX];
			unsigned rank;

			if (check_env_block_head(p, le, node, sizeof(node),
						 &rank) &&
			    check_env_block_add(set, node, rank, line, &why) <
				    0) {
				snprintf(err, errlen, "%s:%u: %s", where, line,
					 why);
				goto fail;
			}
		}
		r = check_env_line(p, le, &name, &nlen, &val, &vlen, &why);
		if (r < 0) {
			snprintf(err, errlen, "%s:%u: %s", where, line, why);
			goto fail;
		}
		if (r > 0 &&
		    check_env_put(set, name, nlen, val, vlen, line) < 0) {
			snprintf(err, errlen, "%s:%u: out of memory", where,
				 line);
			goto fail;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
fail:
	check_env_set_free(set);
	return -1;
}

int check_env_from_environ(char *const *envp, struct check_env_set *set)
{
	set->v = NULL;
	set->n = 0;
	set->blocks = NULL;
	set->n_blocks = 0;
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');

		if (strncmp(envp[i], "NCCL_", 5) || !eq)
			continue;
		if (check_env_put(set, envp[i], (size_t)(eq - envp[i]), eq + 1,
				  strlen(eq + 1), 0) < 0) {
			check_env_set_free(set);
			return -1;
		}
	}
	return 0;
}

/* ---------------------------------------------------------- saturation */

/* The edges of one method with the first such edge's ladder: findings
 * never compare one method's figures with another's. */
static size_t check_env_pick(const Ring__Topology *t, Ring__EdgeMethod method,
			     size_t *use)
{
	const Ring__Edge *first = NULL;
	size_t n = 0;

	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];

		if (e->method_kind != method || e->n_ladder < 2 ||
		    e->n_ladder > LADDER_MAX_STEPS)
			continue;
		if (!first)
			first = e;
		if (e->n_ladder != first->n_ladder ||
		    memcmp(e->ladder, first->ladder,
			   e->n_ladder * sizeof(*e->ladder)))
			continue;
		use[n++] = i;
	}
	return n;
}

/* common/ladder.h's rule, the one coordinator/findings.c advises with,
 * on the survey's TCP edges, else its RDMA edges. */
void check_env_saturation(const Ring__Topology *t, struct check_env_sat *sat)
{
	static const Ring__EdgeMethod methods[] = {
		RING__EDGE_METHOD__EDGE_METHOD_TCP,
		RING__EDGE_METHOD__EDGE_METHOD_RDMA};
	size_t *use = calloc(t->n_edges + 1, sizeof(*use));
	struct ladder_edge *le = calloc(t->n_edges + 1, sizeof(*le));

	memset(sat, 0, sizeof(*sat));
	for (size_t k = 0; use && le && k < 2 && !sat->streams; k++) {
		size_t n = check_env_pick(t, methods[k], use), w = 0;
		struct ladder_sat ls;
		const Ring__Edge *e0;

		if (!n)
			continue;
		e0 = t->edges[use[0]];
		for (size_t i = 0; i < n; i++) {
			const Ring__Edge *e = t->edges[use[i]];

			le[i].gbps[0] = e->gbps_a_to_b;
			le[i].n[0] = e->n_gbps_a_to_b;
			le[i].gbps[1] = e->gbps_b_to_a;
			le[i].n[1] = e->n_gbps_b_to_a;
		}
		if (ladder_saturation(e0->ladder, e0->n_ladder, le, n, &ls) < 0)
			continue;
		sat->streams = ls.advised.streams;
		sat->top = e0->ladder[ls.top];
		sat->pct_of_top = ls.advised.ratio * 100.0;
		sat->edges = ls.advised.edges;
		sat->method = k ? "rdma" : "tcp";
		for (size_t i = 0; i < n; i++)
			if (t->edges[use[i]]->measured_ms > sat->measured_ms)
				sat->measured_ms =
					t->edges[use[i]]->measured_ms;
		for (size_t s = 0; s < e0->n_ladder && w < sizeof(sat->ladder);
		     s++)
			w += (size_t)snprintf(sat->ladder + w,
					      sizeof(sat->ladder) - w, "%s%u",
					      s ? "," : "", e0->ladder[s]);
	}
	free(use);
	free(le);
}

/* --------------------------------------------------------------- rules */

static void check_env_add(struct check_env_result *res, const char *level,
			  const struct check_env_var *v, const char *var,
			  const char *node, const char *fix, const char *fmt,
			  ...) __attribute__((format(printf, 7, 8)));

static void check_env_add(struct check_env_result *res, const char *level,
			  const struct check_env_var *v, const char *var,
			  const char *node, const char *fix, const char *fmt,
			  ...)
{
	struct check_env_issue *is;
	va_list ap;

	if (strcmp(level, "note"))
		res->counted++;
	if (!strcmp(level, "problem"))
		res->problems++;
	if (res->n >= CHECK_ENV_ISSUES_MAX) {
		res->dropped++;
		return;
	}
	is = &res->issues[res->n++];
	memset(is, 0, sizeof(*is));
	snprintf(is->level, sizeof(is->level), "%s", level);
	snprintf(is->variable, sizeof(is->variable), "%s", v ? v->name : var);
	snprintf(is->value, sizeof(is->value), "%s", v ? v->value : "");
	is->line = v ? v->line : 0;
	snprintf(is->node, sizeof(is->node), "%s", node ? node : "");
	snprintf(is->fix, sizeof(is->fix), "%s", fix ? fix : "");
	va_start(ap, fmt);
	if (vsnprintf(is->why, sizeof(is->why), fmt, ap) < 0)
		is->why[0] = '\0';
	va_end(ap);
}

/* check_env_add, unless the same finding (variable, value, why) is
 * there already: then it stands for more than one node (node ""). One
 * file for every node would otherwise say the same thing per node. */
static void check_env_add_once(struct check_env_result *res, const char *level,
			       const struct check_env_var *v, const char *var,
			       const char *node, const char *fix,
			       const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

static void check_env_add_once(struct check_env_result *res, const char *level,
			       const struct check_env_var *v, const char *var,
			       const char *node, const char *fix,
			       const char *fmt, ...)
{
	char why[sizeof(res->issues[0].why)];
	const char *name = v ? v->name : var, *value = v ? v->value : "";
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(why, sizeof(why), fmt, ap) < 0)
		why[0] = '\0';
	va_end(ap);
	for (size_t i = 0; res->shared && i < res->n; i++) {
		struct check_env_issue *is = &res->issues[i];

		if (strcmp(is->variable, name) || strcmp(is->value, value) ||
		    strcmp(is->why, why) || strcmp(is->level, level))
			continue;
		if (node && strcmp(is->node, node))
			is->node[0] = '\0';
		return;
	}
	check_env_add(res, level, v, var, node, fix, "%s", why);
}

static const struct check_env_var *check_env_var(const struct check_env_set *s,
						 const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

static void check_env_names(const struct check_env_set *set,
			    struct check_env_result *res)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct check_env_var *v = &set->v[i];
		/* A block's line concerns its node. */
		const char *node =
			v->block >= 0 ? set->blocks[v->block].node : NULL;

		/* A block pasted after another: easy to miss which wins. */
		if (v->prev_line && !strncmp(v->name, "NCCL_", 5))
			check_env_add(res, "note", v, NULL, node, "",
				      "set again after line %u: this value "
				      "wins, as in a shell",
				      v->prev_line);

		if (strncmp(v->name, "NCCL_", 5) || check_env_known(v->name))
			continue;
		if (!strcmp(v->name, CHECK_ENV_SWITCHLESS))
			check_env_add(
				res, "warning", v, NULL, node,
				"remove it; NCCL_ALGO=Ring and ranks in ring "
				"order (ringctl ranks) are what upstream NCCL "
				"needs",
				"not an upstream NCCL variable (a patched "
				"build's?): upstream NCCL ignores it and does "
				"not keep itself to ring neighbours");
		else
			check_env_add(res, "warning", v, NULL, node,
				      "remove it, or check it against the "
				      "NCCL build in use",
				      "not an upstream NCCL variable (a "
				      "patched build's?)");
	}
}

/* Two ranks that are not neighbours exist (a ring of more than 3). */
static int check_env_diagonals(const Ring__Topology *t)
{
	return !strcmp(t->kind, "ring") && t->n_ranks > 3;
}

/* NCCL_ALGO is a list ("Ring", "Tree,Ring", 2.24's "allreduce:tree;...",
 * "^tree"): only Ring, and nothing but Ring, keeps to ring neighbours. */
static int check_env_algo_ring_only(const char *val, char *bad, size_t len)
{
	const char *p = val;
	size_t w = 0;
	int ok = 1;

	bad[0] = '\0';
	if (*p == '^') {
		snprintf(bad, len, "an exclusion list");
		return 0;
	}
	while (*p) {
		size_t n = strcspn(p, ",;");
		const char *tok = p, *colon = memchr(p, ':', n);

		if (colon) {
			n -= (size_t)(colon + 1 - tok);
			tok = colon + 1;
		}
		while (n && *tok == ' ') {
			tok++;
			n--;
		}
		if (n && !(n == 4 && !strncasecmp(tok, "ring", 4))) {
			ok = 0;
			if (w < len)
				w += (size_t)snprintf(bad + w, len - w,
						      "%s%.*s", w ? ", " : "",
						      (int)n, tok);
		}
		p = tok + n;
		p += strspn(p, ",;");
	}
	if (!*val) {
		snprintf(bad, len, "an empty list");
		return 0;
	}
	return ok;
}

static void check_env_algo(const struct check_env_set *set,
			   const Ring__Topology *t, const char *node,
			   struct check_env_result *res)
{
	const struct check_env_var *v = check_env_var(set, "NCCL_ALGO");
	char bad[160];

	if (strcmp(t->kind, "ring"))
		return; /* ranks -f env sets no algorithm on a line or pair */
	if (!v) {
		if (check_env_diagonals(t))
			check_env_add(
				res, "problem", NULL, "NCCL_ALGO", node,
				"NCCL_ALGO=Ring",
				"unset on a switchless ring of %zu nodes: NCCL "
				"picks per collective and size, Tree "
				"included, and a tree connects ranks that are "
				"not ring neighbours (no data-plane path)",
				t->n_ranks);
		return;
	}
	if (check_env_algo_ring_only(v->value, bad, sizeof(bad)))
		return;
	check_env_add(res, "problem", v, NULL, node, "NCCL_ALGO=Ring",
		      "%s on a ring: only Ring keeps every connection between "
		      "ring neighbours; %s",
		      bad,
		      check_env_diagonals(t)
			      ? "the others connect ranks that have no "
				"data-plane path and hang"
			      : "the others find no better path here");
}

/* A decimal count 0..1024 (NCCL's channel counts are far below). */
static int check_env_count(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return *s && !*end && !errno && *out >= 0 && *out <= 1024 ? 0 : -1;
}

static void check_env_channels(const struct check_env_set *set,
			       const char *node, struct check_env_result *res)
{
	static const char *const names[2] = {"NCCL_MIN_NCHANNELS",
					     "NCCL_MAX_NCHANNELS"};
	const struct check_env_sat *sat = &res->sat;
	long val[2] = {-1, -1};
	char fix[96], when[32];

	render_format_time(sat->measured_ms, when, sizeof(when));
	snprintf(fix, sizeof(fix),
		 "NCCL_MIN_NCHANNELS=%u NCCL_MAX_NCHANNELS=%u",
		 sat->streams < 4 ? 4 : sat->streams,
		 sat->streams < 4 ? 4 : sat->streams);
	for (int k = 0; k < 2; k++) {
		const struct check_env_var *v = check_env_var(set, names[k]);

		if (!v)
			continue;
		if (check_env_count(v->value, &val[k]) < 0) {
			check_env_add(res, "problem", v, NULL, node, fix,
				      "not a channel count (0..1024)");
			continue;
		}
		if (sat->streams && (unsigned long)val[k] < sat->streams)
			check_env_add(
				res, "problem", v, NULL, node, fix,
				"%ld channel%s, fewer than the %u %s at which "
				"the survey's ladder (%s, %s) saturates: %.0f%% "
				"of %u %s (computed, median over %u edge%s "
				"measured up to %s)",
				val[k], val[k] == 1 ? "" : "s", sat->streams,
				!strcmp(sat->method, "rdma") ? "QPs"
							     : "streams",
				sat->ladder, sat->method, sat->pct_of_top,
				sat->top,
				!strcmp(sat->method, "rdma") ? "QPs"
							     : "streams",
				sat->edges, sat->edges == 1 ? "" : "s", when);
	}
	if (val[0] >= 0 && val[1] >= 0 && val[0] > val[1])
		check_env_add(res, "problem", check_env_var(set, names[0]),
			      NULL, node, fix,
			      "NCCL_MIN_NCHANNELS %ld is more than "
			      "NCCL_MAX_NCHANNELS %ld",
			      val[0], val[1]);
	if (val[0] < 0 && !check_env_var(set, names[0]) && sat->streams > 1)
		check_env_add(res, "warning", NULL, names[0], node, fix,
			      "unset: NCCL chooses its channel count itself "
			      "and may run fewer than the %u %s the ladder "
			      "needs (computed, %.0f%% of %u)",
			      sat->streams,
			      !strcmp(sat->method, "rdma") ? "QPs" : "streams",
			      sat->pct_of_top, sat->top);
}

/* NCCL's interface and device lists: "^" excludes, then "=" for exact
 * names, entries split at ',' (init.cc, utils.cc parseStringList; the
 * user guide's NCCL_SOCKET_IFNAME). port < 0: the entry names none. */
struct check_env_list {
	int exclude, exact;
	const char *p; /* the entries */
};

static void check_env_list_init(struct check_env_list *l, const char *val)
{
	l->exclude = *val == '^';
	val += l->exclude;
	l->exact = *val == '=';
	l->p = val + l->exact;
}

/* Does the list take name (with port, or -1 for an interface)? */
static int check_env_list_takes(const struct check_env_list *l,
				const char *name, long port)
{
	const char *p = l->p;
	size_t nl = strlen(name);
	int match = 0;

	while (*p && !match) {
		size_t n = strcspn(p, ",");
		const char *colon = memchr(p, ':', n);
		size_t en = colon ? (size_t)(colon - p) : n;
		long eport = -1;

		if (colon && port >= 0)
			eport = strtol(colon + 1, NULL, 10);
		if (en && (l->exact ? en == nl : en <= nl) &&
		    !strncmp(p, name, en) && (eport < 0 || eport == port))
			match = 1;
		p += n;
		p += *p == ',';
	}
	return l->exclude ? !match : match;
}

/* Data ports of a node: the interfaces its edges run over, and (from
 * status) those with carrier but no address. */
static void check_env_socket_node(const struct check_env_var *v,
				  const struct check_env_list *l,
				  const Ring__Topology *t,
				  const Ring__StatusReply *st,
				  const Ring__Rank *r,
				  struct check_env_result *res, const char *fix)
{
	if (*r->mgmt_interface &&
	    !check_env_list_takes(l, r->mgmt_interface, -1))
		check_env_add(res, "problem", v, NULL, r->node, fix,
			      "does not select %s's management interface %s "
			      "(NCCL's bootstrap would take another "
			      "interface, or none)",
			      r->node, r->mgmt_interface);
	for (size_t i = 0; i < t->n_edges; i++) {
		const Ring__Edge *e = t->edges[i];
		const char *ifn = !strcmp(e->a, r->node)   ? e->a_interface
				  : !strcmp(e->b, r->node) ? e->b_interface
							   : NULL;

		if (ifn && *ifn && strcmp(ifn, r->mgmt_interface) &&
		    check_env_list_takes(l, ifn, -1))
			check_env_add(res, "problem", v, NULL, r->node, fix,
				      "selects %s's data port %s: sockets "
				      "(bootstrap, rendezvous) must stay on "
				      "the management network; a data port "
				      "reaches one neighbour only",
				      r->node, ifn);
	}
	for (size_t i = 0; st && i < st->n_nodes; i++) {
		const Ring__NodeStatus *ns = st->nodes[i];

		if (strcmp(ns->node, r->node))
			continue;
		for (size_t k = 0; k < ns->n_unaddressed_up; k++)
			if (check_env_list_takes(l, ns->unaddressed_up[k], -1))
				check_env_add(
					res, "problem", v, NULL, r->node, fix,
					"selects %s's data port %s (carrier, "
					"no address)",
					r->node, ns->unaddressed_up[k]);
	}
}

static void check_env_socket(const struct check_env_set *set,
			     const Ring__Topology *t,
			     const Ring__StatusReply *st, size_t i0, size_t i1,
			     const char *node, struct check_env_result *res)
{
	const struct check_env_var *v =
		check_env_var(set, "NCCL_SOCKET_IFNAME");
	struct check_env_list l;
	char fix[160];
	const char *mif = t->n_ranks ? t->ranks[0]->mgmt_interface : "";
	int same = 1;

	for (size_t i = 1; i < t->n_ranks; i++)
		same &= !strcmp(t->ranks[i]->mgmt_interface, mif);
	if (same && *mif)
		snprintf(fix, sizeof(fix), "NCCL_SOCKET_IFNAME==%s", mif);
	else
		snprintf(fix, sizeof(fix),
			 "NCCL_SOCKET_IFNAME==<the node's management "
			 "interface> (see the corrected environment)");
	if (!v) {
		if (t->n_edges)
			check_env_add(res, "problem", NULL,
				      "NCCL_SOCKET_IFNAME", node, fix,
				      "unset: NCCL takes any interface but lo "
				      "and docker*, a data port included, "
				      "for its sockets (bootstrap)");
		return;
	}
	check_env_list_init(&l, v->value);
	for (size_t i = i0; i < i1; i++)
		check_env_socket_node(v, &l, t, st, t->ranks[i], res, fix);
}

/* "device:port" of Rank.hcas, split. */
static void check_env_hca_split(const char *hca, char *dev, size_t len,
				long *port)
{
	const char *colon = strrchr(hca, ':');
	size_t n = colon ? (size_t)(colon - hca) : strlen(hca);

	snprintf(dev, len, "%.*s", (int)n, hca);
	*port = colon ? strtol(colon + 1, NULL, 10) : -1;
}

static void check_env_hca(const struct check_env_set *set,
			  const Ring__Topology *t, size_t i0, size_t i1,
			  const char *node, struct check_env_result *res)
{
	const struct check_env_var *v = check_env_var(set, "NCCL_IB_HCA");
	struct check_env_list l;

	if (v)
		check_env_list_init(&l, v->value);
	for (size_t i = i0; i < i1; i++) {
		const Ring__Rank *r = t->ranks[i];
		char fix[600];
		size_t w = 0;
		int first = 1;

		w += (size_t)snprintf(fix, sizeof(fix), "NCCL_IB_HCA==");
		for (size_t k = 0; k < r->n_hcas && w < sizeof(fix); k++)
			if (ranks_hca_printed(r, k)) {
				w += (size_t)snprintf(fix + w, sizeof(fix) - w,
						      "%s%s", first ? "" : ",",
						      r->hcas[k]);
				first = 0;
			}
		if (!v) {
			/* NCCL takes every device, unaddressed ones and
			 * those without a partner included. */
			if (r->n_hcas)
				check_env_add_once(
					res, "warning", NULL, "NCCL_IB_HCA",
					node, fix,
					"unset: NCCL uses every RDMA device, "
					"not only the functions that face the "
					"neighbours (ranks -f env names them)");
			continue;
		}
		for (size_t k = 0; k < r->n_hcas; k++) {
			char dev[128];
			long port;

			check_env_hca_split(r->hcas[k], dev, sizeof(dev),
					    &port);
			if (!ranks_hca_printed(r, k)) {
				if (check_env_list_takes(&l, dev, port))
					check_env_add(
						res, "problem", v, NULL,
						r->node, fix,
						"selects %s's function %s, "
						"which no function facing the "
						"other neighbour pairs with: "
						"NCCL's device for it names "
						"one cable's subnet, and a "
						"connection through it can "
						"hang",
						r->node, r->hcas[k]);
				continue;
			}
			if (check_env_list_takes(&l, dev, port))
				continue;
			/* Twins share no name: a device not named next_rdma
			 * or prev_rdma faces one of the two. */
			check_env_add(res, "problem", v, NULL, r->node, fix,
				      "leaves out %s's function %s, through "
				      "which it reaches %s%s%s: that cable "
				      "(or its PCIe half) stays unused",
				      r->node, r->hcas[k],
				      !strcmp(dev, r->next_rdma) ? r->next_node
				      : !strcmp(dev, r->prev_rdma)
					      ? r->prev_node
					      : r->next_node,
				      strcmp(dev, r->next_rdma) &&
						      strcmp(dev, r->prev_rdma)
					      ? " or "
					      : "",
				      strcmp(dev, r->next_rdma) &&
						      strcmp(dev, r->prev_rdma)
					      ? r->prev_node
					      : "");
		}
	}
}

/* An entry NCCL can use between cable neighbours on their own subnets:
 * RoCE v2 (routable, UDP) with an IPv4-mapped address. */
static int check_env_gid_good(const Ring__Gid *g)
{
	struct in6_addr a;

	return g && g->type && !strcasecmp(g->type, "RoCE v2") && g->gid &&
	       inet_pton(AF_INET6, g->gid, &a) == 1 && IN6_IS_ADDR_V4MAPPED(&a);
}

static const Ring__Gid *check_env_gid_at(const Ring__RdmaPort *p, long idx)
{
	for (size_t i = 0; i < p->n_gids; i++)
		if (p->gids[i]->index == idx)
			return p->gids[i];
	return NULL;
}

static const Ring__RdmaPort *check_env_inv_port(const Ring__Inventory *inv,
						const char *dev, long port)
{
	for (size_t i = 0; inv && i < inv->n_rdma_devices; i++) {
		const Ring__RdmaDevice *d = inv->rdma_devices[i];

		if (strcmp(d->name, dev))
			continue;
		for (size_t k = 0; k < d->n_ports; k++)
			if (d->ports[k]->port == port)
				return d->ports[k];
	}
	return NULL;
}

/* What stands at an index that is not the right one, for the why. */
static void check_env_gid_what(const Ring__Gid *g, char *buf, size_t len)
{
	const char *gid = g && g->gid ? g->gid : "";
	struct in6_addr a;

	if (!g)
		snprintf(buf, len, "no GID there");
	else if (g->type && !strcasecmp(g->type, "RoCE v2") &&
		 inet_pton(AF_INET6, gid, &a) == 1)
		snprintf(buf, len, "RoCE v2 %s, not IPv4-mapped", gid);
	else
		snprintf(buf, len, "%s %s",
			 g->type && *g->type ? g->type : "unknown type", gid);
}

/* The functions of r that NCCL will use: Rank.hcas, less those the
 * environment's NCCL_IB_HCA leaves out. */
static int check_env_gid_uses(const struct check_env_list *hca,
			      const char *hcaname, char *dev, size_t len,
			      long *port)
{
	check_env_hca_split(hcaname, dev, len, port);
	return !hca || check_env_list_takes(hca, dev, *port);
}

/* The node's GID tables (its inventory) against idx: 1 checked (issues
 * added), 0 nothing to check there (no table for any function used). */
static int check_env_gid_node(const struct check_env_var *v, long idx,
			      const struct check_env_list *hca,
			      const Ring__Rank *r, const Ring__Inventory *inv,
			      struct check_env_result *res)
{
	char wrong[360] = "", missing[200] = "", fits[200] = "";
	size_t ww = 0, wm = 0, wf = 0;
	long fit = -1;
	unsigned checked = 0;

	for (size_t k = 0; k < r->n_hcas; k++) {
		const Ring__RdmaPort *p;
		const Ring__Gid *g;
		char dev[128], what[160];
		long port;

		if (!check_env_gid_uses(hca, r->hcas[k], dev, sizeof(dev),
					&port))
			continue;
		p = check_env_inv_port(inv, dev, port);
		if (!p) {
			if (wm < sizeof(missing))
				wm += (size_t)snprintf(
					missing + wm, sizeof(missing) - wm,
					"%s%s", wm ? ", " : "", r->hcas[k]);
			continue;
		}
		checked++;
		g = check_env_gid_at(p, idx);
		if (check_env_gid_good(g))
			continue;
		check_env_gid_what(g, what, sizeof(what));
		if (ww < sizeof(wrong))
			ww += (size_t)snprintf(wrong + ww, sizeof(wrong) - ww,
					       "%s%s (%s)", ww ? ", " : "",
					       r->hcas[k], what);
	}
	if (*missing)
		check_env_add(res, "note", v, NULL, r->node, "",
			      "%s's function%s %s not in its inventory: no "
			      "GID table to check",
			      r->node, strchr(missing, ',') ? "s" : "",
			      missing);
	if (!checked)
		return 0;
	if (!*wrong) {
		if (r->gid_index >= 0 && r->gid_index != idx)
			check_env_add(res, "note", v, NULL, r->node, "",
				      "index %ld is a RoCE v2 IPv4 GID on "
				      "%s's functions too; the survey's RDMA "
				      "tests used index %d",
				      idx, r->node, r->gid_index);
		return 1;
	}
	/* The right index: the smallest that is RoCE v2 IPv4 on every
	 * function used; else each function's own. */
	for (long cand = 0; cand <= 255 && fit < 0; cand++) {
		int all = 1;

		for (size_t k = 0; k < r->n_hcas && all; k++) {
			const Ring__RdmaPort *p;
			char dev[128];
			long port;

			if (!check_env_gid_uses(hca, r->hcas[k], dev,
						sizeof(dev), &port) ||
			    !(p = check_env_inv_port(inv, dev, port)))
				continue;
			all = check_env_gid_good(check_env_gid_at(p, cand));
		}
		if (all)
			fit = cand;
	}
	if (fit >= 0) {
		char fix[64];

		snprintf(fix, sizeof(fix), "NCCL_IB_GID_INDEX=%ld", fit);
		check_env_add(res, "problem", v, NULL, r->node, fix,
			      "index %ld is not the RoCE v2 IPv4 GID on %s's "
			      "%s; index %ld is, on every function NCCL uses "
			      "there (inventory)",
			      idx, r->node, wrong, fit);
		return 1;
	}
	for (size_t k = 0; k < r->n_hcas; k++) {
		const Ring__RdmaPort *p;
		char dev[128];
		long port, own = -1;

		if (!check_env_gid_uses(hca, r->hcas[k], dev, sizeof(dev),
					&port) ||
		    !(p = check_env_inv_port(inv, dev, port)))
			continue;
		for (size_t i = 0; i < p->n_gids && own < 0; i++)
			if (check_env_gid_good(p->gids[i]))
				own = p->gids[i]->index;
		if (wf >= sizeof(fits))
			break;
		if (own >= 0)
			wf += (size_t)snprintf(fits + wf, sizeof(fits) - wf,
					       "%s%s %ld", wf ? ", " : "",
					       r->hcas[k], own);
		else
			wf += (size_t)snprintf(fits + wf, sizeof(fits) - wf,
					       "%s%s none", wf ? ", " : "",
					       r->hcas[k]);
	}
	check_env_add(res, "problem", v, NULL, r->node,
		      "give each function an IPv4 address (a RoCE v2 IPv4 "
		      "GID) at one index, or leave out those without",
		      "index %ld is not the RoCE v2 IPv4 GID on %s's %s; no "
		      "one index is, on every function NCCL uses there (%s)",
		      idx, r->node, wrong, fits);
	return 1;
}

static void check_env_gid(const struct check_env_set *set,
			  const Ring__Topology *t,
			  const Ring__Inventory *const *inv, size_t i0,
			  size_t i1, const char *node,
			  struct check_env_result *res)
{
	const struct check_env_var *v = check_env_var(set, "NCCL_IB_GID_INDEX");
	const struct check_env_var *hv = check_env_var(set, "NCCL_IB_HCA");
	struct check_env_list hca;
	long idx;
	int measured = 0;

	if (!v)
		return;
	if (check_env_count(v->value, &idx) < 0 || idx > 255) {
		check_env_add(res, "problem", v, NULL, node,
			      "the measured index (see the corrected "
			      "environment), or leave it unset",
			      "not a GID index (0..255)");
		return;
	}
	if (hv)
		check_env_list_init(&hca, hv->value);
	for (size_t i = i0; i < i1; i++) {
		const Ring__Rank *r = t->ranks[i];
		char fix[64];

		if (!r->n_hcas)
			continue;
		if (r->nccl_gid_index < 0 || !*r->nccl_gid_note)
			check_env_add_once(
				res, "note", v, NULL, node, "",
				"ranks -f env leaves it to NCCL, whose default "
				"(>= 2.21) picks each function's RoCE v2 IPv4 "
				"entry: a fixed index breaks when an address "
				"change shifts the GID table");
		/* The node's own GID tables, when its inventory is here. */
		if (inv && inv[i] &&
		    check_env_gid_node(v, idx, hv ? &hca : NULL, r, inv[i],
				       res)) {
			measured = 1;
			continue;
		}
		/* Else what the survey's RDMA tests used. */
		if (r->gid_index < 0)
			continue;
		measured = 1;
		if (r->gid_index == idx)
			continue;
		snprintf(fix, sizeof(fix), "NCCL_IB_GID_INDEX=%d",
			 r->gid_index);
		check_env_add(res, "problem", v, NULL, r->node, fix,
			      "%s's neighbour-facing functions use GID index "
			      "%d (measured: the RoCE v2 IPv4 GID the "
			      "survey's RDMA tests used), not %ld",
			      r->node, r->gid_index, idx);
	}
	if (!measured)
		check_env_add(res, "note", v, NULL, node, "",
			      "not checked: no inventory with the functions' "
			      "GID tables, and the last survey measured no "
			      "GID index (no RDMA test, or the functions "
			      "disagree)");
}

/* Does r face two different neighbours over RDMA functions? Then NCCL
 * needs subnet-aware routing to reach each over the one facing it. */
static int check_env_routed(const Ring__Rank *r)
{
	return r->n_hcas && *r->next_node && *r->prev_node &&
	       strcmp(r->next_node, r->prev_node);
}

/* What ranks -f env sets and a job's environment should set the same
 * way, and what it costs when it does not. unset NULL: not judged when
 * absent (the launcher variables: `check nccl-env` without a file reads
 * only NCCL_*). The variables with rules of their own are not here. */
struct check_env_printed_rule {
	const char *name;
	const char *unset; /* level when absent, NULL: not judged */
	const char *differs;
	const char *why;
};

static const struct check_env_printed_rule check_env_printed_rules[] = {
	{"NCCL_IB_SUBNET_AWARE_ROUTING", "problem", "problem",
	 "without it NCCL picks a function without regard to the peer's "
	 "cable; where that function faces the other neighbour, "
	 "ibv_modify_qp fails with 110 (Connection timed out)"},
	{"NCCL_NET_FORCE_MERGE", "problem", "problem",
	 "an NCCL device of functions facing one neighbour names only that "
	 "cable's subnet to its peers; where both ends picked functions "
	 "facing away from each other, the connection times out (110)"},
	{"NCCL_IB_SUBNET_PREFIX_LEN", "warning", "warning",
	 "NCCL masks both ends' GIDs with this prefix (default 24) to tell "
	 "the cables apart; the survey computed the prefix under which the "
	 "functions facing the two neighbours share no subnet"},
	{"NCCL_CROSS_NIC", "warning", "warning",
	 "a ring channel enters on the function facing the previous rank "
	 "and leaves on the one facing the next: different NICs"},
	{"NCCL_NET_PLUGIN", "warning", "warning",
	 "an external network plugin in the image would replace the "
	 "built-in IB transport and its subnet-aware routing"},
	{"NCCL_NET", "warning", "warning",
	 "without NCCL_NET=IB a broken RDMA set-up falls back to sockets "
	 "over the management network, silently and slowly"},
	{"NODE_RANK", NULL, "problem",
	 "not this node's rank: the rank order changed since the file was "
	 "written, or the block is another node's (print it again)"},
	{"MASTER_ADDR", NULL, "problem",
	 "the rendezvous must be rank 0's management address (a data-plane "
	 "address hangs the launcher)"},
	{"GLOO_SOCKET_IFNAME", NULL, "warning",
	 "Gloo's sockets belong on the management interface"},
	{"UCX_NET_DEVICES", NULL, "warning",
	 "UCX belongs on the management interface; a data port reaches one "
	 "neighbour only"},
	{"OMPI_MCA_btl_tcp_if_include", NULL, "warning",
	 "Open MPI's TCP transport belongs on the management interface"},
	{"OMPI_MCA_oob_tcp_if_include", NULL, "warning",
	 "Open MPI's out-of-band channel belongs on the management "
	 "interface"},
};

/* Is name set anywhere in set (before the blocks or in one)? */
static int check_env_has_var(const struct check_env_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->v[i].name, name))
			return 1;
	return 0;
}

/* Judged by their own rules above. */
static int check_env_has_rule(const char *name)
{
	static const char *const own[] = {
		"NCCL_ALGO",	      "NCCL_MIN_NCHANNELS",
		"NCCL_MAX_NCHANNELS", "NCCL_SOCKET_IFNAME",
		"NCCL_IB_HCA",	      "NCCL_IB_GID_INDEX",
	};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strcmp(name, own[i]))
			return 1;
	return 0;
}

/* rank i's block of ranks -f env, parsed; 0 or -1 (refused there). */
static int check_env_printed_set(const Ring__Topology *t, size_t i,
				 struct check_env_set *out)
{
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int rc = -1;

	out->v = NULL;
	out->n = 0;
	out->blocks = NULL;
	out->n_blocks = 0;
	if (!m)
		return -1;
	if (ranks_env_node(m, t, i) < 0) {
		fclose(m);
		goto out;
	}
	if (fclose(m) == 0)
		rc = check_env_parse(buf, len, "ranks -f env", out, err,
				     sizeof(err));
out:
	free(buf);
	return rc;
}

/* Every variable ranks -f env sets for the ranks [i0, i1) that set
 * leaves out or sets another way. */
static void check_env_printed(const struct check_env_set *set,
			      const Ring__Topology *t, size_t i0, size_t i1,
			      struct check_env_result *res)
{
	for (size_t i = i0; i < i1; i++) {
		const Ring__Rank *r = t->ranks[i];
		struct check_env_set pset;

		if (check_env_printed_set(t, i, &pset) < 0)
			return;
		for (size_t k = 0; k < pset.n; k++) {
			const struct check_env_var *pv = &pset.v[k];
			const struct check_env_var *v =
				check_env_var(set, pv->name);
			const struct check_env_printed_rule *ru = NULL;
			char fix[CHECK_ENV_NAME_MAX + 1100];

			if (check_env_has_rule(pv->name) ||
			    (res->shared && !strcmp(pv->name, "NODE_RANK")))
				continue;
			if (v && !strcmp(v->value, pv->value))
				continue;
			for (size_t q = 0;
			     q < sizeof(check_env_printed_rules) /
					 sizeof(check_env_printed_rules[0]);
			     q++)
				if (!strcmp(check_env_printed_rules[q].name,
					    pv->name))
					ru = &check_env_printed_rules[q];
			if (!ru && strncmp(pv->name, "NCCL_", 5))
				continue;
			if (!v && ru && !ru->unset)
				continue;
			snprintf(fix, sizeof(fix), "%s=%s", pv->name,
				 pv->value);
			if (!v)
				check_env_add_once(
					res, ru ? ru->unset : "warning", NULL,
					pv->name, r->node, fix,
					"unset; ranks -f env sets %s: %s", fix,
					ru ? ru->why
					   : "the survey's environment sets it");
			else
				check_env_add_once(
					res, ru ? ru->differs : "warning", v,
					NULL, r->node, fix,
					"ranks -f env sets %s: %s", fix,
					ru ? ru->why
					   : "the survey's environment sets it");
		}
		check_env_set_free(&pset);
	}
}

/* Variables ranks -f env leaves alone that would break what it sets. */
static void check_env_merging(const struct check_env_set *set,
			      const Ring__Topology *t, size_t i0, size_t i1,
			      const char *node, struct check_env_result *res)
{
	const struct check_env_var *v =
		check_env_var(set, "NCCL_IB_MERGE_NICS");
	const struct check_env_var *lv =
		check_env_var(set, "NCCL_NET_MERGE_LEVEL");
	int routed = 0, automatic = 0;

	for (size_t i = i0; i < i1; i++) {
		routed |= check_env_routed(t->ranks[i]);
		automatic |= t->ranks[i]->nic_groups_automatic;
	}
	if (!routed)
		return;
	if (v && !strcmp(v->value, "0"))
		check_env_add_once(
			res, "problem", v, NULL, node,
			"leave it unset (NCCL's default, 1)",
			"every NCCL device is then one function, whose "
			"listener names only its own cable's subnet: where "
			"both ends picked functions facing away from each "
			"other (cables p0 to p0 or p1 to p1), the connection "
			"times out (ibv_modify_qp 110)");
	if (lv && automatic && !strcasecmp(lv->value, "LOC"))
		check_env_add_once(
			res, "problem", lv, NULL, node,
			"leave it unset (NCCL's default, PORT)",
			"LOC stops NCCL fusing each PCI device's functions, "
			"one facing each neighbour, into one device: each "
			"function's listener then names only its own cable's "
			"subnet, and a connection can time out (110)");
}

long check_env_version(const char *s)
{
	unsigned long part[3] = {0, 0, 0};
	size_t n = 0;
	char *end;

	if (!s || !*s)
		return -1;
	for (;;) {
		if (*s < '0' || *s > '9')
			return -1;
		part[n] = strtoul(s, &end, 10);
		if (part[n] > 999)
			return -1;
		n++;
		s = end;
		if (*s != '.' || n == 3)
			break;
		s++;
	}
	/* "2.30.7-1", NCCL's tags: the package revision is not compared. */
	if (n < 2 || (*s && *s != '-'))
		return -1;
	return (long)(part[0] * 1000000 + part[1] * 1000 + part[2]);
}

/* The NCCL the environment needs: subnet-aware routing (2.30.7) where a
 * node faces two neighbours. */
static void check_env_nccl_version(const Ring__Topology *t,
				   struct check_env_result *res)
{
	long need = check_env_version(RANKS_NCCL_MIN);
	long have = check_env_version(res->nccl_version);
	int routed = 0;

	for (size_t i = 0; i < t->n_ranks; i++)
		routed |= check_env_routed(t->ranks[i]);
	if (!routed)
		return;
	if (have < 0)
		check_env_add(
			res, "note", NULL, "--nccl-version", NULL,
			"NCCL >= " RANKS_NCCL_MIN,
			"not given: this ring needs NCCL >= " RANKS_NCCL_MIN
			" (subnet-aware routing); an older NCCL ignores "
			"NCCL_IB_SUBNET_AWARE_ROUTING and is likely to "
			"fail here with ibv_modify_qp 110");
	else if (have < need)
		check_env_add(res, "problem", NULL, "--nccl-version", NULL,
			      "NCCL >= " RANKS_NCCL_MIN,
			      "NCCL %s ignores NCCL_IB_SUBNET_AWARE_ROUTING "
			      "(first in " RANKS_NCCL_MIN
			      "): it picks functions "
			      "without regard to the peer's cable, and a "
			      "connection whose function faces the other "
			      "neighbour fails with ibv_modify_qp 110",
			      res->nccl_version);
}

/* The environment node sees: the lines before any block, then its own
 * block's over them. The view's strings are set's (free view->v only). */
static int check_env_view(const struct check_env_set *set, int block,
			  struct check_env_set *view)
{
	memset(view, 0, sizeof(*view));
	view->v = calloc(set->n + 1, sizeof(*view->v));
	if (!view->v)
		return -1;
	for (int pass = 0; pass < 2 && (!pass || block >= 0); pass++)
		for (size_t i = 0; i < set->n; i++) {
			const struct check_env_var *v = &set->v[i];
			size_t k;

			if (v->block != (pass ? block : -1))
				continue;
			for (k = 0;
			     k < view->n && strcmp(view->v[k].name, v->name);
			     k++)
				;
			view->v[k] = *v;
			if (k == view->n)
				view->n++;
		}
	return 0;
}

/* Blocks that name no rank, or another rank than the node has now. */
static void check_env_blocks(const struct check_env_set *set,
			     const Ring__Topology *t,
			     struct check_env_result *res)
{
	for (size_t b = 0; b < set->n_blocks; b++) {
		const struct check_env_block *bl = &set->blocks[b];
		const Ring__Rank *r = NULL;
		char var[CHECK_ENV_NAME_MAX + 16];

		for (size_t i = 0; i < t->n_ranks && !r; i++)
			if (!strcmp(t->ranks[i]->node, bl->node))
				r = t->ranks[i];
		snprintf(var, sizeof(var), "# %s (rank %u)", bl->node,
			 bl->rank);
		if (!r)
			check_env_add(res, "warning", NULL, var, bl->node,
				      "remove the block, or survey again",
				      "line %u: a block for %s, which is not a "
				      "rank of the last survey",
				      bl->line, bl->node);
		else if (r->rank != bl->rank)
			check_env_add(res, "problem", NULL, var, bl->node,
				      "print the environment again (ringctl "
				      "ranks -f env)",
				      "line %u: %s is rank %u now, not %u: the "
				      "rank order changed since this was "
				      "written",
				      bl->line, bl->node, r->rank, bl->rank);
	}
}

/* Every rule over one environment and the ranks [i0, i1) it is for;
 * node names them in the findings (NULL: one file for every node). */
static void check_env_scope(const struct check_env_set *set,
			    const Ring__Topology *t,
			    const Ring__StatusReply *st,
			    const Ring__Inventory *const *inv, size_t i0,
			    size_t i1, const char *node,
			    struct check_env_result *res)
{
	check_env_algo(set, t, node, res);
	check_env_channels(set, node, res);
	check_env_socket(set, t, st, i0, i1, node, res);
	check_env_hca(set, t, i0, i1, node, res);
	check_env_gid(set, t, inv, i0, i1, node, res);
	check_env_printed(set, t, i0, i1, res);
	check_env_merging(set, t, i0, i1, node, res);
}

void check_env_lint(const struct check_env_set *set, const Ring__Topology *t,
		    const Ring__StatusReply *st,
		    const Ring__Inventory *const *inv,
		    struct check_env_result *res)
{
	res->n = res->dropped = res->counted = res->problems = 0;
	check_env_saturation(t, &res->sat);
	check_env_names(set, res);
	check_env_nccl_version(t, res);
	/* One file for every node: each finding once. */
	res->shared = !set->n_blocks;
	if (res->shared) {
		check_env_scope(set, t, st, inv, 0, t->n_ranks, NULL, res);
		return;
	}
	/* Each node's own block: nothing leaks from one to another. */
	check_env_blocks(set, t, res);
	for (size_t i = 0; i < t->n_ranks; i++) {
		const Ring__Rank *r = t->ranks[i];
		struct check_env_set view;
		int block = -1;

		for (size_t b = 0; b < set->n_blocks; b++)
			if (!strcmp(set->blocks[b].node, r->node))
				block = (int)b;
		/* A file of one node's block checks that node. */
		if (block < 0) {
			check_env_add(res, "note", NULL, "NODE_RANK", r->node,
				      "",
				      "no block for %s in this file: not "
				      "checked",
				      r->node);
			continue;
		}
		if (check_env_view(set, block, &view) < 0)
			continue;
		check_env_scope(&view, t, st, inv, i, i + 1, r->node, res);
		free(view.v);
	}
}

/* -------------------------------------------------------------- output */

static void check_env_render_sat(struct writer *w,
				 const struct check_env_sat *sat)
{
	char when[32];

	writer_obj_start(w, "saturation");
	if (!sat->streams) {
		writer_none(w, "streams_computed", "none");
		writer_str(w, "basis",
			   "no ladder of two or more counts in the survey");
		writer_obj_end(w);
		return;
	}
	render_format_time(sat->measured_ms, when, sizeof(when));
	writer_uint(w, "streams_computed", sat->streams);
	writer_double(w, "pct_of_top_computed", sat->pct_of_top, 0);
	writer_uint(w, "top_streams", sat->top);
	writer_str(w, "ladder", sat->ladder);
	writer_str(w, "method", sat->method);
	writer_uint(w, "edges", sat->edges);
	writer_str(w, "ladder_measured_at", when);
	writer_obj_end(w);
}

void check_env_render(struct writer *w, FILE *out, enum writer_format fmt,
		      const char *source, const Ring__Topology *t,
		      const struct check_env_result *res)
{
	char when[32], refused[512];
	int plain = fmt == WRITER_PLAIN;

	render_format_time(t->surveyed_ms, when, sizeof(when));
	writer_str(w, "verdict", res->counted ? "problems" : "ok");
	writer_str(w, "source", source);
	writer_str(w, "kind", t->kind);
	writer_str(w, "surveyed", when);
	writer_uint(w, "problems", res->problems);
	writer_uint(w, "warnings", res->counted - res->problems);
	check_env_render_sat(w, &res->sat);
	writer_list_start(w, "issues");
	for (size_t i = 0; i < res->n; i++) {
		const struct check_env_issue *is = &res->issues[i];

		writer_obj_start(w, NULL);
		writer_str(w, "level", is->level);
		writer_str(w, "variable", is->variable);
		writer_str(w, "value", is->value);
		if (is->line)
			writer_uint(w, "line", is->line);
		if (*is->node)
			writer_str(w, "node", is->node);
		writer_str(w, "why", is->why);
		if (*is->fix)
			writer_str(w, "fix", is->fix);
		writer_obj_end(w);
	}
	writer_list_end(w);
	if (res->dropped)
		writer_uint(w, "issues_left_out", res->dropped);
	if (t->n_ranks && ranks_check(t, "env", refused, sizeof(refused)) < 0)
		/* ranks -f env refuses too (exit 1 there): say why here. */
		writer_str(w, "corrected_env_refused", refused);
	else
		refused[0] = '\0';
	if (!plain && !refused[0]) {
		/* The corrected environment per node, each as env prints
		 * it. */
		writer_list_start(w, "corrected_env");
		for (size_t i = 0; i < t->n_ranks; i++) {
			char *buf = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&buf, &len);

			if (!m)
				break;
			if (ranks_env_node(m, t, i) < 0) {
				fclose(m);
				free(buf);
				break;
			}
			fclose(m);
			writer_obj_start_named(w, t->ranks[i]->node);
			writer_str(w, "node", t->ranks[i]->node);
			writer_uint(w, "rank", t->ranks[i]->rank);
			writer_str(w, "env", buf);
			writer_obj_end(w);
			free(buf);
		}
		writer_list_end(w);
	}
	writer_finish(w);
	if (plain && t->n_ranks && !refused[0]) {
		fputs("\ncorrected environment per node (as ringctl ranks -f "
		      "env prints it):\n",
		      out);
		ranks_text(out, t, "env");
	}
	fflush(out);
}

/* ----------------------------------------------------------------- run */

/* The whole input, bounded: more than CHECK_ENV_MAX_BYTES is an error. */
static char *check_env_slurp(FILE *f, size_t *len)
{
	char *buf = malloc(CHECK_ENV_MAX_BYTES + 1);
	size_t n;

	if (!buf)
		return NULL;
	n = fread(buf, 1, CHECK_ENV_MAX_BYTES + 1, f);
	if (ferror(f)) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static int check_env_load(const char *file, struct check_env_set *set)
{
	extern char **environ;
	char err[512];
	size_t len = 0;
	char *text;
	FILE *f;
	int rc;

	if (!file) {
		if (check_env_from_environ(environ, set) < 0) {
			fprintf(stderr, "ringctl: out of memory\n");
			return -1;
		}
		return 0;
	}
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f) {
		fprintf(stderr, "ringctl: %s: %s\n", file, strerror(errno));
		return -1;
	}
	text = check_env_slurp(f, &len);
	if (!text)
		fprintf(stderr, "ringctl: %s: %s\n", file,
			errno ? strerror(errno) : "read error");
	if (f != stdin)
		fclose(f);
	if (!text)
		return -1;
	rc = check_env_parse(text, len, strcmp(file, "-") ? file : "stdin", set,
			     err, sizeof(err));
	free(text);
	if (rc < 0)
		fprintf(stderr, "ringctl: %s\n", err);
	return rc;
}

/* The status reply (topology and nodes) or NULL with why on stderr. */
static Ring__Envelope *check_env_status(const char *sock, int timeout_ms)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *rep = NULL;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	char err[512];

	req.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	req.status_request = &sr;
	if (client_request(sock, timeout_ms, &req, &rep, err, sizeof(err)) <
	    0) {
		fprintf(stderr, "ringctl: %s\n", err);
		return NULL;
	}
	if (rep->body_case != RING__ENVELOPE__BODY_STATUS_REPLY) {
		fprintf(stderr, "ringctl: %s\n",
			rep->body_case == RING__ENVELOPE__BODY_ERROR
				? "the coordinator refused the status request"
				: "unexpected reply to the status request");
		frame_free(rep);
		return NULL;
	}
	return rep;
}

void check_env_invs_fetch(const char *sock, int timeout_ms,
			  const Ring__Topology *t, struct check_env_invs *x)
{
	int rdma = 0;

	memset(x, 0, sizeof(*x));
	for (size_t i = 0; t && i < t->n_ranks; i++)
		rdma |= t->ranks[i]->n_hcas > 0;
	if (!rdma)
		return; /* no function, no GID to check */
	x->inv = calloc(t->n_ranks, sizeof(*x->inv));
	x->rep = calloc(t->n_ranks, sizeof(*x->rep));
	if (!x->inv || !x->rep) {
		check_env_invs_free(x);
		return;
	}
	x->n = t->n_ranks;
	for (size_t i = 0; i < t->n_ranks; i++) {
		Ring__Envelope req = RING__ENVELOPE__INIT, *rep = NULL;
		Ring__InventoryRequest ir = RING__INVENTORY_REQUEST__INIT;
		char err[256];

		if (!t->ranks[i]->n_hcas)
			continue;
		ir.node = t->ranks[i]->node;
		req.body_case = RING__ENVELOPE__BODY_INVENTORY_REQUEST;
		req.inventory_request = &ir;
		/* A node without one is checked against the survey only. */
		if (client_request(sock, timeout_ms, &req, &rep, err,
				   sizeof(err)) < 0)
			continue;
		x->rep[i] = rep;
		if (rep->body_case == RING__ENVELOPE__BODY_INVENTORY_REPLY)
			x->inv[i] = rep->inventory_reply->inventory;
	}
}

void check_env_invs_free(struct check_env_invs *x)
{
	for (size_t i = 0; x->rep && i < x->n; i++)
		if (x->rep[i])
			frame_free(x->rep[i]);
	free(x->rep);
	free(x->inv);
	memset(x, 0, sizeof(*x));
}

/* Why the last survey cannot be checked against, or NULL. */
static const char *check_env_unusable(const Ring__Topology *t)
{
	if (!t || !t->surveyed_ms)
		return "no survey yet (ringctl survey --wait)";
	if (t->order_invalid && *t->order_invalid)
		return "the rank order of the last survey no longer holds; "
		       "survey again once the ring is whole";
	if (!t->n_ranks)
		return "the last survey found no ring, line or pair";
	return NULL;
}

/* No file and no NCCL_* variable here: nothing to check, and not a
 * failure (check all's row says the same). */
static int check_env_not_given(enum writer_format fmt)
{
	struct writer *w = writer_new(stdout, fmt);

	writer_str(w, "verdict", "not_given");
	writer_str(w, "source", "environment");
	writer_str(w, "why", CHECK_ENV_NOT_GIVEN);
	writer_finish(w);
	fflush(stdout);
	return 0;
}

int check_env_run(const char *sock, int timeout_ms, enum writer_format fmt,
		  const char *file_or_dash, const char *nccl_version)
{
	struct check_env_set set = {0};
	struct check_env_result *res = NULL;
	struct check_env_invs invs = {0};
	Ring__Envelope *rep = NULL;
	const Ring__Topology *t;
	const char *why;
	int ret = CHECK_ENV_EXIT_TROUBLE;

	if (check_env_load(file_or_dash, &set) < 0)
		return CHECK_ENV_EXIT_TROUBLE;
	if (!file_or_dash && !set.n) {
		check_env_set_free(&set);
		return check_env_not_given(fmt);
	}
	rep = check_env_status(sock, timeout_ms);
	if (!rep)
		goto out;
	t = rep->status_reply->topology;
	why = check_env_unusable(t);
	if (why) {
		fprintf(stderr, "ringctl: cannot check: %s\n", why);
		goto out;
	}
	res = calloc(1, sizeof(*res));
	if (!res) {
		fprintf(stderr, "ringctl: out of memory\n");
		goto out;
	}
	snprintf(res->nccl_version, sizeof(res->nccl_version), "%s",
		 nccl_version ? nccl_version : "");
	/* The GID rule is the inventories' one reader. */
	if (check_env_has_var(&set, "NCCL_IB_GID_INDEX"))
		check_env_invs_fetch(sock, timeout_ms, t, &invs);
	check_env_lint(&set, t, rep->status_reply, invs.inv, res);
	check_env_render(
		writer_new(stdout, fmt), stdout, fmt,
		file_or_dash
			? (strcmp(file_or_dash, "-") ? file_or_dash : "stdin")
			: "environment",
		t, res);
	ret = res->counted ? CHECK_ENV_EXIT_PROBLEMS : 0;
out:
	free(res);
	check_env_invs_free(&invs);
	if (rep)
		frame_free(rep);
	check_env_set_free(&set);
	return ret;
}
