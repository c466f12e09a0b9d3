/* SPDX-License-Identifier: BSD-3-Clause
 * The CM's MADs in (IBTA vol. 1 12.9): each found its connection (by our
 * ID, or by the peer's for a REQ) and moved it, a duplicate answered
 * again, a MAD for no connection answered within the rate limit or
 * dropped, each counted.
 */
#include "cm/et_cm.h"

#include <string.h>

#include "cm/et_cm_priv.h"
#include "wire/et_gid.h"

/* A REQ we answer with a REJ and no connection. */
static void
req_reject(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *q, uint16_t reason,
	   const uint8_t *ari, uint8_t ari_len, uint64_t now)
{
	struct et_cm_msg m;

	et_cm_rej_init(&m, q->hdr.tid, 0, q->u.req.local_comm_id, ET_CM_MSG_REQ, reason);
	m.u.rej.ari_len = ari_len;
	if (ari_len)
		memcpy(m.u.rej.ari, ari, ari_len);
	et_cm_answer_unknown(cm, src_ip, &m, now);
}

/* What we refuse in a REQ before it becomes a connection: its REJ reason,
 * 0 if none. */
static uint16_t
req_check(struct et_cm *cm, const struct et_cm_req *r, uint8_t gid[16])
{
	uint32_t ip;

	if (r->transport_type != 0 || r->ext_transport != 0)
		return ET_CM_REJ_INVALID_TRANSPORT;
	if (et_cm_mtu_bytes(r->path_mtu) == 0)
		return ET_CM_REJ_INVALID_MTU;
	if (et_gid_to_ipv4(r->primary.remote_gid, &ip) == 0 && ip != cm->conf.ip) {
		et_gid_from_ipv4(cm->conf.ip, gid); /* the ARI: the GID we have */
		return ET_CM_REJ_INVALID_GID;
	}
	return 0;
}

/* A SIDR_REQ's peer has no CA GUID to name it by: its address stands in,
 * in a part of the key space no EUI-64 of an Ethernet port takes. */
static uint64_t
sidr_key(uint32_t src_ip)
{
	return 0xffffffff00000000ull | src_ip;
}

/* A request's service ID, and the ID its sender knows it by. */
static uint64_t
req_sid(const struct et_cm_msg *m)
{
	return m->hdr.attr_id == ET_CM_SIDR_REQ ? m->u.sidr_req.service_id : m->u.req.service_id;
}

static uint32_t
req_id(const struct et_cm_msg *m)
{
	return m->hdr.attr_id == ET_CM_SIDR_REQ ? m->u.sidr_req.request_id
						: m->u.req.local_comm_id;
}

/* rdma_cm's header at the start of a request's private data, for a
 * service ID of an IP port space (cma keeps the source address when there
 * is none): where the consumer's part starts, or -1 (counted) when it is
 * garbage or names another host. */
static int
cma_hdr_of(struct et_cm *cm, uint64_t sid, const struct et_cm_msg *m, struct et_cma_hdr *cma)
{
	if (!et_rdma_sid_is_ip(sid))
		return 0;
	if (et_cma_hdr_parse(m->pdata, m->pdata_len, cma, NULL) || cma->dst_ip != cm->conf.ip) {
		cm->st.req_bad_pdata++;
		return -1;
	}
	return ET_CMA_HDR_LEN;
}

/* A SIDR request we answer with no connection. */
static void
sidr_refuse(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *q, uint8_t status,
	    uint64_t now)
{
	struct et_cm_msg m;

	et_cm_msg_init(&m, ET_CM_SIDR_REP, q->hdr.tid);
	m.u.sidr_rep.request_id = q->u.sidr_req.request_id;
	m.u.sidr_rep.status = status;
	m.u.sidr_rep.service_id = q->u.sidr_req.service_id;
	et_cm_answer_unknown(cm, src_ip, &m, now);
}

/* A REQ or SIDR_REQ nobody listens for, kept for its listener a while (a
 * copy of one kept already is dropped: the peer asks again on its own
 * timeout).  True when kept. */
