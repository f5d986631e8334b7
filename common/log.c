/* One logging module: journald under systemd, stderr otherwise; peers' text
 * escaped. */
#include "log.h"
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

static char log_ident[32] = "ringd";
static char log_debug_list[256];
static int log_use_journal;

int log_to_journal(void)
{
	return log_use_journal;
}

void log_init(const char *ident, const char *debug, int force_stderr)
{
	snprintf(log_ident, sizeof(log_ident), "%s", ident ? ident : "ringd");
	log_debug_list[0] = '\0';
	log_set_debug(debug);
	log_use_journal = !force_stderr &&
			  (getenv("JOURNAL_STREAM") || getenv("INVOCATION_ID"));
}

void log_fini(void)
{
	fflush(stderr);
}

void log_set_debug(const char *debug)
{
	size_t used = strlen(log_debug_list);

	if (!debug || !*debug)
		return;
	snprintf(log_debug_list + used, sizeof(log_debug_list) - used, "%s%s",
		 used ? "," : "", debug);
}

int log_debug_enabled(const char *subsystem)
{
	const char *p = log_debug_list;
	size_t n = strlen(subsystem);

	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if ((len == 3 && !strncmp(p, "all", 3)) ||
		    (len == n && !strncmp(p, subsystem, n)))
			return 1;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

static void log_emit(int prio, const char *subsystem, const char *msg)
{
	static const char *const names[] = {
		[LOG_ERR] = "error",
		[LOG_WARNING] = "warning",
		[LOG_INFO] = "info",
		[LOG_DEBUG] = "debug",
	};
	struct timespec ts;
	struct tm tm;

	if (log_use_journal) {
		/* Structured fields let `journalctl RING_SUBSYSTEM=tls` filter. */
		sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio,
				"SYSLOG_IDENTIFIER=%s", log_ident,
				"RING_SUBSYSTEM=%s",
				subsystem ? subsystem : "main", NULL);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	fprintf(stderr, "%02d:%02d:%02d.%03ld %s[%d] %s: %s%s%s\n", tm.tm_hour,
		tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, log_ident,
		(int)getpid(), names[prio] ? names[prio] : "log",
		subsystem ? subsystem : "", subsystem ? ": " : "", msg);
}

/* Messages carry peers' text (agents' error texts, versions, names): one
 * message is one line, whatever they send. Control characters (C0, DEL,
 * C1) and bytes that are not UTF-8 become \n, \r, \t or \xNN (C1 as
 * \u0080..\u009f); the rest is copied. dst holds LOG_ESC_LEN(strlen(src)). */
void log_escape(char *dst, size_t len, const char *src)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t n = strlen(src), o = 0;

	while (n && o + 7 < len) {
		size_t k = text_utf8_len(s, n);

		if (k == 1 && *s >= 0x20 && *s != 0x7f) {
			dst[o++] = (char)*s;
		} else if (k == 1 && (*s == '\n' || *s == '\r' || *s == '\t')) {
			dst[o++] = '\\';
			dst[o++] = *s == '\n' ? 'n' : *s == '\r' ? 'r' : 't';
		} else if (k == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
			o += (size_t)snprintf(dst + o, len - o, "\\u%04x",
					      s[1]);
		} else if (k > 1) {
			memcpy(dst + o, s, k);
			o += k;
		} else {
			o += (size_t)snprintf(dst + o, len - o, "\\x%02x", *s);
			k = 1;
		}
		s += k;
		n -= k;
	}
	dst[o] = '\0';
}

static void log_vlog(int prio, const char *subsystem, int with_errno,
		     const char *fmt, va_list ap)
{
	char msg[1024], safe[4 * sizeof(msg)];
	int saved = errno;
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);

	if (with_errno && n >= 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - n, ": %s", strerror(saved));
	log_escape(safe, sizeof(safe), msg);
	log_emit(prio, subsystem, safe);
	errno = saved;
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vlog(LOG_WARNING, NULL, 1, fmt, ap);
	va_end(ap);
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vlog(LOG_WARNING, NULL, 0, fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vlog(LOG_INFO, NULL, 0, fmt, ap);
	va_end(ap);
}

void log_debug(const char *subsystem, const char *fmt, ...)
{
	va_list ap;

	if (!log_debug_enabled(subsystem))
		return;
	va_start(ap, fmt);
	log_vlog(LOG_DEBUG, subsystem, 0, fmt, ap);
	va_end(ap);
}
