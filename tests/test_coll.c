/* SPDX-License-Identifier: BSD-3-Clause
 * Collective schedules: shape (every send meets its recv, staging ranges
 * apart, steps tile the arrays), bytes per rank, the one judgement
 * (et_coll_check: what is refused and why), and every supported kind x
 * algorithm x dtype x op, on any count (uneven chunks, 0) and any rank
 * count (rd folding ranks in and out), run by a reference executor that
 * follows the step rule with ranks and deliveries in a random order, its
 * result checked byte for byte.  ET_COLL_LONG=1 (the `long` suite) runs
 * more counts and seeds.
 */
#include <errno.h>
#include <math.h>
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

static const uint32_t ranks[] = {1, 2, 3, 4, 5, 6, 7, 8, 15, 16};
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

static bool long_run;

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

static struct et_coll_spec
spec(enum et_coll_kind kind, enum et_coll_algo algo, uint32_t n, uint64_t count,
     enum et_coll_dtype dt, enum et_coll_op op, uint64_t chunk)
{
	return (struct et_coll_spec){kind, algo, n, count, dt, op, chunk};
}

static void
build_spec(struct et_coll_sched *s, const struct et_coll_spec *c)
{
	const char *why = NULL;

	if (et_coll_build(s, c, &why)) {
		fprintf(stderr, "%s/%s n %u count %lu %s %s: %s\n", et_coll_kind_name(c->kind),
			et_coll_algo_name(c->algo), c->nranks, (unsigned long)c->count,
			et_coll_dtype_name(c->dtype), et_coll_op_name(c->op), why);
		fail();
	}
}

/* int32 sum by default: the elements of 4 bytes the older tests count in */
static void
build(struct et_coll_sched *s, enum et_coll_kind kind, enum et_coll_algo algo, uint32_t n,
      uint64_t size, uint64_t chunk)
{
	struct et_coll_spec c = spec(kind, algo, n, size / 4, ET_DT_INT32, ET_OP_SUM, chunk);

	build_spec(s, &c);
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
	uint32_t n = s->nranks, r, i, es = s->dtype_size;
	uint32_t **hits = calloc(n, sizeof(*hits));

	assert_non_null(hits);
	assert_int_equal(s->dtype_size, et_coll_dtype_size(s->dtype));
	assert_true(s->size == s->count * s->dtype_size);
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
			assert_true(x->len > 0 && x->len % es == 0 && x->src_off % es == 0);
			assert_true(x->src_off + x->len <= s->size);
			hits[x->dst][x->recv]++;
			bytes += x->len;
		}
		assert_true(et_coll_bytes_sent(s, r) == bytes);
		for (i = 0; i < k->nrecvs; i++) {
			const struct et_coll_recv *v = &k->recvs[i];

			assert_true(v->data_off % es == 0 && v->data_off + v->len <= s->size);
			assert_true(v->staging_off % es == 0);
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
     uint32_t *nfl)
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
		et_coll_apply(s, &k->recvs[st->first_recv + i], m->data, m->staging);
	m->in_step = false;
	m->done = ++m->step == k->nsteps;
	if (m->done)
		et_coll_finish(s, r, m->data);
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
run(const struct et_coll_sched *s, uint64_t seed, uint64_t rng)
{
	uint32_t n = s->nranks, nfl = 0, r, total = 0;
	struct sim_rank *sr = calloc(n, sizeof(*sr));
	const uint8_t **data = calloc(n, sizeof(*data));
	uint64_t *wrong = calloc(n, sizeof(*wrong));
	struct flight *fl;
	uint8_t *want = malloc(s->size + 1);

	assert_non_null(sr);
	assert_non_null(data);
	assert_non_null(wrong);
	assert_non_null(want);
	for (r = 0; r < n; r++) {
		total += s->rank[r].nsends;
		assert_non_null(sr[r].data = malloc(s->size + 1));
		assert_non_null(sr[r].staging = malloc(s->rank[r].staging_bytes + 1));
		assert_non_null(sr[r].arrived = calloc(s->rank[r].nrecvs + 1, 1));
		memset(sr[r].staging, 0xa5, s->rank[r].staging_bytes);
		et_coll_fill(s, r, seed, sr[r].data);
		sr[r].done = s->rank[r].nsteps == 0;
		if (sr[r].done)
			et_coll_finish(s, r, sr[r].data);
		data[r] = sr[r].data;
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
			move(s, sr, (uint32_t)pick, fl, &nfl);
		} else {
			deliver(s, sr, &fl[pick - n]);
			fl[pick - n] = fl[--nfl];
		}
	}
	assert_int_equal(et_coll_wrong_all(s, seed, data, wrong), 0);
	for (r = 0; r < n; r++) {
		uint64_t off, len, one = 1;

		et_coll_expect(s, r, seed, want);
		et_coll_checked_range(s, r, &off, &len);
		assert_int_equal(et_coll_wrong(s, r, seed, sr[r].data, &one), 0);
		if (memcmp(sr[r].data + off, want + off, len) || wrong[r] || one) {
			fprintf(stderr, "%s/%s n %u count %lu %s %s seed %lu: rank %u wrong "
				"(%lu elements)\n", et_coll_kind_name(s->kind),
				et_coll_algo_name(s->algo), n, (unsigned long)s->count,
				et_coll_dtype_name(s->dtype), et_coll_op_name(s->op),
				(unsigned long)seed, r, (unsigned long)wrong[r]);
			fail();
		}
		free(sr[r].data);
		free(sr[r].staging);
		free(sr[r].arrived);
	}
	free(fl);
	free(sr);
	free(data);
	free(wrong);
	free(want);
}

