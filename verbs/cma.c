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
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "et_vb.h"
#include "host/et_rdmacm.h"
#include "wire/et_gid.h"

/* what rdma_cm gives the UD QPs of its UDP port space (RDMA_UDP_QKEY) */
#define CMA_UDP_QKEY 0x01234567u

struct cma_id;

struct cma_channel {
	struct rdma_event_channel ch; /* first: the program's pointer */
	int wr;                       /* the pipe's write end */
	struct cma_event *head, *tail;
};

struct cma_event {
	struct rdma_cm_event ev;      /* first: rdma_ack_cm_event's pointer */
	struct cma_event *next;
	struct cma_id *owner;         /* whose unacknowledged event it is */
	uint8_t pdata[ET_CM_PDATA_MAX];
};

struct cma_id {
	struct rdma_cm_id id;         /* first: the program's pointer */
	struct et_process_cm_holder holder;
	struct et_rdmacm_id *rid;     /* the agent's connection; NULL: none yet or released */
	bool listening;
	uint32_t psn;                 /* the first PSN our QP expects */
	uint8_t responder_resources, initiator_depth, retry_count, rnr_retry_count;
	uint8_t timeout;              /* the QP's ACK timeout (rdma_set_option) */
	uint32_t unacked;             /* events the program has not acknowledged */
	bool sync;                    /* its channel its own: each call waits */
	struct ibv_qp_init_attr *ep_attr; /* a passive endpoint's: its requests' QPs */
	struct ibv_sa_path_rec path;  /* route.path_rec: the GIDs and the MTU */
};

/* ---- the device: ours, opened once for every id ---- */

static struct ibv_context *cma_verbs;
static struct ibv_pd *cma_pd; /* every id's, as librdmacm's device PD */
static pid_t cma_pid; /* the process that opened it (not a forked child) */

/* Our device open (the process runtime with it): 0, or -1 with errno. */
static int
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
static void
on_device(struct rdma_cm_id *id)
{
	id->verbs = cma_verbs;
	if (id->pd == NULL)
		id->pd = cma_pd;
}

