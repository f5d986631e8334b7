/* Clocks shared by the daemons: one definition of "now" for what is
 * reported (wall time), so every module can be built and tested alone. */
#ifndef RING_CLOCK_H
#define RING_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Wall clock in Unix milliseconds (for reports and "since" fields). */
uint64_t clock_now_ms(void);

/* ms as RFC 3339 UTC to the second ("2026-12-04T05:02:45Z"); never for
 * 0 or a time gmtime cannot take. */
void clock_format_utc(uint64_t ms, char *buf, size_t len, const char *never);

#endif
