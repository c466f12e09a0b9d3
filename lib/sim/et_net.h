/* SPDX-License-Identifier: BSD-3-Clause
 * A network of switch instances wired as a leaf-spine or fat-tree shape:
 * every link a pair of rte_rings, as net_ring ethdev ports or the bare ring
 * backend; each host gets the host end of its ToR link as an et_port.
 * Addresses: host h is 10.T.T.x with T the 16-bit ToR number and x the
 * host's place under it (1-based); ToR t's hosts are 10.T.T.0/24.
 */
#ifndef ET_NET_H
#define ET_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "et_switch.h"
#include "topo/et_topo.h"

struct et_net_params {
	struct et_sw_params sw;
	struct et_link_model link;   /* every switch egress towards a host */
	struct et_link_model uplink; /* between switches; rate 0: as link */
	bool ethdev;                 /* net_ring ethdev ports, not bare rings */
	unsigned int ring_size;
};

/* What a switch port leads to. */
struct et_net_peer {
	struct et_node peer;
	uint32_t lane;
	bool used;
	uint16_t port;               /* the link's port on the peer (switches) */
};

struct et_net {
	struct et_topo t;
	uint32_t n_sw;
	struct et_switch *sw;        /* ToRs, then aggs/spines, then cores */
	uint32_t n_hosts;
	struct et_port *host_port;   /* the host end of each host's link */
	struct et_net_peer *peers;   /* n_sw x ET_SW_MAX_PORTS */
	uint32_t first[4];           /* index of the first switch of a tier */
	uint32_t gen;                /* tells apart the rings of nets alive at once */
};

/* Whether the switches of t fit a switch's tables (ports and routes, at
 * most ET_SW_MAX_PORTS each): 0, or -1 with err saying which and what to
 * change. */
int et_net_check(const struct et_topo *t, char *err, size_t errlen);
/* 0, or a negative errno: -ENOSPC past et_net_check's limits, -ENOMEM
 * (rings, ports), or the ethdev layer's. */
int et_net_build(struct et_net *n, const struct et_topo *t,
		 const struct et_net_params *p, struct rte_mempool *mp, int socket);
void et_net_free(struct et_net *n);

void et_net_host_mac(uint32_t host, struct rte_ether_addr *mac);
/* The MAC of a host's ToR port: where the host sends its frames. */
void et_net_tor_mac(const struct et_net *n, uint32_t host, struct rte_ether_addr *mac);

struct et_switch *et_net_switch(struct et_net *n, uint8_t tier, uint32_t index);

/* The port of switch `from` whose link leads to `to` on lane; -1 if none. */
int et_net_port_to(const struct et_net *n, struct et_node from, struct et_node to,
		   uint32_t lane);

/* Fail the link between switch a and the switch above it on a's uplink
 * `uplink` (a: a ToR, or a fat-tree aggregation switch) from at_ns for
 * good.  Both ends see it; after the switches' detection delay the far side
 * also withdraws the routes it can no longer reach, so the other switches
 * stop sending there (as a routing protocol converging would).  -EINVAL
 * when there is no such link. */
int et_net_fail_uplink(struct et_net *n, struct et_node a, uint32_t uplink, uint64_t at_ns);

uint32_t et_net_poll(struct et_net *n, uint64_t now);
uint64_t et_net_next_event(const struct et_net *n, uint64_t now);

#endif /* ET_NET_H */
