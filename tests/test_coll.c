/* SPDX-License-Identifier: BSD-3-Clause
 * Collective schedules, run by a reference executor in plain memory that
 * follows the step rule of et_coll.h with transfers delivered in a random
 * order: every kind x algorithm x rank count x size ends with the data
 * et_coll_expect() says, in int32 and float32.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "et_coll.h"
#include "et_test.h"

struct flight {
	uint32_t src, send;
};

/* Run s to its end; 0 when every rank's checked range is right. */
static int
execute(const struct et_coll_sched *s, enum et_coll_dtype dt, uint64_t seed)
{
	uint32_t n = s->nranks, r;
	uint8_t **data = calloc(n, sizeof(*data)), **stg = calloc(n, sizeof(*stg));
	uint8_t *want = malloc(s->size);
	uint32_t *step = calloc(n, sizeof(*step)), *sends_left = calloc(n, sizeof(*sends_left));
	uint64_t **arrived = calloc(n, sizeof(*arrived));
	struct flight *fl = NULL;
	uint32_t nfl = 0, capfl = 0, bad = 0;
	uint64_t rng = seed | 1;
	int progress = 1;

	for (r = 0; r < n; r++) {
		data[r] = malloc(s->size);
		stg[r] = calloc(1, s->rank[r].staging_bytes + 1);
		arrived[r] = calloc(s->rank[r].nrecvs + 1, sizeof(uint64_t));
		et_coll_fill(s, r, seed, dt, data[r]);
		step[r] = UINT32_MAX; /* not yet entered step 0 */
	}
	while (progress) {
		progress = 0;
		/* ranks whose step is finished move on (in a random rotation) */
		uint32_t start = (uint32_t)(et_test_rand(&rng) % n);

		for (uint32_t i = 0; i < n; i++) {
			const struct et_coll_rank *k = &s->rank[(start + i) % n];
			uint32_t me = (start + i) % n;
			bool done = true;

			if (step[me] != UINT32_MAX && step[me] < k->nsteps) {
				const struct et_coll_step *st = &k->steps[step[me]];

				done = sends_left[me] == 0;
				for (uint32_t q = 0; done && q < st->nrecv; q++)
					done = arrived[me][st->first_recv + q] ==
					       k->recvs[st->first_recv + q].len;
				if (!done)
					continue;
				for (uint32_t q = 0; q < st->nrecv; q++)
					et_coll_apply(&k->recvs[st->first_recv + q], data[me], stg[me], dt);
			}
			if (step[me] != UINT32_MAX && step[me] >= k->nsteps)
				continue;
			step[me] = step[me] == UINT32_MAX ? 0 : step[me] + 1;
			progress = 1;
			if (step[me] < k->nsteps) {
				const struct et_coll_step *st = &k->steps[step[me]];

				sends_left[me] = st->nsend;
				for (uint32_t q = 0; q < st->nsend; q++) {
					if (nfl == capfl) {
						capfl = capfl ? 2 * capfl : 64;
						fl = realloc(fl, capfl * sizeof(*fl));
					}
					fl[nfl++] = (struct flight){me, st->first_send + q};
				}
			}
		}
		/* deliver a random half of what is in flight */
		for (uint32_t m = (nfl + 1) / 2; m > 0 && nfl; m--) {
			uint32_t j = (uint32_t)(et_test_rand(&rng) % nfl);
			const struct et_coll_send *sd = &s->rank[fl[j].src].sends[fl[j].send];
			const struct et_coll_recv *rv = &s->rank[sd->dst].recvs[sd->recv];

			memcpy(stg[sd->dst] + rv->staging_off, data[fl[j].src] + sd->src_off, sd->len);
			arrived[sd->dst][sd->recv] += sd->len;
			sends_left[fl[j].src]--;
			fl[j] = fl[--nfl];
			progress = 1;
		}
	}
	for (r = 0; r < n; r++) {
		uint64_t off, len;

		if (step[r] != s->rank[r].nsteps) /* stuck: a schedule deadlock */
			bad++;
		et_coll_expect(s, r, seed, dt, want);
		et_coll_checked_range(s, r, &off, &len);
		bad += memcmp(data[r] + off, want + off, len) != 0;
		free(data[r]);
		free(stg[r]);
		free(arrived[r]);
	}
	free(data);
	free(stg);
	free(arrived);
	free(want);
	free(step);
	free(sends_left);
	free(fl);
	return bad ? -1 : 0;
}

