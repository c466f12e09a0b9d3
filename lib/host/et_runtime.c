/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/et_rand.h"
#include "host/et_runtime.h"

#define NO_SUB UINT32_MAX

/* Work request IDs beyond a subflow's number (data = read): a sender's
 * receive of the far end's "done", and the far end's own READ (the receive
 * it fills in the low bits) and "done". */
#define WR_DONE_RECV (1ull << 63)
#define WR_FAR_READ (1ull << 62)
#define WR_FAR_DONE (1ull << 61)
/* the far end's word: it timed out reading */
#define FAR_TIMED_OUT 1u

/* The fabric host of a schedule rank: the same number, unless the schedule
 * runs over a group of hosts. */
static inline uint32_t
host_of(const struct et_rt_host *h, uint32_t rank)
{
	return h->members ? h->members[rank] : rank;
}

static uint32_t
failed(struct et_rt_host *h, enum et_rt_error why, uint32_t peer, uint32_t qpn)
{
	if (h->fail.why == ET_RT_OK) {
		h->fail.why = why;
		h->fail.peer = peer;
		h->fail.qpn = qpn;
		h->fail.step = h->step;
	}
	return 0;
}

/* ---- subflows ---- */

static uint32_t
sub_alloc(struct et_rt_host *h)
{
	uint32_t i;

	if (h->free_sub == NO_SUB) {
		uint32_t n = h->n_subs ? h->n_subs * 2 : 64;
		struct et_rt_sub *s = realloc(h->subs, n * sizeof(*s));

		if (s == NULL)
			return NO_SUB;
		for (i = h->n_subs; i < n; i++)
			s[i] = (struct et_rt_sub){.next_free = i + 1 < n ? i + 1 : NO_SUB};
		h->free_sub = h->n_subs;
		h->subs = s;
		h->n_subs = n;
	}
	i = h->free_sub;
	h->free_sub = h->subs[i].next_free;
	return i;
}

void
et_rt_stats_add_qp(struct et_rt_stats *st, const struct et_qp *qp)
{
	et_ctr_add(&et_qp_ctrs, &st->qp, et_qp_stats(qp));
}

static void
sub_release(struct et_rt_host *h, uint32_t i)
{
	struct et_rt_sub *s = &h->subs[i];

	/* rate mode, as in the paper's simulator: every QP starts afresh */
	if (h->peer_cc && h->c->qp.dctcp.enabled && !h->c->qp.dctcp.rate_mode) {
		/* by READ, the sender's data are its QP's answers */
		const struct et_dctcp *cc = h->c->data_by_read ? et_qp_answer_dctcp(s->qp)
							       : et_qp_dctcp(s->qp);

		h->peer_cc[s->dst] = (struct et_rt_peer_cc){cc->alpha, et_dctcp_cwnd(cc)};
	}
	et_rt_stats_add_qp(&h->st, s->qp);
	h->peer_ops->close(h->peer_ctx, h, s);
	et_nic_qp_destroy(h->host.nic, s->qp);
	s->qp = NULL;
	h->qps--;
	et_lb_detach(h->lbh, s->lb_state);
	s->lb_state = NULL;
	s->next_free = h->free_sub;
	h->free_sub = i;
}

/* The far end is there: connect the subflow's QP to it and post its one
 * WRITE with immediate (the immediate names the receive it fills); by
 * READ, the receive for the far end's word that it has read it all. */
