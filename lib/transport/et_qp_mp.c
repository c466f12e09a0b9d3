/* SPDX-License-Identifier: BSD-3-Clause
 * RC queue pair, multipath mode: selective repeat for packet spraying.
 *
 * Every packet is a self-contained RDMA WRITE ONLY (the last of a WRITE
 * with immediate: WRITE ONLY with immediate) on a path of its own.  The
 * responder places any packet of [epsn, epsn + window) at once and
 * acknowledges each one selectively (BTH PSN) with its cumulative epsn in
 * the AETH MSN field; completions stay in order, as epsn passes.  The
 * requester keeps a slot per PSN in flight and a timer per packet, and
 * resends only what is lost.  docs/transport.md says what is ours.
 *
 * READ and atomics: a READ of n packets is n READ requests of one packet
 * each, every one on its own path and answered by one READ RESPONSE ONLY
 * that carries the responder's cumulative PSN in its AETH MSN field, as an
 * ACK does; an atomic is one request and one ATOMIC ACKNOWLEDGE.  Answers
 * take the request's path back.  A READ is read again if its request comes
 * twice (reading is idempotent); an atomic is answered again from the
 * values kept (et_rd_res), never executed twice.  A cumulative PSN never
 * acknowledges a READ or an atomic: only its answer does.
 *
 * The state grows with what it holds: nothing per side until that side is
 * used, then rings of MP_MIN slots that double, up to the window, when the
 * PSNs in flight (requester), the PSNs from the expected one to the
 * furthest placed (responder) or the ACKs owed need more.  A QP of a
 * 4-packet flow holds well under a kilobyte, not the window's 80 KB.
 *
 * This file is the requester and the mode's ops; et_qp_mp_resp.c the
 * responder; et_qp_mp_priv.h the state they share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "wire/et_path_id.h"
#include "transport/et_qp_priv.h"
#include "transport/et_qp_mp_priv.h"

static inline uint32_t
mpq_mask(const struct et_qp_mp *mp)
{
	return 2 * mp->tx_cap - 1;
}

/* Only for a PSN in flight (the ring exists then). */
static inline struct et_mp_pkt *
mp_pkt(struct et_qp *qp, uint32_t psn)
{
	return &qp->mp->tx[psn & (qp->mp->tx_cap - 1)];
}

/* The requester's rings at twice their size (MP_MIN at first), every PSN in
 * flight at its new slot, both queues in order.  0 or -ENOMEM. */
static int
mp_tx_grow(struct et_qp *qp)
{
	struct et_qp_mp *mp = qp->mp;
	uint32_t cap = mp->tx_cap ? 2 * mp->tx_cap : MP_MIN, i;
	uint32_t span = (uint32_t)et_psn_diff(qp->snd_nxt, qp->snd_una);
	struct et_mp_pkt *tx = calloc(cap, sizeof(*tx)); /* txn from 0 */
	struct et_mp_timer *tq = malloc(2 * cap * sizeof(*tq));
	uint32_t *rtx = malloc(2 * cap * sizeof(*rtx));

	if (!tx || !tq || !rtx) {
		free(tx);
		free(tq);
		free(rtx);
		return -ENOMEM;
	}
	for (i = 0; i < span; i++) {
		uint32_t psn = et_psn_add(qp->snd_una, i);

		tx[psn & (cap - 1)] = *mp_pkt(qp, psn);
	}
	for (i = mp->tq_head; i != mp->tq_tail; i++)
		tq[i & (2 * cap - 1)] = mp->tq[i & mpq_mask(mp)];
	for (i = mp->rtx_head; i != mp->rtx_tail; i++)
		rtx[i & (2 * cap - 1)] = mp->rtx[i & mpq_mask(mp)];
	free(mp->tx);
	free(mp->tq);
	free(mp->rtx);
	mp->tx = tx;
	mp->tq = tq;
	mp->rtx = rtx;
	mp->tx_cap = cap;
	return 0;
}

/* Sent, and not below the cumulative acknowledgement. */
static inline bool
mp_in_flight(const struct et_qp *qp, uint32_t psn)
{
	return et_psn_diff(psn, qp->snd_una) >= 0 && et_psn_diff(psn, qp->snd_nxt) < 0;
}