/* ---- tests ---- */

static void
test_names(void **state)
{
	enum et_coll_kind k;
	enum et_coll_algo a;
	enum et_coll_dtype d;
	enum et_coll_op o;

	(void)state;
	for (int i = 0; i < ET_COLL_KINDS; i++) {
		assert_int_equal(et_coll_parse_kind(et_coll_kind_name(i), &k), 0);
		assert_int_equal(k, i);
	}
	for (int i = 0; i < ET_ALGO_COUNT; i++) {
		assert_int_equal(et_coll_parse_algo(et_coll_algo_name(i), &a), 0);
		assert_int_equal(a, i);
	}
	for (int i = 0; i < ET_DT_COUNT; i++) {
		assert_int_equal(et_coll_parse_dtype(et_coll_dtype_name(i), &d), 0);
		assert_int_equal(d, i);
	}
	for (int i = 0; i < ET_OP_COUNT; i++) {
		assert_int_equal(et_coll_parse_op(et_coll_op_name(i), &o), 0);
		assert_int_equal(o, i);
	}
	assert_string_equal(et_coll_algo_name(ET_ALGO_RD_FAR), "rd-far");
	assert_string_equal(et_coll_algo_name(ET_ALGO_COUNT), "?");
	assert_string_equal(et_coll_kind_name(ET_COLL_REDUCESCATTER), "reducescatter");
	assert_string_equal(et_coll_algo_name(ET_ALGO_DBT), "dbt");
	/* nccl-tests' names, and its other spellings */
	assert_string_equal(et_coll_dtype_name(ET_DT_HALF), "half");
	assert_string_equal(et_coll_dtype_name(ET_DT_BFLOAT16), "bfloat16");
	assert_string_equal(et_coll_dtype_name(ET_DT_COUNT), "?");
	assert_int_equal(et_coll_parse_dtype("float16", &d), 0);
	assert_int_equal(d, ET_DT_HALF);
	assert_int_equal(et_coll_parse_dtype("float64", &d), 0);
	assert_int_equal(d, ET_DT_DOUBLE);
	assert_int_equal(et_coll_parse_dtype("char", &d), 0);
	assert_int_equal(d, ET_DT_INT8);
	assert_int_equal(et_coll_dtype_size(ET_DT_UINT64), 8);
	assert_int_equal(et_coll_dtype_size(ET_DT_BFLOAT16), 2);
	assert_int_equal(et_coll_dtype_size(ET_DT_COUNT), 0);
	assert_int_equal(et_coll_parse_kind("broadcast", &k), -EINVAL);
	assert_int_equal(et_coll_parse_kind("", &k), -EINVAL);
	assert_int_equal(et_coll_parse_algo("tree", &a), -EINVAL);
	assert_int_equal(et_coll_parse_algo("RD", &a), -EINVAL);
	assert_int_equal(et_coll_parse_dtype("int16", &d), -EINVAL);
	assert_int_equal(et_coll_parse_op("mulsum", &o), -EINVAL);
}

