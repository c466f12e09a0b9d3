/* SPDX-License-Identifier: BSD-3-Clause
 * Messages and tagged messages.
 *
 * A message of up to FI_ETHEREAL_EAGER bytes goes in one SEND on the
 * connection's control QP, after a header (EAGER).  A larger one is a
 * rendezvous: the sender's RTS says its size; the receiver, once a receive
 * matches it, exposes that receive's bytes for the length of the transfer
 * and answers CTS (address, key, how many bytes it takes); the sender's
 * flow interceptor (flow.c) WRITEs them on its data QPs and, once every
 * byte is acknowledged, says DONE, which completes the receive (a WRITE
 * with immediate counted by the receiver could not be sent again, after
 * its QP failed, without being counted twice).  With
 * FI_ETHEREAL_RDV=read the RTS exposes the sender's
 * bytes instead and the receiver's interceptor READs what it takes, then
 * answers FIN, which completes the send.  WRITE is the default: its data
 * is paced by the ACKs that come back (DCTCP's window), where READ
 * responses are paced at the conf's line rate, and on ports slower than
 * that (the testbed's memif links under a 400 Gbit/s conf) they filled
 * the switches' buffers and the control messages behind them timed out.
 *
 * Every control message carries its connection's seq: one that comes again
 * (sent again after its QPs failed, though it had arrived) is dropped.
 *
 * Matching is in arrival order, which on one connection is the order the
 * peer posted (FI_ORDER_SAS): the posted receives are searched first, and
 * a message that matches none waits in the unexpected queue, its eager
 * bytes copied, until a receive (or FI_PEEK / FI_CLAIM) takes it.  Tags
 * match under the receive's ignore bits; with FI_DIRECTED_RECV a receive
 * for one address matches that peer's messages only.
 */
#include <stdlib.h>
#include <string.h>

#include "et_fi.h"

/* the internal messages (CTS, an RMA write's data) may use these last
 * transmit slots; the consumer's sends wait (-FI_EAGAIN) before them */
#define TX_RESERVE 64u

/* ---- unexpected messages: entries kept for the next ---- */

/* An entry for h, its eager payload copied: NULL if out of memory. */
static struct et_fi_unexp *
ux_new(struct et_fi_ep *ep, const struct et_fi_hdr *h, const uint8_t *payload)
{
	struct et_fi_unexp *u = TAILQ_FIRST(&ep->ux_free);
	uint32_t n = h->op == ET_FI_OP_EAGER ? h->len : 0;

	if (u)
		TAILQ_REMOVE(&ep->ux_free, u, link);
	else if ((u = calloc(1, sizeof(*u))) == NULL)
		return NULL;
	if (et_fi_room(&u->payload_buf, &u->payload_cap, n)) {
		TAILQ_INSERT_HEAD(&ep->ux_free, u, link);
		return NULL;
	}
	u->h = *h;
	u->claim_ctx = NULL;
	u->payload = n ? u->payload_buf : NULL;
	if (n)
		memcpy(u->payload, payload, n);
	return u;
}

static void
ux_free(struct et_fi_ep *ep, struct et_fi_unexp *u)
{
	TAILQ_INSERT_HEAD(&ep->ux_free, u, link);
}

/* ---- control messages ---- */

int
et_fi_ctrl_send(struct et_fi_conn *c, struct et_fi_req *req, const struct et_fi_hdr *h,
		const void *payload, size_t plen)
{
	struct et_fi_ep *ep = c->ep;
	struct et_fi_tslot *ts = ep->free_tslot;
	struct et_fi_hdr hs = *h;
	struct et_send_wr wr;
	int r;

	if (ts == NULL)
		return -FI_EAGAIN;
	if (c->state != ET_FI_CONN_READY || c->ctrl == NULL)
		return -FI_EAGAIN; /* resuming: sent in order once it has */
	hs.seq = c->tx_seq;
	et_fi_hdr_put(ts->buf, &hs);
	if (plen)
		memcpy(ts->buf + ET_FI_HDR_LEN, payload, plen);
	ts->len = (uint32_t)(ET_FI_HDR_LEN + plen);
	wr = (struct et_send_wr){.wr_id = (uint64_t)(uintptr_t)ts, .opcode = ET_WR_SEND,
				 .local_addr = ts->buf, .length = ts->len,
				 .lkey = ep->d->local_key};
	r = et_fi_qp_post_send(c->ctrl, &wr, -1);
	if (r)
		return r;
	c->tx_seq++;
	ep->free_tslot = ts->next;
	ts->req = req;
	ts->q = c->ctrl;
	ts->seq = hs.seq;
	ep->tx_busy++;
	if (req)
		req->inflight++;
	return 0;
}

