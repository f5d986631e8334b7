/* The alert_command sink (sink_command.h): one run at a time, a bounded
 * queue behind it, the child watched from the loop (pidfd, else a poll),
 * its stdin fed and its output read without blocking. */
#include "sink_command.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "alert_text.h"
#include "json_text.h"
#include "log.h"

#define SINK_COMMAND_OUT_MAX 256 /* the command's output kept for the log */
#define SINK_COMMAND_POLL_MS 100 /* child exit polled without pidfd */

struct sink_command {
	struct sink sink; /* first: the interface */
	struct event_base *base;
	char coordinator[64];
	char **argv; /* a copy of the configured one */
	uint64_t timeout_ms;
	struct sink_counts *counts;
	struct sink_queue q;
	struct sink_item *cur;
	pid_t pid;
	int pidfd;	       /* -1: exit polled by exit_ev as a timer */
	struct event *exit_ev; /* pidfd readable, or the poll timer */
	struct event *kill_ev; /* command_timeout */
	int killed;
	int in_fd; /* the JSON on its way to the child's stdin */
	struct event *in_ev;
	struct evbuffer *in_buf;
	int out_fd; /* its stdout and stderr, the first bytes kept */
	struct event *out_ev;
	char out[SINK_COMMAND_OUT_MAX + 1];
	size_t out_len;
};

static void sink_command_next(struct sink_command *s);

static void sink_command_json(const struct sink_command *s,
			      const struct sink_item *it, struct evbuffer *b)
{
	const struct alert *a = &it->a;
	char first[40], last[40], resolved[40];

	json_text_time(first, sizeof(first), a->first_seen_ms, NULL);
	json_text_time(last, sizeof(last), a->last_seen_ms, NULL);
	json_text_time(resolved, sizeof(resolved), a->resolved_ms, NULL);
	evbuffer_add(b, "{", 1);
	json_text_kv(b, 1, "rule", a->rule);
	json_text_kv(b, 0, "event",
		     it->report[0] ? "report" : sink_event_name(it->ev));
	json_text_kv(b, 0, "state", sink_state(it));
	json_text_kv(b, 0, "severity", alert_text_severity(a->severity));
	json_text_kv(b, 0, "subject", a->subject);
	json_text_kv(b, 0, "node", a->node);
	json_text_kv(b, 0, "edge", a->edge);
	json_text_kv(b, 0, "ring", a->ring);
	json_text_kv(b, 0, "message", sink_text(a, it->ev));
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
static int sink_command_env_add(char **env, size_t *n, const char *key,
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

static void sink_command_env_free(char **env)
{
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
}

/* The small, fixed environment: nothing of the daemon's own. env holds
 * 16 pointers. */
static int sink_command_env(const struct sink_command *s,
			    const struct sink_item *it, char **env)
{
	const struct alert *a = &it->a;
	char first[40], resolved[40];
	const char *const vars[][2] = {
		{"PATH", "/usr/bin:/bin"},
		{"RING_ALERT", a->rule},
		{"RING_EVENT",
		 it->report[0] ? "report" : sink_event_name(it->ev)},
		{"RING_STATE", sink_state(it)},
		{"RING_SEVERITY",
		 it->report[0] ? it->report : alert_text_severity(a->severity)},
		{"RING_SUBJECT", a->subject},
		{"RING_NODE", a->node},
		{"RING_EDGE", a->edge},
		{"RING_RING", a->ring},
		{"RING_MESSAGE", sink_text(a, it->ev)},
		{"RING_FIRST_SEEN", first},
		{"RING_RESOLVED", resolved},
		{"RING_COORDINATOR", s->coordinator},
	};
	size_t n = 0;

	json_text_time(first, sizeof(first), a->first_seen_ms, NULL);
	json_text_time(resolved, sizeof(resolved), a->resolved_ms, NULL);
	env[0] = NULL;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (sink_command_env_add(env, &n, vars[i][0], vars[i][1]) < 0)
			return -1;
	env[n] = NULL;
	return 0;
}

static void sink_command_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Keep the first SINK_COMMAND_OUT_MAX bytes, read and drop the rest, 64 KiB at
 * a time at most (a chatty child must not hold the loop). 1 at EOF or
 * error, 0 while more may come. */
static int sink_command_read_out(struct sink_command *c)
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
		if (c->out_len < SINK_COMMAND_OUT_MAX) {
			size_t k = SINK_COMMAND_OUT_MAX - c->out_len;

			k = (size_t)r < k ? (size_t)r : k;
			memcpy(c->out + c->out_len, buf, k);
			c->out_len += k;
		}
	}
	return 0;
}