static int
sub_start(struct et_rt_host *h, uint32_t i, const struct et_rt_remote *far)
{
	struct et_rt_sub *s = &h->subs[i];
	const struct et_coll_send *snd = &h->sched->rank[h->rank].sends[s->send];
	struct et_send_wr wr = {.wr_id = i, .opcode = ET_WR_RDMA_WRITE_IMM,
				.local_addr = h->data + snd->src_off + s->off,
				.length = (uint32_t)s->len, .lkey = h->data_key, .imm = snd->recv,
				.remote_addr = far->addr, .rkey = far->rkey};
	int rc;

	s->far_qpn = far->qpn;
	if ((rc = et_qp_connect(s->qp, far->qpn)) != 0 || (rc = et_qp_ready(s->qp)) != 0)
		return failed(h, ET_RT_NO_QP, s->dst, et_qp_qpn(s->qp)), rc;
	h->qps++;
	if (et_lb_attach(h->lbh, s->qp, s->dst, &s->lb_state))
		return failed(h, ET_RT_NO_MEMORY, s->dst, et_qp_qpn(s->qp)), -ENOMEM;
	if (h->c->data_by_read) {
		struct et_recv_wr rw = {.wr_id = WR_DONE_RECV | i, .lkey = h->data_key};

		rc = et_qp_post_recv(s->qp, &rw);
	} else {
		rc = et_qp_post_send(s->qp, &wr);
	}
	if (rc != 0) {
		h->fail.len = s->len;
		return failed(h, ET_RT_POST, s->dst, et_qp_qpn(s->qp)), rc;
	}
	et_nic_activate(h->host.nic, s->qp, s->insert_pos);
	h->st.qps_created++;
	return 0;
}

/* Make the subflow's QP and ask the peer ops for its far end: there at
 * once (one process), or later through et_rt_connected (-EINPROGRESS). */
static int
sub_post(struct et_rt_host *h, uint32_t i)
{
	struct et_rt_sub *s = &h->subs[i];
	struct et_qp_attr a = h->c->qp;
	struct et_rt_remote far;
	int rc;

	/* one request each way: small queues keep QP set-up cheap */
	a.max_send_wr = a.max_recv_wr = 2;
	a.multipath = et_lb_per_packet(&h->c->lb);
	a.dest_ip = h->peer_ops->ip(h->peer_ctx, s->dst);
	a.path_id = s->path;
	if (h->peer_cc && h->peer_cc[s->dst].cwnd) {
		a.dctcp.init_cwnd = h->peer_cc[s->dst].cwnd;
		a.dctcp.init_alpha = h->peer_cc[s->dst].alpha;
	}
	a.sq_psn = s->sq_psn;
	a.rq_psn = s->rq_psn;
	s->qp = et_host_qp_create(&h->host, &a);
	if (s->qp == NULL)
		return failed(h, ET_RT_NO_QP, s->dst, 0), -ENOSPC;
	rc = h->peer_ops->open(h->peer_ctx, h, s, et_qp_qpn(s->qp), &a, &far);
	if (rc == -EINPROGRESS) {
		h->connecting++;
		return 0;
	}
	if (rc) {
		et_nic_qp_destroy(h->host.nic, s->qp);
		s->qp = NULL;
		return failed(h, rc == -ENOSPC ? ET_RT_NO_QP : ET_RT_NO_MEMORY, s->dst, 0), rc;
	}
	return sub_start(h, i, &far);
}

int
et_rt_connected(struct et_rt_host *h, uint32_t sub, const struct et_rt_remote *far)
{
	if (sub >= h->n_subs || h->subs[sub].qp == NULL || h->subs[sub].far_qpn || !h->connecting)
		return -EINVAL;
	h->connecting--;
	return sub_start(h, sub, far);
}

void
et_rt_connect_failed(struct et_rt_host *h, uint32_t sub)
{
	const struct et_rt_sub *s = &h->subs[sub];

	failed(h, ET_RT_PEER_REFUSED, s->dst, s->qp ? et_qp_qpn(s->qp) : 0);
}

int
et_rt_far_place(const struct et_rt_host *hd, uint32_t recv, uint64_t off, uint64_t len,
		 struct et_rt_remote *out)
{
	const struct et_coll_rank *r = &hd->sched->rank[hd->rank];

	if (recv >= r->nrecvs || off > r->recvs[recv].len || len > r->recvs[recv].len - off ||
	    len > UINT32_MAX)
		return -EINVAL;
	*out = (struct et_rt_remote){
		0, (uint64_t)(uintptr_t)(hd->staging + r->recvs[recv].staging_off + off),
		hd->staging_key};
	return 0;
}

