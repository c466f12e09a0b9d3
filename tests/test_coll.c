/* SPDX-License-Identifier: BSD-3-Clause
 * Collective schedules: shape (every send meets its recv, staging ranges
 * apart, steps tile the arrays), bytes per rank, errors, and every supported
 * kind x algorithm run by a reference executor that follows the step rule
 * with ranks and deliveries in a random order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/et_bits.h"
#include "coll/et_coll.h"

static const uint32_t ranks[] = {1, 2, 3, 4, 5, 6, 7, 8, 16};
#define NRANKS (sizeof(ranks) / sizeof(ranks[0]))

static const struct {
	enum et_coll_kind kind;
	enum et_coll_algo algo;
} combos[] = {
	{ET_COLL_ALLREDUCE, ET_ALGO_A2A},     {ET_COLL_ALLREDUCE, ET_ALGO_RD},
	{ET_COLL_ALLREDUCE, ET_ALGO_RING},    {ET_COLL_ALLREDUCE, ET_ALGO_DBT},
	{ET_COLL_ALLGATHER, ET_ALGO_A2A},     {ET_COLL_ALLGATHER, ET_ALGO_RD},
	{ET_COLL_ALLGATHER, ET_ALGO_RING},    {ET_COLL_REDUCESCATTER, ET_ALGO_A2A},
	{ET_COLL_REDUCESCATTER, ET_ALGO_RD},  {ET_COLL_REDUCESCATTER, ET_ALGO_RING},
	{ET_COLL_ALLTOALL, ET_ALGO_A2A},      {ET_COLL_ALLREDUCE, ET_ALGO_RD_FAR},
};
#define NCOMBOS (sizeof(combos) / sizeof(combos[0]))

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static bool
pow2(uint32_t n)
{
	return (n & (n - 1)) == 0;
}

static bool
is_rd(enum et_coll_algo algo)
{
	return algo == ET_ALGO_RD || algo == ET_ALGO_RD_FAR;
}

static void
build(struct et_coll_sched *s, enum et_coll_kind kind, enum et_coll_algo algo, uint32_t n,
      uint64_t size, uint64_t chunk)
{
	const char *why = NULL;

	if (et_coll_build(s, kind, algo, n, size, chunk, &why)) {
		fprintf(stderr, "%s/%s n %u size %lu: %s\n", et_coll_kind_name(kind),
			et_coll_algo_name(algo), n, (unsigned long)size, why);
		fail();
	}
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every send meets a recv of the same length from the same rank, each recv
 * is met once, ranges lie in the buffers, staging ranges are apart, steps
 * tile sends[] and recvs[] in order and none is empty. */
static void
check_shape(const struct et_coll_sched *s)
{
	uint32_t n = s->nranks, r, i;
	uint32_t **hits = calloc(n, sizeof(*hits));

	assert_non_null(hits);
	assert_int_equal(s->dtype_size, 4);
	for (r = 0; r < n; r++)
		assert_non_null(hits[r] = calloc(s->rank[r].nrecvs + 1, sizeof(**hits)));
	for (r = 0; r < n; r++) {
		const struct et_coll_rank *k = &s->rank[r];
		uint64_t *st = calloc(2 * (size_t)k->nrecvs + 1, sizeof(*st)), bytes = 0;
		uint32_t fs = 0, fr = 0;

		assert_non_null(st);
		for (i = 0; i < k->nsteps; i++) {
			assert_int_equal(k->steps[i].first_send, fs);
			assert_int_equal(k->steps[i].first_recv, fr);
			assert_true(k->steps[i].nsend + k->steps[i].nrecv > 0);
			fs += k->steps[i].nsend;
			fr += k->steps[i].nrecv;
		}
		assert_int_equal(fs, k->nsends);
		assert_int_equal(fr, k->nrecvs);
		for (i = 0; i < k->nsends; i++) {
			const struct et_coll_send *x = &k->sends[i];

			assert_true(x->dst < n && x->dst != r);
			assert_true(x->recv < s->rank[x->dst].nrecvs);
			assert_int_equal(s->rank[x->dst].recvs[x->recv].src, r);
			assert_true(s->rank[x->dst].recvs[x->recv].len == x->len);
			assert_true(x->len > 0 && x->len % 4 == 0 && x->src_off % 4 == 0);
			assert_true(x->src_off + x->len <= s->size);
			hits[x->dst][x->recv]++;
			bytes += x->len;
		}
		assert_true(et_coll_bytes_sent(s, r) == bytes);
		for (i = 0; i < k->nrecvs; i++) {
			const struct et_coll_recv *v = &k->recvs[i];

			assert_true(v->data_off % 4 == 0 && v->data_off + v->len <= s->size);
			assert_true(v->staging_off % 4 == 0);
			assert_true(v->staging_off + v->len <= k->staging_bytes);
			/* start in the high bits, index in the low: sorts by start */
			st[i] = v->staging_off << 20 | i;
		}
		assert_true(k->staging_bytes <= s->staging_bytes);
		qsort(st, k->nrecvs, sizeof(*st), cmp_u64);
		for (i = 1; i < k->nrecvs; i++) {
			const struct et_coll_recv *a = &k->recvs[st[i - 1] & 0xfffff];
			const struct et_coll_recv *b = &k->recvs[st[i] & 0xfffff];

			assert_true(a->staging_off + a->len <= b->staging_off);
		}
		free(st);
	}
	for (r = 0; r < n; r++) {
		for (i = 0; i < s->rank[r].nrecvs; i++)
			assert_int_equal(hits[r][i], 1);
		free(hits[r]);
	}
	free(hits);
}

