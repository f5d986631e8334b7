/* One connected RC queue pair for another engine (the ring all-reduce):
 * the verbs engine's device, GID and connect steps without its test loops.
 * The caller owns the buffer and drives the queue pair from its own thread
 * (see verbs.h). */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "log.h"
#include "verbs_int.h"

struct verbs_link {
	struct verbs_test t; /* ctx, pd, cq, q[0], local, peer, p */
	struct ibv_comp_channel *ch;
	struct ibv_mr *mr;
	uint32_t max_msg;
	unsigned sq_depth, rq_depth;
};

struct verbs_link *verbs_link_new(const struct verbs_setup *s,
				  unsigned sq_depth, unsigned rq_depth,
				  struct verbs_endpoint *local, char *why,
				  size_t len)
{
	struct verbs_link *l = calloc(1, sizeof(*l));
	struct ibv_qp_init_attr ia;
	struct ibv_port_attr pa;
	unsigned ifindex = 0;
	uint32_t rnd;

	*why = '\0';
	if (!l) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	l->t.efd = -1;
	l->sq_depth = sq_depth;
	l->rq_depth = rq_depth;
	l->t.p.tx_depth = sq_depth; /* verbs_query checks it */
	snprintf(l->t.peer_name, sizeof(l->t.peer_name), "%s",
		 s->peer ? s->peer : "");
	if (s->interface && *s->interface) {
		ifindex = if_nametoindex(s->interface);
		if (!ifindex) {
			snprintf(why, len, "no interface %s", s->interface);
			goto fail;
		}
	}
	l->t.ctx = verbs_open(s, ifindex, l->t.local.device,
			      sizeof(l->t.local.device), why, len);
	if (!l->t.ctx)
		goto fail;
	if (verbs_pick_gid(&l->t, ifindex, s, why, len) < 0 ||
	    verbs_query(&l->t, why, len) < 0)
		goto fail;
	if (ibv_query_port(l->t.ctx, (uint8_t)l->t.local.port, &pa) == 0)
		l->max_msg = pa.max_msg_sz;
	l->t.pd = ibv_alloc_pd(l->t.ctx);
	if (!l->t.pd) {
		snprintf(why, len, "ibv_alloc_pd(%s): %s", l->t.local.device,
			 strerror(errno));
		goto fail;
	}
	/* Completions wake the caller's poll() through this channel: no
	 * spinning while a peer takes its time. */
	l->ch = ibv_create_comp_channel(l->t.ctx);
	if (!l->ch || fcntl(l->ch->fd, F_SETFL,
			    fcntl(l->ch->fd, F_GETFL) | O_NONBLOCK) < 0) {
		snprintf(why, len, "ibv_create_comp_channel(%s): %s",
			 l->t.local.device, strerror(errno));
		goto fail;
	}
	l->t.cq = ibv_create_cq(l->t.ctx, (int)(sq_depth + rq_depth), NULL,
				l->ch, 0);
	if (!l->t.cq) {
		snprintf(why, len, "ibv_create_cq(%u entries): %s",
			 sq_depth + rq_depth, strerror(errno));
		goto fail;
	}
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = l->t.cq;
	ia.recv_cq = l->t.cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = sq_depth;
	ia.cap.max_recv_wr = rq_depth;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	l->t.q[0].qp = ibv_create_qp(l->t.pd, &ia);
	if (!l->t.q[0].qp) {
		snprintf(why, len, "ibv_create_qp(%s): %s", l->t.local.device,
			 strerror(errno));
		goto fail;
	}
	l->t.n_qp = 1;
	if (verbs_qp_to_init(&l->t, l->t.q[0].qp)) {
		snprintf(why, len, "ibv_modify_qp(INIT): %s", strerror(errno));
		goto fail;
	}
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		snprintf(why, len, "getrandom: %s", strerror(errno));
		goto fail;
	}
	l->t.local.qpn[0] = l->t.q[0].qp->qp_num;
	l->t.local.psn[0] = rnd & 0xffffff;
	l->t.local.n_qp = 1;
	*local = l->t.local;
	return l;
fail:
	verbs_link_free(l);
	return NULL;
}

