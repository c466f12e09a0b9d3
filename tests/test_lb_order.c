/* SPDX-License-Identifier: BSD-3-Clause
 * Ethereal's orders (lb/et_lb_order.h) and what they are for: the batch
 * sorted by destination ToR, and the parts of a split flow (and a ToR's
 * flows) spread over the switches above the ToR, in a fat-tree and in a
 * leaf-spine with parallel lanes.  Paths are followed through topo's switch
 * rule (et_path_walk), not decoded here.
 */
#include <stdbool.h>
#include <stdio.h>

#include "et_test.h"

#include "lb/et_lb.h"
#include "lb/et_lb_order.h"
#include "topo/et_path.h"

#define FLOW (1u << 20)

/* 2 pods of 2 ToRs of 8 hosts, 4 aggregation switches per pod with 4 cores
 * each: 16 paths between pods, 4 inside one. */
static void
fat_tree(struct et_topo *t)
{
	et_topo_fat_tree(t, 2, 2, 4, 4, 8, 1);
}

static void
ethereal_host(struct et_lb_host *h, const struct et_topo *t, uint32_t host, uint64_t seed)
{
	struct et_lb_conf c;
	char err[64];

	et_lb_conf_default(&c);
	assert_int_equal(et_lb_parse("ethereal", &c, err, sizeof(err)), 0);
	et_lb_host_init(h, &c, t, host, seed);
}

/* The switch the packet climbs to from src's ToR, and the one it comes
 * down to dst's ToR from. */
static void
switches_of(const struct et_topo *t, uint32_t src, uint32_t dst, uint16_t id, uint32_t *up,
	    uint32_t *down)
{
	struct et_hop hop[ET_PATH_MAX_HOPS];
	int n = et_path_walk(t, src, dst, id, hop);

	assert_true(n >= 3);
	*up = *down = UINT32_MAX;
	for (int i = 0; i < n; i++) {
		if (hop[i].from.tier == ET_TIER_TOR && hop[i].to.tier == ET_TIER_AGG &&
		    *up == UINT32_MAX)
			*up = hop[i].to.index;
		if (hop[i].from.tier == ET_TIER_AGG && hop[i].to.tier == ET_TIER_TOR)
			*down = hop[i].from.index;
	}
	assert_true(*up != UINT32_MAX && *down != UINT32_MAX);
}

/* ---- the helpers ---- */

static void
test_spread_paths_fat_tree(void **state)
{
	struct et_topo t;
	uint16_t ids[16], want[16];

	(void)state;
	fat_tree(&t);
	/* et_path_enumerate's order: aggregation switch major */
	assert_int_equal(et_path_enumerate(&t, 0, 16, ids, 16), 16);
	assert_int_equal(ids[1], et_path_make(0, 1));
	et_lb_spread_paths(&t, 0, ids, 16);
	for (uint32_t i = 0; i < 16; i++)
		want[i] = et_path_make((uint8_t)(i % 4), (uint8_t)(i / 4));
	assert_memory_equal(ids, want, sizeof(want));
	/* a ToR of another pod: the same uplinks, the same order */
	et_path_enumerate(&t, 16, 0, ids, 16);
	et_lb_spread_paths(&t, 2, ids, 16);
	assert_memory_equal(ids, want, sizeof(want));
	/* uneven: agg 1 has one path left, it goes in the first round only */
	uint16_t uneven[] = {0x0000, 0x0001, 0x0002, 0x0103, 0x0200, 0x0201};
	uint16_t spread[] = {0x0000, 0x0103, 0x0200, 0x0001, 0x0201, 0x0002};
	et_lb_spread_paths(&t, 0, uneven, 6);
	assert_memory_equal(uneven, spread, sizeof(spread));
}

static void
test_spread_paths_leaf_spine(void **state)
{
	struct et_topo t;
	uint16_t ids[8], lanes[] = {0x0000, 0x0200, 0x0400, 0x0600, 0x0100, 0x0300, 0x0500,
				    0x0700};

	(void)state;
	/* one link per pair: uplink u is spine u, the order stays */
	et_topo_leaf_spine(&t, 4, 4, 4, 1);
	assert_int_equal(et_path_enumerate(&t, 0, 4, ids, 8), 4);
	et_lb_spread_paths(&t, 0, ids, 4);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(ids[i], et_path_make((uint8_t)i, 0));
	/* two lanes per pair: uplinks 2s and 2s + 1 reach spine s */
	et_topo_leaf_spine(&t, 4, 4, 4, 2);
	assert_int_equal(et_path_enumerate(&t, 0, 4, ids, 8), 8);
	et_lb_spread_paths(&t, 0, ids, 8);
	assert_memory_equal(ids, lanes, sizeof(lanes));
}

