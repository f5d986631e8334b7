/* readrelay (ringctl plan --weights): the coordinator's relay of a read
 * test to agents, with the real node table and the call double of
 * testcall.h. Behind the double either the real agent request handler
 * (agent/ops.c with its worker thread, reading real files under a temp
 * read_path) answers, or the test scripts what an agent may send that a
 * real one would not (out-of-range figures, bad text, nested nodes), and
 * the failures the session layer reports (deadline, session lost, node
 * not up). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/agent_conf.h"
#include "frame.h"
#include "coordinator/nodes.h"
#include "agent/ops.h"
#include "coordinator/readrelay.h"
#include "testcall.h"
#include "testutil.h"
#include "coordinator/validate.h"

#define NA 3 /* n1, n2 may read dir/ok; n3 has no read_path */
#define BODY_READ RING__ENVELOPE__BODY_READ_TEST_REQUEST

static const char *const names[NA] = {"n1", "n2", "n3"};

struct fx;

/* One real agent request handler per node, answering through the double
 * as the agent's session would. */
struct agent {
	struct fx *f;
	const char *node;
	struct agent_conf *conf;
	struct ops *ops;
};

struct fx {
	struct nodes *table;
	struct tc tc;
	struct event_base *base;
	struct agent agents[NA];
	unsigned handed; /* calls handed to an agent so far (by seq) */
	struct readrelay *r;
	unsigned n_done;
	Ring__ReadTestResult *all; /* a deep copy of the one answer */
	char dir[PATH_MAX], ok[PATH_MAX + 8], file[PATH_MAX + 16];
};

static void fx_done(const Ring__ReadTestResult *all, void *arg)
{
	struct fx *f = arg;

	f->n_done++;
	if (f->all)
		fail_msg("a second answer");
	f->all = frame_copy(&all->base);
	assert_non_null(f->all);
	f->r = NULL; /* frees itself after this returns */
	event_base_loopbreak(f->base);
}

static void agent_send(void *arg, uint64_t id, Ring__Envelope__BodyCase type,
		       void *body)
{
	struct agent *a = arg;
	Ring__Envelope env = RING__ENVELOPE__INIT;

	env.request_id = id;
	env.body_case = type;
	if (type == RING__ENVELOPE__BODY_ERROR)
		env.error = body;
	else if (type == RING__ENVELOPE__BODY_READ_TEST_RESULT)
		env.read_test_result = body;
	else
		fail_msg("agent %s sent body %d", a->node, (int)type);
	for (struct tc_call *c = a->f->tc.calls; c; c = c->next)
		if (c->seq == id) {
			tc_reply(&a->f->tc, c, &env);
			return;
		}
	fail_msg("agent %s answered unknown call %llu", a->node,
		 (unsigned long long)id);
}

static void fx_write(const char *path, size_t bytes)
{
	assert_int_equal(testutil_write_file(path, bytes), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char tmpl[] = "/tmp/readrelayXXXXXX";

	assert_non_null(f);
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, f->dir));
	snprintf(f->ok, sizeof(f->ok), "%s/ok", f->dir);
	snprintf(f->file, sizeof(f->file), "%s/w.bin", f->ok);
	assert_int_equal(mkdir(f->ok, 0700), 0);
	fx_write(f->file, 4u << 20);
	f->base = event_base_new();
	assert_non_null(f->base);
	f->table = nodes_new();
	assert_non_null(f->table);
	for (int i = 0; i < NA + 1; i++) {
		/* n4 is known but never came up. */
		struct node *n =
			nodes_get(f->table, i < NA ? names[i] : "n4", 8);

		assert_non_null(n);
		if (i < NA)
			nodes_mark_up(n, f, "192.168.0.1", "test", 1);
	}
	tc_init(&f->tc, f->table);
	for (int i = 0; i < NA; i++) {
		struct agent *a = &f->agents[i];

		a->f = f;
		a->node = names[i];
		a->conf = calloc(1, sizeof(*a->conf));
		assert_non_null(a->conf);
		agent_conf_defaults(a->conf);
		if (i < 2) {
			snprintf(a->conf->read_paths[0],
				 sizeof(a->conf->read_paths[0]), "%.500s",
				 f->ok);
			a->conf->n_read_paths = 1;
		}
		a->ops = ops_new(f->base, a->conf, agent_send, a);
		assert_non_null(a->ops);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	readrelay_cancel(f->r);
	for (int i = 0; i < NA; i++) {
		ops_free(f->agents[i].ops);
		free(f->agents[i].conf);
	}
	if (f->all)
		ring__read_test_result__free_unpacked(f->all, NULL);
	tc_release(&f->tc);
	nodes_free(f->table);
	event_base_free(f->base);
	testutil_rm_tree(f->dir);
	free(f);
	return 0;
}