static void
expect_refused(struct et_coll_spec c, const char *want)
{
	struct et_coll_sched s;
	const char *why = NULL;

	assert_int_equal(et_coll_check(&c, &why), -EINVAL);
	assert_non_null(why);
	if (!strstr(why, want))
		fail_msg("'%s' lacks '%s'", why, want);
	memset(&s, 0xff, sizeof(s));
	why = NULL;
	assert_int_equal(et_coll_build(&s, &c, &why), -EINVAL);
	assert_non_null(strstr(why, want));
	assert_null(s.rank);
	et_coll_free(&s);
}

/* What cannot run, refused with why; what could not before (any count, rd
 * on any rank count, count 0, one rank) can. */
static void
test_check(void **state)
{
	const enum et_coll_kind K[] = {ET_COLL_ALLREDUCE, ET_COLL_ALLGATHER, ET_COLL_REDUCESCATTER,
				       ET_COLL_ALLTOALL};
	const char *why = NULL;

	(void)state;
	expect_refused(spec(ET_COLL_ALLTOALL, ET_ALGO_RD, 4, 64, ET_DT_FLOAT, 0, 0), "alltoall");
	expect_refused(spec(ET_COLL_ALLTOALL, ET_ALGO_RING, 4, 64, ET_DT_FLOAT, 0, 0), "a2a");
	expect_refused(spec(ET_COLL_ALLTOALL, ET_ALGO_DBT, 6, 64, ET_DT_FLOAT, 0, 0), "alltoall");
	expect_refused(spec(ET_COLL_ALLTOALL, ET_ALGO_RD_FAR, 6, 64, ET_DT_FLOAT, 0, 0), "alltoall");
	expect_refused(spec(ET_COLL_ALLGATHER, ET_ALGO_DBT, 4, 64, ET_DT_FLOAT, 0, 0), "dbt");
	expect_refused(spec(ET_COLL_REDUCESCATTER, ET_ALGO_DBT, 4, 64, ET_DT_INT8, 0, 0), "dbt");
	expect_refused(spec(ET_COLL_ALLGATHER, ET_ALGO_RD_FAR, 4, 64, ET_DT_FLOAT, 0, 0), "rd-far");
	expect_refused(spec(ET_COLL_REDUCESCATTER, ET_ALGO_RD_FAR, 5, 64, ET_DT_FLOAT, 0, 0),
		       "rd-far is an allreduce algorithm only");
	expect_refused(spec(ET_COLL_ALLREDUCE, ET_ALGO_COUNT, 4, 64, ET_DT_FLOAT, 0, 0), "unknown");
	expect_refused(spec(ET_COLL_ALLREDUCE, ET_ALGO_A2A, 0, 64, ET_DT_FLOAT, 0, 0), "rank");
	expect_refused(spec((enum et_coll_kind)7, ET_ALGO_A2A, 4, 64, ET_DT_FLOAT, 0, 0), "unknown");
	expect_refused(spec(ET_COLL_ALLREDUCE, (enum et_coll_algo)9, 4, 64, ET_DT_FLOAT, 0, 0),
		       "unknown");
	expect_refused(spec(ET_COLL_ALLREDUCE, ET_ALGO_A2A, 4, 64, ET_DT_COUNT, 0, 0), "data type");
	expect_refused(spec(ET_COLL_ALLREDUCE, ET_ALGO_A2A, 4, 64, ET_DT_FLOAT, ET_OP_COUNT, 0),
		       "operation");
	/* a WRITE carries at most 2^32 - 1 bytes */
	expect_refused(spec(ET_COLL_ALLREDUCE, ET_ALGO_A2A, 4, 1ull << 30, ET_DT_FLOAT, 0, 0),
		       "4 GiB");
	expect_refused(spec(ET_COLL_ALLGATHER, ET_ALGO_RING, 4, 1ull << 32, ET_DT_INT8, 0, 0),
		       "4 GiB");
	/* a chunk of one element on a big vector: refused, not gigabytes */
	expect_refused(spec(ET_COLL_ALLREDUCE, ET_ALGO_DBT, 64, 16ull << 20, ET_DT_FLOAT, 0, 4),
		       "chunk");
	{
		struct et_coll_spec c = spec(ET_COLL_ALLREDUCE, ET_ALGO_A2A, 4, (1ull << 30) - 1,
					     ET_DT_FLOAT, 0, 0);

		assert_int_equal(et_coll_check(&c, &why), 0);
		c = spec(ET_COLL_ALLREDUCE, ET_ALGO_A2A, 4, UINT32_MAX, ET_DT_UINT8, 0, 0);
		assert_int_equal(et_coll_check(&c, &why), 0);
	}
	/* every valid kind x algo takes any count on any rank count, 0 too */
	for (uint32_t n = 1; n <= 17; n++)
		for (uint32_t c = 0; c < NCOMBOS; c++)
			for (uint64_t count = 0; count < 40; count += 13) {
				struct et_coll_spec x = spec(combos[c].kind, combos[c].algo, n,
							     count, ET_DT_HALF, ET_OP_AVG, 0);

				assert_int_equal(et_coll_check(&x, &why), 0);
			}
	/* a2a serves all four; the others what the table says */
	for (int k = 0; k < 4; k++)
		for (int a = 0; a < ET_ALGO_COUNT; a++) {
			struct et_coll_spec x = spec(K[k], a, 6, 1000, ET_DT_FLOAT, 0, 0);
			bool ok = a == ET_ALGO_A2A ||
				  (K[k] != ET_COLL_ALLTOALL && (a == ET_ALGO_RD || a == ET_ALGO_RING)) ||
				  K[k] == ET_COLL_ALLREDUCE;

			assert_int_equal(et_coll_check(&x, &why) == 0, ok);
		}
}

