/* SPDX-License-Identifier: BSD-3-Clause
 * The host NIC model: one port, its QPs, and the three things a RoCE NIC
 * does between them.
 *
 * RX: every frame is parsed and ICRC-checked; what fails is counted by
 * reason and dropped; the rest goes to the QP its destination QPN names.
 * TX: the QPs with something to send form an active list served
 * round-robin, one packet per turn (the paper's assumption 3), each QP
 * within its own DCTCP window, into the same egress link model as a switch
 * port; a received PAUSE/PFC frame holds that egress.
 * Timers: one min-heap of QP deadlines for the whole host, so a host with
 * thousands of QPs does not scan them on every loop.
 * The QP table grows with what it holds: QPNs are handed out over the
 * whole space the NIC was given (reused as late as possible), their slots
 * live in pages of ET_NIC_QP_PAGE made when a QPN in them is taken and
 * freed when their last QP goes, so a NIC of 65,536 QPNs holding a few
 * costs a few pages.
 */
#ifndef ET_NIC_H
#define ET_NIC_H

#include <stdint.h>

#include "base/et_counters.h"
#include "host/et_arp.h"
#include "link/et_egress.h"
#include "link/et_port.h"
#include "transport/et_qp.h"
#include "wire/et_wire.h"

/* Every frame the NIC takes off its link ends in exactly one GONE counter;
 * every frame it puts on the link began in one MADE counter. */
#define ET_NIC_COUNTERS(X, A) \
	X(rx_pkts, GONE, "frames handed to a QP") \
	X(rx_bytes, INFO, "bytes handed to a QP") \
	A(rx_bad, GONE, ET_WIRE_E_COUNT, et_wire_err_name, "rx_bad", "frames refused, by parse error") \
	X(rx_not_ours, GONE, "IPv4 destination is not ours") \
	X(rx_unknown_qpn, GONE, "no QP with the frame's destination QPN") \
	X(pause_rx, GONE, "PAUSE frames taken in") \
	X(rx_arp, GONE, "ARP frames handed to the ARP responder") \
	X(rx_arp_ignored, GONE, "ARP frames while no responder is set") \
	X(rx_fault_drops, FAULT, "dropped on purpose (rx_loss_ppm)") \
	X(rx_steered, GONE, "handed to the team's NIC that holds their QP (counted again there)") \
	X(rx_steer_full, GONE, "for another NIC of the team, whose inbox was full: lost") \
	X(tx_pkts, MADE, "frames the QPs produced") \
	X(ctrl_tx, MADE, "control frames sent (ARP)") \
	X(ctrl_tx_drop, INFO, "ARP answers with no mbuf or queue room") \
	X(timer_fires, INFO, "QP timers fired") \
	X(timer_stalls, INFO, "QP timers still due once fired: put off to the next ns") \
	X(rx_catch_up, INFO, "RX bursts read before due timers fire (their ACKs may wait)") \
	X(qps_made, INFO, "QPs created on this NIC, requester and responder ends alike") \
	X(qps_max, MAX, "most QPs this NIC held at once, requester and responder ends alike")

struct et_nic_stats {
	ET_NIC_COUNTERS(ET_CTR_FIELD, ET_CTR_ARRAY_FIELD)
};
extern const struct et_ctr_table et_nic_ctrs;

struct et_nic_qp {
	struct et_qp *qp;
	uint32_t next, prev;  /* active list links */
	bool active;
	uint64_t timer_at;    /* deadline the heap holds for it; 0: none */
};

/* Slots of QPNs qpn_base + k * ET_NIC_QP_PAGE ..: made with their first QP,
 * freed with their last. */
#define ET_NIC_QP_PAGE_SHIFT 8
#define ET_NIC_QP_PAGE (1u << ET_NIC_QP_PAGE_SHIFT)

struct et_nic_qp_page {
	uint32_t used;
	struct et_nic_qp q[ET_NIC_QP_PAGE];
};

struct et_nic_timer {
	uint64_t at;
	uint32_t idx;
};

/* NICs sharing one port, one per worker lcore, each on a queue pair of its
 * own: what the device puts on a queue need not be for that queue's NIC
 * (RSS hashes the UDP source port, a path, not the QP).  The QPNs are
 * dealt among them, QPN q to NIC (q - qpn_base) % n, so any NIC knows from
 * the header where a frame belongs; a frame for another goes to that
 * one's inbox (a ring any of them may write), read after the queue.  ARP
 * goes to NIC 0; a PAUSE holds the egress of the NIC that read it. */
#define ET_NIC_TEAM_MAX 16

struct et_nic_team {
	uint32_t n;
	struct rte_ring *inbox[ET_NIC_TEAM_MAX];
};

/* A team of n NICs (inboxes of ring_size frames on socket).  0, -EINVAL
 * or -ENOMEM. */
int et_nic_team_init(struct et_nic_team *t, uint32_t n, unsigned int ring_size, int socket);
/* After its NICs are freed; frames still in an inbox go back to their pool. */
void et_nic_team_free(struct et_nic_team *t);
/* The team NIC that holds QPN qpn. */
static inline uint32_t
et_nic_team_owner(const struct et_nic_team *t, uint32_t qpn_base, uint32_t qpn)
{
	return qpn >= qpn_base ? (qpn - qpn_base) % t->n : 0;
}

