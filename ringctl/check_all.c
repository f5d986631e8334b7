/* ringctl check all: the pre-flight as one command. Every check that
 * applies runs against one status reply and gets one row: its verdict and
 * the one-line summary its own command would print, so the verdict fits a
 * screen and each row names the command with the whole story. */
#include "check_all.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_env.h"
#include "check_hosts.h"
#include "render.h"
#include "writer.h"

extern char **environ;

#define CHECK_ALL_SUMMARY_MAX 1024

struct check_all_row {
	const char *name;
	int status; /* CHECK_OK, CHECK_PROBLEMS, CHECK_CANNOT; -1 skipped */
	char summary[CHECK_ALL_SUMMARY_MAX];
	char detail[4200]; /* the command that tells the whole story */
};

int check_all_parse(int argc, char **argv, struct check_all_opts *o, char *err,
		    size_t len)
{
	memset(o, 0, sizeof(*o));
	for (int i = 0; i < argc; i++) {
		const char **slot =
			!strcmp(argv[i], "--hostfile")	     ? &o->hostfile
			: !strcmp(argv[i], "--env")	     ? &o->env
			: !strcmp(argv[i], "--rendezvous")   ? &o->rendezvous
			: !strcmp(argv[i], "--nccl-version") ? &o->nccl_version
							     : NULL;

		if (!slot) {
			snprintf(err, len,
				 "check all: unknown option '%s' (--hostfile "
				 "F, --env F, --rendezvous HOST[:PORT], "
				 "--nccl-version V)",
				 argv[i]);
			return -1;
		}
		if (i + 1 >= argc || !*argv[i + 1]) {
			snprintf(err, len, "check all: %s needs a value",
				 argv[i]);
			return -1;
		}
		if (*slot) {
			snprintf(err, len, "check all: %s given twice",
				 argv[i]);
			return -1;
		}
		*slot = argv[++i];
	}
	if (o->nccl_version && check_env_version(o->nccl_version) < 0) {
		snprintf(err, len,
			 "check all: --nccl-version '%s' is not a version "
			 "(like 2.30.7)",
			 o->nccl_version);
		return -1;
	}
	return 0;
}

/* A keyvalue document's top-level value of key (its first line). */
static void check_all_kv(const char *doc, const char *key, char *out,
			 size_t len)
{
	size_t klen = strlen(key);

	*out = '\0';
	for (const char *p = doc; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n > klen && !strncmp(p, key, klen) && p[klen] == '=') {
			n -= klen + 1;
			snprintf(out, len, "%.*s", (int)n, p + klen + 1);
			return;
		}
		p = nl ? nl + 1 : NULL;
	}
}

/* The ring itself: the last survey's kind, and whether its order holds. */
static void check_all_ring(const Ring__StatusReply *st, struct check_all_row *r)
{
	const Ring__Topology *t = st->topology;

	r->name = "ring";
	snprintf(r->detail, sizeof(r->detail), "ringctl status");
	if (strcmp(t->kind, "ring") && strcmp(t->kind, "pair")) {
		r->status = CHECK_PROBLEMS;
		snprintf(r->summary, sizeof(r->summary),
			 "the last survey found a %s, not a ring: a ring "
			 "all-reduce has no closed path",
			 t->kind);
	} else if (!t->order_valid) {
		r->status = CHECK_PROBLEMS;
		snprintf(r->summary, sizeof(r->summary),
			 "the published rank order no longer holds (now: "
			 "%s): a node or a cable is down",
			 *t->live_kind ? t->live_kind : "unknown");
	} else {
		r->status = CHECK_OK;
		snprintf(r->summary, sizeof(r->summary),
			 "a %s of %zu nodes, its rank order holds", t->kind,
			 t->n_order);
	}
}

