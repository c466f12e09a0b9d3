/* SPDX-License-Identifier: BSD-3-Clause
 * Connections.  An endpoint's messages to an address go over the
 * connection it makes to that address on first use (active), and its
 * peers' messages come over the connections they made to it (passive): so
 * each direction is one RC queue pair and in order, and two endpoints
 * that send to each other at once never race to make one.  A connection
 * is a control QP (every message's SEND: eager data, rendezvous requests
 * and answers, an RMA write's CQ data) and data QPs, made as the load
 * balancer's plans need them, that carry the large transfers' WRITEs; the
 * control QP of the passive side answers (CTS) on the same QP pair.
 *
 * The QPs meet through the connection manager (et_fi_cm.h), in band.  A
 * connection outlives its QPs: when they fail it resumes on new ones
 * (resume.c), so what it carries is sent once and in order whatever its
 * paths meet.
 */
#include <stdlib.h>
#include <string.h>

#include "et_fi.h"
#include "et_fi_cm.h"

/* ---- QPs ---- */

static void
post_ctrl_recv(struct et_fi_qp *q, struct et_fi_rslot *rs)
{
	struct et_fi_ep *ep = q->conn->ep;
	struct et_recv_wr rw = {.wr_id = (uint64_t)(uintptr_t)rs, .addr = rs->buf,
				.length = (uint32_t)(ET_FI_HDR_LEN + ep->eager),
				.lkey = ep->d->local_key};

	if (et_qp_post_recv(q->qp, &rw))
		ET_FI_WARN(FI_LOG_EP_DATA, "control QP %u refused a receive\n", et_qp_qpn(q->qp));
	else
		q->recvs++;
}

/* The path a new QP of c starts on (the policy's; a control QP keeps one
 * path, its SENDs in order). */
static uint16_t
first_path(const struct et_fi_conn *c, uint8_t kind)
{
	return et_process_first_path(c->peer_host, kind == ET_FI_QP_CTRL);
}

/* Make q's QP: RESET, its receives posted; the CM connects it. */
static int
qp_make(struct et_fi_conn *c, struct et_fi_qp *q, uint8_t kind, uint8_t slot, uint16_t path,
	uint32_t sq_psn, uint32_t rq_psn)
{
	struct et_fi_ep *ep = c->ep;
	struct et_qp_attr a = et_process.c.rc.qp;

	memset(q, 0, sizeof(*q));
	q->conn = c;
	q->kind = kind;
	q->slot = slot;
	memset(&a.dest_mac, 0xff, sizeof(a.dest_mac)); /* the ToR routes by IP: any MAC */
	a.qpn = 0;
	a.dest_qpn = 0;
	a.dest_ip = c->peer_ip;
	a.sq_psn = sq_psn;
	a.rq_psn = rq_psn;
	a.path_id = path;
	a.rnr_retry = 7;
	a.min_rnr_timer = 2; /* 0.02 ms: receives are posted again at every progress */
	if (kind == ET_FI_QP_CTRL) {
		a.max_send_wr = ET_FI_TX_SIZE;
		a.max_recv_wr = ET_FI_CTRL_RECVS;
		a.multipath = false; /* SENDs cannot be sprayed */
	} else {
		/* WRITEs and READs only: nothing arrives that takes a receive */
		a.max_send_wr = 2 * ET_FI_DATA_DEPTH;
		a.max_recv_wr = 1;
		a.multipath = et_lb_per_packet(&et_process.c.rc.lb);
	}
	q->qp = et_nic_qp_create(&et_process.nic, &a, ep->mrs, &ep->scq, &ep->rcq);
	if (q->qp == NULL)
		return -FI_ENOSPC;
	et_process_qp_made();
	/* receive buffers of its own: a dead QP's flushed receives name theirs */
	if (kind == ET_FI_QP_CTRL) {
		q->rslots = calloc(ET_FI_CTRL_RECVS, sizeof(*q->rslots));
		q->rbuf = malloc((size_t)ET_FI_CTRL_RECVS * (ET_FI_HDR_LEN + ep->eager));
		if (!q->rslots || !q->rbuf)
			return -FI_ENOMEM;
		for (uint32_t i = 0; i < ET_FI_CTRL_RECVS; i++) {
			q->rslots[i] = (struct et_fi_rslot){
				q, q->rbuf + (size_t)i * (ET_FI_HDR_LEN + ep->eager)};
			post_ctrl_recv(q, &q->rslots[i]);
		}
	}
	/* Ethereal's path state (and each policy's hooks) on the QPs that send:
	 * ours, and the control QP the peer made (it answers CTS and FIN); a
	 * control QP of a per-packet policy keeps its path (SENDs go in order) */
	if (c->peer_host != UINT32_MAX && (c->active || kind == ET_FI_QP_CTRL) &&
	    (kind == ET_FI_QP_DATA || !et_lb_per_packet(&et_process.c.rc.lb))) {
		if (et_lb_attach(&et_process.lb, q->qp, c->peer_host, &q->lb_state))
			return -FI_ENOMEM;
		q->lb_attached = true;
	}
	return 0;
}

