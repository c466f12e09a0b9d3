/* SPDX-License-Identifier: BSD-3-Clause
 * librdmacm of our own (librdmacm.so.1, the symbol versions of Debian 12's:
 * rdma_cma.h is the ABI): RDMA CM's calls over the process's CM agent
 * (host/et_rdmacm on the NIC's QP 1, the one the provider uses), on the
 * device of our libibverbs, whose runtime it shares (libibverbs exports
 * what this library needs under ETHEREAL_PRIVATE_1).  No kernel: the
 * REQ, REP, RTU, REJ, DREQ and DREP are MADs on the wire, as Linux's CM
 * sends them, so a peer may be another program on Ethereal or any
 * rdma_cm program on a Linux RoCE host.
 *
 * An id's QP is a verbs QP, moved as librdmacm moves one: INIT at
 * rdma_create_qp; RTR and RTS with the peer's QPN, PSN and path MTU when
 * the connection is made (the active side on the REP, the passive side at
 * rdma_accept), inside the agent, before the RTU or the REP leaves, so the
 * peer's first packet finds it ready; ERR at rdma_disconnect and on the
 * peer's DREQ.  Events are queued on their channel by progress (the keeper
 * thread runs it while the program waits) and the channel's fd, a pipe,
 * carries a byte per event: poll and select see it, as the kernel's.
 * Everything holds the process's lock (et_process_lock), as verbs does.
 *
 * A synchronous id (a NULL channel: rdma_create_ep, rdma_get_request)
 * has a channel of its own, and each call waits for its event there, as
 * librdmacm's (ucma_complete).  Every id of the device shares one PD (the
 * id's pd), as librdmacm's do; rdma_create_qp makes the CQs and their
 * completion channels a program does not give (rdma_get_recv_comp's).
 *
 * RC over RDMA_PS_TCP (and RDMA_PS_IB, the same space here); UD over
 * RDMA_PS_UDP, by SIDR (a SIDR_REQ answered with the UD QP's number and
 * Q_Key), its QP moved to RTS at rdma_create_qp as librdmacm moves one;
 * multicast, SRQs and rsockets are refused (ENOSYS), never crashed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "cma_priv.h"
#include "wire/et_gid.h"

/* ---- the device: ours, opened once for every id ---- */

struct ibv_context *cma_verbs;
struct ibv_pd *cma_pd; /* every id's, as librdmacm's device PD */
static pid_t cma_pid; /* the process that opened it (not a forked child) */

/* Our device open (the process runtime with it): 0, or -1 with errno. */
int
cma_init(void)
{
	struct ibv_device **l;
	int n = 0;

	if (cma_verbs)
		return 0;
	l = ibv_get_device_list(&n);
	if (l && n > 0)
		cma_verbs = ibv_open_device(l[0]);
	if (l)
		ibv_free_device_list(l);
	if (cma_verbs && (cma_pd = ibv_alloc_pd(cma_verbs)) == NULL) {
		ibv_close_device(cma_verbs);
		cma_verbs = NULL;
	}
	if (cma_verbs == NULL) {
		errno = ENODEV;
		return -1;
	}
	cma_pid = getpid();
	return 0;
}

/* The device closes when the library unloads at exit, as librdmacm's
 * does: a program that met its peer by RDMA CM never closes it itself,
 * and the close lets its last ACK out and prints ETHEREAL_STATS. */
static void __attribute__((destructor))
cma_fini(void)
{
	if (cma_verbs == NULL || getpid() != cma_pid)
		return;
	ibv_dealloc_pd(cma_pd);
	ibv_close_device(cma_verbs);
	cma_verbs = NULL;
}

/* The id is on our device now (bound, resolved, or a request's). */
void
cma_on_device(struct rdma_cm_id *id)
{
	id->verbs = cma_verbs;
	if (id->pd == NULL)
		id->pd = cma_pd;
}



/* ---- events ---- */

