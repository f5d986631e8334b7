/* One logging module for every ringd binary: journald (structured fields)
 * when running under systemd, stderr otherwise. */
#ifndef RING_LOG_H
#define RING_LOG_H

#include <stdarg.h>
#include <stddef.h>

/* ident: SYSLOG_IDENTIFIER and stderr prefix.
 * debug: comma-separated subsystems to print at debug level, "all", or NULL.
 * Journald is used when $JOURNAL_STREAM or $INVOCATION_ID says systemd
 * started us; force_stderr overrides that. */
void log_init(const char *ident, const char *debug, int force_stderr);
/* 1 when log_init chose journald (run by systemd, not forced to
 * stderr): structured records can go there too. */
int log_to_journal(void);
/* Peers' text as one line of valid UTF-8, as every log line escapes it:
 * control characters and bytes that are not UTF-8 become \n, \r, \t,
 * \xNN or \u0080..\u009f. dst holds LOG_ESC_LEN(strlen(src)) bytes;
 * longer input is cut. */
#define LOG_ESC_LEN(n) (4 * (n) + 8)
void log_escape(char *dst, size_t len, const char *src);
void log_fini(void);
/* Enable debug output for more subsystems (comma-separated). */
void log_set_debug(const char *debug);
int log_debug_enabled(const char *subsystem);

/* log_warn appends ": strerror(errno)". */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *subsystem, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