/* ---- the reference executor ---- */

struct flight {
	uint32_t src, send;
	uint8_t *snap;	/* the source bytes when the send was issued */
};

struct sim_rank {
	uint8_t *data, *staging, *arrived;
	uint32_t step, sends_left;
	bool in_step, done;
};

/* One move of rank r, if it can make one: enter its step (issue the sends),
 * or finish it (apply the recvs in index order) once everything arrived. */
static bool
move(const struct et_coll_sched *s, struct sim_rank *sr, uint32_t r, struct flight *fl,
     uint32_t *nfl, enum et_coll_dtype dt)
{
	const struct et_coll_rank *k = &s->rank[r];
	struct sim_rank *m = &sr[r];
	const struct et_coll_step *st;
	uint32_t i;

	if (m->done)
		return false;
	st = &k->steps[m->step];
	if (!m->in_step) {
		for (i = 0; i < st->nsend; i++) {
			const struct et_coll_send *x = &k->sends[st->first_send + i];
			struct flight *f = &fl[(*nfl)++];

			f->src = r;
			f->send = st->first_send + i;
			assert_non_null(f->snap = malloc(x->len));
			memcpy(f->snap, m->data + x->src_off, x->len);
		}
		m->sends_left = st->nsend;
		m->in_step = true;
		return true;
	}
	if (m->sends_left)
		return false;
	for (i = 0; i < st->nrecv; i++)
		if (!m->arrived[st->first_recv + i])
			return false;
	for (i = 0; i < st->nrecv; i++)
		et_coll_apply(&k->recvs[st->first_recv + i], m->data, m->staging, dt);
	m->in_step = false;
	m->done = ++m->step == k->nsteps;
	return true;
}

/* The send completes: its source must not have changed since it was issued
 * (the bytes may be read at any moment in between), it lands in staging. */
static void
deliver(const struct et_coll_sched *s, struct sim_rank *sr, struct flight *f)
{
	const struct et_coll_send *x = &s->rank[f->src].sends[f->send];
	const struct et_coll_recv *v = &s->rank[x->dst].recvs[x->recv];
	struct sim_rank *d = &sr[x->dst];

	assert_memory_equal(sr[f->src].data + x->src_off, f->snap, x->len);
	assert_false(d->arrived[x->recv]);
	memcpy(d->staging + v->staging_off, f->snap, x->len);
	d->arrived[x->recv] = 1;
	sr[f->src].sends_left--;
	free(f->snap);
}

