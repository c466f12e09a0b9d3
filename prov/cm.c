/* SPDX-License-Identifier: BSD-3-Clause
 * How the QPs of a connection meet: RDMA CM on the wire (host/et_rdmacm,
 * the agent on the NIC's QP 1), one per process, every endpoint a
 * listener on its own port of rdma_cm's TCP port space.  No side channel:
 * the REQ's private data says what the asker wants, the REP binds it.
 *
 * Private data of a REQ (after rdma_cm's header): "ETFI", the QP's kind
 * and slot, and the asker's endpoint port (the connection is known by its
 * endpoint's address; the REQ's own source port is the CM's choice); the
 * session: the asker endpoint's instance, whether it resumes one it has
 * with us (resume.c), and the seq it takes next of ours.  A REP's: "ETFI",
 * our instance and the seq we take next.
 *
 * An asker whose peer does not listen yet (its REJ: invalid service ID; an
 * MPI rank or a fabtests server still opening its endpoint) asks again
 * every 100 ms for 3 s, the QP still in RESET, as rdma_cm clients do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "et_fi.h"
#include "et_fi_cm.h"
#include "base/et_bytes.h"
#include "host/et_rdmacm.h"

#define PDATA_MAGIC "ETFI"
#define RETRY_NS 100000000ull
#define GIVE_UP_NS 3000000000ull

#define PD_RESUME 1u

struct cm_pdata {
	char magic[4];
	uint8_t kind, slot;
	uint8_t port[2];   /* the asker's endpoint, big-endian */
	uint8_t flags;     /* PD_RESUME */
	uint8_t rsvd[3];
	uint8_t instance[8], rx_seq[4]; /* big-endian */
};

struct cm_rep_pdata {
	char magic[4];
	uint8_t instance[8], rx_seq[4];
};

/* One QP's connection: its id, or, between two asks, when to ask again.
 * The id's ctx (the process hands it its events). */
struct cm_link {
	struct et_process_cm_holder holder;
	struct et_fi_qp *q;
	struct et_rdmacm_id *id;
	uint32_t rq_psn;
	bool resume;
	uint64_t retry_at, give_up_at;
	struct cm_link *next_wait;   /* on cm.waiting while id is NULL */
};

static struct {
	struct et_rdmacm *rcm;      /* the process's agent (et_process_rdmacm) */
	struct cm_link *waiting;
} cm;

static void on_request(struct et_process_cm_holder *h, const struct et_rdmacm_event *ev,
		       uint64_t now);
static void on_event(struct et_process_cm_holder *h, const struct et_rdmacm_event *ev,
		     uint64_t now);

int
et_fi_cm_listen(struct et_fi_ep *ep)
{
	int r;

	if (cm.rcm == NULL && (cm.rcm = et_process_rdmacm()) == NULL)
		return -FI_ENOMEM;
	ep->cm_holder.on_event = on_request;
	r = et_rdmacm_listen(cm.rcm, ET_RDMA_PS_TCP, ep->port, &ep->cm_holder);
	if (r)
		return r == -EADDRINUSE ? -FI_EADDRINUSE : -FI_ENOMEM;
	ep->cm = cm.rcm;
	return 0;
}

void
et_fi_cm_unlisten(struct et_fi_ep *ep)
{
	if (ep->cm && cm.rcm)
		et_rdmacm_unlisten(cm.rcm, ET_RDMA_PS_TCP, ep->port);
	ep->cm = NULL;
}

static struct et_rdmacm_conn_param
conn_param(uint32_t rq_psn)
{
	const struct et_qp_attr *a = &et_process.c.rc.qp;

	return (struct et_rdmacm_conn_param){
		.psn = rq_psn,
		.mtu = a->mtu,
		.responder_resources = a->max_dest_rd_atomic,
		.initiator_depth = a->max_rd_atomic,
		.retry_count = a->retry_cnt > 7 ? 7 : a->retry_cnt,
		.rnr_retry_count = 7,
	};
}

