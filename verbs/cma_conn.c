/* SPDX-License-Identifier: BSD-3-Clause
 * Our librdmacm's QPs and connections: rdma_create_qp with the CQs a
 * program does not give, the QP moved as librdmacm moves one, and the
 * connect, accept, reject and disconnect that the agent carries as CM
 * MADs (SIDR for RDMA_PS_UDP).  The library as a whole: cma.c.
 */
#include <stdlib.h>
#include <string.h>

#include "cma_priv.h"

/* ---- QPs ---- */

/* A UD QP ready at once, as librdmacm's ucma_init_ud_qp: INIT with the
 * port space's Q_Key, RTR, RTS. */
static int
qp_ud_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = CMA_UDP_QKEY};
	int r;

	if ((r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					   IBV_QP_QKEY)) != 0)
		return r;
	a.qp_state = IBV_QPS_RTR;
	if ((r = ibv_modify_qp(qp, &a, IBV_QP_STATE)) != 0)
		return r;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* INIT, as librdmacm leaves a new connection's QP. */
static int
qp_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
				.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_ACCESS_FLAGS);
}

static void
destroy_cqs(struct rdma_cm_id *id)
{
	if (id->recv_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->recv_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	if (id->send_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->send_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	id->recv_cq = id->send_cq = NULL;
	id->recv_cq_channel = id->send_cq_channel = NULL;
}

/* A CQ of n entries with a completion channel, the id's (librdmacm makes
 * them for a QP whose program gave none: rdma_get_recv_comp waits there). */
static int
make_cq(struct rdma_cm_id *id, uint32_t n, struct ibv_cq **cq, struct ibv_comp_channel **ch)
{
	if ((*ch = ibv_create_comp_channel(id->verbs)) == NULL)
		return -1;
	if ((*cq = ibv_create_cq(id->verbs, n ? (int)n : 1, id, *ch, 0)) == NULL)
		return -1;
	return 0;
}

int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *qp;
	int r;

	if (id->qp)
		return fail(EINVAL);
	if ((attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UD) || attr->srq)
		return fail(ENOSYS);
	if (attr->qp_type != id->qp_type)
		return fail(EINVAL); /* a UD QP on a UDP id, an RC one on the others */
	if (id->verbs == NULL)
		cma_on_device(id);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->pd = id->pd;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if ((!attr->recv_cq && !id->recv_cq &&
	     make_cq(id, attr->cap.max_recv_wr, &id->recv_cq, &id->recv_cq_channel)) ||
	    (!attr->send_cq && !id->send_cq &&
	     make_cq(id, attr->cap.max_send_wr, &id->send_cq, &id->send_cq_channel))) {
		destroy_cqs(id);
		return -1;
	}
	if (!attr->recv_cq)
		attr->recv_cq = id->recv_cq;
	if (!attr->send_cq)
		attr->send_cq = id->send_cq;
	if ((qp = ibv_create_qp_ex(attr->pd->context, attr)) == NULL) {
		destroy_cqs(id);
		return -1;
	}
	if ((r = id->qp_type == IBV_QPT_UD ? qp_ud_ready(qp) : qp_init(qp)) != 0) {
		ibv_destroy_qp(qp);
		destroy_cqs(id);
		return fail(r);
	}
	id->qp = qp;
	return 0;
}

int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;
	int r;

	memset(&a, 0, sizeof(a));
	memcpy(&a, qp_init_attr, sizeof(*qp_init_attr));
	a.pd = pd;
	a.comp_mask = pd ? IBV_QP_INIT_ATTR_PD : 0;
	if ((r = rdma_create_qp_ex(id, &a)) == 0)
		qp_init_attr->cap = a.cap;
	return r;
}

void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct ibv_qp *qp = id->qp;

	if (qp == NULL)
		return;
	et_process_lock(); /* the agent's bind reads id->qp */
	id->qp = NULL;
	et_process_unlock();
	ibv_destroy_qp(qp); /* the connection drops it there (et_rdmacm_forget_qp) */
	destroy_cqs(id);
}

/* ---- connections ---- */

static uint8_t
at_most(uint8_t v, uint8_t max)
{
	return v < max ? v : max;
}

/* What the program asks of the connection (NULL: the id's defaults), and
 * the agent's parameters with a first PSN of ours, the QP bound by us. */
static struct et_rdmacm_conn_param
conn_param_of(struct cma_id *c, const struct rdma_conn_param *cp)
{
	c->psn = et_process_psn();
	if (cp) {
		c->responder_resources = at_most(cp->responder_resources, ET_VB_MAX_RD_ATOMIC);
		c->initiator_depth = at_most(cp->initiator_depth, ET_VB_MAX_RD_ATOMIC);
		c->retry_count = at_most(cp->retry_count, 7);
		c->rnr_retry_count = at_most(cp->rnr_retry_count, 7);
	}
	return (struct et_rdmacm_conn_param){
		.psn = c->psn, .mtu = et_process.c.rc.qp.mtu,
		.responder_resources = c->responder_resources, .initiator_depth = c->initiator_depth,
		.retry_count = c->retry_count, .rnr_retry_count = c->rnr_retry_count,
		.pdata = cp ? cp->private_data : NULL, .pdata_len = cp ? cp->private_data_len : 0,
		.bind = cma_bind, .bind_ctx = c};
}

/* A UD id's connect: a SIDR_REQ with the program's private data; the
 * reply (ESTABLISHED with the peer's QP, Q_Key and route) comes as an
 * event. */
