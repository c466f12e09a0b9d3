/* SPDX-License-Identifier: BSD-3-Clause
 * RC queue pair, in-order mode: Go-Back-N.
 *
 * Receiver rules follow the IBTA and the Linux rxe driver: PSNs compare in
 * 24 bits with a +-2^23 window; a packet ahead of the expected PSN draws one
 * NAK (PSN sequence error) and silence until the expected PSN arrives; a
 * duplicate is re-acknowledged with PSN = expected - 1 and not placed again.
 * The requester keeps one timer per QP and, on a NAK or a timeout, sends
 * everything again from the PSN named, on a path the load balancer picks.
 *
 * RDMA READ and atomics (IBTA 9.4.3-9.4.5, 9.7.5): a READ of n packets takes
 * n PSNs, one request, and n responses that acknowledge it, and everything
 * before it, as they come; a response ahead of the next one expected, or an
 * ACK past a READ not fully answered, means an answer was lost: the READ is
 * asked for again from the first missing PSN.  The responder keeps its last
 * max_dest_rd_atomic requests, answers them in order ahead of any later
 * ACK, and answers a duplicate again from what it kept: never executing an
 * atomic twice.
 */
#include <stdlib.h>
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
			uint64_t off = (uint64_t)k * qp->a.mtu, len = et_wr_tx_len(&w->wr);

			*pos = w->stream_off + (off < len ? off : len);
			return i;
		}
	}
	*pos = qp->sq_stream;
	return qp->sq_tail;
}

/* READ / atomic requests of [sq_head, sq_cur): after sq_cur moved back. */
static void
rd_recount(struct et_qp *qp)
{
	qp->rd_inflight = 0;
	for (uint32_t i = qp->sq_head; i != qp->sq_cur; i++)
		qp->rd_inflight += et_wr_is_rd_atomic(qp->sq[i & qp->sq_mask].wr.opcode);
}