/* The control message req needs next: a send's EAGER or RTS, a matched
 * receive's CTS, an RMA write's data. */
static int
req_ctrl_post(struct et_fi_req *req)
{
	struct et_fi_hdr h = {0};
	const void *payload = NULL;
	size_t plen = 0;

	switch (req->kind) {
	case ET_FI_REQ_SEND:
		if (req->cts) { /* its bytes are there (an id may be 0: not a flag) */
			h.op = ET_FI_OP_DONE;
			h.rid = req->peer_rid;
			break;
		}
		h.flags = (req->flags & FI_TAGGED ? ET_FI_HF_TAGGED : 0) |
			  (req->op_flags & FI_REMOTE_CQ_DATA ? ET_FI_HF_DATA : 0);
		h.data = (uint32_t)req->data;
		h.tag = req->tag;
		h.len = req->len;
		h.sid = req->id;
		if (req->len <= req->ep->eager) {
			h.op = ET_FI_OP_EAGER;
			payload = req->buf;
			plen = req->len;
			break;
		}
		h.op = ET_FI_OP_RTS;
		if (et_fi_proc.env.rdv_read) {
			/* the receiver reads them: exposed until its FIN */
			if (req->tmp_key == 0) {
				const struct et_mr *mr = et_mr_reg(req->ep->mrs, req->buf, req->len,
								   ET_ACCESS_LOCAL_WRITE |
									   ET_ACCESS_REMOTE_READ);

				if (mr == NULL)
					return -FI_ENOSPC;
				req->tmp_key = mr->key;
				req->tmp_read = true;
			}
			h.flags |= ET_FI_HF_READ;
			h.addr = (uint64_t)(uintptr_t)req->buf;
			h.key = req->tmp_key;
		}
		break;
	case ET_FI_REQ_RECV:
		/* the sender's request, from its RTS */
		h.sid = (uint32_t)req->rma_key;
		if (req->rdv_read) {
			h.op = ET_FI_OP_FIN;
			h.flags = req->err && req->err != FI_ETRUNC ? ET_FI_HF_ERR : 0;
			break;
		}
		h.op = ET_FI_OP_CTS;
		h.rid = req->id;
		h.len = req->msg_len < req->len ? req->msg_len : req->len;
		h.addr = (uint64_t)(uintptr_t)req->buf;
		h.key = req->tmp_key;
		break;
	case ET_FI_REQ_WRITE:
		h.op = ET_FI_OP_WDATA;
		h.flags = ET_FI_HF_DATA;
		h.data = (uint32_t)req->data;
		h.len = req->len;
		break;
	default:
		return -FI_EINVAL;
	}
	return et_fi_ctrl_send(req->conn, req, &h, payload, plen);
}

/* Post now if the connection is ready and nothing waits before it; else
 * queue it in order. */
static int
ctrl_post_or_queue(struct et_fi_req *req)
{
	struct et_fi_conn *c = req->conn;

	/* what waited for room goes first, in order */
	if (c->state == ET_FI_CONN_READY && !TAILQ_EMPTY(&c->pend))
		et_fi_msg_flush_pending(c);
	if (c->state == ET_FI_CONN_READY && TAILQ_EMPTY(&c->pend) &&
	    (req->kind != ET_FI_REQ_SEND || req->ep->tx_busy + TX_RESERVE < ET_FI_TX_SIZE)) {
		int r = req_ctrl_post(req);

		if (r != -FI_EAGAIN)
			return r;
	}
	if (c->state == ET_FI_CONN_FAILED)
		return c->err ? c->err : -FI_EIO;
	/* an inject's bytes are the consumer's again once we return */
	if ((req->op_flags & FI_INJECT) && req->len && req->inject == NULL) {
		int r = et_fi_req_inject(req, req->buf, req->len);

		if (r)
			return r;
	}
	TAILQ_INSERT_TAIL(&c->pend, req, link);
	req->ep->n_pend++;
	/* a message waiting to be sent is in flight: a request whose last
	 * message (DONE, FIN, an RMA write's data) waits here must not
	 * complete, and be freed, when its earlier one is acknowledged */
	req->inflight++;
	return 0;
}

