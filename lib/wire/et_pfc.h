/* SPDX-License-Identifier: BSD-3-Clause
 * PAUSE (802.3x) and PFC (802.1Qbb) frames: the switch sends and honours
 * them, and so does the host NIC.  One lossless priority is enough here.
 */
#ifndef ET_PFC_H
#define ET_PFC_H

#include <stdint.h>

#include <rte_ether.h>

#define ET_ETHER_TYPE_MAC_CONTROL 0x8808
#define ET_PFC_PRIO 3            /* RoCE's customary lossless priority */
#define ET_PFC_QUANTA_MAX 0xffff /* a quantum is 512 bit times */
#define ET_PFC_FRAME_LEN 60

struct rte_mbuf;
struct rte_mempool;

/* A PFC frame pausing ET_PFC_PRIO for quanta (0: resume); NULL if the pool
 * is empty. */
struct rte_mbuf *et_pfc_frame(struct rte_mempool *mp, const struct rte_ether_addr *src,
			      uint16_t quanta);

/* A MAC control frame: 1 and *quanta if it pauses (or resumes) our
 * priority, 0 if it is for other priorities, -1 if malformed or not a
 * PAUSE/PFC opcode. */
int et_pfc_parse(const uint8_t *f, uint32_t len, uint16_t *quanta);

/* Nanoseconds a pause of quanta lasts on a link of rate_bps (0: 100G). */
static inline uint64_t
et_pfc_pause_ns(uint16_t quanta, uint64_t rate_bps)
{
	return (uint64_t)quanta * 512 * 1000000000ull /
	       (rate_bps ? rate_bps : 100000000000ull);
}

#endif /* ET_PFC_H */