/* One rank, or no elements: no steps, and the data is already the result. */
static void
test_trivial(void **state)
{
	uint8_t data[64], want[64];

	(void)state;
	for (uint32_t c = 0; c < NCOMBOS; c++)
		for (uint32_t ni = 0; ni < NRANKS; ni++) {
			struct et_coll_sched s;
			struct et_coll_spec x = spec(combos[c].kind, combos[c].algo, ranks[ni],
						     ranks[ni] == 1 ? 16 : 0, ET_DT_FLOAT,
						     ET_OP_AVG, 0);

			build_spec(&s, &x);
			for (uint32_t r = 0; r < s.nranks; r++) {
				assert_int_equal(s.rank[r].nsteps, 0);
				assert_int_equal(s.rank[r].nsends + s.rank[r].nrecvs, 0);
				et_coll_fill(&s, r, 3, data);
				et_coll_finish(&s, r, data);
				et_coll_expect(&s, r, 3, want);
				assert_memory_equal(data, want, s.size);
			}
			assert_true(s.staging_bytes == 0);
			et_coll_free(&s);
		}
}

/* Reduce one recv of 4 elements (at unaligned offsets) of dt by op: a op b. */
static void
apply4(enum et_coll_dtype dt, enum et_coll_op op, const void *a, const void *b, void *out)
{
	struct et_coll_spec c = spec(ET_COLL_ALLREDUCE, ET_ALGO_A2A, 2, 4, dt, op, 0);
	uint32_t es = et_coll_dtype_size(dt);
	uint8_t data[1 + 32], staging[3 + 32];
	struct et_coll_recv rv = {.src = 0, .staging_off = 3, .data_off = 1, .len = 3 * es,
				  .reduce = 1};
	struct et_coll_sched s;

	build_spec(&s, &c);
	memcpy(data + 1, a, 4 * es);
	memcpy(staging + 3, b, 4 * es);
	et_coll_apply(&s, &rv, data, staging);
	memcpy(out, data + 1, 4 * es);
	assert_memory_equal(data + 1 + 3 * es, (const uint8_t *)a + 3 * es, es); /* past len */
	et_coll_free(&s);
}

static uint16_t
bits16(float f, bool bf)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return bf ? (uint16_t)(u >> 16) : 0;
}

/* Each dtype's arithmetic: integers wrap and compare signed or not, half
 * and bfloat16 round to nearest even, avg divides once at the end. */