void
et_fi_msg_flush_pending(struct et_fi_conn *c)
{
	struct et_fi_req *req;

	while ((req = TAILQ_FIRST(&c->pend)) != NULL &&
	       (c->state == ET_FI_CONN_READY || c->state == ET_FI_CONN_FAILED)) {
		int r = c->state == ET_FI_CONN_READY ? req_ctrl_post(req)
			: c->err ? c->err : -FI_EIO;

		if (r == -FI_EAGAIN)
			return; /* no room: et_fi_msg_flush_all tries again */
		TAILQ_REMOVE(&c->pend, req, link);
		req->ep->n_pend--;
		req->inflight--; /* off the list: posted (counted again) or failed */
		if (r)
			et_fi_req_fail(req, -r);
	}
}

void
et_fi_msg_flush_all(struct et_fi_ep *ep)
{
	for (struct et_fi_conn *c = ep->conns; c && ep->n_pend; c = c->next)
		if (!TAILQ_EMPTY(&c->pend) && c->state == ET_FI_CONN_READY && ep->free_tslot)
			et_fi_msg_flush_pending(c);
}

void
et_fi_msg_read_done(struct et_fi_req *req, int err)
{
	int r;

	if (err && !req->err)
		req->err = err;
	if (!req->err && req->msg_len > req->len)
		req->err = FI_ETRUNC;
	req->done = true;
	r = ctrl_post_or_queue(req); /* FIN, also in error: the sender waits for it */
	if (r)
		et_fi_req_fail(req, -r);
	else
		et_fi_req_check(req);
}

/* An RMA write's remote CQ data, once its bytes are acknowledged. */
int
et_fi_msg_wdata(struct et_fi_req *req)
{
	req->done = true;
	return ctrl_post_or_queue(req);
}

int
et_fi_msg_done(struct et_fi_req *req)
{
	req->done = true;
	return ctrl_post_or_queue(req);
}

/* ---- sending ---- */

static ssize_t
send_common(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest, uint64_t tag,
	    uint64_t data, void *context, uint64_t flags, bool tagged)
{
	struct et_fi_ep *ep = container_of(fep, struct et_fi_ep, ep);
	struct et_fi_req *req;
	int err;

	if (len && buf == NULL)
		return -FI_EINVAL;
	if (len > ET_FI_MAX_MSG || ((flags & FI_INJECT) && len > ep->eager))
		return -FI_EMSGSIZE;
	et_process_lock();
	if (ep->tx_busy + TX_RESERVE >= ET_FI_TX_SIZE)
		et_process_progress();
	if (ep->tx_busy + TX_RESERVE >= ET_FI_TX_SIZE) {
		et_process_unlock();
		return -FI_EAGAIN;
	}
	req = et_fi_tx_req(ep, ET_FI_REQ_SEND, dest, (void *)buf, len, context, flags,
			   FI_SEND | (tagged ? FI_TAGGED : FI_MSG), &err);
	if (req == NULL) {
		et_process_unlock();
		return err;
	}
	req->tag = tag;
	req->data = data;
	/* eager: done once its SEND is acknowledged; rendezvous: once its bytes are */
	req->done = len <= ep->eager;
	err = ctrl_post_or_queue(req);
	if (err) {
		et_fi_req_free(req);
		et_process_unlock();
		return err;
	}
	et_process_progress();
	et_process_unlock();
	return 0;
}

static ssize_t
msg_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest,
	 void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	return send_common(ep, buf, len, dest, 0, 0, context, e->tx_op_flags, false);
}

static ssize_t
msg_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
	  fi_addr_t dest, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	if (count > 1)
		return -FI_EINVAL;
	return send_common(ep, count ? iov[0].iov_base : NULL, count ? iov[0].iov_len : 0, dest,
			   0, 0, context, e->tx_op_flags, false);
}

static ssize_t
msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	if (msg->iov_count > 1)
		return -FI_EINVAL;
	return send_common(ep, msg->iov_count ? msg->msg_iov[0].iov_base : NULL,
			   msg->iov_count ? msg->msg_iov[0].iov_len : 0, msg->addr, 0, msg->data,
			   msg->context, flags & ~ET_FI_SILENT, false);
}

static ssize_t
msg_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest)
{
	return send_common(ep, buf, len, dest, 0, 0, NULL, FI_INJECT | ET_FI_SILENT, false);
}

