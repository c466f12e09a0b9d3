/* SPDX-License-Identifier: BSD-3-Clause
 * RC queue pair, in-order mode: Go-Back-N.
 *
 * Receiver rules follow the IBTA and the Linux rxe driver: PSNs compare in
 * 24 bits with a +-2^23 window; a packet ahead of the expected PSN draws one
 * NAK (PSN sequence error) and silence until the expected PSN arrives; a
 * duplicate is re-acknowledged with PSN = expected - 1 and not placed again.
 * The requester keeps one timer per QP and, on a NAK or a timeout, sends
 * everything again from the PSN named, on a path the load balancer picks.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "transport/et_qp_priv.h"

/* ---- requester ---- */

/* Index of the WQE holding psn (sq_tail if psn is the next to be posted),
 * and the stream offset of that PSN's first payload byte. */
static uint32_t
locate(const struct et_qp *qp, uint32_t psn, uint64_t *pos)
{
	uint32_t i;

	for (i = qp->sq_head; i != qp->sq_tail; i++) {
		const struct et_swqe *w = &qp->sq[i & qp->sq_mask];
		int32_t k = et_psn_diff(psn, w->first_psn);

		if (k >= 0 && (uint32_t)k < w->npkts) {
			uint64_t off = (uint64_t)k * qp->a.mtu;

			*pos = w->stream_off + (off < w->wr.length ? off : w->wr.length);
			return i;
		}
	}
	*pos = qp->sq_stream;
	return qp->sq_tail;
}

/* Go back N: the next packet sent is psn. */
static void
rewind_to(struct et_qp *qp, uint32_t psn)
{
	qp->sq_cur = locate(qp, psn, &qp->nxt_pos);
	qp->snd_nxt = psn;
	qp->inflight = qp->nxt_pos - qp->una_pos;
	if (qp->inflight == 0)
		qp->rto_deadline = 0;
}

static void
ask_path(struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	uint16_t id;

	if (qp->path_fn == NULL)
		return;
	id = qp->path_fn(qp->path_ctx, qp, ev, now);
	if (ev != ET_PATH_FIRST && id != qp->path_id)
		qp->st.path_changes++;
	qp->path_id = id;
}

/* A NAK or a timeout: one more try, on a path the load balancer picks.
 * false when the retry budget is spent (the QP has failed). */
static bool
retry(struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	if (qp->retries_left == 0) {
		et_qp_fail(qp, ET_WC_RETRY_EXC_ERR);
		return false;
	}
	if (qp->a.retry_cnt != ET_QP_RETRY_FOREVER)
		qp->retries_left--;
	ask_path(qp, ev, now);
	return true;
}

/* Cumulative acknowledgement of every PSN up to and including psn. */
static void
ack_through(struct et_qp *qp, uint32_t psn, uint64_t now)
{
	uint32_t una = et_psn_add(psn, 1);
	uint32_t acked = (uint32_t)et_psn_diff(una, qp->snd_una);

	while (qp->sq_head != qp->sq_tail) {
		struct et_swqe *w = &qp->sq[qp->sq_head & qp->sq_mask];
		uint32_t last = et_psn_add(w->first_psn, w->npkts - 1);

		if (et_psn_diff(last, psn) > 0)
			break;
		et_qp_complete_send(qp, &w->wr, ET_WC_SUCCESS);
		qp->sq_head++;
	}
	qp->snd_una = una;
	locate(qp, una, &qp->una_pos);
	if (et_psn_diff(una, qp->snd_nxt) >= 0) {
		/* a late ACK for packets we were about to send again */
		qp->sq_cur = locate(qp, una, &qp->nxt_pos);
		qp->snd_nxt = una;
	} else if (qp->sq_cur - qp->sq_head > qp->sq_tail - qp->sq_head) {
		qp->sq_cur = qp->sq_head;
	}
	qp->inflight = qp->nxt_pos - qp->una_pos;
	qp->retries_left = qp->a.retry_cnt;
	qp->rnr_retries_left = qp->a.rnr_retry;
	et_dctcp_on_ack(&qp->cc, acked, una, qp->snd_nxt);
	qp->rto_deadline = qp->snd_una == qp->snd_nxt ? 0 : now + qp->a.rto_ns;
}

