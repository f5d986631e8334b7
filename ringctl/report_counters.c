/* Counters around a test, and their findings, in ringctl's reports
 * (report_counters.h). */
#include "report_counters.h"

#include <stdio.h>

static void report_counters_row(struct writer *w, const Ring__CounterDelta *c,
				int with_node)
{
	char where[96];

	writer_obj_start(w, NULL);
	if (with_node)
		writer_str(w, "node", c->node);
	writer_str(w, "source", c->source);
	if (*c->rdma_device)
		snprintf(where, sizeof(where), "%s/%u", c->rdma_device,
			 c->rdma_port);
	else
		snprintf(where, sizeof(where), "%s", c->interface);
	writer_str(w, "port", where);
	writer_str(w, "name", c->name);
	writer_uint(w, "delta", c->delta);
	/* Measured by the agent: seconds between its two reads. */
	writer_double(w, "span_s", c->span_s, 1);
	writer_obj_end(w);
}

static void report_counters_rows(struct writer *w, const char *key,
				 Ring__CounterDelta *const *c, size_t n,
				 int with_node)
{
	size_t shown = n;

	if (writer_get_format(w) == WRITER_PLAIN &&
	    shown > REPORT_COUNTERS_PLAIN_MAX)
		shown = REPORT_COUNTERS_PLAIN_MAX;
	writer_table_start(w, key);
	for (size_t i = 0; i < shown; i++)
		report_counters_row(w, c[i], with_node);
	writer_table_end(w);
	if (shown < n)
		writer_uint(w, "counters_not_shown", n - shown);
}

void report_counters_side(struct writer *w, const Ring__TestResult *s)
{
	if (!s)
		return;
	if (s->n_counters)
		report_counters_rows(w, "counters", s->counters, s->n_counters,
				     0);
	else if (writer_get_format(w) != WRITER_PLAIN)
		writer_uint(w, "counters_moved", 0);
	if (s->counters_error && *s->counters_error)
		writer_str(w, "counters_error", s->counters_error);
}

void report_counters_findings(struct writer *w, const Ring__TestReport *r)
{
	if (!r->n_findings)
		return;
	writer_table_start(w, "findings");
	for (size_t i = 0; i < r->n_findings; i++) {
		writer_obj_start(w, NULL);
		writer_str(w, "level", r->findings[i]->level);
		writer_str(w, "code", r->findings[i]->code);
		writer_str(w, "text", r->findings[i]->text);
		writer_obj_end(w);
	}
	writer_table_end(w);
}

void report_counters_list(struct writer *w, const char *key,
			  Ring__CounterDelta *const *c, size_t n)
{
	if (n)
		report_counters_rows(w, key, c, n, 1);
}
