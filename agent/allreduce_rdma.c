/* The ring all-reduce's RDMA WRITE transport (see allreduce.h): what NCCL's
 * ring does over IB verbs, simplified. A rank WRITEs its chunk into a
 * staging slot of the next rank's registered buffer, the last piece with
 * immediate data (the message's sequence number); the receiver's
 * completion says the whole chunk has landed (RC writes arrive in order).
 * The receiver reduces (or copies) from the slot and returns a credit, a
 * zero-length SEND on the same queue pair. Two slots, two credits: a step's
 * WRITE never lands on a chunk not yet consumed. */
#include "allreduce.h"

#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

#define AR_SLOTS 2
/* Receives kept posted on each queue pair: at most AR_SLOTS messages or
 * credits are ever in flight, so this never runs dry. */
#define AR_RQ 16
#define AR_SQ 64
/* One WRITE at most this much: the port's limit may be lower. */
#define AR_SEG (4u << 20)
/* One signalled WRITE per this many. */
#define AR_SIGNAL 8
#define AR_ALIGN (2u << 20)

struct allreduce_rdma {
	struct verbs_link *prev, *next; /* NULL: that step is TCP */
	struct verbs_endpoint prev_ep, next_ep;
	float *buf; /* the rank's buffer: the WRITEs' source */
	size_t buf_len;
	uint8_t *stage; /* AR_SLOTS slots the previous rank writes into */
	size_t stage_len;
	uint64_t slot;
	/* the next rank's staging buffer */
	uint64_t raddr;
	uint32_t rkey;
	uint32_t seg;
	/* send side: credits, messages, work requests */
	unsigned credits;
	uint32_t seq_tx, seq_rx, arrived;      /* sent; consumed; landed */
	uint64_t wr_posted, wr_acked, wr_last; /* wr ids count from 1 */
	const uint8_t *src;
	uint64_t len, off;
	int tx_active;
	uint64_t ok_tx, ok_rx; /* messages that completed, for the texts */
};

static uint64_t ar_round(uint64_t v)
{
	return (v + AR_ALIGN - 1) / AR_ALIGN * AR_ALIGN;
}

/* The largest chunk of any size: the first of n, one element longer
 * when the count does not divide. */
static uint64_t ar_slot(uint64_t max_size, unsigned n)
{
	return (max_size / 4 + n - 1) / n * 4;
}

uint64_t allreduce_rdma_memory(uint64_t max_size, unsigned n, int prev,
			       int next)
{
	return (next ? ar_round(max_size) : 0) +
	       (prev ? ar_round(AR_SLOTS * ar_slot(max_size, n)) : 0);
}

static int ar_alloc(void **p, size_t len, char *why, size_t wlen)
{
	int e = posix_memalign(p, AR_ALIGN, len);

	if (e) {
		*p = NULL;
		snprintf(why, wlen, "cannot allocate %zu MiB: %s", len >> 20,
			 strerror(e));
		return -1;
	}
	memset(*p, 0, len);
	return 0;
}

struct allreduce_rdma *allreduce_rdma_new(const struct allreduce_rdma_cfg *c,
					  char *why, size_t len)
{
	struct allreduce_rdma *r = calloc(1, sizeof(*r));
	char w[320];

	if (!r) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	r->slot = ar_slot(c->max_size, c->n);
	if (c->next) {
		r->next = verbs_link_new(c->next, AR_SQ, AR_RQ, &r->next_ep, w,
					 sizeof(w));
		if (!r->next) {
			snprintf(why, len, "RDMA toward %s (%s): %s",
				 c->next->peer, c->next->interface, w);
			goto fail;
		}
		r->buf_len = ar_round(c->max_size);
		if (ar_alloc((void **)&r->buf, r->buf_len, why, len) < 0)
			goto fail;
		if (verbs_link_reg(r->next, r->buf, r->buf_len, 0, &r->next_ep,
				   w, sizeof(w)) < 0) {
			snprintf(why, len, "RDMA toward %s: %s", c->next->peer,
				 w);
			goto fail;
		}
		r->seg = verbs_link_max_msg(r->next);
		if (!r->seg || r->seg > AR_SEG)
			r->seg = AR_SEG;
	}
	if (c->prev) {
		r->prev = verbs_link_new(c->prev, AR_SQ, AR_RQ, &r->prev_ep, w,
					 sizeof(w));
		if (!r->prev) {
			snprintf(why, len, "RDMA from %s (%s): %s",
				 c->prev->peer, c->prev->interface, w);
			goto fail;
		}
		r->stage_len = ar_round(AR_SLOTS * r->slot);
		if (ar_alloc((void **)&r->stage, r->stage_len, why, len) < 0)
			goto fail;
		if (verbs_link_reg(r->prev, r->stage, r->stage_len, 1,
				   &r->prev_ep, w, sizeof(w)) < 0) {
			snprintf(why, len, "RDMA from %s: %s", c->prev->peer,
				 w);
			goto fail;
		}
	}
	/* Receives before RTR: the first message may come at once. */
	for (unsigned i = 0; i < AR_RQ; i++)
		if ((r->next && verbs_link_post_recv(r->next, 0) < 0) ||
		    (r->prev && verbs_link_post_recv(r->prev, 0) < 0)) {
			snprintf(why, len, "ibv_post_recv: %s",
				 strerror(errno));
			goto fail;
		}
	return r;
fail:
	allreduce_rdma_free(r);
	return NULL;
}

