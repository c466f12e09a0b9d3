/* SPDX-License-Identifier: BSD-3-Clause
 * Queue pairs: RC and UD over lib/transport's QP (UD: its datagram mode).
 *
 * The transport's QP knows RESET, RTS and ERR; verbs' INIT is kept here.
 * At RTR what INIT and RTR say (the peer's GID and QPN, the PSN it sends
 * from, the path MTU, the responder's read depth) goes into the
 * transport's QP, which is made ready to receive (et_qp_modify, then
 * et_qp_ready); at RTS its sending side (first PSN, timeout, retries,
 * initiator depth), allowed while it has sent nothing; verbs refuses a
 * post_send before RTS.  A QP's path is the conf's policy's (Ethereal's
 * planner, ECMP, MP-RDMA, spraying, REPS), its hooks attached at RTS, as
 * the provider's QPs; DCTCP on every QP as [transport] says.  Back to
 * RESET (from any state), the transport's QP is made anew with its QPN.
 *
 * Sends the consumer did not ask a completion for (unsignaled) complete
 * silently unless in error: each send's record (its wr_id, whether it is
 * signaled) is kept in posting order, and completions come in that order
 * on an RC QP.  An inline send's bytes are copied into a slot of the QP's
 * own, one a send queue entry, at the post.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "et_vb.h"
#include "host/et_rdmacm.h"

struct et_vb_qp *
et_vb_qp_of(struct et_vb_ctx *ctx, uint32_t qpn)
{
	if (qpn < ET_VB_QPN_BASE || qpn - ET_VB_QPN_BASE >= ET_VB_MAX_QP)
		return NULL;
	return ctx->qps[qpn - ET_VB_QPN_BASE];
}

struct et_vb_swr
et_vb_swr_take(struct et_vb_qp *q)
{
	struct et_vb_swr s = {0, true};

	if (q->swr_head != q->swr_tail) {
		s = q->swr[q->swr_head++ & (q->cap.max_send_wr - 1)];
		q->n_send--;
	}
	return s;
}

/* The transport's QP of q: its attributes the conf's, its queues q's. */
static struct et_qp *
transport_qp(struct et_vb_qp *q, uint32_t qpn)
{
	struct et_qp_attr a = et_process.c.rc.qp;
	struct et_qp *eq;

	memset(&a.dest_mac, 0xff, sizeof(a.dest_mac)); /* the ToR routes by IP: any MAC */
	a.qpn = qpn;
	a.dest_qpn = 0;
	a.dest_ip = 0;
	a.sq_psn = a.rq_psn = 0;
	a.max_send_wr = q->cap.max_send_wr;
	a.max_recv_wr = q->cap.max_recv_wr;
	a.max_send_sge = (uint8_t)q->cap.max_send_sge;
	a.max_recv_sge = (uint8_t)q->cap.max_recv_sge;
	a.datagram = q->ud;
	/* a datagram's path is its address handle's; a QP on an SRQ runs in
	 * order (srq.c) */
	a.multipath = !q->ud && !q->srq && et_lb_per_packet(&et_process.c.rc.lb);
	eq = et_nic_qp_create(&et_process.nic, &a, &q->pd->mrs, &q->scq->ecq, &q->rcq->ecq);
	if (eq && q->srq && et_qp_set_srq(eq, &q->srq->rq)) {
		et_nic_qp_destroy(&et_process.nic, eq);
		eq = NULL;
	}
	return eq;
}

