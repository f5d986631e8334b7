#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"

/* ---- helpers ---- */

static uint8_t *encode(const Ring__Envelope *env, size_t *len)
{
	uint8_t *buf = NULL;

	assert_int_equal(frame_encode(env, &buf, len), 0);
	assert_non_null(buf);
	assert_true(*len >= FRAME_HEADER_LEN);
	return buf;
}

/* Encode, check the header, decode: what a peer would see. */
static Ring__Envelope *roundtrip(const Ring__Envelope *env)
{
	struct frame_header h;
	Ring__Envelope *out;
	size_t len;
	uint8_t *buf = encode(env, &len);
	int err = 1;

	assert_int_equal(frame_header_decode(buf, FRAME_MAX_DEFAULT, &h), 0);
	assert_int_equal(h.version, FRAME_VERSION);
	assert_int_equal(h.type, env->body_case);
	assert_int_equal(h.length, len - FRAME_HEADER_LEN);
	out = frame_decode(&h, buf + FRAME_HEADER_LEN, &err);
	assert_int_equal(err, 0);
	assert_non_null(out);
	assert_int_equal(out->body_case, env->body_case);
	assert_int_equal(out->request_id, env->request_id);
	free(buf);
	return out;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000,
			      .tv_nsec = (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/* ---- header ---- */

static void test_header_roundtrip(void **state)
{
	static const uint8_t want[FRAME_HEADER_LEN] = {
		'R', 'I', 'N', 'G', 0, 1, 0, 17, 0, 0, 0x04, 0xd2,
	};
	uint8_t buf[FRAME_HEADER_LEN];
	struct frame_header h;

	(void)state;
	frame_header_encode(buf, 17, 1234);
	assert_memory_equal(buf, want, sizeof(want));
	memset(&h, 0xaa, sizeof(h));
	assert_int_equal(frame_header_decode(buf, FRAME_MAX_DEFAULT, &h), 0);
	assert_int_equal(h.version, 1);
	assert_int_equal(h.type, 17);
	assert_int_equal(h.length, 1234);

	/* Extremes survive, and the maximum itself is allowed. */
	frame_header_encode(buf, 0xffff, 0xffffffffu);
	assert_int_equal(frame_header_decode(buf, UINT32_MAX, &h), 0);
	assert_int_equal(h.type, 0xffff);
	assert_int_equal(h.length, 0xffffffffu);
	frame_header_encode(buf, 20, 0);
	assert_int_equal(frame_header_decode(buf, 0, &h), 0);
	assert_int_equal(h.length, 0);
	frame_header_encode(buf, 20, 4096);
	assert_int_equal(frame_header_decode(buf, 4096, &h), 0);
}

static void test_header_errors(void **state)
{
	uint8_t buf[FRAME_HEADER_LEN];
	struct frame_header h;

	(void)state;
	frame_header_encode(buf, 17, 10);
	buf[0] = 'r';
	assert_int_equal(frame_header_decode(buf, FRAME_MAX_DEFAULT, &h),
			 -EBADMSG);
	frame_header_encode(buf, 17, 10);
	buf[3] ^= 1;
	assert_int_equal(frame_header_decode(buf, FRAME_MAX_DEFAULT, &h),
			 -EBADMSG);

	frame_header_encode(buf, 17, 10);
	buf[5] = 2;
	assert_int_equal(frame_header_decode(buf, FRAME_MAX_DEFAULT, &h),
			 -EPROTONOSUPPORT);
	buf[4] = 1; /* version 258 */
	assert_int_equal(frame_header_decode(buf, FRAME_MAX_DEFAULT, &h),
			 -EPROTONOSUPPORT);
	buf[4] = 0;
	buf[5] = 0;
	assert_int_equal(frame_header_decode(buf, FRAME_MAX_DEFAULT, &h),
			 -EPROTONOSUPPORT);

	frame_header_encode(buf, 17, 4097);
	assert_int_equal(frame_header_decode(buf, 4096, &h), -EMSGSIZE);
	frame_header_encode(buf, 17, 0xffffffffu);
	assert_int_equal(frame_header_decode(buf, FRAME_MAX_DEFAULT, &h),
			 -EMSGSIZE);

	assert_non_null(strstr(frame_strerror(-EBADMSG), "malformed"));
	assert_non_null(strstr(frame_strerror(-EPROTONOSUPPORT), "version"));
	assert_non_null(strstr(frame_strerror(-EMSGSIZE), "maximum"));
	assert_non_null(strstr(frame_strerror(-ENOTSUP), "unknown"));
	assert_non_null(frame_strerror(-ENOENT));
}

static void test_type_names(void **state)
{
	(void)state;
	assert_string_equal(frame_type_name(RING__ENVELOPE__BODY_HELLO),
			    "hello");
	assert_string_equal(frame_type_name(RING__ENVELOPE__BODY_STATUS_REPLY),
			    "status_reply");
	assert_string_equal(frame_type_name(1), "unknown"); /* request_id */
	assert_string_equal(frame_type_name(0), "unknown");
	assert_string_equal(frame_type_name(99), "unknown");
}

/* ---- payload decoding ---- */

static void test_decode_unknown_type(void **state)
{
	static const uint8_t payload[] = {0x08, 0x01};
	struct frame_header h = {.version = 1, .length = sizeof(payload)};
	static const uint16_t types[] = {99, 1, 0, 15, 0xffff};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int err = 0;

		h.type = types[i];
		assert_null(frame_decode(&h, payload, &err));
		assert_int_equal(err, -ENOTSUP);
	}
}

static void test_decode_mismatch(void **state)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__Hello hello = RING__HELLO__INIT;
	Ring__StatusRequest sr = RING__STATUS_REQUEST__INIT;
	struct frame_header h;
	uint8_t *buf;
	size_t len;
	int err = 0;

	(void)state;
	hello.node = "node1";
	env.body_case = RING__ENVELOPE__BODY_HELLO;
	env.hello = &hello;
	buf = encode(&env, &len);
	assert_int_equal(frame_header_decode(buf, FRAME_MAX_DEFAULT, &h), 0);
	/* A Hello body behind a Heartbeat header. */
	h.type = RING__ENVELOPE__BODY_HEARTBEAT;
	assert_null(frame_decode(&h, buf + FRAME_HEADER_LEN, &err));
	assert_int_equal(err, -EBADMSG);
	free(buf);

	/* No body at all, behind a known type. */
	h.type = RING__ENVELOPE__BODY_STATUS_REQUEST;
	h.length = 0;
	err = 0;
	assert_null(frame_decode(&h, (const uint8_t *)"", &err));
	assert_int_equal(err, -EBADMSG);

	/* An empty message is still a body. */
	env.body_case = RING__ENVELOPE__BODY_STATUS_REQUEST;
	env.status_request = &sr;
	frame_free(roundtrip(&env));
}

