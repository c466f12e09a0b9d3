/* SPDX-License-Identifier: BSD-3-Clause
 * Domains, memory regions and address vectors.
 *
 * The process has one NIC (env.c); a domain is a protection domain on it:
 * its own table of memory regions (keys are the table's: FI_MR_PROV_KEY,
 * addresses virtual: FI_MR_VIRT_ADDR).  Our own sends and receives name
 * one region over the whole address space with local access only, so the
 * consumer registers nothing for messages (no FI_MR_LOCAL); what a peer may
 * reach is what the consumer registered, or a receive the provider exposes
 * for the length of one rendezvous.
 *
 * An address vector holds (IPv4, port) pairs; fi_addr_t is the index, in
 * FI_AV_TABLE and FI_AV_MAP alike, never reused while the AV lives.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "et_fi.h"

/* ---- memory regions ---- */

static int
mr_close(struct fid *fid)
{
	struct et_fi_mr *m = (struct et_fi_mr *)fid;

	et_process_lock();
	et_mr_dereg(&m->d->mrs, m->key);
	m->d->refs--;
	et_process_unlock();
	free(m);
	return 0;
}

static int
mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	/* FI_MR_ENDPOINT is not asked for; a counter for remote access would
	 * be FI_RMA_EVENT, not claimed */
	return -FI_ENOSYS;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = mr_bind,
	.control = et_fi_no_control,
	.ops_open = et_fi_no_ops_open,
};

static unsigned int
access_of(uint64_t a)
{
	unsigned int r = ET_ACCESS_LOCAL_WRITE;

	/* no access named: every access (fi_mr_reg's rule) */
	if (!(a & (FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)))
		a |= FI_REMOTE_READ | FI_REMOTE_WRITE;
	if (a & FI_REMOTE_WRITE)
		r |= ET_ACCESS_REMOTE_WRITE;
	if (a & FI_REMOTE_READ)
		r |= ET_ACCESS_REMOTE_READ;
	return r;
}

static int
mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags, struct fid_mr **mr)
{
	struct et_fi_domain *d = container_of(fid, struct et_fi_domain, dom.fid);
	const struct et_mr *em;
	struct et_fi_mr *m;
	void *base;
	size_t len;

	if (attr == NULL || mr == NULL || attr->iov_count > 1 || flags)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM)
		return -FI_ENOSYS;
	if (attr->access & ~(uint64_t)(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
				      FI_REMOTE_WRITE))
		return -FI_EINVAL;
	base = attr->iov_count ? attr->mr_iov[0].iov_base : NULL;
	len = attr->iov_count ? attr->mr_iov[0].iov_len : 0;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -FI_ENOMEM;
	et_process_lock();
	/* a region of no bytes still has a key (fi_mr_reg allows it): one
	 * byte at a harmless address that nothing can reach */
	em = et_mr_reg(&d->mrs, len ? base : (void *)&m->access, len ? len : 1,
		       len ? access_of(attr->access) : ET_ACCESS_LOCAL_WRITE);
	if (em)
		d->refs++;
	et_process_unlock();
	if (em == NULL) {
		free(m);
		return -FI_ENOSPC;
	}
	m->d = d;
	m->key = em->key;
	m->access = attr->access;
	m->mr.fid.fclass = FI_CLASS_MR;
	m->mr.fid.context = attr->context;
	m->mr.fid.ops = &mr_fi_ops;
	m->mr.mem_desc = m;
	m->mr.key = m->key;
	*mr = &m->mr;
	return 0;
}

static int
mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
       uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct fi_mr_attr attr = {.mr_iov = &iov, .iov_count = 1, .access = access,
				  .offset = offset, .requested_key = requested_key,
				  .context = context};

	return mr_regattr(fid, &attr, flags, mr);
}

static int
mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access,
	uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **mr,
	void *context)
{
	struct fi_mr_attr attr = {.mr_iov = iov, .iov_count = count, .access = access,
				  .offset = offset, .requested_key = requested_key,
				  .context = context};

	return mr_regattr(fid, &attr, flags, mr);
}

