/* ringctl test allreduce: its arguments into an AllreduceRequest, and
 * the report through the writer. */
#ifndef RING_ALLREDUCE_CLI_H
#define RING_ALLREDUCE_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "arlimits.h"
#include "ring.pb-c.h"
#include "writer.h"

struct allreduce_cli {
	Ring__AllreduceRequest req; /* points into this struct */
	uint64_t sizes[ARLIMITS_SIZES_MAX];
	char *names[ARLIMITS_RANKS_MAX];
	char buf[4096]; /* the names' text */
};

/* argv[0] is "allreduce". 0, or -1 with the usage complaint in err. */
int allreduce_cli_parse(int argc, char **argv, struct allreduce_cli *c,
			char *err, size_t len);
/* How long ringctl waits for the report beyond its own timeout. */
unsigned allreduce_cli_wait_ms(const struct allreduce_cli *c);
void allreduce_cli_render(struct writer *w, const Ring__AllreduceReport *r);

#endif
