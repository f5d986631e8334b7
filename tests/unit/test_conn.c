/* conn: framed sessions over real sockets and a real libevent loop. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conn.h"
#include "log.h"

struct side {
	struct conn *c;
	Ring__Envelope *last;
	int n_msgs;
	int closed_err;
	int closed;
	int free_in_cb;
};

static void on_msg(struct conn *c, Ring__Envelope *env, void *arg)
{
	struct side *s = arg;

	frame_free(s->last);
	s->last = env;
	s->n_msgs++;
	if (s->free_in_cb) {
		conn_free(c);
		s->c = NULL;
	}
}

static void on_close(struct conn *c, int err, const char *reason, void *arg)
{
	struct side *s = arg;

	(void)reason;
	s->closed = 1;
	s->closed_err = err;
	conn_free(c);
	s->c = NULL;
}

struct fixture {
	struct event_base *base;
	int raw; /* the far end of the socketpair for raw writes */
	struct side a;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int sv[2];
	struct bufferevent *bev;

	assert_non_null(f);
	f->base = event_base_new();
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	evutil_make_socket_nonblocking(sv[0]);
	bev = bufferevent_socket_new(f->base, sv[0], BEV_OPT_CLOSE_ON_FREE);
	f->a.c = conn_new(bev, "test", 4096, on_msg, on_close, &f->a);
	assert_non_null(f->a.c);
	f->raw = sv[1];
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	conn_free(f->a.c);
	frame_free(f->a.last);
	close(f->raw);
	event_base_free(f->base);
	free(f);
	return 0;
}

/* Run the loop until cond holds or 2 s pass. */
#define LOOP_UNTIL(f, cond)                                                    \
	do {                                                                   \
		for (int i_ = 0; i_ < 200 && !(cond); i_++) {                  \
			struct timeval tv_ = {0, 10000};                       \
			event_base_loopexit((f)->base, &tv_);                  \
			event_base_dispatch((f)->base);                        \
		}                                                              \
	} while (0)

static void make_hello(Ring__Envelope *env, Ring__Hello *h, uint64_t id)
{
	ring__envelope__init(env);
	ring__hello__init(h);
	h->node = "n1";
	h->agent_version = "9.9";
	env->request_id = id;
	env->body_case = RING__ENVELOPE__BODY_HELLO;
	env->hello = h;
}

static void raw_write(int fd, const void *p, size_t n)
{
	assert_int_equal(write(fd, p, n), (ssize_t)n);
}

static void test_frame_in_one_byte_pieces(void **state)
{
	struct fixture *f = *state;
	Ring__Envelope env;
	Ring__Hello h;
	uint8_t *buf;
	size_t len;

	make_hello(&env, &h, 42);
	assert_int_equal(frame_encode(&env, &buf, &len), 0);
	for (size_t i = 0; i < len; i++) {
		raw_write(f->raw, buf + i, 1);
		LOOP_UNTIL(f, 1);
		if (i + 1 < len)
			assert_int_equal(f->a.n_msgs, 0);
	}
	LOOP_UNTIL(f, f->a.n_msgs == 1);
	assert_int_equal(f->a.n_msgs, 1);
	assert_int_equal(f->a.last->request_id, 42);
	assert_string_equal(f->a.last->hello->node, "n1");
	assert_false(f->a.closed);
	free(buf);
}

/* Two hello frames with request id id, in one write. */
static void write_two_hellos(struct fixture *f, uint64_t id)
{
	Ring__Envelope env;
	Ring__Hello h;
	uint8_t *buf, two[512];
	size_t len;

	make_hello(&env, &h, id);
	assert_int_equal(frame_encode(&env, &buf, &len), 0);
	memcpy(two, buf, len);
	memcpy(two + len, buf, len);
	raw_write(f->raw, two, 2 * len);
	free(buf);
}

static void test_two_frames_in_one_write(void **state)
{
	struct fixture *f = *state;

	write_two_hellos(f, 7);
	LOOP_UNTIL(f, f->a.n_msgs == 2);
	assert_int_equal(f->a.n_msgs, 2);
}

static void test_bad_magic_closes(void **state)
{
	struct fixture *f = *state;
	uint8_t hdr[FRAME_HEADER_LEN];

	frame_header_encode(hdr, RING__ENVELOPE__BODY_HELLO, 0);
	hdr[0] = 'X';
	raw_write(f->raw, hdr, sizeof(hdr));
	LOOP_UNTIL(f, f->a.closed);
	assert_true(f->a.closed);
	assert_int_equal(f->a.closed_err, -EPROTO);
	assert_int_equal(f->a.n_msgs, 0);
}

static void test_oversize_refused_before_payload(void **state)
{
	struct fixture *f = *state;
	uint8_t hdr[FRAME_HEADER_LEN];

	/* Only the header is sent: the refusal must not wait for 4097 bytes. */
	frame_header_encode(hdr, RING__ENVELOPE__BODY_HELLO, 4097);
	raw_write(f->raw, hdr, sizeof(hdr));
	LOOP_UNTIL(f, f->a.closed);
	assert_true(f->a.closed);
	assert_int_equal(f->a.closed_err, -EPROTO);
}

