/* SPDX-License-Identifier: BSD-3-Clause
 * The indexed min-heap (base/et_heap.h): checked against a plain array of
 * times under a random sequence of sets, removals, pops and growth.
 */
#include <stdint.h>

#include "et_test.h"

#include "base/et_heap.h"
#include "base/et_rand.h"

/* The id a scan of model would pop at now: the earliest time, the
 * smallest id on a tie; ET_HEAP_NONE if nothing is due. */
static uint32_t
model_due(const uint64_t *model, uint32_t n, uint64_t now)
{
	uint32_t best = ET_HEAP_NONE;

	for (uint32_t i = 0; i < n; i++)
		if (model[i] <= now && (best == ET_HEAP_NONE || model[i] < model[best]))
			best = i;
	return best;
}

static uint64_t
model_first(const uint64_t *model, uint32_t n)
{
	uint64_t t = UINT64_MAX;

	for (uint32_t i = 0; i < n; i++)
		if (model[i] < t)
			t = model[i];
	return t;
}

static void
test_heap_matches_a_model(void **state)
{
	enum { N = 300 };
	struct et_heap h;
	uint64_t model[N], rng = 11;
	uint32_t ids = 40; /* grows to N on the way */

	(void)state;
	assert_int_equal(et_heap_init(&h, ids), 0);
	assert_int_equal(et_heap_first_at(&h), UINT64_MAX);
	assert_int_equal(et_heap_pop_due(&h, UINT64_MAX - 1), ET_HEAP_NONE);
	for (uint32_t i = 0; i < N; i++)
		model[i] = UINT64_MAX;
	for (int step = 0; step < 20000; step++) {
		uint64_t r = et_rand_next(&rng);
		uint32_t id = (uint32_t)(r % ids);

		if (step % 2000 == 1999 && ids < N) {
			uint32_t more = ids + 65 < N ? ids + 65 : N;

			assert_int_equal(et_heap_grow(&h, ids, more), 0);
			ids = more;
		}
		switch ((r >> 32) % 4) {
		case 0: /* few distinct times: ties are common */
		case 1:
			model[id] = (r >> 40) % 64;
			et_heap_set(&h, id, model[id]);
			break;
		case 2:
			model[id] = UINT64_MAX;
			et_heap_set(&h, id, UINT64_MAX);
			break;
		default: {
			uint64_t now = (r >> 40) % 64;
			uint32_t want = model_due(model, ids, now);

			assert_int_equal(et_heap_pop_due(&h, now), want);
			if (want != ET_HEAP_NONE)
				model[want] = UINT64_MAX;
			break;
		}
		}
		assert_int_equal(et_heap_first_at(&h), model_first(model, ids));
		assert_int_equal(et_heap_at(&h, id), model[id]);
	}
	/* everything comes due in (time, id) order */
	for (uint32_t want; (want = model_due(model, ids, UINT64_MAX - 1)) != ET_HEAP_NONE;) {
		assert_int_equal(et_heap_pop_due(&h, UINT64_MAX - 1), want);
		model[want] = UINT64_MAX;
	}
	assert_int_equal(h.n, 0);
	et_heap_free(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap_matches_a_model),
	};

	return cmocka_run_group_tests_name("heap", tests, NULL, NULL);
}
