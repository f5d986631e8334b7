/* The ring all-reduce engine (agent/allreduce.c): chunk arithmetic, the
 * values and their check, and whole rings of n ranks as threads over
 * socketpairs, with chunks larger than the socket buffers (a ring that
 * sends before it receives would deadlock there), and a rank that
 * vanishes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/allreduce.h"
#include "frame.h"
#include "agent/ops.h"

#define T_MAX 8

static void test_chunks(void **state)
{
	(void)state;
	for (uint64_t count = 1; count < 200; count += 7)
		for (unsigned n = 1; n <= T_MAX; n++) {
			uint64_t next = 0, off, len, min = count, max = 0;

			for (unsigned c = 0; c < n; c++) {
				allreduce_chunk(count, n, c, &off, &len);
				assert_int_equal(off, next); /* contiguous */
				next = off + len;
				min = len < min ? len : min;
				max = len > max ? len : max;
			}
			assert_int_equal(next, count); /* covers all */
			assert_true(max - min <= 1);   /* balanced */
		}
}

static void test_values(void **state)
{
	float buf[64];

	(void)state;
	/* 3 ranks: 1+2+3 + 3 * (i % 7) */
	assert_true(allreduce_expected(3, 0) == 6.0f);
	assert_true(allreduce_expected(3, 13) == 6.0f + 3 * 6);
	memset(buf, 0, sizeof(buf));
	for (unsigned r = 0; r < 3; r++)
		for (unsigned i = 0; i < 64; i++)
			buf[i] += allreduce_value(r, i);
	assert_int_equal(allreduce_verify(buf, 64, 3), -1);
	buf[41] += 1;
	assert_int_equal(allreduce_verify(buf, 64, 3), 41);
	/* One rank's inputs are not a sum. */
	allreduce_fill(buf, 64, 0);
	assert_int_equal(allreduce_verify(buf, 64, 3), 0);
}

struct t_rank {
	struct allreduce_ring ring;
	struct allreduce_params p;
	struct allreduce_size_result res[ARLIMITS_SIZES_MAX];
	unsigned n_res;
	int rc;
	char err[512];
	char prev[16], next[16];
};

static void *t_rank_run(void *arg)
{
	struct t_rank *r = arg;

	r->rc = allreduce_run(&r->ring, &r->p, r->res, &r->n_res, r->err,
			      sizeof(r->err));
	return NULL;
}

/* n ranks, links[i] joins rank i to rank i+1; kill: a rank whose sockets
 * are closed before it starts (a vanished peer), or -1. */
static void t_ring(unsigned n, const uint64_t *sizes, unsigned n_sizes,
		   int kill, struct t_rank *ranks)
{
	int links[T_MAX][2];
	pthread_t tid[T_MAX];
	atomic_int stop = 0;
	int small = 64 << 10;

	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, links[i]),
				 0);
		for (int k = 0; k < 2; k++) {
			/* Small buffers: chunks are far larger. */
			setsockopt(links[i][k], SOL_SOCKET, SO_SNDBUF, &small,
				   sizeof(small));
			fcntl(links[i][k], F_SETFL, O_NONBLOCK);
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct t_rank *r = &ranks[i];

		memset(r, 0, sizeof(*r));
		snprintf(r->prev, sizeof(r->prev), "n%u", (i + n - 1) % n);
		snprintf(r->next, sizeof(r->next), "n%u", (i + 1) % n);
		r->ring.next_fd = links[i][0];
		r->ring.prev_fd = links[(i + n - 1) % n][1];
		r->ring.prev_node = r->prev;
		r->ring.next_node = r->next;
		r->ring.stop = &stop;
		r->ring.deadline = allreduce_now() + 30;
		r->p.rank = i;
		r->p.n = n;
		r->p.n_sizes = n_sizes;
		memcpy(r->p.sizes, sizes, n_sizes * sizeof(*sizes));
		r->p.iterations = 2;
		r->p.warmup = 1;
		r->p.step_ms = 2000;
	}
	if (kill >= 0) {
		close(ranks[kill].ring.next_fd);
		close(ranks[kill].ring.prev_fd);
	}
	for (unsigned i = 0; i < n; i++)
		if ((int)i != kill)
			pthread_create(&tid[i], NULL, t_rank_run, &ranks[i]);
	for (unsigned i = 0; i < n; i++)
		if ((int)i != kill)
			pthread_join(tid[i], NULL);
	for (unsigned i = 0; i < n; i++) {
		if ((int)i == kill)
			continue;
		close(ranks[i].ring.next_fd);
		if ((int)((i + n - 1) % n) != kill)
			close(ranks[i].ring.prev_fd);
	}
}

