/* Why a check refused something: the one formatter behind the checks that
 * fill a caller's buffer with the reason and fail (testlimits, validate,
 * ringctl's test arguments). */
#ifndef RING_REASON_H
#define RING_REASON_H

#include <stddef.h>

/* Format the reason into why (len bytes, truncated to fit) so that a check
 * can end with `return reason_fail(...)`. Always returns -1. */
int reason_fail(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
