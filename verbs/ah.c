/* SPDX-License-Identifier: BSD-3-Clause
 * Address handles: where a UD send goes.
 *
 * An AH is RoCE v2's: a global route to an IPv4-mapped GID, from one of
 * our GIDs.  It holds the address, the MAC (the ToR routes by IP: any, as
 * for an RC QP) and a path: the one the conf's policy gives a flow to that
 * host, as an RC QP to it would start on, so that the datagrams to one
 * host keep to one path, as a NIC's do to one destination.
 *
 * From a completion (ibv_init_ah_from_wc, ibv_create_ah_from_wc), the
 * sender is read where a UD receive put it: the IPv4 header in the last 20
 * bytes of the GRH's 40, as rdma-core reads it from rxe's and mlx5's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "et_vb.h"

struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct et_vb_ah *ah;
	uint32_t ip;

	if (!attr->is_global || attr->grh.sgid_index >= ET_VB_GIDS || attr->port_num > 1 ||
	    !et_vb_gid_ipv4(&attr->grh.dgid, &ip)) {
		fprintf(stderr, "ethereal-verbs: an address handle needs a global route to an "
			"IPv4-mapped RoCE v2 GID (::ffff:a.b.c.d; GID index 1, as rxe's)\n");
		errno = EINVAL;
		return NULL;
	}
	if ((ah = calloc(1, sizeof(*ah))) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	ah->attr = *attr;
	ah->dest.ip = ip;
	et_process_lock();
	et_process_mac_of(ip, &ah->dest.mac);
	ah->dest.sport = et_process_first_path(et_process_host_of_ip(ip), true);
	et_process_unlock();
	return &ah->ah;
}

int
ibv_destroy_ah(struct ibv_ah *ah)
{
	free((struct et_vb_ah *)ah);
	return 0;
}

static void
ipv4_gid(const uint8_t *a, union ibv_gid *g)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	memcpy(g->raw + 12, a, 4);
}

int
ibv_init_ah_from_wc(struct ibv_context *c, uint8_t port, struct ibv_wc *wc, struct ibv_grh *grh,
		    struct ibv_ah_attr *a)
{
	const uint8_t *ip4 = (const uint8_t *)grh + 20;
	union ibv_gid ours, to;

	memset(a, 0, sizeof(*a));
	a->dlid = wc->slid;
	a->sl = wc->sl;
	a->src_path_bits = wc->dlid_path_bits;
	a->port_num = port;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0; /* no route: an AH a RoCE port cannot use, as rdma-core leaves it */
	a->is_global = 1;
	if (ip4[0] >> 4 != 4) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	/* the datagram came to our IPv4 GID: that is the source of the answer */
	ipv4_gid(ip4 + 16, &to);
	if (ibv_query_gid(c, port, 1, &ours) || memcmp(&ours, &to, sizeof(ours))) {
		errno = ENOENT;
		return -1;
	}
	ipv4_gid(ip4 + 12, &a->grh.dgid);
	a->grh.sgid_index = 1;
	a->grh.hop_limit = ip4[8];
	a->grh.traffic_class = ip4[1];
	return 0;
}

struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port)
{
	struct ibv_ah_attr a;

	if (ibv_init_ah_from_wc(pd->context, port, wc, grh, &a))
		return NULL;
	return ibv_create_ah(pd, &a);
}