int verbs_link_reg(struct verbs_link *l, void *buf, size_t len,
		   int remote_write, struct verbs_endpoint *local, char *why,
		   size_t wlen)
{
	int access = IBV_ACCESS_LOCAL_WRITE;

	if (remote_write)
		access |= IBV_ACCESS_REMOTE_WRITE;
	l->mr = ibv_reg_mr(l->t.pd, buf, len, access);
	if (!l->mr) {
		snprintf(why, wlen,
			 "ibv_reg_mr of %zu KiB on %s failed: %s (the "
			 "locked-memory limit, LimitMEMLOCK?)",
			 len >> 10, l->t.local.device, strerror(errno));
		return -1;
	}
	l->t.local.rkey = remote_write ? l->mr->rkey : 0;
	l->t.local.addr = remote_write ? (uint64_t)(uintptr_t)buf : 0;
	l->t.local.length = remote_write ? len : 0;
	*local = l->t.local;
	return 0;
}

int verbs_link_connect(struct verbs_link *l, const struct verbs_endpoint *peer,
		       unsigned ack_timeout, char *why, size_t len)
{
	int e;

	if (peer->n_qp != 1 || !peer->mtu) {
		snprintf(why, len, "malformed peer endpoint");
		return -1;
	}
	l->t.peer = *peer;
	l->t.p.ack_timeout = ack_timeout;
	if (peer->rd_atomic && peer->rd_atomic < l->t.rd_atom)
		l->t.rd_atom = peer->rd_atomic;
	e = verbs_qp_to_rts(&l->t, 0);
	if (e) {
		snprintf(why, len, "%s", l->t.conn_why);
		return -1;
	}
	return 0;
}

int verbs_link_post_write(struct verbs_link *l, const void *src, uint32_t n,
			  uint64_t raddr, uint32_t rkey, int imm, uint32_t data,
			  int signaled, uint64_t wr_id)
{
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)src,
			      .length = n,
			      .lkey = l->mr ? l->mr->lkey : 0};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	wr.imm_data = htobe32(data);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return -ibv_post_send(l->t.q[0].qp, &wr, &bad);
}

int verbs_link_post_send(struct verbs_link *l, uint32_t data, uint64_t wr_id)
{
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htobe32(data);
	return -ibv_post_send(l->t.q[0].qp, &wr, &bad);
}

int verbs_link_post_recv(struct verbs_link *l, uint64_t wr_id)
{
	struct ibv_recv_wr wr, *bad;

	/* No scatter list: what arrives is a WRITE's immediate data or a
	 * zero-length SEND. */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	return -ibv_post_recv(l->t.q[0].qp, &wr, &bad);
}

int verbs_link_poll(struct verbs_link *l, struct ibv_wc *wc, int n)
{
	return ibv_poll_cq(l->t.cq, n, wc);
}

int verbs_link_fd(const struct verbs_link *l)
{
	return l->ch->fd;
}

int verbs_link_arm(struct verbs_link *l)
{
	struct ibv_cq *cq;
	void *ctx;

	/* Take (and acknowledge) what woke us, then ask for the next. */
	while (ibv_get_cq_event(l->ch, &cq, &ctx) == 0)
		ibv_ack_cq_events(cq, 1);
	return -ibv_req_notify_cq(l->t.cq, 0);
}

uint32_t verbs_link_max_msg(const struct verbs_link *l)
{
	return l->max_msg;
}

int verbs_link_explain(const struct verbs_link *l, enum ibv_wc_status st,
		       uint64_t ok_before, char *out, size_t len)
{
	return verbs_explain_wc(st, ok_before, &l->t.local, &l->t.peer,
				l->t.peer_name, out, len);
}

void verbs_link_free(struct verbs_link *l)
{
	if (!l)
		return;
	if (l->t.q[0].qp && ibv_destroy_qp(l->t.q[0].qp))
		log_warnx("verbs: ibv_destroy_qp failed");
	if (l->mr && ibv_dereg_mr(l->mr))
		log_warnx("verbs: ibv_dereg_mr failed");
	if (l->t.cq && ibv_destroy_cq(l->t.cq))
		log_warnx("verbs: ibv_destroy_cq failed");
	if (l->ch && ibv_destroy_comp_channel(l->ch))
		log_warnx("verbs: ibv_destroy_comp_channel failed");
	if (l->t.pd && ibv_dealloc_pd(l->t.pd))
		log_warnx("verbs: ibv_dealloc_pd failed");
	if (l->t.ctx)
		ibv_close_device(l->t.ctx);
	free(l);
}
