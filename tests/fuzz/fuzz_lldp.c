/* libFuzzer target for the LLDP decoder: the input is one received
 * Ethernet frame, from anyone. Whatever decodes must be sane (terminated,
 * printable, non-empty ids) and must survive a re-encode as one of our
 * frames: decoding that gives the same fields back. Decoded frames then
 * feed one neighbour table that lives across inputs (on one of three
 * ports, by the source MAC's last byte), which must keep its bounds: at
 * most LLDP_MAX_PER_PORT claims per port, TTLs clamped. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "agent/lldp.h"

#include "fuzzcheck.h"

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

static void fuzz_table(const struct lldp_info *info)
{
	static const char *const ports[] = {"eth1", "eth2", "eth3"};
	static struct event_base *base;
	static struct lldp *l;
	static struct lldp_neighbour nb[LLDP_MAX_NEIGHBOURS];
	struct lldp_port_stats ps[LLDP_MAX_PORTS];
	size_t n, np;

	if (!l) {
		base = event_base_new();
		fuzz_check(base);
		l = lldp_new(base, "fuzz", "fuzz-agent", 1000, NULL, NULL);
		fuzz_check(l);
	}
	fuzz_check(lldp_input(l, ports[info->src_mac[5] % 3], info) == 0);
	n = lldp_neighbours(l, nb, LLDP_MAX_NEIGHBOURS);
	fuzz_check(n <= 3 * LLDP_MAX_PER_PORT);
	for (size_t i = 0; i < n; i++) {
		fuzz_check(nb[i].ttl >= 1 && nb[i].ttl <= LLDP_MAX_TTL_S);
		fuzz_check(strcmp(nb[i].remote_agent_id, "fuzz-agent") != 0);
	}
	np = lldp_ports(l, ps, LLDP_MAX_PORTS);
	fuzz_check(np <= 3);
	for (size_t i = 0; i < np; i++)
		fuzz_check(ps[i].neighbours <= LLDP_MAX_PER_PORT);
}

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
	fuzz_table(&info);
	return 0;
}