static void fx_start(struct fx *f, const char *const *nodes, const int *up,
		     size_t n, const char *path)
{
	f->r = readrelay_new(&f->tc.ci, nodes, up, n, path, 3000000, 10000,
			     fx_done, f);
	assert_non_null(f->r);
	readrelay_go(f->r);
}

/* Hand every new request to its node's real agent, then run the loop
 * until the relay answers (the agents' workers report through it). */
static void fx_serve(struct fx *f)
{
	for (struct tc_call *c = f->tc.calls; c; c = c->next) {
		struct agent *a = NULL;

		if (c->seq <= f->handed)
			continue;
		f->handed = c->seq;
		for (int i = 0; i < NA; i++)
			if (!strcmp(f->agents[i].node, c->node))
				a = &f->agents[i];
		assert_non_null(a);
		c->req->request_id = c->seq;
		assert_int_equal(ops_handle(a->ops, c->req), 1);
	}
	if (!f->all)
		event_base_dispatch(f->base);
}

static const Ring__ReadTestResult *fx_node(const struct fx *f, size_t i,
					   const char *name)
{
	assert_non_null(f->all);
	assert_true(i < f->all->n_nodes);
	assert_string_equal(f->all->nodes[i]->node, name);
	return f->all->nodes[i];
}

/* Every node asked at once; the answer lists them in the order asked,
 * each measured or saying why not, and the request carries the bounds. */
static void test_real_agents(void **state)
{
	static const char *const ask[] = {"n3", "n4", "n1", "n2"};
	static const int up[] = {1, 0, 1, 1};
	struct fx *f = *state;
	const Ring__ReadTestResult *x;
	struct tc_call *c;

	fx_start(f, ask, up, 4, f->file);
	/* n4 is down: nothing is sent to it. */
	assert_int_equal(tc_count(&f->tc, NULL, BODY_READ), 3);
	assert_int_equal(tc_count(&f->tc, "n4", BODY_READ), 0);
	c = tc_get(&f->tc, "n1", BODY_READ, 1);
	assert_string_equal(c->req->read_test_request->path, f->file);
	assert_int_equal(c->req->read_test_request->max_bytes, 3000000);
	assert_int_equal(c->req->read_test_request->max_ms, 10000);
	assert_int_equal(c->timeout_ms, 10000 + READRELAY_SLACK_MS);
	assert_int_equal(f->n_done, 0);
	fx_serve(f);
	assert_int_equal(f->n_done, 1);
	assert_int_equal(tc_pending(&f->tc), 0);
	assert_string_equal(f->all->path, f->file);
	assert_true(f->all->measured_ms > 0);
	assert_int_equal(f->all->n_nodes, 4);
	x = fx_node(f, 0, "n3");
	assert_non_null(strstr(x->error, "read test: read tests are off"));
	assert_int_equal(x->bytes, 0);
	x = fx_node(f, 1, "n4");
	assert_string_equal(x->error, "n4 is not up");
	for (size_t i = 2; i < 4; i++) {
		x = fx_node(f, i, ask[i]);
		assert_string_equal(x->error, "");
		assert_string_equal(x->path, f->file);
		assert_int_equal(x->bytes, 3000000);
		assert_int_equal(x->files, 1);
		assert_true(x->seconds > 0);
		assert_true(fabs(x->gbytes_per_s -
				 (double)x->bytes / x->seconds / 1e9) <
			    1e-9 * x->gbytes_per_s);
		assert_true(x->measured_ms > 0);
		assert_true(x->device[0] != '\0');
	}
}

/* Outside read_path: every agent's refusal, in its words. */
static void test_refused(void **state)
{
	static const int up[] = {1, 1, 1};
	struct fx *f = *state;
	char p[PATH_MAX + 16];

	/* The root's parent: outside by its text. */
	snprintf(p, sizeof(p), "%s/", f->dir);
	fx_start(f, names, up, NA, p);
	fx_serve(f);
	assert_int_equal(f->all->n_nodes, NA);
	for (size_t i = 0; i < 2; i++)
		assert_non_null(strstr(fx_node(f, i, names[i])->error,
				       "is outside read_path"));
	assert_non_null(strstr(fx_node(f, 2, "n3")->error, "read_path"));
}

/* A scripted agent's result: a bad one is refused with the reason, never
 * copied; a good one's rate is recomputed from its figures. */
