/* SPDX-License-Identifier: BSD-3-Clause
 * Ethereal's path assignment against Theorem 1 of the paper.
 */
#include <stdbool.h>
#include <stdio.h>

#include "et_test.h"

#include <rte_ip.h>

#include "lb/et_lb.h"
#include "lb/et_lb_assign.h"
#include "lb/et_lb_paths.h"
#include "topo/et_path.h"
#include "transport/et_qp_priv.h"
#include "qp_link.h"

static struct et_subflow sub[64 * 256];

/* Every path gets the same bytes, every flow is covered exactly once, only
 * the r = n mod s remainder flows are split, r (s - g) / g flows are added. */
static void
check_from(uint32_t n, uint32_t s, uint64_t bytes, uint32_t first)
{
	uint64_t per_path[64] = {0}, covered[256] = {0};
	uint32_t pieces[256] = {0}, r = n % s, g = et_gcd(r, s), k, i, split = 0;

	k = et_lb_assign(n, s, bytes, first, sub);
	assert_int_equal(k, et_lb_assign_count(n, s));
	assert_int_equal(k - n, r ? r * (s - g) / g : 0);
	for (i = 0; i < k; i++) {
		assert_true(sub[i].flow < n && sub[i].path < s);
		/* pieces of a flow come in order and tile it */
		assert_true(sub[i].offset == covered[sub[i].flow]);
		covered[sub[i].flow] += sub[i].length;
		per_path[sub[i].path] += sub[i].length;
		pieces[sub[i].flow]++;
	}
	for (i = 0; i < n; i++) {
		assert_true(covered[i] == bytes);
		split += pieces[i] > 1;
	}
	assert_int_equal(split, s == 1 ? 0 : r);
	for (i = 0; i < n && s > 1; i++) /* the split ones: r from first on */
		assert_int_equal(pieces[i] > 1, (i + n - first % n) % n < r);
	for (i = 0; i < s; i++) {
		/* exact when the parts divide the flow; else within a byte per part */
		uint64_t want = (uint64_t)n * bytes / s;
		uint64_t slack = bytes % (r ? s / g : 1) ? r / g + 1 : 0;

		assert_true(per_path[i] + slack >= want && per_path[i] <= want + slack);
	}
}

/* Whichever flows are split, from the first, the last r (the paper's
 * order) or the middle. */
static void
check(uint32_t n, uint32_t s, uint64_t bytes)
{
	check_from(n, s, bytes, 0);
	check_from(n, s, bytes, n - (s ? n % s : 0));
	check_from(n, s, bytes, n / 2 + 1);
}

static void
test_theorem_1_by_property(void **state)
{
	uint64_t seed = 2024;

	for (uint32_t s = 1; s <= 64; s++)
		for (uint32_t n = 0; n <= 3 * s + 1; n++)
			check(n, s, 3ull * 5 * 7 * 64 * 1024);
	for (int i = 0; i < 5000; i++) {
		uint32_t s = 1 + (uint32_t)(et_test_rand(&seed) % 64);
		uint32_t n = (uint32_t)(et_test_rand(&seed) % 200);

		check(n, s, 1 + et_test_rand(&seed) % (1ull << 28));
	}
}

/* Can pieces (in units) be packed into s bins of exactly `target` each? */
static int
fits(const uint32_t *piece, uint32_t np, uint32_t *bin, uint32_t s, uint32_t target)
{
	if (np == 0)
		return 1;
	for (uint32_t b = 0; b < s; b++) {
		if (bin[b] + piece[0] > target)
			continue;
		bin[b] += piece[0];
		if (fits(piece + 1, np - 1, bin, s, target))
			return 1;
		bin[b] -= piece[0];
		if (bin[b] == 0)
			break; /* empty bins are interchangeable */
	}
	return 0;
}

/* Over every way of splitting each flow into equal parts (small s, n):
 * (a) no balanced assignment splits fewer than r flows: each path's
 *     fractional share r/s has to come from split flows;
 * (b) among splits that cut every split flow into the same number of parts
 *     (Algorithm 1's form), none adds fewer flows than r (s - g) / g.
 * Not claimed: with different part counts per flow fewer subflows can do,
 * e.g. n = 3, s = 4: one flow in quarters and two in halves add 5, against
 * Ethereal's 9 (checked below, so the test states what holds). */
