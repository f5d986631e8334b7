/* rxe-probe: one RDMA WRITE from device A to device B, both opened by this
 * one process (the test VM's devices are all local, so no out-of-band
 * exchange is needed). Unlike perftest and ibv_rc_pingpong, which hardcode
 * retry_cnt 7 (rxe treats 7 as "retry forever"), the transport retry count
 * is a parameter, so a pair without a data path ends with
 * "transport retry counter exceeded" in bounded time.
 *
 *   rxe-probe [-r RETRY_CNT] [-t TIMEOUT_EXP] [-w SECONDS] DEV_A GIDX_A DEV_B GIDX_B
 *
 * Exit: 0 written and verified, 1 error completion, 2 setup error,
 * 3 no completion within -w seconds. Built by tests/rdma/vm.sh. */
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUF 4096

struct side {
	const char *name;
	int gidx;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	union ibv_gid gid;
	char *buf;
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int side_open(struct side *s)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list) {
		perror("rxe-probe: ibv_get_device_list");
		return -1;
	}
	for (int i = 0; i < n && !s->ctx; i++)
		if (strcmp(ibv_get_device_name(list[i]), s->name) == 0)
			s->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!s->ctx) {
		fprintf(stderr, "rxe-probe: cannot open device %s\n", s->name);
		return -1;
	}
	s->buf = calloc(1, BUF);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = s->pd ? ibv_create_cq(s->ctx, 4, NULL, NULL, 0) : NULL;
	s->mr = s->cq && s->buf ? ibv_reg_mr(s->pd, s->buf, BUF,
					     IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_WRITE)
				: NULL;
	struct ibv_qp_init_attr qa = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 1,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1},
	};
	s->qp = s->mr ? ibv_create_qp(s->pd, &qa) : NULL;
	if (!s->qp) {
		fprintf(stderr, "rxe-probe: %s: cannot create pd/cq/mr/qp\n",
			s->name);
		return -1;
	}
	if (ibv_query_gid(s->ctx, 1, s->gidx, &s->gid)) {
		fprintf(stderr, "rxe-probe: %s: no gid index %d\n", s->name,
			s->gidx);
		return -1;
	}
	return 0;
}

static int side_connect(struct side *s, const struct side *peer, int retry,
			int timeout)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	if (ibv_modify_qp(s->qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS)) {
		fprintf(stderr, "rxe-probe: %s: modify to INIT failed\n",
			s->name);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = s->gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(s->qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER)) {
		fprintf(stderr, "rxe-probe: %s: modify to RTR failed\n",
			s->name);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = retry;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(s->qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC)) {
		fprintf(stderr, "rxe-probe: %s: modify to RTS failed\n",
			s->name);
		return -1;
	}
	return 0;
}

static void side_close(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
	free(s->buf);
}

int main(int argc, char **argv)
{
	int retry = 3, timeout = 14, wait_s = 30, opt, rc = 2;
	while ((opt = getopt(argc, argv, "r:t:w:")) != -1) {
		switch (opt) {
		case 'r':
			retry = atoi(optarg);
			break;
		case 't':
			timeout = atoi(optarg);
			break;
		case 'w':
			wait_s = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 4 || retry < 0 || retry > 7 || timeout < 0 ||
	    timeout > 31 || wait_s < 1)
		goto usage;
	struct side a = {.name = argv[optind], .gidx = atoi(argv[optind + 1])};
	struct side b = {.name = argv[optind + 2],
			 .gidx = atoi(argv[optind + 3])};

	if (side_open(&a) || side_open(&b) ||
	    side_connect(&a, &b, retry, timeout) ||
	    side_connect(&b, &a, retry, timeout))
		goto out;

	memset(a.buf, 0x5a, BUF);
	struct ibv_sge sge = {
		.addr = (uintptr_t)a.buf, .length = BUF, .lkey = a.mr->lkey};
	struct ibv_send_wr wr =
				   {
					   .wr_id = 1,
					   .sg_list = &sge,
					   .num_sge = 1,
					   .opcode = IBV_WR_RDMA_WRITE,
					   .send_flags = IBV_SEND_SIGNALED,
					   .wr.rdma = {.remote_addr =
							       (uintptr_t)b.buf,
						       .rkey = b.mr->rkey},
				   },
			   *bad;
	double t0 = now_ms();
	if (ibv_post_send(a.qp, &wr, &bad)) {
		fprintf(stderr, "rxe-probe: post_send failed\n");
		goto out;
	}
	struct ibv_wc wc;
	int got = 0;
	while (!got && now_ms() - t0 < wait_s * 1e3) {
		got = ibv_poll_cq(a.cq, 1, &wc);
		if (got < 0) {
			fprintf(stderr, "rxe-probe: poll_cq failed\n");
			goto out;
		}
		if (!got)
			usleep(1000);
	}
	double dt = now_ms() - t0;
	if (!got) {
		printf("rxe-probe: %s -> %s: no completion after %d s (retry_cnt %d)\n",
		       a.name, b.name, wait_s, retry);
		rc = 3;
	} else if (wc.status != IBV_WC_SUCCESS) {
		printf("rxe-probe: %s -> %s: error completion after %.0f ms: %s (status %d, retry_cnt %d, timeout %d)\n",
		       a.name, b.name, dt, ibv_wc_status_str(wc.status),
		       wc.status, retry, timeout);
		rc = 1;
	} else if (b.buf[0] != 0x5a || b.buf[BUF - 1] != 0x5a) {
		printf("rxe-probe: %s -> %s: completed but data did not arrive\n",
		       a.name, b.name);
		rc = 1;
	} else {
		printf("rxe-probe: %s -> %s: %d bytes written and verified in %.2f ms\n",
		       a.name, b.name, BUF, dt);
		rc = 0;
	}
out:
	side_close(&a);
	side_close(&b);
	return rc;
usage:
	fprintf(stderr,
		"usage: rxe-probe [-r RETRY_CNT] [-t TIMEOUT_EXP] [-w SECONDS] DEV_A GIDX_A DEV_B GIDX_B\n");
	return 2;
}