void
et_fi_qp_free(struct et_fi_qp *q)
{
	if (q == NULL)
		return;
	if (q->qp) {
		et_fi_cm_drop(q);
		if (q->lb_attached)
			et_lb_detach(&et_process.lb, q->lb_state);
		et_process_qp_gone(q->qp);
		et_nic_qp_destroy(&et_process.nic, q->qp);
	}
	free(q->rslots);
	free(q->rbuf);
	free(q);
}

int
et_fi_qp_post_send(struct et_fi_qp *q, const struct et_send_wr *wr, int insert_pos)
{
	int r = et_qp_post_send(q->qp, wr);

	if (r)
		return r == -ENOSPC ? -FI_EAGAIN : -FI_EIO;
	et_nic_activate(&et_process.nic, q->qp, insert_pos);
	q->posted++;
	return 0;
}

/* ---- connections ---- */

static struct et_fi_conn *
conn_new(struct et_fi_ep *ep, uint32_t ip, uint16_t port, bool active)
{
	struct et_fi_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->ep = ep;
	c->peer_ip = ip;
	c->peer_port = port;
	c->active = active;
	c->state = ET_FI_CONN_CONNECTING;
	c->peer_host = et_process_host_of_ip(ip);
	c->av_addr = FI_ADDR_NOTAVAIL;
	c->av_gen = UINT64_MAX;
	TAILQ_INIT(&c->pend);
	c->next = ep->conns;
	ep->conns = c;
	return c;
}

/* Make a QP of c and ask the peer for its end (the first PSN we send is
 * the one the peer's REP names): *out, NULL on failure. */
static int
qp_connect(struct et_fi_conn *c, struct et_fi_qp **out, uint8_t kind, uint8_t slot,
	   uint16_t path, bool resume)
{
	uint32_t rq = et_process_psn();
	struct et_fi_qp *q = malloc(sizeof(*q));
	int r = q ? qp_make(c, q, kind, slot, path, 0, rq) : -FI_ENOMEM;

	if (r == 0)
		r = et_fi_cm_connect(q, rq, resume);
	if (r) {
		et_fi_qp_free(q);
		q = NULL;
	}
	*out = q;
	return r;
}

int
et_fi_conn_ctrl_connect(struct et_fi_conn *c, bool resume)
{
	return qp_connect(c, &c->ctrl, ET_FI_QP_CTRL, 0, first_path(c, ET_FI_QP_CTRL), resume);
}

struct et_fi_conn *
et_fi_conn_to_addr(struct et_fi_ep *ep, uint32_t ip, uint16_t port, int *err)
{
	struct et_fi_conn *c;

	*err = 0;
	for (c = ep->conns; c; c = c->next) {
		if (!c->active || c->peer_ip != ip || c->peer_port != port)
			continue;
		if (c->state != ET_FI_CONN_FAILED)
			return c;
		/* a peer found unreachable: the next operation to it is told so;
		 * the one after asks again */
		if (c->err == -FI_EHOSTUNREACH && !c->told) {
			c->told = true;
			*err = c->err;
			return NULL;
		}
	}
	c = conn_new(ep, ip, port, true);
	if (c == NULL) {
		*err = -FI_ENOMEM;
		return NULL;
	}
	if ((*err = et_fi_conn_ctrl_connect(c, false)) != 0) {
		c->state = ET_FI_CONN_FAILED;
		c->err = *err;
		c->told = true;
		return NULL;
	}
	return c;
}

