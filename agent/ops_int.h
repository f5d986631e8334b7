/* The agent's request table, shared by ops.c (the table, admission
 * under the caps, errors, dispatch; probes, TCP and read tests) and
 * ops_rdma.c (RDMA tests and the ring all-reduce job): one struct op per
 * request in flight, and the helpers both answer the coordinator with.
 * Private to those two files. */
#ifndef RING_OPS_INT_H
#define RING_OPS_INT_H

#include <stdint.h>
#include <sys/queue.h>

#include "engine.h"
#include "ops.h"
#include "probe.h"

#define OPS_TEST_ID_LEN 16

enum op_kind {
	OP_PROBE = 1,
	OP_TEST, /* TCP listener, TCP run or RDMA test */
};

struct op {
	struct ops *owner;
	uint64_t request_id;
	enum op_kind kind;
	uint64_t rdma_mem; /* registered memory reserved for this test */
	struct probe *probe;
	struct tcptest *test;
	struct verbs_test *vt;
	struct allreduce_job *arj; /* a ring all-reduce job (allreduce.h) */
	struct readtest *rt;	   /* a read test (plan --weights) */
	struct tcount *tc;	   /* counters around a test (testcounters.h) */
	uint8_t test_id[OPS_TEST_ID_LEN];
	uint64_t connect_id; /* RdmaControl CONNECT waiting for RTS */
	struct probe_route route;
	int route_err;
	LIST_ENTRY(op) link;
};

struct ops {
	struct event_base *base;
	const struct agent_conf *conf;
	ops_send_fn send;
	void *arg;
	LIST_HEAD(, op) ops;
	unsigned n;
	unsigned n_probes, n_tests, n_rdma, n_read;
	uint64_t rdma_mem;    /* reserved by the RDMA tests in flight */
	struct op *allreduce; /* the one all-reduce job an agent runs */
	uint64_t warn_ms;     /* last refusal logged (CLOCK_MONOTONIC ms) */
	char mgmt_if[IFNAMSIZ];
};

/* Unlink op from its table and free it (and its job, counters, RDMA
 * memory reservation). */
void op_unlink(struct op *op);
/* An Error for request id: BAD_REQUEST, or code. */
void ops_error(struct ops *o, uint64_t id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ops_error_code(struct ops *o, uint64_t id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* 1 when a refusal may be logged at warning level now (rate-limited). */
int ops_may_warn(struct ops *o);
/* 0 under the cap of kind, else -1 after answering "busy". */
int ops_admit(struct ops *o, uint64_t id, enum op_kind kind);
/* A new operation, or NULL after answering "out of memory". */
struct op *ops_op_new(struct ops *o, uint64_t id, enum op_kind kind,
		      const char *what);
/* ops_admit() then ops_op_new(). */
struct op *ops_start(struct ops *o, uint64_t id, enum op_kind kind,
		     const char *what);
/* A data interface of this node, never the management one. */
int ops_is_data_port(const struct ops *o, const char *ifname);
/* One side's result of a TCP or RDMA test, as the coordinator reads it. */
void ops_send_result(struct op *op, const struct engine_result *r,
		     Ring__RdmaEndpoint *ep);

/* ops_rdma.c: each answers request id, at once or when the test ends. */
void ops_rdma_setup(struct ops *o, uint64_t id, const Ring__RdmaSetup *r);
void ops_rdma_control(struct ops *o, uint64_t id, const Ring__RdmaControl *r);
void ops_allreduce_setup(struct ops *o, uint64_t id,
			 const Ring__AllreduceSetup *r);
void ops_allreduce_control(struct ops *o, uint64_t id,
			   const Ring__AllreduceControl *r);

#endif
