/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/et_bits.h"
#include "coll/et_coll.h"

/* dbt's transfers grow with ranks x chunks; beyond this the chunk is too
 * small to be worth the memory */
#define DBT_MAX_XFERS (1u << 22)

static const char *const kind_names[] = {"allreduce", "allgather", "reducescatter", "alltoall"};
static const char *const algo_names[ET_ALGO_COUNT] = {"a2a", "rd", "ring", "dbt", "rd-far"};

int
et_coll_parse_kind(const char *name, enum et_coll_kind *out)
{
	for (unsigned int i = 0; i < 4; i++)
		if (strcmp(name, kind_names[i]) == 0) {
			*out = (enum et_coll_kind)i;
			return 0;
		}
	return -EINVAL;
}

int
et_coll_parse_algo(const char *name, enum et_coll_algo *out)
{
	for (unsigned int i = 0; i < ET_ALGO_COUNT; i++)
		if (strcmp(name, algo_names[i]) == 0) {
			*out = (enum et_coll_algo)i;
			return 0;
		}
	return -EINVAL;
}

const char *
et_coll_kind_name(enum et_coll_kind kind)
{
	return (unsigned int)kind < 4 ? kind_names[kind] : "?";
}

const char *
et_coll_algo_name(enum et_coll_algo algo)
{
	return (unsigned int)algo < ET_ALGO_COUNT ? algo_names[algo] : "?";
}

/* ---- building: transfers on a global step count, then per rank ---- */

/* One send of src and the recv of dst it fills, both in global step `step`;
 * seq keeps the order they were made in, which fixes the reduction order. */
struct xfer {
	uint32_t src, dst, step, seq;
	uint64_t src_off, data_off, len;
	uint8_t reduce;
};

struct builder {
	struct xfer *x;
	uint32_t n, cap;
	int oom;
};

static void
add(struct builder *b, uint32_t src, uint32_t dst, uint32_t step, uint64_t src_off,
    uint64_t data_off, uint64_t len, uint8_t reduce)
{
	if (len == 0 || b->oom)
		return;
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? 2 * b->cap : 64;
		struct xfer *x = cap > b->cap ? realloc(b->x, (size_t)cap * sizeof(*x)) : NULL;

		if (x == NULL) {
			b->oom = 1;
			return;
		}
		b->x = x;
		b->cap = cap;
	}
	b->x[b->n] = (struct xfer){src, dst, step, b->n, src_off, data_off, len, reduce};
	b->n++;
}

