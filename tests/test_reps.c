/* SPDX-License-Identifier: BSD-3-Clause
 * REPS per connection: what is recycled, when it explores, freezing.
 * No DPDK: et_reps is plain C.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/et_rand.h"
#include "lb/et_reps.h"

static struct et_reps_params
params(uint32_t explore_pkts)
{
	struct et_reps_params p;

	et_reps_params_default(&p);
	p.explore_pkts = explore_pkts;
	return p;
}

/* next(), and whether it explored (else it recycled) */
static uint16_t
next(struct et_reps *r, uint64_t now, bool *explored)
{
	uint64_t e = r->explored, c = r->recycled;
	uint16_t ev = et_reps_next(r, now);

	assert_int_equal(r->explored + r->recycled, e + c + 1);
	*explored = r->explored > e;
	return ev;
}

static uint16_t
next_recycled(struct et_reps *r, uint64_t now)
{
	bool x;
	uint16_t ev = next(r, now, &x);

	assert_false(x);
	return ev;
}

static void
next_explored(struct et_reps *r, uint64_t now)
{
	bool x;

	next(r, now, &x);
	assert_true(x);
}

static void
test_defaults(void **state)
{
	struct et_reps_params p;
	struct et_reps r;

	(void)state;
	et_reps_params_default(&p);
	assert_int_equal(p.buffer_size, 8);
	assert_int_equal(p.explore_pkts, 16);
	assert_true(p.freeze_ns == 10000000);
	assert_true(p.idle_ns == 0);
	assert_true(p.freezing);
	et_reps_init(&r, NULL, 1);
	assert_int_equal(r.explore_left, 16);
	assert_false(r.frozen);
	p.buffer_size = 1000;
	et_reps_init(&r, &p, 1);
	assert_int_equal(r.p.buffer_size, ET_REPS_MAX_BUF);
	p.buffer_size = 0;
	et_reps_init(&r, &p, 1);
	assert_int_equal(r.p.buffer_size, 1);
	/* 400 Gbit/s x 5 us = 250 KB = 61 packets of 4 KB, rounded down */
	assert_int_equal(et_reps_bdp_pkts(400, 5000, 4096), 61);
	assert_int_equal(et_reps_bdp_pkts(1, 1, 4096), 1);
	assert_int_equal(et_reps_bdp_pkts(400, 5000, 0), 1);
}

static void
test_recycles_unmarked_oldest_first(void **state)
{
	struct et_reps_params p = params(0);
	struct et_reps r;

	(void)state;
	et_reps_init(&r, &p, 7);
	next_explored(&r, 0); /* nothing cached yet */
	et_reps_on_ack(&r, 100, false, 1);
	et_reps_on_ack(&r, 200, true, 2);
	et_reps_on_ack(&r, 300, false, 3);
	et_reps_on_ack(&r, 400, false, 4);
	assert_int_equal(next_recycled(&r, 5), 100);
	et_reps_on_ack(&r, 500, false, 6);
	assert_int_equal(next_recycled(&r, 7), 300);
	assert_int_equal(next_recycled(&r, 8), 400);
	assert_int_equal(next_recycled(&r, 9), 500);
	/* each once: then nothing valid, explore */
	next_explored(&r, 10);
	next_explored(&r, 11);
	assert_true(r.recycled == 4 && r.explored == 3);
	assert_true(r.cached_acks == 4 && r.ecn_discards == 1);
}

/* Against a model: a FIFO of the last buffer_size unmarked ACKs. */
static void
test_matches_fifo_model(void **state)
{
	struct et_reps_params p = params(0);
	struct et_reps r;
	uint16_t fifo[8];
	uint32_t n = 0;
	uint64_t x = 12345, t = 0;

	(void)state;
	et_reps_init(&r, &p, 3);
	for (int step = 0; step < 200000; step++) {
		et_rand_next(&x);
		if (x % 3 == 0) {
			/* marked ACKs carry odd EVs, unmarked even ones */
			bool ecn = x >> 8 & 1;
			uint16_t ev = (uint16_t)((x >> 16) & 0xfffe) | ecn;

			et_reps_on_ack(&r, ev, ecn, t++);
			if (ecn)
				continue;
			if (n == 8) /* full: the oldest goes */
				memmove(fifo, fifo + 1, --n * sizeof(fifo[0]));
			fifo[n++] = ev;
		} else {
			bool explored;
			uint16_t ev = next(&r, t++, &explored);

			assert_int_equal(explored, n == 0);
			if (n) {
				assert_int_equal(ev, fifo[0]);
				assert_int_equal(ev & 1, 0);
				memmove(fifo, fifo + 1, --n * sizeof(fifo[0]));
			}
		}
		assert_int_equal(r.n_valid, n);
	}
	assert_true(r.ecn_discards > 0 && r.recycled > 0 && r.explored > 0);
}

