/* SPDX-License-Identifier: BSD-3-Clause
 * RC queue pair: what the in-order mode (et_qp_gbn.c) and the multipath
 * mode (et_qp_mp.c) share, sans I/O.  Each entry point that works
 * differently in the two modes goes through the QP's ops table once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "wire/et_path_id.h"
#include "transport/et_qp_priv.h"

/* IBTA vol. 1 table 45, in units of 10 us (code 0 is the longest). */
static const uint32_t rnr_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
	16384, 24576, 32768, 49152,
};

uint64_t
et_rnr_timer_ns(uint8_t code)
{
	return (uint64_t)rnr_10us[code & 31] * 10000;
}

/* ---- attributes and life cycle ---- */

void
et_qp_attr_default(struct et_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ttl = 64;
	a->mtu = 4096;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->min_rnr_timer = 12; /* 0.64 ms */
	a->rto_ns = 1000000;
	a->ack_every = 1;
	a->max_send_wr = 256;
	a->max_recv_wr = 256;
	a->max_rd_atomic = 16;
	a->max_dest_rd_atomic = 16;
	a->max_msg_size = 1u << 31;
	et_dctcp_params_default(&a->dctcp);
}

int
et_qp_attr_check(const struct et_qp_attr *a, const char **why)
{
	const char *w = NULL;

	if (a->qpn > ET_QPN_MASK || a->dest_qpn > ET_QPN_MASK)
		w = "QPN beyond 24 bits";
	else if (a->sq_psn > ET_PSN_MASK || a->rq_psn > ET_PSN_MASK)
		w = "PSN beyond 24 bits";
	else if (!rte_is_power_of_2(a->mtu) || a->mtu < 256 || a->mtu > ET_MTU_MAX)
		w = "MTU must be 256, 512, 1024, 2048 or 4096";
	else if (a->retry_cnt > 7 || a->rnr_retry > 7)
		w = "retry counts are 0..7";
	else if (a->min_rnr_timer > 31)
		w = "RNR timer code is 0..31";
	else if (a->rto_ns == 0)
		w = "retransmit timeout must be > 0";
	else if (a->ack_every == 0)
		w = "ack_every must be >= 1";
	else if (!rte_is_power_of_2(a->max_send_wr) || !rte_is_power_of_2(a->max_recv_wr) ||
		 a->max_send_wr > (1u << 20) || a->max_recv_wr > (1u << 20))
		w = "queue sizes must be powers of 2 up to 2^20";
	else if (a->dscp > 63)
		w = "DSCP is 0..63";
	else if (a->max_send_sge > ET_MAX_SGE || a->max_recv_sge > ET_MAX_SGE)
		w = "a work request names at most ET_MAX_SGE (8) buffers";
	else if (a->datagram && a->multipath)
		w = "a QP is datagram (UD) or multipath, not both";
	else if (a->dctcp.g <= 0 || a->dctcp.g > 1 || a->dctcp.init_alpha < 0 ||
		 a->dctcp.init_alpha > 1 || a->dctcp.max_cwnd < a->mtu)
		w = "DCTCP: 0 < g <= 1, 0 <= alpha <= 1, max_cwnd >= MTU";
	if (why)
		*why = w;
	return w ? -EINVAL : 0;
}

/* What a QP's attributes start: its path, PSNs, retry budgets, DCTCP
 * state both ways (at create, and at a modify in RESET). */
static void
take_attr(struct et_qp *qp, const struct et_qp_attr *a)
{
	qp->path_id = a->path_id;
	qp->sq_next_psn = qp->snd_una = qp->snd_nxt = qp->snd_max = a->sq_psn;
	qp->epsn = a->rq_psn;
	qp->retries_left = a->retry_cnt;
	qp->rnr_retries_left = a->rnr_retry;
	et_dctcp_init(&qp->cc, &a->dctcp, a->mtu, a->sq_psn);
	et_dctcp_init(&qp->acc, &a->dctcp, a->mtu, a->rq_psn);
}

