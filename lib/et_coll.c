/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>

#include "et_coll.h"

static const char *const kind_names[] = {"allreduce", "allgather", "reducescatter", "alltoall"};
static const char *const algo_names[] = {"a2a", "rd", "ring", "dbt"};

int
et_coll_parse_kind(const char *name, enum et_coll_kind *out)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(name, kind_names[i]) == 0) {
			*out = (enum et_coll_kind)i;
			return 0;
		}
	return -1;
}

int
et_coll_parse_algo(const char *name, enum et_coll_algo *out)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(name, algo_names[i]) == 0) {
			*out = (enum et_coll_algo)i;
			return 0;
		}
	return -1;
}

const char *
et_coll_kind_name(enum et_coll_kind kind)
{
	return kind_names[kind];
}

const char *
et_coll_algo_name(enum et_coll_algo algo)
{
	return algo_names[algo];
}

/* ---- building: transfers are added round by round; round k is step k
 * of every rank ---- */

static int
begin_round(struct et_coll_sched *s)
{
	for (uint32_t r = 0; r < s->nranks; r++) {
		struct et_coll_rank *k = &s->rank[r];
		struct et_coll_step *st = realloc(k->steps, (k->nsteps + 1) * sizeof(*st));

		if (st == NULL)
			return -1;
		k->steps = st;
		st[k->nsteps++] = (struct et_coll_step){k->nsends, 0, k->nrecvs, 0};
	}
	return 0;
}

static int
xfer(struct et_coll_sched *s, uint32_t src, uint32_t dst, uint64_t src_off, uint64_t data_off,
     uint64_t len, int reduce)
{
	struct et_coll_rank *a = &s->rank[src], *b = &s->rank[dst];

	if (len == 0 || src == dst)
		return 0;
	if (a->nsends == a->cap_sends) {
		uint32_t n = a->cap_sends ? 2 * a->cap_sends : 8;
		struct et_coll_send *p = realloc(a->sends, n * sizeof(*p));

		if (p == NULL)
			return -1;
		a->sends = p;
		a->cap_sends = n;
	}
	if (b->nrecvs == b->cap_recvs) {
		uint32_t n = b->cap_recvs ? 2 * b->cap_recvs : 8;
		struct et_coll_recv *p = realloc(b->recvs, n * sizeof(*p));

		if (p == NULL)
			return -1;
		b->recvs = p;
		b->cap_recvs = n;
	}
	a->sends[a->nsends++] = (struct et_coll_send){dst, b->nrecvs, src_off, len};
	b->recvs[b->nrecvs++] = (struct et_coll_recv){src, b->staging_bytes, data_off, len,
						      (uint8_t)reduce};
	b->staging_bytes += len;
	a->steps[a->nsteps - 1].nsend++;
	b->steps[b->nsteps - 1].nrecv++;
	return 0;
}

#define TRY(x)                     \
	do {                       \
		if ((x) != 0)      \
			return -1; \
	} while (0)

/* chunk c of n equal chunks of the vector */
static inline uint64_t
chunk(const struct et_coll_sched *s, uint64_t c)
{
	return c * (s->size / s->nranks);
}

static int
build_a2a(struct et_coll_sched *s)
{
	uint32_t n = s->nranks, r, j;
	uint64_t c = s->size / n;

	if (s->kind != ET_COLL_ALLGATHER) {
		/* reduce-scatter (or the exchange of all-to-all): chunk j to rank j */
		TRY(begin_round(s));
		for (r = 0; r < n; r++)
			for (j = 1; j < n; j++) {
				uint32_t d = (r + j) % n; /* every rank starts with its neighbour */

				TRY(xfer(s, r, d, chunk(s, d),
					 s->kind == ET_COLL_ALLTOALL ? chunk(s, r) : chunk(s, d), c,
					 s->kind != ET_COLL_ALLTOALL));
			}
	}
	if (s->kind == ET_COLL_ALLREDUCE || s->kind == ET_COLL_ALLGATHER) {
		TRY(begin_round(s));
		for (r = 0; r < n; r++)
			for (j = 1; j < n; j++)
				TRY(xfer(s, r, (r + j) % n, chunk(s, r), chunk(s, r), c, 0));
	}
	return 0;
}

/* Rabenseifner: reduce-scatter by recursive halving, all-gather by recursive
 * doubling; rank r ends the halving holding chunk r. */