int
et_rt_accept(struct et_rt_host *hd, uint32_t src_ip, uint32_t recv, uint64_t off,
	     uint64_t len, uint32_t qpn, const struct et_qp_attr *a, uint32_t my_qpn,
	     struct et_qp **rq, struct et_rt_remote *out)
{
	struct et_qp_attr b = hd->c->qp;
	struct et_recv_wr rw;
	int rc = et_rt_far_place(hd, recv, off, len, out);

	*rq = NULL;
	if (rc)
		return rc;
	rw = (struct et_recv_wr){.wr_id = 0, .addr = (uint8_t *)(uintptr_t)out->addr,
				 .length = (uint32_t)len, .lkey = hd->staging_key};
	b.max_send_wr = b.max_recv_wr = 2;
	b.multipath = a->multipath;
	b.dest_ip = src_ip;
	b.sq_psn = a->rq_psn;
	b.rq_psn = a->sq_psn;
	b.qpn = my_qpn;
	*rq = et_host_qp_create(&hd->host, &b);
	if (*rq == NULL)
		return -ENOSPC;
	if (et_qp_connect(*rq, qpn) || et_qp_ready(*rq) || et_qp_post_recv(*rq, &rw)) {
		et_nic_qp_destroy(hd->host.nic, *rq);
		*rq = NULL;
		return -ENOSPC;
	}
	out->qpn = et_qp_qpn(*rq);
	return 0;
}

void
et_rt_sub_source(const struct et_rt_host *h, const struct et_rt_sub *s, struct et_rt_remote *out)
{
	const struct et_coll_send *snd = &h->sched->rank[h->rank].sends[s->send];

	*out = (struct et_rt_remote){0, (uint64_t)(uintptr_t)(h->data + snd->src_off + s->off),
				     h->data_key};
}

int
et_rt_accept_read(struct et_rt_host *hd, uint32_t src_ip, uint32_t src_host, uint32_t recv,
		  uint64_t off, uint64_t len, uint32_t qpn, const struct et_qp_attr *a,
		  uint32_t my_qpn, const struct et_rt_remote *src, struct et_qp **rq,
		  struct et_rt_remote *out)
{
	struct et_qp_attr b = hd->c->qp;
	struct et_send_wr wr;
	struct et_rt_far_lb *f;
	void *state = NULL;
	int rc = et_rt_far_place(hd, recv, off, len, out);

	*rq = NULL;
	if (rc)
		return rc;
	if (hd->n_far_lb == hd->far_lb_cap) {
		uint32_t cap = hd->far_lb_cap ? 2 * hd->far_lb_cap : 16;

		if (!(f = realloc(hd->far_lb, cap * sizeof(*f))))
			return -ENOMEM;
		hd->far_lb = f;
		hd->far_lb_cap = cap;
	}
	b.max_send_wr = b.max_recv_wr = 2;
	b.multipath = a->multipath;
	b.dest_ip = src_ip;
	b.sq_psn = a->rq_psn;
	b.rq_psn = a->sq_psn;
	b.qpn = my_qpn;
	/* the sender's path back: its answers echo it, and the switches'
	 * swaps on the way there and back cancel out */
	b.path_id = a->path_id;
	*rq = et_host_qp_create(&hd->host, &b);
	if (*rq == NULL)
		return -ENOSPC;
	wr = (struct et_send_wr){.wr_id = WR_FAR_READ | recv, .opcode = ET_WR_RDMA_READ,
				 .local_addr = (uint8_t *)(uintptr_t)out->addr,
				 .length = (uint32_t)len, .lkey = hd->staging_key,
				 .remote_addr = src->addr, .rkey = src->rkey};
	if (et_qp_connect(*rq, qpn) || et_qp_ready(*rq) ||
	    et_lb_attach(hd->lbh, *rq, src_host, &state) ||
	    et_nic_post_send(hd->host.nic, *rq, &wr)) {
		et_lb_detach(hd->lbh, state);
		et_nic_qp_destroy(hd->host.nic, *rq);
		*rq = NULL;
		return -ENOSPC;
	}
	out->qpn = et_qp_qpn(*rq);
	hd->far_lb[hd->n_far_lb++] = (struct et_rt_far_lb){out->qpn, state};
	return 0;
}