/* Sends and receives pair up; staging ranges are disjoint and fit. */
static void
check_structure(const struct et_coll_sched *s)
{
	for (uint32_t r = 0; r < s->nranks; r++) {
		const struct et_coll_rank *k = &s->rank[r];
		uint64_t next = 0;
		uint32_t ns = 0, nr = 0;

		for (uint32_t i = 0; i < k->nsteps; i++) {
			assert_int_equal(k->steps[i].first_send, ns);
			assert_int_equal(k->steps[i].first_recv, nr);
			ns += k->steps[i].nsend;
			nr += k->steps[i].nrecv;
		}
		assert_int_equal(ns, k->nsends);
		assert_int_equal(nr, k->nrecvs);
		for (uint32_t i = 0; i < k->nsends; i++) {
			const struct et_coll_send *sd = &k->sends[i];
			const struct et_coll_recv *rv;

			assert_true(sd->dst < s->nranks && sd->dst != r);
			assert_true(sd->recv < s->rank[sd->dst].nrecvs);
			rv = &s->rank[sd->dst].recvs[sd->recv];
			assert_int_equal(rv->src, r);
			assert_int_equal(rv->len, sd->len);
			assert_true(sd->src_off + sd->len <= s->size);
			assert_true(rv->data_off + rv->len <= s->size);
		}
		for (uint32_t i = 0; i < k->nrecvs; i++) {
			assert_int_equal(k->recvs[i].staging_off, next);
			next += k->recvs[i].len;
		}
		assert_int_equal(next, k->staging_bytes);
		assert_true(k->staging_bytes <= s->staging_bytes);
	}
}

static const struct {
	enum et_coll_kind kind;
	enum et_coll_algo algo;
} combos[] = {
	{ET_COLL_ALLREDUCE, ET_ALGO_A2A},     {ET_COLL_ALLREDUCE, ET_ALGO_RD},
	{ET_COLL_ALLREDUCE, ET_ALGO_RING},    {ET_COLL_ALLREDUCE, ET_ALGO_DBT},
	{ET_COLL_ALLGATHER, ET_ALGO_A2A},     {ET_COLL_ALLGATHER, ET_ALGO_RD},
	{ET_COLL_ALLGATHER, ET_ALGO_RING},    {ET_COLL_REDUCESCATTER, ET_ALGO_A2A},
	{ET_COLL_REDUCESCATTER, ET_ALGO_RD},  {ET_COLL_REDUCESCATTER, ET_ALGO_RING},
	{ET_COLL_ALLTOALL, ET_ALGO_A2A},
};

static void
test_every_schedule_reduces_right(void **state)
{
	static const uint32_t ranks[] = {1, 2, 3, 4, 5, 8, 16};
	struct et_coll_sched s;
	const char *why;

	(void)state;
	for (unsigned c = 0; c < sizeof(combos) / sizeof(combos[0]); c++)
		for (unsigned i = 0; i < sizeof(ranks) / sizeof(ranks[0]); i++) {
			uint32_t n = ranks[i];
			uint64_t sizes[] = {4ull * n, 4ull * n * 7, 65536ull / (4 * n) * (4 * n)};

			if (combos[c].algo == ET_ALGO_RD && (n & (n - 1)))
				continue;
			for (unsigned z = 0; z < 3; z++)
				for (uint64_t seed = 1; seed <= 6; seed++) {
					uint64_t chunk = combos[c].algo == ET_ALGO_DBT && seed % 2 ? 4 : 0;

					assert_int_equal(et_coll_build(&s, combos[c].kind, combos[c].algo, n,
								       sizes[z], chunk, &why), 0);
					check_structure(&s);
					if (execute(&s, seed % 3 ? ET_DT_INT32 : ET_DT_FLOAT32, seed))
						fail_msg("%s/%s, %u ranks, %lu bytes, seed %lu: wrong data",
							 et_coll_kind_name(combos[c].kind),
							 et_coll_algo_name(combos[c].algo), n,
							 (unsigned long)sizes[z], (unsigned long)seed);
					et_coll_free(&s);
				}
		}
}