static struct fi_ops_mr mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};

/* ---- domain ---- */

static int
domain_close(struct fid *fid)
{
	struct et_fi_domain *d = (struct et_fi_domain *)fid;

	et_process_lock();
	if (d->refs) {
		et_process_unlock();
		return -FI_EBUSY;
	}
	d->fab->refs--;
	et_mr_table_free(&d->mrs);
	et_process_unlock();
	free(d);
	return 0;
}

static int
domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct et_fi_domain *d = (struct et_fi_domain *)fid;

	if (bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	d->eq = container_of(bfid, struct et_fi_eq, eq.fid);
	return 0;
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = domain_bind,
	.control = et_fi_no_control,
	.ops_open = et_fi_no_ops_open,
};

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = et_fi_av_open,
	.cq_open = et_fi_cq_open,
	.endpoint = et_fi_ep_open,
	.scalable_ep = et_fi_no_scalable_ep,
	.cntr_open = et_fi_cntr_open,
	.poll_open = et_fi_no_poll_open,
	.stx_ctx = et_fi_no_stx_ctx,
	.srx_ctx = et_fi_no_srx_ctx,
	.query_atomic = et_fi_no_query_atomic,
	.query_collective = et_fi_no_query_collective,
};

int
et_fi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		  void *context)
{
	struct et_fi_fabric *f = container_of(fabric, struct et_fi_fabric, fab);
	struct et_fi_domain *d;
	const struct et_mr *whole;
	int r;

	if (info == NULL || info->domain_attr == NULL)
		return -FI_EINVAL;
	if (info->domain_attr->name && strcmp(info->domain_attr->name, ET_FI_NAME))
		return -FI_EINVAL;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return -FI_ENOMEM;
	et_process_lock();
	r = et_fi_port_open();
	if (r == 0 && et_mr_table_init(&d->mrs, ET_FI_MR_CAP))
		r = -FI_ENOMEM;
	/* every byte, local access only: our own sends and receives */
	whole = r ? NULL : et_mr_reg(&d->mrs, (void *)(uintptr_t)1, UINT64_MAX - 1,
				     ET_ACCESS_LOCAL_WRITE);
	if (r == 0 && whole == NULL)
		r = -FI_ENOMEM;
	if (r == 0)
		f->refs++;
	et_process_unlock();
	if (r) {
		et_mr_table_free(&d->mrs);
		free(d);
		return r;
	}
	d->local_key = whole->key;
	d->fab = f;
	d->mr_mode = info->domain_attr->mr_mode;
	d->av_type = info->domain_attr->av_type;
	d->caps = info->caps;
	d->dom.fid.fclass = FI_CLASS_DOMAIN;
	d->dom.fid.context = context;
	d->dom.fid.ops = &domain_fi_ops;
	d->dom.ops = &domain_ops;
	d->dom.mr = &mr_ops;
	*dom = &d->dom;
	return 0;
}

/* ---- address vectors ---- */

const struct et_fi_addr *
et_fi_av_get(const struct et_fi_av *av, fi_addr_t a)
{
	if (av == NULL || a >= av->n || !av->a[a].used)
		return NULL;
	return &av->a[a];
}

fi_addr_t
et_fi_av_find(const struct et_fi_av *av, uint32_t ip, uint16_t port)
{
	for (uint32_t i = 0; av && i < av->n; i++)
		if (av->a[i].used && av->a[i].ip == ip && av->a[i].port == port)
			return i;
	return FI_ADDR_NOTAVAIL;
}

static int
av_grow(struct et_fi_av *av, uint32_t more)
{
	uint32_t cap = av->cap ? av->cap : 16;
	struct et_fi_addr *a;

	while (cap < av->n + more)
		cap *= 2;
	if (cap == av->cap)
		return 0;
	a = realloc(av->a, cap * sizeof(*a));
	if (a == NULL)
		return -FI_ENOMEM;
	memset(a + av->cap, 0, (cap - av->cap) * sizeof(*a));
	av->a = a;
	av->cap = cap;
	return 0;
}

