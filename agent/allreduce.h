/* One rank of a ring all-reduce in host memory over TCP (ringctl test
 * allreduce), as NCCL's ring algorithm does it: n-1 reduce-scatter steps,
 * then n-1 all-gather steps, each rank sending only to the next rank and
 * receiving only from the previous one. float32 sums, checked exactly.
 * Each step moves its chunk over TCP or, where the cable's both ends have
 * RDMA, by RDMA WRITE (allreduce_rdma.c); the TCP connections stay, for
 * the handshake and the start of each size.
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

struct allreduce_rdma;

struct allreduce_ring {
	int prev_fd, next_fd; /* non-blocking, connected */
	/* RDMA steps (NULL: all TCP): its buffer is the run's buffer. */
	struct allreduce_rdma *rdma;
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

/* ---- the RDMA WRITE transport (allreduce_rdma.c) ---- */

struct verbs_setup;
struct verbs_endpoint;
struct pollfd;

struct allreduce_rdma_cfg {
	/* The side toward each neighbour over RDMA (NULL: TCP there):
	 * interface, device, GID and peer name as for a test. */
	const struct verbs_setup *prev, *next;
	uint64_t max_size; /* the largest size of the job */
	unsigned n;	   /* ranks */
};

/* Registered memory one rank needs (its buffer when it writes to the next
 * rank, the staging slots when the previous one writes to it). */
uint64_t allreduce_rdma_memory(uint64_t max_size, unsigned n, int prev,
			       int next);
/* Devices, queue pairs (INIT), buffers registered, receives posted. NULL
 * with why. */
struct allreduce_rdma *allreduce_rdma_new(const struct allreduce_rdma_cfg *c,
					  char *why, size_t len);
/* The endpoint of the queue pair facing the previous rank (prev) or the
 * next one; NULL when that side is TCP. */
const struct verbs_endpoint *
allreduce_rdma_local(const struct allreduce_rdma *r, int prev);
int allreduce_rdma_has(const struct allreduce_rdma *r, int prev);
/* The run's buffer when this rank writes to the next one, else NULL. */
float *allreduce_rdma_buf(const struct allreduce_rdma *r);
/* RTR and RTS on both sides; from the worker thread. */
int allreduce_rdma_connect(struct allreduce_rdma *r,
			   const struct verbs_endpoint *prev_peer,
			   const struct verbs_endpoint *next_peer,
			   unsigned ack_timeout, char *why, size_t len);
/* A step: send len bytes from src (in the run's buffer) to the next rank. */
void allreduce_rdma_send(struct allreduce_rdma *r, const void *src,
			 uint64_t len);
/* Poll both queue pairs and post what may go: *sent when the step's
 * WRITEs completed, *got when the previous rank's message was consumed
 * into dst (rlen bytes, added when add). -1 with why; *which says the
 * side (0 next, 1 previous). */
int allreduce_rdma_progress(struct allreduce_rdma *r, float *dst, uint64_t rlen,
			    int add, int *sent, int *got, int *which, char *why,
			    size_t len);
/* The completion channels to wait on (at most 2), after arming them. */
int allreduce_rdma_pollfds(struct allreduce_rdma *r, struct pollfd *pfd);
int allreduce_rdma_arm(struct allreduce_rdma *r);
void allreduce_rdma_free(struct allreduce_rdma *r);

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
/* The setup's RDMA steps (prev_rdma, next_rdma): devices, queue pairs
 * and registered buffers now, so their endpoints go back with the TCP
 * one. 0 (also when every step is TCP), or -1 with a reason. */
struct agent_conf;
int allreduce_job_rdma(struct allreduce_job *j, const Ring__AllreduceSetup *s,
		       const struct agent_conf *conf, char *why, size_t len);
/* The queue pair facing the previous rank (prev) or the next; NULL when
 * that step is TCP. */
const struct verbs_endpoint *
allreduce_job_rdma_local(const struct allreduce_job *j, int prev);
int allreduce_job_is(const struct allreduce_job *j, ProtobufCBinaryData id);
/* Connect to the next rank and run; the neighbours' queue pairs for the
 * RDMA steps (NULL where TCP). 0, or -1 with a reason. */
int allreduce_job_start(struct allreduce_job *j, const char *next_addr,
			uint32_t next_port,
			const struct verbs_endpoint *prev_peer,
			const struct verbs_endpoint *next_peer, char *why,
			size_t len);
/* End soon: the done callback follows. */
void allreduce_job_stop(struct allreduce_job *j);
/* The result message (valid until the job is freed). */
const Ring__AllreduceResult *allreduce_job_result(struct allreduce_job *j);
/* Stops and joins the worker; no callback. NULL is fine. */
void allreduce_job_free(struct allreduce_job *j);

#endif
