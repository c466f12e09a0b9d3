/* SPDX-License-Identifier: BSD-3-Clause
 * Path IDs: every path of a leaf-spine and a fat-tree takes the uplinks its
 * ID names, and the receiver's echo brings the ACK back over the same links.
 */
#include <stdio.h>

#include "et_test.h"

#include "topo/et_path.h"
#include "topo/et_topo.h"

static void
test_id_basics(void **state)
{
	assert_int_equal(et_path_make(3, 7), 0x0307);
	assert_int_equal(et_path_uplink(0x0307), 3);
	assert_int_equal(et_path_swap(0x0307), 0x0703);
	assert_int_equal(et_path_swap(et_path_swap(0xbeef)), 0xbeef);
	assert_int_equal(et_path_echo(0x0703), 0x0307);
	assert_int_equal(et_path_down_lane(0x0705, 4), 1);
}

static int
same_node(struct et_node a, struct et_node b)
{
	return a.tier == b.tier && a.index == b.index;
}

/* Walk every path between src and dst and check it against the shape. */
static void
check_pair(const struct et_topo *t, uint32_t src, uint32_t dst)
{
	uint32_t n = et_path_count(t, src, dst), i, j;
	static uint16_t ids[4096];
	static struct et_hop data[4096][ET_PATH_MAX_HOPS];
	static int lens[4096];
	int same_tor = et_topo_tor_of(t, src) == et_topo_tor_of(t, dst);
	int same_pod = et_topo_pod_of(t, src) == et_topo_pod_of(t, dst);

	assert_true(n <= 4096);
	assert_int_equal(et_path_enumerate(t, src, dst, ids, 4096), n);
	for (i = 0; i < n; i++) {
		struct et_hop *d = data[i], ack[ET_PATH_MAX_HOPS];
		int nd = et_path_walk(t, src, dst, ids[i], d), na, k, swaps;

		lens[i] = nd;
		/* hop count follows from the tiers climbed */
		if (same_tor)
			assert_int_equal(nd, 2);
		else if (t->kind == ET_TOPO_LEAF_SPINE || same_pod)
			assert_int_equal(nd, 4);
		else
			assert_int_equal(nd, 6);
		assert_true(same_node(d[0].from, (struct et_node){ET_TIER_HOST, src}));
		assert_true(same_node(d[nd - 1].to, (struct et_node){ET_TIER_HOST, dst}));

		/* the ID's bytes name the uplinks taken */
		if (!same_tor) {
			uint8_t a = et_path_uplink(ids[i]), b = ids[i] & 0xff;

			assert_int_equal(d[1].from.tier, ET_TIER_TOR);
			assert_int_equal(d[1].to.tier, ET_TIER_AGG);
			assert_int_equal(d[1].lane, a % t->links_per_pair);
			if (t->kind == ET_TOPO_LEAF_SPINE) {
				assert_int_equal(d[1].to.index, a / t->links_per_pair);
			} else {
				assert_int_equal(d[1].to.index % t->aggs_per_pod,
						 a / t->links_per_pair);
				assert_int_equal(d[1].to.index / t->aggs_per_pod,
						 et_topo_pod_of(t, src));
			}
			/* down on the lanes the way up took, tier for tier */
			if (nd == 4)
				assert_int_equal(d[2].lane, d[1].lane);
			if (nd == 6) {
				assert_int_equal(d[2].to.tier, ET_TIER_CORE);
				assert_int_equal(d[2].to.index,
						 a / t->links_per_pair * t->cores_per_agg +
							 b / t->links_per_pair);
				assert_int_equal(d[2].lane, b % t->links_per_pair);
				assert_int_equal(d[3].lane, d[2].lane);
				assert_int_equal(d[4].lane, d[1].lane);
			}
		}
		/* one swap per switch: the ID each link carries */
		for (k = 0, swaps = 0; k < nd; k++, swaps++)
			assert_int_equal(d[k].id, swaps & 1 ? et_path_swap(ids[i]) : ids[i]);

		/* the echo retraces the data path, link for link, lane for lane */
		na = et_path_walk(t, dst, src, et_path_echo(d[nd - 1].id), ack);
		assert_int_equal(na, nd);
		for (k = 0; k < nd; k++) {
			assert_true(same_node(ack[k].from, d[nd - 1 - k].to));
			assert_true(same_node(ack[k].to, d[nd - 1 - k].from));
			assert_int_equal(ack[k].lane, d[nd - 1 - k].lane);
		}
	}
	/* distinct IDs take distinct link sequences */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			int k, differ = 0;

			for (k = 0; k < lens[i]; k++)
				differ |= !same_node(data[i][k].to, data[j][k].to) ||
					  data[i][k].lane != data[j][k].lane;
			assert_true(differ);
		}
}

static void
check_all_pairs(const struct et_topo *t, uint32_t stride)
{
	uint32_t h = et_topo_hosts(t), s, d;
	char why[128];

	assert_int_equal(et_topo_validate(t, why, sizeof(why)), 0);
	for (s = 0; s < h; s += stride)
		for (d = 0; d < h; d++)
			if (s != d)
				check_pair(t, s, d);
}

