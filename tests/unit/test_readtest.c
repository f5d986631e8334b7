#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_conf.h"
#include "cfg.h"
#include "agent/ops.h"
#include "agent/readpath.h"
#include "agent/readtest.h"
#include "ring.pb-c.h"
#include "testlimits.h"
#include "testutil.h"

/* Read tests on real files in a temp dir: containment by the path's text
 * (one refusal for every outside path), the open beneath the root
 * (symlinks in and out, /proc magic links, a middle directory swapped for
 * a link while reads run), the option, the bounds and a real read. */

struct fx {
	char dir[200];	/* the temp dir (resolved) */
	char ok[300];	/* dir/ok: the read_path */
	char out[300];	/* dir/out: outside */
	char file[400]; /* dir/ok/w.bin, 8 MiB + 100 bytes */
};

static void fx_write(const char *path, size_t bytes)
{
	assert_int_equal(testutil_write_file(path, bytes), 0);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char tmpl[] = "/tmp/readtestXXXXXX", p[PATH_MAX];

	assert_non_null(f);
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, p));
	assert_true(strlen(p) < sizeof(f->dir));
	snprintf(f->dir, sizeof(f->dir), "%.199s", p);
	snprintf(f->ok, sizeof(f->ok), "%s/ok", f->dir);
	snprintf(f->out, sizeof(f->out), "%s/out", f->dir);
	snprintf(f->file, sizeof(f->file), "%s/w.bin", f->ok);
	assert_int_equal(mkdir(f->ok, 0700), 0);
	assert_int_equal(mkdir(f->out, 0700), 0);
	fx_write(f->file, (8u << 20) + 100);
	snprintf(p, sizeof(p), "%s/secret", f->out);
	fx_write(p, 4096);
	/* ok/escape -> ../out (a way out); out/in -> ../ok (a way in) */
	snprintf(p, sizeof(p), "%s/escape", f->ok);
	assert_int_equal(symlink(f->out, p), 0);
	snprintf(p, sizeof(p), "%s/in", f->out);
	assert_int_equal(symlink(f->ok, p), 0);
	/* a sibling whose name starts like the root: not inside it */
	snprintf(p, sizeof(p), "%s/okay", f->dir);
	assert_int_equal(mkdir(p, 0700), 0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	testutil_rm_tree(f->dir);
	free(f);
	return 0;
}

static void fx_conf(struct agent_conf *c, const char *root)
{
	agent_conf_defaults(c);
	if (root) {
		snprintf(c->read_paths[0], sizeof(c->read_paths[0]), "%.500s",
			 root);
		c->n_read_paths = 1;
	}
}

static int check(const struct agent_conf *c, const char *path, char *why)
{
	why[0] = '\0';
	return readtest_path_check(c, path, why, 512);
}

/* why with every copy of path replaced by "PATH": two refusals compared
 * for what they say beyond the path asked. */
static void unpath(char *why, const char *path)
{
	char out[600] = "", *p = why, *q;
	size_t k = strlen(path), used = 0;

	while ((q = strstr(p, path))) {
		used += (size_t)snprintf(out + used, sizeof(out) - used,
					 "%.*sPATH", (int)(q - p), p);
		p = q + k;
	}
	snprintf(out + used, sizeof(out) - used, "%s", p);
	strcpy(why, out);
}

/* The text check: nothing outside the root is looked at, so an outside
 * path that exists and one that does not get the same words. */
