/* Counters around tests: kept per edge, turned into findings
 * (counters_eval.h). */
#include "counters_eval.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nodes one edge's tests run on: its two ends. */
#define CEV_NODES 2

struct cev_item {
	char node[64];
	char iface[16];
	char dev[64];
	unsigned port;
	char source[8];
	char name[64];
	uint64_t delta;
};

struct cev_edge {
	size_t n;
	unsigned left_out; /* past CEV_EDGE_MAX */
	char node[CEV_NODES][64];
	double seconds[CEV_NODES]; /* of the tests each node's side ran */
	struct cev_item it[CEV_EDGE_MAX];
	Ring__CounterDelta msg[CEV_EDGE_MAX];
	Ring__CounterDelta *ptr[CEV_EDGE_MAX];
};

static int cev_has(const char *name, const char *const *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(name, words[i]))
			return 1;
	return 0;
}

#define CEV_HAS(name, words)                                                   \
	cev_has(name, words, sizeof(words) / sizeof(words[0]))

enum cev_class cev_classify(const char *source, const char *name)
{
	static const char *const link[] = {"carrier_changes",
					   "carrier_down_count", "link_down"};
	static const char *const cong[] = {"cnp", "ecn", "marked", "thres"};
	static const char *const loss[] = {
		"drop",	   "discard",	"err",	     "crc",	  "out_of_seq",
		"timeout", "retry",	"buf",	     "duplicate", "miss",
		"fifo",	   "over",	"collision", "uncorrect", "lost",
		"jabber",  "undersize",
	};

	(void)source;
	/* Receiver-not-ready naks are the application's pace (no receive
	 * posted), not the network's. */
	if (strstr(name, "rnr"))
		return CEV_NONE;
	/* rxe's completer scheduled later: work, not loss ("deferred" is
	 * no "err"). */
	if (!strcmp(name, "ack_deferred"))
		return CEV_NONE;
	if (CEV_HAS(name, link))
		return CEV_LINK;
	if (strstr(name, "pause"))
		return CEV_PAUSE;
	if (CEV_HAS(name, cong))
		return CEV_CONGESTION;
	if (strstr(name, "corrected") && !strstr(name, "uncorrect"))
		return CEV_CABLE;
	if (strstr(name, "symbol"))
		return CEV_CABLE;
	if (CEV_HAS(name, loss))
		return CEV_LOSS;
	return CEV_NONE;
}

static void cev_item_from(struct cev_item *it, const char *node,
			  const Ring__CounterDelta *c)
{
	memset(it, 0, sizeof(*it));
	snprintf(it->node, sizeof(it->node), "%s", node ? node : "");
	snprintf(it->iface, sizeof(it->iface), "%s", c->interface);
	snprintf(it->dev, sizeof(it->dev), "%s", c->rdma_device);
	it->port = c->rdma_port;
	snprintf(it->source, sizeof(it->source), "%s", c->source);
	snprintf(it->name, sizeof(it->name), "%s", c->name);
	it->delta = c->delta;
}

static int cev_same(const struct cev_item *a, const struct cev_item *b)
{
	return !strcmp(a->node, b->node) && !strcmp(a->iface, b->iface) &&
	       !strcmp(a->dev, b->dev) && a->port == b->port &&
	       !strcmp(a->source, b->source) && !strcmp(a->name, b->name);
}

/* The slot of node in acc (taken if new), or -1 when both are others. */
static int cev_node_slot(struct cev_edge *acc, const char *node)
{
	for (int i = 0; i < CEV_NODES; i++)
		if (!strcmp(acc->node[i], node))
			return i;
	for (int i = 0; i < CEV_NODES; i++)
		if (!acc->node[i][0]) {
			snprintf(acc->node[i], sizeof(acc->node[i]), "%s",
				 node);
			return i;
		}
	return -1;
}

static void cev_edge_side(struct cev_edge *acc, const char *node,
			  const Ring__TestResult *r, const Ring__TestParams *p)
{
	int slot = cev_node_slot(acc, node);
	double span = r->window_s;

	/* An RDMA target measures no window: the test's asked length. */
	if (span <= 0 && p)
		span = (p->warmup_ms + p->duration_ms) / 1000.0;

	/* The agent's own span between its reads, where one moved. */
	if (r->n_counters && r->counters[0]->span_s > 0)
		span = r->counters[0]->span_s;
	if (slot >= 0 && span > 0)
		acc->seconds[slot] += span;
	for (size_t i = 0; i < r->n_counters; i++) {
		struct cev_item it;
		size_t k;

		cev_item_from(&it, node, r->counters[i]);
		for (k = 0; k < acc->n && !cev_same(&acc->it[k], &it); k++)
			;
		if (k < acc->n) {
			acc->it[k].delta =
				acc->it[k].delta > UINT64_MAX - it.delta
					? UINT64_MAX
					: acc->it[k].delta + it.delta;
		} else if (acc->n < CEV_EDGE_MAX) {
			acc->it[acc->n++] = it;
		} else {
			acc->left_out++;
		}
	}
}

