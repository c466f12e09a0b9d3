/* SPDX-License-Identifier: BSD-3-Clause
 * Ethereal's path assignment against Theorem 1 of the paper.
 */
#include <stdbool.h>
#include <stdio.h>

#include "et_test.h"

#include "et_lb_assign.h"

static struct et_subflow sub[64 * 256];

/* Every path gets the same bytes, every flow is covered exactly once, only
 * the r = n mod s remainder flows are split, r (s - g) / g flows are added. */
static void
check(uint32_t n, uint32_t s, uint64_t bytes)
{
	uint64_t per_path[64] = {0}, covered[256] = {0};
	uint32_t pieces[256] = {0}, r = n % s, g = et_gcd(r, s), k, i, split = 0;

	k = et_lb_assign(n, s, bytes, sub);
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
	for (i = 0; i < s; i++) {
		/* exact when the parts divide the flow; else within a byte per part */
		uint64_t want = (uint64_t)n * bytes / s;
		uint64_t slack = bytes % (r ? s / g : 1) ? r / g + 1 : 0;

		assert_true(per_path[i] + slack >= want && per_path[i] <= want + slack);
	}
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
	uint32_t k = et_lb_assign(5, 4, 4096, sub);

	assert_int_equal(k, 8);
	for (uint32_t i = 4; i < 8; i++) {
		assert_int_equal(sub[i].flow, 4);
		assert_int_equal(sub[i].length, 1024);
		assert_int_equal(sub[i].path, i - 4);
	}
	/* 6 flows over 4: two remain, g = 2, each in halves */
	k = et_lb_assign(6, 4, 4096, sub);
	assert_int_equal(k, 4 + 4);
	assert_int_equal(et_lb_assign(3, 0, 1, sub), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_theorem_1_by_property),
		cmocka_unit_test(test_fewest_splits_exhaustively),
		cmocka_unit_test(test_paper_example),
	};

	return cmocka_run_group_tests_name("lb", tests, NULL, NULL);
}
