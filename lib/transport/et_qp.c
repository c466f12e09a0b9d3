/* SPDX-License-Identifier: BSD-3-Clause
 * RC queue pair: requester and responder, sans I/O.
 *
 * Receiver rules follow the IBTA and the Linux rxe driver: PSNs compare in
 * 24 bits with a +-2^23 window; a packet ahead of the expected PSN draws one
 * NAK (PSN sequence error) and silence until the expected PSN arrives; a
 * duplicate is re-acknowledged with PSN = expected - 1 and not placed again.
 *
 * Multipath mode (the mp_* functions) replaces that with a reorder window,
 * selective ACKs and per-packet timers; see docs/transport.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "wire/et_path_id.h"
#include "transport/et_qp_priv.h"

#define RETRY_FOREVER 7
#define MAX_PSN_SPAN (1u << 22) /* PSNs outstanding: well inside 2^23 */
#define MP_MASK (ET_QP_MP_WINDOW - 1)
#define MPQ_MASK (ET_QP_MP_QUEUE - 1)

/* ---- completion queues ---- */

int
et_cq_init(struct et_cq *cq, uint32_t size)
{
	memset(cq, 0, sizeof(*cq));
	if (size == 0 || (size & (size - 1)))
		return -EINVAL;
	cq->ring = calloc(size, sizeof(*cq->ring));
	cq->size = size;
	return cq->ring ? 0 : -ENOMEM;
}

void
et_cq_free(struct et_cq *cq)
{
	free(cq->ring);
	cq->ring = NULL;
}

uint32_t
et_cq_poll(struct et_cq *cq, struct et_wc *wc, uint32_t n)
{
	uint32_t k = 0;

	while (k < n && cq->head != cq->tail)
		wc[k++] = cq->ring[cq->head++ & (cq->size - 1)];
	return k;
}

static void
cq_push(struct et_cq *cq, const struct et_wc *wc)
{
	if (cq->tail - cq->head == cq->size) {
		cq->overflows++;
		return;
	}
	cq->ring[cq->tail++ & (cq->size - 1)] = *wc;
}

