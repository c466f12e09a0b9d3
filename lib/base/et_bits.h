/* SPDX-License-Identifier: BSD-3-Clause
 * Bit arithmetic the layers share, so a schedule and its tests count the
 * same way.
 */
#ifndef ET_BITS_H
#define ET_BITS_H

#include <stdint.h>

/* floor(log2(x)); 0 for x = 0, which callers never pass */
static inline uint32_t
et_ilog2(uint32_t x)
{
	uint32_t l = 0;

	while (x >>= 1)
		l++;
	return l;
}

#endif
