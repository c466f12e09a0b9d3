/* SPDX-License-Identifier: BSD-3-Clause
 * RDMA CM for a program: connections set up in band, on the wire, as
 * librdmacm's are (no TCP): listen on a port, connect to (IP, port) with
 * private data, accept or reject a request, disconnect; events for each.
 * Its peers may be other ethereal hosts or any rdma_cm application on a
 * Linux RoCE host (rping, ucmatose, ib_write_bw -R ...).
 *
 * Underneath: the agent on the NIC's QP 1 (the GSI), which takes the
 * connection manager's MADs (UD SEND ONLY, Q_Key 0x80010000) from the NIC
 * and hands them to cm/et_cm, and puts cm's MADs on the NIC's control path
 * to QP 1 of the peer, resolving its MAC by ARP (the NIC's et_arp) or from
 * the MADs it sent us; and the binding of each connection to a QP: the
 * peer's QPN, first PSN and the path MTU go into it (et_qp_connect,
 * et_qp_set_peer_path), and it is made ready (et_qp_ready) when the
 * connection is (active side: on the REP; passive side: at accept).
 *
 * For a single-threaded poll-mode program, many connections at once:
 * every call returns at once (no call blocks or sleeps), there is no
 * global state (one et_rdmacm per NIC, as many as wanted), and time is the
 * caller's now_ns.  A MAD, a poll or a call costs the same whether ten
 * connections are held or tens of thousands (ethereal-node --oob cm
 * --mode ucmatose opens 10,000 between two processes).  The loop:
 *
 *	et_nic_poll(nic, now);              // MADs in (the NIC's GSI hook)
 *	et_rdmacm_poll(cm, now);            // timers, MADs waiting for ARP
 *	while (et_rdmacm_get_event(cm, &ev))
 *		...                         // act on ev; call accept etc. here
 *	next = min(et_nic_next_event(nic, now), et_rdmacm_next_event(cm));
 *
 * PSNs as Linux's CM reads IBTA's Starting PSN: each side says in its REQ
 * or REP the first PSN its QP expects to receive (p.psn = the QP's
 * attr.rq_psn), and its QP sends from the peer's (et_qp_set_peer_path).
 *
 * Passive side: et_rdmacm_listen(cm, port, ctx); a CONNECT_REQUEST event
 * brings the peer's QPN, Starting PSN, path MTU and private data and a new
 * id; create a QP (RESET; attr.dest_ip = ev.peer_ip, attr.mtu = ev.mtu,
 * attr.rq_psn = p.psn), post its receives, and et_rdmacm_accept(cm, id,
 * qp, ...), or et_rdmacm_reject().  ESTABLISHED follows when the peer's
 * RTU (or its first packet) comes.
 * Active side: create a QP (RESET; attr.dest_ip, attr.rq_psn = p.psn),
 * post its receives, et_rdmacm_connect() with the MTU to ask (p.mtu);
 * ESTABLISHED (the QP is then ready), REJECTED (ev.reason) or UNREACHABLE
 * (no answer after the CM's retries).
 * Both: et_rdmacm_disconnect() (DREQ), DISCONNECTED when either side
 * closed (the QP is flushed, as rdma_cm moves it to the error state);
 * et_rdmacm_release() when done with an id (after any event, or to abort:
 * what is open is closed as the spec says), then destroy the QP.
 *
 * UD (RDMA CM's UDP port space, by SIDR): a listener on ET_RDMA_PS_UDP
 * gets CONNECT_REQUEST events with ev.sidr set; et_rdmacm_accept() answers
 * with the UD QP's number and p.qkey (the QP is not touched: a UD QP has
 * no peer), et_rdmacm_reject() says no.  The active side's
 * et_rdmacm_sidr() ends in one SIDR_REPLY event (ev.reason the SIDR
 * status, ev.peer_qpn and ev.qkey the peer's UD QP) or UNREACHABLE.
 */
#ifndef ET_RDMACM_H
#define ET_RDMACM_H

#include <stdbool.h>
#include <stdint.h>

#include "base/et_counters.h"
#include "cm/et_cm.h"
#include "host/et_nic.h"
#include "transport/et_qp.h"

struct et_rdmacm;
struct et_rdmacm_id;

