/* SPDX-License-Identifier: BSD-3-Clause
 * Endpoints: an FI_EP_RDM endpoint is an address (the process's IPv4 and
 * a port of its own) that listens for its peers' connections, the
 * connections it makes to the addresses it sends to, and the queues of
 * its receives and of the messages that came before them.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "et_fi.h"
#include "et_fi_cm.h"

/* ---- requests, and their ids (the peer's CTS and immediates name them) ---- */

#define ID_BITS 20
#define ID_MASK ((1u << ID_BITS) - 1)

static int
req_ids_grow(struct et_fi_ep *ep)
{
	uint32_t n = ep->n_reqs ? ep->n_reqs * 2 : 256, i;
	struct et_fi_req **r;
	uint16_t *g;

	if (n > ID_MASK + 1)
		return -FI_ENOMEM;
	r = realloc(ep->reqs, n * sizeof(*r));
	if (r == NULL)
		return -FI_ENOMEM;
	ep->reqs = r;
	g = realloc(ep->gens, n * sizeof(*g));
	if (g == NULL)
		return -FI_ENOMEM;
	ep->gens = g;
	/* free slots chain through their pointer: index + 1 as a tagged value */
	for (i = ep->n_reqs; i < n; i++) {
		r[i] = (struct et_fi_req *)(uintptr_t)(((uintptr_t)(i + 1 < n ? i + 1 : UINT32_MAX)
							<< 1) | 1);
		g[i] = 0;
	}
	ep->free_id = ep->n_reqs;
	ep->n_reqs = n;
	return 0;
}

struct et_fi_req *
et_fi_req_new(struct et_fi_ep *ep, enum et_fi_req_kind kind)
{
	struct et_fi_req *req;
	uint32_t i;

	if (ep->free_id == UINT32_MAX && req_ids_grow(ep))
		return NULL;
	if ((req = TAILQ_FIRST(&ep->req_free)) != NULL) {
		uint8_t *buf = req->inject_buf;
		uint64_t cap = req->inject_cap;

		TAILQ_REMOVE(&ep->req_free, req, link);
		memset(req, 0, sizeof(*req));
		req->inject_buf = buf;
		req->inject_cap = cap;
	} else if ((req = calloc(1, sizeof(*req))) == NULL) {
		return NULL;
	}
	i = ep->free_id;
	ep->free_id = (uint32_t)((uintptr_t)ep->reqs[i] >> 1);
	ep->reqs[i] = req;
	ep->gens[i] = (uint16_t)((ep->gens[i] + 1) & 0xfff);
	req->id = (uint32_t)ep->gens[i] << ID_BITS | i;
	req->kind = kind;
	req->ep = ep;
	req->addr = FI_ADDR_UNSPEC;
	return req;
}

/* true: key is kept until a late duplicate READ can no longer come */
static bool
key_retire(struct et_fi_ep *ep, uint32_t key)
{
	uint64_t rto4 = 4 * et_process.c.rc.qp.rto_ns;
	struct et_fi_retired *r = et_ring_push((void **)&ep->retired, &ep->ret_cap, ep->ret_head,
					       &ep->ret_tail, sizeof(*r), UINT32_MAX);

	if (r == NULL)
		return false;
	*r = (struct et_fi_retired){
		key, et_process_now() + (rto4 > ET_FI_READ_KEY_LINGER_NS ? rto4 : ET_FI_READ_KEY_LINGER_NS)};
	return true;
}

void
et_fi_keys_expire(struct et_fi_ep *ep, uint64_t now)
{
	while (ep->ret_head != ep->ret_tail &&
	       ep->retired[ep->ret_head & (ep->ret_cap - 1)].until <= now)
		et_mr_dereg(ep->mrs, ep->retired[ep->ret_head++ & (ep->ret_cap - 1)].key);
}