/* Run a report into memory as keyvalue and keep its verdict line. */
static void check_all_capture(struct check_all_row *r, int status,
			      const char *doc)
{
	r->status = status;
	check_all_kv(doc, "summary", r->summary, sizeof(r->summary));
	if (!*r->summary)
		snprintf(r->summary, sizeof(r->summary), "%s",
			 status == CHECK_OK ? "ok" : "see the command");
}

/* Read the launcher's file; 0, or -1 with the row saying why. */
static int check_all_hosts(const char *path, struct check_hosts *h,
			   struct check_all_row *r)
{
	char err[600];
	FILE *f;
	int rc;

	r->name = "ranks";
	snprintf(r->detail, sizeof(r->detail), "ringctl check ranks %s", path);
	f = fopen(path, "r");
	if (!f) {
		r->status = CHECK_CANNOT;
		snprintf(r->summary, sizeof(r->summary), "%s: cannot read it",
			 path);
		return -1;
	}
	rc = check_hosts_read(f, path, h, err, sizeof(err));
	fclose(f);
	if (rc < 0) {
		r->status = CHECK_CANNOT;
		snprintf(r->summary, sizeof(r->summary), "%s", err);
	}
	return rc;
}

static void check_all_ranks(const Ring__StatusReply *st, const char *path,
			    const struct check_hosts *h,
			    struct check_all_row *r)
{
	char *doc = NULL;
	size_t doc_len = 0;
	FILE *mem;
	int status;

	mem = open_memstream(&doc, &doc_len);
	if (!mem) {
		r->status = CHECK_CANNOT;
		snprintf(r->summary, sizeof(r->summary), "out of memory");
		return;
	}
	status = check_ranks_report(mem, WRITER_KEYVALUE, h, path, st);
	fclose(mem);
	check_all_capture(r, status, doc);
	free(doc);
}

/* The value of option name (spelled with '-' or '_') in line, given as
 * "NAME=V" or "NAME V"; "" when absent. */
static void check_all_option(const char *line, const char *name, char *out,
			     size_t len)
{
	char alt[32];
	size_t nlen = strlen(name);

	*out = '\0';
	snprintf(alt, sizeof(alt), "%s", name);
	for (char *c = alt + 2; *c; c++)
		if (*c == '-')
			*c = '_';
	for (const char *p = line; *p; p++) {
		const char *v = p + nlen;
		size_t n;

		if (strncmp(p, name, nlen) && strncmp(p, alt, nlen))
			continue;
		if (*v != '=' && *v != ' ')
			continue;
		v += 1 + strspn(v + 1, " ");
		n = strcspn(v, " \t#");
		if (n && n < len)
			snprintf(out, len, "%.*s", (int)n, v);
		return;
	}
}

/* torchrun's --master-addr (and --master-port) on rank 0's line: where
 * that launch will rendezvous. 0 and HOST[:PORT] in out, or -1. */
static int check_all_torchrun_master(const struct check_hosts *h, char *out,
				     size_t len)
{
	char addr[CHECK_HOSTS_NAME_MAX + 1], port[16];

	if (h->format != CHECK_HOSTS_TORCHRUN || !h->n)
		return -1;
	check_all_option(h->v[0].line, "--master-addr", addr, sizeof(addr));
	check_all_option(h->v[0].line, "--master-port", port, sizeof(port));
	if (!*addr)
		return -1;
	snprintf(out, len, "%s%s%s", addr, *port ? ":" : "", port);
	return 0;
}

static void check_all_rendezvous(const Ring__StatusReply *st,
				 const Ring__ResolveReply *rr, const char *arg,
				 struct check_all_row *r)
{
	char *doc = NULL;
	size_t doc_len = 0;
	FILE *mem;
	int status;

	r->name = "rendezvous";
	snprintf(r->detail, sizeof(r->detail), "ringctl check rendezvous %s",
		 arg);
	mem = open_memstream(&doc, &doc_len);
	if (!mem) {
		r->status = CHECK_CANNOT;
		snprintf(r->summary, sizeof(r->summary), "out of memory");
		return;
	}
	status = check_rendezvous_report(mem, WRITER_KEYVALUE, arg, st, rr);
	fclose(mem);
	check_all_capture(r, status, doc);
	free(doc);
}

