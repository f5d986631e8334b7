/* chrony-style configuration parsing: one directive per line, arguments
 * separated by blanks, '#' starts a comment. Every error is reported as
 * "file:line: message" and parsing goes on, so one run lists all mistakes. */
#ifndef RING_CFG_H
#define RING_CFG_H

#include <stddef.h>
#include <stdint.h>

struct cfg_ctx {
	const char *file;
	unsigned line;
	unsigned errors;
	unsigned warnings;
	/* Where errors go; NULL = log_warnx. Tests capture them here. */
	void (*report)(const char *msg, void *arg);
	void *report_arg;
	/* Where warnings go (what the daemon survives); NULL = log_warnx.
	 * Gets report_arg too. */
	void (*report_warning)(const char *msg, void *arg);
};

/* Handler for one directive; argv[0] is the directive name. Returns 0, or
 * -1 after reporting the problem with cfg_error(). */
typedef int (*cfg_handler)(struct cfg_ctx *ctx, int argc, char **argv,
			   void *arg);

struct cfg_directive {
	const char *name;
	int min_args; /* not counting the name */
	int max_args; /* -1 = unbounded */
	cfg_handler fn;
};

#define CFG_MAX_LINE 1024
#define CFG_MAX_ARGS 32

/* Parse a file / an in-memory buffer (name used in messages). Directives
 * are looked up in tab (terminated by a NULL name). Returns 0 when no line
 * had an error, -1 otherwise (or when the file cannot be read, errno set).
 * ctx may be NULL for the default reporter. */
int cfg_parse_file(const char *path, const struct cfg_directive *tab, void *arg,
		   struct cfg_ctx *ctx);
int cfg_parse_buffer(const char *name, const char *buf, size_t len,
		     const struct cfg_directive *tab, void *arg,
		     struct cfg_ctx *ctx);

/* A kind of configuration file (agent.conf, coordinator.conf): its
 * directives, the cross-directive check run after parsing, and the checks
 * of what the service will find at start (-n). Both checks return 0, or -1
 * (errno EINVAL) after reporting through ctx. */
typedef int (*cfg_check_fn)(void *conf, struct cfg_ctx *ctx);
struct cfg_conf_type {
	const struct cfg_directive *directives;
	cfg_check_fn check;
	cfg_check_fn verify;
};

/* Parse then run the cross-directive check (it runs even after bad lines,
 * so one pass reports everything). 0, or -1 with errno EINVAL (errors
 * reported through ctx, NULL for the default reporter) or the errno of a
 * file that could not be read. */
int cfg_load_file(const char *path, const struct cfg_conf_type *type,
		  void *conf, struct cfg_ctx *ctx);
int cfg_load_buffer(const char *name, const char *buf, size_t len,
		    const struct cfg_conf_type *type, void *conf,
		    struct cfg_ctx *ctx);
/* The daemons' -n and their start, the same so that what -n passes the
 * start accepts: load path into conf (which holds the defaults), verify
 * it unless it could not be read, errors and warnings on stderr one per
 * line, then the summary of cfg_ctx_summary(), whose result it returns. */
int cfg_load_daemon(const char *prog, const char *path,
		    const struct cfg_conf_type *type, void *conf);

/* The result of a check that began with before = ctx->errors: 0, or -1
 * with errno EINVAL when it reported errors. */
int cfg_ctx_result(const struct cfg_ctx *ctx, unsigned before);

/* Plain string settings, located in the configuration by offset so that
 * one handler serves them all. line: the offset of an unsigned that keeps
 * the line that set it (0 = not kept); path: must be absolute. */
struct cfg_string_field {
	const char *name;
	size_t off;
	size_t len;
	size_t line;
	int path;
};
/* Set the field of tab (n entries) named argv[0] to argv[1]. On error the
 * field is emptied, so that a later check does not report the default in
 * its place. 0 or -1 (reported). */
int cfg_set_string_field(struct cfg_ctx *ctx, char **argv, void *conf,
			 const struct cfg_string_field *tab, size_t n);

/* Duration settings (uint64_t milliseconds), likewise by offset. */
struct cfg_duration_field {
	const char *name;
	size_t off;
	uint64_t min_ms;
	uint64_t max_ms;
};
int cfg_set_duration_field(struct cfg_ctx *ctx, char **argv, void *conf,
			   const struct cfg_duration_field *tab, size_t n);

/* Open the CA, certificate and key as the daemon would (tls_check_files;
 * server: the coordinator's role) and report each problem at the line that
 * named the file (0: none). Nothing is checked while a path is empty (its
 * line had the error). */