static bool
hold(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m, uint64_t now)
{
	struct et_cm_held *h;

	for (uint32_t i = 0; i < cm->n_held; i++)
		if (cm->held[i].src_ip == src_ip && cm->held[i].m.hdr.attr_id == m->hdr.attr_id &&
		    req_id(&cm->held[i].m) == req_id(m)) {
			cm->st.rx_dups++;
			return true;
		}
	if (cm->conf.req_hold_ns == 0 || cm->n_held == ET_CM_HELD_MAX ||
	    now > UINT64_MAX - cm->conf.req_hold_ns)
		return false;
	h = &cm->held[cm->n_held++];
	h->m = *m;
	h->src_ip = src_ip;
	h->until = now + cm->conf.req_hold_ns;
	cm->st.req_held++;
	return true;
}

static void on_req(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m, uint64_t now);
static void on_sidr_req(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m,
			uint64_t now);

void
et_cm_held_run(struct et_cm *cm, uint64_t now)
{
	struct et_cm_held due[ET_CM_HELD_MAX];
	uint32_t n_due = 0, k = 0;

	cm->held_recheck = false;
	/* off the list first: what is taken or refused below must not find
	 * itself held */
	for (uint32_t i = 0; i < cm->n_held; i++) {
		const struct et_cm_held *h = &cm->held[i];

		if (et_cm_table_listener(&cm->t, req_sid(&h->m)) || now >= h->until)
			due[n_due++] = *h;
		else
			cm->held[k++] = *h;
	}
	cm->n_held = k;
	for (uint32_t i = 0; i < n_due; i++) {
		bool sidr = due[i].m.hdr.attr_id == ET_CM_SIDR_REQ;

		if (et_cm_table_listener(&cm->t, req_sid(&due[i].m))) {
			(sidr ? on_sidr_req : on_req)(cm, due[i].src_ip, &due[i].m, now);
			continue;
		}
		cm->st.req_no_listener++;
		if (sidr)
			sidr_refuse(cm, due[i].src_ip, &due[i].m, ET_CM_SIDR_UNSUPPORTED, now);
		else
			req_reject(cm, due[i].src_ip, &due[i].m, ET_CM_REJ_INVALID_SERVICE_ID,
				   NULL, 0, now);
	}
}