static void test_decode_garbage(void **state)
{
	static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__Hello hello = RING__HELLO__INIT;
	struct frame_header h = {.version = 1, .type = 17};
	uint8_t *buf;
	size_t len;
	int err = 0;

	(void)state;
	h.length = sizeof(garbage);
	assert_null(frame_decode(&h, garbage, &err));
	assert_int_equal(err, -EBADMSG);

	/* A valid Hello cut short: the string runs past the end. */
	hello.node = "a-node-name-long-enough";
	env.body_case = RING__ENVELOPE__BODY_HELLO;
	env.hello = &hello;
	buf = encode(&env, &len);
	h.length = (uint32_t)(len - FRAME_HEADER_LEN - 3);
	err = 0;
	assert_null(frame_decode(&h, buf + FRAME_HEADER_LEN, &err));
	assert_int_equal(err, -EBADMSG);
	free(buf);

	/* Nothing to encode without a body. */
	env.body_case = RING__ENVELOPE__BODY__NOT_SET;
	assert_int_equal(frame_encode(&env, &buf, &len), -EINVAL);
	frame_free(NULL);
}

static Ring__Envelope *decode_raw(uint16_t type, const uint8_t *p, size_t n,
				  int *err)
{
	struct frame_header h = {.version = 1, .type = type};

	h.length = (uint32_t)n;
	*err = 1;
	return frame_decode(&h, p, err);
}

