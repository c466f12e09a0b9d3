/* SPDX-License-Identifier: BSD-3-Clause
 * The CM's tables (cm/et_cm_table_priv.h): slots handed out in the order
 * they were freed, with their generations, while the table grows; the
 * remote hash and the listeners' checked against plain arrays under a
 * random sequence of changes; timers due in time order.
 */
#include <stdint.h>

#include "et_test.h"

#include "base/et_rand.h"
#include "cm/et_cm_table_priv.h"

/* The table stores connection pointers only: fake ones do. */
static struct et_cm_conn *
fake(uint32_t k)
{
	return (struct et_cm_conn *)(uintptr_t)(0x1000 + 16 * (uintptr_t)k);
}

/* Every slot once before any comes back; a freed slot after those freed
 * before it; none past max; generations count the takes. */
static void
test_slots(void **state)
{
	enum { MAX = 300 };
	struct et_cm_table t;
	uint32_t got[MAX];

	(void)state;
	assert_int_equal(et_cm_table_init(&t, 0, 1), -EINVAL);
	assert_int_equal(et_cm_table_init(&t, 65537, 1), -EINVAL);
	assert_int_equal(et_cm_table_init(&t, MAX, 1), 0);
	assert_true(t.cap < MAX); /* memory follows use */
	for (uint32_t k = 0; k < MAX; k++) {
		got[k] = et_cm_table_take(&t, fake(k));
		assert_int_equal(got[k], k); /* all new: in order */
		assert_int_equal(et_cm_table_gen(&t, k), 1);
	}
	assert_int_equal(t.cap, MAX);
	assert_int_equal(et_cm_table_take(&t, fake(0)), ET_CM_NO_SLOT);
	for (uint32_t k = 0; k < MAX; k++)
		assert_ptr_equal(et_cm_table_conn(&t, k), fake(k));
	assert_null(et_cm_table_conn(&t, MAX));
	assert_null(et_cm_table_conn(&t, 0xffff));
	/* freed 7, 3, 200: taken back in that order, each one generation on */
	et_cm_table_put(&t, 7);
	et_cm_table_put(&t, 3);
	et_cm_table_put(&t, 200);
	assert_null(et_cm_table_conn(&t, 3));
	assert_int_equal(et_cm_table_take(&t, fake(1)), 7);
	assert_int_equal(et_cm_table_take(&t, fake(2)), 3);
	assert_int_equal(et_cm_table_gen(&t, 3), 2);
	et_cm_table_put(&t, 7);
	assert_int_equal(et_cm_table_take(&t, fake(3)), 200);
	assert_int_equal(et_cm_table_take(&t, fake(4)), 7);
	assert_int_equal(et_cm_table_gen(&t, 7), 3);
	et_cm_table_free(&t);
}

/* A freed slot waits behind every slot never taken, the table growing
 * for them: each of the 4096 is taken once before slot 0 comes back. */
static void
test_growth_delays_reuse(void **state)
{
	struct et_cm_table t;

	(void)state;
	assert_int_equal(et_cm_table_init(&t, 4096, 1), 0);
	assert_int_equal(et_cm_table_take(&t, fake(0)), 0);
	et_cm_table_put(&t, 0);
	for (uint32_t k = 1; k < 4096; k++) {
		assert_int_equal(et_cm_table_take(&t, fake(k)), k);
		if (k % 3 == 0)
			et_cm_table_put(&t, k); /* more freed slots, behind slot 0 */
	}
	assert_int_equal(t.cap, 4096);
	assert_int_equal(et_cm_table_take(&t, fake(0)), 0);
	assert_int_equal(et_cm_table_gen(&t, 0), 2);
	assert_int_equal(et_cm_table_take(&t, fake(3)), 3);
	et_cm_table_free(&t);
}

/* The remote hash against an array of keys: set, moved, freed, looked up;
 * the table growing in between keeps what it holds. */
