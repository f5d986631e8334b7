/* ringctl check all: every pre-flight check that applies (the ring, the
 * launcher's rank order, the rendezvous address, the NCCL environment)
 * against one status reply, one row each. */
#ifndef RING_CHECK_ALL_H
#define RING_CHECK_ALL_H

#include <stddef.h>
#include <stdio.h>

#include "ring.pb-c.h"
#include "writer.h"

struct check_all_opts {
	const char *hostfile;	  /* --hostfile: checked by check ranks */
	const char *env;	  /* --env: else this process's NCCL_* */
	const char *rendezvous;	  /* --rendezvous: else $MASTER_ADDR[:PORT] */
	const char *nccl_version; /* --nccl-version: the job's NCCL */
};

/* 0, or -1 with a one-line reason. */
int check_all_parse(int argc, char **argv, struct check_all_opts *o, char *err,
		    size_t len);
/* st has a topology. CHECK_OK, CHECK_PROBLEMS (any check found one), or
 * CHECK_CANNOT (none found one, and one could not check). */
/* rr: rank 0's host name on every node (see check_rendezvous_report);
 * inv: the ranks' inventories for the GID rule (see check_env_lint). */
int check_all_report(FILE *out, enum writer_format fmt,
		     const struct check_all_opts *o,
		     const Ring__StatusReply *st, const Ring__ResolveReply *rr,
		     const Ring__Inventory *const *inv);

#endif
