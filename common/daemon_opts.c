/* The daemons' shared command line: getopt, -d checks, help and version. */
#include "daemon_opts.h"

#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

/* What both daemons take; a daemon's own letters are appended. */
#define DAEMON_OPTS_COMMON ":c:nd:Vh"

static int daemon_opts_debug(struct daemon_opts *o, const char *spec)
{
	char bad[64], subsys[256];

	if (cfg_debug_check(o->daemon, spec, bad, sizeof(bad)) < 0) {
		cfg_debug_names(o->daemon, subsys, sizeof(subsys));
		fprintf(stderr,
			"%s: -d: unknown debug subsystem '%s' (known: %s)\n",
			o->prog, bad, subsys);
		return 2;
	}
	o->debug = spec;
	return -1;
}

static int daemon_opts_one(struct daemon_opts *o, int opt, char **argv)
{
	char subsys[256], optbuf[4];

	switch (opt) {
	case 'c':
		o->path = optarg;
		return -1;
	case 'n':
		o->check = 1;
		return -1;
	case 'd':
		return daemon_opts_debug(o, optarg);
	case 'V':
		printf("%s %s\n", o->prog, RING_VERSION);
		return 0;
	case 'h':
		cfg_debug_names(o->daemon, subsys, sizeof(subsys));
		o->usage(stdout, subsys);
		return 0;
	case ':':
		return cfg_usage_error(o->prog, "missing argument to",
				       cfg_bad_option(argv, optind, optopt,
						      optbuf, sizeof(optbuf)));
	default:
		if (opt != '?' && o->more)
			return o->more(opt, optarg, o->more_arg);
		return cfg_usage_error(o->prog, "unknown option",
				       cfg_bad_option(argv, optind, optopt,
						      optbuf, sizeof(optbuf)));
	}
}

int daemon_opts_parse(struct daemon_opts *o, int argc, char **argv)
{
	struct option longopts[11] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
	};
	char optstring[64];
	int opt, rc;
	size_t n = 2;

	for (const struct option *l = o->more_long; l && l->name; l++)
		if (n + 1 < sizeof(longopts) / sizeof(longopts[0]))
			longopts[n++] = *l;

	snprintf(optstring, sizeof(optstring), "%s%s", DAEMON_OPTS_COMMON,
		 o->more_opts ? o->more_opts : "");
	o->debug = NULL;
	o->check = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, optstring, longopts, NULL)) !=
	       -1) {
		rc = daemon_opts_one(o, opt, argv);
		if (rc >= 0)
			return rc;
	}
	if (optind != argc)
		return cfg_usage_error(o->prog, "unexpected argument",
				       argv[optind]);
	return -1;
}