static void test_rings(void **state)
{
	/* 4M: 1M..2M chunks against 64K socket buffers; 1028: chunks of
	 * unequal length (257 floats over n). */
	const uint64_t sizes[] = {1028, 65536, 4u << 20};
	struct t_rank ranks[T_MAX];

	(void)state;
	for (unsigned n = 2; n <= 5; n++) {
		t_ring(n, sizes, 3, -1, ranks);
		for (unsigned i = 0; i < n; i++) {
			assert_int_equal(ranks[i].rc, 0);
			assert_int_equal(ranks[i].n_res, 3);
			for (unsigned k = 0; k < 3; k++) {
				assert_true(ranks[i].res[k].verified);
				assert_int_equal(ranks[i].res[k].size,
						 sizes[k]);
				assert_true(ranks[i].res[k].mean_us > 0);
				assert_true(ranks[i].res[k].min_us <=
					    ranks[i].res[k].max_us);
			}
		}
	}
}

static void test_vanished_peer(void **state)
{
	const uint64_t sizes[] = {1u << 20};
	struct t_rank ranks[T_MAX];

	(void)state;
	t_ring(4, sizes, 1, 2, ranks);
	/* Rank 3 receives from the vanished rank 2: it names it. */
	assert_int_equal(ranks[3].rc, -1);
	assert_non_null(strstr(ranks[3].err, "n2 (rank 3's previous rank)"));
	assert_non_null(strstr(ranks[3].err, "starting an all-reduce of size "
					     "1MiB"));
	/* Every other rank fails too, none hangs. */
	assert_int_equal(ranks[0].rc, -1);
	assert_int_equal(ranks[1].rc, -1);
}

static void test_job_refusals(void **state)
{
	Ring__AllreduceSetup s = RING__ALLREDUCE_SETUP__INIT;
	uint8_t id[ALLREDUCE_ID_LEN] = {1};
	uint64_t sizes[] = {1u << 20, 4u << 20};
	struct event_base *base = event_base_new();
	char why[320];
	uint16_t port;

	(void)state;
	s.job_id.data = id;
	s.job_id.len = sizeof(id);
	s.rank = 0;
	s.n = 2;
	s.listen_interface = "lo";
	s.listen_address = "127.0.0.1";
	s.prev_address = "127.0.0.1";
	s.next_interface = "lo";
	s.sizes = sizes;
	s.n_sizes = 2;
	s.iterations = 1;
	/* Over allreduce_max_memory: named with both figures. */
	assert_null(allreduce_job_new(base, &s, 2u << 20, NULL, NULL, &port,
				      why, sizeof(why)));
	assert_non_null(strstr(why, "allreduce_max_memory"));
	s.rank = 2;
	assert_null(allreduce_job_new(base, &s, 1u << 30, NULL, NULL, &port,
				      why, sizeof(why)));
	assert_non_null(strstr(why, "rank 2 of 2"));
	s.rank = 0;
	sizes[0] = 1001; /* not whole floats */
	assert_null(allreduce_job_new(base, &s, 1u << 30, NULL, NULL, &port,
				      why, sizeof(why)));
	assert_non_null(strstr(why, "multiple of 4"));
	sizes[0] = 1u << 20;
	s.iterations = 0;
	assert_null(allreduce_job_new(base, &s, 1u << 30, NULL, NULL, &port,
				      why, sizeof(why)));
	s.iterations = 1;
	s.job_id.len = 3;
	assert_null(allreduce_job_new(base, &s, 1u << 30, NULL, NULL, &port,
				      why, sizeof(why)));
	event_base_free(base);
}