static int
build_rd(struct et_coll_sched *s)
{
	uint32_t n = s->nranks, r, d;

	if (s->kind != ET_COLL_ALLGATHER)
		for (d = n / 2; d >= 1; d /= 2) {
			TRY(begin_round(s));
			for (r = 0; r < n; r++) {
				/* r holds the block of 2d chunks around it; keeps the half
				 * its bit d names, sends the other to r ^ d */
				uint64_t lo = r / (2 * d) * (2 * d), keep = lo + (r & d), give = lo + (d - (r & d));

				(void)keep;
				TRY(xfer(s, r, r ^ d, chunk(s, give), chunk(s, give),
					 d * (s->size / n), 1));
			}
		}
	if (s->kind == ET_COLL_ALLREDUCE || s->kind == ET_COLL_ALLGATHER)
		for (d = 1; d < n; d *= 2) {
			TRY(begin_round(s));
			for (r = 0; r < n; r++) {
				uint64_t lo = r / d * d; /* r holds d chunks from lo */

				TRY(xfer(s, r, r ^ d, chunk(s, lo), chunk(s, lo), d * (s->size / n), 0));
			}
		}
	return 0;
}

/* Ring: in reduce-scatter round k rank r passes chunk r - k - 1 on, so rank
 * r ends with chunk r; in all-gather round k it passes chunk r - k. */
static int
build_ring(struct et_coll_sched *s)
{
	uint32_t n = s->nranks, r, k;
	uint64_t c = s->size / n;

	if (s->kind != ET_COLL_ALLGATHER)
		for (k = 0; k + 1 < n; k++) {
			TRY(begin_round(s));
			for (r = 0; r < n; r++)
				TRY(xfer(s, r, (r + 1) % n, chunk(s, (r + 2 * n - k - 1) % n),
					 chunk(s, (r + 2 * n - k - 1) % n), c, 1));
		}
	if (s->kind == ET_COLL_ALLREDUCE || s->kind == ET_COLL_ALLGATHER)
		for (k = 0; k + 1 < n; k++) {
			TRY(begin_round(s));
			for (r = 0; r < n; r++)
				TRY(xfer(s, r, (r + 1) % n, chunk(s, (r + n - k) % n),
					 chunk(s, (r + n - k) % n), c, 0));
		}
	return 0;
}

/* ---- double binary tree ---- */

struct tree {
	int32_t *parent;
	uint32_t *height, *depth, root, max_h, max_d;
};

/* In-order tree over positions lo..hi: the middle is the root. */
static int32_t
build_inorder(struct tree *t, const uint32_t *rank_at, int32_t lo, int32_t hi, int32_t parent,
	      uint32_t depth)
{
	int32_t mid, l, r;
	uint32_t h = 0, me;

	if (lo > hi)
		return -1;
	mid = (lo + hi) / 2;
	me = rank_at[mid];
	t->parent[me] = parent < 0 ? -1 : (int32_t)rank_at[parent];
	t->depth[me] = depth;
	l = build_inorder(t, rank_at, lo, mid - 1, mid, depth + 1);
	r = build_inorder(t, rank_at, mid + 1, hi, mid, depth + 1);
	if (l >= 0 && t->height[rank_at[l]] + 1 > h)
		h = t->height[rank_at[l]] + 1;
	if (r >= 0 && t->height[rank_at[r]] + 1 > h)
		h = t->height[rank_at[r]] + 1;
	t->height[me] = h;
	if (h > t->max_h)
		t->max_h = h;
	if (depth > t->max_d)
		t->max_d = depth;
	return mid;
}

/* Tree 0 is the in-order tree of ranks 0..n-1; tree 1 the same over the
 * ranks mirrored (n-1-r): the interior ranks of one are mostly leaves of
 * the other, as in NCCL, so both halves keep every link busy. */