static void
gbn_requester_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	uint8_t syn = pkt->h.aeth_syndrome;
	uint32_t psn = pkt->h.psn;
	int32_t ahead = et_psn_diff(psn, qp->snd_una);

	/* an ACK or NAK may name at most the highest PSN sent */
	if (et_psn_diff(psn, qp->snd_max) >= 0) {
		qp->st.rx_bad_ack++;
		return;
	}
	switch (syn & ET_AETH_KIND_MASK) {
	case ET_AETH_ACK:
		qp->st.acks_rx++;
		if (ahead >= 0)
			ack_through(qp, psn, now);
		return;
	case ET_AETH_RNR_NAK:
		qp->st.rnr_naks_rx++;
		if (ahead < 0)
			return;
		if (ahead > 0)
			ack_through(qp, et_psn_add(psn, ET_PSN_MASK), now);
		if (et_qp_rnr_pause(qp, syn, now))
			rewind_to(qp, psn);
		return;
	case ET_AETH_NAK:
		break;
	default:
		qp->st.rx_dropped++;
		return;
	}
	if ((syn & ET_AETH_VALUE_MASK) == ET_NAK_PSN_SEQ)
		qp->st.naks_rx++;
	else
		qp->st.err_naks_rx++;
	if (ahead < 0)
		return; /* about PSNs already acknowledged: stale */
	/* a NAK for psn acknowledges everything before it */
	if (ahead > 0)
		ack_through(qp, et_psn_add(psn, ET_PSN_MASK), now);
	if ((syn & ET_AETH_VALUE_MASK) != ET_NAK_PSN_SEQ)
		et_qp_fail_nak(qp, syn);
	else if (retry(qp, ET_PATH_NAK, now))
		rewind_to(qp, psn);
}

static void
gbn_timer(struct et_qp *qp, uint64_t now)
{
	if (qp->rto_deadline == 0 || now < qp->rto_deadline)
		return;
	qp->st.timeouts++;
	if (!retry(qp, ET_PATH_TIMEOUT, now))
		return;
	rewind_to(qp, qp->snd_una);
	qp->rto_deadline = now + qp->a.rto_ns;
}

static bool
data_ready(const struct et_qp *qp, uint64_t now)
{
	const struct et_swqe *w;
	uint64_t off;

	if (qp->state != ET_QPS_RTS || qp->snd_nxt == qp->sq_next_psn ||
	    now < et_qp_data_hold(qp))
		return false;
	if (qp->inflight == 0)
		return true;
	w = &qp->sq[qp->sq_cur & qp->sq_mask];
	off = (uint64_t)et_psn_diff(qp->snd_nxt, w->first_psn) * qp->a.mtu;
	return qp->inflight + et_qp_seg_len(qp, &w->wr, off) <= et_dctcp_cwnd(&qp->cc);
}

static const uint8_t data_opcode[2][4] = {
	/* [send][first/middle/last/only] */
	{ET_OP_WRITE_FIRST, ET_OP_WRITE_MIDDLE, ET_OP_WRITE_LAST, ET_OP_WRITE_ONLY},
	{ET_OP_SEND_FIRST, ET_OP_SEND_MIDDLE, ET_OP_SEND_LAST, ET_OP_SEND_ONLY},
};

