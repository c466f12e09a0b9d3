/* SPDX-License-Identifier: BSD-3-Clause
 * RoCEv2 invariant CRC for IPv4 (IBTA annex A17.8).
 *
 * CRC-32 (zlib's crc32) over: 8 bytes of 0xff standing in for the LRH, then
 * the IPv4 header with TOS, TTL and header checksum set to ones, the UDP
 * header with its checksum set to ones, the BTH with resv8a (FECN/BECN)
 * set to ones, then everything after the BTH up to the ICRC.  Stored least
 * significant byte first.
 */
#include <string.h>

#include <isa-l/crc.h>
#include <rte_common.h>

#include "et_csum.h"
#include "et_wire.h"

#define CRC32_POLY_REFL 0xedb88320u
#define GF2_ONE 0x80000000u /* x^0 in the reflected representation */

/* crc32 state after the eight 0xff bytes: rxe's 0xdebb20e3, uncomplemented. */
static uint32_t icrc_seed;
/* x^(8n) and x^(8 * 256n) mod P for n < 256: shifting a CRC register
 * through n zero bytes is a multiplication by x^(8n). */
static uint32_t x8n_lo[256], x8n_hi[256];

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

RTE_INIT(et_icrc_init)
{
	static const uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	int i;

	icrc_seed = crc32_gzip_refl(0, ones, sizeof(ones));
	x8n_lo[0] = x8n_hi[0] = GF2_ONE;
	for (i = 1; i < 256; i++)
		x8n_lo[i] = gf2_mulmod(x8n_lo[i - 1], GF2_ONE >> 8);
	x8n_hi[1] = gf2_mulmod(x8n_lo[255], GF2_ONE >> 8);
	for (i = 2; i < 256; i++)
		x8n_hi[i] = gf2_mulmod(x8n_hi[i - 1], x8n_hi[1]);
}

uint32_t
et_icrc_compute(const uint8_t *ip, size_t l3_len)
{
	uint8_t masked[60 + ET_UDP_HLEN + ET_BTH_LEN];
	size_t ihl = (size_t)(ip[0] & 0xf) * 4;
	size_t hlen = ihl + ET_UDP_HLEN + ET_BTH_LEN;
	uint32_t crc;

	memcpy(masked, ip, hlen);
	masked[1] = 0xff;                       /* TOS: DSCP + ECN */
	masked[8] = 0xff;                       /* TTL */
	masked[10] = masked[11] = 0xff;         /* header checksum */
	masked[ihl + 6] = masked[ihl + 7] = 0xff; /* UDP checksum */
	masked[ihl + ET_UDP_HLEN + 4] = 0xff;   /* BTH resv8a: FECN, BECN */

	crc = crc32_gzip_refl(icrc_seed, masked, hlen);
	return crc32_gzip_refl(crc, ip + hlen, l3_len - hlen - ET_ICRC_LEN);
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
 * bytes that follow it.  Two table lookups and three GF(2) products instead
 * of a pass over the whole payload. */
void
et_icrc_update16(uint8_t *ip, size_t l3_len, size_t off, uint16_t old, uint16_t new)
{
	uint8_t diff[2] = {(uint8_t)((old ^ new) >> 8), (uint8_t)(old ^ new)};
	size_t after = l3_len - ET_ICRC_LEN - off - 2;
	uint8_t *t = ip + l3_len - ET_ICRC_LEN;
	uint32_t reg = 0, delta;
	int i, b;

	for (i = 0; i < 2; i++) {
		reg ^= diff[i];
		for (b = 0; b < 8; b++)
			reg = (reg >> 1) ^ (CRC32_POLY_REFL & -(reg & 1));
	}
	delta = gf2_mulmod(reg, gf2_mulmod(x8n_lo[after & 0xff], x8n_hi[after >> 8]));
	t[0] ^= delta & 0xff;
	t[1] ^= (delta >> 8) & 0xff;
	t[2] ^= (delta >> 16) & 0xff;
	t[3] ^= delta >> 24;
}
