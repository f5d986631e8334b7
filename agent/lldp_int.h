/* LLDP's private parts, shared by lldp_tlv.c (the frame encoder and
 * decoder) and lldp.c (sockets, per-port tables, expiry). Not for other
 * modules: they use lldp.h. */
#ifndef RING_LLDP_INT_H
#define RING_LLDP_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lldp.h"

#define LLDP_ID_MAX 255 /* chassis / port id octets (802.1AB) */
#define LLDP_AGENT_ID_MAX (sizeof(((struct lldp_info *)0)->agent_id) - 1)

/* The LLDP nearest-bridge group address frames go to. */
extern const uint8_t lldp_mcast[6];

/* Length of s if it is 1..max printable characters, else -1. */
ssize_t lldp_str_check(const char *s, size_t max);

#endif
