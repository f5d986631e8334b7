/* Counters around tests turned into findings (issue 11): the deltas the
 * agents read around each test (TestResult.counters, agent/testcounters.h)
 * kept per edge over its tests, and read as evidence of
 *   loss or errors   drops, discards, CRC and sequence errors, ack
 *                    timeouts, retries, duplicate requests
 *   congestion/ECN   CNPs sent and handled, ECN-marked packets
 *   pause frames     PFC or global pause; above CEV_PAUSE_WARN_PER_S a
 *                    second of test a pause storm
 *   link flaps       carrier_down_count, carrier_changes, link_down*
 *   cable            FEC-corrected bits, symbol errors
 * Each finding names the node, interface or RDMA port, the counters and
 * their amounts. Pure: no I/O. docs/COUNTERS.md says more. */
#ifndef RING_COUNTERS_EVAL_H
#define RING_COUNTERS_EVAL_H

#include <stddef.h>

#include "findings.h"
#include "ring.pb-c.h"

/* Counters kept per edge over its tests; further ones are counted only. */
#define CEV_EDGE_MAX 64
/* Pause frames per second of test (both ways, one port) from which they
 * are a storm (warn) rather than back-pressure worth knowing (info): at
 * 100/s a port is paused often enough to cost throughput on any link
 * rate. */
#define CEV_PAUSE_WARN_PER_S 100.0
/* Counters named in one finding's text. */
#define CEV_NAMES_MAX 4

enum cev_class {
	CEV_NONE,
	CEV_LOSS,
	CEV_CONGESTION,
	CEV_PAUSE,
	CEV_LINK,
	CEV_CABLE,
};

/* What kind of evidence a counter is (CEV_NONE: volume or neutral). */
enum cev_class cev_classify(const char *source, const char *name);

struct cev_edge;

/* Add both sides of a test's report (nodes rep->a and rep->b) to an
 * edge's counters, allocated at the first: 0, or -1 (ENOMEM). A report
 * without counters still adds its seconds, which pause rates divide by. */
int cev_edge_add(struct cev_edge **acc, const Ring__TestReport *rep);
/* The edge's counters as messages (node and span_s set: the seconds of
 * that node's tests), owned by acc, valid until the next add or free.
 * Returns how many; 0 for a NULL acc. */
size_t cev_edge_view(struct cev_edge *acc, Ring__CounterDelta ***out);
void cev_edge_free(struct cev_edge *acc);

/* Findings from counters whose node is set (what: "edge n1-n2", the
 * texts' head). At most max written; the number returned. */
unsigned cev_findings(const char *what, Ring__CounterDelta *const *c, size_t n,
		      struct finding *out, unsigned max);
/* The same for one test's report: a_side's counters are rep->a's, b_side's
 * rep->b's ("test n1-n2: ..."). */
unsigned cev_report_findings(const Ring__TestReport *rep, struct finding *out,
			     unsigned max);

/* Findings a test report carries (TestReport.findings) at most. */
#define CEV_REPORT_MAX 16

/* Storage for a report's findings (on the caller's stack). */
struct cev_report_buf {
	struct finding f[CEV_REPORT_MAX];
	Ring__Finding m[CEV_REPORT_MAX];
	Ring__Finding *p[CEV_REPORT_MAX];
};

/* cev_report_findings into rep->findings, pointing into buf. */
void cev_report_attach(Ring__TestReport *rep, struct cev_report_buf *buf);

#endif
