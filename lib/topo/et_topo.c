/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "topo/et_topo.h"

/* A path ID byte names an uplink: at most 256 per switch. */
#define MAX_UPLINKS 256
#define MAX_COUNT 65536

void
et_topo_leaf_spine(struct et_topo *t, uint32_t leaves, uint32_t spines,
		   uint32_t hosts_per_leaf, uint32_t links_per_pair)
{
	memset(t, 0, sizeof(*t));
	t->kind = ET_TOPO_LEAF_SPINE;
	t->tors = leaves;
	t->spines = spines;
	t->hosts_per_tor = hosts_per_leaf;
	t->links_per_pair = links_per_pair;
	t->pods = 1;
	t->tors_per_pod = leaves;
}

void
et_topo_fat_tree(struct et_topo *t, uint32_t pods, uint32_t tors_per_pod,
		 uint32_t aggs_per_pod, uint32_t cores_per_agg,
		 uint32_t hosts_per_tor, uint32_t links_per_pair)
{
	memset(t, 0, sizeof(*t));
	t->kind = ET_TOPO_FAT_TREE;
	t->pods = pods;
	t->tors_per_pod = tors_per_pod;
	t->tors = pods * tors_per_pod;
	t->aggs_per_pod = aggs_per_pod;
	t->cores_per_agg = cores_per_agg;
	t->hosts_per_tor = hosts_per_tor;
	t->links_per_pair = links_per_pair;
}

uint32_t
et_topo_hosts(const struct et_topo *t)
{
	return t->tors * t->hosts_per_tor;
}

uint32_t
et_topo_tor_uplinks(const struct et_topo *t)
{
	if (t->kind == ET_TOPO_LEAF_SPINE)
		return t->spines * t->links_per_pair;
	return t->aggs_per_pod * t->links_per_pair;
}

uint32_t
et_topo_agg_uplinks(const struct et_topo *t)
{
	return t->kind == ET_TOPO_FAT_TREE ? t->cores_per_agg * t->links_per_pair : 0;
}

static uint32_t
max3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t m = a > b ? a : b;

	return m > c ? m : c;
}

uint32_t
et_topo_max_ports(const struct et_topo *t)
{
	uint32_t tor = t->hosts_per_tor + et_topo_tor_uplinks(t);

	if (t->kind == ET_TOPO_LEAF_SPINE)
		return max3(tor, t->tors * t->links_per_pair, 0);
	return max3(tor, t->tors_per_pod * t->links_per_pair + et_topo_agg_uplinks(t),
		    t->pods * t->links_per_pair);
}

uint32_t
et_topo_host_ip(const struct et_topo *t, uint32_t host)
{
	uint32_t tor = et_topo_tor_of(t, host);

	return 10u << 24 | tor << 8 | (host % t->hosts_per_tor + 1);
}

int
et_topo_uplink_peer(const struct et_topo *t, struct et_node sw, uint32_t u,
		    struct et_node *above, uint32_t *lane)
{
	*lane = 0;
	if (sw.tier == ET_TIER_TOR) {
		if (sw.index >= t->tors || u >= et_topo_tor_uplinks(t))
			return -1;
		above->tier = ET_TIER_AGG;
		above->index = u / t->links_per_pair;
		if (t->kind == ET_TOPO_FAT_TREE)
			above->index += sw.index / t->tors_per_pod * t->aggs_per_pod;
		*lane = u % t->links_per_pair;
		return 0;
	}
	if (sw.tier == ET_TIER_AGG && t->kind == ET_TOPO_FAT_TREE &&
	    sw.index < t->pods * t->aggs_per_pod && u < et_topo_agg_uplinks(t)) {
		above->tier = ET_TIER_CORE;
		above->index = sw.index % t->aggs_per_pod * t->cores_per_agg + u / t->links_per_pair;
		*lane = u % t->links_per_pair;
		return 0;
	}
	return -1;
}

const char *
et_tier_name(const struct et_topo *t, uint8_t tier)
{
	static const char *const fat_tree[] = {"host", "tor", "agg", "core"};
	static const char *const leaf_spine[] = {"host", "leaf", "spine", "?"};

	if (tier > ET_TIER_CORE)
		return "?";
	return (t->kind == ET_TOPO_LEAF_SPINE ? leaf_spine : fat_tree)[tier];
}