struct et_qp *
et_qp_create(const struct et_qp_attr *a, struct et_mr_table *mrs,
	     struct et_cq *send_cq, struct et_cq *recv_cq, struct rte_mempool *pool)
{
	struct et_qp *qp;

	if (et_qp_attr_check(a, NULL) || !mrs || !send_cq || !recv_cq || !pool)
		return NULL;
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return NULL;
	qp->ops = a->datagram ? &et_qp_ud_ops : a->multipath ? &et_qp_mp_ops : &et_qp_gbn_ops;
	qp->sq = calloc(a->max_send_wr, sizeof(*qp->sq));
	if (a->max_send_sge > 1)
		qp->sgl = calloc((size_t)a->max_send_wr * a->max_send_sge, sizeof(*qp->sgl));
	qp->rq = &qp->own_rq;
	if (!qp->sq || (a->max_send_sge > 1 && !qp->sgl) ||
	    et_rq_init(&qp->own_rq, a->max_recv_wr, a->max_recv_sge) ||
	    (a->max_recv_sge > 1 && !(qp->rx_sgl = calloc(ET_MAX_SGE, sizeof(*qp->rx_sgl)))) ||
	    (qp->ops->init && qp->ops->init(qp))) {
		et_qp_destroy(qp);
		return NULL;
	}
	qp->a = *a;
	qp->state = ET_QPS_RESET;
	qp->mrs = mrs;
	qp->send_cq = send_cq;
	qp->recv_cq = recv_cq;
	qp->pool = pool;
	qp->sq_mask = a->max_send_wr - 1;
	take_attr(qp, a);
	return qp;
}

void
et_qp_destroy(struct et_qp *qp)
{
	if (qp == NULL)
		return;
	free(qp->sq);
	free(qp->sgl);
	free(qp->rx_sgl);
	et_rq_free(&qp->own_rq);
	free(qp->rd_res);
	if (qp->ops && qp->ops->fini)
		qp->ops->fini(qp); /* the mode's state, if any */
	free(qp);
}

ET_CTR_DEFINE(et_qp_ctrs, struct et_qp_stats, ET_QP_COUNTERS);

void
et_qp_set_dest_mac(struct et_qp *qp, const struct rte_ether_addr *mac)
{
	qp->a.dest_mac = *mac;
}

int
et_qp_connect(struct et_qp *qp, uint32_t dest_qpn)
{
	if (qp->state != ET_QPS_RESET || dest_qpn > ET_QPN_MASK)
		return -EINVAL;
	qp->a.dest_qpn = dest_qpn;
	return 0;
}

/* A ready QP whose requester has never been used: verbs' RTS after RTR
 * (the receiving side is up, the sending one is being given its PSN,
 * retries and timeout).  What the responder uses must not change. */
static bool
send_side_only(const struct et_qp *qp, const struct et_qp_attr *a)
{
	const struct et_qp_attr *o = &qp->a;

	return qp->state == ET_QPS_RTS && qp->sq_tail == 0 && qp->snd_max == o->sq_psn &&
	       a->dest_ip == o->dest_ip && a->dest_qpn == o->dest_qpn && a->rq_psn == o->rq_psn &&
	       a->mtu == o->mtu && a->max_dest_rd_atomic == o->max_dest_rd_atomic &&
	       a->min_rnr_timer == o->min_rnr_timer;
}

int
et_qp_modify(struct et_qp *qp, const struct et_qp_attr *a)
{
	/* what the QP was made with stays: its number, queues and mode */
	if (a->qpn != qp->a.qpn || a->max_send_wr != qp->a.max_send_wr ||
	    a->max_recv_wr != qp->a.max_recv_wr || a->multipath != qp->a.multipath ||
	    a->datagram != qp->a.datagram ||
	    et_qp_attr_check(a, NULL))
		return -EINVAL;
	if (qp->state != ET_QPS_RESET && !send_side_only(qp, a))
		return -EINVAL;
	if (qp->state == ET_QPS_RESET && qp->rd_res)
		return -EINVAL;
	qp->a = *a;
	take_attr(qp, a);
	return 0;
}