const struct verbs_endpoint *
allreduce_rdma_local(const struct allreduce_rdma *r, int prev)
{
	if (prev)
		return r->prev ? &r->prev_ep : NULL;
	return r->next ? &r->next_ep : NULL;
}

float *allreduce_rdma_buf(const struct allreduce_rdma *r)
{
	return r->buf;
}

int allreduce_rdma_connect(struct allreduce_rdma *r,
			   const struct verbs_endpoint *prev_peer,
			   const struct verbs_endpoint *next_peer,
			   unsigned ack_timeout, char *why, size_t len)
{
	char w[320];

	if (r->next) {
		/* The next rank's slots must hold our largest chunk. */
		if (next_peer->length < AR_SLOTS * r->slot ||
		    !next_peer->rkey) {
			snprintf(why, len,
				 "the next rank's staging buffer (%llu bytes) "
				 "is smaller than %d chunks of %llu",
				 (unsigned long long)next_peer->length,
				 AR_SLOTS, (unsigned long long)r->slot);
			return -1;
		}
		if (verbs_link_connect(r->next, next_peer, ack_timeout, w,
				       sizeof(w)) < 0) {
			snprintf(why, len, "RDMA toward the next rank: %s", w);
			return -1;
		}
		r->raddr = next_peer->addr;
		r->rkey = next_peer->rkey;
		r->credits = AR_SLOTS;
	}
	if (r->prev && verbs_link_connect(r->prev, prev_peer, ack_timeout, w,
					  sizeof(w)) < 0) {
		snprintf(why, len, "RDMA from the previous rank: %s", w);
		return -1;
	}
	if ((r->next && verbs_link_arm(r->next) < 0) ||
	    (r->prev && verbs_link_arm(r->prev) < 0)) {
		snprintf(why, len, "ibv_req_notify_cq: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int allreduce_rdma_has(const struct allreduce_rdma *r, int prev)
{
	return r && (prev ? r->prev != NULL : r->next != NULL);
}

void allreduce_rdma_send(struct allreduce_rdma *r, const void *src,
			 uint64_t len)
{
	r->src = src;
	r->len = len;
	r->off = 0;
	r->tx_active = 1;
	r->wr_last = 0;
}

/* Post what the credits and the send queue allow. */
static int ar_post(struct allreduce_rdma *r, char *why, size_t len)
{
	uint64_t slot_at =
		r->raddr + (uint64_t)(r->seq_tx % AR_SLOTS) * r->slot;

	if (!r->tx_active || r->wr_last)
		return 0;
	if (r->off == 0) {
		if (!r->credits)
			return 0;
		r->credits--;
	}
	while (r->off < r->len && r->wr_posted - r->wr_acked < AR_SQ) {
		uint64_t n = r->len - r->off;
		int last, sig, e;

		if (n > r->seg)
			n = r->seg;
		last = r->off + n == r->len;
		sig = last || (r->wr_posted + 1) % AR_SIGNAL == 0;
		e = verbs_link_post_write(r->next, r->src + r->off, (uint32_t)n,
					  slot_at + r->off, r->rkey, last,
					  r->seq_tx, sig, r->wr_posted + 1);
		if (e < 0) {
			snprintf(why, len, "ibv_post_send: %s", strerror(-e));
			return -1;
		}
		r->wr_posted++;
		r->off += n;
		if (last) {
			r->wr_last = r->wr_posted;
			r->seq_tx++;
		}
	}
	return 0;
}

/* The next rank's queue pair: our WRITEs done, its credits in. */
static int ar_poll_next(struct allreduce_rdma *r, char *why, size_t len)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = verbs_link_poll(r->next, wc, 16)) > 0)
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				verbs_link_explain(r->next, wc[i].status,
						   r->ok_tx, why, len);
				return -1;
			}
			if (wc[i].opcode == IBV_WC_RECV) {
				r->credits++;
				if (verbs_link_post_recv(r->next, 0) < 0)
					goto post;
			} else if (wc[i].wr_id > r->wr_acked) {
				r->wr_acked = wc[i].wr_id;
			}
		}
	if (n < 0) {
		snprintf(why, len, "ibv_poll_cq failed");
		return -1;
	}
	return 0;
