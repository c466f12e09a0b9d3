/* SPDX-License-Identifier: BSD-3-Clause
 * Completion queues and completion channels.
 *
 * A CQ is lib/transport's ring (et_cq), which the QPs on it fill as the
 * NIC runs; ibv_poll_cq runs progress when the ring is empty, as the
 * provider's CQ reads do (manual progress: a DPDK poll in the consumer's
 * call), and turns the transport's completions into verbs'.
 *
 * A completion channel is an eventfd (EFD_SEMAPHORE: one read, one
 * event) that poll, select and epoll see.  ibv_req_notify_cq arms a CQ;
 * progress (the consumer's, or the keeper's while a CQ is armed or a
 * consumer waits in ibv_get_cq_event) raises the event of an armed CQ
 * that got a completion since.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "base/et_ring.h"
#include "et_vb.h"

/* ---- channels ---- */

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *c)
{
	struct et_vb_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->ch.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (ch->ch.fd < 0) {
		free(ch);
		return NULL;
	}
	ch->ch.context = c;
	return &ch->ch;
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct et_vb_channel *ch = (struct et_vb_channel *)channel;

	et_process_lock();
	if (ch->ch.refcnt) {
		et_process_unlock();
		return EBUSY;
	}
	et_process_unlock();
	close(ch->ch.fd);
	free(ch->ev);
	free(ch);
	return 0;
}

/* The event of cq, raised: queued on its channel, the fd told. */
static int
raise_event(struct et_vb_channel *ch, struct et_vb_cq *cq)
{
	struct et_vb_cq **slot = et_ring_push((void **)&ch->ev, &ch->ev_cap, ch->ev_head,
					      &ch->ev_tail, sizeof(*slot), UINT32_MAX);
	uint64_t one = 1;

	if (slot == NULL)
		return -ENOMEM;
	*slot = cq;
	return write(ch->ch.fd, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

uint32_t
et_vb_cq_events(struct et_vb_ctx *ctx)
{
	uint32_t raised = 0;

	for (struct et_vb_cq **pp = &ctx->armed, *cq; (cq = *pp) != NULL;) {
		if (cq->ecq.tail == cq->armed_tail) {
			pp = &cq->next_armed;
			continue;
		}
		*pp = cq->next_armed;
		cq->armed = false;
		et_process_waiters(-1);
		if (raise_event((struct et_vb_channel *)cq->cq.channel, cq) == 0)
			raised++;
	}
	return raised;
}

int
et_vb_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct et_vb_cq *cq = (struct et_vb_cq *)ibcq;
	struct et_vb_ctx *ctx = et_vb_ctx(ibcq->context);

	(void)solicited_only; /* every completion is news: a superset, as allowed */
	if (ibcq->channel == NULL)
		return EINVAL;
	et_process_lock();
	if (!cq->armed) {
		cq->armed = true;
		cq->armed_tail = cq->ecq.tail;
		cq->next_armed = ctx->armed;
		ctx->armed = cq;
		et_process_waiters(1);
	}
	et_process_unlock();
	return 0;
}

int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct et_vb_channel *ch = (struct et_vb_channel *)channel;
	struct et_vb_cq *c;
	uint64_t v;
	ssize_t n;

	/* blocked here, the keeper keeps the NIC going */
	et_process_waiters(1);
	n = read(ch->ch.fd, &v, sizeof(v));
	et_process_waiters(-1);
	if (n != (ssize_t)sizeof(v))
		return -1;
	et_process_lock();
	c = ch->ev_head != ch->ev_tail ? ch->ev[ch->ev_head++ & (ch->ev_cap - 1)] : NULL;
	et_process_unlock();
	if (c == NULL) {
		errno = EAGAIN;
		return -1;
	}
	*cq = &c->cq;
	*cq_context = c->cq.cq_context;
	return 0;
}

void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* ---- CQs ---- */

struct ibv_cq *
ibv_create_cq(struct ibv_context *c, int cqe, void *cq_context, struct ibv_comp_channel *channel,
	      int comp_vector)
{
	struct et_vb_cq *cq;
	uint32_t size = 16;

	if (cqe < 1 || (uint32_t)cqe > ET_VB_MAX_CQE || comp_vector != 0) {
		errno = EINVAL;
		return NULL;
	}
	while (size < (uint32_t)cqe)
		size *= 2;
	if ((cq = calloc(1, sizeof(*cq))) == NULL || et_cq_init(&cq->ecq, size)) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->cq.context = c;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = (int)size;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	if (channel) {
		et_process_lock();
		channel->refcnt++;
		et_process_unlock();
	}
	return &cq->cq;
}