void
et_rt_far_close(struct et_rt_host *hd, struct et_rt_stats *st, uint32_t qpn)
{
	struct et_qp *rq = et_nic_qp_find(hd->host.nic, qpn);

	for (uint32_t i = 0; i < hd->n_far_lb; i++)
		if (hd->far_lb[i].qpn == qpn) {
			et_lb_detach(hd->lbh, hd->far_lb[i].state);
			hd->far_lb[i] = hd->far_lb[--hd->n_far_lb];
			break;
		}
	if (rq == NULL)
		return;
	et_rt_stats_add_qp(st, rq);
	et_nic_qp_destroy(hd->host.nic, rq);
}

/* ---- the steps ---- */

/* Plan the step's flows: all of them, or with the interceptor, the
 * rack-local ones (batched false) or the others (batched true). */
static int
plan(struct et_rt_host *h, uint64_t now, bool batched)
{
	const struct et_coll_rank *r = &h->sched->rank[h->rank];
	const struct et_coll_step *st = &r->steps[h->step];
	bool intercept = et_lb_batched(&h->c->lb);
	struct et_lb_flow *fl = malloc((st->nsend + 1) * sizeof(*fl));
	uint32_t *map = malloc((st->nsend + 1) * sizeof(*map)), n = 0, k, i;
	struct et_lb_sub *out = NULL;
	int rc = -ENOMEM;

	if (!fl || !map)
		goto out;
	for (i = 0; i < st->nsend; i++) {
		const struct et_coll_send *s = &r->sends[st->first_send + i];

		if (s->len == 0 ||
		    (intercept && et_lb_rack_local(h->lbh, host_of(h, s->dst)) == batched))
			continue;
		fl[n] = (struct et_lb_flow){host_of(h, s->dst), s->len};
		map[n++] = st->first_send + i;
	}
	out = malloc((et_lb_plan_max(h->lbh, n) + 1) * sizeof(*out));
	if (out == NULL)
		goto out;
	k = et_lb_plan(h->lbh, fl, n, now, out);
	if (h->n_waiting + h->qps + k > ET_RT_MAX_QPS) {
		h->fail.qps = h->n_waiting + h->qps + k;
		failed(h, ET_RT_TOO_MANY_QPS, 0, 0);
		rc = -ENOSPC;
		goto out;
	}
	if (h->n_waiting + k > h->waiting_cap) {
		uint32_t cap = h->n_waiting + k > 2 * h->waiting_cap ? h->n_waiting + k
								      : 2 * h->waiting_cap;
		uint32_t *w = realloc(h->waiting, cap * sizeof(*w));

		if (w == NULL)
			goto out;
		h->waiting = w;
		h->waiting_cap = cap;
	}
	for (i = 0; i < k; i++) {
		uint32_t j = sub_alloc(h);

		if (j == NO_SUB)
			goto out;
		h->subs[j] = (struct et_rt_sub){
			.dst = fl[out[i].flow].dst, .send = map[out[i].flow], .off = out[i].off,
			.len = out[i].len, .path = out[i].path, .start_ns = out[i].start_ns,
			.insert_pos = out[i].insert_pos};
		/* drawn here, not when the subflow starts: the draws then come in
		 * the order of the plan on any clock, and so do the paths drawn
		 * after them (a process per host plans as the emulator does) */
		h->subs[j].sq_psn = (uint32_t)et_rand_next(&h->lbh->rng) & ET_PSN_MASK;
		h->subs[j].rq_psn = (uint32_t)et_rand_next(&h->lbh->rng) & ET_PSN_MASK;
		h->waiting[h->n_waiting++] = j;
		h->sends_left++;
		if (h->on_plan)
			h->on_plan(h->plan_ctx, h, &h->subs[j]);
	}
	rc = 0;
out:
	free(fl);
	free(map);
	free(out);
	if (rc == -ENOMEM)
		failed(h, ET_RT_NO_MEMORY, 0, 0);
	return rc;
}

