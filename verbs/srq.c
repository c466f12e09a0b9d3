/* SPDX-License-Identifier: BSD-3-Clause
 * Shared receive queues: lib/transport's et_rq, which the QPs made on it
 * take their receives from (each message the oldest at its start), each
 * completion on its own QP's receive CQ.  A QP on an SRQ runs in order
 * (Go-Back-N) whatever the policy: per-packet paths place out of order
 * and keep their receives to themselves.  The limit event
 * (IBV_EVENT_SRQ_LIMIT_REACHED) is armed by ibv_modify_srq and raised once,
 * at the completion whose receive left fewer than the limit posted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "et_vb.h"

struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a)
{
	struct et_vb_srq *s;

	if (a->attr.max_wr == 0 || a->attr.max_wr > ET_VB_MAX_QP_WR ||
	    a->attr.max_sge > ET_VB_MAX_RECV_SGE || a->attr.srq_limit > a->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    et_rq_init(&s->rq, et_vb_pow2_at_least(a->attr.max_wr), RTE_MAX(a->attr.max_sge, 1u)) != 0) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->pd = (struct et_vb_pd *)pd;
	s->max_wr = s->rq.mask + 1;
	s->limit = a->attr.srq_limit;
	s->srq.context = pd->context;
	s->srq.srq_context = a->srq_context;
	s->srq.pd = pd;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	a->attr.max_wr = s->max_wr;
	a->attr.max_sge = RTE_MAX(a->attr.max_sge, 1u);
	return &s->srq;
}

int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *a, int mask)
{
	struct et_vb_srq *s = (struct et_vb_srq *)srq;
	int r = 0;

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return EINVAL; /* no resize: the device says so (max_srq_wr is fixed) */
	et_process_lock();
	if ((mask & IBV_SRQ_LIMIT) && a->srq_limit > s->max_wr)
		r = EINVAL;
	else if (mask & IBV_SRQ_LIMIT)
		s->limit = a->srq_limit;
	et_process_unlock();
	return r;
}

int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *a)
{
	struct et_vb_srq *s = (struct et_vb_srq *)srq;

	et_process_lock();
	a->max_wr = s->max_wr;
	a->max_sge = RTE_MAX(s->rq.max_sge, 1u);
	a->srq_limit = s->limit;
	et_process_unlock();
	return 0;
}

int
ibv_destroy_srq(struct ibv_srq *srq)
{
	struct et_vb_srq *s = (struct et_vb_srq *)srq;

	et_process_lock();
	if (s->users) {
		et_process_unlock();
		return EBUSY;
	}
	et_process_unlock();
	et_rq_free(&s->rq);
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	free(s);
	return 0;
}

int
et_vb_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct et_vb_srq *s = (struct et_vb_srq *)srq;
	int r = 0;

	et_process_lock();
	for (; wr; wr = wr->next) {
		struct et_sge sgl[ET_VB_MAX_RECV_SGE];
		struct et_recv_wr e;

		if ((r = et_vb_recv_wr(wr, &e, sgl)) != 0)
			break;
		if ((r = et_srq_post(&s->rq, &s->pd->mrs, &e)) != 0) {
			r = r == -ENOSPC ? ENOMEM : EINVAL;
			break;
		}
	}
	if (r)
		*bad = wr;
	et_process_unlock();
	return r;
}

void
et_vb_srq_taken(struct et_vb_ctx *ctx, struct et_vb_srq *s)
{
	if (s->limit == 0 || et_rq_count(&s->rq) >= s->limit)
		return;
	s->limit = 0; /* once: armed again by ibv_modify_srq */
	et_vb_async(ctx, &(struct ibv_async_event){.element.srq = &s->srq,
						    .event_type = IBV_EVENT_SRQ_LIMIT_REACHED});
}
