/* Where alerts go: journald (or one log line), an alert_command run without
 * a shell, and a webhook in the JSON Alertmanager sends its receivers. Each of the last two has one
 * delivery in progress at a time and a bounded queue behind it; nothing
 * here blocks the event loop. */
#include "sinks.h"
#include "alert_text.h"
#include "json_text.h"
#include "cfg.h"
#include "log.h"
#include "text.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#define SINKS_OUT_MAX 256 /* the command's output kept for the log */
#define SINKS_BACKOFF_CAP_MS 60000ULL /* webhook retry delay, at most */
#define SINKS_POLL_MS 100	      /* child exit polled without pidfd */
#define SINKS_REPLY_MAX (64 * 1024)   /* webhook reply body, at most */
#define SINKS_HOOK_TIMEOUT_MS 5000ULL /* webhook_timeout_ms 0 */

struct sinks_item {
	TAILQ_ENTRY(sinks_item) link;
	struct alert a;
	enum alert_event ev;
	int watchdog;
	char report[16];	/* a health report: the health word; "" else */
	unsigned attempts;	/* webhook: sent this many times */
	uint64_t not_before_ms; /* webhook: its backoff ends (monotonic) */
};
TAILQ_HEAD(sinks_list, sinks_item);

/* What waits for one sink, oldest first. */
struct sinks_queue {
	const char *name;
	struct sinks_list items;
	size_t n, max;
	uint64_t burst; /* dropped since the queue was last empty */
};

struct sinks_cmd {
	struct sinks_queue q;
	struct sinks_item *cur;
	pid_t pid;
	int pidfd;	       /* -1: exit polled by exit_ev as a timer */
	struct event *exit_ev; /* pidfd readable, or the poll timer */
	struct event *kill_ev; /* command_timeout */
	int killed;
	int in_fd; /* the JSON on its way to the child's stdin */
	struct event *in_ev;
	struct evbuffer *in_buf;
	int out_fd; /* its stdout and stderr, first SINKS_OUT_MAX bytes kept */
	struct event *out_ev;
	char out[SINKS_OUT_MAX + 1];
	size_t out_len;
};

struct sinks_hook {
	struct sinks_queue q;
	struct sinks_item *cur;
	char host[256];
	char hostport[270]; /* the Host header: [v6]:port */
	char path[1024];
	uint16_t port;
	struct evdns_base *dns; /* NULL when the host is an address */
	struct evhttp_connection *conn;
	struct event *timeout_ev; /* this attempt's webhook_timeout */
	struct event *done_ev;	  /* the reply handled outside libevent's
				     callback, where conn may be freed */
	struct event *retry_ev;	  /* backoff */
	int code;		  /* HTTP status, 0: no reply, -1: timeout */
	int answered;		  /* the reply callback ran */
	char reply[SINKS_OUT_MAX + 1]; /* the reply body's start */
};

struct sinks {
	struct event_base *base;
	struct sinks_conf conf;
	char coordinator[64];
	char **argv; /* a copy of conf.command_argv, NULL: no command */
	struct sinks_cmd cmd;
	struct sinks_hook hook;
	struct event *watchdog_ev;
	uint64_t started_ms;
	uint64_t delivered, retried, dropped, failed;
};

/* ---- text ---- */

static const char *sinks_event(enum alert_event ev)
{
	return ev == ALERT_EV_FIRED	 ? "fired"
	       : ev == ALERT_EV_RESOLVED ? "resolved"
					 : "changed";
}

static const char *sinks_state(const struct sinks_item *it)
{
	if (it->report[0])
		return it->report;
	return it->ev == ALERT_EV_RESOLVED ? "resolved" : "firing";
}

static uint64_t sinks_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t sinks_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sinks_tv(struct timeval *tv, uint64_t ms)
{
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)(ms % 1000) * 1000;
}

/* ---- queues ---- */

static void sinks_queue_init(struct sinks_queue *q, const char *name,
			     size_t max)
{
	q->name = name;
	TAILQ_INIT(&q->items);
	q->n = 0;
	/* 0 would drop every alert that arrives while one is delivered. */
	q->max = max ? max : 1;
	q->burst = 0;
}

static void sinks_queue_put(struct sinks *s, struct sinks_queue *q,
			    struct sinks_item *it)
{
	if (q->n >= q->max) {
		struct sinks_item *old = TAILQ_FIRST(&q->items);

		TAILQ_REMOVE(&q->items, old, link);
		q->n--;
		free(old);
		s->dropped++;
		/* Once per burst: a stuck sink must not flood the log. */
		if (!q->burst++)
			log_warnx("%s: %zu alerts wait already: dropping the "
				  "oldest ones",
				  q->name, q->max);
	}
	TAILQ_INSERT_TAIL(&q->items, it, link);
	q->n++;
}

static struct sinks_item *sinks_queue_take(struct sinks_queue *q)
{
	struct sinks_item *it = TAILQ_FIRST(&q->items);

	if (!it)
		return NULL;
	TAILQ_REMOVE(&q->items, it, link);
	if (!--q->n && q->burst) {
		log_warnx("%s: %llu alerts were dropped while its "
			  "queue was full",
			  q->name, (unsigned long long)q->burst);
		q->burst = 0;
	}
	return it;
}

static void sinks_queue_clear(struct sinks_queue *q)
{
	struct sinks_item *it;

	while ((it = TAILQ_FIRST(&q->items))) {
		TAILQ_REMOVE(&q->items, it, link);
		free(it);
	}
	q->n = 0;
}

