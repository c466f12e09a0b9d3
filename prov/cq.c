/* SPDX-License-Identifier: BSD-3-Clause
 * Completion queues, counters and event queues.
 *
 * Progress is manual: every read of a CQ, counter or EQ first runs the
 * process's progress (env.c), which polls the NIC and turns the QPs'
 * completions into ours.  A CQ's ring grows as needed, so no completion is
 * ever lost (FI_RM_ENABLED); an error entry stops fi_cq_read (-FI_EAVAIL)
 * until fi_cq_readerr takes it.  The blocking reads (sread, cntr wait)
 * poll, since a poll-mode provider has no interrupt to sleep on; only an
 * EQ, written by the control path, also gives a file descriptor.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "et_fi.h"

static uint64_t
ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* ---- completion queues ---- */

static size_t
entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return 0;
	}
}

void
et_fi_cq_push(struct et_fi_cq *cq, const struct et_fi_cqe *e)
{
	struct et_fi_cqe *s = et_ring_push((void **)&cq->ring, &cq->cap, cq->head, &cq->tail,
					   sizeof(*s), UINT32_MAX);

	if (s == NULL)
		ET_FI_WARN(FI_LOG_CQ, "out of memory: a completion is lost\n");
	else
		*s = *e;
}

/* Up to count entries in the CQ's format; -FI_EAGAIN when none,
 * -FI_EAVAIL when an error is next.  Locked. */
static ssize_t
cq_take(struct et_fi_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
	uint8_t *out = buf;
	size_t n = 0;

	while (n < count && cq->head != cq->tail) {
		const struct et_fi_cqe *e = &cq->ring[cq->head & (cq->cap - 1)];

		if (e->err)
			break;
		memcpy(out + n * cq->entry_size, &e->e, cq->entry_size);
		if (src)
			src[n] = e->src;
		cq->head++;
		n++;
	}
	if (n)
		return (ssize_t)n;
	if (cq->head != cq->tail)
		return -FI_EAVAIL;
	return -FI_EAGAIN;
}

static ssize_t
cq_readfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src)
{
	struct et_fi_cq *cq = container_of(fcq, struct et_fi_cq, cq);
	ssize_t r;

	et_process_lock();
	et_process_progress();
	r = cq_take(cq, buf, count, src);
	et_process_unlock();
	if (r == -FI_EAGAIN)
		et_process_idle();
	return r;
}

static ssize_t
cq_read(struct fid_cq *fcq, void *buf, size_t count)
{
	return cq_readfrom(fcq, buf, count, NULL);
}

static ssize_t
cq_readerr(struct fid_cq *fcq, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct et_fi_cq *cq = container_of(fcq, struct et_fi_cq, cq);
	const struct et_fi_cqe *e;
	ssize_t r = -FI_EAGAIN;

	et_process_lock();
	if (cq->head != cq->tail && (e = &cq->ring[cq->head & (cq->cap - 1)])->err) {
		size_t user_err_size = buf->err_data_size;
		void *user_err = buf->err_data;

		memset(buf, 0, sizeof(*buf));
		buf->op_context = e->e.op_context;
		buf->flags = e->e.flags;
		buf->len = e->e.len;
		buf->buf = e->e.buf;
		buf->data = e->e.data;
		buf->tag = e->e.tag;
		buf->olen = e->olen;
		buf->err = e->err;
		buf->prov_errno = e->prov_errno;
		/* no provider data: prov_errno is an et_wc_status (fi_cq_strerror) */
		buf->err_data = user_err_size ? user_err : NULL;
		buf->err_data_size = 0;
		cq->head++;
		r = 1;
	}
	et_process_unlock();
	return r;
}

