/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include "host/et_host.h"

int
et_host_init(struct et_host *h, struct et_nic *nic, const struct rte_ether_addr *gw_mac,
	     uint32_t cq_size)
{
	memset(h, 0, sizeof(*h));
	h->nic = nic;
	h->gw_mac = *gw_mac;
	if (et_mr_table_init(&h->mrs, 4) || et_cq_init(&h->scq, cq_size) ||
	    et_cq_init(&h->rcq, cq_size)) {
		et_host_free(h);
		return -ENOMEM;
	}
	return 0;
}

void
et_host_free(struct et_host *h)
{
	et_mr_table_free(&h->mrs);
	et_cq_free(&h->scq);
	et_cq_free(&h->rcq);
}

uint32_t
et_host_reg(struct et_host *h, void *addr, uint64_t len, unsigned int access)
{
	const struct et_mr *mr = et_mr_reg(&h->mrs, addr, len, access);

	return mr ? mr->key : 0;
}

struct et_qp *
et_host_qp_create(struct et_host *h, const struct et_qp_attr *a)
{
	struct et_qp_attr b = *a;

	b.dest_mac = h->gw_mac;
	return et_nic_qp_create(h->nic, &b, &h->mrs, &h->scq, &h->rcq);
}