/* A watchdog already waiting says all the next one would. */
static int sinks_queue_has_watchdog(const struct sinks_queue *q)
{
	const struct sinks_item *it;

	TAILQ_FOREACH(it, &q->items, link)
	if (it->watchdog)
		return 1;
	return 0;
}

/* ---- journald ---- */

/* log.c's choice (log_init): journald when systemd started us. */
/* One "NAME=value" field for sd_journal_sendv; 0 or -1. */
static int sinks_field(struct iovec *iov, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int sinks_field(struct iovec *iov, size_t *n, const char *fmt, ...)
{
	va_list ap;
	char *f;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&f, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -1;
	iov[*n].iov_base = f;
	iov[(*n)++].iov_len = (size_t)r;
	return 0;
}

/* What a notification says: a resolution says what cleared and after how
 * long (resolved_message), never the firing text again. */
static const char *sinks_text(const struct alert *a, enum alert_event ev)
{
	return ev == ALERT_EV_RESOLVED && *a->resolved_message
		       ? a->resolved_message
		       : a->message;
}

static void sinks_journal(const struct alert *a, enum alert_event ev)
{
	char subject[LOG_ESC_LEN(ALERTS_SUBJECT_LEN)];
	char message[LOG_ESC_LEN(ALERTS_MESSAGE_LEN)];
	char node[LOG_ESC_LEN(ALERTS_NODE_LEN)];
	char edge[LOG_ESC_LEN(ALERTS_EDGE_LEN)];
	char rule[LOG_ESC_LEN(ALERTS_RULE_LEN)];
	int prio = ev == ALERT_EV_RESOLVED	   ? LOG_NOTICE
		   : a->severity == ALERT_CRITICAL ? LOG_CRIT
		   : a->severity == ALERT_WARNING  ? LOG_WARNING
						   : LOG_INFO;
	struct iovec iov[10];
	size_t n = 0;
	int bad = 0;

	if (!log_to_journal()) {
		/* log_info escapes what it prints. */
		log_info("alert %s: %s %s: %s", sinks_event(ev), a->rule,
			 a->subject, sinks_text(a, ev));
		return;
	}
	log_escape(rule, sizeof(rule), a->rule);
	log_escape(subject, sizeof(subject), a->subject);
	log_escape(message, sizeof(message), sinks_text(a, ev));
	log_escape(node, sizeof(node), a->node);
	log_escape(edge, sizeof(edge), a->edge);
	bad |= sinks_field(iov, &n, "MESSAGE=alert %s: %s %s: %s",
			   sinks_event(ev), rule, subject, message);
	bad |= sinks_field(iov, &n, "PRIORITY=%d", prio);
	bad |= sinks_field(iov, &n, "SYSLOG_IDENTIFIER=ring-coordinator");
	bad |= sinks_field(iov, &n, "RING_ALERT=%s", rule);
	bad |= sinks_field(iov, &n, "RING_SEVERITY=%s",
			   alert_text_severity(a->severity));
	bad |= sinks_field(iov, &n, "RING_STATE=%s",
			   ev == ALERT_EV_RESOLVED ? "resolved" : "firing");
	bad |= sinks_field(iov, &n, "RING_SUBJECT=%s", subject);
	/* Empty ones left out: RING_NODE= would select nothing useful. */
	if (*node)
		bad |= sinks_field(iov, &n, "RING_NODE=%s", node);
	if (*edge)
		bad |= sinks_field(iov, &n, "RING_EDGE=%s", edge);
	if (bad)
		log_warnx("alert %s %s: out of memory for journald", a->rule,
			  a->subject);
	else
		sd_journal_sendv(iov, (int)n);
	for (size_t i = 0; i < n; i++)
		free(iov[i].iov_base);
}

/* ---- alert_command ---- */

static void sinks_cmd_next(struct sinks *s);

static void sinks_cmd_json(const struct sinks *s, const struct sinks_item *it,
			   struct evbuffer *b)
{
	const struct alert *a = &it->a;
	char first[40], last[40], resolved[40];

	json_text_time(first, sizeof(first), a->first_seen_ms, NULL);
	json_text_time(last, sizeof(last), a->last_seen_ms, NULL);
	json_text_time(resolved, sizeof(resolved), a->resolved_ms, NULL);
	evbuffer_add(b, "{", 1);
	json_text_kv(b, 1, "rule", a->rule);
	json_text_kv(b, 0, "event",
		     it->report[0] ? "report" : sinks_event(it->ev));
	json_text_kv(b, 0, "state", sinks_state(it));
	json_text_kv(b, 0, "severity", alert_text_severity(a->severity));
	json_text_kv(b, 0, "subject", a->subject);
	json_text_kv(b, 0, "node", a->node);
	json_text_kv(b, 0, "edge", a->edge);
	json_text_kv(b, 0, "message", sinks_text(a, it->ev));
	if (it->ev == ALERT_EV_RESOLVED)
		json_text_kv(b, 0, "firing_message", a->message);
	json_text_kv(b, 0, "first_seen", first);
	json_text_kv(b, 0, "last_seen", last);
	if (a->resolved_ms)
		json_text_kv(b, 0, "resolved", resolved);
	else
		evbuffer_add_printf(b, ",\"resolved\":null");
	evbuffer_add_printf(b, ",\"flaps\":%u", (unsigned)a->flaps);
	json_text_kv(b, 0, "coordinator", s->coordinator);
	evbuffer_add(b, "}\n", 2);
}

/* KEY=value into env[*n]; values as the log prints them (one line). */
static int sinks_env_add(char **env, size_t *n, const char *key,
			 const char *val)
{
	char esc[LOG_ESC_LEN(ALERTS_MESSAGE_LEN)];

	log_escape(esc, sizeof(esc), val);
	if (asprintf(&env[*n], "%s=%s", key, esc) < 0) {
		env[*n] = NULL;
		return -1;
	}
	env[++*n] = NULL;
	return 0;
}

static void sinks_env_free(char **env)
{
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
}

/* The small, fixed environment: nothing of the daemon's own. env holds
 * 16 pointers. */
static int sinks_cmd_env(const struct sinks *s, const struct sinks_item *it,
			 char **env)
{
	const struct alert *a = &it->a;
	char first[40], resolved[40];
	const char *const vars[][2] = {
		{"PATH", "/usr/bin:/bin"},
		{"RING_ALERT", a->rule},
		{"RING_EVENT", it->report[0] ? "report" : sinks_event(it->ev)},
		{"RING_STATE", sinks_state(it)},
		{"RING_SEVERITY",
		 it->report[0] ? it->report : alert_text_severity(a->severity)},
		{"RING_SUBJECT", a->subject},
		{"RING_NODE", a->node},
		{"RING_EDGE", a->edge},
		{"RING_MESSAGE", sinks_text(a, it->ev)},
		{"RING_FIRST_SEEN", first},
		{"RING_RESOLVED", resolved},
		{"RING_COORDINATOR", s->coordinator},
	};
	size_t n = 0;

	json_text_time(first, sizeof(first), a->first_seen_ms, NULL);
	json_text_time(resolved, sizeof(resolved), a->resolved_ms, NULL);
	env[0] = NULL;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (sinks_env_add(env, &n, vars[i][0], vars[i][1]) < 0)
			return -1;
	env[n] = NULL;
	return 0;
}

static void sinks_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void sinks_event_free(struct event **ev)
{
	if (*ev)
		event_free(*ev);
	*ev = NULL;
}

/* Keep the first SINKS_OUT_MAX bytes, read and drop the rest, 64 KiB at
 * a time at most (a chatty child must not hold the loop). 1 at EOF or
 * error, 0 while more may come. */
static int sinks_cmd_read_out(struct sinks_cmd *c)
{
	char buf[4096];

	for (int i = 0; i < 16; i++) {
		ssize_t r = read(c->out_fd, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno != EAGAIN;
		if (!r)
			return 1;
		if (c->out_len < SINKS_OUT_MAX) {
			size_t k = SINKS_OUT_MAX - c->out_len;

			k = (size_t)r < k ? (size_t)r : k;
			memcpy(c->out + c->out_len, buf, k);
			c->out_len += k;
		}
	}
	return 0;
}

static void sinks_cmd_out_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sinks_cmd *c = arg;

	(void)fd;
	(void)what;
	if (sinks_cmd_read_out(c)) {
		sinks_event_free(&c->out_ev);
		sinks_close(&c->out_fd);
	}
}

/* Write the JSON as the child takes it; a child that exits or closes its
 * stdin unread is not an error (it may not want it). */
static void sinks_cmd_in_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sinks_cmd *c = arg;
	sigset_t pipe_set, old;
	const struct timespec zero = {0, 0};
	int r, err;

	(void)fd;
	(void)what;
	/* EPIPE, not SIGPIPE, whatever the process does with the signal. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &old);
	r = evbuffer_write(c->in_buf, c->in_fd);
	err = errno;
	if (r < 0 && err == EPIPE && !sigismember(&old, SIGPIPE))
		sigtimedwait(&pipe_set, NULL, &zero);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if ((r < 0 && err != EAGAIN && err != EINTR) ||
	    !evbuffer_get_length(c->in_buf)) {
		sinks_event_free(&c->in_ev);
		sinks_close(&c->in_fd);
	}
}

/* The end of one run: pipes closed, events freed, the item gone. */
static void sinks_cmd_end(struct sinks_cmd *c)
{
	sinks_event_free(&c->exit_ev);
	sinks_event_free(&c->kill_ev);
	sinks_event_free(&c->in_ev);
	sinks_event_free(&c->out_ev);
	sinks_close(&c->pidfd);
	sinks_close(&c->in_fd);
	sinks_close(&c->out_fd);
	if (c->in_buf)
		evbuffer_free(c->in_buf);
	c->in_buf = NULL;
	free(c->cur);
	c->cur = NULL;
	c->pid = 0;
	c->killed = 0;
	c->out_len = 0;
}

static void sinks_cmd_exit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sinks *s = arg;
	struct sinks_cmd *c = &s->cmd;
	char out[LOG_ESC_LEN(SINKS_OUT_MAX)];
	int status;
	pid_t r;

	(void)fd;
	(void)what;
	do
		r = waitpid(c->pid, &status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return; /* still running (poll timer, or a spurious wakeup) */
	if (c->out_fd >= 0)
		sinks_cmd_read_out(c);
	while (c->out_len && (c->out[c->out_len - 1] == '\n'))
		c->out_len--;
	c->out[c->out_len] = '\0';
	log_escape(out, sizeof(out), c->out);
	if (r < 0) {
		log_warn("alert_command %s (%s %s): waitpid", s->argv[0],
			 c->cur->a.rule, c->cur->a.subject);
		s->failed++;
	} else if (c->killed) {
		s->failed++; /* logged when killed */
	} else if (WIFEXITED(status) && !WEXITSTATUS(status)) {
		s->delivered++;
	} else {
		s->failed++;
		if (WIFEXITED(status))
			log_warnx("alert_command %s (%s %s): exit status "
				  "%d%s%s",
				  s->argv[0], c->cur->a.rule, c->cur->a.subject,
				  WEXITSTATUS(status), *out ? ": " : "", out);
		else
			log_warnx("alert_command %s (%s %s): killed by "
				  "signal %d%s%s",
				  s->argv[0], c->cur->a.rule, c->cur->a.subject,
				  WTERMSIG(status), *out ? ": " : "", out);
	}
	sinks_cmd_end(c);
	sinks_cmd_next(s);
}

static void sinks_cmd_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sinks *s = arg;
	struct sinks_cmd *c = &s->cmd;

	(void)fd;
	(void)what;
	log_warnx("alert_command %s (%s %s): still running after %llu ms: "
		  "killed",
		  s->argv[0], c->cur->a.rule, c->cur->a.subject,
		  (unsigned long long)s->conf.command_timeout_ms);
	c->killed = 1;
	/* Its own process group: what it started goes too. */
	if (kill(-c->pid, SIGKILL) < 0)
		kill(c->pid, SIGKILL);
}

