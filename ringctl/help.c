/* ringctl's command-line table and the help, usage and table dump printed
 * from it (help.h). A synopsis form may break over lines at '\n'; text in
 * braces, {NAME}, is a limit from testlimits.h/arlimits.h (help_token). */
#include <stdarg.h>
#include <string.h>

#include "arlimits.h"
#include "client.h"
#include "help.h"
#include "testlimits.h"

#define HELP_FORMS 3
#define HELP_OPTS 20
#define HELP_SUMMARY_COL 30

struct help_opt {
	const char *name; /* "--streams", "-v" */
	const char *arg;  /* "N", or NULL for a flag */
	const char *desc;
};

struct help_cmd {
	const char *name; /* "status", "test bw" */
	const char *forms[HELP_FORMS];
	const char *summary;
	struct help_opt opts[HELP_OPTS];
	const char *notes; /* lines under the options; may be NULL */
	const char *example;
};

static const struct help_opt help_globals[] = {
	{"-s", "SOCKET",
	 "control socket (default $RINGCTL_SOCKET, else " CLIENT_DEFAULT_SOCKET
	 ")"},
	{"-f", "FORMAT",
	 "plain (default), keyvalue or json; for ranks also hostfile, "
	 "rankfile, torchrun or env; for status also svg (a picture of the "
	 "ring)"},
	{"-t", "SECONDS",
	 "reply timeout, more than 0, at most 3600 (default 10; test adds its "
	 "own length)"},
	{"-h", NULL, "this help (after a command: that command's)"},
	{"--help", NULL, "the same"},
	{"-V", NULL, "the version"},
	{"--version", NULL, "the same"},
};

#define SIZE_NOTE                                                              \
	"SIZE: bytes, K M G T P or KiB..PiB powers of 1024, KB..PB of 1000 "   \
	"(ringctl(8), SIZES)"
#define NODES_OPT                                                                  \
	{                                                                          \
		"--nodes", "NODE[,NODE...]",                                       \
			"these nodes (default: the ring, else the connected ones)" \
	}

/* Issue 24: the one ring of a site of several that a command is about. */
#define RING_OPT(desc)                                                         \
	{                                                                      \
		"--ring", "ID", desc                                           \
	}
