/* SPDX-License-Identifier: BSD-3-Clause
 * RC queue pairs, sans I/O.
 *
 * A QP is both a requester (its send queue: segmentation, PSNs, window,
 * ACK/NAK processing, Go-Back-N, retransmit timer) and a responder (its
 * receive side: expected PSN, placement into memory regions, ACK/NAK/CNP).
 * Nothing here touches a port or a clock: packets come in through
 * et_qp_rx() as parsed frames and leave through et_qp_tx() as mbufs, and
 * every entry point takes now_ns.  The endpoint runtime and the tests drive
 * it the same way.
 *
 * Multipath mode (et_qp_attr.multipath, docs/transport.md) trades Go-Back-N
 * for what packet spraying needs: every packet self-contained and on its own
 * path, a reorder window at the responder, selective ACKs and a timer per
 * packet at the requester.
 */
#ifndef ET_QP_H
#define ET_QP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "transport/et_dctcp.h"
#include "transport/et_mr.h"
#include "wire/et_wire.h"

struct rte_mbuf;
struct rte_mempool;

/* ---- completions ---- */

enum et_wc_status {
	ET_WC_SUCCESS,
	ET_WC_LOC_LEN_ERR,       /* receive buffer too small */
	ET_WC_LOC_PROT_ERR,      /* local buffer not in a region with that key */
	ET_WC_REM_ACCESS_ERR,    /* the responder refused the rkey/range */
	ET_WC_REM_INV_REQ_ERR,   /* the responder found the request invalid */
	ET_WC_REM_OP_ERR,
	ET_WC_RETRY_EXC_ERR,     /* retransmit timer fired retry_cnt + 1 times */
	ET_WC_RNR_RETRY_EXC_ERR,
	ET_WC_WR_FLUSH_ERR,      /* flushed: the QP went to error before it ran */
};

enum et_wc_opcode {
	ET_WC_SEND,
	ET_WC_RDMA_WRITE,
	ET_WC_RECV,                /* a SEND arrived into a posted receive */
	ET_WC_RECV_RDMA_WITH_IMM,  /* a WRITE with immediate consumed a receive */
};

struct et_wc {
	uint64_t wr_id;
	uint32_t qpn;
	uint8_t opcode;   /* enum et_wc_opcode */
	uint8_t status;   /* enum et_wc_status */
	bool with_imm;
	uint32_t byte_len;
	uint32_t imm;
};

/* A completion queue: a ring shared by any number of QPs of one host. */
struct et_cq {
	struct et_wc *ring;
	uint32_t size;
	uint32_t head, tail; /* free-running */
	uint64_t overflows;  /* completions lost because the ring was full */
};

/* size: a power of 2.  0, -EINVAL or -ENOMEM. */
int et_cq_init(struct et_cq *cq, uint32_t size);
void et_cq_free(struct et_cq *cq);
uint32_t et_cq_poll(struct et_cq *cq, struct et_wc *wc, uint32_t n);

static inline uint32_t
et_cq_count(const struct et_cq *cq)
{
	return cq->tail - cq->head;
}

const char *et_wc_status_str(uint8_t status);

/* ---- work requests ---- */

enum et_wr_opcode {
	ET_WR_RDMA_WRITE,
	ET_WR_RDMA_WRITE_IMM,
	ET_WR_SEND,
	ET_WR_SEND_IMM,
};

struct et_send_wr {
	uint64_t wr_id;
	uint8_t opcode;            /* enum et_wr_opcode */
	const void *local_addr;    /* one local buffer */
	uint32_t length;
	uint32_t lkey;
	uint64_t remote_addr;      /* WRITE: the responder's address */
	uint32_t rkey;
	uint32_t imm;              /* *_IMM */
};

struct et_recv_wr {
	uint64_t wr_id;
	void *addr;
	uint32_t length;
	uint32_t lkey;
};

/* ---- the load balancer's hook ---- */

/* Why a path is asked for: the first packet of the QP, a NAK, a timeout;
 * in multipath mode, every data packet (ET_PATH_PACKET, first transmission
 * or not) and, told only, each packet timer that fires (ET_PATH_TIMEOUT with
 * qp->path_id = the path that packet last took; the answer is ignored).  In
 * multipath mode ET_PATH_FIRST and ET_PATH_NAK are never asked. */
enum et_path_event {
	ET_PATH_FIRST,
	ET_PATH_NAK,
	ET_PATH_TIMEOUT,
	ET_PATH_PACKET,
};

struct et_qp;
typedef uint16_t (*et_path_fn)(void *ctx, struct et_qp *qp,
			       enum et_path_event ev, uint64_t now_ns);

/* Multipath mode: told of every ACK received.  echoed_path is the path ID
 * the acknowledged data packet left with (the ACK's source port swapped
 * back: the responder echoes the swap and the switches' swaps there and
 * back cancel out); ecn: that data packet arrived CE-marked. */
typedef void (*et_ack_fn)(void *ctx, struct et_qp *qp, uint16_t echoed_path,
			  bool ecn, uint64_t now_ns);

/* ---- queue pairs ---- */

enum et_qp_state {
	ET_QPS_RESET, /* created; not yet connected */
	ET_QPS_RTS,   /* ready: sends and receives */
	ET_QPS_ERR,   /* failed: everything flushed, packets ignored */
};

