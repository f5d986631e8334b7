/* ringctl's rendering of a test report (ringctl test ...). */
#ifndef RING_REPORT_H
#define RING_REPORT_H

#include "ring.pb-c.h"
#include "writer.h"

void report_render(struct writer *w, const Ring__TestReport *r);

#endif
