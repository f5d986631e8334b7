/* The ring all-reduce's limits (see arlimits.h). */
#include "arlimits.h"

#include "reason.h"

int arlimits_check(const uint64_t *sizes, size_t n_sizes, unsigned n,
		   uint32_t iterations, uint32_t warmup, uint32_t step_ms,
		   char *why, size_t len)
{
	if (n < 2 || n > ARLIMITS_RANKS_MAX)
		return reason_fail(why, len, "%u ranks: need 2..%d", n,
				   ARLIMITS_RANKS_MAX);
	if (n_sizes < 1 || n_sizes > ARLIMITS_SIZES_MAX)
		return reason_fail(why, len, "%zu sizes: need 1..%d", n_sizes,
				   ARLIMITS_SIZES_MAX);
	for (size_t i = 0; i < n_sizes; i++)
		if (sizes[i] < ARLIMITS_SIZE_MIN ||
		    sizes[i] > ARLIMITS_SIZE_MAX || sizes[i] % 4)
			return reason_fail(why, len,
					   "size %llu: need a multiple of 4 "
					   "bytes (float32) from 1K to 16G",
					   (unsigned long long)sizes[i]);
	if (iterations < 1 || iterations > ARLIMITS_ITERATIONS_MAX)
		return reason_fail(why, len, "iterations %u: need 1..%d",
				   iterations, ARLIMITS_ITERATIONS_MAX);
	if (warmup > ARLIMITS_WARMUP_MAX)
		return reason_fail(why, len, "warm-up %u: at most %d", warmup,
				   ARLIMITS_WARMUP_MAX);
	if (step_ms &&
	    (step_ms < ARLIMITS_STEP_MIN_MS || step_ms > ARLIMITS_STEP_MAX_MS))
		return reason_fail(why, len, "step timeout %u ms: need %d..%d",
				   step_ms, ARLIMITS_STEP_MIN_MS,
				   ARLIMITS_STEP_MAX_MS);
	return 0;
}

size_t arlimits_ladder(uint64_t lo, uint64_t hi, uint64_t *sizes, size_t max)
{
	size_t n = 0;

	for (uint64_t s = lo; s && s <= hi && n < max; s *= 2)
		sizes[n++] = s;
	return n;
}

unsigned arlimits_step_deadline_ms(uint32_t step_ms, uint64_t chunk_bytes)
{
	uint64_t ms = (step_ms ? step_ms : ARLIMITS_STEP_DEFAULT_MS) +
		      chunk_bytes / 12500; /* 100 Mbit/s = 12500 bytes/ms */

	return ms > ARLIMITS_DEADLINE_MAX_MS ? ARLIMITS_DEADLINE_MAX_MS
					     : (unsigned)ms;
}

unsigned arlimits_job_deadline_ms(const uint64_t *sizes, size_t n_sizes,
				  unsigned n, uint32_t iterations,
				  uint32_t warmup, uint32_t step_ms)
{
	uint64_t ms = 2ull * (step_ms ? step_ms : ARLIMITS_STEP_DEFAULT_MS);

	for (size_t i = 0; i < n_sizes; i++) {
		/* 2 sizes over the wire at 1 Gbit/s (125000 bytes/ms), one
		 * fill and a check at 1 GB/s, 50 ms per step of latency. */
		uint64_t one = 2 * sizes[i] / 125000 + 2 * sizes[i] / 1000000 +
			       2ull * n * 50;

		ms += (uint64_t)(iterations + warmup) * one;
		if (ms > ARLIMITS_DEADLINE_MAX_MS)
			return ARLIMITS_DEADLINE_MAX_MS;
	}
	return (unsigned)ms;
}