int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct et_vb_cq *cq = (struct et_vb_cq *)ibcq;
	struct et_vb_ctx *ctx = et_vb_ctx(ibcq->context);

	et_process_lock();
	if (cq->users) {
		et_process_unlock();
		return EBUSY;
	}
	for (struct et_vb_cq **pp = &ctx->armed; *pp; pp = &(*pp)->next_armed)
		if (*pp == cq) {
			*pp = cq->next_armed;
			et_process_waiters(-1);
			break;
		}
	if (ibcq->channel) {
		struct et_vb_channel *ch = (struct et_vb_channel *)ibcq->channel;

		/* its events not yet taken name it no more */
		for (uint32_t i = ch->ev_head; i != ch->ev_tail; i++)
			if (ch->ev[i & (ch->ev_cap - 1)] == cq)
				ch->ev[i & (ch->ev_cap - 1)] = NULL;
		ibcq->channel->refcnt--;
	}
	et_process_unlock();
	et_cq_free(&cq->ecq);
	pthread_mutex_destroy(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	free(cq);
	return 0;
}

int
ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq;
	(void)cqe;
	return EOPNOTSUPP;
}

static enum ibv_wc_status
status_of(uint8_t s)
{
	switch (s) {
	case ET_WC_SUCCESS:
		return IBV_WC_SUCCESS;
	case ET_WC_LOC_LEN_ERR:
		return IBV_WC_LOC_LEN_ERR;
	case ET_WC_LOC_PROT_ERR:
		return IBV_WC_LOC_PROT_ERR;
	case ET_WC_REM_ACCESS_ERR:
		return IBV_WC_REM_ACCESS_ERR;
	case ET_WC_REM_INV_REQ_ERR:
		return IBV_WC_REM_INV_REQ_ERR;
	case ET_WC_REM_OP_ERR:
		return IBV_WC_REM_OP_ERR;
	case ET_WC_RETRY_EXC_ERR:
		return IBV_WC_RETRY_EXC_ERR;
	case ET_WC_RNR_RETRY_EXC_ERR:
		return IBV_WC_RNR_RETRY_EXC_ERR;
	case ET_WC_WR_FLUSH_ERR:
		return IBV_WC_WR_FLUSH_ERR;
	}
	return IBV_WC_GENERAL_ERR;
}

static enum ibv_wc_opcode
opcode_of(uint8_t op)
{
	switch (op) {
	case ET_WC_SEND:
		return IBV_WC_SEND;
	case ET_WC_RDMA_WRITE:
		return IBV_WC_RDMA_WRITE;
	case ET_WC_RECV:
		return IBV_WC_RECV;
	case ET_WC_RECV_RDMA_WITH_IMM:
		return IBV_WC_RECV_RDMA_WITH_IMM;
	case ET_WC_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case ET_WC_COMP_SWAP:
		return IBV_WC_COMP_SWAP;
	case ET_WC_FETCH_ADD:
		return IBV_WC_FETCH_ADD;
	}
	return IBV_WC_SEND;
}

/* A transport completion as verbs' into *w; false for one the consumer
 * did not ask for (an unsignaled send that went well). */
static bool
convert(struct et_vb_ctx *ctx, const struct et_wc *e, struct ibv_wc *w)
{
	struct et_vb_qp *q = et_vb_qp_of(ctx, e->qpn);
	bool recv = e->opcode == ET_WC_RECV || e->opcode == ET_WC_RECV_RDMA_WITH_IMM;

	memset(w, 0, sizeof(*w));
	w->wr_id = e->wr_id;
	if (q && !recv) {
		struct et_vb_swr s = et_vb_swr_take(q);

		if (!s.signaled && e->status == ET_WC_SUCCESS)
			return false;
		w->wr_id = s.wr_id;
	}
	if (q && recv && q->srq)
		et_vb_srq_taken(ctx, q->srq);
	else if (q && recv)
		q->n_recv--;
	w->status = status_of(e->status);
	w->opcode = opcode_of(e->opcode);
	w->byte_len = e->byte_len;
	w->qp_num = e->qpn;
	w->src_qp = q ? q->attr.dest_qp_num : 0;
	if (q && q->ud) {
		w->src_qp = e->src_qp;
		/* a datagram's buffer starts with the GRH's 40 bytes, its
		 * last 20 the IPv4 header; sl says so as mlx5's does for
		 * RoCE (bit 3: UDP, bits 2:0 2: IPv4), which UCX's ud_verbs
		 * reads to find the destination address in the GRH */
		if (recv && e->status == ET_WC_SUCCESS) {
			w->wc_flags |= IBV_WC_GRH;
			w->sl = ET_VB_WC_SL_ROCE_V2_IPV4;
		}
	}
	if (e->with_imm) {
		w->wc_flags |= IBV_WC_WITH_IMM;
		w->imm_data = htonl(e->imm);
	}
	w->vendor_err = e->status == ET_WC_SUCCESS ? 0 : e->status;
	return true;
}

int
et_vb_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct et_vb_cq *cq = (struct et_vb_cq *)ibcq;
	struct et_vb_ctx *ctx = et_vb_ctx(ibcq->context);
	int got = 0;

	if (n < 0)
		return -1;
	et_process_lock();
	if (et_cq_count(&cq->ecq) == 0)
		et_process_progress();
	while (got < n) {
		struct et_wc e;

		if (et_cq_poll(&cq->ecq, &e, 1) == 0)
			break;
		if (convert(ctx, &e, &wc[got]))
			got++;
	}
	et_process_unlock();
	if (got == 0)
		et_process_idle();
	return got;
}
