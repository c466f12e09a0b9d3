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
 *
 * Datagram mode (et_qp_attr.datagram) is IBTA's UD: SENDs of one packet
 * each, to the destination each request names (et_send_wr.ud), complete
 * when they leave; nothing is acknowledged, nothing sent again; a receive
 * takes the 40-byte GRH slot and the payload, from any QP that knows the
 * Q_Key.
 *
 * This is the API.  A QP's state is private (et_qp_priv.h): callers hold a
 * pointer and read what they need through the functions at the end.
 */
#ifndef ET_QP_H
#define ET_QP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "base/et_counters.h"
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
	ET_WC_RDMA_READ,
	ET_WC_COMP_SWAP,
	ET_WC_FETCH_ADD,
};

struct et_wc {
	uint64_t wr_id;
	uint32_t qpn;
	uint8_t opcode;   /* enum et_wc_opcode */
	uint8_t status;   /* enum et_wc_status */
	bool with_imm;
	uint32_t byte_len;
	uint32_t imm;
	uint32_t src_qp;  /* datagram receives: the sender's QPN (its DETH) */
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
	/* the requests the responder answers with data (READ and atomics:
	 * "RDMA READ / atomic" below; max_rd_atomic of them at once) */
	ET_WR_RDMA_READ,           /* the responder's bytes into local_addr */
	ET_WR_ATOMIC_CMP_SWP,      /* 8 bytes at remote_addr: if == compare_add,
				    * := swap; the old value into local_addr */
	ET_WR_ATOMIC_FETCH_ADD,    /* 8 bytes at remote_addr += compare_add;
				    * the old value into local_addr */
};

/* A READ or an atomic: answered with data, not merely acknowledged. */
static inline bool
et_wr_is_rd_atomic(uint8_t opcode)
{
	return opcode >= ET_WR_RDMA_READ;
}

static inline bool
et_wr_is_atomic(uint8_t opcode)
{
	return opcode >= ET_WR_ATOMIC_CMP_SWP;
}

/* Atomics work on 8 bytes at an 8-byte aligned remote address, in the
 * responder's byte order (as verbs'); the local buffer gets the old value. */
#define ET_ATOMIC_LEN 8u

/* A datagram's destination: an address handle's worth, and the QP there. */
struct et_ud_dest {
	uint32_t ip;               /* host order */
	struct rte_ether_addr mac;
	uint16_t sport;            /* its path ID (UDP source port) */
	uint32_t qpn;
	uint32_t qkey;
};

/* One local buffer of a gather list (verbs' ibv_sge). */
struct et_sge {
	void *addr;
	uint32_t length;
	uint32_t lkey;
};

/* The most buffers one send may name (et_qp_attr.max_send_sge). */
#define ET_MAX_SGE 8u

/* The largest path MTU (IBTA's 4096). */
#define ET_MTU_MAX 4096u

struct et_send_wr {
	uint64_t wr_id;
	uint8_t opcode;            /* enum et_wr_opcode */
	void *local_addr;          /* one local buffer (READ, atomics: written) */
	uint32_t length;           /* atomics: ET_ATOMIC_LEN */
	uint32_t lkey;
	/* or, where num_sge > 0, the buffers at sgl in their order (the
	 * payload gathered from them, a READ's answer scattered over
	 * them), local_addr, length and lkey unused; copied at post, at
	 * most the QP's max_send_sge; never for atomics but one */
	const struct et_sge *sgl;
	uint32_t num_sge;
	uint32_t imm;              /* *_IMM */
	union {
		struct {
			uint64_t remote_addr; /* WRITE, READ, atomics: the responder's address */
			uint32_t rkey;
			uint64_t compare_add; /* CMP_SWP: compare; FETCH_ADD: add */
			uint64_t swap;        /* CMP_SWP: swap */
		};
		struct et_ud_dest ud;  /* datagram mode: where this SEND goes */
	};
};

struct et_recv_wr {
	uint64_t wr_id;
	void *addr;
	uint32_t length;
	uint32_t lkey;
	/* or, where num_sge > 0, the buffers at sgl that a message fills in
	 * their order (addr, length and lkey unused); copied at post, at
	 * most the queue's max_sge */
	const struct et_sge *sgl;
	uint32_t num_sge;
};