static int
build_dbt(struct et_coll_sched *s, uint64_t chunk_bytes)
{
	uint32_t n = s->nranks, r, t, nround;
	uint64_t half[2], base[2], nchunks[2], cb[2], maxc = 0;
	struct tree tr[2];
	uint32_t *rank_at = malloc(n * sizeof(*rank_at));
	int rc = -1;

	memset(tr, 0, sizeof(tr));
	half[0] = s->size / 2 / 4 * 4;
	half[1] = s->size - half[0];
	base[0] = 0;
	base[1] = half[0];
	for (t = 0; t < 2; t++) {
		tr[t].parent = malloc(n * sizeof(int32_t));
		tr[t].height = calloc(n, sizeof(uint32_t));
		tr[t].depth = calloc(n, sizeof(uint32_t));
		if (!rank_at || !tr[t].parent || !tr[t].height || !tr[t].depth)
			goto out;
		for (r = 0; r < n; r++)
			rank_at[r] = t ? n - 1 - r : r;
		tr[t].root = rank_at[build_inorder(&tr[t], rank_at, 0, (int32_t)n - 1, -1, 0)];
		cb[t] = chunk_bytes ? chunk_bytes : (half[t] / 16 + 3) / 4 * 4;
		if (cb[t] == 0)
			cb[t] = 4;
		nchunks[t] = (half[t] + cb[t] - 1) / cb[t];
	}
	/* a node of height h sends chunk c up in round c + h; the root has it
	 * after round c + H - 1 and sends it down in round c + H; a node at
	 * depth d forwards it down in round c + H + d */
	nround = 0;
	for (t = 0; t < 2; t++) {
		uint64_t last = nchunks[t] ? nchunks[t] - 1 + tr[t].max_h + tr[t].max_d : 0;

		if (nchunks[t] && last + 1 > maxc)
			maxc = last + 1;
	}
	for (nround = 0; nround < maxc; nround++) {
		if (begin_round(s))
			goto out;
		for (t = 0; t < 2; t++)
			for (r = 0; r < n; r++) {
				const struct tree *x = &tr[t];
				int64_t c;

				/* up */
				c = (int64_t)nround - x->height[r];
				if (x->parent[r] >= 0 && c >= 0 && (uint64_t)c < nchunks[t]) {
					uint64_t off = base[t] + (uint64_t)c * cb[t];
					uint64_t len = off + cb[t] > base[t] + half[t] ? base[t] + half[t] - off : cb[t];

					if (xfer(s, r, (uint32_t)x->parent[r], off, off, len, 1))
						goto out;
				}
				/* down: r forwards chunk c to its children in round c + H + d */
				c = (int64_t)nround - x->max_h - x->depth[r];
				if (c >= 0 && (uint64_t)c < nchunks[t]) {
					uint64_t off = base[t] + (uint64_t)c * cb[t];
					uint64_t len = off + cb[t] > base[t] + half[t] ? base[t] + half[t] - off : cb[t];

					for (uint32_t ch = 0; ch < n; ch++)
						if (x->parent[ch] == (int32_t)r &&
						    xfer(s, r, ch, off, off, len, 0))
							goto out;
				}
			}
	}
	rc = 0;
out:
	for (t = 0; t < 2; t++) {
		free(tr[t].parent);
		free(tr[t].height);
		free(tr[t].depth);
	}
	free(rank_at);
	return rc;
}

int
et_coll_build(struct et_coll_sched *s, enum et_coll_kind kind, enum et_coll_algo algo,
	      uint32_t nranks, uint64_t size, uint64_t chunk_bytes, const char **why)
{
	int rc;

	memset(s, 0, sizeof(*s));
	*why = NULL;
	if (nranks == 0)
		*why = "a collective needs at least one rank";
	else if (size == 0 || size % (4ull * nranks))
		*why = "the size must be a multiple of 4 bytes x the number of ranks";
	else if (algo == ET_ALGO_RD && (nranks & (nranks - 1)))
		*why = "rd (recursive halving/doubling) needs a power-of-two number of ranks";
	else if (kind == ET_COLL_ALLTOALL && algo != ET_ALGO_A2A)
		*why = "all-to-all runs with --algo a2a only";
	else if (algo == ET_ALGO_DBT && kind != ET_COLL_ALLREDUCE)
		*why = "dbt (double binary tree) is an all-reduce algorithm";
	else if (chunk_bytes % 4)
		*why = "the dbt chunk must be a multiple of 4 bytes";
	if (*why)
		return -1;
	s->nranks = nranks;
	s->size = size;
	s->kind = kind;
	s->algo = algo;
	s->dtype_size = 4;
	s->rank = calloc(nranks, sizeof(*s->rank));
	if (s->rank == NULL) {
		*why = "out of memory";
		return -1;
	}
	if (nranks == 1)
		return 0;
	switch (algo) {
	case ET_ALGO_A2A: rc = build_a2a(s); break;
	case ET_ALGO_RD: rc = build_rd(s); break;
	case ET_ALGO_RING: rc = build_ring(s); break;
	default: rc = build_dbt(s, chunk_bytes); break;
	}
	if (rc) {
		et_coll_free(s);
		*why = "out of memory";
		return -1;
	}
	for (uint32_t r = 0; r < nranks; r++)
		if (s->rank[r].staging_bytes > s->staging_bytes)
			s->staging_bytes = s->rank[r].staging_bytes;
	return 0;
}

