/* control: the ringctl socket served from a real node table and a real
 * survey (its agents reached through a call interface with no sessions),
 * over a Unix socket in a temporary directory: every request gets exactly
 * one reply, with the refusals ringctl shows. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>

#include "coordinator/alerts.h"
#include "clock.h"
#include "coordinator/control.h"
#include "frame.h"
#include "log.h"
#include "testsock.h"

struct fixture {
	struct testsock_coord c;
	char dir[64];
	struct survey *survey;
	struct control *ctl;
};

/* No agent is ever reachable: the survey's calls fail at once. */
static struct call *no_start(void *ctx, const char *node, Ring__Envelope *req,
			     unsigned timeout_ms,
			     Ring__Envelope__BodyCase interim,
			     Ring__Envelope__BodyCase final, call_reply_cb cb,
			     void *arg)
{
	(void)ctx, (void)node, (void)req, (void)timeout_ms, (void)interim;
	(void) final, (void)cb, (void)arg;
	errno = ENOTCONN;
	return NULL;
}

static void no_cancel(void *ctx, struct call *c)
{
	(void)ctx, (void)c;
}

static const struct call_iface no_calls = {no_start, no_cancel, NULL};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct coord_conf *conf;
	struct node *n;

	assert_non_null(f);
	testsock_coord_open(&f->c, "test_control");
	conf = &f->c.conf;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_control.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(conf->control_socket, sizeof(conf->control_socket),
		 "%s/c.sock", f->dir);
	snprintf(conf->control_group, sizeof(conf->control_group), "root");
	n = nodes_get(f->c.nodes, "n1", 8);
	n->expected = 1;
	nodes_get(f->c.nodes, "n2", 8);
	f->survey = survey_new(f->c.base, conf, f->c.nodes, &no_calls);
	f->ctl = control_new(f->c.base, conf, f->c.nodes, f->survey);
	assert_non_null(f->ctl);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	control_free(f->ctl);
	survey_free(f->survey);
	testsock_coord_close(&f->c);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void spin(struct fixture *f)
{
	testsock_spin(f->c.base);
}

static int client(struct fixture *f)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(strlen(f->c.conf.control_socket) < sizeof(sun.sun_path));
	memcpy(sun.sun_path, f->c.conf.control_socket,
	       strlen(f->c.conf.control_socket) + 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	spin(f); /* accepted */
	return fd;
}

/* Send one request, get its one reply (NULL if the socket closed). */
static Ring__Envelope *ask(struct fixture *f, int fd,
			   Ring__Envelope__BodyCase type, void *body)
{
	Ring__Envelope *rep = NULL;

	testsock_send(fd, 42, type, body);
	spin(f);
	if (frame_read_fd(fd, FRAME_MAX_DEFAULT, 1000, &rep) < 0)
		return NULL;
	assert_true(rep->request_id == 42);
	return rep;
}

/* The same for a reply larger than the socket holds: read while the
 * loop writes. */
static Ring__Envelope *ask_big(struct fixture *f, int fd,
			       Ring__Envelope__BodyCase type, void *body)
{
	size_t cap = 4u << 20, got = 0, want = 0;
	uint8_t *buf = malloc(cap);
	struct frame_header h;
	Ring__Envelope *rep = NULL;
	ssize_t n;

	assert_non_null(buf);
	testsock_send(fd, 42, type, body);
	for (int i = 0; i < 20000 && (!want || got < want); i++) {
		spin(f);
		n = recv(fd, buf + got, cap - got, MSG_DONTWAIT);
		if (n > 0)
			got += (size_t)n;
		if (!want && got >= FRAME_HEADER_LEN) {
			assert_int_equal(
				frame_header_decode(buf, (uint32_t)cap, &h), 0);
			want = FRAME_HEADER_LEN + h.length;
		}
	}
	if (want && got >= want)
		rep = ring__envelope__unpack(NULL, want - FRAME_HEADER_LEN,
					     buf + FRAME_HEADER_LEN);
	free(buf);
	return rep;
}

static void expect_error(Ring__Envelope *rep, int code, const char *text)
{
	assert_non_null(rep);
	assert_int_equal(rep->body_case, RING__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->error->code, code);
	if (!strstr(rep->error->text, text))
		fail_msg("'%s' not in '%s'", text, rep->error->text);
	frame_free(rep);
}

