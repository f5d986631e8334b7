/* libFuzzer target for the wire framing: the input is a byte stream of
 * frames, as a peer would send it. Every envelope that decodes must encode
 * again, and that encoding must decode to the same message. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

#define FUZZ_FRAME_MAX (64u * 1024)

#include "fuzzcheck.h"

/* Re-encode env (decoded from a header of type type) and decode it again. */
static void fuzz_reencode(const Ring__Envelope *env, uint16_t type)
{
	struct frame_header h;
	Ring__Envelope *again;
	uint8_t *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0;
	int err = 0;

	fuzz_check(frame_encode(env, &buf, &len) == 0);
	/* Re-encoding can grow a message (e.g. a short negative varint), so
	 * the second pass is not held to the first one's maximum. */
	fuzz_check(frame_header_decode(buf, UINT32_MAX, &h) == 0);
	fuzz_check(h.type == type);
	fuzz_check(h.length == len - FRAME_HEADER_LEN);
	again = frame_decode(&h, buf + FRAME_HEADER_LEN, &err);
	if (!again) {
		/* Normalising can shrink the wire (overlong varints) below
		 * what the unpacking budget of its size allows: a refusal,
		 * never a different message. */
		fuzz_check(err == -EBADMSG);
		again = ring__envelope__unpack(NULL, h.length,
					       buf + FRAME_HEADER_LEN);
		fuzz_check(again != NULL);
	}
	fuzz_check(again->body_case == env->body_case);
	fuzz_check(again->request_id == env->request_id);
	/* After one normalising pass the encoding is a fixed point. */
	fuzz_check(frame_encode(again, &buf2, &len2) == 0);
	fuzz_check(len2 == len && memcmp(buf, buf2, len) == 0);
	frame_free(again);
	free(buf2);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (size - off >= FRAME_HEADER_LEN) {
		struct frame_header h;
		Ring__Envelope *env;
		uint8_t *payload;
		int err = 0, rc;

		rc = frame_header_decode(data + off, FUZZ_FRAME_MAX, &h);
		if (rc < 0) {
			fuzz_check(rc == -EBADMSG || rc == -EPROTONOSUPPORT ||
				   rc == -EMSGSIZE);
			break; /* a stream cannot resync after a bad header */
		}
		off += FRAME_HEADER_LEN;
		if (h.length > size - off)
			break; /* truncated: a reader would wait for more */
		/* An exact-size copy, so that any read past the payload is
		 * caught by the sanitizer rather than landing in the input. */
		payload = malloc(h.length ? h.length : 1);
		fuzz_check(payload != NULL);
		memcpy(payload, data + off, h.length);
		off += h.length;
		env = frame_decode(&h, payload, &err);
		if (env) {
			fuzz_check(err == 0);
			fuzz_check((unsigned)env->body_case == h.type);
			fuzz_reencode(env, h.type);
			frame_free(env);
		} else {
			/* Unknown types and bad bodies: the session goes on. */
			fuzz_check(err == -EBADMSG || err == -ENOTSUP);
		}
		free(payload);
	}
	return 0;
}