static struct rte_mbuf *
build_data(struct et_qp *qp, uint64_t now)
{
	struct et_swqe *w = &qp->sq[qp->sq_cur & qp->sq_mask];
	const struct et_send_wr *wr = &w->wr;
	uint32_t k = (uint32_t)et_psn_diff(qp->snd_nxt, w->first_psn);
	uint64_t off = (uint64_t)k * qp->a.mtu;
	uint32_t len = et_qp_seg_len(qp, wr, off);
	bool send = wr->opcode >= ET_WR_SEND, imm = wr->opcode == ET_WR_RDMA_WRITE_IMM ||
						    wr->opcode == ET_WR_SEND_IMM;
	bool first = k == 0, last = k == w->npkts - 1;
	struct et_roce_hdr h;
	struct rte_mbuf *m;

	if (!qp->path_chosen) {
		ask_path(qp, ET_PATH_FIRST, now);
		qp->path_chosen = true;
	}
	et_qp_base_hdr(qp, &h, qp->path_id);
	h.ecn = ET_ECN_ECT0;
	h.ip_id = qp->ip_id++;
	h.opcode = data_opcode[send][first && last ? 3 : first ? 0 : last ? 2 : 1];
	if (last && imm)
		h.opcode++; /* the *_WITH_IMMEDIATE opcode follows its plain one */
	h.ackreq = last;
	h.psn = qp->snd_nxt;
	if (first && !send) {
		h.reth_va = wr->remote_addr;
		h.reth_rkey = wr->rkey;
		h.reth_dma_len = wr->length;
	}
	h.imm = wr->imm;
	m = et_qp_build(qp, &h, (const uint8_t *)wr->local_addr + off, len);
	if (m == NULL)
		return NULL;
	et_qp_paced(qp, now, m);
	qp->st.tx_pkts++;
	qp->st.tx_bytes += len;
	if (et_psn_diff(qp->snd_nxt, qp->snd_max) < 0)
		qp->st.retransmits++;
	qp->snd_nxt = et_psn_add(qp->snd_nxt, 1);
	if (et_psn_diff(qp->snd_nxt, qp->snd_max) > 0)
		qp->snd_max = qp->snd_nxt;
	qp->nxt_pos += len;
	qp->inflight += len;
	if (last)
		qp->sq_cur++;
	if (qp->rto_deadline == 0)
		qp->rto_deadline = now + qp->a.rto_ns;
	return m;
}

/* ---- responder ---- */

enum place_result { PLACE_OK, PLACE_RNR, PLACE_INVALID, PLACE_ACCESS, PLACE_LENGTH };

static enum place_result
place(struct et_qp *qp, const struct et_roce_pkt *pkt)
{
	const struct et_roce_hdr *h = &pkt->h;
	uint16_t opf = et_opcode_flags[h->opcode];
	uint32_t len = pkt->payload_len, mtu = qp->a.mtu;
	bool first = opf & ET_OPF_FIRST, last = opf & ET_OPF_LAST;

	/* the opcode must continue the message in progress, or start one */
	if (qp->rx_msg == ET_RX_NONE ? !first
	    : first || !(opf & (qp->rx_msg == ET_RX_SEND ? ET_OPF_SEND : ET_OPF_WRITE)))
		return PLACE_INVALID;
	if (!last ? len != mtu : (!first && len == 0) || len > mtu)
		return PLACE_INVALID;
	/* a SEND, or a WRITE with immediate, consumes a posted receive */
	if (((opf & ET_OPF_SEND) && first) || ((opf & ET_OPF_IMM) && (opf & ET_OPF_WRITE))) {
		if (qp->rq_head == qp->rq_tail)
			return PLACE_RNR;
	}
	if (first && (opf & ET_OPF_SEND)) {
		const struct et_recv_wr *r = &qp->rq[qp->rq_head & qp->rq_mask];

		qp->rx_dst = r->addr;
		qp->rx_left = r->length;
	} else if (first) {
		qp->rx_left = h->reth_dma_len;
		qp->rx_dst = NULL;
		if (h->reth_dma_len &&
		    !(qp->rx_dst = et_mr_lookup(qp->mrs, h->reth_rkey, h->reth_va,
						h->reth_dma_len, ET_ACCESS_REMOTE_WRITE)))
			return PLACE_ACCESS;
	}
	if (first) {
		qp->rx_msg = (opf & ET_OPF_SEND) ? ET_RX_SEND : ET_RX_WRITE;
		qp->rx_len = 0;
	}
	if (len > qp->rx_left)
		return qp->rx_msg == ET_RX_SEND ? PLACE_LENGTH : PLACE_INVALID;
	if (last && qp->rx_msg == ET_RX_WRITE && len != qp->rx_left)
		return PLACE_INVALID; /* shorter than its RETH said */
	if (len) { /* a zero-length WRITE has no buffer: rx_dst is NULL */
		memcpy(qp->rx_dst, pkt->payload, len);
		qp->rx_dst += len;
	}
	qp->rx_left -= len;
	qp->rx_len += len;
	if (last) {
		bool imm = opf & ET_OPF_IMM;

		if (qp->rx_msg == ET_RX_SEND)
			et_qp_complete_recv(qp, ET_WC_RECV, ET_WC_SUCCESS, qp->rx_len, imm, h->imm);
		else if (imm)
			et_qp_complete_recv(qp, ET_WC_RECV_RDMA_WITH_IMM, ET_WC_SUCCESS,
					    qp->rx_len, true, h->imm);
		qp->rx_msg = ET_RX_NONE;
		qp->msn = (qp->msn + 1) & 0xffffff;
	}
	return PLACE_OK;
}