static void
test_order_by_tor(void **state)
{
	struct et_topo t;
	/* ToRs 0, 1, 2, 3; batch order kept within one */
	struct et_lb_flow f[] = {{17, 1}, {30, 1}, {0, 1}, {3, 1}, {8, 1}, {16, 1}, {25, 1}};
	uint32_t idx[7], want[] = {2, 3, 4, 0, 5, 1, 6};

	(void)state;
	fat_tree(&t);
	et_lb_order_by_tor(&t, f, 7, idx);
	assert_memory_equal(idx, want, sizeof(want));
	et_lb_order_by_tor(&t, f, 0, idx); /* nothing to sort */
}

/* ---- Ethereal's plan ---- */

/* The plan's subflows come ToR by ToR. */
static void
test_plan_is_in_tor_order(void **state)
{
	struct et_topo t;
	struct et_lb_host h;
	struct et_lb_flow f[32];
	struct et_lb_sub out[512];
	uint32_t n = 0, k;

	(void)state;
	fat_tree(&t);
	ethereal_host(&h, &t, 9, 1);
	/* every host but those of 9's rack (ToR 1), the ToRs interleaved, the
	 * last first: pod 1's ToRs 3 and 2 are one group of Algorithm 1 */
	for (uint32_t i = 0; i < 8; i++)
		for (uint32_t tor = 4; tor-- > 0;)
			if (tor != 1)
				f[n++] = (struct et_lb_flow){tor * 8 + i, FLOW};
	k = et_lb_plan(&h, f, n, 0, out);
	assert_int_equal(k, n); /* 8 flows over 4 paths, 16 over 16: none split */
	for (uint32_t i = 1; i < k; i++)
		assert_true(et_topo_tor_of(&t, f[out[i - 1].flow].dst) <=
			    et_topo_tor_of(&t, f[out[i].flow].dst));
}

/* Across pods, every flow Algorithm 1 splits has its parts on as many
 * aggregation switches as it can: at most ceil(parts / 4) per switch, so
 * 2 to 4 parts never share one.  The parts' bytes also reach the
 * destination ToR through as many of its pod's aggregation switches. */
static void
test_split_parts_on_distinct_aggs(void **state)
{
	struct et_topo t;
	struct et_lb_host h;
	struct et_lb_flow f[16];
	struct et_lb_sub out[512];

	(void)state;
	fat_tree(&t);
	for (uint64_t seed = 1; seed <= 16; seed++)
		for (uint32_t n = 1; n <= 15; n++) {
			uint32_t up[16][8] = {{0}}, down[16][8] = {{0}}, parts[16] = {0}, k;

			ethereal_host(&h, &t, 0, seed);
			for (uint32_t i = 0; i < n; i++) /* n flows to ToR 2 (pod 1) */
				f[i] = (struct et_lb_flow){16 + i % 8, FLOW};
			k = et_lb_plan(&h, f, n, 0, out);
			for (uint32_t i = 0; i < k; i++) {
				uint32_t u, d;

				switches_of(&t, 0, f[out[i].flow].dst, out[i].path, &u, &d);
				assert_true(u < 4 && d >= 4 && d < 8);
				up[out[i].flow][u]++;
				down[out[i].flow][d - 4]++;
				parts[out[i].flow]++;
			}
			for (uint32_t i = 0; i < n; i++)
				for (uint32_t a = 0; a < 4; a++)
					if (up[i][a] > (parts[i] + 3) / 4 || down[i][a] > (parts[i] + 3) / 4)
						fail_msg("seed %lu, %u flows: flow %u's %u parts, %u through "
							 "agg %u",
							 (unsigned long)seed, n, i, parts[i], up[i][a], a);
		}
}

/* A ToR's flows cover the aggregation switches evenly, so the links down
 * to it carry equal bytes (the paper's Theorem 1 for downlinks), whether
 * the batch lists the ToRs in blocks or interleaved. */
