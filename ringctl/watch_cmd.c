/* `ringctl watch`: a WatchRequest, then every WatchEvent printed as it
 * arrives. */
#include "watch_cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "error_report.h"
#include "frame.h"
#include "render.h"

/* A snapshot of a thousand edges is some 60 KiB. */
#define WATCH_CMD_MAX_FRAME (16u << 20)
/* Three of the coordinator's 15 s keepalives, and some slack. */
#define WATCH_CMD_SILENCE_MS 50000

int watch_cmd_parse(int argc, char **argv, struct watch_cmd_opts *o, char *err,
		    size_t len)
{
	size_t used = 0;

	memset(o, 0, sizeof(*o));
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *val = NULL;

		if (!strcmp(a, "--count") || !strcmp(a, "--kind")) {
			if (i + 1 >= argc) {
				snprintf(err, len, "%s needs a value", a);
				return -1;
			}
			val = argv[++i];
		} else if (!strncmp(a, "--count=", 8) ||
			   !strncmp(a, "--kind=", 7)) {
			val = strchr(a, '=') + 1;
		} else {
			snprintf(err, len,
				 "watch takes --count N and --kind KIND[,...], "
				 "not '%s'",
				 a);
			return -1;
		}
		if (!strncmp(a, "--count", 7)) {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(val, &end, 10);
			if (!*val || *end || *val == '-' || errno ||
			    v > 1000000000ul) {
				snprintf(err, len,
					 "--count: '%s' is not a number of "
					 "events from 0 to 1000000000",
					 val);
				return -1;
			}
			o->count = v;
			o->counting = 1;
			continue;
		}
		/* --kind: words split at commas, kept in kind_buf. */
		if (used + strlen(val) + 1 > sizeof(o->kind_buf)) {
			snprintf(err, len, "--kind: too long");
			return -1;
		}
		memcpy(o->kind_buf + used, val, strlen(val) + 1);
		for (char *p = o->kind_buf + used, *tok;
		     (tok = strsep(&p, ","));) {
			if (!*tok)
				continue;
			if (o->n_kinds >= WATCH_CMD_MAX_KINDS) {
				snprintf(err, len, "--kind: at most %d kinds",
					 WATCH_CMD_MAX_KINDS);
				return -1;
			}
			o->kinds[o->n_kinds++] = tok;
		}
		used += strlen(val) + 1;
	}
	return 0;
}

static void watch_cmd_figure(struct writer *w, const char *key, double v,
			     int decimals)
{
	if (v < 0)
		writer_none(w, key, "");
	else
		writer_double(w, key, v, decimals);
}