static int
ask(struct cm_link *l, uint64_t now)
{
	struct et_fi_qp *q = l->q;
	struct cm_pdata pd = {.kind = q->kind, .slot = q->slot,
			      .port = {q->conn->ep->port >> 8, q->conn->ep->port & 255},
			      .flags = l->resume ? PD_RESUME : 0};
	struct et_rdmacm_conn_param p = conn_param(l->rq_psn);
	int err = 0;

	memcpy(pd.magic, PDATA_MAGIC, 4);
	et_store64(pd.instance, q->conn->ep->instance);
	et_store32(pd.rx_seq, q->conn->rx_seq);
	p.pdata = &pd;
	p.pdata_len = sizeof(pd);
	l->id = et_rdmacm_connect(cm.rcm, q->conn->peer_ip, q->conn->peer_port, q->qp, &p,
				  &l->holder, now, &err);
	if (l->id)
		return 0;
	return err == -ENOMEM ? -FI_ENOMEM : err == -ENOSPC ? -FI_EAGAIN : -FI_EINVAL;
}

int
et_fi_cm_connect(struct et_fi_qp *q, uint32_t rq_psn, bool resume)
{
	struct cm_link *l;
	uint64_t now = et_process_now();
	int r;

	if (cm.rcm == NULL)
		return -FI_EOPBADSTATE;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return -FI_ENOMEM;
	l->holder.on_event = on_event;
	l->q = q;
	l->rq_psn = rq_psn;
	l->resume = resume;
	/* a peer that listened once and does not now has closed: no waiting */
	l->give_up_at = resume ? now : now + GIVE_UP_NS;
	if ((r = ask(l, now)) != 0) {
		free(l);
		return r;
	}
	q->cm = l;
	return 0;
}

static void
unwait(struct cm_link *l)
{
	for (struct cm_link **pp = &cm.waiting; *pp; pp = &(*pp)->next_wait)
		if (*pp == l) {
			*pp = l->next_wait;
			return;
		}
}

/* l is done with: its id released (no more events for it), freed. */
static void
link_end(struct cm_link *l, uint64_t now)
{
	if (l->id && cm.rcm)
		et_rdmacm_release(cm.rcm, l->id, now);
	else if (l->id == NULL)
		unwait(l);
	if (l->q)
		l->q->cm = NULL;
	free(l);
}

void
et_fi_cm_drop(struct et_fi_qp *q)
{
	struct cm_link *l = q->cm;
	uint64_t now = et_process_now();

	if (l == NULL)
		return;
	/* the peer is told (DREQ), so its end of the QP goes too */
	if (l->id && cm.rcm && et_rdmacm_id_state(l->id) == ET_CMS_ESTABLISHED)
		et_rdmacm_disconnect(cm.rcm, l->id, now);
	link_end(l, now);
}

/* The endpoint whose listener h is, if it is still open. */
static struct et_fi_ep *
live_ep(struct et_process_cm_holder *h)
{
	for (struct et_fi_ep *ep = et_fi_proc.eps; ep; ep = ep->next)
		if (&ep->cm_holder == h)
			return ep;
	return NULL;
}

static void
on_request(struct et_process_cm_holder *h, const struct et_rdmacm_event *ev, uint64_t now)
{
	struct et_fi_ep *ep = live_ep(h);
	const struct cm_pdata *pd = (const void *)ev->pdata;
	uint32_t rq_psn = et_process_psn();
	struct et_rdmacm_conn_param p = conn_param(rq_psn);
	struct cm_rep_pdata rep;
	struct et_fi_ask ask;
	struct et_fi_qp *q = NULL;
	struct cm_link *l = NULL;
	int err = 0;

	if (ep == NULL || ev->pdata_len < sizeof(*pd) || memcmp(pd->magic, PDATA_MAGIC, 4) ||
	    (pd->kind != ET_FI_QP_CTRL && pd->kind != ET_FI_QP_DATA)) {
		ET_FI_WARN(FI_LOG_EP_CTRL, "a connection request from %u.%u.%u.%u that is not "
			   "a provider's: refused\n", ev->peer_ip >> 24, (ev->peer_ip >> 16) & 255,
			   (ev->peer_ip >> 8) & 255, ev->peer_ip & 255);
		goto refuse;
	}
	ask = (struct et_fi_ask){.ip = ev->peer_ip,
				 .port = (uint16_t)(pd->port[0] << 8 | pd->port[1]),
				 .kind = pd->kind, .slot = pd->slot,
				 .resume = pd->flags & PD_RESUME,
				 .instance = et_load64(pd->instance),
				 .rx_seq = et_load32(pd->rx_seq)};
	q = et_fi_conn_accept(ep, &ask, ev->peer_psn, rq_psn, &err);
	if (q) {
		memcpy(rep.magic, PDATA_MAGIC, 4);
		et_store64(rep.instance, ep->instance);
		et_store32(rep.rx_seq, q->conn->rx_seq);
		p.pdata = &rep;
		p.pdata_len = sizeof(rep);
	} else if (err == -FI_ECONNRESET) {
		ET_FI_WARN(FI_LOG_EP_CTRL, "%u.%u.%u.%u:%u asks for a session we do not have: "
			   "refused\n", ask.ip >> 24, (ask.ip >> 16) & 255, (ask.ip >> 8) & 255,
			   ask.ip & 255, ask.port);
	}
	if (q == NULL || (l = calloc(1, sizeof(*l))) == NULL ||
	    et_rdmacm_accept(cm.rcm, ev->id, q->qp, &p, now)) {
		free(l);
		if (q)
			et_fi_conn_refused(q);
		goto refuse;
	}
	l->holder.on_event = on_event;
	l->q = q;
	l->id = ev->id;
	et_rdmacm_id_set_ctx(ev->id, &l->holder);
	q->cm = l;
	et_fi_conn_accepted(q);
	return;
refuse:
	et_rdmacm_reject(cm.rcm, ev->id, NULL, 0, now);
	et_rdmacm_release(cm.rcm, ev->id, now);
}

