/* SPDX-License-Identifier: BSD-3-Clause
 * A connection's session, which outlives its QPs.  Every control message
 * carries the connection's seq (one count each way); a message that comes
 * twice is dropped by it.  A send stays in its transmit slot, with its
 * bytes, until the peer acknowledges it.
 *
 * When a QP of the connection runs out of retries (every path it tried
 * lost its packets), or the peer drops its end (its own QP did), the
 * connection breaks: all its QPs go dead (flushed: what they held comes
 * back unacknowledged, control messages to the resend list in seq order,
 * WRITE and READ subflows to the flow interceptor), and it is RESUMING.
 * Its active side asks for a new control QP (RDMA CM, on the path the
 * policy now plans: Ethereal's path state has marked the lost ones bad),
 * naming the session and the seq it takes next; the passive side, which
 * waits for that, answers with its own.  Once the new QP is up and the
 * dead ones' work has all come back, each side drops what the other has
 * taken and sends the rest again, in order, before anything new; data
 * QPs are made anew as subflows need them.  A WRITE or READ sent again
 * moves the same bytes to the same place, and a rendezvous' receive
 * completes on its DONE, a control message, so nothing is done twice.
 *
 * Only when the peer has not answered for the conf's [transport]
 * reconnect-ms (every ask unanswered; for the passive side, no ask) does
 * the connection fail: FI_EHOSTUNREACH on its requests, an error entry on
 * the endpoint's EQ, and the next operation to the peer is told.  A peer
 * that closed its endpoint refuses the ask (nobody listens), and one
 * started anew does not know the session: the connection fails at once
 * (FI_ECONNRESET).
 */
#include <stdlib.h>

#include "et_fi.h"

/* an ask the peer did not answer (the CM's own retries spent) is made
 * again this long after */
#define ASK_AGAIN_NS 100000000ull

static bool
seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

bool
et_fi_seq_take(struct et_fi_conn *c, uint32_t seq)
{
	if (seq == c->rx_seq) {
		c->rx_seq++;
		return true;
	}
	if (seq_before(seq, c->rx_seq)) {
		et_fi_proc.dup_msgs++; /* it had come before its QP failed */
		return false;
	}
	ET_FI_WARN(FI_LOG_EP_DATA, "a control message of seq %u where %u was due: dropped\n", seq,
		   c->rx_seq);
	return false;
}

static void
dead_count(struct et_fi_conn *c, int d)
{
	c->ep->n_dead = (uint32_t)((int)c->ep->n_dead + d);
}

void
et_fi_qp_bury(struct et_fi_conn *c, struct et_fi_qp *q)
{
	struct et_fi_sub *s;

	if (q == c->ctrl)
		c->ctrl = NULL;
	for (uint32_t i = 0; i < c->n_data; i++)
		if (c->data[i] == q) {
			c->data[i] = c->data[--c->n_data];
			break;
		}
	/* subflows that waited for room on it go on a new one */
	while ((s = q->wait_head) != NULL) {
		q->wait_head = s->next;
		et_fi_flow_again(c->ep, s);
	}
	q->wait_tail = NULL;
	q->dead = true;
	q->ready = false;
	if (q->qp)
		et_qp_flush(q->qp);
	q->next_dead = c->dead;
	c->dead = q;
	dead_count(c, 1);
}

/* Dead QPs whose work has all come back go. */
static void
reap(struct et_fi_conn *c)
{
	for (struct et_fi_qp **pp = &c->dead, *q; (q = *pp) != NULL;) {
		if (q->posted || q->recvs) {
			pp = &q->next_dead;
			continue;
		}
		*pp = q->next_dead;
		et_fi_qp_free(q);
		dead_count(c, -1);
	}
}

void
et_fi_conn_break(struct et_fi_conn *c, const char *why)
{
	struct et_fi_ep *ep = c->ep;
	uint64_t now = et_process_now();

	switch (c->state) {
	case ET_FI_CONN_FAILED:
		return;
	case ET_FI_CONN_CONNECTING:
		/* no session yet: the peer never answered for one */
		et_fi_conn_fail(c, -FI_EHOSTUNREACH);
		return;
	case ET_FI_CONN_READY:
		c->state = ET_FI_CONN_RESUMING;
		ep->n_resuming++;
		c->resume_until = now + et_process.c.reconnect_ns;
		ET_FI_WARN(FI_LOG_EP_CTRL,
			   "connection %s %u.%u.%u.%u:%u: %s: resuming on new QPs (for up to "
			   "%llu ms)\n", c->active ? "to" : "from", c->peer_ip >> 24,
			   (c->peer_ip >> 16) & 255, (c->peer_ip >> 8) & 255, c->peer_ip & 255,
			   c->peer_port, why,
			   (unsigned long long)(et_process.c.reconnect_ns / 1000000));
		break;
	case ET_FI_CONN_RESUMING:
		break; /* a new QP failed too: asked again, within the same time */
	}
	c->resume_at = now;
	c->ctrl_up = false;
	if (c->ctrl)
		et_fi_qp_bury(c, c->ctrl);
	while (c->n_data)
		et_fi_qp_bury(c, c->data[c->n_data - 1]);
}

