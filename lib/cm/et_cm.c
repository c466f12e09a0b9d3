/* SPDX-License-Identifier: BSD-3-Clause
 * The CM's state machine (IBTA vol. 1 12.9), sans I/O.  Each connection
 * keeps the one MAD it may have to send again: its REQ, REP or DREQ until
 * answered (retransmitted on its timeout, max CM retries times), then the
 * answer it gave (RTU, MRA, DREP) for a peer that repeats itself.
 */
#include "cm/et_cm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/et_rand.h"
#include "base/et_ring.h"
#include "cm/et_cm_priv.h"
#include "wire/et_gid.h"

/* MADs waiting to leave, events waiting for the consumer: rings that
 * start this small and double when full (a consumer may connect a
 * thousand at once before it drains them), up to RING_MAX; powers of 2,
 * so that position p's place, p % cap, survives the count's wrap */
#define RING_FIRST 64u
#define RING_MAX (1u << 20)

ET_CTR_DEFINE(et_cm_ctrs, struct et_cm_stats, ET_CM_COUNTERS);

void
et_cm_conf_default(struct et_cm_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->max_conns = ET_CM_MAX_CONNS; /* memory is taken as they are made */
	c->response_timeout = 16;
	c->packet_life = 12;
	c->max_cm_retries = 7;
	c->mra_timeout = 20;
	c->timewait_ns = 500000000ull;
	c->answer_gap_ns = 10000000ull;
	c->answer_burst = 16;
	c->req_hold_ns = 100000000ull;
	c->seed = 1;
}

