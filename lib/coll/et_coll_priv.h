/* SPDX-License-Identifier: BSD-3-Clause
 * Where the pieces of a collective's vector lie: shared by the schedule's
 * builder (et_coll.c) and the reference data (et_coll_data.c).  Private to
 * lib/coll.
 */
#ifndef ET_COLL_PRIV_H
#define ET_COLL_PRIV_H

#include <stdint.h>

#include "base/et_bits.h"
#include "coll/et_coll.h"

/* N chunks of count elements (q each, the first rem one more), es bytes an
 * element; and rd's fold: p2, the largest power of two <= N, and fold =
 * N - p2 even ranks folded into the odd rank after them. */
struct layout {
	uint32_t n, p2, fold;
	uint64_t q, rem, es, size;
};

static inline struct layout
layout_of(const struct et_coll_sched *s)
{
	uint32_t p2 = s->nranks ? 1u << et_ilog2(s->nranks) : 0;

	return (struct layout){s->nranks, p2, s->nranks - p2, s->nranks ? s->count / s->nranks : 0,
			       s->nranks ? s->count % s->nranks : 0, s->dtype_size, s->size};
}

/* chunk j's first byte, j in 0..N (chunk_off(N) = size) */
static inline uint64_t
chunk_off(const struct layout *l, uint64_t j)
{
	return (j * l->q + (j < l->rem ? j : l->rem)) * l->es;
}

static inline uint64_t
chunk_len(const struct layout *l, uint64_t j)
{
	return chunk_off(l, j + 1) - chunk_off(l, j);
}

/* All-to-all block r -> j: c((r + j) mod N) elements, so every row (a
 * sender's blocks) and every column (a receiver's) holds each chunk length
 * once.  a2a_folds(x): how many of 0 .. x - 1, taken mod N, are < rem.
 * The block sits at a2a_src() in r's data and a2a_dst() in j's. */
static inline uint64_t
a2a_folds(const struct layout *l, uint64_t x)
{
	return x / l->n * l->rem + (x % l->n < l->rem ? x % l->n : l->rem);
}

static inline uint64_t
a2a_len(const struct layout *l, uint32_t r, uint32_t j)
{
	return chunk_len(l, (r + j) % l->n);
}

static inline uint64_t
a2a_src(const struct layout *l, uint32_t r, uint32_t j)
{
	return (j * l->q + a2a_folds(l, (uint64_t)r + j) - a2a_folds(l, r)) * l->es;
}

static inline uint64_t
a2a_dst(const struct layout *l, uint32_t r, uint32_t j)
{
	return (r * l->q + a2a_folds(l, (uint64_t)r + j) - a2a_folds(l, j)) * l->es;
}

#endif
