/* Frames on the wire: header, bounded unpacking, copies, blocking fd I/O. */
#include "frame.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = (v >> 16) & 0xff;
	p[2] = (v >> 8) & 0xff;
	p[3] = v & 0xff;
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

void frame_header_encode(uint8_t out[FRAME_HEADER_LEN], uint16_t type,
			 uint32_t length)
{
	put_be32(out, FRAME_MAGIC);
	put_be16(out + 4, FRAME_VERSION);
	put_be16(out + 6, type);
	put_be32(out + 8, length);
}

int frame_header_decode(const uint8_t in[FRAME_HEADER_LEN], uint32_t max_len,
			struct frame_header *h)
{
	memset(h, 0, sizeof(*h));
	if (get_be32(in) != FRAME_MAGIC)
		return -EBADMSG;
	h->version = get_be16(in + 4);
	h->type = get_be16(in + 6);
	h->length = get_be32(in + 8);
	if (h->version != FRAME_VERSION)
		return -EPROTONOSUPPORT;
	if (h->length > max_len)
		return -EMSGSIZE;
	return 0;
}

const char *frame_strerror(int err)
{
	switch (err) {
	case -EBADMSG:
		return "malformed frame (bad magic or unpackable message)";
	case -EPROTONOSUPPORT:
		return "unsupported protocol version";
	case -EMSGSIZE:
		return "frame larger than the allowed maximum";
	case -ENOTSUP:
		return "unknown message type";
	case -ETIMEDOUT:
		return "timed out";
	case -ECONNRESET:
		return "connection closed by peer";
	default:
		return strerror(-err);
	}
}

/* A type is a member of the Envelope's body oneof. */
static const ProtobufCFieldDescriptor *frame_type_field(uint16_t type)
{
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field(
			&ring__envelope__descriptor, type);

	return f && (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) ? f : NULL;
}

/* protobuf-c 1.4 accepts a field number 0 written as an overlong varint
 * (e.g. 80 00) and keeps it as an unknown field, then packs it back as the
 * single byte 00, which its own unpacker refuses: such a message would pass
 * here and break whoever receives it relayed (an Inventory inside an
 * InventoryReply). Field number 0 is invalid protobuf, so refuse it anywhere
 * in the tree. */
static int frame_tags_valid(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	const char *base = (const char *)m;
	unsigned i;
	size_t j;

	for (i = 0; i < m->n_unknown_fields; i++)
		if (m->unknown_fields[i].tag == 0)
			return 0;
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const ProtobufCMessage *sub;

		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n =
				*(const size_t *)(base + f->quantifier_offset);
			ProtobufCMessage *const *v =
				*(ProtobufCMessage *const *const *)(base +
								    f->offset);

			for (j = 0; j < n; j++)
				if (!frame_tags_valid(v[j]))
					return 0;
			continue;
		}
		/* Oneof members share one slot: only the chosen one is set. */
		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    *(const uint32_t *)(base + f->quantifier_offset) != f->id)
			continue;
		sub = *(ProtobufCMessage *const *)(base + f->offset);
		if (sub && !frame_tags_valid(sub))
			return 0;
	}
	return 1;
}

/* What unpacking may allocate. A message of empty sub-messages costs ~2
 * bytes each on the wire and ~100 unpacked: without a bound, one 1 MiB frame
 * becomes 100 MiB of memory before anyone looks at it. Every byte comes from
 * malloc, so frame_free (the default allocator) releases it as usual. */
struct frame_budget {
	size_t left;
};

static void *frame_budget_alloc(void *data, size_t size)
{
	struct frame_budget *b = data;

	if (size > b->left)
		return NULL;
	b->left -= size;
	return malloc(size);
}

static void frame_budget_free(void *data, void *p)
{
	(void)data;
	free(p);
}

static Ring__Envelope *frame_unpack_ratio(uint32_t len, const uint8_t *payload,
					  size_t ratio)
{
	struct frame_budget b = {.left = (size_t)len * ratio +
					 FRAME_UNPACK_SLACK};
	ProtobufCAllocator a = {.alloc = frame_budget_alloc,
				.free = frame_budget_free,
				.allocator_data = &b};

	return ring__envelope__unpack(&a, len, payload);
}

Ring__Envelope *frame_unpack_bounded(uint32_t len, const uint8_t *payload)
{
	return frame_unpack_ratio(len, payload, FRAME_UNPACK_RATIO);
}

