/* libFuzzer target for the metrics listener's request head parser (what
 * anyone who can connect to metrics_listen sends): whatever the bytes,
 * a verdict within them and the limit (more needed, a head's length, or a
 * refusal among the codes the server sends), and a whole head yields a
 * token method, a path and a version. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/http_serve.h"

#include "fuzzcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t max = size > 0 ? 16 + data[0] * 64u : 16;
	char *buf = malloc(size + 1);
	struct http_head h;
	int r;

	fuzz_check(buf);
	memcpy(buf, data, size);
	buf[size] = '\0';
	r = http_parse_head(buf, size, max, &h);
	if (r == 0) {
		fuzz_check(size < max);
	} else if (r > 0) {
		fuzz_check((size_t)r <= size && (size_t)r <= max);
		fuzz_check(h.method && *h.method && strlen(h.method) <= 32);
		fuzz_check(h.path && *h.path);
		fuzz_check(h.minor >= 0 && h.minor <= 9);
		fuzz_check(!strpbrk(h.path, " \r\n"));
	} else {
		fuzz_check(r == -400 || r == -414 || r == -431 || r == -505);
	}
	free(buf);
	return 0;
}
