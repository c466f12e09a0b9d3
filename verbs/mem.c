/* SPDX-License-Identifier: BSD-3-Clause
 * Protection domains and memory regions.  A PD is a table of regions
 * (lib/transport's et_mr_table): a QP of the PD finds the keys its work
 * requests name, and the keys its peers name, there and nowhere else.
 * A region's lkey and rkey are one key, as rxe's.
 */
#include <errno.h>
#include <stdlib.h>

#include "et_vb.h"

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *c)
{
	struct et_vb_pd *p = calloc(1, sizeof(*p));
	const struct et_mr *all;

	if (p == NULL || et_mr_table_init(&p->mrs, ET_VB_MAX_MR)) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	/* the whole address space for the device's own use: inline sends'
	 * copies */
	all = et_mr_reg(&p->mrs, (void *)(uintptr_t)4096, UINT64_MAX - 8192, ET_ACCESS_LOCAL_WRITE);
	if (all == NULL) {
		et_mr_table_free(&p->mrs);
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->local_key = all->key;
	p->pd.context = c;
	p->pd.handle = p->local_key;
	return &p->pd;
}

int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct et_vb_pd *p = (struct et_vb_pd *)pd;

	et_process_lock();
	et_mr_table_free(&p->mrs);
	et_process_unlock();
	free(p);
	return 0;
}

static uint32_t
access_of(int flags)
{
	return (flags & IBV_ACCESS_LOCAL_WRITE ? ET_ACCESS_LOCAL_WRITE : 0) |
	       (flags & IBV_ACCESS_REMOTE_WRITE ? ET_ACCESS_REMOTE_WRITE : 0) |
	       (flags & IBV_ACCESS_REMOTE_READ ? ET_ACCESS_REMOTE_READ : 0) |
	       (flags & IBV_ACCESS_REMOTE_ATOMIC ? ET_ACCESS_REMOTE_ATOMIC : 0);
}

/* What a real device refuses: remote write or atomic access without
 * local write (IBTA), flags it does not know. */
static bool
access_ok(unsigned int flags)
{
	const unsigned int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
				   IBV_ACCESS_RELAXED_ORDERING | IBV_ACCESS_OPTIONAL_RANGE;

	if (flags & ~known)
		return false;
	return !(flags & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) ||
	       (flags & IBV_ACCESS_LOCAL_WRITE);
}

/* iova is where the peer's keys address the region; the transport finds
 * bytes by virtual address, so only iova == addr is taken. */
struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, unsigned int access)
{
	struct et_vb_pd *p = (struct et_vb_pd *)pd;
	struct et_vb_mr *m;
	const struct et_mr *e;

	if (!access_ok(access) || iova != (uint64_t)(uintptr_t)addr || (len && addr == NULL)) {
		errno = EINVAL;
		return NULL;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	et_process_lock();
	e = et_mr_reg(&p->mrs, addr, len ? len : 1, access_of((int)access));
	et_process_unlock();
	if (e == NULL) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = len;
	m->mr.handle = e->key;
	m->mr.lkey = e->key;
	m->mr.rkey = e->key;
	return &m->mr;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access);

struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	return ibv_reg_mr_iova2(pd, addr, len, (uint64_t)(uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
			       int access);

struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, len, iova, (unsigned int)access);
}

int
ibv_dereg_mr(struct ibv_mr *mr)
{
	struct et_vb_pd *p = (struct et_vb_pd *)mr->pd;
	int r;

	et_process_lock();
	r = et_mr_dereg(&p->mrs, mr->lkey);
	et_process_unlock();
	if (r)
		return EINVAL;
	free(mr);
	return 0;
}

int
ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t len,
	     int access)
{
	(void)mr;
	(void)flags;
	(void)pd;
	(void)addr;
	(void)len;
	(void)access;
	return EOPNOTSUPP;
}
