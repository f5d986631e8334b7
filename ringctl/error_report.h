/* ringctl's errors and notices as data: each is reported once, where it
 * happens, with a code a program can switch on, the value at fault, what
 * to do, the text, and the exit status it leads to; and written at once in
 * the chosen format: plain and keyvalue as today's "ringctl: TEXT" line on
 * stderr (a usage error followed by the command's synopsis), JSON as one
 * object on one line, {"error": {...}} for exit status 2 (nothing done,
 * or not all of it), else {"notice": {...}} (ringctl.8 ERRORS). So an
 * error is on stderr before ringctl goes on, and a Ctrl-C loses none. */
#ifndef RING_ERROR_REPORT_H
#define RING_ERROR_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "help.h"
#include "writer.h"

/* Where reports go (stderr as the process started) and in what format
 * (-f, once read; plain until then). */
void error_report_setup(FILE *out);
void error_report_set_format(enum writer_format fmt);
enum writer_format error_report_format(void);
/* The command being run (NULL: none known yet), or the group ("test"
 * alone): named in a JSON report, its synopsis after a usage error. */
void error_report_command(const struct help_cmd *cmd, const char *group);

/* One error or notice: code a word ("usage", "unreachable", "refused",
 * "unknown_node", "bad_input", "not_surveyed", "order_invalid", ...),
 * value the value at fault and fix what to do (each NULL when none), the
 * text printf-style, as plain prints it after "ringctl: ". Returns
 * status, the exit status it leads to. */
int error_report(int status, const char *code, const char *value,
		 const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* A usage error (exit status 2): the text, then the command's synopsis
 * (JSON: its "usage"). Returns 2. */
int error_report_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* A message that goes with the document on stdout (a survey's
 * acknowledgement before the status that --wait prints): plain at once;
 * JSON holds it for its exit status (error_report_end), or for the error
 * that follows it, whose text it then starts. */
void error_report_notice(const char *code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Reports written so far. */
size_t error_report_count(void);
/* At exit: JSON writes the notice held, and text (len bytes) that other
 * code wrote to stderr while JSON was chosen (its "ringctl: " lines),
 * as one report of status. */
void error_report_end(int status, const char *text, size_t len);

#endif