static void
test_overwrites_when_full(void **state)
{
	struct et_reps_params p = params(0);
	struct et_reps r;

	(void)state;
	et_reps_init(&r, &p, 7);
	for (uint16_t ev = 1; ev <= 11; ev++)
		et_reps_on_ack(&r, ev, false, ev);
	assert_int_equal(r.n_valid, 8);
	for (uint16_t ev = 4; ev <= 11; ev++)
		assert_int_equal(next_recycled(&r, 20 + ev), ev);
	next_explored(&r, 40);

	/* a smaller buffer keeps fewer */
	p.buffer_size = 3;
	et_reps_init(&r, &p, 7);
	for (uint16_t ev = 1; ev <= 5; ev++)
		et_reps_on_ack(&r, ev, false, ev);
	for (uint16_t ev = 3; ev <= 5; ev++)
		assert_int_equal(next_recycled(&r, 10 + ev), ev);
	next_explored(&r, 20);
}

static void
test_explores_first_window(void **state)
{
	struct et_reps_params p = params(5);
	struct et_reps r;

	(void)state;
	et_reps_init(&r, &p, 9);
	/* ACKs arriving during the window do not cut it short */
	for (int i = 0; i < 5; i++) {
		next_explored(&r, (uint64_t)i);
		et_reps_on_ack(&r, (uint16_t)(1000 + i), false, (uint64_t)i);
	}
	assert_int_equal(r.explore_left, 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(next_recycled(&r, 10), 1000 + i);
	next_explored(&r, 11);
	assert_true(r.explored == 6 && r.recycled == 5);
}

/* Explored EVs are uniform over all 16 bits: chi-square over 16 buckets of
 * the top and of the bottom 4 bits, and every value but a few is hit. */
static void
test_explore_uniform(void **state)
{
	enum { N = 160000 };
	static uint8_t seen[65536];
	struct et_reps_params p = params(0);
	struct et_reps r;
	uint32_t hi[16] = {0}, lo[16] = {0}, distinct = 0;
	double chi_hi = 0, chi_lo = 0, e = N / 16.0;

	(void)state;
	memset(seen, 0, sizeof(seen));
	et_reps_init(&r, &p, 42);
	for (int i = 0; i < N; i++) {
		uint16_t ev = et_reps_next(&r, (uint64_t)i);

		hi[ev >> 12]++;
		lo[ev & 15]++;
		distinct += !seen[ev];
		seen[ev] = 1;
	}
	assert_true(r.explored == N);
	for (int b = 0; b < 16; b++) {
		chi_hi += (hi[b] - e) * (hi[b] - e) / e;
		chi_lo += (lo[b] - e) * (lo[b] - e) / e;
	}
	/* 15 degrees of freedom, p = 0.001 */
	assert_true(chi_hi < 37.70);
	assert_true(chi_lo < 37.70);
	/* 160000 draws leave 65536 e^-2.44 ~ 5700 values unseen */
	assert_true(distinct > 65536 - 6500 && distinct < 65536 - 5000);
}

static void
test_freezing(void **state)
{
	struct et_reps_params p = params(4);
	struct et_reps r;
	uint64_t explored;

	(void)state;
	p.freeze_ns = 1000;
	et_reps_init(&r, &p, 5);
	for (int i = 0; i < 3; i++)
		next_explored(&r, 0);
	/* still exploring: a timeout is not taken as a failure */
	et_reps_on_timeout(&r, 1);
	assert_false(r.frozen);
	next_explored(&r, 1);
	et_reps_on_ack(&r, 10, false, 2);
	et_reps_on_ack(&r, 15, true, 2);
	et_reps_on_ack(&r, 20, false, 3);
	et_reps_on_ack(&r, 30, false, 4);
	assert_int_equal(next_recycled(&r, 5), 10);

	et_reps_on_timeout(&r, 100);
	assert_true(r.frozen && r.frozen_count == 1 && r.freeze_until == 1100);
	/* every cached EV in turn, the used 10 too, never a random one */
	explored = r.explored;
	for (int k = 0; k < 3; k++) {
		assert_int_equal(next_recycled(&r, 200), 10);
		assert_int_equal(next_recycled(&r, 200), 20);
		assert_int_equal(next_recycled(&r, 200), 30);
	}
	assert_int_equal(r.n_valid, 0);
	/* a second timeout does not extend the freeze */
	et_reps_on_timeout(&r, 500);
	assert_true(r.frozen_count == 1 && r.freeze_until == 1100);
	/* an unmarked ACK joins the cycle, a marked one does not */
	et_reps_on_ack(&r, 40, false, 600);
	et_reps_on_ack(&r, 41, true, 600);
	assert_int_equal(next_recycled(&r, 700), 10);
	assert_int_equal(next_recycled(&r, 700), 20);
	assert_int_equal(next_recycled(&r, 700), 30);
	assert_int_equal(next_recycled(&r, 700), 40);
	assert_int_equal(next_recycled(&r, 1100), 10);
	assert_true(r.frozen);
	assert_true(r.explored == explored);

	/* expired: the cache is forgotten, a window explores, then recycling */
	for (int i = 0; i < 4; i++)
		next_explored(&r, 1101);
	assert_false(r.frozen);
	next_explored(&r, 1102);
	et_reps_on_ack(&r, 50, false, 1103);
	assert_int_equal(next_recycled(&r, 1104), 50);
	/* and a later timeout freezes again */
	et_reps_on_ack(&r, 60, false, 1200);
	et_reps_on_timeout(&r, 1300);
	assert_true(r.frozen && r.frozen_count == 2);
	assert_int_equal(next_recycled(&r, 1301), 50);
	assert_int_equal(next_recycled(&r, 1302), 60);
	assert_int_equal(next_recycled(&r, 1303), 50);
}

static void
test_freezing_edges(void **state)
{
	struct et_reps_params p = params(0);
	struct et_reps r;

	(void)state;
	p.freeze_ns = 1000;
	/* frozen with nothing cached: exploring is the only way to send */
	et_reps_init(&r, &p, 5);
	et_reps_on_timeout(&r, 0);
	assert_true(r.frozen);
	next_explored(&r, 1);
	/* thawing on an ACK alone */
	et_reps_on_ack(&r, 7, false, 2000);
	assert_false(r.frozen);
	assert_int_equal(next_recycled(&r, 2001), 7);

	/* a full buffer: the cycle starts at its oldest slot */
	et_reps_init(&r, &p, 5);
	for (uint16_t ev = 1; ev <= 10; ev++)
		et_reps_on_ack(&r, ev, false, 0);
	et_reps_on_timeout(&r, 1);
	for (int k = 0; k < 2; k++)
		for (uint16_t ev = 3; ev <= 10; ev++)
			assert_int_equal(next_recycled(&r, 2), ev);

	/* freezing off: timeouts change nothing */
	p.freezing = false;
	et_reps_init(&r, &p, 5);
	et_reps_on_ack(&r, 9, false, 0);
	et_reps_on_timeout(&r, 1);
	assert_false(r.frozen);
	assert_int_equal(r.frozen_count, 0);
	assert_int_equal(next_recycled(&r, 2), 9);
	next_explored(&r, 3);
}

static void
run(struct et_reps *r, uint16_t *out, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t t = (uint64_t)i * 100;

		out[i] = et_reps_next(r, t);
		if (i % 3 != 2)
			et_reps_on_ack(r, out[i], i % 7 == 0, t + 50);
		if (i == 300)
			et_reps_on_timeout(r, t + 60);
	}
}