static void
test_remote_matches_a_model(void **state)
{
	enum { MAX = 2000 };
	static uint64_t guid[MAX];
	static uint32_t id[MAX];
	static bool used[MAX], keyed[MAX];
	struct et_cm_table t;
	uint64_t rng = 5;

	(void)state;
	assert_int_equal(et_cm_table_init(&t, MAX, 0x1234), 0);
	for (int step = 0; step < 40000; step++) {
		uint64_t r = et_rand_next(&rng);
		uint32_t k = (uint32_t)(r % MAX);
		/* few GUIDs, few IDs: many keys share one half */
		uint64_t g = 0x0200000000000000ull | ((r >> 20) % 4);
		uint32_t i = (uint32_t)((r >> 24) % 600);

		switch ((r >> 40) % 4) {
		case 0: /* a new connection, named by its peer */
			if ((k = et_cm_table_take(&t, fake(0))) == ET_CM_NO_SLOT)
				break;
			t.conn[k] = fake(k);
			used[k] = true;
			/* fall through */
		case 1: /* (re)named; one key names one connection at most */
			if (!used[k])
				break;
			for (uint32_t o = 0; o < MAX; o++)
				if (keyed[o] && guid[o] == g && id[o] == i)
					goto skip;
			et_cm_table_set_remote(&t, k, g, i);
			guid[k] = g;
			id[k] = i;
			keyed[k] = true;
skip:
			break;
		case 2:
			if (!used[k])
				break;
			et_cm_table_put(&t, k);
			used[k] = keyed[k] = false;
			break;
		default: {
			struct et_cm_conn *want = NULL;

			for (uint32_t o = 0; o < MAX; o++)
				if (keyed[o] && guid[o] == g && id[o] == i)
					want = fake(o);
			assert_ptr_equal(et_cm_table_find_remote(&t, g, i), want);
			break;
		}
		}
	}
	for (uint32_t o = 0; o < MAX; o++)
		if (keyed[o])
			assert_ptr_equal(et_cm_table_find_remote(&t, guid[o], id[o]), fake(o));
	et_cm_table_free(&t);
}

/* Timers come due earliest first; a freed slot's timer is gone. */
static void
test_timers(void **state)
{
	struct et_cm_table t;

	(void)state;
	assert_int_equal(et_cm_table_init(&t, 16, 1), 0);
	for (uint32_t k = 0; k < 4; k++)
		et_cm_table_take(&t, fake(k));
	assert_int_equal(et_cm_table_deadline(&t), UINT64_MAX);
	et_cm_table_arm(&t, 0, 500);
	et_cm_table_arm(&t, 1, 300);
	et_cm_table_arm(&t, 2, 400);
	et_cm_table_arm(&t, 3, 300);
	assert_int_equal(et_cm_table_deadline(&t), 300);
	et_cm_table_put(&t, 1);
	et_cm_table_arm(&t, 2, UINT64_MAX); /* disarmed */
	assert_int_equal(et_cm_table_pop_due(&t, 299), ET_CM_NO_SLOT);
	assert_int_equal(et_cm_table_pop_due(&t, 1000), 3);
	assert_int_equal(et_cm_table_pop_due(&t, 1000), 0);
	assert_int_equal(et_cm_table_pop_due(&t, 1000), ET_CM_NO_SLOT);
	assert_int_equal(et_cm_table_deadline(&t), UINT64_MAX);
	et_cm_table_free(&t);
}

/* Listeners against an array: listen (twice refused), unlisten (of none
 * refused), look up, over a few hundred service IDs. */
static void
test_listeners_match_a_model(void **state)
{
	enum { SIDS = 300 };
	static bool on[SIDS];
	struct et_cm_table t;
	uint64_t rng = 9;

	(void)state;
	assert_int_equal(et_cm_table_init(&t, 16, 77), 0);
	for (int step = 0; step < 20000; step++) {
		uint64_t r = et_rand_next(&rng);
		uint32_t k = (uint32_t)(r % SIDS);
		uint64_t sid = 0x0106000000000000ull + k * 0x10001ull;
		const struct et_cm_listener *l;

		switch ((r >> 32) % 3) {
		case 0:
			assert_int_equal(et_cm_table_listen(&t, sid, fake(k)), on[k] ? -EADDRINUSE : 0);
			on[k] = true;
			break;
		case 1:
			assert_int_equal(et_cm_table_unlisten(&t, sid), on[k] ? 0 : -ENOENT);
			on[k] = false;
			break;
		default:
			l = et_cm_table_listener(&t, sid);
			if (!on[k]) {
				assert_null(l);
				break;
			}
			assert_non_null(l);
			assert_int_equal(l->service_id, sid);
			assert_ptr_equal(l->ctx, fake(k));
			break;
		}
	}
	et_cm_table_free(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_growth_delays_reuse),
		cmocka_unit_test(test_remote_matches_a_model),
		cmocka_unit_test(test_timers),
		cmocka_unit_test(test_listeners_match_a_model),
	};

	return cmocka_run_group_tests_name("cm-table", tests, NULL, NULL);
}