static const struct help_cmd help_table[] = {
	{"status",
	 {"status [-v|--verbose] [--ring ID]"},
	 "topology of the last survey and the health of every node",
	 {{"-v", NULL, "every figure (else about 100 columns)"},
	  {"--verbose", NULL, "the same"},
	  RING_OPT("that ring alone, as a site of one ring shows")},
	 "several rings: a line per ring, the ones with problems in detail\n"
	 "exit 0 healthy, 1 degraded, 2 could not ask",
	 "ringctl status -v"},
	{"inventory",
	 {"inventory NODE"},
	 "one node's full inventory",
	 {{0}},
	 NULL,
	 "ringctl inventory n1"},
	{"explain",
	 {"explain EDGE|NODE [--ring ID]"},
	 "everything known about one edge or node, and the edge's ceiling",
	 {RING_OPT("read that ring's topology (the edge or node in it)")},
	 "EDGE: a-b, or a-b:IFACE for a twin; the ceiling: which limit the "
	 "edge's figure sits at\nexit 1: a problem found",
	 "ringctl explain n1-n2"},
	{"forget",
	 {"forget NODE"},
	 "drop a node that is down (root)",
	 {{0}},
	 NULL,
	 "ringctl forget n4"},
	{"survey",
	 {"survey [--wait [-v]] [--ring ID]"},
	 "survey the data plane now (root)",
	 {{"--wait", NULL, "wait for the survey, then print status"},
	  {"-v", NULL, "with --wait: status with every figure"},
	  RING_OPT("that ring's members only (repeat for several; --wait "
		   "with one: its status)")},
	 NULL,
	 "ringctl survey --wait"},
	{"ranks",
	 {"ranks [--ring ID]"},
	 "the rank order of the last survey",
	 {RING_OPT("that ring's order (a site of several rings needs it)")},
	 "-f hostfile, rankfile, torchrun or env: the launcher's own text\n"
	 "exit 1 while the order no longer holds, or several rings and no "
	 "--ring",
	 "ringctl -f hostfile ranks"},
	{"alerts",
	 {"alerts [--all [--since DURATION]]"},
	 "firing alerts, clearing ones marked",
	 {{"--all", NULL,
	   "every resolved episode too, with its firing, cleared and "
	   "resolved times"},
	  {"--since", "DURATION",
	   "with --all: since DURATION ago (default 7d)"}},
	 "exit 0 healthy, 1 not",
	 "ringctl alerts --all --since 1d"},
	{"check ranks",
	 {"check ranks FILE|- [--ring ID]"},
	 "a launcher's rank order against the measured ring",
	 {RING_OPT("against that ring (a site of several rings needs it)")},
	 "FILE: an MPI hostfile, rankfile, host list or torchrun lines; names "
	 "pairs without a cable,\nprints the corrected order in the same "
	 "format\nexit 0 ok, 1 problems found, 2 could not check",
	 "ringctl check ranks hosts.txt"},
	{"check rendezvous",
	 {"check rendezvous HOST[:PORT] [--ring ID]"},
	 "whether the launcher's rendezvous lands on a management address",
	 {RING_OPT("the nodes of that ring")},
	 "exit 0 ok, 1 problems found, 2 could not check",
	 "ringctl check rendezvous n1:29500"},
	{"check nccl-env",
	 {"check nccl-env [--nccl-version V] [--ring ID] [FILE|-]"},
	 "lint an NCCL environment against the last survey",
	 {{"--nccl-version", "V",
	   "the NCCL version the job runs (e.g. 2.21.5)"},
	  RING_OPT("against that ring (a site of several rings needs it)")},
	 "FILE: VAR=value lines, each node's block its own; none: this "
	 "process's environment;\nprints the corrected one per node\n"
	 "exit 0 ok, 1 problems found, 2 could not check",
	 "ringctl check nccl-env --nccl-version 2.21.5 nccl.env"},
	{"check all",
	 {"check all [--hostfile F] [--env F] [--rendezvous HOST[:PORT]]\n"
	  "[--nccl-version V] [--ring ID]"},
	 "every check that applies, one row each",
	 {{"--hostfile", "F",
	   "the launcher's hosts (as check ranks reads them)"},
	  {"--env", "F",
	   "the NCCL environment (default: this process's NCCL_* variables)"},
	  {"--rendezvous", "HOST[:PORT]",
	   "default: the torchrun lines' master address, else $MASTER_ADDR"},
	  {"--nccl-version", "V", "the NCCL version the job runs"},
	  RING_OPT("against that ring (a site of several rings needs it)")},
	 "exit 0 ok, 1 problems found, 2 could not check",
	 "ringctl check all --hostfile hosts.txt --env nccl.env"},
	{"history",
	 {"history EDGE [--since DURATION] [--before MS:ID] [--ring ID]"},
	 "an edge's measured figures over time, the newest page",
	 {{"--since", "DURATION", "this far back (e.g. 30m, 6h, 7d)"},
	  {"--before", "MS:ID", "the older page's cursor that a page prints"},
	  RING_OPT("the edge must be that ring's")},
	 "EDGE: a-b; plain: a sparkline per series",
	 "ringctl history n1-n2 --since 6h"},
	{"watch",
	 {"watch [--count N] [--kind KIND[,KIND...]] [--ring ID]"},
	 "stream changes, measurements and alerts, a snapshot first",
	 {{"--count", "N",
	   "exit 0 after N events past the snapshot (0: the snapshot alone)"},
	  {"--kind", "KIND[,KIND...]",
	   "only these (KIND: node, edge, topology, alert, health, survey, "
	   "measurement; default all)"},
	  RING_OPT("only events about that ring")},
	 "json: one object a line; -t bounds the wait for the snapshot\n"
	 "exit 2 when the coordinator refuses or goes away",
	 "ringctl -f json watch --kind edge,alert"},
	{"plan",
	 {"plan --model-bytes SIZE | --params N [--bytes-per-param B]\n"
	  "[--reserve SIZE] [--nodes NODE[,NODE...]] [--ring ID]",
	  "plan --weights PATH [--max-bytes SIZE]\n"
	  "[--nodes NODE[,NODE...]] [--ring ID]",
	  "plan --layers L --token-ms T [--allreduce-bytes B]\n"
	  "[--nodes NODE[,NODE...]] [--ring ID]"},
	 "does a model fit, shard or not, the tensor-parallel tax",
	 {{"--model-bytes", "SIZE",
	   "the model's size, against each node's MemAvailable"},
	  {"--params", "N", "or its parameter count (e.g. 744B, 1.6T, 70e9)"},
	  {"--bytes-per-param", "B", "with --params (default 2, bf16)"},
	  {"--reserve", "SIZE", "memory kept back per node (default 0)"},
	  {"--weights", "PATH",
	   "each node's agent reads PATH (root; read_path in agent.conf)"},
	  {"--max-bytes", "SIZE",
	   "with --weights: read at most SIZE (default 4 GiB, 10 s)"},
	  {"--layers", "L", "all-reduces per token"},
	  {"--token-ms", "T", "the time per token, in ms"},
	  {"--allreduce-bytes", "B", "bytes per all-reduce (default 10240)"},
	  NODES_OPT,
	  RING_OPT("that ring's nodes and figures (default: the site's)")},
	 SIZE_NOTE "\n"
		   "--model-bytes/--params: total, nodes needed, gap; exit 1 "
		   "when it does not fit\n"
		   "--weights: disk GB/s against the best one-way edge into "
		   "each node; exit 2 when a node\ncould not be compared\n"
		   "--layers: L x the per-layer all-reduce time against T; "
		   "exit 1 when a figure is missing",
	 "ringctl plan --params 70B --nodes n1,n2,n3,n4"},
	{"test bw",
	 {"test bw A B [--streams 1-{STREAMS_MAX}] [--duration "
	  "{DUR_MIN}-{DUR_MAX}] [--warmup 0-{WARMUP_MAX}]\n"
	  "[--direction a-to-b|b-to-a|both]"},
	 "TCP bandwidth between A and B over their cable (root)",
	 {{"--streams", "N", "parallel streams (default {STREAMS_DEF})"},
	  {"--duration", "S", "seconds measured (default {DUR_DEF})"},
	  {"--warmup", "S", "seconds before measuring (default {WARMUP_DEF})"},
	  {"--direction", "a-to-b|b-to-a|both", "who sends (default a-to-b)"}},
	 "exit 1 when the test failed",
	 "ringctl test bw n1 n2 --streams 8 --duration 10"},
	{"test lat",
	 {"test lat A B [--sizes S,...] [--iterations 1-{LAT_ITER_MAX}]"},
	 "TCP latency between A and B (root)",
	 {{"--sizes", "S,...",
	   "up to {LAT_SIZES_MAX} sizes of 1-{TCP_LAT_MAX} (default "
	   "{LAT_DEFAULTS})"},
	  {"--iterations", "N",
	   "round trips per size (default {LAT_ITER_DEF})"}},
	 "sizes: K M G are powers of 1024, KB MB GB of 1000; latency sizes\n"
	 "default to {LAT_DEFAULTS}, duration {DUR_DEF} s, warm-up {WARMUP_DEF} s, "
	 "iterations {LAT_ITER_DEF}",
	 "ringctl test lat n1 n2 --sizes 64,4K"},
	{"test rdma-bw",
	 {"test rdma-bw A B --op write|read [--qps 1-{QPS_MAX}] [--size "
	  "1-{RDMA_SIZE_MAX}]\n"
	  "[--duration S] [--warmup S] [--iterations 1-{RDMA_ITER_MAX}]\n"
	  "[--tx-depth 1-{TXD_MAX}] [--cq-mod N] [--post-list "
	  "1-{POST_LIST_MAX}]\n"
	  "[--gid-a 0-{GID_MAX}] [--gid-b 0-{GID_MAX}] [--mtu 256-4096]\n"
	  "[--tc 0-{TC_MAX}] [--sl 0-{SL_MAX}] [--ack-timeout "
	  "{ACK_MIN}-{ACK_MAX}]"},
	 "RDMA bandwidth, A posts (root)",
	 {{"--op", "write|read", "RDMA WRITE or READ"},
	  {"--qps", "N", "queue pairs (default {QPS_DEF})"},
	  {"--size", "SIZE", "bytes per work request"},
	  {"--duration", "S", "seconds measured (default {DUR_DEF})"},
	  {"--warmup", "S", "seconds before measuring (default {WARMUP_DEF})"},
	  {"--iterations", "N", "work requests per QP instead of a duration"},
	  {"--tx-depth", "N",
	   "outstanding work requests per QP, the tx depth (default "
	   "{TXD_DEF})"},
	  {"--cq-mod", "N", "a completion every N; must divide the tx depth"},
	  {"--post-list", "N", "work requests per post"},
	  {"--gid-a", "IDX", "A's GID index (default: the agents choose)"},
	  {"--gid-b", "IDX", "B's GID index"},
	  {"--mtu", "BYTES", "path MTU: 256, 512, 1024, 2048 or 4096"},
	  {"--tc", "N", "traffic class"},
	  {"--sl", "N", "service level"},
	  {"--ack-timeout", "N",
	   "ACK timeout 4.096 us * 2^N (default {ACK_DEF})"}},
	 "sizes: K M G are powers of 1024, KB MB GB of 1000\n"
	 "exit 1 when the test failed",
	 "ringctl test rdma-bw n1 n2 --op write --qps 4"},
	{"test rdma-lat",
	 {"test rdma-lat A B --op write|read [--sizes S,...]\n"
	  "[--iterations 1-{LAT_ITER_MAX}] [--gid-a IDX] [--gid-b IDX]\n"
	  "[--tc N] [--sl N] [--ack-timeout N]"},
	 "RDMA latency, A posts (root)",
	 {{"--op", "write|read", "RDMA WRITE or READ"},
	  {"--sizes", "S,...",
	   "up to {LAT_SIZES_MAX} distinct sizes of 1-{RDMA_LAT_MAX}"},
	  {"--iterations", "N",
	   "round trips per size (default {LAT_ITER_DEF})"},
	  {"--gid-a", "IDX", "A's GID index (0-{GID_MAX})"},
	  {"--gid-b", "IDX", "B's GID index (0-{GID_MAX})"},
	  {"--tc", "N", "traffic class (0-{TC_MAX})"},
	  {"--sl", "N", "service level (0-{SL_MAX})"},
	  {"--ack-timeout", "N", "ACK timeout exponent ({ACK_MIN}-{ACK_MAX})"}},
	 "sizes: K M G are powers of 1024, KB MB GB of 1000; latency sizes\n"
	 "default to {LAT_DEFAULTS}\nexit 1 when the test failed",
	 "ringctl test rdma-lat n1 n2 --op read --sizes 8,4K"},
	{"test allreduce",
	 {"test allreduce [--nodes N,N,...|--order N,N,...]\n"
	  "[--sizes LO..HI|S,S,...] [--iterations 1-{AR_ITER_MAX}]\n"
	  "[--warmup 0-{AR_WARMUP_MAX}] [--step-timeout "
	  "{AR_STEP_MIN}-{AR_STEP_MAX}]\n"
	  "[--transport auto|tcp|rdma] [--ring ID]"},
	 "ring all-reduce over the data plane (root)",
	 {{"--nodes", "N,N,...", "these nodes in the measured ring order"},
	  {"--order", "N,N,...", "these nodes in this order"},
	  {"--sizes", "LO..HI|S,S,...",
	   "a doubling ladder or a list (default 1M..1G)"},
	  {"--iterations", "N", "timed runs per size (default {AR_ITER_DEF})"},
	  {"--warmup", "N", "untimed runs per size (default {AR_WARMUP_DEF})"},
	  {"--step-timeout", "MS", "deadline of one step"},
	  {"--transport", "auto|tcp|rdma",
	   "auto: RDMA WRITE on cables surveyed over RDMA, else TCP"},
	  RING_OPT("in that ring's published order (a site of several rings "
		   "needs it)")},
	 "exit 1 when the job failed",
	 "ringctl test allreduce --sizes 1M..64M"},
	{"pki init",
	 {"pki init DIR [--cn NAME] [--days N]"},
	 "create a cluster CA in DIR",
	 {{"--cn", "NAME",
	   "the CA's common name (default \"ringd cluster CA\")"},
	  {"--days", "N", "validity, 1-36500 days (default 3650)"}},
	 NULL,
	 "ringctl pki init /etc/ringd/pki"},
	{"pki issue",
	 {"pki issue DIR NAME [--coordinator] [--days N]"},
	 "key and certificate for node NAME, signed by DIR's CA",
	 {{"--coordinator", NULL, "for the coordinator"},
	  {"--days", "N", "validity, 1-36500 days (default 825)"}},
	 "prints the serial, which deny_serial names to revoke it",
	 "ringctl pki issue /etc/ringd/pki n1"},
	{"help",
	 {"help [COMMAND]"},
	 "a command's synopsis, options and an example",
	 {{0}},
	 "the same as ringctl COMMAND --help",
	 "ringctl help test bw"},
};