static int sinks_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static int sinks_cmd_spawn(struct sinks *s, char **env, int in_fd, int out_fd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int rc;

	sigemptyset(&none);
	sigfillset(&all);
	if ((rc = posix_spawn_file_actions_init(&fa)))
		return rc;
	if ((rc = posix_spawnattr_init(&attr)))
		goto out_fa;
	rc = posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	rc = rc ? rc : posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	rc = rc ? rc : posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
	/* None of the daemon's sockets or files, CLOEXEC or not. */
	rc = rc ? rc : posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
	/* Its own process group (killed as one), default signal handling
	 * (we ignore SIGPIPE), nothing blocked. */
	rc = rc ? rc
		: posix_spawnattr_setflags(&attr,
					   POSIX_SPAWN_SETPGROUP |
						   POSIX_SPAWN_SETSIGMASK |
						   POSIX_SPAWN_SETSIGDEF);
	rc = rc ? rc : posix_spawnattr_setpgroup(&attr, 0);
	rc = rc ? rc : posix_spawnattr_setsigmask(&attr, &none);
	rc = rc ? rc : posix_spawnattr_setsigdefault(&attr, &all);
	rc = rc ? rc
		: posix_spawn(&s->cmd.pid, s->argv[0], &fa, &attr, s->argv,
			      env);
	posix_spawnattr_destroy(&attr);
out_fa:
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/* Start the command for s->cmd.cur. 0, or -1 (logged) when it could not
 * be started. */
static int sinks_cmd_start(struct sinks *s)
{
	struct sinks_cmd *c = &s->cmd;
	char *env[16];
	int in[2] = {-1, -1}, out[2] = {-1, -1};
	struct timeval tv;
	int rc;

	env[0] = NULL;
	c->in_buf = evbuffer_new();
	if (!c->in_buf || sinks_cmd_env(s, c->cur, env) < 0)
		goto fail_errno;
	sinks_cmd_json(s, c->cur, c->in_buf);
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		goto fail_errno;
	/* Ours non-blocking; the child's ends as programs expect them. */
	if (fcntl(in[1], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(out[0], F_SETFL, O_NONBLOCK) < 0)
		goto fail_errno;
	rc = sinks_cmd_spawn(s, env, in[0], out[1]);
	if (rc) {
		errno = rc;
		goto fail_errno;
	}
	sinks_close(&in[0]);
	sinks_close(&out[1]);
	c->in_fd = in[1];
	c->out_fd = out[0];
	in[1] = out[0] = -1;
	c->pidfd = sinks_pidfd_open(c->pid);
	if (c->pidfd >= 0)
		c->exit_ev = event_new(s->base, c->pidfd, EV_READ | EV_PERSIST,
				       sinks_cmd_exit_cb, s);
	else
		c->exit_ev = event_new(s->base, -1, EV_PERSIST,
				       sinks_cmd_exit_cb, s);
	c->kill_ev = evtimer_new(s->base, sinks_cmd_kill_cb, s);
	c->in_ev = event_new(s->base, c->in_fd, EV_WRITE | EV_PERSIST,
			     sinks_cmd_in_cb, c);
	c->out_ev = event_new(s->base, c->out_fd, EV_READ | EV_PERSIST,
			      sinks_cmd_out_cb, c);
	if (!c->exit_ev || !c->kill_ev || !c->in_ev || !c->out_ev)
		goto fail_kill;
	sinks_tv(&tv, c->pidfd >= 0 ? 0 : SINKS_POLL_MS);
	if (event_add(c->exit_ev, c->pidfd >= 0 ? NULL : &tv) < 0)
		goto fail_kill;
	sinks_tv(&tv, s->conf.command_timeout_ms);
	if (s->conf.command_timeout_ms && evtimer_add(c->kill_ev, &tv) < 0)
		goto fail_kill;
	if (event_add(c->in_ev, NULL) < 0 || event_add(c->out_ev, NULL) < 0)
		goto fail_kill;
	sinks_env_free(env);
	return 0;

fail_kill:
	/* Started but not watched: it must not outlive us unseen. */
	errno = ENOMEM;
	log_warn("alert_command %s: cannot watch it", s->argv[0]);
	kill(-c->pid, SIGKILL);
	while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
		;
	goto fail;
fail_errno:
	log_warn("alert_command %s (%s %s): cannot start it", s->argv[0],
		 c->cur->a.rule, c->cur->a.subject);
fail:
	sinks_close(&in[0]);
	sinks_close(&in[1]);
	sinks_close(&out[0]);
	sinks_close(&out[1]);
	sinks_env_free(env);
	sinks_cmd_end(c);
	return -1;
}

/* The next queued alert to the command, if none runs. */
static void sinks_cmd_next(struct sinks *s)
{
	struct sinks_cmd *c = &s->cmd;

	while (!c->cur && (c->cur = sinks_queue_take(&c->q)))
		if (sinks_cmd_start(s) < 0)
			s->failed++; /* sinks_cmd_start freed c->cur */
}

/* ---- webhook ---- */

static void sinks_hook_next(struct sinks *s);

/* 64-bit FNV-1a of rule and subject: the same alert, the same id. */
static void sinks_fingerprint(const struct alert *a, char *buf, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *parts[2] = {a->rule, a->subject};

	for (int p = 0; p < 2; p++)
		for (const unsigned char *c = (const unsigned char *)parts[p];;
		     c++) {
			h = (h ^ *c) * 0x100000001b3ULL;
			if (!*c)
				break;
		}
	snprintf(buf, len, "%016llx", (unsigned long long)h);
}

static void sinks_hook_labels(const struct sinks *s, const struct alert *a,
			      struct evbuffer *b)
{
	evbuffer_add(b, "{", 1);
	json_text_kv(b, 1, "alertname", a->rule);
	json_text_kv(b, 0, "severity", alert_text_severity(a->severity));
	if (*a->node)
		json_text_kv(b, 0, "node", a->node);
	if (*a->edge)
		json_text_kv(b, 0, "edge", a->edge);
	json_text_kv(b, 0, "subject", a->subject);
	json_text_kv(b, 0, "coordinator", s->coordinator);
	evbuffer_add(b, "}", 1);
}

static void sinks_hook_annotations(const struct alert *a, enum alert_event ev,
				   struct evbuffer *b)
{
	evbuffer_add(b, "{", 1);
	json_text_kv(b, 1, "summary", a->message);
	json_text_kv(b, 0, "description", sinks_text(a, ev));
	evbuffer_add(b, "}", 1);
}

/* Alertmanager's webhook payload (version 4) for one alert. */
static void sinks_hook_json(const struct sinks *s, const struct sinks_item *it,
			    struct evbuffer *b)
{
	const struct alert *a = &it->a;
	char starts[40], ends[40], fp[20];
	const char *state = sinks_state(it);

	json_text_time(starts, sizeof(starts), a->first_seen_ms,
		       "0001-01-01T00:00:00Z");
	json_text_time(ends, sizeof(ends),
		       it->ev == ALERT_EV_RESOLVED ? a->resolved_ms : 0,
		       "0001-01-01T00:00:00Z");
	sinks_fingerprint(a, fp, sizeof(fp));
	evbuffer_add_printf(b, "{\"version\":\"4\",\"groupKey\":");
	{
		char key[ALERTS_RULE_LEN + 32];

		snprintf(key, sizeof(key), "{}:{alertname=\"%s\"}", a->rule);
		json_text_str(b, key);
	}
	evbuffer_add_printf(b, ",\"truncatedAlerts\":0");
	json_text_kv(b, 0, "status", state);
	json_text_kv(b, 0, "receiver", "ringd");
	evbuffer_add_printf(b, ",\"groupLabels\":{");
	json_text_kv(b, 1, "alertname", a->rule);
	evbuffer_add_printf(b, "},\"commonLabels\":");
	sinks_hook_labels(s, a, b);
	evbuffer_add_printf(b, ",\"commonAnnotations\":");
	sinks_hook_annotations(a, it->ev, b);
	evbuffer_add_printf(b, ",\"externalURL\":\"\",\"alerts\":[");
	evbuffer_add(b, "{", 1);
	json_text_kv(b, 1, "status", state);
	evbuffer_add_printf(b, ",\"labels\":");
	sinks_hook_labels(s, a, b);
	evbuffer_add_printf(b, ",\"annotations\":");
	sinks_hook_annotations(a, it->ev, b);
	json_text_kv(b, 0, "startsAt", starts);
	json_text_kv(b, 0, "endsAt", ends);
	json_text_kv(b, 0, "generatorURL", "");
	json_text_kv(b, 0, "fingerprint", fp);
	evbuffer_add_printf(b, "}]}");
}

/* The attempt's connection (and the request it holds) gone; no callback
 * comes for it afterwards. */
static void sinks_hook_drop_conn(struct sinks_hook *h)
{
	if (h->conn)
		evhttp_connection_free(h->conn);
	h->conn = NULL;
	if (h->timeout_ev)
		evtimer_del(h->timeout_ev);
	if (h->done_ev)
		event_del(h->done_ev);
}

static void sinks_hook_reply_cb(struct evhttp_request *req, void *arg)
{
	struct sinks *s = arg;
	struct sinks_hook *h = &s->hook;

	h->code = req ? evhttp_request_get_response_code(req) : 0;
	h->reply[0] = '\0';
	if (req) {
		ev_ssize_t n =
			evbuffer_copyout(evhttp_request_get_input_buffer(req),
					 h->reply, SINKS_OUT_MAX);

		h->reply[n > 0 ? (size_t)n : 0] = '\0';
	}
	h->answered = 1;
	evtimer_del(h->timeout_ev);
	/* libevent still uses the connection after this returns. */
	event_active(h->done_ev, 0, 0);
}

/* Is an alert of it's key (rule, subject) waiting in q? */
static int sinks_queue_has_key(const struct sinks_queue *q,
			       const struct sinks_item *it)
{
	const struct sinks_item *o;

	TAILQ_FOREACH(o, &q->items, link)
	if (!strcmp(o->a.rule, it->a.rule) &&
	    !strcmp(o->a.subject, it->a.subject))
		return 1;
	return 0;
}

/* One attempt's outcome: delivered, refused for good (4xx: the same
 * alert gets the same answer), or retried after the backoff behind the
 * others (one failing alert does not hold the rest), or failed for good
 * after webhook_retries. */
static void sinks_hook_result(struct sinks *s)
{
	struct sinks_hook *h = &s->hook;
	struct sinks_item *it = h->cur;
	char why[64], body[LOG_ESC_LEN(SINKS_OUT_MAX)];
	uint64_t delay = s->conf.webhook_backoff_ms;

	sinks_hook_drop_conn(h);
	h->cur = NULL;
	if (h->code >= 200 && h->code < 300) {
		s->delivered++;
		goto next;
	}
	if (h->code >= 400 && h->code < 500 && h->code != 408 &&
	    h->code != 429) {
		log_escape(body, sizeof(body), h->reply);
		log_warnx("alert_receiver_webhook %s:%u%s (%s %s): HTTP "
			  "status %d, not retried: %s",
			  h->host, (unsigned)h->port, h->path, it->a.rule,
			  it->a.subject, h->code, body);
		s->failed++;
		goto next;
	}
	if (h->code > 0)
		snprintf(why, sizeof(why), "HTTP status %d", h->code);
	else if (h->code < 0)
		snprintf(why, sizeof(why), "no reply in time");
	else /* libevent's errno here is that of its cleanup, not why */
		snprintf(why, sizeof(why),
			 "no HTTP reply (refused, reset or closed)");
	if (it->attempts > s->conf.webhook_retries) {
		log_warnx("alert_receiver_webhook %s:%u%s (%s %s): %s; given "
			  "up after %u attempts",
			  h->host, (unsigned)h->port, h->path, it->a.rule,
			  it->a.subject, why, it->attempts);
		s->failed++;
		goto next;
	}
	/* A newer state of the same alert waits: it says more than this
	 * one would, and must not be overtaken by it. */
	if (sinks_queue_has_key(&h->q, it)) {
		log_warnx("alert_receiver_webhook %s:%u%s (%s %s): %s; a "
			  "newer state of it follows",
			  h->host, (unsigned)h->port, h->path, it->a.rule,
			  it->a.subject, why);
		s->failed++;
		goto next;
	}
	/* Once per alert, not once per attempt. */
	if (it->attempts == 1)
		log_warnx("alert_receiver_webhook %s:%u%s (%s %s): %s; "
			  "retrying up to %u times",
			  h->host, (unsigned)h->port, h->path, it->a.rule,
			  it->a.subject, why, s->conf.webhook_retries);
	for (unsigned i = 1; i < it->attempts && delay < SINKS_BACKOFF_CAP_MS;
	     i++)
		delay *= 2;
	if (delay > SINKS_BACKOFF_CAP_MS)
		delay = SINKS_BACKOFF_CAP_MS;
	s->retried++;
	it->not_before_ms = sinks_mono_ms() + delay;
	/* Behind what waits: the others go while this one backs off. */
	TAILQ_INSERT_TAIL(&h->q.items, it, link);
	h->q.n++;
	sinks_hook_next(s);
	return;
next:
	free(it);
	sinks_hook_next(s);
}

static void sinks_hook_done_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sinks_hook_result(arg);
}

static void sinks_hook_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sinks *s = arg;

	(void)fd;
	(void)what;
	s->hook.code = -1;
	sinks_hook_result(s);
}