struct et_fi_req *
et_fi_tx_req(struct et_fi_ep *ep, enum et_fi_req_kind kind, fi_addr_t dest, void *buf,
	     uint64_t len, void *context, uint64_t op_flags, uint64_t flags, int *err)
{
	struct et_fi_conn *c;
	struct et_fi_req *req;

	if (!ep->enabled) {
		*err = -FI_EOPBADSTATE;
		return NULL;
	}
	if ((c = et_fi_conn_to(ep, dest, err)) == NULL)
		return NULL;
	if ((req = et_fi_req_new(ep, kind)) == NULL) {
		*err = -FI_EAGAIN;
		return NULL;
	}
	req->context = context;
	req->op_flags = op_flags;
	req->flags = flags;
	req->addr = dest;
	req->buf = buf;
	req->len = len;
	req->conn = c;
	return req;
}

void
et_fi_req_free(struct et_fi_req *req)
{
	struct et_fi_ep *ep = req->ep;
	uint32_t i = req->id & ID_MASK;

	if (req->tmp_key && !(req->tmp_read && key_retire(ep, req->tmp_key)))
		et_mr_dereg(ep->mrs, req->tmp_key);
	ep->reqs[i] = (struct et_fi_req *)(uintptr_t)(((uintptr_t)ep->free_id << 1) | 1);
	ep->free_id = i;
	TAILQ_INSERT_HEAD(&ep->req_free, req, link); /* the warmest first */
}

int
et_fi_req_inject(struct et_fi_req *req, const void *buf, uint64_t len)
{
	if (et_fi_room(&req->inject_buf, &req->inject_cap, len))
		return -FI_ENOMEM;
	memcpy(req->inject_buf, buf, len);
	req->buf = req->inject = req->inject_buf;
	return 0;
}

static void
req_destroy(struct et_fi_req *req)
{
	free(req->inject_buf);
	free(req);
}

struct et_fi_req *
et_fi_req_by_id(struct et_fi_ep *ep, uint32_t id)
{
	uint32_t i = id & ID_MASK;

	if (i >= ep->n_reqs || ((uintptr_t)ep->reqs[i] & 1) || ep->gens[i] != id >> ID_BITS)
		return NULL;
	return ep->reqs[i];
}

/* ---- completions of requests ---- */

static struct et_fi_cntr *
cntr_of(const struct et_fi_req *req)
{
	const struct et_fi_ep *ep = req->ep;

	switch (req->kind) {
	case ET_FI_REQ_SEND:
		return ep->c_send;
	case ET_FI_REQ_RECV:
		return ep->c_recv;
	case ET_FI_REQ_WRITE:
		return ep->c_write;
	case ET_FI_REQ_READ:
		return ep->c_read;
	}
	return NULL;
}

void
et_fi_req_complete(struct et_fi_req *req, int err, uint64_t olen)
{
	struct et_fi_ep *ep = req->ep;
	bool rx = req->kind == ET_FI_REQ_RECV;
	struct et_fi_cq *cq = rx ? ep->rx_cq : ep->tx_cq;
	bool selective = rx ? ep->rx_selective : ep->tx_selective;

	/* an error always completes; a success as the op asked */
	if (cq && (err || !selective || (req->op_flags & FI_COMPLETION)) &&
	    !(req->op_flags & ET_FI_SILENT)) {
		struct et_fi_cqe e = {
			.e = {.op_context = req->context, .flags = req->flags,
			      .len = rx ? (req->msg_len < req->len ? req->msg_len : req->len) : 0,
			      .buf = rx ? req->buf : NULL,
			      .data = rx && (req->flags & FI_REMOTE_CQ_DATA) ? req->data : 0,
			      .tag = rx && (req->flags & FI_TAGGED) ? req->tag : 0},
			.src = rx && req->conn ? et_fi_conn_addr(req->conn) : FI_ADDR_NOTAVAIL,
			.err = err,
			.olen = olen,
		};

		if (!rx && !(req->flags & FI_REMOTE_CQ_DATA))
			e.e.data = 0;
		if (err && !rx)
			e.e.len = 0;
		if (err)
			e.prov_errno = req->wc_status;
		et_fi_cq_push(cq, &e);
	}
	et_fi_cntr_inc(cntr_of(req), err != 0);
	et_fi_req_free(req);
}