static Ring__Envelope *frame_decode_ratio(const struct frame_header *h,
					  const uint8_t *payload, size_t ratio,
					  int *err)
{
	Ring__Envelope *env;

	if (!frame_type_field(h->type)) {
		*err = -ENOTSUP;
		return NULL;
	}
	env = frame_unpack_ratio(h->length, payload, ratio);
	if (!env) {
		*err = -EBADMSG;
		return NULL;
	}
	if ((unsigned)env->body_case != h->type ||
	    !frame_tags_valid(&env->base)) {
		ring__envelope__free_unpacked(env, NULL);
		*err = -EBADMSG;
		return NULL;
	}
	*err = 0;
	return env;
}

Ring__Envelope *frame_decode(const struct frame_header *h,
			     const uint8_t *payload, int *err)
{
	return frame_decode_ratio(h, payload, FRAME_UNPACK_RATIO, err);
}

void *frame_copy(const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(n ? n : 1);
	void *copy;

	if (!buf)
		return NULL;
	protobuf_c_message_pack(m, buf);
	copy = protobuf_c_message_unpack(m->descriptor, NULL, n, buf);
	free(buf);
	return copy;
}

void frame_free(Ring__Envelope *env)
{
	if (env)
		ring__envelope__free_unpacked(env, NULL);
}

int frame_encode(const Ring__Envelope *env, uint8_t **buf, size_t *len)
{
	size_t n = ring__envelope__get_packed_size(env);
	uint8_t *p;

	if (env->body_case == RING__ENVELOPE__BODY__NOT_SET)
		return -EINVAL;
	if (n > UINT32_MAX)
		return -EMSGSIZE;
	p = malloc(FRAME_HEADER_LEN + n);
	if (!p)
		return -ENOMEM;
	frame_header_encode(p, (uint16_t)env->body_case, (uint32_t)n);
	ring__envelope__pack(env, p + FRAME_HEADER_LEN);
	*buf = p;
	*len = FRAME_HEADER_LEN + n;
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for fd readiness until the deadline (or forever when deadline < 0). */
static int fd_wait(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	int left, rc;

	for (;;) {
		left = deadline < 0 ? -1 : (int)(deadline - now_ms());
		if (deadline >= 0 && left <= 0)
			return -ETIMEDOUT;
		rc = poll(&pfd, 1, left);
		if (rc > 0)
			return 0;
		if (rc == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int read_full(int fd, uint8_t *buf, size_t len, int64_t deadline)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n;
		int rc = fd_wait(fd, POLLIN, deadline);

		if (rc < 0)
			return rc;
		n = read(fd, buf + got, len - got);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

int frame_read_fd(int fd, uint32_t max_len, int timeout_ms,
		  Ring__Envelope **out)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	uint8_t hdr[FRAME_HEADER_LEN];
	struct frame_header h;
	uint8_t *payload;
	int rc;

	rc = read_full(fd, hdr, sizeof(hdr), deadline);
	if (rc < 0)
		return rc;
	rc = frame_header_decode(hdr, max_len, &h);
	if (rc < 0)
		return rc;
	payload = malloc(h.length ? h.length : 1);
	if (!payload)
		return -ENOMEM;
	rc = read_full(fd, payload, h.length, deadline);
	/* ringctl reading its coordinator's reply, within the max_len it
	 * chose: a status of a thousand expected nodes that never connected
	 * is a thousand near-empty records, ~10x their size unpacked. */
	if (rc == 0)
		*out = frame_decode_ratio(&h, payload, FRAME_UNPACK_RATIO_REPLY,
					  &rc);
	free(payload);
	return rc;
}

int frame_write_fd(int fd, const Ring__Envelope *env, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	uint8_t *buf;
	size_t len, off = 0;
	int rc = frame_encode(env, &buf, &len);

	if (rc < 0)
		return rc;
	while (off < len) {
		ssize_t n;

		rc = fd_wait(fd, POLLOUT, deadline);
		if (rc < 0)
			break;
		n = write(fd, buf + off, len - off);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			rc = -errno;
			break;
		}
		off += (size_t)n;
	}
	free(buf);
	return off == len ? 0 : rc;
}

const char *frame_type_name(uint16_t type)
{
	const ProtobufCFieldDescriptor *f = frame_type_field(type);

	return f ? f->name : "unknown";
}