const struct et_qp_attr *
et_qp_attr_of(const struct et_qp *qp)
{
	return &qp->a;
}

int
et_qp_set_peer_path(struct et_qp *qp, uint32_t sq_psn, uint32_t mtu)
{
	struct et_qp_attr a = qp->a;

	a.sq_psn = sq_psn;
	a.mtu = mtu;
	return et_qp_modify(qp, &a);
}

int
et_qp_ready(struct et_qp *qp)
{
	if (qp->state != ET_QPS_RESET)
		return -EINVAL;
	qp->state = ET_QPS_RTS;
	return 0;
}

void
et_qp_set_path_fn(struct et_qp *qp, et_path_fn fn, void *ctx)
{
	qp->path_fn = fn;
	qp->path_ctx = ctx;
}

void
et_qp_set_ack_fn(struct et_qp *qp, et_ack_fn fn, void *ctx)
{
	qp->ack_fn = fn;
	qp->ack_ctx = ctx;
}

/* ---- what the QP shows ---- */

uint32_t
et_qp_qpn(const struct et_qp *qp)
{
	return qp->a.qpn;
}

uint16_t
et_qp_path_id(const struct et_qp *qp)
{
	return qp->path_id;
}

const struct et_qp_stats *
et_qp_stats(const struct et_qp *qp)
{
	return &qp->st;
}

const struct et_dctcp *
et_qp_dctcp(const struct et_qp *qp)
{
	return &qp->cc;
}

const struct et_dctcp *
et_qp_answer_dctcp(const struct et_qp *qp)
{
	return &qp->acc;
}

uint32_t
et_qp_sq_outstanding(const struct et_qp *qp)
{
	return qp->sq_tail - qp->sq_head;
}

/* ---- errors ---- */

void
et_qp_fail(struct et_qp *qp, int status)
{
	if (status >= 0 && qp->sq_head != qp->sq_tail)
		et_qp_complete_send(qp, &qp->sq[qp->sq_head++ & qp->sq_mask].wr,
				    (uint8_t)status);
	while (qp->sq_head != qp->sq_tail)
		et_qp_complete_send(qp, &qp->sq[qp->sq_head++ & qp->sq_mask].wr,
				    ET_WC_WR_FLUSH_ERR);
	/* the receive taken, and those of its own queue; a shared queue's
	 * are the other QPs' */
	if (qp->rx_taken)
		et_qp_complete_recv(qp, ET_WC_RECV, ET_WC_WR_FLUSH_ERR, 0, false, 0);
	while (qp->rq == &qp->own_rq && et_rq_count(qp->rq))
		et_qp_complete_recv(qp, ET_WC_RECV, ET_WC_WR_FLUSH_ERR, 0, false, 0);
	qp->sq_cur = qp->sq_head;
	qp->rd_inflight = 0;
	qp->state = ET_QPS_ERR;
	qp->rto_deadline = 0;
	qp->rnr_until = 0;
	qp->inflight = 0;
	/* no answer is owed by a QP in error */
	for (uint32_t i = 0; qp->rd_res && i < qp->a.max_dest_rd_atomic; i++)
		qp->rd_res[i].next_psn = et_psn_add(qp->rd_res[i].first_psn, qp->rd_res[i].npkts);
	qp->rd_res_pending = 0;
	if (qp->ops->fail)
		qp->ops->fail(qp);
}

void
et_qp_fail_nak(struct et_qp *qp, uint8_t syn)
{
	switch (syn & ET_AETH_VALUE_MASK) {
	case ET_NAK_INVALID_REQ:
		et_qp_fail(qp, ET_WC_REM_INV_REQ_ERR);
		return;
	case ET_NAK_REMOTE_ACCESS:
		et_qp_fail(qp, ET_WC_REM_ACCESS_ERR);
		return;
	default:
		et_qp_fail(qp, ET_WC_REM_OP_ERR);
		return;
	}
}

