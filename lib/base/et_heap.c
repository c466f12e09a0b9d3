/* SPDX-License-Identifier: BSD-3-Clause
 * The indexed min-heap: a binary heap of ids ordered by (time, id), each
 * id's place in pos[] so that a time can be moved or taken out without a
 * search.
 */
#include "base/et_heap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int
et_heap_init(struct et_heap *h, uint32_t ids)
{
	memset(h, 0, sizeof(*h));
	return et_heap_grow(h, 0, ids);
}

void
et_heap_free(struct et_heap *h)
{
	free(h->at);
	free(h->heap);
	free(h->pos);
	memset(h, 0, sizeof(*h));
}

int
et_heap_grow(struct et_heap *h, uint32_t old_ids, uint32_t ids)
{
	size_t k = ids ? ids : 1;
	uint64_t *at = realloc(h->at, k * sizeof(*at));
	uint32_t *heap, *pos;

	/* each array is the heap's as soon as it moved: a later failure
	 * leaves the heap whole, only some arrays bigger than needed */
	if (at == NULL)
		return -ENOMEM;
	h->at = at;
	if ((heap = realloc(h->heap, k * sizeof(*heap))) == NULL)
		return -ENOMEM;
	h->heap = heap;
	if ((pos = realloc(h->pos, k * sizeof(*pos))) == NULL)
		return -ENOMEM;
	h->pos = pos;
	for (uint32_t i = old_ids; i < ids; i++) {
		h->at[i] = UINT64_MAX;
		h->pos[i] = ET_HEAP_NONE;
	}
	return 0;
}

/* a before b: the earlier time, the smaller id on a tie */
static inline bool
before(const struct et_heap *h, uint32_t a, uint32_t b)
{
	return h->at[a] < h->at[b] || (h->at[a] == h->at[b] && a < b);
}

static inline void
place(struct et_heap *h, uint32_t k, uint32_t id)
{
	h->heap[k] = id;
	h->pos[id] = k;
}

static void
sift_up(struct et_heap *h, uint32_t k)
{
	uint32_t id = h->heap[k];

	while (k > 0 && before(h, id, h->heap[(k - 1) / 2])) {
		place(h, k, h->heap[(k - 1) / 2]);
		k = (k - 1) / 2;
	}
	place(h, k, id);
}

static void
sift_down(struct et_heap *h, uint32_t k)
{
	uint32_t id = h->heap[k], c;

	while ((c = 2 * k + 1) < h->n) {
		if (c + 1 < h->n && before(h, h->heap[c + 1], h->heap[c]))
			c++;
		if (!before(h, h->heap[c], id))
			break;
		place(h, k, h->heap[c]);
		k = c;
	}
	place(h, k, id);
}

static void
remove_at(struct et_heap *h, uint32_t k)
{
	uint32_t id = h->heap[k], last = h->heap[--h->n];

	h->pos[id] = ET_HEAP_NONE;
	h->at[id] = UINT64_MAX;
	if (k == h->n)
		return;
	/* the last one fills the hole, then goes whichever way it belongs */
	place(h, k, last);
	sift_down(h, k);
	sift_up(h, h->pos[last]);
}

void
et_heap_set(struct et_heap *h, uint32_t id, uint64_t at)
{
	uint64_t was = h->at[id];

	if (h->pos[id] == ET_HEAP_NONE) {
		if (at == UINT64_MAX)
			return;
		h->at[id] = at;
		place(h, h->n++, id);
		sift_up(h, h->pos[id]);
	} else if (at == was) {
		return;
	} else if (at == UINT64_MAX) {
		remove_at(h, h->pos[id]);
	} else {
		h->at[id] = at;
		if (at < was)
			sift_up(h, h->pos[id]);
		else
			sift_down(h, h->pos[id]);
	}
}

uint32_t
et_heap_pop_due(struct et_heap *h, uint64_t now)
{
	uint32_t id;

	if (h->n == 0 || h->at[h->heap[0]] > now)
		return ET_HEAP_NONE;
	id = h->heap[0];
	remove_at(h, 0);
	return id;
}