/* A receive queue: a QP's own, or a shared one (verbs' SRQ) that the QPs
 * of one host set on it take from, each message taking the oldest. */
struct et_rq {
	struct et_recv_wr *ring;
	struct et_sge *sgl;    /* max_sge for each slot, > 1 only */
	uint32_t max_sge;      /* buffers a receive may name; 0 or 1: one */
	uint32_t mask;
	uint32_t head, tail;   /* free-running */
};

/* size: a power of 2 up to 2^20; max_sge: up to ET_MAX_SGE.  0, -EINVAL
 * or -ENOMEM. */
int et_rq_init(struct et_rq *rq, uint32_t size, uint32_t max_sge);
void et_rq_free(struct et_rq *rq);

static inline uint32_t
et_rq_count(const struct et_rq *rq)
{
	return rq->tail - rq->head;
}

/* A receive onto a shared queue, its buffer checked against mrs (local
 * write).  0, -EINVAL or -ENOSPC. */
int et_srq_post(struct et_rq *srq, struct et_mr_table *mrs, const struct et_recv_wr *wr);

/* ---- the load balancer's hook ---- */

/* Why a path is asked for: the first packet of the QP, a NAK, a timeout;
 * in multipath mode, every data packet (ET_PATH_PACKET, first transmission
 * or not) and, told only, each packet timer that fires (ET_PATH_TIMEOUT with
 * et_qp_path_id(qp) = the path that packet last took; the answer is
 * ignored).  In multipath mode ET_PATH_FIRST and ET_PATH_NAK are never
 * asked. */
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
	uint32_t dest_qpn;             /* or later, by et_qp_connect() */
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
	uint8_t max_send_sge;          /* buffers a send may gather, up to
					* ET_MAX_SGE; 0 or 1: one */
	uint8_t max_recv_sge;          /* and a receive of its own queue fill */
	bool multipath;                /* per-packet paths, selective repeat;
					* both ends must agree (docs/transport.md) */
	bool datagram;                 /* UD: one packet a message, unacknowledged */
	uint32_t qkey;                 /* datagram mode: what a SEND must carry */
	uint8_t max_rd_atomic;         /* RDMA READ / atomic requests of ours
					* outstanding at once (initiator depth);
					* 0: none may be posted */
	uint8_t max_dest_rd_atomic;    /* the peer's we keep answers for
					* (responder resources); 0: refused */
	uint32_t max_msg_size;         /* the longest READ we answer; longer is
					* an invalid request (IBTA: 2^31) */
	struct et_dctcp_params dctcp;
};

/* Multipath mode: the responder's reorder window and the requester's most
 * PSNs in flight.  Not negotiated: both ends use this constant. */
#define ET_QP_MP_WINDOW 1024u

void et_qp_attr_default(struct et_qp_attr *a);