struct et_fi_conn *
et_fi_conn_to(struct et_fi_ep *ep, fi_addr_t a, int *err)
{
	const struct et_fi_addr *ad = et_fi_av_get(ep->av, a);
	struct et_fi_conn *c;

	*err = 0;
	if (ad == NULL) {
		*err = -FI_EINVAL;
		return NULL;
	}
	if (a < ep->n_out && (c = ep->out[a]) != NULL && c->peer_ip == ad->ip &&
	    c->peer_port == ad->port && c->state != ET_FI_CONN_FAILED)
		return c;
	if (a >= ep->n_out) {
		uint32_t n = ep->n_out ? ep->n_out : 16;
		struct et_fi_conn **o;

		while (n <= a)
			n *= 2;
		if ((o = realloc(ep->out, n * sizeof(*o))) == NULL) {
			*err = -FI_ENOMEM;
			return NULL;
		}
		memset(o + ep->n_out, 0, (n - ep->n_out) * sizeof(*o));
		ep->out = o;
		ep->n_out = n;
	}
	/* an address inserted again (or under another index) keeps its
	 * connection; a failed one is made again */
	c = et_fi_conn_to_addr(ep, ad->ip, ad->port, err);
	if (c)
		ep->out[a] = c;
	return c;
}

struct et_fi_qp *
et_fi_conn_data_qp(struct et_fi_conn *c, uint32_t slot, uint16_t path)
{
	struct et_fi_qp *q;

	for (uint32_t i = 0; i < c->n_data; i++)
		if (c->data[i]->slot == slot)
			return c->data[i];
	if (c->n_data == ET_FI_MAX_DQP)
		return c->data[slot % ET_FI_MAX_DQP];
	if (qp_connect(c, &q, ET_FI_QP_DATA, (uint8_t)slot, path, false))
		return NULL;
	c->data[c->n_data++] = q;
	return q;
}

fi_addr_t
et_fi_conn_addr(struct et_fi_conn *c)
{
	if (c->av_gen != c->ep->av->gen) {
		c->av_addr = et_fi_av_find(c->ep->av, c->peer_ip, c->peer_port);
		c->av_gen = c->ep->av->gen;
	}
	return c->av_addr;
}

void
et_fi_conn_established(struct et_fi_qp *q, uint64_t peer_instance, uint32_t peer_rx_seq)
{
	struct et_fi_conn *c = q->conn;

	q->ready = true;
	if (q->dead)
		return;
	if (q->kind == ET_FI_QP_DATA) {
		et_fi_flow_qp_ready(q);
		return;
	}
	c->peer_instance = peer_instance;
	if (c->state == ET_FI_CONN_RESUMING) {
		/* resume.c sends again what the peer has not taken, first */
		c->peer_rx_seq = peer_rx_seq;
		c->ctrl_up = true;
		return;
	}
	c->state = ET_FI_CONN_READY;
	et_fi_msg_flush_pending(c);
}

void
et_fi_conn_rejected(struct et_fi_qp *q, int err)
{
	struct et_fi_conn *c = q->conn;

	if (q->dead)
		return;
	ET_FI_WARN(FI_LOG_EP_CTRL, "connection to %u.%u.%u.%u:%u %s (%s)\n", c->peer_ip >> 24,
		   (c->peer_ip >> 16) & 255, (c->peer_ip >> 8) & 255, c->peer_ip & 255,
		   c->peer_port, c->state == ET_FI_CONN_RESUMING ? "not resumed" : "refused",
		   fi_strerror(-err));
	/* a resume nobody answered is asked again until reconnect-ms passed */
	if (c->state == ET_FI_CONN_RESUMING && err == -FI_EHOSTUNREACH) {
		et_fi_qp_bury(c, q);
		return;
	}
	et_fi_conn_fail(c, err);
}