void
et_fi_req_check(struct et_fi_req *req)
{
	if (req->inflight == 0 && (req->done || req->err))
		et_fi_req_complete(req, req->err,
				   req->kind == ET_FI_REQ_RECV && req->msg_len > req->len
					   ? req->msg_len - req->len
					   : 0);
}

void
et_fi_req_fail(struct et_fi_req *req, int err)
{
	if (!req->err)
		req->err = err;
	et_fi_req_check(req);
}

/* ---- fi_ops ---- */

static void
unref_all(struct et_fi_ep *ep)
{
	struct et_fi_cntr *c[] = {ep->c_send, ep->c_recv, ep->c_read, ep->c_write, ep->c_rread,
				  ep->c_rwrite};

	if (ep->av)
		ep->av->refs--;
	if (ep->tx_cq)
		ep->tx_cq->refs--;
	if (ep->rx_cq)
		ep->rx_cq->refs--;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (c[i])
			c[i]->refs--;
	if (ep->eq)
		ep->eq->refs--;
}

static int
ep_close(struct fid *fid)
{
	struct et_fi_ep *ep = container_of(fid, struct et_fi_ep, ep.fid);

	et_process_lock();
	if (ep->enabled) {
		struct et_fi_ep **pp = &et_fi_proc.eps;

		et_process_linger();
		while (*pp && *pp != ep)
			pp = &(*pp)->next;
		if (*pp)
			*pp = ep->next;
		et_fi_cm_unlisten(ep);
		et_fi_flow_ep_free(ep);
		et_fi_conns_free(ep);
		et_fi_msg_ep_free(ep);
		et_cq_free(&ep->scq);
		et_cq_free(&ep->rcq);
		if (et_fi_proc.eps == NULL)
			et_fi_report();
	}
	unref_all(ep);
	ep->d->refs--;
	et_process_unlock();
	for (uint32_t i = 0; i < ep->n_reqs; i++)
		if (!((uintptr_t)ep->reqs[i] & 1))
			req_destroy(ep->reqs[i]);
	while (!TAILQ_EMPTY(&ep->req_free)) {
		struct et_fi_req *req = TAILQ_FIRST(&ep->req_free);

		TAILQ_REMOVE(&ep->req_free, req, link);
		req_destroy(req);
	}
	free(ep->reqs);
	free(ep->gens);
	free(ep->retired);
	free(ep->out);
	free(ep->tslots);
	free(ep->tbuf);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static int
ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct et_fi_ep *ep = container_of(fid, struct et_fi_ep, ep.fid);
	int r = 0;

	et_process_lock();
	if (ep->enabled) {
		r = -FI_EOPBADSTATE;
		goto out;
	}
	switch (bfid->fclass) {
	case FI_CLASS_AV: {
		struct et_fi_av *av = container_of(bfid, struct et_fi_av, av.fid);

		if (ep->av || av->d != ep->d) {
			r = -FI_EINVAL;
			break;
		}
		ep->av = av;
		av->refs++;
		break;
	}
	case FI_CLASS_CQ: {
		struct et_fi_cq *cq = container_of(bfid, struct et_fi_cq, cq.fid);

		if (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) {
			r = -FI_EBADFLAGS;
			break;
		}
		if (((flags & FI_TRANSMIT) && ep->tx_cq) || ((flags & FI_RECV) && ep->rx_cq)) {
			r = -FI_EINVAL;
			break;
		}
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
			cq->refs++;
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
			cq->refs++;
		}
		break;
	}
	case FI_CLASS_CNTR: {
		struct et_fi_cntr *c = container_of(bfid, struct et_fi_cntr, cntr.fid);
		struct {
			uint64_t flag;
			struct et_fi_cntr **slot;
		} m[] = {{FI_SEND, &ep->c_send},   {FI_RECV, &ep->c_recv},
			 {FI_READ, &ep->c_read},   {FI_WRITE, &ep->c_write},
			 {FI_REMOTE_READ, &ep->c_rread}, {FI_REMOTE_WRITE, &ep->c_rwrite}};

		if (flags & ~(uint64_t)(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
					FI_REMOTE_WRITE)) {
			r = -FI_EBADFLAGS;
			break;
		}
		/* a remote access does not tell the target: FI_RMA_EVENT is not claimed */
		if (flags & (FI_REMOTE_READ | FI_REMOTE_WRITE)) {
			r = -FI_ENOSYS;
			break;
		}
		for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
			if (flags & m[i].flag) {
				*m[i].slot = c;
				c->refs++;
			}
		break;
	}
	case FI_CLASS_EQ:
		ep->eq = container_of(bfid, struct et_fi_eq, eq.fid);
		ep->eq->refs++;
		break;
	default:
		r = -FI_EINVAL;
	}