#define ET_QP_COUNTERS(X, A) \
	X(tx_pkts, INFO, "data packets sent") \
	X(tx_bytes, INFO, "payload bytes sent") \
	X(retransmits, INFO, "data packets sent again") \
	X(timeouts, INFO, "retransmission timer expiries") \
	X(acks_tx, INFO, "ACKs sent") \
	X(acks_rx, INFO, "ACKs received") \
	X(naks_tx, INFO, "PSN sequence error NAKs sent") \
	X(naks_rx, INFO, "PSN sequence error NAKs received") \
	X(rnr_naks_tx, INFO, "RNR NAKs sent") \
	X(rnr_naks_rx, INFO, "RNR NAKs received") \
	X(err_naks_tx, INFO, "access / invalid / operational error NAKs sent") \
	X(err_naks_rx, INFO, "access / invalid / operational error NAKs received") \
	X(cnps_tx, INFO, "CNPs sent") \
	X(cnps_rx, INFO, "CNPs received") \
	X(rx_pkts, INFO, "data packets placed") \
	X(rx_bytes, INFO, "bytes placed") \
	X(rx_dup, INFO, "data packets behind the expected PSN") \
	X(rx_out_of_order, INFO, "data packets ahead of the expected PSN") \
	X(rx_ce, INFO, "CE-marked data packets seen") \
	X(rx_bad_ack, INFO, "ACKs for PSNs never sent") \
	X(rx_dropped, INFO, "packets ignored: wrong state, bad opcode") \
	X(path_changes, INFO, "times the path hook moved the QP") \
	X(alloc_fail, INFO, "frames not built: the pool was empty") \
	X(rx_beyond_window, INFO, "multipath: dropped, PSN >= expected + window") \
	X(acks_unsent, INFO, "multipath: ACK queue full, a selective ACK lost") \
	X(reads_tx, INFO, "RDMA READ requests sent (again after a loss too)") \
	X(atomics_tx, INFO, "atomic requests sent (again after a loss too)") \
	X(read_resp_rx, INFO, "READ response packets placed") \
	X(atomic_acks_rx, INFO, "ATOMIC ACKNOWLEDGEs taken") \
	X(resp_dup_rx, INFO, "READ responses or atomic ACKs for PSNs already answered") \
	X(resp_gap_rx, INFO, "READ responses ahead of the next expected: one retry each gap") \
	X(rx_bad_resp, INFO, "responses that fit no request (opcode, length): dropped") \
	X(reads_rx, INFO, "RDMA READ requests taken (duplicates not counted)") \
	X(read_req_bytes, INFO, "bytes those READ requests asked for") \
	X(reads_again, INFO, "duplicate READ requests read again") \
	X(rd_res_busy, INFO, "new READ/atomic requests ignored: the answer slot they take " \
	  "still owes a duplicate its answer (asked for again)") \
	X(atomics_rx, INFO, "atomic requests executed") \
	X(atomics_replayed, INFO, "duplicate atomics answered from the replay cache") \
	X(rd_dup_unknown, INFO, "duplicate READ or atomic older than every kept answer: dropped") \
	X(read_resp_tx, INFO, "READ response packets sent") \
	X(read_resp_bytes, INFO, "READ response payload bytes sent") \
	X(atomic_acks_tx, INFO, "ATOMIC ACKNOWLEDGEs sent") \
	X(rx_qkey_bad, INFO, "datagrams whose Q_Key is not the QP's: dropped") \
	X(rx_no_recv, INFO, "datagrams with no receive posted: dropped (UD has no RNR)")

struct et_qp_stats {
	ET_QP_COUNTERS(ET_CTR_FIELD, ET_CTR_ARRAY_FIELD)
};
extern const struct et_ctr_table et_qp_ctrs;

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

/* The peer's QPN, when it was not known at create (it is often given out
 * by the peer's NIC at its own create).  In RESET only.  0 or -EINVAL. */
/* Frames go to mac from now on (the next hop was learnt after create,
 * e.g. by ARP). */
void et_qp_set_dest_mac(struct et_qp *qp, const struct rte_ether_addr *mac);

int et_qp_connect(struct et_qp *qp, uint32_t dest_qpn);

/* What a connection manager learns of the peer after create (its REP, or
 * the REQ the QP answers): the first PSN the QP sends (the CM's Starting
 * PSN is what the peer's receive queue expects) and the path MTU.  In
 * RESET only.  0 or -EINVAL (a PSN or MTU of none). */
int et_qp_set_peer_path(struct et_qp *qp, uint32_t sq_psn, uint32_t mtu);

/* RESET -> RTS.  0 or -EINVAL. */
int et_qp_ready(struct et_qp *qp);
/* A QP still in RESET takes new attributes whole (addresses, PSNs, MTU,
 * retries, timeouts, read depths: what verbs' RTR says); a ready one that
 * has never sent takes those of its sending side only (its first PSN,
 * retries, timeout, initiator depth, path: verbs' RTS after RTR).  Its
 * number, queue sizes and mode stay.  0 or -EINVAL. */
int et_qp_modify(struct et_qp *qp, const struct et_qp_attr *a);
/* Its attributes as they are. */
const struct et_qp_attr *et_qp_attr_of(const struct et_qp *qp);

/* Let a load balancer pick the path ID (first send, NAK, timeout; in
 * multipath mode every data packet). */
void et_qp_set_path_fn(struct et_qp *qp, et_path_fn fn, void *ctx);