/* Send h->cur once more. Failures to even start count as a failed
 * attempt, handled from the loop. */
static void sinks_hook_attempt(struct sinks *s)
{
	struct sinks_hook *h = &s->hook;
	struct evhttp_request *req = NULL;
	struct evkeyvalq *hdr;
	uint64_t timeout_ms = s->conf.webhook_timeout_ms;
	struct timeval tv, ev_tv;

	if (!timeout_ms)
		timeout_ms = SINKS_HOOK_TIMEOUT_MS; /* every wait has one */
	sinks_tv(&tv, timeout_ms);
	h->cur->attempts++;
	h->code = 0;
	h->conn = evhttp_connection_base_new(s->base, h->dns, h->host, h->port);
	if (!h->conn)
		goto fail;
	evhttp_connection_set_max_body_size(h->conn, SINKS_REPLY_MAX);
	evhttp_connection_set_max_headers_size(h->conn, SINKS_REPLY_MAX);
	/* Later than ours, which then says what happened. */
	ev_tv.tv_sec = tv.tv_sec + 1;
	ev_tv.tv_usec = tv.tv_usec;
	evhttp_connection_set_timeout_tv(h->conn, &ev_tv);
	req = evhttp_request_new(sinks_hook_reply_cb, s);
	if (!req)
		goto fail;
	hdr = evhttp_request_get_output_headers(req);
	if (evhttp_add_header(hdr, "Host", h->hostport) < 0 ||
	    evhttp_add_header(hdr, "Content-Type", "application/json") < 0 ||
	    evhttp_add_header(hdr, "Connection", "close") < 0)
		goto fail;
	sinks_hook_json(s, h->cur, evhttp_request_get_output_buffer(req));
	evtimer_add(h->timeout_ev, &tv);
	/* A connection refused at once has called sinks_hook_reply_cb
	 * already. On -1 libevent keeps req out of the connection's list
	 * without always freeing it; freeing it here could free it twice. */
	h->answered = 0;
	if (evhttp_make_request(h->conn, req, EVHTTP_REQ_POST, h->path) < 0 &&
	    !h->answered) {
		evtimer_del(h->timeout_ev);
		event_active(h->done_ev, 0, 0);
	}
	return;
fail:
	if (req)
		evhttp_request_free(req);
	log_warn("alert_receiver_webhook %s:%u%s: cannot send", h->host,
		 (unsigned)h->port, h->path);
	event_active(h->done_ev, 0, 0);
}

