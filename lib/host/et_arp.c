/* SPDX-License-Identifier: BSD-3-Clause
 * ARP for an endpoint: see et_arp.h. */
#include "host/et_arp.h"

#include <errno.h>
#include <string.h>

#include "base/et_bytes.h"

ET_CTR_DEFINE(et_arp_ctrs, struct et_arp_stats, ET_ARP_COUNTERS);

#define ARP_HTYPE_ETHER 1
#define ARP_PTYPE_IPV4 0x0800
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2
#define ETH_HDR 14
#define ARP_BODY 28

void
et_arp_init(struct et_arp *a, const uint8_t mac[6], uint32_t ip, uint64_t refill,
	    uint32_t burst)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->mac, mac, 6);
	a->ip = ip;
	a->refill = refill ? refill : 1;
	a->burst = burst ? burst : 1;
	a->tokens = a->burst;
}

static struct et_arp_entry *
find(struct et_arp *a, uint32_t ip)
{
	for (unsigned i = 0; i < ET_ARP_CACHE; i++)
		if (a->cache[i].ip == ip && ip != 0)
			return &a->cache[i];
	return NULL;
}

const uint8_t *
et_arp_lookup(const struct et_arp *a, uint32_t ip)
{
	const struct et_arp_entry *e = find((struct et_arp *)a, ip);

	return e ? e->mac : NULL;
}

/* A slot for a new entry: a free one, else the oldest learned one (static
 * entries are never evicted); NULL if every slot is static. */
static struct et_arp_entry *
slot(struct et_arp *a)
{
	struct et_arp_entry *old = NULL;

	for (unsigned i = 0; i < ET_ARP_CACHE; i++) {
		struct et_arp_entry *e = &a->cache[i];

		if (e->ip == 0)
			return e;
		if (!e->is_static && (!old || e->at < old->at))
			old = e;
	}
	if (old)
		a->st.cache_full++;
	return old;
}

int
et_arp_set_static(struct et_arp *a, uint32_t ip, const uint8_t mac[6])
{
	struct et_arp_entry *e;

	if (ip == 0)
		return -EINVAL;
	e = find(a, ip);
	if (!e)
		e = slot(a);
	if (!e)
		return -ENOSPC;
	e->ip = ip;
	memcpy(e->mac, mac, 6);
	e->is_static = true;
	e->at = 0;
	return 0;
}

/* RFC 826's merge: update the sender if known; add it when the frame was
 * for us.  A static entry is never changed by the wire. */
static void
learn(struct et_arp *a, uint32_t ip, const uint8_t *mac, bool for_us, uint64_t now)
{
	struct et_arp_entry *e;

	if (ip == 0 || ip == a->ip || (mac[0] & 1))
		return;  /* probes, our own address, multicast senders: not learnable */
	e = find(a, ip);
	if (e && e->is_static) {
		if (memcmp(e->mac, mac, 6) != 0)
			a->st.static_conflict++;
		return;
	}
	if (!e) {
		if (!for_us)
			return;
		e = slot(a);
		if (!e)
			return;
		e->ip = ip;
		e->is_static = false;
	} else if (memcmp(e->mac, mac, 6) == 0) {
		e->at = now;
		return;
	}
	memcpy(e->mac, mac, 6);
	e->at = now;
	a->st.learned++;
}

static bool
take_token(struct et_arp *a, uint64_t now)
{
	if (now > a->last_refill) {
		uint64_t add = (now - a->last_refill) / a->refill;

		if (add) {
			a->tokens = add >= a->burst || a->tokens + add > a->burst
				? a->burst : a->tokens + (uint32_t)add;
			a->last_refill += add * a->refill;
		}
	}
	if (a->tokens == 0) {
		a->st.tx_rate_limited++;
		return false;
	}
	a->tokens--;
	return true;
}

static int
build(const struct et_arp *a, uint16_t op, const uint8_t *eth_dst, const uint8_t *tha,
      uint32_t tpa, uint8_t *out, size_t cap)
{
	uint8_t *p = out + ETH_HDR;

	if (cap < ET_ARP_FRAME_LEN)
		return 0;
	memset(out, 0, ET_ARP_FRAME_LEN);
	memcpy(out, eth_dst, 6);
	memcpy(out + 6, a->mac, 6);
	et_store16(out + 12, 0x0806);
	et_store16(p, ARP_HTYPE_ETHER);
	et_store16(p + 2, ARP_PTYPE_IPV4);
	p[4] = 6;
	p[5] = 4;
	et_store16(p + 6, op);
	memcpy(p + 8, a->mac, 6);
	et_store32(p + 14, a->ip);
	memcpy(p + 18, tha, 6);
	et_store32(p + 24, tpa);
	return ET_ARP_FRAME_LEN;
}

int
et_arp_input(struct et_arp *a, const uint8_t *frame, size_t len, uint64_t now,
	     uint8_t *out, size_t cap)
{
	const uint8_t *p = frame + ETH_HDR;
	uint16_t op;
	uint32_t spa, tpa;
	const uint8_t *sha;
	bool for_us;

	if (len < ETH_HDR + ARP_BODY || et_load16(frame + 12) != 0x0806 ||
	    et_load16(p) != ARP_HTYPE_ETHER || et_load16(p + 2) != ARP_PTYPE_IPV4 ||
	    p[4] != 6 || p[5] != 4) {
		a->st.rx_bad++;
		return -EBADMSG;
	}
	op = et_load16(p + 6);
	if (op != ARP_OP_REQUEST && op != ARP_OP_REPLY) {
		a->st.rx_bad++;
		return -EBADMSG;
	}
	sha = p + 8;
	spa = et_load32(p + 14);
	tpa = et_load32(p + 24);
	for_us = tpa == a->ip && a->ip != 0;
	learn(a, spa, sha, for_us, now);
	if (!for_us) {
		a->st.rx_other++;
		return 0;
	}
	if (op == ARP_OP_REPLY) {
		a->st.rx_reply++;
		return 0;
	}
	a->st.rx_request++;
	if (cap < ET_ARP_FRAME_LEN || !take_token(a, now))
		return 0;
	build(a, ARP_OP_REPLY, sha, sha, spa, out, cap);
	a->st.tx_reply++;
	return ET_ARP_FRAME_LEN;
}

int
et_arp_request(struct et_arp *a, uint32_t ip, uint64_t now, uint8_t *out, size_t cap)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t zero[6];

	if (cap < ET_ARP_FRAME_LEN || !take_token(a, now))
		return 0;
	build(a, ARP_OP_REQUEST, bcast, zero, ip, out, cap);
	a->st.tx_request++;
	return ET_ARP_FRAME_LEN;
}
