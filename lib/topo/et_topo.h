/* SPDX-License-Identifier: BSD-3-Clause
 * Shapes of the fabrics we build: a 2-tier leaf-spine and a 3-tier fat-tree.
 *
 * Hosts are numbered 0..N-1, ToR t holds hosts t*hosts_per_tor..; in a
 * fat-tree pod p holds ToRs p*tors_per_pod...  Two switches may be joined by
 * links_per_pair parallel links (lanes), each an uplink of its own: uplink i
 * of every ToR goes to spine i / links_per_pair (leaf-spine) or to
 * aggregation switch i / links_per_pair of its pod (fat-tree), on lane
 * i % links_per_pair; uplink j of aggregation switch a goes to core
 * (a % aggs_per_pod) * cores_per_agg + j / links_per_pair, on lane
 * j % links_per_pair.  This regular wiring is what makes a path ID name the
 * same spine or core from every host; et_topo_uplink_peer() is that rule,
 * the one place it is coded.
 */
#ifndef ET_TOPO_H
#define ET_TOPO_H

#include <stdint.h>

#include "base/et_conf.h"

enum et_topo_kind { ET_TOPO_LEAF_SPINE, ET_TOPO_FAT_TREE };

struct et_topo {
	enum et_topo_kind kind;
	uint32_t hosts_per_tor;
	uint32_t tors;            /* leaves, or pods * tors_per_pod */
	/* leaf-spine */
	uint32_t spines;
	/* parallel links between two switches (any tier): lanes */
	uint32_t links_per_pair;
	/* fat-tree */
	uint32_t pods;
	uint32_t tors_per_pod;
	uint32_t aggs_per_pod;
	uint32_t cores_per_agg;   /* cores one aggregation switch reaches */
};

/* Switch tiers; a node is (tier, index within the tier). */
enum et_tier { ET_TIER_HOST, ET_TIER_TOR, ET_TIER_AGG, ET_TIER_CORE };

struct et_node {
	uint8_t tier;
	uint32_t index;
};

void et_topo_leaf_spine(struct et_topo *t, uint32_t leaves, uint32_t spines,
			uint32_t hosts_per_leaf, uint32_t links_per_pair);
void et_topo_fat_tree(struct et_topo *t, uint32_t pods, uint32_t tors_per_pod,
		      uint32_t aggs_per_pod, uint32_t cores_per_agg,
		      uint32_t hosts_per_tor, uint32_t links_per_pair);

/* 0 if the shape is buildable; else -1 and a reason in err. */
int et_topo_validate(const struct et_topo *t, char *err, size_t errlen);

/* Read the [topology] section of a conf file. */
int et_topo_load(struct et_conf *c, struct et_topo *t);

uint32_t et_topo_hosts(const struct et_topo *t);
/* Uplinks of a ToR, and of a fat-tree aggregation switch (0 in a
 * leaf-spine), counting every lane. */
uint32_t et_topo_tor_uplinks(const struct et_topo *t);
/* The fabric's addressing rule: host h is 10.(ToR >> 8).(ToR & 255).(h's
 * place under its ToR + 1), its ToR's hosts a /24 (host order). */
uint32_t et_topo_host_ip(const struct et_topo *t, uint32_t host);
uint32_t et_topo_agg_uplinks(const struct et_topo *t);
/* The most ports any one switch of t has: its hosts or lower switches and
 * its uplinks, every lane counted. */
uint32_t et_topo_max_ports(const struct et_topo *t);

/* The one wiring rule: switch sw's uplink u leads to *above, on parallel
 * lane *lane (the lane counts the links between the same two switches).
 * A ToR's uplink u goes to spine u / links_per_pair (leaf-spine) or to
 * aggregation switch u / links_per_pair of its pod, on lane
 * u % links_per_pair; a fat-tree aggregation switch a's uplink u goes to
 * core (a % aggs_per_pod) * cores_per_agg + u / links_per_pair, on lane
 * u % links_per_pair.  0, or -1 when sw is no switch of t or has no
 * uplink u. */
int et_topo_uplink_peer(const struct et_topo *t, struct et_node sw, uint32_t u,
			struct et_node *above, uint32_t *lane);
/* "leaf"/"spine" in a leaf-spine, "tor"/"agg"/"core" in a fat-tree. */
const char *et_tier_name(const struct et_topo *t, uint8_t tier);

static inline uint32_t
et_topo_tor_of(const struct et_topo *t, uint32_t host)
{
	return host / t->hosts_per_tor;
}

static inline uint32_t
et_topo_pod_of(const struct et_topo *t, uint32_t host)
{
	return et_topo_tor_of(t, host) / t->tors_per_pod;
}

#endif /* ET_TOPO_H */