struct et_rdmacm_conf {
	/* the connection manager's: ip and ca_guid may stay 0 (the NIC's IP,
	 * the EUI-64 of its MAC); seed it per process (a peer in time wait
	 * refuses a connection whose IDs repeat an old one's) */
	struct et_cm_conf cm;
	uint16_t path_id;           /* UDP source port of our MADs */
	uint8_t dscp;
	/* a next hop for every peer (a fabric's ToR); all zero: ARP, or the
	 * MAC the peer's MADs came from */
	struct rte_ether_addr next_hop;
};

void et_rdmacm_conf_default(struct et_rdmacm_conf *c);

/* Events: the CM's (cm/et_cm.h), for ids. */
struct et_rdmacm_event {
	enum et_cm_event_type type;   /* ET_CM_EV_CONNECT_REQUEST .. DISCONNECTED */
	struct et_rdmacm_id *id;
	void *ctx;                    /* the id's; a request: its listener's */
	uint16_t port;                /* the port connected to */
	uint32_t peer_ip;
	uint16_t peer_port;           /* a request: the active side's */
	uint32_t peer_qpn;            /* a request; ESTABLISHED (active side) */
	uint32_t peer_psn;            /* the same: the first PSN our QP sends */
	uint32_t mtu;                 /* a request: the path MTU asked, bytes */
	uint8_t responder_resources, initiator_depth; /* ours, from the peer's view */
	uint8_t retry_count, rnr_retry_count;
	uint16_t reason;              /* REJECTED: et_cm_rej_reason_str(reason);
				       * SIDR_REPLY: enum et_cm_sidr_status */
	bool sidr;                    /* a UD id's (request or reply) */
	uint32_t qkey;                /* SIDR_REPLY: the peer's Q_Key */
	uint16_t pdata_len;           /* private data (a request: after rdma_cm's header) */
	uint8_t pdata[ET_CM_PDATA_MAX];
};

/* What a connection's QP takes from the peer (et_rdmacm_conn_param.bind). */
struct et_rdmacm_bind {
	uint32_t peer_ip, peer_qpn;
	uint32_t peer_psn;            /* the first PSN our QP sends */
	uint32_t mtu;                 /* the path MTU, bytes */
	const struct rte_ether_addr *mac;
};

/* Our side of a connection. */
struct et_rdmacm_conn_param {
	uint32_t psn;        /* the first PSN the QP expects (its attr.rq_psn) */
	uint32_t mtu;        /* active side: the path MTU to ask, bytes */
	uint8_t responder_resources, initiator_depth;
	uint8_t retry_count, rnr_retry_count;  /* active side: 0 .. 7 */
	uint32_t qkey;       /* a SIDR request accepted: the UD QP's Q_Key */
	const void *pdata;   /* connect: up to ET_CMA_REQ_PDATA (56) bytes;
			      * accept: ET_CM_REP_PDATA (196) */
	uint16_t pdata_len;
	/* optional: whoever owns the QP gives it the peer (its QPN, the PSN
	 * our sends start from, the path MTU; its MAC, NULL when ARP must
	 * find it) and makes it ready, in place of et_qp_set_peer_path,
	 * _connect and _ready: libibverbs, whose QP keeps verbs' states and
	 * the policy's hooks.  0, or the connection is refused. */
	int (*bind)(void *bind_ctx, const struct et_rdmacm_bind *b);
	void *bind_ctx;
};

#define ET_RDMACM_COUNTERS(X, A) \
	X(rx_mads, INFO, "MADs from QP 1 handed to the CM") \
	X(rx_bad_opcode, INFO, "frames for QP 1 that are not UD SEND ONLY: dropped") \
	X(rx_bad_qkey, INFO, "frames for QP 1 with another Q_Key than the GSI's: dropped") \
	X(rx_bad_mad, INFO, "MADs the CM refused (cm's rx_bad_mad says why)") \
	X(tx_mads, INFO, "MADs handed to the NIC") \
	X(tx_parked, INFO, "MADs held until ARP found the peer's MAC") \
	X(tx_unresolved, INFO, "MADs given up: no MAC for the peer in 1 s (the CM retries)") \
	X(tx_nic_drop, INFO, "MADs the NIC had no room for (the CM retries)") \
	X(bind_fail, INFO, "connections whose QP could not take the peer's parameters")

struct et_rdmacm_stats {
	ET_RDMACM_COUNTERS(ET_CTR_FIELD, ET_CTR_ARRAY_FIELD)
};
extern const struct et_ctr_table et_rdmacm_ctrs;