/* Unknown fields are kept for newer peers, but field number 0 is not
 * protobuf: protobuf-c takes it in overlong form (80 00) and would pack it
 * back as a byte it refuses itself (found by fuzz_frame). */
static void test_decode_unknown_fields(void **state)
{
	/* Heartbeat{seq=1, field 99 = 1}. */
	static const uint8_t newer[] = {0x9a, 0x01, 0x05, 0x08,
					0x01, 0x98, 0x06, 0x01};
	/* Heartbeat{seq=1, field 0 = 0}. */
	static const uint8_t zero[] = {0x9a, 0x01, 0x05, 0x08,
				       0x01, 0x80, 0x00, 0x00};
	/* Inventory{interfaces[0]{name="x", field 0 = 0}}: deep inside. */
	static const uint8_t deep[] = {0xa2, 0x01, 0x08, 0x2a, 0x06, 0x0a,
				       0x01, 0x78, 0x80, 0x00, 0x00};
	Ring__Envelope *env, *again;
	uint8_t *buf;
	size_t len;
	int err;

	(void)state;
	env = decode_raw(RING__ENVELOPE__BODY_HEARTBEAT, newer, sizeof(newer),
			 &err);
	assert_non_null(env);
	assert_int_equal(err, 0);
	assert_int_equal(env->heartbeat->seq, 1);
	assert_int_equal(env->heartbeat->base.n_unknown_fields, 1);
	/* Relayed as received. */
	buf = encode(env, &len);
	assert_int_equal(len, FRAME_HEADER_LEN + sizeof(newer));
	assert_memory_equal(buf + FRAME_HEADER_LEN, newer, sizeof(newer));
	again = roundtrip(env);
	assert_int_equal(again->heartbeat->base.n_unknown_fields, 1);
	frame_free(again);
	frame_free(env);
	free(buf);

	assert_null(decode_raw(RING__ENVELOPE__BODY_HEARTBEAT, zero,
			       sizeof(zero), &err));
	assert_int_equal(err, -EBADMSG);
	assert_null(decode_raw(RING__ENVELOPE__BODY_INVENTORY, deep,
			       sizeof(deep), &err));
	assert_int_equal(err, -EBADMSG);
}

/* ---- schema round trips ---- */

/* One value of field f: want and got point at it in the two messages. */
static void assert_same_value(const ProtobufCFieldDescriptor *f,
			      const void *want, const void *got,
			      const char *path);

/* How wide one value of the type is in a repeated field's array. */
static size_t value_size(ProtobufCType type)
{
	switch (type) {
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	default:
		return 4;
	}
}

/* An integer field of 4 or 8 bytes, widened (an int32 as its bits). */
static uint64_t load_uint(const void *p, size_t size)
{
	uint32_t v32;
	uint64_t v64;

	if (size == sizeof(v64)) {
		memcpy(&v64, p, sizeof(v64));
		return v64;
	}
	memcpy(&v32, p, sizeof(v32));
	return v32;
}

/* Every field of got as in want, field by field down the descriptors, so
 * a round trip's case is stated once, as the message sent. A string left
 * NULL in want means "" (what proto3 sends for it); the first field that
 * differs is named by its path. */
static void assert_same_msg(const ProtobufCMessage *want,
			    const ProtobufCMessage *got, const char *path)
{
	const ProtobufCMessageDescriptor *d = want->descriptor;

	if (!got)
		print_error("%s: missing\n", path);
	assert_non_null(got);
	assert_ptr_equal(got->descriptor, d);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *w = (const char *)want + f->offset;
		const char *g = (const char *)got + f->offset;
		size_t wn, gn, size = value_size(f->type);
		char sub[512];

		snprintf(sub, sizeof(sub), "%s.%s", path, f->name);
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			uint32_t wc, gc;

			memcpy(&wc, (const char *)want + f->quantifier_offset,
			       sizeof(wc));
			memcpy(&gc, (const char *)got + f->quantifier_offset,
			       sizeof(gc));
			assert_int_equal(gc, wc);
			if (wc == f->id)
				assert_same_value(f, w, g, sub);
			continue;
		}
		if (f->label != PROTOBUF_C_LABEL_REPEATED) {
			assert_same_value(f, w, g, sub);
			continue;
		}
		memcpy(&wn, (const char *)want + f->quantifier_offset,
		       sizeof(wn));
		memcpy(&gn, (const char *)got + f->quantifier_offset,
		       sizeof(gn));
		if (gn != wn)
			print_error("%s: %zu elements, want %zu\n", sub, gn,
				    wn);
		assert_int_equal(gn, wn);
		for (size_t j = 0; j < wn; j++) {
			const char *wa = *(const char *const *)w;
			const char *ga = *(const char *const *)g;
			char elem[600];

			snprintf(elem, sizeof(elem), "%s[%zu]", sub, j);
			assert_same_value(f, wa + j * size, ga + j * size,
					  elem);
		}
	}
}