bool
et_qp_rnr_pause(struct et_qp *qp, uint8_t syn, uint64_t now)
{
	if (qp->rnr_retries_left == 0) {
		et_qp_fail(qp, ET_WC_RNR_RETRY_EXC_ERR);
		return false;
	}
	if (qp->a.rnr_retry != ET_QP_RETRY_FOREVER)
		qp->rnr_retries_left--;
	qp->rnr_until = now + et_rnr_timer_ns(syn & ET_AETH_VALUE_MASK);
	return true;
}

void
et_qp_flush(struct et_qp *qp)
{
	et_qp_fail(qp, -1);
}

/* ---- frames ---- */

void
et_qp_base_hdr(const struct et_qp *qp, struct et_roce_hdr *h, uint16_t sport)
{
	memset(h, 0, sizeof(*h));
	h->dst_mac = qp->a.dest_mac;
	h->src_mac = qp->a.mac;
	h->src_ip = qp->a.ip;
	h->dst_ip = qp->a.dest_ip;
	h->dscp = qp->a.dscp;
	h->ttl = qp->a.ttl;
	h->udp_sport = sport;
	h->pkey = ET_PKEY_DEFAULT;
	h->dest_qp = qp->a.dest_qpn;
}

struct rte_mbuf *
et_qp_build(struct et_qp *qp, const struct et_roce_hdr *h, const void *payload, uint32_t len)
{
	struct rte_mbuf *m;
	int err;

	m = et_roce_build_mbuf(qp->pool, h, payload, len, &err);
	if (m == NULL)
		qp->st.alloc_fail++;
	return m;
}

/* The buffer holding byte *off of a list of n at sgl, or of one (n 0),
 * and *off made relative to it; NULL past the end. */
static const struct et_sge *
buf_at(const struct et_sge *sgl, uint32_t n, const struct et_sge *one, uint64_t *off)
{
	if (n == 0)
		return *off < one->length ? one : NULL;
	for (uint32_t i = 0; i < n; i++) {
		if (*off < sgl[i].length)
			return &sgl[i];
		*off -= sgl[i].length;
	}
	return NULL;
}

static const struct et_sge *
wr_buf_at(const struct et_send_wr *wr, uint64_t *off, struct et_sge *one)
{
	*one = (struct et_sge){wr->local_addr, wr->length, wr->lkey};
	return buf_at(wr->sgl, wr->num_sge, one, off);
}

/* len bytes of src written from byte off of the buffers, g holding it. */
static void
bufs_write(const struct et_sge *g, uint64_t off, const void *src, uint32_t len)
{
	for (uint32_t n = 0; n < len; g++, off = 0) {
		uint32_t take = RTE_MIN(len - n, g->length - (uint32_t)off);

		memcpy((uint8_t *)g->addr + off, (const uint8_t *)src + n, take);
		n += take;
	}
}

struct rte_mbuf *
et_qp_build_data(struct et_qp *qp, const struct et_roce_hdr *h, const struct et_send_wr *wr,
		 uint64_t off, uint32_t len)
{
	uint8_t gathered[ET_MTU_MAX];
	struct et_sge one;
	const struct et_sge *g = len ? wr_buf_at(wr, &off, &one) : NULL;
	uint32_t n = 0;

	if (g == NULL || off + len <= g->length) /* in one buffer: no copy of ours */
		return et_qp_build(qp, h, g ? (const uint8_t *)g->addr + off : NULL, len);
	for (; n < len; g++, off = 0) {
		uint32_t take = RTE_MIN(len - n, g->length - (uint32_t)off);

		memcpy(gathered + n, (const uint8_t *)g->addr + off, take);
		n += take;
	}
	return et_qp_build(qp, h, gathered, len);
}

void
et_qp_wr_place(const struct et_send_wr *wr, uint64_t off, const void *src, uint32_t len)
{
	struct et_sge one;
	const struct et_sge *g = len ? wr_buf_at(wr, &off, &one) : NULL; /* off: within g */

	if (g)
		bufs_write(g, off, src, len);
}

