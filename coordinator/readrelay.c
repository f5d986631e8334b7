/* See readrelay.h. */
#include "readrelay.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "validate.h"

struct readrelay_node {
	struct readrelay *owner;
	struct call *call;
	int up, done;
	Ring__ReadTestResult res;
	char name[64];
	/* The sizes validate_read_result allows, each with its NUL. */
	char path[4096], fs[64], dev[64], error[VALIDATE_MAX_ERROR_TEXT + 1];
};

struct readrelay {
	const struct call_iface *ci;
	struct readrelay_node *nodes;
	size_t n, pending;
	char path[4096];
	uint64_t max_bytes;
	unsigned max_ms;
	readrelay_done_fn done;
	void *arg;
};

static void readrelay_free(struct readrelay *r)
{
	for (size_t i = 0; i < r->n; i++)
		call_cancel(r->ci, r->nodes[i].call);
	free(r->nodes);
	free(r);
}

struct readrelay *readrelay_new(const struct call_iface *ci,
				const char *const *nodes, const int *up,
				size_t n, const char *path, uint64_t max_bytes,
				unsigned max_ms, readrelay_done_fn done,
				void *arg)
{
	struct readrelay *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->nodes = calloc(n ? n : 1, sizeof(*r->nodes));
	if (!r->nodes) {
		free(r);
		return NULL;
	}
	r->ci = ci;
	r->n = n;
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->max_bytes = max_bytes;
	r->max_ms = max_ms;
	r->done = done;
	r->arg = arg;
	for (size_t i = 0; i < n; i++) {
		struct readrelay_node *x = &r->nodes[i];

		x->owner = r;
		x->up = up[i];
		ring__read_test_result__init(&x->res);
		snprintf(x->name, sizeof(x->name), "%s", nodes[i]);
		x->res.node = x->name;
		x->res.path = x->path;
		x->res.filesystem = x->fs;
		x->res.device = x->dev;
		x->res.error = x->error;
	}
	return r;
}

static void readrelay_finish(struct readrelay *r)
{
	Ring__ReadTestResult all = RING__READ_TEST_RESULT__INIT;
	Ring__ReadTestResult **list = calloc(r->n ? r->n : 1, sizeof(*list));
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	all.path = r->path;
	all.measured_ms =
		(uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (!list) {
		all.error = "out of memory collecting the results";
	} else {
		for (size_t i = 0; i < r->n; i++)
			list[i] = &r->nodes[i].res;
		all.nodes = list;
		all.n_nodes = r->n;
	}
	r->done(&all, r->arg);
	free(list);
	readrelay_free(r);
}

static void readrelay_set_error(struct readrelay_node *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void readrelay_set_error(struct readrelay_node *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->error, sizeof(x->error), fmt, ap);
	va_end(ap);
}

/* An agent's figures are untrusted: finite, in range, bounded texts. */
static int readrelay_check(const Ring__ReadTestResult *m, char *why, size_t len)
{
	if (validate_read_result(m, why, len) < 0)
		return -1;
	return 0;
}

static void readrelay_reply(const Ring__Envelope *env, int err, void *arg)
{
	struct readrelay_node *x = arg;
	struct readrelay *r = x->owner;
	char why[256];

	x->call = NULL;
	x->done = 1;
	if (!env) {
		readrelay_set_error(x, "no answer: %s",
				    err == -ETIMEDOUT ? "timed out"
						      : strerror(-err));
	} else if (env->body_case == RING__ENVELOPE__BODY_ERROR) {
		readrelay_set_error(x, "%s", env->error->text);
	} else if (readrelay_check(env->read_test_result, why, sizeof(why)) <
		   0) {
		readrelay_set_error(x, "bad result from the agent: %s", why);
	} else {
		const Ring__ReadTestResult *m = env->read_test_result;

		snprintf(x->path, sizeof(x->path), "%s", m->path);
		snprintf(x->fs, sizeof(x->fs), "%s", m->filesystem);
		snprintf(x->dev, sizeof(x->dev), "%s", m->device);
		snprintf(x->error, sizeof(x->error), "%s", m->error);
		x->res.bytes = m->bytes;
		x->res.seconds = m->seconds;
		/* Recomputed here from the measured figures, not taken. */
		x->res.gbytes_per_s =
			m->seconds > 0 ? (double)m->bytes / m->seconds / 1e9
				       : 0;
		x->res.files = m->files;
		x->res.direct = m->direct;
		x->res.measured_ms = m->measured_ms;
		x->res.stopped_at_time = m->stopped_at_time;
	}
	log_info("read test on %s: %s", x->name,
		 *x->error ? x->error : "measured");
	if (--r->pending == 0)
		readrelay_finish(r);
}

void readrelay_go(struct readrelay *r)
{
	Ring__ReadTestRequest req = RING__READ_TEST_REQUEST__INIT;
	Ring__Envelope env = RING__ENVELOPE__INIT;

	req.path = r->path;
	req.max_bytes = r->max_bytes;
	req.max_ms = r->max_ms;
	env.body_case = RING__ENVELOPE__BODY_READ_TEST_REQUEST;
	env.read_test_request = &req;
	r->pending = 1; /* held until every call is out */
	for (size_t i = 0; i < r->n; i++) {
		struct readrelay_node *x = &r->nodes[i];

		if (!x->up) {
			readrelay_set_error(x, "%s is not up", x->name);
			continue;
		}
		x->call = call_start(r->ci, x->name, &env,
				     r->max_ms + READRELAY_SLACK_MS, 0,
				     RING__ENVELOPE__BODY_READ_TEST_RESULT,
				     readrelay_reply, x);
		if (!x->call) {
			readrelay_set_error(
				x, "not sent: %s",
				errno == ENOTCONN ? "not up" : strerror(errno));
			continue;
		}
		r->pending++;
	}
	if (--r->pending == 0)
		readrelay_finish(r);
}

void readrelay_cancel(struct readrelay *r)
{
	if (r)
		readrelay_free(r);
}
