/* SPDX-License-Identifier: BSD-3-Clause
 * What a QP's consumer posts and polls, sans I/O: completion queues, the
 * receive queue (its own or a shared one), the send queue's posting and
 * the completions the two modes (et_qp_gbn.c, et_qp_mp.c) report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "transport/et_qp_priv.h"

#define MAX_PSN_SPAN (1u << 22) /* PSNs outstanding: well inside 2^23 */

/* ---- completion queues ---- */

int
et_cq_init(struct et_cq *cq, uint32_t size)
{
	memset(cq, 0, sizeof(*cq));
	if (!rte_is_power_of_2(size))
		return -EINVAL;
	cq->ring = calloc(size, sizeof(*cq->ring));
	cq->size = size;
	return cq->ring ? 0 : -ENOMEM;
}

void
et_cq_free(struct et_cq *cq)
{
	free(cq->ring);
	cq->ring = NULL;
}

uint32_t
et_cq_poll(struct et_cq *cq, struct et_wc *wc, uint32_t n)
{
	uint32_t k = 0;

	while (k < n && cq->head != cq->tail)
		wc[k++] = cq->ring[cq->head++ & (cq->size - 1)];
	return k;
}

static void
cq_push(struct et_cq *cq, const struct et_wc *wc)
{
	if (cq->tail - cq->head == cq->size) {
		cq->overflows++;
		return;
	}
	cq->ring[cq->tail++ & (cq->size - 1)] = *wc;
}