/* Multipath mode: hear every ACK (path and ECN echo); ignored otherwise. */
void et_qp_set_ack_fn(struct et_qp *qp, et_ack_fn fn, void *ctx);

/* 0, -ENOSPC (queue full, or more than 2^22 PSNs outstanding) or -EINVAL
 * (RESET state, unknown opcode, a SEND in multipath mode, a local buffer
 * outside the region its key names, or without local write access for a
 * receive, a READ or an atomic; an atomic whose length is not
 * ET_ATOMIC_LEN; a READ or atomic with max_rd_atomic 0).  In ERR the
 * request completes at once with ET_WC_WR_FLUSH_ERR. */
int et_qp_post_send(struct et_qp *qp, const struct et_send_wr *wr);
/* -EINVAL too on a QP that takes its receives from a shared queue. */
int et_qp_post_recv(struct et_qp *qp, const struct et_recv_wr *wr);

/* The QP takes its receives from srq from now on (in RESET, in-order and
 * datagram modes: a multipath QP keeps its own, for it places out of
 * order).  A message takes its receive when it starts; a QP that fails
 * flushes the one it took, and leaves the rest to the others.  0 or
 * -EINVAL. */
int et_qp_set_srq(struct et_qp *qp, struct et_rq *srq);

/* A frame the QP owes (ACK, NAK, CNP or data) that the pool could not give
 * an mbuf for is tried again this long after: et_qp_deadline() says when. */
#define ET_QP_POOL_RETRY_NS 1000u

/* Up to n packets to put on the wire now: pending ACK/NAK/CNP first, then
 * data within the window.  A NIC serving QPs one packet per turn passes 1.
 * Fewer than owed when the pool is empty (stats alloc_fail): the QP then
 * asks, through et_qp_deadline(), to be served again ET_QP_POOL_RETRY_NS
 * later, so a caller that stops serving a QP whose et_qp_tx() returned 0
 * must keep honouring its deadline, or an owed ACK is never sent. */
uint16_t et_qp_tx(struct et_qp *qp, uint64_t now_ns, struct rte_mbuf **pkts,
		  uint16_t n);

/* Only the acknowledgements owed (ACK, NAK, CNP), for a NIC that sends
 * them ahead of its data and unpaused; the rest as et_qp_tx(). */
uint16_t et_qp_tx_acks(struct et_qp *qp, uint64_t now_ns, struct rte_mbuf **pkts,
		       uint16_t n);

/* Would et_qp_tx() return a packet now?  false while it waits for the
 * pool's retry (see et_qp_tx). */
bool et_qp_tx_ready(const struct et_qp *qp, uint64_t now_ns);

/* A packet for this QP (parsed and ICRC-checked by the caller). */
void et_qp_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now_ns);

/* Fire the retransmit timer if it is due (multipath: every packet timer
 * that is due). */
void et_qp_timer(struct et_qp *qp, uint64_t now_ns);

/* When the QP next needs et_qp_timer() or can send again after an RNR
 * pause or an empty pool; UINT64_MAX if never.  Once et_qp_timer(now) has
 * run, it is later than now: a timer never asks to fire twice at the same
 * now. */
uint64_t et_qp_deadline(const struct et_qp *qp);

/* ---- what the QP shows (its state is private: et_qp_priv.h) ---- */

uint32_t et_qp_qpn(const struct et_qp *qp);

/* The UDP source port of its data now: in multipath mode the last packet's,
 * and inside an ET_PATH_TIMEOUT call the timed-out packet's. */
uint16_t et_qp_path_id(const struct et_qp *qp);

const struct et_qp_stats *et_qp_stats(const struct et_qp *qp);
const struct et_dctcp *et_qp_dctcp(const struct et_qp *qp);
/* The DCTCP of its answers (READ responses, atomic ACKs). */
const struct et_dctcp *et_qp_answer_dctcp(const struct et_qp *qp);

/* Requests posted and not yet completed. */
uint32_t et_qp_sq_outstanding(const struct et_qp *qp);

/* IBTA RNR timer code (0..31) to nanoseconds. */
uint64_t et_rnr_timer_ns(uint8_t code);

#endif /* ET_QP_H */