/* A timer entry stands for the packet's latest transmission, if it is still
 * unacknowledged and not already waiting to be sent again. */
static bool
mp_timer_live(struct et_qp *qp, const struct et_mp_timer *t)
{
	const struct et_mp_pkt *p;

	if (!mp_in_flight(qp, t->psn))
		return false;
	p = mp_pkt(qp, t->psn);
	return !(p->flags & (ET_MP_ACKED | ET_MP_QUEUED)) && p->txn == t->txn;
}

static bool
mp_rtx_live(struct et_qp *qp, uint32_t psn)
{
	return mp_in_flight(qp, psn) &&
	       (mp_pkt(qp, psn)->flags & (ET_MP_ACKED | ET_MP_QUEUED)) == ET_MP_QUEUED;
}

/* Drop dead entries from the heads of both queues, so that the timer head
 * is the earliest live deadline and a non-empty retransmit queue has a
 * packet to send (et_qp_deadline and et_qp_tx_ready read only the heads). */
static void
mp_prune(struct et_qp *qp)
{
	struct et_qp_mp *mp = qp->mp;

	while (mp->tq_head != mp->tq_tail &&
	       !mp_timer_live(qp, &mp->tq[mp->tq_head & mpq_mask(mp)]))
		mp->tq_head++;
	while (mp->rtx_head != mp->rtx_tail &&
	       !mp_rtx_live(qp, mp->rtx[mp->rtx_head & mpq_mask(mp)]))
		mp->rtx_head++;
}

static void
mp_timer_push(struct et_qp *qp, uint32_t psn, uint16_t txn, uint64_t deadline)
{
	struct et_qp_mp *mp = qp->mp;
	uint32_t m = mpq_mask(mp);

	if (mp->tq_tail - mp->tq_head == m + 1) {
		/* full of dead entries behind a live head: squeeze them out */
		uint32_t i, j = mp->tq_head;

		for (i = mp->tq_head; i != mp->tq_tail; i++)
			if (mp_timer_live(qp, &mp->tq[i & m]))
				mp->tq[j++ & m] = mp->tq[i & m];
		mp->tq_tail = j;
	}
	mp->tq[mp->tq_tail++ & m] = (struct et_mp_timer){deadline, psn, txn};
}

/* psn goes to the retransmit queue; its timer entry dies with the flag. */
static void
mp_queue_rtx(struct et_qp *qp, uint32_t psn)
{
	struct et_qp_mp *mp = qp->mp;
	uint32_t m = mpq_mask(mp);

	if (mp->rtx_tail - mp->rtx_head == m + 1) {
		uint32_t i, j = mp->rtx_head;

		for (i = mp->rtx_head; i != mp->rtx_tail; i++)
			if (mp_rtx_live(qp, mp->rtx[i & m]))
				mp->rtx[j++ & m] = mp->rtx[i & m];
		mp->rtx_tail = j;
	}
	mp_pkt(qp, psn)->flags |= ET_MP_QUEUED;
	mp->rtx[mp->rtx_tail++ & m] = psn;
}

/* A timeout or a sequence NAK for psn: send it again, unless its retry
 * budget is spent (false: the QP has failed). */
static bool
mp_retry(struct et_qp *qp, uint32_t psn)
{
	struct et_mp_pkt *p = mp_pkt(qp, psn);

	if (p->tries >= qp->a.retry_cnt && qp->a.retry_cnt != ET_QP_RETRY_FOREVER) {
		et_qp_fail(qp, ET_WC_RETRY_EXC_ERR);
		return false;
	}
	if (p->tries < UINT8_MAX)
		p->tries++;
	mp_queue_rtx(qp, psn);
	return true;
}

/* Payload bytes of the next new packet (snd_nxt, in WQE sq_cur). */
static uint32_t
next_len(const struct et_qp *qp)
{
	const struct et_swqe *w = &qp->sq[qp->sq_cur & qp->sq_mask];
	uint64_t off = (uint64_t)et_psn_diff(qp->snd_nxt, w->first_psn) * qp->a.mtu;

	return et_qp_seg_len(qp, &w->wr, off);
}

