/* Wire framing: a fixed 12-byte big-endian header followed by one packed
 * ring.Envelope.
 *
 *   0      4        6     8        12
 *   "RING" version  type  length   payload (length bytes)
 *
 * type is the Envelope body's field number; length is checked against the
 * receiver's maximum before any allocation. */
#ifndef RING_FRAME_H
#define RING_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "ring.pb-c.h"

#define FRAME_MAGIC 0x52494e47u /* "RING" */
#define FRAME_VERSION 1
#define FRAME_HEADER_LEN 12
#define FRAME_MAX_DEFAULT (1u << 20)
/* Unpacking a payload of n bytes may allocate at most n * RATIO + SLACK
 * bytes; past that the frame is refused as malformed (-EBADMSG). Real
 * messages unpack to 2-5 times their size. */
#define FRAME_UNPACK_RATIO 8
/* frame_read_fd (ringctl, reading its own coordinator's replies). */
#define FRAME_UNPACK_RATIO_REPLY 64
#define FRAME_UNPACK_SLACK (64u << 10)

struct frame_header {
	uint16_t version;
	uint16_t type;
	uint32_t length;
};

void frame_header_encode(uint8_t out[FRAME_HEADER_LEN], uint16_t type,
			 uint32_t length);
/* 0, or -EBADMSG (bad magic), -EPROTONOSUPPORT (version), -EMSGSIZE (length
 * over max_len). */
int frame_header_decode(const uint8_t in[FRAME_HEADER_LEN], uint32_t max_len,
			struct frame_header *h);
/* Text for the negative codes of this module, for logs and peers. */
const char *frame_strerror(int err);

/* Unpack a payload whose header was accepted. Returns the envelope or NULL
 * with *err = -EBADMSG (unpackable, or body does not match the header type)
 * or -ENOTSUP (type unknown to this version; the caller should answer
 * Error{UNSUPPORTED} and keep the session). */
Ring__Envelope *frame_decode(const struct frame_header *h,
			     const uint8_t *payload, int *err);
void frame_free(Ring__Envelope *env);
/* A deep copy of any message (free it with its own free_unpacked), or
 * NULL when out of memory. */
void *frame_copy(const ProtobufCMessage *m);
/* ring__envelope__unpack within the bound above (no type checks): for a
 * payload whose type this version does not know. NULL if refused. */
Ring__Envelope *frame_unpack_bounded(uint32_t len, const uint8_t *payload);

/* Pack header + envelope into a new malloc'd buffer. 0 or -errno. */
int frame_encode(const Ring__Envelope *env, uint8_t **buf, size_t *len);

/* Blocking descriptor I/O with an overall deadline (ms, <0 = none); used by
 * ringctl. Reads loop until the frame is complete. 0 or -errno (-ETIMEDOUT,
 * -ECONNRESET on EOF, or the header codes above). */
int frame_read_fd(int fd, uint32_t max_len, int timeout_ms,
		  Ring__Envelope **out);
int frame_write_fd(int fd, const Ring__Envelope *env, int timeout_ms);

/* Human name of a message type, "unknown" if none. */
const char *frame_type_name(uint16_t type);

#endif