static void assert_same_value(const ProtobufCFieldDescriptor *f,
			      const void *want, const void *got,
			      const char *path)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING: {
		const char *w = *(const char *const *)want;
		const char *g = *(const char *const *)got;

		if (!g || strcmp(g, w ? w : ""))
			print_error("%s\n", path);
		assert_non_null(g);
		assert_string_equal(g, w ? w : "");
		return;
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessage *w =
			*(const ProtobufCMessage *const *)want;
		const ProtobufCMessage *g =
			*(const ProtobufCMessage *const *)got;

		if (w)
			assert_same_msg(w, g, path);
		else
			assert_null(g);
		return;
	}
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *w = want, *g = got;

		if (g->len != w->len)
			print_error("%s\n", path);
		assert_int_equal(g->len, w->len);
		if (w->len)
			assert_memory_equal(g->data, w->data, w->len);
		return;
	}
	case PROTOBUF_C_TYPE_DOUBLE: {
		double w, g;

		memcpy(&w, want, sizeof(w));
		memcpy(&g, got, sizeof(g));
		if (g != w)
			print_error("%s: %g, want %g\n", path, g, w);
		assert_true(g == w);
		return;
	}
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_ENUM:
	case PROTOBUF_C_TYPE_BOOL: {
		uint64_t w = load_uint(want, value_size(f->type));
		uint64_t g = load_uint(got, value_size(f->type));

		if (g != w)
			print_error("%s\n", path);
		assert_int_equal(g, w);
		return;
	}
	default:
		fail_msg("%s: type %d not compared here", path, f->type);
	}
}

/* Send env through encode and decode; what comes back is env. */
static void assert_roundtrip(const Ring__Envelope *env)
{
	Ring__Envelope *out = roundtrip(env);

	assert_same_msg(&env->base, &out->base, "envelope");
	frame_free(out);
}

#define MSG(name) .base = PROTOBUF_C_MESSAGE_INIT(&ring__##name##__descriptor)

static char *hello_caps[] = {"inventory", "verbs"};
static Ring__Hello case_hello = {MSG(hello), .node = "spark-1",
				 .agent_version = "0.1.0", .n_capabilities = 2,
				 .capabilities = hello_caps};

static Ring__Error case_error = {MSG(error),
				 .code = RING__ERROR_CODE__ERROR_UNSUPPORTED,
				 .text = "unknown message type 99"};

/* One node of the reference cluster: management NIC plus one of the twin
 * PCIe halves of a ConnectX-7 port, with its RDMA device and GIDs. */
static Ring__Ipv4Address *mgmt_addrs[] = {
	&(Ring__Ipv4Address){MSG(ipv4_address), .address = "192.168.1.11",
			     .prefix = 24},
	&(Ring__Ipv4Address){MSG(ipv4_address), .address = "10.0.0.11",
			     .prefix = 8},
};

static Ring__Gid *gids[] = {
	&(Ring__Gid){MSG(gid), .index = 0,
		     .gid = "fe80:0000:0000:0000:a288:c2ff:fe00:0001",
		     .type = "RoCE v1", .netdev = "enP2p1s0f0np0"},
	&(Ring__Gid){MSG(gid), .index = 1,
		     .gid = "fe80:0000:0000:0000:a288:c2ff:fe00:0001",
		     .type = "RoCE v2", .netdev = "enP2p1s0f0np0"},
};