static ssize_t
msg_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data,
	     fi_addr_t dest, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	return send_common(ep, buf, len, dest, 0, data, context,
			   e->tx_op_flags | FI_REMOTE_CQ_DATA, false);
}

static ssize_t
msg_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest)
{
	return send_common(ep, buf, len, dest, 0, data, NULL,
			   FI_INJECT | ET_FI_SILENT | FI_REMOTE_CQ_DATA, false);
}

static ssize_t
tag_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest,
	 uint64_t tag, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	return send_common(ep, buf, len, dest, tag, 0, context, e->tx_op_flags, true);
}

static ssize_t
tag_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
	  fi_addr_t dest, uint64_t tag, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	if (count > 1)
		return -FI_EINVAL;
	return send_common(ep, count ? iov[0].iov_base : NULL, count ? iov[0].iov_len : 0, dest,
			   tag, 0, context, e->tx_op_flags, true);
}

static ssize_t
tag_sendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (msg->iov_count > 1)
		return -FI_EINVAL;
	return send_common(ep, msg->iov_count ? msg->msg_iov[0].iov_base : NULL,
			   msg->iov_count ? msg->msg_iov[0].iov_len : 0, msg->addr, msg->tag,
			   msg->data, msg->context, flags & ~ET_FI_SILENT, true);
}

static ssize_t
tag_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t tag)
{
	return send_common(ep, buf, len, dest, tag, 0, NULL, FI_INJECT | ET_FI_SILENT, true);
}

static ssize_t
tag_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data,
	     fi_addr_t dest, uint64_t tag, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	return send_common(ep, buf, len, dest, tag, data, context,
			   e->tx_op_flags | FI_REMOTE_CQ_DATA, true);
}

static ssize_t
tag_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
	       uint64_t tag)
{
	return send_common(ep, buf, len, dest, tag, data, NULL,
			   FI_INJECT | ET_FI_SILENT | FI_REMOTE_CQ_DATA, true);
}

/* ---- matching ---- */

static bool
matches(struct et_fi_ep *ep, const struct et_fi_req *req, const struct et_fi_hdr *h,
	struct et_fi_conn *c)
{
	if ((req->flags & FI_TAGGED) && ((req->tag ^ h->tag) & ~req->ignore))
		return false;
	if (req->addr != FI_ADDR_UNSPEC && (ep->caps & FI_DIRECTED_RECV) &&
	    et_fi_conn_addr(c) != req->addr)
		return false;
	return true;
}

/* A message for req: an eager one's bytes are copied and it completes; a
 * rendezvous exposes req's buffer and answers CTS. */
static void
deliver(struct et_fi_req *req, struct et_fi_conn *c, const struct et_fi_hdr *h,
	const uint8_t *payload)
{
	struct et_fi_ep *ep = req->ep;
	uint64_t n = h->len < req->len ? h->len : req->len;

	req->conn = c;
	req->msg_len = h->len;
	req->tag = h->tag;
	if (h->flags & ET_FI_HF_DATA) {
		req->flags |= FI_REMOTE_CQ_DATA;
		req->data = h->data;
	}
	if (h->op == ET_FI_OP_EAGER) {
		if (n)
			memcpy(req->buf, payload, n);
		req->done = true;
		et_fi_req_complete(req, h->len > req->len ? FI_ETRUNC : 0,
				   h->len > req->len ? h->len - req->len : 0);
		return;
	}
	/* rendezvous: the sender's request id rides in rma_key until the CTS
	 * or FIN */
	req->rma_key = h->sid;
	if (h->flags & ET_FI_HF_READ) {
		struct et_fi_conn *rc;
		int err;

		req->rdv_read = true;
		if (n == 0) {
			et_fi_msg_read_done(req, 0);
			return;
		}
		/* our own connection to the sender: its data QPs carry our READs */
		rc = et_fi_conn_to_addr(ep, c->peer_ip, c->peer_port, &err);
		if (rc)
			err = et_fi_flow_start(rc, req, req->buf, n, h->addr, h->key, true);
		if (err)
			et_fi_msg_read_done(req, -err);
		return;
	}
	if (n) {
		const struct et_mr *mr = et_mr_reg(ep->mrs, req->buf, n,
						   ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);

		if (mr == NULL) {
			/* the peer's RTS stays unanswered: its send never completes;
			 * say why (it is the table of registrations that is full) */
			ET_FI_WARN(FI_LOG_EP_DATA, "no registration left for a rendezvous\n");
			et_fi_req_fail(req, FI_ENOSPC);
			return;
		}
		req->tmp_key = mr->key;
	}
	req->done = n == 0;
	{
		int r = ctrl_post_or_queue(req);

		if (r)
			et_fi_req_fail(req, -r);
	}
}