static void sink_command_out_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sink_command *c = arg;

	(void)fd;
	(void)what;
	if (sink_command_read_out(c)) {
		sink_event_free(&c->out_ev);
		sink_command_close(&c->out_fd);
	}
}

/* Write the JSON as the child takes it; a child that exits or closes its
 * stdin unread is not an error (it may not want it). */
static void sink_command_in_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sink_command *c = arg;
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
		sink_event_free(&c->in_ev);
		sink_command_close(&c->in_fd);
	}
}

/* The end of one run: pipes closed, events freed, the item gone. */
static void sink_command_end(struct sink_command *c)
{
	sink_event_free(&c->exit_ev);
	sink_event_free(&c->kill_ev);
	sink_event_free(&c->in_ev);
	sink_event_free(&c->out_ev);
	sink_command_close(&c->pidfd);
	sink_command_close(&c->in_fd);
	sink_command_close(&c->out_fd);
	if (c->in_buf)
		evbuffer_free(c->in_buf);
	c->in_buf = NULL;
	free(c->cur);
	c->cur = NULL;
	c->pid = 0;
	c->killed = 0;
	c->out_len = 0;
}

static void sink_command_exit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sink_command *s = arg;
	struct sink_command *c = s;
	char out[LOG_ESC_LEN(SINK_COMMAND_OUT_MAX)];
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
		sink_command_read_out(c);
	while (c->out_len && (c->out[c->out_len - 1] == '\n'))
		c->out_len--;
	c->out[c->out_len] = '\0';
	log_escape(out, sizeof(out), c->out);
	if (r < 0) {
		log_warn("alert_command %s (%s %s): waitpid", s->argv[0],
			 c->cur->a.rule, c->cur->a.subject);
		s->counts->failed++;
	} else if (c->killed) {
		s->counts->failed++; /* logged when killed */
	} else if (WIFEXITED(status) && !WEXITSTATUS(status)) {
		s->counts->delivered++;
	} else {
		s->counts->failed++;
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
	sink_command_end(c);
	sink_command_next(s);
}

static void sink_command_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sink_command *s = arg;
	struct sink_command *c = s;

	(void)fd;
	(void)what;
	log_warnx("alert_command %s (%s %s): still running after %llu ms: "
		  "killed",
		  s->argv[0], c->cur->a.rule, c->cur->a.subject,
		  (unsigned long long)s->timeout_ms);
	c->killed = 1;
	/* Its own process group: what it started goes too. */
	if (kill(-c->pid, SIGKILL) < 0)
		kill(c->pid, SIGKILL);
}

static int sink_command_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static int sink_command_spawn(struct sink_command *s, char **env, int in_fd,
			      int out_fd)
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
		: posix_spawn(&s->pid, s->argv[0], &fa, &attr, s->argv, env);
	posix_spawnattr_destroy(&attr);
out_fa:
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/* Start the command for s->cur. 0, or -1 (logged) when it could not
 * be started. */
