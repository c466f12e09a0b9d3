/* SPDX-License-Identifier: BSD-3-Clause
 * RoCEv2 invariant CRC for IPv4 (IBTA annex A17.8).
 *
 * CRC-32 (zlib's crc32) over: 8 bytes of 0xff standing in for the LRH, then
 * the IPv4 header with TOS, TTL and header checksum set to ones, the UDP
 * header with its checksum set to ones, the BTH with resv8a (FECN/BECN)
 * set to ones, then everything after the BTH up to the ICRC.  Stored least
 * significant byte first.
 */
#include <stdbool.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_common.h>
#include <rte_cpuflags.h>
#include <wmmintrin.h>

#include "base/et_csum.h"
#include "wire/et_wire.h"

#define CRC32_POLY_REFL 0xedb88320u
#define GF2_ONE 0x80000000u /* x^0 in the reflected representation */

/* crc32 state after the eight 0xff bytes: rxe's 0xdebb20e3, uncomplemented. */
static uint32_t icrc_seed;
/* x^(8n) mod P: shifting a CRC register through n zero bytes multiplies it
 * by x^(8n).  Every n below X8N_DIRECT directly (64 KB), beyond that as a
 * product of x^(8 (n mod 256)) and x^(8 * 256 (n / 256)). */
#define X8N_DIRECT 16384
static uint32_t x8n[X8N_DIRECT], x8n_lo[256], x8n_hi[256];
/* the byte-wise CRC table: a byte entering the register, times x^32 */
static uint32_t byte_tab[256];
static bool have_clmul;

/* a * b mod P over GF(2), bit 31 holding x^0 (the reflected CRC order). */
static uint32_t
gf2_mulmod(uint32_t a, uint32_t b)
{
	uint32_t prod = 0;
	int i;

	for (i = 0; i < 32; i++) {
		prod ^= b & -((a >> (31 - i)) & 1);
		b = (b >> 1) ^ (CRC32_POLY_REFL & -(b & 1));
	}
	return prod;
}

/* The same product with one carry-less multiply: for reflected operands
 * the 63-bit product comes out one bit short of its 64-bit reflected form;
 * its high-degree half (the low 32 bits) is folded back through the byte
 * table as four bytes of a CRC register. */
__attribute__((target("pclmul"))) static uint32_t
clmul_mulmod(uint32_t a, uint32_t b)
{
	__m128i p = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a),
					 _mm_cvtsi32_si128((int)b), 0);
	uint64_t r = (uint64_t)_mm_cvtsi128_si64(p) << 1;
	uint32_t lo = (uint32_t)r, hi = (uint32_t)(r >> 32);
	int i;

	for (i = 0; i < 4; i++)
		lo = byte_tab[lo & 0xff] ^ (lo >> 8);
	return hi ^ lo;
}

RTE_INIT(et_icrc_init)
{
	static const uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint32_t i, r;
	int b;

	icrc_seed = crc32_gzip_refl(0, ones, sizeof(ones));
	for (i = 0; i < 256; i++) {
		for (r = i, b = 0; b < 8; b++)
			r = (r >> 1) ^ (CRC32_POLY_REFL & -(r & 1));
		byte_tab[i] = r;
	}
	x8n[0] = GF2_ONE;
	for (i = 1; i < X8N_DIRECT; i++)
		x8n[i] = gf2_mulmod(x8n[i - 1], GF2_ONE >> 8);
	for (i = 0; i < 256; i++)
		x8n_lo[i] = x8n[i];
	x8n_hi[0] = GF2_ONE;
	for (i = 1; i < 256; i++)
		x8n_hi[i] = gf2_mulmod(x8n_hi[i - 1], x8n[256]);
	have_clmul = rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0;
}

static inline uint32_t
mulmod(uint32_t a, uint32_t b)
{
	return have_clmul ? clmul_mulmod(a, b) : gf2_mulmod(a, b);
}

uint32_t
et_icrc_begin(const uint8_t *ip)
{
	uint8_t masked[60 + ET_UDP_HLEN + ET_BTH_LEN];
	size_t ihl = (size_t)(ip[0] & 0xf) * 4;
	size_t hlen = ihl + ET_UDP_HLEN + ET_BTH_LEN;

	memcpy(masked, ip, hlen);
	masked[1] = 0xff;
	masked[8] = 0xff;
	masked[10] = masked[11] = 0xff;
	masked[ihl + 6] = masked[ihl + 7] = 0xff;
	masked[ihl + ET_UDP_HLEN + 4] = 0xff;
	return crc32_gzip_refl(icrc_seed, masked, hlen);
}

uint32_t
et_icrc_continue(uint32_t crc, const void *buf, size_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

uint32_t
et_icrc_compute(const uint8_t *ip, size_t l3_len)
{
	size_t hlen = (size_t)(ip[0] & 0xf) * 4 + ET_UDP_HLEN + ET_BTH_LEN;

	return crc32_gzip_refl(et_icrc_begin(ip), ip + hlen, l3_len - hlen - ET_ICRC_LEN);
}

void
et_icrc_fill(uint8_t *ip, size_t l3_len)
{
	uint32_t crc = et_icrc_compute(ip, l3_len);
	uint8_t *t = ip + l3_len - ET_ICRC_LEN;

	t[0] = crc & 0xff;
	t[1] = (crc >> 8) & 0xff;
	t[2] = (crc >> 16) & 0xff;
	t[3] = crc >> 24;
}

/* CRC is linear: changing bytes D of a message changes its CRC by the raw
 * (zero-init, no final xor) CRC of the difference, carried through the
 * bytes that follow it.  A few table lookups and one carry-less multiply
 * instead of a pass over the whole payload. */
void
et_icrc_update16(uint8_t *ip, size_t l3_len, size_t off, uint16_t old, uint16_t new)
{
	uint16_t diff = old ^ new;
	size_t after = l3_len - ET_ICRC_LEN - off - 2;
	uint8_t *t = ip + l3_len - ET_ICRC_LEN;
	uint32_t reg, delta, shift;

	reg = byte_tab[diff >> 8];
	reg = byte_tab[(reg ^ diff) & 0xff] ^ (reg >> 8);
	shift = after < X8N_DIRECT ? x8n[after]
				   : mulmod(x8n_lo[after & 0xff], x8n_hi[after >> 8]);
	delta = mulmod(reg, shift);
	t[0] ^= delta & 0xff;
	t[1] ^= (delta >> 8) & 0xff;
	t[2] ^= (delta >> 16) & 0xff;
	t[3] ^= delta >> 24;
}