static struct et_fi_ux_q *
ux_list(struct et_fi_ep *ep, bool tagged)
{
	return tagged ? &ep->ux_tag : &ep->ux_msg;
}

static struct et_fi_req_q *
rx_list(struct et_fi_ep *ep, bool tagged)
{
	return tagged ? &ep->rx_tag : &ep->rx_msg;
}

static void
incoming(struct et_fi_conn *c, const struct et_fi_hdr *h, const uint8_t *payload)
{
	struct et_fi_ep *ep = c->ep;
	bool tagged = h->flags & ET_FI_HF_TAGGED;
	struct et_fi_req_q *posted = rx_list(ep, tagged);
	struct et_fi_unexp *u;
	struct et_fi_req *r;

	TAILQ_FOREACH(r, posted, link)
		if (matches(ep, r, h, c))
			break;
	if (r) {
		TAILQ_REMOVE(posted, r, link);
		ep->rx_posted--;
		deliver(r, c, h, payload);
		return;
	}
	if ((u = ux_new(ep, h, payload)) == NULL) {
		ET_FI_WARN(FI_LOG_EP_DATA, "out of memory: an unexpected message is lost\n");
		return;
	}
	u->conn = c;
	TAILQ_INSERT_TAIL(ux_list(ep, tagged), u, link);
}

void
et_fi_msg_rx(struct et_fi_conn *c, const uint8_t *buf, uint32_t len)
{
	struct et_fi_ep *ep = c->ep;
	struct et_fi_req *req;
	struct et_fi_hdr h;

	if (len < ET_FI_HDR_LEN) {
		ET_FI_WARN(FI_LOG_EP_DATA, "a control message of %u bytes: dropped\n", len);
		return;
	}
	et_fi_hdr_get(buf, &h);
	if (h.version != ET_FI_WIRE_VERSION) {
		ET_FI_WARN(FI_LOG_EP_DATA, "a control message of wire version %u (ours: %u): "
			   "dropped\n", h.version, ET_FI_WIRE_VERSION);
		return;
	}
	if (!et_fi_seq_take(c, h.seq))
		return;
	switch (h.op) {
	case ET_FI_OP_EAGER:
		if (h.len != len - ET_FI_HDR_LEN) {
			ET_FI_WARN(FI_LOG_EP_DATA, "an eager message says %llu bytes, carries %u\n",
				   (unsigned long long)h.len, len - ET_FI_HDR_LEN);
			return;
		}
		incoming(c, &h, buf + ET_FI_HDR_LEN);
		break;
	case ET_FI_OP_RTS:
		incoming(c, &h, NULL);
		break;
	case ET_FI_OP_FIN:
		req = et_fi_req_by_id(ep, h.sid);
		if (req == NULL || req->kind != ET_FI_REQ_SEND || req->done) {
			ET_FI_WARN(FI_LOG_EP_DATA, "a FIN for no waiting send: dropped\n");
			return;
		}
		req->done = true;
		if (h.flags & ET_FI_HF_ERR)
			req->err = FI_EIO;
		et_fi_req_check(req);
		break;
	case ET_FI_OP_CTS:
		req = et_fi_req_by_id(ep, h.sid);
		if (req == NULL || req->kind != ET_FI_REQ_SEND || req->done) {
			ET_FI_WARN(FI_LOG_EP_DATA, "a CTS for no waiting send: dropped\n");
			return;
		}
		if (h.len == 0) { /* the receiver takes none: nothing to say */
			req->done = true;
			et_fi_req_check(req);
			break;
		}
		req->peer_rid = h.rid; /* DONE names it once the bytes are there */
		req->cts = true;
		{
			int r = et_fi_flow_start(c, req, req->buf, h.len, h.addr, h.key, false);

			if (r)
				et_fi_req_fail(req, -r);
		}
		break;
	case ET_FI_OP_DONE:
		req = et_fi_req_by_id(ep, h.rid);
		if (req == NULL || req->kind != ET_FI_REQ_RECV || req->conn != c || req->done) {
			ET_FI_WARN(FI_LOG_EP_DATA, "a DONE for no waiting receive: dropped\n");
			return;
		}
		req->done = true;
		if (req->msg_len > req->len)
			req->err = FI_ETRUNC;
		et_fi_req_check(req);
		break;
	case ET_FI_OP_WDATA:
		if (ep->rx_cq) {
			struct et_fi_cqe e = {
				.e = {.flags = FI_REMOTE_CQ_DATA | FI_REMOTE_WRITE | FI_RMA,
				      .len = h.len, .data = h.data},
				.src = et_fi_conn_addr(c),
			};

			et_fi_cq_push(ep->rx_cq, &e);
		}
		break;
	default:
		ET_FI_WARN(FI_LOG_EP_DATA, "a control message of op %u: dropped\n", h.op);
	}
}