static int
start_step(struct et_rt_host *h, uint64_t now)
{
	int rc = plan(h, now, false);

	if (rc)
		return rc;
	if (et_lb_batched(&h->c->lb))
		h->batch_at = now + h->c->lb.batch_ns + 1; /* 0 means none */
	return 0;
}

static bool
step_complete(const struct et_rt_host *h)
{
	const struct et_coll_step *st = &h->sched->rank[h->rank].steps[h->step];

	if (h->sends_left || h->batch_at)
		return false;
	for (uint32_t i = 0; i < st->nrecv; i++)
		if (h->recv_left[st->first_recv + i])
			return false;
	return true;
}

/* Enter steps as far as the data allows; a step is entered when the one
 * before it has sent and received everything, and its receives applied. */
static int
advance(struct et_rt_host *h, uint64_t now)
{
	const struct et_coll_rank *r = &h->sched->rank[h->rank];

	while (h->step < r->nsteps) {
		const struct et_coll_step *st = &r->steps[h->step];

		if (!h->step_started) {
			h->step_started = true;
			int rc = start_step(h, now);

			if (rc)
				return rc;
		}
		if (!step_complete(h))
			return 0;
		if (h->c->verify)
			for (uint32_t i = 0; i < st->nrecv; i++)
				et_coll_apply(h->sched, &r->recvs[st->first_recv + i], h->data,
					      h->staging);
		h->step++;
		h->step_started = false;
	}
	if (h->done_ns == 0) {
		if (h->c->verify)
			et_coll_finish(h->sched, h->rank, h->data);
		h->done_ns = now + 1; /* +1: 0 means not done */
	}
	return 0;
}

/* A subflow of ours is over: its WRITE acknowledged, or (by READ) the far
 * end's word that it has read it, saying too whether it timed out on the
 * way (the policy here plans the next steps' paths).  -1 when it failed
 * instead (h->fail). */
static int
sub_done(struct et_rt_host *h, const struct et_wc *wc, uint64_t now)
{
	uint32_t i = (uint32_t)(wc->wr_id & ~WR_DONE_RECV);

	if (wc->status != ET_WC_SUCCESS) {
		h->fail.status = wc->status;
		failed(h, ET_RT_SEND_FAILED, h->subs[i].dst, wc->qpn);
		return -1;
	}
	if ((wc->wr_id & WR_DONE_RECV) && (wc->imm & FAR_TIMED_OUT))
		et_lb_far_timeout(h->lbh, h->subs[i].dst, h->subs[i].path, now);
	sub_release(h, i);
	h->sends_left--;
	return 0;
}

/* A far end of ours read its subflow: the receive has those bytes, and the
 * sender hears so by a WRITE with immediate of nothing, which every mode
 * carries (after the READ: the answers are all in before the sender may
 * close).  -1 when it failed (h->fail). */
static int
far_read_done(struct et_rt_host *h, const struct et_wc *wc)
{
	uint32_t recv = (uint32_t)wc->wr_id;
	struct et_send_wr done = {.wr_id = WR_FAR_DONE, .opcode = ET_WR_RDMA_WRITE_IMM};
	struct et_qp *rq;

	if (wc->wr_id & WR_FAR_DONE)
		return 0; /* the word was taken; the sender closes us */
	rq = et_nic_qp_find(h->host.nic, wc->qpn);
	if (wc->status != ET_WC_SUCCESS || recv >= h->sched->rank[h->rank].nrecvs ||
	    h->recv_left[recv] < wc->byte_len) {
		h->fail.status = wc->status;
		failed(h, ET_RT_BAD_RECV, 0, wc->qpn);
		return -1;
	}
	h->recv_left[recv] -= wc->byte_len;
	if (rq)
		done.imm = et_qp_stats(rq)->timeouts ? FAR_TIMED_OUT : 0;
	if (rq == NULL || et_nic_post_send(h->host.nic, rq, &done)) {
		failed(h, ET_RT_POST, 0, wc->qpn);
		return -1;
	}
	return 0;
}