const char *
et_wc_status_str(uint8_t status)
{
	static const char *const s[] = {
		[ET_WC_SUCCESS] = "success",
		[ET_WC_LOC_LEN_ERR] = "local length error",
		[ET_WC_LOC_PROT_ERR] = "local protection error",
		[ET_WC_REM_ACCESS_ERR] = "remote access error",
		[ET_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[ET_WC_REM_OP_ERR] = "remote operational error",
		[ET_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[ET_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[ET_WC_WR_FLUSH_ERR] = "work request flushed",
	};

	return status < RTE_DIM(s) && s[status] ? s[status] : "unknown";
}

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
	et_dctcp_params_default(&a->dctcp);
}

static bool
pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

int
et_qp_attr_check(const struct et_qp_attr *a, const char **why)
{
	const char *w = NULL;

	if (a->qpn > ET_QPN_MASK || a->dest_qpn > ET_QPN_MASK)
		w = "QPN beyond 24 bits";
	else if (a->sq_psn > ET_PSN_MASK || a->rq_psn > ET_PSN_MASK)
		w = "PSN beyond 24 bits";
	else if (!pow2(a->mtu) || a->mtu < 256 || a->mtu > 4096)
		w = "MTU must be 256, 512, 1024, 2048 or 4096";
	else if (a->retry_cnt > 7 || a->rnr_retry > 7)
		w = "retry counts are 0..7";
	else if (a->min_rnr_timer > 31)
		w = "RNR timer code is 0..31";
	else if (a->rto_ns == 0)
		w = "retransmit timeout must be > 0";
	else if (a->ack_every == 0)
		w = "ack_every must be >= 1";
	else if (!pow2(a->max_send_wr) || !pow2(a->max_recv_wr) ||
		 a->max_send_wr > (1u << 20) || a->max_recv_wr > (1u << 20))
		w = "queue sizes must be powers of 2 up to 2^20";
	else if (a->dscp > 63)
		w = "DSCP is 0..63";
	else if (a->dctcp.g <= 0 || a->dctcp.g > 1 || a->dctcp.init_alpha < 0 ||
		 a->dctcp.init_alpha > 1 || a->dctcp.max_cwnd < a->mtu)
		w = "DCTCP: 0 < g <= 1, 0 <= alpha <= 1, max_cwnd >= MTU";
	if (why)
		*why = w;
	return w ? -EINVAL : 0;
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
	qp->sq = calloc(a->max_send_wr, sizeof(*qp->sq));
	qp->rq = calloc(a->max_recv_wr, sizeof(*qp->rq));
	if (a->multipath)
		qp->mp = calloc(1, sizeof(*qp->mp));
	if (!qp->sq || !qp->rq || (a->multipath && !qp->mp)) {
		et_qp_destroy(qp);
		return NULL;
	}
	qp->a = *a;
	qp->state = ET_QPS_RESET;
	qp->mrs = mrs;
	qp->send_cq = send_cq;
	qp->recv_cq = recv_cq;
	qp->pool = pool;
	qp->path_id = a->path_id;
	qp->sq_mask = a->max_send_wr - 1;
	qp->rq_mask = a->max_recv_wr - 1;
	qp->sq_next_psn = qp->snd_una = qp->snd_nxt = qp->snd_max = a->sq_psn;
	qp->epsn = a->rq_psn;
	qp->retries_left = a->retry_cnt;
	qp->rnr_retries_left = a->rnr_retry;
	et_dctcp_init(&qp->cc, &a->dctcp, a->mtu, a->sq_psn);
	return qp;
}

void
et_qp_destroy(struct et_qp *qp)
{
	if (qp == NULL)
		return;
	free(qp->sq);
	free(qp->rq);
	free(qp->mp);
	free(qp);
}

int
et_qp_connect(struct et_qp *qp, uint32_t dest_qpn)
{
	if (qp->state != ET_QPS_RESET || dest_qpn > ET_QPN_MASK)
		return -EINVAL;
	qp->a.dest_qpn = dest_qpn;
	return 0;
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

uint32_t
et_qp_sq_outstanding(const struct et_qp *qp)
{
	return qp->sq_tail - qp->sq_head;
}

/* ---- completions and errors ---- */

static void
complete_send(struct et_qp *qp, const struct et_send_wr *wr, uint8_t status)
{
	struct et_wc wc = {
		.wr_id = wr->wr_id,
		.qpn = qp->a.qpn,
		.opcode = wr->opcode <= ET_WR_RDMA_WRITE_IMM ? ET_WC_RDMA_WRITE : ET_WC_SEND,
		.status = status,
		.byte_len = wr->length,
	};

	cq_push(qp->send_cq, &wc);
}

static void
complete_recv(struct et_qp *qp, uint8_t opcode, uint8_t status, uint32_t len,
	      bool with_imm, uint32_t imm)
{
	struct et_wc wc = {
		.wr_id = qp->rq[qp->rq_head & qp->rq_mask].wr_id,
		.qpn = qp->a.qpn,
		.opcode = opcode,
		.status = status,
		.with_imm = with_imm,
		.byte_len = len,
		.imm = imm,
	};

	cq_push(qp->recv_cq, &wc);
	qp->rq_head++;
}

/* The QP fails: the oldest send request gets status (if any is given), the
 * rest of both queues are flushed, in order. */
static void
qp_fail(struct et_qp *qp, int status)
{
	if (status >= 0 && qp->sq_head != qp->sq_tail)
		complete_send(qp, &qp->sq[qp->sq_head++ & qp->sq_mask].wr, (uint8_t)status);
	while (qp->sq_head != qp->sq_tail)
		complete_send(qp, &qp->sq[qp->sq_head++ & qp->sq_mask].wr,
			      ET_WC_WR_FLUSH_ERR);
	while (qp->rq_head != qp->rq_tail)
		complete_recv(qp, ET_WC_RECV, ET_WC_WR_FLUSH_ERR, 0, false, 0);
	qp->sq_cur = qp->sq_head;
	qp->state = ET_QPS_ERR;
	qp->rto_deadline = 0;
	qp->rnr_until = 0;
	qp->inflight = 0;
	if (qp->mp) {
		qp->mp->tq_head = qp->mp->tq_tail;
		qp->mp->rtx_head = qp->mp->rtx_tail;
	}
}

void
et_qp_flush(struct et_qp *qp)
{
	qp_fail(qp, -1);
}

/* ---- posting ---- */

int
et_qp_post_send(struct et_qp *qp, const struct et_send_wr *wr)
{
	uint32_t npkts;
	struct et_swqe *w;

	if (qp->state == ET_QPS_RESET || wr->opcode > ET_WR_SEND_IMM)
		return -EINVAL;
	/* a SEND's later packets carry no address: they cannot be placed
	 * before the earlier ones arrive */
	if (qp->mp && wr->opcode >= ET_WR_SEND)
		return -EINVAL;
	if (wr->length &&
	    !et_mr_lookup(qp->mrs, wr->lkey, (uint64_t)(uintptr_t)wr->local_addr,
			  wr->length, 0))
		return -EINVAL;
	if (qp->state == ET_QPS_ERR) {
		complete_send(qp, wr, ET_WC_WR_FLUSH_ERR);
		return 0;
	}
	npkts = wr->length ? (wr->length + qp->a.mtu - 1) / qp->a.mtu : 1;
	if (qp->sq_tail - qp->sq_head == qp->a.max_send_wr ||
	    (uint32_t)((qp->sq_next_psn - qp->snd_una) & ET_PSN_MASK) + npkts > MAX_PSN_SPAN)
		return -ENOSPC;
	w = &qp->sq[qp->sq_tail++ & qp->sq_mask];
	w->wr = *wr;
	w->first_psn = qp->sq_next_psn;
	w->npkts = npkts;
	w->stream_off = qp->sq_stream;
	qp->sq_next_psn = et_psn_add(qp->sq_next_psn, npkts);
	qp->sq_stream += wr->length;
	return 0;
}

int
et_qp_post_recv(struct et_qp *qp, const struct et_recv_wr *wr)
{
	if (wr->length && !et_mr_lookup(qp->mrs, wr->lkey, (uint64_t)(uintptr_t)wr->addr,
					wr->length, ET_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (qp->state == ET_QPS_ERR) {
		struct et_wc wc = {.wr_id = wr->wr_id, .qpn = qp->a.qpn,
				   .opcode = ET_WC_RECV, .status = ET_WC_WR_FLUSH_ERR};

		cq_push(qp->recv_cq, &wc);
		return 0;
	}
	if (qp->rq_tail - qp->rq_head == qp->a.max_recv_wr)
		return -ENOSPC;
	qp->rq[qp->rq_tail++ & qp->rq_mask] = *wr;
	return 0;
}

/* ---- requester ---- */

/* Index of the WQE holding psn (sq_tail if psn is the next to be posted),
 * and the stream offset of that PSN's first payload byte. */
static uint32_t
locate(const struct et_qp *qp, uint32_t psn, uint64_t *pos)
{
	uint32_t i;

	for (i = qp->sq_head; i != qp->sq_tail; i++) {
		const struct et_swqe *w = &qp->sq[i & qp->sq_mask];
		int32_t k = et_psn_diff(psn, w->first_psn);

		if (k >= 0 && (uint32_t)k < w->npkts) {
			uint64_t off = (uint64_t)k * qp->a.mtu;

			*pos = w->stream_off + (off < w->wr.length ? off : w->wr.length);
			return i;
		}
	}
	*pos = qp->sq_stream;
	return qp->sq_tail;
}

/* Go back N: the next packet sent is psn. */
static void
rewind_to(struct et_qp *qp, uint32_t psn)
{
	qp->sq_cur = locate(qp, psn, &qp->nxt_pos);
	qp->snd_nxt = psn;
	qp->inflight = qp->nxt_pos - qp->una_pos;
	if (qp->inflight == 0)
		qp->rto_deadline = 0;
}

static void
ask_path(struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	uint16_t id;

	if (qp->path_fn == NULL)
		return;
	id = qp->path_fn(qp->path_ctx, qp, ev, now);
	if (ev != ET_PATH_FIRST && id != qp->path_id)
		qp->st.path_changes++;
	qp->path_id = id;
}

/* A NAK or a timeout: one more try, on a path the load balancer picks.
 * false when the retry budget is spent (the QP has failed). */
static bool
retry(struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	if (qp->retries_left == 0) {
		qp_fail(qp, ET_WC_RETRY_EXC_ERR);
		return false;
	}
	if (qp->a.retry_cnt != RETRY_FOREVER)
		qp->retries_left--;
	ask_path(qp, ev, now);
	return true;
}

/* Cumulative acknowledgement of every PSN up to and including psn. */
static void
ack_through(struct et_qp *qp, uint32_t psn, uint64_t now)
{
	uint32_t una = et_psn_add(psn, 1);
	uint32_t acked = (uint32_t)et_psn_diff(una, qp->snd_una);

	while (qp->sq_head != qp->sq_tail) {
		struct et_swqe *w = &qp->sq[qp->sq_head & qp->sq_mask];
		uint32_t last = et_psn_add(w->first_psn, w->npkts - 1);

		if (et_psn_diff(last, psn) > 0)
			break;
		complete_send(qp, &w->wr, ET_WC_SUCCESS);
		qp->sq_head++;
	}
	qp->snd_una = una;
	locate(qp, una, &qp->una_pos);
	if (et_psn_diff(una, qp->snd_nxt) >= 0) {
		/* a late ACK for packets we were about to send again */
		qp->sq_cur = locate(qp, una, &qp->nxt_pos);
		qp->snd_nxt = una;
	} else if (qp->sq_cur - qp->sq_head > qp->sq_tail - qp->sq_head) {
		qp->sq_cur = qp->sq_head;
	}
	qp->inflight = qp->nxt_pos - qp->una_pos;
	qp->retries_left = qp->a.retry_cnt;
	qp->rnr_retries_left = qp->a.rnr_retry;
	et_dctcp_on_ack(&qp->cc, acked, una, qp->snd_nxt);
	qp->rto_deadline = qp->snd_una == qp->snd_nxt ? 0 : now + qp->a.rto_ns;
}

static void
requester_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	uint8_t syn = pkt->h.aeth_syndrome;
	uint32_t psn = pkt->h.psn;
	int32_t ahead = et_psn_diff(psn, qp->snd_una);

	/* an ACK or NAK may name at most the highest PSN sent */
	if (et_psn_diff(psn, qp->snd_max) >= 0) {
		qp->st.rx_bad_ack++;
		return;
	}
	switch (syn & ET_AETH_KIND_MASK) {
	case ET_AETH_ACK:
		qp->st.acks_rx++;
		if (ahead >= 0)
			ack_through(qp, psn, now);
		return;
	case ET_AETH_RNR_NAK:
		qp->st.rnr_naks_rx++;
		if (ahead < 0)
			return;
		if (ahead > 0)
			ack_through(qp, et_psn_add(psn, ET_PSN_MASK), now);
		if (qp->rnr_retries_left == 0) {
			qp_fail(qp, ET_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->a.rnr_retry != RETRY_FOREVER)
			qp->rnr_retries_left--;
		qp->rnr_until = now + et_rnr_timer_ns(syn & ET_AETH_VALUE_MASK);
		rewind_to(qp, psn);
		return;
	case ET_AETH_NAK:
		break;
	default:
		qp->st.rx_dropped++;
		return;
	}
	if ((syn & ET_AETH_VALUE_MASK) == ET_NAK_PSN_SEQ)
		qp->st.naks_rx++;
	else
		qp->st.err_naks_rx++;
	if (ahead < 0)
		return; /* about PSNs already acknowledged: stale */
	/* a NAK for psn acknowledges everything before it */
	if (ahead > 0)
		ack_through(qp, et_psn_add(psn, ET_PSN_MASK), now);
	switch (syn & ET_AETH_VALUE_MASK) {
	case ET_NAK_PSN_SEQ:
		if (retry(qp, ET_PATH_NAK, now))
			rewind_to(qp, psn);
		return;
	case ET_NAK_INVALID_REQ:
		qp_fail(qp, ET_WC_REM_INV_REQ_ERR);
		return;
	case ET_NAK_REMOTE_ACCESS:
		qp_fail(qp, ET_WC_REM_ACCESS_ERR);
		return;
	default:
		qp_fail(qp, ET_WC_REM_OP_ERR);
		return;
	}
}

static void mp_timer(struct et_qp *qp, uint64_t now);

void
et_qp_timer(struct et_qp *qp, uint64_t now)
{
	if (qp->mp) {
		mp_timer(qp, now);
		return;
	}
	if (qp->state != ET_QPS_RTS || qp->rto_deadline == 0 || now < qp->rto_deadline)
		return;
	qp->st.timeouts++;
	if (!retry(qp, ET_PATH_TIMEOUT, now))
		return;
	rewind_to(qp, qp->snd_una);
	qp->rto_deadline = now + qp->a.rto_ns;
}

static bool
data_ready(const struct et_qp *qp, uint64_t now)
{
	const struct et_swqe *w;
	uint64_t off, len;

	if (qp->state != ET_QPS_RTS || qp->snd_nxt == qp->sq_next_psn ||
	    now < qp->rnr_until)
		return false;
	if (qp->inflight == 0)
		return true;
	w = &qp->sq[qp->sq_cur & qp->sq_mask];
	off = (uint64_t)et_psn_diff(qp->snd_nxt, w->first_psn) * qp->a.mtu;
	len = w->wr.length - off < qp->a.mtu ? w->wr.length - off : qp->a.mtu;
	return qp->inflight + len <= et_dctcp_cwnd(&qp->cc);
}

static void
base_hdr(const struct et_qp *qp, struct et_roce_hdr *h, uint16_t sport)
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

static const uint8_t data_opcode[2][4] = {
	/* [send][first/middle/last/only] */
	{ET_OP_WRITE_FIRST, ET_OP_WRITE_MIDDLE, ET_OP_WRITE_LAST, ET_OP_WRITE_ONLY},
	{ET_OP_SEND_FIRST, ET_OP_SEND_MIDDLE, ET_OP_SEND_LAST, ET_OP_SEND_ONLY},
};

static struct rte_mbuf *
build_data(struct et_qp *qp, uint64_t now)
{
	struct et_swqe *w = &qp->sq[qp->sq_cur & qp->sq_mask];
	const struct et_send_wr *wr = &w->wr;
	uint32_t k = (uint32_t)et_psn_diff(qp->snd_nxt, w->first_psn);
	uint64_t off = (uint64_t)k * qp->a.mtu;
	uint32_t len = (uint32_t)(wr->length - off < qp->a.mtu ? wr->length - off : qp->a.mtu);
	bool send = wr->opcode >= ET_WR_SEND, imm = wr->opcode == ET_WR_RDMA_WRITE_IMM ||
						    wr->opcode == ET_WR_SEND_IMM;
	bool first = k == 0, last = k == w->npkts - 1;
	struct et_roce_hdr h;
	struct rte_mbuf *m;
	int err;

	if (!qp->path_chosen) {
		ask_path(qp, ET_PATH_FIRST, now);
		qp->path_chosen = true;
	}
	base_hdr(qp, &h, qp->path_id);
	h.ecn = ET_ECN_ECT0;
	h.ip_id = qp->ip_id++;
	h.opcode = data_opcode[send][first && last ? 3 : first ? 0 : last ? 2 : 1];
	if (last && imm)
		h.opcode++; /* the *_WITH_IMMEDIATE opcode follows its plain one */
	h.ackreq = last;
	h.psn = qp->snd_nxt;
	if (first && !send) {
		h.reth_va = wr->remote_addr;
		h.reth_rkey = wr->rkey;
		h.reth_dma_len = wr->length;
	}
	h.imm = wr->imm;
	m = et_roce_build_mbuf(qp->pool, &h, (const uint8_t *)wr->local_addr + off, len, &err);
	if (m == NULL) {
		qp->st.alloc_fail++;
		return NULL;
	}
	qp->st.tx_pkts++;
	qp->st.tx_bytes += len;
	if (et_psn_diff(qp->snd_nxt, qp->snd_max) < 0)
		qp->st.retransmits++;
	qp->snd_nxt = et_psn_add(qp->snd_nxt, 1);
	if (et_psn_diff(qp->snd_nxt, qp->snd_max) > 0)
		qp->snd_max = qp->snd_nxt;
	qp->nxt_pos += len;
	qp->inflight += len;
	if (last)
		qp->sq_cur++;
	if (qp->rto_deadline == 0)
		qp->rto_deadline = now + qp->a.rto_ns;
	return m;
}

/* ---- responder ---- */

/* Queue an ACK/NAK.  One slot: a later response covers an earlier one,
 * except that a NAK is not displaced by an ACK that says no more. */
static void
respond(struct et_qp *qp, uint8_t syndrome, uint32_t psn)
{
	if (qp->resp_pending && (qp->resp_syndrome & ET_AETH_KIND_MASK) != ET_AETH_ACK &&
	    (syndrome & ET_AETH_KIND_MASK) == ET_AETH_ACK &&
	    et_psn_diff(psn, qp->resp_psn) < 0)
		return;
	qp->resp_pending = true;
	qp->resp_syndrome = syndrome;
	qp->resp_psn = psn;
}

enum place_result { PLACE_OK, PLACE_RNR, PLACE_INVALID, PLACE_ACCESS, PLACE_LENGTH };

static enum place_result
place(struct et_qp *qp, const struct et_roce_pkt *pkt)
{
	const struct et_roce_hdr *h = &pkt->h;
	uint16_t opf = et_opcode_flags[h->opcode];
	uint32_t len = pkt->payload_len, mtu = qp->a.mtu;
	bool first = opf & ET_OPF_FIRST, last = opf & ET_OPF_LAST;

	/* the opcode must continue the message in progress, or start one */
	if (qp->rx_msg == ET_RX_NONE ? !first
	    : first || !(opf & (qp->rx_msg == ET_RX_SEND ? ET_OPF_SEND : ET_OPF_WRITE)))
		return PLACE_INVALID;
	if (!last ? len != mtu : (!first && len == 0) || len > mtu)
		return PLACE_INVALID;
	/* a SEND, or a WRITE with immediate, consumes a posted receive */
	if (((opf & ET_OPF_SEND) && first) || ((opf & ET_OPF_IMM) && (opf & ET_OPF_WRITE))) {
		if (qp->rq_head == qp->rq_tail)
			return PLACE_RNR;
	}
	if (first && (opf & ET_OPF_SEND)) {
		const struct et_recv_wr *r = &qp->rq[qp->rq_head & qp->rq_mask];

		qp->rx_dst = r->addr;
		qp->rx_left = r->length;
	} else if (first) {
		qp->rx_left = h->reth_dma_len;
		qp->rx_dst = NULL;
		if (h->reth_dma_len &&
		    !(qp->rx_dst = et_mr_lookup(qp->mrs, h->reth_rkey, h->reth_va,
						h->reth_dma_len, ET_ACCESS_REMOTE_WRITE)))
			return PLACE_ACCESS;
	}
	if (first) {
		qp->rx_msg = (opf & ET_OPF_SEND) ? ET_RX_SEND : ET_RX_WRITE;
		qp->rx_len = 0;
	}
	if (len > qp->rx_left)
		return qp->rx_msg == ET_RX_SEND ? PLACE_LENGTH : PLACE_INVALID;
	if (last && qp->rx_msg == ET_RX_WRITE && len != qp->rx_left)
		return PLACE_INVALID; /* shorter than its RETH said */
	if (len) { /* a zero-length WRITE has no buffer: rx_dst is NULL */
		memcpy(qp->rx_dst, pkt->payload, len);
		qp->rx_dst += len;
	}
	qp->rx_left -= len;
	qp->rx_len += len;
	if (last) {
		bool imm = opf & ET_OPF_IMM;

		if (qp->rx_msg == ET_RX_SEND)
			complete_recv(qp, ET_WC_RECV, ET_WC_SUCCESS, qp->rx_len, imm, h->imm);
		else if (imm)
			complete_recv(qp, ET_WC_RECV_RDMA_WITH_IMM, ET_WC_SUCCESS,
				      qp->rx_len, true, h->imm);
		qp->rx_msg = ET_RX_NONE;
		qp->msn = (qp->msn + 1) & 0xffffff;
	}
	return PLACE_OK;
}

/* A request we cannot honour: NAK it and fail the QP (IBTA class C/D). */
static void
responder_fail(struct et_qp *qp, enum et_nak_code code, uint8_t recv_status)
{
	respond(qp, et_aeth_nak(code), qp->epsn);
	if (qp->rx_msg == ET_RX_SEND && qp->rq_head != qp->rq_tail)
		complete_recv(qp, ET_WC_RECV, recv_status, qp->rx_len, false, 0);
	qp->rx_msg = ET_RX_NONE;
	qp_fail(qp, -1);
}

/* ---- multipath mode ----
 *
 * Every packet is a self-contained RDMA WRITE ONLY (the last of a WRITE
 * with immediate: WRITE ONLY with immediate) on a path of its own.  The
 * responder places any packet of [epsn, epsn + window) at once and
 * acknowledges each one selectively (BTH PSN) with its cumulative epsn in
 * the AETH MSN field; completions stay in order, as epsn passes.  The
 * requester keeps a slot per PSN in flight and a timer per packet, and
 * resends only what is lost.
 */

static inline uint32_t
mp_slot(uint32_t psn)
{
	return psn & MP_MASK;
}

static inline bool
bit_get(const uint64_t *b, uint32_t psn)
{
	uint32_t i = mp_slot(psn);

	return (b[i >> 6] >> (i & 63)) & 1;
}

static inline void
bit_put(uint64_t *b, uint32_t psn, bool v)
{
	uint32_t i = mp_slot(psn);
	uint64_t m = UINT64_C(1) << (i & 63);

	b[i >> 6] = v ? b[i >> 6] | m : b[i >> 6] & ~m;
}

static inline struct et_mp_pkt *
mp_pkt(struct et_qp *qp, uint32_t psn)
{
	return &qp->mp->tx[mp_slot(psn)];
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
mp_timer_live(const struct et_qp *qp, const struct et_mp_timer *t)
{
	const struct et_mp_pkt *p = &qp->mp->tx[mp_slot(t->psn)];

	return mp_in_flight(qp, t->psn) && !(p->flags & (ET_MP_ACKED | ET_MP_QUEUED)) &&
	       p->txn == t->txn;
}

static bool
mp_rtx_live(const struct et_qp *qp, uint32_t psn)
{
	const struct et_mp_pkt *p = &qp->mp->tx[mp_slot(psn)];

	return mp_in_flight(qp, psn) && (p->flags & (ET_MP_ACKED | ET_MP_QUEUED)) == ET_MP_QUEUED;
}

/* Drop dead entries from the heads of both queues, so that the timer head
 * is the earliest live deadline and a non-empty retransmit queue has a
 * packet to send (et_qp_deadline and et_qp_tx_ready read only the heads). */
static void
mp_prune(struct et_qp *qp)
{
	struct et_qp_mp *mp = qp->mp;

	while (mp->tq_head != mp->tq_tail && !mp_timer_live(qp, &mp->tq[mp->tq_head & MPQ_MASK]))
		mp->tq_head++;
	while (mp->rtx_head != mp->rtx_tail && !mp_rtx_live(qp, mp->rtx[mp->rtx_head & MPQ_MASK]))
		mp->rtx_head++;
}

static void
mp_timer_push(struct et_qp *qp, uint32_t psn, uint16_t txn, uint64_t deadline)
{
	struct et_qp_mp *mp = qp->mp;

	if (mp->tq_tail - mp->tq_head == ET_QP_MP_QUEUE) {
		/* full of dead entries behind a live head: squeeze them out */
		uint32_t i, j = mp->tq_head;

		for (i = mp->tq_head; i != mp->tq_tail; i++)
			if (mp_timer_live(qp, &mp->tq[i & MPQ_MASK]))
				mp->tq[j++ & MPQ_MASK] = mp->tq[i & MPQ_MASK];
		mp->tq_tail = j;
	}
	mp->tq[mp->tq_tail++ & MPQ_MASK] = (struct et_mp_timer){deadline, psn, txn};
}

/* psn goes to the retransmit queue; its timer entry dies with the flag. */
static void
mp_queue_rtx(struct et_qp *qp, uint32_t psn)
{
	struct et_qp_mp *mp = qp->mp;

	if (mp->rtx_tail - mp->rtx_head == ET_QP_MP_QUEUE) {
		uint32_t i, j = mp->rtx_head;

		for (i = mp->rtx_head; i != mp->rtx_tail; i++)
			if (mp_rtx_live(qp, mp->rtx[i & MPQ_MASK]))
				mp->rtx[j++ & MPQ_MASK] = mp->rtx[i & MPQ_MASK];
		mp->rtx_tail = j;
	}
	mp_pkt(qp, psn)->flags |= ET_MP_QUEUED;
	mp->rtx[mp->rtx_tail++ & MPQ_MASK] = psn;
}

/* A timeout or a sequence NAK for psn: send it again, unless its retry
 * budget is spent (false: the QP has failed). */
static bool
mp_retry(struct et_qp *qp, uint32_t psn)
{
	struct et_mp_pkt *p = mp_pkt(qp, psn);

	if (p->tries >= qp->a.retry_cnt && qp->a.retry_cnt != RETRY_FOREVER) {
		qp_fail(qp, ET_WC_RETRY_EXC_ERR);
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

	return (uint32_t)(w->wr.length - off < qp->a.mtu ? w->wr.length - off : qp->a.mtu);
}

static bool
mp_data_ready(const struct et_qp *qp, uint64_t now)
{
	const struct et_qp_mp *mp = qp->mp;

	if (qp->state != ET_QPS_RTS || now < qp->rnr_until)
		return false;
	/* a packet sent again is already counted in flight */
	if (mp->rtx_head != mp->rtx_tail)
		return true;
	if (qp->snd_nxt == qp->sq_next_psn ||
	    (uint32_t)et_psn_diff(qp->snd_nxt, qp->snd_una) >= ET_QP_MP_WINDOW)
		return false;
	return qp->inflight == 0 || qp->inflight + next_len(qp) <= et_dctcp_cwnd(&qp->cc);
}

/* The next data packet: a retransmission if one is due, else snd_nxt. */
static struct rte_mbuf *
mp_build_data(struct et_qp *qp, uint64_t now)
{
	struct et_qp_mp *mp = qp->mp;
	bool rtx = mp->rtx_head != mp->rtx_tail;
	uint32_t psn = rtx ? mp->rtx[mp->rtx_head & MPQ_MASK] : qp->snd_nxt;
	struct et_mp_pkt *p = mp_pkt(qp, psn);
	uint32_t wi = rtx ? p->wqe : qp->sq_cur;
	const struct et_swqe *w = &qp->sq[wi & qp->sq_mask];
	const struct et_send_wr *wr = &w->wr;
	uint32_t k = (uint32_t)et_psn_diff(psn, w->first_psn);
	uint64_t off = (uint64_t)k * qp->a.mtu;
	uint32_t len = (uint32_t)(wr->length - off < qp->a.mtu ? wr->length - off : qp->a.mtu);
	bool last = k == w->npkts - 1;
	struct et_roce_hdr h;
	struct rte_mbuf *m;
	int err;

	if (qp->path_fn)
		qp->path_id = qp->path_fn(qp->path_ctx, qp, ET_PATH_PACKET, now);
	base_hdr(qp, &h, qp->path_id);
	h.ecn = ET_ECN_ECT0;
	h.ip_id = qp->ip_id++;
	h.opcode = last && wr->opcode == ET_WR_RDMA_WRITE_IMM ? ET_OP_WRITE_ONLY_IMM
							       : ET_OP_WRITE_ONLY;
	/* AckReq on the last packet of every message, as in order: here it
	 * also tells the responder where a message ends */
	h.ackreq = last;
	h.psn = psn;
	h.reth_va = wr->remote_addr + off;
	h.reth_rkey = wr->rkey;
	h.reth_dma_len = len;
	h.imm = wr->imm;
	m = et_roce_build_mbuf(qp->pool, &h, (const uint8_t *)wr->local_addr + off, len, &err);
	if (m == NULL) {
		qp->st.alloc_fail++;
		return NULL;
	}
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

/* psn is acknowledged: it leaves the bytes in flight.  1 if it is news. */
static uint32_t
mp_mark(struct et_qp *qp, uint32_t psn)
{
	struct et_mp_pkt *p = mp_pkt(qp, psn);

	if (p->flags & ET_MP_ACKED)
		return 0;
	p->flags |= ET_MP_ACKED;
	qp->inflight -= p->len;
	return 1;
}

/* Everything below cum is acknowledged, and psn too if sel; snd_una moves
 * over acknowledged packets and requests complete, in order, once all
 * their packets are. */
static void
mp_acked(struct et_qp *qp, uint32_t cum, uint32_t psn, bool sel)
{
	uint32_t una0 = qp->snd_una, n = 0;
	int32_t upto = et_psn_diff(cum, qp->snd_una);

	for (int32_t i = 0; i < upto; i++)
		n += mp_mark(qp, et_psn_add(una0, (uint32_t)i));
	if (sel && mp_in_flight(qp, psn))
		n += mp_mark(qp, psn);
	while (qp->snd_una != qp->snd_nxt && (mp_pkt(qp, qp->snd_una)->flags & ET_MP_ACKED))
		qp->snd_una = et_psn_add(qp->snd_una, 1);
	if (n == 0)
		return;
	while (qp->sq_head != qp->sq_tail) {
		struct et_swqe *w = &qp->sq[qp->sq_head & qp->sq_mask];

		if (et_psn_diff(et_psn_add(w->first_psn, w->npkts), qp->snd_una) > 0)
			break;
		complete_send(qp, &w->wr, ET_WC_SUCCESS);
		qp->sq_head++;
	}
	if (qp->snd_una != una0)
		qp->rnr_retries_left = qp->a.rnr_retry;
	et_dctcp_on_ack(&qp->cc, n, qp->snd_una, qp->snd_nxt);
}

/* An ACK or NAK: BTH PSN names one packet, the MSN field is the
 * responder's cumulative expected PSN. */
static void
mp_requester_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	uint8_t syn = pkt->h.aeth_syndrome;
	uint32_t psn = pkt->h.psn, cum = pkt->h.aeth_msn;
	bool stale = et_psn_diff(psn, qp->snd_una) < 0;
	struct et_mp_pkt *p = mp_pkt(qp, psn);

	if (et_psn_diff(psn, qp->snd_max) >= 0 || et_psn_diff(cum, qp->snd_max) > 0) {
		qp->st.rx_bad_ack++;
		return;
	}
	switch (syn & ET_AETH_KIND_MASK) {
	case ET_AETH_ACK:
		qp->st.acks_rx++;
		mp_acked(qp, cum, psn, true);
		if (qp->ack_fn)
			qp->ack_fn(qp->ack_ctx, qp, et_path_swap(pkt->h.udp_sport),
				   pkt->h.resv8a & 1, now);
		break;
	case ET_AETH_RNR_NAK:
		/* a WRITE with immediate found no receive: pause as in order,
		 * then send that packet again */
		qp->st.rnr_naks_rx++;
		mp_acked(qp, cum, psn, false);
		if (!mp_in_flight(qp, psn) || (p->flags & (ET_MP_ACKED | ET_MP_QUEUED)))
			break;
		if (qp->rnr_retries_left == 0) {
			qp_fail(qp, ET_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->a.rnr_retry != RETRY_FOREVER)
			qp->rnr_retries_left--;
		qp->rnr_until = now + et_rnr_timer_ns(syn & ET_AETH_VALUE_MASK);
		mp_queue_rtx(qp, psn);
		break;
	case ET_AETH_NAK:
		mp_acked(qp, cum, psn, false);
		if ((syn & ET_AETH_VALUE_MASK) == ET_NAK_PSN_SEQ) {
			/* never sent in multipath mode; from a peer that does,
			 * it names one lost packet */
			qp->st.naks_rx++;
			if (mp_in_flight(qp, psn) && !(p->flags & (ET_MP_ACKED | ET_MP_QUEUED)) &&
			    !mp_retry(qp, psn))
				return;
			break;
		}
		qp->st.err_naks_rx++;
		if (stale)
			break;
		switch (syn & ET_AETH_VALUE_MASK) {
		case ET_NAK_INVALID_REQ:
			qp_fail(qp, ET_WC_REM_INV_REQ_ERR);
			return;
		case ET_NAK_REMOTE_ACCESS:
			qp_fail(qp, ET_WC_REM_ACCESS_ERR);
			return;
		default:
			qp_fail(qp, ET_WC_REM_OP_ERR);
			return;
		}
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

	if (qp->state != ET_QPS_RTS)
		return;
	while (mp->tq_head != mp->tq_tail) {
		struct et_mp_timer t = mp->tq[mp->tq_head & MPQ_MASK];

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

/* Responder: a selective ACK owed for psn.  A full queue loses it; a later
 * ACK's cumulative PSN or the requester's timer covers it. */
static void
mp_queue_ack(struct et_qp *qp, uint32_t psn, uint16_t sport, bool ce)
{
	struct et_qp_mp *mp = qp->mp;

	if (mp->ack_tail - mp->ack_head == ET_QP_MP_WINDOW) {
		qp->st.acks_unsent++;
		return;
	}
	mp->acks[mp->ack_tail++ & MP_MASK] = (struct et_mp_ack){psn, sport, ce};
}

/* epsn moves over the packets placed; a message ends at each AckReq, and a
 * WRITE with immediate then consumes its receive, in order. */
static void
mp_advance(struct et_qp *qp)
{
	struct et_qp_mp *mp = qp->mp;

	while (bit_get(mp->got, qp->epsn)) {
		uint32_t i = mp_slot(qp->epsn);

		bit_put(mp->got, qp->epsn, false);
		mp->rx_len += mp->len[i];
		if (bit_get(mp->last, qp->epsn)) {
			if (bit_get(mp->imm, qp->epsn)) {
				complete_recv(qp, ET_WC_RECV_RDMA_WITH_IMM, ET_WC_SUCCESS,
					      mp->rx_len, true, mp->imm_data[i]);
				mp->imm_pending--;
			}
			mp->rx_len = 0;
			qp->msn = (qp->msn + 1) & 0xffffff;
		}
		qp->epsn = et_psn_add(qp->epsn, 1);
	}
}

static void
mp_responder_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint16_t echo)
{
	const struct et_roce_hdr *h = &pkt->h;
	struct et_qp_mp *mp = qp->mp;
	int32_t d = et_psn_diff(h->psn, qp->epsn);
	bool ce = h->ecn == ET_ECN_CE, imm = h->opcode == ET_OP_WRITE_ONLY_IMM;
	uint32_t len = pkt->payload_len, i = mp_slot(h->psn);
	uint8_t *dst = NULL;

	if (h->opcode != ET_OP_WRITE_ONLY && !imm) {
		responder_fail(qp, ET_NAK_INVALID_REQ, ET_WC_REM_INV_REQ_ERR);
		return;
	}
	if (d < 0 || (d < (int32_t)ET_QP_MP_WINDOW && bit_get(mp->got, h->psn))) {
		qp->st.rx_dup++;
		mp_queue_ack(qp, h->psn, echo, ce);
		return;
	}
	if (d >= (int32_t)ET_QP_MP_WINDOW) {
		qp->st.rx_beyond_window++;
		return;
	}
	if (len > qp->a.mtu || len != h->reth_dma_len) {
		responder_fail(qp, ET_NAK_INVALID_REQ, ET_WC_REM_INV_REQ_ERR);
		return;
	}
	/* receives are consumed in order: those posted must cover every
	 * WRITE with immediate placed and not completed, and this one */
	if (imm && qp->rq_tail - qp->rq_head <= mp->imm_pending) {
		respond(qp, et_aeth_rnr_nak(qp->a.min_rnr_timer), h->psn);
		return;
	}
	if (len && !(dst = et_mr_lookup(qp->mrs, h->reth_rkey, h->reth_va, len,
					ET_ACCESS_REMOTE_WRITE))) {
		responder_fail(qp, ET_NAK_REMOTE_ACCESS, ET_WC_REM_ACCESS_ERR);
		return;
	}
	if (len)
		memcpy(dst, pkt->payload, len);
	bit_put(mp->got, h->psn, true);
	bit_put(mp->last, h->psn, h->ackreq);
	bit_put(mp->imm, h->psn, imm);
	mp->len[i] = (uint16_t)len;
	mp->imm_data[i] = h->imm;
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
	const struct et_mp_ack *a = &mp->acks[mp->ack_head & MP_MASK];
	struct et_roce_hdr h;
	struct rte_mbuf *m;
	int err;

	base_hdr(qp, &h, a->sport);
	h.ip_id = qp->ip_id++;
	h.opcode = ET_OP_ACK;
	h.psn = a->psn;
	h.resv8a = a->ce;
	h.aeth_syndrome = et_aeth_ack(ET_AETH_CREDITS_UNLIMITED);
	h.aeth_msn = qp->epsn;
	m = et_roce_build_mbuf(qp->pool, &h, NULL, 0, &err);
	if (m == NULL) {
		qp->st.alloc_fail++;
		return NULL;
	}
	mp->ack_head++;
	qp->st.acks_tx++;
	return m;
}

static void
responder_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	const struct et_roce_hdr *h = &pkt->h;
	int32_t d = et_psn_diff(h->psn, qp->epsn);
	uint16_t echo = et_path_echo(h->udp_sport);

	if (h->ecn == ET_ECN_CE) {
		qp->st.rx_ce++;
		if (!qp->cnp_ever || qp->a.cnp_interval_ns == 0 ||
		    now - qp->last_cnp_ns >= qp->a.cnp_interval_ns) {
			qp->cnp_pending++;
			qp->cnp_sport = echo;
			qp->last_cnp_ns = now;
			qp->cnp_ever = true;
		}
	}
	qp->resp_sport = echo;
	if (qp->mp) {
		mp_responder_rx(qp, pkt, echo);
		return;
	}
	if (d < 0) {
		qp->st.rx_dup++;
		respond(qp, et_aeth_ack(ET_AETH_CREDITS_UNLIMITED),
			et_psn_add(qp->epsn, ET_PSN_MASK));
		return;
	}
	if (d > 0) {
		qp->st.rx_out_of_order++;
		if (!qp->nak_sent) {
			qp->nak_sent = true;
			respond(qp, et_aeth_nak(ET_NAK_PSN_SEQ), qp->epsn);
		}
		return;
	}
	switch (place(qp, pkt)) {
	case PLACE_OK:
		break;
	case PLACE_RNR:
		respond(qp, et_aeth_rnr_nak(qp->a.min_rnr_timer), qp->epsn);
		return;
	case PLACE_ACCESS:
		responder_fail(qp, ET_NAK_REMOTE_ACCESS, ET_WC_REM_ACCESS_ERR);
		return;
	case PLACE_LENGTH:
		responder_fail(qp, ET_NAK_INVALID_REQ, ET_WC_LOC_LEN_ERR);
		return;
	default:
		responder_fail(qp, ET_NAK_INVALID_REQ, ET_WC_REM_INV_REQ_ERR);
		return;
	}
	qp->nak_sent = false;
	qp->st.rx_pkts++;
	qp->st.rx_bytes += pkt->payload_len;
	qp->epsn = et_psn_add(qp->epsn, 1);
	if (h->ackreq || ++qp->unacked >= qp->a.ack_every) {
		qp->unacked = 0;
		respond(qp, et_aeth_ack(ET_AETH_CREDITS_UNLIMITED), h->psn);
	}
}

void
et_qp_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	uint8_t op = pkt->h.opcode;

	if (op == ET_OP_CNP) {
		qp->st.cnps_rx++;
		et_dctcp_on_cnp(&qp->cc);
		return;
	}
	if (qp->state != ET_QPS_RTS || !et_opcode_valid(op)) {
		qp->st.rx_dropped++;
		return;
	}
	if (op != ET_OP_ACK)
		responder_rx(qp, pkt, now);
	else if (qp->mp)
		mp_requester_rx(qp, pkt, now);
	else
		requester_rx(qp, pkt, now);
}

/* ---- transmit ---- */

static struct rte_mbuf *
build_response(struct et_qp *qp)
{
	uint8_t kind = qp->resp_syndrome & ET_AETH_KIND_MASK;
	struct et_roce_hdr h;
	struct rte_mbuf *m;
	int err;

	base_hdr(qp, &h, qp->resp_sport);
	h.ip_id = qp->ip_id++;
	h.opcode = ET_OP_ACK;
	h.psn = qp->resp_psn;
	h.aeth_syndrome = qp->resp_syndrome;
	/* multipath: the MSN field carries the cumulative expected PSN */
	h.aeth_msn = qp->mp ? qp->epsn : qp->msn;
	m = et_roce_build_mbuf(qp->pool, &h, NULL, 0, &err);
	if (m == NULL) {
		qp->st.alloc_fail++;
		return NULL;
	}
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
	int err;

	base_hdr(qp, &h, qp->cnp_sport);
	h.ip_id = qp->ip_id++;
	et_roce_cnp_hdr(&h, qp->a.dest_qpn);
	m = et_roce_build_mbuf(qp->pool, &h, NULL, 0, &err);
	if (m == NULL) {
		qp->st.alloc_fail++;
		return NULL;
	}
	qp->cnp_pending--;
	qp->st.cnps_tx++;
	return m;
}

bool
et_qp_tx_ready(const struct et_qp *qp, uint64_t now)
{
	if (qp->state == ET_QPS_RESET)
		return false;
	if (qp->mp)
		return qp->resp_pending || qp->cnp_pending ||
		       qp->mp->ack_head != qp->mp->ack_tail || mp_data_ready(qp, now);
	return qp->resp_pending || qp->cnp_pending || data_ready(qp, now);
}

uint16_t
et_qp_tx(struct et_qp *qp, uint64_t now, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = 0;

	if (qp->state == ET_QPS_RESET)
		return 0;
	/* CNPs before the ACK that follows them: the sender counts the mark
	 * in the window the ACK closes */
	while (k < n && qp->cnp_pending && (pkts[k] = build_cnp(qp)))
		k++;
	if (k < n && qp->resp_pending && (pkts[k] = build_response(qp)))
		k++;
	if (qp->mp) {
		while (k < n && qp->mp->ack_head != qp->mp->ack_tail &&
		       (pkts[k] = mp_build_ack(qp)))
			k++;
		while (k < n && mp_data_ready(qp, now) && (pkts[k] = mp_build_data(qp, now)))
			k++;
	} else {
		while (k < n && data_ready(qp, now) && (pkts[k] = build_data(qp, now)))
			k++;
	}
	if (qp->rnr_until && now >= qp->rnr_until)
		qp->rnr_until = 0;
	return k;
}

uint64_t
et_qp_deadline(const struct et_qp *qp)
{
	uint64_t d = UINT64_MAX;

	if (qp->state != ET_QPS_RTS)
		return d;
	if (qp->mp) {
		const struct et_qp_mp *mp = qp->mp;

		/* mp_prune keeps the head live: the earliest packet timer */
		if (mp->tq_head != mp->tq_tail)
			d = mp->tq[mp->tq_head & MPQ_MASK].deadline;
		if (qp->rnr_until && qp->rnr_until < d &&
		    (mp->rtx_head != mp->rtx_tail || qp->snd_nxt != qp->sq_next_psn))
			d = qp->rnr_until;
		return d;
	}
	if (qp->rto_deadline)
		d = qp->rto_deadline;
	if (qp->rnr_until && qp->snd_nxt != qp->sq_next_psn && qp->rnr_until < d)
		d = qp->rnr_until;
	return d;
}
