/* SPDX-License-Identifier: BSD-3-Clause
 * A collective's bytes: each received piece applied (copied or reduced,
 * element by element), the average's division, and the reference data a
 * rank starts with and must end with, checked element by element.  The
 * runtime and the reference reduce with the same code.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/et_bits.h"
#include "coll/et_coll.h"
#include "coll/et_coll_priv.h"

/* ---- reduction: element by element, the same code for the runtime and
 * the reference ---- */

/* half and bfloat16 to and from float, rounding to nearest even */

static float
half_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;

	if (e == 0x1f)
		return et_bits_f32(sign | 0x7f800000u | m << 13);
	if (e == 0) /* zero or subnormal: m x 2^-24 */
		return (sign ? -1.0f : 1.0f) * (float)m * 0x1p-24f;
	return et_bits_f32(sign | (e + 112) << 23 | m << 13);
}

static uint16_t
f32_to_half(float f)
{
	uint32_t u = et_f32_bits(f), sign = (u >> 16) & 0x8000, a = u & 0x7fffffffu;

	if (a >= 0x7f800000u) /* inf, nan */
		return (uint16_t)(sign | 0x7c00 | (a > 0x7f800000u ? 0x200 : 0));
	if (a >= 0x477ff000u) /* rounds past 65504 */
		return (uint16_t)(sign | 0x7c00);
	if (a < 0x38800000u) { /* subnormal half: round m x 2^-24 to an integer m */
		float m = et_bits_f32(a) * 0x1p24f;
		uint32_t r = (uint32_t)m;
		float frac = m - (float)r;

		r += frac > 0.5f || (frac == 0.5f && (r & 1));
		return (uint16_t)(sign | r);
	}
	a += 0x0fff + ((a >> 13) & 1); /* round to nearest even at bit 13 */
	return (uint16_t)(sign | ((a - 0x38000000u) >> 13));
}

static float
bf16_to_f32(uint16_t h)
{
	return et_bits_f32((uint32_t)h << 16);
}