/* The machine formats: every field. */
static void watch_cmd_write(struct writer *w, const Ring__WatchEvent *ev)
{
	char t[32];

	/* The writer's document is the event's object. */
	render_format_time(ev->ts_ms, t, sizeof(t));
	writer_str(w, "time", t);
	writer_uint(w, "ts_ms", ev->ts_ms);
	writer_str(w, "kind", ev->kind);
	writer_str(w, "subject", ev->subject);
	/* Issue 24: the ring it is about ("" the site's). */
	writer_str(w, "ring", ev->ring);
	writer_str(w, "state", ev->state);
	writer_str(w, "previous", ev->previous);
	writer_str(w, "reason", ev->reason);
	writer_str(w, "text", ev->text);
	if (!strcmp(ev->kind, "snapshot") || !strcmp(ev->kind, "topology"))
		writer_bool(w, "order_valid", ev->order_valid);
	if (!strcmp(ev->kind, "lost"))
		writer_uint(w, "missed", ev->missed);
	if (ev->alert) {
		const Ring__Alert *a = ev->alert;

		writer_obj_start(w, "alert");
		writer_str(w, "rule", a->rule);
		writer_str(w, "severity", render_severity(a->severity));
		writer_bool(w, "firing", a->firing);
		writer_str(w, "subject", a->subject);
		writer_str(w, "ring", a->ring);
		writer_str(w, "node", a->node);
		writer_str(w, "edge", a->edge);
		writer_str(w, "message", a->message);
		writer_uint(w, "first_seen_ms", a->first_seen_ms);
		writer_uint(w, "last_seen_ms", a->last_seen_ms);
		writer_uint(w, "resolved_ms", a->resolved_ms);
		writer_str(w, "state", render_alert_state(a));
		writer_bool(w, "clearing", a->clearing);
		writer_uint(w, "cleared_ms", a->cleared_ms);
		writer_str(w, "resolved_message", a->resolved_message);
		writer_uint(w, "flaps", a->flaps);
		writer_obj_end(w);
	}
	if (ev->measurement) {
		const Ring__WatchMeasurement *m = ev->measurement;

		writer_obj_start(w, "measurement");
		writer_str(w, "edge", m->edge);
		writer_uint(w, "measured_ms", m->measured_ms);
		writer_str(w, "method", m->method);
		watch_cmd_figure(w, "nominal_gbps", m->nominal_gbps, 0);
		watch_cmd_figure(w, "gbps_a_to_b", m->gbps_a_to_b, 2);
		watch_cmd_figure(w, "gbps_b_to_a", m->gbps_b_to_a, 2);
		watch_cmd_figure(w, "latency_p50_us", m->latency_p50_us, 1);
		watch_cmd_figure(w, "rdma_write_gbps_a_to_b",
				 m->rdma_write_gbps_a_to_b, 2);
		watch_cmd_figure(w, "rdma_write_gbps_b_to_a",
				 m->rdma_write_gbps_b_to_a, 2);
		writer_str(w, "error", m->error);
		writer_obj_end(w);
	}
	if (!strcmp(ev->kind, "snapshot")) {
		writer_list_start(w, "edges");
		for (size_t i = 0; i < ev->n_edges; i++) {
			writer_obj_start_named(w, ev->edges[i]->edge);
			writer_str(w, "edge", ev->edges[i]->edge);
			writer_str(w, "state", ev->edges[i]->state);
			writer_str(w, "reason", ev->edges[i]->reason);
			writer_obj_end(w);
		}
		writer_list_end(w);
	}
}

/* The writer's JSON on one line: newlines and the indentation after them
 * go, outside strings (inside, a newline is always escaped). */
static void watch_cmd_one_line(FILE *out, const char *s, size_t n)
{
	int in_str = 0, esc = 0;

	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (in_str) {
			esc = !esc && ch == '\\';
			in_str = esc || ch != '"';
		} else if (ch == '"') {
			in_str = 1;
		} else if (ch == '\n') {
			while (i + 1 < n && s[i + 1] == ' ')
				i++;
			continue;
		}
		fputc(ch, out);
	}
	fputc('\n', out);
}

void watch_cmd_render(FILE *out, enum writer_format fmt,
		      const Ring__WatchEvent *ev)
{
	struct writer *w;
	char *buf = NULL, t[32];
	size_t n = 0;
	FILE *mem;

	if (fmt == WRITER_PLAIN) {
		/* One line (wrapped within 100 columns, continuations
		 * indented): time, kind, text (the text names its subject:
		 * PROTOCOL.md's WatchEvent). */
		render_format_time(ev->ts_ms, t, sizeof(t));
		n = (size_t)fprintf(out, "%s %-11s ", t, ev->kind);
		writer_fputs_wrapped(out, ev->text, n);
		fputc('\n', out);
		if (!strcmp(ev->kind, "snapshot"))
			for (size_t i = 0; i < ev->n_edges; i++) {
				fputs("  ", out);
				writer_fputs_safe(out, ev->edges[i]->edge);
				fputc(' ', out);
				writer_fputs_safe(out, ev->edges[i]->state);
				if (*ev->edges[i]->reason)
					fputs(": ", out);
				writer_fputs_safe(out, ev->edges[i]->reason);
				fputc('\n', out);
			}
		fflush(out);
		return;
	}
	if (fmt == WRITER_KEYVALUE) {
		/* One record: its lines, then an empty line. */
		w = writer_new(out, fmt);
		watch_cmd_write(w, ev);
		writer_finish(w);
		fputc('\n', out);
		fflush(out);
		return;
	}
	mem = open_memstream(&buf, &n);
	if (!mem) {
		error_report(2, "memory", NULL, NULL, "watch: %s",
			     strerror(errno));
		return;
	}
	w = writer_new(mem, fmt);
	watch_cmd_write(w, ev);
	writer_finish(w);
	fclose(mem);
	watch_cmd_one_line(out, buf, n);
	free(buf);
	fflush(out);
}