void
et_qp_recv_place(struct et_qp *qp, uint64_t off, const void *src, uint32_t len)
{
	const struct et_recv_wr *r = &qp->rx_wqe;
	struct et_sge one = {r->addr, r->length, r->lkey};
	const struct et_sge *g = len ? buf_at(r->sgl, r->num_sge, &one, &off) : NULL;

	if (g)
		bufs_write(g, off, src, len);
}

struct rte_mbuf *
et_qp_build_ack(struct et_qp *qp, uint16_t sport, uint32_t psn, uint8_t syndrome,
		uint32_t msn, uint8_t resv8a)
{
	struct et_roce_hdr h;

	et_qp_base_hdr(qp, &h, sport);
	h.ip_id = qp->ip_id++;
	h.opcode = ET_OP_ACK;
	h.psn = psn;
	h.resv8a = resv8a;
	h.aeth_syndrome = syndrome;
	h.aeth_msn = msn;
	return et_qp_build(qp, &h, NULL, 0);
}

/* ---- responder ---- */

/* Queue an ACK/NAK.  One slot: a later response covers an earlier one,
 * except that a NAK is not displaced by an ACK that says no more. */
void
et_qp_respond(struct et_qp *qp, uint8_t syndrome, uint32_t psn)
{
	if (qp->resp_pending && (qp->resp_syndrome & ET_AETH_KIND_MASK) != ET_AETH_ACK &&
	    (syndrome & ET_AETH_KIND_MASK) == ET_AETH_ACK &&
	    et_psn_diff(psn, qp->resp_psn) < 0)
		return;
	qp->resp_pending = true;
	qp->resp_syndrome = syndrome;
	qp->resp_psn = psn;
}

void
et_qp_ack_duplicate(struct et_qp *qp)
{
	qp->st.rx_dup++;
	et_qp_respond(qp, et_aeth_ack(ET_AETH_CREDITS_UNLIMITED), et_psn_add(qp->epsn, ET_PSN_MASK));
}

void
et_qp_responder_fail(struct et_qp *qp, enum et_nak_code code, uint8_t recv_status)
{
	et_qp_respond(qp, et_aeth_nak(code), qp->epsn);
	if (qp->rx_msg == ET_RX_SEND && qp->rx_taken)
		et_qp_complete_recv(qp, ET_WC_RECV, recv_status, qp->rx_len, false, 0);
	qp->rx_msg = ET_RX_NONE;
	et_qp_fail(qp, -1);
}

void
et_qp_ce_seen(struct et_qp *qp, const struct et_roce_hdr *h, uint64_t now)
{
	if (h->ecn != ET_ECN_CE)
		return;
	qp->st.rx_ce++;
	if (!qp->cnp_ever || qp->a.cnp_interval_ns == 0 ||
	    now - qp->last_cnp_ns >= qp->a.cnp_interval_ns) {
		qp->cnp_pending++;
		qp->cnp_sport = et_path_echo(h->udp_sport);
		qp->last_cnp_ns = now;
		qp->cnp_ever = true;
	}
}

/* A request (data, a READ, an atomic): the CNP owed for a CE mark, whatever
 * the mode does. */
static void
responder_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	uint16_t echo = et_path_echo(pkt->h.udp_sport);

	et_qp_ce_seen(qp, &pkt->h, now);
	qp->resp_sport = echo;
	qp->ops->responder_rx(qp, pkt, echo);
}

/* A SEND or WRITE placed before the QP was flushed, sent again: its ACK was
 * lost as the connection closed (a peer's last message; the peer waits for
 * its completion before it disconnects).  Acknowledged again, from epsn
 * alone: nothing is placed and no receive is consumed. */
static bool
resent_before_flush(const struct et_qp *qp, const struct et_roce_hdr *h)
{
	uint32_t f = et_opcode_flags[h->opcode];

	return h->opcode != ET_OP_ACK &&
	       !(f & (ET_OPF_READ_REQ | ET_OPF_ATOMIC | ET_OPF_READ_RESP | ET_OPF_ATOMIC_ACK)) &&
	       et_psn_diff(h->psn, qp->epsn) < 0;
}