static uint32_t
progress(struct et_rt_host *h, uint64_t now)
{
	struct et_wc wc[32];
	uint32_t work = 0, k, i;

	while ((k = et_cq_poll(&h->host.rcq, wc, 32)) > 0) {
		for (i = 0; i < k; i++) {
			uint64_t *left = &h->recv_left[wc[i].imm];

			if (wc[i].wr_id & WR_DONE_RECV) {
				if (sub_done(h, &wc[i], now))
					return 0;
				continue;
			}
			if (wc[i].status != ET_WC_SUCCESS ||
			    wc[i].imm >= h->sched->rank[h->rank].nrecvs || *left < wc[i].byte_len) {
				h->fail.status = wc[i].status;
				h->fail.imm = wc[i].imm;
				return failed(h, ET_RT_BAD_RECV, 0, wc[i].qpn);
			}
			*left -= wc[i].byte_len;
		}
		work += k;
	}
	while ((k = et_cq_poll(&h->host.scq, wc, 32)) > 0) {
		for (i = 0; i < k; i++) {
			if (wc[i].wr_id & (WR_FAR_READ | WR_FAR_DONE)) {
				if (far_read_done(h, &wc[i]))
					return 0;
				continue;
			}
			if (sub_done(h, &wc[i], now))
				return 0;
		}
		work += k;
	}
	if (h->batch_at && now >= h->batch_at) {
		h->batch_at = 0;
		if (plan(h, now, true))
			return 0;
		work++;
	}
	for (i = 0; i < h->n_waiting;) {
		uint32_t j = h->waiting[i];

		if (h->subs[j].start_ns > now) {
			i++;
			continue;
		}
		h->waiting[i] = h->waiting[--h->n_waiting];
		if (sub_post(h, j))
			return 0;
		work++;
	}
	if (h->step < h->sched->rank[h->rank].nsteps || h->done_ns == 0) {
		uint32_t before = h->step;

		if (advance(h, now))
			return 0;
		work += h->step != before;
	}
	return work;
}

uint32_t
et_rt_poll(struct et_rt_host *h, uint64_t now)
{
	return et_nic_poll(h->host.nic, now) + progress(h, now);
}

uint32_t
et_rt_progress(struct et_rt_host *h, uint64_t now)
{
	return progress(h, now);
}

uint64_t
et_rt_next_event(const struct et_rt_host *h, uint64_t now)
{
	uint64_t t = et_nic_next_event(h->host.nic, now);

	if (h->batch_at && h->batch_at < t)
		t = h->batch_at;
	for (uint32_t i = 0; i < h->n_waiting; i++)
		if (h->subs[h->waiting[i]].start_ns < t)
			t = h->subs[h->waiting[i]].start_ns;
	return t;
}

/* ---- set-up ---- */

int
et_rt_host_init(struct et_rt_host *h, const struct et_rt_conf *c,
		const struct et_coll_sched *sched, uint32_t rank, struct et_nic *nic,
		const struct rte_ether_addr *gw_mac, uint8_t *shared, uint64_t shared_len,
		const struct et_rt_peer_ops *ops, void *ctx)
{
	return et_rt_host_init_in(h, c, sched, rank, nic, gw_mac, shared, shared_len, ops, ctx,
				  NULL, NULL);
}

int
et_rt_host_init_in(struct et_rt_host *h, const struct et_rt_conf *c,
		   const struct et_coll_sched *sched, uint32_t rank, struct et_nic *nic,
		   const struct rte_ether_addr *gw_mac, uint8_t *shared, uint64_t shared_len,
		   const struct et_rt_peer_ops *ops, void *ctx, const uint32_t *members,
		   struct et_lb_host *lb)
{
	const struct et_coll_rank *r = &sched->rank[rank];
	uint64_t size = sched->size ? sched->size : 1;
	uint64_t slen = r->staging_bytes ? r->staging_bytes : 1;
	int rc;

