/* What ringctl's commands share (cli.c, options.c, dispatch.c and the
 * cmd_*.c that run them): the command line's settings, one request and
 * its reply, the exit statuses. */
#ifndef RING_CLI_H
#define RING_CLI_H

#include "ring.pb-c.h"
#include "ring_arg.h"
#include "writer.h"

#define EXIT_DEGRADED 1
#define EXIT_TROUBLE 2

struct ringctl {
	const char *sock;
	int help; /* --help or -h given: the command's help, not the command */
	int version; /* --version or -V given: that alone */
	int timeout_ms;
	enum writer_format fmt;
	const char *fmt_name; /* as given with -f, for ranks' text formats */
	int quiet;	      /* polling: no message per failed call */
	/* --ring ID (issue 24), taken out of the command's words by
	 * dispatch: ring the one ring a command is about (NULL: the site;
	 * every request carries it, client_set_ring), rings survey's. */
	const char *ring;
	const char *rings[RING_ARG_MAX];
	size_t n_rings;
};

/* cli.c: send one request and hand back its reply of type want, or say
 * why not (unless rc->quiet: polling). The caller frees it (frame_free). */
Ring__Envelope *ringctl_call(const struct ringctl *rc, Ring__Envelope *req,
			     Ring__Envelope__BodyCase want);
/* Send a request and render its reply of type want; NULL: why not is
 * said. */
Ring__Envelope *ringctl_show(const struct ringctl *rc, Ring__Envelope *req,
			     Ring__Envelope__BodyCase want,
			     void (*show)(struct writer *,
					  const Ring__Envelope *, int),
			     int verbose);
int ringctl_verbose_flag(const char *arg);
/* The published topology (its reply held in *hold), or NULL. */
Ring__Topology *ringctl_topology(const struct ringctl *rc,
				 Ring__Envelope **hold);
/* ranks' text formats, beside the writer's. */
int ringctl_text_format(const char *name);

/* cmd_query.c: what the coordinator knows. */
int ringctl_status(const struct ringctl *rc, int verbose);
int ringctl_inventory(const struct ringctl *rc, const char *node);
int ringctl_alerts(const struct ringctl *rc, int argc, char **argv);
int ringctl_history(const struct ringctl *rc, int argc, char **argv);
int ringctl_forget(const struct ringctl *rc, const char *node);
/* cmd_checks.c: ranks and the checks of a job's inputs. */
int ringctl_ranks(const struct ringctl *rc);
int ringctl_check(const struct ringctl *rc, int argc, char **argv);
/* cmd_actions.c: what makes the ring do something. */
int ringctl_survey(const struct ringctl *rc, int argc, char **argv);
int ringctl_allreduce(const struct ringctl *rc, int argc, char **argv);
int ringctl_test(const struct ringctl *rc, int argc, char **argv);
/* cmd_pki.c */
int ringctl_pki(const struct ringctl *rc, int argc, char **argv);
/* options.c: -s, -f, -t (value attached or next), -h/--help,
 * -V/--version wherever they stand; the other words, in order, into
 * words. 1 done (help or version printed), 0 go on, or EXIT_TROUBLE + 1
 * after a usage error. */
int ringctl_global(struct ringctl *rc, int argc, char **argv, char **words,
		   int *n);
/* dispatch.c: run the command in words (help for it with -h). */
int ringctl_run(struct ringctl *rc, int argc, char **argv);

#endif
