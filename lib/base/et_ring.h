/* SPDX-License-Identifier: BSD-3-Clause
 * A ring that grows: elements at positions head .. tail (counted without
 * end, the one at p in slot p % cap), twice the room when full.  The
 * positions stay what they were, so a position kept outside (an event's,
 * by its connection) still finds its element.  lib/cm's queues, the
 * provider's completion and event queues, the multipath QP's queues of
 * ACKs and answers owed, and our libibverbs's completion channels.
 */
#ifndef ET_RING_H
#define ET_RING_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ET_RING_FIRST 16u /* the room of a ring that had none */

/* *ring of *cap elements of size elem (0: none yet, then first) with room
 * for twice as many, at most max; false (the ring as it was) when it may
 * not grow or there is no memory.  Powers of 2 throughout keep slot p at
 * p & (cap - 1) for a caller that masks. */
static inline bool
et_ring_grow_from(void **ring, uint32_t *cap, uint32_t head, uint32_t tail, size_t elem,
		  uint32_t first, uint32_t max)
{
	uint32_t ncap = *cap ? 2 * *cap : first;
	char *r;

	if (ncap > max || ncap < *cap || (r = malloc((size_t)ncap * elem)) == NULL)
		return false;
	for (uint32_t p = head; p != tail; p++)
		memcpy(r + (p % ncap) * elem, (char *)*ring + (p % *cap) * elem, elem);
	free(*ring);
	*ring = r;
	*cap = ncap;
	return true;
}

/* Room for one more at *tail, the ring grown when full (as
 * et_ring_grow_from): the slot of position *tail, *tail moved past it;
 * NULL, nothing changed, when it may not grow or there is no memory. */
static inline void *
et_ring_push_from(void **ring, uint32_t *cap, uint32_t head, uint32_t *tail, size_t elem,
		  uint32_t first, uint32_t max)
{
	if (*tail - head == *cap && !et_ring_grow_from(ring, cap, head, *tail, elem, first, max))
		return NULL;
	return (char *)*ring + ((*tail)++ & (*cap - 1)) * elem;
}

/* et_ring_push_from with ET_RING_FIRST. */
static inline void *
et_ring_push(void **ring, uint32_t *cap, uint32_t head, uint32_t *tail, size_t elem,
	     uint32_t max)
{
	return et_ring_push_from(ring, cap, head, tail, elem, ET_RING_FIRST, max);
}

#endif
