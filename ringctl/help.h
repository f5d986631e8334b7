/* ringctl's one description of its command line: per command its
 * synopsis, a one-line summary, its options with a line each and one
 * example. The global --help, `ringctl help [COMMAND]`, `COMMAND --help`
 * and the usage errors print from it; `ringctl -f json help` dumps it,
 * and the tests hold the man page's SYNOPSIS and the bash completion
 * against that. Limits in it come from testlimits.h and arlimits.h. */
#ifndef RING_HELP_H
#define RING_HELP_H

#include <stdio.h>

struct help_cmd;

/* The command that words name: "test bw" from {"test", "bw", ...} (*used
 * set to 2), "status" (1); a group ("test", "check", "pki") alone gives
 * its first subcommand's entry only through help_group. NULL: none. */
const struct help_cmd *help_find(int argc, char *const *argv, int *used);
/* 1 when name is a group of two-word commands (test, check, pki). */
int help_is_group(const char *name);
const char *help_cmd_name(const struct help_cmd *c);

/* The global overview: usage, global options, a synopsis and a summary
 * per command; fits 100 columns. */
void help_print_overview(FILE *f);
/* One command: synopsis, summary, options, notes and an example. */
void help_print_command(FILE *f, const struct help_cmd *c);
/* A group: each of its commands' synopsis and summary. */
void help_print_group(FILE *f, const char *group);
/* "usage: ringctl SYNOPSIS" lines of c and where to read more, for usage
 * errors; c NULL: the group's commands (group not NULL), else the
 * global usage. */
void help_print_usage(FILE *f, const struct help_cmd *c, const char *group);
/* The same usage as one string (lines joined by "\n", none at the end),
 * for the JSON error object. */
int help_usage_text(const struct help_cmd *c, const char *group, char *buf,
		    size_t len);
/* The table as one JSON document ({"globals": [...], "commands": [...]}),
 * for ringctl -f json help [COMMAND]: every command (only NULL), one, or
 * a group's (only "test"). The tests hold the man page and the bash
 * completion against it. */
void help_print_table(FILE *f, const char *only);

#endif