static ssize_t
cq_sreadfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src, const void *cond,
	     int timeout)
{
	struct et_fi_cq *cq = container_of(fcq, struct et_fi_cq, cq);
	uint64_t until = timeout < 0 ? UINT64_MAX : ms_now() + (uint64_t)timeout;
	ssize_t r;

	if (cq->wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	for (;;) {
		r = cq_readfrom(fcq, buf, count, src);
		if (r != -FI_EAGAIN)
			return r;
		if (__atomic_exchange_n(&cq->signaled, 0, __ATOMIC_ACQ_REL))
			return -FI_EAGAIN;
		if (ms_now() >= until)
			return -FI_EAGAIN;
		sched_yield();
	}
}

static ssize_t
cq_sread(struct fid_cq *fcq, void *buf, size_t count, const void *cond, int timeout)
{
	return cq_sreadfrom(fcq, buf, count, NULL, cond, timeout);
}

static int
cq_signal(struct fid_cq *fcq)
{
	struct et_fi_cq *cq = container_of(fcq, struct et_fi_cq, cq);

	__atomic_store_n(&cq->signaled, 1, __ATOMIC_RELEASE);
	return 0;
}

static const char *
cq_strerror(struct fid_cq *fcq, int prov_errno, const void *err_data, char *buf, size_t len)
{
	const char *s = prov_errno ? et_wc_status_str((uint8_t)prov_errno) : "no transport error";

	if (buf && len)
		snprintf(buf, len, "%s", s);
	return buf && len ? buf : s;
}

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

static int
cq_close(struct fid *fid)
{
	struct et_fi_cq *cq = (struct et_fi_cq *)fid;

	et_process_lock();
	if (cq->refs) {
		et_process_unlock();
		return -FI_EBUSY;
	}
	cq->d->refs--;
	et_process_unlock();
	free(cq->ring);
	free(cq);
	return 0;
}

static int
cq_control(struct fid *fid, int command, void *arg)
{
	/* no file descriptor: completions are made in the reads (FI_GETWAIT) */
	return -FI_ENOSYS;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = et_fi_no_bind,
	.control = cq_control,
	.ops_open = et_fi_no_ops_open,
};

int
et_fi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **fcq,
	      void *context)
{
	struct et_fi_domain *d = container_of(domain, struct et_fi_domain, dom);
	struct et_fi_cq *cq;
	enum fi_cq_format f;
	uint32_t cap = 64;

	if (attr == NULL)
		return -FI_EINVAL;
	f = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	if (entry_size(f) == 0)
		return -FI_ENOSYS;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_YIELD:
		break;
	default:
		return -FI_ENOSYS; /* no fd or condition: nothing would wake it */
	}
	if (attr->flags & ~(uint64_t)FI_AFFINITY)
		return -FI_EINVAL;
	if (attr->wait_cond != FI_CQ_COND_NONE && attr->wait_cond != FI_CQ_COND_THRESHOLD)
		return -FI_EINVAL;
	while (cap < attr->size && cap < (1u << 20))
		cap *= 2;
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL || (cq->ring = malloc(cap * sizeof(*cq->ring))) == NULL) {
		free(cq);
		return -FI_ENOMEM;
	}
	cq->cap = cap;
	cq->d = d;
	cq->format = f;
	cq->entry_size = entry_size(f);
	cq->wait_obj = attr->wait_obj;
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &cq_fi_ops;
	cq->cq.ops = &cq_ops;
	et_process_lock();
	d->refs++;
	et_process_unlock();
	*fcq = &cq->cq;
	return 0;
}

/* ---- counters ---- */

void
et_fi_cntr_inc(struct et_fi_cntr *c, bool err)
{
	if (c == NULL)
		return;
	if (err)
		__atomic_add_fetch(&c->err, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&c->val, 1, __ATOMIC_RELAXED);
}

static uint64_t
cntr_read(struct fid_cntr *fc)
{
	struct et_fi_cntr *c = container_of(fc, struct et_fi_cntr, cntr);

	et_process_lock();
	et_process_progress();
	et_process_unlock();
	return __atomic_load_n(&c->val, __ATOMIC_RELAXED);
}

static uint64_t
cntr_readerr(struct fid_cntr *fc)
{
	struct et_fi_cntr *c = container_of(fc, struct et_fi_cntr, cntr);

	et_process_lock();
	et_process_progress();
	et_process_unlock();
	return __atomic_load_n(&c->err, __ATOMIC_RELAXED);
}

static int
cntr_add(struct fid_cntr *fc, uint64_t v)
{
	struct et_fi_cntr *c = container_of(fc, struct et_fi_cntr, cntr);

	__atomic_add_fetch(&c->val, v, __ATOMIC_RELAXED);
	return 0;
}

static int
cntr_set(struct fid_cntr *fc, uint64_t v)
{
	struct et_fi_cntr *c = container_of(fc, struct et_fi_cntr, cntr);

	__atomic_store_n(&c->val, v, __ATOMIC_RELAXED);
	return 0;
}

static int
cntr_adderr(struct fid_cntr *fc, uint64_t v)
{
	struct et_fi_cntr *c = container_of(fc, struct et_fi_cntr, cntr);

	__atomic_add_fetch(&c->err, v, __ATOMIC_RELAXED);
	return 0;
}

static int
cntr_seterr(struct fid_cntr *fc, uint64_t v)
{
	struct et_fi_cntr *c = container_of(fc, struct et_fi_cntr, cntr);

	__atomic_store_n(&c->err, v, __ATOMIC_RELAXED);
	return 0;
}

