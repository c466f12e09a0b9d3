/* SPDX-License-Identifier: BSD-3-Clause
 * Asking for a span of memory ahead of a pass over all of it.  A core's
 * own prefetcher stops at each 4 KB page, and a 4 KB-MTU endpoint starts a
 * new page (a new frame, the next chunk of a message) with every packet:
 * without this, each packet's first lines wait on memory.
 */
#ifndef ET_PREFETCH_H
#define ET_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_prefetch.h>

static inline void
et_prefetch_span(const void *p, size_t len)
{
	const uint8_t *b = (const uint8_t *)((uintptr_t)p & ~(uintptr_t)(RTE_CACHE_LINE_SIZE - 1));
	const uint8_t *e = (const uint8_t *)p + len;

	for (; b < e; b += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(b);
}

#endif /* ET_PREFETCH_H */