static void
on_req(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m, uint64_t now)
{
	const struct et_cm_req *r = &m->u.req;
	struct et_cma_hdr cma = {.src_ip = src_ip};
	const struct et_cm_listener *l;
	struct et_cm_conn *c = et_cm_find_remote(cm, r->local_comm_id, r->local_ca_guid);
	struct et_cm_event *e;
	uint8_t gid[16];
	uint16_t reason;
	int off;

	if (c) {
		cm->st.rx_dups++;
		switch (c->state) {
		case ET_CMS_REQ_RCVD: { /* the consumer is still deciding */
			struct et_cm_msg a;

			et_cm_msg_init(&a, ET_CM_MRA, c->tid);
			a.u.mra.local_comm_id = c->local_id;
			a.u.mra.remote_comm_id = c->remote_id;
			a.u.mra.msg_mraed = ET_CM_MSG_REQ;
			a.u.mra.service_timeout = cm->conf.mra_timeout;
			et_cm_send_keep(cm, c, &a, now, 0);
			c->state = ET_CMS_MRA_REQ_SENT;
			cm->st.mra_sent++;
			break;
		}
		case ET_CMS_MRA_REQ_SENT:
		case ET_CMS_REP_SENT:
		case ET_CMS_MRA_REP_RCVD:
			et_cm_out_push(cm, c->peer_ip, c->msg); /* the MRA, the REP again */
			break;
		case ET_CMS_CLOSED:
			if (c->msg_attr == ET_CM_REJ) /* our REJ was lost */
				et_cm_out_push(cm, c->peer_ip, c->msg);
			break;
		case ET_CMS_TIMEWAIT: {
			struct et_cm_msg a;

			cm->st.req_stale++;
			et_cm_rej_init(&a, m->hdr.tid, c->local_id, r->local_comm_id,
				       ET_CM_MSG_REQ, ET_CM_REJ_STALE_CONN);
			et_cm_answer_unknown(cm, src_ip, &a, now);
			break;
		}
		default: /* established: an old copy */
			break;
		}
		return;
	}
	if ((l = et_cm_table_listener(&cm->t, r->service_id)) == NULL) {
		if (hold(cm, src_ip, m, now))
			return;
		cm->st.req_no_listener++;
		req_reject(cm, src_ip, m, ET_CM_REJ_INVALID_SERVICE_ID, NULL, 0, now);
		return;
	}
	if ((reason = req_check(cm, r, gid)) != 0) {
		cm->st.req_bad_param++;
		req_reject(cm, src_ip, m, reason, gid, reason == ET_CM_REJ_INVALID_GID ? 16 : 0, now);
		return;
	}
	/* as the kernel, a consumer reject */
	if ((off = cma_hdr_of(cm, r->service_id, m, &cma)) < 0) {
		req_reject(cm, src_ip, m, ET_CM_REJ_CONSUMER, NULL, 0, now);
		return;
	}
	if ((c = et_cm_conn_new(cm)) == NULL) {
		cm->st.req_no_room++;
		req_reject(cm, src_ip, m, ET_CM_REJ_NO_RESOURCES, NULL, 0, now);
		return;
	}
	c->state = ET_CMS_REQ_RCVD;
	c->ctx = l->ctx;
	et_cm_set_remote(cm, c, r->local_comm_id, r->local_ca_guid);
	c->peer_ip = src_ip;
	c->service_id = r->service_id;
	c->tid = m->hdr.tid;
	c->remote_qpn = r->local_qpn;
	c->remote_psn = r->starting_psn;
	/* our REP and DREQ wait as long as the peer says it may take */
	c->timeout_ns = et_cm_timeout_ns(r->local_cm_response_timeout);
	c->max_retries = r->max_cm_retries;
	e = et_cm_event_new(cm, c, ET_CM_EV_CONNECT_REQUEST);
	if (e == NULL) { /* nobody would hear of it */
		et_cm_conn_reject(cm, c, ET_CM_REJ_NO_RESOURCES, NULL, 0, now);
		c->released = true;
		et_cm_conn_free(cm, c);
		return;
	}
	e->peer_ip = cma.src_ip;
	e->peer_port = cma.src_port;
	e->peer_psn = r->starting_psn;
	e->mtu = et_cm_mtu_bytes(r->path_mtu);
	/* what the peer's initiator may have out is what we must take in */
	e->responder_resources = r->initiator_depth;
	e->initiator_depth = r->responder_resources;
	e->retry_count = r->retry_count;
	e->rnr_retry_count = r->rnr_retry_count;
	et_cm_event_pdata(e, m->pdata + off, (uint16_t)(m->pdata_len - off));
}

/* A SIDR_REQ: a request event for its listener (the consumer answers with
 * et_cm_accept or et_cm_reject); a repeated one dropped while the consumer
 * decides, answered again once it has. */