static int
cmp_xfer(const void *pa, const void *pb)
{
	const struct xfer *a = pa, *b = pb;

	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Step k of a rank becomes the k-th global step in which it does anything,
 * so steps where it would only wait are dropped. */
static struct et_coll_step *
step_of(struct et_coll_rank *k, uint32_t *last, uint32_t step)
{
	if (*last != step) {
		*last = step;
		k->steps[k->nsteps++] = (struct et_coll_step){k->nsends, 0, k->nrecvs, 0};
	}
	return &k->steps[k->nsteps - 1];
}

static int
finish(struct et_coll_sched *s, struct builder *b)
{
	uint32_t *last = malloc((size_t)s->nranks * sizeof(*last)), i;
	int rc = -ENOMEM;

	if (last == NULL)
		return -ENOMEM;
	if (b->n)
		qsort(b->x, b->n, sizeof(*b->x), cmp_xfer);
	for (i = 0; i < b->n; i++) {
		s->rank[b->x[i].src].nsends++;
		s->rank[b->x[i].dst].nrecvs++;
	}
	for (i = 0; i < s->nranks; i++) {
		struct et_coll_rank *k = &s->rank[i];

		k->sends = calloc(k->nsends + 1, sizeof(*k->sends));
		k->recvs = calloc(k->nrecvs + 1, sizeof(*k->recvs));
		k->steps = calloc((size_t)k->nsends + k->nrecvs + 1, sizeof(*k->steps));
		if (!k->sends || !k->recvs || !k->steps)
			goto out;
		k->nsends = k->nrecvs = 0;
		last[i] = UINT32_MAX;
	}
	for (i = 0; i < b->n; i++) {
		const struct xfer *x = &b->x[i];
		struct et_coll_rank *ks = &s->rank[x->src], *kd = &s->rank[x->dst];
		uint32_t r;

		step_of(kd, &last[x->dst], x->step)->nrecv++;
		r = kd->nrecvs++;
		kd->recvs[r] = (struct et_coll_recv){x->src, kd->staging_bytes, x->data_off,
						      x->len, x->reduce};
		kd->staging_bytes += x->len;
		step_of(ks, &last[x->src], x->step)->nsend++;
		ks->sends[ks->nsends++] = (struct et_coll_send){x->dst, r, x->src_off, x->len};
	}
	for (i = 0; i < s->nranks; i++)
		if (s->rank[i].staging_bytes > s->staging_bytes)
			s->staging_bytes = s->rank[i].staging_bytes;
	rc = 0;
out:
	free(last);
	return rc;
}

/* ---- the algorithms, c = size / n bytes per chunk ---- */

static void
build_a2a(struct builder *b, enum et_coll_kind kind, uint32_t n, uint64_t c)
{
	for (uint32_t r = 0; r < n; r++)
		for (uint32_t j = 0; j < n; j++) {
			if (j == r)
				continue;
			/* reduce-scatter: j sums chunk j; all-gather: j gets
			 * r's chunk r; all-to-all: r's chunk j is j's chunk r */
			if (kind == ET_COLL_ALLREDUCE || kind == ET_COLL_REDUCESCATTER)
				add(b, r, j, 0, j * c, j * c, c, 1);
			if (kind == ET_COLL_ALLREDUCE || kind == ET_COLL_ALLGATHER)
				add(b, r, j, 1, r * c, r * c, c, 0);
			if (kind == ET_COLL_ALLTOALL)
				add(b, r, j, 0, j * c, r * c, c, 0);
		}
}

/* Recursive halving (reduce-scatter) and doubling (allgather) as MPICH's
 * standalone ones, and both in turn for allreduce by rd-far.  Halving: in
 * the round of mask m (the farthest partner first) rank r owns the 2m
 * chunks r & ~(2m - 1) onwards, keeps the half holding chunk r and gives
 * the other (its partner r ^ m's half) to the partner; after log N rounds
 * it owns the sum of chunk r.  Doubling reverses it, swapping owned ranges. */
static void
build_rd(struct builder *b, enum et_coll_kind kind, uint32_t n, uint64_t c)
{
	uint32_t step = 0, m, r;

	if (kind != ET_COLL_ALLGATHER)
		for (m = n / 2; m; m /= 2, step++)
			for (r = 0; r < n; r++) {
				uint64_t off = ((r ^ m) & ~(m - 1)) * c;

				add(b, r, r ^ m, step, off, off, m * c, 1);
			}
	if (kind != ET_COLL_REDUCESCATTER)
		for (m = 1; m < n; m *= 2, step++)
			for (r = 0; r < n; r++) {
				uint64_t off = (r & ~(m - 1)) * c;

				add(b, r, r ^ m, step, off, off, m * c, 0);
			}
}

/* Rabenseifner's allreduce as MPICH and Astra-Sim order it: halving
 * exchanges half the vector with the partner at distance 1, a quarter at
 * distance 2, ..., and doubling mirrors it, so the largest exchanges are
 * between neighbours (in a rack, with ranks placed in order).  Before the
 * round of distance 2^k rank r owns the n >> k chunks from rd_first(r, k): it
 * keeps the half picked by bit k of r and gives the other to r ^ 2^k, which
 * owns the same range; so r ends with chunk rd_first(r, log n), a bit
 * reversal of r, which is why reduce-scatter (rank r ends with chunk r)
 * keeps build_rd's order. */
static uint64_t
rd_first(uint32_t n, uint32_t r, uint32_t k)
{
	uint64_t first = 0;
	uint32_t i;

	for (i = 0; i < k; i++)
		first += (uint64_t)((r >> i) & 1) * (n >> (i + 1));
	return first;
}

static void
build_rd_near(struct builder *b, uint32_t n, uint64_t c)
{
	uint32_t rounds = et_ilog2(n), step = 0, k, r;

	for (k = 0; k < rounds; k++, step++)
		for (r = 0; r < n; r++) {
			uint64_t half = n >> (k + 1);
			uint64_t give = rd_first(n, r, k) + (((r >> k) & 1) ? 0 : half);

			add(b, r, r ^ (1u << k), step, give * c, give * c, half * c, 1);
		}
	for (k = rounds; k-- > 0; step++)
		for (r = 0; r < n; r++) {
			uint64_t own = rd_first(n, r, k + 1);

			add(b, r, r ^ (1u << k), step, own * c, own * c, (n >> (k + 1)) * c, 0);
		}
}

/* Reduce-scatter: in step s rank r passes chunk r - s - 1 (which it summed
 * in step s - 1) to r + 1, so chunk r completes at r in step N - 2.
 * All-gather: in step s rank r passes chunk r - s on. */
static void
build_ring(struct builder *b, enum et_coll_kind kind, uint32_t n, uint64_t c)
{
	uint32_t step = 0, s, r;

	if (kind != ET_COLL_ALLGATHER)
		for (s = 0; s + 1 < n; s++, step++)
			for (r = 0; r < n; r++) {
				uint64_t off = (r + 2 * n - s - 1) % n * c;

				add(b, r, (r + 1) % n, step, off, off, c, 1);
			}
	if (kind != ET_COLL_REDUCESCATTER)
		for (s = 0; s + 1 < n; s++, step++)
			for (r = 0; r < n; r++) {
				uint64_t off = (r + n - s) % n * c;

				add(b, r, (r + 1) % n, step, off, off, c, 0);
			}
}

/* Rank at heap position i of tree h.  Tree 0 lists the even ranks first,
 * tree 1 the odd ones; a heap of n nodes has its n / 2 interior nodes first,
 * and there are at least n / 2 ranks of either parity, so every rank is
 * interior in at most one tree (the one of its parity). */
static uint32_t
dbt_rank(uint32_t n, uint32_t h, uint32_t i)
{
	uint32_t first = (n + 1 - h) / 2;	/* ranks of parity h */

	return i < first ? 2 * i + h : 2 * (i - first) + 1 - h;
}

/* Half h of the data goes up tree h and back down, chunk by chunk, on one
 * clock: a node at depth d sends chunk k up in step k + D - d, one step after
 * its children's chunk k arrived (D: the depth of the trees), and the root's
 * sum comes down one level per step from step k + D.  A node's own chunk k is
 * overwritten (step k + D + d - 1) only after it sent it up, and the two
 * halves never touch the same bytes, so the trees share the steps:
 * nchunks + 2D - 1 of them. */
static void
build_dbt(struct builder *b, uint32_t n, uint64_t size, uint64_t cb)
{
	uint64_t half0 = size / 8 * 4, hoff, hlen, off;
	uint32_t depth = et_ilog2(n), h, i, k;

	for (h = 0; h < 2; h++) {
		hoff = h ? half0 : 0;
		hlen = h ? size - half0 : half0;
		for (i = 1; i < n; i++) {
			uint32_t v = dbt_rank(n, h, i), u = dbt_rank(n, h, (i - 1) / 2);
			uint32_t d = et_ilog2(i + 1);

			for (k = 0, off = 0; off < hlen; k++, off += cb) {
				uint64_t len = hlen - off < cb ? hlen - off : cb;

				add(b, v, u, k + depth - d, hoff + off, hoff + off, len, 1);
				add(b, u, v, k + depth + d - 1, hoff + off, hoff + off, len, 0);
			}
		}
	}
}

int
et_coll_build(struct et_coll_sched *s, enum et_coll_kind kind, enum et_coll_algo algo,
	      uint32_t nranks, uint64_t size, uint64_t chunk_bytes, const char **why)
{
	struct builder b = {0};
	uint64_t c, cb = 0;

	memset(s, 0, sizeof(*s));
	if ((unsigned int)kind > ET_COLL_ALLTOALL || (unsigned int)algo >= ET_ALGO_COUNT) {
		*why = "unknown collective or algorithm";
		return -EINVAL;
	}
	if (kind == ET_COLL_ALLTOALL && algo != ET_ALGO_A2A) {
		*why = "alltoall needs algo a2a (rd, ring and dbt have no all-to-all)";
		return -EINVAL;
	}
	if ((algo == ET_ALGO_DBT || algo == ET_ALGO_RD_FAR) && kind != ET_COLL_ALLREDUCE) {
		*why = algo == ET_ALGO_DBT ? "dbt is an allreduce algorithm only"
					   : "rd-far is an allreduce algorithm only";
		return -EINVAL;
	}
	if (nranks == 0) {
		*why = "need at least one rank";
		return -EINVAL;
	}
	if ((algo == ET_ALGO_RD || algo == ET_ALGO_RD_FAR) && (nranks & (nranks - 1))) {
		*why = "rd needs a power-of-two number of ranks";
		return -EINVAL;
	}
	if (size % (4ull * nranks)) {
		*why = "size must be a multiple of 4*nranks (4-byte elements, one chunk per rank)";
		return -EINVAL;
	}
	if (algo == ET_ALGO_DBT) {
		cb = (chunk_bytes ? chunk_bytes : size / 8) / 4 * 4;
		cb = cb ? cb : 4;
		/* 4 transfers per non-root rank and chunk of a half */
		if ((size / 2 + cb) / cb * 4 * (nranks - 1) > DBT_MAX_XFERS) {
			*why = "dbt: too many chunks for this size and rank count, use a larger chunk";
			return -EINVAL;
		}
	}
	s->nranks = nranks;
	s->size = size;
	s->kind = kind;
	s->algo = algo;
	s->dtype_size = 4;
	s->rank = calloc(nranks, sizeof(*s->rank));
	if (s->rank == NULL)
		goto oom;
	c = size / nranks;
	if (algo == ET_ALGO_A2A)
		build_a2a(&b, kind, nranks, c);
	else if (algo == ET_ALGO_RD && kind == ET_COLL_ALLREDUCE)
		build_rd_near(&b, nranks, c);
	else if (algo == ET_ALGO_RD || algo == ET_ALGO_RD_FAR)
		build_rd(&b, kind, nranks, c);
	else if (algo == ET_ALGO_RING)
		build_ring(&b, kind, nranks, c);
	else
		build_dbt(&b, nranks, size, cb);
	if (b.oom || finish(s, &b))
		goto oom;
	free(b.x);
	return 0;
oom:
	free(b.x);
	et_coll_free(s);
	*why = "out of memory building the schedule";
	return -ENOMEM;
}

void
et_coll_free(struct et_coll_sched *s)
{
	for (uint32_t i = 0; s->rank && i < s->nranks; i++) {
		free(s->rank[i].sends);
		free(s->rank[i].recvs);
		free(s->rank[i].steps);
	}
	free(s->rank);
	memset(s, 0, sizeof(*s));
}

void
et_coll_apply(const struct et_coll_recv *r, uint8_t *data, const uint8_t *staging,
	      enum et_coll_dtype dt)
{
	uint8_t *d = data + r->data_off;
	const uint8_t *st = staging + r->staging_off;
	uint64_t i;

	if (!r->reduce) {
		memcpy(d, st, r->len);
		return;
	}
	/* memcpy per element: data and staging need not be aligned */
	if (dt == ET_DT_FLOAT32)
		for (i = 0; i + 4 <= r->len; i += 4) {
			float a, x;

			memcpy(&a, d + i, 4);
			memcpy(&x, st + i, 4);
			a += x;
			memcpy(d + i, &a, 4);
		}
	else
		for (i = 0; i + 4 <= r->len; i += 4) {
			uint32_t a, x;

			memcpy(&a, d + i, 4);
			memcpy(&x, st + i, 4);
			a += x;	/* unsigned: int32 sums wrap, no overflow */
			memcpy(d + i, &a, 4);
		}
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

/* Element i of rank r is a_r * h_i + b_r (mod 2^32): a_r odd and distinct
 * per rank, h_i and b_r hashed from the seed.  Linear in the rank terms, so
 * the int32 sum over all ranks is (sum a_r) h_i + sum b_r, cheap for any N;
 * float32 keeps 9 high bits as an integer in [-256, 255], exact in any sum
 * of up to 2^15 ranks. */
struct pattern {
	uint64_t seed;
	uint32_t a, b;
};

static struct pattern
pattern(uint64_t seed, uint32_t r)
{
	return (struct pattern){seed, (2 * r + 1) * 0x9e3779b1u,
				(uint32_t)mix64(seed ^ ((uint64_t)r << 32 | 0x5bd1e995u))};
}

static uint32_t
elem(const struct pattern *p, uint64_t i)
{
	return p->a * (uint32_t)mix64(p->seed * 0x632be59bd9b4e019ull + i) + p->b;
}

static float
small(uint32_t u)
{
	return (float)((int32_t)(u >> 23) - 256);
}

static void
put(uint8_t *out, uint64_t i, uint32_t u, enum et_coll_dtype dt)
{
	if (dt == ET_DT_FLOAT32) {
		float f = small(u);

		memcpy(out + 4 * i, &f, 4);
	} else {
		memcpy(out + 4 * i, &u, 4);
	}
}

void
et_coll_fill(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, enum et_coll_dtype dt,
	     uint8_t *data)
{
	struct pattern p = pattern(seed, rank);

	for (uint64_t i = 0; i < s->size / 4; i++)
		put(data, i, elem(&p, i), dt);
}

void
et_coll_checked_range(const struct et_coll_sched *s, uint32_t rank, uint64_t *off, uint64_t *len)
{
	uint64_t c = s->nranks ? s->size / s->nranks : 0;

	*off = s->kind == ET_COLL_REDUCESCATTER ? rank * c : 0;
	*len = s->kind == ET_COLL_REDUCESCATTER ? c : s->size;
}

/* The pattern whose int32 elements are the sums over all ranks. */
static struct pattern
pattern_sum(const struct et_coll_sched *s, uint64_t seed)
{
	struct pattern sum = {seed, 0, 0};

	for (uint32_t r = 0; r < s->nranks; r++) {
		struct pattern p = pattern(seed, r);

		sum.a += p.a;
		sum.b += p.b;
	}
	return sum;
}

void
et_coll_expect(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, enum et_coll_dtype dt,
	       uint8_t *out)
{
	uint64_t ce = s->nranks ? s->size / 4 / s->nranks : 0, off, len, i;
	struct pattern sum = pattern_sum(s, seed);

	memset(out, 0, s->size);
	et_coll_checked_range(s, rank, &off, &len);
	for (i = off / 4; i < (off + len) / 4; i++) {
		/* element i is in chunk j of the result */
		struct pattern p = pattern(seed, (uint32_t)(i / ce));
		float f = 0;

		if (s->kind == ET_COLL_ALLGATHER) {
			put(out, i, elem(&p, i), dt);
		} else if (s->kind == ET_COLL_ALLTOALL) {
			put(out, i, elem(&p, rank * ce + i % ce), dt);
		} else if (dt == ET_DT_INT32) {
			put(out, i, elem(&sum, i), dt);
		} else {
			for (uint32_t r = 0; r < s->nranks; r++) {
				p = pattern(seed, r);
				f += small(elem(&p, i));
			}
			memcpy(out + 4 * i, &f, 4);
		}
	}
}

uint64_t
et_coll_bytes_sent(const struct et_coll_sched *s, uint32_t rank)
{
	const struct et_coll_rank *k = &s->rank[rank];
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < k->nsends; i++)
		bytes += k->sends[i].len;
	return bytes;
}