static void
test_apply(void **state)
{
	(void)state;
	{
		uint32_t a[4] = {0x7fffffffu, 1, 0xffffffffu, 5}, b[4] = {1, 2, 1, 0xfffffffbu}, w[4];

		apply4(ET_DT_INT32, ET_OP_SUM, a, b, w);
		assert_int_equal(w[0], 0x80000000u); /* wraps */
		assert_int_equal(w[1], 3);
		assert_int_equal(w[2], 0);
		apply4(ET_DT_INT32, ET_OP_MAX, a, b, w);
		assert_int_equal(w[0], 0x7fffffffu);
		assert_int_equal(w[2], 1); /* -1 < 1 signed */
		apply4(ET_DT_UINT32, ET_OP_MAX, a, b, w);
		assert_int_equal(w[2], 0xffffffffu); /* unsigned */
		apply4(ET_DT_UINT32, ET_OP_PROD, a, b, w);
		assert_int_equal(w[0], 0x7fffffffu);
		assert_int_equal(w[1], 2);
		assert_int_equal(w[2], 0xffffffffu);
		apply4(ET_DT_UINT32, ET_OP_AVG, a, b, w); /* a sum until the end */
		assert_int_equal(w[1], 3);
	}
	{
		int8_t a[4] = {100, -100, -128, 3}, b[4] = {100, -100, 1, 3}, w[4];

		apply4(ET_DT_INT8, ET_OP_SUM, a, b, w);
		assert_int_equal(w[0], -56);
		assert_int_equal(w[1], 56);
		assert_int_equal(w[2], -127);
		apply4(ET_DT_INT8, ET_OP_PROD, a, b, w);
		assert_int_equal(w[0], 16); /* 10000 mod 256 */
		apply4(ET_DT_INT8, ET_OP_MIN, a, b, w);
		assert_int_equal(w[2], -128);
		apply4(ET_DT_UINT8, ET_OP_MIN, a, b, w);
		assert_int_equal((uint8_t)w[2], 1);
	}
	{
		int64_t a[4] = {INT64_MAX, -7, 1ll << 40, 0}, b[4] = {1, 3, 1ll << 30, 0}, w[4];

		apply4(ET_DT_INT64, ET_OP_SUM, a, b, w);
		assert_true(w[0] == INT64_MIN && w[1] == -4);
		apply4(ET_DT_INT64, ET_OP_PROD, a, b, w);
		assert_true(w[1] == -21 && w[2] == 0); /* 2^70 wraps to 0 */
		apply4(ET_DT_UINT64, ET_OP_MIN, a, b, w);
		assert_true(w[0] == 1 && w[1] == 3);
	}
	{
		float a[4] = {1.5f, -2, 0, 1e6f}, b[4] = {0.25f, 2, -3, 1}, w[4];
		double c[4] = {1e300, 0.5, -1, 2}, d[4] = {1e300, 0.25, -1, 2}, x[4];

		apply4(ET_DT_FLOAT, ET_OP_SUM, a, b, w);
		assert_true(w[0] == 1.75f && w[1] == 0 && w[2] == -3 && w[3] == 1e6f);
		apply4(ET_DT_FLOAT, ET_OP_MIN, a, b, w);
		assert_true(w[0] == 0.25f && w[1] == -2 && w[2] == -3);
		apply4(ET_DT_DOUBLE, ET_OP_PROD, c, d, x);
		assert_true(isinf(x[0]) && x[1] == 0.125 && x[2] == 1);
	}
	/* half: 2048 + 1 is a tie, to the even 2048; 2048 + 3, to 2052 */
	{
		uint16_t a[4] = {0x6800, 0x6800, 0x3c00, 0x7bff}, b[4] = {0x3c00, 0x4200, 0xbc00, 0x7bff};
		uint16_t w[4];

		apply4(ET_DT_HALF, ET_OP_SUM, a, b, w);
		assert_int_equal(w[0], 0x6800);
		assert_int_equal(w[1], 0x6802);
		assert_int_equal(w[2], 0x0000);
		apply4(ET_DT_HALF, ET_OP_PROD, a, b, w);
		assert_int_equal(w[2], 0xbc00); /* 1 x -1 */
		apply4(ET_DT_HALF, ET_OP_MAX, a, b, w);
		assert_int_equal(w[1], 0x6800);
		assert_int_equal(w[2], 0x3c00);
	}
	/* bfloat16: 256 + 1 a tie, to 256; 256 + 3, to 260 */
	{
		uint16_t a[4] = {bits16(256, true), bits16(256, true), bits16(1.5f, true), 0};
		uint16_t b[4] = {bits16(1, true), bits16(3, true), bits16(0.25f, true), 0}, w[4];

		apply4(ET_DT_BFLOAT16, ET_OP_SUM, a, b, w);
		assert_int_equal(w[0], bits16(256, true));
		assert_int_equal(w[1], bits16(260, true));
		assert_int_equal(w[2], bits16(1.75f, true));
	}
	/* every half and bfloat16 but NaN survives the trip through float:
	 * max(x, x) = x */
	for (int bf = 0; bf <= 1; bf++)
		for (uint32_t v = 0; v < 65536; v += 4) {
			uint16_t a[4] = {(uint16_t)v, (uint16_t)(v + 1), (uint16_t)(v + 2),
					 (uint16_t)(v + 3)}, w[4];

			if (bf ? (v & 0x7f80) == 0x7f80 : (v & 0x7c00) == 0x7c00)
				continue; /* inf and NaN */
			apply4(bf ? ET_DT_BFLOAT16 : ET_DT_HALF, ET_OP_MAX, a, a, w);
			assert_memory_equal(w, a, 6); /* the fourth is past len */
		}
	/* avg: the sum divided by N once, at the end, on the checked range */
	{
		struct et_coll_spec c = spec(ET_COLL_REDUCESCATTER, ET_ALGO_A2A, 3, 7, ET_DT_INT32,
					     ET_OP_AVG, 0);
		int32_t v[7] = {9, 9, 9, -9, -10, 9, 9};
		struct et_coll_sched s;

		build_spec(&s, &c); /* chunks of 3, 2, 2 */
		et_coll_finish(&s, 1, (uint8_t *)v);
		assert_true(v[0] == 9 && v[2] == 9 && v[3] == -3 && v[4] == -3 && v[5] == 9);
		et_coll_free(&s);
	}
}

