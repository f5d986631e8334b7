/* The verbs engine's connect step: the peer's data checked, the worker
 * started, each queue pair taken INIT -> RTR -> RTS (in the worker). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs_int.h"

/* Local ACK timeout 4.096 us * 2^14 = 67 ms (perftest's), 6 retries: a
 * peer that is not there shows as IBV_WC_RETRY_EXC_ERR after about 0.5 s.
 * Not 7: soft-RoCE (and the IB spec for RNR) reads 7 as "retry forever",
 * and a missing path would hang. A test may ask for a longer timeout
 * (RdmaParams.ack_timeout, NCCL_IB_TIMEOUT): with 20, NCCL's, a dead path
 * takes about 30 s to fail. */
#define VERBS_QP_TIMEOUT TESTLIMITS_RDMA_ACK_TIMEOUT_DEFAULT
#define VERBS_RETRY_CNT 6
#define VERBS_RNR_RETRY 6

static enum ibv_mtu verbs_mtu_enum(unsigned bytes)
{
	switch (bytes) {
	case 256:
		return IBV_MTU_256;
	case 512:
		return IBV_MTU_512;
	case 1024:
		return IBV_MTU_1024;
	case 2048:
		return IBV_MTU_2048;
	default:
		return IBV_MTU_4096;
	}
}

unsigned verbs_path_mtu(unsigned local_mtu, unsigned peer_mtu, unsigned asked)
{
	unsigned mtu = local_mtu < peer_mtu ? local_mtu : peer_mtu;

	return asked && asked < mtu ? asked : mtu;
}

/* The peer's INIT -> RTR -> RTS for queue pair i; errno-style result. */
int verbs_qp_to_rts(struct verbs_test *t, unsigned i)
{
	unsigned mtu = verbs_path_mtu(t->local.mtu, t->peer.mtu, t->p.mtu);
	struct ibv_qp_attr a;
	int e;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = verbs_mtu_enum(mtu);
	a.dest_qp_num = t->peer.qpn[i];
	a.rq_psn = t->peer.psn[i];
	a.max_dest_rd_atomic = (uint8_t)t->rd_atom;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = (uint8_t)t->local.port;
	a.ah_attr.dlid = (uint16_t)t->peer.lid;
	/* What NCCL_IB_SL / NCCL_IB_TC set (NCCL's net_ib connect.cc fills
	 * the same two fields): on RoCE the SL maps to the 802.1p priority
	 * and the traffic class to DSCP/ECN, which pick the PFC lossless
	 * class. Ranges checked by testlimits_check. */
	a.ah_attr.sl = (uint8_t)t->p.service_level;
	if (!t->is_ib || t->local.gid_index) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, t->peer.gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)t->local.gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.grh.traffic_class = (uint8_t)t->p.traffic_class;
	}
	e = ibv_modify_qp(t->q[i].qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER);
	if (e) {
		t->conn_no_path =
			verbs_explain_rtr(e, &t->local, &t->peer, t->peer_name,
					  t->conn_why, sizeof(t->conn_why));
		return -e;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)(t->p.ack_timeout ? t->p.ack_timeout
					       : VERBS_QP_TIMEOUT);
	a.retry_cnt = VERBS_RETRY_CNT;
	a.rnr_retry = VERBS_RNR_RETRY;
	a.sq_psn = t->local.psn[i];
	a.max_rd_atomic = (uint8_t)t->rd_atom;
	e = ibv_modify_qp(t->q[i].qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC);
	if (e) {
		snprintf(t->conn_why, sizeof(t->conn_why),
			 "ibv_modify_qp(RTS): %s", strerror(e));
		return -e;
	}
	return 0;
}

int verbs_connect(struct verbs_test *t, const struct verbs_endpoint *peer,
		  char *why, size_t len)
{
	int rc;

	if (atomic_load(&t->phase) != VP_SETUP) {
		snprintf(why, len, "test already connected or finished");
		errno = EALREADY;
		return -1;
	}
	if (peer->n_qp != t->n_qp) {
		snprintf(why, len, "the peer has %u queue pairs, this side %u",
			 peer->n_qp, t->n_qp);
		errno = EINVAL;
		return -1;
	}
	if (peer->length < t->buf_len &&
	    peer->length < verbs_params_memory(&t->p)) {
		snprintf(why, len,
			 "the peer's buffer (%llu bytes) is smaller than the "
			 "test needs",
			 (unsigned long long)peer->length);
		errno = EINVAL;
		return -1;
	}
	if (!peer->mtu) {
		snprintf(why, len, "the peer gave no MTU");
		errno = EINVAL;
		return -1;
	}
	t->peer = *peer;
	/* A requester may have no more READs in flight than the peer serves
	 * (else the peer NAKs them): agree on the smaller. */
	if (peer->rd_atomic && peer->rd_atomic < t->rd_atom)
		t->rd_atom = peer->rd_atomic;
	atomic_store(&t->phase, VP_CONNECTING);
	rc = pthread_create(&t->tid, NULL, verbs_worker, t);
	if (rc) {
		snprintf(why, len, "cannot start the worker: %s", strerror(rc));
		atomic_store(&t->phase, VP_SETUP);
		errno = rc;
		return -1;
	}
	t->thread_started = 1;
	return 0;
}