/* ---- receiving ---- */

static ssize_t
peek(struct et_fi_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct et_fi_req probe = {.flags = FI_RECV | FI_TAGGED, .tag = msg->tag,
				  .ignore = msg->ignore, .addr = msg->addr};
	struct et_fi_unexp *u;
	struct et_fi_cqe e = {.src = FI_ADDR_NOTAVAIL};

	et_process_progress();
	TAILQ_FOREACH(u, &ep->ux_tag, link)
		if (!u->claim_ctx && matches(ep, &probe, &u->h, u->conn))
			break;
	e.e.op_context = msg->context;
	if (u == NULL) {
		e.e.flags = FI_RECV | FI_TAGGED;
		e.err = FI_ENOMSG;
		et_fi_cq_push(ep->rx_cq, &e);
		return 0;
	}
	e.e.flags = FI_RECV | FI_TAGGED | (u->h.flags & ET_FI_HF_DATA ? FI_REMOTE_CQ_DATA : 0);
	e.e.len = u->h.len;
	e.e.tag = u->h.tag;
	e.e.data = u->h.flags & ET_FI_HF_DATA ? u->h.data : 0;
	e.src = et_fi_conn_addr(u->conn);
	if (flags & FI_CLAIM) {
		u->claim_ctx = msg->context;
		((struct fi_context *)msg->context)->internal[0] = u;
	} else if (flags & FI_DISCARD) {
		TAILQ_REMOVE(&ep->ux_tag, u, link);
		ux_free(ep, u);
	}
	et_fi_cq_push(ep->rx_cq, &e);
	return 0;
}

static ssize_t
recv_common(struct fid_ep *fep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
	    uint64_t ignore, void *context, uint64_t flags, bool tagged)
{
	struct et_fi_ep *ep = container_of(fep, struct et_fi_ep, ep);
	struct et_fi_ux_q *ux = ux_list(ep, tagged);
	struct et_fi_unexp *u;
	struct et_fi_req *req;

	if (len && buf == NULL)
		return -FI_EINVAL;
	if (flags & FI_MULTI_RECV)
		return -FI_EINVAL; /* not claimed */
	et_process_lock();
	if (!ep->enabled || !ep->rx_cq) {
		et_process_unlock();
		return -FI_EOPBADSTATE;
	}
	if (tagged && (flags & FI_PEEK)) {
		struct fi_msg_tagged m = {.tag = tag, .ignore = ignore, .addr = src,
					  .context = context};
		ssize_t r = peek(ep, &m, flags);

		et_process_unlock();
		return r;
	}
	if (ep->rx_posted >= ET_FI_RX_SIZE || (req = et_fi_req_new(ep, ET_FI_REQ_RECV)) == NULL) {
		et_process_unlock();
		return -FI_EAGAIN;
	}
	req->context = context;
	req->op_flags = flags;
	req->flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	req->tag = tag;
	req->ignore = ignore;
	req->addr = (ep->caps & FI_DIRECTED_RECV) ? src : FI_ADDR_UNSPEC;
	req->buf = buf;
	req->len = len;
	if (tagged && (flags & FI_CLAIM)) {
		/* the message FI_PEEK|FI_CLAIM set aside for this context */
		u = context ? ((struct fi_context *)context)->internal[0] : NULL;
		if (u == NULL || u->claim_ctx != context) {
			et_fi_req_free(req);
			et_process_unlock();
			return -FI_EINVAL;
		}
	} else {
		TAILQ_FOREACH(u, ux, link)
			if (!u->claim_ctx && matches(ep, req, &u->h, u->conn))
				break;
	}
	if (u) {
		TAILQ_REMOVE(ux, u, link);
		if (flags & FI_DISCARD) {
			req->conn = u->conn;
			req->msg_len = 0;
			req->len = 0;
			et_fi_req_complete(req, 0, 0);
			/* a discarded rendezvous: its sender is told it is taken, of no bytes */
			if (u->h.op == ET_FI_OP_RTS) {
				struct et_fi_hdr h = {
					.op = u->h.flags & ET_FI_HF_READ ? ET_FI_OP_FIN : ET_FI_OP_CTS,
					.sid = u->h.sid};

				et_fi_ctrl_send(u->conn, NULL, &h, NULL, 0);
			}
		} else {
			deliver(req, u->conn, &u->h, u->payload);
		}
		ux_free(ep, u);
	} else {
		TAILQ_INSERT_TAIL(rx_list(ep, tagged), req, link);
		ep->rx_posted++;
	}
	et_process_unlock();
	return 0;
}