/* Go back N: the next packet sent is psn. */
static void
rewind_to(struct et_qp *qp, uint32_t psn)
{
	qp->sq_cur = locate(qp, psn, &qp->nxt_pos);
	qp->snd_nxt = psn;
	qp->inflight = qp->nxt_pos - qp->una_pos;
	/* a READ waits for its answers, not for bytes in flight: its timer runs on */
	if (qp->snd_una == qp->snd_nxt)
		qp->rto_deadline = 0;
	rd_recount(qp);
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

/* Everything before una is acknowledged (una after snd_una): requests
 * complete in order, and the sender's state follows. */
static void
advance_una(struct et_qp *qp, uint32_t una, uint64_t now)
{
	uint32_t acked = (uint32_t)et_psn_diff(una, qp->snd_una);
	bool recount = false;

	while (qp->sq_head != qp->sq_tail) {
		struct et_swqe *w = &qp->sq[qp->sq_head & qp->sq_mask];
		uint32_t last = et_psn_add(w->first_psn, w->npkts - 1);

		if (et_psn_diff(last, una) >= 0)
			break;
		if (et_wr_is_rd_atomic(w->wr.opcode) && (int32_t)(qp->sq_cur - qp->sq_head) > 0)
			qp->rd_inflight--;
		et_qp_complete_send(qp, &w->wr, ET_WC_SUCCESS);
		qp->sq_head++;
	}
	qp->snd_una = una;
	qp->rd_retry_armed = false;
	locate(qp, una, &qp->una_pos);
	if (et_psn_diff(una, qp->snd_nxt) >= 0) {
		/* a late ACK for packets we were about to send again */
		qp->sq_cur = locate(qp, una, &qp->nxt_pos);
		qp->snd_nxt = una;
		recount = true;
	} else if (qp->sq_cur - qp->sq_head > qp->sq_tail - qp->sq_head) {
		qp->sq_cur = qp->sq_head;
		recount = true;
	}
	if (recount)
		rd_recount(qp);
	qp->inflight = qp->nxt_pos - qp->una_pos;
	qp->retries_left = qp->a.retry_cnt;
	qp->rnr_retries_left = qp->a.rnr_retry;
	et_dctcp_on_ack(&qp->cc, acked, una, qp->snd_nxt);
	qp->rto_deadline = qp->snd_una == qp->snd_nxt ? 0 : now + qp->a.rto_ns;
}

/* The first PSN up to which an acknowledgement of psn may go: a READ or an
 * atomic is answered by its own responses only, so the PSN of the first
 * answer missing, if it is not after psn; else psn + 1. */
static uint32_t
ack_limit(const struct et_qp *qp, uint32_t psn)
{
	for (uint32_t i = qp->sq_head; i != qp->sq_tail; i++) {
		const struct et_swqe *w = &qp->sq[i & qp->sq_mask];
		uint32_t missing;

		if (et_psn_diff(w->first_psn, psn) > 0)
			break;
		if (!et_wr_is_rd_atomic(w->wr.opcode))
			continue;
		/* answers come in order: only the oldest can be partly in */
		missing = et_psn_diff(qp->snd_una, w->first_psn) > 0 ? qp->snd_una : w->first_psn;
		return missing;
	}
	return et_psn_add(psn, 1);
}

/* Cumulative acknowledgement of every PSN up to and including psn, as far
 * as an acknowledgement goes (ack_limit).  false when it had to stop short:
 * the responder is past a READ or atomic whose answer never came. */
static bool
ack_through(struct et_qp *qp, uint32_t psn, uint64_t now)
{
	uint32_t una = ack_limit(qp, psn);

	if (et_psn_diff(una, qp->snd_una) > 0)
		advance_una(qp, una, now);
	return una == et_psn_add(psn, 1);
}

/* An answer went missing (a later response or acknowledgement came in
 * its place): ask again from the first PSN not answered, once for that PSN
 * (the later responses of the same READ are on their way behind it). */
static void
answer_lost(struct et_qp *qp, uint64_t now)
{
	qp->st.resp_gap_rx++;
	if (qp->rd_retry_armed && qp->rd_retry_una == qp->snd_una)
		return;
	if (!retry(qp, ET_PATH_NAK, now))
		return;
	qp->rd_retry_armed = true;
	qp->rd_retry_una = qp->snd_una;
	rewind_to(qp, qp->snd_una);
	qp->rto_deadline = now + qp->a.rto_ns;
}

/* A READ response or an ATOMIC ACKNOWLEDGE for psn. */
static void
gbn_answer_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	const struct et_roce_hdr *h = &pkt->h;
	bool read = et_opcode_flags[h->opcode] & ET_OPF_READ_RESP;
	const struct et_swqe *w;
	uint32_t k, len;

	if (!(et_opcode_flags[h->opcode] & ET_OPF_AETH) ? false
	    : (h->aeth_syndrome & ET_AETH_KIND_MASK) != ET_AETH_ACK) {
		qp->st.rx_bad_resp++;
		return;
	}
	if (et_psn_diff(h->psn, qp->snd_una) < 0) {
		qp->st.resp_dup_rx++;
		return;
	}
	/* it acknowledges every SEND and WRITE before it */
	if (!ack_through(qp, et_psn_add(h->psn, ET_PSN_MASK), now) || h->psn != qp->snd_una) {
		answer_lost(qp, now);
		return;
	}
	w = &qp->sq[qp->sq_head & qp->sq_mask];
	if (qp->sq_head == qp->sq_tail || !et_wr_is_rd_atomic(w->wr.opcode) ||
	    read != (w->wr.opcode == ET_WR_RDMA_READ)) {
		qp->st.rx_bad_resp++;
		return;
	}
	k = (uint32_t)et_psn_diff(h->psn, w->first_psn);
	if (read) {
		len = et_qp_read_seg(qp, w->wr.length, k);
		if (pkt->payload_len != len) {
			qp->st.rx_bad_resp++;
			return;
		}
		et_qp_ce_seen(qp, h, now);
		et_qp_wr_place(&w->wr, (uint64_t)k * qp->a.mtu, pkt->payload, len);
		qp->st.read_resp_rx++;
	} else {
		et_qp_wr_place(&w->wr, 0, &h->atomic_orig, ET_ATOMIC_LEN);
		qp->st.atomic_acks_rx++;
	}
	advance_una(qp, et_psn_add(h->psn, 1), now);
}