static uint16_t
f32_to_bf16(float f)
{
	uint32_t u = et_f32_bits(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static float
load16(enum et_coll_dtype dt, const uint8_t *p)
{
	uint16_t h;

	memcpy(&h, p, 2);
	return dt == ET_DT_HALF ? half_to_f32(h) : bf16_to_f32(h);
}

static void
store16(enum et_coll_dtype dt, uint8_t *p, float f)
{
	uint16_t h = dt == ET_DT_HALF ? f32_to_half(f) : f32_to_bf16(f);

	memcpy(p, &h, 2);
}

/* a[i] = a[i] op b[i] for n elements of T, U the type arithmetic is done
 * in (unsigned for integers: sums and products wrap); memcpy per element,
 * as data and staging need not be aligned.  avg sums here. */
#define REDUCE_LOOP(T, U, EXPR)                                                  \
	for (uint64_t i = 0; i < n; i++) {                                       \
		T x, y;                                                          \
		memcpy(&x, a + i * sizeof(T), sizeof(T));                         \
		memcpy(&y, b + i * sizeof(T), sizeof(T));                         \
		x = (T)(EXPR);                                                   \
		memcpy(a + i * sizeof(T), &x, sizeof(T));                         \
	}
#define REDUCER(NAME, T, U)                                                      \
	static void NAME(enum et_coll_op op, uint8_t *a, const uint8_t *b, uint64_t n) \
	{                                                                        \
		switch (op) {                                                    \
		case ET_OP_PROD: REDUCE_LOOP(T, U, (U)x * (U)y) break;           \
		case ET_OP_MAX: REDUCE_LOOP(T, U, y > x ? y : x) break;          \
		case ET_OP_MIN: REDUCE_LOOP(T, U, y < x ? y : x) break;          \
		default: REDUCE_LOOP(T, U, (U)x + (U)y) break;                   \
		}                                                                \
	}
REDUCER(reduce_i8, int8_t, uint32_t)
REDUCER(reduce_u8, uint8_t, uint32_t)
REDUCER(reduce_i32, int32_t, uint32_t)
REDUCER(reduce_u32, uint32_t, uint32_t)
REDUCER(reduce_i64, int64_t, uint64_t)
REDUCER(reduce_u64, uint64_t, uint64_t)
REDUCER(reduce_f32, float, float)
REDUCER(reduce_f64, double, double)

static void
reduce16(enum et_coll_dtype dt, enum et_coll_op op, uint8_t *a, const uint8_t *b, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		float x = load16(dt, a + 2 * i), y = load16(dt, b + 2 * i);

		x = op == ET_OP_PROD ? x * y : op == ET_OP_MAX ? (y > x ? y : x)
		    : op == ET_OP_MIN ? (y < x ? y : x) : x + y;
		store16(dt, a + 2 * i, x);
	}
}

/* a = a op b over n elements of dt */
static void
reduce(enum et_coll_dtype dt, enum et_coll_op op, uint8_t *a, const uint8_t *b, uint64_t n)
{
	switch (dt) {
	case ET_DT_INT8: reduce_i8(op, a, b, n); break;
	case ET_DT_UINT8: reduce_u8(op, a, b, n); break;
	case ET_DT_INT32: reduce_i32(op, a, b, n); break;
	case ET_DT_UINT32: reduce_u32(op, a, b, n); break;
	case ET_DT_INT64: reduce_i64(op, a, b, n); break;
	case ET_DT_UINT64: reduce_u64(op, a, b, n); break;
	case ET_DT_FLOAT: reduce_f32(op, a, b, n); break;
	case ET_DT_DOUBLE: reduce_f64(op, a, b, n); break;
	default: reduce16(dt, op, a, b, n); break;
	}
}

/* avg's end: n elements of dt divided by ranks, in W, a type that holds
 * both (integers truncate toward 0) */
#define DIVIDE_LOOP(T, W)                                                        \
	for (uint64_t i = 0; i < n; i++) {                                       \
		T x;                                                             \
		memcpy(&x, a + i * sizeof(T), sizeof(T));                         \
		x = (T)((W)x / (W)ranks);                                        \
		memcpy(a + i * sizeof(T), &x, sizeof(T));                         \
	}

static void
divide(enum et_coll_dtype dt, uint8_t *a, uint64_t n, uint32_t ranks)
{
	switch (dt) {
	case ET_DT_INT8: DIVIDE_LOOP(int8_t, int64_t) break;
	case ET_DT_UINT8: DIVIDE_LOOP(uint8_t, uint64_t) break;
	case ET_DT_INT32: DIVIDE_LOOP(int32_t, int64_t) break;
	case ET_DT_UINT32: DIVIDE_LOOP(uint32_t, uint64_t) break;
	case ET_DT_INT64: DIVIDE_LOOP(int64_t, int64_t) break;
	case ET_DT_UINT64: DIVIDE_LOOP(uint64_t, uint64_t) break;
	case ET_DT_FLOAT: DIVIDE_LOOP(float, float) break;
	case ET_DT_DOUBLE: DIVIDE_LOOP(double, double) break;
	default:
		for (uint64_t i = 0; i < n; i++)
			store16(dt, a + 2 * i, load16(dt, a + 2 * i) / (float)ranks);
		break;
	}
}

void
et_coll_apply(const struct et_coll_sched *s, const struct et_coll_recv *r, uint8_t *data,
	      const uint8_t *staging)
{
	uint8_t *d = data + r->data_off;
	const uint8_t *st = staging + r->staging_off;

	if (r->reduce)
		reduce(s->dtype, s->op, d, st, r->len / s->dtype_size);
	else
		memcpy(d, st, r->len);
}

void
et_coll_checked_range(const struct et_coll_sched *s, uint32_t rank, uint64_t *off, uint64_t *len)
{
	if (s->kind == ET_COLL_REDUCESCATTER) {
		et_coll_chunk(s, rank, off, len);
	} else {
		*off = 0;
		*len = s->size;
	}
}

void
et_coll_finish(const struct et_coll_sched *s, uint32_t rank, uint8_t *data)
{
	uint64_t off, len;

	if (!et_coll_reduces(s->kind) || s->op != ET_OP_AVG)
		return;
	et_coll_checked_range(s, rank, &off, &len);
	divide(s->dtype, data + off, len / s->dtype_size, s->nranks);
}

/* ---- reference data ---- */

static uint64_t
mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Element i of rank r comes from u = a_r * h_i + b_r (mod 2^64): a_r odd
 * and distinct per rank, h_i and b_r hashed from the seed. */
static uint64_t
raw(uint64_t seed, uint32_t r, uint64_t i)
{
	uint64_t a = (2 * (uint64_t)r + 1) * 0x9e3779b97f4a7c15ull;
	uint64_t b = mix64(seed ^ ((uint64_t)r << 32 | 0x5bd1e995u));

	return a * mix64(seed * 0x632be59bd9b4e019ull + i) + b;
}

static bool
is_float(enum et_coll_dtype dt)
{
	return dt >= ET_DT_HALF;
}

/* Floating-point sums stay exact: the inputs of at most 2^p ranks are
 * integers in [-bound, bound - 1] with bound x ranks <= 2^p (p: the
 * significand's bits), at most 256. */
static void
float_bounds(const struct et_coll_sched *s, uint64_t *bound, uint64_t *ranks)
{
	uint32_t p = s->dtype == ET_DT_HALF ? 11 : s->dtype == ET_DT_BFLOAT16 ? 8
		   : s->dtype == ET_DT_FLOAT ? 24 : 53;
	uint64_t exact = 1ull << p, b = exact / s->nranks;

	*bound = b > 256 ? 256 : b ? b : 1;
	*ranks = b ? s->nranks : exact;
}

static void
store_float(enum et_coll_dtype dt, uint8_t *out, double x)
{
	if (dt == ET_DT_DOUBLE) {
		memcpy(out, &x, 8);
	} else if (dt == ET_DT_FLOAT) {
		float f = (float)x;

		memcpy(out, &f, 4);
	} else {
		store16(dt, out, (float)x);
	}
}

/* u's low es bytes as an integer of es bytes, in the host's order */
static void
store_uint(uint32_t es, uint8_t *out, uint64_t u)
{
	uint8_t u8 = (uint8_t)u;
	uint16_t u16 = (uint16_t)u;
	uint32_t u32 = (uint32_t)u;

	memcpy(out, es == 1 ? (void *)&u8 : es == 2 ? (void *)&u16 : es == 4 ? (void *)&u32
									     : (void *)&u, es);
}

/* n elements of rank r from element i0 on, into out */
static void
values(const struct et_coll_sched *s, uint64_t seed, uint32_t r, uint64_t i0, uint64_t n,
       uint8_t *out)
{
	uint32_t es = s->dtype_size;
	uint64_t bound = 0, ranks = 0, i;
	bool reducing = et_coll_reduces(s->kind);

	if (reducing && is_float(s->dtype))
		float_bounds(s, &bound, &ranks);
	for (i = 0; i < n; i++) {
		uint64_t u = raw(seed, r, i0 + i), hi = u >> 32;

		if (!reducing || !is_float(s->dtype)) {
			/* any bits: odd for prod */
			store_uint(es, out + i * es, u | (reducing && s->op == ET_OP_PROD));
		} else if (s->op == ET_OP_PROD) {
			int e = r < 8 ? (int)(hi % 3) - 1 : 0;

			store_float(s->dtype, out + i * es,
				    (u >> 63 ? -1.0 : 1.0) * (e < 0 ? 0.5 : e > 0 ? 2.0 : 1.0));
		} else {
			double x = r < ranks ? (double)((int64_t)(hi % (2 * bound)) - (int64_t)bound)
					     : 0;

			store_float(s->dtype, out + i * es, x);
		}
	}
}

void
et_coll_fill(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, uint8_t *data)
{
	values(s, seed, rank, 0, s->count, data);
}

/* The reduction over all ranks of elements [i0, i0 + n), in rank order,
 * finished (avg): into out (n elements); 0 or -ENOMEM. */
static int
reduced(const struct et_coll_sched *s, uint64_t seed, uint64_t i0, uint64_t n, uint8_t *out)
{
	uint8_t *tmp = malloc(n * s->dtype_size + 1);

	if (tmp == NULL)
		return -ENOMEM;
	values(s, seed, 0, i0, n, out);
	for (uint32_t r = 1; r < s->nranks; r++) {
		values(s, seed, r, i0, n, tmp);
		reduce(s->dtype, s->op, out, tmp, n);
	}
	if (s->op == ET_OP_AVG)
		divide(s->dtype, out, n, s->nranks);
	free(tmp);
	return 0;
}

/* What rank holds at the end of a collective that moves data (allgather,
 * alltoall): every element some rank's input. */
static void
moved(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, uint8_t *out)
{
	struct layout l = layout_of(s);
	uint32_t es = s->dtype_size;

	for (uint32_t r = 0; r < s->nranks; r++) {
		if (s->kind == ET_COLL_ALLGATHER)
			values(s, seed, r, chunk_off(&l, r) / es, chunk_len(&l, r) / es,
			       out + chunk_off(&l, r));
		else
			values(s, seed, r, a2a_src(&l, r, rank) / es, a2a_len(&l, r, rank) / es,
			       out + a2a_dst(&l, r, rank));
	}
}

void
et_coll_expect(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, uint8_t *out)
{
	uint64_t off, len;

	memset(out, 0, s->size);
	et_coll_checked_range(s, rank, &off, &len);
	if (!et_coll_reduces(s->kind))
		moved(s, rank, seed, out);
	else if (reduced(s, seed, off / s->dtype_size, len / s->dtype_size, out + off))
		memset(out + off, 0xff, len); /* out of memory: nothing matches, said as wrong */
}

static uint64_t
count_wrong(const uint8_t *a, const uint8_t *b, uint64_t len, uint32_t es)
{
	uint64_t wrong = 0;

	for (uint64_t i = 0; i < len; i += es)
		wrong += memcmp(a + i, b + i, es) != 0;
	return wrong;
}

int
et_coll_wrong(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, const uint8_t *data,
	      uint64_t *wrong)
{
	uint8_t *want = malloc(s->size + 1);
	uint64_t off, len;

	if (want == NULL)
		return -ENOMEM;
	et_coll_expect(s, rank, seed, want);
	et_coll_checked_range(s, rank, &off, &len);
	*wrong = count_wrong(data + off, want + off, len, s->dtype_size);
	free(want);
	return 0;
}

int
et_coll_wrong_all(const struct et_coll_sched *s, uint64_t seed, const uint8_t *const *data,
		  uint64_t *wrong)
{
	uint8_t *want = malloc(s->size + 1);
	uint64_t off, len;

	if (want == NULL)
		return -ENOMEM;
	/* a reduction is the same for every rank: computed once */
	if (et_coll_reduces(s->kind) && reduced(s, seed, 0, s->count, want)) {
		free(want);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < s->nranks; r++) {
		if (!et_coll_reduces(s->kind))
			moved(s, r, seed, want);
		et_coll_checked_range(s, r, &off, &len);
		wrong[r] = count_wrong(data[r] + off, want + off, len, s->dtype_size);
	}
	free(want);
	return 0;
}
