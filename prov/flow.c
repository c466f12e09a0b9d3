/* SPDX-License-Identifier: BSD-3-Clause
 * Large transfers through the load balancer, as the host runtime
 * (host/et_runtime) drives it for a collective's step: a flow is a
 * transfer of bytes between our memory and one peer's (a rendezvous' data
 * by READ or WRITE, an RMA read or write; a READ's responses come back on
 * the path its requests took, swapped).  Flows posted together are a batch: with Ethereal's flow
 * interceptor (et_lb_batched) every flow of the next [lb] batch-ns waits
 * and the batch is planned at once, Algorithm 1 over the good paths to
 * each destination leaf; other policies plan each flow as it comes.  The
 * plan's subflows (offset, length, path, start time, place in the NIC's
 * round robin) go on the connection's data QPs: one per path for a policy
 * that picks paths (a QP keeps a path until the policy's hook moves it on
 * a NAK or timeout: Ethereal's path state marks the path bad), one per
 * subflow of a flow for the others (ECMP: one QP, hashed; MP-RDMA: X).
 * DCTCP runs on every QP as the conf's [transport] says.
 */
#include <stdlib.h>
#include <string.h>

#include "et_fi.h"
#include "lb/et_lb_paths.h"

static void
sub_fail_now(struct et_fi_ep *ep, struct et_fi_sub *s, int err);

/* ---- flows and subflows: kept for the next once done ---- */

/* An object of size bytes from the free list l (its contents the
 * caller's to set), or a new one: NULL if out of memory. */
static void *
free_get(struct et_fi_free **l, size_t size)
{
	struct et_fi_free *o = *l;

	if (o == NULL)
		return malloc(size);
	*l = o->next;
	return o;
}

/* An object done with, onto l: its first bytes hold the link. */
static void
free_put(struct et_fi_free **l, void *obj)
{
	struct et_fi_free *o = obj;

	o->next = *l;
	*l = o;
}

static void
free_all(struct et_fi_free **l)
{
	while (*l) {
		struct et_fi_free *o = *l;

		*l = o->next;
		free(o);
	}
}

/* The planner's arrays for a batch of n flows: 0, or -FI_ENOMEM. */
static int
plan_room(struct et_fi_ep *ep, uint32_t n)
{
	const struct et_lb_host *lb = &et_process.lb;
	uint32_t n_out = et_lb_plan_max(lb, n) + 1; /* the policy's, for n flows */
	void *fv, *fl, *out, *nth;

	if (n <= ep->plan_cap && n_out <= ep->plan_out_cap)
		return 0;
	fv = realloc(ep->plan_fv, n * sizeof(*ep->plan_fv));
	if (fv)
		ep->plan_fv = fv;
	fl = realloc(ep->plan_fl, n * sizeof(*ep->plan_fl));
	if (fl)
		ep->plan_fl = fl;
	out = realloc(ep->plan_out, n_out * sizeof(*ep->plan_out));
	if (out)
		ep->plan_out = out;
	nth = realloc(ep->plan_nth, n * sizeof(*ep->plan_nth));
	if (nth)
		ep->plan_nth = nth;
	if (!fv || !fl || !out || !nth)
		return -FI_ENOMEM;
	ep->plan_cap = n;
	ep->plan_out_cap = n_out;
	return 0;
}

/* Which of a connection's data QPs a subflow takes. */
static uint32_t
slot_of(const struct et_lb_host *lb, uint16_t path, uint32_t nth)
{
	int i;

	if (!et_lb_batched(&lb->c))
		return nth;
	i = et_lb_paths_index(&lb->paths, path);
	return i < 0 ? 0 : (uint32_t)i;
}

int
et_fi_flow_start(struct et_fi_conn *c, struct et_fi_req *req, uint8_t *local, uint64_t len,
		 uint64_t raddr, uint32_t rkey, bool read)
{
	struct et_fi_ep *ep = c->ep;
	struct et_fi_flow *f = free_get(&ep->flow_free, sizeof(struct et_fi_flow));

	if (f == NULL)
		return -FI_ENOMEM;
	*f = (struct et_fi_flow){.conn = c, .req = req, .local = local, .len = len,
				 .raddr = raddr, .rkey = rkey, .read = read};
	if (ep->batch_last)
		ep->batch_last->next = f;
	else
		ep->batch = f;
	ep->batch_last = f;
	ep->n_batch++;
	req->inflight++;
	if (ep->batch_at == 0) {
		const struct et_lb_conf *lc = &et_process.c.rc.lb;

		/* the interceptor holds the batch open; the others plan at once */
		ep->batch_at = et_process_now() + (et_lb_batched(lc) ? lc->batch_ns : 0) + 1;
	}
	return 0;
}