/* The next new packet is the first of a READ or an atomic. */
static bool
next_starts_rd(const struct et_qp *qp)
{
	const struct et_swqe *w = &qp->sq[qp->sq_cur & qp->sq_mask];

	return et_wr_is_rd_atomic(w->wr.opcode) && qp->snd_nxt == w->first_psn;
}

static bool
mp_data_ready(const struct et_qp *qp, uint64_t now)
{
	const struct et_qp_mp *mp = qp->mp;

	if (qp->state != ET_QPS_RTS || now < et_qp_data_hold(qp))
		return false;
	/* a packet sent again is already counted in flight */
	if (mp->rtx_head != mp->rtx_tail)
		return true;
	if (qp->snd_nxt == qp->sq_next_psn ||
	    (uint32_t)et_psn_diff(qp->snd_nxt, qp->snd_una) >= ET_QP_MP_WINDOW)
		return false;
	/* a READ or atomic not yet begun waits for the initiator depth */
	if (next_starts_rd(qp) && qp->rd_inflight >= qp->a.max_rd_atomic)
		return false;
	return qp->inflight == 0 || qp->inflight + next_len(qp) <= et_dctcp_cwnd(&qp->cc);
}

/* The next data packet: a retransmission if one is due, else snd_nxt. */
static struct rte_mbuf *
mp_build_data(struct et_qp *qp, uint64_t now)
{
	struct et_qp_mp *mp = qp->mp;
	bool rtx = mp->rtx_head != mp->rtx_tail;
	uint32_t psn, wi, k, len;
	struct et_mp_pkt *p;
	const struct et_swqe *w;
	const struct et_send_wr *wr;
	uint64_t off;
	bool last;
	struct et_roce_hdr h;
	struct rte_mbuf *m;

	/* a new PSN needs a slot that no PSN in flight holds */
	if (!rtx && (uint32_t)et_psn_diff(qp->snd_nxt, qp->snd_una) >= mp->tx_cap &&
	    mp_tx_grow(qp)) {
		qp->st.alloc_fail++; /* tried again as for an empty pool */
		return NULL;
	}
	psn = rtx ? mp->rtx[mp->rtx_head & mpq_mask(mp)] : qp->snd_nxt;
	p = mp_pkt(qp, psn);
	wi = rtx ? p->wqe : qp->sq_cur;
	w = &qp->sq[wi & qp->sq_mask];
	wr = &w->wr;
	k = (uint32_t)et_psn_diff(psn, w->first_psn);
	off = (uint64_t)k * qp->a.mtu;
	len = et_qp_seg_len(qp, wr, off);
	last = k == w->npkts - 1;
	if (qp->path_fn)
		qp->path_id = qp->path_fn(qp->path_ctx, qp, ET_PATH_PACKET, now);
	et_qp_base_hdr(qp, &h, qp->path_id);
	h.ecn = ET_ECN_ECT0;
	h.ip_id = qp->ip_id++;
	h.psn = psn;
	if (et_wr_is_rd_atomic(wr->opcode)) {
		/* one packet's READ, or the atomic */
		et_qp_rd_request_hdr(qp, wr, k, &h);
		h.reth_dma_len = et_qp_read_seg(qp, wr->length, k);
		len = 0;
	} else {
		h.opcode = last && wr->opcode == ET_WR_RDMA_WRITE_IMM ? ET_OP_WRITE_ONLY_IMM
								       : ET_OP_WRITE_ONLY;
		/* AckReq on the last packet of every message, as in order:
		 * here it also tells the responder where a message ends */
		h.ackreq = last;
		h.reth_va = wr->remote_addr + off;
		h.reth_rkey = wr->rkey;
		h.reth_dma_len = len;
		h.imm = wr->imm;
	}
	m = et_qp_build_data(qp, &h, wr, off, len);
	if (m == NULL)
		return NULL;
	et_qp_paced(qp, now, m);
	if (et_wr_is_atomic(wr->opcode))
		qp->st.atomics_tx++;
	else if (et_wr_is_rd_atomic(wr->opcode))
		qp->st.reads_tx++;
	else
		qp->st.tx_pkts++;
	qp->st.tx_bytes += len;
	if (rtx) {
		qp->st.retransmits++;
		mp->rtx_head++;
		p->flags &= (uint8_t)~ET_MP_QUEUED;
	} else {
		p->wqe = wi;
		p->len = (uint16_t)len;
		p->tries = 0;
		p->flags = 0;
		qp->snd_nxt = qp->snd_max = et_psn_add(psn, 1);
		qp->inflight += len;
		if (k == 0 && et_wr_is_rd_atomic(wr->opcode))
			qp->rd_inflight++;
		if (last)
			qp->sq_cur++;
	}
	p->sent_ns = now;
	p->path = qp->path_id;
	p->txn++;
	mp_timer_push(qp, psn, p->txn, now + qp->a.rto_ns);
	if (rtx)
		mp_prune(qp);
	return m;
}

