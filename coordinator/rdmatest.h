/* RDMA (verbs) tests between two agents. No agent listens for RDMA: the
 * coordinator carries each side's endpoint (QP numbers, GID, rkey) to the
 * other over the authenticated sessions. B (target) is set up first, then
 * A (requester); their GIDs must agree; B is connected, then A, which runs
 * the test; when A's result is in, B is stopped. Whatever fails, every
 * side already set up is stopped, so no agent keeps QPs or pinned memory.
 * The pure rules (which port can run RDMA, GID agreement) are rules.h. */
#ifndef RING_RDMATEST_H
#define RING_RDMATEST_H

#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "ring.pb-c.h"

struct rdmatest_spec {
	const char *a, *a_if, *a_dev; /* requester; a_dev "" = agent picks */
	const char *b, *b_if, *b_dev; /* target (and responder) */
	int adjacent;		      /* 1 neighbours, 0 not, -1 unknown */
	const Ring__TestParams *params;
};

struct rdmatest;
/* The assembled report (valid during the call); the test is freed after
 * the callback returns. */
typedef void (*rdmatest_cb)(const Ring__TestReport *rep, void *arg);

/* Start: B's RdmaSetup is sent now. NULL with errno (ENOTCONN when B is
 * not up). */
struct rdmatest *rdmatest_start(const struct call_iface *ci,
				const struct rdmatest_spec *s, rdmatest_cb cb,
				void *arg);
/* Stop every side that was set up, forget the test; no callback. */
void rdmatest_cancel(struct rdmatest *t);
/* The report's words for an agent's "no data-plane path" (its error, and
 * the path_detail it sent): "not ring neighbours" only when adjacent is
 * 0 (no published edge joins a and b); otherwise both ends (a_end,
 * b_end: node, function, port, netdev), the agent's facts, and what
 * fails this way between real neighbours (wrong function, ARP flux). */
void rdmatest_no_path_text(const char *a, const char *a_end, const char *b,
			   const char *b_end, int adjacent, const char *error,
			   const char *detail, char *out, size_t len);

#endif