#define HELP_N (sizeof(help_table) / sizeof(help_table[0]))
#define HELP_NGLOBALS (sizeof(help_globals) / sizeof(help_globals[0]))

static const char *const help_groups[] = {"check", "test", "pki"};

/* A limit's text for {name}; 0 or -1 for an unknown name. */
static int help_token(const char *name, size_t n, char *out, size_t len)
{
	char sz[16];
	struct {
		const char *name;
		long long v;
	} nums[] = {
		{"STREAMS_MAX", TESTLIMITS_STREAMS_MAX},
		{"STREAMS_DEF", TESTLIMITS_STREAMS_DEFAULT},
		{"DUR_MAX", TESTLIMITS_DURATION_MAX_MS / 1000},
		{"DUR_DEF", TESTLIMITS_DURATION_DEFAULT_MS / 1000},
		{"WARMUP_MAX", TESTLIMITS_WARMUP_MAX_MS / 1000},
		{"WARMUP_DEF", TESTLIMITS_WARMUP_DEFAULT_MS / 1000},
		{"LAT_ITER_MAX", TESTLIMITS_LAT_ITERATIONS_MAX},
		{"LAT_ITER_DEF", TESTLIMITS_LAT_ITERATIONS_DEFAULT},
		{"LAT_SIZES_MAX", TESTLIMITS_LAT_SIZES_MAX},
		{"QPS_MAX", TESTLIMITS_RDMA_QPS_MAX},
		{"QPS_DEF", TESTLIMITS_RDMA_QPS_DEFAULT},
		{"RDMA_ITER_MAX", (long long)TESTLIMITS_RDMA_ITERATIONS_MAX},
		{"TXD_MAX", TESTLIMITS_RDMA_TX_DEPTH_MAX},
		{"TXD_DEF", TESTLIMITS_RDMA_TX_DEPTH_DEFAULT},
		{"POST_LIST_MAX", TESTLIMITS_RDMA_POST_LIST_MAX},
		{"GID_MAX", TESTLIMITS_GID_INDEX_MAX},
		{"TC_MAX", TESTLIMITS_RDMA_TC_MAX},
		{"SL_MAX", TESTLIMITS_RDMA_SL_MAX},
		{"ACK_MIN", TESTLIMITS_RDMA_ACK_TIMEOUT_MIN},
		{"ACK_MAX", TESTLIMITS_RDMA_ACK_TIMEOUT_MAX},
		{"ACK_DEF", TESTLIMITS_RDMA_ACK_TIMEOUT_DEFAULT},
		{"AR_ITER_MAX", ARLIMITS_ITERATIONS_MAX},
		{"AR_ITER_DEF", ARLIMITS_ITERATIONS_DEFAULT},
		{"AR_WARMUP_MAX", ARLIMITS_WARMUP_MAX},
		{"AR_WARMUP_DEF", ARLIMITS_WARMUP_DEFAULT},
		{"AR_STEP_MIN", ARLIMITS_STEP_MIN_MS},
		{"AR_STEP_MAX", ARLIMITS_STEP_MAX_MS},
	};

#define HELP_IS(s) (n == strlen(s) && !strncmp(name, s, n))
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (HELP_IS(nums[i].name))
			return snprintf(out, len, "%lld", nums[i].v);
	if (HELP_IS("DUR_MIN"))
		return snprintf(out, len, "%g",
				TESTLIMITS_DURATION_MIN_MS / 1000.0);
	if (HELP_IS("TCP_LAT_MAX"))
		return snprintf(
			out, len, "%s",
			testlimits_format_size(TESTLIMITS_TCP_LAT_SIZE_MAX, sz,
					       sizeof(sz)));
	if (HELP_IS("RDMA_LAT_MAX"))
		return snprintf(
			out, len, "%s",
			testlimits_format_size(TESTLIMITS_RDMA_LAT_SIZE_MAX, sz,
					       sizeof(sz)));
	if (HELP_IS("RDMA_SIZE_MAX"))
		return snprintf(out, len, "%s",
				testlimits_format_size(TESTLIMITS_RDMA_SIZE_MAX,
						       sz, sizeof(sz)));
	if (HELP_IS("LAT_DEFAULTS")) {
		size_t used = 0;

		out[0] = '\0';
		for (unsigned i = 0; i < TESTLIMITS_LAT_SIZES_DEFAULT_N; i++)
			used += (size_t)snprintf(
				out + used, used < len ? len - used : 0, "%s%s",
				i ? "," : "",
				testlimits_format_size(
					testlimits_lat_sizes_default[i], sz,
					sizeof(sz)));
		return (int)used;
	}
#undef HELP_IS
	return -1;
}