int cev_edge_add(struct cev_edge **acc, const Ring__TestReport *rep)
{
	if (!rep || (!rep->a_side && !rep->b_side))
		return 0;
	if (!*acc) {
		*acc = calloc(1, sizeof(**acc));
		if (!*acc) {
			errno = ENOMEM;
			return -1;
		}
	}
	if (rep->a_side)
		cev_edge_side(*acc, rep->a, rep->a_side, rep->params);
	if (rep->b_side)
		cev_edge_side(*acc, rep->b, rep->b_side, rep->params);
	return 0;
}

size_t cev_edge_view(struct cev_edge *acc, Ring__CounterDelta ***out)
{
	*out = NULL;
	if (!acc || !acc->n)
		return 0;
	for (size_t i = 0; i < acc->n; i++) {
		Ring__CounterDelta *m = &acc->msg[i];
		struct cev_item *it = &acc->it[i];
		int slot = cev_node_slot(acc, it->node);

		ring__counter_delta__init(m);
		m->node = it->node;
		m->interface = it->iface;
		m->rdma_device = it->dev;
		m->rdma_port = it->port;
		m->source = it->source;
		m->name = it->name;
		m->delta = it->delta;
		m->span_s = slot >= 0 ? acc->seconds[slot] : 0;
		acc->ptr[i] = m;
	}
	*out = acc->ptr;
	return acc->n;
}

void cev_edge_free(struct cev_edge *acc)
{
	free(acc);
}

/* ---- findings ---- */

struct cev_out {
	struct finding *f;
	unsigned n, max;
};

