/* SPDX-License-Identifier: BSD-3-Clause
 * The multipath mode's state, shared by its requester (et_qp_mp.c) and
 * its responder (et_qp_mp_resp.c).  Private to lib/transport.
 */
#ifndef ET_QP_MP_PRIV_H
#define ET_QP_MP_PRIV_H

#include <stdbool.h>
#include <stdint.h>

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

/* The responder's side of the ops (et_qp_mp_resp.c). */
void et_qp_mp_responder_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint16_t echo);
/* The oldest selective ACK owed, or NULL (no mbuf). */
struct rte_mbuf *et_qp_mp_build_ack(struct et_qp *qp);
/* The oldest READ or atomic answer owed, or NULL (no mbuf). */
struct rte_mbuf *et_qp_mp_build_answer(struct et_qp *qp, uint64_t now);
/* An answer is owed and its pacing allows it now. */
bool et_qp_mp_answers_ready(const struct et_qp *qp, uint64_t now);

#endif