static void
test_fewest_splits_exhaustively(void **state)
{
	const uint32_t unit = 12; /* lcm(1..4): a part of 1/m is unit/m */

	for (uint32_t s = 1; s <= 4; s++)
		for (uint32_t n = 1; n <= 6; n++) {
			uint32_t r = n % s, g = et_gcd(r, s), combos = 1;
			uint32_t fewest_split = UINT32_MAX, fewest_uniform = UINT32_MAX;
			uint32_t fewest_any = UINT32_MAX;

			for (uint32_t i = 0; i < n; i++)
				combos *= s;
			for (uint32_t c = 0; c < combos; c++) {
				uint32_t piece[24], np = 0, extra = 0, nsplit = 0, bin[4] = {0};
				uint32_t x = c, parts = 0;
				bool uniform = true;

				for (uint32_t i = 0; i < n; i++, x /= s) {
					uint32_t m = 1 + x % s; /* flow i in m equal parts */

					if (m > 1) {
						nsplit++;
						uniform &= parts == 0 || parts == m;
						parts = m;
					}
					extra += m - 1;
					for (uint32_t p = 0; p < m; p++)
						piece[np++] = unit / m;
				}
				/* largest first makes the search short */
				for (uint32_t a = 0; a < np; a++)
					for (uint32_t b = a + 1; b < np; b++)
						if (piece[b] > piece[a]) {
							uint32_t t = piece[a];

							piece[a] = piece[b];
							piece[b] = t;
						}
				if (!fits(piece, np, bin, s, unit * n / s))
					continue;
				if (nsplit < fewest_split)
					fewest_split = nsplit;
				if (uniform && extra < fewest_uniform)
					fewest_uniform = extra;
				if (extra < fewest_any)
					fewest_any = extra;
			}
			if (fewest_split != (s > 1 ? r : 0))
				fail_msg("s=%u n=%u: %u flows split at least, r = %u", s, n, fewest_split, r);
			if (fewest_uniform != (r ? r * (s - g) / g : 0))
				fail_msg("s=%u n=%u: uniform splits add at least %u, Ethereal %u", s, n,
					 fewest_uniform, r ? r * (s - g) / g : 0);
			if (s == 4 && n == 3)
				assert_int_equal(fewest_any, 5);
		}
}

static void
test_paper_example(void **state)
{
	/* 5 flows over 4 spines: one flow each, the fifth in quarters */
	uint32_t k = et_lb_assign(5, 4, 4096, 4, sub);

	assert_int_equal(k, 8);
	for (uint32_t i = 4; i < 8; i++) {
		assert_int_equal(sub[i].flow, 4);
		assert_int_equal(sub[i].length, 1024);
		assert_int_equal(sub[i].path, i - 4);
	}
	/* 6 flows over 4: two remain, g = 2, each in halves */
	k = et_lb_assign(6, 4, 4096, 4, sub);
	assert_int_equal(k, 4 + 4);
	assert_int_equal(et_lb_assign(3, 0, 1, 0, sub), 0);
}

static const uint16_t four[] = {0x0000, 0x0100, 0x0200, 0x0300};
#define MS 1000000ull
#define FAR 4 /* a host under leaf 1; host 0 is under leaf 0 */

/* Host 0 of 4 leaves x 4 spines: a path ID is an uplink. */
static void
four_paths(struct et_lb_paths *ps, uint64_t seed)
{
	struct et_topo t;

	et_topo_leaf_spine(&t, 4, 4, 4, 1);
	et_lb_paths_init(ps, &t, 0, four, 4, 100 * MS, seed);
}

/* After a timeout the path is avoided by new assignments until the reset
 * timer, then used again; a NAK moves the QP but marks nothing. */
