/* SPDX-License-Identifier: BSD-3-Clause */
#include "topo/et_path.h"

uint32_t
et_path_count(const struct et_topo *t, uint32_t src, uint32_t dst)
{
	if (et_topo_tor_of(t, src) == et_topo_tor_of(t, dst))
		return 1;
	if (t->kind == ET_TOPO_LEAF_SPINE ||
	    et_topo_pod_of(t, src) == et_topo_pod_of(t, dst))
		return et_topo_tor_uplinks(t);
	return et_topo_tor_uplinks(t) * et_topo_agg_uplinks(t);
}

uint32_t
et_path_enumerate(const struct et_topo *t, uint32_t src, uint32_t dst,
		  uint16_t *ids, uint32_t max)
{
	uint32_t n = et_path_count(t, src, dst), i;
	/* second byte used only when the path climbs two tiers */
	uint32_t second = (t->kind == ET_TOPO_FAT_TREE &&
			   et_topo_pod_of(t, src) != et_topo_pod_of(t, dst))
				  ? et_topo_agg_uplinks(t)
				  : 1;

	if (n > max)
		n = max;
	/* under one ToR no uplink is taken: the ID is never read */
	for (i = 0; i < n; i++)
		ids[i] = et_path_make((uint8_t)(i / second), (uint8_t)(i % second));
	return n;
}

/* Is host dst below switch node? */
static int
below(const struct et_topo *t, struct et_node sw, uint32_t dst)
{
	switch (sw.tier) {
	case ET_TIER_TOR:
		return et_topo_tor_of(t, dst) == sw.index;
	case ET_TIER_AGG:
		return t->kind == ET_TOPO_LEAF_SPINE ||
		       et_topo_pod_of(t, dst) == sw.index / t->aggs_per_pod;
	default:
		return 1; /* core */
	}
}

/* Next node going down from sw towards dst, and the lane taken. */
static struct et_node
down(const struct et_topo *t, struct et_node sw, uint32_t dst, uint16_t id,
     uint32_t *lane)
{
	struct et_node n;

	*lane = 0;
	switch (sw.tier) {
	case ET_TIER_TOR:
		n.tier = ET_TIER_HOST;
		n.index = dst;
		break;
	case ET_TIER_AGG:
		n.tier = ET_TIER_TOR;
		n.index = et_topo_tor_of(t, dst);
		*lane = et_path_down_lane(id, t->links_per_pair);
		break;
	default: /* core: to the aggregation switch of its group in dst's pod */
		n.tier = ET_TIER_AGG;
		n.index = et_topo_pod_of(t, dst) * t->aggs_per_pod +
			  sw.index / t->cores_per_agg;
		*lane = et_path_down_lane(id, t->links_per_pair);
		break;
	}
	return n;
}

int
et_path_walk(const struct et_topo *t, uint32_t src, uint32_t dst, uint16_t id,
	     struct et_hop hops[ET_PATH_MAX_HOPS])
{
	struct et_node cur = {ET_TIER_TOR, et_topo_tor_of(t, src)};
	int n = 0;

	hops[n++] = (struct et_hop){
		.from = {ET_TIER_HOST, src}, .to = cur, .lane = 0, .id = id};
	while (n < ET_PATH_MAX_HOPS) {
		struct et_node next;
		uint32_t lane;

		if (below(t, cur, dst))
			next = down(t, cur, dst, id, &lane);
		else if (et_topo_uplink_peer(t, cur, et_path_uplink(id), &next, &lane) != 0)
			return -1;
		id = et_path_swap(id);
		hops[n++] = (struct et_hop){.from = cur, .to = next, .lane = lane, .id = id};
		if (next.tier == ET_TIER_HOST)
			return n;
		cur = next;
	}
	return -1;
}