/* The file's bytes, bounded as check nccl-env bounds them. */
static char *check_all_slurp(const char *path, size_t *len, char *err,
			     size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf;

	if (!f) {
		snprintf(err, errlen, "%s: cannot read it", path);
		return NULL;
	}
	buf = malloc(CHECK_ENV_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	*len = fread(buf, 1, CHECK_ENV_MAX_BYTES + 1, f);
	fclose(f);
	if (*len > CHECK_ENV_MAX_BYTES) {
		free(buf);
		snprintf(err, errlen, "%s: larger than %d bytes", path,
			 CHECK_ENV_MAX_BYTES);
		return NULL;
	}
	return buf;
}

static void check_all_env(const Ring__StatusReply *st,
			  const Ring__Inventory *const *inv, const char *path,
			  const char *nccl_version, struct check_all_row *r)
{
	struct check_env_set set = {0};
	struct check_env_result *res;
	char err[600];
	size_t len = 0;
	char *text;
	int rc;

	r->name = "nccl-env";
	snprintf(r->detail, sizeof(r->detail), "ringctl check nccl-env%s%s",
		 path ? " " : "", path ? path : "");
	if (path) {
		text = check_all_slurp(path, &len, err, sizeof(err));
		rc = text ? check_env_parse(text, len, path, &set, err,
					    sizeof(err))
			  : -1;
		free(text);
	} else {
		rc = check_env_from_environ(environ, &set);
		if (rc < 0)
			snprintf(err, sizeof(err),
				 "this process's environment is too large");
	}
	if (rc == 0 && !path && !set.n) {
		r->status = -1;
		snprintf(r->summary, sizeof(r->summary), "%s",
			 CHECK_ENV_NOT_GIVEN);
		check_env_set_free(&set);
		return;
	}
	res = rc < 0 ? NULL : calloc(1, sizeof(*res));
	if (!res) {
		r->status = CHECK_CANNOT;
		snprintf(r->summary, sizeof(r->summary), "%s",
			 rc < 0 ? err : "out of memory");
		check_env_set_free(&set);
		return;
	}
	snprintf(res->nccl_version, sizeof(res->nccl_version), "%s",
		 nccl_version ? nccl_version : "");
	check_env_lint(&set, st->topology, st, inv, res);
	r->status = res->counted ? CHECK_PROBLEMS : CHECK_OK;
	if (!res->counted)
		snprintf(r->summary, sizeof(r->summary),
			 "%zu NCCL variables%s, nothing to fix", set.n,
			 path ? "" : " in this environment");
	for (size_t i = 0; res->counted && i < res->n; i++) {
		const struct check_env_issue *is = &res->issues[i];

		if (!strcmp(is->level, "note"))
			continue;
		snprintf(r->summary, sizeof(r->summary),
			 "%zu problems, %zu warnings; first: %s: %s",
			 res->problems, res->counted - res->problems,
			 is->variable, is->why);
		break;
	}
	free(res);
	check_env_set_free(&set);
}

static const char *check_all_word(int status)
{
	return status == CHECK_OK	  ? "ok"
	       : status == CHECK_PROBLEMS ? "problems"
	       : status == CHECK_CANNOT	  ? "could not check"
					  : "skipped";
}

int check_all_report(FILE *out, enum writer_format fmt,
		     const struct check_all_opts *o,
		     const Ring__StatusReply *st, const Ring__ResolveReply *rr,
		     const Ring__Inventory *const *inv)
{
	struct check_all_row rows[4];
	const char *rdzv = o->rendezvous;
	char rdzv_env[2 * CHECK_HOSTS_NAME_MAX + 2], ts[64];
	struct check_all_row ranks;
	struct check_hosts hosts;
	int have_hosts = 0;
	int n = 0, problems = 0, cannot = 0, status;
	struct writer *w;

	memset(rows, 0, sizeof(rows));
	memset(&hosts, 0, sizeof(hosts));
	memset(&ranks, 0, sizeof(ranks));
	if (o->hostfile)
		have_hosts = check_all_hosts(o->hostfile, &hosts, &ranks) == 0;
	/* Without --rendezvous: the torchrun lines' own --master-addr, else
	 * MASTER_ADDR/MASTER_PORT, which launchers read. */
	if (!rdzv && have_hosts &&
	    check_all_torchrun_master(&hosts, rdzv_env, sizeof(rdzv_env)) == 0)
		rdzv = rdzv_env;
	if (!rdzv && getenv("MASTER_ADDR") && *getenv("MASTER_ADDR")) {
		const char *port = getenv("MASTER_PORT");

		snprintf(rdzv_env, sizeof(rdzv_env), "%s%s%s",
			 getenv("MASTER_ADDR"), port && *port ? ":" : "",
			 port && *port ? port : "");
		rdzv = rdzv_env;
	}
	check_all_ring(st, &rows[n++]);
	if (o->hostfile) {
		if (have_hosts)
			check_all_ranks(st, o->hostfile, &hosts, &ranks);
		rows[n++] = ranks;
	} else {
		rows[n].name = "ranks";
		rows[n].status = -1;
		snprintf(rows[n].summary, sizeof(rows[n].summary),
			 "no --hostfile: the launcher's order was not "
			 "checked (ringctl ranks -f hostfile prints one)");
		n++;
	}
	if (rdzv) {
		check_all_rendezvous(st, rr, rdzv, &rows[n++]);
	} else {
		rows[n].name = "rendezvous";
		rows[n].status = -1;
		snprintf(rows[n].summary, sizeof(rows[n].summary),
			 "no --rendezvous and no MASTER_ADDR: not checked");
		n++;
	}
	check_all_env(st, inv, o->env, o->nccl_version, &rows[n++]);
	if (have_hosts)
		check_hosts_free(&hosts);
	for (int i = 0; i < n; i++) {
		problems += rows[i].status == CHECK_PROBLEMS;
		cannot += rows[i].status == CHECK_CANNOT;
	}
	/* A problem found outranks a check that could not run. */
	status = problems ? CHECK_PROBLEMS : cannot ? CHECK_CANNOT : CHECK_OK;
	w = writer_new(out, fmt);
	if (!w)
		return CHECK_CANNOT; /* nothing written: writer_new failed */
	writer_str(w, "verdict",
		   status == CHECK_OK	      ? "ok: nothing found to fix"
		   : status == CHECK_PROBLEMS ? "problems: fix before launch"
					      : "could not check everything");
	writer_uint(w, "problems", (uint64_t)problems);
	writer_uint(w, "could_not_check", (uint64_t)cannot);
	/* Every row judges the same survey's figures. */
	render_format_time(st->topology->surveyed_ms, ts, sizeof(ts));
	writer_str(w, "survey_measured", ts);
	writer_str(w, "computed",
		   "each row's verdict, from the survey's cables and ranks "
		   "and from the files and environment given");
	/* A list, not a table: summaries are sentences, which plain wraps
	 * at 100 columns; JSON and keyvalue are the same either way. */
	writer_list_start(w, "checks");
	for (int i = 0; i < n; i++) {
		writer_obj_start_named(w, rows[i].name);
		writer_str(w, "check", rows[i].name);
		writer_str(w, "verdict", check_all_word(rows[i].status));
		writer_str(w, "summary", rows[i].summary);
		writer_str(w, "details", rows[i].detail);
		writer_obj_end(w);
	}
	writer_list_end(w);
	writer_finish(w);
	return status;
}
