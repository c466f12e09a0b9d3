/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/et_bits.h"
#include "sim/et_net.h"

static uint32_t
tor_prefix(uint32_t tor)
{
	return 10u << 24 | tor << 8;
}

/* The aligned block of ToRs that starts at tor and ends by end: a power
 * of two, so one prefix (tor_prefix(tor), 24 - log2 of it) covers them.
 * A core reaches a pod's ToRs, consecutive, by the fewest such blocks, as
 * a routing protocol aggregates them: a ToR each would pass a switch's
 * ET_SW_MAX_PORTS routes at 64 ToRs. */
static uint32_t
tor_block(uint32_t tor, uint32_t end)
{
	uint32_t size = tor ? tor & -tor : 1u << 16;

	while (tor + size > end)
		size >>= 1;
	return size;
}

static uint32_t
pod_blocks(const struct et_topo *t, uint32_t pod)
{
	uint32_t n = 0, end = (pod + 1) * t->tors_per_pod;

	for (uint32_t j = pod * t->tors_per_pod; j < end; j += tor_block(j, end))
		n++;
	return n;
}

int
et_net_check(const struct et_topo *t, char *err, size_t errlen)
{
	uint32_t ports = et_topo_max_ports(t), routes = 0;

	if (ports > ET_SW_MAX_PORTS) {
		snprintf(err, errlen, "a switch of this shape would have %u ports (hosts, links, "
			 "lanes); a switch has at most %u", ports, ET_SW_MAX_PORTS);
		return -1;
	}
	for (uint32_t pod = 0; t->kind == ET_TOPO_FAT_TREE && pod < t->pods; pod++)
		routes += pod_blocks(t, pod);
	if (routes > ET_SW_MAX_PORTS) {
		snprintf(err, errlen, "a core would need %u routes to the pods' ToRs (a route "
			 "for each aligned power-of-two block of a pod's ToRs); a switch has at most "
			 "%u: fewer pods, or tors-per-pod a power of two (a route a pod)",
			 routes, ET_SW_MAX_PORTS);
		return -1;
	}
	return 0;
}

void
et_net_host_mac(uint32_t host, struct rte_ether_addr *mac)
{
	*mac = (struct rte_ether_addr){{0x02, 0x00, host >> 8, host & 0xff, 0x00, 0x01}};
}

static void
switch_mac(uint32_t sw, uint16_t port, struct rte_ether_addr *mac)
{
	*mac = (struct rte_ether_addr){{0x02, 0x01, sw >> 8, sw & 0xff, (uint8_t)port, 0}};
}

static uint32_t
sw_index(const struct et_net *n, struct et_node node)
{
	return n->first[node.tier] + node.index;
}

struct et_switch *
et_net_switch(struct et_net *n, uint8_t tier, uint32_t index)
{
	return &n->sw[n->first[tier] + index];
}

int
et_net_port_to(const struct et_net *n, struct et_node from, struct et_node to,
	       uint32_t lane)
{
	uint32_t s = sw_index(n, from);
	uint16_t i;

	for (i = 0; i < n->sw[s].n_ports; i++) {
		const struct et_net_peer *pp = &n->peers[s * ET_SW_MAX_PORTS + i];

		if (pp->used && pp->peer.tier == to.tier && pp->peer.index == to.index &&
		    pp->lane == lane)
			return i;
	}
	return -1;
}

/* One link between switch a (port role ra/ua) and either switch b or, if
 * b.tier is ET_TIER_HOST, a host. */
static int
wire(struct et_net *n, const struct et_net_params *p, struct rte_mempool *mp,
     int socket, uint32_t *links, struct et_node a, enum et_sw_role ra, uint8_t ua,
     struct et_node b, enum et_sw_role rb, uint8_t ub, uint32_t lane)
{
	struct et_port pa, pb;
	struct rte_ether_addr ma, mb;
	struct et_switch *sa = &n->sw[sw_index(n, a)];
	char name[32];
	int ia, ib = 0, rc;