void
et_qp_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	uint8_t op = pkt->h.opcode;

	if (qp->ops->rx) {
		qp->ops->rx(qp, pkt, now);
		return;
	}
	if (op == ET_OP_CNP) {
		/* one CNP per QP: it slows whatever the QP sends that way,
		 * its requests' data and its answers alike */
		qp->st.cnps_rx++;
		et_dctcp_on_cnp(&qp->cc);
		et_dctcp_on_cnp(&qp->acc);
		return;
	}
	if (qp->state == ET_QPS_ERR && et_opcode_valid(op) && et_opcode_is_rc(op) &&
	    resent_before_flush(qp, &pkt->h)) {
		et_qp_ack_duplicate(qp);
		return;
	}
	if (qp->state != ET_QPS_RTS || !et_opcode_valid(op) || !et_opcode_is_rc(op)) {
		qp->st.rx_dropped++;
		return;
	}
	/* acknowledgements and answers go to the requester */
	if (op == ET_OP_ACK || (et_opcode_flags[op] & (ET_OPF_READ_RESP | ET_OPF_ATOMIC_ACK)))
		qp->ops->requester_rx(qp, pkt, now);
	else
		responder_rx(qp, pkt, now);
}

/* ---- READ and atomics, what both modes share ---- */

int
et_qp_rd_res_alloc(struct et_qp *qp)
{
	if (qp->rd_res == NULL)
		qp->rd_res = calloc(qp->a.max_dest_rd_atomic, sizeof(*qp->rd_res));
	return qp->rd_res ? 0 : -ENOMEM;
}

struct et_rd_res *
et_qp_rd_res_at(struct et_qp *qp, uint32_t n)
{
	return &qp->rd_res[n % qp->a.max_dest_rd_atomic];
}

struct et_rd_res *
et_qp_rd_res_find(struct et_qp *qp, uint32_t psn)
{
	uint32_t n = qp->rd_res ? qp->a.max_dest_rd_atomic : 0;

	for (uint32_t i = 0; i < n; i++) {
		struct et_rd_res *r = &qp->rd_res[i];
		int32_t k = et_psn_diff(psn, r->first_psn);

		if (r->kind && k >= 0 && (uint32_t)k < r->npkts)
			return r;
	}
	return NULL;
}

uint8_t *
et_qp_rd_target(const struct et_qp *qp, const struct et_roce_hdr *h, uint8_t *nak)
{
	bool atomic = et_opcode_flags[h->opcode] & ET_OPF_ATOMIC;
	uint32_t len = atomic ? ET_ATOMIC_LEN : h->reth_dma_len;
	uint8_t *p;

	*nak = ET_NAK_INVALID_REQ;
	if (atomic ? (h->reth_va & (ET_ATOMIC_LEN - 1)) != 0 : len > qp->a.max_msg_size)
		return NULL;
	if (len == 0)
		return (uint8_t *)qp; /* a READ of nothing reads nothing: any non-NULL */
	p = et_mr_lookup(qp->mrs, h->reth_rkey, h->reth_va, len,
			 atomic ? ET_ACCESS_REMOTE_ATOMIC : ET_ACCESS_REMOTE_READ);
	if (p == NULL)
		*nak = ET_NAK_REMOTE_ACCESS;
	return p;
}

uint64_t
et_qp_atomic_exec(uint8_t *p, const struct et_roce_hdr *h)
{
	uint64_t v, nv;

	/* memcpy: the region's bytes need not be 8-byte aligned in our memory */
	memcpy(&v, p, sizeof(v));
	if (h->opcode == ET_OP_FETCH_ADD)
		nv = v + h->atomic_swap;
	else
		nv = v == h->atomic_cmp ? h->atomic_swap : v;
	memcpy(p, &nv, sizeof(nv));
	return v;
}

void
et_qp_rd_request_hdr(const struct et_qp *qp, const struct et_send_wr *wr, uint32_t k,
		     struct et_roce_hdr *h)
{
	uint64_t off = (uint64_t)k * qp->a.mtu;