/* in with its {NAME}s replaced, into out (truncated to len). */
static const char *help_expand(const char *in, char *out, size_t len)
{
	size_t o = 0;

	while (*in && o + 1 < len) {
		const char *end = *in == '{' ? strchr(in, '}') : NULL;
		int w;

		if (end && (w = help_token(in + 1, (size_t)(end - in - 1),
					   out + o, len - o)) >= 0) {
			o += (size_t)w < len - o ? (size_t)w : len - o - 1;
			in = end + 1;
			continue;
		}
		out[o++] = *in++;
	}
	out[o] = '\0';
	return out;
}

const char *help_cmd_name(const struct help_cmd *c)
{
	return c->name;
}

int help_is_group(const char *name)
{
	for (size_t i = 0; i < sizeof(help_groups) / sizeof(help_groups[0]);
	     i++)
		if (!strcmp(name, help_groups[i]))
			return 1;
	return 0;
}

const struct help_cmd *help_find(int argc, char *const *argv, int *used)
{
	char two[64];

	if (argc < 1)
		return NULL;
	if (argc >= 2 && help_is_group(argv[0])) {
		snprintf(two, sizeof(two), "%s %s", argv[0], argv[1]);
		for (size_t i = 0; i < HELP_N; i++)
			if (!strcmp(help_table[i].name, two)) {
				*used = 2;
				return &help_table[i];
			}
	}
	for (size_t i = 0; i < HELP_N; i++)
		if (!strcmp(help_table[i].name, argv[0])) {
			*used = 1;
			return &help_table[i];
		}
	return NULL;
}

