/* One rank of a ring all-reduce in host memory over TCP (ringctl test
 * allreduce), as NCCL's ring algorithm does it: n-1 reduce-scatter steps,
 * then n-1 all-gather steps, each rank sending only to the next rank and
 * receiving only from the previous one. float32 sums, checked exactly.
 * RDMA WRITE is a later step: the engine's transfer (allreduce_run's
 * sockets) is the only part that would change.
 *
 * The job runs on a worker thread with blocking waits bounded by poll()
 * timeouts; the event loop learns of its end through an eventfd. */
#ifndef RING_ALLREDUCE_H
#define RING_ALLREDUCE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "arlimits.h"
#include "ring.pb-c.h"

#define ALLREDUCE_ID_LEN 16

/* ---- the pure parts (unit-tested) ---- */

/* Chunk c of count elements split into n: its first element and length
 * (the first count % n chunks one longer). */
void allreduce_chunk(uint64_t count, unsigned n, unsigned c, uint64_t *off,
		     uint64_t *len);
/* Rank r's contribution at element i, and the reduced value over n ranks:
 * small integers, exact in float32. */
float allreduce_value(unsigned rank, uint64_t i);
float allreduce_expected(unsigned n, uint64_t i);
void allreduce_fill(float *buf, uint64_t count, unsigned rank);
/* The first element that is not the expected sum, or -1 when all are. */
int64_t allreduce_verify(const float *buf, uint64_t count, unsigned n);

/* ---- the engine over two connected sockets ---- */

struct allreduce_params {
	unsigned rank, n;
	uint64_t sizes[ARLIMITS_SIZES_MAX];
	unsigned n_sizes;
	uint32_t iterations, warmup, step_ms;
};

struct allreduce_size_result {
	uint64_t size;
	double mean_us, min_us, max_us; /* timed iterations */
	int verified;
};

struct allreduce_ring {
	int prev_fd, next_fd; /* non-blocking, connected */
	const char *prev_node, *next_node;
	atomic_int *stop;
	double deadline; /* CLOCK_MONOTONIC seconds; the job's end */
};

/* Every size of p in turn; out gets one entry per size done (*n_out).
 * 0, or -1 with what failed: the step, the size and the peer. */
int allreduce_run(const struct allreduce_ring *ring,
		  const struct allreduce_params *p,
		  struct allreduce_size_result *out, unsigned *n_out, char *err,
		  size_t len);
double allreduce_now(void);

/* ---- the agent's job ---- */

struct allreduce_job;
/* The job ended (result ready: allreduce_job_result); free it now or
 * later from the loop. */
typedef void (*allreduce_done_fn)(struct allreduce_job *j, void *arg);

/* Validate s (max_memory: allreduce_max_memory), listen on its listen
 * address and interface; *port is where. NULL with a reason. */
struct allreduce_job *allreduce_job_new(struct event_base *base,
					const Ring__AllreduceSetup *s,
					uint64_t max_memory,
					allreduce_done_fn done, void *arg,
					uint16_t *port, char *why, size_t len);
int allreduce_job_is(const struct allreduce_job *j, ProtobufCBinaryData id);
/* Connect to the next rank and run. 0, or -1 with a reason. */
int allreduce_job_start(struct allreduce_job *j, const char *next_addr,
			uint32_t next_port, char *why, size_t len);
/* End soon: the done callback follows. */
void allreduce_job_stop(struct allreduce_job *j);
/* The result message (valid until the job is freed). */
const Ring__AllreduceResult *allreduce_job_result(struct allreduce_job *j);
/* Stops and joins the worker; no callback. NULL is fine. */
void allreduce_job_free(struct allreduce_job *j);

#endif