static void
gbn_requester_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	uint8_t syn = pkt->h.aeth_syndrome;
	uint32_t psn = pkt->h.psn;
	int32_t ahead = et_psn_diff(psn, qp->snd_una);

	/* an ACK, NAK or answer may name at most the highest PSN sent */
	if (et_psn_diff(psn, qp->snd_max) >= 0) {
		qp->st.rx_bad_ack++;
		return;
	}
	if (pkt->h.opcode != ET_OP_ACK) {
		gbn_answer_rx(qp, pkt, now);
		return;
	}
	switch (syn & ET_AETH_KIND_MASK) {
	case ET_AETH_ACK:
		qp->st.acks_rx++;
		if (ahead >= 0 && !ack_through(qp, psn, now))
			answer_lost(qp, now);
		return;
	case ET_AETH_RNR_NAK:
		qp->st.rnr_naks_rx++;
		if (ahead < 0)
			return;
		/* past a READ not answered: that goes first */
		if (ahead > 0 && !ack_through(qp, et_psn_add(psn, ET_PSN_MASK), now))
			psn = qp->snd_una;
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
	/* a NAK for psn acknowledges everything before it, up to a READ not
	 * answered, which is asked for again first */
	if (ahead > 0 && !ack_through(qp, et_psn_add(psn, ET_PSN_MASK), now))
		psn = qp->snd_una;
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
	w = &qp->sq[qp->sq_cur & qp->sq_mask];
	if (et_wr_is_rd_atomic(w->wr.opcode) && qp->rd_inflight >= qp->a.max_rd_atomic)
		return false;
	if (qp->inflight == 0)
		return true;
	off = (uint64_t)et_psn_diff(qp->snd_nxt, w->first_psn) * qp->a.mtu;
	return qp->inflight + et_qp_seg_len(qp, &w->wr, off) <= et_dctcp_cwnd(&qp->cc);
}

/* The request of a READ (from its k-th PSN on) or an atomic: one packet
 * that takes every PSN the request has left. */