/* Inputs: distinct per rank and seed, the same for the same both; floats
 * small integers (or +-2^e for prod), integer products odd. */
static void
test_fill(void **state)
{
	uint64_t count = 64 * 9;

	(void)state;
	for (int dt = 0; dt < ET_DT_COUNT; dt++)
		for (int op = 0; op < ET_OP_COUNT; op++) {
			struct et_coll_spec c = spec(ET_COLL_ALLREDUCE, ET_ALGO_RING, 9, count, dt, op, 0);
			uint32_t es = et_coll_dtype_size(dt);
			uint8_t *a = malloc(count * 8), *b = malloc(count * 8);
			struct et_coll_sched s;

			build_spec(&s, &c);
			et_coll_fill(&s, 0, 1, a);
			et_coll_fill(&s, 1, 1, b);
			assert_memory_not_equal(a, b, s.size);
			et_coll_fill(&s, 0, 2, b);
			assert_memory_not_equal(a, b, s.size);
			et_coll_fill(&s, 0, 1, b);
			assert_memory_equal(a, b, s.size);
			for (uint64_t i = 0; i < count; i++) {
				double x = 0;

				if (dt == ET_DT_FLOAT) {
					float f;

					memcpy(&f, a + 4 * i, 4);
					x = f;
				} else if (dt == ET_DT_DOUBLE) {
					memcpy(&x, a + 8 * i, 8);
				} else if (dt < ET_DT_HALF) {
					if (op == ET_OP_PROD)
						assert_true(a[i * es] & 1);
					continue;
				} else {
					continue; /* half, bfloat16: test_schedules_execute */
				}
				if (op == ET_OP_PROD)
					assert_true(x == 0.5 || x == 1 || x == 2 || x == -0.5 ||
						    x == -1 || x == -2);
				else
					assert_true(x == floor(x) && x >= -256 && x <= 255);
			}
			et_coll_free(&s);
			free(a);
			free(b);
		}
}

/* Chunks: N near-equal parts, the first count % N one element longer;
 * reduce-scatter checks its chunk only; all-to-all's blocks: every rank
 * sends and receives count elements, its own block stays in place. */