	h->reth_rkey = wr->rkey;
	if (wr->opcode == ET_WR_RDMA_READ) {
		h->opcode = ET_OP_READ_REQ;
		h->reth_va = wr->remote_addr + off;
		h->reth_dma_len = off < wr->length ? (uint32_t)(wr->length - off) : 0;
		return;
	}
	h->opcode = wr->opcode == ET_WR_ATOMIC_CMP_SWP ? ET_OP_CMP_SWAP : ET_OP_FETCH_ADD;
	h->reth_va = wr->remote_addr;
	h->atomic_swap = wr->opcode == ET_WR_ATOMIC_CMP_SWP ? wr->swap : wr->compare_add;
	h->atomic_cmp = wr->compare_add;
}

/* An RNR wait or a pace is over once now reaches its end: sending may
 * resume, and the hold is forgotten, so that et_qp_deadline() does not
 * report it again (issue 21: a NIC firing the timer at that now, again and
 * again). */
static void
hold_over(struct et_qp *qp, uint64_t now)
{
	if (qp->rnr_until && now >= qp->rnr_until)
		qp->rnr_until = 0;
	if (qp->pace_ps && now >= qp->pace_ps / 1000)
		qp->pace_ps = 0;
	if (qp->ans_pace_ps && now >= qp->ans_pace_ps / 1000)
		qp->ans_pace_ps = 0;
}

void
et_qp_paced(struct et_qp *qp, uint64_t now, const struct rte_mbuf *m)
{
	uint64_t ps = et_dctcp_pace_ps(&qp->cc, rte_pktmbuf_pkt_len(m));

	if (ps)
		qp->pace_ps = RTE_MAX(qp->pace_ps, now * 1000) + ps;
}


struct rte_mbuf *
et_qp_build_answer(struct et_qp *qp, uint64_t now, uint8_t opcode, uint16_t sport, uint32_t psn,
		   uint32_t msn, uint64_t orig, const void *src, uint32_t len)
{
	bool atomic = opcode == ET_OP_ATOMIC_ACK;
	struct et_roce_hdr h;
	struct rte_mbuf *m;
	uint64_t ps;

	et_qp_base_hdr(qp, &h, sport);
	h.opcode = opcode;
	h.ip_id = qp->ip_id++;
	h.psn = psn;
	h.aeth_syndrome = et_aeth_ack(ET_AETH_CREDITS_UNLIMITED);
	h.aeth_msn = msn;
	if (atomic)
		h.atomic_orig = orig;
	else
		h.ecn = ET_ECN_ECT0; /* data, as the requester's own */
	m = et_qp_build(qp, &h, len ? src : NULL, len);
	if (m == NULL)
		return NULL;
	ps = et_dctcp_answer_pace_ps(&qp->acc, rte_pktmbuf_pkt_len(m));
	et_dctcp_on_answer(&qp->acc, len);
	if (ps)
		qp->ans_pace_ps = RTE_MAX(qp->ans_pace_ps, now * 1000) + ps;
	if (atomic) {
		qp->st.atomic_acks_tx++;
	} else {
		qp->st.read_resp_tx++;
		qp->st.read_resp_bytes += len;
	}
	return m;
}

void
et_qp_timer(struct et_qp *qp, uint64_t now)
{
	/* in ERR too: an error NAK may be owed */
	if (qp->pool_retry_at && now >= qp->pool_retry_at)
		qp->pool_retry_at = 0;
	if (qp->state != ET_QPS_RTS)
		return;
	hold_over(qp, now);
	qp->ops->timer(qp, now);
}

/* ---- transmit ---- */

