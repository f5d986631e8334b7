/* The verbs engine's operator-facing error texts: what a failed RTR or
 * work completion means for the link between two nodes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs_int.h"

int verbs_conn_no_path(const struct verbs_test *t)
{
	return t->conn_no_path;
}

static const char *verbs_peer_gid(const struct verbs_endpoint *peer)
{
	return peer && *peer->gid_str ? peer->gid_str : "?";
}

int verbs_explain_rtr(int e, const struct verbs_endpoint *local,
		      const struct verbs_endpoint *peer, const char *peer_name,
		      char *out, size_t len)
{
	if (e == ETIMEDOUT || e == ENETUNREACH || e == EHOSTUNREACH ||
	    e == ENODATA) {
		snprintf(out, len,
			 "ibv_modify_qp(RTR) failed: %s: no data-plane path "
			 "from %s (%s) to %s (%s); these nodes are not ring "
			 "neighbours (the rank-order failure of the field "
			 "notes)",
			 strerror(e), local->netdev, local->gid_str,
			 peer_name ? peer_name : "the peer",
			 verbs_peer_gid(peer));
		return 1;
	}
	snprintf(out, len, "ibv_modify_qp(RTR) towards %s (%s): %s",
		 peer_name ? peer_name : "the peer", verbs_peer_gid(peer),
		 strerror(e));
	return 0;
}

int verbs_explain_wc(enum ibv_wc_status st, uint64_t ok_before,
		     const struct verbs_endpoint *local,
		     const struct verbs_endpoint *peer, const char *peer_name,
		     char *out, size_t len)
{
	const char *who = peer_name && *peer_name ? peer_name : "the peer";
	int no_path = 0;

	switch (st) {
	case IBV_WC_RETRY_EXC_ERR:
		no_path = !ok_before;
		if (!ok_before)
			snprintf(out, len,
				 "transport retry exceeded: no data-plane "
				 "path from %s (%s) to %s; these nodes are "
				 "not ring neighbours (the rank-order failure "
				 "of the field notes)",
				 local->netdev, local->gid_str,
				 verbs_peer_gid(peer));
		else
			snprintf(out, len,
				 "transport retry exceeded after %llu "
				 "messages: %s stopped answering (its agent, "
				 "its port or the cable went away mid-test)",
				 (unsigned long long)ok_before, who);
		break;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		snprintf(out, len,
			 "receiver-not-ready retry exceeded: %s posted no "
			 "receive buffer",
			 who);
		break;
	case IBV_WC_REM_ACCESS_ERR:
		snprintf(out, len,
			 "remote access error: %s refused the memory key or "
			 "address (its test was torn down?)",
			 who);
		break;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR:
		snprintf(out, len, "%s rejected the request: %s", who,
			 ibv_wc_status_str(st));
		break;
	case IBV_WC_WR_FLUSH_ERR:
		snprintf(out, len,
			 "work request flushed: the queue pair went to the "
			 "error state");
		break;
	default:
		snprintf(out, len, "work completion error: %s (%d)",
			 ibv_wc_status_str(st), (int)st);
		break;
	}
	return no_path;
}