struct ibv_qp *
et_vb_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *ax)
{
	struct et_vb_ctx *ctx = et_vb_ctx(c);
	struct et_vb_qp *q;
	const uint32_t known = IBV_QP_INIT_ATTR_PD;

	if ((ax->comp_mask & ~known) || !(ax->comp_mask & IBV_QP_INIT_ATTR_PD) || !ax->pd ||
	    !ax->send_cq || !ax->recv_cq) {
		errno = EINVAL;
		return NULL;
	}
	if (ax->qp_type != IBV_QPT_RC && ax->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP; /* UC, XRC, raw packet (docs/verbs.md) */
		return NULL;
	}
	if (ax->cap.max_send_wr > ET_VB_MAX_QP_WR || ax->cap.max_recv_wr > ET_VB_MAX_QP_WR ||
	    ax->cap.max_send_sge > ET_VB_MAX_SEND_SGE || ax->cap.max_recv_sge > ET_VB_MAX_RECV_SGE ||
	    ax->cap.max_inline_data > ET_VB_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	if ((q = calloc(1, sizeof(*q))) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	q->ctx = ctx;
	q->pd = (struct et_vb_pd *)ax->pd;
	q->scq = (struct et_vb_cq *)ax->send_cq;
	q->rcq = (struct et_vb_cq *)ax->recv_cq;
	q->sq_sig_all = ax->sq_sig_all;
	q->ud = ax->qp_type == IBV_QPT_UD;
	q->srq = (struct et_vb_srq *)ax->srq;
	q->peer_host = UINT32_MAX;
	q->cap.max_send_wr = et_vb_pow2_at_least(ax->cap.max_send_wr);
	q->cap.max_recv_wr = et_vb_pow2_at_least(ax->cap.max_recv_wr);
	q->cap.max_send_sge = RTE_MAX(ax->cap.max_send_sge, 1u);
	q->cap.max_recv_sge = RTE_MAX(ax->cap.max_recv_sge, 1u);
	q->cap.max_inline_data = ET_VB_MAX_INLINE;
	q->swr = calloc(q->cap.max_send_wr, sizeof(*q->swr));
	q->inline_buf = malloc((size_t)q->cap.max_send_wr * ET_VB_MAX_INLINE);
	if (!q->swr || !q->inline_buf) {
		free(q->swr);
		free(q->inline_buf);
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	et_process_lock();
	q->eq = transport_qp(q, 0);
	if (q->eq) {
		ctx->qps[et_qp_qpn(q->eq) - ET_VB_QPN_BASE] = q;
		q->scq->users++;
		q->rcq->users++;
		if (q->srq)
			q->srq->users++;
		et_process_qp_made();
	}
	et_process_unlock();
	if (q->eq == NULL) {
		free(q->swr);
		free(q->inline_buf);
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	ax->cap = q->cap;
	struct ibv_qp *qp = &q->qpx.qp_base;

	qp->context = c;
	qp->qp_context = ax->qp_context;
	qp->pd = ax->pd;
	qp->send_cq = ax->send_cq;
	qp->recv_cq = ax->recv_cq;
	qp->srq = ax->srq;
	qp->qp_num = et_qp_qpn(q->eq);
	qp->handle = qp->qp_num;
	qp->state = IBV_QPS_RESET;
	qp->qp_type = ax->qp_type;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	q->attr.qp_state = IBV_QPS_RESET;
	q->attr.cap = q->cap;
	return qp;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp *qp;

	memset(&ax, 0, sizeof(ax));
	ax.qp_context = a->qp_context;
	ax.send_cq = a->send_cq;
	ax.recv_cq = a->recv_cq;
	ax.srq = a->srq;
	ax.cap = a->cap;
	ax.qp_type = a->qp_type;
	ax.sq_sig_all = a->sq_sig_all;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	ax.pd = pd;
	qp = et_vb_create_qp_ex(pd->context, &ax);
	if (qp)
		a->cap = ax.cap;
	return qp;
}

/* The policy's hooks off q's transport QP, if on. */
static void
lb_detach(struct et_vb_qp *q)
{
	if (q->lb_attached)
		et_lb_detach(&et_process.lb, q->lb_state);
	q->lb_attached = false;
}

int
ibv_destroy_qp(struct ibv_qp *qp)
{
	struct et_vb_qp *q = (struct et_vb_qp *)qp;

	et_process_lock();
	q->ctx->qps[qp->qp_num - ET_VB_QPN_BASE] = NULL;
	et_rdmacm_forget_qp(et_process.rdmacm, q->eq);
	lb_detach(q);
	et_process_qp_gone(q->eq);
	et_nic_qp_destroy(&et_process.nic, q->eq);
	q->scq->users--;
	q->rcq->users--;
	if (q->srq)
		q->srq->users--;
	et_process_unlock();
	pthread_mutex_destroy(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	free(q->swr);
	free(q->inline_buf);
	free(q);
	return 0;
}

/* ---- modify: IBTA's state machine ---- */

/* What each transition must say and may say (IBTA 11.2.4.2). */
struct transition {
	enum ibv_qp_state from, to;
	int need, may;
};

static const struct transition ud_moves[] = {
	{IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0},
	{IBV_QPS_INIT, IBV_QPS_INIT, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY},
	{IBV_QPS_INIT, IBV_QPS_RTR, 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY},
	{IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY},
	{IBV_QPS_RTS, IBV_QPS_RTS, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY},
};

static const struct transition rc_moves[] = {
	{IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0},
	{IBV_QPS_INIT, IBV_QPS_INIT, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
	{IBV_QPS_INIT, IBV_QPS_RTR,
	 IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	 IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
	{IBV_QPS_RTR, IBV_QPS_RTS,
	 IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		 IBV_QP_MAX_QP_RD_ATOMIC,
	 IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
		 IBV_QP_PATH_MIG_STATE},
	{IBV_QPS_RTS, IBV_QPS_RTS, 0,
	 IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
		 IBV_QP_MIN_RNR_TIMER},
};

bool
et_vb_gid_ipv4(const union ibv_gid *g, uint32_t *ip)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (memcmp(g->raw, prefix, sizeof(prefix)))
		return false;
	*ip = (uint32_t)g->raw[12] << 24 | (uint32_t)g->raw[13] << 16 | (uint32_t)g->raw[14] << 8 |
	      g->raw[15];
	return true;
}

static uint32_t
mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

/* IBTA's local ACK timeout, 4.096 us << t; 0: forever, which the
 * transport does not have: the conf's RTO then. */
static uint64_t
timeout_ns(uint8_t t)
{
	return t == 0 || t > 31 ? et_process.c.rc.qp.rto_ns : 4096ull << t;
}

/* What INIT, RTR and (at RTS) RTS said, as the transport's attributes. */
static int
transport_attr(struct et_vb_qp *q, struct et_qp_attr *a)
{
	const struct ibv_qp_attr *v = &q->attr;
	uint32_t mtu = mtu_bytes(v->path_mtu);

	*a = *et_qp_attr_of(q->eq);
	a->dest_ip = q->dest_ip;
	a->dest_qpn = v->dest_qp_num;
	a->rq_psn = v->rq_psn & ET_PSN_MASK;
	a->sq_psn = v->sq_psn & ET_PSN_MASK;
	a->mtu = mtu < et_process.c.rc.qp.mtu ? mtu : et_process.c.rc.qp.mtu;
	a->retry_cnt = v->retry_cnt;
	a->rnr_retry = v->rnr_retry;
	a->min_rnr_timer = v->min_rnr_timer;
	a->rto_ns = timeout_ns(v->timeout);
	a->max_rd_atomic = v->max_rd_atomic;
	a->max_dest_rd_atomic = v->max_dest_rd_atomic;
	a->dscp = v->ah_attr.grh.traffic_class >> 2;
	/* the fabric's switches route (and decrement TTL): a hop limit of 1,
	 * which ibv_*_pingpong give for a single L2 segment, would not cross
	 * a leaf; the conf's TTL unless the program asks for more */
	if (v->ah_attr.grh.hop_limit > a->ttl)
		a->ttl = v->ah_attr.grh.hop_limit;
	return 0;
}

/* UD's RTR (ready: to receive) and RTS (its first PSN): the Q_Key as
 * INIT or later said it; no peer, no policy: each address handle has
 * its path. */
static int
ud_apply(struct et_vb_qp *q, bool rtr)
{
	struct et_qp_attr a = *et_qp_attr_of(q->eq);

	a.qkey = q->attr.qkey;
	if (!rtr)
		a.sq_psn = q->attr.sq_psn & ET_PSN_MASK;
	if (et_qp_modify(q->eq, &a) || (rtr && et_qp_ready(q->eq)))
		return EINVAL;
	return 0;
}

/* RTR: the transport's QP takes the peer and is ready to receive (a QP
 * that only receives, as perftest's bandwidth servers, stays there); its
 * path the policy's, the policy's hooks on it. */
static int
apply_rtr(struct et_vb_qp *q)
{
	struct et_qp_attr a;

	if (q->ud)
		return ud_apply(q, true);
	transport_attr(q, &a);
	q->peer_host = et_process_host_of_ip(q->dest_ip);
	a.path_id = et_process_first_path(q->peer_host, !a.multipath);
	et_process_mac_of(q->dest_ip, &a.dest_mac);
	if (et_qp_modify(q->eq, &a) || et_qp_ready(q->eq))
		return EINVAL;
	if (q->peer_host != UINT32_MAX &&
	    et_lb_attach(&et_process.lb, q->eq, q->peer_host, &q->lb_state) == 0)
		q->lb_attached = true;
	return 0;
}

/* RTS: its sending side (first PSN, retries, timeout, initiator depth). */
static int
apply_rts(struct et_vb_qp *q)
{
	struct et_qp_attr a;

	if (q->ud)
		return ud_apply(q, false);
	transport_attr(q, &a);
	a.path_id = et_qp_attr_of(q->eq)->path_id;
	return et_qp_modify(q->eq, &a) ? EINVAL : 0;
}

/* Back to RESET: the transport's QP made anew, with its QPN (what was
 * posted is gone, as IBTA's RESET wants). */
static int
reset(struct et_vb_qp *q)
{
	uint32_t qpn = q->qpx.qp_base.qp_num;
	struct et_qp *eq;

	lb_detach(q);
	et_process_qp_gone(q->eq);
	et_nic_qp_destroy(&et_process.nic, q->eq);
	eq = transport_qp(q, qpn);
	q->eq = eq;
	q->swr_head = q->swr_tail = 0;
	q->n_send = q->n_recv = 0;
	memset(&q->attr, 0, sizeof(q->attr));
	q->attr.cap = q->cap;
	if (eq == NULL) {
		q->ctx->qps[qpn - ET_VB_QPN_BASE] = NULL;
		return ENOMEM;
	}
	return 0;
}

static void
record(struct et_vb_qp *q, const struct ibv_qp_attr *a, int mask)
{
	struct ibv_qp_attr *r = &q->attr;

	if (mask & IBV_QP_PKEY_INDEX)
		r->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		r->port_num = a->port_num;
	if (mask & IBV_QP_ACCESS_FLAGS)
		r->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_AV)
		r->ah_attr = a->ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		r->path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		r->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		r->rq_psn = a->rq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		r->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		r->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN)
		r->sq_psn = a->sq_psn;
	if (mask & IBV_QP_TIMEOUT)
		r->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		r->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		r->rnr_retry = a->rnr_retry;
	/* an initiator depth beyond ours is ours: fewer READs out at once
	 * than asked is always safe, and perftest asks for its peer's
	 * responder resources (rxe's 128) */
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		r->max_rd_atomic = RTE_MIN(a->max_rd_atomic, (uint8_t)ET_VB_MAX_RD_ATOMIC);
	if (mask & IBV_QP_QKEY)
		r->qkey = a->qkey;
}

/* 0, or an errno for what the transition or its values break. */
static int
check(struct et_vb_qp *q, const struct ibv_qp_attr *a, int mask, enum ibv_qp_state to)
{
	enum ibv_qp_state from = q->attr.qp_state;
	const struct transition *moves = q->ud ? ud_moves : rc_moves, *t = NULL;
	size_t n = q->ud ? sizeof(ud_moves) / sizeof(ud_moves[0])
			 : sizeof(rc_moves) / sizeof(rc_moves[0]);

	for (size_t i = 0; i < n; i++)
		if (moves[i].from == from && moves[i].to == to)
			t = &moves[i];
	if (t == NULL)
		return EINVAL;
	if ((mask & t->need) != t->need || (mask & ~(t->need | t->may | IBV_QP_STATE)))
		return EINVAL;
	if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != from)
		return EINVAL;
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) && mtu_bytes(a->path_mtu) == 0)
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > ET_VB_MAX_RD_ATOMIC)
		return EINVAL;
	if ((mask & (IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY)) && (a->retry_cnt > 7 || a->rnr_retry > 7))
		return EINVAL;
	if (mask & IBV_QP_AV) {
		/* RoCE v2 to an IPv4 address: a global route whose GID maps one,
		 * from one of our two GIDs */
		if (!a->ah_attr.is_global || a->ah_attr.grh.sgid_index >= ET_VB_GIDS ||
		    !et_vb_gid_ipv4(&a->ah_attr.grh.dgid, &q->dest_ip)) {
			fprintf(stderr, "ethereal-verbs: QP %u: the peer's GID must be an IPv4-mapped "
				"RoCE v2 one (::ffff:a.b.c.d; GID index 1, as rxe's)\n",
				q->qpx.qp_base.qp_num);
			return EINVAL;
		}
	}
	return 0;
}

