/* The daemons' wall clock. */
#include "clock.h"

#include <stdio.h>
#include <time.h>

uint64_t clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void clock_format_utc(uint64_t ms, char *buf, size_t len, const char *never)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!ms || !gmtime_r(&t, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%s", never);
}
