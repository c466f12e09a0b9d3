/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/et_bits.h"
#include "coll/et_coll.h"

/* dbt's transfers grow with ranks x chunks; beyond this the chunk is too
 * small to be worth the memory */
#define DBT_MAX_XFERS (1u << 22)

static const char *const kind_names[ET_COLL_KINDS] = {"allreduce", "allgather", "reducescatter",
						      "alltoall"};
static const char *const algo_names[ET_ALGO_COUNT] = {"a2a", "rd", "ring", "dbt", "rd-far"};
static const struct {
	const char *name, *alias, *alias2;
	uint32_t size;
} dtypes[ET_DT_COUNT] = {
	[ET_DT_INT8] = {"int8", "char", NULL, 1},
	[ET_DT_UINT8] = {"uint8", NULL, NULL, 1},
	[ET_DT_INT32] = {"int32", "int", NULL, 4},
	[ET_DT_UINT32] = {"uint32", NULL, NULL, 4},
	[ET_DT_INT64] = {"int64", NULL, NULL, 8},
	[ET_DT_UINT64] = {"uint64", NULL, NULL, 8},
	[ET_DT_HALF] = {"half", "float16", NULL, 2},
	[ET_DT_FLOAT] = {"float", "float32", NULL, 4},
	[ET_DT_DOUBLE] = {"double", "float64", NULL, 8},
	[ET_DT_BFLOAT16] = {"bfloat16", NULL, NULL, 2},
};
static const char *const op_names[ET_OP_COUNT] = {"sum", "prod", "max", "min", "avg"};