struct et_nic {
	struct et_port port;
	struct et_egress eg;
	struct rte_mempool *pool;
	struct rte_ether_addr mac;
	uint32_t ip;
	uint32_t qpn_base;
	uint32_t max_qps;        /* QPNs qpn_base .. qpn_base + max_qps - 1 */
	uint32_t pick_qps;       /* the first pick_qps the NIC hands out itself */
	struct et_nic_qp_page **pages; /* max_qps / ET_NIC_QP_PAGE, rounded up; NULL: empty */
	uint32_t n_qps;          /* QPs open now */
	uint32_t next_slot;      /* where the next QP's slot search starts */
	uint32_t cur;            /* next QP to serve; UINT32_MAX: none active */
	uint32_t n_active;
	struct et_nic_timer *heap;
	uint32_t heap_n, heap_cap;
	uint32_t tx_budget;      /* frames the egress may hold before we stop asking */
	/* ARP (control path, optional): when set, ARP frames go to it and its
	 * answers leave ahead of the data; the caller owns it */
	struct et_arp *arp;
	/* Testing a peer's recovery: drop this share of the RoCEv2 frames for
	 * us (data and ACKs alike), seeded, as if the wire had lost them.  The
	 * egress link model's faults do the same for what we send. */
	uint32_t rx_loss_ppm;
	uint64_t rx_rng;
	bool acks_first;         /* see et_nic_acks_first() */
	const struct et_nic_team *team; /* NULL: the port is all this NIC's */
	uint32_t team_k;         /* this NIC's place in the team */
	uint64_t rx_next;        /* a timed port: the next frame arrives then */
	uint32_t n_touched;      /* QPs the burst being read reached */
	uint32_t touched[32];
	struct et_nic_stats st;
};

/* The NIC uses port (the caller still closes it); its QPNs are qpn_base ..
 * qpn_base + max_qps - 1 (memory is taken as QPs are made, not for
 * max_qps). */
int et_nic_init(struct et_nic *n, const struct et_port *port,
		const struct et_link_model *lm, struct rte_mempool *pool,
		const struct rte_ether_addr *mac, uint32_t ip, uint32_t qpn_base,
		uint32_t max_qps);
void et_nic_free(struct et_nic *n);

/* nic (initialised, not yet polled) is the team's k-th; every NIC of the
 * team has the same qpn_base.  Its QPs must be made on QPNs of its own. */
void et_nic_join(struct et_nic *nic, const struct et_nic_team *t, uint32_t k);

/* on: the QPs' acknowledgements (ACK, NAK, CNP) are built as soon as a
 * burst was read and leave ahead of any data, as from a NIC with a queue
 * of its own for them (the paper's simulator); a PAUSE holds them all the
 * same, for they are of the data's class.  off (the default): they wait
 * their QP's turn in the round robin. */
void et_nic_acks_first(struct et_nic *n, bool on);

/* The NIC picks QPNs for new QPs from the first n of its QPNs only; the
 * others are made only when asked for by number (a->qpn), by someone who
 * keeps account of them (a fabric reserves them for its hosts' peers). */
void et_nic_reserve_qpns(struct et_nic *n, uint32_t pick);

/* A QP on this NIC: its QPN (a->qpn if not 0: it must be free), MAC and IP
 * come from the NIC; the rest from a.  NULL when the NIC is full, the QPN
 * taken or a bad. */
struct et_qp *et_nic_qp_create(struct et_nic *n, const struct et_qp_attr *a,
			       struct et_mr_table *mrs, struct et_cq *send_cq,
			       struct et_cq *recv_cq);
void et_nic_qp_destroy(struct et_nic *n, struct et_qp *qp);
/* The QP of that QPN on this NIC; NULL if there is none (control path). */
struct et_qp *et_nic_qp_find(const struct et_nic *n, uint32_t qpn);

/* Every QP the NIC holds, in QPN order (control path: reports, teardown). */
void et_nic_each_qp(const struct et_nic *n, void (*fn)(void *ctx, struct et_qp *qp), void *ctx);

/* Post and put the QP on the active list (at the tail). */
int et_nic_post_send(struct et_nic *n, struct et_qp *qp, const struct et_send_wr *wr);

/* Put a QP on the active list: at the tail (pos < 0), or with pos QPs
 * served before it (0: next) - a load balancer's random insertion. */
void et_nic_activate(struct et_nic *n, struct et_qp *qp, int pos);

/* Ask the segment for ip's MAC (rate-limited by n->arp); 0 when a request
 * left, -1 when n->arp is NULL or the request was refused. */
int et_nic_arp_request(struct et_nic *n, uint32_t ip, uint64_t now);

/* RX, timers, TX and the link, at now; the work done (0: nothing now).
 * Bounded: one burst in (up to 8 more while timers are due), each QP
 * timer due by now fires once, the egress filled up to its budget; the
 * caller's loop gets control back. */
uint32_t et_nic_poll(struct et_nic *n, uint64_t now);

/* When the NIC next has work; UINT64_MAX if none. */
uint64_t et_nic_next_event(const struct et_nic *n, uint64_t now);

/* The NIC's link as its port reads it (real ports, polled by the
 * program): while it is down what the NIC sends is dropped and counted
 * (its egress's fail_drops) rather than held for a port that takes
 * nothing.  Whether that changed. */
bool et_nic_set_link(struct et_nic *n, bool up);

#endif /* ET_NIC_H */