/* One address in; its fi_addr, or FI_ADDR_NOTAVAIL when it is no
 * sockaddr_in.  Locked. */
static fi_addr_t
av_add(struct et_fi_av *av, const struct sockaddr_in *sa)
{
	if (sa->sin_family != AF_INET || av_grow(av, 1))
		return FI_ADDR_NOTAVAIL;
	av->a[av->n] = (struct et_fi_addr){ntohl(sa->sin_addr.s_addr), ntohs(sa->sin_port), true};
	av->gen++;
	return av->n++;
}

/* The insert's result: the count, and the EQ event with FI_EVENT. */
static int
av_done(struct et_fi_av *av, int count, size_t asked, uint64_t flags, void *context)
{
	struct fi_eq_entry e = {.fid = &av->av.fid, .context = context, .data = (uint64_t)count};

	if (!(flags & FI_EVENT) && !av->eq)
		return count;
	if (av->eq == NULL)
		return -FI_ENOEQ;
	if ((size_t)count < asked) {
		struct fi_eq_err_entry err = {.fid = &av->av.fid, .context = context,
					      .data = (uint64_t)count, .err = FI_EINVAL};

		et_fi_eq_push(av->eq, FI_AV_COMPLETE, &err, sizeof(err), true);
	}
	et_fi_eq_push(av->eq, FI_AV_COMPLETE, &e, sizeof(e), false);
	return 0;
}

static int
av_insert(struct fid_av *fav, const void *addr, size_t count, fi_addr_t *fi_addr,
	  uint64_t flags, void *context)
{
	struct et_fi_av *av = container_of(fav, struct et_fi_av, av);
	const struct sockaddr_in *sa = addr;
	int n = 0;

	if (flags & ~(uint64_t)(FI_MORE | FI_EVENT | FI_SYNC_ERR))
		return -FI_EBADFLAGS;
	if (count && addr == NULL)
		return -FI_EINVAL;
	et_process_lock();
	for (size_t i = 0; i < count; i++) {
		fi_addr_t a = av_add(av, &sa[i]);

		if (fi_addr)
			fi_addr[i] = a;
		if (a != FI_ADDR_NOTAVAIL)
			n++;
		/* FI_SYNC_ERR: context is an int per address, its error */
		if ((flags & FI_SYNC_ERR) && context)
			((int *)context)[i] = a != FI_ADDR_NOTAVAIL ? 0 : -FI_EINVAL;
	}
	if (flags & FI_SYNC_ERR)
		context = NULL;
	n = av_done(av, n, count, flags, context);
	et_process_unlock();
	return n;
}

static int
av_insertsvc(struct fid_av *fav, const char *node, const char *service, fi_addr_t *fi_addr,
	     uint64_t flags, void *context)
{
	struct sockaddr_in sa;
	uint32_t ip;
	uint16_t port;

	if (et_fi_parse_addr(node, service, &ip, &port))
		return -FI_EINVAL;
	et_fi_sockaddr(ip, port, &sa);
	return av_insert(fav, &sa, 1, fi_addr, flags, context);
}

static int
av_insertsym(struct fid_av *fav, const char *node, size_t nodecnt, const char *service,
	     size_t svccnt, fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	uint32_t ip;
	uint16_t port;
	int n = 0, r;

	if (et_fi_parse_addr(node, service, &ip, &port))
		return -FI_EINVAL;
	for (size_t i = 0; i < nodecnt; i++)
		for (size_t j = 0; j < svccnt; j++) {
			struct sockaddr_in sa;

			et_fi_sockaddr(ip + (uint32_t)i, (uint16_t)(port + j), &sa);
			r = av_insert(fav, &sa, 1, fi_addr ? &fi_addr[i * svccnt + j] : NULL,
				      flags & ~(uint64_t)FI_EVENT, NULL);
			if (r < 0)
				return r;
			n += r;
		}
	return n;
}