static int
find_name(const char *name, const char *const *names, unsigned int n, unsigned int *out)
{
	for (unsigned int i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

int
et_coll_parse_kind(const char *name, enum et_coll_kind *out)
{
	unsigned int i;

	if (find_name(name, kind_names, ET_COLL_KINDS, &i))
		return -EINVAL;
	*out = (enum et_coll_kind)i;
	return 0;
}

int
et_coll_parse_algo(const char *name, enum et_coll_algo *out)
{
	unsigned int i;

	if (find_name(name, algo_names, ET_ALGO_COUNT, &i))
		return -EINVAL;
	*out = (enum et_coll_algo)i;
	return 0;
}

int
et_coll_parse_dtype(const char *name, enum et_coll_dtype *out)
{
	for (unsigned int i = 0; i < ET_DT_COUNT; i++) {
		const char *const names[3] = {dtypes[i].name, dtypes[i].alias, dtypes[i].alias2};

		for (int k = 0; k < 3; k++)
			if (names[k] && strcmp(name, names[k]) == 0) {
				*out = (enum et_coll_dtype)i;
				return 0;
			}
	}
	return -EINVAL;
}

int
et_coll_parse_op(const char *name, enum et_coll_op *out)
{
	unsigned int i;

	if (find_name(name, op_names, ET_OP_COUNT, &i))
		return -EINVAL;
	*out = (enum et_coll_op)i;
	return 0;
}

const char *
et_coll_kind_name(enum et_coll_kind kind)
{
	return (unsigned int)kind < ET_COLL_KINDS ? kind_names[kind] : "?";
}

const char *
et_coll_algo_name(enum et_coll_algo algo)
{
	return (unsigned int)algo < ET_ALGO_COUNT ? algo_names[algo] : "?";
}

const char *
et_coll_dtype_name(enum et_coll_dtype dtype)
{
	return (unsigned int)dtype < ET_DT_COUNT ? dtypes[dtype].name : "?";
}

const char *
et_coll_op_name(enum et_coll_op op)
{
	return (unsigned int)op < ET_OP_COUNT ? op_names[op] : "?";
}

uint32_t
et_coll_dtype_size(enum et_coll_dtype dtype)
{
	return (unsigned int)dtype < ET_DT_COUNT ? dtypes[dtype].size : 0;
}

/* ---- the one judgement ---- */

/* dbt's pipelining unit: whole elements, at least one */
static uint64_t
dbt_chunk(uint64_t chunk_bytes, uint64_t size, uint32_t es)
{
	uint64_t cb = (chunk_bytes ? chunk_bytes : size / 8) / es * es;

	return cb ? cb : es;
}

int
et_coll_check(const struct et_coll_spec *c, const char **why)
{
	uint32_t es = et_coll_dtype_size(c->dtype);
	uint64_t size, cb;

	if ((unsigned int)c->kind >= ET_COLL_KINDS || (unsigned int)c->algo >= ET_ALGO_COUNT ||
	    es == 0 || (unsigned int)c->op >= ET_OP_COUNT) {
		*why = "unknown collective, algorithm, data type or operation";
		return -EINVAL;
	}
	if (c->kind == ET_COLL_ALLTOALL && c->algo != ET_ALGO_A2A) {
		*why = "alltoall needs algo a2a (rd, ring and dbt have no all-to-all)";
		return -EINVAL;
	}
	if ((c->algo == ET_ALGO_DBT || c->algo == ET_ALGO_RD_FAR) && c->kind != ET_COLL_ALLREDUCE) {
		*why = c->algo == ET_ALGO_DBT ? "dbt is an allreduce algorithm only"
					      : "rd-far is an allreduce algorithm only";
		return -EINVAL;
	}
	if (c->nranks == 0) {
		*why = "need at least one rank";
		return -EINVAL;
	}
	if (c->count > ET_COLL_MAX_BYTES / es) {
		*why = "at most 4 GiB - 1 per rank (a subflow is one RDMA WRITE)";
		return -EINVAL;
	}
	size = c->count * es;
	cb = dbt_chunk(c->chunk_bytes, size, es);
	/* 4 transfers per non-root rank and chunk of a half */
	if (c->algo == ET_ALGO_DBT && (size / 2 + cb) / cb * 4 * (c->nranks - 1) > DBT_MAX_XFERS) {
		*why = "dbt: too many chunks for this size and rank count, use a larger chunk";
		return -EINVAL;
	}
	return 0;
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

/* ---- where the pieces of the vector lie ---- */

/* N chunks of count elements (q each, the first rem one more), es bytes an
 * element; and rd's fold: p2, the largest power of two <= N, and fold =
 * N - p2 even ranks folded into the odd rank after them. */
struct layout {
	uint32_t n, p2, fold;
	uint64_t q, rem, es, size;
};

static struct layout
layout_of(const struct et_coll_sched *s)
{
	uint32_t p2 = s->nranks ? 1u << et_ilog2(s->nranks) : 0;

	return (struct layout){s->nranks, p2, s->nranks - p2, s->nranks ? s->count / s->nranks : 0,
			       s->nranks ? s->count % s->nranks : 0, s->dtype_size, s->size};
}

/* chunk j's first byte, j in 0..N (chunk_off(N) = size) */
static uint64_t
chunk_off(const struct layout *l, uint64_t j)
{
	return (j * l->q + (j < l->rem ? j : l->rem)) * l->es;
}

static uint64_t
chunk_len(const struct layout *l, uint64_t j)
{
	return chunk_off(l, j + 1) - chunk_off(l, j);
}

void
et_coll_chunk(const struct et_coll_sched *s, uint32_t j, uint64_t *off, uint64_t *len)
{
	struct layout l = layout_of(s);

	*off = chunk_off(&l, j);
	*len = chunk_len(&l, j);
}

/* All-to-all block r -> j: c((r + j) mod N) elements, so every row (a
 * sender's blocks) and every column (a receiver's) holds each chunk length
 * once.  a2a_folds(x): how many of 0 .. x - 1, taken mod N, are < rem.
 * The block sits at a2a_src() in r's data and a2a_dst() in j's. */
static uint64_t
a2a_folds(const struct layout *l, uint64_t x)
{
	return x / l->n * l->rem + (x % l->n < l->rem ? x % l->n : l->rem);
}

static uint64_t
a2a_len(const struct layout *l, uint32_t r, uint32_t j)
{
	return chunk_len(l, (r + j) % l->n);
}

static uint64_t
a2a_src(const struct layout *l, uint32_t r, uint32_t j)
{
	return (j * l->q + a2a_folds(l, (uint64_t)r + j) - a2a_folds(l, r)) * l->es;
}

static uint64_t
a2a_dst(const struct layout *l, uint32_t r, uint32_t j)
{
	return (r * l->q + a2a_folds(l, (uint64_t)r + j) - a2a_folds(l, j)) * l->es;
}

/* rd's p2 virtual ranks: v is real rank 2v + 1 for v < fold (2v folded into
 * it), v + fold after; its block is the chunks of its real ranks, so block
 * v starts at chunk 2v or v + fold (block p2 at the end). */
static uint32_t
vreal(const struct layout *l, uint32_t v)
{
	return v < l->fold ? 2 * v + 1 : v + l->fold;
}

static uint64_t
block_off(const struct layout *l, uint64_t v)
{
	return chunk_off(l, v < l->fold ? 2 * v : v + l->fold);
}

/* ---- the algorithms ---- */

static void
build_a2a(struct builder *b, enum et_coll_kind kind, const struct layout *l)
{
	for (uint32_t r = 0; r < l->n; r++)
		for (uint32_t j = 0; j < l->n; j++) {
			uint64_t oj = chunk_off(l, j), or = chunk_off(l, r);

			if (j == r)
				continue;
			/* reduce-scatter: j reduces chunk j; all-gather: j gets
			 * r's chunk r; all-to-all: r's block j is j's block r */
			if (kind == ET_COLL_ALLREDUCE || kind == ET_COLL_REDUCESCATTER)
				add(b, r, j, 0, oj, oj, chunk_len(l, j), 1);
			if (kind == ET_COLL_ALLREDUCE || kind == ET_COLL_ALLGATHER)
				add(b, r, j, 1, or, or, chunk_len(l, r), 0);
			if (kind == ET_COLL_ALLTOALL)
				add(b, r, j, 0, a2a_src(l, r, j), a2a_dst(l, r, j), a2a_len(l, r, j), 0);
		}
}

/* rd's fold-in: each folded even rank hands the odd rank after it its part
 * (allgather: its chunk; else the whole vector, reduced there).  The step
 * the power-of-two part starts in. */
static uint32_t
fold_in(struct builder *b, enum et_coll_kind kind, const struct layout *l)
{
	for (uint32_t v = 0; v < l->fold; v++) {
		uint64_t mine = chunk_off(l, 2 * v);

		if (kind == ET_COLL_ALLGATHER)
			add(b, 2 * v, 2 * v + 1, 0, mine, mine, chunk_len(l, 2 * v), 0);
		else
			add(b, 2 * v, 2 * v + 1, 0, 0, 0, l->size, 1);
	}
	return l->fold ? 1 : 0;
}

/* Fold-out in `step`: the odd rank hands its even one the result:
 * reducescatter its chunk, allgather all but its chunk, allreduce all. */
static void
fold_out(struct builder *b, enum et_coll_kind kind, const struct layout *l, uint32_t step)
{
	for (uint32_t v = 0; v < l->fold; v++) {
		uint32_t even = 2 * v, odd = even + 1;
		uint64_t mine = chunk_off(l, even), next = chunk_off(l, odd);

		if (kind == ET_COLL_REDUCESCATTER) {
			add(b, odd, even, step, mine, mine, next - mine, 0);
		} else if (kind == ET_COLL_ALLGATHER) {
			add(b, odd, even, step, 0, 0, mine, 0);
			add(b, odd, even, step, next, next, l->size - next, 0);
		} else {
			add(b, odd, even, step, 0, 0, l->size, 0);
		}
	}
}

/* Recursive halving (reduce-scatter) and doubling (allgather) as MPICH's
 * standalone ones, and both in turn for allreduce by rd-far, over the p2
 * virtual ranks.  Halving: in the round of mask m (the farthest partner
 * first) v owns the 2m blocks v & ~(2m - 1) onwards, keeps the half
 * holding block v and gives the other (its partner v ^ m's half) to the
 * partner; after log p2 rounds it owns the reduction of block v.  Doubling
 * reverses it, swapping owned ranges. */
static void
build_rd(struct builder *b, enum et_coll_kind kind, const struct layout *l)
{
	uint32_t step = fold_in(b, kind, l), m, v;

	if (kind != ET_COLL_ALLGATHER)
		for (m = l->p2 / 2; m; m /= 2, step++)
			for (v = 0; v < l->p2; v++) {
				uint32_t w = (v ^ m) & ~(m - 1);
				uint64_t off = block_off(l, w);

				add(b, vreal(l, v), vreal(l, v ^ m), step, off, off,
				    block_off(l, w + m) - off, 1);
			}
	if (kind != ET_COLL_REDUCESCATTER)
		for (m = 1; m < l->p2; m *= 2, step++)
			for (v = 0; v < l->p2; v++) {
				uint32_t w = v & ~(m - 1);
				uint64_t off = block_off(l, w);

				add(b, vreal(l, v), vreal(l, v ^ m), step, off, off,
				    block_off(l, w + m) - off, 0);
			}
	fold_out(b, kind, l, step);
}

/* Rabenseifner's allreduce as MPICH and Astra-Sim order it: halving
 * exchanges half the vector with the partner at distance 1, a quarter at
 * distance 2, ..., and doubling mirrors it, so the largest exchanges are
 * between neighbours (in a rack, with ranks placed in order).  Before the
 * round of distance 2^k virtual rank v owns the n >> k blocks from
 * rd_first(v, k): it keeps the half picked by bit k of v and gives the
 * other to v ^ 2^k, which owns the same range; so v ends with block
 * rd_first(v, log n), a bit reversal of v, which is why reduce-scatter
 * (rank r ends with chunk r) keeps build_rd's order. */
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
build_rd_near(struct builder *b, const struct layout *l)
{
	uint32_t n = l->p2, rounds = et_ilog2(n), step = fold_in(b, ET_COLL_ALLREDUCE, l), k, v;

	for (k = 0; k < rounds; k++, step++)
		for (v = 0; v < n; v++) {
			uint64_t half = n >> (k + 1);
			uint64_t give = rd_first(n, v, k) + (((v >> k) & 1) ? 0 : half);
			uint64_t off = block_off(l, give);

			add(b, vreal(l, v), vreal(l, v ^ (1u << k)), step, off, off,
			    block_off(l, give + half) - off, 1);
		}
	for (k = rounds; k-- > 0; step++)
		for (v = 0; v < n; v++) {
			uint64_t own = rd_first(n, v, k + 1), off = block_off(l, own);

			add(b, vreal(l, v), vreal(l, v ^ (1u << k)), step, off, off,
			    block_off(l, own + (n >> (k + 1))) - off, 0);
		}
	fold_out(b, ET_COLL_ALLREDUCE, l, step);
}

/* Reduce-scatter: in step s rank r passes chunk r - s - 1 (which it reduced
 * in step s - 1) to r + 1, so chunk r completes at r in step N - 2.
 * All-gather: in step s rank r passes chunk r - s on. */
static void
build_ring(struct builder *b, enum et_coll_kind kind, const struct layout *l)
{
	uint32_t n = l->n, step = 0, s, r;

	if (kind != ET_COLL_ALLGATHER)
		for (s = 0; s + 1 < n; s++, step++)
			for (r = 0; r < n; r++) {
				uint32_t j = (r + 2 * n - s - 1) % n;

				add(b, r, (r + 1) % n, step, chunk_off(l, j), chunk_off(l, j),
				    chunk_len(l, j), 1);
			}
	if (kind != ET_COLL_REDUCESCATTER)
		for (s = 0; s + 1 < n; s++, step++)
			for (r = 0; r < n; r++) {
				uint32_t j = (r + n - s) % n;

				add(b, r, (r + 1) % n, step, chunk_off(l, j), chunk_off(l, j),
				    chunk_len(l, j), 0);
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

/* Half h of the data (half 0: count / 2 elements) goes up tree h and back
 * down, chunk by chunk, on one clock: a node at depth d sends chunk k up in
 * step k + D - d, one step after its children's chunk k arrived (D: the
 * depth of the trees), and the root's result comes down one level per step
 * from step k + D.  A node's own chunk k is overwritten (step k + D + d -
 * 1) only after it sent it up, and the two halves never touch the same
 * bytes, so the trees share the steps: nchunks + 2D - 1 of them. */
static void
build_dbt(struct builder *b, const struct layout *l, uint64_t cb)
{
	uint64_t half0 = l->size / l->es / 2 * l->es, hoff, hlen, off;
	uint32_t n = l->n, depth = et_ilog2(n), h, i, k;

	for (h = 0; h < 2; h++) {
		hoff = h ? half0 : 0;
		hlen = h ? l->size - half0 : half0;
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
et_coll_build(struct et_coll_sched *s, const struct et_coll_spec *c, const char **why)
{
	struct builder b = {0};
	struct layout l;
	int rc;

	memset(s, 0, sizeof(*s));
	if ((rc = et_coll_check(c, why)) != 0)
		return rc;
	s->nranks = c->nranks;
	s->count = c->count;
	s->kind = c->kind;
	s->algo = c->algo;
	s->dtype = c->dtype;
	s->op = c->op;
	s->dtype_size = et_coll_dtype_size(c->dtype);
	s->size = c->count * s->dtype_size;
	s->rank = calloc(c->nranks, sizeof(*s->rank));
	if (s->rank == NULL)
		goto oom;
	l = layout_of(s);
	if (c->algo == ET_ALGO_A2A)
		build_a2a(&b, c->kind, &l);
	else if (c->algo == ET_ALGO_RD && c->kind == ET_COLL_ALLREDUCE)
		build_rd_near(&b, &l);
	else if (c->algo == ET_ALGO_RD || c->algo == ET_ALGO_RD_FAR)
		build_rd(&b, c->kind, &l);
	else if (c->algo == ET_ALGO_RING)
		build_ring(&b, c->kind, &l);
	else
		build_dbt(&b, &l, dbt_chunk(c->chunk_bytes, s->size, s->dtype_size));
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

/* ---- reduction: element by element, the same code for the runtime and
 * the reference ---- */

/* half and bfloat16 to and from float, rounding to nearest even */
static float
f32_of_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint32_t
bits_of_f32(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float
half_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;

	if (e == 0x1f)
		return f32_of_bits(sign | 0x7f800000u | m << 13);
	if (e == 0) /* zero or subnormal: m x 2^-24 */
		return (sign ? -1.0f : 1.0f) * (float)m * 0x1p-24f;
	return f32_of_bits(sign | (e + 112) << 23 | m << 13);
}

static uint16_t
f32_to_half(float f)
{
	uint32_t u = bits_of_f32(f), sign = (u >> 16) & 0x8000, a = u & 0x7fffffffu;

	if (a >= 0x7f800000u) /* inf, nan */
		return (uint16_t)(sign | 0x7c00 | (a > 0x7f800000u ? 0x200 : 0));
	if (a >= 0x477ff000u) /* rounds past 65504 */
		return (uint16_t)(sign | 0x7c00);
	if (a < 0x38800000u) { /* subnormal half: round m x 2^-24 to an integer m */
		float m = f32_of_bits(a) * 0x1p24f;
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
	return f32_of_bits((uint32_t)h << 16);
}

static uint16_t
f32_to_bf16(float f)
{
	uint32_t u = bits_of_f32(f);

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

uint64_t
et_coll_bytes_sent(const struct et_coll_sched *s, uint32_t rank)
{
	const struct et_coll_rank *k = &s->rank[rank];
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < k->nsends; i++)
		bytes += k->sends[i].len;
	return bytes;
}