static void test_containment(void **state)
{
	struct fx *f = *state;
	struct agent_conf *c = calloc(1, sizeof(*c));
	char p[PATH_MAX], why[512], why2[512];
	static const char *const outside[] = {
		"/root/.bashrc",  "/root/no-such-file-here",
		"/etc/hostname",  "/etc/no-such-file-here",
		"/proc/self/cwd", "/proc/1/root",
	};

	assert_non_null(c);
	/* No read_path: every request refused, naming the option. */
	fx_conf(c, NULL);
	assert_int_equal(check(c, f->file, why), -1);
	assert_non_null(strstr(why, "read_path"));
	assert_int_equal(check(NULL, f->file, why), -1);
	assert_non_null(strstr(why, "read_path"));

	fx_conf(c, f->ok);
	assert_int_equal(check(c, f->file, why), 0);
	assert_int_equal(check(c, f->ok, why), 0); /* the root itself */
	snprintf(p, sizeof(p), "/%s/.//w.bin/", f->ok);
	assert_int_equal(check(c, p, why), 0); /* "//", "." dropped */
	/* Outside: one message, whatever is there. */
	snprintf(p, sizeof(p), "%s/secret", f->out);
	assert_int_equal(check(c, p, why2), -1);
	assert_non_null(strstr(why2, "outside read_path"));
	assert_non_null(strstr(why2, f->ok));
	unpath(why2, p);
	snprintf(p, sizeof(p), "%s/nope", f->out);
	assert_int_equal(check(c, p, why), -1);
	unpath(why, p);
	assert_string_equal(why, why2);
	for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
		assert_int_equal(check(c, outside[i], why), -1);
		unpath(why, outside[i]);
		assert_string_equal(why, why2);
	}
	/* .. refused by its text, inside or out. */
	snprintf(p, sizeof(p), "%s/../out/secret", f->ok);
	assert_int_equal(check(c, p, why), -1);
	assert_non_null(strstr(why, "'..'"));
	snprintf(p, sizeof(p), "%s/../ok/w.bin", f->ok);
	assert_int_equal(check(c, p, why), -1);
	/* A sibling sharing the root's prefix is not inside. */
	snprintf(p, sizeof(p), "%s/okay", f->dir);
	assert_int_equal(check(c, p, why), -1);
	assert_non_null(strstr(why, "outside read_path"));
	/* A symlink from outside into the root: outside by its text. */
	snprintf(p, sizeof(p), "%s/in/w.bin", f->out);
	assert_int_equal(check(c, p, why), -1);
	/* A symlink inside pointing out: inside by its text; the open
	 * refuses it (test_open). */
	snprintf(p, sizeof(p), "%s/escape/secret", f->ok);
	assert_int_equal(check(c, p, why), 0);
	/* Relative. */
	assert_int_equal(check(c, "ok/w.bin", why), -1);
	assert_non_null(strstr(why, "absolute"));
	/* A root of "/" holds every absolute path. */
	fx_conf(c, "/");
	assert_int_equal(check(c, "/etc/hostname", why), 0);
	free(c);
}

static int fx_read(struct agent_conf *c, const char *path,
		   struct readtest_result *r)
{
	int stop = 0;

	return readtest_read((const char(*)[AGENT_CONF_PATH_LEN])c->read_paths,
			     c->n_read_paths, path, 1ull << 30, 10000, &stop,
			     r);
}

/* Opening beneath the root, with openat2 and with the walk that stands in
 * for it on kernels without: a link out, a /proc magic link, a missing
 * file; a link that stays inside is followed by openat2 only. */