/* A new event for c's channel, filled by the caller, queued and told by
 * the channel's fd.  The lock held. */
static struct cma_event *
event_new(struct cma_id *c, enum rdma_cm_event_type type, int status)
{
	struct cma_event *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->ev.id = &c->id;
	e->ev.event = type;
	e->ev.status = status;
	e->owner = c;
	return e;
}

static void
event_post(struct cma_id *c, struct cma_event *e)
{
	struct cma_channel *ch = (struct cma_channel *)c->id.channel;
	uint8_t b = 1;

	c->unacked++;
	if (ch->tail)
		ch->tail->next = e;
	else
		ch->head = e;
	ch->tail = e;
	if (write(ch->wr, &b, 1) != 1)
		perror("librdmacm: the event channel's pipe");
}

static int
post_simple(struct cma_id *c, enum rdma_cm_event_type type, int status)
{
	struct cma_event *e = event_new(c, type, status);

	if (e == NULL)
		return fail(ENOMEM);
	event_post(c, e);
	return 0;
}

static void
set_sin(struct sockaddr_in *s, uint32_t ip, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_addr.s_addr = htonl(ip);
	s->sin_port = htons(port);
}



/* The route's addresses set, its one path record with them. */
void
cma_set_route(struct cma_id *c, uint32_t src_ip, uint16_t src_port, uint32_t dst_ip,
	      uint16_t dst_port)
{
	set_sin(&c->id.route.addr.src_sin, src_ip, src_port);
	set_sin(&c->id.route.addr.dst_sin, dst_ip, dst_port);
	memset(&c->path, 0, sizeof(c->path));
	et_gid_from_ipv4(src_ip, c->path.sgid.raw);
	et_gid_from_ipv4(dst_ip, c->path.dgid.raw);
	c->path.pkey = htons(0xffff);
	c->path.mtu = IBV_MTU_1024;
	for (uint32_t m = 256, e = IBV_MTU_256; m <= et_process.c.rc.qp.mtu && e <= IBV_MTU_4096;
	     m *= 2, e++)
		c->path.mtu = e;
	c->path.hop_limit = 64;
	c->id.route.path_rec = &c->path;
	c->id.route.num_paths = 1;
}