void
et_fi_resend_keep(struct et_fi_conn *c, struct et_fi_tslot *ts)
{
	ts->next = NULL;
	if (c->resend_tail)
		c->resend_tail->next = ts;
	else
		c->resend_head = ts;
	c->resend_tail = ts;
}

/* The session resumed: what the peer has taken (seq before peer_rx_seq;
 * only its acknowledgement was lost) is done, the rest goes again in
 * order, then what waited. */
static void
finish(struct et_fi_conn *c)
{
	struct et_fi_ep *ep = c->ep;
	struct et_fi_tslot *ts;
	uint32_t resent = 0;

	while ((ts = c->resend_head) != NULL) {
		struct et_send_wr wr = {.wr_id = (uint64_t)(uintptr_t)ts, .opcode = ET_WR_SEND,
					.local_addr = ts->buf, .length = ts->len,
					.lkey = ep->d->local_key};

		c->resend_head = ts->next;
		ts->next = NULL;
		if (seq_before(ts->seq, c->peer_rx_seq)) {
			et_fi_tslot_done(ep, ts, 0);
			continue;
		}
		/* the QP holds what the endpoint's slots do: room for them all */
		if (et_fi_qp_post_send(c->ctrl, &wr, -1)) {
			ET_FI_WARN(FI_LOG_EP_DATA, "a new control QP refused a message sent again\n");
			et_fi_tslot_done(ep, ts, FI_EIO);
			continue;
		}
		ts->q = c->ctrl;
		resent++;
	}
	c->resend_tail = NULL;
	c->state = ET_FI_CONN_READY;
	ep->n_resuming--;
	et_fi_proc.reconnects++;
	et_fi_proc.resent += resent;
	ET_FI_WARN(FI_LOG_EP_CTRL, "connection %s %u.%u.%u.%u:%u resumed: %u messages sent again\n",
		   c->active ? "to" : "from", c->peer_ip >> 24, (c->peer_ip >> 16) & 255,
		   (c->peer_ip >> 8) & 255, c->peer_ip & 255, c->peer_port, resent);
	et_fi_msg_flush_pending(c);
}

void
et_fi_resume_poll(struct et_fi_ep *ep, uint64_t now)
{
	for (struct et_fi_conn *c = ep->conns; c && (ep->n_dead || ep->n_resuming); c = c->next) {
		reap(c);
		if (c->state != ET_FI_CONN_RESUMING)
			continue;
		if (now >= c->resume_until) {
			ET_FI_WARN(FI_LOG_EP_CTRL, "connection %s %u.%u.%u.%u:%u: no answer for %llu "
				   "ms: the peer is unreachable\n", c->active ? "to" : "from",
				   c->peer_ip >> 24, (c->peer_ip >> 16) & 255, (c->peer_ip >> 8) & 255,
				   c->peer_ip & 255, c->peer_port,
				   (unsigned long long)(et_process.c.reconnect_ns / 1000000));
			et_fi_conn_fail(c, -FI_EHOSTUNREACH);
			continue;
		}
		if (c->active && c->ctrl == NULL && now >= c->resume_at) {
			int r = et_fi_conn_ctrl_connect(c, true);

			c->resume_at = now + ASK_AGAIN_NS;
			if (r)
				ET_FI_WARN(FI_LOG_EP_CTRL, "cannot ask for a new control QP (%s): "
					   "again in %llu ms\n", fi_strerror(-r),
					   (unsigned long long)(ASK_AGAIN_NS / 1000000));
		}
		/* the old QPs' work back first: the resend list is whole */
		if (c->ctrl_up && c->dead == NULL)
			finish(c);
	}
}

void
et_fi_resend_fail(struct et_fi_conn *c)
{
	struct et_fi_tslot *ts;

	while ((ts = c->resend_head) != NULL) {
		c->resend_head = ts->next;
		et_fi_tslot_done(c->ep, ts, c->err ? -c->err : FI_EIO);
	}
	c->resend_tail = NULL;
}

void
et_fi_session_free(struct et_fi_conn *c)
{
	et_fi_resend_fail(c);
	/* the endpoint goes, its CQs with it: no completion comes back */
	while (c->dead) {
		struct et_fi_qp *q = c->dead;

		c->dead = q->next_dead;
		et_fi_qp_free(q);
		dead_count(c, -1);
	}
}
