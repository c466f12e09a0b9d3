/* SPDX-License-Identifier: BSD-3-Clause
 * The state of an RC queue pair.
 *
 * Included by the .c files of lib/transport and by the unit tests and fuzz
 * targets that must look inside a QP; every other caller stays with et_qp.h,
 * so that the transport can change its state without touching them.
 */
#ifndef ET_QP_PRIV_H
#define ET_QP_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "transport/et_qp.h"

/* One send WQE and the PSNs it was given. */
struct et_swqe {
	struct et_send_wr wr;
	uint32_t first_psn;
	uint32_t npkts;
	uint64_t stream_off;  /* payload bytes of all WQEs posted before it */
};

enum et_rx_msg { ET_RX_NONE, ET_RX_SEND, ET_RX_WRITE };

#define ET_QP_MP_WORDS (ET_QP_MP_WINDOW / 64)

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

/* Entries of the timer and retransmit queues: at most one per packet in
 * flight is live, the rest are skipped lazily, and a full queue is
 * compacted, which frees at least half of it. */
#define ET_QP_MP_QUEUE (2 * ET_QP_MP_WINDOW)

/* Allocated at create in multipath mode; nothing is allocated later. */
struct et_qp_mp {
	/* requester */
	struct et_mp_pkt tx[ET_QP_MP_WINDOW];
	/* timers in transmission order, so deadlines never decrease; entries
	 * of acknowledged or resent packets are skipped when they come up */
	struct et_mp_timer tq[ET_QP_MP_QUEUE];
	uint32_t tq_head, tq_tail;             /* free-running */
	uint32_t rtx[ET_QP_MP_QUEUE];          /* PSNs to send again, in order */
	uint32_t rtx_head, rtx_tail;           /* free-running */
	/* responder: per PSN slot of [epsn, epsn + window) */
	uint64_t got[ET_QP_MP_WORDS];          /* placed */
	uint64_t last[ET_QP_MP_WORDS];         /* ends a message (AckReq) */
	uint64_t imm[ET_QP_MP_WORDS];          /* ends a WRITE with immediate */
	uint16_t len[ET_QP_MP_WINDOW];         /* payload bytes */
	uint32_t imm_data[ET_QP_MP_WINDOW];
	uint32_t rx_len;                       /* bytes of the message before epsn */
	uint32_t imm_pending;                  /* placed, receive not yet consumed */
	struct et_mp_ack acks[ET_QP_MP_WINDOW];
	uint32_t ack_head, ack_tail;           /* free-running */
};

struct et_qp {
	struct et_qp_attr a;
	enum et_qp_state state;
	struct et_mr_table *mrs;
	struct et_cq *send_cq, *recv_cq;
	struct rte_mempool *pool;
	et_path_fn path_fn;
	void *path_ctx;
	et_ack_fn ack_fn;
	void *ack_ctx;
	struct et_qp_mp *mp;           /* multipath mode only */
	uint16_t path_id;              /* current UDP source port of data; in
					* multipath mode the last packet's, or
					* in an ET_PATH_TIMEOUT call the
					* timed-out packet's */
	bool path_chosen;
	uint16_t ip_id;

	/* requester */
	struct et_swqe *sq;
	uint32_t sq_mask;
	uint32_t sq_head;              /* oldest not completed */
	uint32_t sq_cur;               /* the WQE holding snd_nxt */
	uint32_t sq_tail;              /* next free slot */
	uint32_t sq_next_psn;          /* first PSN of the next posted WQE */
	uint32_t snd_una;              /* oldest unacknowledged PSN */
	uint32_t snd_nxt;              /* next PSN to send */
	uint32_t snd_max;              /* one past the highest PSN ever sent */
	uint64_t sq_stream;            /* payload bytes ever posted */
	uint64_t una_pos, nxt_pos;     /* stream offsets of snd_una, snd_nxt */
	uint64_t inflight;             /* payload bytes in [snd_una, snd_nxt);
					* multipath: of those not yet acked */
	uint64_t rto_deadline;         /* 0: timer off */
	uint64_t rnr_until;            /* sending paused by an RNR NAK */
	uint8_t retries_left;
	uint8_t rnr_retries_left;
	struct et_dctcp cc;

	/* responder */
	struct et_recv_wr *rq;
	uint32_t rq_mask;
	uint32_t rq_head, rq_tail;
	uint32_t epsn;                 /* expected PSN */
	uint32_t msn;
	bool nak_sent;                 /* a sequence NAK is out for epsn */
	uint8_t rx_msg;                /* enum et_rx_msg: message in progress */
	uint8_t *rx_dst;               /* where the next payload byte goes */
	uint64_t rx_left;              /* bytes the message may still place */
	uint32_t rx_len;               /* bytes placed in this message */
	uint32_t unacked;              /* packets accepted since the last ACK */
	/* the one pending AETH response: a later one always covers an earlier */
	bool resp_pending;
	uint8_t resp_syndrome;
	uint32_t resp_psn;
	uint16_t resp_sport;           /* echo of the last data packet's path ID */
	uint32_t cnp_pending;
	uint16_t cnp_sport;
	uint64_t last_cnp_ns;
	bool cnp_ever;

	struct et_qp_stats st;
};

#endif /* ET_QP_PRIV_H */