int
et_vb_modify_qp_locked(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct et_vb_qp *q = (struct et_vb_qp *)qp;
	enum ibv_qp_state to = mask & IBV_QP_STATE ? a->qp_state : q->attr.qp_state;
	int r = 0;

	if (to == IBV_QPS_RESET) {
		r = reset(q);
	} else if (to == IBV_QPS_ERR) {
		lb_detach(q);
		et_qp_flush(q->eq);
	} else if ((r = check(q, a, mask, to)) == 0) {
		record(q, a, mask);
		if (to == IBV_QPS_RTR && q->attr.qp_state == IBV_QPS_INIT)
			r = apply_rtr(q);
		else if (to == IBV_QPS_RTS && q->attr.qp_state == IBV_QPS_RTR)
			r = apply_rts(q);
		else if (q->ud && (mask & IBV_QP_QKEY) && q->attr.qp_state != IBV_QPS_INIT)
			r = ud_apply(q, false);
	}
	if (r == 0) {
		q->attr.qp_state = to;
		qp->state = to;
	}
	return r;
}

int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	int r;

	et_process_lock();
	r = et_vb_modify_qp_locked(qp, a, mask);
	et_process_unlock();
	return r;
}

int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *init)
{
	struct et_vb_qp *q = (struct et_vb_qp *)qp;

	(void)mask; /* every attribute, whatever was asked */
	et_process_lock();
	*a = q->attr;
	a->cur_qp_state = q->attr.qp_state;
	a->cap = q->cap;
	et_process_unlock();
	memset(init, 0, sizeof(*init));
	init->qp_context = qp->qp_context;
	init->send_cq = qp->send_cq;
	init->recv_cq = qp->recv_cq;
	init->cap = q->cap;
	init->srq = qp->srq;
	init->qp_type = qp->qp_type;
	init->sq_sig_all = q->sq_sig_all;
	return 0;
}

struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	(void)qp;
	return NULL; /* no extended post API: ibv_wr_* (docs/verbs.md) */
}

/* ---- posting ---- */

static int
opcode_of(enum ibv_wr_opcode op, uint8_t *out)
{
	switch (op) {
	case IBV_WR_SEND:
		*out = ET_WR_SEND;
		return 0;
	case IBV_WR_SEND_WITH_IMM:
		*out = ET_WR_SEND_IMM;
		return 0;
	case IBV_WR_RDMA_WRITE:
		*out = ET_WR_RDMA_WRITE;
		return 0;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		*out = ET_WR_RDMA_WRITE_IMM;
		return 0;
	case IBV_WR_RDMA_READ:
		*out = ET_WR_RDMA_READ;
		return 0;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		*out = ET_WR_ATOMIC_CMP_SWP;
		return 0;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		*out = ET_WR_ATOMIC_FETCH_ADD;
		return 0;
	default:
		return EINVAL;
	}
}

/* A UD send's destination: its address handle's, the QP and Q_Key it
 * names (a Q_Key with its high bit set means the QP's own: IBTA 10.2.5). */
static int
ud_dest(const struct et_vb_qp *q, const struct ibv_send_wr *w, struct et_send_wr *e)
{
	const struct et_vb_ah *ah = (const struct et_vb_ah *)w->wr.ud.ah;

	if (ah == NULL || (e->opcode != ET_WR_SEND && e->opcode != ET_WR_SEND_IMM))
		return EINVAL;
	e->ud = ah->dest;
	e->ud.qpn = w->wr.ud.remote_qpn & ET_QPN_MASK;
	e->ud.qkey = (w->wr.ud.remote_qkey & 0x80000000u) ? q->attr.qkey : w->wr.ud.remote_qkey;
	return 0;
}