static int
cntr_wait(struct fid_cntr *fc, uint64_t threshold, int timeout)
{
	struct et_fi_cntr *c = container_of(fc, struct et_fi_cntr, cntr);
	uint64_t until = timeout < 0 ? UINT64_MAX : ms_now() + (uint64_t)timeout;
	uint64_t err0 = __atomic_load_n(&c->err, __ATOMIC_RELAXED);

	if (c->wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	for (;;) {
		et_process_lock();
		et_process_progress();
		et_process_unlock();
		if (__atomic_load_n(&c->val, __ATOMIC_RELAXED) >= threshold)
			return 0;
		if (__atomic_load_n(&c->err, __ATOMIC_RELAXED) != err0)
			return -FI_EAVAIL;
		if (ms_now() >= until)
			return -FI_ETIMEDOUT;
		sched_yield();
	}
}

static struct fi_ops_cntr cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = cntr_read,
	.readerr = cntr_readerr,
	.add = cntr_add,
	.set = cntr_set,
	.wait = cntr_wait,
	.adderr = cntr_adderr,
	.seterr = cntr_seterr,
};

static int
cntr_close(struct fid *fid)
{
	struct et_fi_cntr *c = (struct et_fi_cntr *)fid;

	et_process_lock();
	if (c->refs) {
		et_process_unlock();
		return -FI_EBUSY;
	}
	c->d->refs--;
	et_process_unlock();
	free(c);
	return 0;
}

static struct fi_ops cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cntr_close,
	.bind = et_fi_no_bind,
	.control = et_fi_no_control,
	.ops_open = et_fi_no_ops_open,
};

int
et_fi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **fc,
		void *context)
{
	struct et_fi_domain *d = container_of(domain, struct et_fi_domain, dom);
	struct et_fi_cntr *c;

	if (attr && attr->events != FI_CNTR_EVENTS_COMP)
		return -FI_ENOSYS;
	if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_YIELD)
		return -FI_ENOSYS;
	if (attr && attr->flags)
		return -FI_EINVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -FI_ENOMEM;
	c->d = d;
	c->wait_obj = attr ? attr->wait_obj : FI_WAIT_UNSPEC;
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &cntr_fi_ops;
	c->cntr.ops = &cntr_ops;
	et_process_lock();
	d->refs++;
	et_process_unlock();
	*fc = &c->cntr;
	return 0;
}

/* ---- event queues ---- */

int
et_fi_eq_push(struct et_fi_eq *eq, uint32_t event, const void *buf, size_t len, bool err)
{
	struct et_fi_eqe *e;

	if (len > sizeof(e->u))
		return -FI_EINVAL;
	e = et_ring_push((void **)&eq->ring, &eq->cap, eq->head, &eq->tail, sizeof(*e),
			 UINT32_MAX);
	if (e == NULL)
		return -FI_ENOMEM;
	e->event = event;
	e->err = err;
	e->len = len;
	memcpy(&e->u, buf, len);
	if (eq->fd >= 0) {
		uint64_t one = 1;

		if (write(eq->fd, &one, sizeof(one)) < 0)
			ET_FI_DBG(FI_LOG_EQ, "eventfd: %s\n", strerror(errno));
	}
	return 0;
}

/* The head taken: the eventfd is read empty when nothing waits any more. */
static void
eq_pop(struct et_fi_eq *eq)
{
	eq->head++;
	if (eq->fd >= 0 && eq->head == eq->tail) {
		uint64_t v;

		if (read(eq->fd, &v, sizeof(v)) < 0)
			ET_FI_DBG(FI_LOG_EQ, "eventfd: %s\n", strerror(errno));
	}
}

static ssize_t
eq_read_locked(struct et_fi_eq *eq, uint32_t *event, void *buf, size_t len, uint64_t flags)
{
	const struct et_fi_eqe *e;

	if (eq->head == eq->tail)
		return -FI_EAGAIN;
	e = &eq->ring[eq->head & (eq->cap - 1)];
	if (e->err)
		return -FI_EAVAIL;
	if (len < e->len)
		return -FI_ETOOSMALL;
	if (event)
		*event = e->event;
	memcpy(buf, &e->u, e->len);
	len = e->len;
	if (!(flags & FI_PEEK))
		eq_pop(eq);
	return (ssize_t)len;
}

static ssize_t
eq_read(struct fid_eq *feq, uint32_t *event, void *buf, size_t len, uint64_t flags)
{
	struct et_fi_eq *eq = container_of(feq, struct et_fi_eq, eq);
	ssize_t r;

	et_process_lock();
	et_process_progress();
	r = eq_read_locked(eq, event, buf, len, flags);
	et_process_unlock();
	return r;
}