static void sinks_hook_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sinks_hook_next(arg);
}

/* The oldest alert whose backoff has ended, sent; when all wait for
 * theirs, the timer for the first to end. */
static void sinks_hook_next(struct sinks *s)
{
	struct sinks_hook *h = &s->hook;
	uint64_t now = sinks_mono_ms(), soonest = UINT64_MAX;
	struct sinks_item *it;
	struct timeval tv;

	if (h->cur)
		return;
	evtimer_del(h->retry_ev);
	TAILQ_FOREACH(it, &h->q.items, link)
	{
		if (it->not_before_ms <= now)
			break;
		if (it->not_before_ms < soonest)
			soonest = it->not_before_ms;
	}
	if (!it) {
		if (soonest != UINT64_MAX) {
			sinks_tv(&tv, soonest - now);
			evtimer_add(h->retry_ev, &tv);
		}
		return;
	}
	TAILQ_REMOVE(&h->q.items, it, link);
	if (!--h->q.n && h->q.burst) {
		log_warnx("%s: %llu alerts were dropped while its queue was "
			  "full",
			  h->q.name, (unsigned long long)h->q.burst);
		h->q.burst = 0;
	}
	h->cur = it;
	sinks_hook_attempt(s);
}

static int sinks_hook_init(struct sinks *s, const char *url)
{
	struct sinks_hook *h = &s->hook;
	char err[128];
	unsigned char addr[16];

	if (cfg_split_http_url(url, h->host, sizeof(h->host), &h->port, h->path,
			       sizeof(h->path), err, sizeof(err)) < 0) {
		log_warnx("alert_receiver_webhook %s: %s", url, err);
		errno = EINVAL;
		return -1;
	}
	if (strchr(h->host, ':'))
		snprintf(h->hostport, sizeof(h->hostport), "[%s]:%u", h->host,
			 (unsigned)h->port);
	else
		snprintf(h->hostport, sizeof(h->hostport), "%s:%u", h->host,
			 (unsigned)h->port);
	/* A name needs the asynchronous resolver: evhttp's fallback is a
	 * blocking getaddrinfo on the loop. */
	if (inet_pton(AF_INET, h->host, addr) != 1 &&
	    inet_pton(AF_INET6, h->host, addr) != 1) {
		h->dns = evdns_base_new(s->base,
					EVDNS_BASE_INITIALIZE_NAMESERVERS);
		if (!h->dns) {
			log_warnx("alert_receiver_webhook %s: no resolver",
				  url);
			errno = ENOMEM;
			return -1;
		}
	}
	h->timeout_ev = evtimer_new(s->base, sinks_hook_timeout_cb, s);
	h->done_ev = event_new(s->base, -1, 0, sinks_hook_done_cb, s);
	h->retry_ev = evtimer_new(s->base, sinks_hook_retry_cb, s);
	if (!h->timeout_ev || !h->done_ev || !h->retry_ev) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* ---- the sinks ---- */

static struct sinks_item *sinks_item_new(const struct alert *a,
					 enum alert_event ev, int watchdog)
{
	struct sinks_item *it = calloc(1, sizeof(*it));

	if (!it) {
		log_warn("alert %s %s: not sent", a->rule, a->subject);
		return NULL;
	}
	it->a = *a;
	it->ev = ev;
	it->watchdog = watchdog;
	return it;
}

/* The webhook sends an alert's latest state: one still waiting (maybe
 * backing off) is replaced by the newer one, so no state overtakes a
 * later one of the same alert. */
static void sinks_hook_supersede(struct sinks_queue *q,
				 const struct sinks_item *it)
{
	struct sinks_item *o, *tmp;

	for (o = TAILQ_FIRST(&q->items); o; o = tmp) {
		tmp = TAILQ_NEXT(o, link);
		if (strcmp(o->a.rule, it->a.rule) ||
		    strcmp(o->a.subject, it->a.subject))
			continue;
		TAILQ_REMOVE(&q->items, o, link);
		q->n--;
		free(o);
	}
}

static void sinks_enqueue(struct sinks *s, const struct alert *a,
			  enum alert_event ev, int watchdog)
{
	struct sinks_item *it;

	if (s->argv && !(watchdog && sinks_queue_has_watchdog(&s->cmd.q)) &&
	    (it = sinks_item_new(a, ev, watchdog))) {
		sinks_queue_put(s, &s->cmd.q, it);
		sinks_cmd_next(s);
	}
	if (s->hook.done_ev &&
	    !(watchdog && sinks_queue_has_watchdog(&s->hook.q)) &&
	    (it = sinks_item_new(a, ev, watchdog))) {
		sinks_hook_supersede(&s->hook.q, it);
		sinks_queue_put(s, &s->hook.q, it);
		sinks_hook_next(s);
	}
}

/* The Watchdog convention: an alert that always fires while we run, so a
 * receiver notices when it stops arriving. */
static void sinks_watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sinks *s = arg;
	struct alert a;

	(void)fd;
	(void)what;
	memset(&a, 0, sizeof(a));
	snprintf(a.rule, sizeof(a.rule), "watchdog");
	snprintf(a.subject, sizeof(a.subject), "%s", s->coordinator);
	a.severity = ALERT_INFO;
	a.firing = 1;
	snprintf(a.message, sizeof(a.message),
		 "ring-coordinator %s is running: this alert always fires, "
		 "so that its absence says the monitor is down",
		 s->coordinator);
	a.first_seen_ms = s->started_ms;
	a.last_seen_ms = sinks_now_ms();
	sinks_enqueue(s, &a, ALERT_EV_FIRED, 1);
}

