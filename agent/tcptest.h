/* The TCP test engine: multi-stream bandwidth and ping-pong latency between
 * two agents over the data plane. The coordinator tells B to listen (with a
 * one-time token), then A to connect. Streams run in their own threads so
 * the event loop never blocks; results come back through a callback run
 * in the event loop. Every test has a deadline on both sides. */
#ifndef RING_TCPTEST_H
#define RING_TCPTEST_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "engine.h"
#include "testlimits.h"

#define TCPTEST_TOKEN_LEN 16
/* The limits are testlimits.h's, which ringctl checks too. */
#define TCPTEST_MAX_STREAMS TESTLIMITS_STREAMS_MAX
#define TCPTEST_MAX_SIZES TESTLIMITS_LAT_SIZES_MAX
#define TCPTEST_MAX_MSG TESTLIMITS_TCP_LAT_SIZE_MAX /* latency message */

enum tcptest_kind {
	TCPTEST_BW = 1,
	TCPTEST_LAT = 2,
};

/* A is the side that connects, B the side that listens. */
enum tcptest_dir {
	TCPTEST_A_TO_B = 0,
	TCPTEST_B_TO_A = 1,
	TCPTEST_BOTH = 2, /* half the streams each way, at once */
};

struct tcptest_params {
	enum tcptest_kind kind;
	/* bandwidth */
	unsigned streams;     /* 1..64 (BOTH: even, >= 2) */
	unsigned duration_ms; /* measured window, 100 ms .. 600 s */
	unsigned warmup_ms;   /* before the window, 0 .. 60 s */
	enum tcptest_dir dir;
	/* latency: ping-pong of each size, half round trip reported */
	unsigned n_sizes;
	uint32_t sizes[TCPTEST_MAX_SIZES]; /* 1 .. TCPTEST_MAX_MSG bytes */
	unsigned iterations;		   /* per size, 1 .. 1,000,000 */
	unsigned lat_warmup;		   /* per size, not counted */
};

struct tcptest;

/* Called once, in the event loop. r is valid during the call only. The
 * callback may call tcptest_free(t). */
typedef void (*tcptest_done_cb)(struct tcptest *t,
				const struct engine_result *r, void *arg);

/* 0 if p is valid, else -1 and a one-line reason in why. */
int tcptest_params_check(const struct tcptest_params *p, char *why, size_t len);

/* B: listen on bind_addr (IPv4, port 0 = ephemeral; *port is set), accept
 * exactly the expected streams presenting token within accept_timeout_ms,
 * run the test, report. Connections with a wrong token are closed and
 * counted, not accepted. NULL with errno on setup failure. */
struct tcptest *tcptest_listen(struct event_base *base, const char *bind_addr,
			       const uint8_t token[TCPTEST_TOKEN_LEN],
			       const struct tcptest_params *p,
			       unsigned accept_timeout_ms, tcptest_done_cb cb,
			       void *arg, uint16_t *port);
/* A: connect every stream to peer:port (from local_if via SO_BINDTODEVICE
 * when non-empty), present token, run the test, report. */
struct tcptest *tcptest_connect(struct event_base *base, const char *peer,
				uint16_t port, const char *local_if,
				const uint8_t token[TCPTEST_TOKEN_LEN],
				const struct tcptest_params *p,
				unsigned connect_timeout_ms, tcptest_done_cb cb,
				void *arg);
/* Stop a running test (its session went away): threads are told to stop
 * and the callback is not called. Frees t once its threads are done (at
 * once, or from the event loop shortly after). Also frees a finished t. */
void tcptest_free(struct tcptest *t);

#endif
