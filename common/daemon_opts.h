/* The daemons' command line: what ring-agent and ring-coordinator share
 * (-c, -n, -d, -V/--version, -h/--help and one-line usage errors); each
 * adds its own options through a callback. */
#ifndef RING_DAEMON_OPTS_H
#define RING_DAEMON_OPTS_H

#include <getopt.h>
#include <stdio.h>

#include "cfg.h"

struct daemon_opts {
	const char *prog;
	enum cfg_daemon daemon; /* whose -d subsystems */
	/* Prints the usage to f; subsys: the names -d accepts. */
	void (*usage)(FILE *f, const char *subsys);
	/* The daemon's own short options in getopt's form ("i:r:"), or
	 * NULL; each one found goes to more(), which returns -1 to go on or
	 * the exit status after saying what is wrong. */
	const char *more_opts;
	int (*more)(int opt, const char *arg, void *more_arg);
	void *more_arg;
	/* The daemon's own long options (getopt_long's form, ending in a
	 * zeroed entry, each with flag NULL), or NULL; found ones go to
	 * more() with their val. At most 8. */
	const struct option *more_long;
	/* In: the default configuration file; out: -c's. */
	const char *path;
	const char *debug; /* out: -d's list, NULL without -d */
	int check;	   /* out: -n given */
};

/* Parse argv into o. -1 when main goes on (to check or start), else the
 * exit status main returns: 0 after --help or --version, 2 after a usage
 * error (one line on stderr pointing at --help). */
int daemon_opts_parse(struct daemon_opts *o, int argc, char **argv);

#endif