const char *
et_cm_state_name(enum et_cm_state s)
{
	static const char *const names[] = {
		[ET_CMS_IDLE] = "idle", [ET_CMS_REQ_SENT] = "REQ sent",
		[ET_CMS_MRA_REQ_RCVD] = "MRA for REQ received", [ET_CMS_REQ_RCVD] = "REQ received",
		[ET_CMS_MRA_REQ_SENT] = "MRA for REQ sent", [ET_CMS_REP_SENT] = "REP sent",
		[ET_CMS_MRA_REP_RCVD] = "MRA for REP received", [ET_CMS_ESTABLISHED] = "established",
		[ET_CMS_DREQ_SENT] = "DREQ sent", [ET_CMS_TIMEWAIT] = "time wait",
		[ET_CMS_CLOSED] = "closed", [ET_CMS_SIDR_REQ_SENT] = "SIDR_REQ sent",
		[ET_CMS_SIDR_REQ_RCVD] = "SIDR_REQ received",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *
et_cm_event_name(enum et_cm_event_type t)
{
	static const char *const names[] = {
		[ET_CM_EV_CONNECT_REQUEST] = "connect request", [ET_CM_EV_ESTABLISHED] = "established",
		[ET_CM_EV_REJECTED] = "rejected", [ET_CM_EV_UNREACHABLE] = "unreachable",
		[ET_CM_EV_DISCONNECTED] = "disconnected", [ET_CM_EV_SIDR_REPLY] = "SIDR reply",
	};

	return (unsigned int)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

/* ---- life cycle ---- */

struct et_cm *
et_cm_create(const struct et_cm_conf *c)
{
	struct et_cm *cm;

	if (c->max_conns == 0 || c->max_conns > ET_CM_MAX_CONNS || c->response_timeout > 31 ||
	    c->packet_life > 31 || c->max_cm_retries > 15 || c->mra_timeout > 31)
		return NULL;
	cm = calloc(1, sizeof(*cm));
	if (cm == NULL)
		return NULL;
	cm->conf = *c;
	cm->rng = (c->seed ^ 0x5bd1e9955bd1e995ull) | 1;
	cm->id_mask = (uint32_t)et_rand_next(&cm->rng);
	cm->tid_hi = (uint32_t)et_rand_next(&cm->rng);
	cm->out_cap = cm->ev_cap = RING_FIRST;
	cm->out = calloc(RING_FIRST, sizeof(*cm->out));
	cm->ev = calloc(RING_FIRST, sizeof(*cm->ev));
	et_token_bucket_init(&cm->answers, c->answer_gap_ns, c->answer_burst);
	if (et_cm_table_init(&cm->t, c->max_conns, et_rand_next(&cm->rng)) || !cm->out || !cm->ev) {
		et_cm_destroy(cm);
		return NULL;
	}
	return cm;
}

void
et_cm_destroy(struct et_cm *cm)
{
	if (cm == NULL)
		return;
	for (uint32_t i = 0; i < cm->t.cap; i++)
		free(et_cm_table_conn(&cm->t, i));
	et_cm_table_free(&cm->t);
	free(cm->out);
	free(cm->ev);
	free(cm);
}

const struct et_cm_stats *
et_cm_stats(const struct et_cm *cm)
{
	return &cm->st;
}

/* ---- connections and their timers ---- */

/* A connection in a free slot (the table hands out the one freed longest
 * ago, and a slot's generation changes its ID: a late MAD for a closed
 * connection finds no successor); NULL when none is free. */
struct et_cm_conn *
et_cm_conn_new(struct et_cm *cm)
{
	struct et_cm_conn *c = calloc(1, sizeof(*c));
	uint32_t i;

	if (c == NULL)
		return NULL;
	if ((i = et_cm_table_take(&cm->t, c)) == ET_CM_NO_SLOT) {
		free(c);
		return NULL;
	}
	c->idx = i;
	c->local_id = ((uint32_t)et_cm_table_gen(&cm->t, i) << 16 | i) ^ cm->id_mask;
	c->tid = (uint64_t)cm->tid_hi << 32 | c->local_id;
	return c;
}

void
et_cm_conn_free(struct et_cm *cm, struct et_cm_conn *c)
{
	et_cm_table_put(&cm->t, c->idx);
	free(c);
}

uint64_t
et_cm_deadline(struct et_cm *cm)
{
	uint64_t t = et_cm_table_deadline(&cm->t);

	if (cm->held_recheck)
		return 0;
	for (uint32_t i = 0; i < cm->n_held; i++)
		if (cm->held[i].until < t)
			t = cm->held[i].until;
	return t;
}

/* ---- what leaves: MADs and events ---- */

void
et_cm_out_push(struct et_cm *cm, uint32_t dst_ip, const uint8_t *mad)
{
	struct et_cm_out *o = et_ring_push((void **)&cm->out, &cm->out_cap, cm->out_head,
					   &cm->out_tail, sizeof(*cm->out), RING_MAX);

	if (o == NULL) {
		cm->st.tx_full++;
		return;
	}
	o->dst_ip = dst_ip;
	memcpy(o->mad, mad, ET_MAD_LEN);
	cm->st.tx_mads++;
}

bool
et_cm_pop_out(struct et_cm *cm, struct et_cm_out *o)
{
	if (cm->out_head == cm->out_tail)
		return false;
	*o = cm->out[cm->out_head++ % cm->out_cap];
	return true;
}

/* A new event of c's (none once the consumer let go): NULL when there is
 * none to fill. */
struct et_cm_event *
et_cm_event_new(struct et_cm *cm, struct et_cm_conn *c, enum et_cm_event_type t)
{
	struct et_cm_event *e;

	if (c->released)
		return NULL;
	e = et_ring_push((void **)&cm->ev, &cm->ev_cap, cm->ev_head, &cm->ev_tail,
			 sizeof(*cm->ev), RING_MAX);
	if (e == NULL) {
		cm->st.events_lost++;
		return NULL;
	}
	c->last_ev = cm->ev_tail - 1;
	c->n_events++;
	memset(e, 0, offsetof(struct et_cm_event, pdata));
	e->type = t;
	e->conn = c;
	e->ctx = c->ctx;
	e->service_id = c->service_id;
	e->peer_ip = c->peer_ip;
	e->peer_qpn = c->remote_qpn;
	return e;
}

void
et_cm_event_pdata(struct et_cm_event *e, const uint8_t *p, uint16_t len)
{
	if (e == NULL)
		return;
	if (len > 0)
		memcpy(e->pdata, p, len);
	e->pdata_len = len;
}

bool
et_cm_poll_event(struct et_cm *cm, struct et_cm_event *ev)
{
	while (cm->ev_head != cm->ev_tail) {
		*ev = cm->ev[cm->ev_head++ % cm->ev_cap];
		if (ev->conn) { /* else its connection was let go */
			ev->conn->n_events--;
			return true;
		}
	}
	return false;
}

/* m built into c->msg and sent: the MAD c answers again, or sends again on
 * its timeout when timeout_ns is not 0. */
void
et_cm_send_keep(struct et_cm *cm, struct et_cm_conn *c, const struct et_cm_msg *m,
		uint64_t now, uint64_t timeout_ns)
{
	if (et_cm_build(c->msg, m) < 0)
		return; /* our own fields are checked before: cannot happen */
	c->msg_attr = m->hdr.attr_id;
	et_cm_out_push(cm, c->peer_ip, c->msg);
	if (timeout_ns) {
		c->timeout_ns = timeout_ns;
		c->retries_left = c->max_retries;
		et_cm_arm(cm, c, now + timeout_ns);
	} else {
		et_cm_disarm(cm, c);
	}
}

/* An answer to a MAD of no connection of ours, within the rate limit. */
void
et_cm_answer_unknown(struct et_cm *cm, uint32_t dst_ip, const struct et_cm_msg *m, uint64_t now)
{
	uint8_t mad[ET_MAD_LEN];

	if (!et_token_bucket_take(&cm->answers, now)) {
		cm->st.answers_limited++;
		return;
	}
	if (et_cm_build(mad, m) == ET_MAD_LEN)
		et_cm_out_push(cm, dst_ip, mad);
	if (m->hdr.attr_id == ET_CM_REJ)
		cm->st.rej_sent++;
}

void
et_cm_rej_init(struct et_cm_msg *m, uint64_t tid, uint32_t local, uint32_t remote,
	       uint8_t kind, uint16_t reason)
{
	et_cm_msg_init(m, ET_CM_REJ, tid);
	m->u.rej.local_comm_id = local;
	m->u.rej.remote_comm_id = remote;
	m->u.rej.msg_rejected = kind;
	m->u.rej.reason = reason;
}

/* The REJ that ends c: our GUID as the ARI of a timeout (the peer finds
 * the connection by it), what it answers by c's state. */
void
et_cm_conn_reject(struct et_cm *cm, struct et_cm_conn *c, uint16_t reason,
		  const void *pdata, uint16_t len, uint64_t now)
{
	uint8_t kind = c->state == ET_CMS_REQ_RCVD || c->state == ET_CMS_MRA_REQ_SENT
		     ? ET_CM_MSG_REQ : ET_CM_MSG_OTHER;
	struct et_cm_msg m;

	et_cm_rej_init(&m, c->tid, c->local_id, c->remote_id, kind, reason);
	if (reason == ET_CM_REJ_TIMEOUT) {
		m.u.rej.ari_len = 8;
		for (int k = 0; k < 8; k++)
			m.u.rej.ari[k] = (uint8_t)(cm->conf.ca_guid >> (56 - 8 * k));
	}
	m.pdata = pdata;
	m.pdata_len = len;
	et_cm_send_keep(cm, c, &m, now, 0);
	cm->st.rej_sent++;
	c->state = ET_CMS_CLOSED;
}

/* Closed: freed at once if the consumer let go, else when it does. */
void
et_cm_conn_closed(struct et_cm *cm, struct et_cm_conn *c)
{
	c->state = ET_CMS_CLOSED;
	et_cm_disarm(cm, c);
	if (c->released)
		et_cm_conn_free(cm, c);
}

void
et_cm_timewait(struct et_cm *cm, struct et_cm_conn *c, uint64_t now)
{
	c->state = ET_CMS_TIMEWAIT;
	et_cm_arm(cm, c, now + cm->conf.timewait_ns);
}

/* How long our REQ waits for its answer: the peer answers within our
 * response timeout, the REQ and its answer each live a packet life on the
 * way.  A DREQ waits as long: its DREP comes at once from any CM (a passive
 * side's peer may have said it takes seconds to answer a REP: Linux's
 * rdma_cm says 4.3 s, which a closing program would not wait out). */
static uint64_t
own_timeout(const struct et_cm *cm)
{
	return 2 * et_cm_timeout_ns(cm->conf.packet_life) + et_cm_timeout_ns(cm->conf.response_timeout);
}

static void
dreq_send(struct et_cm *cm, struct et_cm_conn *c, uint64_t now)
{
	struct et_cm_msg m;

	et_cm_msg_init(&m, ET_CM_DREQ, c->tid);
	m.u.ids.local_comm_id = c->local_id;
	m.u.ids.remote_comm_id = c->remote_id;
	m.u.ids.remote_qpn = c->remote_qpn;
	c->max_retries = cm->conf.max_cm_retries;
	et_cm_send_keep(cm, c, &m, now, own_timeout(cm));
	c->state = ET_CMS_DREQ_SENT;
}

/* ---- the consumer's calls ---- */

int
et_cm_listen(struct et_cm *cm, uint64_t service_id, void *ctx)
{
	int r = et_cm_table_listen(&cm->t, service_id, ctx);

	cm->held_recheck |= r == 0 && cm->n_held > 0; /* at the next et_cm_timer */
	return r;
}

int
et_cm_unlisten(struct et_cm *cm, uint64_t service_id)
{
	return et_cm_table_unlisten(&cm->t, service_id);
}

/* The rdma_cm header and the consumer's bytes after it, into a field of
 * room bytes; its length. */
static uint16_t
ip_pdata(const struct et_cm *cm, uint8_t *out, uint16_t room, uint64_t sid, uint16_t src_port,
	 uint32_t dst_ip, const void *pdata, uint16_t len)
{
	uint16_t off = et_rdma_sid_is_ip(sid) ? ET_CMA_HDR_LEN : 0;

	memset(out, 0, room);
	if (off)
		et_cma_hdr_build(out, &(struct et_cma_hdr){.src_port = src_port,
							   .src_ip = cm->conf.ip,
							   .dst_ip = dst_ip});
	if (len)
		memcpy(out + off, pdata, len);
	return (uint16_t)(off + len);
}

/* An active side's new connection to dst_ip for sid, its request sent
 * again up to max CM retries times; NULL with *err -ENOSPC (no slot). */
static struct et_cm_conn *
active_new(struct et_cm *cm, uint32_t dst_ip, uint64_t sid, void *ctx, int *err)
{
	struct et_cm_conn *c = et_cm_conn_new(cm);

	*err = c ? 0 : -ENOSPC;
	if (c == NULL)
		return NULL;
	c->ctx = ctx;
	c->peer_ip = dst_ip;
	c->service_id = sid;
	c->max_retries = cm->conf.max_cm_retries;
	return c;
}

struct et_cm_conn *
et_cm_connect(struct et_cm *cm, const struct et_cm_connect_param *p, void *ctx, uint64_t now,
	      int *err)
{
	uint8_t pdata[ET_CM_REQ_PDATA];
	uint16_t off = et_rdma_sid_is_ip(p->service_id) ? ET_CMA_HDR_LEN : 0;
	struct et_cm_conn *c;
	struct et_cm_req *r;
	struct et_cm_msg m;

	*err = -EINVAL;
	if (p->qpn > 0xffffff || p->psn > 0xffffff || et_cm_mtu_code(p->mtu) == 0 ||
	    p->retry_count > 7 || p->rnr_retry_count > 7 || p->pdata_len > ET_CM_REQ_PDATA - off ||
	    (p->pdata_len && p->pdata == NULL) || p->dst_ip == 0)
		return NULL;
	if ((c = active_new(cm, p->dst_ip, p->service_id, ctx, err)) == NULL)
		return NULL;
	c->local_qpn = p->qpn;
	et_cm_msg_init(&m, ET_CM_REQ, c->tid);
	r = &m.u.req;
	r->local_comm_id = c->local_id;
	r->service_id = p->service_id;
	r->local_ca_guid = cm->conf.ca_guid;
	r->local_qpn = p->qpn;
	r->responder_resources = p->responder_resources;
	r->initiator_depth = p->initiator_depth;
	r->remote_cm_response_timeout = cm->conf.response_timeout;
	r->starting_psn = p->psn;
	r->local_cm_response_timeout = cm->conf.response_timeout;
	r->retry_count = p->retry_count;
	r->pkey = 0xffff;
	r->path_mtu = et_cm_mtu_code(p->mtu);
	r->rnr_retry_count = p->rnr_retry_count;
	r->max_cm_retries = cm->conf.max_cm_retries;
	/* RoCE has no LIDs: permissive ones, as Linux sends for a routed
	 * (hop limit > 1) path; the GIDs name both ends */
	r->primary.local_lid = r->primary.remote_lid = 0xffff;
	et_gid_from_ipv4(cm->conf.ip, r->primary.local_gid);
	et_gid_from_ipv4(p->dst_ip, r->primary.remote_gid);
	r->primary.hop_limit = 64;
	/* the peer's QP retransmits after 4.096 us << this: 14, 67 ms, as the
	 * RDMA tools set theirs */
	r->primary.local_ack_timeout = 14;
	m.pdata = pdata;
	m.pdata_len = ip_pdata(cm, pdata, sizeof(pdata), p->service_id, p->src_port, p->dst_ip,
			       p->pdata, p->pdata_len);
	et_cm_send_keep(cm, c, &m, now, own_timeout(cm));
	c->state = ET_CMS_REQ_SENT;
	return c;
}

struct et_cm_conn *
et_cm_sidr_request(struct et_cm *cm, const struct et_cm_sidr_param *p, void *ctx,
		   uint64_t now, int *err)
{
	uint8_t pdata[ET_CM_SIDR_REQ_PDATA];
	uint16_t off = et_rdma_sid_is_ip(p->service_id) ? ET_CMA_HDR_LEN : 0;
	struct et_cm_conn *c;
	struct et_cm_msg m;

	*err = -EINVAL;
	if (p->pdata_len > ET_CM_SIDR_REQ_PDATA - off || (p->pdata_len && p->pdata == NULL) ||
	    p->dst_ip == 0)
		return NULL;
	if ((c = active_new(cm, p->dst_ip, p->service_id, ctx, err)) == NULL)
		return NULL;
	et_cm_msg_init(&m, ET_CM_SIDR_REQ, c->tid);
	/* our ID is the request's: the SIDR_REP names it */
	m.u.sidr_req.request_id = c->local_id;
	m.u.sidr_req.pkey = 0xffff;
	m.u.sidr_req.service_id = p->service_id;
	m.pdata = pdata;
	m.pdata_len = ip_pdata(cm, pdata, sizeof(pdata), p->service_id, p->src_port, p->dst_ip,
			       p->pdata, p->pdata_len);
	et_cm_send_keep(cm, c, &m, now, own_timeout(cm));
	c->state = ET_CMS_SIDR_REQ_SENT;
	return c;
}

/* A SIDR request answered with status; the answer kept a time wait for a
 * request that comes again (its SIDR_REP lost). */
static int
sidr_answer(struct et_cm *cm, struct et_cm_conn *c, uint8_t status, uint32_t qpn, uint32_t qkey,
	    const void *pdata, uint16_t len, uint64_t now)
{
	struct et_cm_msg m;

	if (c->state != ET_CMS_SIDR_REQ_RCVD || c->released || qpn > 0xffffff ||
	    len > ET_CM_SIDR_REP_PDATA || (len && pdata == NULL))
		return -EINVAL;
	et_cm_msg_init(&m, ET_CM_SIDR_REP, c->tid);
	m.u.sidr_rep.request_id = c->remote_id;
	m.u.sidr_rep.status = status;
	m.u.sidr_rep.qpn = qpn;
	m.u.sidr_rep.service_id = c->service_id;
	m.u.sidr_rep.qkey = qkey;
	m.pdata = pdata;
	m.pdata_len = len;
	et_cm_send_keep(cm, c, &m, now, 0);
	c->local_qpn = qpn;
	et_cm_timewait(cm, c, now);
	return 0;
}

int
et_cm_accept(struct et_cm *cm, struct et_cm_conn *c, const struct et_cm_accept_param *p,
	     uint64_t now)
{
	struct et_cm_rep *r;
	struct et_cm_msg m;

	if (c->state == ET_CMS_SIDR_REQ_RCVD)
		return sidr_answer(cm, c, ET_CM_SIDR_SUCCESS, p->qpn, p->qkey, p->pdata,
				   p->pdata_len, now);
	if ((c->state != ET_CMS_REQ_RCVD && c->state != ET_CMS_MRA_REQ_SENT) || c->released ||
	    p->qpn > 0xffffff || p->psn > 0xffffff || p->rnr_retry_count > 7 ||
	    p->target_ack_delay > 31 || p->pdata_len > ET_CM_REP_PDATA ||
	    (p->pdata_len && p->pdata == NULL))
		return -EINVAL;
	c->local_qpn = p->qpn;
	et_cm_msg_init(&m, ET_CM_REP, c->tid);
	r = &m.u.rep;
	r->local_comm_id = c->local_id;
	r->remote_comm_id = c->remote_id;
	r->local_qpn = p->qpn;
	r->starting_psn = p->psn;
	r->responder_resources = p->responder_resources;
	r->initiator_depth = p->initiator_depth;
	r->target_ack_delay = p->target_ack_delay;
	r->rnr_retry_count = p->rnr_retry_count;
	r->local_ca_guid = cm->conf.ca_guid;
	m.pdata = p->pdata;
	m.pdata_len = p->pdata_len;
	et_cm_send_keep(cm, c, &m, now, c->timeout_ns);
	c->state = ET_CMS_REP_SENT;
	return 0;
}

int
et_cm_reject(struct et_cm *cm, struct et_cm_conn *c, const void *pdata, uint16_t len,
	     uint64_t now)
{
	if (c->state == ET_CMS_SIDR_REQ_RCVD)
		return sidr_answer(cm, c, ET_CM_SIDR_REJECT, 0, 0, pdata,
				   len > ET_CM_SIDR_REP_PDATA ? ET_CM_SIDR_REP_PDATA : len, now);
	if ((c->state != ET_CMS_REQ_RCVD && c->state != ET_CMS_MRA_REQ_SENT) || c->released ||
	    len > ET_CM_REJ_PDATA || (len && pdata == NULL))
		return -EINVAL;
	et_cm_conn_reject(cm, c, ET_CM_REJ_CONSUMER, pdata, len, now);
	return 0;
}

int
et_cm_disconnect(struct et_cm *cm, struct et_cm_conn *c, uint64_t now)
{
	if (c->state != ET_CMS_ESTABLISHED || c->released)
		return -EINVAL;
	dreq_send(cm, c, now);
	return 0;
}

void
et_cm_establish(struct et_cm *cm, struct et_cm_conn *c, const uint8_t *pdata, uint16_t len)
{
	c->state = ET_CMS_ESTABLISHED;
	et_cm_disarm(cm, c);
	cm->st.established++;
	et_cm_event_pdata(et_cm_event_new(cm, c, ET_CM_EV_ESTABLISHED), pdata, len);
}

void
et_cm_notify_established(struct et_cm *cm, struct et_cm_conn *c, uint64_t now)
{
	(void)now;
	if (c->state == ET_CMS_REP_SENT || c->state == ET_CMS_MRA_REP_RCVD)
		et_cm_establish(cm, c, NULL, 0);
}

void
et_cm_release(struct et_cm *cm, struct et_cm_conn *c, uint64_t now)
{
	switch (c->state) {
	case ET_CMS_REQ_SENT:
	case ET_CMS_MRA_REQ_RCVD:
		et_cm_conn_reject(cm, c, ET_CM_REJ_TIMEOUT, NULL, 0, now);
		break;
	case ET_CMS_REQ_RCVD:
	case ET_CMS_MRA_REQ_SENT:
	case ET_CMS_REP_SENT:
	case ET_CMS_MRA_REP_RCVD:
		et_cm_conn_reject(cm, c, ET_CM_REJ_CONSUMER, NULL, 0, now);
		break;
	case ET_CMS_ESTABLISHED:
		dreq_send(cm, c, now);
		break;
	case ET_CMS_SIDR_REQ_SENT: /* SIDR has nothing to cancel with */
		et_cm_conn_closed(cm, c);
		break;
	case ET_CMS_SIDR_REQ_RCVD:
		sidr_answer(cm, c, ET_CM_SIDR_REJECT, 0, 0, NULL, 0, now);
		break;
	default:
		break;
	}
	c->released = true;
	/* its events not yet polled are no longer the consumer's: from its
	 * last one back (most connections have none, or that one only) */
	for (uint32_t p = c->last_ev; c->n_events; p--)
		if (cm->ev[p % cm->ev_cap].conn == c) {
			cm->ev[p % cm->ev_cap].conn = NULL;
			c->n_events--;
		}
	if (c->state == ET_CMS_CLOSED || c->state == ET_CMS_IDLE)
		et_cm_conn_free(cm, c);
}

/* ---- timers ---- */

static void
expire(struct et_cm *cm, struct et_cm_conn *c, uint64_t now)
{
	switch (c->state) {
	case ET_CMS_REQ_SENT:
	case ET_CMS_MRA_REQ_RCVD:
	case ET_CMS_REP_SENT:
	case ET_CMS_MRA_REP_RCVD:
	case ET_CMS_DREQ_SENT:
	case ET_CMS_SIDR_REQ_SENT:
		if (c->retries_left) {
			c->retries_left--;
			cm->st.tx_retries++;
			et_cm_out_push(cm, c->peer_ip, c->msg);
			et_cm_arm(cm, c, now + c->timeout_ns);
			if (c->state == ET_CMS_MRA_REQ_RCVD)
				c->state = ET_CMS_REQ_SENT;
			else if (c->state == ET_CMS_MRA_REP_RCVD)
				c->state = ET_CMS_REP_SENT;
			return;
		}
		if (c->state == ET_CMS_DREQ_SENT) { /* closed all the same */
			cm->st.disconnected++;
			et_cm_event_new(cm, c, ET_CM_EV_DISCONNECTED);
			et_cm_timewait(cm, c, now);
			return;
		}
		cm->st.unreachable++;
		et_cm_event_new(cm, c, ET_CM_EV_UNREACHABLE);
		if (c->state != ET_CMS_SIDR_REQ_SENT) /* SIDR has no REJ */
			et_cm_conn_reject(cm, c, ET_CM_REJ_TIMEOUT, NULL, 0, now);
		et_cm_conn_closed(cm, c);
		return;
	case ET_CMS_TIMEWAIT:
		et_cm_conn_closed(cm, c);
		return;
	default:
		et_cm_disarm(cm, c);
		return;
	}
}

/* The due timers, earliest first, each taken off before its connection
 * acts (a retry arms it again, later than now: the loop ends). */
void
et_cm_timer(struct et_cm *cm, uint64_t now)
{
	uint32_t i;

	while ((i = et_cm_table_pop_due(&cm->t, now)) != ET_CM_NO_SLOT)
		expire(cm, et_cm_table_conn(&cm->t, i), now);
	if (cm->n_held)
		et_cm_held_run(cm, now);
}

/* ---- what a connection shows ---- */

struct et_cm_conn *
et_cm_conn_find(const struct et_cm *cm, uint32_t id)
{
	return et_cm_find_local(cm, id);
}

enum et_cm_state
et_cm_conn_state(const struct et_cm_conn *c)
{
	return c->state;
}

void *
et_cm_conn_ctx(const struct et_cm_conn *c)
{
	return c->ctx;
}

void
et_cm_conn_set_ctx(struct et_cm_conn *c, void *ctx)
{
	c->ctx = ctx;
}

uint32_t
et_cm_conn_local_id(const struct et_cm_conn *c)
{
	return c->local_id;
}

uint32_t
et_cm_conn_peer_ip(const struct et_cm_conn *c)
{
	return c->peer_ip;
}

uint32_t
et_cm_conn_peer_qpn(const struct et_cm_conn *c)
{
	return c->remote_qpn;
}

uint32_t
et_cm_conn_peer_psn(const struct et_cm_conn *c)
{
	return c->remote_psn;
}