static void
test_path_state(void **state)
{
	struct et_lb_paths ps;
	struct et_lb_paths_qp pq = {&ps, FAR};
	struct et_qp q;
	uint16_t good[8], id;

	memset(&q, 0, sizeof(q));
	four_paths(&ps, 7);
	assert_int_equal(et_lb_paths_good(&ps, FAR, 0, good), 4);
	q.path_id = 0x0100;
	assert_int_equal(et_lb_paths_hook(&pq, &q, ET_PATH_FIRST, 0), 0x0100);
	id = et_lb_paths_hook(&pq, &q, ET_PATH_NAK, 1 * MS);
	assert_int_not_equal(id, 0x0100);
	assert_int_equal(et_lb_paths_good(&ps, FAR, 1 * MS, good), 4); /* NAK marks nothing */
	id = et_lb_paths_hook(&pq, &q, ET_PATH_TIMEOUT, 10 * MS);
	assert_int_not_equal(id, 0x0100);
	assert_int_equal(et_lb_paths_good(&ps, FAR, 10 * MS, good), 3);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_not_equal(good[i], 0x0100);
	/* the uplink is suspect towards every leaf, not only the one timed out */
	assert_int_equal(et_lb_paths_good(&ps, 3 * FAR, 10 * MS, good), 3);
	/* new batches split over the 3 good paths: every byte avoids it */
	assert_int_equal(et_lb_assign(7, 3, 3000, 6, sub), et_lb_assign_count(7, 3));
	assert_int_equal(et_lb_paths_good(&ps, FAR, 109 * MS, good), 3);
	/* the reset timer: good again */
	assert_int_equal(et_lb_paths_good(&ps, FAR, 110 * MS, good), 4);
	assert_int_equal(ps.marked_bad, 1);
	assert_int_equal(ps.rerouted, 2);
}

static void
test_pick_is_uniform(void **state)
{
	struct et_lb_paths ps;
	uint32_t count[4] = {0};
	const int n = 30000;

	four_paths(&ps, 11);
	et_lb_paths_suspect(&ps, FAR, 0x0300, 0);
	for (int i = 0; i < n; i++) {
		uint16_t id = et_lb_paths_pick(&ps, FAR, 1, 0x0000);

		count[id >> 8]++;
	}
	/* never the bad one, never the one to avoid, the two others evenly */
	assert_int_equal(count[3], 0);
	assert_int_equal(count[0], 0);
	assert_true(count[1] > n / 2 * 0.95 && count[1] < n / 2 * 1.05);
	/* only the current path good: stay; none good: any path */
	et_lb_paths_suspect(&ps, FAR, 0x0100, 0);
	et_lb_paths_suspect(&ps, FAR, 0x0200, 0);
	assert_int_equal(et_lb_paths_pick(&ps, FAR, 1, 0x0000), 0x0000);
	et_lb_paths_suspect(&ps, FAR, 0x0000, 0);
	assert_true(et_lb_paths_pick(&ps, FAR, 1, 0x0000) <= 0x0300);
}

static bool
same_node(struct et_node x, struct et_node y)
{
	return x.tier == y.tier && x.index == y.index;
}

/* Do path a from src to da and path b from src to db share a link between
 * two switches, in either direction? */
static bool
share_link(const struct et_topo *t, uint32_t src, uint32_t da, uint16_t a, uint32_t db,
	   uint16_t b)
{
	struct et_hop ha[ET_PATH_MAX_HOPS], hb[ET_PATH_MAX_HOPS];
	int na = et_path_walk(t, src, da, a, ha), nb = et_path_walk(t, src, db, b, hb);

	assert_true(na > 0 && nb > 0);
	for (int i = 1; i < na - 1; i++) /* the first and last hops: host links */
		for (int j = 1; j < nb - 1; j++)
			if (ha[i].lane == hb[j].lane &&
			    ((same_node(ha[i].from, hb[j].from) && same_node(ha[i].to, hb[j].to)) ||
			     (same_node(ha[i].from, hb[j].to) && same_node(ha[i].to, hb[j].from))))
				return true;
	return false;
}

/* On a fat-tree one link lies under many path IDs.  A timeout makes every
 * ID whose path crosses one of its links bad (and no other), towards the
 * destination timed out and towards any other; the QP moves to a path
 * that shares no link with the one that failed. */