static void test_status(void **state)
{
	struct fixture *f = *state;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	int fd = client(f);
	Ring__Envelope *rep =
		ask(f, fd, RING__ENVELOPE__BODY_STATUS_REQUEST, &sr);

	assert_non_null(rep);
	assert_int_equal(rep->body_case, RING__ENVELOPE__BODY_STATUS_REPLY);
	assert_int_equal(rep->status_reply->n_nodes, 2);
	assert_int_equal(rep->status_reply->n_expected, 1);
	assert_int_equal(rep->status_reply->n_connected, 0);
	assert_string_equal(rep->status_reply->nodes[0]->node, "n1");
	assert_string_equal(rep->status_reply->nodes[0]->state, "never");
	assert_null(rep->status_reply->topology);
	assert_string_equal(rep->status_reply->survey_state, "never");
	frame_free(rep);
	/* The connection serves another request. */
	rep = ask(f, fd, RING__ENVELOPE__BODY_STATUS_REQUEST, &sr);
	assert_non_null(rep);
	frame_free(rep);
	close(fd);
	spin(f);
}

/* A status of thousands of nodes is megabytes: a client that reads it
 * slowly (a busy host) past the request deadline still gets all of it. */
static void test_slow_reader_gets_the_whole_reply(void **state)
{
	struct fixture *f = *state;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	struct timeval six = {6, 0};
	size_t cap = 8u << 20, got = 0, want = 0;
	uint8_t *buf = malloc(cap);
	struct frame_header h;
	Ring__Envelope *rep;
	char name[48];
	int fd;
	ssize_t n;

	assert_non_null(buf);
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "node-with-a-long-name-%05d", i);
		assert_non_null(nodes_get(f->c.nodes, name, 30000));
	}
	fd = client(f);
	testsock_send(fd, 42, RING__ENVELOPE__BODY_STATUS_REQUEST, &sr);
	spin(f);
	/* Nothing read for longer than the request deadline (5 s). */
	event_base_loopexit(f->c.base, &six);
	event_base_dispatch(f->c.base);
	for (int i = 0; i < 20000 && (!want || got < want); i++) {
		spin(f);
		n = recv(fd, buf + got, cap - got, MSG_DONTWAIT);
		if (n > 0)
			got += (size_t)n;
		if (!want && got >= FRAME_HEADER_LEN) {
			assert_int_equal(
				frame_header_decode(buf, (uint32_t)cap, &h), 0);
			want = FRAME_HEADER_LEN + h.length;
		}
	}
	assert_true(want > (512u << 10)); /* more than a socket holds */
	assert_true(got >= want);
	rep = ring__envelope__unpack(NULL, want - FRAME_HEADER_LEN,
				     buf + FRAME_HEADER_LEN);
	assert_non_null(rep);
	assert_int_equal(rep->status_reply->n_nodes, 20002);
	frame_free(rep);
	free(buf);
	close(fd);
	spin(f);
}

static void test_refusals(void **state)
{
	struct fixture *f = *state;
	Ring__InventoryRequest ir = RING__INVENTORY_REQUEST__INIT;
	Ring__ForgetRequest fr = RING__FORGET_REQUEST__INIT;
	Ring__RanksRequest rr = RING__RANKS_REQUEST__INIT;
	Ring__SurveyRequest sv = RING__SURVEY_REQUEST__INIT;
	Ring__TestRequest tr = RING__TEST_REQUEST__INIT;
	Ring__TestParams tp = RING__TEST_PARAMS__INIT;
	Ring__Heartbeat hb = RING__HEARTBEAT__INIT;
	int fd = client(f);

	ir.node = "n9";
	expect_error(ask(f, fd, RING__ENVELOPE__BODY_INVENTORY_REQUEST, &ir),
		     RING__ERROR_CODE__ERROR_NOT_FOUND, "unknown node 'n9'");
	fr.node = "n1";
	expect_error(ask(f, fd, RING__ENVELOPE__BODY_FORGET_REQUEST, &fr),
		     RING__ERROR_CODE__ERROR_BAD_REQUEST, "expect list");
	fr.node = "n9";
	expect_error(ask(f, fd, RING__ENVELOPE__BODY_FORGET_REQUEST, &fr),
		     RING__ERROR_CODE__ERROR_NOT_FOUND, "unknown node");
	expect_error(ask(f, fd, RING__ENVELOPE__BODY_RANKS_REQUEST, &rr),
		     RING__ERROR_CODE__ERROR_NOT_FOUND,
		     "no survey has completed yet");
	expect_error(ask(f, fd, RING__ENVELOPE__BODY_SURVEY_REQUEST, &sv),
		     RING__ERROR_CODE__ERROR_BAD_REQUEST,
		     "fewer than two nodes are up");
	tr.a = "n1";
	tr.b = "n2";
	tr.params = &tp;
	tp.kind = RING__TEST_KIND__TEST_TCP_BW;
	expect_error(ask(f, fd, RING__ENVELOPE__BODY_TEST_REQUEST, &tr),
		     RING__ERROR_CODE__ERROR_NOT_FOUND, "n1 is not up");
	expect_error(ask(f, fd, RING__ENVELOPE__BODY_HEARTBEAT, &hb),
		     RING__ERROR_CODE__ERROR_BAD_REQUEST,
		     "is not a control request");
	/* The one that may go: a node never seen, not expected. */
	fr.node = "n2";
	{
		Ring__Envelope *rep =
			ask(f, fd, RING__ENVELOPE__BODY_FORGET_REQUEST, &fr);

		assert_non_null(rep);
		assert_int_equal(rep->body_case, RING__ENVELOPE__BODY_ACK);
		frame_free(rep);
	}
	assert_null(nodes_find(f->c.nodes, "n2"));
	close(fd);
	spin(f);
}