static const char *const event_names[] = {
	[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
	[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
	[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
	[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
	[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
	[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
	[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
	[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
	[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
	[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
	[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
	[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
	[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
	[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
	[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
	[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
};

const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	if ((size_t)event < sizeof(event_names) / sizeof(event_names[0]) && event_names[event])
		return event_names[event];
	return "UNKNOWN EVENT";
}

/* ---- the QP moved as the connection goes ---- */

static enum ibv_mtu
mtu_enum(uint32_t bytes)
{
	enum ibv_mtu e = IBV_MTU_256;

	for (uint32_t m = 512; m <= bytes && e < IBV_MTU_4096; m *= 2)
		e++;
	return e;
}

/* A route to ip, as the kernel's rdma_cm gives one over RoCE: global, to
 * its IPv4-mapped GID from ours (GID 1), port 1. */
static void
route_to(struct ibv_ah_attr *ah, uint32_t ip)
{
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.sgid_index = 1;
	ah->grh.hop_limit = 64;
	et_gid_from_ipv4(ip, ah->grh.dgid.raw);
}

/* The connection is made (the active side: the REP in; the passive side:
 * rdma_accept): the QP to RTR and RTS with the peer's parameters, as
 * librdmacm does with the kernel's rdma_init_qp_attr.  From the agent,
 * the lock held. */
int
cma_bind(void *ctx, const struct et_rdmacm_bind *b)
{
	struct cma_id *c = ctx;
	struct ibv_qp *qp = c->id.qp;
	struct ibv_qp_attr a;

	if (qp == NULL || qp->state != IBV_QPS_INIT)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu_enum(b->mtu);
	a.dest_qp_num = b->peer_qpn;
	a.rq_psn = c->psn;
	a.max_dest_rd_atomic = c->responder_resources;
	a.min_rnr_timer = 12;
	route_to(&a.ah_attr, b->peer_ip);
	if (et_vb_modify_qp_locked(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = b->peer_psn;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_count;
	a.rnr_retry = c->rnr_retry_count;
	a.max_rd_atomic = c->initiator_depth;
	if (et_vb_modify_qp_locked(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		return -1;
	if (b->mac)
		et_qp_set_dest_mac(((struct et_vb_qp *)qp)->eq, b->mac);
	return 0;
}

/* The id's QP to ERR, unless the program destroyed it with
 * ibv_destroy_qp (perftest does, then waits for its peer's DREQ): the
 * agent has forgotten it then, and id.qp points at freed memory. */
void
cma_qp_to_error(struct cma_id *c)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	struct ibv_qp *qp = c->id.qp;

	if (qp == NULL || (c->rid && et_rdmacm_id_qp(c->rid) == NULL))
		return;
	if (qp->state != IBV_QPS_ERR && qp->state != IBV_QPS_RESET)
		et_vb_modify_qp_locked(qp, &a, IBV_QP_STATE);
}

/* ---- what the agent tells: events for the program ---- */

static void on_request(struct et_process_cm_holder *h, const struct et_rdmacm_event *ev,
		       uint64_t now);

static struct cma_id *
id_alloc(struct rdma_event_channel *channel, void *context, enum rdma_port_space ps)
{
	struct cma_id *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->id.channel = channel;
	c->id.context = context;
	c->id.ps = ps;
	c->id.qp_type = ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	c->id.port_num = 1;
	c->timeout = 14;
	c->responder_resources = c->initiator_depth = 1; /* a NULL conn_param's */
	c->retry_count = 7;
	c->rnr_retry_count = 7;
	c->id.route.addr.src_sin.sin_family = AF_INET;
	c->id.route.addr.dst_sin.sin_family = AF_INET;
	return c;
}

/* The agent's port space of an id's. */
static uint16_t
agent_ps(const struct rdma_cm_id *id)
{
	return id->ps == RDMA_PS_UDP ? ET_RDMA_PS_UDP : ET_RDMA_PS_TCP;
}

/* A UD event's parameters: the private data, and on an active side's
 * ESTABLISHED the peer's QP, Q_Key and a route to it. */
static void
ud_param(struct cma_event *e, const struct et_rdmacm_event *ev)
{
	struct rdma_ud_param *u = &e->ev.param.ud;

	memcpy(e->pdata, ev->pdata, ev->pdata_len);
	u->private_data = e->pdata;
	u->private_data_len = (uint8_t)ev->pdata_len;
	if (ev->type != ET_CM_EV_SIDR_REPLY)
		return;
	u->qp_num = ev->peer_qpn;
	u->qkey = ev->qkey;
	route_to(&u->ah_attr, ev->peer_ip);
}

void
cma_on_event(struct et_process_cm_holder *h, const struct et_rdmacm_event *ev, uint64_t now)
{
	struct cma_id *c = (struct cma_id *)((char *)h - offsetof(struct cma_id, holder));
	struct cma_event *e;

	(void)now;
	switch (ev->type) {
	case ET_CM_EV_ESTABLISHED:
		e = event_new(c, RDMA_CM_EVENT_ESTABLISHED, 0);
		if (e && !c->listening) /* the REP's private data (active side) */
			memcpy(e->pdata, ev->pdata, ev->pdata_len);
		if (e) {
			e->ev.param.conn.private_data = e->pdata;
			e->ev.param.conn.private_data_len = (uint8_t)ev->pdata_len;
			e->ev.param.conn.responder_resources = ev->responder_resources;
			e->ev.param.conn.initiator_depth = ev->initiator_depth;
			e->ev.param.conn.qp_num = ev->peer_qpn;
		}
		break;
	case ET_CM_EV_REJECTED:
		/* rdma_cm's status: the IB reject reason */
		e = event_new(c, RDMA_CM_EVENT_REJECTED, ev->reason);
		if (e) {
			memcpy(e->pdata, ev->pdata, ev->pdata_len);
			e->ev.param.conn.private_data = e->pdata;
			e->ev.param.conn.private_data_len = (uint8_t)ev->pdata_len;
		}
		cma_qp_to_error(c);
		break;
	case ET_CM_EV_UNREACHABLE:
		e = event_new(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		cma_qp_to_error(c);
		break;
	case ET_CM_EV_DISCONNECTED:
		e = event_new(c, RDMA_CM_EVENT_DISCONNECTED, 0);
		cma_qp_to_error(c);
		break;
	case ET_CM_EV_SIDR_REPLY:
		/* as the kernel's: a refusal is unreachable, status the SIDR's */
		e = ev->reason == ET_CM_SIDR_SUCCESS ? event_new(c, RDMA_CM_EVENT_ESTABLISHED, 0)
			: event_new(c, RDMA_CM_EVENT_UNREACHABLE, ev->reason);
		if (e)
			ud_param(e, ev);
		break;
	default:
		return;
	}
	if (e)
		event_post(c, e);
}

/* A request to a listener: a new id on its channel, the peer's parameters
 * in the event. */
static void
on_request(struct et_process_cm_holder *h, const struct et_rdmacm_event *ev, uint64_t now)
{
	struct cma_id *l = (struct cma_id *)((char *)h - offsetof(struct cma_id, holder));
	struct cma_id *c;
	struct cma_event *e;

	if (ev->type != ET_CM_EV_CONNECT_REQUEST) {
		cma_on_event(h, ev, now);
		return;
	}
	c = id_alloc(l->id.channel, l->id.context, l->id.ps);
	e = c ? event_new(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0) : NULL;
	if (e == NULL) { /* no memory: refused, as if nobody listened */
		free(c);
		et_rdmacm_reject(et_process.rdmacm, ev->id, NULL, 0, now);
		et_rdmacm_release(et_process.rdmacm, ev->id, now);
		return;
	}
	c->holder.on_event = cma_on_event;
	c->rid = ev->id;
	cma_on_device(&c->id);
	c->responder_resources = ev->responder_resources;
	c->initiator_depth = ev->initiator_depth;
	c->retry_count = ev->retry_count;
	c->rnr_retry_count = ev->rnr_retry_count;
	cma_set_route(c, et_process.ip, ev->port, ev->peer_ip, ev->peer_port);
	et_rdmacm_id_set_ctx(ev->id, &c->holder);
	e->ev.listen_id = &l->id;
	if (ev->sidr) {
		ud_param(e, ev);
		goto posted;
	}
	memcpy(e->pdata, ev->pdata, ev->pdata_len);
	e->ev.param.conn.private_data = e->pdata;
	e->ev.param.conn.private_data_len = (uint8_t)ev->pdata_len;
	e->ev.param.conn.responder_resources = ev->responder_resources;
	e->ev.param.conn.initiator_depth = ev->initiator_depth;
	e->ev.param.conn.retry_count = ev->retry_count;
	e->ev.param.conn.rnr_retry_count = ev->rnr_retry_count;
	e->ev.param.conn.qp_num = ev->peer_qpn;
posted:
	event_post(c, e);
	/* a synchronous listener's request: its later events on a channel of
	 * its own (rdma_get_request hands it over) */
	if (l->sync) {
		struct rdma_event_channel *own = rdma_create_event_channel();

		if (own) {
			c->id.channel = own;
			c->sync = true;
		}
	}
}

/* ---- channels ---- */

struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct cma_channel *ch;
	int fds[2];

	if (cma_init())
		return NULL;
	if ((ch = calloc(1, sizeof(*ch))) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		free(ch);
		return NULL;
	}
	ch->ch.fd = fds[0];
	ch->wr = fds[1];
	fcntl(ch->wr, F_SETFL, O_NONBLOCK);
	return &ch->ch;
}

static void
channel_free(struct cma_channel *ch)
{
	close(ch->ch.fd);
	free(ch);
}

/* A reader of a destroyed channel leaves it, the lock held on entry and
 * let go: the last frees it. */
static void
channel_leave(struct cma_channel *ch)
{
	bool last = ch->readers == 0;

	et_process_unlock();
	if (last)
		channel_free(ch);
}

void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cma_channel *ch = (struct cma_channel *)channel;
	bool last;

	et_process_lock();
	while (ch->head) {
		struct cma_event *e = ch->head;

		ch->head = e->next;
		e->owner->unacked--; /* a live id's: a destroyed one's left with it */
		free(e);
	}
	ch->tail = NULL;
	ch->dead = true;
	last = ch->readers == 0;
	et_process_unlock();
	/* the write end stays open: a thread blocked in rdma_get_cm_event on
	 * this channel stays blocked, as on the kernel's channel, rather than
	 * wake to an end of file (rping's event thread would exit with it);
	 * one that wakes frees the channel (channel_leave) */
	if (last)
		channel_free(ch);
}

int
rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct cma_channel *ch = (struct cma_channel *)channel;
	struct cma_event *e = NULL;
	uint8_t b;

	if (event == NULL)
		return fail(EINVAL);
	while (e == NULL) {
		int err = 0;
		ssize_t n;

		et_process_lock();
		ch->readers++;
		et_process_unlock();
		/* blocked here, the keeper keeps the NIC and the agent going */
		et_process_waiters(1);
		n = read(ch->ch.fd, &b, 1);
		err = n < 0 ? errno : n == 0 ? ENODATA : 0;
		et_process_waiters(-1);
		et_process_lock();
		ch->readers--;
		if (ch->dead) {
			/* destroyed while this thread woke: it waits on, as one
			 * blocked in the kernel's channel does (Debian's rping
			 * exits 255 on an error here, while its main thread
			 * tears down), until the program ends or cancels it */
			channel_leave(ch); /* unlocks */
			for (;;)
				pause();
		}
		/* none: its id was destroyed, its events with it */
		if (err == 0 && (e = ch->head) != NULL && (ch->head = e->next) == NULL)
			ch->tail = NULL;
		et_process_unlock();
		if (err)
			return fail(err);
	}
	*event = &e->ev;
	return 0;
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *e = (struct cma_event *)event;

	if (event == NULL)
		return fail(EINVAL);
	et_process_lock();
	if (e->owner)
		e->owner->unacked--;
	et_process_unlock();
	free(e);
	return 0;
}

/* To another channel; NULL: a channel of its own, synchronous from now
 * on.  Events already queued stay where they are. */
int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cma_id *c = cma(id);
	struct rdma_event_channel *old = c->sync ? id->channel : NULL;
	bool sync = channel == NULL;

	if (sync && (channel = rdma_create_event_channel()) == NULL)
		return -1;
	et_process_lock();
	id->channel = channel;
	c->sync = sync;
	et_process_unlock();
	if (old && old != channel)
		rdma_destroy_event_channel(old);
	return 0;
}

/* ---- ids ---- */

int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
	       enum rdma_port_space ps)
{
	struct cma_id *c;

	if (id == NULL)
		return fail(EINVAL);
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_IB && ps != RDMA_PS_UDP)
		return fail(ENOSYS); /* IPoIB's: no multicast here */
	if (cma_init())
		return -1;
	if ((c = id_alloc(channel, context, ps)) == NULL)
		return fail(ENOMEM);
	if (channel == NULL && (c->id.channel = rdma_create_event_channel()) == NULL) {
		free(c);
		return -1;
	}
	c->sync = channel == NULL;
	*id = &c->id;
	return 0;
}

/* A synchronous id's call waits for its event (the last one acknowledged
 * first; this one kept in id->event until the next): 0, or -1 with errno
 * from the event (ECONNREFUSED for a reject). */
int
cma_complete(struct rdma_cm_id *id)
{
	struct rdma_cm_event *e;

	if (!cma(id)->sync)
		return 0;
	if (id->event) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	if (rdma_get_cm_event(id->channel, &e))
		return -1;
	id->event = e;
	if (e->event == RDMA_CM_EVENT_REJECTED)
		return fail(ECONNREFUSED);
	if (e->status)
		return fail(e->status < 0 ? -e->status : e->status);
	return 0;
}

/* The events of c not yet taken leave its channel (the program will not
 * ask for them: the id is going). */
static void
drop_events(struct cma_id *c)
{
	struct cma_channel *ch = (struct cma_channel *)c->id.channel;
	struct cma_event **pp = &ch->head, *e;

	ch->tail = NULL;
	while ((e = *pp) != NULL) {
		if (e->owner == c) {
			*pp = e->next;
			free(e);
			c->unacked--;
			continue;
		}
		ch->tail = e;
		pp = &e->next;
	}
}

int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cma_id *c = cma(id);

	if (c->sync && id->event) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	et_process_lock();
	if (c->listening)
		et_rdmacm_unlisten(et_process.rdmacm, agent_ps(id),
				   addr_port(&id->route.addr.src_addr));
	if (c->rid)
		et_rdmacm_release(et_process.rdmacm, c->rid, et_process_now());
	/* as librdmacm: the events taken are acknowledged first (the thread
	 * that took them is done with the id) */
	drop_events(c);
	while (c->unacked) {
		et_process_unlock();
		usleep(100);
		et_process_lock();
	}
	/* an event taken and not acknowledged keeps no pointer to use */
	for (struct cma_event *e = ((struct cma_channel *)id->channel)->head; e; e = e->next)
		if (e->ev.listen_id == id)
			e->ev.listen_id = NULL;
	et_process_unlock();
	if (c->sync)
		rdma_destroy_event_channel(id->channel);
	free(c);
	return 0;
}

int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cma_id *c = cma(id);
	uint32_t ip;

	if (addr == NULL)
		return fail(EINVAL);
	if (addr->sa_family != AF_INET)
		return fail(EAFNOSUPPORT);
	ip = addr_ip(addr);
	if (ip != 0 && ip != et_process.ip && (ip >> 24) != 127)
		return fail(EADDRNOTAVAIL);
	cma_on_device(id);
	cma_set_route(c, et_process.ip, addr_port(addr), 0, 0);
	return 0;
}

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cma_id *c = cma(id);
	struct et_rdmacm *agent;
	int r;

	(void)backlog;
	et_process_lock();
	agent = et_process_rdmacm();
	c->holder.on_event = on_request;
	r = agent ? et_rdmacm_listen(agent, agent_ps(id), addr_port(&id->route.addr.src_addr),
				     &c->holder)
		  : -ENODEV;
	if (r == 0)
		c->listening = true;
	et_process_unlock();
	return r ? fail(-r) : 0;
}

int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		  int timeout_ms)
{
	struct cma_id *c = cma(id);
	int r;

	(void)timeout_ms;
	if (dst_addr == NULL)
		return fail(EINVAL);
	if (dst_addr->sa_family != AF_INET || (src_addr && src_addr->sa_family != AF_INET))
		return fail(EAFNOSUPPORT);
	if (src_addr && rdma_bind_addr(id, src_addr))
		return -1;
	cma_on_device(id);
	et_process_lock();
	cma_set_route(c, et_process.ip, addr_port(&id->route.addr.src_addr), addr_ip(dst_addr),
		      addr_port(dst_addr));
	/* the peer's MAC is the agent's to find (ARP), when it sends */
	r = post_simple(c, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	et_process_unlock();
	return r ? r : cma_complete(id);
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	int r;

	(void)timeout_ms;
	et_process_lock();
	r = post_simple(cma(id), RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	et_process_unlock();
	return r ? r : cma_complete(id);
}