void sinks_report(struct sinks *s, const char *health, const char *text)
{
	struct sinks_item *it;
	struct alert a;

	if (!s || !s->argv)
		return;
	memset(&a, 0, sizeof(a));
	snprintf(a.rule, sizeof(a.rule), "health_report");
	snprintf(a.subject, sizeof(a.subject), "%s", s->coordinator);
	snprintf(a.message, sizeof(a.message), "%s", text);
	a.severity = ALERT_INFO;
	a.firing = 1;
	a.first_seen_ms = a.last_seen_ms = sinks_now_ms();
	it = sinks_item_new(&a, ALERT_EV_FIRED, 0);
	if (!it)
		return;
	snprintf(it->report, sizeof(it->report), "%s", health);
	sinks_queue_put(s, &s->cmd.q, it);
	sinks_cmd_next(s);
}

struct sinks *sinks_new(struct event_base *base, const struct sinks_conf *conf)
{
	struct sinks *s = calloc(1, sizeof(*s));
	size_t n = 0;

	if (!s)
		return NULL;
	s->base = base;
	s->conf = *conf;
	s->started_ms = sinks_now_ms();
	snprintf(s->coordinator, sizeof(s->coordinator), "%s",
		 conf->coordinator ? conf->coordinator : "");
	s->cmd.pidfd = s->cmd.in_fd = s->cmd.out_fd = -1;
	sinks_queue_init(&s->cmd.q, "alert_command", conf->queue_max);
	sinks_queue_init(&s->hook.q, "alert_receiver_webhook", conf->queue_max);
	if (conf->command_argv && conf->command_argv[0]) {
		while (conf->command_argv[n])
			n++;
		if (conf->command_argv[0][0] != '/') {
			log_warnx("alert_command %s: not an absolute path",
				  conf->command_argv[0]);
			errno = EINVAL;
			goto fail;
		}
		s->argv = calloc(n + 1, sizeof(*s->argv));
		if (!s->argv)
			goto fail;
		for (size_t i = 0; i < n; i++)
			if (!(s->argv[i] = strdup(conf->command_argv[i])))
				goto fail;
	}
	/* Nothing kept points into the caller's memory. */
	s->conf.coordinator = NULL;
	s->conf.command_argv = NULL;
	s->conf.webhook_url = NULL;
	if (conf->webhook_url && *conf->webhook_url &&
	    sinks_hook_init(s, conf->webhook_url) < 0)
		goto fail;
	if (conf->watchdog_interval_ms && (s->argv || s->hook.done_ev)) {
		struct timeval tv;

		sinks_tv(&tv, conf->watchdog_interval_ms);
		s->watchdog_ev =
			event_new(base, -1, EV_PERSIST, sinks_watchdog_cb, s);
		if (!s->watchdog_ev || event_add(s->watchdog_ev, &tv) < 0)
			goto fail;
	}
	return s;
fail:
	sinks_free(s);
	return NULL;
}