/* A READ's or an atomic's PSN: only its answer acknowledges it. */
static bool
mp_is_rd(struct et_qp *qp, uint32_t psn)
{
	return et_wr_is_rd_atomic(qp->sq[mp_pkt(qp, psn)->wqe & qp->sq_mask].wr.opcode);
}

/* psn is acknowledged (answer: by its READ response or atomic ACK): it
 * leaves the bytes in flight.  1 if it is news. */
static uint32_t
mp_mark(struct et_qp *qp, uint32_t psn, bool answer)
{
	struct et_mp_pkt *p = mp_pkt(qp, psn);

	if ((p->flags & ET_MP_ACKED) || (!answer && mp_is_rd(qp, psn)))
		return 0;
	p->flags |= ET_MP_ACKED;
	qp->inflight -= p->len;
	return 1;
}

/* Everything below cum is acknowledged (but READs and atomics, which their
 * answers acknowledge), and psn too if sel (answer: psn's answer came);
 * snd_una moves over acknowledged packets and requests complete, in order,
 * once all their packets are. */
static void
mp_acked(struct et_qp *qp, uint32_t cum, uint32_t psn, bool sel, bool answer)
{
	uint32_t una0 = qp->snd_una, n = 0;
	int32_t upto = et_psn_diff(cum, qp->snd_una);

	for (int32_t i = 0; i < upto; i++)
		n += mp_mark(qp, et_psn_add(una0, (uint32_t)i), false);
	if (sel && mp_in_flight(qp, psn))
		n += mp_mark(qp, psn, answer);
	while (qp->snd_una != qp->snd_nxt && (mp_pkt(qp, qp->snd_una)->flags & ET_MP_ACKED))
		qp->snd_una = et_psn_add(qp->snd_una, 1);
	if (n == 0)
		return;
	while (qp->sq_head != qp->sq_tail) {
		struct et_swqe *w = &qp->sq[qp->sq_head & qp->sq_mask];

		if (et_psn_diff(et_psn_add(w->first_psn, w->npkts), qp->snd_una) > 0)
			break;
		if (et_wr_is_rd_atomic(w->wr.opcode))
			qp->rd_inflight--;
		et_qp_complete_send(qp, &w->wr, ET_WC_SUCCESS);
		qp->sq_head++;
	}
	if (qp->snd_una != una0)
		qp->rnr_retries_left = qp->a.rnr_retry;
	et_dctcp_on_ack(&qp->cc, n, qp->snd_una, qp->snd_nxt);
}

/* A READ RESPONSE ONLY or an ATOMIC ACKNOWLEDGE for psn: its bytes or the
 * old value go where the request said, and it is acknowledged. */