static void
on_sidr_req(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m, uint64_t now)
{
	const struct et_cm_sidr_req *r = &m->u.sidr_req;
	struct et_cma_hdr cma = {.src_ip = src_ip};
	struct et_cm_conn *c = et_cm_find_remote(cm, r->request_id, sidr_key(src_ip));
	const struct et_cm_listener *l;
	struct et_cm_event *e;
	int off;

	if (c) {
		cm->st.rx_dups++;
		if (c->state == ET_CMS_TIMEWAIT && c->msg_attr == ET_CM_SIDR_REP)
			et_cm_out_push(cm, c->peer_ip, c->msg); /* our SIDR_REP was lost */
		return;
	}
	if ((l = et_cm_table_listener(&cm->t, r->service_id)) == NULL) {
		if (hold(cm, src_ip, m, now))
			return;
		cm->st.req_no_listener++;
		sidr_refuse(cm, src_ip, m, ET_CM_SIDR_UNSUPPORTED, now);
		return;
	}
	if ((off = cma_hdr_of(cm, r->service_id, m, &cma)) < 0) {
		sidr_refuse(cm, src_ip, m, ET_CM_SIDR_REJECT, now);
		return;
	}
	if ((c = et_cm_conn_new(cm)) == NULL) {
		cm->st.req_no_room++;
		sidr_refuse(cm, src_ip, m, ET_CM_SIDR_NO_QP, now);
		return;
	}
	c->state = ET_CMS_SIDR_REQ_RCVD;
	c->ctx = l->ctx;
	et_cm_set_remote(cm, c, r->request_id, sidr_key(src_ip));
	c->peer_ip = src_ip;
	c->service_id = r->service_id;
	c->tid = m->hdr.tid;
	e = et_cm_event_new(cm, c, ET_CM_EV_CONNECT_REQUEST);
	if (e == NULL) {
		sidr_refuse(cm, src_ip, m, ET_CM_SIDR_NO_QP, now);
		c->released = true;
		et_cm_conn_free(cm, c);
		return;
	}
	e->sidr = true;
	e->peer_ip = cma.src_ip;
	e->peer_port = cma.src_port;
	et_cm_event_pdata(e, m->pdata + off, (uint16_t)(m->pdata_len - off));
}

static void
on_sidr_rep(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m)
{
	const struct et_cm_sidr_rep *r = &m->u.sidr_rep;
	struct et_cm_conn *c = et_cm_find_local(cm, r->request_id);
	struct et_cm_event *e;

	if (c == NULL || c->peer_ip != src_ip || c->state != ET_CMS_SIDR_REQ_SENT) {
		cm->st.sidr_unknown++; /* late, repeated or not ours: SIDR answers nothing */
		return;
	}
	c->remote_qpn = r->qpn;
	if (r->status == ET_CM_SIDR_SUCCESS)
		cm->st.established++;
	else
		cm->st.rej_rcvd++;
	e = et_cm_event_new(cm, c, ET_CM_EV_SIDR_REPLY);
	if (e) {
		e->reason = r->status;
		e->qkey = r->qkey;
		et_cm_event_pdata(e, m->pdata, m->pdata_len);
	}
	et_cm_conn_closed(cm, c);
}

static void
on_rep(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m, uint64_t now)
{
	const struct et_cm_rep *r = &m->u.rep;
	struct et_cm_conn *c = et_cm_find_local(cm, r->remote_comm_id);
	struct et_cm_event *e;
	struct et_cm_msg a;

	if (c == NULL || c->peer_ip != src_ip) {
		cm->st.rep_unknown++;
		et_cm_rej_init(&a, m->hdr.tid, 0, r->local_comm_id, ET_CM_MSG_REP,
			       ET_CM_REJ_INVALID_COMM_ID);
		et_cm_answer_unknown(cm, src_ip, &a, now);
		return;
	}
	if (c->state == ET_CMS_ESTABLISHED && c->msg_attr == ET_CM_RTU &&
	    r->local_comm_id == c->remote_id) {
		cm->st.rx_dups++; /* our RTU was lost */
		et_cm_out_push(cm, c->peer_ip, c->msg);
		return;
	}
	if (c->state != ET_CMS_REQ_SENT && c->state != ET_CMS_MRA_REQ_RCVD) {
		cm->st.stray++;
		return;
	}
	et_cm_set_remote(cm, c, r->local_comm_id, r->local_ca_guid);
	c->remote_qpn = r->local_qpn;
	c->remote_psn = r->starting_psn;
	et_cm_msg_init(&a, ET_CM_RTU, c->tid);
	a.u.ids.local_comm_id = c->local_id;
	a.u.ids.remote_comm_id = c->remote_id;
	et_cm_send_keep(cm, c, &a, now, 0);
	c->state = ET_CMS_ESTABLISHED;
	cm->st.established++;
	e = et_cm_event_new(cm, c, ET_CM_EV_ESTABLISHED);
	if (e == NULL)
		return;
	e->peer_psn = r->starting_psn;
	e->responder_resources = r->initiator_depth;
	e->initiator_depth = r->responder_resources;
	e->rnr_retry_count = r->rnr_retry_count;
	et_cm_event_pdata(e, m->pdata, m->pdata_len);
}