static void cev_add(struct cev_out *o, const char *code, const char *level,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void cev_add(struct cev_out *o, const char *code, const char *level,
		    const char *fmt, ...)
{
	struct finding *f;
	va_list ap;

	if (o->n >= o->max)
		return;
	f = &o->f[o->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->code, sizeof(f->code), "%s", code);
	snprintf(f->level, sizeof(f->level), "%s", level);
	va_start(ap, fmt);
	vsnprintf(f->text, sizeof(f->text), fmt, ap);
	va_end(ap);
}

/* Where a counter was read, for people: "eth1" or "mlx5_0 port 1". */
static void cev_place(const Ring__CounterDelta *c, char *buf, size_t len)
{
	int rdma = !strcmp(c->source, "rdma") || !strcmp(c->source, "hw");

	if (rdma && *c->rdma_device)
		snprintf(buf, len, "%s port %u%s%s%s", c->rdma_device,
			 c->rdma_port, *c->interface ? " (" : "", c->interface,
			 *c->interface ? ")" : "");
	else
		snprintf(buf, len, "%s", *c->interface ? c->interface : "?");
}

/* One finding for the counters of class cls at c[first]'s node and place
 * (those after first that share them; done[] marks them used). */
static void cev_group(const char *what, Ring__CounterDelta *const *c, size_t n,
		      size_t first, enum cev_class cls, unsigned char *done,
		      struct cev_out *o)
{
	char place[128], other[128], list[200] = "";
	size_t used = 0;
	unsigned named = 0, more = 0;
	uint64_t frames = 0;
	double span = c[first]->span_s;
	unsigned before;
	int storm = 0;

	cev_place(c[first], place, sizeof(place));
	for (size_t i = first; i < n; i++) {
		const Ring__CounterDelta *x = c[i];
		int w;

		if (done[i] || cev_classify(x->source, x->name) != cls ||
		    strcmp(x->node, c[first]->node))
			continue;
		cev_place(x, other, sizeof(other));
		if (strcmp(other, place))
			continue;
		done[i] = 1;
		if (x->span_s > span)
			span = x->span_s;
		if (cls == CEV_PAUSE) {
			if (strstr(x->name, "storm"))
				storm = 1;
			/* Per-priority and global counters count the same
			 * frames; durations and transitions are not frames. */
			else if (!strstr(x->name, "duration") &&
				 !strstr(x->name, "transition") &&
				 x->delta > frames)
				frames = x->delta;
		}
		if (named >= CEV_NAMES_MAX) {
			more++;
			continue;
		}
		w = snprintf(list + used, sizeof(list) - used,
			     "%s%s +%llu (%s)", named ? ", " : "", x->name,
			     (unsigned long long)x->delta, x->source);
		if (w > 0 && (size_t)w < sizeof(list) - used) {
			used += (size_t)w;
			named++;
		}
	}
	if (more && used < sizeof(list))
		snprintf(list + used, sizeof(list) - used, " and %u more",
			 more);
	before = o->n;
	switch (cls) {
	case CEV_LOSS:
		cev_add(o, "counter_loss", "warn",
			"%s: %s %s: loss or error counters moved during the "
			"tests: %s",
			what, c[first]->node, place, list);
		break;
	case CEV_CONGESTION:
		cev_add(o, "ecn_congestion", "info",
			"%s: %s %s: congestion notification acted: %s (ECN "
			"marks seen, senders slowed)",
			what, c[first]->node, place, list);
		break;
	case CEV_PAUSE: {
		double rate = span > 0 ? (double)frames / span : 0;
		int warn = storm || rate >= CEV_PAUSE_WARN_PER_S;

		cev_add(o, warn ? "pause_storm" : "pause_frames",
			warn ? "warn" : "info",
			"%s: %s %s: %llu pause frames in %.1f s of tests "
			"(%.0f/s%s): %s; rx_*: the neighbour paused this port, "
			"tx_*: this port paused the neighbour",
			what, c[first]->node, place, (unsigned long long)frames,
			span, rate,
			warn ? ", a pause storm" : ", back-pressure", list);
		break;
	}
	case CEV_LINK:
		cev_add(o, "link_flap", "warn",
			"%s: %s %s: the link went down during the tests: %s",
			what, c[first]->node, place, list);
		break;
	case CEV_CABLE:
		cev_add(o, "fec_corrected", "info",
			"%s: %s %s: the physical layer corrected errors: %s "
			"(no loss yet; a rising rate hints at a marginal "
			"cable or optic)",
			what, c[first]->node, place, list);
		break;
	default:
		break;
	}
	/* The subject as fields: the node and the interface read. */
	if (o->n > before) {
		struct finding *f = &o->f[before];

		snprintf(f->node, sizeof(f->node), "%s", c[first]->node);
		snprintf(f->iface, sizeof(f->iface), "%s", c[first]->interface);
	}
}

unsigned cev_findings(const char *what, Ring__CounterDelta *const *c, size_t n,
		      struct finding *out, unsigned max)
{
	static const enum cev_class order[] = {CEV_LINK, CEV_LOSS, CEV_PAUSE,
					       CEV_CONGESTION, CEV_CABLE};
	struct cev_out o = {out, 0, max};
	unsigned char *done;

	if (!n || !c)
		return 0;
	done = calloc(n, 1);
	if (!done)
		return 0;
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (size_t i = 0; i < n && o.n < max; i++)
			if (!done[i] &&
			    cev_classify(c[i]->source, c[i]->name) == order[k])
				cev_group(what, c, n, i, order[k], done, &o);
	free(done);
	return o.n;
}

unsigned cev_report_findings(const Ring__TestReport *rep, struct finding *out,
			     unsigned max)
{
	const Ring__TestResult *side[2] = {rep->a_side, rep->b_side};
	size_t na = side[0] ? side[0]->n_counters : 0;
	size_t nb = side[1] ? side[1]->n_counters : 0;
	Ring__CounterDelta *copy, **ptr;
	char what[160];
	unsigned nf;
	size_t k = 0;

	if (!na && !nb)
		return 0;
	copy = calloc(na + nb, sizeof(*copy));
	ptr = calloc(na + nb, sizeof(*ptr));
	if (!copy || !ptr) {
		free(copy);
		free(ptr);
		return 0;
	}
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; side[s] && i < side[s]->n_counters; i++) {
			copy[k] = *side[s]->counters[i];
			copy[k].node = s ? rep->b : rep->a;
			ptr[k] = &copy[k];
			k++;
		}
	snprintf(what, sizeof(what), "test %s-%s", rep->a, rep->b);
	nf = cev_findings(what, ptr, k, out, max);
	for (unsigned i = 0; i < nf; i++)
		findings_set_edge(&out[i], rep->a, rep->b);
	free(copy);
	free(ptr);
	return nf;
}

void cev_report_attach(Ring__TestReport *rep, struct cev_report_buf *buf)
{
	unsigned n = cev_report_findings(rep, buf->f, CEV_REPORT_MAX);

	for (unsigned i = 0; i < n; i++) {
		ring__finding__init(&buf->m[i]);
		buf->m[i].code = buf->f[i].code;
		buf->m[i].level = buf->f[i].level;
		buf->m[i].text = buf->f[i].text;
		buf->m[i].node = buf->f[i].node;
		buf->m[i].interface = buf->f[i].iface;
		buf->m[i].edge = buf->f[i].edge;
		buf->p[i] = &buf->m[i];
	}
	rep->n_findings = n;
	rep->findings = n ? buf->p : NULL;
}