static int
av_remove(struct fid_av *fav, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	struct et_fi_av *av = container_of(fav, struct et_fi_av, av);
	int r = 0;

	et_process_lock();
	for (size_t i = 0; i < count; i++) {
		if (fi_addr[i] >= av->n || !av->a[fi_addr[i]].used) {
			r = -FI_EINVAL;
			continue;
		}
		av->a[fi_addr[i]].used = false;
		av->gen++;
	}
	et_process_unlock();
	return r;
}

static int
av_lookup(struct fid_av *fav, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
	struct et_fi_av *av = container_of(fav, struct et_fi_av, av);
	struct sockaddr_in sa;
	const struct et_fi_addr *a;
	size_t want = sizeof(sa);

	et_process_lock();
	a = et_fi_av_get(av, fi_addr);
	if (a)
		et_fi_sockaddr(a->ip, a->port, &sa);
	et_process_unlock();
	if (a == NULL)
		return -FI_EINVAL;
	memcpy(addr, &sa, *addrlen < want ? *addrlen : want);
	*addrlen = want;
	return 0;
}

static const char *
av_straddr(struct fid_av *fav, const void *addr, char *buf, size_t *len)
{
	const struct sockaddr_in *sa = addr;
	char ip[INET_ADDRSTRLEN], s[64];
	size_t n;

	inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
	n = (size_t)snprintf(s, sizeof(s), "fi_sockaddr_in://%s:%u", ip, ntohs(sa->sin_port)) + 1;
	if (*len)
		snprintf(buf, *len, "%s", s);
	*len = n;
	return buf;
}

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = av_insertsvc,
	.insertsym = av_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = et_fi_no_av_set,
};

static int
av_close(struct fid *fid)
{
	struct et_fi_av *av = (struct et_fi_av *)fid;

	et_process_lock();
	if (av->refs) {
		et_process_unlock();
		return -FI_EBUSY;
	}
	av->d->refs--;
	et_process_unlock();
	free(av->a);
	free(av);
	return 0;
}

static int
av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct et_fi_av *av = (struct et_fi_av *)fid;

	if (bfid->fclass != FI_CLASS_EQ || flags)
		return -FI_EINVAL;
	av->eq = container_of(bfid, struct et_fi_eq, eq.fid);
	return 0;
}

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = av_bind,
	.control = et_fi_no_control,
	.ops_open = et_fi_no_ops_open,
};

int
et_fi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **fav,
	      void *context)
{
	struct et_fi_domain *d = container_of(domain, struct et_fi_domain, dom);
	struct et_fi_av *av;

	if (attr == NULL)
		return -FI_EINVAL;
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_TABLE && attr->type != FI_AV_MAP)
		return -FI_EINVAL;
	if (attr->name || attr->rx_ctx_bits || (attr->flags & ~(uint64_t)FI_EVENT))
		return -FI_ENOSYS; /* named (shared) AVs, FI_READ, scalable contexts: not claimed */
	av = calloc(1, sizeof(*av));
	if (av == NULL)
		return -FI_ENOMEM;
	av->type = attr->type != FI_AV_UNSPEC ? attr->type
		 : d->av_type != FI_AV_UNSPEC ? d->av_type : FI_AV_MAP;
	if (attr->count && av_grow(av, (uint32_t)(attr->count < 65536 ? attr->count : 65536))) {
		free(av);
		return -FI_ENOMEM;
	}
	av->d = d;
	av->av.fid.fclass = FI_CLASS_AV;
	av->av.fid.context = context;
	av->av.fid.ops = &av_fi_ops;
	av->av.ops = &av_ops;
	et_process_lock();
	d->refs++;
	et_process_unlock();
	*fav = &av->av;
	return 0;
}