static void test_open(void **state)
{
	struct fx *f = *state;
	struct agent_conf *c = calloc(1, sizeof(*c));
	struct readtest_result *r = calloc(1, sizeof(*r));
	char p[PATH_MAX];

	assert_non_null(c);
	assert_non_null(r);
	/* ok/alias -> w.bin (stays inside); ok/up -> ../out/secret. */
	snprintf(p, sizeof(p), "%s/alias", f->ok);
	assert_int_equal(symlink("w.bin", p), 0);
	snprintf(p, sizeof(p), "%s/up", f->ok);
	assert_int_equal(symlink("../out/secret", p), 0);
	for (int walk = 0; walk < 2; walk++) {
		readpath_use_openat2(!walk);
		fx_conf(c, f->ok);
		assert_int_equal(fx_read(c, f->file, r), 0);
		assert_int_equal(r->bytes, (8u << 20) + 100);
		assert_string_equal(r->refused, "");
		/* An absolute link out, a relative one climbing out. */
		snprintf(p, sizeof(p), "%s/escape/secret", f->ok);
		assert_int_equal(fx_read(c, p, r), -1);
		assert_int_equal(r->bytes, 0);
		assert_non_null(strstr(r->refused, walk ? "symbolic link"
							: "leads outside"));
		snprintf(p, sizeof(p), "%s/up", f->ok);
		assert_int_equal(fx_read(c, p, r), -1);
		assert_int_equal(r->bytes, 0);
		assert_non_null(strstr(r->refused, "symbolic link"));
		/* A link that stays inside. */
		snprintf(p, sizeof(p), "%s/alias", f->ok);
		if (walk) {
			assert_int_equal(fx_read(c, p, r), -1);
			assert_non_null(strstr(r->refused, "no openat2"));
		} else {
			assert_int_equal(fx_read(c, p, r), 0);
			assert_int_equal(r->bytes, (8u << 20) + 100);
		}
		/* Missing, below the root: said so, without strerror. */
		snprintf(p, sizeof(p), "%s/nope", f->ok);
		assert_int_equal(fx_read(c, p, r), -1);
		assert_non_null(strstr(r->refused, "not found"));
		/* /proc as a root: its magic links lead nowhere. */
		fx_conf(c, "/proc");
		assert_int_equal(fx_read(c, "/proc/self/cwd", r), -1);
		assert_string_not_equal(r->refused, "");
		assert_int_equal(fx_read(c, "/proc/self/root/etc/hostname", r),
				 -1);
		assert_string_not_equal(r->refused, "");
		assert_int_equal(r->bytes, 0);
	}
	readpath_use_openat2(1);
	/* A read_path that is itself a symlink (out/in -> ok), given with a
	 * trailing slash: the operator's link is followed to the root. */
	snprintf(p, sizeof(p), "%s/in/", f->out);
	fx_conf(c, p);
	snprintf(p, sizeof(p), "%s/in/w.bin", f->out);
	assert_int_equal(fx_read(c, p, r), 0);
	assert_int_equal(r->bytes, (8u << 20) + 100);
	free(r);
	free(c);
}

struct swapper {
	char a[PATH_MAX], b[PATH_MAX];
	int stop;
	unsigned long swaps;
};

static void *swap_loop(void *arg)
{
	struct swapper *s = arg;

	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
		if (renameat2(AT_FDCWD, s->a, AT_FDCWD, s->b,
			      RENAME_EXCHANGE) == 0)
			s->swaps++;
	return NULL;
}

/* A middle directory swapped with a symlink to outside while reads run:
 * no read ever comes from outside (its file has another size). */
static void test_swap_race(void **state)
{
	struct fx *f = *state;
	struct agent_conf *c = calloc(1, sizeof(*c));
	struct readtest_result *r = calloc(1, sizeof(*r));
	struct swapper sw;
	pthread_t tid;
	char p[PATH_MAX], mid[512];
	unsigned ok = 0, refused = 0;

	assert_non_null(c);
	assert_non_null(r);
	memset(&sw, 0, sizeof(sw));
	/* ok/race/mid/f.bin (4096 bytes) and out/f.bin (8192 bytes);
	 * ok/race/link -> out, exchanged with mid all along. */
	snprintf(p, sizeof(p), "%s/race", f->ok);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(mid, sizeof(mid), "%s/race/mid", f->ok);
	assert_int_equal(mkdir(mid, 0700), 0);
	snprintf(p, sizeof(p), "%s/f.bin", mid);
	fx_write(p, 4096);
	snprintf(p, sizeof(p), "%s/f.bin", f->out);
	fx_write(p, 8192);
	snprintf(sw.b, sizeof(sw.b), "%s/race/link", f->ok);
	assert_int_equal(symlink(f->out, sw.b), 0);
	snprintf(sw.a, sizeof(sw.a), "%s", mid);
	fx_conf(c, f->ok);
	snprintf(p, sizeof(p), "%s/f.bin", mid);
	for (int walk = 0; walk < 2; walk++) {
		readpath_use_openat2(!walk);
		sw.stop = 0;
		assert_int_equal(pthread_create(&tid, NULL, swap_loop, &sw), 0);
		for (int i = 0; i < 3000; i++) {
			if (fx_read(c, p, r) == 0) {
				assert_int_equal(r->bytes, 4096);
				ok++;
			} else {
				assert_int_equal(r->bytes, 0);
				refused++;
			}
		}
		__atomic_store_n(&sw.stop, 1, __ATOMIC_RELAXED);
		pthread_join(tid, NULL);
	}
	readpath_use_openat2(1);
	assert_true(sw.swaps > 0);
	assert_true(refused > 0); /* the race was run */
	assert_true(ok > 0);
	free(r);
	free(c);
}

