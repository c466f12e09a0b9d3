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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "wire/et_path_id.h"
#include "transport/et_qp_priv.h"

/* The first size of each ring; every ring's size is a power of 2. */
#define MP_MIN 8u

/* One PSN in flight, at slot psn % window. */
struct et_mp_pkt {
	uint64_t sent_ns;   /* last transmission */
	uint32_t wqe;       /* send queue index (free-running) of its request */
	uint16_t len;       /* payload bytes */
	uint16_t path;      /* UDP source port of its last transmission */
	uint16_t txn;       /* transmissions, to tell its live timer entry */
	uint8_t tries;      /* retransmissions by timer or NAK */
	uint8_t flags;      /* ET_MP_ACKED, ET_MP_QUEUED */
};

enum { ET_MP_ACKED = 1, ET_MP_QUEUED = 2 /* waiting in the retransmit queue */ };

/* A packet timer: when it expires, for which PSN, which transmission. */
struct et_mp_timer {
	uint64_t deadline;
	uint32_t psn;
	uint16_t txn;
};

/* A selective ACK owed: PSN, echo port, CE seen. */
struct et_mp_ack {
	uint32_t psn;
	uint16_t sport;
	uint8_t ce;
};

/* An answer owed: a READ's bytes (src, len) or an atomic's old value. */
struct et_mp_answer {
	uint8_t *src;
	uint64_t orig;
	uint32_t psn;
	uint16_t len;
	uint16_t sport;
	uint8_t atomic;
};

/* Responder: one PSN of [epsn, epsn + rx_cap), at slot psn % rx_cap. */
struct et_mp_rslot {
	uint32_t imm;       /* its immediate */
	uint16_t len;       /* payload bytes */
	uint8_t flags;      /* ET_MP_GOT, ET_MP_LAST, ET_MP_IMM */
};

enum {
	ET_MP_GOT = 1,      /* placed */
	ET_MP_LAST = 2,     /* ends a message (AckReq) */
	ET_MP_IMM = 4,      /* ends a WRITE with immediate */
};

/* Allocated at create in multipath mode; its rings when first needed. */
struct et_qp_mp {
	/* requester: PSN psn in flight at tx[psn % tx_cap]; the timer and
	 * retransmit queues have 2 * tx_cap entries: at most one per packet
	 * in flight is live, the rest are skipped lazily, and a full queue is
	 * compacted, which frees at least half of it */
	struct et_mp_pkt *tx;
	/* timers in transmission order, so deadlines never decrease; entries
	 * of acknowledged or resent packets are skipped when they come up */
	struct et_mp_timer *tq;
	uint32_t *rtx;                         /* PSNs to send again, in order */
	uint32_t tx_cap;                       /* 0 until the first packet */
	uint32_t tq_head, tq_tail;             /* free-running */
	uint32_t rtx_head, rtx_tail;           /* free-running */
	/* responder */
	struct et_mp_rslot *rx;
	uint32_t rx_cap;                       /* 0 until the first packet placed */
	uint32_t rx_len;                       /* bytes of the message before epsn */
	uint32_t imm_pending;                  /* placed, receive not yet consumed */
	struct et_mp_ack *acks;
	uint32_t ack_cap;
	uint32_t ack_head, ack_tail;           /* free-running */
	struct et_mp_answer *ans;
	uint32_t ans_cap;
	uint32_t ans_head, ans_tail;           /* free-running */
};

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