static void
run(const struct et_coll_sched *s, enum et_coll_dtype dt, uint64_t seed, uint64_t rng)
{
	uint32_t n = s->nranks, nfl = 0, r, total = 0;
	struct sim_rank *sr = calloc(n, sizeof(*sr));
	struct flight *fl;
	uint8_t *want = malloc(s->size + 1);

	assert_non_null(sr);
	assert_non_null(want);
	for (r = 0; r < n; r++) {
		total += s->rank[r].nsends;
		assert_non_null(sr[r].data = malloc(s->size + 1));
		assert_non_null(sr[r].staging = malloc(s->rank[r].staging_bytes + 1));
		assert_non_null(sr[r].arrived = calloc(s->rank[r].nrecvs + 1, 1));
		memset(sr[r].staging, 0xa5, s->rank[r].staging_bytes);
		et_coll_fill(s, r, seed, dt, sr[r].data);
		sr[r].done = s->rank[r].nsteps == 0;
	}
	assert_non_null(fl = calloc(total + 1, sizeof(*fl)));
	for (;;) {
		uint64_t pick;

		if (nfl == 0) {
			bool any = false, all = true;

			/* nothing in flight: some rank must be able to move */
			for (r = 0; r < n; r++) {
				all &= sr[r].done;
				any |= !sr[r].done && (!sr[r].in_step || sr[r].sends_left == 0);
			}
			if (all)
				break;
			assert_true(any);
		}
		pick = rnd(&rng) % (n + nfl);
		if (pick < n) {
			move(s, sr, (uint32_t)pick, fl, &nfl, dt);
		} else {
			deliver(s, sr, &fl[pick - n]);
			fl[pick - n] = fl[--nfl];
		}
	}
	for (r = 0; r < n; r++) {
		uint64_t off, len;

		et_coll_expect(s, r, seed, dt, want);
		et_coll_checked_range(s, r, &off, &len);
		if (memcmp(sr[r].data + off, want + off, len)) {
			fprintf(stderr, "%s/%s n %u size %lu dt %d seed %lu: rank %u wrong\n",
				et_coll_kind_name(s->kind), et_coll_algo_name(s->algo), n,
				(unsigned long)s->size, dt, (unsigned long)seed, r);
			fail();
		}
		free(sr[r].data);
		free(sr[r].staging);
		free(sr[r].arrived);
	}
	free(fl);
	free(sr);
	free(want);
}

/* ---- tests ---- */

static void
test_names(void **state)
{
	enum et_coll_kind k;
	enum et_coll_algo a;

	(void)state;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(et_coll_parse_kind(et_coll_kind_name(i), &k), 0);
		assert_int_equal(k, i);
	}
	for (int i = 0; i < ET_ALGO_COUNT; i++) {
		assert_int_equal(et_coll_parse_algo(et_coll_algo_name(i), &a), 0);
		assert_int_equal(a, i);
	}
	assert_string_equal(et_coll_algo_name(ET_ALGO_RD_FAR), "rd-far");
	assert_string_equal(et_coll_algo_name(ET_ALGO_COUNT), "?");
	assert_string_equal(et_coll_kind_name(ET_COLL_REDUCESCATTER), "reducescatter");
	assert_string_equal(et_coll_algo_name(ET_ALGO_DBT), "dbt");
	assert_int_equal(et_coll_parse_kind("broadcast", &k), -EINVAL);
	assert_int_equal(et_coll_parse_kind("", &k), -EINVAL);
	assert_int_equal(et_coll_parse_algo("tree", &a), -EINVAL);
	assert_int_equal(et_coll_parse_algo("RD", &a), -EINVAL);
}

static void
expect_error(enum et_coll_kind kind, enum et_coll_algo algo, uint32_t n, uint64_t size,
	     const char *want)
{
	struct et_coll_sched s;
	const char *why = NULL;

	memset(&s, 0xff, sizeof(s));
	assert_int_equal(et_coll_build(&s, kind, algo, n, size, 0, &why), -EINVAL);
	assert_non_null(why);
	assert_non_null(strstr(why, want));
	assert_null(s.rank);
	et_coll_free(&s);
}