static void
on_event(struct et_process_cm_holder *h, const struct et_rdmacm_event *ev, uint64_t now)
{
	struct cm_link *l = (struct cm_link *)h;
	struct et_fi_qp *q = l->q;
	int err;

	if (q == NULL) {
		link_end(l, now);
		return;
	}
	switch (ev->type) {
	case ET_CM_EV_ESTABLISHED:
		if (!q->ready) { /* the passive side was ready at its accept */
			const struct cm_rep_pdata *rp = (const void *)ev->pdata;
			bool ours = ev->pdata_len >= sizeof(*rp) &&
				    memcmp(rp->magic, PDATA_MAGIC, 4) == 0;

			et_fi_conn_established(q, ours ? et_load64(rp->instance) : 0,
					       ours ? et_load32(rp->rx_seq) : 0);
		}
		break;
	case ET_CM_EV_REJECTED:
		if (ev->reason == ET_CM_REJ_INVALID_SERVICE_ID && now < l->give_up_at) {
			et_rdmacm_release(cm.rcm, l->id, now);
			l->id = NULL;
			l->retry_at = now + RETRY_NS;
			l->next_wait = cm.waiting;
			cm.waiting = l;
			break;
		}
		/* a session's peer that refuses it (nobody listens, or it knows
		 * no such session) has closed or started anew; any other reason
		 * (a stale ID, no resources: a busy peer) is asked again */
		err = !l->resume ? -FI_ECONNREFUSED
		      : ev->reason == ET_CM_REJ_INVALID_SERVICE_ID || ev->reason == ET_CM_REJ_CONSUMER
			      ? -FI_ECONNRESET
			      : -FI_EHOSTUNREACH;
		link_end(l, now);
		et_fi_conn_rejected(q, err);
		break;
	case ET_CM_EV_UNREACHABLE:
		link_end(l, now);
		et_fi_conn_rejected(q, -FI_EHOSTUNREACH);
		break;
	case ET_CM_EV_DISCONNECTED:
		/* the peer dropped its end: its QPs failed (the connection
		 * resumes), or it closed (resuming finds nobody listening) */
		link_end(l, now);
		et_fi_conn_disconnected(q);
		break;
	default:
		break;
	}
}

void
et_fi_cm_poll(uint64_t now)
{
	struct cm_link **pp, *l;

	/* the asks to wait for (their peers did not listen yet); the agent's
	 * events come through the process (et_process_cm_holder) */
	for (pp = &cm.waiting; (l = *pp) != NULL;) {
		if (now < l->retry_at) {
			pp = &l->next_wait;
			continue;
		}
		*pp = l->next_wait;
		if (ask(l, now)) {
			struct et_fi_qp *q = l->q;

			q->cm = NULL;
			free(l);
			et_fi_conn_rejected(q, -FI_ECONNREFUSED);
		}
	}
}

void
et_fi_cm_close(void)
{
	struct cm_link *l;

	/* every id goes with the process's agent; the QPs that still name a
	 * link forget it */
	while ((l = cm.waiting) != NULL) {
		cm.waiting = l->next_wait;
		l->id = NULL;
	}
	cm.rcm = NULL;
}
