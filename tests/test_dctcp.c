/* SPDX-License-Identifier: BSD-3-Clause
 * DCTCP window: alpha follows the marked fraction, the window follows alpha.
 */
#include "et_test.h"

#include "transport/et_dctcp.h"

#define MTU 1000
#define WIN_PKTS 100

/* Feed windows of WIN_PKTS packets, each marked with probability p. */
static void
feed(struct et_dctcp *d, double p, int windows, uint64_t *seed, uint32_t *psn)
{
	for (int w = 0; w < windows; w++) {
		for (int k = 0; k < WIN_PKTS; k++) {
			if ((double)(et_test_rand(seed) % 100000) < p * 100000)
				et_dctcp_on_cnp(d);
			*psn += 1;
			et_dctcp_on_ack(d, 1, *psn, *psn + WIN_PKTS);
		}
	}
}

static void
test_alpha_converges(void **state)
{
	static const double ps[] = {0.1, 0.3, 0.6};
	struct et_dctcp_params prm;
	uint64_t seed = 1;

	et_dctcp_params_default(&prm);
	for (int i = 0; i < 3; i++) {
		struct et_dctcp d;
		uint32_t psn = 0;

		et_dctcp_init(&d, &prm, MTU, 0);
		feed(&d, ps[i], 400, &seed, &psn);
		if (d.alpha < ps[i] - 0.05 || d.alpha > ps[i] + 0.05)
			fail_msg("p = %.2f: alpha %.3f", ps[i], d.alpha);
		/* every window saw marks: cut once per window, down to the floor */
		assert_true(d.cuts <= d.windows + 1);
		assert_true(d.cwnd >= MTU);
	}
}

static void
test_window_follows_alpha(void **state)
{
	struct et_dctcp_params prm;
	struct et_dctcp d;
	double before;

	et_dctcp_params_default(&prm);
	prm.init_alpha = 0.5;
	et_dctcp_init(&d, &prm, MTU, 0);
	before = d.cwnd;
	et_dctcp_on_cnp(&d);
	assert_true(d.cwnd > before * 0.75 - 1 && d.cwnd < before * 0.75 + 1);
	et_dctcp_on_cnp(&d); /* same window: no second cut */
	assert_true(d.cwnd > before * 0.75 - 1 && d.cwnd < before * 0.75 + 1);
	assert_int_equal(d.cuts, 1);
	/* never below one MTU */
	prm.init_alpha = 1;
	prm.init_cwnd = 3 * MTU;
	et_dctcp_init(&d, &prm, MTU, 0);
	for (uint32_t w = 1; w < 20; w++) {
		et_dctcp_on_cnp(&d);
		et_dctcp_on_ack(&d, 1, w, w);
	}
	assert_int_equal(et_dctcp_cwnd(&d), MTU);
}

/* One MTU a window, or dctcp-ai bytes (the paper's simulator climbs
 * 1 Gbit/s a round trip, far below an MTU) */
static void
test_growth_without_marks(void **state)
{
	static const uint32_t ais[] = {0, 540};

	for (unsigned i = 0; i < RTE_DIM(ais); i++) {
		uint32_t step = ais[i] ? ais[i] : MTU, top;
		struct et_dctcp_params prm;
		struct et_dctcp d;
		uint32_t psn = 0;
		uint64_t seed = 2;

		et_dctcp_params_default(&prm);
		prm.ai = ais[i];
		et_dctcp_init(&d, &prm, MTU, 0);
		/* the first ACK closes the empty window the QP started with */
		et_dctcp_on_ack(&d, 0, 0, WIN_PKTS);
		for (int w = 1; w <= 50; w++) {
			feed(&d, 0, 1, &seed, &psn);
			assert_int_equal(et_dctcp_cwnd(&d), prm.init_cwnd + (uint32_t)(w + 1) * step);
		}
		/* alpha decays towards 0 */
		assert_true(d.alpha < 0.05);
		/* a marked window does not grow */
		top = et_dctcp_cwnd(&d);
		feed(&d, 1, 1, &seed, &psn);
		assert_true(et_dctcp_cwnd(&d) < top);
	}
}

static void
test_disabled_and_paper_params(void **state)
{
	struct et_dctcp_params prm;
	struct et_dctcp d;
	uint32_t psn = 0;
	uint64_t seed = 3;

	et_dctcp_params_default(&prm);
	prm.enabled = false;
	et_dctcp_init(&d, &prm, MTU, 0);
	feed(&d, 0.5, 10, &seed, &psn);
	assert_int_equal(et_dctcp_cwnd(&d), prm.max_cwnd);
	/* the paper's simulation: g = 1/256 converges too, only slower */
	et_dctcp_params_default(&prm);
	prm.g = 1.0 / 256;
	et_dctcp_init(&d, &prm, MTU, 0);
	feed(&d, 0.2, 3000, &seed, &psn);
	assert_true(d.alpha > 0.15 && d.alpha < 0.25);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alpha_converges),
		cmocka_unit_test(test_window_follows_alpha),
		cmocka_unit_test(test_growth_without_marks),
		cmocka_unit_test(test_disabled_and_paper_params),
	};

	return cmocka_run_group_tests_name("dctcp", tests, NULL, NULL);
}