static void
test_bytes_and_steps(void **state)
{
	struct et_coll_sched s;
	const char *why;
	const uint64_t size = 1 << 20;

	(void)state;
	/* all-reduce: every rank sends 2 (N-1)/N of the vector by a2a, rd, ring */
	for (int a = ET_ALGO_A2A; a <= ET_ALGO_RING; a++) {
		assert_int_equal(et_coll_build(&s, ET_COLL_ALLREDUCE, a, 16, size, 0, &why), 0);
		for (uint32_t r = 0; r < 16; r++)
			assert_int_equal(et_coll_bytes_sent(&s, r), 2 * size / 16 * 15);
		assert_int_equal(s.rank[0].nsteps, a == ET_ALGO_A2A ? 2 : a == ET_ALGO_RD ? 8 : 30);
		et_coll_free(&s);
	}
	/* dbt is pipelined: steps grow with chunks + depth, not chunks x depth */
	assert_int_equal(et_coll_build(&s, ET_COLL_ALLREDUCE, ET_ALGO_DBT, 16, size, 4096, &why), 0);
	assert_true(s.rank[0].nsteps <= size / 2 / 4096 + 2 * 5 + 1);
	et_coll_free(&s);
	assert_int_equal(et_coll_build(&s, ET_COLL_ALLREDUCE, ET_ALGO_A2A, 1, 64, 0, &why), 0);
	assert_int_equal(s.rank[0].nsteps, 0);
	et_coll_free(&s);
}

static void
test_errors(void **state)
{
	struct et_coll_sched s;
	const char *why;
	enum et_coll_kind k;
	enum et_coll_algo a;

	(void)state;
	assert_int_equal(et_coll_build(&s, ET_COLL_ALLREDUCE, ET_ALGO_RD, 6, 4 * 6, 0, &why), -1);
	assert_non_null(strstr(why, "power-of-two"));
	assert_int_equal(et_coll_build(&s, ET_COLL_ALLREDUCE, ET_ALGO_A2A, 4, 12, 0, &why), -1);
	assert_non_null(strstr(why, "multiple"));
	assert_int_equal(et_coll_build(&s, ET_COLL_ALLTOALL, ET_ALGO_RING, 4, 64, 0, &why), -1);
	assert_int_equal(et_coll_build(&s, ET_COLL_ALLGATHER, ET_ALGO_DBT, 4, 64, 0, &why), -1);
	assert_int_equal(et_coll_build(&s, ET_COLL_ALLREDUCE, ET_ALGO_DBT, 4, 64, 6, &why), -1);
	assert_int_equal(et_coll_build(&s, ET_COLL_ALLREDUCE, ET_ALGO_A2A, 0, 64, 0, &why), -1);
	assert_int_equal(et_coll_parse_kind("reducescatter", &k), 0);
	assert_int_equal(k, ET_COLL_REDUCESCATTER);
	assert_int_equal(et_coll_parse_algo("dbt", &a), 0);
	assert_int_equal(a, ET_ALGO_DBT);
	assert_int_equal(et_coll_parse_kind("broadcast", &k), -1);
	assert_int_equal(et_coll_parse_algo("tree", &a), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_schedule_reduces_right),
		cmocka_unit_test(test_bytes_and_steps),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests_name("coll", tests, NULL, NULL);
}
