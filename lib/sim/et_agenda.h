/* SPDX-License-Identifier: BSD-3-Clause
 * The agenda of a fabric in virtual time: which nodes run in this pass and
 * when the others next have something due, so that a pass costs what its
 * work costs and not what the fabric's size does.
 *
 * A node is on the agenda (its bit set) when its last turn left it more
 * to do at the same instant, or when its next event has come (a frame
 * arriving is one: the sender says so a latency ahead); a pass
 * visits the set bits in node order, and a bit set during the pass for a
 * later node is visited in the same pass (the order every run replays).
 * Timed wake-ups sit in an indexed min-heap (base/et_heap): each node at
 * most once, moved when its time changes.
 */
#ifndef ET_AGENDA_H
#define ET_AGENDA_H

#include <stdbool.h>
#include <stdint.h>

#include "base/et_heap.h"

struct et_agenda {
	uint32_t n;          /* nodes */
	uint64_t *bits;      /* on the agenda: visit in this or the next pass */
	struct et_heap wake; /* per node: its timed wake-up, if any */
};

/* All n nodes start on the agenda.  -ENOMEM. */
int et_agenda_init(struct et_agenda *a, uint32_t n);
void et_agenda_free(struct et_agenda *a);

/* Node i's next event is at t (UINT64_MAX: none), as it says after its
 * turn. */
void et_agenda_wake_at(struct et_agenda *a, uint32_t i, uint64_t t);

/* Put every node whose wake-up is at or before now on the agenda. */
void et_agenda_due(struct et_agenda *a, uint64_t now);

/* When the next pass has something to do: now if a node is on the agenda,
 * else the earliest wake-up; UINT64_MAX if nothing is left. */
uint64_t et_agenda_next(const struct et_agenda *a, uint64_t now);

static inline void
et_agenda_mark(struct et_agenda *a, uint32_t i)
{
	a->bits[i / 64] |= 1ull << (i % 64);
}

/* Node i has something due at t (a frame arrives): wake it then, unless
 * it wakes earlier anyway. */
static inline void
et_agenda_wake_by(struct et_agenda *a, uint32_t i, uint64_t t)
{
	if (t < et_heap_at(&a->wake, i))
		et_agenda_wake_at(a, i, t);
}

/* The first node on the agenda at or after from, taken off it; a->n if
 * none.  Reads the bits afresh: what the last turn set is seen. */
static inline uint32_t
et_agenda_take(struct et_agenda *a, uint32_t from)
{
	uint32_t w = from / 64;
	uint64_t m;

	if (from >= a->n)
		return a->n;
	m = a->bits[w] & (~0ull << (from % 64));
	while (m == 0) {
		if (++w * 64 >= a->n)
			return a->n;
		m = a->bits[w];
	}
	from = w * 64 + (uint32_t)__builtin_ctzll(m);
	a->bits[w] &= ~(1ull << (from % 64));
	return from;
}

#endif /* ET_AGENDA_H */
