/* The NCCL environment as check nccl-env reads it: VAR=value lines from a
 * file or stdin (bounded: CHECK_ENV_MAX_BYTES, 1 MiB, CHECK_ENV_MAX_LINES
 * lines, a name CHECK_ENV_NAME_MAX and a value CHECK_ENV_VALUE_MAX bytes;
 * more is an error naming the line, never a cut), `ranks -f env`'s
 * per-node blocks, or the process's NCCL_* variables; and the names
 * upstream NCCL reads. Judges nothing. */
#include "check_env.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