void
et_coll_free(struct et_coll_sched *s)
{
	for (uint32_t r = 0; s->rank && r < s->nranks; r++) {
		free(s->rank[r].sends);
		free(s->rank[r].recvs);
		free(s->rank[r].steps);
	}
	free(s->rank);
	memset(s, 0, sizeof(*s));
}

/* ---- data ---- */

void
et_coll_apply(const struct et_coll_recv *r, uint8_t *data, const uint8_t *staging,
	      enum et_coll_dtype dt)
{
	uint8_t *d = data + r->data_off;
	const uint8_t *src = staging + r->staging_off;

	if (!r->reduce) {
		memcpy(d, src, r->len);
		return;
	}
	for (uint64_t i = 0; i + 4 <= r->len; i += 4) {
		if (dt == ET_DT_FLOAT32) {
			float a, b;

			memcpy(&a, d + i, 4);
			memcpy(&b, src + i, 4);
			a += b;
			memcpy(d + i, &a, 4);
		} else {
			uint32_t a, b; /* wrap-around sums, as int32 on the wire */

			memcpy(&a, d + i, 4);
			memcpy(&b, src + i, 4);
			a += b;
			memcpy(d + i, &a, 4);
		}
	}
}

static uint32_t
value(uint32_t rank, uint64_t i, uint64_t seed)
{
	uint64_t x = (rank + 1) * 0x9e3779b97f4a7c15ull ^ (i + 1) * 0xbf58476d1ce4e5b9ull ^ seed;

	x ^= x >> 31;
	x *= 0x94d049bb133111ebull;
	return (uint32_t)(x >> 32);
}

static void
put(uint8_t *p, uint32_t v, enum et_coll_dtype dt)
{
	if (dt == ET_DT_FLOAT32) {
		float f = (float)(v % 1024); /* sums of small integers are exact */

		memcpy(p, &f, 4);
	} else {
		memcpy(p, &v, 4);
	}
}

static void
add(uint8_t *p, uint32_t v, enum et_coll_dtype dt)
{
	if (dt == ET_DT_FLOAT32) {
		float f;

		memcpy(&f, p, 4);
		f += (float)(v % 1024);
		memcpy(p, &f, 4);
	} else {
		uint32_t a;

		memcpy(&a, p, 4);
		a += v;
		memcpy(p, &a, 4);
	}
}

void
et_coll_fill(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, enum et_coll_dtype dt,
	     uint8_t *data)
{
	for (uint64_t i = 0; i < s->size / 4; i++)
		put(data + 4 * i, value(rank, i, seed), dt);
}

void
et_coll_checked_range(const struct et_coll_sched *s, uint32_t rank, uint64_t *off, uint64_t *len)
{
	*off = 0;
	*len = s->size;
	if (s->kind == ET_COLL_REDUCESCATTER) {
		*off = chunk(s, rank);
		*len = s->size / s->nranks;
	}
}

void
et_coll_expect(const struct et_coll_sched *s, uint32_t rank, uint64_t seed, enum et_coll_dtype dt,
	       uint8_t *out)
{
	uint64_t words = s->size / 4, per = words / s->nranks;

	for (uint64_t i = 0; i < words; i++) {
		uint32_t owner = (uint32_t)(i / per);

		switch (s->kind) {
		case ET_COLL_ALLGATHER:
			put(out + 4 * i, value(owner, i, seed), dt);
			break;
		case ET_COLL_ALLTOALL:
			/* chunk `owner` came from rank owner's chunk `rank` */
			put(out + 4 * i, value(owner, rank * per + i % per, seed), dt);
			break;
		default:
			put(out + 4 * i, 0, dt);
			for (uint32_t r = 0; r < s->nranks; r++)
				add(out + 4 * i, value(r, i, seed), dt);
		}
	}
}

uint64_t
et_coll_bytes_sent(const struct et_coll_sched *s, uint32_t rank)
{
	uint64_t b = 0;

	for (uint32_t i = 0; i < s->rank[rank].nsends; i++)
		b += s->rank[rank].sends[i].len;
	return b;
}
