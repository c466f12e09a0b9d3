/* SPDX-License-Identifier: BSD-3-Clause
 * The one pseudo-random generator of the library: xorshift64, seeded by
 * the caller, so every random choice (faults, paths, jitter, entropies)
 * replays from its seed.  The state must never be 0 (seed | 1 is a safe
 * start).
 */
#ifndef ET_RAND_H
#define ET_RAND_H

#include <stdbool.h>
#include <stdint.h>

static inline uint64_t
et_rand_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* True with probability ppm / 10^6; draws nothing when ppm is 0. */
static inline bool
et_rand_ppm(uint64_t *s, uint32_t ppm)
{
	return ppm && et_rand_next(s) % 1000000 < ppm;
}

#endif /* ET_RAND_H */
