/* SPDX-License-Identifier: BSD-3-Clause
 * The state of an RC queue pair, and what the files of lib/transport share.
 *
 * Included by the .c files of lib/transport and by the unit tests and fuzz
 * targets that must look inside a QP; every other caller stays with et_qp.h,
 * so that the transport can change its state without touching them.
 *
 * et_qp.c holds what both modes do (life cycle, posting, completions,
 * ACK/NAK/CNP frames, the CNP/DCTCP side); et_qp_gbn.c the in-order mode
 * (Go-Back-N); et_qp_mp.c the multipath mode; et_qp_ud.c the datagram
 * mode (UD).  The mode is chosen once, at create, as an ops table.
 */
#ifndef ET_QP_PRIV_H
#define ET_QP_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/et_qp.h"

/* retry_cnt and rnr_retry: this value never runs out */
#define ET_QP_RETRY_FOREVER 7

/* One send WQE and the PSNs it was given. */
struct et_swqe {
	struct et_send_wr wr;
	uint32_t first_psn;
	uint32_t npkts;
	uint64_t stream_off;  /* payload bytes of all WQEs posted before it */
};

enum et_rx_msg { ET_RX_NONE, ET_RX_SEND, ET_RX_WRITE };

/* A READ or an atomic the in-order responder took (IBTA's responder
 * resources): kept after its answer has left, so that a duplicate request
 * is answered again: a READ read again from the PSN it names, an atomic
 * with the value kept, never executed twice.  max_dest_rd_atomic of them,
 * the oldest overwritten. */
struct et_rd_res {
	uint8_t kind;          /* 0 (none yet), ET_RD_READ, ET_RD_ATOMIC */
	uint16_t sport;        /* the answers' UDP source port: the request's echo */
	uint32_t first_psn;    /* of the request as first taken */
	uint32_t npkts;        /* PSNs it spans */
	uint32_t run_psn;      /* the answers being sent start here (FIRST) */
	uint32_t next_psn;     /* next answer; first_psn + npkts: all sent */
	uint32_t run_len;      /* READ: bytes from run_psn to the end */
	uint32_t msn;          /* the AETH MSN its answers carry */
	uint8_t *src;          /* READ: where run_psn's bytes are */
	uint64_t orig;         /* atomic: the value before it */
};

enum { ET_RD_READ = 1, ET_RD_ATOMIC = 2 };

static inline bool
et_rd_res_pending(const struct et_rd_res *r)
{
	return r->kind && r->next_psn != et_psn_add(r->first_psn, r->npkts);
}

/* What the two modes do differently.  Hooks marked optional may be NULL. */
struct et_qp_ops {
	/* optional: allocate the mode's state; 0 or -ENOMEM */
	int (*init)(struct et_qp *qp);
	/* optional: free it (also after a failed init) */
	void (*fini)(struct et_qp *qp);
	/* optional: the QP failed; drop what is queued to send */
	void (*fail)(struct et_qp *qp);
	/* optional: every frame for the QP, in place of the connected
	 * modes' dispatch (CNP, requester, responder) below */
	void (*rx)(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now);
	/* an ACK or NAK */
	void (*requester_rx)(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now);
	/* a data packet; echo: the UDP source port to answer it on */
	void (*responder_rx)(struct et_qp *qp, const struct et_roce_pkt *pkt, uint16_t echo);
	/* in RTS only */
	void (*timer)(struct et_qp *qp, uint64_t now);
	/* what the mode would send beyond the common ACK/NAK and CNPs */
	bool (*tx_ready)(const struct et_qp *qp, uint64_t now);
	uint16_t (*tx)(struct et_qp *qp, uint64_t now, struct rte_mbuf **pkts, uint16_t n);
	/* optional: the mode's own acknowledgements owed (part of tx too) */
	uint16_t (*tx_acks)(struct et_qp *qp, struct rte_mbuf **pkts, uint16_t n);
	/* optional: READ responses or atomic ACKs still to send, which the
	 * common ACK must not overtake (an ACK for a later PSN tells the
	 * requester they were lost) */
	bool (*answers_owed)(const struct et_qp *qp);
	/* in RTS only */
	uint64_t (*deadline)(const struct et_qp *qp);
	uint32_t opcodes;     /* the enum et_wr_opcode it can carry, a bit each */
	bool single_packet;   /* a message is one packet: a longer one is refused */
	bool msn_is_epsn;     /* the AETH MSN field carries the cumulative epsn */
};

extern const struct et_qp_ops et_qp_gbn_ops;
extern const struct et_qp_ops et_qp_mp_ops;
extern const struct et_qp_ops et_qp_ud_ops;

struct et_qp_mp; /* et_qp_mp.c */

