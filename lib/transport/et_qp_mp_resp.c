/* SPDX-License-Identifier: BSD-3-Clause
 * RC queue pair, multipath mode: the responder (et_qp_mp.c says how the
 * mode works).  It places each packet of its window at once, queues a
 * selective ACK for each, and answers each READ or atomic request on the
 * request's own path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "base/et_ring.h"
#include "transport/et_qp_priv.h"
#include "transport/et_qp_mp_priv.h"

/* Only for a PSN of [epsn, epsn + rx_cap), rx_cap > 0. */
static inline struct et_mp_rslot *
mp_rslot(struct et_qp *qp, uint32_t psn)
{
	return &qp->mp->rx[psn & (qp->mp->rx_cap - 1)];
}

/* The responder's slots, enough for PSN epsn + d (d < the window), every
 * placed PSN at its new slot.  0 or -ENOMEM. */
static int
mp_rx_grow(struct et_qp *qp, uint32_t d)
{
	struct et_qp_mp *mp = qp->mp;
	uint32_t cap = mp->rx_cap ? mp->rx_cap : MP_MIN, i;
	struct et_mp_rslot *rx;

	while (cap <= d)
		cap *= 2;
	rx = calloc(cap, sizeof(*rx));
	if (rx == NULL)
		return -ENOMEM;
	for (i = 0; i < mp->rx_cap; i++) {
		uint32_t psn = et_psn_add(qp->epsn, i);

		rx[psn & (cap - 1)] = *mp_rslot(qp, psn);
	}
	free(mp->rx);
	mp->rx = rx;
	mp->rx_cap = cap;
	return 0;
}

/* Responder: a selective ACK owed for psn.  The queue grows to the window;
 * full at that, it loses the ACK: a later ACK's cumulative PSN or the
 * requester's timer covers it. */
static void
mp_queue_ack(struct et_qp *qp, uint32_t psn, uint16_t sport, bool ce)
{
	struct et_qp_mp *mp = qp->mp;
	struct et_mp_ack *a = et_ring_push_from((void **)&mp->acks, &mp->ack_cap, mp->ack_head,
						&mp->ack_tail, sizeof(*a), MP_MIN, ET_QP_MP_WINDOW);

	if (a == NULL)
		qp->st.acks_unsent++;
	else
		*a = (struct et_mp_ack){psn, sport, ce};
}

/* epsn moves over the packets placed; a message ends at each AckReq, and a
 * WRITE with immediate then consumes its receive, in order. */
static void
mp_advance(struct et_qp *qp)
{
	struct et_qp_mp *mp = qp->mp;
	struct et_mp_rslot *r;

	while ((r = mp_rslot(qp, qp->epsn))->flags & ET_MP_GOT) {
		uint8_t f = r->flags;

		r->flags = 0;
		mp->rx_len += r->len;
		if (f & ET_MP_LAST) {
			if (f & ET_MP_IMM) {
				et_qp_complete_recv(qp, ET_WC_RECV_RDMA_WITH_IMM, ET_WC_SUCCESS,
					      mp->rx_len, true, r->imm);
				mp->imm_pending--;
			}
			mp->rx_len = 0;
			qp->msn = (qp->msn + 1) & 0xffffff;
		}
		qp->epsn = et_psn_add(qp->epsn, 1);
	}
}

/* An answer owed for psn.  The queue grows to the window; full at that, the
 * answer is lost: the request's timer asks again. */
static void
mp_queue_answer(struct et_qp *qp, const struct et_mp_answer *a)
{
	struct et_qp_mp *mp = qp->mp;
	struct et_mp_answer *s = et_ring_push_from((void **)&mp->ans, &mp->ans_cap, mp->ans_head,
						   &mp->ans_tail, sizeof(*s), MP_MIN,
						   ET_QP_MP_WINDOW);

	if (s == NULL)
		qp->st.acks_unsent++;
	else
		*s = *a;
}

/* A READ (one packet's) or atomic request, d PSNs from the expected one:
 * executed (a READ again if it comes again; an atomic answered again from
 * what was kept) and its answer queued; the PSN counts as placed. */
static void
mp_rd_request(struct et_qp *qp, const struct et_roce_hdr *h, uint16_t echo, int32_t d)
{
	struct et_qp_mp *mp = qp->mp;
	bool atomic = et_opcode_flags[h->opcode] & ET_OPF_ATOMIC;
	bool dup = d < 0 || (d < (int32_t)mp->rx_cap && (mp_rslot(qp, h->psn)->flags & ET_MP_GOT));
	struct et_mp_answer a = {.psn = h->psn, .sport = echo, .atomic = atomic};
	struct et_rd_res *r;
	uint8_t nak, *p;

	if (!dup && d >= (int32_t)ET_QP_MP_WINDOW) {
		qp->st.rx_beyond_window++;
		return;
	}
	if (dup && atomic) {
		r = et_qp_rd_res_find(qp, h->psn);
		if (r == NULL || r->kind != ET_RD_ATOMIC) {
			qp->st.rd_dup_unknown++;
			return;
		}
		qp->st.atomics_replayed++;
		a.orig = r->orig;
		mp_queue_answer(qp, &a);
		return;
	}
	if (qp->a.max_dest_rd_atomic == 0 || (!atomic && h->reth_dma_len > qp->a.mtu)) {
		et_qp_responder_fail(qp, ET_NAK_INVALID_REQ, ET_WC_SUCCESS);
		return;
	}
	p = et_qp_rd_target(qp, h, &nak);
	if (p == NULL) {
		et_qp_responder_fail(qp, nak, ET_WC_SUCCESS);
		return;
	}
	if ((atomic && et_qp_rd_res_alloc(qp)) ||
	    (!dup && (uint32_t)d >= mp->rx_cap && mp_rx_grow(qp, (uint32_t)d))) {
		qp->st.rx_dropped++; /* no memory: not answered, asked for again */
		return;
	}
	if (atomic) {
		r = et_qp_rd_res_at(qp, qp->rd_res_next++);
		*r = (struct et_rd_res){.kind = ET_RD_ATOMIC, .first_psn = h->psn, .npkts = 1,
					.next_psn = et_psn_add(h->psn, 1)};
		a.orig = r->orig = et_qp_atomic_exec(p, h);
		qp->st.atomics_rx++;
	} else {
		a.src = p;
		a.len = (uint16_t)h->reth_dma_len;
		if (dup) {
			qp->st.reads_again++;
		} else {
			qp->st.reads_rx++;
			qp->st.read_req_bytes += a.len;
		}
	}
	if (!dup) {
		struct et_mp_rslot *s = mp_rslot(qp, h->psn);

		s->flags = ET_MP_GOT;
		s->len = 0;
		mp_advance(qp);
	}
	mp_queue_answer(qp, &a);
}

