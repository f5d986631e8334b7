/* libFuzzer target: arbitrary bytes as a launcher file for ringctl check
 * ranks. Checks that the parser neither crashes nor leaks, and that every
 * host it accepts can be printed again with any rank number. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ringctl/check_hosts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct check_hosts h;
	char err[512], line[8192];

	if (check_hosts_parse((const char *)data, size, "fuzz", &h, err,
			      sizeof(err)) < 0)
		return 0;
	for (size_t i = 0; i < h.n; i++) {
		/* A host is a non-empty printable word. */
		if (!h.v[i].host[0] || strchr(h.v[i].host, ' '))
			__builtin_trap();
		check_hosts_line(&h, i, (unsigned)(h.n - 1 - i), line,
				 sizeof(line));
		check_hosts_line(&h, i, 4095, line, 8);
	}
	check_hosts_free(&h);
	return 0;
}
