/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "lb/et_lb_order.h"
#include "topo/et_path.h"

void
et_lb_order_by_tor(const struct et_topo *t, const struct et_lb_flow *f, uint32_t n, uint32_t *idx)
{
	/* insertion sort: stable, and a batch is one collective step's flows */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t key = et_topo_tor_of(t, f[i].dst), j = i;

		for (; j > 0 && et_topo_tor_of(t, f[idx[j - 1]].dst) > key; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
}

void
et_lb_spread_paths(const struct et_topo *t, uint32_t tor, uint16_t *ids, uint32_t n)
{
	uint16_t in[ET_LB_MAX_PATHS];
	uint32_t sw[ET_LB_MAX_PATHS], seen[ET_LB_MAX_PATHS], rank[ET_LB_MAX_PATHS];
	uint32_t nsw = 0;

	if (n > ET_LB_MAX_PATHS)
		n = ET_LB_MAX_PATHS;
	memcpy(in, ids, n * sizeof(ids[0]));
	for (uint32_t i = 0; i < n; i++) {
		struct et_node above;
		uint32_t lane, s, id;

		/* an uplink the rule does not know stays a switch of its own */
		if (et_topo_uplink_peer(t, (struct et_node){ET_TIER_TOR, tor},
					et_path_uplink(in[i]), &above, &lane))
			id = UINT32_MAX - et_path_uplink(in[i]);
		else
			id = above.index;
		for (s = 0; s < nsw && seen[s] != id; s++)
			;
		if (s == nsw)
			seen[nsw++] = id;
		sw[i] = s;
		rank[i] = 0;
		for (uint32_t j = 0; j < i; j++)
			rank[i] += sw[j] == s;
	}
	/* round r takes the (r+1)-th path of every switch, switches in order:
	 * an insertion sort by (rank, switch), in place (the sorted prefix is
	 * [0, i)); both are below ET_LB_MAX_PATHS */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t key = rank[i] * ET_LB_MAX_PATHS + sw[i], j = i;

		for (; j > 0 && rank[j - 1] * ET_LB_MAX_PATHS + sw[j - 1] > key; j--) {
			ids[j] = ids[j - 1];
			rank[j] = rank[j - 1];
			sw[j] = sw[j - 1];
		}
		ids[j] = in[i];
		rank[j] = key / ET_LB_MAX_PATHS;
		sw[j] = key % ET_LB_MAX_PATHS;
	}
}
