/* SPDX-License-Identifier: BSD-3-Clause
 * IPv4 / UDP checksum helpers, including the incremental update of RFC 1624
 * that a switch applies after changing TTL, ECN or the UDP source port.
 * All functions work on raw header bytes (network order).
 */
#ifndef ET_CSUM_H
#define ET_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/et_bytes.h"

/* One's complement sum of big-endian 16-bit words, folded to 16 bits. */
static inline uint16_t
et_csum_sum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += et_load16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Header checksum of an IPv4 header of len bytes, as it should be stored
 * (computed with the checksum field taken as zero). */
static inline uint16_t
et_ipv4_csum(const uint8_t *ip, size_t len)
{
	uint32_t sum = et_csum_sum(ip, len);
	sum += (uint16_t)~et_load16(ip + 10);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static inline bool
et_ipv4_csum_ok(const uint8_t *ip, size_t len)
{
	return et_csum_sum(ip, len) == 0xffff;
}

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), for one 16-bit word changing
 * from old to new. */
static inline uint16_t
et_csum_update16(uint16_t csum, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint16_t)~csum;
	sum += (uint16_t)~old;
	sum += new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static inline void
et_ipv4_update_word(uint8_t *ip, size_t off, uint16_t new)
{
	uint16_t old = et_load16(ip + off);
	et_store16(ip + off, new);
	et_store16(ip + 10, et_csum_update16(et_load16(ip + 10), old, new));
}

/* Decrement TTL; returns the new TTL.  The caller drops on 0. */
static inline uint8_t
et_ipv4_dec_ttl(uint8_t *ip)
{
	uint8_t ttl = ip[8];
	if (ttl == 0)
		return 0;
	et_ipv4_update_word(ip, 8, (uint16_t)((ttl - 1) << 8 | ip[9]));
	return ttl - 1;
}

static inline uint8_t
et_ipv4_ecn(const uint8_t *ip)
{
	return ip[1] & 0x3;
}

static inline void
et_ipv4_set_ecn(uint8_t *ip, uint8_t ecn)
{
	et_ipv4_update_word(ip, 0, (uint16_t)(ip[0] << 8 | (ip[1] & ~0x3) | (ecn & 0x3)));
}

/* Set the UDP source port; a non-zero UDP checksum is updated too (RoCEv2
 * senders normally send 0, which means "none" and stays 0). */
static inline void
et_udp_set_sport(uint8_t *udp, uint16_t port)
{
	uint16_t old = et_load16(udp);
	uint16_t csum = et_load16(udp + 6);
	et_store16(udp, port);
	if (csum != 0) {
		csum = et_csum_update16(csum, old, port);
		et_store16(udp + 6, csum == 0 ? 0xffff : csum);
	}
}

#endif /* ET_CSUM_H */
