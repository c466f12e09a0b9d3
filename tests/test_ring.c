/* SPDX-License-Identifier: BSD-3-Clause
 * The growing ring (base/et_ring.h): a queue whose positions start just
 * below the wrap of 32 bits, pushed (et_ring_push) and popped in random
 * runs, growing when full: it gives back what was pushed, in order; a position kept
 * across a growth still finds its element; it grows no further than max.
 */
#include <stdint.h>

#include "et_test.h"

#include "base/et_rand.h"
#include "base/et_ring.h"

static void
test_ring_keeps_order_and_positions(void **state)
{
	enum { MAX = 1024 };
	uint32_t *ring = NULL, cap = 0, head = UINT32_MAX - 40, tail = head;
	uint32_t next_in = 0, next_out = 0, kept_pos = 0, kept_val = UINT32_MAX;
	uint64_t rng = 7;

	(void)state;
	for (int step = 0; step < 20000; step++) {
		uint64_t r = et_rand_next(&rng);
		bool push = (r & 3) != 0 || head == tail; /* mostly pushes: it fills */

		if (push && tail - head < MAX) {
			uint32_t old = cap, at = tail, *slot;

			if (kept_val == UINT32_MAX && (r >> 8) % 50 == 0) {
				kept_pos = tail;
				kept_val = next_in;
			}
			slot = et_ring_push((void **)&ring, &cap, head, &tail, sizeof(*ring), MAX);
			assert_non_null(slot);
			assert_int_equal(tail, at + 1);
			assert_int_equal(cap, at - head < old ? old : old ? 2 * old : ET_RING_FIRST);
			assert_ptr_equal(slot, &ring[at % cap]);
			*slot = next_in++;
		} else if (head != tail) {
			if (kept_val != UINT32_MAX) { /* still waiting: still there */
				assert_int_equal(ring[kept_pos % cap], kept_val);
				if (head == kept_pos)
					kept_val = UINT32_MAX;
			}
			assert_int_equal(ring[head++ % cap], next_out++);
		}
	}
	/* full at max: it refuses, and keeps what it holds */
	while (tail - head < cap)
		ring[tail++ % cap] = next_in++;
	assert_int_equal(cap, MAX);
	assert_null(et_ring_push((void **)&ring, &cap, head, &tail, sizeof(*ring), MAX));
	assert_int_equal(cap, MAX);
	assert_int_equal(tail - head, MAX);
	while (head != tail)
		assert_int_equal(ring[head++ % cap], next_out++);
	free(ring);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_keeps_order_and_positions),
	};

	return cmocka_run_group_tests_name("ring", tests, NULL, NULL);
}