/* Only for a PSN of [epsn, epsn + rx_cap), rx_cap > 0. */
static inline struct et_mp_rslot *
mp_rslot(struct et_qp *qp, uint32_t psn)
{
	return &qp->mp->rx[psn & (qp->mp->rx_cap - 1)];
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

/* The ACK queue at twice its size (MP_MIN at first), in order. */
static int
mp_ack_grow(struct et_qp *qp)
{
	struct et_qp_mp *mp = qp->mp;
	uint32_t cap = mp->ack_cap ? 2 * mp->ack_cap : MP_MIN, i;
	struct et_mp_ack *a = malloc(cap * sizeof(*a));

	if (a == NULL)
		return -ENOMEM;
	for (i = mp->ack_head; i != mp->ack_tail; i++)
		a[i & (cap - 1)] = mp->acks[i & (mp->ack_cap - 1)];
	free(mp->acks);
	mp->acks = a;
	mp->ack_cap = cap;
	return 0;
}

/* The answer queue at twice its size (MP_MIN at first), in order. */
static int
mp_ans_grow(struct et_qp *qp)
{
	struct et_qp_mp *mp = qp->mp;
	uint32_t cap = mp->ans_cap ? 2 * mp->ans_cap : MP_MIN, i;
	struct et_mp_answer *a = malloc(cap * sizeof(*a));

	if (a == NULL)
		return -ENOMEM;
	for (i = mp->ans_head; i != mp->ans_tail; i++)
		a[i & (cap - 1)] = mp->ans[i & (mp->ans_cap - 1)];
	free(mp->ans);
	mp->ans = a;
	mp->ans_cap = cap;
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

/* Responder: a selective ACK owed for psn.  The queue grows to the window;
 * full at that, it loses the ACK: a later ACK's cumulative PSN or the
 * requester's timer covers it. */
static void
mp_queue_ack(struct et_qp *qp, uint32_t psn, uint16_t sport, bool ce)
{
	struct et_qp_mp *mp = qp->mp;

	if (mp->ack_tail - mp->ack_head == mp->ack_cap &&
	    (mp->ack_cap == ET_QP_MP_WINDOW || mp_ack_grow(qp))) {
		qp->st.acks_unsent++;
		return;
	}
	mp->acks[mp->ack_tail++ & (mp->ack_cap - 1)] = (struct et_mp_ack){psn, sport, ce};
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

	if (mp->ans_tail - mp->ans_head == mp->ans_cap &&
	    (mp->ans_cap == ET_QP_MP_WINDOW || mp_ans_grow(qp))) {
		qp->st.acks_unsent++;
		return;
	}
	mp->ans[mp->ans_tail++ & (mp->ans_cap - 1)] = *a;
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

static void
mp_responder_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint16_t echo)
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

static struct rte_mbuf *
mp_build_ack(struct et_qp *qp)
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
static struct rte_mbuf *
mp_build_answer(struct et_qp *qp, uint64_t now)
{
	struct et_qp_mp *mp = qp->mp;
	const struct et_mp_answer *a = &mp->ans[mp->ans_head & (mp->ans_cap - 1)];
	struct et_roce_hdr h;
	struct rte_mbuf *m;

	et_qp_base_hdr(qp, &h, a->sport);
	h.ip_id = qp->ip_id++;
	h.psn = a->psn;
	h.aeth_syndrome = et_aeth_ack(ET_AETH_CREDITS_UNLIMITED);
	h.aeth_msn = qp->epsn;
	if (a->atomic) {
		h.opcode = ET_OP_ATOMIC_ACK;
		h.atomic_orig = a->orig;
	} else {
		h.opcode = ET_OP_READ_RESP_ONLY;
		h.ecn = ET_ECN_ECT0;
	}
	m = et_qp_build(qp, &h, a->len ? a->src : NULL, a->len);
	if (m == NULL)
		return NULL;
	et_qp_answered(qp, now, m, a->len);
	if (a->atomic) {
		qp->st.atomic_acks_tx++;
	} else {
		qp->st.read_resp_tx++;
		qp->st.read_resp_bytes += a->len;
	}
	mp->ans_head++;
	return m;
}

static bool
mp_answers_ready(const struct et_qp *qp, uint64_t now)
{
	return qp->mp->ans_head != qp->mp->ans_tail && now >= et_qp_answer_hold(qp);
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
	return qp->mp->ack_head != qp->mp->ack_tail || mp_answers_ready(qp, now) ||
	       mp_data_ready(qp, now);
}

static uint16_t
mp_tx_acks(struct et_qp *qp, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = 0;

	while (k < n && qp->mp->ack_head != qp->mp->ack_tail && (pkts[k] = mp_build_ack(qp)))
		k++;
	return k;
}

static uint16_t
mp_tx(struct et_qp *qp, uint64_t now, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = mp_tx_acks(qp, pkts, n);

	while (k < n && mp_answers_ready(qp, now) && (pkts[k] = mp_build_answer(qp, now)))
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
	.responder_rx = mp_responder_rx,
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