	snprintf(name, sizeof(name), "n%u.l%u", n->gen, (*links)++);
	rc = p->ethdev ? et_port_net_ring_pair(&pa, &pb, name, p->ring_size, socket, mp)
		       : et_port_ring_pair(&pa, &pb, name, p->ring_size, socket);
	if (rc)
		return rc;
	switch_mac(sw_index(n, a), sa->n_ports, &ma);
	if (b.tier == ET_TIER_HOST) {
		et_net_host_mac(b.index, &mb);
		ia = et_switch_add_port(sa, &pa, ra, ua, &ma, &mb, &p->link);
		if (ia < 0)
			return ia;
		n->host_port[b.index] = pb;
	} else {
		struct et_switch *sb = &n->sw[sw_index(n, b)];
		const struct et_link_model *lm = p->uplink.rate_bps ? &p->uplink : &p->link;

		switch_mac(sw_index(n, b), sb->n_ports, &mb);
		ia = et_switch_add_port(sa, &pa, ra, ua, &ma, &mb, lm);
		if (ia < 0)
			return ia;
		ib = et_switch_add_port(sb, &pb, rb, ub, &mb, &ma, lm);
		if (ib < 0)
			return ib;
		n->peers[sw_index(n, b) * ET_SW_MAX_PORTS + ib] =
			(struct et_net_peer){a, lane, true, (uint16_t)ia};
	}
	n->peers[sw_index(n, a) * ET_SW_MAX_PORTS + ia] =
		(struct et_net_peer){b, lane, true, b.tier == ET_TIER_HOST ? 0 : (uint16_t)ib};
	return ia;
}

#define TRY(x)                     \
	do {                       \
		rc = (x);          \
		if (rc < 0)        \
			goto fail; \
	} while (0)

int
et_net_build(struct et_net *n, const struct et_topo *t, const struct et_net_params *p,
	     struct rte_mempool *mp, int socket)
{
	uint32_t aggs = t->kind == ET_TOPO_LEAF_SPINE ? t->spines : t->pods * t->aggs_per_pod;
	uint32_t cores = t->kind == ET_TOPO_LEAF_SPINE ? 0 : t->aggs_per_pod * t->cores_per_agg;
	uint32_t links = 0, i, h, u, l, pod, j;
	uint16_t down;
	char name[32];
	int rc;
	static uint32_t generation;

	memset(n, 0, sizeof(*n));
	n->gen = generation++;
	n->t = *t;
	n->n_hosts = et_topo_hosts(t);
	n->n_sw = t->tors + aggs + cores;
	n->first[ET_TIER_TOR] = 0;
	n->first[ET_TIER_AGG] = t->tors;
	n->first[ET_TIER_CORE] = t->tors + aggs;
	n->sw = calloc(n->n_sw, sizeof(*n->sw));
	n->host_port = calloc(n->n_hosts, sizeof(*n->host_port));
	n->peers = calloc((size_t)n->n_sw * ET_SW_MAX_PORTS, sizeof(*n->peers));
	if (!n->sw || !n->host_port || !n->peers) {
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < n->n_sw; i++) {
		snprintf(name, sizeof(name), "sw%u", i);
		TRY(et_switch_init(&n->sw[i], name, &p->sw, mp, socket));
	}
	for (i = 0; i < t->tors; i++) {
		struct et_node tor = {ET_TIER_TOR, i};

		for (h = i * t->hosts_per_tor; h < (i + 1) * t->hosts_per_tor; h++) {
			TRY(wire(n, p, mp, socket, &links, tor, ET_SW_DOWN, 0,
				 (struct et_node){ET_TIER_HOST, h}, ET_SW_DOWN, 0, 0));
			TRY(et_switch_add_route(&n->sw[i], et_topo_host_ip(t, h), 32, (uint16_t)rc));
		}
		for (u = 0; u < et_topo_tor_uplinks(t); u++) {
			struct et_node up;

			et_topo_uplink_peer(t, tor, u, &up, &l);
			TRY(wire(n, p, mp, socket, &links, tor, ET_SW_UP, (uint8_t)u, up,
				 ET_SW_DOWN, 0, l));
			/* the upper switch reaches this ToR's hosts over that link */
			TRY(et_net_port_to(n, up, tor, l));
			TRY(et_switch_add_route(&n->sw[sw_index(n, up)], tor_prefix(i), 24,
						(uint16_t)rc));
		}
	}
	for (i = 0; i < cores; i++) {
		struct et_node core = {ET_TIER_CORE, i};

		for (pod = 0; pod < t->pods; pod++) {
			struct et_node agg = {ET_TIER_AGG,
					      pod * t->aggs_per_pod + i / t->cores_per_agg};

			/* agg uplink (i % cores_per_agg) * links_per_pair + lane; cores
			 * and lanes are wired in order, so every agg gets its uplinks
			 * 0, 1, ... in order, and the core's group for a ToR lists the
			 * lanes in order (the group member is the lane) */
			for (l = 0; l < t->links_per_pair; l++) {
				TRY(wire(n, p, mp, socket, &links, agg, ET_SW_UP,
					 (uint8_t)(i % t->cores_per_agg * t->links_per_pair + l),
					 core, ET_SW_DOWN, 0, l));
				TRY(et_net_port_to(n, core, agg, l));
				down = (uint16_t)rc;
				uint32_t end = (pod + 1) * t->tors_per_pod, b;

				for (j = pod * t->tors_per_pod; j < end; j += b) {
					b = tor_block(j, end);
					TRY(et_switch_add_route(&n->sw[sw_index(n, core)],
								tor_prefix(j),
								(uint8_t)(24 - et_ilog2(b)),
								down));
				}
			}
		}
	}
	return 0;
fail:
	et_net_free(n);
	return rc;
}