static int sink_command_start(struct sink_command *s)
{
	struct sink_command *c = s;
	char *env[16];
	int in[2] = {-1, -1}, out[2] = {-1, -1};
	struct timeval tv;
	int rc;

	env[0] = NULL;
	c->in_buf = evbuffer_new();
	if (!c->in_buf || sink_command_env(s, c->cur, env) < 0)
		goto fail_errno;
	sink_command_json(s, c->cur, c->in_buf);
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		goto fail_errno;
	/* Ours non-blocking; the child's ends as programs expect them. */
	if (fcntl(in[1], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(out[0], F_SETFL, O_NONBLOCK) < 0)
		goto fail_errno;
	rc = sink_command_spawn(s, env, in[0], out[1]);
	if (rc) {
		errno = rc;
		goto fail_errno;
	}
	sink_command_close(&in[0]);
	sink_command_close(&out[1]);
	c->in_fd = in[1];
	c->out_fd = out[0];
	in[1] = out[0] = -1;
	c->pidfd = sink_command_pidfd_open(c->pid);
	if (c->pidfd >= 0)
		c->exit_ev = event_new(s->base, c->pidfd, EV_READ | EV_PERSIST,
				       sink_command_exit_cb, s);
	else
		c->exit_ev = event_new(s->base, -1, EV_PERSIST,
				       sink_command_exit_cb, s);
	c->kill_ev = evtimer_new(s->base, sink_command_kill_cb, s);
	c->in_ev = event_new(s->base, c->in_fd, EV_WRITE | EV_PERSIST,
			     sink_command_in_cb, c);
	c->out_ev = event_new(s->base, c->out_fd, EV_READ | EV_PERSIST,
			      sink_command_out_cb, c);
	if (!c->exit_ev || !c->kill_ev || !c->in_ev || !c->out_ev)
		goto fail_kill;
	sink_tv(&tv, c->pidfd >= 0 ? 0 : SINK_COMMAND_POLL_MS);
	if (event_add(c->exit_ev, c->pidfd >= 0 ? NULL : &tv) < 0)
		goto fail_kill;
	sink_tv(&tv, s->timeout_ms);
	if (s->timeout_ms && evtimer_add(c->kill_ev, &tv) < 0)
		goto fail_kill;
	if (event_add(c->in_ev, NULL) < 0 || event_add(c->out_ev, NULL) < 0)
		goto fail_kill;
	sink_command_env_free(env);
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
	sink_command_close(&in[0]);
	sink_command_close(&in[1]);
	sink_command_close(&out[0]);
	sink_command_close(&out[1]);
	sink_command_env_free(env);
	sink_command_end(c);
	return -1;
}

/* The next queued alert to the command, if none runs. */
static void sink_command_next(struct sink_command *s)
{
	struct sink_command *c = s;

	while (!c->cur && (c->cur = sink_queue_take(&c->q)))
		if (sink_command_start(s) < 0)
			s->counts
				->failed++; /* sink_command_start freed c->cur */
}

/* A transition, a Watchdog alert (not when one waits already) or a
 * report: queued, and run if none runs. */
static void sink_command_take(struct sink *k, const struct sink_item *it)
{
	struct sink_command *s = (struct sink_command *)k;
	struct sink_item *c;

	if (it->watchdog && sink_queue_has_watchdog(&s->q))
		return;
	c = sink_item_copy(it);
	if (!c)
		return;
	sink_queue_put(&s->q, c, s->counts);
	sink_command_next(s);
}

static size_t sink_command_queued(const struct sink *k)
{
	const struct sink_command *s = (const struct sink_command *)k;

	return s->q.n + !!s->cur;
}

static void sink_command_free(struct sink *k)
{
	struct sink_command *s = (struct sink_command *)k;

	if (!s)
		return;
	if (s->cur && s->pid > 0) {
		/* Shutting down: the command is not waited for. */
		if (kill(-s->pid, SIGKILL) < 0)
			kill(s->pid, SIGKILL);
		while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (s->cur)
		sink_command_end(s);
	sink_queue_clear(&s->q);
	if (s->argv)
		for (size_t i = 0; s->argv[i]; i++)
			free(s->argv[i]);
	free(s->argv);
	free(s);
}

static const struct sink_ops sink_command_ops = {
	.take = sink_command_take,
	.queued = sink_command_queued,
	.free = sink_command_free,
};

struct sink *sink_command_new(struct event_base *base,
			      const struct sinks_conf *conf,
			      struct sink_counts *counts)
{
	struct sink_command *s;
	size_t n = 0;

	if (conf->command_argv[0][0] != '/') {
		log_warnx("alert_command %s: not an absolute path",
			  conf->command_argv[0]);
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->sink.ops = &sink_command_ops;
	s->sink.wants = SINK_TABLE | SINK_WATCHDOG | SINK_REPORT;
	s->base = base;
	snprintf(s->coordinator, sizeof(s->coordinator), "%s",
		 conf->coordinator ? conf->coordinator : "");
	s->timeout_ms = conf->command_timeout_ms;
	s->counts = counts;
	s->pidfd = s->in_fd = s->out_fd = -1;
	sink_queue_init(&s->q, "alert_command", conf->queue_max);
	while (conf->command_argv[n])
		n++;
	s->argv = calloc(n + 1, sizeof(*s->argv));
	if (!s->argv)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (!(s->argv[i] = strdup(conf->command_argv[i])))
			goto fail;
	return &s->sink;
fail:
	sink_command_free(&s->sink);
	return NULL;
}