void
et_fi_conn_disconnected(struct et_fi_qp *q)
{
	struct et_fi_conn *c = q->conn;

	if (q->dead || c->state == ET_FI_CONN_FAILED)
		return;
	et_fi_conn_break(c, "the peer dropped its end");
}

/* The passive connection a request names: the asker's session, if we
 * have it; a new one for a control QP that starts one (the old session of
 * that address, a process gone, ends); NULL with *err otherwise. */
static struct et_fi_conn *
session_of(struct et_fi_ep *ep, const struct et_fi_ask *ask, int *err)
{
	struct et_fi_conn *c;

	for (c = ep->conns; c; c = c->next)
		if (!c->active && c->peer_ip == ask->ip && c->peer_port == ask->port &&
		    c->state != ET_FI_CONN_FAILED)
			break;
	if (c && c->peer_instance == ask->instance && (ask->resume || ask->kind != ET_FI_QP_CTRL))
		return c;
	if (ask->resume || ask->kind != ET_FI_QP_CTRL) {
		*err = -FI_ECONNRESET; /* a session we never had, or ended */
		return NULL;
	}
	/* the peer started over (a new process on the address, or the same
	 * endpoint after it gave up): the old connection is gone */
	if (c)
		et_fi_conn_fail(c, -FI_ECONNRESET);
	if ((c = conn_new(ep, ask->ip, ask->port, false)) == NULL) {
		*err = -FI_ENOMEM;
		return NULL;
	}
	c->peer_instance = ask->instance;
	return c;
}

struct et_fi_qp *
et_fi_conn_accept(struct et_fi_ep *ep, const struct et_fi_ask *ask, uint32_t sq_psn,
		  uint32_t rq_psn, int *err)
{
	struct et_fi_conn *c = session_of(ep, ask, err);
	struct et_fi_qp *q;

	if (c == NULL)
		return NULL;
	if (ask->kind == ET_FI_QP_CTRL && ask->resume) {
		/* the peer's QPs failed, or ours did: whatever of ours is left of
		 * the session goes dead, and what it took of ours is known */
		if (c->state != ET_FI_CONN_RESUMING)
			et_fi_conn_break(c, "the peer resumes");
		if (c->ctrl) /* an answer of ours the peer gave up on */
			et_fi_qp_bury(c, c->ctrl);
		c->peer_rx_seq = ask->rx_seq;
	}
	if (ask->kind == ET_FI_QP_DATA && c->n_data == ET_FI_MAX_DQP) {
		*err = -FI_ENOSPC;
		return NULL;
	}
	if ((q = malloc(sizeof(*q))) == NULL) {
		*err = -FI_ENOMEM;
		return NULL;
	}
	if (qp_make(c, q, ask->kind, ask->slot,
		    ask->kind == ET_FI_QP_CTRL ? first_path(c, ET_FI_QP_CTRL) : 0, sq_psn,
		    rq_psn)) {
		et_fi_qp_free(q);
		*err = -FI_ENOMEM;
		return NULL;
	}
	if (ask->kind == ET_FI_QP_CTRL)
		c->ctrl = q;
	else
		c->data[c->n_data++] = q;
	return q;
}

void
et_fi_conn_accepted(struct et_fi_qp *q)
{
	struct et_fi_conn *c = q->conn;

	q->ready = true;
	if (q->kind != ET_FI_QP_CTRL)
		return;
	if (c->state == ET_FI_CONN_RESUMING)
		c->ctrl_up = true; /* resume.c finishes it */
	else
		c->state = ET_FI_CONN_READY;
}

void
et_fi_conn_refused(struct et_fi_qp *q)
{
	struct et_fi_conn *c = q->conn;

	if (q == c->ctrl) {
		c->ctrl = NULL;
		if (c->state != ET_FI_CONN_RESUMING)
			c->state = ET_FI_CONN_FAILED;
	}
	for (uint32_t i = 0; i < c->n_data; i++)
		if (c->data[i] == q)
			c->data[i] = c->data[--c->n_data];
	et_fi_qp_free(q);
}