post:
	snprintf(why, len, "ibv_post_recv: %s", strerror(errno));
	return -1;
}

/* The previous rank's queue pair: its messages landed (in order; it may
 * be a step ahead of us, by the credits it holds). */
static int ar_poll_prev(struct allreduce_rdma *r, char *why, size_t len)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = verbs_link_poll(r->prev, wc, 16)) > 0)
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				verbs_link_explain(r->prev, wc[i].status,
						   r->ok_rx, why, len);
				return -1;
			}
			if (wc[i].opcode != IBV_WC_RECV_RDMA_WITH_IMM)
				continue; /* a credit's SEND completed */
			if (be32toh(wc[i].imm_data) != r->arrived ||
			    r->arrived - r->seq_rx >= AR_SLOTS) {
				snprintf(why, len,
					 "message %u arrived where %u was due",
					 be32toh(wc[i].imm_data), r->arrived);
				return -1;
			}
			r->arrived++;
			if (verbs_link_post_recv(r->prev, 0) < 0) {
				snprintf(why, len, "ibv_post_recv: %s",
					 strerror(errno));
				return -1;
			}
		}
	if (n < 0) {
		snprintf(why, len, "ibv_poll_cq failed");
		return -1;
	}
	return 0;
}

/* The oldest landed message into dst (added or copied); its slot is free
 * again: the credit goes back. */
static int ar_consume(struct allreduce_rdma *r, float *dst, uint64_t rlen,
		      int add, char *why, size_t len)
{
	const uint8_t *at =
		r->stage + (uint64_t)(r->seq_rx % AR_SLOTS) * r->slot;

	if (add) {
		for (uint64_t k = 0; k < rlen / 4; k++) {
			float v;

			memcpy(&v, at + 4 * k, 4);
			dst[k] += v;
		}
	} else {
		memcpy(dst, at, rlen);
	}
	r->seq_rx++;
	r->ok_rx++;
	if (verbs_link_post_send(r->prev, 0, 0) < 0) {
		snprintf(why, len, "posting the credit: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int allreduce_rdma_progress(struct allreduce_rdma *r, float *dst, uint64_t rlen,
			    int add, int *sent, int *got, int *which, char *why,
			    size_t len)
{
	if (r->next && r->tx_active) {
		*which = 0;
		if (ar_poll_next(r, why, len) < 0 || ar_post(r, why, len) < 0)
			return -1;
		if (r->wr_last && r->wr_acked >= r->wr_last) {
			r->tx_active = 0;
			r->ok_tx++;
			*sent = 1;
		}
	} else if (r->next) {
		/* Credits arrive between steps too. */
		*which = 0;
		if (ar_poll_next(r, why, len) < 0)
			return -1;
	}
	if (r->prev) {
		*which = 1;
		if (ar_poll_prev(r, why, len) < 0)
			return -1;
		if (dst && !*got && r->arrived > r->seq_rx) {
			if (ar_consume(r, dst, rlen, add, why, len) < 0)
				return -1;
			*got = 1;
		}
	}
	return 0;
}

int allreduce_rdma_pollfds(struct allreduce_rdma *r, struct pollfd *pfd)
{
	int n = 0;

	if (r->next) {
		pfd[n].fd = verbs_link_fd(r->next);
		pfd[n++].events = POLLIN;
	}
	if (r->prev) {
		pfd[n].fd = verbs_link_fd(r->prev);
		pfd[n++].events = POLLIN;
	}
	return n;
}

int allreduce_rdma_arm(struct allreduce_rdma *r)
{
	if ((r->next && verbs_link_arm(r->next) < 0) ||
	    (r->prev && verbs_link_arm(r->prev) < 0))
		return -1;
	return 0;
}

void allreduce_rdma_free(struct allreduce_rdma *r)
{
	if (!r)
		return;
	/* Queue pairs and registrations first, then the memory. */
	verbs_link_free(r->next);
	verbs_link_free(r->prev);
	free(r->buf);
	free(r->stage);
	free(r);
}
