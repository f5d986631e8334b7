/* ringctl's global options wherever they stand (-s, -f, -t, -h, -V),
 * apart from the words the command reads. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "error_report.h"

/* A command's own options take their value as the next word ("--sizes
 * 64"), so that word is never read as a global option; these take none. */
static int ringctl_takes_value(const char *word)
{
	static const char *const flags[] = {"--wait", "--coordinator",
					    "--verbose", "--all"};

	if (strncmp(word, "--", 2) || !word[2] || strchr(word, '='))
		return 0;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strcmp(word, flags[i]))
			return 0;
	return 1;
}

/* -s, -f, -t (value attached or next), -h/--help, -V/--version wherever
 * they stand; the other words, in order, into words. 1 done (help or
 * version printed), 0 go on, or EXIT_TROUBLE + 1 after a usage error. */
int ringctl_global(struct ringctl *rc, int argc, char **argv, char **words,
		   int *n)
{
	int skip = 0;

	*n = 0;
	for (int i = 1; i < argc; i++) {
		const char *w = argv[i], *val;
		char opt;

		if (skip || w[0] != '-' || !w[1] || !strcmp(w, "-")) {
			skip = 0;
			words[(*n)++] = argv[i];
			continue;
		}
		if (!strcmp(w, "--help") || !strcmp(w, "-h")) {
			rc->help = 1;
			continue;
		}
		if (!strcmp(w, "--version") || !strcmp(w, "-V")) {
			rc->version = 1;
			continue;
		}
		if (w[1] == '-' || !strchr("sft", w[1])) {
			/* A command's option: the command judges it. */
			if (!*n)
				return 1 + error_report_usage(
						   "unknown option '%s'", w);
			skip = ringctl_takes_value(w);
			words[(*n)++] = argv[i];
			continue;
		}
		opt = w[1];
		val = w[2] ? w + 2 : i + 1 < argc ? argv[++i] : NULL;
		if (!val && opt == 'f')
			return 1 + error_report_usage(
					   "option -f needs a format (plain, "
					   "keyvalue, json; for ranks also "
					   "hostfile, rankfile, torchrun, env; "
					   "for status also svg)");
		if (!val)
			return 1 + error_report_usage(
					   "option -%c needs %s", opt,
					   opt == 's' ? "a socket path"
						      : "a number of seconds");
		if (opt == 's') {
			rc->sock = val;
		} else if (opt == 'f') {
			rc->fmt_name = val;
			rc->fmt = WRITER_PLAIN;
			if (!ringctl_text_format(val) && strcmp(val, "svg") &&
			    writer_format_parse(val, &rc->fmt) < 0)
				return 1 +
				       error_report_usage(
					       "unknown format '%s' (plain, "
					       "keyvalue, json; for ranks "
					       "also hostfile, rankfile, "
					       "torchrun, env; for status "
					       "also svg)",
					       val);
		} else {
			char *end;
			double t = strtod(val, &end);

			if (end == val || *end || !(t > 0 && t <= 3600))
				return 1 + error_report_usage(
						   "-t: '%s' is not a number "
						   "of seconds in (0, 3600]",
						   val);
			rc->timeout_ms = (int)(t * 1000);
		}
		error_report_set_format(rc->fmt);
	}
	return 0;
}