static void test_conf(void **state)
{
	struct agent_conf *c = calloc(1, sizeof(*c));
	struct cfg_ctx ctx = {0};
	char text[4096];
	size_t used = 0;

	(void)state;
	assert_non_null(c);
	agent_conf_defaults(c);
	snprintf(text, sizeof(text),
		 "coordinator c:1\nnode n1\nread_path /srv/models\n"
		 "read_path /data\n");
	assert_int_equal(
		agent_conf_load_buffer(c, "t.conf", text, strlen(text), &ctx),
		0);
	assert_int_equal(c->n_read_paths, 2);
	assert_string_equal(c->read_paths[1], "/data");

	agent_conf_defaults(c);
	memset(&ctx, 0, sizeof(ctx));
	snprintf(text, sizeof(text),
		 "coordinator c:1\nnode n1\nread_path models\n");
	assert_int_equal(
		agent_conf_load_buffer(c, "t.conf", text, strlen(text), &ctx),
		-1);
	assert_int_equal(ctx.errors, 1);
	/* ".." in a root: refused, a request is matched by its text. */
	agent_conf_defaults(c);
	memset(&ctx, 0, sizeof(ctx));
	snprintf(text, sizeof(text),
		 "coordinator c:1\nnode n1\nread_path /srv/../etc\n"
		 "read_path /srv/..x/a..\n");
	assert_int_equal(
		agent_conf_load_buffer(c, "t.conf", text, strlen(text), &ctx),
		-1);
	assert_int_equal(ctx.errors, 1);
	assert_int_equal(c->n_read_paths, 1); /* "..x", "a.." are names */

	/* 17 paths: the 17th is refused. */
	agent_conf_defaults(c);
	memset(&ctx, 0, sizeof(ctx));
	used = (size_t)snprintf(text, sizeof(text), "coordinator c:1\n");
	for (int i = 0; i < 17; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "read_path /d%d\n", i);
	assert_int_equal(agent_conf_load_buffer(c, "t.conf", text, used, &ctx),
			 -1);
	assert_int_equal(ctx.errors, 1);
	assert_int_equal(c->n_read_paths, AGENT_CONF_MAX_READ_PATHS);
	free(c);
}

static void test_bounds(void **state)
{
	Ring__ReadTestRequest r = RING__READ_TEST_REQUEST__INIT;
	uint64_t bytes = 0;
	unsigned ms = 0;
	char why[256];

	(void)state;
	r.path = "/srv/w";
	assert_int_equal(
		testlimits_read_check(&r, &bytes, &ms, why, sizeof(why)), 0);
	assert_int_equal(bytes, 4ull << 30);
	assert_int_equal(ms, 10000);
	r.max_bytes = 64ull << 30;
	r.max_ms = 60000;
	assert_int_equal(
		testlimits_read_check(&r, &bytes, &ms, why, sizeof(why)), 0);
	assert_int_equal(bytes, 64ull << 30);
	r.max_bytes++;
	assert_int_equal(
		testlimits_read_check(&r, &bytes, &ms, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "64 GiB"));
	r.max_bytes = 1;
	r.max_ms = 60001;
	assert_int_equal(
		testlimits_read_check(&r, &bytes, &ms, why, sizeof(why)), -1);
	r.max_ms = 1;
	r.path = "rel/w";
	assert_int_equal(
		testlimits_read_check(&r, &bytes, &ms, why, sizeof(why)), -1);
	r.path = "";
	assert_int_equal(
		testlimits_read_check(&r, &bytes, &ms, why, sizeof(why)), -1);
}