/* ---- failures ---- */

void
et_fi_conn_fail(struct et_fi_conn *c, int err)
{
	struct et_fi_ep *ep = c->ep;

	if (c->state == ET_FI_CONN_FAILED)
		return;
	if (c->state == ET_FI_CONN_RESUMING)
		ep->n_resuming--;
	c->state = ET_FI_CONN_FAILED;
	c->err = err;
	et_fi_flow_conn_fail(c);
	et_fi_msg_flush_pending(c); /* what waited for it ends first, off its list */
	et_fi_resend_fail(c);       /* what waited to be sent again ends too */
	/* its QPs go: what they still hold comes back flushed */
	if (c->ctrl)
		et_fi_qp_bury(c, c->ctrl);
	while (c->n_data)
		et_fi_qp_bury(c, c->data[c->n_data - 1]);
	/* requests with nothing in flight on it end now; the rest end as their
	 * flushed work requests come back */
	for (uint32_t i = 0; i < ep->n_reqs; i++) {
		struct et_fi_req *r = ep->reqs[i];

		if (!((uintptr_t)r & 1) && r->conn == c)
			et_fi_req_fail(r, -err);
	}
	if (c->active)
		for (uint32_t a = 0; a < ep->n_out; a++)
			if (ep->out[a] == c)
				ep->out[a] = NULL;
	if (err == -FI_EHOSTUNREACH) {
		et_fi_proc.lost_peers++;
		if (ep->eq) {
			struct fi_eq_err_entry e = {.fid = &ep->ep.fid, .context = ep->ep.fid.context,
						    .data = et_fi_conn_addr(c), .err = FI_EHOSTUNREACH};

			et_fi_eq_push(ep->eq, FI_NOTIFY, &e, sizeof(e), true);
		}
	}
}

/* Why a QP of c failed, with what it met: for the consumer's log. */
static void
warn_failed(const struct et_fi_qp *q, const struct et_wc *wc)
{
	const struct et_fi_conn *c = q->conn;
	const struct et_qp_stats *st = et_qp_stats(q->qp);

	ET_FI_WARN(FI_LOG_EP_DATA,
		   "%s QP %u to %u.%u.%u.%u:%u: %s (timeouts %llu, retransmits %llu, ACKs in "
		   "%llu, RNR NAKs in %llu, CNPs in %llu, requests out %u)\n",
		   q->kind == ET_FI_QP_CTRL ? "control" : "data", wc->qpn, c->peer_ip >> 24,
		   (c->peer_ip >> 16) & 255, (c->peer_ip >> 8) & 255, c->peer_ip & 255, c->peer_port,
		   et_wc_status_str(wc->status), (unsigned long long)st->timeouts,
		   (unsigned long long)st->retransmits, (unsigned long long)st->acks_rx,
		   (unsigned long long)st->rnr_naks_rx, (unsigned long long)st->cnps_rx,
		   et_qp_sq_outstanding(q->qp));
}

/* ---- progress: the QPs' completions ---- */

/* A work request of q's came back in error: what it says of c.  A QP that
 * ran out of retries (or an RNR's) breaks the connection, which resumes
 * on new QPs; any other error (a remote access error: a bad key) is the
 * consumer's, and fails it. */
static void
qp_error(struct et_fi_qp *q, const struct et_wc *wc)
{
	struct et_fi_conn *c = q->conn;

	if (wc->status == ET_WC_WR_FLUSH_ERR || q->dead || c->state == ET_FI_CONN_FAILED)
		return;
	warn_failed(q, wc);
	if (wc->status == ET_WC_RETRY_EXC_ERR || wc->status == ET_WC_RNR_RETRY_EXC_ERR)
		et_fi_conn_break(c, et_wc_status_str(wc->status));
	else
		et_fi_conn_fail(c, wc->status == ET_WC_REM_ACCESS_ERR ? -FI_EACCES : -FI_EIO);
}