static struct cma_id *
cma(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

static int
fail(int e)
{
	errno = e;
	return -1;
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

static uint32_t
addr_ip(const struct sockaddr *a)
{
	return ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr);
}

static uint16_t
addr_port(const struct sockaddr *a)
{
	return ntohs(((const struct sockaddr_in *)a)->sin_port);
}

/* The route's addresses set, its one path record with them. */
static void
set_route(struct cma_id *c, uint32_t src_ip, uint16_t src_port, uint32_t dst_ip,
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
static int
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

static void
qp_to_error(struct cma_id *c)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

	if (c->id.qp && c->id.qp->state != IBV_QPS_ERR && c->id.qp->state != IBV_QPS_RESET)
		et_vb_modify_qp_locked(c->id.qp, &a, IBV_QP_STATE);
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

static void
on_event(struct et_process_cm_holder *h, const struct et_rdmacm_event *ev, uint64_t now)
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
		qp_to_error(c);
		break;
	case ET_CM_EV_UNREACHABLE:
		e = event_new(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		qp_to_error(c);
		break;
	case ET_CM_EV_DISCONNECTED:
		e = event_new(c, RDMA_CM_EVENT_DISCONNECTED, 0);
		qp_to_error(c);
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
		on_event(h, ev, now);
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
	c->holder.on_event = on_event;
	c->rid = ev->id;
	on_device(&c->id);
	c->responder_resources = ev->responder_resources;
	c->initiator_depth = ev->initiator_depth;
	c->retry_count = ev->retry_count;
	c->rnr_retry_count = ev->rnr_retry_count;
	set_route(c, et_process.ip, ev->port, ev->peer_ip, ev->peer_port);
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

void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cma_channel *ch = (struct cma_channel *)channel;

	et_process_lock();
	while (ch->head) {
		struct cma_event *e = ch->head;

		ch->head = e->next;
		e->owner->unacked--; /* a live id's: a destroyed one's left with it */
		free(e);
	}
	et_process_unlock();
	/* the write end stays open: a thread blocked in rdma_get_cm_event on
	 * this channel stays blocked, as on the kernel's channel, rather than
	 * wake to an end of file (rping's event thread would exit with it) */
	close(ch->ch.fd);
	free(ch);
}

int
rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct cma_channel *ch = (struct cma_channel *)channel;
	struct cma_event *e;
	uint8_t b;

	if (event == NULL)
		return fail(EINVAL);
	for (;;) {
		ssize_t n;

		/* blocked here, the keeper keeps the NIC and the agent going */
		et_process_waiters(1);
		n = read(ch->ch.fd, &b, 1);
		et_process_waiters(-1);
		if (n != 1)
			return n == 0 ? fail(ENODATA) : -1;
		et_process_lock();
		if ((e = ch->head) != NULL && (ch->head = e->next) == NULL)
			ch->tail = NULL;
		et_process_unlock();
		if (e) /* none: its id was destroyed, its events with it */
			break;
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
static int
complete(struct rdma_cm_id *id)
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
	on_device(id);
	set_route(c, et_process.ip, addr_port(addr), 0, 0);
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
	on_device(id);
	et_process_lock();
	set_route(c, et_process.ip, addr_port(&id->route.addr.src_addr), addr_ip(dst_addr),
		  addr_port(dst_addr));
	/* the peer's MAC is the agent's to find (ARP), when it sends */
	r = post_simple(c, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	et_process_unlock();
	return r ? r : complete(id);
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	int r;

	(void)timeout_ms;
	et_process_lock();
	r = post_simple(cma(id), RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	et_process_unlock();
	return r ? r : complete(id);
}

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
		on_device(id);
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
	c->holder.on_event = on_event;
	agent = et_process_rdmacm();
	if (agent)
		c->rid = et_rdmacm_sidr(agent, addr_ip(&id->route.addr.dst_addr),
					addr_port(&id->route.addr.dst_addr), src_port,
					cp ? cp->private_data : NULL, cp ? cp->private_data_len : 0,
					&c->holder, et_process_now(), &err);
	else
		err = -ENODEV;
	if (c->rid)
		set_route(c, et_process.ip, src_port, addr_ip(&id->route.addr.dst_addr),
			  addr_port(&id->route.addr.dst_addr));
	et_process_unlock();
	return c->rid ? complete(id) : fail(-err);
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
	c->holder.on_event = on_event;
	agent = et_process_rdmacm();
	if (agent)
		c->rid = et_rdmacm_connect(agent, addr_ip(&id->route.addr.dst_addr),
					   addr_port(&id->route.addr.dst_addr),
					   ((struct et_vb_qp *)id->qp)->eq, &p, &c->holder,
					   et_process_now(), &err);
	else
		err = -ENODEV;
	if (c->rid)
		set_route(c, et_process.ip, 0xc000 | (id->qp->qp_num & 0x3fff),
			  addr_ip(&id->route.addr.dst_addr), addr_port(&id->route.addr.dst_addr));
	et_process_unlock();
	return c->rid ? complete(id) : fail(-err);
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
	return r ? fail(-r) : complete(id);
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
	qp_to_error(c);
	/* the peer closed first: its DREQ is answered already */
	if (s == ET_CMS_ESTABLISHED)
		r = et_rdmacm_disconnect(et_process.rdmacm, c->rid, et_process_now());
	et_process_unlock();
	return r ? fail(-r) : complete(id);
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

/* ---- endpoints: synchronous ids with their QP ---- */

int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm_id;
	struct cma_id *c;

	if (id == NULL || res == NULL)
		return fail(EINVAL);
	if (rdma_create_id(NULL, &cm_id, NULL,
			   res->ai_port_space ? (enum rdma_port_space)res->ai_port_space
					      : RDMA_PS_TCP))
		return -1;
	c = cma(cm_id);
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cm_id, res->ai_src_addr))
			goto err;
		if (pd)
			cm_id->pd = pd;
		if (qp_init_attr) {
			if ((c->ep_attr = malloc(sizeof(*qp_init_attr))) == NULL) {
				errno = ENOMEM;
				goto err;
			}
			*c->ep_attr = *qp_init_attr;
			c->ep_attr->qp_type = res->ai_qp_type;
		}
		*id = cm_id;
		return 0;
	}
	if (rdma_resolve_addr(cm_id, res->ai_src_addr, res->ai_dst_addr, 2000) ||
	    rdma_resolve_route(cm_id, 2000))
		goto err;
	if (qp_init_attr) /* the address's QP type, as librdmacm sets it */
		qp_init_attr->qp_type = res->ai_qp_type;
	if (qp_init_attr && rdma_create_qp(cm_id, pd, qp_init_attr))
		goto err;
	*id = cm_id;
	return 0;
err:
	rdma_destroy_ep(cm_id);
	return -1;
}