int
et_topo_validate(const struct et_topo *t, char *err, size_t errlen)
{
	if (t->hosts_per_tor == 0 || t->tors == 0) {
		snprintf(err, errlen, "a fabric needs at least one ToR with one host");
		return -1;
	}
	if ((uint64_t)t->tors * t->hosts_per_tor > MAX_COUNT) {
		snprintf(err, errlen, "more than %u hosts", MAX_COUNT);
		return -1;
	}
	if (t->kind == ET_TOPO_LEAF_SPINE) {
		if (t->spines == 0 || t->links_per_pair == 0) {
			snprintf(err, errlen, "a leaf-spine needs spines >= 1 and links-per-pair >= 1");
			return -1;
		}
		if (t->spines * t->links_per_pair > MAX_UPLINKS) {
			snprintf(err, errlen,
				 "spines x links-per-pair = %u uplinks per leaf; a path ID byte names at most %u",
				 t->spines * t->links_per_pair, MAX_UPLINKS);
			return -1;
		}
		return 0;
	}
	if (t->pods == 0 || t->tors_per_pod == 0 || t->aggs_per_pod == 0 ||
	    t->cores_per_agg == 0 || t->links_per_pair == 0) {
		snprintf(err, errlen, "a fat-tree needs pods, tors-per-pod, aggs-per-pod, cores-per-agg and links-per-pair >= 1");
		return -1;
	}
	if (t->aggs_per_pod * t->links_per_pair > MAX_UPLINKS ||
	    t->cores_per_agg * t->links_per_pair > MAX_UPLINKS) {
		snprintf(err, errlen,
			 "aggs-per-pod and cores-per-agg, times links-per-pair, are uplink counts (%u and %u); a path ID byte names at most %u",
			 t->aggs_per_pod * t->links_per_pair, t->cores_per_agg * t->links_per_pair,
			 MAX_UPLINKS);
		return -1;
	}
	return 0;
}

int
et_topo_load(struct et_conf *c, struct et_topo *t)
{
	static const char *const kinds[] = {"leaf-spine", "fat-tree", NULL};
	static const char *const keys[][8] = {
		[ET_TOPO_LEAF_SPINE] = {"kind", "leaves", "spines", "hosts-per-leaf",
					"links-per-pair", NULL},
		[ET_TOPO_FAT_TREE] = {"kind", "pods", "tors-per-pod", "aggs-per-pod",
				      "cores-per-agg", "hosts-per-tor", "links-per-pair", NULL},
	};
	const char *s = "topology";
	uint32_t a, b, h, l, d, lanes;
	char why[256];
	int kind;

	if (et_conf_need_section(c, s) ||
	    et_conf_enum(c, s, "kind", kinds, true, 0, &kind) ||
	    et_conf_check_keys(c, s, keys[kind]))
		return -1;
	if (kind == ET_TOPO_LEAF_SPINE) {
		if (et_conf_u32(c, s, "leaves", 1, 4096, true, 0, &a) ||
		    et_conf_u32(c, s, "spines", 1, MAX_UPLINKS, true, 0, &b) ||
		    et_conf_u32(c, s, "hosts-per-leaf", 1, 4096, true, 0, &h) ||
		    et_conf_u32(c, s, "links-per-pair", 1, MAX_UPLINKS, false, 1, &l))
			return -1;
		et_topo_leaf_spine(t, a, b, h, l);
	} else {
		if (et_conf_u32(c, s, "pods", 1, 4096, true, 0, &a) ||
		    et_conf_u32(c, s, "tors-per-pod", 1, 4096, true, 0, &b) ||
		    et_conf_u32(c, s, "aggs-per-pod", 1, MAX_UPLINKS, true, 0, &l) ||
		    et_conf_u32(c, s, "cores-per-agg", 1, MAX_UPLINKS, true, 0, &d) ||
		    et_conf_u32(c, s, "hosts-per-tor", 1, 4096, true, 0, &h) ||
		    et_conf_u32(c, s, "links-per-pair", 1, MAX_UPLINKS, false, 1, &lanes))
			return -1;
		et_topo_fat_tree(t, a, b, l, d, h, lanes);
	}
	if (et_topo_validate(t, why, sizeof(why)))
		return et_conf_fail(c, s, NULL, "inconsistent topology: %s", why);
	return 0;
}