static void
test_deterministic(void **state)
{
	static uint16_t a[1000], b[1000], c[1000];
	struct et_reps_params p = params(20);
	struct et_reps r;

	(void)state;
	p.freeze_ns = 20000;
	et_reps_init(&r, &p, 99);
	run(&r, a, 1000);
	assert_true(r.frozen_count == 1 && r.explored > 0 && r.recycled > 0);
	et_reps_init(&r, &p, 99);
	run(&r, b, 1000);
	assert_memory_equal(a, b, sizeof(a));
	et_reps_init(&r, &p, 100);
	run(&r, c, 1000);
	assert_memory_not_equal(a, c, sizeof(a));
	/* seeds 0 and 1 are fine too */
	et_reps_init(&r, &p, 0);
	run(&r, b, 1000);
	et_reps_init(&r, &p, 1);
	run(&r, c, 1000);
	assert_memory_not_equal(b, c, sizeof(b));
}

static void
test_idle_reexplores(void **state)
{
	struct et_reps_params p = params(2);
	struct et_reps r;

	(void)state;
	p.idle_ns = 1000;
	et_reps_init(&r, &p, 11);
	next_explored(&r, 0);
	next_explored(&r, 0);
	et_reps_on_ack(&r, 1, false, 10);
	et_reps_on_ack(&r, 2, false, 10);
	et_reps_on_ack(&r, 3, false, 10);
	assert_int_equal(next_recycled(&r, 20), 1);
	/* just short of idle: still recycling */
	assert_int_equal(next_recycled(&r, 1019), 2);
	/* idle 1000 ns since the last packet: a new window, the stale cache
	 * forgotten */
	next_explored(&r, 2019);
	next_explored(&r, 2020);
	next_explored(&r, 2021);
	assert_int_equal(r.n_valid, 0);

	/* idle_ns 0: never */
	p.idle_ns = 0;
	et_reps_init(&r, &p, 11);
	next_explored(&r, 0);
	next_explored(&r, 0);
	et_reps_on_ack(&r, 1, false, 10);
	et_reps_on_ack(&r, 2, false, 10);
	assert_int_equal(next_recycled(&r, 20), 1);
	assert_int_equal(next_recycled(&r, 1000000000000ull), 2);

	/* a frozen connection keeps its cache however long it idles */
	p.idle_ns = 1000;
	p.freeze_ns = 1000000;
	et_reps_init(&r, &p, 11);
	next_explored(&r, 0);
	next_explored(&r, 0);
	et_reps_on_ack(&r, 1, false, 10);
	et_reps_on_timeout(&r, 20);
	assert_int_equal(next_recycled(&r, 500000), 1);
}