static void
recv_done(struct et_fi_ep *ep, const struct et_wc *wc)
{
	struct et_fi_rslot *rs = (struct et_fi_rslot *)(uintptr_t)wc->wr_id;
	struct et_fi_qp *q = rs->q;
	struct et_fi_conn *c = q->conn;

	(void)ep;
	q->recvs--;
	if (wc->status != ET_WC_SUCCESS) {
		qp_error(q, wc);
		return;
	}
	/* what a QP took before it died is the peer's all the same (its seq
	 * says whether we have it already) */
	if (wc->opcode == ET_WC_RECV && c->state != ET_FI_CONN_FAILED)
		et_fi_msg_rx(c, rs->buf, wc->byte_len);
	if (!q->dead && c->state != ET_FI_CONN_FAILED)
		post_ctrl_recv(q, rs);
}

static void
send_done(struct et_fi_ep *ep, const struct et_wc *wc)
{
	bool ok = wc->status == ET_WC_SUCCESS;

	if (wc->wr_id & ET_FI_WR_DATA) {
		struct et_fi_sub *s = (struct et_fi_sub *)(uintptr_t)(wc->wr_id & ~(uint64_t)ET_FI_WR_DATA);
		struct et_fi_conn *c = s->q->conn;

		s->q->posted--;
		if (!ok)
			qp_error(s->q, wc);
		if (!ok && c->state == ET_FI_CONN_RESUMING) {
			et_fi_flow_again(ep, s); /* on a new QP, once it resumed */
			return;
		}
		if (!ok && !s->f->req->wc_status)
			s->f->req->wc_status = wc->status;
		et_fi_flow_sent(ep, s, ok ? 0 : c->err ? c->err : -FI_EIO);
		return;
	}
	struct et_fi_tslot *ts = (struct et_fi_tslot *)(uintptr_t)wc->wr_id;
	struct et_fi_conn *c = ts->q->conn;

	ts->q->posted--;
	if (!ok)
		qp_error(ts->q, wc);
	if (!ok && c->state == ET_FI_CONN_RESUMING) {
		et_fi_resend_keep(c, ts);
		return;
	}
	if (!ok && ts->req && !ts->req->wc_status)
		ts->req->wc_status = wc->status;
	et_fi_tslot_done(ep, ts, ok ? 0 : c->err ? -c->err : FI_EIO);
}

void
et_fi_tslot_done(struct et_fi_ep *ep, struct et_fi_tslot *ts, int err)
{
	struct et_fi_req *req = ts->req;

	ts->req = NULL;
	ts->next = ep->free_tslot;
	ep->free_tslot = ts;
	ep->tx_busy--;
	if (req == NULL)
		return;
	req->inflight--;
	if (err)
		et_fi_req_fail(req, err);
	else
		et_fi_req_check(req);
}

void
et_fi_conn_poll(struct et_fi_ep *ep)
{
	struct et_wc wc[32];
	uint32_t k;

	/* sends first: a QP that failed says why there (retries spent, a
	 * NAK), and its receives come back flushed, saying nothing */
	while ((k = et_cq_poll(&ep->scq, wc, 32)) > 0)
		for (uint32_t i = 0; i < k; i++)
			send_done(ep, &wc[i]);
	while ((k = et_cq_poll(&ep->rcq, wc, 32)) > 0)
		for (uint32_t i = 0; i < k; i++)
			recv_done(ep, &wc[i]);
	if (ep->n_resuming || ep->n_dead)
		et_fi_resume_poll(ep, et_process_now());
	if (ep->n_pend)
		et_fi_msg_flush_all(ep);
}

void
et_fi_conns_free(struct et_fi_ep *ep)
{
	struct et_fi_conn *c, *n;

	for (c = ep->conns; c; c = n) {
		n = c->next;
		et_fi_session_free(c);
		et_fi_qp_free(c->ctrl);
		for (uint32_t i = 0; i < c->n_data; i++)
			et_fi_qp_free(c->data[i]);
		free(c);
	}
	ep->conns = NULL;
}
