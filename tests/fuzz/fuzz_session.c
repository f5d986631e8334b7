/* libFuzzer target for the coordinator's agent sessions and pending calls:
 * the input is a script of what an authenticated agent sends (Hello,
 * Inventory, NeighbourTable, raw envelopes of any type, replies with
 * guessed, duplicated or stale request ids, in any order) interleaved with
 * the coordinator starting and cancelling calls to it. The real session
 * code (agents.c, conn.c, validate.c, nodes.c) runs over a socketpair
 * instead of TLS; the certificate identity is given. Invariant checked:
 * every call gets at most one interim and exactly one final outcome, never
 * after it was cancelled. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "coordinator/agents.h"
#include "coordinator/coord_conf.h"
#include "coordinator/nodes.h"
#include "frame.h"
#include "log.h"

#include "fuzzcheck.h"

#define FUZZ_CALLS 16

struct fuzz_call {
	struct call *c;
	uint64_t id;
	int live;
	int interim; /* declared an interim reply type */
	unsigned interims, finals;
};

/* What ring-coordinator's coord.c wires together, minus TLS. */
static struct {
	struct event_base *base;
	struct nodes *nodes;
	struct agents *agents;
	const struct call_iface *calls;
} co;
static struct coord_conf conf;
static struct fuzz_call calls[FUZZ_CALLS];

static const Ring__Envelope__BodyCase fuzz_types[] = {
	RING__ENVELOPE__BODY_ERROR,
	RING__ENVELOPE__BODY_HELLO,
	RING__ENVELOPE__BODY_HEARTBEAT,
	RING__ENVELOPE__BODY_INVENTORY,
	RING__ENVELOPE__BODY_NEIGHBOUR_TABLE,
	RING__ENVELOPE__BODY_PROBE_REPLY,
	RING__ENVELOPE__BODY_TEST_LISTEN_REPLY,
	RING__ENVELOPE__BODY_TEST_RESULT,
	RING__ENVELOPE__BODY_RDMA_ENDPOINT,
	RING__ENVELOPE__BODY_ACK,
	RING__ENVELOPE__BODY_STATUS_REQUEST,
};
#define FUZZ_NTYPES (sizeof(fuzz_types) / sizeof(fuzz_types[0]))

static const char *const fuzz_names[] = {"n1", "n2", "n3", "coordinator"};

static void fuzz_reply(const Ring__Envelope *env, int err, void *arg)
{
	struct fuzz_call *fc = arg;

	fuzz_check(fc->live);
	fuzz_check(fc->finals == 0);
	if (!env)
		fuzz_check(err == -ETIMEDOUT || err == -ECONNRESET);
	/* Only a call that declared an interim type may see one, once, and
	 * it stays pending after it. */
	if (env && env->body_case == RING__ENVELOPE__BODY_TEST_LISTEN_REPLY) {
		fuzz_check(fc->interim);
		fc->interims++;
		fuzz_check(fc->interims == 1);
		return;
	}
	if (env)
		fuzz_check(
			env->body_case == RING__ENVELOPE__BODY_ERROR ||
			env->body_case ==
				(fc->interim
					 ? RING__ENVELOPE__BODY_TEST_RESULT
					 : RING__ENVELOPE__BODY_PROBE_REPLY));
	fc->finals++;
	fc->live = 0;
	fc->c = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_init("fuzz_session", NULL, 1);
	signal(SIGPIPE, SIG_IGN); /* as ring-coordinator does */
	coord_conf_defaults(&conf);
	snprintf(conf.listen_host, sizeof(conf.listen_host), "127.0.0.1");
	conf.listen_port = 0;
	co.base = event_base_new();
	co.nodes = nodes_new();
	fuzz_check(co.base && co.nodes);
	fuzz_check(nodes_get(co.nodes, "n1", 8) != NULL);
	nodes_find(co.nodes, "n1")->expected = 1;
	co.agents = agents_new(co.base, NULL, &conf, co.nodes);
	fuzz_check(co.agents != NULL);
	co.calls = agents_calls(co.agents);
	return 0;
}

static void fuzz_send(int fd, uint64_t id, uint16_t type, const uint8_t *body,
		      size_t len)
{
	uint8_t hdr[FRAME_HEADER_LEN + 16];
	uint8_t tag[16];
	size_t t = 0, n;
	uint64_t v;

	/* Envelope: request_id (field 1, varint), then the body as field
	 * `type` (length-delimited). */
	if (id) {
		tag[t++] = 0x08;
		for (v = id; v >= 0x80; v >>= 7)
			tag[t++] = (uint8_t)(v | 0x80);
		tag[t++] = (uint8_t)v;
	}
	for (v = (uint64_t)type << 3 | 2; v >= 0x80; v >>= 7)
		tag[t++] = (uint8_t)(v | 0x80);
	tag[t++] = (uint8_t)v;
	for (v = len; v >= 0x80; v >>= 7)
		tag[t++] = (uint8_t)(v | 0x80);
	tag[t++] = (uint8_t)v;
	frame_header_encode(hdr, type, (uint32_t)(t + len));
	n = FRAME_HEADER_LEN;
	memcpy(hdr + n, tag, t);
	n += t;
	/* A full socket buffer only means the coordinator stopped reading:
	 * drop the rest of this frame, the stream desynchronises, which is
	 * one more thing a peer can do. */
	if (write(fd, hdr, n) < 0 || (len && write(fd, body, len) < 0))
		return;
}

