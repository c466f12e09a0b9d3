/* SPDX-License-Identifier: BSD-3-Clause
 * ARP for an endpoint (RFC 826, Ethernet + IPv4 only), so ethereal-node can
 * sit on any L2 segment next to kernel hosts (e.g. Linux Soft-RoCE):
 * it answers requests for its own address and resolves its peers' MACs.
 *
 * This is control path: the node calls it for frames the RoCE receive path
 * did not take (EtherType 0x0806), never per data packet.  Everything
 * works on plain byte buffers so it is testable without DPDK; the caller
 * moves the frames in and out of mbufs.
 *
 * What goes out is rate-limited by one token bucket (replies and requests
 * together), so a flood of requests cannot make us flood the segment.
 * Static entries (--peer-mac) win over anything learned and never age.
 * The frames themselves are wire/et_arp_frame's, which the switch's
 * gateway answer uses too.
 */
#ifndef ET_ARP_H
#define ET_ARP_H

#include <stdbool.h>

#include <stddef.h>
#include <stdint.h>

#include "base/et_counters.h"
#include "base/et_token_bucket.h"
#include "wire/et_arp_frame.h"  /* ET_ARP_FRAME_LEN */

#define ET_ARP_CACHE 16

#define ET_ARP_COUNTERS(X, A) \
	X(rx_request, INFO, "requests for our address") \
	X(rx_reply, INFO, "replies addressed to us") \
	X(rx_other, INFO, "valid ARP not for us (ignored)") \
	X(rx_bad, INFO, "truncated, not Ethernet/IPv4, bad opcode") \
	X(tx_reply, INFO, "replies sent") \
	X(tx_request, INFO, "requests sent") \
	X(tx_rate_limited, INFO, "a reply or request the bucket refused") \
	X(learned, INFO, "cache entries added or changed") \
	X(cache_full, INFO, "a new entry evicted the oldest learned one") \
	X(static_conflict, INFO, "the wire said otherwise about a static entry")

struct et_arp_stats {
	ET_ARP_COUNTERS(ET_CTR_FIELD, ET_CTR_ARRAY_FIELD)
};
extern const struct et_ctr_table et_arp_ctrs;

struct et_arp_entry {
	uint32_t ip;          /* host order; 0: free slot */
	uint8_t mac[6];
	bool is_static;
	uint64_t at;          /* when learned (for eviction) */
};

struct et_arp {
	uint8_t mac[6];
	uint32_t ip;          /* host order */
	struct et_arp_entry cache[ET_ARP_CACHE];
	struct et_token_bucket tx;  /* what we send, replies and requests */
	struct et_arp_stats st;
};

/* refill: ticks per token (e.g. hz / 100 for 100 frames/s); burst >= 1. */
void et_arp_init(struct et_arp *a, const uint8_t mac[6], uint32_t ip,
		 uint64_t refill, uint32_t burst);

/* A static entry (the --peer-mac override); -1 if the cache is full of
 * static entries or ip is 0. */
int et_arp_set_static(struct et_arp *a, uint32_t ip, const uint8_t mac[6]);

/* The MAC for ip, or NULL when not known. */
const uint8_t *et_arp_lookup(const struct et_arp *a, uint32_t ip);

/* An Ethernet frame of EtherType 0x0806 (the caller checked the type).
 * Learns the sender when the frame is for us (or the sender is already
 * cached); when a reply is due and the bucket allows, writes it to out
 * (cap >= ET_ARP_FRAME_LEN) and returns its length; 0 when nothing is to
 * be sent; -1 for a bad frame (counted). */
int et_arp_input(struct et_arp *a, const uint8_t *frame, size_t len,
		 uint64_t now, uint8_t *out, size_t cap);

/* A broadcast request for ip into out; its length, or 0 when the bucket
 * refused (counted) or cap is too small. */
int et_arp_request(struct et_arp *a, uint32_t ip, uint64_t now,
		   uint8_t *out, size_t cap);

#endif /* ET_ARP_H */
