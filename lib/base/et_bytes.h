/* SPDX-License-Identifier: BSD-3-Clause
 * Big-endian (network order) loads and stores on raw header bytes, for
 * code that parses and builds frames without DPDK's structs.
 */
#ifndef ET_BYTES_H
#define ET_BYTES_H

#include <stdint.h>

static inline uint16_t
et_load16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void
et_store16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static inline uint32_t
et_load32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void
et_store32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = (v >> 16) & 0xff;
	p[2] = (v >> 8) & 0xff;
	p[3] = v & 0xff;
}

static inline uint64_t
et_load64(const uint8_t *p)
{
	return (uint64_t)et_load32(p) << 32 | et_load32(p + 4);
}

static inline void
et_store64(uint8_t *p, uint64_t v)
{
	et_store32(p, (uint32_t)(v >> 32));
	et_store32(p + 4, (uint32_t)v);
}

#endif /* ET_BYTES_H */