static void
mp_answer_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	const struct et_roce_hdr *h = &pkt->h;
	bool read = h->opcode == ET_OP_READ_RESP_ONLY;
	const struct et_swqe *w;
	uint32_t k;

	if ((h->aeth_syndrome & ET_AETH_KIND_MASK) != ET_AETH_ACK ||
	    (!read && h->opcode != ET_OP_ATOMIC_ACK)) {
		qp->st.rx_bad_resp++;
		return;
	}
	if (!mp_in_flight(qp, h->psn) || (mp_pkt(qp, h->psn)->flags & ET_MP_ACKED)) {
		qp->st.resp_dup_rx++;
		return;
	}
	w = &qp->sq[mp_pkt(qp, h->psn)->wqe & qp->sq_mask];
	k = (uint32_t)et_psn_diff(h->psn, w->first_psn);
	if (!et_wr_is_rd_atomic(w->wr.opcode) || read != (w->wr.opcode == ET_WR_RDMA_READ) ||
	    (read && pkt->payload_len != et_qp_read_seg(qp, w->wr.length, k))) {
		qp->st.rx_bad_resp++;
		return;
	}
	if (read) {
		et_qp_ce_seen(qp, h, now);
		et_qp_wr_place(&w->wr, (uint64_t)k * qp->a.mtu, pkt->payload, pkt->payload_len);
		qp->st.read_resp_rx++;
	} else {
		et_qp_wr_place(&w->wr, 0, &h->atomic_orig, ET_ATOMIC_LEN);
		qp->st.atomic_acks_rx++;
	}
	mp_acked(qp, h->aeth_msn, h->psn, true, true);
	if (qp->ack_fn)
		qp->ack_fn(qp->ack_ctx, qp, et_path_swap(h->udp_sport), h->ecn == ET_ECN_CE, now);
	mp_prune(qp);
}

/* An ACK or NAK: BTH PSN names one packet, the MSN field is the
 * responder's cumulative expected PSN. */
static void
mp_requester_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	uint8_t syn = pkt->h.aeth_syndrome;
	uint32_t psn = pkt->h.psn, cum = pkt->h.aeth_msn;
	bool stale = et_psn_diff(psn, qp->snd_una) < 0;

	if (et_psn_diff(psn, qp->snd_max) >= 0 || et_psn_diff(cum, qp->snd_max) > 0) {
		qp->st.rx_bad_ack++;
		return;
	}
	if (pkt->h.opcode != ET_OP_ACK) {
		mp_answer_rx(qp, pkt, now);
		return;
	}
	switch (syn & ET_AETH_KIND_MASK) {
	case ET_AETH_ACK:
		qp->st.acks_rx++;
		mp_acked(qp, cum, psn, true, false);
		if (qp->ack_fn)
			qp->ack_fn(qp->ack_ctx, qp, et_path_swap(pkt->h.udp_sport),
				   pkt->h.resv8a & 1, now);
		break;
	case ET_AETH_RNR_NAK:
		/* a WRITE with immediate found no receive: pause as in order,
		 * then send that packet again */
		qp->st.rnr_naks_rx++;
		mp_acked(qp, cum, psn, false, false);
		if (!mp_in_flight(qp, psn) ||
		    (mp_pkt(qp, psn)->flags & (ET_MP_ACKED | ET_MP_QUEUED)))
			break;
		if (!et_qp_rnr_pause(qp, syn, now))
			return;
		mp_queue_rtx(qp, psn);
		break;
	case ET_AETH_NAK:
		mp_acked(qp, cum, psn, false, false);
		if ((syn & ET_AETH_VALUE_MASK) == ET_NAK_PSN_SEQ) {
			/* never sent in multipath mode; from a peer that does,
			 * it names one lost packet */
			qp->st.naks_rx++;
			if (mp_in_flight(qp, psn) &&
			    !(mp_pkt(qp, psn)->flags & (ET_MP_ACKED | ET_MP_QUEUED)) &&
			    !mp_retry(qp, psn))
				return;
			break;
		}
		qp->st.err_naks_rx++;
		if (stale)
			break;
		et_qp_fail_nak(qp, syn);
		return;
	default:
		qp->st.rx_dropped++;
		return;
	}
	mp_prune(qp);
}

/* Every packet timer that is due: that packet alone goes again. */
static void
mp_timer(struct et_qp *qp, uint64_t now)
{
	struct et_qp_mp *mp = qp->mp;

	while (mp->tq_head != mp->tq_tail) {
		struct et_mp_timer t = mp->tq[mp->tq_head & mpq_mask(mp)];

		if (t.deadline > now)
			break;
		mp->tq_head++;
		if (!mp_timer_live(qp, &t))
			continue;
		qp->st.timeouts++;
		if (!mp_retry(qp, t.psn))
			return;
		/* tell the load balancer which path lost it */
		if (qp->path_fn) {
			qp->path_id = mp_pkt(qp, t.psn)->path;
			(void)qp->path_fn(qp->path_ctx, qp, ET_PATH_TIMEOUT, now);
		}
	}
	mp_prune(qp);
}

