/* The one size grammar of ringctl, the agents and the configuration files,
 * and sizes written back in units that say what they mean.
 *
 * A size is a number (digits, an optional fraction, an optional exponent:
 * 4096, 1.5, 8e11) and an optional unit:
 *   none or B             bytes
 *   K M G T P             powers of 1024, as perftest and nccl-tests read
 *                         message sizes (1K = 1024)
 *   Ki Mi Gi Ti Pi, KiB.. powers of 1024, explicit
 *   KB MB GB TB PB        powers of 1000, explicit (800GB = 8e11)
 * The unit's letter may be either case (k, m, g); the i of KiB is lower
 * case and B upper case: a lower-case b is bits and is refused. A bare
 * number or B must be whole; with a unit, a fraction of a byte rounds up
 * (121.7GiB). */
#ifndef RING_SIZE_H
#define RING_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* The forms above in one line, for errors and help. */
#define SIZE_FORMS                                                             \
	"bytes, or a number with K, M, G, T (powers of 1024, also KiB, MiB, "  \
	"GiB, TiB) or KB, MB, GB, TB (powers of 1000), e.g. 64K, 1MiB, 800GB"

/* s as a size within [min, max] into *out: 0, or -1 with errno EINVAL (not
 * a size) or ERANGE (outside [min, max]) and, when err is not NULL, a
 * one-line reason naming s and the valid forms or range. */
int size_parse(const char *s, uint64_t min, uint64_t max, uint64_t *out,
	       char *err, size_t len);

/* A comma-separated list of sizes ("64,4K,1M") into out (at most max_n):
 * empty items, more than max_n and a size given twice are refused, each
 * naming the value. *n: how many. 0 or -1 with the reason in err. */
int size_parse_list(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		    size_t max_n, size_t *n, char *err, size_t len);

/* v in its largest exact binary unit: "8MiB", "10KiB", "1000" (bytes have
 * no unit, so that a caller can write "1000 bytes" or "1000B"). buf. */
const char *size_format(uint64_t v, char *buf, size_t len);

/* The number part of the grammar, exact (2.03 stays 203 x 10^-2): digits
 * [.digits][e[+-]digits] as all its digits in *mant and the power of ten
 * in *exp10, *end after it. -1: not such a number, or over 19 digits. */
int size_number(const char *s, uint64_t *mant, int *exp10, const char **end);

/* mant x mult x 10^exp10 as a whole number up to max, rounded up when
 * round_up: 0, -1 not whole, -2 more than max. */
int size_scale(uint64_t mant, uint64_t mult, int exp10, uint64_t max,
	       int round_up, uint64_t *out);

#endif