/* c's by the IDs a MAD carries: its remote ID ours, its local one the
 * peer's (unknown to an active side before the REP). */
static struct et_cm_conn *
find_pair(const struct et_cm *cm, uint32_t src_ip, uint32_t ours, uint32_t theirs)
{
	struct et_cm_conn *c = et_cm_find_local(cm, ours);

	if (c == NULL || c->peer_ip != src_ip ||
	    (c->remote_id != theirs && c->state != ET_CMS_REQ_SENT &&
	     c->state != ET_CMS_MRA_REQ_RCVD))
		return NULL;
	return c;
}

static void
on_rtu(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m)
{
	struct et_cm_conn *c = find_pair(cm, src_ip, m->u.ids.remote_comm_id,
					 m->u.ids.local_comm_id);

	if (c && (c->state == ET_CMS_REP_SENT || c->state == ET_CMS_MRA_REP_RCVD)) {
		et_cm_establish(cm, c, m->pdata, m->pdata_len);
		return;
	}
	if (c && c->state == ET_CMS_ESTABLISHED)
		cm->st.rx_dups++;
	else
		cm->st.stray++;
}

static void
on_mra(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m, uint64_t now)
{
	const struct et_cm_mra *a = &m->u.mra;
	struct et_cm_conn *c = find_pair(cm, src_ip, a->remote_comm_id, a->local_comm_id);
	uint64_t wait = et_cm_timeout_ns(a->service_timeout) + et_cm_timeout_ns(cm->conf.packet_life);

	if (c && c->state == ET_CMS_REQ_SENT && a->msg_mraed == ET_CM_MSG_REQ)
		c->state = ET_CMS_MRA_REQ_RCVD;
	else if (c && c->state == ET_CMS_REP_SENT && a->msg_mraed == ET_CM_MSG_REP)
		c->state = ET_CMS_MRA_REP_RCVD;
	else {
		cm->st.stray++;
		return;
	}
	/* one longer wait, then our MAD goes again (a retry) */
	cm->st.mra_rcvd++;
	et_cm_arm(cm, c, now + wait);
}

static void
on_rej(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m, uint64_t now)
{
	const struct et_cm_rej *r = &m->u.rej;
	struct et_cm_conn *c;
	struct et_cm_event *e;

	c = find_pair(cm, src_ip, r->remote_comm_id, r->local_comm_id);
	/* a timeout from an active side that never had our REP names us by
	 * its ID and GUID only */
	if (c == NULL && r->reason == ET_CM_REJ_TIMEOUT && r->ari_len >= 8) {
		uint64_t guid = 0;

		for (int k = 0; k < 8; k++)
			guid = guid << 8 | r->ari[k];
		c = et_cm_find_remote(cm, r->local_comm_id, guid);
	}
	if (c == NULL || c->peer_ip != src_ip || c->state == ET_CMS_TIMEWAIT ||
	    c->state == ET_CMS_CLOSED) {
		cm->st.stray++;
		return;
	}
	cm->st.rej_rcvd++;
	if (c->state == ET_CMS_ESTABLISHED || c->state == ET_CMS_DREQ_SENT) {
		cm->st.disconnected++;
		et_cm_event_new(cm, c, ET_CM_EV_DISCONNECTED);
		et_cm_timewait(cm, c, now);
		return;
	}
	e = et_cm_event_new(cm, c, ET_CM_EV_REJECTED);
	if (e) {
		e->reason = r->reason;
		et_cm_event_pdata(e, m->pdata, m->pdata_len);
	}
	et_cm_conn_closed(cm, c);
}