static int
mp_init(struct et_qp *qp)
{
	qp->mp = calloc(1, sizeof(*qp->mp));
	return qp->mp ? 0 : -ENOMEM;
}

static void
mp_fini(struct et_qp *qp)
{
	if (qp->mp == NULL)
		return;
	free(qp->mp->tx);
	free(qp->mp->tq);
	free(qp->mp->rtx);
	free(qp->mp->rx);
	free(qp->mp->acks);
	free(qp->mp->ans);
	free(qp->mp);
	qp->mp = NULL;
}

size_t
et_qp_mp_state_bytes(const struct et_qp *qp)
{
	const struct et_qp_mp *mp = qp->mp;

	if (mp == NULL)
		return 0;
	return sizeof(*mp) + mp->tx_cap * (sizeof(*mp->tx) + 2 * sizeof(*mp->tq) +
					   2 * sizeof(*mp->rtx)) +
	       mp->rx_cap * sizeof(*mp->rx) + mp->ack_cap * sizeof(*mp->acks) +
	       mp->ans_cap * sizeof(*mp->ans);
}

static void
mp_fail(struct et_qp *qp)
{
	qp->mp->tq_head = qp->mp->tq_tail;
	qp->mp->rtx_head = qp->mp->rtx_tail;
	qp->mp->ans_head = qp->mp->ans_tail;
}

static bool
mp_tx_ready(const struct et_qp *qp, uint64_t now)
{
	return qp->mp->ack_head != qp->mp->ack_tail || et_qp_mp_answers_ready(qp, now) ||
	       mp_data_ready(qp, now);
}

static uint16_t
mp_tx_acks(struct et_qp *qp, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = 0;

	while (k < n && qp->mp->ack_head != qp->mp->ack_tail && (pkts[k] = et_qp_mp_build_ack(qp)))
		k++;
	return k;
}

static uint16_t
mp_tx(struct et_qp *qp, uint64_t now, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = mp_tx_acks(qp, pkts, n);

	while (k < n && et_qp_mp_answers_ready(qp, now) && (pkts[k] = et_qp_mp_build_answer(qp, now)))
		k++;
	while (k < n && mp_data_ready(qp, now) && (pkts[k] = mp_build_data(qp, now)))
		k++;
	return k;
}

static uint64_t
mp_deadline(const struct et_qp *qp)
{
	const struct et_qp_mp *mp = qp->mp;
	uint64_t d = UINT64_MAX, hold = et_qp_data_hold(qp);

	/* mp_prune keeps the head live: the earliest packet timer */
	if (mp->tq_head != mp->tq_tail)
		d = mp->tq[mp->tq_head & mpq_mask(mp)].deadline;
	if (hold && hold < d && (mp->rtx_head != mp->rtx_tail || qp->snd_nxt != qp->sq_next_psn))
		d = hold;
	hold = et_qp_answer_hold(qp);
	if (hold && hold < d && mp->ans_head != mp->ans_tail)
		d = hold;
	return d;
}

const struct et_qp_ops et_qp_mp_ops = {
	.init = mp_init,
	.fini = mp_fini,
	.fail = mp_fail,
	.requester_rx = mp_requester_rx,
	.responder_rx = et_qp_mp_responder_rx,
	.timer = mp_timer,
	.tx_ready = mp_tx_ready,
	.tx = mp_tx,
	.tx_acks = mp_tx_acks,
	.deadline = mp_deadline,
	/* a SEND's later packets carry no address: they cannot be placed
	 * before the earlier ones arrive; posting one is refused */
	.opcodes = 1u << ET_WR_RDMA_WRITE | 1u << ET_WR_RDMA_WRITE_IMM | 1u << ET_WR_RDMA_READ |
		   1u << ET_WR_ATOMIC_CMP_SWP | 1u << ET_WR_ATOMIC_FETCH_ADD,
	.msn_is_epsn = true,
};