static void
flow_done(struct et_fi_flow *f)
{
	struct et_fi_req *req = f->req;
	struct et_fi_ep *ep = f->conn->ep;

	req->inflight--;
	if (req->kind == ET_FI_REQ_RECV) {
		et_fi_msg_read_done(req, f->err);
	} else if (f->err) {
		et_fi_req_fail(req, f->err);
	} else if (req->kind == ET_FI_REQ_SEND ||
		   (req->kind == ET_FI_REQ_WRITE && (req->op_flags & FI_REMOTE_CQ_DATA))) {
		/* a rendezvous' DONE, an RMA write's CQ data: after the bytes */
		int r = req->kind == ET_FI_REQ_SEND ? et_fi_msg_done(req) : et_fi_msg_wdata(req);

		if (r)
			et_fi_req_fail(req, -r);
	} else {
		et_fi_req_check(req);
	}
	free_put(&ep->flow_free, f);
}

/* As many waiting subflows as q may hold. */
static void
qp_fill(struct et_fi_qp *q)
{
	struct et_fi_ep *ep = q->conn->ep;
	struct et_fi_sub *s;

	while (q->ready && q->posted < ET_FI_DATA_DEPTH && (s = q->wait_head) != NULL) {
		struct et_fi_flow *f = s->f;
		struct et_send_wr wr = {
			.wr_id = (uint64_t)(uintptr_t)s | ET_FI_WR_DATA,
			.opcode = f->read ? ET_WR_RDMA_READ : ET_WR_RDMA_WRITE,
			.local_addr = f->local + s->off,
			.length = (uint32_t)s->len,
			.lkey = ep->d->local_key,
			.remote_addr = f->raddr + s->off,
			.rkey = f->rkey,
		};
		int r = et_fi_qp_post_send(q, &wr, s->insert_pos);

		if (r == -FI_EAGAIN)
			return;
		q->wait_head = s->next;
		if (q->wait_head == NULL)
			q->wait_tail = NULL;
		s->next = NULL;
		if (r) {
			ET_FI_WARN(FI_LOG_EP_DATA, "data QP %u refused a WRITE of %llu bytes\n",
				   et_qp_qpn(q->qp), (unsigned long long)s->len);
			sub_fail_now(ep, s, FI_EIO);
		}
	}
}

void
et_fi_flow_qp_ready(struct et_fi_qp *q)
{
	qp_fill(q);
}

void
et_fi_flow_sent(struct et_fi_ep *ep, struct et_fi_sub *s, int err)
{
	struct et_fi_flow *f = s->f;
	struct et_fi_qp *q = s->q;

	if (err && !f->err)
		f->err = -err;
	free_put(&ep->sub_free, s);
	if (--f->subs_left == 0)
		flow_done(f);
	if (q)
		qp_fill(q);
}

static void
sub_fail_now(struct et_fi_ep *ep, struct et_fi_sub *s, int err)
{
	s->q = NULL;
	et_fi_flow_sent(ep, s, -err);
}

void
et_fi_flow_again(struct et_fi_ep *ep, struct et_fi_sub *s)
{
	/* a WRITE or READ again writes the same bytes to the same place: the
	 * peer's completion waits for DONE (or our FIN), not for the bytes */
	s->q = NULL;
	s->start_ns = 0;
	s->insert_pos = -1;
	s->next = ep->due;
	ep->due = s;
}

/* The batch, planned: its subflows wait for their start. */
static void
plan_batch(struct et_fi_ep *ep, uint64_t now)
{
	struct et_lb_host *lb = &et_process.lb;
	uint32_t n = ep->n_batch, k, i;
	struct et_fi_flow **fv, *f, *fn;
	struct et_lb_flow *fl;
	struct et_lb_sub *out;
	uint32_t *nth;

	if (plan_room(ep, n)) {
		for (f = ep->batch; f; f = fn) {
			fn = f->next;
			f->err = FI_ENOMEM;
			flow_done(f);
		}
		ep->batch = ep->batch_last = NULL;
		ep->n_batch = 0;
		ep->batch_at = 0;
		return;
	}
	fv = ep->plan_fv, fl = ep->plan_fl, out = ep->plan_out, nth = ep->plan_nth;
	memset(nth, 0, n * sizeof(*nth));
	for (i = 0, f = ep->batch; f; f = f->next, i++) {
		fv[i] = f;
		/* a peer outside the conf's topology is planned as if in our rack */
		fl[i] = (struct et_lb_flow){f->conn->peer_host != UINT32_MAX ? f->conn->peer_host
									       : lb->host,
					    f->len};
	}
	ep->batch = ep->batch_last = NULL;
	ep->n_batch = 0;
	ep->batch_at = 0;
	k = et_lb_plan(lb, fl, n, now, out);
	for (i = 0; i < k; i++) {
		struct et_fi_flow *ff = fv[out[i].flow];
		uint64_t off = out[i].off, end = out[i].off + out[i].len;
		uint32_t slot = slot_of(lb, out[i].path, nth[out[i].flow]++);

		/* a WRITE carries at most 2^32 - 1 bytes */
		for (; off < end; off += ET_FI_SUBFLOW_MAX) {
			struct et_fi_sub *s = free_get(&ep->sub_free, sizeof(struct et_fi_sub));

			if (s == NULL) {
				ff->err = FI_ENOMEM;
				break;
			}
			*s = (struct et_fi_sub){.f = ff, .off = off,
						.len = end - off < ET_FI_SUBFLOW_MAX ? end - off
										     : ET_FI_SUBFLOW_MAX,
						.path = out[i].path, .slot = slot,
						.start_ns = out[i].start_ns,
						.insert_pos = out[i].insert_pos};
			ff->subs_left++;
			s->next = ep->due;
			ep->due = s;
		}
	}
	/* a flow the plan left without subflows (no memory) ends here */
	for (i = 0; i < n; i++)
		if (fv[i]->subs_left == 0) {
			if (!fv[i]->err)
				fv[i]->err = FI_ENOMEM;
			flow_done(fv[i]);
		}
}