static void
test_errors(void **state)
{
	(void)state;
	expect_error(ET_COLL_ALLREDUCE, ET_ALGO_RD, 3, 48, "power-of-two");
	expect_error(ET_COLL_ALLGATHER, ET_ALGO_RD, 6, 48, "power-of-two");
	expect_error(ET_COLL_REDUCESCATTER, ET_ALGO_RD, 12, 48, "power-of-two");
	expect_error(ET_COLL_ALLTOALL, ET_ALGO_RD, 4, 64, "alltoall");
	expect_error(ET_COLL_ALLTOALL, ET_ALGO_RING, 4, 64, "alltoall");
	expect_error(ET_COLL_ALLTOALL, ET_ALGO_DBT, 4, 64, "alltoall");
	expect_error(ET_COLL_ALLGATHER, ET_ALGO_DBT, 4, 64, "dbt");
	expect_error(ET_COLL_REDUCESCATTER, ET_ALGO_DBT, 4, 64, "dbt");
	expect_error(ET_COLL_ALLGATHER, ET_ALGO_RD_FAR, 4, 64, "rd-far");
	expect_error(ET_COLL_ALLREDUCE, ET_ALGO_RD_FAR, 6, 48, "power-of-two");
	expect_error(ET_COLL_ALLREDUCE, ET_ALGO_COUNT, 4, 64, "unknown");
	expect_error(ET_COLL_ALLREDUCE, ET_ALGO_RD, 4, 12, "multiple of 4*nranks");
	expect_error(ET_COLL_ALLREDUCE, ET_ALGO_A2A, 4, 20, "multiple");
	expect_error(ET_COLL_ALLREDUCE, ET_ALGO_RING, 3, 65536, "multiple");
	expect_error(ET_COLL_ALLREDUCE, ET_ALGO_DBT, 5, 65536, "multiple");
	expect_error(ET_COLL_ALLTOALL, ET_ALGO_A2A, 1, 6, "multiple");
	expect_error(ET_COLL_ALLREDUCE, ET_ALGO_A2A, 0, 64, "rank");
	expect_error((enum et_coll_kind)7, ET_ALGO_A2A, 4, 64, "unknown");
	expect_error(ET_COLL_ALLREDUCE, (enum et_coll_algo)9, 4, 64, "unknown");
	/* a chunk of one element on a big vector: refused, not gigabytes */
	{
		struct et_coll_sched s;
		const char *why = NULL;

		assert_int_equal(et_coll_build(&s, ET_COLL_ALLREDUCE, ET_ALGO_DBT, 64,
					       64ull << 20, 4, &why), -EINVAL);
		assert_non_null(strstr(why, "chunk"));
	}
}

static void
test_one_rank_is_trivial(void **state)
{
	uint8_t data[64], want[64];

	(void)state;
	for (uint32_t c = 0; c < NCOMBOS; c++) {
		struct et_coll_sched s;

		build(&s, combos[c].kind, combos[c].algo, 1, sizeof(data), 0);
		assert_int_equal(s.rank[0].nsteps, 0);
		assert_int_equal(s.rank[0].nsends + s.rank[0].nrecvs, 0);
		assert_true(s.staging_bytes == 0);
		et_coll_fill(&s, 0, 3, ET_DT_INT32, data);
		et_coll_expect(&s, 0, 3, ET_DT_INT32, want);
		assert_memory_equal(data, want, sizeof(data));
		et_coll_free(&s);
	}
}

static void
test_apply(void **state)
{
	uint8_t data[1 + 16], staging[3 + 16];
	uint32_t u[4] = {0x7fffffffu, 1, 0xffffffffu, 5}, v[4] = {1, 2, 1, 0xfffffffbu}, w[4];
	float f[4] = {1.5f, -2, 0, 1e6f}, g[4] = {0.25f, 2, -3, 1}, h[4];
	/* offsets 1 and 3: data and staging need not be aligned */
	struct et_coll_recv rv = {.src = 0, .staging_off = 3, .data_off = 1, .len = 12, .reduce = 1};

	(void)state;
	memcpy(data + 1, u, 16);
	memcpy(staging + 3, v, 16);
	et_coll_apply(&rv, data, staging, ET_DT_INT32);
	memcpy(w, data + 1, 16);
	assert_int_equal(w[0], 0x80000000u);	/* int32 sums wrap */
	assert_int_equal(w[1], 3);
	assert_int_equal(w[2], 0);
	assert_int_equal(w[3], 5);		/* past len: untouched */
	memcpy(data + 1, f, 16);
	memcpy(staging + 3, g, 16);
	rv.len = 16;
	et_coll_apply(&rv, data, staging, ET_DT_FLOAT32);
	memcpy(h, data + 1, 16);
	for (int i = 0; i < 4; i++)
		assert_true(h[i] == f[i] + g[i]);
	rv.reduce = 0;
	rv.len = 8;
	et_coll_apply(&rv, data, staging, ET_DT_FLOAT32);
	assert_memory_equal(data + 1, staging + 3, 8);
	memcpy(h, data + 1, 16);
	assert_true(h[2] == -3 && h[3] == 1e6f + 1);
}