struct et_qp {
	struct et_qp_attr a;
	const struct et_qp_ops *ops;
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
	struct et_sge *sgl;            /* max_send_sge for each SQ slot, > 1 only */
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
	uint64_t pace_ps;              /* DCTCP rate mode: no data before this
					* (picoseconds); 0: not held */
	uint64_t pool_retry_at;        /* 0, or when to try again a frame the
					* pool had no mbuf for */
	uint8_t retries_left;
	uint8_t rnr_retries_left;
	uint32_t rd_inflight;          /* READ / atomic requests in [sq_head,
					* sq_cur): sent, not yet answered */
	bool rd_retry_armed;           /* a lost answer was asked for again ... */
	uint32_t rd_retry_una;         /* ... from this PSN: not again for it */
	struct et_dctcp cc;

	/* responder */
	struct et_rq own_rq;
	struct et_rq *rq;              /* own_rq, or a shared one */
	struct et_recv_wr rx_wqe;      /* the receive the message in progress took */
	struct et_sge *rx_sgl;         /* its list, when its queue takes lists */
	bool rx_taken;
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
	/* answers (READ responses, atomic ACKs): their own DCTCP and pace */
	struct et_rd_res *rd_res;      /* in order: max_dest_rd_atomic, made
					* with the first request */
	uint32_t rd_res_next;          /* requests taken (free-running) */
	uint32_t rd_res_pending;       /* of them, answers not all sent */
	uint32_t rd_res_send;          /* Go-Back-N: none before it owes answers
					* (free-running, as rd_res_next) */
	struct et_dctcp acc;
	uint64_t ans_pace_ps;          /* no answer leaves before this (ps) */

	struct et_qp_stats st;
};

/* ---- et_qp_mp.c ---- */

/* Bytes of multipath state the QP holds now (0 in the in-order mode): it
 * grows with the PSNs in flight, placed ahead and ACKs owed. */
size_t et_qp_mp_state_bytes(const struct et_qp *qp);

/* ---- et_qp.c, for both modes ---- */

/* No data may leave before this (ns; 0: none held): an RNR NAK's wait or
 * the DCTCP rate's pace, rounded down so as never to send below the rate
 * (the link's serialization keeps any QP to line rate). */
static inline uint64_t
et_qp_data_hold(const struct et_qp *qp)
{
	uint64_t pace = qp->pace_ps / 1000;

	return qp->rnr_until > pace ? qp->rnr_until : pace;
}

/* A data frame of wr's payload bytes [off, off + len) (len at most the
 * MTU), gathered from its buffers; NULL (counted) if the pool is empty. */
struct rte_mbuf *et_qp_build_data(struct et_qp *qp, const struct et_roce_hdr *h,
				  const struct et_send_wr *wr, uint64_t off, uint32_t len);

/* len bytes of an answer to wr (a READ's, an atomic's original value)
 * written at offset off of its local buffers. */
void et_qp_wr_place(const struct et_send_wr *wr, uint64_t off, const void *src, uint32_t len);

/* len bytes of the message in progress written at offset off of the
 * buffers of the receive it took. */
void et_qp_recv_place(struct et_qp *qp, uint64_t off, const void *src, uint32_t len);

/* A data frame m left: in DCTCP's rate mode the next waits its time. */
void et_qp_paced(struct et_qp *qp, uint64_t now, const struct rte_mbuf *m);

/* No answer may leave before this (ns; 0: none held). */
static inline uint64_t
et_qp_answer_hold(const struct et_qp *qp)
{
	return qp->ans_pace_ps / 1000;
}

/* An answer to a READ or an atomic: opcode a READ RESPONSE's (len bytes
 * from src) or ATOMIC ACKNOWLEDGE (orig), on UDP source port sport, msn in
 * its AETH; built, counted, and paced by the answers' DCTCP (the next one
 * waits).  NULL when there is no mbuf (nothing changed but the IP ID). */
struct rte_mbuf *et_qp_build_answer(struct et_qp *qp, uint64_t now, uint8_t opcode,
				    uint16_t sport, uint32_t psn, uint32_t msn, uint64_t orig,
				    const void *src, uint32_t len);

/* A data packet or a READ response arrived: the CNP owed for a CE mark. */
void et_qp_ce_seen(struct et_qp *qp, const struct et_roce_hdr *h, uint64_t now);

/* The responder side of a READ or atomic request at the QP's memory: the
 * bytes [va, va + len) a READ may read, or the 8 an atomic works on; NULL
 * and *nak (ET_NAK_INVALID_REQ or ET_NAK_REMOTE_ACCESS) when refused: an
 * atomic not 8-byte aligned, a READ longer than max_msg_size, a key or
 * range outside a region granting that access. */