static int script_result(struct fx *f, const char *node, unsigned nth,
			 const Ring__ReadTestResult *m)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;

	env.body_case = RING__ENVELOPE__BODY_READ_TEST_RESULT;
	env.read_test_result = (Ring__ReadTestResult *)m;
	return tc_reply(&f->tc, tc_get(&f->tc, node, BODY_READ, nth), &env);
}

static void test_untrusted(void **state)
{
	static const char *const six[] = {"n1", "n1", "n1", "n1", "n2", "n3"};
	static const int up[] = {1, 1, 1, 1, 1, 1};
	struct fx *f = *state;
	Ring__ReadTestResult m = RING__READ_TEST_RESULT__INIT;
	Ring__ReadTestResult *nested[1] = {&m};
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__Ack ack = RING__ACK__INIT;
	char big[VALIDATE_MAX_ERROR_TEXT + 1];

	/* Six calls: the first four to n1 are answered in turn. */
	fx_start(f, six, up, 6, "/srv/w");
	assert_int_equal(tc_pending(&f->tc), 6);

	/* Lists nodes of its own. */
	m.path = "/srv/w";
	m.n_nodes = 1;
	m.nodes = nested;
	assert_int_equal(script_result(f, "n1", 1, &m), 1);
	m.n_nodes = 0;
	m.nodes = NULL;
	/* Figures out of range: NaN seconds, then more than 64 GiB. */
	m.seconds = NAN;
	assert_int_equal(script_result(f, "n1", 2, &m), 1);
	m.seconds = 1.0;
	m.bytes = (64ull << 30) + 1;
	assert_int_equal(script_result(f, "n1", 3, &m), 1);
	/* A control character in its error text. */
	m.bytes = 1;
	m.error = "disk\033[2J gone";
	assert_int_equal(script_result(f, "n1", 4, &m), 1);
	/* n2: a claimed rate that its figures do not give (2 GB in 1 s is
	 * 2 GB/s, not 900), and an error text of the largest size kept
	 * whole. A reply of the wrong type first: dropped, as agents.c
	 * drops it. */
	env.body_case = RING__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	assert_int_equal(
		tc_reply(&f->tc, tc_get(&f->tc, "n2", BODY_READ, 1), &env), 0);
	memset(big, 'e', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	m.bytes = 2000000000;
	m.seconds = 1.0;
	m.gbytes_per_s = 900.0;
	m.error = big;
	m.filesystem = "ext4";
	m.device = "259:1";
	m.files = 3;
	m.direct = 1;
	m.stopped_at_time = 1;
	m.measured_ms = 1796000000123ULL;
	assert_int_equal(script_result(f, "n2", 1, &m), 1);
	assert_int_equal(f->n_done, 0); /* n3 still out */
	/* n3: its Error, in its words. */
	assert_int_equal(tc_error(&f->tc, tc_get(&f->tc, "n3", BODY_READ, 1),
				  RING__ERROR_CODE__ERROR_PERMISSION,
				  "read test: /srv/w: No such file"),
			 1);
	assert_int_equal(f->n_done, 1);
	assert_int_equal(f->all->n_nodes, 6);
	assert_string_equal(fx_node(f, 0, "n1")->error,
			    "bad result from the agent: an agent's read "
			    "result lists nodes");
	assert_string_equal(fx_node(f, 1, "n1")->error,
			    "bad result from the agent: read figures out of "
			    "range");
	assert_string_equal(fx_node(f, 2, "n1")->error,
			    "bad result from the agent: read figures out of "
			    "range");
	assert_int_equal(fx_node(f, 2, "n1")->bytes, 0); /* not copied */
	assert_string_equal(fx_node(f, 3, "n1")->error,
			    "bad result from the agent: bad text in a read "
			    "result");
	{
		const Ring__ReadTestResult *x = fx_node(f, 4, "n2");

		assert_true(x->gbytes_per_s == 2.0);
		assert_int_equal(strlen(x->error), VALIDATE_MAX_ERROR_TEXT);
		assert_string_equal(x->filesystem, "ext4");
		assert_string_equal(x->device, "259:1");
		assert_string_equal(x->path, "/srv/w");
		assert_int_equal(x->files, 3);
		assert_int_equal(x->direct, 1);
		assert_int_equal(x->stopped_at_time, 1);
		assert_int_equal(x->measured_ms, 1796000000123ULL);
	}
	assert_string_equal(fx_node(f, 5, "n3")->error,
			    "read test: /srv/w: No such file");
}

/* The session layer's failures: a deadline, a lost session, a node up
 * in the relay's list but gone by the time it sends. */
static void test_failures(void **state)
{
	static const int up[] = {1, 1, 1};
	struct fx *f = *state;

	/* n3 left the table after the caller looked: the send fails. */
	nodes_mark_down(nodes_find(f->table, "n3"), "gone", 2);
	fx_start(f, names, up, NA, "/srv/w");
	assert_int_equal(f->tc.refused, 1);
	assert_int_equal(tc_pending(&f->tc), 2);
	tc_fail(tc_get(&f->tc, "n1", BODY_READ, 1), -ETIMEDOUT);
	assert_int_equal(f->n_done, 0);
	tc_node_down(&f->tc, "n2");
	assert_int_equal(f->n_done, 1);
	assert_string_equal(fx_node(f, 0, "n1")->error, "no answer: timed out");
	assert_string_equal(fx_node(f, 1, "n2")->error,
			    "no answer: Connection reset by peer");
	assert_string_equal(fx_node(f, 2, "n3")->error, "not sent: not up");
}

/* Nothing could be sent (or nothing was asked): the answer comes from
 * within readrelay_go, and the relay is gone when it returns. */
static void test_all_at_once(void **state)
{
	static const int down[] = {0, 0, 0};
	static const int up[] = {1, 1, 1};
	struct fx *f = *state;

	fx_start(f, names, down, NA, "/srv/w");
	assert_int_equal(f->n_done, 1);
	assert_int_equal(f->tc.n_calls, 0);
	assert_string_equal(fx_node(f, 2, "n3")->error, "n3 is not up");
	ring__read_test_result__free_unpacked(f->all, NULL);
	f->all = NULL;

	f->tc.refuse_all = 1; /* every connection failing */
	fx_start(f, names, up, NA, "/srv/w");
	assert_int_equal(f->n_done, 2);
	assert_int_equal(f->all->n_nodes, NA);
	for (size_t i = 0; i < NA; i++)
		assert_string_equal(fx_node(f, i, names[i])->error,
				    "not sent: not up");
	ring__read_test_result__free_unpacked(f->all, NULL);
	f->all = NULL;

	fx_start(f, NULL, NULL, 0, "/srv/w");
	assert_int_equal(f->n_done, 3);
	assert_int_equal(f->all->n_nodes, 0);
	assert_string_equal(f->all->path, "/srv/w");
}

/* The client went away: every pending call is cancelled, no answer, and
 * what the agents send later is dropped. */
static void test_cancel(void **state)
{
	static const int up[] = {1, 1, 1};
	struct fx *f = *state;

	readrelay_cancel(NULL);
	fx_start(f, names, up, NA, f->file);
	tc_error(&f->tc, tc_get(&f->tc, "n3", BODY_READ, 1),
		 RING__ERROR_CODE__ERROR_PERMISSION, "no");
	assert_int_equal(tc_pending(&f->tc), 2);
	readrelay_cancel(f->r);
	f->r = NULL;
	assert_int_equal(tc_pending(&f->tc), 0);
	assert_int_equal(tc_error(&f->tc, tc_get(&f->tc, "n1", BODY_READ, 1),
				  RING__ERROR_CODE__ERROR_PERMISSION, "late"),
			 0);
	assert_int_equal(f->tc.dropped, 1);
	assert_int_equal(f->n_done, 0);
}

/* Bounds: the asked path up to 4095 bytes travels whole; a node name is
 * a node name (63 bytes at most: cfg_valid_node_name). */
static void test_bounds(void **state)
{
	static const int up[] = {1};
	struct fx *f = *state;
	char *path = malloc(4096);
	const char *one[1];
	char name[64];

	assert_non_null(path);
	memset(path, 'p', 4095);
	path[0] = '/';
	path[4095] = '\0';
	memset(name, 'n', 63);
	name[63] = '\0';
	assert_non_null(nodes_get(f->table, name, 8));
	nodes_mark_up(nodes_find(f->table, name), f, "192.168.0.9", "test", 1);
	one[0] = name;
	fx_start(f, one, up, 1, path);
	assert_string_equal(tc_get(&f->tc, name, BODY_READ, 1)
				    ->req->read_test_request->path,
			    path);
	/* An agent's Error may be as long as any string (validate_message);
	 * its text is kept to an error text's size. */
	memset(path + 1, 'x', 4094);
	tc_error(&f->tc, tc_get(&f->tc, name, BODY_READ, 1),
		 RING__ERROR_CODE__ERROR_PERMISSION, path);
	assert_int_equal(strlen(fx_node(f, 0, name)->error),
			 VALIDATE_MAX_ERROR_TEXT);
	assert_memory_equal(fx_node(f, 0, name)->error, path,
			    VALIDATE_MAX_ERROR_TEXT);
	memset(path + 1, 'p', 4094);
	assert_string_equal(f->all->path, path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_real_agents, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_at_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