static Ring__RdmaPort *ports[] = {
	&(Ring__RdmaPort){MSG(rdma_port), .port = 1, .state = "ACTIVE",
			  .active_speed_gbps = 100.0, .active_width = 4,
			  .active_mtu = 4096, .link_layer = "Ethernet",
			  .netdev = "enP2p1s0f0np0", .n_gids = 2, .gids = gids},
};

static Ring__RdmaDevice *rdma_devices[] = {
	&(Ring__RdmaDevice){MSG(rdma_device), .name = "roceP2p1s0f0",
			    .node_guid = "a288:c2ff:fe00:0001",
			    .fw_ver = "28.39.1002", .n_ports = 1,
			    .ports = ports},
};

static Ring__NetInterface *interfaces[] = {
	&(Ring__NetInterface){MSG(net_interface), .name = "enP7s7",
			      .ifindex = 2, .mac = "aa:bb:cc:00:00:01",
			      .n_ipv4 = 2, .ipv4 = mgmt_addrs, .mtu = 1500,
			      .admin_up = 1, .carrier = 1, .speed_mbps = 1000,
			      .management = 1},
	&(Ring__NetInterface){
		MSG(net_interface), .name = "enP2p1s0f0np0", .ifindex = 5,
		.mtu = 9000, .admin_up = 1, .operstate = "up", .carrier = 1,
		.speed_mbps = -1, .nominal_speed_mbps = 200000,
		.pci_address = "0002:01:00.0",
		.pcie_link_speed = "32.0 GT/s PCIe", .pcie_link_width = 4,
		.pcie_max_link_speed = "32.0 GT/s PCIe",
		.pcie_max_link_width = 4, .pcie_gbps = 126.03,
		.rdma_device = "roceP2p1s0f0", .up_no_address = 1,
		.driver = "mlx5_core"},
};

static Ring__Inventory case_inventory = {
	MSG(inventory),
	.node = "spark-1",
	.hostname = "spark-1.lab",
	.mgmt_address = "192.168.1.11",
	.mgmt_interface = "enP7s7",
	.n_interfaces = 2,
	.interfaces = interfaces,
	.n_rdma_devices = 1,
	.rdma_devices = rdma_devices,
	.memory =
		&(Ring__Memory){MSG(memory), .total_kib = 128ull * 1024 * 1024,
				.available_kib = 100ull * 1024 * 1024},
	.kernel = "6.8.0-1013-nvidia",
};

static char *unaddressed[] = {"enp1s0f0np0", "enp1s0f1np1"};
static Ring__NodeStatus *nodes[] = {
	&(Ring__NodeStatus){
		MSG(node_status), .node = "spark-1", .expected = 1,
		.state = "up", .mgmt_address = "192.168.1.11",
		.connected_since_ms = 1700000000000ull,
		.last_seen_ms = 1700000005000ull, .agent_version = "0.1.0",
		.n_interfaces = 5, .n_rdma_devices = 4, .n_unaddressed_up = 2,
		.unaddressed_up = unaddressed, .mem_total_kib = 131072000,
		.mem_available_kib = 99999},
	&(Ring__NodeStatus){MSG(node_status), .node = "spark-2", .expected = 1,
			    .state = "down", .down_since_ms = 1700000001000ull,
			    .down_reason = "heartbeat timeout"},
	&(Ring__NodeStatus){MSG(node_status), .node = "spark-4",
			    .state = "never"},
};

static Ring__StatusReply case_status_reply = {
	MSG(status_reply),  .coordinator = "coord",
	.version = "0.1.0", .now_ms = 1700000006000ull,
	.n_expected = 3,    .n_connected = 1,
	.n_nodes = 3,	    .nodes = nodes,
};

