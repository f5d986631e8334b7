/* libFuzzer target for the LLDP decoder: the input is one received
 * Ethernet frame, from anyone. Whatever decodes must be sane (terminated,
 * printable, non-empty ids) and must survive a re-encode as one of our
 * frames: decoding that gives the same fields back. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lldp.h"

#define fuzz_check(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_lldp: %s failed at line %d\n",   \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

/* NUL-terminated inside its field, printable, and at least min long. */
static void fuzz_check_str(const char *s, size_t size, size_t min)
{
	size_t n = strnlen(s, size);

	fuzz_check(n < size);
	fuzz_check(n >= min);
	for (size_t i = 0; i < n; i++)
		fuzz_check(s[i] >= 0x20 && s[i] <= 0x7e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lldp_info info, again;
	uint8_t buf[LLDP_MAX_FRAME];
	ssize_t n;

	/* libFuzzer's buffer is exactly size bytes: any read past it is
	 * caught by ASan. */
	if (lldp_decode(data, size, &info) < 0) {
		fuzz_check(errno == ENOENT || errno == EBADMSG);
		fuzz_check(errno == EBADMSG || size < 14 || data[12] != 0x88 ||
			   data[13] != 0xcc);
		return 0;
	}
	fuzz_check(size >= 14 && data[12] == 0x88 && data[13] == 0xcc);
	fuzz_check(memcmp(info.src_mac, data + 6, 6) == 0);
	fuzz_check_str(info.chassis_id, sizeof(info.chassis_id), 1);
	fuzz_check_str(info.port_id, sizeof(info.port_id), 1);
	fuzz_check_str(info.agent_id, sizeof(info.agent_id), 0);

	/* Every decoded frame fits one of ours, so re-encoding never fails. */
	n = lldp_encode(buf, sizeof(buf), info.src_mac, info.chassis_id,
			info.port_id, info.ttl,
			info.agent_id[0] ? info.agent_id : NULL);
	fuzz_check(n >= 60 && (size_t)n <= sizeof(buf));
	fuzz_check(lldp_decode(buf, (size_t)n, &again) == 0);
	fuzz_check(memcmp(again.src_mac, info.src_mac, 6) == 0);
	fuzz_check(strcmp(again.chassis_id, info.chassis_id) == 0);
	fuzz_check(strcmp(again.port_id, info.port_id) == 0);
	fuzz_check(strcmp(again.agent_id, info.agent_id) == 0);
	fuzz_check(again.ttl == info.ttl);
	return 0;
}
