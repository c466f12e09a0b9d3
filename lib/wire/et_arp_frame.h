/* SPDX-License-Identifier: BSD-3-Clause
 * ARP frames (RFC 826, Ethernet + IPv4 only): parse and build, on plain
 * byte buffers.  The one ARP wire format of the project: the endpoint's
 * responder and resolver (host/et_arp) and the switch's gateway answer
 * (switch/et_switch) both use it.  Pure; what to answer is theirs.
 */
#ifndef ET_ARP_FRAME_H
#define ET_ARP_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define ET_ETHER_TYPE_ARP 0x0806
#define ET_ARP_OP_REQUEST 1
#define ET_ARP_OP_REPLY 2
#define ET_ARP_MIN_LEN 42    /* 14 + 28: what a kernel sends, unpadded */
#define ET_ARP_FRAME_LEN 60  /* what we send: padded to the Ethernet minimum */

/* An ARP message's fields; addresses in host order. */
struct et_arp_msg {
	uint16_t op;       /* ET_ARP_OP_REQUEST or ET_ARP_OP_REPLY */
	uint8_t sha[6];    /* sender */
	uint32_t spa;
	uint8_t tha[6];    /* target */
	uint32_t tpa;
};

/* An Ethernet frame of EtherType 0x0806 into m: 0, or -1 when it is
 * truncated, of another EtherType, not Ethernet/IPv4 (htype, ptype, hlen,
 * plen) or neither request nor reply. */
int et_arp_parse(const uint8_t *f, size_t len, struct et_arp_msg *m);

/* m as a frame from eth_src to eth_dst into out, zero-padded to
 * ET_ARP_FRAME_LEN; that length, or 0 when cap is too small. */
int et_arp_build(uint8_t *out, size_t cap, const uint8_t eth_dst[6], const uint8_t eth_src[6],
		 const struct et_arp_msg *m);

/* The reply to request req from the owner of (mac, ip): unicast back to
 * the asker; ET_ARP_FRAME_LEN, or 0 when cap is too small. */
int et_arp_build_reply(uint8_t *out, size_t cap, const struct et_arp_msg *req,
		       const uint8_t mac[6], uint32_t ip);

#endif /* ET_ARP_FRAME_H */