static void
test_chunks(void **state)
{
	(void)state;
	for (uint32_t n = 1; n <= 17; n++)
		for (uint64_t count = 0; count < 3 * n + 2; count++) {
			struct et_coll_spec c = spec(ET_COLL_ALLTOALL, ET_ALGO_A2A, n, count,
						     ET_DT_HALF, 0, 0);
			struct et_coll_sched s;
			uint64_t at = 0, off, len;

			build_spec(&s, &c);
			for (uint32_t j = 0; j < n; j++) {
				et_coll_chunk(&s, j, &off, &len);
				assert_true(off == at);
				assert_true(len == 2 * (count / n + (j < count % n)));
				at += len;
			}
			assert_true(at == s.size);
			for (uint32_t r = 0; r < n; r++) {
				const struct et_coll_rank *k = &s.rank[r];
				uint64_t got = 0;

				for (uint32_t i = 0; i < k->nrecvs; i++)
					got += k->recvs[i].len;
				et_coll_chunk(&s, (2 * r) % n, &off, &len);
				/* what it does not keep it sends, what it has not it gets */
				assert_true(et_coll_bytes_sent(&s, r) == s.size - len);
				assert_true(got == s.size - len);
			}
			et_coll_free(&s);
			c.kind = ET_COLL_REDUCESCATTER;
			build_spec(&s, &c);
			for (uint32_t r = 0; r < n; r++) {
				uint64_t coff, clen;

				et_coll_chunk(&s, r, &off, &len);
				et_coll_checked_range(&s, r, &coff, &clen);
				assert_true(off == coff && len == clen);
			}
			et_coll_free(&s);
		}
}

/* Bytes a rank sends: the bandwidth-optimal 2 (N - 1) / N x size for an
 * all-reduce (a2a, rd, ring), half that for its halves and all-to-all,
 * when N divides the count; in all, whatever the count, for a2a and ring;
 * rd's folded ranks send their vector in and get it back. */
static void
test_bytes_sent(void **state)
{
	(void)state;
	for (uint32_t ni = 0; ni < NRANKS; ni++)
		for (uint32_t c = 0; c < NCOMBOS; c++)
			for (uint64_t extra = 0; extra < 2; extra++) {
				uint32_t n = ranks[ni], p2 = 1u << et_ilog2(n);
				uint64_t size = 4ull * (n * 60 + extra * (n / 2)), all = 0;
				uint64_t want = size / n * (n - 1);
				bool even = extra == 0 || n == 1;
				struct et_coll_sched s;

				build(&s, combos[c].kind, combos[c].algo, n, size, 0);
				for (uint32_t r = 0; r < n; r++) {
					uint64_t b = et_coll_bytes_sent(&s, r);

					all += b;
					if (combos[c].algo == ET_ALGO_DBT)
						assert_true(b <= 2 * size + 8);
					else if (is_rd(combos[c].algo) && r < 2 * (n - p2))
						assert_true(b > 0);
					else if (!even || (is_rd(combos[c].algo) && !pow2(n)))
						continue;
					else if (combos[c].kind == ET_COLL_ALLREDUCE)
						assert_true(b == 2 * want);
					else
						assert_true(b == want);
				}
				/* dbt: every half goes up and down N - 1 edges */
				if (combos[c].algo == ET_ALGO_DBT)
					assert_true(all == 2 * (uint64_t)(n - 1) * size);
				else if (!is_rd(combos[c].algo) && combos[c].kind != ET_COLL_ALLTOALL)
					assert_true(all == (n - 1) * size *
						    (combos[c].kind == ET_COLL_ALLREDUCE ? 2 : 1));
				et_coll_free(&s);
			}
}

/* Steps: a2a 1 (all-reduce 2), rd log P per half (P: the largest power of
 * two <= N), 2 more for the ranks folded in and their partners, 2 in all
 * for the folded ones; ring N - 1 per half. */