/* Print form's lines: the first after lead, the rest indented under the
 * command's arguments; returns the width of the last line. */
static size_t help_form(FILE *f, const char *lead, const char *name,
			const char *form)
{
	char buf[512], *line, *save = NULL;
	size_t indent = strlen(lead) + strlen(name) + 1, last = 0;
	int first = 1;

	help_expand(form, buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!first)
			fputc('\n', f);
		last = (size_t)fprintf(f, "%*s%s", first ? 0 : (int)indent,
				       first ? lead : "", line);
		if (first)
			last = strlen(lead) + strlen(line);
		first = 0;
	}
	return last;
}

/* text's lines (expanded), each after indent spaces. */
static void help_lines(FILE *f, int indent, const char *text)
{
	char buf[1024], *line, *save = NULL;

	help_expand(text, buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		fprintf(f, "%*s%s\n", indent, "", line);
}

/* A command's forms and summary, as the overview lists them. */
static void help_entry(FILE *f, const struct help_cmd *c)
{
	for (int k = 0; k < HELP_FORMS && c->forms[k]; k++) {
		size_t w = help_form(f, "  ", c->name, c->forms[k]);

		if (k + 1 < HELP_FORMS && c->forms[k + 1]) {
			fputc('\n', f);
			continue;
		}
		if (w + 2 <= HELP_SUMMARY_COL)
			fprintf(f, "%*s%s\n", (int)(HELP_SUMMARY_COL - w), "",
				c->summary);
		else
			fprintf(f, "\n%*s%s\n", HELP_SUMMARY_COL, "",
				c->summary);
	}
}

static void help_option_lines(FILE *f, const struct help_opt *o, size_t n,
			      int col)
{
	for (size_t i = 0; i < n && o[i].name; i++) {
		char head[64], desc[512];
		int w = snprintf(head, sizeof(head), "  %s%s%s", o[i].name,
				 o[i].arg ? " " : "", o[i].arg ? o[i].arg : "");

		help_expand(o[i].desc, desc, sizeof(desc));
		if (w + 2 > col)
			fprintf(f, "%s\n%*s", head, col, "");
		else
			fprintf(f, "%-*s", col, head);
		/* Wrap at 100 columns, on blanks. */
		for (const char *p = desc; *p;) {
			size_t room = 100 - (size_t)col, len = strlen(p);

			if (len > room) {
				len = room;
				while (len && p[len] != ' ')
					len--;
				if (!len)
					len = room;
			}
			fprintf(f, "%.*s\n", (int)len, p);
			p += len;
			while (*p == ' ')
				p++;
			if (*p)
				fprintf(f, "%*s", col, "");
		}
	}
}

void help_print_overview(FILE *f)
{
	fputs("usage: ringctl [-s SOCKET] [-f FORMAT] [-t SECONDS] COMMAND "
	      "[ARGS]\n"
	      "       ringctl help [COMMAND] | COMMAND --help | --help | "
	      "--version\n"
	      "options (before or after the command):\n",
	      f);
	help_option_lines(f, help_globals, HELP_NGLOBALS, 15);
	fputs("commands (ringctl help COMMAND: its options and an example):\n",
	      f);
	for (size_t i = 0; i < HELP_N; i++)
		help_entry(f, &help_table[i]);
	fputs("exit status: 0 healthy, 1 degraded, problems found or test "
	      "failed, 2 unreachable,\nrefused, could not check or bad usage "
	      "(-f json: an error is one object on stderr)\n",
	      f);
}

void help_print_usage(FILE *f, const struct help_cmd *c, const char *group)
{
	if (!c && group) {
		help_print_group(f, group);
		return;
	}
	if (!c) {
		fputs("usage: ringctl [-s SOCKET] [-f FORMAT] [-t SECONDS] "
		      "COMMAND [ARGS]\n"
		      "(ringctl --help: the commands)\n",
		      f);
		return;
	}
	for (int k = 0; k < HELP_FORMS && c->forms[k]; k++) {
		help_form(f, k ? "       ringctl " : "usage: ringctl ", c->name,
			  c->forms[k]);
		fputc('\n', f);
	}
	fprintf(f, "(ringctl help %s: the options and an example)\n", c->name);
}

int help_usage_text(const struct help_cmd *c, const char *group, char *buf,
		    size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	if (!f)
		return -1;
	help_print_usage(f, c, group);
	fclose(f);
	buf[len - 1] = '\0';
	/* No trailing newline in a JSON string. */
	for (size_t n = strlen(buf); n && buf[n - 1] == '\n'; n--)
		buf[n - 1] = '\0';
	return 0;
}

void help_print_command(FILE *f, const struct help_cmd *c)
{
	for (int k = 0; k < HELP_FORMS && c->forms[k]; k++) {
		help_form(f, k ? "       ringctl " : "usage: ringctl ", c->name,
			  c->forms[k]);
		fputc('\n', f);
	}
	fprintf(f, "%s\n", c->summary);
	if (c->opts[0].name) {
		fputs("options:\n", f);
		help_option_lines(f, c->opts, HELP_OPTS, 24);
	}
	if (c->notes)
		help_lines(f, 0, c->notes);
	fprintf(f, "example:\n  %s\n", c->example);
	fputs("global options -s SOCKET, -f FORMAT, -t SECONDS: ringctl "
	      "--help\n",
	      f);
}

void help_print_group(FILE *f, const char *group)
{
	size_t n = strlen(group);

	fprintf(f,
		"ringctl %s commands (ringctl help %s COMMAND: its options "
		"and an example):\n",
		group, group);
	for (size_t i = 0; i < HELP_N; i++)
		if (!strncmp(help_table[i].name, group, n) &&
		    help_table[i].name[n] == ' ')
			help_entry(f, &help_table[i]);
}

static void help_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void help_json_opts(FILE *f, const struct help_opt *o, size_t n)
{
	char buf[512];

	fputc('[', f);
	for (size_t i = 0; i < n && o[i].name; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		help_json_str(f, o[i].name);
		fputs(",\"arg\":", f);
		if (o[i].arg)
			help_json_str(f, o[i].arg);
		else
			fputs("null", f);
		fputs(",\"desc\":", f);
		help_json_str(f, help_expand(o[i].desc, buf, sizeof(buf)));
		fputc('}', f);
	}
	fputc(']', f);
}

/* A command that only names: all (NULL), that one, or a group's. */
static int help_selected(const char *name, const char *only)
{
	size_t n = only ? strlen(only) : 0;

	return !only || !strcmp(name, only) ||
	       (!strncmp(name, only, n) && name[n] == ' ');
}

void help_print_table(FILE *f, const char *only)
{
	char buf[1024];
	int any = 0;

	fputs("{\"globals\":", f);
	help_json_opts(f, help_globals, HELP_NGLOBALS);
	fputs(",\"commands\":[", f);
	for (size_t i = 0; i < HELP_N; i++) {
		const struct help_cmd *c = &help_table[i];

		if (!help_selected(c->name, only))
			continue;
		fputs(any++ ? ",{\"name\":" : "{\"name\":", f);
		help_json_str(f, c->name);
		fputs(",\"synopsis\":[", f);
		for (int k = 0; k < HELP_FORMS && c->forms[k]; k++) {
			if (k)
				fputc(',', f);
			help_json_str(
				f, help_expand(c->forms[k], buf, sizeof(buf)));
		}
		fputs("],\"summary\":", f);
		help_json_str(f, c->summary);
		fputs(",\"options\":", f);
		help_json_opts(f, c->opts, HELP_OPTS);
		fputs(",\"notes\":", f);
		help_json_str(f,
			      c->notes ? help_expand(c->notes, buf, sizeof(buf))
				       : "");
		fputs(",\"example\":", f);
		help_json_str(f, c->example);
		fputc('}', f);
	}
	fputs("]}\n", f);
}