const char *
et_wc_status_str(uint8_t status)
{
	static const char *const s[] = {
		[ET_WC_SUCCESS] = "success",
		[ET_WC_LOC_LEN_ERR] = "local length error",
		[ET_WC_LOC_PROT_ERR] = "local protection error",
		[ET_WC_REM_ACCESS_ERR] = "remote access error",
		[ET_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[ET_WC_REM_OP_ERR] = "remote operational error",
		[ET_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[ET_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[ET_WC_WR_FLUSH_ERR] = "work request flushed",
	};

	return status < RTE_DIM(s) && s[status] ? s[status] : "unknown";
}

/* ---- completions and receive queues ---- */


void
et_qp_complete_send(struct et_qp *qp, const struct et_send_wr *wr, uint8_t status)
{
	static const uint8_t wc_opcode[] = {
		[ET_WR_RDMA_WRITE] = ET_WC_RDMA_WRITE,
		[ET_WR_RDMA_WRITE_IMM] = ET_WC_RDMA_WRITE,
		[ET_WR_SEND] = ET_WC_SEND,
		[ET_WR_SEND_IMM] = ET_WC_SEND,
		[ET_WR_RDMA_READ] = ET_WC_RDMA_READ,
		[ET_WR_ATOMIC_CMP_SWP] = ET_WC_COMP_SWAP,
		[ET_WR_ATOMIC_FETCH_ADD] = ET_WC_FETCH_ADD,
	};
	struct et_wc wc = {
		.wr_id = wr->wr_id,
		.qpn = qp->a.qpn,
		.opcode = wr->opcode < RTE_DIM(wc_opcode) ? wc_opcode[wr->opcode] : ET_WC_SEND,
		.status = status,
		.byte_len = wr->length,
	};

	cq_push(qp->send_cq, &wc);
}

int
et_rq_init(struct et_rq *rq, uint32_t size, uint32_t max_sge)
{
	memset(rq, 0, sizeof(*rq));
	if (!rte_is_power_of_2(size) || size > (1u << 20) || max_sge > ET_MAX_SGE)
		return -EINVAL;
	rq->ring = calloc(size, sizeof(*rq->ring));
	rq->mask = size - 1;
	rq->max_sge = max_sge;
	if (max_sge > 1 && rq->ring && !(rq->sgl = calloc((size_t)size * max_sge, sizeof(*rq->sgl)))) {
		free(rq->ring);
		rq->ring = NULL;
	}
	return rq->ring ? 0 : -ENOMEM;
}

void
et_rq_free(struct et_rq *rq)
{
	free(rq->ring);
	free(rq->sgl);
	rq->ring = NULL;
	rq->sgl = NULL;
}

/* A work request's buffers: its one (*addr, *len, *lkey), or its list
 * of *n at sgl, at most max (a list of one made the one buffer), each in
 * a region of mrs with access; *len set to their sum. */
static bool
bufs_ok(struct et_mr_table *mrs, const struct et_sge *sgl, uint32_t *n, uint32_t max,
	void **addr, uint32_t *len, uint32_t *lkey, uint32_t access)
{
	uint64_t sum = 0;

	if (*n == 1) {
		*addr = sgl[0].addr;
		*len = sgl[0].length;
		*lkey = sgl[0].lkey;
		*n = 0;
	}
	if (*n == 0)
		return !*len || et_mr_lookup(mrs, *lkey, (uint64_t)(uintptr_t)*addr, *len, access);
	if (*n > max)
		return false;
	for (uint32_t i = 0; i < *n; i++) {
		if (sgl[i].length && !et_mr_lookup(mrs, sgl[i].lkey, (uint64_t)(uintptr_t)sgl[i].addr,
						   sgl[i].length, access))
			return false;
		sum += sgl[i].length;
	}
	*addr = NULL;
	*len = (uint32_t)sum;
	return sum <= UINT32_MAX;
}

/* A receive onto rq, its buffers checked against mrs (local write), its
 * list kept in the slot's room. */
static int
rq_post(struct et_rq *rq, struct et_mr_table *mrs, const struct et_recv_wr *wr)
{
	struct et_recv_wr e = *wr;
	uint32_t slot;

	if (!bufs_ok(mrs, e.sgl, &e.num_sge, rq->max_sge, &e.addr, &e.length, &e.lkey,
		     ET_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (et_rq_count(rq) == rq->mask + 1)
		return -ENOSPC;
	slot = rq->tail++ & rq->mask;
	if (e.num_sge) {
		struct et_sge *room = rq->sgl + (size_t)slot * rq->max_sge;

		memcpy(room, e.sgl, e.num_sge * sizeof(*room));
		e.sgl = room;
	}
	rq->ring[slot] = e;
	return 0;
}

int
et_srq_post(struct et_rq *srq, struct et_mr_table *mrs, const struct et_recv_wr *wr)
{
	return rq_post(srq, mrs, wr);
}

int
et_qp_set_srq(struct et_qp *qp, struct et_rq *srq)
{
	if (qp->state != ET_QPS_RESET || qp->a.multipath || et_rq_count(&qp->own_rq))
		return -EINVAL;
	if (srq->max_sge > 1 && !qp->rx_sgl &&
	    !(qp->rx_sgl = calloc(ET_MAX_SGE, sizeof(*qp->rx_sgl))))
		return -ENOMEM;
	qp->rq = srq;
	return 0;
}

const struct et_recv_wr *
et_qp_recv_take(struct et_qp *qp)
{
	struct et_rq *rq = qp->rq;

	if (!qp->rx_taken) {
		if (et_rq_count(rq) == 0)
			return NULL;
		qp->rx_wqe = rq->ring[rq->head++ & rq->mask];
		if (qp->rx_wqe.num_sge) { /* the slot's room is the next post's */
			memcpy(qp->rx_sgl, qp->rx_wqe.sgl, qp->rx_wqe.num_sge * sizeof(*qp->rx_sgl));
			qp->rx_wqe.sgl = qp->rx_sgl;
		}
		qp->rx_taken = true;
	}
	return &qp->rx_wqe;
}

void
et_qp_complete_recv_wc(struct et_qp *qp, struct et_wc *wc)
{
	if (et_qp_recv_take(qp) == NULL)
		return; /* cannot be: every caller has checked there is one */
	wc->wr_id = qp->rx_wqe.wr_id;
	wc->qpn = qp->a.qpn;
	cq_push(qp->recv_cq, wc);
	qp->rx_taken = false;
}

void
et_qp_complete_recv(struct et_qp *qp, uint8_t opcode, uint8_t status, uint32_t len,
		    bool with_imm, uint32_t imm)
{
	struct et_wc wc = {
		.opcode = opcode,
		.status = status,
		.with_imm = with_imm,
		.byte_len = len,
		.imm = imm,
	};

	et_qp_complete_recv_wc(qp, &wc);
}

/* ---- posting ---- */

/* A send's buffers (bufs_ok): never a list for an atomic. */
static bool
send_bufs_ok(const struct et_qp *qp, struct et_send_wr *e, uint32_t access)
{
	return (e->num_sge <= 1 || !et_wr_is_atomic(e->opcode)) &&
	       bufs_ok(qp->mrs, e->sgl, &e->num_sge, qp->a.max_send_sge, &e->local_addr, &e->length,
		       &e->lkey, access);
}

int
et_qp_post_send(struct et_qp *qp, const struct et_send_wr *wr)
{
	struct et_send_wr e = *wr;
	uint32_t npkts, slot;
	struct et_swqe *w;

	if (qp->state == ET_QPS_RESET || wr->opcode >= 32 ||
	    !(qp->ops->opcodes & (1u << wr->opcode)))
		return -EINVAL;
	/* a READ's or an atomic's answer is written into the local buffer */
	if (!send_bufs_ok(qp, &e, et_wr_is_rd_atomic(e.opcode) ? ET_ACCESS_LOCAL_WRITE : 0))
		return -EINVAL;
	if (et_wr_is_rd_atomic(e.opcode) &&
	    (qp->a.max_rd_atomic == 0 ||
	     (et_wr_is_atomic(e.opcode) && e.length != ET_ATOMIC_LEN)))
		return -EINVAL;
	if (qp->ops->single_packet && e.length > qp->a.mtu)
		return -EINVAL;
	if (qp->state == ET_QPS_ERR) {
		et_qp_complete_send(qp, &e, ET_WC_WR_FLUSH_ERR);
		return 0;
	}
	/* a READ of n packets takes n PSNs, an atomic one */
	npkts = e.length && !et_wr_is_atomic(e.opcode) ? (e.length + qp->a.mtu - 1) / qp->a.mtu : 1;
	if (qp->sq_tail - qp->sq_head == qp->a.max_send_wr ||
	    (uint32_t)((qp->sq_next_psn - qp->snd_una) & ET_PSN_MASK) + npkts > MAX_PSN_SPAN)
		return -ENOSPC;
	slot = qp->sq_tail++ & qp->sq_mask;
	w = &qp->sq[slot];
	w->wr = e;
	if (e.num_sge) { /* the caller's list need not outlive the post */
		struct et_sge *room = qp->sgl + (size_t)slot * qp->a.max_send_sge;

		memcpy(room, e.sgl, e.num_sge * sizeof(*room));
		w->wr.sgl = room;
	}
	w->first_psn = qp->sq_next_psn;
	w->npkts = npkts;
	w->stream_off = qp->sq_stream;
	qp->sq_next_psn = et_psn_add(qp->sq_next_psn, npkts);
	qp->sq_stream += et_wr_tx_len(&e);
	return 0;
}

int
et_qp_post_recv(struct et_qp *qp, const struct et_recv_wr *wr)
{
	if (qp->rq != &qp->own_rq)
		return -EINVAL;
	if (qp->state == ET_QPS_ERR) {
		struct et_wc wc = {.wr_id = wr->wr_id, .qpn = qp->a.qpn,
				   .opcode = ET_WC_RECV, .status = ET_WC_WR_FLUSH_ERR};

		cq_push(qp->recv_cq, &wc);
		return 0;
	}
	return rq_post(qp->rq, qp->mrs, wr);
}