static int
post_one(struct et_vb_qp *q, const struct ibv_send_wr *w)
{
	uint32_t slot = q->swr_tail & (q->cap.max_send_wr - 1);
	struct et_send_wr e = {.wr_id = q->swr_tail};
	struct et_sge sgl[ET_VB_MAX_SEND_SGE];
	int r;

	if ((r = opcode_of(w->opcode, &e.opcode)) != 0)
		return r;
	if (w->num_sge < 0 ||
	    (w->num_sge > (int)q->cap.max_send_sge && !(w->send_flags & IBV_SEND_INLINE)))
		return EINVAL;
	if (q->ud && (r = ud_dest(q, w, &e)) != 0)
		return r;
	if (q->n_send == q->cap.max_send_wr)
		return ENOMEM;
	if (w->send_flags & IBV_SEND_INLINE) {
		uint8_t *buf = q->inline_buf + (size_t)slot * ET_VB_MAX_INLINE;
		uint32_t n = 0;

		if (e.opcode != ET_WR_SEND && e.opcode != ET_WR_SEND_IMM &&
		    e.opcode != ET_WR_RDMA_WRITE && e.opcode != ET_WR_RDMA_WRITE_IMM)
			return EINVAL;
		for (int i = 0; i < w->num_sge; i++) {
			uint32_t len = w->sg_list[i].length;

			if (len > ET_VB_MAX_INLINE - n) /* n + len could wrap */
				return EINVAL;
			if (len) /* an empty buffer's address may be NULL (UCX's) */
				memcpy(buf + n, (void *)(uintptr_t)w->sg_list[i].addr, len);
			n += len;
		}
		e.local_addr = buf;
		e.length = n;
		e.lkey = q->pd->local_key;
	} else {
		/* the transport copies the list at its post */
		for (int i = 0; i < w->num_sge; i++)
			sgl[i] = (struct et_sge){(void *)(uintptr_t)w->sg_list[i].addr,
						 w->sg_list[i].length, w->sg_list[i].lkey};
		e.sgl = sgl;
		e.num_sge = (uint32_t)w->num_sge;
	}
	switch (q->ud ? IBV_WR_SEND : w->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		e.remote_addr = w->wr.rdma.remote_addr;
		e.rkey = w->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		e.remote_addr = w->wr.atomic.remote_addr;
		e.rkey = w->wr.atomic.rkey;
		e.compare_add = w->wr.atomic.compare_add;
		e.swap = w->wr.atomic.swap;
		break;
	default:
		break;
	}
	if (w->opcode == IBV_WR_SEND_WITH_IMM || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		e.imm = ntohl(w->imm_data);
	r = et_nic_post_send(&et_process.nic, q->eq, &e);
	if (r)
		return r == -ENOSPC ? ENOMEM : EINVAL;
	q->swr[slot] = (struct et_vb_swr){w->wr_id, q->sq_sig_all || (w->send_flags & IBV_SEND_SIGNALED)};
	q->swr_tail++;
	q->n_send++;
	return 0;
}

int
et_vb_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct et_vb_qp *q = (struct et_vb_qp *)qp;
	int r = 0;

	et_process_lock();
	if (q->attr.qp_state != IBV_QPS_RTS && q->attr.qp_state != IBV_QPS_ERR) {
		r = EINVAL;
		*bad = wr;
	}
	for (; r == 0 && wr; wr = wr->next)
		if ((r = post_one(q, wr)) != 0)
			*bad = wr;
	et_process_unlock();
	return r;
}