static void test_bad_version_closes(void **state)
{
	struct fixture *f = *state;
	uint8_t hdr[FRAME_HEADER_LEN];

	frame_header_encode(hdr, RING__ENVELOPE__BODY_HELLO, 0);
	hdr[5] = 2;
	raw_write(f->raw, hdr, sizeof(hdr));
	LOOP_UNTIL(f, f->a.closed);
	assert_int_equal(f->a.closed_err, -EPROTO);
}

static void test_garbage_payload_closes(void **state)
{
	struct fixture *f = *state;
	uint8_t fr[FRAME_HEADER_LEN + 4] = {0};

	frame_header_encode(fr, RING__ENVELOPE__BODY_HELLO, 4);
	memset(fr + FRAME_HEADER_LEN, 0xff, 4);
	raw_write(f->raw, fr, sizeof(fr));
	LOOP_UNTIL(f, f->a.closed);
	assert_int_equal(f->a.closed_err, -EPROTO);
	assert_int_equal(f->a.n_msgs, 0);
}

/* A newer peer's request type: answered UNSUPPORTED, session kept. */
static void test_unknown_type_answered(void **state)
{
	struct fixture *f = *state;
	Ring__Envelope env, *rep = NULL;
	Ring__Hello h;
	uint8_t *buf;
	size_t len;

	make_hello(&env, &h, 99);
	assert_int_equal(frame_encode(&env, &buf, &len), 0);
	/* Same payload, type rewritten to one this version does not know. */
	buf[6] = 0;
	buf[7] = 200;
	raw_write(f->raw, buf, len);
	/* Nothing is answered before the loop runs. */
	assert_int_equal(frame_read_fd(f->raw, 4096, 50, &rep), -ETIMEDOUT);
	LOOP_UNTIL(f, 0);
	assert_int_equal(frame_read_fd(f->raw, 4096, 2000, &rep), 0);
	assert_int_equal(rep->body_case, RING__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->request_id, 99);
	assert_int_equal(rep->error->code, RING__ERROR_CODE__ERROR_UNSUPPORTED);
	frame_free(rep);
	assert_false(f->a.closed);
	/* And the session still works. */
	buf[7] = RING__ENVELOPE__BODY_HELLO;
	raw_write(f->raw, buf, len);
	LOOP_UNTIL(f, f->a.n_msgs == 1);
	assert_int_equal(f->a.n_msgs, 1);
	free(buf);
}

static void test_free_inside_callback(void **state)
{
	struct fixture *f = *state;

	f->a.free_in_cb = 1;
	write_two_hellos(f, 1);
	LOOP_UNTIL(f, f->a.n_msgs >= 1);
	LOOP_UNTIL(f, 0);
	/* Freed after the first: the second frame is never delivered. */
	assert_int_equal(f->a.n_msgs, 1);
	assert_null(f->a.c);
}

static void test_send_and_close_after_flush(void **state)
{
	struct fixture *f = *state;
	Ring__Envelope *rep = NULL;

	assert_int_equal(conn_send_error(f->a.c, 5,
					 RING__ERROR_CODE__ERROR_PERMISSION,
					 "go away %d", 1),
			 0);
	conn_close_after_flush(f->a.c, "refused");
	LOOP_UNTIL(f, f->a.closed);
	assert_true(f->a.closed);
	assert_int_equal(f->a.closed_err, -ECANCELED);
	assert_int_equal(frame_read_fd(f->raw, 4096, 2000, &rep), 0);
	assert_int_equal(rep->request_id, 5);
	assert_string_equal(rep->error->text, "go away 1");
	frame_free(rep);
}

static void test_read_timeout(void **state)
{
	struct fixture *f = *state;

	conn_set_read_timeout(f->a.c, 50);
	LOOP_UNTIL(f, f->a.closed);
	assert_true(f->a.closed);
	assert_int_equal(f->a.closed_err, -ETIMEDOUT);
}

static void test_peer_eof(void **state)
{
	struct fixture *f = *state;
	uint8_t hdr[5] = {'R', 'I', 'N', 'G', 0};

	/* EOF in the middle of a header. */
	raw_write(f->raw, hdr, sizeof(hdr));
	shutdown(f->raw, SHUT_WR);
	LOOP_UNTIL(f, f->a.closed);
	assert_int_equal(f->a.closed_err, -ECONNRESET);
	assert_int_equal(f->a.n_msgs, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_frame_in_one_byte_pieces,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_frames_in_one_write,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_magic_closes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_oversize_refused_before_payload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_version_closes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_garbage_payload_closes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_type_answered,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_inside_callback,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_and_close_after_flush,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_timeout, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_peer_eof, setup, teardown),
	};

	log_init("test_conn", NULL, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
