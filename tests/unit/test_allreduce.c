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

#include "allreduce.h"

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
	assert_non_null(strstr(ranks[3].err, "reduce-scatter step 1/3"));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunks),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_rings),
		cmocka_unit_test(test_vanished_peer),
		cmocka_unit_test(test_job_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
