/* The TCP test engine's private parts: the test's state, shared by its
 * files, and the functions they call across files. Not for other modules:
 * they use tcptest.h. Files:
 *   tcptest.c          parameters, the control thread, life cycle (new,
 *                      start, done in the loop, free)
 *   tcptest_err.c      the clock, the error record and the stop state
 *   tcptest_sock.c     socket options, addresses, descriptors, whole-buffer
 *                      I/O, the preamble both sides share
 *   tcptest_listen.c   B: listen, accept, judge preambles and tokens
 *   tcptest_connect.c  A: connect every stream, present the preamble
 *   tcptest_run.c      the test proper: stream threads, start gate,
 *                      results and CPU accounting
 *   tcptest_bw.c       bandwidth streams, their REND/RACK end, the window
 *   tcptest_lat.c      the latency ping-pong */
#ifndef RING_TCPTEST_INT_H
#define RING_TCPTEST_INT_H

#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "tcptest.h"

/* Preamble, A -> B, first bytes on every connection (big-endian):
 * "RTST" version kind dir pad index:u16 n:u16 duration_ms:u32 token[16] */
#define TCPTEST_MAGIC "RTST"
#define TCPTEST_VERSION 2 /* 2: bandwidth streams end with REND/RACK */
#define TCPTEST_PREAMBLE_LEN 32

/* B's one-byte answer to a preamble. Anything but OK is followed by close;
 * the reason lets A tell the operator what was wrong. */
enum tcptest_status {
	TCPTEST_ST_OK = 0,
	TCPTEST_ST_BAD_HEADER = 1,
	TCPTEST_ST_BAD_TOKEN = 2,
	TCPTEST_ST_MISMATCH = 3,
	TCPTEST_ST_DUPLICATE = 4,
};

#define TCPTEST_BUF (1u << 20)
/* Blocked workers wake up this often to check the stop flag and deadline. */
#define TCPTEST_IO_TIMEOUT_MS 1000
/* The setup phase polls in slices this long for the same reason. */
#define TCPTEST_SLICE_MS 100

struct tcptest_worker {
	struct tcptest *t;
	pthread_t tid;
	unsigned index;
	int fd;
	int sending;
	atomic_uint_fast64_t moved; /* bytes sent or read so far */
	uint64_t bytes;		    /* in the window */
	uint32_t retrans;
	double cpu_s;
	double end;
	int err;
	double err_at;
	char error[200];
};

struct tcptest {
	struct event_base *base;
	struct event *ev_done;
	int efd; /* eventfd: the control thread's "finished" signal */
	int is_a;
	struct tcptest_params p;
	uint8_t token[TCPTEST_TOKEN_LEN];
	tcptest_done_cb cb;
	void *arg;
	struct sockaddr_in sa; /* A: the peer; B: the bound address */
	char name[64];	       /* A: peer address; B: bound address */
	char from[64];	       /* B: where the first stream came from */
	char local_if[IFNAMSIZ];
	unsigned setup_ms;
	double created, deadline; /* monotonic seconds */
	double t0;		  /* start of the test proper */
	unsigned n_conn;
	unsigned refused;

	/* Guards the descriptors: tcptest_free shuts them down from the loop
	 * thread while the control thread opens and closes them. */
	pthread_mutex_t mu;
	int lfd;
	int fds[TCPTEST_MAX_STREAMS];
	/* Start gate: the clock starts once every worker thread runs, so
	 * thread start-up is not part of any stream's window. */
	pthread_cond_t ready_cv, go_cv;
	unsigned ready;
	int go;

	pthread_t ctl;
	atomic_int stop;	/* tcptest_free: quit, no callback */
	atomic_int failed;	/* one worker failed: the others quit */
	atomic_int window_done; /* senders stop */
	int joined;		/* control thread joined, res final */
	int in_cb;
	int freed;
	struct tcptest_worker w[TCPTEST_MAX_STREAMS];
	struct engine_result res;
};

/* tcptest_err.c */
double tcptest_now(void);
const char *tcptest_strerror(int err, char *buf, size_t len);
/* Stopped (tcptest_free) or failed (a worker's error). */
int tcptest_halted(struct tcptest *t);
/* Record the test's error (the first one wins). Control thread only. */
void tcptest_fail(struct tcptest *t, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Record a worker's error (its first) and make the others quit. */
void tcptest_werr(struct tcptest_worker *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* tcptest.c */
struct tcptest *tcptest_new(struct event_base *base, int is_a,
			    const uint8_t token[TCPTEST_TOKEN_LEN],
			    const struct tcptest_params *p, unsigned setup_ms,
			    tcptest_done_cb cb, void *arg);
/* Start the control thread: setup, the test, the loop told. */
int tcptest_start(struct tcptest *t);
void tcptest_destroy(struct tcptest *t);

/* tcptest_sock.c */
int tcptest_parse_addr(const char *ip, uint16_t port, struct sockaddr_in *sa);
void tcptest_set_timeouts(int fd, unsigned ms);
void tcptest_set_buffers(int fd);
void tcptest_set_nodelay(int fd);
int tcptest_set_blocking(int fd);
void tcptest_track(struct tcptest *t, unsigned slot, int fd);
void tcptest_close_all(struct tcptest *t);
int tcptest_io_full(struct tcptest *t, int fd, void *buf, size_t len, int wr,
		    double deadline);
void tcptest_addr_str(const struct sockaddr_in *sa, char *buf, size_t len);
void tcptest_preamble_encode(const struct tcptest *t, unsigned index,
			     uint8_t *b);
const char *tcptest_status_str(int st);

/* tcptest_listen.c (B) and tcptest_connect.c (A): every stream set up, or
 * -1 with the test's error recorded. Control thread. */
int tcptest_accept_all(struct tcptest *t);
int tcptest_connect_all(struct tcptest *t);

/* tcptest_run.c: start the streams, run the test, collect the result. */
void tcptest_run(struct tcptest *t);

/* tcptest_bw.c */
void tcptest_bw_send(struct tcptest_worker *w, char *buf);
void tcptest_bw_recv(struct tcptest_worker *w, char *buf);
/* Control thread, while the workers run: sample at the window's edges. */
void tcptest_bw_window(struct tcptest *t, unsigned n);

/* tcptest_lat.c */
void tcptest_lat_ping(struct tcptest_worker *w, char *buf);
void tcptest_lat_echo(struct tcptest_worker *w, char *buf);

#endif