/* Connect and send the request; the refusal of a full coordinator
 * (an Error for request 0) is read even when the write fails. fd, or -1
 * with why printed. */
static int watch_cmd_connect(const char *sock, int timeout_ms,
			     const Ring__Envelope *req)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd, rc;

	if (strlen(sock) >= sizeof(sun.sun_path)) {
		error_report(2, "bad_input", sock, "a shorter -s SOCKET",
			     "%s: socket path too long", sock);
		return -1;
	}
	memcpy(sun.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		error_report(2, "socket", NULL, NULL, "socket: %s",
			     strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		char why[512];

		client_connect_error(sock, errno, why, sizeof(why));
		error_report(2, "unreachable", sock,
			     "-s SOCKET or RINGCTL_SOCKET", "%s", why);
		close(fd);
		return -1;
	}
	rc = frame_write_fd(fd, req, timeout_ms);
	if (rc < 0 && rc != -EPIPE && rc != -ECONNRESET) {
		error_report(2, "unreachable", sock, NULL,
			     "%s: sending request: %s", sock,
			     frame_strerror(rc));
		close(fd);
		return -1;
	}
	return fd; /* a refusal, if any, is the first frame read */
}

int watch_cmd_run(const char *sock, int timeout_ms, enum writer_format fmt,
		  const struct watch_cmd_opts *o)
{
	Ring__Envelope req = RING__ENVELOPE__INIT, *r;
	Ring__WatchRequest wr = RING__WATCH_REQUEST__INIT;
	unsigned long seen = 0, after = 0;
	int fd, rc, ret = 2;

	/* A coordinator that closes as we write: EPIPE, then read why. */
	signal(SIGPIPE, SIG_IGN);
	wr.kinds = (char **)o->kinds;
	wr.n_kinds = o->n_kinds;
	req.request_id = (uint64_t)getpid();
	req.body_case = RING__ENVELOPE__BODY_WATCH_REQUEST;
	req.watch_request = &wr;
	client_stamp_ring(&req);
	fd = watch_cmd_connect(sock, timeout_ms, &req);
	if (fd < 0)
		return 2;
	for (;;) {
		/* -t bounds the wait for the snapshot; then events come when
		 * something happens, and a keepalive every 15 s meanwhile:
		 * three missed, the coordinator is stuck. */
		rc = frame_read_fd(fd, WATCH_CMD_MAX_FRAME,
				   seen ? WATCH_CMD_SILENCE_MS : timeout_ms,
				   &r);
		if (rc < 0) {
			if (rc == -ETIMEDOUT && seen)
				error_report(2, "stuck", NULL,
					     "restart the coordinator",
					     "nothing from the coordinator for "
					     "%d s, not even its keepalive: it "
					     "is stuck",
					     WATCH_CMD_SILENCE_MS / 1000);
			else if (rc == -ETIMEDOUT)
				error_report(2, "timeout", NULL, "-t SECONDS",
					     "no answer from the coordinator "
					     "within %d ms",
					     timeout_ms);
			else if (seen)
				error_report(
					2, "closed", NULL, NULL,
					"the coordinator closed the stream "
					"(%s)",
					frame_strerror(rc));
			else
				error_report(2, "unreachable", sock, NULL,
					     "%s: reading reply: %s", sock,
					     frame_strerror(rc));
			break;
		}
		if (r->body_case == RING__ENVELOPE__BODY_ERROR &&
		    (r->request_id == req.request_id || !r->request_id)) {
			error_report(2, "refused", NULL, NULL,
				     "coordinator: %s", r->error->text);
			frame_free(r);
			break;
		}
		if (r->body_case != RING__ENVELOPE__BODY_WATCH_EVENT ||
		    r->request_id != req.request_id) {
			frame_free(r); /* not ours: nothing else is sent */
			continue;
		}
		if (!strcmp(r->watch_event->kind, "keepalive")) {
			frame_free(r); /* proof of life, not news */
			continue;
		}
		watch_cmd_render(stdout, fmt, r->watch_event);
		seen++;
		/* --count counts what happened after the snapshot. */
		after += strcmp(r->watch_event->kind, "snapshot") != 0;
		frame_free(r);
		if (o->counting && after >= o->count) {
			ret = 0;
			break;
		}
	}
	close(fd);
	return ret;
}
