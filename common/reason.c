/* Why a check refused something: the reason into the caller's buffer. */
#include "reason.h"

#include <stdarg.h>
#include <stdio.h>

int reason_fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}