static void test_read(void **state)
{
	struct fx *f = *state;
	struct readtest_result *r = calloc(1, sizeof(*r));
	struct agent_conf *c = calloc(1, sizeof(*c));
	const char(*roots)[AGENT_CONF_PATH_LEN];
	int stop = 0;
	char p[PATH_MAX];

	assert_non_null(r);
	assert_non_null(c);
	fx_conf(c, f->ok);
	roots = (const char(*)[AGENT_CONF_PATH_LEN])c->read_paths;
	/* The whole file: every byte counted, once. */
	assert_int_equal(
		readtest_read(roots, 1, f->file, 1ull << 30, 10000, &stop, r),
		0);
	assert_string_equal(r->error, "");
	assert_string_equal(r->path, f->file);
	assert_int_equal(r->bytes, (8u << 20) + 100);
	assert_int_equal(r->files, 1);
	assert_true(r->seconds > 0);
	assert_true(r->device[0] != '\0');
	/* Bounded: 1 MiB + 1 of it, exactly. */
	assert_int_equal(readtest_read(roots, 1, f->file, (1u << 20) + 1, 10000,
				       &stop, r),
			 0);
	assert_int_equal(r->bytes, (1u << 20) + 1);
	assert_false(r->stopped_at_time);
	/* A directory: its regular files (the symlink is not followed). */
	snprintf(p, sizeof(p), "%s/second.bin", f->ok);
	fx_write(p, 4096);
	assert_int_equal(
		readtest_read(roots, 1, f->ok, 1ull << 30, 10000, &stop, r), 0);
	assert_int_equal(r->files, 2);
	assert_int_equal(r->bytes, (8u << 20) + 100 + 4096);
	/* An empty directory: nothing to read, said. */
	snprintf(p, sizeof(p), "%s/empty", f->ok);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(
		readtest_read(roots, 1, p, 1ull << 30, 10000, &stop, r), -1);
	assert_non_null(strstr(r->error, "nothing to read"));
	/* Stopped from outside: ends after the first block. */
	stop = 1;
	assert_int_equal(
		readtest_read(roots, 1, f->file, 1ull << 30, 10000, &stop, r),
		0);
	assert_int_equal(r->bytes, READTEST_BLOCK);
	/* Not a file or directory. */
	fx_conf(c, "/dev");
	assert_int_equal(
		readtest_read(roots, 1, "/dev/null", 1, 1000, &stop, r), -1);
	assert_non_null(strstr(r->error, "not a regular file"));
	free(c);
	free(r);
}

/* Through the agent's request handler, with its real worker thread. */
struct got {
	int n;
	Ring__Envelope__BodyCase type[5];
	Ring__ErrorCode code[5];
	char text[5][512];
	uint64_t bytes[5];
	int direct[5];
	struct event_base *base;
};

static void got_send(void *arg, uint64_t id, Ring__Envelope__BodyCase type,
		     void *body)
{
	struct got *g = arg;

	(void)id;
	assert_true(g->n < 5);
	g->type[g->n] = type;
	if (type == RING__ENVELOPE__BODY_ERROR) {
		Ring__Error *e = body;

		g->code[g->n] = e->code;
		snprintf(g->text[g->n], sizeof(g->text[0]), "%s", e->text);
	} else if (type == RING__ENVELOPE__BODY_READ_TEST_RESULT) {
		Ring__ReadTestResult *r = body;

		g->bytes[g->n] = r->bytes;
		g->direct[g->n] = r->direct;
		snprintf(g->text[g->n], sizeof(g->text[0]), "%s", r->error);
		event_base_loopbreak(g->base);
	}
	g->n++;
}

static void ask(struct ops *o, uint64_t id, const char *path, uint64_t bytes)
{
	Ring__ReadTestRequest r = RING__READ_TEST_REQUEST__INIT;
	Ring__Envelope env = RING__ENVELOPE__INIT;

	r.path = (char *)path;
	r.max_bytes = bytes;
	env.request_id = id;
	env.body_case = RING__ENVELOPE__BODY_READ_TEST_REQUEST;
	env.read_test_request = &r;
	assert_int_equal(ops_handle(o, &env), 1);
}