/* Each message kind through encode and decode, compared field by field. */
static void test_schema_roundtrips(void **state)
{
	Ring__Envelope cases[] = {
		{MSG(envelope), .request_id = 42,
		 .body_case = RING__ENVELOPE__BODY_HELLO, .hello = &case_hello},
		{MSG(envelope), .request_id = UINT64_MAX,
		 .body_case = RING__ENVELOPE__BODY_ERROR, .error = &case_error},
		{MSG(envelope), .body_case = RING__ENVELOPE__BODY_INVENTORY,
		 .inventory = &case_inventory},
		{MSG(envelope), .request_id = 3,
		 .body_case = RING__ENVELOPE__BODY_STATUS_REPLY,
		 .status_reply = &case_status_reply},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_roundtrip(&cases[i]);
}

/* ---- descriptor I/O ---- */

/* A peer that writes data in pieces of the given sizes (the last repeated
 * until done) with a pause between them, then optionally closes. */
struct feeder {
	int fd;
	const uint8_t *data;
	size_t len;
	const size_t *pieces;
	size_t n_pieces;
	int pause_ms;
	int close_after;
	pthread_t thread;
};

static void *feeder_run(void *arg)
{
	struct feeder *f = arg;
	size_t off = 0, i = 0;

	while (off < f->len) {
		size_t n = f->pieces[i < f->n_pieces ? i : f->n_pieces - 1];
		ssize_t w;

		if (n > f->len - off)
			n = f->len - off;
		w = write(f->fd, f->data + off, n);
		if (w <= 0)
			break;
		off += (size_t)w;
		i++;
		if (off < f->len)
			sleep_ms(f->pause_ms);
	}
	if (f->close_after)
		close(f->fd);
	return NULL;
}

static void feeder_start(struct feeder *f)
{
	assert_int_equal(pthread_create(&f->thread, NULL, feeder_run, f), 0);
}

static void feeder_join(struct feeder *f)
{
	assert_int_equal(pthread_join(f->thread, NULL), 0);
}

static uint8_t *hello_frame(size_t *len)
{
	Ring__Envelope env = RING__ENVELOPE__INIT;
	Ring__Hello hello = RING__HELLO__INIT;

	hello.node = "spark-3";
	hello.agent_version = "0.1.0";
	env.request_id = 9;
	env.body_case = RING__ENVELOPE__BODY_HELLO;
	env.hello = &hello;
	return encode(&env, len);
}

static void check_hello(Ring__Envelope *env)
{
	assert_non_null(env);
	assert_int_equal(env->body_case, RING__ENVELOPE__BODY_HELLO);
	assert_int_equal(env->request_id, 9);
	assert_string_equal(env->hello->node, "spark-3");
	assert_string_equal(env->hello->agent_version, "0.1.0");
}

/* A hello frame fed in pieces (the last piece size repeats), pause_ms
 * apart: read whole. */
static void test_read_fd_pieces(void **state)
{
	static const size_t one[] = {1}, split[] = {5, 7, 1000};
	static const struct {
		const char *name;
		const size_t *pieces;
		size_t n_pieces;
		int pause_ms;
	} cases[] = {
		{"bytewise", one, 1, 1},
		{"split header", split, 3, 30},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		Ring__Envelope *env = NULL;
		struct feeder f = {.pieces = cases[i].pieces,
				   .n_pieces = cases[i].n_pieces,
				   .pause_ms = cases[i].pause_ms};
		int sv[2];

		print_message("case '%s'\n", cases[i].name);
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		f.fd = sv[1];
		f.data = hello_frame(&f.len);
		feeder_start(&f);
		assert_int_equal(
			frame_read_fd(sv[0], FRAME_MAX_DEFAULT, 10000, &env),
			0);
		feeder_join(&f);
		check_hello(env);
		frame_free(env);
		free((void *)f.data);
		close(sv[0]);
		close(sv[1]);
	}
}

/* frame_read_fd on fd with a 100 ms deadline times out after about that. */
static void expect_read_timeout(int fd, Ring__Envelope **env)
{
	int64_t t0 = mono_ms(), dt;

	assert_int_equal(frame_read_fd(fd, FRAME_MAX_DEFAULT, 100, env),
			 -ETIMEDOUT);
	dt = mono_ms() - t0;
	assert_true(dt >= 95 && dt < 2000);
}

static void test_read_fd_timeout(void **state)
{
	Ring__Envelope *env = NULL;
	uint8_t *buf;
	size_t len;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	expect_read_timeout(sv[0], &env);
	assert_null(env);

	/* The deadline covers the whole frame, not each read. */
	buf = hello_frame(&len);
	assert_int_equal(write(sv[1], buf, FRAME_HEADER_LEN + 1),
			 FRAME_HEADER_LEN + 1);
	expect_read_timeout(sv[0], &env);
	free(buf);
	close(sv[0]);
	close(sv[1]);
}

static void test_read_fd_eof(void **state)
{
	static const size_t all[] = {4096};
	Ring__Envelope *env = NULL;
	struct feeder f = {.pieces = all, .n_pieces = 1, .close_after = 1};
	uint8_t *buf;
	size_t len;
	int sv[2];

	(void)state;
	buf = hello_frame(&len);
	f.data = buf;

	/* Closed mid-payload, then mid-header. */
	const size_t cut[] = {len - 2, 5};

	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		print_message("closed after %zu bytes\n", cut[i]);
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		f.fd = sv[1];
		f.len = cut[i];
		feeder_start(&f);
		assert_int_equal(
			frame_read_fd(sv[0], FRAME_MAX_DEFAULT, 5000, &env),
			-ECONNRESET);
		feeder_join(&f);
		close(sv[0]);
	}

	/* Closed before anything. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	assert_int_equal(frame_read_fd(sv[0], FRAME_MAX_DEFAULT, 5000, &env),
			 -ECONNRESET);
	close(sv[0]);
	assert_null(env);
	free(buf);
}

/* An oversized length is refused from the header alone: the bytes behind it
 * are still unread afterwards, and nothing of 4 GiB was allocated (the
 * sanitizer build would abort on that). */
static void test_read_fd_oversized(void **state)
{
	uint8_t hdr[FRAME_HEADER_LEN + 3];
	Ring__Envelope *env = NULL;
	char rest[8] = "";
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	frame_header_encode(hdr, RING__ENVELOPE__BODY_HELLO, 0xffffffffu);
	memcpy(hdr + FRAME_HEADER_LEN, "XYZ", 3);
	assert_int_equal(write(sv[1], hdr, sizeof(hdr)), sizeof(hdr));
	assert_int_equal(frame_read_fd(sv[0], FRAME_MAX_DEFAULT, 1000, &env),
			 -EMSGSIZE);
	assert_null(env);
	close(sv[1]);
	assert_int_equal(read(sv[0], rest, sizeof(rest)), 3);
	assert_string_equal(rest, "XYZ");
	close(sv[0]);

	/* Just over a small maximum, too. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	frame_header_encode(hdr, RING__ENVELOPE__BODY_HELLO, 65);
	assert_int_equal(write(sv[1], hdr, FRAME_HEADER_LEN), FRAME_HEADER_LEN);
	assert_int_equal(frame_read_fd(sv[0], 64, 1000, &env), -EMSGSIZE);
	close(sv[0]);
	close(sv[1]);
}

/* Header errors surface from the descriptor reader too; an unknown type
 * consumes its payload so that the next frame still parses. */
static void test_read_fd_errors_keep_sync(void **state)
{
	uint8_t hdr[FRAME_HEADER_LEN + 4];
	Ring__Envelope *env = NULL;
	uint8_t *buf;
	size_t len;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	frame_header_encode(hdr, 99, 4);
	memcpy(hdr + FRAME_HEADER_LEN, "\x08\x01\x08\x02", 4);
	assert_int_equal(write(sv[1], hdr, sizeof(hdr)), sizeof(hdr));
	buf = hello_frame(&len);
	assert_int_equal(write(sv[1], buf, len), (ssize_t)len);
	assert_int_equal(frame_read_fd(sv[0], FRAME_MAX_DEFAULT, 1000, &env),
			 -ENOTSUP);
	assert_null(env);
	assert_int_equal(frame_read_fd(sv[0], FRAME_MAX_DEFAULT, 1000, &env),
			 0);
	check_hello(env);
	frame_free(env);
	env = NULL;

	frame_header_encode(hdr, 17, 0);
	hdr[0] = 'X';
	assert_int_equal(write(sv[1], hdr, FRAME_HEADER_LEN), FRAME_HEADER_LEN);
	assert_int_equal(frame_read_fd(sv[0], FRAME_MAX_DEFAULT, 1000, &env),
			 -EBADMSG);
	frame_header_encode(hdr, 17, 0);
	hdr[5] = 2;
	assert_int_equal(write(sv[1], hdr, FRAME_HEADER_LEN), FRAME_HEADER_LEN);
	assert_int_equal(frame_read_fd(sv[0], FRAME_MAX_DEFAULT, 1000, &env),
			 -EPROTONOSUPPORT);
	assert_null(env);
	free(buf);
	close(sv[0]);
	close(sv[1]);
}

static void test_write_fd_roundtrip(void **state)
{
	Ring__Envelope env = RING__ENVELOPE__INIT, *out = NULL;
	Ring__Heartbeat hb = RING__HEARTBEAT__INIT;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	hb.seq = 123456789012ull;
	hb.mem_available_kib = 42;
	env.body_case = RING__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	assert_int_equal(frame_write_fd(sv[1], &env, 1000), 0);
	assert_int_equal(frame_read_fd(sv[0], FRAME_MAX_DEFAULT, 1000, &out),
			 0);
	assert_int_equal(out->body_case, RING__ENVELOPE__BODY_HEARTBEAT);
	assert_int_equal(out->heartbeat->seq, 123456789012ull);
	assert_int_equal(out->heartbeat->mem_available_kib, 42);
	frame_free(out);

	env.body_case = RING__ENVELOPE__BODY__NOT_SET;
	assert_int_equal(frame_write_fd(sv[1], &env, 1000), -EINVAL);
	close(sv[0]);
	close(sv[1]);
}

/* A status of 2,000 expected nodes that never connected: records of a
 * name and a state, ~10x their wire size unpacked. A daemon refuses such
 * a ratio from a peer; ringctl reads it from its coordinator. */
static void test_read_fd_sparse_reply(void **state)
{
	enum { N = 2000 };
	Ring__StatusReply sr = RING__STATUS_REPLY__INIT;
	Ring__NodeStatus *ns = calloc(N, sizeof(*ns));
	Ring__NodeStatus **nsp = calloc(N, sizeof(*nsp));
	char(*names)[16] = calloc(N, sizeof(*names));
	Ring__Envelope env = RING__ENVELOPE__INIT, *got = NULL, *d;
	struct frame_header h;
	uint8_t *buf;
	size_t len;
	int sv[2], err;

	(void)state;
	assert_non_null(ns);
	assert_non_null(nsp);
	assert_non_null(names);
	for (int i = 0; i < N; i++) {
		ring__node_status__init(&ns[i]);
		snprintf(names[i], sizeof(names[i]), "n%04d", i);
		ns[i].node = names[i];
		ns[i].state = "never";
		nsp[i] = &ns[i];
	}
	sr.nodes = nsp;
	sr.n_nodes = N;
	env.body_case = RING__ENVELOPE__BODY_STATUS_REPLY;
	env.status_reply = &sr;
	assert_int_equal(frame_encode(&env, &buf, &len), 0);
	/* The daemons' bound refuses it... */
	assert_int_equal(frame_header_decode(buf, FRAME_MAX_DEFAULT, &h), 0);
	d = frame_decode(&h, buf + FRAME_HEADER_LEN, &err);
	assert_null(d);
	assert_int_equal(err, -EBADMSG);
	/* ...ringctl's reads it whole. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[1], buf, len), (ssize_t)len);
	assert_int_equal(frame_read_fd(sv[0], FRAME_MAX_DEFAULT, 1000, &got),
			 0);
	assert_non_null(got);
	assert_int_equal(got->status_reply->n_nodes, N);
	assert_string_equal(got->status_reply->nodes[N - 1]->node, "n1999");
	frame_free(got);
	close(sv[0]);
	close(sv[1]);
	free(buf);
	free(names);
	free(nsp);
	free(ns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_roundtrip),
		cmocka_unit_test(test_read_fd_sparse_reply),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_decode_unknown_type),
		cmocka_unit_test(test_decode_mismatch),
		cmocka_unit_test(test_decode_garbage),
		cmocka_unit_test(test_decode_unknown_fields),
		cmocka_unit_test(test_schema_roundtrips),
		cmocka_unit_test(test_read_fd_pieces),
		cmocka_unit_test(test_read_fd_timeout),
		cmocka_unit_test(test_read_fd_eof),
		cmocka_unit_test(test_read_fd_oversized),
		cmocka_unit_test(test_read_fd_errors_keep_sync),
		cmocka_unit_test(test_write_fd_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
