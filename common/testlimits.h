/* The one source of the data-plane test parameters' limits and defaults,
 * their validation and their size grammar: ringctl checks a request with
 * the same rules and numbers that the agent enforces, so a user learns of
 * a bad value before the round trip, in the same words. */
#ifndef RING_TESTLIMITS_H
#define RING_TESTLIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "ring.pb-c.h"

/* Macros, not constants: ringctl's usage text quotes them through
 * TESTLIMITS_STR, array sizes use them. */
#define TESTLIMITS_STR_(x) #x
#define TESTLIMITS_STR(x) TESTLIMITS_STR_(x)

/* TCP bandwidth. */
#define TESTLIMITS_STREAMS_MAX 64 /* also RDMA queue pairs */
#define TESTLIMITS_STREAMS_DEFAULT 8
/* Measured window and warm-up, TCP and RDMA bandwidth. */
#define TESTLIMITS_DURATION_MIN_MS 100
/* The coordinator's light-check bandwidth samples (survey_sample.c) use
 * shorter windows than anyone may ask for: agents accept down to this,
 * while ringctl and the control socket keep TESTLIMITS_DURATION_MIN_MS. */
#define TESTLIMITS_SAMPLE_DURATION_MIN_MS 10
#define TESTLIMITS_DURATION_MAX_MS 600000
#define TESTLIMITS_DURATION_DEFAULT_MS 5000
#define TESTLIMITS_WARMUP_MAX_MS 60000
#define TESTLIMITS_WARMUP_DEFAULT_MS 1000
/* Latency, TCP and RDMA: sizes per test, round trips per size (a tenth of
 * them untimed first, by ringctl's choice). */
#define TESTLIMITS_LAT_SIZES_MAX 16
#define TESTLIMITS_LAT_ITERATIONS_MAX 1000000
#define TESTLIMITS_LAT_ITERATIONS_DEFAULT 1000
#define TESTLIMITS_LAT_WARMUP_MAX 1000000
#define TESTLIMITS_TCP_LAT_SIZE_MAX (1u << 20)
#define TESTLIMITS_RDMA_LAT_SIZE_MAX (8u << 20)
/* 64 4096 10240 20480 40960: ringctl's and the survey's latency ladder. */
#define TESTLIMITS_LAT_SIZES_DEFAULT_N 5
extern const uint32_t
	testlimits_lat_sizes_default[TESTLIMITS_LAT_SIZES_DEFAULT_N];
/* RDMA bandwidth; 0 in a request means the agent's default below. */
#define TESTLIMITS_RDMA_QPS_MAX TESTLIMITS_STREAMS_MAX
#define TESTLIMITS_RDMA_QPS_DEFAULT 4
#define TESTLIMITS_RDMA_SIZE_MAX (64u << 20)
#define TESTLIMITS_RDMA_SIZE_DEFAULT_WRITE (1u << 20)
/* READ needs large messages to fill a link: each costs a round trip. */
#define TESTLIMITS_RDMA_SIZE_DEFAULT_READ (4u << 20)
#define TESTLIMITS_RDMA_TX_DEPTH_MAX 8192
#define TESTLIMITS_RDMA_TX_DEPTH_DEFAULT 128
#define TESTLIMITS_RDMA_LAT_TX_DEPTH 16
#define TESTLIMITS_RDMA_CQ_MOD_DEFAULT 16 /* at most the tx depth */
#define TESTLIMITS_RDMA_POST_LIST_MAX 64
#define TESTLIMITS_RDMA_POST_LIST_DEFAULT 1
#define TESTLIMITS_RDMA_ITERATIONS_MAX 100000000ull /* per QP; 0 = duration */
/* The address handle's sgid_index is 8 bits. */
#define TESTLIMITS_GID_INDEX_MAX 255
/* The GRH traffic class is 8 bits (NCCL_IB_TC), the service level 4
 * (NCCL_IB_SL): ibv_ah_attr's grh.traffic_class and sl. */
#define TESTLIMITS_RDMA_TC_MAX 255
#define TESTLIMITS_RDMA_SL_MAX 15
/* Local ACK timeout exponents: 1 ms .. 69 s a try (NCCL_IB_TIMEOUT). */
#define TESTLIMITS_RDMA_ACK_TIMEOUT_MIN 8
#define TESTLIMITS_RDMA_ACK_TIMEOUT_MAX 24
#define TESTLIMITS_RDMA_ACK_TIMEOUT_DEFAULT 14
/* NCCL's own (net_ib, NCCL_IB_TIMEOUT default since 2.14). */
#define TESTLIMITS_RDMA_ACK_TIMEOUT_NCCL 20
/* An RDMA test never holds queue pairs and memory longer. */
#define TESTLIMITS_RDMA_DEADLINE_MAX_MS (3600u * 1000)

/* Read tests (ringctl plan --weights): bytes and time per node; 0 in a
 * request means the default. */
#define TESTLIMITS_READ_BYTES_DEFAULT (4ull << 30)
#define TESTLIMITS_READ_BYTES_MAX (64ull << 30)
#define TESTLIMITS_READ_MS_DEFAULT 10000u
#define TESTLIMITS_READ_MS_MAX 60000u
/* Nodes in one ringctl read request. */
#define TESTLIMITS_READ_NODES_MAX 256

/* A read test request's path (absolute, at most 4095 bytes, no NUL) and
 * bounds: 0 and *bytes, *ms filled in (defaults for 0), or -1 with a
 * one-line reason in why. */
int testlimits_read_check(const Ring__ReadTestRequest *r, uint64_t *bytes,
			  unsigned *ms, char *why, size_t len);

/* v as the size grammar (size.h) writes it: "8MiB", "64KiB", "1000". */
const char *testlimits_format_size(uint64_t v, char *buf, size_t len);

/* Would an agent run p? Zero RDMA fields stand for the agent's defaults
 * and are judged as those. 0, or -1 with a one-line reason in why. */
int testlimits_check(const Ring__TestParams *p, char *why, size_t len);
/* What an agent runs: the same, but windows down to
 * TESTLIMITS_SAMPLE_DURATION_MIN_MS (only the coordinator asks for those:
 * control refuses them from ringctl with testlimits_check). */
int testlimits_check_agent(const Ring__TestParams *p, char *why, size_t len);

/* The agents' own teardown deadline for an RDMA test with these
 * parameters (the coordinator sends it; ringctl waits a little longer). */
unsigned testlimits_rdma_deadline_ms(const Ring__TestParams *p);

#endif