static void
test_fat_tree_links(void **state)
{
	struct et_topo t;
	struct et_lb_paths ps;
	struct et_lb_paths_qp pq = {&ps, 0};
	struct et_qp q;
	uint16_t ids[ET_LB_MAX_PATHS], good[ET_LB_MAX_PATHS];
	const uint16_t dead = 0x0102; /* ToR uplink 1, aggregation uplink 2 */
	uint32_t n, k, hosts, dsts[3];

	(void)state;
	/* 4 pods of 2 ToRs and 2 aggregation switches, 2 cores each, 2 lanes
	 * a switch pair: 4 ToR uplinks, 4 aggregation uplinks, 16 IDs */
	et_topo_fat_tree(&t, 4, 2, 2, 2, 2, 2);
	hosts = et_topo_hosts(&t);
	dsts[0] = hosts - 1;          /* another pod: the one timed out */
	dsts[1] = hosts / 2;          /* a third pod */
	dsts[2] = t.hosts_per_tor;    /* the other ToR of host 0's pod */
	n = et_path_enumerate(&t, 0, dsts[0], ids, ET_LB_MAX_PATHS);
	assert_int_equal(n, 16);
	et_lb_paths_init(&ps, &t, 0, ids, n, 100 * MS, 5);
	memset(&q, 0, sizeof(q));
	q.path_id = dead;
	pq.dst = dsts[0];
	for (int i = 0; i < 50; i++) { /* whichever the random pick */
		uint16_t id = et_lb_paths_hook(&pq, &q, ET_PATH_TIMEOUT, 1 * MS);

		assert_false(share_link(&t, 0, dsts[0], dead, dsts[0], id));
	}
	for (uint32_t d = 0; d < 3; d++) {
		uint32_t bad = 0;

		k = et_lb_paths_good(&ps, dsts[d], 2 * MS, good);
		for (uint32_t i = 0; i < n; i++) {
			bool crosses = share_link(&t, 0, dsts[0], dead, dsts[d], ids[i]);
			bool listed = false;

			for (uint32_t j = 0; j < k; j++)
				listed |= good[j] == ids[i];
			assert_true(listed == !crosses);
			bad += crosses;
		}
		/* the ToR uplink alone is under 4 IDs (every second byte) */
		assert_true(bad >= 4);
	}
	assert_int_equal(ps.marked_bad, 50);
	assert_int_equal(et_lb_paths_good(&ps, dsts[0], 101 * MS, good), n);
}

/* The paper's 512-host fat-tree has 1,024 links between switches, more
 * than a host keeps suspect at once: the soonest to expire give way, the
 * newest stay. */
static void
test_suspect_room(void **state)
{
	struct et_topo t;
	struct et_lb_paths ps;
	uint16_t ids[ET_LB_MAX_PATHS], good[ET_LB_MAX_PATHS];
	uint32_t n, k, hosts, dst = 0;

	(void)state;
	et_topo_fat_tree(&t, 8, 4, 4, 4, 16, 4);
	hosts = et_topo_hosts(&t);
	n = et_path_enumerate(&t, 0, hosts - 1, ids, ET_LB_MAX_PATHS);
	assert_int_equal(n, 256);
	et_lb_paths_init(&ps, &t, 0, ids, n, 100 * MS, 5);
	for (uint32_t i = 0; i < 4 * ET_LB_MAX_SUSPECT; i++) {
		dst = t.hosts_per_tor * 4 + i * 7 % (hosts - t.hosts_per_tor * 4); /* other pods */
		et_lb_paths_suspect(&ps, dst, ids[i * 37 % n], MS + i);
	}
	assert_int_equal(ps.n_suspect, ET_LB_MAX_SUSPECT);
	k = et_lb_paths_good(&ps, dst, 2 * MS, good);
	for (uint32_t j = 0; j < k; j++) /* the last one timed out is bad */
		assert_int_not_equal(good[j], ids[(4 * ET_LB_MAX_SUSPECT - 1) * 37 % n]);
	assert_true(k > 0 && k < n);
	assert_int_equal(et_lb_paths_good(&ps, dst, 102 * MS, good), n);
}

/* ---- the policies ---- */

