/* SPDX-License-Identifier: BSD-3-Clause
 * The virtual clock's agenda (sim/et_agenda.h): who runs in a pass, in node
 * order, and when the others wake; checked against a plain array of
 * wake-up times under a random sequence of updates.
 */
#include <stdint.h>

#include "et_test.h"

#include "sim/et_agenda.h"

/* Every node starts on the agenda; a pass takes them in order, and a bit
 * set during the pass for a later node is taken in the same pass, one for
 * an earlier node in the next. */
static void
test_pass_order(void **state)
{
	struct et_agenda a;
	uint32_t i, seen = 0;

	(void)state;
	assert_int_equal(et_agenda_init(&a, 130), 0);
	for (i = et_agenda_take(&a, 0); i < a.n; i = et_agenda_take(&a, i + 1))
		assert_int_equal(i, seen++);
	assert_int_equal(seen, 130);
	assert_int_equal(et_agenda_take(&a, 0), 130); /* all taken */
	assert_int_equal(et_agenda_next(&a, 5), UINT64_MAX);

	et_agenda_mark(&a, 70);
	i = et_agenda_take(&a, 0);
	assert_int_equal(i, 70);
	et_agenda_mark(&a, 129); /* later: this pass */
	et_agenda_mark(&a, 3);   /* earlier: the next */
	assert_int_equal(et_agenda_take(&a, i + 1), 129);
	assert_int_equal(et_agenda_take(&a, 130), 130);
	assert_int_equal(et_agenda_next(&a, 5), 5); /* node 3 waits: now */
	assert_int_equal(et_agenda_take(&a, 0), 3);

	/* a wake-up by a time moves only earlier */
	et_agenda_wake_at(&a, 64, 100);
	et_agenda_wake_by(&a, 64, 200);
	assert_int_equal(et_agenda_next(&a, 5), 100);
	et_agenda_wake_by(&a, 64, 50);
	assert_int_equal(et_agenda_next(&a, 5), 50);
	et_agenda_due(&a, 50);
	assert_int_equal(et_agenda_take(&a, 0), 64);
	et_agenda_free(&a);
}

/* Wake-ups: moved earlier, later, removed, and due in time order; the
 * next time is always the earliest one left. */
static void
test_wake_ups_match_a_model(void **state)
{
	enum { N = 200 };
	struct et_agenda a;
	uint64_t model[N], rng = 7, now = 0;

	(void)state;
	assert_int_equal(et_agenda_init(&a, N), 0);
	while (et_agenda_take(&a, 0) < N)
		;
	for (uint32_t i = 0; i < N; i++)
		model[i] = UINT64_MAX;
	for (int step = 0; step < 20000; step++) {
		uint32_t i = (uint32_t)(et_test_rand(&rng) % N);
		uint64_t t = et_test_rand(&rng) % 8 == 0 ? UINT64_MAX
							   : now + 1 + et_test_rand(&rng) % 1000;
		uint64_t want = UINT64_MAX;

		et_agenda_wake_at(&a, i, t);
		model[i] = t;
		for (uint32_t k = 0; k < N; k++)
			if (model[k] < want)
				want = model[k];
		assert_true(et_agenda_next(&a, now) == want);
		if (step % 16 == 0 && want != UINT64_MAX) {
			/* the clock moves there: exactly the due ones run, in order */
			uint32_t prev = 0, got = 0, due = 0;

			now = want;
			et_agenda_due(&a, now);
			for (uint32_t k = et_agenda_take(&a, 0); k < N; k = et_agenda_take(&a, k + 1)) {
				assert_true(model[k] <= now && (got == 0 || k > prev));
				prev = k;
				got++;
			}
			for (uint32_t k = 0; k < N; k++)
				if (model[k] <= now) {
					model[k] = UINT64_MAX;
					due++;
				}
			assert_int_equal(got, due);
		}
	}
	et_agenda_free(&a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_order),
		cmocka_unit_test(test_wake_ups_match_a_model),
	};

	return cmocka_run_group_tests_name("agenda", tests, NULL, NULL);
}