static void test_oversized_frame_closes(void **state)
{
	struct fixture *f = *state;
	uint8_t hdr[FRAME_HEADER_LEN];
	Ring__Envelope *rep = NULL;
	int fd = client(f);

	/* A header announcing more than a control request ever needs. */
	frame_header_encode(hdr, RING__ENVELOPE__BODY_STATUS_REQUEST, 1u << 20);
	assert_int_equal(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	spin(f);
	assert_true(frame_read_fd(fd, FRAME_MAX_DEFAULT, 1000, &rep) < 0);
	close(fd);
	spin(f);
}

/* A view with a table of alerts and a store of episodes: n_ep episodes
 * of one key, resolved 1 s apart, the newest now. */
struct ep_view {
	struct alerts *t;
	size_t n_ep;
	uint64_t now;
	uint64_t asked_since;
	int fail; /* the store fails */
};

static size_t ev_alerts(void *arg, int all, const struct alert **out,
			size_t max)
{
	return alerts_list(((struct ep_view *)arg)->t, all, out, max);
}

static int ev_episodes(void *arg, uint64_t since_ms, size_t max,
		       int (*fn)(const struct alert *a, void *fnarg),
		       void *fnarg)
{
	struct ep_view *v = arg;
	size_t given = 0;

	v->asked_since = since_ms;
	if (v->fail) {
		errno = EIO;
		return -1;
	}
	for (size_t i = 0; i < v->n_ep && given < max; i++) {
		struct alert a = {.rule = "ring_broken",
				  .subject = "ring",
				  .severity = ALERT_CRITICAL,
				  .message = "the ring is broken"};
		int rc;

		a.resolved_ms = v->now - 1000 * i;
		a.cleared_ms = a.resolved_ms - 3000;
		a.first_seen_ms = a.resolved_ms - 10000;
		snprintf(a.resolved_message, sizeof(a.resolved_message),
			 "whole again (%zu)", i);
		if (a.resolved_ms < since_ms)
			break;
		given++;
		rc = fn(&a, fnarg);
		if (rc)
			return rc;
	}
	return 0;
}

/* alerts --all: the firing ones, then every episode since since_ms,
 * newest first; bounded, with truncated; the default cut is a week. */
static void test_alerts_episodes(void **state)
{
	struct fixture *f = *state;
	struct alerts_conf ac = {.hold_down_ms = 0,
				 .max_resolved = 16,
				 .keep_resolved_ms = 3600000,
				 .max_firing = 16};
	struct ep_view v = {.now = clock_now_ms(), .n_ep = 3};
	struct control_view view = {
		.alerts = ev_alerts, .episodes = ev_episodes, .arg = &v};
	Ring__AlertsRequest ar = RING__ALERTS_REQUEST__INIT;
	Ring__Envelope *rep;
	int fd;

	v.t = alerts_new(&ac, NULL, NULL);
	assert_non_null(v.t);
	assert_int_equal(alerts_raise(v.t, "cable_down", "n1-n2", NULL, "n1-n2",
				      ALERT_CRITICAL, "n1-n2 down", v.now),
			 0);
	control_set_view(f->ctl, &view);
	fd = client(f);

	/* Without all: the firing one alone. */
	rep = ask(f, fd, RING__ENVELOPE__BODY_ALERTS_REQUEST, &ar);
	assert_non_null(rep);
	assert_int_equal(rep->alerts_reply->n_alerts, 1);
	assert_false(rep->alerts_reply->truncated);
	frame_free(rep);

	ar.all = 1;
	rep = ask(f, fd, RING__ENVELOPE__BODY_ALERTS_REQUEST, &ar);
	assert_non_null(rep);
	assert_int_equal(rep->alerts_reply->n_alerts, 4);
	assert_true(rep->alerts_reply->alerts[0]->firing);
	assert_string_equal(rep->alerts_reply->alerts[1]->resolved_message,
			    "whole again (0)");
	assert_int_equal(rep->alerts_reply->alerts[3]->resolved_ms,
			 v.now - 2000);
	assert_int_equal(rep->alerts_reply->alerts[3]->cleared_ms,
			 v.now - 5000);
	/* The default: a week back. */
	assert_true(v.asked_since + 7ull * 86400000 >= v.now - 1000 &&
		    v.asked_since + 7ull * 86400000 <= clock_now_ms());
	assert_int_equal(rep->alerts_reply->since_ms, v.asked_since);
	assert_false(rep->alerts_reply->truncated);
	frame_free(rep);

	/* since: what resolved at or after it. */
	ar.since_ms = v.now - 1500;
	rep = ask(f, fd, RING__ENVELOPE__BODY_ALERTS_REQUEST, &ar);
	assert_non_null(rep);
	assert_int_equal(rep->alerts_reply->n_alerts, 1 + 2);
	assert_int_equal(v.asked_since, v.now - 1500);
	frame_free(rep);

	/* More than one reply holds: the newest 1000, truncated. */
	ar.since_ms = 1;
	v.n_ep = 5000;
	rep = ask_big(f, fd, RING__ENVELOPE__BODY_ALERTS_REQUEST, &ar);
	assert_non_null(rep);
	assert_int_equal(rep->alerts_reply->n_alerts, 1 + 1000);
	assert_true(rep->alerts_reply->truncated);
	assert_string_equal(rep->alerts_reply->alerts[1000]->resolved_message,
			    "whole again (999)");
	frame_free(rep);
	/* A store that fails is said, not shown as no episodes. */
	v.fail = 1;
	rep = ask(f, fd, RING__ENVELOPE__BODY_ALERTS_REQUEST, &ar);
	expect_error(rep, RING__ERROR_CODE__ERROR_INTERNAL,
		     "could not be read");
	close(fd);
	spin(f);
	control_set_view(f->ctl, NULL);
	alerts_free(v.t);
}

/* A history view: edge n1-n2 in the topology with samples at 1000, 2000,
 * 3000 (newest first, as the store reads them); an edge that left the
 * topology, n3-n4, has one sample in the store. */
struct hist_view {
	Ring__Topology *t;
	char asked[ALERTS_EDGE_LEN];
};

static const Ring__Topology *hv_topology(void *arg)
{
	return ((struct hist_view *)arg)->t;
}

static int hv_history(void *arg, const char *edge, uint64_t since_ms,
		      uint64_t before_ms, uint64_t before_id, size_t max,
		      int (*fn)(const struct store_sample *v, void *fnarg),
		      void *fnarg)
{
	struct hist_view *v = arg;
	int n = !strcmp(edge, "n1-n2") ? 3 : !strcmp(edge, "n3-n4") ? 1 : 0;

	(void)since_ms, (void)before_id;
	snprintf(v->asked, sizeof(v->asked), "%s", edge);
	for (int i = n; i >= 1 && max; i--) {
		struct store_sample s = {.ts_ms = 1000u * (unsigned)i,
					 .id = (uint64_t)i,
					 .param = 8,
					 .value = 10.0 * i};

		if (before_ms && s.ts_ms >= before_ms)
			continue;
		snprintf(s.kind, sizeof(s.kind), "tcp_bw");
		snprintf(s.direction, sizeof(s.direction), "a_to_b");
		if (fn(&s, fnarg))
			break;
		max--;
	}
	return 0;
}

/* history: the edge named either way round, oldest first within a page,
 * pages by cursor; an edge gone from the topology keeps its history;
 * bad names refused with the value, unknown ones not found. */
static void test_history(void **state)
{
	struct fixture *f = *state;
	Ring__Topology t = RING__TOPOLOGY__INIT;
	Ring__Edge e = RING__EDGE__INIT, *ep = &e;
	struct hist_view v = {.t = &t};
	struct control_view view = {
		.topology = hv_topology, .history = hv_history, .arg = &v};
	Ring__HistoryRequest hr = RING__HISTORY_REQUEST__INIT;
	Ring__HistoryReply *h;
	Ring__Envelope *rep;
	int fd = client(f);

	/* Without a history: said so. */
	hr.edge = "n1-n2";
	rep = ask(f, fd, RING__ENVELOPE__BODY_HISTORY_REQUEST, &hr);
	expect_error(rep, RING__ERROR_CODE__ERROR_NOT_FOUND, "no history");

	e.a = "n1";
	e.b = "n2";
	e.a_interface = "eth2";
	e.b_interface = "eth1";
	t.kind = "pair";
	t.edges = &ep;
	t.n_edges = 1;
	control_set_view(f->ctl, &view);
	hr.edge = "n2-n1";
	rep = ask(f, fd, RING__ENVELOPE__BODY_HISTORY_REQUEST, &hr);
	assert_non_null(rep);
	assert_int_equal(rep->body_case, RING__ENVELOPE__BODY_HISTORY_REPLY);
	h = rep->history_reply;
	assert_string_equal(h->edge, "n1-n2");
	assert_string_equal(v.asked, "n1-n2");
	assert_int_equal(h->n_samples, 3);
	assert_int_equal(h->samples[0]->ts_ms, 1000);
	assert_int_equal(h->samples[2]->ts_ms, 3000);
	assert_string_equal(h->samples[2]->kind, "tcp_bw");
	assert_false(h->truncated);
	frame_free(rep);

	/* A page of two: the newest two, and the cursor to the rest. */
	hr.max_samples = 2;
	rep = ask(f, fd, RING__ENVELOPE__BODY_HISTORY_REQUEST, &hr);
	assert_non_null(rep);
	h = rep->history_reply;
	assert_int_equal(h->n_samples, 2);
	assert_int_equal(h->samples[0]->ts_ms, 2000);
	assert_true(h->truncated);
	assert_int_equal(h->next_before_ms, 2000);
	assert_int_equal(h->next_before_id, 2);
	hr.before_ms = h->next_before_ms;
	hr.before_id = h->next_before_id;
	frame_free(rep);
	rep = ask(f, fd, RING__ENVELOPE__BODY_HISTORY_REQUEST, &hr);
	assert_non_null(rep);
	assert_int_equal(rep->history_reply->n_samples, 1);
	assert_int_equal(rep->history_reply->samples[0]->ts_ms, 1000);
	assert_false(rep->history_reply->truncated);
	frame_free(rep);
	hr.max_samples = 0;
	hr.before_ms = hr.before_id = 0;

	/* Gone from the topology, asked the other way round. */
	hr.edge = "n4-n3";
	rep = ask(f, fd, RING__ENVELOPE__BODY_HISTORY_REQUEST, &hr);
	assert_non_null(rep);
	assert_string_equal(rep->history_reply->edge, "n3-n4");
	assert_int_equal(rep->history_reply->n_samples, 1);
	frame_free(rep);

	hr.edge = "n5-n6";
	rep = ask(f, fd, RING__ENVELOPE__BODY_HISTORY_REQUEST, &hr);
	expect_error(rep, RING__ERROR_CODE__ERROR_NOT_FOUND, "'n5-n6'");
	hr.edge = "n1n2";
	rep = ask(f, fd, RING__ENVELOPE__BODY_HISTORY_REQUEST, &hr);
	expect_error(rep, RING__ERROR_CODE__ERROR_BAD_REQUEST, "not 'n1n2'");
	hr.edge = "n1-\x1bn2";
	rep = ask(f, fd, RING__ENVELOPE__BODY_HISTORY_REQUEST, &hr);
	expect_error(rep, RING__ERROR_CODE__ERROR_BAD_REQUEST,
		     "no control characters");
	close(fd);
	spin(f);
	control_set_view(f->ctl, NULL);
}

/* watch without a feed: one refusal, and the connection serves on. */
static void test_watch_without_feed(void **state)
{
	struct fixture *f = *state;
	Ring__WatchRequest wr = RING__WATCH_REQUEST__INIT;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	int fd = client(f);
	Ring__Envelope *rep =
		ask(f, fd, RING__ENVELOPE__BODY_WATCH_REQUEST, &wr);

	expect_error(rep, RING__ERROR_CODE__ERROR_UNSUPPORTED, "no event feed");
	rep = ask(f, fd, RING__ENVELOPE__BODY_STATUS_REQUEST, &sr);
	assert_non_null(rep);
	assert_int_equal(rep->body_case, RING__ENVELOPE__BODY_STATUS_REPLY);
	frame_free(rep);
	close(fd);
	spin(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_status, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_slow_reader_gets_the_whole_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alerts_episodes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_oversized_frame_closes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_without_feed, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
