/* SPDX-License-Identifier: BSD-3-Clause
 * ARP for an endpoint: see et_arp.h. */
#include "host/et_arp.h"

#include <errno.h>
#include <string.h>

ET_CTR_DEFINE(et_arp_ctrs, struct et_arp_stats, ET_ARP_COUNTERS);

void
et_arp_init(struct et_arp *a, const uint8_t mac[6], uint32_t ip, uint64_t refill,
	    uint32_t burst)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->mac, mac, 6);
	a->ip = ip;
	et_token_bucket_init(&a->tx, refill, burst);
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
	if (et_token_bucket_take(&a->tx, now))
		return true;
	a->st.tx_rate_limited++;
	return false;
}

int
et_arp_input(struct et_arp *a, const uint8_t *frame, size_t len, uint64_t now,
	     uint8_t *out, size_t cap)
{
	struct et_arp_msg m;
	bool for_us;

	if (et_arp_parse(frame, len, &m)) {
		a->st.rx_bad++;
		return -EBADMSG;
	}
	for_us = m.tpa == a->ip && a->ip != 0;
	learn(a, m.spa, m.sha, for_us, now);
	if (!for_us) {
		a->st.rx_other++;
		return 0;
	}
	if (m.op == ET_ARP_OP_REPLY) {
		a->st.rx_reply++;
		return 0;
	}
	a->st.rx_request++;
	if (cap < ET_ARP_FRAME_LEN || !take_token(a, now))
		return 0;
	et_arp_build_reply(out, cap, &m, a->mac, a->ip);
	a->st.tx_reply++;
	return ET_ARP_FRAME_LEN;
}

int
et_arp_request(struct et_arp *a, uint32_t ip, uint64_t now, uint8_t *out, size_t cap)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct et_arp_msg m = {.op = ET_ARP_OP_REQUEST, .spa = a->ip, .tpa = ip};

	if (cap < ET_ARP_FRAME_LEN || !take_token(a, now))
		return 0;
	memcpy(m.sha, a->mac, 6);
	et_arp_build(out, cap, bcast, a->mac, &m);
	a->st.tx_request++;
	return ET_ARP_FRAME_LEN;
}