void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	int e = errno; /* the caller's error, when it cleans up after one */

	rdma_destroy_qp(id);
	free(cma(id)->ep_attr);
	rdma_destroy_id(id);
	errno = e;
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cma_id *l = cma(listen);
	struct rdma_cm_event *e;

	if (!l->sync || id == NULL)
		return fail(EINVAL);
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &e))
		return -1;
	if (e->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		listen->event = e;
		return fail(e->event == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED : EINVAL);
	}
	if (l->ep_attr) {
		struct ibv_qp_init_attr a = *l->ep_attr;

		if (rdma_create_qp(e->id, listen->pd, &a)) {
			listen->event = e;
			return -1;
		}
	}
	*id = e->id;
	e->id->event = e;
	return 0;
}

/* ---- devices ---- */

struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **l;

	if (cma_init()) {
		if (num_devices)
			*num_devices = 0;
		return NULL;
	}
	if ((l = calloc(2, sizeof(*l))) == NULL)
		return NULL;
	l[0] = cma_verbs;
	if (num_devices)
		*num_devices = 1;
	return l;
}

void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* ---- rdma_getaddrinfo: names through libc's resolver ---- */

static int
copy_sockaddr(struct sockaddr **to, socklen_t *len, const struct sockaddr *from, socklen_t n)
{
	if ((*to = malloc(n)) == NULL)
		return -1;
	memcpy(*to, from, n);
	*len = n;
	return 0;
}

int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	struct addrinfo h = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	struct rdma_addrinfo *r;
	bool passive = hints && (hints->ai_flags & RAI_PASSIVE);
	int e;

	if (res == NULL || (node == NULL && service == NULL))
		return fail(EINVAL);
	if (hints && hints->ai_family != AF_UNSPEC && hints->ai_family != AF_INET)
		return fail(EAFNOSUPPORT);
	if (hints && hints->ai_flags & RAI_NUMERICHOST)
		h.ai_flags |= AI_NUMERICHOST;
	if (passive)
		h.ai_flags |= AI_PASSIVE;
	if ((e = getaddrinfo(node, service, &h, &ai)) != 0)
		return fail(e == EAI_SYSTEM ? errno : EADDRNOTAVAIL);
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		freeaddrinfo(ai);
		return fail(ENOMEM);
	}
	r->ai_flags = hints ? hints->ai_flags : 0;
	r->ai_family = AF_INET;
	r->ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
	r->ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space : RDMA_PS_TCP;
	e = passive ? copy_sockaddr(&r->ai_src_addr, &r->ai_src_len, ai->ai_addr, ai->ai_addrlen)
		    : copy_sockaddr(&r->ai_dst_addr, &r->ai_dst_len, ai->ai_addr, ai->ai_addrlen);
	if (e == 0 && !passive && hints && hints->ai_src_addr)
		e = copy_sockaddr(&r->ai_src_addr, &r->ai_src_len, hints->ai_src_addr,
				  hints->ai_src_len);
	freeaddrinfo(ai);
	if (e) {
		rdma_freeaddrinfo(r);
		return fail(ENOMEM);
	}
	*res = r;
	return 0;
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}