static void
test_fill_and_expect(void **state)
{
	struct et_coll_sched s;
	uint32_t n = 4, size = 4 * 4 * 64;
	uint8_t *a = malloc(size), *b = malloc(size);
	uint64_t off, len;
	float x;

	(void)state;
	build(&s, ET_COLL_REDUCESCATTER, ET_ALGO_RING, n, size, 0);
	/* distinct per rank and per seed, same for the same both */
	et_coll_fill(&s, 0, 1, ET_DT_INT32, a);
	et_coll_fill(&s, 1, 1, ET_DT_INT32, b);
	assert_memory_not_equal(a, b, size);
	et_coll_fill(&s, 0, 2, ET_DT_INT32, b);
	assert_memory_not_equal(a, b, size);
	et_coll_fill(&s, 0, 1, ET_DT_INT32, b);
	assert_memory_equal(a, b, size);
	/* float32: small integers, not all alike */
	et_coll_fill(&s, 2, 9, ET_DT_FLOAT32, a);
	et_coll_fill(&s, 3, 9, ET_DT_FLOAT32, b);
	assert_memory_not_equal(a, b, size);
	for (uint32_t i = 0; i < size / 4; i++) {
		memcpy(&x, a + 4 * i, 4);
		assert_true(x == (float)(int)x && x >= -256 && x <= 255);
	}
	/* reduce-scatter defines one chunk per rank */
	et_coll_checked_range(&s, 2, &off, &len);
	assert_true(off == 2 * size / n && len == size / n);
	et_coll_expect(&s, 2, 9, ET_DT_INT32, a);
	for (uint32_t i = 0; i < size; i++)
		if (i < off || i >= off + len)
			assert_int_equal(a[i], 0);
	et_coll_free(&s);
	build(&s, ET_COLL_ALLGATHER, ET_ALGO_A2A, n, size, 0);
	et_coll_checked_range(&s, 2, &off, &len);
	assert_true(off == 0 && len == size);
	et_coll_free(&s);
	free(a);
	free(b);
}

/* Bytes a rank sends: the bandwidth-optimal 2 (N - 1) / N x size for an
 * all-reduce (a2a, rd, ring), half that for its halves and all-to-all. */
static void
test_bytes_sent(void **state)
{
	(void)state;
	for (uint32_t ni = 0; ni < NRANKS; ni++)
		for (uint32_t c = 0; c < NCOMBOS; c++) {
			uint32_t n = ranks[ni];
			uint64_t size = 4ull * n * 60, want = size / n * (n - 1), all = 0;
			struct et_coll_sched s;

			if (is_rd(combos[c].algo) && !pow2(n))
				continue;
			build(&s, combos[c].kind, combos[c].algo, n, size, 0);
			for (uint32_t r = 0; r < n; r++) {
				uint64_t b = et_coll_bytes_sent(&s, r);

				all += b;
				if (combos[c].algo == ET_ALGO_DBT)
					assert_true(b <= 2 * size + 8);
				else if (combos[c].kind == ET_COLL_ALLREDUCE)
					assert_true(b == 2 * want);
				else
					assert_true(b == want);
			}
			/* dbt: every half goes up and down N - 1 edges */
			if (combos[c].algo == ET_ALGO_DBT)
				assert_true(all == 2 * (uint64_t)(n - 1) * size);
			et_coll_free(&s);
		}
}

/* Steps: a2a 1 (all-reduce 2), rd log N per half, ring N - 1 per half. */
static void
test_step_counts(void **state)
{
	(void)state;
	for (uint32_t ni = 1; ni < NRANKS; ni++)
		for (uint32_t c = 0; c < NCOMBOS; c++) {
			uint32_t n = ranks[ni], halves, want;
			struct et_coll_sched s;

			if (combos[c].algo == ET_ALGO_DBT ||
			    (is_rd(combos[c].algo) && !pow2(n)))
				continue;
			halves = combos[c].kind == ET_COLL_ALLREDUCE ? 2 : 1;
			want = combos[c].algo == ET_ALGO_A2A ? halves :
			       is_rd(combos[c].algo) ? halves * et_ilog2(n) : halves * (n - 1);
			build(&s, combos[c].kind, combos[c].algo, n, 4ull * n * 8, 0);
			for (uint32_t r = 0; r < n; r++)
				assert_int_equal(s.rank[r].nsteps, want);
			et_coll_free(&s);
		}
}

/* rd's allreduce sends half the vector to the nearest partner first and
 * halves it as the distance doubles (MPICH's and Astra-Sim's order), then
 * mirrors it; rd-far starts with the farthest partner. */