out:
	et_process_unlock();
	return r;
}

static bool
port_taken(uint16_t port)
{
	for (struct et_fi_ep *e = et_fi_proc.eps; e; e = e->next)
		if (e->port == port)
			return true;
	return false;
}

/* Tells this endpoint apart from any other on its address, of this
 * process or a later one: a peer that resumes a connection names it. */
static uint64_t
instance_new(void)
{
	static uint64_t count;
	uint64_t x = ((uint64_t)getpid() << 32) ^ et_process_now() ^ (++count << 48);

	/* splitmix64's finalizer: nearby inputs, far-apart outputs */
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x ? x : 1;
}

static int
ep_enable(struct et_fi_ep *ep)
{
	int r;

	if (ep->enabled)
		return 0;
	if (ep->av == NULL || (!ep->tx_cq && !ep->c_send && !ep->c_write) ||
	    (!ep->rx_cq && !ep->c_recv))
		return -FI_ENOCQ;
	if (port_taken(ep->port))
		return -FI_EADDRINUSE;
	if (et_cq_init(&ep->scq, 4096) || et_cq_init(&ep->rcq, 8192))
		return -FI_ENOMEM;
	ep->tslots = calloc(ET_FI_TX_SIZE, sizeof(*ep->tslots));
	ep->tbuf = malloc((size_t)ET_FI_TX_SIZE * (ET_FI_HDR_LEN + ep->eager));
	if (!ep->tslots || !ep->tbuf)
		return -FI_ENOMEM;
	for (uint32_t i = 0; i < ET_FI_TX_SIZE; i++) {
		ep->tslots[i].buf = ep->tbuf + (size_t)i * (ET_FI_HDR_LEN + ep->eager);
		ep->tslots[i].next = i + 1 < ET_FI_TX_SIZE ? &ep->tslots[i + 1] : NULL;
	}
	ep->free_tslot = ep->tslots;
	ep->instance = instance_new();
	if ((r = et_fi_cm_listen(ep)) != 0)
		return r;
	ep->enabled = true;
	ep->next = et_fi_proc.eps;
	et_fi_proc.eps = ep;
	return 0;
}

static int
ep_control(struct fid *fid, int command, void *arg)
{
	struct et_fi_ep *ep = container_of(fid, struct et_fi_ep, ep.fid);
	int r = 0;

	et_process_lock();
	switch (command) {
	case FI_ENABLE:
		r = ep_enable(ep);
		break;
	case FI_GETOPSFLAG: {
		uint64_t *f = arg;

		if ((*f & FI_TRANSMIT) && (*f & FI_RECV))
			r = -FI_EINVAL;
		else
			*f = (*f & FI_TRANSMIT) ? ep->tx_op_flags : ep->rx_op_flags;
		break;
	}
	case FI_SETOPSFLAG: {
		uint64_t f = *(uint64_t *)arg;

		if (f & FI_TRANSMIT)
			ep->tx_op_flags = f & ~(uint64_t)FI_TRANSMIT;
		else if (f & FI_RECV)
			ep->rx_op_flags = f & ~(uint64_t)FI_RECV;
		else
			r = -FI_EINVAL;
		break;
	}
	default:
		r = -FI_ENOSYS;
	}
	et_process_unlock();
	return r;
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = et_fi_no_ops_open,
};

/* ---- fi_ops_ep ---- */

static ssize_t
ep_cancel(fid_t fid, void *context)
{
	struct et_fi_ep *ep = container_of(fid, struct et_fi_ep, ep.fid);
	int r;

	et_process_lock();
	r = et_fi_msg_cancel(ep, context);
	et_process_unlock();
	return r;
}

