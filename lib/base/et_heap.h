/* SPDX-License-Identifier: BSD-3-Clause
 * An indexed min-heap of deadlines: ids 0 .. ids - 1, each in the heap at
 * most once with its time, moved when its time changes.  What a scan of
 * every id would find (the earliest deadline, the ids due by now) in time
 * that grows with the log of how many are in it.  Ties go to the smaller
 * id, so the order in which ids come due replays exactly.
 *
 * Its users: the CM's timers (one per connection slot) and a virtual-time
 * lane's wake-ups (one per node, sim/et_agenda).  Control path: it may
 * allocate at init and when it grows, never on a set.
 */
#ifndef ET_HEAP_H
#define ET_HEAP_H

#include <stdint.h>

#define ET_HEAP_NONE UINT32_MAX

struct et_heap {
	uint64_t *at;    /* per id: its time; UINT64_MAX: not in the heap */
	uint32_t *heap;  /* ids in the heap, the earliest first */
	uint32_t *pos;   /* per id: its index in heap; ET_HEAP_NONE: not there */
	uint32_t n;      /* ids in the heap */
};

/* Room for ids 0 .. ids - 1, none in the heap.  0 or -ENOMEM. */
int et_heap_init(struct et_heap *h, uint32_t ids);
void et_heap_free(struct et_heap *h);

/* Room for ids up to ids - 1 (more than before: old_ids); what is in the
 * heap stays.  0 or -ENOMEM (then the heap is as it was). */
int et_heap_grow(struct et_heap *h, uint32_t old_ids, uint32_t ids);

/* id's time is at (UINT64_MAX: it leaves the heap). */
void et_heap_set(struct et_heap *h, uint32_t id, uint64_t at);

static inline uint64_t
et_heap_at(const struct et_heap *h, uint32_t id)
{
	return h->at[id];
}

/* The earliest time in the heap; UINT64_MAX when it is empty. */
static inline uint64_t
et_heap_first_at(const struct et_heap *h)
{
	return h->n ? h->at[h->heap[0]] : UINT64_MAX;
}

/* The id of the earliest time, taken out of the heap, if that time is at
 * or before now; ET_HEAP_NONE otherwise. */
uint32_t et_heap_pop_due(struct et_heap *h, uint64_t now);

#endif /* ET_HEAP_H */