static void
test_tor_downlinks_balanced(void **state)
{
	/* 16 flows to pod 1: 8 to ToR 2, 8 to ToR 3, in two batch orders */
	static const uint8_t blocks[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
	static const uint8_t pairs[16] = {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1};
	const uint8_t *orders[] = {blocks, pairs};
	struct et_topo t;
	struct et_lb_host h;
	struct et_lb_flow f[16];
	struct et_lb_sub out[512];

	(void)state;
	fat_tree(&t);
	for (uint32_t o = 0; o < 2; o++)
		for (uint64_t seed = 1; seed <= 8; seed++) {
			uint64_t bytes[2][4] = {{0}};
			uint32_t k, seen[2] = {0};

			for (uint32_t i = 0; i < 16; i++) {
				uint32_t tor = 2 + orders[o][i];

				f[i] = (struct et_lb_flow){tor * 8 + seen[orders[o][i]]++, FLOW};
			}
			ethereal_host(&h, &t, 0, seed);
			k = et_lb_plan(&h, f, 16, 0, out);
			assert_int_equal(k, 16); /* 16 flows over 16 paths: none split */
			for (uint32_t i = 0; i < k; i++) {
				uint32_t u, d, tor = et_topo_tor_of(&t, f[out[i].flow].dst);

				switches_of(&t, 0, f[out[i].flow].dst, out[i].path, &u, &d);
				bytes[tor - 2][d - 4] += out[i].len;
			}
			for (uint32_t tor = 0; tor < 2; tor++)
				for (uint32_t a = 0; a < 4; a++)
					if (bytes[tor][a] != 2 * FLOW)
						fail_msg("order %u seed %lu: ToR %u gets %lu bytes from "
							 "agg %u, not 2 flows' worth",
							 o, (unsigned long)seed, tor + 2,
							 (unsigned long)bytes[tor][a], a + 4);
		}
}

/* Two lanes per leaf-spine pair: Algorithm 1's s is the 4 spines, not the
 * 8 lanes; a flow's parts take different spines, and the parts a spine
 * gets take its two lanes in turn. */
static void
test_leaf_spine_lanes_parts_on_distinct_spines(void **state)
{
	struct et_topo t;
	struct et_lb_host h;
	struct et_lb_flow f[2] = {{4, FLOW}, {5, FLOW}};
	struct et_lb_sub out[64];

	(void)state;
	et_topo_leaf_spine(&t, 4, 4, 4, 2); /* 8 uplinks, 2 per spine */
	for (uint64_t seed = 1; seed <= 16; seed++) {
		uint32_t spine[2][4] = {{0}}, k;

		ethereal_host(&h, &t, 0, seed);
		/* 2 flows over 4 spines: r = 2, g = 2, each flow in 2 parts */
		k = et_lb_plan(&h, f, 2, 0, out);
		assert_int_equal(k, 4);
		for (uint32_t i = 0; i < k; i++) {
			uint32_t u, d;

			switches_of(&t, 0, f[out[i].flow].dst, out[i].path, &u, &d);
			assert_int_equal(u, d);
			spine[out[i].flow][u]++;
		}
		for (uint32_t sp = 0; sp < 4; sp++) {
			assert_true(spine[0][sp] <= 1 && spine[1][sp] <= 1);
			assert_int_equal(spine[0][sp] + spine[1][sp], 1);
		}
	}
}

/* A fat-tree with 2 lanes per switch pair: 64 lane paths between pods but
 * 16 cores, the paper's s.  One flow goes in 16 parts, one per core; with a
 * lane marked bad still 16 (before, s = 63 lane paths: 63 parts), none on
 * the bad lane. */
static void
test_fat_tree_lanes_split_by_core(void **state)
{
	struct et_topo t;
	struct et_lb_host h;
	struct et_lb_flow f[1] = {{16, FLOW}}; /* host 0 in pod 0 -> pod 1 */
	struct et_lb_sub out[256];
	uint16_t bad = 0;

	(void)state;
	et_topo_fat_tree(&t, 2, 2, 4, 4, 8, 2);
	for (int marked = 0; marked < 2; marked++) {
		uint32_t core[4][4] = {{0}}, k;

		ethereal_host(&h, &t, 0, 7);
		if (marked) {
			bad = h.paths.id[5];
			et_lb_paths_suspect(&h.paths, f[0].dst, bad, 0);
		}
		k = et_lb_plan(&h, f, 1, 0, out);
		assert_int_equal(k, 16);
		for (uint32_t i = 0; i < k; i++) {
			uint32_t lanes = t.links_per_pair;
			uint32_t agg = et_path_uplink(out[i].path) / lanes;
			uint32_t c = (out[i].path & 0xff) / lanes;

			assert_true(!marked || out[i].path != bad);
			core[agg][c]++;
		}
		for (uint32_t a = 0; a < 4; a++)
			for (uint32_t c = 0; c < 4; c++)
				assert_int_equal(core[a][c], 1);
	}
}

/* Four lanes per switch pair: every host of ToR 0 plans an all-to-all
 * batch, and the 16 uplinks of the ToR (4 lanes to each aggregation
 * switch) carry the same bytes, inside the pod and across it.  (Every host
 * took the first lane of each switch path once: cross-pod traffic used a
 * quarter of the lanes.) */
static void
test_fat_tree_lanes_balanced(void **state)
{
	struct et_topo t;
	struct et_lb_host h;
	struct et_lb_flow f[31];
	struct et_lb_sub out[1024];
	uint64_t up[2][16] = {{0}}; /* [cross-pod][ToR uplink] */

	(void)state;
	et_topo_fat_tree(&t, 2, 2, 4, 4, 8, 4);
	for (uint32_t src = 0; src < 8; src++) {
		uint32_t n = 0, k;

		for (uint32_t dst = 0; dst < 32; dst++)
			if (dst != src)
				f[n++] = (struct et_lb_flow){dst, FLOW};
		ethereal_host(&h, &t, src, 3);
		k = et_lb_plan(&h, f, n, 0, out);
		for (uint32_t i = 0; i < k; i++) {
			uint32_t dst = f[out[i].flow].dst;

			if (et_topo_tor_of(&t, dst) != 0)
				up[et_topo_pod_of(&t, dst) != 0][et_path_uplink(out[i].path)] +=
					out[i].len;
		}
	}
	for (uint32_t x = 0; x < 2; x++)
		for (uint32_t u = 0; u < 16; u++)
			if (up[x][u] != up[x][0])
				fail_msg("%s: ToR uplink %u carries %lu bytes, uplink 0 %lu",
					 x ? "across pods" : "inside the pod", u,
					 (unsigned long)up[x][u], (unsigned long)up[x][0]);
}

/* With a path marked bad, 4 flows to a leaf over 3 spines leave one to
 * split 3 ways (Algorithm 1).  Were it the same destination for every
 * sender, that host would take 3 subflows from each (36 here; 4,080 QPs a
 * host on the paper's 256 hosts); senders take turns: 18 each. */
static void
test_split_flows_spread_over_receivers(void **state)
{
	struct et_topo t;
	struct et_lb_host h;
	struct et_lb_flow f[4] = {{0, FLOW}, {1, FLOW}, {2, FLOW}, {3, FLOW}};
	struct et_lb_sub out[64];
	uint32_t got[4] = {0};

	(void)state;
	et_topo_leaf_spine(&t, 4, 4, 4, 1);
	for (uint32_t src = 4; src < 16; src++) {
		uint32_t k;

		ethereal_host(&h, &t, src, 7);
		et_lb_paths_suspect(&h.paths, f[0].dst, h.paths.id[0], 0);
		k = et_lb_plan(&h, f, 4, 0, out);
		assert_int_equal(k, 6); /* 3 whole flows and 3 parts */
		for (uint32_t i = 0; i < k; i++)
			got[f[out[i].flow].dst]++;
	}
	for (uint32_t d = 0; d < 4; d++)
		assert_int_equal(got[d], 18);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spread_paths_fat_tree),
		cmocka_unit_test(test_spread_paths_leaf_spine),
		cmocka_unit_test(test_order_by_tor),
		cmocka_unit_test(test_plan_is_in_tor_order),
		cmocka_unit_test(test_split_parts_on_distinct_aggs),
		cmocka_unit_test(test_tor_downlinks_balanced),
		cmocka_unit_test(test_leaf_spine_lanes_parts_on_distinct_spines),
		cmocka_unit_test(test_fat_tree_lanes_split_by_core),
		cmocka_unit_test(test_fat_tree_lanes_balanced),
		cmocka_unit_test(test_split_flows_spread_over_receivers),
	};

	return cmocka_run_group_tests_name("lb-order", tests, NULL, NULL);
}