/* The agent on nic's QP 1 (it takes the NIC's GSI hook; nic->arp, when
 * set, resolves peers).  NULL on a bad conf or no memory. */
struct et_rdmacm *et_rdmacm_create(struct et_nic *nic, const struct et_rdmacm_conf *c);
/* Every id still held is released; the NIC's GSI hook is cleared. */
void et_rdmacm_destroy(struct et_rdmacm *cm, uint64_t now);

/* Requests to port of port space ps (ET_RDMA_PS_TCP: RC connections;
 * ET_RDMA_PS_UDP: UD, by SIDR) become CONNECT_REQUEST events with ctx.
 * 0, -EINVAL (another space), -EADDRINUSE or -ENOMEM. */
int et_rdmacm_listen(struct et_rdmacm *cm, uint16_t ps, uint16_t port, void *ctx);
int et_rdmacm_unlisten(struct et_rdmacm *cm, uint16_t ps, uint16_t port);

/* A REQ to (dst_ip, dst_port) for qp (RESET, attr.dest_ip = dst_ip).
 * NULL with *err: -EINVAL (a parameter), -ENOSPC (no slot), -ENOMEM. */
struct et_rdmacm_id *et_rdmacm_connect(struct et_rdmacm *cm, uint32_t dst_ip, uint16_t dst_port,
				       struct et_qp *qp, const struct et_rdmacm_conn_param *p,
				       void *ctx, uint64_t now, int *err);

/* A SIDR_REQ to (dst_ip, dst_port) of the UDP port space, from our
 * src_port (rdma_cm's header), with up to 180 bytes of private data.
 * NULL with *err as et_rdmacm_connect. */
struct et_rdmacm_id *et_rdmacm_sidr(struct et_rdmacm *cm, uint32_t dst_ip, uint16_t dst_port,
				    uint16_t src_port, const void *pdata, uint16_t pdata_len,
				    void *ctx, uint64_t now, int *err);

/* A request answered with qp (RESET, attr.dest_ip = the event's peer_ip):
 * the QP takes the peer's QPN, PSN and MTU and is ready; a REP goes out.
 * 0 or -EINVAL (not a pending request, a parameter, a QP not in RESET). */
int et_rdmacm_accept(struct et_rdmacm *cm, struct et_rdmacm_id *id, struct et_qp *qp,
		     const struct et_rdmacm_conn_param *p, uint64_t now);
/* A consumer reject, with up to ET_CM_REJ_PDATA bytes.  0 or -EINVAL. */
int et_rdmacm_reject(struct et_rdmacm *cm, struct et_rdmacm_id *id, const void *pdata,
		     uint16_t len, uint64_t now);

/* DREQ; the QP is flushed.  0 or -EINVAL (not established). */
int et_rdmacm_disconnect(struct et_rdmacm *cm, struct et_rdmacm_id *id, uint64_t now);

/* qp is destroyed (rdma_destroy_qp, or ibv_destroy_qp on the QP that
 * rdma_create_qp made, as rping does): every id bound to it drops it, so
 * that its connection's disconnect never flushes it afterwards. */
void et_rdmacm_forget_qp(struct et_rdmacm *cm, const struct et_qp *qp);
/* Done with id (its QP is no longer touched; destroy it after). */
void et_rdmacm_release(struct et_rdmacm *cm, struct et_rdmacm_id *id, uint64_t now);

/* Timers and MADs waiting for a MAC; what came in (through the NIC) is
 * turned into events here too.  Bounded, never blocks. */
void et_rdmacm_poll(struct et_rdmacm *cm, uint64_t now);
/* The next event; false when there is none. */
bool et_rdmacm_get_event(struct et_rdmacm *cm, struct et_rdmacm_event *ev);
/* When et_rdmacm_poll has work; UINT64_MAX if none. */
uint64_t et_rdmacm_next_event(struct et_rdmacm *cm);

void et_rdmacm_id_set_ctx(struct et_rdmacm_id *id, void *ctx);
void *et_rdmacm_id_ctx(const struct et_rdmacm_id *id);
struct et_qp *et_rdmacm_id_qp(const struct et_rdmacm_id *id);
enum et_cm_state et_rdmacm_id_state(const struct et_rdmacm_id *id);

const struct et_rdmacm_stats *et_rdmacm_stats(const struct et_rdmacm *cm);
const struct et_cm_stats *et_rdmacm_cm_stats(const struct et_rdmacm *cm);

#endif /* ET_RDMACM_H */