void
et_fi_flow_poll(struct et_fi_ep *ep, uint64_t now)
{
	struct et_fi_sub **p, *s;

	if (ep->batch && now >= ep->batch_at)
		plan_batch(ep, now);
	for (p = &ep->due; (s = *p) != NULL;) {
		struct et_fi_conn *c = s->f->conn;

		if (s->start_ns > now) {
			p = &s->next;
			continue;
		}
		if (c->state == ET_FI_CONN_RESUMING) { /* new QPs once it has resumed */
			p = &s->next;
			continue;
		}
		*p = s->next;
		s->next = NULL;
		if (c->state == ET_FI_CONN_FAILED ||
		    (s->q = et_fi_conn_data_qp(c, s->slot, s->path)) == NULL) {
			sub_fail_now(ep, s, c->err ? -c->err : FI_EIO);
			continue;
		}
		if (s->q->wait_tail)
			s->q->wait_tail->next = s;
		else
			s->q->wait_head = s;
		s->q->wait_tail = s;
		qp_fill(s->q);
	}
}

/* c failed: what of it waits (in the batch, for its start, for a QP) ends. */
void
et_fi_flow_conn_fail(struct et_fi_conn *c)
{
	struct et_fi_ep *ep = c->ep;
	int err = c->err ? -c->err : FI_EIO;

	for (uint32_t i = 0; i < c->n_data; i++) {
		struct et_fi_qp *q = c->data[i];
		struct et_fi_sub *s;

		while ((s = q->wait_head) != NULL) {
			q->wait_head = s->next;
			sub_fail_now(ep, s, err);
		}
		q->wait_tail = NULL;
	}
	for (struct et_fi_sub **p = &ep->due, *s; (s = *p) != NULL;) {
		if (s->f->conn != c) {
			p = &s->next;
			continue;
		}
		*p = s->next;
		sub_fail_now(ep, s, err);
	}
	for (struct et_fi_flow **p = &ep->batch, *f; (f = *p) != NULL;) {
		if (f->conn != c) {
			p = &f->next;
			continue;
		}
		*p = f->next;
		ep->n_batch--;
		f->err = err;
		flow_done(f);
	}
	ep->batch_last = NULL;
	for (struct et_fi_flow *f = ep->batch; f; f = f->next)
		ep->batch_last = f;
}

void
et_fi_flow_ep_free(struct et_fi_ep *ep)
{
	struct et_fi_flow *f, *fn;
	struct et_fi_sub *s, *sn;

	for (f = ep->batch; f; f = fn) {
		fn = f->next;
		free(f);
	}
	for (struct et_fi_conn *c = ep->conns; c; c = c->next)
		for (uint32_t i = 0; i < c->n_data; i++) {
			for (s = c->data[i]->wait_head; s; s = sn) {
				sn = s->next;
				free_put(&ep->sub_free, s);
			}
			c->data[i]->wait_head = c->data[i]->wait_tail = NULL;
		}
	for (s = ep->due; s; s = sn) {
		sn = s->next;
		free(s);
	}
	free_all(&ep->flow_free);
	free_all(&ep->sub_free);
	free(ep->plan_fv);
	free(ep->plan_fl);
	free(ep->plan_out);
	free(ep->plan_nth);
	ep->batch = ep->batch_last = NULL;
	ep->due = NULL;
	ep->plan_fv = NULL, ep->plan_fl = NULL, ep->plan_out = NULL, ep->plan_nth = NULL;
	ep->plan_cap = ep->plan_out_cap = 0;
}