static int
ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	return -FI_ENOPROTOOPT;
}

static int
ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	return -FI_ENOPROTOOPT;
}

static ssize_t
ep_rx_size_left(struct fid_ep *fep)
{
	struct et_fi_ep *ep = container_of(fep, struct et_fi_ep, ep);

	return ep->rx_posted < ET_FI_RX_SIZE ? ET_FI_RX_SIZE - ep->rx_posted : 0;
}

static ssize_t
ep_tx_size_left(struct fid_ep *fep)
{
	struct et_fi_ep *ep = container_of(fep, struct et_fi_ep, ep);

	return ep->tx_busy < ET_FI_TX_SIZE ? ET_FI_TX_SIZE - ep->tx_busy : 0;
}

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = et_fi_no_tx_ctx,
	.rx_ctx = et_fi_no_rx_ctx,
	.rx_size_left = ep_rx_size_left,
	.tx_size_left = ep_tx_size_left,
};

/* ---- fi_ops_cm: only names, for FI_EP_RDM ---- */

static int
ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct et_fi_ep *ep = container_of(fid, struct et_fi_ep, ep.fid);
	struct sockaddr_in sa;
	size_t have = *addrlen;

	et_fi_sockaddr(ep->ip, ep->port, &sa);
	*addrlen = sizeof(sa);
	if (have < sizeof(sa))
		return -FI_ETOOSMALL;
	memcpy(addr, &sa, sizeof(sa));
	return 0;
}

static struct fi_ops_cm cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = et_fi_no_setname,
	.getname = ep_getname,
	.getpeer = et_fi_no_getpeer,
	.connect = et_fi_no_connect,
	.listen = et_fi_no_listen,
	.accept = et_fi_no_accept,
	.reject = et_fi_no_reject,
	.shutdown = et_fi_no_shutdown,
	.join = et_fi_no_join,
};

int
et_fi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **fep,
	      void *context)
{
	struct et_fi_domain *d = container_of(domain, struct et_fi_domain, dom);
	struct et_fi_ep *ep;
	uint32_t ip = et_process.ip;
	uint16_t port = 0;

	if (info == NULL || info->ep_attr == NULL)
		return -FI_EINVAL;
	if (info->ep_attr->type != FI_EP_RDM)
		return -FI_ENOPROTOOPT;
	if (info->src_addr) {
		const struct sockaddr_in *sa = info->src_addr;

		if (info->src_addrlen < sizeof(*sa) || sa->sin_family != AF_INET)
			return -FI_EINVAL;
		if (ntohl(sa->sin_addr.s_addr) != ip)
			return -FI_EADDRNOTAVAIL; /* another slot's address */
		port = ntohs(sa->sin_port);
	}
	ep = calloc(1, sizeof(*ep));
	if (ep == NULL || (ep->info = fi_dupinfo(info)) == NULL) {
		free(ep);
		return -FI_ENOMEM;
	}
	et_process_lock();
	if (port == 0) {
		/* one of our own, above the ports consumers name */
		do
			port = (uint16_t)(49152 + et_fi_proc.next_port++ % 16384);
		while (port_taken(port));
	}
	d->refs++;
	et_process_unlock();
	ep->d = d;
	ep->mrs = &d->mrs;
	ep->ip = ip;
	ep->port = port;
	ep->caps = info->caps;
	ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	ep->eager = et_fi_proc.env.eager;
	ep->free_id = UINT32_MAX;
	TAILQ_INIT(&ep->rx_msg);
	TAILQ_INIT(&ep->rx_tag);
	TAILQ_INIT(&ep->req_free);
	TAILQ_INIT(&ep->ux_msg);
	TAILQ_INIT(&ep->ux_tag);
	TAILQ_INIT(&ep->ux_free);
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &cm_ops;
	ep->ep.msg = &et_fi_msg_ops;
	ep->ep.tagged = &et_fi_tagged_ops;
	ep->ep.rma = &et_fi_rma_ops;
	*fep = &ep->ep;
	return 0;
}