void
et_qp_mp_responder_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint16_t echo)
{
	const struct et_roce_hdr *h = &pkt->h;
	struct et_qp_mp *mp = qp->mp;
	int32_t d = et_psn_diff(h->psn, qp->epsn);
	bool ce = h->ecn == ET_ECN_CE, imm = h->opcode == ET_OP_WRITE_ONLY_IMM;
	uint32_t len = pkt->payload_len;
	struct et_mp_rslot *r;
	uint8_t *dst = NULL;

	if (et_opcode_flags[h->opcode] & (ET_OPF_READ_REQ | ET_OPF_ATOMIC)) {
		mp_rd_request(qp, h, echo, d);
		return;
	}
	if (h->opcode != ET_OP_WRITE_ONLY && !imm) {
		et_qp_responder_fail(qp, ET_NAK_INVALID_REQ, ET_WC_REM_INV_REQ_ERR);
		return;
	}
	/* every PSN placed and not passed is in [epsn, epsn + rx_cap) */
	if (d < 0 || (d < (int32_t)mp->rx_cap && (mp_rslot(qp, h->psn)->flags & ET_MP_GOT))) {
		qp->st.rx_dup++;
		mp_queue_ack(qp, h->psn, echo, ce);
		return;
	}
	if (d >= (int32_t)ET_QP_MP_WINDOW) {
		qp->st.rx_beyond_window++;
		return;
	}
	if (len > qp->a.mtu || len != h->reth_dma_len) {
		et_qp_responder_fail(qp, ET_NAK_INVALID_REQ, ET_WC_REM_INV_REQ_ERR);
		return;
	}
	/* receives are consumed in order: those posted must cover every
	 * WRITE with immediate placed and not completed, and this one */
	if (imm && et_rq_count(qp->rq) <= mp->imm_pending) {
		et_qp_respond(qp, et_aeth_rnr_nak(qp->a.min_rnr_timer), h->psn);
		return;
	}
	if (len && !(dst = et_mr_lookup(qp->mrs, h->reth_rkey, h->reth_va, len,
					ET_ACCESS_REMOTE_WRITE))) {
		et_qp_responder_fail(qp, ET_NAK_REMOTE_ACCESS, ET_WC_REM_ACCESS_ERR);
		return;
	}
	if ((uint32_t)d >= mp->rx_cap && mp_rx_grow(qp, (uint32_t)d)) {
		qp->st.rx_dropped++; /* no memory: not acknowledged, sent again */
		return;
	}
	if (len)
		memcpy(dst, pkt->payload, len);
	r = mp_rslot(qp, h->psn);
	r->flags = (uint8_t)(ET_MP_GOT | (h->ackreq ? ET_MP_LAST : 0) | (imm ? ET_MP_IMM : 0));
	r->len = (uint16_t)len;
	r->imm = h->imm;
	mp->imm_pending += imm;
	qp->st.rx_pkts++;
	qp->st.rx_bytes += len;
	if (d > 0)
		qp->st.rx_out_of_order++;
	mp_advance(qp);
	mp_queue_ack(qp, h->psn, echo, ce);
}

struct rte_mbuf *
et_qp_mp_build_ack(struct et_qp *qp)
{
	struct et_qp_mp *mp = qp->mp;
	const struct et_mp_ack *a = &mp->acks[mp->ack_head & (mp->ack_cap - 1)];
	struct rte_mbuf *m;

	m = et_qp_build_ack(qp, a->sport, a->psn, et_aeth_ack(ET_AETH_CREDITS_UNLIMITED),
			    qp->epsn, a->ce);
	if (m == NULL)
		return NULL;
	mp->ack_head++;
	qp->st.acks_tx++;
	return m;
}

/* The oldest answer owed: a READ RESPONSE ONLY or an ATOMIC ACKNOWLEDGE,
 * with the cumulative PSN in its MSN field. */
struct rte_mbuf *
et_qp_mp_build_answer(struct et_qp *qp, uint64_t now)
{
	struct et_qp_mp *mp = qp->mp;
	const struct et_mp_answer *a = &mp->ans[mp->ans_head & (mp->ans_cap - 1)];
	struct rte_mbuf *m;

	m = et_qp_build_answer(qp, now, a->atomic ? ET_OP_ATOMIC_ACK : ET_OP_READ_RESP_ONLY,
			       a->sport, a->psn, qp->epsn, a->orig, a->src, a->len);
	if (m)
		mp->ans_head++;
	return m;
}

bool
et_qp_mp_answers_ready(const struct et_qp *qp, uint64_t now)
{
	return qp->mp->ans_head != qp->mp->ans_tail && now >= et_qp_answer_hold(qp);
}