static void test_ops(void **state)
{
	struct fx *f = *state;
	struct agent_conf *c = calloc(1, sizeof(*c));
	struct got g = {0};
	struct ops *o;
	char p[PATH_MAX];

	assert_non_null(c);
	g.base = event_base_new();
	assert_non_null(g.base);
	/* No read_path: refused at once, naming the option. */
	fx_conf(c, NULL);
	o = ops_new(g.base, c, got_send, &g);
	assert_non_null(o);
	ask(o, 1, f->file, 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.type[0], RING__ENVELOPE__BODY_ERROR);
	assert_int_equal(g.code[0], RING__ERROR_CODE__ERROR_PERMISSION);
	assert_non_null(strstr(g.text[0], "read_path"));
	ops_free(o);

	/* One at a time: the second is refused while the first runs; the
	 * first answers from the worker through the loop. */
	memset(g.text, 0, sizeof(g.text));
	g.n = 0;
	fx_conf(c, f->ok);
	o = ops_new(g.base, c, got_send, &g);
	ask(o, 2, f->file, 3000000);
	ask(o, 3, f->file, 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.type[0], RING__ENVELOPE__BODY_ERROR);
	assert_non_null(strstr(g.text[0], "busy"));
	assert_int_equal(ops_running(o), 1);
	event_base_dispatch(g.base);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.type[1], RING__ENVELOPE__BODY_READ_TEST_RESULT);
	assert_string_equal(g.text[1], "");
	assert_int_equal(g.bytes[1], 3000000);
	assert_int_equal(ops_running(o), 0);
	/* Outside: refused on the loop at once, by the path's text, naming
	 * read_path and the directory, with the permission code. */
	snprintf(p, sizeof(p), "%s/secret", f->out);
	ask(o, 4, p, 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(ops_running(o), 0);
	assert_int_equal(g.type[2], RING__ENVELOPE__BODY_ERROR);
	assert_int_equal(g.code[2], RING__ERROR_CODE__ERROR_PERMISSION);
	assert_non_null(strstr(g.text[2], "read test: "));
	assert_non_null(strstr(g.text[2], "outside read_path"));
	assert_non_null(strstr(g.text[2], f->ok));
	/* Missing below the root: the worker says so, same code. */
	snprintf(p, sizeof(p), "%s/nope", f->ok);
	ask(o, 6, p, 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(ops_running(o), 1);
	event_base_loop(g.base, EVLOOP_ONCE);
	assert_int_equal(g.n, 4);
	assert_int_equal(g.code[3], RING__ERROR_CODE__ERROR_PERMISSION);
	assert_non_null(strstr(g.text[3], "not found"));
	/* Cancelled while running (the session dropped): nothing answers,
	 * nothing leaks. */
	ask(o, 5, f->file, 0);
	assert_int_equal(ops_running(o), 1);
	ops_free(o);
	assert_int_equal(g.n, 4);
	event_base_free(g.base);
	free(c);
}

static void never_done(const struct readtest_result *r, void *arg)
{
	(void)r;
	(void)arg;
	fail_msg("done called after readtest_free");
}

/* Let go while the worker runs (it frees itself) or after it finished
 * (the loop frees): either way at once, nothing leaks (LeakSanitizer at
 * exit), done never runs. Started and let go many times so both orders
 * happen. */
static void test_free_running(void **state)
{
	struct fx *f = *state;
	struct agent_conf *c = calloc(1, sizeof(*c));
	struct event_base *base = event_base_new();
	char why[256];

	assert_non_null(c);
	assert_non_null(base);
	fx_conf(c, f->ok);
	for (int i = 0; i < 40; i++) {
		struct readtest *t;
		int tries = 0;

		/* At most 4 workers alive, orphans included: a fifth waits
		 * for one to end (within a block here). */
		while (!(t = readtest_start(base, c, f->file, 1ull << 30, 10000,
					    never_done, NULL, why,
					    sizeof(why)))) {
			assert_non_null(strstr(why, "busy: 4 read tests"));
			assert_true(++tries < 500);
			usleep(10000);
		}
		if (i & 1)
			usleep(2000); /* some finish first */
		readtest_free(t);
		/* The roots were copied: the conf may change under a
		 * running worker. */
		memset(c->read_paths[0], 0, sizeof(c->read_paths[0]));
		fx_conf(c, f->ok);
	}
	event_base_loop(base, EVLOOP_NONBLOCK);
	/* Workers still running end within a block; give them that. */
	usleep(300000);
	event_base_free(base);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_containment, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_open, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_swap_race, fx_setup,
						fx_teardown),
		cmocka_unit_test(test_conf),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test_setup_teardown(test_read, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_ops, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_free_running, fx_setup,
						fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
