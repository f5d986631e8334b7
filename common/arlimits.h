/* The ring all-reduce's limits and defaults (ringctl test allreduce): one
 * source for ringctl, the coordinator and the agent, so a bad value is
 * refused before the round trip in the same words. */
#ifndef RING_ARLIMITS_H
#define RING_ARLIMITS_H

#include <stddef.h>
#include <stdint.h>

#define ARLIMITS_SIZES_MAX 16
#define ARLIMITS_SIZE_MIN (1ull << 10)
/* A hard ceiling; the agent's allreduce_max_memory bounds it further. */
#define ARLIMITS_SIZE_MAX (16ull << 30)
#define ARLIMITS_LADDER_MIN (1ull << 20) /* default ladder: 1M..1G doubling */
#define ARLIMITS_LADDER_MAX (1ull << 30)
#define ARLIMITS_ITERATIONS_MAX 1000
#define ARLIMITS_ITERATIONS_DEFAULT 5
#define ARLIMITS_WARMUP_MAX 100
#define ARLIMITS_WARMUP_DEFAULT 1
#define ARLIMITS_RANKS_MAX 64
#define ARLIMITS_STEP_MIN_MS 100
#define ARLIMITS_STEP_MAX_MS 120000
#define ARLIMITS_STEP_DEFAULT_MS 10000
/* A job never runs longer, whatever its sizes. */
#define ARLIMITS_DEADLINE_MAX_MS (3600u * 1000)

/* sizes (bytes) of n ranks: count, each a multiple of 4 bytes (float32)
 * within [ARLIMITS_SIZE_MIN, ARLIMITS_SIZE_MAX]; iterations 1..max,
 * warmup 0..max, step_ms 0 (default) or within the bounds. 0, or -1 with
 * a one-line reason. */
int arlimits_check(const uint64_t *sizes, size_t n_sizes, unsigned n,
		   uint32_t iterations, uint32_t warmup, uint32_t step_ms,
		   char *why, size_t len);
/* The default ladder into sizes (at most max): its length. */
size_t arlimits_ladder(uint64_t lo, uint64_t hi, uint64_t *sizes, size_t max);
/* How long a ring step (one chunk each way) may take: step_ms (0 =
 * default) plus the chunk at 100 Mbit/s, so a large chunk on a slow link
 * is not a stall. */
unsigned arlimits_step_deadline_ms(uint32_t step_ms, uint64_t chunk_bytes);
/* The whole job's deadline: connecting, then every iteration of every size
 * at a slow 1 Gbit/s with filling and checking, capped. */
unsigned arlimits_job_deadline_ms(const uint64_t *sizes, size_t n_sizes,
				  unsigned n, uint32_t iterations,
				  uint32_t warmup, uint32_t step_ms);

#endif
