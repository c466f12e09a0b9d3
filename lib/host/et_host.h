/* SPDX-License-Identifier: BSD-3-Clause
 * A host's endpoint: its NIC, memory regions and completion queues, and
 * the next hop of its frames.  What every program that runs a host sets up
 * the same way: the fabric's hosts (through host/et_runtime), ethereal-node
 * and ethereal-coll.
 */
#ifndef ET_HOST_H
#define ET_HOST_H

#include <stdint.h>

#include <rte_ether.h>

#include "host/et_nic.h"
#include "transport/et_mr.h"
#include "transport/et_qp.h"

struct et_host {
	struct et_nic *nic;
	struct et_mr_table mrs;
	struct et_cq scq, rcq;
	struct rte_ether_addr gw_mac; /* next hop of every frame: the ToR, or the peer */
};

/* 0 or a negative errno. */
int et_host_init(struct et_host *h, struct et_nic *nic, const struct rte_ether_addr *gw_mac,
		 uint32_t cq_size);
void et_host_free(struct et_host *h);

/* Register [addr, addr + len) with access (ET_ACCESS_*): its key, 0 when the
 * table is full. */
uint32_t et_host_reg(struct et_host *h, void *addr, uint64_t len, unsigned int access);

/* A QP on the host's NIC and CQs, sending to the next hop; NULL when the NIC
 * has no QP left or a is refused. */
struct et_qp *et_host_qp_create(struct et_host *h, const struct et_qp_attr *a);

#endif /* ET_HOST_H */