static struct rte_mbuf *
build_response(struct et_qp *qp)
{
	uint8_t kind = qp->resp_syndrome & ET_AETH_KIND_MASK;
	struct rte_mbuf *m;

	m = et_qp_build_ack(qp, qp->resp_sport, qp->resp_psn, qp->resp_syndrome,
			    qp->ops->msn_is_epsn ? qp->epsn : qp->msn, 0);
	if (m == NULL)
		return NULL;
	qp->resp_pending = false;
	if (kind == ET_AETH_ACK)
		qp->st.acks_tx++;
	else if (kind == ET_AETH_RNR_NAK)
		qp->st.rnr_naks_tx++;
	else if ((qp->resp_syndrome & ET_AETH_VALUE_MASK) == ET_NAK_PSN_SEQ)
		qp->st.naks_tx++;
	else
		qp->st.err_naks_tx++;
	return m;
}

static struct rte_mbuf *
build_cnp(struct et_qp *qp)
{
	struct et_roce_hdr h;
	struct rte_mbuf *m;

	et_qp_base_hdr(qp, &h, qp->cnp_sport);
	h.ip_id = qp->ip_id++;
	et_roce_cnp_hdr(&h, qp->a.dest_qpn);
	m = et_qp_build(qp, &h, NULL, 0);
	if (m == NULL)
		return NULL;
	qp->cnp_pending--;
	qp->st.cnps_tx++;
	return m;
}

bool
et_qp_tx_ready(const struct et_qp *qp, uint64_t now)
{
	if (qp->state == ET_QPS_RESET || now < qp->pool_retry_at)
		return false;
	return (qp->resp_pending && !(qp->ops->answers_owed && qp->ops->answers_owed(qp))) ||
	       qp->cnp_pending || qp->ops->tx_ready(qp, now);
}

/* The acknowledgements every mode owes alike: CNPs before the ACK that
 * follows them (the sender counts the mark in the window the ACK closes). */
static uint16_t
tx_cnp_and_response(struct et_qp *qp, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = 0;

	while (k < n && qp->cnp_pending && (pkts[k] = build_cnp(qp)))
		k++;
	if (k < n && qp->resp_pending &&
	    !(qp->ops->answers_owed && qp->ops->answers_owed(qp)) &&
	    (pkts[k] = build_response(qp)))
		k++;
	return k;
}

/* What the QP owes: its acknowledgements, and with data its data too. */
static uint16_t
tx_owed(struct et_qp *qp, uint64_t now, struct rte_mbuf **pkts, uint16_t n, bool data)
{
	uint64_t fails = qp->st.alloc_fail;
	uint16_t k;

	if (qp->state == ET_QPS_RESET)
		return 0;
	k = tx_cnp_and_response(qp, pkts, n);
	if (data) {
		k += qp->ops->tx(qp, now, pkts + k, (uint16_t)(n - k));
		hold_over(qp, now);
	} else if (qp->ops->tx_acks) {
		k += qp->ops->tx_acks(qp, pkts + k, (uint16_t)(n - k));
	}
	/* the pool was empty and something is still owed: a NIC that stops
	 * serving this QP must hear from its deadline when to try again, for
	 * nothing else may ever wake it (a responder whose last ACK this was
	 * has no timer, and no more data is coming); only a call that served
	 * everything may say that nothing is */
	if (qp->st.alloc_fail != fails)
		qp->pool_retry_at = now + ET_QP_POOL_RETRY_NS;
	else if (data)
		qp->pool_retry_at = 0;
	return k;
}

uint16_t
et_qp_tx(struct et_qp *qp, uint64_t now, struct rte_mbuf **pkts, uint16_t n)
{
	return tx_owed(qp, now, pkts, n, true);
}

uint16_t
et_qp_tx_acks(struct et_qp *qp, uint64_t now, struct rte_mbuf **pkts, uint16_t n)
{
	return tx_owed(qp, now, pkts, n, false);
}

uint64_t
et_qp_deadline(const struct et_qp *qp)
{
	uint64_t d = qp->state == ET_QPS_RTS ? qp->ops->deadline(qp) : UINT64_MAX;

	/* in ERR too: an error NAK may be owed */
	if (qp->pool_retry_at && qp->state != ET_QPS_RESET && qp->pool_retry_at < d)
		d = qp->pool_retry_at;
	return d;
}