static struct rte_mbuf *
build_rd_request(struct et_qp *qp, const struct et_swqe *w, uint32_t k, struct et_roce_hdr *h,
		 uint64_t now)
{
	struct rte_mbuf *m;

	h->psn = qp->snd_nxt;
	et_qp_rd_request_hdr(qp, &w->wr, k, h);
	m = et_qp_build(qp, h, NULL, 0);
	if (m == NULL)
		return NULL;
	et_qp_paced(qp, now, m);
	if (et_wr_is_atomic(w->wr.opcode))
		qp->st.atomics_tx++;
	else
		qp->st.reads_tx++;
	if (et_psn_diff(qp->snd_nxt, qp->snd_max) < 0)
		qp->st.retransmits++;
	qp->snd_nxt = et_psn_add(w->first_psn, w->npkts);
	if (et_psn_diff(qp->snd_nxt, qp->snd_max) > 0)
		qp->snd_max = qp->snd_nxt;
	qp->sq_cur++;
	qp->rd_inflight++;
	if (qp->rto_deadline == 0)
		qp->rto_deadline = now + qp->a.rto_ns;
	return m;
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
	bool send = wr->opcode == ET_WR_SEND || wr->opcode == ET_WR_SEND_IMM;
	bool imm = wr->opcode == ET_WR_RDMA_WRITE_IMM || wr->opcode == ET_WR_SEND_IMM;
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
	if (et_wr_is_rd_atomic(wr->opcode))
		return build_rd_request(qp, w, k, &h, now);
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
	m = et_qp_build_data(qp, &h, wr, off, len);
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
		if (et_qp_recv_take(qp) == NULL)
			return PLACE_RNR;
	}
	if (first && (opf & ET_OPF_SEND)) {
		const struct et_recv_wr *r = &qp->rx_wqe;

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
	if (len && qp->rx_msg == ET_RX_SEND && qp->rx_wqe.num_sge) {
		et_qp_recv_place(qp, qp->rx_len, pkt->payload, len); /* a list */
	} else if (len) { /* a zero-length WRITE has no buffer: rx_dst is NULL */
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

/* ---- responder: READ and atomics ---- */

/* The first of the requests kept (free-running). */
static uint32_t
rd_res_oldest(const struct et_qp *qp)
{
	uint32_t n = qp->a.max_dest_rd_atomic;

	return qp->rd_res_next - (qp->rd_res_next < n ? qp->rd_res_next : n);
}

/* The answers of r from psn on (src: psn's bytes, run_len of them), on
 * sport. */
static void
rd_res_run(struct et_qp *qp, struct et_rd_res *r, uint32_t psn, uint8_t *src,
	   uint32_t run_len, uint16_t sport)
{
	if (!et_rd_res_pending(r))
		qp->rd_res_pending++;
	r->run_psn = r->next_psn = psn;
	r->src = src;
	r->run_len = run_len;
	r->sport = sport;
}

/* A duplicate READ or atomic: answered again from what was kept. */
static void
rd_duplicate(struct et_qp *qp, const struct et_roce_hdr *h, uint16_t echo)
{
	struct et_rd_res *r = et_qp_rd_res_find(qp, h->psn);
	uint8_t nak, *src;

	if (r == NULL || (r->kind == ET_RD_ATOMIC) != !(et_opcode_flags[h->opcode] & ET_OPF_READ_REQ)) {
		qp->st.rd_dup_unknown++;
		return;
	}
	/* an older request owes answers again: the search for the oldest
	 * starts over (rd_res_sending) */
	qp->rd_res_send = rd_res_oldest(qp);
	if (r->kind == ET_RD_ATOMIC) {
		qp->st.atomics_replayed++;
		rd_res_run(qp, r, r->first_psn, NULL, 0, echo);
		return;
	}
	/* read again from the PSN it names, with what its RETH says now; the
	 * requests after it are not redone */
	src = et_qp_rd_target(qp, h, &nak);
	if (src == NULL) {
		et_qp_responder_fail(qp, nak, ET_WC_SUCCESS);
		return;
	}
	qp->st.reads_again++;
	rd_res_run(qp, r, h->psn, src, h->reth_dma_len, echo);
}

/* A READ or atomic request (d: its PSN less the expected one). */
static void
rd_request(struct et_qp *qp, const struct et_roce_pkt *pkt, uint16_t echo, int32_t d)
{
	const struct et_roce_hdr *h = &pkt->h;
	bool atomic = et_opcode_flags[h->opcode] & ET_OPF_ATOMIC;
	struct et_rd_res *r;
	uint8_t nak, *p;
	uint32_t npkts;

	if (d < 0) {
		rd_duplicate(qp, h, echo);
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
	/* in the middle of a message, or none we keep answers for */
	if (qp->rx_msg != ET_RX_NONE || qp->a.max_dest_rd_atomic == 0) {
		et_qp_responder_fail(qp, ET_NAK_INVALID_REQ, ET_WC_SUCCESS);
		return;
	}
	/* the slot it takes still owes an answer: a duplicate's, which a
	 * Go-Back-N requester (rxe) sent again with the new requests behind
	 * it, its limit not broken: ignored as lost (not an invalid request,
	 * which ends the QP), it comes again once that answer has left */
	if (qp->rd_res && et_rd_res_pending(et_qp_rd_res_at(qp, qp->rd_res_next))) {
		qp->st.rd_res_busy++;
		return;
	}
	p = et_qp_rd_target(qp, h, &nak);
	if (p == NULL) {
		et_qp_responder_fail(qp, nak, ET_WC_SUCCESS);
		return;
	}
	if (et_qp_rd_res_alloc(qp)) {
		qp->st.rx_dropped++; /* no memory: not answered, asked for again */
		return;
	}
	npkts = atomic || h->reth_dma_len == 0
			? 1 : (uint32_t)(((uint64_t)h->reth_dma_len + qp->a.mtu - 1) / qp->a.mtu);
	r = et_qp_rd_res_at(qp, qp->rd_res_next++);
	r->kind = atomic ? ET_RD_ATOMIC : ET_RD_READ;
	r->first_psn = h->psn;
	r->npkts = npkts;
	r->msn = qp->msn = (qp->msn + 1) & 0xffffff;
	r->next_psn = et_psn_add(h->psn, npkts); /* none pending: rd_res_run counts it */
	if (atomic) {
		r->orig = et_qp_atomic_exec(p, h);
		qp->st.atomics_rx++;
		rd_res_run(qp, r, h->psn, NULL, 0, echo);
	} else {
		qp->st.reads_rx++;
		qp->st.read_req_bytes += h->reth_dma_len;
		rd_res_run(qp, r, h->psn, p, h->reth_dma_len, echo);
	}
	qp->nak_sent = false;
	qp->unacked = 0;
	qp->epsn = et_psn_add(qp->epsn, npkts);
}

/* The oldest request with answers to send.  rd_res_send moves past those
 * that owe none, so a packet does not look at every request kept (128 for
 * perftest's READs: a fifth of a READ responder's time went there). */
static struct et_rd_res *
rd_res_sending(struct et_qp *qp)
{
	uint32_t first = rd_res_oldest(qp);

	if ((int32_t)(qp->rd_res_send - first) < 0)
		qp->rd_res_send = first;
	for (; qp->rd_res_send != qp->rd_res_next; qp->rd_res_send++) {
		struct et_rd_res *r = et_qp_rd_res_at(qp, qp->rd_res_send);

		if (et_rd_res_pending(r))
			return r;
	}
	return NULL;
}

static bool
gbn_answers_owed(const struct et_qp *qp)
{
	return qp->rd_res_pending != 0;
}

static bool
answers_ready(const struct et_qp *qp, uint64_t now)
{
	return qp->rd_res_pending && now >= et_qp_answer_hold(qp);
}

/* The next answer: a READ response (FIRST, MIDDLE, LAST or ONLY of the run
 * being sent) or an ATOMIC ACKNOWLEDGE. */
static struct rte_mbuf *
build_answer(struct et_qp *qp, uint64_t now)
{
	struct et_rd_res *r = rd_res_sending(qp);
	uint32_t i = (uint32_t)et_psn_diff(r->next_psn, r->run_psn), len = 0;
	uint32_t run = (uint32_t)et_psn_diff(et_psn_add(r->first_psn, r->npkts), r->run_psn);
	uint8_t opcode = ET_OP_ATOMIC_ACK;
	struct rte_mbuf *m;

	if (r->kind != ET_RD_ATOMIC) {
		opcode = run == 1 ? ET_OP_READ_RESP_ONLY
			 : i == 0 ? ET_OP_READ_RESP_FIRST
			 : i == run - 1 ? ET_OP_READ_RESP_LAST : ET_OP_READ_RESP_MIDDLE;
		len = et_qp_read_seg(qp, r->run_len, i);
	}
	m = et_qp_build_answer(qp, now, opcode, r->sport, r->next_psn, r->msn, r->orig,
			       len ? r->src + (uint64_t)i * qp->a.mtu : NULL, len);
	if (m == NULL)
		return NULL;
	r->next_psn = et_psn_add(r->next_psn, 1);
	if (!et_rd_res_pending(r))
		qp->rd_res_pending--;
	return m;
}

static void
gbn_responder_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint16_t echo)
{
	const struct et_roce_hdr *h = &pkt->h;
	int32_t d = et_psn_diff(h->psn, qp->epsn);

	if (et_opcode_flags[h->opcode] & (ET_OPF_READ_REQ | ET_OPF_ATOMIC)) {
		rd_request(qp, pkt, echo, d);
		return;
	}
	if (d < 0) {
		et_qp_ack_duplicate(qp);
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

static bool
gbn_tx_ready(const struct et_qp *qp, uint64_t now)
{
	return answers_ready(qp, now) || data_ready(qp, now);
}

/* Answers first: they are owed for requests taken, ahead of any ACK. */
static uint16_t
gbn_tx(struct et_qp *qp, uint64_t now, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = 0;

	while (k < n && answers_ready(qp, now) && (pkts[k] = build_answer(qp, now)))
		k++;
	while (k < n && data_ready(qp, now) && (pkts[k] = build_data(qp, now)))
		k++;
	return k;
}

static uint64_t
gbn_deadline(const struct et_qp *qp)
{
	uint64_t d = UINT64_MAX, hold = et_qp_data_hold(qp), ans = et_qp_answer_hold(qp);

	if (qp->rto_deadline)
		d = qp->rto_deadline;
	if (qp->snd_nxt != qp->sq_next_psn && hold && hold < d)
		d = hold;
	if (qp->rd_res_pending && ans && ans < d)
		d = ans;
	return d;
}

const struct et_qp_ops et_qp_gbn_ops = {
	.requester_rx = gbn_requester_rx,
	.responder_rx = gbn_responder_rx,
	.timer = gbn_timer,
	.tx_ready = gbn_tx_ready,
	.tx = gbn_tx,
	.answers_owed = gbn_answers_owed,
	.deadline = gbn_deadline,
	.opcodes = 1u << ET_WR_RDMA_WRITE | 1u << ET_WR_RDMA_WRITE_IMM | 1u << ET_WR_SEND |
		   1u << ET_WR_SEND_IMM | 1u << ET_WR_RDMA_READ | 1u << ET_WR_ATOMIC_CMP_SWP |
		   1u << ET_WR_ATOMIC_FETCH_ADD,
	.msn_is_epsn = false,
};