static ssize_t
msg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	return recv_common(ep, buf, len, src, 0, 0, context, e->rx_op_flags, false);
}

static ssize_t
msg_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
	  void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	if (count > 1)
		return -FI_EINVAL;
	return recv_common(ep, count ? iov[0].iov_base : NULL, count ? iov[0].iov_len : 0, src, 0,
			   0, context, e->rx_op_flags, false);
}

static ssize_t
msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	if (msg->iov_count > 1)
		return -FI_EINVAL;
	return recv_common(ep, msg->iov_count ? msg->msg_iov[0].iov_base : NULL,
			   msg->iov_count ? msg->msg_iov[0].iov_len : 0, msg->addr, 0, 0,
			   msg->context, flags, false);
}

static ssize_t
tag_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t tag,
	 uint64_t ignore, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	return recv_common(ep, buf, len, src, tag, ignore, context, e->rx_op_flags, true);
}

static ssize_t
tag_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
	  uint64_t tag, uint64_t ignore, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	if (count > 1)
		return -FI_EINVAL;
	return recv_common(ep, count ? iov[0].iov_base : NULL, count ? iov[0].iov_len : 0, src,
			   tag, ignore, context, e->rx_op_flags, true);
}

static ssize_t
tag_recvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (msg->iov_count > 1)
		return -FI_EINVAL;
	return recv_common(ep, msg->iov_count ? msg->msg_iov[0].iov_base : NULL,
			   msg->iov_count ? msg->msg_iov[0].iov_len : 0, msg->addr, msg->tag,
			   msg->ignore, msg->context, flags, true);
}

int
et_fi_msg_cancel(struct et_fi_ep *ep, void *context)
{
	struct et_fi_req_q *lists[] = {&ep->rx_msg, &ep->rx_tag};
	struct et_fi_req *r;

	for (size_t k = 0; k < 2; k++)
		TAILQ_FOREACH(r, lists[k], link)
			if (r->context == context) {
				TAILQ_REMOVE(lists[k], r, link);
				ep->rx_posted--;
				r->msg_len = 0;
				et_fi_req_complete(r, FI_ECANCELED, 0);
				return 0;
			}
	return -FI_ENOENT;
}

void
et_fi_msg_ep_free(struct et_fi_ep *ep)
{
	struct et_fi_ux_q *lists[] = {&ep->ux_msg, &ep->ux_tag, &ep->ux_free};
	struct et_fi_unexp *u;

	for (size_t k = 0; k < 3; k++)
		while ((u = TAILQ_FIRST(lists[k])) != NULL) {
			TAILQ_REMOVE(lists[k], u, link);
			free(u->payload_buf);
			free(u);
		}
}

struct fi_ops_msg et_fi_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = msg_recv,
	.recvv = msg_recvv,
	.recvmsg = msg_recvmsg,
	.send = msg_send,
	.sendv = msg_sendv,
	.sendmsg = msg_sendmsg,
	.inject = msg_inject,
	.senddata = msg_senddata,
	.injectdata = msg_injectdata,
};

struct fi_ops_tagged et_fi_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = tag_recv,
	.recvv = tag_recvv,
	.recvmsg = tag_recvmsg,
	.send = tag_send,
	.sendv = tag_sendv,
	.sendmsg = tag_sendmsg,
	.inject = tag_inject,
	.senddata = tag_senddata,
	.injectdata = tag_injectdata,
};