struct et_qp_attr {
	uint32_t qpn;
	uint32_t dest_qpn;
	struct rte_ether_addr mac, dest_mac;
	uint32_t ip, dest_ip;          /* host order */
	uint8_t dscp;
	uint8_t ttl;
	uint32_t sq_psn;               /* first PSN we send */
	uint32_t rq_psn;               /* first PSN we expect */
	uint32_t mtu;                  /* path MTU: 256, 512, 1024, 2048, 4096 */
	uint8_t retry_cnt;             /* 0..7; 7 retries forever (as rxe) */
	uint8_t rnr_retry;             /* 0..7; 7 retries forever (IBTA) */
	uint8_t min_rnr_timer;         /* IBTA 5-bit code we send in RNR NAKs */
	uint64_t rto_ns;               /* retransmit timeout, default 1 ms */
	uint32_t ack_every;            /* ACK every N packets (and on AckReq) */
	uint64_t cnp_interval_ns;      /* min gap between CNPs; 0 = one per CE */
	uint16_t path_id;              /* UDP source port when no hook is set */
	uint32_t max_send_wr;          /* power of 2 */
	uint32_t max_recv_wr;          /* power of 2 */
	bool multipath;                /* per-packet paths, selective repeat;
					* both ends must agree (docs/transport.md) */
	struct et_dctcp_params dctcp;
};

void et_qp_attr_default(struct et_qp_attr *a);

struct et_qp_stats {
	uint64_t tx_pkts, tx_bytes;       /* data packets and payload bytes */
	uint64_t retransmits;             /* data packets sent again */
	uint64_t timeouts;
	uint64_t acks_tx, acks_rx;
	uint64_t naks_tx, naks_rx;        /* PSN sequence error NAKs */
	uint64_t rnr_naks_tx, rnr_naks_rx;
	uint64_t err_naks_tx, err_naks_rx; /* access / invalid / operational */
	uint64_t cnps_tx, cnps_rx;
	uint64_t rx_pkts, rx_bytes;       /* data packets placed, bytes placed */
	uint64_t rx_dup;                  /* behind the expected PSN */
	uint64_t rx_out_of_order;         /* ahead of the expected PSN */
	uint64_t rx_ce;                   /* CE-marked data packets seen */
	uint64_t rx_bad_ack;              /* ACKs for PSNs never sent */
	uint64_t rx_dropped;              /* ignored: wrong state, bad opcode */
	uint64_t path_changes;
	uint64_t alloc_fail;
	/* multipath mode */
	uint64_t rx_beyond_window;        /* dropped: PSN >= expected + window */
	uint64_t acks_unsent;             /* ACK queue full: a selective ACK lost */
};

/* One send WQE and the PSNs it was given. */
struct et_swqe {
	struct et_send_wr wr;
	uint32_t first_psn;
	uint32_t npkts;
	uint64_t stream_off;  /* payload bytes of all WQEs posted before it */
};

enum et_rx_msg { ET_RX_NONE, ET_RX_SEND, ET_RX_WRITE };

/* Multipath mode: the reorder window at the responder and the packets in
 * flight at the requester, in PSNs (both ends use the same constant). */
#define ET_QP_MP_WINDOW 1024u
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

/* Create in RESET.  mrs, the CQs and the pool belong to the host and
 * outlive the QP.  NULL on bad attributes or no memory. */
struct et_qp *et_qp_create(const struct et_qp_attr *a, struct et_mr_table *mrs,
			   struct et_cq *send_cq, struct et_cq *recv_cq,
			   struct rte_mempool *pool);
void et_qp_destroy(struct et_qp *qp);

/* Check the attributes; 0, or -EINVAL with a reason. */
int et_qp_attr_check(const struct et_qp_attr *a, const char **why);

/* Shut down: to the error state, every outstanding request and receive
 * completed with ET_WC_WR_FLUSH_ERR, in order. */
void et_qp_flush(struct et_qp *qp);

/* RESET -> RTS.  0 or -EINVAL. */
int et_qp_ready(struct et_qp *qp);

/* Let a load balancer pick the path ID (first send, NAK, timeout; in
 * multipath mode every data packet). */
void et_qp_set_path_fn(struct et_qp *qp, et_path_fn fn, void *ctx);

/* Multipath mode: hear every ACK (path and ECN echo); ignored otherwise. */
void et_qp_set_ack_fn(struct et_qp *qp, et_ack_fn fn, void *ctx);

/* 0, -ENOSPC (queue full, or more than 2^22 PSNs outstanding) or -EINVAL
 * (RESET state, unknown opcode, a SEND in multipath mode, a local buffer
 * outside the region its key names, or without local write access for a
 * receive).  In ERR the request completes at once with ET_WC_WR_FLUSH_ERR. */
int et_qp_post_send(struct et_qp *qp, const struct et_send_wr *wr);
int et_qp_post_recv(struct et_qp *qp, const struct et_recv_wr *wr);

/* Up to n packets to put on the wire now: pending ACK/NAK/CNP first, then
 * data within the window.  A NIC serving QPs one packet per turn passes 1. */
uint16_t et_qp_tx(struct et_qp *qp, uint64_t now_ns, struct rte_mbuf **pkts,
		  uint16_t n);

/* Would et_qp_tx() return a packet now? */
bool et_qp_tx_ready(const struct et_qp *qp, uint64_t now_ns);

/* A packet for this QP (parsed and ICRC-checked by the caller). */
void et_qp_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now_ns);

/* Fire the retransmit timer if it is due (multipath: every packet timer
 * that is due). */
void et_qp_timer(struct et_qp *qp, uint64_t now_ns);

/* When the QP next needs et_qp_timer() or can send again after an RNR
 * pause; UINT64_MAX if never. */
uint64_t et_qp_deadline(const struct et_qp *qp);

/* Requests posted and not yet completed. */
static inline uint32_t
et_qp_sq_outstanding(const struct et_qp *qp)
{
	return qp->sq_tail - qp->sq_head;
}

/* IBTA RNR timer code (0..31) to nanoseconds. */
uint64_t et_rnr_timer_ns(uint8_t code);

#endif /* ET_QP_H */