static void
test_policy_names(void **state)
{
	static const char *const good[] = {"ethereal", "ecmp",  "mprdma:1", "mprdma:8",
					   "spray",    "reps", "reps:flow"};
	/* and what each error says */
	static const char *const bad[][2] = {
		{"", "expected"},        {"ether", "expected"},     {"ecmpx", "expected"},
		{"mprdma", "1..64"},     {"mprdma:", "1..64"},      {"mprdma:0", "1..64"},
		{"mprdma:65", "1..64"},  {"mprdma:4x", "1..64"},    {"spray2", "expected"},
		{"spray:x", "expected"}, {"reps:", "reps:flow"},    {"reps:flows", "reps:flow"},
		{"repsflow", "expected"}};
	struct et_lb_conf c;
	char err[128], name[32];

	(void)state;
	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		et_lb_conf_default(&c);
		assert_int_equal(et_lb_parse(good[i], &c, err, sizeof(err)), 0);
		assert_string_equal(et_lb_name(&c, name, sizeof(name)), good[i]);
	}
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(et_lb_parse(bad[i][0], &c, err, sizeof(err)), -1);
		assert_non_null(strstr(err, bad[i][1]));
	}
	assert_true(et_lb_parse("reps:flow", &c, err, sizeof(err)) == 0 && c.reps.pinned);
	assert_true(et_lb_parse("reps", &c, err, sizeof(err)) == 0 && et_lb_uses_ecmp(&c) &&
		    et_lb_per_packet(&c) && !c.reps.pinned);
	assert_true(et_lb_parse("spray", &c, err, sizeof(err)) == 0 && !et_lb_uses_ecmp(&c));
}

/* 16 hosts, 4 leaves of 4, 4 spines: host 0's flows to every other host. */
static uint32_t
all_to_all_plan(struct et_lb_host *h, const char *policy, uint64_t seed, struct et_lb_sub *out,
		struct et_lb_flow *f)
{
	struct et_lb_conf c;
	struct et_topo t;
	char err[64];

	et_lb_conf_default(&c);
	assert_int_equal(et_lb_parse(policy, &c, err, sizeof(err)), 0);
	et_topo_leaf_spine(&t, 4, 4, 4, 1);
	et_lb_host_init(h, &c, &t, 0, seed);
	for (uint32_t i = 0; i < 15; i++)
		f[i] = (struct et_lb_flow){i + 1, 1 << 20};
	assert_true(et_lb_plan_max(h, 15) >= 15);
	return et_lb_plan(h, f, 15, 1000, out);
}

static void
test_ethereal_interceptor(void **state)
{
	struct et_lb_host h, h2;
	struct et_lb_flow f[15];
	struct et_lb_sub out[256], out2[256];
	uint64_t bytes[4] = {0}, per_flow[16] = {0};
	uint32_t n, n2, local = 0;
	bool differ = false;

	(void)state;
	n = all_to_all_plan(&h, "ethereal", 5, out, f);
	/* 3 rack-local flows untouched; 3 leaves x 4 flows over 4 paths: whole */
	assert_int_equal(n, 15);
	for (uint32_t i = 0; i < n; i++) {
		per_flow[f[out[i].flow].dst] += out[i].len;
		if (f[out[i].flow].dst < 4) {
			local++;
			assert_int_equal(out[i].start_ns, 1000); /* at once */
			assert_int_equal(out[i].insert_pos, -1);
			continue;
		}
		bytes[out[i].path >> 8] += out[i].len;
		/* jitter within the bound, a random place in the active list */
		assert_true(out[i].start_ns >= 1000 && out[i].start_ns <= 1000 + h.c.jitter_ns);
		assert_true(out[i].insert_pos >= 0);
	}
	assert_int_equal(local, 3);
	for (int p = 0; p < 4; p++)
		assert_int_equal(bytes[p], 3 << 20); /* each spine: one flow per leaf */
	for (int d = 1; d < 16; d++)
		assert_int_equal(per_flow[d], 1 << 20);
	/* the same seed, the same plan; another seed, other jitter */
	n2 = all_to_all_plan(&h2, "ethereal", 5, out2, f);
	assert_int_equal(n2, n);
	assert_memory_equal(out, out2, n * sizeof(out[0]));
	all_to_all_plan(&h2, "ethereal", 6, out2, f);
	for (uint32_t i = 0; i < n; i++)
		differ |= out[i].start_ns != out2[i].start_ns || out[i].insert_pos != out2[i].insert_pos;
	assert_true(differ);

	/* a bad path: the split is computed over the three good ones */
	et_lb_paths_suspect(&h.paths, 4, 0x0200, 1000);
	n = et_lb_plan(&h, f, 15, 2000, out);
	memset(bytes, 0, sizeof(bytes));
	for (uint32_t i = 0; i < n; i++)
		if (f[out[i].flow].dst >= 4)
			bytes[out[i].path >> 8] += out[i].len;
	/* 1 MB / 3 leaves one byte over per leaf: equal within 3 bytes */
	assert_int_equal(bytes[2], 0);
	assert_true(bytes[0] + bytes[1] + bytes[3] == 12 << 20);
	for (int p = 0; p < 4; p += 1 + (p == 1))
		assert_true(bytes[p] >= (4 << 20) - 3 && bytes[p] <= (4 << 20) + 3);
	/* 4 flows per leaf over 3 paths: 3 whole, 1 split in 3 */
	assert_int_equal(n, 3 + 3 * (3 + 3));
}