static void fuzz_drain(int fd)
{
	uint8_t buf[65536];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static void fuzz_spin(int fd)
{
	for (int i = 0; i < 4; i++) {
		event_base_loop(co.base, EVLOOP_NONBLOCK);
		fuzz_drain(fd);
	}
}

static void fuzz_hello(int fd, uint8_t which)
{
	Ring__Hello h = RING__HELLO__INIT;
	uint8_t buf[256];
	size_t n;

	h.node = (char *)fuzz_names[which % 4];
	h.agent_version = "fuzz";
	n = ring__hello__get_packed_size(&h);
	fuzz_check(n <= sizeof(buf));
	ring__hello__pack(&h, buf);
	fuzz_send(fd, 1, RING__ENVELOPE__BODY_HELLO, buf, n);
}

static void fuzz_start_call(uint8_t sel)
{
	struct fuzz_call *fc = &calls[sel % FUZZ_CALLS];
	Ring__Envelope req = RING__ENVELOPE__INIT;
	Ring__ProbeRequest pr = RING__PROBE_REQUEST__INIT;
	int interim = sel & 0x80;

	if (fc->live)
		return;
	req.body_case = RING__ENVELOPE__BODY_PROBE_REQUEST;
	req.probe_request = &pr;
	memset(fc, 0, sizeof(*fc));
	fc->live = 1;
	fc->c = call_start(co.calls, "n1", &req, 60000,
			   interim ? RING__ENVELOPE__BODY_TEST_LISTEN_REPLY : 0,
			   interim ? RING__ENVELOPE__BODY_TEST_RESULT
				   : RING__ENVELOPE__BODY_PROBE_REPLY,
			   fuzz_reply, fc);
	if (!fc->c) {
		fc->live = 0;
		return;
	}
	fc->id = req.request_id;
	fc->interim = !!interim;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	struct bufferevent *bev;
	size_t off = 0;

	if (size < 1)
		return 0;
	fuzz_check(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	fuzz_check(fcntl(sv[1], F_SETFL, O_NONBLOCK) == 0);
	evutil_make_socket_nonblocking(sv[0]);
	bev = bufferevent_socket_new(co.base, sv[0], BEV_OPT_CLOSE_ON_FREE);
	fuzz_check(bev != NULL);
	fuzz_check(agents_attach(co.agents, bev, "192.0.2.1",
				 fuzz_names[data[0] % 4]) == 0);
	off = 1;
	while (off < size) {
		uint8_t op = data[off++];
		uint8_t arg = off < size ? data[off++] : 0;
		uint64_t id;
		size_t len;

		switch (op % 6) {
		case 0:
			fuzz_hello(sv[1], arg);
			break;
		case 1:
			fuzz_start_call(arg);
			break;
		case 2:
			if (calls[arg % FUZZ_CALLS].live) {
				call_cancel(co.calls,
					    calls[arg % FUZZ_CALLS].c);
				calls[arg % FUZZ_CALLS].live = 0;
				calls[arg % FUZZ_CALLS].c = NULL;
			}
			break;
		case 3:
		case 4:
			/* A message of a chosen type with the next bytes as
			 * its body; the request id of a (maybe finished)
			 * call, or 0. */
			len = off < size ? data[off++] : 0;
			if (len > size - off)
				len = size - off;
			id = (arg & 0x10) ? calls[arg % FUZZ_CALLS].id : 0;
			if (op & 0x40)
				id = arg;
			fuzz_send(sv[1], id,
				  (uint16_t)fuzz_types[(op >> 3) % FUZZ_NTYPES],
				  data + off, len);
			off += len;
			break;
		default:
			fuzz_spin(sv[1]);
			break;
		}
	}
	fuzz_spin(sv[1]);
	/* The agent goes away: every call still live ends exactly once. */
	close(sv[1]);
	for (int i = 0;
	     i < 64 && (agents_pending(co.agents) || agents_active(co.agents));
	     i++)
		event_base_loop(co.base, EVLOOP_NONBLOCK);
	fuzz_check(agents_pending(co.agents) == 0);
	fuzz_check(agents_active(co.agents) == 0);
	for (int i = 0; i < FUZZ_CALLS; i++) {
		fuzz_check(!calls[i].live);
		memset(&calls[i], 0, sizeof(calls[i]));
	}
	return 0;
}