/* What an agent's ops module sent, per instance. */
struct t_agent {
	struct ops *ops;
	Ring__Envelope__BodyCase last[8];
	uint64_t last_id[8];
	char text[8][512];
	unsigned n;
	uint32_t port;
	Ring__AllreduceResult *res;
};

static void t_send(void *arg, uint64_t id, Ring__Envelope__BodyCase type,
		   void *body)
{
	struct t_agent *a = arg;

	if (a->n == 8)
		fail_msg("too many replies");
	a->last[a->n] = type;
	a->last_id[a->n] = id;
	if (type == RING__ENVELOPE__BODY_ERROR)
		snprintf(a->text[a->n], 512, "%s", ((Ring__Error *)body)->text);
	if (type == RING__ENVELOPE__BODY_ALLREDUCE_ENDPOINT)
		a->port = ((Ring__AllreduceEndpoint *)body)->port;
	if (type == RING__ENVELOPE__BODY_ALLREDUCE_RESULT) {
		a->res = frame_copy(&((Ring__AllreduceResult *)body)->base);
		assert_non_null(a->res);
	}
	a->n++;
}

static void t_setup(Ring__AllreduceSetup *s, uint8_t *id, unsigned rank,
		    uint64_t *sizes)
{
	ring__allreduce_setup__init(s);
	s->job_id.data = id;
	s->job_id.len = ALLREDUCE_ID_LEN;
	s->rank = rank;
	s->n = 2;
	s->listen_interface = "lo";
	s->listen_address = "127.0.0.1";
	s->prev_address = "127.0.0.1";
	s->next_interface = "lo";
	s->sizes = sizes;
	s->n_sizes = 2;
	s->iterations = 2;
	s->warmup = 1;
	s->deadline_ms = 20000;
	s->prev_node = rank ? "r0" : "r1";
	s->next_node = rank ? "r0" : "r1";
}

static void t_handle_setup(struct ops *o, uint64_t id, Ring__AllreduceSetup *s)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;

	env.request_id = id;
	env.body_case = RING__ENVELOPE__BODY_ALLREDUCE_SETUP;
	env.allreduce_setup = s;
	assert_int_equal(ops_handle(o, &env), 1);
}

static void t_control(struct ops *o, uint64_t id, uint8_t *job,
		      Ring__AllreduceAction action, uint32_t port)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__AllreduceControl c = RING__ALLREDUCE_CONTROL__INIT;

	c.job_id.data = job;
	c.job_id.len = ALLREDUCE_ID_LEN;
	c.action = action;
	c.next_address = "127.0.0.1";
	c.next_port = port;
	env.request_id = id;
	env.body_case = RING__ENVELOPE__BODY_ALLREDUCE_CONTROL;
	env.allreduce_control = &c;
	assert_int_equal(ops_handle(o, &env), 1);
}

/* Two agents' ops modules on one loop, over loopback: setups, a second
 * job refused as busy, START with each other's endpoint, the results on
 * the setups' request ids; then a job stopped before START. */