static int
sidr_connect(struct cma_id *c, const struct rdma_conn_param *cp)
{
	struct rdma_cm_id *id = &c->id;
	uint16_t src_port = 0xc000 | ((id->qp ? id->qp->qp_num : (uint32_t)(uintptr_t)c) & 0x3fff);
	struct et_rdmacm *agent;
	int err = 0;

	et_process_lock();
	c->holder.on_event = cma_on_event;
	agent = et_process_rdmacm();
	if (agent)
		c->rid = et_rdmacm_sidr(agent, addr_ip(&id->route.addr.dst_addr),
					addr_port(&id->route.addr.dst_addr), src_port,
					cp ? cp->private_data : NULL, cp ? cp->private_data_len : 0,
					&c->holder, et_process_now(), &err);
	else
		err = -ENODEV;
	if (c->rid)
		cma_set_route(c, et_process.ip, src_port, addr_ip(&id->route.addr.dst_addr),
			      addr_port(&id->route.addr.dst_addr));
	et_process_unlock();
	return c->rid ? cma_complete(id) : fail(-err);
}

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cma_id *c = cma(id);
	struct et_rdmacm_conn_param p;
	struct et_rdmacm *agent;
	int err = 0;

	if (id->qp_type == IBV_QPT_UD)
		return sidr_connect(c, conn_param);
	if (id->qp == NULL)
		return fail(EINVAL); /* a connection without a QP of ours: not yet */
	et_process_lock();
	p = conn_param_of(c, conn_param);
	c->holder.on_event = cma_on_event;
	agent = et_process_rdmacm();
	if (agent)
		c->rid = et_rdmacm_connect(agent, addr_ip(&id->route.addr.dst_addr),
					   addr_port(&id->route.addr.dst_addr),
					   ((struct et_vb_qp *)id->qp)->eq, &p, &c->holder,
					   et_process_now(), &err);
	else
		err = -ENODEV;
	if (c->rid)
		cma_set_route(c, et_process.ip, 0xc000 | (id->qp->qp_num & 0x3fff),
			      addr_ip(&id->route.addr.dst_addr),
			      addr_port(&id->route.addr.dst_addr));
	et_process_unlock();
	return c->rid ? cma_complete(id) : fail(-err);
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cma_id *c = cma(id);
	struct et_rdmacm_conn_param p;
	int r;

	if (id->qp == NULL || c->rid == NULL)
		return fail(EINVAL);
	if (id->qp_type == IBV_QPT_UD) {
		/* the SIDR_REP: our UD QP and its Q_Key; no event follows */
		struct et_rdmacm_conn_param u = {
			.qkey = ((struct et_vb_qp *)id->qp)->attr.qkey,
			.pdata = conn_param ? conn_param->private_data : NULL,
			.pdata_len = conn_param ? conn_param->private_data_len : 0};

		et_process_lock();
		r = et_rdmacm_accept(et_process.rdmacm, c->rid, ((struct et_vb_qp *)id->qp)->eq, &u,
				     et_process_now());
		et_process_unlock();
		return r ? fail(-r) : 0;
	}
	et_process_lock();
	/* the passive side's retry count is the peer's, from its REQ */
	uint8_t retry = c->retry_count;

	p = conn_param_of(c, conn_param);
	c->retry_count = retry;
	r = et_rdmacm_accept(et_process.rdmacm, c->rid, ((struct et_vb_qp *)id->qp)->eq, &p,
			     et_process_now());
	et_process_unlock();
	return r ? fail(-r) : cma_complete(id);
}

int
rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	struct cma_id *c = cma(id);
	int r;

	if (c->rid == NULL)
		return fail(EINVAL);
	et_process_lock();
	r = et_rdmacm_reject(et_process.rdmacm, c->rid, private_data, private_data_len,
			     et_process_now());
	et_process_unlock();
	return r ? fail(-r) : 0;
}

int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct cma_id *c = cma(id);
	enum et_cm_state s;
	int r = 0;

	if (c->rid == NULL || id->qp_type == IBV_QPT_UD)
		return fail(EINVAL); /* UD has no connection to close */
	et_process_lock();
	s = et_rdmacm_id_state(c->rid);
	if (s != ET_CMS_ESTABLISHED && s != ET_CMS_DREQ_SENT && s != ET_CMS_TIMEWAIT &&
	    s != ET_CMS_REP_SENT && s != ET_CMS_MRA_REP_RCVD) {
		/* never connected, or refused: nothing to close and no event
		 * to wait for (a synchronous id waited for ever) */
		et_process_unlock();
		return fail(EINVAL);
	}
	cma_qp_to_error(c);
	/* the peer closed first: its DREQ is answered already */
	if (s == ET_CMS_ESTABLISHED)
		r = et_rdmacm_disconnect(et_process.rdmacm, c->rid, et_process_now());
	et_process_unlock();
	return r ? fail(-r) : cma_complete(id);
}

int
rdma_establish(struct rdma_cm_id *id)
{
	(void)id;
	return 0; /* the agent sent the RTU with the REP's binding */
}

int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)id;
	(void)event;
	return 0;
}

int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	struct cma_id *c = cma(id);

	if (optval == NULL)
		return fail(EINVAL);
	if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_ACK_TIMEOUT &&
	    optlen == sizeof(uint8_t)) {
		c->timeout = *(uint8_t *)optval;
		return 0;
	}
	/* TOS, REUSEADDR, AFONLY, the IB path: nothing to do for us */
	if (level == RDMA_OPTION_ID || level == RDMA_OPTION_IB)
		return 0;
	return fail(ENOSYS);
}

__be16
rdma_get_src_port(struct rdma_cm_id *id)
{
	return id->route.addr.src_sin.sin_port;
}

__be16
rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id->route.addr.dst_sin.sin_port;
}
