/* The journald sink (sink_journal.h): log.c's choice (log_init) decides,
 * journald when systemd started us, else one log line. */
#include "sink_journal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <syslog.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "alert_text.h"
#include "log.h"

/* One "NAME=value" field for sd_journal_sendv; 0 or -1. */
static int sink_journal_field(struct iovec *iov, size_t *n, const char *fmt,
			      ...) __attribute__((format(printf, 3, 4)));
static int sink_journal_field(struct iovec *iov, size_t *n, const char *fmt,
			      ...)
{
	va_list ap;
	char *f;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&f, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -1;
	iov[*n].iov_base = f;
	iov[(*n)++].iov_len = (size_t)r;
	return 0;
}

static void sink_journal_take(struct sink *k, const struct sink_item *it)
{
	const struct alert *a = &it->a;
	enum alert_event ev = it->ev;
	char subject[LOG_ESC_LEN(ALERTS_SUBJECT_LEN)];
	char message[LOG_ESC_LEN(ALERTS_MESSAGE_LEN)];
	char node[LOG_ESC_LEN(ALERTS_NODE_LEN)];
	char edge[LOG_ESC_LEN(ALERTS_EDGE_LEN)];
	char ring[LOG_ESC_LEN(ALERTS_NODE_LEN)];
	char rule[LOG_ESC_LEN(ALERTS_RULE_LEN)];
	int prio = ev == ALERT_EV_RESOLVED	   ? LOG_NOTICE
		   : a->severity == ALERT_CRITICAL ? LOG_CRIT
		   : a->severity == ALERT_WARNING  ? LOG_WARNING
						   : LOG_INFO;
	struct iovec iov[12];
	size_t n = 0;
	int bad = 0;

	(void)k;
	if (!log_to_journal()) {
		/* log_info escapes what it prints. */
		log_info("alert %s: %s %s: %s", sink_event_name(ev), a->rule,
			 a->subject, sink_text(a, ev));
		return;
	}
	log_escape(rule, sizeof(rule), a->rule);
	log_escape(subject, sizeof(subject), a->subject);
	log_escape(message, sizeof(message), sink_text(a, ev));
	log_escape(node, sizeof(node), a->node);
	log_escape(edge, sizeof(edge), a->edge);
	log_escape(ring, sizeof(ring), a->ring);
	bad |= sink_journal_field(iov, &n, "MESSAGE=alert %s: %s %s: %s",
				  sink_event_name(ev), rule, subject, message);
	bad |= sink_journal_field(iov, &n, "PRIORITY=%d", prio);
	bad |= sink_journal_field(iov, &n,
				  "SYSLOG_IDENTIFIER=ring-coordinator");
	bad |= sink_journal_field(iov, &n, "RING_ALERT=%s", rule);
	bad |= sink_journal_field(iov, &n, "RING_SEVERITY=%s",
				  alert_text_severity(a->severity));
	bad |= sink_journal_field(iov, &n, "RING_STATE=%s",
				  ev == ALERT_EV_RESOLVED ? "resolved"
							  : "firing");
	bad |= sink_journal_field(iov, &n, "RING_SUBJECT=%s", subject);
	/* Empty ones left out: RING_NODE= would select nothing useful. */
	if (*node)
		bad |= sink_journal_field(iov, &n, "RING_NODE=%s", node);
	if (*edge)
		bad |= sink_journal_field(iov, &n, "RING_EDGE=%s", edge);
	if (*ring)
		bad |= sink_journal_field(iov, &n, "RING_RING=%s", ring);
	if (bad)
		log_warnx("alert %s %s: out of memory for journald", a->rule,
			  a->subject);
	else
		sd_journal_sendv(iov, (int)n);
	for (size_t i = 0; i < n; i++)
		free(iov[i].iov_base);
}

static size_t sink_journal_queued(const struct sink *k)
{
	(void)k;
	return 0;
}

static void sink_journal_free(struct sink *k)
{
	(void)k;
}

static const struct sink_ops sink_journal_ops = {
	.take = sink_journal_take,
	.queued = sink_journal_queued,
	.free = sink_journal_free,
};

/* Nothing to keep: one for every sinks. */
static struct sink sink_journal_one = {
	.ops = &sink_journal_ops,
	.wants = SINK_TABLE | SINK_TABLE_WATCHDOG,
};

struct sink *sink_journal(void)
{
	return &sink_journal_one;
}