static ssize_t
eq_readerr(struct fid_eq *feq, struct fi_eq_err_entry *buf, uint64_t flags)
{
	struct et_fi_eq *eq = container_of(feq, struct et_fi_eq, eq);
	const struct et_fi_eqe *e;
	ssize_t r = -FI_EAGAIN;

	et_process_lock();
	if (eq->head != eq->tail && (e = &eq->ring[eq->head & (eq->cap - 1)])->err) {
		size_t user_err_size = buf->err_data_size;
		void *user_err = buf->err_data;

		*buf = e->u.err_entry;
		buf->err_data = user_err_size ? user_err : NULL;
		buf->err_data_size = 0;
		if (!(flags & FI_PEEK))
			eq_pop(eq);
		r = sizeof(*buf);
	}
	et_process_unlock();
	return r;
}

static ssize_t
eq_write(struct fid_eq *feq, uint32_t event, const void *buf, size_t len, uint64_t flags)
{
	struct et_fi_eq *eq = container_of(feq, struct et_fi_eq, eq);
	int r;

	if (flags)
		return -FI_EINVAL;
	et_process_lock();
	r = et_fi_eq_push(eq, event, buf, len, false);
	et_process_unlock();
	return r ? r : (ssize_t)len;
}

static ssize_t
eq_sread(struct fid_eq *feq, uint32_t *event, void *buf, size_t len, int timeout,
	 uint64_t flags)
{
	struct et_fi_eq *eq = container_of(feq, struct et_fi_eq, eq);
	uint64_t until = timeout < 0 ? UINT64_MAX : ms_now() + (uint64_t)timeout;
	ssize_t r;

	if (eq->wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	for (;;) {
		r = eq_read(feq, event, buf, len, flags);
		if (r != -FI_EAGAIN || ms_now() >= until)
			return r;
		if (et_fi_proc.eps == NULL && eq->fd >= 0) {
			/* nothing to progress: sleep on the descriptor */
			struct pollfd p = {.fd = eq->fd, .events = POLLIN};
			uint64_t left = until - ms_now();

			poll(&p, 1, timeout < 0 ? 100 : (int)(left < 100 ? left : 100));
		} else {
			sched_yield();
		}
	}
}

static const char *
eq_strerror(struct fid_eq *feq, int prov_errno, const void *err_data, char *buf, size_t len)
{
	const char *s = fi_strerror(prov_errno);

	if (buf && len)
		snprintf(buf, len, "%s", s);
	return buf && len ? buf : s;
}

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

static int
eq_close(struct fid *fid)
{
	struct et_fi_eq *eq = (struct et_fi_eq *)fid;

	et_process_lock();
	if (eq->refs) {
		et_process_unlock();
		return -FI_EBUSY;
	}
	et_process_unlock();
	if (eq->fd >= 0)
		close(eq->fd);
	free(eq->ring);
	free(eq);
	return 0;
}

static int
eq_control(struct fid *fid, int command, void *arg)
{
	struct et_fi_eq *eq = (struct et_fi_eq *)fid;

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	if (eq->fd < 0)
		return -FI_ENODATA;
	*(int *)arg = eq->fd;
	return 0;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = et_fi_no_bind,
	.control = eq_control,
	.ops_open = et_fi_no_ops_open,
};

int
et_fi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **feq,
	      void *context)
{
	struct et_fi_eq *eq;
	uint32_t cap = 16;

	if (attr == NULL)
		return -FI_EINVAL;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_YIELD:
	case FI_WAIT_FD:
		break;
	default:
		return -FI_ENOSYS;
	}
	if (attr->flags & ~(uint64_t)FI_WRITE)
		return -FI_EINVAL;
	while (cap < attr->size && cap < (1u << 20))
		cap *= 2;
	eq = calloc(1, sizeof(*eq));
	if (eq == NULL || (eq->ring = malloc(cap * sizeof(*eq->ring))) == NULL) {
		free(eq);
		return -FI_ENOMEM;
	}
	eq->fd = -1;
	if (attr->wait_obj == FI_WAIT_FD &&
	    (eq->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		free(eq->ring);
		free(eq);
		return -FI_ENOMEM;
	}
	eq->cap = cap;
	eq->fab = container_of(fabric, struct et_fi_fabric, fab);
	eq->wait_obj = attr->wait_obj;
	eq->eq.fid.fclass = FI_CLASS_EQ;
	eq->eq.fid.context = context;
	eq->eq.fid.ops = &eq_fi_ops;
	eq->eq.ops = &eq_ops;
	*feq = &eq->eq;
	return 0;
}
