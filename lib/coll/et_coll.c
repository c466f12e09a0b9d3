/* SPDX-License-Identifier: BSD-3-Clause
 * A collective's names, the one judgement of what can run, and its
 * schedule: every rank's sends and receives, built by its algorithm
 * (et_coll_data.c does the bytes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/et_bits.h"
#include "coll/et_coll.h"
#include "coll/et_coll_priv.h"

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

/* ---- where the pieces of the vector lie (et_coll_priv.h) ---- */

void
et_coll_chunk(const struct et_coll_sched *s, uint32_t j, uint64_t *off, uint64_t *len)
{
	struct layout l = layout_of(s);

	*off = chunk_off(&l, j);
	*len = chunk_len(&l, j);
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

uint64_t
et_coll_bytes_sent(const struct et_coll_sched *s, uint32_t rank)
{
	const struct et_coll_rank *k = &s->rank[rank];
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < k->nsends; i++)
		bytes += k->sends[i].len;
	return bytes;
}