static void
test_ecmp_and_mprdma_spread(void **state)
{
	struct et_lb_host h;
	struct et_lb_flow f[15];
	struct et_lb_sub out[256];
	uint32_t n, hist[16] = {0};
	uint64_t per_flow[16] = {0};

	(void)state;
	n = all_to_all_plan(&h, "ecmp", 3, out, f);
	assert_int_equal(n, 15);
	n = all_to_all_plan(&h, "mprdma:4", 3, out, f);
	assert_int_equal(n, 60);
	for (uint32_t i = 0; i < n; i++) {
		per_flow[f[out[i].flow].dst] += out[i].len;
		hist[out[i].path >> 12]++;
		assert_int_equal(out[i].len, (1 << 20) / 4);
	}
	for (int d = 1; d < 16; d++)
		assert_int_equal(per_flow[d], 1 << 20);
	/* 60 random source ports over 16 buckets of their top nibble: spread */
	for (int b = 0; b < 16; b++)
		assert_true(hist[b] < 15);
}

static void
test_spray_is_uniform(void **state)
{
	struct et_lb_host h;
	struct et_lb_conf c;
	struct et_topo t;
	struct et_qp qp = {0};
	uint32_t count[4] = {0};
	const int n = 40000;
	double chi2 = 0;
	char err[64];

	(void)state;
	et_lb_conf_default(&c);
	assert_int_equal(et_lb_parse("spray", &c, err, sizeof(err)), 0);
	et_topo_leaf_spine(&t, 4, 4, 4, 1);
	et_lb_host_init(&h, &c, &t, 0, 9);
	et_lb_paths_suspect(&h.paths, 4, 0x0100, 0); /* spraying does not care */
	for (int i = 0; i < n; i++)
		count[et_lb_spray_hook(&h, &qp, ET_PATH_PACKET, 1) >> 8]++;
	for (int p = 0; p < 4; p++)
		chi2 += (count[p] - n / 4.0) * (count[p] - n / 4.0) / (n / 4.0);
	/* 3 degrees of freedom: 11.34 is the 1 % critical value */
	assert_true(chi2 < 11.34);
	qp.path_id = 0x0300;
	assert_int_equal(et_lb_spray_hook(&h, &qp, ET_PATH_TIMEOUT, 1), 0x0300);
}

/* Fast reroute end to end: a QP on a link whose path 0 is dead times out,
 * marks path 0 bad, moves to a good path and completes; the data is right. */
static struct rte_mempool *pool;
static struct et_lb_paths host_paths;
static struct et_lb_paths_qp host_paths_qp = {&host_paths, FAR};

static enum qp_verdict
dead_path_0(struct qp_link *l, int dir, const struct et_roce_pkt *p, uint64_t *delay)
{
	(void)l;
	(void)delay;
	/* data on path 0, and ACKs retracing it, are lost */
	if ((dir == 0 && p->h.udp_sport == 0x0000) || (dir == 1 && p->h.udp_sport == 0x0000))
		return QP_DROP;
	return QP_DELIVER;
}