static void
gbn_responder_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint16_t echo)
{
	const struct et_roce_hdr *h = &pkt->h;
	int32_t d = et_psn_diff(h->psn, qp->epsn);

	if (d < 0) {
		qp->st.rx_dup++;
		et_qp_respond(qp, et_aeth_ack(ET_AETH_CREDITS_UNLIMITED),
			      et_psn_add(qp->epsn, ET_PSN_MASK));
		return;
	}
	if (d > 0) {
		qp->st.rx_out_of_order++;
		if (!qp->nak_sent) {
			qp->nak_sent = true;
			et_qp_respond(qp, et_aeth_nak(ET_NAK_PSN_SEQ), qp->epsn);
		}
		return;
	}
	switch (place(qp, pkt)) {
	case PLACE_OK:
		break;
	case PLACE_RNR:
		et_qp_respond(qp, et_aeth_rnr_nak(qp->a.min_rnr_timer), qp->epsn);
		return;
	case PLACE_ACCESS:
		et_qp_responder_fail(qp, ET_NAK_REMOTE_ACCESS, ET_WC_REM_ACCESS_ERR);
		return;
	case PLACE_LENGTH:
		et_qp_responder_fail(qp, ET_NAK_INVALID_REQ, ET_WC_LOC_LEN_ERR);
		return;
	default:
		et_qp_responder_fail(qp, ET_NAK_INVALID_REQ, ET_WC_REM_INV_REQ_ERR);
		return;
	}
	qp->nak_sent = false;
	qp->st.rx_pkts++;
	qp->st.rx_bytes += pkt->payload_len;
	qp->epsn = et_psn_add(qp->epsn, 1);
	if (h->ackreq || ++qp->unacked >= qp->a.ack_every) {
		qp->unacked = 0;
		et_qp_respond(qp, et_aeth_ack(ET_AETH_CREDITS_UNLIMITED), h->psn);
	}
}

static uint16_t
gbn_tx(struct et_qp *qp, uint64_t now, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = 0;

	while (k < n && data_ready(qp, now) && (pkts[k] = build_data(qp, now)))
		k++;
	return k;
}

static uint64_t
gbn_deadline(const struct et_qp *qp)
{
	uint64_t d = UINT64_MAX, hold = et_qp_data_hold(qp);

	if (qp->rto_deadline)
		d = qp->rto_deadline;
	if (qp->snd_nxt != qp->sq_next_psn && hold && hold < d)
		d = hold;
	return d;
}

const struct et_qp_ops et_qp_gbn_ops = {
	.requester_rx = gbn_requester_rx,
	.responder_rx = gbn_responder_rx,
	.timer = gbn_timer,
	.tx_ready = data_ready,
	.tx = gbn_tx,
	.deadline = gbn_deadline,
	.max_opcode = ET_WR_SEND_IMM,
	.msn_is_epsn = false,
};