uint8_t *et_qp_rd_target(const struct et_qp *qp, const struct et_roce_hdr *h,
			 uint8_t *nak);

/* The responder's kept requests (made with the first): 0 or -ENOMEM; the
 * n-th taken (free-running); the one whose PSNs hold psn, or NULL. */
int et_qp_rd_res_alloc(struct et_qp *qp);
struct et_rd_res *et_qp_rd_res_at(struct et_qp *qp, uint32_t n);
struct et_rd_res *et_qp_rd_res_find(struct et_qp *qp, uint32_t psn);

/* Execute the atomic h asks for on the 8 bytes at p; the value before. */
uint64_t et_qp_atomic_exec(uint8_t *p, const struct et_roce_hdr *h);

/* The header of a READ request for PSN psn of wr (k packets into it), or of
 * its atomic request. */
void et_qp_rd_request_hdr(const struct et_qp *qp, const struct et_send_wr *wr,
			  uint32_t k, struct et_roce_hdr *h);

/* Payload bytes a request sends: READ and atomics send none. */
static inline uint32_t
et_wr_tx_len(const struct et_send_wr *wr)
{
	return et_wr_is_rd_atomic(wr->opcode) ? 0 : wr->length;
}

void et_qp_complete_send(struct et_qp *qp, const struct et_send_wr *wr, uint8_t status);
/* The receive the message in progress took, taken now if it has none:
 * the oldest of its queue; NULL when there is none. */
const struct et_recv_wr *et_qp_recv_take(struct et_qp *qp);

/* The receive taken completes with wc (its wr_id and QPN filled here),
 * taken now if none was. */
void et_qp_complete_recv_wc(struct et_qp *qp, struct et_wc *wc);
/* The same, of that opcode, status, length and immediate. */
void et_qp_complete_recv(struct et_qp *qp, uint8_t opcode, uint8_t status, uint32_t len,
			 bool with_imm, uint32_t imm);

/* The QP fails: the oldest send request gets status (if it is >= 0), the
 * rest of both queues are flushed, in order. */
void et_qp_fail(struct et_qp *qp, int status);

/* An error NAK (syndrome syn) received: the QP fails with its status. */
void et_qp_fail_nak(struct et_qp *qp, uint8_t syn);

/* An RNR NAK (syndrome syn) received: pause sending for its timer.  false
 * when the RNR retry budget is spent (the QP has failed). */
bool et_qp_rnr_pause(struct et_qp *qp, uint8_t syn, uint64_t now);

/* Queue an ACK/NAK in the one response slot. */
void et_qp_respond(struct et_qp *qp, uint8_t syndrome, uint32_t psn);
/* A request placed already, come again: acknowledged again up to epsn, as
 * the duplicate it is (nothing placed, no receive taken). */
void et_qp_ack_duplicate(struct et_qp *qp);

/* A request we cannot honour: NAK it and fail the QP (IBTA class C/D). */
void et_qp_responder_fail(struct et_qp *qp, enum et_nak_code code, uint8_t recv_status);

/* The headers every frame of this QP shares, sent on UDP source port sport. */
void et_qp_base_hdr(const struct et_qp *qp, struct et_roce_hdr *h, uint16_t sport);

/* The frame h describes, or NULL (counted) when the pool is empty. */
struct rte_mbuf *et_qp_build(struct et_qp *qp, const struct et_roce_hdr *h,
			     const void *payload, uint32_t len);

/* An ACKNOWLEDGE (ACK or NAK, by syndrome) on UDP source port sport; msn is
 * what goes in the AETH MSN field, resv8a in BTH byte 4 (multipath: the ECN
 * echo). */
struct rte_mbuf *et_qp_build_ack(struct et_qp *qp, uint16_t sport, uint32_t psn,
				 uint8_t syndrome, uint32_t msn, uint8_t resv8a);

/* Payload bytes of the packet that starts off bytes into wr (of what it
 * sends: 0 for READ and atomics). */
static inline uint32_t
et_qp_seg_len(const struct et_qp *qp, const struct et_send_wr *wr, uint64_t off)
{
	uint32_t len = et_wr_tx_len(wr);

	if (off >= len)
		return 0;
	return (uint32_t)(len - off < qp->a.mtu ? len - off : qp->a.mtu);
}

/* Payload bytes the answer for packet k of a READ of len bytes carries. */
static inline uint32_t
et_qp_read_seg(const struct et_qp *qp, uint32_t len, uint32_t k)
{
	uint64_t off = (uint64_t)k * qp->a.mtu;

	if (off >= len)
		return 0;
	return (uint32_t)(len - off < qp->a.mtu ? len - off : qp->a.mtu);
}

#endif /* ET_QP_PRIV_H */