/* Pinned (the Ethereal artifact's REPS): the connection rides the oldest
 * cached EV, packet after packet; a mark or a timeout drops the oldest (not
 * the marked EV) and the next takes over; an EV already cached is not
 * added twice; nothing freezes; with nothing cached it explores. */
static void
test_pinned(void **state)
{
	struct et_reps_params p = params(2);
	struct et_reps r;

	(void)state;
	p.pinned = true;
	et_reps_init(&r, &p, 3);
	assert_int_equal(r.p.buffer_size, ET_REPS_MAX_BUF);
	next_explored(&r, 0);
	next_explored(&r, 0);
	et_reps_on_ack(&r, 100, false, 1);
	et_reps_on_ack(&r, 200, false, 1);
	et_reps_on_ack(&r, 100, false, 1); /* cached already */
	et_reps_on_ack(&r, 300, false, 1);
	assert_int_equal(r.n_valid, 3);
	for (int i = 0; i < 10; i++)
		assert_int_equal(next_recycled(&r, 2), 100);
	et_reps_on_ack(&r, 300, true, 3); /* a mark on 300 drops 100 */
	assert_int_equal(next_recycled(&r, 3), 200);
	et_reps_on_timeout(&r, 4);
	assert_false(r.frozen);
	assert_int_equal(next_recycled(&r, 4), 300);
	et_reps_on_timeout(&r, 5);
	assert_int_equal(r.n_valid, 0);
	next_explored(&r, 5);
	et_reps_on_timeout(&r, 6); /* nothing to drop */
	assert_int_equal(r.frozen_count, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_recycles_unmarked_oldest_first),
		cmocka_unit_test(test_matches_fifo_model),
		cmocka_unit_test(test_overwrites_when_full),
		cmocka_unit_test(test_explores_first_window),
		cmocka_unit_test(test_explore_uniform),
		cmocka_unit_test(test_freezing),
		cmocka_unit_test(test_freezing_edges),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_idle_reexplores),
		cmocka_unit_test(test_pinned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