static void test_agents_over_loopback(void **state)
{
	struct event_base *base = event_base_new();
	struct t_agent a[2] = {0};
	uint8_t id[ALLREDUCE_ID_LEN] = {7, 7}, other[ALLREDUCE_ID_LEN] = {9};
	uint64_t sizes[] = {65536, 2u << 20};
	Ring__AllreduceSetup s[2], s2;
	double end;

	(void)state;
	for (int i = 0; i < 2; i++) {
		a[i].ops = ops_new(base, NULL, t_send, &a[i]);
		assert_non_null(a[i].ops);
		t_setup(&s[i], id, (unsigned)i, sizes);
		t_handle_setup(a[i].ops, 10 + (uint64_t)i, &s[i]);
		assert_int_equal(a[i].last[0],
				 RING__ENVELOPE__BODY_ALLREDUCE_ENDPOINT);
	}
	/* One job per agent. */
	t_setup(&s2, other, 0, sizes);
	t_handle_setup(a[0].ops, 99, &s2);
	assert_int_equal(a[0].last[1], RING__ENVELOPE__BODY_ERROR);
	assert_non_null(strstr(a[0].text[1], "busy"));
	/* A control for a job it does not run. */
	t_control(a[0].ops, 98, other, RING__ALLREDUCE_ACTION__ALLREDUCE_STOP,
		  0);
	assert_int_equal(a[0].last[2], RING__ENVELOPE__BODY_ERROR);
	t_control(a[0].ops, 20, id, RING__ALLREDUCE_ACTION__ALLREDUCE_START,
		  a[1].port);
	t_control(a[1].ops, 21, id, RING__ALLREDUCE_ACTION__ALLREDUCE_START,
		  a[0].port);
	assert_int_equal(a[0].last[3], RING__ENVELOPE__BODY_ACK);
	assert_int_equal(a[1].last[1], RING__ENVELOPE__BODY_ACK);
	end = allreduce_now() + 20;
	while ((!a[0].res || !a[1].res) && allreduce_now() < end)
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	for (int i = 0; i < 2; i++) {
		assert_non_null(a[i].res);
		assert_string_equal(a[i].res->error, "");
		assert_int_equal(a[i].res->n_sizes, 2);
		assert_true(a[i].res->sizes[1]->verified);
		assert_int_equal(a[i].res->sizes[1]->size, 2u << 20);
		assert_int_equal(a[i].last_id[a[i].n - 1], 10 + (uint64_t)i);
		assert_int_equal(ops_running(a[i].ops), 0);
		ring__allreduce_result__free_unpacked(a[i].res, NULL);
		a[i].res = NULL;
	}
	/* Stopped before START: the result at once, with why. */
	t_handle_setup(a[0].ops, 30, &s2);
	t_control(a[0].ops, 31, other, RING__ALLREDUCE_ACTION__ALLREDUCE_STOP,
		  0);
	assert_non_null(a[0].res);
	assert_non_null(strstr(a[0].res->error, "stopped before START"));
	ring__allreduce_result__free_unpacked(a[0].res, NULL);
	/* A job left running is torn down with its agent. */
	t_handle_setup(a[1].ops, 40, &s2);
	assert_int_equal(ops_running(a[1].ops), 1);
	for (int i = 0; i < 2; i++)
		ops_free(a[i].ops);
	event_base_free(base);
}

/* What an RDMA rank pins: its buffer when it writes to the next rank, two
 * slots of the largest chunk when the previous one writes to it, each
 * rounded up to 2 MiB; the agent counts it against rdma_max_total_memory. */
static void test_rdma_memory(void **state)
{
	(void)state;
	assert_int_equal(allreduce_rdma_memory(1ull << 30, 4, 1, 1),
			 (1ull << 30) + (512ull << 20));
	assert_int_equal(allreduce_rdma_memory(1ull << 30, 4, 0, 1),
			 1ull << 30);
	assert_int_equal(allreduce_rdma_memory(1ull << 30, 4, 1, 0),
			 512ull << 20);
	assert_int_equal(allreduce_rdma_memory(1ull << 30, 4, 0, 0), 0);
	/* 1M on 3 ranks: chunks of 87382 floats at most, 2 slots of
	 * 349528 bytes, rounded to 2 MiB; the buffer, 1M to 2 MiB. */
	assert_int_equal(allreduce_rdma_memory(1u << 20, 3, 1, 1), 4u << 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunks),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_rdma_memory),
		cmocka_unit_test(test_rings),
		cmocka_unit_test(test_vanished_peer),
		cmocka_unit_test(test_job_refusals),
		cmocka_unit_test(test_agents_over_loopback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
