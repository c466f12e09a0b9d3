/* SPDX-License-Identifier: BSD-3-Clause
 * Bit arithmetic the layers share, so a schedule and its tests count the
 * same way; and a float's or double's bits (IEEE 754) as an integer and
 * back, without breaking the aliasing rules.
 */
#ifndef ET_BITS_H
#define ET_BITS_H

#include <stdint.h>
#include <string.h>

/* floor(log2(x)); 0 for x = 0, which callers never pass */
static inline uint32_t
et_ilog2(uint32_t x)
{
	uint32_t l = 0;

	while (x >>= 1)
		l++;
	return l;
}

static inline uint32_t
et_f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float
et_bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline uint64_t
et_f64_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static inline double
et_bits_f64(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

#endif