void cfg_check_tls_files(struct cfg_ctx *ctx, int server, const char *ca,
			 unsigned line_ca, const char *cert, unsigned line_cert,
			 const char *key, unsigned line_key);

/* Report "file:line: message" and count the error. Always returns -1. */
int cfg_error(struct cfg_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The same for what the daemon survives: counted in warnings, not errors,
 * so it does not fail a parse. Always returns 0. */
int cfg_warning(struct cfg_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The daemons' command lines: a usage error is one line pointing at
 * --help (returns the exit status 2); the option getopt_long() stopped at,
 * as the user typed it (buf holds "-x" for a short one). */
int cfg_usage_error(const char *prog, const char *what, const char *arg);
const char *cfg_bad_option(char **argv, int optind_now, int optopt_now,
			   char *buf, size_t len);
/* After loading and verifying: "PROG: FILE: N errors, M warnings" on
 * stderr when there were errors (-1), else the number of warnings. */
int cfg_ctx_summary(const struct cfg_ctx *ctx, const char *prog,
		    const char *path);

/* Send ctx's errors and warnings to stderr as "PROG: error: MSG" and
 * "PROG: warning: MSG" (the daemons' -n and their start). prog must
 * outlive ctx. */
void cfg_ctx_to_stderr(struct cfg_ctx *ctx, const char *prog);

/* Value parsers: on error they report (naming the directive `what`) and
 * return -1. */
int cfg_parse_uint(struct cfg_ctx *ctx, const char *what, const char *s,
		   uint64_t min, uint64_t max, uint64_t *out);
/* "250ms", "2s", "5m", "1h" or a bare number of seconds; result in ms. */
int cfg_parse_duration_ms(struct cfg_ctx *ctx, const char *what, const char *s,
			  uint64_t min_ms, uint64_t max_ms, uint64_t *out);
/* "yes/no/on/off/true/false/1/0". */
int cfg_parse_bool(struct cfg_ctx *ctx, const char *what, const char *s,
		   int *out);
/* "100G", "200g", "25000M", "10000m" (bits per second, nominal link rate);
 * result in Mbit/s. */
int cfg_parse_speed_mbps(struct cfg_ctx *ctx, const char *what, const char *s,
			 uint64_t *out);
/* A size in the one grammar (size.h): "4096", "64K", "1MiB", "2GB". */
int cfg_parse_size(struct cfg_ctx *ctx, const char *what, const char *s,
		   uint64_t min, uint64_t max, uint64_t *out);
/* host:port, [v6]:port, or host alone (default_port used). Validates the
 * port range and that host is non-empty. */
int cfg_parse_hostport(struct cfg_ctx *ctx, const char *what, const char *s,
		       uint16_t default_port, char *host, size_t hostlen,
		       uint16_t *port);
/* http://HOST[:PORT][/PATH] into its parts (port 80 by default, path "/"
 * when none; [v6] hosts without brackets). 0, or -1 with errno EINVAL and
 * the reason in err ("not http://HOST[:PORT]/PATH", "https is not
 * supported: use a local relay"), or ENAMETOOLONG when a part does not fit
 * its buffer. */
int cfg_split_http_url(const char *url, char *host, size_t hostlen,
		       uint16_t *port, char *path, size_t pathlen, char *err,
		       size_t errlen);
/* Node names: 1-63 chars of [A-Za-z0-9._-], not starting with '-' or '.'. */
int cfg_valid_node_name(const char *s);
/* Copy a string argument into a fixed buffer, reporting if it is too long. */
int cfg_copy_string(struct cfg_ctx *ctx, const char *what, const char *s,
		    char *dst, size_t dstlen);
/* The same for a path, which must be absolute: a relative one would depend
 * on the directory the daemon happens to start in ("/" under systemd). */
int cfg_copy_path(struct cfg_ctx *ctx, const char *what, const char *s,
		  char *dst, size_t dstlen);

/* The debug subsystems (-d) of each daemon: every name log_debug() is
 * called with in its sources, and "all". */
enum cfg_daemon {
	CFG_DAEMON_AGENT = 1,
	CFG_DAEMON_COORDINATOR = 2,
};
/* Check a comma-separated -d list for daemon. 0, or -1 with errno EINVAL
 * and the first unknown (or empty) name copied into bad. */
int cfg_debug_check(enum cfg_daemon daemon, const char *spec, char *bad,
		    size_t badlen);
/* The names -d accepts for daemon, comma-separated, "all" last. */
void cfg_debug_names(enum cfg_daemon daemon, char *buf, size_t len);

#endif