static void
test_step_counts(void **state)
{
	(void)state;
	for (uint32_t ni = 1; ni < NRANKS; ni++)
		for (uint32_t c = 0; c < NCOMBOS; c++) {
			uint32_t n = ranks[ni], p2 = 1u << et_ilog2(n), halves, want;
			struct et_coll_sched s;

			if (combos[c].algo == ET_ALGO_DBT)
				continue;
			halves = combos[c].kind == ET_COLL_ALLREDUCE ? 2 : 1;
			want = combos[c].algo == ET_ALGO_A2A ? halves :
			       is_rd(combos[c].algo) ? halves * et_ilog2(p2) : halves * (n - 1);
			build(&s, combos[c].kind, combos[c].algo, n, 4ull * n * 8 + 4, 0);
			for (uint32_t r = 0; r < n; r++) {
				uint32_t w = want;

				if (is_rd(combos[c].algo) && r < 2 * (n - p2))
					w = r % 2 ? want + 2 : 2;
				assert_int_equal(s.rank[r].nsteps, w);
			}
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

/* rd on 6 ranks (MPICH's fold): ranks 0 and 2 hand their vector to 1 and
 * 3 first and get the result from them last; 4 and 5 never meet them. */
static void
test_rd_fold(void **state)
{
	const uint64_t size = 4 * 1001;
	struct et_coll_sched s;

	(void)state;
	build(&s, ET_COLL_ALLREDUCE, ET_ALGO_RD, 6, size, 0);
	for (uint32_t r = 0; r < 4; r += 2) {
		const struct et_coll_rank *k = &s.rank[r];

		assert_int_equal(k->nsteps, 2);
		assert_int_equal(k->nsends, 1);
		assert_int_equal(k->sends[0].dst, r + 1);
		assert_true(k->sends[0].len == size && k->recvs[0].reduce == 0);
		assert_int_equal(s.rank[r + 1].recvs[0].src, r);
		assert_true(s.rank[r + 1].recvs[0].reduce == 1);
	}
	for (uint32_t r = 4; r < 6; r++)
		for (uint32_t i = 0; i < s.rank[r].nsends; i++)
			assert_true(s.rank[r].sends[i].dst % 2 == 1 || s.rank[r].sends[i].dst >= 4);
	et_coll_free(&s);
}

/* Every supported kind x algo on every rank count, counts of every shape
 * (0, 1, fewer than the ranks, a multiple, uneven), every dtype, and every
 * op where it reduces, in random orders. */
static void
test_schedules_execute(void **state)
{
	uint64_t rng = 0x1234567u;
	unsigned long runs = 0;

	(void)state;
	for (uint32_t ni = 0; ni < NRANKS; ni++)
		for (uint32_t c = 0; c < NCOMBOS; c++) {
			uint32_t n = ranks[ni];
			uint64_t counts[] = {0, 1, n - 1, 3ull * n, 7ull * n + 3, 1000 + n / 2,
					     16411};
			uint32_t nc = long_run ? 7 : 5;

			for (uint32_t z = 0; z < nc; z++)
				for (int dt = 0; dt < ET_DT_COUNT; dt++)
					for (int op = 0; op < ET_OP_COUNT; op++) {
						struct et_coll_spec x = spec(combos[c].kind,
									     combos[c].algo, n,
									     counts[z], dt, op, 0);
						struct et_coll_sched s;
						int seeds = long_run ? 3 : 1;

						if (!et_coll_reduces(x.kind) && op > 0)
							break; /* moving data: no op */
						build_spec(&s, &x);
						check_shape(&s);
						for (int k = 0; k < seeds; k++, runs++)
							run(&s, rnd(&rng), rnd(&rng) | 1);
						et_coll_free(&s);
					}
		}
	printf("  %lu executions verified\n", runs);
}

/* Double binary tree: every rank interior (reduces its children) in at
 * most one tree, real pipelining (steps ~ chunks + 2 depth, not chunks x
 * depth), odd chunk sizes and single-element chunks execute correctly. */
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
				for (int k = 0; k < 3; k++)
					run(&s, rnd(&rng), rnd(&rng) | 1);
			et_coll_free(&s);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_trivial),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_chunks),
		cmocka_unit_test(test_bytes_sent),
		cmocka_unit_test(test_step_counts),
		cmocka_unit_test(test_rd_order),
		cmocka_unit_test(test_rd_fold),
		cmocka_unit_test(test_schedules_execute),
		cmocka_unit_test(test_dbt),
	};
	const char *l = getenv("ET_COLL_LONG");

	long_run = l && strcmp(l, "0") != 0;
	return cmocka_run_group_tests_name("coll", tests, NULL, NULL);
}
