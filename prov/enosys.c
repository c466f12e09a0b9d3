/* SPDX-License-Identifier: BSD-3-Clause
 * What the provider does not do, in one place: each call an object of
 * ours refuses, with libfabric's answer for it (-FI_ENOSYS), as
 * libfabric's own providers keep theirs.  What is refused and why:
 * docs/libfabric.md.
 */
#include "et_fi.h"

int
et_fi_no_scalable_ep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep,
		     void *context)
{
	return -FI_ENOSYS;
}

int
et_fi_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr, struct fid_poll **pollset)
{
	return -FI_ENOSYS;
}

int
et_fi_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr, struct fid_stx **stx,
		 void *context)
{
	return -FI_ENOSYS;
}

int
et_fi_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
		 void *context)
{
	return -FI_ENOSYS;
}

int
et_fi_no_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
		      struct fi_atomic_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

int
et_fi_no_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			  struct fi_collective_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

int
et_fi_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **av_set,
		void *context)
{
	return -FI_ENOSYS;
}

int
et_fi_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx_ep,
		void *context)
{
	return -FI_ENOSYS;
}

int
et_fi_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
		void *context)
{
	return -FI_ENOSYS;
}

int
et_fi_no_setname(fid_t fid, void *addr, size_t addrlen)
{
	return -FI_ENOSYS;
}

int
et_fi_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

int
et_fi_no_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int
et_fi_no_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

int
et_fi_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int
et_fi_no_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int
et_fi_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

int
et_fi_no_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
	      void *context)
{
	return -FI_ENOSYS;
}

int
et_fi_no_passive_ep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep,
		    void *context)
{
	return -FI_ENOSYS;
}

int
et_fi_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr, struct fid_wait **waitset)
{
	return -FI_ENOSYS;
}

int
et_fi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int
et_fi_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int
et_fi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
	return -FI_ENOSYS;
}