static bool
completed(struct qp_link *l)
{
	return et_cq_count(l->qp[0]->send_cq) >= 1;
}

static void
test_reroute_around_a_dead_path(void **state)
{
	static uint8_t src[200000], dst[200000];
	struct et_mr_table mr[2];
	struct et_cq cq[4];
	struct et_qp_attr a, b;
	struct et_qp *qa, *qb;
	struct qp_link l;
	struct et_wc wc;

	for (uint32_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7);
	memset(dst, 0, sizeof(dst));
	for (int i = 0; i < 2; i++)
		assert_int_equal(et_mr_table_init(&mr[i], 2), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(et_cq_init(&cq[i], 64), 0);
	const struct et_mr *ms = et_mr_reg(&mr[0], src, sizeof(src), 0);
	const struct et_mr *md = et_mr_reg(&mr[1], dst, sizeof(dst), ET_ACCESS_REMOTE_WRITE);
	et_qp_attr_default(&a);
	a.qpn = 1;
	a.dest_qpn = 2;
	a.ip = RTE_IPV4(10, 0, 0, 1);
	a.dest_ip = RTE_IPV4(10, 0, 1, 1);
	a.path_id = 0x0000; /* assigned the path that is about to be dead */
	b = a;
	b.qpn = 2;
	b.dest_qpn = 1;
	qa = et_qp_create(&a, &mr[0], &cq[0], &cq[1], pool);
	qb = et_qp_create(&b, &mr[1], &cq[2], &cq[3], pool);
	assert_int_equal(et_qp_ready(qa), 0);
	assert_int_equal(et_qp_ready(qb), 0);
	four_paths(&host_paths, 3);
	et_qp_set_path_fn(qa, et_lb_paths_hook, &host_paths_qp);
	qp_link_init(&l, qa, qb, pool, 2000);
	l.script = dead_path_0;
	struct et_send_wr wr = {.wr_id = 9, .opcode = ET_WR_RDMA_WRITE, .local_addr = src,
				.length = sizeof(src), .lkey = ms->key,
				.remote_addr = (uintptr_t)dst, .rkey = md->key};
	assert_int_equal(et_qp_post_send(qa, &wr), 0);
	assert_int_equal(qp_link_run(&l, completed, 1000 * MS), 0);
	assert_int_equal(et_cq_poll(&cq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_memory_equal(dst, src, sizeof(src));
	assert_int_equal(qa->st.timeouts, 1);       /* one RTO, then a good path */
	assert_int_not_equal(qa->path_id, 0x0000);
	assert_int_equal(host_paths.marked_bad, 1);
	uint16_t good[4];
	assert_int_equal(et_lb_paths_good(&host_paths, FAR, l.now, good), 3);
	qp_link_free(&l);
	et_qp_destroy(qa);
	et_qp_destroy(qb);
	for (int i = 0; i < 4; i++)
		et_cq_free(&cq[i]);
	for (int i = 0; i < 2; i++)
		et_mr_table_free(&mr[i]);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static int
eal_setup(void **state)
{
	pool = et_test_eal_pool("test_lb", 8191);
	return pool ? 0 : -1;
}

static int
eal_teardown(void **state)
{
	return et_test_eal_done(pool);
}

int
main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_theorem_1_by_property),
		cmocka_unit_test(test_fewest_splits_exhaustively),
		cmocka_unit_test(test_paper_example),
		cmocka_unit_test(test_path_state),
		cmocka_unit_test(test_pick_is_uniform),
		cmocka_unit_test(test_fat_tree_links),
		cmocka_unit_test(test_suspect_room),
		cmocka_unit_test(test_policy_names),
		cmocka_unit_test(test_ethereal_interceptor),
		cmocka_unit_test(test_ecmp_and_mprdma_spread),
		cmocka_unit_test(test_spray_is_uniform),
	};
	const struct CMUnitTest with_qps[] = {
		cmocka_unit_test(test_reroute_around_a_dead_path),
	};

	return cmocka_run_group_tests_name("lb", pure, NULL, NULL) |
	       cmocka_run_group_tests_name("lb-qp", with_qps, eal_setup, eal_teardown);
}
