/* Clocks shared by the daemons: one definition of "now" for what is
 * reported (wall time), so every module can be built and tested alone. */
#ifndef RING_CLOCK_H
#define RING_CLOCK_H

#include <stdint.h>

/* Wall clock in Unix milliseconds (for reports and "since" fields). */
uint64_t clock_now_ms(void);

#endif
