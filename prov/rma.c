/* SPDX-License-Identifier: BSD-3-Clause
 * RMA: fi_write (and writev, writemsg, inject) and fi_read into and out
 * of memory the peer registered (its virtual address and key,
 * FI_MR_VIRT_ADDR and FI_MR_PROV_KEY), as flows of the interceptor
 * (flow.c) on the connection's data QPs, by WRITE and by READ;
 * fi_writedata adds a control message carrying the remote CQ data once
 * every byte is acknowledged, so the peer's completion never comes before
 * its bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "et_fi.h"

static ssize_t
rma_common(struct fid_ep *fep, void *buf, size_t len, fi_addr_t dest, uint64_t addr,
	   uint64_t key, uint64_t data, void *context, uint64_t flags, bool read)
{
	struct et_fi_ep *ep = container_of(fep, struct et_fi_ep, ep);
	struct et_fi_req *req;
	int err;

	if ((len && buf == NULL) || key > UINT32_MAX)
		return -FI_EINVAL;
	if ((flags & FI_INJECT) && len > ep->eager)
		return -FI_EMSGSIZE;
	et_process_lock();
	req = et_fi_tx_req(ep, read ? ET_FI_REQ_READ : ET_FI_REQ_WRITE, dest, buf, len, context,
			   flags, FI_RMA | (read ? FI_READ : FI_WRITE), &err);
	if (req == NULL) {
		et_process_unlock();
		return err;
	}
	req->data = data;
	req->rma_addr = addr;
	req->rma_key = key;
	if ((flags & FI_INJECT) && len && !read && (err = et_fi_req_inject(req, buf, len))) {
		et_fi_req_free(req);
		et_process_unlock();
		return err;
	}
	req->done = read || !(flags & FI_REMOTE_CQ_DATA);
	if (len)
		err = et_fi_flow_start(req->conn, req, req->buf, len, addr, (uint32_t)key, read);
	else if (!read && (flags & FI_REMOTE_CQ_DATA))
		err = et_fi_msg_wdata(req);
	if (err) {
		et_fi_req_free(req);
		et_process_unlock();
		return err;
	}
	et_fi_req_check(req);
	et_process_progress();
	et_process_unlock();
	return 0;
}

static ssize_t
rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest,
	  uint64_t addr, uint64_t key, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	return rma_common(ep, (void *)buf, len, dest, addr, key, 0, context,
			  e->tx_op_flags & ~(uint64_t)FI_REMOTE_CQ_DATA, false);
}

static ssize_t
rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
	   fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	if (count > 1)
		return -FI_EINVAL;
	return rma_common(ep, count ? iov[0].iov_base : NULL, count ? iov[0].iov_len : 0, dest,
			  addr, key, 0, context, e->tx_op_flags & ~(uint64_t)FI_REMOTE_CQ_DATA, false);
}

static ssize_t
rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	if (msg->iov_count > 1 || msg->rma_iov_count != 1 ||
	    (msg->iov_count && msg->msg_iov[0].iov_len != msg->rma_iov[0].len))
		return -FI_EINVAL;
	return rma_common(ep, msg->iov_count ? msg->msg_iov[0].iov_base : NULL,
			  msg->rma_iov[0].len, msg->addr, msg->rma_iov[0].addr, msg->rma_iov[0].key,
			  msg->data, msg->context, flags & ~ET_FI_SILENT, false);
}

static ssize_t
rma_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t addr,
	   uint64_t key)
{
	return rma_common(ep, (void *)buf, len, dest, addr, key, 0, NULL, FI_INJECT | ET_FI_SILENT,
			  false);
}

static ssize_t
rma_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data,
	      fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	return rma_common(ep, (void *)buf, len, dest, addr, key, data, context,
			  e->tx_op_flags | FI_REMOTE_CQ_DATA, false);
}

static ssize_t
rma_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
	       uint64_t addr, uint64_t key)
{
	return rma_common(ep, (void *)buf, len, dest, addr, key, data, NULL,
			  FI_INJECT | ET_FI_SILENT | FI_REMOTE_CQ_DATA, false);
}

static ssize_t
rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t addr,
	 uint64_t key, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	return rma_common(ep, buf, len, src, addr, key, 0, context, e->tx_op_flags, true);
}

static ssize_t
rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
	  uint64_t addr, uint64_t key, void *context)
{
	struct et_fi_ep *e = container_of(ep, struct et_fi_ep, ep);

	if (count > 1)
		return -FI_EINVAL;
	return rma_common(ep, count ? iov[0].iov_base : NULL, count ? iov[0].iov_len : 0, src,
			  addr, key, 0, context, e->tx_op_flags, true);
}

static ssize_t
rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	if (msg->iov_count > 1 || msg->rma_iov_count != 1 ||
	    (msg->iov_count && msg->msg_iov[0].iov_len != msg->rma_iov[0].len))
		return -FI_EINVAL;
	return rma_common(ep, msg->iov_count ? msg->msg_iov[0].iov_base : NULL,
			  msg->rma_iov[0].len, msg->addr, msg->rma_iov[0].addr, msg->rma_iov[0].key,
			  0, msg->context, flags & ~(uint64_t)FI_REMOTE_CQ_DATA, true);
}

struct fi_ops_rma et_fi_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = rma_writedata,
	.injectdata = rma_injectdata,
};