static void
test_leaf_spine(void **state)
{
	struct et_topo t;

	et_topo_leaf_spine(&t, 4, 4, 4, 1);
	check_all_pairs(&t, 1);
	assert_int_equal(et_path_count(&t, 0, 15), 4);
	assert_int_equal(et_path_count(&t, 0, 3), 1);
	et_topo_leaf_spine(&t, 3, 2, 2, 3); /* parallel leaf-spine links */
	check_all_pairs(&t, 1);
	assert_int_equal(et_path_count(&t, 0, 5), 6);
}

static void
test_paper_leaf_spine(void **state)
{
	struct et_topo t;

	et_topo_leaf_spine(&t, 16, 16, 16, 1);
	check_all_pairs(&t, 37);
}

static void
test_fat_tree(void **state)
{
	struct et_topo t;

	et_topo_fat_tree(&t, 4, 2, 2, 2, 2, 1);
	check_all_pairs(&t, 1);
	assert_int_equal(et_path_count(&t, 0, 1), 1);  /* same ToR */
	assert_int_equal(et_path_count(&t, 0, 2), 2);  /* same pod */
	assert_int_equal(et_path_count(&t, 0, 15), 4); /* across the core */
}

static void
test_paper_fat_tree(void **state)
{
	struct et_topo t;

	et_topo_fat_tree(&t, 8, 4, 4, 4, 16, 1);
	assert_int_equal(et_topo_hosts(&t), 512);
	check_all_pairs(&t, 61);
	assert_int_equal(et_path_count(&t, 0, 511), 16);
}

/* Parallel lanes between every two switches: each lane is an uplink of its
 * own, a path ID names one lane up from the ToR and one from the
 * aggregation switch, and the way down takes the same lanes. */
static void
test_fat_tree_lanes(void **state)
{
	struct et_topo t;

	et_topo_fat_tree(&t, 4, 2, 2, 2, 2, 3);
	check_all_pairs(&t, 1);
	assert_int_equal(et_topo_tor_uplinks(&t), 6);
	assert_int_equal(et_topo_agg_uplinks(&t), 6);
	assert_int_equal(et_path_count(&t, 0, 1), 1);
	assert_int_equal(et_path_count(&t, 0, 2), 6);
	assert_int_equal(et_path_count(&t, 0, 15), 36);
	/* the paper's: 4 x 400 Gbit/s between two switches, 256 paths across
	 * the core (all pairs would take long: a few) */
	et_topo_fat_tree(&t, 8, 4, 4, 4, 16, 4);
	check_pair(&t, 0, 511);
	check_pair(&t, 0, 17);
	check_pair(&t, 100, 300);
	assert_int_equal(et_path_count(&t, 0, 511), 256);
	/* 32 ports a switch, as the paper's Tomahawk-like switches */
	assert_int_equal(et_topo_max_ports(&t), 32);
	et_topo_fat_tree(&t, 8, 4, 4, 4, 16, 1);
	assert_int_equal(et_topo_max_ports(&t), 20); /* ToR: 16 hosts, 4 up */
	et_topo_leaf_spine(&t, 16, 16, 16, 1);
	assert_int_equal(et_topo_max_ports(&t), 32);
	et_topo_leaf_spine(&t, 2, 2, 2, 40);
	assert_int_equal(et_topo_max_ports(&t), 82);
}

static void
test_bad_uplink_is_dropped(void **state)
{
	struct et_hop h[ET_PATH_MAX_HOPS];
	struct et_topo t;

	et_topo_leaf_spine(&t, 4, 4, 4, 1);
	assert_int_equal(et_path_walk(&t, 0, 15, et_path_make(4, 0), h), -1);
	assert_int_equal(et_path_walk(&t, 0, 3, et_path_make(200, 0), h), 2);
	et_topo_fat_tree(&t, 4, 2, 2, 2, 2, 1);
	assert_int_equal(et_path_walk(&t, 0, 15, et_path_make(1, 2), h), -1);
	assert_int_equal(et_path_walk(&t, 0, 2, et_path_make(1, 200), h), 4);
}

static void
test_shape_validation(void **state)
{
	struct et_topo t;
	char why[128];

	et_topo_leaf_spine(&t, 4, 0, 4, 1);
	assert_int_equal(et_topo_validate(&t, why, sizeof(why)), -1);
	et_topo_leaf_spine(&t, 4, 64, 4, 5);
	assert_int_equal(et_topo_validate(&t, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "320 uplinks"));
	et_topo_fat_tree(&t, 2, 2, 300, 1, 1, 1);
	assert_int_equal(et_topo_validate(&t, why, sizeof(why)), -1);
	et_topo_fat_tree(&t, 2, 2, 4, 100, 1, 3); /* 300 uplinks per agg */
	assert_int_equal(et_topo_validate(&t, why, sizeof(why)), -1);
	et_topo_fat_tree(&t, 2, 2, 4, 4, 1, 0);
	assert_int_equal(et_topo_validate(&t, why, sizeof(why)), -1);
	et_topo_leaf_spine(&t, 4096, 16, 4096, 1);
	assert_int_equal(et_topo_validate(&t, why, sizeof(why)), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id_basics),
		cmocka_unit_test(test_leaf_spine),
		cmocka_unit_test(test_paper_leaf_spine),
		cmocka_unit_test(test_fat_tree),
		cmocka_unit_test(test_paper_fat_tree),
		cmocka_unit_test(test_fat_tree_lanes),
		cmocka_unit_test(test_bad_uplink_is_dropped),
		cmocka_unit_test(test_shape_validation),
	};

	return cmocka_run_group_tests_name("path", tests, NULL, NULL);
}