	memset(h, 0, sizeof(*h));
	h->c = c;
	h->sched = sched;
	h->rank = rank;
	h->peer_ops = ops;
	h->peer_ctx = ctx;
	h->free_sub = NO_SUB;
	h->members = members;
	h->lbh = lb ? lb : &h->lb;
	if ((rc = et_host_init(&h->host, nic, gw_mac, 8192)) != 0)
		return rc;
	if (shared) {
		h->data = h->staging = shared;
		size = slen = shared_len;
	} else {
		h->own_buffers = true;
		h->data = malloc(size);
		h->staging = calloc(1, slen);
		if (!h->data || !h->staging)
			return -ENOMEM;
		et_coll_fill(sched, rank, c->seed, h->data);
	}
	/* by READ, the receivers read the senders' data */
	h->data_key = et_host_reg(&h->host, h->data, size,
				  ET_ACCESS_LOCAL_WRITE |
				  (c->data_by_read ? ET_ACCESS_REMOTE_READ : 0));
	h->staging_key = et_host_reg(&h->host, h->staging, slen,
				     ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	h->recv_left = calloc(r->nrecvs + 1, sizeof(*h->recv_left));
	if (!h->recv_left || !h->data_key || !h->staging_key)
		return -ENOMEM;
	for (uint32_t k = 0; k < r->nrecvs; k++)
		h->recv_left[k] = r->recvs[k].len;
	if (lb == NULL)
		et_lb_host_init(&h->lb, &c->lb, &c->t, rank, c->seed);
	return 0;
}

/* The NIC goes with its QPs; the policy's state of subflows still open (a
 * failed run) goes here. */
void
et_rt_host_free(struct et_rt_host *h)
{
	for (uint32_t i = 0; h->subs && i < h->n_subs; i++)
		if (h->subs[i].lb_state) {
			et_lb_detach(h->lbh, h->subs[i].lb_state);
			h->subs[i].lb_state = NULL;
		}
	for (uint32_t i = 0; i < h->n_far_lb; i++)
		et_lb_detach(h->lbh, h->far_lb[i].state);
	free(h->far_lb);
	et_host_free(&h->host);
	if (h->own_buffers) {
		free(h->data);
		free(h->staging);
	}
	free(h->recv_left);
	free(h->waiting);
	free(h->subs);
	memset(h, 0, sizeof(*h));
}

void
et_rt_sub_format(const struct et_rt_host *h, const struct et_rt_sub *s, char *buf, size_t len)
{
	snprintf(buf, len, "host %u step %u dst %u send %u off %" PRIu64 " len %" PRIu64 " path %u",
		 host_of(h, h->rank), h->step, s->dst, s->send, s->off, s->len, s->path);
}

const char *
et_rt_strerror(const struct et_rt_host *h, char *buf, size_t len)
{
	const struct et_rt_failure *f = &h->fail;

	switch (f->why) {
	case ET_RT_OK:
		snprintf(buf, len, "no error");
		break;
	case ET_RT_NO_MEMORY:
		snprintf(buf, len, "host %u: out of memory at step %u", h->rank, f->step);
		break;
	case ET_RT_TOO_MANY_QPS:
		snprintf(buf, len, "host %u: step %u needs %u QPs, more than %u", h->rank, f->step,
			 f->qps, ET_RT_MAX_QPS);
		break;
	case ET_RT_NO_QP:
		snprintf(buf, len, "host %u or %u: no QP left (%u per host)", h->rank, f->peer,
			 h->host.nic->pick_qps);
		break;
	case ET_RT_POST:
		snprintf(buf, len, "host %u: cannot post %" PRIu64 " bytes to host %u", h->rank,
			 f->len, f->peer);
		break;
	case ET_RT_BAD_RECV:
		snprintf(buf, len, "host %u: QP %u: bad receive completion (%s, imm %u)", h->rank,
			 f->qpn, et_wc_status_str(f->status), f->imm);
		break;
	case ET_RT_SEND_FAILED:
		snprintf(buf, len, "host %u -> host %u: QP %u: %s", h->rank, f->peer, f->qpn,
			 et_wc_status_str(f->status));
		break;
	case ET_RT_PEER_REFUSED:
		snprintf(buf, len, "host %u -> host %u: QP %u: the peer could not open its end",
			 h->rank, f->peer, f->qpn);
		break;
	}
	return buf;
}
