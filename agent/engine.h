/* What the two data-plane test engines (TCP in tcptest, RDMA verbs in
 * verbs) have in common: one side's result, in one shape, so the agent
 * reports both the same way. */
#ifndef RING_ENGINE_H
#define RING_ENGINE_H

#include <stdint.h>

#include "stats.h"
#include "testlimits.h"

#define ENGINE_MAX_STREAMS TESTLIMITS_STREAMS_MAX /* or RDMA queue pairs */
#define ENGINE_MAX_SIZES TESTLIMITS_LAT_SIZES_MAX

/* One TCP stream or one RDMA queue pair. */
struct engine_stream {
	unsigned index;
	int sending;	/* this side sent (TCP) or posted the work (RDMA) */
	uint64_t bytes; /* TCP sender: bytes the peer acknowledged in the
			    window (TCP_INFO tcpi_bytes_acked); TCP receiver:
			    bytes read in the window; RDMA: bytes of the work
			    requests completed in the window */
	double gbps;	/* bytes * 8 / window */
	uint32_t retransmits; /* TCP sender: tcpi_total_retrans in the window */
	double peak_gbps;     /* RDMA: best 100 ms slice */
	uint64_t messages;    /* RDMA: completed work requests in the window */
};

struct engine_lat {
	uint32_t size;
	struct stats_summary us; /* convention in engine_result */
};

/* One side's view of a finished (or failed) test. */
struct engine_result {
	int kind;	 /* the engine's own test kind */
	int err;	 /* 0, or -errno */
	char error[320]; /* operator-facing reason when err != 0 */
	int no_path;	 /* err means no data-plane path (the coordinator says
			whether the nodes are ring neighbours) */
	char path_detail[400];	    /* with no_path: what this side knows */
	const char *method;	    /* "tcp" or "rdma" */
	const char *lat_convention; /* "half round trip", "full round trip" */
	double window_s; /* the measured window as this side timed it */
	unsigned n_streams;
	struct engine_stream streams[ENGINE_MAX_STREAMS];
	double gbps_sent;     /* sum of this side's sending streams */
	double gbps_received; /* sum of this side's receiving streams */
	uint32_t retransmits; /* sum over sending streams */
	double peak_gbps;     /* RDMA: best 100 ms slice, all QPs */
	double msg_rate_mps;  /* RDMA: million messages per second */
	double cpu_pct;	      /* this side's test threads, % of one core */
	unsigned n_lat;	      /* latency: filled on the pinging side */
	struct engine_lat lat[ENGINE_MAX_SIZES];
};

#endif