void
et_net_tor_mac(const struct et_net *n, uint32_t host, struct rte_ether_addr *mac)
{
	uint32_t tor = et_topo_tor_of(&n->t, host);

	switch_mac(tor, (uint16_t)(host % n->t.hosts_per_tor), mac);
}

void
et_net_free(struct et_net *n)
{
	uint32_t i;
	uint16_t k;

	/* ports first (an ethdev may still point at its rings), then rings */
	for (i = 0; n->sw && i < n->n_sw; i++)
		for (k = 0; k < n->sw[i].n_ports; k++)
			if (n->sw[i].ports[k].port.kind == ET_PORT_ETHDEV) {
				rte_eth_dev_stop(n->sw[i].ports[k].port.eth_port);
				rte_eth_dev_close(n->sw[i].ports[k].port.eth_port);
			}
	for (i = 0; n->host_port && i < n->n_hosts; i++)
		if (n->host_port[i].kind == ET_PORT_ETHDEV) {
			rte_eth_dev_stop(n->host_port[i].eth_port);
			rte_eth_dev_close(n->host_port[i].eth_port);
		}
	for (i = 0; n->sw && i < n->n_sw; i++) {
		for (k = 0; k < n->sw[i].n_ports; k++)
			et_port_free_rings(&n->sw[i].ports[k].port);
		et_switch_free(&n->sw[i]);
	}
	free(n->sw);
	free(n->host_port);
	free(n->peers);
	memset(n, 0, sizeof(*n));
}

uint32_t
et_net_poll(struct et_net *n, uint64_t now)
{
	uint32_t work = 0, i;

	for (i = 0; i < n->n_sw; i++)
		work += et_switch_poll(&n->sw[i], now);
	return work;
}

uint64_t
et_net_next_event(const struct et_net *n, uint64_t now)
{
	uint64_t t = UINT64_MAX, e;
	uint32_t i;

	for (i = 0; i < n->n_sw; i++) {
		e = et_switch_next_event(&n->sw[i], now);
		if (e < t)
			t = e;
	}
	return t;
}

int
et_net_fail_uplink(struct et_net *n, struct et_node a, uint32_t uplink, uint64_t at_ns)
{
	const struct et_topo *t = &n->t;
	struct et_node b;
	uint32_t lane, i, j, pod;
	uint64_t seen;
	int pa, pb;

	if (et_topo_uplink_peer(t, a, uplink, &b, &lane))
		return -EINVAL;
	pa = et_net_port_to(n, a, b, lane);
	pb = et_net_port_to(n, b, a, lane);
	if (pa < 0 || pb < 0)
		return -EINVAL;
	et_switch_fail(&n->sw[sw_index(n, a)], (uint16_t)pa, at_ns, 0);
	et_switch_fail(&n->sw[sw_index(n, b)], (uint16_t)pb, at_ns, 0);
	seen = at_ns + n->sw[sw_index(n, b)].p.detect_delay_ns;
	/* parallel lanes still join a and b: both ends route around the dead
	 * lane once they notice, and every path through b still works */
	if (t->links_per_pair > 1)
		return 0;
	if (a.tier == ET_TIER_TOR) {
		/* b no longer reaches ToR a, and nothing above b does either: in a
		 * fat-tree the cores of b's group come down into a's pod only
		 * through b, so the aggregation switches at b's place in the other
		 * pods have no way to a at all.  Every other ToR's uplink `uplink`
		 * leads to b (leaf-spine, same pod) or to one of those (other
		 * pods): each ToR stops using it for a's hosts. */
		for (i = 0; i < t->tors; i++)
			if (i != a.index && et_switch_withdraw(&n->sw[i], tor_prefix(a.index), 24,
							       (uint8_t)uplink, seen))
				return -ENOSPC;
		return 0;
	}
	/* core b no longer reaches a's pod: the aggregation switches of the
	 * other pods stop using their uplink to b for that pod's ToRs (they
	 * keep their other cores, so the ToRs need not change) */
	pod = a.index / t->aggs_per_pod;
	for (i = 0; i < t->pods; i++) {
		struct et_node o = {ET_TIER_AGG, i * t->aggs_per_pod + a.index % t->aggs_per_pod};

		if (i == pod)
			continue;
		for (j = pod * t->tors_per_pod; j < (pod + 1) * t->tors_per_pod; j++)
			if (et_switch_withdraw(&n->sw[sw_index(n, o)], tor_prefix(j), 24,
					       (uint8_t)uplink, seen))
				return -ENOSPC;
	}
	return 0;
}