static void
drep_to(struct et_cm *cm, uint32_t dst_ip, const struct et_cm_msg *dreq, uint8_t *keep)
{
	struct et_cm_msg a;
	uint8_t mad[ET_MAD_LEN];

	et_cm_msg_init(&a, ET_CM_DREP, dreq->hdr.tid);
	a.u.ids.local_comm_id = dreq->u.ids.remote_comm_id;
	a.u.ids.remote_comm_id = dreq->u.ids.local_comm_id;
	et_cm_build(keep ? keep : mad, &a);
	et_cm_out_push(cm, dst_ip, keep ? keep : mad);
}

static void
on_dreq(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m, uint64_t now)
{
	struct et_cm_conn *c = find_pair(cm, src_ip, m->u.ids.remote_comm_id,
					 m->u.ids.local_comm_id);

	if (c == NULL) {
		/* as Linux: a DREP, so a peer that lost ours stops asking */
		cm->st.dreq_unknown++;
		if (!et_token_bucket_take(&cm->answers, now)) {
			cm->st.answers_limited++;
			return;
		}
		drep_to(cm, src_ip, m, NULL);
		return;
	}
	if (m->u.ids.remote_qpn != c->local_qpn) {
		cm->st.dreq_bad_qpn++;
		return;
	}
	switch (c->state) {
	case ET_CMS_ESTABLISHED:
	case ET_CMS_REP_SENT:
	case ET_CMS_MRA_REP_RCVD:
	case ET_CMS_DREQ_SENT:
		drep_to(cm, src_ip, m, c->msg);
		c->msg_attr = ET_CM_DREP;
		cm->st.disconnected++;
		et_cm_event_new(cm, c, ET_CM_EV_DISCONNECTED);
		et_cm_timewait(cm, c, now);
		break;
	case ET_CMS_TIMEWAIT:
		cm->st.rx_dups++; /* our DREP was lost, or the DREQs crossed */
		drep_to(cm, src_ip, m, NULL);
		break;
	default:
		cm->st.stray++;
		break;
	}
}

static void
on_drep(struct et_cm *cm, uint32_t src_ip, const struct et_cm_msg *m, uint64_t now)
{
	struct et_cm_conn *c = find_pair(cm, src_ip, m->u.ids.remote_comm_id,
					 m->u.ids.local_comm_id);

	if (c == NULL || c->state != ET_CMS_DREQ_SENT) {
		cm->st.stray++;
		return;
	}
	cm->st.disconnected++;
	et_cm_event_new(cm, c, ET_CM_EV_DISCONNECTED);
	et_cm_timewait(cm, c, now);
}

int
et_cm_input(struct et_cm *cm, uint32_t src_ip, const uint8_t *mad, size_t len, uint64_t now)
{
	struct et_cm_msg m;
	int rc = et_cm_parse(mad, len, &m);

	if (rc) {
		cm->st.rx_bad[-rc]++;
		return rc;
	}
	cm->st.rx_mads++;
	switch (m.hdr.attr_id) {
	case ET_CM_REQ: on_req(cm, src_ip, &m, now); break;
	case ET_CM_REP: on_rep(cm, src_ip, &m, now); break;
	case ET_CM_RTU: on_rtu(cm, src_ip, &m); break;
	case ET_CM_MRA: on_mra(cm, src_ip, &m, now); break;
	case ET_CM_REJ: on_rej(cm, src_ip, &m, now); break;
	case ET_CM_DREQ: on_dreq(cm, src_ip, &m, now); break;
	case ET_CM_SIDR_REQ: on_sidr_req(cm, src_ip, &m, now); break;
	case ET_CM_SIDR_REP: on_sidr_rep(cm, src_ip, &m); break;
	default: on_drep(cm, src_ip, &m, now); break;
	}
	return 0;
}