static void
test_rd_order(void **state)
{
	const uint32_t n = 16;
	const uint64_t size = 4ull * n * 64;
	struct et_coll_sched s;

	(void)state;
	for (int far = 0; far <= 1; far++) {
		build(&s, ET_COLL_ALLREDUCE, far ? ET_ALGO_RD_FAR : ET_ALGO_RD, n, size, 0);
		for (uint32_t r = 0; r < n; r++) {
			const struct et_coll_rank *k = &s.rank[r];

			assert_int_equal(k->nsteps, 8);
			for (uint32_t st = 0; st < 8; st++) {
				/* the halving's distance and length, mirrored by the doubling */
				uint32_t h = st < 4 ? st : 7 - st;
				uint32_t dist = far ? n >> (h + 1) : 1u << h;
				const struct et_coll_send *x = &k->sends[k->steps[st].first_send];

				assert_int_equal(k->steps[st].nsend, 1);
				assert_int_equal(x->dst, r ^ dist);
				assert_true(x->len == size >> (h + 1));
			}
		}
		et_coll_free(&s);
	}
}

/* Every supported kind x algo, N and size, both dtypes, many orders. */
static void
test_schedules_execute(void **state)
{
	uint64_t rng = 0x1234567u;
	unsigned long runs = 0;

	(void)state;
	for (uint32_t ni = 0; ni < NRANKS; ni++)
		for (uint32_t c = 0; c < NCOMBOS; c++) {
			uint32_t n = ranks[ni];
			uint64_t sizes[3] = {4ull * n, 4ull * n * 7, 65536 - 65536 % (4ull * n)};

			if (is_rd(combos[c].algo) && !pow2(n))
				continue;
			for (int z = 0; z < 3; z++) {
				struct et_coll_sched s;
				int seeds = z == 2 ? 2 : 12;

				build(&s, combos[c].kind, combos[c].algo, n, sizes[z], 0);
				check_shape(&s);
				for (int k = 0; k < seeds; k++, runs += 2) {
					run(&s, ET_DT_INT32, rnd(&rng), rnd(&rng) | 1);
					run(&s, ET_DT_FLOAT32, rnd(&rng), rnd(&rng) | 1);
				}
				et_coll_free(&s);
			}
		}
	printf("  %lu executions verified\n", runs);
}

/* Double binary tree: every rank interior (sums children) in at most one
 * tree, real pipelining (steps ~ chunks + 2 depth, not chunks x depth), odd
 * chunk sizes and single-element chunks execute correctly. */
static void
test_dbt(void **state)
{
	static const uint64_t chunks[] = {0, 4, 10, 12, 100, 1024, 1u << 20};
	uint64_t rng = 99;

	(void)state;
	for (uint32_t n = 1; n <= 40; n++)
		for (uint32_t ci = 0; ci < sizeof(chunks) / sizeof(chunks[0]); ci++) {
			uint64_t size = 4ull * n * 96, half1 = size - size / 8 * 4;
			uint64_t cb = chunks[ci] ? chunks[ci] / 4 * 4 : size / 8 / 4 * 4;
			uint64_t nch = (half1 + cb - 1) / cb;
			uint32_t depth = et_ilog2(n), most = 0;
			struct et_coll_sched s;

			build(&s, ET_COLL_ALLREDUCE, ET_ALGO_DBT, n, size, chunks[ci]);
			check_shape(&s);
			for (uint32_t r = 0; r < n; r++) {
				const struct et_coll_rank *k = &s.rank[r];
				bool interior[2] = {false, false};

				for (uint32_t i = 0; i < k->nrecvs; i++)
					if (k->recvs[i].reduce)
						interior[k->recvs[i].data_off >= size / 8 * 4] = true;
				assert_false(interior[0] && interior[1]);
				if (k->nsteps > most)
					most = k->nsteps;
			}
			if (n > 1) {
				assert_true(most <= nch + 2 * depth - 1);
				assert_true(most >= nch);
			}
			if (n >= 8 && nch >= 8)
				assert_true(most < nch * depth);
			if (n <= 16 && (n <= 8 || ci < 3))
				for (int k = 0; k < 3; k++) {
					run(&s, ET_DT_INT32, rnd(&rng), rnd(&rng) | 1);
					run(&s, ET_DT_FLOAT32, rnd(&rng), rnd(&rng) | 1);
				}
			et_coll_free(&s);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_one_rank_is_trivial),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_fill_and_expect),
		cmocka_unit_test(test_bytes_sent),
		cmocka_unit_test(test_step_counts),
		cmocka_unit_test(test_rd_order),
		cmocka_unit_test(test_schedules_execute),
		cmocka_unit_test(test_dbt),
	};

	return cmocka_run_group_tests_name("coll", tests, NULL, NULL);
}
