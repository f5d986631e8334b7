/* The rules' words for a resolution. A rule missing from the table gets a
 * neutral sentence: a new rule never resolves without a text. */
#include "alert_text.h"

#include <stdio.h>
#include <string.h>

struct alert_text_rule {
	const char *rule;
	const char *fmt; /* %s subject, %s duration */
};

static const struct alert_text_rule alert_text_rules[] = {
	{"node_down", "%s is up again after %s"},
	{"cable_down", "cable %s is up again after %s"},
	{"ring_broken", "the rank order holds again (%s) after %s"},
	{"mtu_mismatch", "the MTU agrees across cable %s again after %s"},
	{"speed_downshift", "%s links at its full speed again after %s"},
	{"pcie_downshift", "%s has its full PCIe link again after %s"},
	{"version_skew", "%s runs the coordinator's version again after %s"},
	{"unexpected_path", "%s no longer reach each other off the ring, "
			    "after %s"},
	{"port_errors", "%s: error and drop counters quiet again after %s"},
	{"cert_expiring", "the certificate of %s was renewed after %s"},
	{"edge_degraded", "edge %s carries its baseline rate again after %s"},
	{"survey_failed", "a %s succeeded again after %s"},
	{"light_check_failed", "edge %s passes its light check again after %s"},
	{"gid_change", "the GIDs of edge %s agree with the survey again after "
		       "%s"},
	{"coordinator_restarted", "%s re-learned the cluster after %s"},
	{"watchdog", "%s's watchdog stopped after %s"},
	{"store_failing", "the state %s saves again after %s"},
	{"state_lost", "what the %s lost was re-surveyed after %s"},
};

const char *alert_text_severity(enum alert_severity s)
{
	return s == ALERT_CRITICAL  ? "critical"
	       : s == ALERT_WARNING ? "warning"
				    : "info";
}

void alert_text_duration(uint64_t ms, char *buf, size_t len)
{
	uint64_t s = ms / 1000;

	if (ms < 1000)
		snprintf(buf, len, "%llu ms", (unsigned long long)ms);
	else if (s < 60)
		snprintf(buf, len, "%llu s", (unsigned long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%llu min %llu s",
			 (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, len, "%llu h %llu min",
			 (unsigned long long)(s / 3600),
			 (unsigned long long)(s % 3600 / 60));
	else
		snprintf(buf, len, "%llu d %llu h",
			 (unsigned long long)(s / 86400),
			 (unsigned long long)(s % 86400 / 3600));
}

void alert_text_resolved(const struct alert *a, char *buf, size_t len)
{
	uint64_t end = a->cleared_ms ? a->cleared_ms : a->resolved_ms;
	char dur[48];
	const char *fmt = NULL;

	if (!len)
		return;
	alert_text_duration(end > a->first_seen_ms ? end - a->first_seen_ms : 0,
			    dur, sizeof(dur));
	for (size_t i = 0;
	     i < sizeof(alert_text_rules) / sizeof(alert_text_rules[0]); i++)
		if (!strcmp(alert_text_rules[i].rule, a->rule))
			fmt = alert_text_rules[i].fmt;
	if (fmt)
		snprintf(buf, len, fmt, a->subject, dur);
	else
		snprintf(buf, len, "%s %s cleared after %s", a->rule,
			 a->subject, dur);
}