void sinks_free(struct sinks *s)
{
	struct sinks_cmd *c;
	int saved = errno;

	if (!s)
		return;
	c = &s->cmd;
	if (c->cur && c->pid > 0) {
		/* Shutting down: the command is not waited for. */
		if (kill(-c->pid, SIGKILL) < 0)
			kill(c->pid, SIGKILL);
		while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (c->cur)
		sinks_cmd_end(c);
	sinks_queue_clear(&c->q);
	sinks_hook_drop_conn(&s->hook);
	free(s->hook.cur);
	sinks_queue_clear(&s->hook.q);
	sinks_event_free(&s->hook.timeout_ev);
	sinks_event_free(&s->hook.done_ev);
	sinks_event_free(&s->hook.retry_ev);
	if (s->hook.dns)
		evdns_base_free(s->hook.dns, 0);
	sinks_event_free(&s->watchdog_ev);
	if (s->argv)
		for (size_t i = 0; s->argv[i]; i++)
			free(s->argv[i]);
	free(s->argv);
	free(s);
	errno = saved;
}

void sinks_alert(struct sinks *s, const struct alert *a, enum alert_event ev)
{
	sinks_journal(a, ev);
	/* The watchdog alert of the table: the command and the webhook get
	 * it from sinks_watchdog_cb, on its interval. */
	if (!strcmp(a->rule, "watchdog"))
		return;
	sinks_enqueue(s, a, ev, 0);
}

void sinks_stats(const struct sinks *s, struct sinks_stats *out)
{
	out->delivered = s->delivered;
	out->retried = s->retried;
	out->dropped = s->dropped;
	out->failed = s->failed;
	out->queued = s->cmd.q.n + !!s->cmd.cur + s->hook.q.n + !!s->hook.cur;
}