int
et_vb_recv_wr(const struct ibv_recv_wr *w, struct et_recv_wr *e, struct et_sge *sgl)
{
	*e = (struct et_recv_wr){.wr_id = w->wr_id};
	if (w->num_sge < 0 || w->num_sge > (int)ET_VB_MAX_RECV_SGE)
		return EINVAL; /* within it, more than the queue takes: the transport's */
	/* the transport copies the list at its post */
	for (int i = 0; i < w->num_sge; i++)
		sgl[i] = (struct et_sge){(void *)(uintptr_t)w->sg_list[i].addr, w->sg_list[i].length,
					 w->sg_list[i].lkey};
	e->sgl = sgl;
	e->num_sge = (uint32_t)w->num_sge;
	return 0;
}

int
et_vb_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct et_vb_qp *q = (struct et_vb_qp *)qp;
	int r = 0;

	et_process_lock();
	if (q->attr.qp_state == IBV_QPS_RESET || q->srq)
		r = EINVAL; /* a QP on an SRQ takes its receives there */
	for (; r == 0 && wr; wr = wr->next) {
		struct et_sge sgl[ET_VB_MAX_RECV_SGE];
		struct et_recv_wr e;

		if ((r = et_vb_recv_wr(wr, &e, sgl)) != 0)
			break;
		r = et_qp_post_recv(q->eq, &e);
		if (r) {
			r = r == -ENOSPC ? ENOMEM : EINVAL;
			break;
		}
		q->n_recv++;
	}
	if (r)
		*bad = wr;
	et_process_unlock();
	return r;
}
